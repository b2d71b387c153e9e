import pytest
import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.dialects.spark import Spark
from sqlglot.errors import ErrorLevel, ParseError
from sqlglot.tokens import TokenType

from sql_ext.syntax.dialect import Call, NamedArg, PaimonSpark, TypedLiteral

DIALECT = PaimonSpark()


def parse(sql: str) -> exp.Expr:
    trees = DIALECT.parse(sql, error_level=ErrorLevel.RAISE)
    assert len(trees) == 1
    return trees[0]


def test_dialect_is_a_named_spark_subclass() -> None:
    assert issubclass(PaimonSpark, Spark)
    assert PaimonSpark.__name__ != "Spark"
    assert isinstance(Dialect.get_or_raise("paimonspark"), PaimonSpark)


def test_plain_spark_dialect_is_left_untouched() -> None:
    assert isinstance(sqlglot.parse_one("CALL sys.x(a => 1)", read="spark"), exp.Command)
    tree = sqlglot.parse_one("SELECT * FROM t$snapshots", read="spark")
    assert tree.find(exp.Table).name == "t"


@pytest.mark.parametrize(
    ("sql", "names"),
    [
        ("t$snapshots", ["t$snapshots"]),
        ("db.t$branch_b1$files", ["db", ".", "t$branch_b1$files"]),
        ("`t$tags`", ["t$tags"]),
        ("t$", ["t$"]),
    ],
)
def test_dollar_stays_inside_names(sql: str, names: list[str]) -> None:
    assert [t.text for t in DIALECT.tokenize(sql)] == names


def test_lone_dollar_is_still_a_parameter() -> None:
    tokens = DIALECT.tokenize("SELECT ${x}")
    assert [t.token_type for t in tokens[1:3]] == [TokenType.PARAMETER, TokenType.L_BRACE]


def test_call_with_named_arguments() -> None:
    tree = parse("CALL paimon.sys.create_tag(`table` => 'db.t', tag => 'x')")
    assert isinstance(tree, Call)
    assert tree.parts == ["paimon", "sys", "create_tag"]
    names = [(a.this.name, a.this.quoted) for a in tree.expressions]
    assert names == [("table", True), ("tag", False)]
    assert all(isinstance(a, NamedArg) for a in tree.expressions)
    assert tree.expressions[0].expression == exp.Literal.string("db.t")


def test_call_keyword_is_case_insensitive_and_positional_args_are_plain_nodes() -> None:
    tree = parse("call Sys.Rollback('db.t', 3)")
    assert isinstance(tree, Call)
    assert tree.parts == ["Sys", "Rollback"]
    assert tree.expressions == [exp.Literal.string("db.t"), exp.Literal.number(3)]


def test_call_constants_keep_their_spelling() -> None:
    tree = parse(
        "CALL sys.x(10l, -1.5BD, .5, 'a' \"b\", TIMESTAMP '2024-01-01', MAP('k', 1), X'0A')"
    )
    number, negative, fraction, text, typed, mapping, binary = tree.expressions
    assert number == exp.Literal.number("10L")
    assert negative == exp.Neg(this=exp.Literal.number("1.5BD"))
    assert fraction == exp.Literal.number(".5")
    assert text == exp.Literal.string("ab")
    assert isinstance(typed, TypedLiteral)
    assert (typed.name, typed.expression.this) == ("TIMESTAMP", "2024-01-01")
    assert isinstance(mapping, exp.VarMap)
    assert binary == exp.HexString(this="0A")


def test_non_constant_arguments_are_kept_for_the_caller_to_reject() -> None:
    tree = parse("CALL sys.x(a => col, b => now(), c => 1 + 2, d => MAP('k', v))")
    values = [a.expression for a in tree.expressions]
    assert isinstance(values[0], exp.Column)
    assert isinstance(values[1], exp.Func)
    assert isinstance(values[2], exp.Add)
    assert isinstance(values[3].args["values"].expressions[0], exp.Column)


@pytest.mark.parametrize(
    "sql",
    [
        "CALL sys.create_tag(table => 'db.t', tag => 'x', snapshot => 3)",
        "CALL paimon.sys.rollback('db.t', 10L, -1.5BD, TRUE, NULL, DATE '2024-01-02')",
        "CALL sys.x(`table` => 'a\\'b', options => MAP('k', 'v'), bin => X'0A')",
        "CALL sys.repair()",
    ],
)
def test_call_sql_round_trips(sql: str) -> None:
    generated = parse(sql).sql(dialect=DIALECT)
    assert generated == sql
    assert parse(generated) == parse(sql)


@pytest.mark.parametrize(
    ("clause", "kind"),
    [
        ("VERSION AS OF 3", "VERSION"),
        ("FOR VERSION AS OF 3", "VERSION"),
        ("SYSTEM_VERSION AS OF 3", "VERSION"),
        ("FOR SYSTEM_VERSION AS OF 3", "VERSION"),
        ("TIMESTAMP AS OF '2024-01-01'", "TIMESTAMP"),
        ("FOR TIMESTAMP AS OF '2024-01-01'", "TIMESTAMP"),
        ("SYSTEM_TIME AS OF '2024-01-01'", "TIMESTAMP"),
        ("FOR SYSTEM_TIME AS OF '2024-01-01'", "TIMESTAMP"),
    ],
)
def test_time_travel_spellings(clause: str, kind: str) -> None:
    table = parse(f"SELECT * FROM db.t {clause} AS x").find(exp.Table)
    version = table.args["version"]
    assert (version.name, version.text("kind")) == (kind, "AS OF")
    assert table.alias == "x"
    expected = f"{kind} AS OF {'3' if kind == 'VERSION' else repr('2024-01-01')}"
    assert table.sql(dialect="spark") == f"db.t {expected} AS x"


def test_time_travel_takes_an_expression() -> None:
    table = parse("SELECT * FROM t TIMESTAMP AS OF current_timestamp() - INTERVAL 1 DAY").find(
        exp.Table
    )
    assert isinstance(table.args["version"].expression, exp.Sub)


@pytest.mark.parametrize(
    "sql",
    [
        "CALL sys.x('a'",
        "CALL sys.x(a => )",
        "CALL sys.x",
        "CALL (1)",
        "CALL sys.x(MAP('k'))",
        "CALL sys.x() trailing",
        "SELECT * FROM t FOR SYSTEM_TIME '2024-01-01'",
        "SELECT * FROM t VERSION AS OF",
    ],
)
def test_syntax_errors_raise(sql: str) -> None:
    with pytest.raises(ParseError):
        parse(sql)


def test_execute_immediate_and_call_as_a_name_still_work() -> None:
    assert isinstance(parse("EXECUTE IMMEDIATE 'SELECT 1'"), exp.Command)
    assert parse("SELECT call FROM t").expressions[0] == exp.column("call")

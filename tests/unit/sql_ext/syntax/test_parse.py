import datetime as dt
import doctest
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlglot import exp

import sql_ext.syntax.parse as parse_module
from procedures.base import TypedValue
from sql_ext.insert import insert_spec
from sql_ext.syntax.parse import (
    CallStatement,
    QueryStatement,
    SqlParseError,
    TableRef,
    paimon_table_refs,
    parse_script,
    parse_sql,
    parse_statement,
    query_fragment,
    replace_tables,
    split_statements,
)
from sql_ext.syntax.statements import (
    AlterHead,
    CreateStatement,
    DatabaseStatement,
    DescribeStatement,
    ExplainStatement,
    InsertStatement,
    PassthroughStatement,
    ReadStatement,
    RowLevelStatement,
    ShowStatement,
    TagStatement,
    UseStatement,
)
from tests.unit.sql_ext.helpers import assert_call, assert_rewrite, load_pairs, render, view_for

PAIRS = load_pairs()


def test_golden_file_has_enough_pairs() -> None:
    assert len(PAIRS) >= 40
    assert len({title for title, _, _ in PAIRS}) == len(PAIRS)


@pytest.mark.parametrize(("title", "inputs", "expected"), PAIRS, ids=[p[0] for p in PAIRS])
def test_golden_rewrites(title: str, inputs: list[str], expected: list[str]) -> None:
    assert [render(s) for s in parse_script(";\n".join(inputs))] == expected


@pytest.mark.parametrize(
    ("script", "statements"),
    [
        ("SELECT 1; SELECT 2;", ["SELECT 1", "SELECT 2"]),
        ("  ;;\n ; SELECT 1 ;; ", ["SELECT 1"]),
        ("-- only a comment\n; /* and; another */ ;", []),
        ("SELECT ';' AS a, \";\" AS b, `c;d`", ["SELECT ';' AS a, \";\" AS b, `c;d`"]),
        ("SELECT 'it''s; ok'; SELECT 2", ["SELECT 'it''s; ok'", "SELECT 2"]),
        ("SELECT 'a\\'; b'; SELECT 2", ["SELECT 'a\\'; b'", "SELECT 2"]),
        ('SELECT "a\\"; b"; SELECT 2', ['SELECT "a\\"; b"', "SELECT 2"]),
        ("SELECT `a``;b`; SELECT 2", ["SELECT `a``;b`", "SELECT 2"]),
        ("SELECT r'C:\\'; SELECT 2", ["SELECT r'C:\\'", "SELECT 2"]),
        ("SELECT 1 -- no; split\n; SELECT 2", ["SELECT 1 -- no; split", "SELECT 2"]),
        (
            "/* a /* nested; */ b; */ SELECT 1; SELECT 2",
            ["/* a /* nested; */ b; */ SELECT 1", "SELECT 2"],
        ),
        ("SELECT '--;' -- x\n, '/*;'; SELECT 2", ["SELECT '--;' -- x\n, '/*;'", "SELECT 2"]),
        ("SELECT 1; SELECT 'open; x", ["SELECT 1", "SELECT 'open; x"]),
        ("SELECT 1; /* open; x", ["SELECT 1", "/* open; x"]),
    ],
)
def test_split_statements(script: str, statements: list[str]) -> None:
    assert split_statements(script) == statements


_CHARS = st.sampled_from(list("ab ;'\"`\\-/*\n$"))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(_CHARS, max_size=12), min_size=1, max_size=5))
def test_split_keeps_semicolons_inside_string_literals(values: list[str]) -> None:
    literals = ["'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'" for v in values]
    statements = [f"SELECT {literal}" for literal in literals]
    assert split_statements(" ;\n".join(statements) + ";") == statements
    parsed = [parse_statement(s).tree.expressions[0].this for s in statements]
    assert parsed == values


def test_call_values_are_python_values() -> None:
    statement = parse_statement(
        "CALL paimon.sys.x(a => 7, b => -3L, c => 1.25, d => 2.5E1, e => 1.5BD, f => 2F, "
        "g => TRUE, h => NULL, i => TIMESTAMP '2024-01-01 12:30:00.123456', "
        "j => TIMESTAMP '2024-01-01 12:00:00+02:00', k => DATE '2024-02-29', "
        "l => MAP('x', 1, 'y', FALSE), m => X'0aff', n => 'a' 'b')"
    )
    assert isinstance(statement, CallStatement)
    assert statement.catalog == "paimon"
    assert statement.is_named
    assert statement.args == {
        "a": 7,
        "b": TypedValue(-3, "BIGINT"),
        "c": Decimal("1.25"),
        "d": 25.0,
        "e": Decimal("1.5"),
        "f": TypedValue(2.0, "FLOAT"),
        "g": True,
        "h": None,
        "i": dt.datetime(2024, 1, 1, 12, 30, 0, 123456),
        "j": dt.datetime(2024, 1, 1, 10, 0),
        "k": dt.date(2024, 2, 29),
        "l": {"x": 1, "y": False},
        "m": b"\n\xff",
        "n": "ab",
    }
    types = [type(v) for v in statement.args.values()]
    assert types[:6] == [int, TypedValue, Decimal, float, Decimal, TypedValue]
    assert statement.positional == ()


def test_call_keeps_original_text_and_ignores_comments() -> None:
    text = "/* tag it */ CALL sys.create_tag( -- which table\n 'db.t', 'x');"
    statement = parse_statement(text)
    assert isinstance(statement, CallStatement)
    assert statement.text == text
    assert (statement.procedure, statement.positional, statement.args) == (
        "create_tag",
        ("db.t", "x"),
        {},
    )


def test_assertion_helpers() -> None:
    assert_call("CALL sys.Create_Tag(TABLE => 'db.t')", "create_tag", {"table": "db.t"})
    assert_call("CALL sys.rollback('db.t', 2)", "rollback", ("db.t", 2))
    assert_rewrite("SELECT * FROM `t$files` f", "SELECT * FROM __paimon_t_files f")


BAD = [
    ("SELECT * FROM t$snapshots WHERE", "Syntax error at or near end of input (line 1, col 32)"),
    ("SELECT * FROM t$snapshots\nWHERE k = ", "near end of input (line 2, col 10)"),
    ("SELECT * FROM t$snapshots x y", "Syntax error at or near 'y' (line 1, col 29)"),
    ("SELECT (1 FROM t$files", "Syntax error at or near 'FROM': expected ) (line 1, col 11)"),
    ("CALL sys.create_tag(table => 'db.t'", "Syntax error at or near end of input: expected )"),
    ("CALL sys.create_tag(table => 'db.t'))", "Syntax error at or near ')' (line 1, col 37)"),
    ("CALL sys.create_tag((table => 'db.t')", "near '=>': expected )"),
    ("CALL sys.create_tag(table => ('db.t'))", "got an expression: ('db.t')"),
    ("CALL sys.create_tag(table => )", "Expected a value for argument 'table'"),
    ("CALL sys.create_tag(table => 'db.t', 'x')", "Cannot mix named and positional arguments"),
    ("CALL sys.create_tag('db.t', tag => 'x')", "Cannot mix named and positional arguments"),
    ("CALL sys.create_tag(table => 'a', TABLE => 'b')", "Duplicate argument 'table'"),
    (
        "CALL sys.create_tag(table => db.t)",
        "Argument 'table' of CALL sys.create_tag must be a constant",
    ),
    ("CALL sys.x(snapshot => current_snapshot())", "got a function call: CURRENT_SNAPSHOT()"),
    ("CALL sys.x(snapshot => 1 + 1)", "got an expression: 1 + 1"),
    ("CALL sys.x(-'a')", "Argument #1"),
    ("CALL sys.x(MAP('k', v))", "got a column reference: v"),
    ("CALL sys.x(MAP('k'))", "even number"),
    ("CALL sys.x(MAP('k', 1, 'k', 2))", "duplicate keys"),
    ("CALL sys.x(MAP(MAP('a', 1), 1))", "must be a constant"),
    ("CALL sys.x(INTERVAL '1 day')", "unsupported typed literal INTERVAL"),
    ("CALL sys.x(TIMESTAMP '2024-13-01')", "invalid TIMESTAMP literal"),
    ("CALL sys.x(X'0')", "invalid binary literal"),
    ("CALL sys.x(128Y)", "out-of-range TINYINT number 128Y"),
    ("CALL sys.x(-129Y)", "out-of-range TINYINT number -129Y"),
    ("CALL sys.x(32768S)", "out-of-range SMALLINT number 32768S"),
    ("CALL sys.x(40000S)", "out-of-range"),
    ("CALL create_tag('db.t', 'x')", "Procedure create_tag is not found"),
    ("CALL system.create_tag('db.t', 'x')", "Procedure system.create_tag is not found"),
    ("CALL a.b.sys.create_tag('db.t')", "is not found"),
    ("CALL sys.create_tag", "near end of input: expected ("),
    ("CALL", "procedure name"),
    ("CALL sys.create_tag('db.t', 'x", "Unterminated string literal"),
    ("SELECT * FROM `t$tags", "Unterminated back-quoted identifier"),
    ("SELECT 1 /* open", "Unterminated /* comment"),
    ("SELECT * FROM t$", "Invalid object name 't$'"),
    ("SELECT * FROM `$snapshots`", "empty name"),
    ("SELECT * FROM t$branch_", "empty branch name"),
    ("SELECT * FROM t$a$b", "System table can only contain one '$' separator"),
    ("SELECT * FROM t$branch_b$files$x", "at most two '$'"),
    ("SELECT * FROM db$x.t", "only allowed in the table part"),
    ("SELECT * FROM `t`$snapshots", "Unexpected '$' right after 't'"),
    ("SELECT * FROM t VERSION AS OF 1 + 1", "integer or a string literal"),
    ("SELECT * FROM t VERSION AS OF -1", "integer or a string literal"),
    ("SELECT * FROM t VERSION AS OF", "Expected a value after VERSION AS OF"),
    ("SELECT * FROM t$snapshots WHERE (", "(line 1"),
    ("ADD JAR /tmp/x$y.jar", "cannot be parsed"),
    ("SELECT 1; SELECT 2", "use parse_script()"),
    ("  -- nothing\n", "Empty statement"),
]


@pytest.mark.parametrize(("sql", "message"), BAD, ids=[b[0] for b in BAD])
def test_bad_input_raises_one_line_error(sql: str, message: str) -> None:
    with pytest.raises(SqlParseError) as info:
        parse_statement(sql)
    text = str(info.value)
    assert message in text
    assert "\n" not in text
    assert "\x1b" not in text


def test_error_positions_are_relative_to_the_script() -> None:
    with pytest.raises(SqlParseError) as info:
        parse_script("SELECT 1;\n  CALL sys.x('a'\n  , b => 1);")
    assert (info.value.line, info.value.col) == (3, 5)
    assert info.value.description == "Cannot mix named and positional arguments in CALL sys.x"

    with pytest.raises(SqlParseError) as info:
        parse_script("SELECT 1;\n\n  SELECT * FROM `t`$files")
    assert (info.value.line, info.value.col) == (3, 20)
    assert str(info.value).endswith("(line 3, col 20)")


def test_table_refs() -> None:
    statement = parse_statement(
        "SELECT * FROM paimon.db.`T$Branch_Dev$Snapshots` a "
        "JOIN db.t VERSION AS OF 'tag1' b ON a.x = b.x "
        "JOIN t FOR SYSTEM_TIME AS OF '2024-01-01' c ON c.x = a.x "
        "JOIN db.plain d ON d.x = a.x"
    )
    assert isinstance(statement, QueryStatement)
    refs = statement.paimon_tables
    assert [
        (r.catalog, r.database, r.table, r.branch, r.system_table, r.version) for r in refs
    ] == [
        ("paimon", "db", "T", "Dev", "snapshots", None),
        (None, "db", "t", None, None, "tag1"),
        (None, None, "t", None, None, None),
    ]
    assert refs[2].timestamp == exp.Literal.string("2024-01-01")
    assert all(r.node.parent_select is statement.tree for r in refs)
    assert parse_statement("SELECT * FROM t VERSION AS OF 12").paimon_tables[0].version == 12


def test_plain_statements_pass_through_verbatim() -> None:
    for text in [
        "SHOW TBLPROPERTIES db.t",
        "ADD JAR /tmp/x.jar",
        "MSCK REPAIR TABLE db.t",
        "SELECT * FROM db_${env}.t",
        "CREATE TABLE t (k INT) USING paimon TBLPROPERTIES ('primary-key' = 'k')",
        "REFRESH TABLE db.t",
        "CACHE TABLE c AS SELECT * FROM db.t",
    ]:
        statement = parse_statement(text)
        assert isinstance(statement, QueryStatement)
        assert statement.text == text
        assert statement.paimon_tables == []
    assert isinstance(parse_statement("SHOW TBLPROPERTIES db.t").tree, exp.Command)
    assert isinstance(parse_statement("SELECT * FROM db_${env}.t").tree, exp.Command)
    assert isinstance(parse_statement("INSERT INTO db.t VALUES (1)").tree, exp.Insert)


def test_table_and_identifier_clauses_are_read_as_names() -> None:
    statement = parse_statement("TABLE db.t")
    assert isinstance(statement, QueryStatement)
    assert (statement.text, statement.parsed) == ("TABLE db.t", "SELECT * FROM db.t")
    assert isinstance(statement.tree, exp.Select)
    assert statement.tree.find(exp.Table).sql() == "db.t"
    statement = parse_statement("SELECT * FROM (TABLE a) UNION ALL TABLE b")
    assert sorted(t.name for t in statement.tree.find_all(exp.Table)) == ["a", "b"]
    statement = parse_statement("SELECT IDENTIFIER('c') FROM IDENTIFIER('db.`t x$files`')")
    assert statement.parsed == "SELECT `c` FROM `db`.`t x$files`"
    assert [r.system_table for r in statement.paimon_tables] == ["files"]
    # Not names: left alone (Spark reports them).
    for text in ("SELECT IDENTIFIER('a b') FROM t", "SELECT * FROM IDENTIFIER(x)"):
        assert parse_statement(text).parsed == text
    for text in ("CREATE TABLE x (k INT)", "CACHE TABLE c", "SELECT `TABLE` FROM t"):
        assert parse_statement(text).parsed == text


def test_replace_tables_keeps_the_input_tree() -> None:
    statement = parse_statement("SELECT * FROM db.t$files f JOIN db.t$tags ON f.a = 1")
    before = statement.tree.sql(dialect="spark")
    seen: list[TableRef] = []

    def mapping(ref: TableRef) -> exp.Expr:
        seen.append(ref)
        return exp.to_table("v")

    out = replace_tables(statement.parsed, statement.tree, mapping).text
    assert out == "SELECT * FROM v f JOIN v AS `t$tags` ON f.a = 1"
    assert statement.tree.sql(dialect="spark") == before
    assert [r.system_table for r in seen] == ["files", "tags"]
    assert seen == statement.paimon_tables


def test_replace_tables_with_a_subquery_and_quoted_dollar_names() -> None:
    statement = parse_statement("SELECT t$snapshots.a FROM t$snapshots")
    subquery = exp.select("*").from_("v").subquery()
    out = replace_tables(statement.parsed, statement.tree, lambda ref: subquery).text
    assert out == "SELECT `t$snapshots`.a FROM (SELECT * FROM v) AS `t$snapshots`"


def test_replace_tables_leaves_targets_unaliased() -> None:
    statement = parse_statement("INSERT INTO t$branch_b PARTITION (dt = 'x') SELECT 1")
    assert replace_tables(statement.parsed, statement.tree, view_for).text == (
        "INSERT INTO __paimon_t_branch_b PARTITION (dt = 'x') SELECT 1"
    )
    statement = parse_statement("DESCRIBE db.t$snapshots")
    assert replace_tables(statement.parsed, statement.tree, view_for).text == (
        "DESCRIBE __paimon_db_t_snapshots"
    )


def test_query_fragment_of_insert_and_ctas() -> None:
    sql = "WITH a AS (SELECT 1 AS k)\nINSERT INTO x\nWITH b AS (SELECT * FROM t$files) SELECT * FROM a, b"
    statement = parse_statement(sql)
    fragment = query_fragment(statement.tree)
    source = insert_spec(statement.tree).source
    spliced = replace_tables(statement.parsed, source, view_for, fragment=fragment)
    assert spliced.text == (
        "WITH a AS (SELECT 1 AS k) , b AS (SELECT * FROM __paimon_t_files AS `t$files`) "
        "SELECT * FROM a, b"
    )
    assert spliced.source_offset(spliced.text.index("SELECT * FROM a")) == sql.index(
        "SELECT * FROM a"
    )
    statement = parse_statement("CREATE TABLE c AS (SELECT /* x */ k FROM t VERSION AS OF 2)")
    fragment = query_fragment(statement.tree)
    tree = statement.tree.expression
    spliced = replace_tables(statement.parsed, tree, view_for, fragment=fragment)
    assert spliced.text == "(SELECT /* x */ k FROM __paimon_t_v2 AS t)"


def test_paimon_table_refs_of_plain_tree_is_empty() -> None:
    tree = parse_statement("SELECT * FROM a JOIN b.c ON 1 = 1").tree
    assert paimon_table_refs(tree) == []
    text = "SELECT * FROM a JOIN b.c ON 1 = 1"
    assert replace_tables(text, tree, view_for).text == text


def test_docstring_examples() -> None:
    result = doctest.testmod(parse_module)
    assert result.attempted >= 3
    assert result.failed == 0


def test_explain_is_its_own_statement_sqlglot_alone_cannot_read_it() -> None:
    explain = parse_statement("EXPLAIN EXTENDED SELECT * FROM t$snapshots")
    assert isinstance(explain, ExplainStatement)
    assert explain.mode == "EXTENDED "
    assert explain.statement.paimon_tables[0].system_table == "snapshots"
    with pytest.raises(SqlParseError, match="its EXPLAIN part cannot be parsed"):
        parse_sql("EXPLAIN SELECT * FROM t$snapshots")


@pytest.mark.parametrize(
    ("sql", "family"),
    [
        ("CALL sys.expire_snapshots(table => 't')", CallStatement),
        ("SHOW TAGS t", TagStatement),
        ("ALTER TABLE t CREATE TAG x", TagStatement),
        ("ALTER TABLE t ADD COLUMN c INT", AlterHead),
        ("DROP DATABASE d CASCADE", DatabaseStatement),
        ("SHOW TABLES", ShowStatement),
        ("USE d", UseStatement),
        ("DESCRIBE t", DescribeStatement),
        ("CREATE TABLE t (a INT)", CreateStatement),
        ("INSERT INTO t VALUES (1)", InsertStatement),
        ("MERGE INTO t USING s ON t.a = s.a WHEN MATCHED THEN DELETE", RowLevelStatement),
        ("SELECT * FROM t$snapshots", ReadStatement),
        ("SET a = b", PassthroughStatement),
    ],
)
def test_one_typed_statement_per_family(sql: str, family: type) -> None:
    assert type(parse_statement(sql)) is family

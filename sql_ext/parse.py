"""Statement splitting and the typed parse result of Paimon's Spark SQL extensions.

A script is split on `;` outside quotes and comments (`split_statements`), and each statement is
classified by `parse_statement`:

* `CALL [catalog.]sys.<name>(...)` becomes a `CallStatement` with Python argument values.
* Anything else becomes a `QueryStatement`; `paimon_tables` lists its table references that
  need Paimon (a `$` system table or branch suffix, or a time travel clause), and
  `replace_tables` rewrites them into plain Spark SQL.

Strictness rule. The tokens of the statement (never a regex over its text) decide whether it
uses Paimon syntax: `CALL` as the first word, a name containing `$`, or a time travel clause
(`VERSION|TIMESTAMP|SYSTEM_VERSION|SYSTEM_TIME AS OF`, `SYSTEM_TIME`, `SYSTEM_VERSION`).

* A statement with Paimon syntax must parse completely with `PaimonSpark`: a sqlglot parse
  error, or an opaque `exp.Command` anywhere in its tree, raises `SqlParseError`. So
  `EXPLAIN SELECT * FROM t$snapshots` or `ADD JAR /x$y.jar` (quote the path) are errors.
* A statement without Paimon syntax (`SET k=v`, `ADD JAR`, `SHOW ...`, `USE db`, ...) is
  handed to Spark verbatim: its `paimon_tables` is empty and its `tree` is sqlglot's tree, or
  an `exp.Command` when sqlglot cannot parse it. Spark's `${var}` substitution is left alone.

Errors are `SqlParseError` with a one-line message (plus line and column when known).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from sqlglot import exp
from sqlglot.errors import ErrorLevel, ParseError, TokenError
from sqlglot.tokens import Token, TokenType

from sql_ext.dialect import Call, NamedArg, PaimonSpark, TypedLiteral

SYSTEM_TABLE_SPLITTER = "$"
BRANCH_PREFIX = "branch_"
SYSTEM_NAMESPACE = "sys"

_DIALECT = PaimonSpark()
_TIME_TRAVEL_WORDS = frozenset({"VERSION", "TIMESTAMP", "SYSTEM_VERSION", "SYSTEM_TIME"})
_NAME_TOKENS = frozenset({TokenType.VAR, TokenType.IDENTIFIER})
_SPECIAL = re.compile(r"""['"`;]|--|/\*""")
_BLOCK_COMMENT = re.compile(r"/\*|\*/")
# Spark strings take backslash escapes except raw ones (r'...'); back-quotes escape by doubling,
# which scanning as two adjacent quoted parts handles.
_QUOTED = {q: re.compile(rf"{q}[^{q}\\]*(?:\\.[^{q}\\]*)*{q}", re.S) for q in "'\""}
_QUOTED["`"] = re.compile(r"`[^`]*`")
_RAW_QUOTED = {q: re.compile(rf"{q}[^{q}]*{q}") for q in "'\""}
_MAX_SNIPPET = 80


class SqlParseError(ParseError):
    """A statement that cannot be parsed; the message is always a single line."""

    def __init__(self, description: str, line: int | None = None, col: int | None = None):
        description = " ".join(description.split())
        where = f" (line {line}, col {col})" if line is not None and col is not None else ""
        super().__init__(
            description + where, errors=[{"description": description, "line": line, "col": col}]
        )
        self.description = description
        self.line = line
        self.col = col


@dataclass(frozen=True, slots=True, kw_only=True)
class CallStatement:
    """`CALL [catalog.]sys.<procedure>(...)` with constant arguments as Python values.

    Exactly one of `args` (named, names lower-cased) and `positional` is filled, or neither.
    """

    procedure: str
    text: str
    args: dict[str, Any] = field(default_factory=dict)
    positional: tuple[Any, ...] = ()
    catalog: str | None = None

    @property
    def is_named(self) -> bool:
        return bool(self.args)


@dataclass(frozen=True, slots=True)
class TableRef:
    """One Paimon-specific table reference of a query and the node it came from."""

    catalog: str | None
    database: str | None
    table: str
    branch: str | None
    system_table: str | None
    version: str | int | None
    timestamp: exp.Expr | None
    node: exp.Table


@dataclass(frozen=True, slots=True)
class QueryStatement:
    """Any statement but CALL; Spark runs `text` unchanged when `paimon_tables` is empty."""

    text: str
    tree: exp.Expr
    paimon_tables: list[TableRef]


Statement = CallStatement | QueryStatement


# --------------------------------------------------------------------------- splitting


def _skip_quoted(text: str, i: int, quote: str) -> int:
    """Index just past the quote opened at `i`, or -1 when it is never closed."""
    raw = quote != "`" and i > 0 and text[i - 1] in "rR" and (i < 2 or not _word_char(text[i - 2]))
    m = (_RAW_QUOTED if raw else _QUOTED)[quote].match(text, i)
    return m.end() if m else -1


def _word_char(c: str) -> bool:
    return c.isalnum() or c == "_"


def _skip_block_comment(text: str, i: int) -> int:
    """Index just past the (possibly nested, as in Spark) comment opened at `i`, or -1."""
    depth = 0
    for m in _BLOCK_COMMENT.finditer(text, i):
        depth += 1 if m.group() == "/*" else -1
        if depth == 0:
            return m.end()
    return -1


def _scan(text: str) -> tuple[list[tuple[int, int]], tuple[str, int] | None]:
    """Spans of the non-empty statements, and the quote or comment left open at the end.

    An open quote or comment runs to the end of the text, inside the last span.
    """
    spans: list[tuple[int, int]] = []
    start = 0
    has_code = False
    i = 0
    n = len(text)
    opened: tuple[str, int] | None = None
    while i < n:
        m = _SPECIAL.search(text, i)
        stop = m.start() if m else n
        has_code = has_code or (stop > i and not text[i:stop].isspace())
        if m is None:
            break
        token = m.group()
        if token == ";":
            if has_code:
                spans.append((start, stop))
            start, has_code, i = stop + 1, False, stop + 1
        elif token == "--":
            newline = text.find("\n", stop)
            i = n if newline < 0 else newline + 1
        elif token == "/*":
            i = _skip_block_comment(text, stop)
            if i < 0:
                opened = ("comment", stop)
                break
        else:
            has_code = True
            i = _skip_quoted(text, stop, token)
            if i < 0:
                opened = (token, stop)
                break
    if has_code or opened:
        spans.append((start, n))
    return spans, opened


def _stripped(text: str, span: tuple[int, int]) -> tuple[int, str]:
    start, end = span
    piece = text[start:end]
    return start + len(piece) - len(piece.lstrip()), piece.strip()


def split_statements(text: str) -> list[str]:
    """Split a script on `;` outside quotes and comments, dropping empty statements.

    Quotes are `'...'`, `"..."` (both with backslash escapes) and `` `...` ``; comments are
    `-- ...` and `/* ... */` (nested, as in Spark). Statements are stripped and keep their
    comments. An unterminated quote or comment runs to the end of the text, where
    `parse_statement` rejects it.

    >>> split_statements("SELECT ';'; -- done\\nCALL sys.x('a;b');;")
    ["SELECT ';'", "-- done\\nCALL sys.x('a;b')"]
    """
    return [_stripped(text, span)[1] for span in _scan(text)[0]]


# --------------------------------------------------------------------------- parsing


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - text.rfind("\n", 0, offset)


def _snippet(node: exp.Expr) -> str:
    sql = node.sql(dialect=_DIALECT)
    return sql if len(sql) <= _MAX_SNIPPET else sql[: _MAX_SNIPPET - 3] + "..."


class _ScanTokenizer(PaimonSpark.Tokenizer):
    # Commands (EXPLAIN, SHOW, ADD JAR, ...) are tokenized word by word so that Paimon syntax
    # inside them is seen too.
    COMMANDS: set[TokenType] = set()


def _tokens(text: str) -> list[Token]:
    try:
        return _ScanTokenizer(dialect=_DIALECT).tokenize(text)
    except TokenError as e:
        raise SqlParseError(f"Cannot tokenize the statement: {e.__cause__ or e}") from e


def _uses_paimon_syntax(text: str, tokens: list[Token]) -> bool:
    for i, token in enumerate(tokens):
        kind = token.token_type
        if kind == TokenType.STRING:
            continue
        if "$" in token.text and kind != TokenType.PARAMETER:
            following = tokens[i + 1] if i + 1 < len(tokens) else None
            substitution = (
                token.text.endswith("$")
                and following is not None
                and following.token_type == TokenType.L_BRACE
                and following.start == token.end + 1
            )
            if not substitution:
                return True
        if kind == TokenType.PARAMETER and i and tokens[i - 1].token_type in _NAME_TOKENS:
            previous = tokens[i - 1]
            if previous.end + 1 == token.start:
                raise SqlParseError(
                    f"Unexpected '$' right after {previous.text!r}: write the whole name in one "
                    f"pair of back-quotes, e.g. `{previous.text}$snapshots`",
                    *_position(text, token.start),
                )
        if kind != TokenType.IDENTIFIER and token.text.upper() in _TIME_TRAVEL_WORDS:
            if token.text.upper().startswith("SYSTEM_"):
                return True
            rest = tokens[i + 1 : i + 3]
            if [t.text.upper() for t in rest] == ["AS", "OF"]:
                return True
    return False


def _from_sqlglot(error: Exception) -> SqlParseError:
    if isinstance(error, ParseError) and error.errors:
        first = error.errors[0]
        return SqlParseError(
            first.get("description") or str(error), first.get("line"), first.get("col")
        )
    if isinstance(error, TokenError):
        return SqlParseError(f"Cannot tokenize the statement: {error.__cause__ or error}")
    return SqlParseError(f"Cannot parse the statement ({type(error).__name__}: {error})")


def _opaque(text: str, tokens: list[Token]) -> exp.Command:
    head = tokens[0]
    rest = text[head.end + 1 :].strip()
    return exp.Command(this=head.text.upper(), expression=exp.Literal.string(rest))


def parse_statement(text: str) -> Statement:
    """Parse one statement (as returned by `split_statements`).

    Raises:
        SqlParseError: on a syntax error, an invalid CALL, or Paimon syntax that does not parse
            completely (see the module docstring).
    """
    spans, open_construct = _scan(text)
    if open_construct is not None:
        kind, offset = open_construct
        what = {"comment": "/* comment", "`": "back-quoted identifier"}.get(kind, "string literal")
        raise SqlParseError(f"Unterminated {what}", *_position(text, offset))
    if not spans:
        raise SqlParseError("Empty statement")
    if len(spans) > 1:
        raise SqlParseError(
            "parse_statement() takes a single statement; use parse_script()",
            *_position(text, _stripped(text, spans[1])[0]),
        )

    tokens = _tokens(text)
    first = tokens[0]
    is_call = first.token_type == TokenType.EXECUTE and first.text.upper() == "CALL"
    paimon = is_call or _uses_paimon_syntax(text, tokens)
    try:
        trees = [t for t in _DIALECT.parse(text, error_level=ErrorLevel.RAISE) if t is not None]
    except Exception as e:
        if paimon:
            raise _from_sqlglot(e) from e
        return QueryStatement(text=text, tree=_opaque(text, tokens), paimon_tables=[])
    if not trees:
        raise SqlParseError("Empty statement")
    tree = trees[0]

    if is_call:
        return _call_statement(tree, text)
    if not paimon:
        return QueryStatement(text=text, tree=tree, paimon_tables=[])
    command = tree if isinstance(tree, exp.Command) else tree.find(exp.Command)
    if command is not None:
        raise SqlParseError(
            f"Statement uses Paimon syntax ($ names or time travel) but its "
            f"{command.name or first.text.upper()} part cannot be parsed"
        )
    return QueryStatement(text=text, tree=tree, paimon_tables=paimon_table_refs(tree))


def parse_script(text: str) -> list[Statement]:
    """Split a script and parse each statement; error positions are relative to the script.

    Raises:
        SqlParseError: for the first statement that does not parse.
    """
    statements: list[Statement] = []
    for span in _scan(text)[0]:
        offset, statement = _stripped(text, span)
        try:
            statements.append(parse_statement(statement))
        except SqlParseError as e:
            if e.line is None or e.col is None:
                raise
            line, col = _position(text, offset)
            col = col + e.col - 1 if e.line == 1 else e.col
            raise SqlParseError(e.description, line + e.line - 1, col) from e
    return statements


# --------------------------------------------------------------------------- CALL


def _at(node: exp.Expr) -> tuple[int | None, int | None]:
    return node.meta.get("line"), node.meta.get("col")


def _call_statement(tree: exp.Expr, text: str) -> CallStatement:
    if not isinstance(tree, Call):
        raise SqlParseError(f"Expected a CALL statement, got {type(tree).__name__}")
    parts = tree.parts
    namespace_ok = len(parts) in (2, 3) and parts[-2].lower() == SYSTEM_NAMESPACE
    if not namespace_ok or not parts[-1]:
        raise SqlParseError(
            f"Procedure {'.'.join(parts)} is not found: procedures live in the sys namespace, "
            f"e.g. CALL sys.{parts[-1] or '<name>'}(...)",
            *_at(tree),
        )
    procedure = parts[-1].lower()
    label = f"sys.{procedure}"

    arguments = tree.expressions
    named = [a for a in arguments if isinstance(a, NamedArg)]
    if named and len(named) != len(arguments):
        odd = next(
            a for a in arguments if isinstance(a, NamedArg) != isinstance(arguments[0], NamedArg)
        )
        raise SqlParseError(f"Cannot mix named and positional arguments in CALL {label}", *_at(odd))

    def failure(name: str, where: exp.Expr) -> Callable[[str], SqlParseError]:
        line, col = _at(where)
        return lambda reason: SqlParseError(f"Argument {name} of CALL {label} {reason}", line, col)

    args: dict[str, Any] = {}
    for arg in named:
        name = arg.this.name.lower()
        if name in args:
            raise SqlParseError(f"Duplicate argument '{name}' in CALL {label}", *_at(arg))
        args[name] = _constant(arg.expression, failure(f"'{name}'", arg))
    positional = tuple(
        _constant(arg, failure(f"#{i}", arg)) for i, arg in enumerate(arguments, 1) if not named
    )
    catalog = parts[0] if len(parts) == 3 else None
    return CallStatement(
        procedure=procedure, text=text, args=args, positional=positional, catalog=catalog
    )


def _describe(node: exp.Expr) -> str:
    if isinstance(node, exp.Column):
        return "a column reference"
    if isinstance(node, exp.Func):
        return "a function call"
    if isinstance(node, (exp.Binary, exp.Unary)):
        return "an expression"
    return "a non-constant expression"


def _constant(node: exp.Expr, fail: Callable[[str], SqlParseError], in_map: bool = False) -> Any:
    """The Python value of one constant argument (`PaimonSqlExtensions.g4` `constant`)."""
    if isinstance(node, exp.Literal):
        return node.this if node.is_string else _number(node.this, fail)
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and not node.this.is_string:
        return -_number(node.this.this, fail)
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Null):
        return None
    if isinstance(node, TypedLiteral):
        return _typed(node.name, node.expression.this, fail)
    if isinstance(node, exp.HexString):
        try:
            return bytes.fromhex(node.this)
        except ValueError:
            raise fail(f"has an invalid binary literal X'{node.this}'") from None
    if isinstance(node, exp.VarMap) and not in_map:
        keys = [_constant(k, fail, True) for k in node.args["keys"].expressions]
        values = [_constant(v, fail, True) for v in node.args["values"].expressions]
        if len(keys) != len(values):
            raise fail("has a MAP(...) with an odd number of arguments")
        if len(set(keys)) != len(keys):
            raise fail("has a MAP(...) with duplicate keys")
        return dict(zip(keys, values))
    raise fail(
        "must be a constant (a literal, TRUE/FALSE, a typed literal or MAP(...)), "
        f"got {_describe(node)}: {_snippet(node)}"
    )


_SUFFIX_BOUNDS = {"L": 63, "S": 15, "Y": 7}


def _number(text: str, fail: Callable[[str], SqlParseError]) -> int | float | Decimal:
    """Spark's number literal rules: 1 int, 1.5 decimal, 1e3 double, 10L/1.5BD/2D/3F suffixed."""
    upper = text.upper()
    try:
        if upper.endswith("BD"):
            return Decimal(text[:-2])
        if upper[-1] in "DF":
            return float(text[:-1])
        if upper[-1] in _SUFFIX_BOUNDS:
            value, bits = int(text[:-1]), _SUFFIX_BOUNDS[upper[-1]]
            if not -(2**bits) <= value < 2**bits:
                raise fail(f"has an out-of-range number {text}")
            return value
        if "E" in upper:
            return float(text)
        if "." in text:
            return Decimal(text)
        return int(text)
    except (ValueError, InvalidOperation):
        raise fail(f"has an invalid number {text}") from None


def _typed(kind: str, value: str, fail: Callable[[str], SqlParseError]) -> Any:
    try:
        if kind == "DATE":
            return dt.date.fromisoformat(value.strip())
        if kind in ("TIMESTAMP", "TIMESTAMP_NTZ", "TIMESTAMP_LTZ"):
            stamp = dt.datetime.fromisoformat(value.strip())
            if stamp.tzinfo is not None:
                stamp = stamp.astimezone(dt.UTC).replace(tzinfo=None)
            return stamp
    except ValueError:
        raise fail(f"has an invalid {kind} literal '{value}'") from None
    raise fail(f"has an unsupported typed literal {kind} '{value}'")


# --------------------------------------------------------------------------- tables


def _split_object_name(name: str) -> tuple[str, str | None, str | None]:
    """`t`, `t$sys`, `t$branch_b`, `t$branch_b$sys` -> (table, branch, system table).

    Same rules as Paimon's `Identifier.splitObjectName`; system table names are lower-cased.
    """
    if SYSTEM_TABLE_SPLITTER not in name:
        return name, None, None
    table, *rest = name.split(SYSTEM_TABLE_SPLITTER)
    if len(rest) > 2:
        raise SqlParseError(f"Invalid object name {name!r}: at most two '$' separators")
    if not table or not all(rest):
        raise SqlParseError(f"Invalid object name {name!r}: empty name around '$'")
    branch: str | None = None
    if rest[0].lower().startswith(BRANCH_PREFIX):
        branch = rest.pop(0)[len(BRANCH_PREFIX) :]
        if not branch:
            raise SqlParseError(f"Invalid object name {name!r}: empty branch name")
    elif len(rest) == 2:
        raise SqlParseError(f"System table can only contain one '$' separator, but this is: {name}")
    return table, branch, rest[0].lower() if rest else None


def _version(node: exp.Expr, table: str) -> str | int:
    if isinstance(node, exp.Literal):
        if node.is_string:
            return node.this
        if node.this.isdigit():
            return int(node.this)
    raise SqlParseError(
        f"VERSION AS OF on {table} takes an integer or a string literal, got {_snippet(node)}"
    )


def _table_ref(table: exp.Table) -> TableRef:
    shown = _snippet(exp.Table(**{k: table.args.get(k) for k in ("this", "db", "catalog")}))
    if not isinstance(table.this, exp.Identifier):
        raise SqlParseError(f"Cannot use Paimon syntax on {shown}: expected a table name")
    if SYSTEM_TABLE_SPLITTER in table.db or SYSTEM_TABLE_SPLITTER in table.catalog:
        raise SqlParseError(f"'$' is only allowed in the table part of a name: {shown}")
    name, branch, system_table = _split_object_name(table.name)
    version: str | int | None = None
    timestamp: exp.Expr | None = None
    clause = table.args.get("version")
    if clause is not None:
        if clause.name == "VERSION":
            version = _version(clause.expression, shown)
        else:
            timestamp = clause.expression
    return TableRef(
        catalog=table.catalog or None,
        database=table.db or None,
        table=name,
        branch=branch,
        system_table=system_table,
        version=version,
        timestamp=timestamp,
        node=table,
    )


def _is_paimon(table: exp.Table) -> bool:
    return table.args.get("version") is not None or any(
        SYSTEM_TABLE_SPLITTER in part.name for part in table.parts
    )


def paimon_table_refs(tree: exp.Expr) -> list[TableRef]:
    """The table references of `tree` that need Paimon: a `$` suffix or time travel."""
    return [_table_ref(table) for table in tree.find_all(exp.Table) if _is_paimon(table)]


# Arguments that describe which table a node names; everything else (alias, joins, sample,
# partition, ...) moves to the replacement.
_NAME_ARGS = frozenset({"this", "db", "catalog", "version", "when", "changes"})


def replace_tables(
    tree: exp.Expr,
    mapping: Callable[[TableRef], exp.Expr],
    *,
    plain: Callable[[exp.Table], bool] | None = None,
) -> str:
    """Replace every Paimon table reference and return the Spark SQL of the result.

    `mapping` returns the replacement of one reference, its time travel clause included
    (typically `exp.to_table(view_name)`). The reference's alias is kept; an unaliased
    reference that columns qualify (`t.x`) is aliased with its own name. Comments are dropped
    (hints are kept). `tree` is not modified.

    Plain references (no Paimon syntax) are replaced too where `plain` says so; it sees the
    node inside the copy being rewritten, so it can look at the node's ancestors (CTEs, an
    INSERT target).

    >>> stmt = parse_statement("SELECT s.snapshot_id FROM db.t$snapshots s")
    >>> replace_tables(stmt.tree, lambda ref: exp.to_table("v"))
    'SELECT s.snapshot_id FROM v AS s'
    """
    root = tree.copy()
    qualifiers = {col.table.lower() for col in root.find_all(exp.Column) if col.table}
    refs = paimon_table_refs(root)
    if plain is not None:
        refs += [
            _table_ref(table)
            for table in root.find_all(exp.Table)
            if isinstance(table.this, exp.Identifier) and not _is_paimon(table) and plain(table)
        ]
    for ref in refs:
        node = ref.node
        replacement = mapping(ref).copy()
        for key, value in node.args.items():
            if key not in _NAME_ARGS and value and key in replacement.arg_types:
                if not replacement.args.get(key):
                    replacement.set(key, value)
        if (
            "alias" in replacement.arg_types
            and not replacement.args.get("alias")
            and node.name.lower() in qualifiers
        ):
            replacement.set("alias", exp.TableAlias(this=node.this.copy()))
            for column in root.find_all(exp.Column):  # `db.t.x` now reads `t.x`
                if column.table.lower() == node.name.lower() and column.db == node.db:
                    column.set("db", None)
                    column.set("catalog", None)
        if node is root:
            root = replacement
        else:
            node.replace(replacement)
    for identifier in root.find_all(exp.Identifier):
        if SYSTEM_TABLE_SPLITTER in identifier.this and not identifier.quoted:
            identifier.set("quoted", True)
    return root.sql(dialect="spark", comments=False)

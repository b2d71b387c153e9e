"""Statement splitting and the typed parse result of Paimon's Spark SQL extensions.

A script is split on `;` outside quotes and comments (`split_statements`), and each statement is
classified by `parse_statement`:

* `CALL [catalog.]sys.<name>(...)` becomes a `CallStatement` with Python argument values.
* Anything else becomes a `QueryStatement`; `paimon_tables` lists its table references that
  need Paimon (a `$` system table or branch suffix, or a time travel clause), and
  `replace_tables` rewrites them into plain Spark SQL by editing the statement's text in
  place (`sql_ext.splice`): only the table names (with their time travel clause) change, every
  other byte (functions, comments, hints) stays as written.

Two Spark forms sqlglot misreads are expanded before parsing, in `QueryStatement.parsed` only:
`TABLE t` as a query becomes `SELECT * FROM t`, and `IDENTIFIER('a.b')` with one string
literal becomes the name it holds. Both mean the same to Spark.

Strictness rule. The tokens of the statement (never a regex over its text) decide whether it
uses Paimon syntax: `CALL` as the first word, a name containing `$`, or a time travel clause
(`VERSION|TIMESTAMP|SYSTEM_VERSION|SYSTEM_TIME AS OF`, `SYSTEM_TIME`, `SYSTEM_VERSION`).

* A statement with Paimon syntax must parse completely with `PaimonSpark`: a sqlglot parse
  error, or an opaque `exp.Command` anywhere in its tree, raises `SqlParseError`. So
  `EXPLAIN SELECT * FROM t$snapshots` or `ADD JAR /x$y.jar` (quote the path) are errors.
* A statement without Paimon syntax (`SET k=v`, `ADD JAR`, `SHOW ...`, `USE db`, ...) is
  handed to Spark verbatim: its `paimon_tables` is empty and its `tree` is sqlglot's tree, or
  an `exp.Command` when sqlglot cannot parse it. Spark's `${var}` substitution is left to the
  session.

Errors are `SqlParseError` with a one-line message (plus line and column when known); sqlglot's
internal messages become `Syntax error at or near ...` as Spark words them.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

from sqlglot import exp
from sqlglot.errors import ErrorLevel, ParseError, TokenError
from sqlglot.tokens import Token, TokenType

from sql_ext.errors import SqlParseError
from sql_ext.splice import Edit, Spliced, splice
from sql_ext.syntax.alter import is_alter, parse_head
from sql_ext.syntax.databases import parse_database_statement
from sql_ext.syntax.dialect import (
    END,
    SPAN,
    Call,
    NamedArg,
    PaimonSpark,
    TypedLiteral,
    quote_identifier,
)
from sql_ext.syntax.statements import (
    CallStatement,
    ExplainStatement,
    QueryStatement,
    Statement,
    TableRef,
    query_family,
)
from sql_ext.syntax.tags import is_tag_ddl, parse_tag_ddl
from sql_ext.syntax.tokens import tokenize

if TYPE_CHECKING:
    from procedures.base import TypedValue

SYSTEM_TABLE_SPLITTER = "$"
BRANCH_PREFIX = "branch_"
SYSTEM_NAMESPACE = "sys"

_DIALECT = PaimonSpark()
_EXPLAIN_MODES = frozenset({"EXTENDED", "CODEGEN", "COST", "FORMATTED"})
_TIME_TRAVEL_WORDS = frozenset({"VERSION", "TIMESTAMP", "SYSTEM_VERSION", "SYSTEM_TIME"})
_NAME_TOKENS = frozenset({TokenType.VAR, TokenType.IDENTIFIER})
_SPECIAL = re.compile(r"""['"`;]|--|/\*""")
_BLOCK_COMMENT = re.compile(r"/\*|\*/")
# Spark strings take backslash escapes except raw ones (r'...'); back-quotes escape by doubling,
# which scanning as two adjacent quoted parts handles.
_QUOTED = {q: re.compile(rf"{q}[^{q}\\]*(?:\\.[^{q}\\]*)*{q}", re.DOTALL) for q in "'\""}
_QUOTED["`"] = re.compile(r"`[^`]*`")
_RAW_QUOTED = {q: re.compile(rf"{q}[^{q}]*{q}") for q in "'\""}
_MAX_SNIPPET = 80


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


def located_statements(text: str) -> list[tuple[int, str]]:
    """`split_statements` with the 1-based line of each statement's first word (comments
    before it skipped), for errors and echoes that name a script's line."""
    located = []
    for span in _scan(text)[0]:
        offset, statement = _stripped(text, span)
        code = blank_comments(statement)
        start = offset + len(code) - len(code.lstrip())
        located.append((text.count("\n", 0, start) + 1, statement))
    return located


_COMMENT_START = re.compile(r"\s*(?:--|/\*)")
_NOT_NEWLINE = re.compile(r"[^\r\n]")


def blank_comments(text: str) -> str:
    """`text` with every comment (`-- ...`, `/* ... */`, nested) replaced by spaces, line
    breaks kept: the same length, so every line, column and offset stays where it was.

    Statements are routed on this text, so a comment is harmless wherever a script may have
    one (leading, inner, trailing) and no text sniffer has to know about comments. Hints
    (`/*+ BROADCAST(t) */`) are no comments and stay. Comments are found with sqlglot's
    tokenizer (quotes, raw strings and nesting as Spark reads them); a text that does not
    tokenize (an unterminated quote or comment) is returned unchanged for the parser to
    reject.

    >>> blank_comments("-- note\\nSHOW TAGS t /* x */")
    '       \\nSHOW TAGS t        '
    """
    if "--" not in text and "/*" not in text:
        return text
    try:
        tokens = tokenize(text)
    except SqlParseError:
        return text
    pieces: list[str] = []
    position = 0
    for token in [*tokens, None]:
        start = len(text) if token is None else token.start
        if start > position:
            gap = text[position:start]
            pieces.append(_NOT_NEWLINE.sub(" ", gap) if _COMMENT_START.match(gap) else gap)
            position = start
        if token is not None and token.end + 1 > position:
            pieces.append(text[position : token.end + 1])
            position = token.end + 1
    return "".join(pieces)


def code_of(statement: str) -> str:
    """The text a statement is routed and run on: `blank_comments`, trailing blanks removed
    (leading ones stay, so lines and columns in errors are the user's)."""
    return blank_comments(statement).rstrip()


# --------------------------------------------------------------------------- parsing


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - text.rfind("\n", 0, offset)


def _snippet(node: exp.Expr) -> str:
    sql = node.sql(dialect=_DIALECT)
    return sql if len(sql) <= _MAX_SNIPPET else sql[: _MAX_SNIPPET - 3] + "..."


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


def _offset(text: str, line: int, col: int) -> int:
    """The offset of 1-based `line` and `col` in `text`."""
    start = 0
    for _ in range(line - 1):
        start = text.index("\n", start) + 1
    return start + col - 1


def _syntax_error(text: str, error: dict[str, Any]) -> SqlParseError | None:
    """sqlglot's generic messages ("Required keyword: 'this' missing for <class ...>") worded as
    Spark does: `Syntax error at or near '<token>'` or `... near end of input`."""
    description = error.get("description") or ""
    line, col = error.get("line"), error.get("col")
    expected = description[len("Expecting ") :] if description.startswith("Expecting ") else ""
    generic = description.startswith(("Required keyword", "Invalid expression"))
    if not (expected or generic or "<class '" in description):
        return None
    if not error.get("highlight"):  # the dialect blames an empty token at the end
        near, where = "end of input", _position(text, len(text.rstrip()))
    else:
        try:
            last = _offset(text, line, col)
            tokens = tokenize(text)
        except (TypeError, ValueError, SqlParseError):
            return SqlParseError("Syntax error", line, col)
        token = next((t for t in tokens if t.end >= last), None)
        if token is None:
            return SqlParseError("Syntax error", line, col)
        shown = text[token.start : token.end + 1]
        near = shown if shown[:1] in ("'", '"') else f"'{shown}'"
        where = _position(text, token.start)
    suffix = f": expected {expected}" if expected else ""
    return SqlParseError(f"Syntax error at or near {near}{suffix}", *where)


def _from_sqlglot(error: Exception, text: str) -> SqlParseError:
    if isinstance(error, ParseError) and error.errors:
        first = error.errors[0]
        translated = _syntax_error(text, first)
        if translated is not None:
            return translated
        return SqlParseError(
            first.get("description") or str(error), first.get("line"), first.get("col")
        )
    if isinstance(error, TokenError):
        return SqlParseError(f"Cannot tokenize the statement: {error.__cause__ or error}")
    return SqlParseError(f"Cannot parse the statement ({type(error).__name__}: {error})")


def _opaque(text: str, head: Token) -> exp.Command:
    rest = text[head.end + 1 :].strip()
    return exp.Command(this=head.text.upper(), expression=exp.Literal.string(rest))


# Tokens after which `TABLE` starts a query (`(TABLE t)`, `... UNION TABLE t`).
_QUERY_START = frozenset(
    {
        TokenType.L_PAREN,
        TokenType.UNION,
        TokenType.EXCEPT,
        TokenType.INTERSECT,
        TokenType.ALL,
        TokenType.DISTINCT,
    }
)
_NAME_PART = re.compile(r"\s*(?:`((?:[^`]|``)*)`|([A-Za-z0-9_$]+))\s*")


def _identifier_clause(value: str) -> str | None:
    """`IDENTIFIER('a.`b c`')`'s string as back-quoted name parts, or None when it is no name."""
    parts: list[str] = []
    position = 0
    while True:
        match = _NAME_PART.match(value, position)
        if match is None:
            return None
        quoted, bare = match.groups()
        parts.append(quoted.replace("``", "`") if quoted is not None else bare)
        position = match.end()
        if position == len(value):
            return ".".join(quote_identifier(part) for part in parts)
        if value[position] != ".":
            return None
        position += 1


def _is_name_start(token: Token) -> bool:
    """A name or a word that can be one (`default` in `TABLE default.t`)."""
    if token.token_type in _NAME_TOKENS:
        return True
    text = token.text
    return token.token_type not in (TokenType.STRING, TokenType.NUMBER) and bool(
        re.fullmatch(r"[A-Za-z_]\w*", text)
    )


def _expansions(tokens: list[Token]) -> list[Edit]:
    """`TABLE t` (a query) -> `SELECT * FROM t`; `IDENTIFIER('t')` -> `` `t` ``."""
    edits: list[Edit] = []
    for i, token in enumerate(tokens):
        following = tokens[i + 1 : i + 4]
        if (
            token.token_type == TokenType.TABLE
            and following
            and _is_name_start(following[0])
            and (i == 0 or tokens[i - 1].token_type in _QUERY_START)
        ):
            edits.append(Edit(token.start, token.end + 1, "SELECT * FROM"))
        elif (
            token.token_type == TokenType.VAR
            and token.text.upper() == "IDENTIFIER"
            and [t.token_type for t in following]
            == [TokenType.L_PAREN, TokenType.STRING, TokenType.R_PAREN]
        ):
            name = _identifier_clause(following[1].text)
            if name is not None:
                edits.append(Edit(token.start, following[2].end + 1, name))
    return edits


def _check_single(text: str) -> None:
    """Raise unless `text` is one statement with every quote and comment closed."""
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


def _keyword(token: Token) -> str:
    """A token's word as a keyword (upper case); empty for quoted text."""
    if token.token_type in (TokenType.STRING, TokenType.IDENTIFIER):
        return ""
    return token.text.upper()


def _tag_or_alter(text: str, tokens: list[Token]) -> Statement | None:
    if is_tag_ddl(text, tokens):
        return parse_tag_ddl(text, tokens)
    if is_alter(text, tokens):
        return parse_head(text, tokens)
    return None


def _show(text: str, tokens: list[Token]) -> Statement | None:
    return parse_tag_ddl(text, tokens) if is_tag_ddl(text, tokens) else None


def _explain(text: str, tokens: list[Token]) -> Statement | None:
    """EXPLAIN [mode] <statement>; the statement explained is a CALL or one sqlglot reads."""
    if len(tokens) < 2 or tokens[0].token_type != TokenType.COMMAND:
        return None
    mode = ""
    rest = text[tokens[1].start :]
    if _keyword(tokens[1]) in _EXPLAIN_MODES:
        mode = tokens[1].text.upper() + " "
        rest = text[tokens[1].end + 1 :]
    return ExplainStatement(text, mode, parse_sql(rest))


def _database(text: str, tokens: list[Token]) -> Statement | None:
    return parse_database_statement(text, tokens)


STATEMENT_PARSERS: dict[str, Callable[[str, list[Token]], Statement | None]] = {
    "ALTER": _tag_or_alter,
    "SHOW": _show,
    "EXPLAIN": _explain,
    "CREATE": _database,
    "DROP": _database,
    "DESC": _database,
    "DESCRIBE": _database,
}
"""The statements sqlglot does not read (or reads otherwise than Spark), by first keyword;
None from a parser: the statement is one sqlglot reads (`parse_sql`)."""


def parse_statement(text: str) -> Statement:
    """Parse one statement (as returned by `split_statements`, comments blanked by `code_of`)
    into its family's statement type (`sql_ext.syntax.statements`), tokenizing it once.

    Raises:
        SqlParseError: on a syntax error, an invalid CALL, or Paimon syntax that does not parse
            completely (see the module docstring).
        SqlError: a database statement that does not read.
    """
    _check_single(text)
    tokens = tokenize(text)
    parser = STATEMENT_PARSERS.get(_keyword(tokens[0])) if tokens else None
    statement = parser(text, tokens) if parser is not None else None
    return statement if statement is not None else parse_sql(text, tokens)


def parse_sql(text: str, tokens: list[Token] | None = None) -> CallStatement | QueryStatement:
    """Parse one statement as a CALL or with sqlglot (`tokens`: its tokens, when read).

    Raises:
        SqlParseError: as `parse_statement`.
    """
    _check_single(text)
    if tokens is None:
        tokens = tokenize(text)
    first = tokens[0]
    is_call = first.token_type == TokenType.EXECUTE and first.text.upper() == "CALL"
    parsed = text
    expansions = [] if is_call else _expansions(tokens)
    if expansions:
        parsed = splice(text, expansions).text
        tokens = tokenize(parsed)
    paimon = is_call or _uses_paimon_syntax(parsed, tokens)
    try:
        trees = [t for t in _DIALECT.parse(parsed, error_level=ErrorLevel.RAISE) if t is not None]
    except Exception as e:
        if paimon:
            raise _from_sqlglot(e, parsed) from e
        tree = _opaque(text, first)
        return query_family(tree)(text=text, tree=tree, paimon_tables=[], tokens=tokens)
    if not trees:
        raise SqlParseError("Empty statement")
    tree = trees[0]

    if is_call:
        return _call_statement(tree, text)
    family = query_family(tree)
    if not paimon:
        return family(text=text, tree=tree, paimon_tables=[], parsed=parsed, tokens=tokens)
    command = tree if isinstance(tree, exp.Command) else tree.find(exp.Command)
    if command is not None:
        raise SqlParseError(
            f"Statement uses Paimon syntax ($ names or time travel) but its "
            f"{command.name or first.text.upper()} part cannot be parsed"
        )
    return family(
        text=text, tree=tree, paimon_tables=paimon_table_refs(tree), parsed=parsed, tokens=tokens
    )


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
        return _number(node.this.this, fail, negative=True)
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


_INTEGER_SUFFIXES = {"L": ("BIGINT", 63), "S": ("SMALLINT", 15), "Y": ("TINYINT", 7)}


def _number(
    text: str, fail: Callable[[str], SqlParseError], negative: bool = False
) -> int | float | Decimal | TypedValue:
    """Spark's number literal rules: 1 int, 1.5 decimal, 1e3 double, 10L/1.5BD/2D/3F suffixed.

    A suffix whose type a Python value does not show (`10L` BIGINT, `2S` SMALLINT, `3Y`
    TINYINT, `1F` FLOAT) gives a `TypedValue`, so that binding sees Spark's type.
    """
    from procedures.base import TypedValue  # here: importing procedures loads the core

    upper = text.upper()
    sign = -1 if negative else 1
    shown = f"-{text}" if negative else text
    try:
        if upper.endswith("BD"):
            return sign * Decimal(text[:-2])
        if upper[-1] == "D":
            return sign * float(text[:-1])
        if upper[-1] == "F":
            return TypedValue(sign * float(text[:-1]), "FLOAT")
        if upper[-1] in _INTEGER_SUFFIXES:
            kind, bits = _INTEGER_SUFFIXES[upper[-1]]
            value = sign * int(text[:-1])
            if not -(2**bits) <= value < 2**bits:
                raise fail(f"has an out-of-range {kind} number {shown}")
            return TypedValue(value, kind)
        if "E" in upper:
            return sign * float(text)
        if "." in text:
            return sign * Decimal(text)
        return sign * int(text)
    except (ValueError, InvalidOperation):
        raise fail(f"has an invalid number {shown}") from None


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


def table_nodes(tree: exp.Expr) -> Iterator[exp.Table]:
    """The tables `tree` names, in order; not the names inside hints (`/*+ MERGE(t, u) */`),
    which Spark matches against the aliases as written."""
    return (table for table in tree.find_all(exp.Table) if table.find_ancestor(exp.Hint) is None)


def paimon_table_refs(tree: exp.Expr) -> list[TableRef]:
    """The table references of `tree` that need Paimon: a `$` suffix or time travel."""
    return [_table_ref(table) for table in table_nodes(tree) if _is_paimon(table)]


@dataclass(frozen=True, slots=True)
class Fragment:
    """The part of a statement's text that is a query of its own: `pieces` (offsets, end
    exclusive) joined by a space, after `edits`."""

    pieces: tuple[tuple[int, int], ...]
    edits: tuple[Edit, ...] = ()


def _span(node: exp.Expr) -> tuple[int, int]:
    span = node.meta.get(SPAN)
    if span is None:
        raise SqlParseError(f"Cannot find the text of {_snippet(node)} in the statement")
    return span


def query_fragment(tree: exp.Expr) -> Fragment:
    """The source query of `INSERT ... <query>` (with the statement's leading CTEs) or of
    `CREATE TABLE ... AS <query>`."""
    query = tree.args.get("expression")
    if query is None:
        raise SqlParseError(f"{tree.key.upper()} has no query")
    start, end = _span(query)
    ctes = tree.args.get("with_") if isinstance(tree, exp.Insert) else None
    if ctes is None:
        return Fragment(((start, end),))
    pieces = (_span(ctes), (start, end))
    own = query.args.get("with_") if "with_" in query.arg_types else None
    if own is None or not own.expressions:
        return Fragment(pieces)
    # `WITH a AS (...) INSERT ... WITH b AS (...) SELECT`: the query's CTEs join the list.
    first = own.expressions[0].args["alias"].this
    return Fragment(pieces, (Edit(start, _name_start(first), ", "),))


def _name_start(identifier: exp.Expr) -> int:
    start = identifier.meta.get("start")
    if start is None:
        raise SqlParseError(f"Cannot find {_snippet(identifier)} in the statement text")
    return start


def _name_end(identifier: exp.Expr) -> int:
    end = identifier.meta.get("end")
    if end is None:
        raise SqlParseError(f"Cannot find {_snippet(identifier)} in the statement text")
    return end + 1


def _name_text(text: str, identifier: exp.Identifier) -> str:
    """A name as written, back-quoted when Spark would not read it as one name (`t$x`)."""
    written = text[_name_start(identifier) : _name_end(identifier)]
    if identifier.quoted or re.fullmatch(r"\w+", written):
        return written
    return quote_identifier(identifier.this)


def _table_edits(text: str, table: exp.Table, replacement: str) -> tuple[list[Edit], bool]:
    """Replace `[catalog.][db.]name [VERSION|TIMESTAMP AS OF ...]` by `replacement`, aliased
    with the table's own name where a query reads it and the user gave no alias (then the
    flag is true)."""
    parts = [table.args.get(k) for k in ("catalog", "db", "this")]
    start = min(_name_start(p) for p in parts if p is not None)
    end = _name_end(table.this)
    version = table.args.get("version")
    if version is not None:
        end = version.meta.get(END, end)
    needs_alias = table.args.get("alias") is None and isinstance(table.parent, (exp.From, exp.Join))
    if not needs_alias:
        return [Edit(start, end, replacement)], False
    alias = f" AS {_name_text(text, table.this)}"
    sample = table.args.get("sample")
    after = sample.meta.get(END) if sample is not None else None
    if after is None or after <= end:
        return [Edit(start, end, replacement + alias)], True
    return [Edit(start, end, replacement), Edit(after, after, alias)], True


def replace_tables(
    text: str,
    tree: exp.Expr,
    mapping: Callable[[TableRef], exp.Expr],
    *,
    plain: Callable[[exp.Table], bool] | None = None,
    fragment: Fragment | None = None,
) -> Spliced:
    """Replace every Paimon table reference of `tree` (parsed from `text`) in `text`.

    Only the reference's name and time travel clause are replaced, by the SQL of
    `mapping(ref)` (typically a view name); every other byte stays. Where a query reads it
    without an alias, the replacement is aliased with the table's own name, so columns (`t.k`),
    hints (`/*+ BROADCAST(t) */`) and Spark's error messages name the table, not the view;
    `db.t.k` becomes `t.k`. Unquoted names with `$` elsewhere (`t$snapshots.snapshot_id`) are
    back-quoted, as Spark needs. With `fragment`, only that part of `text` is returned.

    Plain references (no Paimon syntax) are replaced too where `plain` says so; it sees the
    nodes of `tree`, so it can look at their ancestors (CTEs, an INSERT target).

    >>> stmt = parse_statement("SELECT s.snapshot_id FROM db.t$snapshots s -- all")
    >>> replace_tables(stmt.parsed, stmt.tree, lambda ref: exp.to_table("v")).text
    'SELECT s.snapshot_id FROM v s -- all'
    >>> stmt = parse_statement("SELECT /*+ BROADCAST(t) */ db.t.k FROM db.t VERSION AS OF 1")
    >>> replace_tables(stmt.parsed, stmt.tree, lambda ref: exp.to_table("v")).text
    'SELECT /*+ BROADCAST(t) */ t.k FROM v AS t'
    """
    refs = paimon_table_refs(tree)
    if plain is not None:
        refs += [
            _table_ref(table)
            for table in table_nodes(tree)
            if isinstance(table.this, exp.Identifier) and not _is_paimon(table) and plain(table)
        ]
    edits = list(fragment.edits) if fragment is not None else []
    replaced: list[tuple[int, int]] = []
    aliased: list[exp.Table] = []
    for ref in refs:
        table = ref.node
        table_edits, alias = _table_edits(text, table, mapping(ref).sql(dialect="spark"))
        if alias:
            aliased.append(table)
        edits += table_edits
        replaced.append((table_edits[0].start, table_edits[0].end))
    for column in tree.find_all(exp.Column):  # `db.t.x` reads `t.x` from the aliased view
        qualifier = column.args.get("table")
        if not column.db or qualifier is None:
            continue
        if any(column.table.lower() == t.name.lower() and column.db == t.db for t in aliased):
            first = column.args.get("catalog") or column.args["db"]
            edits.append(Edit(_name_start(first), _name_start(qualifier), ""))
    for identifier in tree.find_all(exp.Identifier):
        if SYSTEM_TABLE_SPLITTER not in identifier.this or identifier.quoted:
            continue
        start = identifier.meta.get("start")
        if start is None or any(a <= start < b for a, b in replaced):
            continue
        edits.append(Edit(start, _name_end(identifier), quote_identifier(identifier.this)))
    try:
        return splice(text, edits, fragment.pieces if fragment is not None else None)
    except ValueError as e:
        raise SqlParseError(f"Cannot rewrite the statement: {e}") from None

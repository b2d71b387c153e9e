"""The grammar of Spark's ALTER TABLE / ALTER DATABASE statements, read on sqlglot's tokens.

sqlglot leaves several forms as bare commands (``UNSET TBLPROPERTIES``, ``ALTER COLUMN ...
FIRST``, nested ``ALTER COLUMN s.x TYPE``, ``ALTER DATABASE``) and parses the others into
unlike trees, so every form is read here, once, into plain statements that ``sql_ext.alter``
runs. No pyspark import: the metadata engine routes ALTER with ``is_alter`` alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import Token, TokenType

from sql_ext.dialect import PaimonSpark
from sql_ext.errors import SqlError
from sql_ext.parse import SqlParseError

_DATABASE_KINDS = ("DATABASE", "SCHEMA", "NAMESPACE")
_NAME_TOKENS = (TokenType.VAR, TokenType.IDENTIFIER)
_COLUMN_ENDS = ("COMMENT", "FIRST", "AFTER", "NOT", "DEFAULT")
T = TypeVar("T")


# ----------------------------------------------------------------------------- statements


@dataclass(frozen=True, slots=True)
class NewColumn:
    """One column of ADD COLUMN(S): ``path`` (``("s", "z")`` for a nested field)."""

    path: tuple[str, ...]
    type_text: str
    not_null: bool = False
    comment: str | None = None
    first: bool = False
    after: str | None = None


@dataclass(frozen=True, slots=True)
class ColumnChange:
    """One ``ALTER|CHANGE COLUMN path ...`` action (the fields it does not set are None)."""

    path: tuple[str, ...]
    type_text: str | None = None
    comment: str | None = None
    set_comment: bool = False
    nullable: bool | None = None
    first: bool = False
    after: str | None = None
    default: str | None = None
    """``SET DEFAULT``: the expression as Spark's parser hands it to the catalog (its SQL)."""
    drop_default: bool = False


@dataclass(frozen=True, slots=True)
class AlterTable:
    """What one ALTER TABLE asks for; only one kind of action is set."""

    name: tuple[str, ...]
    properties: dict[str, str] = field(default_factory=dict)
    unset: tuple[str, ...] = ()
    rename_to: tuple[str, ...] | None = None
    add: tuple[NewColumn, ...] = ()
    rename_column: tuple[tuple[str, ...], str] | None = None
    drop: tuple[tuple[str, ...], ...] = ()
    drop_if_exists: bool = False
    alter: tuple[ColumnChange, ...] = ()
    partitions: tuple[dict[str, exp.Expr], ...] = ()
    partitions_if_exists: bool = False
    """DROP [IF EXISTS] PARTITION; with ``add_partitions`` it is ADD IF NOT EXISTS."""
    add_partitions: tuple[dict[str, exp.Expr], ...] = ()


@dataclass(frozen=True, slots=True)
class AlterHead:
    """``ALTER TABLE|DATABASE <name>`` and the cursor just after the name."""

    kind: str
    name: tuple[str, ...]
    cursor: _Cursor
    text: str


class _Cursor:
    """A cursor over the statement's tokens with keyword matching and clear failures."""

    def __init__(self, text: str) -> None:
        self.tokens: list[Token] = PaimonSpark().tokenize(text)
        self.text = text
        self.i = 0

    def at_end(self) -> bool:
        return self.i >= len(self.tokens) or self.tokens[self.i].token_type == TokenType.SEMICOLON

    def peek(self, *words: str) -> bool:
        window = self.tokens[self.i : self.i + len(words)]
        return len(window) == len(words) and all(
            t.text.upper() == w and t.token_type not in (TokenType.STRING, TokenType.IDENTIFIER)
            for t, w in zip(window, words)
        )

    def peek_type(self, kind: TokenType) -> bool:
        return self.i < len(self.tokens) and self.tokens[self.i].token_type == kind

    def accept(self, *words: str) -> bool:
        if self.peek(*words):
            self.i += len(words)
            return True
        return False

    def accept_type(self, kind: TokenType) -> bool:
        if self.peek_type(kind):
            self.i += 1
            return True
        return False

    def expect(self, *words: str) -> None:
        if not self.accept(*words):
            raise self.error(f"expected {' '.join(words)}")

    def expect_type(self, kind: TokenType, what: str) -> None:
        if not self.accept_type(kind):
            raise self.error(f"expected {what}")

    def error(self, message: str) -> SqlParseError:
        if not self.at_end():
            token = self.tokens[self.i]
            return SqlParseError(f"ALTER: {message} near '{token.text}'", token.line, token.col)
        return SqlParseError(f"ALTER: {message} at the end of the statement")

    def identifier(self, what: str) -> str:
        if not self.at_end():
            token = self.tokens[self.i]
            if token.token_type in _NAME_TOKENS or (
                token.token_type != TokenType.STRING and token.text.isidentifier()
            ):
                self.i += 1
                return token.text
        raise self.error(f"expected {what}")

    def dotted(self, what: str) -> tuple[str, ...]:
        parts = [self.identifier(what)]
        while self.accept_type(TokenType.DOT):
            parts.append(self.identifier(what))
        return tuple(parts)

    def string(self, what: str) -> str:
        if self.peek_type(TokenType.STRING):
            self.i += 1
            return self.tokens[self.i - 1].text
        raise self.error(f"expected {what} (a quoted string)")

    def value(self) -> str:
        """A property value: a string, number, boolean or bare word."""
        if self.at_end():
            raise self.error("expected a property value")
        token = self.tokens[self.i]
        negative = token.token_type == TokenType.DASH
        if negative:
            self.i += 1
            if not self.peek_type(TokenType.NUMBER):
                raise self.error("expected a number")
            token = self.tokens[self.i]
        if token.token_type in (TokenType.TRUE, TokenType.FALSE):
            self.i += 1
            return token.text.lower()
        if token.token_type in (TokenType.STRING, TokenType.NUMBER, *_NAME_TOKENS):
            self.i += 1
            return "-" + token.text if negative else token.text
        raise self.error("expected a property value")

    def property_key(self) -> str:
        if self.peek_type(TokenType.STRING):
            return self.string("a property key")
        return ".".join(self.dotted("a property key"))

    def span(self, stops: Sequence[str]) -> str:
        """The text of the tokens up to a top-level `,`, `)`, end or one of ``stops``."""
        start, depth = self.i, 0
        while not self.at_end():
            token = self.tokens[self.i]
            kind = token.token_type
            if depth == 0 and (
                kind in (TokenType.COMMA, TokenType.R_PAREN)
                or (
                    kind not in (TokenType.STRING, TokenType.IDENTIFIER)
                    and token.text.upper() in stops
                )
            ):
                break
            if kind in (TokenType.L_PAREN, TokenType.LT):
                depth += 1
            elif kind in (TokenType.R_PAREN, TokenType.GT):
                depth -= 1
            self.i += 1
        if self.i == start:
            raise self.error("expected a column type")
        first, last = self.tokens[start], self.tokens[self.i - 1]
        return self.text[first.start : last.end + 1]


def is_alter(text: str) -> bool:
    """Whether ``text`` is ALTER TABLE or ALTER DATABASE|SCHEMA|NAMESPACE (tag DDL aside),
    decided on its first tokens (comments before it are fine)."""
    if "alter" not in text.lower():
        return False
    try:
        cur = _Cursor(text)
    except TokenError:
        return False
    return any(cur.peek("ALTER", kind) for kind in ("TABLE", *_DATABASE_KINDS))


def parse_head(text: str) -> AlterHead:
    """The statement's kind and the name it alters; the actions are read by ``alter_table``."""
    cur = _Cursor(text)
    cur.expect("ALTER")
    kind = next((k for k in ("TABLE", *_DATABASE_KINDS) if cur.accept(k)), None)
    if kind is None:
        raise cur.error("expected TABLE or DATABASE")
    name = cur.dotted("a table name" if kind == "TABLE" else "a database name")
    return AlterHead("TABLE" if kind == "TABLE" else "DATABASE", name, cur, text)


def parse_actions(head: AlterHead, shown: str | None = None) -> AlterTable:
    """The actions of an ALTER TABLE (Spark's grammar) on the table ``shown``; raise
    ``SqlParseError`` or, for a Spark form Paimon tables do not support, ``SqlError``."""
    cur = head.cursor
    if cur.accept("SET", "TBLPROPERTIES"):
        statement = AlterTable(head.name, properties=_property_list(cur, values=True))
    elif cur.accept("UNSET", "TBLPROPERTIES"):
        cur.accept("IF", "EXISTS")
        statement = AlterTable(head.name, unset=tuple(_property_list(cur, values=False)))
    elif cur.accept("RENAME", "TO"):
        statement = AlterTable(head.name, rename_to=cur.dotted("the new table name"))
    elif cur.accept("RENAME", "COLUMN"):
        path = cur.dotted("a column name")
        cur.expect("TO")
        statement = AlterTable(head.name, rename_column=(path, cur.identifier("new column name")))
    elif cur.accept("ADD", "COLUMNS") or cur.accept("ADD", "COLUMN"):
        statement = AlterTable(head.name, add=tuple(_list(cur, _new_column)))
    elif cur.accept("DROP", "COLUMNS") or cur.accept("DROP", "COLUMN"):
        if_exists = cur.accept("IF", "EXISTS")
        paths = _list(cur, lambda c: c.dotted("a column name"))
        statement = AlterTable(head.name, drop=tuple(paths), drop_if_exists=if_exists)
    elif cur.peek("DROP", "PARTITION") or cur.peek("DROP", "IF", "EXISTS", "PARTITION"):
        cur.expect("DROP")
        if_exists = cur.accept("IF", "EXISTS")
        specs = [_partition_spec(cur)]
        while cur.accept_type(TokenType.COMMA):
            specs.append(_partition_spec(cur))
        cur.accept("PURGE")
        statement = AlterTable(head.name, partitions=tuple(specs), partitions_if_exists=if_exists)
    elif cur.peek("ADD", "PARTITION") or cur.peek("ADD", "IF", "NOT", "EXISTS", "PARTITION"):
        cur.expect("ADD")
        if_not_exists = cur.accept("IF", "NOT", "EXISTS")
        specs = []
        while cur.peek("PARTITION"):
            specs.append(_partition_spec(cur))
            if cur.accept("LOCATION"):
                cur.string("a partition location")
        statement = AlterTable(
            head.name, add_partitions=tuple(specs), partitions_if_exists=if_not_exists
        )
    elif cur.accept("ALTER") or cur.accept("CHANGE"):
        cur.accept("COLUMN")
        changes = [_column_change(cur)]
        while cur.accept_type(TokenType.COMMA):
            changes.append(_column_change(cur))
        statement = AlterTable(head.name, alter=tuple(changes))
    else:
        words = []
        for token in cur.tokens[cur.i : cur.i + 3]:
            if token.token_type in (TokenType.STRING, TokenType.IDENTIFIER):
                break
            if not token.text.isidentifier():
                break
            words.append(token.text.upper())
        form = " ".join(words) or "this form"
        hint = ""
        if len(words) > 1 and words[1] == "BRANCH":  # Paimon-Spark has no branch DDL
            hint = ": use CALL sys.create_branch / sys.delete_branch"
        raise SqlError(
            f"ALTER TABLE ... {form} is not supported on Paimon table "
            f"{shown or '.'.join(head.name)}{hint}"
        )
    if not cur.at_end():
        raise cur.error("unexpected text")
    return statement


def _list(cur: _Cursor, item: Callable[[_Cursor], T]) -> list[T]:
    """Items separated by commas, in parentheses or not (Spark accepts both)."""
    parenthesised = cur.accept_type(TokenType.L_PAREN)
    items = [item(cur)]
    while cur.accept_type(TokenType.COMMA):
        items.append(item(cur))
    if parenthesised:
        cur.expect_type(TokenType.R_PAREN, "')'")
    return items


def _property_list(cur: _Cursor, *, values: bool) -> dict[str, str]:
    cur.expect_type(TokenType.L_PAREN, "'('")
    out: dict[str, str] = {}
    while True:
        key = cur.property_key()
        if values:
            cur.accept_type(TokenType.EQ)
            out[key] = cur.value()
        else:
            out[key] = ""
        if not cur.accept_type(TokenType.COMMA):
            break
    cur.expect_type(TokenType.R_PAREN, "')'")
    return out


def _new_column(cur: _Cursor) -> NewColumn:
    """``name type`` then NOT NULL, COMMENT and FIRST / AFTER in any order, as Spark reads
    them (``colDefinitionDescriptorWithPosition``)."""
    path = cur.dotted("a column name")
    type_text = cur.span(_COLUMN_ENDS)
    not_null, comment, first, after = False, None, False, None
    while True:
        if cur.accept("NOT", "NULL"):
            not_null = True
        elif cur.accept("COMMENT"):
            comment = cur.string("a comment")
        elif cur.accept("FIRST"):
            first = True
        elif cur.accept("AFTER"):
            after = cur.identifier("a column name")
        elif cur.peek("DEFAULT"):
            raise SqlError(f"ADD COLUMN {'.'.join(path)} DEFAULT is not supported on Paimon tables")
        else:
            return NewColumn(path, type_text, not_null, comment, first, after)


def _column_change(cur: _Cursor) -> ColumnChange:
    path = cur.dotted("a column name")
    if cur.accept("TYPE"):
        return ColumnChange(path, type_text=cur.span(_COLUMN_ENDS))
    if cur.accept("COMMENT"):
        return ColumnChange(path, comment=cur.string("a comment"), set_comment=True)
    if cur.accept("FIRST"):
        return ColumnChange(path, first=True)
    if cur.accept("AFTER"):
        return ColumnChange(path, after=cur.identifier("a column name"))
    if cur.accept("SET", "NOT", "NULL"):
        return ColumnChange(path, nullable=False)
    if cur.accept("DROP", "NOT", "NULL"):
        return ColumnChange(path, nullable=True)
    if cur.accept("SET", "DEFAULT"):
        return ColumnChange(path, default=_default_expression(cur, path))
    if cur.accept("DROP", "DEFAULT"):
        return ColumnChange(path, drop_default=True)
    # Hive's CHANGE COLUMN a a TYPE: the same name again, then the type.
    renamed = cur.identifier("TYPE, COMMENT, FIRST, AFTER, SET or DROP NOT NULL")
    if renamed != path[-1]:
        raise SqlError(
            f"Renaming column {'.'.join(path)} with CHANGE COLUMN is not supported: "
            "use RENAME COLUMN"
        )
    type_text = cur.span(_COLUMN_ENDS)
    comment = cur.string("a comment") if cur.accept("COMMENT") else None
    first = cur.accept("FIRST")
    after = cur.identifier("a column name") if not first and cur.accept("AFTER") else None
    return ColumnChange(path, type_text, comment, comment is not None, None, first, after)


def _default_expression(cur: _Cursor, path: tuple[str, ...]) -> str:
    """The expression after ``SET DEFAULT`` as Spark SQL, written the way ``CREATE TABLE``
    stores a column's DEFAULT (``sql_ext.tables``)."""
    if cur.at_end() or cur.peek_type(TokenType.COMMA):
        raise cur.error("expected a default value")
    text = cur.span(())
    try:
        parsed = sqlglot.parse_one(text, dialect=PaimonSpark)
    except (ParseError, TokenError) as e:
        raise SqlParseError(
            f"ALTER COLUMN {'.'.join(path)} SET DEFAULT: cannot parse {text!r} "
            f"({' '.join(str(e).split())})"
        ) from None
    return parsed.sql(dialect="spark")


def _partition_spec(cur: _Cursor) -> dict[str, exp.Expr]:
    cur.expect("PARTITION")
    cur.expect_type(TokenType.L_PAREN, "'('")
    spec: dict[str, exp.Expr] = {}
    while True:
        key = cur.identifier("a partition column")
        cur.expect_type(TokenType.EQ, "'='")
        negative = cur.accept_type(TokenType.DASH)
        if cur.peek_type(TokenType.STRING) and not negative:
            spec[key] = exp.Literal.string(cur.string("a value"))
        elif cur.peek_type(TokenType.NUMBER):
            cur.i += 1
            number = exp.Literal.number(cur.tokens[cur.i - 1].text)
            spec[key] = exp.Neg(this=number) if negative else number
        elif not negative and cur.accept("NULL"):
            spec[key] = exp.Null()
        elif not negative and (cur.accept("TRUE") or cur.accept("FALSE")):
            spec[key] = exp.Boolean(this=cur.tokens[cur.i - 1].text.upper() == "TRUE")
        else:
            raise cur.error("expected a partition value (a literal)")
        if not cur.accept_type(TokenType.COMMA):
            break
    cur.expect_type(TokenType.R_PAREN, "')'")
    return spec

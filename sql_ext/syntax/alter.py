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

from sql_ext.errors import SqlError, SqlParseError
from sql_ext.syntax.dialect import PaimonSpark
from sql_ext.syntax.tokens import Cursor, tokenize

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
    """``ALTER TABLE|DATABASE <name>``: the ALTER family's statement; its actions (after
    token ``position``) are read by ``parse_actions`` once the name is known to be Paimon's."""

    kind: str
    name: tuple[str, ...]
    text: str
    tokens: Sequence[Token] = field(repr=False, compare=False)
    position: int = 0

    @property
    def cursor(self) -> Cursor:
        """A cursor just after the name."""
        return Cursor(self.tokens, self.text, "ALTER", self.position)


def is_alter(text: str, tokens: Sequence[Token] | None = None) -> bool:
    """Whether ``text`` (of ``tokens``) is ALTER TABLE or ALTER DATABASE|SCHEMA|NAMESPACE (tag
    DDL aside), decided on its first tokens (comments before it are fine)."""
    if tokens is None:
        if "alter" not in text.lower():
            return False
        try:
            tokens = tokenize(text)
        except SqlParseError:
            return False
    cur = Cursor(tokens, text, "ALTER")
    return any(cur.peek("ALTER", kind) for kind in ("TABLE", *_DATABASE_KINDS))


def parse_head(text: str, tokens: Sequence[Token] | None = None) -> AlterHead:
    """The statement's kind and the name it alters; the actions are read by ``alter_table``."""
    cur = Cursor(tokenize(text) if tokens is None else tokens, text, "ALTER")
    cur.expect("ALTER")
    kind = next((k for k in ("TABLE", *_DATABASE_KINDS) if cur.accept(k)), None)
    if kind is None:
        raise cur.error("expected TABLE or DATABASE")
    name = cur.dotted("a table name" if kind == "TABLE" else "a database name")
    return AlterHead("TABLE" if kind == "TABLE" else "DATABASE", name, text, cur.tokens, cur.i)


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


def _value(cur: Cursor) -> str:
    """A property value: a string, number, boolean or bare word."""
    if cur.at_end():
        raise cur.error("expected a property value")
    token = cur.tokens[cur.i]
    negative = token.token_type == TokenType.DASH
    if negative:
        cur.i += 1
        if not cur.peek_type(TokenType.NUMBER):
            raise cur.error("expected a number")
        token = cur.tokens[cur.i]
    if token.token_type in (TokenType.TRUE, TokenType.FALSE):
        cur.i += 1
        return token.text.lower()
    if token.token_type in (TokenType.STRING, TokenType.NUMBER, *_NAME_TOKENS):
        cur.i += 1
        return "-" + token.text if negative else token.text
    raise cur.error("expected a property value")


def _property_key(cur: Cursor) -> str:
    if cur.peek_type(TokenType.STRING):
        return cur.string("a property key")
    return ".".join(cur.dotted("a property key"))


def _span(cur: Cursor, stops: Sequence[str]) -> str:
    """The text of the tokens up to a top-level `,`, `)`, end or one of ``stops``."""
    start, depth = cur.i, 0
    while not cur.at_end():
        token = cur.tokens[cur.i]
        kind = token.token_type
        if depth == 0 and (
            kind in (TokenType.COMMA, TokenType.R_PAREN)
            or (
                kind not in (TokenType.STRING, TokenType.IDENTIFIER) and token.text.upper() in stops
            )
        ):
            break
        if kind in (TokenType.L_PAREN, TokenType.LT):
            depth += 1
        elif kind in (TokenType.R_PAREN, TokenType.GT):
            depth -= 1
        cur.i += 1
    if cur.i == start:
        raise cur.error("expected a column type")
    first, last = cur.tokens[start], cur.tokens[cur.i - 1]
    return cur.text[first.start : last.end + 1]


def _list(cur: Cursor, item: Callable[[Cursor], T]) -> list[T]:
    """Items separated by commas, in parentheses or not (Spark accepts both)."""
    parenthesised = cur.accept_type(TokenType.L_PAREN)
    items = [item(cur)]
    while cur.accept_type(TokenType.COMMA):
        items.append(item(cur))
    if parenthesised:
        cur.expect_type(TokenType.R_PAREN, "')'")
    return items


def _property_list(cur: Cursor, *, values: bool) -> dict[str, str]:
    cur.expect_type(TokenType.L_PAREN, "'('")
    out: dict[str, str] = {}
    while True:
        key = _property_key(cur)
        if values:
            cur.accept_type(TokenType.EQ)
            out[key] = _value(cur)
        else:
            out[key] = ""
        if not cur.accept_type(TokenType.COMMA):
            break
    cur.expect_type(TokenType.R_PAREN, "')'")
    return out


def _new_column(cur: Cursor) -> NewColumn:
    """``name type`` then NOT NULL, COMMENT and FIRST / AFTER in any order, as Spark reads
    them (``colDefinitionDescriptorWithPosition``)."""
    path = cur.dotted("a column name")
    type_text = _span(cur, _COLUMN_ENDS)
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


def _column_change(cur: Cursor) -> ColumnChange:
    path = cur.dotted("a column name")
    if cur.accept("TYPE"):
        return ColumnChange(path, type_text=_span(cur, _COLUMN_ENDS))
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
    type_text = _span(cur, _COLUMN_ENDS)
    comment = cur.string("a comment") if cur.accept("COMMENT") else None
    first = cur.accept("FIRST")
    after = cur.identifier("a column name") if not first and cur.accept("AFTER") else None
    return ColumnChange(path, type_text, comment, comment is not None, None, first, after)


def _default_expression(cur: Cursor, path: tuple[str, ...]) -> str:
    """The expression after ``SET DEFAULT`` as Spark SQL, written the way ``CREATE TABLE``
    stores a column's DEFAULT (``sql_ext.tables``)."""
    if cur.at_end() or cur.peek_type(TokenType.COMMA):
        raise cur.error("expected a default value")
    text = _span(cur, ())
    try:
        parsed = sqlglot.parse_one(text, dialect=PaimonSpark)
    except (ParseError, TokenError) as e:
        raise SqlParseError(
            f"ALTER COLUMN {'.'.join(path)} SET DEFAULT: cannot parse {text!r} "
            f"({' '.join(str(e).split())})"
        ) from None
    return parsed.sql(dialect="spark")


def _partition_spec(cur: Cursor) -> dict[str, exp.Expr]:
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

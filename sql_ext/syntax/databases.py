"""CREATE / DROP / DESCRIBE DATABASE, read on the statement's tokens (Spark's grammar).

Every spelling (`DATABASE`, `SCHEMA`, `NAMESPACE`; clauses in any order):
`CREATE DATABASE [IF NOT EXISTS] db [COMMENT 'c'] [LOCATION 'l'] [WITH DBPROPERTIES |
PROPERTIES (k = v, ...)]`, `DROP DATABASE [IF EXISTS] db [RESTRICT | CASCADE]`,
`DESCRIBE DATABASE [EXTENDED] db`. What the Paimon catalog does with them:
`sql_ext.metadata.databases`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlglot.tokens import Token, TokenType

from sql_ext.errors import SqlError, SqlParseError
from sql_ext.syntax.tokens import dotted_name, tokenize

__all__ = ["DatabaseStatement", "parse_database_statement"]

_KINDS = frozenset({"DATABASE", "SCHEMA", "NAMESPACE"})
_ACTIONS = frozenset({"CREATE", "DROP", "DESC", "DESCRIBE"})


@dataclass(frozen=True, slots=True)
class DatabaseStatement:
    """One of the three statements; `name` as written (`db` or `catalog.db`)."""

    action: str  # "create", "drop" or "describe"
    name: tuple[str, ...]
    text: str
    if_exists: bool = False  # IF EXISTS (drop) / IF NOT EXISTS (create)
    cascade: bool = False
    extended: bool = False
    comment: str | None = None
    location: str | None = None
    properties: dict[str, str] = field(default_factory=dict)

    @property
    def shown(self) -> str:
        return f"{self.action.upper()} DATABASE {'.'.join(self.name)}"


def _fail(text: str, tokens: list[Token], position: int) -> SqlError:
    near = tokens[position].text if position < len(tokens) else "the end"
    return SqlError(f"Cannot read {text.split(None, 2)[0].upper()} DATABASE at '{near}': {text}")


def _value(token: Token) -> str | None:
    if token.token_type in (TokenType.STRING, TokenType.NUMBER, TokenType.VAR):
        return token.text
    if token.token_type in (TokenType.TRUE, TokenType.FALSE):
        return token.text.lower()
    return None


def _properties(tokens: list[Token], position: int, text: str) -> tuple[dict[str, str], int]:
    """`(k = v, ...)` from `position` (the parenthesis), and the position after it."""
    if position >= len(tokens) or tokens[position].token_type != TokenType.L_PAREN:
        raise _fail(text, tokens, position)
    position += 1
    properties: dict[str, str] = {}
    while position < len(tokens):
        if tokens[position].token_type == TokenType.STRING:
            key, position = tokens[position].text, position + 1
        else:
            parts, position = dotted_name(tokens, position)
            key = ".".join(parts)
        if not key or position + 1 >= len(tokens) or tokens[position].token_type != TokenType.EQ:
            raise _fail(text, tokens, position)
        value = _value(tokens[position + 1])
        if value is None:
            raise _fail(text, tokens, position + 1)
        properties[key] = value
        position += 2
        if position < len(tokens) and tokens[position].token_type == TokenType.COMMA:
            position += 1
            continue
        if position < len(tokens) and tokens[position].token_type == TokenType.R_PAREN:
            return properties, position + 1
        break
    raise _fail(text, tokens, position)


def parse_database_statement(
    text: str, tokens: Sequence[Token] | None = None
) -> DatabaseStatement | None:
    """The statement when `text` (of `tokens`, when read already) is CREATE / DROP /
    DESCRIBE DATABASE; None otherwise.

    Raises:
        SqlError: it is one of them but does not read (one line, naming the statement).
    """
    if tokens is None:
        try:
            tokens = tokenize(text)
        except SqlParseError:
            return None
    words = [t.text.upper() for t in tokens]
    if len(words) < 3 or words[1] not in _KINDS or words[0] not in _ACTIONS:
        return None
    if any(t.token_type in (TokenType.STRING, TokenType.IDENTIFIER) for t in tokens[:2]):
        return None
    action = {"DESC": "describe", "DESCRIBE": "describe"}.get(words[0], words[0].lower())
    position = 2
    if_exists = extended = False
    expected = {"create": ["IF", "NOT", "EXISTS"], "drop": ["IF", "EXISTS"]}.get(action, [])
    if expected and words[position : position + len(expected)] == expected:
        if_exists, position = True, position + len(expected)
    if action == "describe" and words[position] == "EXTENDED":
        extended, position = True, position + 1
    name, position = dotted_name(tokens, position)
    if not name:
        raise _fail(text, tokens, position)
    statement = DatabaseStatement(action, name, text, if_exists, extended=extended)
    if action == "describe":
        if position != len(tokens):
            raise _fail(text, tokens, position)
        return statement
    if action == "drop":
        cascade = position < len(tokens) and words[position] == "CASCADE"
        if position < len(tokens) and words[position] in ("CASCADE", "RESTRICT"):
            position += 1
        if position != len(tokens):
            raise _fail(text, tokens, position)
        return DatabaseStatement(action, name, text, if_exists, cascade=cascade)
    comment = location = None
    properties: dict[str, str] = {}
    while position < len(tokens):
        word = words[position]
        following = tokens[position + 1] if position + 1 < len(tokens) else None
        if word in ("COMMENT", "LOCATION") and following is not None:
            if following.token_type != TokenType.STRING:
                raise _fail(text, tokens, position + 1)
            if word == "COMMENT":
                comment = following.text
            else:
                location = following.text
            position += 2
        elif word == "WITH" and words[position + 1 : position + 2] in (
            ["DBPROPERTIES"],
            ["PROPERTIES"],
        ):
            found, position = _properties(tokens, position + 2, text)
            properties.update(found)
        else:
            raise _fail(text, tokens, position)
    return DatabaseStatement(
        action,
        name,
        text,
        if_exists,
        comment=comment,
        location=location,
        properties=properties,
    )

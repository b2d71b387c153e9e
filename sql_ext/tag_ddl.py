"""Paimon Spark's tag DDL: ``ALTER TABLE t CREATE|REPLACE|DELETE|RENAME TAG`` and ``SHOW TAGS t``.

Paimon adds these to Spark's grammar (``createReplaceTagClause`` and friends); neither Spark
nor sqlglot parses them, so they are recognised on sqlglot's token stream and run through the
same core functions as the ``CALL sys.*_tag`` procedures. Tag names are identifiers, back-quoted
when they hold ``-``; the stored name is the unquoted text. ``RETAIN n DAYS|HOURS|MINUTES`` is
stored like ``time_retained``. ``REPLACE TAG`` on a missing tag creates it, as in Paimon.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Literal

from sqlglot.tokens import Token, TokenType

from paimon_core.lifecycle import tag_management
from procedures.base import CallContext, Column, ProcedureResult
from sql_ext.dialect import PaimonSpark
from sql_ext.parse import SqlParseError

TagAction = Literal["create", "replace", "delete", "rename", "show"]

SHOW_TAGS_OUTPUT = (Column("tag", "STRING", nullable=False),)
_RETAIN_UNITS = {"DAYS": "d", "HOURS": "h", "MINUTES": "min"}


@dataclass(frozen=True, slots=True)
class TagStatement:
    """One tag DDL statement; ``table`` is the dotted name as written (quotes removed)."""

    action: TagAction
    table: str
    tag: str | None = None
    target: str | None = None
    snapshot: int | None = None
    time_retained: str | None = None
    if_not_exists: bool = False


class _Tokens:
    """A cursor over the statement's tokens with keyword matching and clear failures."""

    def __init__(self, text: str) -> None:
        self.tokens: list[Token] = PaimonSpark().tokenize(text)
        self.i = 0

    def peek(self, *words: str) -> bool:
        window = self.tokens[self.i : self.i + len(words)]
        return len(window) == len(words) and all(
            t.text.upper() == w and t.token_type != TokenType.STRING for t, w in zip(window, words)
        )

    def accept(self, *words: str) -> bool:
        if self.peek(*words):
            self.i += len(words)
            return True
        return False

    def expect(self, *words: str) -> None:
        if not self.accept(*words):
            raise self.error(f"expected {' '.join(words)}")

    def error(self, message: str) -> SqlParseError:
        if self.i < len(self.tokens):
            token = self.tokens[self.i]
            return SqlParseError(f"Tag DDL: {message} near '{token.text}'", token.line, token.col)
        return SqlParseError(f"Tag DDL: {message} at the end of the statement")

    def identifier(self, what: str) -> str:
        if self.i < len(self.tokens):
            token = self.tokens[self.i]
            if token.token_type == TokenType.STRING:
                raise self.error(f"{what} must be an identifier (use back-quotes, not quotes)")
            if (
                token.token_type in (TokenType.VAR, TokenType.IDENTIFIER)
                or token.text.isidentifier()
            ):
                self.i += 1
                return token.text
        raise self.error(f"expected {what}")

    def dotted(self, what: str) -> str:
        parts = [self.identifier(what)]
        while self.i < len(self.tokens) and self.tokens[self.i].token_type == TokenType.DOT:
            self.i += 1
            parts.append(self.identifier(what))
        return ".".join(f"`{p}`" if "." in p else p for p in parts)

    def integer(self, what: str) -> int:
        if self.i < len(self.tokens) and self.tokens[self.i].token_type == TokenType.NUMBER:
            text = self.tokens[self.i].text
            if text.isdigit():
                self.i += 1
                return int(text)
        raise self.error(f"expected {what} (a whole number)")

    def end(self) -> None:
        while self.i < len(self.tokens) and self.tokens[self.i].token_type == TokenType.SEMICOLON:
            self.i += 1
        if self.i < len(self.tokens):
            raise self.error("unexpected text")


def is_tag_ddl(text: str) -> bool:
    """Whether ``text`` is one of Paimon's tag statements (decided on its first tokens)."""
    head = [w.upper() for w in text.split(None, 2)[:2]]
    if head == ["SHOW", "TAGS"]:
        return True
    if head != ["ALTER", "TABLE"]:
        return False
    try:
        cur = _Tokens(text)
        cur.expect("ALTER", "TABLE")
        cur.dotted("table name")
    except Exception:
        return False
    return any(
        cur.peek(*words)
        for words in (
            ("CREATE", "TAG"),
            ("CREATE", "OR", "REPLACE", "TAG"),
            ("REPLACE", "TAG"),
            ("DELETE", "TAG"),
            ("RENAME", "TAG"),
        )
    )


def parse_tag_ddl(text: str) -> TagStatement:
    """Parse one tag statement; raise ``SqlParseError`` naming what is wrong."""
    head = text.split(None, 2)
    if [w.upper() for w in head[:2]] == ["SHOW", "TAGS"]:
        cur = _Tokens(head[2] if len(head) > 2 else "")
        table = cur.dotted("table name")
        cur.end()
        return TagStatement("show", table)
    cur = _Tokens(text)
    cur.expect("ALTER", "TABLE")
    table = cur.dotted("table name")
    if cur.accept("RENAME", "TAG"):
        tag = cur.identifier("tag name")
        cur.expect("TO")
        target = cur.identifier("new tag name")
        cur.end()
        return TagStatement("rename", table, tag=tag, target=target)
    if cur.accept("DELETE", "TAG"):
        cur.accept("IF", "EXISTS")
        tag = cur.identifier("tag name")
        cur.end()
        return TagStatement("delete", table, tag=tag)
    action: TagAction
    if cur.accept("CREATE", "OR", "REPLACE", "TAG") or cur.accept("REPLACE", "TAG"):
        action = "replace"
    elif cur.accept("CREATE", "TAG"):
        action = "create"
    else:
        raise cur.error("expected CREATE, REPLACE, DELETE or RENAME TAG")
    if_not_exists = action == "create" and cur.accept("IF", "NOT", "EXISTS")
    tag = cur.identifier("tag name")
    snapshot = cur.integer("snapshot id") if cur.accept("AS", "OF", "VERSION") else None
    retained = None
    if cur.accept("RETAIN"):
        amount = cur.integer("retention")
        unit = next((u for u in _RETAIN_UNITS if cur.accept(u)), None)
        if unit is None:
            raise cur.error("expected DAYS, HOURS or MINUTES")
        retained = f"{amount} {_RETAIN_UNITS[unit]}"
    cur.end()
    return TagStatement(
        action,
        table,
        tag=tag,
        snapshot=snapshot,
        time_retained=retained,
        if_not_exists=if_not_exists,
    )


def run_tag_statement(
    statement: TagStatement,
    *,
    context: CallContext,
    now: dt.datetime | None = None,
) -> ProcedureResult:
    """Apply ``statement``; ALTER forms return no rows, SHOW TAGS the sorted names."""
    table = context.table(statement.table)
    if statement.action == "show":
        return ProcedureResult(
            SHOW_TAGS_OUTPUT, [(n,) for n in sorted(table.tag_manager.tag_names())]
        )
    assert statement.tag is not None
    if statement.action == "delete":
        tag_management.delete_tags(table, statement.tag)
    elif statement.action == "rename":
        assert statement.target is not None
        tag_management.rename_tag(table, statement.tag, statement.target)
    elif statement.action == "replace" and table.tag_manager.tag_exists(statement.tag):
        tag_management.replace_tag(
            table, statement.tag, statement.snapshot, statement.time_retained, now=now
        )
    else:
        tag_management.create_tag(
            table,
            statement.tag,
            snapshot_id=statement.snapshot,
            time_retained=statement.time_retained,
            ignore_if_exists=statement.if_not_exists,
            default_retention=False,
            now=now,
        )
    return ProcedureResult((), [])

"""Paimon Spark's tag DDL: ``ALTER TABLE t CREATE|REPLACE|DELETE|RENAME TAG`` and ``SHOW TAGS t``.

Paimon adds these to Spark's grammar (``createReplaceTagClause`` and friends); neither Spark
nor sqlglot parses them, so they are read here on the statement's tokens. Tag names are
identifiers, back-quoted when they hold ``-``; the stored name is the unquoted text.
``RETAIN n DAYS|HOURS|MINUTES`` is stored like ``time_retained``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from sqlglot.tokens import Token

from sql_ext.syntax.tokens import Cursor, tokenize

__all__ = ["TagAction", "TagStatement", "is_tag_ddl", "parse_tag_ddl"]

TagAction = Literal["create", "replace", "delete", "rename", "show"]

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
    text: str = field(default="", compare=False)


_TAG_ACTIONS = (
    ("CREATE", "TAG"),
    ("CREATE", "OR", "REPLACE", "TAG"),
    ("REPLACE", "TAG"),
    ("DELETE", "TAG"),
    ("RENAME", "TAG"),
)


def _table(cur: Cursor) -> str:
    return ".".join(f"`{p}`" if "." in p else p for p in cur.dotted("table name"))


def is_tag_ddl(text: str, tokens: Sequence[Token] | None = None) -> bool:
    """Whether ``text`` (of ``tokens``) is one of Paimon's tag statements, decided on its
    first tokens."""
    if tokens is None:
        try:
            tokens = tokenize(text)
        except Exception:
            return False
    cur = Cursor(tokens, text, "Tag DDL")
    if cur.peek("SHOW", "TAGS"):
        return True
    if not cur.accept("ALTER", "TABLE"):
        return False
    try:
        _table(cur)
    except Exception:
        return False
    return any(cur.peek(*words) for words in _TAG_ACTIONS)


def parse_tag_ddl(text: str, tokens: Sequence[Token] | None = None) -> TagStatement:
    """Parse one tag statement (``tokens``: its tokens, when read already); raise
    ``SqlParseError`` naming what is wrong."""
    cur = Cursor(tokenize(text) if tokens is None else tokens, text, "Tag DDL")
    if cur.accept("SHOW", "TAGS"):
        table = _table(cur)
        cur.end()
        return TagStatement("show", table, text=text)
    cur.expect("ALTER", "TABLE")
    table = _table(cur)
    if cur.accept("RENAME", "TAG"):
        tag = cur.identifier("tag name")
        cur.expect("TO")
        target = cur.identifier("new tag name")
        cur.end()
        return TagStatement("rename", table, tag=tag, target=target, text=text)
    if cur.accept("DELETE", "TAG"):
        cur.accept("IF", "EXISTS")
        tag = cur.identifier("tag name")
        cur.end()
        return TagStatement("delete", table, tag=tag, text=text)
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
        text=text,
    )

"""Which SQL operation a statement's snapshots record (Paimon 2.0's ``Snapshot.operation``),
read from the statement's leading keywords, as Paimon-Spark sets it for each write plan:
``INSERT INTO`` WRITE, ``INSERT OVERWRITE`` OVERWRITE, ``UPDATE``, ``DELETE``, ``MERGE``,
``TRUNCATE TABLE`` and ``ALTER TABLE ... DROP PARTITION`` TRUNCATE, ``CREATE TABLE ... AS``
CREATE_TABLE_AS_SELECT, ``REPLACE TABLE ... AS`` REPLACE_TABLE_AS_SELECT, ``CREATE OR REPLACE
TABLE ... AS`` CREATE_OR_REPLACE_TABLE_AS_SELECT; anything else (CALL, ANALYZE, DDL) none."""

from __future__ import annotations

import itertools
import re

__all__ = ["snapshot_operation"]

_COMMENTS = re.compile(r"\A(?:\s+|--[^\n]*(?:\n|\Z)|/\*.*?\*/)*", re.S)
_WORD = re.compile(r"[A-Za-z_]+")
_AS_QUERY = re.compile(r"\)\s*AS\b|\bAS\s*\(?\s*(?:SELECT|WITH|VALUES|FROM|TABLE)\b", re.I)


def snapshot_operation(statement: str) -> str | None:
    """The ``Snapshot.operation`` of the snapshots ``statement`` commits, or None."""
    text = statement[_COMMENTS.match(statement).end() :]  # type: ignore[union-attr]
    words = [w.upper() for w in _WORD.findall(text[:400])]
    if not words:
        return None
    first = words[0]
    if first == "INSERT":
        return "OVERWRITE" if "OVERWRITE" in words[:2] else "WRITE"
    if first in ("UPDATE", "DELETE", "MERGE"):
        return first
    if first == "TRUNCATE":
        return "TRUNCATE"
    if first == "ALTER" and _drops_partition(words):
        return "TRUNCATE"
    if first in ("CREATE", "REPLACE") and _AS_QUERY.search(text):
        if first == "REPLACE":
            return "REPLACE_TABLE_AS_SELECT"
        if words[1:3] == ["OR", "REPLACE"]:
            return "CREATE_OR_REPLACE_TABLE_AS_SELECT"
        return "CREATE_TABLE_AS_SELECT"
    return None


def _drops_partition(words: list[str]) -> bool:
    return any(a == "DROP" and b == "PARTITION" for a, b in itertools.pairwise(words))

"""Which type changes ``ALTER COLUMN ... TYPE`` allows: Paimon's ``DataTypeCasts``.

A column's type may change when every value of the old type can be cast to the new one:
implicitly (widening, e.g. INT -> BIGINT, any number -> DOUBLE) always, explicitly (e.g.
BIGINT -> INT, STRING -> INT, any predefined type -> STRING) unless the table sets
``disable-explicit-type-casting``. Old data files keep their type; readers cast on the fly.
The rules are Paimon's latest (``DataTypeCasts`` of 1.3/master), keyed by type root.
"""

from __future__ import annotations

from paimon_core.format.types import DataType

_CHARACTER_STRING = frozenset({"CHAR", "VARCHAR"})
_BINARY_STRING = frozenset({"BINARY", "VARBINARY"})
_INTEGER_NUMERIC = frozenset({"TINYINT", "SMALLINT", "INT", "BIGINT"})
_NUMERIC = _INTEGER_NUMERIC | {"DECIMAL", "FLOAT", "DOUBLE"}
_TIMESTAMP = frozenset({"TIMESTAMP", "TIMESTAMP_LTZ"})
_TIME = frozenset({"TIME"})
_DATETIME = frozenset({"DATE"}) | _TIME | _TIMESTAMP
# Not VARIANT, though Java's family lists it: Java has no cast of VARIANT values (no
# ``CastExecutors`` rule), so a VARIANT column changed to STRING reads in neither Java nor here.
_PREDEFINED = _CHARACTER_STRING | _BINARY_STRING | _NUMERIC | _DATETIME | {"BOOLEAN", "BLOB"}
_CONSTRUCTED = frozenset({"ARRAY", "MULTISET", "MAP", "ROW", "VECTOR"})
_TIMESTAMPS_AND_BOOLEAN = frozenset({"BOOLEAN"}) | _TIMESTAMP


def _rule(implicit: frozenset[str] | set[str], explicit: frozenset[str] | set[str]) -> tuple:
    return frozenset(implicit), frozenset(explicit)


# target root -> (implicit sources, explicit sources); each implicit set holds its own root.
# Nested types have no rule: they change through their element or field paths.
_RULES: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "CHAR": _rule({"CHAR"}, _PREDEFINED | _CONSTRUCTED),
    "VARCHAR": _rule(_CHARACTER_STRING, _PREDEFINED | _CONSTRUCTED),
    "BOOLEAN": _rule({"BOOLEAN"}, _CHARACTER_STRING | _INTEGER_NUMERIC),
    "BINARY": _rule({"BINARY"}, _CHARACTER_STRING | {"VARBINARY"}),
    "VARBINARY": _rule(_BINARY_STRING, _CHARACTER_STRING | {"BINARY"}),
    "DECIMAL": _rule(_NUMERIC, _CHARACTER_STRING | _TIMESTAMPS_AND_BOOLEAN),
    "TINYINT": _rule({"TINYINT"}, _NUMERIC | _CHARACTER_STRING | _TIMESTAMPS_AND_BOOLEAN),
    "SMALLINT": _rule(
        {"TINYINT", "SMALLINT"}, _NUMERIC | _CHARACTER_STRING | _TIMESTAMPS_AND_BOOLEAN
    ),
    "INT": _rule(
        {"TINYINT", "SMALLINT", "INT"}, _NUMERIC | _CHARACTER_STRING | _TIMESTAMPS_AND_BOOLEAN
    ),
    "BIGINT": _rule(_INTEGER_NUMERIC, _NUMERIC | _CHARACTER_STRING | _TIMESTAMPS_AND_BOOLEAN),
    "FLOAT": _rule(
        _INTEGER_NUMERIC | {"FLOAT", "DECIMAL"},
        _NUMERIC | _CHARACTER_STRING | _TIMESTAMPS_AND_BOOLEAN,
    ),
    "DOUBLE": _rule(_NUMERIC, _CHARACTER_STRING | _TIMESTAMPS_AND_BOOLEAN),
    "DATE": _rule({"DATE", "TIMESTAMP"}, _TIMESTAMP | _CHARACTER_STRING),
    "TIME": _rule({"TIME", "TIMESTAMP"}, _TIME | _TIMESTAMP | _CHARACTER_STRING),
    "TIMESTAMP": _rule(_TIMESTAMP, _DATETIME | _CHARACTER_STRING | _NUMERIC),
    "TIMESTAMP_LTZ": _rule(_TIMESTAMP, _DATETIME | _CHARACTER_STRING | _NUMERIC),
}


def supports_cast(source: DataType, target: DataType, allow_explicit: bool) -> bool:
    """Paimon's ``DataTypeCasts.supportsCast``: nullability is ignored, except that a
    nullable type cannot become NOT NULL without an explicit cast."""
    if source.nullable and not target.nullable and not allow_explicit:
        return False
    if source.copy(True) == target.copy(True):
        return True
    implicit, explicit = _RULES.get(target.root, (frozenset(), frozenset()))
    if source.root in implicit:
        return True
    return allow_explicit and source.root in explicit

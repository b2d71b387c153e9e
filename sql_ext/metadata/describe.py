"""`DESCRIBE [TABLE] t` and `DESCRIBE t$snapshots` without Spark: Spark's three columns.

The Spark path describes the temporary view holding the table, so the rows are each column's
name, Spark type (`catalogString`) and comment, and nothing else (no partition section).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from procedures.base import Column, ProcedureResult

if TYPE_CHECKING:
    from paimon_core.types import DataField, DataType

__all__ = ["DESCRIBE_COLUMNS", "describe_rows", "spark_type_name"]

DESCRIBE_COLUMNS = (
    Column("col_name", "STRING"),
    Column("data_type", "STRING"),
    Column("comment", "STRING"),
)
_SIMPLE = {
    "BOOLEAN": "boolean",
    "TINYINT": "tinyint",
    "SMALLINT": "smallint",
    "INT": "int",
    "BIGINT": "bigint",
    "FLOAT": "float",
    "DOUBLE": "double",
    "CHAR": "string",
    "VARCHAR": "string",
    "BINARY": "binary",
    "VARBINARY": "binary",
    "BLOB": "binary",
    "DATE": "date",
    "TIME": "int",
    "TIMESTAMP": "timestamp_ntz",
    "TIMESTAMP_LTZ": "timestamp",
}


def spark_type_name(t: DataType) -> str | None:
    """Spark's name of the type a Paimon column reads as (`sql_ext.spark_types`); None for
    the types whose name this does not reproduce (rows, variants)."""
    simple = _SIMPLE.get(t.root)
    if simple is not None:
        return simple
    if t.root == "DECIMAL":
        return f"decimal({t.precision or 10},{t.scale or 0})"
    if t.root in ("ARRAY", "VECTOR") and t.element is not None:
        element = spark_type_name(t.element)
        return None if element is None else f"array<{element}>"
    if t.root == "MULTISET" and t.element is not None:
        element = spark_type_name(t.element)
        return None if element is None else f"map<{element},int>"
    if t.root == "MAP" and t.key is not None and t.value is not None:
        key, value = spark_type_name(t.key), spark_type_name(t.value)
        return None if key is None or value is None else f"map<{key},{value}>"
    return None


def describe_rows(fields: tuple[DataField, ...] | list[DataField]) -> ProcedureResult | None:
    """DESCRIBE's rows for a table's fields; None when a type needs Spark to name it."""
    rows = []
    for f in fields:
        name = spark_type_name(f.type)
        if name is None:
            return None
        rows.append((f.name, name, f.description or None))
    return ProcedureResult(DESCRIBE_COLUMNS, rows)


def describe_system_table(columns: tuple[tuple[str, str, bool], ...]) -> ProcedureResult:
    """DESCRIBE's rows for a system table's `(name, Spark type, nullable)` columns."""
    return ProcedureResult(DESCRIBE_COLUMNS, [(n, t.lower(), None) for n, t, _ in columns])

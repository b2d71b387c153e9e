"""`DESCRIBE t$snapshots` without Spark: Spark's three columns for a system table.

The Spark path describes the temporary view holding the system table, so the rows are each
column's name, Spark type (`catalogString`) and no comment. DESCRIBE of a Paimon table is
`sql_ext.metadata.table_info`.
"""

from __future__ import annotations

from procedures.base import Column, ProcedureResult

__all__ = ["DESCRIBE_COLUMNS", "describe_system_table"]

DESCRIBE_COLUMNS = (
    Column("col_name", "STRING"),
    Column("data_type", "STRING"),
    Column("comment", "STRING"),
)


def describe_system_table(columns: tuple[tuple[str, str, bool], ...]) -> ProcedureResult:
    """DESCRIBE's rows for a system table's `(name, Spark type, nullable)` columns."""
    return ProcedureResult(DESCRIBE_COLUMNS, [(n, _catalog_string(t), None) for n, t, _ in columns])


def _catalog_string(kind: str) -> str:
    """Spark's `catalogString` of a declared type: simple names are declared upper-case
    (`TIMESTAMP_NTZ`), nested ones already in catalog form (struct field names keep case)."""
    return kind if any(c.islower() for c in kind) else kind.lower()

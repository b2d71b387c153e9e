"""`DESCRIBE [TABLE] [EXTENDED | FORMATTED] t` of a Paimon table, as Paimon-Spark prints it.

Paimon-Spark answers with Spark's `DescribeTableExec` (latest Spark) over its `SparkTable`,
then Paimon's `PaimonDescribeTableExec` additions:

* the columns (`name`, `simpleString`, comment), then for a partitioned table
  `# Partition Information` / `# col_name data_type comment` and the partition columns;
* with EXTENDED or FORMATTED: `# Metadata Columns` (`__paimon_file_path`, ...),
  `# Detailed Table Information` (Name `db.t`, Type MANAGED/EXTERNAL, the reserved properties
  Comment / Location / Provider, and `Table Properties` `[k=v,...]`, sorted and redacted),
  the scan's `Statistics` (`N bytes, M rows`), and `# Column Not Null`.

`table_properties` is `SparkTable.properties`: the table's options with `path`, its primary
keys as `primary-key`, `provider` paimon, `comment`, `location` (the path) and `external`.
Shared by the Spark session and the in-process engine.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from sqlglot import exp

from procedures.base import Column, ProcedureResult
from sql_ext.errors import SqlError
from sql_ext.metadata.spark_names import quote_if_needed, simple_string

if TYPE_CHECKING:
    from paimon_core.format.types import DataType
    from paimon_core.table import FileStoreTable

__all__ = [
    "RESERVED",
    "describe_statement",
    "describe_table",
    "redacted",
    "table_properties",
    "table_type",
]

DESCRIBE_COLUMNS = (
    Column("col_name", "STRING", False),
    Column("data_type", "STRING", False),
    Column("comment", "STRING"),
)
RESERVED = ("comment", "location", "provider", "owner", "external", "is_managed_location")
"""Spark's `CatalogV2Util.TABLE_RESERVED_PROPERTIES`, in its order."""
_SECRET = re.compile(r"(?i)secret|password|token|access[.]?key")  # spark.redaction.regex
_URL = re.compile(r"(?i)url")  # spark.sql.redaction.options.regex
_REDACTED = "*********(redacted)"
_EMPTY = ("", "", "")
FIXED_SIZES = {
    # bytes per value of fixed-size types, as Paimon and Spark estimate them
    "BOOLEAN": 1,
    "TINYINT": 1,
    "SMALLINT": 2,
    "INT": 4,
    "BIGINT": 8,
    "FLOAT": 4,
    "DOUBLE": 8,
    "DATE": 4,
    "TIME": 4,
    "TIMESTAMP": 8,
    "TIMESTAMP_LTZ": 8,
}


def table_properties(table: FileStoreTable) -> dict[str, str]:
    """`SparkTable.properties` of a Paimon data table."""
    properties = dict(table.schema.options)
    properties.setdefault("path", table.path)
    if table.schema.primary_keys:
        properties["primary-key"] = ",".join(table.schema.primary_keys)
    properties["provider"] = "paimon"
    if table.schema.comment is not None:
        properties["comment"] = table.schema.comment
    properties["location"] = properties["path"]
    if str(properties.get("type", "")).lower() == "external":
        properties["external"] = "true"
    return properties


def table_type(properties: dict[str, str]) -> str:
    return "EXTERNAL" if "external" in properties else "MANAGED"


def redacted(properties: dict[str, str]) -> list[tuple[str, str]]:
    """The non-reserved properties sorted by key, with Spark's `redactOptions` applied."""
    out = []
    for key in sorted(k for k in properties if k not in RESERVED):
        value = properties[key]
        hidden = any(r.search(key) or r.search(value) for r in (_SECRET, _URL))
        out.append((key, _REDACTED if hidden else value))
    return out


def _default_size(t: DataType) -> int:
    """Paimon's `DataType.defaultSize`, which Paimon-Spark's scan statistics use."""
    if t.root in FIXED_SIZES:
        return FIXED_SIZES[t.root]
    if t.root == "DECIMAL":
        return 8 if (t.precision or 10) <= 18 else 16
    if t.root in ("VARCHAR", "VARBINARY"):
        return 20 if t.length in (None, 2147483647) else int(t.length)
    if t.root in ("CHAR", "BINARY"):
        return int(t.length or 1)
    if t.root in ("ARRAY", "VECTOR") and t.element is not None:
        return _default_size(t.element)
    if t.root == "MULTISET" and t.element is not None:
        return _default_size(t.element) + 4
    if t.root == "MAP" and t.key is not None and t.value is not None:
        return _default_size(t.key) + _default_size(t.value)
    if t.root == "ROW" and t.fields is not None:
        return sum(_default_size(f.type) for f in t.fields)
    return 8


def _statistics(table: FileStoreTable) -> str:
    """`PaimonStatistics` of a full scan: the files' row count, times the estimated row size
    (ANALYZE's average lengths where known), at least one byte a row."""
    from paimon_core.format.statistics import read_statistics

    snapshot = table.snapshot_manager.latest_snapshot()
    rows = 0
    if snapshot is not None:
        rows = sum(e.file.row_count for e in table.new_scan().read_entries(snapshot))
    stats = read_statistics(table, snapshot)
    size = 0
    for f in table.schema.fields:
        column = None if stats is None else stats.col_stats.get(f.name)
        if column is not None and column.avg_len is not None:
            size += column.avg_len
        else:
            size += _default_size(f.type)
    return f"{max(rows * size, rows)} bytes, {rows} rows"


def describe_table(table: FileStoreTable, name: str, extended: bool) -> ProcedureResult:
    """DESCRIBE's rows; `name` is the table's full name (`db.t`).

    Raises:
        SqlError: a column type has no Spark spelling here.
    """
    schema = table.schema
    rows: list[tuple[str, str, str | None]] = [
        (f.name, simple_string(f.type), f.description) for f in schema.fields
    ]
    partition_fields = [schema.field(k) for k in schema.partition_keys]
    if partition_fields:
        rows.append(("# Partition Information", "", ""))
        rows.append(("# col_name", "data_type", "comment"))
        rows.extend(
            (quote_if_needed(f.name), simple_string(f.type), f.description)
            for f in partition_fields
        )
    if not extended:
        return ProcedureResult(DESCRIBE_COLUMNS, rows)
    rows.append(_EMPTY)
    rows.append(("# Metadata Columns", "", ""))
    if str(schema.options.get("row-tracking.enabled", "false")).lower() == "true":
        rows.append(("_ROW_ID", "bigint", ""))
        rows.append(("_SEQUENCE_NUMBER", "bigint", ""))
    partition_type = ",".join(f"{f.name}:{simple_string(f.type)}" for f in partition_fields)
    rows.append(("__paimon_file_path", "string", ""))
    rows.append(("__paimon_row_index", "bigint", ""))
    rows.append(("__paimon_partition", f"struct<{partition_type}>", ""))
    rows.append(("__paimon_bucket", "int", ""))
    properties = table_properties(table)
    rows.append(_EMPTY)
    rows.append(("# Detailed Table Information", "", ""))
    rows.append(("Name", name, ""))
    rows.append(("Type", table_type(properties), ""))
    for key in RESERVED:
        if key != "external" and key in properties:
            rows.append((key.capitalize(), properties[key], ""))
    shown = ",".join(f"{k}={v}" for k, v in redacted(properties))
    rows.append(("Table Properties", f"[{shown}]", ""))
    rows.append(("Statistics", _statistics(table), None))
    not_null = [f for f in schema.fields if not f.type.nullable]
    if not_null:
        rows.append(("# Column Not Null", "", ""))
        rows.extend((f.name, simple_string(f.type), "NOT NULL") for f in not_null)
    return ProcedureResult(DESCRIBE_COLUMNS, rows)


def describe_statement(
    tree: exp.Describe, table: FileStoreTable, name: str, text: str
) -> ProcedureResult:
    """DESCRIBE [TABLE] [EXTENDED | FORMATTED] of a Paimon table (`name`: `db.t`).

    Raises:
        SqlError: a PARTITION clause or AS JSON, which this project does not answer.
    """
    if tree.args.get("partition") is not None or tree.args.get("as_json"):
        clause = "PARTITION" if tree.args.get("partition") is not None else "AS JSON"
        raise SqlError(
            f"DESCRIBE ... {clause} is not supported on Paimon table paimon.{name}: {text}"
        )
    style = str(tree.args.get("style") or "").upper()
    return describe_table(table, name, extended=style in ("EXTENDED", "FORMATTED"))

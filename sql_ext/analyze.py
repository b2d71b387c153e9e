"""`ANALYZE TABLE t COMPUTE STATISTICS [FOR ALL COLUMNS | FOR COLUMNS a, b]` on Paimon tables.

As Paimon-Spark's `PaimonAnalyzeTableColumnCommand` (latest release): the rows of the latest
snapshot are aggregated by Spark with the expressions of Spark's `CommandUtils.statExprs`
(HyperLogLog++ distinct count capped by the non-null count, min/max, null count, average and
maximum length), and the result is committed as Paimon `Statistics` in an ANALYZE snapshot.
`NOSCAN` and a `PARTITION` clause are refused as Paimon refuses them. A table without a
snapshot is left as it is (nothing to analyze). TIMESTAMP columns (Spark's TIMESTAMP_NTZ)
get their min/max formatted like Paimon's `TimestampSerializer`.
"""

from __future__ import annotations

import datetime as dt
import decimal
from typing import TYPE_CHECKING, Any

from pyspark.sql import functions as F
from sqlglot import exp

from paimon_core.format.paths import java_float_string
from paimon_core.format.statistics import ColStats, Statistics
from sql_ext.errors import SqlError
from sql_ext.metadata.table_info import FIXED_SIZES
from sql_ext.views import table_dataframe

if TYPE_CHECKING:
    from pyspark.sql import Column, SparkSession

    from paimon_core.format.types import DataField
    from paimon_core.table import FileStoreTable

__all__ = ["AnalyzeSpec", "analyze_spec", "analyze_table"]

_VARIABLE_SIZES = {"CHAR": 20, "VARCHAR": 20, "BINARY": 100, "VARBINARY": 100}
_NDV_MAX_ERROR = 0.05  # spark.sql.statistics.ndv.maxError


class AnalyzeSpec:
    """The table and the columns (None: none, only the row count) an ANALYZE names."""

    def __init__(self, table: exp.Table, columns: list[str] | None, all_columns: bool) -> None:
        self.table = table
        self.columns = columns
        self.all_columns = all_columns


def analyze_spec(tree: exp.Analyze, text: str) -> AnalyzeSpec:
    """What `tree` asks for; a form Paimon does not run is refused naming the statement."""
    tables = tree.args.get("tables") or [tree.this]
    statistics = tree.args.get("expression")
    if (
        len(tables) != 1
        or not isinstance(tables[0], exp.Table)
        or not isinstance(statistics, exp.AnalyzeStatistics)
        or str(statistics.args.get("kind") or "").upper() != "COMPUTE"
        or tree.args.get("partition") is not None
    ):
        raise SqlError(
            f"ANALYZE TABLE: only COMPUTE STATISTICS of a whole table is supported: {text}"
        )
    option = str(statistics.this or "").upper()
    if option == "NOSCAN":
        raise SqlError("ANALYZE TABLE ... NOSCAN is ineffective with paimon")
    if option == "FOR ALL COLUMNS":
        return AnalyzeSpec(tables[0], None, True)
    if option == "FOR COLUMNS":
        names = [c.name for c in statistics.expressions]
        return AnalyzeSpec(tables[0], names, False)
    if option:
        raise SqlError(f"ANALYZE TABLE: unsupported option {option}: {text}")
    return AnalyzeSpec(tables[0], [], False)


def _size(field: DataField) -> int | None:
    root = field.type.root
    if root == "DECIMAL":
        return 8 if (field.type.precision or 10) <= 18 else 16
    return FIXED_SIZES.get(root, _VARIABLE_SIZES.get(root))


def _columns(table: FileStoreTable, spec: AnalyzeSpec, shown: str) -> list[DataField]:
    fields = list(table.schema.fields)
    if spec.all_columns:
        chosen = fields
    else:
        by_name = {f.name.lower(): f for f in fields}
        chosen = []
        for name in spec.columns or []:
            field = by_name.get(name.lower())
            if field is None:
                raise SqlError(f"Column {name} not found in {shown}")
            chosen.append(field)
    for field in chosen:
        if _size(field) is None:
            raise SqlError(
                f"Analyzing on col: {field.name}, data type: {field.type.root} is not "
                f"supported ({shown})"
            )
    return chosen


def _expressions(field: DataField, index: int) -> list[Column]:
    """Spark's `statExprs` for one column, aliased `c<index>_<stat>`."""
    col = F.col(f"`{field.name.replace('`', '``')}`")
    non_null = F.count(col)
    ndv = F.least(F.approx_count_distinct(col, _NDV_MAX_ERROR), non_null)
    nulls = F.count(F.lit(1)) - non_null
    size = F.lit(_size(field)).cast("bigint")
    prefix = f"c{index}_"
    if field.type.root in _VARIABLE_SIZES:
        low = high = F.lit(None)
        avg_len = F.coalesce(F.ceil(F.avg(F.length(col))).cast("bigint"), size)
        max_len = F.coalesce(F.max(F.length(col)).cast("bigint"), size)
    else:
        low, high, avg_len, max_len = F.min(col), F.max(col), size, size
    return [
        ndv.alias(prefix + "ndv"),
        low.alias(prefix + "min"),
        high.alias(prefix + "max"),
        nulls.alias(prefix + "nulls"),
        avg_len.alias(prefix + "avg"),
        max_len.alias(prefix + "maxlen"),
    ]


def _serialize(value: Any, field: DataField) -> str | None:
    """Paimon's `Serializer.serializeToString` of a min or max."""
    if value is None:
        return None
    root = field.type.root
    if root == "BOOLEAN":
        return "true" if value else "false"
    if root in ("FLOAT", "DOUBLE"):
        return java_float_string(float(value), single=root == "FLOAT")
    if root == "DECIMAL":
        assert isinstance(value, decimal.Decimal)
        return str(value)
    if root == "DATE":
        return str((value - dt.date(1970, 1, 1)).days)
    if root in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        precision = field.type.precision if field.type.precision is not None else 6
        text = value.strftime("%Y-%m-%d %H:%M:%S")
        fraction = f"{value.microsecond * 1000:09d}"
        while len(fraction) > precision and fraction.endswith("0"):
            fraction = fraction[:-1]
        return text + ("." + fraction if fraction else "")
    return str(value)


def analyze_table(
    spark: SparkSession, table: FileStoreTable, spec: AnalyzeSpec, shown: str
) -> None:
    """Compute the statistics of `table`'s latest snapshot and commit them (ANALYZE)."""
    fields = _columns(table, spec, shown)
    snapshot = table.snapshot_manager.latest_snapshot()
    if snapshot is None:
        return
    df = table_dataframe(spark, table, snapshot)
    aggregates = [F.count(F.lit(1)).alias("rows")]
    for index, field in enumerate(fields):
        aggregates.extend(_expressions(field, index))
    row = df.agg(*aggregates).collect()[0]
    merged = int(row["rows"])
    total = snapshot.total_record_count
    if merged > total:
        raise SqlError(f"ANALYZE TABLE {shown}: {merged} merged rows exceed {total} records")
    size = sum(e.file.file_size for e in table.new_scan().read_entries(snapshot))
    merged_size = int(size * merged / total) if total else 0
    col_stats = {}
    for index, field in enumerate(fields):
        prefix = f"c{index}_"
        col_stats[field.name] = ColStats(
            field.id,
            int(row[prefix + "ndv"]),
            _serialize(row[prefix + "min"], field),
            _serialize(row[prefix + "max"], field),
            int(row[prefix + "nulls"]),
            int(row[prefix + "avg"]),
            int(row[prefix + "maxlen"]),
        )
    stats = Statistics(snapshot.snapshot_id, snapshot.schema_id, merged, merged_size, col_stats)
    table.new_commit().commit_statistics(stats)

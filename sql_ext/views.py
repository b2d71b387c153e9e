"""Paimon data as Spark DataFrames, registered under unique temporary view names.

A statement that reads Paimon tables is rewritten to read views instead. A table's view is
a read planned when the statement runs (``sql_ext.datapath.read``: a pinned snapshot, its
files, the columns used) that Spark's executors carry out: the DataFrame refers to that plan,
not to the view. Spark analyses a ``spark.sql`` DataFrame when it is created, so the views
can be dropped as soon as ``spark.sql`` returns; the DataFrame keeps working (and keeps
showing the data as it was when the statement ran). Metadata system tables are small: their
rows are built on the driver; ``$audit_log``, ``$binlog`` and ``$ro`` are read like the table.
Only a statement that stores SQL text referring to the view (``CREATE TEMPORARY VIEW ... AS``,
``CACHE TABLE ... AS``) needs them for longer; those are *pinned* and live until the session
stops.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyspark.errors import AnalysisException
from pyspark.sql.types import StructType

from paimon_core.operations.incremental import (
    INCREMENTAL_KEYS,
    InconsistentBuckets,
)
from paimon_core.operations.time_travel import SCAN_TIMESTAMP_MILLIS, SCAN_VERSION, travel_table
from paimon_core.table import FileStoreTable
from sql_ext.datapath.changes import AUDIT_LOG, BINLOG, DATA, READ_OPTIMIZED
from sql_ext.datapath.read import plan_dataframe, plan_read
from sql_ext.datapath.scan import plan_table
from sql_ext.errors import SqlError
from sql_ext.system_tables import (
    ROW_TRACKING_TABLE,
    row_tracking_metadata,
    spark_schema,
    system_table_rows,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from paimon_core.format.snapshot import Snapshot
    from paimon_core.operations.scan import Predicate

VIEW_PREFIX = "__paimon_"
DATA_SYSTEM_TABLES = frozenset({AUDIT_LOG, BINLOG, READ_OPTIMIZED, ROW_TRACKING_TABLE})
"""System tables of the table's rows (``AuditLogTable``, ``BinlogTable``,
``ReadOptimizedTable``, ``RowTrackingTable``): read by the executors like the table."""


def new_view_name() -> str:
    return f"{VIEW_PREFIX}{uuid.uuid4().hex}"


class ViewScope:
    """Temporary views registered for one statement; dropped on exit unless pinned."""

    def __init__(self, spark: SparkSession, pinned: list[str]) -> None:
        self.spark = spark
        self.names: list[str] = []
        self.shown: dict[str, str] = {}
        """View name -> the table it holds, for error messages."""
        self.pin = False
        self._pinned = pinned

    def register(self, df: DataFrame, shown: str = "") -> str:
        """Register ``df`` under a fresh name; ``shown`` names what it holds (e.g.
        ``paimon.db.t``). The name is random (a uuid4), so no table has it; the view is never
        replaced, so a view of that name already there is kept and another name tried. (No
        ``tableExists`` check first: it costs a round trip to Spark for every statement.)"""
        for _ in range(100):
            name = new_view_name()
            try:
                df.createTempView(name)
            except AnalysisException:
                continue  # taken in between: never replace someone else's view
            self.names.append(name)
            if shown:
                self.shown[name] = shown
            return name
        raise SqlError("Cannot find a free temporary view name")

    def __enter__(self) -> ViewScope:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self.pin and kind is None:
            self._pinned.extend(self.names)
        else:
            for name in self.names:
                self.spark.catalog.dropTempView(name)
        self.names = []


# ----------------------------------------------------------------------------- reading


def travelled(
    table: FileStoreTable, version: str | int | None = None, timestamp_millis: int | None = None
) -> tuple[FileStoreTable, Snapshot | None]:
    """The table in the schema of the snapshot it travels to, and that snapshot.

    ``version`` is a tag name first, then a snapshot id (Paimon's ``scan.version``).
    """
    if version is not None:
        return travel_table(table.copy({SCAN_VERSION: str(version)}))
    if timestamp_millis is not None:
        return travel_table(table.copy({SCAN_TIMESTAMP_MILLIS: str(timestamp_millis)}))
    return travel_table(table)


def local_dataframe(
    spark: SparkSession, rows: Sequence[Sequence[Any]], schema: StructType | str
) -> DataFrame:
    """A small DataFrame of Python rows, shipped as Arrow.

    ``createDataFrame`` of a Python list goes through Python worker processes on every
    action; an Arrow table becomes a local relation inside the JVM (about 5x faster).
    """
    from pyspark.sql.pandas.types import to_arrow_schema

    if isinstance(schema, str):
        parsed = StructType.fromDDL(schema)
        assert isinstance(parsed, StructType)
        schema = parsed
    arrow_schema = to_arrow_schema(schema, timezone="UTC")
    columns = list(zip(*rows)) if rows else [() for _ in schema.fields]
    arrays = [
        pa.array([_aware(v) for v in values], type=f.type)
        for values, f in zip(columns, arrow_schema)
    ]
    return spark.createDataFrame(pa.Table.from_arrays(arrays, schema=arrow_schema), schema)


def _aware(value: Any) -> Any:
    """A naive datetime is local time to PySpark (a TIMESTAMP value); Arrow would read UTC."""
    if isinstance(value, dt.datetime) and value.tzinfo is None:
        return value.astimezone()
    return value


def table_dataframe(
    spark: SparkSession,
    table: FileStoreTable,
    snapshot: Snapshot | None,
    schema_only: bool = False,
    columns: Sequence[str] | None = None,
    predicate: Sequence[Predicate] = (),
    *,
    system: str | None = None,
    meta: Sequence[str] = (),
    except_fallback: bool = False,
) -> DataFrame:
    """The rows of ``snapshot`` (none: an empty table), read by Spark's executors.

    The scan is planned now (the snapshot is pinned): of ``columns`` (None: all), with
    ``predicate`` pruning partitions and files. The DataFrame reads that plan every time it
    is collected.

    ``system`` is a data-sized system table (``audit_log``, ``binlog``, ``ro``) to read
    instead of the table's rows; ``meta`` the metadata columns to add. A table whose options
    ask for an incremental read (``incremental-between``, ...) reads the changes instead of
    ``snapshot``; across a bucket rescale that is an error, or with ``except_fallback`` the
    end snapshot EXCEPT the start snapshot, as Paimon-Spark's incremental table functions.
    """
    if system == ROW_TRACKING_TABLE:
        meta = row_tracking_metadata(table, meta)
    if schema_only:
        view = system if system in (AUDIT_LOG, BINLOG) else DATA
        return plan_dataframe(spark, plan_read(table, None, columns, view=view, meta=meta))
    try:
        plan = plan_table(table, snapshot, columns, predicate, system=system, meta=meta)
    except InconsistentBuckets as e:
        if not except_fallback:
            raise
        view = system if system in (AUDIT_LOG, BINLOG) else DATA
        return _snapshot_except(spark, table, e, columns, view, meta)
    return plan_dataframe(spark, plan)


def _snapshot_except(
    spark: SparkSession,
    table: FileStoreTable,
    error: InconsistentBuckets,
    columns: Sequence[str] | None,
    view: str,
    meta: Sequence[str],
) -> DataFrame:
    """Paimon-Spark's ``sparkIncrementQuery``: the end snapshot's rows EXCEPT (distinct) the
    start snapshot's, each read in its own schema."""
    plain = {k: v for k, v in table.dynamic_options.items() if k not in INCREMENTAL_KEYS}
    frames = []
    for snapshot_id in (error.end_id, error.start_id):
        base = FileStoreTable(table.file_io, table.path, table.schema, table.identifier, plain)
        moved, snapshot = travelled(base, snapshot_id)
        plan = plan_read(moved, snapshot, columns, view=view, meta=meta)
        frames.append(plan_dataframe(spark, plan))
    return frames[0].subtract(frames[1])


def system_table_dataframe(
    spark: SparkSession,
    table: FileStoreTable,
    name: str,
    snapshot_id: int | None,
    time_zone: str | dt.tzinfo | None,
    schema_only: bool = False,
) -> DataFrame:
    """``table$name`` (at ``snapshot_id`` for the snapshot tables) as a DataFrame."""
    schema = spark_schema(name)
    if schema_only:
        return local_dataframe(spark, [], schema)
    rows = system_table_rows(table, name, snapshot_id=snapshot_id, time_zone=time_zone)
    return local_dataframe(spark, rows, schema)

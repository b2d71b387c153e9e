"""Reading Paimon tables with Spark executors: the driver plans, the executors read.

The driver pins a snapshot and plans it with the core (snapshot -> splits, pruned by
partition and file statistics), then hands the whole plan to the ``paimon`` data source as
one option. The executors read their splits with the core's reader (primary-key buckets are
merged there) and yield Arrow batches in Spark's exact types.

Why the plan travels in an option: PySpark's Python data source caches the partitions it
planned on the relation and reuses them for later queries of the same DataFrame or view.
Partitions that depend only on the options (never on ``pushFilters``) make that cache
harmless: a relation always reads the same pinned snapshot, files and columns. Every
statement builds its own relation, so a differently filtered statement gets its own plan.
"""

from __future__ import annotations

import base64
import functools
import os
import pickle
import re
import weakref
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, InputPartition

from paimon_core.exceptions import InvalidArgument
from paimon_core.operations.data_evolution import data_evolution_enabled, row_id_groups
from paimon_core.operations.incremental import (
    INCREMENTAL_BETWEEN_SCAN_MODE,
    INCREMENTAL_BETWEEN_TAG_TO_SNAPSHOT,
    INCREMENTAL_KEYS,
)
from paimon_core.operations.read import data_file_path
from paimon_core.operations.scan import Split
from paimon_core.operations.split_read import IncrementalSplit
from paimon_core.operations.time_travel import SCAN_KEYS, SCAN_VERSION, travel_table
from sql_ext.datapath.arrow import spark_arrow_schema, to_spark_arrow
from sql_ext.datapath.changes import narrowest_column
from sql_ext.jvm import session_confs, string_seq
from sql_ext.progress import phase
from sql_ext.spark_types import to_spark_schema
from sql_ext.syntax.dialect import quote_identifier

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

    from paimon_core.format.manifest import DataFileMeta
    from paimon_core.format.snapshot import Snapshot
    from paimon_core.format.types import DataField
    from paimon_core.operations.scan import Predicate
    from paimon_core.table import FileStoreTable

PLAN_OPTION = "__paimon_read_plan"
"""The option carrying a driver-planned read (set by the session, never by users)."""
WAREHOUSE_OPTION = "warehouse"
BRANCH_OPTION = "branch"
"""Reads and writes the table's branch (Paimon-Spark reads it as `t$branch_<name>`)."""
TRAVEL_OPTIONS = (SCAN_VERSION, *SCAN_KEYS)
ROW_POSITION_COLUMN = "__paimon_row_position"
SCAN_OPTIONS = frozenset(
    {
        *TRAVEL_OPTIONS,
        *INCREMENTAL_KEYS,
        INCREMENTAL_BETWEEN_SCAN_MODE,
        INCREMENTAL_BETWEEN_TAG_TO_SNAPSHOT,
    }
)
"""Read options of ``format("paimon")`` that reach the table: time travel and incremental."""


@dataclass(frozen=True)
class ReadPlan:
    r"""A read fixed on the driver: the table (in the schema of its snapshot), the columns
    the statement uses and the splits left after pruning. Pickled to the executors.

    ``view`` is ``data`` (the table's rows), ``audit_log`` or ``binlog`` (rows with their row
    kind, ``sql_ext.datapath.changes``); ``meta`` the metadata columns asked for
    (``__paimon_file_path``, ...); ``splits`` may be ``IncrementalSplit``\ s (changes
    between two snapshots)."""

    table: FileStoreTable
    columns: tuple[str, ...]
    splits: tuple[Split | IncrementalSplit, ...]
    snapshot_id: int | None
    row_positions: bool = False
    """Also yield ``ROW_POSITION_COLUMN``, each row's position in its data file (append
    tables; DELETE with deletion vectors). Such a plan is read by the ``paimon`` source."""
    view: str = "data"
    meta: tuple[str, ...] = ()
    sequence_number: bool = False
    task_bytes: int = 0
    """Splits are packed into Spark tasks of about this many bytes (file sizes plus
    ``open_cost`` each, as Spark packs files); 0: one task per split."""
    open_cost: int = 4 * 2**20
    fallback: ReadPlan | None = None
    """``scan.fallback-branch``: the other branch's read of the partitions this one lacks
    (``paimon_core.operations.fallback``), in that branch's schema; its rows are this
    plan's columns by position."""

    @property
    def fields(self) -> list[DataField]:
        by_name = {f.name: f for f in self.table.schema.fields}
        return [by_name[c] for c in self.columns]

    @property
    def plain(self) -> bool:
        """A table's current rows, nothing else: the core's ``TableRead`` reads them."""
        return (
            self.view == "data"
            and not self.meta
            and not any(isinstance(s, IncrementalSplit) for s in self.splits)
        )

    @property
    def spark_schema(self) -> StructType:
        if self.view == "data" and not self.meta:
            schema = to_spark_schema(self.fields)
            if self.row_positions:
                from pyspark.sql.types import LongType

                schema = schema.add(ROW_POSITION_COLUMN, LongType(), False)
            return schema
        from sql_ext.datapath.changes import plan_schema

        return plan_schema(self)


def plan_read(
    table: FileStoreTable,
    snapshot: Snapshot | None,
    columns: Sequence[str] | None = None,
    predicate: Sequence[Predicate] = (),
    *,
    splits: Sequence[Split | IncrementalSplit] | None = None,
    view: str = "data",
    meta: Sequence[str] = (),
) -> ReadPlan:
    """Plan a read of ``snapshot`` of ``table`` (None: empty), of ``columns`` (None: all).

    ``predicate`` prunes partitions and files only; the query still filters the rows.
    ``splits`` given (an incremental or read-optimized read) are read instead of the
    snapshot's; ``view`` and ``meta`` are ``ReadPlan``'s.

    Raises:
        UnsupportedFeature: file metadata columns of primary-key splits that are merged.
    """
    names = [f.name for f in table.schema.fields]
    chosen = tuple(names if columns is None else [n for n in names if n in set(columns)])
    planned: list[Split | IncrementalSplit] = list(splits or ())
    if splits is None and snapshot is not None:
        with phase(f"Planning the scan of {table.identifier or table.path} ..."):
            planned = list(table.new_scan().plan(snapshot=snapshot, predicate=list(predicate)))
    if data_evolution_enabled(table.options) and not table.is_primary_key_table:
        # The files of a row-id range merge column by column: one task each range.
        planned = [_files(s, g) for s in planned for g in row_id_groups(s.files)]
    elif not table.is_primary_key_table:
        # Files of an append table are independent: one task each spreads the work. Changes
        # of an append table are the rows of the files added: plain splits.
        planned = [_one_file(s, f) for s in planned for f in s.files]
    sid = None if snapshot is None else snapshot.snapshot_id
    sequence_number = False
    if view != "data":
        from sql_ext.datapath.changes import sequence_number_enabled

        sequence_number = sequence_number_enabled(table)
    plan = ReadPlan(
        table,
        chosen,
        tuple(planned),
        sid,
        view=view,
        meta=tuple(meta),
        sequence_number=sequence_number,
    )
    if not plan.plain:
        from sql_ext.datapath.changes import check_plan

        check_plan(plan)
    return plan


def _one_file(split: Split | IncrementalSplit, meta: DataFileMeta) -> Split:
    return _files(split, (meta,))


def _files(split: Split | IncrementalSplit, files: Sequence[DataFileMeta]) -> Split:
    """``split`` narrowed to ``files``, with their deletion vectors only."""
    if isinstance(split, IncrementalSplit):
        # A diff's end state; None in a delta.
        vectors = (split.deletion_file(f.file_name) for f in files)
        return Split(
            split.partition,
            split.partition_values,
            split.bucket,
            tuple(files),
            split.snapshot_id,
            deletion_files=tuple(v for v in vectors if v is not None),
        )
    return split.with_files(files)


def encode_plan(plan: ReadPlan) -> str:
    return base64.b64encode(zlib.compress(pickle.dumps(plan), 1)).decode("ascii")


def decode_plan(text: str) -> ReadPlan:
    plan = pickle.loads(zlib.decompress(base64.b64decode(text)))
    assert isinstance(plan, ReadPlan)
    return plan


def plan_dataframe(spark: SparkSession, plan: ReadPlan) -> DataFrame:
    """The rows of ``plan`` as a DataFrame read by executors.

    Append-table Parquet files whose columns Spark's own Parquet reader reads exactly (same
    names and types as the table's, local files) are read by it, with its column pruning and
    vectorised decoding; the rest go through the ``paimon`` source and the core's reader
    (primary-key merges, files with a deletion vector, renamed columns, TIME, nested types,
    and ORC and Avro files, which need Paimon's type mapping: TIME as int, CHAR trimmed,
    Java's Avro schema). A plan of no columns
    (``count(*)``) reads the narrowest column and drops it in Spark, so that the row count
    survives. A fallback branch's rows are added by position (``ReadPlan.fallback``)."""
    if plan.fallback is not None:
        own = plan_dataframe(spark, replace(plan, fallback=None))
        other = plan_dataframe(spark, plan.fallback)
        return own.union(other.toDF(*own.columns)) if own.columns else own.union(other)
    if not plan.plain:
        if plan.columns or plan.view != "data" or plan.meta:
            return _source_dataframe(spark, plan)
        narrow = replace(plan, columns=(narrowest_column(plan.table),))
        return _source_dataframe(spark, narrow).select()
    read_plan = plan
    if not plan.columns:
        read_plan = replace(plan, columns=(narrowest_column(plan.table),))
    direct, rest = _direct_files(read_plan)
    confs = functools.cache(lambda: session_confs(spark))  # asked once, and only if needed
    frames = []
    if direct:
        frames.append(_spark_parquet(spark, read_plan, direct, confs))
    if rest or not direct:
        packed = _packed(replace(read_plan, splits=tuple(rest)), spark, confs)
        frames.append(_source_dataframe(spark, packed))
    df = frames[0] if len(frames) == 1 else frames[0].unionByName(frames[1])
    return df.select() if not plan.columns else df


_MAX_PARTITION_BYTES = ("spark.sql.files.maxPartitionBytes", 128 * 2**20)
_OPEN_COST = ("spark.sql.files.openCostInBytes", 4 * 2**20)
_MIN_PARTITIONS = ("spark.sql.files.minPartitionNum", "spark.sql.leafNodeDefaultParallelism")
_BYTE_UNITS = {"": 1, "b": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40, "p": 2**50}


def _packed(
    plan: ReadPlan,
    spark: SparkSession | None,
    confs: Callable[[], Mapping[str, str]] | None = None,
) -> ReadPlan:
    """``plan`` with its splits packed as Spark packs files for a scan
    (``FilePartition.maxSplitBytes``, as Paimon-Spark's ``BinPackingSplits``): tasks of
    ``min(maxPartitionBytes, max(openCost, total / parallelism))`` bytes, each file counting
    its size plus ``openCost``. Without a session (the DataFrame API's reader runs in a Python
    worker) Spark's defaults apply and the parallelism is the driver's core count. ``confs``
    gives the session's settings (``sql_ext.jvm.session_confs``).

    Each task of a Python data source costs a Python worker round (tens of milliseconds, far
    more on a loaded machine), so a task per split (a table of 10 partitions x 4 buckets has
    40) would cost more than reading small splits does."""
    if plan.fallback is not None:
        plan = replace(plan, fallback=_packed(plan.fallback, spark, confs))
    if len(plan.splits) < 2:
        return plan
    settings = confs() if confs is not None else {}
    max_bytes = _bytes(settings.get(_MAX_PARTITION_BYTES[0]), _MAX_PARTITION_BYTES[1])
    open_cost = _bytes(settings.get(_OPEN_COST[0]), _OPEN_COST[1])
    parallelism = next((settings[k] for k in _MIN_PARTITIONS if settings.get(k)), None)
    if parallelism:
        cores = int(parallelism)
    elif spark is not None:
        cores = spark.sparkContext.defaultParallelism
    else:
        cores = os.cpu_count() or 1
    total = sum(f.file_size + open_cost for s in plan.splits for f in s.files)
    task_bytes = min(max_bytes, max(open_cost, total // max(cores, 1)))
    return replace(plan, task_bytes=task_bytes, open_cost=open_cost)


def _bytes(text: str | None, default: int) -> int:
    """A Spark size setting (``134217728``, ``128m``, ``128MB``) in bytes."""
    if not text:
        return default
    match = re.fullmatch(r"\s*(\d+)\s*([kmgtp]?)b?\s*", text.lower())
    return int(match.group(1)) * _BYTE_UNITS[match.group(2)] if match else default


def pack_splits(
    splits: Sequence[Split], task_bytes: int, open_cost: int
) -> list[tuple[Split, ...]]:
    """``splits`` in groups of about ``task_bytes`` (largest first, each into the current
    group while it fits: Spark's packing of files); one group per split when 0. A split (a
    primary-key bucket, merged as a whole) is never divided."""
    if task_bytes <= 0:
        return [(s,) for s in splits]

    def size(split: Split) -> int:
        return sum(f.file_size + open_cost for f in split.files)

    groups: list[tuple[Split, ...]] = []
    current: list[Split] = []
    filled = 0
    for split in sorted(splits, key=size, reverse=True):
        weight = size(split)
        if current and filled + weight > task_bytes:
            groups.append(tuple(current))
            current, filled = [], 0
        current.append(split)
        filled += weight
    if current:
        groups.append(tuple(current))
    return groups


def _source_dataframe(spark: SparkSession, plan: ReadPlan) -> DataFrame:
    from sql_ext.datapath.registry import FORMAT, ensure_registered

    ensure_registered(spark)
    return (
        spark.read.format(FORMAT)
        .schema(plan.spark_schema)
        .option(PLAN_OPTION, encode_plan(plan))
        .load()
    )


_SPARK_PARQUET_TYPES = frozenset(
    {
        "BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL",
        "CHAR", "VARCHAR", "BINARY", "VARBINARY", "DATE",
    }
)  # fmt: skip
"""Types Spark's Parquet reader reads from any Paimon writer as the Spark type Paimon maps
them to. Not timestamps: whether a file marks them UTC-adjusted depends on the writer (and
INT96 or nanoseconds exist), and Spark refuses some combinations."""


def _direct_files(plan: ReadPlan) -> tuple[list[str], list[Split]]:
    """Paths of the files Spark's Parquet reader can read as they are, and the other splits."""
    table = plan.table
    fields = plan.fields
    local = table.path.startswith("/") or table.path.startswith("file:")
    if (
        table.is_primary_key_table
        or plan.row_positions
        or not local
        or not all(_spark_reads(f) for f in fields)
    ):
        return [], list(plan.splits)
    schemas = {table.schema.schema_id: table.schema}
    direct: list[str] = []
    rest: list[Split] = []
    for split in plan.splits:
        if len(split.files) > 1 or any(f.write_cols is not None for f in split.files):
            rest.append(split)  # a row-id range of a data-evolution table, merged by the core
            continue
        for meta in split.files:
            schema = schemas.get(meta.schema_id)
            if schema is None:
                schema = schemas[meta.schema_id] = table.schema_manager.schema(meta.schema_id)
            by_id = {f.id: f for f in schema.fields}
            same = all(
                f.id in by_id and by_id[f.id].name == f.name and by_id[f.id].type == f.type
                for f in fields
            )
            path = meta.external_path or data_file_path(
                table, split.partition_values, split.bucket, meta.file_name
            )
            if (
                not same
                or not meta.file_name.endswith(".parquet")
                or _GLOB.search(path)
                or split.deletion_file(meta.file_name) is not None  # Spark would keep its rows
            ):
                rest.append(split.with_files((meta,)))
                continue
            direct.append(path if "://" in path or path.startswith("file:") else "file://" + path)
    return direct, rest


_GLOB = re.compile(r"[{}\[\]*?\\]")
"""Characters Spark's file sources read as a glob pattern in a path."""


def _spark_reads(f: DataField) -> bool:
    return f.type.root in _SPARK_PARQUET_TYPES


_LISTING_THRESHOLD = ("spark.sql.sources.parallelPartitionDiscovery.threshold", 32)
_PARQUET_FRAMES: weakref.WeakKeyDictionary[Any, OrderedDict[tuple[str, ...], DataFrame]] = (
    weakref.WeakKeyDictionary()
)
"""Per SparkSession, the latest DataFrames of Spark's Parquet reader, by schema and files."""
_CACHED_FRAMES = 16


def _spark_parquet(
    spark: SparkSession,
    plan: ReadPlan,
    paths: list[str],
    confs: Callable[[], Mapping[str, str]],
) -> DataFrame:
    """``spark.read.schema(...).parquet(*paths)``, the same DataFrame again for the same
    schema and files (the last 16 are kept).

    Making that DataFrame is most of a short statement's cost on the driver: Spark resolves
    the source and checks and lists each file (tens of milliseconds, while a plain Parquet
    view does it once). Paimon's data files never change once written, so a DataFrame of the
    same files reads the same rows; a statement that plans the same files again (the same
    query, or another one pruned to the same files, before the next commit) reuses it.

    The paths travel in one py4j round trip (PySpark hands Spark a list one element per round
    trip). Spark lists more than ``parallelPartitionDiscovery.threshold`` files in a Spark job
    (about a second); these are local files known from the manifests, so the threshold is
    lifted while the DataFrame is made and the listing stays on the driver."""
    from pyspark.sql import functions as F

    schema = plan.spark_schema
    frames = _PARQUET_FRAMES.setdefault(spark, OrderedDict())
    cache_key = (schema.json(), *paths)
    cached = frames.get(cache_key)
    if cached is not None:
        frames.move_to_end(cache_key)
        return cached
    reader = spark.read
    jschema = spark._jsparkSession.parseDataType(schema.json())  # type: ignore[attr-defined]
    key, default = _LISTING_THRESHOLD
    threshold = confs().get(key) if len(paths) > 1 else None
    lift = len(paths) > (int(threshold) if threshold and threshold.isdigit() else default)
    if lift:
        spark.conf.set(key, str(2**31 - 1))
    try:
        df = reader._df(reader._jreader.schema(jschema).parquet(string_seq(spark, paths)))
    finally:
        if lift:
            if threshold is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, threshold)
    if any(f.metadata for f in schema):
        # Spark's file sources drop column comments (DESCRIBE shows them): restore them.
        df = df.select(
            *[F.col(quote_identifier(f.name)).alias(f.name, metadata=f.metadata) for f in schema]
        )
    frames[cache_key] = df
    while len(frames) > _CACHED_FRAMES:
        frames.popitem(last=False)
    return df


# --------------------------------------------------------------- the data source's side


READ_CHANGELOG = "read.changelog"
AUDIT_LOG_SUFFIX = "$audit_log"


def source_view(options: Mapping[str, str]) -> tuple[dict[str, str], str]:
    """The options with a table name's ``$audit_log`` taken off, and the view
    ``format("paimon")`` reads: ``audit_log`` (``rowkind`` first) for that name or
    ``read.changelog`` = ``true`` (Paimon-Spark's ``SparkSource``), else ``data``."""
    from sql_ext.datapath.changes import AUDIT_LOG, DATA

    out = dict(options)
    lower = {k.lower(): k for k in out}
    view = DATA
    for key in ("path", "table"):
        name = out.get(lower.get(key, key))
        if name and name.lower().endswith(AUDIT_LOG_SUFFIX):
            out[lower[key]] = name[: -len(AUDIT_LOG_SUFFIX)]
            view = AUDIT_LOG
    flag = out.get(lower.get(READ_CHANGELOG, READ_CHANGELOG))
    if flag is not None and str(flag).strip().lower() == "true":
        view = AUDIT_LOG
    return out, view


def source_schema(options: Mapping[str, str]) -> StructType:
    """The Spark schema of ``format("paimon")`` with these options, for batch reads and
    streams alike: the travelled-to snapshot's schema under time travel (the latest when
    the travel does not resolve: a batch read then reports why, a stream may start before
    the earliest snapshot), ``rowkind`` first for the audit log (``source_view``)."""
    plan = options.get(PLAN_OPTION)
    if plan is not None:
        return decode_plan(plan).spark_schema
    named, view = source_view(options)
    table = source_table(named)
    scan = {k: v for k, v in named.items() if k in SCAN_OPTIONS}
    if scan:
        table = table.copy(scan)
    return plan_read(table, None, splits=(), view=view).spark_schema


def is_table_path(name: str) -> bool:
    """Whether `format("paimon")`'s `path` is a table directory (`/wh/db.db/t`,
    `s3://bucket/wh/db.db/t`, `file:/...`) rather than a `db.t` of the warehouse."""
    return "/" in name or ":" in name


def source_table(options: Mapping[str, str], action: str = "read") -> FileStoreTable:
    """The table `format("paimon")` names (`load(...)` / `save(...)`, else option `table`),
    or its branch (option `branch`, unless the name says `t$branch_b`).

    A table directory is opened as Paimon's `SparkSource` opens it
    (`FileStoreTableFactory.create`: the latest schema found there, wherever it is); `db.t`
    is a table of the catalog at option `warehouse`. The `s3.*` options configure the
    file system either way.

    Raises:
        InvalidArgument: no table named, or `db.t` without a warehouse.
        TableNotExist: no Paimon table there.
    """
    from paimon_core.catalog import FileSystemCatalog
    from paimon_core.exceptions import TableNotExist
    from paimon_core.format.schema import SchemaManager
    from paimon_core.io.load import get_file_io
    from paimon_core.table import FileStoreTable

    lower = {k.lower(): v for k, v in options.items()}
    name = lower.get("path") or lower.get("table")
    catalog_options = {k: v for k, v in options.items() if k.lower().startswith("s3.")}
    if not name:
        raise InvalidArgument(
            f'format("paimon") needs the table to {action}: "db.t" or a table\'s path'
        )
    branch = lower.get(BRANCH_OPTION) or None
    if is_table_path(name):
        path = name.rstrip("/")
        file_io = get_file_io(path, catalog_options)
        schema = SchemaManager(file_io, path).latest()
        if schema is None:
            raise TableNotExist(
                f"Schema file not found in location {path}. Please create table first."
            )
        table = FileStoreTable(file_io, path, schema, path)
        return table if branch is None else table.switch_to_branch(branch)
    warehouse = lower.get(WAREHOUSE_OPTION)
    if not warehouse:
        raise InvalidArgument(f'format("paimon") needs the option "warehouse" to {action} {name}')
    catalog = FileSystemCatalog(warehouse, options=catalog_options)
    if branch is not None and "$" not in name:
        return catalog.get_table(name, branch)
    return catalog.get_table(name)


def _load(options: Mapping[str, str]) -> tuple[FileStoreTable, Snapshot | None]:
    table = source_table(options)
    scan = {k: v for k, v in options.items() if k in SCAN_OPTIONS}
    if scan:
        table = table.copy(scan)
    return travel_table(table)


@dataclass(frozen=True)
class SplitPartition(InputPartition):
    """The splits one Spark task reads (of the plan's fallback branch with ``fallback``)."""

    splits: tuple[Split | IncrementalSplit, ...]
    fallback: bool = False


class PaimonReader(DataSourceReader):
    """Reads the splits of a plan, packed into tasks by ``plan.task_bytes``."""

    def __init__(self, plan: ReadPlan) -> None:
        self.plan = plan

    def partitions(self) -> Sequence[InputPartition]:
        plan = self.plan
        groups = pack_splits(plan.splits, plan.task_bytes, plan.open_cost)
        out = [SplitPartition(g) for g in groups]
        other = plan.fallback
        if other is not None:
            groups = pack_splits(other.splits, other.task_bytes, other.open_cost)
            out += [SplitPartition(g, fallback=True) for g in groups]
        return out

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, SplitPartition):
            return  # a plan of no splits: Spark still runs one task
        target = spark_arrow_schema(self.plan.spark_schema)
        plan = self.plan
        if partition.fallback:
            assert plan.fallback is not None
            plan = plan.fallback
        if not plan.plain:
            from sql_ext.datapath.changes import read_split

            for split in partition.splits:
                yield from read_split(plan, split)
            return
        read = plan.table.new_read()
        if plan.row_positions:
            from paimon_core.operations.read import ROW_POSITION

            for split in partition.splits:
                data = read.to_arrow_with_positions(split, list(plan.columns))
                data = data.select([*plan.columns, ROW_POSITION])  # no primary-key system columns
                for batch in data.to_batches():
                    yield to_spark_arrow(batch, plan.fields, target)
            return
        for batch in read.to_arrow_batches(partition.splits, list(plan.columns)):
            yield to_spark_arrow(batch, plan.fields, target)

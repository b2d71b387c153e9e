"""Paimon's per-table system tables (``t$snapshots``, ``t$files``, ...) as plain rows.

Each table is declared once, as ``(name, Spark type, nullable)`` in Paimon's column order
(``paimon-core/.../table/system/*Table.java``, master); the same declaration gives the row
builder's column order and the Spark schema. Values follow the Java tables: Paimon
``TIMESTAMP(3)`` columns are naive datetimes in the session time zone (Spark maps them to
``TIMESTAMP_NTZ``), partitions and stats are the strings Java renders (``{2024-01-01}`` in
``$files``/``$manifests``, ``dt=2024-01-01`` in ``$partitions``, stats as a sorted
``{col=value, ...}`` map).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from paimon_core.exceptions import (
    InvalidArgument,
    MetadataFormatError,
    SnapshotNotFound,
    TableNotExist,
)
from paimon_core.format.binary_row import deserialize_row, row_arity
from paimon_core.format.options import duration_to_java_string
from paimon_core.format.paths import (
    BRANCH_DIR,
    BRANCH_PREFIX,
    CONSUMER_DIR,
    CONSUMER_PREFIX,
    java_float_string,
    partition_value_string,
)
from paimon_core.format.snapshot import jackson_json
from paimon_core.format.statistics import read_statistics
from paimon_core.format.types import data_field_to_json, sql_string
from paimon_core.lifecycle.file_deletion import TableFiles
from paimon_core.operations.fallback import (
    FallbackRead,
    branch_entries,
    fallback_read,
    other_snapshot_id,
)
from paimon_core.operations.row_tracking import ROW_TRACKING_COLUMNS, row_tracking_enabled
from paimon_core.operations.time_travel import SCAN_SNAPSHOT_ID, has_time_travel, resolve_snapshot
from procedures.base import epoch_millis_to_local, resolve_time_zone, spark_type

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

    from paimon_core.format.manifest import DataFileMeta, ManifestEntry
    from paimon_core.format.schema import TableSchema
    from paimon_core.format.snapshot import Snapshot
    from paimon_core.format.types import DataField, DataType
    from paimon_core.table import FileStoreTable

__all__ = [
    "ROW_TRACKING_TABLE",
    "SNAPSHOT_SYSTEM_TABLES",
    "SYSTEM_TABLES",
    "SystemColumn",
    "row_tracking_metadata",
    "spark_schema",
    "system_table_columns",
    "system_table_rows",
]

SystemColumn = tuple[str, str, bool]
"""(column name, Spark SQL type, nullable)."""

TIMESTAMP = "TIMESTAMP_NTZ"  # Paimon TIMESTAMP(3) as Spark >= 3.4 maps it

SNAPSHOTS: tuple[SystemColumn, ...] = (
    ("snapshot_id", "BIGINT", False),
    ("schema_id", "BIGINT", False),
    ("commit_user", "STRING", False),
    ("commit_identifier", "BIGINT", False),
    ("commit_kind", "STRING", False),
    ("commit_time", TIMESTAMP, False),
    ("base_manifest_list", "STRING", False),
    ("delta_manifest_list", "STRING", False),
    ("changelog_manifest_list", "STRING", True),
    ("total_record_count", "BIGINT", True),
    ("delta_record_count", "BIGINT", True),
    ("changelog_record_count", "BIGINT", True),
    ("watermark", "BIGINT", True),
    ("next_row_id", "BIGINT", True),
    ("operation", "STRING", True),
    ("writer_version", "STRING", True),
)
TAGS: tuple[SystemColumn, ...] = (
    ("tag_name", "STRING", False),
    ("snapshot_id", "BIGINT", False),
    ("schema_id", "BIGINT", False),
    ("commit_time", TIMESTAMP, False),
    ("record_count", "BIGINT", True),
    ("create_time", TIMESTAMP, True),
    ("time_retained", "STRING", True),
)
SCHEMAS: tuple[SystemColumn, ...] = (
    ("schema_id", "BIGINT", False),
    ("fields", "STRING", False),
    ("partition_keys", "STRING", False),
    ("primary_keys", "STRING", False),
    ("options", "STRING", False),
    ("comment", "STRING", True),
    ("update_time", TIMESTAMP, False),
)
OPTIONS: tuple[SystemColumn, ...] = (
    ("key", "STRING", False),
    ("value", "STRING", False),
)
MANIFESTS: tuple[SystemColumn, ...] = (
    ("file_name", "STRING", False),
    ("file_size", "BIGINT", False),
    ("num_added_files", "BIGINT", False),
    ("num_deleted_files", "BIGINT", False),
    ("schema_id", "BIGINT", False),
    ("min_partition_stats", "STRING", True),
    ("max_partition_stats", "STRING", True),
    ("min_row_id", "BIGINT", True),
    ("max_row_id", "BIGINT", True),
)
FILES: tuple[SystemColumn, ...] = (
    ("partition", "STRING", True),
    ("bucket", "INT", False),
    ("file_path", "STRING", False),
    ("file_format", "STRING", False),
    ("schema_id", "BIGINT", False),
    ("level", "INT", False),
    ("record_count", "BIGINT", False),
    ("file_size_in_bytes", "BIGINT", False),
    ("min_key", "STRING", True),
    ("max_key", "STRING", True),
    ("null_value_counts", "STRING", False),
    ("min_value_stats", "STRING", False),
    ("max_value_stats", "STRING", False),
    ("min_sequence_number", "BIGINT", True),
    ("max_sequence_number", "BIGINT", True),
    ("creation_time", TIMESTAMP, True),
    ("deleteRowCount", "BIGINT", True),
    ("file_source", "STRING", True),
    ("first_row_id", "BIGINT", True),
    ("write_cols", "ARRAY<STRING>", True),
)
PARTITIONS: tuple[SystemColumn, ...] = (
    ("partition", "STRING", True),
    ("record_count", "BIGINT", False),
    ("file_size_in_bytes", "BIGINT", False),
    ("file_count", "BIGINT", False),
    ("last_update_time", TIMESTAMP, True),
    ("created_at", TIMESTAMP, True),
    ("created_by", "STRING", True),
    ("updated_by", "STRING", True),
    ("options", "STRING", True),
    ("total_buckets", "INT", False),
    ("done", "BOOLEAN", False),
    ("deleted_record_count", "BIGINT", True),
)
BRANCHES: tuple[SystemColumn, ...] = (
    ("branch_name", "STRING", False),
    ("create_time", TIMESTAMP, False),
)
CONSUMERS: tuple[SystemColumn, ...] = (
    ("consumer_id", "STRING", False),
    ("next_snapshot_id", "BIGINT", False),
)
STATISTICS: tuple[SystemColumn, ...] = (
    ("snapshot_id", "BIGINT", False),
    ("schema_id", "BIGINT", False),
    ("mergedRecordCount", "BIGINT", True),
    ("mergedRecordSize", "BIGINT", True),
    ("colstat", "STRING", True),
)
BUCKETS: tuple[SystemColumn, ...] = (
    ("partition", "STRING", True),
    ("bucket", "INT", False),
    ("record_count", "BIGINT", False),
    ("file_size_in_bytes", "BIGINT", False),
    ("file_count", "BIGINT", False),
    ("last_update_time", TIMESTAMP, True),
)
FILE_INDEXES: tuple[SystemColumn, ...] = (
    ("partition", "STRING", True),
    ("bucket", "INT", False),
    ("file_path", "STRING", False),
    ("file_size_in_bytes", "BIGINT", False),
    ("record_count", "BIGINT", False),
    ("schema_id", "BIGINT", False),
    ("column_name", "STRING", False),
    ("index_type", "STRING", False),
    ("storage_type", "STRING", False),
    ("index_file_path", "STRING", True),
    ("index_size_in_bytes", "BIGINT", False),
    ("index_container_size_in_bytes", "BIGINT", False),
    ("is_empty", "BOOLEAN", False),
)
FILE_KEY_RANGES: tuple[SystemColumn, ...] = (
    ("partition", "STRING", True),
    ("bucket", "INT", False),
    ("file_path", "STRING", False),
    ("file_format", "STRING", False),
    ("schema_id", "BIGINT", False),
    ("level", "INT", False),
    ("record_count", "BIGINT", False),
    ("file_size_in_bytes", "BIGINT", False),
    ("min_key", "STRING", True),
    ("max_key", "STRING", True),
    ("first_row_id", "BIGINT", True),
)
DV_RANGES = "array<struct<f0:string,f1:int,f2:int,_CARDINALITY:bigint>>"
"""``ARRAY<DeletionVectorMeta.SCHEMA>`` as Spark's catalog string (f0..f2 are NOT NULL)."""
TABLE_INDEXES: tuple[SystemColumn, ...] = (
    ("partition", "STRING", True),
    ("bucket", "INT", False),
    ("index_type", "STRING", False),
    ("file_name", "STRING", False),
    ("file_size", "BIGINT", False),
    ("row_count", "BIGINT", False),
    ("dv_ranges", DV_RANGES, True),
    ("row_range_start", "BIGINT", True),
    ("row_range_end", "BIGINT", True),
    ("index_field_id", "INT", True),
    ("index_field_name", "STRING", True),
)
AGGREGATION_FIELDS: tuple[SystemColumn, ...] = (
    ("field_name", "STRING", False),
    ("field_type", "STRING", False),
    ("function", "STRING", True),
    ("function_options", "STRING", True),
    ("comment", "STRING", True),
)

SYSTEM_TABLES: dict[str, tuple[SystemColumn, ...]] = {
    "manifests": MANIFESTS,
    "snapshots": SNAPSHOTS,
    "options": OPTIONS,
    "schemas": SCHEMAS,
    "partitions": PARTITIONS,
    "buckets": BUCKETS,
    "files": FILES,
    "file_indexes": FILE_INDEXES,
    "file_key_ranges": FILE_KEY_RANGES,
    "tags": TAGS,
    "branches": BRANCHES,
    "consumers": CONSUMERS,
    "aggregation_fields": AGGREGATION_FIELDS,
    "statistics": STATISTICS,
    "table_indexes": TABLE_INDEXES,
}
"""The supported metadata system tables (Paimon's ``SystemTableLoader`` order) and their
columns. The data-sized ones (``audit_log``, ``binlog``, ``ro``), whose columns follow the
table's, are ``sql_ext.data_system_tables``."""
SNAPSHOT_SYSTEM_TABLES = frozenset(
    {
        "manifests",
        "partitions",
        "buckets",
        "files",
        "file_indexes",
        "file_key_ranges",
        "statistics",
        "table_indexes",
    }
)
"""System tables that show one snapshot (the latest, or the one time travel picks)."""

ROW_TRACKING_TABLE = "row_tracking"
"""``t$row_tracking`` (Paimon's ``RowTrackingTable``): the table's rows, then ``_ROW_ID`` and
``_SEQUENCE_NUMBER`` as columns; data-sized, read by the executors like ``$audit_log``."""


def row_tracking_metadata(table: FileStoreTable, meta: Sequence[str]) -> tuple[str, ...]:
    """The metadata columns a read of ``table$row_tracking`` adds to the table's columns:
    ``_ROW_ID`` and ``_SEQUENCE_NUMBER``, then those of ``meta`` (the statement's
    ``__paimon_*`` ones).

    Raises:
        InvalidArgument: ``table`` has no row tracking (Paimon's message).
    """
    if table.is_primary_key_table or not row_tracking_enabled(table.options):
        raise InvalidArgument(
            f"Table {table.identifier or table.path} does not support row tracking, please "
            "enable 'row-tracking.enabled' option to use 'row_tracking' table."
        )
    return (*ROW_TRACKING_COLUMNS, *(m for m in meta if m not in ROW_TRACKING_COLUMNS))


_FILE_SOURCES = {0: "APPEND", 1: "COMPACT"}
_COMPRESSION_EXTENSIONS = frozenset({"gz", "bz2", "deflate", "snappy", "lz4", "zst"})
_DELETION_VECTORS = "DELETION_VECTORS"
_UTC_EPOCH = dt.datetime(1970, 1, 1)


def _lookup(name: str) -> tuple[str, tuple[SystemColumn, ...]]:
    key = name.strip().lower()
    columns = SYSTEM_TABLES.get(key)
    if columns is None:
        raise TableNotExist(
            f"Unknown system table '{name}': supported are {', '.join(SYSTEM_TABLES)}"
        )
    return key, columns


def system_table_columns(name: str) -> tuple[SystemColumn, ...]:
    """The ``(name, Spark type, nullable)`` columns of system table ``name``.

    Raises:
        TableNotExist: not a supported system table.
    """
    return _lookup(name)[1]


def spark_schema(name: str) -> StructType:
    """The pyspark schema of system table ``name`` (pyspark is imported here only)."""
    from pyspark.sql.types import StructField, StructType

    return StructType(
        [StructField(col, _spark_type(kind), nullable) for col, kind, nullable in _lookup(name)[1]]
    )


def _spark_type(kind: str) -> Any:
    if kind != DV_RANGES:
        return spark_type(kind)
    from pyspark.sql import types

    meta = types.StructType(
        [
            types.StructField("f0", types.StringType(), False),
            types.StructField("f1", types.IntegerType(), False),
            types.StructField("f2", types.IntegerType(), False),
            types.StructField("_CARDINALITY", types.LongType(), True),
        ]
    )
    return types.ArrayType(meta, True)


def system_table_rows(
    table: FileStoreTable,
    name: str,
    *,
    snapshot_id: int | None = None,
    time_zone: str | dt.tzinfo | None = None,
) -> list[tuple[Any, ...]]:
    """The rows of ``table$<name>``, one tuple per row in the declared column order.

    Args:
        table: the data table.
        name: system table name (case-insensitive), one of ``SYSTEM_TABLES``.
        snapshot_id: for the ``SNAPSHOT_SYSTEM_TABLES``: read this snapshot
            (a snapshot file, else a tag on that snapshot) instead of the latest. Without it
            the table's ``scan.*`` time-travel options apply, as in Paimon.
        time_zone: session time zone of timestamp columns (None: the local zone).

    Raises:
        TableNotExist: unknown system table.
        SnapshotNotFound: ``snapshot_id`` is neither a snapshot nor a tagged snapshot.
    """
    key, _ = _lookup(name)
    zone = resolve_time_zone(time_zone)
    if key == "partitions":
        snapshot = _snapshot(table, snapshot_id)
        read = fallback_read(table)
        if read is not None and snapshot_id is not None and snapshot is not None:
            travel = {SCAN_SNAPSHOT_ID: str(other_snapshot_id(read.other, snapshot.time_millis))}
            read = replace(read, other=read.other.copy(travel))
        return _partitions(table, snapshot, zone, read)
    if key in _SNAPSHOT_TABLES:
        snapshot = _snapshot(table, snapshot_id)
        return [] if snapshot is None else _SNAPSHOT_TABLES[key](table, snapshot, zone)
    return _TABLES[key](table, zone)


def _snapshot(table: FileStoreTable, snapshot_id: int | None) -> Snapshot | None:
    if snapshot_id is None:
        if has_time_travel(table):
            return resolve_snapshot(table)
        return table.snapshot_manager.latest_snapshot()
    snapshot = table.snapshot_manager.try_snapshot(snapshot_id)
    if snapshot is not None:
        return snapshot
    for tag in table.tag_manager.list_tags().values():
        if tag.snapshot.snapshot_id == snapshot_id:
            return tag.snapshot
    raise SnapshotNotFound(f"Snapshot id '{snapshot_id}' doesn't exist.")


# ------------------------------------------------------------------------- value strings


def _raw_local(millis: int | None) -> dt.datetime | None:
    """A Java ``Timestamp`` stored as local wall clock (file creation time): no zone shift."""
    return None if millis is None else _UTC_EPOCH + dt.timedelta(milliseconds=millis)


def _to_millis(value: dt.datetime | None) -> dt.datetime | None:
    """Cut to TIMESTAMP(3), the declared precision."""
    return None if value is None else value.replace(microsecond=value.microsecond // 1000 * 1000)


def _format_fraction(nanos: int, precision: int) -> str:
    """``DateTimeUtils.formatTimestamp``: 9 digits, trailing zeros cut down to ``precision``."""
    fraction = f"{nanos:09d}"
    while len(fraction) > precision and fraction.endswith("0"):
        fraction = fraction[:-1]
    return "." + fraction if fraction else ""


def cast_to_string(value: Any, data_type: DataType, time_zone: dt.tzinfo | None) -> str | None:
    """Paimon's ``CAST(value AS STRING)`` of one field (``CastExecutors.resolveToString``)."""
    if value is None:
        return None
    root = data_type.root
    if isinstance(value, bool):
        return "true" if value else "false"
    if root in ("TIMESTAMP", "TIMESTAMP_LTZ") and isinstance(value, dt.datetime):
        if root == "TIMESTAMP_LTZ":  # stored as UTC, shown in the session zone
            value = value.replace(tzinfo=dt.UTC).astimezone(time_zone).replace(tzinfo=None)
        text = value.strftime("%Y-%m-%d %H:%M:%S")
        return text + _format_fraction(value.microsecond * 1000, data_type.precision or 0)
    if root == "TIME" and isinstance(value, dt.time):
        text = value.strftime("%H:%M:%S")
        return text + _format_fraction(value.microsecond * 1000, data_type.precision or 0)
    if root == "DATE" and isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, float):
        return java_float_string(value, single=root == "FLOAT")
    if isinstance(value, Decimal):
        return partition_value_string(value, data_type)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", errors="replace")
    return str(value)


def _row_string(values: Sequence[Any], types: Sequence[DataType], zone: dt.tzinfo | None) -> str:
    """Paimon's ``RowToStringCastRule``: ``{v1, v2}`` with ``null`` for nulls."""
    parts = [cast_to_string(v, t, zone) for v, t in zip(values, types)]
    return "{" + ", ".join("null" if p is None else p for p in parts) + "}"


def _object_string(value: Any, data_type: DataType) -> str:
    """Java ``toString()`` of the internal value (dates as day numbers, as Java prints them)."""
    if value is None:
        return "null"
    if data_type.is_nested:
        return str(value)
    text = partition_value_string(value, data_type)
    return "null" if text is None else text


def _java_order(name: str) -> bytes:
    return name.encode("utf-16-be")  # Java's String.compareTo order (TreeMap keys)


def _map_string(pairs: dict[str, str]) -> str:
    """A Java ``TreeMap.toString()``: ``{a=1, b=null}`` sorted by key."""
    return "{" + ", ".join(f"{k}={pairs[k]}" for k in sorted(pairs, key=_java_order)) + "}"


# ------------------------------------------------------------------------- simple tables


def _snapshots(table: FileStoreTable, zone: dt.tzinfo | None) -> list[tuple[Any, ...]]:
    return [
        (
            s.snapshot_id,
            s.schema_id,
            s.commit_user,
            s.commit_identifier,
            str(s.commit_kind.value),
            epoch_millis_to_local(s.time_millis, zone),
            s.base_manifest_list,
            s.delta_manifest_list,
            s.changelog_manifest_list,
            s.total_record_count,
            s.delta_record_count,
            s.changelog_record_count,
            s.watermark,
            s.next_row_id,
            s.operation,
            s.writer_version,
        )
        for s in table.snapshot_manager.snapshots()
    ]


def _tags(table: FileStoreTable, zone: dt.tzinfo | None) -> list[tuple[Any, ...]]:
    tags = table.tag_manager.list_tags()
    rows = []
    for name in sorted(tags, key=_java_order):
        tag = tags[name]
        s = tag.snapshot
        retained = tag.tag_time_retained
        rows.append(
            (
                name,
                s.snapshot_id,
                s.schema_id,
                epoch_millis_to_local(s.time_millis, zone),
                s.total_record_count,
                _to_millis(tag.tag_create_time),
                None if retained is None else duration_to_java_string(retained),
            )
        )
    return rows


def _flat_json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _schemas(table: FileStoreTable, zone: dt.tzinfo | None) -> list[tuple[Any, ...]]:
    return [
        (
            s.schema_id,
            _flat_json([data_field_to_json(f) for f in s.fields]),
            _flat_json(list(s.partition_keys)),
            _flat_json(list(s.primary_keys)),
            _flat_json(dict(s.options)),
            s.comment,
            epoch_millis_to_local(s.time_millis, zone),
        )
        for s in table.schema_manager.list_all()
    ]


def _options(table: FileStoreTable, zone: dt.tzinfo | None) -> list[tuple[Any, ...]]:
    latest = table.schema_manager.latest()
    options = (latest or table.schema).options
    return [(k, v) for k, v in options.items()]


def _branches(table: FileStoreTable, zone: dt.tzinfo | None) -> list[tuple[Any, ...]]:
    directory = f"{table.path.rstrip('/')}/{BRANCH_DIR}"
    rows = [
        (s.name[len(BRANCH_PREFIX) :], epoch_millis_to_local(s.mtime_ms, zone))
        for s in table.file_io.list_status(directory)
        if s.is_dir and s.name.startswith(BRANCH_PREFIX) and len(s.name) > len(BRANCH_PREFIX)
    ]
    return sorted(rows, key=lambda row: _java_order(row[0]))


def _statistics(
    table: FileStoreTable, snapshot: Snapshot, zone: dt.tzinfo | None
) -> list[tuple[Any, ...]]:
    """``StatisticTable``: the statistics of the latest (or travelled-to) snapshot, one row
    with the column statistics as Jackson prints them."""
    stats = read_statistics(table, snapshot)
    if stats is None:
        return []
    return [
        (
            stats.snapshot_id,
            stats.schema_id,
            stats.merged_record_count,
            stats.merged_record_size,
            jackson_json(stats.col_stats_json()),
        )
    ]


def _consumers(table: FileStoreTable, zone: dt.tzinfo | None) -> list[tuple[Any, ...]]:
    directory = f"{table.branch_root.rstrip('/')}/{CONSUMER_DIR}"
    rows = []
    for name in table.file_io.list_names(directory):
        if not name.startswith(CONSUMER_PREFIX) or len(name) == len(CONSUMER_PREFIX):
            continue
        try:
            data = json.loads(table.file_io.read_bytes(f"{directory}/{name}"))
        except FileNotFoundError:
            continue  # removed while listing, as Java skips it
        rows.append((name[len(CONSUMER_PREFIX) :], int(data["nextSnapshot"])))
    return sorted(rows, key=lambda row: _java_order(row[0]))


# ------------------------------------------------------------------ snapshot-based tables


def _partition_types(table: FileStoreTable) -> list[DataType]:
    return [f.type for f in table.schema.partition_fields]


def _manifests(
    table: FileStoreTable, snapshot: Snapshot, zone: dt.tzinfo | None
) -> list[tuple[Any, ...]]:
    types = _partition_types(table)
    rows = []
    for name in (
        snapshot.base_manifest_list,
        snapshot.delta_manifest_list,
        snapshot.changelog_manifest_list,
    ):
        if not name:
            continue
        for meta in table.manifest_list.read(name):
            stats = meta.partition_stats
            rows.append(
                (
                    meta.file_name,
                    meta.file_size,
                    meta.num_added_files,
                    meta.num_deleted_files,
                    meta.schema_id,
                    _stats_row_string(stats.min_values, types, zone),
                    _stats_row_string(stats.max_values, types, zone),
                    meta.min_row_id,
                    meta.max_row_id,
                )
            )
    return rows


def _stats_row_string(row: bytes, types: list[DataType], zone: dt.tzinfo | None) -> str | None:
    if not types or len(row) < 4 or row_arity(row) != len(types):
        return "{}" if not types else None
    return _row_string(deserialize_row(row, types), types, zone)


def _live_entries(table: FileStoreTable, snapshot: Snapshot) -> list[ManifestEntry]:
    entries = table.new_scan().read_entries(snapshot)
    # Java lists files partition by partition, bucket by bucket; keep manifest order within.
    return sorted(entries, key=lambda e: (e.partition, e.bucket))


def _partitions(
    table: FileStoreTable,
    snapshot: Snapshot | None,
    zone: dt.tzinfo | None,
    read: FallbackRead | None = None,
) -> list[tuple[Any, ...]]:
    """One row per partition with files; with ``read`` (``scan.fallback-branch`` or
    ``scan.primary-branch``) those of the other branch's partitions too, each from its own
    files (Paimon's ``FallbackReadScan.listPartitionEntries``)."""
    rows = []
    for side in branch_entries(table, snapshot, read):
        if side.snapshot is not None:
            rows += _partition_rows(side.table, side.snapshot, side.splits, zone)
    rows.sort(key=lambda row: _java_order(row[0]))
    return rows


def _partition_rows(
    table: FileStoreTable,
    snapshot: Snapshot,
    entries: Sequence[ManifestEntry],
    zone: dt.tzinfo | None,
) -> list[tuple[Any, ...]]:
    keys = list(table.schema.partition_keys)
    types = _partition_types(table)
    default_name = table.options.partition_default_name
    groups: dict[bytes, list[int]] = {}  # partition -> [records, bytes, files, last, buckets]
    for e in sorted(entries, key=lambda e: (e.partition, e.bucket)):
        created = e.file.creation_time_millis
        group = groups.get(e.partition)
        if group is None:
            groups[e.partition] = [
                e.file.row_count,
                e.file.file_size,
                1,
                -(2**63) if created is None else created,
                e.total_buckets,
            ]
            continue
        group[0] += e.file.row_count
        group[1] += e.file.file_size
        group[2] += 1
        if created is not None and created > group[3]:
            group[3] = created
        group[4] = e.total_buckets
    deleted = _deleted_record_counts(table, snapshot)
    rows = []
    for partition, (records, size, count, last, buckets) in groups.items():
        values = deserialize_row(partition, types) if types else ()
        spec = "/".join(
            f"{k}={default_name if v is None else cast_to_string(v, t, zone)}"
            for k, v, t in zip(keys, values, types)
        )
        rows.append(
            (
                spec,
                records,
                size,
                count,
                None if last == -(2**63) else _raw_local(last),
                None,
                None,
                None,
                None,
                buckets,
                False,
                deleted.get(partition, 0) if deleted is not None else 0,
            )
        )
    return rows


def _deleted_record_counts(table: FileStoreTable, snapshot: Snapshot) -> dict[bytes, int | None]:
    """Rows deleted by deletion vectors, per partition (None when a count is unknown)."""
    if not table.options.deletion_vectors_enabled or not snapshot.index_manifest:
        return {}
    result: dict[bytes, int | None] = {}
    for entry in table.index_manifest_file.read(snapshot.index_manifest):
        if entry.index_type != _DELETION_VECTORS or not entry.dv_ranges:
            continue
        if entry.partition in result and result[entry.partition] is None:
            continue
        total = result.get(entry.partition, 0)
        for dv in entry.dv_ranges:
            if dv.cardinality is None or total is None:
                total = None
                break
            total += dv.cardinality
        result[entry.partition] = total
    return result


class _FileStats:
    """Renders a data file's key and value stats against the table's current fields."""

    def __init__(self, table: FileStoreTable) -> None:
        self.table = table
        self.table_fields = list(table.schema.fields)
        self._schemas: dict[int, TableSchema] = {table.schema.schema_id: table.schema}
        self._layouts: dict[tuple[int, tuple[str, ...] | None], Any] = {}
        self._key_types: dict[int, list[DataType]] = {}

    def schema(self, schema_id: int) -> TableSchema:
        schema = self._schemas.get(schema_id)
        if schema is None:
            schema = self._schemas[schema_id] = self.table.schema_manager.schema(schema_id)
        return schema

    def key_types(self, schema_id: int) -> list[DataType]:
        types = self._key_types.get(schema_id)
        if types is None:
            schema = self.schema(schema_id)
            fields = schema.trimmed_primary_key_fields or list(schema.fields)
            types = self._key_types[schema_id] = [f.type for f in fields]
        return types

    def key_string(self, key: bytes, schema_id: int) -> str | None:
        """``Arrays.toString`` of the key fields; None for files without a key (append)."""
        if len(key) < 4 or row_arity(key) <= 0:
            return None
        types = self.key_types(schema_id)
        values = deserialize_row(key, types)
        return "[" + ", ".join(_object_string(v, t) for v, t in zip(values, types)) + "]"

    def _layout(
        self, schema_id: int, cols: tuple[str, ...] | None
    ) -> tuple[list[DataType], list[tuple[DataField, int | None, bool]]]:
        """Stats row types and, per table field: (field, index in the stats row, in file)."""
        layout = self._layouts.get((schema_id, cols))
        if layout is None:
            file_fields = list(self.schema(schema_id).fields)
            by_name = {f.name: f for f in file_fields}
            stats_fields = (
                file_fields if cols is None else [by_name[c] for c in cols if c in by_name]
            )
            position = {f.id: i for i, f in enumerate(stats_fields)}
            in_file = {f.id for f in file_fields}
            mapping = [(f, position.get(f.id), f.id in in_file) for f in self.table_fields]
            layout = self._layouts[(schema_id, cols)] = ([f.type for f in stats_fields], mapping)
        return layout

    def value_strings(self, f: DataFileMeta) -> tuple[str, str, str]:
        """(null counts, min values, max values) as Java's sorted map strings."""
        cols = None if f.value_stats_cols is None else tuple(f.value_stats_cols)
        types, mapping = self._layout(f.schema_id, cols)
        stats = f.value_stats
        mins: Sequence[Any] = ()
        maxs: Sequence[Any] = ()
        if types and len(stats.min_values) >= 4 and row_arity(stats.min_values) == len(types):
            mins = deserialize_row(stats.min_values, types)
            maxs = deserialize_row(stats.max_values, types)
        counts = stats.null_counts or ()
        nulls: dict[str, str] = {}
        lows: dict[str, str] = {}
        highs: dict[str, str] = {}
        for field, index, in_file in mapping:
            name = field.name
            if index is None or index >= len(mins):
                count: int | None = None if in_file else f.row_count
                lows[name] = highs[name] = "null"
            else:
                count = counts[index] if index < len(counts) else None
                lows[name] = _object_string(mins[index], types[index])
                highs[name] = _object_string(maxs[index], types[index])
            nulls[name] = "null" if count is None else str(count)
        return _map_string(nulls), _map_string(lows), _map_string(highs)


def _file_format(file_name: str) -> str:
    """``DataFilePathFactory.formatIdentifier``: the extension, skipping a compression one."""
    stem, _, extension = file_name.rpartition(".")
    if extension in _COMPRESSION_EXTENSIONS and "." in stem:
        return stem.rpartition(".")[2]
    return extension


def _files(
    table: FileStoreTable, snapshot: Snapshot, zone: dt.tzinfo | None
) -> list[tuple[Any, ...]]:
    types = _partition_types(table)
    paths = TableFiles(table)
    stats = _FileStats(table)
    partition_strings: dict[bytes, str] = {}
    rows = []
    for e in _live_entries(table, snapshot):
        f = e.file
        partition = partition_strings.get(e.partition)
        if partition is None:
            values = deserialize_row(e.partition, types) if types else ()
            partition = partition_strings[e.partition] = _row_string(values, types, zone)
        nulls, lows, highs = stats.value_strings(f)
        rows.append(
            (
                partition,
                e.bucket,
                paths.data_path(e),
                _file_format(f.file_name),
                f.schema_id,
                f.level,
                f.row_count,
                f.file_size,
                stats.key_string(f.min_key, f.schema_id),
                stats.key_string(f.max_key, f.schema_id),
                nulls,
                lows,
                highs,
                f.min_sequence_number,
                f.max_sequence_number,
                _raw_local(f.creation_time_millis),
                f.delete_row_count,
                None if f.file_source is None else _FILE_SOURCES.get(f.file_source),
                f.first_row_id,
                None if f.write_cols is None else list(f.write_cols),
            )
        )
    return rows


def _partition_string_of(table: FileStoreTable, zone: dt.tzinfo | None) -> Callable[[bytes], str]:
    """``CastExecutors.resolveToString(partitionType)``: ``{v1, v2}`` (``{}`` unpartitioned),
    decoded once per distinct partition."""
    types = _partition_types(table)
    cache: dict[bytes, str] = {}

    def render(partition: bytes) -> str:
        text = cache.get(partition)
        if text is None:
            values = deserialize_row(partition, types) if types else ()
            text = cache[partition] = _row_string(values, types, zone)
        return text

    return render


def _buckets(
    table: FileStoreTable, snapshot: Snapshot, zone: dt.tzinfo | None
) -> list[tuple[Any, ...]]:
    """``BucketsTable``: the live files per (partition, bucket), sorted by the partition
    string, then the bucket."""
    render = _partition_string_of(table, zone)
    groups: dict[tuple[bytes, int], list[int]] = {}  # -> [records, bytes, files, last]
    for e in _live_entries(table, snapshot):
        created = e.file.creation_time_millis
        group = groups.setdefault((e.partition, e.bucket), [0, 0, 0, -(2**63)])
        group[0] += e.file.row_count
        group[1] += e.file.file_size
        group[2] += 1
        if created is not None and created > group[3]:
            group[3] = created
    rows = [
        (
            render(partition),
            bucket,
            records,
            size,
            count,
            None if last == -(2**63) else _raw_local(last),
        )
        for (partition, bucket), (records, size, count, last) in groups.items()
    ]
    rows.sort(key=lambda row: (row[0].encode("utf-8"), row[1]))  # BinaryString order
    return rows


_KEY_RANGE_COLUMNS = tuple([c[0] for c in FILES].index(name) for name, _, _ in FILE_KEY_RANGES)


def _file_key_ranges(
    table: FileStoreTable, snapshot: Snapshot, zone: dt.tzinfo | None
) -> list[tuple[Any, ...]]:
    """``FileKeyRangesTable``: ``$files``' location, size and key columns of each file."""
    return [tuple(row[i] for i in _KEY_RANGE_COLUMNS) for row in _files(table, snapshot, zone)]


def _file_indexes(
    table: FileStoreTable, snapshot: Snapshot, zone: dt.tzinfo | None
) -> list[tuple[Any, ...]]:
    """``FileIndexesTable`` (latest Paimon): one row per column index of each live data file
    of ``$files``, read from the index container's header only: the manifest's embedded
    index (``EMBEDDED``) or the file's ``.index`` extra file beside it (``FILE``). Files
    without indexes give no rows.

    Raises:
        MetadataFormatError: a data file with two index files, or a container whose header
            cannot be read.
    """
    from paimon_core.format.file_index import INDEX_PATH_SUFFIX, read_index_metas

    render = _partition_string_of(table, zone)
    paths = TableFiles(table)
    file_io = table.file_io
    rows = []
    for e in _live_entries(table, snapshot):
        f = e.file
        data_path = paths.data_path(e)
        if f.embedded_index is not None:
            embedded = memoryview(f.embedded_index)
            position = [0]

            def read(n: int, data: memoryview = embedded, at: list[int] = position) -> bytes:
                chunk = bytes(data[at[0] : at[0] + n])
                at[0] += len(chunk)
                return chunk

            metas = read_index_metas(read, data_path)
            storage, index_path, container = "EMBEDDED", None, len(f.embedded_index)
        else:
            names = [n for n in f.extra_files if n.endswith(INDEX_PATH_SUFFIX)]
            if not names:
                continue
            if len(names) > 1:
                raise MetadataFormatError(
                    f"Found more than one file index for data file {f.file_name}: "
                    + ", ".join(names)
                )
            index_path = data_path.rsplit("/", 1)[0] + "/" + names[0]
            container = file_io.get_status(index_path).size
            with file_io.open_input(index_path) as stream:
                metas = read_index_metas(stream.read, index_path)
            storage = "FILE"
        for meta in metas:
            rows.append(
                (
                    render(e.partition),
                    e.bucket,
                    data_path,
                    f.file_size,
                    f.row_count,
                    f.schema_id,
                    meta.column_name,
                    meta.index_type,
                    storage,
                    index_path,
                    meta.size_in_bytes,
                    container,
                    meta.empty,
                )
            )
    return rows


def _table_indexes(
    table: FileStoreTable, snapshot: Snapshot, zone: dt.tzinfo | None
) -> list[tuple[Any, ...]]:
    """``TableIndexesTable``: every entry of the snapshot's index manifest, in file order."""
    if not snapshot.index_manifest:
        return []
    render = _partition_string_of(table, zone)
    field_names = {f.id: f.name for f in table.schema.fields}
    rows = []
    for entry in table.index_manifest_file.read(snapshot.index_manifest):
        ranges = None
        if entry.dv_ranges is not None:
            ranges = [
                {
                    "f0": dv.data_file_name,
                    "f1": dv.offset,
                    "f2": dv.length,
                    "_CARDINALITY": dv.cardinality,
                }
                for dv in entry.dv_ranges
            ]
        meta = entry.global_index
        start = end = field_id = field_name = None
        if meta is not None:
            start, end = meta.get("_ROW_RANGE_START"), meta.get("_ROW_RANGE_END")
            field_id = meta.get("_INDEX_FIELD_ID")
            ids = [field_id, *(meta.get("_EXTRA_FIELD_IDS") or ())]
            if all(i in field_names for i in ids):  # a dropped column leaves the name empty
                field_name = ",".join(field_names[i] for i in ids)
        rows.append(
            (
                render(entry.partition),
                entry.bucket,
                entry.index_type,
                entry.file_name,
                entry.file_size,
                entry.row_count,
                ranges,
                start,
                end,
                field_id,
                field_name,
            )
        )
    return rows


def _aggregation_fields(table: FileStoreTable, zone: dt.tzinfo | None) -> list[tuple[Any, ...]]:
    """``AggregationFieldsTable``: each field of the latest schema with the values and the
    keys of its ``fields.<name>.<option>`` options, as Java lists print (``[sum]``)."""
    schema = table.schema_manager.latest() or table.schema
    values: dict[str, list[str]] = {}
    keys: dict[str, list[str]] = {}
    for key, value in schema.options.items():
        parts = key.split(".")
        while parts and not parts[-1]:
            parts.pop()  # Java's String.split drops trailing empty strings
        if len(parts) > 2 and parts[0] == "fields":
            values.setdefault(parts[1], []).append(value)
            keys.setdefault(parts[1], []).append(key)
    return [
        (
            f.name,
            sql_string(f.type),
            "[" + ", ".join(values.get(f.name, ())) + "]",
            "[" + ", ".join(keys.get(f.name, ())) + "]",
            f.description,
        )
        for f in schema.fields
    ]


_Rows = list[tuple[Any, ...]]
_TABLES: dict[str, Callable[[FileStoreTable, dt.tzinfo | None], _Rows]] = {
    "snapshots": _snapshots,
    "options": _options,
    "schemas": _schemas,
    "tags": _tags,
    "branches": _branches,
    "consumers": _consumers,
    "aggregation_fields": _aggregation_fields,
}
_SNAPSHOT_TABLES: dict[str, Callable[[FileStoreTable, Snapshot, dt.tzinfo | None], _Rows]] = {
    "manifests": _manifests,
    "partitions": _partitions,
    "buckets": _buckets,
    "files": _files,
    "file_indexes": _file_indexes,
    "file_key_ranges": _file_key_ranges,
    "statistics": _statistics,
    "table_indexes": _table_indexes,
}
assert set(_TABLES) | set(_SNAPSHOT_TABLES) == set(SYSTEM_TABLES)
assert set(_SNAPSHOT_TABLES) == SNAPSHOT_SYSTEM_TABLES

"""Writing Arrow data as Paimon data files and commit messages (runs on Spark executors too).

A ``TableWrite`` buffers what it is given, then groups rows by partition and bucket and
writes data files (Parquet, ORC or Avro: ``format.data_files``) the way Java does: append
tables get the table columns only; primary-key tables get ``_KEY_<k>``, ``_SEQUENCE_NUMBER``,
``_VALUE_KIND`` and then the columns, sorted by key with one row per key, sequence numbers
continuing those of the bucket. Everything it needs
comes from the table path and schema, so it carries no driver state.

With ``changelog-producer`` = ``input`` a primary-key write also writes every input row
unmerged (row kind and sequence number kept, in key order) as changelog files
``changelog-<uuid>-0.<format>`` in the bucket directory, as Java's ``MergeTreeWriter`` does;
they travel in the messages' ``changelog_files``. An overwrite writes none: Paimon's commit
would drop them.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.exceptions import InvalidArgument, UnsupportedFeature
from paimon_core.format.binary_row import serialize_row
from paimon_core.format.commit_message import CommitMessage
from paimon_core.format.data_file_index import (
    DataFileIndexWriter,
    index_path_of,
    store_container,
)
from paimon_core.format.data_files import (
    WriteFormat,
    check_fields,
    write_data_file,
    write_format,
)
from paimon_core.format.default_value import field_defaults
from paimon_core.format.external_paths import ExternalPathProvider, ExternalPaths
from paimon_core.format.features import Access
from paimon_core.format.file_index import FileIndexOptions, file_index_options
from paimon_core.format.manifest import (
    EMPTY_ROW,
    EMPTY_STATS,
    DataFileMeta,
    IndexManifestEntry,
    ManifestEntry,
)
from paimon_core.format.merge_options import MergeOptions
from paimon_core.format.paths import POSTPONE_BUCKET
from paimon_core.format.stats import (
    FooterStats,
    StatsMode,
    collect_stats,
    dense_value_stats,
    key_stats_modes,
    to_simple_stats,
    value_stats_modes,
)
from paimon_core.format.types import (
    BIGINT,
    PARQUET_FIELD_ID,
    SYSTEM_FIELD_ID_START,
    TINYINT,
    DataField,
    to_arrow_schema,
)
from paimon_core.operations.bucket import assign_buckets, hash_keys
from paimon_core.operations.dynamic_bucket import DynamicBucketIndex
from paimon_core.operations.merge.base import ADD_KINDS, merge_order
from paimon_core.operations.merge.factory import key_value_merge
from paimon_core.operations.read import KEY_PREFIX, SEQUENCE_NUMBER, VALUE_KIND, data_file_path
from paimon_core.operations.row_tracking import (
    ROW_ID,
    ROW_ID_FIELD_ID,
    ROW_TRACKING_COLUMNS,
    SEQUENCE_NUMBER_FIELD_ID,
    row_tracking_enabled,
)

if TYPE_CHECKING:
    import pyarrow.parquet as pq

    from paimon_core.format.options import CoreOptions
    from paimon_core.format.schema import TableSchema
    from paimon_core.format.snapshot import Snapshot
    from paimon_core.table import FileStoreTable

KEY_FIELD_ID_START = SYSTEM_FIELD_ID_START  # _KEY_<k> has id 1073741823 + id(k)
SEQUENCE_NUMBER_ID = 2147483646
VALUE_KIND_ID = 2147483645
WRITE_BUFFER_SIZE = 256 * 1024 * 1024
_RETRACT = pa.Array.from_buffers(pa.int8(), 2, [None, pa.py_buffer(bytes([1, 3]))])  # -U, -D
_EPOCH = dt.datetime(1970, 1, 1)
T = TypeVar("T")
WriteCompactionHook = Callable[
    [list[CommitMessage], "Snapshot | None", bool, "Callable[[str], None] | None"],
    list[CommitMessage],
]
"""Compacts the buckets of a writer's messages (messages, base snapshot, whether the bucket's
old files are ignored (an overwrite, or ``ignore_previous_files``), the writer's new-file
callback) and returns them with their ``compact_*`` fields set."""


def _python(value: Any) -> Any:
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(dt.UTC).replace(tzinfo=None)
    return value


def _row_at(table: pa.Table, names: Sequence[str], index: int) -> list[Any]:
    return [_python(table.column(n)[index].as_py()) for n in names]


def local_millis_as_utc() -> int:
    """Java's ``LocalDateTime.now()`` stored as timestamp-millis: local wall clock as if UTC."""
    return (dt.datetime.now() - _EPOCH) // dt.timedelta(milliseconds=1)


def _factorize(columns: Sequence[pa.ChunkedArray | pa.Array]) -> np.ndarray:
    """One dense int code per distinct combination of the columns' values (nulls included)."""
    codes = np.zeros(len(columns[0]) if columns else 0, dtype=np.int64)
    for column in columns:
        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks()
        encoded = column.dictionary_encode()
        width = len(encoded.dictionary) + 1
        indices = encoded.indices.fill_null(width - 1).to_numpy(zero_copy_only=False)
        codes = np.unique(codes * width + indices, return_inverse=True)[1].reshape(-1)
    return codes


def thin_mode(options: CoreOptions) -> bool:
    """``data-file.thin-mode``: primary-key files without the ``_KEY_<k>`` columns, which
    repeat value columns (Java's ``KeyValueThinDataFileWriterImpl``; every key of a table
    made here is a value column, Java's ``supportsThinMode``)."""
    return options.get_bool("data-file.thin-mode", False)


def _file_schema(schema: TableSchema, arrow_schema: pa.Schema, thin: bool = False) -> pa.Schema:
    """Columns of a data file, with Java's Parquet field ids (``KeyValue`` layout for PK;
    ``thin``: without the key columns)."""
    if not schema.primary_keys:
        return arrow_schema
    system = []
    for name in () if thin else schema.trimmed_primary_keys:
        f = arrow_schema.field(name)
        key_id = KEY_FIELD_ID_START + schema.field(name).id
        system.append(
            pa.field(f"{KEY_PREFIX}{name}", f.type, False, {PARQUET_FIELD_ID: str(key_id).encode()})
        )
    system.append(
        pa.field(
            SEQUENCE_NUMBER,
            pa.int64(),
            False,
            {PARQUET_FIELD_ID: str(SEQUENCE_NUMBER_ID).encode()},
        )
    )
    system.append(
        pa.field(VALUE_KIND, pa.int8(), False, {PARQUET_FIELD_ID: str(VALUE_KIND_ID).encode()})
    )
    return pa.schema([*system, *arrow_schema])


def _file_fields(schema: TableSchema, thin: bool = False) -> list[DataField]:
    """The Paimon fields of a data file, in ``_file_schema``'s order (ORC/Avro types)."""
    if not schema.primary_keys:
        return list(schema.fields)
    keys = (
        []
        if thin
        else [
            DataField(
                KEY_FIELD_ID_START + f.id,
                f"{KEY_PREFIX}{f.name}",
                dataclasses.replace(f.type, nullable=False),
            )
            for f in (schema.field(k) for k in schema.trimmed_primary_keys)
        ]
    )
    system = [
        DataField(SEQUENCE_NUMBER_ID, SEQUENCE_NUMBER, BIGINT(False)),
        DataField(VALUE_KIND_ID, VALUE_KIND, TINYINT(False)),
    ]
    return [*keys, *system, *schema.fields]


@dataclass(frozen=True, slots=True)
class _FileSpec:
    """How one kind of file is written: data files, or changelog files (Java's
    ``WriteFormatKey``: ``changelog-file.prefix``, ``.format``, ``.compression`` and
    ``.stats-mode`` win over the data files' settings)."""

    prefix: str
    format: WriteFormat
    value_modes: list[StatsMode]
    key_modes: list[StatsMode]


@dataclass(frozen=True, slots=True)
class _Layout:
    """What a writer derives from a schema and its options alone."""

    arrow_schema: pa.Schema
    file_schema: pa.Schema
    file_fields: list[DataField]
    format: WriteFormat
    defaults: dict[str, pa.Scalar]
    value_modes: list[StatsMode]
    key_modes: list[StatsMode]
    file_index: FileIndexOptions


_LAYOUTS: dict[tuple[int, int], tuple[TableSchema, CoreOptions, _Layout]] = {}
_LAYOUTS_MAX = 64


def _thin_key_modes(
    value_modes: list[StatsMode], names: list[str], keys: list[str]
) -> list[StatsMode]:
    """Key stats of a thin file: its key columns' value stats (Java's ``keyStatMapping``)."""
    return [value_modes[names.index(k)] for k in keys]


def _layout(schema: TableSchema, options: CoreOptions) -> _Layout:
    """The ``_Layout`` of ``schema`` under ``options``, made once per pair of objects: the
    handles of one table share both (``FileStoreTable.options``), and a user's script opens
    a writer per commit.

    Raises:
        UnsupportedFeature: a format, compression or column this writer cannot write.
    """
    key = (id(schema), id(options))
    cached = _LAYOUTS.get(key)
    if cached is not None and cached[0] is schema and cached[1] is options:
        return cached[2]
    fields = list(schema.fields)
    names = [f.name for f in fields]
    arrow_schema = to_arrow_schema(fields)
    primary_key = bool(schema.primary_keys)
    file_format = write_format(options, primary_key, level=0)
    check_fields(file_format, fields)
    thin = primary_key and thin_mode(options)
    keys = list(schema.trimmed_primary_keys) if primary_key else []
    value_modes = value_stats_modes(options, names)
    layout = _Layout(
        arrow_schema=arrow_schema,
        file_schema=_file_schema(schema, arrow_schema, thin),
        file_fields=_file_fields(schema, thin),
        format=file_format,
        defaults=field_defaults(fields),
        value_modes=value_modes,
        key_modes=(
            _thin_key_modes(value_modes, names, keys)
            if thin
            else key_stats_modes(options, keys, file_format.name)
        ),
        file_index=file_index_options(options),
    )
    if len(_LAYOUTS) >= _LAYOUTS_MAX:
        _LAYOUTS.clear()
    _LAYOUTS[key] = (schema, options, layout)  # both held: their ids stay unique
    return layout


_ROW_KINDS = pa.array(["+I", "-U", "+U", "-D"])
"""RowKind short strings by their byte value."""


def _row_kind_field(schema: TableSchema, options: CoreOptions) -> str | None:
    """The column ``rowkind.field`` names (Java's ``RowKindGenerator``), or None.

    Raises:
        InvalidArgument: the column does not exist or is not a string.
    """
    name = options.get_str("rowkind.field")
    if name is None:
        return None
    field = next((f for f in schema.fields if f.name == name), None)
    if field is None:
        raise InvalidArgument(f"Can not find rowkind field '{name}' ('rowkind.field') in the table")
    if field.type.root not in ("CHAR", "VARCHAR"):
        raise InvalidArgument(
            f"'rowkind.field' = '{name}' must be a string column, but it is {field.type.root}"
        )
    return name


def _kinds_of(column: pa.ChunkedArray, name: str) -> pa.Array:
    """Row kinds (int8) of the ``+I``/``-U``/``+U``/``-D`` strings of ``column``.

    Raises:
        InvalidArgument: a null or another string.
    """
    values = column.combine_chunks()
    if values.null_count:
        raise InvalidArgument(f"Row kind cannot be null (column '{name}', 'rowkind.field')")
    kinds = pc.index_in(values, value_set=_ROW_KINDS)
    if kinds.null_count:
        bad = values.filter(pc.is_null(kinds))[0].as_py()
        raise InvalidArgument(
            f"Unsupported row kind '{bad}' in column '{name}' ('rowkind.field'): "
            "expected +I, -U, +U or -D"
        )
    return kinds.cast(pa.int8())


def _retract_filter(schema: TableSchema, options: CoreOptions) -> pa.Array | None:
    """The row kinds a write drops unwritten (Java's ``RowKindFilter``): -U and -D with
    ``ignore-delete`` (or its merge-engine fallback keys), -U with ``ignore-update-before``;
    None when nothing is dropped."""
    merge = MergeOptions.of(options, [f.name for f in schema.fields], schema.primary_keys)
    if merge.ignore_delete:
        return _RETRACT
    if options.get_bool("ignore-update-before", False):
        return pa.array([1], pa.int8())
    return None


def _append_kinds(kinds: pa.Array | None, is_pk: bool) -> pa.Array | None:
    """``kinds`` for a primary-key table; None for an append table, whose rows must all be
    additions (+I, +U), as Java's append writer requires.

    Raises:
        InvalidArgument: a retraction (-U, -D) for an append table.
    """
    if is_pk or kinds is None:
        return kinds
    if len(kinds) and not pc.all(pc.is_in(kinds, value_set=ADD_KINDS)).as_py():
        raise InvalidArgument("Append tables only take inserts (+I, +U): they have no primary key")
    return None


class _PostponeBuckets:
    """The bucket counts of a postpone-bucket table's partitions (``bucket`` = -2), written as
    Paimon-Spark's batch writes do by default (``postpone.batch-write-fixed-bucket``):
    straight into real buckets, write-only (level-0 files, no compaction), each partition
    with the bucket count of its files in the base snapshot, else
    ``postpone.default-bucket-num`` (1). Java's ``PostponeBucketAssigner``."""

    def __init__(
        self, table: FileStoreTable, overwrite: bool, base: Callable[[], Snapshot | None]
    ) -> None:
        """Raises:
        UnsupportedFeature: ``postpone.batch-write-fixed-bucket`` = false (writes into
            ``bucket-postpone``), not implemented.
        InvalidArgument: a ``postpone.default-bucket-num`` below 1."""
        options = table.options
        if not options.get_bool("postpone.batch-write-fixed-bucket", True):
            raise UnsupportedFeature(
                f"Cannot write to table {table.identifier}: 'postpone.batch-write-fixed-"
                "bucket' = 'false' (writing into bucket-postpone) is not supported yet"
            )
        default = options.get_int("postpone.default-bucket-num", 1) or 1
        if default <= 0:
            raise InvalidArgument(f"Invalid 'postpone.default-bucket-num' = '{default}'")
        self.table = table
        self.overwrite = overwrite
        self.default = default
        self._base = base
        self._counts: dict[bytes, int] = {}

    def count(self, partition: bytes) -> int:
        """The bucket count of ``partition``: its real buckets' ``total_buckets`` in the base
        snapshot (none after an overwrite), else the default.

        Raises:
            InvalidArgument: the partition's files disagree on it.
        """
        count = self._counts.get(partition)
        if count is not None:
            return count
        count = self.default
        snapshot = self._base()
        if snapshot is not None and not self.overwrite:
            from paimon_core.operations.scan import TableScan

            known = {
                e.total_buckets
                for e in TableScan(self.table).read_entries(snapshot, partitions={partition})
                if e.bucket >= 0 and e.total_buckets > 0
            }
            if len(known) > 1:
                raise InvalidArgument(
                    f"Partition of table {self.table.identifier} has different totalBuckets "
                    f"{sorted(known)}"
                )
            count = known.pop() if known else count
        self._counts[partition] = count
        return count


class TableWrite:
    """Turns Arrow data into data files of ``table``; ``prepare_commit`` returns the messages."""

    def __init__(
        self,
        table: FileStoreTable,
        overwrite: bool = False,
        *,
        base_snapshot: Snapshot | Literal[False] | None = False,
        on_new_file: Callable[[str], None] | None = None,
        compaction: WriteCompactionHook | None = None,
        ignore_previous_files: bool = False,
        row_tracking: bool = False,
    ) -> None:
        """``base_snapshot``: the snapshot sequences and HASH indexes continue from (None: an
        empty table; by default the latest when first needed), so that the writers of one
        distributed statement agree. ``on_new_file`` is told each path before it is created,
        so that a file of a task attempt that dies or loses can still be found and removed.

        ``ignore_previous_files`` (Java's ``withIgnorePreviousFiles``): the buckets' live
        files are not restored, so sequence numbers start at 0 and the compaction sees only
        the new files; the HASH index of a dynamic-bucket table still continues (Java would
        restore none and write a bucket index of the new keys alone, losing the others).

        ``row_tracking`` (a row-tracking table's rows that keep their ids: Java's
        ``withWriteType(rowTypeWithRowTracking)``): the data also has ``_ROW_ID`` (not null)
        and ``_SEQUENCE_NUMBER`` (null: the committing snapshot's), written into the files
        after the columns (``_WRITE_COLS`` names them all); a file's sequence bounds are
        its values' (min 0 when all are null, max 0 when any is: the commit assigns them).

        Raises:
            UnsupportedFeature: a table feature this writer lacks (``features``).
            InvalidArgument: ``row_tracking`` on a table without row tracking."""
        table.check_supported(Access.WRITE)  # row tracking, BLOB columns, ...: before any file
        self.table = table
        self.overwrite = overwrite
        self.ignore_previous_files = ignore_previous_files
        self._on_new_file = on_new_file
        if row_tracking and (table.is_primary_key_table or not row_tracking_enabled(table.options)):
            raise InvalidArgument(
                f"Table {table.identifier or table.path} has no row tracking "
                "('row-tracking.enabled'): its rows have no _ROW_ID to keep"
            )
        self.row_tracking = row_tracking
        schema = table.schema
        options = table.options
        self.fields: list[DataField] = list(schema.fields)
        self.names = [f.name for f in self.fields]
        layout = _layout(schema, options)
        self.arrow_schema = layout.arrow_schema
        # Paimon's DefaultValueRow: a NULL of a column with a default is written as the default.
        self.defaults = layout.defaults
        self.is_pk = bool(schema.primary_keys)
        self.partition_keys = list(schema.partition_keys)
        self.partition_types = [f.type for f in schema.partition_fields]
        self.key_names = list(schema.trimmed_primary_keys) if self.is_pk else []
        self.key_types = [schema.field(k).type for k in self.key_names]
        # Repeated keys of one write merge with the table's merge engine before they reach a
        # file (Java's write buffer), so files keep one row per key as Paimon's do.
        self.merge = key_value_merge(schema) if self.is_pk else None
        self.merge_engine = options.merge_engine if self.is_pk else "deduplicate"
        self.row_kind_field = _row_kind_field(schema, options)
        self._retract_filter = _retract_filter(schema, options)
        # This writer creates level-0 files; ``compaction`` (given by ``FileStoreTable.
        # new_write``) compacts the buckets written before the messages are handed out.
        self._compaction = compaction
        # 'changelog-producer' = 'input': every write also writes its input rows as
        # changelog files (Java's MergeTreeWriter); an overwrite's would never be committed.
        self.input_changelog = (
            self.is_pk and options.changelog_producer == "input" and not overwrite
        )
        self.format = layout.format
        self._init_buckets()
        self.file_schema = layout.file_schema
        self.thin = self.is_pk and thin_mode(options)
        self.file_fields = layout.file_fields
        self.write_cols: tuple[str, ...] | None = None
        if row_tracking:
            tracking = [
                DataField(ROW_ID_FIELD_ID, ROW_ID, BIGINT(False)),
                DataField(SEQUENCE_NUMBER_FIELD_ID, SEQUENCE_NUMBER, BIGINT(True)),
            ]
            self.file_fields = [*self.file_fields, *tracking]
            self.file_schema = to_arrow_schema(self.file_fields)
            self.write_cols = (*self.names, *ROW_TRACKING_COLUMNS)
        self.value_modes = layout.value_modes
        self.key_modes = layout.key_modes
        self.file_index = layout.file_index
        self.dense_stats = options.stats_dense_store
        self.target_file_size = options.target_file_size(self.is_pk)
        self.buffer_size = options.get_memory_size("write-buffer-size", WRITE_BUFFER_SIZE)
        self.file_prefix = options.data_file_prefix
        # 'data-file.external-paths' with a strategy: new files go there (``_EXTERNAL_PATH``).
        self.external_paths = ExternalPaths.of(options)
        self._external: dict[tuple[bytes, int], ExternalPathProvider] = {}
        self.file_suffix = self.format.suffix
        self._pending: list[tuple[pa.Table, pa.Array | None]] = []
        self._pending_bytes = 0
        self._files: dict[tuple[bytes, int], list[DataFileMeta]] = {}
        self._changelog: dict[tuple[bytes, int], list[DataFileMeta]] = {}
        self._specs: dict[tuple[int, bool], _FileSpec] = {
            (0, False): _FileSpec(self.file_prefix, self.format, self.value_modes, self.key_modes)
        }
        self._values: dict[bytes, tuple] = {}
        self._written: list[str] = []
        self._next_seq: dict[tuple[bytes, int], int] = {}
        self._restored: set[bytes] = set()
        self._base: Snapshot | None = base_snapshot or None
        self._base_read = base_snapshot is not False
        self._dynamic: DynamicBucketIndex | None = None
        # dynamic buckets: the live files of partitions whose HASH index is not loaded yet
        self._live_files: dict[bytes, list[ManifestEntry]] = {}

    def _init_buckets(self) -> None:
        schema, options = self.table.schema, self.table.options
        self.num_buckets = options.bucket
        if self.num_buckets == 0 or self.num_buckets < -2:
            raise InvalidArgument(f"Invalid 'bucket' = '{self.num_buckets}'")
        self.mode = "fixed" if self.num_buckets > 0 else "dynamic" if self.is_pk else "unaware"
        if self.num_buckets == POSTPONE_BUCKET and self.is_pk:
            self.mode = "postpone"
            self._postpone = _PostponeBuckets(self.table, self.overwrite, self._base_snapshot)
            self._compaction = None  # write-only, as Java's tableForFixBucketWrite
        self.total_buckets = self.num_buckets if self.mode == "fixed" else -1
        if self.mode == "dynamic" and not set(self.partition_keys) <= set(schema.primary_keys):
            raise UnsupportedFeature(
                "Cross-partition upsert (a primary key without all partition keys, 'bucket' = "
                "'-1') is not supported: include the partition keys in the primary key or set "
                "a fixed 'bucket'"
            )
        self.bucket_keys: list[str] = []
        if self.mode in ("fixed", "postpone"):
            self.bucket_keys = list(options.bucket_key) or list(self.key_names)
            if not self.bucket_keys:
                raise InvalidArgument(
                    "You should define a 'bucket-key' for bucketed append mode ('bucket' > 0)"
                )
            names = {f.name for f in schema.fields}
            unknown = [k for k in self.bucket_keys if k not in names]
            if unknown:
                raise InvalidArgument(f"'bucket-key' names unknown columns {unknown}")
        self.bucket_key_types = [schema.field(k).type for k in self.bucket_keys]

    # ------------------------------------------------------------------------- input

    def write_arrow(
        self, data: pa.Table | pa.RecordBatch, row_kinds: pa.Array | None = None
    ) -> None:
        """Buffer ``data`` (all table columns, by name); ``row_kinds`` are int8 RowKinds per row.

        Raises:
            InvalidArgument: missing or unknown columns, nulls in NOT NULL columns without a
                default, bad row kinds.
        """
        if isinstance(data, pa.RecordBatch):
            data = pa.Table.from_batches([data])
        table = self._conform(data)
        if self.row_kind_field is not None:
            row_kinds = _kinds_of(table.column(self.row_kind_field), self.row_kind_field)
        kinds = self._conform_kinds(row_kinds, table.num_rows)
        if kinds is not None and self._retract_filter is not None:
            # Java's RowKindFilter ('ignore-delete', 'ignore-update-before'): before anything.
            keep = pc.invert(pc.is_in(kinds, value_set=self._retract_filter))
            table, kinds = table.filter(keep), kinds.filter(keep)
        kinds = _append_kinds(kinds, self.is_pk)
        if table.num_rows == 0:
            return
        self._pending.append((table, kinds))
        self._pending_bytes += table.nbytes
        if self._pending_bytes >= self.buffer_size:
            self._guarded(self._flush)

    def _conform(self, data: pa.Table) -> pa.Table:
        names = list(self.write_cols or self.names)
        given = set(data.column_names)
        missing = [n for n in names if n not in given]
        extra = [n for n in data.column_names if n not in set(names)]
        if missing or extra:
            raise InvalidArgument(
                f"Data does not match the table columns {names}: missing {missing}, unknown {extra}"
            )
        columns = []
        for field in self.arrow_schema:
            column = data.column(field.name)
            if column.type != field.type:
                try:
                    column = column.cast(field.type)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as err:
                    raise InvalidArgument(
                        f"Column '{field.name}' of type {column.type} cannot be written as "
                        f"{field.type}: {err}"
                    ) from None
            if column.null_count and field.name in self.defaults:
                column = pc.fill_null(column, self.defaults[field.name].cast(field.type))
            if not field.nullable and column.null_count:
                raise InvalidArgument(f"Cannot write null to non-null column '{field.name}'")
            columns.append(column)
        if self.row_tracking:
            return pa.Table.from_arrays(
                [*columns, *self._tracking_columns(data)], schema=self.file_schema
            )
        return pa.Table.from_arrays(columns, schema=self.arrow_schema)

    def _tracking_columns(self, data: pa.Table) -> list[pa.ChunkedArray]:
        """``_ROW_ID`` (no nulls) and ``_SEQUENCE_NUMBER`` of ``data`` as BIGINT."""
        columns = []
        for name in ROW_TRACKING_COLUMNS:
            column = data.column(name)
            try:
                column = column.cast(pa.int64())
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as err:
                raise InvalidArgument(f"Column '{name}' must be BIGINT: {err}") from None
            if name == ROW_ID and column.null_count:
                raise InvalidArgument("Cannot write null to non-null column '_ROW_ID'")
            columns.append(column)
        return columns

    def _conform_kinds(self, row_kinds: pa.Array | None, n: int) -> pa.Array | None:
        if row_kinds is None:
            return None
        kinds = pa.chunked_array([row_kinds]) if isinstance(row_kinds, pa.Array) else row_kinds
        kinds = kinds.cast(pa.int8()).combine_chunks()
        if len(kinds) != n:
            raise InvalidArgument(f"{len(kinds)} row kinds given for {n} rows")
        if kinds.null_count or (
            n and not pc.all(pc.is_in(kinds, pa.array([0, 1, 2, 3], pa.int8()))).as_py()
        ):
            raise InvalidArgument("Row kinds must be 0 (+I), 1 (-U), 2 (+U) or 3 (-D)")
        return kinds

    # ------------------------------------------------------------------------ output

    def prepare_commit(self) -> list[CommitMessage]:
        """Write what is buffered; one message per (partition, bucket) written since last time."""
        return self._guarded(self._prepare_commit)

    def _prepare_commit(self) -> list[CommitMessage]:
        self._flush()
        index: dict[tuple[bytes, int], tuple[IndexManifestEntry, IndexManifestEntry | None]] = {}
        if self._dynamic is not None:
            index = self._dynamic.prepare_commit(self._track)
        messages = []
        for key in sorted(set(self._files) | set(self._changelog) | set(index)):
            partition, bucket = key
            new_index, old_index = index.get(key, (None, None))
            messages.append(
                CommitMessage(
                    partition,
                    bucket,
                    self._postpone.count(partition)
                    if self.mode == "postpone"
                    else self.total_buckets,
                    new_files=tuple(self._files.get(key, ())),
                    new_index_files=(new_index,) if new_index else (),
                    deleted_index_files=(old_index,) if old_index else (),
                    changelog_files=tuple(self._changelog.get(key, ())),
                )
            )
        if self._compaction is not None and messages:
            messages = self._compaction(
                messages,
                self._base_snapshot(),
                self.overwrite or self.ignore_previous_files,
                self._on_new_file,
            )
        self._files.clear()
        self._changelog.clear()
        self._written.clear()  # the files now belong to the messages
        return messages

    def close(self) -> None:
        """Drop buffered rows and delete files not yet handed out by ``prepare_commit``."""
        self._pending.clear()
        self._pending_bytes = 0
        self._abort()

    def __enter__(self) -> TableWrite:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _track(self, path: str) -> None:
        if self._on_new_file is not None:
            self._on_new_file(path)
        self._written.append(path)

    def _abort(self) -> None:
        io = self.table.file_io
        for path in self._written:
            try:
                io.delete(path)
            except OSError:
                pass
        self._written.clear()
        self._files.clear()
        self._changelog.clear()

    def _guarded(self, action: Callable[[], T]) -> T:
        try:
            return action()
        except BaseException:
            self._pending.clear()
            self._pending_bytes = 0
            self._abort()
            raise

    # ---------------------------------------------------------------------- grouping

    def _flush(self) -> None:
        if not self._pending:
            return
        pending, self._pending, self._pending_bytes = self._pending, [], 0
        data = pending[0][0] if len(pending) == 1 else pa.concat_tables([t for t, _ in pending])
        if self.mode == "unaware" and not self.partition_keys:
            # One partition and one bucket (a user's small append): nothing to group.
            partition = serialize_row([], [])
            self._values.setdefault(partition, ())
            self._restored.add(partition)  # unaware append writers start at sequence 0
            self._write_bucket(partition, 0, data, None)
            return
        kinds = None
        if self.is_pk:
            kinds = pa.concat_arrays(
                [
                    k if k is not None else pa.array(np.zeros(t.num_rows, np.int8))
                    for t, k in pending
                ]
            )
        n = data.num_rows
        parts = (
            _factorize([data.column(k) for k in self.partition_keys])
            if self.partition_keys
            else np.zeros(n, np.int64)
        )
        num_parts = int(parts.max()) + 1
        first_rows = np.full(num_parts, n, np.int64)
        np.minimum.at(first_rows, parts, np.arange(n))
        partitions = []
        for row in first_rows:
            values = tuple(_row_at(data, self.partition_keys, int(row)))
            binary = serialize_row(list(values), self.partition_types)
            self._values.setdefault(binary, values)
            partitions.append(binary)
        self._restore_sequences([p for p in set(partitions) if p not in self._restored])
        buckets = self._buckets(data, parts, partitions)
        group = parts * (int(buckets.max()) + 1) + buckets
        order = np.argsort(group, kind="stable")
        bounds = np.flatnonzero(np.diff(group[order])) + 1
        if not len(bounds):  # one (partition, bucket): the rows as they are
            self._write_bucket(partitions[int(parts[0])], int(buckets[0]), data, kinds)
            return
        for rows in np.split(order, bounds):
            first = int(rows[0])
            indices = pa.array(rows)
            self._write_bucket(
                partitions[int(parts[first])],
                int(buckets[first]),
                data.take(indices),
                kinds.take(indices) if kinds is not None else None,
            )

    def _buckets(self, data: pa.Table, parts: np.ndarray, partitions: list[bytes]) -> np.ndarray:
        n = data.num_rows
        if self.mode == "unaware":
            return np.zeros(n, np.int64)
        if self.mode == "fixed":
            columns = [data.column(k) for k in self.bucket_keys]
            return np.asarray(
                assign_buckets(columns, self.bucket_key_types, self.num_buckets), dtype=np.int64
            )
        if self.mode == "postpone":
            buckets = np.zeros(n, np.int64)
            for code, partition in enumerate(partitions):
                rows = np.flatnonzero(parts == code)
                columns = [data.column(k).take(pa.array(rows)) for k in self.bucket_keys]
                count = self._postpone.count(partition)
                buckets[rows] = assign_buckets(columns, self.bucket_key_types, count)
            return buckets
        if self._dynamic is None:
            self._dynamic = DynamicBucketIndex(
                self.table,
                self._base_snapshot(),
                ignore_existing=self.overwrite,
                live_files=lambda partition: self._live_files.pop(partition, ()),
            )
        hashes = np.asarray(
            hash_keys([data.column(k) for k in self.key_names], self.key_types), dtype=np.int32
        )
        buckets = np.zeros(n, np.int64)
        for code, partition in enumerate(partitions):
            rows = np.flatnonzero(parts == code)
            buckets[rows] = self._dynamic.assign(partition, hashes[rows])
        return buckets

    # ------------------------------------------------------------------- sequences

    def _base_snapshot(self) -> Snapshot | None:
        """The latest snapshot when first needed: sequences and HASH indexes restore from it."""
        if not self._base_read:
            self._base = self.table.snapshot_manager.latest_snapshot()
            self._base_read = True
        return self._base

    def _restore_sequences(self, partitions: list[bytes]) -> None:
        """Continue each bucket's sequence after the highest one of its live files (Java);
        a dynamic-bucket writer keeps the files for checking the partitions' HASH index."""
        if not partitions:
            return
        self._restored.update(partitions)
        # overwritten files go away; unaware append writers start at 0 as Java's
        sequences = not (self.overwrite or self.ignore_previous_files or self.mode == "unaware")
        keep_files = self.mode == "dynamic" and not self.overwrite
        if not (sequences or keep_files):
            return
        snapshot = self._base_snapshot()
        if snapshot is None:
            return
        from paimon_core.operations.scan import TableScan

        for e in TableScan(self.table).read_entries(snapshot, partitions=set(partitions)):
            if keep_files:
                self._live_files.setdefault(e.partition, []).append(e)
            if sequences:
                key = (e.partition, e.bucket)
                seq = e.file.max_sequence_number + 1
                if seq > self._next_seq.get(key, 0):
                    self._next_seq[key] = seq

    # ------------------------------------------------------------------------ files

    def _write_bucket(
        self, partition: bytes, bucket: int, data: pa.Table, kinds: pa.Array | None
    ) -> None:
        key = (partition, bucket)
        start = self._next_seq.get(key, 0)
        n = data.num_rows
        self._next_seq[key] = start + n
        if self.is_pk:
            assert kinds is not None
            sequences = pa.array(np.arange(start, start + n, dtype=np.int64))
            if self.input_changelog:
                self._write_input_changelog(partition, bucket, data, sequences, kinds)
            data = self._key_value_rows(data, sequences, kinds)
        for offset, chunk in self._roll(data):
            first_seq = start + offset
            meta = self._write_file(partition, bucket, chunk, first_seq)
            self._files.setdefault(key, []).append(meta)

    def _write_input_changelog(
        self,
        partition: bytes,
        bucket: int,
        data: pa.Table,
        sequences: pa.Array,
        kinds: pa.Array,
    ) -> None:
        """Every input row, kind and sequence number as given, in the write buffer's order
        (key, ``sequence.field``, sequence number): what Java's ``MergeTreeWriter`` hands its
        changelog writer before merging."""
        assert self.merge is not None
        work = data.append_column(SEQUENCE_NUMBER, sequences).append_column(VALUE_KIND, kinds)
        order, _, _ = merge_order(
            work, self.merge.key_names, self.merge.sequence_fields, self.merge.sequence_ascending
        )
        rows = self._file_rows(work.take(order))
        spec = self._spec(0, changelog=True)
        for _, chunk in self._roll(rows):
            meta = self._write_file(partition, bucket, chunk, 0, spec=spec)
            self._changelog.setdefault((partition, bucket), []).append(meta)

    def _file_rows(self, rows: pa.Table) -> pa.Table:
        """Key-value rows (the table's columns, ``_SEQUENCE_NUMBER``, ``_VALUE_KIND``) in the
        file layout: ``_KEY_<k>``, the system columns, the columns."""
        columns = [] if self.thin else [rows.column(k) for k in self.key_names]
        columns += [rows.column(SEQUENCE_NUMBER), rows.column(VALUE_KIND)]
        columns += [rows.column(name) for name in self.names]
        return pa.Table.from_arrays(columns, schema=self.file_schema)

    def _spec(self, level: int, *, changelog: bool) -> _FileSpec:
        """The ``_FileSpec`` of data (or changelog) files written at ``level``.

        Raises:
            UnsupportedFeature: a format or compression this writer cannot produce.
        """
        key = (level, changelog)
        spec = self._specs.get(key)
        if spec is not None:
            return spec
        if not changelog:
            return self._specs[(0, False)]  # compacted files keep level 0's format for now
        options = self.table.options
        file_format = write_format(options, self.is_pk, level, changelog=True)
        check_fields(file_format, self.fields)
        mode = options.changelog_file_stats_mode
        value_modes = value_stats_modes(options, self.names, mode)
        spec = self._specs[key] = _FileSpec(
            options.changelog_file_prefix,
            file_format,
            value_modes,
            _thin_key_modes(value_modes, self.names, self.key_names)
            if self.thin
            else key_stats_modes(options, self.key_names, file_format.name, mode),
        )
        return spec

    def _key_value_rows(self, data: pa.Table, sequences: pa.Array, kinds: pa.Array) -> pa.Table:
        """Sorted by key in Java's order, one row per key: the key's records merged by the
        table's merge engine (its sequence number and row kind those of the merge result)."""
        assert self.merge is not None
        work = data.append_column(SEQUENCE_NUMBER, sequences).append_column(VALUE_KIND, kinds)
        return self._file_rows(self.merge.merge(work))

    def write_compacted(
        self,
        partition: bytes,
        partition_values: Sequence[Any],
        bucket: int,
        rows: pa.Table,
        *,
        level: int,
        first_seq: int = 0,
    ) -> list[DataFileMeta]:
        """Write rows a compaction produced, as they are, at ``level`` with file source
        COMPACT, rolling files at ``target-file-size``; the files belong to the caller.

        Primary-key ``rows`` are merged key-value rows in key order (the table's columns,
        ``_SEQUENCE_NUMBER``, ``_VALUE_KIND``), keeping their sequence numbers; append rows
        are the table's columns, numbered from ``first_seq`` as Java's compact rewriter."""
        return self._write_rows(partition, partition_values, bucket, rows, level, first_seq)

    def write_changelog(
        self,
        partition: bytes,
        partition_values: Sequence[Any],
        bucket: int,
        rows: pa.Table,
        *,
        level: int,
    ) -> list[DataFileMeta]:
        """Write a compaction's changelog ``rows`` (key-value rows as ``write_compacted``
        takes them, kinds and sequence numbers kept) as changelog files of ``level``, rolling
        at ``target-file-size``; the files belong to the caller. Java's
        ``createRollingChangelogFileWriter``: file source APPEND, the changelog options."""
        if not self.is_pk:
            raise InvalidArgument("Changelog files exist only in primary-key tables")
        spec = self._spec(level, changelog=True)
        return self._write_rows(
            partition, partition_values, bucket, rows, level, 0, spec=spec, file_source=0
        )

    def _write_rows(
        self,
        partition: bytes,
        partition_values: Sequence[Any],
        bucket: int,
        rows: pa.Table,
        level: int,
        first_seq: int,
        *,
        spec: _FileSpec | None = None,
        file_source: int = 1,
    ) -> list[DataFileMeta]:
        def write() -> list[DataFileMeta]:
            self._values.setdefault(partition, tuple(partition_values))
            if self.is_pk:
                data = self._file_rows(rows)
            elif self.row_tracking:
                data = self._conform(rows.select(list(self.write_cols or ())))
            else:
                data = rows.select(self.names).cast(self.arrow_schema)
            written = len(self._written)
            metas = []
            for offset, chunk in self._roll(data):
                metas.append(
                    self._write_file(
                        partition,
                        bucket,
                        chunk,
                        first_seq + offset,
                        level=level,
                        file_source=file_source,
                        spec=spec,
                    )
                )
            del self._written[written:]  # handed to the caller
            return metas

        return self._guarded(write)

    def _roll(self, data: pa.Table) -> list[tuple[int, pa.Table]]:
        """``data`` cut into pieces of about ``target-file-size`` (by in-memory size)."""
        rows_per_file = max(data.num_rows, 1)
        if data.nbytes > self.target_file_size:
            rows_per_file = max(1, data.num_rows * self.target_file_size // data.nbytes)
        return [
            (offset, data.slice(offset, rows_per_file))
            for offset in range(0, data.num_rows, rows_per_file)
        ]

    def _write_file(
        self,
        partition: bytes,
        bucket: int,
        data: pa.Table,
        first_seq: int,
        *,
        level: int = 0,
        file_source: int = 0,
        spec: _FileSpec | None = None,
    ) -> DataFileMeta:
        data_spec = self._specs[(0, False)]
        spec = spec or data_spec
        name = f"{spec.prefix}{uuid.uuid4()}-0{spec.format.suffix}"
        external = self._external_path(partition, bucket, name)
        path = external or data_file_path(self.table, self._values[partition], bucket, name)
        self._track(path)
        # Java indexes data files of every level; changelog files are read sequentially and
        # get none (KeyValueFileWriterFactory).
        extra_files: tuple[str, ...] = ()
        embedded_index = None
        if spec is data_spec and not self.file_index.empty:
            extra_files, embedded_index = self._write_index(path, data)
        footers: list[pq.FileMetaData] = []  # a Parquet footer, whose column stats are reused
        size = write_data_file(
            self.table.file_io, path, data, self.file_fields, spec.format, footers
        )
        n = data.num_rows
        file_format = spec.format.name
        footer = FooterStats(footers[0]) if footers else None
        value_stats, stats_cols = dense_value_stats(
            collect_stats(data, self.fields, spec.value_modes, file_format, footer),
            self.fields,
            self.dense_stats,
        )
        if self.is_pk:
            seqs = data.column(SEQUENCE_NUMBER)
            bounds = pc.min_max(seqs)
            min_seq, max_seq = bounds["min"].as_py(), bounds["max"].as_py()
            key_fields = [self.table.schema.field(k) for k in self.key_names]
            min_key = serialize_row(_row_at(data, self.key_names, 0), self.key_types)
            max_key = serialize_row(_row_at(data, self.key_names, n - 1), self.key_types)
            key_stats = to_simple_stats(
                collect_stats(data, key_fields, spec.key_modes, file_format, footer),
                self.key_types,
            )
            deletes = pc.sum(pc.is_in(data.column(VALUE_KIND), value_set=_RETRACT)).as_py() or 0
        else:
            min_seq, max_seq = first_seq, first_seq + n - 1
            if self.row_tracking:  # Java's RowDataFileSequenceNumberTracker
                seqs = data.column(SEQUENCE_NUMBER)
                bounds = pc.min_max(seqs)
                min_seq = bounds["min"].as_py() if seqs.null_count < n else 0
                max_seq = 0 if seqs.null_count else bounds["max"].as_py()
            min_key = max_key = EMPTY_ROW
            key_stats = EMPTY_STATS
            deletes = 0
        return DataFileMeta(
            file_name=name,
            file_size=size,
            row_count=n,
            min_key=min_key,
            max_key=max_key,
            key_stats=key_stats,
            value_stats=value_stats,
            min_sequence_number=min_seq,
            max_sequence_number=max_seq,
            schema_id=self.table.schema.schema_id,
            level=level,
            extra_files=extra_files,
            creation_time_millis=local_millis_as_utc(),
            delete_row_count=deletes,
            embedded_index=embedded_index,
            file_source=file_source,
            value_stats_cols=stats_cols,
            write_cols=self.write_cols if spec is data_spec else None,
            external_path=external,
        )

    def _external_path(self, partition: bytes, bucket: int, name: str) -> str | None:
        """Where the new file ``name`` of (``partition``, ``bucket``) goes under
        ``data-file.external-paths``, or None (in the table); one chooser per bucket, as
        Java's per-bucket ``DataFilePathFactory``."""
        if self.external_paths is None:
            return None
        provider = self._external.get((partition, bucket))
        if provider is None:
            relative = data_file_path(self.table, self._values[partition], bucket, "")
            relative = relative[len(self.table.path.rstrip("/")) :].strip("/")
            provider = self._external[(partition, bucket)] = self.external_paths.provider(relative)
        return provider.next_path(name)

    def _write_index(self, data_path: str, data: pa.Table) -> tuple[tuple[str, ...], bytes | None]:
        """The file index of a data file (its value columns: ``data`` holds them by name):
        embedded when small, else ``<data file>.index`` beside it, as Java's
        ``DataFileIndexWriter``."""
        writer = DataFileIndexWriter(self.fields, self.file_index)
        writer.write(data)
        index_path = index_path_of(data_path)
        container = writer.container()
        if len(container) > self.file_index.in_manifest_threshold:
            self._track(index_path)
        written = store_container(
            self.table.file_io, index_path, container, self.file_index.in_manifest_threshold
        )
        return ((written.file_name,) if written.file_name else ()), written.embedded

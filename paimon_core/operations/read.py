"""Reading splits to Arrow, with merge-on-read for primary-key tables.

A data file is read in the format its name says (Parquet, ORC or Avro, whatever the table's
``file.format`` is now) and with the schema it was written with (``_SCHEMA_ID``): its columns
are matched to the table's current columns by field id, so renamed columns keep their data and
added columns read as null. Primary-key splits are merged by the table's merge engine
(``operations/merge``: deduplicate, partial-update, aggregation, first-row) in bulk, and the
keys it deletes are dropped.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.exceptions import DataFileUnreadable, InvalidArgument, UnsupportedFeature
from paimon_core.format.blob_file import read_blob_values
from paimon_core.format.data_files import read_data_file
from paimon_core.format.deletion_vectors import DeletionFile, DeletionVector
from paimon_core.format.paths import bucket_dir_name, partition_path
from paimon_core.format.types import BIGINT, TINYINT, DataField, to_arrow_type
from paimon_core.operations.data_evolution import (
    anchor_file,
    blob_bunches,
    column_sources,
    data_evolution_enabled,
    newest_first,
    row_id_groups,
    row_id_range,
)
from paimon_core.operations.deletion_vectors import apply_deletion_vector, deletion_vectors_index
from paimon_core.operations.merge.base import (
    SEQUENCE_NUMBER,
    VALUE_KIND,
    drop_retractions,
)
from paimon_core.operations.merge.factory import key_value_merge
from paimon_core.operations.row_tracking import (
    ROW_ID,
    ROW_ID_FIELD_ID,
    SEQUENCE_NUMBER_FIELD_ID,
    row_tracking_enabled,
)
from paimon_core.operations.split_generator import merge_sections, table_key_order

if TYPE_CHECKING:
    from paimon_core.format.manifest import DataFileMeta
    from paimon_core.format.schema import TableSchema
    from paimon_core.format.types import DataType
    from paimon_core.operations.scan import Split
    from paimon_core.table import FileStoreTable

KEY_PREFIX = "_KEY_"
ROW_POSITION = "_ROW_POSITION"
"""A row's position in its data file (what deletion vectors record); read on request."""
_SYSTEM_TYPES = {SEQUENCE_NUMBER: pa.int64(), VALUE_KIND: pa.int8(), ROW_POSITION: pa.int64()}
_SYSTEM_FIELD_TYPES = {SEQUENCE_NUMBER: BIGINT(False), VALUE_KIND: TINYINT(False)}
_DV_CACHE_SPLITS = 64
_TRACKING_FIELDS = {
    ROW_ID: (ROW_ID_FIELD_ID, BIGINT(False)),
    SEQUENCE_NUMBER: (SEQUENCE_NUMBER_FIELD_ID, BIGINT(False)),
}
_TRACKING_IDS = {field_id for field_id, _ in _TRACKING_FIELDS.values()}


def data_file_path(
    table: FileStoreTable, partition_values: Sequence, bucket: int, name: str
) -> str:
    """``<table>/<partition path>/bucket-<b>/<name>`` (Java's ``FileStorePathFactory``)."""
    schema = table.schema
    parts = [table.path.rstrip("/")]
    if schema.partition_keys:
        parts.append(
            partition_path(
                schema.partition_keys,
                partition_values,
                [f.type for f in schema.partition_fields],
                table.options.partition_default_name,
            )
        )
    parts += [bucket_dir_name(bucket), name]
    return "/".join(parts)


class TableRead:
    """Reads splits of one table into Arrow in the table's current schema."""

    def __init__(self, table: FileStoreTable) -> None:
        self.table = table
        self.schema = table.schema
        self._schemas: dict[int, TableSchema] = {self.schema.schema_id: self.schema}
        self.merge = key_value_merge(self.schema) if table.is_primary_key_table else None
        self.data_evolution = not table.is_primary_key_table and data_evolution_enabled(
            table.options
        )
        """Files are merged column by column per row-id range (``operations.data_evolution``)."""
        self._row_tracking = not table.is_primary_key_table and row_tracking_enabled(table.options)
        # Deletion vectors of the splits read last (a split's files share one index file).
        self._dv_cache: dict[tuple[DeletionFile, ...], dict[str, DeletionVector]] = {}

    # ------------------------------------------------------------------------- public

    def output_fields(self, projection: Sequence[str] | None = None) -> list[DataField]:
        """The fields ``projection`` names (all the table's when None). A row-tracking
        append table also has ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` (BIGINT NOT NULL), read
        only when named, as Paimon's ``RowTrackingTable`` read type: a row's own physical
        value where its file stores one (not null), else its file's ``_FIRST_ROW_ID`` + its
        position in the file and the file's ``max_sequence_number`` (Java's
        ``DataFileRecordReader``)."""
        fields = list(self.schema.fields)
        if projection is None:
            return fields
        by_name = {f.name: f for f in fields}
        if self._row_tracking:
            for name, (field_id, data_type) in _TRACKING_FIELDS.items():
                by_name.setdefault(name, DataField(field_id, name, data_type))
        missing = [n for n in projection if n not in by_name]
        if missing:
            raise InvalidArgument(f"Projected columns {missing} are not columns of the table")
        return [by_name[n] for n in projection]

    def output_schema(self, projection: Sequence[str] | None = None) -> pa.Schema:
        return pa.schema(
            [
                pa.field(f.name, to_arrow_type(f.type), f.type.nullable)
                for f in self.output_fields(projection)
            ]
        )

    def to_arrow(
        self, splits: Sequence[Split], projection: Sequence[str] | None = None
    ) -> pa.Table:
        """All rows of ``splits`` as one table with the current schema's columns (or ``projection``)."""
        if projection is not None and not projection:
            # No columns (COUNT(*)): read one so that the row count survives concatenation.
            return self.to_arrow(splits, [self.schema.fields[0].name]).select([])
        schema = self.output_schema(projection)
        tables = [self._read_split(s, projection) for s in splits]
        tables = [t for t in tables if t.num_rows]
        if not tables:
            return schema.empty_table()
        return pa.concat_tables(tables)

    def to_arrow_batches(
        self, splits: Sequence[Split], projection: Sequence[str] | None = None
    ) -> Iterator[pa.RecordBatch]:
        """The rows of ``splits`` as record batches, one split at a time."""
        columns = projection
        if projection is not None and not projection:
            columns = [self.schema.fields[0].name]
        for split in splits:
            table = self._read_split(split, columns)
            if table.num_rows:
                yield from (table if columns is projection else table.select([])).to_batches()

    def read_key_values(self, split: Split) -> pa.Table:
        """The key-value rows of a primary-key split, unmerged: every column of the current
        schema, then ``_SEQUENCE_NUMBER`` and ``_VALUE_KIND``, file after file. What a
        compaction merges with ``self.merge`` (``KeyValueMerge.merge``) before writing."""
        if self.merge is None:
            raise InvalidArgument("Key-value rows exist only in primary-key tables")
        fields = list(self.schema.fields)
        system = (SEQUENCE_NUMBER, VALUE_KIND)
        tables = [self._read_file(split, f, fields, system) for f in split.files]
        if not tables:
            return self._file_arrow_schema(fields, system).empty_table()
        return pa.concat_tables(tables)

    def to_arrow_with_positions(
        self, split: Split, projection: Sequence[str] | None = None
    ) -> pa.Table:
        """The rows of a split, file after file and unmerged, with ``_ROW_POSITION``, each
        row's position in its data file (rows a deletion vector already deletes left out):
        what a DELETE or a compaction needs to write deletion vectors. Primary-key tables
        also get ``_SEQUENCE_NUMBER`` and ``_VALUE_KIND``. Read ``split.with_files`` of one
        file to know which file a row is in."""
        fields = self.output_fields(projection)
        system: tuple[str, ...] = (ROW_POSITION,)
        if self.table.is_primary_key_table:
            system = (SEQUENCE_NUMBER, VALUE_KIND, ROW_POSITION)
        tables = self._read_append(split, fields, system)
        if not tables:
            schema = self.output_schema(projection)
            for name in system:
                schema = schema.append(pa.field(name, _SYSTEM_TYPES[name], False))
            return schema.empty_table()
        return pa.concat_tables(tables)

    # ----------------------------------------------------------------------- internals

    def _file_arrow_schema(self, fields: Sequence[DataField], system: Sequence[str]) -> pa.Schema:
        columns = [pa.field(f.name, to_arrow_type(f.type), f.type.nullable) for f in fields]
        return pa.schema(columns + [pa.field(n, _SYSTEM_TYPES[n], False) for n in system])

    def _deletion_vector(self, split: Split, file_name: str) -> DeletionVector | None:
        """The deletion vector of one file of ``split`` (all of the split's read at once)."""
        vectors = self._dv_cache.get(split.deletion_files)
        if vectors is None:
            if len(self._dv_cache) >= _DV_CACHE_SPLITS:
                self._dv_cache.clear()
            index = deletion_vectors_index(self.table)
            vectors = index.read_many(list(split.deletion_files))
            self._dv_cache[split.deletion_files] = vectors
        return vectors.get(file_name)

    def _file_schema(self, schema_id: int) -> TableSchema:
        schema = self._schemas.get(schema_id)
        if schema is None:
            schema = self._schemas[schema_id] = self.table.schema_manager.schema(schema_id)
        return schema

    def _read_split(self, split: Split, projection: Sequence[str] | None) -> pa.Table:
        fields = self.output_fields(projection)
        if not self.table.is_primary_key_table:
            tables = self._read_append(split, fields, ())
            return (
                pa.concat_tables(tables) if tables else self.output_schema(projection).empty_table()
            )
        assert self.merge is not None
        by_name = {f.name: f for f in self.schema.fields}
        extra = self.merge.required_fields([f.name for f in fields])
        read_fields = [*fields, *(by_name[n] for n in extra)]
        system = (SEQUENCE_NUMBER, VALUE_KIND)
        tables = [self._read_file(split, f, read_fields, system) for f in split.files]
        if len(tables) == 1 or _raw_convertible(split, self.table):
            # Keys are unique within one file; with deletion vectors, across the files of
            # levels > 0 too (Java's rawConvertible splits).
            merged = drop_retractions(pa.concat_tables(tables) if len(tables) > 1 else tables[0])
        else:
            # Keys compare in Java's order (``float_order``): all NaN keys are one key and
            # -0.0 and 0.0 are two.
            levels = [f.level for f in split.files]
            files, order = split.files, table_key_order(self.schema)
            merged = drop_retractions(
                self.merge.merge_files(
                    tables, levels, lambda: merge_sections(files, order, split=True)
                )
            )
        return merged.select([f.name for f in fields])

    def _read_append(
        self, split: Split, fields: Sequence[DataField], system: Sequence[str]
    ) -> list[pa.Table]:
        """The rows of an append split (a primary-key split's files unmerged): file after
        file, or row-id range after range in a data-evolution table (``read_range``)."""
        if not self.data_evolution:
            return [self._read_file(split, f, fields, system) for f in split.files]
        return [self.read_range(split, g, fields, system) for g in row_id_groups(split.files)]

    def read_range(
        self,
        split: Split,
        group: Sequence[DataFileMeta],
        fields: Sequence[DataField],
        system: Sequence[str],
    ) -> pa.Table:
        """The rows of one row-id range of a data-evolution table, each column from the
        newest file that wrote it (``operations.data_evolution``), the anchor file's deletion
        vector applied. ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` come from the newest file, as
        every file has them (Java's ``rowTypeWithRowTracking`` of each file's columns);
        ``ROW_POSITION`` is a row's position in the range.

        Raises:
            DataFileUnreadable: files of the range disagree on it or on their row count, or
                a NOT NULL column is in none of them.
        """
        files = newest_first(group)
        tracking = [f for f in fields if f.id in _TRACKING_IDS]
        if files or split.deletion_files:
            anchor = anchor_file(group)
            first, count = anchor.first_row_id, anchor.row_count
        else:  # only .blob files: a delta of an update by row id
            if tracking:
                raise UnsupportedFeature(
                    "Reading _ROW_ID or _SEQUENCE_NUMBER of a row-id range of only blob files "
                    f"({[f.file_name for f in group]}) is not supported yet"
                )
            first = min(row_id_range(f)[0] for f in group)
            count = max(row_id_range(f)[1] for f in group) - first + 1
        plain = replace(split, deletion_files=())
        columns: dict[int, pa.ChunkedArray | pa.Array] = {}
        sources = column_sources(
            files, [f for f in fields if f.id not in _TRACKING_IDS], self._file_schema
        )
        if tracking and sources and sources[0][0] is files[0]:
            sources[0] = (files[0], [*sources[0][1], *tracking])
        elif tracking:
            sources.insert(0, (files[0], tracking))
        if len(files) < len(group):
            taken = {f.id for _, mine in sources for f in mine}
            wanted = {f.id: f for f in fields if f.id not in taken}
            for field_id, bunch in blob_bunches(group, self._file_schema).items():
                if field_id in wanted:
                    columns[field_id] = self._blob_column(split, bunch, first, count)
        for meta, mine in sources:
            data = self._read_file(plain, meta, mine, ())
            if data.num_rows != count:
                raise DataFileUnreadable(
                    f"Data file {meta.file_name} has {data.num_rows} rows, not the "
                    f"{count} of its row-id range (files {[f.file_name for f in files]})"
                )
            for f in mine:
                columns[f.id] = data.column(f.name)
        arrays: list[pa.ChunkedArray | pa.Array] = []
        out: list[pa.Field] = []
        for f in fields:
            target = to_arrow_type(f.type)
            column = columns.get(f.id)
            if column is None:
                if not f.type.nullable:
                    raise DataFileUnreadable(
                        f"Column '{f.name}' is NOT NULL but none of the data files "
                        f"{[m.file_name for m in files]} holds it"
                    )
                column = pa.nulls(count, target)
            arrays.append(column)
            out.append(pa.field(f.name, target, f.type.nullable))
        for name in system:
            if name == ROW_POSITION:
                arrays.append(pa.array(np.arange(count, dtype=np.int64)))
            else:
                raise InvalidArgument(f"{name} is no column of a data-evolution table")
            out.append(pa.field(name, _SYSTEM_TYPES[name], False))
        data = pa.Table.from_arrays(arrays, schema=pa.schema(out))
        if split.deletion_files:
            anchor_name = anchor_file(group).file_name
            data = apply_deletion_vector(data, self._deletion_vector(split, anchor_name))
        return data

    def _read_data(self, path: str, columns: list[tuple[str, DataType]]) -> pa.Table:
        """The columns of one data file in its own format; a file in a format this reader
        does not know, or not decodable, fails naming the file, its format and the table."""
        table = self.table.identifier or self.table.path
        return read_data_file(self.table.file_io, path, columns, table)

    def _evolve(
        self,
        column: pa.ChunkedArray,
        target: pa.DataType,
        old: DataField,
        new: DataField,
        path: str,
    ) -> pa.ChunkedArray:
        """A column written under an older type, cast to the current one (ALTER COLUMN TYPE).

        Nested ROW fields are matched by field id, as top-level columns are, so a renamed,
        added, dropped or retyped nested field reads as Paimon reads it.

        A value the new type cannot hold fails, as in Paimon, naming the column and file."""
        try:
            if _has_row(new.type):
                chunks = [_evolve_nested(c, old.type, new.type) for c in column.chunks]
                return pa.chunked_array(chunks, target)
            return column.cast(target)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as err:
            reason = " ".join(str(err).split())
            raise DataFileUnreadable(
                f"Cannot read column '{new.name}' of data file {path}, written as {old.type}, as "
                f"{new.type}: {reason}"
            ) from None

    def _blob_column(
        self, split: Split, bunch: Sequence[DataFileMeta], first_row_id: int | None, count: int
    ) -> pa.Array:
        """One BLOB column of a row-id range of ``count`` rows from ``first_row_id``, from its
        ``.blob`` files newest first (``data_evolution.blob_bunches``): each row's value from
        the newest file holding it that is no placeholder, else null (Java's
        ``BlobFallbackRecordReader``); with ``blob-as-descriptor`` the serialized descriptors.

        Raises:
            DataFileUnreadable: a file fails to read or decode, or its row count is not its
                manifest entry's (naming it and the table).
        """
        table = self.table.identifier or self.table.path
        as_descriptor = (self.table.options.get("blob-as-descriptor") or "").strip().lower()
        arrays: list[pa.Array] = []
        chosen = np.full(count, -1, dtype=np.int64)
        base = 0
        for meta in bunch:
            path = meta.external_path or data_file_path(
                self.table, split.partition_values, split.bucket, meta.file_name
            )
            try:
                data = self.table.file_io.read_bytes(path)
            except OSError as err:
                reason = " ".join(str(err).split())
                raise DataFileUnreadable(
                    f"Cannot read blob file {path} of table {table}: {reason}"
                ) from None
            values, placeholders = read_blob_values(
                data, path, as_descriptor=as_descriptor == "true"
            )
            if len(values) != meta.row_count:
                raise DataFileUnreadable(
                    f"Blob file {path} of table {table} has {len(values)} rows, not the "
                    f"{meta.row_count} of its manifest entry"
                )
            start = (meta.first_row_id or 0) - (first_row_id or 0)
            here = np.arange(start, start + len(values))
            open_rows = (chosen[here] < 0) & ~np.asarray(placeholders, dtype=bool)
            chosen[here[open_rows]] = base + np.flatnonzero(open_rows)
            arrays.append(values)
            base += len(values)
        if len(arrays) == 1 and len(arrays[0]) == count and (chosen == np.arange(count)).all():
            return arrays[0]
        indices = pa.array(chosen, mask=chosen < 0)
        return pa.concat_arrays(arrays).take(indices)

    def _read_file(
        self,
        split: Split,
        meta: DataFileMeta,
        fields: Sequence[DataField],
        system: Sequence[str],
    ) -> pa.Table:
        path = meta.external_path or data_file_path(
            self.table, split.partition_values, split.bucket, meta.file_name
        )
        file_fields = {f.id: f for f in self._file_schema(meta.schema_id).fields}
        present = [
            (file_fields[f.id].name, file_fields[f.id].type) for f in fields if f.id in file_fields
        ]
        stored = [n for n in system if n != ROW_POSITION]
        tracking = [f.name for f in fields if f.id in _TRACKING_IDS]
        physical = [n for n in tracking if n in (meta.write_cols or ())]
        raw = self._read_data(
            path,
            [
                *present,
                *((n, BIGINT(True)) for n in physical),
                *((n, _SYSTEM_FIELD_TYPES[n]) for n in stored),
            ],
        )
        if tracking:  # positions count the rows a deletion vector deletes
            raw = _with_row_tracking(raw, meta, tracking)
        if ROW_POSITION in system:
            raw = raw.append_column(ROW_POSITION, pa.array(np.arange(raw.num_rows)))
        if split.deletion_files:
            raw = apply_deletion_vector(raw, self._deletion_vector(split, meta.file_name))
        arrays: list[pa.ChunkedArray | pa.Array] = []
        out: list[pa.Field] = []
        for f in fields:
            target = to_arrow_type(f.type)
            old = file_fields.get(f.id)
            if f.id in _TRACKING_IDS:
                column = raw.column(f.name)
            elif old is None:
                column = pa.nulls(raw.num_rows, target)
            else:
                column = raw.column(old.name)
                if column.type != target:
                    column = self._evolve(column, target, old, f, path)
            arrays.append(column)
            out.append(pa.field(f.name, target, f.type.nullable))
        for name in system:
            target = _SYSTEM_TYPES[name]
            column = raw.column(name)
            arrays.append(column if column.type == target else column.cast(target))
            out.append(pa.field(name, target, False))
        return pa.Table.from_arrays(arrays, schema=pa.schema(out))


def _with_row_tracking(raw: pa.Table, meta: DataFileMeta, names: Sequence[str]) -> pa.Table:
    """``raw`` (one file's rows, as stored) with its ``_ROW_ID`` and ``_SEQUENCE_NUMBER``
    (those of ``names``): a stored value where not null, else ``_FIRST_ROW_ID`` + the row's
    position (null without one) and the file's max sequence number."""
    n = raw.num_rows
    for name in names:
        if name == ROW_ID:
            if meta.first_row_id is None:
                derived = pa.nulls(n, pa.int64())
            else:
                derived = pa.array(np.arange(meta.first_row_id, meta.first_row_id + n))
        else:
            derived = pa.repeat(pa.scalar(meta.max_sequence_number, pa.int64()), n)
        index = raw.schema.get_field_index(name)
        if index < 0:
            raw = raw.append_column(name, derived)
        else:
            stored = raw.column(index).cast(pa.int64())
            raw = raw.set_column(index, name, pc.coalesce(stored, derived))
    return raw


def _raw_convertible(split: Split, table: FileStoreTable) -> bool:
    """Java's rule (``MergeTreeSplitGenerator.splitForBatch``) for reading a primary-key
    split of a deletion-vector table file by file, without merging: every file is above
    level 0 and holds no retraction (``_DELETE_ROW_COUNT`` = 0, known)."""
    return table.options.deletion_vectors_enabled and all(
        f.level > 0 and f.delete_row_count == 0 for f in split.files
    )


def _has_row(t: DataType) -> bool:
    if t.root == "ROW":
        return True
    return any(c is not None and _has_row(c) for c in (t.element, t.key, t.value))


def _evolve_nested(array: pa.Array, old: DataType, new: DataType) -> pa.Array:
    """``array`` of type ``old`` as ``new``: ROW fields by field id (missing ones null)."""
    target = to_arrow_type(new)
    if not _has_row(new) or old.root != new.root:
        return array.cast(target)
    mask = array.is_null() if array.null_count else None
    if new.root == "ROW":
        assert isinstance(array, pa.StructArray)
        old_fields = {f.id: f for f in old.fields or ()}
        children = []
        for f in new.fields or ():
            source = old_fields.get(f.id)
            if source is None:
                children.append(pa.nulls(len(array), to_arrow_type(f.type)))
            else:
                child = array.field(source.name)
                children.append(_evolve_nested(child, source.type, f.type))
        fields = list(target)
        return pa.StructArray.from_arrays(children, fields=fields, mask=mask)
    if new.root == "ARRAY" and isinstance(array, pa.ListArray):
        assert old.element is not None and new.element is not None
        values = _evolve_nested(array.values, old.element, new.element)
        offsets = array.offsets
        return pa.ListArray.from_arrays(offsets, values, type=target, mask=mask)
    if new.root == "MAP" and isinstance(array, pa.MapArray):
        assert old.value is not None and new.value is not None
        keys = array.keys.cast(target.key_type)
        items = _evolve_nested(array.items, old.value, new.value)
        return pa.MapArray.from_arrays(array.offsets, keys, items, type=target, mask=mask)
    return array.cast(target)

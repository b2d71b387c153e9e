"""Reading splits the ways Paimon's system tables and incremental queries need.

``TableRead`` gives a table's current rows: primary-key splits merged, retractions dropped.
``SplitRead`` also gives:

* the row kind of every row (``_VALUE_KIND``), and retractions kept on request (Paimon's
  ``forceKeepDelete``): ``$audit_log`` and ``$binlog`` show a deleted key as ``-D``;
* the data file and position of every row (``_FILE_PATH``, ``_ROW_INDEX``) where rows are
  read from files as they are (append tables; primary-key splits Paimon reads without
  merging), for the ``__paimon_file_path`` and ``__paimon_row_index`` metadata columns;
* ``IncrementalSplit``\\ s: the files added between two snapshots read as they are
  (``incremental-between`` in delta or changelog mode: no merge, deletes included, as
  Paimon's no-merge reader), or the difference of two snapshots of a bucket (diff mode:
  Paimon's ``IncrementalDiffSplitRead``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.exceptions import UnsupportedFeature
from paimon_core.format.float_order import is_floating, with_order_columns
from paimon_core.operations.arrow_sort import sort_indices_nulls_first
from paimon_core.operations.data_evolution import anchor_file, row_id_groups
from paimon_core.operations.read import (
    ROW_POSITION,
    SEQUENCE_NUMBER,
    VALUE_KIND,
    TableRead,
    data_file_path,
)

if TYPE_CHECKING:
    from paimon_core.format.deletion_vectors import DeletionFile
    from paimon_core.format.manifest import DataFileMeta
    from paimon_core.format.types import DataField
    from paimon_core.operations.scan import Split
    from paimon_core.table import FileStoreTable

__all__ = [
    "DELETE",
    "FILE_PATH",
    "INSERT",
    "ROW_INDEX",
    "ROW_KINDS",
    "IncrementalSplit",
    "SplitRead",
    "raw_convertible",
]

FILE_PATH = "_FILE_PATH"
ROW_INDEX = "_ROW_INDEX"
INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = 0, 1, 2, 3
ROW_KINDS = ("+I", "-U", "+U", "-D")
"""``RowKind.shortString()`` by byte value."""
NO_FILE_ITERATOR = (
    "There need be FileRecordIterator when metadata columns are required. Only append table "
    "or deletion vector table support querying metadata columns."
)
"""Paimon-Spark's error when a merged primary-key split is asked for file metadata columns."""


@dataclass(frozen=True, slots=True)
class IncrementalSplit:
    """The files of one (partition, bucket) between two snapshots (Java ``IncrementalSplit``
    and streaming ``DataSplit``).

    ``streaming``: ``files`` are the delta (or changelog) files added in between, read as they
    are (no deletion vectors, as Paimon's streaming ``DataSplit``). Otherwise ``before_files``
    and ``files`` are the bucket's live files at the start and at the end (files in both left
    out), and the read is their difference; on a table with deletion vectors each side is
    read with its snapshot's vectors (``before_deletion_files``, ``deletion_files``), as
    Paimon's ``IncrementalSplit`` carries them.
    """

    partition: bytes
    partition_values: tuple
    bucket: int
    before_files: tuple[DataFileMeta, ...]
    files: tuple[DataFileMeta, ...]
    snapshot_id: int | None
    streaming: bool
    deletion_files: tuple[DeletionFile, ...] = ()
    before_deletion_files: tuple[DeletionFile, ...] = ()

    @property
    def row_count(self) -> int:
        return sum(f.row_count for f in self.files)

    def deletion_file(self, file_name: str) -> DeletionFile | None:
        """The end snapshot's deletion vector of one of ``files``, if any."""
        return next((d for d in self.deletion_files if d.data_file_name == file_name), None)

    @property
    def before(self) -> IncrementalSplit:
        """The start side: ``before_files`` with the start snapshot's vectors, as the
        ``files`` of a split the reader reads."""
        return replace(self, files=self.before_files, deletion_files=self.before_deletion_files)


def raw_convertible(split: Split) -> bool:
    """Whether Paimon reads this primary-key split's files as they are, without merging
    (``MergeTreeSplitGenerator.splitForBatch``): every file above level 0, all on one level,
    none holding retractions; or a single file without retractions."""
    files = split.files
    clean = all(f.delete_row_count == 0 for f in files)
    if len(files) == 1:
        return clean
    return clean and all(f.level != 0 for f in files) and len({f.level for f in files}) == 1


class SplitRead(TableRead):
    """Reads one split to Arrow: the projected columns, then ``_SEQUENCE_NUMBER`` (when
    ``sequence_number``), ``_VALUE_KIND``, then ``_FILE_PATH`` and ``_ROW_INDEX`` (when
    ``file_meta``).

    ``keep_delete`` keeps retracted keys in merged reads, as their last (``-D``/``-U``) row.
    """

    def __init__(
        self, table: FileStoreTable, *, keep_delete: bool = False, sequence_number: bool = False
    ) -> None:
        super().__init__(table)
        self.keep_delete = keep_delete
        self.sequence_number = sequence_number
        if sequence_number and not table.is_primary_key_table:
            raise UnsupportedFeature(
                "table-read.sequence-number.enabled is only valid for primary key tables"
            )

    def read(
        self,
        split: Split | IncrementalSplit,
        projection: Sequence[str] | None = None,
        *,
        file_meta: bool = False,
    ) -> pa.Table:
        fields = self.output_fields(projection)
        if not self.table.is_primary_key_table:
            return self._raw(split, split.files, fields, (), file_meta)
        if isinstance(split, IncrementalSplit):
            if split.streaming:
                return self._raw(split, split.files, fields, _KV_SYSTEM, file_meta)
            if file_meta:
                raise UnsupportedFeature(NO_FILE_ITERATOR)
            return self._diff(split, fields)
        if file_meta:
            if self.keep_delete or not raw_convertible(split):
                raise UnsupportedFeature(NO_FILE_ITERATOR)
            return self._raw(split, split.files, fields, _KV_SYSTEM, file_meta)
        merged = self._merged(split, split.files, fields)
        if not self.keep_delete:
            merged = merged.filter(_is_add(merged))
        return self._output(merged, fields)

    # ----------------------------------------------------------------------- internals

    def _output(
        self, data: pa.Table, fields: Sequence[DataField], extra: Sequence[str] = ()
    ) -> pa.Table:
        names = [f.name for f in fields]
        if self.sequence_number:
            names.append(SEQUENCE_NUMBER)
        return data.select([*names, VALUE_KIND, *extra])

    def _raw(
        self,
        split: Split | IncrementalSplit,
        files: Sequence[DataFileMeta],
        fields: list[DataField],
        system: tuple[str, ...],
        file_meta: bool,
    ) -> pa.Table:
        """The rows of ``files`` one after the other, nothing merged or dropped."""
        tables = []
        read_system = (*system, ROW_POSITION) if file_meta else system
        for meta, data in self._raw_files(split, files, fields, read_system, file_meta):
            positions = None
            if file_meta:  # the row's place in the file, rows of its deletion vector counted
                positions = data.column(ROW_POSITION)
                data = data.drop_columns([ROW_POSITION])
            if not system:
                data = data.append_column(
                    pa.field(VALUE_KIND, pa.int8(), False),
                    pa.array(np.zeros(data.num_rows, dtype=np.int8)),
                )
            if file_meta:
                path = meta.external_path or data_file_path(
                    self.table, split.partition_values, split.bucket, meta.file_name
                )
                data = data.append_column(
                    pa.field(FILE_PATH, pa.string(), False),
                    pa.repeat(pa.scalar(path, pa.string()), data.num_rows),
                ).append_column(pa.field(ROW_INDEX, pa.int64(), False), positions)
            tables.append(data)
        extra = (FILE_PATH, ROW_INDEX) if file_meta else ()
        if not tables:
            return self._empty(fields, extra)
        return self._output(pa.concat_tables(tables), fields, extra)

    def _raw_files(
        self,
        split: Split | IncrementalSplit,
        files: Sequence[DataFileMeta],
        fields: list[DataField],
        system: tuple[str, ...],
        file_meta: bool,
    ) -> Iterator[tuple[DataFileMeta, pa.Table]]:
        """Each of ``files`` with its rows; in a data-evolution table each row-id range of
        them, merged column by column, with its anchor file. A range of several files is no
        one file's rows: file metadata columns of it are refused, as Paimon-Spark refuses
        them without a file iterator."""
        if not self.data_evolution:
            for meta in files:
                yield meta, self._read_file(split, meta, fields, system)  # type: ignore[arg-type]
            return
        for group in row_id_groups(files):
            if file_meta and len(group) > 1:
                raise UnsupportedFeature(NO_FILE_ITERATOR)
            yield anchor_file(group), self.read_range(split, group, fields, system)  # type: ignore[arg-type]

    def _empty(self, fields: Sequence[DataField], extra: Sequence[str]) -> pa.Table:
        schema = self.output_schema([f.name for f in fields])
        if self.sequence_number:
            schema = schema.append(pa.field(SEQUENCE_NUMBER, pa.int64(), False))
        schema = schema.append(pa.field(VALUE_KIND, pa.int8(), False))
        if extra:
            schema = schema.append(pa.field(FILE_PATH, pa.string(), False))
            schema = schema.append(pa.field(ROW_INDEX, pa.int64(), False))
        return schema.empty_table()

    def _merged(
        self,
        split: Split | IncrementalSplit,
        files: Sequence[DataFileMeta],
        fields: list[DataField],
    ) -> pa.Table:
        """The merged row of every key of ``files`` by the table's merge engine (retractions
        included), with the system columns; the columns ``fields`` plus what the merge needs."""
        assert self.merge is not None
        by_name = {f.name: f for f in self.schema.fields}
        extra = self.merge.required_fields([f.name for f in fields])
        read_fields = [*fields, *(by_name[n] for n in extra)]
        tables = [self._read_file(split, f, read_fields, _KV_SYSTEM) for f in files]  # type: ignore[arg-type]
        if not tables:
            schema = self.output_schema([f.name for f in read_fields])
            schema = schema.append(pa.field(SEQUENCE_NUMBER, pa.int64(), False))
            return schema.append(pa.field(VALUE_KIND, pa.int8(), False)).empty_table()
        if len(tables) == 1:
            return tables[0]  # keys are unique within one file
        return self.merge.merge_files(tables, [f.level for f in files])  # the table's engine

    def _diff(self, split: IncrementalSplit, fields: list[DataField]) -> pa.Table:
        """``IncrementalDiffSplitRead``: per key, the end state where it differs from the
        start (value or add/retract); with ``keep_delete`` a key only at the start comes out
        as ``-D``. Values are compared on every column, so all are read."""
        every = list(self.schema.fields)
        before = self._merged(split.before, split.before_files, every)
        after = self._merged(split, split.files, every)
        if not self.keep_delete:
            before = before.filter(_is_add(before))
            after = after.filter(_is_add(after))
        side = "\x00side"
        both = pa.concat_tables(
            [
                before.append_column(side, pa.array(np.zeros(before.num_rows, dtype=np.int8))),
                after.append_column(side, pa.array(np.ones(after.num_rows, dtype=np.int8))),
            ]
        )
        n = both.num_rows
        if n == 0:
            return self._output(both, fields)
        assert self.merge is not None
        key_names = list(self.merge.key_names)
        both, keys = with_order_columns(both, key_names)
        both = both.take(sort_indices_nulls_first(both, [(k, "ascending") for k in (*keys, side)]))
        sides = both.column(side).to_numpy()
        same_key = np.ones(max(n - 1, 0), dtype=bool)
        for name in keys:
            column = both.column(name)
            equal = pc.equal(column.slice(0, n - 1), column.slice(1))
            same_key &= equal.fill_null(False).to_numpy(zero_copy_only=False)
        pair_start = np.zeros(n, dtype=bool)
        pair_start[:-1] = same_key & (sides[:-1] == 0) & (sides[1:] == 1)
        pair_end = np.zeros(n, dtype=bool)
        pair_end[1:] = pair_start[:-1]
        single = ~pair_start & ~pair_end
        adds = _is_add(both).to_numpy(zero_copy_only=False)
        emit = single & (sides == 1)
        as_delete = single & (sides == 0) & adds if self.keep_delete else np.zeros(n, dtype=bool)
        if pair_start.any():
            same = _rows_equal(both, [f.name for f in every]) & (adds[:-1] == adds[1:])
            changed = np.zeros(n, dtype=bool)
            changed[1:] = pair_start[:-1] & ~same
            emit |= changed
        emit |= as_delete
        kinds = both.column(VALUE_KIND).to_numpy().copy()
        kinds[as_delete] = DELETE
        index = both.schema.get_field_index(VALUE_KIND)
        both = both.set_column(index, pa.field(VALUE_KIND, pa.int8(), False), pa.array(kinds))
        return self._output(both.filter(pa.array(emit)), fields)


_KV_SYSTEM = (SEQUENCE_NUMBER, VALUE_KIND)
_ADDS = pa.array([INSERT, UPDATE_AFTER], pa.int8())


def _is_add(data: pa.Table) -> pa.Array:
    return pc.is_in(data.column(VALUE_KIND), value_set=_ADDS)


def _rows_equal(data: pa.Table, names: Sequence[str]) -> np.ndarray:
    """Whether row i equals row i + 1 on ``names`` (nulls equal nulls, NaN equals NaN, as
    Paimon compares the binary rows)."""
    n = data.num_rows
    same = np.ones(n - 1, dtype=bool)
    for name in names:
        column = data.column(name)
        a, b = column.slice(0, n - 1), column.slice(1)
        try:
            equal = pc.equal(a, b).fill_null(False)
        except (pa.ArrowNotImplementedError, pa.ArrowInvalid):  # nested types
            values = column.to_pylist()
            same &= np.array([values[i] == values[i + 1] for i in range(n - 1)], dtype=bool)
            continue
        both_null = pc.and_(a.is_null(), b.is_null())
        equal = pc.or_(equal, both_null)
        if is_floating(column.type):
            equal = pc.or_(equal, pc.and_(pc.is_nan(a), pc.is_nan(b)).fill_null(False))
        same &= equal.to_numpy(zero_copy_only=False)
    return same

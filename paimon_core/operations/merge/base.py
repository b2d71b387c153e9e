"""The merge-function seam: how the records of one primary key become one row.

Java merges key-values one record at a time (``MergeFunction.reset/add/getResult`` behind a
``ReducerMergeFunctionWrapper``); here a whole batch of key-value rows is merged at once, so
that merge-on-read, the writer's buffer and (later) compaction run as Arrow/numpy operations on
executors:

1. ``merge_key_values`` sorts the rows into Java's merge order: by key (Java's order of
   FLOAT/DOUBLE keys), then by the ``sequence.field`` columns (``sequence.field.sort-order``,
   nulls oldest either way), then by ``_SEQUENCE_NUMBER``.
2. Keys with one record keep it as it is, kind and all (the reducer wrapper never calls the
   merge function for them: a lone ``-D`` stays a ``-D``, a lone ``+I`` is not aggregated).
3. The rows of the keys with several records go to ``MergeFunction.merge`` in one table, with
   the ``Groups`` (row ranges) of each key; it returns one row per key.
4. The result is in key order and keeps retractions (``_VALUE_KIND`` 1 or 3): a reader drops
   them (``drop_retractions``, Java's ``DropDeleteReader``); a compaction that does not write
   the last level keeps them, as Java's ``dropDelete = false``.

Rows are key-value rows: the table's value columns by name (the primary-key columns among
them), ``_SEQUENCE_NUMBER`` (int64) and ``_VALUE_KIND`` (int8 RowKind: 0 +I, 1 -U, 2 +U, 3 -D).
A merge function reads and returns exactly the columns (and types) it is given.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.format.float_order import with_order_columns
from paimon_core.operations.arrow_sort import sort_indices_nulls_first

SEQUENCE_NUMBER = "_SEQUENCE_NUMBER"
VALUE_KIND = "_VALUE_KIND"
INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = 0, 1, 2, 3
# +I and +U add; -U and -D retract. Built from bytes: `pa.array` of a list imports pandas
# (0.5 s), which the metadata-only shell path must not pay.
ADD_KINDS = pa.Array.from_buffers(pa.int8(), 2, [None, pa.py_buffer(bytes([0, 2]))])


@dataclass(frozen=True, eq=False)
class Groups:
    """The rows of each key in a table sorted in merge order: key ``g`` owns the rows
    ``starts[g]:ends[g]``; the groups are contiguous and cover every row."""

    starts: np.ndarray
    ends: np.ndarray

    @classmethod
    def of_lengths(cls, lengths: np.ndarray) -> Groups:
        ends = np.cumsum(lengths, dtype=np.int64)
        return cls(ends - lengths, ends)

    def __len__(self) -> int:
        return len(self.starts)

    @property
    def lengths(self) -> np.ndarray:
        return self.ends - self.starts

    @property
    def num_rows(self) -> int:
        return int(self.ends[-1]) if len(self.ends) else 0

    @property
    def ids(self) -> np.ndarray:
        """The group of every row."""
        return np.repeat(np.arange(len(self), dtype=np.int64), self.lengths)

    @property
    def last(self) -> np.ndarray:
        return self.ends - 1

    def last_where(self, mask: np.ndarray) -> np.ndarray:
        """Per group, the last row where ``mask`` holds, else -1."""
        if not len(self):
            return np.zeros(0, np.int64)
        index = np.where(mask, np.arange(len(mask), dtype=np.int64), -1)
        return np.maximum.reduceat(index, self.starts)

    def first_where(self, mask: np.ndarray) -> np.ndarray:
        """Per group, the first row where ``mask`` holds, else -1."""
        if not len(self):
            return np.zeros(0, np.int64)
        n = len(mask)
        index = np.where(mask, np.arange(n, dtype=np.int64), n)
        first = np.minimum.reduceat(index, self.starts)
        return np.where(first == n, -1, first)

    def any(self, mask: np.ndarray) -> np.ndarray:
        if not len(self):
            return np.zeros(0, bool)
        return np.logical_or.reduceat(mask, self.starts)

    def count(self, mask: np.ndarray) -> np.ndarray:
        if not len(self):
            return np.zeros(0, np.int64)
        return np.add.reduceat(mask.astype(np.int64), self.starts)


def kinds_of(rows: pa.Table) -> np.ndarray:
    """``_VALUE_KIND`` as an int8 numpy array."""
    return np.asarray(rows.column(VALUE_KIND).to_numpy(), dtype=np.int8)


def retractions(kinds: np.ndarray) -> np.ndarray:
    """-U and -D rows (Java's ``RowKind.isRetract``)."""
    return (kinds == UPDATE_BEFORE) | (kinds == DELETE)


def take_or_null(values: pa.Array | pa.ChunkedArray, index: np.ndarray) -> pa.Array:
    """``values[index]``, null where ``index`` is -1 (or masked)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    missing = index < 0
    indices = pa.array(np.where(missing, 0, index), mask=missing if missing.any() else None)
    return values.take(indices)


def valid_of(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Non-null positions as a numpy bool array."""
    if values.null_count == 0:
        return np.ones(len(values), bool)
    return np.asarray(pc.is_valid(values).to_numpy(zero_copy_only=False), dtype=bool)


class MergeFunction(ABC):
    """Merges the records of each key that has several (Java's ``MergeFunction``, in bulk).

    Implementations are frozen dataclasses built from a table's options
    (``merge.factory.merge_function``); they keep no state between calls, so one instance
    serves a whole read, write or compaction, on any executor.
    """

    def required_fields(self, names: Sequence[str]) -> list[str]:
        """The value columns a merge of ``names`` needs besides them (a projection pushed to
        the files must keep them: partial-update's sequence-group fields, for example)."""
        return []

    @abstractmethod
    def merge(self, rows: pa.Table, groups: Groups) -> pa.Table:
        """One row per group, in group order, with ``rows``' schema.

        Args:
            rows: key-value rows in merge order (see the module docstring); every group has
                at least two rows, except in lookup compactions (``reduce=False``).
            groups: the row range of each key.

        Returns:
            The merged row of each key, its ``_SEQUENCE_NUMBER`` and ``_VALUE_KIND`` those of
            Java's ``getResult`` (a retraction kind when the key is deleted).

        Raises:
            MergeError: records Paimon refuses to merge (a delete on an engine that cannot
                take one, a retraction of an aggregate that cannot retract).
        """


def merge_order(
    rows: pa.Table,
    key_names: Sequence[str],
    sequence_fields: Sequence[str] = (),
    sequence_ascending: bool = True,
) -> tuple[pa.Array, list[str], pa.Table]:
    """Indices sorting ``rows`` into merge order, plus the key order columns and the table
    holding them (keys compared as Java compares them)."""
    work, keys = with_order_columns(rows, key_names)
    work, sequences = with_order_columns(work, sequence_fields)
    direction = "ascending" if sequence_ascending else "descending"
    order = [(k, "ascending") for k in keys]
    order += [(s, direction) for s in sequences]
    order.append((SEQUENCE_NUMBER, "ascending"))
    return sort_indices_nulls_first(work, order), keys, work


def key_groups(sorted_keys: pa.Table) -> np.ndarray:
    """Lengths of the runs of equal keys in ``sorted_keys`` (all columns compared)."""
    n = sorted_keys.num_rows
    if n == 0:
        return np.zeros(0, np.int64)
    boundary = np.zeros(n - 1, dtype=bool)
    for name in sorted_keys.column_names:
        column = sorted_keys.column(name)
        differs = pc.not_equal(column.slice(0, n - 1), column.slice(1))
        boundary |= differs.fill_null(True).to_numpy(zero_copy_only=False)
    starts = np.concatenate([[0], np.flatnonzero(boundary) + 1]).astype(np.int64)
    return np.diff(np.append(starts, n))


def merge_key_values(
    rows: pa.Table,
    function: MergeFunction,
    key_names: Sequence[str],
    sequence_fields: Sequence[str] = (),
    sequence_ascending: bool = True,
    reduce: bool = True,
) -> pa.Table:
    """Merge key-value rows from any number of files or write batches: one row per key, in
    key order, retractions kept (see the module docstring). ``reduce=False`` passes lone
    records to the merge function too, as Java's lookup wrappers do (no reducer there)."""
    if rows.num_rows == 0:
        return rows
    order, keys, work = merge_order(rows, key_names, sequence_fields, sequence_ascending)
    rows = rows.take(order)
    lengths = key_groups(work.select(keys).take(order))
    if reduce and len(lengths) == rows.num_rows:
        return rows
    starts = np.cumsum(lengths) - lengths
    single = lengths == 1 if reduce else np.zeros(len(lengths), bool)
    lone = rows.take(pa.array(starts[single]))
    multi_lengths = lengths[~single]
    multi_starts = starts[~single]
    index = np.repeat(multi_starts - np.cumsum(multi_lengths) + multi_lengths, multi_lengths)
    index += np.arange(len(index), dtype=np.int64)
    merged = function.merge(rows.take(pa.array(index)), Groups.of_lengths(multi_lengths))
    if merged.schema != rows.schema:
        merged = merged.cast(rows.schema)
    position = np.concatenate([np.flatnonzero(single), np.flatnonzero(~single)])
    return pa.concat_tables([lone, merged]).take(pa.array(np.argsort(position, kind="stable")))


def drop_retractions(rows: pa.Table) -> pa.Table:
    """The rows a batch read shows: +I and +U (Java's ``DropDeleteReader``)."""
    return rows.filter(pc.is_in(rows.column(VALUE_KIND), value_set=ADD_KINDS))

"""The merge-function seam: how the records of one primary key become one row.

Java merges key-values one record at a time (``MergeFunction.reset/add/getResult`` behind a
``ReducerMergeFunctionWrapper``); here a whole batch of key-value rows is merged at once, so
that merge-on-read, the writer's buffer and (later) compaction run as Arrow/numpy operations on
executors:

1. ``merge_key_values`` sorts the rows into Java's merge order: by key (Java's order of
   FLOAT/DOUBLE keys), then by the ``sequence.field`` columns (``sequence.field.sort-order``,
   nulls oldest either way), then by ``_SEQUENCE_NUMBER``, then retractions before adds (Paimon
   2.1's ``SortMergeReaderWithLoserTree`` comparator). Records equal in all of that (writers
   that started from the same snapshot give the same sequence numbers) come in the order
   Java 2.1's loser tree pops them from its sorted runs (``loser_tree``), when the caller
   says which files the rows came from and how Java reads them (``SortedRuns``); without it,
   in the order of ``rows``.
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
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.format.float_order import with_order_columns
from paimon_core.operations.arrow_sort import sort_indices_nulls_first
from paimon_core.operations.merge.loser_tree import pop_order

SEQUENCE_NUMBER = "_SEQUENCE_NUMBER"
VALUE_KIND = "_VALUE_KIND"
_IS_ADD = "__paimon_merge_is_add"
_TIE_RANK = "__paimon_merge_tie_rank"
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
    order, keys, _, work = _merge_sort(rows, key_names, sequence_fields, sequence_ascending)
    return order, keys, work


def _merge_sort(
    rows: pa.Table,
    key_names: Sequence[str],
    sequence_fields: Sequence[str],
    sequence_ascending: bool,
    tie_rank: np.ndarray | None = None,
) -> tuple[pa.Array, list[str], list[str], pa.Table]:
    """``merge_order`` and the names of the columns that order a key's records (the
    sequence fields' order columns, ``_SEQUENCE_NUMBER``, retractions first); ``tie_rank``
    orders what they leave equal."""
    work, keys = with_order_columns(rows, key_names)
    work, sequences = with_order_columns(work, sequence_fields)
    direction = "ascending" if sequence_ascending else "descending"
    order = [(k, "ascending") for k in keys]
    order += [(s, direction) for s in sequences]
    order.append((SEQUENCE_NUMBER, "ascending"))
    records = [*sequences, SEQUENCE_NUMBER]
    if VALUE_KIND in rows.column_names:
        adds = pc.is_in(rows.column(VALUE_KIND), value_set=ADD_KINDS)
        work = work.append_column(_IS_ADD, adds)
        order.append((_IS_ADD, "ascending"))
        records.append(_IS_ADD)
    if tie_rank is not None:
        work = work.append_column(_TIE_RANK, pa.array(tie_rank, pa.int64()))
        order.append((_TIE_RANK, "ascending"))
    return sort_indices_nulls_first(work, order), keys, records, work


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


def _changes(sorted_rows: pa.Table) -> np.ndarray:
    """Between each two neighbouring rows, whether any column differs (two nulls are equal,
    as Java's comparators see them)."""
    n = sorted_rows.num_rows
    changed = np.zeros(max(n - 1, 0), dtype=bool)
    for name in sorted_rows.column_names:
        column = sorted_rows.column(name)
        before, after = column.slice(0, n - 1), column.slice(1)
        differs = pc.not_equal(before, after)
        if differs.null_count:
            both_null = pc.and_(pc.is_null(before), pc.is_null(after))
            differs = pc.if_else(both_null, False, differs.fill_null(True))
        changed |= differs.to_numpy(zero_copy_only=False)
    return changed


@dataclass(frozen=True)
class SortedRuns:
    """Which file each row of a merge came from and how Java reads those files: what it
    takes to order records that tie as Java's loser tree does.

    ``file_rows``: the rows of each file, in the order the merged table holds them;
    ``sections``: called only when records tie, the sections of sorted runs (one reader
    each, in Java's reader order), each run the indices of its files
    (``split_generator.merge_sections``)."""

    file_rows: Sequence[int]
    sections: Callable[[], Sequence[Sequence[Sequence[int]]]]


def java_pop_positions(
    rows: pa.Table,
    key_names: Sequence[str],
    sequence_fields: Sequence[str],
    sequence_ascending: bool,
    runs: SortedRuns,
) -> np.ndarray | None:
    """Each row's position in the order Java's merge pops ``rows`` (read from the files of
    ``runs``), or None when no records tie (the merge order alone is Java's): for merges
    of a subset of the rows (``merge_key_values``' ``tie_rank``)."""
    if rows.num_rows == 0:
        return None
    order, keys, records, work = _merge_sort(rows, key_names, sequence_fields, sequence_ascending)
    key_change = _changes(work.select(keys).take(order))
    return _tie_positions(order.to_numpy(), key_change, work, records, runs)


def _tie_positions(
    order: np.ndarray,
    key_change: np.ndarray,
    work: pa.Table,
    records: list[str],
    runs: SortedRuns,
) -> np.ndarray | None:
    """Each row's position in ``order`` with the records that tie (same key, same sequence:
    nothing Java's comparators tell apart) moved to the order Java's loser tree pops them,
    or None when none tie; only the sections that hold ties are replayed. ``key_change``:
    between neighbours in ``order``, whether the key changes."""
    record_change = key_change | _changes(work.select(records).take(pa.array(order)))
    ties = np.flatnonzero(~record_change)
    if not len(ties):
        return None
    n = len(order)
    key_rank = np.empty(n, np.int64)
    key_rank[order] = np.concatenate([[0], np.cumsum(key_change)])
    seq_rank = np.empty(n, np.int64)
    seq_rank[order] = np.concatenate([[0], np.cumsum(record_change)])
    position = np.empty(n, np.int64)
    position[order] = np.arange(n, dtype=np.int64)

    file_rows = np.asarray(runs.file_rows, dtype=np.int64)
    starts = np.cumsum(file_rows) - file_rows
    sections = runs.sections()
    section_of_file = np.empty(len(file_rows), np.int64)
    for s, section in enumerate(sections):
        for run in section:
            section_of_file[list(run)] = s
    file_of_row = np.repeat(np.arange(len(file_rows), dtype=np.int64), file_rows)
    for s in np.unique(section_of_file[file_of_row[order[ties]]]):
        run_rows = [
            np.concatenate(
                [np.arange(starts[f], starts[f] + file_rows[f], dtype=np.int64) for f in run]
                or [np.zeros(0, np.int64)]
            )
            for run in sections[s]
        ]
        members = np.concatenate(run_rows)
        local = np.empty(n, np.int64)
        local[members] = np.arange(len(members), dtype=np.int64)
        popped = members[
            pop_order([local[r] for r in run_rows], key_rank[members], seq_rank[members])
        ]
        position[popped] = np.sort(position[members])
    return position


def merge_key_values(
    rows: pa.Table,
    function: MergeFunction,
    key_names: Sequence[str],
    sequence_fields: Sequence[str] = (),
    sequence_ascending: bool = True,
    reduce: bool = True,
    runs: SortedRuns | None = None,
    tie_rank: np.ndarray | None = None,
) -> pa.Table:
    """Merge key-value rows from any number of files or write batches: one row per key, in
    key order, retractions kept (see the module docstring). ``reduce=False`` passes lone
    records to the merge function too, as Java's lookup wrappers do (no reducer there).
    ``runs``: where the rows came from, so that records that tie merge in Java's order;
    ``tie_rank``: that order given per row instead (``java_pop_positions`` of the rows these
    were picked from)."""
    if rows.num_rows == 0:
        return rows
    order, keys, records, work = _merge_sort(
        rows, key_names, sequence_fields, sequence_ascending, tie_rank
    )
    key_change = _changes(work.select(keys).take(order))
    starts = np.concatenate([[0], np.flatnonzero(key_change) + 1]).astype(np.int64)
    lengths = np.diff(np.append(starts, rows.num_rows))
    if reduce and len(lengths) == rows.num_rows:
        return rows.take(order)
    if runs is not None and len(lengths) < rows.num_rows:
        position = _tie_positions(order.to_numpy(), key_change, work, records, runs)
        if position is not None:
            order = pa.array(np.argsort(position, kind="stable"))
    rows = rows.take(order)
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

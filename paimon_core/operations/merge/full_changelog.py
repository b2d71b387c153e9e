"""The changelog of a full compaction (``changelog-producer`` = ``full-compaction``).

Java's ``FullChangelogMergeFunctionWrapper``, in bulk: a compaction into the highest level
compares, per key, the record it finds on that level (the value the last full compaction
produced) with the merged result of every record of the key, and emits:

* nothing for a key with only its top-level record (unchanged) or without a record there
  whose merge retracts it;
* ``+I`` (the merged record) for a key without a top-level record whose merge adds it;
* ``-D`` (the top-level record) for a key the merge retracts;
* ``-U`` (the top-level record) then ``+U`` (the merged record) for a key with a top-level
  record and new records, unless ``changelog-producer.row-deduplicate`` finds the two values
  equal (ignoring ``changelog-producer.row-deduplicate-ignore-fields``).

Each changelog record keeps the sequence number of the record it copies. A lone record
(one record of a key, not on the top level) is not merged: it comes out as it is, as Java's
wrapper returns it without calling the merge function.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.format.float_order import is_floating
from paimon_core.operations.merge.base import (
    ADD_KINDS,
    DELETE,
    INSERT,
    SEQUENCE_NUMBER,
    UPDATE_AFTER,
    UPDATE_BEFORE,
    VALUE_KIND,
    Groups,
    SortedRuns,
    key_groups,
    merge_order,
)


class KeyValueMerge(Protocol):
    """What the changelog reads of a ``factory.KeyValueMerge`` (which imports this module
    through ``lookup``)."""

    key_names: Sequence[str]
    sequence_fields: Sequence[str]
    sequence_ascending: bool

    def merge(
        self,
        rows: pa.Table,
        reduce: bool = True,
        runs: SortedRuns | None = None,
        tie_rank: np.ndarray | None = None,
    ) -> pa.Table: ...


__all__ = ["full_compaction_changelog", "same_values", "with_kind"]


def full_compaction_changelog(
    rows: pa.Table,
    top: np.ndarray,
    merge: KeyValueMerge,
    deduplicate: Sequence[str] | None = None,
    runs: SortedRuns | None = None,
    tie_rank: np.ndarray | None = None,
) -> tuple[pa.Table, pa.Table]:
    """The merged rows (one per key, retractions kept, as ``merge.merge``) and the changelog
    of a full compaction of ``rows``.

    Args:
        rows: key-value rows (value columns, ``_SEQUENCE_NUMBER``, ``_VALUE_KIND``) of every
            file compacted, in any order.
        top: per row, whether it comes from a file of the highest level.
        merge: the table's merge.
        deduplicate: the columns whose equality makes an update no change
            (``changelog-producer.row-deduplicate``); None: every update is emitted.
        runs, tie_rank: Java's order of records that tie (``merge.merge``'s).

    Returns:
        ``(merged, changelog)``: both with ``rows``' schema, in key order.
    """
    merged = merge.merge(rows, runs=runs, tie_rank=tie_rank)
    if rows.num_rows == 0:
        return merged, rows
    order, keys, work = merge_order(
        rows, merge.key_names, merge.sequence_fields, merge.sequence_ascending
    )
    ordered = rows.take(order)
    groups = Groups.of_lengths(key_groups(work.select(keys).take(order)))
    assert len(groups) == merged.num_rows
    top_row = groups.first_where(np.asarray(top, dtype=bool)[order.to_numpy()])
    has_top = top_row >= 0
    several = groups.lengths > 1
    adds = np.asarray(
        pc.is_in(merged.column(VALUE_KIND), value_set=ADD_KINDS).to_numpy(zero_copy_only=False),
        dtype=bool,
    )
    insert = ~has_top & adds
    delete = several & has_top & ~adds
    update = several & has_top & adds
    if deduplicate is not None and update.any():
        candidates = np.flatnonzero(update)
        before = ordered.take(pa.array(top_row[candidates]))
        after = merged.take(pa.array(candidates))
        update[candidates] = ~same_values(before, after, deduplicate)
    retracted = np.flatnonzero(delete | update)
    added = np.flatnonzero(insert | update)
    before_rows = with_kind(
        ordered.take(pa.array(top_row[retracted], pa.int64())),
        np.where(delete[retracted], DELETE, UPDATE_BEFORE),
    )
    after_rows = with_kind(
        merged.take(pa.array(added, pa.int64())),
        np.where(update[added], UPDATE_AFTER, INSERT),
    )
    changelog = pa.concat_tables([before_rows, after_rows])
    group = np.concatenate([retracted, added])
    side = np.concatenate([np.zeros(len(retracted), np.int64), np.ones(len(added), np.int64)])
    changelog_order = np.lexsort((side, group))
    return merged, changelog.take(pa.array(changelog_order, pa.int64()))


def with_kind(rows: pa.Table, kinds: np.ndarray) -> pa.Table:
    index = rows.schema.get_field_index(VALUE_KIND)
    field = pa.field(VALUE_KIND, pa.int8(), False)
    return rows.set_column(index, field, pa.array(kinds.astype(np.int8), pa.int8()))


def same_values(a: pa.Table, b: pa.Table, names: Sequence[str]) -> np.ndarray:
    """Row by row, whether ``a`` and ``b`` hold the same values in ``names`` (nulls equal
    nulls, NaN equals NaN: Java's ``RecordEqualiser`` compares binary values)."""
    same = np.ones(a.num_rows, dtype=bool)
    for name in names:
        if name in (SEQUENCE_NUMBER, VALUE_KIND):
            continue
        x, y = a.column(name), b.column(name)
        try:
            equal = pc.equal(x, y).fill_null(False)
        except (pa.ArrowNotImplementedError, pa.ArrowInvalid):  # nested types
            same &= np.array([p == q for p, q in zip(x.to_pylist(), y.to_pylist())], dtype=bool)
            continue
        equal = pc.or_(equal, pc.and_(x.is_null(), y.is_null()))
        if is_floating(x.type):
            equal = pc.or_(equal, pc.and_(pc.is_nan(x), pc.is_nan(y)).fill_null(False))
        same &= np.asarray(equal.to_numpy(zero_copy_only=False), dtype=bool)
    return same

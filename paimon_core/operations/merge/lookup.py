"""What Paimon's ``LookupMergeFunction`` merges on lookup tables.

Tables that need lookup (``CoreOptions.needLookup``: ``changelog-producer`` = ``lookup``,
``deletion-vectors.enabled``, ``merge-engine`` = ``first-row``) are compacted with lookups,
so the record a key has on a level above 0 already holds the merged value of every record of
the key below it. Paimon therefore merges, for such tables (except first-row, whose merge is
already right), only the key's level-0 records and its record on the lowest level above 0,
in reads and compactions alike (``PrimaryKeyFileStoreTable.store`` wraps the merge function):
merging the deeper records again would count an aggregate twice.

A compaction of level-0 files into a level above 0 runs every key through Java's lookup
wrapper (``LookupChangelogMergeFunctionWrapper``): with ``changelog-producer`` = ``lookup``
its changelog compares the key's record before (``lookup_changelog``) with the merged one.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.operations.merge.base import (
    ADD_KINDS,
    DELETE,
    INSERT,
    UPDATE_AFTER,
    UPDATE_BEFORE,
    VALUE_KIND,
)
from paimon_core.operations.merge.full_changelog import same_values, with_kind

__all__ = ["lookup_candidates", "lookup_changelog", "lookup_keep", "needs_lookup"]

_LEVEL = "__paimon_level"
_ROW = "__paimon_row"


def needs_lookup(
    primary_key: bool, merge_engine: str, deletion_vectors: bool, changelog_producer: str
) -> bool:
    """Java's ``CoreOptions.needLookup`` for the options this implementation knows."""
    return primary_key and (
        merge_engine == "first-row" or deletion_vectors or changelog_producer == "lookup"
    )


def lookup_candidates(
    tables: Sequence[pa.Table], levels: Sequence[int], key_names: Sequence[str]
) -> tuple[pa.Table, np.ndarray]:
    """The rows of ``tables`` (one per file, ``levels`` theirs) that ``LookupMergeFunction``
    merges: per key, every level-0 row and the row of the lowest level above 0.

    Returns the rows (file order kept) and the level of each."""
    rows = pa.concat_tables(tables) if len(tables) != 1 else tables[0]
    row_levels = np.repeat(np.asarray(levels, dtype=np.int64), [t.num_rows for t in tables])
    keep = lookup_keep(rows, row_levels, key_names)
    if keep is None:
        return rows, row_levels
    return rows.filter(pa.array(keep)), row_levels[keep]


def lookup_keep(
    rows: pa.Table, row_levels: np.ndarray, key_names: Sequence[str]
) -> np.ndarray | None:
    """Which of ``rows`` (of files concatenated, ``row_levels`` per row) ``lookup_candidates``
    keeps, or None for all."""
    high = row_levels > 0
    if len({int(lv) for lv in np.unique(row_levels) if lv > 0}) <= 1:
        return None  # a key has one row per level: nothing deeper to drop
    keys = list(key_names)
    marked = rows.select(keys).append_column(_LEVEL, pa.array(row_levels))
    marked = marked.append_column(_ROW, pa.array(np.arange(rows.num_rows)))
    upper = marked.filter(pa.array(high))
    lowest = upper.group_by(keys).aggregate([(_LEVEL, "min")])
    lowest = lowest.rename_columns([*keys, _LEVEL])
    kept = upper.join(lowest, [*keys, _LEVEL], join_type="left semi")
    keep = ~high
    keep[kept.column(_ROW).to_numpy()] = True
    return None if keep.all() else keep


def lookup_changelog(
    after: pa.Table,
    before: pa.Table,
    key_names: Sequence[str],
    deduplicate: Sequence[str] | None = None,
) -> pa.Table:
    """``LookupChangelogMergeFunctionWrapper.setChangelog`` of the keys of ``after`` (their
    merged records, in key order: the keys with a level-0 record), against ``before`` (at
    most one record per key: the one above level 0, or the one a lookup found).

    A key without a record before, or whose record before is a retraction, gets ``+I`` when
    its merge adds it; a key whose merge retracts it gets ``-D`` of the record before; else
    ``-U`` (before) and ``+U`` (after), unless ``deduplicate`` (the columns compared by
    ``changelog-producer.row-deduplicate``) finds them equal. Returns ``after``'s schema,
    in key order, each key's ``-U`` before its ``+U``."""
    keys = list(key_names)
    if not after.num_rows:
        return after
    match = np.full(after.num_rows, -1, np.int64)
    if before.num_rows:
        a = after.select(keys).append_column(_ROW, pa.array(np.arange(after.num_rows)))
        b = before.select(keys).append_column(_LEVEL, pa.array(np.arange(before.num_rows)))
        joined = a.join(b, keys, join_type="inner")
        match[joined.column(_ROW).to_numpy()] = joined.column(_LEVEL).to_numpy()
    present = match >= 0
    earlier = before.take(pa.array(np.where(present, match, 0))) if before.num_rows else None
    before_add = present.copy()
    if earlier is not None:
        before_add &= _adds(earlier)
    after_add = _adds(after)
    insert = ~before_add & after_add
    delete = before_add & ~after_add
    update = before_add & after_add
    if deduplicate is not None and update.any():
        assert earlier is not None
        changed = np.flatnonzero(update)
        index = pa.array(changed)
        update[changed] = ~same_values(earlier.take(index), after.take(index), deduplicate)
    retracted = np.flatnonzero(delete | update)
    added = np.flatnonzero(insert | update)
    parts = []
    if len(retracted):
        assert earlier is not None
        kinds = np.where(delete[retracted], DELETE, UPDATE_BEFORE)
        parts.append(with_kind(earlier.take(pa.array(retracted)), kinds))
    kinds = np.where(update[added], UPDATE_AFTER, INSERT)
    parts.append(with_kind(after.take(pa.array(added, pa.int64())), kinds))
    changelog = pa.concat_tables(parts)
    group = np.concatenate([retracted, added])
    side = np.concatenate([np.zeros(len(retracted), np.int64), np.ones(len(added), np.int64)])
    return changelog.take(pa.array(np.lexsort((side, group)), pa.int64()))


def _adds(rows: pa.Table) -> np.ndarray:
    return np.asarray(
        pc.is_in(rows.column(VALUE_KIND), value_set=ADD_KINDS).to_numpy(zero_copy_only=False),
        dtype=bool,
    )

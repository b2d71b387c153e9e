"""What Paimon's ``LookupMergeFunction`` merges on lookup tables.

Tables that need lookup (``CoreOptions.needLookup``: ``changelog-producer`` = ``lookup``,
``deletion-vectors.enabled``, ``merge-engine`` = ``first-row``) are compacted with lookups,
so the record a key has on a level above 0 already holds the merged value of every record of
the key below it. Paimon therefore merges, for such tables (except first-row, whose merge is
already right), only the key's level-0 records and its record on the lowest level above 0,
in reads and compactions alike (``PrimaryKeyFileStoreTable.store`` wraps the merge function):
merging the deeper records again would count an aggregate twice.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

__all__ = ["lookup_candidates", "needs_lookup"]

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
    high = row_levels > 0
    if len({lv for lv in levels if lv > 0}) <= 1:
        return rows, row_levels  # a key has one row per level: nothing deeper to drop
    keys = list(key_names)
    marked = rows.select(keys).append_column(_LEVEL, pa.array(row_levels))
    marked = marked.append_column(_ROW, pa.array(np.arange(rows.num_rows)))
    upper = marked.filter(pa.array(high))
    lowest = upper.group_by(keys).aggregate([(_LEVEL, "min")])
    lowest = lowest.rename_columns([*keys, _LEVEL])
    kept = upper.join(lowest, [*keys, _LEVEL], join_type="left semi")
    keep = ~high
    keep[kept.column(_ROW).to_numpy()] = True
    if keep.all():
        return rows, row_levels
    return rows.filter(pa.array(keep)), row_levels[keep]

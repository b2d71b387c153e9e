"""``merge-engine = first-row``: the first record of a key wins (Java's ``FirstRowMergeFunction``).

First means first in merge order (lowest ``_SEQUENCE_NUMBER``; first-row tables have no
``sequence.field``). Paimon cannot take retractions here: a key with several records one of
which is ``-U``/``-D`` fails the read unless ``ignore-delete`` (``first-row.ignore-delete``)
skips them (the message names ``ignore-delete``, as the latest Paimon's). A lookup
compaction merges lone records too, so a lone ``-D`` fails the write that compacts it.

Java writes first-row tables with lookup compaction (every commit is followed by a COMPACT
snapshot that moves new keys out of level 0 and drops keys already present), and its batch
scans skip level-0 files (``TableScan`` does the same): a read merges files of levels >= 1,
where each key is usually present once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from paimon_core.exceptions import MergeError
from paimon_core.operations.merge.base import Groups, MergeFunction, kinds_of, retractions


@dataclass(frozen=True)
class FirstRowMergeFunction(MergeFunction):
    ignore_delete: bool = False

    def merge(self, rows: pa.Table, groups: Groups) -> pa.Table:
        retract = retractions(kinds_of(rows))
        if retract.any() and not self.ignore_delete:
            raise MergeError(
                "By default, First row merge engine can not accept DELETE/UPDATE_BEFORE "
                "records. You can config 'ignore-delete' to ignore the "
                "DELETE/UPDATE_BEFORE records."
            )
        first_add = groups.first_where(~retract)
        return rows.take(pa.array(np.where(first_add < 0, groups.starts, first_add)))

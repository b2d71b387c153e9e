"""``merge-engine = deduplicate``: the latest record of a key wins (Java's
``DeduplicateMergeFunction``).

The latest is the last in merge order: highest ``sequence.field`` values (lowest with
``sequence.field.sort-order = descending``), then highest ``_SEQUENCE_NUMBER``. A winning ``-D``
or ``-U`` deletes the key. With ``ignore-delete`` retractions are skipped: the last +I/+U wins
(a key with only retractions keeps its last one, which a read then drops).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from paimon_core.operations.merge.base import Groups, MergeFunction, kinds_of, retractions


@dataclass(frozen=True)
class DeduplicateMergeFunction(MergeFunction):
    ignore_delete: bool = False

    def merge(self, rows: pa.Table, groups: Groups) -> pa.Table:
        pick = groups.last
        if self.ignore_delete:
            latest_add = groups.last_where(~retractions(kinds_of(rows)))
            pick = np.where(latest_add < 0, pick, latest_add)
        return rows.take(pa.array(pick))

"""deduplicate: the latest record wins, a winning retraction deletes; ignore-delete skips them."""

from __future__ import annotations

import pyarrow as pa

from paimon_core.operations.merge.base import merge_key_values
from paimon_core.operations.merge.deduplicate import DeduplicateMergeFunction
from tests.unit.paimon_core.operations.merge.helpers import kv_rows, shown

SCHEMA = pa.schema([pa.field("k", pa.int32(), False), ("v", pa.string())])
ROWS = [{"k": 1, "v": "a"}, {"k": 1, "v": "gone"}, {"k": 2, "v": "x"}, {"k": 2, "v": "y"}]
KINDS = ["+I", "-D", "-U", "-D"]


def test_the_latest_record_wins_retractions_included() -> None:
    merged = merge_key_values(kv_rows(SCHEMA, ROWS, KINDS), DeduplicateMergeFunction(), ["k"])
    assert shown(merged) == [(1, "gone", 3), (2, "y", 3)]


def test_ignore_delete_keeps_the_latest_addition() -> None:
    function = DeduplicateMergeFunction(ignore_delete=True)
    merged = merge_key_values(kv_rows(SCHEMA, ROWS, KINDS), function, ["k"])
    # key 2 has only retractions: its last one stays, and a read drops it.
    assert shown(merged) == [(1, "a", 0), (2, "y", 3)]

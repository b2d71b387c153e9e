"""first-row: the first record wins; retractions fail unless ignore-delete skips them."""

from __future__ import annotations

import pyarrow as pa
import pytest

from paimon_core.exceptions import MergeError
from paimon_core.operations.merge.base import merge_key_values
from paimon_core.operations.merge.first_row import FirstRowMergeFunction
from tests.unit.paimon_core.operations.merge.helpers import kv_rows, shown

SCHEMA = pa.schema([pa.field("k", pa.int32(), False), ("v", pa.string())])


def test_the_first_record_wins() -> None:
    rows = kv_rows(SCHEMA, [{"k": 1, "v": "b"}, {"k": 1, "v": "a"}], sequences=[9, 4])
    assert shown(merge_key_values(rows, FirstRowMergeFunction(), ["k"])) == [(1, "a", 0)]


def test_retractions_fail_unless_ignored() -> None:
    rows = kv_rows(SCHEMA, [{"k": 1, "v": "d"}, {"k": 1, "v": "a"}], ["-D", "+I"])
    with pytest.raises(MergeError, match=r"config 'ignore-delete' to ignore"):
        merge_key_values(rows, FirstRowMergeFunction(), ["k"])
    merged = merge_key_values(rows, FirstRowMergeFunction(ignore_delete=True), ["k"])
    assert shown(merged) == [(1, "a", 0)]
    # A lone retraction never reaches the function (Paimon's reducer): it is kept as it is.
    lone = kv_rows(SCHEMA, [{"k": 2, "v": "d"}], ["-D"])
    assert shown(merge_key_values(lone, FirstRowMergeFunction(), ["k"])) == [(2, "d", 3)]

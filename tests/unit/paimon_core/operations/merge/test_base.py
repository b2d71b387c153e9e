"""The seam: merge order, lone records passing through, key order, the groups given to merge
functions, and retractions kept for the caller."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from paimon_core.operations.merge.base import (
    Groups,
    MergeFunction,
    drop_retractions,
    merge_key_values,
)
from tests.unit.paimon_core.operations.merge.helpers import kv_rows, shown

SCHEMA = pa.schema([pa.field("k", pa.int32(), False), ("v", pa.string()), ("s", pa.int32())])


class Recording(MergeFunction):
    """Keeps the last row of each group and records what it was given."""

    def __init__(self) -> None:
        self.seen: list[list[tuple]] = []

    def merge(self, rows: pa.Table, groups: Groups) -> pa.Table:
        data = [(r["k"], r["v"]) for r in rows.to_pylist()]
        self.seen = [data[s:e] for s, e in zip(groups.starts, groups.ends)]
        return rows.take(pa.array(groups.last))


def test_only_keys_with_several_records_reach_the_function_in_merge_order() -> None:
    rows = kv_rows(
        SCHEMA,
        [{"k": 2, "v": "b1"}, {"k": 1, "v": "lone"}, {"k": 3, "v": "x"}, {"k": 2, "v": "b0"},
         {"k": 3, "v": "gone"}],
        kinds=["+I", "+I", "+I", "+I", "-D"],
        sequences=[5, 1, 2, 3, 7],
    )  # fmt: skip
    function = Recording()
    merged = merge_key_values(rows, function, ["k"])
    assert function.seen == [[(2, "b0"), (2, "b1")], [(3, "x"), (3, "gone")]]
    assert shown(merged) == [(1, "lone", None, 0), (2, "b1", None, 0), (3, "gone", None, 3)]
    assert shown(drop_retractions(merged)) == [(1, "lone", None, 0), (2, "b1", None, 0)]


def test_a_lone_retraction_is_kept_as_it_is() -> None:
    rows = kv_rows(SCHEMA, [{"k": 1, "v": "d"}], kinds=["-D"])
    assert shown(merge_key_values(rows, Recording(), ["k"])) == [(1, "d", None, 3)]


def test_sequence_fields_order_before_sequence_numbers_nulls_oldest() -> None:
    rows = kv_rows(
        SCHEMA,
        [{"k": 1, "v": "s5", "s": 5}, {"k": 1, "v": "s-null"}, {"k": 1, "v": "s3", "s": 3},
         {"k": 1, "v": "s5-later", "s": 5}],
    )  # fmt: skip
    up = Recording()
    merge_key_values(rows, up, ["k"], ["s"])
    assert [v for _, v in up.seen[0]] == ["s-null", "s3", "s5", "s5-later"]
    down = Recording()
    merge_key_values(rows, down, ["k"], ["s"], sequence_ascending=False)
    assert [v for _, v in down.seen[0]] == ["s-null", "s5", "s5-later", "s3"]


def test_groups_helpers() -> None:
    groups = Groups.of_lengths(np.array([2, 3, 1]))
    assert groups.starts.tolist() == [0, 2, 5] and groups.ids.tolist() == [0, 0, 1, 1, 1, 2]
    mask = np.array([True, False, False, True, False, False])
    assert groups.last_where(mask).tolist() == [0, 3, -1]
    assert groups.first_where(~mask).tolist() == [1, 2, 5]
    assert groups.count(mask).tolist() == [1, 1, 0] and groups.any(mask).tolist() == [
        True,
        True,
        False,
    ]

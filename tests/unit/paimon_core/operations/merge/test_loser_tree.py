"""Java's loser tree replayed (``merge.loser_tree``) and the merge order of records that tie
(``merge_key_values`` with ``SortedRuns``)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from paimon_core.operations.merge.base import SortedRuns, merge_key_values
from paimon_core.operations.merge.deduplicate import DeduplicateMergeFunction
from paimon_core.operations.merge.loser_tree import pop_order
from tests.unit.paimon_core.operations.merge.helpers import kv_rows, shown

SCHEMA = pa.schema([pa.field("k", pa.int32(), False), ("v", pa.string())])


def _runs(*runs: list[int]) -> list[np.ndarray]:
    return [np.asarray(r, np.int64) for r in runs]


def test_two_runs_of_the_same_keys_and_sequences_alternate() -> None:
    """Rows 0-3 (run 0) and 4-7 (run 1) hold keys 0-3 with equal sequences: at the start the
    record sitting in the tree (run 1's, placed first) pops first; from then on the run that
    advanced last meets the other's record sitting and pops after it, key by key."""
    keys = np.array([0, 1, 2, 3, 0, 1, 2, 3])
    same = np.zeros(8, np.int64)
    assert pop_order(_runs([0, 1, 2, 3], [4, 5, 6, 7]), keys, same).tolist() == [
        4, 0, 1, 5, 6, 2, 3, 7,
    ]  # fmt: skip


@pytest.mark.parametrize("seed", range(5))
def test_without_ties_records_pop_by_key_then_sequence(seed: int) -> None:
    rng = np.random.default_rng(seed)
    runs: list[np.ndarray] = []
    keys: list[int] = []
    seqs: list[int] = []
    start = 0
    for _ in range(int(rng.integers(1, 7))):
        run_keys = np.sort(rng.choice(40, size=int(rng.integers(0, 25)), replace=False))
        runs.append(np.arange(start, start + len(run_keys), dtype=np.int64))
        keys += run_keys.tolist()
        seqs += rng.permutation(1000)[: len(run_keys)].tolist()  # distinct per record
        start += len(run_keys)
    key_rank, seq_rank = np.asarray(keys, np.int64), np.asarray(seqs, np.int64)
    expected = np.lexsort((seq_rank, key_rank)).tolist()
    assert pop_order(runs, key_rank, seq_rank).tolist() == expected


def _tied_files(first: list[int], second: list[int]) -> tuple[pa.Table, list[int]]:
    a = kv_rows(SCHEMA, [{"k": k, "v": "A"} for k in first], sequences=[5] * len(first))
    b = kv_rows(SCHEMA, [{"k": k, "v": "B"} for k in second], sequences=[5] * len(second))
    return pa.concat_tables([a, b]), [a.num_rows, b.num_rows]


def test_merge_orders_ties_as_the_readers_pop_them() -> None:
    rows, file_rows = _tied_files([0, 1, 2, 3], [0, 1, 2, 3])
    merge = DeduplicateMergeFunction()
    plain = merge_key_values(rows, merge, ["k"])
    assert [v for _, v, _ in shown(plain)] == ["B"] * 4  # rows' order: the second file last
    as_read = SortedRuns(file_rows, lambda: [[[0], [1]]])  # reader 0 holds file 0
    got = merge_key_values(rows, merge, ["k"], runs=as_read)
    assert [v for _, v, _ in shown(got)] == ["A", "B", "A", "B"]
    swapped = SortedRuns(file_rows, lambda: [[[1], [0]]])
    got = merge_key_values(rows, merge, ["k"], runs=swapped)
    assert [v for _, v, _ in shown(got)] == ["B", "A", "B", "A"]


def test_sections_without_ties_are_not_replayed() -> None:
    rows = kv_rows(SCHEMA, [{"k": k, "v": "A"} for k in range(3)] * 2, sequences=range(6))

    def sections() -> list[list[list[int]]]:
        raise AssertionError("no record ties: the readers are not needed")

    got = merge_key_values(
        rows, DeduplicateMergeFunction(), ["k"], runs=SortedRuns([3, 3], sections)
    )
    assert shown(got) == [(0, "A", 0), (1, "A", 0), (2, "A", 0)]


@pytest.mark.parametrize("delete_first", [True, False])
def test_an_add_outlasts_a_retraction_of_the_same_sequence(delete_first: bool) -> None:
    """Paimon 2.1's comparator: equal sequence numbers pop the retraction first, so the add
    wins whichever file and reader holds it."""
    add = kv_rows(SCHEMA, [{"k": 1, "v": "kept"}], sequences=[7])
    delete = kv_rows(SCHEMA, [{"k": 1, "v": None}], kinds=["-D"], sequences=[7])
    rows = pa.concat_tables([delete, add] if delete_first else [add, delete])
    for order in ([[[0], [1]]], [[[1], [0]]]):
        runs = SortedRuns([1, 1], lambda order=order: order)
        got = merge_key_values(rows, DeduplicateMergeFunction(), ["k"], runs=runs)
        assert shown(got) == [(1, "kept", 0)]

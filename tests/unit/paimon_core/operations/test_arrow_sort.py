"""Nulls-first sorting without pyarrow's deprecated global ``null_placement``."""

from __future__ import annotations

import warnings

import pyarrow as pa

from paimon_core.operations.arrow_sort import sort_indices_nulls_first


def test_sorts_nulls_first_by_several_keys_without_warnings() -> None:
    table = pa.table({"k": [2, None, 1, 1], "s": [0, 5, 9, None]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        order = sort_indices_nulls_first(table, [("k", "ascending"), ("s", "descending")])
    assert table.take(order).to_pylist() == [
        {"k": None, "s": 5},
        {"k": 1, "s": None},
        {"k": 1, "s": 9},
        {"k": 2, "s": 0},
    ]

"""``TableSorter``: rows in column order (nulls first), z-order or Hilbert order; byte rows
ordered as unsigned bytes."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from paimon_core.exceptions import InvalidArgument
from paimon_core.format.types import INT, STRING, DataField
from paimon_core.operations.sort.table_sorter import TableSorter, byte_rows_order

FIELDS = (DataField(0, "x", INT()), DataField(1, "y", INT()), DataField(2, "s", STRING()))


def _grid() -> pa.Table:
    rng = np.random.default_rng(7)
    points = [(x, y) for x in range(4) for y in range(4)]
    shuffled = [points[k] for k in rng.permutation(16)]
    return pa.table(
        {
            "x": pa.array([p[0] for p in shuffled], pa.int32()),
            "y": pa.array([p[1] for p in shuffled], pa.int32()),
            "s": pa.array([f"{p}" for p in shuffled]),
        }
    )


def _points(table: pa.Table) -> list[tuple[int, int]]:
    return list(zip(table.column("x").to_pylist(), table.column("y").to_pylist()))


@pytest.mark.parametrize("width", [1, 3, 8, 9, 63])
def test_byte_rows_order_is_unsigned_lexicographic_and_stable(width: int) -> None:
    rng = np.random.default_rng(width)
    keys = rng.integers(0, 4, size=(200, width)).astype(np.uint8) * np.uint8(85)  # 0, 85, 170, 255
    expected = sorted(range(200), key=lambda k: bytes(keys[k]))
    assert byte_rows_order(keys).tolist() == expected


def test_zorder_sorts_a_grid_in_morton_order() -> None:
    rows = TableSorter("zorder", FIELDS, ("x", "y")).sort(_grid())
    # Equal high bytes (sign bit flipped): the order is x1 y1 x0 y0 of the small values.
    morton = sorted(
        _points(_grid()),
        key=lambda p: ((p[0] >> 1) << 3) | ((p[1] >> 1) << 2) | ((p[0] & 1) << 1) | (p[1] & 1),
    )
    assert _points(rows) == morton
    assert rows.column("s").to_pylist() == [f"{p}" for p in morton]


def test_hilbert_sorts_a_grid_along_the_curve() -> None:
    rows = TableSorter("hilbert", FIELDS, ("x", "y")).sort(_grid())
    assert _points(rows)[:4] == [(0, 0), (0, 1), (1, 1), (1, 0)]
    steps = [abs(a[0] - b[0]) + abs(a[1] - b[1]) for a, b in zip(_points(rows), _points(rows)[1:])]
    assert steps == [1] * 15


def test_order_sorts_by_columns_nulls_first() -> None:
    data = pa.table(
        {
            "x": pa.array([2, None, 1, 1], pa.int32()),
            "y": pa.array([0, 0, 5, 3], pa.int32()),
            "s": ["a", "b", "c", "d"],
        }
    )
    rows = TableSorter("order", FIELDS, ("x", "y")).sort(data)
    assert rows.column("s").to_pylist() == ["b", "d", "c", "a"]


@pytest.mark.parametrize(
    ("order_type", "columns", "message"),
    [
        ("spiral", ("x",), "cannot match order type"),
        ("zorder", (), "order column could not be empty"),
        ("order", ("x", "q"), "Can't find column q"),
        ("hilbert", ("x",), "at least two columns"),
    ],
)
def test_refused_sorters(order_type: str, columns: tuple[str, ...], message: str) -> None:
    with pytest.raises(InvalidArgument, match=message):
        TableSorter(order_type, FIELDS, columns)

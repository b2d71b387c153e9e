"""Hilbert indexes against davidmoten's hilbert-curve 0.2.2 expectations
(``src/test/resources/expected/indexes-2d-bits-N.txt``: row i, column j is ``index(i, j)``) and
values of Java's ``HilbertIndexer``/``ConvertBinaryUtil`` worked out by hand."""

from __future__ import annotations

import datetime
import itertools
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest

from paimon_core.exceptions import InvalidArgument, UnsupportedFeature
from paimon_core.format.types import (
    BIGINT,
    BOOLEAN,
    DECIMAL,
    DOUBLE,
    FLOAT,
    INT,
    MAP,
    STRING,
    TIMESTAMP,
    TINYINT,
    DataField,
    DataType,
)
from paimon_core.operations.sort.hilbert import (
    BITS_NUM,
    PRIMITIVE_EMPTY,
    HilbertIndexer,
    hilbert_curve_pos_bytes,
    hilbert_index_bytes,
    to_padded_byte_array,
)

EXPECTED_BITS_2 = [[0, 3, 4, 5], [1, 2, 7, 6], [14, 13, 8, 9], [15, 12, 11, 10]]
EXPECTED_BITS_3 = [
    [0, 1, 14, 15, 16, 19, 20, 21],
    [3, 2, 13, 12, 17, 18, 23, 22],
    [4, 7, 8, 11, 30, 29, 24, 25],
    [5, 6, 9, 10, 31, 28, 27, 26],
    [58, 57, 54, 53, 32, 35, 36, 37],
    [59, 56, 55, 52, 33, 34, 39, 38],
    [60, 61, 50, 51, 46, 45, 40, 41],
    [63, 62, 49, 48, 47, 44, 43, 42],
]


def _grid(side: int) -> list[np.ndarray]:
    i, j = np.meshgrid(np.arange(side), np.arange(side), indexing="ij")
    return [i.ravel().astype(np.uint64), j.ravel().astype(np.uint64)]


def _ints(matrix: np.ndarray) -> list[int]:
    return [int.from_bytes(bytes(row), "big") for row in matrix]


@pytest.mark.parametrize(("bits", "expected"), [(2, EXPECTED_BITS_2), (3, EXPECTED_BITS_3)])
def test_curve_matches_the_libraries_expected_grids(bits: int, expected) -> None:
    side = 1 << bits
    got = _ints(hilbert_index_bytes(bits, _grid(side)))
    assert np.array(got).reshape(side, side).tolist() == expected


def test_paimon_curve_visits_a_small_grid_in_hilbert_order() -> None:
    index = hilbert_curve_pos_bytes(_grid(4))
    assert index.shape == (16, BITS_NUM)
    # 63 bits is odd like 3: the curve starts as bits 3's top-left block.
    assert np.array(_ints(index)).reshape(4, 4).tolist() == [r[:4] for r in EXPECTED_BITS_3[:4]]
    points = sorted(range(16), key=lambda k: _ints(index)[k])
    steps = [abs(a // 4 - b // 4) + abs(a % 4 - b % 4) for a, b in itertools.pairwise(points)]
    assert steps == [1] * 15


def test_only_the_low_63_bits_of_a_long_count() -> None:
    minus_one = hilbert_curve_pos_bytes([np.array([-1]), np.array([0])])
    maximum = hilbert_curve_pos_bytes([np.array([PRIMITIVE_EMPTY]), np.array([0])])
    assert bytes(minus_one[0]) == bytes(maximum[0])


def test_to_byte_array_is_padded_or_cut_to_63_bytes() -> None:
    def padded(value: int) -> bytes:
        fixed = np.frombuffer(value.to_bytes(65, "big"), dtype=np.uint8).reshape(1, 65)
        return bytes(to_padded_byte_array(fixed)[0])

    assert padded(5) == bytes(62) + b"\x05"
    assert padded(2**495) == b"\x00\x80" + bytes(61)  # toByteArray: 63 bytes, sign byte first
    assert padded(2**503 + 7) == b"\x00\x80" + bytes(61)  # 64 bytes: the last one is cut
    assert padded(0) == bytes(63)


def _longs(data_type: DataType, values: list, arrow_type: pa.DataType) -> list[int]:
    return HilbertIndexer.column_longs(pa.array(values, arrow_type), data_type).tolist()


def test_values_as_javas_longs() -> None:
    big_endian = int.from_bytes(b"abcdefgh", "big")
    assert _longs(STRING(), ["a", "ab", "abcdefghij", "", None], pa.string()) == [
        0x61,
        0x6162,
        big_endian,
        0,
        PRIMITIVE_EMPTY,
    ]
    assert _longs(TINYINT(), [-1, 5, None], pa.int8()) == [255, 5, PRIMITIVE_EMPTY]
    assert _longs(INT(), [-3, None], pa.int32()) == [-3, PRIMITIVE_EMPTY]
    assert _longs(BOOLEAN(), [True, False, None], pa.bool_()) == [
        PRIMITIVE_EMPTY,
        0,
        PRIMITIVE_EMPTY,
    ]
    decimals = [Decimal("-1.5"), Decimal("2.7"), None]
    assert _longs(DECIMAL(10, 1), decimals, pa.decimal128(10, 1)) == [-1, 2, PRIMITIVE_EMPTY]
    assert _longs(DOUBLE(), [1.0, float("nan")], pa.float64()) == [
        0x3FF0000000000000,
        0x7FF8000000000000,
    ]
    assert _longs(FLOAT(), [-2.0], pa.float32()) == [-0x4000000000000000]  # 0xC000000000000000
    epoch = datetime.datetime(1970, 1, 1)
    assert _longs(TIMESTAMP(3), [epoch + datetime.timedelta(seconds=2)], pa.timestamp("ms")) == [
        2000
    ]


def test_indexer_orders_rows_and_refuses_bad_columns() -> None:
    fields = (
        DataField(0, "x", BIGINT()),
        DataField(1, "y", BIGINT()),
        DataField(2, "m", MAP(INT(), INT())),
    )
    indexer = HilbertIndexer(fields, ("x", "y"))
    data = pa.table(
        {"x": [0, 1, 1, None], "y": [0, 0, 1, 0], "m": [None] * 4},
        schema=pa.schema(
            [("x", pa.int64()), ("y", pa.int64()), ("m", pa.map_(pa.int32(), pa.int32()))]
        ),
    )
    index = indexer.index(data)
    assert _ints(index)[:3] == [0, 3, 2]  # bits 63's (i, j) order: (0,0)=0, (1,0)=3, (1,1)=2
    assert (
        _ints(index)[3]
        == _ints(hilbert_curve_pos_bytes([np.array([PRIMITIVE_EMPTY]), np.array([0])]))[0]
    )
    with pytest.raises(InvalidArgument, match="at least two columns"):
        HilbertIndexer(fields, ("x",))
    with pytest.raises(UnsupportedFeature, match="type is unsupported"):
        HilbertIndexer(fields, ("x", "m"))

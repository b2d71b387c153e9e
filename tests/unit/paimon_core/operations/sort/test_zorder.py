"""Z-order bytes against values worked out by hand from Java's ``ZOrderByteUtils`` and
``ZIndexer`` (sign bit flipped longs, the shift-by-31 double mapping, truncated/zero-filled
bytes, bit interleaving that skips exhausted columns)."""

from __future__ import annotations

import datetime
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest

from paimon_core.exceptions import InvalidArgument, UnsupportedFeature
from paimon_core.format.types import (
    ARRAY,
    BIGINT,
    BOOLEAN,
    DATE,
    DECIMAL,
    DOUBLE,
    FLOAT,
    INT,
    STRING,
    TIME,
    TIMESTAMP,
    TINYINT,
    VARBINARY,
    DataField,
    DataType,
)
from paimon_core.operations.sort.zorder import (
    ZIndexer,
    interleave_bits,
    interleave_order,
    long_to_ordered_bytes,
)


def _hex(matrix: np.ndarray) -> list[str]:
    return [bytes(row).hex() for row in matrix]


def _bytes(data_type: DataType, values: list, arrow_type: pa.DataType, var: int = 8) -> list[str]:
    indexer = ZIndexer((DataField(0, "c", data_type),), ("c",), var)
    return _hex(indexer.column_bytes(pa.array(values, arrow_type), data_type))


def test_integers_flip_the_sign_bit_of_the_widened_long() -> None:
    assert _bytes(INT(), [1, -1, 0, None], pa.int32()) == [
        "8000000000000001",
        "7fffffffffffffff",
        "8000000000000000",
        "0000000000000000",
    ]
    assert _bytes(TINYINT(), [-128, 127], pa.int8()) == ["7fffffffffffff80", "800000000000007f"]
    assert _hex(long_to_ordered_bytes(np.array([-(2**63)]))) == ["0000000000000000"]


def test_doubles_use_javas_shift_by_31() -> None:
    # 1.0 = 0x3FF0000000000000: >> 31 = 0x7FE00000, | MIN, xor -> 0xBFF000007FE00000.
    # -1.0 = 0xBFF0000000000000: >> 31 = 0xFFFFFFFF7FE00000, xor -> 0x400FFFFF7FE00000.
    assert _bytes(DOUBLE(), [1.0, -1.0, float("nan"), None], pa.float64()) == [
        "bff000007fe00000",
        "400fffff7fe00000",
        "fff80000fff00000",
        "0000000000000000",
    ]
    # FLOAT widens to double first: 1.5f -> 0x3FF8000000000000.
    assert _bytes(FLOAT(), [1.5], pa.float32()) == ["bff800007ff00000"]


def test_var_types_are_cut_or_zero_filled_to_the_contribution() -> None:
    values = ["ab", "abcdef", "é", None]
    assert _bytes(STRING(), values, pa.string(), var=4) == [
        "61620000",
        "61626364",
        "c3a90000",
        "00000000",
    ]
    # Raw UTF-8 bytes: a character cut in the middle keeps its first byte.
    assert _bytes(STRING(), ["é"], pa.string(), var=1) == ["c3"]
    assert _bytes(VARBINARY(10), [b"\x01\x02", b""], pa.binary(), var=3) == ["010200", "000000"]
    sliced = pa.array(["zz", "xy", None, "w"]).slice(1, 3)  # an offset into the buffers
    indexer = ZIndexer((DataField(0, "c", STRING()),), ("c",), 2)
    assert _hex(indexer.column_bytes(sliced, STRING())) == ["7879", "0000", "7700"]


def test_booleans_decimals_and_times() -> None:
    assert _bytes(BOOLEAN(), [True, False, None], pa.bool_()) == [
        "8100000000000000",
        "0000000000000000",
        "0000000000000000",
    ]
    # Decimal.toUnscaledBytes (minimal two's complement) right-filled with zeros to 8 bytes.
    decimals = [Decimal("1.00"), Decimal("-1.28"), Decimal("2.56"), Decimal("-1.29"), Decimal(0)]
    assert _bytes(DECIMAL(10, 2), [*decimals, None], pa.decimal128(10, 2)) == [
        "6400000000000000",
        "8000000000000000",
        "0100000000000000",
        "ff7f000000000000",
        "0000000000000000",
        "0000000000000000",
    ]
    # 2^70 + 1 is 9 bytes (40 00 .. 01): the first 8 are kept.
    assert _bytes(DECIMAL(38, 0), [Decimal(2**70 + 1)], pa.decimal128(38, 0)) == [
        "4000000000000000"
    ]
    # Timestamp.getMillisecond() floors: -1 microsecond is millisecond -1.
    epoch = datetime.datetime(1970, 1, 1)
    stamps = [
        epoch + datetime.timedelta(microseconds=1500),
        epoch - datetime.timedelta(microseconds=1),
    ]
    assert _bytes(TIMESTAMP(6), stamps, pa.timestamp("us")) == [
        "8000000000000001",
        "7fffffffffffffff",
    ]
    assert _bytes(DATE(), [datetime.date(1970, 1, 3)], pa.date32()) == ["8000000000000002"]
    # TIME is its millisecond of the day, whatever Arrow unit holds it.
    second = datetime.time(0, 0, 1, 999)
    assert _bytes(TIME(6), [second], pa.time64("us")) == ["80000000000003e8"]
    assert _bytes(TIME(0), [second.replace(microsecond=0)], pa.time32("ms")) == ["80000000000003e8"]


def test_interleave_skips_columns_that_ran_out_of_bytes() -> None:
    assert list(interleave_order([1, 2])) == [0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15, *range(16, 24)]  # fmt: skip
    a = np.array([[0xFF]], dtype=np.uint8)
    b = np.array([[0x00, 0xAB]], dtype=np.uint8)
    assert _hex(interleave_bits([a, b])) == ["aaaaab"]


def test_two_int_columns_known_z_values() -> None:
    fields = (DataField(0, "a", INT()), DataField(1, "b", INT()))
    indexer = ZIndexer(fields, ("a", "b"))
    data = pa.table(
        {"a": pa.array([0, 1, -1, None], pa.int32()), "b": pa.array([0, 0, 3, 5], pa.int32())}
    )
    assert indexer.size == 16
    # a = 80..00 / 80..01 / 7f..ff / 00..00, b = 80..00 / 80..00 / 80..03 / 80..05:
    # the first output byte is a7 b7 a6 b6 ..., the last one a3 b3 a2 b2 a1 b1 a0 b0.
    assert _hex(indexer.index(data)) == [
        "c0" + "00" * 15,
        "c0" + "00" * 14 + "02",
        "6a" + "aa" * 14 + "af",
        "40" + "00" * 14 + "11",
    ]


def test_var_length_contribution_sets_the_size() -> None:
    fields = (DataField(0, "a", BIGINT()), DataField(1, "s", STRING()))
    assert ZIndexer(fields, ("a", "s"), 4).size == 12
    assert ZIndexer(fields, ("s",)).size == 8


@pytest.mark.parametrize(
    ("fields", "columns", "var", "error", "message"),
    [
        ((DataField(0, "a", ARRAY(INT())),), ("a",), 8, UnsupportedFeature, "type is unsupported"),
        ((DataField(0, "a", INT()),), ("b",), 8, InvalidArgument, "Can't find column: b"),
        ((DataField(0, "a", INT()),), ("a",), 0, InvalidArgument, "must be positive"),
    ],
)
def test_refused_indexers(fields, columns, var, error, message) -> None:
    with pytest.raises(error, match=message):
        ZIndexer(fields, columns, var)

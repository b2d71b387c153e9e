"""The ``bloom-filter`` file index: Java's ``FastHash``, ``BloomFilter64`` and its reader."""

from __future__ import annotations

import struct

import numpy as np
import pyarrow as pa
import pytest

from paimon_core.exceptions import InvalidArgument
from paimon_core.format.bloom_filter_index import (
    BloomFilter64,
    BloomFilterReader,
    BloomFilterWriter,
    bytes_hash,
    column_hashes,
    long_hash,
    long_hashes,
)
from paimon_core.format.file_index import REMAIN, SKIP, java_column
from paimon_core.format.types import BIGINT, DECIMAL, DOUBLE, FLOAT, INT, STRING, DataType


def test_hashes_equal_javas() -> None:
    """``FastHash.getHashFunction(type).hash(value)`` as a JVM printed them (Paimon 0.9)."""
    ints = [0, 1, -1, 2**31 - 1, -(2**31)]
    java_ints = [
        0,
        6614235796240398542,
        6614246905173314819,
        -4118334305638520412,
        1233635542594773612,
    ]
    assert [long_hash(v) for v in ints] == java_ints
    longs = [2**63 - 1, -(2**63), 1 << 40]
    java_longs = [-9102528624353286089, 4316648529147585864, 6024996419662910741]
    assert list(long_hashes(np.array(ints + longs, dtype=np.int64))) == java_ints + java_longs
    assert [bytes_hash(s.encode()) for s in ("", "a", "héllo")] == [
        -1205034819632174695,
        -3292477735350538661,
        4310053764713069540,
    ]
    float_nan = java_column(pa.array([float("nan"), -0.0], pa.float32()), FLOAT())
    assert list(column_hashes(float_nan)) == [7476675141552221795, 1233635542594773612]
    doubles = java_column(pa.array([1.5, float("nan"), None]), DOUBLE())
    assert list(column_hashes(doubles)) == [4457999897849084360, 1428437071588918382]


@pytest.mark.parametrize(
    ("items", "fpp", "hashes", "bits"),
    [(100, 0.05, 4, 624), (1_000_000, 0.1, 3, 4_792_536), (8, 0.5, 1, 16)],
)
def test_sizing_equals_javas(items: int, fpp: float, hashes: int, bits: int) -> None:
    bloom = BloomFilter64.sized(items, fpp)
    assert (bloom.num_hash_functions, bloom.num_bits) == (hashes, bits)


def _reader(t: DataType, values: pa.Array, **options: str) -> BloomFilterReader:
    writer = BloomFilterWriter(t, {"items": "100", **options})
    writer.write(java_column(values, t))
    payload = writer.serialized()
    assert struct.unpack(">i", payload[:4])[0] == writer.filter.num_hash_functions
    return BloomFilterReader(t, payload)


def test_reader_skips_only_absent_values() -> None:
    values = list(range(0, 200, 2))
    reader = _reader(BIGINT(), pa.array(values, pa.int64()))
    assert all(reader.visit("=", v, ()) is REMAIN for v in values)
    absent = [v for v in range(1, 200, 2) if reader.visit("=", v, ()) is SKIP]
    assert len(absent) > 80  # fpp 0.1: most absent values are skipped
    assert reader.visit("in", None, [absent[0], 4]) is REMAIN
    assert reader.visit("in", None, absent[:3]) is SKIP
    for op in ("!=", "<", ">=", "is_null", "is_not_null"):
        assert reader.visit(op, absent[0], ()) is REMAIN
    assert reader.visit("=", None, ()) is REMAIN
    assert reader.visit("=", 1.5, ()) is REMAIN  # not a BIGINT: the index cannot decide
    assert reader.visit("=", "4", ()) is REMAIN  # a numeric string is read as the number


def test_reader_literals_of_each_type() -> None:
    strings = _reader(STRING(), pa.array(["a", None, "héllo"]))
    assert strings.visit("=", "héllo", ()) is REMAIN
    assert strings.visit("=", b"a", ()) is REMAIN  # bytes are no string literal: undecided
    floats = _reader(FLOAT(), pa.array([-0.0, float("nan"), 0.5], pa.float32()))
    assert floats.visit("=", 0.0, ()) is REMAIN  # SQL: 0.0 = -0.0
    assert floats.visit("=", float("nan"), ()) is REMAIN
    assert floats.visit("=", 0.1, ()) is REMAIN  # not a FLOAT value: undecided
    ints = _reader(INT(), pa.array([7], pa.int32()))
    assert ints.visit("=", 2**40, ()) is REMAIN  # out of the INT range: undecided


def test_types_java_refuses() -> None:
    with pytest.raises(InvalidArgument, match="Does not support decimal"):
        BloomFilterWriter(DECIMAL(10, 2), {})
    with pytest.raises(InvalidArgument, match="Could not parse value 'x' for key 'fpp'"):
        BloomFilterWriter(INT(), {"fpp": "x"})

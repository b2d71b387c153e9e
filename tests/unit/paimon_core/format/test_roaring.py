"""Roaring bitmaps: Java's bytes decoded and reproduced, every container kind, both cookies,
the 64-bit layout, and broken bytes refused."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pyroaring
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paimon_core.format.roaring import (
    RoaringFormatError,
    deserialize32,
    deserialize64,
    serialize32,
    serialize64,
)

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "deletion_vectors"
JAVA_POSITIONS = np.array(
    [
        *range(0, 10000, 2),
        *range(20000, 30000),
        *range(65536, 65601),
        66000,
        67000,
        68000,
        131077,
        131149,
        132072,
        139999,
    ],
    dtype=np.int64,
)


def java_bitmap() -> bytes:
    """The RoaringBitmap32 bytes of the vector in the Java 0.9 fixture (after the version
    byte, the size and the magic; before the CRC)."""
    data = (FIXTURES / "java09-pk-index").read_bytes()
    (size,) = struct.unpack(">i", data[1:5])
    return data[9 : 5 + size]


def test_java_bitmap_decodes_and_reencodes_byte_for_byte() -> None:
    bitmap = java_bitmap()
    values, end = deserialize32(bitmap)
    assert end == len(bitmap)
    assert np.array_equal(values, JAVA_POSITIONS)
    assert serialize32(JAVA_POSITIONS) == bitmap


def test_java_single_position_bitmap() -> None:
    # Java 0.9's bitmap of {0}: cookie 12346, one container (key 0, cardinality 1), offset 16.
    golden = bytes.fromhex("3a3000000100000000000000100000000000")
    assert serialize32([0]) == golden
    assert deserialize32(golden)[0].tolist() == [0]


def test_container_kinds_follow_javas_run_optimize() -> None:
    # Two values in a row: array (4 bytes) is not larger than a run (6 bytes).
    assert serialize32([5, 6])[:4] == struct.pack("<I", 12346)
    # Three in a row: array 6 bytes, run 6 bytes: still an array (only strictly smaller runs).
    assert serialize32([5, 6, 7])[:4] == struct.pack("<I", 12346)
    # Four in a row: array 8 bytes > run 6 bytes: a run container, so the run cookie.
    run = serialize32([5, 6, 7, 8])
    assert struct.unpack("<I", run[:4])[0] == 12347
    assert run[4] == 0b1  # container 0 is a run container
    # 4097 scattered values: a bitmap container (8192 bytes).
    scattered = np.arange(0, 2 * 4097, 2)
    assert len(serialize32(scattered)) == 8 + 4 + 4 + 8192


def test_empty_bitmaps() -> None:
    assert serialize32([]) == struct.pack("<II", 12346, 0)
    assert deserialize32(serialize32([]))[0].size == 0
    assert serialize64([]) == struct.pack("<Q", 0)
    assert deserialize64(serialize64([]))[0].size == 0


def test_offsets_are_written_with_four_run_containers() -> None:
    # Java writes container offsets with runs only from NO_OFFSET_THRESHOLD = 4 containers.
    values = np.concatenate([np.arange(k << 16, (k << 16) + 10) for k in range(4)])
    data = serialize32(values)
    header_end = 4 + 1 + 4 * 4
    (first_offset,) = struct.unpack("<I", data[header_end : header_end + 4])
    assert first_offset == header_end + 16
    assert np.array_equal(deserialize32(data)[0], values)
    three = serialize32(values[:30])
    assert len(three) == 4 + 1 + 3 * 4 + 3 * 6  # no offsets


def test_64_bit_layout_writes_every_key_up_to_the_highest() -> None:
    positions = [3, (2 << 32) + 7]
    data = serialize64(positions)
    (count,) = struct.unpack("<Q", data[:8])
    assert count == 3  # keys 0, 1 (empty) and 2, as OptimizedRoaringBitmap64 keeps them
    assert struct.unpack("<I", data[8:12])[0] == 0
    values, end = deserialize64(data)
    assert end == len(data)
    assert values.tolist() == positions


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.integers(0, 2**31 - 1),
            st.integers(0, 3 * 65536),
            st.builds(
                lambda s, n: list(range(s, s + n)), st.integers(0, 200000), st.integers(1, 70000)
            ),
        ),
        max_size=8,
    )
)
def test_round_trip_and_pyroaring_agree(parts: list) -> None:
    values = np.unique(
        np.array([v for p in parts for v in (p if isinstance(p, list) else [p])], dtype=np.int64)
    )
    data = serialize32(values)
    assert np.array_equal(deserialize32(data)[0], values)
    reference = pyroaring.BitMap(values.tolist())
    reference.run_optimize()
    assert data == reference.serialize()
    wide = values + (1 << 32)
    assert np.array_equal(deserialize64(serialize64(wide))[0], wide)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x01\x02", "truncated"),
        (struct.pack("<II", 99, 0), "cookie"),
        (serialize32([1, 2, 3])[:-1], "truncated"),
        (struct.pack("<II", 12346, 2) + struct.pack("<HHHH", 5, 0, 5, 0) + b"\0" * 12, "keys"),
    ],
)
def test_broken_bytes_are_refused(data: bytes, message: str) -> None:
    with pytest.raises(RoaringFormatError, match=message):
        deserialize32(data)


def test_positions_out_of_range_are_refused() -> None:
    with pytest.raises(ValueError, match="within"):
        serialize32([2**31])
    with pytest.raises(ValueError, match="within"):
        serialize32([-1])

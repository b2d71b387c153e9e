"""Paimon's RoaringBitmap64 (``Roaring64Bitmap``'s tree-and-containers bytes): built and
unioned byte for byte as Java 0.9's bundle (RoaringBitmap 1.0.5, the format of the latest
Paimon's 1.2.1) does.

The expected bytes (hex) and SHA-256 digests were taken from Java: Paimon's
``RoaringBitmap64.bitmapOf(...).serialize()`` and, for unions, ``deserialize`` of both
sides, ``or``, ``serialize`` (``FieldRoaringBitmap64Agg.agg``), run on the inputs below."""

from __future__ import annotations

import hashlib
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paimon_core.format.roaring import RoaringFormatError
from paimon_core.format.roaring_bitmap64 import RoaringBitmap64

# Paimon's FieldAggregatorTest.testFieldRoaringBitmap64Agg inputs, serialized by Java.
JAVA_1 = bytes.fromhex(
    "01010000000000000004000000000000000000000000000000000001000000fe01000000010201000000"
    "010001000000000000000000000000000000"
)
JAVA_2_3 = bytes.fromhex(
    "01010000000000000004000000000000000000000000000000000001000000fe01000000010202000000"
    "0200030001000000000000000000000000000000"
)
JAVA_1_2_3 = bytes.fromhex(
    "01010000000000000004000000000000000000000000000000000001000000fe01000000010203000000"
    "01000200030001000000000000000000000000000000"
)

# Trees that grow through Node4/16/48/256, split prefixes, hold array, bitmap and run
# containers (a full one too), negative longs, and a container array grown several times.
A = [(k << 16) | k for k in range(0, 256, 5)]
B = [(k << 24) + 3 for k in range(20)] + [(1 << 40) + i for i in range(0, 10000, 2)]
C = [-1, -(1 << 40), 1 << 62, *range(100000, 170000)]
D = [(k << 16) | 7 for k in range(0, 256, 3)]
JAVA_OF = {
    "A": "672fa94c2d54d22830ad3d3d855134e0edfc38413604ed4d9d338a3ee07591d8",
    "B": "fa3b6d49573933f561f635171f146c21373a408eb69cc73b4d910e127c69e267",
    "C": "a164a0c0b6d728cc319f0da0e091981937aa749257f20f27108b4cd53a9cc6e6",
    "D": "4f8582d69680d2d777a1d700585bc327bc121769699113d9478be3587926a615",
}
JAVA_A_OR_B = "1214df7977addef34cf4d721e1937bb0ab618fb263454b641c46e7b31fbfa2be"
JAVA_AB_OR_C = "fe756d968569db3dc171eab989e97c628826eb4f988e27f34ad97e214b7e396f"
JAVA_D_OR_ABC = "79dc0419ea4056313634123c2bbbae5ea420b3fcdeff439a9f409966e9223c28"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _union(a: bytes, b: bytes) -> bytes:
    return RoaringBitmap64.deserialize(a).or_(RoaringBitmap64.deserialize(b)).serialize()


def test_paimons_own_cases_give_javas_bytes() -> None:
    assert RoaringBitmap64.bitmap_of([1]).serialize() == JAVA_1
    assert RoaringBitmap64.bitmap_of([2, 3]).serialize() == JAVA_2_3
    assert RoaringBitmap64.bitmap_of([1, 2, 3]).serialize() == JAVA_1_2_3
    assert _union(JAVA_2_3, JAVA_1) == JAVA_1_2_3
    assert _union(JAVA_1_2_3, JAVA_1) == JAVA_1_2_3
    assert RoaringBitmap64().serialize() == b"\x00"
    assert _union(b"\x00", JAVA_1) == JAVA_1


def test_grown_trees_and_every_container_kind_give_javas_bytes() -> None:
    made = {name: RoaringBitmap64.bitmap_of(v).serialize() for name, v in zip("ABCD", (A, B, C, D))}
    assert {name: _sha(data) for name, data in made.items()} == JAVA_OF
    ab = _union(made["A"], made["B"])
    assert _sha(ab) == JAVA_A_OR_B
    abc = _union(ab, made["C"])
    assert _sha(abc) == JAVA_AB_OR_C
    dabc = _union(made["D"], abc)
    assert _sha(dabc) == JAVA_D_OR_ABC
    assert _union(dabc, made["A"]) == dabc  # nothing new: the same bytes
    unsigned = sorted({v & (2**64 - 1) for v in [*A, *B, *C, *D]})
    assert list(RoaringBitmap64.deserialize(dabc)) == [
        v - 2**64 if v >= 2**63 else v for v in unsigned
    ]
    assert len(RoaringBitmap64.deserialize(dabc)) == len(unsigned)


def test_values_iterate_in_unsigned_order_as_java_longs() -> None:
    bitmap = RoaringBitmap64.bitmap_of([-1, 5, 2**63 - 1, -(2**63), 0])
    assert list(bitmap) == [0, 5, 2**63 - 1, -(2**63), -1]
    assert bitmap == RoaringBitmap64.deserialize(bitmap.serialize())
    assert bitmap != RoaringBitmap64.bitmap_of([0])
    with pytest.raises(ValueError, match="not a 64-bit value"):
        RoaringBitmap64.bitmap_of([2**64])


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(0, 2**20), max_size=40),
    st.lists(st.integers(-(2**63), 2**63 - 1), max_size=10),
    st.lists(st.integers(0, 2**20), max_size=40),
)
def test_union_holds_both_sets_and_reserializes_to_the_same_bytes(
    small: list[int], wide: list[int], other: list[int]
) -> None:
    a = RoaringBitmap64.bitmap_of([*small, *wide]).serialize()
    b = RoaringBitmap64.bitmap_of(other).serialize()
    merged = _union(a, b)
    assert set(RoaringBitmap64.deserialize(merged)) == {*small, *wide, *other}
    assert RoaringBitmap64.deserialize(merged).serialize() == merged


def test_broken_bytes_are_refused() -> None:
    with pytest.raises(RoaringFormatError, match="truncated"):
        RoaringBitmap64.deserialize(JAVA_1[:-3])
    with pytest.raises(RoaringFormatError, match="truncated"):
        RoaringBitmap64.deserialize(b"")
    bad_type = bytearray(JAVA_1)
    bad_type[37] = 7  # the container type byte
    with pytest.raises(RoaringFormatError, match="container type:7"):
        RoaringBitmap64.deserialize(bytes(bad_type))
    bad_card = bytearray(JAVA_1)
    bad_card[38:42] = struct.pack("<i", 2)
    with pytest.raises(RoaringFormatError, match="header says 2"):
        RoaringBitmap64.deserialize(bytes(bad_card))
    bad_node = bytearray(JAVA_1)
    bad_node[9] = 9  # the root's node type
    with pytest.raises(RoaringFormatError, match="bad ART node"):
        RoaringBitmap64.deserialize(bytes(bad_node))

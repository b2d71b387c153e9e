"""Theta and HLL sketches and their unions, byte for byte as Paimon's Java helpers
(``ThetaSketch``, ``HllSketchUtil``, datasketches-java 4.2.0) make them.

The expected bytes (hex) and SHA-256 digests were taken from Java: Paimon 0.9's
``ThetaSketch.sketchOf``/``union`` and ``HllSketchUtil.sketchOf``/``union`` (the same calls
as the latest Paimon's) on the inputs below."""

from __future__ import annotations

import hashlib
import struct

import pytest
from datasketches import hll_sketch, tgt_hll_type

from paimon_core.format.sketches import (
    hll_estimate,
    hll_sketch_of,
    hll_union_bytes,
    theta_estimate,
    theta_sketch_of,
    theta_union_bytes,
)

JAVA_THETA_1 = bytes.fromhex("01030300003acc9315f97dcbbd86a105")
JAVA_THETA_2_3 = bytes.fromhex("02030300001acc93020000000000803fc397fc1281709d1eba40b3c1da06695d")
JAVA_THETA_1_2_3 = bytes.fromhex(
    "02030300001acc93030000000000803f15f97dcbbd86a105c397fc1281709d1eba40b3c1da06695d"
)
JAVA_THETA_EMPTY = bytes.fromhex("01030300001e0000")
JAVA_THETA_0_6000 = "d16cf61e20ceccba3fe9061a82da13199decd0844e54d6dc0ad9652fd807f22c"
JAVA_THETA_3000_9000 = "7e9550a3864365dcfb048f0a260626c0de5d5346f4c388248f47068d699f0725"
JAVA_THETA_UNION = "b9d80070195fc1f86f34fb425f2f1f8ade3547b2f7eadaec3658a9639032f6ae"

JAVA_HLL_1 = bytes.fromhex("0201070c030801002bf2fb06")
JAVA_HLL_2_3 = bytes.fromhex("0201070c03080200862ff90d75816607")
JAVA_HLL_1_2_3 = bytes.fromhex("0201070c030803002bf2fb06862ff90d75816607")
JAVA_HLL_EMPTY = bytes.fromhex("0201070c030c0000")
JAVA_HLL_0_6000 = "26cd55af07faf6e657e6ef13b0c84debcaf39884cfd8653dd3fb258f2a87b893"
JAVA_HLL_3000_9000 = "a8fb824e4e8eceae96201e16cd532c2e6a02b1b7b27ef23a99f38eb8bf5e89a8"
JAVA_HLL_UNION = "bd1acfcce6d48425009a9100874731e1815a0f7f2cd118bf6bf4532d29af4855"
# HllSketchUtil.union(LG10_HLL8, sketchOf(0..5999)) and union(sketchOf(0..5999), LG10_HLL8).
JAVA_HLL_UNION_LG10 = "21d03053926659298ae950bfb6f9f8e5ac1b5f738dd0bec0d5dc8bab56b69464"
# union(JAVA_HLL_UNION's sketch (out of order), sketchOf(100001..100003)), either way round.
JAVA_HLL_OUT_OF_ORDER = "aaedb0220a7d5ee982e56e1665dc94a02af11a6d85422c71e894476d19bd8784"
# union(lg_k 14 HLL_4 of 0..29999, lg_k 12 HLL_4 of 100000..100199): a downsampled union.
JAVA_HLL_DOWNSAMPLED = "d9811fb45f96a049671f91ee65fe25ee922d666a99170de946d8ed194999ca54"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_theta_sketches_and_unions_are_javas_bytes() -> None:
    assert theta_sketch_of([1]) == JAVA_THETA_1
    assert theta_sketch_of([2, 3]) == JAVA_THETA_2_3
    assert theta_sketch_of([]) == JAVA_THETA_EMPTY
    assert theta_union_bytes(JAVA_THETA_2_3, JAVA_THETA_1) == JAVA_THETA_1_2_3
    assert theta_union_bytes(JAVA_THETA_1_2_3, JAVA_THETA_1) == JAVA_THETA_1_2_3
    assert theta_union_bytes(JAVA_THETA_EMPTY, JAVA_THETA_EMPTY) == JAVA_THETA_EMPTY
    assert theta_union_bytes(JAVA_THETA_EMPTY, JAVA_THETA_1) == JAVA_THETA_1
    assert theta_estimate(JAVA_THETA_1_2_3) == 3.0


def test_theta_union_in_estimation_mode_is_javas_bytes() -> None:
    low, high = theta_sketch_of(range(6000)), theta_sketch_of(range(3000, 9000))
    assert (_sha(low), _sha(high)) == (JAVA_THETA_0_6000, JAVA_THETA_3000_9000)
    union = theta_union_bytes(low, high)
    assert _sha(union) == JAVA_THETA_UNION
    assert _sha(theta_union_bytes(high, low)) == JAVA_THETA_UNION
    assert theta_estimate(union) == pytest.approx(9000, rel=0.05)


def test_hll_sketches_and_unions_are_javas_bytes() -> None:
    assert hll_sketch_of([1]) == JAVA_HLL_1
    assert hll_sketch_of([2, 3]) == JAVA_HLL_2_3
    assert hll_sketch_of([]) == JAVA_HLL_EMPTY
    assert hll_union_bytes(JAVA_HLL_2_3, JAVA_HLL_1) == JAVA_HLL_1_2_3
    assert hll_union_bytes(JAVA_HLL_1_2_3, JAVA_HLL_1) == JAVA_HLL_1_2_3
    assert hll_union_bytes(JAVA_HLL_EMPTY, JAVA_HLL_EMPTY) == JAVA_HLL_EMPTY
    assert hll_estimate(JAVA_HLL_1_2_3) == pytest.approx(3.0, rel=1e-6)


def test_hll_union_of_big_and_other_lg_k_sketches_is_javas_bytes() -> None:
    low, high = hll_sketch_of(range(6000)), hll_sketch_of(range(3000, 9000))
    assert (_sha(low), _sha(high)) == (JAVA_HLL_0_6000, JAVA_HLL_3000_9000)
    assert _sha(hll_union_bytes(low, high)) == JAVA_HLL_UNION
    lg10 = hll_sketch(10, tgt_hll_type.HLL_8)
    for v in range(5000, 5100):
        lg10.update(v)
    updatable = bytes(lg10.serialize_updatable())
    assert _sha(hll_union_bytes(updatable, low)) == JAVA_HLL_UNION_LG10
    assert _sha(hll_union_bytes(low, updatable)) == JAVA_HLL_UNION_LG10


def test_an_update_sketch_image_unions_as_java_reads_it() -> None:
    """Java's ``UpdateSketch.toByteArray()`` of 1, 2, 3 (a 128-slot QuickSelect hash table,
    given here by its header and its three filled slots): Java's union reads its entries."""
    table = [0] * 128
    table[21], table[58], table[67] = 0x5A186BDCB7DF915, 0x5D6906DAC1B340BA, 0x1E9D708112FC97C3
    image = bytes.fromhex("c303020c0700cc93030000000000803fffffffffffffff7f")
    image += struct.pack("<128q", *table)
    assert theta_union_bytes(image, JAVA_THETA_EMPTY) == JAVA_THETA_1_2_3
    assert theta_union_bytes(JAVA_THETA_1, image) == JAVA_THETA_1_2_3
    alpha = bytearray(image)
    alpha[2] = 1
    with pytest.raises(ValueError, match="family 1 cannot be unioned"):
        theta_union_bytes(bytes(alpha), JAVA_THETA_1)


def test_bytes_that_are_no_sketch_are_refused() -> None:
    with pytest.raises(ValueError, match="not a theta sketch"):
        theta_union_bytes(b"\x01\x02", JAVA_THETA_1)
    with pytest.raises(ValueError, match="not an HLL sketch"):
        hll_union_bytes(JAVA_HLL_1, b"\x00")
    with pytest.raises(ValueError, match="not a theta sketch"):
        theta_union_bytes(JAVA_HLL_1, JAVA_THETA_1)


def _hll(lg_k: int, values: range) -> bytes:
    sketch = hll_sketch(lg_k, tgt_hll_type.HLL_4)
    for v in values:
        sketch.update(v)
    return bytes(sketch.serialize_compact())


def test_hll_hip_accumulator_is_javas_where_the_cpp_library_differs() -> None:
    """Out-of-order results (Java keeps and counts on their HIP accumulator, C++ zeroes it)
    and downsampled ones (Java sums the KxQ registers coupon by coupon): only the HIP bytes
    differ from what the C++ library writes, and they are Java's."""
    out_of_order = hll_union_bytes(hll_sketch_of(range(6000)), hll_sketch_of(range(3000, 9000)))
    assert out_of_order[5] & 0x10
    few = hll_sketch_of([100001, 100002, 100003])
    assert _sha(hll_union_bytes(out_of_order, few)) == JAVA_HLL_OUT_OF_ORDER
    assert _sha(hll_union_bytes(few, out_of_order)) == JAVA_HLL_OUT_OF_ORDER
    assert _sha(hll_union_bytes(_hll(14, range(30000)), _hll(12, range(100000, 100200)))) == (
        JAVA_HLL_DOWNSAMPLED
    )

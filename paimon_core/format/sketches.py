"""Paimon's Apache DataSketches helpers (``org.apache.paimon.utils.ThetaSketch`` and
``HllSketchUtil``, on datasketches-java 4.2.0): the unions the ``theta_sketch`` and
``hll_sketch`` aggregate functions store, computed with the ``datasketches`` package (the
C++ library, whose sketches are binary compatible with Java's).

Java's calls, matched here:

* theta: ``Sketches.setOperationBuilder().buildUnion()`` (4096 nominal entries, p = 1.0, the
  default seed 9001), ``union(a)``, ``union(b)``, ``getResult()`` (ordered, compact) and
  ``toByteArray()`` (serial version 3). The C++ library writes the same sketch with three
  differences in bytes every reader ignores, set here as Java writes them: the seed hash of an
  empty sketch is 0, a one-entry sketch has the single-item flag (0x20), and the preamble's
  sampling probability p holds 1.0 (C++ writes 0). Java's union also takes an update
  (QuickSelect) sketch's image, read here as the compact sketch of its entries.
* hll: ``Union.heapify(b)`` (a union of ``b``'s lg_k, fed ``b``), ``update(HllSketch.heapify(a))``,
  ``getResult(HLL_4)``, ``toCompactByteArray()``. The C++ library gives the same registers and
  bytes but for the HIP accumulator in two cases, where it is set here to Java's value: an
  out-of-order result (Java keeps the accumulator of an out-of-order sketch as stored and
  counts coupon updates into it, C++ zeroes it; no estimator reads it then), and ``a`` in HLL
  mode of a larger lg_k than a sparse ``b`` (Java downsamples ``a`` coupon by coupon, so its
  KxQ sums, and the HIP estimate counted from them, round differently).

``theta_sketch_of`` and ``hll_sketch_of`` are Paimon's ``sketchOf(int...)`` test helpers
(each value hashed as a Java long): a way to make the bytes these columns hold.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

import numpy as np
from datasketches import (
    compact_theta_sketch,
    hll_sketch,
    hll_union,
    tgt_hll_type,
    theta_union,
    update_theta_sketch,
)

__all__ = [
    "hll_estimate",
    "hll_sketch_of",
    "hll_union_bytes",
    "theta_estimate",
    "theta_sketch_of",
    "theta_union_bytes",
]

_THETA_LG_K = 12  # Java's ThetaUtil.DEFAULT_NOMINAL_ENTRIES = 4096
_HLL_LG_K = 12  # Java's HllSketch() default
_EMPTY_FLAG = 0x04
_COMPACT_FAMILY = 3
_QUICKSELECT_FAMILY = 2
_MAX_THETA = 2**63 - 1
_SINGLE_ITEM_FLAG = 0x20
_HLL_MODE = 2  # the low two bits of an HLL image's mode byte: LIST 0, SET 1, HLL 2
_OUT_OF_ORDER_FLAG = 0x10
_COMPACT_FLAG = 0x08
# What the C++ bindings raise for bytes that are not a sketch (std::invalid_argument,
# std::out_of_range, std::runtime_error).
_DECODE_ERRORS = (RuntimeError, ValueError, IndexError)


def _java_theta_bytes(data: bytes) -> bytes:
    """A compact theta sketch as datasketches-java's ``toByteArray`` writes it."""
    out = bytearray(data)
    pre_longs = out[0] & 0x3F
    if out[5] & _EMPTY_FLAG:
        out[6:8] = b"\x00\x00"
    elif pre_longs == 1 and len(out) == 16:
        out[5] |= _SINGLE_ITEM_FLAG
    if pre_longs >= 2:
        out[12:16] = struct.pack("<f", 1.0)
    return bytes(out)


def theta_union_bytes(a: bytes, b: bytes) -> bytes:
    """``ThetaSketch.union(a, b)``.

    Raises:
        ValueError: either input is not a serialized compact theta sketch, or the two were
            made with different seeds.
    """
    union = theta_union(_THETA_LG_K, 1.0)
    try:
        union.update(compact_theta_sketch.deserialize(_compact_theta_image(bytes(a))))
        union.update(compact_theta_sketch.deserialize(_compact_theta_image(bytes(b))))
    except _DECODE_ERRORS as e:
        raise ValueError(f"not a theta sketch of this seed: {e}") from None
    return _java_theta_bytes(union.get_result(True).serialize())


def _compact_theta_image(data: bytes) -> bytes:
    """A serial-version-3 theta image as a compact sketch: an update (QuickSelect) sketch's
    image, which Java's ``Union.union(Memory)`` takes as well, becomes the compact sketch of
    its hash-table entries below theta (what Java's union reads of it); the C++ parser would
    misread its hash table as entries. Other families are refused."""
    if len(data) < 8 or data[1] != 3 or data[2] == _COMPACT_FAMILY:
        return data
    if data[2] != _QUICKSELECT_FAMILY or len(data) < 24:
        raise ValueError(f"theta sketch family {data[2]} cannot be unioned from bytes")
    seed_hash = data[6:8]
    if data[5] & _EMPTY_FLAG:
        return bytes([1, 3, _COMPACT_FAMILY, 0, 0, 0x1E]) + seed_hash
    (theta,) = struct.unpack_from("<q", data, 16)
    table = np.frombuffer(data, "<i8", count=1 << data[4], offset=24)
    entries = np.sort(table[(table > 0) & (table < theta)])
    pre_longs = 3 if theta < _MAX_THETA else 2
    out = bytes([pre_longs, 3, _COMPACT_FAMILY, 0, 0, 0x1A]) + seed_hash
    out += struct.pack("<if", len(entries), 1.0)
    if pre_longs == 3:
        out += struct.pack("<q", theta)
    return out + entries.astype("<i8").tobytes()


def theta_sketch_of(values: Iterable[int]) -> bytes:
    """``ThetaSketch.sketchOf(values)``: an update sketch of lg_k 12 fed each value as a
    Java long, compacted (ordered)."""
    sketch = update_theta_sketch(_THETA_LG_K)
    for value in values:
        sketch.update(int(value))
    return _java_theta_bytes(sketch.compact(True).serialize())


def theta_estimate(data: bytes) -> float:
    """The distinct count a serialized theta sketch estimates."""
    return float(compact_theta_sketch.deserialize(bytes(data)).get_estimate())


def hll_union_bytes(a: bytes, b: bytes) -> bytes:
    """``HllSketchUtil.union(a, b)``.

    Raises:
        ValueError: either input is not a serialized HLL sketch.
    """
    a, b = bytes(a), bytes(b)
    try:
        first, second = hll_sketch.deserialize(a), hll_sketch.deserialize(b)
    except _DECODE_ERRORS as e:
        raise ValueError(f"not an HLL sketch: {e}") from None
    result = _hll_union(first, second)
    if result[7] & 0x03 != _HLL_MODE:
        return result
    hip = None
    if a[7] & 0x03 == _HLL_MODE and a[3] > b[3] and b[7] & 0x03 != _HLL_MODE:
        hip = _java_downsampled_hip(a, b)
    elif result[5] & _OUT_OF_ORDER_FLAG:
        # Java keeps the HIP accumulator of an out-of-order sketch as stored and adds to it
        # on coupon updates (C++ drops and freezes it): the same union of the inputs marked
        # in order gives Java's value.
        in_order = _hll_union(
            hll_sketch.deserialize(_hll_in_order(a)), hll_sketch.deserialize(_hll_in_order(b))
        )
        return result[:8] + in_order[8:16] + result[16:]
    return result if hip is None else result[:8] + struct.pack("<d", hip) + result[16:]


def _hll_union(first: hll_sketch, second: hll_sketch) -> bytes:
    union = hll_union(second.lg_config_k)
    union.update(second)
    union.update(first)
    return bytes(union.get_result(tgt_hll_type.HLL_4).serialize_compact())


def _hll_in_order(data: bytes) -> bytes:
    """An HLL-mode sketch image without its out-of-order flag."""
    if len(data) < 8 or data[7] & 0x03 != _HLL_MODE:
        return data
    out = bytearray(data)
    out[5] &= ~_OUT_OF_ORDER_FLAG & 0xFF
    return bytes(out)


def _java_downsampled_hip(a: bytes, b: bytes) -> float | None:
    """Java's HIP accumulator for ``union(a, b)`` when ``a`` is an HLL-mode sketch of a larger
    lg_k than the sparse (LIST/SET) or empty ``b``: Java downsamples ``a`` by coupon updates
    (its KxQ registers summed in slot order; C++ folds the registers at once), then counts
    ``b``'s coupons in, in the order of ``b``'s coupon array. None: an image this does not
    follow (Java and C++ then agree or the bytes are not one Java writes)."""
    coupons = _java_coupon_order(b)
    if coupons is None:
        return None
    k = 1 << b[3]
    registers = np.zeros(k, np.int64)
    kxq = [float(k), 0.0]
    hip = 0.0

    def update(slot: int, value: int, count: bool) -> None:
        nonlocal hip
        old = int(registers[slot])
        if value <= old:
            return
        if count:
            hip += k / (kxq[0] + kxq[1])
        kxq[0 if old < 32 else 1] -= 2.0**-old
        kxq[0 if value < 32 else 1] += 2.0**-value
        registers[slot] = value

    values = _hll_registers(a)
    for slot in np.flatnonzero(values).tolist():
        update(slot & (k - 1), int(values[slot]), False)
    if not a[5] & _OUT_OF_ORDER_FLAG:
        (hip,) = struct.unpack_from("<d", a, 8)
    for coupon in coupons:
        update(coupon & (k - 1), coupon >> 26, True)
    return hip


def _hll_registers(data: bytes) -> np.ndarray:
    """The register values of an HLL-mode image (HLL_4 with its exceptions, HLL_6, HLL_8)."""
    k = 1 << data[3]
    kind = (data[7] >> 2) & 0x03
    body = np.frombuffer(data, np.uint8, offset=40)
    if kind == 2:
        return body[:k].astype(np.int64) & 0x3F
    if kind == 1:
        bits = np.arange(k) * 6
        pairs = body[bits >> 3].astype(np.int64) | (body[(bits >> 3) + 1].astype(np.int64) << 8)
        return (pairs >> (bits & 7)) & 0x3F
    nibbles = body[: k // 2].astype(np.int64)
    values = np.empty(k, np.int64)
    values[0::2], values[1::2] = nibbles & 0x0F, nibbles >> 4
    exceptions = values == 15
    values += data[6]
    aux = np.frombuffer(data, "<u4", offset=40 + k // 2)
    aux = aux[aux != 0]
    values[aux & (k - 1)] = aux >> 26
    values[exceptions & ~np.isin(np.arange(k), aux & (k - 1))] = data[6] + 15
    return values


def _java_coupon_order(data: bytes) -> list[int] | None:
    """The coupons of a LIST/SET (or empty) image in the order of the coupon array Java's
    union gadget holds after taking it (a list as stored; a compact set re-inserted into a
    fresh hash set, growing as Java's ``CouponHashSet`` does)."""
    if data[7] & 0x03 == 0:
        count = data[6]
        coupons = np.frombuffer(data, "<u4", count=count, offset=8).tolist()
        out: list[int] = []
        for c in coupons:
            if c not in out:
                out.append(c)
        return out if len(out) < 8 else None
    count = struct.unpack_from("<i", data, 8)[0]
    if not data[5] & _COMPACT_FLAG:
        table = np.frombuffer(data, "<u4", count=1 << data[4], offset=12)
        return table[table != 0].tolist()
    lg_arr, table, filled = 5, [0] * 32, 0
    for c in np.frombuffer(data, "<u4", count=count, offset=12).tolist():
        if _hash_insert(table, lg_arr, c):
            filled += 1
            if 4 * filled > 3 * (1 << lg_arr):
                if lg_arr == data[3] - 3:
                    return None  # Java promotes the gadget to HLL
                lg_arr += 1
                grown = [0] * (1 << lg_arr)
                for x in table:
                    if x:
                        _hash_insert(grown, lg_arr, x)
                table = grown
    return [x for x in table if x]


def _hash_insert(table: list[int], lg_arr: int, coupon: int) -> bool:
    """``AbstractCoupons.find`` and insert: False for a coupon already there."""
    mask = len(table) - 1
    probe = coupon & mask
    while table[probe]:
        if table[probe] == coupon:
            return False
        probe = (probe + (((coupon & 0x3FFFFFF) >> lg_arr) | 1)) & mask
    table[probe] = coupon
    return True


def hll_sketch_of(values: Iterable[int]) -> bytes:
    """``HllSketchUtil.sketchOf(values)``: an HLL_4 sketch of lg_k 12 fed each value as a
    Java long, compact."""
    sketch = hll_sketch(_HLL_LG_K, tgt_hll_type.HLL_4)
    for value in values:
        sketch.update(int(value))
    return bytes(sketch.serialize_compact())


def hll_estimate(data: bytes) -> float:
    """The distinct count a serialized HLL sketch estimates."""
    return float(hll_sketch.deserialize(bytes(data)).get_estimate())

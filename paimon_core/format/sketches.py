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
  sampling probability p holds 1.0 (C++ writes 0).
* hll: ``Union.heapify(b)`` (a union of ``b``'s lg_k, fed ``b``), ``update(HllSketch.heapify(a))``,
  ``getResult(HLL_4)``, ``toCompactByteArray()``: the C++ library gives the same bytes.

``theta_sketch_of`` and ``hll_sketch_of`` are Paimon's ``sketchOf(int...)`` test helpers
(each value hashed as a Java long): a way to make the bytes these columns hold.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

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
_SINGLE_ITEM_FLAG = 0x20
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
        union.update(compact_theta_sketch.deserialize(bytes(a)))
        union.update(compact_theta_sketch.deserialize(bytes(b)))
    except _DECODE_ERRORS as e:
        raise ValueError(f"not a theta sketch of this seed: {e}") from None
    return _java_theta_bytes(union.get_result(True).serialize())


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
    try:
        first, second = hll_sketch.deserialize(bytes(a)), hll_sketch.deserialize(bytes(b))
    except _DECODE_ERRORS as e:
        raise ValueError(f"not an HLL sketch: {e}") from None
    union = hll_union(second.lg_config_k)
    union.update(second)
    union.update(first)
    return bytes(union.get_result(tgt_hll_type.HLL_4).serialize_compact())


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

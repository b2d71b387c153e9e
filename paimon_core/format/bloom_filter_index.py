"""The ``bloom-filter`` file index (Java's ``BloomFilterFileIndex``, ``BloomFilter64`` and
``FastHash``).

Payload: the number of hash functions (4 bytes, big-endian), then the bit set, bit ``i`` in
byte ``i / 8`` at ``1 << (i % 8)``. A value's 64-bit hash is xxHash64 (seed 0) of its bytes
for strings (UTF-8) and binaries, else Thomas Wang's 64-bit integer hash of the value as a
Java ``long``: the integer, DATE days, TIME millis, TIMESTAMP millis (precision <= 3) or
micros, FLOAT/DOUBLE bits (``floatToIntBits``, sign-extended). Its low and high 32 bits
``h1``, ``h2`` set bits ``h1 + i * h2`` (32-bit, bits flipped when negative, modulo the bit
count) for ``i`` in 1..k. Options (``file-index.bloom-filter.<column>.<key>``): ``items``
(default 1,000,000) and ``fpp`` (default 0.1) size the filter: ``-items * ln(fpp) /
ln(2)^2`` bits rounded up to the next whole byte (a whole byte more when already whole),
``round(bits / items * ln 2)`` hash functions (at least one). Nulls set no bit.

Readers answer ``=`` and ``IN`` (``SKIP`` when no literal's bits are all set); everything
else ``REMAIN``.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import xxhash

from paimon_core.exceptions import InvalidArgument
from paimon_core.format.file_index import (
    REMAIN,
    SKIP,
    FileIndexResult,
    JavaColumn,
    float_bits,
    float_bits_of,
    java_literals,
)
from paimon_core.format.types import DataType

BLOOM_FILTER = "bloom-filter"
DEFAULT_ITEMS = 1_000_000
DEFAULT_FPP = 0.1
_UNSUPPORTED = {
    "BOOLEAN": "Does not support type boolean",
    "DECIMAL": "Does not support decimal",
    "VARIANT": "Does not support type variant",
    "BLOB": "Does not support type blob",
    "ARRAY": "Does not support type array",
    "VECTOR": "Does not support type vector",
    "MULTISET": "Does not support type mutiset",
    "MAP": "Does not support type map",
    "ROW": "Does not support type row",
}
_MASK64 = (1 << 64) - 1


def unsupported_reason(t: DataType) -> str | None:
    """``FastHash.getHashFunction``'s refusal of ``t``, or None."""
    return _UNSUPPORTED.get(t.root)


def _signed64(value: int) -> int:
    value &= _MASK64
    return value - (1 << 64) if value >> 63 else value


def long_hash(key: int) -> int:
    """``FastHashVisitor.getLongHash``: Thomas Wang's 64-bit integer hash."""
    k = key & _MASK64

    def sar(x: int, n: int) -> int:
        return (_signed64(x) >> n) & _MASK64

    k = (~k + (k << 21)) & _MASK64
    k ^= sar(k, 24)
    k = (k + (k << 3) + (k << 8)) & _MASK64
    k ^= sar(k, 14)
    k = (k + (k << 2) + (k << 4)) & _MASK64
    k ^= sar(k, 28)
    k = (k + (k << 31)) & _MASK64
    return _signed64(k)


def long_hashes(keys: np.ndarray) -> np.ndarray:
    """``long_hash`` of int64 ``keys``, vectorised (uint64 arithmetic wraps as Java's)."""
    k = keys.astype(np.int64).view(np.uint64)

    def sar(x: np.ndarray, n: int) -> np.ndarray:
        return (x.view(np.int64) >> np.int64(n)).view(np.uint64)

    def shl(x: np.ndarray, n: int) -> np.ndarray:
        return x << np.uint64(n)

    k = ~k + shl(k, 21)
    k = k ^ sar(k, 24)
    k = k + shl(k, 3) + shl(k, 8)
    k = k ^ sar(k, 14)
    k = k + shl(k, 2) + shl(k, 4)
    k = k ^ sar(k, 28)
    k = k + shl(k, 31)
    return k.view(np.int64)


def bytes_hash(data: bytes) -> int:
    """``LongHashFunction.xx().hashBytes``: xxHash64 with seed 0, as a Java ``long``."""
    return _signed64(xxhash.xxh64_intdigest(data))


def column_hashes(column: JavaColumn) -> np.ndarray:
    """The 64-bit hashes (int64) of the column's non-null values, in row order."""
    valid = column.valid
    if column.kind == "blobs":
        values = column.values
        return np.fromiter((bytes_hash(values[i]) for i in np.flatnonzero(valid)), dtype=np.int64)
    if column.kind == "floats":
        return long_hashes(float_bits(column.values[valid]))
    if column.kind == "ints":
        return long_hashes(column.values[valid])
    raise InvalidArgument(f"A bloom filter cannot index {column.kind}")


def literal_hash(key: Any, t: DataType) -> int:
    """The 64-bit hash of one key (as ``java_literals`` gives it) of a ``t`` column."""
    if isinstance(key, bytes):
        return bytes_hash(key)
    if t.root in ("FLOAT", "DOUBLE"):
        return long_hash(float_bits_of(float(key), t.root == "FLOAT"))
    return long_hash(int(key))


class BloomFilter64:
    """Java's ``BloomFilter64`` over a byte array bit set."""

    def __init__(self, num_hash_functions: int, bits: bytearray) -> None:
        self.num_hash_functions = num_hash_functions
        self.bits = bits
        self.num_bits = len(bits) * 8

    @classmethod
    def sized(cls, items: int, fpp: float) -> BloomFilter64:
        """``new BloomFilter64(items, fpp)``."""
        nb = _java_int(-items * math.log(fpp) / (math.log(2) * math.log(2)))
        num_bits = nb + (8 - _java_rem(nb, 8))
        hashes = max(1, _java_round(num_bits / items * math.log(2)))
        return cls(hashes, bytearray(num_bits // 8))

    def positions(self, hashes: np.ndarray) -> np.ndarray:
        """Every bit position the hashes set (``addHash``), vectorised."""
        h = hashes.astype(np.int64).view(np.uint64)
        h1 = (h & np.uint64(0xFFFFFFFF)).astype(np.int64)
        h2 = (h >> np.uint64(32)).astype(np.int64)
        h1 = np.where(h1 >= 1 << 31, h1 - (1 << 32), h1)
        h2 = np.where(h2 >= 1 << 31, h2 - (1 << 32), h2)
        out = []
        for i in range(1, self.num_hash_functions + 1):
            combined = (h1 + i * h2) & 0xFFFFFFFF
            combined = np.where(combined >= 1 << 31, combined - (1 << 32), combined)
            combined = np.where(combined < 0, ~combined, combined)
            out.append(combined % self.num_bits)
        return np.concatenate(out) if out else np.empty(0, np.int64)

    def add_hashes(self, hashes: np.ndarray) -> None:
        if not len(hashes):
            return
        positions = self.positions(hashes)
        current = np.frombuffer(bytes(self.bits), dtype=np.uint8).copy()
        flags = np.zeros(self.num_bits, dtype=bool)
        flags[positions] = True
        current |= np.packbits(flags, bitorder="little")
        self.bits[:] = current.tobytes()

    def test_hash(self, hash64: int) -> bool:
        h = hash64 & _MASK64
        hash1 = _java_int32(h)
        hash2 = _java_int32(h >> 32)
        for i in range(1, self.num_hash_functions + 1):
            combined = _java_int32(hash1 + i * hash2)
            if combined < 0:
                combined = ~combined
            position = combined % self.num_bits
            if not self.bits[position >> 3] & (1 << (position & 7)):
                return False
        return True


def _java_int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def _java_int(value: float) -> int:
    """``(int) value``: truncation, saturating at the int range."""
    if math.isnan(value):
        return 0
    return max(-(1 << 31), min((1 << 31) - 1, int(value)))


def _java_rem(a: int, b: int) -> int:
    return int(math.fmod(a, b))


def _java_round(value: float) -> int:
    """``Math.round(double)``: floor(value + 0.5)."""
    return math.floor(value + 0.5)


class BloomFilterWriter:
    """Java's ``BloomFilterFileIndex.Writer``: adds the non-null values of each batch."""

    def __init__(self, t: DataType, options: Mapping[str, str]) -> None:
        reason = unsupported_reason(t)
        if reason is not None:
            raise InvalidArgument(reason)
        self.type = t
        items = _option_int(options, "items", DEFAULT_ITEMS)
        fpp = _option_float(options, "fpp", DEFAULT_FPP)
        self.filter = BloomFilter64.sized(items, fpp)

    def write(self, column: JavaColumn) -> None:
        self.filter.add_hashes(column_hashes(column))

    def serialized(self) -> bytes:
        return struct.pack(">i", self.filter.num_hash_functions) + bytes(self.filter.bits)


def _option_int(options: Mapping[str, str], key: str, default: int) -> int:
    text = options.get(key)
    if text is None:
        return default
    try:
        return int(text.strip())
    except ValueError:
        raise InvalidArgument(f"Could not parse value '{text}' for key '{key}'.") from None


def _option_float(options: Mapping[str, str], key: str, default: float) -> float:
    text = options.get(key)
    if text is None:
        return default
    try:
        return float(text.strip())
    except ValueError:
        raise InvalidArgument(f"Could not parse value '{text}' for key '{key}'.") from None


class BloomFilterReader:
    """Java's ``BloomFilterFileIndex.Reader``."""

    def __init__(self, t: DataType, payload: bytes) -> None:
        if len(payload) < 5:
            raise InvalidArgument("A bloom filter index is truncated")
        (hashes,) = struct.unpack(">i", payload[:4])
        self.type = t
        self.filter = BloomFilter64(hashes, bytearray(payload[4:]))

    def _may_contain(self, literal: Any) -> bool:
        keys = java_literals(literal, self.type)
        if keys is None:
            return True
        return any(self.filter.test_hash(literal_hash(k, self.type)) for k in keys)

    def visit(self, op: str, literal: Any, literals: Sequence[Any]) -> FileIndexResult:
        if op == "=":
            return REMAIN if literal is None or self._may_contain(literal) else SKIP
        if op == "in":
            if not literals:
                return REMAIN
            return REMAIN if any(v is None or self._may_contain(v) for v in literals) else SKIP
        return REMAIN

"""Fixed-bucket assignment (paimon-format.md §6.3): Murmur3 over the bucket-key BinaryRow.

Java hashes the BinaryRow bytes of the bucket key (``hashBytesByWords``, seed 42) and takes
``Math.abs(hash % n)``. Writes assign a bucket to every row, so besides the scalar functions
this module builds the rows of whole Arrow columns at once with numpy and hashes them in
column-wise passes; types without a vectorised layout fall back to ``encode_row`` per row.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.exceptions import InvalidArgument
from paimon_core.format.binary_row import encode_row, null_bits_width, row_codec
from paimon_core.format.types import DataType

DEFAULT_SEED = 42
_M32 = 0xFFFFFFFF
_C1 = 0xCC9E2D51
_C2 = 0x1B873593


@lru_cache(maxsize=64)
def _words(count: int) -> struct.Struct:
    return struct.Struct(f"<{count}I")


def murmur_hash(data: bytes, seed: int = DEFAULT_SEED) -> int:
    """Java ``MurmurHashUtils.hashBytesByWords`` as a signed 32-bit int.

    Raises:
        InvalidArgument: the length is not a multiple of 4 (Java asserts it).
    """
    n = len(data)
    if n & 3:
        raise InvalidArgument(f"hashBytesByWords needs a multiple of 4 bytes, got {n}")
    h = seed & _M32
    for k in _words(n >> 2).unpack(data):
        k = (k * _C1) & _M32
        k = ((k << 15) | (k >> 17)) & _M32
        h ^= (k * _C2) & _M32
        h = ((h << 13) | (h >> 19)) & _M32
        h = (h * 5 + 0xE6546B64) & _M32
    h ^= n
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _M32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _M32
    h ^= h >> 16
    return h - 0x100000000 if h & 0x80000000 else h


def bucket_for_hash(h: int, num_buckets: int) -> int:
    """Java ``Math.abs(hash % numBuckets)`` (truncating remainder)."""
    if num_buckets <= 0:
        raise InvalidArgument(f"Number of buckets must be positive, got {num_buckets}")
    return abs(h) % num_buckets


def row_hash(values: Sequence[Any], types: Sequence[DataType]) -> int:
    """``BinaryRow.hashCode()`` of the row of ``values`` (also the HASH index entry of a key)."""
    return murmur_hash(encode_row(values, types))


def assign_buckets(
    columns: Sequence[pa.Array | pa.ChunkedArray], types: Sequence[DataType], num_buckets: int
) -> np.ndarray:
    """The bucket of every row of the bucket-key ``columns`` (int32 array).

    Raises:
        InvalidArgument: no key columns, a bad bucket count, or values that do not fit.
    """
    if num_buckets <= 0:
        raise InvalidArgument(f"Number of buckets must be positive, got {num_buckets}")
    hashes = hash_keys(columns, types).astype(np.int64)
    return (np.abs(hashes) % num_buckets).astype(np.int32)


def hash_keys(
    columns: Sequence[pa.Array | pa.ChunkedArray], types: Sequence[DataType]
) -> np.ndarray:
    """``BinaryRow.hashCode()`` of the key row of every row of ``columns`` (int32 array).

    Raises:
        InvalidArgument: no key columns, columns of different lengths, or values that do
            not fit their key type.
    """
    if not columns or len(columns) != len(types):
        raise InvalidArgument(f"Need one column per key type: {len(columns)} vs {len(types)}")
    arrays = [_single_chunk(c) for c in columns]
    n = len(arrays[0])
    if any(len(a) != n for a in arrays):
        raise InvalidArgument("Key columns have different lengths")
    if n == 0:
        return np.zeros(0, dtype=np.int32)
    try:
        built = _build_rows(arrays, list(types), n)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
        raise InvalidArgument(f"Cannot hash key columns as {list(map(str, types))}: {e}") from e
    if built is None:
        return _hash_rows_python(arrays, types)
    buf, starts, sizes = built
    return _murmur_rows(buf.view("<u4"), starts >> 2, sizes >> 2)


def _single_chunk(column: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(column, pa.ChunkedArray):
        if column.num_chunks == 1:
            return column.chunk(0)
        return column.combine_chunks() if column.num_chunks else pa.array([], column.type)
    return column


def _hash_rows_python(arrays: list[pa.Array], types: Sequence[DataType]) -> np.ndarray:
    codec = row_codec(types)
    encode = codec.encode
    out = np.empty(len(arrays[0]), dtype=np.int32)
    for i, row in enumerate(zip(*(a.to_pylist() for a in arrays))):
        out[i] = murmur_hash(encode(row))
    return out


# ------------------------------------------------------------------ vectorised row builder

_SLOT_CAST = {
    "BOOLEAN": (pa.uint8(), np.uint8),
    "TINYINT": (pa.int8(), np.uint8),
    "SMALLINT": (pa.int16(), np.uint16),
    "INT": (pa.int32(), np.uint32),
    "BIGINT": (pa.int64(), np.uint64),
    "DATE": (pa.date32(), np.uint32),
}
_UNIT_FACTOR = {"s": 1, "ms": 1000, "us": 1_000_000, "ns": 1_000_000_000}


def _null_mask(arr: pa.Array) -> np.ndarray | None:
    if arr.null_count == 0:
        return None
    return arr.is_null().to_numpy(zero_copy_only=False)


def _ints(arr: pa.Array, pa_type: pa.DataType) -> np.ndarray:
    if arr.type != pa_type:
        arr = arr.cast(pa_type)
    if pa.types.is_date32(pa_type):
        arr = arr.cast(pa.int32())
    return pc.fill_null(arr, 0).to_numpy(zero_copy_only=False)


def _epoch_units(arr: pa.Array) -> tuple[np.ndarray, int]:
    """Timestamp values as int64 in their unit, and that unit's ticks per second."""
    values = pc.fill_null(arr.cast(pa.int64()), 0).to_numpy(zero_copy_only=False)
    return values.astype(np.int64, copy=False), _UNIT_FACTOR[arr.type.unit]


def _fixed_slot(arr: pa.Array, t: DataType) -> np.ndarray | None:
    """The 8-byte slot of every row of a fixed-width field as uint64, None if unsupported."""
    root = t.root
    if root in _SLOT_CAST:
        pa_type, unsigned = _SLOT_CAST[root]
        if root == "BOOLEAN":
            values = pc.fill_null(arr.cast(pa.bool_()), False).to_numpy(zero_copy_only=False)
            return values.astype(np.uint64)
        return _ints(arr, pa_type).view(unsigned).astype(np.uint64)
    if root == "FLOAT":  # raw bits, as Java's BinaryRowWriter (no NaN canonicalisation)
        values = pc.fill_null(arr.cast(pa.float32()), 0).to_numpy(zero_copy_only=False)
        return values.view(np.uint32).astype(np.uint64)
    if root == "DOUBLE":
        values = pc.fill_null(arr.cast(pa.float64()), 0).to_numpy(zero_copy_only=False)
        return values.view(np.uint64).copy()
    if root == "TIME":
        if not pa.types.is_time(arr.type):
            return None
        if arr.type != pa.time32("ms"):
            arr = arr.cast(pa.time32("ms"), safe=False)
        return _ints(arr.cast(pa.int32()), pa.int32()).view(np.uint32).astype(np.uint64)
    if root == "DECIMAL" and t.precision <= 18:  # type: ignore[operator]
        if not pa.types.is_decimal(arr.type):
            return None
        target = pa.decimal128(t.precision, t.scale)  # type: ignore[arg-type]
        if arr.type != target:
            arr = arr.cast(target)
        words = np.frombuffer(arr.buffers()[1], dtype="<i8")
        low = words[2 * arr.offset : 2 * (arr.offset + len(arr)) : 2].copy()
        return low.view(np.uint64)
    if t.is_timestamp and t.precision <= 3:  # type: ignore[operator]
        if not pa.types.is_timestamp(arr.type):
            return None
        values, factor = _epoch_units(arr)
        millis = values * 1000 if factor == 1 else values // (factor // 1000)
        return millis.view(np.uint64)
    return None


def _var_source(arr: pa.Array) -> tuple[np.ndarray, np.ndarray] | None:
    """(offsets, data bytes) of a string/binary array, None if it is not one."""
    kind = arr.type
    if pa.types.is_dictionary(kind):
        arr = arr.cast(kind.value_type)
        kind = arr.type
    if str(kind) in ("string_view", "binary_view"):
        arr = arr.cast(pa.string() if str(kind) == "string_view" else pa.binary())
        kind = arr.type
    if pa.types.is_large_string(kind) or pa.types.is_large_binary(kind):
        width = np.int64
    elif pa.types.is_string(kind) or pa.types.is_binary(kind):
        width = np.int32
    else:
        return None
    buffers = arr.buffers()
    offsets = np.frombuffer(buffers[1], dtype=width)[arr.offset : arr.offset + len(arr) + 1]
    data = np.frombuffer(buffers[2], dtype=np.uint8) if buffers[2] is not None else np.zeros(0)
    return offsets.astype(np.int64), np.concatenate([data.astype(np.uint8), np.zeros(8, np.uint8)])


def _build_rows(
    arrays: list[pa.Array], types: list[DataType], n: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """All key rows in one buffer: (bytes, row starts, row sizes); None if a type is unsupported."""
    width = null_bits_width(len(types))
    fixed = width + 8 * len(types)
    slots: list[np.ndarray] = []
    nulls: list[np.ndarray | None] = []
    # Variable-part chunks per field: (kind, lengths in the row, extra data)
    var: list[tuple[str, np.ndarray, Any] | None] = []
    for arr, t in zip(arrays, types):
        mask = _null_mask(arr)
        nulls.append(mask)
        slot = _fixed_slot(arr, t)
        if slot is not None:
            if mask is not None:
                slot[mask] = 0
            slots.append(slot)
            var.append(None)
            continue
        if t.is_string or t.is_binary:
            source = _var_source(arr)
            if source is None:
                return None
            offsets, data = source
            lengths = np.diff(offsets)
            if mask is not None:
                lengths[mask] = 0
            long_rows = lengths > 7
            chunk = np.where(long_rows, (lengths + 7) & ~7, 0)
            starts = offsets[:-1]
            short = np.minimum(lengths, 7)
            inline = _unaligned_words(data)[starts] & _BYTE_MASKS[short]
            inline |= (short.astype(np.uint64) | np.uint64(0x80)) << np.uint64(56)
            if mask is not None:
                inline[mask] = 0
            slots.append(inline)
            var.append(("bytes", chunk, (long_rows, lengths, starts, data)))
            continue
        if t.is_timestamp:
            if not pa.types.is_timestamp(arr.type):
                return None
            values, factor = _epoch_units(arr)
            per_milli = factor // 1000 if factor >= 1000 else 0
            if per_milli:
                millis = values // per_milli
                nanos = (values - millis * per_milli) * (1_000_000 // per_milli)
            else:
                millis, nanos = values * 1000, np.zeros(n, dtype=np.int64)
            if mask is not None:
                millis[mask] = 0
                nanos[mask] = 0
            slots.append(nanos.astype(np.uint64))
            var.append(("millis", np.full(n, 8, dtype=np.int64), millis))
            continue
        return None

    sizes = np.full(n, fixed, dtype=np.int64)
    for entry in var:
        if entry is not None:
            sizes += entry[1]
    starts = np.zeros(n, dtype=np.int64)
    np.cumsum(sizes[:-1], out=starts[1:])
    buf = np.zeros(int(starts[-1] + sizes[-1]), dtype=np.uint8)
    longs = buf.view("<u8")
    cursor = np.full(n, fixed, dtype=np.int64)
    for i, (slot, mask, entry) in enumerate(zip(slots, nulls, var)):
        if mask is not None:
            buf[starts[mask] + ((i + 8) >> 3)] |= np.uint8(1 << ((i + 8) & 7))
        if entry is not None:
            kind, chunk, extra = entry
            if kind == "millis":
                slot = slot | (cursor.astype(np.uint64) << np.uint64(32))
                longs[(starts + cursor) >> 3] = extra.view(np.uint64)
            else:
                long_rows, lengths, src_starts, data = extra
                pointer = (cursor.astype(np.uint64) << np.uint64(32)) | lengths.astype(np.uint64)
                slot = np.where(long_rows, pointer, slot)
                _scatter(
                    longs,
                    data,
                    src_starts[long_rows],
                    (starts + cursor)[long_rows],
                    lengths[long_rows],
                )
            cursor = cursor + chunk
        longs[(starts + width + 8 * i) >> 3] = slot
    return buf, starts, sizes


_BYTE_MASKS = np.array([(1 << (8 * k)) - 1 for k in range(8)], dtype=np.uint64)
_BYTE_MASKS[0] = 0


def _unaligned_words(data: np.ndarray) -> np.ndarray:
    """``view[i]`` is the little-endian 8 bytes at ``data[i]`` (``data`` has 8 spare bytes)."""
    return np.ndarray((len(data) - 7,), dtype="<u8", buffer=data, strides=(1,))


def _scatter(
    longs: np.ndarray, data: np.ndarray, src: np.ndarray, dst: np.ndarray, lengths: np.ndarray
) -> None:
    """Copy ``data[src[r]:src[r]+lengths[r]]``, zero-padded to 8, to byte ``dst[r]`` (8-aligned)
    of the buffer whose uint64 view is ``longs``, for every r at once, a word at a time."""
    words = (lengths + 7) >> 3
    total = int(words.sum())
    if total == 0:
        return
    run_starts = np.zeros(len(words), dtype=np.int64)
    np.cumsum(words[:-1], out=run_starts[1:])
    within = np.arange(total, dtype=np.int64) - np.repeat(run_starts, words)
    values = _unaligned_words(data)[np.repeat(src, words) + 8 * within]
    last = run_starts + words - 1
    values[last] &= np.where(lengths & 7, _BYTE_MASKS[lengths & 7], ~np.uint64(0))
    longs[np.repeat(dst >> 3, words) + within] = values


def _murmur_rows(words: np.ndarray, word_starts: np.ndarray, word_counts: np.ndarray) -> np.ndarray:
    """hashBytesByWords of many rows of a flat uint32 buffer, one pass per word position."""
    n = len(word_starts)
    m = int(word_counts.max())
    uniform = int(word_counts.min()) == m
    order = None
    if not uniform:
        order = np.argsort(-word_counts, kind="stable")
        word_starts = word_starts[order]
        word_counts = word_counts[order]
    active = np.searchsorted(-word_counts, -np.arange(m), side="left") if not uniform else None
    h = np.full(n, DEFAULT_SEED, dtype=np.uint32)
    for j in range(m):
        if uniform:
            k = words[word_starts + j]
            target = h
        else:
            count = int(active[j])  # type: ignore[index]
            k = words[word_starts[:count] + j]
            target = h[:count]
        k = k * np.uint32(_C1)
        k = (k << np.uint32(15)) | (k >> np.uint32(17))
        k = k * np.uint32(_C2)
        target ^= k
        target[:] = (target << np.uint32(13)) | (target >> np.uint32(19))
        target *= np.uint32(5)
        target += np.uint32(0xE6546B64)
    h ^= (word_counts * 4).astype(np.uint32)
    h ^= h >> np.uint32(16)
    h *= np.uint32(0x85EBCA6B)
    h ^= h >> np.uint32(13)
    h *= np.uint32(0xC2B2AE35)
    h ^= h >> np.uint32(16)
    result = h.view(np.int32)
    if order is None:
        return result
    out = np.empty(n, dtype=np.int32)
    out[order] = result
    return out

"""Arrow columns as the values Java's ``InternalRow`` getters hand the indexers, vectorised.

The z-order and Hilbert indexers are defined on Paimon's internal values (``getInt`` of a DATE
is its epoch day, ``Timestamp.getMillisecond()`` is floored milliseconds, ``BinaryString``
bytes are UTF-8), so every column is first turned into those numbers or bytes, for all rows
at once. Null slots get a placeholder (0 or no bytes); the indexers replace them by their
null values using ``valid_mask``.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.exceptions import InvalidArgument, UnsupportedFeature
from paimon_core.format.types import DataField, DataType

CANONICAL_NAN_BITS = 0x7FF8000000000000
"""``Double.doubleToLongBits`` of every NaN."""

_PER_MILLI = {"s": None, "ms": 1, "us": 1_000, "ns": 1_000_000}


def as_array(column: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(column, pa.ChunkedArray):
        return column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    return column


def valid_mask(column: pa.Array) -> np.ndarray:
    """True where the value is not null."""
    if column.null_count == 0:
        return np.ones(len(column), dtype=bool)
    return column.is_valid().to_numpy(zero_copy_only=False)


def _filled_int64(column: pa.Array) -> np.ndarray:
    if column.null_count:
        column = pc.fill_null(column, 0)
    return column.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)


def _to_millis(values: np.ndarray, unit: str) -> np.ndarray:
    per_milli = _PER_MILLI[unit]
    if per_milli is None:
        return values * 1000
    return values // per_milli if per_milli > 1 else values


def java_long(column: pa.Array, data_type: DataType) -> np.ndarray:
    """The ``long`` Java reads for an integer, DATE, TIME or timestamp column: the value
    (sign-extended), the epoch day, the millisecond of the day, ``Timestamp.getMillisecond()``
    (floored, as ``Timestamp.fromMicros``); 0 in null slots."""
    root = data_type.root
    if root in ("TIMESTAMP", "TIMESTAMP_LTZ", "TIME"):
        width = pa.int32() if pa.types.is_time32(column.type) else pa.int64()
        return _to_millis(_filled_int64(column.cast(width)), column.type.unit)
    if root == "DATE":
        return _filled_int64(column.cast(pa.int32()))
    return _filled_int64(column)


def double_bits(column: pa.Array) -> np.ndarray:
    """``Double.doubleToLongBits((double) v)`` of a FLOAT or DOUBLE column (NaN canonical,
    as Java's widening and ``doubleToLongBits`` make it); 0 in null slots."""
    if column.null_count:
        column = pc.fill_null(column, 0)
    values = column.to_numpy(zero_copy_only=False).astype(np.float64)
    bits = values.view(np.int64).copy()
    bits[np.isnan(values)] = CANONICAL_NAN_BITS
    return bits


def byte_prefix(column: pa.Array, width: int) -> tuple[np.ndarray, np.ndarray]:
    """The first ``width`` bytes of each value (UTF-8 for strings), zero-filled, as a
    ``(rows, width)`` uint8 matrix, and each value's byte length (0 for nulls)."""
    if not pa.types.is_large_binary(column.type):
        column = column.cast(pa.large_binary())
    n = len(column)
    _, offsets_buffer, data_buffer = column.buffers()
    if n == 0 or offsets_buffer is None:
        return np.zeros((n, width), dtype=np.uint8), np.zeros(n, dtype=np.int64)
    offsets = np.frombuffer(offsets_buffer, dtype=np.int64, count=n + 1, offset=column.offset * 8)
    starts = offsets[:-1]
    lengths = np.diff(offsets)
    if column.null_count:
        lengths = np.where(valid_mask(column), lengths, 0)
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else None
    out = np.zeros((n, width), dtype=np.uint8)
    for k in range(width):
        has = lengths > k
        if data is not None and has.any():
            out[has, k] = data[starts[has] + k]
    return out, lengths


BYTE_BIT_LENGTH = np.array([int(b).bit_length() for b in range(256)], dtype=np.int64)
"""``Integer.bitLength`` of every byte value, for ``BigInteger.bitLength`` of byte rows."""


def decimal_unscaled_bytes(column: pa.Array, width: int) -> np.ndarray:
    """Java's ``Decimal.toUnscaledBytes()`` (``BigInteger.toByteArray()`` of the unscaled
    value: minimal big-endian two's complement) cut or right-filled with zeros to ``width``
    bytes, as ``ZOrderByteUtils.byteTruncateOrFill`` does; zeros in null slots."""
    n = len(column)
    if not pa.types.is_decimal128(column.type):
        raise TypeError(f"decimal128 expected, got {column.type}")
    raw = np.frombuffer(column.buffers()[1], dtype=np.uint8, count=(column.offset + n) * 16)
    big_endian = raw.reshape(-1, 16)[column.offset :, ::-1]
    sign = np.where(big_endian[:, 0] >= 0x80, 0xFF, 0).astype(np.uint8)
    magnitude = big_endian ^ sign[:, None]  # BigInteger.bitLength(): of ~v for negatives
    nonzero = magnitude != 0
    first = np.where(nonzero.any(axis=1), nonzero.argmax(axis=1), 16)
    lead = magnitude[np.arange(n), np.minimum(first, 15)]
    bit_length = np.where(first < 16, (15 - first) * 8 + BYTE_BIT_LENGTH[lead], 0)
    size = bit_length // 8 + 1
    k = np.arange(width)
    source = np.minimum(16 - size[:, None] + k[None, :], 15)
    out = np.where(k[None, :] < size[:, None], big_endian[np.arange(n)[:, None], source], 0)
    out = out.astype(np.uint8)
    if column.null_count:
        out[~valid_mask(column)] = 0
    return out


def decimal_long_value(column: pa.Array) -> np.ndarray:
    """Java's ``BigDecimal.longValue()``: the fraction dropped (towards zero), the low 64
    bits kept when the integer part does not fit a long; 0 in null slots."""
    return _filled_int64(pc.cast(column, pa.int64(), safe=False))


def indexed_fields(
    fields: Sequence[DataField], columns: Sequence[str], supported: Collection[str], label: str
) -> tuple[DataField, ...]:
    """The fields of ``columns`` an indexer (``ZIndexer``, ``HilbertIndexer``) orders by,
    checked as Java's constructors check them.

    Raises:
        InvalidArgument: a column that is not a field.
        UnsupportedFeature: a field whose type root is not in ``supported`` (``label`` names
            the indexer in the message).
    """
    by_name = {f.name: f for f in fields}
    missing = [c for c in columns if c not in by_name]
    if missing:
        raise InvalidArgument(
            f"Can't find column: {missing[0]} in row type fields: {list(by_name)}"
        )
    chosen = tuple(by_name[c] for c in columns)
    for field in chosen:
        if field.type.root not in supported:
            raise UnsupportedFeature(
                f"Cannot use column {field.name} of type {field.type} in {label}, "
                "the type is unsupported"
            )
    return chosen

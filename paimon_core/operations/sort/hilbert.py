"""Hilbert order: Paimon's ``HilbertIndexer`` (``org.apache.paimon.sort.hilbert``) with the
``HilbertCurve`` of davidmoten's hilbert-curve 0.2.2 (the version Paimon shades) and
``ConvertBinaryUtil``, vectorised over Arrow columns.

Each ordering column becomes a long (``HilbertIndexer.TypeVisitor``; nulls are
``Long.MAX_VALUE``), the point is placed on a 63-bit-per-dimension Hilbert curve (Skilling's
transposed-index algorithm) and the index, a ``BigInteger``, is written as
``paddingToNByte(index.toByteArray(), 63)``: rows are ordered by those 63 bytes. Only the low
63 bits of each long take part: the curve's loops look at bits 62..0, so a negative value sorts
as its two's complement. Paimon Spark's ``SparkHilbertUDF`` maps the same values except
timestamps (epoch seconds there) and a null BOOLEAN (which fails there).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pyarrow as pa

from paimon_core.exceptions import InvalidArgument
from paimon_core.format.types import DataField, DataType
from paimon_core.operations.sort.arrow_values import (
    BYTE_BIT_LENGTH,
    as_array,
    byte_prefix,
    decimal_long_value,
    double_bits,
    indexed_fields,
    java_long,
    valid_mask,
)

BITS_NUM = 63
"""Bits per dimension of Paimon's curve, also the byte width of its index."""
PRIMITIVE_EMPTY = 2**63 - 1
"""``Long.MAX_VALUE``: a null's (and ``true``'s) position on its axis."""
CHUNK_ROWS = 1 << 14
"""Rows whose index bits are spread out at once (a byte per bit: bounds the memory)."""

_LOW_63 = np.uint64(2**63 - 1)
_VAR_ROOTS = frozenset({"CHAR", "VARCHAR", "BINARY", "VARBINARY"})
_LONG_ROOTS = frozenset({"SMALLINT", "INT", "BIGINT", "DATE", "TIME", "TIMESTAMP", "TIMESTAMP_LTZ"})
_SUPPORTED_ROOTS = _VAR_ROOTS | _LONG_ROOTS | {"TINYINT", "BOOLEAN", "FLOAT", "DOUBLE", "DECIMAL"}


def convert_bytes_to_long(column: pa.Array) -> np.ndarray:
    """``ConvertBinaryUtil.convertBytesToLong`` of each value's bytes (UTF-8 for strings):
    ``paddingTo8Byte`` keeps the first 8 bytes of a longer value and left-pads a shorter one
    with zeros, so a short value is the big-endian number of its bytes."""
    prefix, lengths = byte_prefix(column, 8)
    used = np.minimum(lengths, 8).astype(np.uint64)
    words = prefix.view(">u8").reshape(-1).astype(np.uint64)
    shift = np.uint64(8) * (np.uint64(8) - used)
    return np.where(used > 0, words >> np.minimum(shift, np.uint64(63)), np.uint64(0))


def transposed_index(bits: int, points: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``HilbertCurve.transposedIndex`` (Skilling's ``AxestoTranspose``) of uint64 ordinates,
    one array per dimension."""
    x = [p.astype(np.uint64, copy=True) for p in points]
    n = len(x)
    q = 1 << (bits - 1)
    while q > 1:  # inverse undo
        p, bit = np.uint64(q - 1), np.uint64(q)
        for i in range(n):
            has = (x[i] & bit) != 0
            if i == 0:
                x[0] = np.where(has, x[0] ^ p, x[0])
                continue
            t = (x[0] ^ x[i]) & p
            x[0] = np.where(has, x[0] ^ p, x[0] ^ t)
            x[i] = np.where(has, x[i], x[i] ^ t)
        q >>= 1
    for i in range(1, n):  # Gray encode
        x[i] = x[i] ^ x[i - 1]
    t = np.zeros_like(x[0])
    q = 1 << (bits - 1)
    while q > 1:
        t = np.where((x[n - 1] & np.uint64(q)) != 0, t ^ np.uint64(q - 1), t)
        q >>= 1
    return [xi ^ t for xi in x]


def hilbert_index_bytes(bits: int, points: Sequence[np.ndarray]) -> np.ndarray:
    """``HilbertCurve.bits(bits).dimensions(n).index(point)`` of every row as the big-endian
    bytes of the index, ``bits * n`` bits wide plus a zero byte (so ``toByteArray``'s sign
    byte is always there): ``HilbertCurve.toIndex`` takes bit ``bits - 1`` of every
    dimension in turn, then the next lower bit, and so on."""
    transposed = np.stack(transposed_index(bits, points), axis=1)  # (rows, n)
    n = transposed.shape[1]
    total_bits = bits * n
    width = (total_bits + 7) // 8 + 1
    shifts = np.arange(bits - 1, -1, -1, dtype=np.uint64)
    out = np.empty((len(transposed), width), dtype=np.uint8)
    for start in range(0, len(transposed), CHUNK_ROWS):
        chunk = transposed[start : start + CHUNK_ROWS]
        spread = ((chunk[:, None, :] >> shifts[None, :, None]) & np.uint64(1)).astype(np.uint8)
        spread = spread.reshape(len(chunk), total_bits)
        padded = np.zeros((len(chunk), width * 8), dtype=np.uint8)
        padded[:, width * 8 - total_bits :] = spread
        out[start : start + CHUNK_ROWS] = np.packbits(padded, axis=1)
    return out


def to_padded_byte_array(fixed: np.ndarray, size: int = BITS_NUM) -> np.ndarray:
    """``ConvertBinaryUtil.paddingToNByte(index.toByteArray(), size)`` of non-negative
    big-endian numbers: ``toByteArray`` is ``bitLength / 8 + 1`` bytes, which are left-padded
    with zeros to ``size`` or, when longer, cut to their first ``size`` bytes."""
    rows, width = fixed.shape
    if width < size:
        fixed = np.concatenate([np.zeros((rows, size - width), dtype=np.uint8), fixed], axis=1)
        width = size
    nonzero = fixed != 0
    first = np.where(nonzero.any(axis=1), nonzero.argmax(axis=1), width)
    lead = fixed[np.arange(rows), np.minimum(first, width - 1)]
    bit_length = np.where(first < width, (width - 1 - first) * 8 + BYTE_BIT_LENGTH[lead], 0)
    length = bit_length // 8 + 1
    start = width - np.maximum(length, size)
    return fixed[np.arange(rows)[:, None], start[:, None] + np.arange(size)[None, :]]


def hilbert_curve_pos_bytes(points: Sequence[np.ndarray]) -> np.ndarray:
    """``HilbertIndexer.hilbertCurvePosBytes``: 63-bit curve, ``(rows, 63)`` uint8 indexes."""
    masked = [np.asarray(p).astype(np.int64).view(np.uint64) & _LOW_63 for p in points]
    return to_padded_byte_array(hilbert_index_bytes(BITS_NUM, masked))


@dataclass(frozen=True)
class HilbertIndexer:
    """Paimon's ``HilbertIndexer``: the curve position of every row, 63 bytes each.

    Raises (on construction, before any data is touched):
        InvalidArgument: fewer than two columns, or an unknown column.
        UnsupportedFeature: a column of a type the curve cannot order (nested, VARIANT, BLOB).
    """

    fields: tuple[DataField, ...]
    order_columns: tuple[str, ...]

    def __post_init__(self) -> None:
        if len(self.order_columns) < 2:
            raise InvalidArgument("Hilbert sort needs at least two columns.")
        self.order_fields  # noqa: B018 (checks the columns now, as Java's constructor)

    @cached_property
    def order_fields(self) -> tuple[DataField, ...]:
        return indexed_fields(self.fields, self.order_columns, _SUPPORTED_ROOTS, "Hilbert")

    @staticmethod
    def column_longs(column: pa.Array | pa.ChunkedArray, data_type: DataType) -> np.ndarray:
        """The long of each value (``HilbertIndexer.TypeVisitor``), ``Long.MAX_VALUE`` for
        nulls: numbers as they are (a TINYINT as its unsigned byte, a DECIMAL's
        ``longValue()``, a FLOAT/DOUBLE's ``doubleToLongBits``), days, milliseconds, the
        first 8 bytes of a string or binary, ``Long.MAX_VALUE`` for true and 0 for false."""
        column = as_array(column)
        root = data_type.root
        valid = valid_mask(column)
        if root in _VAR_ROOTS:
            values = convert_bytes_to_long(column).view(np.int64)
        elif root == "BOOLEAN":
            flags = column.fill_null(True).to_numpy(zero_copy_only=False).astype(bool)
            return np.where(flags, np.int64(PRIMITIVE_EMPTY), np.int64(0))
        elif root == "TINYINT":
            values = java_long(column, data_type) & np.int64(0xFF)
        elif root == "DECIMAL":
            values = decimal_long_value(column)
        elif root in ("FLOAT", "DOUBLE"):
            values = double_bits(column)
        else:
            values = java_long(column, data_type)
        return np.where(valid, values, np.int64(PRIMITIVE_EMPTY))

    def index(self, data: pa.Table) -> np.ndarray:
        """The Hilbert indexes of ``data``'s rows: a ``(rows, 63)`` uint8 matrix."""
        if data.num_rows == 0:
            return np.zeros((0, BITS_NUM), dtype=np.uint8)
        points = [self.column_longs(data.column(f.name), f.type) for f in self.order_fields]
        return hilbert_curve_pos_bytes(points)

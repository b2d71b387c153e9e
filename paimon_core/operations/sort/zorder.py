"""Z-order: Paimon's ``ZOrderByteUtils`` and ``ZIndexer`` (``org.apache.paimon.sort.zorder``),
vectorised over Arrow columns.

Each ordering column becomes a fixed number of bytes whose unsigned lexicographic order is
the column's order (8 bytes for fixed-size types, ``zorder.var-length-contribution`` bytes for
CHAR/VARCHAR/BINARY/VARBINARY), and the bits of all columns are interleaved, most significant
first, so that rows sorted by the result are clustered in every column at once. The value
mapping follows ``ZIndexer``'s type visitor (engine-neutral, used by Flink and by append
clustering). Paimon Spark's ``SparkZOrderUDF`` agrees on numbers, booleans and binaries, but
encodes strings whole characters at a time, orders timestamps by epoch seconds and dates by
Spark's cast of a date to a long, and refuses decimals; the order only clusters the rows, so
the data read back is the same either way.
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
    as_array,
    byte_prefix,
    decimal_unscaled_bytes,
    double_bits,
    indexed_fields,
    java_long,
    valid_mask,
)

PRIMITIVE_BUFFER_SIZE = 8
"""Bytes every non-variable-length column contributes (``ZOrderByteUtils``)."""
DEFAULT_VAR_TYPE_SIZE = 8
"""``zorder.var-length-contribution``'s default."""

CHUNK_ROWS = 1 << 16
"""Rows whose bits are unpacked at once (a bit per byte: bounds the memory)."""

_SIGN = np.uint64(0x8000000000000000)
_VAR_ROOTS = frozenset({"CHAR", "VARCHAR", "BINARY", "VARBINARY"})
_LONG_ROOTS = frozenset(
    {"TINYINT", "SMALLINT", "INT", "BIGINT", "DATE", "TIME", "TIMESTAMP", "TIMESTAMP_LTZ"}
)
_SUPPORTED_ROOTS = _VAR_ROOTS | _LONG_ROOTS | {"BOOLEAN", "FLOAT", "DOUBLE", "DECIMAL"}


def _big_endian_bytes(values: np.ndarray) -> np.ndarray:
    """``ByteBuffer.putLong`` of each value: a ``(rows, 8)`` uint8 matrix."""
    return values.astype(">u8").view(np.uint8).reshape(-1, PRIMITIVE_BUFFER_SIZE)


def long_to_ordered_bytes(values: np.ndarray) -> np.ndarray:
    """``intToOrderedBytes``/``longToOrderedBytes`` (and the short/tinyint variants): the
    value widened to a long with its sign bit flipped, so negatives order before positives."""
    return _big_endian_bytes(values.astype(np.int64).view(np.uint64) ^ _SIGN)


def double_to_ordered_bytes(bits: np.ndarray) -> np.ndarray:
    """``floatToOrderedBytes``/``doubleToOrderedBytes`` of ``Double.doubleToLongBits`` values:
    ``lval ^= ((lval >> (Integer.SIZE - 1)) | Long.MIN_VALUE)``. The shift is by 31, not 63,
    exactly as Paimon (and Iceberg, where it comes from) has it."""
    bits = bits.astype(np.int64)
    flipped = bits ^ ((bits >> np.int64(31)) | np.int64(-(2**63)))
    return _big_endian_bytes(flipped.view(np.uint64))


def boolean_to_ordered_bytes(values: np.ndarray) -> np.ndarray:
    """``(byte) -127`` (0x81) in the first byte for true, zeros for false (``ZIndexer``)."""
    out = np.zeros((len(values), PRIMITIVE_BUFFER_SIZE), dtype=np.uint8)
    out[values.astype(bool), 0] = 0x81
    return out


def interleave_order(sizes: Sequence[int]) -> np.ndarray:
    """Where each output bit of ``ZOrderByteUtils.interleaveBits`` comes from, as an index
    into the columns' bytes concatenated and unpacked (most significant bit first): bit 7 of
    byte 0 of every column in turn, then bit 6, ..., skipping columns that ran out of bytes."""
    total = sum(sizes)
    starts = np.cumsum([0, *sizes])
    order = np.empty(total * 8, dtype=np.int64)
    column, source_byte, source_bit = 0, 0, 7
    for position in range(total * 8):
        order[position] = (starts[column] + source_byte) * 8 + (7 - source_bit)
        if position == total * 8 - 1:
            break
        while True:
            column += 1
            if column == len(sizes):
                column = 0
                source_bit -= 1
                if source_bit == -1:
                    source_byte += 1
                    source_bit = 7
            if sizes[column] > source_byte:
                break
    return order


def interleave_bits(columns: Sequence[np.ndarray]) -> np.ndarray:
    """``ZOrderByteUtils.interleaveBits`` of each row of ``(rows, size)`` uint8 matrices."""
    sizes = [c.shape[1] for c in columns]
    order = interleave_order(sizes)
    packed = np.concatenate(columns, axis=1)
    out = np.empty_like(packed)
    for start in range(0, len(packed), CHUNK_ROWS):
        bits = np.unpackbits(packed[start : start + CHUNK_ROWS], axis=1)
        out[start : start + CHUNK_ROWS] = np.packbits(bits[:, order], axis=1)
    return out


def byte_truncate_or_fill(column: pa.Array, length: int) -> np.ndarray:
    """``ZOrderByteUtils.byteTruncateOrFill`` of each value's bytes (UTF-8 for strings):
    the first ``length`` bytes, right-filled with zeros; zeros for nulls."""
    return byte_prefix(column, length)[0]


@dataclass(frozen=True)
class ZIndexer:
    """Paimon's ``ZIndexer``: the z-value of every row, ``size`` bytes each.

    Raises (on construction, before any data is touched):
        InvalidArgument: an unknown column, or a ``var_type_size`` below 1.
        UnsupportedFeature: a column of a type z-order cannot order (nested, VARIANT, BLOB).
    """

    fields: tuple[DataField, ...]
    order_columns: tuple[str, ...]
    var_type_size: int = DEFAULT_VAR_TYPE_SIZE

    def __post_init__(self) -> None:
        if self.var_type_size < 1:
            raise InvalidArgument(
                f"zorder.var-length-contribution must be positive: {self.var_type_size}"
            )
        self.order_fields  # noqa: B018 (checks the columns now, as Java's constructor)

    @cached_property
    def order_fields(self) -> tuple[DataField, ...]:
        return indexed_fields(self.fields, self.order_columns, _SUPPORTED_ROOTS, "ZOrdering")

    def _column_size(self, data_type: DataType) -> int:
        return self.var_type_size if data_type.root in _VAR_ROOTS else PRIMITIVE_BUFFER_SIZE

    @property
    def size(self) -> int:
        """Bytes of each z-value: 8 per fixed-size column, ``var_type_size`` per other."""
        return sum(self._column_size(f.type) for f in self.order_fields)

    def column_bytes(self, column: pa.Array | pa.ChunkedArray, data_type: DataType) -> np.ndarray:
        """The ordered bytes of one column (``ZIndexer.TypeVisitor``), zeros for nulls."""
        column = as_array(column)
        root = data_type.root
        if root in _VAR_ROOTS:
            return byte_truncate_or_fill(column, self.var_type_size)
        if root == "DECIMAL":
            return decimal_unscaled_bytes(column, PRIMITIVE_BUFFER_SIZE)
        if root == "BOOLEAN":
            values = column.fill_null(False).to_numpy(zero_copy_only=False)
            return boolean_to_ordered_bytes(values)
        if root in ("FLOAT", "DOUBLE"):
            out = double_to_ordered_bytes(double_bits(column))
        else:
            out = long_to_ordered_bytes(java_long(column, data_type))
        if column.null_count:
            out[~valid_mask(column)] = 0
        return out

    def index(self, data: pa.Table) -> np.ndarray:
        """The z-values of ``data``'s rows: a ``(rows, size)`` uint8 matrix."""
        if data.num_rows == 0:
            return np.zeros((0, self.size), dtype=np.uint8)
        columns = [self.column_bytes(data.column(f.name), f.type) for f in self.order_fields]
        return interleave_bits(columns)

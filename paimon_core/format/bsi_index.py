"""The ``bsi`` file index (Java's ``BitSliceIndexBitmapFileIndex`` over
``BitSliceIndexRoaringBitmap``, Paimon 1.0 on; Paimon 0.9 cannot read it): a column's
values as longs in bit slices, one slice set for the non-negative values and one for the
absolute values of the negative ones.

Payload, big-endian: the version (1 byte, 1), the row count, then for the positive and the
negative side whether it has values and (then) its slices: a version byte (1), min and max
(longs; min is always 0, as Java's collector starts from 0), the bitmap of rows with a
value, the slice count (the bit length of max) and each slice, the rows whose value has
that bit set (portable roaring format, as Java's ``runOptimize`` leaves it).

Values: TINYINT to BIGINT, DATE days, TIME millis, TIMESTAMP millis (precision <= 3) or
micros, DECIMAL unscaled (a value whose unscaled value does not fit a long fails, as in
Java). Readers answer ``=``, ``IN``, ``!=``,
``<``, ``<=``, ``>``, ``>=``, ``IS NULL`` and ``IS NOT NULL`` with the rows that may match
(O'Neil's bit-sliced comparison, as Java).
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from pyroaring import BitMap

from paimon_core.exceptions import InvalidArgument
from paimon_core.format.file_index import (
    REMAIN,
    BitmapResult,
    FileIndexResult,
    JavaColumn,
    flipped,
    java_literals,
)
from paimon_core.format.roaring import deserialize32, serialize32
from paimon_core.format.types import DataType

BSI = "bsi"
VERSION_1 = 1
_SUPPORTED = frozenset(
    {"TINYINT", "SMALLINT", "INT", "BIGINT", "DATE", "TIME", "TIMESTAMP", "TIMESTAMP_LTZ"}
)
_LONG_MIN = -(1 << 63)


def unsupported_reason(t: DataType) -> str | None:
    """``getValueMapper``'s refusal: ``<type> type is not support to build bsi index yet.``"""
    if t.root in _SUPPORTED or t.root == "DECIMAL":
        return None
    return f"{t} type is not support to build bsi index yet."


def _longs(column: JavaColumn) -> np.ndarray:
    if column.kind == "decimals":
        unscaled = [0 if v is None else v for v in column.values]
        if any(not _LONG_MIN <= v < -_LONG_MIN for v in unscaled):
            raise InvalidArgument("A decimal value's unscaled value does not fit a long")
        return np.array(unscaled, dtype=np.int64)
    if column.kind != "ints":
        raise InvalidArgument(f"A bsi index cannot index {column.kind}")
    return np.asarray(column.values, dtype=np.int64)


class _Appender:
    """``BitSliceIndexRoaringBitmap.Appender`` (min is always 0 here)."""

    def __init__(self, maximum: int) -> None:
        self.max = maximum
        self.slices = maximum.bit_length()

    def serialize(self, rows: np.ndarray, values: np.ndarray) -> bytes:
        out = bytearray(struct.pack(">bqq", VERSION_1, 0, self.max))
        out += serialize32(rows)
        out += struct.pack(">i", self.slices)
        for bit in range(self.slices):
            out += serialize32(rows[(values >> np.int64(bit)) & 1 == 1])
        return bytes(out)


class BsiWriter:
    """Java's ``BitSliceIndexBitmapFileIndex.Writer``."""

    def __init__(self, t: DataType, options: Mapping[str, str]) -> None:
        reason = unsupported_reason(t)
        if reason is not None:
            raise InvalidArgument(reason)
        self.columns: list[JavaColumn] = []

    def write(self, column: JavaColumn) -> None:
        self.columns.append(column)

    def serialized(self) -> bytes:
        valid = (
            np.concatenate([c.valid for c in self.columns]) if self.columns else np.empty(0, bool)
        )
        values = (
            np.concatenate([_longs(c) for c in self.columns])
            if self.columns
            else np.empty(0, np.int64)
        )
        rows = np.flatnonzero(valid)
        present = values[rows]
        if np.any(present == _LONG_MIN):
            raise InvalidArgument("A bsi index cannot hold -9223372036854775808")
        positive = present >= 0
        out = bytearray(struct.pack(">bi", VERSION_1, len(valid)))
        for side in (positive, ~positive):
            side_rows = rows[side]
            magnitudes = np.abs(present[side])
            out += b"\x01" if len(side_rows) else b"\x00"
            if len(side_rows):
                appender = _Appender(int(magnitudes.max()))
                out += appender.serialize(side_rows, magnitudes)
        return bytes(out)


class _Slices:
    """``BitSliceIndexRoaringBitmap``: one side's slices."""

    def __init__(self, minimum: int, maximum: int, ebm: BitMap, slices: list[BitMap]) -> None:
        self.min = minimum
        self.max = maximum
        self.ebm = ebm
        self.slices = slices

    @classmethod
    def empty(cls) -> _Slices:
        return cls(0, 0, BitMap(), [])

    def compare(self, op: str, predicate: int) -> BitMap:
        """``compare``: min/max short cuts, else O'Neil's comparison."""
        low, high = self.min, self.max
        shortcut: bool | None = None  # True: every row with a value; False: none
        if op == "=":
            if low == high == predicate:
                shortcut = True
            elif predicate < low or predicate > high:
                shortcut = False
        elif op == ">=":
            shortcut = True if predicate <= low else False if predicate > high else None
        elif op == ">":
            shortcut = True if predicate < low else False if predicate >= high else None
        elif op == "<=":
            shortcut = True if predicate >= high else False if predicate < low else None
        elif op == "<":
            shortcut = True if predicate > high else False if predicate <= low else None
        if shortcut is not None:
            return BitMap(self.ebm) if shortcut else BitMap()
        value = predicate - low
        greater, less, equal = BitMap(), BitMap(), BitMap(self.ebm)
        for bit in range(len(self.slices) - 1, -1, -1):
            if (value >> bit) & 1:
                less |= equal - self.slices[bit]
                equal &= self.slices[bit]
            else:
                greater |= equal & self.slices[bit]
                equal -= self.slices[bit]
        equal &= self.ebm
        if op == "=":
            return equal
        if op == ">":
            return greater & self.ebm
        if op == "<":
            return less & self.ebm
        if op == "<=":
            return (less | equal) & self.ebm
        return (greater | equal) & self.ebm


def _read_slices(payload: bytes, position: int) -> tuple[_Slices, int]:
    version = payload[position]
    if version > VERSION_1:
        raise InvalidArgument(
            f"deserialize bsi index fail, your plugin version is lower than {version}"
        )
    minimum, maximum = struct.unpack_from(">qq", payload, position + 1)
    values, position = deserialize32(payload, position + 17)
    ebm = BitMap(values.tolist())
    (count,) = struct.unpack_from(">i", payload, position)
    position += 4
    slices = []
    for _ in range(count):
        values, position = deserialize32(payload, position)
        slices.append(BitMap(values.tolist()))
    return _Slices(minimum, maximum, ebm, slices), position


class BsiReader:
    """Java's ``BitSliceIndexBitmapFileIndex.Reader``."""

    def __init__(self, t: DataType, payload: bytes) -> None:
        self.type = t
        version = payload[0] if payload else 0
        if version > VERSION_1:
            raise InvalidArgument(
                f"read bsi index file fail, your plugin version is lower than {version}"
            )
        (self.row_count,) = struct.unpack_from(">i", payload, 1)
        position = 5
        sides = []
        for _ in range(2):
            has = payload[position] != 0
            position += 1
            if has:
                side, position = _read_slices(payload, position)
            else:
                side = _Slices.empty()
            sides.append(side)
        self.positive, self.negative = sides

    def _not_null(self) -> BitMap:
        return self.positive.ebm | self.negative.ebm

    def _value(self, literal: Any) -> int | None:
        keys = java_literals(literal, self.type)
        return None if keys is None else int(keys[0])

    def _equal(self, value: int) -> BitMap:
        if value == _LONG_MIN:
            return BitMap()
        if value < 0:
            return self.negative.compare("=", -value)
        return self.positive.compare("=", value)

    def _range(self, op: str, value: int) -> BitMap:
        positive, negative = self.positive, self.negative
        if op == "<":
            if value == _LONG_MIN:
                return BitMap()
            if value < 0:
                return negative.compare(">", -value)
            return positive.compare("<", value) | negative.ebm
        if op == "<=":
            if value == _LONG_MIN:
                return BitMap()
            if value < 0:
                return negative.compare(">=", -value)
            return positive.compare("<=", value) | negative.ebm
        if op == ">":
            if value == _LONG_MIN:
                return self._not_null()
            if value < 0:
                return positive.ebm | negative.compare("<", -value)
            return positive.compare(">", value)
        if value == _LONG_MIN:
            return self._not_null()
        if value < 0:
            return positive.ebm | negative.compare("<=", -value)
        return positive.compare(">=", value)

    def visit(self, op: str, literal: Any, literals: Sequence[Any]) -> FileIndexResult:
        if op == "is_null":
            return BitmapResult(flipped(self._not_null(), self.row_count))
        if op == "is_not_null":
            return BitmapResult(self._not_null())
        if op in ("=", "!=", "in"):
            values = [literal] if op != "in" else list(literals)
            if not values or any(v is None for v in values):
                return REMAIN
            rows = BitMap()
            for v in values:
                value = self._value(v)
                if value is None:
                    return REMAIN
                rows |= self._equal(value)
            return BitmapResult(rows if op != "!=" else self._not_null() - rows)
        if op in ("<", "<=", ">", ">="):
            if literal is None:
                return REMAIN
            value = self._value(literal)
            if value is None:
                return REMAIN
            return BitmapResult(self._range(op, value))
        return REMAIN

"""The ``bitmap`` file index (Java's ``BitmapFileIndex`` with ``BitmapFileIndexMeta`` (V1)
and ``BitmapFileIndexMetaV2``): for every distinct value the rows holding it, a roaring
bitmap, and one for the nulls.

Payload, big-endian: the version (1 byte), the row count, the number of distinct values,
whether there are nulls and (then) the null bitmap's offset. A value held by one row has no
bitmap: its offset is ``-1 - row``; else its offset counts from the body, which holds the
null bitmap (when more than one row is null) and then the values' bitmaps (portable
roaring format, as Java's ``runOptimize`` leaves them) in the order of Java's ``HashMap``
of values (``computeIfAbsent``, by first appearance).

* V1 (Paimon 0.9's only version): each value and its offset, in that order.
* V2 (the default since Paimon 1.0; ``file-index.bitmap.<column>.version`` = 1 writes V1,
  which Paimon 0.9 needs to read the index): the null bitmap's length after its offset,
  then the values sorted (strings by UTF-8 bytes, numbers by value, floats as Java's
  ``Float.compare``), cut into blocks of at most ``index-block-size`` (default 16 kb) of
  entries (value, offset, length; -1 for one-row values): the block count, each block's
  first value and offset, the blocks' total size, then the blocks.

Values are written as Java's ``DataOutput`` writes them (a string as its byte count and
UTF-8 bytes, floats by their bits with one NaN). Types: strings, booleans, integers, floats,
DATE, TIME, TIMESTAMP (millis to precision 3, else micros); not binaries or decimals.

Readers answer ``=``, ``IN``, ``!=`` (the rows not equal, nulls included), ``IS NULL`` and
``IS NOT NULL`` with the rows that may match; everything else ``REMAIN``.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
from pyroaring import BitMap

from paimon_core.exceptions import InvalidArgument
from paimon_core.format.file_index import (
    REMAIN,
    BitmapResult,
    FileIndexResult,
    JavaColumn,
    flipped,
    float_bits,
    float_bits_of,
    java_hash_order,
    java_literals,
)
from paimon_core.format.options import parse_memory_size
from paimon_core.format.roaring import deserialize32, serialize32
from paimon_core.format.types import DataType

BITMAP = "bitmap"
VERSION_1 = 1
VERSION_2 = 2
DEFAULT_BLOCK_SIZE = "16kb"
_UNSUPPORTED = {
    "BINARY": "Does not support type binary",
    "VARBINARY": "Does not support type binary",
    "DECIMAL": "Does not support decimal",
    "ARRAY": "Does not support type array",
    "VECTOR": "Does not support type vector",
    "MULTISET": "Does not support type mutiset",
    "MAP": "Does not support type map",
    "ROW": "Does not support type row",
    "VARIANT": "Does not support type variant",
    "BLOB": "Does not support type blob",
}
_MASK64 = (1 << 64) - 1
_C1, _C2 = 0xCC9E2D51, 0x1B873593


def unsupported_reason(t: DataType) -> str | None:
    """``BitmapTypeVisitor``'s refusal of ``t``, or None."""
    return _UNSUPPORTED.get(t.root)


# ------------------------------------------------------------------- Java's value kinds


def _kind(t: DataType) -> str:
    """The Java class of the index's keys (``BitmapTypeVisitor``)."""
    root = t.root
    if root in ("CHAR", "VARCHAR"):
        return "string"
    if root == "BOOLEAN":
        return "boolean"
    if root == "TINYINT":
        return "byte"
    if root == "SMALLINT":
        return "short"
    if root in ("INT", "DATE", "TIME"):
        return "int"
    if root in ("BIGINT", "TIMESTAMP", "TIMESTAMP_LTZ"):
        return "long"
    if root == "FLOAT":
        return "float"
    if root == "DOUBLE":
        return "double"
    raise InvalidArgument(_UNSUPPORTED.get(root, f"Does not support type {t}"))


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def _rotl32(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & 0xFFFFFFFF


def _mix_k1(k1: int) -> int:
    return (_rotl32((k1 * _C1) & 0xFFFFFFFF, 15) * _C2) & 0xFFFFFFFF


def _mix_h1(h1: int, k1: int) -> int:
    return (_rotl32(h1 ^ k1, 13) * 5 + 0xE6546B64) & 0xFFFFFFFF


def binary_string_hash(data: bytes) -> int:
    """``BinaryString.hashCode``: Paimon's ``MurmurHashUtils.hashBytes`` (seed 42; 4-byte
    little-endian words, then each trailing byte, signed)."""
    h1 = 42
    aligned = len(data) - len(data) % 4
    for (word,) in struct.iter_unpack("<I", data[:aligned]):
        h1 = _mix_h1(h1, _mix_k1(word))
    for byte in data[aligned:]:
        h1 = _mix_h1(h1, _mix_k1((byte - 256 if byte > 127 else byte) & 0xFFFFFFFF))
    h1 ^= len(data)
    h1 ^= h1 >> 16
    h1 = (h1 * 0x85EBCA6B) & 0xFFFFFFFF
    h1 ^= h1 >> 13
    h1 = (h1 * 0xC2B2AE35) & 0xFFFFFFFF
    h1 ^= h1 >> 16
    return _int32(h1)


def _hash_code(kind: str) -> Callable[[Any], int]:
    """The keys' ``hashCode`` (floats are keyed by their canonical bits)."""
    if kind == "string":
        return binary_string_hash
    if kind == "boolean":
        return lambda v: 1231 if v else 1237
    if kind in ("long", "double"):
        return lambda v: _int32(v ^ ((v & _MASK64) >> 32))
    return _int32


def _writer(kind: str) -> Callable[[Any], bytes]:
    """``DataOutput`` bytes of a key."""
    if kind == "string":
        return lambda v: struct.pack(">i", len(v)) + v
    if kind == "boolean":
        return lambda v: b"\x01" if v else b"\x00"
    fmt = {"byte": ">b", "short": ">h", "int": ">i", "long": ">q", "float": ">i", "double": ">q"}
    return struct.Struct(fmt[kind]).pack


def _size(kind: str) -> Callable[[Any], int]:
    if kind == "string":
        return lambda v: 4 + len(v)
    size = {"boolean": 1, "byte": 1, "short": 2, "int": 4, "long": 8, "float": 4, "double": 8}
    fixed = size[kind]
    return lambda v: fixed


def _sort_key(kind: str) -> Callable[[Any], Any]:
    """Java's comparator of the keys (``Float.compare``: -0.0 < 0.0, NaN last)."""
    if kind in ("float", "double"):
        single = kind == "float"

        def order(bits: int) -> tuple[int, float, int]:
            value = _bits_value(bits, single)
            return (1, 0.0, 0) if value != value else (0, value, bits)

        return order
    return lambda v: v


def _bits_value(bits: int, single: bool) -> float:
    if single:
        return float(struct.unpack(">f", struct.pack(">i", bits))[0])
    return float(struct.unpack(">d", struct.pack(">q", bits))[0])


def _keys_of(column: JavaColumn, kind: str) -> tuple[list[Any], np.ndarray]:
    """The distinct non-null values in order of first appearance, and each valid row's
    index into them (-1 for nulls)."""
    n = len(column)
    codes = np.full(n, -1, dtype=np.int64)
    valid = column.valid
    rows = np.flatnonzero(valid)
    if not len(rows):
        return [], codes
    if column.kind == "blobs":
        values = column.values
        encoded = pa.array([values[i] for i in rows], pa.large_binary()).dictionary_encode()
        codes[rows] = encoded.indices.to_numpy(zero_copy_only=False)
        return encoded.dictionary.to_pylist(), codes
    if column.kind == "floats":
        raw = float_bits(column.values[rows])
    elif column.kind == "bools":
        raw = column.values[rows].astype(np.int64)
    else:
        raw = column.values[rows].astype(np.int64)
    distinct, first, inverse = np.unique(raw, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    codes[rows] = rank[inverse.reshape(-1)]
    keys = [int(v) for v in distinct[order]]
    if kind == "boolean":
        return [bool(v) for v in keys], codes
    if kind == "float":
        return [_int32(v) for v in keys], codes
    return keys, codes


class BitmapWriter:
    """Java's ``BitmapFileIndex.Writer``: rows are numbered in the order written."""

    def __init__(self, t: DataType, options: Mapping[str, str]) -> None:
        reason = unsupported_reason(t)
        if reason is not None:
            raise InvalidArgument(reason)
        self.kind = _kind(t)
        text = options.get("version")
        try:
            self.version = VERSION_2 if text is None else int(text.strip())
        except ValueError:
            raise InvalidArgument(f"Could not parse value '{text}' for key 'version'.") from None
        if self.version not in (VERSION_1, VERSION_2):
            raise InvalidArgument(f"invalid version: {self.version}")
        self.block_size = parse_memory_size(options.get("index-block-size", DEFAULT_BLOCK_SIZE))
        self.columns: list[JavaColumn] = []

    def write(self, column: JavaColumn) -> None:
        self.columns.append(column)

    def _column(self) -> JavaColumn:
        if len(self.columns) == 1:
            return self.columns[0]
        kind = self.columns[0].kind
        valid = np.concatenate([c.valid for c in self.columns])
        if kind == "blobs":
            return JavaColumn(kind, [v for c in self.columns for v in c.values], valid)
        return JavaColumn(kind, np.concatenate([c.values for c in self.columns]), valid)

    def serialized(self) -> bytes:
        column = (
            self._column() if self.columns else JavaColumn("ints", np.empty(0), np.empty(0, bool))
        )
        row_count = len(column)
        keys, codes = _keys_of(column, self.kind)
        order = np.argsort(codes, kind="stable")
        nulls = int(np.count_nonzero(codes < 0))
        null_rows = order[:nulls]
        groups = np.split(order[nulls:], np.flatnonzero(np.diff(codes[order[nulls:]])) + 1)
        rows_of = {} if not keys else {keys[int(codes[g[0]])]: g for g in groups if len(g)}
        hashed = java_hash_order(keys, _hash_code(self.kind), prepend=True)
        null_bytes = serialize32(null_rows)
        offset = 0 if nulls <= 1 else len(null_bytes)
        offsets: list[tuple[Any, int]] = []
        bodies: list[bytes] = []
        for key in hashed:
            rows = rows_of[key]
            if len(rows) == 1:
                offsets.append((key, -1 - int(rows[0])))
            else:
                data = serialize32(rows)
                bodies.append(data)
                offsets.append((key, offset))
                offset += len(data)
        null_offset = -1 - int(null_rows[0]) if nulls == 1 else 0
        write = _writer(self.kind)
        out = bytearray(struct.pack(">bii?", self.version, row_count, len(keys), nulls > 0))
        if self.version == VERSION_1:
            if nulls:
                out += struct.pack(">i", null_offset)
            for key, at in offsets:
                out += write(key) + struct.pack(">i", at)
        else:
            if nulls:
                out += struct.pack(">ii", null_offset, len(null_bytes))
            out += self._v2_meta(offsets, null_offset, offset)
        if nulls > 1:
            out += null_bytes
        for data in bodies:
            out += data
        return bytes(out)

    def _v2_meta(self, offsets: list[tuple[Any, int]], null_offset: int, final: int) -> bytes:
        """``BitmapFileIndexMetaV2.serialize`` after the null fields."""
        lengths: dict[Any, int] = {}
        null_key = object()
        last_key: Any = null_key
        last_offset = null_offset
        for key, at in offsets:
            if at >= 0:
                if last_offset >= 0:
                    lengths[last_key] = at - last_offset
                last_key, last_offset = key, at
        lengths[last_key] = final - last_offset
        size = _size(self.kind)
        entries = sorted(
            ((key, at, lengths.get(key, -1)) for key, at in offsets),
            key=lambda e: _sort_key(self.kind)(e[0]),
        )
        blocks: list[tuple[Any, int, int, list[tuple[Any, int, int]]]] = []
        if offsets:
            blocks.append((None, 0, 4, []))
        for entry in entries:
            first, at, used, items = blocks[-1]
            need = 8 + size(entry[0])
            if first is None:
                first = entry[0]
            if used + need > self.block_size:
                blocks[-1] = (first, at, used, items)
                at, used, items = at + used, 4, []
                if used + need > self.block_size:
                    raise InvalidArgument("index fail")
                blocks.append((entry[0], at, used + need, [entry]))
                continue
            items.append(entry)
            blocks[-1] = (first, at, used + need, items)
        write = _writer(self.kind)
        out = bytearray(struct.pack(">i", len(blocks)))
        for first, at, _, _ in blocks:
            out += write(first) + struct.pack(">i", at)
        out += struct.pack(">i", sum(used for _, _, used, _ in blocks))
        for _, _, _, items in blocks:
            out += struct.pack(">i", len(items))
            for key, at, length in items:
                out += write(key) + struct.pack(">ii", at, length)
        return bytes(out)


# ------------------------------------------------------------------------------ reading


class BitmapReader:
    """Java's ``BitmapFileIndex.Reader`` (V1 and V2)."""

    def __init__(self, t: DataType, payload: bytes) -> None:
        self.type = t
        self.kind = _kind(t)
        self.payload = payload
        version = payload[0] if payload else 0
        if version not in (VERSION_1, VERSION_2):
            raise InvalidArgument(
                f"read index file fail, your plugin version is lower than {version}"
            )
        self.row_count, count, has_null = struct.unpack_from(">ii?", payload, 1)
        position = 10
        self.null_offset: int | None = None
        if has_null:
            (self.null_offset,) = struct.unpack_from(">i", payload, position)
            position += 4
            if version == VERSION_2:
                position += 4  # the null bitmap's length
        self.offsets: dict[Any, int] = {}
        if version == VERSION_1:
            for _ in range(count):
                key, position = self._read_key(position)
                (self.offsets[key],) = struct.unpack_from(">i", payload, position)
                position += 4
            self.body = position
        else:
            (blocks,) = struct.unpack_from(">i", payload, position)
            position += 4
            for _ in range(blocks):
                _, position = self._read_key(position)
                position += 4
            (blocks_size,) = struct.unpack_from(">i", payload, position)
            position += 4
            start = position
            while position < start + blocks_size:
                (entries,) = struct.unpack_from(">i", payload, position)
                position += 4
                for _ in range(entries):
                    key, position = self._read_key(position)
                    (self.offsets[key],) = struct.unpack_from(">i", payload, position)
                    position += 8
            self.body = start + blocks_size

    def _read_key(self, position: int) -> tuple[Any, int]:
        kind = self.kind
        payload = self.payload
        if kind == "string":
            (length,) = struct.unpack_from(">i", payload, position)
            start = position + 4
            return bytes(payload[start : start + length]), start + length
        if kind == "boolean":
            return payload[position] != 0, position + 1
        fmt = {
            "byte": ">b",
            "short": ">h",
            "int": ">i",
            "long": ">q",
            "float": ">i",
            "double": ">q",
        }
        unpacker = struct.Struct(fmt[kind])
        return unpacker.unpack_from(payload, position)[0], position + unpacker.size

    def _bitmap(self, offset: int) -> BitMap:
        if offset < 0:
            return BitMap([-1 - offset])
        values, _ = deserialize32(self.payload, self.body + offset)
        return BitMap(values.tolist())

    def _rows(self, key: Any) -> BitMap:
        if key is None:
            return BitMap() if self.null_offset is None else self._bitmap(self.null_offset)
        offset = self.offsets.get(key)
        return BitMap() if offset is None else self._bitmap(offset)

    def _keys(self, literal: Any) -> list[Any] | None:
        keys = java_literals(literal, self.type)
        if keys is None:
            return None
        if self.kind in ("float", "double"):
            single = self.kind == "float"
            return [float_bits_of(float(k), single) for k in keys]
        return keys

    def _equal(self, literals: Sequence[Any]) -> BitMap | None:
        rows = BitMap()
        for literal in literals:
            keys = self._keys(literal)
            if keys is None:
                return None
            for key in keys:
                rows |= self._rows(key)
        return rows

    def visit(self, op: str, literal: Any, literals: Sequence[Any]) -> FileIndexResult:
        if op == "is_null":
            return BitmapResult(self._rows(None))
        if op == "is_not_null":
            return BitmapResult(flipped(self._rows(None), self.row_count))
        if op in ("=", "!=", "in"):
            values = [literal] if op != "in" else list(literals)
            if not values or any(v is None for v in values):
                return REMAIN
            rows = self._equal(values)
            if rows is None:
                return REMAIN
            return BitmapResult(rows if op != "!=" else flipped(rows, self.row_count))
        return REMAIN

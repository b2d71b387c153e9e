"""The file index container (Java's ``FileIndexFormat``), the ``file-index.*`` options
(``FileIndexOptions``) and the results index readers give (``FileIndexResult``).

A data file's column indexes (bloom filter, bitmap, bit-sliced index) live in one container,
embedded in the manifest entry (``DataFileMeta.embedded_index``) when it is at most
``file-index.in-manifest-threshold`` bytes, else in a ``<data file>.index`` file beside it
(one of the file's ``extra_files``).

Layout, all big-endian: magic (8 bytes), version (4, only 1), head length (4), column
count (4), then per column its name (``DataOutput.writeUTF``: 2-byte length and modified
UTF-8), its index count (4) and per index its type name, start and length (4 each; start
-1 marks an empty index, which Java's map-key indexes write for keys never seen), then a
redundant length (4, always 0), then the index payloads in header order. Starts count from
the container's first byte.

Java builds the header from ``HashMap`` s, so its order is theirs (``java_hash_order``):
a bin of eight or more colliding keys, which Java turns into a tree, is the one case where
the order here may differ; every reader finds the indexes either way.
"""

from __future__ import annotations

import datetime as dt
import io
import math
import struct
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyroaring import BitMap

from paimon_core.exceptions import InvalidArgument, MetadataFormatError, SchemaError
from paimon_core.format.options import parse_bool, parse_memory_size
from paimon_core.format.types import DataType

MAGIC = 1493475289347502
VERSION = 1
EMPTY_INDEX_FLAG = -1
INDEX_PATH_SUFFIX = ".index"
"""``DataFilePathFactory.INDEX_PATH_SUFFIX``: the extra file holding a data file's indexes."""
FILE_INDEX_PREFIX = "file-index."
COLUMNS_SUFFIX = ".columns"
IN_MANIFEST_THRESHOLD = "file-index.in-manifest-threshold"
READ_ENABLED = "file-index.read.enabled"
DEFAULT_IN_MANIFEST_THRESHOLD = 500
_PREFIX = struct.Struct(">qii")
_EPOCH_DATE = dt.date(1970, 1, 1)
_EPOCH = dt.datetime(1970, 1, 1)
K = TypeVar("K")


# ----------------------------------------------------------------------- Java hashing


def java_string_hash(text: str) -> int:
    """``String.hashCode`` (over UTF-16 code units, 32-bit wrap-around)."""
    h = 0
    units = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] << 8 | units[i + 1])) & 0xFFFFFFFF
    return h


def java_hash_order(
    keys: Sequence[K], hash_code: Callable[[K], int] | None = None, *, prepend: bool = False
) -> list[K]:
    """The iteration order of a ``java.util.HashMap`` the ``keys`` were added to in this
    order: by bucket (the spread hash masked by the table size, which doubles past 0.75
    load), within a bucket in insertion order for ``put`` and in reverse for
    ``computeIfAbsent`` (``prepend``: it links a new key before the bucket's first; a
    resize keeps the relative order of a bucket's keys). ``hash_code`` is the keys'
    ``hashCode`` (default: ``String.hashCode``)."""
    hasher: Callable[[Any], int] = hash_code or java_string_hash
    capacity = 16
    while len(keys) > capacity * 3 // 4:
        capacity *= 2
    sign = -1 if prepend else 1

    def bucket(key: K) -> int:
        h = hasher(key) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (capacity - 1)

    return [k for _, k in sorted(enumerate(keys), key=lambda p: (bucket(p[1]), sign * p[0]))]


class JavaHashMap:
    """A ``java.util.HashMap`` 's iteration order under ``put`` (a new key goes last in its
    bucket), ``computeIfAbsent`` (first) and ``remove``; the table size follows the most
    keys it ever held (a ``HashMap`` never shrinks). Values are kept as given."""

    def __init__(self, hash_code: Callable[[Any], int] | None = None) -> None:
        self._hash: Callable[[Any], int] = hash_code or java_string_hash
        self.values: dict[Any, Any] = {}
        self._rank: dict[Any, int] = {}
        self._count = 0
        self._most = 0

    def _add(self, key: Any, value: Any, first: bool) -> None:
        self._count += 1
        self._rank[key] = -self._count if first else self._count
        self.values[key] = value
        self._most = max(self._most, len(self.values))

    def put(self, key: Any, value: Any) -> None:
        if key in self.values:
            self.values[key] = value
        else:
            self._add(key, value, first=False)

    def compute_if_absent(self, key: Any, factory: Callable[[], Any]) -> Any:
        if key not in self.values:
            self._add(key, factory(), first=True)
        return self.values[key]

    def remove(self, key: Any) -> None:
        self.values.pop(key, None)
        self._rank.pop(key, None)

    def keys(self) -> list[Any]:
        capacity = 16
        while self._most > capacity * 3 // 4:
            capacity *= 2

        def order(key: Any) -> tuple[int, int]:
            h = self._hash(key) & 0xFFFFFFFF
            return ((h ^ (h >> 16)) & (capacity - 1), self._rank[key])

        return sorted(self.values, key=order)

    def __len__(self) -> int:
        return len(self.values)


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


# ------------------------------------------------------------------------- container


@dataclass(frozen=True, slots=True)
class FileIndexMeta:
    """One column index of a container (Java's ``FileIndexFormat.FileIndexMeta``)."""

    column_name: str
    index_type: str
    size_in_bytes: int
    empty: bool


@dataclass(frozen=True, slots=True)
class ContainerEntry:
    """Where one column index sits in its container (start -1: an empty index)."""

    column_name: str
    index_type: str
    start: int
    length: int

    @property
    def empty(self) -> bool:
        return self.start == EMPTY_INDEX_FLAG


def read_header(read: Callable[[int], bytes], where: str) -> list[ContainerEntry]:
    """The entries of a container's header, in the order Java's reader iterates them
    (``HashMap`` s of columns and of index types).

    Args:
        read: reads the next ``n`` bytes of the container (fewer at its end).
        where: the container's location, for messages.

    Raises:
        MetadataFormatError: not a file index container, another version, or a torn header
            (``Failed to read file index metadata from <where>.``, as Paimon says).
    """
    failed = f"Failed to read file index metadata from {where}."
    prefix = read(_PREFIX.size)
    if len(prefix) != _PREFIX.size:
        raise MetadataFormatError(f"{failed} The header is truncated.")
    magic, version, head_length = _PREFIX.unpack(prefix)
    if magic != MAGIC:
        raise MetadataFormatError(f"{failed} This file is not file index file.")
    if version != VERSION:
        raise MetadataFormatError(
            f"{failed} This index file is version of {version}, not in supported version "
            f"list [{VERSION}]"
        )
    size = head_length - _PREFIX.size
    head = read(size) if size > 0 else b""
    if size < 4 or len(head) != size:
        raise MetadataFormatError(f"{failed} The header is truncated.")
    reader = _Reader(head, failed)
    columns: dict[str, dict[str, tuple[int, int]]] = {}
    for _ in range(reader.int()):
        column = reader.utf()
        indexes = columns.setdefault(column, {})
        for _ in range(reader.int()):
            name = reader.utf()
            indexes[name] = (reader.int(), reader.int())
    # Reader: header.computeIfAbsent(column) (prepends), then indexMap.put(type).
    return [
        ContainerEntry(column, name, *columns[column][name])
        for column in java_hash_order(list(columns), prepend=True)
        for name in java_hash_order(list(columns[column]))
    ]


def read_index_metas(read: Callable[[int], bytes], where: str) -> list[FileIndexMeta]:
    """The indexes a container's header lists, in Java's ``indexMetas`` order.

    Raises:
        MetadataFormatError: as ``read_header``.
    """
    return [
        FileIndexMeta(e.column_name, e.index_type, e.length, e.empty)
        for e in read_header(read, where)
    ]


def write_container(indexes: Sequence[tuple[str, Sequence[tuple[str, bytes | None]]]]) -> bytes:
    """Java's ``FileIndexFormat.Writer.writeColumnIndexes``: ``indexes`` are the columns in
    the order of Java's map, each with its index types and payloads (None: empty)."""
    body = io.BytesIO()
    placed: list[tuple[str, list[tuple[str, int, int]]]] = []
    for column, types in indexes:
        infos = []
        for name, payload in types:
            if payload is None:
                infos.append((name, EMPTY_INDEX_FLAG, 0))
            else:
                start = body.tell()
                body.write(payload)
                infos.append((name, start, len(payload)))
        placed.append((column, infos))
    names = b"".join(
        _utf(column) + b"".join(_utf(name) for name, _, _ in infos) for column, infos in placed
    )
    entry_count = sum(len(infos) for _, infos in placed)
    head_length = 8 + 4 + 4 + 4 + entry_count * 8 + len(placed) * 4 + 4 + len(names)
    out = io.BytesIO()
    out.write(_PREFIX.pack(MAGIC, VERSION, head_length))
    out.write(struct.pack(">i", len(placed)))
    for column, infos in placed:
        out.write(_utf(column))
        out.write(struct.pack(">i", len(infos)))
        for name, start, length in infos:
            out.write(_utf(name))
            out.write(struct.pack(">ii", start if start < 0 else start + head_length, length))
    out.write(struct.pack(">i", 0))  # redundant length
    out.write(body.getvalue())
    return out.getvalue()


def _utf(text: str) -> bytes:
    """``DataOutput.writeUTF``: a 2-byte length and modified UTF-8."""
    data = encode_modified_utf8(text)
    if len(data) > 0xFFFF:
        raise InvalidArgument(f"Name too long for a file index: {text[:40]}...")
    return struct.pack(">H", len(data)) + data


def encode_modified_utf8(text: str) -> bytes:
    """Java's modified UTF-8: NUL as ``C0 80``, characters beyond the BMP as two encoded
    surrogates."""
    out = bytearray()
    for c in text:
        code = ord(c)
        if code == 0:
            out += b"\xc0\x80"
        elif code < 0x10000:
            out += c.encode("utf-8", "surrogatepass")
        else:
            high = chr(0xD800 + ((code - 0x10000) >> 10))
            low = chr(0xDC00 + ((code - 0x10000) & 0x3FF))
            out += (high + low).encode("utf-8", "surrogatepass")
    return bytes(out)


class _Reader:
    def __init__(self, data: bytes, failed: str) -> None:
        self.data = data
        self.position = 0
        self.failed = failed

    def _take(self, n: int) -> bytes:
        end = self.position + n
        if end > len(self.data):
            raise MetadataFormatError(f"{self.failed} The header is truncated.")
        out = self.data[self.position : end]
        self.position = end
        return out

    def int(self) -> int:
        return int(struct.unpack(">i", self._take(4))[0])

    def utf(self) -> str:
        (length,) = struct.unpack(">H", self._take(2))
        return decode_modified_utf8(self._take(length), self.failed)


def decode_modified_utf8(data: bytes, failed: str = "Invalid modified UTF-8") -> str:
    """Java's ``DataInput.readUTF`` text: UTF-8 with NUL as ``C0 80`` and characters beyond
    the BMP as two encoded surrogates."""
    try:
        text = data.replace(b"\xc0\x80", b"\x00").decode("utf-8", "surrogatepass")
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
    except UnicodeError:
        raise MetadataFormatError(f"{failed} A name is not modified UTF-8.") from None


# --------------------------------------------------------------------------- options


@dataclass(frozen=True, slots=True)
class IndexColumn:
    """A column to index (Java's ``FileIndexOptions.Column``): a top-level column, or one
    key of a map column (``m[k]``: ``nested`` is ``k``)."""

    name: str
    nested: str | None = None

    @property
    def full_name(self) -> str:
        """``FileIndexCommon.toMapKey``: the name the container lists."""
        return self.name if self.nested is None else f"{self.name}[{self.nested}]"

    def java_hash(self) -> int:
        """``Arrays.hashCode({columnName, nestedColumnName, isNestedColumn})``."""
        h = 31 + java_string_hash(self.name)
        h = 31 * h + (0 if self.nested is None else java_string_hash(self.nested))
        return 31 * h + (1237 if self.nested is None else 1231)


def parse_column(text: str) -> IndexColumn:
    """``FileIndexOptions.topLevelIndexOfNested``: ``m[k]`` names key ``k`` of map ``m``."""
    start = text.find("[")
    if start != -1 and text.endswith("]"):
        return IndexColumn(text[:start], text[start + 1 : -1])
    return IndexColumn(text)


@dataclass(frozen=True)
class FileIndexOptions:
    """A table's file indexes (Java's ``FileIndexOptions``): for each column (in Java's
    ``HashMap`` order) its index types (in theirs) with each index's own options
    (``file-index.<type>.<column>.<key>``), and for map columns indexed by key the options
    given to the whole map (``file-index.<type>.<map>.<key>``)."""

    columns: tuple[tuple[IndexColumn, tuple[tuple[str, Mapping[str, str]], ...]], ...]
    map_options: Mapping[tuple[str, str], Mapping[str, str]] = field(default_factory=dict)
    in_manifest_threshold: int = DEFAULT_IN_MANIFEST_THRESHOLD

    @property
    def empty(self) -> bool:
        return not self.columns

    def index_types(self) -> set[str]:
        return {name for _, types in self.columns for name, _ in types}


def file_index_options(options: Mapping[str, str]) -> FileIndexOptions:
    """Parse a table's ``file-index.*`` options as Java's ``FileIndexOptions`` does.

    Raises:
        InvalidArgument: an empty name in a ``.columns`` list, an option for a column the
            index type does not declare, or a bad threshold (Paimon's messages).
    """
    keys = java_hash_order(list(options))  # CoreOptions.toMap(): a HashMap
    declared: dict[IndexColumn, dict[str, dict[str, str]]] = {}
    map_level: dict[IndexColumn, dict[str, dict[str, str]]] = {}
    pending: list[str] = []
    for key in keys:
        if not key.startswith(FILE_INDEX_PREFIX):
            continue
        if not key.endswith(COLUMNS_SUFFIX):
            pending.append(key)
            continue
        index_type = key[len(FILE_INDEX_PREFIX) : -len(COLUMNS_SUFFIX)]
        for name in options[key].split(","):
            if not name.strip():
                raise InvalidArgument(f"Wrong option in {key}, should not have empty column")
            column = parse_column(name.strip())
            declared.setdefault(column, {}).setdefault(index_type, {})
            if column.nested is not None:
                map_level.setdefault(IndexColumn(column.name), {}).setdefault(index_type, {})
    for key in java_hash_order(pending):  # optionMap: a HashMap
        parts = key[len(FILE_INDEX_PREFIX) :].split(".")
        if len(parts) != 3:
            continue
        index_type, name, option = parts
        target = declared.get(parse_column(name), {}).get(index_type)
        if target is None:
            target = map_level.get(IndexColumn(name), {}).get(index_type)
        if target is None:
            prefix = FILE_INDEX_PREFIX
            raise InvalidArgument(
                f"Wrong file index option '{key}': column '{name}' is not declared in "
                f"'{prefix}{index_type}{COLUMNS_SUFFIX}'. Please add "
                f"'{prefix}{index_type}{COLUMNS_SUFFIX}' = '{name}' before setting column "
                "options. For map nested index, declare it like '<map-column>[<map-key>]'."
            )
        target[option] = options[key]
    threshold_text = options.get(IN_MANIFEST_THRESHOLD)
    threshold = (
        DEFAULT_IN_MANIFEST_THRESHOLD
        if threshold_text is None
        else parse_memory_size(threshold_text)
    )
    # indexTypeOptions.computeIfAbsent(column).computeIfAbsent(type): both prepend.
    columns = tuple(
        (
            column,
            tuple(
                (t, declared[column][t])
                for t in java_hash_order(list(declared[column]), prepend=True)
            ),
        )
        for column in java_hash_order(list(declared), IndexColumn.java_hash, prepend=True)
    )
    flat_map = {
        (column.name, t): opts for column, types in map_level.items() for t, opts in types.items()
    }
    return FileIndexOptions(columns, flat_map, threshold)


def file_index_read_enabled(options: Mapping[str, str]) -> bool:
    """``file-index.read.enabled`` (default true)."""
    text = options.get(READ_ENABLED)
    return True if text is None else parse_bool(text, READ_ENABLED)


# --------------------------------------------------------------------------- results


class FileIndexResult:
    """Java's ``FileIndexResult``: ``REMAIN`` (the file may hold matches), ``SKIP`` (it
    holds none) or the rows that may match (``BitmapResult``, remaining when not empty)."""

    def remain(self) -> bool:
        raise NotImplementedError

    def and_(self, other: FileIndexResult) -> FileIndexResult:
        return self if other.remain() else SKIP

    def or_(self, other: FileIndexResult) -> FileIndexResult:
        return REMAIN if other.remain() else self


class _Remain(FileIndexResult):
    def remain(self) -> bool:
        return True

    def and_(self, other: FileIndexResult) -> FileIndexResult:
        return other

    def or_(self, other: FileIndexResult) -> FileIndexResult:
        return self

    def __repr__(self) -> str:
        return "REMAIN"


class _Skip(FileIndexResult):
    def remain(self) -> bool:
        return False

    def and_(self, other: FileIndexResult) -> FileIndexResult:
        return self

    def or_(self, other: FileIndexResult) -> FileIndexResult:
        return other

    def __repr__(self) -> str:
        return "SKIP"


REMAIN: FileIndexResult = _Remain()
SKIP: FileIndexResult = _Skip()


class BitmapResult(FileIndexResult):
    """Java's ``BitmapIndexResult``: the row positions that may match."""

    __slots__ = ("rows",)

    def __init__(self, rows: BitMap) -> None:
        self.rows = rows

    def remain(self) -> bool:
        return len(self.rows) > 0

    def and_(self, other: FileIndexResult) -> FileIndexResult:
        if isinstance(other, BitmapResult):
            return BitmapResult(self.rows & other.rows)
        return super().and_(other)

    def or_(self, other: FileIndexResult) -> FileIndexResult:
        if isinstance(other, BitmapResult):
            return BitmapResult(self.rows | other.rows)
        return super().or_(other)

    def __repr__(self) -> str:
        return f"BitmapResult({list(self.rows)[:8]}...)"


def flipped(rows: BitMap, row_count: int) -> BitMap:
    """``RoaringBitmap32.flip(0, rowCount)``."""
    out = BitMap(rows)
    if row_count > 0:
        out.flip_inplace(0, row_count)
    return out


# ------------------------------------------------------------- Java's values of columns


@dataclass(frozen=True, slots=True)
class JavaColumn:
    """A column's values as Java's index writers see them: ``ints`` (int64: TINYINT ...
    BIGINT, DATE days, TIME millis, TIMESTAMP millis or micros by precision, DECIMAL unscaled
    when compact), ``floats`` (float32 or float64), ``bools`` or ``blobs`` (UTF-8 or binary
    bytes, a list); ``valid`` marks the non-null rows."""

    kind: str
    values: Any
    valid: np.ndarray

    def __len__(self) -> int:
        return len(self.valid)


def _single(array: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(array, pa.ChunkedArray):
        return array.combine_chunks() if array.num_chunks != 1 else array.chunk(0)
    return array


def java_column(array: pa.Array | pa.ChunkedArray, t: DataType) -> JavaColumn:
    """``array`` (of Paimon type ``t``, in this project's Arrow mapping) as Java sees it.

    Raises:
        InvalidArgument: a type no file index handles.
    """
    arr = _single(array)
    valid = (
        np.ones(len(arr), dtype=bool)
        if arr.null_count == 0
        else np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    )
    root = t.root
    if root in ("CHAR", "VARCHAR", "BINARY", "VARBINARY"):
        values = arr.cast(pa.large_binary()).to_pylist()
        return JavaColumn("blobs", values, valid)
    if root == "BOOLEAN":
        return JavaColumn("bools", _numpy(arr, np.bool_, False), valid)
    if root in ("FLOAT", "DOUBLE"):
        dtype = np.float32 if root == "FLOAT" else np.float64
        return JavaColumn("floats", _numpy(arr, dtype, 0), valid)
    if root in ("TINYINT", "SMALLINT", "INT", "BIGINT"):
        return JavaColumn("ints", _numpy(arr, np.int64, 0), valid)
    if root == "DATE":
        return JavaColumn("ints", _numpy(arr.cast(pa.int32()), np.int64, 0), valid)
    if root == "TIME":
        unit = arr.type.unit
        raw = _numpy(arr.cast(pa.int64() if unit in ("us", "ns") else pa.int32()), np.int64, 0)
        per_milli = {"s": None, "ms": 1, "us": 1000, "ns": 1_000_000}[unit]
        millis = raw * 1000 if per_milli is None else np.floor_divide(raw, per_milli)
        return JavaColumn("ints", millis, valid)
    if root in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        raw = _numpy(arr.cast(pa.int64()), np.int64, 0)
        return JavaColumn("ints", _timestamp_units(raw, arr.type.unit, t.precision or 0), valid)
    if root == "DECIMAL":
        scale = t.scale or 0
        unscaled = [
            None if v is None else int(v.scaleb(scale).to_integral_value()) for v in arr.to_pylist()
        ]
        return JavaColumn("decimals", unscaled, valid)
    raise InvalidArgument(f"Type {t} cannot be file-indexed")


def _numpy(arr: pa.Array, dtype: Any, fill: Any) -> np.ndarray:
    if arr.null_count:
        arr = pc.fill_null(arr, pa.scalar(fill, arr.type))
    return np.asarray(arr.to_numpy(zero_copy_only=False), dtype=dtype)


def _timestamp_units(raw: np.ndarray, unit: str, precision: int) -> np.ndarray:
    """Java's ``Timestamp.getMillisecond()`` (precision <= 3) or ``toMicros()``."""
    per_micro = {"s": None, "ms": None, "us": 1, "ns": 1000}
    if precision <= 3:
        per_milli = {"s": None, "ms": 1, "us": 1000, "ns": 1_000_000}[unit]
        return raw * 1000 if per_milli is None else np.floor_divide(raw, per_milli)
    factor = per_micro[unit]
    if factor is None:
        return raw * (1_000_000 if unit == "s" else 1000)
    return np.floor_divide(raw, factor)


def java_literals(value: Any, t: DataType) -> list[Any] | None:
    """The keys a predicate literal stands for in an index of a ``t`` column: one, two for a
    floating-point zero (SQL equates -0.0 and 0.0, Java's indexes do not), or None when
    the literal is not exactly a value of the type, as stored in the index (then no index
    may decide: a TIMESTAMP(3) index holds millis, ``< 00:00:00.0005`` includes 0 ms)."""
    root = t.root
    if value is None:
        return None
    try:
        if root in ("CHAR", "VARCHAR"):
            return [value.encode("utf-8")] if isinstance(value, str) else None
        if root in ("BINARY", "VARBINARY"):
            return [bytes(value)] if isinstance(value, (bytes, bytearray, memoryview)) else None
        if root == "BOOLEAN":
            return [value] if isinstance(value, bool) else None
        if root in ("TINYINT", "SMALLINT", "INT", "BIGINT"):
            number = _exact_int(value)
            bits = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64}[root]
            if number is None or not -(1 << (bits - 1)) <= number < 1 << (bits - 1):
                return None
            return [number]
        if root in ("FLOAT", "DOUBLE"):
            if isinstance(value, bool) or not isinstance(value, (int, float, Decimal, str)):
                return None
            number = float(value)
            if root == "FLOAT":
                narrowed = float(np.float32(number))
                if narrowed != number and not math.isnan(number):
                    return None
            if number == 0.0:
                return [0.0, -0.0]
            return [number]
        if root == "DATE":
            if isinstance(value, dt.datetime) or not isinstance(value, (dt.date, str)):
                return None
            day = dt.date.fromisoformat(value) if isinstance(value, str) else value
            return [(day - _EPOCH_DATE).days]
        if root == "TIME":
            if not isinstance(value, dt.time) or value.microsecond % 1000:
                return None
            millis = ((value.hour * 60 + value.minute) * 60 + value.second) * 1000
            return [millis + value.microsecond // 1000]
        if root in ("TIMESTAMP", "TIMESTAMP_LTZ"):
            if isinstance(value, str):
                value = dt.datetime.fromisoformat(value)
            if not isinstance(value, dt.datetime):
                return None
            if value.tzinfo is not None:
                value = value.astimezone(dt.UTC).replace(tzinfo=None)
            micros = (value - _EPOCH) // dt.timedelta(microseconds=1)
            if (t.precision or 0) > 3:
                return [micros]
            return None if micros % 1000 else [micros // 1000]
        if root == "DECIMAL":
            if isinstance(value, bool) or not isinstance(value, (int, Decimal, str, float)):
                return None
            number = Decimal(str(value)) if isinstance(value, float) else Decimal(value)
            unscaled = number.scaleb(t.scale or 0)
            if unscaled != unscaled.to_integral_value():
                return None
            return [int(unscaled)]
    except (ValueError, TypeError, ArithmeticError, InvalidOperation, OverflowError):
        return None
    return None


def _exact_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, (float, Decimal)):
        if isinstance(value, float) and not math.isfinite(value):
            return None
        return int(value) if value == int(value) else None
    if isinstance(value, str):
        return int(value.strip())
    return None


def float_bits(values: np.ndarray) -> np.ndarray:
    """``Float.floatToIntBits`` / ``Double.doubleToLongBits`` (one NaN) as int64."""
    if values.dtype == np.float32:
        bits = values.view(np.int32).astype(np.int64)
        return np.where(np.isnan(values), 0x7FC00000, bits)
    bits = values.view(np.int64)
    return np.where(np.isnan(values), 0x7FF8000000000000, bits)


def float_bits_of(value: float, single: bool) -> int:
    """``floatToIntBits`` / ``doubleToLongBits`` of one value."""
    if math.isnan(value):
        return 0x7FC00000 if single else 0x7FF8000000000000
    if single:
        return int(struct.unpack(">i", struct.pack(">f", value))[0])
    return int(struct.unpack(">q", struct.pack(">d", value))[0])


def validation_error(column: str, t: DataType, index_type: str, reason: str) -> SchemaError:
    """``SchemaValidation.validateFileIndex``'s message for an index a type cannot have."""
    return SchemaError(
        f"Column '{column}' with type '{t}' is not supported by '{index_type}' index. {reason}"
    )

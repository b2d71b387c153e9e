"""Paimon's BinaryRow bytes (paimon-format.md §4): partitions, keys and stats in manifests.

Byte equality matters (Java compares partitions and hashes buckets on these bytes), so the
layout follows Java's writers exactly, including the reserved variable-part chunk of a null
non-compact decimal or timestamp. A ``RowCodec`` is compiled once per tuple of types: one
``struct`` format for the fixed part plus small per-field converters.
"""

from __future__ import annotations

import datetime as dt
import struct
from collections import Counter
from collections.abc import Callable, Sequence
from decimal import ROUND_HALF_UP, Context, Decimal, InvalidOperation
from functools import lru_cache
from typing import Any, NamedTuple

from paimon_core.exceptions import InvalidArgument, MetadataFormatError
from paimon_core.format.types import DataType

HEADER_BITS = 8
MAX_INLINE = 7
_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_ORDINAL = dt.date(1970, 1, 1).toordinal()
_UTC = dt.UTC
_CTX = Context(prec=100, rounding=ROUND_HALF_UP)
_QUANTUM = [Decimal(1).scaleb(-s) for s in range(39)]
_POW10 = [10**p for p in range(39)]
_PAD = [bytes((8 - r) & 7) for r in range(8)]
_ARITY = struct.Struct(">i")
_INT = struct.Struct("<i")
_LONG = struct.Struct("<q")

_PLAIN, _CONV, _VAR = 0, 1, 2

Writer = Callable[[Any, int], tuple[int, bytes]]
Reader = Callable[[Any, bytes, int], Any]


class _Spec(NamedTuple):
    """How one type sits in a row slot and in an array element."""

    row_code: str
    elem_code: str
    kind: int
    fn: Any  # _CONV: value -> slot value; _VAR: (value, cursor) -> (slot, chunk)
    reserve: bytes | None  # var chunk Java keeps for a null (non-compact decimal/timestamp)
    read: Reader | None  # slot value -> Python value; None keeps the struct value


def null_bits_width(arity: int) -> int:
    """Bytes of the header + null bit set of a row with ``arity`` fields."""
    return ((arity + 63 + HEADER_BITS) // 64) * 8


# ------------------------------------------------------------------ value <-> slot helpers


def _var_bytes(data: bytes, cursor: int) -> tuple[int, bytes]:
    n = len(data)
    if n <= MAX_INLINE:
        return int.from_bytes(data, "little") | ((0x80 | n) << 56), b""
    return (cursor << 32) | n, data + _PAD[n & 7]


def _as_bytes(value: Any) -> bytes:
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    if hasattr(value, "to_data"):  # pypaimon-style Blob values
        return value.to_data()
    raise TypeError(f"expected bytes, got {type(value).__name__}")


def _write_string(value: Any, cursor: int) -> tuple[int, bytes]:
    if type(value) is str:
        return _var_bytes(value.encode(), cursor)
    if isinstance(value, str):
        return _var_bytes(str(value).encode(), cursor)
    return _var_bytes(_as_bytes(value), cursor)


def _write_binary(value: Any, cursor: int) -> tuple[int, bytes]:
    return _var_bytes(value if type(value) is bytes else _as_bytes(value), cursor)


def _slot_bytes(slot: int, data: bytes, base: int) -> bytes:
    if slot >> 63:
        return slot.to_bytes(8, "little")[: (slot >> 56) & 0x7F]
    start = base + (slot >> 32)
    return data[start : start + (slot & 0xFFFFFFFF)]


def _read_string(slot: int, data: bytes, base: int) -> str:
    return _slot_bytes(slot, data, base).decode("utf-8", "replace")


def _read_binary(slot: int, data: bytes, base: int) -> bytes:
    return bytes(_slot_bytes(slot, data, base))


def _date(value: Any) -> int:
    return value if type(value) is int else value.toordinal() - _EPOCH_ORDINAL


def _read_date(days: int, data: bytes, base: int) -> dt.date:
    return dt.date.fromordinal(days + _EPOCH_ORDINAL)


def _time(value: Any) -> int:
    if type(value) is int:
        return value
    return (
        value.hour * 3_600_000
        + value.minute * 60_000
        + value.second * 1000
        + value.microsecond // 1000
    )


def _read_time(millis: int, data: bytes, base: int) -> dt.time:
    seconds, ms = divmod(millis, 1000)
    return dt.time(seconds // 3600, seconds // 60 % 60, seconds % 60, ms * 1000)


def _naive(value: dt.datetime, ltz: bool) -> dt.datetime:
    if value.tzinfo is None:
        return value
    return value.astimezone(_UTC).replace(tzinfo=None) if ltz else value.replace(tzinfo=None)


def _millis(value: dt.datetime) -> int:
    d = value - _EPOCH
    return d.days * 86_400_000 + d.seconds * 1000 + d.microseconds // 1000


def _timestamp_millis(ltz: bool) -> Callable[[Any], int]:
    def convert(value: Any) -> int:
        return _millis(value if value.tzinfo is None else _naive(value, ltz))

    return convert


def _timestamp_var(ltz: bool) -> Writer:
    def write(value: Any, cursor: int) -> tuple[int, bytes]:
        if value.tzinfo is not None:
            value = _naive(value, ltz)
        d = value - _EPOCH
        millis = d.days * 86_400_000 + d.seconds * 1000 + d.microseconds // 1000
        nanos = (d.microseconds % 1000) * 1000 + getattr(value, "nanosecond", 0)
        return (cursor << 32) | nanos, _LONG.pack(millis)

    return write


def _read_timestamp_millis(millis: int, data: bytes, base: int) -> dt.datetime:
    return _EPOCH + dt.timedelta(0, 0, 0, millis)


def _read_timestamp_var(slot: int, data: bytes, base: int) -> dt.datetime:
    (millis,) = _LONG.unpack_from(data, base + (slot >> 32))
    return _EPOCH + dt.timedelta(0, 0, (slot & 0xFFFFFFFF) // 1000, millis)


def unscaled_decimal(value: Any, precision: int, scale: int) -> int:
    """The unscaled integer Java stores for ``value`` as DECIMAL(precision, scale) (HALF_UP).

    Raises:
        InvalidArgument: the value does not fit the precision (Java would store null).
    """
    try:
        if type(value) is int:
            unscaled = value * _POW10[scale]
        else:
            d = value if isinstance(value, Decimal) else Decimal(str(value))
            unscaled = int(d.quantize(_QUANTUM[scale], context=_CTX).scaleb(scale, _CTX))
    except (InvalidOperation, ValueError, TypeError) as e:
        raise InvalidArgument(f"Cannot store {value!r} as DECIMAL({precision}, {scale})") from e
    if not -_POW10[precision] < unscaled < _POW10[precision]:
        raise InvalidArgument(f"{value!r} does not fit DECIMAL({precision}, {scale})")
    return unscaled


def _decimal_bytes(unscaled: int) -> bytes:
    """``BigInteger.toByteArray()``: minimal big-endian two's complement (-128 is one byte)."""
    bits = unscaled.bit_length() if unscaled >= 0 else (~unscaled).bit_length()
    return unscaled.to_bytes(bits // 8 + 1, "big", signed=True)


def _decimal_compact(precision: int, scale: int) -> Callable[[Any], int]:
    def convert(value: Any) -> int:
        return unscaled_decimal(value, precision, scale)

    return convert


def _decimal_var(precision: int, scale: int) -> Writer:
    def write(value: Any, cursor: int) -> tuple[int, bytes]:
        data = _decimal_bytes(unscaled_decimal(value, precision, scale))
        return (cursor << 32) | len(data), data + bytes(16 - len(data))

    return write


def _read_decimal_compact(scale: int) -> Reader:
    def read(unscaled: int, data: bytes, base: int) -> Decimal:
        return Decimal(unscaled).scaleb(-scale, _CTX)

    return read


def _read_decimal_var(scale: int) -> Reader:
    def read(slot: int, data: bytes, base: int) -> Decimal:
        raw = _slot_bytes(slot, data, base)
        return Decimal(int.from_bytes(raw, "big", signed=True)).scaleb(-scale, _CTX)

    return read


def _write_variant(value: Any, cursor: int) -> tuple[int, bytes]:
    if isinstance(value, dict):
        body, metadata = value["value"], value["metadata"]
    elif isinstance(value, tuple):
        body, metadata = value
    else:
        body, metadata = value.value(), value.metadata()
    data = _INT.pack(len(body)) + bytes(body) + bytes(metadata)
    return (cursor << 32) | len(data), data + _PAD[len(data) & 7]


def _read_variant(slot: int, data: bytes, base: int) -> tuple[bytes, bytes]:
    raw = _slot_bytes(slot, data, base)
    (n,) = _INT.unpack_from(raw, 0)
    return bytes(raw[4 : 4 + n]), bytes(raw[4 + n :])


def _nested_writer(encode: Callable[[Any], bytes]) -> Writer:
    def write(value: Any, cursor: int) -> tuple[int, bytes]:
        data = encode(value)
        return (cursor << 32) | len(data), data + _PAD[len(data) & 7]

    return write


def _nested_reader(decode: Callable[[bytes, int], Any]) -> Reader:
    def read(slot: int, data: bytes, base: int) -> Any:
        return decode(data, base + (slot >> 32))

    return read


# -------------------------------------------------------------------------- type specs


def _spec(t: DataType) -> _Spec:
    root = t.root
    if root == "BOOLEAN":
        return _Spec("?7x", "?", _PLAIN, None, None, None)
    if root == "TINYINT":
        return _Spec("b7x", "b", _PLAIN, None, None, None)
    if root == "SMALLINT":
        return _Spec("h6x", "h", _PLAIN, None, None, None)
    if root == "INT":
        return _Spec("i4x", "i", _PLAIN, None, None, None)
    if root == "BIGINT":
        return _Spec("q", "q", _PLAIN, None, None, None)
    if root == "FLOAT":
        # Java stores floatToRawIntBits / doubleToRawLongBits: NaN payloads and -0.0 stay.
        return _Spec("f4x", "f", _PLAIN, None, None, None)
    if root == "DOUBLE":
        return _Spec("d", "d", _PLAIN, None, None, None)
    if root == "DATE":
        return _Spec("i4x", "i", _CONV, _date, None, _read_date)
    if root == "TIME":
        return _Spec("i4x", "i", _CONV, _time, None, _read_time)
    if root in ("CHAR", "VARCHAR"):
        return _Spec("Q", "Q", _VAR, _write_string, None, _read_string)
    if root in ("BINARY", "VARBINARY", "BLOB"):
        return _Spec("Q", "Q", _VAR, _write_binary, None, _read_binary)
    if root == "DECIMAL":
        p, s = t.precision, t.scale
        assert p is not None and s is not None
        if p <= 18:
            return _Spec("q", "q", _CONV, _decimal_compact(p, s), None, _read_decimal_compact(s))
        return _Spec("Q", "Q", _VAR, _decimal_var(p, s), bytes(16), _read_decimal_var(s))
    if root in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        ltz = root == "TIMESTAMP_LTZ"
        assert t.precision is not None
        if t.precision <= 3:
            return _Spec("q", "q", _CONV, _timestamp_millis(ltz), None, _read_timestamp_millis)
        return _Spec("Q", "Q", _VAR, _timestamp_var(ltz), bytes(8), _read_timestamp_var)
    if root == "VARIANT":
        return _Spec("Q", "Q", _VAR, _write_variant, None, _read_variant)
    if root == "ROW":
        inner = row_codec([f.type for f in t.fields or ()])
        names = [f.name for f in t.fields or ()]

        def encode_nested(value: Any) -> bytes:
            if isinstance(value, dict):
                value = [value.get(name) for name in names]
            return inner.encode(value)

        return _Spec(
            "Q", "Q", _VAR, _nested_writer(encode_nested), None, _nested_reader(inner.decode)
        )
    if root == "ARRAY":
        array = array_codec(t.element)  # type: ignore[arg-type]
        return _Spec(
            "Q", "Q", _VAR, _nested_writer(array.encode), None, _nested_reader(array.decode)
        )
    if root in ("MAP", "MULTISET"):
        codec = _MapCodec(t)
        return _Spec(
            "Q", "Q", _VAR, _nested_writer(codec.encode), None, _nested_reader(codec.decode)
        )
    raise InvalidArgument(f"BinaryRow does not support {t}")


# ------------------------------------------------------------------------------- codecs


class RowCodec:
    """Encoder/decoder of BinaryRows of one list of types (build with ``row_codec``)."""

    __slots__ = (
        "_kinds",
        "_readers",
        "_struct",
        "arity",
        "exact_size",
        "fixed_size",
        "types",
        "width",
    )

    def __init__(self, types: tuple[DataType, ...]) -> None:
        specs = [_spec(t) for t in types]
        self.types = types
        self.arity = len(types)
        self.width = null_bits_width(self.arity)
        self.fixed_size = self.width + 8 * self.arity
        self._struct = struct.Struct("<" + f"{self.width}s" + "".join(s.row_code for s in specs))
        self._kinds = [(s.kind, s.fn, s.reserve) for s in specs]
        self._readers = [(i, s.read) for i, s in enumerate(specs) if s.read is not None]
        # Bytes of every row of these types when none has a variable part (fixed-size fields
        # only): a row is then exactly its fixed part, whoever wrote it.
        fixed = all(s.kind != _VAR and s.reserve is None for s in specs)
        self.exact_size: int | None = self.fixed_size if fixed else None

    def encode(self, values: Sequence[Any], row_kind: int = 0) -> bytes:
        """The row bytes (no arity prefix); ``row_kind`` is the header byte (0 is +I)."""
        if len(values) != self.arity:
            raise InvalidArgument(f"Row {values!r} has {len(values)} values, expected {self.arity}")
        slots = list(values)
        nulls = 0
        chunks: list[bytes] = []
        cursor = self.fixed_size
        try:
            for i, (kind, fn, reserve) in enumerate(self._kinds):
                value = slots[i]
                if value is None:
                    nulls |= 1 << i
                    if reserve is None:
                        slots[i] = 0
                    else:
                        slots[i] = cursor << 32
                        chunks.append(reserve)
                        cursor += len(reserve)
                elif kind == _CONV:
                    slots[i] = fn(value)
                elif kind == _VAR:
                    slots[i], chunk = fn(value, cursor)
                    if chunk:
                        chunks.append(chunk)
                        cursor += len(chunk)
            header = ((nulls << HEADER_BITS) | row_kind).to_bytes(self.width, "little")
            fixed = self._struct.pack(header, *slots)
        except (struct.error, OverflowError, TypeError, AttributeError, ValueError) as e:
            raise InvalidArgument(
                f"Cannot encode {list(values)!r} as ({', '.join(map(str, self.types))}): {e}"
            ) from e
        return fixed + b"".join(chunks) if chunks else fixed

    def serialize(self, values: Sequence[Any]) -> bytes:
        """The manifest form: 4-byte big-endian arity, then the row."""
        return _ARITY.pack(self.arity) + self.encode(values)

    def decode(self, data: bytes, base: int = 0) -> tuple[Any, ...]:
        """Values of the row starting at ``data[base]`` (None for nulls)."""
        if type(data) is not bytes:
            data = bytes(data)
        try:
            raw = self._struct.unpack_from(data, base)
        except struct.error as e:
            raise MetadataFormatError(
                f"BinaryRow of {len(data) - base} bytes is too short for {self.arity} fields"
            ) from e
        nulls = int.from_bytes(raw[0], "little") >> HEADER_BITS
        values = list(raw[1:])
        try:
            for i, read in self._readers:
                if not (nulls >> i) & 1:
                    values[i] = read(values[i], data, base)
        except (struct.error, ValueError, OverflowError, IndexError) as e:
            raise MetadataFormatError(f"Corrupt BinaryRow field: {e}") from e
        if nulls:
            for i in range(self.arity):
                if (nulls >> i) & 1:
                    values[i] = None
        return tuple(values)

    def deserialize(self, data: bytes) -> tuple[Any, ...]:
        """Values of a prefixed row as found in manifests."""
        if len(data) < 4:
            raise MetadataFormatError(f"Serialized BinaryRow of {len(data)} bytes has no arity")
        (arity,) = _ARITY.unpack_from(data, 0)
        if arity != self.arity:
            raise MetadataFormatError(f"BinaryRow has arity {arity}, expected {self.arity}")
        return self.decode(data, 4)


class _ArrayCodec:
    """Java's BinaryArray: element count, null bits, fixed-width elements, variable part."""

    __slots__ = ("_elem", "_fn", "_kind", "_read", "_size")

    def __init__(self, element: DataType) -> None:
        spec = _spec(element)
        self._elem = struct.Struct("<" + spec.elem_code)
        self._size = self._elem.size
        self._kind, self._fn, self._read = spec.kind, spec.fn, spec.read

    def encode(self, values: Any) -> bytes:
        values = list(values)
        n = len(values)
        header = 4 + ((n + 31) // 32) * 4
        fixed = (header + self._size * n + 7) & ~7
        buf = bytearray(fixed)
        _INT.pack_into(buf, 0, n)
        chunks: list[bytes] = []
        cursor = fixed
        kind, fn, pack_into, size = self._kind, self._fn, self._elem.pack_into, self._size
        for i, value in enumerate(values):
            if value is None:
                buf[4 + (i >> 3)] |= 1 << (i & 7)
                continue
            if kind == _CONV:
                value = fn(value)
            elif kind == _VAR:
                value, chunk = fn(value, cursor)
                if chunk:
                    chunks.append(chunk)
                    cursor += len(chunk)
            pack_into(buf, header + i * size, value)
        return bytes(buf) + b"".join(chunks)

    def decode(self, data: bytes, base: int) -> list[Any]:
        (n,) = _INT.unpack_from(data, base)
        header = 4 + ((n + 31) // 32) * 4
        unpack_from, size, read = self._elem.unpack_from, self._size, self._read
        out: list[Any] = []
        for i in range(n):
            if data[base + 4 + (i >> 3)] >> (i & 7) & 1:
                out.append(None)
                continue
            (value,) = unpack_from(data, base + header + i * size)
            out.append(value if read is None else read(value, data, base))
        return out


class _MapCodec:
    """Java's BinaryMap: 4-byte size of the key array, the key array, the value array."""

    __slots__ = ("_keys", "_multiset", "_values")

    def __init__(self, t: DataType) -> None:
        self._multiset = t.root == "MULTISET"
        if self._multiset:
            self._keys = array_codec(t.element)  # type: ignore[arg-type]
            self._values = array_codec(DataType("INT", False))
        else:
            self._keys = array_codec(t.key)  # type: ignore[arg-type]
            self._values = array_codec(t.value)  # type: ignore[arg-type]

    def encode(self, value: Any) -> bytes:
        if self._multiset and not isinstance(value, dict):
            value = Counter(value)
        pairs = list(value.items()) if isinstance(value, dict) else list(value)
        keys = self._keys.encode([k for k, _ in pairs])
        return _INT.pack(len(keys)) + keys + self._values.encode([v for _, v in pairs])

    def decode(self, data: bytes, base: int) -> Any:
        (key_size,) = _INT.unpack_from(data, base)
        keys = self._keys.decode(data, base + 4)
        values = self._values.decode(data, base + 4 + key_size)
        try:
            return dict(zip(keys, values))
        except TypeError:  # unhashable keys (lists, dicts): keep the pairs
            return list(zip(keys, values))


@lru_cache(maxsize=4096)
def _row_codec(types: tuple[DataType, ...]) -> RowCodec:
    return RowCodec(types)


def row_codec(types: Sequence[DataType]) -> RowCodec:
    """The (cached) codec of rows of ``types``; hold on to it in hot loops."""
    return _row_codec(tuple(types))


@lru_cache(maxsize=1024)
def array_codec(element: DataType) -> _ArrayCodec:
    """The (cached) codec of BinaryArrays of ``element``."""
    return _ArrayCodec(element)


# ---------------------------------------------------------------------------- functions


def encode_row(values: Sequence[Any], types: Sequence[DataType], row_kind: int = 0) -> bytes:
    """The BinaryRow bytes of ``values`` (no arity prefix): what bucket hashing uses.

    Raises:
        InvalidArgument: a value does not fit its type.
    """
    return _row_codec(tuple(types)).encode(values, row_kind)


def serialize_row(values: Sequence[Any], types: Sequence[DataType]) -> bytes:
    """``SerializationUtils.serializeBinaryRow``: 4-byte big-endian arity, then the row."""
    return _row_codec(tuple(types)).serialize(values)


def decode_row(row: bytes, types: Sequence[DataType]) -> tuple[Any, ...]:
    """Values of a BinaryRow without prefix."""
    return _row_codec(tuple(types)).decode(row)


def deserialize_row(data: bytes, types: Sequence[DataType]) -> tuple[Any, ...]:
    """Values of a prefixed BinaryRow (``_PARTITION``, ``_MIN_KEY``, stats).

    Raises:
        MetadataFormatError: the bytes are not a row of ``types``.
    """
    return _row_codec(tuple(types)).deserialize(data)


def row_arity(data: bytes) -> int:
    """The arity prefix of a serialized row."""
    return _ARITY.unpack_from(data, 0)[0]


EMPTY_ROW: bytes = serialize_row((), ())
"""The serialized row of arity 0 (12 bytes): ``_MIN_KEY``/``_MAX_KEY`` of append files."""

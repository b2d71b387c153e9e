"""VARIANT values in data files: the binary encoding, and Parquet's shredded form of it.

A VARIANT column holds two binaries per row, ``value`` and ``metadata``, in the encoding of
Parquet's Variant spec (``VariantEncoding.md``): the metadata is a dictionary of object keys,
the value a tree of primitives, objects (keys as dictionary ids) and arrays. Paimon (Java)
writes it to Parquet as a group of two required binaries ``value`` and ``metadata``, with no
logical type annotation (``ParquetSchemaConverter``), and refuses it in ORC and Avro.

Shredding (``variant.shreddingSchema``, Parquet's ``VariantShredding.md``) stores parts of the
values as typed Parquet columns: the group becomes ``metadata``, ``value`` and ``typed_value``,
the typed value of an object holding one ``(value, typed_value)`` group per shredded key. The
table's option is a Paimon ROW type in JSON naming, per VARIANT column, the shape to shred;
``shred`` splits values as Java's ``VariantShreddingWriter.castShredded`` does and ``rebuild``
puts a file's shredded columns back together as Java's ``ShreddingUtils.rebuild`` (objects
rebuilt get a fresh metadata dictionary; values are equal, not byte-identical).
"""

from __future__ import annotations

import datetime as dt
import functools
import itertools
import json
import struct
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_FLOOR, Decimal, localcontext
from typing import Any

import pyarrow as pa

from paimon_core.exceptions import InvalidArgument, SchemaError
from paimon_core.format.types import (
    PARQUET_FIELD_ID,
    VARIANT,
    DataType,
    from_arrow_type,
    parse_data_type,
    to_arrow_type,
)

VALUE = "value"
METADATA = "metadata"
TYPED_VALUE = "typed_value"
SHREDDING_SCHEMA_OPTION = "variant.shreddingSchema"
SHREDDING_SCHEMA_FALLBACK = "parquet.variant.shreddingSchema"

_PRIMITIVE, _SHORT_STRING, _OBJECT, _ARRAY = 0, 1, 2, 3
_NULL, _TRUE, _FALSE, _INT1, _INT2, _INT4, _INT8, _DOUBLE = 0, 1, 2, 3, 4, 5, 6, 7
_DECIMAL4, _DECIMAL8, _DECIMAL16, _DATE, _TIMESTAMP, _TIMESTAMP_NTZ = 8, 9, 10, 11, 12, 13
_FLOAT, _BINARY, _STRING = 14, 15, 16
_FIXED_SIZES = {
    _NULL: 0, _TRUE: 0, _FALSE: 0, _INT1: 1, _INT2: 2, _INT4: 4, _INT8: 8, _DOUBLE: 8,
    _DECIMAL4: 5, _DECIMAL8: 9, _DECIMAL16: 17, _DATE: 4, _TIMESTAMP: 8, _TIMESTAMP_NTZ: 8,
    _FLOAT: 4, 17: 8, 18: 8, 19: 8, 20: 16,
}  # fmt: skip
"""Primitive type id -> bytes after the header (BINARY and STRING: a 4-byte length first)."""
_MAX_SHORT_STRING = 63
_EPOCH = dt.date(1970, 1, 1)
_EPOCH_TIME = dt.datetime(1970, 1, 1)


class MalformedVariant(InvalidArgument):
    """A variant (or its shredded columns) that breaks the encoding."""


# ----------------------------------------------------------------------------- decoding


def _uint(buf: bytes, pos: int, size: int) -> int:
    if pos + size > len(buf):
        raise MalformedVariant("MALFORMED_VARIANT: a variant ends early")
    return int.from_bytes(buf[pos : pos + size], "little")


@functools.lru_cache(maxsize=256)
def metadata_keys(metadata: bytes) -> tuple[str, ...]:
    """The key dictionary of a variant's ``metadata`` (cached: rows of one shape share it)."""
    if not metadata or metadata[0] & 0x0F != 1:
        raise MalformedVariant("MALFORMED_VARIANT: unsupported variant metadata version")
    size = ((metadata[0] >> 6) & 0x03) + 1
    count = _uint(metadata, 1, size)
    offsets = [_uint(metadata, 1 + size * (i + 1), size) for i in range(count + 1)]
    start = 1 + size * (count + 2)
    return tuple(
        metadata[start + offsets[i] : start + offsets[i + 1]].decode() for i in range(count)
    )


def _object_layout(value: bytes, pos: int) -> tuple[int, list[int], list[int], int]:
    """(count, key ids, value offsets, data start) of the object at ``pos``."""
    header = value[pos] >> 2
    offset_size = (header & 0x03) + 1
    id_size = ((header >> 2) & 0x03) + 1
    count_size = 4 if header & 0x10 else 1
    count = _uint(value, pos + 1, count_size)
    ids_at = pos + 1 + count_size
    ids = [_uint(value, ids_at + i * id_size, id_size) for i in range(count)]
    offsets_at = ids_at + count * id_size
    offsets = [_uint(value, offsets_at + i * offset_size, offset_size) for i in range(count + 1)]
    return count, ids, offsets, offsets_at + (count + 1) * offset_size


def _array_layout(value: bytes, pos: int) -> tuple[int, list[int], int]:
    """(count, element offsets, data start) of the array at ``pos``."""
    header = value[pos] >> 2
    offset_size = (header & 0x03) + 1
    count_size = 4 if header & 0x04 else 1
    count = _uint(value, pos + 1, count_size)
    offsets_at = pos + 1 + count_size
    offsets = [_uint(value, offsets_at + i * offset_size, offset_size) for i in range(count + 1)]
    return count, offsets, offsets_at + (count + 1) * offset_size


def value_size(value: bytes, pos: int = 0) -> int:
    """The byte size of the value at ``pos``."""
    if pos >= len(value):
        raise MalformedVariant("MALFORMED_VARIANT: a variant ends early")
    basic, header = value[pos] & 0x03, value[pos] >> 2
    if basic == _SHORT_STRING:
        return 1 + header
    if basic == _OBJECT:
        _, _, offsets, start = _object_layout(value, pos)
        return start - pos + offsets[-1]
    if basic == _ARRAY:
        _, offsets, start = _array_layout(value, pos)
        return start - pos + offsets[-1]
    if header in (_BINARY, _STRING):
        return 5 + _uint(value, pos + 1, 4)
    if header not in _FIXED_SIZES:
        raise MalformedVariant(f"MALFORMED_VARIANT: unknown primitive type {header}")
    return 1 + _FIXED_SIZES[header]


def _object_fields(value: bytes, pos: int, keys: Sequence[str]) -> Iterator[tuple[str, int, int]]:
    """(key, dictionary id, value position) of each field of the object at ``pos``."""
    count, ids, offsets, start = _object_layout(value, pos)
    for i in range(count):
        if ids[i] >= len(keys):
            raise MalformedVariant("MALFORMED_VARIANT: an object key is not in the metadata")
        yield keys[ids[i]], ids[i], start + offsets[i]


def _array_elements(value: bytes, pos: int) -> Iterator[int]:
    count, offsets, start = _array_layout(value, pos)
    for i in range(count):
        yield start + offsets[i]


def _scalar(value: bytes, pos: int) -> tuple[int, Any]:
    """(primitive type id, Python value) of the primitive or short string at ``pos``
    (integers of every width have id ``_INT8``; decimals ``_DECIMAL16``)."""
    basic, header = value[pos] & 0x03, value[pos] >> 2
    if basic == _SHORT_STRING:
        return _STRING, value[pos + 1 : pos + 1 + header].decode()
    body = pos + 1
    if header in (_INT1, _INT2, _INT4, _INT8):
        width = _FIXED_SIZES[header]
        return _INT8, int.from_bytes(value[body : body + width], "little", signed=True)
    if header in (_DECIMAL4, _DECIMAL8, _DECIMAL16):
        width = _FIXED_SIZES[header] - 1
        scale = value[body]
        unscaled = int.from_bytes(value[body + 1 : body + 1 + width], "little", signed=True)
        return _DECIMAL16, Decimal(unscaled).scaleb(-scale)
    if header in (_BINARY, _STRING):
        size = _uint(value, body, 4)
        raw = value[body + 4 : body + 4 + size]
        return (_STRING, raw.decode()) if header == _STRING else (_BINARY, bytes(raw))
    if header == _DOUBLE:
        return _DOUBLE, struct.unpack_from("<d", value, body)[0]
    if header == _FLOAT:
        return _FLOAT, struct.unpack_from("<f", value, body)[0]
    if header in (_TRUE, _FALSE):
        return header, header == _TRUE
    if header in (_DATE,):
        return _DATE, int.from_bytes(value[body : body + 4], "little", signed=True)
    if header in (_TIMESTAMP, _TIMESTAMP_NTZ):
        return header, int.from_bytes(value[body : body + 8], "little", signed=True)
    return header, None


# ----------------------------------------------------------------------------- encoding


def _int_size(n: int) -> int:
    return 1 if n <= 0xFF else 2 if n <= 0xFFFF else 3 if n <= 0xFFFFFF else 4


def _le(n: int, size: int) -> bytes:
    return n.to_bytes(size, "little")


def encode_object(fields: Sequence[tuple[str, int, bytes]]) -> bytes:
    """An object of ``(key, dictionary id, value bytes)`` fields: the values in the order
    given, the ids and offsets sorted by key (as Java's ``finishWritingObject``)."""
    starts = []
    offset = 0
    for f in fields:
        starts.append(offset)
        offset += len(f[2])
    data = b"".join(f[2] for f in fields)
    order = sorted(range(len(fields)), key=lambda i: fields[i][0])
    for a, b in itertools.pairwise(order):
        if fields[a][0] == fields[b][0]:
            raise MalformedVariant(f"VARIANT_DUPLICATE_KEY: object key {fields[a][0]!r} twice")
    count = len(fields)
    large = count > 0xFF
    id_size = _int_size(max((f[1] for f in fields), default=0))
    offset_size = _int_size(len(data))
    header = ((int(large) << 4) | ((id_size - 1) << 2) | (offset_size - 1)) << 2 | _OBJECT
    out = bytearray([header])
    out += _le(count, 4 if large else 1)
    for i in order:
        out += _le(fields[i][1], id_size)
    for i in order:
        out += _le(starts[i], offset_size)
    out += _le(len(data), offset_size)
    return bytes(out + data)


def encode_array(elements: Sequence[bytes]) -> bytes:
    """An array of encoded elements."""
    data = b"".join(elements)
    count = len(elements)
    large = count > 0xFF
    offset_size = _int_size(len(data))
    header = ((int(large) << 2) | (offset_size - 1)) << 2 | _ARRAY
    out = bytearray([header])
    out += _le(count, 4 if large else 1)
    offset = 0
    for e in elements:
        out += _le(offset, offset_size)
        offset += len(e)
    out += _le(offset, offset_size)
    return bytes(out + data)


def _primitive(type_id: int, body: bytes = b"") -> bytes:
    return bytes([type_id << 2 | _PRIMITIVE]) + body


def encode_long(n: int) -> bytes:
    """The narrowest integer encoding of ``n`` (Java's ``appendLong``)."""
    for type_id, size in ((_INT1, 1), (_INT2, 2), (_INT4, 4), (_INT8, 8)):
        if -(1 << (8 * size - 1)) <= n < 1 << (8 * size - 1):
            return _primitive(type_id, n.to_bytes(size, "little", signed=True))
    raise MalformedVariant(f"Integer {n} does not fit a variant BIGINT")


def encode_string(s: str) -> bytes:
    raw = s.encode()
    if len(raw) <= _MAX_SHORT_STRING:
        return bytes([len(raw) << 2 | _SHORT_STRING]) + raw
    return _primitive(_STRING, _le(len(raw), 4) + raw)


def encode_decimal(d: Decimal) -> bytes:
    """Java's ``appendDecimal``: the narrowest of DECIMAL4/8/16 holding its precision."""
    exponent = d.as_tuple().exponent
    assert isinstance(exponent, int)
    scale = max(-exponent, 0)
    unscaled = int(d.scaleb(scale))
    precision = max(len(str(abs(unscaled))), scale, 1)
    for type_id, size, most in ((_DECIMAL4, 4, 9), (_DECIMAL8, 8, 18), (_DECIMAL16, 16, 38)):
        if precision <= most:
            return _primitive(
                type_id, bytes([scale]) + unscaled.to_bytes(size, "little", signed=True)
            )
    raise MalformedVariant(f"Decimal {d} has more than 38 digits")


def _encode_typed(shape: DataType, v: Any) -> bytes:
    """A shredded ``typed_value`` as a variant value (Java's ``rebuild`` of scalars)."""
    root = shape.root
    if root == "BOOLEAN":
        return _primitive(_TRUE if v else _FALSE)
    if shape.is_integer:
        return encode_long(int(v))
    if root == "DOUBLE":
        return _primitive(_DOUBLE, struct.pack("<d", v))
    if root == "FLOAT":
        return _primitive(_FLOAT, struct.pack("<f", v))
    if shape.is_string:
        return encode_string(v)
    if shape.is_binary:
        return _primitive(_BINARY, _le(len(v), 4) + bytes(v))
    if root == "DECIMAL":
        return encode_decimal(v)
    if root == "DATE":
        days = (v - _EPOCH).days if isinstance(v, dt.date) else int(v)
        return _primitive(_DATE, days.to_bytes(4, "little", signed=True))
    if shape.is_timestamp and (shape.precision or 0) <= 6:
        # Java's rebuild: TIMESTAMP_LTZ as a variant TIMESTAMP, TIMESTAMP as TIMESTAMP_NTZ.
        naive = v.astimezone(dt.UTC).replace(tzinfo=None) if v.tzinfo else v
        micros = (naive - _EPOCH_TIME) // dt.timedelta(microseconds=1)
        type_id = _TIMESTAMP if root == "TIMESTAMP_LTZ" else _TIMESTAMP_NTZ
        return _primitive(type_id, micros.to_bytes(8, "little", signed=True))
    raise MalformedVariant(f"Invalid variant shredding schema: typed_value of {shape}")


class _Keys:
    """The key dictionary of a variant being built."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}

    def add(self, key: str) -> int:
        return self.ids.setdefault(key, len(self.ids))

    def metadata(self) -> bytes:
        """Java's ``GenericVariantBuilder.result`` metadata: keys in insertion order, unsorted."""
        raw = [k.encode() for k in self.ids]
        total = sum(len(k) for k in raw)
        size = _int_size(max(total, len(raw)))
        out = bytearray([1 | (size - 1) << 6])
        out += _le(len(raw), size)
        offset = 0
        for k in raw:
            out += _le(offset, size)
            offset += len(k)
        out += _le(offset, size)
        return bytes(out + b"".join(raw))


def _copy(value: bytes, pos: int, keys: Sequence[str], into: _Keys) -> bytes:
    """The value at ``pos`` (keys from ``keys``) re-encoded with ``into``'s dictionary."""
    basic = value[pos] & 0x03
    if basic == _OBJECT:
        fields = [
            (key, into.add(key), _copy(value, at, keys, into))
            for key, _, at in _object_fields(value, pos, keys)
        ]
        return encode_object(fields)
    if basic == _ARRAY:
        return encode_array([_copy(value, at, keys, into) for at in _array_elements(value, pos)])
    return bytes(value[pos : pos + value_size(value, pos)])


# ------------------------------------------------------------------------- from JSON


class _Float(str):
    """A JSON number with a fraction or exponent, as its text."""


def from_json(text: str) -> tuple[bytes, bytes]:
    """``(value, metadata)`` of JSON text, as Spark's ``parse_json`` and Java's
    ``GenericVariant.fromJson`` build it: integers in the narrowest width, other numbers as
    decimals when they have no exponent and at most 38 digits, else doubles.

    Raises:
        MalformedVariant: not JSON, or an object with a key twice.
    """
    try:
        obj = json.loads(
            text, parse_float=_Float, parse_constant=_bad_constant, object_pairs_hook=_pairs
        )
    except ValueError as err:
        raise MalformedVariant(f"MALFORMED_RECORD_IN_PARSING: not JSON: {err}") from None
    keys = _Keys()
    value = _encode_python(obj, keys)
    return value, keys.metadata()


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise ValueError("an object has a key twice")
    return out


def _bad_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _encode_python(obj: Any, keys: _Keys) -> bytes:
    if obj is None:
        return _primitive(_NULL)
    if obj is True or obj is False:
        return _primitive(_TRUE if obj else _FALSE)
    if isinstance(obj, _Float):
        if "e" not in obj.lower():
            d = Decimal(obj)
            if len(d.as_tuple().digits) <= 38 and max(-int(d.as_tuple().exponent), 0) <= 38:
                return encode_decimal(d)
        return _primitive(_DOUBLE, struct.pack("<d", float(obj)))
    if isinstance(obj, int):
        if -(1 << 63) <= obj < 1 << 63:
            return encode_long(obj)
        if len(str(abs(obj))) <= 38:
            return encode_decimal(Decimal(obj))
        return _primitive(_DOUBLE, struct.pack("<d", float(obj)))
    if isinstance(obj, str):
        return encode_string(obj)
    if isinstance(obj, list):
        return encode_array([_encode_python(e, keys) for e in obj])
    fields = [(k, keys.add(k), _encode_python(v, keys)) for k, v in obj.items()]
    return encode_object(fields)


# --------------------------------------------------------------------------- to JSON


def to_json(value: bytes, metadata: bytes) -> str:
    """The variant as JSON text, as Spark's ``to_json`` for JSON's own types (for tests and
    messages: dates as ISO text, timestamps as their microseconds, binaries as base64)."""
    return json.dumps(_to_python(value, 0, metadata_keys(metadata)), separators=(",", ":"))


def _to_python(value: bytes, pos: int, keys: Sequence[str]) -> Any:
    basic = value[pos] & 0x03
    if basic == _OBJECT:
        return {k: _to_python(value, at, keys) for k, _, at in _object_fields(value, pos, keys)}
    if basic == _ARRAY:
        return [_to_python(value, at, keys) for at in _array_elements(value, pos)]
    type_id, v = _scalar(value, pos)
    if type_id == _BINARY:
        import base64

        return base64.b64encode(v).decode()
    if type_id == _DECIMAL16:
        return float(v) if v != v.to_integral_value() else int(v)
    if type_id == _DATE:
        return str(_EPOCH + dt.timedelta(days=v))
    return v


# ----------------------------------------------------------------------------- shredding


@dataclass(frozen=True, slots=True)
class Shape:
    """One level of a shredding schema (Java's ``VariantSchema``): a typed scalar, an object
    of shredded keys or an array of shredded elements; ``None`` everywhere is unshredded."""

    scalar: DataType | None = None
    fields: tuple[tuple[str, Shape], ...] | None = None
    element: Shape | None = None
    field_ids: tuple[int, ...] = ()
    """The Paimon field ids of ``fields`` (the shredding schema's), written as Parquet ids."""

    @property
    def typed(self) -> bool:
        return self.scalar is not None or self.fields is not None or self.element is not None


_SCALAR_ROOTS = frozenset(
    {"BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL", "VARCHAR"}
)  # fmt: skip
"""Types a value is shredded as: those both Java's ``variantShreddingSchema`` and its
``buildVariantSchema`` take (CHAR and VARBINARY fail the latter), but BINARY(n), whose fixed
length no variant binary is bound to (refused here)."""


def shape_of(t: DataType) -> Shape:
    """The shredding of a value of Paimon type ``t`` (a key of ``variant.shreddingSchema``).

    Raises:
        SchemaError: a type Java cannot shred (``Invalid variant shredding schema``).
    """
    if t.root == "VARIANT":
        return Shape()
    if t.root == "ROW":
        fields = t.fields or ()
        return Shape(
            fields=tuple((f.name, shape_of(f.type)) for f in fields),
            field_ids=tuple(f.id for f in fields),
        )
    if t.root == "ARRAY":
        assert t.element is not None
        return Shape(element=shape_of(t.element))
    if t.root in _SCALAR_ROOTS:
        return Shape(scalar=t)
    if t.root == "BINARY":
        raise SchemaError(f"Shredding VARIANT values as {t} is not supported (fixed length)")
    raise SchemaError(f"Invalid variant shredding schema: {t}")


def shredding_schema(options: Mapping[str, str]) -> dict[str, Shape] | None:
    """``variant.shreddingSchema`` (or its fallback key): VARIANT column name -> its shape.

    Raises:
        SchemaError: not the JSON of a ROW type, or a field Java cannot shred.
    """
    key = SHREDDING_SCHEMA_OPTION if SHREDDING_SCHEMA_OPTION in options else None
    key = key or (SHREDDING_SCHEMA_FALLBACK if SHREDDING_SCHEMA_FALLBACK in options else None)
    if key is None:
        return None
    text = options[key]
    try:
        row = parse_data_type(json.loads(text))
    except (ValueError, SchemaError) as err:
        raise SchemaError(f"'{key}' is not the JSON of a Paimon ROW type: {err}") from None
    if row.root != "ROW":
        raise SchemaError(f"'{key}' must be the JSON of a ROW type, got {row}")
    return {f.name: shape_of(f.type) for f in row.fields or ()}


_ID_BASE = 2147483647 // 4
_DEPTH_LIMIT = 1 << 10
"""Java's ``SpecialFields`` ids of array elements: base + array field id * limit + depth."""


def _with_id(f: pa.Field, field_id: int) -> pa.Field:
    return f.with_metadata({PARQUET_FIELD_ID: str(field_id).encode()})


def physical_type(
    shape: Shape, top: bool = True, object_field: bool = False, depth: int = 0
) -> pa.DataType:
    """The Arrow struct a shredded VARIANT is written as (Java's ``variantShreddingSchema``):
    ``metadata`` first at the top level, then ``value`` and ``typed_value``, each with the
    Parquet field id Java gives it (Java's reader needs an id on every shredded field)."""
    out = [_with_id(pa.field(METADATA, pa.binary(), nullable=False), 0)] if top else []
    typed_id = len(out) + 1
    inner = depth + 1
    if shape.scalar is not None:
        typed: pa.DataType | None = to_arrow_type(shape.scalar)
    elif shape.fields is not None:
        ids = shape.field_ids or tuple(range(len(shape.fields)))
        typed = pa.struct(
            [
                _with_id(
                    pa.field(name, physical_type(s, False, True, inner + 1), nullable=False), i
                )
                for (name, s), i in zip(shape.fields, ids, strict=True)
            ]
        )
    elif shape.element is not None:
        element = pa.field("element", physical_type(shape.element, False, False, inner + 1))
        typed = pa.list_(_with_id(element, _ID_BASE + typed_id * _DEPTH_LIMIT + inner + 1))
    else:
        typed = None
    # Unshredded: ``value`` is required, except in an object (null there is a missing key).
    value = pa.field(VALUE, pa.binary(), nullable=typed is not None or object_field)
    out.append(_with_id(value, len(out)))
    if typed is not None:
        out.append(_with_id(pa.field(TYPED_VALUE, typed, nullable=True), typed_id))
    return pa.struct(out)


@functools.lru_cache(maxsize=256)
def _field_map(shape: Shape) -> dict[str, Shape]:
    return dict(shape.fields or ())


def _shred(value: bytes, pos: int, keys: Sequence[str], shape: Shape) -> dict[str, Any]:
    """Java's ``VariantShreddingWriter.castShredded`` of one value (its keys stay the ids of
    the row's own metadata, which the shredded row keeps)."""
    basic = value[pos] & 0x03
    if shape.element is not None and basic == _ARRAY:
        elements = [_shred(value, at, keys, shape.element) for at in _array_elements(value, pos)]
        return {VALUE: None, TYPED_VALUE: elements}
    if shape.fields is not None and basic == _OBJECT:
        wanted = _field_map(shape)
        typed: dict[str, Any] = {name: {VALUE: None, TYPED_VALUE: None} for name in wanted}
        rest = []
        for key, key_id, at in _object_fields(value, pos, keys):
            if key in wanted:
                typed[key] = _shred(value, at, keys, wanted[key])
            else:
                rest.append((key, key_id, bytes(value[at : at + value_size(value, at)])))
        return {VALUE: encode_object(rest) if rest else None, TYPED_VALUE: typed}
    raw = bytes(value[pos : pos + value_size(value, pos)])
    if shape.scalar is not None and basic in (_PRIMITIVE, _SHORT_STRING):
        cast = _typed_scalar(value, pos, shape.scalar)
        if cast is not None:
            return {VALUE: None, TYPED_VALUE: cast}
    if shape.typed:
        return {VALUE: raw, TYPED_VALUE: None}
    return {VALUE: raw}


def _typed_scalar(value: bytes, pos: int, shape: DataType) -> Any:
    """Java's ``tryTypedShred``: the value as ``shape`` if it is that type (integers of any
    width and decimals with an exact rescale included), else None."""
    type_id, v = _scalar(value, pos)
    root = shape.root
    if type_id == _INT8:
        if shape.is_integer:
            bits = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64}[root]
            return v if -(1 << (bits - 1)) <= v < 1 << (bits - 1) else None
        if root == "DECIMAL":
            return _rescaled(Decimal(v), shape)
        return None
    if type_id == _DECIMAL16:
        if root == "DECIMAL":
            return _rescaled(v, shape)
        if shape.is_integer and v == v.to_integral_value():
            bits = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64}[root]
            n = int(v)
            return n if -(1 << (bits - 1)) <= n < 1 << (bits - 1) else None
        return None
    matches = {
        _TRUE: "BOOLEAN", _FALSE: "BOOLEAN", _STRING: "VARCHAR", _DOUBLE: "DOUBLE",
        _FLOAT: "FLOAT", _BINARY: "VARBINARY", _DATE: "DATE",
    }  # fmt: skip
    want = {"CHAR": "VARCHAR", "BINARY": "VARBINARY"}.get(root, root)
    if matches.get(type_id) != want:
        return None
    if type_id == _DATE:
        return _EPOCH + dt.timedelta(days=v)
    return v


def _rescaled(d: Decimal, shape: DataType) -> Decimal | None:
    """Java's decimal shredding: ``d`` as DECIMAL(p, s) if that scale holds it exactly."""
    scale, precision = shape.scale or 0, shape.precision or 10
    with localcontext() as context:
        context.prec = 100
        scaled = d.quantize(Decimal(1).scaleb(-scale), rounding=ROUND_FLOOR)
    if scaled != d or len(scaled.as_tuple().digits) > precision:
        return None
    return scaled


def shred(column: pa.Array, shape: Shape) -> pa.Array:
    """A VARIANT column (``struct<value, metadata>``) in its shredded Parquet form."""
    rows: list[dict[str, Any] | None] = []
    for item in column.to_pylist():
        if item is None:
            rows.append(None)
            continue
        value, metadata = item[VALUE], item[METADATA]
        row = _shred(value, 0, metadata_keys(metadata), shape)
        row[METADATA] = metadata
        rows.append(row)
    return pa.array(rows, physical_type(shape))


def is_shredded(arrow_type: pa.DataType) -> bool:
    """Whether a file's VARIANT column is not plain ``value``/``metadata``."""
    names = [arrow_type.field(i).name for i in range(arrow_type.num_fields)]
    return names != [VALUE, METADATA]


def _file_shape(arrow_type: pa.DataType, top: bool) -> Shape:
    """The shape of a file's shredded group (Java's ``buildVariantSchema``).

    Raises:
        MalformedVariant: a group that is no shredding of a variant.
    """
    names = [arrow_type.field(i).name for i in range(arrow_type.num_fields)]
    extra = set(names) - {VALUE, METADATA, TYPED_VALUE}
    if extra or (METADATA in names) != top or not names:
        raise MalformedVariant(f"Invalid variant shredding schema: {arrow_type}")
    if TYPED_VALUE not in names:
        return Shape()
    typed = arrow_type.field(TYPED_VALUE).type
    if pa.types.is_struct(typed):
        return Shape(
            fields=tuple(
                (typed.field(i).name, _file_shape(typed.field(i).type, False))
                for i in range(typed.num_fields)
            )
        )
    if pa.types.is_list(typed) or pa.types.is_large_list(typed):
        return Shape(element=_file_shape(typed.value_type, False))
    return Shape(scalar=from_arrow_type(typed))


def _rebuild(row: Mapping[str, Any], keys: Sequence[str], shape: Shape, into: _Keys) -> bytes:
    typed = row.get(TYPED_VALUE)
    raw = row.get(VALUE)
    if typed is not None and shape.scalar is not None:
        return _encode_typed(shape.scalar, typed)
    if typed is not None and shape.element is not None:
        return encode_array([_rebuild(e, keys, shape.element, into) for e in typed])
    if typed is not None and shape.fields is not None:
        fields = []
        for name, field_shape in shape.fields:
            part = typed.get(name)
            if part is None:
                raise MalformedVariant("MALFORMED_VARIANT: a shredded object field is null")
            if part.get(TYPED_VALUE) is None and part.get(VALUE) is None:
                continue  # missing key
            fields.append((name, into.add(name), _rebuild(part, keys, field_shape, into)))
        if raw is not None:
            if raw[0] & 0x03 != _OBJECT:
                raise MalformedVariant("MALFORMED_VARIANT: residual value is not an object")
            for key, _, at in _object_fields(raw, 0, keys):
                if key in _field_map(shape):
                    raise MalformedVariant(f"MALFORMED_VARIANT: key {key!r} shredded twice")
                fields.append((key, into.add(key), _copy(raw, at, keys, into)))
        return encode_object(fields)
    if raw is not None:
        return _copy(raw, 0, keys, into)
    raise MalformedVariant("MALFORMED_VARIANT: a shredded variant has no value")


def rebuild(column: pa.Array | pa.ChunkedArray) -> pa.Array:
    """A file's VARIANT column, shredded or not, as ``struct<value, metadata>``.

    Raises:
        MalformedVariant: shredded columns that break Parquet's shredding spec.
    """
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    shape = _file_shape(column.type, True)
    rows: list[dict[str, bytes] | None] = []
    for item in column.to_pylist():
        if item is None:
            rows.append(None)
            continue
        metadata = item.get(METADATA)
        if metadata is None:
            raise MalformedVariant("MALFORMED_VARIANT: a shredded variant has no metadata")
        if not shape.typed:
            if item.get(VALUE) is None:
                raise MalformedVariant("MALFORMED_VARIANT: a variant has no value")
            rows.append({VALUE: item[VALUE], METADATA: metadata})
            continue
        into = _Keys()
        value = _rebuild(item, metadata_keys(metadata), shape, into)
        rows.append({VALUE: value, METADATA: into.metadata()})
    return pa.array(rows, to_arrow_type(VARIANT()))


def fill_null_children(column: pa.Array) -> pa.Array:
    """``column`` with the values of required children under a null struct set to empty
    binaries: pyarrow refuses to write a required child holding nulls even where its parent
    is null (what a VARIANT struct coming from Spark or a null literal has)."""
    if not pa.types.is_struct(column.type) or column.null_count == 0:
        return column
    children = []
    changed = False
    for i in range(column.type.num_fields):
        child = column.field(i)
        field = column.type.field(i)
        if not field.nullable and child.null_count and pa.types.is_binary(child.type):
            child = child.fill_null(b"")
            changed = True
        children.append(child)
    if not changed:
        return column
    return pa.StructArray.from_arrays(children, fields=list(column.type), mask=column.is_null())

"""Avro data files (``file.format`` = ``avro``), written and read with fastavro.

The schema is Java's ``AvroSchemaConverter``: the row is a record named
``org.apache.paimon.avro.generated.record`` (a nested ROW ``<record>_<field>``), wrapped, like
every nullable type, in the union ``["null", <type>]`` (nullable fields default to null).
BOOLEAN boolean; TINYINT, SMALLINT and INT int; BIGINT long; FLOAT float; DOUBLE double;
CHAR/VARCHAR string; BINARY/VARBINARY bytes; DECIMAL bytes with the ``decimal`` logical type
(big-endian two's complement of the unscaled value, as ``BigInteger.toByteArray``); DATE int
``date``; TIME int ``time-millis`` (precision <= 3 only); TIMESTAMP(p <= 3) long
``timestamp-millis`` and p <= 6 ``timestamp-micros``; TIMESTAMP_LTZ the same with
``local-timestamp-*`` (Java's choice: the two look swapped, but that is what it writes and
reads); ARRAY array; a MAP with CHAR/VARCHAR keys an Avro map, any other MAP (and MULTISET,
element -> nullable INT count) an array of ``{key, value}`` records marked with the ``map``
logical type. Fields are matched by name when read, as Java does.

Compression: ``zstd`` is Avro's ``zstandard`` codec at ``file.compression.zstd-level``; other
values are Avro codec names (``null``, ``deflate``, ``snappy``, ``bzip2``, ``xz``) unless the
table sets ``avro.codec``, as Java's ``AvroFileFormat.createCodecFactory``.
"""

from __future__ import annotations

import datetime as dt
import decimal
import io
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import fastavro
import pyarrow as pa

from paimon_core.format.types import DataType, to_arrow_type

if TYPE_CHECKING:
    from paimon_core.format.types import DataField

LABEL = "Avro"
RECORD_NAME = "org.apache.paimon.avro.generated.record"
COMPRESSIONS = {
    "zstd": "zstandard",
    "zstandard": "zstandard",
    "snappy": "snappy",
    "deflate": "deflate",
    "bzip2": "bzip2",
    "xz": "xz",
    "null": "null",
    "none": "null",
}
"""``file.compression`` (or ``avro.codec``) -> the Avro codec; ``none`` is this writer's
alias of ``null`` (Java only knows ``null``)."""
READ_ERRORS: tuple[type[BaseException], ...] = (
    ValueError,
    EOFError,
    KeyError,
    IndexError,
    TypeError,
    OSError,
    pa.ArrowInvalid,
)
"""What fastavro raises on a torn or foreign file (bad magic, short blocks, bad unions...)."""
_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_DATE = dt.date(1970, 1, 1)
_UTC = dt.UTC
_UNITS = {"ms": dt.timedelta(milliseconds=1), "us": dt.timedelta(microseconds=1)}
_STRING_KEYS = ("CHAR", "VARCHAR")
_NESTED = ("ROW", "ARRAY", "VECTOR", "MAP", "MULTISET")


def unsupported_fields(fields: Sequence[DataField]) -> str | None:
    """Java's refusals (``AvroSchemaConverter``, ``SchemaValidation``), as one message."""
    for f in fields:
        problem = _unsupported(f.type)
        if problem:
            return f"Writing column '{f.name}' to Avro is not supported: {problem}"
    return None


def _unsupported(t: DataType) -> str | None:
    if t.root in ("TIMESTAMP", "TIMESTAMP_LTZ") and (t.precision or 0) > 6:
        return f"Avro has no {t.root} with precision {t.precision} (at most 6)"
    if t.root == "TIME" and (t.precision or 0) > 3:
        return f"Avro has no TIME with precision {t.precision} (at most 3)"
    if t.root == "VARIANT":
        return "Avro has no VARIANT type"
    for child in _children(t):
        problem = _unsupported(child)
        if problem:
            return problem
    return None


def _children(t: DataType) -> list[DataType]:
    out = [c for c in (t.element, t.key, t.value) if c is not None]
    return out + [f.type for f in t.fields or ()]


# ---------------------------------------------------------------------------- schema


def row_schema(fields: Sequence[DataField]) -> list[Any]:
    """The writer schema of a data file of ``fields``: a nullable top-level record, as Java's
    (a RowType is nullable, so the record sits in a union)."""
    return ["null", _record(fields, RECORD_NAME)]


def _record(fields: Sequence[DataField], name: str) -> dict[str, Any]:
    out = []
    for f in fields:
        field: dict[str, Any] = {"name": f.name, "type": avro_type(f.type, f"{name}_{f.name}")}
        if f.type.nullable:
            field["default"] = None
        out.append(field)
    return {"type": "record", "name": name, "fields": out}


def avro_type(t: DataType, row_name: str) -> Any:
    """Java's ``AvroSchemaConverter.convertToSchema`` of ``t``; ``row_name`` names records."""
    schema = _avro_type(t, row_name)
    return ["null", schema] if t.nullable else schema


def _avro_type(t: DataType, row_name: str) -> Any:
    root = t.root
    simple = _SIMPLE.get(root)
    if simple is not None:
        return simple
    if root in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        unit = "millis" if (t.precision or 0) <= 3 else "micros"
        local = "local-" if root == "TIMESTAMP_LTZ" else ""
        return {"type": "long", "logicalType": f"{local}timestamp-{unit}"}
    if root == "DECIMAL":
        return {
            "type": "bytes",
            "logicalType": "decimal",
            "precision": t.precision,
            "scale": t.scale,
        }
    if root == "ROW":
        return _record(t.fields or (), row_name)
    if root in ("MAP", "MULTISET"):
        key, value = _map_types(t)
        if key.root in _STRING_KEYS:
            return {"type": "map", "values": avro_type(value, row_name)}
        entry = {
            "type": "record",
            "name": row_name,
            "fields": [
                {"name": "key", "type": avro_type(key, f"{row_name}_key")},
                {"name": "value", "type": avro_type(value, f"{row_name}_value")},
            ],
        }
        if value.nullable:
            entry["fields"][1]["default"] = None  # type: ignore[index]
        return {"type": "array", "items": entry, "logicalType": "map"}
    if root in ("ARRAY", "VECTOR"):
        return {"type": "array", "items": avro_type(t.element, row_name)}  # type: ignore[arg-type]
    raise ValueError(f"Avro has no type for {t}")


_SIMPLE: dict[str, Any] = {
    "BOOLEAN": "boolean",
    "TINYINT": "int",
    "SMALLINT": "int",
    "INT": "int",
    "BIGINT": "long",
    "FLOAT": "float",
    "DOUBLE": "double",
    "CHAR": "string",
    "VARCHAR": "string",
    "BINARY": "bytes",
    "VARBINARY": "bytes",
    "BLOB": "bytes",
    "DATE": {"type": "int", "logicalType": "date"},
    "TIME": {"type": "int", "logicalType": "time-millis"},
}


def _map_types(t: DataType) -> tuple[DataType, DataType]:
    """(key, value) of a MAP; a MULTISET is ``element -> INT`` (nullable, as Java's)."""
    if t.root == "MAP":
        return t.key, t.value  # type: ignore[return-value]
    return t.element, DataType("INT", True)  # type: ignore[return-value]


# ---------------------------------------------------------------------------- write


def write(
    sink: pa.NativeFile, data: pa.Table, fields: Sequence[DataField], codec: str, level: int
) -> None:
    """``data`` as one Avro object container file (one block per ~64 KiB, as Java's)."""
    schema = fastavro.parse_schema(row_schema(fields))
    names = [f.name for f in fields]
    columns = [_column_to_avro(data.column(f.name), f.type) for f in fields]
    records = [dict(zip(names, row)) for row in zip(*columns)] if columns else []
    buffer = io.BytesIO()
    fastavro.writer(
        buffer,
        schema,
        records,
        codec=codec,
        codec_compression_level=level if codec == "zstandard" else None,
        sync_interval=64 * 1024,
    )
    sink.write(buffer.getbuffer())


def _column_to_avro(column: pa.ChunkedArray, t: DataType) -> list[Any]:
    root = t.root
    if root in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        return column.cast(pa.int64()).to_pylist()  # epoch millis or micros, as the unit
    if root in ("DATE", "TIME"):
        return column.cast(pa.int32()).to_pylist()  # days; milliseconds of the day
    values = column.to_pylist()
    if root == "DECIMAL" or root in _NESTED:
        convert = _to_avro(t)
        return [None if v is None else convert(v) for v in values]
    return values


def _to_avro(t: DataType) -> Callable[[Any], Any]:
    """A converter of one non-null Python value of ``t`` (Arrow's ``as_py``) to its datum."""
    root = t.root
    if root == "DECIMAL":
        return lambda v: decimal_bytes(v, t.scale or 0)
    if root in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        unit = _UNITS["ms" if (t.precision or 0) <= 3 else "us"]

        def timestamp(v: dt.datetime) -> int:
            if v.tzinfo is not None:
                v = v.astimezone(_UTC).replace(tzinfo=None)
            return (v - _EPOCH) // unit

        return timestamp
    if root == "DATE":
        return lambda v: (v - _EPOCH_DATE).days
    if root == "TIME":
        return lambda v: ((v.hour * 60 + v.minute) * 60 + v.second) * 1000 + v.microsecond // 1000
    if root == "ROW":
        parts = [(f.name, _nullable(_to_avro(f.type))) for f in t.fields or ()]
        return lambda v: {name: convert(v[name]) for name, convert in parts}
    if root in ("ARRAY", "VECTOR"):
        element = _nullable(_to_avro(t.element))  # type: ignore[arg-type]
        return lambda v: [element(e) for e in v]
    if root in ("MAP", "MULTISET"):
        key_type, value_type = _map_types(t)
        key, value = _nullable(_to_avro(key_type)), _nullable(_to_avro(value_type))
        if key_type.root in _STRING_KEYS:
            return lambda v: {key(k): value(x) for k, x in v}
        return lambda v: [{"key": key(k), "value": value(x)} for k, x in v]
    return _same


def _same(v: Any) -> Any:
    return v


def _nullable(convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
    if convert is _same:
        return _same
    return lambda v: None if v is None else convert(v)


def decimal_bytes(value: decimal.Decimal, scale: int) -> bytes:
    """The unscaled value's minimal big-endian two's complement (``BigInteger.toByteArray``)."""
    # From the digits: Decimal arithmetic would round to the context's 28 digits.
    sign, digits, exponent = value.as_tuple()
    unscaled = int("".join(map(str, digits)) or "0")
    shift = int(exponent) + scale
    unscaled = unscaled * 10**shift if shift >= 0 else unscaled // 10**-shift
    if sign:
        unscaled = -unscaled
    bits = (~unscaled if unscaled < 0 else unscaled).bit_length()
    return unscaled.to_bytes(bits // 8 + 1, "big", signed=True)


# ---------------------------------------------------------------------------- read


def read(source: pa.NativeFile, columns: Sequence[tuple[str, DataType]]) -> pa.Table:
    """The named columns in the Arrow types of their Paimon types (``types.to_arrow_type``)."""
    records = list(fastavro.reader(source))
    arrays = []
    for name, t in columns:
        values = [r[name] for r in records]
        if _has_map(t):
            convert = _from_avro(t)
            values = [None if v is None else convert(v) for v in values]
        arrays.append(pa.array(values, type=to_arrow_type(t)))
    return pa.Table.from_arrays(arrays, names=[name for name, _ in columns])


def _has_map(t: DataType) -> bool:
    return t.root in ("MAP", "MULTISET") or any(_has_map(c) for c in _children(t))


def _from_avro(t: DataType) -> Callable[[Any], Any]:
    """A converter of one non-null datum fastavro decoded to what ``pa.array`` takes: maps
    (Avro maps and ``{key, value}`` arrays alike) become lists of pairs."""
    if not _has_map(t):
        return _same
    root = t.root
    if root == "ROW":
        parts = [(f.name, _nullable(_from_avro(f.type))) for f in t.fields or ()]
        return lambda v: {name: convert(v[name]) for name, convert in parts}
    if root in ("ARRAY", "VECTOR"):
        element = _nullable(_from_avro(t.element))  # type: ignore[arg-type]
        return lambda v: [element(e) for e in v]
    key_type, value_type = _map_types(t)
    key, value = _nullable(_from_avro(key_type)), _nullable(_from_avro(value_type))
    if key_type.root in _STRING_KEYS:
        return lambda v: [(key(k), value(x)) for k, x in v.items()]
    return lambda v: [(key(e["key"]), value(e["value"])) for e in v]

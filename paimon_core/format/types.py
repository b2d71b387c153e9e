"""Paimon data types: the schema-JSON grammar of ``schema-N`` files and the mapping to Arrow.

One frozen ``DataType`` covers every type (``root`` says which): small, hashable (so it can key
codec caches) and exact about what Java writes, e.g. ``"DECIMAL(10, 2)"``, ``"STRING NOT NULL"``.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from paimon_core.exceptions import SchemaError

MAX_LENGTH = 2147483647
"""Length of STRING (``VARCHAR(MAX)``) and BYTES (``VARBINARY(MAX)``)."""
SYSTEM_FIELD_ID_START = MAX_LENGTH // 2
"""Ids from here up are system fields (``_KEY_*``, ``_SEQUENCE_NUMBER``): never user columns."""
PARQUET_FIELD_ID = b"PARQUET:field_id"

ATOMIC_ROOTS = frozenset(
    "BOOLEAN TINYINT SMALLINT INT BIGINT FLOAT DOUBLE DECIMAL CHAR VARCHAR BINARY VARBINARY DATE "
    "TIME TIMESTAMP TIMESTAMP_LTZ VARIANT BLOB".split()
)
NESTED_ROOTS = frozenset({"ARRAY", "MULTISET", "MAP", "ROW", "VECTOR"})
INTEGER_ROOTS = frozenset({"TINYINT", "SMALLINT", "INT", "BIGINT"})
VECTOR_ELEMENT_ROOTS = INTEGER_ROOTS | {"BOOLEAN", "FLOAT", "DOUBLE"}
_LENGTH_ROOTS = frozenset({"CHAR", "VARCHAR", "BINARY", "VARBINARY"})
_PRECISION_ROOTS = frozenset({"TIME", "TIMESTAMP", "TIMESTAMP_LTZ"})
# Java's defaults for a parameterless CHAR, VARCHAR, ..., TIMESTAMP_LTZ.
_DEFAULT_LENGTH = 1
_DEFAULT_PRECISION = {"TIME": 0, "TIMESTAMP": 6, "TIMESTAMP_LTZ": 6}


@dataclass(frozen=True, slots=True, repr=False)
class DataType:
    """A Paimon data type; ``str(t)`` is its SQL form (``ARRAY<INT NOT NULL>``)."""

    root: str
    nullable: bool = True
    length: int | None = None
    precision: int | None = None
    scale: int | None = None
    element: DataType | None = None
    key: DataType | None = None
    value: DataType | None = None
    fields: tuple[DataField, ...] | None = None

    def __post_init__(self) -> None:
        root = self.root
        if root in _LENGTH_ROOTS:
            if self.length is None:
                object.__setattr__(self, "length", _DEFAULT_LENGTH)
            elif not 1 <= self.length <= MAX_LENGTH:
                raise SchemaError(
                    f"{root} length must be between 1 and {MAX_LENGTH}: {self.length}"
                )
        elif root == "DECIMAL":
            precision = 10 if self.precision is None else self.precision
            scale = 0 if self.scale is None else self.scale
            if not 1 <= precision <= 38 or not 0 <= scale <= precision:
                raise SchemaError(
                    f"Invalid DECIMAL({precision}, {scale}): precision 1..38, scale 0..p"
                )
            object.__setattr__(self, "precision", precision)
            object.__setattr__(self, "scale", scale)
        elif root in _PRECISION_ROOTS:
            if self.precision is None:
                object.__setattr__(self, "precision", _DEFAULT_PRECISION[root])
            elif not 0 <= self.precision <= 9:
                raise SchemaError(f"{root} precision must be between 0 and 9: {self.precision}")
        elif root in ("ARRAY", "MULTISET", "VECTOR"):
            if self.element is None:
                raise SchemaError(f"{root} needs an element type")
            if root == "VECTOR":
                if self.element.root not in VECTOR_ELEMENT_ROOTS:
                    raise SchemaError(f"Invalid element type for vector: {self.element}")
                if self.length is None or self.length < 1:
                    raise SchemaError(f"Vector length must be at least 1: {self.length}")
        elif root == "MAP":
            if self.key is None or self.value is None:
                raise SchemaError("MAP needs a key and a value type")
        elif root == "ROW":
            object.__setattr__(self, "fields", tuple(self.fields or ()))
        elif root not in ATOMIC_ROOTS:
            raise SchemaError(f"Unsupported data type: {root}")

    def copy(self, nullable: bool) -> DataType:
        """The same type with the given nullability."""
        return self if nullable == self.nullable else dataclasses.replace(self, nullable=nullable)

    def __str__(self) -> str:
        return sql_string(self)

    def __repr__(self) -> str:
        return f"DataType({sql_string(self)!r})"

    @property
    def is_string(self) -> bool:
        return self.root in ("CHAR", "VARCHAR")

    @property
    def is_binary(self) -> bool:
        return self.root in ("BINARY", "VARBINARY")

    @property
    def is_integer(self) -> bool:
        return self.root in INTEGER_ROOTS

    @property
    def is_numeric(self) -> bool:
        return self.root in INTEGER_ROOTS or self.root in ("FLOAT", "DOUBLE", "DECIMAL")

    @property
    def is_timestamp(self) -> bool:
        return self.root in ("TIMESTAMP", "TIMESTAMP_LTZ")

    @property
    def is_nested(self) -> bool:
        return self.root in NESTED_ROOTS

    @property
    def is_compact(self) -> bool:
        """Whether BinaryRow keeps the value in its 8-byte slot (no variable part needed)."""
        if self.root == "DECIMAL":
            return self.precision <= 18  # type: ignore[operator]
        if self.is_timestamp:
            return self.precision <= 3  # type: ignore[operator]
        return self.root not in _VAR_ROOTS


_VAR_ROOTS = _LENGTH_ROOTS | NESTED_ROOTS | {"VARIANT", "BLOB"}


@dataclass(frozen=True, slots=True)
class DataField:
    """A named column (or nested ROW field) with its Paimon field id."""

    id: int
    name: str
    type: DataType
    description: str | None = None
    default_value: str | None = None

    def __str__(self) -> str:
        text = f"{_quote_identifier(self.name)} {self.type}"
        if self.description is not None:
            text += " '" + self.description.replace("'", "''") + "'"
        return text


# ------------------------------------------------------------------------------ constructors


def BOOLEAN(nullable: bool = True) -> DataType:
    return DataType("BOOLEAN", nullable)


def TINYINT(nullable: bool = True) -> DataType:
    return DataType("TINYINT", nullable)


def SMALLINT(nullable: bool = True) -> DataType:
    return DataType("SMALLINT", nullable)


def INT(nullable: bool = True) -> DataType:
    return DataType("INT", nullable)


def BIGINT(nullable: bool = True) -> DataType:
    return DataType("BIGINT", nullable)


def FLOAT(nullable: bool = True) -> DataType:
    return DataType("FLOAT", nullable)


def DOUBLE(nullable: bool = True) -> DataType:
    return DataType("DOUBLE", nullable)


def DECIMAL(precision: int = 10, scale: int = 0, nullable: bool = True) -> DataType:
    return DataType("DECIMAL", nullable, precision=precision, scale=scale)


def CHAR(length: int = 1, nullable: bool = True) -> DataType:
    return DataType("CHAR", nullable, length=length)


def VARCHAR(length: int = 1, nullable: bool = True) -> DataType:
    return DataType("VARCHAR", nullable, length=length)


def STRING(nullable: bool = True) -> DataType:
    return DataType("VARCHAR", nullable, length=MAX_LENGTH)


def BINARY(length: int = 1, nullable: bool = True) -> DataType:
    return DataType("BINARY", nullable, length=length)


def VARBINARY(length: int = 1, nullable: bool = True) -> DataType:
    return DataType("VARBINARY", nullable, length=length)


def BYTES(nullable: bool = True) -> DataType:
    return DataType("VARBINARY", nullable, length=MAX_LENGTH)


def DATE(nullable: bool = True) -> DataType:
    return DataType("DATE", nullable)


def TIME(precision: int = 0, nullable: bool = True) -> DataType:
    return DataType("TIME", nullable, precision=precision)


def TIMESTAMP(precision: int = 6, nullable: bool = True) -> DataType:
    return DataType("TIMESTAMP", nullable, precision=precision)


def TIMESTAMP_LTZ(precision: int = 6, nullable: bool = True) -> DataType:
    return DataType("TIMESTAMP_LTZ", nullable, precision=precision)


def VARIANT(nullable: bool = True) -> DataType:
    return DataType("VARIANT", nullable)


def BLOB(nullable: bool = True) -> DataType:
    return DataType("BLOB", nullable)


def ARRAY(element: DataType, nullable: bool = True) -> DataType:
    return DataType("ARRAY", nullable, element=element)


def MULTISET(element: DataType, nullable: bool = True) -> DataType:
    return DataType("MULTISET", nullable, element=element)


def MAP(key: DataType, value: DataType, nullable: bool = True) -> DataType:
    return DataType("MAP", nullable, key=key, value=value)


def ROW(fields: Iterable[DataField], nullable: bool = True) -> DataType:
    return DataType("ROW", nullable, fields=tuple(fields))


def VECTOR(element: DataType, length: int, nullable: bool = True) -> DataType:
    return DataType("VECTOR", nullable, length=length, element=element)


# ------------------------------------------------------------------------- serialization


def _quote_identifier(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _atomic_sql(t: DataType) -> str:
    root = t.root
    if root in ("CHAR", "BINARY"):
        return f"{root}({t.length})"
    if root == "VARCHAR":
        return "STRING" if t.length == MAX_LENGTH else f"VARCHAR({t.length})"
    if root == "VARBINARY":
        return "BYTES" if t.length == MAX_LENGTH else f"VARBINARY({t.length})"
    if root == "DECIMAL":
        return f"DECIMAL({t.precision}, {t.scale})"
    if root in ("TIME", "TIMESTAMP"):
        return f"{root}({t.precision})"
    if root == "TIMESTAMP_LTZ":
        return f"TIMESTAMP({t.precision}) WITH LOCAL TIME ZONE"
    return root


def sql_string(t: DataType) -> str:
    """Java's ``asSQLString()``: ``DECIMAL(10, 2) NOT NULL``, ``MAP<STRING, INT>``, ..."""
    root = t.root
    if root in ("ARRAY", "MULTISET"):
        text = f"{root}<{sql_string(t.element)}>"  # type: ignore[arg-type]
    elif root == "MAP":
        text = f"MAP<{sql_string(t.key)}, {sql_string(t.value)}>"  # type: ignore[arg-type]
    elif root == "ROW":
        text = "ROW<" + ", ".join(str(f) for f in t.fields or ()) + ">"
    elif root == "VECTOR":
        text = f"VECTOR<{sql_string(t.element)}, {t.length}>"  # type: ignore[arg-type]
    else:
        text = _atomic_sql(t)
    return text if t.nullable else text + " NOT NULL"


def data_type_to_json(t: DataType) -> str | dict[str, Any]:
    """The ``type`` value of a schema file: a string for atomic types, an object otherwise."""
    root = t.root
    if root not in NESTED_ROOTS:
        text = _atomic_sql(t)
        return text if t.nullable else text + " NOT NULL"
    out: dict[str, Any] = {"type": root if t.nullable else root + " NOT NULL"}
    if root == "MAP":
        out["key"] = data_type_to_json(t.key)  # type: ignore[arg-type]
        out["value"] = data_type_to_json(t.value)  # type: ignore[arg-type]
    elif root == "ROW":
        out["fields"] = [data_field_to_json(f) for f in t.fields or ()]
    else:
        out["element"] = data_type_to_json(t.element)  # type: ignore[arg-type]
        if root == "VECTOR":
            out["length"] = t.length
    return out


def data_field_to_json(f: DataField) -> dict[str, Any]:
    """A DataField object in Java's key order (``description``/``defaultValue`` only when set)."""
    out: dict[str, Any] = {"id": f.id, "name": f.name, "type": data_type_to_json(f.type)}
    if f.description is not None:
        out["description"] = f.description
    if f.default_value is not None:
        out["defaultValue"] = f.default_value
    return out


class FieldIds:
    """Java's ``AtomicInteger(-1)`` handing out ids to fields that have none."""

    __slots__ = ("value",)

    def __init__(self, start: int = -1) -> None:
        self.value = start

    def next(self) -> int:
        self.value += 1
        return self.value


def _text(node: Any) -> str:
    """Jackson's ``asText()`` of a scalar JSON node."""
    if isinstance(node, bool):
        return "true" if node else "false"
    if node is None:
        return "null"
    return str(node)


def data_field_from_json(obj: Any, ids: FieldIds | None = None) -> DataField:
    """Parse a DataField object; fields without ``id`` are numbered from ``ids``."""
    if not isinstance(obj, dict) or "name" not in obj or "type" not in obj:
        raise SchemaError(f"Cannot parse data field: {obj!r}")
    ids = ids if ids is not None else FieldIds()
    raw_id = obj.get("id")
    if raw_id is None:
        field_id = ids.next()
    else:
        try:
            field_id = int(raw_id)
        except (TypeError, ValueError):
            raise SchemaError(f"Invalid field id {raw_id!r} of field {obj['name']!r}") from None
    data_type = parse_data_type(obj["type"], ids)
    description = obj.get("description")
    default_value = obj.get("defaultValue")
    return DataField(
        field_id,
        _text(obj["name"]),
        data_type,
        None if description is None else _text(description),
        None if default_value is None else _text(default_value),
    )


def parse_data_type(obj: str | dict[str, Any], ids: FieldIds | None = None) -> DataType:
    """Parse a type as found in a schema file (Java's ``DataTypeJsonParser``).

    Raises:
        SchemaError: the text or object is not a Paimon type.
    """
    ids = ids if ids is not None else FieldIds()
    if isinstance(obj, str):
        return _TypeParser(obj, ids).parse()
    if isinstance(obj, dict) and isinstance(obj.get("type"), str):
        type_string: str = obj["type"]
        nullable = "NOT NULL" not in type_string
        try:
            if type_string.startswith("ARRAY"):
                return DataType("ARRAY", nullable, element=parse_data_type(obj["element"], ids))
            if type_string.startswith("VECTOR"):
                element = parse_data_type(obj["element"], ids)
                return DataType("VECTOR", nullable, length=int(obj["length"]), element=element)
            if type_string.startswith("MULTISET"):
                return DataType("MULTISET", nullable, element=parse_data_type(obj["element"], ids))
            if type_string.startswith("MAP"):
                key = parse_data_type(obj["key"], ids)
                return DataType("MAP", nullable, key=key, value=parse_data_type(obj["value"], ids))
            if type_string.startswith("ROW"):
                fields = tuple(data_field_from_json(f, ids) for f in obj["fields"])
                return DataType("ROW", nullable, fields=fields)
        except (KeyError, TypeError, ValueError):
            raise SchemaError(f"Cannot parse data type: {_compact(obj)}") from None
        return _TypeParser(type_string, ids).parse()
    raise SchemaError(f"Cannot parse data type: {_compact(obj)}")


def _compact(obj: Any) -> str:
    try:
        return json.dumps(obj, separators=(",", ":"))
    except (TypeError, ValueError):
        return repr(obj)


# -------------------------------------------------------------------- SQL type string parser

_TOKEN = re.compile(
    r"\s+|(?P<punct>[<>(),.])|(?P<int>\d+)|'(?P<str>(?:[^']|'')*)'|`(?P<ident>(?:[^`]|``)*)`"
    r"|(?P<word>[^\s<>(),.'`]+)"
)
_KEYWORDS = frozenset(
    "CHAR VARCHAR STRING BOOLEAN BINARY VARBINARY BYTES DECIMAL NUMERIC DEC TINYINT SMALLINT INT "
    "INTEGER BIGINT FLOAT DOUBLE PRECISION DATE TIME WITH WITHOUT LOCAL ZONE TIMESTAMP "
    "TIMESTAMP_LTZ INTERVAL YEAR MONTH DAY HOUR MINUTE SECOND TO ARRAY VECTOR MULTISET MAP ROW "
    "NULL RAW LEGACY VARIANT BLOB GEOMETRY GEOGRAPHY NOT".split()
)
_SIMPLE = {
    "BOOLEAN": "BOOLEAN",
    "TINYINT": "TINYINT",
    "SMALLINT": "SMALLINT",
    "INT": "INT",
    "INTEGER": "INT",
    "BIGINT": "BIGINT",
    "FLOAT": "FLOAT",
    "DATE": "DATE",
    "VARIANT": "VARIANT",
    "BLOB": "BLOB",
}


class _TypeParser:
    """Recursive descent over Java's token grammar, plus ``ARRAY<..>``/``MAP<..>``/``ROW<..>``."""

    def __init__(self, text: str, ids: FieldIds) -> None:
        self.text = text
        self.ids = ids
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None:
                self.fail(f"unexpected character {text[pos]!r}")
            pos = m.end()
            kind = m.lastgroup
            if kind is None:
                continue
            value = m.group(kind)
            if kind == "word":
                upper = value.upper()
                kind, value = ("kw", upper) if upper in _KEYWORDS else ("ident", value)
            elif kind == "str":
                value = value.replace("''", "'")
            elif kind == "ident":
                value = value.replace("``", "`")
            self.tokens.append((kind, value))
        self.pos = 0

    def fail(self, cause: str) -> None:
        raise SchemaError(f"Cannot parse data type '{self.text}': {cause}")

    def peek(self, offset: int = 0) -> tuple[str, str] | None:
        i = self.pos + offset
        return self.tokens[i] if i < len(self.tokens) else None

    def next(self, kind: str | None = None, value: str | None = None) -> str:
        token = self.peek()
        if token is None:
            self.fail("unexpected end")
        assert token is not None
        if (kind is not None and token[0] != kind) or (value is not None and token[1] != value):
            self.fail(f"expected {value or kind} but found '{token[1]}'")
        self.pos += 1
        return token[1]

    def expect(self, *values: str) -> None:
        for value in values:
            self.next(value=value)

    def at(self, *values: str) -> bool:
        for i, value in enumerate(values):
            token = self.peek(i)
            if token is None or token[1] != value or token[0] not in ("kw", "punct"):
                return False
        return True

    def parse(self) -> DataType:
        result = self.type_with_nullability()
        if self.peek() is not None:
            self.fail(f"unexpected token '{self.tokens[self.pos][1]}'")
        return result

    def nullability(self) -> bool:
        if self.at("NOT", "NULL"):
            self.pos += 2
            return False
        if self.at("NULL"):
            self.pos += 1
        return True

    def type_with_nullability(self) -> DataType:
        result = self.type_by_keyword()
        result = result.copy(self.nullability())
        # Suffix notation: "INT ARRAY", "STRING MULTISET".
        if self.at("ARRAY") or self.at("MULTISET"):
            root = self.next()
            return DataType(root, self.nullability(), element=result)
        return result

    def int_param(self) -> int | None:
        if not self.at("("):
            return None
        self.next("punct", "(")
        value = int(self.next("int"))
        self.next("punct", ")")
        return value

    def type_by_keyword(self) -> DataType:
        token = self.peek()
        if token is not None and token[0] != "kw":
            self.fail(f"unknown type '{token[1]}'")
        word = self.next("kw")
        if word in _SIMPLE:
            return DataType(_SIMPLE[word])
        if word in ("CHAR", "VARCHAR", "BINARY", "VARBINARY"):
            return DataType(word, length=self.int_param())
        if word == "STRING":
            return STRING()
        if word == "BYTES":
            return BYTES()
        if word in ("DECIMAL", "NUMERIC", "DEC"):
            precision, scale = 10, 0
            if self.at("("):
                self.next("punct", "(")
                precision = int(self.next("int"))
                if self.at(","):
                    self.next("punct", ",")
                    scale = int(self.next("int"))
                self.next("punct", ")")
            return DECIMAL(precision, scale)
        if word == "DOUBLE":
            if self.at("PRECISION"):
                self.pos += 1
            return DOUBLE()
        if word == "TIME":
            precision = self.int_param()
            if self.at("WITHOUT"):
                self.expect("WITHOUT", "TIME", "ZONE")
            return DataType("TIME", precision=precision)
        if word == "TIMESTAMP":
            precision = self.int_param()
            if self.at("WITHOUT"):
                self.expect("WITHOUT", "TIME", "ZONE")
            elif self.at("WITH", "LOCAL"):
                self.expect("WITH", "LOCAL", "TIME", "ZONE")
                return DataType("TIMESTAMP_LTZ", precision=precision)
            return DataType("TIMESTAMP", precision=precision)
        if word == "TIMESTAMP_LTZ":
            return DataType("TIMESTAMP_LTZ", precision=self.int_param())
        if word in ("ARRAY", "MULTISET"):
            self.next("punct", "<")
            element = self.type_with_nullability()
            self.next("punct", ">")
            return DataType(word, element=element)
        if word == "MAP":
            self.next("punct", "<")
            key = self.type_with_nullability()
            self.next("punct", ",")
            value = self.type_with_nullability()
            self.next("punct", ">")
            return MAP(key, value)
        if word == "VECTOR":
            self.next("punct", "<")
            element = self.type_with_nullability()
            self.next("punct", ",")
            length = int(self.next("int"))
            self.next("punct", ">")
            return VECTOR(element, length)
        if word == "ROW":
            return self.row()
        self.fail(f"unsupported type {word}")
        raise AssertionError  # unreachable

    def row(self) -> DataType:
        self.next("punct", "<")
        fields: list[DataField] = []
        while not self.at(">"):
            if fields:
                self.next("punct", ",")
            token = self.peek()
            if token is None or token[0] not in ("ident", "kw"):
                self.fail("expected a field name")
            assert token is not None
            self.pos += 1
            field_type = self.type_with_nullability()
            description = None
            if self.peek() is not None and self.peek()[0] == "str":  # type: ignore[index]
                description = self.next("str")
            fields.append(DataField(self.ids.next(), token[1], field_type, description))
        self.next("punct", ">")
        return ROW(fields)


# ------------------------------------------------------------------------------ field ids


def collect_field_ids(fields: Iterable[DataField], into: list[int] | None = None) -> list[int]:
    """Ids of ``fields`` and every nested ROW field below them, depth first."""
    out = [] if into is None else into
    for f in fields:
        out.append(f.id)
        _collect_type_ids(f.type, out)
    return out


def _collect_type_ids(t: DataType, out: list[int]) -> None:
    if t.root == "ROW":
        collect_field_ids(t.fields or (), out)
    elif t.root == "MAP":
        _collect_type_ids(t.key, out)  # type: ignore[arg-type]
        _collect_type_ids(t.value, out)  # type: ignore[arg-type]
    elif t.element is not None:
        _collect_type_ids(t.element, out)


def highest_field_id(fields: Iterable[DataField]) -> int:
    """Java's ``RowType.currentHighestFieldId``: max user id over all nesting levels, or -1."""
    ids = [i for i in collect_field_ids(fields) if i < SYSTEM_FIELD_ID_START]
    return max(ids, default=-1)


def reassign_field_ids(t: DataType, ids: FieldIds) -> DataType:
    """Java's ``ReassignFieldId``: nested ROW fields get fresh ids, a field's children first."""
    root = t.root
    if root == "ROW":
        new_fields = []
        for f in t.fields or ():
            nested = reassign_field_ids(f.type, ids)
            new_fields.append(DataField(ids.next(), f.name, nested, f.description, f.default_value))
        return DataType("ROW", t.nullable, fields=tuple(new_fields))
    if root == "MAP":
        key = reassign_field_ids(t.key, ids)  # type: ignore[arg-type]
        return dataclasses.replace(t, key=key, value=reassign_field_ids(t.value, ids))  # type: ignore[arg-type]
    if t.element is not None:
        return dataclasses.replace(t, element=reassign_field_ids(t.element, ids))
    return t


# --------------------------------------------------------------------------------- Arrow


def _timestamp_unit(precision: int) -> str:
    return "ms" if precision <= 3 else "us" if precision <= 6 else "ns"


def to_arrow_type(t: DataType) -> pa.DataType:
    """The Arrow type Paimon's Parquet files use for ``t`` (nullability lives on fields).

    Raises:
        SchemaError: the type has no Arrow mapping.
    """
    root = t.root
    if root in _ARROW_SIMPLE:
        return _ARROW_SIMPLE[root]
    if root == "DECIMAL":
        return pa.decimal128(t.precision, t.scale)  # type: ignore[arg-type]
    if root == "TIMESTAMP":
        return pa.timestamp(_timestamp_unit(t.precision))  # type: ignore[arg-type]
    if root == "TIMESTAMP_LTZ":
        return pa.timestamp(_timestamp_unit(t.precision), tz="UTC")  # type: ignore[arg-type]
    if root == "TIME":
        return pa.time32("ms") if t.precision <= 3 else pa.time64("us")  # type: ignore[operator]
    if root == "ARRAY":
        return pa.list_(_arrow_child("element", t.element))  # type: ignore[arg-type]
    if root == "VECTOR":
        return pa.list_(_arrow_child("element", t.element), t.length)  # type: ignore[arg-type]
    if root == "MAP":
        return pa.map_(
            pa.field("key", to_arrow_type(t.key), nullable=False),  # type: ignore[arg-type]
            _arrow_child("value", t.value),  # type: ignore[arg-type]
        )
    if root == "MULTISET":
        # Java stores a MULTISET as MAP<element, INT NOT NULL> (element -> count).
        return pa.map_(
            pa.field("key", to_arrow_type(t.element), nullable=False),  # type: ignore[arg-type]
            pa.field("value", pa.int32(), nullable=False),
        )
    if root == "ROW":
        return pa.struct([to_arrow_field(f) for f in t.fields or ()])
    if root == "VARIANT":
        return pa.struct(
            [
                pa.field("value", pa.binary(), nullable=False),
                pa.field("metadata", pa.binary(), nullable=False),
            ]
        )
    raise SchemaError(f"No Arrow type for {t}")


_ARROW_SIMPLE: dict[str, pa.DataType] = {
    "BOOLEAN": pa.bool_(),
    "TINYINT": pa.int8(),
    "SMALLINT": pa.int16(),
    "INT": pa.int32(),
    "BIGINT": pa.int64(),
    "FLOAT": pa.float32(),
    "DOUBLE": pa.float64(),
    "CHAR": pa.string(),
    "VARCHAR": pa.string(),
    "BINARY": pa.binary(),
    "VARBINARY": pa.binary(),
    "DATE": pa.date32(),
    "BLOB": pa.large_binary(),
}


def _arrow_child(name: str, t: DataType) -> pa.Field:
    return pa.field(name, to_arrow_type(t), nullable=t.nullable)


def to_arrow_field(f: DataField) -> pa.Field:
    """An Arrow field carrying the Paimon id as ``PARQUET:field_id``, as Java's Parquet files do."""
    return pa.field(
        f.name,
        to_arrow_type(f.type),
        nullable=f.type.nullable,
        metadata={PARQUET_FIELD_ID: str(f.id).encode()},
    )


def to_arrow_schema(fields: Sequence[DataField]) -> pa.Schema:
    """The Arrow schema of a row of ``fields`` (nullability and field ids included)."""
    return pa.schema([to_arrow_field(f) for f in fields])


_UNIT_PRECISION = {"s": 0, "ms": 3, "us": 6, "ns": 9}


def from_arrow_type(pa_type: pa.DataType, nullable: bool = True) -> DataType:
    """The Paimon type for an Arrow type (nested ROW fields are numbered from 0).

    Raises:
        SchemaError: Paimon has no lossless equivalent (unsigned 64-bit, null, unions, ...).
    """
    types = pa.types
    if types.is_boolean(pa_type):
        return DataType("BOOLEAN", nullable)
    if types.is_integer(pa_type):
        width = pa_type.bit_width
        if types.is_unsigned_integer(pa_type):
            width *= 2  # the next wider signed type holds every value
        root = {8: "TINYINT", 16: "SMALLINT", 32: "INT", 64: "BIGINT"}.get(width)
        if root is None:
            raise SchemaError(f"Unsupported Arrow type {pa_type}: no Paimon integer holds it")
        return DataType(root, nullable)
    if types.is_float16(pa_type) or types.is_float32(pa_type):
        return DataType("FLOAT", nullable)
    if types.is_float64(pa_type):
        return DataType("DOUBLE", nullable)
    if types.is_string(pa_type) or types.is_large_string(pa_type) or str(pa_type) == "string_view":
        return STRING(nullable)
    if types.is_fixed_size_binary(pa_type):
        return BINARY(pa_type.byte_width, nullable)
    if types.is_binary(pa_type) or types.is_large_binary(pa_type) or str(pa_type) == "binary_view":
        return BYTES(nullable)
    if types.is_decimal(pa_type):
        if pa_type.precision > 38:
            raise SchemaError(f"Unsupported Arrow type {pa_type}: DECIMAL precision is at most 38")
        return DECIMAL(pa_type.precision, pa_type.scale, nullable)
    if types.is_timestamp(pa_type):
        root = "TIMESTAMP" if pa_type.tz is None else "TIMESTAMP_LTZ"
        return DataType(root, nullable, precision=_UNIT_PRECISION[pa_type.unit])
    if types.is_date(pa_type):
        return DataType("DATE", nullable)
    if types.is_time(pa_type):
        return DataType("TIME", nullable, precision=_UNIT_PRECISION[pa_type.unit])
    if types.is_fixed_size_list(pa_type):
        element = from_arrow_type(pa_type.value_type, pa_type.value_field.nullable)
        if element.root in VECTOR_ELEMENT_ROOTS:
            return VECTOR(element, pa_type.list_size, nullable)
        return ARRAY(element, nullable)
    if types.is_list(pa_type) or types.is_large_list(pa_type):
        return ARRAY(from_arrow_type(pa_type.value_type, pa_type.value_field.nullable), nullable)
    if types.is_map(pa_type):
        key = from_arrow_type(pa_type.key_type, False)
        value = from_arrow_type(pa_type.item_type, pa_type.item_field.nullable)
        return MAP(key, value, nullable)
    if types.is_struct(pa_type):
        children = [pa_type.field(i) for i in range(pa_type.num_fields)]
        if _is_variant_struct(children):
            return DataType("VARIANT", nullable)
        return ROW(
            (
                DataField(i, c.name, from_arrow_type(c.type, c.nullable))
                for i, c in enumerate(children)
            ),
            nullable,
        )
    if types.is_dictionary(pa_type):
        return from_arrow_type(pa_type.value_type, nullable)
    raise SchemaError(f"Unsupported Arrow type {pa_type}")


def _is_variant_struct(children: list[pa.Field]) -> bool:
    return sorted(c.name for c in children) == ["metadata", "value"] and all(
        pa.types.is_binary(c.type) and not c.nullable for c in children
    )

"""Parquet data files: Paimon's default ``file.format``, written and read with pyarrow.

Columns carry Java's ``PARQUET:field_id`` (see ``types.to_arrow_field``); decimals of up to
18 digits are stored as INT32/INT64 as Java's writer does, because Java's reader fails on the
fixed-length binary pyarrow writes by default.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq

from paimon_core.format.variant import (
    MalformedVariant,
    Shape,
    fill_null_children,
    is_shredded,
    rebuild,
    shred,
)

if TYPE_CHECKING:
    from paimon_core.format.types import DataField, DataType

LABEL = "Parquet"
COMPRESSIONS = {
    "zstd": "zstd",
    "snappy": "snappy",
    "gzip": "gzip",
    "lz4": "lz4",
    "brotli": "brotli",
    "none": "none",
    "uncompressed": "none",
}
"""``file.compression`` value -> pyarrow's Parquet codec."""
READ_ERRORS: tuple[type[BaseException], ...] = (pa.ArrowInvalid, MalformedVariant)
"""What pyarrow raises for a file that is not (or no longer) valid Parquet, and what a
VARIANT column that breaks the encoding or its shredding raises."""

_OPTIONS = (
    {"store_decimal_as_integer": True}
    if "store_decimal_as_integer" in inspect.signature(pq.write_table).parameters
    else {}
)


def unsupported_fields(fields: Sequence[DataField]) -> str | None:
    """Why Paimon (Java) could not read ``fields`` from a Parquet file pyarrow writes."""
    nanos = [f.name for f in fields if _has_nanos(f.type)]
    if nanos:
        return (
            f"Writing TIMESTAMP columns with precision above 6 ({nanos}) to Parquet is not "
            "supported: Paimon (Java) reads them only as Parquet INT96, which pyarrow cannot "
            "write per column (use 'file.format' = 'orc')"
        )
    return None


def _has_nanos(t: DataType) -> bool:
    if t.root in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        return (t.precision or 0) > 6
    children = [c for c in (t.element, t.key, t.value) if c is not None]
    children += [f.type for f in t.fields or ()]
    return any(_has_nanos(c) for c in children)


def write(
    sink: pa.NativeFile,
    data: pa.Table,
    fields: Sequence[DataField],
    compression: str,
    level: int,
    footers: list[pq.FileMetaData] | None = None,
    shredding: Mapping[str, Shape] | None = None,
) -> None:
    """``data`` (already in the file's Arrow schema, field ids included) as one Parquet file;
    its footer is appended to ``footers``, whose column statistics the writer reuses.

    VARIANT columns named in ``shredding`` are written shredded to their shape."""
    data = _variant_columns(data, fields, shredding or {})
    pq.write_table(
        data,
        sink,
        compression=compression,
        compression_level=level if compression == "zstd" else None,
        metadata_collector=footers,
        **_OPTIONS,
    )


def _has_variant(t: DataType) -> bool:
    if t.root == "VARIANT":
        return True
    children = [c for c in (t.element, t.key, t.value) if c is not None]
    return any(_has_variant(c) for c in [*children, *(f.type for f in t.fields or ())])


def map_variants(column: pa.Array, t: DataType, fn: Callable[[pa.Array], pa.Array]) -> pa.Array:
    """``column`` (of Paimon type ``t``) with ``fn`` applied to every VARIANT inside it, at
    any depth (ROW fields, ARRAY elements, MAP values)."""
    if t.root == "VARIANT":
        return fn(column)
    if not _has_variant(t):
        return column
    mask = column.is_null() if column.null_count else None
    if t.root == "ROW" and pa.types.is_struct(column.type):
        fields = t.fields or ()
        children = [map_variants(column.field(f.name), f.type, fn) for f in fields]
        arrow_fields = [
            column.type.field(f.name).with_type(c.type)
            for f, c in zip(fields, children, strict=True)
        ]
        return pa.StructArray.from_arrays(children, fields=arrow_fields, mask=mask)
    if t.root in ("ARRAY", "VECTOR") and t.element is not None and pa.types.is_list(column.type):
        values = map_variants(column.values, t.element, fn)
        field = column.type.value_field.with_type(values.type)
        return pa.ListArray.from_arrays(column.offsets, values, pa.list_(field), mask=mask)
    if t.root == "MAP" and t.value is not None and pa.types.is_map(column.type):
        items = map_variants(column.items, t.value, fn)
        item_field = column.type.item_field.with_type(items.type)
        map_type = pa.map_(column.type.key_field, item_field)
        return pa.MapArray.from_arrays(column.offsets, column.keys, items, map_type, mask=mask)
    return column


def _variant_columns(
    data: pa.Table, fields: Sequence[DataField], shredding: Mapping[str, Shape]
) -> pa.Table:
    """``data`` with its VARIANT values as they are written: top-level columns shredded where
    asked, else with the required ``value``/``metadata`` of null rows filled (pyarrow refuses
    nulls in a required child even under a null parent)."""
    for i, f in enumerate(fields):
        if not _has_variant(f.type):
            continue
        column = data.column(i).combine_chunks()
        field = data.schema.field(i)
        shape = shredding.get(f.name) if f.type.root == "VARIANT" else None
        if shape is not None and shape.typed:
            column = shred(column, shape)
        else:
            column = map_variants(column, f.type, fill_null_children)
        data = data.set_column(i, field.with_type(column.type), column)
    return data


def read(source: pa.NativeFile, columns: Sequence[tuple[str, DataType]]) -> pa.Table:
    """The named columns as the file stores them (the caller casts types that differ);
    shredded VARIANT values, at any depth, come back as ``value``/``metadata``."""
    table = pq.ParquetFile(source).read(columns=[name for name, _ in columns])
    for name, t in columns:
        if not _has_variant(t) or name not in table.column_names:
            continue
        at = table.column_names.index(name)
        column = table.column(at).combine_chunks()
        rebuilt = map_variants(column, t, _plain_variant)
        if rebuilt is not column:
            table = table.set_column(at, table.schema.field(at).with_type(rebuilt.type), rebuilt)
    return table


def _plain_variant(column: pa.Array) -> pa.Array:
    if pa.types.is_struct(column.type) and is_shredded(column.type):
        return rebuild(column)
    return column

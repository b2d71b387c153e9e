"""ORC data files (``file.format`` = ``orc``), written and read with ``pyarrow.orc``.

Java Paimon (``OrcTypeUtil``, ``OrcFileFormat``, ``FieldWriterFactory``) maps the types as:
BOOLEAN boolean, TINYINT byte, SMALLINT short, INT and TIME int (TIME as milliseconds of the
day, whatever its precision), BIGINT long, FLOAT float, DOUBLE double, DECIMAL decimal(p, s),
CHAR(n) char(n), VARCHAR(n) varchar(n) (string when unbounded), BINARY/VARBINARY binary, DATE
date, TIMESTAMP timestamp, TIMESTAMP_LTZ timestamp with local time zone (an instant),
ARRAY list, MAP and MULTISET (element -> INT count) map, ROW struct. Column and struct field
names are the Paimon field names, and Java matches them *by name* when it reads (ORC's schema
evolution; the ``paimon.id`` type attributes it writes only serve variant shredding).

pyarrow writes the same layout except that CHAR and VARCHAR become ORC ``string`` (its ORC
writer has no char/varchar) and no ``paimon.id`` attributes: Java's reader converts a string
column to the char/varchar the table declares, and reads by name anyway. A CHAR column reads
back right-trimmed, as Java's ORC reader returns it (ORC's ``CharTreeReader`` trims the
padding its writer adds). Java's writer uses ``file.compression`` unless ``orc.compress`` is
set; pyarrow has no zstd level for ORC, so ``file.compression.zstd-level`` is not applied.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as orc

from paimon_core.format.types import to_arrow_type

if TYPE_CHECKING:
    from paimon_core.format.types import DataField, DataType

LABEL = "ORC"
COMPRESSIONS = {
    "none": "uncompressed",
    "zlib": "zlib",
    "snappy": "snappy",
    "lz4": "lz4",
    "zstd": "zstd",
}
"""ORC's ``CompressionKind`` names Java accepts -> pyarrow's ORC codec (LZO has no writer)."""
DEFAULT_DICTIONARY_KEY_THRESHOLD = 0.8
"""Paimon's ``orc.dictionary.key.threshold`` default (ORC's own is 0.8 too; pyarrow's is 0)."""
READ_ERRORS: tuple[type[BaseException], ...] = (pa.ArrowException, OSError)
"""What pyarrow raises for a file that is not (or no longer) valid ORC (postscript, streams)."""
_UNSUPPORTED = {"VARIANT", "VECTOR"}
_TRIM = " "

Leaf = Callable[[pa.Array, "DataType"], pa.Array | None]


def unsupported_fields(fields: Sequence[DataField]) -> str | None:
    """Why Java's ORC format would refuse ``fields`` (``OrcTypeUtil.convertToOrcType``)."""
    bad = [f.name for f in fields if _contains(f.type, lambda t: t.root in _UNSUPPORTED)]
    if bad:
        return f"Writing columns {bad} to ORC is not supported: ORC has no VARIANT or VECTOR type"
    return None


def write(
    sink: pa.NativeFile,
    data: pa.Table,
    fields: Sequence[DataField],
    compression: str,
    dictionary_key_threshold: float = DEFAULT_DICTIONARY_KEY_THRESHOLD,
) -> None:
    """``data`` as one ORC file, TIME columns as int milliseconds of the day (Java's layout)."""
    columns = [
        _map_leaves(data.column(f.name), f.type, _time_to_millis)
        if _contains(f.type, _is_time)
        else data.column(f.name)
        for f in fields
    ]
    table = pa.Table.from_arrays(columns, names=[f.name for f in fields])
    orc.write_table(
        table,
        sink,
        compression=compression,
        dictionary_key_size_threshold=dictionary_key_threshold,
    )


def read(source: pa.NativeFile, columns: Sequence[tuple[str, DataType]]) -> pa.Table:
    """The named columns in the Arrow types of their Paimon types (``types.to_arrow_type``)."""
    names = [name for name, _ in columns]
    raw = orc.ORCFile(source).read(columns=names)
    arrays = []
    for name, t in columns:
        column = raw.column(name)
        if _contains(t, _needs_fix):
            column = _map_leaves(column, t, _from_orc)
        target = to_arrow_type(t)
        if column.type != target:
            # Timestamps come as nanoseconds; list and map children have other names.
            column = pc.cast(column, target, safe=False)
        arrays.append(column)
    return pa.Table.from_arrays(arrays, names=names)


# ------------------------------------------------------------------------------ values


def _is_time(t: DataType) -> bool:
    return t.root == "TIME"


def _needs_fix(t: DataType) -> bool:
    return t.root in ("TIME", "CHAR")


def _time_to_millis(array: pa.Array, t: DataType) -> pa.Array | None:
    if t.root != "TIME":
        return None
    if pa.types.is_time64(array.type):  # TIME(4..9) in microseconds
        micros = array.cast(pa.int64())
        return pc.divide(micros, pa.scalar(1000, pa.int64())).cast(pa.int32())
    return array.cast(pa.int32())


def _from_orc(array: pa.Array, t: DataType) -> pa.Array | None:
    if t.root == "CHAR":
        return pc.utf8_rtrim(array, characters=_TRIM)
    if t.root != "TIME":
        return None
    millis = array.cast(pa.int32())  # TIME
    if (t.precision or 0) <= 3:
        return millis.cast(pa.time32("ms"))
    micros = pc.multiply(millis.cast(pa.int64()), pa.scalar(1000, pa.int64()))
    return micros.cast(pa.time64("us"))


def _contains(t: DataType, test: Callable[[DataType], bool]) -> bool:
    if test(t):
        return True
    children = [c for c in (t.element, t.key, t.value) if c is not None]
    children += [f.type for f in t.fields or ()]
    return any(_contains(c, test) for c in children)


def _map_leaves(
    column: pa.ChunkedArray | pa.Array, t: DataType, leaf: Leaf
) -> pa.ChunkedArray | pa.Array:
    """``column`` (of Paimon type ``t``) with ``leaf`` applied to every non-nested array in it;
    ``leaf`` returns None to keep an array. Lists, maps and structs are rebuilt around them."""
    if isinstance(column, pa.ChunkedArray):
        chunks = [_map_leaves(c, t, leaf) for c in column.chunks]
        return pa.chunked_array(chunks) if chunks else column
    if column.offset:
        # A slice (a rolled file's rows): children below are rebuilt from offsets into the
        # whole child arrays, so work on a compact copy.
        column = pa.concat_arrays([column])
    mask = column.is_null() if column.null_count else None
    if t.root == "ROW" and isinstance(column, pa.StructArray):
        fields = list(t.fields or ())
        children = [_map_leaves(column.field(i), f.type, leaf) for i, f in enumerate(fields)]
        names = [column.type.field(i).name for i in range(column.type.num_fields)]
        return pa.StructArray.from_arrays(children, names=names, mask=mask)
    if isinstance(column, pa.MapArray):
        key_type = t.key if t.root == "MAP" else t.element
        value_type = t.value if t.root == "MAP" else None
        keys = _map_leaves(column.keys, key_type, leaf)  # type: ignore[arg-type]
        items = column.items if value_type is None else _map_leaves(column.items, value_type, leaf)
        return pa.MapArray.from_arrays(column.offsets, keys, items, mask=mask)
    if isinstance(column, (pa.ListArray, pa.LargeListArray)) and t.element is not None:
        values = _map_leaves(column.values, t.element, leaf)
        return type(column).from_arrays(column.offsets, values, mask=mask)
    changed = leaf(column, t)
    return column if changed is None else changed

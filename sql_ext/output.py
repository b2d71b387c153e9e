"""Result formatting of the `paimon-sql` shell: an aligned table, TSV or JSON lines.

Values are the Python values `DataFrame.collect()` returns. The text formats (table, TSV)
render them as Spark's `df.show()` does: `NULL`, `true`/`false`, timestamps as
`2024-01-01 12:00:00.5` (fraction without trailing zeros), decimals with their scale, arrays
`[1, 2]`, maps `{k -> v}`, structs `{1, a}`, binary as hex bytes `[0A FF]`. Unlike `df.show()`
nothing is truncated, so the table can be wide.

In the table a value with line breaks spans several lines of its row (EXPLAIN's plan stays
readable) and tabs show as `\\t`. TSV keeps each row on one line: tab, newline and carriage
return show as `\\t`, `\\n`, `\\r` and backslashes are doubled, so a line splits back into its
exact values.

JSON writes one object per row, keys are the column names in column order, values JSON-typed.
Keys are unique, as JSON readers need: a name that repeats an earlier one gets `_2`, `_3`, ...
(the first free suffix), so `SELECT a.snapshot_id, b.snapshot_id ...` gives
`{"snapshot_id":1,"snapshot_id_2":1}`. Values:

* integers and floats as numbers (NaN and infinities as the strings `"NaN"`, `"Infinity"`,
  `"-Infinity"`, as Spark's `to_json` writes them); booleans; null;
* decimals as **strings** (`"12.50"`), so no digit is lost to a reader's double;
* dates, times and timestamps as ISO-8601 strings (`"2024-01-01"`, `"2024-01-01T12:00:00"`);
* binary as base64 (as `to_json`); arrays as arrays; maps and structs as objects.

A result without columns (DDL, `INSERT`, `SET` without output) prints nothing in any format.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import math
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from decimal import Decimal
from enum import StrEnum
from typing import Any, Protocol, TextIO

__all__ = [
    "OutputFormat",
    "format_rows",
    "json_keys",
    "json_value",
    "text_value",
    "write_result",
]


class OutputFormat(StrEnum):
    TABLE = "table"
    TSV = "tsv"
    JSON = "json"


class _Result(Protocol):
    """What `write_result` needs of a pyspark `DataFrame`."""

    @property
    def columns(self) -> list[str]: ...

    def collect(self) -> list[Any]: ...


_MIN_WIDTH = 3  # as df.show()
_TABLE_ESCAPES = str.maketrans({"\t": "\\t"})
_TSV_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def _is_struct(value: Any) -> bool:
    # pyspark's Row is a tuple with `__fields__`; checked by shape so that no pyspark is needed.
    return isinstance(value, tuple) and hasattr(value, "__fields__")


def _struct_items(value: Any) -> list[tuple[str, Any]]:
    return list(zip(value.__fields__, value))


def _timestamp_text(value: dt.datetime) -> str:
    text = value.strftime("%Y-%m-%d %H:%M:%S")
    if value.microsecond:
        text += f".{value.microsecond:06d}".rstrip("0")
    if value.tzinfo is not None:
        text += value.strftime("%z")
    return text


def _float_text(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return repr(value)


def text_value(value: Any, *, nested: bool = False) -> str:
    """A value as Spark shows it; NULL at the top level, `null` inside arrays/maps/structs."""
    if value is None:
        return "null" if nested else "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _float_text(value)
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, dt.datetime):
        return _timestamp_text(value)
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "[" + " ".join(f"{b:02X}" for b in bytes(value)) + "]"
    if _is_struct(value):
        return "{" + ", ".join(text_value(v, nested=True) for v in value) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(text_value(v, nested=True) for v in value) + "]"
    if isinstance(value, dict):
        items = (
            f"{text_value(k, nested=True)} -> {text_value(v, nested=True)}"
            for k, v in value.items()
        )
        return "{" + ", ".join(items) + "}"
    return str(value)


def json_value(value: Any) -> Any:
    """A value as a JSON-serialisable Python value (see the module docstring)."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else _float_text(value)
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, (dt.date, dt.time)):  # datetime is a date
        return value.isoformat()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if _is_struct(value):
        return {name: json_value(v) for name, v in _struct_items(value)}
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    if isinstance(value, dict):
        return {
            k if isinstance(k, str) else text_value(k, nested=True): json_value(v)
            for k, v in value.items()
        }
    return str(value)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def json_keys(columns: Sequence[str]) -> list[str]:
    """The column names made unique: a repeated name gets the first free `_2`, `_3`, ...

    >>> json_keys(["id", "id", "id_2", "id"])
    ['id', 'id_3', 'id_2', 'id_4']
    """
    taken = set(columns)
    keys: list[str] = []
    for name in columns:
        key = name
        if key in keys:
            n = 2
            while f"{name}_{n}" in taken or f"{name}_{n}" in keys:
                n += 1
            key = f"{name}_{n}"
        keys.append(key)
    return keys


def _json_line(keys: Sequence[str], row: Sequence[Any]) -> str:
    return _dumps({key: json_value(v) for key, v in zip(keys, row)})


def _width(text: str) -> int:
    """Terminal columns of `text`: East Asian wide characters take two, combining marks none."""
    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
        for c in text
    )


def _cell_lines(text: str) -> list[str]:
    return text.translate(_TABLE_ESCAPES).splitlines() or [""]


def _table_lines(columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> Iterator[str]:
    header = [_cell_lines(name) for name in columns]
    cells = [[_cell_lines(text_value(v)) for v in row] for row in rows]
    widths = [_MIN_WIDTH] * len(columns)
    for line in (header, *cells):
        widths = [max(w, *map(_width, cell)) for w, cell in zip(widths, line)]

    def physical(values: Sequence[list[str]]) -> Iterator[str]:
        for i in range(max(len(v) for v in values)):
            parts = (v[i] if i < len(v) else "" for v in values)
            yield "|" + "|".join(p + " " * (w - _width(p)) for p, w in zip(parts, widths)) + "|"

    border = "+" + "+".join("-" * w for w in widths) + "+"
    yield border
    yield from physical(header)
    yield border
    for line in cells:
        yield from physical(line)
    yield border


def format_rows(
    columns: Sequence[str], rows: Iterable[Sequence[Any]], fmt: OutputFormat | str
) -> Iterator[str]:
    """The output lines (without newlines) of one result; none when there are no columns.

    `table` is `df.show(truncate=False)`'s layout (borders even for zero rows); `tsv` has a
    header line; `json` has one line per row and none for an empty result.
    """
    if not columns:
        return
    fmt = OutputFormat(fmt)
    if fmt is OutputFormat.TABLE:
        yield from _table_lines(columns, rows)
    elif fmt is OutputFormat.TSV:
        yield "\t".join(name.translate(_TSV_ESCAPES) for name in columns)
        for row in rows:
            yield "\t".join(text_value(v).translate(_TSV_ESCAPES) for v in row)
    else:
        keys = json_keys(columns)
        for row in rows:
            yield _json_line(keys, row)


def write_result(result: _Result, fmt: OutputFormat | str, out: TextIO) -> int:
    """Collect a statement's result and print it to `out`; returns the number of rows.

    A result without columns is not collected: Spark has already run the command.
    """
    columns = list(result.columns)
    if not columns:
        return 0
    rows = result.collect()
    for line in format_rows(columns, rows, fmt):
        out.write(line + "\n")
    out.flush()
    return len(rows)

"""Column statistics of data files, as Paimon's ``metadata.stats-mode`` collectors compute them.

Java gathers min/max/null counts per column with a mode: ``none``, ``counts``, ``full`` or
``truncate(N)`` (strings cut to N code points; the max is then bumped so that it stays an upper
bound). Value stats are stored "dense": columns whose mode is ``none`` are left out and
``_VALUE_STATS_COLS`` lists the rest, or is null when every column is covered. Key stats of
primary-key files always cover every key field.

What a file's stats say depends on its format, because Java takes them from different places:
Parquet's footer, ORC's column statistics (``OrcSimpleStatsExtractor``), or, for Avro, which
has none, a collector fed every row (``SimpleStatsCollector``). ``column_stats`` follows each.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from paimon_core.exceptions import InvalidArgument
from paimon_core.format.binary_row import deserialize_row, serialize_row
from paimon_core.format.float_order import is_floating, ordered
from paimon_core.format.manifest import EMPTY_STATS, SimpleStats

if TYPE_CHECKING:
    from paimon_core.format.options import CoreOptions
    from paimon_core.format.types import DataField

SYSTEM_FIELD_STATS_MODE = "truncate(128)"
_TRUNCATE = re.compile(r"truncate\((\d+)\)")
_MAX_CODE_POINT = 0x10FFFF
_ORC_MAX_STRING_BYTES = 1024  # ORC's StringStatisticsImpl.MAX_BYTES_RECORDED


@dataclass(frozen=True, slots=True)
class StatsMode:
    """One parsed ``stats-mode``: ``kind`` is none, counts, truncate or full."""

    kind: str
    length: int = 0


@dataclass(frozen=True, slots=True)
class ColumnStats:
    """Min, max (Python values, None when unknown) and null count (None when not collected)."""

    min: Any
    max: Any
    null_count: int | None

    @property
    def is_none(self) -> bool:
        return self.min is None and self.max is None and self.null_count is None


NONE_STATS = ColumnStats(None, None, None)


def parse_stats_mode(text: str) -> StatsMode:
    """``none`` / ``counts`` / ``full`` / ``truncate(N)`` (any case), as Java's ``StatsMode``."""
    mode = text.strip().lower()
    if mode in ("none", "counts", "full"):
        return StatsMode(mode)
    match = _TRUNCATE.fullmatch(mode)
    if match:
        return StatsMode("truncate", int(match.group(1)))
    raise InvalidArgument(
        f"Unexpected stats mode '{text}': expected none, counts, full or truncate(<length>)"
    )


def value_stats_modes(
    options: CoreOptions, names: Sequence[str], mode: str | None = None
) -> list[StatsMode]:
    """Modes of value columns: ``fields.<name>.stats-mode``, else ``mode`` (default
    ``metadata.stats-mode``; changelog files: ``changelog-file.stats-mode``)."""
    modes = []
    for name in names:
        explicit = options.options.get(f"fields.{name}.stats-mode")
        if explicit is None and mode is not None:
            modes.append(parse_stats_mode(mode))
        else:
            modes.append(parse_stats_mode(options.field_stats_mode(name)))
    return modes


def key_stats_modes(
    options: CoreOptions,
    key_names: Sequence[str],
    file_format: str = "parquet",
    mode: str | None = None,
) -> list[StatsMode]:
    """Modes of the ``_KEY_<k>`` system fields: ``truncate(128)`` unless set per field.

    Avro files are the exception: Java's ``createStatsFactoriesForAvro`` gives system fields
    ``mode`` (default ``metadata.stats-mode``) like any other column."""
    modes = []
    for name in key_names:
        explicit = options.get_str(f"fields._KEY_{name}.stats-mode")
        if file_format == "avro":
            default = mode or options.stats_mode
        else:
            default = SYSTEM_FIELD_STATS_MODE
        modes.append(parse_stats_mode(explicit or default))
    return modes


def truncate_min(value: str, length: int) -> str:
    """The first ``length`` code points: a lower bound of ``value``."""
    return value[:length]


def truncate_max(value: str, length: int) -> str | None:
    """An upper bound of ``value`` with at most ``length`` code points; None if there is none.

    Java increments the last code point of the prefix that can be incremented and drops
    everything after it (``TruncateSimpleColStatsCollector.truncateMax``).
    """
    if len(value) <= length:
        return value
    for i in range(length - 1, -1, -1):
        code = ord(value[i]) + 1
        if code <= _MAX_CODE_POINT:
            if 0xD800 <= code <= 0xDFFF:
                code = 0xE000  # a surrogate cannot be encoded; the next real code point is still a bound
            return value[:i] + chr(code)
    return None


def _to_python(scalar: pa.Scalar) -> Any:
    value = scalar.as_py()
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        value = value.astimezone(dt.UTC).replace(tzinfo=None)
    return value


def _supports_min_max(arrow_type: pa.DataType) -> bool:
    if pa.types.is_nested(arrow_type) or pa.types.is_null(arrow_type):
        return False
    # Nanosecond timestamps: Java stores TIMESTAMP(7..9) as INT96 without stats, and Python
    # values would drop the nanos (a max below the real max would prune wrongly).
    return not (pa.types.is_timestamp(arrow_type) and arrow_type.unit == "ns")


def _footer_ordered(arrow_type: pa.DataType) -> bool:
    """Types whose Parquet footer min/max are exactly Arrow's ``min_max`` as Python values:
    integers, booleans, dates, and strings (both order UTF-8 bytes unsigned)."""
    return (
        pa.types.is_integer(arrow_type)
        or pa.types.is_boolean(arrow_type)
        or pa.types.is_date32(arrow_type)
        or pa.types.is_string(arrow_type)
        or pa.types.is_large_string(arrow_type)
    )


@lru_cache(maxsize=1024)
def _type_kind(arrow_type: pa.DataType) -> tuple[bool, bool, bool]:
    """(has min/max, floating point, footer bounds usable) of a column type: asked for every
    column of every file."""
    return _supports_min_max(arrow_type), is_floating(arrow_type), _footer_ordered(arrow_type)


class FooterStats:
    """The min/max the Parquet writer put in the footer of the file just written, by
    top-level column: they cost nothing more to get, where a compute kernel per column is
    a good part of a small file's write."""

    def __init__(self, footer: pq.FileMetaData) -> None:
        self.footer = footer
        self.columns: dict[str, int] = {}
        seen: set[str] = set()
        schema = footer.schema
        for j in range(footer.num_columns):
            column = schema.column(j)
            path = column.path
            if path in seen:
                self.columns.pop(path, None)  # ambiguous ("a.b" and a.b): not used
            elif column.max_repetition_level == 0:
                self.columns[path] = j
            seen.add(path)

    def bounds(self, name: str) -> tuple[Any, Any] | None:
        """(min, max) of the non-null values of column ``name``; None when the footer does
        not have them all (no such column, statistics left out)."""
        j = self.columns.get(name)
        if j is None:
            return None
        low = high = None
        footer = self.footer
        for g in range(footer.num_row_groups):
            group = footer.row_group(g)
            stats = group.column(j).statistics
            if stats is None:
                return None
            if not stats.has_min_max:
                if stats.has_null_count and stats.null_count == group.num_rows:
                    continue  # only nulls here
                return None
            if low is None or stats.min < low:
                low = stats.min
            if high is None or stats.max > high:
                high = stats.max
        return None if low is None else (low, high)


def column_stats(
    column: pa.Array | pa.ChunkedArray,
    mode: StatsMode,
    file_format: str = "parquet",
    footer: FooterStats | None = None,
    name: str = "",
) -> ColumnStats:
    """Stats of one column under ``mode``, as Java gets them for a file of ``file_format``.

    FLOAT/DOUBLE columns, as Paimon 2 (Java) stores them: Parquet and Avro compare every
    value in Java's order (``Float.compareTo``: NaN is the largest, -0.0 is below 0.0), since
    Paimon 2 takes Parquet's bounds from the writer's in-memory footer (parquet-mr's
    comparator; Paimon 0.9 re-read the written footer, where a NaN drops both bounds and
    zeros widen to -0.0..+0.0). ORC: ``_orc_float_stats``. ORC keeps no min/max of binary
    columns nor a string bound longer than 1024 UTF-8 bytes. Avro's ``truncate(N)`` cuts
    binary values too.

    Nanosecond timestamps get no min/max in any format: Python values drop the nanos, and a
    max below the real max would prune wrongly.

    ``footer``: the footer of the Parquet file ``column`` (named ``name`` there) was just
    written to, whose bounds are used for the types where they are exactly the kernel's:
    they cost nothing more to get, where a kernel per column is a good part of a small write.
    """
    if mode.kind == "none":
        return NONE_STATS
    nulls = column.null_count
    supported, floating, footer_ordered = _type_kind(column.type)
    if mode.kind == "counts" or not supported:
        return ColumnStats(None, None, nulls)
    if nulls == len(column):
        return ColumnStats(None, None, nulls)
    if file_format == "avro" or (floating and file_format != "orc"):
        return _collected_stats(column, mode, nulls)
    if floating:
        return _orc_float_stats(column, nulls)
    if file_format == "orc" and _is_binary(column.type):
        return ColumnStats(None, None, nulls)  # OrcSimpleStatsExtractor: no binary bounds
    written = footer.bounds(name) if footer is not None and footer_ordered else None
    if written is not None:
        low, high = written
    else:
        bounds = pc.min_max(column)
        low, high = _to_python(bounds["min"]), _to_python(bounds["max"])
    if low is None or high is None:
        return ColumnStats(None, None, nulls)
    if file_format == "orc" and isinstance(low, str):
        # ORC's string statistics drop a bound longer than 1024 bytes (keeping a truncated
        # lower/upper bound instead, which Paimon does not read).
        low = None if len(low.encode()) > _ORC_MAX_STRING_BYTES else low
        high = None if len(high.encode()) > _ORC_MAX_STRING_BYTES else high
    if mode.kind == "truncate" and (isinstance(low, str) or isinstance(high, str)):
        low = None if low is None else truncate_min(low, mode.length)
        high = None if high is None else truncate_max(high, mode.length)
        if high is None:
            return ColumnStats(None, None, nulls)
    return ColumnStats(low, high, nulls)


def _orc_float_stats(column: pa.Array | pa.ChunkedArray, nulls: int) -> ColumnStats:
    """ORC's double statistics as Paimon 2 (Java) reads them from the file: the writer starts
    from the first value and takes each later one that is ``<`` the min or ``>`` the max, so
    a NaN first makes both bounds NaN, a NaN later is passed over, and of equal zeros the
    first one stays."""
    values = pc.drop_null(column)
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    first = values[0].as_py()
    if first != first:  # NaN
        return ColumnStats(first, first, nulls)
    numbers = pc.filter(values, pc.invert(pc.is_nan(values)))
    bounds = pc.min_max(numbers)
    low, high = bounds["min"].as_py(), bounds["max"].as_py()
    zeros = pc.filter(numbers, pc.equal(numbers, 0.0))
    if len(zeros):
        # the first zero met stays: -0.0 < 0.0 is false in Java
        zero = zeros[0].as_py()
        low = zero if low == 0 else low
        high = zero if high == 0 else high
    return ColumnStats(low, high, nulls)


def _is_binary(arrow_type: pa.DataType) -> bool:
    return pa.types.is_binary(arrow_type) or pa.types.is_large_binary(arrow_type)


def _collected_stats(
    column: pa.Array | pa.ChunkedArray, mode: StatsMode, nulls: int
) -> ColumnStats:
    """Java's ``Full``/``TruncateSimpleColStatsCollector`` over every value (Avro files)."""
    if is_floating(column.type):
        # Float.compareTo: NaN above +Infinity, -0.0 below 0.0: the order float_order keys.
        keys = ordered(column)
        values = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
        low = _to_python(values[pc.index(keys, pc.min(keys)).as_py()])
        high = _to_python(values[pc.index(keys, pc.max(keys)).as_py()])
        return ColumnStats(low, high, nulls)
    bounds = pc.min_max(column)
    low, high = _to_python(bounds["min"]), _to_python(bounds["max"])
    if mode.kind == "truncate" and isinstance(low, str):
        low = truncate_min(low, mode.length)
        high = truncate_max(high, mode.length)
    elif mode.kind == "truncate" and isinstance(low, bytes):
        low = low[: mode.length]
        high = truncate_max_bytes(high, mode.length)
    if high is None:
        return ColumnStats(None, None, nulls)
    return ColumnStats(low, high, nulls)


def truncate_max_bytes(value: bytes, length: int) -> bytes | None:
    """An upper bound of ``value`` with at most ``length`` bytes; None if there is none.

    Java increments the last byte of the prefix that is not 0xFF and drops what follows."""
    if len(value) <= length:
        return value
    for i in range(length - 1, -1, -1):
        if value[i] != 0xFF:
            return value[:i] + bytes([value[i] + 1])
    return None


def to_simple_stats(stats: Sequence[ColumnStats], types: Sequence[Any]) -> SimpleStats:
    """Every column's stats in one ``SimpleStats`` (Java ``toBinaryAllMode``)."""
    if not stats:
        return EMPTY_STATS
    return SimpleStats(
        serialize_row([s.min for s in stats], types),
        serialize_row([s.max for s in stats], types),
        tuple(s.null_count for s in stats),
    )


def collect_stats(
    data: pa.Table,
    fields: Sequence[DataField],
    modes: Sequence[StatsMode],
    file_format: str = "parquet",
    footer: FooterStats | None = None,
) -> list[ColumnStats]:
    """Stats of the columns named by ``fields`` in ``data``, one mode per field, as Java has
    them for a file of ``file_format``; ``footer``: of the Parquet file ``data`` was written
    to, where the columns have the same names.

    ORC CHAR columns read back right-trimmed (Java's ORC reader trims the padding), while
    Java's ORC statistics cover the padded values: the min is taken over the trimmed values,
    so that the bounds hold for both and no reader prunes a file holding a match.

    A VARIANT column has no stats at all (not even a null count): Java's Parquet footer
    holds stats of its ``value``/``metadata`` leaves only, never of the group."""
    out = []
    for f, mode in zip(fields, modes):
        if f.type.root == "VARIANT":
            out.append(NONE_STATS)
            continue
        column = data.column(f.name)
        stats = column_stats(column, mode, file_format, footer, f.name)
        if file_format == "orc" and f.type.root == "CHAR" and stats.min is not None:
            trimmed = column_stats(pc.utf8_rtrim(column, characters=" "), mode, file_format)
            stats = ColumnStats(trimmed.min, stats.max, stats.null_count)
        out.append(stats)
    return out


def dense_value_stats(
    stats: Sequence[ColumnStats], fields: Sequence[DataField], dense: bool = True
) -> tuple[SimpleStats, tuple[str, ...] | None]:
    """Value stats and ``_VALUE_STATS_COLS`` as Java's ``SimpleStatsConverter.toBinary``.

    Dense store keeps only columns with any stats; the column list is None when that is all
    of them (and ``()`` when none, which is the empty row: ``EMPTY_STATS``).
    """
    if not dense:
        return to_simple_stats(stats, [f.type for f in fields]), None
    kept = [(s, f) for s, f in zip(stats, fields) if not s.is_none]
    simple = to_simple_stats([s for s, _ in kept], [f.type for _, f in kept])
    if len(kept) == len(fields):
        return simple, None
    return simple, tuple(f.name for _, f in kept)


def decode_stats(stats: SimpleStats, types: Sequence[Any]) -> list[ColumnStats]:
    """The per-column stats stored in ``stats`` whose row fields have ``types``."""
    if not types:
        return []
    mins = deserialize_row(stats.min_values, types)
    maxs = deserialize_row(stats.max_values, types)
    counts = stats.null_counts or ()
    return [
        ColumnStats(mins[i], maxs[i], counts[i] if i < len(counts) else None)
        for i in range(len(types))
    ]

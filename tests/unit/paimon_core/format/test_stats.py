"""Column stats: modes, Java's string truncation, dense value-stats columns."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paimon_core.exceptions import InvalidArgument
from paimon_core.format.binary_row import serialize_row
from paimon_core.format.manifest import EMPTY_STATS
from paimon_core.format.options import CoreOptions
from paimon_core.format.stats import (
    ColumnStats,
    StatsMode,
    collect_stats,
    column_stats,
    decode_stats,
    dense_value_stats,
    key_stats_modes,
    parse_stats_mode,
    truncate_max,
    truncate_min,
    value_stats_modes,
)
from paimon_core.format.types import BIGINT, CHAR, DOUBLE, FLOAT, STRING, TIMESTAMP_LTZ, DataField

TRUNC16 = StatsMode("truncate", 16)


def test_parse_stats_mode() -> None:
    assert parse_stats_mode("TRUNCATE(16)") == TRUNC16
    assert parse_stats_mode(" full ") == StatsMode("full")
    assert parse_stats_mode("counts") == StatsMode("counts")
    assert parse_stats_mode("none") == StatsMode("none")
    with pytest.raises(InvalidArgument, match="stats mode"):
        parse_stats_mode("truncate(x)")


def test_truncation_follows_java() -> None:
    assert truncate_min("abcdef", 3) == "abc"
    assert truncate_max("abc", 3) == "abc"  # short enough: unchanged
    assert truncate_max("abcdef", 3) == "abd"
    assert truncate_max("ab\U0010ffffz", 3) == "ac"  # the max code point cannot grow: bump earlier
    assert truncate_max("\U0010ffff" * 4, 3) is None
    assert truncate_max("éèà", 2) == "éé"  # code points, not bytes


def test_column_stats_per_mode() -> None:
    column = pa.array(["x" * 20, None, "a"])
    assert column_stats(column, StatsMode("none")) == ColumnStats(None, None, None)
    assert column_stats(column, StatsMode("counts")) == ColumnStats(None, None, 1)
    assert column_stats(column, StatsMode("full")) == ColumnStats("a", "x" * 20, 1)
    assert column_stats(column, TRUNC16) == ColumnStats("a", "x" * 15 + "y", 1)
    assert column_stats(pa.array([None, None], pa.int64()), TRUNC16) == ColumnStats(None, None, 2)
    only_nan = column_stats(pa.array([float("nan")]), TRUNC16)
    assert math.isnan(only_nan.min) and math.isnan(only_nan.max) and only_nan.null_count == 0
    assert column_stats(pa.array([[1]]), TRUNC16) == ColumnStats(None, None, 0)


def test_ltz_timestamps_and_decimals_become_python_values() -> None:
    ts = pa.array([dt.datetime(2024, 1, 1, 12)], pa.timestamp("us", tz="UTC"))
    assert column_stats(ts, TRUNC16).min == dt.datetime(2024, 1, 1, 12)
    dec = pa.array([Decimal("1.50"), Decimal("-2.25")], pa.decimal128(10, 2))
    assert column_stats(dec, TRUNC16) == ColumnStats(Decimal("-2.25"), Decimal("1.50"), 0)


def test_dense_store_lists_only_covered_columns() -> None:
    fields = [
        DataField(0, "id", BIGINT()),
        DataField(1, "name", STRING()),
        DataField(2, "x", DOUBLE()),
    ]
    data = pa.table({"id": [3, 1], "name": ["b", None], "x": [0.5, 1.5]})
    full = collect_stats(data, fields, [TRUNC16] * 3)
    stats, cols = dense_value_stats(full, fields)
    assert cols is None
    types = [f.type for f in fields]
    assert stats.min_values == serialize_row([1, "b", 0.5], types)
    assert stats.max_values == serialize_row([3, "b", 1.5], types)
    assert stats.null_counts == (0, 1, 0)
    assert decode_stats(stats, types) == full

    partial = collect_stats(data, fields, [TRUNC16, StatsMode("none"), StatsMode("counts")])
    stats, cols = dense_value_stats(partial, fields)
    assert cols == ("id", "x")
    assert stats.min_values == serialize_row([1, None], [BIGINT(), DOUBLE()])
    assert stats.null_counts == (0, 0)

    none = collect_stats(data, fields, [StatsMode("none")] * 3)
    assert dense_value_stats(none, fields) == (EMPTY_STATS, ())
    sparse, cols = dense_value_stats(partial, fields, dense=False)
    assert cols is None and sparse.null_counts == (0, None, 0)


def test_modes_from_options() -> None:
    options = CoreOptions({"metadata.stats-mode": "full", "fields.name.stats-mode": "none"})
    assert value_stats_modes(options, ["id", "name"]) == [StatsMode("full"), StatsMode("none")]
    assert value_stats_modes(CoreOptions({}), ["id"]) == [TRUNC16]
    assert key_stats_modes(options, ["k"]) == [StatsMode("truncate", 128)]


def test_ltz_type_serializes_after_normalising() -> None:
    ts = pa.array([dt.datetime(2024, 1, 1)], pa.timestamp("us", tz="UTC"))
    s = column_stats(ts, StatsMode("full"))
    field = DataField(0, "t", TIMESTAMP_LTZ(6))
    stats, _ = dense_value_stats([s], [field])
    assert decode_stats(stats, [field.type])[0].max == dt.datetime(2024, 1, 1)


@pytest.mark.parametrize("arrow_type", [pa.float64(), pa.float32()], ids=["double", "float"])
def test_float_stats_follow_paimon_2s_parquet_writer(arrow_type: pa.DataType) -> None:
    """Paimon 2 (Java, tests/interop/test_java2_tables.py) takes Parquet bounds from the
    writer's in-memory footer: every value in ``Float.compareTo`` order (NaN the largest,
    -0.0 below 0.0), zeros as they are (0.9's re-read footer had no bounds around a NaN and
    widened zeros to -0.0..+0.0)."""
    nan = float("nan")

    def stats(values: list) -> tuple[Any, ...]:
        got = column_stats(pa.array(values, arrow_type), TRUNC16)
        return (*(repr(v) for v in (got.min, got.max)), got.null_count)

    assert stats([1.0, nan, 2.0]) == ("1.0", "nan", 0)
    assert stats([None, nan, -1.0]) == ("-1.0", "nan", 1)
    assert stats([0.0, 2.0]) == ("0.0", "2.0", 0)
    assert stats([-0.0, -2.0]) == ("-2.0", "-0.0", 0)
    assert stats([0.0, -0.0]) == ("-0.0", "0.0", 0)
    assert stats([float("-inf"), float("inf")]) == ("-inf", "inf", 0)
    assert column_stats(pa.array([1.0, nan], arrow_type), StatsMode("counts")).null_count == 0


def test_stats_of_float_columns_store_the_signed_zeros() -> None:
    fields = [DataField(0, "x", DOUBLE()), DataField(1, "y", FLOAT())]
    data = pa.table({"x": [0.0, 1.0], "y": pa.array([-3.0, -0.0], pa.float32())})
    stats, _ = dense_value_stats(collect_stats(data, fields, [TRUNC16] * 2), fields)
    assert stats.min_values == serialize_row([0.0, -3.0], [DOUBLE(), FLOAT()])
    assert stats.max_values == serialize_row([1.0, -0.0], [DOUBLE(), FLOAT()])


def test_orc_float_stats_follow_the_orc_writer() -> None:
    """ORC's running min/max with Java's ``<``/``>``, as Paimon 2 reads them back: a NaN
    first gives NaN bounds, a later NaN is passed over, the first of equal zeros stays."""
    nan = float("nan")

    def orc(values: list) -> tuple[str, str]:
        got = column_stats(pa.array(values), StatsMode("full"), "orc")
        return repr(got.min), repr(got.max)

    assert orc([1.0, nan, 3.0]) == ("1.0", "3.0")
    assert orc([None, nan, 3.0]) == ("nan", "nan")
    assert orc([2.0, -0.0, 0.0]) == ("-0.0", "2.0")
    assert orc([-1.0, 0.0, -0.0]) == ("-1.0", "0.0")


def test_orc_stats_follow_javas_orc_extractor() -> None:
    """ORC's column statistics: no binary bounds, no string bound over 1024 bytes, no bounds
    around a NaN; the truncate mode still applies to what is left."""
    binary = pa.array([b"a", None, b"b"])
    assert column_stats(binary, StatsMode("full"), "orc") == ColumnStats(None, None, 1)
    assert column_stats(binary, StatsMode("full")) == ColumnStats(b"a", b"b", 1)  # Parquet
    long = "z" * 1025
    strings = pa.array(["a", long])
    assert column_stats(strings, StatsMode("full"), "orc") == ColumnStats("a", None, 0)
    assert column_stats(strings, TRUNC16, "orc") == ColumnStats(None, None, 0)
    assert column_stats(pa.array([long, long]), TRUNC16, "orc") == ColumnStats(None, None, 0)
    assert column_stats(pa.array(["abc"]), StatsMode("truncate", 2), "orc").max == "ac"


def test_avro_stats_follow_javas_collectors() -> None:
    """Avro: Java compares every value (``Float.compareTo``: NaN largest, -0.0 below 0.0) and
    truncates binary values too."""
    floats = pa.array([0.0, None, -0.0, math.nan, -1.5], pa.float32())
    stats = column_stats(floats, StatsMode("full"), "avro")
    assert stats.min == -1.5 and math.isnan(stats.max) and stats.null_count == 1
    zeros = column_stats(pa.array([0.0, -0.0]), StatsMode("full"), "avro")
    assert math.copysign(1, zeros.min) == -1 and math.copysign(1, zeros.max) == 1
    binary = pa.array([b"\x01\xff\xff", b"\x00\x02"])
    assert column_stats(binary, StatsMode("truncate", 2), "avro") == ColumnStats(
        b"\x00\x02", b"\x02", 0
    )
    assert column_stats(pa.array([b"\xff\xff\xff"]), StatsMode("truncate", 2), "avro") == (
        ColumnStats(None, None, 0)
    )
    strings = column_stats(pa.array(["abcd", "b"]), StatsMode("truncate", 2), "avro")
    assert strings == ColumnStats("ab", "b", 0)
    nested = pa.array([[1], None])
    assert column_stats(nested, StatsMode("full"), "avro") == ColumnStats(None, None, 1)


def test_avro_key_stats_use_the_table_stats_mode() -> None:
    """Java's ``createStatsFactoriesForAvro`` gives the ``_KEY_`` fields no truncate(128)."""
    options = CoreOptions({"metadata.stats-mode": "counts", "fields._KEY_b.stats-mode": "full"})
    assert key_stats_modes(options, ["a", "b"], "avro") == [
        StatsMode("counts"),
        StatsMode("full"),
    ]
    assert key_stats_modes(options, ["a"], "orc") == [StatsMode("truncate", 128)]


def test_orc_char_bounds_cover_padded_and_trimmed_values() -> None:
    """Java's ORC reader returns CHAR values trimmed, its statistics see them padded."""
    data = pa.table({"c": ["ab   ", "b    "], "s": ["ab   ", "b    "]})
    fields = [DataField(0, "c", CHAR(5)), DataField(1, "s", STRING())]
    modes = [StatsMode("full")] * 2
    char, string = collect_stats(data, fields, modes, "orc")
    assert (char.min, char.max) == ("ab", "b    ")
    assert (string.min, string.max) == ("ab   ", "b    ")
    assert collect_stats(data, fields, modes)[0].min == "ab   "  # Parquet keeps what it stores


@settings(max_examples=120, deadline=None)
@given(
    st.sampled_from(
        [
            (pa.int64(), st.integers(-(2**63), 2**63 - 1)),
            (pa.int8(), st.integers(-128, 127)),
            (pa.int16(), st.integers(-(2**15), 2**15 - 1)),
            (pa.bool_(), st.booleans()),
            (pa.date32(), st.dates()),
            (pa.string(), st.text()),
            (pa.large_string(), st.text(alphabet=st.characters(codec="utf-8"))),
            (pa.float64(), st.floats()),  # not taken from the footer: NaN rules
        ]
    ).flatmap(
        lambda kind: st.tuples(
            st.just(kind[0]),
            st.lists(st.none() | kind[1], min_size=1, max_size=40),
            st.integers(1, 50),
        )
    )
)
def test_bounds_from_the_parquet_footer_are_the_kernels(case: tuple) -> None:
    """The writer takes min/max of integer, boolean, date and string columns from the footer
    of the file it just wrote (any number of row groups): the bounds the kernel computes."""
    import pyarrow.parquet as pq

    from paimon_core.format.stats import FooterStats

    arrow_type, values, row_group = case
    table = pa.table({"c": pa.array(values, arrow_type)})
    written: list = []
    pq.write_table(
        table, pa.BufferOutputStream(), row_group_size=row_group, metadata_collector=written
    )
    footer = FooterStats(written[0])
    if not pa.types.is_floating(arrow_type):  # (a float column's NaNs have no footer bounds)
        assert (footer.bounds("c") is None) == all(v is None for v in values)
    for mode in (StatsMode("full"), StatsMode("truncate", 3)):
        got = column_stats(table.column("c"), mode, "parquet", footer, "c")
        assert repr(got) == repr(column_stats(table.column("c"), mode))  # NaN != NaN

"""Names and layout: Java's partition path escaping and legacy value rendering, file names."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paimon_core.exceptions import InvalidArgument
from paimon_core.format.paths import (
    DEFAULT_PARTITION_NAME,
    bucket_dir_name,
    escape_path_name,
    java_float_string,
    java_local_date_time,
    join,
    new_data_file_name,
    new_file_name,
    parse_partition_path,
    partition_path,
    partition_value_string,
    table_path,
    unescape_path_name,
)


@dataclass(frozen=True)
class T:
    """Stands in for ``paimon_core.format.types.DataType`` (the contract: ``.root``, DECIMAL ``.scale``)."""

    root: str
    scale: int | None = None


STRING, INT, DATE, TS = T("VARCHAR"), T("INT"), T("DATE"), T("TIMESTAMP")


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [
        ("plain-value_1.x", "plain-value_1.x"),
        ("a/b", "a%2Fb"),
        ("k=v", "k%3Dv"),
        ("10:30", "10%3A30"),
        ("\"#%'*/:=?\\{}[]^", "%22%23%25%27%2A%2F%3A%3D%3F%5C%7B%7D%5B%5D%5E"),
        ("tab\there", "tab%09here"),
        ("\x01\x1f\x7f", "%01%1F%7F"),
        ("space and ünïcødé €", "space and ünïcødé €"),
        ("a+b~c!d@e$f&g(h)i,j;k<l>m|n`o", "a+b~c!d@e$f&g(h)i,j;k<l>m|n`o"),
    ],
)
def test_escape_path_name(raw: str, escaped: str) -> None:
    assert escape_path_name(raw) == escaped
    assert unescape_path_name(escaped) == raw


def test_escape_rejects_empty() -> None:
    with pytest.raises(InvalidArgument):
        escape_path_name("")


def test_unescape_java_quirks() -> None:
    assert unescape_path_name("100%") == "100%"
    assert unescape_path_name("%4") == "%4"
    assert unescape_path_name("%zz%41") == "%zzA"
    assert unescape_path_name("%+1") == "\x01"  # Integer.parseInt("+1", 16)
    assert unescape_path_name("%-1") == "%-1"


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1))
def test_escape_round_trip(text: str) -> None:
    escaped = escape_path_name(text)
    assert "/" not in escaped and "=" not in escaped
    assert unescape_path_name(escaped) == text


@pytest.mark.parametrize(
    ("value", "data_type", "text"),
    [
        (date(2024, 1, 1), DATE, "19723"),
        (date(1969, 12, 31), DATE, "-1"),
        (datetime(2024, 1, 1), TS, "2024-01-01T00:00"),
        (datetime(2024, 1, 1, 10, 30, 5), TS, "2024-01-01T10:30:05"),
        (datetime(2024, 1, 1, 0, 0, 0, 123000), TS, "2024-01-01T00:00:00.123"),
        (datetime(2024, 1, 1, 0, 0, 0, 123400), TS, "2024-01-01T00:00:00.123400"),
        (
            datetime(2024, 1, 1, 0, 0, 7, 1),
            T("TIMESTAMP_WITH_LOCAL_TIME_ZONE"),
            "2024-01-01T00:00:07.000001",
        ),
        (
            datetime(2024, 1, 1, 2, 0, tzinfo=timezone(timedelta(hours=2))),
            T("TIMESTAMP_LTZ"),
            "2024-01-01T00:00",
        ),
        (time(1, 0, 0, 5000), T("TIME"), "3600005"),
        (Decimal("1.5"), T("DECIMAL", scale=2), "1.50"),
        (Decimal("123.456"), T("DECIMAL", scale=3), "123.456"),
        (Decimal("1E+3"), T("DECIMAL"), "1000"),
        (True, T("BOOLEAN"), "true"),
        (False, T("BOOLEAN"), "false"),
        (-42, T("BIGINT"), "-42"),
        (1.0, T("DOUBLE"), "1.0"),
        (0.1, T("FLOAT"), "0.1"),
        ("x y", STRING, "x y"),
        (None, STRING, None),
    ],
)
def test_partition_value_strings(value: object, data_type: T, text: str | None) -> None:
    assert partition_value_string(value, data_type) == text


@pytest.mark.parametrize(
    ("value", "single", "text"),
    [
        (1.0, False, "1.0"),
        (100.0, False, "100.0"),
        (0.001, False, "0.001"),
        (0.0001, False, "1.0E-4"),
        (1234567.0, False, "1234567.0"),
        (12345678.0, False, "1.2345678E7"),
        (1e10, False, "1.0E10"),
        (-2.5e-7, False, "-2.5E-7"),
        (0.1 + 0.2, False, "0.30000000000000004"),
        (-0.0, False, "-0.0"),
        (float("nan"), False, "NaN"),
        (float("-inf"), False, "-Infinity"),
        (0.1, True, "0.1"),
        (3.4028234663852886e38, True, "3.4028235E38"),
        (1.1, True, "1.1"),
    ],
)
def test_java_float_strings(value: float, single: bool, text: str) -> None:
    assert java_float_string(value, single) == text


def test_java_local_date_time_nanos() -> None:
    assert java_local_date_time(datetime(2024, 1, 1), nanos=1) == "2024-01-01T00:00:00.000000001"
    assert java_local_date_time(datetime(5, 1, 1, 0, 1)) == "0005-01-01T00:01"


def test_partition_path_and_defaults() -> None:
    names, types = ["dt", "hr", "k/e=y"], [DATE, INT, STRING]
    assert partition_path(names, [date(2024, 1, 1), 10, "a/b"], types) == (
        "dt=19723/hr=10/k%2Fe%3Dy=a%2Fb"
    )
    for blank in (None, "", "   ", "\t\n"):
        assert partition_path(["p"], [blank], [STRING]) == f"p={DEFAULT_PARTITION_NAME}"
    assert partition_path(["p"], [None], [STRING], "NULL") == "p=NULL"
    assert partition_path(["p"], ["\u00a0"], [STRING]) == "p=\u00a0"  # not Java whitespace
    assert partition_path([], [], []) == ""
    assert parse_partition_path("dt=19723/k%2Fe%3Dy=a%2Fb") == {"dt": "19723", "k/e=y": "a/b"}


def test_bucket_and_file_names() -> None:
    assert bucket_dir_name(0) == "bucket-0"
    assert bucket_dir_name(7) == "bucket-7"
    assert bucket_dir_name(-2) == "bucket-postpone"
    uuid_re = "[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
    assert re.fullmatch(f"data-{uuid_re}-0\\.parquet", new_data_file_name())
    assert re.fullmatch(f"changelog-{uuid_re}-0\\.orc", new_data_file_name("orc", "changelog-"))
    assert re.fullmatch(f"manifest-list-{uuid_re}-0", new_file_name("manifest-list-"))
    assert new_file_name("manifest-") != new_file_name("manifest-")


def test_table_path_and_join() -> None:
    assert table_path("/wh/", "db", "t") == "/wh/db.db/t"
    assert table_path("s3://bucket/wh", "db", "t") == "s3://bucket/wh/db.db/t"
    assert join("/wh/", "db.db", "/t/") == "/wh/db.db/t"
    assert join("/", "x") == "/x"

"""Partition times as Paimon's PartitionTimeExtractor reads them (Java DateTimeFormatter rules)."""

from __future__ import annotations

from datetime import datetime

import pytest

from paimon_core.exceptions import InvalidArgument, UnsupportedFeature
from paimon_core.format.partition_time import (
    JavaDateTimeFormatter,
    PartitionTimeExtractor,
    parse_default_timestamp,
)


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        ("yyyyMMdd", "20240131", datetime(2024, 1, 31)),
        ("yyyy-MM-dd", "2024-03-05", datetime(2024, 3, 5)),
        ("yyyyMMddHH", "2024010108", datetime(2024, 1, 1, 8)),
        ("yyyyMMdd HH:mm:ss", "20240101 08:30:15", datetime(2024, 1, 1, 8, 30, 15)),
        (
            "yyyy-MM-dd HH:mm:ss.SSS",
            "2024-01-01 00:00:01.250",
            datetime(2024, 1, 1, 0, 0, 1, 250000),
        ),
        ("yyyy/M/d", "2024/3/5", datetime(2024, 3, 5)),
        ("yy-MM-dd", "24-02-29", datetime(2024, 2, 29)),
        ("dd MMM yyyy", "05 Mar 2023", datetime(2023, 3, 5)),
        ("MMMM d, yyyy", "March 5, 2023", datetime(2023, 3, 5)),
        ("yyyyMMdd'T'HH", "20240101T05", datetime(2024, 1, 1, 5)),
        ("yyyy-MM-dd", "2023-02-30", datetime(2023, 2, 28)),  # SMART: the month's last day
        ("yyyy-MM-dd HH:mm:ss", "2024-01-01 24:00:00", datetime(2024, 1, 2)),
        ("yyyy-MM-dd mm", "2024-01-01 30", datetime(2024, 1, 1)),  # no hour: midnight
    ],
)
def test_java_formatter_parses(pattern: str, text: str, expected: datetime) -> None:
    assert JavaDateTimeFormatter(pattern).parse(text) == expected


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        ("yyyyMMdd", "2024011"),
        ("yyyyMMdd", "20241301"),
        ("yyyy-MM-dd", "2024-01-32"),
        ("yyyyMM", "202401"),  # no day: LocalDate cannot be built
        ("dd MMM yyyy", "05 mar 2023"),  # month names are case-sensitive
        ("yyyy-MM-dd HH", "2024-01-01 25"),
    ],
)
def test_java_formatter_rejects(pattern: str, text: str) -> None:
    with pytest.raises(ValueError):
        JavaDateTimeFormatter(pattern).parse(text)


def test_java_formatter_pattern_errors() -> None:
    with pytest.raises(InvalidArgument, match="Too many pattern letters: d"):
        JavaDateTimeFormatter("yyyy-MM-ddd")
    with pytest.raises(InvalidArgument, match="incomplete string literal"):
        JavaDateTimeFormatter("yyyy'T")
    with pytest.raises(InvalidArgument, match="reserved character"):
        JavaDateTimeFormatter("yyyy#")
    with pytest.raises(UnsupportedFeature, match="Pattern letter 'w'"):
        JavaDateTimeFormatter("yyyy-ww")


def test_default_timestamp_is_lenient() -> None:
    assert parse_default_timestamp("2024-01-02") == datetime(2024, 1, 2)
    assert parse_default_timestamp("2024-1-2 3:04:05.5") == datetime(2024, 1, 2, 3, 4, 5, 500000)
    assert parse_default_timestamp("2024-13-01") == datetime(2025, 1, 1)
    with pytest.raises(ValueError):
        parse_default_timestamp("20240102")
    with pytest.raises(ValueError):
        parse_default_timestamp("2024-01-02 03:04")


def test_extractor_pattern_and_first_value() -> None:
    keys = ["year", "month", "day", "hour"]
    extractor = PartitionTimeExtractor("$year-$month-$day $hour:00:00")
    assert extractor.extract(keys, ["2024", "01", "02", "03"]) == datetime(2024, 1, 2, 3)
    compact = PartitionTimeExtractor("$dt $hh", "yyyyMMdd HH")
    assert compact.extract(["dt", "hh"], ["20240102", "07"]) == datetime(2024, 1, 2, 7)
    assert PartitionTimeExtractor().extract(["dt", "x"], ["2024-01-02", "z"]) == datetime(
        2024, 1, 2
    )
    with pytest.raises(ValueError, match="null"):
        PartitionTimeExtractor().extract(["dt"], [None])

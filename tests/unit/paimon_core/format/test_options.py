"""Table options: Paimon's defaults, memory sizes, durations, typed values and validation."""

from __future__ import annotations

from datetime import timedelta

import pytest

from paimon_core.exceptions import InvalidArgument
from paimon_core.format.options import (
    INTEGER_MAX,
    MIB,
    CoreOptions,
    duration_to_java_string,
    format_memory_size,
    parse_bool,
    parse_duration,
    parse_memory_size,
)


def test_defaults() -> None:
    o = CoreOptions({})
    assert o.bucket == -1 and o.bucket_key == []
    assert (o.file_format, o.file_compression, o.manifest_compression) == (
        "parquet",
        "zstd",
        "zstd",
    )
    assert o.manifest_target_file_size == 8 * MIB
    assert o.manifest_full_compaction_threshold_size == 16 * MIB
    assert o.manifest_merge_min_count == 30
    assert o.stats_mode == "truncate(16)" and o.field_stats_mode("v") == "truncate(16)"
    assert o.partition_default_name == "__DEFAULT_PARTITION__"
    assert o.snapshot_num_retained_min == 10
    assert o.snapshot_num_retained_max == INTEGER_MAX == 2147483647
    assert o.snapshot_time_retained == timedelta(hours=1)
    assert o.snapshot_expire_limit == 50
    assert o.snapshot_expire_execution_mode == "sync"
    assert o.write_only is False
    assert o.commit_max_retries == 10
    assert o.commit_min_retry_wait == timedelta(milliseconds=10)
    assert o.commit_max_retry_wait == timedelta(seconds=10)
    assert o.tag_automatic_creation == "none"
    assert o.tag_creation_period == "daily"
    assert o.tag_creation_delay == timedelta(0)
    assert o.tag_period_formatter == "with_dashes"
    assert o.tag_num_retained_max is None and o.tag_default_time_retained is None
    assert o.tag_automatic_completion is False and o.tag_time_expire_enabled is True
    assert o.dynamic_bucket_target_row_num == 2_000_000
    assert o.merge_engine == "deduplicate" and o.sequence_field == []
    assert o.deletion_vectors_enabled is False
    assert o.changelog_num_retained_min == 10 and not o.changelog_lifecycle_decoupled
    assert o.target_file_size(True) == 128 * MIB and o.target_file_size(False) == 256 * MIB
    assert o.scan_snapshot_id is None and o.scan_tag_name is None


def test_set_options_are_typed() -> None:
    o = CoreOptions(
        {
            "bucket": "4",
            "bucket-key": "a, b",
            "file.format": "ORC",
            "manifest.target-file-size": "2 mb",
            "manifest.merge-min-count": " 5 ",
            "metadata.stats-mode": "full",
            "fields.name.stats-mode": "None",
            "snapshot.num-retained.max": "20",
            "snapshot.time-retained": "30 min",
            "write-only": "TRUE",
            "tag.automatic-creation": "Process-Time",
            "tag.num-retained-max": "3",
            "tag.default-time-retained": "1 d",
            "merge-engine": "partial-update",
            "sequence.field": "ts,seq",
            "deletion-vectors.enabled": "true",
            "changelog.time-retained": "2 h",
            "scan.snapshot-id": "7",
        }
    )
    assert o.bucket == 4 and o.bucket_key == ["a", "b"]
    assert o.file_format == "orc"
    assert o.manifest_target_file_size == 2 * MIB and o.manifest_merge_min_count == 5
    assert o.stats_mode == "full"
    assert o.field_stats_mode("name") == "none" and o.field_stats_mode("other") == "full"
    assert o.snapshot_num_retained_max == 20
    assert o.snapshot_time_retained == timedelta(minutes=30)
    assert o.write_only is True
    assert o.tag_automatic_creation == "process-time"
    assert o.tag_num_retained_max == 3 and o.tag_default_time_retained == timedelta(days=1)
    assert o.merge_engine == "partial-update" and o.sequence_field == ["ts", "seq"]
    assert o.deletion_vectors_enabled is True
    assert o.changelog_num_retained_max == 20
    assert o.changelog_time_retained == timedelta(hours=2) and o.changelog_lifecycle_decoupled
    assert o.scan_snapshot_id == 7
    assert o["bucket"] == "4" and len(o) == 18 and "write-only" in o
    assert o.to_dict()["file.format"] == "ORC"


def test_non_string_values_and_fallback_keys() -> None:
    o = CoreOptions(
        {"bucket": 3, "write-only": True, "snapshot.expire.clean-empty-directories": "true"}
    )
    assert o.options == {
        "bucket": "3",
        "write-only": "true",
        "snapshot.expire.clean-empty-directories": "true",
    }
    assert o.bucket == 3 and o.write_only
    assert o.snapshot_clean_empty_directories is True


@pytest.mark.parametrize(
    ("options", "prop"),
    [
        ({"bucket": "two"}, "bucket"),
        ({"write-only": "yes"}, "write_only"),
        ({"merge-engine": "replace"}, "merge_engine"),
        ({"tag.creation-period": "weekly"}, "tag_creation_period"),
        ({"snapshot.time-retained": "1 week"}, "snapshot_time_retained"),
        ({"manifest.target-file-size": "8 xb"}, "manifest_target_file_size"),
    ],
)
def test_bad_values_raise(options: dict[str, str], prop: str) -> None:
    with pytest.raises(InvalidArgument):
        getattr(CoreOptions(options), prop)


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("8 mb", 8 * MIB),
        ("16MB", 16 * MIB),
        ("128 kb", 128 * 1024),
        ("1024", 1024),
        ("7 b", 7),
        ("2 bytes", 2),
        (" 3 KB ", 3 * 1024),
        ("1g", 1024**3),
        ("1 gibibytes", 1024**3),
        ("2 t", 2 * 1024**4),
        ("5 mebibytes", 5 * MIB),
    ],
)
def test_parse_memory_size(text: str, size: int) -> None:
    assert parse_memory_size(text) == size


@pytest.mark.parametrize(
    ("size", "text"),
    [
        (0, "0 bytes"),
        (7, "7 bytes"),
        (1536, "1536 bytes"),
        (1024, "1 kb"),
        (3 * MIB // 2, "1536 kb"),
        (8 * MIB, "8 mb"),
        (3 * 1024**3, "3 gb"),
        (1024**4, "1099511627776 bytes"),  # Java's MemorySize.toString does the same
    ],
)
def test_format_memory_size_as_java_prints_it(size: int, text: str) -> None:
    assert format_memory_size(size) == text


@pytest.mark.parametrize("bad", ["", "mb", "8 xb", "-1 mb", "1.5 mb"])
def test_parse_memory_size_rejects(bad: str) -> None:
    with pytest.raises(InvalidArgument):
        parse_memory_size(bad)


@pytest.mark.parametrize(
    ("text", "delta"),
    [
        ("1 h", timedelta(hours=1)),
        ("12h", timedelta(hours=12)),
        ("2 hours", timedelta(hours=2)),
        ("30 min", timedelta(minutes=30)),
        ("3 m", timedelta(minutes=3)),
        ("5 minutes", timedelta(minutes=5)),
        ("1d", timedelta(days=1)),
        ("1 d", timedelta(days=1)),
        ("2 days", timedelta(days=2)),
        ("1 DAY", timedelta(days=1)),
        ("100 ms", timedelta(milliseconds=100)),
        ("3 millis", timedelta(milliseconds=3)),
        ("500", timedelta(milliseconds=500)),
        ("10 s", timedelta(seconds=10)),
        ("10 secs", timedelta(seconds=10)),
        ("1 second", timedelta(seconds=1)),
        ("7 µs", timedelta(microseconds=7)),
        ("8 micros", timedelta(microseconds=8)),
        ("5000 ns", timedelta(microseconds=5)),
        ("0 h", timedelta(0)),
    ],
)
def test_parse_duration(text: str, delta: timedelta) -> None:
    assert parse_duration(text) == delta


@pytest.mark.parametrize("bad", ["", "h", "1 week", "-1 h", "1.5 h", "1 hr", "1 mins"])
def test_parse_duration_rejects(bad: str) -> None:
    with pytest.raises(InvalidArgument):
        parse_duration(bad)


def test_parse_bool() -> None:
    assert parse_bool("True") is True and parse_bool(" false ") is False
    with pytest.raises(InvalidArgument):
        parse_bool("1", "k")


@pytest.mark.parametrize(
    ("delta", "text"),
    [
        (timedelta(days=1), "PT24H"),
        (timedelta(minutes=30), "PT30M"),
        (timedelta(hours=1, minutes=1, seconds=1), "PT1H1M1S"),
        (timedelta(seconds=5), "PT5S"),
        (timedelta(milliseconds=500), "PT0.5S"),
        (timedelta(microseconds=1), "PT0.000001S"),
        (timedelta(0), "PT0S"),
        (timedelta(seconds=-5), "PT-5S"),
        (timedelta(milliseconds=-500), "PT-0.5S"),
        (timedelta(seconds=-90.5), "PT-1M-30.5S"),
    ],
)
def test_duration_to_java_string(delta: timedelta, text: str) -> None:
    assert duration_to_java_string(delta) == text

"""Typed access to table options with Paimon's defaults (Java 1.4.2 ``CoreOptions``).

Values are strings as stored in the schema file; each property parses its option the way
Java does (memory sizes like ``8 mb``, durations like ``1 h``) and falls back to Paimon's
default. Unknown options are kept untouched.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from datetime import timedelta
from functools import cached_property
from typing import Any

from paimon_core.exceptions import InvalidArgument
from paimon_core.format.paths import CHANGELOG_PREFIX, DATA_PREFIX, DEFAULT_PARTITION_NAME

INTEGER_MAX = 2**31 - 1
LONG_MAX = 2**63 - 1
MIB = 1024 * 1024

# TimeUtils.parseDuration units (Flink's labels: singular ones, plus "s" for plural ones).
_DURATION_UNITS_NS: dict[str, int] = {}
for _ns, _singular, _plural in (
    (86_400_000_000_000, ("d",), ("day",)),
    (3_600_000_000_000, ("h",), ("hour",)),
    (60_000_000_000, ("min", "m"), ("minute",)),
    (1_000_000_000, ("s",), ("sec", "second")),
    (1_000_000, ("ms",), ("milli", "millisecond")),
    (1_000, ("µs",), ("micro", "microsecond")),
    (1, ("ns",), ("nano", "nanosecond")),
):
    for _label in _singular:
        _DURATION_UNITS_NS[_label] = _ns
    for _label in _plural:
        _DURATION_UNITS_NS[_label] = _ns
        _DURATION_UNITS_NS[_label + "s"] = _ns

# MemorySize.parse units.
_MEMORY_UNITS = {
    **dict.fromkeys(("b", "bytes"), 1),
    **dict.fromkeys(("k", "kb", "kibibytes"), 1024),
    **dict.fromkeys(("m", "mb", "mebibytes"), 1024**2),
    **dict.fromkeys(("g", "gb", "gibibytes"), 1024**3),
    **dict.fromkeys(("t", "tb", "tebibytes"), 1024**4),
}
_NUMBER = re.compile(r"\s*(\d*)\s*(.*?)\s*$", re.DOTALL)


def _split_number(text: str, what: str) -> tuple[int, str]:
    match = _NUMBER.match(text)
    assert match is not None
    number, unit = match.group(1), match.group(2)
    if not text.strip():
        raise InvalidArgument(f"Cannot parse {what} from an empty string")
    if not number:
        raise InvalidArgument(f"Cannot parse {what} '{text}': text does not start with a number")
    value = int(number)
    if value > LONG_MAX:
        raise InvalidArgument(f"The value '{number}' cannot be represented as a 64-bit number")
    return value, unit.lower()


def parse_duration(text: str) -> timedelta:
    """Paimon's ``TimeUtils.parseDuration``: ``1 h``, ``30min``, ``1d``, ``100 ms``, ``2 days``.

    A bare number is milliseconds. Sub-microsecond parts are truncated (Python's resolution).
    """
    value, unit = _split_number(str(text), "duration")
    if not unit:
        return timedelta(milliseconds=value)
    nanos = _DURATION_UNITS_NS.get(unit)
    if nanos is None:
        raise InvalidArgument(
            f"Time interval unit label '{unit}' does not match any of the recognized units: "
            "DAYS: (d | day | days), HOURS: (h | hour | hours), "
            "MINUTES: (min | m | minute | minutes), SECONDS: (s | sec | secs | second | seconds), "
            "MILLISECONDS: (ms | milli | millis | millisecond | milliseconds), "
            "MICROSECONDS: (µs | micro | micros | microsecond | microseconds), "
            "NANOSECONDS: (ns | nano | nanos | nanosecond | nanoseconds)"
        )
    total = value * nanos
    if total > LONG_MAX * 1_000_000_000:
        raise InvalidArgument(f"Duration '{text}' is too large")
    return timedelta(microseconds=total // 1000)


def parse_memory_size(text: str) -> int:
    """Paimon's ``MemorySize.parse`` in bytes: ``8 mb``, ``16MB``, ``128 kb``, ``1024``."""
    value, unit = _split_number(str(text), "memory size")
    if not unit:
        return value
    factor = _MEMORY_UNITS.get(unit)
    if factor is None:
        raise InvalidArgument(
            f"Memory size unit '{unit}' does not match any of the recognized units: "
            "(b | bytes), (k | kb | kibibytes), (m | mb | mebibytes), "
            "(g | gb | gibibytes), (t | tb | tebibytes)"
        )
    if value * factor > LONG_MAX:
        raise InvalidArgument(f"The value '{text}' cannot be represented as 64-bit number of bytes")
    return value * factor


def format_memory_size(size: int) -> str:
    """Paimon's ``MemorySize.toString``: the largest unit dividing ``size`` exactly, its
    long name (``8 mb``, ``1536 bytes``, ``7 bytes``; ``0 bytes``, and whole tebibytes in bytes as
    Java prints them)."""
    units = ((1, "bytes"), (1024, "kb"), (1024**2, "mb"), (1024**3, "gb"), (1024**4, "tb"))
    for i, (factor, _name) in enumerate(units):
        if size % factor:
            factor, name = units[max(i - 1, 0)]
            return f"{size // factor} {name}"
    return f"{size} bytes"


def parse_bool(text: str, key: str = "") -> bool:
    """``true``/``false`` in any case, as Java's option parser."""
    lowered = str(text).strip().lower()
    if lowered == "true":
        return True
    if lowered == "false":
        return False
    raise InvalidArgument(f"Could not parse value '{text}' for key '{key}' as a boolean")


def _tdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def duration_to_java_string(value: timedelta) -> str:
    """Java ``Duration.toString()``: ``PT24H``, ``PT30M``, ``PT0.5S``, ``PT0S``."""
    total_nanos = ((value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds) * 1000
    if total_nanos == 0:
        return "PT0S"
    seconds, nanos = divmod(total_nanos, 1_000_000_000)
    effective = seconds + 1 if seconds < 0 and nanos > 0 else seconds
    hours = _tdiv(effective, 3600)
    rest = effective - hours * 3600
    minutes = _tdiv(rest, 60)
    secs = rest - minutes * 60
    out = "PT"
    if hours:
        out += f"{hours}H"
    if minutes:
        out += f"{minutes}M"
    if secs == 0 and nanos == 0 and len(out) > 2:
        return out
    out += "-0" if seconds < 0 and nanos > 0 and secs == 0 else str(secs)
    if nanos > 0:
        frac = 2 * 1_000_000_000 - nanos if seconds < 0 else nanos + 1_000_000_000
        out += "." + str(frac)[1:].rstrip("0")
    return out + "S"


def _enum(value: str, key: str, allowed: tuple[str, ...]) -> str:
    lowered = value.strip().lower()
    if lowered not in allowed:
        raise InvalidArgument(
            f"Could not parse value '{value}' for key '{key}': expected one of {list(allowed)}"
        )
    return lowered


class CoreOptions(Mapping[str, str]):
    """A table's options (``dict[str, str]``) with typed, defaulted accessors."""

    BUCKET = "bucket"
    BUCKET_KEY = "bucket-key"
    FILE_FORMAT = "file.format"
    FILE_COMPRESSION = "file.compression"
    MANIFEST_COMPRESSION = "manifest.compression"
    MANIFEST_TARGET_FILE_SIZE = "manifest.target-file-size"
    MANIFEST_FULL_COMPACTION_SIZE = "manifest.full-compaction-threshold-size"
    MANIFEST_MERGE_MIN_COUNT = "manifest.merge-min-count"
    STATS_MODE = "metadata.stats-mode"
    PARTITION_DEFAULT_NAME = "partition.default-name"
    SNAPSHOT_NUM_RETAINED_MIN = "snapshot.num-retained.min"
    SNAPSHOT_NUM_RETAINED_MAX = "snapshot.num-retained.max"
    SNAPSHOT_TIME_RETAINED = "snapshot.time-retained"
    SNAPSHOT_EXPIRE_LIMIT = "snapshot.expire.limit"
    SNAPSHOT_EXPIRE_EXECUTION_MODE = "snapshot.expire.execution-mode"
    WRITE_ONLY = "write-only"
    COMMIT_MAX_RETRIES = "commit.max-retries"
    TAG_AUTOMATIC_CREATION = "tag.automatic-creation"
    TAG_CREATION_PERIOD = "tag.creation-period"
    TAG_CREATION_DELAY = "tag.creation-delay"
    TAG_PERIOD_FORMATTER = "tag.period-formatter"
    TAG_NUM_RETAINED_MAX = "tag.num-retained-max"
    TAG_DEFAULT_TIME_RETAINED = "tag.default-time-retained"
    TAG_AUTOMATIC_COMPLETION = "tag.automatic-completion"
    DYNAMIC_BUCKET_TARGET_ROW_NUM = "dynamic-bucket.target-row-num"
    ZORDER_VAR_LENGTH_CONTRIBUTION = "zorder.var-length-contribution"
    MERGE_ENGINE = "merge-engine"
    SEQUENCE_FIELD = "sequence.field"
    DELETION_VECTORS_ENABLED = "deletion-vectors.enabled"
    DELETION_VECTORS_MERGE_ON_READ = "deletion-vectors.merge-on-read"

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        self.options: dict[str, str] = {
            k: (v if isinstance(v, str) else _to_option_string(v))
            for k, v in (options or {}).items()
        }

    # ----------------------------------------------------------------- Mapping / raw access

    def __getitem__(self, key: str) -> str:
        return self.options[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.options)

    def __len__(self) -> int:
        return len(self.options)

    def __repr__(self) -> str:
        return f"CoreOptions({self.options!r})"

    def to_dict(self) -> dict[str, str]:
        return dict(self.options)

    def get_str(self, key: str, default: str | None = None, *fallbacks: str) -> str | None:
        """The raw value of ``key`` (or the first present fallback key), else ``default``."""
        for k in (key, *fallbacks):
            value = self.options.get(k)
            if value is not None:
                return value
        return default

    def get_int(self, key: str, default: int | None = None, *fallbacks: str) -> int | None:
        value = self.get_str(key, None, *fallbacks)
        if value is None:
            return default
        try:
            return int(value.strip())
        except ValueError:
            raise InvalidArgument(
                f"Could not parse value '{value}' for key '{key}' as an integer"
            ) from None

    def get_bool(self, key: str, default: bool, *fallbacks: str) -> bool:
        value = self.get_str(key, None, *fallbacks)
        return default if value is None else parse_bool(value, key)

    def get_duration(
        self, key: str, default: timedelta | None = None, *fallbacks: str
    ) -> timedelta | None:
        value = self.get_str(key, None, *fallbacks)
        return default if value is None else parse_duration(value)

    def get_memory_size(self, key: str, default: int | None = None, *fallbacks: str) -> int | None:
        value = self.get_str(key, None, *fallbacks)
        return default if value is None else parse_memory_size(value)

    def _list(self, key: str) -> list[str]:
        value = self.options.get(key)
        if not value or not value.strip():
            return []
        return [p.strip() for p in value.split(",") if p.strip()]

    def _level_map(self, key: str) -> dict[int, str]:
        """A ``<level>:<value>,...`` map option (Java's map type, keys parsed as levels)."""
        out: dict[int, str] = {}
        for part in self._list(key):
            level, sep, value = part.partition(":")
            try:
                if not sep:
                    raise ValueError(part)
                out[int(level.strip())] = value.strip().lower()
            except ValueError:
                raise InvalidArgument(
                    f"Could not parse value '{self.options[key]}' for key '{key}': expected "
                    "'<level>:<value>,...' such as '0:avro,3:parquet'"
                ) from None
        return out

    # ---------------------------------------------------------------- layout and formats

    @cached_property
    def bucket(self) -> int:
        """``bucket``: -1 dynamic (PK) / unaware (append), -2 postpone, N fixed."""
        return self.get_int(self.BUCKET, -1)  # type: ignore[return-value]

    @cached_property
    def bucket_key(self) -> list[str]:
        """``bucket-key`` columns ([] when unset: the primary key, or the whole row)."""
        return self._list(self.BUCKET_KEY)

    @cached_property
    def file_format(self) -> str:
        return (self.get_str(self.FILE_FORMAT, "parquet") or "parquet").lower()

    @cached_property
    def file_compression(self) -> str:
        """``file.compression``: zstd, Paimon's default since 0.9 and still the latest one
        (0.8 had none and left it to each format's own default)."""
        return (self.get_str(self.FILE_COMPRESSION, "zstd") or "zstd").lower()

    @cached_property
    def file_format_per_level(self) -> dict[int, str]:
        """``file.format.per.level`` ('0:avro,3:parquet'): the format of primary-key files
        written at a level; levels not listed use ``file.format``."""
        return self._level_map("file.format.per.level")

    @cached_property
    def file_compression_per_level(self) -> dict[int, str]:
        """``file.compression.per.level`` ('0:lz4,1:zstd'), as ``file_format_per_level``."""
        return self._level_map("file.compression.per.level")

    @cached_property
    def file_compression_zstd_level(self) -> int:
        return self.get_int("file.compression.zstd-level", 1)  # type: ignore[return-value]

    @cached_property
    def manifest_compression(self) -> str:
        return (self.get_str(self.MANIFEST_COMPRESSION, "zstd") or "zstd").lower()

    @cached_property
    def manifest_target_file_size(self) -> int:
        return self.get_memory_size(self.MANIFEST_TARGET_FILE_SIZE, 8 * MIB)  # type: ignore[return-value]

    @cached_property
    def manifest_full_compaction_threshold_size(self) -> int:
        return self.get_memory_size(self.MANIFEST_FULL_COMPACTION_SIZE, 16 * MIB)  # type: ignore[return-value]

    @cached_property
    def manifest_merge_min_count(self) -> int:
        return self.get_int(self.MANIFEST_MERGE_MIN_COUNT, 30)  # type: ignore[return-value]

    def target_file_size(self, has_primary_key: bool) -> int:
        """``target-file-size``: 128 MiB for primary-key tables, 256 MiB for append tables."""
        default = 128 * MIB if has_primary_key else 256 * MIB
        return self.get_memory_size("target-file-size", default)  # type: ignore[return-value]

    @cached_property
    def data_file_prefix(self) -> str:
        return self.get_str("data-file.prefix", DATA_PREFIX) or DATA_PREFIX

    @cached_property
    def file_suffix_include_compression(self) -> bool:
        return self.get_bool("file.suffix.include.compression", False)

    @cached_property
    def stats_mode(self) -> str:
        """``metadata.stats-mode``: none, counts, truncate(N) or full."""
        return (self.get_str(self.STATS_MODE, "truncate(16)") or "truncate(16)").strip().lower()

    def field_stats_mode(self, field_name: str) -> str:
        """``fields.<name>.stats-mode``, falling back to ``metadata.stats-mode``."""
        value = self.options.get(f"fields.{field_name}.stats-mode")
        return value.strip().lower() if value is not None else self.stats_mode

    @cached_property
    def stats_dense_store(self) -> bool:
        return self.get_bool("metadata.stats-dense-store", True)

    @cached_property
    def partition_default_name(self) -> str:
        return self.get_str(self.PARTITION_DEFAULT_NAME, DEFAULT_PARTITION_NAME) or ""

    # ---------------------------------------------------------------- table semantics

    @cached_property
    def merge_engine(self) -> str:
        return _enum(
            self.get_str(self.MERGE_ENGINE, "deduplicate") or "deduplicate",
            self.MERGE_ENGINE,
            ("deduplicate", "partial-update", "aggregation", "first-row"),
        )

    @cached_property
    def sequence_field(self) -> list[str]:
        """``sequence.field`` columns ([] when unset)."""
        return self._list(self.SEQUENCE_FIELD)

    @cached_property
    def deletion_vectors_enabled(self) -> bool:
        return self.get_bool(self.DELETION_VECTORS_ENABLED, False)

    @cached_property
    def deletion_vectors_merge_on_read(self) -> bool:
        """Paimon 2.0: batch reads of a deletion-vector table merge its level-0 files in
        rather than leave them out until a compaction moves them up."""
        return self.get_bool(self.DELETION_VECTORS_MERGE_ON_READ, False)

    @cached_property
    def dynamic_bucket_target_row_num(self) -> int:
        return self.get_int(self.DYNAMIC_BUCKET_TARGET_ROW_NUM, 2_000_000)  # type: ignore[return-value]

    @cached_property
    def zorder_var_length_contribution(self) -> int:
        """Bytes a CHAR/VARCHAR/BINARY/VARBINARY column gives a z-value (Java's ``varTypeSize``)."""
        return self.get_int(self.ZORDER_VAR_LENGTH_CONTRIBUTION, 8)  # type: ignore[return-value]

    @cached_property
    def changelog_producer(self) -> str:
        """``changelog-producer``: none, input, full-compaction or lookup."""
        return (self.get_str("changelog-producer", "none") or "none").strip().lower()

    @cached_property
    def changelog_file_prefix(self) -> str:
        return self.get_str("changelog-file.prefix", CHANGELOG_PREFIX) or CHANGELOG_PREFIX

    @cached_property
    def changelog_file_format(self) -> str | None:
        """``changelog-file.format``; None: the format of data files at the same level."""
        value = self.get_str("changelog-file.format")
        return value.strip().lower() if value else None

    @cached_property
    def changelog_file_compression(self) -> str | None:
        """``changelog-file.compression``; None: the compression of data files at the same
        level."""
        value = self.get_str("changelog-file.compression")
        return value.strip().lower() if value else None

    @cached_property
    def changelog_file_stats_mode(self) -> str | None:
        """``changelog-file.stats-mode``; None: ``metadata.stats-mode``."""
        value = self.get_str("changelog-file.stats-mode")
        return value.strip().lower() if value else None

    @cached_property
    def changelog_row_deduplicate(self) -> bool:
        """``changelog-producer.row-deduplicate``: no -U/+U pair for a key whose value a
        full compaction leaves as it was."""
        return self.get_bool("changelog-producer.row-deduplicate", False)

    @cached_property
    def changelog_row_deduplicate_ignore_fields(self) -> list[str]:
        return self._list("changelog-producer.row-deduplicate-ignore-fields")

    # ---------------------------------------------------------------- commit

    @cached_property
    def commit_max_retries(self) -> int:
        return self.get_int(self.COMMIT_MAX_RETRIES, 10)  # type: ignore[return-value]

    @cached_property
    def commit_min_retry_wait(self) -> timedelta:
        return self.get_duration("commit.min-retry-wait", timedelta(milliseconds=10))  # type: ignore[return-value]

    @cached_property
    def commit_max_retry_wait(self) -> timedelta:
        return self.get_duration("commit.max-retry-wait", timedelta(seconds=10))  # type: ignore[return-value]

    @cached_property
    def write_only(self) -> bool:
        """``write-only``: when true, commits never expire snapshots or create tags."""
        return self.get_bool(self.WRITE_ONLY, False)

    # ---------------------------------------------------------------- snapshot expiry

    @cached_property
    def snapshot_num_retained_min(self) -> int:
        return self.get_int(self.SNAPSHOT_NUM_RETAINED_MIN, 10)  # type: ignore[return-value]

    @cached_property
    def snapshot_num_retained_max(self) -> int:
        return self.get_int(self.SNAPSHOT_NUM_RETAINED_MAX, INTEGER_MAX)  # type: ignore[return-value]

    @cached_property
    def snapshot_time_retained(self) -> timedelta:
        return self.get_duration(self.SNAPSHOT_TIME_RETAINED, timedelta(hours=1))  # type: ignore[return-value]

    @cached_property
    def snapshot_expire_limit(self) -> int:
        return self.get_int(self.SNAPSHOT_EXPIRE_LIMIT, 50)  # type: ignore[return-value]

    @cached_property
    def snapshot_expire_execution_mode(self) -> str:
        return _enum(
            self.get_str(self.SNAPSHOT_EXPIRE_EXECUTION_MODE, "sync") or "sync",
            self.SNAPSHOT_EXPIRE_EXECUTION_MODE,
            ("sync", "async"),
        )

    @cached_property
    def snapshot_clean_empty_directories(self) -> bool:
        return self.get_bool(
            "snapshot.clean-empty-directories", False, "snapshot.expire.clean-empty-directories"
        )

    @cached_property
    def changelog_num_retained_min(self) -> int:
        """``changelog.num-retained.min``, else ``snapshot.num-retained.min``."""
        return self.get_int("changelog.num-retained.min", self.snapshot_num_retained_min)  # type: ignore[return-value]

    @cached_property
    def changelog_num_retained_max(self) -> int:
        return self.get_int("changelog.num-retained.max", self.snapshot_num_retained_max)  # type: ignore[return-value]

    @cached_property
    def changelog_time_retained(self) -> timedelta:
        return self.get_duration("changelog.time-retained", self.snapshot_time_retained)  # type: ignore[return-value]

    @cached_property
    def changelog_lifecycle_decoupled(self) -> bool:
        """Changelogs outlive snapshots iff any changelog retention exceeds the snapshot one."""
        return (
            self.changelog_num_retained_max > self.snapshot_num_retained_max
            or self.changelog_num_retained_min > self.snapshot_num_retained_min
            or self.changelog_time_retained > self.snapshot_time_retained
        )

    # ---------------------------------------------------------------- tags

    @cached_property
    def tag_automatic_creation(self) -> str:
        return _enum(
            self.get_str(self.TAG_AUTOMATIC_CREATION, "none") or "none",
            self.TAG_AUTOMATIC_CREATION,
            ("none", "process-time", "watermark", "batch"),
        )

    @cached_property
    def tag_creation_period(self) -> str:
        return _enum(
            self.get_str(self.TAG_CREATION_PERIOD, "daily") or "daily",
            self.TAG_CREATION_PERIOD,
            ("daily", "hourly", "two-hours"),
        )

    @cached_property
    def tag_creation_period_duration(self) -> timedelta | None:
        return self.get_duration("tag.creation-period-duration")

    @cached_property
    def tag_creation_delay(self) -> timedelta:
        return self.get_duration(self.TAG_CREATION_DELAY, timedelta(0))  # type: ignore[return-value]

    @cached_property
    def tag_period_formatter(self) -> str:
        return _enum(
            self.get_str(self.TAG_PERIOD_FORMATTER, "with_dashes") or "with_dashes",
            self.TAG_PERIOD_FORMATTER,
            ("with_dashes", "without_dashes", "without_dashes_and_spaces"),
        )

    @cached_property
    def tag_num_retained_max(self) -> int | None:
        return self.get_int(self.TAG_NUM_RETAINED_MAX)

    @cached_property
    def tag_default_time_retained(self) -> timedelta | None:
        return self.get_duration(self.TAG_DEFAULT_TIME_RETAINED)

    @cached_property
    def tag_automatic_completion(self) -> bool:
        return self.get_bool(self.TAG_AUTOMATIC_COMPLETION, False)

    @cached_property
    def tag_time_expire_enabled(self) -> bool:
        return self.get_bool("tag.time-expire-enabled", True)

    @cached_property
    def tag_batch_customized_name(self) -> str | None:
        return self.get_str("tag.batch.customized-name")

    # ---------------------------------------------------------------- time travel

    @cached_property
    def scan_snapshot_id(self) -> int | None:
        return self.get_int("scan.snapshot-id")

    @cached_property
    def scan_tag_name(self) -> str | None:
        return self.get_str("scan.tag-name")

    @cached_property
    def scan_timestamp_millis(self) -> int | None:
        return self.get_int("scan.timestamp-millis")

    @cached_property
    def scan_timestamp(self) -> str | None:
        return self.get_str("scan.timestamp")

    @cached_property
    def scan_version(self) -> str | None:
        return self.get_str("scan.version")


def _to_option_string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)

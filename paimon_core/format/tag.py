"""Tags: a named snapshot kept beyond expiry, stored as ``tag/tag-<name>`` (format §1.3).

A tag file is the snapshot's JSON; only a tag with a retention time adds ``tagCreateTime``
(Java ``LocalDateTime`` as an array) and ``tagTimeRetained`` (``Duration`` as decimal seconds),
so that Paimon readers up to 0.7 can still read plain tags.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import ROUND_FLOOR, Decimal
from typing import Any

from paimon_core.exceptions import CorruptMetadata, InvalidTagName, TagNotFound
from paimon_core.format.names import check_path_segment
from paimon_core.format.paths import TAG_DIR, TAG_PREFIX, branch_path, is_main_branch
from paimon_core.format.snapshot import (
    RawJson,
    Snapshot,
    corrupt_file,
    jackson_json,
    load_json,
    require_manifest_lists,
    snapshot_from_dict,
    snapshot_to_dict,
    snapshot_to_json,
)
from paimon_core.io.fileio import FileIO

__all__ = ["TAG_PREFIX", "Tag", "TagManager", "tag_from_json", "tag_to_json"]

TAG_CREATE_TIME = "tagCreateTime"
TAG_TIME_RETAINED = "tagTimeRetained"

_ISO_DURATION = re.compile(
    r"([-+]?)P(?:([-+]?\d+)D)?"
    r"(?:T(?:([-+]?\d+)H)?(?:([-+]?\d+)M)?(?:([-+]?\d+)(?:[.,](\d{0,9}))?S)?)?",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Tag:
    """A snapshot under a name, with an optional retention (TTL) counted from creation."""

    snapshot: Snapshot
    tag_create_time: datetime | None = None
    tag_time_retained: timedelta | None = None

    @property
    def snapshot_id(self) -> int:
        return self.snapshot.snapshot_id

    def is_expired(self, now: datetime) -> bool:
        """True when the retention has passed (never for tags without one)."""
        if self.tag_time_retained is None or self.tag_create_time is None:
            return False
        return now - self.tag_time_retained > self.tag_create_time


def local_date_time_to_json(value: datetime) -> list[int]:
    """Jackson's ``LocalDateTime`` array: trailing zero second and nanos are dropped."""
    out = [value.year, value.month, value.day, value.hour, value.minute]
    nanos = value.microsecond * 1000
    if value.second or nanos:
        out.append(value.second)
        if nanos:
            out.append(nanos)
    return out


def local_date_time_from_json(value: Any) -> datetime:
    """Array ``[y, m, d, H, M(, S(, nanos))]`` or an ISO string; nanos truncate to micros."""
    if isinstance(value, str):
        head, dot, frac = value.partition(".")
        text = head + (("." + frac[:6].ljust(6, "0")) if dot else "")
        return datetime.fromisoformat(text)
    parts = [int(v) for v in value] + [0] * (7 - len(value))
    year, month, day, hour, minute, second, nanos = parts[:7]
    return datetime(year, month, day, hour, minute, second, nanos // 1000)


def duration_to_json(value: timedelta) -> RawJson:
    """Jackson's ``Duration``: decimal seconds with 9 fraction digits, e.g. ``5.000000000``."""
    micros = (value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds
    sign = "-" if micros < 0 else ""
    seconds, rest = divmod(abs(micros), 1_000_000)
    return RawJson(f"{sign}{seconds}.{rest * 1000:09d}")


def duration_from_json(value: Any) -> timedelta:
    """Decimal seconds (``5.000000000``, ``86400.0``, ``5``) or an ISO-8601 ``PT..`` string."""
    if isinstance(value, str):
        match = _ISO_DURATION.fullmatch(value.strip())
        if match is None:
            return duration_from_json(Decimal(value.strip()))
        neg, days, hours, minutes, secs, frac = match.groups()
        micros = (int(frac[:6].ljust(6, "0")) if frac else 0) * (
            -1 if (secs or "").startswith("-") else 1
        )
        delta = timedelta(
            days=int(days or 0),
            hours=int(hours or 0),
            minutes=int(minutes or 0),
            seconds=int(secs or 0),
            microseconds=micros,
        )
        return -delta if neg == "-" else delta
    micros = (Decimal(str(value)) * 1_000_000).to_integral_value(rounding=ROUND_FLOOR)
    return timedelta(microseconds=int(micros))


def tag_to_dict(tag: Tag) -> dict[str, Any]:
    data = snapshot_to_dict(tag.snapshot)
    if tag.tag_time_retained is not None:
        if tag.tag_create_time is not None:
            data[TAG_CREATE_TIME] = local_date_time_to_json(tag.tag_create_time)
        data[TAG_TIME_RETAINED] = duration_to_json(tag.tag_time_retained)
    return data


def tag_to_json(tag: Tag) -> str:
    """The tag file: exactly the snapshot JSON without a retention, else with both tag keys."""
    if tag.tag_time_retained is None:
        return snapshot_to_json(tag.snapshot)
    return jackson_json(tag_to_dict(tag))


def tag_from_dict(data: Mapping[str, Any]) -> Tag:
    """A tag from its JSON object; ``CorruptMetadata`` when it is not one."""
    snapshot = snapshot_from_dict(data)
    create = data.get(TAG_CREATE_TIME)
    retained = data.get(TAG_TIME_RETAINED)
    try:
        create_time = local_date_time_from_json(create) if create is not None else None
    except (TypeError, ValueError, ArithmeticError):
        raise CorruptMetadata(f"'{TAG_CREATE_TIME}' {create!r} is not a date-time") from None
    try:
        time_retained = duration_from_json(retained) if retained is not None else None
    except (TypeError, ValueError, ArithmeticError):
        raise CorruptMetadata(f"'{TAG_TIME_RETAINED}' {retained!r} is not a duration") from None
    return Tag(snapshot, create_time, time_retained)


def tag_from_json(text: str | bytes) -> Tag:
    """Parse a tag file of Java or pypaimon (pretty or compact, any number forms).

    Raises:
        CorruptMetadata: the text is not a tag.
    """
    return tag_from_dict(load_json(text, parse_float=Decimal))


class TagManager:
    """The tag files of one table (or branch): ``<table>/tag/tag-<name>``."""

    def __init__(self, file_io: FileIO, table_path: str, branch: str | None = None) -> None:
        self.file_io = file_io
        self.table_path = table_path.rstrip("/")
        self.branch = None if is_main_branch(branch) else branch
        self.tag_dir = f"{branch_path(self.table_path, branch)}/{TAG_DIR}"

    def tag_path(self, name: str) -> str:
        """``tag/tag-<name>`` of this branch, never outside it.

        Raises:
            InvalidTagName: a name that is not one directory entry
                (``names.check_path_segment``).
        """
        check_path_segment(name, "Tag name", InvalidTagName)
        return f"{self.tag_dir}/{TAG_PREFIX}{name}"

    def tag_exists(self, name: str) -> bool:
        return self.file_io.exists(self.tag_path(name))

    def get(self, name: str) -> Tag:
        """The tag ``name``.

        Raises:
            TagNotFound: there is no such tag.
            CorruptMetadata: the tag file cannot be read as a tag of a table.
        """
        path = self.tag_path(name)
        try:
            text = self.file_io.read_bytes(path)
        except FileNotFoundError:
            raise TagNotFound(f"Tag '{name}' doesn't exist.") from None
        try:
            tag = tag_from_json(text)
            require_manifest_lists(tag.snapshot)
        except CorruptMetadata as err:
            raise corrupt_file("Tag", path, err) from None
        return tag

    def try_get(self, name: str) -> Tag | None:
        """The tag, or None when it does not exist (deleted meanwhile); corrupt ones raise."""
        try:
            return self.get(name)
        except TagNotFound:
            return None

    def tag_names(self) -> list[str]:
        """Names of all tag files, sorted (hidden temp files are skipped)."""
        cut = len(TAG_PREFIX)
        return sorted(
            n[cut:]
            for n in self.file_io.list_names(self.tag_dir)
            if n.startswith(TAG_PREFIX) and len(n) > cut
        )

    def list_tags(self) -> dict[str, Tag]:
        """All tags by name, ordered by snapshot id then name (deleted-while-listing skipped).

        Raises:
            CorruptMetadata: a tag file cannot be read.
        """
        tags = [(name, tag) for name in self.tag_names() if (tag := self.try_get(name))]
        tags.sort(key=lambda item: (item[1].snapshot.snapshot_id, item[0]))
        return dict(tags)

    def write_tag(self, name: str, tag: Tag) -> None:
        """Create or replace the tag file atomically (Java's ``overwriteFileUtf8`` renames a
        temp file too): a crash leaves the old or the new tag, never a torn JSON that would
        break listing, rollback and orphan removal."""
        self.file_io.overwrite_atomic(self.tag_path(name), tag_to_json(tag).encode("utf-8"))

    def delete_tag_file(self, name: str) -> bool:
        """Delete the tag file only; False when it did not exist."""
        return self.file_io.delete(self.tag_path(name))

    def tagged_snapshot_ids(self) -> list[int]:
        """Distinct snapshot ids that some tag points to, sorted."""
        return sorted({tag.snapshot.snapshot_id for tag in self.list_tags().values()})

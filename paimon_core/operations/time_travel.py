"""Time travel: which snapshot a read sees, from the ``scan.*`` options (Paimon's ``TimeTravelUtil``).

``scan.version`` (Spark's ``VERSION AS OF``) is a tag name first, then ``watermark-<n>``, then
a snapshot id. ``scan.timestamp-millis`` picks the latest snapshot committed at or before the
time; when every such snapshot has expired, the closest earlier tag still holds one (the tag
proposal's rule; tag files keep the whole snapshot).
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from paimon_core.exceptions import InvalidArgument, PaimonError, SnapshotNotFound, TagNotFound

if TYPE_CHECKING:
    from paimon_core.format.snapshot import Snapshot
    from paimon_core.table import FileStoreTable

SCAN_SNAPSHOT_ID = "scan.snapshot-id"
SCAN_TAG_NAME = "scan.tag-name"
SCAN_WATERMARK = "scan.watermark"
SCAN_TIMESTAMP = "scan.timestamp"
SCAN_TIMESTAMP_MILLIS = "scan.timestamp-millis"
SCAN_VERSION = "scan.version"
SCAN_KEYS = (SCAN_SNAPSHOT_ID, SCAN_TAG_NAME, SCAN_WATERMARK, SCAN_TIMESTAMP, SCAN_TIMESTAMP_MILLIS)
WATERMARK_PREFIX = "watermark-"
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def has_time_travel(table: FileStoreTable) -> bool:
    """True when any ``scan.*`` option asks for an older state."""
    options = table.options
    return any(options.get_str(k) is not None for k in (SCAN_VERSION, *SCAN_KEYS))


def resolve_snapshot(table: FileStoreTable) -> Snapshot | None:
    """The snapshot a batch read of ``table`` sees: the travelled-to one, else the latest.

    Raises:
        InvalidArgument: more than one time-travel option, or an unparsable value.
        SnapshotNotFound: the snapshot (or any snapshot at that time) does not exist.
        TagNotFound: the tag does not exist.
    """
    options = table.options
    version = options.get_str(SCAN_VERSION)
    given = {k: options.get_str(k) for k in SCAN_KEYS if options.get_str(k) is not None}
    if version is not None:
        given.update(_adapt_version(table, version))
    if not given:
        return table.snapshot_manager.latest_snapshot()
    if len(given) > 1:
        raise InvalidArgument(
            "Only one of the following parameters may be set : [" + ", ".join(SCAN_KEYS) + "]"
        )
    ((key, value),) = given.items()
    if key == SCAN_SNAPSHOT_ID:
        return snapshot_by_id(table, _as_long(key, value))
    if key == SCAN_TAG_NAME:
        return table.tag_manager.get(value).snapshot
    if key == SCAN_WATERMARK:
        return snapshot_for_watermark(table, _as_long(key, value))
    if key == SCAN_TIMESTAMP:
        return snapshot_for_timestamp(table, parse_timestamp_millis(value))
    return snapshot_for_timestamp(table, _as_long(key, value))


def _adapt_version(table: FileStoreTable, version: str) -> dict[str, str]:
    if table.tag_manager.tag_exists(version):
        return {SCAN_TAG_NAME: version}
    if version.startswith(WATERMARK_PREFIX):
        return {SCAN_WATERMARK: version[len(WATERMARK_PREFIX) :]}
    if version.isascii() and version.isdigit():
        return {SCAN_SNAPSHOT_ID: version}
    raise TagNotFound(f"Cannot find a time travel version for {version}")


def _as_long(key: str, value: str) -> int:
    try:
        return int(value.strip())
    except ValueError:
        raise InvalidArgument(f"Could not parse value '{value}' for key '{key}'") from None


def snapshot_by_id(table: FileStoreTable, snapshot_id: int) -> Snapshot:
    """Snapshot ``snapshot_id``; SnapshotNotFound when it does not (or no longer) exist."""
    snapshot = table.snapshot_manager.try_snapshot(snapshot_id)
    if snapshot is None:
        raise SnapshotNotFound(f"Snapshot id '{snapshot_id}' doesn't exist.")
    return snapshot


def snapshot_for_version(table: FileStoreTable, version: str | int) -> Snapshot:
    """``VERSION AS OF version``: a tag of that name, ``watermark-<n>``, or a snapshot id."""
    ((key, value),) = _adapt_version(table, str(version).strip()).items()
    if key == SCAN_TAG_NAME:
        return table.tag_manager.get(value).snapshot
    if key == SCAN_WATERMARK:
        return snapshot_for_watermark(table, _as_long(key, value))
    return snapshot_by_id(table, int(value))


def snapshot_for_timestamp(table: FileStoreTable, millis: int) -> Snapshot:
    """The latest snapshot committed at or before ``millis``, else the closest earlier tag.

    Raises:
        SnapshotNotFound: nothing (snapshot or tag) is that old, with Paimon's message.
    """
    manager = table.snapshot_manager
    snapshot = manager.earlier_or_equal_time_millis(millis)
    if snapshot is not None:
        return snapshot
    tagged = [t.snapshot for t in table.tag_manager.list_tags().values()]
    older = [s for s in tagged if s.time_millis <= millis]
    if older:
        return max(older, key=lambda s: (s.time_millis, s.snapshot_id))
    earliest = manager.earliest_snapshot()
    earliest_time = "null" if earliest is None else str(earliest.time_millis)
    raise SnapshotNotFound(
        f"There is currently no snapshot earlier than or equal to timestamp [{millis}], "
        f"the earliest snapshot's timestamp is [{earliest_time}]"
    )


def snapshot_for_watermark(table: FileStoreTable, watermark: int) -> Snapshot:
    """The first snapshot whose watermark is at least ``watermark``."""
    for snapshot in table.snapshot_manager.snapshots():
        if snapshot.watermark is not None and snapshot.watermark >= watermark:
            return snapshot
    raise SnapshotNotFound(
        f"There is currently no snapshot later than or equal to watermark[{watermark}]"
    )


def parse_timestamp_millis(text: str) -> int:
    """``scan.timestamp``: ``yyyy-MM-dd[ HH:mm:ss[.SSS]]`` in the local time zone, as epoch millis."""
    try:
        value = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise InvalidArgument(
            f"Could not parse timestamp '{text}': expected 'yyyy-MM-dd HH:mm:ss[.SSS]'"
        ) from None
    if value.tzinfo is None:
        value = value.astimezone()  # naive means the local zone, as Java's TimeZone.getDefault()
    return (value - _EPOCH) // dt.timedelta(milliseconds=1)


def try_travel_snapshot(table: FileStoreTable) -> Snapshot | None:
    """The snapshot whose schema a read of ``table`` must use: the one its time-travel
    options resolve to; None without time travel, or when they do not resolve (Paimon's
    ``tryTimeTravel``: the scan then raises why)."""
    if not has_time_travel(table):
        return None
    try:
        return resolve_snapshot(table)
    except PaimonError:
        return None


def travel_table(table: FileStoreTable) -> tuple[FileStoreTable, Snapshot | None]:
    """The table with the schema of the snapshot its options travel to, and that snapshot.

    Paimon reads a travelled-to snapshot with that snapshot's schema; without time-travel
    options it is the table as given and its latest snapshot.

    Raises:
        InvalidArgument, SnapshotNotFound, TagNotFound: as ``resolve_snapshot``.
    """
    snapshot = resolve_snapshot(table)
    if snapshot is None or not has_time_travel(table):  # a plain read uses the latest schema
        return table, snapshot
    return table.with_schema_of(snapshot), snapshot

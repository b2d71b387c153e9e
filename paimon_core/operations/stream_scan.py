"""Streaming scans: where a stream starts and what each snapshot adds (Paimon's
``DataTableStreamScan`` with its starting scanners, follow-up scanners and
``NextSnapshotFetcher``).

A stream reads snapshot ids in order. Where it starts is a ``StartingContext`` (Java's): a
snapshot id and whether that snapshot is first read whole (``scan_full``: all its live
rows, merged as a batch read merges them) or only for its changes. ``scan.mode``:

* ``latest-full`` (``full``; ``default`` without other options): the latest snapshot whole,
  then the changes of every later one;
* ``latest``: the changes of snapshots after the latest;
* ``from-snapshot`` (``default`` with ``scan.snapshot-id``): the changes of that snapshot
  and later ones (not before the earliest snapshot);
* ``from-snapshot-full``: that snapshot whole (the earliest one if it expired), then changes;
* ``from-timestamp`` (``default`` with ``scan.timestamp-millis`` / ``scan.timestamp``): the
  changes of snapshots committed at or after that time.

A table without snapshots starts at snapshot 1, for its changes (``StartingContext.EMPTY``).
With ``consumer-id`` and an existing consumer (unless ``consumer.ignore-progress``) the
stream starts at the consumer's ``nextSnapshot``, for changes.

The changes of a snapshot (``StreamScan.changes``): with ``changelog-producer`` = ``none``
the files an APPEND snapshot adds (``DeltaFollowUpScanner``; COMPACT and OVERWRITE
snapshots add none), else the changelog files of any snapshot but an OVERWRITE
(``ChangelogFollowUpScanner``). They are read as written, with their row kinds
(``IncrementalSplit`` with ``streaming``), never merged. A snapshot expired before the
stream read it is an error naming it (``SnapshotExpired``); with a decoupled changelog
lifecycle its long-lived changelog (``changelog/changelog-N``) is read instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_core.exceptions import InvalidArgument, SnapshotExpired, UnsupportedFeature
from paimon_core.format.consumer import ConsumerManager
from paimon_core.format.names import validate_consumer_id
from paimon_core.format.snapshot import ChangelogManager
from paimon_core.operations.incremental import INCREMENTAL_KEYS, changed_files, changes_list
from paimon_core.operations.time_travel import (
    SCAN_SNAPSHOT_ID,
    SCAN_TAG_NAME,
    SCAN_TIMESTAMP,
    SCAN_TIMESTAMP_MILLIS,
    SCAN_VERSION,
    SCAN_WATERMARK,
    parse_timestamp_millis,
)

if TYPE_CHECKING:
    from paimon_core.format.snapshot import Snapshot
    from paimon_core.operations.scan import Split
    from paimon_core.operations.split_read import IncrementalSplit
    from paimon_core.table import FileStoreTable

__all__ = [
    "CONSUMER_ID",
    "CONSUMER_IGNORE_PROGRESS",
    "CONSUMER_MODE",
    "SCAN_MODE",
    "SnapshotChanges",
    "StartingContext",
    "StreamScan",
    "consumer_manager",
    "starting_context",
    "startup_mode",
]

SCAN_MODE = "scan.mode"
CONSUMER_ID = "consumer-id"
CONSUMER_IGNORE_PROGRESS = "consumer.ignore-progress"
CONSUMER_MODE = "consumer.mode"
STREAMING_READ_OVERWRITE = "streaming-read-overwrite"
_MODES = (
    "default",
    "full",
    "latest-full",
    "latest",
    "from-timestamp",
    "from-snapshot",
    "from-snapshot-full",
    "compacted-full",
    "from-file-creation-time",
    "from-creation-timestamp",
    "incremental",
    "latest-delta",
)
_CONSUMER_MODES = ("exactly-once", "at-least-once")


@dataclass(frozen=True, slots=True)
class StartingContext:
    """Where a stream starts: snapshot ``snapshot_id``, whole (``scan_full``) or its changes
    (Java's ``StartingContext``)."""

    snapshot_id: int
    scan_full: bool


EMPTY = StartingContext(1, False)


@dataclass(frozen=True, slots=True)
class SnapshotChanges:
    """What a stream reads of one snapshot: all its live rows (``full``: ``Split``\\ s,
    merged by the reader) or its changes (streaming ``IncrementalSplit``\\ s, possibly
    none), in a fixed order (partition bytes, bucket, as planned)."""

    snapshot_id: int
    full: bool
    splits: tuple[Split | IncrementalSplit, ...]


def startup_mode(table: FileStoreTable) -> str:
    """``scan.mode`` as Java's ``CoreOptions.startupMode``: ``default`` resolved by the
    other ``scan.*`` options, ``full`` as ``latest-full``.

    Raises:
        InvalidArgument: an unknown mode.
    """
    options = table.options
    mode = (options.get_str(SCAN_MODE, None, "log.scan") or "default").strip().lower()
    if mode not in _MODES:
        raise InvalidArgument(
            f"Could not parse value '{mode}' for key '{SCAN_MODE}': expected one of "
            f"{', '.join(_MODES)}"
        )
    if mode == "full":
        return "latest-full"
    if mode != "default":
        return mode
    given = {k for k in (*_SCAN_TRAVEL, *INCREMENTAL_KEYS) if options.get_str(k) is not None}
    if given & {SCAN_TIMESTAMP_MILLIS, SCAN_TIMESTAMP}:
        return "from-timestamp"
    if given & {SCAN_SNAPSHOT_ID, SCAN_TAG_NAME, SCAN_WATERMARK, SCAN_VERSION}:
        return "from-snapshot"
    if given & set(INCREMENTAL_KEYS):
        return "incremental"
    return "latest-full"


_SCAN_TRAVEL = (
    SCAN_SNAPSHOT_ID,
    SCAN_TAG_NAME,
    SCAN_WATERMARK,
    SCAN_VERSION,
    SCAN_TIMESTAMP,
    SCAN_TIMESTAMP_MILLIS,
)


def consumer_manager(table: FileStoreTable) -> ConsumerManager:
    """The consumers of ``table``'s branch."""
    return ConsumerManager(table.file_io, table.path, table.snapshot_manager.branch)


def consumer_id(table: FileStoreTable) -> str | None:
    """The option ``consumer-id`` (checked: one file name), with ``consumer.mode`` checked.

    Raises:
        InvalidArgument: a blank id or one with ``/``, or an unknown ``consumer.mode``.
    """
    options = table.options
    mode = (options.get_str(CONSUMER_MODE) or "exactly-once").strip().lower()
    if mode not in _CONSUMER_MODES:
        raise InvalidArgument(
            f"Could not parse value '{mode}' for key '{CONSUMER_MODE}': expected one of "
            f"{', '.join(_CONSUMER_MODES)}"
        )
    value = options.get_str(CONSUMER_ID)
    return None if value is None else validate_consumer_id(value)


def starting_context(table: FileStoreTable) -> StartingContext:
    """Where a new stream of ``table`` starts (Java's ``AbstractDataTableScan.
    createStartingScanner`` for streaming, then ``startingContext()``; see the module
    docstring), the consumer's progress first.

    Raises:
        InvalidArgument: a mode that cannot stream (a tag, a watermark, incremental,
            ``latest-delta``), ``from-snapshot-full`` without ``scan.snapshot-id``, or a
            bad option value.
        UnsupportedFeature: ``compacted-full`` and the file/creation time modes, and
            ``streaming-read-overwrite``.
    """
    options = table.options
    if options.get_bool(STREAMING_READ_OVERWRITE, False):
        raise UnsupportedFeature(f"'{STREAMING_READ_OVERWRITE}' = 'true' is not supported")
    manager = table.snapshot_manager
    consumer = consumer_id(table)
    if consumer is not None and not options.get_bool(CONSUMER_IGNORE_PROGRESS, False):
        found = consumer_manager(table).consumer(consumer)
        if found is not None:
            earliest = manager.earliest_snapshot_id()
            start = found.next_snapshot if earliest is None else max(found.next_snapshot, earliest)
            return StartingContext(start, False)
    mode = startup_mode(table)
    if mode == "latest-full":
        latest = manager.latest_snapshot_id()
        return EMPTY if latest is None else StartingContext(latest, True)
    if mode == "latest":
        latest = manager.latest_snapshot_id()
        return EMPTY if latest is None else StartingContext(latest + 1, False)
    if mode == "from-timestamp":
        millis = options.scan_timestamp_millis
        if millis is None:
            millis = parse_timestamp_millis(options.scan_timestamp or "")
        before = manager.earlier_or_equal_time_millis(millis - 1)
        if before is not None:
            return StartingContext(before.snapshot_id + 1, False)
        earliest = manager.earliest_snapshot_id()
        return EMPTY if earliest is None else StartingContext(earliest, False)
    if mode in ("from-snapshot", "from-snapshot-full"):
        snapshot_id = options.scan_snapshot_id
        if snapshot_id is None:
            if mode == "from-snapshot-full":
                raise InvalidArgument(
                    "scan.snapshot-id must be set when startupMode is FROM_SNAPSHOT_FULL."
                )
            if options.get_str(SCAN_WATERMARK) is not None:
                raise InvalidArgument("Cannot scan from watermark in streaming mode.")
            raise InvalidArgument("Cannot scan from tag in streaming mode.")
        earliest = manager.earliest_snapshot_id()
        start = snapshot_id if earliest is None else max(snapshot_id, earliest)
        return StartingContext(start, mode == "from-snapshot-full")
    if mode == "incremental":
        raise InvalidArgument("Cannot read incremental in streaming mode.")
    if mode == "latest-delta":
        raise InvalidArgument("'latest-delta' scan mode is only supported for batch sources.")
    raise UnsupportedFeature(f"Streaming reads with '{SCAN_MODE}' = '{mode}' are not supported")


class StreamScan:
    """Plans a stream's reads of ``table``, snapshot by snapshot (driver side; stateless but
    for the snapshots it has looked at)."""

    def __init__(self, table: FileStoreTable) -> None:
        self.table = table
        self.mode = "delta" if table.options.changelog_producer == "none" else "changelog"
        self._decoupled = table.options.changelog_lifecycle_decoupled
        self._changelogs = ChangelogManager(
            table.file_io, table.path, table.snapshot_manager.branch
        )

    def next_snapshot(self, snapshot_id: int) -> Snapshot | None:
        """Snapshot ``snapshot_id``, else its long-lived changelog (decoupled lifecycle); None
        when it is not committed yet (Java's ``NextSnapshotFetcher``, with its range check
        made every time).

        Raises:
            SnapshotExpired: it was expired, or ids jumped past it (a recreated table).
        """
        manager = self.table.snapshot_manager
        snapshot = manager.try_snapshot(snapshot_id)
        if snapshot is not None:
            return snapshot
        if self._decoupled:
            changelog = self._changelogs.try_snapshot(snapshot_id)
            if changelog is not None:
                return changelog
        earliest = manager.earliest_snapshot_id()
        latest = manager.latest_snapshot_id()
        if earliest is None or earliest <= snapshot_id:
            if (earliest is None and snapshot_id > 1) or (
                latest is not None and snapshot_id > latest + 1
            ):
                raise SnapshotExpired(
                    "The next expected snapshot is too big! Most possible cause might be the "
                    f"table had been recreated. The next snapshot id is {snapshot_id}, while "
                    f"the latest snapshot id is {latest}"
                )
            if latest is not None and snapshot_id <= latest:
                snapshot = manager.try_snapshot(snapshot_id)  # committed since the first look
                if snapshot is None:  # vanished meanwhile: expired
                    raise self._expired(snapshot_id, manager.earliest_snapshot_id(), latest)
                return snapshot
            return None
        raise self._expired(snapshot_id, earliest, latest)

    def _expired(self, snapshot_id: int, earliest: int | None, latest: int | None) -> Exception:
        return SnapshotExpired(
            f"The wanted read snapshot with id {snapshot_id} of {self.table.identifier} has "
            f"expired (earliest snapshot: {earliest}, latest: {latest}). You can: 1. increase "
            "the snapshot or changelog expiration time. 2. use consumer-id to ensure that "
            "unconsumed snapshots will not be expired."
        )

    def changes(self, snapshot_id: int, full: bool) -> SnapshotChanges | None:
        """What the stream reads of snapshot ``snapshot_id``: all its live rows (``full``) or
        its changes; None when it is not committed yet.

        Raises:
            SnapshotExpired: the snapshot was expired before the stream read it.
        """
        snapshot = self.next_snapshot(snapshot_id)
        if snapshot is None:
            return None
        if full:
            if self.table.snapshot_manager.try_snapshot(snapshot_id) is None:
                raise self._expired(
                    snapshot_id,
                    self.table.snapshot_manager.earliest_snapshot_id(),
                    self.table.snapshot_manager.latest_snapshot_id(),
                )
            splits = self.table.new_scan().plan(snapshot=snapshot)
            ordered = sorted(splits, key=lambda s: (s.partition, s.bucket))
            return SnapshotChanges(snapshot_id, True, tuple(ordered))
        name = changes_list(snapshot, self.mode)
        files = changed_files(self.table, [name], snapshot_id) if name else ()
        return SnapshotChanges(snapshot_id, False, files)

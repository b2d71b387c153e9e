"""Incremental reads: what changed between two snapshots (Paimon's ``incremental-between``).

A table handle whose options hold ``incremental-between`` (two snapshot ids or two tags),
``incremental-between-timestamp`` (two epoch millis or ``yyyy-MM-dd HH:mm:ss`` local times)
or ``incremental-to-auto-tag`` (an auto-created tag, diffed with the auto tag before it)
reads changes instead of a snapshot, planned as Paimon's ``createIncrementalStartingScanner``:

* delta mode (``incremental-between-scan-mode`` = ``auto``/``delta``; the default for
  snapshot ids and timestamps): the data files the APPEND commits in ``(start, end]`` added,
  read as they are (``IncrementalDeltaStartingScanner``); ``changelog`` reads the changelog
  files of every commit but OVERWRITE instead (``auto`` means that when a
  ``changelog-producer`` is set);
* diff mode (``diff``; always for two tags and for ``incremental-to-auto-tag``): per bucket,
  the live files at the start and at the end, files in both left out, read as the difference
  of the two states (``IncrementalDiffStartingScanner``).

Deletion vectors (``deletion-vectors.enabled``), as latest Paimon: delta and changelog reads
apply none (the files added are read as they were written, and the OVERWRITE or COMPACT
commits that only change vectors add no files), so a row appended in the range and deleted
by a vector later is still in the delta; a diff reads each side with its own snapshot's
vectors, so such a row is gone from the end state (append tables: the files the end adds,
without their deleted rows).

The splits are ``IncrementalSplit``\\ s for ``SplitRead`` (``paimon_core.operations.split_read``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_core.exceptions import InvalidArgument, PaimonError
from paimon_core.format.manifest import FileKind
from paimon_core.format.snapshot import CommitKind
from paimon_core.format.tag_period import period_handler
from paimon_core.operations.deletion_vectors import snapshot_deletion_files
from paimon_core.operations.split_read import IncrementalSplit
from paimon_core.operations.time_travel import (
    SCAN_KEYS,
    SCAN_TIMESTAMP,
    SCAN_TIMESTAMP_MILLIS,
    SCAN_VERSION,
    parse_timestamp_millis,
    snapshot_by_id,
)

if TYPE_CHECKING:
    from paimon_core.format.deletion_vectors import DeletionFile
    from paimon_core.format.manifest import ManifestEntry
    from paimon_core.format.snapshot import Snapshot
    from paimon_core.table import FileStoreTable

__all__ = [
    "INCREMENTAL_BETWEEN",
    "INCREMENTAL_BETWEEN_SCAN_MODE",
    "INCREMENTAL_BETWEEN_TAG_TO_SNAPSHOT",
    "INCREMENTAL_BETWEEN_TIMESTAMP",
    "INCREMENTAL_KEYS",
    "INCREMENTAL_TO_AUTO_TAG",
    "InconsistentBuckets",
    "IncrementalPlan",
    "changed_files",
    "changes_list",
    "incremental_partitions",
    "is_incremental",
    "plan_incremental",
]

INCREMENTAL_BETWEEN = "incremental-between"
INCREMENTAL_BETWEEN_TIMESTAMP = "incremental-between-timestamp"
INCREMENTAL_TO_AUTO_TAG = "incremental-to-auto-tag"
INCREMENTAL_BETWEEN_SCAN_MODE = "incremental-between-scan-mode"
INCREMENTAL_BETWEEN_TAG_TO_SNAPSHOT = "incremental-between-tag-to-snapshot"
INCREMENTAL_KEYS = (INCREMENTAL_BETWEEN, INCREMENTAL_BETWEEN_TIMESTAMP, INCREMENTAL_TO_AUTO_TAG)
_SCAN_MODES = ("auto", "delta", "changelog", "diff")
_CONFLICT_ORDER = (INCREMENTAL_BETWEEN_TIMESTAMP, INCREMENTAL_BETWEEN, INCREMENTAL_TO_AUTO_TAG)


class InconsistentBuckets(PaimonError):
    """A diff between snapshots whose bucket numbers differ (Paimon's
    ``InconsistentTagBucketException``): Paimon-Spark then reads the end snapshot EXCEPT the
    start snapshot, which ``start_id`` and ``end_id`` name."""

    def __init__(self, start_id: int, end_id: int, message: str) -> None:
        super().__init__(message)
        self.start_id = start_id
        self.end_id = end_id


@dataclass(frozen=True, slots=True)
class IncrementalPlan:
    """What an incremental read reads: ``splits``, or (``full``) all of one snapshot, as
    Paimon's diff between timestamps does when the start precedes the first snapshot."""

    splits: tuple[IncrementalSplit, ...] = ()
    full: Snapshot | None = None
    end: Snapshot | None = None
    """A diff's end snapshot, whose partitions the read lists (``incremental_partitions``)."""


_EMPTY = IncrementalPlan()


def is_incremental(table: FileStoreTable) -> bool:
    """Whether reads of ``table`` are incremental; time travel options alongside are refused
    as Paimon's ``SchemaValidation`` refuses them.

    Raises:
        InvalidArgument: more than one incremental option, or one with a time travel option.
    """
    options = table.options
    given = [k for k in INCREMENTAL_KEYS if options.get_str(k) is not None]
    if not given:
        return False
    if any(options.get_str(k) is not None for k in (SCAN_VERSION, *SCAN_KEYS)):
        by_time = any(
            options.get_str(k) is not None for k in (SCAN_TIMESTAMP_MILLIS, SCAN_TIMESTAMP)
        )
        legal = (
            "scan.timestamp-millis,scan.timestamp" if by_time else "scan.snapshot-id,scan.tag-name"
        )
        first = next(k for k in _CONFLICT_ORDER if k in given)
        raise InvalidArgument(f"[{first}] must be null when you set [{legal}]")
    if len(given) > 1:
        raise InvalidArgument(
            f"must set only one key in [{','.join(INCREMENTAL_KEYS)}] when you use "
            "INCREMENTAL for scan.mode"
        )
    return True


def plan_incremental(table: FileStoreTable) -> IncrementalPlan:
    """The splits of the incremental read ``table``'s options ask for.

    Raises:
        InvalidArgument: malformed or inconsistent option values, with Paimon's messages.
        SnapshotNotFound, TagNotFound: a snapshot or tag the options name does not exist.
        InconsistentBuckets: a diff across a bucket rescale.
        UnsupportedFeature: a table feature this reader lacks, or files that need one
            (``TableScan.check_readable``, ``check_files``).
    """
    scan = table.new_scan()
    scan.check_readable()
    plan = _plan(table)
    scan.check_files(f for s in plan.splits for f in (*s.before_files, *s.files))
    return plan


def _plan(table: FileStoreTable) -> IncrementalPlan:
    options = table.options
    if options.get_str(INCREMENTAL_BETWEEN) is not None:
        return _between(table, options.get_str(INCREMENTAL_BETWEEN) or "")
    if options.get_str(INCREMENTAL_BETWEEN_TIMESTAMP) is not None:
        return _between_timestamps(table, options.get_str(INCREMENTAL_BETWEEN_TIMESTAMP) or "")
    if options.get_str(INCREMENTAL_TO_AUTO_TAG) is not None:
        return _to_auto_tag(table, options.get_str(INCREMENTAL_TO_AUTO_TAG) or "")
    raise InvalidArgument("Unknown incremental read mode.")


def incremental_partitions(table: FileStoreTable, plan: IncrementalPlan) -> set[bytes]:
    """The partitions an incremental read lists (its starting scanner's ``scanPartitions``,
    what ``scan.fallback-branch`` counts as present): a diff's end snapshot's (the start is
    ignored), a full read's snapshot's, else those of the changes read."""
    snapshot = plan.full or plan.end
    if snapshot is not None:
        scan = table.new_scan()
        entries = scan.batch_entries(scan.read_entries(snapshot, lazy_files=True))
        return {e.partition for e in entries}
    return {s.partition for s in plan.splits}


# --------------------------------------------------------------------------- options


def _scan_mode(table: FileStoreTable) -> str:
    text = (table.options.get_str(INCREMENTAL_BETWEEN_SCAN_MODE) or "auto").strip().lower()
    if text not in _SCAN_MODES:
        raise InvalidArgument(
            f"Could not parse value '{text}' for key '{INCREMENTAL_BETWEEN_SCAN_MODE}': "
            f"expected one of {', '.join(m.upper() for m in _SCAN_MODES)}"
        )
    return text


def _snapshot_mode(table: FileStoreTable, mode: str) -> str:
    """``toSnapshotScanMode``: ``auto`` is changelog when a changelog producer is set."""
    if mode == "auto":
        return "delta" if table.options.changelog_producer == "none" else "changelog"
    return mode


def _between(table: FileStoreTable, text: str) -> IncrementalPlan:
    parts = text.split(",")
    if len(parts) != 2:
        raise InvalidArgument(
            "The incremental-between must specific start(exclusive) and end snapshot, for "
            "example, 'incremental-between'='5,10' means changes between snapshot 5 and "
            f"snapshot 10. But is: {text}"
        )
    left, right = parts
    tags = table.tag_manager
    start_tag, end_tag = tags.try_get(left), tags.try_get(right)
    manager = table.snapshot_manager
    if start_tag is not None and end_tag is not None:
        start, end = start_tag.snapshot, end_tag.snapshot
        if table.options.get_bool(INCREMENTAL_BETWEEN_TAG_TO_SNAPSHOT, False):
            mode = _snapshot_mode(table, _scan_mode(table))
            return _delta(table, start.snapshot_id, end.snapshot_id, mode, check_range=True)
        if end.snapshot_id < start.snapshot_id:
            raise InvalidArgument(
                f"Tag end {right} with snapshot id {end.snapshot_id} should be >= tag start "
                f"{left} with snapshot id {start.snapshot_id}"
            )
        return _EMPTY if start.snapshot_id == end.snapshot_id else _diff(table, start, end)
    try:
        start_id, end_id = int(left), int(right)
    except ValueError:
        raise InvalidArgument(
            f"Didn't find two tags for start '{left}' and end '{right}', and they are not two "
            "snapshot Ids. Please set two tags or two snapshot Ids."
        ) from None
    if end_id < start_id:
        raise InvalidArgument(
            f"Ending snapshotId {end_id} should >= starting snapshotId {start_id}."
        )
    if manager.earliest_snapshot_id() is None or start_id == end_id:
        return _EMPTY
    mode = _scan_mode(table)
    if mode == "diff":
        return _diff(table, snapshot_by_id(table, start_id), snapshot_by_id(table, end_id))
    return _delta(table, start_id, end_id, _snapshot_mode(table, mode), check_range=True)


def _timestamp(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        return parse_timestamp_millis(text)


def _between_timestamps(table: FileStoreTable, text: str) -> IncrementalPlan:
    parts = text.split(",")
    problem = (
        "The incremental-between-timestamp must specific start(exclusive) and end "
        f"timestamp. But is: {text}"
    )
    if len(parts) != 2:
        raise InvalidArgument(problem)
    try:
        start, end = _timestamp(parts[0]), _timestamp(parts[1])
    except InvalidArgument:
        raise InvalidArgument(problem) from None
    manager = table.snapshot_manager
    earliest, latest = manager.earliest_snapshot(), manager.latest_snapshot()
    if earliest is None or latest is None:
        return _EMPTY
    if end < start:
        raise InvalidArgument(f"Ending timestamp {end} should be >= starting timestamp {start}.")
    if start == end or start > latest.time_millis or end < earliest.time_millis:
        return _EMPTY
    mode = _scan_mode(table)
    start_snapshot = manager.earlier_or_equal_time_millis(start)
    end_snapshot = manager.earlier_or_equal_time_millis(end)
    if mode == "diff":
        final = end_snapshot or latest
        if start_snapshot is None:
            if earliest.snapshot_id == 1:
                return IncrementalPlan(full=final)
            start_snapshot = earliest
        return _diff(table, start_snapshot, final)
    start_id = (
        earliest.snapshot_id - 1
        if start_snapshot is None or earliest.time_millis > start
        else start_snapshot.snapshot_id
    )
    end_id = latest.snapshot_id if end_snapshot is None else end_snapshot.snapshot_id
    return _delta(table, start_id, end_id, _snapshot_mode(table, mode), check_range=False)


def _to_auto_tag(table: FileStoreTable, end_name: str) -> IncrementalPlan:
    handler = period_handler(table.options)
    if not handler.is_auto_tag(end_name):
        raise InvalidArgument(f"Specified tag '{end_name}' is not an auto-created tag.")
    tags = table.tag_manager.list_tags()
    end_tag = tags.get(end_name)
    if end_tag is None:
        return _EMPTY
    end_time = handler.tag_to_time(end_name)
    earlier = [
        (handler.tag_to_time(name), tag)
        for name, tag in tags.items()
        if handler.is_auto_tag(name) and handler.tag_to_time(name) < end_time
    ]
    if not earlier:
        return _EMPTY
    _, start_tag = max(earlier, key=lambda pair: pair[0])
    return _diff(table, start_tag.snapshot, end_tag.snapshot)


# --------------------------------------------------------------------------- planning


def _delta(
    table: FileStoreTable, start_id: int, end_id: int, mode: str, *, check_range: bool
) -> IncrementalPlan:
    """``IncrementalDeltaStartingScanner``: the files APPEND commits (delta) or all but
    OVERWRITE commits (changelog) in ``(start_id, end_id]`` added."""
    manager = table.snapshot_manager
    if check_range:
        earliest, latest = manager.earliest_snapshot_id(), manager.latest_snapshot_id()
        if earliest is None or latest is None or start_id < earliest - 1 or end_id > latest:
            raise InvalidArgument(
                f"The specified scan snapshotId range [{start_id}, {end_id}] is out of "
                f"available snapshotId range [{earliest}, {latest}]."
            )
    lists: list[str] = []
    for snapshot_id in range(start_id + 1, end_id + 1):
        name = changes_list(snapshot_by_id(table, snapshot_id), mode)
        if name:
            lists.append(name)
    return IncrementalPlan(changed_files(table, lists, end_id))


def changes_list(snapshot: Snapshot, mode: str) -> str | None:
    """The manifest list of ``snapshot``'s changes: its delta list when ``mode`` is
    ``delta`` and it is an APPEND commit (Java's ``DeltaFollowUpScanner``), its changelog
    list when ``mode`` is ``changelog`` and it is no OVERWRITE; None when it adds no changes
    read that way."""
    if mode == "delta":
        if snapshot.commit_kind != CommitKind.APPEND:
            return None  # COMPACT and OVERWRITE commits add no changes
        return snapshot.delta_manifest_list or None
    if snapshot.commit_kind == CommitKind.OVERWRITE:
        return None
    return snapshot.changelog_manifest_list or None


def changed_files(
    table: FileStoreTable, lists: Sequence[str], snapshot_id: int
) -> tuple[IncrementalSplit, ...]:
    """The files the manifest lists ``lists`` (deltas or changelogs) add, as streaming
    ``IncrementalSplit``\\ s of ``snapshot_id``, one per (partition, bucket) in that order.

    Raises:
        InvalidArgument: a list holds a DELETE entry (Paimon's check).
    """
    groups: dict[tuple[bytes, int], list[ManifestEntry]] = {}
    scan = table.new_scan()
    for entry in scan.batch_entries(scan.read_all_entries(list(lists))):
        if entry.kind != FileKind.ADD:
            raise InvalidArgument("Delta or changelog should only have ADD files.")
        groups.setdefault((entry.partition, entry.bucket), []).append(entry)
    return tuple(
        IncrementalSplit(
            partition,
            scan.partition_values(partition),
            bucket,
            (),
            tuple(e.file for e in entries),
            snapshot_id,
            streaming=True,
        )
        for (partition, bucket), entries in sorted(groups.items(), key=lambda kv: kv[0])
    )


def _by_bucket(entries: Iterable[ManifestEntry]) -> dict[tuple[bytes, int], list[ManifestEntry]]:
    groups: dict[tuple[bytes, int], list[ManifestEntry]] = {}
    for entry in entries:
        groups.setdefault((entry.partition, entry.bucket), []).append(entry)
    return groups


def _diff(table: FileStoreTable, start: Snapshot, end: Snapshot) -> IncrementalPlan:
    """``readIncrementalDiff``: per bucket, the live files of ``start`` and of ``end``
    with the files both hold left out (an entry equal in both, even when its deletion
    vector changed in between, as Paimon's ``deduplicate``); with ``deletion-vectors.enabled``
    each side's files carry their snapshot's deletion vectors (``toIncrementalPlan``), so
    rows deleted by vectors are gone from that side's state."""
    scan = table.new_scan()
    before = _by_bucket(scan.batch_entries(scan.read_entries(start)))
    after = _by_bucket(scan.batch_entries(scan.read_entries(end)))
    _check_buckets(table, start, before, end, after)
    before_vectors: dict[tuple[bytes, int], dict[str, DeletionFile]] = {}
    after_vectors: dict[tuple[bytes, int], dict[str, DeletionFile]] = {}
    if table.options.deletion_vectors_enabled:
        before_vectors = snapshot_deletion_files(table, start)
        after_vectors = snapshot_deletion_files(table, end)
    splits = []
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key, []), after.get(key, [])
        common = set(old) & set(new)
        old_files = tuple(e.file for e in old if e not in common)
        new_files = tuple(e.file for e in new if e not in common)
        if not old_files and not new_files:
            continue
        partition, bucket = key
        old_vectors, new_vectors = before_vectors.get(key, {}), after_vectors.get(key, {})
        splits.append(
            IncrementalSplit(
                partition,
                scan.partition_values(partition),
                bucket,
                old_files,
                new_files,
                end.snapshot_id,
                streaming=False,
                deletion_files=tuple(
                    new_vectors[f.file_name] for f in new_files if f.file_name in new_vectors
                ),
                before_deletion_files=tuple(
                    old_vectors[f.file_name] for f in old_files if f.file_name in old_vectors
                ),
            )
        )
    return IncrementalPlan(tuple(splits), end=end)


def _check_buckets(
    table: FileStoreTable,
    start: Snapshot,
    before: dict[tuple[bytes, int], list[ManifestEntry]],
    end: Snapshot,
    after: dict[tuple[bytes, int], list[ManifestEntry]],
) -> None:
    """``checkRescaleBucketForIncrementalDiffQuery``: a partition in both snapshots must have
    the same number of buckets in each (fixed-bucket tables only)."""
    if table.options.bucket == -1:
        return

    def numbers(groups: dict[tuple[bytes, int], list[ManifestEntry]]) -> dict[bytes, int | None]:
        out: dict[bytes, int | None] = {}
        for (partition, _), entries in groups.items():
            for e in entries:
                if e.total_buckets >= 0:
                    out[partition] = e.total_buckets
                else:
                    out.setdefault(partition, None)
        return out

    old, new = numbers(before), numbers(after)
    for partition, count in old.items():
        if partition not in new:
            continue
        if count is not None and new[partition] is not None and count == new[partition]:
            continue
        raise InconsistentBuckets(
            start.snapshot_id,
            end.snapshot_id,
            f"The bucket number of two snapshots are different ({count}, {new[partition]}), "
            "which is not supported in incremental diff query.",
        )

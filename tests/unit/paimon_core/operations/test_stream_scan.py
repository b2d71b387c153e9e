"""Streaming scans (``operations/stream_scan.py``) and the committer's ``filter_committed``."""

from __future__ import annotations

import pytest

from paimon_core.exceptions import InvalidArgument, SnapshotExpired, UnsupportedFeature
from paimon_core.format.consumer import Consumer
from paimon_core.format.snapshot import CommitKind
from paimon_core.lifecycle.expire import expire_snapshots
from paimon_core.operations.split_read import IncrementalSplit
from paimon_core.operations.stream_scan import (
    StartingContext,
    StreamScan,
    consumer_manager,
    starting_context,
)
from paimon_core.table import FileStoreTable
from tests.unit.paimon_core.helpers import kvd_batch, kvd_table


def three_snapshots(warehouse: str, **kw: object) -> FileStoreTable:
    t = kvd_table(warehouse, partition_keys=[], **kw)
    for ks in ([1, 2], [3], [4]):
        t.write_arrow(kvd_batch(ks))
    return t


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({}, StartingContext(3, True)),
        ({"scan.mode": "latest-full"}, StartingContext(3, True)),
        ({"scan.mode": "full"}, StartingContext(3, True)),
        ({"scan.mode": "latest"}, StartingContext(4, False)),
        ({"scan.snapshot-id": "2"}, StartingContext(2, False)),
        ({"scan.mode": "from-snapshot", "scan.snapshot-id": "2"}, StartingContext(2, False)),
        ({"scan.mode": "from-snapshot-full", "scan.snapshot-id": "2"}, StartingContext(2, True)),
        ({"scan.mode": "from-timestamp", "scan.timestamp-millis": "0"}, StartingContext(1, False)),
        ({"scan.timestamp-millis": str(2**62)}, StartingContext(4, False)),
    ],
)
def test_starting_context_of_each_scan_mode(
    warehouse: str, options: dict[str, str], expected: StartingContext
) -> None:
    t = three_snapshots(warehouse)
    assert starting_context(t.copy(options, time_travel=False)) == expected


def test_starting_context_of_an_empty_table_and_refused_modes(warehouse: str) -> None:
    t = kvd_table(warehouse, partition_keys=[])
    assert starting_context(t) == StartingContext(1, False)
    assert starting_context(t.copy({"scan.mode": "latest"})) == StartingContext(1, False)
    refused = [
        ({"scan.tag-name": "x"}, InvalidArgument, "from tag"),
        ({"incremental-between": "1,2"}, InvalidArgument, "incremental"),
        ({"scan.mode": "latest-delta"}, InvalidArgument, "batch sources"),
        ({"scan.mode": "from-snapshot-full"}, InvalidArgument, "scan.snapshot-id must be set"),
        ({"scan.mode": "compacted-full"}, UnsupportedFeature, "compacted-full"),
        ({"streaming-read-overwrite": "true"}, UnsupportedFeature, "streaming-read-overwrite"),
        ({"scan.mode": "nope"}, InvalidArgument, "scan.mode"),
        ({"consumer-id": "a/b"}, InvalidArgument, "must not contain"),
        ({"consumer-id": "c", "consumer.mode": "twice"}, InvalidArgument, "consumer.mode"),
    ]
    for options, error, message in refused:
        with pytest.raises(error, match=message):
            starting_context(t.copy(options, time_travel=False))


def test_a_consumer_decides_where_a_stream_starts(warehouse: str) -> None:
    t = three_snapshots(warehouse)
    consumer_manager(t).reset_consumer("c", Consumer(2))
    with_consumer = t.copy({"consumer-id": "c"})
    assert starting_context(with_consumer) == StartingContext(2, False)
    ignoring = t.copy({"consumer-id": "c", "consumer.ignore-progress": "true"})
    assert starting_context(ignoring) == StartingContext(3, True)
    assert starting_context(t.copy({"consumer-id": "other"})) == StartingContext(3, True)


def test_changes_are_the_delta_of_append_snapshots(warehouse: str) -> None:
    t = kvd_table(warehouse, partition_keys=[], primary_keys=["k"], options={"bucket": "1"})
    t.write_arrow(kvd_batch([1, 2]))
    t.write_arrow(kvd_batch([2, 3]))
    scan = StreamScan(t)
    full = scan.changes(2, True)
    assert full is not None and full.full
    assert sorted(t.new_read().to_arrow(list(full.splits)).column("k").to_pylist()) == [1, 2, 3]
    delta = scan.changes(2, False)
    assert delta is not None and not delta.full
    assert all(isinstance(s, IncrementalSplit) and s.streaming for s in delta.splits)
    assert sum(s.row_count for s in delta.splits) == 2  # the rows written by snapshot 2
    assert scan.changes(3, False) is None  # not committed yet


def test_compact_snapshots_add_no_changes_without_a_changelog(warehouse: str) -> None:
    t = kvd_table(
        warehouse,
        partition_keys=[],
        primary_keys=["k"],
        options={"bucket": "1", "num-sorted-run.compaction-trigger": "2"},
    )
    t.write_arrow(kvd_batch([1]))
    t.write_arrow(kvd_batch([1]))
    snapshots = t.snapshot_manager.snapshots()
    compacts = [s.snapshot_id for s in snapshots if s.commit_kind == CommitKind.COMPACT]
    assert compacts  # the second write compacted the bucket
    changes = StreamScan(t).changes(compacts[0], False)
    assert changes is not None and changes.splits == ()


def test_changelog_producer_streams_changelog_files(warehouse: str) -> None:
    t = kvd_table(
        warehouse,
        partition_keys=[],
        primary_keys=["k"],
        options={"bucket": "1", "changelog-producer": "input"},
    )
    t.write_arrow(kvd_batch([1, 2]))
    changes = StreamScan(t).changes(1, False)
    assert changes is not None
    names = {f.file_name for s in changes.splits for f in s.files}
    assert names and all(n.startswith("changelog-") for n in names)


def test_an_expired_snapshot_is_named(warehouse: str) -> None:
    t = three_snapshots(warehouse)
    t.write_arrow(kvd_batch([5]))
    expire_snapshots(t, retain_max=1, retain_min=1, older_than_millis=2**62)
    scan = StreamScan(t)
    with pytest.raises(SnapshotExpired, match=r"snapshot with id 2 of db\.t has expired"):
        scan.changes(2, False)
    with pytest.raises(SnapshotExpired, match=r"snapshot with id 3 of db\.t has expired"):
        scan.changes(3, True)
    with pytest.raises(SnapshotExpired, match="too big"):
        scan.changes(9, False)
    assert scan.changes(5, False) is None


def test_filter_committed_knows_the_users_identifiers(warehouse: str) -> None:
    t = kvd_table(warehouse, partition_keys=[])
    commit = t.new_commit("stream-user")
    write = t.new_write()
    write.write_arrow(kvd_batch([1]))
    commit.commit(write.prepare_commit(), 7)
    t.write_arrow(kvd_batch([2]))  # another user's snapshot after it
    again = t.new_commit("stream-user")
    assert again.filter_committed([6, 7, 8, 9]) == [8, 9]
    assert t.new_commit("someone-else").filter_committed([7]) == [7]
    with pytest.raises(InvalidArgument, match="sorted"):
        again.filter_committed([8, 8])
    strict = t.copy({"commit.strict-mode.last-safe-snapshot": "1"}).new_commit("stream-user")
    assert strict.filter_committed([7]) == [7]  # snapshot 1 is before the searched range

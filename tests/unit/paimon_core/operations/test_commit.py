"""Commit: atomic publish, retries between processes, conflicts, overwrite, failure cleanup."""

from __future__ import annotations

import glob
import multiprocessing
import os
import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import (
    AtomicCreateUnsupported,
    CommitConflict,
    CommitFileMissing,
    CommitOutcomeUnknown,
    CorruptMetadata,
    InvalidArgument,
)
from paimon_core.format.commit_message import CommitMessage
from paimon_core.format.snapshot import CommitKind
from paimon_core.io.fileio import LocalFileIO, PyArrowFileIO
from paimon_core.lifecycle.orphan import remove_orphan_files
from paimon_core.lifecycle.rollback import rollback_to_snapshot
from paimon_core.operations import live_files
from paimon_core.operations.commit import PUBLISHED
from paimon_core.operations.read import data_file_path
from paimon_core.table import FileStoreTable
from tests.unit.paimon_core.helpers import FailingIO

SCHEMA = pa.schema([("k", pa.int64()), ("v", pa.string()), ("dt", pa.string())])


def _table(warehouse: str, name: str = "t", **kw: Any) -> FileStoreTable:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    return catalog.create_table(f"db.{name}", SCHEMA, **kw)


def _batch(ks: list[int], dt: str = "a") -> pa.Table:
    return pa.table({"k": ks, "v": [f"v{k}" for k in ks], "dt": [dt] * len(ks)}, schema=SCHEMA)


def _keys(table: FileStoreTable, **scan: Any) -> list[int]:
    return sorted(table.to_arrow(**scan).column("k").to_pylist())


def _listing(root: str) -> set[str]:
    return {os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs}


def test_record_counts_and_kinds(warehouse: str) -> None:
    table = _table(warehouse, partition_keys=["dt"])
    assert table.write_arrow(_batch([1, 2, 3], "a")) == 1
    assert table.write_arrow(_batch([4], "b")) == 2
    assert table.write_arrow(_batch([5, 6], "a"), overwrite=True) == 3
    snaps = table.snapshot_manager.snapshots()
    assert [s.commit_kind for s in snaps] == [
        CommitKind.APPEND,
        CommitKind.APPEND,
        CommitKind.OVERWRITE,
    ]
    assert [(s.total_record_count, s.delta_record_count) for s in snaps] == [
        (3, 3),
        (4, 1),
        (3, -1),
    ]
    assert _keys(table) == [4, 5, 6]


def test_static_partition_and_whole_table_overwrite(warehouse: str) -> None:
    table = _table(warehouse, partition_keys=["dt"])
    table.write_arrow(_batch([1, 2], "a"))
    table.write_arrow(_batch([3], "b"))
    table.write_arrow(_batch([9], "b"), overwrite={"dt": "b"})
    assert _keys(table) == [1, 2, 9]
    commit = table.new_commit()
    assert commit.truncate_table() == 4
    assert _keys(table) == []
    assert table.latest_snapshot().total_record_count == 0


def test_empty_commit_creates_no_snapshot(warehouse: str) -> None:
    table = _table(warehouse)
    assert table.new_commit().commit([]) is None
    assert table.snapshot_manager.latest_snapshot_id() is None


def test_deleting_a_file_another_commit_removed_is_a_conflict(warehouse: str) -> None:
    table = _table(warehouse, partition_keys=["dt"])
    table.write_arrow(_batch([1], "a"))
    stale = table.latest_snapshot()
    table.write_arrow(_batch([2], "a"), overwrite=True)  # removes the file of snapshot 1
    live_then = table.new_scan().read_entries(stale)
    gone = live_then[0]
    msg = CommitMessage(gone.partition, gone.bucket, gone.total_buckets, deleted_files=(gone.file,))
    before = _listing(table.path)
    with pytest.raises(CommitConflict, match="deletion conflicts"):
        table.new_commit().commit([msg])
    assert _listing(table.path) == before
    assert _keys(table) == [2]


def test_snapshot_taken_between_read_and_publish_is_retried(
    warehouse: str, monkeypatch: Any
) -> None:
    table = _table(warehouse)
    table.write_arrow(_batch([1]))
    rival = FileStoreTable.load(table.path)
    manager = table.snapshot_manager
    original = type(manager).commit
    raced = []

    def racing_commit(self: Any, snapshot: Any) -> bool:
        if not raced:
            raced.append(True)
            rival.write_arrow(_batch([2]))  # takes the id this commit is about to publish
        return original(self, snapshot)

    monkeypatch.setattr(type(manager), "commit", racing_commit)
    assert table.write_arrow(_batch([3])) == 3
    assert _keys(table) == [1, 2, 3]
    assert manager.list_snapshot_ids() == [1, 2, 3]
    manifests = set(os.listdir(os.path.join(table.path, "manifest")))
    referenced = set()
    for s in manager.snapshots():
        referenced |= {s.base_manifest_list, s.delta_manifest_list}
        for name in (s.base_manifest_list, s.delta_manifest_list):
            referenced |= {m.file_name for m in table.manifest_list.read(name)}
    assert manifests == referenced  # the lost attempt left nothing behind


def _commit_many(path: str, offset: int, n: int, barrier: Any, results: Any) -> None:
    table = FileStoreTable.load(path)
    warm_up = table.new_write()
    warm_up.write_arrow(_batch([offset]))
    table.new_commit().abort(warm_up.prepare_commit())
    ids = []
    for i in range(n):
        if i % 10 == 0:
            # Both processes start each round of 10 commits together, so that their commits
            # race, and each round's ids are shared by both (the id sets must interleave).
            barrier.wait(60)
        ids.append(table.write_arrow(_batch([offset + i])))
    results.put((offset, ids))


def test_two_processes_commit_50_times_each(warehouse: str) -> None:
    table = _table(warehouse, options={"commit.max-retries": "200"})
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(2), ctx.Queue()
    procs = [
        ctx.Process(target=_commit_many, args=(table.path, off, 50, barrier, results))
        for off in (0, 1000)
    ]
    for p in procs:
        p.start()
    owned = dict(results.get(timeout=120) for _ in procs)
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    assert table.snapshot_manager.list_snapshot_ids() == list(range(1, 101))
    assert sorted(owned[0] + owned[1000]) == list(range(1, 101))
    for ids in owned.values():  # the commits interleaved: no process owns one block of ids
        assert ids == sorted(ids) and ids[-1] - ids[0] + 1 > len(ids), ids
    assert _keys(table) == list(range(50)) + list(range(1000, 1050))
    assert table.latest_snapshot().total_record_count == 100


# Every file a commit creates, by whichever method; no deletes.
COMMIT_STEPS = ("write_bytes", "write_text", "write_no_clobber", "open_output", "overwrite_atomic")


def _fail_at_each_write_step(
    table: FileStoreTable, data: pa.Table, options: dict[str, str] | None = None
) -> list[str]:
    """Commit ``data`` once per write step of that commit, failing at that step; each time the
    previous snapshot must stay the table's state and no file of the failed commit remain.
    Returns the steps of the commit."""
    base = Path(table.path)
    previous = table.snapshot_manager.latest_snapshot_id()
    expected = _keys(table)
    before = _listing(str(base))

    def handle(io: FailingIO) -> FileStoreTable:
        return FileStoreTable(io, table.path, table.schema, dynamic_options=dict(options or {}))

    def undo() -> None:
        for rel in _listing(str(base)) - before:
            os.remove(base / rel)
        (base / "snapshot" / "LATEST").write_text(str(previous))

    probe = FailingIO(None, COMMIT_STEPS)
    handle(probe).write_arrow(data)
    steps = list(probe.steps)
    assert any(s.startswith(f"write_no_clobber snapshot-{previous + 1}") for s in steps), steps
    undo()  # every injected run starts from the previous snapshot
    for k, step in enumerate(steps):
        failing = handle(FailingIO(k, COMMIT_STEPS))
        if step.endswith(" LATEST"):
            failing.write_arrow(data)  # published: a lost hint is fine
            assert len(_keys(FileStoreTable.load(table.path))) == len(expected) + data.num_rows
            undo()
            continue
        with pytest.raises(OSError, match="injected"):
            failing.write_arrow(data)
        fresh = FileStoreTable.load(table.path)
        assert fresh.snapshot_manager.latest_snapshot_id() == previous, step
        assert _keys(fresh) == expected, step
        assert _listing(str(base)) == before, step
    return steps


@pytest.mark.parametrize("pk", [False, True], ids=["append", "primary-key"])
def test_failure_at_each_write_step_leaves_previous_snapshot(warehouse: str, pk: bool) -> None:
    kw: dict[str, Any] = {"partition_keys": ["dt"]}
    if pk:
        kw.update(primary_keys=["k", "dt"], options={"bucket": "2"})
    schema = (
        pa.schema(
            [
                pa.field("k", pa.int64(), False),
                ("v", pa.string()),
                pa.field("dt", pa.string(), False),
            ]
        )
        if pk
        else SCHEMA
    )
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    table = catalog.create_table("db.t", schema, **kw)
    table.write_arrow(_batch([1, 2], "a").cast(schema))
    _fail_at_each_write_step(table, _batch([3], "b").cast(schema))


def test_failure_while_merging_manifests_leaves_no_merged_manifest(warehouse: str) -> None:
    table = _table(warehouse, partition_keys=["dt"])
    for k in range(10):
        table.write_arrow(_batch([k], "a" if k % 2 else "b"))
    latest = table.latest_snapshot()
    metas = table.new_scan().read_manifest_metas(
        [latest.base_manifest_list, latest.delta_manifest_list]
    )
    assert len(metas) == 10
    # Groups of about three manifests reach the target size: minor compaction merges some.
    target = 3 * max(m.file_size for m in metas)
    merging = {"manifest.target-file-size": str(target), "manifest.merge-min-count": "3"}
    steps = _fail_at_each_write_step(table, _batch([99], "c"), merging)
    manifests = [s for s in steps if s.startswith("write_bytes manifest-")]
    assert len(manifests) >= 3, steps  # at least two merged groups, then the delta manifest


def _dup_table(warehouse: str) -> FileStoreTable:
    return _table(warehouse, partition_keys=["dt"], options={"bucket": "2", "bucket-key": "k"})


@pytest.mark.parametrize("cached", [True, False], ids=["same-process", "fresh-process"])
def test_committing_the_same_files_twice_is_a_conflict(warehouse: str, cached: bool) -> None:
    table = _dup_table(warehouse)
    table.write_arrow(_batch([1, 2, 3], "a"))
    write = table.new_write()
    write.write_arrow(_batch([4, 5], "b"))
    messages = write.prepare_commit()
    table.new_commit().commit(messages)
    table.write_arrow(_batch([6], "c"))
    if not cached:  # as a new process: the live files come from the manifests
        live_files.CACHE.clear()
    before = _listing(table.path)
    name = messages[0].new_files[0].file_name
    with pytest.raises(CommitConflict, match=f"File addition conflicts detected: {name}"):
        FileStoreTable.load(table.path).new_commit().commit(messages)
    assert _listing(table.path) == before
    assert table.snapshot_manager.latest_snapshot_id() == 3
    assert _keys(table) == [1, 2, 3, 4, 5, 6]
    # The table stays healthy: many more commits, manifest merging included.
    merging = table.copy({"manifest.merge-min-count": "3"})
    for k in range(10, 20):
        merging.write_arrow(_batch([k], "b"))
    assert _keys(table) == [1, 2, 3, 4, 5, 6, *range(10, 20)]


def test_a_file_added_twice_in_one_commit_is_a_conflict(warehouse: str) -> None:
    table = _dup_table(warehouse)
    write = table.new_write()
    write.write_arrow(_batch([1], "a"))
    (message,) = write.prepare_commit()
    before = _listing(table.path)
    with pytest.raises(CommitConflict, match="already in the table"):
        table.new_commit().commit([message, message])
    assert _listing(table.path) == before
    assert table.snapshot_manager.latest_snapshot_id() is None


def test_live_files_catch_up_with_other_writers(warehouse: str) -> None:
    table = _dup_table(warehouse)
    table.write_arrow(_batch([1], "a"))
    stale = live_files.CACHE.take(table.path)  # as of snapshot 1
    write = table.new_write()
    write.write_arrow(_batch([2], "a"))
    messages = write.prepare_commit()
    table.new_commit().commit(messages)  # snapshot 2, unknown to ``stale``
    table.write_arrow(_batch([3], "a"), overwrite=True)  # snapshot 3 deletes 1 and 2
    assert stale is not None and stale.snapshot.snapshot_id == 1
    live_files.CACHE.give_back(table.path, stale)
    gone = messages[0]
    delete = CommitMessage(
        gone.partition, gone.bucket, gone.total_buckets, deleted_files=gone.new_files
    )
    with pytest.raises(CommitConflict, match="deletion conflicts"):
        table.new_commit().commit([delete])
    assert table.snapshot_manager.latest_snapshot_id() == 3
    # The old state was moved forward by the two deltas, not read again.
    assert live_files.CACHE.take(table.path) is stale and stale.snapshot.snapshot_id == 3
    live = table.new_scan().read_entries(table.latest_snapshot())
    assert {e.identifier for e in live} == set(stale.entries) and len(live) == 1


def test_live_files_of_a_rolled_back_snapshot_are_not_trusted(warehouse: str) -> None:
    table = _dup_table(warehouse)
    table.write_arrow(_batch([1], "a"))
    write = table.new_write()
    write.write_arrow(_batch([2], "a"))
    messages = write.prepare_commit()
    table.new_commit().commit(messages)
    stale = live_files.CACHE.take(table.path)  # snapshot 2, with the file of key 2
    assert stale is not None and stale.snapshot.snapshot_id == 2
    name = messages[0].new_files[0].file_name
    assert name in {e.file.file_name for e in stale.entries.values()}
    data = Path(table.path, "dt=a", f"bucket-{messages[0].bucket}", name)
    saved = data.read_bytes()
    rollback_to_snapshot(table, 1)  # removes snapshot 2 and its data file
    table.write_arrow(_batch([4], "a"))  # another snapshot 2
    data.write_bytes(saved)
    live_files.CACHE.give_back(table.path, stale)
    assert table.new_commit().commit(messages) == 3  # the file is not live: no conflict
    assert _keys(table) == [1, 2, 4]


def test_static_overwrite_rejects_rows_of_other_partitions(warehouse: str) -> None:
    table = _table(warehouse, partition_keys=["dt"])
    table.write_arrow(_batch([1, 2], "a"))
    table.write_arrow(_batch([3], "b"))
    before = _listing(table.path)
    with pytest.raises(InvalidArgument, match=r"overwrite partition \{dt=b\}.*\{dt=a\}"):
        table.write_arrow(_batch([9], "a"), overwrite={"dt": "b"})
    with pytest.raises(InvalidArgument, match="non-partition columns \\['v'\\]"):
        table.write_arrow(_batch([9], "b"), overwrite={"v": "x"})
    assert _listing(table.path) == before
    assert table.snapshot_manager.latest_snapshot_id() == 2
    assert _keys(table) == [1, 2, 3]


def test_overwrite_may_change_the_number_of_buckets_of_a_partition(warehouse: str) -> None:
    schema = pa.schema(
        [pa.field("k", pa.int64(), False), ("v", pa.string()), pa.field("dt", pa.string(), False)]
    )
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    table = catalog.create_table(
        "db.t", schema, partition_keys=["dt"], primary_keys=["k", "dt"], options={"bucket": "2"}
    )
    table.write_arrow(_batch([1, 2, 3], "a").cast(schema))
    with pytest.raises(CommitConflict, match="Total buckets of partition \\{dt=a\\}"):
        table.copy({"bucket": "4"}).write_arrow(_batch([4], "a").cast(schema))
    table.copy({"bucket": "4"}).write_arrow(_batch([1, 2, 3, 4], "a").cast(schema), overwrite=True)
    with pytest.raises(CommitConflict, match="changed from 2 to 4"):
        table.write_arrow(_batch([5], "a").cast(schema))
    assert _keys(table) == [1, 2, 3, 4]


def test_a_store_without_conditional_create_refuses_the_commit(tmp_path: Path) -> None:
    """gs://, abfs://, oss:// through pyarrow can only check and then write snapshot-N: the
    commit fails with one clear line and leaves the table as it was (reads still work)."""
    root = tmp_path / "store"
    local = _table(str(root / "bucket" / "wh"))
    write = local.new_write()
    write.write_arrow(_batch([1]))
    local.new_commit().commit(write.prepare_commit())
    before = _listing(str(root))

    io = PyArrowFileIO("gs://bucket/wh", pafs.SubTreeFileSystem(str(root), pafs.LocalFileSystem()))
    table = FileSystemCatalog("gs://bucket/wh", file_io=io).get_table("db.t")
    assert _keys(table) == [1]
    write = table.new_write()
    write.write_arrow(_batch([2]))
    messages = write.prepare_commit()
    commit = table.new_commit()
    with pytest.raises(AtomicCreateUnsupported) as info:
        commit.commit(messages)
    commit.abort(messages)  # as the SQL writer does when a commit fails
    message = str(info.value)
    assert "\n" not in message
    assert "gs://bucket/wh/db.db/t/snapshot/snapshot-2" in message
    assert "no conditional create" in message
    assert _listing(str(root)) == before
    assert _keys(local) == [1]


def _prepared(table: FileStoreTable) -> list[CommitMessage]:
    """Files written and commit messages prepared, all of it two days old (so orphan removal
    takes the files for abandoned ones, as with ``older_than`` = now - 1 ms)."""
    write = table.new_write()
    write.write_arrow(_batch([2, 3]))
    messages = write.prepare_commit()
    past = os.path.getmtime(table.path) - 2 * 86_400
    for directory, _, names in os.walk(table.path):
        for name in names:
            os.utime(os.path.join(directory, name), (past, past))
    return messages


@pytest.mark.parametrize("pk", [False, True], ids=["append", "pk-dynamic-bucket"])
def test_commit_of_files_removed_meanwhile_publishes_nothing(warehouse: str, pk: bool) -> None:
    """write -> prepare commit -> orphan removal -> commit: no snapshot of missing files."""
    kw: dict[str, Any] = {"primary_keys": ["k"], "options": {"bucket": "-1"}} if pk else {}
    table = _table(warehouse, **kw)
    table.write_arrow(_batch([1]))
    messages = _prepared(table)
    removed = remove_orphan_files(table).paths
    data = next(m for m in messages if m.new_files)
    first = data_file_path(table, (), data.bucket, data.new_files[0].file_name)
    assert first in removed
    before = _listing(table.path)
    with pytest.raises(
        CommitFileMissing, match=f"^Cannot commit: {re.escape(first)} no longer exists"
    ):
        table.new_commit().commit(messages)
    assert _listing(table.path) == before  # its manifests and lists are removed again
    assert table.snapshot_manager.latest_snapshot_id() == 1
    assert _keys(table) == [1]


def test_commit_of_a_missing_index_file_publishes_nothing(warehouse: str) -> None:
    table = _table(warehouse, primary_keys=["k"], options={"bucket": "-1"})
    messages = _prepared(table)
    index = [i for m in messages for i in m.new_index_files]
    assert index
    path = f"{table.path}/index/{index[0].file_name}"
    os.remove(path)
    with pytest.raises(
        CommitFileMissing, match=f"^Cannot commit: {re.escape(path)} no longer exists"
    ):
        table.new_commit().commit(messages)
    assert table.snapshot_manager.latest_snapshot_id() is None
    assert not os.listdir(f"{table.path}/manifest")


def test_missing_file_among_many_on_an_object_store_publishes_nothing(warehouse: str) -> None:
    """Off the local disk the existence checks run in parallel; the answer is the same."""
    local = _table(warehouse, partition_keys=["dt"])
    table = FileStoreTable(PyArrowFileIO(local.path), local.path, local.schema)
    write = table.new_write()
    for dt in "abcd":
        write.write_arrow(_batch([1], dt))
    messages = write.prepare_commit()
    (path,) = glob.glob(f"{table.path}/dt=c/bucket-*/data-*")
    os.remove(path)
    with pytest.raises(CommitFileMissing, match=f"^Cannot commit: {re.escape(path)} no longer"):
        table.new_commit().commit(messages)
    assert table.snapshot_manager.latest_snapshot_id() is None
    assert not os.listdir(f"{table.path}/manifest")


class _ListReadsIO(LocalFileIO):
    """Counts reads of manifest lists."""

    def __init__(self) -> None:
        super().__init__()
        self.list_reads = 0

    def read_bytes(self, path: str) -> bytes:
        if "/manifest-list-" in path:
            self.list_reads += 1
        return super().read_bytes(path)


def test_a_fresh_handle_builds_on_the_lists_this_process_published(warehouse: str) -> None:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    table = catalog.create_table("db.pub", pa.schema([("k", pa.int64())]))
    table.write_arrow(pa.table({"k": [1]}))
    table.write_arrow(pa.table({"k": [2]}))

    io = _ListReadsIO()
    FileStoreTable.load(table.path, file_io=io).write_arrow(pa.table({"k": [3]}))
    assert io.list_reads == 0

    PUBLISHED.clear()  # as if another process had committed last
    FileStoreTable.load(table.path, file_io=io).write_arrow(pa.table({"k": [4]}))
    assert io.list_reads == 2

    rollback_to_snapshot(table, 2)  # the cached snapshot 4 is not the latest any more
    io.list_reads = 0
    FileStoreTable.load(table.path, file_io=io).write_arrow(pa.table({"k": [5]}))
    assert io.list_reads >= 2
    assert sorted(FileStoreTable.load(table.path).to_arrow().column("k").to_pylist()) == [1, 2, 5]


def test_truncate_partitions_is_one_overwrite_of_every_matching_partition(
    warehouse: str,
) -> None:
    table = _table(warehouse, partition_keys=["dt"])
    for dt in ("a", "b", "c"):
        table.write_arrow(_batch([ord(dt)], dt))
    snapshot = table.new_commit().truncate_partitions([{"dt": "a"}, {"dt": "c"}])
    assert snapshot == 4
    latest = table.latest_snapshot()
    assert latest is not None and latest.commit_kind == CommitKind.OVERWRITE
    assert _keys(table) == [ord("b")]
    with pytest.raises(InvalidArgument, match="empty"):
        table.new_commit().truncate_partitions([])
    with pytest.raises(InvalidArgument, match="non-partition"):
        table.new_commit().truncate_partitions([{"k": 1}])


def _overwrite(table: FileStoreTable, ks: list[int], dt: str) -> None:
    write = table.new_write(overwrite=True)
    write.write_arrow(_batch(ks, dt))
    table.new_commit().overwrite(write.prepare_commit(), dynamic=True)


def test_strict_mode_refuses_other_users_changes_to_the_same_partitions(warehouse: str) -> None:
    """``commit.strict-mode.last-safe-snapshot``: Paimon's StrictModeChecker."""
    table = _table(warehouse, partition_keys=["dt"])
    table.write_arrow(_batch([1], "a"))
    table.write_arrow(_batch([2], "b"))
    strict = table.copy({"commit.strict-mode.last-safe-snapshot": "2"}, time_travel=False)
    commit = strict.new_commit()
    _overwrite(table, [3], "b")  # another user's OVERWRITE of b
    table.write_arrow(_batch([4], "a"))  # another user's APPEND to a
    write = strict.new_write(overwrite=True)
    write.write_arrow(_batch([5], "b"))
    messages = write.prepare_commit()
    with pytest.raises(CommitConflict, match=r"found a OVERWRITE snapshot \(id: 3\)"):
        commit.overwrite(messages, dynamic=True)
    commit.abort(messages)
    # An APPEND to a only conflicts with an overwrite of a; appends pass it.
    assert strict.new_commit().commit(_messages(strict, [6], "a")) == 5
    with pytest.raises(CommitConflict, match=r"found a APPEND snapshot \(id: 4\)"):
        strict.new_commit().overwrite(_messages(strict, [7], "a"), dynamic=True)
    # A commit of another partition passes, and moves the safe snapshot on.
    passing = strict.new_commit()
    assert passing.commit(_messages(strict, [8], "c")) == 6
    assert passing.overwrite(_messages(strict, [9], "a"), dynamic=True) == 7
    assert _keys(table) == [3, 8, 9]
    # -1: the first commit is not checked.
    unchecked = table.copy({"commit.strict-mode.last-safe-snapshot": "-1"}, time_travel=False)
    assert unchecked.new_commit().overwrite(_messages(table, [10], "c"), dynamic=True) == 8


def _messages(table: FileStoreTable, ks: list[int], dt: str) -> list[CommitMessage]:
    write = table.new_write()
    write.write_arrow(_batch(ks, dt))
    return write.prepare_commit()


class Interrupt(BaseException):
    """Ctrl-C or SystemExit arriving while a commit runs: cleanups see it, hooks do not
    swallow it."""


def _interrupting(*_args: Any) -> None:
    raise Interrupt()


@pytest.mark.parametrize("overwrite", [False, True])
def test_an_interrupt_after_publishing_deletes_nothing_the_snapshot_needs(
    warehouse: str, monkeypatch: pytest.MonkeyPatch, overwrite: bool
) -> None:
    """The snapshot is the table's once published: a writer's failure cleanup that runs
    because maintenance after it was interrupted must not delete its files."""
    table = _table(warehouse, partition_keys=["dt"])
    table.write_arrow(_batch([1, 2]))
    monkeypatch.setattr("paimon_core.lifecycle.post_commit.auto_create_tags", _interrupting)
    with pytest.raises(Interrupt):
        table.write_arrow(_batch([3]), overwrite=overwrite)
    monkeypatch.undo()
    fresh = FileSystemCatalog(warehouse).get_table("db.t")
    assert fresh.snapshot_manager.latest_snapshot_id() == 2
    assert _keys(fresh) == ([3] if overwrite else [1, 2, 3])


def test_an_interrupt_after_publishing_keeps_the_analyze_statistics(
    warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from paimon_core.format.statistics import Statistics, read_statistics

    table = _table(warehouse)
    table.write_arrow(_batch([1, 2]))
    monkeypatch.setattr("paimon_core.lifecycle.post_commit.auto_create_tags", _interrupting)
    stats = Statistics(table.latest_snapshot().snapshot_id, table.schema.schema_id, 2, None)
    with pytest.raises(Interrupt):
        table.new_commit().commit_statistics(stats)
    monkeypatch.undo()
    fresh = FileSystemCatalog(warehouse).get_table("db.t")
    assert read_statistics(fresh, fresh.latest_snapshot()) is not None


def test_a_failure_to_learn_the_version_of_a_published_snapshot_is_no_failure(
    warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``snapshot-N`` written means committed: an object store's version lookup failing
    afterwards (a transient error) must not report, nor clean up, a failed commit."""
    table = _table(warehouse)
    io = table.snapshot_manager.file_io

    def version(path: str) -> Any:
        raise OSError("503 Slow Down")

    monkeypatch.setattr(io, "version", version)
    assert table.write_arrow(_batch([1, 2])) == 1
    monkeypatch.undo()
    assert _keys(FileSystemCatalog(warehouse).get_table("db.t")) == [1, 2]


def test_an_interrupt_after_a_compaction_published_keeps_its_files(
    warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from paimon_core.operations.compact import compact_table

    table = _table(warehouse, primary_keys=["k"], options={"bucket": "1", "write-only": "true"})
    table.write_arrow(_batch([1, 2]))
    table.write_arrow(_batch([2, 3]))
    put = PUBLISHED.put

    def put_then_interrupt(*args: Any) -> None:  # the snapshot file is written by now
        put(*args)
        raise Interrupt()

    monkeypatch.setattr(PUBLISHED, "put", put_then_interrupt)
    with pytest.raises(Interrupt):
        compact_table(table, full=True)
    monkeypatch.undo()
    fresh = FileSystemCatalog(warehouse).get_table("db.t")
    assert fresh.latest_snapshot().commit_kind == CommitKind.COMPACT
    assert _keys(fresh) == [1, 2, 3]


def test_an_interrupt_after_a_copy_published_keeps_the_copied_files(
    warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from paimon_core.operations.copy import copy_files

    source = _table(warehouse, partition_keys=["dt"])
    source.write_arrow(_batch([1, 2]))
    target = _table(warehouse, "copy", partition_keys=["dt"])
    monkeypatch.setattr("paimon_core.lifecycle.post_commit.auto_create_tags", _interrupting)
    with pytest.raises(Interrupt):
        copy_files(source, target)
    monkeypatch.undo()
    assert _keys(FileSystemCatalog(warehouse).get_table("db.copy")) == [1, 2]


def test_a_failed_commit_deletes_the_index_files_beside_its_data_files(
    warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A data file's ``.index`` file (its file index, too big for the manifest) is written
    with it, so it goes with it when the commit fails."""
    from paimon_core.operations.commit import FileStoreCommit

    table = _table(
        warehouse,
        options={"file-index.bloom-filter.columns": "v", "file-index.in-manifest-threshold": "1 b"},
    )
    before = _listing(table.path)

    def refuse(*_args: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(FileStoreCommit, "_try_commit_once", refuse)
    with pytest.raises(OSError, match="disk full"):
        table.write_arrow(_batch([1, 2]))
    assert _listing(table.path) - before == set()


def _racing_table(warehouse: str) -> FileStoreTable:
    """A primary-key bucket whose next write compacts (two sorted runs trigger it)."""
    table = _table(
        warehouse,
        primary_keys=["k"],
        options={"bucket": "1", "num-sorted-run.compaction-trigger": "2"},
    )
    table.write_arrow(_batch([1, 2]))
    return table


def _compacting_messages(table: FileStoreTable) -> list[CommitMessage]:
    messages = _messages(table, [2, 3], "a")
    assert any(m.has_compaction for m in messages), "the write must carry a compaction"
    return messages


@pytest.mark.parametrize("overwrite", [False, True])
def test_a_write_whose_compaction_loses_a_race_keeps_the_data_it_committed(
    warehouse: str, overwrite: bool
) -> None:
    """Issue 19.1: the data snapshot is published before the writer's compaction; when the
    compaction conflicts (a CALL sys.compact removed a file it compacted) the error names
    the published snapshot and the committer's abort deletes none of its files."""
    from paimon_core.operations.commit import published_before
    from paimon_core.operations.compact import compact_table

    table = _racing_table(warehouse)
    messages = _compacting_messages(table)
    compact_table(table, full=True)  # removes the file the writer's compaction read
    commit = table.new_commit()
    with pytest.raises(CommitConflict, match="data was committed") as info:
        if overwrite:
            commit.overwrite(messages, dynamic=True)
        else:
            commit.commit(messages)
    published = published_before(info.value)
    assert published is not None
    commit.abort(messages)
    fresh = FileSystemCatalog(warehouse).get_table("db.t")
    assert fresh.snapshot_manager.snapshot(published).commit_kind in (
        CommitKind.APPEND,
        CommitKind.OVERWRITE,
    )
    expected = [2, 3] if overwrite else [1, 2, 3]  # unpartitioned: the whole table
    assert _keys(fresh) == expected
    assert _keys(fresh, snapshot=fresh.snapshot_manager.snapshot(published)) == expected


def test_write_arrow_whose_compaction_loses_a_race_keeps_the_data(
    warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``FileStoreTable.write_arrow`` raises the conflict but leaves the data committed."""
    from paimon_core.operations.commit import FileStoreCommit, published_before
    from paimon_core.operations.compact import compact_table

    table = _racing_table(warehouse)
    commit_with_compaction = FileStoreCommit.commit

    def race_then_commit(self: FileStoreCommit, messages: Any, *a: Any, **kw: Any) -> Any:
        compact_table(FileSystemCatalog(warehouse).get_table("db.t"), full=True)
        return commit_with_compaction(self, messages, *a, **kw)

    monkeypatch.setattr(FileStoreCommit, "commit", race_then_commit)
    with pytest.raises(CommitConflict) as info:
        table.write_arrow(_batch([2, 3]))
    monkeypatch.undo()
    assert published_before(info.value) is not None
    assert _keys(FileSystemCatalog(warehouse).get_table("db.t")) == [1, 2, 3]


class _LostResponseIO(LocalFileIO):
    """A store whose conditional create of ``snapshot-2`` lands but whose answer is lost:
    ``mode`` 'retried' answers as a retried request does (the key exists: False), 'error'
    raises as a timed-out request does."""

    def __init__(self, mode: str) -> None:
        super().__init__()
        self.mode = mode

    def write_no_clobber(self, path: str, data: bytes) -> bool:
        created = super().write_no_clobber(path, data)
        if created and os.path.basename(path) == "snapshot-2":
            if self.mode == "retried":
                return super().write_no_clobber(path, data)
            raise OSError(f"Failed to create {path}: read timeout")
        return created


@pytest.mark.parametrize("mode", ["retried", "error"])
def test_a_snapshot_created_whose_answer_was_lost_is_the_commit(
    warehouse: str, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """Object stores retry a PUT whose response was lost: the retry finds the key taken by
    the commit's own first attempt. That snapshot is the commit's: no retry at N+1 on top of
    it, no cleanup of the manifests and data files it names."""
    table = _table(warehouse)
    table.write_arrow(_batch([1, 2]))
    io = _LostResponseIO(mode)
    monkeypatch.setattr(table.snapshot_manager, "file_io", io)
    assert table.write_arrow(_batch([3])) == 2
    monkeypatch.undo()
    fresh = FileSystemCatalog(warehouse).get_table("db.t")
    assert fresh.snapshot_manager.latest_snapshot_id() == 2
    assert _keys(fresh) == [1, 2, 3]


def test_a_create_whose_outcome_is_unknown_deletes_nothing(
    warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On an object store a create that failed with the key absent on read-back may still
    land (a request the store has not finished): the commit fails saying so, and keeps its manifests and data
    files, which orphan removal can clear later."""
    from paimon_core.operations.commit import published_before

    table = _table(warehouse)
    table.write_arrow(_batch([1, 2]))
    before = _listing(table.path)
    io = table.snapshot_manager.file_io

    def unanswered(path: str, data: bytes) -> bool:
        raise OSError(f"Failed to create {path}: connection reset")

    monkeypatch.setattr(io, "write_no_clobber", unanswered)
    monkeypatch.setattr(type(io), "failed_create_is_final", False)  # an object store
    with pytest.raises(CommitOutcomeUnknown, match="snapshot-2") as info:
        table.write_arrow(_batch([3]))
    monkeypatch.undo()
    assert published_before(info.value) == 2
    added = _listing(table.path) - before
    assert any(name.startswith("manifest/") for name in added)
    assert any(name.endswith(".parquet") for name in added)


@pytest.mark.parametrize("garbage", [b"\x00\x9f\xff\xfe garbage", b"[" * 100_000, b"{"])
def test_a_corrupt_statistics_file_blocks_no_commit(warehouse: str, garbage: bytes) -> None:
    """Issue 19.6: the latest snapshot's statistics are inherited by the next commit; a
    statistics file that cannot be read is not inherited (a warning), it never blocks
    writes and compactions, and reading it is a clear error naming the file."""
    from paimon_core.format.statistics import Statistics, read_statistics, statistics_path
    from paimon_core.operations.compact import compact_table

    table = _table(warehouse, primary_keys=["k"], options={"bucket": "1"})
    table.write_arrow(_batch([1, 2]))
    table.new_commit().commit_statistics(Statistics(1, 0, 2, None))
    path = statistics_path(table, table.latest_snapshot().statistics)
    with open(path, "wb") as f:
        f.write(garbage)
    with pytest.raises(CorruptMetadata, match=f"^Statistics file {re.escape(path)} is corrupt"):
        read_statistics(table, table.latest_snapshot())
    table.write_arrow(_batch([3]))
    assert table.latest_snapshot().statistics is None
    compact_table(table, full=True)
    assert _keys(FileSystemCatalog(warehouse).get_table("db.t")) == [1, 2, 3]


def test_a_commit_racing_expiry_retries_on_the_new_latest(
    warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 19.6: another process commits and expires the snapshot this commit read as
    latest, removing its manifest lists before they are read: the commit starts again from
    the new latest snapshot instead of failing with a raw FileNotFoundError."""
    from paimon_core.lifecycle.expire import expire_snapshots
    from paimon_core.operations.commit import FileStoreCommit

    table = _table(warehouse)
    table.write_arrow(_batch([1]))
    messages = _messages(table, [2], "a")
    read_metas = FileStoreCommit._all_metas
    raced: list[int] = []

    def racing(self: FileStoreCommit, latest: Any) -> Any:
        if not raced:
            raced.append(latest.snapshot_id)
            other = FileSystemCatalog(warehouse).get_table("db.t")
            other.write_arrow(_batch([3]))
            other.write_arrow(_batch([4]))
            expire_snapshots(other, retain_max=1, retain_min=1)
            PUBLISHED.clear()  # as in another process
            self._last = None
        return read_metas(self, latest)

    PUBLISHED.clear()
    monkeypatch.setattr(FileStoreCommit, "_all_metas", racing)
    assert table.new_commit().commit(messages) == 4
    monkeypatch.undo()
    assert raced == [1]
    assert _keys(FileSystemCatalog(warehouse).get_table("db.t")) == [1, 2, 3, 4]

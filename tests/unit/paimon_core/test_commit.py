"""Commit: atomic publish, retries between processes, conflicts, overwrite, failure cleanup."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import CommitConflict
from paimon_core.fileio import LocalFileIO
from paimon_core.snapshot import CommitKind
from paimon_core.table import FileStoreTable

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
    from paimon_core.commit_message import CommitMessage

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


def _commit_many(path: str, offset: int, n: int) -> None:
    table = FileStoreTable.load(path)
    for i in range(n):
        table.write_arrow(_batch([offset + i]))


def test_two_processes_commit_50_times_each(warehouse: str) -> None:
    table = _table(warehouse, options={"commit.max-retries": "200"})
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_commit_many, args=(table.path, off, 50)) for off in (0, 1000)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    assert table.snapshot_manager.list_snapshot_ids() == list(range(1, 101))
    assert _keys(table) == list(range(50)) + list(range(1000, 1050))
    assert table.latest_snapshot().total_record_count == 100


class _FailingIO(LocalFileIO):
    """Local file I/O that raises at the n-th write step, to simulate a crash or a full disk."""

    WRITES = ("write_bytes", "write_text", "write_no_clobber", "open_output")

    def __init__(self, fail_at: int | None) -> None:
        super().__init__()
        self.fail_at = fail_at
        self.steps: list[str] = []

    def _step(self, what: str, path: str) -> None:
        self.steps.append(f"{what} {os.path.basename(path)}")
        if self.fail_at is not None and len(self.steps) - 1 == self.fail_at:
            raise OSError(f"injected failure at {what} {path}")


for _name in _FailingIO.WRITES:

    def _wrap(name: str) -> Any:
        def method(self: _FailingIO, path: str, *args: Any, **kw: Any) -> Any:
            self._step(name, path)
            return getattr(LocalFileIO, name)(self, path, *args, **kw)

        return method

    setattr(_FailingIO, _name, _wrap(_name))


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
    probe = _FailingIO(None)
    base = Path(table.path)
    before = _listing(str(base))
    FileStoreTable(probe, table.path, table.schema).write_arrow(_batch([3], "b").cast(schema))
    steps = list(probe.steps)
    assert any(s.startswith("write_no_clobber snapshot-2") for s in steps), steps
    # Undo the probe commit so that every injected run starts from snapshot 1.
    for rel in _listing(str(base)) - before:
        os.remove(base / rel)
    (base / "snapshot" / "LATEST").write_text("1")
    for k, step in enumerate(steps):
        io = _FailingIO(k)
        failing = FileStoreTable(io, table.path, table.schema)
        hint_only = step.startswith("write") and step.endswith("LATEST")
        if hint_only:
            failing.write_arrow(_batch([3], "b").cast(schema))  # published: a lost hint is fine
            assert _keys(FileStoreTable.load(table.path)) == [1, 2, 3]
            for rel in _listing(str(base)) - before:
                os.remove(base / rel)
            (base / "snapshot" / "LATEST").write_text("1")
            continue
        with pytest.raises(OSError, match="injected"):
            failing.write_arrow(_batch([3], "b").cast(schema))
        fresh = FileStoreTable.load(table.path)
        assert fresh.snapshot_manager.latest_snapshot_id() == 1, step
        assert _keys(fresh) == [1, 2], step
        assert _listing(str(base)) == before, step

"""Snapshot expiry: which snapshots go (Paimon 2.0 rules), which files go, crash safety."""

from __future__ import annotations

import json
import os
import shutil
import time
import types
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa
import pytest

import paimon_core.operations.commit as commit_module
from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import InvalidArgument, SnapshotNotFound
from paimon_core.format.consumer import (
    Consumer,
    ConsumerManager,
    consumer_from_json,
    consumer_to_json,
)
from paimon_core.format.tag import Tag
from paimon_core.io.fileio import LocalFileIO
from paimon_core.lifecycle.expire import expire_snapshots, min_consumer_snapshot
from paimon_core.lifecycle.file_deletion import files_in_use, plan_tag_deletion
from paimon_core.table import FileStoreTable

SCHEMA = pa.schema([("k", pa.int64()), ("v", pa.string()), ("dt", pa.string())])
PK_SCHEMA = pa.schema(
    [
        pa.field("k", pa.int64(), nullable=False),
        ("v", pa.string()),
        pa.field("dt", pa.string(), nullable=False),
    ]
)


def _table(
    warehouse: str, name: str = "t", schema: pa.Schema = SCHEMA, **kw: Any
) -> FileStoreTable:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    kw.setdefault("partition_keys", ["dt"])
    return catalog.create_table(f"db.{name}", schema, **kw)


def _batch(ks: list[int], dt: str = "a", schema: pa.Schema = SCHEMA) -> pa.Table:
    return pa.table({"k": ks, "v": [f"v{k}" for k in ks], "dt": [dt] * len(ks)}, schema=schema)


def _listing(root: str) -> set[str]:
    return {os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs}


def _ids(table: FileStoreTable) -> list[int]:
    return table.snapshot_manager.list_snapshot_ids()


def _rows(table: FileStoreTable, **options: str) -> list[tuple]:
    data = table.copy(options).to_arrow()
    return sorted(zip(data.column("k").to_pylist(), data.column("dt").to_pylist()))


def _tag(table: FileStoreTable, name: str, snapshot_id: int) -> None:
    table.tag_manager.write_tag(name, Tag(table.snapshot_manager.snapshot(snapshot_id)))


def _appends(table: FileStoreTable, n: int) -> None:
    for i in range(n):
        table.write_arrow(_batch([i], "a" if i % 2 else "b"))


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Commit times in milliseconds: each commit takes the next value of ``clock[0]``."""
    now = [1_000_000]

    def fake_time() -> float:
        now[0] += 1000
        return now[0] / 1000

    monkeypatch.setattr(
        commit_module, "time", types.SimpleNamespace(time=fake_time, sleep=time.sleep)
    )
    yield now


def _used_by_remaining(table: FileStoreTable) -> set[str]:
    """Relative paths of everything the remaining snapshots and tags use, plus metadata."""
    snaps = table.snapshot_manager.snapshots()
    tags = [t.snapshot for t in table.tag_manager.list_tags().values()]
    used = files_in_use(table, [*snaps, *tags]).all_paths()
    root = table.path
    meta = {p for p in _listing(root) if p.split("/")[0] in ("schema", "snapshot", "tag")}
    return {os.path.relpath(p, root) for p in used} | meta


def test_retain_max_keeps_the_newest_and_leaves_no_garbage(warehouse: str) -> None:
    table = _table(warehouse)
    _appends(table, 5)
    table.write_arrow(_batch([9], "a"), overwrite=True)
    result = expire_snapshots(table, retain_max=2, retain_min=1)
    assert result.expired == 4
    assert _ids(table) == [5, 6]
    assert open(table.snapshot_manager.earliest_hint_path).read() == "5"
    assert _rows(table) == [(0, "b"), (2, "b"), (4, "b"), (9, "a")]
    assert _rows(table, **{"scan.snapshot-id": "5"}) == [(i, "ba"[i % 2]) for i in range(5)]
    assert _listing(table.path) == _used_by_remaining(table)
    # Files of partition a deleted by the overwrite are gone only once snapshot 5 expires.
    assert len(result.plan.data_files) == 0
    again = expire_snapshots(table, retain_max=1, retain_min=1)
    assert again.expired == 1 and len(again.plan.data_files) == 2
    assert _listing(table.path) == _used_by_remaining(table)


def test_snapshot_5_still_reads_after_expiry(warehouse: str) -> None:
    table = _table(warehouse)
    _appends(table, 5)
    expected = _rows(table, **{"scan.snapshot-id": "4"})
    expire_snapshots(table, retain_max=2, retain_min=1)
    assert _rows(table, **{"scan.snapshot-id": "4"}) == expected
    with pytest.raises(SnapshotNotFound):
        _rows(table, **{"scan.snapshot-id": "3"})


def test_defaults_come_from_table_options(warehouse: str, clock: list[int]) -> None:
    table = _table(
        warehouse,
        options={
            "snapshot.num-retained.min": "2",
            "snapshot.num-retained.max": "100",
            "snapshot.expire.limit": "3",
            "write-only": "true",
        },
    )
    _appends(table, 8)
    # All commits are from 1970: the 1 h time retention does not hold any back.
    assert expire_snapshots(table).expired == 3  # snapshot.expire.limit
    assert _ids(table) == [4, 5, 6, 7, 8]
    assert expire_snapshots(table).expired == 3
    assert _ids(table) == [7, 8]  # snapshot.num-retained.min
    assert expire_snapshots(table).expired == 0


def test_time_retention_uses_the_next_snapshots_time(warehouse: str, clock: list[int]) -> None:
    table = _table(warehouse)
    _appends(table, 6)
    times = [s.time_millis for s in table.snapshot_manager.snapshots()]
    assert times == sorted(set(times))
    # Threshold between snapshot 3 and 4: Paimon 2.0 expires s only when s+1 is older,
    # so 1 and 2 go (1.4 and older would also expire 3).
    threshold = (times[2] + times[3]) // 2
    result = expire_snapshots(table, retain_min=1, older_than_millis=threshold, max_deletes=100)
    assert result.expired == 2
    assert _ids(table) == [3, 4, 5, 6]
    # Older than everything: all but retain_min go; the latest never does.
    assert expire_snapshots(table, retain_min=0, older_than_millis=times[-1] + 1).expired == 3
    assert _ids(table) == [6]


def test_retain_max_below_retain_min_is_an_error(warehouse: str) -> None:
    table = _table(warehouse)
    _appends(table, 2)
    with pytest.raises(
        InvalidArgument, match=r"retainMax \(5\) must not be less than retainMin \(10\)"
    ):
        expire_snapshots(table, retain_max=5)
    assert _ids(table) == [1, 2]


def test_max_deletes_and_retain_min(warehouse: str) -> None:
    table = _table(warehouse)
    _appends(table, 10)
    assert expire_snapshots(table, retain_max=1, retain_min=1, max_deletes=3).expired == 3
    assert _ids(table) == list(range(4, 11))
    assert (
        expire_snapshots(table, retain_max=20, retain_min=4, older_than_millis=2**62).expired == 3
    )
    assert _ids(table) == [7, 8, 9, 10]
    assert expire_snapshots(table, retain_max=1, retain_min=1, max_deletes=0).expired == 0


def test_dry_run_changes_nothing_and_plans_what_a_real_run_deletes(warehouse: str) -> None:
    table = _table(warehouse, "pk", PK_SCHEMA, primary_keys=["k", "dt"])
    for i in range(4):
        table.write_arrow(_batch([i, i + 10], "a", PK_SCHEMA))
    table.write_arrow(_batch([7], "a", PK_SCHEMA), overwrite=True)
    state = {p: os.stat(os.path.join(table.path, p)).st_mtime_ns for p in _listing(table.path)}
    dry = expire_snapshots(table, retain_max=1, retain_min=1, dry_run=True)
    assert dry.expired == 4 and dry.plan.index_files and dry.plan.data_files
    assert {
        p: os.stat(os.path.join(table.path, p)).st_mtime_ns for p in _listing(table.path)
    } == state
    real = expire_snapshots(table, retain_max=1, retain_min=1)
    assert real.plan == dry.plan
    gone = {os.path.relpath(p, table.path) for p in dry.plan.files()}
    assert _listing(table.path) == set(state) - gone | {"snapshot/EARLIEST"}
    assert _listing(table.path) == _used_by_remaining(table)
    assert _rows(table) == [(7, "a")]


def test_tagged_snapshots_stay_readable(warehouse: str) -> None:
    table = _table(warehouse)
    table.write_arrow(_batch([1, 2], "a"))
    table.write_arrow(_batch([3], "b"))
    _tag(table, "t2", 2)
    table.write_arrow(_batch([4], "a"), overwrite=True)
    _tag(table, "t3", 3)
    table.write_arrow(_batch([5], "b"), overwrite=True)
    table.write_arrow(_batch([6], "a"), overwrite=True)
    expected = {n: _rows(table, **{"scan.tag-name": n}) for n in ("t2", "t3")}
    result = expire_snapshots(table, retain_max=1, retain_min=1)
    assert result.expired == 4
    assert {n: _rows(table, **{"scan.tag-name": n}) for n in ("t2", "t3")} == expected
    # a=[1,2] (held by t2), b=[3] (t2, t3), a=[4] (t3) stay; nothing else but the latest.
    assert _listing(table.path) == _used_by_remaining(table)
    assert len(result.plan.data_files) == 0
    plan = plan_tag_deletion(table, ["t2", "t3"])
    assert len(plan.data_files) == 3
    plan.apply(table.file_io)
    assert _listing(table.path) == _used_by_remaining(table)


def test_interval_rule_decides_without_reading_tags_inside_the_window(
    warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = _table(warehouse)
    table.write_arrow(_batch([1], "a"))  # s1
    table.write_arrow(_batch([2], "a"), overwrite=True)  # s2 deletes a=[1]
    _tag(table, "t2", 2)
    table.write_arrow(_batch([3], "a"), overwrite=True)  # s3 deletes a=[2]: t2 holds it
    table.write_arrow(_batch([4], "b"))  # s4
    table.write_arrow(_batch([5], "a"), overwrite=True)  # s5 deletes a=[3]: committed after t2
    from paimon_core.lifecycle.file_deletion import TableFiles

    def no_state(self: Any, snapshot: Any) -> Any:
        raise AssertionError("the interval rule should decide")

    monkeypatch.setattr(TableFiles, "data_files", no_state)
    result = expire_snapshots(table, retain_max=1, retain_min=1)
    assert sorted(p.split("/")[-3] for p in result.plan.data_files) == ["dt=a", "dt=a"]
    monkeypatch.undo()
    assert _rows(table, **{"scan.tag-name": "t2"}) == [(2, "a")]
    assert _listing(table.path) == _used_by_remaining(table)


def test_tag_before_the_window_falls_back_to_its_files(warehouse: str) -> None:
    table = _table(warehouse)
    table.write_arrow(_batch([1], "a"))  # s1 (tag t1)
    _tag(table, "t1", 1)
    table.write_arrow(_batch([2], "b"))  # s2
    expire_snapshots(table, retain_max=1, retain_min=1)  # s1 expires: t1 is now before it
    table.write_arrow(_batch([3], "a"), overwrite=True)  # s3 deletes a=[1]: t1 holds it
    table.write_arrow(_batch([4], "b"), overwrite=True)  # s4 deletes b=[2]: committed after t1
    result = expire_snapshots(table, retain_max=1, retain_min=1)
    assert [p.split("/")[-3] for p in result.plan.data_files] == ["dt=b"]
    assert _rows(table, **{"scan.tag-name": "t1"}) == [(1, "a")]
    assert _listing(table.path) == _used_by_remaining(table)


def test_consumers_protect_the_snapshots_they_read(warehouse: str) -> None:
    table = _table(warehouse)
    _appends(table, 6)
    consumer_dir = os.path.join(table.path, "consumer")
    os.makedirs(consumer_dir)
    with open(os.path.join(consumer_dir, "consumer-job1"), "w") as f:
        json.dump({"nextSnapshot": 3}, f)
    with open(os.path.join(consumer_dir, "consumer-job2"), "w") as f:
        json.dump({"nextSnapshot": 5}, f)
    assert min_consumer_snapshot(table) == 3
    assert expire_snapshots(table, retain_max=1, retain_min=1).expired == 2
    assert _ids(table) == [3, 4, 5, 6]


def _consumer(table: FileStoreTable, consumer_id: str, next_snapshot: int) -> str:
    manager = ConsumerManager(table.file_io, table.path)
    manager.reset_consumer(consumer_id, Consumer(next_snapshot))
    return manager.consumer_path(consumer_id)


def test_commit_time_expiry_keeps_what_consumers_read(warehouse: str) -> None:
    options = {"snapshot.num-retained.max": "2", "snapshot.num-retained.min": "1"}
    table = _table(warehouse, "held", options=options)
    _appends(table, 2)
    _consumer(table, "job", 2)
    _appends(table, 3)
    assert _ids(table) == [2, 3, 4, 5]  # the consumer reads 2 next: nothing before it goes
    only_changelogs = _table(
        warehouse, "free", options={**options, "consumer.changelog-only": "true"}
    )
    _appends(only_changelogs, 2)
    _consumer(only_changelogs, "job", 2)
    _appends(only_changelogs, 3)
    assert _ids(only_changelogs) == [4, 5]
    # The procedure's expiry ignores consumer.changelog-only, as Paimon's ExpireConfig builder.
    _appends(table, 0)
    held = table.copy({"consumer.changelog-only": "true"})
    assert expire_snapshots(held, retain_max=1, retain_min=1).expired == 0
    assert _ids(table) == [2, 3, 4, 5]


def test_commit_expires_idle_consumers_before_snapshots(warehouse: str) -> None:
    options = {
        "snapshot.num-retained.max": "2",
        "snapshot.num-retained.min": "1",
        "consumer.expiration-time": "1 h",
    }
    table = _table(warehouse, options=options)
    _appends(table, 2)
    idle = _consumer(table, "idle", 1)
    active = _consumer(table, "active", 3)
    two_hours_ago = time.time() - 7200
    os.utime(idle, (two_hours_ago, two_hours_ago))
    _appends(table, 3)
    assert not os.path.exists(idle) and os.path.exists(active)
    assert ConsumerManager(table.file_io, table.path).consumers() == {"active": 3}
    assert _ids(table) == [3, 4, 5]
    assert consumer_to_json(Consumer(3)) == '{\n  "nextSnapshot" : 3\n}'
    with open(active) as f:
        assert consumer_from_json(f.read()) == Consumer(3)


def test_commit_time_expiry_follows_the_options(warehouse: str) -> None:
    options = {"snapshot.num-retained.max": "3", "snapshot.num-retained.min": "1"}
    table = _table(warehouse, "auto", options=options)
    _appends(table, 6)
    assert _ids(table) == [4, 5, 6]
    assert _rows(table) == [(i, "ba"[i % 2]) for i in range(6)]
    off = _table(warehouse, "off", options={**options, "write-only": "true"})
    _appends(off, 6)
    assert _ids(off) == [1, 2, 3, 4, 5, 6]


def _crash_history(warehouse: str) -> FileStoreTable:
    table = _table(warehouse, "pk", PK_SCHEMA, primary_keys=["k", "dt"])
    table.write_arrow(_batch([1, 2], "a", PK_SCHEMA))
    table.write_arrow(_batch([3], "b", PK_SCHEMA))
    _tag(table, "t2", 2)
    table.write_arrow(_batch([4], "a", PK_SCHEMA), overwrite=True)
    table.write_arrow(_batch([5], "b", PK_SCHEMA), overwrite=True)
    _tag(table, "t4", 4)
    table.write_arrow(_batch([6], "a", PK_SCHEMA), overwrite=True)
    table.write_arrow(_batch([7], "c", PK_SCHEMA))
    return table


def _expected_reads(table: FileStoreTable) -> dict[str, list[tuple]]:
    out = {f"s{i}": _rows(table, **{"scan.snapshot-id": str(i)}) for i in _ids(table)}
    for name in table.tag_manager.tag_names():
        out[f"t:{name}"] = _rows(table, **{"scan.tag-name": name})
    return out


@pytest.mark.parametrize(
    "operation",
    [
        lambda t: expire_snapshots(t, retain_max=2, retain_min=1).plan,
        lambda t: (
            expire_snapshots(t, retain_max=1, retain_min=1),
            plan_tag_deletion(t, ["t2"]).apply(t.file_io),
        ),
    ],
    ids=["expire", "expire-then-delete-tag"],
)
def test_a_crash_at_any_delete_leaves_every_snapshot_and_tag_readable(
    warehouse: str,
    tmp_path: Any,
    monkeypatch: pytest.MonkeyPatch,
    operation: Callable[[FileStoreTable], Any],
) -> None:
    base = _crash_history(warehouse)
    expected = _expected_reads(base)
    original_delete = LocalFileIO.delete
    total = None
    k = 0
    while total is None or k <= total:
        copy = str(tmp_path / f"copy{k}")
        shutil.copytree(base.path, copy)
        table = FileStoreTable.load(copy)
        calls = [0]

        def failing_delete(
            self: LocalFileIO, path: str, calls: list[int] = calls, k: int = k
        ) -> bool:
            if calls[0] >= k:
                raise RuntimeError("crash")
            calls[0] += 1
            return original_delete(self, path)

        monkeypatch.setattr(LocalFileIO, "delete", failing_delete)
        try:
            operation(table)
            crashed = False
        except RuntimeError:
            crashed = True
        monkeypatch.setattr(LocalFileIO, "delete", original_delete)
        if not crashed:
            total = calls[0] if total is None else total
        reopened = FileStoreTable.load(copy)
        for i in _ids(reopened):
            assert _rows(reopened, **{"scan.snapshot-id": str(i)}) == expected[f"s{i}"], (k, i)
        for name in reopened.tag_manager.tag_names():
            assert _rows(reopened, **{"scan.tag-name": name}) == expected[f"t:{name}"], (k, name)
        assert _ids(reopened)[-1] == 6
        # Recovery: running the operation again completes it.
        operation(reopened)
        assert _rows(reopened) == expected["s6"]
        k += 1
    assert total is not None and total >= 8


@pytest.mark.oracle
@pytest.mark.parametrize("pk", [False, True], ids=["append", "pk-dynamic-bucket"])
def test_expiry_matches_java(
    warehouse: str, tmp_path: Any, oracle: Callable[..., Any], pk: bool
) -> None:
    schema = PK_SCHEMA if pk else SCHEMA
    table = _table(warehouse, schema=schema, primary_keys=["k", "dt"] if pk else ())
    table.write_arrow(_batch([1, 2], "a", schema))
    table.write_arrow(_batch([3], "b", schema))
    _tag(table, "t2", 2)
    table.write_arrow(_batch([4], "a", schema), overwrite=True)  # a=[1,2]: t2 keeps them
    table.write_arrow(_batch([5], "a", schema), overwrite=True)  # a=[4]: no tag keeps it
    table.write_arrow(_batch([6], "b", schema), overwrite=True)  # b=[3]: t2 keeps it
    table.write_arrow(_batch([7], "c", schema))
    java_wh = str(tmp_path / "java")
    shutil.copytree(warehouse, java_wh)
    ours = expire_snapshots(
        table, retain_max=2, retain_min=1, older_than_millis=0, max_deletes=2**31 - 1
    )
    java = oracle("expire", java_wh, "db.t", "--retain-max", 2)
    assert ours.expired == java["expired"] == 4
    assert java["earliestSnapshot"] == 5
    assert len(ours.plan.data_files) == 1 and "/dt=a/" in ours.plan.data_files[0]
    java_table = f"{java_wh}/db.db/t"
    assert _listing(table.path) == _listing(java_table)
    assert open(f"{java_table}/snapshot/EARLIEST").read() == "5"
    got = oracle("read", warehouse, "db.t", "--tag", "t2")
    assert sorted((r["k"], r["dt"]) for r in got) == [(1, "a"), (2, "a"), (3, "b")]


class _ReadRecordingIO(LocalFileIO):
    """Records the base names of the files read and the directories listed."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[str] = []

    def read_bytes(self, path: str) -> bytes:
        self.reads.append(os.path.basename(path))
        return super().read_bytes(path)

    def list_names(self, directory: str) -> list[str]:
        self.reads.append(os.path.basename(directory) + "/")
        return super().list_names(directory)


def test_a_commit_that_expires_nothing_reads_only_the_earliest_hint(warehouse: str) -> None:
    table = _table(warehouse, partition_keys=[])
    _appends(table, 3)
    io = _ReadRecordingIO()
    fresh = FileStoreTable.load(table.path, file_io=io)
    fresh.new_commit()  # the hooks are imported and registered
    hook_reads: list[str] = []
    original = commit_module.FileStoreCommit._after_commit

    def recording(self: Any, snapshot: Any) -> None:
        start = len(io.reads)
        original(self, snapshot)
        hook_reads.extend(io.reads[start:])

    commit_module.FileStoreCommit._after_commit = recording  # type: ignore[method-assign]
    try:
        fresh.write_arrow(_batch([9]))
    finally:
        commit_module.FileStoreCommit._after_commit = original  # type: ignore[method-assign]
    # EARLIEST, then the tag maintenance's listing: no LATEST, consumers or snapshots.
    assert hook_reads == ["EARLIEST", "tag/"]
    assert _ids(table) == [1, 2, 3, 4]


def test_retention_by_time_still_expires_when_the_count_allows_it(
    warehouse: str, clock: list[int]
) -> None:
    options = {
        "snapshot.num-retained.min": "2",
        "snapshot.num-retained.max": "100",
        "snapshot.time-retained": "1 h",
    }
    table = _table(warehouse, partition_keys=[], options=options)
    _appends(table, 5)  # committed in 1970 by the clock: all beyond the hour
    assert _ids(table) == [4, 5]
    assert table.snapshot_manager.earliest_hint() == 4


def test_recent_snapshots_within_the_time_retention_stay(warehouse: str) -> None:
    options = {
        "snapshot.num-retained.min": "1",
        "snapshot.num-retained.max": "100",
        "snapshot.time-retained": "1 h",
    }
    table = _table(warehouse, partition_keys=[], options=options)
    _appends(table, 4)
    assert _ids(table) == [1, 2, 3, 4]
    table.copy({"snapshot.num-retained.max": "2"}).write_arrow(_batch([7]))
    assert _ids(table) == [4, 5]


def test_a_stale_earliest_hint_is_repaired_after_a_commit(warehouse: str) -> None:
    table = _table(warehouse, partition_keys=[])
    _appends(table, 3)
    os.remove(f"{table.path}/snapshot/snapshot-1")  # as an expiry that died before its hint
    assert table.snapshot_manager.earliest_hint() == 1
    FileStoreTable.load(table.path).write_arrow(_batch([9]))
    assert table.snapshot_manager.earliest_hint() == 2

"""Decoupled changelog lifecycle: expired snapshots become ``changelog/changelog-N``, what
they read stays until changelog expiry removes them (Paimon's ``ExpireChangelogImpl``)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.format.snapshot import ChangelogManager, Snapshot, snapshot_to_json
from paimon_core.lifecycle.expire import expire_changelogs, expire_snapshots
from paimon_core.lifecycle.file_deletion import TableFiles, changelog_usage
from paimon_core.lifecycle.rollback import rollback_to_snapshot
from paimon_core.lifecycle.tag_management import create_tag, delete_tags
from paimon_core.table import FileStoreTable
from tests.unit.paimon_core.helpers import (
    FailingIO,
    changelog_entries,
    changelog_rows,
    kvd_batch,
    kvd_table,
)
from tests.unit.paimon_core.lifecycle.test_lifecycle_state_machine import find_orphans

SCHEMA = pa.schema([("k", pa.int64()), ("v", pa.string()), ("dt", pa.string())])
DECOUPLED = {
    "snapshot.num-retained.max": "2",
    "snapshot.num-retained.min": "1",
    "changelog.num-retained.max": "4",
    "changelog.num-retained.min": "1",
}


def _table(warehouse: str, **options: str) -> FileStoreTable:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    return catalog.create_table("db.t", SCHEMA, partition_keys=["dt"], options=options)


def _commit(table: FileStoreTable, i: int) -> None:
    """Even commits overwrite partition a (deleting files appends wrote), odd ones append."""
    data = pa.table({"k": [i], "v": [f"v{i}"], "dt": ["a" if i % 2 == 0 else "b"]}, SCHEMA)
    table.write_arrow(data, overwrite=i % 2 == 0)


def _changelogs(table: FileStoreTable) -> ChangelogManager:
    return ChangelogManager(table.file_io, table.path)


def _listing(root: str) -> set[str]:
    return {os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs}


def _appended(table: FileStoreTable, changelog: Snapshot) -> set[str]:
    files = TableFiles(table)
    return {
        files.data_path(e)
        for m in files.manifest_list(changelog.delta_manifest_list)
        for e in files.manifest(m.file_name)
        if e.kind.name == "ADD"
    }


def test_commit_time_expiry_keeps_changelogs_then_expires_them(warehouse: str) -> None:
    table = _table(warehouse, **DECOUPLED)
    snapshots, changelogs = table.snapshot_manager, _changelogs(table)
    for i in range(1, 11):
        _commit(table, i)
        assert snapshots.list_snapshot_ids() == list(range(max(i - 1, 1), i + 1))
        # Paimon's rule: the last 4 ids of the table, the oldest ones as changelogs.
        assert changelogs.list_snapshot_ids() == list(range(max(i - 3, 1), i - 1))
        for changelog in changelogs.snapshots():
            # The changelog is the expired snapshot's JSON, and its appended data stays.
            path = changelogs.snapshot_path(changelog.snapshot_id)
            assert open(path).read() == snapshot_to_json(changelog)
            assert all(map(os.path.exists, _appended(table, changelog)))
        assert find_orphans(table, dry_run=True).count == 0  # nothing leaks either
    assert open(f"{table.path}/changelog/LATEST").read() == "8"
    assert open(f"{table.path}/changelog/EARLIEST").read() == "7"
    assert sorted(table.to_arrow().column("k").to_pylist()) == [1, 3, 5, 7, 9, 10]


def test_not_decoupled_and_time_only_decoupling(warehouse: str) -> None:
    table = _table(warehouse, **{**DECOUPLED, "changelog.num-retained.max": "2"})
    for i in range(1, 6):
        _commit(table, i)
    assert not os.path.exists(f"{table.path}/changelog")
    assert not table.options.changelog_lifecycle_decoupled
    timed = _table(f"{warehouse}/2", **{"changelog.time-retained": "2 h"})
    assert timed.options.changelog_lifecycle_decoupled  # longer than snapshot.time-retained


def test_procedure_style_call_decouples_by_the_table_options(warehouse: str) -> None:
    table = _table(warehouse, **{"write-only": "true", **DECOUPLED})
    for i in range(1, 7):
        _commit(table, i)
    before = _listing(table.path)
    dry = expire_snapshots(table, retain_max=3, retain_min=1, dry_run=True)
    assert _listing(table.path) == before
    assert [p.rsplit("/", 1)[1] for p, _ in dry.plan.changelogs] == [
        "changelog-1",
        "changelog-2",
        "changelog-3",
    ]
    assert "3 changelogs to write" in dry.plan.summary()
    assert not dry.plan.data_files  # appended files: the changelogs read them
    assert expire_snapshots(table, retain_max=3, retain_min=1).expired == 3
    assert _changelogs(table).list_snapshot_ids() == [1, 2, 3]
    # Explicitly not decoupled (Paimon's Spark procedure): existing changelogs still keep
    # what they read.
    plain = expire_snapshots(table, retain_max=1, retain_min=1, decoupled=False)
    assert plain.expired == 2 and not plain.plan.changelogs
    assert not set(plain.plan.files()) & changelog_usage(table).all_paths()
    removed = expire_changelogs(table, retain_max=1, retain_min=1)
    assert removed.expired == 2 and _changelogs(table).list_snapshot_ids() == [3]
    assert find_orphans(table, dry_run=True).count == 0


def test_failure_at_each_step_leaves_no_hole(warehouse: str, tmp_path: Any) -> None:
    """Snapshots and changelogs together always cover every id from the earliest changelog
    to the latest snapshot, and each of them can still be read."""
    table = _table(warehouse, **{"write-only": "true", **DECOUPLED})
    for i in range(1, 8):
        _commit(table, i)
    expire_snapshots(table, retain_max=4, retain_min=1)  # changelogs 1-3
    for fail_at in range(200):
        copy = str(tmp_path / f"run{fail_at}")
        shutil.copytree(table.path, copy)
        io = FailingIO(fail_at, operations=("delete", "overwrite_atomic"))
        failing = FileStoreTable(io, copy, table.schema)
        try:
            expire_snapshots(failing, retain_max=2, retain_min=1)
            expire_changelogs(failing, retain_max=3, retain_min=1)
        except OSError:
            pass
        done = io.calls <= fail_at  # ran to the end without meeting the failure
        reopened = FileStoreTable.load(copy)
        ids = reopened.snapshot_manager.list_snapshot_ids()
        kept = _changelogs(reopened).list_snapshot_ids()
        assert sorted(set(ids) | set(kept)) == list(range(min(kept + ids), 8)), fail_at
        for sid in ids:
            reopened.copy({"scan.snapshot-id": str(sid)}).to_arrow()
        for changelog in _changelogs(reopened).snapshots():
            assert all(map(os.path.exists, _appended(reopened, changelog)))
        if done:
            assert (ids, kept) == ([6, 7], [5])
            break
    assert done and fail_at >= 10


@pytest.mark.oracle
@pytest.mark.parametrize("producer", ["input", "none"])
def test_our_expiry_then_javas_leave_what_javas_alone_leaves(
    warehouse: str, tmp_path: Any, oracle: Callable[..., Any], producer: str
) -> None:
    """A Java table with a decoupled changelog: one more commit by us (then one by Java)
    keeps exactly the files, changelogs and hints that Java's own commits keep."""
    options = [
        "bucket=1",
        f"changelog-producer={producer}",
        "snapshot.num-retained.max=2",
        "snapshot.num-retained.min=1",
        "changelog.num-retained.max=3",
        "changelog.num-retained.min=1",
        "num-sorted-run.compaction-trigger=100",  # no compaction snapshot: one per commit
        "num-sorted-run.stop-trigger=200",
    ]
    args = ["--schema", "k INT, v STRING", "--primary-key", "k"]
    oracle("create-table", warehouse, "db.t", *args, *[a for o in options for a in ("--option", o)])
    for i in range(4):
        oracle("write", warehouse, "db.t", "--json-rows", json.dumps([{"k": i % 2, "v": f"{i}"}]))
    java_wh = str(tmp_path / "java")
    shutil.copytree(warehouse, java_wh)
    ours_root, java_root = f"{warehouse}/db.db/t", f"{java_wh}/db.db/t"
    before = _listing(ours_root)
    assert "changelog/changelog-2" in before and "changelog/changelog-1" not in before

    def same_state() -> None:
        for root in (ours_root, java_root):
            assert ("changelog/EARLIEST" in _listing(root)) == ("changelog/EARLIEST" in before)
        assert _listing(ours_root) & before == _listing(java_root) & before
        for directory in ("snapshot", "changelog"):
            mine, theirs = (sorted(os.listdir(f"{r}/{directory}")) for r in (ours_root, java_root))
            assert mine == theirs
            for name in ("EARLIEST", "LATEST"):
                if name in mine:
                    ours_hint = open(f"{ours_root}/{directory}/{name}").read()
                    assert ours_hint == open(f"{java_root}/{directory}/{name}").read()

    table = FileSystemCatalog(warehouse).get_table("db.t")
    schema = pa.schema([pa.field("k", pa.int32(), nullable=False), ("v", pa.string())])
    table.write_arrow(pa.table({"k": pa.array([9], pa.int32()), "v": ["ours"]}, schema=schema))
    oracle("write", java_wh, "db.t", "--json-rows", json.dumps([{"k": 9, "v": "java"}]))
    same_state()
    assert sorted(os.listdir(f"{ours_root}/changelog"))[:1] == ["EARLIEST"]
    for wh in (warehouse, java_wh):  # Java expires the changelogs we wrote
        oracle("write", wh, "db.t", "--json-rows", json.dumps([{"k": 8, "v": "java"}]))
    same_state()
    rows = oracle("read", warehouse, "db.t")
    assert [(r["k"], r["v"]) for r in rows] == [(0, "2"), (1, "3"), (8, "java"), (9, "ours")]


def _input_table(warehouse: str, **options: str) -> tuple[FileStoreTable, dict[int, str]]:
    """A ``changelog-producer`` = ``input`` table after six commits, and the path of the
    changelog file each commit wrote (a compaction trigger above six runs: one snapshot per
    commit, no writer compaction)."""
    options = {
        "bucket": "1",
        "changelog-producer": "input",
        "num-sorted-run.compaction-trigger": "10",
        **options,
    }
    table = kvd_table(warehouse, primary_keys=["k", "dt"], options=options)
    written = {}
    for i in range(1, 7):
        table.write_arrow(kvd_batch([i % 3]))
        snapshot = table.latest_snapshot()
        assert snapshot is not None
        (entry,) = changelog_entries(table, snapshot)
        written[i] = f"{table.path}/dt=a/bucket-0/{entry.file.file_name}"
    return table, written


def test_decoupled_changelogs_keep_their_changelog_files_readable(warehouse: str) -> None:
    table, written = _input_table(warehouse, **DECOUPLED)
    assert table.snapshot_manager.list_snapshot_ids() == [5, 6]
    changelogs = _changelogs(table)
    assert changelogs.list_snapshot_ids() == [3, 4]
    assert {i for i, path in written.items() if os.path.exists(path)} == {3, 4, 5, 6}
    for changelog in changelogs.snapshots():
        i = changelog.snapshot_id
        assert changelog_rows(table, changelog) == [(i % 3, f"v{i % 3}", "+I", i - 1)]
    assert find_orphans(table, dry_run=True).count == 0


def test_coupled_expiry_deletes_changelog_files_tags_keep_theirs(warehouse: str) -> None:
    table, written = _input_table(
        warehouse, **{"snapshot.num-retained.max": "10", "snapshot.num-retained.min": "1"}
    )
    create_tag(table, "t2", snapshot_id=2)
    assert expire_snapshots(table, retain_max=2, retain_min=1).expired == 4
    assert not os.path.exists(f"{table.path}/changelog")
    # The tagged snapshot's changelog stays with the tag (see file_deletion's docstring).
    assert {i for i, path in written.items() if os.path.exists(path)} == {2, 5, 6}
    assert find_orphans(table, dry_run=True).count == 0
    delete_tags(table, "t2")
    assert {i for i, path in written.items() if os.path.exists(path)} == {5, 6}
    assert find_orphans(table, dry_run=True).count == 0


def test_rollback_deletes_the_changelog_files_of_dropped_snapshots(warehouse: str) -> None:
    table, written = _input_table(warehouse)
    rollback_to_snapshot(table, 4)
    assert {i for i, path in written.items() if os.path.exists(path)} == {1, 2, 3, 4}
    assert find_orphans(table, dry_run=True).count == 0

"""Rollback: snapshots, tags, hints and files; dry run; errors; crash safety; interop."""

from __future__ import annotations

import os
import shutil
import time
import types
from typing import Any

import pyarrow as pa
import pytest

import paimon_core.operations.commit as commit_module
from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import InvalidArgument, InvalidTagName, SnapshotNotFound, TagNotFound
from paimon_core.format.snapshot import snapshot_to_json
from paimon_core.lifecycle import rollback as rb
from paimon_core.lifecycle import tag_management as tm
from paimon_core.table import FileStoreTable
from tests.interop.helpers import pypaimon_read, rows
from tests.unit.paimon_core.helpers import FailingIO, file_state, keys

SCHEMA = pa.schema([("k", pa.int64()), ("v", pa.string())])


def _table(warehouse: str, **options: str) -> FileStoreTable:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    return catalog.create_table("db.t", SCHEMA, options=options)


def _load(warehouse: str) -> FileStoreTable:
    return FileSystemCatalog(warehouse).get_table("db.t")


def _batch(*ks: int) -> pa.Table:
    return pa.table({"k": list(ks), "v": [f"v{k}" for k in ks]}, schema=SCHEMA)


def _data_files(root: str) -> set[str]:
    return {p for p in file_state(root) if p.endswith(".parquet")}


def _history(warehouse: str) -> FileStoreTable:
    """Snapshots 1..4 (3 overwrites 1-2), tags t1->1, t2->2, t3->3, t4->4."""
    table = _table(warehouse)
    table.write_arrow(_batch(1))
    tm.create_tag(table, "t1")
    table.write_arrow(_batch(2))
    tm.create_tag(table, "t2")
    table.write_arrow(_batch(3), overwrite=True)
    tm.create_tag(table, "t3")
    table.write_arrow(_batch(4))
    tm.create_tag(table, "t4")
    return table


EXPECTED = {1: [1], 2: [1, 2], 3: [3], 4: [3, 4]}


@pytest.fixture
def commit_at(monkeypatch: pytest.MonkeyPatch) -> types.SimpleNamespace:
    clock = types.SimpleNamespace(millis=None)
    fake = types.SimpleNamespace(**{n: getattr(time, n) for n in dir(time) if n[0] != "_"})
    fake.time = lambda: time.time() if clock.millis is None else clock.millis / 1000
    monkeypatch.setattr(commit_module, "time", fake)
    return clock


def test_rollback_to_snapshot_removes_newer_snapshots_tags_and_their_files(
    warehouse: str,
) -> None:
    table = _history(warehouse)
    before = _data_files(warehouse)
    result = rb.rollback_to_snapshot(table, 2)
    assert (result.previous_snapshot_id, result.snapshot_id, result.dry_run) == (4, 2, False)
    assert result.plan.removed_snapshot_ids == (4, 3)
    assert result.plan.removed_tags == ("t3", "t4")
    manager = table.snapshot_manager
    assert manager.list_snapshot_ids() == [1, 2]
    assert table.file_io.read_text(manager.latest_hint_path) == "2"
    assert list(tm.list_tags(table)) == ["t1", "t2"]
    assert keys(table) == [1, 2]
    assert keys(table, **{"scan.tag-name": "t1"}) == [1]
    after = _data_files(warehouse)
    gone = before - after
    assert len(gone) == 2 and len(after) == 2  # the files of k=3 and k=4
    assert {p.rsplit("/", 1)[-1] for p in gone} == {
        p.rsplit("/", 1)[-1] for p in result.plan.deletion.data_files
    }
    deleted = result.plan.deletion
    assert len(deleted.manifest_lists) == 4  # base and delta lists of snapshots 3 and 4
    assert not any(os.path.exists(p) for p in (*deleted.manifest_lists, *deleted.manifests))
    # A new commit continues from snapshot 3 again.
    assert table.write_arrow(_batch(5)) == 3
    assert keys(table) == [1, 2, 5]


def test_dry_run_changes_nothing_and_lists_the_plan_in_order(warehouse: str) -> None:
    table = _history(warehouse)
    before = file_state(warehouse)
    result = rb.rollback(table, "2", dry_run=True)
    assert file_state(warehouse) == before
    assert result.dry_run and result.snapshot_id == 2
    plan = result.plan
    names = [p.rsplit("/", 1)[-1] for p in plan.files()]
    assert names[:4] == ["snapshot-4", "snapshot-3", "tag-t3", "tag-t4"]
    assert sum(n.endswith(".parquet") for n in names) == 2
    assert plan.hints == ((table.snapshot_manager.latest_hint_path, 2),)
    text = str(plan)
    assert "remove snapshots [4, 3], tags ['t3', 't4']" in text and "LATEST = 2" in text


def test_long_lived_changelogs_newer_than_the_target_go(warehouse: str) -> None:
    table = _history(warehouse)
    changelog = os.path.join(table.path, "changelog")
    os.mkdir(changelog)
    for i in (1, 2, 3):
        with open(os.path.join(changelog, f"changelog-{i}"), "w") as f:
            f.write("{}")
    result = rb.rollback_to_snapshot(table, 1, dry_run=True)
    assert (os.path.join(changelog, "LATEST"), 1) in result.plan.hints
    rb.rollback_to_snapshot(table, 1)
    assert sorted(os.listdir(changelog)) == ["LATEST", "changelog-1"]
    with open(os.path.join(changelog, "LATEST")) as f:
        assert f.read() == "1"
    os.rename(os.path.join(changelog, "changelog-1"), os.path.join(changelog, "changelog-5"))
    table.write_arrow(_batch(6))
    rb.rollback_to_snapshot(table, 1)
    assert sorted(os.listdir(changelog)) == ["LATEST"]
    with open(os.path.join(changelog, "LATEST")) as f:
        assert f.read() == "-1"  # every long-lived changelog is gone (Paimon writes -1)


def test_rollback_to_tag_of_an_expired_snapshot_restores_it(warehouse: str) -> None:
    table = _history(warehouse)
    manager = table.snapshot_manager
    tagged = table.tag_manager.get("t1").snapshot
    manager.delete_snapshot(1)
    manager.delete_snapshot(2)
    manager.write_earliest_hint(3)
    tm.replace_tag(table, "t1", 1, time_retained="1 d")  # a TTL must not reach the snapshot
    result = rb.rollback_to_tag(table, "t1")
    assert result.plan.restore_path == manager.snapshot_path(1)
    assert (result.previous_snapshot_id, result.snapshot_id) == (4, 1)
    assert manager.list_snapshot_ids() == [1]
    assert table.file_io.read_text(manager.snapshot_path(1)) == snapshot_to_json(tagged)
    assert table.file_io.read_text(manager.earliest_hint_path) == "1"
    assert table.file_io.read_text(manager.latest_hint_path) == "1"
    assert list(tm.list_tags(table)) == ["t1"]
    assert keys(table) == [1]
    assert table.write_arrow(_batch(9)) == 2
    assert keys(table) == [1, 9]


def test_rollback_to_an_expired_snapshot_id_uses_its_tag(warehouse: str) -> None:
    table = _history(warehouse)
    table.snapshot_manager.delete_snapshot(1)
    table.snapshot_manager.write_earliest_hint(2)
    result = rb.rollback_to_snapshot(table, 1)
    assert result.snapshot_id == 1 and result.plan.restore_path is not None
    assert table.snapshot_manager.list_snapshot_ids() == [1]
    assert keys(table) == [1]


def test_rollback_to_timestamp(warehouse: str, commit_at: types.SimpleNamespace) -> None:
    table = _table(warehouse)
    for k, ms in ((1, 1_000), (2, 2_000), (3, 3_000)):
        commit_at.millis = ms
        table.write_arrow(_batch(k))
    before = file_state(warehouse)
    with pytest.raises(SnapshotNotFound, match=r"^Can not find snapshot earlier than 999$"):
        rb.rollback_to_timestamp(table, 999)
    assert file_state(warehouse) == before
    assert rb.rollback_to_timestamp(table, 2_999).snapshot_id == 2
    assert rb.rollback_to_timestamp(table, 1_000).snapshot_id == 1
    assert keys(table) == [1]


def test_version_strings_and_numeric_tags(warehouse: str) -> None:
    table = _history(warehouse)
    tm.create_tag(table, "1", snapshot_id=3, allow_numeric=True)  # `version` "1" is snapshot 1
    assert rb.rollback(table, "4").snapshot_id == 4
    assert rb.rollback(table, "t3").snapshot_id == 3
    assert rb.rollback(table, "1", dry_run=True).plan.removed_snapshot_ids == (3, 2)
    assert rb.rollback_to_tag(table, "1").snapshot_id == 3
    assert rb.rollback(table, 2).snapshot_id == 2
    assert list(tm.list_tags(table)) == ["t1", "t2"]
    assert keys(table) == [1, 2]


def test_errors_change_nothing(warehouse: str, tmp_path: Any) -> None:
    empty = str(tmp_path / "empty")
    os.mkdir(empty)
    with pytest.raises(SnapshotNotFound, match=r"^Latest snapshot is null, can not rollback\.$"):
        rb.rollback_to_snapshot(_table(empty), 1)
    table = _history(warehouse)
    before = file_state(warehouse)
    with pytest.raises(SnapshotNotFound, match=r"^Rollback snapshot '9' doesn't exist\.$"):
        rb.rollback_to_snapshot(table, 9)
    with pytest.raises(TagNotFound, match=r"^Tag 'nope' doesn't exist\.$"):
        rb.rollback(table, "nope")
    with pytest.raises(InvalidArgument):
        rb.rollback(table, "  ")
    with pytest.raises(InvalidTagName):
        rb.rollback_to_tag(table, "../snapshot/snapshot-1")
    assert file_state(warehouse) == before


def test_files_shared_with_a_branch_are_kept(warehouse: str) -> None:
    from pypaimon import CatalogFactory

    table = _history(warehouse)
    theirs = CatalogFactory.create({"warehouse": warehouse}).get_table("db.t")
    theirs.branch_manager().create_branch("b", tag_name="t4")
    before = _data_files(warehouse)
    s4 = table.snapshot_manager.snapshot(4)
    result = rb.rollback_to_snapshot(table, 2)
    assert not result.plan.deletion.data_files  # snapshot 3's are in t4, so in the branch
    lists = {p.rsplit("/", 1)[-1] for p in result.plan.deletion.manifest_lists}
    assert lists and not lists & {s4.base_manifest_list, s4.delta_manifest_list}
    assert _data_files(warehouse) == before
    branch = pypaimon_read(warehouse, "db.t$branch_b")
    assert rows(branch, ["k"]) == [(3,), (4,)]


def _check_readable(warehouse: str) -> None:
    table = _load(warehouse)
    for sid in table.snapshot_manager.list_snapshot_ids():
        assert keys(table, **{"scan.snapshot-id": str(sid)}) == EXPECTED[sid]
    for name, tag in table.tag_manager.list_tags().items():
        assert keys(table, **{"scan.tag-name": name}) == EXPECTED[tag.snapshot_id]
    latest = table.snapshot_manager.latest_snapshot_id()
    assert latest is not None and keys(table) == EXPECTED[latest]


@pytest.mark.parametrize("expired", [False, True])
def test_a_failure_at_any_step_leaves_everything_readable(
    tmp_path: Any, expired: bool, caplog: pytest.LogCaptureFixture
) -> None:
    origin = str(tmp_path / "origin")
    os.mkdir(origin)
    table = _history(origin)
    if expired:  # rollback to t2 then also restores snapshot 2 and rewrites EARLIEST
        for sid in (1, 2):
            table.snapshot_manager.delete_snapshot(sid)
        table.snapshot_manager.write_earliest_hint(3)
    steps = 1 + len(rb.rollback_to_tag(table, "t2", dry_run=True).plan.files()) + expired * 2
    for fail_at in range(steps + 1):
        warehouse = str(tmp_path / f"wh{fail_at}")
        shutil.copytree(origin, warehouse)
        good = _load(warehouse)
        io = FailingIO(fail_at)
        failing = FileStoreTable(io, good.path, good.schema, good.identifier)
        try:
            rb.rollback_to_tag(failing, "t2")
        except OSError:
            pass
        _check_readable(warehouse)
        rb.rollback_to_tag(_load(warehouse), "t2")  # running it again finishes the job
        final = _load(warehouse)
        assert final.snapshot_manager.list_snapshot_ids() == ([2] if expired else [1, 2])
        assert list(tm.list_tags(final)) == ["t1", "t2"]
        _check_readable(warehouse)
    assert io.calls == steps  # every step of the run got its own failure above


# ------------------------------------------------------------------------- interop


def test_pypaimon_reads_our_rollback_and_we_roll_back_to_its_tag(warehouse: str) -> None:
    from pypaimon import CatalogFactory

    table = _history(warehouse)
    rb.rollback_to_tag(table, "t2")
    assert rows(pypaimon_read(warehouse, "db.t"), ["k"]) == [(1,), (2,)]
    assert rows(pypaimon_read(warehouse, "db.t", {"scan.tag-name": "t1"}), ["k"]) == [(1,)]
    theirs = CatalogFactory.create({"warehouse": warehouse}).get_table("db.t")
    assert sorted(theirs.list_tags()) == ["t1", "t2"]
    table.write_arrow(_batch(7))
    theirs.create_tag("py", snapshot_id=3)
    table.write_arrow(_batch(8))
    assert rb.rollback_to_tag(table, "py").snapshot_id == 3
    assert keys(table) == [1, 2, 7]
    assert rows(pypaimon_read(warehouse, "db.t"), ["k"]) == [(1,), (2,), (7,)]


@pytest.mark.oracle
def test_java_reads_our_rolled_back_table_and_agrees_with_its_own_rollback(
    tmp_path: Any, oracle: Any
) -> None:
    ours, java = str(tmp_path / "ours"), str(tmp_path / "java")
    os.mkdir(ours)
    _history(ours)
    shutil.copytree(ours, java)
    rb.rollback_to_tag(_load(ours), "t2")
    assert oracle("rollback", java, "db.t", "--tag", "t2") == {"latestSnapshot": 2}
    assert [s["id"] for s in oracle("snapshots", ours, "db.t")] == [1, 2]
    assert oracle("tags", ours, "db.t") == {"t1": 1, "t2": 2}
    assert sorted(r["k"] for r in oracle("read", ours, "db.t")) == [1, 2]
    assert sorted(r["k"] for r in oracle("read", ours, "db.t", "--tag", "t1")) == [1]
    theirs = _load(java)
    assert theirs.snapshot_manager.list_snapshot_ids() == [1, 2]
    assert list(tm.list_tags(theirs)) == ["t1", "t2"]
    # Java 0.9 (like 1.0/1.1) deletes the data files only the removed snapshots used, as we do.
    assert _data_files(ours) == _data_files(java)
    hint = os.path.join("db.db", "t", "snapshot", "LATEST")
    assert file_state(ours)[hint] == file_state(java)[hint] == b"2"

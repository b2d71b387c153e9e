"""Branches: layout, create/delete/rename/fast-forward/merge, errors, and the lifecycle
safety: nothing main or a branch does deletes a file another branch still reads."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import (
    BranchAlreadyExists,
    BranchNotFound,
    InvalidArgument,
    InvalidBranchName,
    InvalidTagName,
    SnapshotNotFound,
    TableNotExist,
    TagNotFound,
)
from paimon_core.format.schema import AddColumn
from paimon_core.format.types import parse_data_type
from paimon_core.io.fileio import LocalFileIO
from paimon_core.lifecycle import branch_management as bm
from paimon_core.lifecycle import rollback as rb
from paimon_core.lifecycle import tag_management as tm
from paimon_core.lifecycle.expire import expire_snapshots
from paimon_core.lifecycle.file_deletion import files_in_use
from paimon_core.table import FileStoreTable
from tests.unit.paimon_core.helpers import FailingIO, file_state
from tests.unit.paimon_core.lifecycle.test_lifecycle_state_machine import find_orphans

SCHEMA = pa.schema([("k", pa.int64()), ("v", pa.string())])


def _table(warehouse: str, **options: str) -> FileStoreTable:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    return catalog.create_table("db.t", SCHEMA, options={"write-only": "true", **options})


def _batch(*ks: int) -> pa.Table:
    return pa.table({"k": list(ks), "v": [f"v{k}" for k in ks]}, schema=SCHEMA)


def _keys(table: FileStoreTable, **options: str) -> list[int]:
    return sorted(table.copy(options).to_arrow().column("k").to_pylist())


def _branch(warehouse: str, name: str) -> FileStoreTable:
    return FileSystemCatalog(warehouse).get_table(f"db.t$branch_{name}")


def _history(warehouse: str) -> FileStoreTable:
    """Snapshots 1..4 of main (3 overwrites), tags t2 -> 2 and t4 -> 4."""
    table = _table(warehouse)
    table.write_arrow(_batch(1))
    table.write_arrow(_batch(2))
    tm.create_tag(table, "t2")
    table.write_arrow(_batch(3), overwrite=True)
    table.write_arrow(_batch(4))
    tm.create_tag(table, "t4")
    return table


def _all_files_present(table: FileStoreTable) -> None:
    snapshots = table.snapshot_manager.snapshots()
    tags = [t.snapshot for t in table.tag_manager.list_tags().values()]
    missing = [
        p for p in files_in_use(table, [*snapshots, *tags]).all_paths() if not os.path.exists(p)
    ]
    assert not missing, missing


# ------------------------------------------------------------------------------ layout


def test_branch_from_tag_has_paimons_layout_and_reads_the_tag(warehouse: str) -> None:
    table = _history(warehouse)
    assert bm.create_branch(table, "b1", "t2")
    root = table.path
    listing = sorted(file_state(f"{root}/branch"))
    assert listing == [
        "branch-b1/schema/schema-0",
        "branch-b1/snapshot/snapshot-2",
        "branch-b1/tag/tag-t2",
    ]
    same = {
        "branch/branch-b1/schema/schema-0": "schema/schema-0",
        "branch/branch-b1/snapshot/snapshot-2": "snapshot/snapshot-2",
        "branch/branch-b1/tag/tag-t2": "tag/tag-t2",
    }
    state = file_state(root)
    for copy, original in same.items():
        assert state[copy] == state[original]
    branch = _branch(warehouse, "b1")
    assert branch.branch == "b1" and _keys(branch) == [1, 2]
    assert branch.write_arrow(_batch(9)) == 3  # the branch goes on from the tag's snapshot
    assert _keys(branch) == [1, 2, 9]
    assert _keys(FileStoreTable.load(root)) == [3, 4]
    assert bm.list_branches(table) == ["b1"]
    assert json.loads(state["branch/branch-b1/snapshot/snapshot-2"])["id"] == 2


def test_empty_branch_has_the_latest_schema_only_and_its_own_schema_history(
    warehouse: str,
) -> None:
    table = _history(warehouse)
    table.schema_manager.commit_changes(AddColumn("w", parse_data_type("INT")))
    table = FileStoreTable.load(table.path)
    assert bm.create_branch(table, "e")
    assert sorted(os.listdir(f"{table.path}/branch/branch-e")) == ["schema"]
    assert sorted(os.listdir(f"{table.path}/branch/branch-e/schema")) == ["schema-0", "schema-1"]
    branch = _branch(warehouse, "e")
    assert branch.to_arrow().num_rows == 0 and branch.schema.schema_id == 1
    branch.schema_manager.commit_changes(AddColumn("x", parse_data_type("INT")))
    assert FileStoreTable.load(table.path).schema.schema_id == 1  # main unchanged
    assert _branch(warehouse, "e").schema.schema_id == 2
    row = pa.table({"k": [5], "v": ["a"], "w": [1], "x": [2]})
    assert _branch(warehouse, "e").write_arrow(row) == 1
    assert _branch(warehouse, "e").to_arrow().to_pylist() == [{"k": 5, "v": "a", "w": 1, "x": 2}]


def test_branch_of_an_expired_tagged_snapshot_is_written_from_the_tag(warehouse: str) -> None:
    table = _history(warehouse)
    expire_snapshots(table, retain_max=1, retain_min=1, older_than_millis=2**62)
    assert not table.snapshot_manager.snapshot_exists(2)
    bm.create_branch(table, "old", "t2")
    assert _keys(_branch(warehouse, "old")) == [1, 2]
    tagged = table.tag_manager.get("t2").snapshot
    assert _branch(warehouse, "old").snapshot_manager.snapshot(2) == tagged


def test_errors_change_nothing(warehouse: str) -> None:
    table = _history(warehouse)
    bm.create_branch(table, "b1")
    before = file_state(warehouse)
    cases = [
        (lambda: bm.create_branch(table, "main"), InvalidBranchName, "default branch"),
        (lambda: bm.create_branch(table, " "), InvalidBranchName, "blank"),
        (lambda: bm.create_branch(table, "123"), InvalidBranchName, "pure numeric"),
        (lambda: bm.create_branch(table, "a/b"), InvalidBranchName, "'/'"),
        (lambda: bm.create_branch(table, "a$b"), InvalidBranchName, r"'\$'"),
        (lambda: bm.create_branch(table, ".x"), InvalidBranchName, "start with"),
        (lambda: bm.create_branch(table, "b1"), BranchAlreadyExists, "already exists"),
        (lambda: bm.create_branch(table, "b2", "nope"), TagNotFound, "doesn't exist"),
        (lambda: bm.create_branch(table, "b2", "../t2"), InvalidTagName, "must not"),
        (lambda: bm.delete_branch(table, "nope"), BranchNotFound, "doesn't exist"),
        (lambda: bm.delete_branch(table, "main"), BranchNotFound, "doesn't exist"),
        (lambda: bm.delete_branches(table, "b1,nope"), BranchNotFound, "'nope'"),
        (lambda: bm.rename_branch(table, "main", "x"), InvalidArgument, "main branch"),
        (lambda: bm.rename_branch(table, "nope", "x"), BranchNotFound, "doesn't exist"),
        (lambda: bm.rename_branch(table, "b1", "b1"), BranchAlreadyExists, "already exists"),
        (lambda: bm.rename_branch(table, "b1", "9"), InvalidBranchName, "numeric"),
        (lambda: bm.fast_forward(table, "main"), InvalidArgument, "do not use"),
        (lambda: bm.fast_forward(table, "nope"), BranchNotFound, "doesn't exist"),
        (lambda: bm.fast_forward(table, "b1"), SnapshotNotFound, "does not have snapshot"),
        (lambda: bm.merge_branch(table, "b1", "b1"), InvalidArgument, "into itself"),
        (lambda: bm.merge_branch(table, "nope"), BranchNotFound, "doesn't exist"),
    ]
    for action, error, message in cases:
        with pytest.raises(error, match=message):
            action()
    with pytest.raises(InvalidArgument, match="current branch"):
        bm.fast_forward(_branch(warehouse, "b1"), "b1")
    with pytest.raises(TableNotExist, match="Branch nope"):
        FileSystemCatalog(warehouse).get_table("db.t$branch_nope")
    assert file_state(warehouse) == before
    assert not bm.create_branch(table, "b1", ignore_if_exists=True)


def test_delete_and_rename(warehouse: str) -> None:
    table = _history(warehouse)
    for name in ("a", "b", "c"):
        bm.create_branch(table, name, "t4")
    bm.rename_branch(table, "a", "z")
    assert bm.list_branches(table) == ["b", "c", "z"]
    assert _keys(_branch(warehouse, "z")) == [3, 4]
    assert bm.delete_branches(table, "b,c") == ["b", "c"]
    assert bm.list_branches(table) == ["z"]
    fallback = table.copy({"scan.fallback-branch": "z"})
    with pytest.raises(InvalidArgument, match=r"scan\.fallback-branch"):
        bm.delete_branch(fallback, "z")
    bm.delete_branch(table, "z")
    assert not os.path.exists(f"{table.path}/branch/branch-z")
    assert _keys(FileStoreTable.load(table.path)) == [3, 4]


def test_a_branch_of_a_branch_takes_its_tags_and_schemas(warehouse: str) -> None:
    table = _history(warehouse)
    bm.create_branch(table, "b1", "t2")
    b1 = _branch(warehouse, "b1")
    b1.write_arrow(_batch(7))
    tm.create_tag(b1, "bt")
    bm.create_branch(b1, "b2", "bt")
    assert _keys(_branch(warehouse, "b2")) == [1, 2, 7]
    assert sorted(os.listdir(f"{table.path}/branch/branch-b2/tag")) == ["tag-bt"]


# ----------------------------------------------------------------------- fast-forward


def test_fast_forward_replaces_main_history_and_frees_only_unused_files(warehouse: str) -> None:
    table = _history(warehouse)
    bm.create_branch(table, "b", "t2")
    branch = _branch(warehouse, "b")
    branch.write_arrow(_batch(20))
    tm.create_tag(branch, "bt")
    branch.write_arrow(_batch(21))
    bm.create_branch(table, "keep", "t4")  # holds main's snapshot 4 files
    s3 = table.snapshot_manager.snapshot(3)
    plan = bm.fast_forward(table, "b")
    assert plan.removed_snapshot_ids == (4, 3, 2) and plan.removed_tags == ("t2", "t4")
    main = FileStoreTable.load(table.path)
    assert main.snapshot_manager.list_snapshot_ids() == [1, 2, 3, 4]
    assert sorted(main.tag_manager.tag_names()) == ["bt", "t2"]
    assert _keys(main) == [1, 2, 20, 21]
    assert _keys(main, **{"scan.tag-name": "bt"}) == [1, 2, 20]
    with open(main.snapshot_manager.latest_hint_path) as hint:
        assert hint.read() == "4"
    assert _keys(_branch(warehouse, "keep")) == [3, 4]  # another branch still reads
    assert _keys(_branch(warehouse, "b")) == [1, 2, 20, 21]
    gone = set(plan.deletion.files())
    assert f"{table.path}/manifest/{s3.delta_manifest_list}" in gone  # only main's 3 had it
    assert all(not os.path.exists(p) for p in gone)
    for handle in (main, _branch(warehouse, "keep"), _branch(warehouse, "b")):
        _all_files_present(handle)
    assert main.write_arrow(_batch(30)) == 5


def test_fast_forward_with_schema_changes_and_an_expired_main(warehouse: str) -> None:
    table = _history(warehouse)
    bm.create_branch(table, "b", "t4")
    branch = _branch(warehouse, "b")
    branch.schema_manager.commit_changes(AddColumn("w", parse_data_type("INT")))
    _branch(warehouse, "b").write_arrow(pa.table({"k": [8], "v": ["x"], "w": [1]}))
    table.write_arrow(_batch(5))
    table.write_arrow(_batch(6))
    expire_snapshots(table, retain_max=1, retain_min=1, older_than_millis=2**62)
    plan = bm.fast_forward(table, "b")
    assert plan.restart and plan.copied_schemas == (0, 1)
    main = FileStoreTable.load(table.path)
    assert main.schema.schema_id == 1 and main.snapshot_manager.list_snapshot_ids() == [4, 5]
    assert main.snapshot_manager.earliest_hint() == 4
    assert _keys(main) == [3, 4, 8]
    _all_files_present(main)


# ------------------------------------------------------------------------------ merge


def test_merge_branch_adds_the_source_files_to_the_target(warehouse: str) -> None:
    table = _table(warehouse)
    table.write_arrow(_batch(1))
    tm.create_tag(table, "t1")
    bm.create_branch(table, "a", "t1")
    bm.create_branch(table, "b", "t1")
    _branch(warehouse, "a").write_arrow(_batch(2))
    assert bm.merge_branch(table, "a", "b") == 1
    assert _keys(_branch(warehouse, "b")) == [1, 2]
    assert bm.merge_branch(table, "a", "b") == 0
    assert bm.merge_branch(table, "a") == 1
    assert _keys(FileStoreTable.load(table.path)) == [1, 2]
    # The merged file is now main's too: deleting the source branch and removing orphans
    # keeps it.
    bm.delete_branches(table, "a,b")
    find_orphans(table, dry_run=False)
    assert _keys(FileStoreTable.load(table.path)) == [1, 2]


def test_merge_branch_refuses_what_paimon_refuses(warehouse: str) -> None:
    table = _table(warehouse)
    table.write_arrow(_batch(1))
    tm.create_tag(table, "t1")
    bm.create_branch(table, "a", "t1")
    bm.create_branch(table, "empty")
    with pytest.raises(InvalidArgument, match="does not have snapshot"):
        bm.merge_branch(table, "empty")
    table.write_arrow(_batch(2), overwrite=True)
    before = file_state(warehouse)
    with pytest.raises(InvalidArgument, match="has commit kind 'OVERWRITE'"):
        bm.merge_branch(table, "a")
    assert file_state(warehouse) == before
    pk = FileSystemCatalog(warehouse).create_table(
        "db.pk",
        SCHEMA.set(0, pa.field("k", pa.int64(), False)),
        primary_keys=["k"],
        options={"bucket": "1"},
    )
    pk.write_arrow(_batch(1))
    bm.create_branch(pk, "x")
    _branch_pk = FileSystemCatalog(warehouse).get_table("db.pk$branch_x")
    _branch_pk.write_arrow(_batch(2))
    with pytest.raises(InvalidArgument, match="primary keys"):
        bm.merge_branch(pk, "x")


# -------------------------------------------------------------------- lifecycle safety


def _branched(warehouse: str) -> tuple[FileStoreTable, list[int]]:
    """Main with 4 snapshots, branch b from t2 with one commit of its own."""
    table = _history(warehouse)
    bm.create_branch(table, "b", "t2")
    _branch(warehouse, "b").write_arrow(_batch(10))
    return table, [1, 2, 10]


def test_main_expiry_tag_deletion_rollback_and_orphans_keep_the_branch(warehouse: str) -> None:
    table, expected = _branched(warehouse)
    expire_snapshots(table, retain_max=1, retain_min=1, older_than_millis=2**62)
    tm.delete_tags(table, "t2")  # its snapshot has expired: Paimon deletes its files here
    rb.rollback_to_tag(table, "t4")
    tm.delete_tags(table, "t4")
    table.write_arrow(_batch(5), overwrite=True)
    expire_snapshots(table, retain_max=1, retain_min=1, older_than_millis=2**62)
    find_orphans(table, dry_run=False)
    branch = _branch(warehouse, "b")
    assert _keys(branch) == expected
    assert _keys(branch, **{"scan.snapshot-id": "2"}) == [1, 2]
    _all_files_present(branch)
    assert _keys(FileStoreTable.load(table.path)) == [5]


def test_branch_expiry_rollback_and_tag_deletion_keep_main(warehouse: str) -> None:
    table, _ = _branched(warehouse)
    branch = _branch(warehouse, "b")
    branch.write_arrow(_batch(11), overwrite=True)
    expire_snapshots(branch, retain_max=1, retain_min=1, older_than_millis=2**62)
    tm.delete_tags(branch, "t2")
    rb.rollback_to_snapshot(_branch(warehouse, "b"), 4)
    find_orphans(_branch(warehouse, "b"), dry_run=False)
    main = FileStoreTable.load(table.path)
    assert _keys(main, **{"scan.tag-name": "t2"}) == [1, 2]
    assert _keys(main, **{"scan.snapshot-id": "1"}) == [1]
    _all_files_present(main)


def test_deleting_a_branch_frees_its_files_for_orphan_removal_only(warehouse: str) -> None:
    table, _ = _branched(warehouse)
    branch = _branch(warehouse, "b")
    own = {
        p
        for p in files_in_use(branch, [branch.snapshot_manager.snapshot(3)]).data_files
        if p not in files_in_use(table, table.snapshot_manager.snapshots()).data_files
    }
    assert own
    bm.delete_branch(table, "b")
    assert all(os.path.exists(p) for p in own)  # Paimon: metadata only
    gone = set(find_orphans(table, dry_run=False).paths)
    assert own <= gone
    _all_files_present(FileStoreTable.load(table.path))


# ---------------------------------------------------------------------- crash injection


class Crash(BaseException):
    """The process dying: not an ``Exception``, so no handler of the code under test sees it."""


def _copy(source: str, target: str) -> str:
    shutil.copytree(source, target)
    return f"{target}/db.db/t"


def _steps(path: str, action: Callable[[FileStoreTable], object]) -> int:
    scratch = f"{path}-count"
    shutil.copytree(path, scratch)
    io = FailingIO(None)
    action(FileStoreTable.load(scratch, file_io=io))
    shutil.rmtree(scratch)
    return io.calls


@pytest.mark.parametrize("error", [Crash, OSError])
def test_a_crash_while_creating_a_branch_leaves_a_readable_branch(
    tmp_path: Path, error: type[BaseException]
) -> None:
    origin = str(tmp_path / "origin")
    os.makedirs(origin)
    table = _history(origin)
    table.schema_manager.commit_changes(AddColumn("w", parse_data_type("INT")))
    table = FileStoreTable.load(table.path)
    table.write_arrow(pa.table({"k": [5], "v": ["x"], "w": [1]}))
    tm.create_tag(table, "t5")
    steps = _steps(table.path, lambda t: bm.create_branch(t, "b", "t5"))
    assert steps == 4  # two schemas, the snapshot, the tag
    for step in range(steps):
        path = _copy(origin, str(tmp_path / f"run{step}"))
        before = file_state(path)
        io = FailingIO(step, error=error)
        with pytest.raises(error):
            bm.create_branch(FileStoreTable.load(path, file_io=io), "b", "t5")
        after = file_state(path)
        assert {p: b for p, b in after.items() if not p.startswith("branch/")} == before
        main = FileStoreTable.load(path)
        if step == 0:
            assert bm.list_branches(main) == []
        else:  # it exists from its newest schema on, and reads
            branch = FileStoreTable.load(path, branch="b")
            assert branch.schema.schema_id == 1
            assert _keys(branch) == ([] if step < 3 else [3, 4, 5])
            bm.delete_branch(main, "b")
        bm.create_branch(main, "b", "t5")
        assert _keys(FileStoreTable.load(path, branch="b")) == [3, 4, 5]


@pytest.mark.parametrize("error", [Crash, OSError])
def test_a_crash_while_creating_an_empty_branch_leaves_main_untouched(
    tmp_path: Path, error: type[BaseException]
) -> None:
    """An empty branch gets the table's schemas, newest first: a crash at any step changes
    nothing of main and leaves no branch or one that reads (empty, the newest schema);
    creating it again after deleting that works."""
    origin = str(tmp_path / "origin")
    os.makedirs(origin)
    table = _history(origin)
    table.schema_manager.commit_changes(AddColumn("w", parse_data_type("INT")))
    steps = _steps(table.path, lambda t: bm.create_branch(t, "e"))
    assert steps == 2  # schema-1, then schema-0
    for step in range(steps):
        path = _copy(origin, str(tmp_path / f"run{step}"))
        before = file_state(path)
        with pytest.raises(error):
            bm.create_branch(FileStoreTable.load(path, file_io=FailingIO(step, error=error)), "e")
        after = file_state(path)
        assert {p: b for p, b in after.items() if not p.startswith("branch/")} == before
        main = FileStoreTable.load(path)
        assert _keys(main) == [3, 4]
        _all_files_present(main)
        if step == 0:
            assert bm.list_branches(main) == []
        else:
            half_made = FileStoreTable.load(path, branch="e")
            assert half_made.schema.schema_id == 1 and _keys(half_made) == []
            bm.delete_branch(main, "e")
        bm.create_branch(main, "e")
        branch = FileStoreTable.load(path, branch="e")
        assert branch.schema.fields == main.schema.fields and _keys(branch) == []
        branch.write_arrow(pa.table({"k": [7], "v": ["e"], "w": [1]}))
        assert _keys(FileStoreTable.load(path, branch="e")) == [7]
        assert _keys(FileStoreTable.load(path)) == [3, 4]


@pytest.mark.parametrize("error", [Crash, OSError])
def test_a_crash_during_fast_forward_keeps_what_another_branch_uses(
    tmp_path: Path, error: type[BaseException]
) -> None:
    """Branch ``c`` is made from main's tag ``t4``, whose history fast-forwarding to ``b``
    replaces (and whose tag it deletes). At every step a crash may hit, ``c`` keeps every
    file and reads as made, before and after the rerun that finishes the fast-forward."""
    origin = str(tmp_path / "origin")
    os.makedirs(origin)
    table = _ff_history(origin)
    bm.create_branch(table, "c", "t4")
    steps = _steps(table.path, lambda t: bm.fast_forward(t, "b"))
    assert steps > 4
    for step in range(steps):
        path = _copy(origin, str(tmp_path / f"run{step}"))
        try:
            bm.fast_forward(FileStoreTable.load(path, file_io=FailingIO(step, error=error)), "b")
        except error:
            pass
        c = FileStoreTable.load(path, branch="c")
        assert _keys(c) == [3, 4] and _keys(c, **{"scan.tag-name": "t4"}) == [3, 4]
        _all_files_present(c)
        main = FileStoreTable.load(path)
        bm.fast_forward(main, "b")
        assert _keys(FileStoreTable.load(path)) == [1, 2, 20, 21]
        c = FileStoreTable.load(path, branch="c")
        assert _keys(c) == [3, 4]
        _all_files_present(c)
        _all_files_present(FileStoreTable.load(path))


def _ff_history(warehouse: str) -> FileStoreTable:
    table = _history(warehouse)
    bm.create_branch(table, "b", "t2")
    branch = _branch(warehouse, "b")
    branch.write_arrow(_batch(20))
    tm.create_tag(branch, "bt")
    branch.write_arrow(_batch(21))
    return table


OLD_MAIN = {1: [1], 2: [1, 2], 3: [3], 4: [3, 4]}
BRANCH = {2: [1, 2], 3: [1, 2, 20], 4: [1, 2, 20, 21]}


@pytest.mark.parametrize("error", [Crash, OSError])
def test_a_crash_during_fast_forward_leaves_main_readable_and_a_rerun_finishes(
    tmp_path: Path, error: type[BaseException]
) -> None:
    origin = str(tmp_path / "origin")
    os.makedirs(origin)
    table = _ff_history(origin)
    steps = _steps(table.path, lambda t: bm.fast_forward(t, "b"))
    for step in range(steps):
        path = _copy(origin, str(tmp_path / f"run{step}"))
        io = FailingIO(step, error=error)
        try:
            bm.fast_forward(FileStoreTable.load(path, file_io=io), "b")
        except error:
            pass
        else:  # a failed delete of a file nothing uses any more is only logged
            assert error is OSError and io.steps[step].startswith("delete ")
        main = FileStoreTable.load(path)
        ids = main.snapshot_manager.list_snapshot_ids()
        assert ids == list(range(1, len(ids) + 1))
        for sid in ids:
            assert _keys(main, **{"scan.snapshot-id": str(sid)}) in (OLD_MAIN[sid], BRANCH.get(sid))
        for name, tag in main.tag_manager.list_tags().items():
            assert _keys(main, **{"scan.tag-name": name}) in (
                OLD_MAIN[tag.snapshot_id],
                BRANCH.get(tag.snapshot_id),
            )
        _all_files_present(main)
        _all_files_present(FileStoreTable.load(path, branch="b"))
        bm.fast_forward(main, "b")
        done = FileStoreTable.load(path)
        assert done.snapshot_manager.list_snapshot_ids() == [1, 2, 3, 4]
        assert {i: _keys(done, **{"scan.snapshot-id": str(i)}) for i in (2, 3, 4)} == BRANCH
        assert sorted(done.tag_manager.tag_names()) == ["bt", "t2"]
        _all_files_present(done)


def test_a_tag_deleted_while_its_branch_is_made_withdraws_the_branch(warehouse: str) -> None:
    table = _history(warehouse)
    expire_snapshots(table, retain_max=1, retain_min=1, older_than_millis=2**62)

    class DeletingIO(LocalFileIO):
        """Deletes tag t2 (and its files) right after the branch's snapshot is written."""

        def write_no_clobber(self, path: str, data: bytes) -> bool:
            written = super().write_no_clobber(path, data)
            if "/branch-b/snapshot/" in path:
                tm.delete_tags(FileStoreTable.load(table.path), "t2")
            return written

    racing = FileStoreTable.load(table.path, file_io=DeletingIO())
    with pytest.raises(SnapshotNotFound, match="deleted meanwhile"):
        bm.create_branch(racing, "b", "t2")
    assert not os.path.exists(f"{table.path}/branch/branch-b")
    _all_files_present(FileStoreTable.load(table.path))


def test_a_branch_created_while_main_deletes_a_tag_keeps_its_files(warehouse: str) -> None:
    table = _history(warehouse)
    expire_snapshots(table, retain_max=1, retain_min=1, older_than_millis=2**62)

    class BranchingIO(LocalFileIO):
        """Creates branch b from t2 right after the tag deletion removed nothing yet but
        planned: when it deletes the tag file."""

        def delete(self, path: str) -> bool:
            if path.endswith("/tag/tag-t2") and not os.path.exists(f"{table.path}/branch"):
                bm.create_branch(FileStoreTable.load(table.path), "b", "t2")
            return super().delete(path)

    tm.delete_tags(FileStoreTable.load(table.path, file_io=BranchingIO()), "t2")
    branch = _branch(warehouse, "b")
    assert _keys(branch) == [1, 2]
    _all_files_present(branch)

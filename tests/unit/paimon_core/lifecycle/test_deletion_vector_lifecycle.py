"""Expiry, rollback, tag deletion and orphan removal on a table with deletion vectors: a
deletion-vector index file goes exactly when no remaining snapshot or tag lists it, also when
several snapshots share it; a failure at any step of expiry leaves every snapshot readable.

The history (bucket-unaware append table, DV index files combined by name):

    1: write A = [1, 2]     2: write B = [3, 4]
    3: delete 1 -> I1 {A}   4: delete 3 -> I2 {B}   5: delete 2 -> I3 {A} replaces I1

so I1 is shared by snapshots 3 and 4, I2 by 4 and 5, I3 is only in 5.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from paimon_core.lifecycle import rollback as rb
from paimon_core.lifecycle import tag_management as tm
from paimon_core.lifecycle.expire import ExpireResult, expire_snapshots
from paimon_core.lifecycle.orphan import remove_orphan_files
from paimon_core.operations.deletion_vectors import snapshot_dv_entries
from paimon_core.table import FileStoreTable
from tests.unit.paimon_core.helpers import FailingIO, kvd_batch, kvd_table
from tests.unit.paimon_core.operations.test_deletion_vectors import DV, delete_keys

ROWS = {1: [1, 2], 2: [1, 2, 3, 4], 3: [2, 3, 4], 4: [2, 4], 5: [4]}


def history(warehouse: str) -> tuple[FileStoreTable, dict[str, str]]:
    """The table and the paths of I1, I2, I3."""
    table = kvd_table(warehouse, options=DV, partition_keys=[])
    table.write_arrow(kvd_batch([1, 2]))
    table.write_arrow(kvd_batch([3, 4]))
    names: dict[str, str] = {}
    for label, key in (("I1", 1), ("I2", 3), ("I3", 2)):
        sid = delete_keys(table, {key})
        before = {e.file_name for e in _entries(table, sid - 1)}
        (new,) = [e.file_name for e in _entries(table, sid) if e.file_name not in before]
        names[label] = os.path.join(table.path, "index", new)
    assert {os.path.basename(p) for p in names.values()} == {
        e.file_name for s in (3, 4, 5) for e in _entries(table, s)
    }
    return table, names


def _entries(table: FileStoreTable, sid: int) -> list:
    return snapshot_dv_entries(table, table.snapshot_manager.snapshot(sid))


def expire(table: FileStoreTable, keep: int, dry_run: bool = False) -> ExpireResult:
    """Expire all but the ``keep`` newest snapshots."""
    return expire_snapshots(
        table, retain_max=keep, retain_min=keep, older_than_millis=2**62, dry_run=dry_run
    )


def rows_at(table: FileStoreTable, sid: int) -> list[int]:
    return sorted(table.copy({"scan.snapshot-id": str(sid)}).to_arrow().column("k").to_pylist())


def present(names: dict[str, str]) -> set[str]:
    return {label for label, path in names.items() if os.path.exists(path)}


def test_history_reads_as_expected(tmp_path: Path) -> None:
    table, names = history(str(tmp_path))
    assert {sid: rows_at(table, sid) for sid in ROWS} == ROWS
    assert present(names) == {"I1", "I2", "I3"}


def test_expiry_keeps_shared_vectors_until_no_snapshot_lists_them(tmp_path: Path) -> None:
    table, names = history(str(tmp_path))
    dry = expire(table, 2, dry_run=True)
    assert not set(names.values()) & set(dry.plan.files())  # 4 still lists I1
    expire(table, 2)
    assert present(names) == {"I1", "I2", "I3"}
    assert {sid: rows_at(table, sid) for sid in (4, 5)} == {4: ROWS[4], 5: ROWS[5]}
    dry = expire(table, 1, dry_run=True)
    assert names["I1"] in dry.plan.index_files
    assert names["I2"] not in dry.plan.files() and names["I3"] not in dry.plan.files()
    expire(table, 1)
    assert present(names) == {"I2", "I3"}
    assert rows_at(table, 5) == ROWS[5]


def test_a_tag_keeps_its_vectors_until_it_is_deleted(tmp_path: Path) -> None:
    table, names = history(str(tmp_path))
    tm.create_tag(table, "t3", snapshot_id=3)
    expire(table, 1)
    assert present(names) == {"I1", "I2", "I3"}  # t3 lists I1
    assert (
        sorted(table.copy({"scan.tag-name": "t3"}).to_arrow().column("k").to_pylist()) == (ROWS[3])
    )
    tm.delete_tags(table, "t3")
    assert present(names) == {"I2", "I3"}
    assert rows_at(table, 5) == ROWS[5]


def test_rollback_removes_only_the_vectors_of_the_rolled_back_snapshots(tmp_path: Path) -> None:
    table, names = history(str(tmp_path))
    dry = rb.rollback_to_snapshot(table, 3, dry_run=True)
    assert {p for p in names.values() if p in dry.plan.files()} == {names["I2"], names["I3"]}
    assert present(names) == {"I1", "I2", "I3"}
    rb.rollback_to_snapshot(table, 3)
    assert present(names) == {"I1"}
    assert rows_at(table, 3) == ROWS[3]
    delete_keys(table, {4})  # the next delete builds on snapshot 3's vectors
    assert sorted(table.to_arrow().column("k").to_pylist()) == [2, 3]


def test_rollback_to_a_tag_of_an_expired_snapshot_brings_its_vectors_back(
    tmp_path: Path,
) -> None:
    table, names = history(str(tmp_path))
    tm.create_tag(table, "t4", snapshot_id=4)
    expire(table, 1)
    rb.rollback_to_tag(table, "t4")
    assert present(names) == {"I1", "I2"}
    assert rows_at(table, 4) == ROWS[4]


def test_orphan_removal_deletes_only_unreferenced_vector_files(tmp_path: Path) -> None:
    table, names = history(str(tmp_path))
    orphan = os.path.join(table.path, "index", "index-orphan-0")
    shutil.copy(names["I1"], orphan)  # a DV file of a commit that never happened
    old = time.time() - 3 * 86400
    for directory, _, files in os.walk(table.path):
        for name in files:
            os.utime(os.path.join(directory, name), (old, old))
    result = remove_orphan_files(table)
    assert orphan in result.paths and not os.path.exists(orphan)
    assert present(names) == {"I1", "I2", "I3"}
    assert {sid: rows_at(table, sid) for sid in ROWS} == ROWS


def _listing(root: str) -> list[str]:
    return [os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs]


def _with_io(path: str, io: FailingIO) -> FileStoreTable:
    good = FileStoreTable.load(path)
    return FileStoreTable(io, good.path, good.schema, good.identifier)


def test_expiry_failing_at_any_step_leaves_every_snapshot_readable(tmp_path: Path) -> None:
    table, _ = history(str(tmp_path / "origin"))
    counting = FailingIO(None)
    reference = str(tmp_path / "reference")
    shutil.copytree(table.path, reference)
    expire(_with_io(reference, counting), 1)
    assert counting.calls >= 4
    for fail_at in range(counting.calls):
        path = str(tmp_path / f"run{fail_at}")
        shutil.copytree(table.path, path)
        with pytest.raises(_Crash):
            expire(_with_io(path, FailingIO(fail_at, error=_Crash)), 1)
        failed = FileStoreTable.load(path)
        for sid in failed.snapshot_manager.list_snapshot_ids():
            assert rows_at(failed, sid) == ROWS[sid], (fail_at, sid)
        expire(failed, 1)
        retried = FileStoreTable.load(path)
        assert retried.snapshot_manager.list_snapshot_ids() == [5]
        assert rows_at(retried, 5) == ROWS[5]
        assert set(_listing(reference)) <= set(_listing(path)), fail_at
        shutil.rmtree(path)


class _Crash(BaseException):
    """The process dying at that step: no handler of the code under test sees it."""

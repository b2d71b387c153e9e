"""Orphan removal: unreferenced, old files go; live, young and unknown files stay."""

from __future__ import annotations

import os
import shutil
import time

import pytest

from paimon_core.exceptions import CorruptMetadata, InvalidArgument
from paimon_core.format.snapshot import SnapshotManager
from paimon_core.format.tag import Tag
from paimon_core.io.fileio import LocalFileIO
from paimon_core.lifecycle.expire import expire_snapshots
from paimon_core.lifecycle.file_deletion import files_in_use
from paimon_core.lifecycle.orphan import remove_orphan_files
from tests.unit.paimon_core.helpers import KVD_SCHEMA, keys, kvd_batch, kvd_table

SCHEMA = KVD_SCHEMA
DAYS_AGO = time.time() - 3 * 86_400


_table = kvd_table
_batch = kvd_batch


def _listing(root: str) -> set[str]:
    return {os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs}


def _age_all(root: str) -> None:
    for d, _, fs in os.walk(root):
        for f in fs:
            os.utime(os.path.join(d, f), (DAYS_AGO, DAYS_AGO))


def _put(root: str, rel: str, old: bool = True) -> str:
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(b"orphan!")
    if old:
        os.utime(path, (DAYS_AGO, DAYS_AGO))
    return rel


def test_old_unreferenced_files_go_and_everything_else_stays(warehouse: str) -> None:
    table = _table(warehouse, primary_keys=["k", "dt"])  # dynamic bucket: index files too
    table.write_arrow(_batch([1, 2], "a"))
    table.write_arrow(_batch([3], "b"))
    table.tag_manager.write_tag("t1", Tag(table.snapshot_manager.snapshot(1)))
    root = table.path
    _age_all(root)
    live = _listing(root)
    orphans = {
        _put(root, "dt=a/bucket-0/data-dead-0.parquet"),
        _put(root, "dt=a/bucket-0/.data-x.parquet.1234.tmp"),
        _put(root, "manifest/manifest-dead-0"),
        _put(root, "manifest/manifest-list-dead-0"),
        _put(root, "index/index-dead-0"),
        _put(root, "snapshot/.snapshot-3.5f1c.tmp"),
        _put(root, "snapshot/junk"),
        _put(root, "schema/.schema-1.5f1c.tmp"),
        _put(root, "tag/.tag-x.5f1c.tmp"),
    }
    kept = {
        _put(root, "dt=a/bucket-0/data-young-0.parquet", old=False),
        _put(root, "manifest/manifest-young-0", old=False),
        _put(root, "README"),
        _put(root, "dt=a/notes.txt"),
        _put(root, "schema/notes"),
        _put(root, "consumer/consumer-x"),
    }
    dry = remove_orphan_files(table, dry_run=True)
    assert {os.path.relpath(p, root) for p in dry.paths} == orphans
    assert dry.count == len(orphans) and dry.bytes == len(b"orphan!") * len(orphans)
    assert _listing(root) == live | orphans | kept
    result = remove_orphan_files(table)
    assert result == dry
    assert _listing(root) == live | kept
    assert keys(table) == [1, 2, 3]
    assert keys(table, **{"scan.tag-name": "t1"}) == [1, 2]
    assert remove_orphan_files(table).count == 0
    # A tag that cannot be read might reference anything: refuse rather than guess.
    _put(root, "tag/tag-broken")
    _put(root, "manifest/manifest-dead-1")
    with pytest.raises(CorruptMetadata, match=f"Tag file {root}/tag/tag-broken is corrupt"):
        remove_orphan_files(table)
    assert os.path.exists(f"{root}/manifest/manifest-dead-1")


def test_files_kept_by_tags_and_branches_are_not_orphans(warehouse: str) -> None:
    table = _table(warehouse)
    table.write_arrow(_batch([1], "a"))  # s1: a=[1]
    table.write_arrow(_batch([2], "b"))  # s2
    table.tag_manager.write_tag("t2", Tag(table.snapshot_manager.snapshot(2)))
    table.write_arrow(_batch([3], "a"), overwrite=True)  # s3: a=[1] deleted
    table.write_arrow(_batch([4], "b"), overwrite=True)  # s4: b=[2] deleted
    root = table.path
    # A branch made from snapshot 1 shares the data and manifest files of the main table.
    for sub in ("snapshot/snapshot-1", "schema/schema-0"):
        os.makedirs(os.path.dirname(f"{root}/branch/branch-b/{sub}"), exist_ok=True)
        shutil.copy(f"{root}/{sub}", f"{root}/branch/branch-b/{sub}")
    _put(root, "branch/branch-b/snapshot/.snapshot-2.x.tmp")
    # Drop main snapshots 1..3 by hand, files untouched: only the branch and t2 keep them.
    for i in (1, 2, 3):
        os.remove(f"{root}/snapshot/snapshot-{i}")
    _age_all(root)
    before = _listing(root)
    result = remove_orphan_files(table)
    gone = {os.path.relpath(p, root) for p in result.paths}
    assert "branch/branch-b/snapshot/.snapshot-2.x.tmp" in gone
    # Only snapshot 3's own manifest lists (no tag, no branch names them) are orphans.
    assert {p.split("/")[0] for p in gone - {"branch/branch-b/snapshot/.snapshot-2.x.tmp"}} == {
        "manifest"
    }
    assert len(gone) == 3
    assert _listing(root) == before - gone
    branch_snapshot = SnapshotManager(table.file_io, root, "b").snapshot(1)
    branch_files = files_in_use(table, [branch_snapshot]).all_paths()
    assert branch_files and {os.path.relpath(p, root) for p in branch_files} <= _listing(root)
    assert keys(table, **{"scan.tag-name": "t2"}) == [1, 2]
    assert keys(table) == [3, 4]


def test_threshold_must_be_in_the_past(warehouse: str) -> None:
    table = _table(warehouse)
    table.write_arrow(_batch([1]))
    with pytest.raises(InvalidArgument, match="olderThan must be less than now"):
        remove_orphan_files(table, older_than_millis=int(time.time() * 1000) + 60_000)
    # The default (one day) protects fresh files even when nothing references them.
    _put(table.path, "dt=a/bucket-0/data-fresh-0.parquet", old=False)
    assert remove_orphan_files(table).count == 0


def test_leftovers_of_a_crashed_expiry_are_orphans(
    warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = _table(warehouse)
    table.write_arrow(_batch([1, 2], "a"))
    table.write_arrow(_batch([3], "b"))
    table.write_arrow(_batch([4], "a"), overwrite=True)
    table.write_arrow(_batch([5], "c"))
    plan = expire_snapshots(table, retain_max=1, retain_min=1, dry_run=True).plan
    original = LocalFileIO.delete
    calls = [0]

    def crash_after_snapshots(self: LocalFileIO, path: str) -> bool:
        if calls[0] == len(plan.snapshot_files):
            raise RuntimeError("crash")
        calls[0] += 1
        return original(self, path)

    monkeypatch.setattr(LocalFileIO, "delete", crash_after_snapshots)
    with pytest.raises(RuntimeError):
        expire_snapshots(table, retain_max=1, retain_min=1)
    monkeypatch.undo()
    _age_all(table.path)
    result = remove_orphan_files(table)
    # As in Paimon, a name in any remaining manifest counts as used, even in a DELETE
    # entry: the overwritten data file waits until manifest merging drops that entry.
    assert set(result.paths) == set(plan.manifest_lists) and len(result.paths) == 6
    assert len(plan.data_files) == 1 and os.path.exists(plan.data_files[0])
    assert keys(table) == [3, 4, 5]


def test_emptied_partition_directories_are_removed(warehouse: str) -> None:
    table = _table(warehouse)
    table.write_arrow(_batch([1], "a"))
    root = table.path
    _put(root, "dt=zz/bucket-3/data-dead-0.parquet")
    _put(root, "dt=zz/bucket-4/data-dead-1.parquet")
    assert remove_orphan_files(table).count == 2
    assert not os.path.exists(f"{root}/dt=zz")
    assert os.path.isdir(f"{root}/dt=a/bucket-0") and os.path.isdir(f"{root}/manifest")

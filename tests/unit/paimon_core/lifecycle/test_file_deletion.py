"""DeletionPlan (order, dry run, failures), files in use, removal and tag-deletion planning."""

from __future__ import annotations

import dataclasses
import os
from typing import Any

import pytest

from paimon_core.format.commit_message import CommitMessage
from paimon_core.format.snapshot import Snapshot
from paimon_core.format.tag import Tag
from paimon_core.io.fileio import LocalFileIO
from paimon_core.lifecycle.expire import expire_snapshots
from paimon_core.lifecycle.file_deletion import (
    DeletionPlan,
    TableFiles,
    files_in_use,
    find_skipping_tags,
    plan_removal,
    plan_tag_deletion,
)
from paimon_core.table import FileStoreTable
from tests.unit.paimon_core.helpers import KVD_SCHEMA, keys, kvd_batch, kvd_table

SCHEMA = KVD_SCHEMA


_table = kvd_table
_batch = kvd_batch


def _listing(table: FileStoreTable) -> set[str]:
    return {os.path.join(d, f) for d, _, fs in os.walk(table.path) for f in fs}


def _tag(table: FileStoreTable, name: str, snapshot_id: int) -> None:
    table.tag_manager.write_tag(name, Tag(table.snapshot_manager.snapshot(snapshot_id)))


def _metadata(table: FileStoreTable) -> set[str]:
    """Files no snapshot references: schemas, hints, snapshot and tag JSON."""
    root = table.path
    return {
        p
        for p in _listing(table)
        if p.startswith((f"{root}/schema/", f"{root}/snapshot/", f"{root}/tag/"))
    }


class _RecordingIO(LocalFileIO):
    def __init__(self, fail_on: str | None = None, error: type[Exception] = OSError) -> None:
        super().__init__()
        self.calls: list[tuple[str, str]] = []
        self.fail_on = fail_on
        self.error = error

    def delete(self, path: str) -> bool:
        if self.fail_on is not None and path.endswith(self.fail_on):
            raise self.error(f"cannot delete {path}")
        self.calls.append(("delete", path))
        return super().delete(path)

    def write_bytes(self, path: str, data: bytes) -> None:
        self.calls.append(("write", path))
        super().write_bytes(path, data)

    def overwrite_atomic(self, path: str, data: bytes) -> None:
        self.calls.append(("write", path))
        super().overwrite_atomic(path, data)


def _files(root: str, names: list[str]) -> tuple[str, ...]:
    for name in names:
        os.makedirs(os.path.dirname(f"{root}/{name}"), exist_ok=True)
        with open(f"{root}/{name}", "wb") as f:
            f.write(b"x")
    return tuple(f"{root}/{n}" for n in names)


def test_plan_is_a_printable_value_and_applies_in_crash_safe_order(tmp_path: Any) -> None:
    root = str(tmp_path)
    plan = DeletionPlan(
        snapshot_files=_files(root, ["snapshot/snapshot-1", "snapshot/snapshot-2"]),
        tag_files=_files(root, ["tag/tag-a"]),
        manifest_lists=_files(root, ["manifest/manifest-list-1"]),
        manifests=_files(root, ["manifest/manifest-1"]),
        index_manifests=_files(root, ["manifest/index-manifest-1"]),
        data_files=_files(root, ["bucket-0/data-1.parquet", "bucket-0/data-1.parquet.index"]),
        changelog_files=_files(root, ["bucket-0/changelog-1.parquet"]),
        index_files=_files(root, ["index/index-1"]),
        hints=((f"{root}/snapshot/EARLIEST", 3),),
    )
    assert plan.summary() == (
        "DeletionPlan(2 snapshot files, 1 tag files, 1 manifest lists, 1 manifests, "
        "1 index manifests, 2 data files, 1 changelog files, 1 index files, EARLIEST=3)"
    )
    text = str(plan)
    assert f"  {root}/bucket-0/data-1.parquet.index" in text
    assert text.endswith(f"write {root}/snapshot/EARLIEST = 3")
    assert plan == dataclasses.replace(plan)  # a value: equal and hashable
    hash(plan)
    io = _RecordingIO()
    assert plan.apply(io) == 10
    assert [p for _, p in io.calls] == [*plan.files(), f"{root}/snapshot/EARLIEST"]
    assert io.calls[0] == ("delete", f"{root}/snapshot/snapshot-1")
    assert io.calls[-1] == ("write", f"{root}/snapshot/EARLIEST")
    assert sorted(os.listdir(f"{root}/snapshot")) == ["EARLIEST"]
    assert DeletionPlan().is_empty and not plan.is_empty
    assert DeletionPlan().summary() == "DeletionPlan(nothing)"


def test_failed_snapshot_delete_stops_before_referenced_files(tmp_path: Any) -> None:
    root = str(tmp_path)
    plan = DeletionPlan(
        snapshot_files=_files(root, ["snapshot/snapshot-1", "snapshot/snapshot-2"]),
        manifest_lists=_files(root, ["manifest/manifest-list-1"]),
        data_files=_files(root, ["bucket-0/data-1.parquet"]),
        hints=((f"{root}/snapshot/EARLIEST", 3),),
    )
    with pytest.raises(OSError):
        plan.apply(_RecordingIO(fail_on="snapshot-2"))
    assert os.path.exists(f"{root}/manifest/manifest-list-1")
    assert os.path.exists(f"{root}/bucket-0/data-1.parquet")
    assert not os.path.exists(f"{root}/snapshot/EARLIEST")


def test_failed_content_delete_is_skipped_and_the_rest_goes(tmp_path: Any) -> None:
    root = str(tmp_path)
    plan = DeletionPlan(
        manifest_lists=_files(root, ["manifest/manifest-list-1"]),
        data_files=_files(root, ["bucket-0/data-1.parquet", "bucket-0/data-2.parquet"]),
        hints=((f"{root}/snapshot/EARLIEST", 3),),
    )
    assert plan.apply(_RecordingIO(fail_on="data-1.parquet")) == 2
    assert os.path.exists(f"{root}/bucket-0/data-1.parquet")
    assert not os.path.exists(f"{root}/bucket-0/data-2.parquet")
    assert open(f"{root}/snapshot/EARLIEST").read() == "3"


def test_merge_keeps_order_and_deduplicates() -> None:
    a = DeletionPlan(data_files=("x", "y"), hints=(("E", 1),))
    b = DeletionPlan(data_files=("y", "z"), tag_files=("t",), hints=(("E", 2),))
    merged = a.merge(b)
    assert merged.data_files == ("x", "y", "z")
    assert merged.tag_files == ("t",)
    assert merged.hints == (("E", 2),)


def test_files_in_use_are_exactly_the_files_of_the_latest_state(warehouse: str) -> None:
    table = _table(warehouse, primary_keys=["k", "dt"])  # dynamic bucket: index files too
    table.write_arrow(_batch([1, 2, 3], "a"))
    table.write_arrow(_batch([4], "b"))
    table.write_arrow(_batch([5], "a"), overwrite=True)
    latest = table.latest_snapshot()
    usage = files_in_use(table, [latest])
    assert usage.index_files and usage.index_manifests
    assert usage.all_paths() <= _listing(table)
    live = table.new_scan().read_entries(latest)
    files = TableFiles(table)
    assert usage.data_files == {files.data_path(e) for e in live}
    assert usage.manifest_lists == {
        files.manifest_path(latest.base_manifest_list),
        files.manifest_path(latest.delta_manifest_list),
    }


def test_plan_removal_lists_only_what_the_kept_snapshots_do_not_use(warehouse: str) -> None:
    table = _table(warehouse)
    table.write_arrow(_batch([1], "a"))
    table.write_arrow(_batch([2], "b"))
    table.write_arrow(_batch([3], "a"), overwrite=True)
    s1, s2, s3 = table.snapshot_manager.snapshots()
    plan = plan_removal(table, [s3], [s1, s2], snapshot_files=["snap-3"])
    assert plan.snapshot_files == ("snap-3",)
    assert len(plan.data_files) == 1 and plan.data_files[0].endswith(".parquet")
    assert "/dt=a/" in plan.data_files[0]
    assert len(plan.manifest_lists) == 2
    # Everything s3 needs that s1/s2 do not, and nothing they need.
    kept = files_in_use(table, [s1, s2])
    assert not set(plan.files()) & kept.all_paths()
    assert (
        set(plan.files()) - {"snap-3"} == files_in_use(table, [s3]).all_paths() - kept.all_paths()
    )


def test_find_skipping_tags() -> None:
    def snap(i: int) -> Snapshot:
        return Snapshot(i, 0, "b", "d", "u", 0, "APPEND", 0, 0, 0)  # type: ignore[arg-type]

    tags = [snap(2), snap(5), snap(9)]
    ids = lambda ts: [t.snapshot_id for t in ts]  # noqa: E731
    assert ids(find_skipping_tags(tags, 3, 9)) == [2, 5]
    assert ids(find_skipping_tags(tags, 5, 10)) == [5, 9]
    assert ids(find_skipping_tags(tags, 1, 6)) == [2, 5]
    assert ids(find_skipping_tags(tags, 1, 2)) == []
    assert ids(find_skipping_tags([], 1, 9)) == []


def _history_with_tag(warehouse: str) -> FileStoreTable:
    """s1: a=[1]; s2: b=[2] (tag t2); s3: a overwritten; s4: b overwritten; s5: c=[5]."""
    table = _table(warehouse)
    table.write_arrow(_batch([1], "a"))
    table.write_arrow(_batch([2], "b"))
    _tag(table, "t2", 2)
    table.write_arrow(_batch([3], "a"), overwrite=True)
    table.write_arrow(_batch([4], "b"), overwrite=True)
    table.write_arrow(_batch([5], "c"))
    return table


def test_tag_deletion_frees_only_what_the_tag_kept(warehouse: str) -> None:
    table = _history_with_tag(warehouse)
    expire_snapshots(table, retain_max=1, retain_min=1)
    assert keys(table, **{"scan.tag-name": "t2"}) == [1, 2]
    before = _listing(table)
    latest = files_in_use(table, [table.latest_snapshot()]).all_paths()
    plan = plan_tag_deletion(table, ["t2", "missing"])
    assert plan.tag_files == (table.tag_manager.tag_path("t2"),)
    assert len(plan.data_files) == 2  # a=[1] and b=[2]: only the tag kept them
    assert not set(plan.files()) & latest
    assert plan.apply(table.file_io) == len(plan.files())
    after = _listing(table)
    assert after == before - set(plan.files())
    assert after == latest | _metadata(table)
    assert keys(table) == [3, 4, 5]


def test_tag_deletion_keeps_files_the_neighbour_tag_needs(warehouse: str) -> None:
    table = _history_with_tag(warehouse)
    _tag(table, "t3", 3)  # still has b=[2] (file of s2), a=[3]
    expire_snapshots(table, retain_max=1, retain_min=1)
    plan = plan_tag_deletion(table, ["t2"])
    assert len(plan.data_files) == 1 and "/dt=a/" in plan.data_files[0]  # b=[2] is t3's too
    t3_files = files_in_use(table, [table.tag_manager.get("t3").snapshot]).data_files
    t2_files = files_in_use(table, [table.tag_manager.get("t2").snapshot]).data_files
    assert set(plan.data_files) == t2_files - t3_files
    plan.apply(table.file_io)
    assert keys(table, **{"scan.tag-name": "t3"}) == [2, 3]


def test_tag_of_a_live_snapshot_or_shared_snapshot_deletes_only_the_tag_file(
    warehouse: str,
) -> None:
    table = _history_with_tag(warehouse)
    assert plan_tag_deletion(table, ["t2"]) == DeletionPlan(
        tag_files=(table.tag_manager.tag_path("t2"),)
    )
    _tag(table, "t2b", 2)
    expire_snapshots(table, retain_max=1, retain_min=1)
    plan = plan_tag_deletion(table, ["t2"])
    assert plan == DeletionPlan(tag_files=(table.tag_manager.tag_path("t2"),))
    both = plan_tag_deletion(table, ["t2", "t2b"])
    assert len(both.tag_files) == 2 and len(both.data_files) == 2


def test_level_upgrade_in_the_same_delta_keeps_the_file(warehouse: str) -> None:
    table = _table(warehouse)
    table.write_arrow(_batch([1, 2], "a"))
    (entry,) = table.new_scan().read_entries(table.latest_snapshot())
    upgraded = dataclasses.replace(entry.file, level=1)
    msg = CommitMessage(
        entry.partition,
        entry.bucket,
        entry.total_buckets,
        new_files=(upgraded,),
        deleted_files=(entry.file,),
    )
    table.new_commit().commit([msg])
    table.write_arrow(_batch([3], "a"))
    result = expire_snapshots(table, retain_max=1, retain_min=1)
    assert result.expired == 2 and result.plan.data_files == ()
    assert keys(table) == [1, 2, 3]

"""``scan.fallback-branch`` and ``scan.primary-branch`` in the core: which branch each
partition comes from, how the time travel options reach the other branch (latest Paimon's
``rewriteOtherOptions``), the option checks; Java (0.9, which maps ``scan.snapshot-id`` the same
way) reads the same rows."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import InvalidArgument, SnapshotNotFound, TagNotFound
from paimon_core.format.schema import AddColumn, SetOption
from paimon_core.format.types import parse_data_type
from paimon_core.lifecycle import branch_management as bm
from paimon_core.lifecycle import tag_management as tm
from paimon_core.operations.fallback import fallback_read, rewrite_other_options
from paimon_core.table import FileStoreTable
from tests.unit.procedures.helpers import set_commit_times

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string()), ("dt", pa.string())])
T0 = 1_700_000_000_000


def _rows(dt: str, *ids: int, v: str = "") -> pa.Table:
    return pa.table({"id": list(ids), "v": [v or dt] * len(ids), "dt": [dt] * len(ids)}, SCHEMA)


def _set(table: FileStoreTable, **options: str) -> FileStoreTable:
    table.schema_manager.commit_changes([SetOption(k, v) for k, v in options.items()])
    return FileStoreTable.load(table.path)


def _read(table: FileStoreTable, **options: str) -> Counter:
    data = FileStoreTable.load(table.path).copy(options).to_arrow()
    return Counter(zip(data.column("dt").to_pylist(), data.column("v").to_pylist()))


def _tables(warehouse: str) -> tuple[FileStoreTable, FileStoreTable]:
    """main: snapshot 1 (day1 'main-1', T0+10), 2 (day3, T0+30); branch b: snapshots 1 (day1
    'b-1', T0), 2 (day2, T0+20), 3 (day2 again, T0+40), tag 'bt' on its snapshot 2."""
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    main = catalog.create_table("db.t", SCHEMA, partition_keys=["dt"])
    bm.create_branch(main, "b")
    branch = catalog.get_table("db.t$branch_b")
    branch.write_arrow(_rows("day1", 1, v="b-1"))
    main.write_arrow(_rows("day1", 1, v="main-1"))
    branch.write_arrow(_rows("day2", 2))
    main.write_arrow(_rows("day3", 3))
    branch.write_arrow(_rows("day2", 4, v="b-3"))
    tm.create_tag(branch, "bt", snapshot_id=2)
    set_commit_times(main, {1: T0 + 10, 2: T0 + 30})
    set_commit_times(branch, {1: T0, 2: T0 + 20, 3: T0 + 40})
    return main, branch


def test_fallback_reads_the_partitions_main_lacks(warehouse: str, oracle: Any) -> None:
    main, _ = _tables(warehouse)
    main = _set(main, **{"scan.fallback-branch": "b"})
    expected = Counter(
        {("day1", "main-1"): 1, ("day2", "day2"): 1, ("day2", "b-3"): 1, ("day3", "day3"): 1}
    )
    assert _read(main) == expected
    java = oracle("read", warehouse, "db.t")
    assert Counter((r["dt"], r["v"]) for r in java) == expected
    only = FileStoreTable.load(main.path).to_arrow(predicate=[("dt", "=", "day2")])
    assert sorted(only.column("id").to_pylist()) == [2, 4]
    # A partition filter never hides main's partitions: day1 is main's even where pruned.
    pruned = FileStoreTable.load(main.path).to_arrow(predicate=[("id", ">", 5)])
    assert "b-1" not in pruned.column("v").to_pylist()


def test_primary_branch_wins_where_it_has_the_partition(warehouse: str) -> None:
    main, _ = _tables(warehouse)
    main = _set(main, **{"scan.primary-branch": "b"})
    assert _read(main) == Counter(
        {("day1", "b-1"): 1, ("day2", "day2"): 1, ("day2", "b-3"): 1, ("day3", "day3"): 1}
    )
    # Writes still go to the table's own branch.
    FileStoreTable.load(main.path).write_arrow(_rows("day4", 9))
    assert main.snapshot_manager.latest_snapshot().snapshot_id == 3
    assert _read(main)[("day4", "day4")] == 1


def test_scan_snapshot_id_maps_by_time(warehouse: str, oracle: Any) -> None:
    main, branch = _tables(warehouse)
    main = _set(main, **{"scan.fallback-branch": "b"})
    # main 2 (T0+30) -> b 2 (T0+20); main 1 (T0+10) -> b 1 (T0).
    at2 = Counter({("day1", "main-1"): 1, ("day2", "day2"): 1, ("day3", "day3"): 1})
    assert _read(main, **{"scan.snapshot-id": "2"}) == at2
    assert _read(main, **{"scan.snapshot-id": "1"}) == Counter({("day1", "main-1"): 1})
    for snapshot, rows in (("2", at2), ("1", Counter({("day1", "main-1"): 1}))):
        java = oracle("read", warehouse, "db.t", "--snapshot", snapshot)
        assert Counter((r["dt"], r["v"]) for r in java) == rows
    # Before every snapshot of b: its snapshot 1, though committed later.
    set_commit_times(branch, {1: T0 + 20, 2: T0 + 25, 3: T0 + 40})
    table = FileStoreTable.load(main.path)
    assert rewrite_other_options(table, branch, {"scan.snapshot-id": "1", "bucket": "4"}) == {
        "scan.snapshot-id": "1"
    }
    with pytest.raises(SnapshotNotFound):
        rewrite_other_options(table, branch, {"scan.snapshot-id": "9"})


def test_tags_versions_and_timestamps_are_the_other_branchs_own(warehouse: str) -> None:
    """(Not compared with Java 0.9: its fallback looks tags up in the main branch.)"""
    main, branch = _tables(warehouse)
    tm.create_tag(main, "mt", snapshot_id=1)
    main = _set(main, **{"scan.fallback-branch": "b"})
    # A tag b lacks fails the read, as in Paimon, and the error names the branch.
    with pytest.raises(TagNotFound, match=r"Tag 'mt' doesn't exist.*branch 'b'"):
        _read(main, **{"scan.tag-name": "mt"})
    # A tag of that name in b is b's own: bt on b's snapshot 2, main's bt on its snapshot 1.
    tm.create_tag(main, "bt", snapshot_id=1)
    assert _read(main, **{"scan.tag-name": "bt"}) == Counter(
        {("day1", "main-1"): 1, ("day2", "day2"): 1}
    )
    # VERSION AS OF 1: b's snapshot 1 itself, not mapped by time.
    assert _read(main, **{"scan.version": "1"}) == Counter({("day1", "main-1"): 1})
    tm.delete_tags(branch, "bt")
    with pytest.raises(TagNotFound, match="branch 'b'"):
        _read(main, **{"scan.version": "mt"})
    for day in ("day5", "day6"):
        FileStoreTable.load(main.path).write_arrow(_rows(day, 5))
    with pytest.raises(SnapshotNotFound, match=r"'4' doesn't exist.*branch 'b'"):
        _read(main, **{"scan.version": "4"})  # main has a snapshot 4, b has not
    # TIMESTAMP AS OF: each branch its snapshot at or before; none in b that old fails.
    assert _read(main, **{"scan.timestamp-millis": str(T0 + 25)}) == Counter(
        {("day1", "main-1"): 1, ("day2", "day2"): 1}
    )
    set_commit_times(branch, {1: T0 + 15, 2: T0 + 20, 3: T0 + 40})
    with pytest.raises(SnapshotNotFound, match="branch 'b'"):
        _read(main, **{"scan.timestamp-millis": str(T0 + 12)})


def test_option_checks(warehouse: str) -> None:
    main, _ = _tables(warehouse)
    schemas = main.schema_manager.list_ids()
    with pytest.raises(InvalidArgument, match="because the branch 'nope' does not exist"):
        _set(main, **{"scan.fallback-branch": "nope"})
    with pytest.raises(InvalidArgument, match="Cannot set both"):
        _set(main, **{"scan.fallback-branch": "b", "scan.primary-branch": "b"})
    assert main.schema_manager.list_ids() == schemas
    # Columns must match in number and type.
    branch = FileStoreTable.load(main.path, branch="b")
    branch.schema_manager.commit_changes(AddColumn("extra", parse_data_type("INT")))
    main = _set(main, **{"scan.fallback-branch": "b"})
    with pytest.raises(InvalidArgument, match="does not have the same row type"):
        fallback_read(FileStoreTable.load(main.path))

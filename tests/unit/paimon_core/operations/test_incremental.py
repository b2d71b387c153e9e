"""Incremental planning (``incremental-between`` & co.) as Paimon's incremental scanners."""

from __future__ import annotations

import pyarrow as pa
import pytest

from paimon_core.exceptions import InvalidArgument
from paimon_core.format.schema import SetOption
from paimon_core.lifecycle.tag_management import create_tag
from paimon_core.operations.incremental import InconsistentBuckets, is_incremental, plan_incremental
from paimon_core.operations.split_read import SplitRead
from paimon_core.table import FileStoreTable
from tests.unit.paimon_core.helpers import KVD_SCHEMA, kvd_batch, kvd_table
from tests.unit.procedures.helpers import T0, set_commit_times


def _read(table: FileStoreTable, keep_delete: bool = False, **options: str) -> list[tuple]:
    moved = table.copy(options)
    plan = plan_incremental(moved)
    reader = SplitRead(moved, keep_delete=keep_delete)
    return sorted(
        tuple(r.values()) for s in plan.splits for r in reader.read(s, ["k", "v"]).to_pylist()
    )


@pytest.fixture
def append(warehouse: str) -> FileStoreTable:
    """Snapshots 1, 2: appends; 3: overwrite of partition a; 4: append."""
    table = kvd_table(warehouse)
    table.write_arrow(kvd_batch([1]))
    table.write_arrow(kvd_batch([2], dt="b"))
    table.write_arrow(kvd_batch([3]), overwrite=True)
    table.write_arrow(kvd_batch([4]))
    set_commit_times(table, {i: T0 + i * 1000 for i in range(1, 5)})
    return table


def test_delta_reads_what_append_commits_added(append: FileStoreTable) -> None:
    assert _read(append, **{"incremental-between": "0,2"}) == [(1, "v1", 0), (2, "v2", 0)]
    assert _read(append, **{"incremental-between": "2,4"}) == [(4, "v4", 0)]  # not the overwrite
    assert _read(append, **{"incremental-between": "3,3"}) == []
    # diff mode: the live files at 2 and at 4 compared, the overwrite included.
    diff = {"incremental-between": "2,4", "incremental-between-scan-mode": "diff"}
    assert _read(append, **diff) == [(3, "v3", 0), (4, "v4", 0)]
    with pytest.raises(
        InvalidArgument, match=r"range \[2, 5\] is out of available snapshotId range \[1, 4\]"
    ):
        _read(append, **{"incremental-between": "2,5"})
    with pytest.raises(InvalidArgument, match="should >= starting snapshotId"):
        _read(append, **{"incremental-between": "3,1"})
    with pytest.raises(InvalidArgument, match="must specific start"):
        _read(append, **{"incremental-between": "3"})
    with pytest.raises(InvalidArgument, match="not two snapshot Ids"):
        _read(append, **{"incremental-between": "x,y"})


def test_between_tags_is_a_diff(append: FileStoreTable) -> None:
    create_tag(append, "t1", snapshot_id=1)
    create_tag(append, "t4", snapshot_id=4)
    assert _read(append, **{"incremental-between": "t1,t4"}) == [
        (2, "v2", 0),
        (3, "v3", 0),
        (4, "v4", 0),
    ]
    # incremental-between-tag-to-snapshot: the delta of the snapshots the tags point at.
    delta = {"incremental-between": "t1,t4", "incremental-between-tag-to-snapshot": "true"}
    assert _read(append, **delta) == [(2, "v2", 0), (4, "v4", 0)]
    with pytest.raises(
        InvalidArgument, match="Tag end t1 with snapshot id 1 should be >= tag start t4"
    ):
        _read(append, **{"incremental-between": "t4,t1"})


def test_between_timestamps(append: FileStoreTable) -> None:
    # (T0 + 1000, T0 + 2000]: snapshot 2 only; before everything: from the first.
    assert _read(append, **{"incremental-between-timestamp": f"{T0 + 1000},{T0 + 2000}"}) == [
        (2, "v2", 0)
    ]
    assert _read(append, **{"incremental-between-timestamp": f"{T0},{T0 + 1500}"}) == [(1, "v1", 0)]
    assert _read(append, **{"incremental-between-timestamp": f"{T0 + 9000},{T0 + 9900}"}) == []
    # diff mode from before the first snapshot: the whole end snapshot (Paimon's
    # StaticFromSnapshotStartingScanner).
    full = plan_incremental(
        append.copy(
            {
                "incremental-between-timestamp": f"{T0},{T0 + 2000}",
                "incremental-between-scan-mode": "diff",
            }
        )
    )
    assert full.full is not None and full.full.snapshot_id == 2
    with pytest.raises(InvalidArgument, match="must specific start"):
        _read(append, **{"incremental-between-timestamp": "yesterday,today"})


def test_to_auto_tag_diffs_with_the_previous_auto_tag(append: FileStoreTable) -> None:
    create_tag(append, "2024-12-01", snapshot_id=1)
    create_tag(append, "2024-12-03", snapshot_id=2)
    create_tag(append, "manual", snapshot_id=4)
    assert _read(append, **{"incremental-to-auto-tag": "2024-12-03"}) == [(2, "v2", 0)]
    assert _read(append, **{"incremental-to-auto-tag": "2024-12-01"}) == []  # none earlier
    assert _read(append, **{"incremental-to-auto-tag": "2024-12-09"}) == []  # no such tag
    with pytest.raises(InvalidArgument, match="'manual' is not an auto-created tag"):
        _read(append, **{"incremental-to-auto-tag": "manual"})


def test_options_exclusive_as_paimon(append: FileStoreTable) -> None:
    assert not is_incremental(append)
    assert is_incremental(append.copy({"incremental-between": "1,2"}))
    both = append.copy({"incremental-between": "1,2", "scan.snapshot-id": "1"}, time_travel=False)
    with pytest.raises(
        InvalidArgument,
        match=r"\[incremental-between\] must be null when you set \[scan.snapshot-id,scan.tag-name\]",
    ):
        is_incremental(both)
    two = append.copy({"incremental-between": "1,2", "incremental-to-auto-tag": "x"})
    with pytest.raises(InvalidArgument, match="must set only one key"):
        is_incremental(two)
    with pytest.raises(InvalidArgument, match="incremental-between-scan-mode"):
        _read(append, **{"incremental-between": "1,2", "incremental-between-scan-mode": "x"})


def test_primary_key_delta_and_diff(warehouse: str) -> None:
    table = kvd_table(warehouse, primary_keys=["k", "dt"], options={"bucket": "1"})
    table.write_arrow(kvd_batch([1, 2]))
    table.write_arrow(pa.table({"k": [1], "v": ["new"], "dt": ["a"]}, schema=KVD_SCHEMA))
    table.write_arrow(kvd_batch([2]), row_kinds=pa.array([3], pa.int8()))
    # Delta: the rows the commits wrote, a deletion included as a row (Paimon's no-merge read).
    assert _read(table, **{"incremental-between": "1,3"}) == [(1, "new", 0), (2, "v2", 3)]
    diff = {"incremental-between": "1,3", "incremental-between-scan-mode": "diff"}
    assert _read(table, **diff) == [(1, "new", 0)]
    assert _read(table, keep_delete=True, **diff) == [(1, "new", 0), (2, "v2", 3)]


def test_diff_across_a_bucket_rescale(warehouse: str) -> None:
    table = kvd_table(warehouse, primary_keys=["k", "dt"], options={"bucket": "1"})
    table.write_arrow(kvd_batch([1, 2]))
    table.schema_manager.commit_changes(SetOption("bucket", "2"))
    table = FileStoreTable.load(table.path)
    table.write_arrow(kvd_batch([1, 2, 3]), overwrite=True)
    with pytest.raises(InconsistentBuckets, match=r"different \(1, 2\)") as caught:
        plan_incremental(
            table.copy({"incremental-between": "1,2", "incremental-between-scan-mode": "diff"})
        )
    assert (caught.value.start_id, caught.value.end_id) == (1, 2)


def test_diff_reads_each_side_with_its_deletion_vectors(warehouse: str) -> None:
    """Paimon's ``toIncrementalPlan``: the start's files with the start's vectors, the end's
    with the end's; a delta applies none (``IncrementalDeltaStartingScanner``)."""
    from paimon_core.operations.deletion_vectors import delete_positions

    table = kvd_table(
        warehouse,
        primary_keys=["k", "dt"],
        options={"bucket": "1", "deletion-vectors.enabled": "true", "write-only": "true"},
    )
    table.write_arrow(kvd_batch([1, 2]))  # 1: file A (k1, k2)
    (entry,) = table.new_scan().read_entries(table.latest_snapshot())
    delete_positions(table, {(entry.partition, 0): {entry.file.file_name: [1]}})  # 2: A's k2
    table.write_arrow(kvd_batch([3, 4]))  # 3: file B (k3, k4)
    newest = [e for e in table.new_scan().read_entries(table.latest_snapshot()) if e != entry]
    delete_positions(table, {(entry.partition, 0): {newest[0].file.file_name: [1]}})  # 4: B's k4
    table.write_arrow(kvd_batch([1]), overwrite=True)  # 5: A and B replaced by C (k1)
    kinds = [s.commit_kind.value for s in table.snapshot_manager.snapshots()]
    assert kinds == ["APPEND", "OVERWRITE", "APPEND", "OVERWRITE", "OVERWRITE"]
    diff = {"incremental-between-scan-mode": "diff"}
    # 2 -> 4: B is added, read without its deleted k4.
    assert _read(table, **{"incremental-between": "2,4"}, **diff) == [(3, "v3", 0)]
    # 2 -> 5 with deletes kept: the start is A without k2, so only k1's value is compared.
    assert _read(table, True, **{"incremental-between": "2,5"}, **diff) == []
    # 1 -> 5: at the start A still held k2.
    assert _read(table, True, **{"incremental-between": "1,5"}, **diff) == [(2, "v2", 3)]
    # A delta reads B as it was written.
    assert _read(table, **{"incremental-between": "2,4"}) == [(3, "v3", 0), (4, "v4", 0)]

"""Compaction: Paimon's pickers against Java's UniversalCompactionTest, and compacted buckets
that read as before, sit at the max level and are committed as one COMPACT snapshot."""

from __future__ import annotations

from dataclasses import replace

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import CommitConflict
from paimon_core.format.manifest import DataFileMeta, FileKind
from paimon_core.format.snapshot import CommitKind
from paimon_core.operations.compact import (
    LevelSortedRun,
    UniversalCompaction,
    compact_table,
    pick_append_files,
)
from paimon_core.table import FileStoreTable

SCHEMA = pa.schema([("k", pa.int64()), ("v", pa.int64()), ("w", pa.string()), ("dt", pa.string())])


def _file(size: int, level: int = 0) -> DataFileMeta:
    return DataFileMeta(f"f{size}", size, 1, b"", b"", None, None, 0, 0, 0, level)  # type: ignore[arg-type]


def _level0(*sizes: int) -> list[LevelSortedRun]:
    return [LevelSortedRun(0, (_file(s),)) for s in sizes]


def _sizes(unit) -> list[int]:
    return [f.file_size for f in unit.files]


def test_output_level_as_java() -> None:
    runs = [LevelSortedRun(lv, (_file(1, lv),)) for lv in (0, 0, 1, 3, 4)]
    levels = [UniversalCompaction.create_unit(runs, 5, n).output_level for n in range(1, 6)]
    assert levels == [1, 1, 2, 3, 5]


def test_pick_as_java() -> None:
    compaction = UniversalCompaction(25, 1, 3)
    assert _sizes(compaction.pick(3, _level0(1, 2, 3, 3))) == [1, 2, 3, 3]  # size amplification
    runs = [LevelSortedRun(lv, (_file(s, lv),)) for lv, s in ((0, 1), (1, 1), (2, 1), (3, 50))]
    assert _sizes(compaction.pick(4, runs)) == [1, 1, 1]  # size ratio
    runs = [LevelSortedRun(lv, (_file(s, lv),)) for lv, s in ((0, 1), (1, 2), (2, 3), (3, 50))]
    assert _sizes(compaction.pick(4, runs)) == [1, 2, 3]  # file number, then size ratio
    assert compaction.pick(3, _level0(1, 50)) is None


def test_size_amplification_sequence_as_java() -> None:
    compaction = UniversalCompaction(25, 0, 1)
    sizes = [1]
    seen = []
    for _ in range(17):
        sizes = [1, *sizes]
        unit = compaction.pick_for_size_amp(3, _level0(*sizes))
        if unit is not None:
            sizes = [sum(_sizes(unit))]
        seen.append(sizes)
    assert seen[:5] == [[2], [3], [4], [1, 4], [6]]
    assert seen[-1] == [18]


def test_size_ratio_sequence_as_java() -> None:
    compaction = UniversalCompaction(25, 1, 5)
    sizes = [1, 1, 1, 1]
    seen = []
    for _ in range(12):
        sizes = [1, *sizes]
        runs = [LevelSortedRun(i, (_file(s, i),)) for i, s in enumerate(sizes)]
        unit = compaction.pick_for_size_ratio(len(sizes), runs)
        if unit is not None:
            sizes = [sum(_sizes(unit)), *sizes[len(unit.files) :]]
        seen.append(sizes)
    assert seen == [
        [5], [1, 5], [1, 1, 5], [1, 1, 1, 5], [4, 5], [1, 4, 5], [1, 1, 4, 5], [3, 4, 5],
        [1, 3, 4, 5], [2, 3, 4, 5], [1, 2, 3, 4, 5], [16],
    ]  # fmt: skip


def test_append_pick_slides_past_large_windows() -> None:
    files = [replace(_file(s), min_sequence_number=i) for i, s in enumerate((100, 1, 1, 1))]
    picked = pick_append_files(files, 3, 10)
    assert picked is not None and [f.file_size for f in picked] == [1, 1, 1]
    assert pick_append_files(files[:3], 3, 10) is None


# ------------------------------------------------------------------------------ tables


def _table(warehouse: str, **options: str) -> FileStoreTable:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    return catalog.create_table(
        "db.t",
        SCHEMA,
        partition_keys=["dt"],
        primary_keys=["dt", "k"],
        options={"bucket": "1", **options},
    )


def _batch(ks: list[int], dt: str = "a", v: int | None = 1, w: str | None = "x") -> pa.Table:
    n = len(ks)
    return pa.table({"k": ks, "v": [v] * n, "w": [w] * n, "dt": [dt] * n}, schema=SCHEMA)


def _rows(table: FileStoreTable) -> list[tuple]:
    return sorted(tuple(r.values()) for r in table.to_arrow().to_pylist())


def _live(table: FileStoreTable) -> list:
    snapshot = table.snapshot_manager.latest_snapshot()
    return table.new_scan().read_entries(snapshot)


def _write_history(table: FileStoreTable) -> None:
    table.write_arrow(_batch([1, 2, 3], v=1, w="a"))
    table.write_arrow(_batch([2, 3, 4], v=2, w=None))
    table.write_arrow(_batch([3], v=None, w="c"), row_kinds=pa.array([3], pa.int8()))
    table.write_arrow(_batch([5, 6], dt="b"))


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"merge-engine": "partial-update"},
        {"merge-engine": "aggregation", "fields.v.aggregate-function": "sum"},
    ],
    ids=["deduplicate", "partial-update", "aggregation"],
)
def test_full_compaction_merges_each_bucket_to_the_max_level(
    warehouse: str, options: dict[str, str]
) -> None:
    table = _table(warehouse, **options)
    if options.get("merge-engine") == "partial-update":
        table = _table_without_delete(table)
    else:
        _write_history(table)
    before = _rows(table)
    inputs = {e.file.file_name for e in _live(table)}
    snapshot_id = compact_table(table, full=True)
    assert snapshot_id is not None
    snapshot = table.snapshot_manager.snapshot(snapshot_id)
    assert snapshot.commit_kind == CommitKind.COMPACT
    assert _rows(table) == before
    live = _live(table)
    partitions = {e.partition for e in live}
    assert len(live) == len(partitions) == 2  # one file per bucket
    for e in live:
        f = e.file
        assert f.level == 5 and f.delete_row_count == 0
        # dt=b holds a single file: upgraded to the max level as it is (Java's upgrade).
        upgraded = f.file_name in inputs
        assert f.file_source == (0 if upgraded else 1) and upgraded == (f.row_count == 2)
    delta = table.new_scan().read_all_entries([snapshot.delta_manifest_list])
    deleted = {e.file.file_name for e in delta if e.kind == FileKind.DELETE}
    assert deleted == inputs
    # A second full compaction has nothing to do.
    assert compact_table(table, full=True) is None


def _table_without_delete(table: FileStoreTable) -> FileStoreTable:
    table.write_arrow(_batch([1, 2, 3], v=1, w="a"))
    table.write_arrow(_batch([2, 3, 4], v=2, w=None))
    table.write_arrow(_batch([3], v=None, w="c"))
    table.write_arrow(_batch([5, 6], dt="b"))
    return table


def test_full_compaction_drops_deletes_and_keeps_key_and_sequence_ranges(warehouse: str) -> None:
    table = _table(warehouse)
    _write_history(table)
    compact_table(table, partitions=[{"dt": "a"}])
    (f,) = [e.file for e in _live(table) if e.file.level == 5]
    assert f.row_count == 3  # key 3 deleted: gone from the max level
    a = [e.file for e in _live(table)]
    assert len(a) == 2  # dt=b untouched by the partition filter
    assert f.min_sequence_number == 0 and f.max_sequence_number == 5
    assert _rows(table) == [
        (1, 1, "a", "a"),
        (2, 2, None, "a"),
        (4, 2, None, "a"),
        (5, 1, "x", "b"),
        (6, 1, "x", "b"),
    ]


def test_target_file_size_rolls_output(warehouse: str) -> None:
    table = _table(warehouse, **{"target-file-size": "1 kb"})
    for start in range(0, 400, 100):
        table.write_arrow(_batch(list(range(start, start + 150))))
    before = _rows(table)
    compact_table(table)
    files = sorted((e.file for e in _live(table)), key=lambda f: f.min_key)
    assert len(files) > 1 and all(f.level == 5 for f in files)
    assert _rows(table) == before


def test_minor_compaction_waits_for_the_trigger(warehouse: str) -> None:
    table = _table(warehouse, **{"num-sorted-run.compaction-trigger": "3", "write-only": "true"})
    table.write_arrow(_batch([1]))
    table.write_arrow(_batch([2]))
    assert compact_table(table, full=False) is None  # 2 runs < trigger
    table.write_arrow(_batch([1], v=7))
    assert compact_table(table, full=False) is not None
    assert _rows(table) == [(1, 7, "x", "a"), (2, 1, "x", "a")]
    assert len(_live(table)) == 1


def test_writes_compact_their_buckets_when_the_trigger_fires(warehouse: str) -> None:
    """Paimon's batch writers (``write-only`` = false) compact a bucket they wrote once it
    has ``num-sorted-run.compaction-trigger`` runs: the data's APPEND snapshot, then COMPACT."""
    table = _table(warehouse, **{"num-sorted-run.compaction-trigger": "3"})
    table.write_arrow(_batch([1]))
    table.write_arrow(_batch([2]))
    kinds = [s.commit_kind for s in table.snapshot_manager.snapshots()]
    assert [str(k) for k in kinds] == ["APPEND", "APPEND"]
    table.write_arrow(_batch([1], v=7))
    kinds = [str(s.commit_kind) for s in table.snapshot_manager.snapshots()]
    assert kinds == ["APPEND", "APPEND", "APPEND", "COMPACT"]
    assert _rows(table) == [(1, 7, "x", "a"), (2, 1, "x", "a")]
    assert len(_live(table)) == 1


def test_where_predicate_selects_partitions(warehouse: str) -> None:
    table = _table(warehouse)
    _write_history(table)
    compact_table(table, predicate=[("dt", "=", "b")])
    levels = sorted((e.file.level, bytes(e.partition)) for e in _live(table))
    assert [lv for lv, _ in levels].count(5) == 1 and [lv for lv, _ in levels].count(0) == 3


def test_a_concurrent_removal_is_a_conflict_and_nothing_is_lost(warehouse: str) -> None:
    table = _table(warehouse)
    _write_history(table)
    before = _rows(table)

    def runner(func, tasks):
        messages = [func(t) for t in tasks]
        table.new_commit().truncate_partitions([{"dt": "b"}])  # removes what we compacted
        return messages

    latest = table.snapshot_manager.latest_snapshot().snapshot_id
    with pytest.raises(CommitConflict):
        compact_table(table, runner=runner)
    assert table.snapshot_manager.latest_snapshot().snapshot_id == latest + 1
    assert _rows(table) == [r for r in before if r[3] == "a"]


# ------------------------------------------------------------------------------ append


def _append(warehouse: str, **options: str) -> FileStoreTable:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    return catalog.create_table("db.a", SCHEMA, partition_keys=["dt"], options=options)


def test_append_compaction_reduces_files(warehouse: str) -> None:
    table = _append(warehouse)
    for i in range(6):
        table.write_arrow(_batch([i, i + 10]))
    table.write_arrow(_batch([99], dt="b"))
    before = _rows(table)
    snapshot_id = compact_table(table, full=True)
    assert table.snapshot_manager.snapshot(snapshot_id).commit_kind == CommitKind.COMPACT
    assert _rows(table) == before
    by_partition = sorted(
        len([e for e in _live(table) if e.partition == p])
        for p in {e.partition for e in _live(table)}
    )
    assert by_partition == [1, 1]  # dt=a: 6 -> 1; dt=b: one file, left alone
    f = next(e.file for e in _live(table) if e.file.row_count == 12)
    assert (f.min_sequence_number, f.max_sequence_number, f.file_source) == (0, 11, 1)


def test_append_minor_compaction_needs_min_file_num(warehouse: str) -> None:
    table = _append(warehouse, **{"compaction.min.file-num": "3"})
    table.write_arrow(_batch([1]))
    table.write_arrow(_batch([2]))
    assert compact_table(table, full=False) is None
    table.write_arrow(_batch([3]))
    assert compact_table(table, full=False) is not None
    assert len(_live(table)) == 1


def test_order_compaction_sorts_rows(warehouse: str) -> None:
    table = _append(warehouse)
    table.write_arrow(_batch([3, 1]))
    table.write_arrow(_batch([2, 0]))
    compact_table(table, order_by=["k"])
    assert table.to_arrow().column("k").to_pylist() == [0, 1, 2, 3]
    assert len(_live(table)) == 1


def test_zorder_compaction_rewrites_only_the_selected_partitions(warehouse: str) -> None:
    table = _append(warehouse)
    table.write_arrow(_batch([3, 1], dt="a"))
    table.write_arrow(_batch([2, 0], dt="a", v=-1))
    table.write_arrow(_batch([5, 4], dt="b"))
    untouched = {e.file.file_name for e in _live(table) if _dt(table, e) == "b"}
    before = _rows(table)
    snapshot_id = compact_table(
        table, partitions=[{"dt": "a"}], order_by=["v", "k"], order_strategy="zorder"
    )
    assert table.snapshot_manager.snapshot(snapshot_id).commit_kind == CommitKind.COMPACT
    live = _live(table)
    assert {e.file.file_name for e in live if _dt(table, e) == "b"} == untouched
    assert len([e for e in live if _dt(table, e) == "a"]) == 1
    # v is ordered before k: (v, k) = (-1, 0), (-1, 2), (1, 1), (1, 3) in z-order.
    rows = [r for r in table.to_arrow().to_pylist() if r["dt"] == "a"]
    assert [(r["v"], r["k"]) for r in rows] == [(-1, 0), (-1, 2), (1, 1), (1, 3)]
    assert _rows(table) == before


def _dt(table: FileStoreTable, entry) -> str:
    return table.new_scan().partition_values(entry.partition)[0]

"""``CALL sys.compact``: Paimon Spark's arguments, checks and result row, run in process."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.format.snapshot import CommitKind
from paimon_core.operations.scan import Split
from paimon_core.operations.sort.table_sorter import TableSorter, byte_rows_order
from paimon_core.table import FileStoreTable
from procedures import ProcedureError
from tests.unit.procedures.helpers import call, fingerprint, new_catalog, new_table


def _levels(table) -> dict[str, list[int]]:
    snapshot = table.snapshot_manager.latest_snapshot()
    out: dict[str, list[int]] = {}
    for e in table.new_scan().read_entries(snapshot):
        day = table.new_scan().partition_values(e.partition)[0]
        out.setdefault(day, []).append(e.file.level)
    return {k: sorted(v) for k, v in out.items()}


@pytest.fixture
def pk(warehouse: str):
    catalog = new_catalog(warehouse)
    return catalog, new_table(
        catalog, commits=4, primary_keys=["id", "dt"], options={"bucket": "1"}
    )


def test_compact_returns_true_and_commits_compact(pk) -> None:
    catalog, table = pk
    before = sorted(map(str, table.to_arrow().to_pylist()))
    result = call(catalog, "compact", table="db.t")
    assert [c.name for c in result.columns] == ["result"] and result.rows == [(True,)]
    table = catalog.get_table("db.t")
    assert table.snapshot_manager.latest_snapshot().commit_kind == CommitKind.COMPACT
    assert _levels(table) == {"2024-01-01": [5], "2024-01-02": [5]}
    assert sorted(map(str, table.to_arrow().to_pylist())) == before


@pytest.mark.parametrize(
    "args",
    [
        {"partitions": "dt=2024-01-02"},
        {"where": "dt = '2024-01-02'"},
        {"where": "dt > '2024-01-01'"},
    ],
)
def test_partitions_and_where_restrict_the_compaction(pk, args) -> None:
    catalog, _ = pk
    call(catalog, "compact", table="db.t", **args)
    assert _levels(catalog.get_table("db.t")) == {"2024-01-01": [0, 0], "2024-01-02": [5]}


def test_minor_strategy_leaves_few_runs_alone(pk) -> None:
    catalog, table = pk
    latest = table.snapshot_manager.latest_snapshot().snapshot_id
    assert call(catalog, "compact", table="db.t", compact_strategy="minor").rows == [(True,)]
    assert catalog.get_table("db.t").snapshot_manager.latest_snapshot().snapshot_id == latest


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"compact_strategy": "major"}, "only supports 'full' or 'minor'"),
        ({"partitions": "dt=a", "where": "dt = 'a'"}, "cannot be used together"),
        ({"order_by": "id"}, 'order_strategy "none" cannot work with order_by'),
        ({"order_strategy": "zorder", "order_by": "id"}, "unaware-bucket append"),
        ({"order_strategy": "order", "order_by": "dt"}, "should not contain partition cols"),
        ({"order_strategy": "order", "order_by": "id"}, "unaware-bucket append"),
        ({"where": "id = 1"}, "Only partition columns"),
    ],
)
def test_refused_arguments(pk, args, message) -> None:
    catalog, _ = pk
    with pytest.raises(ProcedureError, match=message):
        call(catalog, "compact", table="db.t", **args)


def test_append_order_compaction(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    new_table(catalog, commits=4)
    call(catalog, "compact", table="db.t", order_strategy="order", order_by="id")
    table = catalog.get_table("db.t")
    assert _levels(table) == {"2024-01-01": [0], "2024-01-02": [0]}
    rows = table.to_arrow().to_pylist()
    assert [r["id"] for r in rows if r["dt"] == "2024-01-01"] == [0, 2, 100, 102]


# ------------------------------------------------------------------------ z-order, hilbert

GRID = pa.schema([("x", pa.int64()), ("y", pa.int64()), ("tag", pa.string())])


def _grid_table(warehouse: str) -> FileStoreTable:
    """A 16 x 16 grid of points written in random order, 64 points a commit (one file each):
    every file spans nearly the whole grid."""
    catalog = new_catalog(warehouse)
    table = catalog.create_table("db.g", GRID, options={"target-file-size": "2 kb"})
    points = [(x, y) for x in range(16) for y in range(16)]
    order = np.random.default_rng(3).permutation(len(points))
    for c in range(4):
        batch = [points[k] for k in order[c * 64 : (c + 1) * 64]]
        xs, ys = [p[0] for p in batch], [p[1] for p in batch]
        table.write_arrow(pa.table({"x": xs, "y": ys, "tag": [f"t{x % 3}" for x in xs]}, GRID))
    return catalog.get_table("db.g")


def _files(table: FileStoreTable) -> list[pa.Table]:
    """Each live file's rows, files in sequence-number order."""
    snapshot = table.snapshot_manager.latest_snapshot()
    entries = sorted(
        table.new_scan().read_entries(snapshot), key=lambda e: e.file.min_sequence_number
    )
    reader = table.new_read()
    return [
        reader.to_arrow([Split(e.partition, (), e.bucket, (e.file,), snapshot.snapshot_id)])
        for e in entries
    ]


def _ranges(files: list[pa.Table]) -> list[tuple[int, int, int, int]]:
    """Each file's (min x, max x, min y, max y): what its min/max stats prune by."""
    out = []
    for t in files:
        xs, ys = t.column("x").to_pylist(), t.column("y").to_pylist()
        out.append((min(xs), max(xs), min(ys), max(ys)))
    return out


def _span(files: list[pa.Table]) -> int:
    """Sum over files of the x and y ranges they cover."""
    return sum(x1 - x0 + y1 - y0 for x0, x1, y0, y1 in _ranges(files))


def _multiset(rows: list[dict]) -> Counter:
    return Counter((r["x"], r["y"], r["tag"]) for r in rows)


@pytest.mark.parametrize("strategy", ["zorder", "hilbert"])
def test_curve_compaction_clusters_files(warehouse: str, oracle, strategy: str) -> None:
    table = _grid_table(warehouse)
    before_rows = _multiset(table.to_arrow().to_pylist())
    before = _files(table)
    assert len(before) == 4 and _span(before) >= 100
    # Files of 64 rows: Arrow size over 4 (the writer rolls by in-memory size).
    target = table.to_arrow().nbytes // 4 + 1
    catalog = FileSystemCatalog(warehouse)
    result = call(
        catalog,
        "compact",
        table="db.g",
        order_strategy=strategy,
        order_by="x,y",
        options=f"target-file-size={target} b",
    )
    assert result.rows == [(True,)]
    table = catalog.get_table("db.g")
    assert table.snapshot_manager.latest_snapshot().commit_kind == CommitKind.COMPACT
    after = _files(table)
    # Both curves fill one 8 x 8 quadrant of the grid before the next.
    assert sorted(_ranges(after)) == [
        (0, 7, 0, 7), (0, 7, 8, 15), (8, 15, 0, 7), (8, 15, 8, 15),
    ]  # fmt: skip
    assert _span(after) == 56 < _span(before)
    rows = pa.concat_tables(after)
    keys = TableSorter(strategy, tuple(table.schema.fields), ("x", "y")).indexer.index(rows)
    assert byte_rows_order(keys).tolist() == list(range(256))  # already in index order
    assert _multiset(rows.to_pylist()) == before_rows
    assert _multiset(oracle("read", warehouse, "db.g")) == before_rows


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"order_strategy": "hilbert", "order_by": "x"}, "at least two columns"),
        ({"order_strategy": "zorder", "order_by": "x,z"}, "not a column of the table"),
        (
            {
                "order_strategy": "zorder",
                "order_by": "x",
                "options": "zorder.var-length-contribution=0",
            },
            "must be positive",
        ),
    ],
)
def test_refused_curve_compactions_change_nothing(warehouse: str, args, message) -> None:
    table = _grid_table(warehouse)
    before = fingerprint(table.path)
    with pytest.raises(ProcedureError, match=message):
        call(FileSystemCatalog(warehouse), "compact", table="db.g", **args)
    assert fingerprint(table.path) == before


def test_buckets_select_the_buckets_compacted(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=3, primary_keys=["id", "dt"], options={"bucket": "4"})
    call(catalog, "compact", table="db.t", buckets="0-1, 3")
    table = catalog.get_table("db.t")
    levels: dict[int, set[int]] = {}
    for e in table.new_scan().read_entries(table.snapshot_manager.latest_snapshot()):
        levels.setdefault(e.bucket, set()).add(e.file.level)
    assert {b: lv for b, lv in levels.items() if b != 2} == {b: {5} for b in levels if b != 2}
    assert levels.get(2, {0}) == {0}


@pytest.mark.parametrize(
    ("options", "buckets", "message"),
    [
        ({"bucket": "4"}, "0-4", r"Integer or range '0-4' is out of range \[0, 4\)\."),
        ({"bucket": "4"}, "3-1", "Integer range start 3 must not be greater than end 1."),
        ({"bucket": "4"}, "1,,2", "Integer ranges must not contain an empty item."),
        ({"bucket": "4"}, "x", "Invalid integer or range: 'x'."),
        ({"bucket": "-1"}, "0", "only supported for fixed-bucket tables, but the table bucket "
                                "mode is HASH_DYNAMIC"),
    ],
)  # fmt: skip
def test_bad_buckets_are_refused_and_change_nothing(
    warehouse: str, options: dict[str, str], buckets: str, message: str
) -> None:
    catalog = new_catalog(warehouse)
    new_table(catalog, commits=2, primary_keys=["id", "dt"], options=options)
    before = fingerprint(warehouse)
    with pytest.raises(ProcedureError, match=message):
        call(catalog, "compact", table="db.t", buckets=buckets)
    assert fingerprint(warehouse) == before


def test_partition_idle_time_compacts_only_idle_partitions(pk) -> None:
    """Partitions whose newest file is younger than ``partition_idle_time`` are left alone."""
    catalog, _ = pk
    call(catalog, "compact", table="db.t", partition_idle_time="1 d")
    assert _levels(catalog.get_table("db.t")) == {
        "2024-01-01": [0, 0],
        "2024-01-02": [0, 0],
    }
    call(catalog, "compact", table="db.t", partition_idle_time="0 s")
    assert _levels(catalog.get_table("db.t")) == {"2024-01-01": [5], "2024-01-02": [5]}
    with pytest.raises(ProcedureError, match="sort compact do not support"):
        call(
            catalog,
            "compact",
            table="db.t",
            partition_idle_time="1 d",
            order_strategy="order",
            order_by="name",
        )

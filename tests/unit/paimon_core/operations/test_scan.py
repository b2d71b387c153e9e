"""Scan planning: splits, folding, partition, stats and file index pruning, planning speed."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import InvalidArgument, SchemaError
from paimon_core.format.binary_row import serialize_row
from paimon_core.format.manifest import (
    EMPTY_ROW,
    EMPTY_STATS,
    DataFileMeta,
    FileKind,
    ManifestEntry,
    SimpleStats,
)
from paimon_core.format.schema import RemoveOption, RenameColumn, UpdateColumnType
from paimon_core.format.snapshot import CommitKind, Snapshot
from paimon_core.format.types import BIGINT as BIGINT_FACTORY
from paimon_core.format.types import STRING
from paimon_core.operations.compact import compact_table
from paimon_core.operations.scan import Split, TableScan
from paimon_core.table import FileStoreTable

SCHEMA = pa.schema(
    [pa.field("k", pa.int64(), False), ("v", pa.string()), pa.field("dt", pa.string(), False)]
)


def _table(warehouse: str, name: str = "t", **kw: Any) -> FileStoreTable:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    return catalog.create_table(f"db.{name}", SCHEMA, **kw)


def _batch(ks: list[int], dt: str = "a", v: list[str | None] | None = None) -> pa.Table:
    values = v if v is not None else [f"v{k}" for k in ks]
    return pa.table({"k": ks, "v": values, "dt": [dt] * len(ks)}, schema=SCHEMA)


def _files(splits: list[Split]) -> int:
    return sum(len(s.files) for s in splits)


def test_empty_table_plans_nothing(warehouse: str) -> None:
    assert _table(warehouse).new_scan().plan() == []


def test_one_split_per_partition_and_bucket(warehouse: str) -> None:
    table = _table(
        warehouse, partition_keys=["dt"], primary_keys=["dt", "k"], options={"bucket": "2"}
    )
    table.write_arrow(pa.concat_tables([_batch([1, 2, 3, 4], "a"), _batch([1], "b")]))
    table.write_arrow(_batch([1, 2, 3, 4], "a"))
    splits = table.new_scan().plan()
    assert [(s.partition_values, s.bucket, len(s.files)) for s in splits] == [
        (("a",), 0, 2),
        (("a",), 1, 2),
        (("b",), 0, 1),
    ]
    assert splits[0].partition == serialize_row(["a"], [STRING()])
    assert {s.snapshot_id for s in splits} == {2}
    assert sum(s.row_count for s in splits) == 9


def test_partition_filter_reads_only_matching_manifests(warehouse: str, monkeypatch: Any) -> None:
    table = _table(warehouse, partition_keys=["dt"])
    for dt in ("a", "b", "c"):
        table.write_arrow(_batch([1, 2], dt))
    scan = table.new_scan()
    read = []
    original = table.manifest_file.read
    monkeypatch.setattr(
        table.manifest_file,
        "read",
        lambda name, keep=None, **kw: read.append(name) or original(name, keep, **kw),
    )
    splits = scan.plan(partition_filter={"dt": "b"})
    assert [s.partition_values for s in splits] == [("b",)]
    assert len(read) == 1
    assert [s.partition_values for s in scan.plan(predicate=[("dt", ">=", "b")])] == [
        ("b",),
        ("c",),
    ]
    assert scan.plan(partition_filter={"dt": None}) == []
    with pytest.raises(InvalidArgument, match="not a partition column"):
        scan.plan(partition_filter={"k": 1})


def test_entries_of_other_partitions_are_skipped_inside_each_manifest(
    warehouse: str, monkeypatch: Any
) -> None:
    table = _table(warehouse, partition_keys=["dt"])
    for ks in ([1, 2], [3], [4, 5]):  # every manifest spans every partition
        table.write_arrow(pa.concat_tables([_batch(ks, dt) for dt in ("a", "b", "c")]))
    everything = table.new_scan().plan()
    returned: list[list[str]] = []
    original = table.manifest_file.read

    def read(name: str, keep: Any = None, **kw: Any) -> list:
        entries = original(name, keep, **kw)
        returned.append(
            sorted({table.new_scan().partition_values(e.partition)[0] for e in entries})
        )
        return entries

    monkeypatch.setattr(table.manifest_file, "read", read)
    scan = table.new_scan()
    splits = scan.plan(partition_filter={"dt": "b"})
    assert returned == [["b"]] * 3  # built only the entries of partition b
    assert splits == [s for s in everything if s.partition_values == ("b",)]
    returned.clear()
    splits = scan.plan(predicate=[("dt", "!=", "b"), ("k", ">", 2)])
    assert returned == [["a", "c"]] * 3
    assert _files(splits) == 4  # the files with k 3 and 4-5, in a and c
    assert scan.read_entries(table.latest_snapshot(), partitions=set()) == []


def test_value_stats_prune_append_files(warehouse: str) -> None:
    table = _table(warehouse)
    table.write_arrow(_batch([1, 2, 3], v=["x", None, "y"]))
    table.write_arrow(_batch([10, 11, 12], v=["p", "q", "r"]))
    scan = table.new_scan()

    def rows(*predicate: tuple) -> list[int]:
        return _min_keys(scan.plan(predicate=list(predicate)))

    assert rows(("k", ">", 5)) == [10]
    assert rows(("k", "=", 2)) == [1]
    assert rows(("k", "<=", "3")) == [1]  # SQL literals arrive as strings
    assert rows(("v", "is_null", None)) == [1]
    assert rows(("k", "!=", 2)) == [1, 10]
    assert rows(("k", ">", 0), ("k", "<", 11)) == [1, 10]
    assert rows(("k", ">", 100)) == []
    with pytest.raises(InvalidArgument, match="operator"):
        scan.plan(predicate=[("k", "like", 1)])
    with pytest.raises(InvalidArgument, match="not a column"):
        scan.plan(predicate=[("nope", "=", 1)])


def _min_keys(splits: list[Split]) -> list[int]:
    """The smallest ``k`` of every planned file, from its value stats."""
    from paimon_core.format.stats import decode_stats
    from paimon_core.format.types import BIGINT

    types = [BIGINT(), STRING(), STRING()]
    return sorted(decode_stats(f.value_stats, types)[0].min for s in splits for f in s.files)


def test_stats_follow_renamed_columns_and_partial_stats(warehouse: str) -> None:
    table = _table(warehouse, options={"fields.v.stats-mode": "none"})
    table.write_arrow(_batch([1, 2]))
    table.write_arrow(_batch([8, 9]))
    table.schema_manager.commit_changes(RenameColumn("k", "key"))
    renamed = FileStoreTable.load(table.path)
    scan = renamed.new_scan()
    assert _files(scan.plan(predicate=[("key", ">=", 5)])) == 1
    assert _files(scan.plan(predicate=[("v", "=", "zzz")])) == 2  # v has no stats: cannot prune


def test_pk_tables_prune_by_key_stats_only(warehouse: str) -> None:
    table = _table(warehouse, primary_keys=["k"], options={"bucket": "1"})
    table.write_arrow(_batch([1, 2], v=["old", "old"]))
    table.write_arrow(_batch([2, 9], v=["new", "new"]))
    scan = table.new_scan()
    assert _files(scan.plan(predicate=[("v", "=", "old")])) == 2  # a newer version may be elsewhere
    assert _files(scan.plan(predicate=[("k", ">", 5)])) == 1
    assert _files(scan.plan(predicate=[("k", "=", 2)])) == 2


def test_read_entries_fold_deleted_files(warehouse: str) -> None:
    table = _table(warehouse, partition_keys=["dt"])
    table.write_arrow(_batch([1], "a"))
    table.write_arrow(_batch([2], "b"))
    old = {e.file.file_name for e in table.new_scan().read_entries(table.latest_snapshot())}
    table.write_arrow(_batch([3], "a"), overwrite=True)
    scan = table.new_scan()
    snapshot = table.latest_snapshot()
    live = scan.read_entries(snapshot)
    assert len(live) == 2 and all(e.kind == FileKind.ADD for e in live)
    assert len(old & {e.file.file_name for e in live}) == 1
    everything = scan.read_all_entries([snapshot.base_manifest_list, snapshot.delta_manifest_list])
    assert sorted(e.kind for e in everything) == [FileKind.ADD] * 3 + [FileKind.DELETE]
    only_b = scan.read_entries(snapshot, partitions={serialize_row(["b"], [STRING()])})
    assert [e.partition for e in only_b] == [serialize_row(["b"], [STRING()])]


def test_plan_honours_time_travel_options(warehouse: str) -> None:
    table = _table(warehouse)
    table.write_arrow(_batch([1]))
    table.write_arrow(_batch([2]))
    assert _files(table.copy({"scan.snapshot-id": "1"}).new_scan().plan()) == 1
    assert _files(table.new_scan().plan()) == 2
    first = table.snapshot_manager.snapshot(1)
    assert {s.snapshot_id for s in table.new_scan().plan(snapshot=first)} == {1}


def test_planning_10000_files_is_fast(warehouse: str) -> None:
    table = _table(warehouse, partition_keys=["dt"])
    types = [STRING(False)]
    partitions = [serialize_row([f"p{i:04d}"], types) for i in range(1000)]
    metas = []
    for m in range(10):
        entries = [
            ManifestEntry(
                FileKind.ADD,
                partitions[(m * 1000 + j) % 1000],
                0,
                -1,
                DataFileMeta(
                    f"data-{m}-{j}-0.parquet",
                    1000,
                    10,
                    EMPTY_ROW,
                    EMPTY_ROW,
                    EMPTY_STATS,
                    EMPTY_STATS,
                    0,
                    9,
                    0,
                    0,
                    creation_time_millis=0,
                    delete_row_count=0,
                    file_source=0,
                ),
            )
            for j in range(1000)
        ]
        metas += table.manifest_file.write(entries, types)
    base, _ = table.manifest_list.write([])
    delta, _ = table.manifest_list.write(metas)
    table.snapshot_manager.commit(
        Snapshot(1, 0, base, delta, "u", 1, CommitKind.APPEND, 0, 10**5, 10**5)
    )
    splits = TableScan(table).plan()  # its speed: bench/plan.py
    assert len(splits) == 1000 and _files(splits) == 10_000


NAN = float("nan")
# Predicates a NaN satisfies under Spark's semantics (NaN = NaN, NaN above every value).
NAN_MATCHES = [("=", NAN), (">", 5.0), (">=", 5.0), (">=", NAN), ("<=", NAN), ("!=", 1.5)]


FLOAT_SCHEMA = pa.schema([pa.field("x", pa.float64(), False), ("v", pa.string())])


def _float_table(warehouse: str, name: str, **kw: Any) -> FileStoreTable:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    return catalog.create_table(f"db.{name}", FLOAT_SCHEMA, **kw)


def _commit_with_bounds(table: FileStoreTable, data: pa.Table, low: float, high: float) -> None:
    """Commit ``data`` with the min/max an older writer stored: bounds that leave NaN out."""
    write = table.new_write()
    write.write_arrow(data)
    types = [table.schema.field("x").type, table.schema.field("v").type]
    old = SimpleStats(serialize_row([low, "a"], types), serialize_row([high, "z"], types), (0, 0))
    key_type = [types[0]]
    old_key = SimpleStats(serialize_row([low], key_type), serialize_row([high], key_type), (0,))
    messages = []
    for m in write.prepare_commit():
        files = tuple(
            dataclasses.replace(
                f,
                value_stats=old,
                value_stats_cols=None,
                key_stats=old_key if table.is_primary_key_table else f.key_stats,
            )
            for f in m.new_files
        )
        messages.append(dataclasses.replace(m, new_files=files))
    table.new_commit().commit(messages)


@pytest.mark.parametrize("pk", [False, True], ids=["append", "primary-key"])
def test_stats_pruning_keeps_files_whose_nan_may_match(warehouse: str, pk: bool) -> None:
    kw: dict[str, Any] = {"primary_keys": ["x"], "options": {"bucket": "1"}} if pk else {}
    table = _float_table(warehouse, "t", **kw)
    data = pa.table({"x": [1.0, NAN, 2.0], "v": ["a", "b", "z"]}, schema=FLOAT_SCHEMA)
    _commit_with_bounds(table, data, 1.0, 2.0)  # older writers: bounds without the NaN
    table.write_arrow(data)  # this writer: 1.0..NaN, as Paimon 2 (NaN the largest)
    for op, literal in NAN_MATCHES:
        assert _files(table.new_scan().plan(predicate=[("x", op, literal)])) == 2, (op, literal)
    # Bounds still prune what neither a NaN nor a value inside them can satisfy; a NaN upper
    # bound proves nothing about the values below it.
    assert _files(table.new_scan().plan(predicate=[("x", "=", 7.0)])) == 1
    assert _files(table.new_scan().plan(predicate=[("x", "<", 0.5)])) == 0
    assert _files(table.new_scan().plan(predicate=[("x", "<=", -1.0)])) == 0


def test_partition_pruning_matches_nan_and_signed_zero_partitions(warehouse: str) -> None:
    table = _float_table(warehouse, "p", partition_keys=["x"])
    data = pa.table({"x": [NAN, 1.0, -0.0], "v": ["n", "one", "zero"]}, schema=FLOAT_SCHEMA)
    table.write_arrow(data)

    def partitions(op: str, literal: Any) -> list[str]:
        splits = table.new_scan().plan(predicate=[("x", op, literal)])
        return sorted(str(s.partition_values[0]) for s in splits)

    assert partitions("=", NAN) == ["nan"]
    assert partitions(">", 5.0) == ["nan"]
    assert partitions(">=", 1.0) == ["1.0", "nan"]
    assert partitions("<", NAN) == ["-0.0", "1.0"]
    assert partitions("!=", 1.0) == ["-0.0", "nan"]
    assert partitions("=", 0.0) == ["-0.0"]  # Spark: -0.0 = 0.0
    assert partitions(">", NAN) == []
    assert partitions("in", (0.0, NAN)) == ["-0.0", "nan"]
    assert partitions("in", (1, None)) == ["1.0"]


def test_float_bounds_prove_only_what_a_nan_cannot_break() -> None:
    from paimon_core.format.stats import ColumnStats
    from paimon_core.operations.scan import stats_may_match

    old = ColumnStats(1.0, 2.0, 0)  # an older writer's bounds of [1.0, NaN, 2.0]
    assert stats_may_match(">", 5.0, old, 3)
    assert stats_may_match("=", NAN, old, 3)
    assert stats_may_match("=", "NaN", old, 3)  # SQL hands literals over as text
    assert not stats_may_match("=", 7.0, old, 3)
    assert not stats_may_match(">", NAN, old, 3)  # nothing is above NaN
    # Older partition stats took the first NaN as both bounds, whatever followed.
    assert stats_may_match("<", 1.0, ColumnStats(NAN, NAN, 0), 3)
    # Java's partition stats: NaN is the max.
    java = ColumnStats(-0.0, NAN, 0)
    assert stats_may_match("<=", 0.0, java, 3)
    assert not stats_may_match("<", -1.0, java, 3)
    assert stats_may_match("=", 0, ColumnStats(-0.0, -0.0, 0), 1)  # Spark: -0.0 = 0.0


def test_stats_of_a_column_whose_type_changed_do_not_prune(warehouse: str) -> None:
    """Numbers 9 and 100 have min 9, max 100; after ALTER k TYPE STRING, k < '2' holds for
    '100' (strings compare by character), which the numeric bounds would exclude."""
    table = _table(warehouse)
    table.write_arrow(_batch([9, 100]))
    table.schema_manager.commit_changes(UpdateColumnType("k", STRING()))
    evolved = FileStoreTable.load(table.path)
    splits = evolved.new_scan().plan(predicate=[("k", "<", "2")])
    assert _files(splits) == 1
    assert evolved.new_read().to_arrow(splits).column("k").to_pylist() == ["9", "100"]
    # an unchanged column still prunes: v's stats are of the same type
    assert _files(evolved.new_scan().plan(predicate=[("v", ">", "zzz")])) == 0


# ---------------------------------------------------------------------------- file indexes

BIGINT_TYPE = BIGINT_FACTORY()
INDEXED = pa.schema([("k", pa.int32()), ("s", pa.string()), ("d", pa.float64())])


def _indexed_table(warehouse: str, name: str, options: dict[str, str], **kw: Any) -> FileStoreTable:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    table = catalog.create_table(f"db.{name}", INDEXED, options=options, **kw)
    for i in range(8):  # every file spans [i, 1000 + i]: stats cannot tell them apart
        ks = [i, i + 10, i + 20, 1000 + i]
        table.write_arrow(
            pa.table(
                {"k": ks, "s": [f"s{k}" for k in ks], "d": [float(k) for k in ks]},
                schema=INDEXED,
            )
        )
    return catalog.get_table(f"db.{name}")


def _keys_of(splits: list[Split], table: FileStoreTable) -> set[int]:
    return set(table.new_read().to_arrow(splits).column("k").to_pylist())


@pytest.mark.parametrize(
    "options",
    [
        {"file-index.bloom-filter.k.items": "20", "file-index.bloom-filter.s.items": "20"},
        {},  # default sizes: each file's index goes to <data file>.index
    ],
    ids=["embedded", "index-file"],
)
def test_bloom_filters_skip_files_without_the_value(
    warehouse: str, options: dict[str, str]
) -> None:
    table = _indexed_table(warehouse, "t", {"file-index.bloom-filter.columns": "k,s", **options})
    files = table.new_scan().plan()[0].files
    assert all((f.embedded_index is None) == (not options) for f in files)
    assert all(len(f.extra_files) == (0 if options else 1) for f in files)
    scan = table.new_scan()
    skipped = 0
    for k in [*range(30), 1000, 1005]:
        for predicate in ([("k", "=", k)], [("s", "=", f"s{k}")], [("k", "in", [k, 5000])]):
            splits = scan.plan(predicate=predicate)
            holding = k < 8 or 10 <= k < 18 or 20 <= k < 28 or 1000 <= k
            assert (k in _keys_of(splits, table)) == holding  # no file with the value skipped
            skipped += len(files) - _files(splits)
    assert skipped > 500
    assert _files(scan.plan(predicate=[("k", "=", 5), ("s", "=", "s6")])) <= 1
    assert _files(scan.plan(predicate=[("k", "!=", 5), ("k", ">", 1)])) == 8  # no index answers
    assert _files(scan.plan(predicate=[("k", "=", 25)])) < 8
    disabled = table.copy({"file-index.read.enabled": "false"})
    assert _files(disabled.new_scan().plan(predicate=[("k", "=", 25)])) == 8


def test_file_index_follows_renames_and_ignores_changed_types(warehouse: str) -> None:
    """Old files' indexes name the column as it was; Paimon refuses renaming a column the
    options index, so the option goes first."""
    table = _indexed_table(
        warehouse,
        "t",
        {"file-index.bloom-filter.columns": "k", "file-index.bloom-filter.k.items": "20"},
    )
    with pytest.raises(SchemaError, match="Column 'k' specified in"):
        table.schema_manager.commit_changes(RenameColumn("k", "key"))
    table.schema_manager.commit_changes(
        RemoveOption("file-index.bloom-filter.columns"),
        RemoveOption("file-index.bloom-filter.k.items"),
        RenameColumn("k", "key"),
    )
    renamed = FileStoreTable.load(table.path)
    assert _files(renamed.new_scan().plan(predicate=[("key", "=", 25)])) == 1
    renamed.schema_manager.commit_changes(UpdateColumnType("key", BIGINT_TYPE))
    widened = FileStoreTable.load(table.path)
    assert _files(widened.new_scan().plan(predicate=[("key", "=", 25)])) == 8


def test_in_predicates_prune_partitions_and_stats(warehouse: str) -> None:
    table = _table(warehouse, partition_keys=["dt"])
    table.write_arrow(pa.concat_tables([_batch([1, 2], "a"), _batch([3], "b"), _batch([4], "c")]))
    table.write_arrow(_batch([50, 60], "a"))
    scan = table.new_scan()
    assert [s.partition_values for s in scan.plan(predicate=[("dt", "in", ["a", "c"])])] == [
        ("a",),
        ("c",),
    ]
    assert _files(scan.plan(predicate=[("k", "in", [55, 70])])) == 1
    assert _files(scan.plan(predicate=[("k", "in", [None])])) == 0
    with pytest.raises(InvalidArgument, match="needs a list of literals"):
        scan.plan(predicate=[("k", "in", 5)])


def _pk_table(warehouse: str, name: str, options: dict[str, str]) -> FileStoreTable:
    table = _table(warehouse, name, primary_keys=["k"], options={"bucket": "1", **options})
    table.write_arrow(_batch([1, 2], v=["a", "b"]))
    table.write_arrow(_batch([3, 4], v=["c", "d"]))
    return table


def test_pk_value_filter_keeps_whole_overlapping_buckets(warehouse: str) -> None:
    """Java's whole-bucket value filter: level-0 files overlap, so a bucket stays whole when
    one file may hold the value and goes when none may; partial-update merges values no
    file holds, so its buckets always stay."""
    scan = _pk_table(warehouse, "d", {}).new_scan()
    assert _files(scan.plan(predicate=[("v", "=", "a")])) == 2
    assert _files(scan.plan(predicate=[("v", "=", "z")])) == 0
    assert _files(scan.plan(predicate=[("v", "in", ["z", "c"])])) == 2
    merging = _pk_table(warehouse, "p", {"merge-engine": "partial-update"}).new_scan()
    assert _files(merging.plan(predicate=[("v", "=", "z")])) == 2


@pytest.mark.parametrize("dv", [True, False], ids=["deletion-vectors", "merge-on-read"])
def test_pk_index_filters_files_of_one_level_in_deletion_vector_tables(
    warehouse: str, dv: bool
) -> None:
    """Files of one level above 0 hold each key once, so each is filtered alone; Java
    consults primary-key files' embedded indexes only in deletion-vector tables. Without
    value stats only the index can skip."""
    options = {
        "bucket": "1",
        "deletion-vectors.enabled": str(dv).lower(),
        "metadata.stats-mode": "none",
        "target-file-size": "1 b",
        "file-index.bloom-filter.columns": "k2",
        "file-index.bloom-filter.k2.items": "10",
    }
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    schema = pa.schema([pa.field("k", pa.int64(), False), ("k2", pa.int64())])
    table = catalog.create_table("db.t", schema, primary_keys=["k"], options=options)
    ks = list(range(12))
    table.write_arrow(pa.table({"k": ks, "k2": [k * 3 for k in ks]}, schema=schema))
    if not dv:  # deletion-vector tables compact on write
        compact_table(table, full=True)
    files = table.new_scan().plan()[0].files
    assert len(files) == 12 and len({f.level for f in files}) == 1 and files[0].level > 0
    assert all(f.embedded_index for f in files)
    kept = table.new_scan().plan(predicate=[("k2", "=", 33)])
    assert 11 in table.new_read().to_arrow(kept).column("k").to_pylist()
    assert (_files(kept) < 4) if dv else (_files(kept) == 12)


@pytest.mark.parametrize("items", ["16", None], ids=["embedded", "index-file"])
def test_indexes_java_wrote_prune_without_losing_rows(
    warehouse: str, oracle: Any, items: str | None
) -> None:
    options = ["--option", "file-index.bloom-filter.columns=k,s"]
    if items:
        options += ["--option", f"file-index.bloom-filter.k.items={items}"]
        options += ["--option", f"file-index.bloom-filter.s.items={items}"]
    oracle("create-table", warehouse, "db.j", "--schema", "k INT, s STRING", *options)
    for i in range(4):
        ks = [i, i + 10, i + 20, 1000 + i]
        rows = [{"k": k, "s": f"s{k}"} for k in ks] + [{"k": None, "s": None}]
        oracle("write", warehouse, "db.j", "--json-rows", json.dumps(rows))
    table = FileSystemCatalog(warehouse).get_table("db.j")
    files = table.new_scan().plan()[0].files
    assert all((f.embedded_index is not None) == bool(items) for f in files)
    scan = table.new_scan()
    skipped = 0
    for k in range(30):
        for predicate in ([("k", "=", k)], [("s", "in", [f"s{k}", "none"])]):
            splits = scan.plan(predicate=predicate)
            holding = k % 10 < 4
            assert (k in _keys_of(splits, table)) == holding
            skipped += len(files) - _files(splits)
    assert skipped > 100


@pytest.mark.parametrize("threshold", ["500 b", "1 b"], ids=["embedded", "index-file"])
def test_bitmap_and_bsi_indexes_skip_files(warehouse: str, threshold: str) -> None:
    """Bitmaps answer equality and nulls, bit-sliced indexes ranges too; results of several
    columns intersect row by row (a file with k = 5 and a file with d = 20.0 but no row
    with both is skipped)."""
    table = _indexed_table(
        warehouse,
        "t",
        {
            "file-index.bitmap.columns": "s",
            "file-index.bsi.columns": "k",
            "file-index.in-manifest-threshold": threshold,
            "metadata.stats-mode": "none",
        },
    )
    scan = table.new_scan()
    for predicate, keys in [
        ([("k", ">", 1003)], {1004, 1005, 1006, 1007}),
        ([("k", "<=", 1)], {0, 1}),
        ([("s", "=", "s13")], {13}),
        ([("k", ">", 20), ("s", "in", ["s1", "s22"])], {22}),
        ([("k", "=", 21), ("s", "=", "s1")], set()),
        ([("s", "is_null", None)], set()),
    ]:
        splits = scan.plan(predicate=predicate)
        found = _keys_of(splits, table)
        assert keys <= found, predicate
        assert _files(splits) == len({k % 10 if k < 1000 else k - 1000 for k in keys}), predicate


def test_bitmap_indexes_java_wrote_prune(warehouse: str, oracle: Any) -> None:
    oracle(
        "create-table", warehouse, "db.j", "--schema", "k INT, s STRING",
        "--option", "file-index.bitmap.columns=k,s",
    )  # fmt: skip
    for i in range(4):
        rows = [{"k": k, "s": f"s{k % 3}"} for k in (i, i + 10, 1000 + i)] + [{"k": None}]
        oracle("write", warehouse, "db.j", "--json-rows", json.dumps(rows))
    table = FileSystemCatalog(warehouse).get_table("db.j")
    scan = table.new_scan()
    for k in range(15):
        splits = scan.plan(predicate=[("k", "=", k), ("s", "=", f"s{k % 3}")])
        assert _files(splits) == (1 if k % 10 < 4 else 0)
        assert (k in _keys_of(splits, table)) == (k % 10 < 4)
    assert _files(scan.plan(predicate=[("s", "is_null", None)])) == 4
    assert _files(scan.plan(predicate=[("k", "=", 1), ("s", "is_null", None)])) == 0

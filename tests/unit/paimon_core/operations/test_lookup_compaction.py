"""Writes to lookup tables (deletion vectors, first-row): every write compacts its level-0
files up, looking keys up in the older levels, so that Paimon's batch reads (which skip
level 0 on these tables) see the rows; Java reads what we write and we read what Java
writes on top of it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import MergeError, SchemaError
from paimon_core.format.deletion_vectors import DELETION_VECTORS_INDEX
from paimon_core.format.manifest import FileKind
from paimon_core.format.snapshot import CommitKind
from paimon_core.operations.compact import compact_table
from paimon_core.operations.live_files import checkout, give_back
from paimon_core.table import FileStoreTable

SCHEMA = pa.schema(
    [pa.field("k", pa.int32(), False), ("v", pa.string()), ("n", pa.int64()), ("dt", pa.string())]
)
INSERT, DELETE = 0, 3


def _table(warehouse: str, **options: str) -> FileStoreTable:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    return catalog.create_table(
        "db.t", SCHEMA, primary_keys=["k"], options={"bucket": "2", **options}
    )


def _write(
    table: FileStoreTable, rows: list[tuple], kind: int = INSERT, *, write_only: bool = False
) -> None:
    data = pa.table(
        {
            "k": pa.array([r[0] for r in rows], pa.int32()),
            "v": [r[1] for r in rows],
            "n": pa.array([r[2] for r in rows], pa.int64()),
            "dt": ["a"] * len(rows),
        },
        schema=SCHEMA,
    )
    fresh = FileSystemCatalog(table.path.rsplit("/", 2)[0]).get_table("db.t")
    if write_only:
        fresh = fresh.copy({"write-only": "true"})
    fresh.write_arrow(data, row_kinds=pa.array([kind] * len(rows), pa.int8()))


def _ours(table: FileStoreTable) -> list[tuple]:
    fresh = FileSystemCatalog(table.path.rsplit("/", 2)[0]).get_table("db.t")
    return sorted((r["k"], r["v"], r["n"]) for r in fresh.to_arrow().to_pylist())


def _java(oracle: Callable[..., Any], table: FileStoreTable) -> list[tuple]:
    rows = oracle("read", table.path.rsplit("/", 2)[0], "db.t")
    return sorted((r["k"], r["v"], r["n"]) for r in rows)


def _live_levels(table: FileStoreTable) -> list[int]:
    latest = table.snapshot_manager.latest_snapshot()
    live = checkout(table, latest)
    try:
        return sorted(e.file.level for e in live.entries.values())
    finally:
        give_back(table, live)


def _kinds(table: FileStoreTable) -> list[str]:
    return [str(s.commit_kind) for s in table.snapshot_manager.snapshots()]


def _history(table: FileStoreTable) -> None:
    _write(table, [(k, f"v{k}", k) for k in range(8)])
    _write(table, [(1, "x", None), (2, None, 20), (9, "new", 9)])
    _write(table, [(3, None, None), (4, None, None)], DELETE)
    _write(table, [(1, None, 100), (5, "y", None)])


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (
            {"deletion-vectors.enabled": "true"},
            [(0, "v0", 0), (1, None, 100), (2, None, 20), (5, "y", None), (6, "v6", 6),
             (7, "v7", 7), (9, "new", 9)],
        ),
        (
            {"deletion-vectors.enabled": "true", "merge-engine": "partial-update",
             "partial-update.remove-record-on-delete": "true"},
            [(0, "v0", 0), (1, "x", 100), (2, "v2", 20), (5, "y", 5), (6, "v6", 6),
             (7, "v7", 7), (9, "new", 9)],
        ),
        (
            {"deletion-vectors.enabled": "true", "merge-engine": "aggregation",
             "fields.n.aggregate-function": "sum", "fields.v.aggregate-function": "listagg"},
            [(0, "v0", 0), (1, "v1,x", 121), (2, "v2", 22), (3, "v3", 3), (4, "v4", 4),
             (5, "v5,y", 5), (6, "v6", 6), (7, "v7", 7), (9, "new", 9)],
        ),
        (
            {"merge-engine": "first-row"},
            [(0, "v0", 0), (1, "v1", 1), (2, "v2", 2), (3, "v3", 3), (4, "v4", 4), (5, "v5", 5),
             (6, "v6", 6), (7, "v7", 7), (9, "new", 9)],
        ),
    ],
    ids=["dv-deduplicate", "dv-partial-update", "dv-aggregation", "first-row"],
)  # fmt: skip
def test_lookup_writes_are_visible_to_us_and_java(
    warehouse: str, oracle: Callable[..., Any], options: dict[str, str], expected: list[tuple]
) -> None:
    table = _table(warehouse, **options)
    _write(table, [(k, f"v{k}", k) for k in range(8)])
    _write(table, [(1, "x", 20 if "fields.n.aggregate-function" in options else None),
                   (2, None, 20), (9, "new", 9)])  # fmt: skip
    if options.get("merge-engine") not in ("aggregation", "first-row"):
        _write(table, [(3, None, None), (4, None, None)], DELETE)
    _write(table, [(1, None, 100), (5, "y", None)])
    assert _ours(table) == expected
    assert _java(oracle, table) == expected
    assert 0 not in _live_levels(table)  # every write compacted its level-0 files up
    assert _kinds(table)[-2:] == ["APPEND", "COMPACT"]


def test_deletion_vectors_mark_the_older_rows(warehouse: str, oracle: Callable[..., Any]) -> None:
    """An update whose older row stays in a deeper level marks it deleted in the bucket's
    deletion-vector index file, which the COMPACT snapshot publishes."""
    table = _table(warehouse, **{"deletion-vectors.enabled": "true", "bucket": "1"})
    _write(table, [(k, "old", k) for k in range(50)])
    _write(table, [(3, "new", 3)])
    latest = table.snapshot_manager.latest_snapshot()
    assert latest is not None and latest.commit_kind == CommitKind.COMPACT
    entries = table.index_manifest_file.read(latest.index_manifest)
    assert [e.index_type for e in entries] == [DELETION_VECTORS_INDEX]
    assert sorted(_live_levels(table)) == [4, 5]  # the new row above the old file
    assert (3, "new", 3) in _ours(table) and (3, "old", 3) not in _ours(table)
    assert _java(oracle, table) == _ours(table)
    # A full compaction folds everything into the max level and drops the vectors.
    assert compact_table(table.copy({})) is not None
    assert _live_levels(table) == [5]
    latest = table.snapshot_manager.latest_snapshot()
    assert latest is not None
    assert not latest.index_manifest or not table.index_manifest_file.read(latest.index_manifest)
    assert _java(oracle, table) == _ours(table) and len(_ours(table)) == 50


def test_java_writes_on_top_of_ours_and_we_read_them(
    warehouse: str, oracle: Callable[..., Any]
) -> None:
    table = _table(warehouse, **{"deletion-vectors.enabled": "true"})
    _history(table)
    oracle("write", warehouse, "db.t", "--json-rows", '[{"k": 6, "v": "java", "n": 60, "dt": "a"}]')
    oracle("write", warehouse, "db.t", "--delete", "--json-rows", '[{"k": 7, "dt": "a"}]')
    _write(table, [(0, "ours", 0)])
    expected = _java(oracle, table)
    assert (6, "java", 60) in expected and not any(r[0] == 7 for r in expected)
    assert _ours(table) == expected


def test_write_only_leaves_level_zero_for_a_later_compaction(warehouse: str) -> None:
    """``write-only`` writers do not compact: Paimon's reads skip the level-0 rows of a
    lookup table until a compaction moves them up."""
    table = _table(warehouse, **{"deletion-vectors.enabled": "true", "write-only": "true"})
    _write(table, [(1, "a", 1)])
    assert _kinds(table) == ["APPEND"] and _ours(table) == []
    assert compact_table(table.copy({"write-only": "false"})) is not None
    assert _ours(table) == [(1, "a", 1)]


def test_a_failing_compaction_commits_nothing_and_leaves_no_files(
    warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from paimon_core.operations import compact

    table = _table(warehouse, **{"deletion-vectors.enabled": "true"})
    _write(table, [(1, "a", 1)])
    before = _files(table)
    original = compact._lookup_rewrite
    calls = {"n": 0}

    def failing(*args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        raise OSError("disk full")

    monkeypatch.setattr(compact, "_lookup_rewrite", failing)
    with pytest.raises(OSError, match="disk full"):
        _write(table, [(1, "b", 2), (2, "c", 3)])
    monkeypatch.setattr(compact, "_lookup_rewrite", original)
    assert calls["n"] >= 1
    assert _files(table) == before
    assert _ours(table) == [(1, "a", 1)]


def _files(table: FileStoreTable) -> set[str]:
    from pathlib import Path

    return {str(p) for p in Path(table.path).rglob("*") if p.is_file()}


def test_racing_writers_never_lose_deletion_vectors(warehouse: str) -> None:
    """Two writers from one base mark older rows of one bucket: the second's index file
    would replace the first's and resurrect the rows it deleted, so its compaction is a
    conflict (its data stays committed) and the next write compacts the bucket again."""
    from paimon_core.exceptions import CommitConflict

    table = _table(warehouse, **{"deletion-vectors.enabled": "true", "bucket": "1"})
    _write(table, [(k, "old", k) for k in range(50)])
    fresh = FileSystemCatalog(warehouse).get_table("db.t")
    first, second = fresh.new_write(), fresh.new_write()
    first.write_arrow(pa.table({"k": pa.array([1], pa.int32()), "v": ["a"], "n": [1],
                                "dt": ["a"]}, schema=SCHEMA))  # fmt: skip
    second.write_arrow(pa.table({"k": pa.array([2], pa.int32()), "v": ["b"], "n": [2],
                                 "dt": ["a"]}, schema=SCHEMA))  # fmt: skip
    one, two = first.prepare_commit(), second.prepare_commit()
    fresh.new_commit().commit(one)
    with pytest.raises(CommitConflict, match="Deletion vector conflicts detected"):
        fresh.new_commit().commit(two)
    _write(table, [(3, "c", 3)])  # compacts the level-0 file the lost race left
    rows = _ours(table)
    assert len(rows) == 50 and len({r[0] for r in rows}) == 50
    assert {r[0]: r[1] for r in rows}.items() >= {1: "a", 2: "b", 3: "c", 4: "old"}.items()
    assert 0 not in _live_levels(table)


def _added(table: FileStoreTable, snapshot_id: int) -> list[tuple[str, int]]:
    snapshot = table.snapshot_manager.snapshot(snapshot_id)
    names = []
    for meta in table.manifest_list.read(snapshot.delta_manifest_list):
        for e in table.manifest_file.read(meta.file_name):
            if e.kind == FileKind.ADD:
                names.append((e.file.file_name, e.file.level))
    return names


@pytest.mark.parametrize(
    ("options", "moved_up"),
    [({}, True), ({"merge-engine": "aggregation", "fields.n.aggregate-function": "sum"}, False)],
    ids=["deduplicate", "aggregation"],
)
def test_a_level0_file_moves_up_unchanged_where_java_keeps_it(
    warehouse: str, options: dict[str, str], moved_up: bool
) -> None:
    """``LookupMergeTreeCompactRewriter.upgradeStrategy``: a lone level-0 file goes into the
    highest level unchanged on every engine, and into a lower level unchanged only on
    deduplicate tables without ``sequence.field`` (the merge keeps their records as they
    are); the other engines rewrite it there. Found by the engine model test."""
    table = _table(warehouse, **{"deletion-vectors.enabled": "true", "bucket": "1", **options})
    _write(table, [(k, "a", k) for k in range(10)])
    (written,) = _added(table, 1)
    assert _added(table, 2) == [(written[0], 5)]
    _write(table, [(1, "b", 1)])
    (written,) = _added(table, 3)
    (compacted,) = _added(table, 4)
    assert compacted[1] == 4 and (compacted[0] == written[0]) == moved_up
    assert (1, "b", 2 if options else 1) in _ours(table)


def test_a_lookup_compaction_merges_lone_records_too(warehouse: str) -> None:
    """The lookup wrapper runs every key through the merge function (no reducer): a lone
    ``-D`` of an aggregation table retracts from nothing and becomes an ``+I`` (Java's
    ``AggregateMergeFunction``), a lone blank ``listagg`` value becomes null. Found by the
    engine model test."""
    table = _table(
        warehouse,
        **{"deletion-vectors.enabled": "true", "merge-engine": "aggregation",
           "fields.n.aggregate-function": "sum"},
    )  # fmt: skip
    _write(table, [(1, " ", 3)], DELETE)
    assert _ours(table) == [(1, None, -3)]
    blank = _table(
        warehouse + "/blank",
        **{"deletion-vectors.enabled": "true", "merge-engine": "aggregation", "bucket": "1",
           "fields.v.aggregate-function": "listagg", "compaction.size-ratio": "-100"},
    )  # fmt: skip
    _write(blank, [(1, " ", 1)])  # into the highest level unchanged: not merged
    _write(blank, [(2, " ", 1)])  # rewritten into level 4 (alone: no size ratio)
    assert _ours(blank) == [(1, " ", 1), (2, None, 1)]


def test_a_lookup_finds_a_retraction_below(warehouse: str) -> None:
    """A key's newest record below the output may be a retraction (kept on levels below the
    highest without deletion vectors): Java's lookup files hold it, so it is the record the
    new ones merge with. Found by the engine model test."""
    table = _table(
        warehouse,
        **{"bucket": "1", "merge-engine": "partial-update", "changelog-producer": "lookup",
           "partial-update.remove-record-on-delete": "true",
           "compaction.max-size-amplification-percent": "100000",
           "compaction.size-ratio": "-100"},
    )  # fmt: skip
    _write(table, [(1, "a", 1)])  # level 5
    _write(table, [(1, None, None)], DELETE)  # -D kept on level 4
    _write(table, [(1, "x", None)])  # level 3: merged with the -D, not with the row below it
    assert _live_levels(table) == [3, 4, 5]
    assert _ours(table) == [(1, "x", None)]


def test_a_delete_on_a_first_row_table_fails_its_write(warehouse: str) -> None:
    """First-row refuses retractions unless ``ignore-delete``: the lookup compaction of the
    write passes even a lone ``-D`` to the merge function, which fails, and nothing is
    committed (a reducer would have kept the ``-D`` and the compaction dropped it)."""
    table = _table(warehouse, **{"merge-engine": "first-row"})
    _write(table, [(1, "a", 1)])
    snapshots = _kinds(table)
    with pytest.raises(MergeError, match="You can config 'ignore-delete' to ignore the DELETE"):
        _write(table, [(2, "b", 2)], DELETE)
    assert _kinds(table) == snapshots and _ours(table) == [(1, "a", 1)]


@pytest.mark.parametrize(
    "engine",
    [
        {},
        {"merge-engine": "partial-update"},
        {"merge-engine": "aggregation", "fields.n.aggregate-function": "sum"},
    ],
)
def test_merge_on_read_shows_level_zero_merged_with_the_vectors(
    warehouse: str, engine: dict[str, str]
) -> None:
    """Paimon 2.0's ``deletion-vectors.merge-on-read``: a batch read of a deletion-vector
    table merges the level-0 files into the compacted rows (their vectors applied) instead of
    leaving them out; as a table option or a dynamic one."""
    table = _table(warehouse, **{"deletion-vectors.enabled": "true", **engine})
    _write(table, [(1, "a", 1), (2, "b", 2)])
    _write(table, [(1, "c", 10)])  # compacted up: the older row of key 1 marked in a vector
    _write(table, [(2, None, 20), (3, "d", 3)], write_only=True)  # stays on level 0
    _write(table, [(1, None, 100)], DELETE if not engine else INSERT, write_only=True)
    compacted = _ours(table)
    merged = sorted(
        (r["k"], r["v"], r["n"])
        for r in table.copy({"deletion-vectors.merge-on-read": "true"}).to_arrow().to_pylist()
    )
    expected = {
        "": ([(1, "c", 10), (2, "b", 2)], [(2, None, 20), (3, "d", 3)]),
        "partial-update": ([(1, "c", 10), (2, "b", 2)], [(1, "c", 100), (2, "b", 20), (3, "d", 3)]),
        "aggregation": ([(1, "c", 11), (2, "b", 2)], [(1, "c", 111), (2, "b", 22), (3, "d", 3)]),
    }[engine.get("merge-engine", "")]
    assert (compacted, merged) == expected
    pruned = table.copy({"deletion-vectors.merge-on-read": "true"}).to_arrow(
        predicate=[("n", ">", 50)]
    )  # files are pruned, rows are not filtered: no file a merged row needs may go
    assert sorted((r["k"], r["n"]) for r in pruned.to_pylist() if r["n"] > 50) == [
        (k, n) for k, _, n in expected[1] if n > 50
    ]


def test_merge_on_read_needs_deletion_vectors(warehouse: str) -> None:
    with pytest.raises(SchemaError, match=r"requires deletion-vectors\.enabled to be true"):
        _table(warehouse, **{"deletion-vectors.merge-on-read": "true"})

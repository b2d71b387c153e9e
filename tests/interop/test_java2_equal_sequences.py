"""Records that tie (issue 19, point 5): writers that started from the same snapshot give the
same keys equal sequence numbers, and Paimon leaves the winner to its merge order (the loser
tree's, over the sorted runs in Java's reader order). Ours is Java's: on the same files our
read and Java 2's pick the same winner for every key, and so do our compaction and Java's.

pypaimon 2.1 reads the same keys but keeps the last committed writer's record everywhere
(on the two-writer table: 100 of 200 keys differ from Java), so it is only checked for the
keys it returns."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.operations.compact import compact_table
from paimon_core.table import FileStoreTable
from tests.interop.helpers import json_rows, pypaimon_read, rows
from tests.interop.java2 import Java2

pytestmark = pytest.mark.java2


@dataclass(frozen=True)
class Scenario:
    """A table and the batches that writers opened on one snapshot write into it."""

    columns: list[str]
    types: dict[str, pa.DataType]
    primary_keys: list[str]
    batches: list[list[dict[str, Any]]]
    partition_keys: list[str] = field(default_factory=list)
    options: dict[str, str] = field(default_factory=lambda: {"bucket": "1"})
    before: list[list[dict[str, Any]]] = field(default_factory=list)
    compact_before: bool = False
    java_compact_options: dict[str, str] = field(default_factory=dict)

    @property
    def schema(self) -> pa.Schema:
        return pa.schema(
            [pa.field(c, self.types[c], c not in self.primary_keys) for c in self.columns]
        )


KV = {"k": pa.int32(), "v": pa.string(), "w": pa.string(), "ts": pa.int64(), "dt": pa.string()}


def _kv(keys: list[int], value: str) -> list[dict[str, Any]]:
    return [{"k": k, "v": value} for k in keys]


SCENARIOS: dict[str, Scenario] = {
    # The case: two writers upsert the same 200 keys (a base row in its own section).
    "two-writers": Scenario(
        ["k", "v"], KV, ["k"], [_kv(list(range(200)), "A"), _kv(list(range(200)), "B")],
        before=[_kv([1000], "base")],
    ),
    "three-writers": Scenario(
        ["k", "v"], KV, ["k"], [_kv(list(range(100)), w) for w in "ABC"],
    ),
    # B's keys 50..149 get A's sequence numbers (50 other keys first): overlapping files of
    # other key ranges, ties on half the keys.
    "overlapping-ranges": Scenario(
        ["k", "v"], KV, ["k"],
        [_kv(list(range(150)), "A"), _kv([*range(1000, 1050), *range(50, 200)], "B")],
    ),
    # A compacted run below the two level-0 files: three readers.
    "over-a-compacted-run": Scenario(
        ["k", "v"], KV, ["k"], [_kv(list(range(0, 300, 2)), "A"), _kv(list(range(0, 300, 2)), "B")],
        before=[_kv(list(range(300)), "base")], compact_before=True,
    ),
    "partitioned-two-buckets": Scenario(
        ["k", "v", "dt"], KV, ["k", "dt"],
        [[{"k": k, "v": w, "dt": "xy"[k % 2]} for k in range(120)] for w in "AB"],
        partition_keys=["dt"], options={"bucket": "2"},
    ),
    # Equal sequence fields too (key 7: B's larger ts wins outright).
    "sequence-field": Scenario(
        ["k", "v", "ts"], KV, ["k"],
        [[{"k": k, "v": w, "ts": 2 if (k, w) == (7, "B") else 1} for k in range(60)]
         for w in "AB"],
        options={"bucket": "1", "sequence.field": "ts"},
    ),
    # Partial update: the last non-null v wins; w only A writes.
    "partial-update": Scenario(
        ["k", "v", "w"], KV, ["k"],
        [[{"k": k, "v": "A", "w": "a"} for k in range(60)],
         [{"k": k, "v": "B", "w": None} for k in range(60)]],
        options={"bucket": "1", "merge-engine": "partial-update"},
    ),
    # Reads and compactions through LookupMergeFunction (write-only: no compaction at commit).
    "lookup": Scenario(
        ["k", "v"], KV, ["k"], [_kv(list(range(100)), "A"), _kv(list(range(100)), "B")],
        before=[_kv(list(range(0, 200, 2)), "base")], compact_before=True,
        options={"bucket": "1", "changelog-producer": "lookup", "write-only": "true"},
        java_compact_options={"write-only": "false"},
    ),
}  # fmt: skip


def _write_concurrently(table: FileStoreTable, batches: list[pa.Table]) -> None:
    """One writer per batch, all opened on the same snapshot and prepared before any
    commits; then committed in order."""
    writes = [table.new_write() for _ in batches]
    for write, batch in zip(writes, batches, strict=True):
        write.write_arrow(batch)
    messages = [write.prepare_commit() for write in writes]
    for message in messages:
        assert table.new_commit().commit(message) is not None


def _build(warehouse: str, s: Scenario) -> FileStoreTable:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    table = catalog.create_table(
        "db.t",
        s.schema,
        primary_keys=s.primary_keys,
        partition_keys=s.partition_keys,
        options=s.options,
    )
    for batch in s.before:
        table.write_arrow(pa.Table.from_pylist(batch, schema=s.schema))
    if s.compact_before:
        compact_table(table, full=True)
    _write_concurrently(table, [pa.Table.from_pylist(b, schema=s.schema) for b in s.batches])
    return table


def _earlier_writers_winning(got: list[tuple[Any, ...]], s: Scenario) -> set[str]:
    """The earlier writers whose ``v`` the merged rows kept: not empty where Java's order
    differs from "the last commit wins" (the ties were decided)."""
    index = s.columns.index("v")
    last = s.batches[-1][0]["v"]
    return {r[index] for r in got} & ({b[0]["v"] for b in s.batches} - {last})


def _assert_same_sequences(java2: Java2, s: Scenario) -> None:
    """The writers' files really tie: their sequence ranges start at the same number."""
    files = [f for f in java2.files("db.t") if f["level"] == 0]
    starts = {(str(f["partition"]), f["bucket"], f["minSequenceNumber"]) for f in files}
    assert len(starts) < len(files)


@pytest.mark.parametrize("name", SCENARIOS)
def test_our_read_picks_javas_winners_of_equal_sequences(
    java2: Java2, warehouse: str, name: str
) -> None:
    s = SCENARIOS[name]
    table = _build(warehouse, s)
    _assert_same_sequences(java2, s)
    java = json_rows(java2.read("db.t"), s.columns)
    ours = rows(table.to_arrow(), s.columns)
    assert ours == java
    assert _earlier_writers_winning(ours, s)
    theirs = rows(pypaimon_read(warehouse, "db.t"), s.columns)
    key_columns = [s.columns.index(k) for k in s.primary_keys]
    assert sorted(tuple(r[i] for i in key_columns) for r in theirs) == sorted(
        tuple(r[i] for i in key_columns) for r in ours
    )


@pytest.mark.parametrize(
    "name",
    ["two-writers", "three-writers", "overlapping-ranges", "over-a-compacted-run", "lookup"],
)
@pytest.mark.parametrize("attempt", [1, 2])
def test_our_compaction_picks_javas_winners_of_equal_sequences(
    java2_runtime: Any, tmp_path: Path, name: str, attempt: int
) -> None:
    """Our full compaction and Java's, each on its own copy of the same files, keep the same
    rows (Java's compaction orders level-0 files of equal sequences by creation time, then
    file name, which are random: two attempts)."""
    s = SCENARIOS[name]
    ours_wh, java_wh = str(tmp_path / "ours"), str(tmp_path / "java")
    table = _build(ours_wh, s)
    shutil.copytree(ours_wh, java_wh)
    compact_table(table, full=True)
    java2 = Java2(java2_runtime, java_wh)
    _, java_rows, java_files = java2.run(
        {"op": "compact", "table": "db.t", "full": True, "options": s.java_compact_options},
        {"op": "read", "table": "db.t"},
        {"op": "files", "table": "db.t"},
    )
    assert {f["level"] for f in java_files["files"]} == {5}
    ours = rows(table.to_arrow(), s.columns)
    assert ours == json_rows(java_rows["rows"], s.columns)
    assert _earlier_writers_winning(ours, s)
    # And each side reads the other's compacted files the same.
    assert json_rows(Java2(java2_runtime, ours_wh).read("db.t"), s.columns) == ours


@pytest.mark.parametrize("compact", [False, True], ids=["read", "compacted"])
def test_we_merge_javas_concurrent_writers_as_java(
    java2: Java2, warehouse: str, compact: bool
) -> None:
    """Java's own writers, opened on one snapshot (equal sequence numbers): our read, and
    our compaction of a copy, keep Java's winners."""
    java2.create_table("db.t", [("k", "INT"), ("v", "STRING")], primary_keys=["k"],
                       options={"bucket": "1"})  # fmt: skip
    java2.write("db.t", _kv([500], "base"))
    java2.write_concurrent("db.t", [_kv(list(range(150)), "A"), _kv(list(range(150)), "B")])
    table = FileSystemCatalog(warehouse).get_table("db.t")
    if compact:
        copy = str(Path(warehouse).parent / "copy")
        shutil.copytree(warehouse, copy)
        compact_table(FileSystemCatalog(copy).get_table("db.t"), full=True)
        java2.compact("db.t")
        table = FileSystemCatalog(copy).get_table("db.t")
    java = json_rows(java2.read("db.t"), ["k", "v"])
    ours = rows(table.to_arrow(), ["k", "v"])
    assert ours == java
    assert {v for _, v in ours} == {"A", "B", "base"}

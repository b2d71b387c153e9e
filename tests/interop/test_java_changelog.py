"""Changelog producers against Apache Paimon 0.9 (Java, paimon-oracle): Java reads and
expires the tables our ``input`` writes and ``full-compaction`` compactions produce, and we
read the changelog Java's ``input`` producer writes, whose file layout ours matches."""

from __future__ import annotations

import glob
import json
import os
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.operations.compact import compact_table
from paimon_core.table import FileStoreTable
from tests.interop.helpers import json_rows, rows
from tests.unit.paimon_core.helpers import changelog_entries, changelog_rows
from tests.unit.paimon_core.lifecycle.test_lifecycle_state_machine import find_orphans

pytestmark = pytest.mark.oracle

SCHEMA = pa.schema([pa.field("k", pa.int32(), nullable=False), ("v", pa.string())])
COLS = ["k", "v"]


def _data(ks: list[int], vs: list[str]) -> pa.Table:
    return pa.table({"k": pa.array(ks, pa.int32()), "v": vs}, schema=SCHEMA)


def _our_table(warehouse: str, producer: str) -> FileStoreTable:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    options = {"bucket": "1", "changelog-producer": producer}
    return catalog.create_table("db.t", SCHEMA, primary_keys=["k"], options=options)


def _changelog_files(table: FileStoreTable, snapshot_id: int) -> list[str]:
    snapshot = table.snapshot_manager.snapshot(snapshot_id)
    return [f"{table.path}/bucket-0/{e.file.file_name}" for e in changelog_entries(table, snapshot)]


@pytest.mark.parametrize("producer", ["input", "full-compaction"])
def test_java_reads_and_expires_our_changelog_tables(
    warehouse: str, oracle: Callable[..., Any], producer: str
) -> None:
    table = _our_table(warehouse, producer)
    table.write_arrow(_data([1, 2, 1], ["a", "b", "c"]))
    compact_table(table)
    table.write_arrow(_data([2], ["b"]), row_kinds=pa.array([3], pa.int8()))
    table.write_arrow(_data([3], ["d"]))
    last = compact_table(table)
    assert last is not None
    expected = rows(table.to_arrow(), COLS)
    assert expected == [(1, "c"), (3, "d")]
    assert json_rows(oracle("read", warehouse, "db.t"), COLS) == expected
    with_changelog = [
        s.snapshot_id for s in table.snapshot_manager.snapshots() if s.changelog_manifest_list
    ]
    assert with_changelog == ([1, 3, 4] if producer == "input" else [2, 5])
    first = _changelog_files(table, with_changelog[0])
    kept = _changelog_files(table, with_changelog[-1])
    assert first and kept
    # Java's expiry reads our changelog lists and deletes what the expired snapshots wrote.
    oracle("expire", warehouse, "db.t", "--retain-max", "2")
    assert not any(map(os.path.exists, first))
    assert all(map(os.path.exists, kept))
    assert find_orphans(FileStoreTable.load(table.path), dry_run=True).count == 0
    assert json_rows(oracle("read", warehouse, "db.t"), COLS) == expected


def test_we_read_javas_input_changelog_and_write_its_layout(
    warehouse: str, oracle: Callable[..., Any]
) -> None:
    args = ["--schema", "k INT, v STRING", "--primary-key", "k"]
    args += ["--option", "bucket=1", "--option", "changelog-producer=input"]
    oracle("create-table", warehouse, "db.t", *args)
    rows_in = [{"k": 2, "v": "a"}, {"k": 1, "v": "b"}, {"k": 1, "v": "c"}]
    oracle("write", warehouse, "db.t", "--json-rows", json.dumps(rows_in))
    oracle("write", warehouse, "db.t", "--delete", "--json-rows", json.dumps(rows_in[:1]))
    table = FileSystemCatalog(warehouse).get_table("db.t")
    snapshots = table.snapshot_manager
    # Every input row as Java wrote it: key order, then sequence number.
    assert changelog_rows(table, snapshots.snapshot(1)) == [
        (1, "b", "+I", 1),
        (1, "c", "+I", 2),
        (2, "a", "+I", 0),
    ]
    assert changelog_rows(table, snapshots.snapshot(2)) == [(2, "a", "-D", 3)]
    java_files = set(glob.glob(f"{table.path}/bucket-0/changelog-*"))
    table.write_arrow(_data([4, 1], ["e", "f"]))
    snapshot = snapshots.latest_snapshot()
    assert snapshot is not None and snapshot.changelog_record_count == 2
    assert changelog_rows(table, snapshot) == [(1, "f", "+I", 5), (4, "e", "+I", 4)]
    (ours,) = set(glob.glob(f"{table.path}/bucket-0/changelog-*")) - java_files
    theirs = sorted(java_files)[0]
    # Same KeyValue layout: names, types, nullability (0.9 writes no Parquet field ids).
    assert pq.read_schema(ours).remove_metadata() == pq.read_schema(theirs).remove_metadata()
    assert pq.read_schema(ours).names == ["_KEY_k", "_SEQUENCE_NUMBER", "_VALUE_KIND", "k", "v"]
    expected = [(1, "f"), (4, "e")]
    assert json_rows(oracle("read", warehouse, "db.t"), COLS) == expected
    assert rows(table.to_arrow(), COLS) == expected


def test_we_read_javas_lookup_tables_and_their_changelog(
    warehouse: str, oracle: Callable[..., Any]
) -> None:
    """Java's writes to a ``changelog-producer`` = ``lookup`` aggregation table compact with
    lookups: the record above level 0 holds the key's whole value, and our reads merge as
    Java's ``LookupMergeFunction`` (no double count); its lookup changelog reads as written."""
    oracle(
        "create-table", warehouse, "db.t", "--schema", "k INT, n BIGINT", "--primary-key", "k",
        "--option", "bucket=1", "--option", "changelog-producer=lookup",
        "--option", "merge-engine=aggregation", "--option", "fields.n.aggregate-function=sum",
    )  # fmt: skip
    oracle("write", warehouse, "db.t", "--json-rows",
           json.dumps([{"k": k, "n": 1} for k in range(200)]))  # fmt: skip
    for n in (10, 100, 1000):
        oracle("write", warehouse, "db.t", "--json-rows", json.dumps([{"k": 7, "n": n}]))
    java = {r["k"]: r["n"] for r in oracle("read", warehouse, "db.t")}
    assert java[7] == 1111
    table = FileSystemCatalog(warehouse).get_table("db.t")
    ours = {r["k"]: r["n"] for r in table.to_arrow().to_pylist()}
    assert ours == java
    latest = table.latest_snapshot()
    assert latest is not None
    changes = [row[:3] for row in changelog_rows(table, latest, ("k", "n"))]
    assert changes == [(7, 111, "-U"), (7, 1111, "+U")]

"""Issue 20: ``deletion-vectors.bitmap64`` vectors and ``metadata.stats-dense-store`` stats
written here read in Java 2.0.0 and pypaimon 2.1, theirs read here, each after the other
commits on top."""

from __future__ import annotations

import os
import struct

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.operations.deletion_vectors import snapshot_dv_entries
from paimon_core.table import FileStoreTable
from tests.interop.helpers import json_rows, pypaimon_read, pypaimon_write, rows
from tests.interop.java2 import Java2

SCHEMA = pa.schema([pa.field("id", pa.int64(), False), ("v", pa.string()), ("n", pa.int64())])
COLS = ["id", "v", "n"]
FIELDS = [("id", "BIGINT NOT NULL"), ("v", "STRING"), ("n", "BIGINT")]
DV = {"bucket": "1", "deletion-vectors.enabled": "true", "deletion-vectors.bitmap64": "true"}
MAGIC64 = struct.pack("<i", 1681511377)


def _data(ids: list[int], tag: str) -> pa.Table:
    return pa.table({"id": ids, "v": [f"{tag}{i}" for i in ids], "n": ids}, schema=SCHEMA)


def _vector_frames(table: FileStoreTable) -> list[bytes]:
    """The magic of every vector in the latest snapshot's deletion-vector index files."""
    out = []
    for entry in snapshot_dv_entries(table, table.latest_snapshot()):
        with open(os.path.join(table.path, "index", entry.file_name), "rb") as f:
            data = f.read()
        for meta in entry.dv_ranges or ():
            out.append(data[meta.offset + 4 : meta.offset + 8])
    return out


def _dv_table(warehouse: str) -> FileStoreTable:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    return catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options=DV)


def test_pypaimon_refuses_bitmap64_vectors_and_we_read_its_commit_on_top(warehouse: str) -> None:
    """pypaimon 2.1 reads 32-bit vectors only: it fails on ours (never misreads them); its
    commit on top (no vectors of its own) reads here."""
    table = _dv_table(warehouse)
    table.write_arrow(_data([1, 2, 3], "a"))
    table.write_arrow(_data([2], "b"))
    frames = _vector_frames(table)
    assert frames and all(f == MAGIC64 for f in frames)
    with pytest.raises(RuntimeError, match="Invalid magic number"):
        pypaimon_read(warehouse, "db.t")
    pypaimon_write(warehouse, "db.t", _data([3], "p"))
    table.write_arrow(_data([1], "o"))
    expected = [(1, "o1", 1), (2, "b2", 2), (3, "p3", 3)]
    assert rows(table.to_arrow(), COLS) == expected
    assert all(f == MAGIC64 for f in _vector_frames(table))


@pytest.mark.java2
def test_java2_and_we_write_bitmap64_vectors_on_each_others(java2: Java2, warehouse: str) -> None:
    table = _dv_table(warehouse)
    table.write_arrow(_data([1, 2, 3], "a"))
    table.write_arrow(_data([2], "b"))
    read, _, _ = java2.run(
        {"op": "read", "table": "db.t"},
        {"op": "write", "table": "db.t", "rows": [{"id": 3, "v": "j3", "n": 3}]},
        {"op": "compact", "table": "db.t", "full": False},
    )
    assert json_rows(read["rows"], COLS) == [(1, "a1", 1), (2, "b2", 2), (3, "a3", 3)]
    assert all(f == MAGIC64 for f in _vector_frames(table))
    assert rows(table.to_arrow(), COLS) == [(1, "a1", 1), (2, "b2", 2), (3, "j3", 3)]
    table.write_arrow(_data([1], "o"))
    assert json_rows(java2.read("db.t"), COLS) == [(1, "o1", 1), (2, "b2", 2), (3, "j3", 3)]


# ------------------------------------------------------------------- stats-dense-store

STATS = {"metadata.stats-mode": "none", "fields.n.stats-mode": "full"}


@pytest.mark.java2
@pytest.mark.parametrize("dense", ["true", "false"])
def test_dense_and_sparse_value_stats_prune_alike_in_java_and_here(
    java2: Java2, warehouse: str, dense: str
) -> None:
    """Only ``n`` has stats: dense files list it in ``_VALUE_STATS_COLS``, sparse ones store
    every column (nulls for the rest); a filter on ``n`` reads the same everywhere."""
    options = {"metadata.stats-dense-store": dense, **STATS}
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    table = catalog.create_table("db.t", SCHEMA, options=options)
    table.write_arrow(_data([1, 2], "a"))
    java2.write("db.t", [{"id": 7, "v": "j7", "n": 70}])
    table = catalog.get_table("db.t")
    files = sorted(
        (f for s in table.new_scan().plan() for f in s.files), key=lambda f: f.min_sequence_number
    )
    ours, theirs = files[0], next(f for f in files if f.row_count == 1)
    expected_cols = ("n",) if dense == "true" else None
    assert ours.value_stats_cols == theirs.value_stats_cols == expected_cols
    pruned = table.new_scan().plan(predicate=[("n", ">", 10)])
    assert [f.row_count for s in pruned for f in s.files] == [1]
    got = java2.read("db.t")
    assert json_rows(got, COLS) == [(1, "a1", 1), (2, "a2", 2), (7, "j7", 70)]
    assert rows(pypaimon_read(warehouse, "db.t"), COLS) == json_rows(got, COLS)

"""``data-file.thin-mode`` (issue 20): primary-key files without ``_KEY_<k>``, written here,
by Java 2.0.0 and read by each other and pypaimon 2.1, each after the other commits (and
compacts) on top."""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.lifecycle.check import check_table
from paimon_core.operations.compact import compact_table
from paimon_core.table import FileStoreTable
from tests.interop.helpers import json_rows, pypaimon_read, pypaimon_write, rows
from tests.interop.java2 import Java2

SCHEMA = pa.schema(
    [pa.field("id", pa.int64(), False), ("v", pa.string()), pa.field("dt", pa.string(), False)]
)
COLS = ["id", "v", "dt"]
OPTIONS = {"bucket": "2", "data-file.thin-mode": "true"}


def _data(ids: list[int], tag: str, dt: str = "x") -> pa.Table:
    return pa.table(
        {"id": ids, "v": [f"{tag}{i}" for i in ids], "dt": [dt] * len(ids)}, schema=SCHEMA
    )


def _key_columns(table: FileStoreTable) -> set[str]:
    """``_KEY_`` columns found in any data file of the table."""
    found = set()
    for d, _, names in os.walk(table.path):
        for n in names:
            if n.startswith("data-") and n.endswith(".parquet"):
                cols = pq.ParquetFile(os.path.join(d, n)).schema_arrow.names
                found |= {c for c in cols if c.startswith("_KEY_")}
    return found


def _ours(warehouse: str) -> FileStoreTable:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    return catalog.create_table(
        "db.t", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"], options=OPTIONS
    )


def test_pypaimon_reads_our_thin_files_and_we_read_its_commit_on_top(warehouse: str) -> None:
    table = _ours(warehouse)
    table.write_arrow(_data([1, 2, 3], "a"))
    table.write_arrow(_data([2], "b"))
    assert _key_columns(table) == set()
    expected = [(1, "a1", "x"), (2, "b2", "x"), (3, "a3", "x")]
    assert rows(pypaimon_read(warehouse, "db.t"), COLS) == expected
    pypaimon_write(warehouse, "db.t", _data([3, 4], "p"))
    compact_table(table)
    expected = [(1, "a1", "x"), (2, "b2", "x"), (3, "p3", "x"), (4, "p4", "x")]
    assert rows(table.to_arrow(), COLS) == rows(pypaimon_read(warehouse, "db.t"), COLS) == expected
    assert check_table(table, deep=True) == []


@pytest.mark.java2
def test_java2_and_we_write_and_compact_thin_files_on_each_others(
    java2: Java2, warehouse: str
) -> None:
    table = _ours(warehouse)
    table.write_arrow(_data([1, 2, 3], "a"))
    table.write_arrow(_data([2], "b", "y"))
    read, _, _ = java2.run(
        {"op": "read", "table": "db.t"},
        {"op": "write", "table": "db.t", "rows": [{"id": 3, "v": "j3", "dt": "x"}]},
        {"op": "compact", "table": "db.t", "full": True},
    )
    assert json_rows(read["rows"], COLS) == [
        (1, "a1", "x"),
        (2, "a2", "x"),
        (2, "b2", "y"),
        (3, "a3", "x"),
    ]
    assert _key_columns(table) == set()  # Java's files (and compaction) thin too
    expected = [(1, "a1", "x"), (2, "a2", "x"), (2, "b2", "y"), (3, "j3", "x")]
    assert rows(table.to_arrow(), COLS) == expected
    table.write_arrow(_data([1], "o"))
    compact_table(table)
    assert check_table(table, deep=True) == []
    expected = [(1, "o1", "x"), (2, "a2", "x"), (2, "b2", "y"), (3, "j3", "x")]
    assert json_rows(java2.read("db.t"), COLS) == expected
    assert _key_columns(table) == set()

"""FileStoreTable: a used table travels by pickle (to Spark executors, worker processes)."""

from __future__ import annotations

import pickle

import pyarrow as pa

from paimon_core.catalog import FileSystemCatalog

SCHEMA = pa.schema([pa.field("k", pa.int64(), nullable=False), ("v", pa.string())])


def test_a_used_table_pickles_and_reads_the_same_rows(warehouse: str) -> None:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    table = catalog.create_table("db.t", SCHEMA, primary_keys=["k"], options={"bucket": "2"}).copy(
        {"scan.snapshot-id": "2"}
    )
    table.write_arrow(pa.table({"k": [1, 2], "v": ["a", "b"]}, schema=SCHEMA))
    table.write_arrow(pa.table({"k": [2, 3], "v": ["c", "d"]}, schema=SCHEMA))
    rows = table.to_arrow().sort_by("k").to_pylist()
    assert "snapshot_manager" in vars(table)  # its lock made pickling fail
    copy = pickle.loads(pickle.dumps(table))
    assert "snapshot_manager" not in vars(copy)
    assert copy.dynamic_options == {"scan.snapshot-id": "2"} and copy.schema == table.schema
    assert copy.to_arrow().sort_by("k").to_pylist() == rows
    assert copy.write_arrow(pa.table({"k": [4], "v": ["e"]}, schema=SCHEMA)) == 3
    assert table.latest_snapshot().snapshot_id == 3

"""Postpone-bucket tables (``bucket`` = -2, issue 20): our batch writes go straight into real
buckets (Paimon-Spark's ``postpone.batch-write-fixed-bucket``), Java 2.0.0's and pypaimon
2.1's writes wait in ``bucket-postpone`` unread until a compaction here moves their rows into
the real buckets; each side reads what the other left, after the other commits on top."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import UnsupportedFeature
from paimon_core.operations.compact import compact_table, postpone_writer
from paimon_core.table import FileStoreTable
from tests.interop.helpers import json_rows, pypaimon_commit, pypaimon_read, rows
from tests.interop.java2 import Java2

SCHEMA = pa.schema(
    [pa.field("k", pa.int64(), False), ("v", pa.string()), pa.field("dt", pa.string(), False)]
)
COLS = ["k", "v", "dt"]
FIELDS = [("k", "BIGINT NOT NULL"), ("v", "STRING"), ("dt", "STRING NOT NULL")]
OPTIONS = {"bucket": "-2", "postpone.default-bucket-num": "2"}


def _data(ks: list[int], tag: str, dt: str = "x") -> pa.Table:
    return pa.table({"k": ks, "v": [f"{tag}{k}" for k in ks], "dt": [dt] * len(ks)}, schema=SCHEMA)


def _entries(table: FileStoreTable) -> list[tuple[Any, ...]]:
    """(partition values, bucket, total buckets, level) of every live file, sorted."""
    table = FileSystemCatalog(os.path.dirname(os.path.dirname(table.path))).get_table("db.t")
    scan = table.new_scan()
    snapshot = table.latest_snapshot()
    assert snapshot is not None
    return sorted(
        (scan.partition_values(e.partition), e.bucket, e.total_buckets, e.file.level)
        for e in scan.read_entries(snapshot)
    )


def _ours(warehouse: str, **options: str) -> FileStoreTable:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    return catalog.create_table(
        "db.t",
        SCHEMA,
        primary_keys=["k", "dt"],
        partition_keys=["dt"],
        options={**OPTIONS, **options},
    )


def test_writer_prefix_of_postpone_files() -> None:
    name = "data--u-91cc-s-20-w-d5bf-0.avro"
    assert postpone_writer(name) == "data--u-91cc-s-20-w-"
    assert postpone_writer("data-x-0.parquet") == "data-x-0.parquet"


def test_our_writes_go_to_real_buckets_and_pypaimons_postpone_rows_compact_in(
    warehouse: str,
) -> None:
    table = _ours(warehouse)
    table.write_arrow(_data([1, 2, 3, 4], "a"))
    table.write_arrow(_data([2], "b"))
    assert {(e[1], e[2], e[3]) for e in _entries(table)} <= {(0, 2, 0), (1, 2, 0)}
    expected = [(1, "a1", "x"), (2, "b2", "x"), (3, "a3", "x"), (4, "a4", "x")]
    assert rows(table.to_arrow(), COLS) == rows(pypaimon_read(warehouse, "db.t"), COLS) == expected
    # pypaimon's plain batch write waits in bucket-postpone: no read sees it yet.
    from pypaimon import CatalogFactory

    pypaimon_commit(
        CatalogFactory.create({"warehouse": warehouse}).get_table("db.t"),
        pa.concat_tables([_data([3, 5], "p"), _data([9], "p", "y")]),
    )
    assert any(e[1] == -2 for e in _entries(table))
    assert rows(table.to_arrow(), COLS) == rows(pypaimon_read(warehouse, "db.t"), COLS) == expected
    first = compact_table(table)
    assert first is not None
    entries = _entries(table)
    assert all(e[1] >= 0 and e[3] == 5 for e in entries)  # moved in, then compacted
    assert {e[2] for e in entries if e[0] == ("x",)} == {2}  # the partition's count kept
    assert {e[2] for e in entries if e[0] == ("y",)} == {2}  # a new one: the default
    expected = [(1, "a1", "x"), (2, "b2", "x"), (3, "p3", "x"), (4, "a4", "x"), (5, "p5", "x"), (9, "p9", "y")]  # fmt: skip
    assert rows(table.to_arrow(), COLS) == rows(pypaimon_read(warehouse, "db.t"), COLS) == expected
    assert compact_table(table) is None  # nothing left to do


def test_refusals(warehouse: str) -> None:
    table = _ours(warehouse, **{"postpone.batch-write-fixed-bucket": "false"})
    with pytest.raises(UnsupportedFeature, match=r"postpone\.batch-write-fixed-bucket"):
        table.write_arrow(_data([1], "a"))
    assert table.latest_snapshot() is None


@pytest.mark.java2
def test_java2_postpone_rows_compact_here_and_each_side_reads_the_others(
    java2: Java2, warehouse: str
) -> None:
    java2.create_table(
        "db.t", FIELDS, primary_keys=["k", "dt"], partition_keys=["dt"],
        options={"bucket": "-2", "postpone.default-bucket-num": "3"},
    )  # fmt: skip
    java2.write("db.t", [{"k": 1, "v": "j1", "dt": "x"}, {"k": 2, "v": "j2", "dt": "x"}])
    java2.write("db.t", [{"k": 1, "v": "J1", "dt": "x"}, {"k": 2, "dt": "x", "_kind": "-D"}])
    table = FileSystemCatalog(warehouse).get_table("db.t")
    assert {e[1] for e in _entries(table)} == {-2}
    assert table.to_arrow().num_rows == 0 and java2.read("db.t") == []
    compact_table(table)
    assert {(e[1], e[2]) for e in _entries(table)} <= {(b, 3) for b in range(3)}
    assert json_rows(java2.read("db.t"), COLS) == rows(table.to_arrow(), COLS) == [(1, "J1", "x")]
    table.write_arrow(_data([1, 4], "o"))  # into the partition's 3 buckets
    assert {e[2] for e in _entries(table)} == {3}
    java2.write("db.t", [{"k": 4, "v": "j4", "dt": "x"}, {"k": 5, "v": "j5", "dt": "y"}])
    assert json_rows(java2.read("db.t"), COLS) == [(1, "o1", "x"), (4, "o4", "x")]
    compact_table(table)
    expected = [(1, "o1", "x"), (4, "j4", "x"), (5, "j5", "y")]
    assert rows(table.to_arrow(), COLS) == json_rows(java2.read("db.t"), COLS) == expected


# ------------------------------------------------------------------------------ SQL


@pytest.fixture
def session(spark: Any, warehouse: str) -> Iterator[Any]:
    from sql_ext.session import PaimonSession

    yield PaimonSession(spark, warehouse=warehouse)


@pytest.mark.spark
def test_sql_insert_and_compact_procedure(session: Any, warehouse: str) -> None:
    session.sql("CREATE DATABASE paimon.db")
    session.sql(
        "CREATE TABLE paimon.db.t (k BIGINT NOT NULL, v STRING, dt STRING NOT NULL) "
        "PARTITIONED BY (dt) TBLPROPERTIES ('primary-key' = 'k,dt', 'bucket' = '-2', "
        "'postpone.default-bucket-num' = '2')"
    )
    session.sql("INSERT INTO paimon.db.t VALUES (1, 'a', 'x'), (2, 'b', 'x'), (3, 'c', 'y')")
    session.sql("INSERT INTO paimon.db.t VALUES (2, 'B', 'x')")
    from pypaimon import CatalogFactory

    pypaimon_commit(
        CatalogFactory.create({"warehouse": warehouse}).get_table("db.t"), _data([3], "p", "y")
    )
    select = "SELECT k, v, dt FROM paimon.db.t"
    expected = [(1, "a", "x"), (2, "B", "x"), (3, "c", "y")]
    assert sorted(tuple(r) for r in session.sql(select).collect()) == expected
    session.sql("CALL sys.compact(table => 'db.t')").collect()
    table = FileSystemCatalog(warehouse).get_table("db.t")
    assert all(e[1] >= 0 and e[2] == 2 for e in _entries(table))
    expected = [(1, "a", "x"), (2, "B", "x"), (3, "p3", "y")]
    assert sorted(tuple(r) for r in session.sql(select).collect()) == expected
    assert rows(pypaimon_read(warehouse, "db.t"), COLS) == expected

"""Both directions with Apache Paimon's Java implementation (0.9) through paimon-oracle."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from tests.interop.helpers import SQL_MADE_READS, json_rows, rows, sql_made_table

pytestmark = pytest.mark.oracle

SCHEMA = pa.schema([("k", pa.int32()), ("v", pa.string()), ("dt", pa.string())])
PK_SCHEMA = pa.schema(
    [
        pa.field("k", pa.int32(), nullable=False),
        ("v", pa.string()),
        pa.field("dt", pa.string(), nullable=False),
    ]
)
COLS = ["k", "v", "dt"]


def _table(warehouse: str, name: str, schema: pa.Schema, **kw: Any) -> Any:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    return catalog.create_table(f"db.{name}", schema, **kw)


def _batch(schema: pa.Schema, ks: list[int], vs: list[str | None], dts: list[str]) -> pa.Table:
    return pa.table({"k": ks, "v": vs, "dt": dts}, schema=schema)


def test_java_reads_our_append_table(warehouse: str, oracle: Callable[..., Any]) -> None:
    table = _table(warehouse, "app", SCHEMA, partition_keys=["dt"])
    b1 = _batch(SCHEMA, [1, 2, 3], ["a", "b", None], ["2024-01-01", "2024-01-01", "2024-01-02"])
    b2 = _batch(SCHEMA, [1, 4], ["a2", "d"], ["2024-01-01", "2024-01-03"])
    table.write_arrow(b1)
    table.write_arrow(b2)
    got = oracle("read", warehouse, "db.app")
    assert json_rows(got, COLS) == rows(pa.concat_tables([b1, b2]))
    assert json_rows(oracle("read", warehouse, "db.app", "--snapshot", 1), COLS) == rows(b1)
    snaps = oracle("snapshots", warehouse, "db.app")
    assert [(s["id"], s["totalRecordCount"], s["deltaRecordCount"]) for s in snaps] == [
        (1, 3, 3),
        (2, 5, 2),
    ]


def test_java_reads_our_pk_table_and_upserts_without_duplicates(
    warehouse: str, oracle: Callable[..., Any]
) -> None:
    table = _table(
        warehouse,
        "pk",
        PK_SCHEMA,
        partition_keys=["dt"],
        primary_keys=["k", "dt"],
        options={"bucket": "4"},
    )
    keys = list(range(20))
    table.write_arrow(_batch(PK_SCHEMA, keys, [f"v{k}" for k in keys], ["d1"] * 20))
    table.write_arrow(_batch(PK_SCHEMA, [3, 7], ["x3", "x7"], ["d1", "d1"]))
    expected = {k: f"v{k}" for k in keys} | {3: "x3", 7: "x7"}
    got = oracle("read", warehouse, "db.pk")
    assert sorted((r["k"], r["v"]) for r in got) == sorted(expected.items())
    # Java upserts the keys we wrote: each must land in the bucket we chose, or it duplicates.
    upserts = [{"k": k, "v": f"j{k}", "dt": "d1"} for k in keys]
    oracle("write", warehouse, "db.pk", "--json-rows", json.dumps(upserts))
    got = oracle("read", warehouse, "db.pk")
    assert sorted((r["k"], r["v"]) for r in got) == [(k, f"j{k}") for k in keys]
    ours = FileSystemCatalog(warehouse).get_table("db.pk").to_arrow()
    assert rows(ours, ["k", "v"]) == [(k, f"j{k}") for k in keys]
    # And Java's files went to the very buckets ours did.
    by_bucket: dict[int, set[str]] = {}
    for f in oracle("files", warehouse, "db.pk"):
        by_bucket.setdefault(f["bucket"], set()).add(f["file"])
    assert len(by_bucket) > 1


def test_we_read_java_append_table(warehouse: str, oracle: Callable[..., Any]) -> None:
    oracle(
        "create-table",
        warehouse,
        "db.japp",
        "--schema",
        "k INT, v STRING, dt STRING",
        "--partition",
        "dt",
    )
    r1 = [{"k": 1, "v": "a", "dt": "2024-01-01"}, {"k": 2, "v": None, "dt": "2024-01-02"}]
    r2 = [{"k": 3, "v": "c", "dt": "2024-01-01"}]
    oracle("write", warehouse, "db.japp", "--json-rows", json.dumps(r1))
    oracle("write", warehouse, "db.japp", "--json-rows", json.dumps(r2))
    table = FileSystemCatalog(warehouse).get_table("db.japp")
    assert rows(table.to_arrow(), COLS) == json_rows(r1 + r2, COLS)
    assert rows(table.copy({"scan.snapshot-id": "1"}).to_arrow(), COLS) == json_rows(r1, COLS)


@pytest.mark.parametrize("bucket_option", [["--option", "bucket=2"], []], ids=["fixed", "dynamic"])
def test_we_read_java_pk_tables_with_deletes(
    warehouse: str, oracle: Callable[..., Any], bucket_option: list[str]
) -> None:
    oracle(
        "create-table",
        warehouse,
        "db.jpk",
        "--schema",
        "k INT, v STRING, dt STRING",
        "--primary-key",
        "k,dt",
        "--partition",
        "dt",
        *bucket_option,
    )
    oracle(
        "write",
        warehouse,
        "db.jpk",
        "--json-rows",
        json.dumps([{"k": k, "v": f"a{k}", "dt": "d1" if k % 2 else "d2"} for k in range(10)]),
    )
    oracle(
        "write",
        warehouse,
        "db.jpk",
        "--json-rows",
        json.dumps([{"k": 1, "v": "b1", "dt": "d1"}, {"k": 4, "v": "b4", "dt": "d2"}]),
    )
    oracle(
        "write",
        warehouse,
        "db.jpk",
        "--delete",
        "--json-rows",
        json.dumps([{"k": 3, "dt": "d1"}, {"k": 6, "dt": "d2"}]),
    )
    expected = oracle("read", warehouse, "db.jpk")
    assert len(expected) == 8
    table = FileSystemCatalog(warehouse).get_table("db.jpk")
    assert rows(table.to_arrow(), COLS) == json_rows(expected, COLS)
    if not bucket_option:
        assert table.latest_snapshot().index_manifest
    # We also write into Java's table and Java sees exactly one row per key.
    table.write_arrow(_batch(PK_SCHEMA, [1, 8, 11], ["c1", "c8", "c11"], ["d1", "d2", "d1"]))
    after = oracle("read", warehouse, "db.jpk")
    keys = [(r["k"], r["dt"]) for r in after]
    assert len(keys) == len(set(keys)) == 9
    assert {(r["k"], r["v"]) for r in after} >= {(1, "c1"), (8, "c8"), (11, "c11")}
    assert rows(table.to_arrow(), COLS) == json_rows(after, COLS)


def test_java_reads_a_table_made_through_sql(
    spark: Any, warehouse: str, oracle: Callable[..., Any]
) -> None:
    """CREATE TABLE / INSERT / CALL / tag DDL / expiry through the SQL session, then Java reads."""
    ours = sql_made_table(spark, warehouse)

    def java(*args: str) -> list[tuple[Any, ...]]:
        return json_rows(oracle("read", warehouse, "db.orders", *args), ["id", "amount", "dt"])

    assert oracle("tags", warehouse, "db.orders") == {"first": 1, "second": 2}
    assert java("--tag", "first") == SQL_MADE_READS["first"]
    assert java("--tag", "second") == SQL_MADE_READS["second"]
    assert java() == SQL_MADE_READS[None] == ours


def test_we_write_to_javas_dynamic_bucket_table_through_its_index(
    warehouse: str, oracle: Callable[..., Any]
) -> None:
    """Java's HASH index files and data files (string keys) pass the check our writer makes
    of a partition's index before it writes, and we place Java's keys in Java's buckets."""
    oracle(
        "create-table",
        warehouse,
        "db.jdyn",
        "--schema",
        "s STRING NOT NULL, v STRING, dt STRING NOT NULL",
        "--primary-key",
        "s,dt",
        "--partition",
        "dt",
        "--option",
        "bucket=-1",
        "--option",
        "dynamic-bucket.target-row-num=7",
    )

    def java_write(keys: range, value: str) -> None:
        batch = [{"s": f"key-{k:05d}", "v": value, "dt": f"p{k % 2}"} for k in keys]
        oracle("write", warehouse, "db.jdyn", "--json-rows", json.dumps(batch))

    def ours(keys: range, value: str) -> pa.Table:
        return pa.table(
            {
                "s": [f"key-{k:05d}" for k in keys],
                "v": [value] * len(keys),
                "dt": [f"p{k % 2}" for k in keys],
            }
        )

    java_write(range(40), "j")
    java_write(range(30, 50), "j2")
    table = FileSystemCatalog(warehouse).get_table("db.jdyn")
    table.write_arrow(ours(range(20, 60), "o"))
    java_write(range(55, 70), "j3")
    FileSystemCatalog(warehouse).get_table("db.jdyn").write_arrow(ours(range(5), "o2"))
    want = {
        f"key-{k:05d}": "o2" if k < 5 else "j3" if k >= 55 else "o" if k >= 20 else "j"
        for k in range(70)
    }
    for got in (
        FileSystemCatalog(warehouse).get_table("db.jdyn").to_arrow().to_pylist(),
        oracle("read", warehouse, "db.jdyn"),
    ):
        assert len(got) == 70
        assert {r["s"]: r["v"] for r in got} == want


def test_java_reads_and_upserts_our_dynamic_bucket_table(
    warehouse: str, oracle: Callable[..., Any]
) -> None:
    """Java must find each of our keys in the bucket our HASH index says, or it duplicates."""
    table = _table(
        warehouse,
        "dyn",
        PK_SCHEMA,
        partition_keys=["dt"],
        primary_keys=["k", "dt"],
        options={"bucket": "-1", "dynamic-bucket.target-row-num": "10"},
    )
    keys = list(range(60))
    dts = [f"p{k % 2}" for k in keys]
    table.write_arrow(_batch(PK_SCHEMA, keys, ["a"] * 60, dts))
    table.write_arrow(_batch(PK_SCHEMA, keys[::3], ["b"] * 20, dts[::3]))
    expected = {(k, dt): "b" if k % 3 == 0 else "a" for k, dt in zip(keys, dts)}
    buckets = {
        (json.dumps(f["partition"]), f["bucket"]) for f in oracle("files", warehouse, "db.dyn")
    }
    assert len(buckets) >= 6  # 30 keys per partition, 10 per bucket
    got = oracle("read", warehouse, "db.dyn")
    assert sorted(((r["k"], r["dt"]), r["v"]) for r in got) == sorted(expected.items())
    upserts = [{"k": k, "v": f"j{k}", "dt": dt} for k, dt in zip(keys, dts)]
    oracle("write", warehouse, "db.dyn", "--json-rows", json.dumps(upserts))
    want = sorted((k, f"j{k}", dt) for k, dt in zip(keys, dts))
    assert json_rows(oracle("read", warehouse, "db.dyn"), COLS) == want
    ours = FileSystemCatalog(warehouse).get_table("db.dyn").to_arrow()
    assert rows(ours, COLS) == want
    # Java's index files and data files pass our check of the index when we write again
    ours_table = FileSystemCatalog(warehouse).get_table("db.dyn")
    ours_table.write_arrow(_batch(PK_SCHEMA, keys, ["c"] * 60, dts))
    assert rows(ours_table.to_arrow(), COLS) == sorted((k, "c", dt) for k, dt in zip(keys, dts))

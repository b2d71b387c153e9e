"""FLOAT/DOUBLE keys and stats with NaN, infinities and signed zeros, against Java (0.9).

Paimon 0.9's generated key comparator uses ``<``/``>`` on floats, so Java itself sees a NaN
key equal to any key and -0.0 equal to 0.0 (later Paimon compares with ``Double.compare``,
as this project does). Java's own writes and reads only stay right while no such pair meets
in one bucket, so the bucket counts here keep NaN alone in its bucket and the zeros apart.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.format.binary_row import deserialize_row
from paimon_core.format.manifest import DataFileMeta
from paimon_core.format.types import to_arrow_schema
from paimon_core.operations.bucket import bucket_for_hash, row_hash
from paimon_core.table import FileStoreTable

pytestmark = pytest.mark.oracle

KEYS = ["NaN", "-Infinity", "Infinity", "-0.0", "0.0", "1.5"]
# (SQL type, Arrow type, bucket count that keeps Java 0.9's comparator out of trouble)
CASES = [("DOUBLE", pa.float64(), 7), ("FLOAT", pa.float32(), 9)]


def _key(value: Any) -> str:
    """One spelling for a float from Python or from the oracle's JSON ("NaN", -0.0, ...)."""
    return str(float(value))


def _kv(objs: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return sorted((_key(o["k"]), o["v"]) for o in objs)


def _catalog(warehouse: str) -> FileSystemCatalog:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    return catalog


def _ours(warehouse: str, name: str = "t") -> list[tuple[str, str]]:
    return _kv(_catalog(warehouse).get_table(f"db.{name}").to_arrow().to_pylist())


def _batch(arrow_type: pa.DataType, tag: str) -> pa.Table:
    schema = pa.schema([pa.field("k", arrow_type, False), ("v", pa.string())])
    return pa.table({"k": [float(k) for k in KEYS], "v": [f"{tag}{k}" for k in KEYS]}, schema)


def _java_rows(tag: str) -> str:
    return json.dumps([{"k": k, "v": f"{tag}{k}"} for k in KEYS])


def _expected(tag: str) -> list[tuple[str, str]]:
    return sorted((_key(k), f"{tag}{k}") for k in KEYS)


def _assert_safe_for_java_09(table: FileStoreTable, buckets: int) -> None:
    key_type = table.schema.field("k").type
    placed = [bucket_for_hash(row_hash([float(k)], [key_type]), buckets) for k in KEYS]
    assert placed.count(placed[0]) == 1, "NaN must be alone in its bucket for Java 0.9"
    assert placed[3] != placed[4], "-0.0 and 0.0 must be apart for Java 0.9"


def _java_buckets(oracle: Callable[..., Any], warehouse: str, snapshot: int) -> set[int]:
    return {f["bucket"] for f in oracle("files", warehouse, "db.t", "--snapshot", snapshot)}


@pytest.mark.parametrize(("sql_type", "arrow_type", "buckets"), CASES, ids=["double", "float"])
def test_java_upserts_the_float_keys_we_wrote(
    warehouse: str,
    oracle: Callable[..., Any],
    sql_type: str,
    arrow_type: pa.DataType,
    buckets: int,
) -> None:
    schema = pa.schema([pa.field("k", arrow_type, False), ("v", pa.string())])
    table = _catalog(warehouse).create_table(
        "db.t", schema, primary_keys=["k"], options={"bucket": str(buckets)}
    )
    _assert_safe_for_java_09(table, buckets)
    table.write_arrow(_batch(arrow_type, "a"))
    table.write_arrow(_batch(arrow_type, "b"))
    assert _ours(warehouse) == _expected("b")
    assert _kv(oracle("read", warehouse, "db.t")) == _expected("b")
    oracle("write", warehouse, "db.t", "--json-rows", _java_rows("j"))
    assert _ours(warehouse) == _expected("j")
    assert _kv(oracle("read", warehouse, "db.t")) == _expected("j")
    # Every key went to the bucket we chose for it.
    assert _java_buckets(oracle, warehouse, 3) == _java_buckets(oracle, warehouse, 1)


@pytest.mark.parametrize(("sql_type", "arrow_type", "buckets"), CASES, ids=["double", "float"])
def test_we_upsert_the_float_keys_java_wrote(
    warehouse: str,
    oracle: Callable[..., Any],
    sql_type: str,
    arrow_type: pa.DataType,
    buckets: int,
) -> None:
    oracle(
        "create-table",
        warehouse,
        "db.t",
        "--schema",
        f"k {sql_type}, v STRING",
        "--primary-key",
        "k",
        "--option",
        f"bucket={buckets}",
    )
    oracle("write", warehouse, "db.t", "--json-rows", _java_rows("j"))
    assert _ours(warehouse) == _expected("j")
    table = _catalog(warehouse).get_table("db.t")
    table.write_arrow(_batch(arrow_type, "a"))
    table.write_arrow(_batch(arrow_type, "b"))
    assert _ours(warehouse) == _expected("b")
    assert _kv(oracle("read", warehouse, "db.t")) == _expected("b")
    assert _java_buckets(oracle, warehouse, 2) == _java_buckets(oracle, warehouse, 1)


def test_java_upserts_nan_keys_of_our_dynamic_bucket_table(
    warehouse: str, oracle: Callable[..., Any]
) -> None:
    # One bucket holds every key here, so each key gets its own id: Java 0.9 compares k only
    # between rows of one id, where its comparator is right.
    schema = pa.schema(
        [pa.field("id", pa.int32(), False), pa.field("k", pa.float64(), False), ("v", pa.string())]
    )
    table = _catalog(warehouse).create_table("db.t", schema, primary_keys=["id", "k"])
    ids = list(range(len(KEYS)))
    data = {"id": ids, "k": [float(k) for k in KEYS]}
    table.write_arrow(pa.table({**data, "v": ["a"] * len(ids)}, schema))
    table.write_arrow(pa.table({**data, "v": ["b"] * len(ids)}, schema))
    upserts = [{"id": i, "k": k, "v": "j"} for i, k in zip(ids, KEYS)]
    oracle("write", warehouse, "db.t", "--json-rows", json.dumps(upserts))
    expected = sorted((i, _key(k), "j") for i, k in zip(ids, KEYS))
    got = oracle("read", warehouse, "db.t")
    assert sorted((r["id"], _key(r["k"]), r["v"]) for r in got) == expected
    ours = _catalog(warehouse).get_table("db.t").to_arrow().to_pylist()
    assert sorted((r["id"], _key(r["k"]), r["v"]) for r in ours) == expected
    # Java's NaN keys in its index and files pass our check of the index when we write again
    _catalog(warehouse).get_table("db.t").write_arrow(
        pa.table({**data, "v": ["c"] * len(ids)}, schema)
    )
    ours = _catalog(warehouse).get_table("db.t").to_arrow().to_pylist()
    assert sorted((r["id"], _key(r["k"]), r["v"]) for r in ours) == [
        (i, k, "c") for i, k, _ in expected
    ]


def _only_file(table: FileStoreTable) -> DataFileMeta:
    (entry,) = table.new_scan().read_entries(table.latest_snapshot())
    return entry.file


def _twin(
    warehouse: str, oracle: Callable[..., Any], schema_sql: str, rows: list[dict], *extra: str
) -> tuple[DataFileMeta, DataFileMeta, FileStoreTable]:
    """The data file Java writes for ``rows`` and the one we write for them in a twin table."""
    oracle("create-table", warehouse, "db.java", "--schema", schema_sql, *extra)
    oracle("write", warehouse, "db.java", "--json-rows", json.dumps(rows))
    java = _catalog(warehouse).get_table("db.java")
    schema = java.schema
    ours = _catalog(warehouse).create_table(
        "db.ours",
        to_arrow_schema(schema.fields),
        primary_keys=list(schema.primary_keys),
        options={"bucket": str(java.options.bucket)},
    )
    columns = {
        f.name: [None if r.get(f.name) is None else float(r[f.name]) for r in rows]
        for f in schema.fields
    }
    ours.write_arrow(pa.table(columns, to_arrow_schema(schema.fields)))
    return _only_file(java), _only_file(ours), java


def _bounds(meta: DataFileMeta, table: FileStoreTable) -> list[tuple[str, str]]:
    types = [f.type for f in table.schema.fields]
    low = deserialize_row(meta.value_stats.min_values, types)
    high = deserialize_row(meta.value_stats.max_values, types)
    return [(repr(a), repr(b)) for a, b in zip(low, high, strict=True)]


def test_value_stats_of_nan_and_zero_columns_are_paimon_2s_not_09s(
    warehouse: str, oracle: Callable[..., Any]
) -> None:
    """Paimon 0.9 re-read the Parquet footer it wrote: no bounds around a NaN, zeros widened
    to -0.0..+0.0. We write Paimon 2's (``test_java2_tables``): every value in
    ``Float.compareTo`` order, NaN the largest; 0.9 reads our files all the same."""
    rows = [
        {"a": 1.0, "z": "-0.0", "c": "0.0", "y": "0.0"},
        {"a": "NaN", "z": -2.0, "c": 0.5, "y": None},
        {"a": 3.0, "z": -1.0, "c": "NaN", "y": 1.0},
    ]
    java, ours, table = _twin(warehouse, oracle, "a DOUBLE, z DOUBLE, c FLOAT, y FLOAT", rows)
    assert java.value_stats_cols == ours.value_stats_cols
    assert ours.value_stats.null_counts == java.value_stats.null_counts
    assert _bounds(java, table) == [
        ("None", "None"),
        ("-2.0", "0.0"),
        ("None", "None"),
        ("-0.0", "1.0"),
    ]
    assert _bounds(ours, table) == [
        ("1.0", "nan"),
        ("-2.0", "-0.0"),
        ("0.0", "nan"),
        ("0.0", "1.0"),
    ]
    assert len(oracle("read", warehouse, "db.ours")) == 3
    # Java's stats hold no bound for the NaN columns: pruning keeps the file for NaN.
    assert table.new_scan().plan(predicate=[("a", ">", 5.0)])
    assert table.new_scan().plan(predicate=[("c", "=", math.nan)])
    assert not table.new_scan().plan(predicate=[("z", "<", -5.0)])


@pytest.mark.parametrize(
    "rows",
    [
        [{"k": "-0.0", "d": "NaN"}, {"k": 2.0, "d": 1.0}, {"k": "-Infinity", "d": "0.0"}],
        [{"k": "NaN", "d": "-0.0"}],
    ],
    ids=["zero-key", "nan-key"],
)
def test_key_range_equals_javas(
    warehouse: str, oracle: Callable[..., Any], rows: list[dict]
) -> None:
    java, ours, table = _twin(
        warehouse, oracle, "k DOUBLE, d DOUBLE", rows, "--primary-key", "k", "--option", "bucket=1"
    )
    # (the key and value bounds are Paimon 2's: test_java2_tables)
    assert ours.key_stats.null_counts == java.key_stats.null_counts
    assert (ours.min_key, ours.max_key) == (java.min_key, java.max_key)
    key_type = [table.schema.field("k").type]
    low = deserialize_row(java.min_key, key_type)[0]
    assert _key(low) == _key(rows[-1]["k"])  # -Infinity, or the lone NaN

"""VARIANT tables both ways with Apache Paimon 2.0.0 (Java): values Java builds from JSON
(``GenericVariant.fromJson``) read here through Spark, values Spark's ``parse_json`` builds read
in Java (``toJson``), each side committing and compacting on top of the other; shredded files
(``variant.shreddingSchema``) written by either side read by both."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from paimon_core.catalog import FileSystemCatalog
from paimon_core.format import variant as pv
from paimon_core.format.types import VARIANT, to_arrow_type
from sql_ext.session import PaimonSession
from tests.interop.java2 import Java2
from tests.unit.paimon_core.helpers import shredding_schema

pytestmark = [pytest.mark.java2, pytest.mark.spark]

SHREDDING = shredding_schema(
    "v", [("a", "INT"), ("b", "STRING"), ("c", {"type": "ARRAY", "element": "BIGINT"})]
)
JAVA_FIRST = {
    1: '{"a": 1, "b": "x", "z": {"deep": [1, 2.5, null]}}',
    2: '"just a string"',
    3: None,
    4: '{"a": "not an int", "c": [1, "two"]}',
}
OURS = {
    1: '{"a": 2, "b": "updated"}',
    5: "[true, false]",
    6: '{"c": [10, 20], "extra": 1.25}',
}
JAVA_SECOND = {2: '{"b": "y"}', 7: "12345678901"}


def _parsed(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def _order(row: tuple[int, Any]) -> tuple[int, str]:
    return row[0], json.dumps(row[1], sort_keys=True)


def _expected(*batches: dict[int, str | None]) -> list[tuple[int, Any]]:
    latest: dict[int, str | None] = {}
    for batch in batches:
        latest.update(batch)
    return sorted(((k, _parsed(v)) for k, v in latest.items()), key=_order)


def _java(java2: Java2, table: str = "db.t") -> list[tuple[int, Any]]:
    return sorted(((r["k"], _parsed(r["v"])) for r in java2.read(table)), key=_order)


def _ours(session: PaimonSession, table: str = "t") -> list[tuple[int, Any]]:
    data = session.sql(f"SELECT k, to_json(v) FROM {table}").collect()
    return sorted(((k, _parsed(v)) for k, v in data), key=_order)


def _java_rows(batch: dict[int, str | None]) -> list[dict[str, Any]]:
    return [{"k": k, "v": v} for k, v in batch.items()]


def _insert(session: PaimonSession, batch: dict[int, str | None], table: str = "t") -> None:
    values = ", ".join(
        f"({k}, parse_json('{v}'))" if v is not None else f"({k}, NULL)" for k, v in batch.items()
    )
    session.sql(f"INSERT INTO {table} VALUES {values}")


@pytest.fixture
def session(spark: SparkSession, warehouse: str) -> PaimonSession:
    session = PaimonSession(spark, warehouse=warehouse)
    session.sql("CREATE DATABASE IF NOT EXISTS db")
    session.sql("USE db")
    return session


def test_primary_key_table_both_ways_with_compactions(java2: Java2, session: PaimonSession) -> None:
    java2.create_table(
        "db.t", [("k", "INT NOT NULL"), ("v", "VARIANT")], primary_keys=["k"],
        options={"bucket": "1"},
    )  # fmt: skip
    java2.write("db.t", _java_rows(JAVA_FIRST))
    assert _ours(session) == _expected(JAVA_FIRST)
    _insert(session, OURS)
    assert _java(java2) == _ours(session) == _expected(JAVA_FIRST, OURS)
    java2.write("db.t", _java_rows(JAVA_SECOND))
    expected = _expected(JAVA_FIRST, OURS, JAVA_SECOND)
    assert _ours(session) == _java(java2) == expected
    java2.compact("db.t")
    assert _ours(session) == expected
    session.sql("DELETE FROM t WHERE k = 5")
    session.sql("CALL sys.compact(table => 'db.t')")
    expected = [r for r in expected if r[0] != 5]
    assert _java(java2) == _ours(session) == expected


def test_shredded_files_both_ways(java2: Java2, session: PaimonSession) -> None:
    java2.create_table(
        "db.s", [("k", "INT"), ("v", "VARIANT")],
        options={"variant.shreddingSchema": SHREDDING},
    )  # fmt: skip
    java2.write("db.s", _java_rows(JAVA_FIRST))
    assert _ours(session, "s") == _expected(JAVA_FIRST)
    _insert(session, OURS, "s")
    paths = [r[0] for r in session.sql("SELECT file_path FROM s$files").collect()]
    groups = [pq.ParquetFile(p).schema_arrow.field("v").type for p in paths]
    # Both sides shred: metadata, value, typed_value<a, b, c>.
    assert len(groups) >= 2 and {tuple(g.names) for g in groups} == {
        ("metadata", "value", "typed_value")
    }
    assert {tuple(g.field("typed_value").type.names) for g in groups} == {("a", "b", "c")}
    both = sorted([*_expected(JAVA_FIRST), *_expected(OURS)], key=_order)
    assert _java(java2, "db.s") == _ours(session, "s") == both
    java2.write("db.s", _java_rows(JAVA_SECOND))
    assert _ours(session, "s") == sorted([*both, *_expected(JAVA_SECOND)], key=_order)


def test_java_reads_our_plain_append_table(java2: Java2, session: PaimonSession) -> None:
    session.sql("CREATE TABLE t (k INT, v VARIANT, dt STRING) PARTITIONED BY (dt)")
    session.sql(
        """INSERT INTO t VALUES (1, parse_json('{"a": [1, {"b": null}]}'), 'x'),
        (2, NULL, 'y'), (3, parse_json('1e300'), 'x'), (4, parse_json('-0.000001'), 'y')"""
    )
    rows = sorted((r["k"], _parsed(r["v"]), r["dt"]) for r in java2.read("db.t"))
    assert rows == [
        (1, {"a": [1, {"b": None}]}, "x"),
        (2, None, "y"),
        (3, 1e300, "x"),
        (4, -0.000001, "y"),
    ]
    java2.write("db.t", [{"k": 5, "v": '{"from": "java"}', "dt": "y"}])
    assert session.sql("SELECT to_json(v) FROM t WHERE k = 5").collect()[0][0] == (
        '{"from":"java"}'
    )


def test_java_reads_our_nested_variants(java2: Java2, warehouse: str) -> None:
    """ARRAY<VARIANT> and ROW<x VARIANT> columns (null elements and fields included)."""
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    variant = to_arrow_type(VARIANT())
    table = catalog.create_table(
        "db.n",
        pa.schema(
            [
                ("k", pa.int32()),
                ("a", pa.list_(pa.field("element", variant))),
                ("r", pa.struct([pa.field("x", variant)])),
            ]
        ),
    )
    value, metadata = pv.from_json('{"q": [1, "two"]}')
    one = {"value": value, "metadata": metadata}
    table.write_arrow(
        pa.table(
            {
                "k": pa.array([1, 2], pa.int32()),
                "a": pa.array(
                    [[one, None], None], table.new_read().output_schema().field("a").type
                ),
                "r": pa.array([{"x": one}, {"x": None}], pa.struct([pa.field("x", variant)])),
            }
        )
    )
    rows = sorted(java2.read("db.n"), key=lambda r: r["k"])
    assert rows == [
        {"k": 1, "a": ['{"q":[1,"two"]}', None], "r": {"x": '{"q":[1,"two"]}'}},
        {"k": 2, "a": None, "r": {"x": None}},
    ]
    java2.write("db.n", [{"k": 3}])
    got = sorted(catalog.get_table("db.n").to_arrow().to_pylist(), key=lambda r: r["k"])
    assert [(r["k"], r["a"], r["r"]) for r in got] == [
        (1, [one, None], {"x": one}),
        (2, None, {"x": None}),
        (3, None, None),
    ]

"""The `sys` database (`sys.tables`, `sys.partitions`, `sys.all_table_options`,
`sys.catalog_options`): Paimon's columns, the same rows through Spark and without it."""

from __future__ import annotations

import datetime as dt
import os
from typing import Any

import pytest
from pyspark.sql import SparkSession

from paimon_core.catalog import FileSystemCatalog
from sql_ext.errors import SqlError
from sql_ext.metadata.engine import MetadataEngine
from sql_ext.metadata.result import Rows
from sql_ext.session import PaimonSession
from tests.unit.procedures.helpers import new_catalog, new_table

ENABLED = {"spark.sql.catalog.paimon.catalog-options-table.enabled": "true"}


@pytest.fixture
def catalog(warehouse: str) -> FileSystemCatalog:
    catalog = new_catalog(warehouse)  # db.t: partitioned by dt, 3 commits over 2 days
    new_table(catalog, "db.t", commits=3, primary_keys=["id", "dt"], options={"bucket": "1"})
    catalog.create_database("default")
    catalog.create_table("default.plain", catalog.get_table("db.t").schema)
    return catalog


def _spark_rows(session: PaimonSession, sql: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in session.sql(sql).collect()]


def _engine_rows(engine: MetadataEngine, sql: str) -> list[tuple[Any, ...]]:
    result = engine.run(sql)
    assert isinstance(result, Rows), sql
    return [tuple(r) for r in result.rows]


def test_global_tables_have_paimons_columns_and_rows(
    spark: SparkSession, warehouse: str, catalog: FileSystemCatalog
) -> None:
    session = PaimonSession(spark, warehouse=warehouse, conf=ENABLED)
    engine = MetadataEngine(warehouse, ENABLED)
    tables = _spark_rows(session, "SELECT * FROM sys.tables")
    assert [r[:5] for r in tables] == [
        ("db", "t", "table", True, True),
        ("default", "plain", "table", True, True),
    ]
    assert {r[5:] for r in tables} == {(None,) * 9}  # REST-only audit fields and statistics
    partitions = _spark_rows(session, "SELECT * FROM sys.partitions WHERE table_name = 't'")
    assert [(r[2], r[3], r[5], r[7]) for r in partitions] == [
        ("dt=2024-01-01", 4, 2, False),
        ("dt=2024-01-02", 2, 1, False),
    ]
    newest = dt.datetime.fromtimestamp(partitions[0][6] / 1000)
    assert abs(newest - dt.datetime.now()) < dt.timedelta(hours=1)  # epoch millis, local
    options = _spark_rows(session, "SELECT * FROM paimon.sys.all_table_options")
    assert ("db", "t", "bucket", "1") in options
    assert ("db", "t", "path", os.path.join(warehouse, "db.db", "t")) in options
    assert _spark_rows(session, "SELECT * FROM sys.catalog_options") == [
        ("catalog-options-table.enabled", "true"),
        ("warehouse", warehouse),
    ]
    for sql in (
        "SELECT * FROM sys.tables",
        "SELECT * FROM sys.partitions",
        "SELECT table_name, `key`, value FROM sys.all_table_options ORDER BY `key`",
        "SELECT * FROM sys.catalog_options",
        "SELECT count(*) FROM sys.partitions WHERE record_count > 2",
        "SHOW TABLES IN sys",
        "DESCRIBE sys.tables",
    ):
        assert _engine_rows(engine, sql) == _spark_rows(session, sql), sql
    schema = session.sql("SELECT * FROM sys.partitions").schema
    assert [f.dataType.simpleString() for f in schema][-2:] == ["bigint", "boolean"]


def test_sys_is_usable_and_read_only(
    spark: SparkSession, warehouse: str, catalog: FileSystemCatalog
) -> None:
    session = PaimonSession(spark, warehouse=warehouse)
    session.sql("USE sys")
    assert _spark_rows(session, "SHOW TABLES") == [
        ("sys", "tables", False),
        ("sys", "partitions", False),
        ("sys", "all_table_options", False),
    ]
    assert _spark_rows(session, "SELECT table_name FROM tables") == [("t",), ("plain",)]
    with pytest.raises(SqlError, match="not found"):
        session.sql("SELECT * FROM catalog_options")  # not enabled: no such table
    for statement, message in (
        ("CREATE DATABASE sys", "system database"),
        ("DROP DATABASE sys", "system database"),
        ("INSERT INTO sys.tables VALUES (1)", "read-only"),
        ("CREATE TABLE sys.x (a INT)", "read-only"),
        ("SELECT * FROM sys.tables VERSION AS OF 1", "Time travel"),
    ):
        with pytest.raises(SqlError, match=message):
            session.sql(statement)
    assert sorted(os.listdir(warehouse)) == ["db.db", "default.db"]

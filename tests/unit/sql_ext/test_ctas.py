"""CREATE TABLE ... AS SELECT with every clause Paimon-Spark documents (sql-ddl.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pyspark.sql import SparkSession

from paimon_core.catalog import FileSystemCatalog
from sql_ext.errors import SqlError
from sql_ext.session import PaimonSession
from sql_ext.tables import current_user


def test_ctas_clauses_land_in_the_schema(
    spark: SparkSession, warehouse: str, oracle: Callable[..., Any]
) -> None:
    session = PaimonSession(spark, warehouse=warehouse)
    session.sql(
        "CREATE TABLE src (user_id BIGINT, item_id BIGINT, behavior STRING, dt STRING, hh STRING) "
        "PARTITIONED BY (dt, hh)"
    )
    session.sql("INSERT INTO src VALUES (1, 10, 'pv', 'd1', 'h1'), (2, 20, 'buy', 'd2', 'h1')")
    session.sql(
        "CREATE TABLE IF NOT EXISTS all_as USING paimon PARTITIONED BY (dt) COMMENT 'copied' "
        "OPTIONS ('file.format' = 'parquet') "
        "TBLPROPERTIES ('primary-key' = 'dt,hh,user_id', 'bucket' = '2') AS SELECT * FROM src"
    )
    schema = FileSystemCatalog(warehouse).get_table("default.all_as").schema
    assert schema.partition_keys == ("dt",) and schema.primary_keys == ("dt", "hh", "user_id")
    assert schema.comment == "copied"
    assert schema.options == {"file.format": "parquet", "bucket": "2", "owner": current_user()}
    assert [str(f.type) for f in schema.fields] == [
        "BIGINT NOT NULL",
        "BIGINT",
        "STRING",
        "STRING NOT NULL",
        "STRING NOT NULL",
    ]
    read = oracle("read", warehouse, "default.all_as")
    assert sorted((r["user_id"], r["dt"]) for r in read) == [(1, "d1"), (2, "d2")]
    session.sql("CREATE TABLE IF NOT EXISTS all_as AS SELECT 1 AS other")  # exists: no-op
    assert FileSystemCatalog(warehouse).get_table("default.all_as").schema.schema_id == 0
    with pytest.raises(SqlError, match="name them in the query"):
        session.sql("CREATE TABLE named (a, b) AS SELECT 1, 2")

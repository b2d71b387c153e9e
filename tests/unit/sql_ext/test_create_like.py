"""CREATE TABLE ... LIKE and CREATE TABLE ... LOCATION on the Paimon catalog."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest
from pyspark.sql import SparkSession

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import TableAlreadyExist
from sql_ext.errors import SqlError
from sql_ext.session import PaimonSession


@pytest.fixture
def session(spark: SparkSession, warehouse: str) -> PaimonSession:
    s = PaimonSession(spark, warehouse=warehouse)
    s.sql("CREATE DATABASE db")
    s.sql(
        "CREATE TABLE db.src (id INT COMMENT 'key', tag VARCHAR(8), dt STRING) USING paimon "
        "PARTITIONED BY (dt) COMMENT 'source' "
        "TBLPROPERTIES ('primary-key' = 'id,dt', 'bucket' = '2', 'file.format' = 'parquet')"
    )
    s.sql("INSERT INTO db.src VALUES (1, 'a', 'x')")
    return s


def test_like_copies_schema_keys_partitioning_comment_and_options(
    session: PaimonSession, warehouse: str, oracle: Callable[..., Any]
) -> None:
    session.sql("CREATE TABLE db.copy LIKE db.src TBLPROPERTIES ('bucket' = '3')")
    source = FileSystemCatalog(warehouse).get_table("db.src").schema
    copy = FileSystemCatalog(warehouse).get_table("db.copy").schema
    assert copy.fields == source.fields
    assert (copy.partition_keys, copy.primary_keys, copy.comment) == (
        ("dt",),
        ("id", "dt"),
        "source",
    )
    assert copy.options == {"bucket": "3", "file.format": "parquet"}
    assert [tuple(r) for r in session.sql("SELECT * FROM db.copy").collect()] == []
    session.sql("INSERT INTO db.copy VALUES (2, 'b', 'y')")
    assert oracle("read", warehouse, "db.copy") == [{"id": 2, "tag": "b", "dt": "y"}]


def test_like_refusals_change_nothing(session: PaimonSession, warehouse: str) -> None:
    session.sql("CREATE TABLE db.copy LIKE db.src")
    with pytest.raises(TableAlreadyExist):
        session.sql("CREATE TABLE db.copy LIKE db.src")
    session.sql("CREATE TABLE IF NOT EXISTS db.copy LIKE db.src")
    with pytest.raises(SqlError, match="no Paimon table"):
        session.sql("CREATE TABLE db.other LIKE db.missing")
    with pytest.raises(SqlError, match="USING paimon"):
        session.sql("CREATE TABLE paimon.db.other LIKE db.src USING parquet")
    assert sorted(os.listdir(os.path.join(warehouse, "db.db"))) == ["copy", "src"]


def test_location_is_refused_as_paimon_filesystem_catalog_does(
    session: PaimonSession, warehouse: str, tmp_path: Any
) -> None:
    target = tmp_path / "elsewhere"
    for text in (
        f"CREATE TABLE db.ext (a INT) USING paimon LOCATION '{target}'",
        f"CREATE TABLE db.ext LOCATION '{os.path.join(warehouse, 'db.db', 'src')}'",
        f"CREATE TABLE db.ext LIKE db.src LOCATION '{target}'",
    ):
        with pytest.raises(SqlError, match="does not support specifying the table path"):
            session.sql(text)
    assert not target.exists()
    assert sorted(os.listdir(os.path.join(warehouse, "db.db"))) == ["src"]

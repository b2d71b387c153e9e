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


ROUND_TRIPS = [
    "CREATE TABLE db.rt (id INT NOT NULL COMMENT 'key', tag VARCHAR(8), dt STRING, "
    "amount DECIMAL(10, 2) DEFAULT 1.5, s STRING DEFAULT 'x\\'y', nested STRUCT<a: INT, b: "
    "ARRAY<STRING>>, m MAP<STRING, BIGINT>) USING paimon PARTITIONED BY (dt) "
    "COMMENT 'it\\'s the table' "
    "TBLPROPERTIES ('primary-key' = 'id,dt', 'bucket' = '2', 'file.format' = 'orc', "
    "'merge-engine' = 'partial-update')",
    "CREATE TABLE db.rt (a BIGINT, b TIMESTAMP, c DATE, `odd name` STRING) "
    "PARTITIONED BY (c, `odd name`)",
    "CREATE TABLE db.rt (k INT, v BINARY) TBLPROPERTIES ('bucket' = '-1', 'primary-key' = 'k', "
    "'deletion-vectors.enabled' = 'true', 'snapshot.num-retained.max' = '50')",
]


@pytest.mark.parametrize("create", ROUND_TRIPS)
def test_show_create_table_round_trips_through_create_table(
    session: PaimonSession, warehouse: str, create: str
) -> None:
    session.sql(create)
    shown = session.sql("SHOW CREATE TABLE db.rt").collect()[0][0]
    assert "LOCATION '" in shown  # as Paimon-Spark prints it
    before = FileSystemCatalog(warehouse).get_table("db.rt").schema
    session.sql("DROP TABLE db.rt")
    session.sql(shown)
    after = FileSystemCatalog(warehouse).get_table("db.rt").schema
    for was, now in zip(before.fields, after.fields, strict=True):
        assert now == was
    assert (after.partition_keys, after.primary_keys) == (
        before.partition_keys,
        before.primary_keys,
    )
    assert (after.options, after.comment) == (before.options, before.comment)
    assert "path" not in after.options
    assert session.sql("SHOW CREATE TABLE db.rt").collect()[0][0] == shown


def test_location_of_the_tables_own_place_is_accepted(
    session: PaimonSession, warehouse: str
) -> None:
    own = os.path.join(warehouse, "db.db", "mine")
    session.sql(f"CREATE TABLE db.mine (a INT) LOCATION 'file:{own}/'")
    session.sql(f"CREATE TABLE db.other (a INT) TBLPROPERTIES ('path' = '{own[:-4]}other')")
    with pytest.raises(SqlError, match=r"paimon\.db\.third at LOCATION .*db\.db/mine"):
        session.sql(f"CREATE TABLE db.third (a INT) LOCATION '{own}'")
    with pytest.raises(SqlError, match="needs a column list"):
        session.sql(f"CREATE TABLE db.fourth LOCATION '{own[:-4]}fourth'")
    assert sorted(os.listdir(os.path.join(warehouse, "db.db"))) == ["mine", "other", "src"]

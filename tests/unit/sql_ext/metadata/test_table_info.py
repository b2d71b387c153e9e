"""DESCRIBE [TABLE] [EXTENDED | FORMATTED] of Paimon tables through the session."""

from __future__ import annotations

import os
from typing import Any

import pytest
from pyspark.sql import SparkSession

from sql_ext.errors import SqlError
from sql_ext.session import PaimonSession
from sql_ext.tables import current_user


@pytest.fixture
def session(spark: SparkSession, warehouse: str) -> PaimonSession:
    s = PaimonSession(spark, warehouse=warehouse)
    s.sql("CREATE DATABASE db")
    s.sql(
        "CREATE TABLE db.t (id INT COMMENT 'key', name STRING, dt STRING) USING paimon "
        "PARTITIONED BY (dt) COMMENT 'people' "
        "TBLPROPERTIES ('primary-key' = 'id,dt', 'bucket' = '1', 'jdbc.url' = 'u')"
    )
    s.sql("INSERT INTO db.t VALUES (1, 'abcdef', 'a'), (2, 'xyz', 'a')")
    return s


def rows(session: PaimonSession, text: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in session.sql(text).collect()]


COLUMNS = [
    ("id", "int", "key"),
    ("name", "string", None),
    ("dt", "string", None),
    ("# Partition Information", "", ""),
    ("# col_name", "data_type", "comment"),
    ("dt", "string", None),
]


def test_describe_has_the_partition_section(session: PaimonSession) -> None:
    assert rows(session, "DESCRIBE db.t") == COLUMNS
    assert rows(session, "DESC TABLE paimon.db.t") == COLUMNS
    session.sql("USE db")
    assert rows(session, "DESCRIBE t") == COLUMNS


def test_describe_extended_has_the_table_information(
    session: PaimonSession, warehouse: str
) -> None:
    path = os.path.join(warehouse, "db.db", "t")
    described = rows(session, "DESCRIBE EXTENDED db.t")
    assert described == rows(session, "DESCRIBE TABLE FORMATTED db.t")
    # 2 rows, (int 4 + string 20 + string 20) bytes a row
    assert described[len(COLUMNS) :] == [
        ("", "", ""),
        ("# Metadata Columns", "", ""),
        ("__paimon_file_path", "string", ""),
        ("__paimon_row_index", "bigint", ""),
        ("__paimon_partition", "struct<dt:string>", ""),
        ("__paimon_bucket", "int", ""),
        ("", "", ""),
        ("# Detailed Table Information", "", ""),
        ("Name", "db.t", ""),
        ("Type", "MANAGED", ""),
        ("Comment", "people", ""),
        ("Location", path, ""),
        ("Provider", "paimon", ""),
        ("Owner", current_user(), ""),  # Spark adds it to every new table, Paimon keeps it
        (
            "Table Properties",
            f"[bucket=1,jdbc.url=*********(redacted),path={path},primary-key=id,dt]",
            "",
        ),
        ("Statistics", "88 bytes, 2 rows", None),
        ("# Column Not Null", "", ""),
        ("id", "int", "NOT NULL"),
        ("dt", "string", "NOT NULL"),
    ]
    session.sql("ANALYZE TABLE db.t COMPUTE STATISTICS FOR COLUMNS name")
    statistics = {r[0]: r[1] for r in rows(session, "DESCRIBE EXTENDED db.t")}
    assert statistics["Statistics"] == "58 bytes, 2 rows"  # name: average length 5


def test_describe_refusals_and_other_names(session: PaimonSession, spark: SparkSession) -> None:
    with pytest.raises(SqlError, match=r"DESCRIBE \.\.\. PARTITION is not supported on Paimon"):
        session.sql("DESCRIBE db.t PARTITION (dt = 'a')")
    assert rows(session, "DESCRIBE db.t$snapshots")[0] == ("snapshot_id", "bigint", None)
    spark.range(1).createOrReplaceTempView("t")
    try:
        session.sql("USE db")
        assert rows(session, "DESCRIBE t") == [("id", "bigint", None)]  # the view wins
    finally:
        spark.catalog.dropTempView("t")

"""Snapshots record the SQL operation that committed them (Paimon 2.0's `operation`), as
Paimon-Spark's writes do (found by running Paimon-Spark 2.0.0 side by side, issue 22)."""

from __future__ import annotations

import pytest
from pyspark.sql import SparkSession

from sql_ext.session import PaimonSession
from sql_ext.snapshot_operation import snapshot_operation


@pytest.mark.parametrize(
    ("statement", "operation"),
    [
        ("INSERT INTO t VALUES (1)", "WRITE"),
        ("/* hint */ insert overwrite t SELECT 1", "OVERWRITE"),
        ("UPDATE t SET a = 1", "UPDATE"),
        ("DELETE FROM t", "DELETE"),
        ("MERGE INTO t USING s ON t.k = s.k WHEN MATCHED THEN DELETE", "MERGE"),
        ("TRUNCATE TABLE t", "TRUNCATE"),
        ("ALTER TABLE t DROP PARTITION (p = 1)", "TRUNCATE"),
        ("CREATE TABLE t PARTITIONED BY (p) AS SELECT 1 AS p", "CREATE_TABLE_AS_SELECT"),
        ("CREATE OR REPLACE TABLE t AS SELECT 1", "CREATE_OR_REPLACE_TABLE_AS_SELECT"),
        ("REPLACE TABLE t AS SELECT 1", "REPLACE_TABLE_AS_SELECT"),
        ("CREATE TABLE t (a INT) TBLPROPERTIES ('k' = 'v')", None),
        ("ALTER TABLE t ADD COLUMN x INT", None),
        ("CALL sys.compact(table => 't')", None),
    ],
)
def test_statement_operation(statement: str, operation: str | None) -> None:
    assert snapshot_operation(statement) == operation


def test_snapshots_record_the_statement_operation(spark: SparkSession, warehouse: str) -> None:
    session = PaimonSession(spark, warehouse=warehouse)
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.t (k INT, v STRING) TBLPROPERTIES ('primary-key' = 'k', 'bucket' = '1')")  # fmt: skip
    for statement in (
        "INSERT INTO db.t VALUES (1, 'a'), (2, 'b')",
        "INSERT OVERWRITE db.t VALUES (1, 'a'), (2, 'b'), (3, 'c')",
        "UPDATE db.t SET v = 'x' WHERE k = 1",
        "DELETE FROM db.t WHERE k = 2",
        "MERGE INTO db.t t USING (SELECT 3 AS k) s ON t.k = s.k WHEN MATCHED THEN DELETE",
        "TRUNCATE TABLE db.t",
    ):
        session.sql(statement)
    session.sql("INSERT INTO db.t VALUES (5, 'e')")
    session.sql("CALL sys.compact(table => 'db.t', compact_strategy => 'full')")
    got = session.sql(
        "SELECT commit_kind, operation FROM db.`t$snapshots` ORDER BY snapshot_id"
    ).collect()
    # Paimon-Spark 2.0.0's snapshots of the same statements; a procedure's compaction
    # records none.
    assert [tuple(r) for r in got] == [
        ("APPEND", "WRITE"),
        ("OVERWRITE", "OVERWRITE"),
        ("APPEND", "UPDATE"),
        ("APPEND", "DELETE"),
        ("APPEND", "MERGE"),
        ("OVERWRITE", "TRUNCATE"),
        ("APPEND", "WRITE"),
        ("COMPACT", None),
    ]


def test_dataframe_saves_record_write_and_overwrite(spark: SparkSession, warehouse: str) -> None:
    """As Paimon-Spark's V2 write: ``WRITE``, ``OVERWRITE`` in overwrite mode."""
    session = PaimonSession(spark, warehouse=warehouse)
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.t (k INT, v STRING)")
    df = spark.createDataFrame([(1, "a")], "k INT, v STRING")
    target = {"warehouse": warehouse}
    df.write.format("paimon").options(**target).mode("append").save("db.t")
    df.write.format("paimon").options(**target).mode("overwrite").save("db.t")
    got = session.sql("SELECT operation FROM db.`t$snapshots` ORDER BY snapshot_id").collect()
    assert [r[0] for r in got] == ["WRITE", "OVERWRITE"]

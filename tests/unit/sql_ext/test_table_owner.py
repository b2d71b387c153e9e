"""The option `owner` of new tables: Spark adds the current user to the properties of every
table CREATE TABLE, CTAS and REPLACE TABLE make, and Paimon-Spark keeps it as an option
(found by the Paimon-Spark comparison, tests/interop/test_paimon_spark_diff.py)."""

from __future__ import annotations

import pytest
from pyspark.sql import SparkSession

from sql_ext.session import PaimonSession
from sql_ext.tables import current_user


def options(session: PaimonSession, table: str) -> dict[str, str]:
    return {r[0]: r[1] for r in session.sql(f"SELECT * FROM db.`{table}$options`").collect()}


def test_create_ctas_and_replace_record_the_owner_like_does_not(
    spark: SparkSession, warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = PaimonSession(spark, warehouse=warehouse)
    session.sql("CREATE DATABASE db")
    monkeypatch.delenv("SPARK_USER", raising=False)
    monkeypatch.setenv("HADOOP_USER_NAME", "hadoop-user")
    session.sql("CREATE TABLE db.t (k INT) TBLPROPERTIES ('bucket' = '1', 'primary-key' = 'k')")
    assert options(session, "t") == {"bucket": "1", "owner": "hadoop-user"}
    monkeypatch.setenv("SPARK_USER", "spark-user")  # Spark's first choice
    session.sql("CREATE TABLE db.c AS SELECT 1 AS k")
    assert options(session, "c") == {"owner": "spark-user"}
    session.sql("CREATE TABLE db.l LIKE db.t")  # Paimon-Spark's LIKE neither copies nor adds it
    assert options(session, "l") == {"bucket": "1"}
    monkeypatch.setenv("SPARK_USER", "other")
    session.sql("CREATE OR REPLACE TABLE db.t (k INT, v STRING)")
    assert options(session, "t") == {"owner": "other"}
    # Spark's SHOW TBLPROPERTIES leaves the reserved property out, DESCRIBE names it Owner.
    assert "owner" not in {r[0] for r in session.sql("SHOW TBLPROPERTIES db.t").collect()}
    described = {r[0]: r[1] for r in session.sql("DESCRIBE EXTENDED db.t").collect()}
    assert described["Owner"] == "other"


def test_current_user_falls_back_to_the_login_name(monkeypatch: pytest.MonkeyPatch) -> None:
    import getpass

    monkeypatch.delenv("SPARK_USER", raising=False)
    monkeypatch.delenv("HADOOP_USER_NAME", raising=False)
    assert current_user() == getpass.getuser()

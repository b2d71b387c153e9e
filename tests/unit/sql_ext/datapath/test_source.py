"""``format("paimon")`` in several SparkSessions of one SparkContext: each SparkSession reads
and writes the warehouse of its own latest PaimonSession."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from sql_ext.session import PaimonSession

pytestmark = pytest.mark.spark


def _read(spark: SparkSession) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in spark.read.format("paimon").load("default.t").collect())


def _save(spark: SparkSession, value: int) -> None:
    df = spark.createDataFrame([(value,)], "a INT")
    df.write.format("paimon").mode("append").save("default.t")


def _table_rows(session: PaimonSession) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in session.sql("SELECT a FROM t").collect())


def test_each_spark_session_reads_and_writes_its_own_warehouse(
    spark: SparkSession, new_spark_session: Callable[[], SparkSession], tmp_path: Path
) -> None:
    """Issue 19.8: saves went to the warehouse of the latest PaimonSession of the process."""
    other = new_spark_session()
    one = PaimonSession(spark, warehouse=str(tmp_path / "one"))
    two = PaimonSession(other, warehouse=str(tmp_path / "two"))
    for session in (one, two):
        session.sql("CREATE TABLE t (a INT)")

    _save(spark, 1)
    _save(other, 2)
    assert _table_rows(one) == [(1,)]
    assert _table_rows(two) == [(2,)]
    assert _read(spark) == [(1,)]
    assert _read(other) == [(2,)]

    # The data source's own writer (a caller bypassing PySpark's DataFrameWriter) too.
    jdf = spark.createDataFrame([(3,)], "a INT")._jdf
    jdf.write().format("paimon").mode("append").save("default.t")
    assert _table_rows(one) == [(1,), (3,)]
    assert _table_rows(two) == [(2,)]

    # The latest PaimonSession of a SparkSession registers its warehouse there only.
    three = PaimonSession(other, warehouse=str(tmp_path / "three"))
    three.sql("CREATE TABLE t (a INT)")
    _save(other, 4)
    _save(spark, 5)
    assert _table_rows(three) == [(4,)]
    assert _read(other) == [(4,)]
    assert _table_rows(one) == [(1,), (3,), (5,)]
    assert _table_rows(two) == [(2,)]


def test_option_warehouse_names_another_warehouse(
    spark: SparkSession, new_spark_session: Callable[[], SparkSession], tmp_path: Path
) -> None:
    """The option `warehouse` wins over the SparkSession's default, for reads and saves."""
    other = new_spark_session()
    one = PaimonSession(spark, warehouse=str(tmp_path / "one"))
    two = PaimonSession(other, warehouse=str(tmp_path / "two"))
    two.sql("CREATE TABLE t (a INT)")
    df = spark.createDataFrame([(7,)], "a INT")
    df.write.format("paimon").option("warehouse", two.warehouse).mode("append").save("default.t")
    assert _table_rows(two) == [(7,)]
    reader = spark.read.format("paimon").option("warehouse", two.warehouse)
    assert [tuple(r) for r in reader.load("default.t").collect()] == [(7,)]
    assert not (Path(one.warehouse) / "default.db" / "t").exists()


def test_a_sql_only_session_registers_the_source_when_a_statement_needs_it(
    new_spark_session: Callable[[], SparkSession], tmp_path: Path
) -> None:
    """The shell's session puts the registration off: most first statements (a query without
    Paimon tables, CREATE, INSERT, append tables read by Spark's Parquet reader) never use
    the source, and registering costs the shell's start-up."""
    from sql_ext.datapath import registry

    spark = new_spark_session()
    warehouse = str(tmp_path / "wh")
    session = PaimonSession(spark, warehouse=warehouse, sql_only=True)
    key = registry.session_key(spark)
    session.sql("SELECT 1").collect()
    session.sql("CREATE TABLE t (a INT) TBLPROPERTIES ('primary-key' = 'a', 'bucket' = '1')")
    session.sql("INSERT INTO t VALUES (1), (2)")
    assert key not in registry.REGISTERED
    assert _table_rows(session) == [(1,), (2,)]  # merged by the source's reader
    assert registry.REGISTERED[key]["warehouse"] == warehouse

    later = new_spark_session()  # a statement that names the source registers it too
    other = PaimonSession(later, warehouse=warehouse, sql_only=True)
    other.sql("CREATE TEMPORARY VIEW v USING paimon OPTIONS (path 'default.t')")
    assert sorted(tuple(r) for r in other.sql("SELECT a FROM v").collect()) == [(1,), (2,)]
    assert registry.REGISTERED[registry.session_key(later)]["warehouse"] == warehouse

"""The incremental table functions: parsing, and the rows Paimon-Spark's tests expect
(`TableValuedFunctionsTest`), through SQL and through `format("paimon")` options."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

import pytest
from pyspark.sql import SparkSession

from paimon_core.exceptions import InvalidArgument
from sql_ext.errors import SqlError
from sql_ext.session import PaimonSession
from sql_ext.syntax.parse import parse_statement
from sql_ext.table_functions import table_function_calls
from tests.unit.procedures.helpers import T0, set_commit_times


def _calls(sql: str) -> list[Any]:
    statement = parse_statement(sql)
    return table_function_calls(statement.tree, statement.parsed)


def test_calls_and_their_text() -> None:
    sql = "SELECT x.* FROM PAIMON_INCREMENTAL_QUERY('db.`t$audit_log`', 1, '3') AS x JOIN u"
    (call,) = _calls(sql)
    assert call.function == "paimon_incremental_query"
    assert call.parts == ("db", "t$audit_log")
    assert call.options == {"incremental-between": "1,3"}
    assert sql[call.start : call.end] == "PAIMON_INCREMENTAL_QUERY('db.`t$audit_log`', 1, '3')"
    (call,) = _calls("SELECT * FROM paimon_incremental_to_auto_tag('paimon.db.t', '2024-12-01')")
    assert call.parts == ("paimon", "db", "t")
    assert call.options == {"incremental-to-auto-tag": "2024-12-01"}
    (call,) = _calls("SELECT * FROM paimon_incremental_between_timestamp('t', 10, 20)")
    assert call.options == {"incremental-between-timestamp": "10,20"}
    assert _calls("SELECT * FROM range(3)") == []


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        (
            "SELECT * FROM paimon_incremental_query('t', 1)",
            "paimon_incremental_query needs two parameters: startSnapshotId, and endSnapshotId.",
        ),
        (
            "SELECT * FROM paimon_incremental_to_auto_tag('t')",
            "paimon_incremental_to_auto_tag needs one parameter: endTagName.",
        ),
        ("SELECT * FROM paimon_incremental_query('t', 1, k)", "takes constant arguments"),
        ("SELECT * FROM paimon_incremental_query('a b', 1, 2)", "invalid table identifier"),
    ],
)
def test_bad_calls(sql: str, message: str) -> None:
    with pytest.raises(SqlError, match=message):
        _calls(sql)


# ------------------------------------------------------------------------------ Spark


@pytest.fixture
def session(spark: SparkSession, warehouse: str) -> Iterator[PaimonSession]:
    paimon = PaimonSession(spark, warehouse=warehouse)
    yield paimon
    paimon.stop()


def rows(session: PaimonSession, sql: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in session.sql(sql).collect()]


@pytest.mark.parametrize("primary_key", [True, False])
def test_incremental_query(session: PaimonSession, primary_key: bool) -> None:
    """Paimon-Spark's "incremental query" test, on a partitioned table."""
    props = "'primary-key' = 'a,b', 'bucket' = '1'" if primary_key else "'bucket' = '-1'"
    session.sql(
        f"CREATE TABLE t (a INT, b INT, c STRING) PARTITIONED BY (a) TBLPROPERTIES ({props})"
    )
    session.sql("INSERT INTO t VALUES (1, 1, '1'), (2, 2, '2')")
    session.sql("INSERT INTO t VALUES (1, 3, '3'), (2, 4, '4')")
    session.sql("INSERT INTO t VALUES (1, 5, '5'), (1, 7, '7')")
    query = "SELECT * FROM paimon_incremental_query('t', '{}', '{}') ORDER BY a, b"
    assert rows(session, query.format(0, 1)) == [(1, 1, "1"), (2, 2, "2")]
    assert rows(session, query.format(1, 3)) == [(1, 3, "3"), (1, 5, "5"), (1, 7, "7"), (2, 4, "4")]
    count = "SELECT count(*) FROM paimon_incremental_query('t', 1, 3)"
    assert rows(session, count) == [(4,)]  # no column read: the rows still count
    df = session.spark.read.format("paimon").option("incremental-between", "2,3").load("default.t")
    assert sorted(tuple(r) for r in df.collect()) == [(1, 5, "5"), (1, 7, "7")]


def test_incremental_reads_of_a_deletion_vector_table(session: PaimonSession) -> None:
    """As Paimon: a diff (two tags) reads the end's new files with the end's deletion
    vectors; a delta reads the files appended as they were written (a DELETE that only marks
    vectors commits OVERWRITE, which a delta skips)."""
    session.sql(
        "CREATE TABLE a (id INT, v STRING) TBLPROPERTIES ('deletion-vectors.enabled' = 'true')"
    )
    session.sql("INSERT INTO a VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    session.sql("CALL sys.create_tag('a', 't1', 1)")
    session.sql("INSERT INTO a VALUES (5, 'e'), (6, 'f')")
    session.sql("DELETE FROM a WHERE id IN (2, 5)")
    session.sql("CALL sys.create_tag('a', 't3', 3)")
    assert rows(session, "SELECT commit_kind FROM a$snapshots ORDER BY snapshot_id") == [
        ("APPEND",),
        ("APPEND",),
        ("OVERWRITE",),
    ]
    query = "SELECT * FROM paimon_incremental_query('a', '{}', '{}') ORDER BY id"
    assert rows(session, query.format("t1", "t3")) == [(6, "f")]
    assert rows(session, query.format(1, 3)) == [(5, "e"), (6, "f")]
    assert rows(session, query.format(2, 3)) == []
    diff = (
        session.spark.read.format("paimon")
        .option("incremental-between", "1,3")
        .option("incremental-between-scan-mode", "diff")
        .load("default.a")
    )
    assert [tuple(r) for r in diff.collect()] == [(6, "f")]


def test_incremental_between_timestamp(session: PaimonSession) -> None:
    session.sql("CREATE TABLE t (id INT)")
    for i in range(1, 6):
        session.sql(f"INSERT INTO t VALUES {i}")
    table = session.catalog.get_table("default.t")
    set_commit_times(table, {i: T0 + i * 1000 for i in range(1, 6)})
    query = "SELECT * FROM paimon_incremental_between_timestamp('{}', '{}', '{}') ORDER BY id"
    assert rows(session, query.format("t", T0 + 1000, T0 + 2000)) == [(2,)]
    assert rows(session, query.format("default.t", T0 + 2000, T0 + 4000)) == [(3,), (4,)]
    local = [
        dt.datetime.fromtimestamp(millis / 1000).strftime("%Y-%m-%d %H:%M:%S")
        for millis in (T0 + 1000, T0 + 4000)
    ]  # local wall-clock times, as Paimon parses them in the JVM's zone
    assert rows(session, query.format("paimon.default.t", *local)) == [(2,), (3,), (4,)]


def test_incremental_to_auto_tag_and_bucket_rescale(session: PaimonSession) -> None:
    """Paimon-Spark's "incremental query with inconsistent tag bucket": the diff crosses a
    rescale from 1 to 2 buckets, so the end snapshot EXCEPT the start snapshot is read."""
    session.sql("CREATE TABLE t (a INT, b INT) TBLPROPERTIES ('primary-key'='a', 'bucket' = '1')")
    session.sql("INSERT INTO t VALUES (1, 11), (2, 22)")
    session.sql("CALL sys.create_tag('t', '2024-01-01', 1)")
    session.sql("ALTER TABLE t SET TBLPROPERTIES ('bucket' = '2')")
    session.sql("INSERT OVERWRITE t SELECT * FROM t")
    session.sql("INSERT INTO t VALUES (3, 33)")
    session.sql("CALL sys.create_tag('t', '2024-01-03', 3)")
    session.sql("DELETE FROM t WHERE a = 1")
    session.sql("CALL sys.create_tag('t', '2024-01-04', 4)")
    between = "SELECT * FROM paimon_incremental_query('{}', '2024-01-01', '{}') ORDER BY a, b"
    assert rows(session, between.format("t", "2024-01-03")) == [(3, 33)]
    assert rows(session, between.format("t", "2024-01-04")) == [(3, 33)]
    assert rows(session, between.format("`t$audit_log`", "2024-01-04")) == [
        ("-D", 1, 11),
        ("+I", 3, 33),
    ]
    to_tag = "SELECT * FROM paimon_incremental_to_auto_tag('t', '{}') ORDER BY a"
    assert rows(session, to_tag.format("2024-01-03")) == [(3, 33)]
    assert rows(session, to_tag.format("2024-01-01")) == []  # no earlier auto tag
    # Through format("paimon") options Paimon reads no fallback: the rescale is an error.
    df = session.spark.read.format("paimon").option("incremental-between", "2024-01-01,2024-01-03")
    with pytest.raises(Exception, match="bucket number of two snapshots are different"):
        df.load("default.t").collect()
    with pytest.raises(InvalidArgument, match="must be null when you set"):
        session.spark.conf.set("spark.paimon.scan.snapshot-id", "1")
        try:
            session.sql("SELECT * FROM paimon_incremental_query('t', 1, 2)")
        finally:
            session.spark.conf.unset("spark.paimon.scan.snapshot-id")

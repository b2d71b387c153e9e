"""INSERT forms on Paimon tables through the session: column lists, static partitions with
column lists, BY NAME; results read back by us and by Java, refusals change nothing."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import pytest
from pyspark.sql import SparkSession
from sqlglot import exp

from paimon_core.exceptions import PaimonError
from sql_ext.errors import SqlError, SqlParseError
from sql_ext.insert import insert_spec
from sql_ext.session import PaimonSession
from sql_ext.syntax.parse import parse_statement
from tests.interop.helpers import json_rows, pypaimon_read
from tests.unit.procedures.helpers import fingerprint

pytestmark = pytest.mark.spark

COLUMNS = ["a", "b", "c", "dt"]


@pytest.fixture
def session(spark: SparkSession, warehouse: str) -> PaimonSession:
    """`db.t (a INT, b STRING, c INT NOT NULL, dt STRING) PARTITIONED BY (dt)`."""
    session = PaimonSession(spark, warehouse=warehouse)
    session.sql("CREATE DATABASE db")
    session.sql("USE db")
    session.sql("CREATE TABLE t (a INT, b STRING, c INT NOT NULL, dt STRING) PARTITIONED BY (dt)")
    return session


def rows(session: PaimonSession) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in session.sql("SELECT * FROM t ORDER BY c").collect()]


def java_rows(oracle: Callable[..., Any], warehouse: str) -> list[tuple[Any, ...]]:
    return sorted(json_rows(oracle("read", warehouse, "db.t"), COLUMNS), key=lambda r: r[2])


def test_column_list_reorders_and_fills_null(
    session: PaimonSession, warehouse: str, oracle: Callable[..., Any]
) -> None:
    session.sql("INSERT INTO t (c, a, dt) VALUES (1, 10, 'x'), (2, 20, 'y')")
    session.sql("INSERT INTO t (DT, C, B) SELECT 'x', 3, 'three'")
    session.sql(
        "WITH s AS (SELECT 4 AS k) INSERT INTO t (c, b, a, dt) SELECT k, 'four', 40, 'z' FROM s"
    )
    expected = [
        (10, None, 1, "x"),
        (20, None, 2, "y"),
        (None, "three", 3, "x"),
        (40, "four", 4, "z"),
    ]
    assert rows(session) == expected
    assert java_rows(oracle, warehouse) == expected


def test_static_partition_with_column_list(
    session: PaimonSession, warehouse: str, oracle: Callable[..., Any]
) -> None:
    session.sql("INSERT INTO t VALUES (1, 'one', 1, 'x'), (2, 'two', 2, 'y')")
    session.sql("INSERT INTO t PARTITION (dt = 'x') (c, b) SELECT 3, 'three'")
    session.sql("INSERT OVERWRITE t PARTITION (dt = 'y') (c, a) VALUES (4, 40), (5, 50)")
    expected = [
        (1, "one", 1, "x"),
        (None, "three", 3, "x"),
        (40, None, 4, "y"),
        (50, None, 5, "y"),
    ]
    assert rows(session) == expected
    assert java_rows(oracle, warehouse) == expected
    # Static overwrite without a spec replaces the whole table (Spark's default mode).
    session.sql("INSERT OVERWRITE t (dt, c) VALUES ('z', 6)")
    assert rows(session) == [(None, None, 6, "z")]


def test_by_name_matches_any_order_and_case(
    session: PaimonSession, warehouse: str, oracle: Callable[..., Any]
) -> None:
    session.sql("INSERT INTO t BY NAME SELECT 'x' AS dt, 1 AS C, 10 AS a, 'one' AS b")
    session.sql("INSERT INTO t BY NAME SELECT 'y' AS dt, 2 AS c")  # a, b: NULL (Paimon-Spark)
    session.sql("INSERT INTO t PARTITION (dt = 'x') BY NAME SELECT 'three' AS b, 3 AS c")
    expected = [(10, "one", 1, "x"), (None, None, 2, "y"), (None, "three", 3, "x")]
    assert rows(session) == expected
    assert java_rows(oracle, warehouse) == expected
    session.sql("INSERT OVERWRITE t PARTITION (dt = 'y') BY NAME SELECT 4 AS c, 40 AS a")
    assert rows(session) == [(10, "one", 1, "x"), (None, "three", 3, "x"), (40, None, 4, "y")]


def test_primary_key_table_with_column_list(
    session: PaimonSession, warehouse: str, oracle: Callable[..., Any]
) -> None:
    session.sql("CREATE TABLE p (k INT, v STRING, w INT) TBLPROPERTIES ('primary-key' = 'k')")
    session.sql("INSERT INTO p (v, k) VALUES ('a', 1), ('b', 2)")
    session.sql("INSERT INTO p BY NAME SELECT 1 AS k, 7 AS w")
    got = [tuple(r) for r in session.sql("SELECT * FROM p ORDER BY k").collect()]
    assert got == [(1, None, 7), (2, "b", None)]
    java = json_rows(oracle("read", warehouse, "db.p"), ["k", "v", "w"])
    assert java == got
    before = fingerprint(warehouse)
    with pytest.raises(SqlError, match=r"db\.p: NOT NULL column k not given a value"):
        session.sql("INSERT INTO p (v) VALUES ('c')")
    assert fingerprint(warehouse) == before


@pytest.mark.parametrize(
    ("statement", "needle"),
    [
        ("INSERT INTO t (a, dt) VALUES (1, 'x')", "NOT NULL column c not given a value"),
        ("INSERT INTO t BY NAME SELECT 1 AS a, 'x' AS dt", "NOT NULL column c not given a value"),
        ("INSERT INTO t PARTITION (dt = 'x') (a) SELECT 1", "NOT NULL column c"),
        ("INSERT INTO t (a, nope, c, dt) VALUES (1, 2, 3, 'x')", "Column 'nope' is not a column"),
        ("INSERT INTO t (a, A, c, dt) VALUES (1, 2, 3, 'x')", "names a more than once"),
        ("INSERT INTO t (c, dt) VALUES (1, 'x', 2)", "the query has 3 columns but 2"),
        ("INSERT INTO t PARTITION (dt = 'x') (c, dt) SELECT 1, 'y'", "dt given both"),
        ("INSERT INTO t BY NAME SELECT 1 AS c, 'x' AS dt, 2 AS zz", "extra columns: `zz`"),
        ("INSERT INTO t BY NAME SELECT 1 AS c, 2 AS C, 'x' AS dt", "ambiguous column name `c`"),
        ("INSERT INTO t PARTITION (dt = 'x') BY NAME SELECT 1 AS c, 'y' AS dt", "dt given both"),
        ("INSERT INTO t (c) BY NAME SELECT 1 AS c", "BY NAME cannot be used with a column list"),
        ("INSERT INTO t BY NAME VALUES (1, 'x')", "extra columns: `col1`, `col2`"),
    ],
)
def test_refusals_name_the_table_and_change_nothing(
    session: PaimonSession, warehouse: str, statement: str, needle: str
) -> None:
    session.sql("INSERT INTO t VALUES (1, 'one', 1, 'x')")
    before = fingerprint(warehouse)
    with pytest.raises(SqlError) as info:
        session.sql(statement)
    message = str(info.value)
    assert "\n" not in message and needle in message, message
    assert "t" in message.split(":")[0]  # names the table or the statement
    assert fingerprint(warehouse) == before
    assert rows(session) == [(1, "one", 1, "x")]


def test_insert_spec_reads_by_name_and_column_list() -> None:
    tree = parse_statement("INSERT INTO db.t PARTITION (dt = 'x') BY NAME SELECT 1 AS c").tree
    assert isinstance(tree, exp.Insert)
    spec = insert_spec(tree)
    assert spec.by_name and spec.columns is None and list(spec.static) == ["dt"]
    listed = parse_statement("INSERT INTO db.t (`C`, a) SELECT 1, 2").tree
    assert isinstance(listed, exp.Insert)
    assert insert_spec(listed).columns == ("C", "a") and not insert_spec(listed).by_name


def test_defaults_fill_left_out_columns_null_and_default_keyword(
    session: PaimonSession, warehouse: str, oracle: Callable[..., Any]
) -> None:
    """Paimon's docs (spark/default-value): CREATE TABLE ... DEFAULT, INSERT (a) VALUES."""
    session.sql(
        "CREATE TABLE d (a BIGINT, b STRING DEFAULT 'my_value', c INT NOT NULL DEFAULT 5, "
        "day DATE DEFAULT '2024-01-02')"
    )
    fields = session.catalog.get_table("db.d").schema.fields
    assert [f.default_value for f in fields] == [None, "'my_value'", "5", "'2024-01-02'"]
    session.sql("INSERT INTO d (a) VALUES (1), (2)")
    session.sql("INSERT INTO d VALUES (3, DEFAULT, 30, NULL)")  # NULL too: DefaultValueRow
    session.sql("INSERT INTO d BY NAME SELECT 4 AS a, 'four' AS b")
    day = dt.date(2024, 1, 2)
    expected = [
        (1, "my_value", 5, day),
        (2, "my_value", 5, day),
        (3, "my_value", 30, day),
        (4, "four", 5, day),
    ]
    got = [tuple(r) for r in session.sql("SELECT * FROM d ORDER BY a").collect()]
    assert got == expected
    java = json_rows(oracle("read", warehouse, "db.d"), ["a", "b", "c", "day"])
    assert java == [(*r[:3], r[3].isoformat()) for r in expected]
    theirs = pypaimon_read(warehouse, "db.d").sort_by("a")
    assert theirs.column("c").to_pylist() == [5, 5, 30, 5]


@pytest.mark.parametrize(
    ("statement", "needle"),
    [
        ("CREATE TABLE e (a INT DEFAULT 'abc')", "Unsupported default value `'abc'` for type INT"),
        ("CREATE TABLE e (a ARRAY<INT> DEFAULT ARRAY(1))", "Unsupported default value"),
        ("INSERT INTO t VALUES (DEFAULT + 1, 'b', 1, 'x')", "does not parse"),
        ("INSERT INTO t VALUES (1, 'b', DEFAULT, 'x')", "Cannot write null to non-null column"),
    ],
)
def test_default_refusals_change_nothing(
    session: PaimonSession, warehouse: str, statement: str, needle: str
) -> None:
    before = fingerprint(warehouse)
    with pytest.raises((PaimonError, SqlParseError)) as info:
        session.sql(statement)
    assert needle in str(info.value).splitlines()[0], str(info.value)
    assert fingerprint(warehouse) == before

"""MERGE INTO values meeting their columns as Paimon-Spark aligns them
(``PaimonAssignmentUtils``, ``PaimonOutputResolver``; Paimon's ``MergeIntoAlignmentTest``):
ROW values by field name in every clause, not only ``*``, through arrays and maps; strict
refusals of missing or extra nested fields; with ``write.merge-schema`` NULL for what the
source lacks (the current value for ``UPDATE SET *``), ``INSERT (..., s.x)`` adding ``x``;
names matched as ``spark.sql.caseSensitive`` says."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from sql_ext.errors import SqlError
from sql_ext.session import PaimonSession
from tests.interop.helpers import pypaimon_read
from tests.unit.sql_ext.test_dml import rows, snapshots

MERGE_SCHEMA = "spark.paimon.write.merge-schema"
CASE_SENSITIVE = "spark.sql.caseSensitive"


@pytest.fixture
def session(spark: Any, warehouse: str) -> Iterator[PaimonSession]:
    session = PaimonSession(spark, warehouse=warehouse)
    session.sql("CREATE DATABASE db")
    session.sql("USE db")
    yield session
    for key in (MERGE_SCHEMA, CASE_SENSITIVE):
        spark.conf.unset(key)
    spark.catalog.dropTempView("s")
    session.stop()


def table(session: PaimonSession, columns: str, *values: str) -> None:
    session.sql(f"CREATE TABLE t ({columns}) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1')")
    for row in values:
        session.sql(f"INSERT INTO t VALUES {row}")


def source(session: PaimonSession, query: str) -> None:
    session.spark.sql(query).createOrReplaceTempView("s")


INFO = "id INT, info STRUCT<a: STRING, b: STRING>"
OLD = "(1, named_struct('a', 'oldA', 'b', 'oldB'))"


def test_rows_align_by_name_in_every_clause(session: PaimonSession) -> None:
    table(
        session,
        "id INT, info STRUCT<a: STRING, b: STRING>, "
        "arr ARRAY<STRUCT<a: STRING, b: INT>>, m MAP<STRING, STRUCT<a: INT, b: INT>>",
        "(1, named_struct('a', 'oldA', 'b', 'oldB'), NULL, NULL)",
    )
    source(
        session,
        "SELECT 1 AS id, named_struct('B', 'newB', 'A', 'newA') AS info, "
        "array(named_struct('b', 1, 'a', 'x')) AS arr, map('k', named_struct('b', 2, 'a', 3)) AS m "
        "UNION ALL SELECT 2, named_struct('b', 'b2', 'a', 'a2'), NULL, NULL",
    )
    session.sql(
        "MERGE INTO t USING s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET info = s.info, arr = s.arr, t.m = s.m "
        "WHEN NOT MATCHED THEN INSERT (id, t.info) VALUES (s.id, s.info)"
    )
    got = rows(session, "SELECT id, info.a, info.b, arr[0].a, arr[0].b, m['k'].a FROM t")
    assert got == [(1, "newA", "newB", "x", 1, 3), (2, "a2", "b2", None, None, None)]
    source(
        session,
        "SELECT 1 AS id, named_struct('b', 'B*', 'a', 'A*') AS info, "
        "array(named_struct('b', 5, 'a', 'y')) AS arr, "
        "CAST(NULL AS MAP<STRING, STRUCT<b: INT, a: INT>>) AS m",
    )
    session.sql("MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET *")
    got = rows(session, "SELECT info.a, info.b, arr[0].a, arr[0].b, m FROM t WHERE id = 1")
    assert got == [("A*", "B*", "y", 5, None)]
    # A nested field assigned a ROW value, and a literal struct, align the same way.
    session.sql(
        "MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED BY SOURCE "
        "THEN UPDATE SET info = named_struct('b', 'lb', 'a', 'la')"
    )
    assert rows(session, "SELECT info.a, info.b FROM t WHERE id = 2") == [("la", "lb")]


@pytest.mark.parametrize(
    ("columns", "query", "clause", "message"),
    [
        (
            INFO,
            "SELECT 1 AS id, named_struct('a', 'newA') AS info",
            "WHEN MATCHED THEN UPDATE SET *",
            "nested struct field `info.b` is missing in source. Enable "
            "'spark.paimon.write.merge-schema' to fill it with NULL.",
        ),
        (
            "id INT, info STRUCT<a: STRING>",
            "SELECT 1 AS id, named_struct('a', 'newA', 'b', 'newB') AS info",
            "WHEN MATCHED THEN UPDATE SET *",
            "extra struct fields at `info`: `b`",
        ),
        (
            INFO,
            "SELECT 2 AS id, named_struct('a', 'newA') AS info",
            "WHEN NOT MATCHED THEN INSERT *",
            "nested struct field `info.b` is missing",
        ),
        (
            INFO,
            "SELECT 1 AS id, named_struct('a', 'newA') AS info",
            "WHEN MATCHED THEN UPDATE SET info = s.info",
            "nested struct field `info.b` is missing",
        ),
        (
            "id INT, arr ARRAY<STRUCT<a: STRING, b: STRING>>",
            "SELECT 2 AS id, array(named_struct('a', 'x')) AS arr",
            "WHEN NOT MATCHED THEN INSERT (id, arr) VALUES (s.id, s.arr)",
            "nested struct field `arr.element.b` is missing",
        ),
        (
            INFO,
            "SELECT 2 AS id, named_struct('a', 'x', 'A', 'y', 'b', 'z') AS info",
            "WHEN NOT MATCHED THEN INSERT *",
            "due to ambiguous column name `info.a`",
        ),
        (
            INFO,
            "SELECT 2 AS id, 'x' AS a",
            "WHEN NOT MATCHED THEN INSERT (id, info.a) VALUES (s.id, s.a)",
            "INSERT assignment keys cannot be nested fields: info.a",
        ),
        (
            "id INT, name STRING",
            "SELECT 2 AS id, 'b' AS name, 99 AS score",
            "WHEN NOT MATCHED THEN INSERT (id, name, s.score) VALUES (s.id, s.name, s.score)",
            "cannot resolve column s.score of the INSERT",
        ),
    ],
)
def test_strict_refusals_change_nothing(
    session: PaimonSession, columns: str, query: str, clause: str, message: str
) -> None:
    table(session, columns, "(1, NULL)")
    source(session, query)
    before = rows(session, "SELECT * FROM t")
    with pytest.raises(SqlError, match=r"^MERGE INTO paimon\.db\.t: ") as err:
        session.sql(f"MERGE INTO t USING s ON t.id = s.id {clause}")
    assert message in str(err.value)
    assert len(snapshots(session, "db.t")) == 1
    assert rows(session, "SELECT * FROM t") == before


def test_merge_schema_fills_and_keeps_nested_fields(session: PaimonSession, warehouse: str) -> None:
    session.spark.conf.set(MERGE_SCHEMA, "true")
    table(
        session,
        "id INT, l1 STRUCT<a: STRING, l2: STRUCT<b: STRING, c: STRING>>, info STRUCT<a: STRING, "
        "b: STRING>",
        "(1, named_struct('a', 'oldA', 'l2', named_struct('b', 'oldB', 'c', 'oldC')), "
        "named_struct('a', 'i1', 'b', 'j1'))",
        "(2, NULL, named_struct('a', 'i2', 'b', 'j2'))",
        "(3, NULL, named_struct('a', 'i3', 'b', 'j3'))",
    )
    source(
        session,
        "SELECT 1 AS id, named_struct('a', 'newA', 'l2', named_struct('b', 'newB')) AS l1, "
        "CAST(NULL AS STRUCT<a: STRING>) AS info "
        "UNION ALL SELECT 2, NULL, named_struct('a', 'x2') "
        "UNION ALL SELECT 4, named_struct('a', 'a4', 'l2', named_struct('b', 'b4')), NULL",
    )
    session.sql(
        "MERGE INTO t USING s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
    )
    got = rows(session, "SELECT id, l1.a, l1.l2.b, l1.l2.c, info.a, info.b FROM t")
    assert got == [
        (1, "newA", "newB", "oldC", None, "j1"),  # deep leaves kept; NULL info keeps `b`
        (2, None, None, None, "x2", "j2"),  # NULL over NULL stays NULL
        (3, None, None, None, "i3", "j3"),
        (4, "a4", "b4", None, None, None),  # INSERT *: what the source lacks is NULL
    ]
    assert len(session.catalog.get_table("db.t").schema.fields) == 3  # nothing to add
    source(session, "SELECT 3 AS id, named_struct('a', 'x3') AS info")
    session.sql("MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET info = s.info")
    assert rows(session, "SELECT info.a, info.b FROM t WHERE id = 3") == [("x3", None)]
    # Java's oracle prints no ROW columns: pypaimon reads the files instead.
    other = {r["id"]: r["info"] for r in pypaimon_read(warehouse, "db.t").to_pylist()}
    assert other[3] == {"a": "x3", "b": None} and other[1] == {"a": None, "b": "j1"}


def test_merge_schema_insert_key_of_the_source_adds_only_that_column(
    session: PaimonSession, warehouse: str, oracle: Any
) -> None:
    session.spark.conf.set(MERGE_SCHEMA, "true")
    table(session, "id INT, name STRING", "(1, 'a')")
    source(session, "SELECT 2 AS id, 'b' AS name, 99 AS score, 7 AS other")
    session.sql(
        "MERGE INTO t USING s ON t.id = s.id "
        "WHEN NOT MATCHED THEN INSERT (id, t.name, s.score) VALUES (s.id, s.name, s.score)"
    )
    fields = session.catalog.get_table("db.t").schema.fields
    assert [(f.name, str(f.type)) for f in fields] == [
        ("id", "INT NOT NULL"),
        ("name", "STRING"),
        ("score", "INT"),
    ]
    assert rows(session, "SELECT * FROM t") == [(1, "a", None), (2, "b", 99)]
    java = sorted((r["id"], r["name"], r["score"]) for r in oracle("read", warehouse, "db.t"))
    assert java == [(1, "a", None), (2, "b", 99)]


def test_names_match_as_spark_case_sensitivity_says(session: PaimonSession) -> None:
    table(session, INFO + ", name STRING", "(1, named_struct('a', 'oldA', 'b', 'oldB'), 'n')")
    source(session, "SELECT 1 AS ID, named_struct('A', 'newA', 'B', 'newB') AS INFO, 'N' AS NAME")
    statement = "MERGE INTO t USING s ON t.id = s.ID WHEN MATCHED THEN UPDATE SET *"
    session.spark.conf.set(CASE_SENSITIVE, "true")
    with pytest.raises(SqlError, match="Cannot UPDATE \\* target column 'id'"):
        session.sql(statement)
    session.spark.conf.set(MERGE_SCHEMA, "true")
    source(session, "SELECT 1 AS id, named_struct('A', 'newA', 'b', 'newB') AS info, 'N' AS name")
    session.sql(statement.replace("s.ID", "s.id"))
    got = rows(session, "SELECT id, info.a, info.b, name FROM t")
    assert got == [(1, "oldA", "newB", "N")]  # `A` is no field `a`: its value is kept
    fields = session.catalog.get_table("db.t").schema.fields
    assert str(fields[1].type) == "ROW<`a` STRING, `b` STRING, `A` STRING>"

"""MERGE INTO through PaimonSession: every clause form of Paimon's docs on primary-key and
append tables, one snapshot of the kind Paimon commits, sources of every kind, Java and
pypaimon reading the result, and refusals that change nothing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from sql_ext.errors import SqlError
from sql_ext.session import PaimonSession
from tests.interop.helpers import pypaimon_read
from tests.interop.helpers import rows as arrow_rows
from tests.unit.sql_ext.test_dml import data_files, rows, snapshots


@pytest.fixture
def session(spark: Any, warehouse: str) -> Iterator[PaimonSession]:
    session = PaimonSession(spark, warehouse=warehouse)
    session.sql("CREATE DATABASE db").collect()
    session.sql("CREATE TABLE db.s (a INT, b INT, c STRING)")
    session.sql(
        "INSERT INTO db.s VALUES (1, 10, 'c1'), (2, 20, 'c2'), (5, 50, 'c5'), (7, 70, 'c9x')"
    )
    yield session
    session.stop()


@pytest.fixture
def pk(session: PaimonSession) -> PaimonSession:
    """db.t (a INT, b INT, c STRING), key a, two buckets: one snapshot."""
    session.sql(
        "CREATE TABLE db.t (a INT, b INT, c STRING) "
        "TBLPROPERTIES ('primary-key' = 'a', 'bucket' = '2')"
    )
    session.sql("INSERT INTO db.t VALUES (1, 1, 'a'), (2, 2, 'b'), (3, 3, 'c'), (5, 5, 'e')")
    return session


@pytest.fixture
def append(session: PaimonSession) -> PaimonSession:
    """db.t (a INT, b INT, c STRING) partitioned by c: one snapshot."""
    session.sql("CREATE TABLE db.t (a INT, b INT, c STRING) PARTITIONED BY (c)")
    session.sql("INSERT INTO db.t VALUES (1, 1, 'p'), (2, 2, 'p'), (3, 3, 'q'), (4, 4, 'r')")
    return session


DOCS_EXAMPLE = """
MERGE INTO db.t AS target
USING db.s AS source
ON target.a = source.a
WHEN MATCHED AND target.a = 5 THEN UPDATE SET b = source.b + target.b
WHEN MATCHED AND source.c > 'c1' THEN UPDATE SET *
WHEN MATCHED THEN DELETE
WHEN NOT MATCHED AND c > 'c9' THEN INSERT (a, b, c) VALUES (a, b * 2, c)
WHEN NOT MATCHED THEN INSERT *
"""
# a=1: matched, source c1 is not > 'c1': deleted. a=2: UPDATE SET * from the source.
# a=3: not matched by the source: kept. a=5: b = 50 + 5. a=7: inserted, b doubled.
DOCS_RESULT = [(2, 20, "c2"), (3, 3, "c"), (5, 55, "e"), (7, 140, "c9x")]


def test_docs_example_on_a_primary_key_table(
    pk: PaimonSession, warehouse: str, oracle: Any
) -> None:
    pk.sql(DOCS_EXAMPLE)
    assert rows(pk, "SELECT * FROM db.t") == DOCS_RESULT
    assert snapshots(pk) == [(1, "APPEND"), (2, "APPEND")]
    java = oracle("read", warehouse, "db.t")
    assert sorted((r["a"], r["b"], r["c"]) for r in java) == DOCS_RESULT
    assert arrow_rows(pypaimon_read(warehouse, "db.t")) == DOCS_RESULT
    assert rows(pk, "SELECT * FROM db.t VERSION AS OF 1") == [
        (1, 1, "a"),
        (2, 2, "b"),
        (3, 3, "c"),
        (5, 5, "e"),
    ]


def test_docs_example_on_an_append_table_rewrites_touched_files(
    append: PaimonSession, warehouse: str, oracle: Any
) -> None:
    before = data_files(warehouse)
    append.sql(DOCS_EXAMPLE)
    # a=1, a=2 matched (files of c='p'); a=5, a=7 inserted; a=3 and a=4 untouched.
    expected = [(2, 20, "c2"), (3, 3, "q"), (4, 4, "r"), (5, 50, "c5"), (7, 140, "c9x")]
    assert rows(append, "SELECT * FROM db.t") == expected
    assert snapshots(append) == [(1, "APPEND"), (2, "OVERWRITE")]
    live = {r[0] for r in append.sql("SELECT file_path FROM db.t$files").collect()}
    assert {p for p in before if "c=q" in p or "c=r" in p} <= live
    assert not {p for p in before if "c=p" in p} & live
    java = oracle("read", warehouse, "db.t")
    assert sorted((r["a"], r["b"], r["c"]) for r in java) == expected


def test_not_matched_by_source_and_subquery_source(pk: PaimonSession) -> None:
    pk.sql(
        "MERGE INTO db.t t USING (SELECT a, b * 100 AS b FROM db.s WHERE a < 3) s ON t.a = s.a "
        "WHEN MATCHED THEN UPDATE SET t.b = s.b "
        "WHEN NOT MATCHED BY SOURCE AND b > 4 THEN DELETE "
        "WHEN NOT MATCHED BY SOURCE THEN UPDATE SET c = concat(c, '!')"
    )
    assert rows(pk, "SELECT * FROM db.t") == [(1, 1000, "a"), (2, 2000, "b"), (3, 3, "c!")]
    assert len(snapshots(pk)) == 2


def test_append_table_by_source_clauses_and_inserts_only(append: PaimonSession) -> None:
    append.sql(
        "MERGE INTO db.t USING db.s ON t.a = s.a "
        "WHEN NOT MATCHED BY SOURCE AND t.c = 'q' THEN DELETE "
        "WHEN NOT MATCHED BY SOURCE THEN UPDATE SET b = -1"
    )
    assert rows(append, "SELECT * FROM db.t") == [(1, 1, "p"), (2, 2, "p"), (4, -1, "r")]
    assert snapshots(append)[-1] == (2, "OVERWRITE")
    append.sql("MERGE INTO db.t USING db.s ON t.a = s.a WHEN NOT MATCHED THEN INSERT *")
    assert rows(append, "SELECT a FROM db.t") == [(1,), (2,), (4,), (5,), (7,)]
    assert snapshots(append)[-1] == (3, "APPEND")  # nothing rewritten
    append.sql("MERGE INTO db.t USING db.s ON t.a = s.a WHEN NOT MATCHED THEN INSERT *")
    assert len(snapshots(append)) == 3  # nothing changed: no snapshot


def test_source_of_spark_view_and_time_travel(pk: PaimonSession, spark: Any) -> None:
    spark.createDataFrame(
        [(3, 33, "z"), (9, 99, "n")], "a INT, b INT, c STRING"
    ).createOrReplaceTempView("src")
    pk.sql(
        "MERGE INTO db.t USING src ON t.a = src.a "
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT (a, c) VALUES (a, c)"
    )
    assert rows(pk, "SELECT * FROM db.t WHERE a IN (3, 9)") == [(3, 33, "z"), (9, None, "n")]
    pk.sql("INSERT INTO db.s VALUES (3, 300, 'new')")
    pk.sql(
        "MERGE INTO db.t USING db.s VERSION AS OF 1 AS s ON t.a = s.a "
        "WHEN MATCHED AND s.a = 3 THEN UPDATE SET b = s.b"
    )
    assert rows(pk, "SELECT b FROM db.t WHERE a = 3") == [(33,)]  # snapshot 1 has no a = 3
    spark.catalog.dropTempView("src")


REFUSED = [
    (
        "MERGE INTO db.t USING (SELECT 1 AS a UNION ALL SELECT 1) s ON t.a = s.a "
        "WHEN MATCHED THEN DELETE",
        "match more than one source rows",
    ),
    (
        "MERGE INTO db.t USING db.s ON t.b = s.b WHEN MATCHED THEN UPDATE SET a = s.a",
        "Can't update the primary key column in update clause",
    ),
    (
        "MERGE INTO db.t USING (SELECT a FROM db.s) s ON t.a = s.a WHEN NOT MATCHED THEN INSERT *",
        "Cannot INSERT * into target column 'b'",
    ),
    (
        "MERGE INTO db.t USING db.s ON t.a = s.a WHEN MATCHED THEN DELETE "
        "WHEN MATCHED AND s.b > 1 THEN UPDATE SET *",
        "only the last WHEN MATCHED clause can omit the condition",
    ),
    (
        "MERGE INTO db.t USING db.s ON t.a IN (SELECT a FROM db.s) WHEN MATCHED THEN DELETE",
        "subqueries are not supported",
    ),
    (
        "MERGE INTO db.t USING db.s ON t.a = s.a WHEN MATCHED THEN UPDATE SET nope = 1",
        "cannot resolve column nope",
    ),
    (
        "MERGE INTO db.t USING db.s ON t.a = s.a WHEN MATCHED THEN UPDATE SET b = nosuch(1)",
        "MERGE INTO paimon.db.t: [UNRESOLVED_ROUTINE]",
    ),
]


@pytest.mark.parametrize(("statement", "named"), REFUSED, ids=[s for s, _ in REFUSED])
def test_refused_merge_changes_nothing(
    pk: PaimonSession, warehouse: str, statement: str, named: str
) -> None:
    files = data_files(warehouse, "t")
    with pytest.raises(SqlError) as err:
        pk.sql(statement)
    message = str(err.value)
    assert named.lower() in message.lower() and "\n" not in message
    assert data_files(warehouse, "t") == files
    assert len(snapshots(pk)) == 1


def test_merge_refused_by_merge_engine(session: PaimonSession) -> None:
    session.sql(
        "CREATE TABLE db.f (a INT, b INT, PRIMARY KEY (a) NOT ENFORCED) "
        "TBLPROPERTIES ('bucket' = '1', 'merge-engine' = 'first-row')"
    )
    with pytest.raises(SqlError, match="merge engine first-row can not support MergeInto"):
        session.sql("MERGE INTO db.f USING db.s ON f.a = s.a WHEN MATCHED THEN DELETE")


def test_partitioned_primary_key_table_and_nested_fields(session: PaimonSession) -> None:
    session.sql(
        "CREATE TABLE db.n (k INT, dt STRING, s STRUCT<x: INT, y: STRING>, "
        "PRIMARY KEY (k, dt) NOT ENFORCED) PARTITIONED BY (dt) TBLPROPERTIES ('bucket' = '1')"
    )
    session.sql(
        "INSERT INTO db.n VALUES (1, 'd1', named_struct('x', 1, 'y', 'a')), "
        "(2, 'd1', named_struct('x', 2, 'y', 'b')), (1, 'd2', named_struct('x', 3, 'y', 'c'))"
    )
    session.sql(
        "MERGE INTO db.n USING (SELECT a AS k, 'd1' AS dt, c FROM db.s) src "
        "ON n.k = src.k AND n.dt = src.dt "
        "WHEN MATCHED AND src.k = 2 THEN DELETE "
        "WHEN MATCHED THEN UPDATE SET s.y = src.c "
        "WHEN NOT MATCHED AND src.k = 5 THEN INSERT (k, dt, s) VALUES (k, 'd3', named_struct('x', 0, 'y', c))"
    )
    got = [(r.k, r.dt, r.s.x, r.s.y) for r in session.sql("SELECT * FROM db.n").collect()]
    assert sorted(got) == [(1, "d1", 1, "c1"), (1, "d2", 3, "c"), (5, "d3", 0, "c5")]
    assert snapshots(session, "db.n")[-1] == (2, "APPEND")


def test_merge_into_empty_tables_inserts(session: PaimonSession) -> None:
    session.sql("CREATE TABLE db.e (a INT, b INT, c STRING) PARTITIONED BY (c)")
    session.sql("CREATE TABLE db.k (a INT, b INT, c STRING) TBLPROPERTIES ('primary-key' = 'a')")
    for name in ("e", "k"):
        session.sql(
            f"MERGE INTO db.{name} t USING db.s ON t.a = s.a "
            "WHEN MATCHED THEN DELETE WHEN NOT MATCHED AND s.a > 2 THEN INSERT *"
        )
        assert rows(session, f"SELECT a FROM db.{name}") == [(5,), (7,)]
        assert snapshots(session, f"db.{name}") == [(1, "APPEND")]


@pytest.mark.parametrize(
    ("using", "on"),
    [
        ("(VALUES (2, 200, 'v2'), (9, 900, 'v9')) AS src(a, b, c)", "t.a = src.a"),
        ("(VALUES (2, 200, 'v2'), (9, 900, 'v9')) src(a, b, c)", "t.a = src.a"),
        ("(VALUES (2, 200, 'v2'), (9, 900, 'v9')) src", "t.a = src.col1"),
        (
            "(SELECT * FROM VALUES (2, 200, 'v2'), (9, 900, 'v9') AS v(x, y, z)) src(a, b, c)",
            "t.a = src.a",
        ),
    ],
)
def test_a_values_source_as_spark_reads_it(pk: PaimonSession, using: str, on: str) -> None:
    columns = ("a", "b", "c") if "src.a" in on else ("col1", "col2", "col3")
    a, b, c = (f"src.{name}" for name in columns)
    pk.sql(
        f"MERGE INTO db.t USING {using} ON {on} "
        f"WHEN MATCHED THEN UPDATE SET b = {b}, c = {c} "
        f"WHEN NOT MATCHED THEN INSERT (a, b, c) VALUES ({a}, {b}, {c})"
    )
    assert rows(pk, "SELECT * FROM db.t") == [
        (1, 1, "a"),
        (2, 200, "v2"),
        (3, 3, "c"),
        (5, 5, "e"),
        (9, 900, "v9"),
    ]
    assert snapshots(pk) == [(1, "APPEND"), (2, "APPEND")]


def test_a_values_source_with_too_many_column_names_is_refused(pk: PaimonSession) -> None:
    with pytest.raises(Exception, match=r"MERGE INTO.*src.*2 columns.*3 names") as raised:
        pk.sql(
            "MERGE INTO db.t USING (VALUES (2, 200)) AS src(a, b, c) ON t.a = src.a "
            "WHEN MATCHED THEN DELETE"
        )
    assert "\n" not in str(raised.value)
    assert snapshots(pk) == [(1, "APPEND")]

"""UPDATE through PaimonSession: the rows after it, one snapshot of the kind Paimon commits,
the files a copy-on-write rewrites, nested fields, and refusals that change nothing."""

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
    yield session
    session.stop()


@pytest.fixture
def append(session: PaimonSession) -> PaimonSession:
    """db.t (id INT, v STRING, dt STRING) partitioned by dt: two snapshots, three files."""
    session.sql("CREATE TABLE db.t (id INT, v STRING, dt STRING) PARTITIONED BY (dt)")
    session.sql("INSERT INTO db.t VALUES (1, 'a', 'x'), (2, 'b', 'x'), (3, 'c', 'y')")
    session.sql("INSERT INTO db.t VALUES (4, 'd', 'z')")
    return session


@pytest.fixture
def pk(session: PaimonSession) -> PaimonSession:
    """db.t (k INT, v STRING NOT NULL, n INT, dt STRING), key (k, dt), two buckets."""
    session.sql(
        "CREATE TABLE db.t (k INT, v STRING NOT NULL, n INT, dt STRING, "
        "PRIMARY KEY (k, dt) NOT ENFORCED) PARTITIONED BY (dt) TBLPROPERTIES ('bucket' = '2')"
    )
    session.sql("INSERT INTO db.t VALUES (1, 'a', 10, 'x'), (2, 'b', 20, 'x'), (3, 'c', 30, 'y')")
    return session


def test_update_append_table_rewrites_only_touched_files(
    append: PaimonSession, warehouse: str, oracle: Any
) -> None:
    before = data_files(warehouse)
    append.sql("UPDATE db.t AS a SET v = upper(a.v), id = id * 10 WHERE a.id = 1 OR dt = 'y'")
    expected = sorted([(2, "b", "x"), (4, "d", "z"), (10, "A", "x"), (30, "C", "y")], key=repr)
    assert rows(append, "SELECT * FROM db.t") == expected
    assert snapshots(append) == [(1, "APPEND"), (2, "APPEND"), (3, "OVERWRITE")]
    live = _live(append)
    assert {p for p in before if "dt=z" in p} <= live  # no match there: kept
    assert not {p for p in before if "dt=y" in p} & live  # rewritten
    assert rows(append, "SELECT * FROM db.t VERSION AS OF 2") == [
        (1, "a", "x"),
        (2, "b", "x"),
        (3, "c", "y"),
        (4, "d", "z"),
    ]
    java = oracle("read", warehouse, "db.t")
    assert sorted(((r["id"], r["v"], r["dt"]) for r in java), key=repr) == expected
    append.sql("UPDATE db.t SET v = 'none' WHERE id = 99")
    assert len(snapshots(append)) == 3  # nothing matched: no snapshot


def _live(session: PaimonSession) -> set[str]:
    """The paths of the latest snapshot's data files of db.t."""
    return {r[0] for r in session.sql("SELECT file_path FROM db.t$files").collect()}


def test_update_append_table_null_condition_keeps_the_row(append: PaimonSession) -> None:
    append.sql("INSERT INTO db.t VALUES (NULL, 'n', 'x')")
    append.sql("UPDATE db.t SET v = 'big' WHERE id > 1")
    assert rows(append, "SELECT id, v FROM db.t") == [
        (1, "a"),
        (2, "big"),
        (3, "big"),
        (4, "big"),
        (None, "n"),
    ]
    append.sql("UPDATE db.t SET v = DEFAULT")  # no WHERE: every row; no default: NULL
    assert rows(append, "SELECT DISTINCT v FROM db.t") == [(None,)]


def test_update_primary_key_table_writes_upserts(
    pk: PaimonSession, warehouse: str, oracle: Any
) -> None:
    pk.sql("UPDATE db.t SET n = n + 1, v = concat(v, '!') WHERE k IN (SELECT 1) OR dt = 'y'")
    expected = [(1, "a!", 11, "x"), (2, "b", 20, "x"), (3, "c!", 31, "y")]
    assert rows(pk, "SELECT * FROM db.t") == expected
    assert snapshots(pk) == [(1, "APPEND"), (2, "APPEND")]
    java = oracle("read", warehouse, "db.t")
    assert sorted((r["k"], r["v"], r["n"], r["dt"]) for r in java) == expected
    assert arrow_rows(pypaimon_read(warehouse, "db.t")) == expected
    pk.sql("UPDATE db.t SET n = 0 WHERE k = 99")
    assert len(snapshots(pk)) == 2


def test_update_nested_struct_fields(session: PaimonSession) -> None:
    session.sql(
        "CREATE TABLE db.s (id INT, s STRUCT<c1: INT, c2: STRING, d: STRUCT<e: INT>>, name STRING)"
        " TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1')"
    )
    session.sql(
        "INSERT INTO db.s VALUES (1, named_struct('c1', 1, 'c2', 'a', 'd', named_struct('e', 5)),"
        " 'x'), (2, NULL, 'y')"
    )
    session.sql("UPDATE db.s SET s.c2 = 'a_new', s.d.e = s.d.e + 1 WHERE s.c1 = 1")
    session.sql("UPDATE db.s SET name = 'z', s.c1 = 7 WHERE id = 2")
    got = [
        (r.id, r.s.asDict(True) if r.s else None, r.name)
        for r in session.sql("SELECT * FROM db.s ORDER BY id").collect()
    ]
    assert got == [
        (1, {"c1": 1, "c2": "a_new", "d": {"e": 6}}, "x"),
        (2, {"c1": 7, "c2": None, "d": None}, "z"),  # a NULL struct: Spark's named_struct
    ]
    session.sql("CREATE TABLE db.a (id INT, s STRUCT<c1: INT, c2: STRING>)")
    session.sql("INSERT INTO db.a VALUES (1, named_struct('c1', 1, 'c2', 'a'))")
    session.sql("UPDATE db.a SET s.c2 = 'b' WHERE s.c1 = 1")
    assert session.sql("SELECT s.c2 FROM db.a").collect()[0][0] == "b"


REFUSED = [
    ("UPDATE db.t SET k = 5 WHERE k = 1", "Can't update the primary key column k"),
    ("UPDATE db.t SET v = 'a', v = 'b'", "Multiple assignments for 'v'"),
    ("UPDATE db.t SET nope = 1", "cannot resolve column nope"),
    ("UPDATE db.t SET v.x = 1", "only supported for StructType"),
    ("UPDATE db.t SET n = nosuchfunction(1)", "UPDATE paimon.db.t: [UNRESOLVED_ROUTINE]"),
    ("UPDATE db.t SET v = NULL WHERE k = 1", "non-null column 'v'"),
]


@pytest.mark.parametrize(("statement", "named"), REFUSED, ids=[s for s, _ in REFUSED])
def test_refused_update_changes_nothing(
    pk: PaimonSession, warehouse: str, statement: str, named: str
) -> None:
    files = data_files(warehouse)
    with pytest.raises(Exception) as err:
        pk.sql(statement)
    message = str(err.value)
    assert named.lower() in message.lower() and "\n" not in message.strip()
    assert data_files(warehouse) == files
    assert len(snapshots(pk)) == 1


def test_update_refused_by_merge_engine_and_subquery_on_append(
    session: PaimonSession, append: PaimonSession
) -> None:
    session.sql(
        "CREATE TABLE db.agg (k INT, v INT, PRIMARY KEY (k) NOT ENFORCED) "
        "TBLPROPERTIES ('bucket' = '1', 'merge-engine' = 'aggregation')"
    )
    with pytest.raises(SqlError, match="merge engine aggregation can not support Update"):
        session.sql("UPDATE db.agg SET v = 1")
    with pytest.raises(SqlError, match=r"UPDATE paimon.db.t: subqueries are not supported"):
        append.sql("UPDATE db.t SET v = 'q' WHERE id IN (SELECT 1)")
    assert len(snapshots(append)) == 2

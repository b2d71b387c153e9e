"""TRUNCATE TABLE and DELETE FROM through PaimonSession: the rows left, one snapshot of the
kind Paimon commits, time travel still reading the rows, Java reading the result, and
refusals or failures that commit nothing."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from paimon_core.operations.commit import FileStoreCommit
from sql_ext.errors import SqlError
from sql_ext.session import PaimonSession


@pytest.fixture
def session(spark: Any, warehouse: str) -> Iterator[PaimonSession]:
    session = PaimonSession(spark, warehouse=warehouse)
    session.sql("CREATE DATABASE db").collect()
    yield session
    session.stop()


def rows(session: PaimonSession, query: str) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in session.sql(query).collect()), key=repr)


def snapshots(session: PaimonSession, name: str = "db.t") -> list[tuple[int, str]]:
    return rows(session, f"SELECT snapshot_id, commit_kind FROM {name}$snapshots")


def data_files(warehouse: str, name: str = "t") -> set[str]:
    root = os.path.join(warehouse, "db.db", name)
    return {
        os.path.join(d, f) for d, _, files in os.walk(root) for f in files if f.startswith("data-")
    }


@pytest.fixture
def append(session: PaimonSession) -> PaimonSession:
    """db.t (id INT, dt STRING, h INT) partitioned by (dt, h): two snapshots."""
    session.sql("CREATE TABLE db.t (id INT, dt STRING, h INT) PARTITIONED BY (dt, h)")
    session.sql("INSERT INTO db.t VALUES (1, 'x', 1), (2, 'x', 2), (3, 'y', 1)")
    session.sql("INSERT INTO db.t VALUES (4, 'z', 3)")
    return session


@pytest.fixture
def pk(session: PaimonSession) -> PaimonSession:
    """db.t (k INT, v STRING NOT NULL, dt STRING), key (k, dt), two buckets: two snapshots."""
    session.sql(
        "CREATE TABLE db.t (k INT, v STRING NOT NULL, dt STRING, PRIMARY KEY (k, dt) NOT ENFORCED)"
        " PARTITIONED BY (dt) TBLPROPERTIES ('bucket' = '2')"
    )
    session.sql("INSERT INTO db.t VALUES (1, 'a', 'x'), (2, 'b', 'x'), (3, 'c', 'y')")
    session.sql("INSERT INTO db.t VALUES (4, 'd', 'y'), (2, 'B', 'x')")
    return session


ALL = [(1, "x", 1), (2, "x", 2), (3, "y", 1), (4, "z", 3)]


def test_truncate_table(append: PaimonSession) -> None:
    append.sql("TRUNCATE TABLE db.t")
    assert rows(append, "SELECT * FROM db.t") == []
    assert snapshots(append)[-1] == (3, "OVERWRITE")
    assert len(snapshots(append)) == 3
    assert rows(append, "SELECT * FROM db.t VERSION AS OF 2") == ALL


def test_truncate_partition(append: PaimonSession) -> None:
    append.sql("TRUNCATE TABLE db.t PARTITION (dt = 'x')")
    assert rows(append, "SELECT * FROM db.t") == [(3, "y", 1), (4, "z", 3)]
    assert snapshots(append) == [(1, "APPEND"), (2, "APPEND"), (3, "OVERWRITE")]
    append.sql("USE db")
    append.sql("TRUNCATE TABLE t PARTITION (dt = 'y', h = 1)")
    assert rows(append, "SELECT * FROM db.t") == [(4, "z", 3)]
    assert rows(append, "SELECT * FROM db.t VERSION AS OF 2") == ALL


def test_truncate_refusals_change_nothing(append: PaimonSession) -> None:
    with pytest.raises(SqlError, match=r"TRUNCATE TABLE paimon.db.t PARTITION: id is not a"):
        append.sql("TRUNCATE TABLE db.t PARTITION (id = 1)")
    with pytest.raises(SqlError, match=r"TRUNCATE TABLE paimon.db.t PARTITION"):
        append.sql("TRUNCATE TABLE db.t PARTITION (dt = 'x', nope = 2)")
    assert len(snapshots(append)) == 2
    assert rows(append, "SELECT * FROM db.t") == ALL


def test_delete_partition_predicate_truncates_matching_partitions(
    append: PaimonSession, warehouse: str, oracle: Any
) -> None:
    append.sql("DELETE FROM db.t AS a WHERE a.dt = 'x' OR (dt = 'y' AND h > 0)")
    assert rows(append, "SELECT * FROM db.t") == [(4, "z", 3)]
    assert snapshots(append)[-1] == (3, "OVERWRITE")
    append.sql("DELETE FROM db.t WHERE dt = 'nothing'")
    assert len(snapshots(append)) == 3  # nothing matched: no snapshot
    java = oracle("read", warehouse, "db.t")
    assert [(r["id"], r["dt"], r["h"]) for r in java] == [(4, "z", 3)]
    assert rows(append, "SELECT * FROM db.t VERSION AS OF 2") == ALL


def test_delete_without_where_truncates(append: PaimonSession, warehouse: str, oracle: Any) -> None:
    append.sql("DELETE FROM db.t")
    assert rows(append, "SELECT * FROM db.t") == []
    assert snapshots(append)[-1] == (3, "OVERWRITE")
    assert oracle("read", warehouse, "db.t") == []


def test_delete_on_append_table_rewrites_touched_files(
    append: PaimonSession, warehouse: str, oracle: Any
) -> None:
    append.sql("INSERT INTO db.t VALUES (5, 'x', 1), (NULL, 'x', 1)")
    before = data_files(warehouse)
    append.sql("DELETE FROM db.t AS a WHERE a.id = 1 OR id > 3")
    left = sorted([(None, "x", 1), (2, "x", 2), (3, "y", 1)], key=repr)
    assert rows(append, "SELECT * FROM db.t") == left  # NULL id: the predicate is not true
    assert snapshots(append)[-1] == (4, "OVERWRITE")
    snapshot = append.catalog.get_table("db.t").latest_snapshot()
    assert snapshot is not None
    live = {
        e.file.file_name for e in append.catalog.get_table("db.t").new_scan().read_entries(snapshot)
    }
    kept = {os.path.basename(p) for p in before if "dt=x/h=2" in p or "dt=y/h=1" in p}
    assert len(kept) == 2 and kept <= live  # files without a matching row stay as they are
    assert not any("dt=z" in p for p in data_files(warehouse) if os.path.basename(p) in live)
    java = oracle("read", warehouse, "db.t")
    assert sorted(((r["id"], r["dt"], r["h"]) for r in java), key=repr) == left
    assert rows(append, "SELECT * FROM db.t VERSION AS OF 3") == sorted(
        [*ALL, (5, "x", 1), (None, "x", 1)], key=repr
    )
    append.sql("DELETE FROM db.t WHERE id = 99")
    assert len(snapshots(append)) == 4  # nothing matched: no snapshot


def test_delete_on_append_table_with_deletion_vectors_rewrites_nothing(
    session: PaimonSession, warehouse: str, oracle: Any
) -> None:
    session.sql(
        "CREATE TABLE db.t (id INT, dt STRING) PARTITIONED BY (dt)"
        " TBLPROPERTIES ('deletion-vectors.enabled' = 'true')"
    )
    session.sql("INSERT INTO db.t VALUES (1, 'x'), (2, 'x'), (3, 'y'), (NULL, 'y')")
    session.sql("INSERT INTO db.t VALUES (4, 'x'), (5, 'z')")
    before = data_files(warehouse)
    session.sql("DELETE FROM db.t AS a WHERE a.id = 1 OR id > 3")
    session.sql("DELETE FROM db.t WHERE id = 2")
    left = sorted([(None, "y"), (3, "y")], key=repr)
    assert rows(session, "SELECT * FROM db.t") == left  # NULL id: the predicate is not true
    assert data_files(warehouse) == before  # no data file written or removed
    assert [kind for _, kind in snapshots(session)] == [
        "APPEND",
        "APPEND",
        "OVERWRITE",
        "OVERWRITE",
    ]
    assert rows(session, "SELECT * FROM db.t VERSION AS OF 3") == sorted(
        [(2, "x"), (3, "y"), (None, "y")], key=repr
    )
    assert rows(session, "SELECT count(*) FROM db.t") == [(2,)]
    java = oracle("read", warehouse, "db.t")
    assert sorted(((r["id"], r["dt"]) for r in java), key=repr) == left
    session.sql("DELETE FROM db.t WHERE id = 1")
    assert len(snapshots(session)) == 4  # already deleted: no snapshot


def test_delete_on_append_table_refusals_change_nothing(append: PaimonSession) -> None:
    with pytest.raises(SqlError, match=r"DELETE FROM paimon.db.t: subqueries"):
        append.sql("DELETE FROM db.t WHERE id IN (SELECT 1)")
    with pytest.raises(SqlError, match=r"DELETE FROM paimon.db.t: invalid WHERE"):
        append.sql("DELETE FROM db.t WHERE dt = nosuchfunction(h)")
    with pytest.raises(SqlError, match=r"DELETE FROM paimon.db.t: invalid WHERE"):
        append.sql("DELETE FROM db.t WHERE nosuchcolumn = 1")
    assert len(snapshots(append)) == 2
    assert rows(append, "SELECT * FROM db.t") == ALL


def test_delete_on_primary_key_table_writes_retractions(
    pk: PaimonSession, warehouse: str, oracle: Any
) -> None:
    before = rows(pk, "SELECT * FROM db.t")
    assert before == [(1, "a", "x"), (2, "B", "x"), (3, "c", "y"), (4, "d", "y")]
    pk.sql("DELETE FROM db.t WHERE v IN ('B', 'c') OR k > 3")
    assert rows(pk, "SELECT * FROM db.t") == [(1, "a", "x")]
    assert snapshots(pk)[-1] == (3, "APPEND")
    assert len(snapshots(pk)) == 3
    java = oracle("read", warehouse, "db.t")
    assert [(r["k"], r["v"], r["dt"]) for r in java] == [(1, "a", "x")]
    assert rows(pk, "SELECT * FROM db.t VERSION AS OF 2") == before
    pk.sql("DELETE FROM db.t WHERE k = 99")
    assert rows(pk, "SELECT * FROM db.t") == [(1, "a", "x")]
    assert len(snapshots(pk)) == 3  # nothing read, nothing written: no snapshot


def test_delete_on_primary_key_table_by_partition(pk: PaimonSession) -> None:
    pk.sql("DELETE FROM db.t WHERE dt = 'y'")
    assert rows(pk, "SELECT * FROM db.t") == [(1, "a", "x"), (2, "B", "x")]
    assert snapshots(pk)[-1] == (3, "OVERWRITE")


def test_failed_delete_commits_nothing(
    pk: PaimonSession, warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = data_files(warehouse)

    def fail(*_args: Any, **_kwargs: Any) -> None:
        raise RuntimeError("injected")

    monkeypatch.setattr(FileStoreCommit, "_commit_with_retry", fail)
    for statement in (
        "DELETE FROM db.t WHERE k = 1",
        "DELETE FROM db.t WHERE dt = 'x'",
        "TRUNCATE TABLE db.t",
    ):
        with pytest.raises(RuntimeError, match="injected"):
            pk.sql(statement)
    monkeypatch.undo()
    assert len(snapshots(pk)) == 2
    assert data_files(warehouse) == files  # the retractions written were removed again
    assert not [n for n in os.listdir(os.path.join(warehouse, "db.db", "t")) if "_write-" in n]
    assert len(rows(pk, "SELECT * FROM db.t")) == 4


def test_failed_copy_on_write_delete_commits_nothing(
    append: PaimonSession, warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = data_files(warehouse)

    def fail(*_args: Any, **_kwargs: Any) -> None:
        raise RuntimeError("injected")

    monkeypatch.setattr(FileStoreCommit, "_commit_with_retry", fail)
    with pytest.raises(RuntimeError, match="injected"):
        append.sql("DELETE FROM db.t WHERE id = 1 OR id = 3")
    monkeypatch.undo()
    assert len(snapshots(append)) == 2
    assert data_files(warehouse) == files  # the rewritten files were removed again
    assert rows(append, "SELECT * FROM db.t") == ALL

"""UPDATE and MERGE INTO on primary-key tables of each merge engine, through PaimonSession:
``partial-update`` written as Paimon-Spark does (whole rows as ``+U``), read back by Java, and
the engines Paimon refuses refused with its message, changing nothing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from sql_ext.errors import SqlError
from sql_ext.session import PaimonSession
from tests.unit.sql_ext.test_dml import data_files, rows, snapshots


@pytest.fixture
def session(spark: Any, warehouse: str) -> Iterator[PaimonSession]:
    session = PaimonSession(spark, warehouse=warehouse)
    session.sql("CREATE DATABASE db").collect()
    yield session
    session.stop()


@pytest.fixture
def partial(session: PaimonSession) -> PaimonSession:
    """db.t (k INT, a STRING, b INT) partial-update, key k: two snapshots, whose rows merge to
    (1, 'a', 10), (2, NULL, 20), (3, 'c', NULL)."""
    session.sql(
        "CREATE TABLE db.t (k INT, a STRING, b INT, PRIMARY KEY (k) NOT ENFORCED) "
        "TBLPROPERTIES ('merge-engine' = 'partial-update', 'bucket' = '2')"
    )
    session.sql("INSERT INTO db.t VALUES (1, 'a', NULL), (2, NULL, 20), (3, 'c', NULL)")
    session.sql("INSERT INTO db.t VALUES (1, NULL, 10)")
    return session


def _java(oracle: Any, warehouse: str, name: str = "db.t") -> list[tuple[Any, ...]]:
    return sorted((tuple(r.values()) for r in oracle("read", warehouse, name)), key=repr)


def test_update_partial_update_table_writes_whole_rows(
    partial: PaimonSession, warehouse: str, oracle: Any
) -> None:
    partial.sql("UPDATE db.t SET a = concat(coalesce(a, ''), '!'), b = NULL WHERE k <= 2")
    # b = NULL is written, and partial-update keeps the older non-null value (as in Paimon).
    expected = [(1, "a!", 10), (2, "!", 20), (3, "c", None)]
    assert rows(partial, "SELECT * FROM db.t") == expected
    assert snapshots(partial)[-1] == (3, "APPEND")
    assert _java(oracle, warehouse) == expected
    audit = rows(partial, "SELECT rowkind, k, a, b FROM db.t$audit_log")
    assert audit == [("+I", 1, "a!", 10), ("+I", 2, "!", 20), ("+I", 3, "c", None)]
    partial.sql("UPDATE db.t SET a = 'none' WHERE k = 99")
    assert len(snapshots(partial)) == 3  # nothing matched: no snapshot


def test_update_partial_update_table_refuses_the_key(
    partial: PaimonSession, warehouse: str
) -> None:
    files = data_files(warehouse)
    with pytest.raises(SqlError, match=r"UPDATE paimon.db.t: Can't update the primary key"):
        partial.sql("UPDATE db.t SET k = 5 WHERE k = 1")
    assert data_files(warehouse) == files and len(snapshots(partial)) == 2


def test_merge_into_partial_update_table(
    partial: PaimonSession, warehouse: str, oracle: Any
) -> None:
    partial.sql(
        "MERGE INTO db.t USING (SELECT * FROM VALUES (1, 'x', NULL), (2, NULL, 21), "
        "(4, 'd', 40) AS src(k, a, b)) s ON t.k = s.k "
        "WHEN MATCHED AND s.k = 1 THEN UPDATE SET * "
        "WHEN MATCHED THEN UPDATE SET b = s.b, a = 'two' "
        "WHEN NOT MATCHED THEN INSERT *"
    )
    # k = 1: UPDATE SET * writes b NULL, partial-update keeps 10.
    expected = [(1, "x", 10), (2, "two", 21), (3, "c", None), (4, "d", 40)]
    assert rows(partial, "SELECT * FROM db.t") == expected
    assert snapshots(partial)[-1] == (3, "APPEND")
    assert _java(oracle, warehouse) == expected


def test_merge_delete_on_partial_update_table(session: PaimonSession, warehouse: str) -> None:
    """A DELETE clause needs a table that merges ``-D`` rows: refused before anything is
    written otherwise (with the merge function's message), applied with
    ``partial-update.remove-record-on-delete``, dropped with ``ignore-delete``."""
    for name, options in (
        ("plain", ""),
        ("removing", ", 'partial-update.remove-record-on-delete' = 'true'"),
        ("ignoring", ", 'ignore-delete' = 'true'"),
    ):
        session.sql(
            f"CREATE TABLE db.{name} (k INT, a STRING, PRIMARY KEY (k) NOT ENFORCED) "
            f"TBLPROPERTIES ('merge-engine' = 'partial-update', 'bucket' = '1'{options})"
        )
        session.sql(f"INSERT INTO db.{name} VALUES (1, 'a'), (2, 'b')")
    merge = (
        "MERGE INTO db.{0} USING (SELECT 1 AS k) s ON {0}.k = s.k WHEN MATCHED THEN DELETE "
        "WHEN NOT MATCHED THEN INSERT (k, a) VALUES (k, 'new')"
    )
    files = data_files(warehouse, "plain")
    with pytest.raises(SqlError) as err:
        session.sql(merge.format("plain"))
    message = str(err.value)
    assert message.startswith("MERGE INTO paimon.db.plain: By default, Partial update can not")
    assert "\n" not in message
    assert data_files(warehouse, "plain") == files
    assert len(snapshots(session, "db.plain")) == 1
    assert rows(session, "SELECT * FROM db.plain") == [(1, "a"), (2, "b")]
    session.sql(merge.format("removing"))
    assert rows(session, "SELECT * FROM db.removing") == [(2, "b")]
    session.sql(merge.format("ignoring"))
    assert rows(session, "SELECT * FROM db.ignoring") == [(1, "a"), (2, "b")]


@pytest.mark.parametrize(
    ("engine", "options"),
    [
        ("aggregation", ", 'fields.v.aggregate-function' = 'sum'"),
        ("first-row", ""),
    ],
)
def test_update_and_merge_refused_by_engine(
    session: PaimonSession, warehouse: str, engine: str, options: str
) -> None:
    session.sql(
        "CREATE TABLE db.t (k INT, v INT, PRIMARY KEY (k) NOT ENFORCED) "
        f"TBLPROPERTIES ('merge-engine' = '{engine}', 'bucket' = '1'{options})"
    )
    session.sql("INSERT INTO db.t VALUES (1, 1)")
    files, before = data_files(warehouse), snapshots(session)
    with pytest.raises(SqlError) as err:
        session.sql("UPDATE db.t SET v = 2")
    assert str(err.value) == (
        f"UPDATE paimon.db.t: merge engine {engine} can not support Update, currently only "
        "deduplicate, partial-update can support Update."
    )
    with pytest.raises(SqlError) as err:
        session.sql(
            "MERGE INTO db.t USING (SELECT 1 AS k, 5 AS v) s ON t.k = s.k "
            "WHEN MATCHED THEN UPDATE SET *"
        )
    assert str(err.value) == (
        f"MERGE INTO paimon.db.t: merge engine {engine} can not support MergeInto, currently "
        "only deduplicate, partial-update can support MergeInto."
    )
    assert data_files(warehouse) == files
    assert rows(session, "SELECT * FROM db.t") == [(1, 1)]
    assert snapshots(session) == before

"""Row tracking in SQL: `_ROW_ID` and `_SEQUENCE_NUMBER` as metadata columns of row-tracking
tables (Paimon-Spark's), the `$row_tracking` system table, and row-level DML keeping the
ids of the rows it moves."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from paimon_core.catalog import FileSystemCatalog
from sql_ext.session import PaimonSession


@pytest.fixture
def session(spark: Any, warehouse: str) -> Iterator[PaimonSession]:
    session = PaimonSession(spark, warehouse=warehouse)
    session.sql("CREATE DATABASE db").collect()
    yield session
    session.stop()


@pytest.fixture
def tracked(session: PaimonSession) -> PaimonSession:
    """db.t (id INT, v STRING, dt STRING) with row tracking: ids 0-2 in snapshot 1, 3 in 2."""
    session.sql(
        "CREATE TABLE db.t (id INT, v STRING, dt STRING) PARTITIONED BY (dt) "
        "TBLPROPERTIES ('row-tracking.enabled' = 'true')"
    )
    session.sql("INSERT INTO db.t VALUES (1, 'a', 'x'), (2, 'b', 'x'), (3, 'c', 'x')")
    session.sql("INSERT INTO db.t VALUES (4, 'd', 'y')")
    return session


def _rows(session: PaimonSession, sql: str) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in session.sql(sql).collect())


def test_select_row_id_and_sequence_number(tracked: PaimonSession) -> None:
    assert _rows(tracked, "SELECT _ROW_ID, _SEQUENCE_NUMBER, * FROM db.t") == [
        (0, 1, 1, "a", "x"),
        (1, 1, 2, "b", "x"),
        (2, 1, 3, "c", "x"),
        (3, 2, 4, "d", "y"),
    ]
    # `*` alone keeps them hidden; a filter and a qualified name read them
    assert tracked.sql("SELECT * FROM db.t").columns == ["id", "v", "dt"]
    assert _rows(tracked, "SELECT t.id FROM db.t t WHERE t._ROW_ID >= 2") == [(3,), (4,)]


def test_plain_tables_have_no_row_tracking_columns(session: PaimonSession) -> None:
    session.sql("CREATE TABLE db.p (id INT)")
    session.sql("INSERT INTO db.p VALUES (1)")
    with pytest.raises(Exception, match="_ROW_ID"):
        session.sql("SELECT _ROW_ID FROM db.p").collect()


def test_row_tracking_system_table(tracked: PaimonSession) -> None:
    df = tracked.sql("SELECT * FROM db.`t$row_tracking`")
    assert df.columns == ["id", "v", "dt", "_ROW_ID", "_SEQUENCE_NUMBER"]
    assert sorted(tuple(r) for r in df.collect()) == [
        (1, "a", "x", 0, 1),
        (2, "b", "x", 1, 1),
        (3, "c", "x", 2, 1),
        (4, "d", "y", 3, 2),
    ]
    assert _rows(tracked, "SELECT _ROW_ID FROM db.`t$row_tracking` WHERE id = 4") == [(3,)]
    # time travel reads the rows of that snapshot
    assert _rows(tracked, "SELECT _ROW_ID FROM db.`t$row_tracking` VERSION AS OF 1") == [
        (0,),
        (1,),
        (2,),
    ]


def test_row_tracking_system_table_of_a_plain_table_is_refused(session: PaimonSession) -> None:
    session.sql("CREATE TABLE db.p (id INT)")
    with pytest.raises(Exception, match="does not support row tracking"):
        session.sql("SELECT * FROM db.`p$row_tracking`").collect()

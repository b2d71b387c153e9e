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


def _tracked(session: PaimonSession) -> list[tuple[Any, ...]]:
    return _rows(session, "SELECT id, v, _ROW_ID, _SEQUENCE_NUMBER FROM db.t")


def _next_row_id(warehouse: str) -> int | None:
    latest = FileSystemCatalog(warehouse).get_table("db.t").latest_snapshot()
    assert latest is not None
    return latest.next_row_id


def test_update_keeps_row_ids(tracked: PaimonSession, warehouse: str) -> None:
    tracked.sql("UPDATE db.t SET v = 'B' WHERE id = 2")
    # the updated row: snapshot 3's sequence number; its file-mates keep theirs
    assert _tracked(tracked) == [(1, "a", 0, 1), (2, "B", 1, 3), (3, "c", 2, 1), (4, "d", 3, 2)]
    assert _next_row_id(warehouse) == 4
    tracked.sql("INSERT INTO db.t VALUES (5, 'e', 'y')")
    assert (5, "e", 4, 4) in _tracked(tracked)


def test_delete_keeps_the_other_rows_ids(tracked: PaimonSession, warehouse: str) -> None:
    tracked.sql("DELETE FROM db.t WHERE id = 2")
    assert _tracked(tracked) == [(1, "a", 0, 1), (3, "c", 2, 1), (4, "d", 3, 2)]
    assert _next_row_id(warehouse) == 4


def test_merge_keeps_matched_ids_and_gives_inserts_new_ones(
    tracked: PaimonSession, warehouse: str
) -> None:
    tracked.sql("CREATE TABLE db.s (id INT, v STRING, dt STRING)")
    tracked.sql("INSERT INTO db.s VALUES (1, 'A', 'x'), (9, 'z', 'y')")
    tracked.sql(
        "MERGE INTO db.t USING db.s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *"
    )
    assert _tracked(tracked) == [
        (1, "A", 0, 3),
        (2, "b", 1, 1),
        (3, "c", 2, 1),
        (4, "d", 3, 2),
        (9, "z", 4, 3),
    ]
    assert _next_row_id(warehouse) == 5
    tracked.sql("MERGE INTO db.t USING db.s ON t.id = s.id WHEN MATCHED THEN DELETE")
    assert [r[2] for r in _tracked(tracked)] == [1, 2, 3]


def test_describe_extended_lists_the_row_tracking_columns(tracked: PaimonSession) -> None:
    rows = [tuple(r)[:2] for r in tracked.sql("DESCRIBE TABLE EXTENDED db.t").collect()]
    start = rows.index(("# Metadata Columns", ""))
    assert rows[start + 1 : start + 3] == [("_ROW_ID", "bigint"), ("_SEQUENCE_NUMBER", "bigint")]


def test_compact_call_keeps_ids(tracked: PaimonSession, warehouse: str) -> None:
    tracked.sql("INSERT INTO db.t VALUES (5, 'e', 'x')")
    tracked.sql("INSERT INTO db.t VALUES (6, 'f', 'x')")
    before = _tracked(tracked)
    assert tracked.sql("CALL sys.compact(table => 'db.t')").collect()[0][0] is True
    table = FileSystemCatalog(warehouse).get_table("db.t")
    files = [f for s in table.new_scan().plan() for f in s.files]
    assert any(f.write_cols and "_ROW_ID" in f.write_cols for f in files)
    assert _tracked(tracked) == before
    assert _rows(tracked, "SELECT _ROW_ID FROM db.`t$row_tracking` WHERE id = 6") == [(5,)]

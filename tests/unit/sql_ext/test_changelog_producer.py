"""Changelog producers through Spark SQL: INSERT and DELETE into a ``changelog-producer`` =
``input`` table, ``CALL sys.compact`` on a ``full-compaction`` one, and the incremental table
functions over ``$audit_log`` returning the changelog with its row kinds, as Paimon-Spark."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pyspark.sql import SparkSession

from sql_ext.session import PaimonSession


@pytest.fixture
def session(spark: SparkSession, warehouse: str) -> Iterator[PaimonSession]:
    paimon = PaimonSession(spark, warehouse=warehouse)
    yield paimon
    paimon.stop()


def _rows(session: PaimonSession, sql: str) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in session.sql(sql).collect())


def _create(session: PaimonSession, name: str, producer: str) -> None:
    session.sql(
        f"CREATE TABLE {name} (id INT, v STRING) TBLPROPERTIES ('primary-key' = 'id', "
        f"'bucket' = '1', 'changelog-producer' = '{producer}')"
    )


def test_input_changelog(session: PaimonSession) -> None:
    _create(session, "t", "input")
    session.sql("INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    session.sql("INSERT INTO t VALUES (1, 'c')")
    session.sql("DELETE FROM t WHERE id = 2")
    changes = "SELECT * FROM paimon_incremental_query('`t$audit_log`', {}, {})"
    assert _rows(session, changes.format(0, 3)) == [
        ("+I", 1, "a"),
        ("+I", 1, "c"),
        ("+I", 2, "b"),
        ("-D", 2, "b"),
    ]
    assert _rows(session, changes.format(1, 3)) == [("+I", 1, "c"), ("-D", 2, "b")]
    # A batch $audit_log reads the snapshot's merged data, not the changelog.
    assert _rows(session, "SELECT * FROM `t$audit_log`") == [("+I", 1, "c"), ("-D", 2, "b")]
    assert _rows(session, "SELECT * FROM t") == [(1, "c")]
    snapshots = "SELECT snapshot_id, changelog_record_count FROM `t$snapshots`"
    assert _rows(session, snapshots) == [(1, 2), (2, 1), (3, 1)]


def test_full_compaction_changelog(session: PaimonSession) -> None:
    _create(session, "f", "full-compaction")
    session.sql("INSERT INTO f VALUES (1, 'a'), (2, 'b')")
    session.sql("CALL sys.compact(table => 'f')")
    session.sql("INSERT INTO f VALUES (1, 'x'), (3, 'c')")
    session.sql("DELETE FROM f WHERE id = 2")
    session.sql("CALL sys.compact(table => 'f')")
    changes = "SELECT * FROM paimon_incremental_query('`f$audit_log`', {}, {})"
    assert _rows(session, changes.format(0, 2)) == [("+I", 1, "a"), ("+I", 2, "b")]
    assert _rows(session, changes.format(2, 4)) == []  # plain writes produce no changelog
    assert _rows(session, changes.format(2, 5)) == [
        ("+I", 3, "c"),
        ("+U", 1, "x"),
        ("-D", 2, "b"),
        ("-U", 1, "a"),
    ]

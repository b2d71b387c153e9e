"""Travelled reads through the session: a snapshot is read in the schema it was written with."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from paimon_core.catalog import FileSystemCatalog
from paimon_core.format.snapshot import snapshot_to_json
from sql_ext.dynamic_options import paimon_confs
from sql_ext.session import PaimonSession
from tests.interop.helpers import pypaimon_evolved_table

pytestmark = pytest.mark.spark

T1 = 1_000_000_000_000  # 2001-09-09 01:46:40 UTC: snapshot 1; snapshot 2 a minute later
OLD = [{"k": 1, "a": "a1", "b": 10}]


@pytest.fixture
def session(spark: SparkSession, warehouse: str) -> Iterator[PaimonSession]:
    """`db.evo` evolved by pypaimon (snapshot 1 before c was added, a renamed, b dropped)."""
    pypaimon_evolved_table(warehouse, "db.evo")
    manager = FileSystemCatalog(warehouse).get_table("db.evo").snapshot_manager
    for sid in (1, 2):
        moved = dataclasses.replace(manager.snapshot(sid), time_millis=T1 + (sid - 1) * 60_000)
        Path(manager.snapshot_path(sid)).write_text(snapshot_to_json(moved))
    session = PaimonSession(spark, warehouse=warehouse)
    session.sql("USE db")
    yield session
    for key in paimon_confs(spark):
        spark.conf.unset(key)


def _dicts(session: PaimonSession, sql: str) -> list[dict[str, object]]:
    return [r.asDict() for r in session.sql(sql).collect()]


@pytest.mark.parametrize(
    "clause",
    [
        "VERSION AS OF 1",
        "VERSION AS OF 'first'",
        "FOR SYSTEM_VERSION AS OF 1",
        "TIMESTAMP AS OF '2001-09-09 01:47:00'",
        "FOR SYSTEM_TIME AS OF '2001-09-09 01:47:00'",
    ],
)
def test_time_travel_clauses_read_the_old_schema(session: PaimonSession, clause: str) -> None:
    session.sql("CALL sys.create_tag(table => 'evo', tag => 'first', snapshot => 1)")
    assert _dicts(session, f"SELECT * FROM evo {clause}") == OLD
    assert _dicts(session, f"SELECT a, b FROM evo {clause} WHERE b = 10") == [{"a": "a1", "b": 10}]


def test_scan_options_set_in_the_session_read_the_old_schema(session: PaimonSession) -> None:
    session.sql("SET `spark.paimon.*.db.evo.scan.snapshot-id` = 1")
    assert _dicts(session, "SELECT * FROM evo") == OLD
    assert session.sql("DESCRIBE evo").columns == ["col_name", "data_type", "comment"]
    assert [r[0] for r in session.sql("DESCRIBE evo").collect()] == ["k", "a", "b"]
    session.sql("RESET `spark.paimon.*.db.evo.scan.snapshot-id`")
    session.sql(f"SET `spark.paimon.scan.timestamp-millis` = {T1 + 1}")
    assert _dicts(session, "SELECT * FROM evo") == OLD
    session.sql("RESET `spark.paimon.scan.timestamp-millis`")
    latest = sorted(_dicts(session, "SELECT * FROM evo"), key=lambda r: r["k"])
    assert latest == [{"k": 1, "a2": "a1", "c": None}, {"k": 2, "a2": "x", "c": "c2"}]

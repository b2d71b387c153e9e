"""ANALYZE TABLE ... COMPUTE STATISTICS and `$statistics`, checked against Apache Paimon (Java)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

import pytest
from pyspark.sql import SparkSession

from sql_ext.errors import SqlError
from sql_ext.session import PaimonSession
from tests.unit.sql_ext.test_shell import run as shell_run


@pytest.fixture
def session(spark: SparkSession, warehouse: str) -> PaimonSession:
    s = PaimonSession(spark, warehouse=warehouse)
    s.sql("CREATE DATABASE db")
    s.sql(
        "CREATE TABLE db.t (id INT, name STRING, price DOUBLE, d DATE) USING paimon "
        "TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1')"
    )
    s.sql("INSERT INTO db.t VALUES (1, 'a', 1.5, DATE'2024-01-02'), (2, NULL, 2.5, NULL)")
    s.sql("INSERT INTO db.t VALUES (2, 'bcd', 3.0, DATE'2024-01-01')")
    return s


def _stats_file(warehouse: str) -> dict[str, Any]:
    directory = os.path.join(warehouse, "db.db", "t", "statistics")
    (name,) = os.listdir(directory)
    assert name.startswith("stat-")
    with open(os.path.join(directory, name), encoding="utf-8") as f:
        return json.load(f)


def test_analyze_for_all_columns_writes_paimon_statistics(
    session: PaimonSession, warehouse: str, oracle: Callable[..., Any]
) -> None:
    session.sql("ANALYZE TABLE db.t COMPUTE STATISTICS FOR ALL COLUMNS")
    stats = _stats_file(warehouse)
    assert stats["snapshotId"] == 2 and stats["schemaId"] == 0
    assert stats["mergedRecordCount"] == 2
    assert stats["mergedRecordSize"] > 0
    assert stats["colStats"]["id"] == {
        "colId": 0,
        "distinctCount": 2,
        "min": "1",
        "max": "2",
        "nullCount": 0,
        "avgLen": 4,
        "maxLen": 4,
    }
    assert stats["colStats"]["name"] == {
        "colId": 1,
        "distinctCount": 2,
        "nullCount": 0,
        "avgLen": 2,
        "maxLen": 3,
    }
    assert stats["colStats"]["price"]["min"] == "1.5"
    assert stats["colStats"]["d"]["min"] == "19723"  # days since 1970, as IntSerializer
    snapshots = oracle("snapshots", warehouse, "db.t")
    assert [s["commitKind"] for s in snapshots] == ["APPEND", "APPEND", "ANALYZE"]
    assert snapshots[-1]["totalRecordCount"] == snapshots[-2]["totalRecordCount"]
    read = oracle("read", warehouse, "db.t")
    assert sorted(r["id"] for r in read) == [1, 2]

    row = session.sql("SELECT * FROM db.t$statistics").collect()
    assert [tuple(r)[:4] for r in row] == [(2, 0, 2, stats["mergedRecordSize"])]
    assert json.loads(row[0]["colstat"]) == stats["colStats"]


def test_analyze_without_columns_and_inheritance(session: PaimonSession, warehouse: str) -> None:
    session.sql("ANALYZE TABLE db.t COMPUTE STATISTICS")
    assert _stats_file(warehouse)["colStats"] == {}
    session.sql("INSERT INTO db.t VALUES (3, 'x', 1.0, NULL)")
    rows = session.sql("SELECT snapshot_id, mergedRecordCount FROM db.t$statistics").collect()
    assert [tuple(r) for r in rows] == [(2, 2)]  # the INSERT's snapshot keeps the statistics


def test_analyze_for_columns_and_refusals(session: PaimonSession, warehouse: str) -> None:
    session.sql("ANALYZE TABLE db.t COMPUTE STATISTICS FOR COLUMNS ID, price")
    assert set(_stats_file(warehouse)["colStats"]) == {"id", "price"}
    for text, message in (
        ("ANALYZE TABLE db.t COMPUTE STATISTICS NOSCAN", "NOSCAN"),
        ("ANALYZE TABLE db.t COMPUTE STATISTICS FOR COLUMNS nope", "nope"),
    ):
        with pytest.raises(SqlError, match=message):
            session.sql(text)
    assert len(session.sql("SELECT * FROM db.t$snapshots").collect()) == 3


def test_expiry_deletes_statistics_no_snapshot_uses(session: PaimonSession, warehouse: str) -> None:
    directory = os.path.join(warehouse, "db.db", "t", "statistics")
    session.sql("ANALYZE TABLE db.t COMPUTE STATISTICS")
    (first,) = os.listdir(directory)
    session.sql("INSERT INTO db.t VALUES (5, 'e', 1.0, NULL)")
    session.sql("CALL sys.expire_snapshots(table => 'db.t', retain_max => 1, retain_min => 1)")
    assert os.listdir(directory) == [first]  # the INSERT's snapshot still references it
    session.sql("ANALYZE TABLE db.t COMPUTE STATISTICS")
    session.sql("CALL sys.expire_snapshots(table => 'db.t', retain_max => 1, retain_min => 1)")
    (second,) = os.listdir(directory)
    assert second != first


def test_analyze_through_the_shell(session: PaimonSession) -> None:
    code, out, err = shell_run(
        "--output",
        "json",
        "-e",
        "ANALYZE TABLE db.t COMPUTE STATISTICS FOR COLUMNS id; "
        "SELECT snapshot_id, mergedRecordCount FROM db.t$statistics",
        session=session,
    )
    assert (code, err) == (0, "")
    assert [json.loads(line) for line in out.splitlines()] == [
        {"snapshot_id": 2, "mergedRecordCount": 2}
    ]
    code, out, err = shell_run(
        "-e", "ANALYZE TABLE db.t COMPUTE STATISTICS NOSCAN", session=session
    )
    assert (code, out) == (1, "") and err.startswith("Error: ANALYZE TABLE ... NOSCAN")

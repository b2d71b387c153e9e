"""SQL writes to lookup tables (deletion vectors, first-row) on the Spark data path: the
writer tasks compact the buckets they wrote, so the rows are visible to Paimon's reads."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from paimon_core.catalog import FileSystemCatalog
from sql_ext.session import PaimonSession


@pytest.mark.parametrize(
    ("properties", "expected"),
    [
        ("'deletion-vectors.enabled' = 'true'", [(1, "b"), (3, "c2")]),
        ("'merge-engine' = 'first-row'", [(1, "a"), (2, "b"), (3, "c")]),
    ],
    ids=["deletion-vectors", "first-row"],
)
def test_sql_writes_to_lookup_tables(
    spark: Any,
    warehouse: str,
    oracle: Callable[..., Any],
    properties: str,
    expected: list[tuple],
) -> None:
    session = PaimonSession(spark, warehouse=warehouse)
    try:
        session.sql("CREATE DATABASE IF NOT EXISTS db")
        session.sql(
            "CREATE TABLE db.t (k INT NOT NULL, v STRING) TBLPROPERTIES "
            f"('primary-key' = 'k', 'bucket' = '2', {properties})"
        )
        session.sql("INSERT INTO db.t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
        session.sql("INSERT INTO db.t VALUES (1, 'b'), (3, 'c2')")
        if "deletion" in properties:
            session.sql("DELETE FROM db.t WHERE k = 2")
        rows = [tuple(r) for r in session.sql("SELECT k, v FROM db.t ORDER BY k").collect()]
    finally:
        session.stop()
    assert rows == expected
    java = sorted((r["k"], r["v"]) for r in oracle("read", warehouse, "db.t"))
    assert java == expected
    table = FileSystemCatalog(warehouse).get_table("db.t")
    latest = table.snapshot_manager.latest_snapshot()
    assert latest is not None and str(latest.commit_kind) == "COMPACT"
    assert all(e.file.level > 0 for e in table.new_scan().read_entries(latest))

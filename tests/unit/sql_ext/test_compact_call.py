"""``CALL sys.compact`` through ``PaimonSession``: the buckets run as Spark tasks and the
result is Paimon Spark's row; the JVM-free metadata engine hands the CALL to Spark."""

from __future__ import annotations

from typing import Any

from paimon_core.format.snapshot import CommitKind
from sql_ext.metadata.engine import MetadataEngine, ToSpark
from sql_ext.session import PaimonSession
from tests.unit.procedures.helpers import new_catalog, new_table


def test_call_compact_through_spark(spark: Any, warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    new_table(catalog, commits=4, primary_keys=["id", "dt"], options={"bucket": "2"})
    before = sorted(map(str, catalog.get_table("db.t").to_arrow().to_pylist()))
    engine = MetadataEngine(warehouse)
    assert isinstance(engine.run("CALL sys.compact(table => 'db.t')"), ToSpark)
    session = PaimonSession(spark, warehouse=warehouse)
    try:
        df = session.sql("CALL sys.compact(table => 'db.t')")
        assert df.schema.simpleString() == "struct<result:boolean>"
        assert [tuple(r) for r in df.collect()] == [(True,)]
    finally:
        session.stop()
    table = catalog.get_table("db.t")
    assert table.snapshot_manager.latest_snapshot().commit_kind == CommitKind.COMPACT
    levels = {
        e.file.level
        for e in table.new_scan().read_entries(table.snapshot_manager.latest_snapshot())
    }
    assert levels == {5}
    assert sorted(map(str, table.to_arrow().to_pylist())) == before


def test_call_zorder_compact_through_spark(spark: Any, warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    new_table(catalog, commits=4)
    before = sorted(map(str, catalog.get_table("db.t").to_arrow().to_pylist()))
    session = PaimonSession(spark, warehouse=warehouse)
    try:
        df = session.sql(
            "CALL sys.compact(table => 'db.t', order_strategy => 'zorder', order_by => 'name,id')"
        )
        assert [tuple(r) for r in df.collect()] == [(True,)]
    finally:
        session.stop()
    table = catalog.get_table("db.t")
    assert table.snapshot_manager.latest_snapshot().commit_kind == CommitKind.COMPACT
    rows = table.to_arrow().to_pylist()
    assert len(table.new_scan().read_entries(table.snapshot_manager.latest_snapshot())) == 2
    # A null name contributes zero bytes, 'n0' starts 0x6e: the null-named rows come first.
    assert [r["id"] for r in rows if r["dt"] == "2024-01-01"] == [100, 102, 0, 2]
    assert sorted(map(str, rows)) == before

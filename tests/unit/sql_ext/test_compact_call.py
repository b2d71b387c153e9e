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

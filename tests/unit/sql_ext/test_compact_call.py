"""``CALL sys.compact`` through ``PaimonSession``: the buckets run as Spark tasks and the
result is Paimon Spark's row; the JVM-free metadata engine hands the CALL to Spark."""

from __future__ import annotations

from typing import Any

from paimon_core.format.snapshot import CommitKind
from sql_ext.metadata.engine import MetadataEngine, Rows, ToSpark
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


def test_call_compact_manifest_in_process_and_through_spark(spark: Any, warehouse: str) -> None:
    """Manifest merging is metadata work: the engine answers it without a JVM, and the
    session's CALL returns the same row as a DataFrame."""
    catalog = new_catalog(warehouse)
    new_table(catalog, commits=4)
    engine = MetadataEngine(warehouse)
    answered = engine.run("CALL sys.compact_manifest(table => 'db.t', dry_run => true)")
    assert isinstance(answered, Rows) and answered.columns == ["result", "message"]
    assert answered.rows[0][1].startswith("Dry run: 4 manifest files")
    assert catalog.get_table("db.t").latest_snapshot().snapshot_id == 4
    new_table(catalog, "db.u", commits=5)
    assert engine.run("CALL sys.compact_manifest('db.u')").rows == [(True,)]
    u = catalog.get_table("db.u")
    assert u.latest_snapshot().commit_kind == CommitKind.COMPACT
    rows = sorted(map(str, catalog.get_table("db.t").to_arrow().to_pylist()))
    session = PaimonSession(spark, warehouse=warehouse)
    try:
        df = session.sql("CALL sys.compact_manifest(table => 'db.t')")
        assert df.schema.simpleString() == "struct<result:boolean>"
        assert [tuple(r) for r in df.collect()] == [(True,)]
        assert session.sql("SELECT count(*) FROM db.t").collect()[0][0] == 8
    finally:
        session.stop()
    table = catalog.get_table("db.t")
    latest = table.latest_snapshot()
    assert (latest.snapshot_id, latest.commit_kind) == (5, CommitKind.COMPACT)
    assert len(table.manifest_list.read(latest.base_manifest_list)) == 1
    assert sorted(map(str, table.to_arrow().to_pylist())) == rows


def test_call_compact_database_through_spark(spark: Any, warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    catalog.create_database("other")
    for identifier in ("db.t", "db.u", "other.t"):
        new_table(
            catalog, identifier, commits=3, primary_keys=["id", "dt"], options={"bucket": "2"}
        )
    before = {
        i: sorted(map(str, catalog.get_table(i).to_arrow().to_pylist())) for i in ("db.t", "db.u")
    }
    engine = MetadataEngine(warehouse)
    assert isinstance(engine.run("CALL sys.compact_database()"), ToSpark)
    session = PaimonSession(spark, warehouse=warehouse)
    try:
        df = session.sql(
            "CALL sys.compact_database(including_databases => 'db', excluding_tables => 'db.u')"
        )
        assert df.schema.simpleString() == "struct<result:string>"
        assert [tuple(r) for r in df.collect()] == [
            ("Compact database finished. Success: 1, Failed: 0",)
        ]
    finally:
        session.stop()
    kinds = {
        i: catalog.get_table(i).latest_snapshot().commit_kind for i in ("db.t", "db.u", "other.t")
    }
    assert kinds == {
        "db.t": CommitKind.COMPACT,
        "db.u": CommitKind.APPEND,
        "other.t": CommitKind.APPEND,
    }
    for identifier, rows in before.items():
        assert sorted(map(str, catalog.get_table(identifier).to_arrow().to_pylist())) == rows

"""Time travel: snapshot id, tag, version, timestamp (with the tag fallback), watermark."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import InvalidArgument, SnapshotNotFound, TagNotFound
from paimon_core.format.schema import AddColumn, DropColumn, RenameColumn, SetOption
from paimon_core.format.snapshot import snapshot_to_json
from paimon_core.format.tag import Tag
from paimon_core.format.types import STRING
from paimon_core.operations.time_travel import (
    parse_timestamp_millis,
    resolve_snapshot,
    snapshot_for_timestamp,
    snapshot_for_version,
    travel_table,
)
from paimon_core.table import FileStoreTable

SCHEMA = pa.schema([pa.field("k", pa.int64(), False), ("v", pa.string())])


def _table_with_history(warehouse: str) -> FileStoreTable:
    """Three snapshots committed at t=1000, 2000, 3000 with watermarks 10, 20, 30."""
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    table = catalog.create_table("db.t", SCHEMA)
    for k in (1, 2, 3):
        table.write_arrow(pa.table({"k": [k], "v": [f"v{k}"]}, schema=SCHEMA))
    manager = table.snapshot_manager
    for sid in (1, 2, 3):
        moved = dataclasses.replace(
            manager.snapshot(sid), time_millis=sid * 1000, watermark=sid * 10
        )
        Path(manager.snapshot_path(sid)).write_text(snapshot_to_json(moved))
    return FileStoreTable.load(table.path)


def _tag(table: FileStoreTable, name: str, snapshot_id: int) -> None:
    table.tag_manager.write_tag(name, Tag(table.snapshot_manager.snapshot(snapshot_id)))


def _travel(table: FileStoreTable, **options: str) -> int | None:
    snapshot = resolve_snapshot(
        table.copy({k.replace("_", "-").replace("-", ".", 1): v for k, v in options.items()})
    )
    return None if snapshot is None else snapshot.snapshot_id


def _keys(table: FileStoreTable) -> list[int]:
    return sorted(table.to_arrow().column("k").to_pylist())


def test_without_options_the_latest_snapshot(warehouse: str) -> None:
    table = _table_with_history(warehouse)
    assert resolve_snapshot(table).snapshot_id == 3
    empty = FileSystemCatalog(warehouse).create_table("db.empty", SCHEMA)
    assert resolve_snapshot(empty) is None


def test_snapshot_id_and_tag_name(warehouse: str) -> None:
    table = _table_with_history(warehouse)
    _tag(table, "t1", 1)
    assert _travel(table, scan_snapshot_id="2") == 2
    assert _travel(table, scan_tag_name="t1") == 1
    assert _keys(table.copy({"scan.snapshot-id": "2"})) == [1, 2]
    assert _keys(table.copy({"scan.tag-name": "t1"})) == [1]
    with pytest.raises(SnapshotNotFound, match=r"^Snapshot id '99' doesn't exist\.$"):
        _travel(table, scan_snapshot_id="99")
    with pytest.raises(TagNotFound, match="'nope'"):
        _travel(table, scan_tag_name="nope")
    with pytest.raises(InvalidArgument, match="Only one of the following parameters may be set"):
        _travel(table, scan_snapshot_id="1", scan_tag_name="t1")


def test_version_prefers_a_tag_over_a_snapshot_id(warehouse: str) -> None:
    table = _table_with_history(warehouse)
    _tag(table, "1", 2)  # Paimon's documented trap: tag '1' shadows snapshot 1
    _tag(table, "release", 3)
    assert snapshot_for_version(table, 1).snapshot_id == 2
    assert snapshot_for_version(table, "release").snapshot_id == 3
    assert snapshot_for_version(table, "2").snapshot_id == 2
    assert snapshot_for_version(table, "watermark-15").snapshot_id == 2
    assert _travel(table, scan_version="release") == 3
    with pytest.raises(TagNotFound, match="Cannot find a time travel version for v9"):
        snapshot_for_version(table, "v9")


def test_timestamp_picks_the_latest_snapshot_at_or_before(warehouse: str) -> None:
    table = _table_with_history(warehouse)
    assert snapshot_for_timestamp(table, 2000).snapshot_id == 2
    assert snapshot_for_timestamp(table, 2999).snapshot_id == 2
    assert snapshot_for_timestamp(table, 10**13).snapshot_id == 3
    assert _travel(table, scan_timestamp_millis="1500") == 1
    with pytest.raises(SnapshotNotFound) as err:
        snapshot_for_timestamp(table, 999)
    assert str(err.value) == (
        "There is currently no snapshot earlier than or equal to timestamp [999], "
        "the earliest snapshot's timestamp is [1000]"
    )


def test_timestamp_falls_back_to_the_closest_earlier_tag(warehouse: str) -> None:
    table = _table_with_history(warehouse)
    _tag(table, "early", 1)
    table.snapshot_manager.delete_snapshot(1)
    table.snapshot_manager.write_earliest_hint(2)
    fresh = FileStoreTable.load(table.path)
    found = snapshot_for_timestamp(fresh, 1500)
    assert found.snapshot_id == 1 and found.time_millis == 1000
    assert _keys(fresh.copy({"scan.timestamp-millis": "1500"})) == [1]
    with pytest.raises(
        SnapshotNotFound, match=r"timestamp \[500\], the earliest snapshot's timestamp is \[2000\]"
    ):
        snapshot_for_timestamp(fresh, 500)


def test_timestamp_strings_are_local_time(warehouse: str) -> None:
    local = dt.datetime(2024, 1, 2, 3, 4, 5, 678000).astimezone()
    assert parse_timestamp_millis("2024-01-02 03:04:05.678") == int(local.timestamp() * 1000)
    assert parse_timestamp_millis("1970-01-01T00:00:01+00:00") == 1000
    with pytest.raises(InvalidArgument, match="Could not parse timestamp"):
        parse_timestamp_millis("yesterday")
    table = _table_with_history(warehouse)
    assert _travel(table, scan_timestamp="2999-01-01 00:00:00") == 3


def test_watermark(warehouse: str) -> None:
    table = _table_with_history(warehouse)
    assert _travel(table, scan_watermark="20") == 2
    with pytest.raises(SnapshotNotFound, match=r"watermark\[31\]"):
        _travel(table, scan_watermark="31")


def test_travel_uses_the_schema_of_the_snapshot(warehouse: str) -> None:
    table = _table_with_history(warehouse)
    table.schema_manager.commit_changes(RenameColumn("v", "value"))
    renamed = FileStoreTable.load(table.path)
    old, snapshot = travel_table(renamed.copy({"scan.snapshot-id": "1"}))
    assert snapshot.snapshot_id == 1 and old.schema.schema_id == 0
    assert old.to_arrow().column_names == ["k", "v"]
    current, latest = travel_table(renamed)
    assert current is renamed and latest.snapshot_id == 3


def _evolved_table(warehouse: str, primary_keys: tuple[str, ...]) -> FileStoreTable:
    """Snapshot 1 (t=1000, tag 'first') under (k, a, b); then c added, a renamed to a2 and b
    dropped; snapshot 2 (t=2000) under (k, a2, c); the latest schema sets one more option."""
    first = pa.schema([pa.field("k", pa.int64(), False), ("a", pa.string()), ("b", pa.int32())])
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    table = catalog.create_table("db.evo", first, primary_keys=primary_keys)
    table.write_arrow(pa.table({"k": [1], "a": ["a1"], "b": [10]}, schema=first))
    table.schema_manager.commit_changes(AddColumn("c", STRING()))
    table.schema_manager.commit_changes(RenameColumn("a", "a2"))
    table.schema_manager.commit_changes(DropColumn("b"))
    table.schema_manager.commit_changes(SetOption("snapshot.num-retained.max", "70"))
    table = FileStoreTable.load(table.path)
    later = table.new_read().output_schema()
    table.write_arrow(pa.table({"k": [2], "a2": ["x"], "c": ["c2"]}, schema=later))
    _tag(table, "first", 1)
    manager = table.snapshot_manager
    for sid in (1, 2):
        moved = dataclasses.replace(manager.snapshot(sid), time_millis=sid * 1000)
        Path(manager.snapshot_path(sid)).write_text(snapshot_to_json(moved))
    return FileStoreTable.load(table.path)


OLD_ROWS = [{"k": 1, "a": "a1", "b": 10}]


@pytest.mark.parametrize("primary_keys", [(), ("k",)], ids=["append", "primary-key"])
@pytest.mark.parametrize(
    "options",
    [
        {"scan.snapshot-id": "1"},
        {"scan.tag-name": "first"},
        {"scan.version": "first"},
        {"scan.version": "1"},
        {"scan.timestamp-millis": "1500"},
        {"scan.timestamp": "1970-01-01T00:00:01.500+00:00"},
    ],
    ids=lambda o: "=".join(next(iter(o.items()))),
)
def test_travelled_copy_reads_in_the_schema_of_the_snapshot(
    warehouse: str, primary_keys: tuple[str, ...], options: dict[str, str]
) -> None:
    table = _evolved_table(warehouse, primary_keys)
    old = table.copy(options)
    assert old.schema.schema_id == 0
    assert old.to_arrow().to_pylist() == OLD_ROWS
    assert old.new_read().to_arrow(old.new_scan().plan()).to_pylist() == OLD_ROWS
    assert old.options.get_str("snapshot.num-retained.max") == "70"  # the latest options
    assert table.schema.field_names == ["k", "a2", "c"]  # the original handle is unchanged


def test_explicit_snapshot_reads_in_its_schema_and_latest_stays_latest(warehouse: str) -> None:
    table = _evolved_table(warehouse, ())
    first = table.snapshot_manager.snapshot(1)
    assert table.to_arrow(snapshot=first).to_pylist() == OLD_ROWS
    latest = [{"k": 1, "a2": "a1", "c": None}, {"k": 2, "a2": "x", "c": "c2"}]
    assert sorted(table.to_arrow().to_pylist(), key=lambda r: r["k"]) == latest
    newest = table.copy({"scan.snapshot-id": "2"})
    assert sorted(newest.to_arrow().to_pylist(), key=lambda r: r["k"]) == latest
    assert table.copy({"write-only": "true"}).schema is table.schema
    assert table.copy({"scan.snapshot-id": "1"}, time_travel=False).schema is table.schema


def test_travel_to_a_missing_snapshot_fails_on_read_and_changes_nothing(warehouse: str) -> None:
    table = _evolved_table(warehouse, ())
    missing = table.copy({"scan.snapshot-id": "99"})
    assert missing.schema is table.schema
    with pytest.raises(SnapshotNotFound, match="'99'"):
        missing.to_arrow()

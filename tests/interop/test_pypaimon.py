"""Both directions with pypaimon 2.1, the official Python implementation."""

from __future__ import annotations

import datetime
import decimal
import json
import os

import pyarrow as pa

from paimon_core.catalog import FileSystemCatalog
from tests.interop.helpers import (
    pypaimon_evolved_table,
    pypaimon_read,
    pypaimon_write,
    rows,
)

APP = pa.schema([("id", pa.int64()), ("name", pa.string()), ("dt", pa.string())])
PK = pa.schema(
    [
        pa.field("k", pa.int64(), nullable=False),
        ("v", pa.string()),
        pa.field("dt", pa.string(), nullable=False),
    ]
)


def _app_batches() -> list[pa.Table]:
    return [
        pa.table({"id": [1, 2, 3], "name": ["a", "b", None], "dt": ["d1", "d1", "d2"]}, schema=APP),
        pa.table({"id": [4], "name": ["d"], "dt": ["d2"]}, schema=APP),
        pa.table({"id": [5, 6], "name": ["e", "f"], "dt": ["d3", "d1"]}, schema=APP),
    ]


def _pk_batches() -> list[pa.Table]:
    return [
        pa.table({"k": [1, 2, 3], "v": ["a1", "b1", "c1"], "dt": ["d1"] * 3}, schema=PK),
        pa.table({"k": [2, 4], "v": ["b2", "d2"], "dt": ["d1", "d2"]}, schema=PK),
        pa.table({"k": [1, 4, 5], "v": ["a3", "d3", "e3"], "dt": ["d1", "d2", "d1"]}, schema=PK),
    ]


PK_EXPECTED = [
    (1, "a3", "d1"),
    (2, "b2", "d1"),
    (3, "c1", "d1"),
    (4, "d3", "d2"),
    (5, "e3", "d1"),
]


def test_we_read_pypaimon_append_table(warehouse: str) -> None:
    batches = _app_batches()
    pypaimon_write(warehouse, "db.app", batches[0], create={"partition_keys": ["dt"]})
    for b in batches[1:]:
        pypaimon_write(warehouse, "db.app", b)
    table = FileSystemCatalog(warehouse).get_table("db.app")
    assert rows(table.to_arrow()) == rows(pa.concat_tables(batches))
    assert table.snapshot_manager.list_snapshot_ids() == [1, 2, 3]


def test_we_read_pypaimon_fixed_bucket_pk_table(warehouse: str) -> None:
    create = {"partition_keys": ["dt"], "primary_keys": ["k", "dt"], "options": {"bucket": "2"}}
    batches = _pk_batches()
    pypaimon_write(warehouse, "db.pk", batches[0], create=create)
    for b in batches[1:]:
        pypaimon_write(warehouse, "db.pk", b)
    table = FileSystemCatalog(warehouse).get_table("db.pk")
    assert rows(table.to_arrow(), ["k", "v", "dt"]) == PK_EXPECTED


def test_we_read_pypaimon_dynamic_bucket_pk_table(warehouse: str) -> None:
    create = {"partition_keys": ["dt"], "primary_keys": ["k", "dt"], "options": {"bucket": "-1"}}
    batches = _pk_batches()
    pypaimon_write(warehouse, "db.pkdyn", batches[0], create=create)
    for b in batches[1:]:
        pypaimon_write(warehouse, "db.pkdyn", b)
    table = FileSystemCatalog(warehouse).get_table("db.pkdyn")
    assert rows(table.to_arrow(), ["k", "v", "dt"]) == PK_EXPECTED
    assert table.latest_snapshot().index_manifest


def test_we_read_pypaimon_table_after_schema_change(warehouse: str) -> None:
    from pypaimon import CatalogFactory
    from pypaimon.schema.data_types import AtomicType
    from pypaimon.schema.schema_change import SchemaChange

    batches = _app_batches()
    pypaimon_write(warehouse, "db.evo", batches[0], create={"partition_keys": ["dt"]})
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.alter_table("db.evo", [SchemaChange.add_column("score", AtomicType("DOUBLE"))], False)
    wider = pa.schema([*APP, ("score", pa.float64())])
    pypaimon_write(
        warehouse,
        "db.evo",
        pa.table({"id": [9], "name": ["z"], "dt": ["d9"], "score": [1.5]}, schema=wider),
    )
    table = FileSystemCatalog(warehouse).get_table("db.evo")
    assert table.schema.schema_id == 1
    got = rows(table.to_arrow(), ["id", "name", "dt", "score"])
    want = [(r[0], r[1], r[2], None) for r in rows(batches[0])] + [(9, "z", "d9", 1.5)]
    assert got == sorted(want, key=lambda r: tuple((v is not None, v) for v in r))


def test_we_travel_to_a_pypaimon_snapshot_in_its_own_schema(warehouse: str) -> None:
    pypaimon_evolved_table(warehouse, "db.evo")
    old = {"k": 1, "a": "a1", "b": 10}
    assert pypaimon_read(warehouse, "db.evo", {"scan.snapshot-id": "1"}).to_pylist() == [old]
    table = FileSystemCatalog(warehouse).get_table("db.evo")
    assert table.copy({"scan.snapshot-id": "1"}).to_arrow().to_pylist() == [old]
    assert table.copy({"scan.version": "1"}).to_arrow().column_names == ["k", "a", "b"]
    assert rows(table.to_arrow()) == [(1, "a1", None), (2, "x", "c2")]


def _create(warehouse: str, name: str, schema: pa.Schema, **kw: object) -> object:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    return catalog.create_table(f"db.{name}", schema, **kw)


def test_pypaimon_reads_our_append_table(warehouse: str) -> None:
    table = _create(warehouse, "app", APP, partition_keys=["dt"])
    batches = _app_batches()
    for b in batches:
        table.write_arrow(b)
    assert rows(pypaimon_read(warehouse, "db.app")) == rows(pa.concat_tables(batches))
    from pypaimon import CatalogFactory

    peer = CatalogFactory.create({"warehouse": warehouse}).get_table("db.app")
    snaps = peer.snapshot_manager().get_latest_snapshot()
    assert snaps.id == 3
    assert snaps.total_record_count == 6
    assert [f.name for f in peer.table_schema.fields] == ["id", "name", "dt"]


def test_pypaimon_reads_our_pk_table_with_upserts(warehouse: str) -> None:
    table = _create(
        warehouse,
        "pk",
        PK,
        partition_keys=["dt"],
        primary_keys=["k", "dt"],
        options={"bucket": "2"},
    )
    for b in _pk_batches():
        table.write_arrow(b)
    assert rows(pypaimon_read(warehouse, "db.pk"), ["k", "v", "dt"]) == PK_EXPECTED
    assert rows(table.to_arrow(), ["k", "v", "dt"]) == PK_EXPECTED


def test_pypaimon_reads_our_table_after_40_commits_with_manifest_merging(warehouse: str) -> None:
    table = _create(warehouse, "many", APP, partition_keys=["dt"])
    expected = []
    for i in range(40):
        b = pa.table(
            {"id": [i, i + 100], "name": [f"n{i}", None], "dt": [f"d{i % 3}"] * 2}, schema=APP
        )
        expected.append(b)
        table.write_arrow(b)
    latest = table.latest_snapshot()
    base = table.manifest_list.read(latest.base_manifest_list)
    # 39 delta manifests were folded by the minor compaction (merge-min-count 30).
    assert len(base) < 30
    assert rows(pypaimon_read(warehouse, "db.many")) == rows(pa.concat_tables(expected))
    assert rows(table.to_arrow()) == rows(pa.concat_tables(expected))
    # Time travel on an old snapshot still sees exactly what it had.
    old = pypaimon_read(warehouse, "db.many", {"scan.snapshot-id": "5"})
    assert rows(old) == rows(pa.concat_tables(expected[:5]))


def test_pypaimon_reads_our_snapshot_and_schema_files(warehouse: str) -> None:
    table = _create(warehouse, "meta", APP, partition_keys=["dt"], options={"bucket": "-1"})
    table.write_arrow(_app_batches()[0])
    snap = json.loads(open(os.path.join(table.path, "snapshot", "snapshot-1")).read())
    assert snap["version"] == 3 and snap["id"] == 1 and snap["commitKind"] == "APPEND"
    assert snap["totalRecordCount"] == 3 and snap["deltaRecordCount"] == 3
    assert open(os.path.join(table.path, "snapshot", "LATEST")).read() == "1"
    from pypaimon import CatalogFactory

    peer = CatalogFactory.create({"warehouse": warehouse}).get_table("db.meta")
    assert peer.table_schema.partition_keys == ["dt"]
    assert peer.snapshot_manager().get_latest_snapshot().delta_record_count == 3


def test_types_round_trip_through_pypaimon(warehouse: str) -> None:
    schema = pa.schema(
        [
            ("i8", pa.int8()),
            ("i16", pa.int16()),
            ("i32", pa.int32()),
            ("f", pa.float32()),
            ("d", pa.float64()),
            ("b", pa.bool_()),
            ("dec", pa.decimal128(10, 2)),
            ("day", pa.date32()),
            ("ts", pa.timestamp("us")),
            ("bin", pa.binary()),
        ]
    )
    data = pa.table(
        {
            "i8": [1, None],
            "i16": [2, -3],
            "i32": [3, 4],
            "f": [1.5, None],
            "d": [2.25, -1.0],
            "b": [True, None],
            "dec": [decimal.Decimal("1.25"), decimal.Decimal("-3.10")],
            "day": [datetime.date(2024, 1, 1), None],
            "ts": [datetime.datetime(2024, 1, 1, 12, 0, 0, 123456), None],
            "bin": [b"\x00\x01", None],
        },
        schema=schema,
    )
    table = _create(warehouse, "types", schema)
    table.write_arrow(data)
    assert rows(pypaimon_read(warehouse, "db.types")) == rows(data)
    assert rows(table.to_arrow()) == rows(data)

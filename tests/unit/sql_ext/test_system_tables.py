"""System tables: declared like Paimon, rows compared with pypaimon's on the same table.

Where pypaimon 2.1 deviates from Java Paimon (master, ``table/system/*Table.java``) we follow
Java and translate pypaimon's value before comparing: ``$snapshots`` has Java's ``operation``
column; ``$files`` renders partitions as ``{v}``, stats as a sorted ``{k=v}`` map, the full
file path and ``file_source`` as ``APPEND``; ``$partitions.total_buckets`` is the manifest
entries' bucket count (``-1`` for bucket-unaware tables) where pypaimon counts buckets.
"""

from __future__ import annotations

import datetime as dt
import importlib
import json
import os
import time
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest
from pypaimon import CatalogFactory

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import SnapshotNotFound, TableNotExist
from paimon_core.format.schema import AddColumn
from paimon_core.format.types import parse_data_type
from paimon_core.table import FileStoreTable
from procedures.base import epoch_millis_to_local
from sql_ext.system_tables import (
    DV_RANGES,
    SYSTEM_TABLES,
    cast_to_string,
    spark_schema,
    system_table_columns,
    system_table_rows,
)
from tests.unit.procedures.helpers import T0, call, new_catalog, new_table

PYPAIMON_MODULES = {
    "snapshots": "snapshots_table",
    "tags": "tags_table",
    "schemas": "schemas_table",
    "options": "options_table",
    "manifests": "manifests_table",
    "files": "files_table",
    "partitions": "partitions_table",
    "branches": "branches_table",
    "consumers": "consumers_table",
    "buckets": "buckets_table",
    "file_key_ranges": "file_key_ranges_table",
    "table_indexes": "table_indexes_table",
}
JAVA_ONLY = {"snapshots": {"operation"}}
JAVA_AGGREGATION_FIELDS = [  # AggregationFieldsTable.TABLE_TYPE (not in pypaimon)
    ("field_name", "STRING", False),
    ("field_type", "STRING", False),
    ("function", "STRING", True),
    ("function_options", "STRING", True),
    ("comment", "STRING", True),
]
JAVA_STATISTIC_TABLE = [  # StatisticTable.TABLE_TYPE (pypaimon has no $statistics)
    ("snapshot_id", "BIGINT", False),
    ("schema_id", "BIGINT", False),
    ("mergedRecordCount", "BIGINT", True),
    ("mergedRecordSize", "BIGINT", True),
    ("colstat", "STRING", True),
]


JAVA_FILE_INDEXES = [  # FileIndexesTable.TABLE_TYPE (not in pypaimon)
    ("partition", "STRING", True),
    ("bucket", "INT", False),
    ("file_path", "STRING", False),
    ("file_size_in_bytes", "BIGINT", False),
    ("record_count", "BIGINT", False),
    ("schema_id", "BIGINT", False),
    ("column_name", "STRING", False),
    ("index_type", "STRING", False),
    ("storage_type", "STRING", False),
    ("index_file_path", "STRING", True),
    ("index_size_in_bytes", "BIGINT", False),
    ("index_container_size_in_bytes", "BIGINT", False),
    ("is_empty", "BOOLEAN", False),
]


def _pypaimon_type(field: Any) -> tuple[str, str, bool]:
    kind = getattr(field.type, "type", None)
    if kind is None:  # an ARRAY: of STRING, or of DeletionVectorMeta rows
        element = field.type.element
        kind = "ARRAY<STRING>" if hasattr(element, "type") else DV_RANGES
    return field.name, kind, field.type.nullable


def test_every_system_table_is_declared_by_pypaimon_or_java() -> None:
    java_only = {"statistics", "aggregation_fields", "file_indexes"}
    assert set(SYSTEM_TABLES) == set(PYPAIMON_MODULES) | java_only
    assert list(system_table_columns("statistics")) == JAVA_STATISTIC_TABLE
    assert list(system_table_columns("file_indexes")) == JAVA_FILE_INDEXES
    assert list(system_table_columns("aggregation_fields")) == JAVA_AGGREGATION_FIELDS
    assert list(SYSTEM_TABLES)[:5] == ["manifests", "snapshots", "options", "schemas", "partitions"]


@pytest.mark.parametrize("name", sorted(PYPAIMON_MODULES))
def test_columns_match_pypaimon_declarations(name: str) -> None:
    module = importlib.import_module(f"pypaimon.table.system.{PYPAIMON_MODULES[name]}")
    theirs = [_pypaimon_type(f) for f in module.TABLE_TYPE.fields]
    ours = [c for c in system_table_columns(name) if c[0] not in JAVA_ONLY.get(name, ())]
    assert [(c[0], c[2]) for c in ours] == [(t[0], t[2]) for t in theirs]
    spark_kinds = {"TIMESTAMP(3)": "TIMESTAMP_NTZ", "INT": "INT", "BIGINT": "BIGINT"}
    for (_, kind, _), (_, their_kind, _) in zip(ours, theirs):
        assert kind == spark_kinds.get(their_kind, their_kind)


def test_snapshots_has_java_operation_column_before_writer_version() -> None:
    names = [c[0] for c in system_table_columns("snapshots")]
    assert names[13:] == ["next_row_id", "operation", "writer_version"]


def test_unknown_system_table(warehouse: str) -> None:
    table = new_table(new_catalog(warehouse), commits=1)
    with pytest.raises(TableNotExist, match="Unknown system table 'nope': supported are manifests"):
        system_table_rows(table, "nope")
    with pytest.raises(TableNotExist):
        spark_schema("nope")
    assert system_table_rows(table, " SnapShots ", time_zone="UTC")[0][0] == 1


def test_spark_schema() -> None:
    schema = spark_schema("files")
    assert [f.name for f in schema.fields] == [c[0] for c in system_table_columns("files")]
    types = {f.name: (f.dataType.simpleString(), f.nullable) for f in schema.fields}
    assert types["bucket"] == ("int", False)
    assert types["creation_time"] == ("timestamp_ntz", True)
    assert types["write_cols"] == ("array<string>", True)
    assert types["deleteRowCount"] == ("bigint", True)
    ranges = spark_schema("table_indexes")["dv_ranges"].dataType
    assert ranges.simpleString() == DV_RANGES
    assert [f.nullable for f in ranges.elementType.fields] == [False, False, False, True]


# ----------------------------------------------------------------------- against pypaimon


def _pypaimon_rows(warehouse: str, identifier: str, name: str) -> list[dict[str, Any]]:
    catalog = CatalogFactory.create({"warehouse": warehouse})
    table = catalog.get_table(f"{identifier}${name}")
    builder = table.new_read_builder()
    return builder.new_read().to_arrow(builder.new_scan().plan().splits()).to_pylist()


def _ours(table: FileStoreTable, name: str, **kwargs: Any) -> list[dict[str, Any]]:
    names = [c[0] for c in system_table_columns(name)]
    return [dict(zip(names, row)) for row in system_table_rows(table, name, **kwargs)]


def _java_map(text: str) -> str:
    """pypaimon's JSON stats -> Java's sorted ``{k=v}`` map string."""
    pairs = json.loads(text)
    return (
        "{"
        + ", ".join(f"{k}={'null' if pairs[k] is None else pairs[k]}" for k in sorted(pairs))
        + "}"
    )


@pytest.fixture
def utc_process(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """pypaimon renders local wall-clock times through the process zone: pin it to UTC."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def rich_table(warehouse: str, utc_process: None) -> FileStoreTable:
    """Partitioned append table: 3 commits, options, tags (one with TTL), a branch, a consumer."""
    catalog = new_catalog(warehouse)
    table = new_table(catalog, options={"snapshot.num-retained.min": "5", "file.format": "parquet"})
    call(catalog, "create_tag", table="db.t", tag="t1", snapshot=1)
    call(catalog, "create_tag", table="db.t", tag="t3", snapshot=2, time_retained="1 d")
    call(catalog, "create_tag", table="db.t", tag="t2")
    os.makedirs(os.path.join(table.path, "branch", "branch-b1"))
    os.makedirs(os.path.join(table.path, "consumer"))
    with open(os.path.join(table.path, "consumer", "consumer-c1"), "w") as fh:
        json.dump({"nextSnapshot": 3}, fh)
    return catalog.get_table("db.t")


@pytest.mark.parametrize("name", ["snapshots", "schemas", "options", "manifests", "consumers"])
def test_same_rows_as_pypaimon(warehouse: str, rich_table: FileStoreTable, name: str) -> None:
    theirs = _pypaimon_rows(warehouse, "db.t", name)
    ours = _ours(rich_table, name, time_zone="UTC")
    assert ours, name
    for row in ours:
        for column in JAVA_ONLY.get(name, ()):
            assert row.pop(column) is None
    assert ours == theirs


def test_tags_as_pypaimon(warehouse: str, rich_table: FileStoreTable) -> None:
    theirs = sorted(_pypaimon_rows(warehouse, "db.t", "tags"), key=lambda r: r["tag_name"])
    ours = _ours(rich_table, "tags", time_zone="UTC")
    assert [r["tag_name"] for r in ours] == ["t1", "t2", "t3"]  # Java's TreeMap: by name
    assert ours == theirs
    assert ours[2]["time_retained"] == "PT24H"
    assert ours[2]["create_time"] is not None and ours[0]["create_time"] is None
    assert ours[0]["commit_time"] == dt.datetime(2023, 11, 14, 22, 13, 20)


def test_branches_as_pypaimon(warehouse: str, rich_table: FileStoreTable) -> None:
    theirs = _pypaimon_rows(warehouse, "db.t", "branches")
    ours = _ours(rich_table, "branches", time_zone="UTC")
    assert [r["branch_name"] for r in ours] == ["b1"]
    assert ours == theirs


def test_files_as_pypaimon(warehouse: str, rich_table: FileStoreTable) -> None:
    theirs = _pypaimon_rows(warehouse, "db.t", "files")
    ours = _ours(rich_table, "files", time_zone="UTC")
    assert len(ours) == len(theirs) == 3
    key = "file_path"
    by_name = {os.path.basename(r[key]): r for r in ours}
    for their in theirs:
        mine = dict(by_name[their[key]])
        assert mine[key] == os.path.join(
            rich_table.path, their["partition"], "bucket-0", their[key]
        )
        assert mine["partition"] == "{" + their["partition"].split("=", 1)[1] + "}"
        assert mine["file_source"] == "APPEND" and their["file_source"] == "0"
        for column in ("null_value_counts", "min_value_stats", "max_value_stats"):
            assert mine[column] == _java_map(their[column])
        # pypaimon drops the milliseconds of creation_time.
        assert mine["creation_time"].replace(microsecond=0) == their["creation_time"]
        for column in (
            key,
            "partition",
            "file_source",
            "creation_time",
            *[c for c in their if "stats" in c or "counts" in c],
        ):
            mine.pop(column)
            their.pop(column)
        assert mine == their
    assert by_name[os.path.basename(ours[0][key])]["min_value_stats"].startswith(
        "{dt=2024-01-01, id="
    )


def test_partitions_as_pypaimon(warehouse: str, rich_table: FileStoreTable) -> None:
    theirs = _pypaimon_rows(warehouse, "db.t", "partitions")
    ours = _ours(rich_table, "partitions", time_zone="UTC")
    assert [r["partition"] for r in ours] == ["dt=2024-01-01", "dt=2024-01-02"]
    for mine, their in zip(ours, theirs):
        assert mine.pop("total_buckets") == -1  # bucket-unaware: the entries' total buckets
        assert their.pop("total_buckets") == 1
        assert mine == their
    assert ours[0]["record_count"] == 4 and ours[0]["file_count"] == 2


def test_primary_key_table_files_as_pypaimon(warehouse: str, utc_process: None) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, "db.pk", primary_keys=["id", "dt"], options={"bucket": "2"})
    theirs = {
        os.path.basename(r["file_path"]): r for r in _pypaimon_rows(warehouse, "db.pk", "files")
    }
    ours = _ours(table, "files", time_zone="UTC")
    assert len(ours) == len(theirs)
    for mine in ours:
        their = theirs[os.path.basename(mine["file_path"])]
        assert mine["min_key"] == their["min_key"] and mine["max_key"] == their["max_key"]
        assert mine["min_key"].startswith("[")
        assert (mine["bucket"], mine["level"]) == (their["bucket"], their["level"])
        assert mine["min_sequence_number"] == their["min_sequence_number"]
    partitions = _ours(table, "partitions", time_zone="UTC")
    assert {p["total_buckets"] for p in partitions} == {2}


# ----------------------------------------------------------------------- Java behaviours


def test_files_honour_snapshot_and_tag(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog)
    call(catalog, "create_tag", table="db.t", tag="first", snapshot=1)
    assert len(system_table_rows(table, "files")) == 3
    assert len(system_table_rows(table, "files", snapshot_id=1)) == 1
    assert len(system_table_rows(table, "manifests", snapshot_id=1)) == 1
    assert [r[0] for r in system_table_rows(table, "partitions", snapshot_id=1)] == [
        "dt=2024-01-01"
    ]
    # Time travel options of the table handle, as Paimon's scan.snapshot-id / scan.tag-name.
    assert len(system_table_rows(table.copy({"scan.tag-name": "first"}), "files")) == 1
    call(
        catalog,
        "expire_snapshots",
        table="db.t",
        retain_max=1,
        retain_min=1,
        older_than="2000-01-01 00:00:00",
    )
    table = catalog.get_table("db.t")
    assert table.snapshot_manager.list_snapshot_ids() == [3]
    assert len(system_table_rows(table, "files", snapshot_id=1)) == 1  # kept by the tag
    with pytest.raises(SnapshotNotFound, match=r"Snapshot id '2' doesn't exist\."):
        system_table_rows(table, "files", snapshot_id=2)
    # Tables without snapshots have no files, manifests or partitions.
    empty = new_table(catalog, "db.empty", commits=0)
    assert system_table_rows(empty, "files") == system_table_rows(empty, "manifests") == []


def test_unpartitioned_table(warehouse: str) -> None:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    table = catalog.create_table("db.u", pa.schema([("k", pa.int32()), ("d", pa.float64())]))
    table.write_arrow(pa.table({"k": pa.array([1, 2], pa.int32()), "d": [0.5, None]}))
    (file_row,) = _ours(table, "files")
    assert file_row["partition"] == "{}"
    assert file_row["min_value_stats"] == "{d=0.5, k=1}"
    assert file_row["null_value_counts"] == "{d=1, k=0}"
    (manifest,) = _ours(table, "manifests")
    assert manifest["min_partition_stats"] == manifest["max_partition_stats"] == "{}"
    (partition,) = _ours(table, "partitions")
    assert (partition["partition"], partition["record_count"]) == ("", 2)


def test_stats_follow_schema_evolution(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=1)
    table.schema_manager.commit_changes(AddColumn("extra", parse_data_type("INT")))
    table = catalog.get_table("db.t")
    rows = _ours(table, "files")
    # A column the file does not have: unknown bounds, every row null (Java's evolution).
    assert rows[0]["null_value_counts"] == "{dt=0, extra=2, id=0, name=1}"
    assert rows[0]["min_value_stats"] == "{dt=2024-01-01, extra=null, id=0, name=n0}"
    assert rows[0]["schema_id"] == 0


def test_timestamps_in_session_zone(warehouse: str) -> None:
    table = new_table(new_catalog(warehouse), commits=1)
    (utc,) = _ours(table, "snapshots", time_zone="UTC")
    (shanghai,) = _ours(table, "snapshots", time_zone="Asia/Shanghai")
    assert utc["commit_time"] == dt.datetime(2023, 11, 14, 22, 13, 20)
    assert shanghai["commit_time"] == dt.datetime(2023, 11, 15, 6, 13, 20)
    assert _ours(table, "snapshots")[0]["commit_time"] == epoch_millis_to_local(T0, None)


@pytest.mark.parametrize(
    ("value", "type_text", "expected"),
    [
        (dt.date(2024, 1, 1), "DATE", "2024-01-01"),
        (dt.datetime(2024, 1, 1, 1, 2, 3), "TIMESTAMP(3)", "2024-01-01 01:02:03.000"),
        (dt.datetime(2024, 1, 1, 1, 2, 3, 120000), "TIMESTAMP(6)", "2024-01-01 01:02:03.120000"),
        (dt.datetime(2024, 1, 1, 1, 2, 3), "TIMESTAMP(0)", "2024-01-01 01:02:03"),
        (
            dt.datetime(2024, 1, 1, 0, 0),
            "TIMESTAMP(3) WITH LOCAL TIME ZONE",
            "2024-01-01 08:00:00.000",
        ),
        (dt.time(1, 2, 3), "TIME(0)", "01:02:03"),
        (True, "BOOLEAN", "true"),
        (1.0e10, "DOUBLE", "1.0E10"),
        (0.1, "FLOAT", "0.1"),
        (Decimal("1.5"), "DECIMAL(10, 2)", "1.50"),
        (b"ab", "BYTES", "ab"),
        (None, "INT", None),
        (-7, "INT", "-7"),
    ],
)
def test_cast_to_string(value: Any, type_text: str, expected: str | None) -> None:
    zone = dt.timezone(dt.timedelta(hours=8))
    assert cast_to_string(value, parse_data_type(type_text), zone) == expected


# ------------------------------------------------- $buckets, $file_key_ranges, $table_indexes


@pytest.fixture
def bucketed(warehouse: str, utc_process: None) -> FileStoreTable:
    """A partitioned primary-key table with two buckets: three commits, 2 rows each."""
    return new_table(
        new_catalog(warehouse), "db.pk", primary_keys=["id", "dt"], options={"bucket": "2"}
    )


def test_buckets_as_pypaimon(warehouse: str, bucketed: FileStoreTable) -> None:
    ours = _ours(bucketed, "buckets", time_zone="UTC")
    theirs = _pypaimon_rows(warehouse, "db.pk", "buckets")
    # Java's order: the partition string, then the bucket; Java renders partitions as {v}.
    assert [(r["partition"], r["bucket"]) for r in ours] == [
        ("{2024-01-01}", 0),
        ("{2024-01-01}", 1),
        ("{2024-01-02}", 0),
    ]
    files = _ours(bucketed, "files", time_zone="UTC")
    for mine, their in zip(ours, theirs):
        assert their.pop("partition") == "dt=" + mine.pop("partition")[1:-1]
        in_bucket = [f for f in files if f["bucket"] == mine["bucket"]]
        assert mine.pop("last_update_time") in {f["creation_time"] for f in in_bucket}
        their.pop("last_update_time")  # pypaimon drops the milliseconds
        assert mine == their
    assert sum(r["record_count"] for r in ours) == 6
    # Time travel: the first commit wrote one bucket of one partition.
    assert len(system_table_rows(bucketed, "buckets", snapshot_id=1)) == 1


def test_file_key_ranges_as_pypaimon(warehouse: str, bucketed: FileStoreTable) -> None:
    ours = _ours(bucketed, "file_key_ranges", time_zone="UTC")
    theirs = {r["file_path"]: r for r in _pypaimon_rows(warehouse, "db.pk", "file_key_ranges")}
    files = {r["file_path"]: r for r in _ours(bucketed, "files", time_zone="UTC")}
    assert len(ours) == len(theirs) == 3
    for mine in ours:
        their = theirs[mine["file_path"]]
        assert their.pop("partition") == "dt=" + mine.pop("partition")[1:-1]
        assert mine == their
        assert {k: files[mine["file_path"]][k] for k in mine if k != "partition"} == mine
    assert ours[0]["min_key"].startswith("[") and ours[0]["first_row_id"] is None


def test_table_indexes_of_a_dynamic_bucket_table_as_pypaimon(warehouse: str) -> None:
    table = new_table(new_catalog(warehouse), "db.dyn", primary_keys=["id", "dt"])
    ours = _ours(table, "table_indexes", time_zone="UTC")
    theirs = _pypaimon_rows(warehouse, "db.dyn", "table_indexes")
    assert {r["index_type"] for r in ours} == {"HASH"}
    assert sum(r["row_count"] for r in ours) == 6  # one hash per key
    for mine, their in zip(ours, theirs):
        assert their.pop("partition") == "dt=" + mine.pop("partition")[1:-1]
        assert mine == their
    assert len(system_table_rows(table, "table_indexes", snapshot_id=1)) == 1
    assert (
        system_table_rows(new_table(new_catalog(warehouse + "/x"), commits=1), "table_indexes")
        == []
    )


def test_table_indexes_show_java_deletion_vectors(warehouse: str, oracle: Any) -> None:
    """Deletion vectors written by Paimon 0.9: one DV index file for the level-5 file whose
    key 1 the second write replaced."""
    oracle(
        "create-table", warehouse, "db.dv", "--schema", "k INT, v STRING, dt STRING",
        "--primary-key", "k,dt", "--partition", "dt", "--option", "bucket=1",
        "--option", "deletion-vectors.enabled=true",
    )  # fmt: skip
    oracle(
        "write",
        warehouse,
        "db.dv",
        "--json-rows",
        '[{"k":1,"v":"a","dt":"x"},{"k":2,"v":"b","dt":"x"}]',
    )
    oracle("write", warehouse, "db.dv", "--json-rows", '[{"k":1,"v":"a2","dt":"x"}]')
    table = FileSystemCatalog(warehouse).get_table("db.dv")
    (row,) = _ours(table, "table_indexes")
    (their,) = _pypaimon_rows(warehouse, "db.dv", "table_indexes")
    assert (row["partition"], row["index_type"], row["row_count"]) == ("{x}", "DELETION_VECTORS", 1)
    (dv,) = row["dv_ranges"]
    level5 = [f for f in oracle("files", warehouse, "db.dv") if f["level"] == 5]
    assert dv["f0"] == level5[0]["file"] and dv["_CARDINALITY"] is None  # 0.9 keeps no count
    their.pop("partition")
    row.pop("partition")
    assert row == their


def test_aggregation_fields(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = catalog.create_table(
        "db.agg",
        pa.schema(
            [pa.field("id", pa.int64(), False), ("price", pa.int32()), ("total", pa.int64())]
        ),
        primary_keys=["id"],
        options={
            "merge-engine": "aggregation",
            "fields.price.ignore-retract": "true",
            "fields.price.aggregate-function": "max",
            "fields.total.aggregate-function": "sum",
            "fields.default-aggregate-function": "last_value",
        },
    )
    rows = _ours(table, "aggregation_fields")
    assert rows == [
        {"field_name": "id", "field_type": "BIGINT NOT NULL", "function": "[]",
         "function_options": "[]", "comment": None},
        {"field_name": "price", "field_type": "INT", "function": "[true, max]",
         "function_options": "[fields.price.ignore-retract, fields.price.aggregate-function]",
         "comment": None},
        {"field_name": "total", "field_type": "BIGINT", "function": "[sum]",
         "function_options": "[fields.total.aggregate-function]", "comment": None},
    ]  # fmt: skip


def test_statistics_follow_time_travel(warehouse: str) -> None:
    table = new_table(new_catalog(warehouse), commits=1)
    assert system_table_rows(table, "statistics") == []
    assert system_table_rows(table, "statistics", snapshot_id=1) == []
    with pytest.raises(SnapshotNotFound):
        system_table_rows(table, "statistics", snapshot_id=7)


# ----------------------------------------------------------------------- $file_indexes


def test_file_indexes_of_java_written_files(spark: Any, warehouse: str, oracle: Any) -> None:
    """Java Paimon writes the indexes (embedded in the manifest when small, else a
    ``.index`` file beside the data file); ``$file_indexes`` lists each from its header."""
    from sql_ext.session import PaimonSession

    oracle(
        "create-table", warehouse, "db.e", "--schema", "id INT, v STRING, dt STRING",
        "--partition", "dt", "--option", "file-index.bloom-filter.columns=id",
        "--option", "file-index.bitmap.columns=v",
    )  # fmt: skip
    oracle(
        "write", warehouse, "db.e", "--json-rows",
        '[{"id":1,"v":"a","dt":"x"},{"id":2,"v":"b","dt":"x"},{"id":3,"v":null,"dt":"y"}]',
    )  # fmt: skip
    oracle(
        "create-table", warehouse, "db.g", "--schema", "id INT, v STRING",
        "--option", "file-index.bitmap.columns=v,id",
    )  # fmt: skip
    oracle("write", warehouse, "db.g", "--json-rows", '[{"id":1,"v":"a"},{"id":2,"v":"b"}]')
    catalog = FileSystemCatalog(warehouse)
    files = {r["file_path"]: r for r in _ours(catalog.get_table("db.e"), "files")}
    separate = _ours(catalog.get_table("db.e"), "file_indexes")
    assert sorted((r["partition"], r["column_name"], r["index_type"]) for r in separate) == [
        ("{x}", "id", "bloom-filter"),
        ("{x}", "v", "bitmap"),
        ("{y}", "id", "bloom-filter"),
        ("{y}", "v", "bitmap"),
    ]
    for row in separate:
        data = files[row["file_path"]]
        assert row["index_file_path"] == row["file_path"] + ".index"
        assert row["storage_type"] == "FILE" and row["is_empty"] is False
        assert row["index_container_size_in_bytes"] == os.path.getsize(row["index_file_path"])
        assert row["index_size_in_bytes"] < row["index_container_size_in_bytes"]
        assert (row["record_count"], row["file_size_in_bytes"], row["schema_id"]) == (
            data["record_count"],
            data["file_size_in_bytes"],
            data["schema_id"],
        )
    session = PaimonSession(spark, warehouse=warehouse)
    try:
        got = session.sql(
            "SELECT partition, column_name, index_type, storage_type, index_file_path, "
            "index_container_size_in_bytes FROM db.g$file_indexes"
        ).collect()
    finally:
        session.stop()
    g = catalog.get_table("db.g")
    embedded = g.new_scan().read_entries(g.latest_snapshot())[0].file.embedded_index
    assert embedded is not None
    # Java's HashMap order of the header's columns: "v" before "id".
    assert [tuple(r) for r in got] == [
        ("{}", "v", "bitmap", "EMBEDDED", None, len(embedded)),
        ("{}", "id", "bitmap", "EMBEDDED", None, len(embedded)),
    ]
    plain = new_table(catalog, "db.plain", commits=1)
    assert system_table_rows(plain, "file_indexes") == []  # files without indexes: no rows

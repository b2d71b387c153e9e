"""``format.features``: the one gate for table features this implementation lacks: which
options and column types turn each on, what reads may still do, and the data files whose
manifest fields need a feature their table does not declare."""

from __future__ import annotations

import dataclasses
import json
import os

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import SchemaError, UnsupportedFeature
from paimon_core.format.features import (
    FEATURES,
    Access,
    check_files,
    check_supported,
    unsupported,
)
from paimon_core.format.manifest import EMPTY_ROW, EMPTY_STATS, DataFileMeta
from paimon_core.format.schema import SetOption, new_table_schema
from paimon_core.format.types import ARRAY, BIGINT, BLOB, ROW, STRING, DataField
from paimon_core.table import FileStoreTable
from tests.unit.paimon_core.helpers import file_state, foreign_table, kvd_batch, kvd_table

PLAIN = new_table_schema([("id", BIGINT()), ("v", STRING())])
# Options turning each feature on, by its name in FEATURES.
ON: dict[str, dict[str, str]] = {
    "BLOB fields": {"blob-field": "b"},
    "BLOB descriptor fields": {"blob.stored-descriptor-fields": "b"},
    "BLOB view fields": {"blob-view-field": "b"},
    "postpone merge-on-read": {"bucket": "-2", "postpone.merge-on-read": "true"},
    "chain tables": {"chain-table.enabled": "true"},
    "VARIANT shredding inference": {"variant.inferShreddingSchema": "true"},
}
READABLE = {"VARIANT shredding inference", "BLOB fields"}


def test_every_feature_has_a_case() -> None:
    assert {f.name for f in FEATURES} == set(ON)
    assert {f.name for f in FEATURES if f.readable} == READABLE


@pytest.mark.parametrize("feature", FEATURES, ids=lambda f: f.name)
def test_each_feature_refuses_writes_naming_its_option_and_reads_unless_readable(
    feature,
) -> None:
    options = ON[feature.name]
    for access in (Access.CREATE, Access.ALTER, Access.WRITE):
        with pytest.raises(UnsupportedFeature) as refused:
            check_supported(PLAIN, options, access, "db.t")
        message = str(refused.value)
        assert message.startswith(f"Cannot {access.value} table db.t: ")
        assert f"{feature.name} ({feature.setting(options)})" in message
        assert feature.setting(options).split(" = ")[1] != "''"
    refused_read = unsupported(PLAIN, options, Access.READ)
    assert (refused_read is None) == feature.readable


@pytest.mark.parametrize(
    "options",
    [
        {"row-tracking.enabled": "false", "data-evolution.enabled": "FALSE"},
        {"data-file.external-paths": "s3://b/x"},  # strategy 'none' (the default): unused
        {"data-file.external-paths": "s3://b/x", "data-file.external-paths.strategy": "None"},
        {"data-file.external-paths": " ", "data-file.external-paths.strategy": "round-robin"},
        {"postpone.merge-on-read": "true", "bucket": "2"},
        {"blob-field": "", "rowkind.field": "  ", "bucket": "-1"},
    ],
)
def test_options_that_leave_features_off(options: dict[str, str]) -> None:
    for access in Access:
        assert unsupported(PLAIN, options, access) is None


def test_top_level_blob_columns_are_read_and_refused_for_the_rest() -> None:
    schema = dataclasses.replace(new_table_schema([("id", BIGINT()), ("b", BLOB())]), schema_id=2)
    assert unsupported(schema, {"blob-field": "b"}, Access.READ) is None
    for access in (Access.CREATE, Access.ALTER, Access.WRITE):
        with pytest.raises(UnsupportedFeature) as refused:
            check_supported(schema, {}, access, "db.t")
        assert str(refused.value) == (
            f"Cannot {access.value} table db.t: column 'b' of type BLOB (schema/schema-2) is "
            "not supported yet"
        )


def test_nested_blob_columns_are_refused_naming_column_type_and_schema_file() -> None:
    fields = [
        ("id", BIGINT()),
        ("r", ROW([DataField(0, "inner", ARRAY(BLOB()))])),
    ]
    schema = dataclasses.replace(new_table_schema(fields), schema_id=3)
    for access in Access:
        with pytest.raises(UnsupportedFeature) as refused:
            check_supported(schema, {}, access, "db.t")
        assert str(refused.value) == (
            f"Cannot {access.value} table db.t: column 'r' of type BLOB (schema/schema-3) is "
            "not supported yet"
        )


def _file(**fields: object) -> DataFileMeta:
    return DataFileMeta("data-1.parquet", 10, 3, EMPTY_ROW, EMPTY_ROW, EMPTY_STATS, EMPTY_STATS, 0, 0, 0, 0, **fields)  # type: ignore[arg-type]  # fmt: skip


def test_row_tracking_is_implemented_so_never_refused() -> None:
    for access in Access:
        assert unsupported(PLAIN, {"row-tracking.enabled": " True "}, access) is None


def test_check_files_refuses_write_cols_without_data_evolution_and_row_ids_without_row_tracking() -> (
    None
):
    tracking = {"row-tracking.enabled": "true"}
    check_files([_file(), _file(first_row_id=5)], tracking, "db.t")
    check_files([_file()], {}, "db.t")
    evolution = {**tracking, "data-evolution.enabled": "true"}
    check_files([_file(first_row_id=0, write_cols=("v",))], evolution, "db.t")
    with pytest.raises(
        UnsupportedFeature,
        match=r"data-1.parquet holds only columns \['v'\] .* no 'data-evolution.enabled'",
    ):
        check_files([_file(first_row_id=0, write_cols=("v",))], tracking, "db.t")
    # Whole rows that keep their ids (a compaction's, an UPDATE's): their columns plus
    # _ROW_ID and _SEQUENCE_NUMBER; not in a plain table (data evolution reads any).
    kept = _file(write_cols=("id", "v", "_ROW_ID", "_SEQUENCE_NUMBER"))
    check_files([kept], tracking, "db.t")
    with pytest.raises(UnsupportedFeature, match="_WRITE_COLS"):
        check_files([kept], {}, "db.t")
    check_files([kept], {**tracking, "data-evolution.enabled": "true"}, "db.t")
    with pytest.raises(UnsupportedFeature, match=r"_FIRST_ROW_ID = 5\) but the table has no"):
        check_files([_file(first_row_id=5)], {"row-tracking.enabled": "false"}, "db.t")


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [("first_row_id", 0, "_FIRST_ROW_ID = 0"), ("write_cols", ("v",), "_WRITE_COLS")],
)
def test_plans_of_a_plain_table_refuse_files_with_row_tracking_fields(
    warehouse: str, field: str, value: object, named: str
) -> None:
    """A file of a table we treat as plain whose manifest entry says row ids or some columns
    only: planning its read fails, instead of reading it as whole rows."""
    table = kvd_table(warehouse)
    table.write_arrow(kvd_batch([1, 2]))
    write = table.new_write()
    write.write_arrow(kvd_batch([3]))
    (message,) = write.prepare_commit()
    marked = dataclasses.replace(message.new_files[0], **{field: value})
    table.new_commit().commit([dataclasses.replace(message, new_files=(marked,))])
    with pytest.raises(UnsupportedFeature, match=f"Cannot read table db.t: data file .*{named}"):
        table.to_arrow()
    with pytest.raises(UnsupportedFeature, match=named):
        table.new_scan().plan(predicate=[("k", "=", 3)])
    # Files pruned away are not read, so not refused.
    assert table.to_arrow(partition_filter={"dt": "b"}).num_rows == 0


def test_schema_commits_are_refused_before_any_file(warehouse: str) -> None:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    schema = pa.schema([("id", pa.int64()), ("v", pa.string())])
    with pytest.raises(UnsupportedFeature, match=r"Cannot create table db\.t: chain tables"):
        catalog.create_table("db.t", schema, options={"chain-table.enabled": "true"})
    assert os.listdir(catalog.database_path("db")) == []
    table = catalog.create_table("db.t", schema)
    before = file_state(table.path)
    with pytest.raises(UnsupportedFeature, match=r"Cannot change the schema of table db\.t: chain"):
        table.schema_manager.commit_changes(SetOption("chain-table.enabled", "true"))
    assert file_state(table.path) == before
    assert table.schema_manager.list_ids() == [0]


def test_dynamic_options_count_as_the_tables(warehouse: str) -> None:
    table = kvd_table(warehouse)
    table.write_arrow(kvd_batch([1, 2]))
    before = file_state(warehouse)
    copied = table.copy({"variant.inferShreddingSchema": "true"})
    assert copied.to_arrow().num_rows == 2  # a readable feature
    for attempt in (
        copied.new_write,
        copied.new_commit,
        lambda: copied.write_arrow(kvd_batch([3])),
    ):
        with pytest.raises(UnsupportedFeature, match="VARIANT shredding inference"):
            attempt()
    with pytest.raises(UnsupportedFeature, match=r"Cannot read table db\.t: chain tables"):
        table.copy({"chain-table.enabled": "true"}).to_arrow()
    assert file_state(warehouse) == before


def test_a_foreign_postpone_table_reads_without_its_postpone_files(warehouse: str) -> None:
    """No file in a real bucket yet: nothing to read (the writer's files wait in
    ``bucket-postpone`` for a compaction), as Java's and pypaimon's batch reads; writes go to
    real buckets, as Paimon-Spark's batch writes."""
    schema = pa.schema([pa.field("k", pa.int64(), False), ("v", pa.string())])
    table = foreign_table(warehouse, "db.p", schema, primary_keys=["k"], options={"bucket": "-2"})
    assert table.to_arrow().num_rows == 0
    table.write_arrow(pa.table({"k": [1], "v": ["a"]}, schema=schema))
    assert table.to_arrow().to_pylist() == [{"k": 1, "v": "a"}]
    with pytest.raises(UnsupportedFeature, match="postpone merge-on-read"):
        table.copy({"postpone.merge-on-read": "true"}).to_arrow()


def test_unknown_types_in_a_schema_file_name_the_type_and_the_file(warehouse: str) -> None:
    table = kvd_table(warehouse)
    path = f"{table.path}/schema/schema-0"
    with open(path) as f:
        data = json.load(f)
    data["fields"][1]["type"] = "GEOMETRY"
    with open(path, "w") as f:
        json.dump(data, f)
    with pytest.raises(SchemaError) as refused:
        FileStoreTable.load(table.path)
    assert str(refused.value) == (
        f"Schema file {path} is corrupt: Cannot parse data type 'GEOMETRY': unsupported type "
        "GEOMETRY"
    )

"""Reading splits: schema evolution by field id, merge-on-read, pypaimon-written tables."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import DataFileUnreadable, SchemaError, UnsupportedFeature
from paimon_core.format.commit_message import CommitMessage
from paimon_core.format.schema import DropColumn, RenameColumn, SetOption
from paimon_core.table import FileStoreTable
from tests.interop.helpers import pypaimon_commit

SCHEMA = pa.schema(
    [pa.field("k", pa.int64(), False), ("v", pa.string()), pa.field("dt", pa.string(), False)]
)


def _table(
    warehouse: str, name: str = "t", schema: pa.Schema = SCHEMA, **kw: Any
) -> FileStoreTable:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    return catalog.create_table(f"db.{name}", schema, **kw)


def _batch(ks: list[int], tag: str = "v", dt: str = "a") -> pa.Table:
    return pa.table({"k": ks, "v": [f"{tag}{k}" for k in ks], "dt": [dt] * len(ks)}, schema=SCHEMA)


def _sorted(table: pa.Table) -> list[dict]:
    return sorted(table.to_pylist(), key=lambda r: (r["dt"], r["k"]))


def _pypaimon(warehouse: str) -> Any:
    from pypaimon import CatalogFactory

    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db", True)
    return catalog


def _pypaimon_write(catalog: Any, name: str, data: pa.Table) -> None:
    pypaimon_commit(catalog.get_table(name), data)


def _pypaimon_read(catalog: Any, name: str) -> pa.Table:
    builder = catalog.get_table(name).new_read_builder()
    return builder.new_read().to_arrow(builder.new_scan().plan().splits())


def test_reads_a_pypaimon_table_after_add_column_exactly(warehouse: str) -> None:
    from pypaimon import Schema
    from pypaimon.schema.data_types import AtomicType
    from pypaimon.schema.schema_change import SchemaChange

    catalog = _pypaimon(warehouse)
    plain = pa.schema([("id", pa.int64()), ("name", pa.string()), ("dt", pa.string())])
    catalog.create_table("db.app", Schema.from_pyarrow_schema(plain, partition_keys=["dt"]), False)
    _pypaimon_write(
        catalog,
        "db.app",
        pa.table({"id": [1, 2], "name": ["a", "b"], "dt": ["d1", "d2"]}, schema=plain),
    )
    catalog.alter_table("db.app", [SchemaChange.add_column("score", AtomicType("DOUBLE"))], False)
    wider = pa.schema([*plain, ("score", pa.float64())])
    _pypaimon_write(
        catalog,
        "db.app",
        pa.table({"id": [3], "name": ["c"], "dt": ["d1"], "score": [0.5]}, schema=wider),
    )

    ours = FileStoreTable.load(os.path.join(warehouse, "db.db", "app"))
    got = ours.to_arrow()
    assert got.column_names == ["id", "name", "dt", "score"]
    assert got.schema.field("score").type == pa.float64()
    key = lambda r: r["id"]  # noqa: E731
    assert sorted(got.to_pylist(), key=key) == sorted(
        _pypaimon_read(catalog, "db.app").to_pylist(), key=key
    )
    assert sorted(got.to_pylist(), key=key)[0] == {"id": 1, "name": "a", "dt": "d1", "score": None}


def test_renamed_and_dropped_columns_follow_field_ids(warehouse: str) -> None:
    table = _table(warehouse)
    table.write_arrow(_batch([1, 2]))
    table.schema_manager.commit_changes(RenameColumn("v", "value"))
    table.schema_manager.commit_changes(DropColumn("dt"))
    evolved = FileStoreTable.load(table.path)
    got = evolved.to_arrow()
    assert got.column_names == ["k", "value"]
    assert sorted(got.to_pylist(), key=lambda r: r["k"]) == [
        {"k": 1, "value": "v1"},
        {"k": 2, "value": "v2"},
    ]


def test_merge_on_read_dedups_and_drops_retractions(warehouse: str) -> None:
    table = _table(
        warehouse, partition_keys=["dt"], primary_keys=["dt", "k"], options={"bucket": "2"}
    )
    table.write_arrow(_batch([1, 2, 3, 4, 5]))
    table.write_arrow(_batch([2, 3], "u"), row_kinds=pa.array([1, 2], pa.int8()))
    table.write_arrow(_batch([5, 6], "x"), row_kinds=pa.array([3, 0], pa.int8()))
    table.write_arrow(_batch([1], "again", "b"))
    expected = [
        {"k": 1, "v": "v1", "dt": "a"},
        {"k": 3, "v": "u3", "dt": "a"},
        {"k": 4, "v": "v4", "dt": "a"},
        {"k": 6, "v": "x6", "dt": "a"},
        {"k": 1, "v": "again1", "dt": "b"},
    ]
    splits = table.new_scan().plan()
    read = table.new_read()
    assert _sorted(read.to_arrow(splits)) == expected
    batches = list(read.to_arrow_batches(splits))
    assert _sorted(pa.Table.from_batches(batches)) == expected
    assert read.to_arrow(splits, projection=[]).num_rows == len(expected)
    assert sum(b.num_rows for b in read.to_arrow_batches(splits, projection=[])) == len(expected)
    projected = read.to_arrow(splits, projection=["v"])
    assert projected.column_names == ["v"]
    assert sorted(projected.column("v").to_pylist()) == sorted(r["v"] for r in expected)


def test_reads_pypaimon_pk_tables_like_pypaimon(warehouse: str) -> None:
    from pypaimon import Schema

    catalog = _pypaimon(warehouse)
    for name, bucket in (("db.fixed", "2"), ("db.dyn", "-1")):
        schema = Schema.from_pyarrow_schema(
            SCHEMA, partition_keys=["dt"], primary_keys=["dt", "k"], options={"bucket": bucket}
        )
        catalog.create_table(name, schema, False)
        _pypaimon_write(catalog, name, _batch([1, 2, 3]))
        _pypaimon_write(catalog, name, _batch([2, 4], "b"))
        _pypaimon_write(catalog, name, _batch([1, 4, 5], "c"))
        ours = FileStoreTable.load(os.path.join(warehouse, "db.db", name.split(".")[1]))
        assert _sorted(ours.to_arrow()) == _sorted(_pypaimon_read(catalog, name))
        assert [r["v"] for r in _sorted(ours.to_arrow())] == ["c1", "b2", "v3", "c4", "c5"]


def test_sequence_field_decides_between_versions(warehouse: str) -> None:
    schema = pa.schema([pa.field("k", pa.int64(), False), ("v", pa.string()), ("ts", pa.int64())])
    table = _table(
        warehouse,
        schema=schema,
        primary_keys=["k"],
        options={"bucket": "1", "sequence.field": "ts"},
    )
    table.write_arrow(pa.table({"k": [1, 2], "v": ["new", "a"], "ts": [5, 1]}, schema=schema))
    table.write_arrow(pa.table({"k": [1, 2], "v": ["stale", "b"], "ts": [3, 2]}, schema=schema))
    assert sorted((r["k"], r["v"]) for r in table.to_arrow().to_pylist()) == [(1, "new"), (2, "b")]


def test_files_of_higher_levels_are_read(warehouse: str) -> None:
    table = _table(warehouse, primary_keys=["k"], options={"bucket": "1"})
    write = table.new_write()
    write.write_arrow(_batch([1, 2]))
    (message,) = write.prepare_commit()
    leveled = [dataclasses.replace(f, level=5) for f in message.new_files]
    table.new_commit().commit([CommitMessage(message.partition, 0, 1, new_files=tuple(leveled))])
    table.write_arrow(_batch([2], "new"))
    assert {f.level for s in table.new_scan().plan() for f in s.files} == {0, 5}
    assert sorted((r["k"], r["v"]) for r in table.to_arrow().to_pylist()) == [
        (1, "v1"),
        (2, "new2"),
    ]


def test_an_aggregate_function_of_the_wrong_type_is_refused_at_read(warehouse: str) -> None:
    options = {"bucket": "1", "merge-engine": "aggregation"}
    options["fields.v.aggregate-function"] = "theta_sketch"
    table = _table(warehouse, primary_keys=["k"], options=options)
    with pytest.raises(
        SchemaError, match="theta sketch column must be 'VarBinaryType' but was 'STRING'"
    ):
        table.new_read()


def test_empty_read_has_the_table_schema(warehouse: str) -> None:
    table = _table(warehouse)
    got = table.new_read().to_arrow([])
    assert got.num_rows == 0 and got.column_names == ["k", "v", "dt"]
    assert not got.schema.field("k").nullable


@pytest.mark.parametrize("arrow_type", [pa.float64(), pa.float32()], ids=["double", "float"])
def test_merge_keeps_one_row_per_float_key_as_java_compare(
    warehouse: str, arrow_type: pa.DataType
) -> None:
    """Upserts of NaN, -inf, +inf, -0.0, 0.0 and 1.5 replace their key: NaN is one key, the
    two zeros are two keys."""
    schema = pa.schema([pa.field("k", arrow_type, False), ("v", pa.string())])
    table = _table(warehouse, "f", schema, primary_keys=["k"], options={"bucket": "1"})
    ks = [float("nan"), float("-inf"), float("inf"), -0.0, 0.0, 1.5]
    table.write_arrow(pa.table({"k": ks, "v": [f"a{i}" for i in range(6)]}, schema=schema))
    table.write_arrow(pa.table({"k": ks[::-1], "v": [f"b{i}" for i in range(6)]}, schema=schema))
    got = sorted((str(r["k"]), r["v"]) for r in table.to_arrow().to_pylist())
    assert got == [
        ("-0.0", "b2"),
        ("-inf", "b4"),
        ("0.0", "b1"),
        ("1.5", "b0"),
        ("inf", "b3"),
        ("nan", "b5"),
    ]


def test_float_sequence_fields_compare_as_java(warehouse: str) -> None:
    """A DOUBLE ``sequence.field`` orders as ``Double.compare``: 0.0 beats a later -0.0 and
    NaN beats every number."""
    schema = pa.schema([pa.field("k", pa.int64(), False), ("s", pa.float64()), ("v", pa.string())])
    table = _table(
        warehouse, "s", schema, primary_keys=["k"], options={"bucket": "1", "sequence.field": "s"}
    )
    table.write_arrow(pa.table({"k": [1, 2], "s": [0.0, float("nan")], "v": ["a", "a"]}, schema))
    table.write_arrow(pa.table({"k": [1, 2], "s": [-0.0, 1e300], "v": ["b", "b"]}, schema))
    assert sorted((r["k"], r["v"]) for r in table.to_arrow().to_pylist()) == [(1, "a"), (2, "a")]


def test_a_table_that_changes_format_reads_every_file(warehouse: str) -> None:
    """Each file is read in the format its name says, not the table's current one; a renamed
    column still finds its data in ORC and Avro files (by field id, then the file's name)."""
    catalog = FileSystemCatalog(warehouse)
    table = _table(
        warehouse, partition_keys=["dt"], primary_keys=["dt", "k"], options={"bucket": "1"}
    )
    table.write_arrow(_batch([1, 2, 3], "parquet"))
    for file_format, keys in (("orc", [2, 4]), ("avro", [3, 5])):
        table.schema_manager.commit_changes(SetOption("file.format", file_format))
        table = catalog.get_table("db.t")
        table.write_arrow(_batch(keys, file_format))
    table.schema_manager.commit_changes(RenameColumn(("v",), "w"))
    table = catalog.get_table("db.t")
    names = sorted(f.file_name.rsplit(".", 1)[1] for s in table.new_scan().plan() for f in s.files)
    assert names == ["avro", "orc", "parquet"]
    got = sorted(table.to_arrow().to_pylist(), key=lambda r: r["k"])
    assert [(r["k"], r["w"]) for r in got] == [
        (1, "parquet1"), (2, "orc2"), (3, "avro3"), (4, "orc4"), (5, "avro5")
    ]  # fmt: skip


@pytest.mark.parametrize("file_format", ["orc", "avro"])
def test_a_torn_orc_or_avro_file_is_named(warehouse: str, file_format: str) -> None:
    table = _table(warehouse, options={"file.format": file_format})
    table.write_arrow(_batch([1, 2]))
    (path,) = [
        os.path.join(d, n) for d, _, names in os.walk(table.path) for n in names
        if n.startswith("data-")
    ]  # fmt: skip
    assert path.endswith(f".{file_format}")
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) // 2)
    with pytest.raises(DataFileUnreadable) as info:
        table.to_arrow()
    label = {"orc": "ORC", "avro": "Avro"}[file_format]
    assert str(info.value).startswith(f"Cannot read data file {path} of table db.t as {label}: ")
    assert "\n" not in str(info.value)


def test_a_data_file_in_a_format_we_cannot_read_is_named(warehouse: str) -> None:
    table = _table(warehouse)
    table.write_arrow(_batch([1]))
    (split,) = table.new_scan().plan()
    (meta,) = split.files
    lance = dataclasses.replace(meta, file_name=meta.file_name.replace(".parquet", ".lance"))
    with pytest.raises(UnsupportedFeature) as info:
        table.new_read().to_arrow([dataclasses.replace(split, files=(lance,))])
    message = str(info.value)
    assert message.startswith("Cannot read LANCE data file ") and "of table db.t" in message


def test_a_torn_data_file_is_named(warehouse: str) -> None:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    table = catalog.create_table("db.t", pa.schema([("k", pa.int64())]))
    table.write_arrow(pa.table({"k": [1, 2]}))
    (path,) = [
        os.path.join(d, n) for d, _, names in os.walk(table.path) for n in names
        if n.startswith("data-")
    ]  # fmt: skip
    with open(path, "r+b") as f:
        f.truncate(10)
    with pytest.raises(DataFileUnreadable) as info:
        table.to_arrow()
    assert str(info.value).startswith(f"Cannot read data file {path} of table db.t as Parquet: ")
    assert "\n" not in str(info.value)


def _evolving(warehouse: str) -> FileStoreTable:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    schema = pa.schema([("k", pa.int64()), ("i", pa.int32()), ("s", pa.string())])
    table = catalog.create_table("db.t", schema, primary_keys=["k"], options={"bucket": "1"})
    table.write_arrow(pa.table({"k": [1, 2], "i": [10, 20], "s": ["7", "x"]}, schema=schema))
    return table


def test_changed_column_types_are_cast_when_read(warehouse: str) -> None:
    from paimon_core.format.schema import AddColumn, UpdateColumnPosition, UpdateColumnType
    from paimon_core.format.types import BIGINT, DOUBLE, STRING

    table = _evolving(warehouse)
    table.schema_manager.commit_changes(
        UpdateColumnType("i", BIGINT()),
        AddColumn("d", DOUBLE(), first=True),
        UpdateColumnPosition("s", after="d"),
    )
    evolved = FileStoreTable.load(table.path)
    evolved.write_arrow(
        pa.table({"d": [0.5], "s": ["y"], "k": [3], "i": [2**40]}),
    )
    data = evolved.to_arrow()
    assert data.schema.names == ["d", "s", "k", "i"]
    assert data.schema.field("i").type == pa.int64()
    assert data.sort_by("k").to_pylist() == [
        {"d": None, "s": "7", "k": 1, "i": 10},
        {"d": None, "s": "x", "k": 2, "i": 20},
        {"d": 0.5, "s": "y", "k": 3, "i": 2**40},
    ]
    old = evolved.copy({"scan.snapshot-id": "1"}).to_arrow()
    assert old.schema.field("i").type == pa.int32() and old.schema.names == ["k", "i", "s"]
    table.schema_manager.commit_changes(UpdateColumnType("i", STRING()))
    assert FileStoreTable.load(table.path).to_arrow().sort_by("k").column("i").to_pylist() == [
        "10", "20", "1099511627776"
    ]  # fmt: skip


def test_a_value_the_new_type_cannot_hold_names_column_and_file(warehouse: str) -> None:
    from paimon_core.format.schema import UpdateColumnType
    from paimon_core.format.types import INT

    table = _evolving(warehouse)
    table.schema_manager.commit_changes(UpdateColumnType("s", INT()))
    with pytest.raises(DataFileUnreadable, match=r"Cannot read column 's' of data file .*"
                       r"written as STRING, as INT: "):  # fmt: skip
        FileStoreTable.load(table.path).to_arrow()


@pytest.mark.oracle
def test_java_reads_a_table_whose_types_and_positions_changed(
    warehouse: str, oracle: Callable[..., Any]
) -> None:
    from paimon_core.format.schema import (
        AddColumn,
        RenameColumn,
        UpdateColumnPosition,
        UpdateColumnType,
    )
    from paimon_core.format.types import BIGINT, DOUBLE

    table = _evolving(warehouse)
    table.schema_manager.commit_changes(
        UpdateColumnType("i", BIGINT()),
        AddColumn("d", DOUBLE(), first=True),
        UpdateColumnPosition("s", after="d"),
        RenameColumn("s", "s2"),
    )
    FileStoreTable.load(table.path).write_arrow(
        pa.table({"d": [0.5], "s2": ["y"], "k": [3], "i": [2**40]})
    )
    assert oracle("read", warehouse, "db.t") == [
        {"d": None, "s2": "7", "k": 1, "i": 10},
        {"d": None, "s2": "x", "k": 2, "i": 20},
        {"d": 0.5, "s2": "y", "k": 3, "i": 2**40},
    ]


def test_nested_fields_follow_field_ids(warehouse: str) -> None:
    """A nested field renamed, retyped, dropped or added reads by id, inside arrays too."""
    from paimon_core.format.schema import AddColumn, UpdateColumnType
    from paimon_core.format.types import BIGINT, STRING

    point = pa.struct([("x", pa.int32()), ("y", pa.string())])
    schema = pa.schema([("k", pa.int64()), ("s", point), ("a", pa.list_(point))])
    table = _table(warehouse, schema=schema)
    rows = {"k": [1, 2], "s": [{"x": 1, "y": "one"}, None], "a": [[{"x": 5, "y": "f"}], None]}
    table.write_arrow(pa.table(rows, schema=schema))
    table.schema_manager.commit_changes(
        RenameColumn(("s", "y"), "why"),
        UpdateColumnType(("s", "x"), BIGINT()),
        AddColumn(("s", "z"), STRING()),
        DropColumn(("a", "element", "x")),
        RenameColumn(("a", "element", "y"), "name"),
    )
    data = FileStoreTable.load(table.path).to_arrow().sort_by("k").to_pylist()
    assert data == [
        {"k": 1, "s": {"x": 1, "why": "one", "z": None}, "a": [{"name": "f"}]},
        {"k": 2, "s": None, "a": None},
    ]


def test_projection_of_a_sequence_group_column_reads_its_sequence_field(warehouse: str) -> None:
    """Reading only ``v`` of partial-update group (dt -> v) must still order by ``dt``."""
    schema = pa.schema([pa.field("k", pa.int64(), False), ("v", pa.string()), ("dt", pa.string())])
    options = {"bucket": "1", "merge-engine": "partial-update", "fields.dt.sequence-group": "v"}
    table = _table(warehouse, schema=schema, primary_keys=["k"], options=options)
    table.write_arrow(pa.table({"k": [1], "v": ["newer"], "dt": ["2"]}, schema=schema))
    table.write_arrow(pa.table({"k": [1], "v": ["older"], "dt": ["1"]}, schema=schema))
    read = table.new_read()
    splits = table.new_scan().plan()
    assert read.to_arrow(splits, ["v"]).to_pylist() == [{"v": "newer"}]
    assert read.to_arrow(splits).to_pylist() == [{"k": 1, "v": "newer", "dt": "2"}]


def test_key_values_of_a_split_unmerged_then_merged(warehouse: str) -> None:
    """What a compaction reads: every record with its sequence number and kind."""
    options = {
        "bucket": "1",
        "merge-engine": "aggregation",
        "fields.v.aggregate-function": "last_value",
    }
    schema = pa.schema([pa.field("k", pa.int64(), False), ("v", pa.string()), ("dt", pa.string())])
    table = _table(warehouse, schema=schema, primary_keys=["k"], options=options)
    table.write_arrow(pa.table({"k": [1, 2], "v": ["a", "b"], "dt": ["x", "y"]}, schema=schema))
    table.write_arrow(
        pa.table({"k": [1], "v": ["c"], "dt": ["z"]}, schema=schema),
        row_kinds=pa.array([2], pa.int8()),
    )
    read = table.new_read()
    (split,) = table.new_scan().plan()
    records = read.read_key_values(split)
    assert records.column_names == ["k", "v", "dt", "_SEQUENCE_NUMBER", "_VALUE_KIND"]
    assert records.num_rows == 3 and records.column("_VALUE_KIND").to_pylist() == [0, 0, 2]
    assert read.merge is not None
    merged = read.merge.merge(records)
    assert merged.select(["k", "v", "dt"]).to_pylist() == [
        {"k": 1, "v": "c", "dt": "z"},
        {"k": 2, "v": "b", "dt": "y"},
    ]


def test_thin_mode_files_without_key_columns_read_the_same(warehouse: str) -> None:
    """``data-file.thin-mode`` (Java 1.x) leaves the ``_KEY_*`` columns out of primary-key
    files: keys are read from the value columns, as Java's ``trimKeyFields`` reads them, so
    such files merge as ours do."""
    import pyarrow.parquet as pq

    table = _table(
        warehouse, partition_keys=["dt"], primary_keys=["dt", "k"], options={"bucket": "1"}
    )
    table.write_arrow(_batch([1, 2, 3]))
    table.write_arrow(_batch([2, 4], "u"), row_kinds=pa.array([0, 0], pa.int8()))
    expected = _sorted(table.to_arrow())
    thinned = 0
    for directory, _, names in os.walk(table.path):
        for name in names:
            if name.endswith(".parquet"):
                path = os.path.join(directory, name)
                data = pq.ParquetFile(path).read()
                keys = [c for c in data.column_names if c.startswith("_KEY_")]
                pq.write_table(data.drop_columns(keys), path)
                thinned += len(keys) > 0
    assert thinned == 2
    assert _sorted(table.to_arrow()) == expected
    assert [r["v"] for r in expected] == ["v1", "u2", "v3", "u4"]

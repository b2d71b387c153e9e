"""Writing data files: layout, keys, sequence numbers, stats, buckets, file indexes, interop
with pypaimon."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import InvalidArgument, UnsupportedFeature
from paimon_core.format.binary_row import deserialize_row, serialize_row
from paimon_core.format.data_file_index import DataFileIndexWriter
from paimon_core.format.file_index import file_index_options
from paimon_core.format.manifest import EMPTY_ROW, EMPTY_STATS
from paimon_core.format.stats import decode_stats
from paimon_core.format.types import BIGINT, STRING
from paimon_core.io.fileio import LocalFileIO
from paimon_core.operations.compact import compact_table
from paimon_core.operations.read import data_file_path
from paimon_core.table import FileStoreTable
from tests.interop.helpers import pypaimon_commit
from tests.unit.paimon_core.format.index_twins import container_of

SCHEMA = pa.schema(
    [pa.field("k", pa.int64(), False), ("v", pa.string()), pa.field("dt", pa.string(), False)]
)


def _table(warehouse: str, name: str = "t", **kw: Any) -> FileStoreTable:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    return catalog.create_table(f"db.{name}", SCHEMA, **kw)


def _pk(warehouse: str, name: str = "pk", bucket: str = "2", **options: str) -> FileStoreTable:
    return _table(
        warehouse,
        name,
        partition_keys=["dt"],
        primary_keys=["dt", "k"],
        options={"bucket": bucket, **options},
    )


def _batch(ks: list[int], dt: str = "a", tag: str = "v") -> pa.Table:
    return pa.table({"k": ks, "v": [f"{tag}{k}" for k in ks], "dt": [dt] * len(ks)}, schema=SCHEMA)


def _rows(table: FileStoreTable) -> list[dict]:
    return sorted(table.to_arrow().to_pylist(), key=lambda r: (r["dt"], r["k"]))


def _parquet(path: Any) -> pa.Table:
    return pq.ParquetFile(path).read()  # not read_table: it would parse "dt=a" as a partition


def _data_files(root: str) -> dict[str, str]:
    """data file name -> its directory relative to the table."""
    found = {}
    for d, _, files in os.walk(root):
        for f in files:
            if f.startswith("data-"):
                found[f] = os.path.relpath(d, root)
    return found


def test_append_files_and_metadata(warehouse: str) -> None:
    table = _table(warehouse, partition_keys=["dt"])
    write = table.new_write()
    write.write_arrow(_batch([3, 1, 2], "a"))
    write.write_arrow(_batch([9], "b").to_batches()[0])
    messages = write.prepare_commit()
    assert [
        (deserialize_row(m.partition, [STRING()]), m.bucket, m.total_buckets) for m in messages
    ] == [
        (("a",), 0, -1),
        (("b",), 0, -1),
    ]
    meta = messages[0].new_files[0]
    assert meta.file_name.startswith("data-") and meta.file_name.endswith("-0.parquet")
    assert (meta.row_count, meta.min_sequence_number, meta.max_sequence_number) == (3, 0, 2)
    assert meta.min_key == meta.max_key == EMPTY_ROW and meta.key_stats == EMPTY_STATS
    assert (meta.level, meta.file_source, meta.delete_row_count, meta.value_stats_cols) == (
        0,
        0,
        0,
        None,
    )
    path = Path(table.path) / "dt=a" / "bucket-0" / meta.file_name
    assert meta.file_size == path.stat().st_size
    written = _parquet(path)
    assert written.column_names == ["k", "v", "dt"] and written.column("k").to_pylist() == [3, 1, 2]
    ids = [f.metadata[b"PARQUET:field_id"] for f in pq.read_schema(path)]
    assert ids == [b"0", b"1", b"2"]
    stats = decode_stats(meta.value_stats, [BIGINT(), STRING(), STRING()])
    assert [(s.min, s.max, s.null_count) for s in stats] == [
        (1, 3, 0),
        ("v1", "v3", 0),
        ("a", "a", 0),
    ]
    table.new_commit().commit(messages)
    assert [r["k"] for r in _rows(table)] == [1, 2, 3, 9]


def test_pk_file_layout_matches_pypaimon(warehouse: str) -> None:
    table = _pk(warehouse)
    table.write_arrow(_batch([5, 1, 3], "d1"))
    (meta_entry,) = [
        e for e in table.new_scan().read_entries(table.latest_snapshot()) if e.bucket == 0
    ]
    path = Path(table.path) / "dt=d1" / "bucket-0" / meta_entry.file.file_name
    schema = pq.read_schema(path)
    # 06-pk-parquet-schema.txt (pypaimon 2.1): _KEY_k, _SEQUENCE_NUMBER, _VALUE_KIND, k, v, dt
    assert [(f.name, str(f.type)) for f in schema] == [
        ("_KEY_k", "int64"),
        ("_SEQUENCE_NUMBER", "int64"),
        ("_VALUE_KIND", "int8"),
        ("k", "int64"),
        ("v", "string"),
        ("dt", "string"),
    ]
    assert [f.nullable for f in schema][:4] == [False, False, False, False]
    ids = [int(f.metadata[b"PARQUET:field_id"]) for f in schema]
    assert ids == [1073741823, 2147483646, 2147483645, 0, 1, 2]
    keys = _parquet(path).column("_KEY_k").to_pylist()
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    meta = meta_entry.file
    assert meta.min_key == serialize_row([keys[0]], [BIGINT()])
    assert meta.max_key == serialize_row([keys[-1]], [BIGINT()])
    assert meta.key_stats.min_values == meta.min_key and meta.key_stats.null_counts == (0,)
    assert meta_entry.total_buckets == 2


def test_pk_batch_keeps_last_row_per_key_and_counts_retractions(warehouse: str) -> None:
    table = _pk(warehouse, bucket="1")
    write = table.new_write()
    data = pa.table(
        {"k": [1, 2, 1, 3, 2], "v": ["a", "b", "a2", "c", "b2"], "dt": ["x"] * 5}, schema=SCHEMA
    )
    write.write_arrow(data, row_kinds=pa.array([0, 0, 2, 0, 3], pa.int8()))
    (message,) = write.prepare_commit()
    (meta,) = message.new_files
    assert (meta.row_count, meta.delete_row_count) == (3, 1)
    assert (meta.min_sequence_number, meta.max_sequence_number) == (2, 4)
    path = Path(table.path) / "dt=x" / "bucket-0" / meta.file_name
    written = _parquet(path).to_pydict()
    assert written["k"] == [1, 2, 3]
    assert written["_SEQUENCE_NUMBER"] == [2, 4, 3]
    assert written["_VALUE_KIND"] == [2, 3, 0]
    table.new_commit().commit([message])
    assert _rows(table) == [{"k": 1, "v": "a2", "dt": "x"}, {"k": 3, "v": "c", "dt": "x"}]


def test_repeated_keys_of_one_write_merge_with_the_tables_engine(warehouse: str) -> None:
    """As Java's write buffer: the file holds one merged row per key, +I, with the sequence
    number of the key's last record; ignore-delete drops retractions before numbering."""
    options = {"merge-engine": "partial-update", "ignore-delete": "true"}
    table = _pk(warehouse, bucket="1", **options)
    write = table.new_write()
    data = pa.table(
        {"k": [1, 1, 2, 1], "v": ["a", None, "gone", "c"], "dt": ["x"] * 4}, schema=SCHEMA
    )
    write.write_arrow(data, row_kinds=pa.array([0, 0, 3, 3], pa.int8()))
    (message,) = write.prepare_commit()
    (meta,) = message.new_files
    written = _parquet(Path(table.path) / "dt=x" / "bucket-0" / meta.file_name).to_pydict()
    assert (written["k"], written["v"]) == ([1], ["a"])
    assert (written["_SEQUENCE_NUMBER"], written["_VALUE_KIND"]) == ([1], [0])
    aggregated = _pk(warehouse, "agg", bucket="1", **{"merge-engine": "aggregation",
                                                       "fields.v.aggregate-function": "listagg"})  # fmt: skip
    aggregated.write_arrow(pa.table({"k": [1, 1], "v": ["a", "b"], "dt": ["x"] * 2}, schema=SCHEMA))
    aggregated.write_arrow(pa.table({"k": [1], "v": ["c"], "dt": ["x"]}, schema=SCHEMA))
    assert _rows(aggregated) == [{"k": 1, "v": "a,b,c", "dt": "x"}]


def test_sequence_numbers_continue_per_bucket(warehouse: str) -> None:
    table = _pk(warehouse, bucket="1")
    table.write_arrow(_batch([1, 2, 3], "x"))
    table.write_arrow(_batch([2], "x", "w"))
    table.write_arrow(_batch([7], "y"))
    seqs = sorted(
        (
            deserialize_row(e.partition, [STRING()])[0],
            e.file.min_sequence_number,
            e.file.max_sequence_number,
        )
        for e in table.new_scan().read_entries(table.latest_snapshot())
    )
    assert seqs == [("x", 0, 2), ("x", 3, 3), ("y", 0, 0)]
    assert _rows(table)[1] == {"k": 2, "v": "w2", "dt": "x"}


def test_deletes_through_row_kinds(warehouse: str) -> None:
    table = _pk(warehouse)
    table.write_arrow(_batch([1, 2, 3, 4], "x"))
    table.write_arrow(_batch([2, 4], "x"), row_kinds=pa.array([3, 1], pa.int8()))
    assert [r["k"] for r in _rows(table)] == [1, 3]


def _pypaimon_catalog(warehouse: str) -> Any:
    from pypaimon import CatalogFactory

    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db", True)
    return catalog


def _pypaimon_rows(table: Any) -> list[dict]:
    builder = table.new_read_builder()
    rows = builder.new_read().to_arrow(builder.new_scan().plan().splits()).to_pylist()
    return sorted(rows, key=lambda r: (r["dt"], r["k"]))


def test_fixed_buckets_equal_pypaimon_buckets(tmp_path: Path) -> None:
    from pypaimon import Schema

    keys = [*range(40), 2**40, -7]
    data = pa.table({"k": keys, "v": ["v"] * len(keys), "dt": ["d"] * len(keys)}, schema=SCHEMA)
    theirs_wh, ours_wh = str(tmp_path / "theirs"), str(tmp_path / "ours")
    os.makedirs(theirs_wh)
    os.makedirs(ours_wh)
    catalog = _pypaimon_catalog(theirs_wh)
    catalog.create_table(
        "db.t",
        Schema.from_pyarrow_schema(
            SCHEMA, partition_keys=["dt"], primary_keys=["dt", "k"], options={"bucket": "4"}
        ),
        False,
    )
    pypaimon_commit(catalog.get_table("db.t"), data)
    ours = _pk(ours_wh, "t", bucket="4")
    ours.write_arrow(data)

    def bucket_of_keys(root: str) -> dict[int, str]:
        placed = {}
        for name, directory in _data_files(root).items():
            for k in _parquet(os.path.join(root, directory, name)).column("k").to_pylist():
                placed[k] = directory
        return placed

    theirs = bucket_of_keys(os.path.join(theirs_wh, "db.db", "t"))
    assert bucket_of_keys(ours.path) == theirs
    assert len(set(theirs.values())) == 4


def test_pypaimon_reads_what_we_write(warehouse: str) -> None:
    pk = _pk(warehouse, "pk")
    pk.write_arrow(_batch([1, 2, 3], "x"))
    pk.write_arrow(_batch([2, 5], "x", "w"))
    app = _table(warehouse, "app", partition_keys=["dt"])
    app.write_arrow(_batch([1, 2], "x"))
    app.write_arrow(_batch([1], "y"))
    catalog = _pypaimon_catalog(warehouse)
    assert _pypaimon_rows(catalog.get_table("db.pk")) == _rows(pk)
    assert [r["v"] for r in _rows(pk)] == ["v1", "w2", "v3", "w5"]
    assert _pypaimon_rows(catalog.get_table("db.app")) == _rows(app)


def test_we_continue_sequences_of_a_pypaimon_table(warehouse: str) -> None:
    from pypaimon import Schema

    catalog = _pypaimon_catalog(warehouse)
    catalog.create_table(
        "db.t",
        Schema.from_pyarrow_schema(
            SCHEMA, partition_keys=["dt"], primary_keys=["dt", "k"], options={"bucket": "1"}
        ),
        False,
    )
    pypaimon_commit(catalog.get_table("db.t"), _batch([1, 2], "x"))
    ours = FileStoreTable.load(os.path.join(warehouse, "db.db", "t"))
    ours.write_arrow(_batch([1], "x", "new"))
    entries = ours.new_scan().read_entries(ours.latest_snapshot())
    assert sorted(e.file.min_sequence_number for e in entries) == [0, 2]
    assert _pypaimon_rows(catalog.get_table("db.t")) == _rows(ours)
    assert _rows(ours)[0]["v"] == "new1"


def test_value_stats_modes(warehouse: str) -> None:
    def meta_of(options: dict[str, str], name: str) -> Any:
        table = _table(warehouse, name, options=options)
        write = table.new_write()
        write.write_arrow(_batch([2, 1], "a", "x" * 20))
        return write.prepare_commit()[0].new_files[0]

    none = meta_of({"metadata.stats-mode": "none"}, "none")
    assert (none.value_stats, none.value_stats_cols) == (EMPTY_STATS, ())
    full = meta_of({"metadata.stats-mode": "full"}, "full")
    assert decode_stats(full.value_stats, [BIGINT(), STRING(), STRING()])[1].max == "x" * 20 + "2"
    truncated = meta_of({}, "trunc")
    assert (
        decode_stats(truncated.value_stats, [BIGINT(), STRING(), STRING()])[1].max == "x" * 15 + "y"
    )
    mixed = meta_of({"fields.v.stats-mode": "none", "fields.dt.stats-mode": "counts"}, "mixed")
    assert mixed.value_stats_cols == ("k", "dt")
    assert [
        (s.min, s.null_count) for s in decode_stats(mixed.value_stats, [BIGINT(), STRING()])
    ] == [
        (1, 0),
        (None, 0),
    ]


def test_rolls_files_at_target_size(warehouse: str) -> None:
    table = _table(warehouse, options={"target-file-size": "1 kb"})
    table.write_arrow(_batch(list(range(400)), "a"))
    files = table.new_scan().plan()[0].files
    assert len(files) > 1
    assert sum(f.row_count for f in files) == 400
    assert [r["k"] for r in _rows(table)] == list(range(400))


def test_rejects_bad_input_and_unsupported_layouts(warehouse: str) -> None:
    table = _table(warehouse, "plain")
    write = table.new_write()
    with pytest.raises(InvalidArgument, match="missing"):
        write.write_arrow(pa.table({"k": [1]}))
    with pytest.raises(InvalidArgument, match="non-null column 'k'"):
        write.write_arrow(pa.table({"k": [None], "v": ["a"], "dt": ["a"]}))
    with pytest.raises(InvalidArgument, match="only take inserts"):
        write.write_arrow(_batch([1]), row_kinds=pa.array([3], pa.int8()))
    with pytest.raises(InvalidArgument, match="bucket-key"):
        table.copy({"bucket": "2"}).new_write()  # schema validation rejects this too
    with pytest.raises(UnsupportedFeature, match=r"'file\.format' = 'csv'"):
        table.copy({"file.format": "csv"}).new_write()
    cross = _table(warehouse, "cross", partition_keys=["dt"], primary_keys=["k"])
    with pytest.raises(UnsupportedFeature, match="Cross-partition"):
        cross.new_write()


def test_int32_input_is_cast_to_the_column_type(warehouse: str) -> None:
    table = _table(warehouse)
    table.write_arrow(pa.table({"dt": ["a"], "v": ["x"], "k": pa.array([7], pa.int32())}))
    assert _rows(table) == [{"k": 7, "v": "x", "dt": "a"}]


class _FailOnSecondFile(LocalFileIO):
    def __init__(self) -> None:
        super().__init__()
        self.opened = 0

    def open_output(self, path: str) -> pa.NativeFile:
        self.opened += 1
        if self.opened == 2:
            raise OSError("disk full")
        return super().open_output(path)


def test_failed_prepare_commit_removes_its_files(warehouse: str) -> None:
    table = _table(warehouse, partition_keys=["dt"])
    failing = FileStoreTable(_FailOnSecondFile(), table.path, table.schema)
    write = failing.new_write()
    write.write_arrow(pa.concat_tables([_batch([1], "a"), _batch([2], "b")]))
    with pytest.raises(OSError, match="disk full"):
        write.prepare_commit()
    assert _data_files(table.path) == {}


def test_close_without_commit_deletes_flushed_files(warehouse: str) -> None:
    table = _table(warehouse, options={"write-buffer-size": "1 b"})
    with table.new_write() as write:
        write.write_arrow(_batch([1, 2]))
        assert len(_data_files(table.path)) == 1
    assert _data_files(table.path) == {}


def test_parquet_physical_types_follow_java(warehouse: str) -> None:
    from decimal import Decimal

    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    schema = pa.schema(
        [("d9", pa.decimal128(9, 2)), ("d18", pa.decimal128(18, 3)), ("d38", pa.decimal128(38, 4))]
    )
    table = catalog.create_table("db.dec", schema)
    data = pa.table(
        {"d9": [Decimal("1.25")], "d18": [Decimal("-7.125")], "d38": [Decimal("1.5")]},
        schema=schema,
    )
    table.write_arrow(data)
    (name, directory), *_ = _data_files(table.path).items()
    physical = pq.ParquetFile(os.path.join(table.path, directory, name)).schema
    assert [physical.column(i).physical_type for i in range(3)] == [
        "INT32",
        "INT64",
        "FIXED_LEN_BYTE_ARRAY",
    ]
    assert table.to_arrow().equals(data)
    nanos = catalog.create_table("db.nanos", pa.schema([("t", pa.timestamp("ns"))]))
    with pytest.raises(UnsupportedFeature, match="precision above 6"):
        nanos.new_write()


@pytest.mark.parametrize("arrow_type", [pa.float64(), pa.float32()], ids=["double", "float"])
def test_float_keys_sort_and_deduplicate_as_java_compare(
    warehouse: str, arrow_type: pa.DataType
) -> None:
    """Java: -0.0 < 0.0 are two keys; all NaNs are one key, larger than +Infinity."""
    schema = pa.schema([pa.field("k", arrow_type, False), ("v", pa.string())])
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    table = catalog.create_table("db.f", schema, primary_keys=["k"], options={"bucket": "1"})
    nan, inf = float("nan"), float("inf")
    ks = [nan, 1.5, 0.0, -0.0, inf, -inf, nan]
    write = table.new_write()
    write.write_arrow(pa.table({"k": ks, "v": [str(i) for i in range(7)]}, schema=schema))
    (message,) = write.prepare_commit()
    (meta,) = message.new_files
    written = _parquet(Path(table.path) / "bucket-0" / meta.file_name).to_pydict()
    assert [str(k) for k in written["_KEY_k"]] == ["-inf", "-0.0", "0.0", "1.5", "inf", "nan"]
    assert written["v"] == ["5", "3", "2", "1", "4", "6"]  # the later NaN row wins
    key_type = table.schema.field("k").type
    assert str(deserialize_row(meta.min_key, [key_type])[0]) == "-inf"
    assert str(deserialize_row(meta.max_key, [key_type])[0]) == "nan"


# ---------------------------------------------------------------------------- file indexes

INDEXED = {
    "file-index.bloom-filter.columns": "v",
    "file-index.bloom-filter.v.items": "30",
    "file-index.bitmap.columns": "k",
}


def _expected_container(table: FileStoreTable, path: str) -> bytes:
    """What Java's ``DataFileIndexWriter`` makes of the file's rows (its value columns)."""
    writer = DataFileIndexWriter(table.schema.fields, file_index_options(table.options))
    writer.write(_parquet(path))
    return writer.container()


@pytest.mark.parametrize("pk", [False, True], ids=["append", "primary-key"])
def test_data_files_of_every_level_carry_their_index_changelog_files_none(
    warehouse: str, pk: bool
) -> None:
    options = {**INDEXED, "changelog-producer": "input"} if pk else dict(INDEXED)
    table = _pk(warehouse, **options) if pk else _table(warehouse, options=options)
    for i in range(3):
        table.write_arrow(_batch([i, i + 10, i + 20], "a" if pk else "x"))
    compact_table(table, full=True)
    entries = table.new_scan().read_entries(table.latest_snapshot())
    assert any(e.file.level > 0 for e in entries) == pk
    for e in entries:
        path = data_file_path(
            table, table.new_scan().partition_values(e.partition), e.bucket, e.file.file_name
        )
        assert container_of(table, e.partition, e.bucket, e.file) == _expected_container(
            table, path
        )
    if pk:
        names = os.listdir(os.path.join(table.path, "dt=a", "bucket-0"))
        assert any(n.startswith("changelog-") for n in names)
        assert not any(n.startswith("changelog-") and n.endswith(".index") for n in names)


def test_large_indexes_go_to_index_files_removed_with_a_failed_write(warehouse: str) -> None:
    table = _table(warehouse, options={"file-index.bloom-filter.columns": "v"})
    table.write_arrow(_batch([1, 2]))
    (entry,) = table.new_scan().read_entries(table.latest_snapshot())
    assert entry.file.embedded_index is None
    assert entry.file.extra_files == (entry.file.file_name + ".index",)
    index = os.path.join(table.path, "bucket-0", entry.file.extra_files[0])
    assert os.path.getsize(index) > 599_000  # 1,000,000 items at fpp 0.1
    write = table.new_write()
    write.write_arrow(_batch([3]))
    write._flush()
    assert len([n for n in os.listdir(os.path.dirname(index)) if n.endswith(".index")]) == 2
    write.close()
    assert [n for n in os.listdir(os.path.dirname(index)) if n.endswith(".index")] == [
        os.path.basename(index)
    ]


# ----------------------------------------------------------------- rowkind.field (issue 20)

KIND_SCHEMA = pa.schema([pa.field("k", pa.int64(), False), ("v", pa.string()), ("op", pa.string())])


def _kinds(ks: list[int], ops: list[str]) -> pa.Table:
    return pa.table({"k": ks, "v": [f"v{k}" for k in ks], "op": ops}, schema=KIND_SCHEMA)


def _kind_table(warehouse: str, name: str, **options: str) -> FileStoreTable:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    pk = {"primary_keys": ["k"]} if options.pop("pk", "true") == "true" else {}
    return catalog.create_table(
        f"db.{name}", KIND_SCHEMA, options={"rowkind.field": "op", **options}, **pk
    )


def test_rowkind_field_gives_each_rows_kind(warehouse: str) -> None:
    """A ``-D`` row deletes its key, ``-U`` retracts it, ``+U`` upserts; the column is kept
    as written (Java's ``RowKindGenerator``); given row kinds yield to the column."""
    table = _kind_table(warehouse, "t", bucket="1")
    table.write_arrow(_kinds([1, 2, 3, 4], ["+I"] * 4))
    table.write_arrow(_kinds([1, 2, 3], ["-D", "-U", "+U"]), row_kinds=pa.array([0] * 3, pa.int8()))
    assert sorted(table.to_arrow().to_pylist(), key=lambda r: r["k"]) == [
        {"k": 3, "v": "v3", "op": "+U"},
        {"k": 4, "v": "v4", "op": "+I"},
    ]
    files = table.new_scan().plan()[0].files
    kinds = pa.concat_tables(
        [_parquet(data_file_path(table, [], 0, f.file_name)) for f in files]
    ).to_pylist()
    assert sorted(
        (r["k"], r["_VALUE_KIND"], r["op"]) for r in kinds if r["_SEQUENCE_NUMBER"] >= 4
    ) == [
        (1, 3, "-D"),
        (2, 1, "-U"),
        (3, 2, "+U"),
    ]


def test_rowkind_field_bad_values_change_nothing(warehouse: str) -> None:
    table = _kind_table(warehouse, "t", bucket="1")
    table.write_arrow(_kinds([1], ["+I"]))
    for ops, message in ((["+X"], r"Unsupported row kind '\+X' in column 'op'"), ([None], "null")):
        with pytest.raises(InvalidArgument, match=message):
            table.write_arrow(_kinds([1], ops))
    assert table.latest_snapshot().snapshot_id == 1
    catalog = FileSystemCatalog(warehouse)
    with pytest.raises(Exception, match="Rowkind field: 'nope' can not be found"):
        catalog.create_table("db.u", KIND_SCHEMA, options={"rowkind.field": "nope"})
    assert not catalog.table_exists("db.u")
    with pytest.raises(InvalidArgument, match="must be a string column"):
        table.copy({"rowkind.field": "k"}).new_write()


def test_rowkind_field_filters_and_append_tables(warehouse: str) -> None:
    """'ignore-delete' drops -U/-D, 'ignore-update-before' -U (Java's ``RowKindFilter``);
    append tables take +I and +U, and refuse retractions unless they are dropped."""
    ignore = _kind_table(warehouse, "ignore", bucket="1", **{"ignore-delete": "true"})
    ignore.write_arrow(_kinds([1, 2], ["+I", "+I"]))
    ignore.write_arrow(_kinds([1, 2], ["-D", "-U"]))
    assert ignore.latest_snapshot().snapshot_id == 1  # nothing left to write
    assert ignore.to_arrow().column("k").to_pylist() == [1, 2]
    before = _kind_table(warehouse, "before", bucket="1", **{"ignore-update-before": "true"})
    before.write_arrow(_kinds([1, 2], ["+I", "+I"]))
    before.write_arrow(_kinds([1, 2], ["-U", "-D"]))
    assert before.to_arrow().column("k").to_pylist() == [1]
    append = _kind_table(warehouse, "append", pk="false")
    append.write_arrow(_kinds([1, 2], ["+I", "+U"]))
    with pytest.raises(InvalidArgument, match="Append tables only take inserts"):
        append.write_arrow(_kinds([3], ["-D"]))
    dropped = append.copy({"ignore-delete": "true"})
    dropped.write_arrow(_kinds([3, 4], ["-D", "+I"]))
    assert sorted(append.to_arrow().column("k").to_pylist()) == [1, 2, 4]


# ----------------------------------------------------------- data-file.thin-mode (issue 20)


def test_thin_mode_files_have_no_key_columns_and_key_stats_of_the_values(warehouse: str) -> None:
    """Java's ``KeyValueThinDataFileWriterImpl``: no ``_KEY_<k>``; the key stats are the
    key columns' value stats (their stats mode); reads, compaction and the deep check go on."""
    from paimon_core.lifecycle.check import check_table

    long_key = "k" * 40
    schema = pa.schema([pa.field("s", pa.string(), False), ("v", pa.string())])
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    tables = {
        thin: catalog.create_table(
            f"db.{thin}",
            schema,
            primary_keys=["s"],
            options={"bucket": "1", "data-file.thin-mode": thin, "changelog-producer": "input"},
        )
        for thin in ("true", "false")
    }
    for table in tables.values():
        table.write_arrow(pa.table({"s": [long_key, "a"], "v": ["x", "y"]}, schema=schema))
        table.write_arrow(pa.table({"s": ["a"], "v": ["z"]}, schema=schema))
    thin, plain = tables["true"], tables["false"]
    for table, has_keys in ((thin, False), (plain, True)):
        for f in table.new_scan().plan()[0].files:
            columns = _parquet(data_file_path(table, [], 0, f.file_name)).column_names
            assert ("_KEY_s" in columns) is has_keys
            assert columns[-2:] == ["s", "v"]
        got = sorted((r["s"], r["v"]) for r in table.to_arrow().to_pylist())
        assert got == [("a", "z"), (long_key, "x")]

    def stats(table: FileStoreTable) -> tuple[Any, Any]:
        first = next(f for f in table.new_scan().plan()[0].files if f.row_count == 2)
        key = decode_stats(first.key_stats, [STRING()])[0]
        value = decode_stats(first.value_stats, [STRING(), STRING()])[0]
        return (key.min, key.max), (value.min, value.max)

    thin_key, thin_value = stats(thin)
    plain_key, plain_value = stats(plain)
    assert thin_key == thin_value == plain_value  # the value column's truncate(16)
    assert thin_key[1] != long_key and plain_key == ("a", long_key)  # keys: full
    changelog = [
        n for n in os.listdir(os.path.join(thin.path, "bucket-0")) if n.startswith("changelog-")
    ]
    assert changelog and all(
        "_KEY_s" not in _parquet(os.path.join(thin.path, "bucket-0", n)).column_names
        for n in changelog
    )
    compact_table(thin)
    assert [
        tuple(r.values()) for r in sorted(thin.to_arrow().to_pylist(), key=lambda r: r["s"])
    ] == [
        ("a", "z"),
        (long_key, "x"),
    ]
    assert check_table(thin, deep=True) == []

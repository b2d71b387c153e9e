"""A data file's index container (Java's ``DataFileIndexWriter``): the bytes Java Paimon
writes for the same rows, embedded or in ``<data file>.index``; schema validation; index
file names; evaluation of predicates against a container."""

from __future__ import annotations

import io
import struct
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import InvalidArgument, SchemaError, UnsupportedFeature
from paimon_core.format.bloom_filter_index import BloomFilterReader
from paimon_core.format.data_file_index import (
    BytesSource,
    DataFileIndexWriter,
    evaluate,
    new_index_path,
)
from paimon_core.format.file_index import REMAIN, SKIP, file_index_options, read_header
from paimon_core.format.types import (
    BIGINT,
    DECIMAL,
    INT,
    MAP,
    STRING,
    DataField,
    DataType,
    to_arrow_schema,
)
from tests.unit.paimon_core.format.index_twins import (
    arrow_rows,
    containers,
    java_filtered_reads,
    twins,
)

ALL_TYPES = (
    "i INT, b BIGINT, s STRING, f FLOAT, d DOUBLE, dt DATE, ts TIMESTAMP(3), "
    "tu TIMESTAMP(6), bin BYTES, t TINYINT, sm SMALLINT"
)
ALL_ROWS = [
    {
        "i": 1, "b": -5, "s": "a", "f": 1.5, "d": -0.0, "dt": "2024-01-02",
        "ts": "2024-01-01 12:00:00.123", "tu": "2024-01-01 12:00:00.123456", "bin": "xy",
        "t": -3, "sm": 300,
    },
    {
        "i": -7, "b": 1 << 40, "s": "héllo", "f": "NaN", "d": 2.25, "dt": "1960-05-05",
        "ts": "1960-01-01 00:00:00.001", "tu": "1969-12-31 23:59:59.999999", "bin": "",
        "t": 127, "sm": -300,
    },
    {},
]  # fmt: skip


def test_bloom_filters_in_an_index_file_equal_javas(
    warehouse: str, oracle: Callable[..., Any]
) -> None:
    """Default sizes (1,000,000 items: 600 KB a column) go to ``<data file>.index``; eleven
    columns, colliding in Java's ``HashMap`` s, in Java's order; NaN, -0.0, nulls, non-ASCII
    strings, timestamps before 1970."""
    options = {
        "file-index.bloom-filter.columns": "i,b,s,f,d,dt,ts,tu,bin,t,sm",
        "file-index.bloom-filter.i.items": "50",
        "file-index.bloom-filter.s.items": "10",
        "file-index.bloom-filter.s.fpp": "0.01",
    }
    java, ours = twins(warehouse, oracle, ALL_TYPES, options, [ALL_ROWS])
    (java_entry,) = java.new_scan().read_entries(java.latest_snapshot())
    (our_entry,) = ours.new_scan().read_entries(ours.latest_snapshot())
    assert our_entry.file.embedded_index is None and java_entry.file.embedded_index is None
    assert our_entry.file.extra_files == (our_entry.file.file_name + ".index",)
    (java_bytes,), (our_bytes,) = containers(java), containers(ours)
    assert len(our_bytes) > 5_000_000 and our_bytes == java_bytes


def test_small_bloom_filters_embedded_equal_javas_also_for_primary_keys(
    warehouse: str, oracle: Callable[..., Any]
) -> None:
    """Small indexes are embedded in the manifest. Primary-key files are indexed over their
    value columns since Paimon 1.0 (0.9 indexes none): ours equal the container Java 0.9
    writes for an append file of the same rows in the same order, and Java reads the table."""
    options = {
        "file-index.bloom-filter.columns": "v,n",
        "file-index.bloom-filter.v.items": "20",
        "file-index.bloom-filter.n.items": "30",
        "file-index.bloom-filter.n.fpp": "0.2",
    }
    rows = [{"k": k, "v": f"v{k}", "n": k * 7 if k % 3 else None} for k in range(12)]
    java, ours = twins(warehouse, oracle, "k INT, v STRING, n BIGINT", options, [rows])
    (java_c,), (ours_c,) = containers(java), containers(ours)
    assert len(ours_c) <= 500 and ours_c == java_c
    catalog = FileSystemCatalog(warehouse)
    pk = catalog.create_table(
        "db.pk",
        to_arrow_schema(java.schema.fields),
        primary_keys=["k"],
        options={**options, "bucket": "1"},
    )
    pk.write_arrow(arrow_rows(java.schema.fields, list(reversed(rows))))
    (entry,) = pk.new_scan().read_entries(pk.latest_snapshot())
    assert entry.file.extra_files == () and entry.file.embedded_index == java_c
    got = oracle("read", warehouse, "db.pk")
    assert sorted((r["k"], r["v"], r["n"]) for r in got) == [
        (r["k"], r["v"], r.get("n")) for r in rows
    ]


def test_validation_at_table_creation(warehouse: str) -> None:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    schema = pa.schema(
        [("k", pa.int32()), ("d", pa.decimal128(10, 2)), ("m", pa.map_(pa.int32(), pa.int32()))]
    )
    for options, error, needle in [
        ({"file-index.bloom-filter.columns": "x"}, SchemaError, "Column 'x' specified in"),
        (
            {"file-index.bloom-filter.columns": "d"},
            SchemaError,
            "Column 'd' with type 'DECIMAL(10, 2)' is not supported by 'bloom-filter' index. "
            "Does not support decimal",
        ),
        ({"file-index.bloom-filter.columns": "k[a]"}, SchemaError, "is not a map type"),
        ({"file-index.bloom-filter.columns": "m[a]"}, SchemaError, "its map key type is INT"),
        ({"file-index.nope.columns": "k"}, SchemaError, "Can't find file index for type: nope"),
        ({"file-index.range-bitmap.columns": "k"}, UnsupportedFeature, "'range-bitmap'"),
        (
            {"file-index.bloom-filter.columns": "k", "file-index.bloom-filter.z.fpp": "0.1"},
            SchemaError,
            "column 'z' is not declared",
        ),
    ]:
        with pytest.raises(error, match=needle.replace("(", r"\(").replace(")", r"\)")):
            catalog.create_table("db.t", schema, options=options)
        assert not catalog.table_exists("db.t")


def test_new_index_file_names() -> None:
    assert new_index_path("/b/data-1-2-0.parquet.index") == "/b/data-1-2-0.parquet-1.index"
    assert new_index_path("/b/data-1-2-0.parquet-1.index") == "/b/data-1-2-0.parquet-2.index"
    assert new_index_path("x.orc.index") == "x.orc-1.index"


def _fields(*pairs: tuple[str, DataType]) -> list[DataField]:
    return [DataField(i, name, t) for i, (name, t) in enumerate(pairs)]


def test_writer_orders_types_and_columns_as_java() -> None:
    fields = _fields(("a", INT()), ("b", STRING()), ("c", BIGINT()))
    options = file_index_options(
        {
            "file-index.bloom-filter.columns": "a,b,c",
            "file-index.bloom-filter.a.items": "10",
            "file-index.bloom-filter.b.items": "10",
            "file-index.bloom-filter.c.items": "10",
        }
    )
    writer = DataFileIndexWriter(fields, options)
    writer.write(pa.table({"a": [1, 2], "b": ["x", None], "c": [None, 5]}))
    data = writer.container()
    entries = read_header(io.BytesIO(data).read, "mem")
    assert [e.column_name for e in entries] == ["a", "b", "c"]
    source = BytesSource(data)
    types = {f.name: f.type for f in fields}
    assert evaluate(source, "mem", types, [("a", "=", 1)]) is REMAIN
    skipped = [v for v in range(3, 40) if evaluate(source, "mem", types, [("a", "=", v)]) is SKIP]
    assert len(skipped) > 20
    assert evaluate(source, "mem", types, [("a", "=", 1), ("b", "=", "y")]).remain() is (
        evaluate(source, "mem", types, [("b", "=", "y")]).remain()
    )
    assert evaluate(source, "mem", types, [("z", "=", 1)]) is REMAIN  # no such index
    assert evaluate(source, "mem", types, [("a", "in", (1, skipped[0]))]) is REMAIN
    assert evaluate(source, "mem", types, [("a", "in", tuple(skipped[:2]))]) is SKIP


def test_writer_refuses_undeclared_or_unsupported_columns() -> None:
    options = file_index_options({"file-index.bloom-filter.columns": "d"})
    with pytest.raises(InvalidArgument, match="d does not exist in column fields"):
        DataFileIndexWriter(_fields(("a", INT())), options)
    with pytest.raises(InvalidArgument, match="Does not support decimal"):
        DataFileIndexWriter(_fields(("d", DECIMAL(5, 1))), options)


def test_map_keys_are_indexed_by_their_values() -> None:
    """``m[k]`` indexes the values of key ``k`` (null where a row lacks it), each under its
    own name; options of the map apply to every key, a key's own win."""
    t = MAP(STRING(False), INT())
    fields = [DataField(0, "m", t)]
    options = file_index_options(
        {
            "file-index.bloom-filter.columns": "m[a],m[b]",
            "file-index.bloom-filter.m.items": "50",
            "file-index.bloom-filter.m[b].fpp": "0.01",
        }
    )
    writer = DataFileIndexWriter(fields, options)
    data = pa.array(
        [[("a", 1), ("b", 2)], None, [("a", 3)], [("c", 4)]], pa.map_(pa.string(), pa.int32())
    )
    writer.write(pa.table({"m": data}))
    container = writer.container()
    entries = {e.column_name: e for e in read_header(io.BytesIO(container).read, "mem")}
    assert set(entries) == {"m[a]", "m[b]"}
    a = entries["m[a]"]
    reader = BloomFilterReader(INT(), container[a.start : a.start + a.length])
    assert reader.visit("=", 1, ()) is REMAIN and reader.visit("=", 3, ()) is REMAIN
    b = entries["m[b]"]
    assert struct.unpack(">i", container[b.start : b.start + 4])[0] == 7  # fpp 0.01: 7 hashes


@pytest.mark.parametrize(
    "options",
    [
        {"file-index.bloom-filter.k.items": "20", "file-index.bloom-filter.s.items": "20"},
        {},  # default sizes: <data file>.index, which Java consults when reading each file
    ],
    ids=["embedded", "index-file"],
)
def test_java_reads_with_our_indexes(
    warehouse: str, oracle: Callable[..., Any], tmp_path: Any, options: dict[str, str]
) -> None:
    """Java 0.9's filtered reads use the indexes we wrote (bloom filters, V1 bitmaps) and
    return every matching row: a wrong index would drop rows."""
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    schema = pa.schema([("k", pa.int32()), ("s", pa.string()), ("b", pa.int32())])
    table = catalog.create_table(
        "db.t",
        schema,
        options={
            "file-index.bloom-filter.columns": "k,s",
            "file-index.bitmap.columns": "b",
            "file-index.bitmap.b.version": "1",
            **options,
        },
    )
    for i in range(6):  # every file spans [i, 1000 + i]: stats prune nothing
        ks = [i, i + 10, i + 20, 1000 + i]
        table.write_arrow(
            pa.table({"k": ks, "s": [f"s{k}" for k in ks], "b": [k % 7 for k in ks]}, schema)
        )
    assert len(oracle("read", warehouse, "db.t")) == 24  # also fetches the oracle's jars
    queries = [
        ("k", 13, {13}),
        ("s", "s24", {24}),
        ("k", 1005, {1005}),
        ("k", 9, set()),
        ("b", 3, {3, 10, 24, 1003}),
    ]
    results = java_filtered_reads(tmp_path, warehouse, "db.t", [(c, v) for c, v, _ in queries])
    assert len(results) == len(queries)
    for (column, value, expected), got in zip(queries, results):
        assert expected <= set(got["keys"]), (column, value)
    if options:  # embedded indexes prune in Java's plan already
        assert sum(got["files"] for got in results) < len(queries) * 6

"""ORC data files: the physical layout Java's ORC format expects, and what its reader returns."""

from __future__ import annotations

import datetime as dt
import os

import pyarrow as pa
import pyarrow.orc as orc

from paimon_core.catalog import FileSystemCatalog
from paimon_core.format.schema import new_table_schema
from paimon_core.format.types import (
    ARRAY,
    BIGINT,
    CHAR,
    DECIMAL,
    INT,
    MAP,
    STRING,
    TIME,
    TIMESTAMP,
    TIMESTAMP_LTZ,
    DataType,
)
from paimon_core.table import FileStoreTable


def _table(
    warehouse: str, columns: list[tuple[str, DataType]], append: bool = False, **options: str
) -> FileStoreTable:
    """A primary-key table on ``k`` (one bucket), or an append table, writing ORC."""
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    keys = [] if append else ["k"]
    options = {"file.format": "orc", **({} if append else {"bucket": "1"}), **options}
    return catalog.create_table(
        "db.t", new_table_schema(columns, primary_keys=keys, options=options)
    )


def _only_file(table: FileStoreTable) -> orc.ORCFile:
    (path,) = [
        os.path.join(d, n) for d, _, names in os.walk(table.path) for n in names
        if n.startswith("data-")
    ]  # fmt: skip
    return orc.ORCFile(path)


def test_a_primary_key_file_has_java_columns_and_types(warehouse: str) -> None:
    table = _table(
        warehouse,
        [
            ("k", BIGINT(False)),
            ("t", TIME(3)),
            ("ts", TIMESTAMP(3)),
            ("ltz", TIMESTAMP_LTZ(6)),
            ("d", DECIMAL(20, 4)),
            ("times", ARRAY(TIME(3))),
        ],
    )
    schema = table.new_read().output_schema()
    row = {
        "k": 7,
        "t": dt.time(1, 0, 0, 5000),
        "ts": dt.datetime(2024, 1, 1, 1, 2, 3),
        "ltz": dt.datetime(2024, 1, 1, tzinfo=dt.UTC),
        "d": None,
        "times": [dt.time(0, 0, 1)],
    }
    table.write_arrow(pa.Table.from_pylist([row], schema))
    f = _only_file(table)
    assert f.compression == "ZSTD" and f.file_version == "0.12"
    assert f.schema.names == ["_KEY_k", "_SEQUENCE_NUMBER", "_VALUE_KIND", *schema.names]
    types = {field.name: field.type for field in f.schema}
    assert types["_VALUE_KIND"] == pa.int8()
    # Java stores TIME as int milliseconds of the day; TIMESTAMP_LTZ as an ORC instant.
    assert types["t"] == pa.int32() and types["times"] == pa.list_(pa.int32())
    assert types["ltz"] == pa.timestamp("ns", tz="UTC") and types["ts"] == pa.timestamp("ns")
    assert types["d"] == pa.decimal128(20, 4)
    raw = f.read().to_pylist()[0]
    assert raw["t"] == 3_600_005 and raw["times"] == [1000]
    assert raw["_KEY_k"] == 7 and raw["_SEQUENCE_NUMBER"] == 0 and raw["_VALUE_KIND"] == 0
    assert table.to_arrow().to_pylist() == [row]


def test_nanosecond_timestamps_and_time_precision(warehouse: str) -> None:
    """ORC keeps TIMESTAMP(9) nanos (Parquet cannot); TIME keeps milliseconds, as Java's
    int TIME does at any precision."""
    table = _table(warehouse, [("k", BIGINT(False)), ("ts", TIMESTAMP(9)), ("t", TIME(6))])
    schema = table.new_read().output_schema()
    data = pa.table(
        {
            "k": [1],
            "ts": pa.array([1_704_110_400_123_456_789], pa.timestamp("ns")),
            "t": pa.array([3_723_456_789], pa.time64("us")),
        },
        schema,
    )
    table.write_arrow(data)
    got = table.to_arrow()
    assert got.column("ts").cast(pa.int64()).to_pylist() == [1_704_110_400_123_456_789]
    assert got.column("t").to_pylist() == [dt.time(1, 2, 3, 456000)]


def test_char_reads_right_trimmed_as_java_orc_does(warehouse: str) -> None:
    """Java's ORC writer pads CHAR(n) and its reader trims the padding: a CHAR value reads
    back without trailing spaces, whoever wrote the file; STRING keeps them."""
    table = _table(warehouse, [("k", BIGINT(False)), ("c", CHAR(4)), ("s", STRING())], True)
    schema = table.new_read().output_schema()
    table.write_arrow(pa.table({"k": [1, 2], "c": ["a   ", "b "], "s": ["a  ", None]}, schema))
    assert _only_file(table).read(columns=["c"]).column("c").to_pylist() == ["a   ", "b "]
    got = sorted(table.to_arrow().to_pylist(), key=lambda r: r["k"])
    assert [(r["c"], r["s"]) for r in got] == [("a", "a  "), ("b", None)]
    # Stats bound both the padded values (Java's ORC statistics) and the trimmed ones.
    for value in ("a", "a   "):
        assert table.new_scan().plan(predicate=[("c", "=", value)])
    assert not table.new_scan().plan(predicate=[("c", "=", "c")])


def test_compression_follows_the_table(warehouse: str) -> None:
    table = _table(warehouse, [("k", BIGINT(False))], **{"file.compression": "lz4"})
    table.write_arrow(pa.table({"k": [1]}, table.new_read().output_schema()))
    assert _only_file(table).compression == "LZ4"


def test_rolled_files_of_nested_times_keep_their_rows(warehouse: str) -> None:
    """A bucket bigger than ``target-file-size`` is written as slices: nested TIME values are
    converted per slice (a slice's children start mid-array)."""
    table = _table(
        warehouse,
        [("k", BIGINT(False)), ("m", MAP(INT(False), TIME(3)))],
        **{"target-file-size": "1 b"},
    )
    schema = table.new_read().output_schema()
    rows = [{"k": k, "m": [(k, dt.time(0, 0, k))] * (k % 3) or None} for k in range(1, 6)]
    table.write_arrow(pa.Table.from_pylist(rows, schema))
    assert len([f for s in table.new_scan().plan() for f in s.files]) == 5
    assert sorted(table.to_arrow().to_pylist(), key=lambda r: r["k"]) == rows

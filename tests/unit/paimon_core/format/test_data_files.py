"""Data file formats: which format and codec a writer uses, file names, and every Paimon type
written and read back through a table in Parquet, ORC and Avro."""

from __future__ import annotations

import datetime as dt
import os
import re
from decimal import Decimal
from typing import Any

import fastavro
import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import InvalidArgument, UnsupportedFeature
from paimon_core.format.data_files import check_fields, file_format_of, write_format
from paimon_core.format.options import CoreOptions
from paimon_core.format.schema import new_table_schema
from paimon_core.format.types import (
    ARRAY,
    BIGINT,
    BINARY,
    BOOLEAN,
    BYTES,
    CHAR,
    DATE,
    DECIMAL,
    DOUBLE,
    FLOAT,
    INT,
    MAP,
    MULTISET,
    ROW,
    SMALLINT,
    STRING,
    TIME,
    TIMESTAMP,
    TIMESTAMP_LTZ,
    TINYINT,
    VARCHAR,
    VARIANT,
    DataField,
    DataType,
)
from paimon_core.table import FileStoreTable


def test_the_format_of_a_file_is_its_extension() -> None:
    assert file_format_of("data-1-0.parquet") == "parquet"
    assert file_format_of("/t/bucket-0/data-1-0.ORC") == "orc"
    assert file_format_of("data-1-0.zst.avro") == "avro"  # file.suffix.include.compression
    assert file_format_of("data-1-0.csv.gz") == "csv"  # a compression extension comes last
    assert file_format_of("data-1-0") == ""


def test_write_format_follows_the_options_and_the_level_for_primary_keys() -> None:
    options = CoreOptions(
        {
            "file.format": "orc",
            "file.format.per.level": "0:avro, 3:parquet",
            "file.compression.per.level": "0:snappy",
        }
    )
    assert write_format(options, primary_key=False).name == "orc"  # append: no levels
    assert write_format(options, primary_key=False).codec == "zstd"
    level0 = write_format(options, primary_key=True)
    assert (level0.name, level0.codec, level0.suffix) == ("avro", "snappy", ".avro")
    level3 = write_format(options, primary_key=True, level=3)
    assert (level3.name, level3.codec) == ("parquet", "zstd")
    assert write_format(options, primary_key=True, level=1).name == "orc"


def test_zstd_and_codec_overrides() -> None:
    avro = write_format(
        CoreOptions({"file.format": "avro", "file.compression.zstd-level": "3"}), False
    )
    assert (avro.codec, avro.zstd_level) == ("zstandard", 3)
    codec = CoreOptions({"file.format": "avro", "avro.codec": "deflate"})
    assert write_format(codec, False).codec == "deflate"  # as Java's AvroFileFormat
    orc = CoreOptions({"file.format": "orc", "file.compression": "gzip", "orc.compress": "ZLIB"})
    assert write_format(orc, False).codec == "zlib"
    assert write_format(CoreOptions({"file.compression": "none"}), False).codec == "none"


def test_file_suffix_with_compression_uses_java_extensions() -> None:
    def suffix(**options: str) -> str:
        options = {"file.suffix.include.compression": "true", **options}
        return write_format(CoreOptions(options), False).suffix

    assert suffix() == ".zst.parquet"
    assert suffix(**{"file.format": "orc", "file.compression": "lz4"}) == ".lz4.orc"
    assert suffix(**{"file.format": "avro", "file.compression": "none"}) == ".avro"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"file.format": "csv"}, "'file.format' = 'csv' is not supported"),
        ({"file.format": "orc", "file.compression": "gzip"}, "ORC files with 'file.compression'"),
        ({"file.format": "avro", "file.compression": "lz4"}, "Avro files with 'file.compression'"),
        ({"file.format": "avro", "avro.codec": "brotli"}, "'avro.codec' = 'brotli'"),
    ],
)
def test_formats_and_codecs_java_cannot_read_are_refused(
    options: dict[str, str], message: str
) -> None:
    with pytest.raises(UnsupportedFeature, match=re.escape(message)):
        write_format(CoreOptions(options), primary_key=False)


def test_a_bad_per_level_map_names_the_option() -> None:
    with pytest.raises(InvalidArgument, match=r"'file\.format\.per\.level'"):
        write_format(CoreOptions({"file.format.per.level": "zero:avro"}), True)


@pytest.mark.parametrize(
    ("file_format", "data_type", "message"),
    [
        ("parquet", TIMESTAMP(9), "precision above 6"),
        ("avro", ARRAY(TIMESTAMP_LTZ(7)), "TIMESTAMP_LTZ with precision 7"),
        ("avro", TIME(6), "TIME with precision 6"),
        ("orc", VARIANT(), "no VARIANT"),
    ],
)
def test_columns_a_format_cannot_hold_are_refused(
    file_format: str, data_type: DataType, message: str
) -> None:
    write = write_format(CoreOptions({"file.format": file_format}), False)
    with pytest.raises(UnsupportedFeature, match=message):
        check_fields(write, [DataField(0, "c", data_type)])


# ----------------------------------------------------------------- every type, every format

ROW_TYPE = ROW([DataField(0, "x", INT()), DataField(1, "t", TIME(3)), DataField(2, "s", CHAR(3))])
COLUMNS: list[tuple[str, DataType]] = [
    ("k", BIGINT(False)),
    ("bo", BOOLEAN()),
    ("ti", TINYINT()),
    ("si", SMALLINT()),
    ("i", INT()),
    ("f", FLOAT()),
    ("d", DOUBLE()),
    ("dec38", DECIMAL(38, 10)),
    ("dec5", DECIMAL(5, 2)),
    ("c", CHAR(5)),
    ("vc", VARCHAR(10)),
    ("s", STRING()),
    ("bin", BINARY(3)),
    ("vb", BYTES()),
    ("dt", DATE()),
    ("tm", TIME(3)),
    ("ts3", TIMESTAMP(3)),
    ("ts6", TIMESTAMP(6)),
    ("ltz3", TIMESTAMP_LTZ(3)),
    ("ltz6", TIMESTAMP_LTZ(6)),
    ("arr", ARRAY(INT())),
    ("rows", ARRAY(ROW_TYPE)),
    ("smap", MAP(STRING(False), ARRAY(TIMESTAMP(3)))),
    ("imap", MAP(INT(False), ROW_TYPE)),
    ("bag", MULTISET(STRING(False))),
    ("r", ROW_TYPE),
]
ROW_VALUE = {"x": -1, "t": dt.time(23, 59, 59, 999000), "s": "a  "}
VALUES: dict[str, Any] = {
    "bo": True,
    "ti": -128,
    "si": 32767,
    "i": -(2**31),
    "f": 1.5,
    "d": -2.25e300,
    "dec38": Decimal("-1234567890123456789012345678.0123456789"),
    "dec5": Decimal("-128.00"),
    "c": "ab   ",  # CHAR(5) values are padded (Paimon's casts, Spark's writes)
    "vc": "héllo",
    "s": "",
    "bin": b"\x00\xff\x80",
    "vb": b"bytes",
    "dt": dt.date(1969, 12, 31),
    "tm": dt.time(12, 34, 56, 789000),
    "ts3": dt.datetime(1900, 1, 1, 0, 0, 0, 1000),
    "ts6": dt.datetime(2024, 2, 29, 12, 0, 0, 123456),
    "ltz3": dt.datetime(2024, 1, 1, 12, 0, 0, 123000, tzinfo=dt.UTC),
    "ltz6": dt.datetime(1970, 1, 1, 0, 0, 0, 1, tzinfo=dt.UTC),
    "arr": [1, None, 3],
    "rows": [ROW_VALUE, None],
    "smap": [("a", [dt.datetime(2020, 5, 17, 1, 2, 3)]), ("b", None)],
    "imap": [(7, ROW_VALUE), (-7, None)],
    "bag": [("x", 2)],
    "r": ROW_VALUE,
}


def _table(warehouse: str, file_format: str, primary_key: bool) -> FileStoreTable:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    options = {"file.format": file_format}
    if primary_key:
        options["bucket"] = "1"
    schema = new_table_schema(COLUMNS, primary_keys=["k"] if primary_key else (), options=options)
    return catalog.create_table("db.t", schema)


def _expected(file_format: str) -> dict[str, Any]:
    if file_format != "orc":
        return VALUES
    # Java's ORC reader returns CHAR values right-trimmed; this reader does as Java does.
    row = {**ROW_VALUE, "s": "a"}
    return {
        **VALUES,
        "c": "ab",
        "rows": [row, None],
        "imap": [(7, row), (-7, None)],
        "r": row,
    }


@pytest.mark.parametrize("primary_key", [False, True], ids=["append", "pk"])
@pytest.mark.parametrize("file_format", ["parquet", "orc", "avro"])
def test_every_type_round_trips(warehouse: str, file_format: str, primary_key: bool) -> None:
    table = _table(warehouse, file_format, primary_key)
    schema = table.new_read().output_schema()
    nulls = {name: None for name, _ in COLUMNS}
    table.write_arrow(pa.Table.from_pylist([{**VALUES, "k": 1}, {**nulls, "k": 2}], schema))
    if primary_key:  # an update in a second file: the merge reads the system columns too
        table.write_arrow(pa.Table.from_pylist([{**nulls, "k": 1, "i": 5}], schema))
    files = {f.file_name for s in table.new_scan().plan() for f in s.files}
    assert files and all(name.endswith(f".{file_format}") for name in files)
    got = sorted(table.to_arrow().to_pylist(), key=lambda r: r["k"])
    expected = {**_expected(file_format), "k": 1}
    if primary_key:
        expected = {**nulls, "k": 1, "i": 5}
    assert got == [expected, {**nulls, "k": 2}]
    assert table.to_arrow().schema == schema


@pytest.mark.parametrize("file_format", ["orc", "avro"])
def test_projection_reads_only_the_named_columns(warehouse: str, file_format: str) -> None:
    table = _table(warehouse, file_format, False)
    schema = table.new_read().output_schema()
    table.write_arrow(pa.Table.from_pylist([{**VALUES, "k": 1}], schema))
    splits = table.new_scan().plan()
    got = table.new_read().to_arrow(splits, ["r", "k"])
    assert got.column_names == ["r", "k"]
    assert got.to_pylist() == [{"r": _expected(file_format)["r"], "k": 1}]
    assert table.new_read().to_arrow(splits, []).num_rows == 1


def test_a_table_with_per_level_formats_writes_level_zero_in_its_format(warehouse: str) -> None:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    options = {"bucket": "1", "file.format.per.level": "0:avro", "file.compression": "snappy"}
    schema = pa.schema([pa.field("k", pa.int64(), False), ("v", pa.string())])
    table = catalog.create_table("db.t", schema, primary_keys=["k"], options=options)
    table.write_arrow(pa.table({"k": [1], "v": ["a"]}, schema))
    ((directory, name),) = [
        (d, n) for d, _, names in os.walk(table.path) for n in names if n.startswith("data-")
    ]
    assert name.endswith(".avro")
    with open(os.path.join(directory, name), "rb") as f:
        assert fastavro.reader(f).codec == "snappy"
    assert table.to_arrow().to_pylist() == [{"k": 1, "v": "a"}]


@pytest.mark.parametrize("file_format", ["orc", "avro"])
def test_file_stats_prune_orc_and_avro_files(warehouse: str, file_format: str) -> None:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    schema = pa.schema([("k", pa.int64()), ("s", pa.string())])
    table = catalog.create_table("db.t", schema, options={"file.format": file_format})
    table.write_arrow(pa.table({"k": [1, 2], "s": ["a", "b"]}, schema))
    table.write_arrow(pa.table({"k": [10, 20], "s": ["x", None]}, schema))
    assert len(table.new_scan().plan()) == 1
    (split,) = table.new_scan().plan(predicate=[("k", ">", 5)])
    assert [f.row_count for f in split.files] == [2]
    assert table.new_scan().plan(predicate=[("s", "=", "c")]) == []
    (split,) = table.new_scan().plan(predicate=[("s", "is_null", None)])
    assert table.new_read().to_arrow([split]).column("k").to_pylist() == [10, 20]

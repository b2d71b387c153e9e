"""Avro data files: Java's writer schema (AvroSchemaConverter) and value encodings."""

from __future__ import annotations

import json
import os
from decimal import Decimal

import fastavro
import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.format.avro_file import RECORD_NAME, avro_type, decimal_bytes
from paimon_core.format.schema import new_table_schema
from paimon_core.format.types import (
    ARRAY,
    BYTES,
    CHAR,
    DATE,
    DECIMAL,
    INT,
    MAP,
    MULTISET,
    ROW,
    STRING,
    TIME,
    TIMESTAMP,
    TIMESTAMP_LTZ,
    TINYINT,
    DataField,
)

# What Paimon 0.9 (Java) wrote for a primary-key table of these columns (the oracle's file).
JAVA_SCHEMA = [
    "null",
    {
        "type": "record",
        "name": RECORD_NAME,
        "fields": [
            {"name": "_KEY_k", "type": "int"},
            {"name": "_SEQUENCE_NUMBER", "type": "long"},
            {"name": "_VALUE_KIND", "type": "int"},
            {"name": "k", "type": "int"},
            {"default": None, "name": "c", "type": ["null", "string"]},
            {"default": None, "name": "b", "type": ["null", "bytes"]},
            {
                "default": None,
                "name": "d5",
                "type": [
                    "null",
                    {"logicalType": "decimal", "precision": 5, "scale": 2, "type": "bytes"},
                ],
            },
            {
                "default": None,
                "name": "dt",
                "type": ["null", {"logicalType": "date", "type": "int"}],
            },
            {
                "default": None,
                "name": "tm",
                "type": ["null", {"logicalType": "time-millis", "type": "int"}],
            },
            {
                "default": None,
                "name": "ts",
                "type": ["null", {"logicalType": "timestamp-millis", "type": "long"}],
            },
            {
                "default": None,
                "name": "ts6",
                "type": ["null", {"logicalType": "timestamp-micros", "type": "long"}],
            },
            {
                "default": None,
                "name": "ltz",
                "type": ["null", {"logicalType": "local-timestamp-millis", "type": "long"}],
            },
            {
                "default": None,
                "name": "ltz6",
                "type": ["null", {"logicalType": "local-timestamp-micros", "type": "long"}],
            },
            {"default": None, "name": "ti", "type": ["null", "int"]},
        ],
    },
]


def _avro_file(warehouse: str, columns: list, **options: str) -> tuple[str, list]:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    schema = new_table_schema(
        columns, primary_keys=["k"], options={"file.format": "avro", "bucket": "1", **options}
    )
    table = catalog.create_table("db.t", schema)
    arrow = table.new_read().output_schema()
    table.write_arrow(pa.Table.from_pylist([{"k": 1}], arrow))
    (path,) = [
        os.path.join(d, n) for d, _, names in os.walk(table.path) for n in names
        if n.startswith("data-")
    ]  # fmt: skip
    with open(path, "rb") as f:
        reader = fastavro.reader(f)
        return reader.codec, json.loads(reader.metadata["avro.schema"])


def test_the_writer_schema_is_java_s(warehouse: str) -> None:
    columns = [
        ("k", INT()),
        ("c", CHAR(5)),
        ("b", BYTES()),
        ("d5", DECIMAL(5, 2)),
        ("dt", DATE()),
        ("tm", TIME()),
        ("ts", TIMESTAMP(3)),
        ("ts6", TIMESTAMP(6)),
        ("ltz", TIMESTAMP_LTZ(3)),
        ("ltz6", TIMESTAMP_LTZ(6)),
        ("ti", TINYINT()),
    ]
    codec, schema = _avro_file(warehouse, columns)
    assert schema == JAVA_SCHEMA
    assert codec == "zstandard"  # file.compression = zstd


def test_nested_types_name_their_records_by_path() -> None:
    """``AvroSchemaConverter``: a ROW is ``<record>_<field>``; a MAP with non-string keys is an
    array of ``{key, value}`` records named like the map; MULTISET counts are nullable INT."""
    row = ROW([DataField(1, "x", INT(False))], nullable=False)
    assert avro_type(row, "r_f") == {
        "type": "record",
        "name": "r_f",
        "fields": [{"name": "x", "type": "int"}],
    }
    assert avro_type(MAP(STRING(False), ARRAY(INT(False)), False), "r_m") == {
        "type": "map",
        "values": ["null", {"type": "array", "items": "int"}],
    }
    assert avro_type(MULTISET(INT(False), False), "r_s") == {
        "type": "array",
        "logicalType": "map",
        "items": {
            "type": "record",
            "name": "r_s",
            "fields": [
                {"name": "key", "type": "int"},
                {"name": "value", "type": ["null", "int"], "default": None},
            ],
        },
    }
    assert avro_type(ARRAY(row, False), "r_a") == {
        "type": "array",
        "items": {"type": "record", "name": "r_a", "fields": [{"name": "x", "type": "int"}]},
    }


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        ("0", "00"),
        ("-0.01", "ff"),
        ("1.27", "7f"),
        ("1.28", "0080"),
        ("-1.28", "80"),
        ("-1.29", "ff7f"),
    ],
)
def test_decimals_are_java_big_integer_bytes(value: str, encoded: str) -> None:
    assert decimal_bytes(Decimal(value), 2).hex() == encoded


def test_the_codec_follows_the_table(warehouse: str) -> None:
    codec, _ = _avro_file(warehouse, [("k", INT())], **{"file.compression": "deflate"})
    assert codec == "deflate"

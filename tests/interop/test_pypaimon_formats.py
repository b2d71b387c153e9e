"""ORC and Avro tables with pypaimon 2.1, both directions, nested types included."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from tests.interop.helpers import pypaimon_read, pypaimon_write

SCHEMA = pa.schema(
    [
        pa.field("k", pa.int64(), False),
        ("s", pa.string()),
        ("d", pa.decimal128(20, 3)),
        ("t", pa.time32("ms")),
        ("ts", pa.timestamp("us")),
        ("ltz", pa.timestamp("ms", tz="UTC")),
        ("b", pa.binary()),
        ("a", pa.list_(pa.int32())),
        ("m", pa.map_(pa.int32(), pa.string())),
        ("r", pa.struct([("x", pa.int32()), ("y", pa.list_(pa.timestamp("us")))])),
    ]
)
ROWS: list[dict[str, Any]] = [
    {
        "k": 1,
        "s": "a",
        "d": Decimal("-12.345"),
        "t": dt.time(1, 2, 3, 4000),
        "ts": dt.datetime(2024, 1, 1, 1, 2, 3, 456789),
        "ltz": dt.datetime(2024, 1, 1, tzinfo=dt.UTC),
        "b": b"\x00\xff",
        "a": [1, 2],  # pypaimon's Avro writer has no null elements
        "m": [(1, "x"), (2, None)],
        "r": {"x": 7, "y": [dt.datetime(2020, 5, 17)]},
    },
    {"k": 2, **dict.fromkeys(SCHEMA.names[1:])},
]


def _sorted(table: pa.Table) -> list[dict[str, Any]]:
    return sorted(table.to_pylist(), key=lambda r: r["k"])


@pytest.mark.parametrize("primary_key", [False, True], ids=["append", "pk"])
@pytest.mark.parametrize("file_format", ["orc", "avro"])
def test_pypaimon_reads_our_orc_and_avro_tables(
    warehouse: str, file_format: str, primary_key: bool
) -> None:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    options = {"file.format": file_format, **({"bucket": "1"} if primary_key else {})}
    keys = ["k"] if primary_key else []
    table = catalog.create_table("db.t", SCHEMA, primary_keys=keys, options=options)
    table.write_arrow(pa.Table.from_pylist(ROWS, SCHEMA))
    got = pypaimon_read(warehouse, "db.t")
    assert _sorted(got.cast(SCHEMA)) == ROWS


@pytest.mark.parametrize("primary_key", [False, True], ids=["append", "pk"])
@pytest.mark.parametrize("file_format", ["orc", "avro"])
def test_we_read_pypaimon_orc_and_avro_tables(
    warehouse: str, file_format: str, primary_key: bool
) -> None:
    schema = SCHEMA
    if file_format == "avro":  # pypaimon's Avro writer has no maps
        schema = pa.schema([f for f in SCHEMA if f.name != "m"])
    data = pa.Table.from_pylist(ROWS, SCHEMA).select(schema.names)
    options = {"file.format": file_format, **({"bucket": "1"} if primary_key else {})}
    create = {"primary_keys": ["k"] if primary_key else None, "options": options}
    pypaimon_write(warehouse, "db.t", data, create=create)
    table = FileSystemCatalog(warehouse).get_table("db.t")
    files = [f.file_name for s in table.new_scan().plan() for f in s.files]
    assert files and all(name.endswith(f".{file_format}") for name in files)
    assert _sorted(table.to_arrow()) == _sorted(data)

"""ORC and Avro tables with Apache Paimon's Java implementation (0.9), both directions: Java
writes, we read; we write into the same table, Java reads everything. Every atomic type."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog

pytestmark = pytest.mark.oracle

# Column, its SQL type, the value as Paimon prints it (and parses it), the value in Python.
COLUMNS: list[tuple[str, str, Any, Any]] = [
    ("bo", "BOOLEAN", True, True),
    ("ti", "TINYINT", -128, -128),
    ("si", "SMALLINT", 32767, 32767),
    ("bi", "BIGINT", -(2**63), -(2**63)),
    ("f", "FLOAT", 1.5, 1.5),
    ("db", "DOUBLE", -2.25e300, -2.25e300),
    (
        "d",
        "DECIMAL(38, 10)",
        "-1234567890123456789012345678.0123456789",
        Decimal("-1234567890123456789012345678.0123456789"),
    ),
    ("d5", "DECIMAL(5, 2)", "-128.00", Decimal("-128.00")),
    ("c", "CHAR(5)", "ab", "ab"),
    ("vc", "VARCHAR(10)", "héllo", "héllo"),
    ("s", "STRING", "", ""),
    ("b", "BYTES", "bytes", b"bytes"),
    ("bn", "BINARY(3)", "abc", b"abc"),
    ("dt", "DATE", "1969-12-31", dt.date(1969, 12, 31)),
    ("tm", "TIME(3)", "12:34:56.789", dt.time(12, 34, 56, 789000)),
    ("ts", "TIMESTAMP(3)", "1960-01-01 00:00:00.001", dt.datetime(1960, 1, 1, 0, 0, 0, 1000)),
    (
        "ts6",
        "TIMESTAMP(6)",
        "2024-02-29 12:00:00.123456",
        dt.datetime(2024, 2, 29, 12, 0, 0, 123456),
    ),
    (
        "ltz",
        "TIMESTAMP_LTZ(3)",
        "2024-01-01 12:00:00.123",
        dt.datetime(2024, 1, 1, 12, 0, 0, 123000, tzinfo=dt.UTC),
    ),
    (
        "ltz6",
        "TIMESTAMP_LTZ(6)",
        "1970-01-01 00:00:00.000001",
        dt.datetime(1970, 1, 1, 0, 0, 0, 1, tzinfo=dt.UTC),
    ),
]
NANOS = ("ts9", "TIMESTAMP(9)", "2024-01-01 12:00:00.123456789", 1_704_110_400_123_456_789)
"""ORC only: Avro has no TIMESTAMP(9). Python keeps the nanos as an int64 of the column."""


def _columns(file_format: str) -> list[tuple[str, str, Any, Any]]:
    return [*COLUMNS, NANOS] if file_format == "orc" else COLUMNS


def _python_row(file_format: str, k: int) -> dict[str, Any]:
    return {"k": k, **{name: value for name, _, _, value in _columns(file_format)}}


def _java_row(file_format: str, k: int, char: str = "ab") -> dict[str, Any]:
    row = {"k": k, **{name: text for name, _, text, _ in _columns(file_format)}}
    return {**row, "c": char}


def _ours(table: Any) -> list[dict[str, Any]]:
    data = table.to_arrow()
    if "ts9" in data.column_names:
        index = data.column_names.index("ts9")
        data = data.set_column(index, "ts9", data.column("ts9").cast(pa.int64()))
    return sorted(data.to_pylist(), key=lambda r: r["k"])


@pytest.mark.parametrize("primary_key", [False, True], ids=["append", "pk"])
@pytest.mark.parametrize("file_format", ["orc", "avro"])
def test_java_and_we_share_an_orc_or_avro_table(
    warehouse: str, oracle: Callable[..., Any], file_format: str, primary_key: bool
) -> None:
    columns = _columns(file_format)
    ddl = ", ".join(["k INT", *(f"{name} {sql}" for name, sql, _, _ in columns)])
    keys = ["--primary-key", "k", "--option", "bucket=1"] if primary_key else []
    oracle(
        "create-table", warehouse, "db.t", "--schema", ddl,
        "--option", f"file.format={file_format}", *keys,
    )  # fmt: skip
    nulls = {"k": 2, **{name: None for name, *_ in columns}}
    oracle(
        "write", warehouse, "db.t", "--json-rows", json.dumps([_java_row(file_format, 1), {"k": 2}])
    )

    table = FileSystemCatalog(warehouse).get_table("db.t")
    assert _ours(table) == [_python_row(file_format, 1), nulls]

    # Ours: k=3, and for a primary-key table an update of Java's k=1 (CHAR padded, as Spark
    # writes it: Java's ORC reader trims the padding, its Avro reader keeps it).
    ours = [_python_row(file_format, 3), {**nulls, "k": 1, "s": "ours"}]
    if not primary_key:
        ours = ours[:1]
    ours[0]["c"] = "ab   "
    schema = table.new_read().output_schema()
    if file_format == "orc":
        ours = [{**r, "ts9": pa.scalar(r["ts9"], pa.timestamp("ns"))} for r in ours]
    table.write_arrow(pa.Table.from_pylist(ours, schema))
    files = {f.file_name for s in table.new_scan().plan() for f in s.files}
    assert len(files) == 2 and all(name.endswith(f".{file_format}") for name in files)

    first = {**nulls, "k": 1, "s": "ours"} if primary_key else _java_row(file_format, 1)
    padded = "ab" if file_format == "orc" else "ab   "
    expected = [first, nulls, _java_row(file_format, 3, char=padded)]
    assert sorted(oracle("read", warehouse, "db.t"), key=lambda r: r["k"]) == expected

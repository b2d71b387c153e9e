"""Twin tables for file index tests: Java Paimon 0.9 (the oracle) writes rows into one, this
implementation writes the same rows into another with the same options, and the tests
compare the two data files' index containers byte for byte."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa

from paimon_core.catalog import FileSystemCatalog
from paimon_core.format.manifest import DataFileMeta
from paimon_core.format.types import DataField, to_arrow_schema
from paimon_core.operations.read import data_file_path
from paimon_core.table import FileStoreTable
from tests.interop.helpers import run_java


def python_value(field: DataField, text: Any) -> Any:
    """The oracle's JSON value as the Python value of the column's type."""
    if text is None:
        return None
    root = field.type.root
    if root == "DATE":
        return dt.date.fromisoformat(text)
    if root in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        return dt.datetime.fromisoformat(text)
    if root in ("FLOAT", "DOUBLE"):
        return float(text)
    if root == "DECIMAL":
        return Decimal(str(text))
    if root in ("BINARY", "VARBINARY"):
        return text.encode()
    return text


def arrow_rows(fields: Sequence[DataField], rows: Sequence[dict[str, Any]]) -> pa.Table:
    columns = {f.name: [python_value(f, r.get(f.name)) for r in rows] for f in fields}
    return pa.table(columns, to_arrow_schema(fields))


def containers(table: FileStoreTable) -> list[bytes]:
    """Each live data file's index container (embedded, else its ``.index`` file), by the
    files' minimum sequence number, then name."""
    entries = table.new_scan().read_entries(table.latest_snapshot())
    out = []
    for e in sorted(entries, key=lambda e: (e.partition, e.bucket, e.file.min_sequence_number)):
        out.append(container_of(table, e.partition, e.bucket, e.file))
    return out


def container_of(table: FileStoreTable, partition: bytes, bucket: int, f: DataFileMeta) -> bytes:
    if f.embedded_index is not None:
        return f.embedded_index
    (name,) = [x for x in f.extra_files if x.endswith(".index")]
    values = table.new_scan().partition_values(partition)
    with open(data_file_path(table, values, bucket, name), "rb") as stream:
        return stream.read()


def twins(
    warehouse: str,
    oracle: Callable[..., Any],
    schema_sql: str,
    options: dict[str, str],
    batches: Sequence[Sequence[dict[str, Any]]],
    *,
    primary_key: str | None = None,
    partition: str | None = None,
) -> tuple[FileStoreTable, FileStoreTable]:
    """Java's table ``db.java`` and ours ``db.ours``, each written with ``batches`` (one
    commit each)."""
    extra: list[str] = []
    for key, value in options.items():
        extra += ["--option", f"{key}={value}"]
    if primary_key:
        extra += ["--primary-key", primary_key]
    if partition:
        extra += ["--partition", partition]
    oracle("create-table", warehouse, "db.java", "--schema", schema_sql, *extra)
    for rows in batches:
        oracle("write", warehouse, "db.java", "--json-rows", json.dumps(list(rows)))
    catalog = FileSystemCatalog(warehouse)
    java = catalog.get_table("db.java")
    ours = catalog.create_table(
        "db.ours",
        to_arrow_schema(java.schema.fields),
        primary_keys=list(java.schema.primary_keys),
        partition_keys=list(java.schema.partition_keys),
        options={k: v for k, v in java.schema.options.items() if k != "path"},
    )
    for rows in batches:
        ours.write_arrow(arrow_rows(java.schema.fields, rows))
    return java, catalog.get_table("db.ours")


def java_filtered_reads(
    build_dir: Path, warehouse: str, identifier: str, queries: Sequence[tuple[str, Any]]
) -> list[dict[str, Any]]:
    """Paimon 0.9's reads of ``identifier`` filtered by ``column = value`` (for each: the
    data files its plan keeps, the first column of the rows it reads), in one JVM with the
    paimon-oracle's jars (run the oracle once first: it fetches them)."""
    args = [f"{column}={value}" for column, value in queries]
    return run_java(build_dir, "FilteredRead", [warehouse, identifier, *args])

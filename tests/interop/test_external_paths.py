"""Writes under ``data-file.external-paths`` (issue 20): our new data, changelog and compacted
files go under the external roots with ``_EXTERNAL_PATH`` recorded, none in the table's
bucket directories, and pypaimon 2.1 and Java 2.0.0 read them; each side's commit on top
reads on the other."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.operations.compact import compact_table
from paimon_core.table import FileStoreTable
from tests.interop.helpers import json_rows, pypaimon_read, pypaimon_write, rows
from tests.interop.java2 import Java2

SCHEMA = pa.schema(
    [pa.field("id", pa.int64(), False), ("v", pa.string()), pa.field("dt", pa.string(), False)]
)
COLS = ["id", "v", "dt"]


def _data(ids: list[int], tag: str, dt: str = "x") -> pa.Table:
    return pa.table(
        {"id": ids, "v": [f"{tag}{i}" for i in ids], "dt": [dt] * len(ids)}, schema=SCHEMA
    )


def _roots(warehouse: str) -> list[str]:
    roots = [os.path.join(os.path.dirname(warehouse), f"ext{i}") for i in (1, 2)]
    for r in roots:
        os.makedirs(r, exist_ok=True)
    return roots


def _options(roots: list[str], strategy: str = "round-robin") -> dict[str, str]:
    return {
        "bucket": "1",
        "data-file.external-paths": ",".join(f"file://{r}" for r in roots),
        "data-file.external-paths.strategy": strategy,
    }


def _files_under(root: str) -> list[str]:
    return sorted(
        os.path.relpath(os.path.join(d, n), root) for d, _, ns in os.walk(root) for n in ns
    )


def _bucket_files(table: FileStoreTable) -> list[str]:
    """Data files inside the table directory (none when all go external)."""
    return [
        n for d, _, ns in os.walk(table.path) for n in ns if n.startswith(("data-", "changelog-"))
    ]


def _live(table: FileStoreTable) -> list[Any]:
    return [f for s in table.new_scan().plan() for f in s.files]


@pytest.mark.parametrize("strategy", ["round-robin", "entropy-inject"])
def test_our_external_files_read_by_pypaimon_and_its_commit_on_top(
    warehouse: str, strategy: str
) -> None:
    roots = _roots(warehouse)
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    table = catalog.create_table(
        "db.t",
        SCHEMA,
        primary_keys=["id", "dt"],
        partition_keys=["dt"],
        options={**_options(roots, strategy), "changelog-producer": "input"},
    )
    for i in range(3):
        table.write_arrow(_data([1, 2, 3], f"w{i}-"))
    files = _live(table)
    assert files and all(f.external_path for f in files)
    for f in files:
        assert f.external_path.startswith(tuple(f"file:{r}/dt=x/bucket-0/" for r in roots))
        assert os.path.exists(f.external_path[len("file:") :])
    written = _files_under(roots[0]) + _files_under(roots[1])
    assert any(n.rsplit("/", 1)[-1].startswith("changelog-") for n in written)
    if strategy == "round-robin":  # three writes alternate over both roots
        assert _files_under(roots[0]) and _files_under(roots[1])
    else:  # <dt>/<bucket>/<4 bits>/<4 bits>/<4 bits>/<8 bits>/<file>
        assert all(len(n.split("/")) == 7 for n in written), written
    assert _bucket_files(table) == []
    compact_table(table)
    compacted = _live(table)
    assert {f.level for f in compacted} == {5} and all(f.external_path for f in compacted)
    assert _bucket_files(table) == []
    expected = [(1, "w2-1", "x"), (2, "w2-2", "x"), (3, "w2-3", "x")]
    assert rows(pypaimon_read(warehouse, "db.t"), COLS) == rows(table.to_arrow(), COLS) == expected
    pypaimon_write(warehouse, "db.t", _data([3, 4], "p"))
    expected = [(1, "w2-1", "x"), (2, "w2-2", "x"), (3, "p3", "x"), (4, "p4", "x")]
    assert rows(table.to_arrow(), COLS) == rows(pypaimon_read(warehouse, "db.t"), COLS) == expected
    assert _bucket_files(table) == []


def test_pypaimon_external_table_then_our_commit(warehouse: str) -> None:
    roots = _roots(warehouse)
    pypaimon_write(
        warehouse,
        "db.t",
        _data([1, 2], "p"),
        create={"primary_keys": ["id", "dt"], "partition_keys": ["dt"], "options": _options(roots)},
    )
    table = FileSystemCatalog(warehouse).get_table("db.t")
    table.write_arrow(_data([2, 5], "o"))
    assert all(f.external_path for f in _live(table)) and _bucket_files(table) == []
    expected = [(1, "p1", "x"), (2, "o2", "x"), (5, "o5", "x")]
    assert rows(pypaimon_read(warehouse, "db.t"), COLS) == rows(table.to_arrow(), COLS) == expected


@pytest.mark.java2
def test_java2_reads_our_external_files_and_we_read_its_commit_on_top(
    java2: Java2, warehouse: str
) -> None:
    roots = _roots(warehouse)
    java2.create_table(
        "db.t", [("id", "BIGINT NOT NULL"), ("v", "STRING"), ("dt", "STRING NOT NULL")],
        primary_keys=["id", "dt"], partition_keys=["dt"], options=_options(roots),
    )  # fmt: skip
    java2.write("db.t", [{"id": 1, "v": "j1", "dt": "x"}, {"id": 2, "v": "j2", "dt": "y"}])
    table = FileSystemCatalog(warehouse).get_table("db.t")
    java_files = _live(table)
    assert all(f.external_path for f in java_files)
    table.write_arrow(_data([2, 3], "o", "y"))
    ours = [f for f in _live(table) if f not in java_files]
    assert ours and all(f.external_path.startswith("file:/") for f in ours)
    expected = [(1, "j1", "x"), (2, "o2", "y"), (3, "o3", "y")]
    assert json_rows(java2.read("db.t"), COLS) == expected
    java2.write("db.t", [{"id": 3, "v": "j3", "dt": "y"}])
    java2.compact("db.t")
    expected = [(1, "j1", "x"), (2, "o2", "y"), (3, "j3", "y")]
    assert rows(table.to_arrow(), COLS) == expected
    assert _bucket_files(table) == []


# ------------------------------------------------------------------------------ SQL


@pytest.fixture
def session(spark: Any, warehouse: str) -> Iterator[Any]:
    from sql_ext.session import PaimonSession

    yield PaimonSession(spark, warehouse=warehouse)


@pytest.mark.spark
def test_sql_insert_writes_external_files(session: Any, warehouse: str) -> None:
    roots = _roots(warehouse)
    paths = ",".join(f"file://{r}" for r in roots)
    session.sql("CREATE DATABASE paimon.db")
    session.sql(
        "CREATE TABLE paimon.db.a (id BIGINT, v STRING) TBLPROPERTIES "
        f"('data-file.external-paths' = '{paths}', "
        "'data-file.external-paths.strategy' = 'specific-fs', "
        "'data-file.external-paths.specific-fs' = 'file')"
    )
    session.sql("INSERT INTO paimon.db.a VALUES (1, 'a'), (2, 'b')")
    session.sql("INSERT INTO paimon.db.a VALUES (3, 'c')")
    table = FileSystemCatalog(warehouse).get_table("db.a")
    assert all(f.external_path for f in _live(table)) and _bucket_files(table) == []
    expected = [(1, "a"), (2, "b"), (3, "c")]
    assert sorted(tuple(r) for r in session.sql("SELECT * FROM paimon.db.a").collect()) == expected
    assert rows(pypaimon_read(warehouse, "db.a"), ["id", "v"]) == expected

"""Both directions with Apache Paimon 2 (Java, ``tests/interop/java2``): tables Java writes read
exactly here, tables written here read exactly in Java, and each side's commit on top of the
other's reads exactly on both."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from tests.interop.helpers import json_rows, rows
from tests.interop.java2 import Java2

pytestmark = pytest.mark.java2

COLS = ["k", "v", "n", "dt"]
FIELDS = [("k", "INT"), ("v", "STRING"), ("n", "BIGINT"), ("dt", "STRING")]
# name -> (primary keys, partition keys, options)
LAYOUTS: dict[str, tuple[list[str], list[str], dict[str, str]]] = {
    "append": ([], [], {}),
    "append-partitioned": ([], ["dt"], {}),
    "pk": (["k"], [], {"bucket": "2"}),
    "pk-partitioned": (["k", "dt"], ["dt"], {"bucket": "2"}),
    "pk-dynamic-bucket": (["k", "dt"], ["dt"], {}),
}
FIRST = [
    {"k": 1, "v": "a", "n": 10, "dt": "d1"},
    {"k": 2, "v": None, "n": 20, "dt": "d1"},
    {"k": 3, "v": "c", "n": None, "dt": "d2"},
    {"k": 4, "v": "d", "n": 40, "dt": "d2"},
]
SECOND = [
    {"k": 1, "v": "a2", "n": 11, "dt": "d1"},
    {"k": 5, "v": "e", "n": 50, "dt": "d2"},
    {"k": 3, "v": "c2", "n": 31, "dt": "d2"},
]
THIRD = [
    {"k": 2, "v": "b3", "n": 22, "dt": "d1"},
    {"k": 6, "v": "f", "n": 60, "dt": "d3"},
]


def _schema(primary_keys: list[str]) -> pa.Schema:
    types = {"k": pa.int32(), "v": pa.string(), "n": pa.int64(), "dt": pa.string()}
    return pa.schema([pa.field(c, types[c], nullable=c not in primary_keys) for c in COLS])


def _arrow(batch: list[dict[str, Any]], primary_keys: list[str]) -> pa.Table:
    return pa.Table.from_pylist(batch, schema=_schema(primary_keys))


def _expected(primary_keys: list[str], *batches: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """What a read of ``batches`` written in order gives: all rows, or the last per key."""
    if not primary_keys:
        return json_rows([r for b in batches for r in b], COLS)
    latest: dict[tuple[Any, ...], dict[str, Any]] = {}
    for batch in batches:
        for r in batch:
            latest[tuple(r[k] for k in primary_keys)] = r
    return json_rows(list(latest.values()), COLS)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_we_read_java2_tables_and_java2_reads_our_commit_on_top(
    java2: Java2, warehouse: str, layout: str
) -> None:
    primary_keys, partition_keys, options = LAYOUTS[layout]
    create = {
        "op": "create", "table": "db.t", "fields": [list(f) for f in FIELDS],
        "primaryKeys": primary_keys, "partitionKeys": partition_keys, "options": options,
    }  # fmt: skip
    java2.run(
        create,
        {"op": "write", "table": "db.t", "rows": FIRST},
        {"op": "write", "table": "db.t", "rows": SECOND},
    )
    table = FileSystemCatalog(warehouse).get_table("db.t")
    assert rows(table.to_arrow(), COLS) == _expected(primary_keys, FIRST, SECOND)
    first = table.snapshot_manager.snapshot(1)
    assert rows(table.to_arrow(snapshot=first), COLS) == _expected(primary_keys, FIRST)

    assert table.write_arrow(_arrow(THIRD, primary_keys)) == 3
    expected = _expected(primary_keys, FIRST, SECOND, THIRD)
    assert json_rows(java2.read("db.t"), COLS) == expected
    assert rows(table.to_arrow(), COLS) == expected
    assert [s["id"] for s in java2.snapshots("db.t")] == [1, 2, 3]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_java2_reads_our_tables_and_we_read_its_commit_on_top(
    java2: Java2, warehouse: str, layout: str
) -> None:
    primary_keys, partition_keys, options = LAYOUTS[layout]
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    table = catalog.create_table(
        "db.t",
        _schema(primary_keys),
        primary_keys=primary_keys,
        partition_keys=partition_keys,
        options=options,
    )
    table.write_arrow(_arrow(FIRST, primary_keys))
    table.write_arrow(_arrow(SECOND, primary_keys))
    latest, at_first, written = java2.run(
        {"op": "read", "table": "db.t"},
        {"op": "read", "table": "db.t", "options": {"scan.snapshot-id": "1"}},
        {"op": "write", "table": "db.t", "rows": THIRD},
    )
    assert json_rows(latest["rows"], COLS) == _expected(primary_keys, FIRST, SECOND)
    assert json_rows(at_first["rows"], COLS) == _expected(primary_keys, FIRST)
    assert written == {"rows": 2, "latestSnapshot": 3}

    expected = _expected(primary_keys, FIRST, SECOND, THIRD)
    assert rows(table.to_arrow(), COLS) == expected
    assert json_rows(java2.read("db.t"), COLS) == expected


def test_java2_deletes_and_row_kinds_read_here(java2: Java2, warehouse: str) -> None:
    """Java's ``-D`` and ``-U``/``+U`` rows on a partitioned primary-key table: the deleted
    keys are gone here, and our delete on top is gone in Java."""
    java2.create_table(
        "db.t", FIELDS, primary_keys=["k", "dt"], partition_keys=["dt"], options={"bucket": "2"}
    )
    java2.write("db.t", FIRST)
    java2.write(
        "db.t",
        [
            {"k": 1, "dt": "d1", "_kind": "-D"},
            {"k": 3, "v": "c", "n": None, "dt": "d2", "_kind": "-U"},
            {"k": 3, "v": "c9", "n": 9, "dt": "d2", "_kind": "+U"},
        ],
    )
    table = FileSystemCatalog(warehouse).get_table("db.t")
    assert rows(table.to_arrow(), COLS) == [
        (2, None, 20, "d1"),
        (3, "c9", 9, "d2"),
        (4, "d", 40, "d2"),
    ]
    table.write_arrow(_arrow([FIRST[3]], ["k", "dt"]), row_kinds=pa.array([3], pa.int8()))
    assert json_rows(java2.read("db.t"), COLS) == [(2, None, 20, "d1"), (3, "c9", 9, "d2")]

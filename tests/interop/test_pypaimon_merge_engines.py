"""Merge engines with pypaimon 2.1, both directions: it writes (merging repeated keys in its
buffer) and we read; we write and it reads. pypaimon's aggregation cannot retract and its
partial-update has no sequence groups, ignore-delete or remove-record options, so the commits
here only insert (Java covers the rest: test_java_merge_engines)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from tests.interop.helpers import pypaimon_read, pypaimon_write, rows

SCHEMA = pa.schema(
    [pa.field("k", pa.int32(), False), ("s", pa.int32()), ("n", pa.int64()), ("v", pa.string())]
)
COMMITS = [
    {"k": [1, 1, 2], "s": [2, 1, None], "n": [1, 2, 3], "v": ["a", "b", None]},
    {"k": [1, 3], "s": [None, 4], "n": [10, None], "v": [None, "z"]},
    {"k": [2, 1], "s": [5, 3], "n": [None, 7], "v": ["c", "d"]},
]
ENGINES: dict[str, dict[str, str]] = {
    "deduplicate-sequence-field": {"sequence.field": "s"},
    "partial-update": {"merge-engine": "partial-update"},
    "aggregation": {
        "merge-engine": "aggregation",
        "fields.n.aggregate-function": "sum",
        "fields.v.aggregate-function": "listagg",
        "fields.s.aggregate-function": "max",
    },
}


def _batches() -> list[pa.Table]:
    return [pa.table(c, schema=SCHEMA) for c in COMMITS]


@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_merge_engines_round_trip_with_pypaimon(warehouse: str, engine: str) -> None:
    options: dict[str, Any] = {"bucket": "1", **ENGINES[engine]}
    for i, batch in enumerate(_batches()):
        create = {"primary_keys": ["k"], "options": options} if i == 0 else None
        pypaimon_write(warehouse, "db.theirs", batch, create=create)
    catalog = FileSystemCatalog(warehouse)
    ours = catalog.create_table("db.ours", SCHEMA, primary_keys=["k"], options=options)
    for batch in _batches():
        ours.write_arrow(batch)
    truth = rows(pypaimon_read(warehouse, "db.theirs"))
    assert rows(catalog.get_table("db.theirs").to_arrow()) == truth
    assert rows(pypaimon_read(warehouse, "db.ours")) == truth
    assert rows(ours.to_arrow()) == truth


def test_nested_aggregates_round_trip_with_pypaimon(warehouse: str) -> None:
    """collect (plain and distinct) and nested_update with a nested key, which the Java oracle
    cannot write or print (ARRAY/ROW columns); pypaimon ports the same Java functions."""
    row = pa.struct([("id", pa.int32()), ("name", pa.string())])
    schema = pa.schema([pa.field("k", pa.int32(), False), ("c", pa.list_(pa.int32())),
                        ("cd", pa.list_(pa.int32())), ("nu", pa.list_(row))])  # fmt: skip
    options = {
        "bucket": "1",
        "merge-engine": "aggregation",
        "fields.c.aggregate-function": "collect",
        "fields.cd.aggregate-function": "collect",
        "fields.cd.distinct": "true",
        "fields.nu.aggregate-function": "nested_update",
        "fields.nu.nested-key": "id",
    }
    batches = [
        pa.table({"k": [1, 1, 2], "c": [[1, 2], [2], None], "cd": [[3, 1], [1, 2], [5]],
                  "nu": [[{"id": 1, "name": "x"}], [{"id": 2, "name": "y"},
                         {"id": 1, "name": "x2"}], None]}, schema=schema),
        pa.table({"k": [1], "c": [[9]], "cd": [[2, 7]], "nu": [[{"id": 3, "name": "z"}]]},
                 schema=schema),
    ]  # fmt: skip
    pypaimon_write(
        warehouse, "db.theirs", batches[0], create={"primary_keys": ["k"], "options": options}
    )
    pypaimon_write(warehouse, "db.theirs", batches[1])
    catalog = FileSystemCatalog(warehouse)
    ours = catalog.create_table("db.ours", schema, primary_keys=["k"], options=options)
    for batch in batches:
        ours.write_arrow(batch)
    expected = [
        {"k": 1, "c": [1, 2, 2, 9], "cd": [3, 1, 2, 7],
         "nu": [{"id": 1, "name": "x2"}, {"id": 2, "name": "y"}, {"id": 3, "name": "z"}]},
        {"k": 2, "c": None, "cd": [5], "nu": None},
    ]  # fmt: skip
    assert pypaimon_read(warehouse, "db.theirs").to_pylist() == expected
    assert catalog.get_table("db.theirs").to_arrow().to_pylist() == expected
    assert pypaimon_read(warehouse, "db.ours").to_pylist() == expected
    assert ours.to_arrow().to_pylist() == expected

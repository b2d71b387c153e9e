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

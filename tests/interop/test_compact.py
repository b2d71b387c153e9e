"""Compacted tables read the same through Apache Paimon 0.9 (Java, paimon-oracle) and
pypaimon: full compaction of deduplicate and aggregation tables with deletes, minor
compaction, and append compaction."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.format.snapshot import CommitKind
from paimon_core.operations.compact import compact_table
from tests.interop.helpers import json_rows, pypaimon_read, rows

SCHEMA = pa.schema([("k", pa.int64()), ("v", pa.int64()), ("dt", pa.string())])
COLS = ["k", "v", "dt"]


def _batch(ks: list[int], v: int, dt: str = "a") -> pa.Table:
    return pa.table({"k": ks, "v": [v] * len(ks), "dt": [dt] * len(ks)}, schema=SCHEMA)


@pytest.mark.parametrize(
    ("primary_keys", "options", "full"),
    [
        (["k", "dt"], {"bucket": "2"}, True),
        (["k", "dt"], {"bucket": "1", "merge-engine": "aggregation",
                       "fields.v.aggregate-function": "sum"}, True),
        (["k", "dt"], {"bucket": "1", "num-sorted-run.compaction-trigger": "2",
                       "write-only": "true"}, False),
        ([], {}, True),
    ],
    ids=["deduplicate", "aggregation", "minor", "append"],
)  # fmt: skip
def test_java_and_pypaimon_read_compacted_tables(
    warehouse: str,
    oracle: Callable[..., Any],
    primary_keys: list[str],
    options: dict[str, str],
    full: bool,
) -> None:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    table = catalog.create_table(
        "db.t", SCHEMA, partition_keys=["dt"], primary_keys=primary_keys, options=options
    )
    table.write_arrow(_batch([1, 2, 3], 1))
    table.write_arrow(_batch([2, 3, 4], 2))
    table.write_arrow(_batch([7], 5, dt="b"))
    if primary_keys:
        table.write_arrow(_batch([3], 9), row_kinds=pa.array([3], pa.int8()))
    else:
        table.write_arrow(_batch([8], 9))
    expected = rows(table.to_arrow(), COLS)
    snapshot_id = compact_table(table, full=full)
    assert snapshot_id is not None
    assert table.snapshot_manager.snapshot(snapshot_id).commit_kind == CommitKind.COMPACT
    assert rows(table.to_arrow(), COLS) == expected
    assert json_rows(oracle("read", warehouse, "db.t"), COLS) == expected
    assert rows(pypaimon_read(warehouse, "db.t"), COLS) == expected

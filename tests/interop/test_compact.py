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
from procedures import call_procedure
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


def test_java_reads_a_table_after_compact_manifest(
    warehouse: str, oracle: Callable[..., Any]
) -> None:
    """Many commits, a compaction (DELETE entries) and a delete, then ``CALL
    sys.compact_manifest``: Java 0.9 reads the merged snapshot and the older ones alike,
    and Java's own commit after it builds on the merged manifests."""
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    table = catalog.create_table(
        "db.t", SCHEMA, partition_keys=["dt"], primary_keys=["k", "dt"], options={"bucket": "2"}
    )
    for i in range(8):
        table.write_arrow(_batch([i, i + 1], i, dt="ab"[i % 2]))
    compact_table(table, full=True)
    table.write_arrow(_batch([3], 0), row_kinds=pa.array([3], pa.int8()))
    old = table.snapshot_manager.latest_snapshot()
    expected = rows(table.to_arrow(), COLS)
    assert call_procedure(
        "compact_manifest", {"table": "db.t"}, catalog=catalog, current_database="db"
    ).rows == [(True,)]
    latest = table.snapshot_manager.latest_snapshot()
    assert latest.snapshot_id == old.snapshot_id + 1
    metas = table.manifest_list.read(latest.base_manifest_list)
    assert len(metas) == 1 and metas[0].num_deleted_files == 0
    assert json_rows(oracle("read", warehouse, "db.t"), COLS) == expected
    assert json_rows(oracle("read", warehouse, "db.t", "--snapshot", old.snapshot_id), COLS) == (
        expected
    )
    assert json_rows(oracle("read", warehouse, "db.t", "--snapshot", 3), COLS) == rows(
        table.to_arrow(snapshot=table.snapshot_manager.snapshot(3)), COLS
    )
    kinds = [s["commitKind"] for s in oracle("snapshots", warehouse, "db.t")]
    assert kinds[-1] == "COMPACT" and len(kinds) == latest.snapshot_id
    oracle("write", warehouse, "db.t", "--json-rows", '[{"k": 50, "v": 5, "dt": "a"}]')
    assert json_rows(oracle("read", warehouse, "db.t"), COLS) == sorted([*expected, (50, 5, "a")])

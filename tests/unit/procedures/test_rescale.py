"""CALL sys.rescale (Paimon-Spark 2.0): partitions rewritten with another bucket number in one
OVERWRITE; a concurrent commit to them fails it; Java reads the result."""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import CommitConflict
from paimon_core.format.schema import SetOption
from paimon_core.format.snapshot import CommitKind
from paimon_core.operations.rescale import rescale
from paimon_core.table import FileStoreTable
from procedures import ProcedureError
from tests.unit.procedures.helpers import SCHEMA, call, fingerprint, new_catalog, new_table

PK_SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("name", pa.string()),
        pa.field("dt", pa.string(), nullable=False),
    ]
)


def _rows(rows: list[dict[str, Any]]) -> Counter:
    return Counter((r["id"], r["name"], r["dt"]) for r in rows)


def _buckets(table: FileStoreTable) -> dict[str, set[tuple[int, int]]]:
    """Partition -> {(bucket, total buckets)} of the live files."""
    snapshot = table.snapshot_manager.latest_snapshot()
    out: dict[str, set[tuple[int, int]]] = {}
    scan = table.new_scan()
    for e in scan.read_entries(snapshot):
        day = scan.partition_values(e.partition)[0]
        out.setdefault(day, set()).add((e.bucket, e.total_buckets))
    return out


def _pk_table(catalog: FileSystemCatalog, options: dict[str, str] | None = None) -> FileStoreTable:
    table = catalog.create_table(
        "db.p",
        PK_SCHEMA,
        partition_keys=["dt"],
        primary_keys=["id", "dt"],
        options={"bucket": "2", **(options or {})},
    )
    for i in range(3):
        ids = list(range(i * 10, i * 10 + 20))
        days = ["2024-01-01" if k % 2 else "2024-01-02" for k in ids]
        table.write_arrow(pa.table({"id": ids, "name": [f"v{i}"] * 20, "dt": days}, PK_SCHEMA))
    return catalog.get_table("db.p")


@pytest.mark.parametrize("dv", [False, True])
def test_rescale_a_partition_of_a_primary_key_table(warehouse: str, oracle: Any, dv: bool) -> None:
    catalog = new_catalog(warehouse)
    table = _pk_table(catalog, {"deletion-vectors.enabled": "true"} if dv else None)
    before = _rows(table.to_arrow().to_pylist())
    assert _buckets(table)["2024-01-01"] == {(0, 2), (1, 2)}
    result = call(catalog, "rescale", table="db.p", bucket_num=4, partitions="dt=2024-01-01")
    assert [c.name for c in result.columns] == ["result"] and result.rows == [(True,)]
    latest = table.snapshot_manager.latest_snapshot()
    assert CommitKind.OVERWRITE in {
        table.snapshot_manager.snapshot(i).commit_kind for i in range(4, latest.snapshot_id + 1)
    }
    layout = _buckets(table)
    assert {total for _, total in layout["2024-01-01"]} == {4}
    assert len(layout["2024-01-01"]) > 2
    assert layout["2024-01-02"] == {(0, 2), (1, 2)}  # not selected: untouched
    assert _rows(table.to_arrow().to_pylist()) == before
    assert _rows(oracle("read", warehouse, "db.p")) == before
    # Paimon's workflow: the table's bucket option follows, then writes to it agree.
    table.schema_manager.commit_changes(SetOption("bucket", "4"))
    fresh = catalog.get_table("db.p")
    fresh.write_arrow(pa.table({"id": [1], "name": ["new"], "dt": ["2024-01-01"]}, PK_SCHEMA))
    rows = _rows(fresh.to_arrow().to_pylist())
    assert rows[(1, "new", "2024-01-01")] == 1 and rows[(1, "v0", "2024-01-01")] == 0


def test_rescale_where_and_default_bucket_number(warehouse: str, oracle: Any) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=4)  # unaware-bucket append, several files a partition
    before = _rows(table.to_arrow().to_pylist())
    files = len(table.new_scan().read_entries(table.latest_snapshot()))
    call(catalog, "rescale", table="db.t", where="dt = '2024-01-01'")
    assert len(table.new_scan().read_entries(table.latest_snapshot())) == files - 1
    assert _rows(table.to_arrow().to_pylist()) == before
    assert _rows(oracle("read", warehouse, "db.t")) == before
    unpartitioned = catalog.create_table(
        "db.u", SCHEMA, options={"bucket": "3", "bucket-key": "id"}
    )
    for i in range(2):
        unpartitioned.write_arrow(pa.table({"id": [i, i + 5], "name": ["a", "b"], "dt": ["x"] * 2}))
    call(catalog, "rescale", "db.u", 1)
    assert {
        (e.bucket, e.total_buckets)
        for e in unpartitioned.new_scan().read_entries(unpartitioned.latest_snapshot())
    } == {(0, 1)}
    assert sorted(unpartitioned.to_arrow().column("id").to_pylist()) == [0, 1, 5, 6]


def test_a_concurrent_commit_fails_the_rescale(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = _pk_table(catalog)
    other = catalog.get_table("db.p")

    def racing_runner(func: Any, tasks: list[Any]) -> list[Any]:
        results = [func(t) for t in tasks]
        other.write_arrow(
            pa.table({"id": [999], "name": ["late"], "dt": ["2024-01-01"]}, PK_SCHEMA)
        )
        return results

    with pytest.raises(CommitConflict, match="found a APPEND snapshot"):
        rescale(table, bucket_num=4, partitions=[{"dt": "2024-01-01"}], runner=racing_runner)
    rows = _rows(table.to_arrow().to_pylist())
    assert rows[(999, "late", "2024-01-01")] == 1  # the other commit's row is not lost
    assert _buckets(table)["2024-01-01"] == {(0, 2), (1, 2)}
    # Nothing the rescale wrote is left behind: every data file is one a snapshot names.
    scan = table.new_scan()
    named = {
        e.file.file_name
        for s in table.snapshot_manager.snapshots()
        for e in scan.read_all_entries([s.base_manifest_list, s.delta_manifest_list])
    }
    on_disk = {
        f for d, _, fs in os.walk(table.path) if "bucket-" in d for f in fs if f.startswith("data-")
    }
    assert on_disk == named


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ({"partitions": "dt=2024-01-01", "where": "dt = 'x'"}, "cannot be used together"),
        ({"where": "id > 3"}, "'id' is not one of ['dt']"),
        ({"partitions": "name=x"}, "'name' is not one of ['dt']"),
        ({"bucket_num": 0}, "Invalid 'bucket' = '0'"),
        ({"partitions": "dt"}, "Invalid key-value string 'dt'"),
    ],
)
def test_rescale_refuses(warehouse: str, args: dict, needle: str) -> None:
    catalog = new_catalog(warehouse)
    table = _pk_table(catalog)
    before = fingerprint(table.path)
    with pytest.raises(ProcedureError) as err:
        call(catalog, "rescale", table="db.p", **args)
    assert needle in str(err.value) and "\n" not in str(err.value)
    assert fingerprint(table.path) == before


def test_rescale_of_a_table_without_snapshot(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    new_table(catalog, commits=0)
    with pytest.raises(ProcedureError, match="has no snapshot, no need to rescale"):
        call(catalog, "rescale", "db.t", 2)

"""Deletion vectors with Apache Paimon's Java implementation (0.9) through paimon-oracle.

Java writes primary-key tables with ``deletion-vectors.enabled``: every write is compacted
(lookup) into levels > 0, and the rows it replaces or deletes in older files are marked in
deletion vectors. We read every snapshot and compare with Java's read of it. The other way,
we delete rows of append tables with deletion vectors and Java reads what is left.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.format.snapshot import CommitKind
from paimon_core.table import FileStoreTable
from tests.interop.helpers import json_rows, rows
from tests.unit.paimon_core.operations.test_deletion_vectors import delete_keys

pytestmark = pytest.mark.oracle

Oracle = Callable[..., Any]
DV = "deletion-vectors.enabled=true"


def _table(warehouse: str, name: str) -> FileStoreTable:
    return FileSystemCatalog(warehouse).get_table(f"db.{name}")


def _assert_every_snapshot_reads_as_java(
    oracle: Oracle, warehouse: str, name: str, columns: list[str]
) -> FileStoreTable:
    table = _table(warehouse, name)
    ids = [s["id"] for s in oracle("snapshots", warehouse, f"db.{name}")]
    assert len(ids) > 2
    for sid in ids:
        snapshot = table.snapshot_manager.snapshot(sid)
        ours = table.with_schema_of(snapshot).to_arrow(snapshot=snapshot)
        theirs = oracle("read", warehouse, f"db.{name}", "--snapshot", sid)
        assert rows(ours, columns) == json_rows(theirs, columns), f"snapshot {sid}"
    return table


def test_we_read_javas_primary_key_dv_table_at_every_snapshot(
    warehouse: str, oracle: Oracle
) -> None:
    oracle("create-table", warehouse, "db.pk", "--schema", "k INT, v STRING",
           "--primary-key", "k", "--option", "bucket=1", "--option", DV)  # fmt: skip
    base = [{"k": k, "v": f"a{k}"} for k in range(20)]
    oracle("write", warehouse, "db.pk", "--json-rows", _j(base))
    oracle(
        "write",
        warehouse,
        "db.pk",
        "--json-rows",
        _j([{"k": k, "v": f"b{k}"} for k in (1, 5, 7, 30)]),
    )
    oracle(
        "write", warehouse, "db.pk", "--delete", "--json-rows", _j([{"k": 2}, {"k": 7}, {"k": 30}])
    )
    oracle(
        "write", warehouse, "db.pk", "--json-rows", _j([{"k": 5, "v": "c5"}, {"k": 2, "v": "c2"}])
    )
    table = _assert_every_snapshot_reads_as_java(oracle, warehouse, "pk", ["k", "v"])
    splits = table.new_scan().plan()
    assert any(s.deletion_files for s in splits), "Java wrote no deletion vector"
    assert all(f.level > 0 for s in splits for f in s.files)
    got = table.new_read().to_arrow(splits, ["v"])
    assert sorted(got.column("v").to_pylist()) == sorted(
        r["v"] for r in oracle("read", warehouse, "db.pk")
    )


def test_we_read_javas_partitioned_two_bucket_dv_table(warehouse: str, oracle: Oracle) -> None:
    oracle("create-table", warehouse, "db.pp", "--schema", "k INT, v STRING, dt STRING",
           "--primary-key", "k,dt", "--partition", "dt", "--option", "bucket=2",
           "--option", DV)  # fmt: skip
    first = [{"k": k, "v": f"a{k}", "dt": d} for k in range(12) for d in ("x", "y")]
    oracle("write", warehouse, "db.pp", "--json-rows", _j(first))
    again = [{"k": k, "v": f"b{k}", "dt": "x"} for k in range(0, 12, 3)]
    oracle("write", warehouse, "db.pp", "--json-rows", _j(again))
    gone = [{"k": k, "dt": d} for k in (4, 5) for d in ("x", "y")]
    oracle("write", warehouse, "db.pp", "--delete", "--json-rows", _j(gone))
    table = _assert_every_snapshot_reads_as_java(oracle, warehouse, "pp", ["k", "v", "dt"])
    dv_buckets = {
        (s.partition_values, s.bucket) for s in table.new_scan().plan() if s.deletion_files
    }
    assert len(dv_buckets) >= 2


def test_java_reads_our_deletion_vectors_on_append_tables(tmp_path: Path, oracle: Oracle) -> None:
    warehouse = str(tmp_path)
    oracle("create-table", warehouse, "db.app", "--schema", "k INT, v STRING, dt STRING",
           "--partition", "dt", "--option", DV)  # fmt: skip
    oracle("create-table", warehouse, "db.bkt", "--schema", "k INT, v STRING",
           "--option", "bucket=2", "--option", "bucket-key=k", "--option", DV)  # fmt: skip
    rows_app = [{"k": k, "v": f"v{k}", "dt": "a" if k % 2 else "b"} for k in range(10)]
    rows_bkt = [{"k": k, "v": f"v{k}"} for k in range(10)]
    for name, data in (("app", rows_app), ("bkt", rows_bkt)):
        oracle("write", warehouse, f"db.{name}", "--json-rows", _j(data[:6]))
        oracle("write", warehouse, f"db.{name}", "--json-rows", _j(data[6:]))
        table = _table(warehouse, name)
        assert delete_keys(table, {1, 2, 7}) == 3
        assert delete_keys(table, {3, 8}) == 4
        assert table.snapshot_manager.snapshot(4).commit_kind == CommitKind.OVERWRITE
        columns = list(data[0])
        for sid, left in ((2, set(range(10))), (3, {0, 3, 4, 5, 6, 8, 9}), (4, {0, 4, 5, 6, 9})):
            expected = [tuple(r[c] for c in columns) for r in data if r["k"] in left]
            theirs = oracle("read", warehouse, f"db.{name}", "--snapshot", sid)
            assert json_rows(theirs, columns) == sorted(expected), f"{name} snapshot {sid}"
            snapshot = table.snapshot_manager.snapshot(sid)
            assert rows(table.to_arrow(snapshot=snapshot), columns) == sorted(expected)


def _j(data: list[dict[str, Any]]) -> str:
    import json

    return json.dumps(data)

"""Branches with Apache Paimon's Java implementation (0.9, paimon-oracle) and pypaimon 2.1.

The oracle has no branch command, but Paimon 0.9's catalog opens `db.t$branch_<name>`: Java
reads and writes our branches, its branch snapshots are read by us, and it reads the table
after our fast-forward. pypaimon's ``FileSystemBranchManager`` (a port of Java's) creates
branches byte for byte as we do.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.lifecycle import branch_management as bm
from paimon_core.lifecycle import tag_management as tm
from tests.interop.helpers import json_rows, pypaimon_read, rows
from tests.unit.paimon_core.helpers import file_state

pytestmark = pytest.mark.oracle

SCHEMA = pa.schema(
    [
        pa.field("k", pa.int32(), nullable=False),
        ("v", pa.string()),
        pa.field("dt", pa.string(), nullable=False),
    ]
)
COLS = ["k", "v", "dt"]


def _batch(ks: list[int], dt: str = "a") -> pa.Table:
    return pa.table({"k": ks, "v": [f"v{k}" for k in ks], "dt": [dt] * len(ks)}, schema=SCHEMA)


def _table(warehouse: str, **kw: Any) -> Any:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    return catalog.create_table("db.t", SCHEMA, partition_keys=["dt"], **kw)


@pytest.mark.parametrize("primary_key", [False, True])
def test_java_reads_and_writes_our_branch_and_reads_main_after_fast_forward(
    warehouse: str, oracle: Callable[..., Any], primary_key: bool
) -> None:
    keys = {"primary_keys": ["k", "dt"], "options": {"bucket": "2"}} if primary_key else {}
    table = _table(warehouse, **keys)
    table.write_arrow(_batch([1, 2]))
    tm.create_tag(table, "t1")
    table.write_arrow(_batch([3], "b"))
    bm.create_branch(table, "b1", "t1")
    branch = FileSystemCatalog(warehouse).get_table("db.t$branch_b1")
    branch.write_arrow(_batch([4], "c"))
    expected = rows(pa.concat_tables([_batch([1, 2]), _batch([4], "c")]))
    assert json_rows(oracle("read", warehouse, "db.t$branch_b1"), COLS) == expected
    assert [s["id"] for s in oracle("snapshots", warehouse, "db.t$branch_b1")] == [1, 2]
    assert oracle("tags", warehouse, "db.t$branch_b1") == {"t1": 1}
    main = rows(pa.concat_tables([_batch([1, 2]), _batch([3], "b")]))
    assert json_rows(oracle("read", warehouse, "db.t"), COLS) == main

    java_rows = [{"k": 5, "v": "java", "dt": "c"}]
    oracle("write", warehouse, "db.t$branch_b1", "--json-rows", json.dumps(java_rows))
    branch = FileSystemCatalog(warehouse).get_table("db.t$branch_b1")
    assert branch.snapshot_manager.latest_snapshot_id() == 3
    expected = sorted([*expected, (5, "java", "c")])
    assert rows(branch.to_arrow(), COLS) == expected
    assert json_rows(oracle("read", warehouse, "db.t"), COLS) == main

    bm.fast_forward(FileSystemCatalog(warehouse).get_table("db.t"), "b1")
    assert json_rows(oracle("read", warehouse, "db.t"), COLS) == expected
    assert [s["id"] for s in oracle("snapshots", warehouse, "db.t")] == [1, 2, 3]
    assert oracle("tags", warehouse, "db.t") == {"t1": 1}
    assert json_rows(oracle("read", warehouse, "db.t", "--tag", "t1"), COLS) == rows(_batch([1, 2]))
    oracle("write", warehouse, "db.t", "--json-rows", json.dumps([{"k": 6, "v": "x", "dt": "a"}]))
    assert rows(FileSystemCatalog(warehouse).get_table("db.t").to_arrow(), ["k"]) == sorted(
        [(k,) for k, _, _ in expected] + [(6,)]
    )


def test_java_expiry_of_main_and_our_branch_of_an_expired_tag(
    warehouse: str, oracle: Callable[..., Any]
) -> None:
    """A branch made from a tag whose snapshot Java expired reads what the tag holds."""
    table = _table(warehouse)
    table.write_arrow(_batch([1]))
    tm.create_tag(table, "t1")
    for k in (2, 3):
        table.write_arrow(_batch([k]), overwrite=True)
    oracle("expire", warehouse, "db.t", "--retain-max", 1)
    table = FileSystemCatalog(warehouse).get_table("db.t")
    assert table.snapshot_manager.list_snapshot_ids() == [3]
    bm.create_branch(table, "old", "t1")
    assert json_rows(oracle("read", warehouse, "db.t$branch_old"), COLS) == rows(_batch([1]))
    assert rows(FileSystemCatalog(warehouse).get_table("db.t$branch_old").to_arrow(), COLS) == (
        rows(_batch([1]))
    )


def test_our_branches_are_the_files_pypaimon_makes(warehouse: str) -> None:
    from pypaimon import CatalogFactory

    table = _table(warehouse)
    table.write_arrow(_batch([1, 2]))
    tm.create_tag(table, "t1")
    table.write_arrow(_batch([3]))
    twin = f"{warehouse}-pypaimon"
    shutil.copytree(warehouse, twin)
    bm.create_branch(table, "b1", "t1")
    bm.create_branch(table, "empty")
    theirs = CatalogFactory.create({"warehouse": twin}).get_table("db.t")
    theirs.branch_manager().create_branch("b1", tag_name="t1")
    theirs.branch_manager().create_branch("empty")
    ours = file_state(f"{table.path}/branch")
    assert ours == file_state(f"{twin}/db.db/t/branch")
    assert sorted(ours) == [
        "branch-b1/schema/schema-0",
        "branch-b1/snapshot/snapshot-1",
        "branch-b1/tag/tag-t1",
        "branch-empty/schema/schema-0",
    ]
    # Each reads the other's branches.
    assert rows(pypaimon_read(warehouse, "db.t$branch_b1"), COLS) == rows(_batch([1, 2]))
    bm.rename_branch(FileSystemCatalog(twin).get_table("db.t"), "b1", "b2")
    got = FileSystemCatalog(twin).get_table("db.t$branch_b2").to_arrow()
    assert rows(got, COLS) == rows(_batch([1, 2]))
    assert not os.path.exists(f"{twin}/db.db/t/branch/branch-b1")

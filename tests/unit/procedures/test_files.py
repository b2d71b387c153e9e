"""CALL sys.purge_files, remove_unexisting_files, rewrite_file_index and copy (Paimon-Spark 2.0)."""

from __future__ import annotations

import dataclasses
import os
import shutil
from typing import Any

import pyarrow as pa
import pytest

from paimon_core.format.commit_message import CommitMessage
from paimon_core.format.consumer import Consumer, ConsumerManager
from paimon_core.format.snapshot import ChangelogManager, CommitKind
from procedures import ProcedureError
from tests.unit.procedures.helpers import (
    SCHEMA,
    call,
    new_catalog,
    new_table,
    snapshot_ids,
    tag_names,
)


def _files(root: str) -> list[str]:
    return sorted(
        os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs
    )


def test_purge_files_deletes_all_data_and_history(warehouse: str, oracle: Any) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=3)
    call(catalog, "create_tag", "db.t", "keep", 1)
    ConsumerManager(table.file_io, table.path).reset_consumer("reader", Consumer(1))
    changelogs = ChangelogManager(table.file_io, table.path)
    assert changelogs.commit(table.snapshot_manager.snapshot(1))
    branch = os.path.join(table.path, "branch", "branch-b")
    shutil.copytree(os.path.join(table.path, "schema"), os.path.join(branch, "schema"))

    result = call(catalog, "purge_files", table="db.t")
    assert [c.name for c in result.columns] == ["result"] and result.rows == [("Success",)]
    assert snapshot_ids(table) == [4]
    latest = table.snapshot_manager.latest_snapshot()
    assert latest.commit_kind == CommitKind.OVERWRITE and latest.total_record_count == 0
    assert tag_names(table) == [] and ConsumerManager(table.file_io, table.path).list_ids() == []
    left = _files(table.path)
    assert not [f for f in left if f.startswith(("branch", "changelog", "tag", "consumer"))]
    assert not [f for f in left if "/bucket-" in f], left  # no data file survives
    assert [f for f in left if f.startswith("schema/")] == ["schema/schema-0"]
    assert table.to_arrow().num_rows == 0
    assert oracle("read", warehouse, "db.t") == []
    table.write_arrow(pa.table({"id": [1], "name": ["a"], "dt": ["x"]}, SCHEMA))
    assert oracle("read", warehouse, "db.t") == [{"id": 1, "name": "a", "dt": "x"}]


def test_purge_files_of_an_empty_table_and_bad_names(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=0)
    assert call(catalog, "purge_files", "db.t").rows == [("Success",)]
    assert table.to_arrow().num_rows == 0
    with pytest.raises(ProcedureError, match="does not exist"):
        call(catalog, "purge_files", "db.nope")
    with pytest.raises(ProcedureError, match="Required parameters \\[table\\]"):
        call(catalog, "purge_files")


# ------------------------------------------------------------- remove_unexisting_files


def _lose_partition(table: Any, day: str) -> list[str]:
    directory = os.path.join(table.path, f"dt={day}", "bucket-0")
    lost = sorted(os.path.join(directory, f) for f in os.listdir(directory))
    shutil.rmtree(directory)
    return lost


def _by_id(row: dict[str, Any]) -> int:
    return row["id"]


@pytest.mark.parametrize("pk", [False, True])
def test_remove_unexisting_files(warehouse: str, oracle: Any, pk: bool) -> None:
    catalog = new_catalog(warehouse)
    options = {"bucket": "1"} if pk else {}
    table = new_table(catalog, commits=3, primary_keys=["id", "dt"] if pk else (), options=options)
    lost = _lose_partition(table, "2024-01-02")
    assert lost
    before = _files(table.path)
    dry = call(catalog, "remove_unexisting_files", table="db.t", dry_run=True)
    assert [c.name for c in dry.columns] == ["fileName"] and not dry.columns[0].nullable
    assert dry.rows == [(path,) for path in lost]
    assert _files(table.path) == before  # a dry run changes nothing
    result = call(catalog, "remove_unexisting_files", "db.t")
    assert result.rows == dry.rows
    latest = table.snapshot_manager.latest_snapshot()
    assert latest.snapshot_id == 4 and latest.commit_kind == CommitKind.OVERWRITE
    expected = [{"id": i, "name": n, "dt": "2024-01-01"} for i, n in ((0, "n0"), (2, "n2"))]
    expected += [{"id": 100, "name": None, "dt": "2024-01-01"}]
    expected += [{"id": 102, "name": None, "dt": "2024-01-01"}]
    assert sorted(table.to_arrow().to_pylist(), key=_by_id) == expected
    assert sorted(oracle("read", warehouse, "db.t"), key=_by_id) == expected
    assert call(catalog, "remove_unexisting_files", "db.t").rows == []
    assert snapshot_ids(table)[-1] == 4


def test_remove_unexisting_files_refuses(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=1)
    _lose_partition(table, "2024-01-01")
    before = _files(table.path)
    for args, needle in [
        ({"table": ""}, "Cannot handle an empty tableId"),
        ({"table": "db.t", "parallelism": 0}, "Positive number of partitions"),
        ({"table": "db.*"}, "does not exist"),
        ({"table": "db.t", "dry_run": "yes"}, "Cannot cast STRING to BOOLEAN"),
    ]:
        with pytest.raises(ProcedureError) as err:
            call(catalog, "remove_unexisting_files", **args)
        assert needle in str(err.value) and "\n" not in str(err.value)
    assert _files(table.path) == before


# ------------------------------------------------------------------ rewrite_file_index


def _with_index_extra(table: Any, day: str) -> str:
    """Give the files of partition ``day`` an index extra file, as Java writes beside them
    when the table declared file index columns that it no longer does."""
    files = [
        e.file
        for e in table.new_scan().read_entries(table.latest_snapshot())
        if table.new_scan().partition_values(e.partition)[0] == day
    ]
    index = files[0].file_name + ".index"
    with open(os.path.join(table.path, f"dt={day}", "bucket-0", index), "wb") as f:
        f.write(b"PAIMON-INDEX")
    messages = [
        CommitMessage(
            _partition(table, day),
            0,
            -1,
            compact_before=(files[0],),
            compact_after=(dataclasses.replace(files[0], extra_files=(index,)),),
        )
    ]
    table.new_commit().commit(messages)
    return index


def _partition(table: Any, day: str) -> bytes:
    for e in table.new_scan().read_entries(table.latest_snapshot()):
        if table.new_scan().partition_values(e.partition)[0] == day:
            return e.partition
    raise AssertionError(day)


def test_rewrite_file_index_without_index_columns(warehouse: str, oracle: Any) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=3)
    result = call(catalog, "rewrite_file_index", table="db.t")
    assert [c.name for c in result.columns] == ["written_partitions", "written_indexes"]
    assert result.rows == [(0, 0)] and snapshot_ids(table) == [1, 2, 3]
    index = _with_index_extra(table, "2024-01-01")
    assert call(catalog, "rewrite_file_index", "db.t", "dt = '2024-01-02'").rows == [(0, 0)]
    assert call(catalog, "rewrite_file_index", "db.t", "dt = '2024-01-01'").rows == [(1, 1)]
    latest = table.latest_snapshot()
    assert latest.snapshot_id == 5 and latest.commit_kind == CommitKind.COMPACT
    extras = [e.file.extra_files for e in table.new_scan().read_entries(latest)]
    assert all(index not in x for x in extras)
    assert sorted(r["id"] for r in oracle("read", warehouse, "db.t")) == [0, 1, 2, 100, 101, 102]
    assert call(catalog, "rewrite_file_index", "db.t").rows == [(0, 0)]


def test_rewrite_file_index_refuses_index_columns_and_bad_where(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=1, options={"file-index.bloom-filter.columns": "name"})
    before = _files(table.path)
    for args, needle in [
        ({}, "Building file indexes is not supported"),
        ({"where": "name = 'x'"}, "'name' is not one of ['dt']"),
        ({"where": "dt ~ 1"}, "Unsupported where"),
    ]:
        with pytest.raises(ProcedureError) as err:
            call(catalog, "rewrite_file_index", table="db.t", **args)
        assert needle in str(err.value) and "\n" not in str(err.value)
    assert _files(table.path) == before

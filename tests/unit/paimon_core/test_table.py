"""FileStoreTable: a used table travels by pickle (to Spark executors, worker processes);
option ``branch`` never leads outside the table."""

from __future__ import annotations

import os
import pickle
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import InvalidArgument, InvalidBranchName, InvalidTagName
from paimon_core.format.schema import RemoveOption, SetOption, schema_to_json
from paimon_core.table import FileStoreTable
from tests.unit.paimon_core.helpers import file_state

SCHEMA = pa.schema([pa.field("k", pa.int64(), nullable=False), ("v", pa.string())])


def test_a_used_table_pickles_and_reads_the_same_rows(warehouse: str) -> None:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    table = catalog.create_table("db.t", SCHEMA, primary_keys=["k"], options={"bucket": "2"}).copy(
        {"scan.snapshot-id": "2"}
    )
    table.write_arrow(pa.table({"k": [1, 2], "v": ["a", "b"]}, schema=SCHEMA))
    table.write_arrow(pa.table({"k": [2, 3], "v": ["c", "d"]}, schema=SCHEMA))
    rows = table.to_arrow().sort_by("k").to_pylist()
    assert "snapshot_manager" in vars(table)  # its lock made pickling fail
    copy = pickle.loads(pickle.dumps(table))
    assert "snapshot_manager" not in vars(copy)
    assert copy.dynamic_options == {"scan.snapshot-id": "2"} and copy.schema == table.schema
    assert copy.to_arrow().sort_by("k").to_pylist() == rows
    assert copy.write_arrow(pa.table({"k": [4], "v": ["e"]}, schema=SCHEMA)) == 3
    assert table.latest_snapshot().snapshot_id == 3


def _stored_bad_branch(warehouse: str, value: str) -> FileStoreTable:
    """`db.t` with one row, then a schema holding option `branch` = `value`, written as
    before names were checked (or by hand)."""
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    table = catalog.create_table("db.t", SCHEMA, primary_keys=["k"], options={"bucket": "1"})
    table.write_arrow(pa.table({"k": [1], "v": ["a"]}, schema=SCHEMA))
    bad = replace(table.schema, schema_id=1, options={**table.schema.options, "branch": value})
    table.file_io.write_text(table.schema_manager.schema_path(1), schema_to_json(bad))
    return catalog.get_table("db.t")


def test_a_stored_branch_leaving_the_table_is_refused_and_can_be_removed(tmp_path: Path) -> None:
    warehouse = str(tmp_path / "warehouse")
    table = _stored_bad_branch(warehouse, "../../../../../outside")
    before = file_state(str(tmp_path))
    message = (
        r"^Option 'branch' = '\.\./\.\./\.\./\.\./\.\./outside'( of table db\.t)?: Branch name"
    )
    with pytest.raises(InvalidBranchName, match=r" of table db\.t: "):
        table.branch  # noqa: B018
    for use in (
        lambda: table.branch,
        lambda: table.snapshot_manager,
        lambda: table.to_arrow(),
        lambda: table.write_arrow(pa.table({"k": [2], "v": ["b"]}, schema=SCHEMA)),
        lambda: table.copy({"scan.snapshot-id": "1"}).to_arrow(),
        # Main's schemas take only a change that removes or corrects the option.
        lambda: table.alter_schema_manager.commit_changes(SetOption("x", "y")),
    ):
        with pytest.raises(InvalidBranchName, match=message):
            use()
    assert file_state(str(tmp_path)) == before

    table.alter_schema_manager.commit_changes(RemoveOption("branch"))
    repaired = FileSystemCatalog(warehouse).get_table("db.t")
    assert repaired.branch == "main" and "branch" not in repaired.schema.options
    repaired.write_arrow(pa.table({"k": [2], "v": ["b"]}, schema=SCHEMA))
    assert repaired.to_arrow().sort_by("k").column("k").to_pylist() == [1, 2]
    assert sorted(os.listdir(tmp_path)) == ["warehouse"]


def test_dynamic_options_naming_paths_are_refused(warehouse: str) -> None:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    table = catalog.create_table("db.t", SCHEMA, primary_keys=["k"], options={"bucket": "1"})
    table.write_arrow(pa.table({"k": [1], "v": ["a"]}, schema=SCHEMA))
    for options, error in [
        ({"branch": "../.."}, InvalidBranchName),
        ({"branch": "a\\b"}, InvalidBranchName),
        ({"scan.tag-name": "../tag-x"}, InvalidTagName),
        ({"consumer-id": ".."}, InvalidArgument),
    ]:
        with pytest.raises(error, match=r"^Option '.*' of table db\.t: "):
            table.copy(options)
    with pytest.raises(InvalidBranchName, match="must not contain '/'"):
        table.switch_to_branch("x/../../..")
    # A handle made without `copy` cannot repair through its dynamic option either.
    handle = FileStoreTable(table.file_io, table.path, table.schema, "db.t", {"branch": "a/b"})
    with pytest.raises(InvalidBranchName, match="must not contain '/'"):
        handle.alter_schema_manager  # noqa: B018

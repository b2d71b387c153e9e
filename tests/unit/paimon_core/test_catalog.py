"""The file-system catalog: names that cannot become directories are refused up front."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import (
    DatabaseNotExist,
    InvalidArgument,
    InvalidBranchName,
    InvalidTagName,
    TableAlreadyExist,
    TableNotExist,
)
from paimon_core.format.names import MAX_NAME_BYTES
from tests.unit.paimon_core.helpers import file_state

SCHEMA = pa.schema([("k", pa.int64())])
LONG = "n" * 300
LONG_UTF8 = "é" * (MAX_NAME_BYTES // 2 + 1)  # fewer characters than bytes


@pytest.mark.parametrize("name", [LONG, LONG_UTF8])
def test_too_long_names_are_refused_before_the_file_system(warehouse: str, name: str) -> None:
    catalog = FileSystemCatalog(warehouse)
    with pytest.raises(InvalidArgument, match=r"Database name .* bytes long; at most 200"):
        catalog.create_database(name)
    catalog.create_database("db")
    with pytest.raises(InvalidArgument, match=r"Table name .* bytes long; at most 200"):
        catalog.create_table(f"db.{name}", SCHEMA)
    assert os.listdir(warehouse) == ["db.db"]
    assert os.listdir(os.path.join(warehouse, "db.db")) == []


def test_the_longest_allowed_name_works(warehouse: str) -> None:
    catalog = FileSystemCatalog(warehouse)
    name = "n" * MAX_NAME_BYTES
    catalog.create_database(name)
    table = catalog.create_table(f"{name}.{name}", SCHEMA)
    table.write_arrow(pa.table({"k": [1]}, schema=SCHEMA))
    assert catalog.get_table(f"{name}.{name}").to_arrow().column("k").to_pylist() == [1]


def test_looking_up_a_too_long_name_finds_nothing(warehouse: str) -> None:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    assert not catalog.database_exists(LONG)
    assert not catalog.table_exists(f"db.{LONG}")
    with pytest.raises(TableNotExist):
        catalog.get_table(f"db.{LONG}")
    with pytest.raises(DatabaseNotExist):
        catalog.list_tables(LONG)
    catalog.drop_table(f"db.{LONG}", ignore_if_not_exists=True)


def test_rename_table_moves_its_directory_and_refuses_taken_names(warehouse: str) -> None:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    catalog.create_database("other")
    catalog.create_table("db.a", SCHEMA).write_arrow(pa.table({"k": [1]}, schema=SCHEMA))
    catalog.create_table("db.b", SCHEMA)
    with pytest.raises(TableAlreadyExist, match=r"db\.b already exists"):
        catalog.rename_table("db.a", "db.b")
    with pytest.raises(TableNotExist, match=r"db\.nope does not exist"):
        catalog.rename_table("db.nope", "db.c")
    with pytest.raises(DatabaseNotExist, match="nodb"):
        catalog.rename_table("db.a", "nodb.a")
    with pytest.raises(InvalidArgument, match=r"\$"):
        catalog.rename_table("db.a", "db.a$files")
    catalog.rename_table("db.a", "other.moved")
    assert catalog.list_tables("db") == ["b"]
    assert catalog.get_table("other.moved").to_arrow().column("k").to_pylist() == [1]


def test_names_that_leave_the_warehouse_are_refused_on_every_call(tmp_path: Path) -> None:
    """`<warehouse>/<db>.db/<table>` is built from the names: one holding `/`, `\\`, or being
    `.`/`..`, would reach beside the warehouse (dropping a database deleted `outside.db`)."""
    warehouse = tmp_path / "warehouse"
    catalog = FileSystemCatalog(str(warehouse))
    catalog.create_database("x")
    catalog.create_table("x.t", SCHEMA).write_arrow(pa.table({"k": [1]}, schema=SCHEMA))
    outside = tmp_path / "outside.db"
    (outside / "t").mkdir(parents=True)
    (outside / "t" / "keep").write_text("mine")
    before = file_state(str(tmp_path))
    escaping = "x.db/../../outside"
    calls = [
        lambda: catalog.drop_database(escaping, cascade=True),
        lambda: catalog.database_exists(escaping),
        lambda: catalog.list_tables(escaping),
        lambda: catalog.create_database("../outside"),
        lambda: catalog.create_table("x.a/b", SCHEMA),
        lambda: catalog.create_table("x.a\\b", SCHEMA),
        lambda: catalog.rename_table("x.t", "x.a/b"),
        lambda: catalog.get_table("x.t$branch_a/b"),
        lambda: catalog.table_exists("x.t$branch_a\\b"),
        lambda: catalog.drop_table("x.a/b"),
    ]
    for call in calls:
        with pytest.raises(InvalidArgument, match=r"must not contain '[/\\]'") as info:
            call()
        assert "\n" not in str(info.value)
    assert file_state(str(tmp_path)) == before


def test_create_table_refuses_options_naming_paths_and_creates_nothing(warehouse: str) -> None:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    for options, error in [
        ({"branch": "../../../.."}, InvalidBranchName),
        ({"scan.fallback-branch": "a/b"}, InvalidBranchName),
        ({"consumer-id": "a/b"}, InvalidArgument),
        ({"data-file.prefix": "../../x-"}, InvalidArgument),
        ({"tag.batch.customized-name": "../t"}, InvalidTagName),
    ]:
        key, value = next(iter(options.items()))
        with pytest.raises(error, match=f"^Option '{re.escape(key)}' = '{re.escape(value)}': "):
            catalog.create_table("db.t", SCHEMA, options=options)
    assert os.listdir(os.path.join(warehouse, "db.db")) == []

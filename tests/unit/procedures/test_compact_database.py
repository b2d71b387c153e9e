"""``CALL sys.compact_database``: Paimon Spark 2.0's table selection, result row and
per-table failures, run in process."""

from __future__ import annotations

import logging

import pytest

from paimon_core.format.snapshot import CommitKind
from procedures import ProcedureError
from tests.unit.paimon_core.helpers import foreign_table
from tests.unit.procedures.helpers import SCHEMA, call, fingerprint, new_catalog, new_table

PK = {"primary_keys": ["id", "dt"], "options": {"bucket": "1"}}


@pytest.fixture
def catalog(warehouse: str):
    catalog = new_catalog(warehouse)
    catalog.create_database("db2")
    for identifier in ("db.t", "db.u", "db2.t", "db2.ignore_me"):
        new_table(catalog, identifier, commits=3, **PK)
    return catalog


def _compacted(catalog) -> set[str]:
    out = set()
    for database in catalog.list_databases():
        for name in catalog.list_tables(database):
            latest = catalog.get_table(f"{database}.{name}").latest_snapshot()
            if latest is not None and latest.commit_kind == CommitKind.COMPACT:
                out.add(f"{database}.{name}")
    return out


def _result(catalog, **args) -> str:
    result = call(catalog, "compact_database", **args)
    assert [(c.name, c.type) for c in result.columns] == [("result", "STRING")]
    (row,) = result.rows
    return row[0]


def test_every_table_of_every_database_by_default(catalog) -> None:
    rows = sorted(map(str, catalog.get_table("db2.t").to_arrow().to_pylist()))
    assert _result(catalog) == "Compact database finished. Success: 4, Failed: 0"
    assert _compacted(catalog) == {"db.t", "db.u", "db2.t", "db2.ignore_me"}
    table = catalog.get_table("db2.t")
    levels = {e.file.level for e in table.new_scan().read_entries(table.latest_snapshot())}
    assert levels == {5}
    assert sorted(map(str, table.to_arrow().to_pylist())) == rows


@pytest.mark.parametrize(
    ("args", "compacted"),
    [
        ({"including_databases": "db2"}, {"db2.t", "db2.ignore_me"}),
        ({"including_databases": "db|db2", "including_tables": "db\\.t|db2\\.t"}, {"db.t", "db2.t"}),
        ({"including_tables": "t"}, set()),  # matched against 'db.table', in full
        ({"including_databases": "db2", "excluding_tables": ".*ignore_me"}, {"db2.t"}),
        ({"including_databases": "d"}, set()),
        ({"excluding_tables": "  "}, {"db.t", "db.u", "db2.t", "db2.ignore_me"}),
    ],
)  # fmt: skip
def test_patterns_select_tables(catalog, args: dict, compacted: set[str]) -> None:
    message = _result(catalog, **args)
    assert message == f"Compact database finished. Success: {len(compacted)}, Failed: 0"
    assert _compacted(catalog) == compacted


def test_options_apply_to_every_compaction(catalog) -> None:
    _result(catalog, including_databases="db", options="file.format=orc")
    for identifier in ("db.t", "db.u"):
        table = catalog.get_table(identifier)
        names = [e.file.file_name for e in table.new_scan().read_entries(table.latest_snapshot())]
        # The partition of two files is rewritten; a lone file is only moved up a level.
        assert sorted(n.rsplit(".", 1)[1] for n in names) == ["orc", "parquet"]


def test_a_failing_table_is_counted_and_the_others_go_on(
    catalog, caplog: pytest.LogCaptureFixture
) -> None:
    # Made by Java: this implementation neither creates nor compacts chain tables.
    foreign_table(
        catalog.warehouse,
        "db.chained",
        SCHEMA,
        primary_keys=["id"],
        options={"bucket": "1", "chain-table.enabled": "true"},
    )
    files = fingerprint(catalog.get_table("db.chained").path)
    with caplog.at_level(logging.ERROR, logger="procedures.compact"):
        message = _result(catalog, including_databases="db")
    assert message == "Compact database finished. Success: 2, Failed: 1"
    assert _compacted(catalog) == {"db.t", "db.u"}
    assert "Failed to compact table: db.chained" in caplog.text
    assert fingerprint(catalog.get_table("db.chained").path) == files


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"including_databases": "db("}, "Invalid regular expression 'db\\(' for including_d"),
        ({"including_tables": "[x"}, "Invalid regular expression"),
        ({"excluding_tables": "*"}, "Invalid regular expression"),
        ({"options": "nope"}, "Invalid key-value string 'nope'"),
        ({"table": "db.t"}, "table"),
    ],
)
def test_bad_arguments_change_nothing(catalog, warehouse: str, args: dict, message: str) -> None:
    files = fingerprint(warehouse)
    with pytest.raises(ProcedureError, match=message):
        call(catalog, "compact_database", **args)
    assert fingerprint(warehouse) == files

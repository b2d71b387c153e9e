"""CALL sys.repair_earliest_snapshot and sys.trigger_tag_automatic_creation (Paimon-Spark 2.0)."""

from __future__ import annotations

import os

import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.table import FileStoreTable
from procedures import ProcedureError
from tests.unit.procedures.helpers import call, fingerprint, new_catalog, new_table, tag_names


def _with_gap(warehouse: str) -> tuple[FileSystemCatalog, FileStoreTable]:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=5)
    os.remove(table.snapshot_manager.snapshot_path(2))  # an expiry died half-way
    return catalog, table


def test_repair_earliest_snapshot_moves_the_hint_past_the_gap(warehouse: str) -> None:
    catalog, table = _with_gap(warehouse)
    result = call(catalog, "repair_earliest_snapshot", table="db.t", snapshot_id=3)
    assert [c.name for c in result.columns] == [
        "previous_earliest_snapshot_id",
        "current_earliest_snapshot_id",
    ]
    assert result.rows == [(1, 3)]
    with open(table.snapshot_manager.earliest_hint_path) as f:
        assert f.read() == "3"
    assert table.snapshot_manager.earliest_snapshot_id() == 3
    assert os.path.exists(table.snapshot_manager.snapshot_path(1))  # nothing is deleted
    assert call(catalog, "repair_earliest_snapshot", "db.t", 3).rows == [(3, 3)]


@pytest.mark.parametrize(
    ("snapshot_id", "needle"),
    [
        (0, "Snapshot 0 must not be earlier than current earliest snapshot 1."),
        (6, "Snapshot 6 must not be later than latest snapshot 5."),
        (2, "Snapshot 2 does not exist."),
        (4, "Snapshot 4 does not immediately follow a snapshot gap."),
        (None, "snapshot_id must not be NULL"),
    ],
)
def test_repair_earliest_snapshot_refuses(warehouse: str, snapshot_id: int, needle: str) -> None:
    catalog, table = _with_gap(warehouse)
    before = fingerprint(table.path)
    with pytest.raises(ProcedureError) as err:
        call(catalog, "repair_earliest_snapshot", "db.t", snapshot_id)
    assert needle in str(err.value) and "\n" not in str(err.value)
    assert fingerprint(table.path) == before


def test_repair_earliest_snapshot_of_an_empty_table(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    new_table(catalog, commits=0)
    with pytest.raises(ProcedureError, match="Cannot repair earliest snapshot for an empty"):
        call(catalog, "repair_earliest_snapshot", "db.t", 1)


def test_trigger_tag_automatic_creation_tags_a_write_only_table(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    options = {
        "write-only": "true",  # its commits create no tags
        "tag.automatic-creation": "process-time",
        "tag.creation-period": "daily",
        "sink.process-time-zone": "UTC",
    }
    table = new_table(catalog, commits=3, options=options)
    assert tag_names(table) == []
    result = call(catalog, "trigger_tag_automatic_creation", table="db.t")
    assert [c.name for c in result.columns] == ["result"] and result.rows == [(True,)]
    # The first automatic tag goes on the first snapshot, named for the period before it
    # (commits at 2023-11-14 22:13 UTC), as Paimon's TagAutoCreation.
    assert tag_names(table) == ["2023-11-13"]
    assert table.tag_manager.get("2023-11-13").snapshot_id == 1
    assert call(catalog, "trigger_tag_automatic_creation", "db.t").rows == [(True,)]
    assert tag_names(table) == ["2023-11-13"]


def test_trigger_tag_automatic_creation_without_automatic_tags(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=2)
    before = fingerprint(table.path)
    assert call(catalog, "trigger_tag_automatic_creation", "db.t").rows == [(True,)]
    assert fingerprint(table.path) == before
    with pytest.raises(ProcedureError, match="does not exist"):
        call(catalog, "trigger_tag_automatic_creation", "db.nope")

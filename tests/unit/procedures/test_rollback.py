"""``rollback`` and ``rollback_to_timestamp`` through ``call_procedure``."""

from __future__ import annotations

import os

import pytest

from paimon_core.lifecycle.tag_management import create_tag
from procedures import ProcedureError
from procedures.rollback import DRY_RUN_COLUMN, ROLLBACK_OUTPUT
from tests.unit.procedures.helpers import (
    T0,
    call,
    fingerprint,
    new_catalog,
    new_table,
    snapshot_ids,
    tag_names,
)


def test_rollback_to_snapshot_drops_newer_snapshots_and_tags(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog)
    call(catalog, "create_tag", table="db.t", tag="old", snapshot=1)
    call(catalog, "create_tag", table="db.t", tag="new", snapshot=3)
    result = call(catalog, "rollback", table="db.t", version="2")
    assert result.columns == ROLLBACK_OUTPUT
    assert result.rows == [(3, 2)]
    assert snapshot_ids(table) == [1, 2]
    assert table.snapshot_manager.latest_snapshot_id() == 2
    assert tag_names(table) == ["old"]
    assert table.to_arrow().num_rows == 4


def test_rollback_by_snapshot_tag_and_int_version(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=4)
    create_tag(table, "20240101", snapshot_id=3, allow_numeric=True)  # as an automatic tag
    call(catalog, "create_tag", table="db.t", tag="named", snapshot=2)
    # A numeric tag needs tag => ...: version => '20240101' means snapshot 20240101.
    with pytest.raises(ProcedureError, match=r"Rollback snapshot '20240101' doesn't exist\."):
        call(catalog, "rollback", table="db.t", version="20240101")
    assert call(catalog, "rollback", table="db.t", tag="20240101").rows == [(4, 3)]
    assert call(catalog, "rollback", table="db.t", version="named").rows == [(3, 2)]
    assert call(catalog, "rollback", "db.t", 1).rows == [(2, 1)]  # INT up-cast to STRING
    assert snapshot_ids(table) == [1]
    assert tag_names(table) == []


@pytest.mark.parametrize(
    ("named", "message"),
    [
        ({"version": "1", "snapshot": 1}, "only can set one of version/snapshot/tag"),
        ({"version": "1", "tag": "t"}, "only can set one of version/snapshot/tag"),
        ({"snapshot": 1, "tag": "t"}, "only can set one of version/snapshot/tag"),
        ({}, "only can set one of version/snapshot/tag"),
        ({"version": "  "}, "only can set one of version/snapshot/tag"),
        ({"snapshot": 99}, "Rollback snapshot '99' doesn't exist."),
        ({"tag": "missing"}, "Tag 'missing' doesn't exist."),
        ({"version": "../x"}, "must not contain"),
        ({"snapshot": "1"}, "Cannot cast STRING to BIGINT of snapshot"),
    ],
)
def test_rollback_errors_change_nothing(warehouse: str, named: dict, message: str) -> None:
    catalog = new_catalog(warehouse)
    new_table(catalog)
    before = fingerprint(warehouse)
    with pytest.raises(ProcedureError) as err:
        call(catalog, "rollback", table="db.t", **named)
    assert message in str(err.value)
    assert fingerprint(warehouse) == before


def test_rollback_on_empty_table(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    new_table(catalog, commits=0)
    with pytest.raises(ProcedureError, match=r"Latest snapshot is null, can not rollback\."):
        call(catalog, "rollback", table="db.t", snapshot=1)
    with pytest.raises(ProcedureError, match=r"Latest snapshot is null, can not rollback\."):
        call(catalog, "rollback_to_timestamp", table="db.t", timestamp=T0)


def test_rollback_dry_run_lists_files_and_changes_nothing(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog)
    call(catalog, "create_tag", table="db.t", tag="new", snapshot=3)
    before = fingerprint(warehouse)
    result = call(catalog, "rollback", table="db.t", snapshot=1, dry_run=True)
    assert result.columns == (*ROLLBACK_OUTPUT, DRY_RUN_COLUMN)
    assert fingerprint(warehouse) == before
    assert {row[:2] for row in result.rows} == {(3, 1)}
    files = [row[2] for row in result.rows]
    manager = table.snapshot_manager
    assert files[:2] == [manager.snapshot_path(3), manager.snapshot_path(2)]
    assert table.tag_manager.tag_path("new") in files
    assert len(files) == len(set(files))
    assert all(f.startswith(table.path) for f in files)
    # Running it for real deletes exactly what the dry run listed.
    call(catalog, "rollback", table="db.t", snapshot=1)
    assert not any(map(os.path.exists, files))
    assert snapshot_ids(table) == [1]


def test_dry_run_with_nothing_to_delete(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    new_table(catalog)
    result = call(catalog, "rollback", table="db.t", snapshot=3, dry_run=True)
    assert result.rows == [(3, 3, None)]


def test_rollback_to_timestamp(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog)  # commits at T0, T0 + 60 s, T0 + 120 s
    before = fingerprint(warehouse)
    with pytest.raises(ProcedureError, match=f"Can not find snapshot earlier than {T0 - 1}"):
        call(catalog, "rollback_to_timestamp", table="db.t", timestamp=T0 - 1)
    with pytest.raises(ProcedureError, match=r"Required parameters \[timestamp\] is missed"):
        call(catalog, "rollback_to_timestamp", table="db.t")
    dry = call(catalog, "rollback_to_timestamp", "db.t", T0 + 61_000, True)
    assert dry.rows[0][:2] == (3, 2)
    assert fingerprint(warehouse) == before
    result = call(catalog, "rollback_to_timestamp", table="db.t", timestamp=T0 + 61_000)
    assert result.rows == [(3, 2)]
    assert snapshot_ids(table) == [1, 2]

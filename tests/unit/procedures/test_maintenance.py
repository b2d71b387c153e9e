"""``expire_snapshots`` and ``remove_orphan_files`` through ``call_procedure``."""

from __future__ import annotations

import os
import time

import pytest

from procedures import ProcedureError
from procedures.maintenance import EXPIRE_OUTPUT, ORPHAN_OUTPUT
from procedures.rollback import DRY_RUN_COLUMN
from tests.unit.procedures.helpers import (
    call,
    fingerprint,
    new_catalog,
    new_table,
    snapshot_ids,
)

PAST = "2000-01-01 00:00:00"  # no snapshot is that old: only the count rules expire


def test_expire_by_count(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=5)
    result = call(
        catalog, "expire_snapshots", table="db.t", retain_max=2, retain_min=1, older_than=PAST
    )
    assert result.columns == EXPIRE_OUTPUT
    assert result.rows == [(3,)]
    assert snapshot_ids(table) == [4, 5]
    assert table.to_arrow().num_rows == 10


def test_expire_by_time_keeps_retain_min(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=5)  # committed in 2023: older than now - 1 h
    assert call(catalog, "expire_snapshots", "db.t", None, 2).rows == [(3,)]
    assert snapshot_ids(table) == [4, 5]


def test_expire_options_and_max_deletes(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=5)
    options = "snapshot.num-retained.min = 1, snapshot.num-retained.max=2"
    result = call(catalog, "expire_snapshots", table="db.t", options=options, max_deletes=1)
    assert result.rows == [(1,)]
    assert snapshot_ids(table) == [2, 3, 4, 5]
    result = call(catalog, "expire_snapshots", table="db.t", options=options, older_than=PAST)
    assert result.rows == [(2,)]
    assert snapshot_ids(table) == [4, 5]


def test_expire_defaults_keep_ten_snapshots(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=3)
    before = fingerprint(warehouse)
    assert call(catalog, "expire_snapshots", table="db.t").rows == [(0,)]
    assert snapshot_ids(table) == [1, 2, 3]
    assert fingerprint(warehouse) == before


@pytest.mark.parametrize(
    ("named", "message"),
    [
        ({"retain_max": 2}, "retainMax (2) must not be less than retainMin (10)."),
        ({"older_than": "01/01/2020"}, "Invalid older_than '01/01/2020'"),
        ({"options": "snapshot.num-retained.min"}, "Please use format 'key=value'"),
        ({"retain_min": "1"}, "Cannot cast STRING to INT of retain_min"),
        ({"max_deletes": 2**31}, "Cannot cast BIGINT to INT of max_deletes"),
    ],
)
def test_expire_errors_change_nothing(warehouse: str, named: dict, message: str) -> None:
    catalog = new_catalog(warehouse)
    new_table(catalog, commits=3)
    before = fingerprint(warehouse)
    with pytest.raises(ProcedureError) as err:
        call(catalog, "expire_snapshots", table="db.t", **named)
    assert message in str(err.value)
    assert fingerprint(warehouse) == before


def test_expire_dry_run(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=5)
    before = fingerprint(warehouse)
    args = {"table": "db.t", "retain_max": 2, "retain_min": 1, "older_than": PAST}
    dry = call(catalog, "expire_snapshots", **args, dry_run=True)
    assert fingerprint(warehouse) == before
    assert dry.columns == (*EXPIRE_OUTPUT, DRY_RUN_COLUMN)
    assert {row[0] for row in dry.rows} == {3}
    files = [row[1] for row in dry.rows]
    manager = table.snapshot_manager
    assert files[:3] == [manager.snapshot_path(i) for i in (1, 2, 3)]
    assert call(catalog, "expire_snapshots", **args).rows == [(3,)]
    assert not any(os.path.exists(f) for f in files)
    nothing = call(catalog, "expire_snapshots", **args, dry_run=True)
    assert nothing.rows == [(0, None)]


def _orphan(directory: str, name: str, age_seconds: float, size: int = 10) -> str:
    path = os.path.join(directory, name)
    with open(path, "wb") as fh:
        fh.write(b"x" * size)
    stamp = time.time() - age_seconds
    os.utime(path, (stamp, stamp))
    return path


def test_remove_orphan_files(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog)
    bucket = os.path.join(table.path, "dt=2024-01-01", "bucket-0")
    old = _orphan(bucket, "data-orphan-0.parquet", 3 * 86400, size=7)
    fresh = _orphan(bucket, "data-fresh-0.parquet", 0)
    before = fingerprint(warehouse)
    dry = call(catalog, "remove_orphan_files", table="db.t", dry_run=True)
    assert dry.columns == ORPHAN_OUTPUT
    assert dry.rows == [(1, 7)]
    assert fingerprint(warehouse) == before
    assert call(catalog, "remove_orphan_files", "db.t").rows == [(1, 7)]
    assert not os.path.exists(old)
    assert os.path.exists(fresh)
    assert table.to_arrow().num_rows == 6
    # older_than reaches the fresh file too (given in the session zone, UTC here).
    soon = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(time.time() - 1))
    os.utime(fresh, (time.time() - 60, time.time() - 60))
    result = call(catalog, "remove_orphan_files", table="db.t", older_than=soon, mode="local")
    assert result.rows == [(1, 10)]


def test_remove_orphan_files_of_a_database(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    first = new_table(catalog, "db.a", commits=1)
    second = new_table(catalog, "db.b", commits=1)
    for table in (first, second):
        _orphan(os.path.join(table.path, "manifest"), "manifest-orphan-0", 2 * 86400, size=3)
    assert call(catalog, "remove_orphan_files", table="db.*").rows == [(2, 6)]
    assert call(catalog, "remove_orphan_files", table="paimon.db.*").rows == [(0, 0)]


@pytest.mark.parametrize(
    ("named", "message"),
    [
        ({"table": ""}, "Cannot handle an empty tableId for argument table"),
        ({"table": "db.t", "mode": "remote"}, "Unknown mode: remote. Only 'DISTRIBUTED' and"),
        ({"table": "db.t", "older_than": "2999-01-01 00:00:00"}, "olderThan must be less than"),
        ({"table": "db.nope"}, "Table db.nope does not exist"),
        ({"table": "nodb.*"}, "nodb"),
    ],
)
def test_remove_orphan_files_errors(warehouse: str, named: dict, message: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=1)
    _orphan(os.path.join(table.path, "manifest"), "manifest-orphan-0", 2 * 86400)
    before = fingerprint(warehouse)
    with pytest.raises(ProcedureError) as err:
        call(catalog, "remove_orphan_files", **named)
    assert message in str(err.value)
    assert fingerprint(warehouse) == before

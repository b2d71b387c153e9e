"""``CALL sys.compact_manifest``: Paimon Spark 2.0's arguments and result row, run in process."""

from __future__ import annotations

import logging

import pytest

from paimon_core.format.options import format_memory_size
from paimon_core.format.snapshot import CommitKind
from procedures import ProcedureError
from tests.unit.procedures.helpers import call, fingerprint, new_catalog, new_table


def _manifests(table) -> list:
    latest = table.snapshot_manager.latest_snapshot()
    lists = table.manifest_list
    return lists.read(latest.base_manifest_list) + lists.read(latest.delta_manifest_list)


def _rows(table) -> list[str]:
    return sorted(map(str, table.to_arrow().to_pylist()))


def test_compact_manifest_after_many_commits(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=10, primary_keys=["id", "dt"], options={"bucket": "2"})
    call(catalog, "compact", table="db.t")  # DELETE entries for the compacted files
    table = catalog.get_table("db.t")
    before, rows, latest = _manifests(table), _rows(table), table.latest_snapshot()
    assert len(before) == 11 and any(m.num_deleted_files for m in before)

    result = call(catalog, "compact_manifest", table="db.t")

    assert [(c.name, c.type) for c in result.columns] == [("result", "BOOLEAN")]
    assert result.rows == [(True,)]
    table = catalog.get_table("db.t")
    snapshot = table.latest_snapshot()
    assert snapshot.snapshot_id == latest.snapshot_id + 1
    assert snapshot.commit_kind == CommitKind.COMPACT
    after = _manifests(table)
    assert len(after) < len(before) and sum(m.num_deleted_files for m in after) == 0
    assert _rows(table) == rows
    assert sorted(map(str, table.to_arrow(snapshot=latest).to_pylist())) == rows


def test_options_and_positional_arguments(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    new_table(catalog, commits=4)
    # A target below every manifest's size leaves them all large: nothing to merge.
    assert call(catalog, "compact_manifest", "t", "manifest.target-file-size=1 b").rows == [(True,)]
    assert catalog.get_table("db.t").latest_snapshot().snapshot_id == 4
    assert call(catalog, "compact_manifest", "t").rows == [(True,)]
    table = catalog.get_table("db.t")
    assert table.latest_snapshot().snapshot_id == 5 and len(_manifests(table)) == 1


def test_dry_run_changes_nothing_and_reports(
    warehouse: str, caplog: pytest.LogCaptureFixture
) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=3)
    table.new_commit().truncate_partitions([{"dt": "2024-01-02"}])
    sizes = sum(m.file_size for m in _manifests(catalog.get_table("db.t")))
    files = fingerprint(warehouse)
    with caplog.at_level(logging.INFO, logger="procedures.compact"):
        result = call(catalog, "compact_manifest", table="db.t", dry_run=True)
    message = (
        f"Dry run: 4 manifest files ({format_memory_size(sizes)}), 1 deleted entries in 1 files, "
        "4 undersized files (< 8 mb)."
    )
    assert [c.name for c in result.columns] == ["result", "message"]
    assert result.rows == [(True, message)]
    assert message in caplog.text
    assert fingerprint(warehouse) == files


def test_dry_run_without_snapshot(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    new_table(catalog, commits=0)
    result = call(catalog, "compact_manifest", table="db.t", dry_run=True)
    assert result.rows == [(True, "Dry run: no snapshot exists.")]
    assert call(catalog, "compact_manifest", table="db.t").rows == [(True,)]
    assert catalog.get_table("db.t").latest_snapshot() is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"table": "db.nope"}, "does not exist"),
        ({"table": ""}, "Cannot handle an empty identifier"),
        ({"table": "db.t", "options": "broken"}, "Invalid key-value string 'broken'"),
        ({"table": "db.t", "manifest_sort_enabled": True}, "manifest_sort_enabled"),
    ],
)
def test_refused_arguments_change_nothing(warehouse: str, args: dict, message: str) -> None:
    catalog = new_catalog(warehouse)
    new_table(catalog, commits=3)
    files = fingerprint(warehouse)
    with pytest.raises(ProcedureError, match=message):
        call(catalog, "compact_manifest", **args)
    assert fingerprint(warehouse) == files


def test_expiring_the_snapshots_before_keeps_every_data_file(warehouse: str) -> None:
    """The merged snapshot lists the same data files through new manifests: expiring all
    older snapshots frees their manifests only."""
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=6)
    rows = _rows(table)
    data = {f for f in fingerprint(table.path) if f.endswith(".parquet")}
    call(catalog, "compact_manifest", table="db.t")
    assert call(catalog, "expire_snapshots", table="db.t", retain_max=1, retain_min=1).rows == [
        (6,)
    ]
    table = catalog.get_table("db.t")
    assert table.snapshot_manager.list_snapshot_ids() == [7]
    assert {f for f in fingerprint(table.path) if f.endswith(".parquet")} == data
    manifests = {f for f in fingerprint(table.path) if f.startswith("manifest/manifest-")}
    assert len(manifests) == 3  # the merged manifest and the snapshot's two lists
    assert _rows(table) == rows

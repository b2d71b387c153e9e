"""``CALL sys.compact``: Paimon Spark's arguments, checks and result row, run in process."""

from __future__ import annotations

import pytest

from paimon_core.format.snapshot import CommitKind
from procedures import ProcedureError
from tests.unit.procedures.helpers import call, new_catalog, new_table


def _levels(table) -> dict[str, list[int]]:
    snapshot = table.snapshot_manager.latest_snapshot()
    out: dict[str, list[int]] = {}
    for e in table.new_scan().read_entries(snapshot):
        day = table.new_scan().partition_values(e.partition)[0]
        out.setdefault(day, []).append(e.file.level)
    return {k: sorted(v) for k, v in out.items()}


@pytest.fixture
def pk(warehouse: str):
    catalog = new_catalog(warehouse)
    return catalog, new_table(
        catalog, commits=4, primary_keys=["id", "dt"], options={"bucket": "1"}
    )


def test_compact_returns_true_and_commits_compact(pk) -> None:
    catalog, table = pk
    before = sorted(map(str, table.to_arrow().to_pylist()))
    result = call(catalog, "compact", table="db.t")
    assert [c.name for c in result.columns] == ["result"] and result.rows == [(True,)]
    table = catalog.get_table("db.t")
    assert table.snapshot_manager.latest_snapshot().commit_kind == CommitKind.COMPACT
    assert _levels(table) == {"2024-01-01": [5], "2024-01-02": [5]}
    assert sorted(map(str, table.to_arrow().to_pylist())) == before


@pytest.mark.parametrize(
    "args",
    [
        {"partitions": "dt=2024-01-02"},
        {"where": "dt = '2024-01-02'"},
        {"where": "dt > '2024-01-01'"},
    ],
)
def test_partitions_and_where_restrict_the_compaction(pk, args) -> None:
    catalog, _ = pk
    call(catalog, "compact", table="db.t", **args)
    assert _levels(catalog.get_table("db.t")) == {"2024-01-01": [0, 0], "2024-01-02": [5]}


def test_minor_strategy_leaves_few_runs_alone(pk) -> None:
    catalog, table = pk
    latest = table.snapshot_manager.latest_snapshot().snapshot_id
    assert call(catalog, "compact", table="db.t", compact_strategy="minor").rows == [(True,)]
    assert catalog.get_table("db.t").snapshot_manager.latest_snapshot().snapshot_id == latest


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"compact_strategy": "major"}, "only supports 'full' or 'minor'"),
        ({"partitions": "dt=a", "where": "dt = 'a'"}, "cannot be used together"),
        ({"order_by": "id"}, 'order_strategy "none" cannot work with order_by'),
        ({"order_strategy": "zorder", "order_by": "id"}, "'zorder' is not supported"),
        ({"order_strategy": "order", "order_by": "dt"}, "should not contain partition cols"),
        ({"order_strategy": "order", "order_by": "id"}, "unaware-bucket append"),
        ({"where": "id = 1"}, "Only partition columns"),
    ],
)
def test_refused_arguments(pk, args, message) -> None:
    catalog, _ = pk
    with pytest.raises(ProcedureError, match=message):
        call(catalog, "compact", table="db.t", **args)


def test_append_order_compaction(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    new_table(catalog, commits=4)
    call(catalog, "compact", table="db.t", order_strategy="order", order_by="id")
    table = catalog.get_table("db.t")
    assert _levels(table) == {"2024-01-01": [0], "2024-01-02": [0]}
    rows = table.to_arrow().to_pylist()
    assert [r["id"] for r in rows if r["dt"] == "2024-01-01"] == [0, 2, 100, 102]

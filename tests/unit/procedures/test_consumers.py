"""CALL sys.reset_consumer / clear_consumers: Paimon-Spark's arguments and results, and
their effect on snapshot expiry."""

from __future__ import annotations

import os

import pytest

from paimon_core.format.consumer import ConsumerManager
from procedures import ProcedureError
from sql_ext.system_tables import system_table_rows
from tests.unit.procedures.helpers import call, fingerprint, new_catalog, new_table, snapshot_ids


def _consumers(table: object) -> dict[str, int]:
    return ConsumerManager(table.file_io, table.path).consumers()  # type: ignore[attr-defined]


def test_reset_consumer_writes_paimon_json_and_deletes(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=3)
    result = call(catalog, "reset_consumer", table="db.t", consumerId="myid", nextSnapshotId=2)
    assert [c.name for c in result.columns] == ["result"] and result.rows == [(True,)]
    with open(os.path.join(table.path, "consumer", "consumer-myid")) as f:
        assert f.read() == '{\n  "nextSnapshot" : 2\n}'
    # Names match case-insensitively, as Paimon's resolver lower-cases both sides.
    call(catalog, "reset_consumer", table="t", consumerid="other", NEXTSNAPSHOTID=3)
    assert _consumers(table) == {"myid": 2, "other": 3}
    assert system_table_rows(table, "consumers") == [("myid", 2), ("other", 3)]
    assert call(catalog, "reset_consumer", "db.t", "myid").rows == [(True,)]
    assert _consumers(table) == {"other": 3}
    assert call(catalog, "reset_consumer", "db.t", "never-existed").rows == [(True,)]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ({"consumerId": "c", "nextSnapshotId": 9}, "Snapshot 9 does not exist"),
        ({"consumerId": " ", "nextSnapshotId": 1}, "consumer id cannot be empty"),
        ({"consumerId": "a/b", "nextSnapshotId": 1}, "must not contain '/'"),
        ({"consumerId": "a\\b", "nextSnapshotId": 1}, "must not contain '\\'"),
        ({"consumerId": "..", "nextSnapshotId": 1}, "must not be '.' or '..'"),
        ({"consumerId": "."}, "must not be '.' or '..'"),
        ({"consumerId": "../../snapshot/snapshot-1"}, "must not contain '/'"),
        ({"nextSnapshotId": 1}, "Required parameters [consumerId] is missed"),
    ],
)
def test_reset_consumer_refuses_bad_input(warehouse: str, args: dict, needle: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=2)
    beside = os.path.dirname(warehouse)
    before = fingerprint(beside)
    with pytest.raises(ProcedureError) as err:
        call(catalog, "reset_consumer", table="db.t", **args)
    assert needle in str(err.value) and "\n" not in str(err.value)
    assert fingerprint(beside) == before
    assert snapshot_ids(table) == [1, 2]


def test_clear_consumers_by_patterns(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=1)
    ids = ["myid1", "myid12", "myid2", "other"]

    def reset() -> None:
        for consumer_id in ids:
            call(catalog, "reset_consumer", "db.t", consumer_id, 1)

    reset()
    call(catalog, "clear_consumers", table="db.t", includingConsumers="myid.*")
    assert sorted(_consumers(table)) == ["other"]
    reset()
    # A blank includingConsumers means all; the patterns must match the whole id.
    call(catalog, "clear_consumers", "db.t", "", "myid1.*")
    assert sorted(_consumers(table)) == ["myid1", "myid12"]
    reset()
    call(catalog, "clear_consumers", "db.t", "myid.*", "myid1.*")
    assert sorted(_consumers(table)) == ["myid1", "myid12", "other"]
    reset()
    call(catalog, "clear_consumers", "db.t", "myid")
    assert sorted(_consumers(table)) == ids
    assert call(catalog, "clear_consumers", "db.t").rows == [(True,)]
    assert _consumers(table) == {}


def test_clear_consumers_refuses_a_bad_pattern(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=1)
    call(catalog, "reset_consumer", "db.t", "keep", 1)
    before = fingerprint(table.path)
    with pytest.raises(ProcedureError, match=r"Invalid regular expression '\(' for excluding"):
        call(catalog, "clear_consumers", "db.t", ".*", "(")
    assert fingerprint(table.path) == before


def test_consumers_hold_back_expiry_until_reset_or_cleared(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=5)
    call(catalog, "reset_consumer", "db.t", "reader", 2)
    expired = call(catalog, "expire_snapshots", table="db.t", retain_max=1, retain_min=1)
    assert expired.rows == [(1,)] and snapshot_ids(table) == [2, 3, 4, 5]
    call(catalog, "reset_consumer", "db.t", "reader", 4)
    assert call(catalog, "expire_snapshots", "db.t", 1, 1).rows == [(2,)]
    assert snapshot_ids(table) == [4, 5]
    call(catalog, "clear_consumers", "db.t")
    assert call(catalog, "expire_snapshots", "db.t", 1, 1).rows == [(1,)]
    assert snapshot_ids(table) == [5]

"""CALL sys.expire_partitions and sys.mark_partition_done: Paimon-Spark 2.0's arguments,
result rows and effects; Java reads what the expiry leaves."""

from __future__ import annotations

import datetime as dt
import json
import os
import time
from collections import Counter
from typing import Any

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.format.snapshot import CommitKind
from paimon_core.lifecycle.partition_expire import plan_partition_expiry
from paimon_core.table import FileStoreTable
from procedures import ProcedureError
from tests.unit.procedures.helpers import call, fingerprint, new_catalog, snapshot_ids

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("hh", pa.string())])
PARTITIONS = [("20200101", "01"), ("20200101", "02"), ("20200102", "01"), ("29990101", "00")]


def _hourly(catalog: FileSystemCatalog, options: dict[str, str] | None = None) -> FileStoreTable:
    table = catalog.create_table("db.t", SCHEMA, partition_keys=["dt", "hh"], options=options)
    for i, (day, hour) in enumerate(PARTITIONS):
        table.write_arrow(pa.table({"id": [i, i + 10], "dt": [day] * 2, "hh": [hour] * 2}, SCHEMA))
    return catalog.get_table("db.t")


def _partitions(rows: list[dict[str, Any]]) -> Counter:
    return Counter((r["dt"], r["hh"]) for r in rows)


def test_expire_partitions_by_values_time(warehouse: str, oracle: Any) -> None:
    catalog = new_catalog(warehouse)
    table = _hourly(catalog)
    result = call(
        catalog,
        "expire_partitions",
        table="db.t",
        expiration_time="1 d",
        timestamp_formatter="yyyyMMdd HH:mm:ss",
        timestamp_pattern="$dt $hh:00:00",
    )
    assert [c.name for c in result.columns] == ["expired_partitions"]
    assert result.rows == [
        ("dt=20200101, hh=01",),
        ("dt=20200101, hh=02",),
        ("dt=20200102, hh=01",),
    ]
    latest = table.snapshot_manager.latest_snapshot()
    assert latest.snapshot_id == 5 and latest.commit_kind == CommitKind.OVERWRITE
    assert latest.total_record_count == 2
    assert _partitions(table.to_arrow().to_pylist()) == Counter({("29990101", "00"): 2})
    assert _partitions(oracle("read", warehouse, "db.t")) == Counter({("29990101", "00"): 2})
    again = call(catalog, "expire_partitions", "db.t", "1 d", "yyyyMMdd HH:mm:ss", "$dt $hh:00:00")
    assert again.rows == [("No expired partitions.",)] and snapshot_ids(table)[-1] == 5


def test_table_options_max_expires_and_batches(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    options = {
        "partition.expiration-time": "1 d",
        "partition.timestamp-formatter": "yyyyMMdd",
        "partition.expiration-batch-size": "1",
    }
    table = _hourly(catalog, options)
    # Without a pattern the first partition value is the time; sorted by values, at most 2.
    result = call(catalog, "expire_partitions", table="db.t", max_expires=2)
    assert result.rows == [("dt=20200101, hh=01",), ("dt=20200101, hh=02",)]
    kinds = [table.snapshot_manager.snapshot(i).commit_kind for i in (5, 6)]
    assert kinds == [CommitKind.OVERWRITE, CommitKind.OVERWRITE] and snapshot_ids(table)[-1] == 6
    by_options = call(
        catalog, "expire_partitions", table="db.t", options="partition.expiration-max-num=5"
    )
    assert by_options.rows == [("dt=20200102, hh=01",)]


def test_default_formatter_and_unparsable_values_stay(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    schema = pa.schema([("id", pa.int64()), ("day", pa.string())])
    table = catalog.create_table("db.d", schema, partition_keys=["day"])
    for day in ["2020-01-01", "2020-01-02 10:00:00", "not-a-date", None, "2999-01-01"]:
        table.write_arrow(pa.table({"id": [1], "day": [day]}, schema))
    result = call(catalog, "expire_partitions", table="db.d", expiration_time="1 d")
    assert result.rows == [("day=2020-01-01",), ("day=2020-01-02 10:00:00",)]
    left = table.to_arrow().column("day").to_pylist()
    assert sorted(left, key=str) == ["2999-01-01", None, "not-a-date"]


def test_update_time_strategy(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = _hourly(catalog, {"partition.expiration-time": "1 h"})
    result = call(catalog, "expire_partitions", table="db.t", expire_strategy="update-time")
    assert result.rows == [("No expired partitions.",)]
    options = {"partition.expiration-strategy": "update-time", "partition.expiration-time": "1 h"}
    later = dt.datetime.now() + dt.timedelta(hours=2)
    planned = plan_partition_expiry(table.copy(options), now=later)
    assert [p.spec for p in planned] == [{"dt": d, "hh": h} for d, h in sorted(PARTITIONS)]
    assert plan_partition_expiry(table.copy(options), now=dt.datetime.now()) == []


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ({}, "Both the partition expiration time and partition field can not be null."),
        ({"expiration_time": "1 d", "expire_strategy": "by-magic"}, "Unknown partitionExpire"),
        ({"expiration_time": "1 parsec"}, "Time interval unit label 'parsec'"),
        ({"expiration_time": "1 d", "timestamp_formatter": "yyyy-ww"}, "Pattern letter 'w'"),
        ({"expiration_time": "1 d", "timestamp_formatter": "yyyy-MM-ddd"}, "Too many pattern"),
        ({"expiration_time": "1 d", "options": "nokeyvalue"}, "Invalid key-value string"),
        ({"expiration_time": "1 d", "max_expires": 10**10}, "Cannot cast"),
    ],
)
def test_expire_partitions_refuses(warehouse: str, args: dict, needle: str) -> None:
    catalog = new_catalog(warehouse)
    table = _hourly(catalog)
    before = fingerprint(table.path)
    with pytest.raises(ProcedureError) as err:
        call(catalog, "expire_partitions", table="db.t", **args)
    assert needle in str(err.value) and "\n" not in str(err.value)
    assert fingerprint(table.path) == before


def test_expire_partitions_of_an_unpartitioned_table(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    catalog.create_table("db.u", pa.schema([("id", pa.int64())]))
    with pytest.raises(ProcedureError, match="partition field can not be null"):
        call(catalog, "expire_partitions", "db.u", "1 d")


# ---------------------------------------------------------------- mark_partition_done


def _success(table: FileStoreTable, directory: str) -> dict[str, int]:
    with open(f"{table.path}/{directory}/_SUCCESS") as f:
        text = f.read()
    assert text.startswith('{\n  "creationTime" : ') and '\n  "modificationTime" : ' in text
    return json.loads(text)


def test_mark_partition_done_writes_success_files(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = _hourly(catalog)
    before = int(time.time() * 1000)
    result = call(
        catalog, "mark_partition_done", table="db.t", partitions="hh=01,dt=20200101;dt=29990101"
    )
    assert [c.name for c in result.columns] == ["result"] and result.rows == [(True,)]
    first = _success(table, "dt=20200101/hh=01")
    assert first["creationTime"] == first["modificationTime"] >= before
    assert _success(table, "dt=29990101")["creationTime"] >= before  # a partial spec: its level
    # Marked again: the creation time stays, the modification time moves on.
    with open(f"{table.path}/dt=20200101/hh=01/_SUCCESS", "w") as f:
        f.write('{"creationTime": 5, "modificationTime": 6}')
    call(catalog, "mark_partition_done", "db.t", "dt=20200101,hh=01")
    again = _success(table, "dt=20200101/hh=01")
    assert again["creationTime"] == 5 and again["modificationTime"] >= before
    # Escaped like Paimon's partition paths; the directory need not hold data yet.
    call(catalog, "mark_partition_done", "db.t", "dt=2024/01/01,hh=a b")
    assert _success(table, "dt=2024%2F01%2F01/hh=a b")["creationTime"] >= before
    # Success files are no orphans, however old.
    paths = [os.path.join(d, f) for d, _, fs in os.walk(table.path) for f in fs]
    two_days_ago = time.time() - 2 * 86400
    for path in paths:
        os.utime(path, (two_days_ago, two_days_ago))
    assert call(catalog, "remove_orphan_files", "db.t").rows == [(0, 0)]
    assert _success(table, "dt=29990101")["creationTime"] >= before


@pytest.mark.parametrize(
    ("options", "partitions", "needle"),
    [
        ({}, "dt=1,x=2", "['x'] are not partition columns"),
        ({}, ";dt=1", "needs at least one 'key=value'"),
        ({}, "dt=", "Partition value '' cannot be used"),
        ({}, "dt", "Invalid key-value string 'dt'"),
        ({"partition.mark-done-action": "done-partition"}, "dt=1", "without metastore"),
        ({"partition.mark-done-action": "success-file,mark-event"}, "dt=1", "Table should enable"),
        ({"partition.mark-done-action": "success-file,http-report"}, "dt=1", "http-report"),
        ({"partition.mark-done-action": "custom"}, "dt=1", "You need to set [partition.mark-"),
        ({"partition.mark-done-action": "success-file, mark-event"}, "dt=1", "No enum constant"),
    ],
)
def test_mark_partition_done_refuses(
    warehouse: str, options: dict[str, str], partitions: str, needle: str
) -> None:
    catalog = new_catalog(warehouse)
    table = _hourly(catalog, options)
    before = fingerprint(table.path)
    with pytest.raises(ProcedureError) as err:
        call(catalog, "mark_partition_done", "db.t", partitions)
    assert needle in str(err.value) and "\n" not in str(err.value)
    assert fingerprint(table.path) == before


def test_mark_event_on_a_filesystem_catalog_writes_nothing(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    options = {"partition.mark-done-action": "mark-event", "metastore.partitioned-table": "true"}
    table = _hourly(catalog, options)
    before = fingerprint(table.path)
    assert call(catalog, "mark_partition_done", "db.t", "dt=20200101").rows == [(True,)]
    assert fingerprint(table.path) == before
    catalog.create_table("db.u", pa.schema([("id", pa.int64())]))
    with pytest.raises(ProcedureError, match="is not partitioned"):
        call(catalog, "mark_partition_done", "db.u", "dt=1")

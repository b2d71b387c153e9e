"""CALL sys.expire_partitions and sys.mark_partition_done: Paimon-Spark 2.0's arguments,
result rows and effects; Java reads what the expiry leaves."""

from __future__ import annotations

import datetime as dt
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

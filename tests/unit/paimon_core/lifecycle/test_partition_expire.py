"""Partition expiry after commits (Paimon's ``NormalPartitionExpire`` run by the committer):
the check interval kept by the committer, ``end-input.check-partition-expire``, the drop as
an OVERWRITE commit that deletes no file, and Java reading what is left."""

from __future__ import annotations

import datetime as dt
import os
import random
from collections import Counter
from typing import Any

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import InvalidArgument
from paimon_core.format.schema import SetOption
from paimon_core.format.snapshot import CommitKind
from paimon_core.lifecycle import tag_management as tm
from paimon_core.lifecycle.partition_expire import PartitionExpire
from paimon_core.lifecycle.post_commit import post_commit_hooks
from paimon_core.operations.commit import FileStoreCommit
from paimon_core.table import FileStoreTable

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string())])
OLD, NEW = "20200101", "29990101"
EXPIRY = {
    "partition.expiration-time": "1 d",
    "partition.timestamp-formatter": "yyyyMMdd",
}


def _table(warehouse: str, options: dict[str, str] | None = None) -> FileStoreTable:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    return catalog.create_table("db.t", SCHEMA, partition_keys=["dt"], options=options or {})


def _rows(*days: str) -> pa.Table:
    return pa.table({"id": list(range(len(days))), "dt": list(days)}, SCHEMA)


def _days(table: FileStoreTable, **scan: Any) -> Counter:
    return Counter(FileStoreTable.load(table.path).copy(scan).to_arrow().column("dt").to_pylist())


def _kinds(table: FileStoreTable) -> list[CommitKind]:
    manager = table.snapshot_manager
    return [manager.snapshot(i).commit_kind for i in manager.list_snapshot_ids()]


def _set(table: FileStoreTable, options: dict[str, str]) -> FileStoreTable:
    table.schema_manager.commit_changes([SetOption(k, v) for k, v in options.items()])
    return FileStoreTable.load(table.path)


class Clock:
    """A wall clock the test moves (no sleeps)."""

    def __init__(self) -> None:
        self.now = dt.datetime.now()

    def __call__(self) -> dt.datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += dt.timedelta(**delta)


def _committer(table: FileStoreTable, clock: Clock) -> FileStoreCommit:
    return FileStoreCommit(table, post_commit=post_commit_hooks(table, clock))


def _commit(table: FileStoreTable, committer: FileStoreCommit, *days: str) -> None:
    write = table.new_write()
    write.write_arrow(_rows(*days))
    committer.commit(write.prepare_commit())


def test_old_partitions_go_after_the_next_commit(warehouse: str, oracle: Any) -> None:
    table = _table(warehouse)
    table.write_arrow(_rows(OLD, OLD, "20200102"))
    tm.create_tag(table, "before")
    table = _set(table, {**EXPIRY, "partition.expiration-check-interval": "0 s"})
    table.write_arrow(_rows(NEW))
    assert _kinds(table) == [CommitKind.APPEND, CommitKind.APPEND, CommitKind.OVERWRITE]
    manager = table.snapshot_manager
    assert manager.snapshot(3).commit_user == manager.snapshot(2).commit_user
    assert _days(table) == Counter({NEW: 1})
    assert Counter(r["dt"] for r in oracle("read", warehouse, "db.t")) == Counter({NEW: 1})
    # The drop deletes no file: the tag still reads the old days, in Java too.
    assert _days(table, **{"scan.tag-name": "before"}) == Counter({OLD: 2, "20200102": 1})
    tagged = oracle("read", warehouse, "db.t", "--tag", "before")
    assert Counter(r["dt"] for r in tagged) == Counter({OLD: 2, "20200102": 1})
    # A commit writing an old day drops it again in its own maintenance.
    table.write_arrow(_rows(OLD, NEW))
    assert _days(table) == Counter({NEW: 2}) and _kinds(table)[-1] == CommitKind.OVERWRITE


def test_max_num_and_batches_per_commit(warehouse: str) -> None:
    options = {
        **EXPIRY,
        "partition.expiration-check-interval": "0 s",
        "partition.expiration-max-num": "2",
        "partition.expiration-batch-size": "1",
    }
    table = _table(warehouse)
    table.write_arrow(_rows("20200103", "20200101", "20200102"))
    table = _set(table, options)
    table.write_arrow(_rows(NEW))
    assert _kinds(table)[1:] == [CommitKind.APPEND, CommitKind.OVERWRITE, CommitKind.OVERWRITE]
    assert _days(table) == Counter({"20200103": 1, NEW: 1})


def test_the_check_interval_is_kept_by_the_committer(warehouse: str) -> None:
    table = _table(warehouse, {**EXPIRY, "partition.expiration-check-interval": "1 h"})
    clock = Clock()
    committer = _committer(table, clock)
    _commit(table, committer, OLD)  # opened just now: its last check is less than 1 h ago
    assert _days(table) == Counter({OLD: 1})
    clock.advance(hours=1, seconds=1)
    _commit(table, committer, NEW)
    assert _days(table) == Counter({NEW: 1})
    clock.advance(minutes=59)
    _commit(table, committer, "20200102")  # 59 min after the last check
    assert _days(table) == Counter({NEW: 1, "20200102": 1})
    clock.advance(minutes=1, seconds=1)
    _commit(table, committer, NEW)
    assert _days(table) == Counter({NEW: 2})
    # A fresh committer, as every batch INSERT opens, does not check at once.
    _commit(table, _committer(table, clock), "20200103")
    assert _days(table) == Counter({NEW: 2, "20200103": 1})


def test_the_last_check_starts_up_to_one_interval_back() -> None:
    """Paimon subtracts a random number of whole seconds below the interval."""
    clock = Clock()
    table_options = {**EXPIRY, "partition.expiration-check-interval": "10 s"}
    seen = set()
    for seed in range(40):
        expire = PartitionExpire(_FakeTable(table_options), clock, random.Random(seed))
        seen.add((clock.now - expire.last_check).total_seconds())
    assert seen <= {float(s) for s in range(10)} and len(seen) > 3


class _FakeTable:
    """Just the options ``PartitionExpire`` reads."""

    def __init__(self, options: dict[str, str]) -> None:
        from paimon_core.format.options import CoreOptions

        self.options = CoreOptions(options)


def test_end_input_checks_after_batch_commits_only(warehouse: str) -> None:
    options = {
        **EXPIRY,
        "partition.expiration-check-interval": "999 d",
        "end-input.check-partition-expire": "true",
    }
    table = _table(warehouse, options)
    clock = Clock()
    committer = _committer(table, clock)
    write = table.new_write()
    write.write_arrow(_rows(OLD))
    committer.commit(write.prepare_commit(), commit_identifier=7)  # a streaming checkpoint
    assert _days(table) == Counter({OLD: 1})
    table.write_arrow(_rows(NEW))  # a batch commit: Long.MAX_VALUE
    assert _days(table) == Counter({NEW: 1})


def test_write_only_and_unpartitioned_tables_have_no_expiry(warehouse: str) -> None:
    table = _table(
        warehouse, {**EXPIRY, "partition.expiration-check-interval": "0 s", "write-only": "true"}
    )
    table.write_arrow(_rows(OLD))
    assert _days(table) == Counter({OLD: 1}) and PartitionExpire.of(table) is None
    flat = FileSystemCatalog(warehouse).create_table(
        "db.flat", pa.schema([("id", pa.int64())]), options=EXPIRY
    )
    assert PartitionExpire.of(flat) is None


@pytest.mark.parametrize(
    ("option", "value", "needle"),
    [
        ("partition.expiration-strategy", "by-magic", "Unknown partitionExpireStrategy"),
        ("partition.expiration-check-interval", "1 parsec", "unit label 'parsec'"),
        ("partition.expiration-max-num", "many", "as an integer"),
    ],
)
def test_malformed_options_refuse_the_commit(
    warehouse: str, option: str, value: str, needle: str
) -> None:
    table = _table(warehouse)
    table.write_arrow(_rows(OLD))
    table = _set(table, {**EXPIRY, option: value})
    with pytest.raises(InvalidArgument, match=needle) as err:
        table.write_arrow(_rows(NEW))
    assert "\n" not in str(err.value)
    assert table.snapshot_manager.list_snapshot_ids() == [1]
    assert not os.path.exists(f"{table.path}/dt={NEW}")  # nothing written


def test_a_branch_expires_its_own_partitions(warehouse: str, oracle: Any) -> None:
    """The committer of a branch expires by the branch's options, in the branch only."""
    from paimon_core.lifecycle import branch_management as bm

    table = _table(warehouse)
    table.write_arrow(_rows(OLD))
    bm.create_branch(table, "b")
    branch = FileStoreTable.load(table.path, branch="b")
    branch.write_arrow(_rows(OLD))
    branch.schema_manager.commit_changes(
        [
            SetOption(k, v)
            for k, v in {**EXPIRY, "partition.expiration-check-interval": "0 s"}.items()
        ]
    )
    branch = FileStoreTable.load(table.path, branch="b")
    branch.write_arrow(_rows(NEW))
    assert Counter(branch.to_arrow().column("dt").to_pylist()) == Counter({NEW: 1})
    assert branch.snapshot_manager.latest_snapshot().commit_kind == CommitKind.OVERWRITE
    assert _days(table) == Counter({OLD: 1})
    assert [r["dt"] for r in oracle("read", warehouse, "db.t")] == [OLD]

"""Structured Streaming reads of Paimon tables: scan modes, offsets, limits, consumers."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import StreamingQueryException
from pyspark.sql import DataFrame, SparkSession

from paimon_core.catalog import FileSystemCatalog
from paimon_core.format.consumer import ConsumerManager
from paimon_core.lifecycle.expire import expire_snapshots
from paimon_core.table import FileStoreTable
from sql_ext.session import PaimonSession

pytestmark = pytest.mark.spark

TIMEOUT = 120
Batches = list[tuple[int, list[tuple[Any, ...]]]]


@pytest.fixture
def session(spark: SparkSession, warehouse: str) -> PaimonSession:
    return PaimonSession(spark, warehouse=warehouse)


def table(session: PaimonSession, name: str = "t") -> FileStoreTable:
    return FileSystemCatalog(session.warehouse).get_table(f"default.{name}")


def drain(
    session: PaimonSession,
    checkpoint: Path,
    target: str = "default.t",
    transform: Callable[[DataFrame], DataFrame] | None = None,
    **options: str,
) -> Batches:
    """Stream ``target`` with ``options`` until what is there is read
    (``Trigger.AvailableNow``); each non-empty micro-batch's id and sorted rows."""
    batches: Batches = []

    def collect(batch: DataFrame, batch_id: int) -> None:
        got = sorted(tuple(r) for r in batch.collect())
        if got:
            batches.append((batch_id, got))

    df = session.spark.readStream.format("paimon").options(**options).load(target)
    if transform is not None:
        df = transform(df)
    query = (
        df.writeStream.foreachBatch(collect)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    try:
        assert query.awaitTermination(TIMEOUT), "the query did not finish"
    finally:
        query.stop()
    return batches


def rows_of(batches: Batches) -> list[tuple[Any, ...]]:
    return sorted(r for _, rows in batches for r in rows)


def test_append_table_latest_full_then_changes_and_a_restart_resumes(
    session: PaimonSession, tmp_path: Path
) -> None:
    session.sql("CREATE TABLE t (id INT, v STRING, p INT) PARTITIONED BY (p)")
    session.sql("INSERT INTO t VALUES (1, 'a', 1), (2, 'b', 2)")
    session.sql("INSERT INTO t VALUES (3, 'c', 1)")
    checkpoint = tmp_path / "ck"

    first = drain(session, checkpoint)
    assert [rows for _, rows in first] == [[(1, "a", 1), (2, "b", 2), (3, "c", 1)]]

    session.sql("INSERT INTO t VALUES (4, 'd', 2)")
    session.sql("INSERT INTO t VALUES (5, 'e', 1), (6, 'f', 1)")
    second = drain(session, checkpoint)
    assert rows_of(second) == [(4, "d", 2), (5, "e", 1), (6, "f", 1)]  # nothing again
    assert second[0][0] > first[-1][0]  # the same query, later batches

    assert drain(session, checkpoint) == []  # nothing new


def test_primary_key_table_full_snapshot_merged_then_deltas(
    session: PaimonSession, tmp_path: Path
) -> None:
    session.sql(
        "CREATE TABLE t (k INT, v STRING) TBLPROPERTIES ('primary-key' = 'k', 'bucket' = '2')"
    )
    session.sql("INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    session.sql("INSERT INTO t VALUES (1, 'a2')")
    checkpoint = tmp_path / "ck"
    assert rows_of(drain(session, checkpoint)) == [(1, "a2"), (2, "b")]  # merged

    session.sql("INSERT INTO t VALUES (2, 'b2'), (3, 'c')")
    assert rows_of(drain(session, checkpoint)) == [(2, "b2"), (3, "c")]  # the delta only


def test_changelog_with_row_kinds(session: PaimonSession, tmp_path: Path) -> None:
    """``read.changelog`` and ``t$audit_log``: the full snapshot as +I, then the table's
    changelog (``changelog-producer`` = ``input``) with its row kinds."""
    session.sql(
        "CREATE TABLE t (k INT, v STRING) TBLPROPERTIES "
        "('primary-key' = 'k', 'bucket' = '1', 'changelog-producer' = 'input')"
    )
    session.sql("INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    checkpoint = tmp_path / "ck"
    by_option = drain(session, checkpoint, **{"read.changelog": "true"})
    assert rows_of(by_option) == [("+I", 1, "a"), ("+I", 2, "b")]

    session.sql("INSERT INTO t VALUES (1, 'a2')")
    session.sql("DELETE FROM t WHERE k = 2")
    assert rows_of(drain(session, checkpoint, **{"read.changelog": "true"})) == [
        ("+I", 1, "a2"),
        ("-D", 2, "b"),
    ]
    # A full snapshot keeps a deleted key's last row (Paimon's AuditLogTable: forceKeepDelete)
    audit = drain(session, tmp_path / "ck2", target="default.t$audit_log")
    assert rows_of(audit) == [("+I", 1, "a2"), ("-D", 2, "b")]
    # Batch reads of format("paimon") take both forms too (Paimon-Spark's SparkSource).
    batch = session.spark.read.format("paimon").option("read.changelog", "true")
    assert sorted(tuple(r) for r in batch.load("default.t").collect()) == rows_of(audit)
    read = session.spark.read.format("paimon").load("default.t$audit_log")
    assert read.columns == ["rowkind", "k", "v"]


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"scan.mode": "latest"}, [(4,)]),
        ({"scan.mode": "from-snapshot", "scan.snapshot-id": "2"}, [(2,), (3,), (4,)]),
        ({"scan.snapshot-id": "3"}, [(3,), (4,)]),  # default: from-snapshot
        ({"scan.mode": "from-snapshot-full", "scan.snapshot-id": "2"}, [(1,), (2,), (4,)]),
        ({"scan.mode": "latest-full"}, [(1,), (2,), (3,), (4,)]),
        ({}, [(1,), (2,), (3,), (4,)]),
    ],
    ids=[
        "latest",
        "from-snapshot",
        "default-snapshot",
        "from-snapshot-full",
        "latest-full",
        "default",
    ],
)
def test_scan_modes(
    session: PaimonSession, tmp_path: Path, options: dict[str, str], expected: list[Any]
) -> None:
    session.sql("CREATE TABLE t (id INT)")
    for i in (1, 2, 3):
        session.sql(f"INSERT INTO t VALUES ({i})")
    reader = session.spark.readStream.format("paimon").options(**options).load("default.t")
    query = (
        reader.writeStream.format("memory")
        .queryName(f"scan_modes_{abs(hash(str(options)))}")
        .option("checkpointLocation", str(tmp_path / "ck"))
        .start()
    )
    try:
        query.processAllAvailable()
        session.sql("INSERT INTO t VALUES (4)")
        query.processAllAvailable()
        got = sorted(tuple(r) for r in session.spark.table(query.name).collect())
    finally:
        query.stop()
    if options.get("scan.mode") == "from-snapshot-full":
        expected = [(1,), (2,), (3,), (4,)]  # snapshot 2 whole (1, 2), then 3 and 4
    assert got == expected


def test_from_timestamp_reads_the_changes_committed_since(
    session: PaimonSession, tmp_path: Path
) -> None:
    session.sql("CREATE TABLE t (id INT)")
    session.sql("INSERT INTO t VALUES (1)")
    session.sql("INSERT INTO t VALUES (2)")
    first, second = table(session).snapshot_manager.snapshots()
    assert first.time_millis < second.time_millis  # an INSERT takes far more than 1 ms
    since = second.time_millis
    got = drain(session, tmp_path / "ck", **{"scan.timestamp-millis": str(since)})
    assert rows_of(got) == [(2,)]
    early = drain(
        session, tmp_path / "ck2", **{"scan.mode": "from-timestamp", "scan.timestamp-millis": "0"}
    )
    assert rows_of(early) == [(1,), (2,)]


def test_max_files_per_trigger_splits_the_backlog(session: PaimonSession, tmp_path: Path) -> None:
    session.sql("CREATE TABLE t (id INT)")
    for i in range(1, 5):
        session.sql(f"INSERT INTO t VALUES ({i})")
    batches = drain(session, tmp_path / "ck", **{"read.stream.maxFilesPerTrigger": "1"})
    assert [rows for _, rows in batches] == [[(1,)], [(2,)], [(3,)], [(4,)]]
    rows_limited = drain(session, tmp_path / "ck2", **{"read.stream.maxRowsPerTrigger": "2"})
    assert [len(rows) for _, rows in rows_limited] == [2, 2]


def test_consumer_advances_and_holds_expiry_back(session: PaimonSession, tmp_path: Path) -> None:
    session.sql("CREATE TABLE t (id INT)")
    session.sql("INSERT INTO t VALUES (1)")
    session.sql("INSERT INTO t VALUES (2)")
    consumers = ConsumerManager(table(session).file_io, table(session).path)
    options = {"consumer-id": "c1", "scan.mode": "from-snapshot", "scan.snapshot-id": "1"}
    checkpoint = tmp_path / "ck"
    assert rows_of(drain(session, checkpoint, **options)) == [(1,), (2,)]
    assert consumers.consumer("c1").next_snapshot == 1  # created where the stream started

    # Spark hands a batch's end to the source (its commit) when it plans the next batch.
    session.sql("INSERT INTO t VALUES (3)")
    assert rows_of(drain(session, checkpoint, **options)) == [(3,)]
    assert consumers.consumer("c1").next_snapshot == 3

    session.sql("INSERT INTO t VALUES (4)")
    t = table(session)
    now = int(time.time() * 1000)
    expire_snapshots(t, retain_max=1, retain_min=1, older_than_millis=now + 60_000)
    assert t.snapshot_manager.earliest_snapshot_id() == 3  # 1 and 2 went, 3 was kept

    # A new query (another checkpoint) resumes at the consumer's next snapshot.
    assert rows_of(drain(session, tmp_path / "other", **options)) == [(3,), (4,)]
    ignoring = {**options, "consumer.ignore-progress": "true", "scan.snapshot-id": "4"}
    assert rows_of(drain(session, tmp_path / "third", **ignoring)) == [(4,)]


def test_expiry_of_a_needed_snapshot_fails_the_stream_naming_it(
    session: PaimonSession, tmp_path: Path
) -> None:
    session.sql("CREATE TABLE t (id INT)")
    session.sql("INSERT INTO t VALUES (1)")
    checkpoint = tmp_path / "ck"
    assert rows_of(drain(session, checkpoint)) == [(1,)]
    for i in (2, 3, 4):
        session.sql(f"INSERT INTO t VALUES ({i})")
    t = table(session)
    expire_snapshots(
        t, retain_max=1, retain_min=1, older_than_millis=int(time.time() * 1000) + 60_000
    )
    assert t.snapshot_manager.earliest_snapshot_id() == 4

    with pytest.raises(StreamingQueryException, match=r"snapshot with id 2 .*has expired"):
        drain(session, checkpoint)


def test_min_rows_hold_a_batch_back_until_there_are_enough(
    session: PaimonSession, tmp_path: Path
) -> None:
    session.sql("CREATE TABLE t (id INT)")
    session.sql("INSERT INTO t VALUES (1)")
    options = {"read.stream.minRowsPerTrigger": "3", "read.stream.maxTriggerDelayMs": "3600000"}
    reader = session.spark.readStream.format("paimon").options(**options).load("default.t")
    query = (
        reader.writeStream.format("memory")
        .queryName("min_rows")
        .option("checkpointLocation", str(tmp_path / "ck"))
        .start()
    )

    def seen() -> list[tuple[Any, ...]]:
        query.processAllAvailable()
        return sorted(tuple(r) for r in session.spark.table("min_rows").collect())

    try:
        assert seen() == [(1,)]  # the first batch never waits
        session.sql("INSERT INTO t VALUES (2)")
        assert seen() == [(1,)]  # one row: held back
        session.sql("INSERT INTO t VALUES (3), (4)")
        assert seen() == [(1,), (2,), (3,), (4,)]
    finally:
        query.stop()
    with pytest.raises(Exception, match=r"only one of read\.stream\.minRowsPerTrigger"):
        drain(session, tmp_path / "ck2", **{"read.stream.minRowsPerTrigger": "3"})


def test_a_branch_streams_its_own_snapshots(session: PaimonSession, tmp_path: Path) -> None:
    """``db.t$branch_b`` (Paimon's branch table) streams the branch, not main."""
    session.sql("CREATE TABLE t (id INT, v STRING)")
    session.sql("INSERT INTO t VALUES (1, 'main')")
    session.sql("CALL sys.create_branch('default.t', 'b')")
    session.sql("INSERT INTO `t$branch_b` VALUES (2, 'b')")
    session.sql("INSERT INTO t VALUES (3, 'main')")
    checkpoint = tmp_path / "ck"
    assert rows_of(drain(session, checkpoint, "default.t$branch_b")) == [(2, "b")]
    session.sql("INSERT INTO `t$branch_b` VALUES (4, 'b')")
    assert rows_of(drain(session, checkpoint, "default.t$branch_b")) == [(4, "b")]

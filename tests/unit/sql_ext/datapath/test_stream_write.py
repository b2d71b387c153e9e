"""Structured Streaming into Paimon tables: one snapshot per micro-batch, exactly once."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import StreamingQueryException
from pyspark.sql import DataFrame, SparkSession

from paimon_core.catalog import FileSystemCatalog
from paimon_core.format.snapshot import CommitKind, Snapshot
from paimon_core.table import FileStoreTable
from sql_ext.datapath.stream_write import stream_sink
from sql_ext.datapath.write import STAGING_PREFIX
from sql_ext.errors import SqlError
from sql_ext.session import PaimonSession

pytestmark = pytest.mark.spark

TIMEOUT = 120


@pytest.fixture
def session(spark: SparkSession, warehouse: str) -> PaimonSession:
    return PaimonSession(spark, warehouse=warehouse)


class Source:
    """A streaming JSON file source: each ``add`` is one file, read as one micro-batch."""

    def __init__(self, spark: SparkSession, root: Path, schema: str) -> None:
        self.spark = spark
        self.dir = root / "input"
        self.dir.mkdir()
        self.schema = schema
        self.count = 0

    def add(self, *records: dict[str, Any]) -> None:
        self.count += 1
        name = self.dir / f"part-{self.count:04d}.json"
        tmp = self.dir / f".tmp-{self.count:04d}"
        tmp.write_text("".join(json.dumps(r) + "\n" for r in records))
        # Spark's file source orders files by modification time: one second apart each
        os.utime(tmp, (1_700_000_000 + self.count, 1_700_000_000 + self.count))
        tmp.rename(name)

    def stream(self) -> DataFrame:
        reader = self.spark.readStream.schema(self.schema).option("maxFilesPerTrigger", 1)
        return reader.json(str(self.dir))


def table(session: PaimonSession, name: str) -> FileStoreTable:
    return FileSystemCatalog(session.warehouse).get_table(f"default.{name}")


def snapshots(t: FileStoreTable) -> list[Snapshot]:
    return t.snapshot_manager.snapshots()


def rows(session: PaimonSession, query: str) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in session.sql(query).collect())


def run(df: DataFrame, checkpoint: Path, target: str = "default.t", mode: str = "append") -> str:
    """Run ``df`` into ``target`` until the source is drained (Trigger.AvailableNow); the
    query's id."""
    writer = df.writeStream.format("paimon").option("checkpointLocation", str(checkpoint))
    query = writer.outputMode(mode).trigger(availableNow=True).start(target)
    try:
        assert query.awaitTermination(TIMEOUT), "the query did not finish"
    finally:
        query.stop()
    return str(query.id)


def forget_batch(checkpoint: Path, batch_id: int) -> None:
    """Spark's record that ``batch_id`` completed (its commit log entry) deleted: what a
    crash between the sink's commit and that record leaves."""
    (checkpoint / "commits" / str(batch_id)).unlink()
    (checkpoint / "commits" / f".{batch_id}.crc").unlink(missing_ok=True)


def files_under(path: str) -> list[str]:
    """Every file of the table that is not metadata (data files, staging logs, ...)."""
    out = []
    for root, _dirs, names in os.walk(path):
        rel = os.path.relpath(root, path)
        if rel.split(os.sep)[0] in ("snapshot", "schema", "manifest", "index"):
            continue
        out += [os.path.join(rel, n) for n in names]
    return sorted(out)


def test_append_table_one_snapshot_per_batch_as_the_query(
    session: PaimonSession, tmp_path: Path
) -> None:
    session.sql("CREATE TABLE t (id INT, name STRING, p INT) PARTITIONED BY (p)")
    source = Source(session.spark, tmp_path, "id INT, name STRING, p INT")
    source.add({"id": 1, "name": "a", "p": 1}, {"id": 2, "name": "b", "p": 2})
    source.add({"id": 3, "name": "c", "p": 1})
    query_id = run(source.stream(), tmp_path / "ck")

    found = snapshots(table(session, "t"))
    assert [(s.commit_kind, s.commit_user, s.commit_identifier) for s in found] == [
        (CommitKind.APPEND, query_id, 0),
        (CommitKind.APPEND, query_id, 1),
    ]
    assert rows(session, "SELECT * FROM t") == [(1, "a", 1), (2, "b", 2), (3, "c", 1)]
    assert not [n for n in os.listdir(table(session, "t").path) if n.startswith(STAGING_PREFIX)]


def test_restart_from_checkpoint_resumes_without_duplicates(
    session: PaimonSession, tmp_path: Path
) -> None:
    session.sql("CREATE TABLE t (id INT, v STRING)")
    source = Source(session.spark, tmp_path, "id INT, v STRING")
    source.add({"id": 1, "v": "a"})
    first = run(source.stream(), tmp_path / "ck")
    source.add({"id": 2, "v": "b"})
    second = run(source.stream(), tmp_path / "ck")

    assert first == second  # the query id lives in the checkpoint
    assert rows(session, "SELECT * FROM t") == [(1, "a"), (2, "b")]
    found = snapshots(table(session, "t"))
    assert [(s.commit_user, s.commit_identifier) for s in found] == [(first, 0), (first, 1)]


def test_a_batch_run_again_after_a_crash_is_not_committed_twice(
    session: PaimonSession, tmp_path: Path
) -> None:
    """A crash after the commit but before Spark recorded the batch: Spark runs the batch
    again on restart (its offsets are logged, its commit entry is not)."""
    session.sql(
        "CREATE TABLE t (k INT, v INT) TBLPROPERTIES "
        "('primary-key' = 'k', 'bucket' = '2', 'merge-engine' = 'aggregation', "
        "'fields.v.aggregate-function' = 'sum')"
    )
    source = Source(session.spark, tmp_path, "k INT, v INT")
    source.add({"k": 1, "v": 10}, {"k": 2, "v": 20})
    source.add({"k": 1, "v": 5})
    checkpoint = tmp_path / "ck"
    run(source.stream(), checkpoint)
    before = snapshots(table(session, "t"))
    assert rows(session, "SELECT * FROM t") == [(1, 15), (2, 20)]

    forget_batch(checkpoint, 1)  # the crash: batch 1 committed, not recorded
    run(source.stream(), checkpoint)

    assert snapshots(table(session, "t")) == before  # no second snapshot of batch 1
    assert rows(session, "SELECT * FROM t") == [(1, 15), (2, 20)]  # sums not doubled
    assert (checkpoint / "commits" / "1").exists()  # Spark recorded it this time


@pytest.mark.parametrize(
    ("properties", "one", "two"),
    [
        ("'bucket' = '2'", ("new", None), (None, "x")),
        ("'bucket' = '-1'", ("new", None), (None, "x")),
        ("'bucket' = '1', 'merge-engine' = 'partial-update'", ("new", "b1"), ("a2", "x")),
        ("'bucket' = '2', 'merge-engine' = 'first-row'", ("a1", "b1"), ("a2", "b2")),
    ],
    ids=["fixed", "dynamic", "partial-update", "first-row"],
)
def test_primary_key_tables_are_upserted_by_batch(
    session: PaimonSession,
    tmp_path: Path,
    properties: str,
    one: tuple[Any, ...],
    two: tuple[Any, ...],
) -> None:
    session.sql(
        "CREATE TABLE t (k INT, p INT, a STRING, b STRING) PARTITIONED BY (p) "
        f"TBLPROPERTIES ('primary-key' = 'k, p', {properties})"
    )
    source = Source(session.spark, tmp_path, "k INT, p INT, a STRING, b STRING")
    # Many input rows in one batch: the sink shuffles them so each bucket has one writer.
    source.add(*[{"k": k, "p": k % 2, "a": f"a{k}", "b": f"b{k}"} for k in range(20)])
    source.add({"k": 1, "p": 1, "a": "new", "b": None}, {"k": 2, "p": 0, "a": None, "b": "x"})
    run(source.stream(), tmp_path / "ck")

    got = {(r[0], r[1]): (r[2], r[3]) for r in rows(session, "SELECT * FROM t")}
    assert len(got) == 20
    assert (got[(1, 1)], got[(2, 0)], got[(3, 1)]) == (one, two, ("a3", "b3"))
    data = [s for s in snapshots(table(session, "t")) if s.commit_kind == CommitKind.APPEND]
    assert [s.commit_identifier for s in data] == [0, 1]


def test_a_failed_batch_commits_nothing_and_leaves_no_files(
    session: PaimonSession, tmp_path: Path
) -> None:
    session.sql("CREATE TABLE t (k INT NOT NULL, v STRING) TBLPROPERTIES ('bucket' = '-1')")
    source = Source(session.spark, tmp_path, "k INT, v STRING")
    source.add({"k": 1, "v": "a"})
    run(source.stream(), tmp_path / "ck")
    t = table(session, "t")
    kept = files_under(t.path)

    source.add({"k": 2, "v": "b"}, {"k": None, "v": "null key"})
    with pytest.raises(StreamingQueryException, match="k"):
        run(source.stream(), tmp_path / "ck")

    assert len(snapshots(t)) == 1
    assert files_under(t.path) == kept  # no data file, no attempt log of the failed batch
    assert rows(session, "SELECT * FROM t") == [(1, "a")]


def test_complete_mode_replaces_the_table_with_each_result(
    session: PaimonSession, tmp_path: Path
) -> None:
    session.sql("CREATE TABLE counts (word STRING, n BIGINT)")
    source = Source(session.spark, tmp_path, "word STRING")
    source.add({"word": "a"}, {"word": "b"})
    source.add({"word": "a"})
    counts = source.stream().groupBy("word").count().withColumnRenamed("count", "n")
    run(counts.repartition(1), tmp_path / "ck", target="default.counts", mode="complete")
    # each batch overwrote: the last result alone
    assert rows(session, "SELECT * FROM counts") == [("a", 2), ("b", 1)]
    kinds = [s.commit_kind for s in snapshots(table(session, "counts"))]
    assert kinds == [CommitKind.OVERWRITE, CommitKind.OVERWRITE]


def test_update_mode_and_missing_tables_are_refused_before_the_query_starts(
    session: PaimonSession, tmp_path: Path
) -> None:
    session.sql("CREATE TABLE t (id INT)")
    stream = Source(session.spark, tmp_path, "id INT").stream()
    writer = stream.writeStream.format("paimon").option("checkpointLocation", str(tmp_path))
    with pytest.raises(SqlError, match="only Complete and Append"):
        writer.outputMode("update").start("default.t")
    with pytest.raises(Exception, match="nope"):
        writer.outputMode("append").start("default.nope")
    assert not session.spark.streams.active


def test_stream_sink_in_a_foreach_batch_of_the_users(
    session: PaimonSession, tmp_path: Path
) -> None:
    """The documented helper: a query that transforms each batch itself."""
    session.sql("CREATE TABLE t (k INT, v STRING) TBLPROPERTIES ('primary-key' = 'k')")
    source = Source(session.spark, tmp_path, "k INT, v STRING")
    source.add({"k": 1, "v": "a"}, {"k": 2, "v": "b"})
    sink = stream_sink(session.spark, "default.t")

    def each(batch: DataFrame, batch_id: int) -> None:
        sink(batch.where("k > 1"), batch_id)

    query = (
        source.stream()
        .writeStream.foreachBatch(each)
        .option("checkpointLocation", str(tmp_path / "ck"))
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(TIMEOUT)
    assert rows(session, "SELECT * FROM t") == [(2, "b")]
    assert [s.commit_user for s in snapshots(table(session, "t"))] == [str(query.id)]


def test_the_data_sources_own_stream_writer_takes_append_tables_exactly_once(
    session: PaimonSession, tmp_path: Path
) -> None:
    """Callers bypassing PySpark's DataStreamWriter reach the data source's stream writer."""
    session.sql("CREATE TABLE t (id INT, v STRING)")
    session.sql("CREATE TABLE pk (id INT, v STRING) TBLPROPERTIES ('primary-key' = 'id')")
    source = Source(session.spark, tmp_path, "id INT, v STRING")
    source.add({"id": 1, "v": "a"})
    source.add({"id": 2, "v": "b"})
    checkpoint = tmp_path / "ck"

    def start(target: str, where: Path) -> Any:
        jwriter = source.stream()._jdf.writeStream().format("paimon")
        jwriter = jwriter.option("checkpointLocation", str(where)).option("path", target)
        trigger = session.spark._jvm.org.apache.spark.sql.streaming.Trigger.AvailableNow()
        return jwriter.trigger(trigger).start()

    query = start("default.t", checkpoint)
    assert query.awaitTermination(TIMEOUT * 1000)
    t = table(session, "t")
    assert [(s.commit_user, s.commit_identifier) for s in snapshots(t)] == [
        (str(query.id().toString()), 0),
        (str(query.id().toString()), 1),
    ]
    forget_batch(checkpoint, 1)
    assert start("default.t", checkpoint).awaitTermination(TIMEOUT * 1000)
    assert len(snapshots(t)) == 2
    assert rows(session, "SELECT * FROM t") == [(1, "a"), (2, "b")]
    assert not [n for n in os.listdir(t.path) if n.startswith(STAGING_PREFIX)]

    failed = start("default.pk", tmp_path / "ck2")
    with pytest.raises(Exception, match="primary-key table"):
        failed.awaitTermination(TIMEOUT * 1000)

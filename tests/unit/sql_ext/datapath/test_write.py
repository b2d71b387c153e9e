"""The distributed write path: executors write, the driver commits once."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import textwrap
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import PaimonError
from paimon_core.format.data_file_index import DataFileIndexWriter
from paimon_core.format.file_index import file_index_options
from paimon_core.operations.dynamic_bucket import deserialize_hash_index, index_file_path
from paimon_core.table import FileStoreTable
from sql_ext.datapath import source
from sql_ext.datapath.write import STAGING_PREFIX, WriteJob, _route, conform
from sql_ext.errors import SqlError
from sql_ext.session import PaimonSession
from tests.conftest import ROOT
from tests.interop.helpers import json_rows, pypaimon_read, pypaimon_write, rows

pytestmark = pytest.mark.spark


@pytest.fixture
def session(spark: SparkSession, warehouse: str) -> PaimonSession:
    return PaimonSession(spark, warehouse=warehouse)


def table(session: PaimonSession, name: str) -> FileStoreTable:
    return FileSystemCatalog(session.warehouse).get_table(f"default.{name}")


def files(path: str) -> list[str]:
    """Every file under ``path`` that is not metadata (data files and anything else)."""
    out = []
    for root, _dirs, names in os.walk(path):
        rel = os.path.relpath(root, path)
        if rel.split(os.sep)[0] in ("snapshot", "schema", "manifest", "index"):
            continue
        out += [os.path.join(rel, n) for n in names]
    return sorted(out)


def data_files(path: str) -> list[str]:
    return [f for f in files(path) if f.endswith(".parquet")]


def staging_left(t: FileStoreTable) -> list[str]:
    return [n for n in os.listdir(t.path) if n.startswith(STAGING_PREFIX)]


def spread(session: PaimonSession, view: str, data: list[tuple[Any, ...]], schema: str) -> None:
    """``data`` as a temp view over 4 Spark partitions (rows dealt round robin)."""
    df = session.spark.createDataFrame(data, schema).repartition(4)
    assert df.rdd.getNumPartitions() == 4
    df.createOrReplaceTempView(view)


def test_append_insert_is_one_snapshot_from_many_tasks(session: PaimonSession) -> None:
    session.sql("CREATE TABLE app (id BIGINT, name STRING, p INT) PARTITIONED BY (p)")
    data = [(i, f"n{i}", i % 3) for i in range(40)]
    spread(session, "src_app", data, "id BIGINT, name STRING, p INT")
    session.sql("INSERT INTO app SELECT * FROM src_app")
    t = table(session, "app")
    assert t.latest_snapshot().snapshot_id == 1
    # The writer's larger Arrow batches were the job's only: the session's setting is back.
    assert session.spark.conf.get("spark.sql.execution.arrow.maxRecordsPerBatch") == "10000"
    assert rows(t.to_arrow(), ["id", "name", "p"]) == sorted(data)
    assert staging_left(t) == []


def test_primary_key_buckets_have_one_writer_and_distinct_sequences(
    session: PaimonSession,
) -> None:
    session.sql(
        "CREATE TABLE pk (k INT, v STRING, PRIMARY KEY (k) NOT ENFORCED) "
        "TBLPROPERTIES ('bucket' = '2')"
    )
    # Every key twice, the copies in different Spark partitions.
    data = [(k, f"a{k}") for k in range(30)] + [(k, f"b{k}") for k in range(30)]
    spread(session, "src_pk", data, "k INT, v STRING")
    for _ in range(2):
        session.sql("INSERT INTO pk SELECT * FROM src_pk")
    t = table(session, "pk")
    entries = list(t.new_scan().read_entries(t.latest_snapshot()))
    by_bucket: dict[int, list[tuple[int, int]]] = {}
    for e in entries:
        by_bucket.setdefault(e.bucket, []).append(
            (e.file.min_sequence_number, e.file.max_sequence_number)
        )
    assert sorted(by_bucket) == [0, 1]
    for ranges in by_bucket.values():
        assert len(ranges) == 2  # one file per INSERT: one writer per bucket
        (_, hi1), (lo2, _) = sorted(ranges)
        assert hi1 < lo2  # the second INSERT continues after the first
    got = rows(t.to_arrow(), ["k"])
    assert got == [(k,) for k in range(30)]
    # A fixed number of writer tasks: adaptive execution would coalesce them below the cores.
    routed = _route(WriteJob.start(t, False), conform(t, session.spark.table("src_pk")))
    assert "REPARTITION_BY_NUM" in routed._jdf.queryExecution().executedPlan().toString()


def test_dynamic_bucket_index_has_one_owner_per_partition(session: PaimonSession) -> None:
    session.sql(
        "CREATE TABLE dyn (k INT, p INT, v STRING, PRIMARY KEY (p, k) NOT ENFORCED) "
        "PARTITIONED BY (p) TBLPROPERTIES ('bucket' = '-1', "
        "'dynamic-bucket.target-row-num' = '5')"
    )
    data = [(k, k % 2, f"v{k}") for k in range(40)]
    spread(session, "src_dyn", data, "k INT, p INT, v STRING")
    session.sql("INSERT INTO dyn SELECT * FROM src_dyn")
    session.sql("INSERT INTO dyn SELECT k, p, concat(v, 'x') FROM src_dyn WHERE k < 10")
    t = table(session, "dyn")
    index = t.index_manifest_file.read(t.latest_snapshot().index_manifest)
    per_partition: dict[bytes, list[Any]] = {}
    for e in index:
        per_partition.setdefault(e.partition, []).append(e)
    assert len(per_partition) == 2
    for entries in per_partition.values():
        hashes = [
            deserialize_hash_index(t.file_io.read_bytes(index_file_path(t.path, e)))
            for e in entries
        ]
        assert sum(len(h) for h in hashes) == 20  # every key in exactly one bucket
        assert len(set().union(*(set(h.tolist()) for h in hashes))) == 20
        assert all(len(h) <= 5 for h in hashes)
    expected = sorted((k, k % 2, f"v{k}x" if k < 10 else f"v{k}") for k in range(40))
    assert rows(t.to_arrow(), ["k", "p", "v"]) == expected


def test_overwrite_forms(session: PaimonSession, spark: SparkSession) -> None:
    session.sql("CREATE TABLE ow (id INT, p STRING) PARTITIONED BY (p)")
    session.sql("INSERT INTO ow VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    session.sql("INSERT OVERWRITE ow PARTITION (p = 'a') SELECT 10")
    assert rows(table(session, "ow").to_arrow()) == [(2, "b"), (3, "c"), (10, "a")]
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    try:
        session.sql("INSERT OVERWRITE ow SELECT 20, 'b'")
    finally:
        spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
    assert rows(table(session, "ow").to_arrow()) == [(3, "c"), (10, "a"), (20, "b")]
    session.sql("INSERT OVERWRITE ow SELECT 30, 'd'")
    assert rows(table(session, "ow").to_arrow()) == [(30, "d")]
    assert [s.commit_kind.name for s in table(session, "ow").snapshot_manager.snapshots()][1:] == [
        "OVERWRITE"
    ] * 3


def test_failed_task_commits_nothing_and_leaves_no_files(session: PaimonSession) -> None:
    session.sql("CREATE TABLE bad (id BIGINT, name STRING)")
    spread(session, "src_bad", [(i, f"n{i}") for i in range(40)], "id BIGINT, name STRING")
    before = files(table(session, "bad").path)
    with pytest.raises(SqlError, match=r"Cannot write to default\.bad: .*boom"):
        session.sql(
            "INSERT INTO bad SELECT id, IF(id = 37, raise_error('boom'), name) FROM src_bad"
        )
    t = table(session, "bad")
    assert t.latest_snapshot() is None
    assert files(t.path) == before == []
    # An error of the core raised in a task comes back with its type and message.
    with pytest.raises(PaimonError, match="exceeds VARCHAR\\(2\\)"):
        session.sql("CREATE TABLE narrow (s VARCHAR(2))")
        session.sql("INSERT INTO narrow SELECT name FROM src_bad")
    assert files(table(session, "narrow").path) == []


def test_attempt_that_lost_leaves_no_file(warehouse: str) -> None:
    """Two attempts of one task write the same rows (a retry, a speculative copy): only the
    collected one's files stay; the other's are removed, found through its attempt log."""
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", True)
    schema = pa.schema([pa.field("k", pa.int32(), False), ("v", pa.string())])
    t = catalog.create_table("db.t", schema, primary_keys=["k"], options={"bucket": "1"})
    job = WriteJob.start(t, False)
    batch = pa.record_batch([pa.array([1, 2], pa.int32()), pa.array(["a", "b"])], schema=schema)
    winner = job.write([batch])
    loser = job.write([batch])
    assert winner is not None and loser is not None
    assert len(data_files(t.path)) == 2
    job.commit([winner], False)
    assert len(data_files(t.path)) == 1
    assert rows(t.to_arrow()) == [(1, "a"), (2, "b")]
    assert staging_left(t) == []


def test_types_decimal_timestamps_char_read_by_java_and_pypaimon(
    session: PaimonSession, oracle: Any
) -> None:
    session.sql(
        "CREATE TABLE ty (id INT, d DECIMAL(38, 10), ltz TIMESTAMP, ntz TIMESTAMP_NTZ, c CHAR(4))"
    )
    session.sql(
        "INSERT INTO ty VALUES (1, 1234567890123456789012345678.0123456789, "
        "TIMESTAMP'2024-01-02 03:04:05.123456', TIMESTAMP_NTZ'2024-05-06 07:08:09.654321', 'ab'),"
        "(2, -0.0000000001, NULL, NULL, NULL)"
    )
    expected = [
        (
            1,
            Decimal("1234567890123456789012345678.0123456789"),
            dt.datetime(2024, 1, 2, 3, 4, 5, 123456),
            dt.datetime(2024, 5, 6, 7, 8, 9, 654321),
            "ab  ",
        ),
        (2, Decimal("-0.0000000001"), None, None, None),
    ]
    ours = [tuple(r) for r in session.sql("SELECT * FROM ty ORDER BY id").collect()]
    assert ours == expected
    got = pypaimon_read(session.warehouse, "default.ty").to_pylist()
    assert sorted((r["id"], r["d"], r["c"]) for r in got) == [
        (i, d, c) for i, d, _, _, c in expected
    ]
    assert min(got, key=lambda r: r["id"])["ntz"] == expected[0][3]
    java = oracle("read", session.warehouse, "default.ty")
    assert sorted((r["id"], r["c"]) for r in java) == [(1, "ab  "), (2, None)]
    assert {str(r["d"]) for r in java} == {"1234567890123456789012345678.0123456789", "-1E-10"} or {
        Decimal(str(r["d"])) for r in java
    } == {expected[0][1], expected[1][1]}


def test_insert_appends_to_tables_pypaimon_and_java_wrote(
    session: PaimonSession, oracle: Any
) -> None:
    data = pa.table({"k": pa.array([1, 2, 3], pa.int64()), "v": ["a", "b", "c"]})
    pypaimon_write(
        session.warehouse,
        "default.py_pk",
        data,
        create={"primary_keys": ["k"], "options": {"bucket": "2"}},
    )
    spread(session, "src_up", [(2, "B"), (4, "d"), (2, "B")], "k BIGINT, v STRING")
    session.sql("INSERT INTO py_pk SELECT * FROM src_up")
    expected = [(1, "a"), (2, "B"), (3, "c"), (4, "d")]
    assert rows(pypaimon_read(session.warehouse, "default.py_pk"), ["k", "v"]) == expected
    assert json_rows(oracle("read", session.warehouse, "default.py_pk"), ["k", "v"]) == expected

    session.sql("CREATE TABLE j_app (k BIGINT, v STRING)")
    oracle("write", session.warehouse, "default.j_app", "--json-rows", '[{"k": 1, "v": "j"}]')
    session.sql("INSERT INTO j_app VALUES (2, 's')")
    assert json_rows(oracle("read", session.warehouse, "default.j_app"), ["k", "v"]) == [
        (1, "j"),
        (2, "s"),
    ]
    # (pypaimon 2.1 cannot read manifests Paimon 0.9 wrote: no _VALUE_STATS_COLS.)
    assert rows(table(session, "j_app").to_arrow()) == [(1, "j"), (2, "s")]


def test_dataframe_api_append_and_overwrite(session: PaimonSession, spark: SparkSession) -> None:
    source.register(spark)  # no defaults: the warehouse comes as an option
    session.sql("CREATE TABLE dfa (id BIGINT, p STRING) PARTITIONED BY (p)")
    wh = session.warehouse
    df = spark.createDataFrame(
        [(i, "a" if i % 2 else "b") for i in range(6)], "id BIGINT, p STRING"
    )
    df.repartition(3).write.format("paimon").option("warehouse", wh).mode("append").save(
        "default.dfa"
    )
    t = table(session, "dfa")
    assert t.latest_snapshot().snapshot_id == 1 and len(rows(t.to_arrow())) == 6
    one = spark.createDataFrame([(100, "a")], "id BIGINT, p STRING")
    writer = one.write.format("paimon").option("warehouse", wh).mode("overwrite")
    writer.option("partitionOverwriteMode", "dynamic").save("default.dfa")
    assert rows(table(session, "dfa").to_arrow()) == [(0, "b"), (2, "b"), (4, "b"), (100, "a")]
    one.write.format("paimon").option("warehouse", wh).mode("overwrite").save("default.dfa")
    assert rows(table(session, "dfa").to_arrow()) == [(100, "a")]
    with pytest.raises(SqlError, match=r"cannot save to default\.dfa in mode ErrorIfExists"):
        one.write.format("paimon").option("warehouse", wh).save("default.dfa")
    assert staging_left(table(session, "dfa")) == []


def _added(t: FileStoreTable, snapshot_id: int) -> dict[tuple[bytes, int], list[tuple[int, int]]]:
    """(partition, bucket) -> sequence ranges of the files ``snapshot_id`` added."""
    snapshot = t.snapshot_manager.snapshot(snapshot_id)
    out: dict[tuple[bytes, int], list[tuple[int, int]]] = {}
    for e in t.new_scan().read_all_entries([snapshot.delta_manifest_list]):
        seq = (e.file.min_sequence_number, e.file.max_sequence_number)
        out.setdefault((e.partition, e.bucket), []).append(seq)
    return out


def test_dataframe_api_upserts_primary_key_tables_one_writer_per_bucket(
    session: PaimonSession, spark: SparkSession
) -> None:
    """As Paimon-Spark: append is an upsert, shuffled by (partition, bucket) as INSERT is;
    overwrite replaces the table, or the partitions written when partitionOverwriteMode is
    dynamic; pypaimon reads the result."""
    session.sql(
        "CREATE TABLE dpk (k INT NOT NULL, v STRING, p STRING, PRIMARY KEY (p, k) NOT ENFORCED) "
        "PARTITIONED BY (p) TBLPROPERTIES ('bucket' = '2')"
    )
    schema = "k INT, v STRING, p STRING"
    first = [(k, f"a{k}", "x" if k % 2 else "y") for k in range(24)]
    spark.createDataFrame(first, schema).repartition(4).write.format("paimon").mode("append").save(
        "default.dpk"
    )
    upsert = [(k, f"b{k}", "x" if k % 2 else "y") for k in range(0, 24, 3)]
    spark.createDataFrame(upsert, schema).repartition(4).write.format("paimon").mode("append").save(
        "default.dpk"
    )
    t = table(session, "dpk")
    assert t.latest_snapshot().snapshot_id == 2
    for snapshot_id in (1, 2):  # every bucket written once per statement, sequences apart
        added = _added(t, snapshot_id)
        assert len(added) == 4 and all(len(ranges) == 1 for ranges in added.values())
    for key in _added(t, 1):
        ((_, high),), ((low, _),) = _added(t, 1)[key], _added(t, 2)[key]
        assert high < low
    expected = sorted({(k, v, p) for k, v, p in first if k % 3} | set(upsert))
    assert rows(pypaimon_read(session.warehouse, "default.dpk"), ["k", "v", "p"]) == expected
    assert [tuple(r) for r in session.sql("SELECT * FROM dpk ORDER BY k").collect()] == expected

    session.spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    try:
        new = spark.createDataFrame([(100, "o", "x")], schema)
        new.write.format("paimon").mode("overwrite").save("default.dpk")
    finally:
        session.spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
    remaining = [r for r in expected if r[2] == "y"] + [(100, "o", "x")]
    assert rows(table(session, "dpk").to_arrow(), ["k", "v", "p"]) == sorted(remaining)
    new.write.format("paimon").mode("overwrite").save("default.dpk")
    assert rows(table(session, "dpk").to_arrow(), ["k", "v", "p"]) == [(100, "o", "x")]


def test_dataframe_api_writes_dynamic_bucket_tables(
    session: PaimonSession, spark: SparkSession
) -> None:
    session.sql(
        "CREATE TABLE ddyn (k INT NOT NULL, v STRING, PRIMARY KEY (k) NOT ENFORCED) "
        "TBLPROPERTIES ('bucket' = '-1', 'dynamic-bucket.target-row-num' = '4')"
    )
    data = spark.createDataFrame([(k, f"v{k}") for k in range(10)], "k INT, v STRING")
    data.repartition(3).write.format("paimon").mode("append").save("default.ddyn")
    again = spark.createDataFrame([(k, f"w{k}") for k in range(0, 10, 2)], "k INT, v STRING")
    again.repartition(3).write.format("paimon").mode("append").save("default.ddyn")
    expected = [(k, f"w{k}" if k % 2 == 0 else f"v{k}") for k in range(10)]
    assert rows(pypaimon_read(session.warehouse, "default.ddyn"), ["k", "v"]) == expected


def test_dataframe_api_failed_job_commits_nothing(
    session: PaimonSession, spark: SparkSession
) -> None:
    session.sql(
        "CREATE TABLE dbad (k INT NOT NULL, v STRING, PRIMARY KEY (k) NOT ENFORCED) "
        "TBLPROPERTIES ('bucket' = '2')"
    )
    bad = spark.range(0, 40, 1, 4).selectExpr(
        "CAST(id AS INT) AS k", "IF(id = 37, raise_error('boom'), 'v') AS v"
    )
    with pytest.raises(SqlError, match=r"Cannot write to default\.dbad: .*boom"):
        bad.write.format("paimon").mode("append").save("default.dbad")
    t = table(session, "dbad")
    assert t.latest_snapshot() is None and files(t.path) == []


def test_data_source_writer_without_dataframe_writer_refuses_primary_key(
    session: PaimonSession, spark: SparkSession
) -> None:
    """A save that does not pass PySpark's DataFrameWriter.save reaches the data source's own
    writer, which cannot shuffle: it writes append tables and refuses primary-key tables."""
    from pyspark.sql.readwriter import DataFrameWriter

    session.sql(
        "CREATE TABLE dfpk (id BIGINT, PRIMARY KEY (id) NOT ENFORCED) TBLPROPERTIES ('bucket' = '1')"
    )
    session.sql("CREATE TABLE dfap (id BIGINT)")
    unrouted = DataFrameWriter.save.__wrapped__  # type: ignore[attr-defined]
    unrouted(spark.range(3).write.format("paimon").mode("append"), "default.dfap")
    assert rows(table(session, "dfap").to_arrow()) == [(0,), (1,), (2,)]
    with pytest.raises(Exception, match=r"cannot write primary-key table default\.dfpk"):
        unrouted(spark.range(3).write.format("paimon").mode("append"), "default.dfpk")
    assert table(session, "dfpk").latest_snapshot() is None


def test_local_cluster_executors_write(tmp_path: Path) -> None:
    """Separate executor JVMs (and their Python workers) get the job by pickle: batch
    writes, a DataFrame save, and a stream read from one table written into another."""
    script = tmp_path / "job.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import sys
            from pyspark.sql import SparkSession
            from sql_ext.session import PaimonSession
            spark = (SparkSession.builder.master("local-cluster[2,1,1024]")
                     .config("spark.ui.enabled", "false").getOrCreate())
            s = PaimonSession(spark, warehouse={str(tmp_path / "wh")!r})
            s.sql("CREATE TABLE t (k INT, v STRING, PRIMARY KEY (k) NOT ENFORCED) "
                  "TBLPROPERTIES ('bucket' = '2')")
            spark.range(0, 100, 1, 4).selectExpr("CAST(id % 50 AS INT) AS k", "CAST(id AS STRING) AS v") \\
                .createOrReplaceTempView("src")
            s.sql("INSERT INTO t SELECT * FROM src")
            print("ROWS", s.sql("SELECT count(*), count(DISTINCT k) FROM t").collect()[0][:])
            spark.range(0, 10, 1, 3).selectExpr("CAST(id AS INT) AS k", "'new' AS v") \
                .write.format("paimon").mode("append").save("default.t")
            print("UPSERT", s.sql("SELECT count(*), count_if(v = 'new') FROM t").collect()[0][:])
            # Structured Streaming on executors: t's snapshots streamed into a second table
            s.sql("CREATE TABLE t2 (k INT, v STRING, PRIMARY KEY (k) NOT ENFORCED) "
                  "TBLPROPERTIES ('bucket' = '2')")
            stream = (spark.readStream.format("paimon")
                      .option("scan.mode", "latest-full").load("default.t"))
            query = (stream.writeStream.format("paimon")
                     .option("checkpointLocation", {str(tmp_path / "ck")!r})
                     .trigger(availableNow=True).start("default.t2"))
            query.awaitTermination()
            print("STREAMED", s.sql("SELECT count(*), count_if(v = 'new') FROM t2").collect()[0][:])
            spark.stop()
            """
        )
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYSPARK_PYTHON": sys.executable}
    proc = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, check=False
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "ROWS (50, 50)" in proc.stdout
    assert "UPSERT (50, 10)" in proc.stdout  # df.write's upsert, shuffled on the executors
    assert "STREAMED (50, 10)" in proc.stdout  # readStream and writeStream on executors


def test_insert_expires_old_partitions_as_paimons_committer(
    session: PaimonSession, warehouse: str, oracle: Any
) -> None:
    """Paimon-Spark's own test setup: a 999-day check interval never falls due in a batch
    INSERT, ``end-input.check-partition-expire`` checks after it; a zero interval always."""
    session.sql(
        "CREATE TABLE T (id INT, v STRING, dt STRING) PARTITIONED BY (dt) TBLPROPERTIES ("
        "'partition.expiration-time' = '7 d', 'partition.timestamp-formatter' = 'yyyyMMdd', "
        "'partition.expiration-check-interval' = '999 d')"
    )
    today = dt.date.today().strftime("%Y%m%d")
    session.sql(f"INSERT INTO T VALUES (1, 'old', '20200101'), (1, 'new', '{today}')")
    assert sorted(r[0] for r in session.sql("SELECT dt FROM T").collect()) == ["20200101", today]
    session.sql("ALTER TABLE T SET TBLPROPERTIES ('end-input.check-partition-expire' = 'true')")
    session.sql(f"INSERT INTO T VALUES (2, 'new', '{today}')")
    assert [tuple(r) for r in session.sql("SELECT id, dt FROM T ORDER BY id").collect()] == [
        (1, today),
        (2, today),
    ]
    kinds = session.sql("SELECT commit_kind FROM `T$snapshots` ORDER BY snapshot_id").collect()
    assert [r[0] for r in kinds] == ["APPEND", "APPEND", "OVERWRITE"]
    assert sorted(r["id"] for r in oracle("read", warehouse, "default.T")) == [1, 2]
    session.sql("ALTER TABLE T UNSET TBLPROPERTIES ('end-input.check-partition-expire')")
    session.sql("ALTER TABLE T SET TBLPROPERTIES ('partition.expiration-check-interval' = '0 s')")
    session.sql("INSERT INTO T VALUES (3, 'old', '20200102')")
    assert session.sql("SELECT count(*) FROM T WHERE dt < '2021'").collect()[0][0] == 0


def test_executors_write_the_file_indexes_java_reads(session: PaimonSession, oracle: Any) -> None:
    """Each task's files carry the indexes the table declares (embedded or ``.index``, the
    latter logged and kept as the data files are); Java reads the table."""
    session.sql(
        "CREATE TABLE ix (k INT, s STRING) TBLPROPERTIES ("
        "'file-index.bloom-filter.columns' = 's', 'file-index.bitmap.columns' = 'k', "
        "'file-index.in-manifest-threshold' = '64 b')"
    )
    spread(session, "src", [(i, f"s{i}") for i in range(40)], "k INT, s STRING")
    session.sql("INSERT INTO ix SELECT * FROM src")
    t = table(session, "ix")
    entries = t.new_scan().read_entries(t.latest_snapshot())
    assert len(entries) > 1 and staging_left(t) == []
    options = file_index_options(t.options)
    for e in entries:
        (name,) = e.file.extra_files
        assert name == e.file.file_name + ".index" and e.file.embedded_index is None
        directory = os.path.join(t.path, "bucket-0")
        writer = DataFileIndexWriter(t.schema.fields, options)
        writer.write(pq.ParquetFile(os.path.join(directory, e.file.file_name)).read())
        with open(os.path.join(directory, name), "rb") as f:
            assert f.read() == writer.container()
    got = oracle("read", session.warehouse, "default.ix")
    assert sorted(r["k"] for r in got) == list(range(40))
    assert [r[0] for r in session.sql("SELECT k FROM ix WHERE s = 's7'").collect()] == [7]


class Interrupt(BaseException):
    """A Ctrl-C arriving in a commit's post-commit maintenance."""


def _interrupting(*_args: Any) -> None:
    raise Interrupt()


def test_an_interrupt_after_the_insert_published_keeps_its_files(
    session: PaimonSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The write job's failure cleanup must not delete files a published snapshot names."""
    session.sql("CREATE TABLE pub (id INT, p INT) PARTITIONED BY (p)")
    spread(session, "src_pub", [(i, i % 2) for i in range(8)], "id INT, p INT")
    monkeypatch.setattr("paimon_core.lifecycle.post_commit.auto_create_tags", _interrupting)
    with pytest.raises(Interrupt):
        session.sql("INSERT INTO pub SELECT * FROM src_pub")
    monkeypatch.undo()
    t = table(session, "pub")
    assert t.latest_snapshot().snapshot_id == 1
    assert sorted(t.to_arrow().column("id").to_pylist()) == list(range(8))
    assert staging_left(t) == []


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO race VALUES (2, 'new'), (3, 'new')",
        "UPDATE race SET v = 'new' WHERE k = 2",
        "MERGE INTO race USING (SELECT 2 AS k, 'new' AS v) s ON race.k = s.k "
        "WHEN MATCHED THEN UPDATE SET v = s.v",
    ],
)
def test_a_write_whose_compaction_loses_a_race_keeps_the_committed_data(
    session: PaimonSession, monkeypatch: pytest.MonkeyPatch, statement: str
) -> None:
    """Issue 19.1: a CALL sys.compact between the tasks and the commit makes the writer's
    compaction conflict after the data snapshot was published; the statement fails with
    that said, and the job's cleanup deletes none of the published snapshot's files."""
    from paimon_core.operations.commit import FileStoreCommit
    from paimon_core.operations.compact import compact_table

    session.sql(
        "CREATE TABLE race (k INT, v STRING) TBLPROPERTIES ('primary-key' = 'k', "
        "'bucket' = '1', 'num-sorted-run.compaction-trigger' = '2')"
    )
    session.sql("INSERT INTO race VALUES (1, 'old'), (2, 'old')")
    commit = FileStoreCommit.commit

    def race_then_commit(self: FileStoreCommit, messages: Any, *a: Any, **kw: Any) -> Any:
        assert any(m.has_compaction for m in messages)
        compact_table(table(session, "race"), full=True)
        return commit(self, messages, *a, **kw)

    monkeypatch.setattr(FileStoreCommit, "commit", race_then_commit)
    with pytest.raises(PaimonError) as info:
        session.sql(statement)
    monkeypatch.undo()
    t = table(session, "race")
    got = dict(zip(*t.to_arrow().select(["k", "v"]).to_pydict().values(), strict=True))
    assert got[2] == "new" and got[1] == "old"
    assert staging_left(t) == []
    assert f"data was committed as snapshot {t.latest_snapshot().snapshot_id}" in str(info.value)

"""Reads executed by Spark executors: merges, pruning, pinned snapshots, types, the DataFrame API."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from paimon_core.operations.time_travel import travel_table
from sql_ext import views
from sql_ext.datapath import read, scan, source
from sql_ext.session import PaimonSession
from sql_ext.spark_types import arrow_for_spark, to_spark_schema

ROOT = Path(__file__).resolve().parents[4]


@pytest.fixture
def session(spark: SparkSession, warehouse: str) -> Iterator[PaimonSession]:
    """A session on the shared SparkSession; its pinned views are dropped afterwards."""
    paimon = PaimonSession(spark, warehouse=warehouse)
    yield paimon
    paimon.stop()


@pytest.fixture
def plans(monkeypatch: pytest.MonkeyPatch) -> list[read.ReadPlan]:
    """Every read the session plans, in order."""
    planned: list[read.ReadPlan] = []

    def recording(*args: Any, **kwargs: Any) -> read.ReadPlan:
        plan = read.plan_read(*args, **kwargs)
        planned.append(plan)
        return plan

    monkeypatch.setattr(views, "plan_read", recording)
    monkeypatch.setattr(scan, "plan_read", recording)  # `plan_table`
    return planned


def rows(session: PaimonSession, sql: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in session.sql(sql).collect()]


def _partitioned(session: PaimonSession) -> None:
    session.sql("CREATE TABLE t (id BIGINT, name STRING, x DOUBLE, p INT) PARTITIONED BY (p)")
    session.sql("INSERT INTO t VALUES (1, 'a', 1.0, 1), (2, 'b', 2.0, 2), (3, 'c', 3.0, 3)")
    session.sql("INSERT INTO t VALUES (4, 'd', 4.0, 1), (5, 'e', 50.0, 2)")


def test_append_table_reads_every_row(session: PaimonSession) -> None:
    _partitioned(session)
    assert rows(session, "SELECT id, name, x, p FROM t ORDER BY id") == [
        (1, "a", 1.0, 1),
        (2, "b", 2.0, 2),
        (3, "c", 3.0, 3),
        (4, "d", 4.0, 1),
        (5, "e", 50.0, 2),
    ]
    assert rows(session, "SELECT count(*), sum(x) FROM t") == [(5, 60.0)]


def test_partition_filter_prunes_partitions_and_columns(
    session: PaimonSession, plans: list[read.ReadPlan]
) -> None:
    _partitioned(session)
    plans.clear()
    assert rows(session, "SELECT sum(x) FROM t WHERE p = 1") == [(5.0,)]
    (plan,) = plans
    assert plan.columns == ("x", "p")
    assert {s.partition_values for s in plan.splits} == {(1,)}
    assert len(plan.splits) == 2  # one task per file of partition p=1


def test_count_star_reads_no_column_and_stats_prune_files(
    session: PaimonSession, plans: list[read.ReadPlan]
) -> None:
    _partitioned(session)
    plans.clear()
    assert rows(session, "SELECT count(*) FROM t LIMIT 1") == [(5,)]  # LIMIT: not pushed down
    assert plans[-1].columns == () and len(plans[-1].splits) == 5
    assert rows(session, "SELECT name FROM t WHERE id > 4") == [("e",)]
    assert plans[-1].columns == ("id", "name")
    (split,) = plans[-1].splits  # the min/max of id exclude the other four files
    assert split.partition_values == (2,) and split.row_count == 1


def test_star_and_joins_read_all_columns_without_pruning(
    session: PaimonSession, plans: list[read.ReadPlan]
) -> None:
    _partitioned(session)
    plans.clear()
    assert len(session.sql("SELECT * FROM t WHERE p = 2").collect()) == 2
    assert plans[-1].columns == ("id", "name", "x", "p") and len(plans[-1].splits) == 2
    got = rows(session, "SELECT a.id FROM t a LEFT JOIN t b ON a.id = b.id + 1 WHERE b.p IS NULL")
    assert got == [(1,)]
    assert [len(p.splits) for p in plans[-2:]] == [5, 5]


def test_primary_key_buckets_merge_on_executors(session: PaimonSession) -> None:
    session.sql(
        "CREATE TABLE pk (k INT NOT NULL, v STRING, p STRING, PRIMARY KEY (p, k) NOT ENFORCED) "
        "PARTITIONED BY (p) TBLPROPERTIES ('bucket' = '2')"
    )
    session.sql("INSERT INTO pk VALUES (1, 'a', 'x'), (2, 'b', 'x'), (3, 'c', 'y')")
    session.sql("INSERT INTO pk VALUES (2, 'b2', 'x'), (3, 'c2', 'y'), (4, 'd', 'y')")
    table = session.catalog.get_table("default.pk")
    table.write_arrow(
        pa.table({"k": pa.array([1], pa.int32()), "v": ["gone"], "p": ["x"]}),
        row_kinds=pa.array([3], pa.int8()),
    )
    assert rows(session, "SELECT k, v FROM pk ORDER BY k") == [(2, "b2"), (3, "c2"), (4, "d")]
    assert rows(session, "SELECT count(*) FROM pk") == [(3,)]
    assert rows(session, "SELECT v FROM pk WHERE k = 2") == [("b2",)]


def test_sequence_field_decides_the_winner(session: PaimonSession) -> None:
    session.sql(
        "CREATE TABLE sq (k INT NOT NULL, v STRING, s INT, PRIMARY KEY (k) NOT ENFORCED) "
        "TBLPROPERTIES ('bucket' = '1', 'sequence.field' = 's')"
    )
    session.sql("INSERT INTO sq VALUES (1, 'new', 9), (2, 'old', 1)")
    session.sql("INSERT INTO sq VALUES (1, 'late', 3), (2, 'newer', 2)")
    assert rows(session, "SELECT k, v FROM sq ORDER BY k") == [(1, "new"), (2, "newer")]


def test_dynamic_bucket_table_with_deletes(session: PaimonSession) -> None:
    session.sql(
        "CREATE TABLE dyn (k BIGINT NOT NULL, v STRING, PRIMARY KEY (k) NOT ENFORCED) "
        "TBLPROPERTIES ('bucket' = '-1')"
    )
    session.sql("INSERT INTO dyn VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    session.sql("INSERT INTO dyn VALUES (2, 'b2')")
    session.catalog.get_table("default.dyn").write_arrow(
        pa.table({"k": pa.array([3], pa.int64()), "v": ["c"]}), row_kinds=pa.array([3], pa.int8())
    )
    assert rows(session, "SELECT * FROM dyn ORDER BY k") == [(1, "a"), (2, "b2")]


def test_a_dataframe_gives_the_same_answer_every_time(session: PaimonSession) -> None:
    _partitioned(session)
    filtered = session.sql("SELECT count(*) FROM t WHERE p = 1")
    whole = session.sql("SELECT count(*) FROM t")
    assert filtered.collect()[0][0] == 2 and whole.collect()[0][0] == 5
    session.sql("INSERT INTO t VALUES (6, 'f', 6.0, 1)")
    assert filtered.collect()[0][0] == 2 and whole.collect()[0][0] == 5
    assert whole.collect()[0][0] == 5  # a third time: still the snapshot of .sql()
    assert rows(session, "SELECT count(*) FROM t") == [(6,)]
    assert rows(session, "SELECT count(*) FROM t WHERE p = 1") == [(3,)]


def test_python_source_dataframes_give_the_same_answer_after_a_filter(
    spark: SparkSession, session: PaimonSession
) -> None:
    """PySpark caches the partitions a Python data source planned on its relation: a count
    after a filtered count of the same DataFrame must still count every row (the plan never
    depends on the filters). Primary-key tables are read through the source."""
    session.sql(
        "CREATE TABLE kp (k INT NOT NULL, p INT, PRIMARY KEY (p, k) NOT ENFORCED) "
        "PARTITIONED BY (p) TBLPROPERTIES ('bucket' = '2')"
    )
    session.sql("INSERT INTO kp VALUES (1, 1), (2, 1), (3, 2), (4, 2), (5, 3)")
    whole = session.sql("SELECT * FROM kp")
    assert whole.where("p = 1").count() == 2 and whole.count() == 5
    assert whole.where("k > 3").count() == 2 and whole.count() == 5
    loaded = spark.read.format("paimon").load("default.kp")
    assert loaded.where("p = 2").count() == 2 and loaded.count() == 5


def test_python_source_splits_are_packed_into_few_tasks(
    session: PaimonSession, plans: list[read.ReadPlan]
) -> None:
    """A task of a Python data source costs a Python worker round: small buckets share one,
    as Spark packs small files (here 3 partitions x 2 buckets, 6 splits, in 2 or 3 tasks)."""
    session.sql(
        "CREATE TABLE kq (k INT NOT NULL, p INT, PRIMARY KEY (p, k) NOT ENFORCED) "
        "PARTITIONED BY (p) TBLPROPERTIES ('bucket' = '2')"
    )
    session.sql("INSERT INTO kq SELECT CAST(id AS INT), CAST(id % 3 AS INT) FROM range(60)")
    scan = session.sql("SELECT k FROM kq")
    assert len(plans[-1].splits) == 6
    assert 2 <= scan.rdd.getNumPartitions() <= 3  # ~ total size / defaultParallelism (2)
    assert sorted(r[0] for r in scan.collect()) == list(range(60))
    groups = read.pack_splits(plans[-1].splits, 1, 0)
    assert len(groups) == 6  # a split is never divided, whatever the size
    assert read.pack_splits(plans[-1].splits, 0, 0) == [(s,) for s in plans[-1].splits]


def test_statements_planning_the_same_files_share_one_spark_dataframe(
    spark: SparkSession, session: PaimonSession
) -> None:
    """Making Spark's Parquet DataFrame is most of a short statement's driver time; data
    files never change, so the same files give the same DataFrame, until a commit."""
    _partitioned(session)
    frames = read._PARQUET_FRAMES.setdefault(spark, read.OrderedDict())

    def ours() -> list[Any]:
        return [k for k in frames if any(session.warehouse in p for p in k[1:])]

    assert rows(session, "SELECT sum(x) FROM t WHERE p = 1") == [(5.0,)]
    assert len(ours()) == 1
    assert rows(session, "SELECT sum(x) FROM t WHERE p = 1") == [(5.0,)]
    assert rows(session, "SELECT sum(x) FROM t WHERE p = 1 AND x > 0") == [(5.0,)]
    assert len(ours()) == 1  # same columns and files: the same DataFrame
    session.sql("INSERT INTO t VALUES (6, 'f', 6.0, 1)")
    assert rows(session, "SELECT sum(x) FROM t WHERE p = 1") == [(11.0,)]
    assert len(ours()) == 2


def test_many_files_are_listed_on_the_driver(spark: SparkSession, session: PaimonSession) -> None:
    """Spark lists more files than parallelPartitionDiscovery.threshold in a Spark job; the
    files of a plan are known, so the statement makes no job (and the setting is kept)."""
    _partitioned(session)
    key = "spark.sql.sources.parallelPartitionDiscovery.threshold"
    spark.conf.set(key, "1")
    context = spark.sparkContext
    try:
        context.setJobGroup("paimon-listing", "reads of t")
        df = session.sql("SELECT id FROM t")  # 5 files
        assert list(context.statusTracker().getJobIdsForGroup("paimon-listing")) == []
        assert spark.conf.get(key) == "1"
    finally:
        for name in ("spark.jobGroup.id", "spark.job.description"):
            context.setLocalProperty(name, None)  # type: ignore[arg-type]
        spark.conf.unset(key)
    assert sorted(r[0] for r in df.collect()) == [1, 2, 3, 4, 5]


def test_a_view_filtered_differently_is_not_stale(session: PaimonSession) -> None:
    _partitioned(session)
    session.sql("CREATE TEMPORARY VIEW v AS SELECT * FROM t")
    try:
        assert rows(session, "SELECT count(*) FROM v WHERE p = 1") == [(2,)]
        assert rows(session, "SELECT count(*) FROM v") == [(5,)]
        assert rows(session, "SELECT count(*) FROM v WHERE p = 2") == [(2,)]
    finally:
        session.spark.catalog.dropTempView("v")


def test_time_travel_reads_the_snapshot_and_its_schema(session: PaimonSession) -> None:
    _partitioned(session)
    session.sql("CALL sys.create_tag(table => 'default.t', tag => 'one', snapshot => 1)")
    session.sql("INSERT INTO t VALUES (7, 'g', 7.0, 3)")
    assert rows(session, "SELECT count(*) FROM t VERSION AS OF 1") == [(3,)]
    assert rows(session, "SELECT max(id) FROM t VERSION AS OF 'one' WHERE p = 3") == [(3,)]
    assert rows(session, "SELECT count(*) FROM t VERSION AS OF 2") == [(5,)]


def test_time_travel_reads_files_of_an_older_schema_by_field_id(session: PaimonSession) -> None:
    from paimon_core.format.schema import SchemaManager

    session.sql("CREATE TABLE evo (k INT, a STRING)")
    session.sql("INSERT INTO evo VALUES (1, 'x')")
    table = session.catalog.get_table("default.evo")
    latest = table.schema
    renamed = [f if f.name != "a" else replace(f, name="b") for f in latest.fields]
    newer = replace(latest, fields=tuple(renamed), schema_id=latest.schema_id + 1)
    assert SchemaManager(table.file_io, table.path).commit(newer)
    session.sql("INSERT INTO evo VALUES (2, 'y')")
    assert rows(session, "SELECT k, b FROM evo ORDER BY k") == [(1, "x"), (2, "y")]
    assert rows(session, "SELECT k, a FROM evo VERSION AS OF 1") == [(1, "x")]
    table, snapshot = travel_table(session.catalog.get_table("default.evo"))
    direct, rest = read._direct_files(read.plan_read(table, snapshot))
    assert [p.rsplit("/", 1)[-1] for p in direct] == [snapshot_files(table)[1]]
    assert [f.file_name for s in rest for f in s.files] == [snapshot_files(table)[0]]


def snapshot_files(table: Any) -> list[str]:
    """Data file names of the latest snapshot, oldest schema first."""
    files = [f for s in table.new_scan().plan() for f in s.files]
    return [f.file_name for f in sorted(files, key=lambda f: f.schema_id)]


def test_orc_and_avro_files_go_through_the_paimon_source(session: PaimonSession) -> None:
    """Spark's Parquet reader only gets Parquet files; a table that moved from ORC to Avro to
    Parquet reads every file, each in its own format."""
    session.sql("CREATE TABLE f (id BIGINT, name STRING) TBLPROPERTIES ('file.format' = 'orc')")
    session.sql("INSERT INTO f VALUES (1, 'a'), (2, NULL)")
    for file_format, row in (("avro", "(3, 'c')"), ("parquet", "(4, 'd')")):
        session.sql(f"ALTER TABLE f SET TBLPROPERTIES ('file.format' = '{file_format}')")
        session.sql(f"INSERT INTO f VALUES {row}")
    expected = [(1, "a"), (2, None), (3, "c"), (4, "d")]
    assert rows(session, "SELECT id, name FROM f ORDER BY id") == expected
    assert rows(session, "SELECT name FROM f WHERE id = 3") == [("c",)]
    table, snapshot = travel_table(session.catalog.get_table("default.f"))
    direct, rest = read._direct_files(read.plan_read(table, snapshot))
    assert [p.rsplit(".", 1)[-1] for p in direct] == ["parquet"]
    assert {f.file_name.rsplit(".", 1)[-1] for s in rest for f in s.files} == {"avro", "orc"}


def test_spark_parquet_and_source_reads_agree(spark: SparkSession, session: PaimonSession) -> None:
    """Append files go to Spark's Parquet reader; the same plan through the source agrees."""
    _partitioned(session)
    table, snapshot = travel_table(session.catalog.get_table("default.t"))
    plan = read.plan_read(table, snapshot)
    direct, rest = read._direct_files(plan)
    assert len(direct) == 5 and rest == []
    fast = read.plan_dataframe(spark, plan)
    slow = read._source_dataframe(spark, plan)
    assert fast.schema == slow.schema
    assert sorted(fast.collect()) == sorted(slow.collect())
    assert "FileScan parquet" in fast._jdf.queryExecution().executedPlan().toString()


ALL_TYPES = pa.schema(
    [
        ("bo", pa.bool_()),
        ("i8", pa.int8()),
        ("i16", pa.int16()),
        ("i32", pa.int32()),
        ("i64", pa.int64()),
        ("f32", pa.float32()),
        ("f64", pa.float64()),
        ("d38", pa.decimal128(38, 10)),
        ("d5", pa.decimal128(5, 2)),
        ("s", pa.string()),
        ("bin", pa.binary()),
        ("day", pa.date32()),
        ("t_ms", pa.time32("ms")),
        ("t_us", pa.time64("us")),
        ("ts3", pa.timestamp("ms")),
        ("ts6", pa.timestamp("us")),
        ("ltz3", pa.timestamp("ms", tz="UTC")),
        ("ltz6", pa.timestamp("us", tz="UTC")),
        ("arr", pa.list_(pa.struct([("a", pa.int32()), ("b", pa.string())]))),
        ("m", pa.map_(pa.string(), pa.list_(pa.int64()))),
        ("r", pa.struct([("a", pa.int32()), ("n", pa.struct([("c", pa.string())]))])),
    ]
)


FLAT = {"bo", "i8", "i16", "i32", "i64", "f32", "f64", "d38", "d5", "s", "bin", "day"}


def test_every_type_matches_the_driver_read_exactly(
    spark: SparkSession, session: PaimonSession
) -> None:
    session.sql("CREATE TABLE made_default (k INT)")
    table = session.catalog.create_table("default.types", ALL_TYPES)
    when = dt.datetime(2024, 1, 2, 3, 4, 5, 123456)
    row = {
        "bo": True,
        "i8": -8,
        "i16": 16,
        "i32": 32,
        "i64": 2**40,
        "f32": 1.5,
        "f64": 2.25,
        "d38": Decimal("1234567890123456789012345678.0123456789"),
        "d5": Decimal("-123.45"),
        "s": "ü",
        "bin": b"\x00\xff",
        "day": dt.date(2024, 2, 29),
        "t_ms": dt.time(1, 2, 3, 4000),
        "t_us": dt.time(1, 2, 3, 4005),
        "ts3": when.replace(microsecond=123000),
        "ts6": when,
        "ltz3": when.replace(microsecond=123000, tzinfo=dt.UTC),
        "ltz6": when.replace(tzinfo=dt.UTC),
        "arr": [{"a": 1, "b": "x"}, None],
        "m": [("k", [1, None])],
        "r": {"a": 1, "n": {"c": "deep"}},
    }
    data = pa.Table.from_pylist([row, dict.fromkeys(row)], schema=ALL_TYPES)
    table.write_arrow(data)
    table, snapshot = travel_table(session.catalog.get_table("default.types"))
    fields = table.schema.fields
    local = spark.createDataFrame(
        arrow_for_spark(table.new_read().to_arrow(table.new_scan().plan()), fields),
        schema=to_spark_schema(fields),
    )
    distributed = views.table_dataframe(spark, table, snapshot)
    assert distributed.schema == local.schema
    assert sorted(distributed.collect(), key=str) == sorted(local.collect(), key=str)
    flat = read.plan_read(table, snapshot, [n for n in ALL_TYPES.names if n in FLAT])
    assert read._direct_files(flat)[1] == []  # all through Spark's Parquet reader
    fast = read.plan_dataframe(spark, flat)
    assert fast.schema == read._source_dataframe(spark, flat).schema
    assert sorted(fast.collect(), key=str) == sorted(local.select(*flat.columns).collect(), key=str)
    assert rows(session, "SELECT t_us, ts3, d38 FROM types WHERE i8 = -8") == [
        (3723004, dt.datetime(2024, 1, 2, 3, 4, 5, 123000), row["d38"])
    ]


def test_char_columns_read_as_paimon_stores_them(session: PaimonSession) -> None:
    session.sql("CREATE TABLE ch (c CHAR(4), v VARCHAR(5))")
    session.sql("INSERT INTO ch VALUES ('ab', 'ab')")
    assert rows(session, "SELECT c, v, length(c) FROM ch") == [("ab  ", "ab", 4)]


def test_dataframe_api_reads_latest_and_travels(
    spark: SparkSession, session: PaimonSession
) -> None:
    _partitioned(session)
    session.sql("CALL sys.create_tag(table => 'default.t', tag => 'one', snapshot => 1)")
    reader = spark.read.format("paimon").option("warehouse", session.warehouse)
    assert reader.load("default.t").count() == 5
    assert reader.load("default.t").where("p = 1").select("id").count() == 2
    assert reader.option("scan.snapshot-id", "1").load("default.t").count() == 3
    fresh = spark.read.format("paimon").option("warehouse", session.warehouse)
    assert fresh.option("scan.tag-name", "one").load("default.t").count() == 3
    fresh = spark.read.format("paimon").option("warehouse", session.warehouse)
    assert fresh.option("scan.version", "2").load("default.t").columns == ["id", "name", "x", "p"]


def test_dataframe_api_without_a_warehouse_names_the_table(
    spark: SparkSession, session: PaimonSession
) -> None:
    source.register(spark)  # as registered by hand, without a PaimonSession's defaults
    try:
        with pytest.raises(Exception, match=r'needs the option "warehouse" to read db\.t'):
            spark.read.format("paimon").load("db.t").collect()
    finally:
        source.register(spark, {"warehouse": session.warehouse})


def test_dataframe_api_defaults_to_the_sessions_warehouse(
    spark: SparkSession, session: PaimonSession
) -> None:
    """Once a PaimonSession exists, load("db.t") and save("db.t") need no warehouse option."""
    _partitioned(session)
    assert spark.read.format("paimon").load("default.t").count() == 5
    session.sql("CREATE TABLE default.copy (id BIGINT, name STRING, x DOUBLE, p INT)")
    spark.read.format("paimon").load("default.t").write.format("paimon").mode("append").save(
        "default.copy"
    )
    assert session.sql("SELECT count(*) AS n FROM default.copy").collect()[0]["n"] == 5


def test_reads_on_a_local_cluster(session: PaimonSession, tmp_path: Path) -> None:
    """Executors in their own JVMs read the pickled plan (not the shared session)."""
    _partitioned(session)
    script = tmp_path / "cluster_read.py"
    script.write_text(
        textwrap.dedent(
            f"""
            from pyspark.sql import SparkSession
            from sql_ext.session import PaimonSession
            spark = (SparkSession.builder.master("local-cluster[2,1,1024]")
                     .config("spark.ui.enabled", "false").getOrCreate())
            session = PaimonSession(spark, warehouse={session.warehouse!r})
            print(session.sql("SELECT p, count(*), sum(x) FROM t GROUP BY p ORDER BY p").collect())
            spark.stop()
            """
        )
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYSPARK_PYTHON": sys.executable}
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "[Row(p=1, count(1)=2, sum(x)=5.0), Row(p=2, count(1)=2, sum(x)=52.0), " in done.stdout


def test_dataframe_api_opens_a_table_by_its_path(
    spark: SparkSession, session: PaimonSession, tmp_path: Path
) -> None:
    """As Paimon's SparkSource: load/save of a table directory, wherever it is."""
    session.sql("CREATE TABLE bypath (id INT, name STRING)")
    session.sql("INSERT INTO bypath VALUES (1, 'a')")
    elsewhere = tmp_path / "elsewhere" / "bypath"
    shutil.copytree(Path(session.warehouse, "default.db", "bypath"), elsewhere)
    spark.createDataFrame([(2, "b")], "id INT, name STRING").write.format("paimon").mode(
        "append"
    ).save(str(elsewhere))
    got = spark.read.format("paimon").load(f"{elsewhere}/").orderBy("id").collect()
    assert [tuple(r) for r in got] == [(1, "a"), (2, "b")]
    assert rows(session, "SELECT * FROM bypath") == [(1, "a")]  # the copy was written
    with pytest.raises(Exception, match="Schema file not found in location"):
        spark.read.format("paimon").load(str(tmp_path / "none")).collect()


def test_merge_engines_merge_on_executors(session: PaimonSession) -> None:
    """Executors write (repeated keys of one INSERT merged in the writer) and read through the
    core's merge: aggregation and partial-update tables, and DELETE where Paimon allows it."""
    session.sql(
        "CREATE TABLE agg (k INT NOT NULL, n BIGINT, tags STRING, PRIMARY KEY (k) NOT ENFORCED) "
        "TBLPROPERTIES ('bucket' = '2', 'merge-engine' = 'aggregation', "
        "'fields.n.aggregate-function' = 'sum', 'fields.tags.aggregate-function' = 'listagg')"
    )
    session.sql("INSERT INTO agg VALUES (1, 1, 'a'), (2, 5, 'x'), (1, 2, 'b')")
    session.sql("INSERT INTO agg VALUES (1, 10, NULL), (3, 7, 'z')")
    got = rows(session, "SELECT k, n, tags FROM agg ORDER BY k")
    assert got == [(1, 13, "a,b"), (2, 5, "x"), (3, 7, "z")]
    assert rows(session, "SELECT sum(n) FROM agg WHERE k < 3") == [(18,)]
    session.sql(
        "CREATE TABLE pu (k INT NOT NULL, a STRING, b STRING, PRIMARY KEY (k) NOT ENFORCED) "
        "TBLPROPERTIES ('bucket' = '1', 'merge-engine' = 'partial-update', "
        "'partial-update.remove-record-on-delete' = 'true')"
    )
    session.sql("INSERT INTO pu VALUES (1, 'a1', NULL), (2, 'a2', 'b2')")
    session.sql("INSERT INTO pu VALUES (1, NULL, 'b1')")
    session.sql("DELETE FROM pu WHERE k = 2")
    assert rows(session, "SELECT * FROM pu") == [(1, "a1", "b1")]


def test_files_with_deletion_vectors_go_through_the_paimon_source(warehouse: str) -> None:
    """Spark's Parquet reader would return deleted rows: only files without a vector go to
    it, and the executors' splits carry just their own file's vector."""
    from paimon_core.catalog import FileSystemCatalog
    from paimon_core.operations.deletion_vectors import delete_positions

    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    schema = pa.schema([("id", pa.int64()), ("name", pa.string())])
    table = catalog.create_table("db.dv", schema, options={"deletion-vectors.enabled": "true"})
    for ids in ([1, 2], [3, 4], [5, 6]):
        table.write_arrow(pa.table({"id": ids, "name": [str(i) for i in ids]}, schema=schema))
    (split,) = table.new_scan().plan()
    first, second = split.files[0].file_name, split.files[1].file_name
    delete_positions(table, {(split.partition, split.bucket): {first: [0], second: [1]}})
    table, snapshot = travel_table(table)
    plan = read.plan_read(table, snapshot)
    direct, rest = read._direct_files(plan)
    assert len(direct) == 1 and len(rest) == 2
    assert {s.files[0].file_name for s in rest} == {first, second}
    for s in rest:
        (deletion,) = s.deletion_files
        assert deletion.data_file_name == s.files[0].file_name
    positions = replace(plan, row_positions=True)
    assert read._direct_files(positions) == ([], list(positions.splits))
    got = read.PaimonReader(positions).read(read.SplitPartition((rest[0],)))
    batch = pa.Table.from_batches(list(got))
    assert batch.column(read.ROW_POSITION_COLUMN).to_pylist() == (
        [1] if rest[0].files[0].file_name == first else [0]
    )


def test_sketch_bitmap_and_nested_aggregates_from_spark_sql(session: PaimonSession) -> None:
    """rbm64/theta_sketch on BINARY literals, merge_map_with_keytime on a MAP of STRUCTs and
    nested_partial_update on an ARRAY of STRUCTs, written and merged from Spark SQL."""
    from paimon_core.format.roaring_bitmap64 import RoaringBitmap64
    from paimon_core.format.sketches import theta_estimate, theta_sketch_of

    session.sql(
        "CREATE TABLE sk (k INT NOT NULL, rb BINARY, th BINARY, "
        "mm MAP<STRING, STRUCT<v: STRING, ts: STRING>>, "
        "np ARRAY<STRUCT<id: INT, a: INT, b: STRING>>, PRIMARY KEY (k) NOT ENFORCED) "
        "TBLPROPERTIES ('bucket' = '1', 'merge-engine' = 'aggregation', "
        "'fields.rb.aggregate-function' = 'rbm64', 'fields.th.aggregate-function' = "
        "'theta_sketch', 'fields.mm.aggregate-function' = 'merge_map_with_keytime', "
        "'fields.np.aggregate-function' = 'nested_partial_update', 'fields.np.nested-key' = 'id')"
    )
    for values, ts, a, b in (([1, 2], "2", 1, "NULL"), ([2, 3], "1", "NULL", "'x'")):
        rb = RoaringBitmap64.bitmap_of(values).serialize().hex()
        th = theta_sketch_of(values).hex()
        session.sql(
            f"INSERT INTO sk VALUES (1, X'{rb}', X'{th}', "
            f"map('c', named_struct('v', 'v{ts}', 'ts', '{ts}')), "
            f"array(named_struct('id', 7, 'a', {a}, 'b', {b})))"
        )
    ((rb, th, mm, np_),) = rows(session, "SELECT rb, th, mm, np FROM sk")
    assert list(RoaringBitmap64.deserialize(bytes(rb))) == [1, 2, 3]
    assert theta_estimate(bytes(th)) == 3.0
    assert {k: tuple(v) for k, v in mm.items()} == {"c": ("v2", "2")}
    assert [tuple(r) for r in np_] == [(7, 1, "x")]


def test_deletion_vector_merge_on_read_through_sql(session: PaimonSession) -> None:
    """``deletion-vectors.merge-on-read`` (Paimon 2.0) as a table option and as a session
    option: the level-0 rows a write-only writer left join the read, merged by key."""
    session.sql(
        "CREATE TABLE mor (k INT, v STRING) TBLPROPERTIES ("
        "'primary-key' = 'k', 'bucket' = '1', 'deletion-vectors.enabled' = 'true')"
    )
    session.sql("INSERT INTO mor VALUES (1, 'a'), (2, 'b')")
    session.sql("INSERT INTO mor VALUES (1, 'c')")
    session.sql("ALTER TABLE mor SET TBLPROPERTIES ('write-only' = 'true')")
    session.sql("INSERT INTO mor VALUES (2, 'd'), (3, 'e')")

    def rows(query: str) -> list[tuple[Any, ...]]:
        return sorted(tuple(r) for r in session.sql(query).collect())

    assert rows("SELECT * FROM mor") == [(1, "c"), (2, "b")]
    session.sql("SET `spark.paimon.deletion-vectors.merge-on-read` = true")
    try:
        assert rows("SELECT * FROM mor WHERE v > 'b'") == [(1, "c"), (2, "d"), (3, "e")]
    finally:
        session.sql("RESET `spark.paimon.deletion-vectors.merge-on-read`")
    assert rows("SELECT * FROM mor") == [(1, "c"), (2, "b")]
    session.sql("ALTER TABLE mor SET TBLPROPERTIES ('deletion-vectors.merge-on-read' = 'true')")
    assert rows("SELECT count(*) FROM mor") == [(3,)]


def test_nanosecond_timestamps_reach_spark_as_microseconds_rounded_down() -> None:
    """Spark's timestamps hold microseconds: TIMESTAMP(9) values lose their last digits
    (rounded down before 1970 too, as Paimon's ``Timestamp.toMicros``), never an error."""
    from paimon_core.format.types import TIMESTAMP, DataField

    nanos = pa.array([1704110400123456789, -1, -1000, -1001, None], pa.timestamp("ns"))
    batch = pa.RecordBatch.from_arrays([nanos], names=["t"])
    target = pa.schema([("t", pa.timestamp("us"))])
    got = read.to_spark_arrow(batch, [DataField(0, "t", TIMESTAMP(9))], target)
    assert got.column(0).cast(pa.int64()).to_pylist() == [1704110400123456, -1, -1, -2, None]

"""$audit_log, $binlog, $ro and metadata columns, read by the executors, on tables written by
Apache Paimon 0.9 (Java) and by the core.

The Java table (`db.kv`, primary key (k, dt), one bucket, `num-sorted-run.compaction-trigger`
= 2, so three levels): snapshot 1 writes keys 1 and 2; 2 rewrites key 1; 3 deletes key 2;
4 is the COMPACT commit Paimon runs then (key 1 alone on level 2, the top level); 5 deletes
key 1 (a level-0 file).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import Row, SparkSession

from paimon_core.exceptions import InvalidArgument, UnsupportedFeature
from sql_ext.session import PaimonSession


@pytest.fixture(scope="module")
def java(tmp_path_factory: pytest.TempPathFactory, oracle: Callable[..., Any]) -> str:
    warehouse = str(tmp_path_factory.mktemp("java") / "warehouse")
    oracle(
        "create-table", warehouse, "db.kv", "--schema", "k INT, v STRING, dt STRING",
        "--primary-key", "k,dt", "--partition", "dt", "--option", "bucket=1",
        "--option", "num-sorted-run.compaction-trigger=2",
    )  # fmt: skip
    oracle(
        "write",
        warehouse,
        "db.kv",
        "--json-rows",
        '[{"k":1,"v":"a","dt":"x"},{"k":2,"v":"b","dt":"x"}]',
    )
    oracle("write", warehouse, "db.kv", "--json-rows", '[{"k":1,"v":"a2","dt":"x"}]')
    oracle("write", warehouse, "db.kv", "--delete", "--json-rows", '[{"k":2,"dt":"x"}]')
    oracle("write", warehouse, "db.kv", "--delete", "--json-rows", '[{"k":1,"dt":"x"}]')
    return warehouse


@pytest.fixture
def session(spark: SparkSession, java: str) -> Iterator[PaimonSession]:
    paimon = PaimonSession(spark, warehouse=java)
    paimon.sql("USE db")
    yield paimon
    paimon.stop()


def rows(session: PaimonSession, sql: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in session.sql(sql).collect()]


def test_java_table_layout(session: PaimonSession) -> None:
    """The premise of the other tests: Paimon compacted at snapshot 4 to the top level."""
    kinds = rows(session, "SELECT snapshot_id, commit_kind FROM kv$snapshots ORDER BY 1")
    assert [k for _, k in kinds] == ["APPEND", "APPEND", "APPEND", "COMPACT", "APPEND"]
    assert rows(session, "SELECT level, record_count FROM kv$files ORDER BY level") == [
        (0, 1),
        (2, 1),
    ]


def test_audit_log_keeps_the_last_row_of_every_key(
    session: PaimonSession, java: str, oracle: Callable[..., Any]
) -> None:
    assert rows(session, "SELECT * FROM kv$audit_log") == [("-D", 1, None, "x")]
    before = "SELECT * FROM kv$audit_log VERSION AS OF 3 ORDER BY k"
    assert rows(session, before) == [("+I", 1, "a2", "x"), ("-D", 2, None, "x")]
    # Its added rows are the table as Java reads it.
    added = "SELECT k, v, dt FROM kv$audit_log VERSION AS OF 3 WHERE rowkind IN ('+I', '+U')"
    java_rows = oracle("read", java, "db.kv", "--snapshot", 3)
    assert [Row(**r) for r in java_rows] == session.sql(added).collect()
    assert oracle("read", java, "db.kv") == [] == rows(session, "SELECT * FROM kv")
    schema = session.sql("SELECT * FROM kv$audit_log").schema
    assert [(f.name, f.nullable) for f in schema.fields][:2] == [("rowkind", False), ("k", False)]


def test_binlog_wraps_each_column(session: PaimonSession) -> None:
    assert rows(session, "SELECT * FROM kv$binlog VERSION AS OF 3 ORDER BY k[0]") == [
        ("+I", [1], ["a2"], ["x"]),
        ("-D", [2], [None], ["x"]),
    ]
    types = {f.name: f.dataType.simpleString() for f in session.sql("DESCRIBE kv$binlog").schema}
    assert types["col_name"] == "string"
    described = rows(session, "DESCRIBE kv$binlog")
    assert [(name, kind) for name, kind, _ in described] == [
        ("rowkind", "string"),
        ("k", "array<int>"),
        ("v", "array<string>"),
        ("dt", "array<string>"),
    ]


def test_read_optimized_reads_the_top_level_only(session: PaimonSession) -> None:
    assert rows(session, "SELECT * FROM kv$ro") == [(1, "a2", "x")]
    assert rows(session, "SELECT * FROM kv$ro VERSION AS OF 3") == []  # nothing compacted yet


def test_metadata_columns_of_files_read_as_they_are(session: PaimonSession) -> None:
    got = rows(
        session,
        "SELECT __paimon_file_path, __paimon_row_index, __paimon_partition, __paimon_bucket, * "
        "FROM kv VERSION AS OF 4",
    )
    (path,) = [p for (p,) in rows(session, "SELECT file_path FROM kv$files VERSION AS OF 4")]
    assert got == [(path, 0, Row(dt="x"), 0, 1, "a2", "x")]
    # Five buckets' worth of merging: Paimon-Spark refuses file columns, not the others.
    with pytest.raises(UnsupportedFeature, match="FileRecordIterator"):
        session.sql("SELECT __paimon_file_path, * FROM kv VERSION AS OF 3")
    assert rows(session, "SELECT __paimon_bucket, k FROM kv$audit_log") == [(0, 1)]


def test_metadata_columns_of_an_append_table(spark: SparkSession, tmp_path: Path) -> None:
    session = PaimonSession(spark, warehouse=str(tmp_path))
    try:
        session.sql("CREATE TABLE ap (k INT, v STRING, dt STRING) PARTITIONED BY (dt)")
        session.sql("INSERT INTO ap VALUES (1, 'a', 'x'), (2, 'b', 'x'), (3, 'c', 'y')")
        files = rows(session, "SELECT partition, file_path, record_count FROM ap$files")
        got = rows(
            session,
            "SELECT *, __paimon_partition.dt, __paimon_file_path, __paimon_row_index "
            "FROM ap ORDER BY k",
        )
        assert [r[:4] for r in got] == [(1, "a", "x", "x"), (2, "b", "x", "x"), (3, "c", "y", "y")]
        # Every row at its position in a file of its partition, each file read whole.
        positions = sorted((f"{{{r[2]}}}", r[4], r[5]) for r in got)
        assert positions == sorted((p, f, i) for p, f, n in files for i in range(n))
        # `*` alone still has the table's columns only; so does t.* next to them.
        assert session.sql("SELECT t.*, __paimon_bucket FROM ap t").columns == [
            "k", "v", "dt", "__paimon_bucket",
        ]  # fmt: skip
        assert rows(session, "SELECT rowkind, k FROM ap$audit_log WHERE dt = 'y'") == [("+I", 3)]
        assert rows(session, "SELECT count(*) FROM ap$ro") == [(3,)]
    finally:
        session.stop()


def test_row_index_counts_the_rows_a_deletion_vector_drops(session: PaimonSession) -> None:
    """`__paimon_row_index` is the row's place in its file, as Paimon's file iterator
    returns it, deleted rows counted: what DELETE marks in the vector."""
    for name, key in (("dva", ""), ("dvk", "'primary-key' = 'k', 'bucket' = '1', ")):
        session.sql(
            f"CREATE TABLE {name} (k INT NOT NULL, v STRING) TBLPROPERTIES ({key}"
            "'deletion-vectors.enabled' = 'true', 'merge-engine' = 'partial-update')"
            if key
            else f"CREATE TABLE {name} (k INT, v STRING) "
            "TBLPROPERTIES ('deletion-vectors.enabled' = 'true')"
        )
        session.sql(f"INSERT INTO {name} VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')")
        query = f"SELECT __paimon_file_path, __paimon_row_index, k FROM {name}"
        before = rows(session, query)
        assert len({(path, index) for path, index, _ in before}) == 4
        session.sql(f"DELETE FROM {name} WHERE k IN (1, 3)")
        assert rows(session, query) == [r for r in before if r[2] in (2, 4)], name
        session.sql(f"DELETE FROM {name} WHERE k = 4")
        assert rows(session, query) == [r for r in before if r[2] == 2], name


def test_sequence_number_column_is_a_table_option(session: PaimonSession) -> None:
    session.sql(
        "CREATE TABLE seq (k INT, v STRING) TBLPROPERTIES ('primary-key' = 'k', 'bucket' = '1', "
        "'table-read.sequence-number.enabled' = 'true')"
    )
    session.sql("INSERT INTO seq VALUES (1, 'a'), (2, 'b')")
    session.sql("INSERT INTO seq VALUES (1, 'c')")
    assert rows(session, "SELECT * FROM seq$audit_log ORDER BY k") == [
        ("+I", 2, 1, "c"),
        ("+I", 1, 2, "b"),
    ]
    assert session.sql("SELECT * FROM seq$binlog").columns[:3] == [
        "rowkind",
        "_SEQUENCE_NUMBER",
        "k",
    ]
    key = "spark.paimon.table-read.sequence-number.enabled"
    session.spark.conf.set(key, "true")
    try:
        with pytest.raises(InvalidArgument, match="not supported by hint"):
            session.sql("SELECT * FROM kv$audit_log")
    finally:
        session.spark.conf.unset(key)

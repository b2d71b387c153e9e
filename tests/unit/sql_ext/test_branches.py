"""Branches through the session: the procedures, reading and writing `t$branch_b`, its
system tables, option `branch`, `$branches` and `scan.fallback-branch` (Paimon's docs)."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from paimon_core.exceptions import PaimonError
from paimon_core.format.schema import SetOption
from sql_ext.errors import SqlError
from sql_ext.session import PaimonSession
from sql_ext.shell import EXIT_FAILED, EXIT_OK
from tests.unit.procedures.helpers import new_catalog, new_table
from tests.unit.sql_ext.test_shell import NO_SPARK, ROOT, json_lines


@pytest.fixture
def session(spark: SparkSession, warehouse: str) -> PaimonSession:
    return PaimonSession(spark, warehouse=warehouse)


def rows(session: PaimonSession, sql: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in session.sql(sql).collect()]


def _table(session: PaimonSession) -> None:
    session.sql("CREATE TABLE T (id INT, name STRING) USING paimon")
    session.sql("INSERT INTO T VALUES (1, 'a')")
    session.sql("CALL sys.create_tag(table => 'default.T', tag => 'tag1')")


def test_procedures_and_reading_writing_a_branch(session: PaimonSession) -> None:
    """Paimon-Spark's MergeBranchProcedureTest and the branch docs, step by step."""
    _table(session)
    assert rows(
        session, "CALL sys.create_branch(table => 'default.T', branch => 'b1', tag => 'tag1')"
    ) == [(True,)]
    session.sql("INSERT INTO `T$branch_b1` VALUES (2, 'b')")
    assert rows(session, "SELECT * FROM `T$branch_b1` ORDER BY id") == [(1, "a"), (2, "b")]
    assert rows(session, "SELECT * FROM T") == [(1, "a")]
    assert rows(session, "SELECT snapshot_id, commit_kind FROM `T$branch_b1$snapshots`") == [
        (1, "APPEND"),
        (2, "APPEND"),
    ]
    assert rows(session, "SELECT tag_name, snapshot_id FROM `T$branch_b1$tags`") == [("tag1", 1)]
    assert rows(session, "SELECT id FROM `T$branch_b1` VERSION AS OF 1") == [(1,)]
    names = rows(session, "SELECT branch_name, create_time FROM `T$branches`")
    assert [n for n, _ in names] == ["b1"] and isinstance(names[0][1], dt.datetime)
    assert rows(session, "CALL sys.merge_branch(table => 'default.T', source_branch => 'b1')") == [
        (True,)
    ]
    assert rows(session, "SELECT * FROM T ORDER BY id") == [(1, "a"), (2, "b")]
    session.sql("CALL sys.rename_branch('default.T', 'b1', 'b2')")
    assert rows(session, "SELECT count(*) FROM `T$branch_b2`") == [(2,)]
    session.sql("CALL sys.delete_branch('default.T', 'b2')")
    assert rows(session, "SELECT * FROM `T$branches`") == []


def test_option_branch_reads_the_branch(session: PaimonSession, spark: SparkSession) -> None:
    _table(session)
    session.sql("CALL sys.create_branch('default.T', 'b1', 'tag1')")
    session.sql("INSERT INTO `T$branch_b1` VALUES (2, 'b')")
    frame = (
        spark.read.format("paimon")
        .option("warehouse", session.warehouse)
        .option("branch", "b1")
        .load("default.T")
    )
    assert sorted(tuple(r) for r in frame.collect()) == [(1, "a"), (2, "b")]
    session.sql("SET spark.paimon.branch = b1")
    try:
        assert rows(session, "SELECT id FROM T ORDER BY id") == [(1,), (2,)]
    finally:
        session.sql("RESET spark.paimon.branch")
    assert rows(session, "SELECT id FROM T") == [(1,)]


def test_fast_forward_and_alter_a_branch(session: PaimonSession) -> None:
    _table(session)
    session.sql("CALL sys.create_branch('default.T', 'b1', 'tag1')")
    session.sql("ALTER TABLE `T$branch_b1` ADD COLUMNS (extra STRING)")
    session.sql("INSERT INTO `T$branch_b1` VALUES (2, 'b', 'x'), (4, 'd', 'y')")
    session.sql("DELETE FROM `T$branch_b1` WHERE id = 4")
    session.sql("UPDATE `T$branch_b1` SET extra = 'z' WHERE id = 2")
    session.sql("INSERT INTO T VALUES (3, 'c')")
    assert rows(session, "CALL sys.fast_forward(table => 'default.T', branch => 'b1')") == [(True,)]
    assert rows(session, "SELECT * FROM T ORDER BY id") == [(1, "a", None), (2, "b", "z")]
    assert rows(session, "SELECT snapshot_id FROM `T$snapshots`") == [(1,), (2,), (3,), (4,)]


def test_branch_errors_are_one_line_and_change_nothing(session: PaimonSession) -> None:
    _table(session)
    cases = [
        ("SELECT * FROM `T$branch_nope`", "Branch nope of table default.T does not exist"),
        ("INSERT INTO `T$branch_nope` VALUES (1, 'x')", "Branch nope of table default.T"),
        ("CALL sys.create_branch('default.T', 'main')", "default branch and cannot be used"),
        ("CALL sys.fast_forward('default.T', 'nope')", "Branch name 'nope' doesn't exist"),
        ("DROP TABLE `T$branch_x`", "Cannot 'dropTable' for branch table"),
    ]
    session.sql("CALL sys.create_branch('default.T', 'x')")
    for sql, message in cases:
        with pytest.raises((SqlError, PaimonError), match=message) as info:
            session.sql(sql).collect()
        assert "\n" not in str(info.value)
    assert rows(session, "SELECT * FROM T") == [(1, "a")]


def test_fallback_branch_as_paimons_docs(session: PaimonSession, spark: SparkSession) -> None:
    """The docs' example: main has the batch job's days, branch `test` the streaming ones.
    (The docs make the branch a primary-key table with Flink; Paimon-Spark refuses to alter
    `primary-key`, so here the branch differs by its file format.)"""
    session.sql(
        "CREATE TABLE T (dt STRING NOT NULL, name STRING NOT NULL, amount BIGINT) "
        "PARTITIONED BY (dt)"
    )
    session.sql("CALL sys.create_branch('default.T', 'test')")
    session.sql("ALTER TABLE `T$branch_test` SET TBLPROPERTIES ('file.format' = 'avro')")
    session.sql("ALTER TABLE T SET TBLPROPERTIES ('scan.fallback-branch' = 'test')")
    session.sql(
        "INSERT INTO `T$branch_test` VALUES ('20240725', 'apple', 4), ('20240725', 'peach', 10), "
        "('20240726', 'cherry', 3), ('20240726', 'pear', 6)"
    )
    session.sql("INSERT INTO T VALUES ('20240725', 'apple', 5), ('20240725', 'banana', 7)")
    expected = [
        ("20240725", "apple", 5),
        ("20240725", "banana", 7),
        ("20240726", "cherry", 3),
        ("20240726", "pear", 6),
    ]
    assert rows(session, "SELECT * FROM T ORDER BY dt, name") == expected
    frame = spark.read.format("paimon").option("warehouse", session.warehouse).load("default.T")
    assert sorted(tuple(r) for r in frame.collect()) == expected
    assert rows(session, "SELECT count(*) FROM T") == [(4,)]
    assert rows(session, "SELECT name FROM T WHERE dt = '20240726' ORDER BY name") == [
        ("cherry",),
        ("pear",),
    ]
    with pytest.raises(PaimonError, match=r"scan\.fallback-branch. first"):
        session.sql("CALL sys.delete_branch('default.T', 'test')")
    session.sql("ALTER TABLE T UNSET TBLPROPERTIES ('scan.fallback-branch')")
    assert rows(session, "SELECT * FROM T ORDER BY dt, name") == expected[:2]


def _paimon_sql(warehouse: str, script: str, *, spark: bool) -> subprocess.CompletedProcess[str]:
    """`paimon-sql --output json -e <script>` in its own process; without `spark` under an
    import blocker: the statements must be answered without pyspark."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SPARK_CONF_DIR": str(ROOT / "spark-conf")}
    if spark:
        command = [str(Path(sys.executable).with_name("paimon-sql"))]
    else:
        command = [sys.executable, "-c", NO_SPARK]
    argv = [*command, "--warehouse", warehouse, "--output", "json", "-e", script]
    return subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT)


def test_branch_procedures_and_system_tables_without_spark(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    new_table(catalog, commits=2)
    done = _paimon_sql(
        warehouse,
        "CALL sys.create_tag(table => 'db.t', tag => 'tag1', snapshot => 1); "
        "CALL sys.create_branch(table => 'db.t', branch => 'b1', tag => 'tag1'); "
        "CALL sys.create_branch('db.t', 'empty'); "
        "SELECT branch_name FROM db.t$branches ORDER BY branch_name; "
        "SELECT snapshot_id, commit_kind FROM db.t$branch_b1$snapshots; "
        "SELECT tag_name FROM db.t$branch_b1$tags; "
        "CALL sys.rename_branch(table => 'db.t', from_branch => 'empty', to_branch => 'e2'); "
        "CALL sys.fast_forward(table => 'db.t', branch => 'b1'); "
        "SELECT snapshot_id FROM db.t$snapshots; "
        "CALL sys.delete_branch(table => 'db.t', branch => 'b1,e2'); "
        "SELECT count(*) FROM db.t$branches",
        spark=False,
    )
    assert done.returncode == EXIT_OK, done.stderr
    assert json_lines(done.stdout) == [
        {"result": True},
        {"result": True},
        {"result": True},
        {"branch_name": "b1"},
        {"branch_name": "empty"},
        {"snapshot_id": 1, "commit_kind": "APPEND"},
        {"tag_name": "tag1"},
        {"result": True},
        {"result": True},
        {"snapshot_id": 1},
        {"result": True},
        {"count(1)": 0},
    ]
    assert done.stderr == "modules: []\n"
    failed = _paimon_sql(warehouse, "CALL sys.delete_branch('db.t', 'nope')", spark=False)
    assert failed.returncode == EXIT_FAILED
    assert failed.stderr == (
        "Error: CALL sys.delete_branch: Branch name 'nope' doesn't exist.\nmodules: []\n"
    )


def test_paimon_sql_writes_and_reads_a_branch(warehouse: str) -> None:
    """The installed command with its own JVM, as a user runs it."""
    catalog = new_catalog(warehouse)
    new_table(catalog, commits=1)
    done = _paimon_sql(
        warehouse,
        "CALL sys.create_tag('db.t', 'tag1'); "
        "CALL sys.create_branch('db.t', 'b1', 'tag1'); "
        "INSERT INTO db.`t$branch_b1` VALUES (7, 'x', '2024-01-09'); "
        "SELECT id FROM db.`t$branch_b1` ORDER BY id; "
        "SELECT count(*) FROM db.t",
        spark=True,
    )
    assert done.returncode == EXIT_OK, done.stderr
    assert json_lines(done.stdout) == [
        {"result": True},
        {"result": True},
        {"id": 0},
        {"id": 7},
        {"id": 100},
        {"count(1)": 2},
    ]


def test_fallback_and_primary_branch_wherever_paimon_reads_them(
    session: PaimonSession, warehouse: str, oracle: Any
) -> None:
    """System tables of the rows, partition listings, VERSION AS OF (the other branch's own
    snapshot, or an error naming it) and incremental reads go through the other branch too."""
    session.sql("CREATE TABLE T (dt STRING, name STRING, amount BIGINT) PARTITIONED BY (dt)")
    session.sql("CALL sys.create_branch('default.T', 'b')")
    session.sql("INSERT INTO `T$branch_b` VALUES ('d1', 'b-apple', 1), ('d2', 'b-pear', 2)")
    session.sql("INSERT INTO T VALUES ('d1', 'apple', 5)")
    session.sql("CALL sys.create_tag('default.T', 'main_only', 1)")
    session.sql("ALTER TABLE T SET TBLPROPERTIES ('scan.fallback-branch' = 'b')")
    session.sql("INSERT INTO `T$branch_b` VALUES ('d9', 'b-plum', 3)")
    session.sql("INSERT INTO T VALUES ('d4', 'fig', 4)")
    now = [("d1", "apple"), ("d2", "b-pear"), ("d4", "fig"), ("d9", "b-plum")]
    assert rows(session, "SELECT dt, name FROM T ORDER BY dt") == now
    java = oracle("read", warehouse, "default.T")
    assert sorted((r["dt"], r["name"]) for r in java) == now
    assert rows(session, "SELECT rowkind, dt FROM `T$audit_log` ORDER BY dt") == [
        ("+I", d) for d, _ in now
    ]
    assert rows(session, "SELECT dt, name FROM `T$ro` ORDER BY dt") == now
    assert rows(session, "SELECT partition, record_count FROM `T$partitions` ORDER BY 1") == [
        ("dt=d1", 1),
        ("dt=d2", 1),
        ("dt=d4", 1),
        ("dt=d9", 1),
    ]
    assert rows(session, "SHOW PARTITIONS T") == [(f"dt={d}",) for d, _ in now]
    assert rows(session, "SELECT sys.max_pt('T')") == [("d9",)]
    assert rows(session, "SELECT count(*) FROM T WHERE dt > 'd1'") == [(3,)]
    # VERSION AS OF 1: main's snapshot 1 and b's own snapshot 1.
    assert rows(session, "SELECT dt, name FROM T VERSION AS OF 1 ORDER BY dt") == now[:2]
    with pytest.raises(PaimonError, match=r"main_only.*branch 'b'"):
        session.sql("SELECT * FROM T VERSION AS OF 'main_only'").collect()
    # Changes of main's snapshot 2 and of b's snapshot 2, by partition.
    changes = "SELECT dt, name FROM paimon_incremental_query('T', '1', '2') ORDER BY dt"
    assert rows(session, changes) == [("d4", "fig"), ("d9", "b-plum")]
    with pytest.raises(PaimonError, match="Cannot set both"):
        session.sql("ALTER TABLE T SET TBLPROPERTIES ('scan.primary-branch' = 'b')")
    session.sql("ALTER TABLE T UNSET TBLPROPERTIES ('scan.fallback-branch')")
    session.sql("ALTER TABLE T SET TBLPROPERTIES ('scan.primary-branch' = 'b')")
    primary = [("d1", "b-apple"), ("d2", "b-pear"), ("d4", "fig"), ("d9", "b-plum")]
    assert rows(session, "SELECT dt, name FROM T ORDER BY dt") == primary
    assert rows(session, "SELECT count(*) FROM T") == [(4,)]
    session.sql("INSERT INTO T VALUES ('d5', 'kiwi', 6)")  # writes stay in main
    assert rows(session, "SELECT count(*) FROM `T$branch_b`") == [(3,)]
    assert rows(session, "SELECT name FROM T WHERE dt = 'd5'") == [("kiwi",)]


def test_read_optimized_takes_each_partition_from_the_branch_with_top_level_files(
    warehouse: str,
) -> None:
    """`$ro` lists a primary-key branch's partitions by its top-level files (Paimon's
    `ReadOptimizedTable` scan creator), so a partition main has only in level 0 is read from
    the fallback branch there, while the table's rows take it from main."""
    from paimon_core.lifecycle.branch_management import create_branch
    from paimon_core.table import FileStoreTable
    from sql_ext.datapath.scan import plan_table
    from tests.unit.procedures.helpers import SCHEMA, call

    catalog = new_catalog(warehouse)
    main = catalog.create_table(
        "db.t", SCHEMA, partition_keys=["dt"], primary_keys=["id", "dt"], options={"bucket": "1"}
    )
    create_branch(main, "b")
    branch = catalog.get_table("db.t$branch_b")
    for day in ("d1", "d2"):
        branch.write_arrow(pa.table({"id": [1], "name": ["b"], "dt": [day]}, SCHEMA))
    call(catalog, "compact", table="db.t$branch_b")
    main.write_arrow(pa.table({"id": [1], "name": ["main"], "dt": ["d1"]}, SCHEMA))
    main.schema_manager.commit_changes(SetOption("scan.fallback-branch", "b"))
    table = FileStoreTable.load(main.path)
    snapshot = table.latest_snapshot()

    def days(plan: Any) -> tuple[list[str], list[str]]:
        other = [] if plan.fallback is None else plan.fallback.splits
        return [s.partition_values[0] for s in plan.splits], [s.partition_values[0] for s in other]

    assert days(plan_table(table, snapshot)) == (["d1"], ["d2"])
    assert days(plan_table(table, snapshot, system="ro")) == ([], ["d1", "d2"])

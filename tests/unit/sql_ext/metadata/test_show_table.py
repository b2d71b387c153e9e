"""SHOW CREATE TABLE / COLUMNS / PARTITIONS / TABLE EXTENDED through the session and
through `paimon-sql -e` (answered without Spark)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

import pytest
from pyspark.sql import SparkSession

from sql_ext.errors import SqlError
from sql_ext.session import PaimonSession
from sql_ext.tables import current_user
from tests.unit.sql_ext.test_shell import NO_SPARK, ROOT


@pytest.fixture
def session(spark: SparkSession, warehouse: str) -> PaimonSession:
    s = PaimonSession(spark, warehouse=warehouse)
    s.sql("CREATE DATABASE db")
    s.sql(
        "CREATE TABLE db.pk (id INT, `my name` VARCHAR(10) COMMENT 'who\\'s', p INT, "
        "q STRING) USING paimon PARTITIONED BY (p, q) COMMENT 'keyed' "
        "TBLPROPERTIES ('primary-key' = 'id,p,q', 'bucket' = '2', 'my.password' = 'x')"
    )
    s.sql("INSERT INTO db.pk VALUES (1, 'a', 1, 'x/y'), (2, 'b', 2, 'z'), (3, 'c', 1, 'z')")
    s.sql("CREATE TABLE db.plain (a BIGINT) USING paimon")
    return s


def rows(session: PaimonSession, text: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in session.sql(text).collect()]


def test_show_create_table(session: PaimonSession, warehouse: str) -> None:
    path = os.path.join(warehouse, "db.db", "pk")
    ((statement,),) = rows(session, "SHOW CREATE TABLE db.pk")
    assert statement == (
        "CREATE TABLE paimon.db.pk (\n"
        "  id INT NOT NULL,\n"
        "  `my name` VARCHAR(10) COMMENT 'who\\'s',\n"
        "  p INT NOT NULL,\n"
        "  q STRING NOT NULL)\n"
        "USING paimon\n"
        "PARTITIONED BY (p, q)\n"
        "COMMENT 'keyed'\n"
        f"LOCATION '{path}'\n"
        "TBLPROPERTIES (\n"
        "  'bucket' = '2',\n"
        "  'my.password' = '*********(redacted)',\n"
        f"  'path' = '{path}',\n"
        "  'primary-key' = 'id,p,q')\n"
    )
    assert session.sql("SHOW CREATE TABLE db.pk").columns == ["createtab_stmt"]


def test_show_tblproperties(session: PaimonSession, warehouse: str) -> None:
    path = os.path.join(warehouse, "db.db", "pk")
    assert rows(session, "SHOW TBLPROPERTIES db.pk") == [
        ("bucket", "2"),
        ("my.password", "*********(redacted)"),
        ("path", path),
        ("primary-key", "id,p,q"),
    ]
    assert rows(session, "SHOW TBLPROPERTIES db.pk ('bucket')") == [("bucket", "2")]
    assert rows(session, "SHOW TBLPROPERTIES db.pk (comment)") == [
        ("comment", "Table db.pk does not have property: comment")
    ]


def test_show_columns(session: PaimonSession) -> None:
    shown = session.sql("SHOW COLUMNS IN db.pk")
    # Paimon-Spark's PaimonShowColumnsCommand: one nullable column named `column`.
    assert [(f.name, f.dataType.simpleString(), f.nullable) for f in shown.schema.fields] == [
        ("column", "string", True)
    ]
    assert rows(session, "SHOW COLUMNS IN db.pk") == [("id",), ("my name",), ("p",), ("q",)]
    session.sql("USE db")
    assert rows(session, "SHOW COLUMNS FROM plain") == [("a",)]
    assert rows(session, "SHOW COLUMNS FROM plain IN db") == [("a",)]
    with pytest.raises(SqlError, match="conflicting namespaces"):
        session.sql("SHOW COLUMNS FROM other.plain IN db")


def test_show_partitions(session: PaimonSession) -> None:
    assert rows(session, "SHOW PARTITIONS db.pk") == [("p=1/q=x%2Fy",), ("p=1/q=z",), ("p=2/q=z",)]
    assert rows(session, "SHOW PARTITIONS db.pk PARTITION (q = 'z')") == [
        ("p=1/q=z",),
        ("p=2/q=z",),
    ]
    assert rows(session, "SHOW PARTITIONS db.pk PARTITION (p = 01, q = 'z')") == [("p=1/q=z",)]
    assert rows(session, "SHOW PARTITIONS db.pk PARTITION (p = 3)") == []
    with pytest.raises(SqlError, match="not partitioned"):
        session.sql("SHOW PARTITIONS db.plain")
    with pytest.raises(SqlError, match="Invalid partition value"):
        session.sql("SHOW PARTITIONS db.pk PARTITION (p = 'one')")


def test_show_table_extended(session: PaimonSession, warehouse: str) -> None:
    found = rows(session, "SHOW TABLE EXTENDED IN db LIKE 'p*'")
    assert [r[:3] for r in found] == [("db", "pk", False), ("db", "plain", False)]
    path = os.path.join(warehouse, "db.db", "plain")
    assert found[1][3] == (
        "Catalog: paimon\nNamespace: db\nTable: plain\nType: MANAGED\n"
        f"Location: {path}\nProvider: paimon\nOwner: {current_user()}\n"
        f"Table Properties: [path={path}]\n"
        "Schema: root\n |-- a: long (nullable = true)\n\n"
    )
    assert "Partition Columns: [`p`, `q`]\n" in found[0][3]
    session.sql("USE db")
    assert [r[1] for r in rows(session, "SHOW TABLE EXTENDED LIKE 'pl*'")] == ["plain"]


def test_show_table_extended_partition(
    session: PaimonSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Paimon-Spark's ``PaimonShowTablePartitionCommand``: the partition's values, its live
    files' statistics, one row named by the LIKE pattern."""
    session.sql("INSERT INTO db.pk VALUES (4, 'd', 1, 'z')")
    files = _entries(session, "db.pk", (1, "z"))
    size = sum(e.file.file_size for e in files)
    created = max(e.file.creation_time_millis for e in files)
    monkeypatch.setenv("TZ", "Asia/Shanghai")  # the stored wall clock is read as UTC+8
    time.tzset()
    try:
        frame = session.sql("SHOW TABLE EXTENDED IN db LIKE 'pk' PARTITION (q = 'z', p = 1)")
        found = [tuple(r) for r in frame.collect()]
    finally:
        monkeypatch.undo()
        time.tzset()
    assert frame.columns == ["namespace", "tableName", "isTemporary", "information"]
    assert found == [
        (
            "db",
            "pk",
            False,
            "Partition Values: [p=1, q=z]\n"
            f"Partition Parameters: {{recordCount=2, fileSizeInBytes={size}, "
            f"fileCount={len(files)}, lastFileCreationTime={created - 8 * 3600 * 1000}}}\n"
            f"Partition Statistics: 2 rows, {size} bytes\n",
        )
    ]
    escaped = rows(session, "SHOW TABLE EXTENDED IN db LIKE 'pk' PARTITION (p = 1, q = 'x/y')")
    assert escaped[0][3].startswith("Partition Values: [p=1, q=x%2Fy]\nPartition Parameters: ")
    for bad, named in (
        ("SHOW TABLE EXTENDED IN db LIKE 'pk' PARTITION (p = 3, q = 'z')", "PARTITIONS_NOT_FOUND"),
        ("SHOW TABLE EXTENDED IN db LIKE 'pk' PARTITION (p = 1)", "every partition column"),
        ("SHOW TABLE EXTENDED IN db LIKE 'pk' PARTITION (id = 1)", "not a partition column"),
        ("SHOW TABLE EXTENDED IN db LIKE 'plain' PARTITION (a = 1)", "not partitioned"),
    ):
        with pytest.raises(SqlError) as err:
            session.sql(bad)
        assert named in str(err.value) and "\n" not in str(err.value)


def _entries(session: PaimonSession, name: str, values: tuple[Any, ...]) -> list[Any]:
    from paimon_core.format.binary_row import deserialize_row

    table = session.catalog.get_table(name)
    types = [f.type for f in table.schema.partition_fields]
    return [
        e
        for e in table.new_scan().read_entries(table.latest_snapshot())
        if tuple(deserialize_row(e.partition, types)) == values
    ]


def test_paimon_sql_answers_without_spark(session: PaimonSession, warehouse: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SPARK_CONF_DIR": str(ROOT / "spark-conf")}
    command = [
        sys.executable,
        "-c",
        NO_SPARK,
        "--warehouse",
        warehouse,
        "--output",
        "json",
        "-e",
        "SHOW PARTITIONS db.pk PARTITION (p = 2); SHOW COLUMNS IN db.plain; DESCRIBE db.plain",
    ]
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert [json.loads(line) for line in done.stdout.splitlines()] == [
        {"partition": "p=2/q=z"},
        {"column": "a"},
        {"col_name": "a", "data_type": "bigint", "comment": None},
    ]
    assert done.stderr == "modules: []\n"
    failed = subprocess.run(
        [*command[:-1], "SHOW PARTITIONS db.plain"], capture_output=True, text=True, env=env
    )
    assert failed.returncode == 1
    assert failed.stderr.startswith("Error: SHOW PARTITIONS is not allowed on paimon.db.plain")

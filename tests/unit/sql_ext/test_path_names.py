"""Names that become paths (branch, tag, consumer id, database, table, file-naming options)
through every SQL entry point: refused with one line, nothing written outside the warehouse,
the table unchanged (issue 19, point 2)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from paimon_core.exceptions import PaimonError
from paimon_core.format.schema import SchemaManager, schema_to_json
from paimon_core.io.fileio import LocalFileIO
from sql_ext.dynamic_options import paimon_confs
from sql_ext.errors import SqlError
from sql_ext.session import PaimonSession

# Six levels up from `<wh>/default.db/T/branch/branch-..`: beside the warehouse.
ESCAPING = "../../../../../../outside"


@pytest.fixture
def session(spark: SparkSession, warehouse: str) -> PaimonSession:
    return PaimonSession(spark, warehouse=warehouse)


def rows(session: PaimonSession, sql: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in session.sql(sql).collect()]


def files_outside(warehouse: str) -> list[str]:
    """Every file under the warehouse's parent directory but not under the warehouse."""
    root = Path(warehouse)
    return sorted(str(p) for p in root.parent.rglob("*") if p.is_file() and root not in p.parents)


def files(warehouse: str) -> dict[str, bytes]:
    return {
        str(p.relative_to(warehouse)): p.read_bytes()
        for p in Path(warehouse).rglob("*")
        if p.is_file()
    }


def refused(session: PaimonSession, sql: str, message: str) -> None:
    with pytest.raises((SqlError, PaimonError), match=message) as info:
        session.sql(sql).collect()
    assert "\n" not in str(info.value)


def _table(session: PaimonSession) -> None:
    session.sql("CREATE TABLE T (id INT) USING paimon")
    session.sql("INSERT INTO T VALUES (1)")


@pytest.mark.parametrize("value", ["../../..", ESCAPING])
def test_alter_table_set_branch_to_a_path_is_refused_and_insert_stays_in_the_table(
    session: PaimonSession, value: str
) -> None:
    _table(session)
    before = files(session.warehouse)
    shown = re.escape(value)
    refused(
        session,
        f"ALTER TABLE T SET TBLPROPERTIES ('branch' = '{value}')",
        rf"ALTER TABLE paimon\.default\.T: Option 'branch' = '{shown}': Branch name .* "
        "must not contain '/'",
    )
    assert files(session.warehouse) == before
    session.sql("INSERT INTO T VALUES (2)")
    assert rows(session, "SELECT id FROM T ORDER BY id") == [(1,), (2,)]
    assert files_outside(session.warehouse) == []


def test_a_stored_bad_branch_fails_clearly_and_unset_repairs_it(session: PaimonSession) -> None:
    """A `branch` stored before names were checked (or by hand) is refused on every read
    and write; `ALTER TABLE ... UNSET TBLPROPERTIES ('branch')` removes it."""
    _table(session)
    path = f"{session.warehouse}/default.db/T"
    manager = SchemaManager(LocalFileIO(), path)
    latest = manager.latest()
    assert latest is not None
    bad = replace(
        latest,
        schema_id=latest.schema_id + 1,
        options={**latest.options, "branch": ESCAPING},
    )
    Path(manager.schema_path(bad.schema_id)).write_text(schema_to_json(bad))
    before = files(session.warehouse)
    message = re.escape(f"Option 'branch' = '{ESCAPING}'") + ".*must not contain '/'"
    for sql in (
        "INSERT INTO T VALUES (2)",
        "SELECT * FROM T",
        "CALL sys.create_tag('default.T', 't1')",
        "ALTER TABLE T SET TBLPROPERTIES ('x' = 'y')",
    ):
        refused(session, sql, message)
    assert files(session.warehouse) == before
    assert files_outside(session.warehouse) == []

    session.sql("ALTER TABLE T UNSET TBLPROPERTIES ('branch')")
    session.sql("INSERT INTO T VALUES (2)")
    assert rows(session, "SELECT id FROM T ORDER BY id") == [(1,), (2,)]
    assert files_outside(session.warehouse) == []


@pytest.fixture
def clean_confs(spark: SparkSession) -> Iterator[None]:
    """Every `spark.paimon.*` setting a test makes is reset afterwards."""
    yield
    for key in paimon_confs(spark):
        spark.conf.unset(key)


@pytest.mark.parametrize(
    ("properties", "message"),
    [
        ("'branch' = '../../x'", "Option 'branch' = '../../x': Branch name"),
        ("'scan.fallback-branch' = 'a/b'", "Option 'scan.fallback-branch' = 'a/b'"),
        ("'data-file.prefix' = '../../x-'", "Option 'data-file.prefix' = '../../x-'"),
        ("'changelog-file.prefix' = 'a\\\\b'", "must not contain"),
        ("'consumer-id' = '..'", "Option 'consumer-id' = '..': Consumer id"),
        ("'scan.tag-name' = '../t'", "Option 'scan.tag-name' = '../t': Tag name"),
    ],
)
def test_create_table_with_an_option_naming_a_path_creates_nothing(
    session: PaimonSession, properties: str, message: str
) -> None:
    _table(session)
    before = files(session.warehouse)
    for sql in (
        f"CREATE TABLE X (id INT) USING paimon TBLPROPERTIES ({properties})",
        f"CREATE TABLE X USING paimon TBLPROPERTIES ({properties}) AS SELECT 1 AS id",
        f"ALTER TABLE T SET TBLPROPERTIES ({properties})",
    ):
        refused(session, sql, re.escape(message))
    assert files(session.warehouse) == before
    assert files_outside(session.warehouse) == []


@pytest.mark.parametrize(
    "setting",
    ["spark.paimon.branch", "spark.paimon.*.default.T.branch", "spark.paimon.consumer-id"],
)
def test_dynamic_options_naming_paths_are_refused_naming_the_setting(
    session: PaimonSession, spark: SparkSession, clean_confs: None, setting: str
) -> None:
    _table(session)
    before = files(session.warehouse)
    spark.conf.set(setting, ESCAPING)
    for sql in ("SELECT * FROM T", "INSERT INTO T VALUES (2)"):
        refused(
            session,
            sql,
            rf"Cannot apply {re.escape(setting)} = '\.\./.*outside' to paimon\.default\.T: "
            "(Branch name|Consumer id) .* must not contain '/'",
        )
    spark.conf.unset(setting)
    assert files(session.warehouse) == before
    assert files_outside(session.warehouse) == []
    assert rows(session, "SELECT id FROM T") == [(1,)]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM `T$branch_a/b`",
        "SELECT * FROM `T$branch_a\\\\b$snapshots`",
        "INSERT INTO `T$branch_x/y` VALUES (2)",
        "ALTER TABLE `T$branch_a/b` SET TBLPROPERTIES ('x' = 'y')",
        "CALL sys.create_branch('default.T$branch_a/b', 'c')",
    ],
)
def test_branch_identifiers_naming_paths_are_refused(session: PaimonSession, sql: str) -> None:
    _table(session)
    before = files(session.warehouse)
    refused(session, sql, r"Branch name '.*' must not contain '[/\\]'")
    assert files(session.warehouse) == before


@pytest.mark.parametrize(
    "sql",
    [
        "ALTER TABLE T CREATE TAG `../x`",
        "ALTER TABLE T CREATE TAG `a\\\\b`",
        "ALTER TABLE T REPLACE TAG `../../snapshot/snapshot-1`",
        "ALTER TABLE T RENAME TAG t1 TO `../t2`",
        "ALTER TABLE T DELETE TAG `t1,../../snapshot/snapshot-1`",
        "SELECT * FROM T VERSION AS OF '../tag/tag-t1'",
    ],
)
def test_tag_ddl_and_versions_naming_paths_are_refused(session: PaimonSession, sql: str) -> None:
    _table(session)
    session.sql("ALTER TABLE T CREATE TAG t1")
    before = files(session.warehouse)
    refused(session, sql, r"[Tt]ag name '.*' must not contain")
    assert files(session.warehouse) == before
    assert rows(session, "SELECT tag_name FROM `T$tags`") == [("t1",)]


def test_database_names_leaving_the_warehouse_are_refused(
    session: PaimonSession, tmp_path: Path
) -> None:
    """`DROP DATABASE `x.db/../../outside` CASCADE` deleted a directory beside the warehouse."""
    _table(session)
    session.sql("CREATE DATABASE x")
    outside = Path(session.warehouse).parent / "outside.db"
    (outside / "t").mkdir(parents=True)
    (outside / "t" / "keep").write_text("mine")
    before = files(str(tmp_path))
    for sql in (
        "DROP DATABASE `x.db/../../outside` CASCADE",
        "CREATE DATABASE `a/b`",
        "CREATE TABLE `x.db/../../outside`.u (id INT) USING paimon",
        "SELECT * FROM paimon.`x.db/../../outside`.t",
        "INSERT INTO paimon.`x.db/../../outside`.t VALUES (1)",
        "SHOW TABLES IN `x.db/../../outside`",
    ):
        refused(session, sql, r"Database name '.*' must not contain '/'|Invalid table identifier")
    # Without the catalog the name is no Paimon table: Spark's catalog refuses it.
    with pytest.raises(Exception, match=re.escape("x.db/../../outside")):
        session.sql("SELECT * FROM `x.db/../../outside`.t").collect()
    assert files(str(tmp_path)) == before


def test_format_paimon_options_naming_paths_are_refused(
    session: PaimonSession, spark: SparkSession
) -> None:
    _table(session)
    before = files(session.warehouse)
    reader = spark.read.format("paimon").option("warehouse", session.warehouse)
    for key, value in (("branch", ESCAPING), ("scan.tag-name", "../tag-x")):
        with pytest.raises(Exception, match=r"must not contain '/'"):
            reader.option(key, value).load("default.T").collect()
    frame = spark.createDataFrame([(2,)], "id INT")
    with pytest.raises((SqlError, PaimonError), match=r"must not contain '/'") as info:
        (
            frame.write.format("paimon")
            .option("warehouse", session.warehouse)
            .option("branch", ESCAPING)
            .mode("append")
            .save("default.T")
        )
    assert "\n" not in str(info.value)
    assert files(session.warehouse) == before
    assert files_outside(session.warehouse) == []

"""Comments are harmless wherever a SQL script may have them: leading, inner and trailing `--`
and `/* */` comments leave every statement family doing what it does without them, through
`PaimonSession.sql`, a `-f` script and the in-process metadata engine."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from sql_ext.metadata.engine import MetadataEngine
from sql_ext.metadata.result import Rows
from sql_ext.session import PaimonSession
from sql_ext.shell import EXIT_OK
from sql_ext.shell import run as shell_run
from sql_ext.syntax.parse import blank_comments, code_of, split_statements
from tests.unit.procedures.helpers import new_catalog, new_table

# One statement of each family, in an order that runs as a script on an empty warehouse.
FAMILIES = [
    "CREATE DATABASE cdb",
    "USE cdb",
    "CREATE TABLE t (k INT, v STRING, dt STRING) PARTITIONED BY (dt) "
    "TBLPROPERTIES ('primary-key' = 'k,dt', 'bucket' = '1')",
    "CREATE TABLE a (k INT, v STRING)",
    "INSERT INTO t VALUES (1, 'a', 'x'), (2, 'b', 'y')",
    "INSERT INTO a SELECT k, v FROM t",
    "SET comments.test.key = 1",
    "CALL sys.create_tag(table => 'cdb.t', tag => 'one')",
    "ALTER TABLE t CREATE TAG two",
    "ALTER TABLE t RENAME TAG two TO three",
    "SHOW TAGS t",
    "ALTER TABLE t DELETE TAG three",
    "ALTER TABLE t SET TBLPROPERTIES ('x' = '1')",
    "ALTER TABLE t ADD COLUMN w INT",
    "ALTER TABLE t RENAME COLUMN w TO w2",
    "ALTER TABLE a ALTER COLUMN v COMMENT 'the value'",
    "SHOW TABLES",
    "SHOW CREATE TABLE t",
    "SHOW PARTITIONS t",
    "DESCRIBE t",
    "SELECT k, v FROM t ORDER BY k",
    "SELECT snapshot_id, commit_kind FROM `t$snapshots` ORDER BY snapshot_id",
    "SELECT tag_name FROM `t$tags`",
    "UPDATE t SET v = 'c' WHERE k = 1",
    "DELETE FROM t WHERE k = 2",
    "MERGE INTO t USING (SELECT 3 AS k, 'm' AS v, 'z' AS dt) s ON t.k = s.k "
    "WHEN NOT MATCHED THEN INSERT (k, v, dt) VALUES (s.k, s.v, s.dt)",
    "UPDATE a SET v = 'u' WHERE k = 1",
    "DELETE FROM a WHERE k = 2",
    "SELECT * FROM t ORDER BY k",
    "SELECT * FROM a ORDER BY k",
    "DROP TABLE a",
    "USE default",
    "DROP DATABASE cdb CASCADE",
]

LEADING = "-- note: it's a comment; with quotes\n/* a block; */ "
TRAILING = " -- trailing; 'comment'\n/* end */"


def inner(statement: str) -> str:
    """Comments after the first and the second word."""
    first, second, *rest = statement.split(" ", 2)
    return f"{first} /* in; 'ner' */ {second} -- inner; \n{' '.join(rest)}"


VARIANTS: dict[str, Callable[[str], str]] = {
    "leading": lambda s: LEADING + s,
    "inner": inner,
    "trailing": lambda s: s + TRAILING,
    "all": lambda s: LEADING + inner(s) + TRAILING,
}


def results(session: PaimonSession, statements: list[str]) -> list[list[tuple[Any, ...]]]:
    """Each statement's rows, the warehouse path replaced by `WH`."""
    found = []
    for statement in statements:
        found.append(
            [
                tuple(str(v).replace(session.warehouse, "WH") for v in row)
                for row in session.sql(statement).collect()
            ]
        )
    return found


def test_blank_comments_keeps_positions_and_hints() -> None:
    text = "-- a;\nSELECT /*+ BROADCAST(t) */ '--x' /* b /* nested */ c */ FROM t -- d"
    blanked = blank_comments(text)
    assert len(blanked) == len(text) and blanked.count("\n") == 1
    assert blanked.split() == ["SELECT", "/*+", "BROADCAST(t)", "*/", "'--x'", "FROM", "t"]
    assert code_of("SELECT 1 -- x") == "SELECT 1"
    assert blank_comments("SELECT 1 /* open") == "SELECT 1 /* open"


@pytest.mark.spark
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_family_with_comments_through_sql(
    spark: SparkSession, tmp_path: Path, variant: str
) -> None:
    plain = PaimonSession(spark, warehouse=str(tmp_path / "plain"))
    commented = PaimonSession(spark, warehouse=str(tmp_path / "commented"))
    try:
        expected = results(plain, FAMILIES)
        assert results(commented, [VARIANTS[variant](s) for s in FAMILIES]) == expected
    finally:
        plain.stop()
        commented.stop()
        spark.sql("RESET comments.test.key")


@pytest.mark.spark
def test_every_family_with_comments_through_a_script(spark: SparkSession, tmp_path: Path) -> None:
    outputs = []
    for name, shape in (("plain", str), ("commented", VARIANTS["all"])):
        script = tmp_path / f"{name}.sql"
        script.write_text(
            "\n\n-- the script\n" + ";\n\n".join(shape(s) for s in FAMILIES) + ";\n-- done\n",
            encoding="utf-8",
        )
        session = PaimonSession(spark, warehouse=str(tmp_path / name))
        out, err = io.StringIO(), io.StringIO()
        try:
            code = shell_run(
                ["-f", str(script), "--output", "tsv"],
                session=session,
                stdout=out,
                stderr=err,
                environ={},
            )
        finally:
            session.stop()
        assert (code, err.getvalue()) == (EXIT_OK, "")
        outputs.append(out.getvalue().replace(str(tmp_path / name), "WH"))
    assert outputs[0] == outputs[1]
    assert "cdb\tt\tfalse" in outputs[0]


ANSWERED = [
    "SHOW TAGS db.t",
    "ALTER TABLE db.t CREATE TAG x",
    "CALL sys.create_tag(table => 'db.t', tag => 'y')",
    "SHOW TABLES IN db",
    "SHOW CREATE TABLE db.t",
    "SHOW PARTITIONS db.t",
    "DESCRIBE db.t",
    "DESCRIBE DATABASE db",
    "SELECT snapshot_id FROM db.`t$snapshots`",
    "USE db",
    "ALTER TABLE t DELETE TAG x",
]


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_metadata_engine_answers_commented_statements(tmp_path: Path, variant: str) -> None:
    answers = []
    for name, shape in (("plain", str), ("commented", VARIANTS[variant])):
        warehouse = str(tmp_path / name)
        new_table(new_catalog(warehouse), commits=2)
        engine = MetadataEngine(warehouse)
        found = []
        for statement in ANSWERED:
            answered = engine.run(shape(statement))
            assert isinstance(answered, Rows), statement
            found.append([tuple(str(v).replace(warehouse, "WH") for v in r) for r in answered.rows])
        answers.append(found)
    assert answers[0] == answers[1]


def test_split_keeps_statements_that_only_follow_comments() -> None:
    script = "-- one; two\n/* three; */\nSHOW TAGS t; -- x\n\n-- y\nALTER TABLE t CREATE TAG z"
    assert [code_of(s).strip() for s in split_statements(script)] == [
        "SHOW TAGS t",
        "ALTER TABLE t CREATE TAG z",
    ]

"""Every statement the in-process engine answers prints byte for byte what the Spark path
prints (`table`, `tsv`, `json`; errors and exit codes too), and what it cannot answer goes to
Spark, started once, with the session's state."""

from __future__ import annotations

import io
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from paimon_core.lifecycle.branch_management import create_branch
from paimon_core.lifecycle.tag_management import create_tag
from procedures import PROCEDURES
from sql_ext import session as session_module
from sql_ext.metadata import engine as engine_module
from sql_ext.metadata.config import session_conf
from sql_ext.metadata.engine import MetadataEngine
from sql_ext.metadata.result import Rows, ToSpark
from sql_ext.output import OutputFormat
from sql_ext.session import PaimonSession
from sql_ext.shell import EXIT_FAILED, EXIT_OK, Console, LazySession, interact
from sql_ext.shell import run as shell_run
from sql_ext.syntax.parse import Statement, parse_statement
from tests.unit.procedures.helpers import new_catalog, new_table

FORMATS = ("table", "tsv", "json")
UTC = ("--conf", "spark.sql.session.timeZone=UTC")

ANSWERED = [
    "SELECT * FROM db.t$snapshots",
    "SELECT snapshot_id, commit_kind, total_record_count FROM db.t$snapshots "
    "WHERE snapshot_id >= 2 ORDER BY snapshot_id DESC",
    "SELECT SNAPSHOT_ID AS id, s.commit_time FROM paimon.db.t$snapshots s "
    "WHERE s.commit_kind = 'APPEND' AND (snapshot_id IN (1, 3) OR watermark IS NOT NULL) "
    "ORDER BY 1 LIMIT 5",
    "SELECT count(*), COUNT(1), count(watermark), min(commit_time), max(snapshot_id), "
    "sum(total_record_count), min(commit_user) FROM db.t$snapshots",
    "SELECT count(*) AS n, max(snapshot_id), sum(snapshot_id) FROM db.t$snapshots "
    "WHERE snapshot_id > 100",
    "SELECT snapshot_id FROM db.t$snapshots "
    "WHERE snapshot_id BETWEEN 2 AND 3 AND NOT commit_kind <> 'APPEND'",
    "SELECT snapshot_id, watermark FROM db.t$snapshots "
    "ORDER BY watermark NULLS LAST, snapshot_id DESC LIMIT 2",
    "SELECT commit_kind, snapshot_id FROM db.t$snapshots WHERE watermark = 1 OR NULL",
    "SELECT * FROM db.t$tags ORDER BY snapshot_id DESC, tag_name",
    "SELECT tag_name, time_retained FROM db.t$tags "
    "WHERE tag_name LIKE 'dai%' OR tag_name LIKE '_eekly'",
    "SELECT tag_name, time_retained FROM db.t$tags ORDER BY time_retained, tag_name",
    "SELECT tag_name, time_retained FROM db.t$tags ORDER BY time_retained DESC NULLS FIRST",
    "SELECT tag_name FROM db.t$tags WHERE NOT time_retained = 'PT24H'",
    "SELECT tag_name FROM db.t$tags WHERE time_retained IS NULL OR snapshot_id = 2",
    "SELECT count(time_retained), min(time_retained), max(tag_name) FROM db.t$tags",
    "SELECT tag_name FROM db.t$tags WHERE commit_time < create_time AND tag_name <> 'weekly'",
    "SELECT * FROM db.t$options",
    "SELECT * FROM db.t$schemas",
    "SELECT `key`, value FROM db.t$options WHERE `key` LIKE 'snapshot%' ORDER BY `key` DESC",
    "SELECT * FROM db.t$branches",
    "SELECT snapshot_id, commit_kind FROM db.t$branch_b1$snapshots",
    "SELECT tag_name, snapshot_id FROM db.`t$branch_b1$tags`",
    "DESCRIBE db.t$branch_b1$schemas",
    "SHOW TAGS db.t",
    "SHOW TABLES IN db",
    "SHOW TABLES FROM db LIKE 't*|u'",
    "SHOW DATABASES",
    "SHOW NAMESPACES LIKE 'd*'",
    "SHOW CURRENT NAMESPACE",
    "DESCRIBE DATABASE EXTENDED db",
    "SHOW TABLES IN sys",
    "SELECT table_name, partitioned, record_count FROM sys.tables WHERE database_name = 'db'",
    "DESCRIBE db.t",
    "DESC TABLE paimon.db.t",
    "DESCRIBE db.t$snapshots",
    "DESCRIBE db.t$tags",
    "DESCRIBE EXTENDED db.t",
    "DESC TABLE FORMATTED paimon.db.t",
    "SHOW CREATE TABLE db.t",
    "SHOW COLUMNS IN db.t",
    "SHOW COLUMNS FROM t IN db",
    "SHOW PARTITIONS db.t",
    "SHOW PARTITIONS paimon.db.t PARTITION (dt = '2024-01-02')",
    "SHOW TABLE EXTENDED IN db LIKE 't*'",
    "SHOW TABLE EXTENDED IN db LIKE 't' PARTITION (dt = '2024-01-02')",
    "SHOW TBLPROPERTIES db.t",
    "SHOW TBLPROPERTIES db.t ('nope')",
    "CALL sys.expire_tags(table => 'db.t', older_than => '2000-01-01 00:00:00')",
    # errors: one line on stderr, exit 1, both ways
    "SELECT * FROM db.nope$snapshots",
    "SELECT * FROM db.t$branch_nope$snapshots",
    "DESCRIBE db.nope$tags",
    "SHOW PARTITIONS db.t PARTITION (nope = 'x')",
    "SHOW TABLE EXTENDED IN db LIKE 't' PARTITION (dt = '1999-01-01')",
    "DESCRIBE db.t PARTITION (dt = '2024-01-02')",
    "USE nope",
    "SHOW TAGS db.nope",
    "CALL sys.nope()",
    "CALL sys.create_tag(table => 'db.t')",
    "CALL sys.create_tag(table => 'db.t', tag => 'daily')",
    "CALL other.sys.create_tag('db.t', 'x')",
    "SELECT * FROM db.t$snapshots WHERE",
    "ALTER TABLE db.t DELETE TAG",
]

TO_SPARK = [
    "SELECT snapshot_id + 1 FROM db.t$snapshots",
    "SELECT commit_kind, count(*) FROM db.t$snapshots GROUP BY commit_kind",
    "SELECT snapshot_id FROM db.t$snapshots WHERE snapshot_id = '2'",
    "SELECT max(SNAPSHOT_ID) FROM db.t$snapshots",
    "SELECT count(*) FROM db.t$files",
    "SELECT id, name FROM db.t ORDER BY id",
    "SELECT a.snapshot_id FROM db.t$snapshots a JOIN db.t$tags b ON a.snapshot_id = b.snapshot_id",
    "SELECT * FROM db.t$snapshots VERSION AS OF 1",
    "DESCRIBE EXTENDED db.t$snapshots",
    "SHOW FUNCTIONS LIKE 'coun*'",
]


@pytest.fixture
def base(warehouse: str) -> str:
    table = new_table(
        new_catalog(warehouse), commits=3, options={"snapshot.num-retained.max": "20"}
    )
    create_tag(table, "daily", snapshot_id=1, time_retained="1 d")
    create_tag(table, "weekly", snapshot_id=3)
    create_tag(table, "monthly", snapshot_id=2, time_retained="2 h")
    create_branch(table, "b1", "weekly")
    return warehouse


def copy(warehouse: str, name: str) -> str:
    target = str(Path(warehouse).parent / name)
    shutil.copytree(warehouse, target)
    return target


class Spark:
    """Starts of Spark by a `LazySession`: a PaimonSession over the shared SparkSession."""

    def __init__(self, spark: Any, warehouse: str) -> None:
        self.spark, self.warehouse, self.starts = spark, warehouse, 0

    def __call__(self) -> PaimonSession:
        self.starts += 1
        return PaimonSession(self.spark, warehouse=self.warehouse)


def no_spark() -> PaimonSession:
    raise AssertionError("Spark was started")


def run(argv: list[str], **kwargs: Any) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = shell_run(argv, stdout=out, stderr=err, stdin=io.StringIO(), environ={}, **kwargs)
    return code, out.getvalue(), err.getvalue()


def via_spark(spark: Any, warehouse: str, *argv: str) -> tuple[int, str, str]:
    session = PaimonSession(spark, warehouse=warehouse)
    try:
        return run(["--warehouse", warehouse, *argv], session=session)
    finally:
        session.stop()


def lazily(
    start: Callable[[], PaimonSession], conf_dir: Path, *argv: str
) -> tuple[int, str, str, LazySession]:
    made: list[LazySession] = []

    def factory(args: Any) -> LazySession:
        conf = session_conf(args.conf, {"SPARK_CONF_DIR": str(conf_dir)})
        made.append(LazySession(MetadataEngine(args.warehouse, conf), start))
        return made[0]

    code, out, err = run([*UTC, *argv], session_factory=factory)
    return code, out, err, made[0]


@pytest.fixture
def conf_dir(tmp_path: Path) -> Path:
    path = tmp_path / "no-spark-conf"
    path.mkdir()
    return path


@pytest.mark.parametrize("fmt", FORMATS)
def test_answered_statements_print_what_spark_prints(
    spark: Any, base: str, conf_dir: Path, fmt: str
) -> None:
    failures = 0
    for statement in ANSWERED:
        expected = via_spark(spark, base, "--output", fmt, "-e", statement)
        got = lazily(no_spark, conf_dir, "--warehouse", base, "--output", fmt, "-e", statement)
        assert got[:3] == expected, statement
        assert expected[0] == EXIT_OK or expected[2].startswith("Error: "), statement
        failures += expected[0] == EXIT_FAILED
    assert failures == 14  # (failing statements: both ways alike)


def test_other_statements_go_to_spark_and_print_the_same(
    spark: Any, base: str, conf_dir: Path
) -> None:
    for statement in TO_SPARK:
        expected = via_spark(spark, base, "--output", "tsv", "-e", statement)
        start = Spark(spark, base)
        got = lazily(start, conf_dir, "--warehouse", base, "--output", "tsv", "-e", statement)
        assert got[:3] == expected, statement
        assert start.starts == 1, statement


CHANGES = """
CALL sys.create_tag(table => 'db.t', tag => 'n1', snapshot => 1);
ALTER TABLE db.t CREATE TAG n2 AS OF VERSION 2 RETAIN 2 HOURS;
CALL sys.rename_tag('db.t', 'n1', 'n3');
ALTER TABLE db.t DELETE TAG n2;
USE db;
SHOW TABLES;
CALL sys.replace_tag(table => 't', tag => 'n3', snapshot => 3, time_retained => '1 h');
SELECT tag_name, snapshot_id, time_retained FROM t$tags ORDER BY tag_name;
CALL sys.create_tag_from_timestamp('t', 'ts', 1700000000001);
CALL sys.expire_snapshots(table => 't', retain_max => 2, retain_min => 1);
SELECT snapshot_id FROM t$snapshots;
CALL sys.rollback(table => 't', snapshot => 3);
SHOW TAGS t
"""


@pytest.mark.parametrize("fmt", FORMATS)
def test_changes_give_the_same_results_and_state(
    spark: Any, base: str, conf_dir: Path, fmt: str
) -> None:
    ours, theirs = copy(base, "ours"), copy(base, "theirs")
    expected = via_spark(spark, theirs, "--output", fmt, "-e", CHANGES)
    got = lazily(no_spark, conf_dir, "--warehouse", ours, "--output", fmt, "-e", CHANGES)
    assert expected[0] == EXIT_OK, expected[2]
    assert got[:3] == expected
    assert sorted(p.name for p in Path(ours, "db.db", "t", "tag").iterdir()) == [
        "tag-daily",
        "tag-monthly",
        "tag-n3",
        "tag-ts",
        "tag-weekly",
    ]


MIXED = """
USE db;
CALL sys.create_tag(table => 't', tag => 'before', snapshot => 2);
SELECT id, name FROM t ORDER BY id;
CALL sys.create_tag(table => 't', tag => 'after', snapshot => 3);
SELECT tag_name, snapshot_id FROM t$tags ORDER BY tag_name
"""


def test_a_script_starts_spark_once_at_its_first_data_statement(
    spark: Any, base: str, conf_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ours, theirs = copy(base, "ours"), copy(base, "theirs")
    script = tmp_path / "mixed.sql"
    script.write_text(MIXED)
    expected = via_spark(spark, theirs, "-f", str(script))
    start = Spark(spark, ours)
    tags = Path(ours, "db.db", "t", "tag")
    seen_at_start: list[list[str]] = []

    def spy() -> PaimonSession:
        seen_at_start.append(sorted(p.name for p in tags.iterdir()))
        return start()

    parses: list[str] = []

    def counted(text: str) -> Statement:
        parses.append(text)
        return parse_statement(text)

    monkeypatch.setattr(engine_module, "parse_statement", counted)
    monkeypatch.setattr(session_module, "parse_statement", counted)
    code, out, err, session = lazily(spy, conf_dir, "--warehouse", ours, "-f", str(script))
    assert (code, out, err) == expected and code == EXIT_OK
    assert start.starts == 1
    assert seen_at_start == [["tag-before", "tag-daily", "tag-monthly", "tag-weekly"]]
    assert session.spark_session is not None and session.current_database == "db"
    assert len(parses) == len(set(parses)) == MIXED.count(";") + 1  # each statement once


def test_errors_stop_a_script_the_same_way(spark: Any, base: str, conf_dir: Path) -> None:
    script = "SHOW TAGS db.t; CALL sys.delete_tag(table => 'db.t'); SHOW DATABASES"
    expected = via_spark(spark, base, "-e", script)
    got = lazily(no_spark, conf_dir, "--warehouse", base, "-e", script)
    assert got[:3] == expected
    assert expected[0] == EXIT_FAILED and expected[2].count("\n") == 1


def test_dynamic_options_from_conf_apply_as_in_spark(spark: Any, base: str, conf_dir: Path) -> None:
    ours, theirs = copy(base, "ours"), copy(base, "theirs")
    # Snapshots are older than `snapshot.time-retained`: expiry keeps the minimum.
    settings = {
        "spark.paimon.snapshot.num-retained.min": "1",
        "spark.paimon.paimon.db.t.snapshot.num-retained.min": "2",
    }
    script = "CALL sys.expire_snapshots(table => 'db.t'); SELECT snapshot_id FROM db.t$snapshots"
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        expected = via_spark(spark, theirs, "--output", "json", "-e", script)
    finally:
        for key in settings:
            spark.conf.unset(key)
    confs = [arg for key, value in settings.items() for arg in ("--conf", f"{key}={value}")]
    got = lazily(no_spark, conf_dir, *confs, "--warehouse", ours, "--output", "json", "-e", script)
    assert got[:3] == expected
    assert expected[1].splitlines() == [
        '{"deleted_snapshots_count":1}',
        '{"snapshot_id":2}',
        '{"snapshot_id":3}',
    ]


def test_the_interactive_loop_answers_without_spark(base: str, conf_dir: Path) -> None:
    engine = MetadataEngine(base, session_conf([], {"SPARK_CONF_DIR": str(conf_dir)}))
    session = LazySession(engine, no_spark)
    inputs = iter(["USE db;", "SHOW TAGS t; CALL sys.nope();", "SHOW TABLES;"])
    prompts: list[str] = []

    def read() -> str:
        prompts.append(session.current_database)
        try:
            return next(inputs)
        except StopIteration:
            raise EOFError from None

    out, err = io.StringIO(), io.StringIO()
    console = Console(out, err, OutputFormat.TSV, verbose=False)
    assert interact(session, console, read) == EXIT_OK  # type: ignore[arg-type]
    assert prompts == ["default", "db", "db", "db"]
    assert out.getvalue() == (
        "tag\ndaily\nmonthly\nweekly\nnamespace\ttableName\tisTemporary\ndb\tt\tfalse\n"
    )
    assert [line for line in err.getvalue().splitlines() if line.startswith("Error")] == [
        "Error: Procedure sys.nope is not found. Available: " + ", ".join(sorted(PROCEDURES)) + "."
    ]
    assert session.spark_session is None


@pytest.mark.parametrize(
    "setting", ["spark.sql.caseSensitive=true", "spark.sql.orderByOrdinal=false"]
)
def test_queries_go_to_spark_under_other_query_settings(base: str, setting: str) -> None:
    key, _, value = setting.partition("=")
    query = "SELECT snapshot_id FROM db.t$snapshots ORDER BY 1"
    assert isinstance(MetadataEngine(base, {}).run(query), Rows)
    assert MetadataEngine(base, {key: value}).run(query) == ToSpark(parse_statement(query))


@pytest.mark.parametrize(
    "call",
    [
        "CALL sys.compact(table => 'db.t')",
        "CALL sys.rescale(table => 'db.t')",
        "CALL sys.rewrite_file_index(table => 'db.t')",
        "CALL sys.copy(source_table => 'db.t', target_table => 'db.c')",
    ],
)
def test_procedures_that_read_data_files_go_to_spark(base: str, call: str) -> None:
    """Their data work runs on Spark's executors: the engine does nothing and hands them on
    (the files of ``db.t`` are untouched)."""
    before = sorted(p for p in Path(base).rglob("*"))
    assert MetadataEngine(base, {}).run(call) == ToSpark(parse_statement(call))
    assert sorted(p for p in Path(base).rglob("*")) == before

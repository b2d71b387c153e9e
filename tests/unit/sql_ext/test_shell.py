"""The paimon-sql command: arguments, scripts, output formats, errors and the interactive loop.

Everything runs `shell.run()` in-process on the shared SparkSession, except two subprocess
tests of the installed command and one of the interactive shell in a pseudo-terminal (Ctrl-C
on a running statement), each starting its own JVM; those wait for output, never for time.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import pty
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from paimon_core.lifecycle.tag_management import create_tag
from sql_ext.metadata.engine import MetadataEngine
from sql_ext.metadata.result import ToSpark
from sql_ext.output import OutputFormat
from sql_ext.session import PaimonSession
from sql_ext.shell import (
    CANCELLED,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    PROGRESS_CONF,
    STARTING,
    TASK_FAILURE_LOGGERS,
    Console,
    build_parser,
    error_message,
    forward_jvm_stderr,
    interact,
    is_complete,
    quiet_spark,
    spark_conf,
    surely_needs_spark,
)
from sql_ext.shell import run as shell_run
from tests.unit.procedures.helpers import T0, new_catalog, new_table

ROOT = Path(__file__).resolve().parents[3]
QUICKSTART = ROOT / "examples" / "quickstart.sql"


def run(*argv: str, session: Any = None, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()

    def no_session(_args: Any) -> Any:
        raise AssertionError("a session was started")

    code = shell_run(
        list(argv),
        session=session,
        session_factory=no_session,
        stdin=io.StringIO(stdin),
        stdout=out,
        stderr=err,
        environ={},
    )
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def session(spark: Any, warehouse: str) -> Iterator[PaimonSession]:
    session = PaimonSession(spark, warehouse=warehouse)
    yield session
    session.stop()


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


# --------------------------------------------------------------------------- no Spark


@pytest.mark.parametrize(
    ("text", "complete"),
    [
        ("SELECT 1;", True),
        ("SELECT 1", False),
        ("SELECT 1;\n  ", True),
        ("SELECT 1; -- done", True),
        ("SELECT ';'", False),
        ("SELECT 'a;\n", False),
        ("SELECT 1 -- not the end;", False),
        ("SELECT 1 /* still; open", False),
        ("SELECT 1 /* closed; */;", True),
        ("SELECT `a;b`", False),
        ("SELECT 1; SELECT 2", False),
        ("SELECT 1; SELECT 2;", True),
        ("", True),
        ("quit", True),
        ("EXIT;", True),
    ],
)
def test_statement_completeness(text: str, complete: bool) -> None:
    assert is_complete(text) is complete


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--bogus"], "--bogus"),
        (["-e", "SELECT 1", "-f", "x.sql"], "not allowed"),
        (["--output", "csv", "-e", "SELECT 1"], "csv"),
        (["--conf", "novalue", "-e", "SELECT 1"], "KEY=VALUE"),
        (["-f", "/no/such/file.sql"], "No such file"),
    ],
)
def test_argument_errors_are_one_line_and_exit_2(argv: list[str], needle: str) -> None:
    code, out, err = run(*argv)
    assert code == EXIT_USAGE
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("paimon-sql: error:") and needle in err


def test_help_and_blank_input_start_no_session() -> None:
    code, out, err = run("--help")
    assert (code, err) == (EXIT_OK, "")
    assert "-e SQL" in out and "--output {table,tsv,json}" in out
    assert run("-e", " ; -- nothing\n;") == (EXIT_OK, "", "")


def test_unexpected_errors_name_their_type() -> None:
    assert error_message(TypeError("boom\nmore")) == "TypeError: boom"
    assert error_message(KeyError()) == "KeyError"


class Terminal(io.StringIO):
    """A text stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("argv", "progress", "expected"),
    [
        ([], False, "false"),  # piped stderr: no progress bar in logs
        ([], True, None),  # a terminal: spark-defaults' `true`
        (["--conf", f"{PROGRESS_CONF}=true"], False, "true"),
        (["--conf", f"{PROGRESS_CONF}=false"], True, "false"),
    ],
)
def test_progress_bar_only_on_a_terminal_unless_set(
    argv: list[str], progress: bool, expected: str | None
) -> None:
    args = build_parser().parse_args([*argv, "--master", "local[1]"])
    conf = spark_conf(args, progress)
    assert conf.get(PROGRESS_CONF) == expected
    assert (conf.get("spark.master"), conf.get("spark.app.name")) == ("local[1]", "paimon-sql")


@pytest.mark.parametrize(
    ("statement", "to_spark"),
    [
        ("SELECT 1", True),
        ("-- first\n/* x */ INSERT INTO db.t VALUES (1)", True),
        ("CREATE TABLE db.t (a INT)", True),
        ("SET spark.sql.shuffle.partitions = 2", True),
        ("SELECT * FROM ${t}", True),
        ("SELECT * FROM db.t$snapshots", False),  # the engine may answer these
        ("SELECT * FROM sys.tables", False),
        ("SHOW TAGS db.t", False),
        ("CALL sys.create_tag('db.t', 'x')", False),
        ("ALTER TABLE db.t CREATE TAG x", False),
        ("DESCRIBE db.t", False),
        ("-- nothing", False),
    ],
)
def test_the_jvm_starts_early_only_for_statements_surely_spark_s(
    statement: str, to_spark: bool, warehouse: str
) -> None:
    assert surely_needs_spark(statement) is to_spark
    if to_spark:  # the engine agrees: it hands the statement to Spark
        assert isinstance(MetadataEngine(warehouse, {}).run(statement), ToSpark)


def test_status_line_only_on_a_terminal_and_erased() -> None:
    terminal = Console(io.StringIO(), Terminal(), OutputFormat.TABLE, verbose=False)
    with terminal.status(STARTING):
        assert terminal.err.getvalue() == STARTING
    assert terminal.err.getvalue() == STARTING + "\r\x1b[K"
    piped = Console(io.StringIO(), io.StringIO(), OutputFormat.JSON, verbose=False)
    with piped.status(STARTING):
        pass
    assert (piped.out.getvalue(), piped.err.getvalue()) == ("", "")


class Chunks:
    """A pipe that hands out the given chunks one read at a time."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = list(chunks)

    def read1(self, _size: int) -> bytes:
        return self.chunks.pop(0) if self.chunks else b""


@pytest.mark.parametrize(
    "chunks",
    [
        [b"WARNING: Using incubator modules: jdk.incubator.vector\n", b"log line\n"],
        [b"WARN", b"ING: Using incubator", b" modules: jdk.incubator.vector\nlog ", b"line\n"],
    ],
)
def test_jvm_start_notices_are_dropped_and_the_rest_forwarded(chunks: list[bytes]) -> None:
    written: list[bytes] = []
    forward_jvm_stderr(Chunks(chunks), written.append)  # type: ignore[arg-type]
    assert b"".join(written) == b"log line\n"


def test_jvm_progress_bar_is_forwarded_before_its_line_ends() -> None:
    pipe = Chunks([b"\r[Stage 0:>   (0 + 2) / 4]", b"\r[Stage 0:=>  (1 + 2) / 4]", b"\n"])
    seen: list[tuple[bytes, int]] = []
    forward_jvm_stderr(pipe, lambda data: seen.append((data, len(pipe.chunks))))  # type: ignore[arg-type]
    assert seen == [
        (b"\r[Stage 0:>   (0 + 2) / 4]", 2),
        (b"\r[Stage 0:=>  (1 + 2) / 4]", 1),
        (b"\n", 0),
    ]


# --------------------------------------------------------------------------- scripts


def test_e_runs_statements_in_order_and_prints_json(session: PaimonSession) -> None:
    code, out, err = run(
        "--output",
        "json",
        "-e",
        "CREATE DATABASE db; "
        "CREATE TABLE db.t (id BIGINT, name STRING, d DECIMAL(5, 2)); "
        "INSERT INTO db.t VALUES (1, 'a;b', 1.50), (2, NULL, NULL); "
        "SELECT * FROM db.t ORDER BY id; "
        "SELECT snapshot_id, commit_kind FROM db.t$snapshots; "
        "SELECT a.snapshot_id, b.snapshot_id FROM db.t$snapshots a JOIN db.t$snapshots b "
        "USING (snapshot_id)",
        session=session,
    )
    assert (code, err) == (EXIT_OK, "")
    assert json_lines(out) == [
        {"id": 1, "name": "a;b", "d": "1.50"},
        {"id": 2, "name": None, "d": None},
        {"snapshot_id": 1, "commit_kind": "APPEND"},
        {"snapshot_id": 1, "snapshot_id_2": 1},
    ]


def test_f_runs_a_file_as_tsv_and_table(session: PaimonSession, tmp_path: Path) -> None:
    script = tmp_path / "script.sql"
    script.write_text(
        "CREATE DATABASE db;\n"
        "CREATE TABLE db.t (id BIGINT, name STRING);\n"
        "INSERT INTO db.t VALUES (1, 'x'), (2, 'tab\there');\n"
        "SELECT * FROM db.t ORDER BY id;\n",
        encoding="utf-8",
    )
    code, out, err = run("--output", "tsv", "-f", str(script), session=session)
    assert (code, out, err) == (EXIT_OK, "id\tname\n1\tx\n2\ttab\\there\n", "")
    code, out, _ = run("-e", "SELECT id, name FROM db.t WHERE id = 1", session=session)
    assert (code, out) == (EXIT_OK, "+---+----+\n|id |name|\n+---+----+\n|1  |x   |\n+---+----+\n")


def test_f_echo_heads_each_result_and_errors_name_file_and_line(
    session: PaimonSession, tmp_path: Path
) -> None:
    script = tmp_path / "script.sql"
    script.write_text(
        "-- setup\n"
        "CREATE DATABASE db;\n"
        "CREATE TABLE db.t (id BIGINT);\n"
        "INSERT INTO db.t VALUES (1);\n"
        "\n"
        "/* the rows */ SELECT id\n"
        "  FROM db.t;\n"
        "-- a mistake, on line 10:\n"
        "\n"
        "SELECT * FROM db.missing;\n"
        "SELECT 'never' AS n;\n",
        encoding="utf-8",
    )
    code, out, err = run("--echo", "--output", "tsv", "-f", str(script), session=session)
    assert code == EXIT_FAILED
    assert out == (
        "-- CREATE DATABASE db\n"
        "-- CREATE TABLE db.t (id BIGINT)\n"
        "-- INSERT INTO db.t VALUES (1)\n"
        "-- SELECT id ...\n"
        "id\n1\n"
        "-- SELECT * FROM db.missing\n"
    )
    assert err.count("\n") == 1
    assert err.startswith(f"Error: {script}:10: ") and "missing" in err
    again = tmp_path / "again.sql"
    again.write_text("SELECT id FROM db.t;\nSELECT nope;\n", encoding="utf-8")
    code, out, err = run("--output", "tsv", "-f", str(again), session=session)
    assert (code, out) == (EXIT_FAILED, "id\n1\n")  # no echo by default when piped
    assert err.startswith(f"Error: {again}:2: ")
    for argv, headed in ((["-f", str(again)], True), (["-e", "SELECT id FROM db.t"], False)):
        terminal = Terminal()
        shell_run(argv, session=session, stdout=terminal, stderr=io.StringIO(), environ={})
        assert terminal.getvalue().startswith("-- SELECT id FROM db.t\n") is headed
    code, out, err = run("-e", "SELECT * FROM db.missing", session=session)
    assert err.startswith("Error: ") and not err.startswith("Error: -e")


def test_stdin_script_when_not_a_terminal_ends_at_quit(session: PaimonSession) -> None:
    script = "SELECT 1 AS one -- first\n;\nQUIT;\nSELECT 2 AS two;\n"
    code, out, _ = run("--output", "tsv", session=session, stdin=script)
    assert (code, out) == (EXIT_OK, "one\n1\n")


def test_stops_at_the_first_error_with_one_line(session: PaimonSession, warehouse: str) -> None:
    code, out, err = run(
        "--output",
        "json",
        "-e",
        "SELECT 1 AS one; SELECT * FROM no_db.no_table; CREATE DATABASE after_error",
        session=session,
    )
    assert code == EXIT_FAILED
    assert out == '{"one":1}\n'
    assert err.count("\n") == 1 and err.startswith("Error: ") and "no_table" in err
    assert "Traceback" not in err
    assert not Path(warehouse, "after_error.db").exists()


@pytest.mark.parametrize(
    ("script", "needle"),
    [
        ("SELECT * FROM t$snapshots WHERE", "Error: "),  # sqlglot
        ("SELEC 1", "PARSE_SYNTAX_ERROR"),  # Spark's parser
        ("CALL sys.create_tag(table => 'db.missing', tag => 'x')", "missing"),  # Paimon
    ],
)
def test_each_kind_of_error_is_one_line(session: PaimonSession, script: str, needle: str) -> None:
    code, out, err = run("-e", script, session=session)
    assert (code, out) == (EXIT_FAILED, "")
    assert err.count("\n") == 1 and err.startswith("Error: ") and needle in err


@pytest.mark.parametrize(
    ("file", "script"),
    [
        ("snapshot/snapshot-2", "SELECT * FROM db.t$snapshots"),
        ("snapshot/snapshot-3", "SELECT * FROM db.t"),
        ("snapshot/snapshot-2", "CALL sys.expire_snapshots('db.t', 1, 1)"),
        ("tag/tag-t1", "CALL sys.remove_orphan_files(table => 'db.t')"),
        ("tag/tag-t1", "SELECT * FROM db.t$tags"),
    ],
)
def test_corrupt_metadata_is_one_line_naming_the_file(
    session: PaimonSession, warehouse: str, file: str, script: str
) -> None:
    table = new_table(new_catalog(warehouse), commits=3)
    create_tag(table, "t1", snapshot_id=1)
    path = f"{table.path}/{file}"
    Path(path).write_text('{"version":3,"id":' + file.rsplit("-", 1)[-1].replace("t1", "1") + "}")
    for old in Path(table.path).rglob("*"):  # two days old: orphan removal looks at them
        os.utime(old, (old.stat().st_mtime - 2 * 86_400,) * 2)
    before = sorted(p for p in Path(table.path).rglob("*"))
    code, out, err = run("-e", script, session=session)
    assert (code, out) == (EXIT_FAILED, "")
    assert err.startswith("Error: ") and err.count("\n") == 1
    assert f" file {path} is corrupt: required fields " in err
    assert sorted(p for p in Path(table.path).rglob("*")) == before


def test_python_worker_errors_show_the_exception_line(session: PaimonSession) -> None:
    def boom(x: int) -> int:
        raise ValueError(f"bad value {x}")

    session.spark.udf.register("shell_test_boom", boom, "int")
    code, _, err = run("-e", "SELECT shell_test_boom(7)", session=session)
    assert (code, err) == (EXIT_FAILED, "Error: ValueError: bad value 7\n")


def test_quiet_spark_silences_failed_task_stack_traces(spark: Any) -> None:
    """Without the repository's log4j2.properties (a user's SPARK_CONF_DIR), a failing task
    would print Executor and TaskSetManager stack traces before `Error:`."""
    jvm = spark.sparkContext._jvm
    log_manager = jvm.org.apache.logging.log4j.LogManager
    configurator = jvm.org.apache.logging.log4j.core.config.Configurator
    level = jvm.org.apache.logging.log4j.Level
    before = {name: log_manager.getLogger(name).getLevel() for name in TASK_FAILURE_LOGGERS}
    try:
        for name in TASK_FAILURE_LOGGERS:
            configurator.setLevel(name, level.WARN)
        quiet_spark(spark)
        for name in TASK_FAILURE_LOGGERS:
            assert log_manager.getLogger(name).getLevel().toString() == "OFF"
        assert log_manager.getRootLogger().getLevel().toString() == "ERROR"
        interrupted = logging.LogRecord(
            "root", logging.ERROR, f"{os.sep}py4j{os.sep}java_gateway.py", 1, "x", None, None
        )
        assert not logging.getLogger().filter(interrupted)
    finally:
        for name, previous in before.items():
            configurator.setLevel(name, previous)


def test_verbose_shows_the_traceback(session: PaimonSession) -> None:
    code, _, err = run("--verbose", "-e", "SELECT * FROM no_db.no_table", session=session)
    assert code == EXIT_FAILED
    assert "Traceback" in err and err.splitlines()[-1].startswith("Error: ")


def test_quickstart_runs_green_twice(session: PaimonSession) -> None:
    for _ in range(2):
        code, out, err = run("--output", "json", "-f", str(QUICKSTART), session=session)
        assert (code, err) == (EXIT_OK, "")
    rows = json_lines(out)
    assert {"result": True} in rows
    kept = [
        r["snapshot_id"]
        for r in rows
        if set(r) == {"snapshot_id", "commit_kind", "total_record_count"}
    ]
    assert kept == [3, 4]
    assert {"deleted_snapshots_count": 2} in rows
    first = [r for r in rows if set(r) == {"order_id", "customer", "amount", "dt"}][-2:]
    assert [(r["order_id"], r["amount"]) for r in first] == [(1, "10.50"), (2, "7.25")]


# --------------------------------------------------------------------------- interactive


def test_interactive_loop_continues_after_errors(session: PaimonSession) -> None:
    inputs: list[Callable[[], str]] = [
        lambda: "SELECT 1 AS a;",
        lambda: (_ for _ in ()).throw(KeyboardInterrupt),
        lambda: "SELECT * FROM no_db.no_table; SELECT 'skipped' AS s;",
        lambda: "SELECT 2 AS b; quit; SELECT 3 AS c;",
    ]
    feed = iter(inputs)
    out, err = io.StringIO(), io.StringIO()
    console = Console(out, err, OutputFormat.TSV, verbose=False)
    assert interact(session, console, read=lambda: next(feed)()) == EXIT_OK
    assert out.getvalue() == "a\n1\nb\n2\n"
    notes = err.getvalue().splitlines()
    assert [n for n in notes if n.startswith("Error: ")] == notes[1:2]
    assert notes[0].startswith("Time taken: ")


def test_interactive_cancel_is_one_line_and_the_loop_goes_on(session: PaimonSession) -> None:
    def cancelled(_text: str) -> Any:
        raise KeyboardInterrupt

    class Cancelling:
        current_database = "default"

        def sql(self, text: str) -> Any:
            return cancelled(text) if "slow" in text else session.sql(text)

    inputs = iter(["SELECT 'slow' AS s;", "SELECT 1 AS a;"])

    def read() -> str:
        return next(inputs)  # StopIteration ends the loop below

    out, err = io.StringIO(), io.StringIO()
    console = Console(out, err, OutputFormat.TSV, verbose=False)
    with pytest.raises(StopIteration):
        interact(Cancelling(), console, read=read)  # type: ignore[arg-type]
    assert out.getvalue() == "a\n1\n"
    assert err.getvalue().splitlines()[0] == CANCELLED
    code, _, err_text = run("-e", "SELECT 'slow' AS s", session=Cancelling())
    assert (code, err_text) == (EXIT_INTERRUPTED, CANCELLED + "\n")


def test_interactive_loop_ends_at_eof(session: PaimonSession) -> None:
    def eof() -> str:
        raise EOFError

    console = Console(io.StringIO(), io.StringIO(), OutputFormat.TABLE, verbose=False)
    assert interact(session, console, read=eof) == EXIT_OK


# --------------------------------------------------------------------------- real processes

QUIET = ["--master", "local[1]", "--conf", "spark.ui.showConsoleProgress=false"]

# Every procedure once, in one process (a JVM start each would cost ~10 s), on `db.t` with
# snapshots 1 and 2 committed at T0 and T0 + 60 s.
EVERY_PROCEDURE = f"""
CALL sys.create_tag(table => 'db.t', tag => 'nightly', snapshot => 1);
CALL sys.create_tag_from_timestamp(table => 'db.t', tag => 'from_ts', timestamp => {T0 + 1});
CALL sys.rename_tag(table => 'db.t', tag => 'from_ts', target_tag => 'renamed');
CALL sys.replace_tag(table => 'db.t', tag => 'renamed', snapshot => 1);
CALL sys.delete_tag(table => 'db.t', tag => 'renamed');
CALL sys.expire_tags(table => 'db.t');
CALL sys.rollback_to_timestamp(table => 'db.t', timestamp => {T0 + 1});
INSERT INTO db.t VALUES (7, 'x', '2024-01-01');
CALL sys.rollback(table => 'db.t', snapshot => 1, dry_run => true);
CALL sys.rollback(table => 'db.t', snapshot => 1);
CALL sys.expire_snapshots(table => 'db.t', retain_max => 1, retain_min => 1);
CALL sys.remove_orphan_files(table => 'db.t', older_than => '2000-01-01 00:00:00');
CALL sys.rescale(table => 'db.t');
CALL sys.compact(table => 'db.t');
CALL sys.compact_manifest(table => 'db.t');
CALL sys.compact_database(including_databases => 'db');
"""


@dataclass
class Launched:
    warehouse: str
    process: subprocess.Popen[str]

    def finish(self) -> tuple[int, str, str]:
        out, err = self.process.communicate(timeout=300)
        return self.process.returncode, out, err


@pytest.fixture(scope="module")
def launched(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Launched]]:
    """Both commands start at once: each JVM takes ~10 s to come up, so they overlap."""
    env = {
        **os.environ,
        "PYSPARK_PYTHON": sys.executable,
        "SPARK_CONF_DIR": str(ROOT / "spark-conf"),
    }
    scripts = {
        "call": [
            str(Path(sys.executable).with_name("paimon-sql")),
            "--output",
            "json",
            "-e",
            EVERY_PROCEDURE,
        ],
        "failing": [
            sys.executable,
            "-m",
            "sql_ext.shell",
            "-e",
            "SELECT * FROM db.t VERSION AS OF 'no_such_tag'; "
            "CALL sys.create_tag(table => 'db.t', tag => 'never')",
        ],
    }
    runs = {}
    for name, argv in scripts.items():
        warehouse = str(tmp_path_factory.mktemp(name))
        new_table(new_catalog(warehouse), commits=2)
        process = subprocess.Popen(
            [*argv, *QUIET, "--warehouse", warehouse],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=ROOT,
        )
        runs[name] = Launched(warehouse, process)
    yield runs
    for run_ in runs.values():
        if run_.process.poll() is None:
            run_.process.kill()
        run_.process.communicate()


def test_installed_command_runs_a_call(launched: dict[str, Launched]) -> None:
    code, out, err = launched["call"].finish()
    assert code == EXIT_OK, err
    lines = json_lines(out)
    dry_run = [line for line in lines if "file_to_delete" in line]
    assert dry_run and all(line["current_snapshot_id"] == 1 for line in dry_run)
    assert [line for line in lines if "file_to_delete" not in line] == [
        {"result": True},
        {"tagName": "from_ts", "snapshot": 2, "commit_time": T0 + 60_000, "watermark": "null"},
        {"result": True},
        {"result": True},
        {"result": True},
        {"expired_tags": "No expired tags."},
        {"previous_snapshot_id": 2, "current_snapshot_id": 1},
        {"previous_snapshot_id": 2, "current_snapshot_id": 1},
        {"deleted_snapshots_count": 0},
        {"deletedFileCount": 0, "deletedFileTotalLenInBytes": 0},
        {"result": True},
        {"result": True},
        {"result": True},
        {"result": "Compact database finished. Success: 1, Failed: 0"},
    ]
    tags = Path(launched["call"].warehouse, "db.db", "t", "tag")
    assert sorted(p.name for p in tags.iterdir()) == ["tag-nightly"]


def test_module_reports_a_failing_statement(launched: dict[str, Launched]) -> None:
    code, out, err = launched["failing"].finish()
    assert (code, out) == (EXIT_FAILED, "")
    errors = [line for line in err.splitlines() if "Error" in line or "Traceback" in line]
    assert len(errors) == 1 and errors[0].startswith("Error: ") and "no_such_tag" in errors[0]
    assert "WARNING: Using incubator modules" not in err  # the JVM's start-up notice
    assert not Path(launched["failing"].warehouse, "db.db", "t", "tag", "tag-never").exists()


# --------------------------------------------------------------------------- without Spark

NO_SPARK = """
import sys


class NoSpark:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in ("pyspark", "py4j"):
            raise ImportError(f"{name} must not be imported")


sys.meta_path.insert(0, NoSpark())
from sql_ext.shell import main

code = main(sys.argv[1:])
sys.stderr.write(f"modules: {sorted(m for m in ('pyspark', 'py4j') if m in sys.modules)}\\n")
sys.exit(code)
"""


def test_metadata_statements_never_import_pyspark(warehouse: str) -> None:
    new_table(new_catalog(warehouse), commits=2)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SPARK_CONF_DIR": str(ROOT / "spark-conf")}

    def shell(*argv: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-c", NO_SPARK, "--warehouse", warehouse, *argv]
        return subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT)

    done = shell(
        "--output",
        "json",
        "-e",
        "CALL sys.create_tag(table => 'db.t', tag => 'cron', snapshot => 1); "
        "SELECT snapshot_id, commit_kind FROM db.t$snapshots WHERE snapshot_id > 1; "
        "SELECT tag_name FROM db.t$tags",
    )
    assert done.returncode == EXIT_OK, done.stderr
    assert json_lines(done.stdout) == [
        {"result": True},
        {"snapshot_id": 2, "commit_kind": "APPEND"},
        {"tag_name": "cron"},
    ]
    assert done.stderr == "modules: []\n"
    failed = shell("-e", "CALL sys.create_tag(table => 'db.t', tag => 'cron')")
    assert failed.returncode == EXIT_FAILED
    assert failed.stderr == "Error: CALL sys.create_tag: Tag 'cron' already exists.\nmodules: []\n"
    needs_spark = shell("-e", "SELECT * FROM db.t")
    assert needs_spark.returncode == EXIT_FAILED
    assert "pyspark must not be imported" in needs_spark.stderr


PARTITION_AND_FILE_PROCEDURES = """
CALL sys.reset_consumer(table => 'db.t', consumerId => 'reader', nextSnapshotId => 2);
CALL sys.expire_snapshots(table => 'db.t', retain_max => 1, retain_min => 1);
CALL sys.clear_consumers(table => 'db.t', includingConsumers => 'read.*');
CALL sys.repair_earliest_snapshot(table => 'db.t', snapshot_id => 2);
CALL sys.mark_partition_done(table => 'db.t', partitions => 'dt=2024-01-01');
CALL sys.trigger_tag_automatic_creation(table => 'db.t');
CALL sys.remove_unexisting_files(table => 'db.t', dry_run => true);
CALL sys.expire_partitions(table => 'db.t', expiration_time => '1 d',
    timestamp_formatter => 'yyyy-MM-dd', max_expires => 1);
CALL sys.purge_files(table => 'db.t');
SELECT snapshot_id, commit_kind FROM db.t$snapshots
"""


def test_partition_consumer_and_file_procedures_through_paimon_sql(warehouse: str) -> None:
    """paimon-sql -e in a subprocess, answered without a JVM, rows as in Paimon's docs."""
    table = new_table(new_catalog(warehouse), commits=3)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SPARK_CONF_DIR": str(ROOT / "spark-conf")}

    def shell(*argv: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-c", NO_SPARK, "--warehouse", warehouse, *argv]
        return subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT)

    done = shell("--output", "json", "-e", PARTITION_AND_FILE_PROCEDURES)
    assert done.returncode == EXIT_OK, done.stderr
    assert json_lines(done.stdout) == [
        {"result": True},
        {"deleted_snapshots_count": 1},
        {"result": True},
        {"previous_earliest_snapshot_id": 2, "current_earliest_snapshot_id": 2},
        {"result": True},
        {"result": True},
        {"expired_partitions": "dt=2024-01-01"},
        {"result": "Success"},
        {"snapshot_id": 5, "commit_kind": "OVERWRITE"},
    ]
    # Marked done before the purge: a success file is neither data nor an orphan, it stays.
    assert os.path.exists(os.path.join(table.path, "dt=2024-01-01", "_SUCCESS"))
    assert done.stderr == "modules: []\n"
    copy = shell("-e", "CALL sys.copy(source_table => 'db.t', target_table => 'db.c')")
    assert copy.returncode == EXIT_FAILED  # its files are copied on Spark's executors
    assert "pyspark must not be imported" in copy.stderr
    assert not os.path.exists(os.path.join(warehouse, "db.db", "c"))
    failed = shell("-e", "CALL sys.expire_partitions(table => 'db.t')")
    assert failed.returncode == EXIT_FAILED
    assert failed.stderr == (
        "Error: CALL sys.expire_partitions: Both the partition expiration time and partition "
        "field can not be null.\nmodules: []\n"
    )


# --------------------------------------------------------------------------- a terminal


class PtyShell:
    """`paimon-sql` in a pseudo-terminal: type lines, wait for output (never for time)."""

    def __init__(self, argv: list[str], env: dict[str, str], timeout: float) -> None:
        self.deadline = time.monotonic() + timeout
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: the shell, its terminal the pty
            try:
                os.chdir(ROOT)
                os.execve(sys.executable, [sys.executable, *argv], env)
            finally:
                os._exit(127)
        self.seen = ""
        self.position = 0

    def expect(self, text: str) -> str:
        """Wait until `text` appears after what the last `expect` consumed; the output
        up to and including it."""
        while text not in self.seen[self.position :]:
            left = self.deadline - time.monotonic()
            assert left > 0, f"timed out waiting for {text!r}; output so far:\n{self.seen}"
            ready, _, _ = select.select([self.fd], [], [], left)
            if ready:
                try:
                    data = os.read(self.fd, 65536)
                except OSError:  # the child closed the terminal
                    data = b""
                assert data, f"the shell ended before {text!r}; output:\n{self.seen}"
                self.seen += data.decode("utf-8", "replace")
        end = self.seen.index(text, self.position) + len(text)
        consumed, self.position = self.seen[self.position : end], end
        return consumed

    def type(self, line: str) -> None:
        os.write(self.fd, line.encode() + b"\r")

    def finish(self) -> int:
        """The rest of the output read and the shell's exit code."""
        while True:
            left = self.deadline - time.monotonic()
            assert left > 0, f"the shell did not end; output:\n{self.seen}"
            ready, _, _ = select.select([self.fd], [], [], left)
            if not ready:
                continue
            try:
                data = os.read(self.fd, 65536)
            except OSError:
                data = b""
            if not data:
                break
            self.seen += data.decode("utf-8", "replace")
        _, status = os.waitpid(self.pid, 0)
        return os.waitstatus_to_exitcode(status)

    def kill(self) -> None:
        with contextlib.suppress(ChildProcessError, ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        os.close(self.fd)


def test_ctrl_c_cancels_a_running_statement_in_a_terminal(tmp_path: Path) -> None:
    """Ctrl-C on a running INSERT: one line `Cancelled.`, no traceback, nothing committed,
    and the prompt takes the next statement."""
    warehouse = str(tmp_path / "warehouse")
    table = new_table(new_catalog(warehouse), commits=1)
    env = {
        **os.environ,
        "TERM": "dumb",  # prompt_toolkit's plain prompt: no cursor-position requests
        "PYSPARK_PYTHON": sys.executable,
        "SPARK_CONF_DIR": str(ROOT / "spark-conf"),
        "HOME": str(tmp_path),  # the history file
    }
    argv = ["-m", "sql_ext.shell", "--master", "local[1]", "--warehouse", warehouse]
    shell = PtyShell(argv, env, timeout=600)
    try:
        shell.expect("(default)> ")
        shell.type("INSERT INTO db.t SELECT id, 'x', '2024-01-03' FROM range(2000000000);")
        shell.expect(STARTING)
        shell.expect("[Stage ")  # Spark's progress bar: the job is running
        os.write(shell.fd, b"\x03")
        shell.expect(CANCELLED)
        shell.expect("(default)> ")
        shell.type("SELECT count(*) AS n FROM db.t;")
        assert "|2  |" in shell.expect("Time taken: ")
        shell.expect("(default)> ")
        shell.type("quit;")
        assert shell.finish() == EXIT_OK
    finally:
        shell.kill()
    seen = shell.seen
    assert "Traceback" not in seen and "py4j" not in seen, seen
    assert "ERROR" not in seen and "WARNING: Using incubator" not in seen, seen
    assert seen.count(CANCELLED) == 1, seen
    assert table.snapshot_manager.latest_snapshot_id() == 1


def test_driver_phases_show_on_the_status_line_only_when_the_shell_asks() -> None:
    from sql_ext.progress import phase, show_phases

    terminal = Console(io.StringIO(), Terminal(), OutputFormat.TABLE, verbose=False)
    with phase("Committing to db.t ..."):
        pass
    assert terminal.err.getvalue() == ""
    show_phases(terminal.status)
    try:
        with phase("Committing to db.t ..."):
            assert terminal.err.getvalue() == "Committing to db.t ..."
    finally:
        show_phases(None)
    assert terminal.err.getvalue() == "Committing to db.t ...\r\x1b[K"

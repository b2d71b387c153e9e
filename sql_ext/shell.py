"""`paimon-sql`: a `spark-sql`-like command line over `PaimonSession`.

`paimon-sql -e "SQL"` and `paimon-sql -f file.sql` run a script and stop at the first failing
statement; without either, statements piped on stdin run the same way, and a terminal gets an
interactive prompt (history in ~/.paimon_sql_history; Enter runs the input once it ends with a
`;` outside quotes and comments; Ctrl-D, `quit;` or `exit;` leave). `quit;` also ends a script.
Comments may stand anywhere (statements are routed on their text without them,
`sql_ext.syntax.parse.code_of`). `sql_ext/submit.py` (the spark-submit entry) runs through `run()`
too, with the SparkSession spark-submit provides, so both behave alike.

Exit codes: 0 success, 1 a statement failed (one line `Error: <message>` on stderr, with `-f`
`Error: <file>:<line>: <message>`, never a traceback unless `--verbose` or
`PAIMON_SQL_DEBUG=1`), 2 a bad command line, 130 interrupted. Ctrl-C on a running statement
cancels its Spark jobs, commits nothing and prints one line `Cancelled.` (the prompt then takes
the next statement; a script ends with 130); Ctrl-C at the prompt drops the input.

stdout holds only results (see `sql_ext.output`), each headed by its statement's first line
with `--echo` (the default for `-f` when stdout is a terminal and the output a table).
stderr gets, on a terminal only, a status line while Spark starts and Spark's progress bar
(`spark.ui.showConsoleProgress`, off when stderr is no terminal unless `--conf` sets it); the
JVM's start-up notices that tell users nothing are dropped (`JVM_NOTICES`).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import re
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TextIO

from sqlglot.errors import ParseError

from paimon_core.exceptions import PaimonError
from sql_ext.errors import QUERY_CONTEXT_LOGGERS
from sql_ext.metadata.result import ToSpark
from sql_ext.output import OutputFormat, write_result
from sql_ext.syntax.parse import code_of, located_statements, split_statements

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from sql_ext.metadata.engine import MetadataEngine
    from sql_ext.session import PaimonSession

__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "Console",
    "LazySession",
    "build_parser",
    "error_message",
    "is_complete",
    "lazy_session",
    "local_session",
    "main",
    "prepare_environment",
    "quiet_spark",
    "run",
]

PROG = "paimon-sql"
DEBUG_ENV = "PAIMON_SQL_DEBUG"
HISTORY_FILE = "~/.paimon_sql_history"
SPARK_CONF_DIR = Path(__file__).resolve().parent.parent / "spark-conf"
"""The repository's Spark configuration; absent when the package is installed elsewhere."""

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
LOG_LEVEL = "ERROR"
TASK_FAILURE_LOGGERS = (
    "org.apache.spark.executor.Executor",
    "org.apache.spark.scheduler.TaskSetManager",
)
"""log4j loggers that print a failed task's stack trace before the query fails."""
_QUIT = frozenset({"quit", "exit"})
CANCELLED = "Cancelled."
STARTING = "Starting Spark (the first statement that needs it waits for the JVM) ..."
_TRACEBACK = "Traceback (most recent call last):"
_EXCEPTION_LINE = re.compile(r"^([A-Za-z_][\w.]*): (.*)$")
_OWN_MODULES = ("paimon_core.", "procedures.", "sql_ext.")

SessionFactory = Callable[[argparse.Namespace], "PaimonSession"]


# --------------------------------------------------------------------------- arguments


class UsageError(Exception):
    """A bad command line (exit code 2)."""


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse prints usage and exits; we want one line
        raise UsageError(message)


def _conf_pair(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key.strip(), value.strip()


def build_parser(prog: str = PROG) -> argparse.ArgumentParser:
    parser = _ArgumentParser(
        prog=prog,
        add_help=False,
        description="Run Spark SQL with Apache Paimon's extensions (CALL sys.*, t$snapshots, "
        "VERSION AS OF) on Paimon tables.",
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "-e", dest="execute", metavar="SQL", help="run these ;-separated statements"
    )
    source.add_argument("-f", dest="file", metavar="FILE", help="run the statements of FILE")
    parser.add_argument(
        "--conf",
        metavar="KEY=VALUE",
        type=_conf_pair,
        action="append",
        default=[],
        help="a Spark configuration property (repeatable)",
    )
    parser.add_argument("--master", help="Spark master URL (default: spark-defaults, local[*])")
    parser.add_argument("--warehouse", help="the Paimon warehouse path or URI")
    parser.add_argument(
        "--output",
        choices=[f.value for f in OutputFormat],
        default=OutputFormat.TABLE.value,
        help="result format (default: table)",
    )
    parser.add_argument(
        "--echo",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="head each result of -e/-f with its statement's first line "
        "(default for -f when stdout is a terminal and the output is a table)",
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", help=f"show tracebacks (also {DEBUG_ENV}=1)"
    )
    parser.add_argument("-h", "--help", action="store_true", help="show this help and exit")
    return parser


# --------------------------------------------------------------------------- errors


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _worker_error(text: str) -> str | None:
    """The exception line of a Python traceback that Spark wrapped into its message."""
    start = text.find(_TRACEBACK)
    if start < 0:
        return None
    found = None
    for line in text[start:].splitlines():
        if line.startswith("JVM stacktrace:"):
            break
        match = _EXCEPTION_LINE.match(line)
        if match:
            found = match
    if found is None:
        return None
    qualified, message = found.groups()
    if qualified.startswith(_OWN_MODULES):
        return message
    return f"{qualified.rpartition('.')[2]}: {message}"


def _java_error(text: str) -> str:
    """`An error occurred while calling o1.sql.\\n: java.lang.X: msg\\n\\tat ...` -> `java.lang.X: msg`."""
    for line in text.splitlines()[1:]:
        if line.startswith(": "):
            return line[2:].strip()
    return _first_line(text)


def _user_error_types() -> tuple[type[BaseException], ...]:
    """Errors users cause; Spark's only once Spark is loaded (a statement answered without
    Spark cannot raise them, and importing pyspark for the check would cost a second)."""
    if "pyspark" not in sys.modules:
        return (PaimonError, ParseError)
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PySparkException

    return (PaimonError, ParseError, PySparkException, Py4JJavaError)


def error_message(error: BaseException) -> str:
    """The one-line message printed after `Error: ` for a failed statement.

    Errors users cause (Paimon, parse, Spark) give their message's first line; a Python
    traceback inside a Spark message gives its exception line; anything else is prefixed
    with its type, since it is likely a bug.
    """
    text = str(error)
    if type(error).__name__ == "Py4JJavaError":
        return _java_error(text) or type(error).__name__
    if isinstance(error, _user_error_types()):
        return _worker_error(text) or _first_line(text) or type(error).__name__
    message = _first_line(text)
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


@dataclass(slots=True)
class Console:
    """Where results and errors go, and how they look.

    `echo` heads each script result with its statement's first line; `source` names the
    script file in errors (`Error: script.sql:12: ...`).
    """

    out: TextIO
    err: TextIO
    output: OutputFormat
    verbose: bool
    echo: bool = False
    source: str | None = None

    def error(self, error: BaseException, line: int | None = None) -> None:
        """One line `Error: [<source>:<line>: ]<message>` (a traceback before it if verbose)."""
        if self.verbose:
            traceback.print_exception(error, file=self.err)
        where = f"{self.source}:{line}: " if self.source is not None and line else ""
        self.note(f"Error: {where}{error_message(error)}")

    def note(self, text: str) -> None:
        self.err.write(text + "\n")
        self.err.flush()

    def cancelled(self) -> None:
        """What a Ctrl-C on a running statement prints: one line, nothing else."""
        self.note(CANCELLED)

    def headline(self, statement: str) -> None:
        """The statement's first line (comments aside) as the header of its result."""
        lines = code_of(statement).strip().splitlines()
        more = " ..." if len(lines) > 1 else ""
        self.out.write(f"-- {lines[0].strip()}{more}\n" if lines else "")
        self.out.flush()

    def is_terminal(self) -> bool:
        """Whether stderr is a terminal (status lines and progress go there only then)."""
        return _isatty(self.err)

    @contextlib.contextmanager
    def status(self, text: str) -> Iterator[None]:
        """`text` as one line on a terminal's stderr while the block runs, erased after."""
        if not self.is_terminal():
            yield
            return
        self.err.write(text)
        self.err.flush()
        try:
            yield
        finally:
            self.err.write("\r\x1b[K")
            self.err.flush()


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


# --------------------------------------------------------------------------- sessions


def prepare_environment() -> None:
    """Before the JVM starts: use the repository's spark-defaults and this Python for workers."""
    if not os.environ.get("SPARK_CONF_DIR") and SPARK_CONF_DIR.is_dir():
        os.environ["SPARK_CONF_DIR"] = str(SPARK_CONF_DIR)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


class _Py4jRootRecords(logging.Filter):
    """Drops what py4j logs on the root logger: a Ctrl-C interrupts py4j mid-command, and it
    logs the broken call with its traceback ("KeyboardInterrupt while sending command.",
    "Exception while sending command.") through `logging.exception`, which Python prints on
    stderr when logging is not configured; the shell prints `Cancelled.` instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        return f"{os.sep}py4j{os.sep}" not in record.pathname


def quiet_spark(spark: SparkSession) -> None:
    """Keep Spark's logs to errors (unless `spark.log.level` is set) and PySpark's to itself.

    PySpark logs every failed query as JSON on stderr before raising it, and py4j every call
    a Ctrl-C interrupts; the shell reports the error (or `Cancelled.`) itself, once. A
    failing task makes Spark's Executor and TaskSetManager log its stack trace at ERROR
    level before the query fails; the repository's `log4j2.properties` turns them off, and
    so does this, through log4j's `Configurator`, for a `SPARK_CONF_DIR` without that file.
    """
    if not spark.sparkContext.getConf().contains("spark.log.level"):
        spark.sparkContext.setLogLevel(LOG_LEVEL)
        jvm = spark.sparkContext._jvm
        if jvm is not None:
            configurator = jvm.org.apache.logging.log4j.core.config.Configurator
            off = jvm.org.apache.logging.log4j.Level.OFF
            for name in TASK_FAILURE_LOGGERS:
                configurator.setLevel(name, off)
    from pyspark.logger import PySparkLogger

    for name in QUERY_CONTEXT_LOGGERS:
        PySparkLogger.getLogger(name).setLevel(logging.CRITICAL)
    root = logging.getLogger()
    if not any(isinstance(f, _Py4jRootRecords) for f in root.filters):
        root.addFilter(_Py4jRootRecords())


PROGRESS_CONF = "spark.ui.showConsoleProgress"
JVM_NOTICES = (b"WARNING: Using incubator modules:",)
"""Lines the JVM prints on start that tell a user nothing (Spark's launcher always adds
`--add-modules=jdk.incubator.vector`, and the JVM then always warns; no JVM option hides it)."""


def forward_jvm_stderr(pipe: IO[bytes], write: Callable[[bytes], Any]) -> None:
    """Copy the JVM's stderr to `write` as it comes, without the `JVM_NOTICES` lines.

    Partial lines go out at once (Spark's progress bar redraws one line with `\\r`), unless
    they may still become a notice; runs until the JVM closes its stderr.
    """
    held = b""
    mid_line = False
    while chunk := pipe.read1(65536) if hasattr(pipe, "read1") else pipe.read(65536):
        held += chunk
        while held:
            newline = held.find(b"\n")
            if newline >= 0:
                line, held = held[: newline + 1], held[newline + 1 :]
                if mid_line or not line.startswith(JVM_NOTICES):
                    write(line)
                mid_line = False
                continue
            if not mid_line and any(n.startswith(held) or held.startswith(n) for n in JVM_NOTICES):
                break  # wait for the rest of the line
            write(held)
            held, mid_line = b"", True


def _write_stderr(data: bytes) -> None:
    with contextlib.suppress(OSError):
        os.write(2, data)


def spark_conf(args: argparse.Namespace, progress: bool) -> Any:
    """The `SparkConf` of the command line (spark-defaults come in as the JVM starts):
    `--master`, `--conf`, and Spark's console progress bar off unless `progress` (stderr is
    a terminal) or `--conf` sets it."""
    from pyspark import SparkConf

    conf = SparkConf(loadDefaults=False).setAppName(PROG)
    if args.master:
        conf.setMaster(args.master)
    for key, value in args.conf:
        conf.set(key, value)
    if not progress and not any(key == PROGRESS_CONF for key, _ in args.conf):
        conf.set(PROGRESS_CONF, "false")
    return conf


def launch_jvm(args: argparse.Namespace, progress: bool) -> tuple[Any, Any]:
    """Spark's JVM for the command line (`--master`, `--conf`, spark-defaults): its
    `SparkConf` and py4j gateway, the JVM's stderr filtered by `forward_jvm_stderr`. Spark's
    console progress bar only when `progress` (stderr is a terminal), unless `--conf` sets
    it. Safe to run in a thread (the `SparkContext` is made by `local_session`)."""
    from pyspark.java_gateway import launch_gateway

    conf = spark_conf(args, progress)
    # The JVM writes into a pipe read from before it starts: its start-up errors show, and a
    # chatty start cannot fill the pipe and block.
    read_end, write_end = os.pipe()
    threading.Thread(
        target=forward_jvm_stderr,
        args=(os.fdopen(read_end, "rb", buffering=0), _write_stderr),
        name="jvm-stderr",
        daemon=True,
    ).start()
    try:
        gateway = launch_gateway(conf, popen_kwargs={"stderr": write_end})
    finally:
        os.close(write_end)
    return conf, gateway


class EarlyJvm:
    """`launch_jvm` started in a daemon thread before it is known to be needed (a thread
    pool's worker would hold the interpreter's exit until the JVM is up)."""

    def __init__(self, args: argparse.Namespace, progress: bool) -> None:
        self._done = threading.Event()
        self._result: tuple[Any, Any] | None = None
        self._error: BaseException | None = None
        threading.Thread(
            target=self._run, args=(args, progress), name="jvm-start", daemon=True
        ).start()

    def _run(self, args: argparse.Namespace, progress: bool) -> None:
        try:
            self._result = launch_jvm(args, progress)
        except BaseException as error:  # handed to the caller of `result`
            self._error = error
        finally:
            self._done.set()

    def result(self) -> tuple[Any, Any]:
        """The `SparkConf` and gateway, once the JVM is up; its start's error, raised."""
        self._done.wait()
        if self._error is not None:
            raise self._error
        assert self._result is not None
        return self._result


_SPARK_FIRST_WORDS = frozenset(
    {
        "ADD",
        "ANALYZE",
        "CACHE",
        "CREATE",
        "DELETE",
        "DROP",
        "EXPLAIN",
        "INSERT",
        "MERGE",
        "REFRESH",
        "REPLACE",
        "RESET",
        "SET",
        "TRUNCATE",
        "UNCACHE",
        "UPDATE",
        "VALUES",
    }
)
_SYS_NAME = re.compile(r"\bsys\b", re.IGNORECASE)


def surely_needs_spark(statement: str) -> bool:
    """Whether the metadata engine is sure to hand `statement` to Spark (decided on its
    first word without importing the engine; False when in doubt): the shell then starts
    the JVM while the engine loads."""
    code = code_of(statement).strip()
    words = code.split(None, 1)
    if not words:
        return False
    first = words[0].upper()
    if "${" in code or first in _SPARK_FIRST_WORDS:
        return True
    return first == "SELECT" and "$" not in code and not _SYS_NAME.search(code)


def local_session(args: argparse.Namespace, early: EarlyJvm | None = None) -> PaimonSession:
    """The shell's own session: a new SparkSession configured from the command line
    (`launch_jvm`), stopped with the session. On a terminal a status line on stderr says
    that Spark is starting, until it has.

    The JVM starts in a thread (`early`, when `lazy_session` started it already) while this
    one imports the session's modules (about a second of Python imports overlapped with the
    JVM's start); the `SparkContext` is made here, in the main thread, where PySpark installs
    its Ctrl-C handler (cancel the running jobs).
    """
    prepare_environment()
    console: Console | None = getattr(args, "console", None)
    terminal = console.is_terminal() if console is not None else _isatty(sys.stderr)
    with console.status(STARTING) if console is not None else contextlib.nullcontext():
        launched = early or EarlyJvm(args, terminal)
        from pyspark import SparkContext
        from pyspark.sql import SparkSession

        from sql_ext.session import PaimonSession

        conf, gateway = launched.result()
        SparkContext(conf=conf, gateway=gateway)
        spark = SparkSession.builder.getOrCreate()
        session = PaimonSession(spark, warehouse=args.warehouse, owns_spark=True, sql_only=True)
        quiet_spark(session.spark)
    if console is not None and terminal:
        from sql_ext.progress import show_phases

        show_phases(console.status)  # the driver's planning and commits, on the same line
    return session


class LazySession:
    """The shell's session: metadata statements run in this process (`MetadataEngine`), and
    the first statement that needs Spark starts it (`start`), after which every statement
    goes to Spark, which then holds the session's state (`SET`, views, the database).

    It has what the shell uses of a `PaimonSession`: `sql`, `run_script`, `stop` and
    `current_database`.
    """

    def __init__(self, engine: MetadataEngine, start: Callable[[], PaimonSession]) -> None:
        self.engine = engine
        self._start = start
        self.spark_session: PaimonSession | None = None

    @property
    def current_database(self) -> str:
        if self.spark_session is not None:
            return self.spark_session.current_database
        return self.engine.current_database

    def sql(self, text: str) -> Any:
        """Run one statement, parsed once; returns a `DataFrame` or the engine's `Rows`."""
        if self.spark_session is not None:
            return self.spark_session.sql(text)
        answered = self.engine.run(text)
        if not isinstance(answered, ToSpark):
            return answered
        self.spark_session = self._start()
        self.spark_session.current_database = self.engine.current_database
        return self.spark_session.sql(text, answered.parsed)

    def run_script(self, text: str) -> Iterator[tuple[str, Any]]:
        for statement in split_statements(text):
            yield statement, self.sql(statement)

    def stop(self) -> None:
        if self.spark_session is not None:
            self.spark_session.stop()


def lazy_session(args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> Any:
    """The shell's default session: no JVM until a statement needs one (`LazySession`).

    The in-process engine gets the configuration Spark would start with: spark-defaults
    (`SPARK_CONF_DIR`, set by `prepare_environment`), then `--conf`. When a script's first
    statement surely needs Spark (`surely_needs_spark`), the JVM starts at once, while the
    engine's modules load (as a bare `spark-sql` would be starting it).
    """
    prepare_environment()
    early = None
    statements = split_statements(getattr(args, "script", None) or "")
    if statements and surely_needs_spark(statements[0]):
        console: Console | None = getattr(args, "console", None)
        terminal = console.is_terminal() if console is not None else _isatty(sys.stderr)
        early = EarlyJvm(args, terminal)  # the JVM starts while the engine loads
    from sql_ext.metadata.config import session_conf
    from sql_ext.metadata.engine import MetadataEngine

    engine = MetadataEngine(args.warehouse, session_conf(args.conf, environ))
    return LazySession(engine, lambda: local_session(args, early))


# --------------------------------------------------------------------------- running


def is_complete(text: str) -> bool:
    """Whether an interactive buffer is ready to run: it ends with a `;` outside quotes and
    comments (so `'a;'`, `-- x;` or an open `/* ...;` wait for more), or is blank, or is a
    bare `quit`/`exit`.
    """
    stripped = text.strip()
    if not stripped or stripped.rstrip(";").strip().lower() in _QUIT:
        return True
    # A finished buffer gets a new statement from the appended text; an unfinished one (code
    # after the last `;`, an open quote or comment) absorbs it.
    return len(split_statements(text + "\n_")) > len(split_statements(text))


def _is_quit(statement: str) -> bool:
    return code_of(statement).strip().lower() in _QUIT


def run_statements(session: PaimonSession, script: str, console: Console) -> int:
    """Run a script's statements in order, printing each result (headed by its statement's
    first line when `console.echo`), up to a `quit`/`exit` statement as in spark-sql.

    The first failing statement is reported as one line naming the script's line when the
    script is a file, and ends the run (`EXIT_FAILED`); a Ctrl-C propagates.
    """
    for line, statement in located_statements(script):
        if _is_quit(statement):
            break
        if console.echo:
            console.headline(statement)
        try:
            write_result(session.sql(statement), console.output, console.out)
        except Exception as error:
            console.error(error, line)
            return EXIT_FAILED
    return EXIT_OK


def _prompt_reader(session: PaimonSession) -> Callable[[], str]:
    """A prompt_toolkit reader: Enter runs a complete statement, else starts a new line."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory, History, InMemoryHistory
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

    bindings = KeyBindings()

    @bindings.add("enter")
    def _enter(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if is_complete(buffer.text):
            buffer.validate_and_handle()
        else:
            buffer.insert_text("\n")

    history_path = Path(HISTORY_FILE).expanduser()
    history: History = (
        FileHistory(str(history_path))
        if os.access(history_path.parent, os.W_OK)
        else InMemoryHistory()
    )
    prompt = PromptSession(
        history=history,
        multiline=True,
        key_bindings=bindings,
        prompt_continuation=lambda width, _line, _soft: " " * max(width - 2, 0) + "> ",
    )
    return lambda: prompt.prompt(f"{PROG} ({session.current_database})> ")


def interact(
    session: PaimonSession, console: Console, read: Callable[[], str] | None = None
) -> int:
    """The read-run-print loop; errors are reported and the loop goes on.

    `read` returns one complete input (raising EOFError at the end, KeyboardInterrupt when the
    user cancels the input); the default reads from the terminal.
    """
    read = read or _prompt_reader(session)
    while True:
        try:
            text = read()
        except KeyboardInterrupt:
            continue
        except EOFError:
            return EXIT_OK
        for statement in split_statements(text):
            if _is_quit(statement):
                return EXIT_OK
            started = time.monotonic()
            try:
                rows = write_result(session.sql(statement), console.output, console.out)
            except KeyboardInterrupt:
                console.cancelled()
                break
            except Exception as error:
                console.error(error)
                break
            console.note(f"Time taken: {time.monotonic() - started:.3f} s, {rows} row(s)")


def run(
    argv: Sequence[str] | None = None,
    *,
    session: PaimonSession | None = None,
    session_factory: SessionFactory = lazy_session,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    prog: str = PROG,
    environ: Mapping[str, str] | None = None,
) -> int:
    """Parse `argv`, run, and return the exit code; never raises for user errors.

    A given `session` is used as is and left running; otherwise `session_factory` makes one
    from the parsed arguments (after the input is read, so argument errors cost no JVM) and it
    is stopped at the end.
    """
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    environ = os.environ if environ is None else environ
    parser = build_parser(prog)
    try:
        args = parser.parse_args(argv)
    except UsageError as error:
        stderr.write(f"{prog}: error: {_first_line(str(error))}\n")
        return EXIT_USAGE
    if args.help:
        stdout.write(parser.format_help())
        return EXIT_OK

    script: str | None = args.execute
    if args.file is not None:
        try:
            script = Path(args.file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            reason = getattr(error, "strerror", None) or error
            stderr.write(f"{prog}: error: cannot read {args.file}: {_first_line(str(reason))}\n")
            return EXIT_USAGE
    elif script is None and not stdin.isatty():
        script = stdin.read()

    verbose = args.verbose or environ.get(DEBUG_ENV, "") not in ("", "0")
    output = OutputFormat(args.output)
    echo = args.echo
    if echo is None:
        echo = args.file is not None and output is OutputFormat.TABLE and _isatty(stdout)
    console = Console(stdout, stderr, output, verbose, echo, args.file)
    args.console = console  # the session factory's status line and progress go there
    args.script = script
    if script is not None and not split_statements(script):
        return EXIT_OK

    own = session is None
    try:
        if session is None:
            session = session_factory(args)
        if script is not None:
            return run_statements(session, script, console)
        return interact(session, console)
    except KeyboardInterrupt:
        console.cancelled()
        return EXIT_INTERRUPTED
    except Exception as error:
        console.error(error)
        return EXIT_FAILED
    finally:
        if own and session is not None:
            try:
                session.stop()
            except Exception as error:
                if verbose:
                    console.error(error)


def main(argv: Sequence[str] | None = None) -> int:
    """The `paimon-sql` console script."""
    return run(argv)


if __name__ == "__main__":
    sys.exit(main())

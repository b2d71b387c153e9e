"""Apache Paimon 2 (Java) for the interop tests: ``tests/interop/java2/Paimon2.java`` compiled
against Paimon's jar (fetched through Maven into ``~/.m2`` on first use) and run, one JVM per
call, each call a list of JSON steps (see the Java file's header for the steps).

The jar is ``org.apache.paimon:paimon-flink-2.0:2.0.0``: the newest Paimon Java release that
Maven Central serves here, and a shaded jar with all of ``paimon-bundle`` inside (the Flink
classes it adds are never loaded). ``paimon-bundle:2.1.1`` (and 2.0.0) is not served; when it is,
``PAIMON2_ARTIFACT`` is the one line to change. Hadoop's client classes (and slf4j) come from
pyspark's ``jars/``, as for the 0.9 oracle.

What is cached, all keyed so that a change rebuilds it (``PAIMON_JAVA2_CACHE``, default
``~/.cache/paimon-java2``): ``<key>/paimon2.jar`` (the compiled program; the key hashes the
source, the classpath and the JDK) and ``<key>/paimon2.jsa``, a class-data-sharing archive dumped
once by a warm-up run, which every later JVM maps (``PAIMON_JAVA2_CDS=0`` turns it off).
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PAIMON2_ARTIFACT = "org.apache.paimon:paimon-flink-2.0:2.0.0"
SOURCE = Path(__file__).resolve().parent / "java2" / "Paimon2.java"
JVM_FLAGS = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xlog:disable"]
# Linux caps one argument at 128 KiB: longer steps go through a file (``@path``).
_MAX_ARG = 100_000


class Java2Error(RuntimeError):
    """A Paimon 2 step failed (Paimon's exception and causes in the message), or the harness
    could not be set up (no Maven, no JDK, no pyspark)."""


def m2_repository() -> Path:
    """The local Maven repository the jar is fetched into (``MAVEN_REPO_LOCAL`` or ``~/.m2``)."""
    return Path(os.environ.get("MAVEN_REPO_LOCAL", Path.home() / ".m2" / "repository"))


def artifact_jar(artifact: str = PAIMON2_ARTIFACT) -> Path:
    """The jar of ``group:name:version``, fetched with ``mvn dependency:get`` when absent.

    Raises:
        Java2Error: Maven is missing or could not fetch it.
    """
    group, name, version = artifact.split(":")
    jar = m2_repository().joinpath(*group.split("."), name, version, f"{name}-{version}.jar")
    if jar.exists():
        return jar
    mvn = shutil.which("mvn")
    if mvn is None:
        raise Java2Error("mvn not found on PATH: it fetches Paimon's jar (apt-get install maven)")
    proc = subprocess.run(
        [mvn, "-B", "-q", "dependency:get", f"-Dartifact={artifact}", "-Dtransitive=false",
         f"-Dmaven.repo.local={m2_repository()}"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if proc.returncode or not jar.exists():
        raise Java2Error(f"mvn dependency:get {artifact} failed:\n{proc.stdout}{proc.stderr}")
    return jar


def hadoop_jars() -> list[Path]:
    """slf4j's API (first, so that its no-provider fallback stays quiet) and Hadoop's shaded
    client from pyspark's ``jars/`` (found without importing pyspark)."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        raise Java2Error("pyspark is not installed: its jars/ hold the Hadoop client Paimon needs")
    jars = Path(spec.origin).parent / "jars"
    found = []
    for name in ("slf4j-api", "hadoop-client-api", "hadoop-client-runtime"):
        matches = sorted(jars.glob(f"{name}-[0-9]*.jar"))
        if not matches:
            raise Java2Error(f"{name}-*.jar not found in {jars}")
        found.append(matches[0])
    return found


def cache_root() -> Path:
    """Where the compiled program and its CDS archive live (``PAIMON_JAVA2_CACHE``)."""
    return Path(os.environ.get("PAIMON_JAVA2_CACHE", Path.home() / ".cache" / "paimon-java2"))


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Holds an exclusive lock on ``path`` (other test processes wait for the build)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _java_home_key() -> str:
    java = shutil.which("java")
    if java is None or shutil.which("javac") is None:
        raise Java2Error("java/javac not found on PATH (a JDK 17 is needed)")
    return os.path.realpath(java)


WARMUP_STEPS: list[dict[str, Any]] = [
    {"op": "create", "table": "db.a", "fields": [["k", "INT"], ["v", "STRING"]],
     "partitionKeys": [], "options": {}},
    {"op": "write", "table": "db.a", "rows": [{"k": 1, "v": "a"}]},
    {"op": "read", "table": "db.a"},
    {"op": "create", "table": "db.pk",
     "fields": [["k", "INT"], ["v", "STRING"], ["dt", "STRING"]],
     "primaryKeys": ["k", "dt"], "partitionKeys": ["dt"], "options": {"bucket": "2"}},
    {"op": "write", "table": "db.pk", "rows": [{"k": 1, "v": "a", "dt": "x"}]},
    {"op": "write-concurrent", "table": "db.pk",
     "batches": [[{"k": 1, "v": "b", "dt": "x"}], [{"k": 1, "dt": "x", "_kind": "-D"}]]},
    {"op": "read", "table": "db.pk", "options": {"scan.snapshot-id": "1"}},
    {"op": "snapshots", "table": "db.pk"},
    {"op": "files", "table": "db.pk"},
    {"op": "compact", "table": "db.pk", "full": True},
    {"op": "read", "table": "db.pk"},
    {"op": "create-tag", "table": "db.pk", "tag": "t1", "snapshot": 1},
    {"op": "create-branch", "table": "db.pk", "branch": "b1", "tag": "t1"},
    {"op": "read", "table": "db.pk$branch_b1"},
    {"op": "alter", "table": "db.pk", "changes": [{"add": "n", "type": "BIGINT"}]},
    {"op": "read", "table": "db.pk$audit_log",
     "options": {"incremental-between": "1,2", "incremental-between-scan-mode": "delta"}},
    {"op": "rollback", "table": "db.pk", "tag": "t1"},
    {"op": "expire", "table": "db.pk", "retainMax": 1},
    {"op": "read", "table": "db.nope", "catch": True},
]  # fmt: skip


@dataclass(frozen=True)
class Paimon2Runtime:
    """A ready program: the classpath to run ``Paimon2`` with and the CDS archive, if any."""

    classpath: tuple[str, ...]
    archive: Path | None

    def run(self, warehouse: str, steps: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Run ``steps`` in order in one JVM on ``warehouse``; one JSON result per step.

        Raises:
            Java2Error: a step failed (nothing after it ran).
        """
        flags = list(JVM_FLAGS)
        if self.archive is not None:
            flags.append(f"-XX:SharedArchiveFile={self.archive}")
        return _run_java(flags, self.classpath, warehouse, steps)


def _run_java(
    flags: list[str],
    classpath: Sequence[str],
    warehouse: str,
    steps: Sequence[Mapping[str, Any]],
) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="paimon2-") as tmp:
        args = []
        for i, step in enumerate(steps):
            text = json.dumps(step)
            if len(text) > _MAX_ARG:
                path = Path(tmp) / f"step-{i}.json"
                path.write_text(text)
                text = f"@{path}"
            args.append(text)
        proc = subprocess.run(
            ["java", *flags, "-cp", ":".join(classpath), "Paimon2", warehouse, *args],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
    if proc.returncode:
        raise Java2Error(f"Paimon 2 failed: {proc.stderr.strip()}")
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def prepare() -> Paimon2Runtime:
    """Fetch Paimon's jar, compile ``Paimon2.java`` into a jar and dump its CDS archive, each
    only when the cache lacks it; returns the runtime that runs it.

    Raises:
        Java2Error: the jar could not be fetched or the program not compiled.
    """
    jars = [*hadoop_jars(), artifact_jar()]
    source = SOURCE.read_bytes()
    key = hashlib.sha256(
        b"\0".join([source, _java_home_key().encode(), *(str(j).encode() for j in jars)])
    ).hexdigest()[:16]
    folder = cache_root() / key
    program = folder / "paimon2.jar"
    archive = folder / "paimon2.jsa"
    classpath = tuple(str(p) for p in [*jars, program])
    with _locked(cache_root() / f"{key}.lock"):
        if not program.exists():
            _compile(jars, folder, program)
        if os.environ.get("PAIMON_JAVA2_CDS", "1") == "0":
            return Paimon2Runtime(classpath, None)
        failed = folder / "paimon2.jsa.failed"
        if not archive.exists() and not failed.exists():
            _dump_archive(classpath, archive, failed)
    return Paimon2Runtime(classpath, archive if archive.exists() else None)


def _compile(jars: list[Path], folder: Path, program: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        classes = Path(tmp) / "classes"
        javac = subprocess.run(
            ["javac", "-nowarn", "-d", str(classes), "-cp", ":".join(map(str, jars)), str(SOURCE)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if javac.returncode:
            raise Java2Error(f"compiling {SOURCE.name} failed:\n{javac.stderr}")
        built = Path(tmp) / "paimon2.jar"
        subprocess.run(["jar", "cf", str(built), "-C", str(classes), "."], check=True)
        built.replace(program)


def _dump_archive(classpath: tuple[str, ...], archive: Path, failed: Path) -> None:
    """The warm-up steps once under ``-XX:ArchiveClassesAtExit``; a failure is remembered
    (``paimon2.jsa.failed``) and the program runs without an archive."""
    with tempfile.TemporaryDirectory(dir=archive.parent) as tmp:
        partial = Path(tmp) / "paimon2.jsa"
        flags = [*JVM_FLAGS, f"-XX:ArchiveClassesAtExit={partial}"]
        try:
            _run_java(flags, classpath, str(Path(tmp) / "warehouse"), WARMUP_STEPS)
        except Java2Error as e:
            failed.write_text(str(e))
            return
        if partial.exists():
            partial.replace(archive)
        else:
            failed.write_text("the warm-up wrote no archive")


class Java2:
    """Paimon 2 (Java) on one warehouse: one method per step, each call one JVM (``run`` takes
    several steps for one JVM)."""

    def __init__(self, runtime: Paimon2Runtime, warehouse: str) -> None:
        self.runtime = runtime
        self.warehouse = warehouse

    def run(self, *steps: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Run ``steps`` in one JVM; their JSON results in order."""
        return self.runtime.run(self.warehouse, steps)

    def create_table(
        self,
        table: str,
        fields: Sequence[tuple[str, str]],
        *,
        primary_keys: Sequence[str] = (),
        partition_keys: Sequence[str] = (),
        options: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """Create ``table`` (and its database) with ``fields`` as (name, Paimon SQL type)."""
        step = {
            "op": "create", "table": table, "fields": [list(f) for f in fields],
            "primaryKeys": list(primary_keys), "partitionKeys": list(partition_keys),
            "options": dict(options or {}),
        }  # fmt: skip
        return self.run(step)[0]

    def write(
        self, table: str, rows: Sequence[Mapping[str, Any]], *, overwrite: bool = False
    ) -> dict[str, Any]:
        """One batch write and commit of ``rows`` (a ``_kind`` of ``+I``/``-U``/``+U``/``-D``
        per row, default ``+I``); returns ``{"rows", "latestSnapshot"}``."""
        step = {"op": "write", "table": table, "rows": list(rows), "overwrite": overwrite}
        return self.run(step)[0]

    def write_concurrent(
        self, table: str, batches: Sequence[Sequence[Mapping[str, Any]]]
    ) -> dict[str, Any]:
        """One writer per batch, all opened on the same snapshot and prepared before any
        commits, then committed in order (concurrent writers)."""
        step = {"op": "write-concurrent", "table": table, "batches": [list(b) for b in batches]}
        return self.run(step)[0]

    def write_cols(
        self,
        table: str,
        columns: Sequence[str],
        first_row_id: int,
        rows: Sequence[Mapping[str, Any]],
    ) -> dict[str, Any]:
        """Data evolution: ``columns`` of the rows of the row-id range starting at
        ``first_row_id`` (all its rows, in order), one file with ``_WRITE_COLS``, committed."""
        step = {
            "op": "write-cols", "table": table, "columns": list(columns),
            "firstRowId": first_row_id, "rows": list(rows),
        }  # fmt: skip
        return self.run(step)[0]

    def read(
        self,
        table: str,
        options: Mapping[str, str] | None = None,
        *,
        row_tracking: bool = False,
    ) -> list[dict[str, Any]]:
        """Every row of a batch read of ``table`` (with ``options`` such as
        ``scan.snapshot-id``), as ``{column: value}`` in Paimon's read order; with
        ``row_tracking`` its ``$row_tracking`` table (``_ROW_ID``, ``_SEQUENCE_NUMBER`` too)."""
        step = {
            "op": "read", "table": table, "options": dict(options or {}),
            "rowTracking": row_tracking,
        }  # fmt: skip
        return list(self.run(step)[0]["rows"])

    def snapshots(self, table: str) -> list[dict[str, Any]]:
        """Each snapshot's ``id``, ``schemaId``, ``commitKind``, ``totalRecordCount``,
        ``deltaRecordCount`` and ``nextRowId``, by id."""
        return list(self.run({"op": "snapshots", "table": table})[0]["snapshots"])

    def files(self, table: str) -> list[dict[str, Any]]:
        """The live data files of the latest snapshot (partition, bucket, file, level,
        rowCount, min/maxSequenceNumber, schemaId, firstRowId, writeCols, fileSource)."""
        return list(self.run({"op": "files", "table": table})[0]["files"])

    def compact(
        self, table: str, *, full: bool = True, options: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        """Compact every bucket with files (``full``: a full compaction), one commit, with
        ``options`` on top of the table's (``write-only`` = ``false`` to compact such a
        table)."""
        step = {"op": "compact", "table": table, "full": full, "options": dict(options or {})}
        return self.run(step)[0]

    def compact_append(self, table: str) -> dict[str, Any]:
        """Compact an unaware-bucket append table as Paimon-Spark's ``CompactProcedure``
        (row ids kept on row-tracking tables); returns ``{"tasks", "latestSnapshot"}``."""
        return self.run({"op": "compact-append", "table": table})[0]

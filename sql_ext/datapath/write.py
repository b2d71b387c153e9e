"""Writing a Spark DataFrame into a Paimon table on Spark's executors, committed once.

The one writer of the project: INSERT, CTAS (``write_dataframe``) and
``df.write.format("paimon")`` (``save_dataframe``, which calls ``write_dataframe``) all end
here; so does the data source's own writer (``source_writer``), for callers that bypass
PySpark's ``DataFrameWriter.save`` (append tables only: it cannot shuffle).

``write_dataframe`` plans one Spark job: rows are cast to the table's types, routed so that
every bucket is written by exactly one task (primary-key and bucketed tables are shuffled by
partition and bucket, the bucket computed by an Arrow UDF on the key columns; dynamic-bucket
tables by partition, so that one task owns each partition's HASH index), written to data files by ``paimon_core``'s ``TableWrite`` inside
``mapInArrow``, and the tasks' commit messages (pickled, a few hundred bytes per file) are
collected and committed on the driver in one snapshot. Every writer continues from the same
base snapshot, pinned on the driver before the job starts.

Files of attempts that fail, lose to a retry or to a speculative copy: before a task creates
a file it records its path in its attempt log under ``<table>/_write-<uuid>/``. After the
job, the driver deletes every logged file that is not in a collected (committed) message, and
then the logs; after a failure it deletes every logged file. Only an attempt that Spark has
not yet stopped when the statement ends can still create a file afterwards; nothing ever
references such a file, so ``remove_orphan_files`` deletes it safely.
"""

from __future__ import annotations

import importlib
import pickle
import re
import time
import uuid
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.errors import PySparkException
from pyspark.sql import functions as F
from pyspark.sql import types as st
from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage

from paimon_core.exceptions import InvalidArgument, PaimonError
from paimon_core.format.types import DataField, to_arrow_type
from paimon_core.operations.bucket import assign_buckets
from paimon_core.operations.commit import (
    BATCH_COMMIT_IDENTIFIER,
    COMMIT_OPERATION,
    commit_operation,
    published_before,
)
from paimon_core.operations.row_tracking import ROW_ID, ROW_TRACKING_COLUMNS
from sql_ext.errors import SqlError, first_line
from sql_ext.progress import phase
from sql_ext.spark_types import to_spark_type
from sql_ext.syntax.dialect import quote_identifier

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

    from paimon_core.format.commit_message import CommitMessage
    from paimon_core.format.snapshot import Snapshot
    from paimon_core.io.fileio import FileIO
    from paimon_core.operations.write import TableWrite
    from paimon_core.table import FileStoreTable

Overwrite = bool | Mapping[str, Any]
"""False: append. True: replace the partitions the data falls in (the whole table when it
is not partitioned). A mapping: replace that static partition spec (``{}``: the whole table)."""

STAGING_PREFIX = "_write-"
BUCKET_COLUMN = "_paimon_bucket"
ROW_KIND_COLUMN = "_paimon_row_kind"
"""Int8 RowKind per row (0 +I, 2 +U, 3 -D), added by ``write_dataframe(row_kind=...)`` or
given by the DataFrame: DELETE on a primary-key table writes its rows as retractions, UPDATE as
``+U``, MERGE each as its action says, as Paimon-Spark's ``ROW_KIND_COL``."""
RESULT_SCHEMA = "result binary"
_TASK_ERROR = re.compile(r"^((?:paimon_core|sql_ext)(?:\.\w+)+): (.+)$", re.MULTILINE)
_WORKER_ERROR = re.compile(r"^(\w[\w.]*(?:Error|Exception)): (.+)$", re.MULTILINE)


# ---------------------------------------------------------------------------- types


def conform(table: FileStoreTable, df: DataFrame, row_tracking: bool = False) -> DataFrame:
    """``df`` (one column per table column, by name) cast in Spark to the table's types; a
    ``ROW_KIND_COLUMN`` of ``df`` (MERGE's changes) is kept, and with ``row_tracking`` its
    ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` (as BIGINT).

    Spark's casts apply (with ANSI mode, a value that does not fit is an error).
    """
    names = df.columns
    wanted = [f.name for f in table.schema.fields]
    if row_tracking:
        wanted += ROW_TRACKING_COLUMNS
    missing = [n for n in wanted if n not in names]
    if missing:
        raise SqlError(f"Data for {table.identifier} lacks columns {missing}")
    kinds = [F.col(ROW_KIND_COLUMN).cast("tinyint")] if ROW_KIND_COLUMN in names else []
    tracking = (
        [F.col(n).cast("bigint").alias(n) for n in ROW_TRACKING_COLUMNS] if row_tracking else []
    )
    return df.select(
        *[
            F.col(quote_identifier(f.name)).cast(to_spark_type(f.type)).alias(f.name)
            for f in table.schema.fields
        ],
        *tracking,
        *kinds,
    )


def fit(table: FileStoreTable, data: pa.Table | pa.RecordBatch) -> pa.Table:
    """Spark's Arrow data (the table's columns by name) in the table's Arrow types, where a
    plain cast would refuse or lose Paimon's form (CHAR padding, TIMESTAMP precision, TIME)."""
    if isinstance(data, pa.RecordBatch):
        data = pa.Table.from_batches([data])
    names = [f.name for f in table.schema.fields]
    return pa.table([_fit(f, data.column(f.name)) for f in table.schema.fields], names=names)


def _fit(f: DataField, column: pa.ChunkedArray) -> pa.ChunkedArray:
    root = f.type.root
    if root in ("CHAR", "VARCHAR"):
        length = f.type.length or 1
        if len(column) and (pc.max(pc.utf8_length(column)).as_py() or 0) > length:
            raise SqlError(f"Value of column '{f.name}' exceeds {f.type} length limitation")
        if root == "CHAR":
            column = pc.utf8_rpad(column, width=length)
    elif root in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        # Spark has microseconds; a TIMESTAMP(3) column keeps milliseconds, as Paimon writes.
        target = to_arrow_type(f.type)
        if column.type != target:
            column = pc.cast(column, target, safe=False)
    elif root == "TIME":
        millis = column.cast(pa.int32()).cast(pa.time32("ms"))
        column = millis.cast(to_arrow_type(f.type))
    return column


# ------------------------------------------------------------------------ the tasks


@dataclass(frozen=True)
class _AttemptLog:
    """The paths one task attempt is about to create, rewritten whole as each is added."""

    file_io: FileIO
    path: str
    paths: list[str] = field(default_factory=list)

    def __call__(self, path: str) -> None:
        self.paths.append(path)
        self.file_io.write_bytes(self.path, "\n".join(self.paths).encode())


@dataclass(frozen=True)
class CommitIdentity:
    """Who commits a write and which of its commits it is: a streaming query's commit user
    (stable across restarts) and a micro-batch's id as the ``commitIdentifier``, so that a
    batch run again is recognised (``FileStoreCommit.filter_committed``)."""

    user: str
    identifier: int


@dataclass(frozen=True)
class WriteJob:
    """What every task of one statement needs (pickled to the executors' Python workers):
    the table, overwrite or not, the base snapshot all writers continue from, and the
    directory of the attempt logs."""

    table: FileStoreTable
    overwrite: bool
    base: Snapshot | None
    staging: str
    write_only: bool = False
    """No compaction by the writers (Paimon's ``write-only`` writer, ``writeOnly()``)."""
    ignore_previous_files: bool = False
    """Writers that restore no live file of their buckets (``TableWrite``'s)."""
    row_tracking: bool = False
    """The rows carry ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` (a row-level statement's rows of
    a row-tracking table): those with a row id keep it (``TableWrite(row_tracking=True)``,
    Paimon-Spark's ``withRowTracking`` writer), those without (MERGE's inserts) are new
    rows, given ids by the commit."""

    @classmethod
    def start(cls, table: FileStoreTable, overwrite: bool, fresh: bool = False) -> WriteJob:
        """A job on ``table`` continuing from its latest snapshot (checked: can be written);
        ``fresh``: from no snapshot, as into an empty table (a replaced table's new data)."""
        table.new_write(overwrite).close()  # refuses formats and bucket modes it cannot write
        staging = f"{table.path.rstrip('/')}/{STAGING_PREFIX}{uuid.uuid4()}"
        return cls(table, overwrite, None if fresh else table.latest_snapshot(), staging)

    def write(self, batches: Iterable[pa.RecordBatch]) -> bytes | None:
        """Write one task's rows; the pickled (messages, paths written), None if no rows."""
        log = _AttemptLog(self.table.file_io, f"{self.staging}/{uuid.uuid4()}")
        modes: dict[str, Any] = {"ignore_previous_files": self.ignore_previous_files}
        if self.write_only:
            modes["compaction"] = None
        write = self.table.new_write(
            self.overwrite, base_snapshot=self.base, on_new_file=log, **modes
        )
        keeping: TableWrite | None = None
        try:
            for batch in batches:
                if batch.num_rows:
                    if BUCKET_COLUMN in batch.schema.names:
                        batch = batch.drop_columns([BUCKET_COLUMN])
                    kinds = None
                    if ROW_KIND_COLUMN in batch.schema.names:
                        kinds = batch.column(ROW_KIND_COLUMN)
                        batch = batch.drop_columns([ROW_KIND_COLUMN])
                    if self.row_tracking:
                        has_id = pc.is_valid(batch.column(ROW_ID))
                        kept = batch.filter(has_id)
                        if kept.num_rows:
                            if keeping is None:
                                keeping = self.table.new_write(
                                    self.overwrite,
                                    base_snapshot=self.base,
                                    on_new_file=log,
                                    row_tracking=True,
                                    **modes,
                                )
                            data = fit(self.table, kept)
                            for name in ROW_TRACKING_COLUMNS:
                                data = data.append_column(name, kept.column(name))
                            keeping.write_arrow(data)
                        batch = batch.filter(pc.invert(has_id))
                        if not batch.num_rows:
                            continue
                    write.write_arrow(fit(self.table, batch), kinds)
            messages = write.prepare_commit()
            if keeping is not None:
                messages += keeping.prepare_commit()
        finally:
            write.close()
            if keeping is not None:
                keeping.close()
        if not messages:
            return None
        return pickle.dumps((messages, list(log.paths)))

    def task(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """``mapInArrow`` body: one row holding the task's result."""
        result = self.write(batches)
        if result is not None:
            yield pa.record_batch([pa.array([result], pa.binary())], names=["result"])

    def commit(
        self,
        results: Iterable[bytes],
        overwrite: Overwrite,
        deleted: Iterable[CommitMessage] = (),
        identity: CommitIdentity | None = None,
    ) -> int | None:
        """Commit the tasks' messages (and ``deleted``, files the statement removes) in one
        snapshot, then remove what lost attempts left.

        ``identity`` (a streaming micro-batch): the commit user and identifier of the
        snapshot; when that user has already committed that identifier (the batch runs again
        after a crash that followed its commit), nothing is committed, the job's files are
        removed and None is returned.

        Any failure before the snapshot is published removes every file the job wrote.
        """
        kept: set[str] = set()
        messages: list[CommitMessage] = list(deleted)
        try:
            for result in results:
                task_messages, paths = pickle.loads(result)
                messages.extend(task_messages)
                kept.update(paths)
            identifier = BATCH_COMMIT_IDENTIFIER
            if identity is not None:
                commit = self.table.new_commit(identity.user)
                identifier = identity.identifier
                if not commit.filter_committed([identifier]):
                    self.abort()
                    return None
            else:
                commit = self.table.new_commit()
            if overwrite is False:
                snapshot = commit.commit(messages, identifier)
            elif overwrite is True:
                dynamic = bool(self.table.schema.partition_keys)
                snapshot = commit.overwrite(messages, dynamic=dynamic, commit_identifier=identifier)
            else:
                snapshot = commit.overwrite(
                    messages, partition=dict(overwrite), commit_identifier=identifier
                )
        except BaseException as e:
            if published_before(e) is None:
                self.abort()
            else:  # the committed files are the table's now: only the rest go
                self.sweep(kept)
            raise
        self.sweep(kept)
        return snapshot

    def abort(self) -> None:
        """Remove every file any attempt of the job created."""
        self.sweep(set())

    def sweep(self, kept: set[str]) -> None:
        """Delete the logged files not in ``kept``, then the logs."""
        io = self.table.file_io
        if not io.exists(self.staging):
            return
        for name in io.list_names(self.staging):
            text = io.read_bytes(f"{self.staging}/{name}").decode()
            for path in text.splitlines():
                if path and path not in kept:
                    io.delete(path)
        io.delete_dir(self.staging)


# ----------------------------------------------------------------------- SQL writes


def write_dataframe(
    table: FileStoreTable,
    df: DataFrame,
    overwrite: Overwrite = False,
    row_kind: int = 0,
    deleted: Iterable[CommitMessage] = (),
    *,
    fresh: bool = False,
    before_commit: Callable[[], object] | None = None,
    write_only: bool = False,
    ignore_previous_files: bool = False,
    identity: CommitIdentity | None = None,
    row_tracking: bool = False,
) -> int | None:
    """Write ``df`` (the table's columns, by name) on the executors, in one commit; returns
    the snapshot id (None when nothing changed). ``row_kind`` is the RowKind of every row
    (3, -D: DELETE's retractions of a primary-key table), unless ``df`` has its own
    ``ROW_KIND_COLUMN``; ``deleted`` are files removed in the same commit (the rewritten files
    of a copy-on-write DELETE, UPDATE or MERGE).

    ``write_only`` and ``ignore_previous_files`` are ``WriteJob``'s: how DELETE rewrites the
    files of a primary-key table whose merge engine cannot delete by retraction.

    ``fresh`` writes as into an empty table and ``before_commit`` runs once every file is
    written, just before the commit: a replaced table (``sql_ext.replace``) writes its new
    rows first, then is truncated and given its new schema, then gets them.

    ``row_tracking``: ``df`` also has ``_ROW_ID`` and ``_SEQUENCE_NUMBER``; rows with a row
    id keep it (``WriteJob.row_tracking``).

    ``identity``: a streaming micro-batch's commit user and identifier (``WriteJob.commit``);
    its Spark jobs run in the job group of the calling thread (a streaming query's, which
    ``StreamingQuery.stop`` cancels) instead of one of their own.

    Nothing is committed when anything fails, and the files written are removed again.

    Raises:
        SqlError: a value Spark cannot cast to its column type (ANSI mode), or longer than
            its CHAR/VARCHAR column.
        PaimonError: what the core rejects (NULL in a NOT NULL column, ...).
    """
    job = WriteJob.start(table, overwrite is not False, fresh)
    if write_only or ignore_previous_files or row_tracking:
        job = replace(
            job,
            write_only=write_only,
            ignore_previous_files=ignore_previous_files,
            row_tracking=row_tracking,
        )
    conformed = conform(table, df, row_tracking)
    if row_kind:
        conformed = conformed.withColumn(ROW_KIND_COLUMN, F.lit(row_kind).cast("tinyint"))
    routed = _route(job, conformed)
    spark = df.sparkSession
    with _job_group(spark, keep=identity is not None) as group:
        try:
            with _arrow_batches(spark):
                rows = routed.mapInArrow(job.task, RESULT_SCHEMA).collect()
        except PySparkException as e:
            _settle(spark, group)
            job.abort()
            raise _task_error(e) or SqlError(
                f"Cannot write to {table.identifier}: {_worker_line(e) or first_line(e)}"
            ) from None
        except BaseException:
            _settle(spark, group)
            job.abort()
            raise
    if before_commit is not None:
        try:
            before_commit()
        except BaseException:
            job.abort()
            raise
    with phase(f"Committing to {table.identifier or table.path} ..."):
        return job.commit((row[0] for row in rows), overwrite, deleted, identity)


_JOB_PROPERTIES = ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel")
_SETTLE_SECONDS = 120.0


@contextmanager
def _job_group(spark: SparkSession, keep: bool = False) -> Iterator[str]:
    """The write's Spark jobs in a group of their own (the thread's group restored after),
    so that a failed write can cancel and await its other tasks. ``keep``: in the thread's
    group when it has one (a streaming query's micro-batch thread: stopping the query
    cancels that group)."""
    context = spark.sparkContext
    saved = [context.getLocalProperty(key) for key in _JOB_PROPERTIES]
    if keep and saved[0]:
        yield saved[0]
        return
    group = f"paimon-write-{uuid.uuid4()}"
    context.setJobGroup(group, "paimon write", interruptOnCancel=True)
    try:
        yield group
    finally:
        for key, value in zip(_JOB_PROPERTIES, saved):
            context.setLocalProperty(key, value)  # type: ignore[arg-type]


def _settle(spark: SparkSession, group: str) -> None:
    """Cancel the group's jobs and wait until none of their tasks runs any more: Spark fails
    a job on its first failed task while others may still be writing files, which the
    cleanup that follows must see in the attempt logs (a Python task ends, for Spark, once
    its worker has finished or been destroyed)."""
    context = spark.sparkContext
    context.cancelJobGroup(group)
    tracker = context.statusTracker()
    deadline = time.monotonic() + _SETTLE_SECONDS
    while time.monotonic() < deadline:
        active = 0
        for job_id in tracker.getJobIdsForGroup(group):
            job = tracker.getJobInfo(job_id)
            for stage_id in job.stageIds if job is not None else ():
                stage = tracker.getStageInfo(stage_id)
                active += stage.numActiveTasks if stage is not None else 0
        if not active:
            return
        time.sleep(0.05)


_ARROW_BATCHES = {
    "spark.sql.execution.arrow.maxRecordsPerBatch": "100000",
    "spark.sql.execution.arrow.maxBytesPerBatch": str(64 * 2**20),
}
"""Arrow batches for the writer tasks: up to 100,000 rows (Spark's default is 10,000), and
at most 64 MiB however wide the rows (Spark cuts a batch at whichever limit comes first)."""


@contextmanager
def _arrow_batches(spark: SparkSession) -> Iterator[None]:
    """Larger Arrow batches from Spark to the writer tasks while the write's job is planned
    (Spark's Python operators take the sizes then), unless the session sets its own.

    Rows cross from Spark to the Python writer in Arrow batches; with Spark's 10,000 rows a
    batch, the per-batch costs on both sides are about a seventh of an append INSERT's time
    (5M rows: 8.4 s with 100,000-row batches, 9.8 s with 10,000)."""
    from sql_ext.jvm import session_confs

    given = session_confs(spark)
    changed = [key for key in _ARROW_BATCHES if key not in given]
    for key in changed:
        spark.conf.set(key, _ARROW_BATCHES[key])
    try:
        yield
    finally:
        for key in changed:
            spark.conf.unset(key)


def _route(job: WriteJob, df: DataFrame) -> DataFrame:
    """``df`` partitioned so that no bucket of the table is written by two tasks."""
    table = job.table
    probe = table.new_write(job.overwrite)
    probe.close()
    partitions = [F.col(quote_identifier(k)) for k in table.schema.partition_keys]
    if probe.mode == "unaware":
        return df  # every task writes its own files; append files never merge
    tasks = _writer_tasks(df.sparkSession)
    if probe.mode in ("dynamic", "postpone"):
        # One task per partition owns its HASH index (Paimon's single assigner); a
        # postpone-bucket partition's bucket count is known to the writer alone.
        return df.repartition(tasks, *partitions) if partitions else df.repartition(1)
    by_name = {f.name: f for f in table.schema.fields}
    bucket_of = _BucketOf(tuple(by_name[k] for k in probe.bucket_keys), probe.num_buckets)
    from pyspark.sql.pandas.functions import ArrowUDFType, arrow_udf

    with warnings.catch_warnings():  # "prefer type hints": *keys has no form they accept
        warnings.simplefilter("ignore", UserWarning)
        udf = arrow_udf(bucket_of, st.IntegerType(), ArrowUDFType.SCALAR)
    keys = [F.col(quote_identifier(k)) for k in probe.bucket_keys]
    with_bucket = df.withColumn(BUCKET_COLUMN, udf(*keys))
    return with_bucket.repartition(tasks, *partitions, F.col(BUCKET_COLUMN))


def _writer_tasks(spark: SparkSession) -> int:
    """How many tasks write a shuffled table: Spark's ``spark.sql.shuffle.partitions``, but
    at most two per core. A fixed number, so that adaptive execution does not coalesce the
    shuffle (it would leave cores idle: the Python writer is CPU-bound), and not the 200
    that Spark defaults to (each Python task costs a worker round, even with no rows)."""
    configured = spark.conf.get("spark.sql.shuffle.partitions", "200") or "200"
    cores = max(spark.sparkContext.defaultParallelism, 1)
    return max(1, min(int(configured) if configured.isdigit() else 200, 2 * cores))


@dataclass(frozen=True)
class _BucketOf:
    """Each row's fixed bucket from its bucket-key columns (their hash, as Paimon assigns
    it). A scalar Arrow UDF: only the key columns travel to Python and the bucket back, not
    the whole rows (a ``mapInArrow`` would move every column through Python twice)."""

    fields: tuple[DataField, ...]
    num_buckets: int

    def __call__(self, *keys: pa.Array) -> pa.Array:
        fitted = [_fit(f, pa.chunked_array([k])) for f, k in zip(self.fields, keys)]
        types = [f.type for f in self.fields]
        return pa.array(assign_buckets(fitted, types, self.num_buckets), pa.int32())


def _worker_line(error: PySparkException) -> str | None:
    """The exception a Python worker raised (``OSError: ...``, the last one of its
    traceback), where Spark's first line only says that one was raised."""
    if "Python worker" not in first_line(error):
        return None
    found = _WORKER_ERROR.findall(str(error))
    return f"{found[-1][0]}: {found[-1][1]}" if found else None


def _task_error(error: PySparkException) -> PaimonError | None:
    """The project's own error a Python worker raised (its last line in Spark's traceback),
    raised again on the driver with its type and message."""
    found = _TASK_ERROR.findall(str(error))
    if not found:
        return None
    qualified, message = found[-1]
    module, _, name = qualified.rpartition(".")
    try:
        cls = getattr(importlib.import_module(module), name)
        if isinstance(cls, type) and issubclass(cls, PaimonError):
            return cls(message)
    except (ImportError, AttributeError, TypeError):
        pass
    return None


# -------------------------------------------------------------- df.write.format("paimon")


SAVE_MODES = ("append", "overwrite")
_OVERWRITE_MODE_CONF = "spark.sql.sources.partitionOverwriteMode"


def save_dataframe(df: DataFrame, mode: str, options: Mapping[str, str]) -> int | None:
    """``df.write.format("paimon").mode(mode).save("db.t")``, run as INSERT runs: the same job
    (``write_dataframe``: primary-key and bucketed tables shuffled by partition and bucket,
    dynamic-bucket tables by partition, one commit), as Paimon-Spark's ``SparkSource`` runs
    ``WriteIntoPaimonTable``. ``append`` adds the rows (an upsert on a primary-key table);
    ``overwrite`` replaces the table, or only the partitions written when
    ``partitionOverwriteMode`` (the option, else the session's
    ``spark.sql.sources.partitionOverwriteMode``) is ``dynamic``. Columns match by name.
    The session's ``spark.paimon.*`` settings apply, as to INSERT. Returns the snapshot id.

    Raises:
        SqlError: no table or warehouse, another save mode, a bad partitionOverwriteMode,
            or data the table cannot take.
    """
    table, lower = target_table(options)
    if mode.lower() not in SAVE_MODES:
        raise SqlError(
            f"format('paimon') cannot save to {table.identifier} in mode {mode}: "
            "use append or overwrite"
        )
    table, df = prepare_save(table, df, options)
    spark = df.sparkSession
    overwrite: Overwrite = False
    if mode.lower() == "overwrite":
        setting = lower.get("partitionoverwritemode") or spark.conf.get(
            _OVERWRITE_MODE_CONF, "static"
        )
        dynamic = _overwrite_mode(setting) == "dynamic"
        overwrite = True if dynamic and table.schema.partition_keys else {}
    with commit_operation(COMMIT_OPERATION.get() or _save_operation(overwrite)):
        return write_dataframe(table, df, overwrite)


def _save_operation(overwrite: Overwrite) -> str:
    """The ``Snapshot.operation`` of a DataFrame save outside any SQL statement, as
    Paimon-Spark's V2 write records it."""
    return "WRITE" if overwrite is False else "OVERWRITE"


def prepare_save(
    table: FileStoreTable, df: DataFrame, options: Mapping[str, str]
) -> tuple[FileStoreTable, DataFrame]:
    """``table`` and ``df`` as a DataFrame save writes them: the DataFrame's new columns
    added to the table first under ``write.merge-schema``, the columns it lacks added as
    NULLs (as Paimon), and the session's ``spark.paimon.*`` settings on the table."""
    from sql_ext.dynamic_options import paimon_confs, with_dynamic_options
    from sql_ext.metadata.config import CATALOG_NAME

    table = merged_schema_table(table, options, df.schema)
    given = set(df.columns)
    missing = [f for f in table.schema.fields if f.name not in given]
    if missing:  # as Paimon: columns the DataFrame lacks are written as NULL
        nulls = [F.lit(None).cast(to_spark_type(f.type)).alias(f.name) for f in missing]
        df = df.select(*[F.col(quote_identifier(c)) for c in df.columns], *nulls)
    database, _, name = table.identifier.partition(".")
    table = with_dynamic_options(
        table, paimon_confs(df.sparkSession), CATALOG_NAME, database, name, time_travel=False
    )
    return table, df


def target_table(options: Mapping[str, str]) -> tuple[FileStoreTable, dict[str, str]]:
    """The table ``format("paimon")`` writes (option ``path`` or ``table``: ``db.t`` of the
    ``warehouse``, with the ``s3.*`` catalog options, or a table directory, as for reads),
    and the options lower-cased."""
    from sql_ext.datapath.read import source_table

    lower = {k.lower(): v for k, v in options.items()}
    try:
        return source_table(dict(options), "write"), lower
    except InvalidArgument as e:
        raise SqlError(str(e)) from None


def merged_schema_table(
    table: FileStoreTable, options: Mapping[str, str], data: StructType
) -> FileStoreTable:
    """The table once ``write.merge-schema`` (or ``mergeSchema``; ``sql_ext.merge_schema``)
    has added the DataFrame's new columns as one ``schema-N``; ``table`` when there is
    nothing to add."""
    from sql_ext.merge_schema import MergeSchema, plan_evolution

    evolution = plan_evolution(table, data, MergeSchema.of(options, dataframe=True), False)
    if not evolution.changes:
        return table
    evolution.commit()
    return target_table(options)[0]


def _overwrite_mode(setting: str | None) -> str:
    mode = (setting or "static").strip().lower()
    if mode not in ("static", "dynamic"):
        raise SqlError(f"Invalid partitionOverwriteMode '{setting}': static or dynamic")
    return mode


@dataclass
class PaimonCommitMessage(WriterCommitMessage):
    """One task's pickled (messages, paths written); None when the task had no rows."""

    result: bytes | None


class PaimonArrowWriter(DataSourceArrowWriter):
    """The ``paimon`` data source's own writer: tasks write, the driver commits once.

    ``df.write.format("paimon").save()`` from Python does not come here: ``source`` routes
    it to ``save_dataframe``, which can shuffle. This writer serves callers that reach the
    data source without PySpark's ``DataFrameWriter.save``; Spark gives a data source no way
    to shuffle its input, so it takes only tables whose buckets may be written by several
    tasks of one job: append tables. Primary-key tables are refused (two tasks writing one
    bucket would give two files equal sequence numbers).
    """

    def __init__(self, job: WriteJob, overwrite: Overwrite) -> None:
        self.job = job
        self.overwrite = overwrite

    def write(self, iterator: Iterator[pa.RecordBatch]) -> PaimonCommitMessage:
        return PaimonCommitMessage(self.job.write(self._filled(iterator)))

    def _filled(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """Each batch with the table's columns it lacks as NULLs (Paimon-Spark writes by
        name; Spark's own check of the columns is not made for a Python data source)."""
        fields = self.job.table.schema.fields
        for batch in batches:
            names = set(batch.schema.names)
            for f in fields:
                if f.name not in names:
                    column = pa.nulls(batch.num_rows, to_arrow_type(f.type))
                    batch = batch.append_column(f.name, column)
            yield batch

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        results = [m.result for m in messages if isinstance(m, PaimonCommitMessage) and m.result]
        with commit_operation(COMMIT_OPERATION.get() or _save_operation(self.overwrite)):
            self.job.commit(results, self.overwrite)

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        self.job.abort()


def source_writer(
    options: Mapping[str, str], schema: StructType, overwrite: bool
) -> PaimonArrowWriter:
    """The writer of ``format("paimon")``: options ``path`` (``db.t``), ``warehouse``, Paimon's
    catalog options (``s3.*``), ``partitionOverwriteMode`` (``static`` or ``dynamic``, as
    Spark's file sources: a Python data source cannot see the session's configuration) and
    ``write.merge-schema`` (or ``mergeSchema``; ``sql_ext.merge_schema``): the DataFrame's
    new columns are added to the table first, its missing ones written as NULL.

    The table is `db.t` of the warehouse or a table directory, as for reads
    (`sql_ext.datapath.read.source_table`).

    Raises:
        SqlError: no table or warehouse given, or a primary-key table.
    """
    table, lower = target_table(options)
    if table.schema.primary_keys:
        raise SqlError(
            f"format('paimon') cannot write primary-key table {table.identifier} without "
            "PySpark's DataFrameWriter.save: its tasks cannot be shuffled by bucket"
        )
    table = merged_schema_table(table, options, schema)
    mode = _overwrite_mode(lower.get("partitionoverwritemode"))
    result: Overwrite = False
    if overwrite:
        result = True if mode == "dynamic" and table.schema.partition_keys else {}
    return PaimonArrowWriter(WriteJob.start(table, bool(overwrite)), result)

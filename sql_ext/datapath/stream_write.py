"""Structured Streaming into Paimon tables, exactly once: ``df.writeStream.format("paimon")``.

Every micro-batch is one write job of ``sql_ext.datapath.write`` (the job INSERT runs:
primary-key and bucketed tables shuffled by partition and bucket, dynamic-bucket tables by
partition, so every bucket has one writer), committed as one snapshot (plus the writers'
COMPACT snapshot) whose ``commitUser`` is the query's id and whose ``commitIdentifier`` is
the batch id. Spark keeps a query's id in its checkpoint, so it survives restarts.

Why not the Python data source's stream writer: its ``write`` sees each task's rows as
Spark partitioned them and cannot ask for a shuffle, so two tasks could write one
primary-key bucket (equal sequence numbers, a key in two files of one level). Paimon-Spark's
sink (``PaimonSink.addBatch``) receives the micro-batch DataFrame and shuffles it; here
``sql_ext.datapath.source.register`` wraps PySpark's ``DataStreamWriter.start`` so that
format ``paimon`` becomes ``foreachBatch(PaimonStreamSink(...))``, which receives the
DataFrame the same way. The data source's own ``streamWriter`` (``PaimonStreamWriter``)
serves only callers that bypass PySpark's ``DataStreamWriter`` and takes append tables.

Exactly once: a batch whose commit succeeded but whose completion Spark did not record (a
crash between the two) runs again with the same id after a restart; the sink then finds a
snapshot of the query's commit user holding that batch (Java's
``FileStoreCommitImpl.filterCommitted``) and commits nothing. A batch that fails leaves no
files: the write job removes what its tasks wrote (see ``write.py``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamArrowWriter, WriterCommitMessage

from paimon_core.format.types import to_arrow_type
from sql_ext.datapath.write import (
    STAGING_PREFIX,
    CommitIdentity,
    Overwrite,
    WriteJob,
    merged_schema_table,
    prepare_save,
    target_table,
    write_dataframe,
)
from sql_ext.errors import SqlError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

    from paimon_core.table import FileStoreTable

logger = logging.getLogger(__name__)

OUTPUT_MODES = ("append", "complete")
QUERY_ID_PROPERTY = "sql.streaming.queryId"
"""The SparkContext local property holding the running query's id (Spark's
``StreamExecution.QUERY_ID_KEY``), set in the micro-batch thread and its tasks."""
BATCH_ID_PROPERTY = "streaming.sql.batchId"
"""The local property holding the running micro-batch's id (``MicroBatchExecution.BATCH_ID_KEY``)."""


def stream_commit_user(query_id: str) -> str:
    """The commit user of a streaming query's snapshots: its id, which Spark keeps in the
    checkpoint (``<checkpoint>/metadata``), so a restarted query commits as the same user
    and a new query (a new checkpoint) as another."""
    return query_id


def check_output_mode(mode: str) -> bool:
    """Whether ``mode`` (Spark's output mode, any case) replaces the table (``complete``);
    Paimon-Spark's ``SparkSource.createSink`` refuses the others.

    Raises:
        SqlError: ``update`` or any other mode.
    """
    lowered = mode.strip().lower()
    if lowered not in OUTPUT_MODES:
        raise SqlError("Paimon supports only Complete and Append output mode.")
    return lowered == "complete"


def already_committed(table: FileStoreTable, identity: CommitIdentity) -> bool:
    """Whether ``identity.user`` has committed ``identity.identifier`` (or a later one) to
    ``table`` already (``FileStoreCommit.filter_committed``)."""
    return not table.new_commit(identity.user).filter_committed([identity.identifier])


class PaimonStreamSink:
    """A ``foreachBatch`` function writing each micro-batch into one Paimon table, exactly once.

    ``options`` are ``format("paimon")``'s write options (``path``: ``db.t`` or a table
    directory, ``warehouse``, ``s3.*``, ``write.merge-schema``, ...); ``complete`` replaces
    the table's rows with each batch (output mode ``complete``, as Paimon-Spark's
    ``Overwrite``), else each batch is appended (an upsert on a primary-key table).

    Called as ``sink(batch_df, batch_id)`` in the query's micro-batch thread, where the
    query's id is a local property of the SparkContext: the batch commits as user
    ``stream_commit_user(query_id)`` with identifier ``batch_id``, and does nothing when
    that user already committed that batch. One sink per table per query: two writes of one
    query to one table would look like one batch run twice.
    """

    def __init__(self, options: Mapping[str, str], complete: bool = False) -> None:
        self.options = dict(options)
        self.complete = complete

    def __call__(self, df: DataFrame, batch_id: int) -> None:
        spark = df.sparkSession
        query_id = spark.sparkContext.getLocalProperty(QUERY_ID_PROPERTY)
        if not query_id:
            raise SqlError("PaimonStreamSink must run as a streaming query's foreachBatch function")
        identity = CommitIdentity(stream_commit_user(query_id), int(batch_id))
        table, _ = target_table(self.options)
        if already_committed(table, identity):
            logger.info(
                "Batch %d of query %s is already committed to %s; skipped",
                batch_id,
                query_id,
                table.identifier,
            )
            return
        table, df = prepare_save(table, df, self.options)
        overwrite: Overwrite = {} if self.complete else False
        write_dataframe(table, df, overwrite, identity=identity)


def stream_sink(
    spark: SparkSession, table: str, output_mode: str = "append", **options: str
) -> PaimonStreamSink:
    """A ``PaimonStreamSink`` into ``table`` (``db.t`` of the warehouse of the latest
    ``PaimonSession`` of ``spark``, unless ``warehouse`` is given, or a table directory),
    for ``df.writeStream.foreachBatch(...)`` where a query transforms each batch itself.

    Raises:
        SqlError: another output mode than append or complete, or no such table.
    """
    from sql_ext.datapath.registry import registered_options

    merged = {**registered_options(spark), **options, "path": table}
    return checked_sink(merged, output_mode)


def checked_sink(options: Mapping[str, str], output_mode: str) -> PaimonStreamSink:
    """A sink for ``options`` in ``output_mode``, checked before the query starts: the
    output mode, and that the table exists and can be written.

    Raises:
        SqlError: another output mode than append or complete, or no such table.
    """
    complete = check_output_mode(output_mode)
    table, _ = target_table(options)
    table.new_write(complete).close()  # refuses formats and bucket modes it cannot write
    return PaimonStreamSink(options, complete)


# ------------------------------------------------------------- the data source's writer


@dataclass
class StreamCommitMessage(WriterCommitMessage):
    """One task's query id and pickled (messages, paths written); ``result`` None without rows."""

    query_id: str
    result: bytes | None


class PaimonStreamWriter(DataSourceStreamArrowWriter):
    """The ``paimon`` data source's own stream writer, exactly once, for append tables.

    ``df.writeStream.format("paimon").start()`` from Python does not come here (see the
    module docstring). Tasks write files (each task attempt logging its paths under
    ``<table>/_write-<query id>-<batch id>/``) and return their messages; the driver
    commits them as the query's commit user with the batch id, unless that batch was
    committed already; a batch that aborts, or that was committed already, has its files
    removed. The query and batch ids come from the tasks' local properties.
    """

    def __init__(self, table: FileStoreTable, overwrite: bool, checkpoint: str | None) -> None:
        self.table = table
        self.overwrite = overwrite
        self.checkpoint = checkpoint

    def _job(self, query_id: str, batch_id: int) -> WriteJob:
        staging = f"{self.table.path.rstrip('/')}/{STAGING_PREFIX}{query_id}-{batch_id}"
        return WriteJob(self.table, self.overwrite, self.table.latest_snapshot(), staging)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> StreamCommitMessage:
        from pyspark import TaskContext

        context = TaskContext.get()
        query_id = context.getLocalProperty(QUERY_ID_PROPERTY) if context else None
        batch_id = context.getLocalProperty(BATCH_ID_PROPERTY) if context else None
        if not query_id or batch_id is None:
            raise SqlError("format('paimon') stream writer tasks must run in a streaming query")
        job = self._job(query_id, int(batch_id))
        return StreamCommitMessage(query_id, job.write(self._filled(iterator)))

    def _filled(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """Each batch with the table's columns it lacks as NULLs (writes are by name)."""
        fields = self.table.schema.fields
        for batch in batches:
            names = set(batch.schema.names)
            for f in fields:
                if f.name not in names:
                    batch = batch.append_column(
                        f.name, pa.nulls(batch.num_rows, to_arrow_type(f.type))
                    )
            yield batch

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        ours = [m for m in messages if isinstance(m, StreamCommitMessage)]
        if not ours:
            return  # no task ran: nothing was written
        query_id = ours[0].query_id
        job = self._job(query_id, batchId)
        identity = CommitIdentity(stream_commit_user(query_id), batchId)
        overwrite: Overwrite = {} if self.overwrite else False
        job.commit([m.result for m in ours if m.result], overwrite, identity=identity)

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        ours = [m for m in messages if isinstance(m, StreamCommitMessage)]
        query_id = ours[0].query_id if ours else checkpoint_query_id(self.table, self.checkpoint)
        if query_id is None:
            logger.warning(
                "Cannot tell which files batch %d wrote into %s (no task finished and no "
                "checkpoint option): remove_orphan_files removes them",
                batchId,
                self.table.identifier,
            )
            return
        self._job(query_id, batchId).abort()


def checkpoint_query_id(table: FileStoreTable, checkpoint: str | None) -> str | None:
    """The query id Spark wrote to ``<checkpoint>/metadata`` (``{"id": ...}``), None when
    there is no checkpoint option or file."""
    if not checkpoint:
        return None
    from paimon_core.io.load import get_file_io

    path = f"{checkpoint.rstrip('/')}/metadata"
    try:
        text = get_file_io(path, {}).read_bytes(path.removeprefix("file:"))
        value = json.loads(text.splitlines()[0]).get("id")
    except (OSError, ValueError, IndexError, AttributeError):
        return None
    return str(value) if value else None


def source_stream_writer(
    options: Mapping[str, str], schema: StructType, overwrite: bool
) -> PaimonStreamWriter:
    """The stream writer of ``format("paimon")`` for callers that bypass PySpark's
    ``DataStreamWriter.start`` (which routes to ``PaimonStreamSink``): append tables only,
    ``write.merge-schema`` as for saves.

    Raises:
        SqlError: no table or warehouse given, or a primary-key table.
    """
    table, lower = target_table(options)
    if table.schema.primary_keys:
        raise SqlError(
            f"format('paimon') cannot stream into primary-key table {table.identifier} "
            "without PySpark's DataStreamWriter.start: its tasks cannot be shuffled by bucket "
            "(use df.writeStream.format('paimon') from PySpark, or foreachBatch with "
            "sql_ext.datapath.stream_write.stream_sink)"
        )
    table = merged_schema_table(table, options, schema)
    return PaimonStreamWriter(table, overwrite, lower.get("checkpointlocation"))

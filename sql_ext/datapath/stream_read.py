"""Structured Streaming reads of Paimon tables: ``spark.readStream.format("paimon").load("db.t")``.

PySpark's ``DataSourceStreamReader`` runs in one long-lived Python worker on the driver
(offsets, planning, commits) and reads on the executors. Where the stream starts and what
each snapshot adds are the core's (``paimon_core.operations.stream_scan``: ``scan.mode``,
``consumer-id``, delta or changelog files); this module turns them into Spark offsets,
micro-batches and read tasks, as Paimon-Spark's ``PaimonMicroBatchStream``.

Offsets: ``{"snapshot": s, "split": k, "full": b}``, the position of the next thing to read:
split ``k`` of snapshot ``s``'s plan, which is all of ``s``'s live rows when ``full`` (the
first snapshot of ``latest-full`` / ``from-snapshot-full``), else ``s``'s changes. A batch
reads every split from its start offset up to (not including) its end offset. Plans are
deterministic (manifests never change; splits are ordered by partition and bucket, append
files in manifest order), so a restarted query plans a logged batch again exactly.
Snapshots that add nothing to read (COMPACT snapshots of a table without changelog, say)
are passed over in the same batch, so an offset only rests at a snapshot with rows still to
read or at the next one to be committed.

Admission control (``latestOffset(start, limit)``, PySpark 4.2+): the options
``read.stream.maxFilesPerTrigger`` / ``maxBytesPerTrigger`` / ``maxRowsPerTrigger`` bound a
batch by whole splits (a primary-key bucket, an append file; a batch always takes at least
one split), ``read.stream.minRowsPerTrigger`` with ``read.stream.maxTriggerDelayMs`` holds
a batch back until it has that many rows or the delay passed. Spark asks with
``ReadAllAvailable`` (``Trigger.Once``) to have them ignored. ``Trigger.AvailableNow``
reads up to the snapshot that was latest when the query started, then ends.

Consumers (``consumer-id``): each completed batch (the reader's ``commit``) writes the
consumer's ``nextSnapshot``: the snapshot the stream reads next, or the one it is inside
of (replayed whole when a new query starts from the consumer). While a first full snapshot
is read no consumer is written, as Paimon-Spark. Snapshot expiry keeps every snapshot from
a consumer's ``nextSnapshot`` on; a snapshot the stream still needs that expired anyway
fails the query with ``SnapshotExpired`` naming it.

Row kinds: ``read.changelog`` = ``true`` or the table name ``t$audit_log`` put ``rowkind``
(``+I``, ``-U``, ``+U``, ``-D``) first; a full snapshot's rows are ``+I``.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxBytes,
    ReadMaxFiles,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)

from paimon_core.exceptions import InvalidArgument, SnapshotExpired
from paimon_core.format.consumer import Consumer
from paimon_core.operations.stream_scan import (
    StreamScan,
    consumer_id,
    consumer_manager,
    starting_context,
)
from sql_ext.datapath.read import (
    PaimonReader,
    ReadPlan,
    SplitPartition,
    _packed,
    pack_splits,
    plan_read,
    source_table,
    source_view,
)

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

    from paimon_core.operations.scan import Split
    from paimon_core.operations.split_read import IncrementalSplit
    from paimon_core.table import FileStoreTable

logger = logging.getLogger(__name__)

MAX_FILES = "read.stream.maxfilespertrigger"
MAX_BYTES = "read.stream.maxbytespertrigger"
MAX_ROWS = "read.stream.maxrowspertrigger"
MIN_ROWS = "read.stream.minrowspertrigger"
MAX_DELAY = "read.stream.maxtriggerdelayms"
_STREAM_TABLE_OPTIONS = (
    "scan.",
    "consumer",
    "incremental-",
    "streaming-read-overwrite",
    "log.scan",
)
"""Options of ``format("paimon")`` that reach the table of a stream (by prefix)."""
_CACHED_PLANS = 64


@dataclass(frozen=True, order=True)
class Position:
    """A stream offset: split ``split`` of snapshot ``snapshot``'s plan (all its rows when
    ``full``) is read next. Ordered by snapshot, then split."""

    snapshot: int
    split: int
    full: bool = False

    def offset(self) -> dict[str, Any]:
        return {"snapshot": self.snapshot, "split": self.split, "full": self.full}

    @classmethod
    def of(cls, offset: Mapping[str, Any]) -> Position:
        """The position of a Spark offset (as ``offset`` wrote it).

        Raises:
            InvalidArgument: an offset this source did not write (another source's
                checkpoint).
        """
        try:
            return cls(int(offset["snapshot"]), int(offset["split"]), bool(offset["full"]))
        except (KeyError, TypeError, ValueError):
            raise InvalidArgument(
                f"Not an offset of a Paimon stream: {offset!r} (a checkpoint of another source?)"
            ) from None

    def next_snapshot(self) -> Position:
        return Position(self.snapshot + 1, 0, False)


@dataclass(frozen=True)
class Limits:
    """The read limits of a stream's options (None: not set)."""

    max_files: int | None = None
    max_bytes: int | None = None
    max_rows: int | None = None
    min_rows: int | None = None
    max_delay_ms: int | None = None

    @classmethod
    def of(cls, options: Mapping[str, str]) -> Limits:
        """From ``read.stream.*`` (keys lower-cased).

        Raises:
            InvalidArgument: a value that is no positive integer, or only one of
                ``minRowsPerTrigger`` and ``maxTriggerDelayMs`` (Paimon-Spark's message).
        """

        def number(key: str) -> int | None:
            text = options.get(key)
            if text is None:
                return None
            try:
                value = int(str(text).strip())
            except ValueError:
                value = 0
            if value <= 0:
                raise InvalidArgument(f"'{key}' must be a positive integer, not '{text}'")
            return value

        limits = cls(
            number(MAX_FILES), number(MAX_BYTES), number(MAX_ROWS), number(MIN_ROWS),
            number(MAX_DELAY),
        )  # fmt: skip
        if (limits.min_rows is None) != (limits.max_delay_ms is None):
            raise InvalidArgument(
                "Can't provide only one of read.stream.minRowsPerTrigger and "
                "read.stream.maxTriggerDelayMs."
            )
        return limits

    def default(self) -> ReadLimit:
        """The read limit Spark is told about: one of those set (Spark's Python API has no
        composite limit; whatever limit Spark passes back but ``ReadAllAvailable``, all of
        them apply)."""
        if self.max_files is not None:
            return ReadMaxFiles(self.max_files)
        if self.max_bytes is not None:
            return ReadMaxBytes(self.max_bytes)
        if self.max_rows is not None:
            return ReadMaxRows(self.max_rows)
        return ReadAllAvailable()


class _Budget:
    """What one batch may still take; a split is admitted while nothing is exhausted (so a
    batch always takes its first split, and may end one split beyond a limit)."""

    def __init__(self, limits: Limits | None) -> None:
        self.limits = limits
        self.files = self.bytes = self.rows = 0

    def admit(self, split: Split | IncrementalSplit) -> bool:
        limits = self.limits
        if limits is not None and (
            (limits.max_files is not None and self.files >= limits.max_files)
            or (limits.max_bytes is not None and self.bytes >= limits.max_bytes)
            or (limits.max_rows is not None and self.rows >= limits.max_rows)
        ):
            return False
        self.files += len(split.files)
        self.bytes += sum(f.file_size for f in split.files)
        self.rows += split.row_count
        return True


@dataclass(frozen=True)
class StreamPartition(InputPartition):
    """One read task of a micro-batch: ``plan`` holding that task's splits."""

    plan: ReadPlan


def stream_table(options: Mapping[str, str]) -> tuple[FileStoreTable, str]:
    """The table a stream reads, with its ``scan.*`` and ``consumer*`` options on top (in
    the schema of the snapshot ``scan.*`` travels to, as Paimon's ``copy``), and the view."""
    named, view = source_view(options)
    table = source_table(named)
    given = {k: str(v) for k, v in named.items() if k.lower().startswith(_STREAM_TABLE_OPTIONS)}
    return (table.copy(given) if given else table), view


class PaimonStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """The ``paimon`` data source's stream reader (see the module docstring)."""

    def __init__(self, options: Mapping[str, str]) -> None:
        self.table, self.view = stream_table(options)
        self.limits = Limits.of({k.lower(): v for k, v in options.items()})
        self.consumer = consumer_id(self.table)
        self._start()

    def _start(self) -> None:
        """The driver-side state: the scan, recent plans, the AvailableNow target."""
        self.scan = StreamScan(self.table)
        self._plans: OrderedDict[tuple[int, bool], ReadPlan] = OrderedDict()
        self._target: int | None = None
        self._last_trigger_ms = 0

    def __getstate__(self) -> dict[str, Any]:
        """What ``read`` needs on the executors (Spark pickles the reader for them)."""
        return {"table": self.table, "view": self.view, "limits": self.limits,
                "consumer": self.consumer}  # fmt: skip

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._start()

    # ---------------------------------------------------------------- offsets

    def initialOffset(self) -> dict[str, Any]:
        """Where a new query starts (``starting_context``); a consumer not yet existing is
        created there when the stream starts with changes, so that expiry keeps them."""
        context = starting_context(self.table)
        if self.consumer is not None and not context.scan_full:
            manager = consumer_manager(self.table)
            if manager.consumer(self.consumer) is None:
                manager.reset_consumer(self.consumer, Consumer(context.snapshot_id))
        return Position(context.snapshot_id, 0, context.scan_full).offset()

    def prepareForTriggerAvailableNow(self) -> None:
        """``Trigger.AvailableNow``: read up to the snapshot latest now, then end."""
        self._target = self.table.snapshot_manager.latest_snapshot_id() or 0

    def getDefaultReadLimit(self) -> ReadLimit:
        return self.limits.default()

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        """The end of the next batch from ``start``: as many splits as ``limit`` admits
        (none is no limit for ``ReadAllAvailable``), up to the latest snapshot (the
        ``AvailableNow`` target); ``start`` itself when there is nothing to read yet.

        Raises:
            SnapshotExpired: a snapshot the stream still needs is gone.
        """
        position = Position.of(start)
        limited = not isinstance(limit, ReadAllAvailable)
        budget = _Budget(self.limits if limited else None)
        end = self._advance(position, budget)
        if end == position:
            return start
        if limited and self.limits.min_rows is not None and self._target is None:
            waited = time.time() * 1000 - self._last_trigger_ms
            if budget.rows < self.limits.min_rows and waited < (self.limits.max_delay_ms or 0):
                return start  # hold the batch back: too few rows, delay not passed
        self._last_trigger_ms = int(time.time() * 1000)
        return end.offset()

    def _advance(self, position: Position, budget: _Budget) -> Position:
        while self._target is None or position.snapshot <= self._target:
            plan = self._plan(position.snapshot, position.full)
            if plan is None:
                break
            splits = plan.splits
            while position.split < len(splits):
                if not budget.admit(splits[position.split]):
                    return position
                position = replace(position, split=position.split + 1)
            position = position.next_snapshot()
        return position

    def _plan(self, snapshot_id: int, full: bool) -> ReadPlan | None:
        """The read plan of snapshot ``snapshot_id`` (all of it when ``full``, else its
        changes); None while it is not committed. Recent plans are kept: the batch planned
        by ``latestOffset`` is planned again by ``partitions``."""
        key = (snapshot_id, full)
        if key in self._plans:
            self._plans.move_to_end(key)
            return self._plans[key]
        changes = self.scan.changes(snapshot_id, full)
        if changes is None:
            return None  # not cached: it may be committed by the next look
        plan = plan_read(self.table, None, None, splits=changes.splits, view=self.view)
        self._plans[key] = plan
        while len(self._plans) > _CACHED_PLANS:
            self._plans.popitem(last=False)
        return plan

    # --------------------------------------------------------------- planning

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[InputPartition]:
        """The read tasks of the batch ``[start, end)``: the splits in between, packed as
        Spark packs files (each task reads splits of one snapshot).

        Raises:
            SnapshotExpired: a snapshot of the batch is gone (a restarted query replaying a
                logged batch too late).
            InvalidArgument: offsets that do not belong together.
        """
        begin, stop = Position.of(start), Position.of(end)
        if (begin.snapshot, begin.split) > (stop.snapshot, stop.split):
            raise InvalidArgument(f"The batch's start {start} is after its end {end}")
        out: list[InputPartition] = []
        position = begin
        while (position.snapshot, position.split) < (stop.snapshot, stop.split):
            if position.snapshot == stop.snapshot and position.full != stop.full:
                raise InvalidArgument(
                    f"The batch from {start} to {end} reads snapshot {stop.snapshot} both "
                    "whole and for its changes"
                )
            plan = self._plan(position.snapshot, position.full)
            if plan is None:
                raise SnapshotExpired(
                    f"Snapshot {position.snapshot} of {self.table.identifier}, which the "
                    "batch reads, does not exist"
                )
            upto = stop.split if position.snapshot == stop.snapshot else len(plan.splits)
            chosen = replace(plan, splits=plan.splits[position.split : upto])
            packed = _packed(chosen, None)
            for group in pack_splits(packed.splits, packed.task_bytes, packed.open_cost):
                out.append(StreamPartition(replace(chosen, splits=group)))
            position = position.next_snapshot()
        return out

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        """The rows of one task (on an executor).

        Raises:
            SnapshotExpired: a data file of the batch is gone (its snapshot was expired
                before the batch read it).
        """
        assert isinstance(partition, StreamPartition)
        plan = partition.plan
        try:
            yield from PaimonReader(plan).read(SplitPartition(plan.splits))
        except FileNotFoundError as e:
            snapshots = sorted({s.snapshot_id for s in plan.splits if s.snapshot_id})
            raise SnapshotExpired(
                f"A file of snapshot {', '.join(map(str, snapshots))} of "
                f"{plan.table.identifier} is gone ({e.filename or e}): the snapshot was "
                "expired before the stream read it. Use consumer-id so that snapshots a "
                "stream still needs are not expired."
            ) from None

    # ---------------------------------------------------------------- commits

    def commit(self, end: dict[str, Any]) -> None:
        """Spark finished every batch up to ``end``: the consumer's ``nextSnapshot`` becomes
        the snapshot read next (or the one being read: a new query from the consumer reads
        it again whole), refreshing its file; nothing while a full snapshot is read."""
        if self.consumer is None:
            return
        position = Position.of(end)
        if position.full:
            return  # a consumer restarts with changes: it cannot resume a full snapshot
        consumer_manager(self.table).reset_consumer(self.consumer, Consumer(position.snapshot))

    def stop(self) -> None:
        self._plans.clear()


def source_stream_reader(options: Mapping[str, str], schema: StructType) -> PaimonStreamReader:
    """The stream reader of ``format("paimon")`` (``schema`` is the source's own)."""
    return PaimonStreamReader(options)

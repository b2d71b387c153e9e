"""Partition expiry: Paimon 2.0's ``NormalPartitionExpire`` with its two strategies.

``partition.expiration-time`` is the lifetime; a partition expires when its time is before
now (local wall clock) minus that:

* ``values-time`` (default): the time in the partition values (``format/partition_time``);
  a partition whose values do not parse, or hold a null, never expires this way (Paimon
  logs a warning and keeps it).
* ``update-time``: the creation time of the newest file of the partition
  (``PartitionEntry.lastFileCreationTime``, over every manifest entry of the latest
  snapshot, as Java folds them).

The expired partitions are sorted by their values joined with ``,``, at most
``partition.expiration-max-num`` go, and they are dropped by OVERWRITE commits of
``partition.expiration-batch-size`` partitions each (one commit without it), as Java's
``FileStoreCommit.dropPartitions``: no post-commit maintenance runs. The data files stay
until snapshot expiry removes them. Planned first (``plan_partition_expiry``), then applied.

After commits (``PartitionExpire``, a post-commit hook of ``FileStoreTable.new_commit``):
Paimon's committer (``TableCommitImpl``) owns one ``NormalPartitionExpire``, built when the
committer is opened, and runs it after each of its commits when the check interval
(``partition.expiration-check-interval``, default 1 h) has passed since its last check, when the
interval is zero, or, with ``end-input.check-partition-expire``, after a batch commit. The last
check lives in that object only, never on disk: it starts at a random point up to one interval
before the committer opened (so that short streaming jobs still expire), and a fresh committer,
as every batch INSERT opens, checks only under the zero interval or ``end-input`` rule.
``write-only`` tables and tables without ``partition.expiration-time`` or partition keys have
none. Malformed options fail opening the committer (Paimon parses them in ``newCommit``), so
nothing is committed; a failing expiry is logged: the commit itself has succeeded.

Not done: expiry after a commit that publishes no snapshot (Paimon's batch committer maintains
even then; no maintenance runs here without a new snapshot), the metastore paths
(``metastore.partitioned-table`` needs a metastore; the filesystem catalog has none) and chain
tables.
"""

from __future__ import annotations

import datetime as dt
import logging
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from paimon_core.exceptions import InvalidArgument
from paimon_core.format.manifest import FileKind
from paimon_core.format.partition_time import PartitionTimeExtractor
from paimon_core.format.paths import partition_value_string
from paimon_core.operations.commit import BATCH_COMMIT_IDENTIFIER, FileStoreCommit
from paimon_core.operations.scan import TableScan

if TYPE_CHECKING:
    from paimon_core.format.snapshot import Snapshot
    from paimon_core.table import FileStoreTable

__all__ = [
    "EXPIRATION_STRATEGIES",
    "ExpiredPartition",
    "PartitionEntry",
    "PartitionExpire",
    "expire_partitions",
    "partition_entries",
    "plan_partition_expiry",
]

logger = logging.getLogger(__name__)

EXPIRATION_STRATEGIES = ("values-time", "update-time")
EXPIRATION_TIME = "partition.expiration-time"
CHECK_INTERVAL = "partition.expiration-check-interval"
END_INPUT_CHECK = "end-input.check-partition-expire"
DEFAULT_CHECK_INTERVAL = dt.timedelta(hours=1)
Clock = Callable[[], dt.datetime]
_EPOCH = dt.datetime(1970, 1, 1)


@dataclass(frozen=True, slots=True)
class PartitionEntry:
    """Java's ``PartitionEntry``: the partition's files folded over ADD (+1) and DELETE (-1)
    entries; ``last_file_creation`` is the newest creation time of any entry (raw
    timestamp-millis: Java's local wall clock as if UTC; None when no file has one)."""

    partition: bytes
    record_count: int
    file_size: int
    file_count: int
    last_file_creation: int | None


@dataclass(frozen=True, slots=True)
class ExpiredPartition:
    """A partition to drop: its spec as Paimon prints it (strings, partition-key order) and
    its typed values (what the drop matches on)."""

    spec: dict[str, str]
    values: dict[str, Any]
    partition: bytes


def partition_entries(table: FileStoreTable) -> list[PartitionEntry]:
    """The partitions of the latest snapshot that hold files (Java's
    ``FileStoreScan.readPartitionEntries``)."""
    snapshot = table.snapshot_manager.latest_snapshot()
    if snapshot is None:
        return []
    scan = TableScan(table)
    folded: dict[bytes, list[Any]] = {}
    lists = (snapshot.base_manifest_list, snapshot.delta_manifest_list)
    for entry in scan.read_all_entries(lists):
        step = 1 if entry.kind == FileKind.ADD else -1
        created = entry.file.creation_time_millis
        acc = folded.setdefault(entry.partition, [0, 0, 0, None])
        acc[0] += step * entry.file.row_count
        acc[1] += step * entry.file.file_size
        acc[2] += step
        if created is not None and (acc[3] is None or created > acc[3]):
            acc[3] = created
    return [PartitionEntry(p, *acc) for p, acc in folded.items() if acc[2] > 0]


def plan_partition_expiry(
    table: FileStoreTable, *, now: dt.datetime | None = None
) -> list[ExpiredPartition]:
    """The partitions the table's options expire now (nothing is changed).

    Raises:
        InvalidArgument: no ``partition.expiration-time`` or an unpartitioned table, an
            unknown strategy, or a formatter Java would not compile.
        UnsupportedFeature: a formatter using pattern letters this implementation lacks.
    """
    options = table.options
    expiration = options.get_duration("partition.expiration-time")
    keys = list(table.schema.partition_keys)
    if expiration is None or not keys:
        raise InvalidArgument(
            "Both the partition expiration time and partition field can not be null."
        )
    strategy = options.get_str("partition.expiration-strategy", "values-time")
    if strategy not in EXPIRATION_STRATEGIES:
        raise InvalidArgument(f"Unknown partitionExpireStrategy: {strategy}")
    extractor = PartitionTimeExtractor(
        options.get_str("partition.timestamp-pattern"),
        options.get_str("partition.timestamp-formatter"),
    )
    max_num = options.get_int("partition.expiration-max-num", 100)
    assert max_num is not None
    default_name = options.partition_default_name
    expire_before = (now or dt.datetime.now()) - expiration
    scan = TableScan(table)
    types = [f.type for f in table.schema.partition_fields]
    candidates: list[tuple[str, ExpiredPartition]] = []
    for entry in partition_entries(table):
        values = scan.partition_values(entry.partition)
        texts = [partition_value_string(v, t) for v, t in zip(values, types)]
        if strategy == "values-time":
            expired = _values_expired(extractor, keys, texts, expire_before)
        else:
            expired = _update_expired(entry, keys, texts, expire_before)
        if not expired:
            continue
        strings = [default_name if t is None else t for t in texts]
        spec = dict(zip(keys, strings))
        candidates.append(
            (",".join(strings), ExpiredPartition(spec, dict(zip(keys, values)), entry.partition))
        )
    candidates.sort(key=lambda c: c[0])
    return [c[1] for c in candidates[: max(max_num, 0)]]


def _values_expired(
    extractor: PartitionTimeExtractor,
    keys: Sequence[str],
    texts: Sequence[str | None],
    expire_before: dt.datetime,
) -> bool:
    try:
        return expire_before > extractor.extract(keys, texts)
    except ValueError as err:
        logger.warning(
            "Can't extract datetime from partition %s (%s): it is not expired. Use the "
            "'update-time' partition.expiration-strategy for partitions without a time.",
            ",".join(f"{k}:{v}" for k, v in zip(keys, texts)),
            err,
        )
        return False


def _update_expired(
    entry: PartitionEntry, keys: Sequence[str], texts: Sequence[str | None], before: dt.datetime
) -> bool:
    if entry.last_file_creation is None:  # not Java's files: no update time to go by
        logger.warning(
            "Partition %s has no file creation time: it is not expired",
            ",".join(f"{k}:{v}" for k, v in zip(keys, texts)),
        )
        return False
    return (before - _EPOCH) // dt.timedelta(milliseconds=1) > entry.last_file_creation


def expire_partitions(
    table: FileStoreTable, *, now: dt.datetime | None = None, commit_user: str | None = None
) -> list[dict[str, str]]:
    """Drop the expired partitions (``plan_partition_expiry``); returns their specs.
    ``commit_user`` writes the drops (the committer's own after a commit, as Paimon's).

    Raises:
        InvalidArgument, UnsupportedFeature: as ``plan_partition_expiry``; nothing changed.
        CommitConflict: a drop could not be committed (earlier batches stay dropped).
    """
    planned = plan_partition_expiry(table, now=now)
    if not planned:
        return []
    batch = table.options.get_int("partition.expiration-batch-size") or 0
    size = batch if 0 < batch < len(planned) else len(planned)
    committer = FileStoreCommit(table, commit_user)
    for start in range(0, len(planned), size):
        committer.truncate_partitions([p.values for p in planned[start : start + size]])
    logger.info("Expired partitions: %s", [p.spec for p in planned])
    return [p.spec for p in planned]


class PartitionExpire:
    """The partition expiry one committer runs after its commits (Paimon's
    ``NormalPartitionExpire.expire(commitIdentifier)``): see the module docstring.

    ``clock`` is the local wall clock (Java's ``LocalDateTime.now()``), ``rng`` draws the
    initial offset of the last check; both are replaceable for tests.
    """

    def __init__(
        self,
        table: FileStoreTable,
        clock: Clock = dt.datetime.now,
        rng: random.Random | None = None,
    ) -> None:
        options = table.options
        self.interval = options.get_duration(CHECK_INTERVAL, DEFAULT_CHECK_INTERVAL)
        assert self.interval is not None
        self.end_input_check = options.get_bool(END_INPUT_CHECK, False)
        self._clock = clock
        seconds = int(self.interval.total_seconds())  # Java: toMillis() / 1000
        offset = (rng or random).randrange(seconds) if seconds > 0 else 0
        self.last_check = clock() - dt.timedelta(seconds=offset)

    @classmethod
    def of(
        cls, table: FileStoreTable, clock: Clock = dt.datetime.now, rng: random.Random | None = None
    ) -> PartitionExpire | None:
        """The committer's expiry (``AbstractFileStore.newPartitionExpire``): None for a
        ``write-only`` table, or without ``partition.expiration-time`` or partition keys.

        Raises:
            InvalidArgument: a malformed expiry option (the commit must not start).
        """
        options = table.options
        if options.write_only or not table.schema.partition_keys:
            return None
        if options.get_duration(EXPIRATION_TIME) is None:
            return None
        strategy = options.get_str("partition.expiration-strategy", "values-time")
        if strategy not in EXPIRATION_STRATEGIES:
            raise InvalidArgument(f"Unknown partitionExpireStrategy: {strategy}")
        options.get_int("partition.expiration-max-num", 100)
        options.get_int("partition.expiration-batch-size")
        return cls(table, clock, rng)

    def __call__(self, table: FileStoreTable, snapshot: Snapshot) -> None:
        now = self._clock()
        due = (
            not self.interval
            or now > self.last_check + self.interval
            or (self.end_input_check and snapshot.commit_identifier == BATCH_COMMIT_IDENTIFIER)
        )
        if not due:
            return
        try:
            expire_partitions(table, now=now, commit_user=snapshot.commit_user)
        except Exception:
            logger.exception(
                "Partition expiry after the commit of snapshot %d failed", snapshot.snapshot_id
            )
            return
        self.last_check = now

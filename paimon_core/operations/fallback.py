"""``scan.fallback-branch`` and ``scan.primary-branch``: a batch read takes each partition from
one of two branches (latest Paimon's ``FallbackReadFileStoreTable``).

Typical use: a streaming job writes today's partitions into branch ``stream`` while a batch
job writes corrected days into ``main``; ``main`` with ``scan.fallback-branch = stream``
reads every day, each from ``main`` when ``main`` has it. ``scan.primary-branch = b`` is the
other way round: the partitions ``b`` has come from ``b``, the rest from the table's own
branch. Writes always go to the table's own branch. ``scan.fallback-branch`` wins when both
are set (setting both is refused: ``format.schema.validate_fallback_branch``).

The read (``plan_branches``): the partitions the first branch lists are complete there (by
the partition predicates only, never file statistics); the first branch is read with the
whole predicate, the second branch only in the partitions it lists and the first does not.
Each side is read in its own schema and options (bucket, merge engine, file format, ...); the
columns must match in number and type, nullability aside.

The other branch gets the table's dynamic options as Paimon's ``rewriteOtherOptions`` passes
them (``FallbackReadFileStoreTable.copy``): all of them unchanged, except ``branch`` (it
stays the other branch), ``bucket`` (dropped: the other branch keeps its own) and
``scan.snapshot-id``, mapped by time: the other branch reads its latest snapshot committed at
or before the travelled-to snapshot, else its snapshot 1. So ``scan.tag-name``,
``scan.version`` (Spark's ``VERSION AS OF``: a tag of that name, then a snapshot id of the
other branch itself), ``scan.timestamp[-millis]`` (``TIMESTAMP AS OF``), ``scan.watermark``
and the incremental options (``incremental-between`` names the other branch's own snapshots
or tags) are resolved in the other branch; when they do not resolve there (a tag the other
branch lacks, no snapshot that old), the read fails, as in Paimon, and the error names the
branch. Without time travel each branch reads its latest snapshot.

Where it applies, as in Paimon: batch reads of the rows (SQL, ``format("paimon")``,
``FileStoreTable.to_arrow``), incremental reads, ``$audit_log``, ``$binlog`` and ``$ro`` (each
side read its way), and partition listings (``$partitions``, ``sys.partitions``, SHOW
PARTITIONS, ``sys.max_pt``). Not: streaming reads, ``$files``, ``$buckets`` and the other
metadata tables, writes and maintenance. A fallback branch that does not exist is logged and
read without, as Paimon does. Not done: ``scan.fallback-branch.read-fail-fast`` (reads here
fail on any error), chain tables (``scan.fallback-snapshot-branch``/``-delta-branch``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from paimon_core.exceptions import InvalidArgument, SnapshotNotFound, TableNotExist, TagNotFound
from paimon_core.operations.time_travel import SCAN_SNAPSHOT_ID, snapshot_by_id, travel_table

if TYPE_CHECKING:
    from paimon_core.format.manifest import ManifestEntry
    from paimon_core.format.snapshot import Snapshot
    from paimon_core.table import FileStoreTable

__all__ = [
    "FALLBACK_BRANCH",
    "PRIMARY_BRANCH",
    "BranchPlan",
    "BranchSide",
    "FallbackRead",
    "branch_entries",
    "fallback_read",
    "other_snapshot_id",
    "plan_branches",
    "rewrite_other_options",
]

logger = logging.getLogger(__name__)

FALLBACK_BRANCH = "scan.fallback-branch"
PRIMARY_BRANCH = "scan.primary-branch"
FIRST_SNAPSHOT_ID = 1


class Partitioned(Protocol):
    """A split, an incremental split or a manifest entry: what belongs to one partition."""

    @property
    def partition(self) -> bytes: ...


S = TypeVar("S", bound=Partitioned)
T = TypeVar("T")


@dataclass(frozen=True)
class FallbackRead:
    """A table read together with another branch: ``wrapped`` (the table's own branch, with
    its dynamic options) and ``other`` (the other branch's latest schema with the rewritten
    options); ``wrapped_first`` for ``scan.fallback-branch``, False for
    ``scan.primary-branch``."""

    wrapped: FileStoreTable
    other: FileStoreTable
    wrapped_first: bool

    @property
    def key(self) -> str:
        return FALLBACK_BRANCH if self.wrapped_first else PRIMARY_BRANCH

    def travelled_other(self) -> tuple[FileStoreTable, Snapshot | None]:
        """The other branch in the schema of the snapshot its options travel to, and that
        snapshot (its latest without time travel).

        Raises:
            SnapshotNotFound, TagNotFound, InvalidArgument: the options do not resolve in the
                other branch; the message names it.
        """
        return self.in_other(lambda: travel_table(self.other))

    def in_other(self, action: Callable[[], T]) -> T:
        """``action`` on the other branch, its errors naming the branch (the options that
        failed there are the table's, so the branch is what the user needs to hear)."""
        try:
            return action()
        except (SnapshotNotFound, TagNotFound, InvalidArgument) as e:
            raise type(e)(
                f"{e} (in branch '{self.other.branch}', which '{self.key}' reads with the "
                "table's scan options)"
            ) from None


def fallback_read(table: FileStoreTable) -> FallbackRead | None:
    """The two-branch read of ``table`` (None: neither option set, the option names the
    table's own branch, or a branch that does not exist, which Paimon logs and reads
    without).

    Raises:
        InvalidArgument: the branches' columns differ in number or type (nullability aside).
    """
    options = table.options
    name = options.get_str(FALLBACK_BRANCH)
    wrapped_first = True
    if name is None or not name.strip():
        name, wrapped_first = options.get_str(PRIMARY_BRANCH), False
        if name is None or not name.strip():
            return None
    if name == table.branch:
        return None
    try:
        latest = table.switch_to_branch(name)
    except TableNotExist:
        kind = "Fallback" if wrapped_first else "Primary"
        logger.error("%s branch %s not found for table %s", kind, name, table.path)
        return None
    other = latest.copy(rewrite_other_options(table, latest, table.dynamic_options))
    read = FallbackRead(table, other, wrapped_first)
    _check_row_types(read)
    return read


def rewrite_other_options(
    wrapped: FileStoreTable, other: FileStoreTable, options: dict[str, str]
) -> dict[str, str]:
    """Paimon's ``rewriteOtherOptions``: the other branch's dynamic options from the table's.

    Raises:
        SnapshotNotFound: ``scan.snapshot-id`` names no snapshot of the table's branch.
        InvalidArgument: ``scan.snapshot-id`` is not a number.
    """
    result = dict(options)
    if "branch" in options:
        result["branch"] = other.branch
    text = options.get(SCAN_SNAPSHOT_ID)
    if text is not None:
        try:
            snapshot_id = int(text.strip())
        except ValueError:
            raise InvalidArgument(
                f"Could not parse value '{text}' for key '{SCAN_SNAPSHOT_ID}'"
            ) from None
        millis = snapshot_by_id(wrapped, snapshot_id).time_millis
        result[SCAN_SNAPSHOT_ID] = str(other_snapshot_id(other, millis))
    result.pop("bucket", None)
    return result


def other_snapshot_id(other: FileStoreTable, millis: int) -> int:
    """The other branch's snapshot read with a snapshot of the table committed at
    ``millis``: its latest committed at or before, else its first."""
    found = other.snapshot_manager.earlier_or_equal_time_millis(millis)
    return FIRST_SNAPSHOT_ID if found is None else found.snapshot_id


def _check_row_types(read: FallbackRead) -> None:
    mine, theirs = read.wrapped.schema.fields, read.other.schema.fields
    if len(mine) == len(theirs) and all(
        a.type.copy(True) == b.type.copy(True) for a, b in zip(mine, theirs)
    ):
        return
    main, other = read.wrapped.branch, read.other.branch
    raise InvalidArgument(
        f"Branch {main} and {other} does not have the same row type. This validation is "
        f"triggered because '{read.key}' is configured to '{other}'. The fallback branch must "
        f"have the same schema as the main branch. Row type of branch {main} is "
        f"{_row_type(read.wrapped)}. Row type of branch {other} is {_row_type(read.other)}."
    )


def _row_type(table: FileStoreTable) -> str:
    return "ROW<" + ", ".join(f"`{f.name}` {f.type}" for f in table.schema.fields) + ">"


@dataclass(frozen=True)
class BranchSide(Generic[S]):
    """What one branch contributes: its table (in its snapshot's schema), the snapshot and
    the splits read from it."""

    table: FileStoreTable
    snapshot: Snapshot | None
    splits: list[S] = field(default_factory=list)


@dataclass(frozen=True)
class BranchPlan(Generic[S]):
    """The two sides of a two-branch read: the table's own branch and the other one."""

    wrapped: BranchSide[S]
    other: BranchSide[S]


Scan = Callable[["FileStoreTable", "Snapshot | None"], Sequence[S]]
"""The splits a read takes from a branch (its table and snapshot): Paimon's scan creator."""
Listing = Callable[["FileStoreTable", "Snapshot | None"], set[bytes]]
"""The partitions a read of a branch lists (partition predicates only)."""


def plan_branches(
    read: FallbackRead, snapshot: Snapshot | None, scan: Scan[S], listing: Listing
) -> BranchPlan[S]:
    """``FallbackReadScan.plan``: all splits of the first branch, and the second branch's in
    the partitions it lists that the first does not. ``snapshot`` is the table's own
    (already travelled-to) snapshot; the other branch resolves its own.

    Raises:
        SnapshotNotFound, TagNotFound, InvalidArgument: the time travel options do not
            resolve in the other branch.
    """
    other, other_snapshot = read.travelled_other()
    sides = {True: (read.wrapped, snapshot), False: (other, other_snapshot)}
    first_table, first_snapshot = sides[read.wrapped_first]
    second_table, second_snapshot = sides[not read.wrapped_first]

    def on(table: FileStoreTable, action: Callable[[], T]) -> T:
        return action() if table is read.wrapped else read.in_other(action)

    complete = on(first_table, lambda: listing(first_table, first_snapshot))
    first = list(on(first_table, lambda: scan(first_table, first_snapshot)))
    remaining = on(second_table, lambda: listing(second_table, second_snapshot)) - complete
    second: list[S] = []
    if remaining:
        planned = on(second_table, lambda: scan(second_table, second_snapshot))
        second = [s for s in planned if s.partition in remaining]
    mine, theirs = (first, second) if read.wrapped_first else (second, first)
    return BranchPlan(
        BranchSide(read.wrapped, snapshot, mine), BranchSide(other, other_snapshot, theirs)
    )


def branch_entries(
    table: FileStoreTable, snapshot: Snapshot | None, read: FallbackRead | None
) -> list[BranchSide[ManifestEntry]]:
    """The live manifest entries a partition listing of ``table`` at ``snapshot`` folds, per
    branch (``FallbackReadScan.listPartitionEntries``): the first branch's, then the
    second's of the partitions the first lacks; just the table's without ``read``."""

    def entries(t: FileStoreTable, at: Snapshot | None) -> list[ManifestEntry]:
        return [] if at is None else t.new_scan().read_entries(at)

    if read is None:
        return [BranchSide(table, snapshot, entries(table, snapshot))]
    listed: dict[int, list[ManifestEntry]] = {}

    def scan(t: FileStoreTable, at: Snapshot | None) -> list[ManifestEntry]:
        if id(t) not in listed:
            listed[id(t)] = entries(t, at)
        return listed[id(t)]

    plan = plan_branches(read, snapshot, scan, lambda t, at: {e.partition for e in scan(t, at)})
    return [plan.wrapped, plan.other]

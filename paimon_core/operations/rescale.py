"""Rescaling: rewriting partitions with another bucket number, as Paimon 2.0's Spark
``RescaleProcedure``.

The rows of the selected partitions in the latest snapshot (merged, as a read sees them;
level-0 files included, as Java's ``SnapshotReader``) are written again by a table whose
``bucket`` is the new number (the table's own when none is given) and committed as one
OVERWRITE of those partitions (dynamic partition overwrite; the whole table when it is
unpartitioned). The table's schema keeps its ``bucket`` option, as in Paimon: set it first
(``ALTER TABLE ... SET TBLPROPERTIES ('bucket' = 'N')``) so that later writes agree with the
rescaled partitions, or a writer refuses the partition.

A commit that another user made to those partitions after the snapshot read (Paimon's
``commit.strict-mode.last-safe-snapshot`` set to it) fails the rescale instead of being
overwritten; the files written are deleted then. A partition whose rows are all deleted is
left as it is (nothing to write, as in Java). Postpone-bucket files (bucket -2) are not read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from paimon_core.exceptions import InvalidArgument
from paimon_core.format.commit_message import CommitMessage
from paimon_core.format.paths import POSTPONE_BUCKET
from paimon_core.operations.commit import STRICT_MODE_LAST_SAFE_SNAPSHOT
from paimon_core.operations.read import TableRead
from paimon_core.operations.scan import Predicate, Split, TableScan, value_matches

if TYPE_CHECKING:
    from paimon_core.table import FileStoreTable

__all__ = ["PartitionRewrite", "RescaleTask", "plan_rescale", "rescale", "rescaled_table"]

Runner = Callable[[Callable[["RescaleTask"], list[CommitMessage]], Sequence["RescaleTask"]], list]


@dataclass(frozen=True, slots=True)
class RescaleTask:
    """One partition to rewrite: its splits in the planned snapshot (picklable)."""

    partition: bytes
    splits: tuple[Split, ...]


@dataclass(frozen=True)
class PartitionRewrite:
    """A picklable ``task -> messages`` function (what a Spark task runs): read the
    partition with ``source``, write it with ``target`` (the new bucket number)."""

    source: FileStoreTable
    target: FileStoreTable

    def __call__(self, task: RescaleTask) -> list[CommitMessage]:
        rows = TableRead(self.source).to_arrow(list(task.splits))
        if not rows.num_rows:
            return []
        write = self.target.new_write(overwrite=True)
        try:
            write.write_arrow(rows)
            return write.prepare_commit()
        finally:
            write.close()


def _local_runner(
    func: Callable[[RescaleTask], list[CommitMessage]], tasks: Sequence[RescaleTask]
) -> list:
    return [func(t) for t in tasks]


def rescaled_table(table: FileStoreTable, bucket_num: int | None) -> FileStoreTable:
    """``table`` with ``bucket`` = ``bucket_num`` in its schema's options (same schema id),
    as Java's ``table.copy(table.schema().copy(bucketOptions))``."""
    if bucket_num is None:
        return table
    options = {**table.schema.options, **table.dynamic_options, "bucket": str(bucket_num)}
    schema = replace(table.schema, options=options)
    dynamic = {**table.dynamic_options, "bucket": str(bucket_num)}
    return type(table)(table.file_io, table.path, schema, table.identifier, dynamic)


def plan_rescale(
    table: FileStoreTable,
    *,
    partitions: Sequence[Mapping[str, Any]] | None = None,
    predicate: Sequence[Predicate] | None = None,
) -> tuple[int, list[RescaleTask]]:
    """The latest snapshot id and one task per selected partition with files.

    Raises:
        InvalidArgument: the table has no snapshot, or a filter names a non-partition column.
    """
    keys = list(table.schema.partition_keys)
    for column in [c for s in partitions or () for c in s] + [p[0] for p in predicate or ()]:
        if column not in keys:
            raise InvalidArgument(
                f"Only partition columns can select what to rescale: '{column}' is not one of "
                f"{keys}"
            )
    snapshot = table.snapshot_manager.latest_snapshot()
    if snapshot is None:
        name = table.identifier or table.path
        raise InvalidArgument(f"Table {name} has no snapshot, no need to rescale.")
    splits = TableScan(table).plan(snapshot, predicate=list(predicate or ()), all_levels=True)
    groups: dict[bytes, list[Split]] = {}
    for split in splits:
        if split.bucket < 0:  # onlyReadRealBuckets: postpone files stay
            continue
        if partitions:
            values = dict(zip(keys, split.partition_values))
            if not any(
                all(value_matches("=", v, values[k]) for k, v in spec.items())
                for spec in partitions
            ):
                continue
        groups.setdefault(split.partition, []).append(split)
    tasks = [RescaleTask(p, tuple(s)) for p, s in sorted(groups.items())]
    return snapshot.snapshot_id, tasks


def rescale(
    table: FileStoreTable,
    *,
    bucket_num: int | None = None,
    partitions: Sequence[Mapping[str, Any]] | None = None,
    predicate: Sequence[Predicate] | None = None,
    runner: Runner = _local_runner,
) -> int | None:
    """Rewrite the selected partitions with ``bucket_num`` buckets (default: the table's).

    Returns:
        The OVERWRITE snapshot id; None when no partition had files.

    Raises:
        InvalidArgument: no snapshot, a bad filter, no ``bucket_num`` for a postpone-bucket
            table, or a bucket number the writer refuses (nothing is written then).
        UnsupportedFeature: a table layout this writer cannot write.
        CommitConflict: another user committed to those partitions meanwhile (the files
            written are deleted; the table is unchanged).
    """
    snapshot_id, tasks = plan_rescale(table, partitions=partitions, predicate=predicate)
    if bucket_num is None and table.options.bucket == POSTPONE_BUCKET:
        raise InvalidArgument(
            "When rescaling postpone bucket tables, you must provide the resulting bucket number."
        )
    safe = table.copy({STRICT_MODE_LAST_SAFE_SNAPSHOT: str(snapshot_id)}, time_travel=False)
    target = rescaled_table(safe, bucket_num)
    target.new_write(overwrite=True).close()  # a bucket number the writer refuses fails here
    if not tasks:
        return None
    messages = [m for batch in runner(PartitionRewrite(safe, target), tasks) for m in batch]
    committer = target.new_commit()
    try:
        return committer.overwrite(messages, dynamic=bool(table.schema.partition_keys))
    except BaseException:
        committer.abort(messages)
        raise

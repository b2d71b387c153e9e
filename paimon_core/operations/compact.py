"""Compaction of one (partition, bucket): Paimon's ``MergeTreeCompactManager`` (primary-key
tables, universal compaction or full) and ``BucketedAppendCompactManager`` (append tables).

The work is split so that it distributes: ``plan_compaction`` (driver) lists the buckets and
their live files as ``CompactTask`` values; ``compact_bucket`` (any executor) picks the files
by Paimon's rules, rewrites them and returns one ``CommitMessage`` whose ``deleted_files`` are
the compacted inputs (compactBefore) and ``new_files`` the outputs (compactAfter); the driver
publishes all messages in one COMPACT snapshot (``FileStoreCommit.commit_compact``). Inputs
stay on disk until snapshot expiry removes them, so a failed or conflicting compaction loses
nothing: the committer refuses to delete a file another commit has already removed.

Changelog: with ``changelog-producer`` = ``full-compaction`` a compaction into the highest
level also writes the changes it makes (``merge.full_changelog``, Java's
``FullChangelogMergeTreeCompactRewriter``) as changelog files (``TableWrite.write_changelog``)
in the message's ``changelog_files``, which the COMPACT snapshot lists in its changelog
manifest list. Another producer's compaction (``lookup``) plugs in the same way: it decides
in ``_compact_key_values`` which changes to emit and hands their rows to ``write_changelog``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from paimon_core.exceptions import InvalidArgument, UnsupportedFeature
from paimon_core.format.commit_message import CommitMessage
from paimon_core.operations.commit import FileStoreCommit
from paimon_core.operations.merge.base import VALUE_KIND, drop_retractions
from paimon_core.operations.merge.full_changelog import full_compaction_changelog
from paimon_core.operations.read import TableRead
from paimon_core.operations.scan import Predicate, Split, TableScan, value_matches
from paimon_core.operations.write import TableWrite

if TYPE_CHECKING:
    from paimon_core.format.manifest import DataFileMeta
    from paimon_core.format.snapshot import Snapshot
    from paimon_core.table import FileStoreTable

FULL_COMPACT_MIN_FILE = 3  # BucketedAppendCompactManager.FULL_COMPACT_MIN_FILE


# ------------------------------------------------------------------------- sorted runs


@dataclass(frozen=True, slots=True)
class LevelSortedRun:
    """A sorted run and its level: one level-0 file, or all files of a level above 0."""

    level: int
    files: tuple[DataFileMeta, ...]

    @property
    def total_size(self) -> int:
        return sum(f.file_size for f in self.files)


@dataclass(frozen=True, slots=True)
class CompactUnit:
    """The files one compaction rewrites into ``output_level`` (Java's ``CompactUnit``)."""

    output_level: int
    files: tuple[DataFileMeta, ...]

    @classmethod
    def of_runs(cls, output_level: int, runs: Sequence[LevelSortedRun]) -> CompactUnit:
        return cls(output_level, tuple(f for r in runs for f in r.files))


def level_sorted_runs(files: Iterable[DataFileMeta]) -> list[LevelSortedRun]:
    """Java's ``Levels.levelSortedRuns``: each level-0 file newest first (max sequence
    descending, then min sequence, then name), then one run per non-empty level above 0."""
    files = list(files)
    level0 = sorted(
        (f for f in files if f.level == 0),
        key=lambda f: (-f.max_sequence_number, f.min_sequence_number, f.file_name),
    )
    runs = [LevelSortedRun(0, (f,)) for f in level0]
    for level in sorted({f.level for f in files if f.level > 0}):
        members = sorted((f for f in files if f.level == level), key=lambda f: f.min_key)
        runs.append(LevelSortedRun(level, tuple(members)))
    return runs


@dataclass(frozen=True, slots=True)
class UniversalCompaction:
    """Paimon's ``UniversalCompaction.pick`` (RocksDB's universal style), without off-peak
    hours and early full compaction: size amplification, then size ratio, then run count."""

    max_size_amp: int = 200
    size_ratio: int = 1
    num_run_compaction_trigger: int = 5

    def pick(self, num_levels: int, runs: Sequence[LevelSortedRun]) -> CompactUnit | None:
        max_level = num_levels - 1
        unit = self.pick_for_size_amp(max_level, runs)
        if unit is None:
            unit = self.pick_for_size_ratio(max_level, runs)
        if unit is None and len(runs) > self.num_run_compaction_trigger:
            candidates = len(runs) - self.num_run_compaction_trigger + 1
            unit = self._pick_for_size_ratio(max_level, runs, candidates)
        return unit

    def pick_for_size_amp(
        self, max_level: int, runs: Sequence[LevelSortedRun]
    ) -> CompactUnit | None:
        if len(runs) < self.num_run_compaction_trigger:
            return None
        candidate = sum(r.total_size for r in runs[:-1])
        earliest = runs[-1].total_size
        if candidate * 100 > self.max_size_amp * earliest:
            return CompactUnit.of_runs(max_level, runs)
        return None

    def pick_for_size_ratio(
        self, max_level: int, runs: Sequence[LevelSortedRun]
    ) -> CompactUnit | None:
        if len(runs) < self.num_run_compaction_trigger:
            return None
        return self._pick_for_size_ratio(max_level, runs, 1)

    def _pick_for_size_ratio(
        self, max_level: int, runs: Sequence[LevelSortedRun], count: int
    ) -> CompactUnit | None:
        size = sum(r.total_size for r in runs[:count])
        triggered = count > 1
        for nxt in runs[count:]:
            if size * (100.0 + self.size_ratio) / 100.0 < nxt.total_size:
                if not triggered or nxt.level > 1:
                    break
            size += nxt.total_size
            count += 1
            triggered = True
        return self.create_unit(runs, max_level, count) if triggered else None

    @staticmethod
    def create_unit(runs: Sequence[LevelSortedRun], max_level: int, count: int) -> CompactUnit:
        """The first ``count`` runs, written one level below the next run (never level 0)."""
        if count == len(runs):
            output = max_level
        else:
            output = max(0, runs[count].level - 1)
        if output == 0:
            for nxt in runs[count:]:
                count += 1
                if nxt.level != 0:
                    output = nxt.level
                    break
        if count == len(runs):
            output = max_level
        return CompactUnit.of_runs(output, runs[:count])


def pick_full_compaction(num_levels: int, runs: Sequence[LevelSortedRun]) -> CompactUnit | None:
    """Java's ``CompactStrategy.pickFullCompaction``: everything to the max level, unless
    the bucket already is a single run at the max level."""
    max_level = num_levels - 1
    if not runs or (len(runs) == 1 and runs[0].level == max_level):
        return None
    return CompactUnit.of_runs(max_level, runs)


def pick_append_files(
    files: Sequence[DataFileMeta], min_file_num: int, target_file_size: int
) -> list[DataFileMeta] | None:
    """``BucketedAppendCompactManager.pickCompactBefore``: a window of files in sequence
    order, slid right while it holds twice the target size, taken once it has
    ``compaction.min.file-num`` files."""
    total = 0
    candidates: list[DataFileMeta] = []
    for f in sorted(files, key=lambda f: f.min_sequence_number):
        candidates.append(f)
        total += f.file_size
        if len(candidates) >= min_file_num:
            return candidates
        if total >= target_file_size * 2:
            total -= candidates.pop(0).file_size
    return None


def pick_append_full(
    files: Sequence[DataFileMeta], compaction_file_size: int
) -> list[DataFileMeta] | None:
    """``BucketedAppendCompactManager.FullCompactTask``: drop the leading large files, then
    rewrite the rest when small files outnumber large ones and there are at least three."""
    rest = sorted(files, key=lambda f: f.min_sequence_number)
    while rest and rest[0].file_size >= compaction_file_size:
        rest.pop(0)
    small = sum(1 for f in rest if f.file_size < compaction_file_size)
    if small > len(rest) - small and len(rest) >= FULL_COMPACT_MIN_FILE:
        return rest
    return None


# ------------------------------------------------------------------------------ tasks


@dataclass(frozen=True, slots=True)
class CompactOptions:
    """The compaction options of a table (``CoreOptions``), resolved once on the driver."""

    full: bool
    num_levels: int
    universal: UniversalCompaction
    target_file_size: int
    compaction_file_size: int
    min_file_num: int

    @classmethod
    def of(cls, table: FileStoreTable, full: bool) -> CompactOptions:
        options = table.options
        trigger = options.get_int("num-sorted-run.compaction-trigger", 5)
        assert trigger is not None
        num_levels = options.get_int("num-levels", trigger + 1)
        assert num_levels is not None
        target = options.target_file_size(table.is_primary_key_table)
        ratio = float(options.get_str("compaction.small-file-ratio", "0.7") or 0.7)
        return cls(
            full=full,
            num_levels=num_levels,
            universal=UniversalCompaction(
                options.get_int("compaction.max-size-amplification-percent", 200) or 0,
                options.get_int("compaction.size-ratio", 1) or 0,
                trigger,
            ),
            target_file_size=target,
            compaction_file_size=int(target * ratio),
            min_file_num=options.get_int("compaction.min.file-num", 5) or 5,
        )


@dataclass(frozen=True, slots=True)
class CompactTask:
    """One bucket to compact: its live files in the planned snapshot (picklable)."""

    partition: bytes
    partition_values: tuple
    bucket: int
    total_buckets: int
    files: tuple[DataFileMeta, ...]


def _matches_spec(values: Mapping[str, Any], spec: Mapping[str, Any]) -> bool:
    return all(value_matches("=", literal, values[k]) for k, literal in spec.items())


def plan_compaction(
    table: FileStoreTable,
    snapshot: Snapshot | None = None,
    *,
    partitions: Sequence[Mapping[str, Any]] | None = None,
    predicate: Sequence[Predicate] | None = None,
) -> list[CompactTask]:
    """The buckets of ``snapshot`` (default latest) in the partitions matching any spec of
    ``partitions`` and every partition predicate, one task each.

    Raises:
        InvalidArgument: a spec or predicate names a non-partition column.
        UnsupportedFeature: tables this compaction cannot rewrite.
    """
    keys = list(table.schema.partition_keys)
    for column in [c for s in partitions or () for c in s] + [p[0] for p in predicate or ()]:
        if column not in keys:
            raise InvalidArgument(
                f"Only partition columns can filter a compaction: '{column}' is not one of {keys}"
            )
    if table.options.bucket == -2:
        raise UnsupportedFeature("Compacting postpone-bucket tables ('bucket' = '-2')")
    if snapshot is None:
        snapshot = table.snapshot_manager.latest_snapshot()
    if snapshot is None:
        return []
    scan = TableScan(table)
    groups: dict[tuple[bytes, int], list] = {}
    for e in scan.read_entries(snapshot, predicate=list(predicate or ())):
        groups.setdefault((e.partition, e.bucket), []).append(e)
    tasks = []
    for (partition, bucket), entries in sorted(groups.items(), key=lambda kv: kv[0]):
        values = scan.partition_values(partition)
        if partitions and not any(_matches_spec(dict(zip(keys, values)), s) for s in partitions):
            continue
        files = tuple(e.file for e in entries)
        tasks.append(CompactTask(partition, values, bucket, entries[0].total_buckets, files))
    return tasks


def compact_bucket(
    table: FileStoreTable, task: CompactTask, options: CompactOptions
) -> CommitMessage | None:
    """Compact one bucket by Paimon's rules; None when there is nothing to do.

    Runs anywhere (a Spark task): it reads and writes data files only; the message is
    committed by the driver. Files it wrote are deleted again when it fails.
    """
    if table.is_primary_key_table:
        return _compact_key_values(table, task, options)
    return _compact_append(table, task, options)


def _message(
    task: CompactTask,
    before: Sequence[DataFileMeta],
    after: Sequence[DataFileMeta],
    changelog: Sequence[DataFileMeta] = (),
) -> CommitMessage:
    return CommitMessage(
        task.partition,
        task.bucket,
        task.total_buckets,
        new_files=tuple(after),
        deleted_files=tuple(before),
        changelog_files=tuple(changelog),
    )


def _compact_key_values(
    table: FileStoreTable, task: CompactTask, options: CompactOptions
) -> CommitMessage | None:
    runs = level_sorted_runs(task.files)
    if options.full:
        unit = pick_full_compaction(options.num_levels, runs)
    else:
        unit = options.universal.pick(options.num_levels, runs)
    if unit is None or not unit.files:
        return None
    highest = max(f.level for f in task.files)
    max_level = options.num_levels - 1
    # FullChangelogMergeTreeCompactRewriter: what reaches the highest level yields changelog.
    changelog = (
        table.options.changelog_producer == "full-compaction" and unit.output_level == max_level
    )
    # MergeTreeCompactManager: deletes may go when nothing older lies below the output.
    drop_delete = unit.output_level != 0 and unit.output_level >= highest
    reader = TableRead(table)
    assert reader.merge is not None
    if len(unit.files) == 1:
        (f,) = unit.files
        if f.level == unit.output_level:
            return None
        if not (drop_delete and (f.delete_row_count or 0) > 0):
            # Java's upgrade: one sorted file changes level, its data untouched; into the
            # highest level, each of its added records is a +I (CHANGELOG_NO_REWRITE).
            produced: list[DataFileMeta] = []
            if changelog:
                rows = drop_retractions(reader.read_key_values(_split(task, [f])))
                produced = _write_changelog(table, task, rows, unit.output_level)
            return _message(task, [f], [replace(f, level=unit.output_level)], produced)
    if changelog:
        tables = [reader.read_key_values(_split(task, [f])) for f in unit.files]
        rows = pa.concat_tables(tables)
        top = np.repeat([f.level == max_level for f in unit.files], [t.num_rows for t in tables])
        deduplicate = None
        if table.options.changelog_row_deduplicate:
            ignored = set(table.options.changelog_row_deduplicate_ignore_fields)
            deduplicate = [n for n in table.schema.field_names if n not in ignored]
        merged, changes = full_compaction_changelog(rows, top, reader.merge, deduplicate)
    else:
        merged = reader.merge.merge(reader.read_key_values(_split(task, unit.files)))
        changes = None
    if drop_delete:
        merged = drop_retractions(merged)
    after: list[DataFileMeta] = []
    produced = []
    with TableWrite(table) as writer:
        if merged.num_rows:
            after = writer.write_compacted(
                task.partition, task.partition_values, task.bucket, merged, level=unit.output_level
            )
        if changes is not None and changes.num_rows:
            try:
                produced = writer.write_changelog(
                    task.partition,
                    task.partition_values,
                    task.bucket,
                    changes,
                    level=unit.output_level,
                )
            except BaseException:
                _delete(table, task, after)
                raise
    return _message(task, unit.files, after, produced)


def _split(task: CompactTask, files: Sequence[DataFileMeta]) -> Split:
    return Split(task.partition, task.partition_values, task.bucket, tuple(files), None)


def _write_changelog(
    table: FileStoreTable, task: CompactTask, rows: pa.Table, level: int
) -> list[DataFileMeta]:
    """``rows`` as +I changelog files of ``level`` (none when there are no rows)."""
    if not rows.num_rows:
        return []
    kinds = pa.array(np.zeros(rows.num_rows, np.int8), pa.int8())
    index = rows.schema.get_field_index(VALUE_KIND)
    rows = rows.set_column(index, pa.field(VALUE_KIND, pa.int8(), False), kinds)
    with TableWrite(table) as writer:
        return writer.write_changelog(
            task.partition, task.partition_values, task.bucket, rows, level=level
        )


def _delete(table: FileStoreTable, task: CompactTask, files: Sequence[DataFileMeta]) -> None:
    """Remove files a failed compaction wrote (they belong to no message)."""
    message = CommitMessage(task.partition, task.bucket, task.total_buckets, new_files=tuple(files))
    FileStoreCommit(table).abort([message])


def _compact_append(
    table: FileStoreTable, task: CompactTask, options: CompactOptions
) -> CommitMessage | None:
    if options.full:
        picked = pick_append_full(task.files, options.compaction_file_size)
    else:
        small = [f for f in task.files if f.file_size < options.compaction_file_size]
        picked = pick_append_files(small, options.min_file_num, options.target_file_size)
    if not picked:
        return None
    return _rewrite_append(table, task, picked)


def _rewrite_append(
    table: FileStoreTable,
    task: CompactTask,
    files: Sequence[DataFileMeta],
    sort: Callable[[pa.Table], pa.Table] | None = None,
) -> CommitMessage:
    files = sorted(files, key=lambda f: f.min_sequence_number)
    rows = TableRead(table).to_arrow([_split(task, files)])
    if sort is not None:
        rows = sort(rows)
    after: list[DataFileMeta] = []
    if rows.num_rows:
        with TableWrite(table) as writer:
            after = writer.write_compacted(
                task.partition,
                task.partition_values,
                task.bucket,
                rows,
                level=0,
                first_seq=files[0].min_sequence_number,
            )
    return _message(task, files, after)


def sort_compact_bucket(
    table: FileStoreTable, task: CompactTask, order_by: Sequence[str]
) -> CommitMessage | None:
    """Paimon's sort compaction with ``order_strategy => 'order'``: every file of the bucket
    rewritten, rows sorted by ``order_by`` (nulls first, as Spark's ascending sort)."""
    if table.is_primary_key_table:
        raise UnsupportedFeature(
            "order_strategy other than 'none' works on unaware-bucket append tables only"
        )
    if not task.files:
        return None

    def sort(rows: pa.Table) -> pa.Table:
        return rows.sort_by([(c, "ascending") for c in order_by], null_placement="at_start")

    return _rewrite_append(table, task, task.files, sort)


# ------------------------------------------------------------------------------ table


Runner = Callable[[Callable[[CompactTask], CommitMessage | None], Sequence[CompactTask]], list]


def _local_runner(
    func: Callable[[CompactTask], CommitMessage | None], tasks: Sequence[CompactTask]
) -> list:
    return [func(t) for t in tasks]


@dataclass(frozen=True)
class BucketCompaction:
    """A picklable ``task -> message`` function: what a Spark task runs."""

    table: FileStoreTable
    options: CompactOptions
    order_by: tuple[str, ...] = ()

    def __call__(self, task: CompactTask) -> CommitMessage | None:
        if self.order_by:
            return sort_compact_bucket(self.table, task, self.order_by)
        return compact_bucket(self.table, task, self.options)


def compact_table(
    table: FileStoreTable,
    *,
    full: bool = True,
    partitions: Sequence[Mapping[str, Any]] | None = None,
    predicate: Sequence[Predicate] | None = None,
    order_by: Sequence[str] = (),
    runner: Runner = _local_runner,
    commit_user: str | None = None,
) -> int | None:
    """Compact the selected buckets, each by ``runner`` (in process, or Spark tasks), and
    commit once; returns the COMPACT snapshot id, None when nothing was compacted.

    Raises:
        CommitConflict: another commit removed a compacted file meanwhile (nothing published;
            the files written are deleted).
    """
    for column in order_by:
        if column not in table.schema.field_names:
            raise InvalidArgument(f"order_by column '{column}' is not a column of the table")
    if order_by and (table.is_primary_key_table or table.options.bucket != -1):
        raise UnsupportedFeature(
            "Sort compaction (order_strategy) is only supported for unaware-bucket append "
            "tables ('bucket' = '-1', no primary key)"
        )
    tasks = plan_compaction(table, partitions=partitions, predicate=predicate)
    if not tasks:
        return None
    func = BucketCompaction(table, CompactOptions.of(table, full), tuple(order_by))
    messages = [m for m in runner(func, tasks) if m is not None and not m.is_empty]
    if not messages:
        return None
    committer = FileStoreCommit(table, commit_user)
    try:
        return committer.commit_compact(messages)
    except BaseException:
        # An upgraded file keeps its name: only files this compaction wrote are removed.
        committer.abort([_written_only(m) for m in messages])
        raise


def _written_only(message: CommitMessage) -> CommitMessage:
    inputs = {f.file_name for f in message.deleted_files}
    written = tuple(f for f in message.new_files if f.file_name not in inputs)
    return replace(message, new_files=written, deleted_files=())

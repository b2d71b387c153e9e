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

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.exceptions import InvalidArgument, UnsupportedFeature
from paimon_core.format.commit_message import CommitMessage
from paimon_core.format.features import Access
from paimon_core.format.merge_options import MergeOptions
from paimon_core.format.paths import POSTPONE_BUCKET
from paimon_core.operations.commit import FileStoreCommit
from paimon_core.operations.data_evolution import data_evolution_enabled
from paimon_core.operations.deletion_vectors import (
    AppendDvMaintainer,
    BucketedDvMaintainer,
    apply_deletion_vector,
    is_unaware_dv,
)
from paimon_core.operations.merge.base import VALUE_KIND, SortedRuns, drop_retractions
from paimon_core.operations.merge.full_changelog import full_compaction_changelog
from paimon_core.operations.merge.lookup import lookup_candidates, lookup_changelog, needs_lookup
from paimon_core.operations.read import ROW_POSITION, SEQUENCE_NUMBER, TableRead
from paimon_core.operations.row_tracking import ROW_TRACKING_COLUMNS, row_tracking_enabled
from paimon_core.operations.scan import Predicate, Split, TableScan, value_matches
from paimon_core.operations.sort.table_sorter import TableSorter
from paimon_core.operations.split_generator import merge_sections, table_key_order
from paimon_core.operations.write import TableWrite, local_millis_as_utc

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
    descending, then min sequence, then creation time, then name: files of writers that
    started from the same snapshot differ only there), then one run per non-empty level
    above 0."""
    files = list(files)
    level0 = sorted(
        (f for f in files if f.level == 0),
        key=lambda f: (
            -f.max_sequence_number,
            f.min_sequence_number,
            f.creation_time_millis if f.creation_time_millis is not None else -(2**63),
            f.file_name,
        ),
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

    def force_pick_l0(self, num_levels: int, runs: Sequence[LevelSortedRun]) -> CompactUnit | None:
        """Java's ``forcePickL0``: every level-0 run (and what the size ratio adds)."""
        count = 0
        for run in runs:
            if run.level > 0:
                break
            count += 1
        if count == 0:
            return None
        return self._pick_for_size_ratio(num_levels - 1, runs, count, force=True)

    def _pick_for_size_ratio(
        self, max_level: int, runs: Sequence[LevelSortedRun], count: int, force: bool = False
    ) -> CompactUnit | None:
        size = sum(r.total_size for r in runs[:count])
        triggered = force or count > 1
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
    lookup: bool = False

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
            lookup=table_needs_lookup(table),
        )


def table_needs_lookup(table: FileStoreTable) -> bool:
    """Tables whose writes compact every level-0 file up (``ForceUpLevel0Compaction``),
    looking the keys up in the levels below the output: batch reads skip level 0 on
    first-row and deletion-vector tables, and ``changelog-producer`` = ``lookup`` makes its
    changelog there."""
    options = table.options
    return needs_lookup(
        table.is_primary_key_table,
        options.merge_engine,
        options.deletion_vectors_enabled,
        options.changelog_producer,
    )


@dataclass(frozen=True, slots=True)
class CompactTask:
    """One bucket to compact: its live files in the planned snapshot (picklable);
    ``snapshot_id``: the snapshot its deletion vectors are restored from."""

    partition: bytes
    partition_values: tuple
    bucket: int
    total_buckets: int
    files: tuple[DataFileMeta, ...]
    snapshot_id: int | None = None


def _matches_spec(values: Mapping[str, Any], spec: Mapping[str, Any]) -> bool:
    return all(value_matches("=", literal, values[k]) for k, literal in spec.items())


def plan_compaction(
    table: FileStoreTable,
    snapshot: Snapshot | None = None,
    *,
    partitions: Sequence[Mapping[str, Any]] | None = None,
    predicate: Sequence[Predicate] | None = None,
    buckets: Collection[int] | None = None,
    partition_idle: timedelta | None = None,
) -> list[CompactTask]:
    """The buckets of ``snapshot`` (default latest) in the partitions matching any spec of
    ``partitions`` and every partition predicate, one task each; only ``buckets`` when given,
    and only partitions whose newest file is at least ``partition_idle`` old (Paimon-Spark's
    ``partition_idle_time``: ``PartitionEntry.lastFileCreationTime`` against now).

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
    table.check_supported(Access.WRITE)  # postpone buckets, row tracking, ...
    if not table.is_primary_key_table and data_evolution_enabled(table.options):
        raise UnsupportedFeature(
            f"Cannot compact table {table.identifier or table.path}: compaction of data "
            "evolution ('data-evolution.enabled' = 'true') is not supported yet"
        )
    if snapshot is None:
        snapshot = table.snapshot_manager.latest_snapshot()
    if snapshot is None:
        return []
    scan = TableScan(table)
    groups: dict[tuple[bytes, int], list] = {}
    for e in scan.read_entries(snapshot, predicate=list(predicate or ())):
        groups.setdefault((e.partition, e.bucket), []).append(e)
    idle: set[bytes] | None = None
    if partition_idle is not None:
        # Creation times are Java's local wall clock stored as if UTC: compare alike.
        cutoff = local_millis_as_utc() - partition_idle // timedelta(milliseconds=1)
        newest: dict[bytes, int] = {}
        for (partition, _), entries in groups.items():
            times = [e.file.creation_time_millis or 0 for e in entries]
            newest[partition] = max(newest.get(partition, 0), *times)
        idle = {p for p, t in newest.items() if t <= cutoff}
    tasks = []
    for (partition, bucket), entries in sorted(groups.items(), key=lambda kv: kv[0]):
        if buckets is not None and bucket not in buckets:
            continue
        if idle is not None and partition not in idle:
            continue
        values = scan.partition_values(partition)
        if partitions and not any(_matches_spec(dict(zip(keys, values)), s) for s in partitions):
            continue
        files = tuple(e.file for e in entries)
        tasks.append(
            CompactTask(
                partition, values, bucket, entries[0].total_buckets, files, snapshot.snapshot_id
            )
        )
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
    table: FileStoreTable,
    task: CompactTask,
    options: CompactOptions,
    on_new_file: Callable[[str], None] | None = None,
) -> CommitMessage | None:
    runs = level_sorted_runs(task.files)
    if options.full:
        unit = pick_full_compaction(options.num_levels, runs)
    else:
        unit = options.universal.pick(options.num_levels, runs)
        if unit is None and options.lookup:
            unit = options.universal.force_pick_l0(options.num_levels, runs)
    if unit is None or not unit.files:
        return None
    dv = None
    if table.options.deletion_vectors_enabled:
        dv = BucketedDvMaintainer.restore(
            table, _snapshot(table, task.snapshot_id), task.partition, task.bucket
        )
    output = unit.output_level
    highest = max(f.level for f in task.files)
    max_level = options.num_levels - 1
    # FullChangelogMergeTreeCompactRewriter: what reaches the highest level yields changelog.
    changelog = table.options.changelog_producer == "full-compaction" and output == max_level
    # MergeTreeCompactManager: deletes may go when nothing older lies below the output, and
    # always with deletion vectors (the older rows are marked deleted instead).
    drop_delete = output != 0 and (output >= highest or dv is not None)
    reader = TableRead(table)
    assert reader.merge is not None
    rewrite = True
    if len(unit.files) == 1:
        (f,) = unit.files
        if f.level == output:
            return None
        if not (output == max_level and _has_deletes(f)):  # MergeTreeCompactTask.upgrade
            if f.level > 0 or not options.lookup:
                # Java's upgrade: one sorted file changes level, its data untouched; into the
                # highest level, each of its added records is a +I (CHANGELOG_NO_REWRITE).
                produced: list[DataFileMeta] = []
                if changelog:
                    rows = drop_retractions(_key_values(reader, task, [f], dv))
                    produced = _write_changelog(table, task, rows, output, on_new_file)
                return _message(task, [f], [replace(f, level=output)], produced)
            rewrite = _lookup_rewrites(table, f, output, max_level, dv is not None)
            drop_delete = dv is not None  # the lookup rewriter's forceDropDelete
    keys = list(reader.merge.key_names)
    tables = [_key_values(reader, task, [f], dv) for f in unit.files]
    levels = [f.level for f in unit.files]
    deduplicate = None
    if table.options.changelog_row_deduplicate:
        ignored = set(table.options.changelog_row_deduplicate_ignore_fields)
        deduplicate = [n for n in table.schema.field_names if n not in ignored]
    changes = None
    if options.lookup and output != 0 and 0 in levels:  # rewriteLookupChangelog
        inputs = {f.file_name for f in unit.files}
        deeper = [f for f in task.files if f.level > output and f.file_name not in inputs]
        merged, changes = _lookup_rewrite(
            reader,
            task,
            tables,
            levels,
            deeper,
            dv,
            deduplicate,
            _unit_runs(table, unit.files, tables),
        )
    else:
        runs: SortedRuns | None = _unit_runs(table, unit.files, tables)
        tie_rank = None
        if reader.merge.lookup:
            rows, row_levels = lookup_candidates(tables, levels, keys)
            tie_rank = reader.merge.lookup_tie_rank(tables, levels, runs)
            runs = None
        else:
            rows = pa.concat_tables(tables)
            row_levels = np.repeat(np.asarray(levels, np.int64), [t.num_rows for t in tables])
        if changelog:
            top = row_levels == max_level
            merged, changes = full_compaction_changelog(
                rows, top, reader.merge, deduplicate, runs, tie_rank
            )
        else:
            merged = reader.merge.merge(rows, runs=runs, tie_rank=tie_rank)
    if drop_delete:
        merged = drop_retractions(merged)
    after: list[DataFileMeta] = []
    produced = []
    with TableWrite(table, on_new_file=on_new_file) as writer:
        if not rewrite:
            # CHANGELOG_NO_REWRITE: the lookups ran (deletion vectors, changelog); the file
            # moves up unchanged.
            after = [replace(unit.files[0], level=output)]
        elif merged.num_rows:
            after = writer.write_compacted(
                task.partition, task.partition_values, task.bucket, merged, level=output
            )
        if changes is not None and changes.num_rows:
            try:
                produced = writer.write_changelog(
                    task.partition, task.partition_values, task.bucket, changes, level=output
                )
            except BaseException:
                _delete(table, task, after if rewrite else [])
                raise
    message = _message(task, unit.files, after, produced)
    if dv is not None:
        if rewrite:  # notifyRewriteCompactBefore
            for f in unit.files:
                dv.remove_deletion_vector_of(f.file_name)
        index_changes = dv.persist()
        message = replace(
            message,
            new_index_files=index_changes.new_index_files,
            deleted_index_files=index_changes.deleted_index_files,
        )
    return message


def _unit_runs(
    table: FileStoreTable, files: Sequence[DataFileMeta], tables: Sequence[pa.Table]
) -> SortedRuns:
    """How Java's compaction reads a unit's ``files`` (``tables`` their rows): one pass of
    ``IntervalPartition`` over the unit's order (``MergeTreeCompactTask``)."""
    order = table_key_order(table.schema)
    return SortedRuns(
        [t.num_rows for t in tables], lambda: merge_sections(files, order, split=False)
    )


def _has_deletes(f: DataFileMeta) -> bool:
    """Java's ``containsDeleteRecords``: retractions in the file, or not known."""
    return f.delete_row_count is None or f.delete_row_count > 0


def _lookup_rewrites(
    table: FileStoreTable, f: DataFileMeta, output: int, max_level: int, dv: bool
) -> bool:
    """Whether the lookup rewriter rewrites a level-0 file it upgrades to ``output``
    (``LookupMergeTreeCompactRewriter.upgradeStrategy``); either way its keys go through
    the lookup wrapper. Left unchanged: into the highest level, and on deduplicate tables
    without ``sequence.field`` (their merge keeps the new record as it is); rewritten: a
    file format change between the levels, and with deletion vectors retractions (dropped)."""
    options = table.options
    formats = options.file_format_per_level
    if formats.get(0, options.file_format) != formats.get(output, options.file_format):
        return True
    if dv and _has_deletes(f):
        return True
    if output == max_level:
        return False
    deduplicate = options.merge_engine == "deduplicate"
    return not (deduplicate and not MergeOptions.of_schema(table.schema).sequence_fields)


def _split(task: CompactTask, files: Sequence[DataFileMeta]) -> Split:
    return Split(task.partition, task.partition_values, task.bucket, tuple(files), None)


def _write_changelog(
    table: FileStoreTable,
    task: CompactTask,
    rows: pa.Table,
    level: int,
    on_new_file: Callable[[str], None] | None = None,
) -> list[DataFileMeta]:
    """``rows`` as +I changelog files of ``level`` (none when there are no rows)."""
    if not rows.num_rows:
        return []
    kinds = pa.array(np.zeros(rows.num_rows, np.int8), pa.int8())
    index = rows.schema.get_field_index(VALUE_KIND)
    rows = rows.set_column(index, pa.field(VALUE_KIND, pa.int8(), False), kinds)
    with TableWrite(table, on_new_file=on_new_file) as writer:
        return writer.write_changelog(
            task.partition, task.partition_values, task.bucket, rows, level=level
        )


def _delete(table: FileStoreTable, task: CompactTask, files: Sequence[DataFileMeta]) -> None:
    """Remove files a failed compaction wrote (they belong to no message)."""
    message = CommitMessage(task.partition, task.bucket, task.total_buckets, new_files=tuple(files))
    FileStoreCommit(table).abort([message])


def _snapshot(table: FileStoreTable, snapshot_id: int | None) -> Snapshot | None:
    return None if snapshot_id is None else table.snapshot_manager.snapshot(snapshot_id)


def _key_values(
    reader: TableRead,
    task: CompactTask,
    files: Sequence[DataFileMeta],
    dv: BucketedDvMaintainer | None,
) -> pa.Table:
    """The key-value rows of ``files``, without the rows their deletion vectors delete."""
    split = _split(task, files)
    if dv is None or not any(dv.deletion_vector_of(f.file_name) for f in files):
        return reader.read_key_values(split)
    tables = []
    for f in files:
        rows = reader.read_key_values(split.with_files([f]))
        vector = dv.deletion_vector_of(f.file_name)
        if vector is not None:
            rows = rows.filter(pa.array(vector.keep_mask(rows.num_rows)))
        tables.append(rows)
    return pa.concat_tables(tables)


def _lookup_rewrite(
    reader: TableRead,
    task: CompactTask,
    tables: Sequence[pa.Table],
    levels: Sequence[int],
    deeper: Sequence[DataFileMeta],
    dv: BucketedDvMaintainer | None,
    deduplicate: Sequence[str] | None,
    runs: SortedRuns | None = None,
) -> tuple[pa.Table, pa.Table | None]:
    """Java's lookup compaction (``LookupMergeTreeCompactRewriter``) of a unit holding
    level-0 files (``tables``, one per file of ``levels``) into a level above 0, with the
    files below the output (``deeper``); returns the merged rows (retractions kept) and the
    changelog (None unless ``changelog-producer`` = ``lookup``).

    Every key goes through the lookup wrapper, without a reducer: its merge function merges
    lone records too. A key without a record above level 0 among the inputs is looked up in
    ``deeper``, newest level first (any row kind; rows deleted by a deletion vector left out):
    first-row then drops the new record (``FirstRowMergeFunctionWrapper``: the key exists);
    the other engines merge the older record in by sequence
    (``LookupChangelogMergeFunctionWrapper``), so the output holds the key's whole value,
    and with deletion vectors mark it deleted. The changelog covers the keys with a level-0
    record (``lookup_changelog``; first-row: the new keys' records). ``runs``: how Java reads
    the unit's files, for records of equal sequences (the looked-up older records are
    older than any of them)."""
    merge = reader.merge
    assert merge is not None
    keys = list(merge.key_names)
    first_row = merge.engine == "first-row"
    rows = pa.concat_tables(tables)
    row_levels = np.repeat(np.asarray(levels, np.int64), [t.num_rows for t in tables])
    high = pa.array(row_levels > 0)
    high_keys = rows.filter(high).select(keys)
    wanted = _anti_join(rows.select(keys), high_keys, keys)
    older = _older_records(reader, task, wanted, deeper, dv, mark=dv is not None and not first_row)
    if older is not None:
        older = older.select(rows.schema.names).cast(rows.schema)
    produce = reader.table.options.changelog_producer == "lookup"
    level0_keys = rows.filter(pc.invert(high)).select(keys)
    if first_row:
        # FirstRowMergeFunction: null (nothing written) when every record is retracted.
        merged = drop_retractions(merge.merge(rows, reduce=False, runs=runs))
        if older is not None:
            merged = _anti_join(merged, older.select(keys), keys)
        if not produce:
            return merged, None
        return merged, _anti_join(merged, high_keys, keys)
    candidates, candidate_levels = lookup_candidates(tables, levels, keys)
    tie_rank = None if runs is None else merge.lookup_tie_rank(tables, levels, runs)
    before = candidates.filter(pa.array(candidate_levels > 0))
    if older is not None:
        candidates = pa.concat_tables([candidates, older])
        before = pa.concat_tables([before, older])
        if tie_rank is not None:
            tie_rank = np.concatenate([tie_rank, np.full(older.num_rows, -1, np.int64)])
    merged = merge.merge(candidates, reduce=False, tie_rank=tie_rank)
    if not produce:
        return merged, None
    after = _semi_join(merged, level0_keys, keys)
    return merged, lookup_changelog(after, before, keys, deduplicate)


def _older_records(
    reader: TableRead,
    task: CompactTask,
    wanted: pa.Table,
    deeper: Sequence[DataFileMeta],
    dv: BucketedDvMaintainer | None,
    mark: bool,
) -> pa.Table | None:
    """The record of each ``wanted`` key on the newest level of ``deeper`` holding it (rows
    its deletion vector deletes left out; retractions too, as Java's lookup files hold
    them); ``mark``: delete them in ``dv``."""
    keys = wanted.column_names
    found: list[pa.Table] = []
    for level in sorted({f.level for f in deeper}):
        for f in sorted((f for f in deeper if f.level == level), key=lambda f: f.min_key):
            if not wanted.num_rows:
                break
            rows = reader.to_arrow_with_positions(_split(task, [f]))
            if dv is not None:
                vector = dv.deletion_vector_of(f.file_name)
                if vector is not None:
                    keep = vector.keep_mask(int(f.row_count))
                    positions = rows.column(ROW_POSITION).to_numpy()
                    rows = rows.filter(pa.array(keep[positions]))
            hits = _semi_join(rows, wanted, keys)
            if not hits.num_rows:
                continue
            wanted = _anti_join(wanted, hits.select(keys), keys)
            if mark:
                assert dv is not None
                dv.notify_new_deletion(f.file_name, hits.column(ROW_POSITION).to_numpy())
            found.append(hits.drop_columns([ROW_POSITION]))
    return pa.concat_tables(found) if found else None


def _semi_join(rows: pa.Table, keys: pa.Table, names: Sequence[str]) -> pa.Table:
    """The rows of ``rows`` whose key is among ``keys`` (row order kept)."""
    return _key_filter(rows, keys, names, True)


def _anti_join(rows: pa.Table, keys: pa.Table, names: Sequence[str]) -> pa.Table:
    """The rows of ``rows`` whose key is not among ``keys`` (row order kept)."""
    return _key_filter(rows, keys, names, False)


def _key_filter(rows: pa.Table, keys: pa.Table, names: Sequence[str], keep: bool) -> pa.Table:
    if not rows.num_rows:
        return rows
    index = "__paimon_row"
    marked = rows.select(list(names)).append_column(index, pa.array(range(rows.num_rows)))
    joined = marked.join(
        keys.group_by(list(names)).aggregate([]), list(names), join_type="left semi"
    )
    mask = np.zeros(rows.num_rows, dtype=bool)
    mask[joined.column(index).to_numpy()] = True
    return rows.filter(pa.array(mask if keep else ~mask))


def _sorted_by_key(rows: pa.Table, names: Sequence[str]) -> pa.Table:
    return rows.sort_by([(n, "ascending") for n in names])


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
    """``files`` of an append bucket rewritten into new files of level 0.

    With deletion vectors the deleted rows stay out of the new files and the vectors of the
    rewritten files leave the index (Java's compaction reads through them, then
    ``removeDeletionVectorOf`` / ``notifyRewriteCompactBefore``): the rewritten rows would
    otherwise come back, as the vectors name files that are gone."""
    files = sorted(files, key=lambda f: f.min_sequence_number)
    # Rows of a row-tracking table keep their ids: the compacted files store _ROW_ID and
    # _SEQUENCE_NUMBER (Java's compaction writers with rowTypeWithRowTracking).
    tracking = row_tracking_enabled(table.options)
    reader = TableRead(table)
    projection = None
    if tracking:
        projection = [*(f.name for f in table.schema.fields), *ROW_TRACKING_COLUMNS]
    dv = _append_dv_maintainer(table, task)
    if dv is None:
        rows = reader.to_arrow([_split(task, files)], projection)
    else:
        # One file at a time: its rows in file order, the positions its vector names.
        parts = []
        for f in files:
            part = reader.to_arrow([_split(task, [f])], projection)
            vector = dv.deletion_vector_of(f.file_name)
            parts.append(part if vector is None else apply_deletion_vector(part, vector))
        rows = pa.concat_tables(parts)
    if sort is not None:
        rows = sort(rows)
    after: list[DataFileMeta] = []
    if rows.num_rows:
        with TableWrite(table, row_tracking=tracking) as writer:
            after = writer.write_compacted(
                task.partition,
                task.partition_values,
                task.bucket,
                rows,
                level=0,
                first_seq=files[0].min_sequence_number,
            )
    message = _message(task, files, after)
    if dv is not None:
        for f in files:
            dv.remove_deletion_vector_of(f.file_name)
        changes = dv.persist()
        message = replace(
            message,
            new_index_files=changes.new_index_files,
            deleted_index_files=changes.deleted_index_files,
        )
    return message


def _append_dv_maintainer(
    table: FileStoreTable, task: CompactTask
) -> AppendDvMaintainer | BucketedDvMaintainer | None:
    """The deletion vectors of the task's bucket as of its snapshot (None without them)."""
    if not table.options.deletion_vectors_enabled:
        return None
    snapshot = _snapshot(table, task.snapshot_id)
    if is_unaware_dv(table):
        return AppendDvMaintainer.restore(table, snapshot, task.partition)
    return BucketedDvMaintainer.restore(table, snapshot, task.partition, task.bucket)


def sort_compact_bucket(
    table: FileStoreTable, task: CompactTask, sorter: TableSorter
) -> CommitMessage | None:
    """Paimon's sort compaction (``order_strategy`` 'order', 'zorder' or 'hilbert'): every
    file of the bucket rewritten, the rows in ``sorter``'s order."""
    if table.is_primary_key_table:
        raise UnsupportedFeature(
            "order_strategy other than 'none' works on unaware-bucket append tables only"
        )
    if not task.files:
        return None
    return _rewrite_append(table, task, task.files, sorter.sort)


# ------------------------------------------------------------------------- on write


def write_compaction(table: FileStoreTable) -> WriteCompaction | None:
    """The compaction a writer of ``table`` runs before handing out its messages, None when
    it runs none: Paimon's batch writers (``write-only`` = false, the default) compact each
    primary-key bucket they wrote by universal compaction, and lookup tables (first-row,
    deletion vectors) compact every level-0 file up so that batch reads see the rows.

    With ``full-compaction.delta-commits`` > 0 every batch write fully compacts the buckets
    it wrote (Paimon-Spark's ``DataWrite.preCommit``, latest Paimon: a batch write has no
    commit count to wait for)."""
    options = table.options
    if (
        not table.is_primary_key_table
        or options.get_bool("write-only", False)
        or options.bucket == -2
    ):
        return None
    full = (options.get_int("full-compaction.delta-commits") or 0) > 0
    return WriteCompaction(table, CompactOptions.of(table, full=full))


@dataclass(frozen=True)
class WriteCompaction:
    """Compacts the buckets a writer wrote, against the files of its base snapshot (as
    Java's writers restore them), and puts the result in each message's ``compact_*``
    fields: the committer publishes it as a COMPACT snapshot after the data's."""

    table: FileStoreTable
    options: CompactOptions

    def __call__(
        self,
        messages: list[CommitMessage],
        base: Snapshot | None,
        overwrite: bool,
        on_new_file: Callable[[str], None] | None,
    ) -> list[CommitMessage]:
        written = [m for m in messages if m.new_files]
        if not written:
            return messages
        scan = TableScan(self.table)
        existing: dict[tuple[bytes, int], list[DataFileMeta]] = {}
        if base is not None and not overwrite:  # an overwrite's writer ignores old files
            partitions = {m.partition for m in written}
            for e in scan.read_entries(base, partitions=partitions):
                existing.setdefault((e.partition, e.bucket), []).append(e.file)
        snapshot_id = None if base is None or overwrite else base.snapshot_id
        out: list[CommitMessage] = []
        try:
            for m in messages:
                if m.new_files:
                    files = (*existing.get((m.partition, m.bucket), ()), *m.new_files)
                    values = tuple(scan.partition_values(m.partition))
                    task = CompactTask(
                        m.partition, values, m.bucket, m.total_buckets, files, snapshot_id
                    )
                    result = _compact_key_values(self.table, task, self.options, on_new_file)
                    if result is not None and not result.is_empty:
                        m = replace(
                            m,
                            compact_before=result.deleted_files,
                            compact_after=result.new_files,
                            compact_new_index_files=result.new_index_files,
                            compact_deleted_index_files=result.deleted_index_files,
                            compact_changelog_files=result.changelog_files,
                        )
                out.append(m)
        except BaseException:
            FileStoreCommit(self.table).abort(
                [_written_only(m.compact_increment()) for m in out if m.has_compaction]
            )
            raise
        return out


# ------------------------------------------------------------------- postpone buckets


def postpone_writer(file_name: str) -> str:
    """The writer a ``bucket-postpone`` file came from: its name up to ``-w-`` (Java's
    ``PostponeBucketFileStoreWrite.getWriterPrefix``); the whole name when it has none."""
    at = file_name.rfind("-w-")
    return file_name[: at + 3] if at >= 0 else file_name


@dataclass(frozen=True)
class PostponeCompaction:
    """Moves the rows of one partition's ``bucket-postpone`` files into real buckets (a
    picklable ``task -> messages`` function; Paimon-Spark's ``SparkPostponeCompactProcedure``):
    each writer's files in creation order and its rows in sequence order, the writers one
    after the other (Java gives them no relative order), written as a write-only batch
    write writes (``TableWrite``: the partition's bucket count from its real buckets, else
    ``postpone.default-bucket-num``; sequence numbers continuing each bucket's), and the
    postpone files deleted. Returns the messages of one COMPACT commit."""

    table: FileStoreTable

    def __call__(self, task: CompactTask) -> tuple[CommitMessage, ...]:
        table = self.table
        groups: dict[str, list[DataFileMeta]] = {}
        for f in sorted(task.files, key=lambda f: (f.creation_time_millis or 0, f.file_name)):
            groups.setdefault(postpone_writer(f.file_name), []).append(f)
        reader = TableRead(table)
        pieces = []
        for files in groups.values():
            rows = reader.read_key_values(_split(task, files))
            order = pc.sort_indices(rows.column(SEQUENCE_NUMBER))  # stable: file order kept
            pieces.append(rows.take(order))
        data = pa.concat_tables(pieces) if pieces else None
        base = _snapshot(table, task.snapshot_id)
        writer = TableWrite(table, base_snapshot=base)
        try:
            if data is not None and data.num_rows:
                kinds = data.column(VALUE_KIND).combine_chunks()
                writer.write_arrow(data.select(table.schema.field_names), kinds)
            messages = writer.prepare_commit()
        finally:
            writer.close()
        removed = CommitMessage(
            task.partition, POSTPONE_BUCKET, task.total_buckets, deleted_files=task.files
        )
        return (*messages, removed)


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
    sorter: TableSorter | None = None

    def __call__(self, task: CompactTask) -> CommitMessage | None:
        if self.sorter is not None:
            return sort_compact_bucket(self.table, task, self.sorter)
        return compact_bucket(self.table, task, self.options)


def compact_table(
    table: FileStoreTable,
    *,
    full: bool = True,
    partitions: Sequence[Mapping[str, Any]] | None = None,
    predicate: Sequence[Predicate] | None = None,
    order_by: Sequence[str] = (),
    order_strategy: str = "order",
    buckets: Collection[int] | None = None,
    partition_idle: timedelta | None = None,
    runner: Runner = _local_runner,
    commit_user: str | None = None,
) -> int | None:
    """Compact the selected buckets, each by ``runner`` (in process, or Spark tasks), and
    commit once; returns the COMPACT snapshot id, None when nothing was compacted. With
    ``order_by``, every file of the selected partitions is rewritten sorted by
    ``order_strategy`` ('order', 'zorder' or 'hilbert').

    Raises:
        InvalidArgument, UnsupportedFeature: a bad ``order_by`` or ``order_strategy``, or a
            table sort compaction cannot rewrite (nothing is written).
        CommitConflict: another commit removed a compacted file meanwhile (nothing published;
            the files written are deleted).
    """
    for column in order_by:
        if column not in table.schema.field_names:
            raise InvalidArgument(f"order_by column '{column}' is not a column of the table")
    sorter = None
    if order_by:
        if table.is_primary_key_table or table.options.bucket != -1:
            raise UnsupportedFeature(
                "Sort compaction (order_strategy) is only supported for unaware-bucket append "
                "tables ('bucket' = '-1', no primary key)"
            )
        sorter = TableSorter.of(table, order_strategy, order_by)
    if buckets is not None and (table.options.bucket <= 0 or order_by):
        raise InvalidArgument(
            "Specifying buckets is only supported for fixed-bucket tables, but the table "
            f"bucket mode is {bucket_mode(table)}."
            if not order_by
            else "Specifying buckets is not supported for sort compact."
        )
    plan = {
        "partitions": partitions,
        "predicate": predicate,
        "buckets": buckets,
        "partition_idle": partition_idle,
    }
    tasks = plan_compaction(table, **plan)
    postponed = None
    if table.options.bucket == POSTPONE_BUCKET and any(t.bucket == POSTPONE_BUCKET for t in tasks):
        postponed = _commit_compaction(
            table,
            runner(PostponeCompaction(table), [t for t in tasks if t.bucket == POSTPONE_BUCKET]),
            commit_user,
        )
        tasks = plan_compaction(table, **plan)  # the real buckets, with the rows moved in
    tasks = [t for t in tasks if t.bucket != POSTPONE_BUCKET]
    if not tasks:
        return postponed
    func = BucketCompaction(table, CompactOptions.of(table, full), sorter)
    return _commit_compaction(table, runner(func, tasks), commit_user) or postponed


def _commit_compaction(
    table: FileStoreTable, results: Iterable[Any], commit_user: str | None
) -> int | None:
    """Commit the messages of compaction tasks (a message, a tuple of them, or None each)
    as one COMPACT snapshot; on failure the files they wrote are deleted."""
    messages = [
        m
        for r in results
        for m in (r if isinstance(r, tuple) else (r,))
        if m is not None and not m.is_empty
    ]
    if not messages:
        return None
    committer = FileStoreCommit(table, commit_user)
    try:
        return committer.commit_compact(messages)
    except BaseException:
        # An upgraded file keeps its name: only files this compaction wrote are removed.
        committer.abort([_written_only(m) for m in messages])
        raise


def bucket_mode(table: FileStoreTable) -> str:
    """Java's ``BucketMode`` name of ``table``."""
    bucket = table.options.bucket
    if bucket > 0:
        return "HASH_FIXED"
    if bucket == -2:
        return "POSTPONE_MODE"
    return "HASH_DYNAMIC" if table.is_primary_key_table else "BUCKET_UNAWARE"


def _written_only(message: CommitMessage) -> CommitMessage:
    inputs = {f.file_name for f in message.deleted_files}
    written = tuple(f for f in message.new_files if f.file_name not in inputs)
    return replace(message, new_files=written, deleted_files=(), deleted_index_files=())

"""Copying a table's files into another table: Paimon 2.0's Spark ``CopyFilesProcedure``
(``ListDataFilesOperator``, ``ListIndexFilesOperator``, ``CopyDataFilesOperator``,
``CopyFilesCommitOperator``).

The live data files of the source's latest snapshot (in the partitions a predicate
selects) are copied byte for byte under fresh names into the target's bucket directories
(an external file: beside itself), their metadata kept but for the name and the target's
schema id; the index files of those buckets (hash indexes, deletion vectors) are copied to
the target's ``index/`` likewise. One OVERWRITE commit of the target publishes them
(dynamic partition overwrite; the whole table when unpartitioned), as Paimon's
``withOverwrite()`` batch commit.

Where Paimon would publish broken metadata this keeps the data readable instead:

* a copied file keeps the source file's suffix (Paimon names it by the target's
  ``file.format``, whatever format the bytes are in);
* deletion vectors are re-pointed at the copied files' new names (Paimon keeps the source
  names, so the deleted rows of the copy come back);
* a data file's ``.index`` extra file (its external file index) is copied beside the
  copied data file as ``<new name>.index`` and referenced under that name (Paimon keeps
  referencing the source's name, which the target does not have, so its reads would fail
  or lose the index); the copy prunes by the same index bytes as the source;
* a file written under an older schema with other columns is refused (Paimon would label
  it with the target's schema and read its renamed or retyped columns as missing).

The driver only plans (the entries, the copies' names and metadata, from the manifests)
and commits; the bytes are copied by tasks, one per bucket (its data files, their
``.index`` files and its index files), run where the ``runner`` says (Spark tasks under
``PaimonSession``; in process without one), as Paimon-Spark's ``CopyDataFilesOperator``
copies on executors. A task carries only paths and the two tables' ``FileIO``s.

A failing task deletes what it copied (a half-written file too); a failure of the job or
of the commit makes the driver delete every file the plan named (the names are this copy's
own, fresh ones), so the target is unchanged then. A task overwrites a file of its plan
that exists, as Paimon's copy does: a retry of a task Spark lost after it wrote rewrites
that attempt's files. Only an attempt Spark has not stopped yet when the job fails can
still leave a file no snapshot names, for ``remove_orphan_files``.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from paimon_core.exceptions import InvalidArgument, UnsupportedFeature
from paimon_core.format.commit_message import CommitMessage
from paimon_core.format.data_file_index import index_path_of
from paimon_core.format.manifest import FileKind, IndexManifestEntry
from paimon_core.format.paths import INDEX_DIR, INDEX_PREFIX, new_file_name
from paimon_core.operations.commit import published_before
from paimon_core.operations.dynamic_bucket import index_file_path
from paimon_core.operations.file_index import INDEX_PATH_SUFFIX
from paimon_core.operations.read import data_file_path
from paimon_core.operations.scan import Predicate, TableScan

if TYPE_CHECKING:
    from paimon_core.format.manifest import DataFileMeta, ManifestEntry
    from paimon_core.io.fileio import FileIO
    from paimon_core.table import FileStoreTable

__all__ = ["CopyFiles", "CopyPlan", "CopyTask", "copy_files", "plan_copy"]

_SUFFIX = re.compile(r"-\d+(\.[^/]+)$")
_CHUNK = 8 << 20


def _copy_bytes(source_io: FileIO, source: str, target_io: FileIO, target: str) -> None:
    """One file, streamed in chunks (never whole in memory); an existing target is
    overwritten (it can only be a lost attempt's copy under this copy's fresh name)."""
    with source_io.open_input(source) as src, target_io.open_output(target) as dst:
        shutil.copyfileobj(src, dst, _CHUNK)


@dataclass(frozen=True, slots=True)
class CopyTask:
    """The copies of one bucket: ``(source path, target path)`` pairs (picklable: what a
    Spark task gets)."""

    files: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class CopyFiles:
    """A picklable ``task -> copied target paths`` function (what a Spark task runs): the
    ``FileIO``s are all the configuration it needs (an S3 one pickles without its client
    and builds its own). A task that fails deletes what it copied, the file it was writing
    included."""

    source_io: FileIO
    target_io: FileIO

    def __call__(self, task: CopyTask) -> tuple[str, ...]:
        copied: list[str] = []
        try:
            for source, target in task.files:
                copied.append(target)  # before the copy: a half-written file is ours too
                _copy_bytes(self.source_io, source, self.target_io, target)
        except BaseException:
            for path in copied:
                self.target_io.delete(path)
            raise
        return tuple(copied)


Runner = Callable[
    [Callable[[CopyTask], tuple[str, ...]], Sequence[CopyTask]], list[tuple[str, ...]]
]


def _local_runner(
    func: Callable[[CopyTask], tuple[str, ...]], tasks: Sequence[CopyTask]
) -> list[tuple[str, ...]]:
    return [func(t) for t in tasks]


@dataclass(frozen=True, slots=True)
class CopyPlan:
    """What the driver decided: the byte copies (one task per bucket) and the commit
    messages naming the copies."""

    tasks: tuple[CopyTask, ...]
    messages: tuple[CommitMessage, ...]


def _new_data_name(target: FileStoreTable, old: str) -> str:
    match = _SUFFIX.search(old)
    suffix = match.group(1) if match else f".{target.options.file_format}"
    return new_file_name(target.options.data_file_prefix) + suffix


def _beside(external: str | None, name: str) -> str | None:
    return None if external is None else f"{external.rsplit('/', 1)[0]}/{name}"


def _check_schemas(source: FileStoreTable, entries: Sequence[ManifestEntry]) -> None:
    latest = source.schema
    for schema_id in sorted({e.file.schema_id for e in entries} - {latest.schema_id}):
        if source.schema_manager.schema(schema_id).fields != latest.fields:
            raise UnsupportedFeature(
                f"Cannot copy files written under schema {schema_id} of {source.identifier}: "
                f"its columns differ from the latest schema {latest.schema_id} the copy would "
                "label them with; compact the table first"
            )


def plan_copy(
    source: FileStoreTable,
    target: FileStoreTable,
    predicate: Sequence[Predicate] | None = None,
) -> CopyPlan:
    """The copy of the source's live files (in the partitions ``predicate`` selects) into
    ``target``: fresh names, metadata and one task per bucket, from the manifests only (no
    data file is opened; nothing is written). Empty when the source has no snapshot or no
    file was selected.

    Raises:
        InvalidArgument: the predicate names a non-partition column.
        UnsupportedFeature: a file written under a schema with other columns, or a source
            this implementation cannot read (``TableScan.check_readable``, ``check_files``).
    """
    keys = list(source.schema.partition_keys)
    for column, _, _ in predicate or ():
        if column not in keys:
            raise InvalidArgument(
                f"Only partition columns can select files: '{column}' is not one of {keys}"
            )
    snapshot = source.snapshot_manager.latest_snapshot()
    if snapshot is None:
        return CopyPlan((), ())
    scan = TableScan(source)
    scan.check_readable()
    entries = scan.read_entries(snapshot, predicate=list(predicate or ()))
    scan.check_files(e.file for e in entries)
    _check_schemas(source, entries)
    wanted = {(e.partition, e.bucket) for e in entries}
    indexes = []
    if snapshot.index_manifest:
        for i in source.index_manifest_file.read(snapshot.index_manifest):
            if i.kind == FileKind.ADD and (i.partition, i.bucket) in wanted:
                indexes.append(i)
    copies: dict[tuple[bytes, int], list[tuple[str, str]]] = {}
    files: dict[tuple[bytes, int], list[DataFileMeta]] = {}
    totals: dict[tuple[bytes, int], int] = {}
    renamed: dict[tuple[bytes, int, str], str] = {}
    for e in entries:
        bucket_copies = copies.setdefault((e.partition, e.bucket), [])
        values = scan.partition_values(e.partition)
        old_path = e.file.external_path or data_file_path(
            source, values, e.bucket, e.file.file_name
        )
        name = _new_data_name(target, e.file.file_name)
        external = _beside(e.file.external_path, name)
        new_path = external or data_file_path(target, values, e.bucket, name)
        bucket_copies.append((old_path, new_path))
        extras = []
        for extra in e.file.extra_files:
            if extra.endswith(INDEX_PATH_SUFFIX):
                # The index lives beside its data file (FileIndexProcessor's rule).
                new_index = index_path_of(new_path)
                bucket_copies.append((f"{old_path.rsplit('/', 1)[0]}/{extra}", new_index))
                extra = new_index.rsplit("/", 1)[1]
            extras.append(extra)
        meta = replace(
            e.file,
            file_name=name,
            schema_id=target.schema.schema_id,
            external_path=external,
            extra_files=tuple(extras),
        )
        files.setdefault((e.partition, e.bucket), []).append(meta)
        totals[e.partition, e.bucket] = e.total_buckets
        renamed[e.partition, e.bucket, e.file.file_name] = name
    new_indexes: dict[tuple[bytes, int], list[IndexManifestEntry]] = {}
    for i in indexes:
        name = new_file_name(INDEX_PREFIX)
        external = _beside(i.external_path, name)
        new_path = external or f"{target.path.rstrip('/')}/{INDEX_DIR}/{name}"
        copies[i.partition, i.bucket].append((index_file_path(source.path, i), new_path))
        ranges = i.dv_ranges
        if ranges is not None:
            ranges = tuple(
                replace(
                    r,
                    data_file_name=renamed.get(
                        (i.partition, i.bucket, r.data_file_name), r.data_file_name
                    ),
                )
                for r in ranges
            )
        entry = replace(i, file_name=name, external_path=external, dv_ranges=ranges)
        new_indexes.setdefault((i.partition, i.bucket), []).append(entry)
    buckets = sorted(files)
    return CopyPlan(
        tuple(CopyTask(tuple(copies[b])) for b in buckets),
        tuple(
            CommitMessage(
                partition,
                bucket,
                totals[partition, bucket],
                new_files=tuple(files[partition, bucket]),
                new_index_files=tuple(new_indexes.get((partition, bucket), ())),
            )
            for partition, bucket in buckets
        ),
    )


def copy_files(
    source: FileStoreTable,
    target: FileStoreTable,
    predicate: Sequence[Predicate] | None = None,
    *,
    runner: Runner = _local_runner,
) -> int | None:
    """Copy the source's live files (in the partitions ``predicate`` selects) into
    ``target`` and commit them as one OVERWRITE; returns its snapshot id (None when the
    source has no snapshot or no file was selected). The driver plans, ``runner`` runs the
    byte copies (in process, or as Spark tasks), the driver commits. Any failure deletes
    every file the plan named: the target is unchanged.

    Raises:
        InvalidArgument: the predicate names a non-partition column.
        UnsupportedFeature: a file written under a schema with other columns, or a table
            feature this implementation lacks (``features``), before any file is copied.
    """
    commit = target.new_commit()
    plan = plan_copy(source, target, predicate)
    if not plan.messages:
        return None
    try:
        runner(CopyFiles(source.file_io, target.file_io), plan.tasks)
        return commit.overwrite(list(plan.messages), dynamic=bool(target.schema.partition_keys))
    except BaseException as e:
        if published_before(e) is not None:
            raise  # the copies are the target's now
        # A failed job reports only its failure: the finished tasks' copies are deleted
        # by the names the plan gave them (a missing one is skipped).
        for task in plan.tasks:
            for _, path in task.files:
                target.file_io.delete(path)
        raise

"""Rewriting file indexes: ``CALL sys.rewrite_file_index`` (Paimon-Spark's
``RewriteFileIndexProcedure`` running ``FileIndexProcessor`` on every live file of the
selected partitions, then one COMPACT commit replacing the changed files' metas).

A file's new index is: the indexes of its ``.index`` extra file that the table's options
still declare (column and type), with the declared ones rebuilt from the file's rows (read
as written, every row, no deletion vector), in one container, embedded when at most
``file-index.in-manifest-threshold`` bytes, else in a new index file (``<data file>.index``,
or ``...-<n+1>.index`` after ``...-<n>.index``). A table without index columns drops every
index. Files whose meta comes out unchanged are left alone; the old index files stay for
the snapshots that still name them, and go with orphan cleanup (Paimon's expiry never
deletes them: the data file itself lives on).

The driver only plans (one task per bucket, from the manifests) and commits; reading the
files and writing the new index files is the tasks' work (Spark tasks under
``PaimonSession``), as Paimon-Spark runs ``FileIndexProcessor`` in a Spark job.

Follows Paimon master's ``FileIndexProcessor`` (#9085), which fixes 2.0.0 keeping a stale
embedded index beside a new index file, or a stale index file beside a new embedded index.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import pyarrow as pa

from paimon_core.exceptions import InvalidArgument
from paimon_core.format.commit_message import CommitMessage
from paimon_core.format.data_file_index import (
    DataFileIndexWriter,
    StreamSource,
    index_path_of,
    new_index_path,
    read_container,
)
from paimon_core.format.data_files import read_data_file
from paimon_core.format.file_index import (
    INDEX_PATH_SUFFIX,
    FileIndexOptions,
    JavaHashMap,
    file_index_options,
    java_hash_order,
    write_container,
)
from paimon_core.format.manifest import DataFileMeta, FileKind, ManifestEntry
from paimon_core.format.schema import TableSchema
from paimon_core.format.types import to_arrow_type
from paimon_core.operations.commit import published_before
from paimon_core.operations.read import data_file_path
from paimon_core.operations.scan import Predicate, TableScan

if TYPE_CHECKING:
    from paimon_core.table import FileStoreTable

__all__ = [
    "INDEX_PATH_SUFFIX",
    "BucketIndexRewrite",
    "FileIndexRewrite",
    "FileIndexTask",
    "index_columns_options",
    "plan_file_index_rewrite",
    "rewrite_file_index",
]


@dataclass(frozen=True, slots=True)
class FileIndexRewrite:
    """Java's result: partitions written and index-rewritten files (``compactAfter`` count)."""

    written_partitions: int
    written_indexes: int


def index_columns_options(table: FileStoreTable) -> dict[str, str]:
    """The ``file-index.<type>.columns`` options that declare index columns."""
    return {
        k: v
        for k, v in table.options.items()
        if k.startswith("file-index.") and k.endswith(".columns") and v.strip()
    }


@dataclass(frozen=True, slots=True)
class _SchemaInfo:
    """``FileIndexProcessor.SchemaInfo``: what the options index in files of one schema."""

    schema: TableSchema
    name_mapping: dict[str, str] | None
    columns: tuple[str, ...]
    full_names: frozenset[str]
    index_types: dict[str, frozenset[str]]


class FileIndexProcessor:
    """Java's ``FileIndexProcessor``: the rewritten meta of one data file."""

    def __init__(self, table: FileStoreTable) -> None:
        self.table = table
        self.options: FileIndexOptions = file_index_options(table.options)
        self.current = table.schema
        self._infos: dict[int, _SchemaInfo] = {}
        self.written: list[str] = []

    def _info(self, schema_id: int) -> _SchemaInfo:
        info = self._infos.get(schema_id)
        if info is not None:
            return info
        schema = (
            self.current
            if schema_id == self.current.schema_id
            else self.table.schema_manager.schema(schema_id)
        )
        mapping = None
        if schema_id != self.current.schema_id:
            by_id = {f.id: f.name for f in self.current.fields}
            mapping = {by_id[f.id]: f.name for f in schema.fields if f.id in by_id}
        columns: list[str] = []
        full_names: set[str] = set()
        types: dict[str, set[str]] = {}
        for column, index_types in self.options.columns:
            name = column.name if mapping is None else mapping.get(column.name)
            if name is None:
                continue
            columns.append(name)
            # Java names a top-level column as declared (the current name), a map key
            # under the file's name of its map.
            full = column.name if column.nested is None else f"{name}[{column.nested}]"
            full_names.add(full)
            types.setdefault(full, set()).update(t for t, _ in index_types)
        info = self._infos[schema_id] = _SchemaInfo(
            schema,
            mapping,
            tuple(dict.fromkeys(columns)),
            frozenset(full_names),
            {k: frozenset(v) for k, v in types.items()},
        )
        return info

    def process(self, entry: ManifestEntry, partition_values: Sequence) -> DataFileMeta:
        """The meta of ``entry``'s file with its index rewritten (equal when unchanged)."""
        f = entry.file
        info = self._info(f.schema_id)
        data_path = f.external_path or data_file_path(
            self.table, partition_values, entry.bucket, f.file_name
        )
        directory = data_path.rsplit("/", 1)[0]
        extras = [x for x in f.extra_files if not x.endswith(INDEX_PATH_SUFFIX)]
        index_files = [x for x in f.extra_files if x.endswith(INDEX_PATH_SUFFIX)]
        maintainers = JavaHashMap()
        if index_files:
            old_path = f"{directory}/{index_files[0]}"
            with self.table.file_io.open_input(old_path) as stream:
                old = read_container(StreamSource(stream), old_path)
            # readAll: result.computeIfAbsent(column).put(type, bytes), header order.
            for column, payloads in old:
                inner = maintainers.compute_if_absent(column, JavaHashMap)
                for index_type, payload in payloads:
                    inner.put(index_type, payload)
            target = new_index_path(old_path)
        else:
            target = index_path_of(data_path)
        for column in maintainers.keys():
            if column not in info.full_names:
                maintainers.remove(column)
                continue
            inner = maintainers.values[column]
            for index_type in inner.keys():
                if index_type not in info.index_types.get(column, frozenset()):
                    inner.remove(index_type)
        if not self.options.empty:
            writer = DataFileIndexWriter(
                [f2 for f2 in info.schema.fields if f2.name in set(info.columns)],
                self.options,
                info.name_mapping,
            )
            if not writer.empty:
                writer.write(self._read_columns(data_path, info))
            built = writer.serialize_maintainers()
            # forEach over the new HashMap: computeIfAbsent(column).putAll(types).
            for column in java_hash_order(list(built), prepend=True):
                inner = maintainers.compute_if_absent(column, JavaHashMap)
                for index_type in java_hash_order(list(built[column])):
                    inner.put(index_type, built[column][index_type])
        container = b""
        if len(maintainers):
            container = write_container(
                [
                    (column, [(t, maintainers.values[column].values[t]) for t in inner_keys])
                    for column in maintainers.keys()
                    for inner_keys in (maintainers.values[column].keys(),)
                ]
            )
        if len(container) > self.options.in_manifest_threshold:
            io = self.table.file_io
            if not io.exists(target):  # Java overwrites; a failed rewrite removes only its own
                self.written.append(target)
            io.write_bytes(target, container)
            extras.append(target.rsplit("/", 1)[-1])
            return replace(f, extra_files=tuple(extras), embedded_index=None)
        return replace(f, extra_files=tuple(extras), embedded_index=container or None)

    def _read_columns(self, path: str, info: _SchemaInfo) -> pa.Table:
        fields = [f for f in info.schema.fields if f.name in set(info.columns)]
        table = self.table.identifier or self.table.path
        raw = read_data_file(self.table.file_io, path, [(f.name, f.type) for f in fields], table)
        return pa.table({f.name: raw.column(f.name).cast(to_arrow_type(f.type)) for f in fields})


@dataclass(frozen=True, slots=True)
class FileIndexTask:
    """One bucket's live files whose indexes to rewrite (picklable: a Spark task's input)."""

    partition: bytes
    partition_values: tuple
    bucket: int
    total_buckets: int
    files: tuple[DataFileMeta, ...]


@dataclass(frozen=True, slots=True)
class FileIndexTaskResult:
    """What a task hands the driver: the bucket's changed metas (None: none changed) and
    the index files it created, which the driver deletes when the commit fails."""

    message: CommitMessage | None
    written: tuple[str, ...]


@dataclass(frozen=True)
class BucketIndexRewrite:
    """A picklable ``task -> result`` function (what a Spark task runs): every file of the
    bucket through ``FileIndexProcessor``. A task that fails deletes what it wrote."""

    table: FileStoreTable

    def __call__(self, task: FileIndexTask) -> FileIndexTaskResult:
        processor = FileIndexProcessor(self.table)
        before: list[DataFileMeta] = []
        after: list[DataFileMeta] = []
        try:
            for f in task.files:
                entry = ManifestEntry(
                    FileKind.ADD, task.partition, task.bucket, task.total_buckets, f
                )
                rewritten = processor.process(entry, task.partition_values)
                if rewritten != f:
                    before.append(f)
                    after.append(rewritten)
        except BaseException:
            for path in processor.written:
                self.table.file_io.delete(path)
            raise
        message = None
        if after:
            message = CommitMessage(
                task.partition,
                task.bucket,
                task.total_buckets,
                compact_before=tuple(before),
                compact_after=tuple(after),
            )
        return FileIndexTaskResult(message, tuple(processor.written))


Runner = Callable[
    [Callable[[FileIndexTask], FileIndexTaskResult], Sequence[FileIndexTask]],
    list[FileIndexTaskResult],
]


def _local_runner(
    func: Callable[[FileIndexTask], FileIndexTaskResult], tasks: Sequence[FileIndexTask]
) -> list[FileIndexTaskResult]:
    return [func(t) for t in tasks]


def plan_file_index_rewrite(
    table: FileStoreTable, predicate: Sequence[Predicate] | None = None
) -> list[FileIndexTask]:
    """One task per bucket of the latest snapshot in the partitions ``predicate`` selects
    (metadata only: the driver reads manifests, never data files).

    Raises:
        InvalidArgument: the predicate names a non-partition column.
    """
    keys = list(table.schema.partition_keys)
    for column, _, _ in predicate or ():
        if column not in keys:
            raise InvalidArgument(
                f"Only partition columns can select files: '{column}' is not one of {keys}"
            )
    snapshot = table.snapshot_manager.latest_snapshot()
    if snapshot is None:
        return []
    scan = TableScan(table)
    buckets: dict[tuple[bytes, int], list[ManifestEntry]] = {}
    for e in scan.read_entries(snapshot, predicate=list(predicate or ())):
        buckets.setdefault((e.partition, e.bucket), []).append(e)
    return [
        FileIndexTask(
            partition,
            tuple(scan.partition_values(partition)),
            bucket,
            entries[0].total_buckets,
            tuple(e.file for e in entries),
        )
        for (partition, bucket), entries in sorted(buckets.items())
    ]


def rewrite_file_index(
    table: FileStoreTable,
    predicate: Sequence[Predicate] | None = None,
    *,
    runner: Runner = _local_runner,
) -> FileIndexRewrite:
    """Rewrite the file indexes of the live files in the partitions ``predicate`` selects:
    the driver plans one task per bucket, ``runner`` runs them (in process, or as Spark
    tasks: the files are read and the index files written there), and the driver commits
    the changed metas once (one COMPACT snapshot). A failing commit deletes the index files
    the tasks created; a failing task deletes its own (a task Spark lost after it wrote
    leaves files no snapshot names, for ``remove_orphan_files``).

    Raises:
        InvalidArgument: the predicate names a non-partition column.
        UnsupportedFeature: an index type this implementation cannot build, or a table
            feature no commit of this implementation may touch (before any file is written).
    """
    commit = table.new_commit()
    tasks = plan_file_index_rewrite(table, predicate)
    if not tasks:
        return FileIndexRewrite(0, 0)
    results = runner(BucketIndexRewrite(table), tasks)
    messages = [r.message for r in results if r.message is not None]
    try:
        if messages:
            commit.commit(messages)
    except BaseException as e:
        if published_before(e) is not None:
            raise  # the index files are the table's now
        for r in results:
            for path in r.written:
                table.file_io.delete(path)
        raise
    return FileIndexRewrite(
        len({m.partition for m in messages}), sum(len(m.compact_after) for m in messages)
    )

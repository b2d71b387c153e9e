"""Committing: changes -> manifests -> manifest lists -> ``snapshot-N`` -> LATEST.

Follows ../shared/spec/commit.rst and Paimon's ``FileStoreCommitImpl``. A commit attempt
first writes every metadata file it needs under fresh names, then publishes ``snapshot-N``
with an atomic create that never overwrites. If another writer took ``N`` first the attempt's
files are removed and the commit is retried on top of the new latest snapshot; any other
failure removes them too, so a failed commit leaves nothing behind and the previous snapshot
stays the table's state.
"""

from __future__ import annotations

import itertools
import logging
import random
import threading
import time
import uuid
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from paimon_core.exceptions import (
    CommitConflict,
    CommitFileMissing,
    CommitOutcomeUnknown,
    CorruptMetadata,
    InvalidArgument,
)
from paimon_core.format.binary_row import deserialize_row
from paimon_core.format.commit_message import CommitMessage
from paimon_core.format.deletion_vectors import DELETION_VECTORS_INDEX
from paimon_core.format.features import Access
from paimon_core.format.manifest import (
    FileKind,
    IndexManifestEntry,
    ManifestEntry,
    ManifestFileMeta,
)
from paimon_core.format.snapshot import CommitKind, Snapshot
from paimon_core.format.statistics import (
    Statistics,
    read_statistics,
    statistics_path,
    write_statistics,
)
from paimon_core.io.fileio import LocalFileIO
from paimon_core.operations.data_evolution import data_evolution_enabled, row_id_range
from paimon_core.operations.deletion_vectors import is_unaware_dv
from paimon_core.operations.dynamic_bucket import index_file_path
from paimon_core.operations.live_files import LiveFiles, checkout, cover, give_back
from paimon_core.operations.manifest_merge import ManifestMerger
from paimon_core.operations.read import data_file_path
from paimon_core.operations.row_tracking import assign_row_tracking, row_tracking_enabled

if TYPE_CHECKING:
    from paimon_core.table import FileStoreTable

BATCH_COMMIT_IDENTIFIER = 2**63 - 1
STRICT_MODE_LAST_SAFE_SNAPSHOT = "commit.strict-mode.last-safe-snapshot"
logger = logging.getLogger(__name__)

PostCommitHook = Callable[["FileStoreTable", Snapshot], None]


_PUBLISHED_ATTRIBUTE = "paimon_published_snapshot"

COMMIT_OPERATION: ContextVar[str | None] = ContextVar("paimon_commit_operation", default=None)
"""The SQL operation the snapshots committed now belong to (Paimon 2.0's ``Snapshot.operation``:
``WRITE``, ``OVERWRITE``, ``UPDATE``, ``DELETE``, ``MERGE``, ``TRUNCATE``,
``CREATE_TABLE_AS_SELECT``, ...), or None (procedures, the core's own API)."""


@contextmanager
def commit_operation(operation: str | None) -> Iterator[None]:
    """Snapshots committed inside the block record ``operation`` (the writes' own compactions
    too, as Paimon-Spark's commits of one statement do)."""
    token = COMMIT_OPERATION.set(operation)
    try:
        yield
    finally:
        COMMIT_OPERATION.reset(token)


def published_before(error: BaseException) -> int | None:
    """The id of the snapshot a commit had published when ``error`` interrupted it (in its
    post-commit maintenance, say: a Ctrl-C), else None. The snapshot then owns the commit's
    files, so a failure cleanup must not delete them."""
    return getattr(error, _PUBLISHED_ATTRIBUTE, None)


_PARALLEL_CHECKS = 16
_PUBLISHED_TABLES = 8


class _Published:
    """Per table (or branch) root, the last snapshot a committer of this process published and its full
    manifest list, so that the next commit, usually by a fresh committer of a freshly opened
    table (a user's script), starts from it instead of reading two lists back from disk.

    Used only when the snapshot found latest equals the one cached (manifest list names are
    unique), so a commit by another process or a rollback simply misses.
    """

    def __init__(self) -> None:
        self._entries: OrderedDict[str, tuple[Snapshot, list[ManifestFileMeta]]] = OrderedDict()
        self._lock = threading.Lock()

    def latest_id(self, path: str) -> int | None:
        """The id of the snapshot last published here for ``path`` (None: none)."""
        with self._lock:
            cached = self._entries.get(path)
        return cached[0].snapshot_id if cached is not None else None

    def get(self, path: str, latest: Snapshot) -> list[ManifestFileMeta] | None:
        with self._lock:
            cached = self._entries.get(path)
        if cached is not None and cached[0] == latest:
            return cached[1]
        return None

    def put(self, path: str, snapshot: Snapshot, metas: list[ManifestFileMeta]) -> None:
        with self._lock:
            self._entries[path] = (snapshot, metas)
            self._entries.move_to_end(path)
            while len(self._entries) > _PUBLISHED_TABLES:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


PUBLISHED = _Published()


@dataclass(frozen=True, slots=True)
class _Changes:
    """What one commit attempt writes, computed against a given latest snapshot."""

    entries: tuple[ManifestEntry, ...]
    new_index: tuple[IndexManifestEntry, ...] = ()
    deleted_index: tuple[IndexManifestEntry, ...] = ()
    statistics: str | None = None
    changelog: tuple[ManifestEntry, ...] = ()
    next_row_id: int | None = None
    """The new snapshot's ``nextRowId`` when row tracking assigned it (else the latest's)."""


class FileStoreCommit:
    """Commits ``CommitMessage``s of one user to one table (driver side)."""

    def __init__(
        self,
        table: FileStoreTable,
        commit_user: str | None = None,
        post_commit: Sequence[PostCommitHook] = (),
    ) -> None:
        """A committer of ``table`` (its options as of this handle).

        Raises:
            UnsupportedFeature: a table feature this committer lacks (row tracking, BLOB
                columns, ...: ``features``): a commit would break what Paimon wrote.
        """
        table.check_supported(Access.WRITE)
        self.table = table
        self.commit_user = commit_user or str(uuid.uuid4())
        self._post_commit = tuple(post_commit)
        self._partition_types = [f.type for f in table.schema.partition_fields]
        # The full manifest list of the snapshot this committer published last: the next
        # commit usually starts from it, which saves reading two lists back from disk. Keyed
        # by the snapshot itself, not its id: a rollback elsewhere lets another commit take it.
        self._last: tuple[Snapshot, list[ManifestFileMeta]] | None = None
        self._last_safe = table.options.get_int(STRICT_MODE_LAST_SAFE_SNAPSHOT)
        # A snapshot published by a commit call that then failed: abort() must keep its files.
        self._published_then_failed: int | None = None

    # ----------------------------------------------------------------------------- API

    def filter_committed(self, identifiers: Sequence[int]) -> list[int]:
        """The ``identifiers`` (ascending) that this committer's user has not committed yet:
        those above the ``commit_identifier`` of the user's latest snapshot (Java's
        ``FileStoreCommitImpl.filterCommitted``; with ``commit.strict-mode.last-safe-
        snapshot`` only snapshots after that one are searched). A writer that retries a
        commit after a crash (a streaming micro-batch run again) commits only what this
        returns, so nothing is committed twice.

        As in Java, the search stops at the first expired snapshot: a user whose snapshots
        have all expired is treated as having committed nothing.

        Raises:
            InvalidArgument: the identifiers are not strictly ascending.
        """
        if not identifiers:
            return []
        for before, after in itertools.pairwise(identifiers):
            if after <= before:
                raise InvalidArgument(
                    "Committables must be sorted according to identifiers before filtering. "
                    "This is unexpected."
                )
        last_safe = self.table.options.get_int(STRICT_MODE_LAST_SAFE_SNAPSHOT)
        earliest = last_safe + 1 if last_safe is not None else None
        latest = self.table.snapshot_manager.latest_snapshot_of_user(self.commit_user, earliest)
        if latest is None:
            return list(identifiers)
        return [i for i in identifiers if i > latest.commit_identifier]

    def commit(
        self,
        messages: Sequence[CommitMessage],
        commit_identifier: int = BATCH_COMMIT_IDENTIFIER,
        watermark: int | None = None,
        properties: Mapping[str, str] | None = None,
    ) -> int | None:
        """Append the messages' files (their changelog files in the snapshot's changelog
        manifest list); returns the new snapshot id, None if nothing changed.

        Messages carrying a writer's compaction get a COMPACT snapshot right after the data's
        (``_commit_compactions``), whose id is returned then."""
        data = [m.data_increment() if m.has_compaction else m for m in messages]
        entries = tuple(self._entries_of(data))
        new_index = tuple(i for m in data for i in m.new_index_files)
        deleted_index = tuple(i for m in data for i in m.deleted_index_files)
        changelog = tuple(_changelog_of(data))
        published = None
        if entries or new_index or deleted_index or changelog:
            has_delete = any(e.kind == FileKind.DELETE for e in entries)
            # Deletion-vector changes delete rows: an OVERWRITE commit, as Paimon 1.x does.
            has_dv = any(i.index_type == DELETION_VECTORS_INDEX for i in new_index + deleted_index)
            changes = _Changes(entries, new_index, deleted_index, changelog=changelog)
            kind = CommitKind.OVERWRITE if has_delete or has_dv else CommitKind.APPEND
            published = self._commit_with_retry(
                lambda _latest, _live: changes, kind, commit_identifier, watermark, properties
            )
        return self._commit_compactions(messages, commit_identifier, published) or published

    def _commit_compactions(
        self, messages: Sequence[CommitMessage], commit_identifier: int, published: int | None
    ) -> int | None:
        """Publish the writers' compactions of ``messages`` after their data was published
        as snapshot ``published`` (None: the data changed nothing).

        Any failure here leaves the data committed: the error carries ``published``
        (``published_before``) and this committer's ``abort`` keeps the data's files.

        Raises:
            CommitConflict: another commit removed a compacted file meanwhile. The data
                stays committed; the compaction's files are removed, and the message says
                so (a later write or ``CALL sys.compact`` compacts the bucket again).
        """
        compacted = [m.compact_increment() for m in messages if m.has_compaction]
        if not compacted:
            return None
        try:
            try:
                return self.commit_compact(compacted, commit_identifier)
            except CommitConflict as e:
                self.abort([_written_only(m) for m in compacted])
                data = (
                    "The data was committed"
                    if published is None
                    else (f"The data was committed as snapshot {published}")
                )
                raise CommitConflict(
                    f"{data}, but the writer's compaction lost a race and was dropped (run "
                    f"CALL sys.compact on {self.table.identifier or self.table.path}): {e}"
                ) from e
        except BaseException as e:
            if published is not None and published_before(e) is None:
                self._interrupted_after(e, published)
            raise

    def commit_compact(
        self,
        messages: Sequence[CommitMessage],
        commit_identifier: int = BATCH_COMMIT_IDENTIFIER,
    ) -> int | None:
        """Publish a compaction: each message's ``deleted_files`` (compactBefore) become
        DELETE entries and its ``new_files`` (compactAfter) ADD entries of one COMPACT
        snapshot, its ``changelog_files`` that snapshot's changelog. A compacted file another
        commit has already removed is a conflict, as in Java, and nothing is published;
        returns None when nothing changed."""
        entries = tuple(self._entries_of(messages))
        new_index = tuple(i for m in messages for i in m.new_index_files)
        deleted_index = tuple(i for m in messages for i in m.deleted_index_files)
        changelog = tuple(_changelog_of(messages))
        if not entries and not new_index and not deleted_index and not changelog:
            return None
        changes = _Changes(entries, new_index, deleted_index, changelog=changelog)
        return self._commit_with_retry(
            lambda _latest, _live: changes, CommitKind.COMPACT, commit_identifier, None, None
        )

    def overwrite(
        self,
        messages: Sequence[CommitMessage],
        partition: Mapping[str, Any] | None = None,
        dynamic: bool = False,
        commit_identifier: int = BATCH_COMMIT_IDENTIFIER,
        properties: Mapping[str, str] | None = None,
    ) -> int | None:
        """Replace data: the whole table, one static ``partition`` spec, or (``dynamic``) the
        partitions the new data falls in; commit kind OVERWRITE.

        Changelog files of the messages are not committed, as Java's ``overwritePartition``
        ignores them (a writer that overwrites writes none: ``TableWrite``)."""
        ignored = [f.file_name for m in messages for f in m.changelog_files]
        if ignored:
            logger.warning(
                "Overwrite mode currently does not commit any changelog. Ignored changelog "
                "files are: %s",
                ", ".join(ignored),
            )
        data = [m.data_increment() if m.has_compaction else m for m in messages]
        new_entries = tuple(self._entries_of(data))
        new_index = tuple(i for m in data for i in m.new_index_files)
        touched = {m.partition for m in data if m.new_files}
        if dynamic and not touched:
            return None
        spec = dict(partition or {})
        self._check_overwrite_spec(spec, set() if dynamic else {e.partition for e in new_entries})

        def changes(latest: Snapshot | None, live: LiveFiles) -> _Changes:
            cover(self.table, live, touched if dynamic else None, self._all_metas)
            doomed = [
                e
                for e in live.entries.values()
                if self._overwritten(e.partition, spec, dynamic, touched)
            ]
            deletes = [_as_delete(e) for e in doomed]
            doomed_buckets = {(e.partition, e.bucket) for e in doomed}
            old_index = self._index_entries(latest)
            deleted_index = tuple(
                i
                for i in old_index
                if self._overwritten(i.partition, spec, dynamic, touched)
                or (i.partition, i.bucket) in doomed_buckets
            )
            return _Changes(tuple(deletes) + new_entries, new_index, deleted_index)

        published = self._commit_with_retry(
            changes, CommitKind.OVERWRITE, commit_identifier, None, properties
        )
        return self._commit_compactions(messages, commit_identifier, published) or published

    def commit_statistics(self, stats: Statistics) -> int:
        """Write ``stats`` to ``statistics/`` and commit an ANALYZE snapshot naming it
        (Paimon's ``commitStatistics``); the file is deleted when the commit fails."""
        name = write_statistics(self.table, stats)
        changes = _Changes((), statistics=name)
        try:
            return self._commit_with_retry(
                lambda _latest, _live: changes,
                CommitKind.ANALYZE,
                BATCH_COMMIT_IDENTIFIER,
                None,
                None,
            )
        except BaseException as e:
            if published_before(e) is None:
                self.table.file_io.delete(statistics_path(self.table, name))
            raise

    def _inherited_statistics(self, latest: Snapshot | None) -> str | None:
        """The latest snapshot's statistics file, kept while the schema it was computed
        under is still the table's (``FileStoreCommitImpl.tryCommitOnce``).

        A statistics file that cannot be read is not inherited, with a warning: Java's
        commit fails on it, which would block every write and compaction of the table."""
        try:
            stats = read_statistics(self.table, latest)
        except CorruptMetadata as e:  # optional metadata: never a reason to refuse writes
            logger.warning("The statistics of the latest snapshot are not inherited: %s", e)
            return None
        if stats is None or latest is None or stats.schema_id != self.table.schema.schema_id:
            return None
        return latest.statistics

    def truncate_partitions(self, partitions: Sequence[Mapping[str, Any]]) -> int | None:
        """Delete every file of the partitions matching any of ``partitions`` (each a spec of
        partition columns, as ``overwrite``'s) in one OVERWRITE snapshot: Java's
        ``truncatePartitions``, which Paimon-Spark's ``ALTER TABLE ... DROP PARTITION`` calls.

        Raises:
            InvalidArgument: no partitions, or a spec names a non-partition column.
        """
        if not partitions:
            raise InvalidArgument("Partitions list cannot be empty.")
        specs = [dict(p) for p in partitions]
        for spec in specs:
            self._check_overwrite_spec(spec, set())

        def doomed(partition: bytes) -> bool:
            return any(self._overwritten(partition, spec, False, set()) for spec in specs)

        def changes(latest: Snapshot | None, live: LiveFiles) -> _Changes:
            cover(self.table, live, None, self._all_metas)
            deletes = [_as_delete(e) for e in live.entries.values() if doomed(e.partition)]
            deleted_index = tuple(i for i in self._index_entries(latest) if doomed(i.partition))
            return _Changes(tuple(deletes), (), deleted_index)

        return self._commit_with_retry(
            changes, CommitKind.OVERWRITE, BATCH_COMMIT_IDENTIFIER, None, None
        )

    def compact_manifest(self) -> int | None:
        """Merge every data manifest of the latest snapshot into a new COMPACT snapshot
        (Java's ``FileStoreCommitImpl.compactManifest``): a full manifest compaction, ADD and
        DELETE entries of one file cancelling, with nothing else changed.

        Older snapshots keep their manifests: only new files are written, and a commit that
        loses the race for ``snapshot-N`` removes its own files and tries again on top of the
        new latest snapshot. As in Java no post-commit maintenance runs. Returns the new
        snapshot id, None when there is no snapshot or the merge left the manifests as they
        were.
        """
        max_retries = self.table.options.commit_max_retries
        wait_ms = 10.0
        for attempt in range(max_retries + 1):
            latest = self.table.snapshot_manager.latest_snapshot(
                fresh=True, known=PUBLISHED.latest_id(self.table.branch_root)
            )
            if latest is None:
                return None
            done, snapshot_id = self._compact_manifest_once(latest)
            if done:
                return snapshot_id
            if attempt < max_retries:
                time.sleep(random.uniform(0, wait_ms) / 1000.0)
                wait_ms = min(wait_ms * 2, 10_000.0)
        raise CommitConflict(
            f"Commit failed after {max_retries} retries, there maybe exist commit conflicts "
            "between multiple jobs."
        )

    def _compact_manifest_once(self, latest: Snapshot) -> tuple[bool, int | None]:
        """One attempt on ``latest``: (False, None) when ``snapshot-N`` was taken meanwhile,
        else (True, the new snapshot id or None when there was nothing to merge)."""
        table = self.table
        written: list[str] = []
        # Java forces a full compaction: merge-min-count 1, full-compaction threshold 1 byte.
        merger = ManifestMerger(
            table.manifest_file,
            self._partition_types,
            table.options.manifest_target_file_size,
            1,
            1,
            written=written,
        )
        published = False
        try:
            before = self._all_metas(latest)
            after = merger.merge(before)
            if {m.file_name for m in after} == {m.file_name for m in before}:
                return True, None
            base_name, base_size = table.manifest_list.write(after)
            written.append(base_name)
            delta_name, delta_size = table.manifest_list.write([])
            written.append(delta_name)
            snapshot = Snapshot(
                snapshot_id=latest.snapshot_id + 1,
                schema_id=latest.schema_id,
                base_manifest_list=base_name,
                delta_manifest_list=delta_name,
                commit_user=self.commit_user,
                commit_identifier=BATCH_COMMIT_IDENTIFIER,
                commit_kind=CommitKind.COMPACT,
                time_millis=int(time.time() * 1000),
                total_record_count=latest.total_record_count,
                delta_record_count=0,
                base_manifest_list_size=base_size,
                delta_manifest_list_size=delta_size,
                index_manifest=latest.index_manifest,
                watermark=latest.watermark,
                statistics=latest.statistics,
                properties=latest.properties,
                next_row_id=latest.next_row_id,
            )
            published = table.snapshot_manager.commit(snapshot)
            if not published:
                self._delete_manifests(written)
                return False, None
            self._last = (snapshot, after)
            PUBLISHED.put(table.branch_root, snapshot, after)
            live = checkout(table, latest)
            live.apply({}, snapshot)  # the same live files: only the manifests changed
            give_back(table, live)
        except BaseException as e:
            if published:
                self._interrupted_after(e, snapshot.snapshot_id)
            elif published_before(e) is None:
                self._delete_manifests(written)
            raise
        return True, snapshot.snapshot_id

    def truncate_table(self) -> int | None:
        """Remove all data in one OVERWRITE snapshot."""
        return self.overwrite([], partition=None)

    def abort(self, messages: Iterable[CommitMessage]) -> None:
        """Delete the data, changelog and index files of messages that will not be committed.

        Nothing is deleted after a commit call of this committer that published its snapshot
        and then failed (``published_before``): those files are the table's now.
        """
        if self._published_then_failed is not None:
            logger.warning(
                "Not deleting the files of snapshot %d: it was published before the commit "
                "was interrupted",
                self._published_then_failed,
            )
            self._published_then_failed = None
            return
        io = self.table.file_io
        for m in messages:
            # A compaction's upgraded file keeps its name: only the files it wrote go.
            kept = {f.file_name for f in m.compact_before}
            written = [
                *m.new_files,
                *m.changelog_files,
                *(f for f in m.compact_after if f.file_name not in kept),
                *m.compact_changelog_files,
            ]
            for f in written:
                path = self._data_file_path(m.partition, m.bucket, f.file_name, f.external_path)
                io.delete(path)
                for extra in f.extra_files:  # its .index file lives beside it
                    io.delete(f"{path.rsplit('/', 1)[0]}/{extra}")
            for i in (*m.new_index_files, *m.compact_new_index_files):
                io.delete(f"{self.table.path}/index/{i.file_name}")

    # ------------------------------------------------------------------------ internals

    def _data_file_path(
        self, partition: bytes, bucket: int, name: str, external_path: str | None
    ) -> str:
        if external_path:
            return external_path
        return data_file_path(self.table, self._partition_values(partition), bucket, name)

    def _partition_values(self, partition: bytes) -> tuple[Any, ...]:
        if not self.table.schema.partition_keys:
            return ()
        return deserialize_row(partition, self._partition_types)

    def _entries_of(self, messages: Iterable[CommitMessage]) -> Iterable[ManifestEntry]:
        # Deletions first, as Java orders a compaction's before and after files: expiry reads a
        # file deleted and added again at another level in one delta as still in use.
        for m in messages:
            for f in m.deleted_files:
                yield ManifestEntry(FileKind.DELETE, m.partition, m.bucket, m.total_buckets, f)
            for f in m.new_files:
                yield ManifestEntry(FileKind.ADD, m.partition, m.bucket, m.total_buckets, f)

    def _overwritten(
        self, partition: bytes, spec: Mapping[str, Any], dynamic: bool, touched: set[bytes]
    ) -> bool:
        if dynamic:
            return partition in touched
        if not spec:
            return True
        values = dict(zip(self.table.schema.partition_keys, self._partition_values(partition)))
        return all(_same_value(values[k], v) for k, v in spec.items())

    def _check_overwrite_spec(self, spec: Mapping[str, Any], touched: set[bytes]) -> None:
        """A static overwrite names partition columns only and gets data of that partition only,
        as Java's ``FileStoreCommitImpl.overwrite``."""
        keys = self.table.schema.partition_keys
        unknown = sorted(set(spec) - set(keys))
        if unknown:
            raise InvalidArgument(
                f"Overwrite partition spec names non-partition columns {unknown}; "
                f"the partition columns are {list(keys)}"
            )
        for partition in touched:
            if not self._overwritten(partition, spec, False, touched):
                wanted = ", ".join(f"{k}={v}" for k, v in spec.items())
                raise InvalidArgument(
                    f"Trying to overwrite partition {{{wanted}}}, but the changes in "
                    f"{self._partition_text(partition)} does not belong to this partition"
                )

    def _all_metas(self, latest: Snapshot) -> list[ManifestFileMeta]:
        if self._last is not None and self._last[0] == latest:
            return self._last[1]
        published = PUBLISHED.get(self.table.branch_root, latest)
        if published is not None:
            return published
        lists = self.table.manifest_list
        return lists.read(latest.base_manifest_list) + lists.read(latest.delta_manifest_list)

    def _index_entries(self, latest: Snapshot | None) -> list[IndexManifestEntry]:
        if latest is None or not latest.index_manifest:
            return []
        return self.table.index_manifest_file.read(latest.index_manifest)

    def _check_conflicts(
        self, live: LiveFiles, entries: Sequence[ManifestEntry]
    ) -> dict[tuple, ManifestEntry | None]:
        """Fold ``entries`` onto the live files as Java's ``FileEntry.mergeEntries`` does:
        adding a live file or deleting a file that is not live is a conflict, and so is a
        partition left with files of different total bucket numbers.

        Returns the net change per file identifier (the added entry, or None when removed).
        """
        changes: dict[tuple, ManifestEntry | None] = {}
        lone_deletes: dict[tuple, ManifestEntry] = {}
        current = live.entries
        for e in entries:
            key = e.identifier
            present = changes[key] is not None if key in changes else key in current
            if e.kind == FileKind.ADD:
                if present:
                    raise CommitConflict(
                        f"File addition conflicts detected: {e.file.file_name} ("
                        f"{self._partition_text(e.partition, suffix=', ')}bucket {e.bucket}, "
                        f"level {e.file.level}) is already in the table. Give up committing."
                    )
                changes[key] = e
            elif not present:
                lone_deletes[key] = e
            elif key in current:
                changes[key] = None
            else:
                del changes[key]  # added and deleted by this commit
        if lone_deletes:
            gone = next(iter(lone_deletes.values()))
            raise CommitConflict(
                f"File deletion conflicts detected: {gone.file.file_name} is already deleted "
                "by another commit. Give up committing."
            )
        if self.table.options.bucket > 0:
            self._check_total_buckets(live, changes)
        return changes

    def _check_row_ranges(
        self, latest: Snapshot | None, live: LiveFiles, changes: _Changes
    ) -> None:
        """Data evolution (Java's ``ConflictDetection.checkRowIdExistence``): a file added
        over existing row ids (an UPDATE's file of some columns) must cover exactly the
        range of a live file, else the rows it was written for were rewritten by a
        concurrent compaction or removed by an overwrite meanwhile.

        Raises:
            CommitConflict: naming the file and its range, nothing committed.
        """
        table = self.table
        if table.is_primary_key_table or not data_evolution_enabled(table.options):
            return
        next_row_id = latest.next_row_id if latest is not None else None
        added = [
            e
            for e in changes.entries
            if e.kind == FileKind.ADD
            and e.file.first_row_id is not None
            and next_row_id is not None
            and e.file.first_row_id < next_row_id
        ]
        if not added:
            return
        ranges = {
            row_id_range(e.file) for e in live.entries.values() if e.file.first_row_id is not None
        }
        for e in added:
            if row_id_range(e.file) not in ranges:
                raise CommitConflict(
                    f"Row ID existence conflict: file '{e.file.file_name}' references "
                    f"firstRowId={e.file.first_row_id}, rowCount={e.file.row_count} in bucket "
                    f"{e.bucket}, but no matching file exists in the current snapshot. The "
                    "referenced file may have been rewritten by a concurrent compaction or "
                    "removed by an overwrite."
                )

    def _check_strict_mode(
        self, latest: Snapshot | None, changes: _Changes, kind: CommitKind
    ) -> None:
        """``commit.strict-mode.last-safe-snapshot``, Paimon 2.0's ``StrictModeChecker``:
        between that snapshot and this commit, another user's COMPACT or OVERWRITE snapshot
        touching a partition this commit changes, or (for an OVERWRITE) another user's
        APPEND to one, fails the commit instead of overwriting what it did not see. -1
        skips the first commit's check. Each attempt moves the safe snapshot on to the
        latest one it checked."""
        if self._last_safe is None:
            return
        new_id = latest.snapshot_id + 1 if latest else 1
        if self._last_safe == -1:
            self._last_safe = new_id - 1
            return
        changed = {e.partition for e in changes.entries}
        changed.update(i.partition for i in (*changes.new_index, *changes.deleted_index))
        manager = self.table.snapshot_manager
        for snapshot_id in range(self._last_safe + 1, new_id):
            other = manager.snapshot(snapshot_id)
            if other.commit_user == self.commit_user or not changed:
                continue
            if other.commit_kind in (CommitKind.COMPACT, CommitKind.OVERWRITE):
                if self._touches(other, changed, real_buckets=False):
                    raise CommitConflict(
                        f"When trying to commit snapshot {new_id}, commit user "
                        f"{self.commit_user} has found a {other.commit_kind.value} snapshot "
                        f"(id: {snapshot_id}) by another user {other.commit_user} which "
                        "modified the same partition. Giving up committing as "
                        f"{STRICT_MODE_LAST_SAFE_SNAPSHOT} is set."
                    )
            if other.commit_kind == CommitKind.APPEND and kind == CommitKind.OVERWRITE:
                if self._touches(other, changed, real_buckets=True):
                    raise CommitConflict(
                        f"When trying to commit snapshot {new_id}, commit user "
                        f"{self.commit_user} has found a APPEND snapshot (id: {snapshot_id}) "
                        f"by another user {other.commit_user} which committed files to fixed "
                        "bucket on the same partition. Giving up committing as "
                        f"{STRICT_MODE_LAST_SAFE_SNAPSHOT} is set."
                    )
        self._last_safe = new_id - 1

    def _touches(self, snapshot: Snapshot, partitions: set[bytes], real_buckets: bool) -> bool:
        """Whether the delta of ``snapshot`` (or, for COMPACT/OVERWRITE, its index changes)
        is in one of ``partitions``."""
        read = self.table.manifest_file.read
        for meta in self.table.manifest_list.read(snapshot.delta_manifest_list):
            for entry in read(meta.file_name):
                if entry.partition in partitions and (not real_buckets or entry.bucket >= 0):
                    return True
        if real_buckets or not snapshot.index_manifest:
            return False
        previous = self.table.snapshot_manager.try_snapshot(snapshot.snapshot_id - 1)
        if previous is not None and previous.index_manifest == snapshot.index_manifest:
            return False
        return any(i.partition in partitions for i in self._index_entries(snapshot))

    def _check_total_buckets(
        self, live: LiveFiles, changes: Mapping[tuple, ManifestEntry | None]
    ) -> None:
        after: dict[bytes, Counter[int]] = {}
        for key, e in changes.items():
            old = live.entries.get(key)
            for entry, step in ((old, -1), (e, 1)):
                if entry is not None:
                    counts = after.get(entry.partition)
                    if counts is None:
                        counts = Counter(live.total_buckets.get(entry.partition, ()))
                        after[entry.partition] = counts
                    counts[entry.total_buckets] += step
        for partition, counts in after.items():
            numbers = sorted(n for n, c in counts.items() if c > 0)
            if len(numbers) > 1:
                raise CommitConflict(
                    f"Total buckets of partition {self._partition_text(partition)} changed "
                    f"from {numbers[0]} to {numbers[1]}; rescale the partition with an "
                    "overwrite first"
                )

    def _partition_text(self, partition: bytes, suffix: str = "") -> str:
        """``{dt=a, h=1}`` as Java prints a partition (empty for an unpartitioned table)."""
        keys = self.table.schema.partition_keys
        if not keys:
            return ""
        values = self._partition_values(partition)
        return "{" + ", ".join(f"{k}={v}" for k, v in zip(keys, values)) + "}" + suffix

    def _commit_with_retry(
        self,
        compute: Callable[[Snapshot | None, LiveFiles], _Changes],
        kind: CommitKind,
        commit_identifier: int,
        watermark: int | None,
        properties: Mapping[str, str] | None,
    ) -> int:
        self._published_then_failed = None
        options = self.table.options
        max_retries = options.commit_max_retries
        wait_ms = 10.0
        for attempt in range(max_retries + 1):
            latest = self.table.snapshot_manager.latest_snapshot(
                fresh=True, known=PUBLISHED.latest_id(self.table.branch_root)
            )
            live = checkout(self.table, latest)
            published: Snapshot | None = None
            try:
                try:
                    changes = _with_row_tracking(self.table, latest, compute(latest, live))
                    cover(self.table, live, {e.partition for e in changes.entries}, self._all_metas)
                    net = self._check_conflicts(live, changes.entries)
                    self._check_row_ranges(latest, live, changes)
                    self._check_index_conflicts(latest, changes)
                    self._check_strict_mode(latest, changes, kind)
                    published = self._try_commit_once(
                        latest, changes, kind, commit_identifier, watermark, properties
                    )
                    if published is not None:
                        live.apply(net, published)
                finally:
                    give_back(self.table, live)
                if published is not None:
                    self._after_commit(published)
                    return published.snapshot_id
            except FileNotFoundError:
                if published is not None or not self._moved_on(latest):
                    raise
                logger.info("The snapshot this commit started from was expired; retrying")
                published = None  # its metadata went with expiry: start from the new latest
            except BaseException as e:
                snapshot_id = published_before(e) or (published and published.snapshot_id)
                if snapshot_id:
                    self._interrupted_after(e, snapshot_id)
                raise
            if attempt < max_retries:
                time.sleep(random.uniform(0, wait_ms) / 1000.0)
                wait_ms = min(wait_ms * 2, 10_000.0)
        raise CommitConflict(
            f"Commit failed after {max_retries} retries: other writers kept taking the next "
            "snapshot id"
        )

    def _moved_on(self, latest: Snapshot | None) -> bool:
        """Whether a newer snapshot than ``latest`` exists by now (a missing metadata file
        of ``latest`` is then expiry's doing, not damage)."""
        found = self.table.snapshot_manager.latest_snapshot_id()
        return found is not None and (latest is None or found > latest.snapshot_id)

    def _try_commit_once(
        self,
        latest: Snapshot | None,
        changes: _Changes,
        kind: CommitKind,
        commit_identifier: int,
        watermark: int | None,
        properties: Mapping[str, str] | None,
    ) -> Snapshot | None:
        """One attempt; returns the published snapshot, or None when ``snapshot-N`` was taken."""
        table = self.table
        options = table.options
        new_id = latest.snapshot_id + 1 if latest else 1
        written: list[str] = []
        merger = ManifestMerger(
            table.manifest_file,
            self._partition_types,
            options.manifest_target_file_size,
            options.manifest_merge_min_count,
            options.manifest_full_compaction_threshold_size,
            written=written,
        )
        published = False
        try:
            previous = self._all_metas(latest) if latest else []
            base = merger.merge(previous)

            delta = (
                table.manifest_file.write(list(changes.entries), self._partition_types)
                if changes.entries
                else []
            )
            written.extend(m.file_name for m in delta)
            changelog_list: tuple[str, int] | None = None
            if changes.changelog:
                changelog = table.manifest_file.write(
                    list(changes.changelog), self._partition_types
                )
                written.extend(m.file_name for m in changelog)
                changelog_list = table.manifest_list.write(changelog)
                written.append(changelog_list[0])

            base_name, base_size = table.manifest_list.write(base)
            written.append(base_name)
            delta_name, delta_size = table.manifest_list.write(delta)
            written.append(delta_name)

            index_manifest = latest.index_manifest if latest else None
            if changes.new_index or changes.deleted_index:
                index_manifest = self._write_index_manifest(latest, changes)
                if index_manifest:
                    written.append(index_manifest)

            added = sum(e.file.row_count for e in changes.entries if e.kind == FileKind.ADD)
            removed = sum(e.file.row_count for e in changes.entries if e.kind == FileKind.DELETE)
            delta_count = added - removed
            previous_watermark = latest.watermark if latest else None
            if watermark is None or (
                previous_watermark is not None and previous_watermark > watermark
            ):
                watermark = previous_watermark
            snapshot = Snapshot(
                snapshot_id=new_id,
                schema_id=table.schema.schema_id,
                base_manifest_list=base_name,
                delta_manifest_list=delta_name,
                commit_user=self.commit_user,
                commit_identifier=commit_identifier,
                commit_kind=kind,
                time_millis=int(time.time() * 1000),
                total_record_count=(latest.total_record_count if latest else 0) + delta_count,
                delta_record_count=delta_count,
                base_manifest_list_size=base_size,
                delta_manifest_list_size=delta_size,
                changelog_manifest_list=changelog_list[0] if changelog_list else None,
                changelog_manifest_list_size=changelog_list[1] if changelog_list else None,
                changelog_record_count=(
                    sum(e.file.row_count for e in changes.changelog) if changes.changelog else None
                ),
                index_manifest=index_manifest,
                watermark=watermark,
                statistics=changes.statistics or self._inherited_statistics(latest),
                properties=dict(properties) if properties else None,
                # Java 1.3+ carries the row-id counter through every commit.
                next_row_id=(
                    changes.next_row_id
                    if changes.next_row_id is not None
                    else latest.next_row_id
                    if latest
                    else None
                ),
                operation=COMMIT_OPERATION.get(),
            )
            self._check_added_files_exist(changes)
            published = table.snapshot_manager.commit(snapshot)
            if not published:
                self._delete_manifests(written)
                return None
            self._last = (snapshot, base + delta)
            PUBLISHED.put(table.branch_root, snapshot, self._last[1])
        except BaseException as e:
            if published or isinstance(e, CommitOutcomeUnknown):  # it may be published
                self._interrupted_after(e, snapshot.snapshot_id)
            elif published_before(e) is None:
                self._delete_manifests(written)
            raise
        return snapshot

    def _check_added_files_exist(self, changes: _Changes) -> None:
        """Every data, extra and index file the snapshot adds exists, one ``exists`` each.

        Checked last before publishing: a file deleted after it was written (orphan removal
        with a recent ``older_than`` between a writer's prepare and its commit) would
        otherwise be published in a snapshot that nobody can read.
        """
        io = self.table.file_io
        paths = list(self._added_paths(changes))
        if isinstance(io, LocalFileIO) or len(paths) < 2:
            found: Iterable[bool] = map(io.exists, paths)
        else:  # an object store answers each in milliseconds: ask in parallel
            with ThreadPoolExecutor(min(_PARALLEL_CHECKS, len(paths))) as pool:
                found = list(pool.map(io.exists, paths))
        for path, exists in zip(paths, found):
            if not exists:
                raise CommitFileMissing(
                    f"Cannot commit: {path} no longer exists (deleted after it was written, "
                    "e.g. by remove_orphan_files); nothing was published"
                )

    def _added_paths(self, changes: _Changes) -> Iterable[str]:
        """Data and changelog files the commit adds (with their extra files), then its new
        index files."""
        bucket_dirs: dict[tuple[bytes, int], str] = {}

        def bucket_dir(partition: bytes, bucket: int) -> str:
            key = (partition, bucket)
            directory = bucket_dirs.get(key)
            if directory is None:
                directory = self._data_file_path(partition, bucket, "", None)[:-1]
                bucket_dirs[key] = directory
            return directory

        for e in (*changes.entries, *changes.changelog):
            if e.kind != FileKind.ADD:
                continue
            f = e.file
            if f.external_path:
                yield f.external_path
                directory = f.external_path.rsplit("/", 1)[0]
            else:
                directory = bucket_dir(e.partition, e.bucket)
                yield f"{directory}/{f.file_name}"
            for extra in f.extra_files:
                yield f"{directory}/{extra}"
        for i in changes.new_index:
            yield index_file_path(self.table.path, i)  # where the writer put it

    def _check_index_conflicts(self, latest: Snapshot | None, changes: _Changes) -> None:
        """A bucket's deletion-vector index file replaces the one it was computed from: when
        another commit replaced that one meanwhile, its deletions would be lost, so this is
        a conflict (as a compacted data file already removed is)."""
        if is_unaware_dv(self.table):
            return
        current = {
            (i.partition, i.bucket): i.file_name
            for i in self._index_entries(latest)
            if i.index_type == DELETION_VECTORS_INDEX
        }
        deleted = {
            (i.partition, i.bucket): i.file_name
            for i in changes.deleted_index
            if i.index_type == DELETION_VECTORS_INDEX
        }
        for key, name in deleted.items():
            if current.get(key) != name:
                raise CommitConflict(
                    f"Deletion vector conflicts detected: index file {name} was replaced by "
                    "another commit. Give up committing."
                )
        for i in changes.new_index:
            key = (i.partition, i.bucket)
            if i.index_type == DELETION_VECTORS_INDEX and key in current and key not in deleted:
                raise CommitConflict(
                    f"Deletion vector conflicts detected: another commit wrote index file "
                    f"{current[key]} for the bucket of {i.file_name}. Give up committing."
                )

    def _write_index_manifest(self, latest: Snapshot | None, changes: _Changes) -> str | None:
        """The full index state after ``changes`` (Java's ``IndexManifestFileHandler``): a
        new file replaces the one of its (partition, bucket, type), except the deletion-vector
        files of bucket-unaware append tables, which are combined by file name."""
        by_name = is_unaware_dv(self.table)
        deleted = {i.file_name for i in changes.deleted_index}
        replaced = {
            (i.partition, i.bucket, i.index_type)
            for i in changes.new_index
            if not (by_name and i.index_type == DELETION_VECTORS_INDEX)
        }
        kept = [
            i
            for i in self._index_entries(latest)
            if i.file_name not in deleted and (i.partition, i.bucket, i.index_type) not in replaced
        ]
        entries = kept + list(changes.new_index)
        if not entries:
            return None
        name, _size = self.table.index_manifest_file.write(entries)
        return name

    def _delete_manifests(self, names: Iterable[str]) -> None:
        io = self.table.file_io
        for name in names:
            try:
                io.delete(f"{self.table.path}/manifest/{name}")
            except OSError:
                pass

    def _interrupted_after(self, error: BaseException, snapshot_id: int) -> None:
        """Record on ``error`` and on this committer that ``snapshot_id`` was published."""
        self._published_then_failed = snapshot_id
        try:
            setattr(error, _PUBLISHED_ATTRIBUTE, snapshot_id)
        except AttributeError:  # an exception type with __slots__: the committer knows
            pass

    def _after_commit(self, snapshot: Snapshot) -> None:
        """Paimon's post-commit maintenance (snapshot expiry, automatic tags), handed in by
        whoever opened the committer: the lifecycle layer sits above this one."""
        for hook in self._post_commit:
            hook(self.table, snapshot)


def _with_row_tracking(
    table: FileStoreTable, latest: Snapshot | None, changes: _Changes
) -> _Changes:
    """``changes`` with the row-tracking metadata of a commit on top of ``latest``
    (``row_tracking.assign_row_tracking``) when ``table`` has row tracking; as they are
    otherwise."""
    options = table.options
    if not row_tracking_enabled(options):
        return changes
    assigned = assign_row_tracking(
        latest.snapshot_id + 1 if latest else 1,
        latest.next_row_id if latest else None,
        changes.entries,
        options,
    )
    return replace(changes, entries=assigned.entries, next_row_id=assigned.next_row_id)


def _written_only(message: CommitMessage) -> CommitMessage:
    """The files of a compaction message that it wrote (not its inputs, nor an upgraded
    input, which keeps its name)."""
    inputs = {f.file_name for f in message.deleted_files}
    return CommitMessage(
        message.partition,
        message.bucket,
        message.total_buckets,
        new_files=tuple(f for f in message.new_files if f.file_name not in inputs),
        new_index_files=message.new_index_files,
        changelog_files=message.changelog_files,
    )


def _changelog_of(messages: Iterable[CommitMessage]) -> Iterable[ManifestEntry]:
    for m in messages:
        for f in m.changelog_files:
            yield ManifestEntry(FileKind.ADD, m.partition, m.bucket, m.total_buckets, f)


def _as_delete(entry: ManifestEntry) -> ManifestEntry:
    return ManifestEntry(
        FileKind.DELETE, entry.partition, entry.bucket, entry.total_buckets, entry.file
    )


def _same_value(stored: Any, given: Any) -> bool:
    if stored is None or given is None:
        return stored is given
    if isinstance(stored, (str, bytes)) or not isinstance(given, str):
        return stored == given
    return str(stored) == given

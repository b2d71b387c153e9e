"""Deletion vectors of a snapshot: finding them for reads, and maintaining them for writers.

Reading (``deletion-vectors.enabled`` tables): the scan looks up, in the snapshot's index
manifest, the ``DELETION_VECTORS`` entries of the planned (partition, bucket)s and hands each
split the ``DeletionFile`` of every file that has one; the reader drops those rows
(``apply_deletion_vector``). A missing or corrupt vector stops the read, naming the file.

Writing: a writer that deletes rows of existing files (compaction of primary-key tables,
DELETE on append tables) collects the deleted positions per data file in a maintainer
restored from the snapshot it started from, then ``persist``s it: the new index file is
written and the returned ``DvIndexChanges`` go into the commit message
(``new_index_files`` / ``deleted_index_files``). As Paimon:

* ``BucketedDvMaintainer`` (primary-key and fixed-bucket tables, Java's
  ``BucketedDvMaintainer``/0.9 ``DeletionVectorsMaintainer``): one index file per
  (partition, bucket) holds every vector of the bucket; a change rewrites it whole and the
  new file replaces the old one in the index manifest.
* ``AppendDvMaintainer`` (bucket-unaware append tables, Java's
  ``UnawareAppendDeletionFileMaintainer``): a partition has any number of index files,
  combined in the index manifest by file name; the files holding a changed vector are
  rewritten (their unchanged vectors copied) and deleted, the others stay.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from paimon_core.format.deletion_vectors import (
    DELETION_VECTORS_INDEX,
    DeletionFile,
    DeletionVector,
    DeletionVectorsIndexFile,
)
from paimon_core.format.manifest import FileKind, IndexManifestEntry

if TYPE_CHECKING:
    from paimon_core.format.commit_message import CommitMessage
    from paimon_core.format.snapshot import Snapshot
    from paimon_core.table import FileStoreTable

__all__ = [
    "AppendDvMaintainer",
    "BucketedDvMaintainer",
    "DvIndexChanges",
    "apply_deletion_vector",
    "deletion_vectors_index",
    "is_unaware_dv",
    "snapshot_deletion_files",
    "snapshot_dv_entries",
]

UNAWARE_BUCKET = 0
BITMAP64_OPTION = "deletion-vectors.bitmap64"


def deletion_vectors_index(table: FileStoreTable) -> DeletionVectorsIndexFile:
    return DeletionVectorsIndexFile(table.file_io, table.path)


def is_unaware_dv(table: FileStoreTable) -> bool:
    """Whether the table's DV index files are combined by file name (bucket-unaware append
    tables, Java's ``UnawareBucketCombiner``) rather than one per (partition, bucket)."""
    return not table.is_primary_key_table and table.options.bucket == -1


def snapshot_dv_entries(
    table: FileStoreTable, snapshot: Snapshot | None
) -> list[IndexManifestEntry]:
    """The ``DELETION_VECTORS`` entries of ``snapshot``'s index manifest."""
    if snapshot is None or not snapshot.index_manifest:
        return []
    return [
        e
        for e in table.index_manifest_file.read(snapshot.index_manifest)
        if e.index_type == DELETION_VECTORS_INDEX and e.kind == FileKind.ADD
    ]


def snapshot_deletion_files(
    table: FileStoreTable, snapshot: Snapshot | None
) -> dict[tuple[bytes, int], dict[str, DeletionFile]]:
    """(partition, bucket) -> data file name -> its ``DeletionFile``, for ``snapshot``."""
    index = deletion_vectors_index(table)
    out: dict[tuple[bytes, int], dict[str, DeletionFile]] = {}
    for entry in snapshot_dv_entries(table, snapshot):
        files = out.setdefault((entry.partition, entry.bucket), {})
        for d in index.deletion_files(entry):
            files[d.data_file_name] = d
    return out


def apply_deletion_vector(data: pa.Table, dv: DeletionVector | None) -> pa.Table:
    """The rows of one data file's ``data`` (all its rows, in file order) not deleted."""
    if dv is None or dv.is_empty():
        return data
    return data.filter(pa.array(dv.keep_mask(data.num_rows)))


def _bitmap64(table: FileStoreTable) -> bool:
    return table.options.get_bool(BITMAP64_OPTION, False)


@dataclass(frozen=True, slots=True)
class DvIndexChanges:
    """What persisting a maintainer changed: index files to add and to remove."""

    new_index_files: tuple[IndexManifestEntry, ...] = ()
    deleted_index_files: tuple[IndexManifestEntry, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not self.new_index_files and not self.deleted_index_files

    def commit_message(self, partition: bytes, bucket: int, total_buckets: int) -> CommitMessage:
        """An index-only commit message carrying these changes."""
        from paimon_core.format.commit_message import CommitMessage

        return CommitMessage(
            partition,
            bucket,
            total_buckets,
            new_index_files=self.new_index_files,
            deleted_index_files=self.deleted_index_files,
        )


def _as_delete(entry: IndexManifestEntry) -> IndexManifestEntry:
    from dataclasses import replace

    return replace(entry, kind=FileKind.DELETE)


class BucketedDvMaintainer:
    """The deletion vectors of one (partition, bucket), restored from a snapshot.

    Use: ``restore``, then ``notify_new_deletion`` / ``merge_new_deletion`` /
    ``remove_deletion_vector_of`` (a compaction removes the vectors of the files it
    rewrote), then ``persist`` once and put the changes in the commit message."""

    def __init__(
        self,
        index: DeletionVectorsIndexFile,
        partition: bytes,
        bucket: int,
        restored: Iterable[IndexManifestEntry] = (),
        bitmap64: bool = False,
    ) -> None:
        self.index = index
        self.partition = partition
        self.bucket = bucket
        self.bitmap64 = bitmap64
        self._restored = tuple(restored)
        self._vectors: dict[str, DeletionVector] = {}
        for entry in self._restored:
            self._vectors.update(index.read_all(entry))
        self._modified = False

    @classmethod
    def restore(
        cls, table: FileStoreTable, snapshot: Snapshot | None, partition: bytes, bucket: int
    ) -> BucketedDvMaintainer:
        """The maintainer of (partition, bucket) as of ``snapshot`` (None: empty)."""
        entries = [
            e
            for e in snapshot_dv_entries(table, snapshot)
            if e.partition == partition and e.bucket == bucket
        ]
        return cls(deletion_vectors_index(table), partition, bucket, entries, _bitmap64(table))

    @property
    def deletion_vectors(self) -> Mapping[str, DeletionVector]:
        return dict(self._vectors)

    def deletion_vector_of(self, file_name: str) -> DeletionVector | None:
        return self._vectors.get(file_name)

    def notify_new_deletion(self, file_name: str, positions: Iterable[int] | np.ndarray) -> None:
        """Mark ``positions`` of ``file_name`` deleted (added to its vector, if any)."""
        self.merge_new_deletion(file_name, DeletionVector.of(_array(positions)))

    def merge_new_deletion(self, file_name: str, dv: DeletionVector) -> None:
        """Add ``dv`` to the vector of ``file_name`` (Java's ``mergeNewDeletion``)."""
        old = self._vectors.get(file_name)
        merged = dv if old is None else old.merge(dv)
        if old is None or merged.cardinality != old.cardinality:
            self._vectors[file_name] = merged
            self._modified = True

    def remove_deletion_vector_of(self, file_name: str) -> None:
        """Forget the vector of a file that no longer exists (compaction rewrote it)."""
        if self._vectors.pop(file_name, None) is not None:
            self._modified = True

    def persist(self) -> DvIndexChanges:
        """Write the bucket's vectors to a new index file if anything changed.

        Returns the new file (ADD) and the replaced ones (DELETE). When no vector is left,
        no new file is written: the old ones are only deleted (Java writes an empty index
        file instead; both read the same)."""
        if not self._modified:
            return DvIndexChanges()
        self._modified = False
        vectors = {k: v for k, v in self._vectors.items() if not v.is_empty()}
        new: tuple[IndexManifestEntry, ...] = ()
        if vectors:
            new = (self.index.write(vectors, self.partition, self.bucket, self.bitmap64),)
        deleted = tuple(_as_delete(e) for e in self._restored)
        self._restored = new
        return DvIndexChanges(new, deleted)


class AppendDvMaintainer:
    """The deletion vectors of one partition of a bucket-unaware append table.

    ``notify_new_deletion`` merges the new deleted positions of a file into its current
    vector; ``persist`` writes every changed vector, and the unchanged vectors of the index
    files that held a changed one, to one new index file, and deletes those old files."""

    def __init__(
        self,
        index: DeletionVectorsIndexFile,
        partition: bytes,
        restored: Iterable[IndexManifestEntry] = (),
        bitmap64: bool = False,
    ) -> None:
        self.index = index
        self.partition = partition
        self.bitmap64 = bitmap64
        self._entries = {e.file_name: e for e in restored}
        self._file_of: dict[str, DeletionFile] = {}
        self._entry_of: dict[str, IndexManifestEntry] = {}
        for entry in self._entries.values():
            for d in index.deletion_files(entry):
                self._file_of[d.data_file_name] = d
                self._entry_of[d.data_file_name] = entry
        self._changed: dict[str, DeletionVector] = {}

    @classmethod
    def restore(
        cls, table: FileStoreTable, snapshot: Snapshot | None, partition: bytes
    ) -> AppendDvMaintainer:
        entries = [e for e in snapshot_dv_entries(table, snapshot) if e.partition == partition]
        return cls(deletion_vectors_index(table), partition, entries, _bitmap64(table))

    def deletion_vector_of(self, file_name: str) -> DeletionVector | None:
        changed = self._changed.get(file_name)
        if changed is not None:
            return changed
        d = self._file_of.get(file_name)
        return None if d is None else self.index.read(d)

    def notify_new_deletion(self, file_name: str, dv: DeletionVector) -> None:
        old = self.deletion_vector_of(file_name)
        merged = dv if old is None else old.merge(dv)
        if old is None or merged.cardinality != old.cardinality:
            self._changed[file_name] = merged

    def remove_deletion_vector_of(self, file_name: str) -> None:
        """Forget the vector of a file that no longer exists (compaction rewrote it)."""
        if file_name in self._file_of or file_name in self._changed:
            self._changed[file_name] = DeletionVector.of(np.zeros(0, np.int64))

    def persist(self) -> DvIndexChanges:
        """Write the changed vectors, and the unchanged ones of the index files that held a
        changed one, to one new index file (none when no vector is left); the replaced index
        files are deleted."""
        if not self._changed:
            return DvIndexChanges()
        touched = {self._entry_of[n].file_name for n in self._changed if n in self._entry_of}
        unchanged = [
            d
            for name, d in self._file_of.items()
            if name not in self._changed and self._entry_of[name].file_name in touched
        ]
        vectors = self.index.read_many(unchanged)
        vectors.update(self._changed)
        vectors = {k: v for k, v in vectors.items() if not v.is_empty()}
        new: tuple[IndexManifestEntry, ...] = ()
        if vectors:
            new = (self.index.write(vectors, self.partition, UNAWARE_BUCKET, self.bitmap64),)
        deleted = tuple(_as_delete(self._entries[name]) for name in sorted(touched))
        for name in touched:
            del self._entries[name]
        for name in [n for n, e in self._entry_of.items() if e.file_name in touched]:
            del self._file_of[name], self._entry_of[name]
        for entry in new:
            self._entries[entry.file_name] = entry
            for d in self.index.deletion_files(entry):
                self._file_of[d.data_file_name] = d
                self._entry_of[d.data_file_name] = entry
        self._changed = {}
        return DvIndexChanges(new, deleted)


def delete_positions(
    table: FileStoreTable,
    deletions: Mapping[tuple[bytes, int], Mapping[str, Iterable[int] | np.ndarray]],
    snapshot: Snapshot | None = None,
) -> int | None:
    """Delete rows of live data files by position, with deletion vectors, in one commit.

    ``deletions``: (partition, bucket) -> data file name -> its deleted row positions. The
    vectors are restored from ``snapshot`` (default: the latest), merged and committed;
    returns the new snapshot id, None when nothing changed. What DELETE on an append table
    with ``deletion-vectors.enabled`` does instead of rewriting files."""
    from paimon_core.exceptions import InvalidArgument

    if not table.options.deletion_vectors_enabled:
        raise InvalidArgument("Deleting rows by position needs 'deletion-vectors.enabled' = 'true'")
    if snapshot is None:
        snapshot = table.latest_snapshot()
    messages: list[CommitMessage] = []
    unaware = is_unaware_dv(table)
    appended: dict[bytes, AppendDvMaintainer] = {}
    commit = table.new_commit()
    try:
        for (partition, bucket), files in deletions.items():
            if unaware:
                maintainer = appended.get(partition)
                if maintainer is None:
                    maintainer = appended[partition] = AppendDvMaintainer.restore(
                        table, snapshot, partition
                    )
                for name, positions in files.items():
                    maintainer.notify_new_deletion(name, DeletionVector.of(_array(positions)))
                continue
            bucketed = BucketedDvMaintainer.restore(table, snapshot, partition, bucket)
            for name, positions in files.items():
                bucketed.notify_new_deletion(name, _array(positions))
            changes = bucketed.persist()
            if not changes.is_empty:
                messages.append(changes.commit_message(partition, bucket, table.options.bucket))
        for partition, maintainer in appended.items():
            changes = maintainer.persist()
            if not changes.is_empty:
                messages.append(changes.commit_message(partition, UNAWARE_BUCKET, -1))
        return commit.commit(messages) if messages else None
    except BaseException:
        commit.abort(messages)  # the index files written so far
        raise


def _array(positions: Iterable[int] | np.ndarray) -> np.ndarray:
    if isinstance(positions, np.ndarray):
        return positions
    return np.fromiter(positions, dtype=np.int64)

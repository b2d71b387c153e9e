"""What a writer hands to the committer: the files it added, per partition and bucket."""

from __future__ import annotations

from dataclasses import dataclass

from paimon_core.format.manifest import DataFileMeta, IndexManifestEntry


@dataclass(frozen=True, slots=True)
class CommitMessage:
    """Files one writer produced for one (partition, bucket).

    Messages are plain values so that they can travel from Spark executors to the driver
    (pickled) without any live state attached.

    ``compact_*``: what the writer's own compaction of the bucket changed after writing
    (Java's ``CompactIncrement``, beside the ``DataIncrement`` of the other fields): the
    committer publishes them in a COMPACT snapshot right after the data's snapshot, as
    Paimon's batch writers do. Deletion-vector index changes of that compaction go there too.

    ``changelog_files`` are the changelog files of the write (``changelog-producer`` =
    ``input``: Java's ``DataIncrement.changelogFiles``) or of the compaction
    (``full-compaction``, ``lookup``: ``CompactIncrement.changelogFiles``) the message is
    committed as; the commit lists them in the snapshot's changelog manifest list.
    """

    partition: bytes
    bucket: int
    total_buckets: int
    new_files: tuple[DataFileMeta, ...] = ()
    deleted_files: tuple[DataFileMeta, ...] = ()
    new_index_files: tuple[IndexManifestEntry, ...] = ()
    deleted_index_files: tuple[IndexManifestEntry, ...] = ()
    changelog_files: tuple[DataFileMeta, ...] = ()
    compact_before: tuple[DataFileMeta, ...] = ()
    compact_after: tuple[DataFileMeta, ...] = ()
    compact_new_index_files: tuple[IndexManifestEntry, ...] = ()
    compact_deleted_index_files: tuple[IndexManifestEntry, ...] = ()
    compact_changelog_files: tuple[DataFileMeta, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not (
            self.new_files
            or self.deleted_files
            or self.new_index_files
            or self.deleted_index_files
            or self.changelog_files
            or self.has_compaction
        )

    @property
    def has_compaction(self) -> bool:
        return bool(
            self.compact_before
            or self.compact_after
            or self.compact_new_index_files
            or self.compact_deleted_index_files
            or self.compact_changelog_files
        )

    def data_increment(self) -> CommitMessage:
        """This message without its compaction."""
        return CommitMessage(
            self.partition,
            self.bucket,
            self.total_buckets,
            self.new_files,
            self.deleted_files,
            self.new_index_files,
            self.deleted_index_files,
            self.changelog_files,
        )

    def compact_increment(self) -> CommitMessage:
        """The compaction of this message as a message of its own, in the shape
        ``FileStoreCommit.commit_compact`` takes (before files deleted, after files added)."""
        return CommitMessage(
            self.partition,
            self.bucket,
            self.total_buckets,
            new_files=self.compact_after,
            deleted_files=self.compact_before,
            new_index_files=self.compact_new_index_files,
            deleted_index_files=self.compact_deleted_index_files,
            changelog_files=self.compact_changelog_files,
        )

"""What a writer hands to the committer: the files it added, per partition and bucket."""

from __future__ import annotations

from dataclasses import dataclass

from paimon_core.format.manifest import DataFileMeta, IndexManifestEntry


@dataclass(frozen=True, slots=True)
class CommitMessage:
    """Files one writer produced for one (partition, bucket).

    Messages are plain values so that they can travel from Spark executors to the driver
    (pickled) without any live state attached.

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

    @property
    def is_empty(self) -> bool:
        return not (
            self.new_files
            or self.deleted_files
            or self.new_index_files
            or self.deleted_index_files
            or self.changelog_files
        )

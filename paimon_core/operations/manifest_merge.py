"""Folding manifest entries and merging small manifests, as Paimon's ``ManifestFileMerger``.

Without merging, every commit adds one manifest to the base list for ever, and planning and
committing slow down with the number of snapshots (pypaimon 2.1 has exactly that problem).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from paimon_core.exceptions import CommitConflict, MetadataFormatError
from paimon_core.format.manifest import FileKind, ManifestEntry, ManifestFile, ManifestFileMeta
from paimon_core.format.options import format_memory_size
from paimon_core.format.types import DataType

if TYPE_CHECKING:
    from paimon_core.table import FileStoreTable


def merge_entries(
    entries: Iterable[ManifestEntry], into: dict[tuple, ManifestEntry] | None = None
) -> dict[tuple, ManifestEntry]:
    """Fold entries in order: ADD then DELETE of one file cancel; a lone DELETE is kept.

    A lone DELETE must stay because its ADD lives in an older manifest that is not part of
    this fold. Adding a file twice is an error, as in Paimon's ``FileEntry.mergeEntries``.
    """
    folded: dict[tuple, ManifestEntry] = {} if into is None else into
    for entry in entries:
        key = entry.identifier
        if entry.kind == FileKind.ADD:
            if key in folded:
                raise CommitConflict(
                    f"Trying to add file {entry.file.file_name} which is already added"
                )
            folded[key] = entry
        elif key in folded:
            del folded[key]
        else:
            folded[key] = entry
    return folded


def manifest_may_contain(
    meta: ManifestFileMeta, partitions: Iterable[bytes], partition_types: Sequence[DataType]
) -> bool:
    """False only when the manifest's partition stats rule out every one of ``partitions``."""
    if not partition_types:
        return True
    from paimon_core.format.binary_row import deserialize_row

    stats = meta.partition_stats
    try:
        lo = deserialize_row(stats.min_values, partition_types)
        hi = deserialize_row(stats.max_values, partition_types)
    except MetadataFormatError:
        return True  # no usable partition stats (an empty row): cannot rule anything out
    for part in partitions:
        values = deserialize_row(part, partition_types)
        if all(
            v is None or mn is None or mx is None or mn <= v <= mx
            for v, mn, mx in zip(values, lo, hi)
        ):
            return True
    return False


class ManifestMerger:
    """Paimon's full and minor manifest compaction over one base manifest list (the
    legacy, unsorted merge of Paimon 2.0's ``ManifestFileMerger``; manifest sort is not
    implemented).

    The name of every manifest this merger writes is appended to ``written`` as soon as it
    exists (pass the commit's own list), so that a commit failing later, or in the middle of
    the merge, can remove them again.
    """

    def __init__(
        self,
        manifest_file: ManifestFile,
        partition_types: Sequence[DataType],
        target_file_size: int,
        merge_min_count: int,
        full_compaction_threshold: int,
        written: list[str] | None = None,
    ) -> None:
        self.manifest_file = manifest_file
        self.partition_types = list(partition_types)
        self.target_file_size = target_file_size
        self.merge_min_count = merge_min_count
        self.full_compaction_threshold = full_compaction_threshold
        self.written: list[str] = [] if written is None else written
        # id(entry) -> its Avro record, for entries read from manifests this process wrote;
        # ``_keep_alive`` holds those entries so that no id is reused meanwhile.
        self._records: dict[int, bytes] = {}
        self._keep_alive: list[Sequence[ManifestEntry]] = []

    def merge(self, metas: Sequence[ManifestFileMeta]) -> list[ManifestFileMeta]:
        try:
            full = self._try_full_compaction(metas)
            if full is not None:
                return full
            return self._minor_compaction(metas)
        finally:
            self._records.clear()
            self._keep_alive.clear()

    def _write(self, entries: list[ManifestEntry]) -> list[ManifestFileMeta]:
        if not entries:
            return []
        records = self._records
        known = [records.get(id(e)) for e in entries] if records else None
        out = self.manifest_file.write(entries, self.partition_types, known)
        self.written.extend(m.file_name for m in out)
        return out

    def _read(self, metas: Iterable[ManifestFileMeta]) -> Iterable[ManifestEntry]:
        """The entries of ``metas``; the record bytes of those this process wrote are noted
        (by entry, alive while merging), so that rewriting them copies the bytes."""
        for meta in metas:
            entries, records = self.manifest_file.read_for_rewrite(meta.file_name)
            if records is not None:
                self._records.update(zip(map(id, entries), records))
                self._keep_alive.append(entries)
            yield from entries

    def _try_full_compaction(self, metas: Sequence[ManifestFileMeta]) -> list | None:
        """Paimon 2.0's ``tryFullCompaction``: once the manifests that must change (small, or
        holding DELETE entries) reach the threshold, every deleted file is dropped with its
        ADD; a large manifest without deletes stays as it is unless it holds a deleted file.
        A file deleted and added again with the same identity keeps its last ADD (Paimon
        loses it).

        Nothing is done (None: minor compaction decides) when at most one manifest would be
        merged, so a merged table is not rewritten again.
        """
        target = self.target_file_size

        def must_change(meta: ManifestFileMeta) -> bool:
            return meta.num_deleted_files > 0 or meta.file_size < target

        delta_size = sum(m.file_size for m in metas if must_change(m))
        if delta_size < self.full_compaction_threshold:
            return None
        # How often each file was deleted: a file can come back with the same identity (a
        # file index rewritten away and back), so only as many of its ADDs go, oldest
        # first. Paimon drops every ADD of a deleted identity, the live one too.
        deleted: dict[tuple, int] = {}
        for e in self._read(m for m in metas if m.num_deleted_files > 0):
            if e.kind == FileKind.DELETE:
                deleted[e.identifier] = deleted.get(e.identifier, 0) + 1
        delete_partitions = {k[0] for k in deleted}
        result: list[ManifestFileMeta] = []
        to_merge: list[ManifestFileMeta] = []
        for meta in metas:
            if must_change(meta) or (deleted and self._may_contain(meta, delete_partitions)):
                to_merge.append(meta)
            else:
                result.append(meta)
        if len(to_merge) <= 1:
            return None
        kept: list[ManifestEntry] = []
        for meta in to_merge:
            adds = [e for e in self._read([meta]) if e.kind == FileKind.ADD]
            survivors = []
            for e in adds:
                pending = deleted.get(e.identifier, 0)
                if pending:
                    deleted[e.identifier] = pending - 1
                else:
                    survivors.append(e)
            if must_change(meta) or len(survivors) < len(adds):
                kept.extend(survivors)
            else:
                result.append(meta)
        result.extend(self._write(kept))
        return result

    def _may_contain(self, meta: ManifestFileMeta, partitions: set[bytes]) -> bool:
        return manifest_may_contain(meta, partitions, self.partition_types)

    def _minor_compaction(self, metas: Sequence[ManifestFileMeta]) -> list[ManifestFileMeta]:
        result: list[ManifestFileMeta] = []
        candidates: list[ManifestFileMeta] = []
        total = 0
        for meta in metas:
            total += meta.file_size
            candidates.append(meta)
            if total >= self.target_file_size:
                self._merge_candidates(candidates, result)
                candidates, total = [], 0
        if len(candidates) >= self.merge_min_count:
            self._merge_candidates(candidates, result)
        else:
            result.extend(candidates)
        return result

    def _merge_candidates(
        self, candidates: list[ManifestFileMeta], result: list[ManifestFileMeta]
    ) -> None:
        if len(candidates) == 1:
            result.append(candidates[0])
            return
        folded = merge_entries(self._read(candidates))
        result.extend(self._write(list(folded.values())))


def manifest_compact_dry_run(table: FileStoreTable) -> str:
    """What ``compact_manifest`` would work on, as Paimon 2.0's ``ManifestCompactDryRun``
    words it: the latest snapshot's data manifests, their deleted entries and the undersized
    ones (below ``manifest.target-file-size``)."""
    latest = table.snapshot_manager.latest_snapshot()
    if latest is None:
        return "Dry run: no snapshot exists."
    lists = table.manifest_list
    metas = lists.read(latest.base_manifest_list) + lists.read(latest.delta_manifest_list)
    if not metas:
        return "Dry run: 0 manifest files."
    target = table.options.manifest_target_file_size
    deleted = sum(m.num_deleted_files for m in metas)
    with_deleted = sum(1 for m in metas if m.num_deleted_files > 0)
    small = sum(1 for m in metas if m.file_size < target)
    size = format_memory_size(sum(m.file_size for m in metas))
    return (
        f"Dry run: {len(metas)} manifest files ({size}), {deleted} deleted entries in "
        f"{with_deleted} files, {small} undersized files (< {format_memory_size(target)})."
    )

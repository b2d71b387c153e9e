"""Folding manifest entries and merging small manifests, as Paimon's ``ManifestFileMerger``.

Without merging, every commit adds one manifest to the base list for ever, and planning and
committing slow down with the number of snapshots (pypaimon 2.1 has exactly that problem).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from paimon_core.exceptions import CommitConflict, MetadataFormatError
from paimon_core.format.manifest import FileKind, ManifestEntry, ManifestFile, ManifestFileMeta
from paimon_core.format.types import DataType


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
    """Paimon's full and minor manifest compaction over one base manifest list.

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
        i = 0
        while (
            i < len(metas)
            and metas[i].num_deleted_files == 0
            and metas[i].file_size >= self.target_file_size
        ):
            i += 1
        base, delta = list(metas[:i]), list(metas[i:])
        if sum(m.file_size for m in delta) < self.full_compaction_threshold:
            return None
        folded = merge_entries(self._read(delta))
        deleted = {k for k, e in folded.items() if e.kind == FileKind.DELETE}
        delete_partitions = {k[0] for k in deleted}
        result: list[ManifestFileMeta] = []
        to_rewrite: list[ManifestFileMeta] = []
        for meta in base:
            # A large base manifest whose entries no delete can touch stays as it is.
            if delete_partitions and self._may_contain(meta, delete_partitions):
                to_rewrite.append(meta)
            else:
                result.append(meta)
        kept = [e for e in self._read(to_rewrite) if e.identifier not in deleted]
        kept.extend(e for e in folded.values() if e.kind == FileKind.ADD)
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

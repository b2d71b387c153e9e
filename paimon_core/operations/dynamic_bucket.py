"""Dynamic buckets (``bucket = -1`` primary-key tables): Paimon's HASH index.

Every (partition, bucket) owns one index file listing the hash of each key stored there
(big-endian int32s, ``HashIndexFile``). A writer routes a known key to the bucket that holds
its hash and a new key to the first bucket still below ``dynamic-bucket.target-row-num``,
opening the lowest unused bucket id when all are full (``PartitionIndex.assign`` of a single
assigner). Each bucket that received new keys gets a new, complete index file that replaces
the old one in the index manifest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from paimon_core.exceptions import MetadataFormatError
from paimon_core.format.manifest import FileKind, IndexManifestEntry
from paimon_core.format.paths import INDEX_DIR, INDEX_PREFIX, new_file_name

if TYPE_CHECKING:
    from paimon_core.format.snapshot import Snapshot
    from paimon_core.io.fileio import FileIO
    from paimon_core.table import FileStoreTable

HASH_INDEX = "HASH"
MAX_DYNAMIC_BUCKETS = 32767 + 1  # bucket ids are Java shorts
_BE_INT32 = np.dtype(">i4")
_EMPTY = np.empty(0, dtype=np.int32)


def serialize_hash_index(hashes: np.ndarray) -> bytes:
    """Index file bytes: the distinct hashes, sorted, as big-endian int32."""
    return np.unique(np.asarray(hashes, dtype=np.int32)).astype(_BE_INT32).tobytes()


def deserialize_hash_index(data: bytes) -> np.ndarray:
    """The int32 hashes of an index file."""
    if len(data) % 4:
        raise MetadataFormatError(f"Corrupt HASH index: {len(data)} bytes is not a multiple of 4")
    return np.frombuffer(data, dtype=_BE_INT32).astype(np.int32)


def index_file_path(table_path: str, entry: IndexManifestEntry) -> str:
    return entry.external_path or f"{table_path.rstrip('/')}/{INDEX_DIR}/{entry.file_name}"


@dataclass
class _Bucket:
    """One bucket's index: the file it has now (if any) and the hashes added since."""

    entry: IndexManifestEntry | None
    hashes: np.ndarray
    added: list[np.ndarray] = field(default_factory=list)
    added_count: int = 0

    @property
    def row_count(self) -> int:
        return len(self.hashes) + self.added_count

    def add(self, hashes: np.ndarray) -> None:
        self.added.append(hashes)
        self.added_count += len(hashes)

    def all_hashes(self) -> np.ndarray:
        return np.concatenate([self.hashes, *self.added]) if self.added else self.hashes


def _sorted_lookup(hashes: np.ndarray, owners: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(hashes, kind="stable")
    return hashes[order], owners[order]


def _find(keys: np.ndarray, owners: np.ndarray, hashes: np.ndarray) -> np.ndarray:
    if not len(keys):
        return np.full(len(hashes), -1, np.int32)
    pos = np.minimum(np.searchsorted(keys, hashes), len(keys) - 1)
    return np.where(keys[pos] == hashes, owners[pos], -1).astype(np.int32)


class PartitionIndex:
    """The HASH index of one partition and the assignment state of a single assigner.

    Hashes are looked up in sorted arrays and new keys are handed out a bucket at a time,
    so a batch costs numpy work plus a loop over the buckets it fills, not over its rows.
    """

    def __init__(
        self, buckets: dict[int, _Bucket], target_row_num: int, max_buckets: int = -1
    ) -> None:
        self.buckets = buckets
        self.target_row_num = target_row_num
        self.max_buckets = max_buckets
        self._non_full = [b for b in sorted(buckets) if buckets[b].row_count < target_row_num]
        owners = [np.full(len(b.hashes), n, np.int32) for n, b in buckets.items()]
        self._known = _sorted_lookup(
            np.concatenate([_EMPTY, *(b.hashes for b in buckets.values())]),
            np.concatenate([_EMPTY, *owners]),
        )
        self._new = (_EMPTY, _EMPTY)  # keys this writer placed, kept apart: re-sorting is cheap

    def assign(self, hashes: np.ndarray) -> np.ndarray:
        """Buckets of records with key ``hashes``, in record order (new keys get buckets)."""
        hashes = np.asarray(hashes, dtype=np.int32)
        unique, first, inverse = np.unique(hashes, return_index=True, return_inverse=True)
        buckets = _find(*self._known, unique)
        unknown = buckets < 0
        if unknown.any():
            buckets[unknown] = _find(*self._new, unique[unknown])
        missing = np.flatnonzero(buckets < 0)
        if len(missing):
            # New keys are placed in arrival order, as records reach Java's assigner.
            missing = missing[np.argsort(first[missing], kind="stable")]
            placed = self._place(unique[missing])
            buckets[missing] = placed
            self._new = _sorted_lookup(
                np.concatenate([self._new[0], unique[missing]]),
                np.concatenate([self._new[1], placed]),
            )
        return buckets[inverse.reshape(-1)]

    def _place(self, new_hashes: np.ndarray) -> np.ndarray:
        out = np.empty(len(new_hashes), np.int32)
        pos = 0
        while pos < len(new_hashes):
            bucket = self._open_bucket()
            if bucket is None:
                # Every bucket is full and no new one may be opened: spread over them.
                ids = np.array(sorted(self.buckets), np.int32)
                rest = new_hashes[pos:]
                out[pos:] = ids[np.abs(rest.astype(np.int64)) % len(ids)]
                for b in ids.tolist():
                    self.buckets[b].add(rest[out[pos:] == b])
                break
            target = self.buckets[bucket]
            take = min(self.target_row_num - target.row_count, len(new_hashes) - pos)
            out[pos : pos + take] = bucket
            target.add(new_hashes[pos : pos + take])
            pos += take
        return out

    def _open_bucket(self) -> int | None:
        """The first bucket below the target (Java keeps them in order), else a new one."""
        while self._non_full:
            bucket = self._non_full[0]
            if self.buckets[bucket].row_count < self.target_row_num:
                return bucket
            self._non_full.pop(0)
        limit = MAX_DYNAMIC_BUCKETS if self.max_buckets == -1 else self.max_buckets
        if len(self.buckets) >= limit:
            return None
        bucket = next(i for i in range(limit) if i not in self.buckets)
        self.buckets[bucket] = _Bucket(None, _EMPTY)
        self._non_full.append(bucket)
        return bucket


class DynamicBucketIndex:
    """HASH indexes of the partitions one writer touches, loaded lazily from ``snapshot``."""

    def __init__(
        self,
        table: FileStoreTable,
        snapshot: Snapshot | None,
        ignore_existing: bool = False,
    ) -> None:
        self.table = table
        self.file_io: FileIO = table.file_io
        self.target_row_num = table.options.dynamic_bucket_target_row_num
        self.max_buckets = table.options.get_int("dynamic-bucket.max-buckets", -1) or -1
        self.partitions: dict[bytes, PartitionIndex] = {}
        self._entries: dict[bytes, list[IndexManifestEntry]] | None = None
        self._snapshot = None if ignore_existing else snapshot

    def _index_entries(self) -> dict[bytes, list[IndexManifestEntry]]:
        if self._entries is None:
            self._entries = {}
            snapshot = self._snapshot
            if snapshot is not None and snapshot.index_manifest:
                for e in self.table.index_manifest_file.read(snapshot.index_manifest):
                    if e.kind == FileKind.ADD and e.index_type == HASH_INDEX:
                        self._entries.setdefault(e.partition, []).append(e)
        return self._entries

    def partition(self, partition: bytes) -> PartitionIndex:
        index = self.partitions.get(partition)
        if index is None:
            buckets: dict[int, _Bucket] = {}
            for e in self._index_entries().get(partition, []):
                if e.bucket in buckets:
                    raise MetadataFormatError(
                        f"Two HASH index files for bucket {e.bucket} of one partition: "
                        f"{buckets[e.bucket].entry.file_name}, {e.file_name}"  # type: ignore[union-attr]
                    )
                data = self.file_io.read_bytes(index_file_path(self.table.path, e))
                buckets[e.bucket] = _Bucket(e, deserialize_hash_index(data))
            index = PartitionIndex(buckets, self.target_row_num, self.max_buckets)
            self.partitions[partition] = index
        return index

    def assign(self, partition: bytes, hashes: np.ndarray) -> np.ndarray:
        """Buckets for the records of ``partition`` whose trimmed-key hashes are ``hashes``."""
        return self.partition(partition).assign(hashes)

    def prepare_commit(
        self, track: Callable[[str], None]
    ) -> dict[tuple[bytes, int], tuple[IndexManifestEntry, IndexManifestEntry | None]]:
        """Write a complete new index file for every bucket with new keys.

        Returns (partition, bucket) -> (new entry, replaced entry or None). ``track`` is
        given each path before its file is written, so that a failure can remove it.
        """
        changes: dict[tuple[bytes, int], tuple[IndexManifestEntry, IndexManifestEntry | None]] = {}
        index_dir = f"{self.table.path.rstrip('/')}/{INDEX_DIR}"
        for partition, index in self.partitions.items():
            for bucket_id, bucket in index.buckets.items():
                if not bucket.added_count:
                    continue
                data = serialize_hash_index(bucket.all_hashes())
                name = new_file_name(INDEX_PREFIX)
                path = f"{index_dir}/{name}"
                track(path)
                self.file_io.write_bytes(path, data)
                entry = IndexManifestEntry(
                    FileKind.ADD, partition, bucket_id, HASH_INDEX, name, len(data), len(data) // 4
                )
                changes[(partition, bucket_id)] = (entry, bucket.entry)
        for (partition, bucket_id), (entry, _old) in changes.items():
            bucket = self.partitions[partition].buckets[bucket_id]
            bucket.hashes = np.unique(bucket.all_hashes())
            bucket.added, bucket.added_count = [], 0
            bucket.entry = entry
        return changes

"""Dynamic buckets (``bucket = -1`` primary-key tables): Paimon's HASH index.

Every (partition, bucket) owns one index file listing the hash of each key stored there
(big-endian int32s, ``HashIndexFile``). A writer routes a known key to the bucket that holds
its hash and a new key to the first bucket still below ``dynamic-bucket.target-row-num``,
opening the lowest unused bucket id when all are full (``PartitionIndex.assign`` of a single
assigner). Each bucket that received new keys gets a new, complete index file that replaces
the old one in the index manifest.

A key's hash does not determine its bucket (a new key goes to any bucket with room), so an
index file that lost hashes would silently send known keys to a second bucket. What every
writer (Java's ``PartitionIndex``/``DynamicBucketIndexMaintainer``, pypaimon, this one) keeps
true is checked when a partition's index is loaded for writing, at the cost of the index
bytes and the manifest entries the writer reads anyway: each file is 4 bytes per hash as its
entry says; a hash is in one file of the partition, once (the assigner maps a hash to one
bucket, the maintainer keeps a set); and the first and last key of every live data file are
in its own bucket's file (the maintainer adds every record's key). ``check_table`` with
``deep`` checks every key of every data file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from paimon_core.exceptions import HashIndexUnreadable, MetadataFormatError, PaimonError
from paimon_core.format.binary_row import deserialize_row
from paimon_core.format.data_files import read_data_file
from paimon_core.format.manifest import FileKind, IndexManifestEntry, ManifestEntry
from paimon_core.format.paths import INDEX_DIR, INDEX_PREFIX, new_file_name, partition_path
from paimon_core.format.types import DataType, to_arrow_type
from paimon_core.operations.bucket import hash_keys, murmur_hash, row_hash
from paimon_core.operations.read import data_file_path

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


def n_hashes(n: int) -> str:
    """``1 hash``, ``2 hashes``."""
    return "1 hash" if n == 1 else f"{n} hashes"


def index_file_path(table_path: str, entry: IndexManifestEntry) -> str:
    return entry.external_path or f"{table_path.rstrip('/')}/{INDEX_DIR}/{entry.file_name}"


def hash_index_size_problem(size: int, entry: IndexManifestEntry) -> str | None:
    """Why a HASH index file of ``size`` bytes is not the one ``entry`` describes (its
    ``file_size``, 4 bytes for each of its ``row_count`` hashes); None when it can be."""
    if size != entry.file_size:
        return f"it has {size} bytes, the index manifest says {entry.file_size}"
    if entry.file_size != 4 * entry.row_count:
        return (
            f"the index manifest says {entry.row_count} hashes in {entry.file_size} bytes "
            "(4 bytes each)"
        )
    return None


def read_hash_index(
    file_io: FileIO, path: str, entry: IndexManifestEntry, where: str = ""
) -> np.ndarray:
    """The int32 hashes of the HASH index file ``path`` that ``entry`` describes.

    ``where`` (``partition dt=1``) is added to the bucket in error messages.

    Raises:
        HashIndexUnreadable: the file is missing or its size is not what ``entry`` says.
    """
    what = f"HASH index file {path} of bucket {entry.bucket}" + (f" ({where})" if where else "")
    try:
        data = file_io.read_bytes(path)
    except FileNotFoundError:
        raise HashIndexUnreadable(f"{what} is missing") from None
    problem = hash_index_size_problem(len(data), entry)
    if problem is not None:
        raise HashIndexUnreadable(f"{what} is corrupt: {problem}")
    return deserialize_hash_index(data)


def repeated_hashes(keys: np.ndarray, owners: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Owners (first, second) of each pair of equal neighbours in the sorted ``keys``.

    ``owners[i]`` says whose ``keys[i]`` is (a bucket, a file). Equal owners are a hash held
    twice by one owner, different ones a hash two owners share; a run of ``n`` equal hashes
    makes ``n - 1`` pairs, so each owner in the run is in one of them.
    """
    if len(keys) < 2:
        return _EMPTY, _EMPTY
    at = np.flatnonzero(keys[1:] == keys[:-1])
    return owners[at], owners[at + 1]


def key_hashes(key: bytes, key_types: Sequence[DataType]) -> list[int]:
    """The HASH index entries a serialized key (a ``_MIN_KEY``/``_MAX_KEY``) may have: the
    hash of its BinaryRow bytes as stored, then of the row re-encoded from its values (the
    same for a writer that encodes keys canonically); empty when it is neither."""
    out = []
    row = key[4:]
    if len(key) > 4 and not len(row) % 4:
        out.append(murmur_hash(row))
    try:
        value_hash = row_hash(deserialize_row(key, key_types), key_types)
    except (PaimonError, ValueError, IndexError, TypeError, OverflowError):
        return out
    if value_hash not in out:
        out.append(value_hash)
    return out


@dataclass
class _Bucket:
    """One bucket's index: the file it has now (if any) and the hashes added since."""

    entry: IndexManifestEntry | None
    hashes: np.ndarray
    added: list[np.ndarray] = field(default_factory=list)
    added_count: int = 0
    rebuilt: bool = False
    """``hashes`` were read from the bucket's data files: its index file is to be written."""

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
    """HASH indexes of the partitions one writer touches, loaded lazily from ``snapshot``.

    ``live_files(partition)`` gives the live data files of a partition in ``snapshot`` (the
    writer's own scan; by default one is made): each partition's index is checked against
    them when it is loaded (see the module docstring).
    """

    def __init__(
        self,
        table: FileStoreTable,
        snapshot: Snapshot | None,
        ignore_existing: bool = False,
        live_files: Callable[[bytes], Iterable[ManifestEntry]] | None = None,
    ) -> None:
        self.table = table
        self.file_io: FileIO = table.file_io
        self.target_row_num = table.options.dynamic_bucket_target_row_num
        self.max_buckets = table.options.get_int("dynamic-bucket.max-buckets", -1) or -1
        self.partitions: dict[bytes, PartitionIndex] = {}
        self._entries: dict[bytes, list[IndexManifestEntry]] | None = None
        self._snapshot = None if ignore_existing else snapshot
        self._live_files = live_files or self._scan_live_files
        self.key_types = [table.schema.field(k).type for k in table.schema.trimmed_primary_keys]

    def _scan_live_files(self, partition: bytes) -> list[ManifestEntry]:
        from paimon_core.operations.scan import TableScan

        assert self._snapshot is not None
        return TableScan(self.table).read_entries(self._snapshot, partitions={partition})

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
        """The index of ``partition``, loaded and checked on first use.

        Raises:
            HashIndexUnreadable: an index file of the partition is missing, of another size
                than its entry says, repeats or shares hashes, or lacks a data file's key.
        """
        index = self.partitions.get(partition)
        if index is None:
            buckets: dict[int, _Bucket] = {}
            for e in self._index_entries().get(partition, []):
                if e.bucket in buckets:
                    raise MetadataFormatError(
                        f"Two HASH index files for bucket {e.bucket} of one partition: "
                        f"{buckets[e.bucket].entry.file_name}, {e.file_name}"  # type: ignore[union-attr]
                    )
                path = index_file_path(self.table.path, e)
                hashes = read_hash_index(self.file_io, path, e, self._partition_label(partition))
                buckets[e.bucket] = _Bucket(e, hashes)
            files: list[ManifestEntry] = []
            if self._snapshot is not None:
                files = [e for e in self._live_files(partition) if e.bucket >= 0]
                self._rebuild_missing(partition, buckets, files)
            index = PartitionIndex(buckets, self.target_row_num, self.max_buckets)
            if self._snapshot is not None:
                self._check(partition, index, files)
            self.partitions[partition] = index
        return index

    def _partition_label(self, partition: bytes) -> str:
        schema = self.table.schema
        if not schema.partition_keys:
            return "unpartitioned"
        types = [f.type for f in schema.partition_fields]
        values = deserialize_row(partition, types)
        name = self.table.options.partition_default_name
        return f"partition {partition_path(schema.partition_keys, values, types, name)}"

    def _index_path(self, bucket: _Bucket) -> str:
        assert bucket.entry is not None
        return index_file_path(self.table.path, bucket.entry)

    def _rebuild_missing(
        self, partition: bytes, buckets: dict[int, _Bucket], files: list[ManifestEntry]
    ) -> None:
        """Give each bucket that has live data files but no index file the hashes of its
        files' keys, to be written as its new index file with this writer's commit.

        Java's assigner reads such a bucket as empty and places its keys anew, in whatever
        bucket has room: a key then lives in two buckets. (Older versions of this writer
        left such buckets behind: a whole-table overwrite through ``write_arrow``.)
        """
        missing: dict[int, list[ManifestEntry]] = {}
        for e in files:
            if e.bucket not in buckets:
                missing.setdefault(e.bucket, []).append(e)
        if not missing:
            return
        schema = self.table.schema
        keys = [schema.field(k) for k in schema.trimmed_primary_keys]
        values = self._values(partition)
        label = self.table.identifier or self.table.path
        for bucket_id, entries in sorted(missing.items()):
            hashes = []
            for e in entries:
                by_id = {f.id: f for f in self.table.schema_manager.schema(e.file.schema_id).fields}
                columns = [(by_id[f.id].name, by_id[f.id].type) for f in keys]
                path = e.file.external_path or data_file_path(
                    self.table, values, e.bucket, e.file.file_name
                )
                data = read_data_file(self.file_io, path, columns, label)
                arrays = [data.column(i).cast(to_arrow_type(f.type)) for i, f in enumerate(keys)]
                hashes.append(hash_keys(arrays, self.key_types))
            buckets[bucket_id] = _Bucket(None, np.unique(np.concatenate(hashes)), rebuilt=True)

    def _check(self, partition: bytes, index: PartitionIndex, files: list[ManifestEntry]) -> None:
        """Refuse an index that contradicts itself or the partition's live data files."""
        where = self._partition_label(partition)
        first, second = repeated_hashes(*index._known)
        if len(first):
            same = first == second
            if same.any():
                bucket = index.buckets[int(first[same][0])]
                raise HashIndexUnreadable(
                    f"HASH index file {self._index_path(bucket)} of bucket {int(first[same][0])} "
                    f"({where}) is corrupt: it holds {n_hashes(int(same.sum()))} more than once"
                )
            a, b = sorted((int(first[0]), int(second[0])))
            shared = int(((first == first[0]) & (second == second[0])).sum())
            raise HashIndexUnreadable(
                f"HASH index files {self._index_path(index.buckets[a])} of bucket {a} and "
                f"{self._index_path(index.buckets[b])} of bucket {b} ({where}) are corrupt: "
                f"they share {n_hashes(shared)}, and a key is in one bucket only"
            )
        for e in self._lacking_keys(index, files):
            data = e.file.external_path or data_file_path(
                self.table, self._values(partition), e.bucket, e.file.file_name
            )
            bucket = index.buckets[e.bucket]  # rebuilt when it had no index file
            raise HashIndexUnreadable(
                f"HASH index file {self._index_path(bucket)} of bucket {e.bucket} ({where}) is "
                f"corrupt: it lacks the keys of data file {data}"
            )

    def _lacking_keys(
        self, index: PartitionIndex, files: Iterable[ManifestEntry]
    ) -> Iterable[ManifestEntry]:
        """The files whose first or last key is not in their own bucket's index file."""
        keys, owners = index._known
        files = [e for e in files if e.bucket >= 0]
        if not files:
            return
        # The stored bytes' hashes, vectorised; a key not found is hashed again from its
        # values before it counts as lacking.
        stored = np.zeros(2 * len(files), np.int32)
        for i, e in enumerate(files):
            for j, key in enumerate((e.file.min_key, e.file.max_key)):
                row = key[4:]
                if len(key) > 4 and not len(row) % 4:
                    stored[2 * i + j] = murmur_hash(row)
        found = _find(keys, owners, stored).reshape(-1, 2)
        for i in np.flatnonzero((found != np.array([[e.bucket] for e in files])).any(axis=1)):
            e = files[int(i)]
            for key in (e.file.min_key, e.file.max_key):
                hashes = key_hashes(key, self.key_types)
                if hashes and e.bucket not in _find(keys, owners, np.array(hashes, np.int32)):
                    yield e
                    break

    def _values(self, partition: bytes) -> tuple:
        types = [f.type for f in self.table.schema.partition_fields]
        return deserialize_row(partition, types) if types else ()

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
                if not bucket.added_count and not bucket.rebuilt:
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
            bucket.added, bucket.added_count, bucket.rebuilt = [], 0, False
            bucket.entry = entry
        return changes

"""The key checks of ``check_table`` with ``deep``: one partition at a time, what no single
file shows.

A primary key lives in one bucket of its partition: a fixed bucket is a function of the key,
and a dynamic-bucket writer (Java's ``PartitionIndex``, pypaimon, ours) sends a known key to
the bucket whose HASH index file holds its hash, and puts each new key in one bucket. So:

* ``duplicate``: a key in live data files of two buckets of one partition is read twice
  (any primary-key table; postponed rows, bucket -2, are not in a bucket yet);
* ``mismatch`` of HASH index files (dynamic buckets): a hash in the index files of two
  buckets of one partition (the writer's map keeps one), a data file's key not in its own
  bucket's index file (the writer adds every record's key), a bucket with data files and no
  index file. Either way the next write sends known keys to a second bucket.

A partition's state is what one root (a snapshot or tag) holds of it: its data files by
bucket and its HASH index files. Roots that hold the same state share it, and each file's
hashes are computed once however many states hold it: a check costs one partition's key
hashes (4 bytes a row) at a time. Keys are compared by hash, and a hash two buckets share is
confirmed by reading those files' keys again (two keys may share a hash).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from paimon_core.format.types import DataType
from paimon_core.operations.bucket import hash_keys
from paimon_core.operations.dynamic_bucket import n_hashes

__all__ = ["DUPLICATE", "KeyProblem", "KeyReader", "PartitionKeys"]

DUPLICATE = "duplicate"
MISMATCH = "mismatch"
_EXAMPLES = 3


@dataclass(frozen=True, slots=True)
class KeyProblem:
    """A problem of one partition: ``kind``, ``path``, one-line ``detail``, and the roots
    whose state of the partition has it."""

    kind: str
    path: str
    detail: str
    roots: frozenset[Hashable]


@dataclass
class _State:
    """One partition as some roots hold it.

    ``data``: bucket -> live data files; ``index``: bucket -> HASH index file, None when the
    root's index manifest could not be read; ``dynamic``: a dynamic-bucket table's root.
    """

    data: dict[int, tuple[str, ...]]
    index: dict[int, str] | None
    dynamic: bool
    roots: set[Hashable] = field(default_factory=set)


# What reads the keys of a data file again: the key columns' names, types and values.
KeyReader = Callable[[str], tuple[list[str], list[DataType], list[pa.ChunkedArray]]]


class PartitionKeys:
    """The partition states of every root, and the checks of one partition."""

    def __init__(self, partition_dir: Callable[[bytes], str]) -> None:
        self.partition_dir = partition_dir
        self.states: dict[bytes, dict[tuple, _State]] = {}
        self.key_files: set[str] = set()

    def add(
        self,
        root: Hashable,
        data: Iterable[tuple[bytes, int, str]],
        index: Iterable[tuple[bytes, int, str]] | None,
        dynamic: bool,
    ) -> None:
        """Record what ``root`` holds: live data files and HASH index files as (partition,
        bucket, path); ``index`` None when its index manifest could not be read."""
        by_part: dict[bytes, tuple[dict[int, list[str]], dict[int, str]]] = {}
        for partition, bucket, path in data:
            if bucket >= 0:
                by_part.setdefault(partition, ({}, {}))[0].setdefault(bucket, []).append(path)
                self.key_files.add(path)
        for partition, bucket, path in index or ():
            by_part.setdefault(partition, ({}, {}))[1][bucket] = path
        for partition, (files, hashes) in by_part.items():
            state_data = {b: tuple(sorted(p)) for b, p in sorted(files.items())}
            state_index = None if index is None else dict(sorted(hashes.items()))
            key = (
                tuple(state_data.items()),
                None if state_index is None else tuple(state_index.items()),
                dynamic,
            )
            states = self.states.setdefault(partition, {})
            state = states.get(key)
            if state is None:
                state = states[key] = _State(state_data, state_index, dynamic)
            state.roots.add(root)

    def partitions(self) -> list[bytes]:
        return sorted(self.states)

    def check(
        self, partition: bytes, hashes: Mapping[str, np.ndarray], read_keys: KeyReader
    ) -> list[KeyProblem]:
        """The problems of ``partition``. ``hashes``: path -> key hashes of each data file
        (every row) and the hashes of each HASH index file, for the files that could be
        read (the others are reported where they are read, and not judged here)."""
        states = list(self.states.pop(partition, {}).values())
        if not states:
            return []
        unique = {path: _sorted_unique(h) for path, h in hashes.items()}
        return [
            *self._shared_index_hashes(states, unique),
            *self._keys_not_indexed(partition, states, unique),
            *self._duplicate_keys(partition, states, unique, read_keys),
        ]

    # ------------------------------------------------------------------ HASH index files

    @staticmethod
    def _shared_index_hashes(
        states: list[_State], unique: Mapping[str, np.ndarray]
    ) -> list[KeyProblem]:
        """Index files of two buckets sharing hashes, for each state holding both."""
        files = {
            (b, p)
            for s in states
            for b, p in (s.index or {}).items()
            if p in unique and len(unique[p])
        }
        pairs: dict[tuple[str, str], int] = {}
        for _, members in _cross_bucket_runs(sorted(files), unique):
            for (_, p1), (_, p2) in _bucket_pairs(members):
                pairs[(p1, p2)] = pairs.get((p1, p2), 0) + 1
        found: dict[tuple[str, str], tuple[str, set[Hashable]]] = {}
        for s in states:
            buckets_of = {p: b for b, p in (s.index or {}).items()}
            for (p1, p2), count in pairs.items():
                if p1 in buckets_of and p2 in buckets_of:
                    for path, other in ((p1, p2), (p2, p1)):
                        detail = (
                            f"HASH index file of bucket {buckets_of[path]} shares "
                            f"{n_hashes(count)} with the one of bucket {buckets_of[other]} "
                            f"({_name(other)}): a key is in one bucket only"
                        )
                        found.setdefault((path, detail), (detail, set()))[1].update(s.roots)
        return [
            KeyProblem(MISMATCH, path, detail, frozenset(roots))
            for (path, _), (detail, roots) in sorted(found.items())
        ]

    def _keys_not_indexed(
        self, partition: bytes, states: list[_State], unique: Mapping[str, np.ndarray]
    ) -> list[KeyProblem]:
        """Data files whose keys their bucket's index file lacks; buckets without one."""
        lacking: dict[tuple[str, str], int] = {}  # (index file, data file) -> keys lacked
        out: dict[str, tuple[dict[str, int], set[Hashable], int]] = {}
        unindexed: dict[int, tuple[set[str], set[Hashable]]] = {}
        for s in states:
            if s.index is None or not (s.dynamic or s.index):
                continue
            for bucket, paths in s.data.items():
                index_path = s.index.get(bucket)
                if index_path is None:
                    files_roots = unindexed.setdefault(bucket, (set(), set()))
                    files_roots[0].update(paths)
                    files_roots[1].update(s.roots)
                    continue
                index = unique.get(index_path)
                if index is None:
                    continue  # unreadable: reported as such
                for path in paths:
                    keys = unique.get(path)
                    if keys is None:
                        continue
                    pair = (index_path, path)
                    if pair not in lacking:
                        lacking[pair] = _not_in(keys, index)
                    if lacking[pair]:
                        files, roots, _ = out.setdefault(index_path, ({}, set(), bucket))
                        files[path] = lacking[pair]
                        roots.update(s.roots)
        problems = []
        for index_path, (files, roots, bucket) in sorted(out.items()):
            detail = (
                f"HASH index file of bucket {bucket} lacks keys of {_files(len(files))} of its "
                f"bucket ({_some([f'{_name(p)}: {n}' for p, n in sorted(files.items())])}): "
                "the next write puts them in another bucket"
            )
            problems.append(KeyProblem(MISMATCH, index_path, detail, frozenset(roots)))
        directory = self.partition_dir(partition)
        for bucket, (paths, roots) in sorted(unindexed.items()):
            detail = (
                f"bucket {bucket} has {_files(len(paths))} "
                f"({_some([_name(p) for p in sorted(paths)])}) but no HASH index file: the "
                "next write puts its keys in another bucket"
            )
            path = f"{directory}/bucket-{bucket}"
            problems.append(KeyProblem(MISMATCH, path, detail, frozenset(roots)))
        return problems

    # ------------------------------------------------------------------ duplicate keys

    def _duplicate_keys(
        self,
        partition: bytes,
        states: list[_State],
        unique: Mapping[str, np.ndarray],
        read_keys: KeyReader,
    ) -> list[KeyProblem]:
        """Keys in live data files of two buckets of a state."""
        files = sorted(
            {(b, p) for s in states for b, paths in s.data.items() for p in paths if p in unique}
        )
        runs = _cross_bucket_runs(files, unique)
        if not runs:
            return []
        wanted = np.unique(np.array([h for h, _ in runs], np.int32))
        involved = sorted({m for _, members in runs for m in members})
        # key -> {bucket: files}, for keys whose hash two buckets share
        where: dict[tuple, dict[int, set[str]]] = {}
        names: list[str] = []
        for bucket, path in involved:
            try:
                names, types, columns = read_keys(path)
                if not columns or not len(columns[0]):
                    continue
                hashes = np.asarray(hash_keys(columns, types), np.int32)
            except Exception:  # reported where the file is read; cannot judge it here
                continue
            rows = pa.array(np.flatnonzero(np.isin(hashes, wanted)))
            values = [c.take(rows).to_pylist() for c in columns]
            for key in zip(*values):
                where.setdefault(key, {}).setdefault(bucket, set()).add(path)
        # keys by the files holding them: a state holds a key twice when it holds files of
        # two of its buckets
        signatures: dict[tuple[tuple[int, tuple[str, ...]], ...], list[tuple]] = {}
        for key, buckets in where.items():
            if len(buckets) > 1:
                sig = tuple((b, tuple(sorted(fs))) for b, fs in sorted(buckets.items()))
                signatures.setdefault(sig, []).append(key)
        roots: set[Hashable] = set()
        found: dict[tuple, tuple] = {}
        for s in states:
            held = {p for paths in s.data.values() for p in paths}
            for sig, keys in signatures.items():
                if sum(1 for _, fs in sig if held.intersection(fs)) > 1:
                    roots.update(s.roots)
                    found.update((k, sig) for k in keys)
        if not found:
            return []
        keys = sorted(found, key=repr)
        examples = [
            f"{_key(names, k)} in buckets "
            + ", ".join(f"{b} ({', '.join(_name(p) for p in fs)})" for b, fs in found[k])
            for k in keys[:_EXAMPLES]
        ]
        detail = (
            f"{len(keys)} primary {'key is' if len(keys) == 1 else 'keys are'} in more than "
            f"one bucket of the partition, and read more than once: {_some(examples, len(keys), '; ')}"
        )
        return [KeyProblem(DUPLICATE, self.partition_dir(partition), detail, frozenset(roots))]


def _cross_bucket_runs(
    files: list[tuple[int, str]], unique: Mapping[str, np.ndarray]
) -> list[tuple[int, list[tuple[int, str]]]]:
    """Hashes held by files of more than one bucket: (hash, its (bucket, path)s).

    ``unique[path]`` holds each file's distinct hashes, sorted. Files of one bucket share
    hashes freely (versions of an index file, levels of data): each bucket's are merged
    first, then a hash twice among the buckets' is shared; only those few are looked up in
    each file."""
    by_bucket: dict[int, list[str]] = {}
    for bucket, path in files:
        if len(unique[path]):
            by_bucket.setdefault(bucket, []).append(path)
    if len(by_bucket) < 2:
        return []
    merged = np.sort(
        np.concatenate(
            [
                unique[paths[0]]
                if len(paths) == 1
                else _sorted_unique(np.concatenate([unique[p] for p in paths]))
                for paths in by_bucket.values()
            ]
        )
    )
    shared = _sorted_unique(merged[1:][merged[1:] == merged[:-1]])
    if not len(shared):
        return []
    members: list[list[tuple[int, str]]] = [[] for _ in range(len(shared))]
    for bucket, paths in sorted(by_bucket.items()):
        for path in sorted(paths):
            held = unique[path]
            at = np.minimum(np.searchsorted(held, shared), len(held) - 1)
            for i in np.flatnonzero(held[at] == shared).tolist():
                members[i].append((bucket, path))
    return [(int(h), m) for h, m in zip(shared.tolist(), members)]


def _sorted_unique(values: np.ndarray) -> np.ndarray:
    """The distinct values, sorted (a sort and a compare: numpy's hashing ``unique`` is
    several times slower on int32 hashes)."""
    ordered = np.sort(values)
    if len(ordered) < 2:
        return ordered
    return ordered[np.r_[True, ordered[1:] != ordered[:-1]]]


def _not_in(values: np.ndarray, sorted_set: np.ndarray) -> int:
    """How many of ``values`` the sorted array ``sorted_set`` lacks."""
    if not len(sorted_set):
        return len(values)
    at = np.minimum(np.searchsorted(sorted_set, values), len(sorted_set) - 1)
    return int(np.count_nonzero(sorted_set[at] != values))


def _bucket_pairs(
    members: list[tuple[int, str]],
) -> list[tuple[tuple[int, str], tuple[int, str]]]:
    """Every pair of members of different buckets, lower bucket first."""
    ordered = sorted(members)
    return [(a, b) for i, a in enumerate(ordered) for b in ordered[i + 1 :] if a[0] != b[0]]


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _some(items: list[str], total: int | None = None, sep: str = ", ") -> str:
    """The first few ``items`` (of ``total``, default all), and how many more."""
    total = len(items) if total is None else total
    more = f"{sep}and {total - _EXAMPLES} more" if total > _EXAMPLES else ""
    return sep.join(items[:_EXAMPLES]) + more


def _files(n: int) -> str:
    return "1 data file" if n == 1 else f"{n} data files"


def _key(names: list[str], key: tuple) -> str:
    return "(" + ", ".join(f"{n}={v!r}" for n, v in zip(names, key)) + ")"

"""The live data files of a table's latest snapshot, kept between the commits of a process.

Every commit checks its files against the files live in the partitions it touches: adding a
live file again would make readers return its rows twice, and deleting a file that is gone
means another commit got there first. Reading those files from the manifests costs time in
proportion to the table, on every commit. So the state checked last is kept per table (branch) root
and moved forward instead: by the commit that published it, or by reading only the delta
manifests of the snapshots other writers committed since.
"""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING

from paimon_core.exceptions import CommitConflict
from paimon_core.format.manifest import FileKind, ManifestEntry, ManifestFileMeta
from paimon_core.operations.manifest_merge import manifest_may_contain

if TYPE_CHECKING:
    from paimon_core.format.snapshot import Snapshot
    from paimon_core.table import FileStoreTable

MAX_CATCH_UP = 32
"""Beyond this many snapshots behind, reading the live files afresh is cheaper."""

MAX_CACHED_TABLES = 8


class LiveFiles:
    """The live (added, not deleted) files of some partitions of one snapshot."""

    __slots__ = ("entries", "partitions", "snapshot", "total_buckets")

    def __init__(self, snapshot: Snapshot | None) -> None:
        self.snapshot = snapshot
        # The partitions whose files are all in ``entries``; None: every partition (an empty
        # table has them all).
        self.partitions: set[bytes] | None = None if snapshot is None else set()
        self.entries: dict[tuple, ManifestEntry] = {}
        self.total_buckets: dict[bytes, Counter[int]] = {}

    def covers(self, partition: bytes) -> bool:
        return self.partitions is None or partition in self.partitions

    def add(self, key: tuple, entry: ManifestEntry) -> None:
        self.remove(key)
        self.entries[key] = entry
        self.total_buckets.setdefault(entry.partition, Counter())[entry.total_buckets] += 1

    def remove(self, key: tuple) -> None:
        entry = self.entries.pop(key, None)
        if entry is None:
            return
        counts = self.total_buckets[entry.partition]
        counts[entry.total_buckets] -= 1
        if not counts[entry.total_buckets]:
            del counts[entry.total_buckets]

    def apply(self, changes: Mapping[tuple, ManifestEntry | None], snapshot: Snapshot) -> None:
        """Move to ``snapshot``, which made ``changes`` (key -> added entry, None: removed)."""
        for key, entry in changes.items():
            if entry is None:
                self.remove(key)
            else:
                self.add(key, entry)
        self.snapshot = snapshot


class _Cache:
    """Process-wide, a few tables: a committer takes a table's state and gives it back after,
    so no two threads ever change one state at the same time."""

    def __init__(self) -> None:
        self._states: OrderedDict[str, LiveFiles] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, path: str) -> LiveFiles | None:
        with self._lock:
            return self._states.pop(path, None)

    def give_back(self, path: str, live: LiveFiles) -> None:
        with self._lock:
            self._states[path] = live
            self._states.move_to_end(path)
            while len(self._states) > MAX_CACHED_TABLES:
                self._states.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._states.clear()


CACHE = _Cache()


def checkout(table: FileStoreTable, latest: Snapshot | None) -> LiveFiles:
    """The live files of ``latest``, owned by the caller until ``give_back``: the cached
    state moved forward when it can be, else a state that knows no partition yet."""
    cached = CACHE.take(table.branch_root)
    if cached is not None:
        if cached.snapshot == latest:
            return cached
        if _catch_up(table, cached, latest):
            return cached
    return LiveFiles(latest)


def give_back(table: FileStoreTable, live: LiveFiles) -> None:
    CACHE.give_back(table.branch_root, live)


def cover(
    table: FileStoreTable,
    live: LiveFiles,
    partitions: Collection[bytes] | None,
    manifests: Callable[[Snapshot], list[ManifestFileMeta]],
) -> None:
    """Read the files of ``partitions`` (None: all) that ``live`` does not know yet.

    ``manifests`` gives a snapshot's base + delta manifests. All or nothing: on an error
    ``live`` stays as it was.
    """
    known = live.partitions
    if known is None:
        return
    wanted = None if partitions is None else set(partitions) - known
    if wanted is not None and not wanted:
        return
    snapshot = live.snapshot
    folded: dict[tuple, ManifestEntry] = {}
    if snapshot is not None:
        types = [f.type for f in table.schema.partition_fields]
        metas = manifests(snapshot)
        if wanted is not None and types:
            metas = [m for m in metas if manifest_may_contain(m, wanted, types)]
        read = table.manifest_file.read
        keep = None if wanted is None else wanted.__contains__
        for meta in metas:
            for entry in read(meta.file_name, keep):
                key = entry.identifier
                if entry.kind != FileKind.ADD:
                    folded.pop(key, None)
                elif key in folded:
                    raise CommitConflict(
                        f"Snapshot {snapshot.snapshot_id} holds file {entry.file.file_name} "
                        "twice: the table is corrupt"
                    )
                else:
                    folded[key] = entry
    for key, entry in folded.items():
        live.add(key, entry)
    if wanted is None:
        live.partitions = None
    else:
        known |= wanted


def _catch_up(table: FileStoreTable, live: LiveFiles, latest: Snapshot | None) -> bool:
    """Apply the deltas of the snapshots committed after ``live.snapshot`` up to ``latest``.

    False when that is not possible (rollback, expired snapshots, too far behind, a delta
    that does not fit); ``live`` must then be dropped, as it may be half moved.
    """
    if latest is None:
        return False
    start = live.snapshot.snapshot_id if live.snapshot is not None else 0
    if not 0 < latest.snapshot_id - start <= MAX_CATCH_UP:
        return False
    manager = table.snapshot_manager
    if live.snapshot is not None and manager.try_snapshot(start) != live.snapshot:
        return False
    read_list, read = table.manifest_list.read, table.manifest_file.read
    for snapshot_id in range(start + 1, latest.snapshot_id + 1):
        snapshot = (
            latest if snapshot_id == latest.snapshot_id else manager.try_snapshot(snapshot_id)
        )
        if snapshot is None:
            return False
        for meta in read_list(snapshot.delta_manifest_list):
            for entry in read(meta.file_name):
                if not live.covers(entry.partition):
                    continue
                key = entry.identifier
                if (key in live.entries) == (entry.kind == FileKind.ADD):
                    return False
                if entry.kind == FileKind.ADD:
                    live.add(key, entry)
                else:
                    live.remove(key)
    live.snapshot = latest
    return True

"""Integrity check of a table: every live root (snapshot, tag, long-lived changelog, consumer,
on every branch) references only files that exist and are what their metadata claims.

No Paimon release has this (it backs ``CALL sys.check_table``, see docs/reference.md). It only reads:
a table being damaged should be described before anything is repaired, and a check that
repaired or deleted could lose the very data it is about. A corrupt metadata file is one
problem row, never an exception.

What a root needs follows what the deletions keep for it (``file_deletion``):

* a snapshot: its schema, base and delta manifest lists, their manifests, the data files of
  its folded state (with their extra files), its changelog list, manifests and changelog
  files, its index manifest and index files (deletion vectors, hash index), its statistics;
* a tag: the same, except that a changelog list which no longer exists is fine (Paimon's
  expiry deletes the changelog of a tagged snapshot, and no read of a tag needs it);
* a long-lived changelog (``changelog/changelog-N``): its changelog list, manifests and
  files; without one (no changelog producer), its delta list, manifests and the data files
  appends added there, which is what streaming readers read;
* a consumer: the snapshot (or long-lived changelog) it resumes at, ``nextSnapshot``,
  unless that is the next one to be committed.

Orphans are judged as ``remove_orphan_files`` judges them (by file name, all branches), and
only those older than the orphan-removal safety window (one day, its default ``older_than``)
are reported: a younger unreferenced file is normally a commit in progress. When some
metadata cannot be read, the files it references are unknown, so orphans needing a
reference are not reported at all (the unreadable file is).
"""

from __future__ import annotations

import datetime as dt
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.exceptions import (
    CommitConflict,
    CorruptMetadata,
    PaimonError,
    TagNotFound,
    UnsupportedFeature,
)
from paimon_core.format.binary_row import deserialize_row
from paimon_core.format.data_files import read_data_file
from paimon_core.format.deletion_vectors import (
    DELETION_VECTORS_INDEX,
    DeletionFile,
    DeletionVectorsIndexFile,
)
from paimon_core.format.manifest import FileKind, IndexManifestEntry, ManifestEntry
from paimon_core.format.paths import (
    CONSUMER_DIR,
    CONSUMER_PREFIX,
    EARLIEST_HINT,
    LATEST_HINT,
    SCHEMA_DIR,
    SCHEMA_PREFIX,
    branch_path,
)
from paimon_core.format.schema import SchemaManager, TableSchema
from paimon_core.format.snapshot import ChangelogManager, Snapshot, SnapshotManager, load_json
from paimon_core.format.statistics import Statistics
from paimon_core.format.stats import ColumnStats, StatsMode, column_stats, decode_stats
from paimon_core.format.tag import TagManager
from paimon_core.format.types import BIGINT, TINYINT, DataType
from paimon_core.io.fileio import FileStatus
from paimon_core.lifecycle.check_keys import DUPLICATE, PartitionKeys
from paimon_core.lifecycle.file_deletion import FILE_SOURCE_APPEND, TableFiles
from paimon_core.lifecycle.orphan import DAY_MILLIS, branch_names, orphan_candidates
from paimon_core.operations.bucket import hash_keys
from paimon_core.operations.dynamic_bucket import HASH_INDEX, deserialize_hash_index, n_hashes
from paimon_core.operations.manifest_merge import merge_entries
from paimon_core.operations.merge.base import SEQUENCE_NUMBER, VALUE_KIND
from paimon_core.operations.scan import stats_may_match

if TYPE_CHECKING:
    from paimon_core.table import FileStoreTable

__all__ = ["KINDS", "LiveRoot", "Problem", "check_table", "live_roots"]

MISSING, CORRUPT, MISMATCH, HINT, ORPHAN = "missing", "corrupt", "mismatch", "hint", "orphan"
KINDS = (MISSING, CORRUPT, MISMATCH, DUPLICATE, HINT, ORPHAN)
"""``missing``: a file some root needs does not exist. ``corrupt``: a file that exists but
cannot be read as what it is. ``mismatch``: a file that differs from what its metadata says
(size; with ``deep``: row count, statistics, keys, deletion-vector cardinality, HASH index
hash count; a HASH index file lacking keys of its bucket's data files or sharing hashes with
another bucket's, a bucket with data and no HASH index file: ``check_keys``).
``duplicate`` (``deep``): primary keys in live data files of two buckets of one partition,
the path being the partition's directory. ``hint``: ``EARLIEST``/``LATEST`` disagree with
the snapshot (changelog) files, or the ids between them are not contiguous. ``orphan``: a
file nothing references, older than a day."""

SNAPSHOT, TAG, CHANGELOG, CONSUMER = "snapshot", "tag", "changelog", "consumer"
_ROLE_ORDER = {SNAPSHOT: 0, CHANGELOG: 1, TAG: 2, CONSUMER: 3}
_PLURAL = {SNAPSHOT: "snapshots", TAG: "tags", CHANGELOG: "changelogs", CONSUMER: "consumers"}
# -U, -D. Built from bytes: `pa.array` of a list imports pandas (0.5 s), which the
# metadata-only shell path must not pay.
_RETRACT_KINDS = pa.Array.from_buffers(pa.int8(), 2, [None, pa.py_buffer(bytes([1, 3]))])
_FULL = StatsMode("full")
_DEEP_THREADS = 4
_T = TypeVar("_T")
# What reading a metadata file may raise when it is corrupt (a missing one raises
# FileNotFoundError, told apart).
_UNREADABLE = (PaimonError, OSError, ValueError, EOFError, KeyError, IndexError, TypeError)


@dataclass(frozen=True, slots=True)
class Problem:
    """One result row of ``check_table``.

    ``needed_by``: the live roots that need ``path`` (``snapshots 3-5, tag t1``; a branch's
    prefixed ``branch b1``), None when no root needs it (hints, orphans).
    """

    kind: str
    path: str
    needed_by: str | None
    detail: str


@dataclass(frozen=True, slots=True)
class LiveRoot:
    """Something that keeps files alive: a snapshot, tag, long-lived changelog or consumer
    of one branch (None: the main branch). ``name`` is the id or the tag/consumer name;
    ``path`` the root's own file; ``snapshot`` None for a consumer."""

    role: str
    name: str
    branch: str | None
    path: str
    snapshot: Snapshot | None = field(default=None, compare=False)

    @property
    def label(self) -> str:
        return render_roots([self])


def render_roots(roots: Iterable[LiveRoot]) -> str:
    """``snapshots 1-3, 5, tag t1, branch b1 snapshot 2``: grouped by branch and role, ids
    as ranges, so that a file every snapshot needs still makes one short row."""
    groups: dict[tuple[str, str], list[str]] = {}
    for root in roots:
        groups.setdefault((root.branch or "", root.role), []).append(root.name)
    parts = []
    for branch, role in sorted(groups, key=lambda g: (g[0], _ROLE_ORDER[g[1]])):
        names = sorted(set(groups[(branch, role)]))
        if role in (SNAPSHOT, CHANGELOG):
            items = _ranges(sorted(int(n) for n in names))
        else:
            items = names
        word = role if len(names) == 1 else _PLURAL[role]
        prefix = f"branch {branch} " if branch else ""
        parts.append(f"{prefix}{word} {', '.join(items)}")
    return ", ".join(parts)


def _ranges(ids: Sequence[int]) -> list[str]:
    out: list[str] = []
    start = prev = None
    for i in [*ids, None]:
        if start is not None and i is not None and i == prev + 1:
            prev = i
            continue
        if start is not None:
            out.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = i
    return out


class _Need(NamedTuple):
    """A file one root needs: what it is, the size its metadata records (None: unknown), and
    for deep checks the entry describing it and the schema directory of its root."""

    path: str
    what: str
    size: int | None = None
    entry: ManifestEntry | IndexManifestEntry | None = None
    schema_dir: str | None = None


def live_roots(table: FileStoreTable) -> list[LiveRoot]:
    """Every live root of the table and its branches (corrupt ones left out: see
    ``check_table``, which reports them)."""
    check = _Check(table, deep=False, orphan_before=0)
    return [r for branch in check.branches() for r in check.branch_roots(branch)]


def check_table(
    table: FileStoreTable, *, deep: bool = False, orphan_before_millis: int | None = None
) -> list[Problem]:
    """Every problem of the table, sorted by kind then path; [] for a healthy table.

    Args:
        table: any handle of the table: the table directory is checked whole, every branch.
        deep: also read every live data file (row count, statistics and keys against its
            manifest entry), every deletion-vector file (framing, checksums, cardinalities),
            and the manifest lists in full (sizes and file counts of their manifests).
        orphan_before_millis: unreferenced files modified before this epoch-millis time are
            reported (default: now minus one day, the orphan-removal safety window).

    Changes nothing on disk.
    """
    threshold = orphan_before_millis
    if threshold is None:
        threshold = int(time.time() * 1000) - DAY_MILLIS
    return _Check(table, deep, threshold).run()


class _Check:
    """One run of the check; problems are keyed by (kind, path) and collect their roots."""

    def __init__(self, table: FileStoreTable, deep: bool, orphan_before: int) -> None:
        self.table = table
        self.io = table.file_io
        self.root = table.path.rstrip("/")
        self.deep = deep
        self.orphan_before = orphan_before
        self.files = TableFiles(table)
        self.listing: dict[str, FileStatus] = {}
        self._statuses: dict[str, FileStatus | None] = {}
        self.problems: dict[tuple[str, str], tuple[list[str], set[LiveRoot]]] = {}
        # Metadata paths whose reading made problems: every root reading them again joins.
        self._known: dict[str, list[tuple[str, str]]] = {}
        self._schemas: dict[str, TableSchema | None] = {}
        self.names: set[str] = set()
        self._named_manifests: set[str] = set()
        self._named_index: set[str] = set()
        self._parsed_statistics: set[str] = set()
        self.complete = True
        self._deep_targets: dict[str, _Need] = {}
        self._deep_lists: set[str] = set()
        self.keys = PartitionKeys(self._partition_dir)

    # ------------------------------------------------------------------ reporting

    def report(self, kind: str, path: str, detail: str, root: LiveRoot | None = None) -> None:
        """One row per (kind, path): its details joined, its roots collected."""
        found = self.problems.get((kind, path))
        if found is None:
            found = self.problems[(kind, path)] = ([], set())
        if detail not in found[0]:
            found[0].append(detail)
        if root is not None:
            found[1].add(root)

    def _remember(self, path: str, kind: str, detail: str, root: LiveRoot | None) -> None:
        self._known.setdefault(path, []).append((kind, path))
        self.report(kind, path, detail, root)

    def _rejoin(self, path: str, root: LiveRoot | None) -> bool:
        """Add ``root`` to the problems reading ``path`` made; whether it made any."""
        keys = self._known.get(path)
        if keys is None:
            return False
        if root is not None:
            for key in keys:
                self.problems[key][1].add(root)
        return True

    def read(
        self, path: str, what: str, root: LiveRoot | None, read: Callable[[], _T]
    ) -> _T | None:
        """``read()``, or None with a ``missing``/``corrupt`` problem (reported once)."""
        if self._rejoin(path, root):
            return None
        try:
            return read()
        except FileNotFoundError:
            self._remember(path, MISSING, f"{what} does not exist", root)
        except _UNREADABLE as err:
            self._remember(path, CORRUPT, f"{what} cannot be read: {_one_line(err)}", root)
        self.complete = False
        return None

    def status(self, path: str) -> FileStatus | None:
        found = self.listing.get(path)
        if found is not None:
            return found
        if path in self._statuses:
            return self._statuses[path]
        try:
            found = self.io.get_status(path)
        except (FileNotFoundError, NotADirectoryError):
            found = None
        self._statuses[path] = found
        return found

    # ------------------------------------------------------------------ the run

    def run(self) -> list[Problem]:
        # Listed before the roots are read: a file committed meanwhile is then seen as used.
        self.listing = {s.path: s for s in self.io.walk(self.root) if not s.is_dir}
        roots = [r for branch in self.branches() for r in self.branch_roots(branch)]
        for root in roots:
            needs = self.needs(root)
            for need in needs:
                self.check_need(need, root)
            if self.deep and root.role in (SNAPSHOT, TAG):
                self.add_key_state(root, needs)
        if self.deep and self._deep_targets:
            bad = self.deep_check(list(self._deep_targets.values()))
            if bad:
                for root in roots:
                    for need in self.needs(root):
                        for key in bad.get(need.path, ()):
                            self.problems[key][1].add(root)
        self.check_schemas()
        self.forget_vanished_roots()
        self.find_orphans()
        rows = [
            Problem(kind, path, render_roots(roots) or None, "; ".join(details))
            for (kind, path), (details, roots) in self.problems.items()
        ]
        rows.sort(key=lambda p: (KINDS.index(p.kind), p.path))
        return rows

    def check_schemas(self) -> None:
        """Every schema file of every branch parses: the latest is the one writers use, the
        others time travel reads (those snapshots name are checked again as their need)."""
        for branch in self.branches():
            schema_dir = f"{branch_path(self.root, branch)}/{SCHEMA_DIR}"
            for schema_id in SchemaManager(self.io, self.root, branch).list_ids():
                self.schema(schema_dir, schema_id, None)

    def forget_vanished_roots(self) -> None:
        """Roots whose own file is gone by now were expired, rolled back or deleted while
        the check ran, and their files with them: that is no damage. Asked only of the
        roots of problems, so a healthy table costs nothing more."""
        involved = {r for _, roots in self.problems.values() for r in roots}
        vanished = {r for r in involved if not self.io.exists(r.path)}
        if not vanished:
            return
        for key, (_, roots) in list(self.problems.items()):
            if roots and roots <= vanished:
                del self.problems[key]
            else:
                roots -= vanished

    def branches(self) -> list[str | None]:
        """The main branch and every ``branch/branch-<name>``: the one place another kind
        of root container plugs in."""
        return [None, *sorted(branch_names(self.io, self.root))]

    def add_key_state(self, root: LiveRoot, needs: list[_Need]) -> None:
        """What the key checks need of a snapshot or tag of a primary-key table: its live
        data files and HASH index files by partition and bucket."""
        snapshot = root.snapshot
        assert snapshot is not None
        schema_dir = f"{branch_path(self.root, root.branch)}/{SCHEMA_DIR}"
        schema = self.schema(schema_dir, snapshot.schema_id, None) or self.table.schema
        if not schema.primary_keys:
            return
        data = [
            (n.entry.partition, n.entry.bucket, n.path)
            for n in needs
            if n.what == "data file" and isinstance(n.entry, ManifestEntry)
        ]
        index = None
        name = snapshot.index_manifest
        if not name or self.files.manifest_path(name) not in self._known:
            index = [
                (n.entry.partition, n.entry.bucket, n.path)
                for n in needs
                if isinstance(n.entry, IndexManifestEntry) and n.entry.index_type == HASH_INDEX
            ]
        try:
            dynamic = int(schema.options.get("bucket", "-1")) == -1
        except ValueError:
            dynamic = False
        self.keys.add(root, data, index, dynamic and not schema.cross_partition_update)

    def _partition_dir(self, partition: bytes) -> str:
        return self.files.bucket_dir(partition, 0).rsplit("/", 1)[0]

    def check_need(self, need: _Need, root: LiveRoot) -> None:
        if self._rejoin(need.path, root):
            return  # already reported as missing or unreadable
        found = self.status(need.path)
        if found is None:
            self._remember(need.path, MISSING, f"{need.what} does not exist", root)
            return
        if need.size is not None and found.size != need.size:
            self.report(
                MISMATCH,
                need.path,
                f"{need.what} has {found.size} bytes, its metadata says {need.size}",
                root,
            )
        if self.deep and need.entry is not None:
            self._deep_targets.setdefault(need.path, need)

    # ------------------------------------------------------------------ roots

    def branch_roots(self, branch: str | None) -> list[LiveRoot]:
        """The roots of one branch; corrupt root files, bad hints, gaps in the ids and
        consumers resuming at a vanished snapshot are reported on the way."""
        roots: list[LiveRoot] = []
        snapshots = SnapshotManager(self.io, self.root, branch)
        changelogs = ChangelogManager(self.io, self.root, branch)
        snapshot_ids = snapshots.list_snapshot_ids()
        changelog_ids = changelogs.list_snapshot_ids()
        for role, manager, ids in (
            (SNAPSHOT, snapshots, snapshot_ids),
            (CHANGELOG, changelogs, changelog_ids),
        ):
            for sid in ids:
                root = LiveRoot(role, str(sid), branch, manager.snapshot_path(sid))
                try:
                    snapshot = manager.try_snapshot(sid)
                except CorruptMetadata as err:
                    self._corrupt_root(root, err)
                    continue
                if snapshot is not None:
                    roots.append(_with(root, snapshot))
            self.check_hints(manager, ids)
        tags = TagManager(self.io, self.root, branch)
        for name in tags.tag_names():
            root = LiveRoot(TAG, name, branch, tags.tag_path(name))
            try:
                tag = tags.get(name)
            except TagNotFound:
                continue
            except CorruptMetadata as err:
                self._corrupt_root(root, err)
                continue
            roots.append(_with(root, tag.snapshot))
        self.check_consumers(branch, snapshots, snapshot_ids, set(changelog_ids))
        return roots

    def _corrupt_root(self, root: LiveRoot, err: Exception) -> None:
        self.report(CORRUPT, root.path, _one_line(err), root)
        self.complete = False

    def check_hints(self, manager: SnapshotManager, ids: list[int]) -> None:
        """``EARLIEST``/``LATEST`` must name the first/last id when present (absent is fine:
        readers list the directory), and the ids between must all exist: expiry, rollback
        and streaming reads walk every id from one end to the other."""
        what = manager.WHAT.lower()
        for hint, path, expected in (
            (EARLIEST_HINT, manager.earliest_hint_path, ids[0] if ids else None),
            (LATEST_HINT, manager.latest_hint_path, ids[-1] if ids else None),
        ):
            if self.status(path) is None:
                continue
            try:
                text = self.io.read_bytes(path).decode("utf-8", "replace").strip()
            except FileNotFoundError:
                continue
            if not (text.isascii() and text.isdigit()):
                self.report(HINT, path, f"{hint} holds {text[:40]!r}, not a {what} id")
            elif expected is None:
                self.report(HINT, path, f"{hint} says {text}, but there is no {what} file")
            elif int(text) != expected:
                self.report(
                    HINT, path, f"{hint} says {int(text)}, the {_end(hint)} {what} is {expected}"
                )
        if ids:
            present = set(ids)
            gaps = [i for i in range(ids[0], ids[-1] + 1) if i not in present]
            for i in gaps:
                self.report(
                    HINT,
                    manager.snapshot_path(i),
                    f"{what} {i} is missing between {what}s {ids[0]} and {ids[-1]}: the ids "
                    "must be contiguous",
                )

    def check_consumers(
        self,
        branch: str | None,
        snapshots: SnapshotManager,
        snapshot_ids: list[int],
        changelog_ids: set[int],
    ) -> None:
        directory = f"{branch_path(self.root, branch)}/{CONSUMER_DIR}"
        for name in self.io.list_names(directory):
            if not name.startswith(CONSUMER_PREFIX):
                continue
            path = f"{directory}/{name}"
            root = LiveRoot(CONSUMER, name[len(CONSUMER_PREFIX) :], branch, path)
            try:
                data = load_json(self.io.read_bytes(path))
                next_id = data.get("nextSnapshot") if isinstance(data, dict) else None
                if isinstance(next_id, bool) or not isinstance(next_id, int):
                    raise CorruptMetadata("'nextSnapshot' must be an integer")
            except FileNotFoundError:
                continue
            except CorruptMetadata as err:
                self._corrupt_root(root, err)
                continue
            latest = snapshot_ids[-1] if snapshot_ids else 0
            if next_id <= latest and next_id not in snapshot_ids and next_id not in changelog_ids:
                self.report(
                    MISSING,
                    snapshots.snapshot_path(next_id),
                    f"the consumer resumes at snapshot {next_id}, which neither a snapshot nor "
                    "a long-lived changelog holds any more",
                    root,
                )

    # ------------------------------------------------------------------ what a root needs

    def needs(self, root: LiveRoot) -> list[_Need]:
        snapshot = root.snapshot
        if snapshot is None:
            return []
        out: list[_Need] = []
        schema_dir = f"{branch_path(self.root, root.branch)}/{SCHEMA_DIR}"
        schema_ids = {snapshot.schema_id}
        files = self.files
        if root.role == CHANGELOG:
            if snapshot.changelog_manifest_list:
                entries = self.manifests_of(
                    snapshot.changelog_manifest_list,
                    snapshot.changelog_manifest_list_size,
                    "changelog manifest list",
                    root,
                    out,
                )
                for e in entries or ():
                    if e.kind == FileKind.ADD:
                        self.data_needs(e, "changelog file", schema_dir, out)
                        schema_ids.add(e.file.schema_id)
            else:
                entries = self.manifests_of(
                    snapshot.delta_manifest_list,
                    snapshot.delta_manifest_list_size,
                    "delta manifest list",
                    root,
                    out,
                )
                for e in entries or ():
                    if e.kind == FileKind.ADD and e.file.file_source in (None, FILE_SOURCE_APPEND):
                        self.data_needs(e, "data file", schema_dir, out)
                        schema_ids.add(e.file.schema_id)
            self.schema_needs(schema_dir, schema_ids, root, out)
            return out

        state: list[ManifestEntry] | None = []
        for name, size, what in (
            (snapshot.base_manifest_list, snapshot.base_manifest_list_size, "base manifest list"),
            (
                snapshot.delta_manifest_list,
                snapshot.delta_manifest_list_size,
                "delta manifest list",
            ),
        ):
            entries = self.manifests_of(name, size, what, root, out)
            state = None if entries is None or state is None else state + entries
        if state is not None:
            try:
                folded = merge_entries(state)
            except CommitConflict as err:
                self.report(CORRUPT, root.path, f"its manifests are inconsistent: {err}", root)
                self.complete = False
                folded = {}
            for e in folded.values():
                if e.kind == FileKind.ADD:
                    self.data_needs(e, "data file", schema_dir, out)
                    schema_ids.add(e.file.schema_id)
        changelog = snapshot.changelog_manifest_list
        if changelog and (root.role != TAG or self.status(files.manifest_path(changelog))):
            entries = self.manifests_of(
                changelog,
                snapshot.changelog_manifest_list_size,
                "changelog manifest list",
                root,
                out,
            )
            for e in entries or ():
                if e.kind == FileKind.ADD:
                    self.data_needs(e, "changelog file", schema_dir, out)
                    schema_ids.add(e.file.schema_id)
        if snapshot.index_manifest:
            name = snapshot.index_manifest
            path = files.manifest_path(name)
            out.append(_Need(path, "index manifest"))
            self.names.add(name)
            entries = self.read(path, "index manifest", root, lambda: files.index_manifest(name))
            for e in entries or ():
                if name not in self._named_index:
                    self.names.add(e.file_name)
                    if e.external_path:
                        self.names.add(e.external_path.rsplit("/", 1)[-1])
                if e.kind == FileKind.ADD:
                    kind = "deletion vectors" if e.index_type == DELETION_VECTORS_INDEX else "index"
                    out.append(
                        _Need(files.index_file_path(e), f"{kind} file", e.file_size, e, schema_dir)
                    )
            if entries is not None:
                self._named_index.add(name)
        if snapshot.statistics:
            name = snapshot.statistics
            path = files.statistics_path(name)
            self.names.add(name)
            out.append(_Need(path, "statistics file"))
            if name not in self._parsed_statistics:

                def parse(path: str = path) -> Statistics:
                    return Statistics.from_json(self.io.read_text(path), path)

                if self.read(path, "statistics file", root, parse) is not None:
                    self._parsed_statistics.add(name)
        self.schema_needs(schema_dir, schema_ids, root, out)
        return out

    def manifests_of(
        self, name: str, size: int | None, what: str, root: LiveRoot, out: list[_Need]
    ) -> list[ManifestEntry] | None:
        """The entries of every manifest of list ``name`` (needs appended to ``out``); None
        when the list or one of its manifests cannot be read (reported)."""
        files = self.files
        path = files.manifest_path(name)
        out.append(_Need(path, what, size))
        self.names.add(name)
        refs = self.read(path, what, root, lambda: files.manifest_list(name))
        if refs is None:
            return None
        if self.deep:
            self.deep_list(name, what, root)
        entries: list[ManifestEntry] = []
        complete = True
        for ref in refs:
            manifest = ref.file_name
            manifest_path = files.manifest_path(manifest)
            out.append(_Need(manifest_path, "manifest"))
            self.names.add(manifest)
            read = self.read(manifest_path, "manifest", root, lambda m=manifest: files.manifest(m))
            if read is None:
                complete = False
                continue
            if manifest not in self._named_manifests:
                for e in read:
                    self.names.add(e.file.file_name)
                    self.names.update(e.file.extra_files)
                self._named_manifests.add(manifest)
            entries += read
        return entries if complete else None

    def data_needs(
        self, entry: ManifestEntry, what: str, schema_dir: str, out: list[_Need]
    ) -> None:
        files = self.files
        out.append(_Need(files.data_path(entry), what, entry.file.file_size, entry, schema_dir))
        out.extend(
            _Need(p, f"extra file of {what} {entry.file.file_name}")
            for p in files.extra_paths(entry)
        )

    def schema_needs(
        self, schema_dir: str, ids: Iterable[int], root: LiveRoot, out: list[_Need]
    ) -> None:
        for schema_id in sorted(ids):
            path = f"{schema_dir}/{SCHEMA_PREFIX}{schema_id}"
            if self.status(path) is not None:
                self.schema(schema_dir, schema_id, root)
            out.append(_Need(path, f"schema {schema_id}"))

    def schema(self, schema_dir: str, schema_id: int, root: LiveRoot | None) -> TableSchema | None:
        path = f"{schema_dir}/{SCHEMA_PREFIX}{schema_id}"
        if path in self._schemas:
            self._rejoin(path, root)
            return self._schemas[path]
        manager = SchemaManager(self.io, schema_dir.rsplit("/", 1)[0])
        schema = self._schemas[path] = self.read(
            path, f"schema {schema_id}", root, lambda: manager.schema(schema_id)
        )
        return schema

    # ------------------------------------------------------------------ deep checks

    def deep_list(self, name: str, what: str, root: LiveRoot) -> None:
        """A manifest list read in full: each manifest's size and file counts as it says."""
        files = self.files
        path = files.manifest_path(name)
        if name in self._deep_lists:
            self._rejoin(f"deep:{path}", root)
            return
        self._deep_lists.add(name)
        metas = self.read(path, what, root, lambda: self.table.manifest_list.read(name))
        for meta in metas or ():
            manifest_path = files.manifest_path(meta.file_name)
            found = self.status(manifest_path)
            problems = []
            if found is not None and found.size != meta.file_size:
                problems.append(f"has {found.size} bytes, {what} {name} says {meta.file_size}")
            try:
                entries = files.manifest(meta.file_name)
            except (FileNotFoundError, *_UNREADABLE):
                entries = None  # reported where the manifest is read
            if entries is not None:
                added = sum(e.kind == FileKind.ADD for e in entries)
                deleted = len(entries) - added
                if (added, deleted) != (meta.num_added_files, meta.num_deleted_files):
                    problems.append(
                        f"adds {added} and deletes {deleted} files, {what} {name} says "
                        f"{meta.num_added_files} and {meta.num_deleted_files}"
                    )
            if problems:
                self.report(MISMATCH, manifest_path, "manifest " + "; ".join(problems), root)
                self._known.setdefault(f"deep:{path}", []).append((MISMATCH, manifest_path))

    def deep_check(self, targets: list[_Need]) -> dict[str, list[tuple[str, str]]]:
        """Data and index files read and compared with their entries (a few at a time: the
        reads release the GIL), then the keys of each partition (``check_keys``), one
        partition at a time; the problem keys by path of the files' own problems."""
        bad: dict[str, list[tuple[str, str]]] = {}

        def one(need: _Need) -> tuple[_Need, str | None, str | None, np.ndarray | None]:
            try:
                if isinstance(need.entry, IndexManifestEntry):
                    detail, hashes = self._check_index_file(need)
                else:
                    detail, hashes = self._check_data_file(need)
            except FileNotFoundError:
                return need, None, None, None  # vanished meanwhile (expired): not our business
            except UnsupportedFeature:
                return need, None, None, None  # a format this reader does not know
            except _UNREADABLE as err:
                return need, CORRUPT, f"{need.what} cannot be read: {_one_line(err)}", None
            return need, None if detail is None else MISMATCH, detail, hashes

        def keys(partition: bytes, hashes: dict[str, np.ndarray]) -> None:
            for problem in self.keys.check(partition, hashes, self._read_keys):
                for root in problem.roots:
                    self.report(problem.kind, problem.path, problem.detail, root)  # type: ignore[arg-type]

        # In partition order, a few files ahead (all threads busy across small partitions),
        # never more than one partition's hashes and the files in flight held.
        ordered = sorted(targets, key=lambda n: n.entry.partition)  # type: ignore[union-attr]
        pending = iter(ordered)
        threads = min(_DEEP_THREADS, len(ordered))
        window: deque[Future] = deque()
        current: bytes | None = None
        hashes: dict[str, np.ndarray] = {}
        with ThreadPoolExecutor(threads) as pool:

            def fill() -> None:
                while len(window) < 2 * threads:
                    need = next(pending, None)
                    if need is None:
                        return
                    window.append(pool.submit(one, need))

            fill()
            while window:
                need, kind, detail, found = window.popleft().result()
                fill()
                assert need.entry is not None
                if need.entry.partition != current:
                    if current is not None:
                        keys(current, hashes)
                    current, hashes = need.entry.partition, {}
                if kind is not None and detail is not None:
                    self.report(kind, need.path, detail)
                    bad.setdefault(need.path, []).append((kind, need.path))
                if found is not None:
                    hashes[need.path] = found
        if current is not None:
            keys(current, hashes)
        return bad

    def _check_index_file(self, need: _Need) -> tuple[str | None, np.ndarray | None]:
        entry = need.entry
        assert isinstance(entry, IndexManifestEntry)
        if entry.index_type == HASH_INDEX:
            return self._check_hash_index(need, entry)
        if entry.index_type != DELETION_VECTORS_INDEX or not entry.dv_ranges:
            return None, None
        index = DeletionVectorsIndexFile(self.io, self.root)
        wanted = [
            DeletionFile(m.data_file_name, need.path, m.offset, m.length, m.cardinality)
            for m in entry.dv_ranges
        ]
        vectors = index.read_many(wanted)
        wrong = [
            f"{d.data_file_name}: {vectors[d.data_file_name].cardinality} rows, "
            f"the index manifest says {d.cardinality}"
            for d in wanted
            if d.cardinality is not None and vectors[d.data_file_name].cardinality != d.cardinality
        ]
        return ("deletion vectors file: " + "; ".join(wrong) if wrong else None), None

    def _check_hash_index(
        self, need: _Need, entry: IndexManifestEntry
    ) -> tuple[str | None, np.ndarray]:
        """A HASH index file: 4 bytes for each hash its entry counts, each hash once (every
        writer keeps a set); its hashes for the key checks. (Its size against the entry is
        the shallow check's.)"""
        hashes = deserialize_hash_index(self.io.read_bytes(need.path))
        problems = []
        if entry.file_size != 4 * entry.row_count:
            problems.append(
                f"its index manifest entry says {entry.row_count} hashes in {entry.file_size} "
                "bytes (4 bytes each)"
            )
        elif len(hashes) != entry.row_count:
            problems.append(
                f"it holds {n_hashes(len(hashes))}, its index manifest entry says {entry.row_count}"
            )
        ordered = np.sort(hashes)
        repeated = int(np.count_nonzero(ordered[1:] == ordered[:-1]))
        if repeated:
            problems.append(f"it holds {n_hashes(repeated)} more than once")
        return ("HASH index file: " + "; ".join(problems) if problems else None), hashes

    def _read_keys(self, path: str) -> tuple[list[str], list[DataType], list[pa.ChunkedArray]]:
        """The trimmed primary key columns of data file ``path`` (a deep target)."""
        need = self._deep_targets[path]
        entry = need.entry
        assert isinstance(entry, ManifestEntry) and need.schema_dir is not None
        schema = self.schema(need.schema_dir, entry.file.schema_id, None)
        if schema is None:
            raise CorruptMetadata(f"schema {entry.file.schema_id} cannot be read")
        keys = list(schema.trimmed_primary_keys)
        types = [schema.field(k).type for k in keys]
        # The key's value columns: ``_KEY_<k>`` repeats them, and thin files
        # (``data-file.thin-mode``) have only them.
        columns = list(zip(keys, types))
        data = read_data_file(self.io, path, columns, self.table.identifier or self.root)
        return keys, types, [data.column(k) for k in keys]

    def _check_data_file(self, need: _Need) -> tuple[str | None, np.ndarray | None]:
        """The file's problems against its entry, and the hashes of its keys when the key
        checks want them."""
        entry = need.entry
        assert isinstance(entry, ManifestEntry) and need.schema_dir is not None
        meta = entry.file
        schema = self.schema(need.schema_dir, meta.schema_id, None)
        if schema is None:
            return None  # reported as a missing or corrupt schema
        fields = list(schema.fields)
        if meta.write_cols is not None:
            fields = [f for f in fields if f.name in set(meta.write_cols)]
        keys = list(schema.trimmed_primary_keys) if schema.primary_keys else []
        key_types = [schema.field(k).type for k in keys]
        # Keys are read from their value columns (thin files, ``data-file.thin-mode``, have
        # no ``_KEY_<k>``; elsewhere it repeats them).
        columns: list[tuple[str, DataType]] = []
        if keys:
            columns += [(SEQUENCE_NUMBER, BIGINT(False)), (VALUE_KIND, TINYINT(False))]
        columns += [(f.name, f.type) for f in fields]
        columns += [(k, t) for k, t in zip(keys, key_types) if k not in {f.name for f in fields}]
        data = read_data_file(self.io, need.path, columns, self.table.identifier or self.root)
        hashes = None
        if keys and need.path in self.keys.key_files:
            try:
                key_columns = [data.column(k) for k in keys]
                hashes = np.asarray(hash_keys(key_columns, key_types), np.int32)
            except (PaimonError, ValueError, TypeError, pa.ArrowException):
                hashes = None  # keys it cannot hash are not judged
        if data.num_rows != meta.row_count:
            return (
                f"{need.what} has {data.num_rows} rows, its manifest entry says {meta.row_count}",
                hashes,
            )
        problems: list[str] = []
        claimed = _decode_value_stats(meta, schema)
        if claimed is not None:
            for f, stats in zip(claimed[0], claimed[1]):
                if f.name in data.column_names:
                    problems += _stats_problems("value", f.name, stats, data.column(f.name))
        if keys:
            try:
                key_stats = decode_stats(meta.key_stats, key_types)
            except Exception:  # undecodable stats prune nothing
                key_stats = []
            for k, stats in zip(keys, key_stats):
                problems += _stats_problems("key", k, stats, data.column(k))
            if data.num_rows:
                problems += _key_problems(meta.min_key, meta.max_key, keys, key_types, data)
                retracts = pc.sum(pc.is_in(data.column(VALUE_KIND), value_set=_RETRACT_KINDS))
                deletes = retracts.as_py() or 0
                if meta.delete_row_count is not None and deletes != meta.delete_row_count:
                    problems.append(
                        f"{deletes} retract rows, its manifest entry says {meta.delete_row_count}"
                    )
        return (f"{need.what}: " + "; ".join(problems) if problems else None), hashes

    # ------------------------------------------------------------------ orphans

    def find_orphans(self) -> None:
        metadata, content = orphan_candidates(
            self.listing.values(),
            self.root,
            len(self.table.schema.partition_keys),
            self.orphan_before,
        )
        if not self.complete:
            content = []  # what unreadable metadata references is unknown
        for status in metadata:
            self.report(
                ORPHAN,
                status.path,
                f"temporary file of a failed write, last modified {_iso(status.mtime_ms)}",
            )
        for status in content:
            if status.name not in self.names:
                self.report(
                    ORPHAN,
                    status.path,
                    "referenced by no snapshot, tag or changelog of any branch, last "
                    f"modified {_iso(status.mtime_ms)}",
                )


def _with(root: LiveRoot, snapshot: Snapshot) -> LiveRoot:
    return LiveRoot(root.role, root.name, root.branch, root.path, snapshot)


def _end(hint: str) -> str:
    return "earliest" if hint == EARLIEST_HINT else "latest"


def _iso(millis: int) -> str:
    moment = dt.datetime.fromtimestamp(millis / 1000, dt.UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def _one_line(err: BaseException) -> str:
    return " ".join(str(err).split()) or type(err).__name__


def _decode_value_stats(meta: Any, schema: TableSchema) -> tuple[list, list[ColumnStats]] | None:
    """(fields, stats) the entry claims for the file's value columns (``_VALUE_STATS_COLS``:
    None is every column of its schema); None when it claims none or they do not decode."""
    cols = meta.value_stats_cols
    fields = list(schema.fields)
    if cols is not None:
        by_name = {f.name: f for f in fields}
        if not cols or not all(n in by_name for n in cols):
            return None
        fields = [by_name[n] for n in cols]
    try:
        return fields, decode_stats(meta.value_stats, [f.type for f in fields])
    except Exception:  # undecodable stats prune nothing: not a hazard
        return None


def _stats_problems(
    kind: str, name: str, claimed: ColumnStats, column: pa.ChunkedArray
) -> list[str]:
    """What in ``claimed`` the column's values contradict. Bounds need only contain the
    values (truncated strings, ``-0.0``/``0.0``): what matters is that no reader prunes a
    file holding a match, which is the scan's own test (``stats_may_match``)."""
    out = []
    actual = column_stats(column, _FULL)
    if claimed.null_count is not None and claimed.null_count != actual.null_count:
        out.append(
            f"{kind} column {name} has {actual.null_count} nulls, its stats say "
            f"{claimed.null_count}"
        )
    if actual.min is None or (claimed.min is None and claimed.max is None):
        return out
    n = len(column)
    if not (
        stats_may_match("=", actual.min, claimed, n)
        and stats_may_match("=", actual.max, claimed, n)
    ):
        out.append(
            f"{kind} column {name} holds {actual.min!r}..{actual.max!r}, its stats say "
            f"{claimed.min!r}..{claimed.max!r}"
        )
    return out


def _key_problems(
    min_key: bytes, max_key: bytes, keys: list[str], types: list[DataType], data: pa.Table
) -> list[str]:
    """A primary-key file is sorted by key: its first and last keys are the entry's."""
    out = []
    last = data.num_rows - 1
    for what, raw, row in (("min", min_key, 0), ("max", max_key, last)):
        try:
            claimed = list(deserialize_row(raw, types))
        except Exception:  # a key that does not decode is wrong too
            claimed = None
        actual = [data.column(k)[row].as_py() for k in keys]
        if claimed != actual:
            out.append(f"{what} key {actual}, its manifest entry says {claimed}")
    return out

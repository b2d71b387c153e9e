"""Plan, then apply: which files a lifecycle operation (expiry, tag deletion, rollback) removes.

Every operation first computes a ``DeletionPlan``, a plain value (printing it is the dry run),
then applies it in an order that keeps every remaining snapshot and tag readable if the
process dies at any point: the snapshot and tag files that reference the doomed files go
first, then the now unreferenced files top-down (lists, manifests, data), and the hints
last (readers check hints and fall back to a listing). A file still referenced by a
remaining snapshot or tag is never in a plan.

Which files go follows Paimon 2.0.0 (``ExpireSnapshotsImpl``, ``SnapshotDeletion``,
``ExpireChangelogImpl``, ``ChangelogDeletion``, ``TagManager.deleteTag`` + ``TagDeletion``,
``FileDeletionBase``), with deliberate differences that only keep more files:

* the changelog files of a *tagged* expired snapshot or changelog are kept (Paimon deletes
  them although the tag still names its changelog list) and removed with the tag instead;
* a tag deletion, and a snapshot expiry that is not decoupled, never delete what a
  long-lived changelog (``changelog/changelog-N``) still reads (``changelog_usage``).
"""

from __future__ import annotations

import logging
import time
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields, replace
from functools import partial
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from paimon_core.exceptions import CorruptMetadata, PaimonError
from paimon_core.format.branch import list_branches
from paimon_core.format.manifest import (
    MANIFEST_LIST_VERSION,
    MANIFEST_VERSION,
    AvroArray,
    AvroField,
    AvroRecord,
    FileKind,
    IndexManifestEntry,
    ManifestEntry,
    decode_avro,
    read_avro_file,
)
from paimon_core.format.paths import (
    CHANGELOG_DIR,
    DEFAULT_BRANCH,
    INDEX_DIR,
    MANIFEST_DIR,
    SNAPSHOT_DIR,
    STATISTICS_DIR,
    TAG_DIR,
    branch_path,
    bucket_dir_name,
    is_main_branch,
    partition_path,
)
from paimon_core.format.snapshot import ChangelogManager, SnapshotManager, snapshot_to_json
from paimon_core.format.tag import Tag, TagManager
from paimon_core.io.fileio import FileIO, LocalFileIO
from paimon_core.operations.manifest_merge import merge_entries

if TYPE_CHECKING:
    from paimon_core.format.snapshot import Snapshot
    from paimon_core.table import FileStoreTable

__all__ = [
    "DeletionPlan",
    "FileUsage",
    "ManifestRef",
    "TableFiles",
    "TagGuard",
    "branch_usage",
    "changelog_usage",
    "delete_quietly",
    "files_in_use",
    "find_skipping_tags",
    "keep_other_branches",
    "other_branches_usage",
    "plan_changelog_expiry",
    "plan_expiry",
    "plan_removal",
    "plan_tag_deletion",
    "without_files",
]

logger = logging.getLogger(__name__)
_T = TypeVar("_T")

# Files that reference others: deleted first, in the order given, and any failure stops.
_REFERENCING = ("snapshot_files", "tag_files")
# Unreferenced once the above are gone: top-down, failures only logged (a leftover is an orphan).
_CONTENT = (
    "manifest_lists",
    "manifests",
    "index_manifests",
    "statistics_files",
    "data_files",
    "changelog_files",
    "index_files",
)
FILE_SOURCE_APPEND = 0  # Java ``FileSource.APPEND``; COMPACT is 1
_PARALLEL_DELETES = 16
_PARALLEL_EXISTS = 16
_PROBE_DELETES = 32
_SLOW_DELETE_SECONDS = 0.0002  # a local unlink from the page cache takes ~10 us


class ManifestRef(NamedTuple):
    """The part of a manifest-list record that deletion needs."""

    file_name: str
    num_added_files: int
    num_deleted_files: int


# Expiry reads one or two lists per expired snapshot: decoding only these fields (the
# partition stats are skipped) makes reading them about twice as fast.
_REF_SPEC = AvroRecord(
    ManifestRef,
    (
        AvroField("_VERSION", required=True, expect=MANIFEST_LIST_VERSION, arg=False),
        AvroField("_FILE_NAME", required=True),
        AvroField("_NUM_ADDED_FILES", required=True),
        AvroField("_NUM_DELETED_FILES", required=True),
    ),
    "manifest list",
)


class _ExpireFile(NamedTuple):
    file_name: str
    extra_files: tuple[str, ...]
    file_source: int | None
    external_path: str | None


class ExpireEntry(NamedTuple):
    """Java's ``ExpireFileEntry``: what expiry needs of a manifest entry (no stats)."""

    kind: FileKind
    partition: bytes
    bucket: int
    file: _ExpireFile


# Expiry reads the delta manifest of every expired snapshot: skipping the statistics and
# keys makes decoding them about twice as fast.
_EXPIRE_ENTRY_SPEC = AvroRecord(
    ExpireEntry,
    (
        AvroField("_VERSION", required=True, expect=MANIFEST_VERSION, arg=False),
        AvroField("_KIND", "kind", required=True),
        AvroField("_PARTITION", required=True),
        AvroField("_BUCKET", required=True),
        AvroField(
            "_FILE",
            AvroRecord(
                _ExpireFile,
                (
                    AvroField("_FILE_NAME", required=True),
                    AvroField("_EXTRA_FILES", AvroArray(), default=()),
                    AvroField("_FILE_SOURCE"),
                    AvroField("_EXTERNAL_PATH"),
                ),
                "manifest",
            ),
            required=True,
        ),
    ),
    "manifest",
)


@dataclass(frozen=True, slots=True)
class DeletionPlan:
    """Paths to delete grouped by kind, plus files to write: long-lived changelogs (path and
    JSON) before the snapshot file of the same id goes, and hint files afterwards.

    ``snapshot_files`` are deleted in the order given (oldest first for expiry, newest first
    for rollback) so that the remaining snapshot ids stay contiguous at every moment; a
    changelog of an expiring snapshot is written just before its snapshot file is deleted,
    so that every id stays readable as one or the other.
    """

    snapshot_files: tuple[str, ...] = ()
    tag_files: tuple[str, ...] = ()
    manifest_lists: tuple[str, ...] = ()
    manifests: tuple[str, ...] = ()
    index_manifests: tuple[str, ...] = ()
    statistics_files: tuple[str, ...] = ()
    data_files: tuple[str, ...] = ()
    changelog_files: tuple[str, ...] = ()
    index_files: tuple[str, ...] = ()
    hints: tuple[tuple[str, int], ...] = ()
    changelogs: tuple[tuple[str, str], ...] = ()

    def files(self) -> list[str]:
        """Every path of the plan, in the order ``apply`` deletes them."""
        return [p for kind in (*_REFERENCING, *_CONTENT) for p in getattr(self, kind)]

    @property
    def is_empty(self) -> bool:
        return (
            not self.hints
            and not self.changelogs
            and not any(getattr(self, k) for k in (*_REFERENCING, *_CONTENT))
        )

    def merge(self, other: DeletionPlan) -> DeletionPlan:
        """Both plans in one (paths deduplicated, order kept; ``other``'s hints win)."""
        kinds = {
            kind: tuple(dict.fromkeys((*getattr(self, kind), *getattr(other, kind))))
            for kind in (*_REFERENCING, *_CONTENT)
        }
        hints = dict(self.hints)
        hints.update(other.hints)
        changelogs = dict(self.changelogs)
        changelogs.update(other.changelogs)
        return DeletionPlan(
            **kinds, hints=tuple(hints.items()), changelogs=tuple(changelogs.items())
        )

    def summary(self) -> str:
        """One line: the number of files of each non-empty kind and the hint updates."""
        parts = [
            f"{len(getattr(self, k))} {k.replace('_', ' ')}"
            for k in (*_REFERENCING, *_CONTENT)
            if getattr(self, k)
        ]
        if self.changelogs:
            parts.append(f"{len(self.changelogs)} changelogs to write")
        parts += [f"{path.rsplit('/', 1)[-1]}={value}" for path, value in self.hints]
        return "DeletionPlan(" + (", ".join(parts) or "nothing") + ")"

    def __str__(self) -> str:
        lines = [self.summary()]
        for kind in (*_REFERENCING, *_CONTENT):
            paths = getattr(self, kind)
            if paths:
                lines.append(f"{kind}:")
                lines.extend(f"  {p}" for p in paths)
        lines.extend(f"write {path}" for path, _ in self.changelogs)
        lines.extend(f"write {path} = {value}" for path, value in self.hints)
        return "\n".join(lines)

    def apply(self, file_io: FileIO, guard: TagGuard | None = None) -> int:
        """Delete everything in crash-safe order; returns how many files were deleted.

        A failure to delete a snapshot or tag file raises before any file it references is
        touched. Later ``OSError``s are logged and skipped: those files are no longer
        referenced, so leaving one behind only makes an orphan. ``guard``: once the snapshot
        and tag files are gone, the files of tags created since planning are kept.
        """
        deleted = 0
        changelogs = {_version_of(path): (path, text) for path, text in self.changelogs}
        for path in self.snapshot_files:
            changelog = changelogs.pop(_version_of(path), None)
            if changelog is not None:
                file_io.overwrite_atomic(changelog[0], changelog[1].encode("utf-8"))
            deleted += file_io.delete(path)
        for path, text in changelogs.values():
            file_io.overwrite_atomic(path, text.encode("utf-8"))
        for path in self.tag_files:
            deleted += file_io.delete(path)
        kept = guard.usage_of_new_tags().all_paths() if guard is not None else frozenset()
        for kind in _CONTENT:
            paths = getattr(self, kind)
            if kept:
                paths = [p for p in paths if p not in kept]
            deleted += delete_quietly(file_io, paths)
        for path, value in self.hints:
            try:
                file_io.overwrite_atomic(path, str(value).encode())
            except OSError as err:
                logger.warning("Cannot update hint %s: %s", path, err)
        return deleted


def _version_of(path: str) -> str:
    """``7`` of ``.../snapshot/snapshot-7`` and of ``.../changelog/changelog-7``."""
    return path.rsplit("-", 1)[-1]


def delete_quietly(file_io: FileIO, paths: Sequence[str]) -> int:
    """Delete unreferenced files; ``OSError``s are logged.

    Parallel on remote file systems. On a local disk deletes are usually too quick for
    threads to pay, but a busy journal can make each unlink wait for milliseconds: the first
    few are timed and, when slow, the rest overlap in a thread pool.
    """

    def one(path: str) -> bool:
        try:
            return file_io.delete(path)
        except OSError as err:
            logger.warning("Cannot delete %s: %s", path, err)
            return False

    if len(paths) <= 1:
        return sum(map(one, paths))
    deleted = 0
    if isinstance(file_io, LocalFileIO):
        probe, paths = paths[:_PROBE_DELETES], paths[_PROBE_DELETES:]
        start = time.perf_counter()
        deleted = sum(map(one, probe))
        if not paths or time.perf_counter() - start < _SLOW_DELETE_SECONDS * len(probe):
            return deleted + sum(map(one, paths))
    with ThreadPoolExecutor(min(_PARALLEL_DELETES, len(paths))) as pool:
        return deleted + sum(pool.map(one, paths))


@dataclass(frozen=True, slots=True)
class FileUsage:
    """Full paths of the files some snapshots or tags need, by kind (as ``DeletionPlan``)."""

    manifest_lists: frozenset[str] = frozenset()
    manifests: frozenset[str] = frozenset()
    index_manifests: frozenset[str] = frozenset()
    statistics_files: frozenset[str] = frozenset()
    data_files: frozenset[str] = frozenset()
    changelog_files: frozenset[str] = frozenset()
    index_files: frozenset[str] = frozenset()

    def union(self, other: FileUsage) -> FileUsage:
        return FileUsage(
            **{f.name: getattr(self, f.name) | getattr(other, f.name) for f in fields(self)}
        )

    def all_paths(self) -> frozenset[str]:
        return frozenset().union(*(getattr(self, f.name) for f in fields(self)))


@dataclass
class _Delta:
    """What one snapshot's delta did: files it removed (with extras) and files it committed.

    ``appended``: the removed files written by appends (``fileSource`` APPEND or unknown),
    which a decoupled changelog of a table without changelog producer still reads.
    """

    deleted: dict[str, tuple[str, ...]] = field(default_factory=dict)
    committed: set[str] = field(default_factory=set)
    appended: set[str] = field(default_factory=set)


class TableFiles:
    """A table's metadata read at most once per file, and the paths of what it references.

    Manifest lists, manifests and index manifests are immutable once written, so one
    instance can cache them for a whole operation. Missing files raise ``FileNotFoundError``.
    """

    def __init__(self, table: FileStoreTable) -> None:
        self.table = table
        self.file_io = table.file_io
        root = table.path.rstrip("/")
        self.root = root
        self.manifest_dir = f"{root}/{MANIFEST_DIR}"
        self.index_dir = f"{root}/{INDEX_DIR}"
        self.statistics_dir = f"{root}/{STATISTICS_DIR}"
        schema = table.schema
        self._partition_keys = list(schema.partition_keys)
        self._partition_types = [f.type for f in schema.partition_fields]
        self._default_partition = table.options.partition_default_name
        self._index_in_data_dir = table.options.get_bool("index-file-in-data-file-dir", False)
        self._lists: dict[str, list[ManifestRef]] = {}
        self._manifests: dict[str, list[ManifestEntry]] = {}
        self._expire_entries: dict[str, list[ExpireEntry]] = {}
        self._index: dict[str, list[IndexManifestEntry]] = {}
        self._bucket_dirs: dict[tuple[bytes, int], str] = {}
        self._states: dict[tuple, frozenset[str]] = {}
        self._usages: dict[tuple, FileUsage] = {}
        self._present: set[str] = set()

    # ------------------------------------------------------------------ cached reads

    def manifest_list(self, name: str) -> list[ManifestRef]:
        refs = self._lists.get(name)
        if refs is None:
            refs = self._lists[name] = read_avro_file(
                self.file_io, self.manifest_path(name), partial(decode_avro, spec=_REF_SPEC)
            )
        return refs

    def manifest(self, name: str) -> list[ManifestEntry]:
        entries = self._manifests.get(name)
        if entries is None:
            entries = self._manifests[name] = self.table.manifest_file.read(name)
        return entries

    def expire_entries(self, name: str) -> list[ExpireEntry]:
        """The manifest's entries without statistics (``ExpireFileEntry``)."""
        entries = self._expire_entries.get(name)
        if entries is None:
            entries = self._expire_entries[name] = read_avro_file(
                self.file_io,
                self.manifest_path(name),
                partial(decode_avro, spec=_EXPIRE_ENTRY_SPEC),
            )
        return entries

    def index_manifest(self, name: str) -> list[IndexManifestEntry]:
        entries = self._index.get(name)
        if entries is None:
            entries = self._index[name] = self.table.index_manifest_file.read(name)
        return entries

    def try_manifest_list(self, name: str | None) -> list[ManifestRef]:
        """The list, or [] when it is missing (a crashed earlier run may have removed it)."""
        if not name:
            return []
        try:
            return self.manifest_list(name)
        except FileNotFoundError:
            logger.warning("Manifest list %s is missing; its files are left alone", name)
            return []

    def require_metadata(self, named_by: Mapping[str, Snapshot]) -> None:
        """Check that the manifest lists and index manifest each snapshot names exist;
        ``named_by`` maps the file naming a snapshot (a tag file) to the snapshot.

        A tag rewritten to name a snapshot the table never had, or whose lists are gone,
        protects nothing: an operation trusting it would delete what the real tag kept.

        Raises:
            CorruptMetadata: a named file is missing, naming the file that names it.
        """
        wanted: dict[str, str] = {}
        for owner, snapshot in named_by.items():
            for name in (
                snapshot.base_manifest_list,
                snapshot.delta_manifest_list,
                snapshot.changelog_manifest_list,
                snapshot.index_manifest,
            ):
                if name and name not in self._present:
                    wanted.setdefault(name, owner)
        if not wanted:
            return
        names = list(wanted)
        paths = [self.manifest_path(n) for n in names]
        if isinstance(self.file_io, LocalFileIO) or len(paths) < 2:
            found = list(map(self.file_io.exists, paths))
        else:  # an object store answers each in milliseconds: ask in parallel
            with ThreadPoolExecutor(min(_PARALLEL_EXISTS, len(paths))) as pool:
                found = list(pool.map(self.file_io.exists, paths))
        for name, there in zip(names, found, strict=True):
            if not there and self.file_io.exists(wanted[name]):  # else: deleted meanwhile
                raise CorruptMetadata(
                    f"Tag file {wanted[name]} is corrupt: it names {name}, which does not "
                    "exist; repair or delete the tag (nothing was deleted)"
                )
            if there:
                self._present.add(name)

    # ------------------------------------------------------------------ paths

    def manifest_path(self, name: str) -> str:
        return f"{self.manifest_dir}/{name}"

    def statistics_path(self, name: str) -> str:
        return f"{self.statistics_dir}/{name}"

    def bucket_dir(self, partition: bytes, bucket: int) -> str:
        key = (partition, bucket)
        path = self._bucket_dirs.get(key)
        if path is None:
            if self._partition_keys:
                from paimon_core.format.binary_row import deserialize_row

                values = deserialize_row(partition, self._partition_types)
                part = partition_path(
                    self._partition_keys, values, self._partition_types, self._default_partition
                )
                path = f"{self.root}/{part}/{bucket_dir_name(bucket)}"
            else:
                path = f"{self.root}/{bucket_dir_name(bucket)}"
            self._bucket_dirs[key] = path
        return path

    def data_path(self, entry: ManifestEntry | ExpireEntry) -> str:
        f = entry.file
        if f.external_path:
            return f.external_path
        return f"{self.bucket_dir(entry.partition, entry.bucket)}/{f.file_name}"

    def extra_paths(self, entry: ManifestEntry | ExpireEntry) -> tuple[str, ...]:
        """Extra files (file indexes) sit next to their data file, also for external paths."""
        extras = entry.file.extra_files
        if not extras:
            return ()
        f = entry.file
        directory = (
            f.external_path.rsplit("/", 1)[0]
            if f.external_path
            else self.bucket_dir(entry.partition, entry.bucket)
        )
        return tuple(f"{directory}/{name}" for name in extras)

    def index_file_path(self, entry: IndexManifestEntry) -> str:
        if entry.external_path:
            return entry.external_path
        if self._index_in_data_dir:
            return f"{self.bucket_dir(entry.partition, entry.bucket)}/{entry.file_name}"
        return f"{self.index_dir}/{entry.file_name}"

    # ------------------------------------------------------------------ what snapshots use

    def data_manifests(self, snapshot: Snapshot) -> list[ManifestRef]:
        return [
            *self.manifest_list(snapshot.base_manifest_list),
            *self.manifest_list(snapshot.delta_manifest_list),
        ]

    def data_files(self, snapshot: Snapshot) -> frozenset[str]:
        """Paths (extra files included) of the snapshot's full state: base + delta folded."""
        key = (snapshot.base_manifest_list, snapshot.delta_manifest_list)
        state = self._states.get(key)
        if state is None:
            folded = merge_entries(
                e for m in self.data_manifests(snapshot) for e in self.manifest(m.file_name)
            )
            paths: list[str] = []
            for e in folded.values():
                if e.kind == FileKind.ADD:
                    paths.append(self.data_path(e))
                    paths.extend(self.extra_paths(e))
            state = self._states[key] = frozenset(paths)
        return state

    def added_files(self, snapshot: Snapshot) -> frozenset[str]:
        """Paths (extra files included) of the files the snapshot's delta added."""
        paths: list[str] = []
        for meta in self.manifest_list(snapshot.delta_manifest_list):
            for e in self.expire_entries(meta.file_name):
                if e.kind == FileKind.ADD:
                    paths.append(self.data_path(e))
                    paths.extend(self.extra_paths(e))
        return frozenset(paths)

    def metadata_paths(self, snapshot: Snapshot) -> set[str]:
        """Paimon's manifest "skipping set" of a snapshot: its data manifest lists and
        manifests, index manifest and index files, and statistics file (no changelog)."""
        out = {
            self.manifest_path(snapshot.base_manifest_list),
            self.manifest_path(snapshot.delta_manifest_list),
        }
        out.update(self.manifest_path(m.file_name) for m in self.data_manifests(snapshot))
        if snapshot.index_manifest:
            out.add(self.manifest_path(snapshot.index_manifest))
            out.update(map(self.index_file_path, self.index_manifest(snapshot.index_manifest)))
        if snapshot.statistics:
            out.add(self.statistics_path(snapshot.statistics))
        return out

    def changelog_usage(self, snapshot: Snapshot) -> tuple[set[str], set[str], set[str]]:
        """(changelog manifest list, its manifests, the changelog files it adds) as paths."""
        name = snapshot.changelog_manifest_list
        if not name:
            return set(), set(), set()
        metas = self.manifest_list(name)
        files: set[str] = set()
        for m in metas:
            for e in self.manifest(m.file_name):
                if e.kind == FileKind.ADD:
                    files.add(self.data_path(e))
                    files.update(self.extra_paths(e))
        return {self.manifest_path(name)}, {self.manifest_path(m.file_name) for m in metas}, files

    def usage(self, snapshot: Snapshot, strict: bool = True, full_state: bool = True) -> FileUsage:
        """Everything one snapshot (or tag) needs to be read in full, changelog included.

        ``strict=False`` is for snapshots being removed: parts whose metadata is already
        missing count as empty (their files stay, as orphans) instead of raising.
        ``full_state=False`` counts only the data files its delta added (the snapshot's
        predecessor, whose usage the caller has, holds the rest).
        """
        key = (
            strict,
            full_state,
            snapshot.base_manifest_list,
            snapshot.delta_manifest_list,
            snapshot.changelog_manifest_list,
            snapshot.index_manifest,
            snapshot.statistics,
        )
        cached = self._usages.get(key)
        if cached is not None:
            return cached

        def part(read: Callable[[], _T], empty: _T) -> _T:
            if strict:
                return read()
            try:
                return read()
            except (FileNotFoundError, PaimonError) as err:
                logger.warning("Snapshot %d is incomplete: %s", snapshot.snapshot_id, err)
                return empty

        lists = {
            self.manifest_path(snapshot.base_manifest_list),
            self.manifest_path(snapshot.delta_manifest_list),
        }
        manifests = {
            self.manifest_path(m.file_name)
            for name in (snapshot.base_manifest_list, snapshot.delta_manifest_list)
            for m in part(lambda name=name: self.manifest_list(name), [])
        }
        cl_list, cl_manifests, cl_files = part(
            lambda: self.changelog_usage(snapshot), (set(), set(), set())
        )
        index_manifests: set[str] = set()
        index_files: list[str] = []
        if snapshot.index_manifest:
            index_manifests.add(self.manifest_path(snapshot.index_manifest))
            entries = part(lambda: self.index_manifest(snapshot.index_manifest), [])
            index_files.extend(map(self.index_file_path, entries))
        usage = self._usages[key] = FileUsage(
            manifest_lists=frozenset(lists | cl_list),
            manifests=frozenset(manifests | cl_manifests),
            index_manifests=frozenset(index_manifests),
            statistics_files=frozenset(
                {self.statistics_path(snapshot.statistics)} if snapshot.statistics else ()
            ),
            data_files=part(
                lambda: self.data_files(snapshot) if full_state else self.added_files(snapshot),
                frozenset(),
            ),
            changelog_files=frozenset(cl_files),
            index_files=frozenset(index_files),
        )
        return usage

    def delta_changes(self, snapshot: Snapshot, only_with_deletes: bool) -> _Delta | None:
        """Files the snapshot's delta deleted (by path, in Paimon's entry order) and files it
        committed (added without also deleting them: a level upgrade re-adds a file).

        With ``only_with_deletes`` a delta without DELETE entries is not read (empty result).
        None when its list or a manifest is missing.
        """
        try:
            metas = self.manifest_list(snapshot.delta_manifest_list)
            if only_with_deletes and not any(m.num_deleted_files for m in metas):
                return _Delta()
            entries = [e for m in metas for e in self.expire_entries(m.file_name)]
        except FileNotFoundError:
            logger.warning("Delta of snapshot %d is incomplete", snapshot.snapshot_id)
            return None
        delta = _Delta()
        added: set[str] = set()
        removed: set[str] = set()
        for e in entries:
            path = self.data_path(e)
            if e.kind == FileKind.ADD:
                delta.deleted.pop(path, None)
                added.add(path)
            else:
                delta.deleted[path] = self.extra_paths(e)
                removed.add(path)
                if e.file.file_source in (None, FILE_SOURCE_APPEND):
                    delta.appended.add(path)
        delta.committed = added - removed
        return delta


class TagGuard:
    """Keeps the files of tags created while a deletion runs, between processes too.

    A deletion plans from the tags it lists; a tag created after that listing, on a
    snapshot the deletion removes, would lose its files. Both sides follow one protocol:
    the deletion removes the snapshot and tag files first and then lists the tags again
    (``usage_of_new_tags``: create the guard *before* planning), and a tag creator, after
    writing the tag, checks that what it tagged is still held by its snapshot file or
    another tag, withdrawing the tag otherwise (``tag_management``). If the creator's check
    saw the snapshot file, the deletion had not yet removed it, so its second listing sees
    the tag; if not, the tag is withdrawn (and what the deletion kept for it is left as
    orphans for ``remove_orphan_files``: the safe side). This needs only atomic create and a consistent
    listing, so it holds on local disks and on strongly consistent object stores (S3).

    The same protocol covers branches: a branch created (or written, renamed, fast-forwarded)
    while the deletion runs changes the listing of the other branches' metadata
    (``_branch_listing``), and then everything the other branches use is kept; the branch
    creator checks afterwards that the tag or snapshot it copied is still held
    (``branch_management``).
    """

    def __init__(self, table: FileStoreTable, files: TableFiles | None = None) -> None:
        self._table = table
        self._files = files
        self._seen = frozenset(_tag_states(table))
        self._branches = _branch_listing(table)

    def usage_of_new_tags(self) -> FileUsage:
        """Everything the tags created or re-pointed since the guard was made need, and
        everything the other branches use when their metadata changed meanwhile.

        Raises when such a tag's metadata cannot be read: nothing more is deleted then.
        """
        files = self._files or TableFiles(self._table)
        new = [
            snapshot
            for name, snapshot in _tag_states(self._table)
            if (name, snapshot) not in self._seen
        ]
        usage = FileUsage()
        if new:
            logger.info("Keeping the files of %d tag(s) created during the deletion", len(new))
            usage = files_in_use(self._table, new, files)
        if _branch_listing(self._table) != self._branches:
            logger.info("Branches changed during the deletion: keeping all they use")
            usage = usage.union(other_branches_usage(self._table, files))
        return usage


def _tag_states(table: FileStoreTable) -> list[tuple[str, Snapshot]]:
    return [(name, tag.snapshot) for name, tag in table.tag_manager.list_tags().items()]


_BRANCH_METADATA_DIRS = (SNAPSHOT_DIR, TAG_DIR, CHANGELOG_DIR)


def _branch_listing(table: FileStoreTable) -> frozenset[tuple[str, str, int, int]]:
    """What changes when another branch is created, renamed, deleted or gets a snapshot,
    tag or changelog: (branch, file, size, mtime) of their metadata directories."""
    io, root = table.file_io, table.path.rstrip("/")
    out: set[tuple[str, str, int, int]] = set()
    for branch in _other_branches(table):
        base = branch_path(root, branch)
        out.add((branch, "", 0, 0))
        for directory in _BRANCH_METADATA_DIRS:
            for status in io.list_status(f"{base}/{directory}"):
                out.add((branch, f"{directory}/{status.name}", status.size, status.mtime_ms))
    return frozenset(out)


def _other_branches(table: FileStoreTable) -> list[str]:
    """Every branch but the table's own, ``main`` included when the table is a branch."""
    own = table.branch
    names = [DEFAULT_BRANCH, *list_branches(table.file_io, table.path)]
    return [name for name in names if name != own]


class _UsageBuilder:
    """``FileUsage`` accumulated in mutable sets (a union per snapshot would copy them)."""

    def __init__(self) -> None:
        self.kinds: dict[str, set[str]] = {f.name: set() for f in fields(FileUsage)}

    def add(self, usage: FileUsage) -> None:
        for name, paths in self.kinds.items():
            paths.update(getattr(usage, name))

    def build(self) -> FileUsage:
        return FileUsage(**{name: frozenset(paths) for name, paths in self.kinds.items()})


def branch_usage(files: TableFiles, branch: str | None) -> FileUsage:
    """Every file branch ``branch`` (None or ``main``: the table itself) may read: the full
    state of each of its snapshots (the first of each run of consecutive ids in full, the
    others by what their deltas added), its tags', and what its long-lived changelogs read.

    Unlike ``plan_removal``'s neighbour rule this holds across branches: a branch's later
    snapshots may hold files of another branch that an earlier one did not (``merge_branch``,
    ``fast_forward``).

    Raises:
        FileNotFoundError: metadata of a snapshot or tag is missing.
        CorruptMetadata: a snapshot, tag or manifest cannot be read.
    """
    io, root = files.file_io, files.root
    name = None if branch is None or is_main_branch(branch) else branch
    out = _UsageBuilder()
    snapshots = SnapshotManager(io, root, name)
    previous: int | None = None
    for snapshot_id in snapshots.list_snapshot_ids():
        snapshot = snapshots.try_snapshot(snapshot_id)
        if snapshot is None:
            previous = None
            continue
        out.add(files.usage(snapshot, full_state=previous != snapshot_id - 1))
        previous = snapshot_id
    for tag in resolved_tags(TagManager(io, root, name), files).values():
        out.add(files.usage(tag.snapshot))
    changelogs = ChangelogManager(io, root, name)
    for changelog in filter(None, map(changelogs.try_snapshot, changelogs.list_snapshot_ids())):
        try:
            out.add(_read_changelog(files, changelog))
        except FileNotFoundError as err:
            logger.warning(
                "Changelog %d of branch %s is incomplete: %s", changelog.snapshot_id, branch, err
            )
    return out.build()


def other_branches_usage(table: FileStoreTable, files: TableFiles | None = None) -> FileUsage:
    """Everything the table's other branches (``main`` too when ``table`` is a branch) use:
    what no deletion of ``table`` may remove. Costs one listing when there are none."""
    others = _other_branches(table)
    if not others:
        return FileUsage()
    files = files or TableFiles(table)
    out = _UsageBuilder()
    for branch in others:
        out.add(branch_usage(files, branch))
    return out.build()


def without_files(plan: DeletionPlan, kept: frozenset[str]) -> DeletionPlan:
    """``plan`` without deleting any of ``kept`` (its snapshot, tag and hint parts stay)."""
    if not kept:
        return plan
    return replace(
        plan, **{kind: tuple(p for p in getattr(plan, kind) if p not in kept) for kind in _CONTENT}
    )


def keep_other_branches(
    table: FileStoreTable, plan: DeletionPlan, files: TableFiles | None = None
) -> DeletionPlan:
    """``plan`` without the files other branches use. When a branch's metadata is missing,
    what it needs cannot be known: no file is deleted (they stay, as orphans).

    Raises:
        CorruptMetadata: another branch's snapshot, tag or manifest cannot be read.
    """
    if not any(getattr(plan, kind) for kind in _CONTENT):
        return plan
    try:
        used = other_branches_usage(table, files)
    except FileNotFoundError as err:
        logger.warning("A branch's metadata is incomplete; no file is deleted: %s", err)
        return replace(plan, **dict.fromkeys(_CONTENT, ()))
    return without_files(plan, used.all_paths())


def files_in_use(
    table: FileStoreTable,
    snapshots: Iterable[Snapshot],
    files: TableFiles | None = None,
    strict: bool = True,
) -> FileUsage:
    """Union of every file the given snapshots or tags need (manifest reads are cached).

    Raises ``FileNotFoundError`` when some metadata is missing, unless ``strict`` is False.
    """
    files = files or TableFiles(table)
    usage = FileUsage()
    for snapshot in snapshots:
        usage = usage.union(files.usage(snapshot, strict))
    return usage


# ------------------------------------------------------------------------------ removal


def plan_removal(
    table: FileStoreTable,
    removed: Sequence[Snapshot],
    keep: Sequence[Snapshot],
    *,
    snapshot_files: Sequence[str] = (),
    tag_files: Sequence[str] = (),
    hints: Sequence[tuple[str, int]] = (),
    files: TableFiles | None = None,
    branches_usage: FileUsage = FileUsage(),
) -> DeletionPlan:
    """Files of ``removed`` that no snapshot or tag in ``keep`` uses.

    ``keep`` must hold every remaining snapshot or tag that may share files with
    ``removed``; because a file, once dropped from a table's state, never comes back, the
    nearest remaining neighbour on each side of every removed snapshot is enough.
    ``snapshot_files``/``tag_files``/``hints`` are passed through to the plan (in order).
    Files of ``branches_usage`` (what the other branches use, ``other_branches_usage``)
    are kept too.
    """
    files = files or TableFiles(table)
    gone = files_in_use(table, removed, files, strict=False)
    kept = files_in_use(table, keep, files).union(branches_usage)
    everything = kept.all_paths()
    kinds = {
        f.name: tuple(sorted(p for p in getattr(gone, f.name) if p not in everything))
        for f in fields(FileUsage)
    }
    return DeletionPlan(
        snapshot_files=tuple(snapshot_files),
        tag_files=tuple(tag_files),
        hints=tuple(hints),
        **kinds,
    )


# ------------------------------------------------------------------------------- expiry


def resolved_tags(
    manager: TagManager, files: TableFiles, exclude: Collection[str] = ()
) -> dict[str, Tag]:
    """The tags of ``manager`` (by name, as ``list_tags``), each checked to name metadata
    that exists, except those in ``exclude`` (tags being deleted). Every operation that
    deletes files takes the tags that protect files from here.

    Raises:
        CorruptMetadata: a tag file cannot be read, or names a manifest list or index
            manifest that does not exist (the message names the tag file).
    """
    tags = manager.list_tags()
    files.require_metadata(
        {manager.tag_path(n): t.snapshot for n, t in tags.items() if n not in exclude}
    )
    return tags


def _tagged_snapshots(table: FileStoreTable, files: TableFiles) -> list[Snapshot]:
    """One snapshot per tagged id, sorted by id (``resolved_tags``)."""
    by_id: dict[int, Snapshot] = {}
    for tag in resolved_tags(table.tag_manager, files).values():
        by_id.setdefault(tag.snapshot.snapshot_id, tag.snapshot)
    return [by_id[i] for i in sorted(by_id)]


def find_skipping_tags(tags: Sequence[Snapshot], begin: int, end: int) -> list[Snapshot]:
    """Paimon's ``findSkippingTags``: the tag at or before ``begin`` (else the first tag)
    through the last tag before ``end``; ``tags`` sorted by id."""
    ids = [t.snapshot_id for t in tags]
    right = bisect_left(ids, end) - 1
    if right < 0:
        return []
    left = max(bisect_right(ids, begin) - 1, 0)
    return list(tags[left : right + 1])


class _TagSkipper:
    """Decides whether a tag still holds a data file that snapshot ``s`` deleted.

    Only the nearest tag T before ``s`` matters: a file lives in one id interval
    [committed, deleted), so if any tag holds it, T does. When the commit id is known (from
    deltas read in the expiry window) the tagged-id interval rule decides without reading
    T: T holds the file iff committed <= T. Otherwise T's full state is checked.
    """

    def __init__(
        self, files: TableFiles, window: Sequence[Snapshot], tags: Sequence[Snapshot]
    ) -> None:
        self.files = files
        self.tags = list(tags)
        self.tag_ids = [t.snapshot_id for t in tags]
        self.window = {s.snapshot_id: s for s in window}
        self.begin = window[0].snapshot_id
        self.commits: dict[str, int] = {}
        self._loaded: dict[int, bool] = {}

    def record(self, snapshot_id: int, delta: _Delta) -> None:
        self._loaded[snapshot_id] = True
        for path in delta.committed:
            self.commits.setdefault(path, snapshot_id)

    def _load(self, snapshot_id: int) -> bool:
        ok = self._loaded.get(snapshot_id)
        if ok is None:
            snapshot = self.window.get(snapshot_id)
            delta = self.files.delta_changes(snapshot, False) if snapshot is not None else None
            ok = delta is not None
            if delta is not None:
                self.record(snapshot_id, delta)
            else:
                self._loaded[snapshot_id] = False
        return ok

    def tag_before(self, snapshot_id: int) -> int | None:
        i = bisect_left(self.tag_ids, snapshot_id) - 1
        return i if i >= 0 else None

    def skip(self, path: str, deleted_at: int) -> bool:
        index = self.tag_before(deleted_at)
        if index is None:
            return False
        tag_id = self.tag_ids[index]
        committed = self.commits.get(path)
        if committed is None and tag_id >= self.begin:
            # The window holds every delta in (T, s): the file was committed there or <= T.
            if all(self._load(i) for i in range(tag_id + 1, deleted_at)):
                committed = self.commits.get(path, tag_id)
        if committed is not None:
            return committed <= tag_id
        try:
            return path in self.files.data_files(self.tags[index])
        except (FileNotFoundError, PaimonError) as err:
            logger.info("Cannot read tag of snapshot %d (%s); keeping %s", tag_id, err, path)
            return True


def plan_expiry(
    table: FileStoreTable,
    window: Sequence[Snapshot],
    files: TableFiles | None = None,
    *,
    changelog_decoupled: bool = False,
) -> DeletionPlan:
    """Paimon's ``expireUntil``: expire ``window[:-1]``, keeping ``window[-1]`` (``end``).

    ``window`` holds the existing snapshots of [earliest, end] in id order. Data files a
    delta of (begin, end] deleted go unless the nearest earlier tag holds them; changelog
    files of expired untagged snapshots go; lists, manifests, index and statistics files go
    unless ``end`` or a tag in range still references them. Then ``EARLIEST = end``.

    ``changelog_decoupled`` (changelog retention beyond the snapshot one): each expired
    snapshot is kept as ``changelog/changelog-N`` (written just before ``snapshot-N`` goes,
    then the changelog ``LATEST`` hint), and what a changelog reads stays for
    ``plan_changelog_expiry``: the changelog lists, manifests and files, and, when the
    table has no ``changelog-producer`` (its changelog is the appended data), the data files
    appends wrote and every base and delta list and manifest. Not decoupled, files that
    existing long-lived changelogs read are kept too (``changelog_usage``).
    """
    if len(window) < 2:
        return DeletionPlan()
    files = files or TableFiles(table)
    manager = table.snapshot_manager
    end = window[-1]
    expired = list(window[:-1])
    begin = expired[0].snapshot_id
    tags = _tagged_snapshots(table, files)
    tagged_ids = {t.snapshot_id for t in tags}
    produce_changelog = table.options.changelog_producer != "none"
    keep_appended = changelog_decoupled and not produce_changelog
    clean_data_lists = not changelog_decoupled or produce_changelog

    skipper = _TagSkipper(files, window, tags)
    data: dict[str, None] = {}
    for snapshot in window[1:]:
        delta = files.delta_changes(snapshot, only_with_deletes=True)
        if delta is None:
            continue  # cannot tell what it deleted: leave those files (orphans)
        if delta.deleted:
            skipper.record(snapshot.snapshot_id, delta)
        for path, extras in delta.deleted.items():
            if keep_appended and path in delta.appended:
                continue
            if not skipper.skip(path, snapshot.snapshot_id):
                data[path] = None
                data.update(dict.fromkeys(extras))

    changelog: dict[str, None] = {}
    for snapshot in expired if not changelog_decoupled else ():
        if snapshot.changelog_manifest_list and snapshot.snapshot_id not in tagged_ids:
            try:
                changelog.update(dict.fromkeys(files.changelog_usage(snapshot)[2]))
            except FileNotFoundError:
                logger.warning("Changelog of snapshot %d is incomplete", snapshot.snapshot_id)

    lists: dict[str, None] = {}
    manifests: dict[str, None] = {}
    index_manifests: dict[str, None] = {}
    index_files: dict[str, None] = {}
    statistics: dict[str, None] = {}
    try:
        skipping: set[str] = set()
        for snapshot in [*find_skipping_tags(tags, begin, end.snapshot_id), end]:
            skipping |= files.metadata_paths(snapshot)
    except (FileNotFoundError, PaimonError) as err:
        logger.info("Skip cleaning manifests: cannot build the skipping set (%s)", err)
    else:
        seen: set[str] = set()
        for snapshot in expired:
            names = []
            if clean_data_lists:
                names += [snapshot.base_manifest_list, snapshot.delta_manifest_list]
            if not changelog_decoupled and snapshot.snapshot_id not in tagged_ids:
                names.append(snapshot.changelog_manifest_list)
            for name in names:
                if not name:
                    continue
                for meta in files.try_manifest_list(name):
                    if meta.file_name in seen:
                        continue  # consecutive base lists share most manifests
                    seen.add(meta.file_name)
                    path = files.manifest_path(meta.file_name)
                    if path not in skipping:
                        manifests[path] = None
                path = files.manifest_path(name)
                if path not in skipping:
                    lists[path] = None
            if snapshot.index_manifest:
                path = files.manifest_path(snapshot.index_manifest)
                if path not in skipping:
                    try:
                        entries = files.index_manifest(snapshot.index_manifest)
                    except FileNotFoundError:
                        entries = []
                    for entry in entries:
                        index_path = files.index_file_path(entry)
                        if index_path not in skipping:
                            index_files[index_path] = None
                    index_manifests[path] = None
            if snapshot.statistics:
                path = files.statistics_path(snapshot.statistics)
                if path not in skipping:
                    statistics[path] = None

    hints = ((manager.earliest_hint_path, end.snapshot_id),)
    changelogs: tuple[tuple[str, str], ...] = ()
    if changelog_decoupled:
        long_lived = _changelog_manager(table)
        changelogs = tuple(
            (long_lived.snapshot_path(s.snapshot_id), snapshot_to_json(s)) for s in expired
        )
        hints = ((long_lived.latest_hint_path, expired[-1].snapshot_id), *hints)
    plan = DeletionPlan(
        snapshot_files=tuple(manager.snapshot_path(s.snapshot_id) for s in expired),
        manifest_lists=tuple(lists),
        manifests=tuple(manifests),
        index_manifests=tuple(index_manifests),
        statistics_files=tuple(statistics),
        data_files=tuple(data),
        changelog_files=tuple(changelog),
        index_files=tuple(index_files),
        hints=hints,
        changelogs=changelogs,
    )
    if not changelog_decoupled:
        plan = _keep_changelog_reads(plan, changelog_usage(table, files))
    return keep_other_branches(table, plan, files)


# ------------------------------------------------------------------- long-lived changelogs


def _changelog_manager(table: FileStoreTable) -> ChangelogManager:
    return ChangelogManager(table.file_io, table.path, table.snapshot_manager.branch)


def _read_changelog(files: TableFiles, changelog: Snapshot) -> FileUsage:
    """What streaming readers read of one long-lived changelog: its changelog list,
    manifests and files; without a changelog list (no changelog producer), its delta list,
    manifests and the data files appends added there."""
    if changelog.changelog_manifest_list:
        cl_list, cl_manifests, cl_files = files.changelog_usage(changelog)
        return FileUsage(
            manifest_lists=frozenset(cl_list),
            manifests=frozenset(cl_manifests),
            changelog_files=frozenset(cl_files),
        )
    metas = files.manifest_list(changelog.delta_manifest_list)
    data: set[str] = set()
    for meta in metas:
        for e in files.manifest(meta.file_name):
            if e.kind == FileKind.ADD and e.file.file_source in (None, FILE_SOURCE_APPEND):
                data.add(files.data_path(e))
                data.update(files.extra_paths(e))
    return FileUsage(
        manifest_lists=frozenset({files.manifest_path(changelog.delta_manifest_list)}),
        manifests=frozenset(files.manifest_path(m.file_name) for m in metas),
        data_files=frozenset(data),
    )


def changelog_usage(table: FileStoreTable, files: TableFiles | None = None) -> FileUsage:
    """Every file the table's long-lived changelogs read (empty, and cheap: one listing,
    when there are none). A changelog whose metadata is already gone protects nothing; one
    whose metadata cannot be decoded may need anything, so that error stops the caller."""
    manager = _changelog_manager(table)
    ids = manager.list_snapshot_ids()
    if not ids:
        return FileUsage()
    files = files or TableFiles(table)
    usage = FileUsage()
    for changelog in filter(None, map(manager.try_snapshot, ids)):
        try:
            usage = usage.union(_read_changelog(files, changelog))
        except FileNotFoundError as err:
            logger.warning("Changelog %d is incomplete: %s", changelog.snapshot_id, err)
    return usage


def _changelog_skipping_set(files: TableFiles, snapshots: Iterable[Snapshot]) -> set[str]:
    """``ChangelogDeletion.manifestSkippingSet``: base and delta lists and their manifests,
    index manifest and files, statistics, each only when its file still exists."""
    out: set[str] = set()
    for snapshot in snapshots:
        for name in (snapshot.base_manifest_list, snapshot.delta_manifest_list):
            if not name:
                continue
            try:
                metas = files.manifest_list(name)
            except FileNotFoundError:
                continue
            out.add(files.manifest_path(name))
            out.update(files.manifest_path(m.file_name) for m in metas)
        if snapshot.index_manifest:
            try:
                entries = files.index_manifest(snapshot.index_manifest)
            except FileNotFoundError:
                entries = []
            else:
                out.add(files.manifest_path(snapshot.index_manifest))
            out.update(map(files.index_file_path, entries))
        if snapshot.statistics:
            out.add(files.statistics_path(snapshot.statistics))
    return out


def plan_changelog_expiry(
    table: FileStoreTable,
    begin: int,
    changelogs: Sequence[Snapshot],
    end: Snapshot,
    earliest_snapshot: Snapshot | None,
    files: TableFiles | None = None,
) -> DeletionPlan:
    """Paimon's ``ExpireChangelogImpl.expireUntil(begin, end)``: remove the long-lived
    changelogs ``changelogs`` (those existing in [begin, end)), keeping changelog ``end``.

    Per changelog: with a changelog list, its changelog files, list and manifests go (kept
    for a tagged id, as expiry does); without one, the data files its delta deleted that
    the nearest earlier tag does not hold, and its delta and base lists and manifests. A
    list or manifest stays while a tag in range, changelog ``end`` or the earliest snapshot
    references it (``_changelog_skipping_set``). Then the changelog ``EARLIEST = end``.
    """
    files = files or TableFiles(table)
    manager = _changelog_manager(table)
    tags = _tagged_snapshots(table, files)
    tag_ids = [t.snapshot_id for t in tags]
    keepers = [*find_skipping_tags(tags, begin, end.snapshot_id), end]
    if earliest_snapshot is not None:
        keepers.append(earliest_snapshot)
    try:
        skipping: set[str] | None = _changelog_skipping_set(files, keepers)
    except PaimonError as err:
        logger.info("Skip cleaning changelog manifests: no skipping set (%s)", err)
        skipping = None

    doomed: list[str] = []
    lists: dict[str, None] = {}
    manifests: dict[str, None] = {}
    data: dict[str, None] = {}
    changelog_files: dict[str, None] = {}

    def unused(name: str | None) -> None:
        if not name or skipping is None:
            return
        path = files.manifest_path(name)
        if path in lists or not files.file_io.exists(path):
            return  # expiry already removed it (a table with a changelog producer)
        for meta in files.try_manifest_list(name):
            manifest = files.manifest_path(meta.file_name)
            if manifest not in skipping:
                manifests[manifest] = None
        if path not in skipping:
            lists[path] = None

    for changelog in changelogs:
        sid = changelog.snapshot_id
        index = bisect_left(tag_ids, sid) - 1
        try:
            held = files.data_files(tags[index]) if index >= 0 else frozenset()
        except (FileNotFoundError, PaimonError) as err:
            logger.info("Skip cleaning changelog %d: cannot read its earlier tag (%s)", sid, err)
            continue
        if changelog.changelog_manifest_list:
            if sid not in tag_ids:
                try:
                    changelog_files.update(dict.fromkeys(files.changelog_usage(changelog)[2]))
                except FileNotFoundError:
                    logger.warning("Changelog %d is incomplete", sid)
                unused(changelog.changelog_manifest_list)
        else:
            delta = files.delta_changes(changelog, only_with_deletes=False)
            for path, extras in (delta.deleted if delta is not None else {}).items():
                if path not in held:
                    data[path] = None
                    data.update(dict.fromkeys(extras))
            unused(changelog.delta_manifest_list)
            unused(changelog.base_manifest_list)
        doomed.append(manager.snapshot_path(sid))

    plan = DeletionPlan(
        snapshot_files=tuple(doomed),
        manifest_lists=tuple(lists),
        manifests=tuple(manifests),
        data_files=tuple(data),
        changelog_files=tuple(changelog_files),
        hints=((manager.earliest_hint_path, end.snapshot_id),),
    )
    return keep_other_branches(table, plan, files)


# ----------------------------------------------------------------------------- tags


def plan_tag_deletion(
    table: FileStoreTable, tag_names: Sequence[str], files: TableFiles | None = None
) -> DeletionPlan:
    """Paimon's ``TagManager.deleteTag`` + ``TagDeletion`` for several tags at once.

    The tag files always go (unknown names are skipped). The files of a tagged snapshot are
    cleaned only when its snapshot file is gone and no remaining tag names the same
    snapshot; then the candidates are its full data files minus those of the nearest
    remaining tag before it and of the nearest right neighbour (the earlier of the earliest
    snapshot and the next remaining tag), minus the files deltas of snapshots in
    (earliest, tagged] added when earliest <= tagged; its lists, manifests and index files
    go unless those neighbours reference them. Also its changelog (kept by expiry for it).
    """
    files = files or TableFiles(table)
    manager = table.tag_manager
    snapshots = table.snapshot_manager
    all_tags = manager.list_tags()
    doomed = [n for n in dict.fromkeys(tag_names) if n in all_tags]
    resolved_tags(manager, files, exclude=doomed)
    for name in tag_names:
        if name not in all_tags:
            logger.warning("Tag '%s' doesn't exist.", name)
    remaining = [t.snapshot for n, t in all_tags.items() if n not in doomed]
    remaining_ids = sorted({s.snapshot_id for s in remaining})
    remaining_by_id = {s.snapshot_id: s for s in remaining}
    tag_files = tuple(manager.tag_path(n) for n in doomed)

    targets: dict[int, Snapshot] = {}
    for name in doomed:
        snapshot = all_tags[name].snapshot
        sid = snapshot.snapshot_id
        if sid in remaining_by_id or snapshots.snapshot_exists(sid):
            continue
        targets.setdefault(sid, snapshot)
    plan = DeletionPlan(tag_files=tag_files)
    if not targets:
        return plan

    earliest = snapshots.earliest_snapshot()
    for sid, tagged in sorted(targets.items()):
        neighbours: list[Snapshot] = []
        i = bisect_left(remaining_ids, sid)
        if i > 0:
            neighbours.append(remaining_by_id[remaining_ids[i - 1]])
        right = remaining_by_id[remaining_ids[i]] if i < len(remaining_ids) else None
        if earliest is not None and (right is None or earliest.snapshot_id < right.snapshot_id):
            right = earliest
        if right is not None:
            neighbours.append(right)
        try:
            plan = plan.merge(_plan_tagged_snapshot(files, tagged, neighbours, earliest))
        except CorruptMetadata:
            raise
        except (FileNotFoundError, PaimonError) as err:
            logger.info("Skip cleaning files of the tag of snapshot %d: %s", sid, err)
    plan = _keep_changelog_reads(plan, changelog_usage(table, files))
    return keep_other_branches(table, plan, files)


def _keep_changelog_reads(plan: DeletionPlan, read: FileUsage) -> DeletionPlan:
    """``plan`` without the files long-lived changelogs read."""
    if not read.all_paths():
        return plan
    return replace(
        plan,
        **{
            f.name: tuple(p for p in getattr(plan, f.name) if p not in getattr(read, f.name))
            for f in fields(FileUsage)
        },
    )


def _plan_tagged_snapshot(
    files: TableFiles,
    tagged: Snapshot,
    neighbours: Sequence[Snapshot],
    earliest: Snapshot | None,
) -> DeletionPlan:
    mine = files.usage(tagged, strict=False)
    kept = FileUsage()
    for snapshot in neighbours:
        kept = kept.union(files.usage(snapshot))
    data = mine.data_files - kept.data_files
    if earliest is not None and earliest.snapshot_id <= tagged.snapshot_id:
        # Streaming readers may still read the deltas of (earliest, tagged].
        manager = files.table.snapshot_manager
        for sid in manager.snapshot_ids_between(earliest.snapshot_id, tagged.snapshot_id):
            snapshot = manager.snapshot(sid)
            for m in files.manifest_list(snapshot.delta_manifest_list):
                for e in files.manifest(m.file_name):
                    data -= {files.data_path(e), *files.extra_paths(e)}
    return DeletionPlan(
        manifest_lists=tuple(sorted(mine.manifest_lists - kept.manifest_lists)),
        manifests=tuple(sorted(mine.manifests - kept.manifests)),
        index_manifests=tuple(sorted(mine.index_manifests - kept.index_manifests)),
        statistics_files=tuple(sorted(mine.statistics_files - kept.statistics_files)),
        data_files=tuple(sorted(data)),
        changelog_files=tuple(sorted(mine.changelog_files - kept.changelog_files)),
        index_files=tuple(sorted(mine.index_files - kept.index_files)),
    )

"""Orphan files: files under the table directory that nothing references any more.

Follows Paimon 2.0.0's ``LocalOrphanFilesClean``: a file in ``manifest/``, ``index/``,
``statistics/`` or a bucket directory is an orphan when no snapshot, tag or long-lived
changelog of the table or of any branch names it (data and extra files of ADD and DELETE
entries, manifests, lists, index manifests and files, statistics), and it is older than the
threshold. In ``snapshot/`` and ``changelog/`` everything but ``snapshot-N``/``changelog-N``
and the hints is an orphan once old enough (failed commits' temp files); in ``schema/``,
``tag/`` and ``consumer/`` only hidden ``.*.tmp`` files are. Anything else is left alone,
as are files outside the table directory (``data-file.external-paths``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_core.exceptions import InvalidArgument
from paimon_core.format.branch import list_branches
from paimon_core.format.paths import (
    BRANCH_DIR,
    BRANCH_PREFIX,
    BUCKET_PREFIX,
    CHANGELOG_DIR,
    CHANGELOG_PREFIX,
    CONSUMER_DIR,
    EARLIEST_HINT,
    INDEX_DIR,
    LATEST_HINT,
    MANIFEST_DIR,
    SCHEMA_DIR,
    SNAPSHOT_DIR,
    SNAPSHOT_PREFIX,
    STATISTICS_DIR,
    TAG_DIR,
)
from paimon_core.format.snapshot import ChangelogManager, Snapshot, SnapshotManager
from paimon_core.format.tag import TagManager
from paimon_core.io.fileio import FileIO, FileStatus, LocalFileIO
from paimon_core.lifecycle.file_deletion import (
    ManifestRef,
    TableFiles,
    delete_quietly,
    resolved_tags,
)

if TYPE_CHECKING:
    from paimon_core.table import FileStoreTable

__all__ = ["OrphanResult", "branch_names", "orphan_candidates", "remove_orphan_files"]

logger = logging.getLogger(__name__)

DAY_MILLIS = 86_400_000
_CONTENT_DIRS = frozenset({MANIFEST_DIR, INDEX_DIR, STATISTICS_DIR})
_TMP_ONLY_DIRS = frozenset({SCHEMA_DIR, TAG_DIR, CONSUMER_DIR})
_VERSIONED_DIRS = {SNAPSHOT_DIR: SNAPSHOT_PREFIX, CHANGELOG_DIR: CHANGELOG_PREFIX}
_HINTS = frozenset({EARLIEST_HINT, LATEST_HINT})


@dataclass(frozen=True, slots=True)
class OrphanResult:
    """Orphans found (and deleted unless a dry run): how many, their total size, paths."""

    count: int
    bytes: int
    paths: tuple[str, ...]


def _is_tmp(name: str) -> bool:
    return name.startswith(".") and name.endswith(".tmp")


def _metadata_candidate(parts: list[str]) -> bool | None:
    """Whether a file in a snapshot/changelog/schema/tag/consumer directory may go;
    None when ``parts`` is not in such a directory."""
    if len(parts) != 2:
        return None
    directory, name = parts
    prefix = _VERSIONED_DIRS.get(directory)
    if prefix is not None:
        return not name.startswith(prefix) and name not in _HINTS
    if directory in _TMP_ONLY_DIRS:
        return _is_tmp(name)
    return None


def _needs_reference(parts: list[str], partition_depth: int) -> bool:
    """Files kept only while referenced: manifest/index/statistics and data files."""
    if len(parts) == 2 and parts[0] in _CONTENT_DIRS:
        return True
    if len(parts) != partition_depth + 2:
        return False
    return all("=" in p for p in parts[:partition_depth]) and parts[partition_depth].startswith(
        BUCKET_PREFIX
    )


class _UsedNames:
    """File names referenced by the table's snapshots, tags and changelogs, all branches."""

    def __init__(self, table: FileStoreTable) -> None:
        self.table = table
        self.files = TableFiles(table)
        self.names: set[str] = set()
        self._seen_lists: set[str] = set()
        self._seen_manifests: set[str] = set()
        self._seen_index: set[str] = set()

    def add_snapshot(self, snapshot: Snapshot, still_there: str, changelog: bool = False) -> None:
        try:
            self._add(snapshot, changelog)
        except FileNotFoundError:
            # Expired or deleted while we read it: fine. Still referenced: refuse to guess.
            if self.table.file_io.exists(still_there):
                raise
            logger.info("%s disappeared while collecting used files", still_there)

    def _add(self, snapshot: Snapshot, changelog: bool = False) -> None:
        """``changelog``: a long-lived changelog. Expiry keeps only the changelog list of
        one that has it (a table with a changelog producer), so its base and delta lists may
        be gone: Paimon's ``retryReadingFiles`` reads a missing list as empty."""
        names = self.names
        for name in (
            snapshot.base_manifest_list,
            snapshot.delta_manifest_list,
            snapshot.changelog_manifest_list,
        ):
            if name and name not in self._seen_lists:
                try:
                    metas = self.files.manifest_list(name)
                except FileNotFoundError:
                    if not changelog or name == snapshot.changelog_manifest_list:
                        raise
                    continue
                names.add(name)
                self._add_manifests(metas)
                self._seen_lists.add(name)
        index = snapshot.index_manifest
        if index and index not in self._seen_index:
            names.add(index)
            for entry in self.files.index_manifest(index):
                names.add(entry.file_name)
                if entry.external_path:
                    names.add(entry.external_path.rsplit("/", 1)[-1])
            self._seen_index.add(index)
        if snapshot.statistics:
            names.add(snapshot.statistics)

    def _add_manifests(self, metas: Iterable[ManifestRef]) -> None:
        names = self.names
        for meta in metas:
            if meta.file_name in self._seen_manifests:
                continue
            names.add(meta.file_name)
            for entry in self.files.manifest(meta.file_name):
                names.add(entry.file.file_name)
                names.update(entry.file.extra_files)
            self._seen_manifests.add(meta.file_name)

    def add_branch(self, branch: str | None) -> None:
        io, root = self.table.file_io, self.table.path.rstrip("/")
        snapshots = SnapshotManager(io, root, branch)
        for snapshot_id in snapshots.list_snapshot_ids():
            snapshot = snapshots.try_snapshot(snapshot_id)
            if snapshot is not None:
                self.add_snapshot(snapshot, snapshots.snapshot_path(snapshot_id))
        tags = TagManager(io, root, branch)
        for name, tag in resolved_tags(tags, self.files).items():
            self.add_snapshot(tag.snapshot, tags.tag_path(name))
        changelogs = ChangelogManager(io, root, branch)
        for changelog_id in changelogs.list_snapshot_ids():
            changelog = changelogs.try_snapshot(changelog_id)
            if changelog is not None:
                self.add_snapshot(changelog, changelogs.snapshot_path(changelog_id), True)


def branch_names(file_io: FileIO, root: str) -> list[str]:
    return list_branches(file_io, root)


def orphan_candidates(
    statuses: Iterable[FileStatus], root: str, partition_depth: int, threshold: int
) -> tuple[list[FileStatus], list[FileStatus]]:
    """(unconditional orphans among metadata temp files, files that need a reference)."""
    metadata: list[FileStatus] = []
    content: list[FileStatus] = []
    cut = len(root) + 1
    for status in statuses:
        if status.is_dir or status.mtime_ms >= threshold:
            continue
        parts = status.path[cut:].split("/")
        if len(parts) > 3 and parts[0] == BRANCH_DIR and parts[1].startswith(BRANCH_PREFIX):
            if _metadata_candidate(parts[2:]):
                metadata.append(status)
            continue
        verdict = _metadata_candidate(parts)
        if verdict is not None:
            if verdict:
                metadata.append(status)
        elif _needs_reference(parts, partition_depth):
            content.append(status)
    return metadata, content


def remove_orphan_files(
    table: FileStoreTable, *, older_than_millis: int | None = None, dry_run: bool = False
) -> OrphanResult:
    """Delete files of the table that nothing references and that are older than a time.

    Args:
        table: the table; its branches are taken into account.
        older_than_millis: only files modified before this epoch-millis time go (default
            now minus one day, which protects files of commits still in progress).
        dry_run: only find them.

    Returns:
        The orphans (deleted unless ``dry_run``): count, total bytes and paths.

    Raises:
        InvalidArgument: ``older_than_millis`` is not in the past.
        FileNotFoundError: metadata of a live snapshot or tag is missing (nothing deleted).
    """
    now = int(time.time() * 1000)
    threshold = now - DAY_MILLIS if older_than_millis is None else older_than_millis
    if threshold >= now:
        raise InvalidArgument(
            "The arg olderThan must be less than now, because dataFiles that are currently "
            "being written and not referenced by snapshots will be mistakenly cleaned up."
        )
    io, root = table.file_io, table.path.rstrip("/")
    # List before reading the snapshots: a file committed meanwhile is then seen as used.
    metadata, content = orphan_candidates(
        io.walk(root), root, len(table.schema.partition_keys), threshold
    )
    if content:
        used = _UsedNames(table)
        used.add_branch(None)
        for branch in list_branches(io, root):
            used.add_branch(branch)
        content = [s for s in content if s.name not in used.names]
    orphans = sorted(metadata + content, key=lambda s: s.path)
    paths = tuple(s.path for s in orphans)
    if not dry_run and paths:
        delete_quietly(io, paths)
        if isinstance(io, LocalFileIO):
            _remove_empty_dirs(io, root, content)
    return OrphanResult(len(paths), sum(s.size for s in orphans), paths)


def _remove_empty_dirs(io: LocalFileIO, root: str, removed: list[FileStatus]) -> None:
    """Remove bucket and partition directories emptied by the deletion (local disk only:
    there deleting a non-empty directory fails instead of recursing)."""
    dirs = {s.path.rsplit("/", 1)[0] for s in removed}
    keep = {f"{root}/{d}" for d in _CONTENT_DIRS} | {root}
    while dirs:
        parents = set()
        for directory in sorted(dirs, reverse=True):
            if directory in keep or not directory.startswith(root + "/"):
                continue
            try:
                if io.list_names(directory):
                    continue
                io.delete(directory)
            except OSError:
                continue
            parents.add(directory.rsplit("/", 1)[0])
        dirs = parents

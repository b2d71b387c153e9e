"""Rollback: make an older snapshot (or a tag) the table's latest state again.

Paimon's ``rollbackTo`` + ``RollbackHelper.cleanLargerThan`` (2.0): snapshots newer than the
target go (newest first), long-lived changelogs newer than it go, tags on newer snapshots go,
``LATEST`` becomes the target. Rolling back to a tag whose snapshot has expired writes the
tag's snapshot back as ``snapshot-<id>`` and sets ``EARLIEST`` to it. A snapshot id that only a
tag still holds rolls back to that tag (PR #5756).

Files: Paimon up to 1.1 also deleted the data files and manifests only the removed snapshots
used; since 1.2 (PR #5712) and in pypaimon they are left for ``remove_orphan_files``. We
delete them (``file_deletion.plan_removal``: files of the removed snapshots and tags that the
target and the other branches do not use), so a rollback frees its
space at once, as the tag proposal describes.

Crash safety: the plan is computed first (a dry run returns it). Applying writes
``EARLIEST`` (when restoring), the restored snapshot and ``LATEST`` first (as Paimon:
``LATEST`` = target while the newer snapshot files still exist makes readers fall back to a
listing; Java trusts a ``LATEST`` whose successor is absent, so the hint cannot wait until
after the deletions), then deletes snapshot files newest first, then tag files, and only
then the files they referenced. A crash at any point leaves every remaining snapshot and tag
readable; running the rollback again finishes it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from paimon_core.exceptions import InvalidArgument, PaimonError, SnapshotNotFound
from paimon_core.format.names import validate_tag_name
from paimon_core.format.paths import CHANGELOG_DIR, CHANGELOG_PREFIX, LATEST_HINT
from paimon_core.format.snapshot import snapshot_to_json
from paimon_core.lifecycle.file_deletion import (
    DeletionPlan,
    TableFiles,
    TagGuard,
    other_branches_usage,
    plan_removal,
    resolved_tags,
)

if TYPE_CHECKING:
    from paimon_core.format.snapshot import Snapshot
    from paimon_core.table import FileStoreTable

__all__ = [
    "RollbackPlan",
    "RollbackResult",
    "plan_rollback",
    "rollback",
    "rollback_to_snapshot",
    "rollback_to_tag",
    "rollback_to_timestamp",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RollbackPlan:
    """Everything a rollback writes and deletes, in the order it does so."""

    previous_snapshot_id: int
    target: Snapshot
    removed_snapshot_ids: tuple[int, ...]
    removed_tags: tuple[str, ...]
    # Snapshot file rewritten from the tag when the target snapshot has expired.
    restore_path: str | None
    # Hint files written before anything is deleted.
    hints: tuple[tuple[str, int], ...]
    # Snapshot files (newest first), long-lived changelogs, tag files, then content files.
    deletion: DeletionPlan

    @property
    def snapshot_id(self) -> int:
        return self.target.snapshot_id

    def files(self) -> list[str]:
        """Every path the rollback deletes, in deletion order."""
        return self.deletion.files()

    def __str__(self) -> str:
        lines = [
            f"Rollback from snapshot {self.previous_snapshot_id} to {self.snapshot_id}: "
            f"remove snapshots {list(self.removed_snapshot_ids)}, tags {list(self.removed_tags)}"
        ]
        if self.restore_path:
            lines.append(f"restore {self.restore_path} from its tag")
        lines.extend(f"write {path} = {value}" for path, value in self.hints)
        lines.append(str(self.deletion))
        return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class RollbackResult:
    """The procedure's ``previous_snapshot_id``/``current_snapshot_id`` and the plan."""

    previous_snapshot_id: int
    snapshot_id: int
    plan: RollbackPlan
    dry_run: bool = False


def _latest_id(table: FileStoreTable) -> int:
    latest = table.snapshot_manager.latest_snapshot_id()
    if latest is None:
        raise SnapshotNotFound("Latest snapshot is null, can not rollback.")
    return latest


def _long_lived_changelogs(table: FileStoreTable, snapshot_id: int) -> tuple[list[str], int]:
    """Changelog files newer than the target (newest first) and the new changelog LATEST."""
    manager = table.snapshot_manager
    directory = manager.snapshot_dir.rsplit("/", 1)[0] + f"/{CHANGELOG_DIR}"
    cut = len(CHANGELOG_PREFIX)
    ids = sorted(
        int(n[cut:])
        for n in table.file_io.list_names(directory)
        if n.startswith(CHANGELOG_PREFIX) and n[cut:].isascii() and n[cut:].isdigit()
    )
    removed = [i for i in reversed(ids) if i > snapshot_id]
    kept = [i for i in ids if i <= snapshot_id]
    return [f"{directory}/{CHANGELOG_PREFIX}{i}" for i in removed], (kept[-1] if kept else -1)


def plan_rollback(table: FileStoreTable, target: Snapshot) -> RollbackPlan:
    """What rolling back to ``target`` (a live snapshot or a tag's) writes and deletes."""
    snapshots, tags = table.snapshot_manager, table.tag_manager
    previous = _latest_id(table)
    sid = target.snapshot_id
    removed_ids = [i for i in reversed(snapshots.list_snapshot_ids()) if i > sid]
    files = TableFiles(table)
    all_tags = resolved_tags(tags, files)
    removed_tags = sorted(n for n, t in all_tags.items() if t.snapshot_id > sid)

    restore = None if snapshots.snapshot_exists(sid) else snapshots.snapshot_path(sid)
    hints = [(snapshots.latest_hint_path, sid)]
    if restore is not None:
        hints.append((snapshots.earliest_hint_path, sid))
    changelogs, changelog_latest = _long_lived_changelogs(table, sid)
    if changelogs:
        hints.append((changelogs[0].rsplit("/", 1)[0] + f"/{LATEST_HINT}", changelog_latest))

    removed: dict[int, Snapshot] = {}
    for i in removed_ids:
        snapshot = snapshots.try_snapshot(i)
        if snapshot is not None:
            removed[i] = snapshot
    for name in removed_tags:
        removed.setdefault(all_tags[name].snapshot_id, all_tags[name].snapshot)
    metadata = {
        "snapshot_files": (*(snapshots.snapshot_path(i) for i in removed_ids), *changelogs),
        "tag_files": tuple(tags.tag_path(n) for n in removed_tags),
    }
    deletion = DeletionPlan(**metadata)
    if removed:
        try:
            others = other_branches_usage(table, files)  # a corrupt branch snapshot or tag raises
        except FileNotFoundError as err:
            logger.warning("Rollback keeps the files of removed snapshots (orphans): %s", err)
            others = None
        try:
            if others is not None:
                deletion = plan_removal(
                    table,
                    list(removed.values()),
                    [target],
                    files=files,
                    branches_usage=others,
                    **metadata,
                )
        except (FileNotFoundError, PaimonError) as err:
            logger.warning("Rollback keeps the files of removed snapshots (orphans): %s", err)
    return RollbackPlan(
        previous, target, tuple(removed_ids), tuple(removed_tags), restore, tuple(hints), deletion
    )


def _apply(table: FileStoreTable, plan: RollbackPlan, guard: TagGuard) -> None:
    io, snapshots = table.file_io, table.snapshot_manager
    hints = list(plan.hints)
    if plan.restore_path is not None:
        # EARLIEST before the restored snapshot: naming a missing snapshot it is ignored
        # (readers list), whereas written after, a crash in between would hide the snapshot.
        earliest = (snapshots.earliest_hint_path, plan.snapshot_id)
        io.overwrite_atomic(earliest[0], str(earliest[1]).encode())
        hints.remove(earliest)
        io.write_no_clobber(plan.restore_path, snapshot_to_json(plan.target).encode("utf-8"))
    for path, value in hints:
        io.overwrite_atomic(path, str(value).encode())
    for snapshot_id in plan.removed_snapshot_ids:
        snapshots.delete_snapshot(snapshot_id)
    count = len(plan.removed_snapshot_ids)
    replace(plan.deletion, snapshot_files=plan.deletion.snapshot_files[count:]).apply(io, guard)


def _run(table: FileStoreTable, target: Snapshot, dry_run: bool) -> RollbackResult:
    guard = TagGuard(table)
    plan = plan_rollback(table, target)
    if not dry_run:
        _apply(table, plan, guard)
    return RollbackResult(plan.previous_snapshot_id, target.snapshot_id, plan, dry_run)


def rollback_to_tag(table: FileStoreTable, tag: str, *, dry_run: bool = False) -> RollbackResult:
    """Roll back to the snapshot of ``tag`` (restoring it if it has expired).

    Raises:
        InvalidTagName: a blank or unsafe name.
        SnapshotNotFound: the table has no snapshot.
        TagNotFound: no such tag.
    """
    validate_tag_name(tag)
    _latest_id(table)
    target = table.tag_manager.get(tag).snapshot
    return _run(table, target, dry_run)


def rollback_to_snapshot(
    table: FileStoreTable, snapshot_id: int, *, dry_run: bool = False
) -> RollbackResult:
    """Roll back to snapshot ``snapshot_id``, or to a tag holding it once it has expired.

    Raises:
        SnapshotNotFound: the table has no snapshot, or neither a snapshot nor a tag has this id.
    """
    _latest_id(table)
    target = table.snapshot_manager.try_snapshot(snapshot_id)
    if target is None:
        for name, tag in table.tag_manager.list_tags().items():
            if tag.snapshot_id == snapshot_id:
                return rollback_to_tag(table, name, dry_run=dry_run)
        raise SnapshotNotFound(f"Rollback snapshot '{snapshot_id}' doesn't exist.")
    return _run(table, target, dry_run)


def rollback_to_timestamp(
    table: FileStoreTable, timestamp_millis: int, *, dry_run: bool = False
) -> RollbackResult:
    """Roll back to the latest snapshot committed at or before ``timestamp_millis``.

    Only live snapshots count (not tags), as Paimon's ``rollback_to_timestamp``.

    Raises:
        SnapshotNotFound: no snapshot at all, or none that old.
    """
    _latest_id(table)
    target = table.snapshot_manager.earlier_or_equal_time_millis(timestamp_millis)
    if target is None:
        raise SnapshotNotFound(f"Can not find snapshot earlier than {timestamp_millis}")
    return _run(table, target, dry_run)


def rollback(table: FileStoreTable, version: str | int, dry_run: bool = False) -> RollbackResult:
    """The ``rollback`` procedure's ``version``: all digits is a snapshot id, else a tag name.

    This is the opposite precedence of ``VERSION AS OF``; pass a numeric tag name to
    ``rollback_to_tag``.

    Raises:
        InvalidArgument: a blank version; plus the errors of the two targets.
    """
    if isinstance(version, bool):
        raise InvalidArgument(f"Invalid rollback version: {version!r}")
    if isinstance(version, int):
        return rollback_to_snapshot(table, version, dry_run=dry_run)
    if not version.strip():
        raise InvalidArgument("Rollback version shouldn't be blank.")
    if version.isdecimal():
        return rollback_to_snapshot(table, int(version), dry_run=dry_run)
    return rollback_to_tag(table, version, dry_run=dry_run)

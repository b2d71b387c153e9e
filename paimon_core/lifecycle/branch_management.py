"""Branches: create, delete, rename, fast-forward and merge the branches of a table.

Follows Paimon 2.0 (``FileSystemBranchManager``, ``BranchMergeHandler`` and the checks of
``AbstractFileStoreTable.deleteBranch``), the layout of ``format.branch``: a branch is
``branch/branch-<name>/`` with its own schemas, snapshots and tags, sharing the table's data
files and manifests. The table handle a function gets is the *current* branch (its
``branch`` option): branches are created from its tags and schemas and fast-forwarded into
it, as Paimon does with ``table.branchManager()``. Deliberate differences, all on the safe
side:

* every argument is checked before anything is written (Paimon's ``delete_branch('a,b')``
  deletes ``a`` before finding that ``b`` is missing);
* branch names must also be safe directory names (``format.names.validate_branch_name``);
* creation writes the schemas (newest first), then the snapshot, then the tag, so that a
  crash at any point leaves an empty branch or one reading the tag, never one that cannot
  be read; a tag deleted while its branch is made withdraws the new branch
  (``file_deletion.TagGuard``'s protocol);
* a branch snapshot is copied from the snapshot file only when that still is the tagged
  snapshot (after a rollback and new commits ``snapshot-N`` may be another one), else it
  is written from the tag, as Paimon does for an expired one;
* fast-forward deletes the current branch's hint, newer snapshots and tags first (newest
  first), replaces the schemas in place, copies the snapshots in id order, and only then
  the data files and manifests nothing uses any more (Paimon leaves them as orphans), so
  that a crash leaves a readable prefix of one history or the other and running it again
  finishes it; it also removes the long-lived changelogs of the replaced snapshots;
* expiry, rollback, tag deletion and orphan removal of any branch keep every file another
  branch uses (``file_deletion.keep_other_branches``), which Paimon does not: there a
  branch made from a tag loses its files once that tag is deleted and its snapshot expired.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from paimon_core.exceptions import (
    BranchAlreadyExists,
    BranchNotFound,
    InvalidArgument,
    SnapshotNotFound,
    TagNotFound,
)
from paimon_core.format.branch import branch_exists
from paimon_core.format.branch import list_branches as _list_branches
from paimon_core.format.commit_message import CommitMessage
from paimon_core.format.names import validate_branch_name, validate_tag_name
from paimon_core.format.paths import DEFAULT_BRANCH, branch_path, is_main_branch
from paimon_core.format.schema import SchemaManager
from paimon_core.format.snapshot import (
    ChangelogManager,
    CommitKind,
    Snapshot,
    SnapshotManager,
    snapshot_to_json,
)
from paimon_core.format.tag import TagManager, tag_from_json
from paimon_core.lifecycle.file_deletion import (
    DeletionPlan,
    TableFiles,
    TagGuard,
    changelog_usage,
    other_branches_usage,
    plan_removal,
)

if TYPE_CHECKING:
    from paimon_core.format.manifest import ManifestEntry
    from paimon_core.table import FileStoreTable

__all__ = [
    "FastForwardPlan",
    "create_branch",
    "delete_branch",
    "delete_branches",
    "fast_forward",
    "list_branches",
    "merge_branch",
    "plan_fast_forward",
    "rename_branch",
]

logger = logging.getLogger(__name__)

FALLBACK_BRANCH = "scan.fallback-branch"
PRIMARY_BRANCH = "scan.primary-branch"


def list_branches(table: FileStoreTable) -> list[str]:
    """The table's branches, ``main`` not included, sorted (Paimon's ``branches()``)."""
    return _list_branches(table.file_io, table.path)


def _not_found(branch: str) -> BranchNotFound:
    return BranchNotFound(f"Branch name '{branch}' doesn't exist.")


def _exists(table: FileStoreTable, branch: str) -> bool:
    return branch_exists(table.file_io, table.path, branch)


def _files_of(snapshot: Snapshot) -> tuple[str | None, ...]:
    return (
        snapshot.base_manifest_list,
        snapshot.delta_manifest_list,
        snapshot.changelog_manifest_list,
        snapshot.index_manifest,
        snapshot.statistics,
    )


# ------------------------------------------------------------------------------ create


def create_branch(
    table: FileStoreTable,
    branch: str,
    tag: str | None = None,
    *,
    ignore_if_exists: bool = False,
) -> bool:
    """Create ``branch`` from tag ``tag`` of the current branch, or empty (the current
    latest schema only, no snapshot), as Paimon's ``createBranch``.

    From a tag, the branch gets the tag (as its own tag of the same name), the tagged
    snapshot as its first snapshot and the schemas up to that snapshot's; it reads the
    tag's rows and its next commit is that snapshot id + 1.

    Returns:
        True when created, False when it existed and ``ignore_if_exists``.

    Raises:
        InvalidBranchName: ``main``, blank, only digits or unsafe.
        BranchAlreadyExists: the branch exists (or is being created concurrently).
        InvalidTagName, TagNotFound: no such tag.
        SnapshotNotFound: the tag was deleted while the branch was made (nothing is left).
    """
    io = table.file_io
    if ignore_if_exists and isinstance(branch, str) and _exists(table, branch):
        return False
    validate_branch_name(branch)
    if _exists(table, branch):
        raise BranchAlreadyExists(f"Branch name '{branch}' already exists.")
    source_tag = None
    tag_bytes = b""
    if tag is not None:
        validate_tag_name(tag)
        try:
            tag_bytes = io.read_bytes(table.tag_manager.tag_path(tag))
        except FileNotFoundError:
            raise TagNotFound(f"Tag '{tag}' doesn't exist.") from None
        table.tag_manager.get(tag)  # the same checks as every tag read (corrupt: raises)
        source_tag = tag_from_json(tag_bytes)
    schemas = table.schema_manager
    if source_tag is None:
        latest = schemas.latest()
        if latest is None:
            raise SnapshotNotFound(f"Table {table.identifier or table.path} has no schema")
        last_schema = latest.schema_id
    else:
        last_schema = source_tag.snapshot.schema_id
    schema_ids = [i for i in schemas.list_ids() if i <= last_schema]
    target_schemas = SchemaManager(io, table.path, branch)
    for position, schema_id in enumerate(reversed(schema_ids)):
        data = io.read_bytes(schemas.schema_path(schema_id))
        if not io.write_no_clobber(target_schemas.schema_path(schema_id), data) and not position:
            raise BranchAlreadyExists(f"Branch name '{branch}' already exists.")
    if source_tag is None:
        return True
    snapshot = source_tag.snapshot
    target_snapshots = SnapshotManager(io, table.path, branch)
    current = table.snapshot_manager.try_snapshot(snapshot.snapshot_id, fresh=True)
    if current is not None and _files_of(current) == _files_of(snapshot):
        data = io.read_bytes(table.snapshot_manager.snapshot_path(snapshot.snapshot_id))
    else:
        data = snapshot_to_json(snapshot).encode("utf-8")
    io.write_no_clobber(target_snapshots.snapshot_path(snapshot.snapshot_id), data)
    io.write_no_clobber(TagManager(io, table.path, branch).tag_path(str(tag)), tag_bytes)
    if not _still_held(table, str(tag), snapshot):
        io.delete_dir(branch_path(table.path, branch))
        raise SnapshotNotFound(
            f"Cannot create branch '{branch}' because tag '{tag}' was deleted meanwhile; "
            "nothing was changed."
        )
    return True


def _still_held(table: FileStoreTable, tag: str, snapshot: Snapshot) -> bool:
    """Whether the tagged snapshot is still held by the source tag or its snapshot file
    after the branch was written: the creator's half of ``TagGuard``'s protocol."""
    current = table.tag_manager.try_get(tag)
    if current is not None and _files_of(current.snapshot) == _files_of(snapshot):
        return True
    live = table.snapshot_manager.try_snapshot(snapshot.snapshot_id, fresh=True)
    return live is not None and _files_of(live) == _files_of(snapshot)


# ---------------------------------------------------------------------- delete, rename


def _check_deletable(table: FileStoreTable, branch: str) -> None:
    if not isinstance(branch, str) or not branch.strip():
        raise InvalidArgument(f"Branch name '{branch}' is blank.")
    for key in (FALLBACK_BRANCH, PRIMARY_BRANCH):
        if table.options.get_str(key) == branch:
            raise InvalidArgument(
                f"Cannot delete branch '{branch}' because it is configured as '{key}'. "
                f"Unset '{key}' first."
            )
    if is_main_branch(branch) or not _exists(table, branch):
        raise _not_found(branch)


def delete_branch(table: FileStoreTable, branch: str) -> None:
    """Delete ``branch``: its directory (schemas, snapshots, tags, changelogs, consumers).

    As in Paimon only the branch's metadata goes: data files it wrote alone stay until
    ``remove_orphan_files`` (which then no longer counts the branch). Its hints go first,
    so that a crash leaves a branch Java reads by listing, and deleting it again finishes.

    Raises:
        InvalidArgument: blank, or the table's ``scan.fallback-branch``/``scan.primary-branch``.
        BranchNotFound: no such branch.
    """
    delete_branches(table, [branch])


def delete_branches(table: FileStoreTable, branches: str | list[str]) -> list[str]:
    """Delete several branches (``'a,b'`` as Paimon's ``deleteBranches``: split on commas,
    not trimmed); all are checked before the first is deleted. Returns their names."""
    names = branches.split(",") if isinstance(branches, str) else list(branches)
    for name in names:
        _check_deletable(table, name)
    io = table.file_io
    for name in dict.fromkeys(names):
        snapshots = SnapshotManager(io, table.path, name)
        for hint in (snapshots.latest_hint_path, snapshots.earliest_hint_path):
            io.delete(hint)
        io.delete_dir(branch_path(table.path, name))
    return list(dict.fromkeys(names))


def rename_branch(table: FileStoreTable, from_branch: str, to_branch: str) -> None:
    """Rename a branch by moving its directory (atomic on a local disk), as Paimon.

    Raises:
        InvalidArgument: renaming ``main``.
        BranchNotFound: ``from_branch`` does not exist.
        BranchAlreadyExists: ``to_branch`` exists.
        InvalidBranchName: ``to_branch`` is not a valid name.
    """
    if isinstance(from_branch, str) and is_main_branch(from_branch) and from_branch.strip():
        raise InvalidArgument("Cannot rename the main branch.")
    if not isinstance(from_branch, str) or not from_branch.strip():
        raise InvalidArgument(f"Branch name '{from_branch}' is blank.")
    if not _exists(table, from_branch):
        raise _not_found(from_branch)
    if isinstance(to_branch, str) and to_branch.strip() and _exists(table, to_branch):
        raise BranchAlreadyExists(f"Branch name '{to_branch}' already exists.")
    validate_branch_name(to_branch)
    try:
        table.file_io.rename(
            branch_path(table.path, from_branch), branch_path(table.path, to_branch)
        )
    except FileExistsError:
        raise BranchAlreadyExists(f"Branch name '{to_branch}' already exists.") from None


# ------------------------------------------------------------------------ fast-forward


@dataclass(frozen=True, slots=True)
class FastForwardPlan:
    """What ``fast_forward`` changes in the current branch (``target``), all computed
    before anything is written.

    ``removed_snapshot_ids``/``removed_tags``/``removed_changelogs`` are the current
    branch's history from the source's earliest snapshot on; ``deleted_schemas`` its schema
    files the source lacks from the source's first schema on; ``copied_*`` the source's
    files by name; ``deletion`` the data files, manifests and lists that only the removed
    history used."""

    target: str
    source: str
    earliest: int
    latest: int
    removed_snapshot_ids: tuple[int, ...]
    removed_tags: tuple[str, ...]
    removed_changelogs: tuple[str, ...]
    deleted_schemas: tuple[int, ...]
    copied_schemas: tuple[int, ...]
    copied_snapshots: tuple[int, ...]
    copied_tags: tuple[str, ...]
    restart: bool
    """The current branch keeps no snapshot below ``earliest``: ``EARLIEST`` is rewritten."""
    deletion: DeletionPlan


def plan_fast_forward(table: FileStoreTable, branch: str) -> FastForwardPlan:
    """Plan replacing the current branch's history from ``branch``'s earliest snapshot on by
    ``branch``'s snapshots, schemas and tags (Paimon's ``fastForward``).

    Raises:
        InvalidArgument: ``main``, blank, or the current branch itself.
        BranchNotFound: no such branch.
        SnapshotNotFound: the branch has no snapshot.
    """
    current = table.branch
    if not isinstance(branch, str) or is_main_branch(branch):
        raise InvalidArgument(f"Branch name '{branch}' do not use in fast-forward.")
    if not branch.strip():
        raise InvalidArgument(f"Branch name '{branch}' is blank.")
    if branch == current:
        raise InvalidArgument(f"Fast-forward from the current branch '{branch}' is not allowed.")
    if not _exists(table, branch):
        raise _not_found(branch)
    io = table.file_io
    source_snapshots = SnapshotManager(io, table.path, branch)
    ids = source_snapshots.list_snapshot_ids()
    if not ids:
        raise SnapshotNotFound(
            f"Cannot fast forward branch {branch}, because it does not have snapshot."
        )
    earliest = source_snapshots.snapshot(ids[0])
    schema_start = earliest.schema_id
    snapshots, tags = table.snapshot_manager, table.tag_manager
    removed_ids = [i for i in reversed(snapshots.list_snapshot_ids()) if i >= ids[0]]
    all_tags = tags.list_tags()
    removed_tags = sorted(n for n, t in all_tags.items() if t.snapshot_id >= ids[0])
    changelogs = ChangelogManager(io, table.path, table.snapshot_manager.branch)
    removed_changelogs = [
        changelogs.snapshot_path(i) for i in reversed(changelogs.list_snapshot_ids()) if i >= ids[0]
    ]
    source_schema_ids = SchemaManager(io, table.path, branch).list_ids()
    deleted_schemas = [
        i
        for i in reversed(table.schema_manager.list_ids())
        if i >= schema_start and i not in set(source_schema_ids)
    ]
    source_tags = TagManager(io, table.path, branch).tag_names()
    kept_ids = [i for i in snapshots.list_snapshot_ids() if i < ids[0]]

    removed: dict[int, Snapshot] = {}
    for i in removed_ids:
        snapshot = snapshots.try_snapshot(i)
        if snapshot is not None:
            removed[i] = snapshot
    for name in removed_tags:
        removed.setdefault(all_tags[name].snapshot_id, all_tags[name].snapshot)
    deletion = DeletionPlan()
    if removed:
        files = TableFiles(table)
        keep = [s for s in (snapshots.try_snapshot(kept_ids[-1]),) if s] if kept_ids else []
        keep += [t.snapshot for n, t in all_tags.items() if n not in removed_tags]
        try:
            others = other_branches_usage(table, files)  # the source's files among them
            kept = others.union(changelog_usage(table, files))
            deletion = plan_removal(
                table, list(removed.values()), keep, files=files, branches_usage=kept
            )
        except FileNotFoundError as err:
            logger.warning("Fast-forward keeps the files of replaced snapshots: %s", err)
    return FastForwardPlan(
        target=current,
        source=branch,
        earliest=ids[0],
        latest=ids[-1],
        removed_snapshot_ids=tuple(removed_ids),
        removed_tags=tuple(removed_tags),
        removed_changelogs=tuple(removed_changelogs),
        deleted_schemas=tuple(deleted_schemas),
        copied_schemas=tuple(source_schema_ids),
        copied_snapshots=tuple(ids),
        copied_tags=tuple(source_tags),
        restart=not kept_ids,
        deletion=deletion,
    )


def fast_forward(table: FileStoreTable, branch: str) -> FastForwardPlan:
    """Make ``branch``'s history the current branch's (Paimon's ``fastForward``): the
    current branch's snapshots, tags and schemas from ``branch``'s earliest snapshot on are
    replaced by ``branch``'s; the branch itself stays. Returns the applied plan.

    Raises:
        InvalidArgument, BranchNotFound, SnapshotNotFound: as ``plan_fast_forward``.
        PaimonError: a snapshot of the current branch was committed meanwhile (the current
            branch then holds the copied prefix plus that commit; run it again).
    """
    guard = TagGuard(table)
    plan = plan_fast_forward(table, branch)
    io = table.file_io
    snapshots, schemas, tags = table.snapshot_manager, table.schema_manager, table.tag_manager
    source_snapshots = SnapshotManager(io, table.path, branch)
    source_schemas = SchemaManager(io, table.path, branch)
    source_tags = TagManager(io, table.path, branch)
    io.delete(snapshots.latest_hint_path)
    for snapshot_id in plan.removed_snapshot_ids:
        snapshots.delete_snapshot(snapshot_id)
    for path in plan.removed_changelogs:
        io.delete(path)
    for name in plan.removed_tags:
        tags.delete_tag_file(name)
    for schema_id in plan.deleted_schemas:
        io.delete(schemas.schema_path(schema_id))
    for schema_id in plan.copied_schemas:
        data = io.read_bytes(source_schemas.schema_path(schema_id))
        io.overwrite_atomic(schemas.schema_path(schema_id), data)
    for snapshot_id in plan.copied_snapshots:
        data = io.read_bytes(source_snapshots.snapshot_path(snapshot_id))
        if not io.write_no_clobber(snapshots.snapshot_path(snapshot_id), data):
            if io.read_bytes(snapshots.snapshot_path(snapshot_id)) != data:
                raise SnapshotNotFound(
                    f"Cannot fast forward branch {branch}: snapshot {snapshot_id} of "
                    f"branch {plan.target} was committed meanwhile; run it again."
                )
    for name in plan.copied_tags:
        io.overwrite_atomic(tags.tag_path(name), io.read_bytes(source_tags.tag_path(name)))
    if plan.restart:
        io.overwrite_atomic(snapshots.earliest_hint_path, str(plan.earliest).encode())
    plan.deletion.apply(io, guard)
    io.overwrite_atomic(snapshots.latest_hint_path, str(plan.latest).encode())
    for snapshot_id in (*plan.removed_snapshot_ids, *plan.copied_snapshots):
        forget = getattr(snapshots, "_forget", None)
        if forget is not None:
            forget(snapshot_id)
    return plan


# ------------------------------------------------------------------------------- merge

_MERGEABLE_KINDS = frozenset({CommitKind.APPEND, CommitKind.ANALYZE})


def merge_branch(
    table: FileStoreTable, source_branch: str, target_branch: str = DEFAULT_BRANCH
) -> int:
    """Paimon 2.0's ``mergeBranch`` for append tables: commit to ``target_branch`` (one
    APPEND snapshot) every data file live in ``source_branch``'s latest snapshot that the
    target's latest snapshot lacks. Branch names are absolute (``main`` is the table).

    Returns:
        The number of files merged (0: nothing to do, no snapshot written).

    Raises:
        InvalidArgument: blank or equal names, a branch without snapshot, a primary-key or
            data-evolution table, row tracking or the latest fields differing, a history
            that does not start at snapshot 1 or holds anything but APPEND/ANALYZE
            snapshots, or a file's schema the target lacks or has differently.
        BranchNotFound: a branch does not exist.
    """
    for name, what in ((source_branch, "Source"), (target_branch, "Target")):
        if not isinstance(name, str) or not name.strip():
            raise InvalidArgument(f"{what} branch name '{name}' is blank.")
    if source_branch == target_branch:
        raise InvalidArgument(f"Cannot merge branch '{source_branch}' into itself.")
    for name in (source_branch, target_branch):
        if not is_main_branch(name) and not _exists(table, name):
            raise BranchNotFound(f"Branch '{name}' doesn't exist.")
    source = table.switch_to_branch(source_branch)
    target = table.switch_to_branch(target_branch)
    source_latest = source.snapshot_manager.latest_snapshot()
    if source_latest is None:
        raise InvalidArgument(
            f"Cannot merge branch '{source_branch}', because it does not have snapshot."
        )
    target_latest = target.snapshot_manager.latest_snapshot()
    if target_latest is None:
        raise InvalidArgument(
            f"Cannot merge into branch '{target_branch}', because it does not have snapshot."
        )
    for branch, handle in ((source_branch, source), (target_branch, target)):
        _check_append_history(handle.snapshot_manager, branch)
    for branch, handle in ((source_branch, source), (target_branch, target)):
        if handle.schema.primary_keys:
            raise InvalidArgument(
                "Branch merge is only supported for append-only tables, "
                f"but branch '{branch}' has primary keys."
            )
    for branch, handle in ((source_branch, source), (target_branch, target)):
        if handle.options.get_bool("data-evolution.enabled", False):
            raise InvalidArgument(
                f"Branch merge is not supported for data-evolution tables (branch '{branch}')."
            )
    source_tracking = source.options.get_bool("row-tracking.enabled", False)
    target_tracking = target.options.get_bool("row-tracking.enabled", False)
    if source_tracking != target_tracking:
        raise InvalidArgument(
            f"Cannot merge branch '{source_branch}' into '{target_branch}': row-tracking "
            f"settings must match (source={str(source_tracking).lower()}, "
            f"target={str(target_tracking).lower()})."
        )
    if source.schema.fields != target.schema.fields:
        raise InvalidArgument(
            f"Cannot merge branch '{source_branch}' into '{target_branch}', schema mismatch."
        )
    present = {e.identifier for e in target.new_scan().read_entries(target_latest)}
    missing = [
        e for e in source.new_scan().read_entries(source_latest) if e.identifier not in present
    ]
    if not missing:
        return 0
    for schema_id in sorted({e.file.schema_id for e in missing}):
        if not target.schema_manager.schema_exists(schema_id):
            raise InvalidArgument(
                f"Cannot merge branch '{source_branch}' into '{target_branch}', because "
                f"target branch does not contain schema id {schema_id} required by source "
                "files."
            )
        if source.schema_manager.schema(schema_id) != target.schema_manager.schema(schema_id):
            raise InvalidArgument(
                f"Cannot merge branch '{source_branch}' into '{target_branch}', schema "
                f"history mismatch for schema id {schema_id}."
            )
    target.new_commit().commit(_merge_messages(missing, target_tracking))
    return len(missing)


def _check_append_history(manager: SnapshotManager, branch: str) -> None:
    """Paimon's ``validateCompleteAppendOnly``: snapshots 1..latest all present, all
    APPEND or ANALYZE (without fork metadata, only such a history shows what a merge adds)."""
    earliest, latest = manager.earliest_snapshot_id(), manager.latest_snapshot_id()
    if earliest is None or latest is None:
        return
    if earliest != 1:
        raise InvalidArgument(
            f"Cannot merge: branch '{branch}' does not start at snapshot 1 (earliest is "
            f"{earliest}). Branch merge requires complete append-only snapshot history."
        )
    for snapshot_id in range(1, latest + 1):
        snapshot = manager.try_snapshot(snapshot_id)
        if snapshot is None:
            raise InvalidArgument(
                f"Cannot merge: snapshot {snapshot_id} is missing on branch '{branch}'. "
                "Branch merge requires complete append-only snapshot history."
            )
        if snapshot.commit_kind not in _MERGEABLE_KINDS:
            raise InvalidArgument(
                f"Cannot merge: snapshot {snapshot_id} on branch '{branch}' has commit kind "
                f"'{snapshot.commit_kind}'. Branch merge requires complete append-only "
                "snapshot history."
            )


def _merge_messages(entries: list[ManifestEntry], row_tracking: bool) -> list[CommitMessage]:
    """One message per (partition, bucket, total buckets); with row tracking the files'
    row ids are cleared for the target to assign (``BranchMergeHandler``)."""
    grouped: dict[tuple[bytes, int, int], list] = defaultdict(list)
    for e in entries:
        f = e.file
        if row_tracking and f.first_row_id is not None:
            f = replace(f, first_row_id=None)
        grouped[(e.partition, e.bucket, e.total_buckets)].append(f)
    return [CommitMessage(p, b, t, new_files=tuple(fs)) for (p, b, t), fs in grouped.items()]

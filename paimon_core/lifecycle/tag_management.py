"""Tag management: create, replace, rename, delete, list and expire tags of a table.

Follows Paimon 2.0 (``AbstractFileStoreTable`` + ``TagManager`` + ``TagTimeExpire``) and the
Spark procedures built on them (paimon-sql-surface.md §1.3, §5.4). Deliberate differences:

* every argument is checked before anything is written, so a failing call changes nothing
  (Paimon's ``delete_tag('a,,b')`` deletes ``a`` before rejecting the blank name);
* tag names must also be safe file names (``format.names.validate_tag_name``); a new name must not start
  or end with whitespace (``delete_tag`` trims) nor exceed 200 bytes; a user cannot create a purely
  numeric name (the tag proposal's rule: ``VERSION AS OF '5'`` would be ambiguous), while
  automatic tags (``20240101``) and numeric tags other writers made stay usable, as Paimon
  allows them since PR #2566;
* a new tag is published atomically (no clobbering a tag created concurrently), and
  ``replace_tag`` rewrites the file atomically (a crash leaves the old or the new tag);
* ``create_tag`` applies ``tag.default-time-retained`` when no retention is given, as Paimon's
  Java API ``createTag(name[, id])`` does; the Spark procedure and tag DDL do not (they pass
  null): mimic them with ``default_retention=False``. ``replace_tag`` never applies it
  (omitting the retention removes the TTL).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from paimon_core.exceptions import (
    InvalidArgument,
    SnapshotNotFound,
    TagAlreadyExists,
    TagNotFound,
)
from paimon_core.format.names import validate_tag_name
from paimon_core.format.options import parse_duration
from paimon_core.format.tag import Tag, tag_from_json, tag_to_json
from paimon_core.format.tag_period import auto_tag_period_handler
from paimon_core.lifecycle.file_deletion import (
    DeletionPlan,
    TableFiles,
    TagGuard,
    plan_tag_deletion,
    resolved_tags,
)

if TYPE_CHECKING:
    from paimon_core.format.snapshot import Snapshot
    from paimon_core.table import FileStoreTable

__all__ = [
    "TagExpireResult",
    "create_tag",
    "create_tag_from_timestamp",
    "delete_tags",
    "expire_tags",
    "find_snapshot",
    "list_tags",
    "local_datetime",
    "parse_tag_names",
    "rename_tag",
    "replace_tag",
    "tags_removed_by_rollback",
]

logger = logging.getLogger(__name__)


def parse_tag_names(tags: str | Sequence[str]) -> list[str]:
    """``'a, b'`` or ``['a', 'b']`` -> validated, de-duplicated names (Paimon splits on ``,``)."""
    parts = tags.split(",") if isinstance(tags, str) else list(tags)
    names = [p.strip() for p in parts]
    for name in names:
        validate_tag_name(name)
    return list(dict.fromkeys(names))


def local_datetime(millis: int) -> datetime:
    """Epoch millis as a naive local date-time (Java ``DateTimeUtils.toLocalDateTime``)."""
    return datetime.fromtimestamp(millis // 1000) + timedelta(milliseconds=millis % 1000)


def _retention(value: timedelta | str | None) -> timedelta | None:
    if value is None or isinstance(value, timedelta):
        return value
    return parse_duration(value)


def find_snapshot(table: FileStoreTable, snapshot_id: int, action: str = "create tag") -> Snapshot:
    """Paimon's ``findSnapshot``: the snapshot file, else the snapshot a tag still holds.

    Raises:
        SnapshotNotFound: neither a snapshot nor a tag has this id.
    """
    snapshot = table.snapshot_manager.try_snapshot(snapshot_id)
    if snapshot is not None:
        return snapshot
    for tag in table.tag_manager.list_tags().values():
        if tag.snapshot_id == snapshot_id:
            return tag.snapshot
    raise SnapshotNotFound(f"Cannot {action} because given snapshot #{snapshot_id} doesn't exist.")


def _resolve(table: FileStoreTable, snapshot_id: int | None, action: str) -> Snapshot:
    if snapshot_id is not None:
        return find_snapshot(table, snapshot_id, action)
    latest = table.snapshot_manager.latest_snapshot()
    if latest is None:
        raise SnapshotNotFound(f"Cannot {action} because latest snapshot doesn't exist.")
    return latest


def _check_not_auto_tagged(
    table: FileStoreTable, name: str, snapshot: Snapshot, exclude: str | None = None
) -> None:
    """Paimon's ``validateNoAutoTag``: one auto-named tag per snapshot while auto-creation is on.

    Unlike Paimon, replacing an auto tag in place (``exclude``) is not a conflict with itself.
    """
    handler = auto_tag_period_handler(table.options)
    if handler is None or not handler.is_auto_tag(name):
        return
    manager = table.tag_manager
    clash = [
        other
        for other in manager.tag_names()
        if other != exclude
        and handler.is_auto_tag(other)
        and (tag := manager.try_get(other)) is not None
        and tag.snapshot_id == snapshot.snapshot_id
    ]
    if clash:
        raise InvalidArgument(
            f"Snapshot {snapshot.snapshot_id} is already auto-tagged with [{', '.join(clash)}]."
        )


def _new_tag(snapshot: Snapshot, retained: timedelta | None, now: datetime | None) -> Tag:
    if retained is None:
        return Tag(snapshot)
    return Tag(snapshot, now or datetime.now(), retained)


def create_tag(
    table: FileStoreTable,
    tag: str,
    *,
    snapshot_id: int | None = None,
    time_retained: timedelta | str | None = None,
    ignore_if_exists: bool = False,
    default_retention: bool = True,
    allow_numeric: bool = False,
    now: datetime | None = None,
) -> Tag:
    """Create tag ``tag`` on a snapshot (the latest by default).

    Args:
        table: the table.
        tag: the new tag's name.
        snapshot_id: the snapshot to tag; an expired one works while another tag holds it.
        time_retained: TTL (``timedelta`` or a duration such as ``'1 d'``); None takes
            ``tag.default-time-retained``. With a TTL the file gets ``tagCreateTime``.
        ignore_if_exists: return the existing tag instead of raising.
        default_retention: whether ``tag.default-time-retained`` fills a missing TTL.
        allow_numeric: allow a purely numeric name (automatic tags such as ``20240101``).
        now: the creation time recorded with a TTL (default: local now, as Java).

    Returns:
        The tag as written (or the existing one when ignored).

    Raises:
        InvalidTagName: the name is blank or unsafe.
        SnapshotNotFound: no latest snapshot, or no snapshot/tag with ``snapshot_id``.
        TagAlreadyExists: the name is taken and ``ignore_if_exists`` is False.
        InvalidArgument: auto-creation is on, the name is an auto-tag name and the snapshot
            already has an auto tag; or a bad duration.
    """
    validate_tag_name(tag, allow_numeric=allow_numeric, new=True)
    retained = _retention(time_retained)
    snapshot = _resolve(table, snapshot_id, "create tag")
    if retained is None and default_retention:
        retained = table.options.tag_default_time_retained
    manager = table.tag_manager
    existing = manager.try_get(tag)
    if existing is not None:
        if ignore_if_exists:
            return existing
        raise TagAlreadyExists(f"Tag '{tag}' already exists.")
    _check_not_auto_tagged(table, tag, snapshot)
    new = _new_tag(snapshot, retained, now)
    data = tag_to_json(new).encode("utf-8")
    if not table.file_io.write_no_clobber(manager.tag_path(tag), data):
        if ignore_if_exists:
            return manager.get(tag)
        raise TagAlreadyExists(f"Tag '{tag}' already exists.")
    if not _still_held(table, tag, snapshot):
        manager.delete_tag_file(tag)
        raise _vanished(snapshot, "create tag")
    return new


def _files_of(snapshot: Snapshot) -> tuple[str | None, ...]:
    return (
        snapshot.base_manifest_list,
        snapshot.delta_manifest_list,
        snapshot.changelog_manifest_list,
        snapshot.index_manifest,
        snapshot.statistics,
    )


def _still_held(table: FileStoreTable, tag: str, snapshot: Snapshot) -> bool:
    """Whether, after tag ``tag`` was written, ``snapshot`` is still held by its snapshot
    file or by another tag: the creator's half of ``file_deletion.TagGuard``'s protocol. If
    it is not, a concurrent expiry, rollback or tag deletion may be deleting its files."""
    files = _files_of(snapshot)
    current = table.snapshot_manager.try_snapshot(snapshot.snapshot_id, fresh=True)
    if current is not None and _files_of(current) == files:
        return True
    return any(
        name != tag and _files_of(other.snapshot) == files
        for name, other in table.tag_manager.list_tags().items()
    )


def _vanished(snapshot: Snapshot, action: str) -> SnapshotNotFound:
    return SnapshotNotFound(
        f"Cannot {action} because snapshot #{snapshot.snapshot_id} was expired or rolled "
        "back meanwhile; nothing was changed."
    )


def create_tag_from_timestamp(
    table: FileStoreTable,
    tag: str,
    timestamp_millis: int,
    time_retained: timedelta | str | None = None,
    *,
    default_retention: bool = True,
    now: datetime | None = None,
) -> Tag:
    """Tag the first snapshot committed at or after ``timestamp_millis``.

    As the Spark procedure: the earliest live snapshot with ``timeMillis >= timestamp``, or
    the first tagged snapshot (in id order) at or after it when that one is older, so an
    expired snapshot a tag still holds can be tagged again.

    Returns:
        The new tag (its snapshot gives the procedure's id, commit time and watermark).

    Raises:
        SnapshotNotFound: ``Could not find any snapshot whose commit-time later than <ts>.``
        plus every error of ``create_tag``.
    """
    validate_tag_name(tag, allow_numeric=False, new=True)
    snapshot = table.snapshot_manager.later_or_equal_time_millis(timestamp_millis)
    tagged = sorted(
        (t.snapshot for t in table.tag_manager.list_tags().values()),
        key=lambda s: s.snapshot_id,
    )
    for candidate in tagged:
        if timestamp_millis <= candidate.time_millis:
            if snapshot is None or candidate.time_millis < snapshot.time_millis:
                snapshot = candidate
            break
    if snapshot is None:
        raise SnapshotNotFound(
            f"Could not find any snapshot whose commit-time later than {timestamp_millis}."
        )
    return create_tag(
        table,
        tag,
        snapshot_id=snapshot.snapshot_id,
        time_retained=time_retained,
        default_retention=default_retention,
        now=now,
    )


def replace_tag(
    table: FileStoreTable,
    tag: str,
    snapshot_id: int | None = None,
    time_retained: timedelta | str | None = None,
    *,
    now: datetime | None = None,
) -> Tag:
    """Point an existing tag at another snapshot (the latest by default), rewriting its file.

    Omitting ``time_retained`` removes any TTL (Paimon rewrites the file wholesale).

    Raises:
        InvalidTagName, SnapshotNotFound (checked first, as Paimon), TagNotFound, InvalidArgument.
    """
    validate_tag_name(tag)
    retained = _retention(time_retained)
    snapshot = _resolve(table, snapshot_id, "replace tag")
    manager = table.tag_manager
    if not manager.tag_exists(tag):
        raise TagNotFound(f"Tag '{tag}' doesn't exist.")
    _check_not_auto_tagged(table, tag, snapshot, exclude=tag)
    new = _new_tag(snapshot, retained, now)
    path = manager.tag_path(tag)
    try:
        previous = table.file_io.read_bytes(path)
    except FileNotFoundError:
        raise TagNotFound(f"Tag '{tag}' doesn't exist.") from None
    manager.write_tag(tag, new)
    kept_by_itself = _files_of(tag_from_json(previous).snapshot) == _files_of(snapshot)
    if not kept_by_itself and not _still_held(table, tag, snapshot):
        table.file_io.overwrite_atomic(path, previous)
        raise _vanished(snapshot, "replace tag")
    return new


def rename_tag(table: FileStoreTable, tag: str, target_tag: str) -> None:
    """Rename ``tag`` to ``target_tag``, keeping the file's bytes (retention included).

    The new file is created atomically before the old one goes, so a crash in between
    leaves both names, never neither.

    Raises:
        InvalidTagName: a blank or unsafe name.
        TagNotFound: ``tag`` does not exist.
        TagAlreadyExists: ``target_tag`` exists.
    """
    validate_tag_name(tag, "Original tag name")
    manager = table.tag_manager
    try:
        data = table.file_io.read_bytes(manager.tag_path(tag))
    except FileNotFoundError:
        raise TagNotFound(f"Tag '{tag}' doesn't exist.") from None
    validate_tag_name(target_tag, "New tag name", allow_numeric=False, new=True)
    if manager.tag_exists(target_tag) or not table.file_io.write_no_clobber(
        manager.tag_path(target_tag), data
    ):
        raise TagAlreadyExists(f"Tag '{target_tag}' already exists.")
    manager.delete_tag_file(tag)


def delete_tags(
    table: FileStoreTable, tags: str | Sequence[str], dry_run: bool = False
) -> DeletionPlan:
    """Delete tags (a comma-separated string or a list) and the files only they kept alive.

    A missing tag is skipped with a warning, as in Paimon. Which data files, manifests and
    lists go is Paimon's ``TagDeletion`` (``file_deletion.plan_tag_deletion``).

    Returns:
        The deletion plan, applied unless ``dry_run``.

    Raises:
        InvalidTagName: a blank or unsafe name (nothing is deleted then).
    """
    names = parse_tag_names(tags)
    guard = TagGuard(table)
    plan = plan_tag_deletion(table, names)
    if not dry_run:
        plan.apply(table.file_io, guard)
    return plan


def list_tags(table: FileStoreTable) -> dict[str, Tag]:
    """All tags by name, sorted by name (``SHOW TAGS`` order)."""
    return dict(sorted(table.tag_manager.list_tags().items()))


@dataclass(frozen=True, slots=True)
class TagExpireResult:
    """The tags that expired (or would, in a dry run), in name order, and their deletion."""

    names: tuple[str, ...]
    plan: DeletionPlan

    def __str__(self) -> str:
        return f"expired tags: {', '.join(self.names) or 'none'}\n{self.plan}"


def expire_tags(
    table: FileStoreTable,
    older_than_millis: int | None = None,
    *,
    now: datetime | None = None,
    dry_run: bool = False,
) -> TagExpireResult:
    """Paimon's ``TagTimeExpire.expire``: delete tags whose retention has passed.

    A tag with ``tagCreateTime`` and ``tagTimeRetained`` expires once ``now`` is after
    create time + retention. Tags without a TTL are kept, unless ``older_than_millis`` is
    given: then any tag created before it goes too, and a tag without ``tagCreateTime``
    counts as created at its file's modification time (all in local time, as Paimon).

    Returns:
        The expired tag names and the ``DeletionPlan`` of their tag files and of the files
        only they kept alive (``plan_tag_deletion``), applied unless ``dry_run``.
    """
    now = now or datetime.now()
    older_than = local_datetime(older_than_millis) if older_than_millis is not None else None
    manager = table.tag_manager
    guard = TagGuard(table)
    files = TableFiles(table)
    expired = []
    # Every tag resolved, the expiring ones too: an automatic expiry stops at a broken tag.
    for name, tag in sorted(resolved_tags(manager, files).items()):
        created, retained = tag.tag_create_time, tag.tag_time_retained
        if created is None or retained is None:
            if older_than is None:
                continue
            try:
                status = table.file_io.get_status(manager.tag_path(name))
            except FileNotFoundError:
                continue
            created = local_datetime(status.mtime_ms)
        reached = retained is not None and now > created + retained
        if reached or (older_than is not None and older_than > created):
            expired.append(name)
    plan = plan_tag_deletion(table, expired, files) if expired else DeletionPlan()
    if not dry_run:
        plan.apply(table.file_io, guard)
    return TagExpireResult(tuple(expired), plan)


def tags_removed_by_rollback(table: FileStoreTable, snapshot_id: int) -> list[str]:
    """Names of the tags a rollback to ``snapshot_id`` deletes: those on newer snapshots."""
    return sorted(
        n for n, t in table.tag_manager.list_tags().items() if t.snapshot_id > snapshot_id
    )

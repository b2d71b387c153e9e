"""Snapshot and changelog expiry: which snapshots go (Paimon's ``ExpireSnapshotsImpl`` and
``ExpireChangelogImpl``), as a plan.

Follows Paimon 2.0.0, the latest release: a snapshot expires by time only once its *next*
snapshot is older than the retention (``snapshot.time-retained``; up to 1.4 the snapshot's
own time counted, PR #7706). The Spark ``expire_snapshots`` procedure's defaults
(``ProcedureUtils.fillInSnapshotOptions``, since 1.1) apply: an argument left out takes
the table option. Which files go is in ``file_deletion.plan_expiry``.

Decoupled changelog lifecycle, implemented in full (not a subset): when
``changelog.num-retained.max``/``.min`` or ``changelog.time-retained`` exceed the snapshot
retention (``CoreOptions.changelogLifecycleDecoupled``), snapshot expiry keeps every expired
snapshot as ``changelog/changelog-N`` (its JSON; then the changelog ``LATEST`` hint) and
keeps what that changelog reads (changelog lists, manifests and files; for a table without
``changelog-producer``, the appended data files and the base and delta lists), and then
``expire_changelogs`` removes changelogs beyond the changelog retention (Paimon's
``ExpireChangelogImpl``: never the newest changelog, changelog ``EARLIEST`` hint), both after
each commit as Paimon's ``newExpireRunnable``. Deliberate differences, all keeping more:

* ``expire_snapshots`` decides decoupling from the table's explicit ``changelog.*`` options
  against the retention it is given, also when called as the procedure (Paimon's Spark
  procedure passes no changelog options, so there it never decouples and deletes the
  changelog files long-lived changelogs may still need);
* expiry that is not decoupled and tag deletion never delete files an existing changelog
  reads (``file_deletion.changelog_usage``), and changelog files of tagged ids stay until the
  tag goes (as for snapshots);

Consumers (``format/consumer.py``) as Paimon 2.0: snapshot and changelog expiry never
remove the smallest consumer ``nextSnapshot`` or anything after it; with
``consumer.changelog-only`` (read by the commit-time expiry only, as Paimon's
``CoreOptions.expireConfig``; the procedure ignores it) consumers protect changelogs only.
Each commit first deletes consumers idle beyond ``consumer.expiration-time``
(``expire_consumers``), then expires snapshots, as Paimon's ``TableCommitImpl.maintain``.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from paimon_core.exceptions import InvalidArgument
from paimon_core.format.consumer import ConsumerManager
from paimon_core.format.paths import POSTPONE_BUCKET
from paimon_core.format.snapshot import ChangelogManager
from paimon_core.lifecycle.file_deletion import (
    DeletionPlan,
    TableFiles,
    TagGuard,
    plan_changelog_expiry,
    plan_expiry,
)
from paimon_core.operations.commit import BATCH_COMMIT_IDENTIFIER

if TYPE_CHECKING:
    from paimon_core.format.options import CoreOptions
    from paimon_core.format.snapshot import Snapshot, SnapshotManager
    from paimon_core.table import FileStoreTable

__all__ = [
    "ExpireResult",
    "changelog_decoupled",
    "expire_after_commit",
    "expire_changelogs",
    "expire_consumers",
    "expire_snapshots",
    "min_consumer_snapshot",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ExpireResult:
    """How many snapshots (or changelogs) expired, or would in a dry run, and the plan."""

    expired: int
    plan: DeletionPlan


def min_consumer_snapshot(table: FileStoreTable) -> int | None:
    """The smallest ``nextSnapshot`` of the table's consumers (``consumer/consumer-<id>``).

    Raises:
        CorruptMetadata: a consumer file cannot be read; that consumer may need any
            snapshot, so expiry stops rather than ignore it (as Java's ``ConsumerManager``).
    """
    manager = table.snapshot_manager
    return ConsumerManager(table.file_io, table.path, manager.branch).min_next_snapshot()


def expire_consumers(table: FileStoreTable, now_millis: int | None = None) -> list[str]:
    """Delete consumers idle longer than ``consumer.expiration-time`` (by the file's
    modification time); returns their ids. Paimon's commit maintenance runs it right before
    snapshot expiry, so that a stopped reader stops holding snapshots back."""
    retained = table.options.get_duration("consumer.expiration-time")
    if retained is None:
        return []
    now = int(time.time() * 1000) if now_millis is None else now_millis
    older_than = now - retained // timedelta(milliseconds=1)
    manager = ConsumerManager(table.file_io, table.path, table.snapshot_manager.branch)
    return manager.expire(older_than)


def changelog_decoupled(
    options: CoreOptions, retain_max: int, retain_min: int, time_retained: timedelta
) -> bool:
    """``ExpireConfig.isChangelogDecoupled``: an explicit ``changelog.*`` retention beyond the
    snapshot retention given (a missing one equals it)."""
    return (
        (options.get_int("changelog.num-retained.max") or retain_max) > retain_max
        or (options.get_int("changelog.num-retained.min") or retain_min) > retain_min
        or (options.get_duration("changelog.time-retained") or time_retained) > time_retained
    )


def expire_snapshots(
    table: FileStoreTable,
    *,
    retain_max: int | None = None,
    retain_min: int | None = None,
    older_than_millis: int | None = None,
    max_deletes: int | None = None,
    dry_run: bool = False,
    decoupled: bool | None = None,
    consumer_changelog_only: bool = False,
) -> ExpireResult:
    """Expire old snapshots and the files only they used.

    Args:
        table: the table (its options give every default).
        retain_max: keep at most this many snapshots (``snapshot.num-retained.max``).
        retain_min: keep at least this many (``snapshot.num-retained.min``); values below 1
            count as 1, so the latest snapshot never expires (Paimon accepts 0: #10088).
        older_than_millis: expire by time up to here (default now - ``snapshot.time-retained``).
        max_deletes: expire at most this many at once (``snapshot.expire.limit``).
        dry_run: only plan; nothing is deleted or written.
        decoupled: keep expired snapshots as long-lived changelogs; None decides by the
            table's ``changelog.*`` options (``changelog_decoupled``).
        consumer_changelog_only: consumers do not hold snapshots back (they still hold
            changelogs): ``consumer.changelog-only``.

    Returns:
        The number of expired snapshots and the applied (or planned) ``DeletionPlan``.

    Raises:
        InvalidArgument: ``retain_max`` is less than ``retain_min``.
    """
    options = table.options
    retain_max = options.snapshot_num_retained_max if retain_max is None else retain_max
    retain_min = options.snapshot_num_retained_min if retain_min is None else retain_min
    max_deletes = options.snapshot_expire_limit if max_deletes is None else max_deletes
    now = int(time.time() * 1000)
    if older_than_millis is None:
        retained = options.snapshot_time_retained
        older_than_millis = now - int(retained.total_seconds() * 1000)
    if decoupled is None:
        time_retained = timedelta(milliseconds=max(now - older_than_millis, 0))
        decoupled = changelog_decoupled(options, retain_max, retain_min, time_retained)
    manager = table.snapshot_manager
    latest = manager.latest_snapshot_id()
    earliest = manager.earliest_snapshot_id()
    if latest is None or earliest is None:
        return ExpireResult(0, DeletionPlan())
    first, max_exclusive = _expiry_range(
        table,
        latest,
        earliest,
        retain_max,
        retain_min,
        max_deletes,
        keep_latest=True,
        consumers=not consumer_changelog_only,
    )
    end = max_exclusive
    for snapshot_id in range(first, max_exclusive):
        following = manager.try_snapshot(snapshot_id + 1)
        if following is not None and older_than_millis <= following.time_millis:
            end = snapshot_id
            break
    return _expire_until(table, earliest, end, dry_run, decoupled)


def _expiry_range(
    table: FileStoreTable,
    latest: int,
    earliest: int,
    retain_max: int,
    retain_min: int,
    max_deletes: int,
    *,
    keep_latest: bool = False,
    consumers: bool = True,
) -> tuple[int, int]:
    """First id the time check starts at and the exclusive id bound the retention, the
    consumers and ``max_deletes`` allow expiring up to (Paimon's ``ExpireSnapshotsImpl``)."""
    if retain_max < retain_min:
        raise InvalidArgument(
            f"retainMax ({retain_max}) must not be less than retainMin ({retain_min})."
        )
    first = max(latest - retain_max + 1, earliest)
    if keep_latest:
        retain_min = max(retain_min, 1)
    max_exclusive = latest - retain_min + 1
    consumer = min_consumer_snapshot(table) if consumers else None
    if consumer is not None:
        max_exclusive = min(max_exclusive, consumer)
    return first, min(max_exclusive, earliest + max(max_deletes, 0))


def _hint_says(table: FileStoreTable, path: str, snapshot_id: int) -> bool:
    try:
        return table.file_io.read_text(path).strip() == str(snapshot_id)
    except OSError:
        return False


def _expire_until(
    table: FileStoreTable, earliest: int, end: int, dry_run: bool, decoupled: bool
) -> ExpireResult:
    manager = table.snapshot_manager
    if end <= earliest:
        return ExpireResult(0, _earliest_hint_only(table, manager, earliest, dry_run))
    # Read again, not from the cache: what a deletion is planned from must be on disk now.
    ids = manager.snapshot_ids_between(earliest - 1, end)
    window = [s for s in (manager.try_snapshot(i, fresh=True) for i in ids) if s]
    if not window or window[-1].snapshot_id != end:
        return ExpireResult(0, DeletionPlan())  # end is gone: another process expired it
    files = TableFiles(table)
    guard = TagGuard(table, files)
    plan = plan_expiry(table, window, files, changelog_decoupled=decoupled)
    expired = len(plan.snapshot_files)
    if not dry_run:
        try:
            plan.apply(table.file_io, guard)
        finally:
            forget = getattr(manager, "_forget", None)
            if forget is not None:  # drop the cached JSON of deleted snapshots
                for snapshot in window[:-1]:
                    forget(snapshot.snapshot_id)
    return ExpireResult(expired, plan)


def _earliest_hint_only(
    table: FileStoreTable, manager: SnapshotManager, earliest: int, dry_run: bool
) -> DeletionPlan:
    # Paimon writes a missing hint only; a stale one (left by an expiry that died before
    # its hint write) is rewritten too, so that running the expiry again finishes it.
    plan = DeletionPlan()
    if not _hint_says(table, manager.earliest_hint_path, earliest):
        plan = DeletionPlan(hints=((manager.earliest_hint_path, earliest),))
    if not dry_run:
        plan.apply(table.file_io)
    return plan


def expire_changelogs(
    table: FileStoreTable,
    *,
    retain_max: int | None = None,
    retain_min: int | None = None,
    older_than_millis: int | None = None,
    max_deletes: int | None = None,
    dry_run: bool = False,
) -> ExpireResult:
    """Paimon's ``ExpireChangelogImpl.expire``: remove long-lived changelogs beyond the
    changelog retention, counted, like Paimon, against the latest *snapshot* id.

    Defaults: ``changelog.num-retained.max``/``.min`` and ``changelog.time-retained`` (each
    falling back to its ``snapshot.*`` option) and ``snapshot.expire.limit``. The newest
    long-lived changelog always stays; by time, the changelogs before the first one younger
    than the retention go. Which files go is ``file_deletion.plan_changelog_expiry``.

    Returns:
        The number of changelogs removed (or that would be) and the plan.

    Raises:
        InvalidArgument: ``retain_max`` is less than ``retain_min``.
    """
    options = table.options
    retain_max = options.changelog_num_retained_max if retain_max is None else retain_max
    retain_min = options.changelog_num_retained_min if retain_min is None else retain_min
    max_deletes = options.snapshot_expire_limit if max_deletes is None else max_deletes
    if older_than_millis is None:
        retained = options.changelog_time_retained
        older_than_millis = int(time.time() * 1000) - int(retained.total_seconds() * 1000)
    snapshots = table.snapshot_manager
    changelogs = ChangelogManager(table.file_io, table.path, snapshots.branch)
    latest = snapshots.latest_snapshot_id()
    earliest = snapshots.earliest_snapshot_id()
    latest_changelog = changelogs.latest_snapshot_id()
    earliest_changelog = changelogs.earliest_snapshot_id()
    if latest is None or earliest is None or latest_changelog is None:
        return ExpireResult(0, DeletionPlan())
    assert earliest_changelog is not None
    first, max_exclusive = _expiry_range(
        table, latest, earliest_changelog, retain_max, retain_min, max_deletes
    )
    max_exclusive = min(max_exclusive, latest_changelog)
    if max_exclusive <= earliest_changelog:
        return ExpireResult(0, DeletionPlan())
    end = max_exclusive
    for changelog_id in range(first, max_exclusive + 1):
        changelog = changelogs.try_snapshot(changelog_id)
        if changelog is not None and older_than_millis <= changelog.time_millis:
            end = changelog_id
            break
    if end <= earliest_changelog:
        return ExpireResult(0, _earliest_hint_only(table, changelogs, earliest_changelog, dry_run))
    ids = changelogs.snapshot_ids_between(earliest_changelog - 1, end)
    window = [c for c in (changelogs.try_snapshot(i, fresh=True) for i in ids) if c]
    if not window or window[-1].snapshot_id != end:
        logger.error("Changelog %d is gone; changelog expiry skipped", end)
        return ExpireResult(0, DeletionPlan())
    guard = TagGuard(table)
    plan = plan_changelog_expiry(
        table, earliest_changelog, window[:-1], window[-1], snapshots.earliest_snapshot()
    )
    if not dry_run:
        plan.apply(table.file_io, guard)
    return ExpireResult(len(plan.snapshot_files), plan)


# -------------------------------------------------------------------- after each commit

_async_pool: ThreadPoolExecutor | None = None
_async_lock = threading.Lock()


def _async_executor() -> ThreadPoolExecutor:
    global _async_pool
    with _async_lock:
        if _async_pool is None:
            _async_pool = ThreadPoolExecutor(1, thread_name_prefix="paimon-expire")
        return _async_pool


def _nothing_expires(table: FileStoreTable, published: Snapshot) -> bool:
    """True when ``expire_snapshots`` would surely expire nothing after ``published``,
    decided from ``EARLIEST`` and at most one snapshot (the common case of every commit),
    instead of the latest id, the consumers and the hints that the full run reads.

    Counts against ``published``, not a newer latest: a snapshot another writer committed
    meanwhile is expired by that writer's own commit. A missing or stale ``EARLIEST`` or a
    retention that does not validate goes the full way, which repairs or reports it.
    """
    options = table.options
    retain_max = options.snapshot_num_retained_max
    retain_min = max(options.snapshot_num_retained_min, 1)
    if retain_max < retain_min:
        return False
    manager = table.snapshot_manager
    earliest = manager.earliest_hint()
    latest = published.snapshot_id
    if earliest is None or earliest <= 0 or earliest > latest:
        return False
    if latest - retain_min + 1 > earliest:  # the count allows expiring: check the time
        if latest - retain_max + 1 > earliest:
            return False
        following = manager.try_snapshot(earliest + 1)
        retained = options.snapshot_time_retained
        older_than = int(time.time() * 1000) - int(retained.total_seconds() * 1000)
        if following is None or following.time_millis < older_than:
            return False
    return manager.snapshot_exists(earliest)


def _expire_quietly(table: FileStoreTable, published: Snapshot) -> None:
    """Paimon's commit maintenance: idle consumers, snapshots, then, when decoupled,
    changelogs."""
    try:
        expire_consumers(table)
        if not _nothing_expires(table, published):
            changelog_only = table.options.get_bool("consumer.changelog-only", False)
            expire_snapshots(table, consumer_changelog_only=changelog_only)
        if table.options.changelog_lifecycle_decoupled:
            expire_changelogs(table)
    except Exception:  # the commit succeeded; expiry retries on the next one
        logger.exception("Snapshot expiration after commit failed")


def expire_after_commit(table: FileStoreTable, snapshot: Snapshot) -> None:
    """Commit-time expiry by the table options, as Paimon's ``newExpireRunnable``.

    Off for ``write-only`` tables and postpone-bucket (``bucket=-2``) primary-key tables.
    ``snapshot.expire.execution-mode=async`` runs it on a background thread, except after
    a batch commit, which Paimon always maintains synchronously. A failure is logged, not
    raised: the commit itself has succeeded.
    """
    options = table.options
    if options.write_only:
        return
    if table.is_primary_key_table and options.bucket == POSTPONE_BUCKET:
        return
    if (
        options.snapshot_expire_execution_mode == "async"
        and snapshot.commit_identifier != BATCH_COMMIT_IDENTIFIER
    ):
        _async_executor().submit(_expire_quietly, table, snapshot)
        return
    _expire_quietly(table, snapshot)

"""Automatic tags after commits: Paimon's ``TagAutoManager`` for batch commits.

``tag.automatic-creation``:

* ``process-time`` / ``watermark`` (``TagAutoCreation``): walking the snapshots after the
  newest auto tag, a snapshot whose time (commit time in ``sink.process-time-zone``, or
  watermark in ``sink.watermark-time-zone``, default UTC) minus ``tag.creation-delay`` reaches
  the end of the period after the last tag gets the tag of the period before its own
  (daily ``2024-01-01`` is made by the first snapshot at or after ``2024-01-02 00:00`` +
  delay). With ``tag.automatic-completion`` it gets the next missing period instead, one per
  snapshot. The first tag ever goes on the first snapshot seen. Then the oldest auto tags
  beyond ``tag.num-retained-max`` are deleted (with their files).
* ``batch`` (Spark's ``TagBatchCreation``, after each batch write): the latest snapshot is
  tagged ``batch-write-yyyy-MM-dd`` (commit date in ``sink.process-time-zone``) or
  ``tag.batch.customized-name``, replacing a tag of that name; ``tag.num-retained-max``
  then counts *all* tags, oldest snapshots first (Paimon's rule).

Auto tags get ``tag.default-time-retained``; then tags whose TTL passed are expired
(``tag.time-expire-enabled``, Paimon's ``TagTimeExpire`` run by every commit's maintenance).

Tag names follow ``TagPeriodHandler`` (Paimon 2.0): daily ``yyyy-MM-dd`` / ``yyyyMMdd``,
hourly ``yyyy-MM-dd HH`` / ``yyyyMMdd HH`` / ``yyyyMMddHH``, two-hours always
``yyyy-MM-dd HH``, ``tag.creation-period-duration`` ``yyyyMMddHHmm``. Periods are aligned on
the epoch of the *local* time (Paimon reads the local date-time as if it were UTC).

The hook is ``auto_create_tags(table, snapshot)``; ``lifecycle.post_commit.post_commit_hooks``
runs it after snapshot expiry, so after a commit snapshots expire first and tags are made (and
TTL-expired) afterwards: the order of Paimon 0.9's
``TableCommitImpl.expire`` (the Java oracle). Paimon 1.x/2.0's ``TableCommitImpl.maintain``
runs tag creation and tag TTL expiry before snapshot expiry (Spark's batch tag still comes
after both); the difference only shows when a snapshot expires in the commit that should
have tagged it.
Not done: tag callbacks, success files, ``forceCreatingSnapshot`` (streaming only).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from paimon_core.exceptions import InvalidArgument
from paimon_core.format.snapshot import FIRST_SNAPSHOT_ID
from paimon_core.format.tag_period import (
    TagPeriodHandler,
    auto_tag_period_handler,
    period_handler,
)
from paimon_core.lifecycle.file_deletion import TagGuard, plan_tag_deletion
from paimon_core.lifecycle.tag_management import create_tag, expire_tags

if TYPE_CHECKING:
    from paimon_core.format.options import CoreOptions
    from paimon_core.format.snapshot import Snapshot
    from paimon_core.table import FileStoreTable

__all__ = [
    "BATCH_WRITE_TAG_PREFIX",
    "TagPeriodHandler",
    "auto_create_tags",
    "auto_tag_period_handler",
    "clock",
    "create_batch_tag",
    "period_handler",
    "run_tag_auto_creation",
    "run_tag_maintenance",
]

logger = logging.getLogger(__name__)

BATCH_WRITE_TAG_PREFIX = "batch-write-"
LONG_MIN = -(2**63)

#: Local "now" (naive, as Java's ``LocalDateTime.now()``); tests replace it.
clock: Callable[[], datetime] = datetime.now


def _zone(name: str | None) -> tzinfo | None:
    """A Java ``ZoneId``: a region (``Asia/Shanghai``), ``UTC``/``Z`` or an offset (``GMT-08:00``)."""
    if name is None:
        return None
    text = name.strip()
    if text in ("Z", "UTC", "GMT", "UT"):
        return UTC
    match = re.fullmatch(r"(?:UTC|GMT|UT)?([+-])([0-9]{1,2})(?::?([0-9]{2}))?", text)
    if match is not None:
        sign = -1 if match.group(1) == "-" else 1
        offset = timedelta(hours=int(match.group(2)), minutes=int(match.group(3) or 0))
        return timezone(sign * offset)
    try:
        return ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError):
        raise InvalidArgument(f"Unknown time zone '{name}'") from None


def _local(millis: int, zone: tzinfo | None) -> datetime:
    instant = datetime.fromtimestamp(0, UTC) + timedelta(milliseconds=millis)
    return (instant.astimezone(zone) if zone else instant.astimezone()).replace(tzinfo=None)


def _time_extractor(options: CoreOptions) -> Callable[[Snapshot], datetime | None]:
    if options.tag_automatic_creation == "watermark":
        zone = _zone(options.get_str("sink.watermark-time-zone", "UTC"))

        def watermark(snapshot: Snapshot) -> datetime | None:
            mark = snapshot.watermark
            return None if mark is None or mark == LONG_MIN else _local(mark, zone)

        return watermark
    zone = _zone(options.get_str("sink.process-time-zone"))
    return lambda snapshot: _local(snapshot.time_millis, zone)


def _delete_tags(table: FileStoreTable, names: list[str]) -> None:
    if names:
        guard = TagGuard(table)
        plan_tag_deletion(table, names).apply(table.file_io, guard)


def run_tag_auto_creation(table: FileStoreTable, *, now: datetime | None = None) -> list[str]:
    """One run of Paimon's ``TagAutoCreation``; returns the names of the tags created.

    Stateless: progress is restored from the newest auto tag each time, as a fresh Paimon
    committer does. Does nothing unless ``tag.automatic-creation`` is process-time/watermark.
    """
    options = table.options
    handler = auto_tag_period_handler(options)
    if handler is None:
        return []
    delay = options.tag_creation_delay
    handler.validate_delay(delay)
    snapshots, tags = table.snapshot_manager, table.tag_manager

    next_tag: datetime | None = None
    auto = [n for n in tags.tag_names() if handler.is_auto_tag(n)]
    if auto:
        newest = max(auto, key=handler.tag_to_time)
        next_snapshot = tags.get(newest).snapshot_id + 1
        next_tag = handler.next_tag_time(handler.tag_to_time(newest))
    else:
        next_snapshot = snapshots.earliest_snapshot_id() or FIRST_SNAPSHOT_ID

    extract = _time_extractor(options)
    created: list[str] = []
    latest = snapshots.latest_snapshot_id()
    while True:
        snapshot = snapshots.try_snapshot(next_snapshot)
        if snapshot is None:
            earliest = snapshots.earliest_snapshot_id()
            if earliest is not None and earliest > next_snapshot:
                next_snapshot = earliest  # expired meanwhile
                continue
            if latest is None or next_snapshot >= latest:
                break
            next_snapshot += 1  # a hole in the ids: skip it
            continue
        time = extract(snapshot)
        if time is not None and (
            next_tag is None or time - delay >= handler.next_tag_time(next_tag)
        ):
            this_tag = handler.normalize_to_previous_tag(time)
            if options.tag_automatic_completion and next_tag is not None:
                this_tag = next_tag
            name = handler.time_to_tag(this_tag)
            if not tags.tag_exists(name):
                created.append(name)
            create_tag(
                table,
                name,
                snapshot_id=snapshot.snapshot_id,
                ignore_if_exists=True,
                allow_numeric=True,
                now=now or clock(),
            )
            next_tag = handler.next_tag_time(this_tag)
            _retain_auto_tags(table, handler)
        next_snapshot += 1
    return created


def _retain_auto_tags(table: FileStoreTable, handler: TagPeriodHandler) -> None:
    """Delete the oldest auto tags beyond ``tag.num-retained-max`` (counted per snapshot)."""
    retain = table.options.tag_num_retained_max
    if retain is None:
        return
    manager = table.tag_manager
    by_snapshot: dict[int, list[str]] = {}
    for name in manager.tag_names():
        if handler.is_auto_tag(name) and (tag := manager.try_get(name)) is not None:
            by_snapshot.setdefault(tag.snapshot_id, []).append(name)
    surplus = len(by_snapshot) - retain
    if surplus <= 0:
        return
    doomed = []
    for snapshot_id in sorted(by_snapshot)[:surplus]:
        names = by_snapshot[snapshot_id]
        if len(names) != 1:
            raise InvalidArgument(
                "There are more than 1 auto-created tags of the same snapshot: "
                f"{','.join(names)}. This is unexpected."
            )
        doomed.append(names[0])
    logger.info("Deleting auto tags %s beyond tag.num-retained-max=%d", doomed, retain)
    _delete_tags(table, doomed)


def create_batch_tag(table: FileStoreTable, *, now: datetime | None = None) -> str | None:
    """Spark's ``TagBatchCreation.createTag``: tag the latest snapshot after a batch write.

    Returns:
        The tag name, or None when the table has no snapshot or creation failed (logged).
    """
    snapshot = table.snapshot_manager.latest_snapshot()
    if snapshot is None:
        return None
    options = table.options
    name = options.tag_batch_customized_name
    if name is None:
        day = _local(snapshot.time_millis, _zone(options.get_str("sink.process-time-zone")))
        name = f"{BATCH_WRITE_TAG_PREFIX}{day:%Y-%m-%d}"
    try:
        if table.tag_manager.tag_exists(name):
            _delete_tags(table, [name])
        create_tag(
            table, name, snapshot_id=snapshot.snapshot_id, allow_numeric=True, now=now or clock()
        )
    except Exception:
        logger.warning(
            "Failed to create tag '%s' from %d", name, snapshot.snapshot_id, exc_info=True
        )
        if table.tag_manager.tag_exists(name):
            _delete_tags(table, [name])
        name = None
    _retain_batch_tags(table)
    return name


def _retain_batch_tags(table: FileStoreTable) -> None:
    """Batch mode's ``tag.num-retained-max`` over all tags: oldest snapshots first; among
    tags of one snapshot, the oldest files first."""
    retain = table.options.tag_num_retained_max
    if retain is None:
        return
    tags = table.tag_manager.list_tags()
    surplus = len(tags) - retain
    if surplus <= 0:
        return
    manager, io = table.tag_manager, table.file_io

    def age(name: str) -> tuple[int, int, str]:
        try:
            mtime = io.get_status(manager.tag_path(name)).mtime_ms
        except FileNotFoundError:
            mtime = 0
        return tags[name].snapshot_id, mtime, name

    _delete_tags(table, sorted(tags, key=age)[:surplus])


def run_tag_maintenance(table: FileStoreTable, *, now: datetime | None = None) -> list[str]:
    """Paimon's ``TagAutoManager.run`` (also ``trigger_tag_automatic_creation``).

    Auto-creation by the table options, then TTL expiry of all tags when
    ``tag.time-expire-enabled``. Returns the names of the tags created.
    """
    now = now or clock()
    created = run_tag_auto_creation(table, now=now)
    if table.options.tag_time_expire_enabled and table.tag_manager.tag_names():
        expire_tags(table, now=now)
    return created


def auto_create_tags(table: FileStoreTable, snapshot: Snapshot) -> None:
    """Post-commit hook: Paimon's commit maintenance of tags, then the batch tag.

    ``run_tag_maintenance`` is off for ``write-only`` tables (as Paimon's committer); the
    batch tag is made regardless (as Spark's ``WriteHelper``). Errors are logged, not
    raised: the commit has succeeded.
    """
    options = table.options
    try:
        if not options.write_only:
            run_tag_maintenance(table)
        if options.tag_automatic_creation == "batch":
            create_batch_tag(table)
    except Exception:
        logger.exception("Tag maintenance after commit of snapshot %d failed", snapshot.snapshot_id)

"""A corrupt snapshot, tag, changelog or consumer file stops every lifecycle operation
before it deletes anything: expiry, rollback, tag deletion and expiry, orphan removal.

Read as zeros and nulls, such a file looked like an empty snapshot, and the operations then
deleted the files the real one uses (``snapshot-4`` replaced by ``{"version":3,"id":4}``:
orphan removal deleted its two manifest lists). Each operation runs on a table whose
snapshot or tag it must read is corrupt; it raises ``CorruptMetadata`` naming the file and
leaves every file of the table as it was.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from typing import Any

import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import CorruptMetadata
from paimon_core.format.snapshot import ChangelogManager
from paimon_core.lifecycle import rollback as rb
from paimon_core.lifecycle import tag_management as tm
from paimon_core.lifecycle.expire import expire_changelogs, expire_snapshots
from paimon_core.lifecycle.orphan import remove_orphan_files
from paimon_core.table import FileStoreTable
from tests.unit.paimon_core.helpers import (
    CORRUPT_SNAPSHOT_JSON,
    CORRUPT_TAG_JSON,
    UNRESOLVABLE_TAG_JSON,
    corrupt_file,
    file_state,
    kvd_batch,
    kvd_table,
)

TWO_DAYS_AGO = time.time() - 2 * 86_400


def _history(warehouse: str) -> FileStoreTable:
    """Snapshots 2..5 live, tags t1 (on expired snapshot 1), t3 and t5; every file two days
    old, so that orphan removal and tag expiry by age consider all of them."""
    table = kvd_table(warehouse)
    for k in range(1, 6):
        table.write_arrow(kvd_batch([k], dt="a" if k % 2 else "b"))
    for name in ("t1", "t3", "t5"):
        tm.create_tag(table, name, snapshot_id=int(name[1:]))
    expire_snapshots(table, retain_max=4, retain_min=1)
    assert table.snapshot_manager.earliest_snapshot_id() == 2
    for directory, _, names in os.walk(table.path):
        for name in names:
            os.utime(os.path.join(directory, name), (TWO_DAYS_AGO, TWO_DAYS_AGO))
    return table


def _fresh(table: FileStoreTable) -> FileStoreTable:
    """The table opened again: no snapshot or tag cached from before the corruption."""
    return FileSystemCatalog(table.path.rsplit("/", 2)[0]).get_table("db.t")


def _rollback_to_time(table: FileStoreTable) -> Any:
    return rb.rollback_to_timestamp(table, table.snapshot_manager.snapshot(2).time_millis)


# Operation -> (run it, the snapshot id it must read).
OPERATIONS: dict[str, tuple[Callable[[FileStoreTable], Any], int]] = {
    "expire_snapshots": (lambda t: expire_snapshots(t, retain_max=1, retain_min=1), 4),
    "rollback_to_snapshot": (lambda t: rb.rollback_to_snapshot(t, 2), 4),
    "rollback_to_tag": (lambda t: rb.rollback_to_tag(t, "t1"), 4),
    "rollback_to_timestamp": (_rollback_to_time, 4),
    "delete_tag": (lambda t: tm.delete_tags(t, "t1"), 2),
    "expire_tags": (lambda t: tm.expire_tags(t, older_than_millis=int(time.time() * 1000)), 2),
    "remove_orphan_files": (remove_orphan_files, 4),
}


def _assert_stops(table: FileStoreTable, run: Callable[[FileStoreTable], Any], path: str) -> None:
    before = file_state(table.path)
    with pytest.raises(CorruptMetadata, match=f" file {re.escape(path)} is corrupt: "):
        run(_fresh(table))
    assert file_state(table.path) == before


@pytest.mark.parametrize("how", ["only-version-and-id", "truncated", "id-mismatch"])
@pytest.mark.parametrize("operation", OPERATIONS)
def test_corrupt_snapshot_stops_the_operation(warehouse: str, operation: str, how: str) -> None:
    table = _history(warehouse)
    run, snapshot_id = OPERATIONS[operation]
    path = table.snapshot_manager.snapshot_path(snapshot_id)
    corrupt_file(path, how, CORRUPT_SNAPSHOT_JSON)
    _assert_stops(table, run, path)


@pytest.mark.parametrize(
    "how", ["only-version-and-id", "truncated", "retention-garbage", "unresolvable"]
)
@pytest.mark.parametrize("operation", OPERATIONS)
def test_corrupt_tag_stops_the_operation(warehouse: str, operation: str, how: str) -> None:
    table = _history(warehouse)
    run, _ = OPERATIONS[operation]
    path = table.tag_manager.tag_path("t3")
    corrupt_file(path, how, {**CORRUPT_TAG_JSON, **UNRESOLVABLE_TAG_JSON})
    _assert_stops(table, run, path)


@pytest.mark.parametrize("operation", ["remove_orphan_files", "expire_changelogs"])
def test_corrupt_changelog_stops_the_operation(warehouse: str, operation: str) -> None:
    table = _history(warehouse)
    changelogs = ChangelogManager(table.file_io, table.path)
    for snapshot_id in (2, 3):
        assert changelogs.commit(table.snapshot_manager.snapshot(snapshot_id))
    path = changelogs.snapshot_path(2)
    corrupt_file(path, "only-version-and-id", CORRUPT_SNAPSHOT_JSON)
    run = {
        "remove_orphan_files": remove_orphan_files,
        "expire_changelogs": lambda t: expire_changelogs(t, retain_max=1, retain_min=1),
    }[operation]
    _assert_stops(table, run, path)


@pytest.mark.parametrize("text", ["", "{", '{"nextSnapshot": "soon"}', "[]"])
def test_corrupt_consumer_stops_expiry(warehouse: str, text: str) -> None:
    """A consumer whose position cannot be read may need any snapshot: expiry stops."""
    table = _history(warehouse)
    directory = f"{table.path}/consumer"
    os.makedirs(directory)
    path = f"{directory}/consumer-job"
    with open(path, "w") as f:
        f.write(text)
    _assert_stops(table, lambda t: expire_snapshots(t, retain_max=1, retain_min=1), path)


@pytest.mark.parametrize("operation", ["rollback_to_snapshot", "remove_orphan_files"])
def test_corrupt_tag_of_a_branch_stops_the_operation(warehouse: str, operation: str) -> None:
    """Rollback and orphan removal keep what branches use, so they read branch tags too."""
    table = _history(warehouse)
    branch_tags = f"{table.path}/branch/branch-b/tag"
    os.makedirs(branch_tags)
    path = f"{branch_tags}/tag-x"
    with open(table.tag_manager.tag_path("t3"), "rb") as src, open(path, "wb") as dst:
        dst.write(src.read())
    corrupt_file(path, "null-base-list", CORRUPT_TAG_JSON)
    _assert_stops(table, OPERATIONS[operation][0], path)


def test_corrupt_snapshot_read_for_an_expired_tag_stops_its_deletion(warehouse: str) -> None:
    """Deleting the tag of a missing snapshot reads the deltas between the earliest snapshot
    and it (streaming readers may still read them)."""
    table = _history(warehouse)
    os.remove(table.snapshot_manager.snapshot_path(5))  # t5's snapshot is now gone
    path = table.snapshot_manager.snapshot_path(3)
    corrupt_file(path, "id-mismatch", CORRUPT_SNAPSHOT_JSON)
    _assert_stops(table, lambda t: tm.delete_tags(t, "t5"), path)


def test_corrupt_manifest_list_of_a_changelog_stops_tag_deletion(warehouse: str) -> None:
    """A long-lived changelog whose manifest list cannot be decoded may read any file: the
    deletion stops rather than take it for one that protects nothing."""
    table = _history(warehouse)
    changelogs = ChangelogManager(table.file_io, table.path)
    snapshot = table.tag_manager.get("t1").snapshot
    assert changelogs.commit(snapshot)
    path = f"{table.path}/manifest/{snapshot.delta_manifest_list}"
    with open(path, "r+b") as f:
        f.truncate(20)
    before = file_state(table.path)
    with pytest.raises(Exception, match=re.escape(snapshot.delta_manifest_list)) as info:
        tm.delete_tags(_fresh(table), "t1")
    assert not isinstance(info.value, (FileNotFoundError, AssertionError))
    assert file_state(table.path) == before


def test_a_tag_naming_missing_metadata_can_be_deleted_by_name(warehouse: str) -> None:
    """Deleting the unresolvable tag itself is how a user repairs the table: it goes, every
    other file stays, and expiry then runs again."""
    table = _history(warehouse)
    path = table.tag_manager.tag_path("t3")
    corrupt_file(path, "unresolvable", UNRESOLVABLE_TAG_JSON)
    before = file_state(table.path)
    tm.delete_tags(_fresh(table), "t3")
    assert not os.path.exists(path)
    assert set(file_state(table.path)) == set(before) - {"tag/tag-t3"}
    expire_snapshots(_fresh(table), retain_max=1, retain_min=1)
    assert _fresh(table).snapshot_manager.earliest_snapshot_id() == 5

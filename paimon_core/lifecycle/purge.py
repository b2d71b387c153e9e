"""Purging a table: Paimon 2.0's ``FileStoreTable.purgeFiles`` (``CALL sys.purge_files``).

All data goes, deliberately, with everything that kept old data alive, in Paimon's order:

1. every branch (its ``branch/branch-<name>`` directory),
2. every tag, with the files only it kept,
3. every consumer,
4. a truncation: one OVERWRITE snapshot deleting every file,
5. the ``changelog/`` directory (long-lived changelogs),
6. snapshot expiry down to that last snapshot (retain 1, no time, no limit),
7. orphan removal of anything older than now that nothing references.

The table stays: its schemas and the empty latest snapshot. ``plan_purge`` lists what the
first steps remove before anything is done; each step is one of the lifecycle operations
(each safe on its own), so a purge that dies half-way is finished by running it again.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_core.format.consumer import ConsumerManager
from paimon_core.format.paths import BRANCH_DIR, BRANCH_PREFIX, CHANGELOG_DIR
from paimon_core.lifecycle.expire import expire_snapshots
from paimon_core.lifecycle.orphan import remove_orphan_files
from paimon_core.lifecycle.tag_management import delete_tags
from paimon_core.operations.commit import FileStoreCommit

if TYPE_CHECKING:
    from paimon_core.table import FileStoreTable

__all__ = ["PurgePlan", "plan_purge", "purge_files"]


@dataclass(frozen=True, slots=True)
class PurgePlan:
    """The branches, tags and consumers a purge removes before truncating the table."""

    branches: tuple[str, ...]
    tags: tuple[str, ...]
    consumers: tuple[str, ...]


def _branch_root(table: FileStoreTable) -> str:
    return f"{table.path.rstrip('/')}/{BRANCH_DIR}"


def plan_purge(table: FileStoreTable) -> PurgePlan:
    io = table.file_io
    branches = sorted(
        s.path.rstrip("/").rsplit("/", 1)[-1][len(BRANCH_PREFIX) :]
        for s in io.list_status(_branch_root(table))
        if s.is_dir and s.path.rstrip("/").rsplit("/", 1)[-1].startswith(BRANCH_PREFIX)
    )
    consumers = ConsumerManager(io, table.path).list_ids()
    return PurgePlan(tuple(branches), tuple(table.tag_manager.tag_names()), tuple(consumers))


def purge_files(table: FileStoreTable) -> PurgePlan:
    """Remove every file of the table's data and history (see the module docstring).

    Returns:
        What was removed besides the data: branches, tags and consumers.
    """
    plan = plan_purge(table)
    io = table.file_io
    for branch in plan.branches:
        io.delete_dir(f"{_branch_root(table)}/{BRANCH_PREFIX}{branch}")
    if plan.tags:
        delete_tags(table, list(plan.tags))
    consumers = ConsumerManager(io, table.path)
    for consumer_id in plan.consumers:
        consumers.delete_consumer(consumer_id)
    FileStoreCommit(table).truncate_table()  # as Java's truncateTable: no maintenance
    io.delete_dir(f"{table.path.rstrip('/')}/{CHANGELOG_DIR}")
    expire_snapshots(
        table,
        retain_max=1,
        retain_min=1,
        # Paimon's zero retention; one millisecond on, so that the truncation committed
        # within this millisecond counts as old enough too.
        older_than_millis=int(time.time() * 1000) + 1,
        max_deletes=2**31 - 1,
        decoupled=False,
    )
    remove_orphan_files(table, older_than_millis=int(time.time() * 1000) - 1)
    return plan

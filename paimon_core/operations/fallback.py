"""``scan.fallback-branch``: a batch read takes the partitions the table's branch lacks from
another branch (Paimon's ``FallbackReadFileStoreTable``).

Typical use: a streaming job writes today's partitions into branch ``stream`` while a batch
job writes corrected days into ``main``; ``main`` with ``scan.fallback-branch = stream``
reads every day, each from ``main`` when ``main`` has it. A partition counts as present in
the main branch when its snapshot has a live file there (before any file pruning); the
fallback's splits of every other partition are read with the fallback branch's own schema
and options (bucket, merge engine, ...). Only batch reads of the rows fall back (Paimon:
streaming and system tables do not).

Time travel: the fallback branch reads its own latest snapshot when the main read is not
travelled, else its latest snapshot committed at or before the main snapshot's time
(Paimon maps ``scan.snapshot-id`` so; other travel options it passes on unchanged, which
for a tag of the main branch fails in the fallback; here every travel maps by time).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from paimon_core.exceptions import InvalidArgument, TableNotExist
from paimon_core.operations.time_travel import has_time_travel

if TYPE_CHECKING:
    from paimon_core.format.snapshot import Snapshot
    from paimon_core.operations.scan import Predicate, Split
    from paimon_core.table import FileStoreTable

__all__ = ["FALLBACK_BRANCH", "fallback_splits", "fallback_table"]

logger = logging.getLogger(__name__)

FALLBACK_BRANCH = "scan.fallback-branch"


def fallback_table(table: FileStoreTable) -> FileStoreTable | None:
    """The branch ``table`` falls back to (None: no ``scan.fallback-branch``, or a branch
    that does not exist, which Paimon logs and reads without).

    Raises:
        InvalidArgument: the fallback branch's columns differ in number or type (nullability
            aside) from the table's.
    """
    name = table.options.get_str(FALLBACK_BRANCH)
    if name is None or not name.strip() or name == table.branch:
        return None
    try:
        other = table.switch_to_branch(name)
    except TableNotExist:
        logger.error("Fallback branch %s not found for table %s", name, table.path)
        return None
    mine, theirs = table.schema.fields, other.schema.fields
    if len(mine) != len(theirs) or any(
        a.type.copy(True) != b.type.copy(True) for a, b in zip(mine, theirs)
    ):
        raise InvalidArgument(
            f"Branch {table.branch} and {name} does not have the same row type. This "
            f"validation is triggered because '{FALLBACK_BRANCH}' is configured to '{name}'. "
            "The fallback branch must have the same schema as the main branch. "
            f"Row type of branch {table.branch} is {_row_type(table)}. "
            f"Row type of branch {name} is {_row_type(other)}."
        )
    return other


def _row_type(table: FileStoreTable) -> str:
    return "ROW<" + ", ".join(f"`{f.name}` {f.type}" for f in table.schema.fields) + ">"


def fallback_snapshot(
    table: FileStoreTable, snapshot: Snapshot | None, other: FileStoreTable
) -> Snapshot | None:
    """The fallback branch's snapshot read together with ``snapshot`` of ``table``."""
    if snapshot is None or not has_time_travel(table):
        return other.snapshot_manager.latest_snapshot()
    return other.snapshot_manager.earlier_or_equal_time_millis(snapshot.time_millis)


def fallback_splits(
    table: FileStoreTable,
    snapshot: Snapshot | None,
    other: FileStoreTable,
    predicate: Sequence[Predicate] = (),
) -> tuple[Snapshot | None, list[Split]]:
    """The fallback branch's snapshot and its splits of the partitions ``snapshot`` of
    ``table`` has no live file in (``predicate`` prunes both sides alike)."""
    other_snapshot = fallback_snapshot(table, snapshot, other)
    if other_snapshot is None:
        return None, []
    present: set[bytes] = set()
    if snapshot is not None:
        entries = table.new_scan().read_entries(snapshot, predicate=predicate, lazy_files=True)
        present = {e.partition for e in entries}
    names = {f.name for f in other.schema.fields}
    usable = [p for p in predicate if p[0] in names]
    splits = other.new_scan().plan(other_snapshot, predicate=usable)
    return other_snapshot, [s for s in splits if s.partition not in present]

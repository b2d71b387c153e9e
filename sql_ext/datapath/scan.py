"""What a read of a table scans: ``plan_table`` (the table's rows at a snapshot, the changes its
incremental options ask for, ``$ro``, ``$audit_log``, ``$binlog``, fallback branches) and the
reader of ``format("paimon")`` built on it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from paimon_core.operations.fallback import fallback_read, plan_branches
from paimon_core.operations.incremental import (
    incremental_partitions,
    is_incremental,
    plan_incremental,
)
from sql_ext.datapath.changes import AUDIT_LOG, BINLOG, DATA, READ_OPTIMIZED
from sql_ext.datapath.read import (
    PLAN_OPTION,
    PaimonReader,
    ReadPlan,
    _load,
    _packed,
    decode_plan,
    plan_read,
    source_view,
)

if TYPE_CHECKING:
    from pyspark.sql.datasource import DataSourceReader
    from pyspark.sql.types import StructType

    from paimon_core.format.snapshot import Snapshot
    from paimon_core.operations.scan import Predicate, Split
    from paimon_core.operations.split_read import IncrementalSplit
    from paimon_core.table import FileStoreTable

__all__ = ["max_level", "plan_table", "source_reader"]


def plan_table(
    table: FileStoreTable,
    snapshot: Snapshot | None,
    columns: Sequence[str] | None = None,
    predicate: Sequence[Predicate] = (),
    *,
    system: str | None = None,
    meta: Sequence[str] = (),
) -> ReadPlan:
    """The read of ``table`` at ``snapshot``, or of the changes its incremental options ask
    for, or of ``system`` (``audit_log``, ``binlog``, ``ro``): see ``table_dataframe``. With
    ``scan.fallback-branch`` or ``scan.primary-branch`` each partition is read from one of
    two branches, each side its own way (``paimon_core.operations.fallback``); the other
    branch's rows come by position (``ReadPlan.fallback``).

    Raises:
        InconsistentBuckets: an incremental diff across a bucket rescale.
    """
    view = system if system in (AUDIT_LOG, BINLOG) else DATA

    def scan(t: FileStoreTable, at: Snapshot | None) -> list[Split | IncrementalSplit]:
        return _scan_splits(t, at, predicate, system)

    read = fallback_read(table)
    if read is None:
        splits = scan(table, snapshot)
        return plan_read(table, snapshot, columns, predicate, splits=splits, view=view, meta=meta)

    def listing(t: FileStoreTable, at: Snapshot | None) -> set[bytes]:
        return _listed_partitions(t, at, predicate, system)

    branches = plan_branches(read, snapshot, scan, listing)
    own, other = branches.wrapped, branches.other
    plan = plan_read(table, snapshot, columns, predicate, splits=own.splits, view=view, meta=meta)
    if not other.splits:
        return plan
    position = {f.name: i for i, f in enumerate(table.schema.fields)}
    names = [other.table.schema.fields[position[c]].name for c in plan.columns]
    theirs = plan_read(
        other.table, other.snapshot, names, splits=other.splits, view=view, meta=meta
    )
    return replace(plan, fallback=replace(theirs, columns=tuple(names)))


def _scan_splits(
    table: FileStoreTable,
    snapshot: Snapshot | None,
    predicate: Sequence[Predicate],
    system: str | None,
) -> list[Split | IncrementalSplit]:
    """The splits a read of ``table`` takes (Paimon's scan of ``$ro``, of an incremental
    read, or of ``snapshot``)."""
    if is_incremental(table):
        incremental = plan_incremental(table)
        if incremental.full is None:
            return list(incremental.splits)
        snapshot = incremental.full
    if snapshot is None:
        return []
    planned = table.new_scan().plan(snapshot=snapshot, predicate=list(predicate))
    if system == READ_OPTIMIZED and table.is_primary_key_table:
        top = max_level(table)
        return [
            replace(s, files=kept)
            for s in planned
            if (kept := tuple(f for f in s.files if f.level == top))
        ]
    return list(planned)


def _listed_partitions(
    table: FileStoreTable,
    snapshot: Snapshot | None,
    predicate: Sequence[Predicate],
    system: str | None,
) -> set[bytes]:
    """The partitions a read of ``table`` lists: by its partition predicates only, of the
    top level for ``$ro`` of a primary-key table (Paimon's ``listPartitions``)."""
    if is_incremental(table):
        return incremental_partitions(table, plan_incremental(table))
    if snapshot is None:
        return set()
    scan = table.new_scan()
    if system == READ_OPTIMIZED and table.is_primary_key_table:
        top = max_level(table)
        entries = scan.read_entries(snapshot, predicate=predicate)
        return {e.partition for e in entries if e.file.level == top}
    return scan.plan_partitions(snapshot, predicate)


def max_level(table: FileStoreTable) -> int:
    """The top level of a primary-key table's LSM tree: ``num-levels`` - 1, where
    ``num-levels`` defaults to ``num-sorted-run.compaction-trigger`` (5) + 1."""
    options = table.options
    trigger = options.get_int("num-sorted-run.compaction-trigger", 5)
    levels = options.get_int("num-levels", (trigger or 5) + 1)
    return (levels or 1) - 1


def source_reader(options: Mapping[str, str], schema: StructType) -> DataSourceReader:
    """The reader of ``format("paimon")``: the session's plan, else a plan of the table
    named by ``path`` at the snapshot the ``scan.*`` options pick (the latest by default),
    its audit log with ``read.changelog`` or ``t$audit_log`` (``source_view``)."""
    encoded = options.get(PLAN_OPTION)
    if encoded is not None:
        return PaimonReader(decode_plan(encoded))
    named, view = source_view(options)
    table, snapshot = _load(named)
    system = None if view == DATA else view
    return PaimonReader(_packed(plan_table(table, snapshot, system=system), None))

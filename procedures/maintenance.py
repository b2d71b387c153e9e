"""Maintenance procedures: ``expire_snapshots``, ``remove_orphan_files`` and
``repair_earliest_snapshot`` (Paimon Spark).

``expire_snapshots`` fills omitted arguments from the table options (after ``options``), as
Paimon since 1.1 (``ProcedureUtils.fillInSnapshotOptions``). Beyond Paimon it takes a last
optional ``dry_run BOOLEAN``: nothing is deleted, ``deleted_snapshots_count`` is the number
that would expire and a second column ``file_to_delete STRING`` lists every file that would
go, one per row (a single row with NULL when none would).
"""

from __future__ import annotations

from typing import Any

from paimon_core.lifecycle.expire import expire_snapshots
from paimon_core.lifecycle.orphan import remove_orphan_files
from procedures.base import CallContext, Column, Parameter, Procedure, ProcedureResult
from procedures.rollback import DRY_RUN, dry_run_result

EXPIRE_OUTPUT = (Column("deleted_snapshots_count", "INT", nullable=False),)
ORPHAN_OUTPUT = (
    Column("deletedFileCount", "BIGINT"),
    Column("deletedFileTotalLenInBytes", "BIGINT"),
)
ORPHAN_MODES = ("DISTRIBUTED", "LOCAL")


def parse_options(ctx: CallContext, text: str | None) -> dict[str, str]:
    """``'k1=v1,k2=v2'``: split on ``,`` then on the first ``=``, trimmed (``ParameterUtils``)."""
    options: dict[str, str] = {}
    if text is None or not text.strip():
        return options
    for item in text.split(","):
        key, sep, value = item.partition("=")
        if not sep:
            raise ctx.fail(f"Invalid key-value string '{item}'. Please use format 'key=value'")
        options[key.strip()] = value.strip()
    return options


def _expire_snapshots(ctx: CallContext, args: dict[str, Any]) -> ProcedureResult:
    options = parse_options(ctx, args["options"])
    older_than = args["older_than"]
    millis = None
    if older_than is not None and older_than.strip():
        millis = ctx.timestamp_millis(older_than, "older_than")
    dry_run = bool(args["dry_run"])
    table = ctx.table(args["table"])
    if options:
        table = table.copy(options)
    result = expire_snapshots(
        table,
        retain_max=args["retain_max"],
        retain_min=args["retain_min"],
        older_than_millis=millis,
        max_deletes=args["max_deletes"],
        dry_run=dry_run,
    )
    if not dry_run:
        return ProcedureResult(EXPIRE_OUTPUT, [(result.expired,)])
    return dry_run_result(EXPIRE_OUTPUT, (result.expired,), result.plan.files())


def _remove_orphan_files(ctx: CallContext, args: dict[str, Any]) -> ProcedureResult:
    identifier = args["table"]
    if identifier is None or not identifier:
        raise ctx.fail("Cannot handle an empty tableId for argument table")
    mode = "DISTRIBUTED" if args["mode"] is None else args["mode"]
    if mode.upper() not in ORPHAN_MODES:
        raise ctx.fail(f"Unknown mode: {mode}. Only 'DISTRIBUTED' and 'LOCAL' are supported.")
    older_than = args["older_than"]
    millis = None
    if older_than is not None and older_than.strip():
        millis = ctx.timestamp_millis(older_than, "older_than")
    dry_run = bool(args["dry_run"])
    if identifier.endswith(".*"):  # every table of a database
        database = ctx.database(identifier[:-2])
        tables = [
            ctx.catalog.get_table(f"{database}.{t}") for t in ctx.catalog.list_tables(database)
        ]
    else:
        tables = [ctx.table(identifier)]
    count = size = 0
    for table in tables:
        result = remove_orphan_files(table, older_than_millis=millis, dry_run=dry_run)
        count += result.count
        size += result.bytes
    return ProcedureResult(ORPHAN_OUTPUT, [(count, size)])


REPAIR_OUTPUT = (
    Column("previous_earliest_snapshot_id", "BIGINT", nullable=False),
    Column("current_earliest_snapshot_id", "BIGINT", nullable=False),
)


def _repair_earliest_snapshot(ctx: CallContext, args: dict[str, Any]) -> ProcedureResult:
    """Paimon 2.0's ``RepairEarliestSnapshotProcedure``: ``EARLIEST`` moved past a gap in
    the snapshot ids (``SnapshotManager.repair_earliest_snapshot``); nothing is deleted."""
    snapshot_id = args["snapshot_id"]
    if snapshot_id is None:
        raise ctx.fail("Argument snapshot_id must not be NULL.")
    table = ctx.table(args["table"])
    previous = table.snapshot_manager.repair_earliest_snapshot(snapshot_id)
    return ProcedureResult(REPAIR_OUTPUT, [(previous, snapshot_id)])


MAINTENANCE_PROCEDURES = (
    Procedure(
        "expire_snapshots",
        (
            Parameter("table", "STRING", required=True),
            Parameter("retain_max", "INT"),
            Parameter("retain_min", "INT"),
            Parameter("older_than", "STRING"),
            Parameter("max_deletes", "INT"),
            Parameter("options", "STRING"),
            DRY_RUN,
        ),
        EXPIRE_OUTPUT,
        _expire_snapshots,
        "Expire old snapshots and the files only they use.",
    ),
    Procedure(
        "remove_orphan_files",
        (
            Parameter("table", "STRING", required=True),
            Parameter("older_than", "STRING"),
            Parameter("dry_run", "BOOLEAN", default=False),
            Parameter("parallelism", "INT"),
            Parameter("mode", "STRING"),
        ),
        ORPHAN_OUTPUT,
        _remove_orphan_files,
        "Delete files nothing references that are older than older_than (default 1 day ago).",
    ),
    Procedure(
        "repair_earliest_snapshot",
        (
            Parameter("table", "STRING", required=True),
            Parameter("snapshot_id", "BIGINT", required=True),
        ),
        REPAIR_OUTPUT,
        _repair_earliest_snapshot,
        "Point EARLIEST at the first snapshot after a gap in the snapshot ids.",
    ),
)

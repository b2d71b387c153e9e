"""Rollback procedures: ``rollback`` and ``rollback_to_timestamp`` (Paimon Spark).

Both return ``previous_snapshot_id, current_snapshot_id``. Beyond Paimon, each takes a last
optional ``dry_run BOOLEAN``: nothing is changed and the result gets a third column,
``file_to_delete STRING``, one row per file the rollback would delete (snapshot and tag
files, then the data files and manifests only they used; see ``paimon_core.lifecycle.rollback``), or a
single row with NULL there when it would delete nothing. Paimon's two columns repeat on
every row.
"""

from __future__ import annotations

from typing import Any

from paimon_core.lifecycle import rollback as core_rollback
from procedures.base import CallContext, Column, Parameter, Procedure, ProcedureResult

ROLLBACK_OUTPUT = (
    Column("previous_snapshot_id", "BIGINT", nullable=False),
    Column("current_snapshot_id", "BIGINT", nullable=False),
)
DRY_RUN_COLUMN = Column("file_to_delete", "STRING")
DRY_RUN = Parameter("dry_run", "BOOLEAN", default=False)
_ONLY_ONE = "only can set one of version/snapshot/tag in RollbackProcedure."


def dry_run_result(
    output: tuple[Column, ...], row: tuple[Any, ...], files: list[str]
) -> ProcedureResult:
    """Paimon's row repeated once per file that would go, with the file as the last column."""
    rows = [(*row, path) for path in files] or [(*row, None)]
    return ProcedureResult((*output, DRY_RUN_COLUMN), rows)


def _result(outcome: core_rollback.RollbackResult, dry_run: bool) -> ProcedureResult:
    row = (outcome.previous_snapshot_id, outcome.snapshot_id)
    if not dry_run:
        return ProcedureResult(ROLLBACK_OUTPUT, [row])
    return dry_run_result(ROLLBACK_OUTPUT, row, outcome.plan.deletion.files())


def _rollback(ctx: CallContext, args: dict[str, Any]) -> ProcedureResult:
    version, snapshot, tag = args["version"], args["snapshot"], args["tag"]
    if version is not None and version.strip():
        if snapshot is not None or tag is not None:
            raise ctx.fail(_ONLY_ONE)
        # Paimon: all digits is a snapshot id, anything else a tag name (VERSION AS OF is the
        # other way round); a numeric tag needs tag => '...'.
        if version.isascii() and version.isdigit():
            snapshot = int(version)
        else:
            tag = version
    elif (snapshot is None) == (tag is None):
        raise ctx.fail(_ONLY_ONE)
    dry_run = bool(args["dry_run"])
    table = ctx.table(args["table"])
    if table.snapshot_manager.latest_snapshot_id() is None:
        raise ctx.fail("Latest snapshot is null, can not rollback.")
    if snapshot is not None:
        outcome = core_rollback.rollback_to_snapshot(table, snapshot, dry_run=dry_run)
    else:
        outcome = core_rollback.rollback_to_tag(table, tag, dry_run=dry_run)
    return _result(outcome, dry_run)


def _rollback_to_timestamp(ctx: CallContext, args: dict[str, Any]) -> ProcedureResult:
    timestamp = args["timestamp"]
    if timestamp is None:
        raise ctx.fail("Argument timestamp (epoch milliseconds) must not be NULL.")
    dry_run = bool(args["dry_run"])
    table = ctx.table(args["table"])
    outcome = core_rollback.rollback_to_timestamp(table, timestamp, dry_run=dry_run)
    return _result(outcome, dry_run)


ROLLBACK_PROCEDURES = (
    Procedure(
        "rollback",
        (
            Parameter("table", "STRING", required=True),
            Parameter("version", "STRING"),
            Parameter("snapshot", "BIGINT"),
            Parameter("tag", "STRING"),
            DRY_RUN,
        ),
        ROLLBACK_OUTPUT,
        _rollback,
        "Roll back to a snapshot or tag: newer snapshots and tags are deleted.",
    ),
    Procedure(
        "rollback_to_timestamp",
        (
            Parameter("table", "STRING", required=True),
            Parameter("timestamp", "BIGINT", required=True),
            DRY_RUN,
        ),
        ROLLBACK_OUTPUT,
        _rollback_to_timestamp,
        "Roll back to the latest snapshot committed at or before an epoch-millis time.",
    ),
)

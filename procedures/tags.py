"""Tag procedures: ``create_tag``, ``create_tag_from_timestamp``, ``delete_tag``,
``rename_tag``, ``replace_tag``, ``expire_tags``, ``trigger_tag_automatic_creation`` (Paimon
Spark's parameters and results).

As in Paimon's Spark procedures, ``time_retained`` is only what the call gives: the table's
``tag.default-time-retained`` is not applied (``CreateOrReplaceTagBaseProcedure``).

Beyond Paimon, ``delete_tag`` and ``expire_tags`` take a last optional ``dry_run BOOLEAN``
(as ``rollback``): nothing is changed and the result gets a last column ``file_to_delete``,
one row per file that would go (the tag files, then the data files, manifests and lists only
those tags kept alive; ``file_deletion.plan_tag_deletion``), or one row with NULL there. The
Paimon columns repeat on every row: ``result`` is true; ``expired_tags`` holds the names of
all the tags that would expire, comma-separated (``No expired tags.`` when none would).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from paimon_core.format.options import parse_duration
from paimon_core.lifecycle import tag_management
from paimon_core.lifecycle.tag_auto import run_tag_maintenance
from procedures.base import CallContext, Column, Parameter, Procedure, ProcedureResult
from procedures.rollback import DRY_RUN, dry_run_result

RESULT = (Column("result", "BOOLEAN"),)
_TAG_PARAMETERS = (
    Parameter("table", "STRING", required=True),
    Parameter("tag", "STRING", required=True),
    Parameter("snapshot", "BIGINT"),
    Parameter("time_retained", "STRING"),
)


def _duration(text: str | None) -> timedelta | None:
    return None if text is None else parse_duration(text)


def _tag_name(ctx: CallContext, name: str | None, argument: str = "tag") -> str:
    if name is None:
        raise ctx.fail(f"Argument {argument} must not be NULL.")
    return name


def _create_tag(ctx: CallContext, args: dict[str, Any]) -> ProcedureResult:
    tag = _tag_name(ctx, args["tag"])
    retained = _duration(args["time_retained"])
    table = ctx.table(args["table"])
    tag_management.create_tag(
        table,
        tag,
        snapshot_id=args["snapshot"],
        time_retained=retained,
        default_retention=False,
    )
    return ProcedureResult(RESULT, [(True,)])


def _replace_tag(ctx: CallContext, args: dict[str, Any]) -> ProcedureResult:
    tag = _tag_name(ctx, args["tag"])
    retained = _duration(args["time_retained"])
    table = ctx.table(args["table"])
    tag_management.replace_tag(table, tag, snapshot_id=args["snapshot"], time_retained=retained)
    return ProcedureResult(RESULT, [(True,)])


FROM_TIMESTAMP_OUTPUT = (
    Column("tagName", "STRING"),
    Column("snapshot", "BIGINT"),
    Column("commit_time", "BIGINT"),
    Column("watermark", "STRING"),
)


def _create_tag_from_timestamp(ctx: CallContext, args: dict[str, Any]) -> ProcedureResult:
    tag = _tag_name(ctx, args["tag"])
    timestamp = args["timestamp"]
    if timestamp is None:
        # Paimon declares it optional but reads it unconditionally; a missing value is an error.
        raise ctx.fail("Argument timestamp (epoch milliseconds) must be given.")
    retained = _duration(args["time_retained"])
    table = ctx.table(args["table"])
    snapshot = tag_management.create_tag_from_timestamp(
        table, tag, timestamp, time_retained=retained, default_retention=False
    ).snapshot
    watermark = "null" if snapshot.watermark is None else str(snapshot.watermark)  # String.valueOf
    row = (tag, snapshot.snapshot_id, snapshot.time_millis, watermark)
    return ProcedureResult(FROM_TIMESTAMP_OUTPUT, [row])


def _delete_tag(ctx: CallContext, args: dict[str, Any]) -> ProcedureResult:
    names = _tag_name(ctx, args["tag"])
    dry_run = bool(args["dry_run"])
    table = ctx.table(args["table"])
    plan = tag_management.delete_tags(table, names, dry_run=dry_run)
    if dry_run:
        return dry_run_result(RESULT, (True,), plan.files())
    return ProcedureResult(RESULT, [(True,)])


def _rename_tag(ctx: CallContext, args: dict[str, Any]) -> ProcedureResult:
    old = _tag_name(ctx, args["tag"])
    new = _tag_name(ctx, args["target_tag"], "target_tag")
    table = ctx.table(args["table"])
    tag_management.rename_tag(table, old, new)
    return ProcedureResult(RESULT, [(True,)])


EXPIRE_TAGS_OUTPUT = (Column("expired_tags", "STRING", nullable=False),)
NO_EXPIRED_TAGS = "No expired tags."


def _expire_tags(ctx: CallContext, args: dict[str, Any]) -> ProcedureResult:
    older_than = args["older_than"]
    millis = None if older_than is None else ctx.timestamp_millis(older_than, "older_than")
    dry_run = bool(args["dry_run"])
    table = ctx.table(args["table"])
    expired = tag_management.expire_tags(table, older_than_millis=millis, dry_run=dry_run)
    if dry_run:
        row = (",".join(expired.names) or NO_EXPIRED_TAGS,)
        return dry_run_result(EXPIRE_TAGS_OUTPUT, row, expired.plan.files())
    rows = [(name,) for name in expired.names] or [(NO_EXPIRED_TAGS,)]
    return ProcedureResult(EXPIRE_TAGS_OUTPUT, rows)


def _trigger_tag_automatic_creation(ctx: CallContext, args: dict[str, Any]) -> ProcedureResult:
    """Paimon's ``TagAutoManager.run``: the automatic tags the options ask for, then tag TTL
    expiry (``tag.time-expire-enabled``), as a commit would; also for ``write-only`` tables,
    whose commits skip it."""
    table = ctx.table(args["table"])
    run_tag_maintenance(table)
    return ProcedureResult(RESULT, [(True,)])


TAG_PROCEDURES = (
    Procedure("create_tag", _TAG_PARAMETERS, RESULT, _create_tag, "Tag a snapshot."),
    Procedure("replace_tag", _TAG_PARAMETERS, RESULT, _replace_tag, "Point a tag elsewhere."),
    Procedure(
        "create_tag_from_timestamp",
        (
            Parameter("table", "STRING", required=True),
            Parameter("tag", "STRING", required=True),
            Parameter("timestamp", "BIGINT"),
            Parameter("time_retained", "STRING"),
        ),
        FROM_TIMESTAMP_OUTPUT,
        _create_tag_from_timestamp,
        "Tag the first snapshot committed at or after an epoch-millis time.",
    ),
    Procedure(
        "delete_tag",
        (
            Parameter("table", "STRING", required=True),
            Parameter("tag", "STRING", required=True),
            DRY_RUN,
        ),
        RESULT,
        _delete_tag,
        "Delete tags (comma-separated names); missing ones are ignored.",
    ),
    Procedure(
        "rename_tag",
        (
            Parameter("table", "STRING", required=True),
            Parameter("tag", "STRING", required=True),
            Parameter("target_tag", "STRING", required=True),
        ),
        RESULT,
        _rename_tag,
        "Rename a tag.",
    ),
    Procedure(
        "expire_tags",
        (Parameter("table", "STRING", required=True), Parameter("older_than", "STRING"), DRY_RUN),
        EXPIRE_TAGS_OUTPUT,
        _expire_tags,
        "Delete tags whose retention has passed, or created before older_than.",
    ),
    Procedure(
        "trigger_tag_automatic_creation",
        (Parameter("table", "STRING", required=True),),
        RESULT,
        _trigger_tag_automatic_creation,
        "Create the automatic tags tag.automatic-creation asks for now.",
    ),
)

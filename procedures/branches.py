"""Branch procedures: ``create_branch``, ``delete_branch``, ``rename_branch``,
``fast_forward`` and ``merge_branch`` (Paimon-Spark 2.0's parameters; each returns one
``result`` row, true).

The ``table`` argument may name a branch (``'db.t$branch_b'``): branches are then created
from that branch's tags and schemas, and fast-forwarded into it, as Paimon's
``table.branchManager()`` of a branch table does; ``merge_branch``'s names are the
table's branches whatever ``table`` names (``main`` is the table itself). As in
Paimon-Spark, ``ignoreIfExists`` is a STRING read by ``Boolean.parseBoolean`` (``'true'``
in any case is true, anything else false).
"""

from __future__ import annotations

from typing import Any

from paimon_core.format.paths import DEFAULT_BRANCH
from paimon_core.lifecycle import branch_management
from procedures.base import CallContext, Parameter, Procedure, ProcedureResult
from procedures.tags import RESULT

_TRUE = [(True,)]


def _name(ctx: CallContext, value: str | None, argument: str) -> str:
    if value is None:
        raise ctx.fail(f"Argument {argument} must not be NULL.")
    return value


def _create_branch(ctx: CallContext, args: dict[str, Any]) -> ProcedureResult:
    branch = _name(ctx, args["branch"], "branch")
    ignore = args["ignoreIfExists"]
    table = ctx.table(args["table"])
    branch_management.create_branch(
        table,
        branch,
        args["tag"],
        ignore_if_exists=ignore is not None and ignore.lower() == "true",
    )
    return ProcedureResult(RESULT, _TRUE)


def _delete_branch(ctx: CallContext, args: dict[str, Any]) -> ProcedureResult:
    branches = _name(ctx, args["branch"], "branch")
    table = ctx.table(args["table"])
    branch_management.delete_branches(table, branches)
    return ProcedureResult(RESULT, _TRUE)


def _rename_branch(ctx: CallContext, args: dict[str, Any]) -> ProcedureResult:
    source = _name(ctx, args["from_branch"], "from_branch")
    target = _name(ctx, args["to_branch"], "to_branch")
    table = ctx.table(args["table"])
    branch_management.rename_branch(table, source, target)
    return ProcedureResult(RESULT, _TRUE)


def _fast_forward(ctx: CallContext, args: dict[str, Any]) -> ProcedureResult:
    branch = _name(ctx, args["branch"], "branch")
    table = ctx.table(args["table"])
    branch_management.fast_forward(table, branch)
    return ProcedureResult(RESULT, _TRUE)


def _merge_branch(ctx: CallContext, args: dict[str, Any]) -> ProcedureResult:
    source = _name(ctx, args["source_branch"], "source_branch")
    target = args["target_branch"]
    table = ctx.table(args["table"])
    branch_management.merge_branch(table, source, DEFAULT_BRANCH if target is None else target)
    return ProcedureResult(RESULT, _TRUE)


_TABLE = Parameter("table", "STRING", required=True)
_BRANCH = Parameter("branch", "STRING", required=True)

BRANCH_PROCEDURES = (
    Procedure(
        "create_branch",
        (
            _TABLE,
            _BRANCH,
            Parameter("tag", "STRING"),
            Parameter("ignoreIfExists", "STRING"),
        ),
        RESULT,
        _create_branch,
        "Create a branch from a tag, or an empty one with the latest schema.",
    ),
    Procedure(
        "delete_branch",
        (_TABLE, _BRANCH),
        RESULT,
        _delete_branch,
        "Delete branches (comma-separated names); their data files stay for orphan removal.",
    ),
    Procedure(
        "rename_branch",
        (
            _TABLE,
            Parameter("from_branch", "STRING", required=True),
            Parameter("to_branch", "STRING", required=True),
        ),
        RESULT,
        _rename_branch,
        "Rename a branch.",
    ),
    Procedure(
        "fast_forward",
        (_TABLE, _BRANCH),
        RESULT,
        _fast_forward,
        "Replace the table's history from the branch's first snapshot on by the branch's.",
    ),
    Procedure(
        "merge_branch",
        (
            _TABLE,
            Parameter("source_branch", "STRING", required=True),
            Parameter("target_branch", "STRING"),
        ),
        RESULT,
        _merge_branch,
        "Append-only tables: commit the source branch's files the target lacks (main by default).",
    ),
)

"""Paimon Spark's tag DDL (``sql_ext.syntax.tags``), run through the same core functions as the
``CALL sys.*_tag`` procedures, whether Spark runs or not. ``REPLACE TAG`` on a missing tag
creates it, as in Paimon.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from paimon_core.lifecycle import tag_management
from procedures.base import CallContext, Column, ProcedureResult
from sql_ext.metadata.result import Rows
from sql_ext.syntax.tags import TagStatement

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from sql_ext.statements.context import Session, StatementContext

SHOW_TAGS_OUTPUT = (Column("tag", "STRING", nullable=False),)


def run_tag_statement(
    statement: TagStatement,
    *,
    context: CallContext,
    now: dt.datetime | None = None,
) -> ProcedureResult:
    """Apply ``statement``; ALTER forms return no rows, SHOW TAGS the sorted names."""
    table = context.table(statement.table)
    if statement.action == "show":
        return ProcedureResult(
            SHOW_TAGS_OUTPUT, [(n,) for n in sorted(table.tag_manager.tag_names())]
        )
    assert statement.tag is not None
    if statement.action == "delete":
        tag_management.delete_tags(table, statement.tag)
    elif statement.action == "rename":
        assert statement.target is not None
        tag_management.rename_tag(table, statement.tag, statement.target)
    elif statement.action == "replace" and table.tag_manager.tag_exists(statement.tag):
        tag_management.replace_tag(
            table, statement.tag, statement.snapshot, statement.time_retained, now=now
        )
    else:
        tag_management.create_tag(
            table,
            statement.tag,
            snapshot_id=statement.snapshot,
            time_retained=statement.time_retained,
            ignore_if_exists=statement.if_not_exists,
            default_retention=False,
            now=now,
        )
    return ProcedureResult((), [])


def _run(ctx: StatementContext, statement: TagStatement) -> ProcedureResult:
    """The tag statement run as the procedure it stands for."""
    procedure = "show_tags" if statement.action == "show" else f"{statement.action}_tag"
    return run_tag_statement(statement, context=ctx.call_context(procedure))


def local(ctx: StatementContext, statement: TagStatement) -> Rows | None:
    return Rows.of(_run(ctx, statement))


def run(session: Session, statement: TagStatement) -> DataFrame:
    return session.frame(_run(session.ctx, statement))

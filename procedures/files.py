"""File procedures of Paimon Spark 2.0: ``purge_files``.

``purge_files(table)`` deletes all data of the table with its branches, tags, consumers,
changelogs and old snapshots (``paimon_core.lifecycle.purge``) and returns the single row
``result = 'Success'``.
"""

from __future__ import annotations

from typing import Any

from paimon_core.lifecycle.purge import purge_files
from procedures.base import CallContext, Column, Parameter, Procedure, ProcedureResult

PURGE_OUTPUT = (Column("result", "STRING"),)


def _purge_files(ctx: CallContext, args: dict[str, Any]) -> ProcedureResult:
    purge_files(ctx.table(args["table"]))
    return ProcedureResult(PURGE_OUTPUT, [("Success",)])


FILE_PROCEDURES = (
    Procedure(
        "purge_files",
        (Parameter("table", "STRING", required=True),),
        PURGE_OUTPUT,
        _purge_files,
        "Delete all data of the table, its branches, tags, consumers and old snapshots.",
    ),
)

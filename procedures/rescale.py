"""``CALL sys.rescale`` of Paimon Spark 2.0: ``table``, ``bucket_num``, ``partitions``
(``'dt=20250217,hh=08;dt=...'``) or ``where`` (partition conditions; not both).

The selected partitions are rewritten with ``bucket_num`` buckets (default the table's) by
``paimon_core.operations.rescale``, each partition a task run where the ``CallContext``
says (Spark executors under ``PaimonSession``), committed by the driver as one OVERWRITE;
the result is ``result = true``.
"""

from __future__ import annotations

from typing import Any

from paimon_core.operations.rescale import rescale
from procedures.base import CallContext, Column, Parameter, Procedure, ProcedureResult
from procedures.compact import parse_partitions, parse_where

RESCALE_OUTPUT = (Column("result", "BOOLEAN"),)


def _blank(value: str | None) -> bool:
    return value is None or not value.strip()


def _rescale(ctx: CallContext, args: dict[str, Any]) -> ProcedureResult:
    partitions = None if _blank(args["partitions"]) else args["partitions"]
    where = None if _blank(args["where"]) else args["where"]
    if partitions is not None and where is not None:
        raise ctx.fail("partitions and where cannot be used together.")
    specs = None if partitions is None else parse_partitions(ctx, partitions)
    predicate = None if where is None else parse_where(ctx, where)
    table = ctx.table(args["table"])
    kwargs: dict[str, Any] = {}
    if ctx.run_tasks is not None:
        kwargs["runner"] = ctx.run_tasks
    rescale(table, bucket_num=args["bucket_num"], partitions=specs, predicate=predicate, **kwargs)
    return ProcedureResult(RESCALE_OUTPUT, [(True,)])


RESCALE_PROCEDURES = (
    Procedure(
        "rescale",
        (
            Parameter("table", "STRING", required=True),
            Parameter("bucket_num", "INT"),
            Parameter("partitions", "STRING"),
            Parameter("where", "STRING"),
        ),
        RESCALE_OUTPUT,
        _rescale,
        "This procedure rescales partitions of a table by changing the bucket number.",
    ),
)

"""Partition procedures of Paimon Spark 2.0: ``expire_partitions`` and ``mark_partition_done``.

``mark_partition_done(table, partitions)``: ``partitions`` as ``'dt=20240101,hh=01;dt=...'``
(``;`` between partitions); ``paimon_core.lifecycle.partition_mark_done`` runs the table's
``partition.mark-done-action``s (``_SUCCESS`` files); the result is ``result = true``.

``expire_partitions`` puts its arguments over the table options as Paimon's
``ProcedureUtils.fillInPartitionOptions`` (``options`` first, then each non-blank argument:
``partition.expiration-time``, ``-strategy``, ``partition.timestamp-formatter``,
``-pattern``, ``partition.expiration-max-num``) and drops what
``paimon_core.lifecycle.partition_expire`` finds expired, one row per partition
(``dt=20240101, hh=08``), or the single row ``No expired partitions.``.
"""

from __future__ import annotations

from typing import Any

from paimon_core.lifecycle.partition_expire import expire_partitions
from paimon_core.lifecycle.partition_mark_done import mark_partitions_done
from procedures.base import CallContext, Column, Parameter, Procedure, ProcedureResult
from procedures.maintenance import parse_options

EXPIRE_OUTPUT = (Column("expired_partitions", "STRING"),)
NO_EXPIRED_PARTITIONS = "No expired partitions."


def _put(options: dict[str, str], key: str, value: Any) -> None:
    if value is not None and str(value).strip():
        options[key] = str(value)


def _expire_partitions(ctx: CallContext, args: dict[str, Any]) -> ProcedureResult:
    options = parse_options(ctx, args["options"])
    _put(options, "partition.expiration-strategy", args["expire_strategy"])
    _put(options, "partition.timestamp-formatter", args["timestamp_formatter"])
    _put(options, "partition.timestamp-pattern", args["timestamp_pattern"])
    _put(options, "partition.expiration-time", args["expiration_time"])
    _put(options, "partition.expiration-check-interval", "0")
    _put(options, "partition.expiration-max-num", args["max_expires"])
    table = ctx.table(args["table"]).copy(options, time_travel=False)
    expired = expire_partitions(table)
    rows = [(", ".join(f"{k}={v}" for k, v in spec.items()),) for spec in expired]
    return ProcedureResult(EXPIRE_OUTPUT, rows or [(NO_EXPIRED_PARTITIONS,)])


MARK_DONE_OUTPUT = (Column("result", "BOOLEAN"),)


def _mark_partition_done(ctx: CallContext, args: dict[str, Any]) -> ProcedureResult:
    text = args["partitions"]
    if text is None:
        raise ctx.fail("Argument partitions must not be NULL.")
    items = text.split(";")
    while items and not items[-1]:  # Java's String.split drops trailing empty strings
        items.pop()
    specs = [parse_options(ctx, item) for item in items]
    table = ctx.table(args["table"])
    mark_partitions_done(table, specs)
    return ProcedureResult(MARK_DONE_OUTPUT, [(True,)])


PARTITION_PROCEDURES = (
    Procedure(
        "expire_partitions",
        (
            Parameter("table", "STRING", required=True),
            Parameter("expiration_time", "STRING"),
            Parameter("timestamp_formatter", "STRING"),
            Parameter("timestamp_pattern", "STRING"),
            Parameter("expire_strategy", "STRING"),
            Parameter("max_expires", "INT"),
            Parameter("options", "STRING"),
        ),
        EXPIRE_OUTPUT,
        _expire_partitions,
        "Drop the partitions older than expiration_time, by their values or last update.",
    ),
    Procedure(
        "mark_partition_done",
        (
            Parameter("table", "STRING", required=True),
            Parameter("partitions", "STRING", required=True),
        ),
        MARK_DONE_OUTPUT,
        _mark_partition_done,
        "Mark partitions done by the table's partition.mark-done-action (_SUCCESS files).",
    ),
)

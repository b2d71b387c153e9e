"""Consumer procedures of Paimon Spark 2.0: ``reset_consumer`` and ``clear_consumers``.

Both return ``result BOOLEAN`` (true). A consumer holds back snapshot expiry from its
``nextSnapshot`` on (``paimon_core.lifecycle.expire``); these are how a user moves or drops
that hold. As in Paimon, ``reset_consumer`` without ``nextSnapshotId`` deletes the consumer
(a missing one is no error), and with one checks that the snapshot exists first.
``clear_consumers`` takes Java regular expressions that must match the whole id; a blank
``includingConsumers`` means all.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from paimon_core.exceptions import InvalidArgument
from paimon_core.format.consumer import Consumer, ConsumerManager
from paimon_core.format.names import validate_consumer_id
from procedures.base import CallContext, Column, Parameter, Procedure, ProcedureResult

if TYPE_CHECKING:
    from paimon_core.format.snapshot import SnapshotManager

RESULT = (Column("result", "BOOLEAN"),)


def _manager(ctx: CallContext, identifier: str) -> tuple[ConsumerManager, SnapshotManager]:
    table = ctx.table(identifier)
    manager = table.snapshot_manager
    return ConsumerManager(table.file_io, table.path, manager.branch), manager


def _reset_consumer(ctx: CallContext, args: dict[str, Any]) -> ProcedureResult:
    try:
        consumer_id = validate_consumer_id(args["consumerId"])
    except InvalidArgument as err:
        raise ctx.fail(str(err)) from None
    consumers, snapshots = _manager(ctx, args["table"])
    next_snapshot = args["nextSnapshotId"]
    if next_snapshot is None:
        consumers.delete_consumer(consumer_id)
    else:
        snapshots.snapshot(next_snapshot)  # SnapshotNotFound: nothing is written
        consumers.reset_consumer(consumer_id, Consumer(next_snapshot))
    return ProcedureResult(RESULT, [(True,)])


def _pattern(ctx: CallContext, text: str, argument: str) -> re.Pattern[str]:
    try:
        return re.compile(text)
    except re.error as err:
        raise ctx.fail(f"Invalid regular expression '{text}' for {argument}: {err}") from None


def _blank(text: str | None) -> bool:
    return text is None or not text.strip()


def _clear_consumers(ctx: CallContext, args: dict[str, Any]) -> ProcedureResult:
    including_text, excluding_text = args["includingConsumers"], args["excludingConsumers"]
    including = _pattern(
        ctx, ".*" if _blank(including_text) else including_text, "includingConsumers"
    )
    excluding = None
    if not _blank(excluding_text):
        excluding = _pattern(ctx, excluding_text, "excludingConsumers")
    consumers, _ = _manager(ctx, args["table"])
    consumers.clear_consumers(including, excluding)
    return ProcedureResult(RESULT, [(True,)])


CONSUMER_PROCEDURES = (
    Procedure(
        "reset_consumer",
        (
            Parameter("table", "STRING", required=True),
            Parameter("consumerId", "STRING", required=True),
            Parameter("nextSnapshotId", "BIGINT"),
        ),
        RESULT,
        _reset_consumer,
        "Set a consumer's next snapshot, or delete the consumer when none is given.",
    ),
    Procedure(
        "clear_consumers",
        (
            Parameter("table", "STRING", required=True),
            Parameter("includingConsumers", "STRING"),
            Parameter("excludingConsumers", "STRING"),
        ),
        RESULT,
        _clear_consumers,
        "Delete the consumers matching includingConsumers but not excludingConsumers.",
    ),
)

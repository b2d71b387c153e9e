"""Compaction procedures of Paimon Spark 2.0: ``compact``, ``compact_manifest`` and
``compact_database``, with their arguments and result rows.

``compact``: the buckets are compacted by ``paimon_core.operations.compact``; the
``CallContext``'s ``run_tasks`` decides where (Spark tasks under ``PaimonSession``, in process
otherwise) and the driver commits one COMPACT snapshot. Sort compaction (``order_strategy =>
'order' | 'zorder' | 'hilbert'`` with ``order_by``) rewrites every file of the selected
partitions of an unaware-bucket append table in that order (``paimon_core.operations.sort``).
"""

from __future__ import annotations

import logging
import re
from typing import Any

from paimon_core.format.options import parse_duration
from paimon_core.operations.compact import bucket_mode, compact_table
from paimon_core.operations.manifest_merge import manifest_compact_dry_run
from procedures.base import CallContext, Column, Parameter, Procedure, ProcedureResult
from procedures.maintenance import parse_options

COMPACT_OUTPUT = (Column("result", "BOOLEAN"),)
COMPACT_DATABASE_OUTPUT = (Column("result", "STRING"),)
DRY_RUN_MESSAGE = Column("message", "STRING")
_LOG = logging.getLogger(__name__)
ORDER_STRATEGIES = ("order", "zorder", "hilbert", "none")
_CONDITION = re.compile(
    r"\s*`?(\w+)`?\s*(<=|>=|<>|!=|=|<|>)\s*('(?:[^']|'')*'|\"[^\"]*\"|[-+]?[\w.]+)\s*"
)
_AND = re.compile(r"\s+AND\s+", re.IGNORECASE)


def _blank(value: str | None) -> bool:
    return value is None or not value.strip()


def parse_partitions(ctx: CallContext, text: str) -> list[dict[str, str]]:
    """``'p=1,q=2;p=3'``: specs separated by ``;``, each ``k=v`` pairs (``ParameterUtils``)."""
    return [parse_options(ctx, spec) for spec in text.split(";") if spec.strip()]


_INTEGER_RANGE = re.compile(r"([0-9]+)(?:\s*-\s*([0-9]+))?")


def parse_integer_ranges(ctx: CallContext, text: str, upper: int) -> list[int]:
    """``'0-3,7'``: Paimon's ``ParameterUtils.parseIntegerRanges`` (each value below
    ``upper``), with its messages."""
    result: dict[int, None] = {}
    for token in text.split(","):
        item = token.strip()
        if not item:
            raise ctx.fail("Integer ranges must not contain an empty item.")
        match = _INTEGER_RANGE.fullmatch(item)
        if match is None:
            raise ctx.fail(f"Invalid integer or range: '{item}'.")
        start = int(match.group(1))
        end = start if match.group(2) is None else int(match.group(2))
        if start > end:
            raise ctx.fail(f"Integer range start {start} must not be greater than end {end}.")
        if end >= upper:
            raise ctx.fail(f"Integer or range '{item}' is out of range [0, {upper}).")
        result.update(dict.fromkeys(range(start, end + 1)))
    return list(result)


def parse_where(ctx: CallContext, text: str) -> list[tuple[str, str, Any]]:
    """A ``where`` of ``column <op> literal`` conditions joined by AND, as predicates."""
    predicates = []
    for part in _AND.split(text.strip()):
        match = _CONDITION.fullmatch(part)
        if match is None:
            raise ctx.fail(
                f"Unsupported where '{text}': only conditions 'column <op> literal' on "
                "partition columns joined by AND are supported"
            )
        column, op, literal = match.groups()
        value: Any = literal
        if literal[0] in "'\"":
            value = literal[1:-1].replace("''", "'")
        op = "!=" if op == "<>" else op
        predicates.append((column, op, value))
    return predicates


def _compact(ctx: CallContext, args: dict[str, Any]) -> ProcedureResult:
    partitions, where = args["partitions"], args["where"]
    strategy = None if _blank(args["compact_strategy"]) else args["compact_strategy"]
    order = "none" if _blank(args["order_strategy"]) else args["order_strategy"].lower()
    order_by = [] if _blank(args["order_by"]) else [c.strip() for c in args["order_by"].split(",")]
    if order not in ORDER_STRATEGIES:
        raise ctx.fail(f"Unknown order_strategy '{args['order_strategy']}'")
    if order == "none" and order_by:
        raise ctx.fail('order_strategy "none" cannot work with order_by columns.')
    if order != "none" and not order_by:
        raise ctx.fail(f"order_strategy '{order}' needs order_by columns.")
    if not _blank(args["partition_idle_time"]) and order != "none":
        raise ctx.fail("sort compact do not support 'partition_idle_time'.")
    idle = None
    if not _blank(args["partition_idle_time"]):
        idle = parse_duration(args["partition_idle_time"])
    if strategy is not None and strategy.lower() not in ("full", "minor"):
        raise ctx.fail(
            f"The compact strategy only supports 'full' or 'minor', but '{strategy}' is configured."
        )
    if not _blank(partitions) and not _blank(where):
        raise ctx.fail("partitions and where cannot be used together.")
    table = ctx.table(args["table"])
    bad = [c for c in order_by if c in table.schema.partition_keys]
    if bad:
        raise ctx.fail(
            f"order_by should not contain partition cols, because it is meaningless, your "
            f"order_by cols are {order_by}, and partition cols are {table.schema.partition_keys}"
        )
    buckets = None
    if not _blank(args["buckets"]):
        if table.options.bucket <= 0:
            raise ctx.fail(
                "Specifying buckets is only supported for fixed-bucket tables, but the table "
                f"bucket mode is {bucket_mode(table)}."
            )
        if order != "none":
            raise ctx.fail("Specifying buckets is not supported for sort compact.")
        buckets = parse_integer_ranges(ctx, args["buckets"], table.options.bucket)
    options = {"write-only": "false", **parse_options(ctx, args["options"])}
    table = table.copy(options, time_travel=False)
    specs = None if _blank(partitions) else parse_partitions(ctx, partitions)
    predicate = None if _blank(where) else parse_where(ctx, where)
    kwargs: dict[str, Any] = {}
    if ctx.run_tasks is not None:
        kwargs["runner"] = ctx.run_tasks
    compact_table(
        table,
        full=strategy is None or strategy.lower() == "full",
        partitions=specs,
        predicate=predicate,
        order_by=order_by,
        order_strategy="order" if order == "none" else order,
        buckets=buckets,
        partition_idle=idle,
        **kwargs,
    )
    return ProcedureResult(COMPACT_OUTPUT, [(True,)])


def _compact_manifest(ctx: CallContext, args: dict[str, Any]) -> ProcedureResult:
    """Paimon Spark 2.0's ``CompactManifestProcedure``: one full manifest merge of the
    latest snapshot, committed as a COMPACT snapshot (no data file is touched; the old
    manifests stay for the older snapshots until they expire). Master after 2.0 adds the
    ``manifest_sort_*`` arguments, which are not implemented.

    ``dry_run => true`` changes nothing; Paimon logs its summary and returns true, and so
    does this, with the summary as a second column ``message`` too (a shell hides the log).
    """
    table = ctx.table(args["table"])
    options = parse_options(ctx, args["options"])
    if options:
        table = table.copy(options)
    if args["dry_run"]:
        message = manifest_compact_dry_run(table)
        _LOG.info(message)
        return ProcedureResult((*COMPACT_OUTPUT, DRY_RUN_MESSAGE), [(True, message)])
    table.new_commit().compact_manifest()
    return ProcedureResult(COMPACT_OUTPUT, [(True,)])


def _pattern(ctx: CallContext, text: str, argument: str) -> re.Pattern[str]:
    try:
        return re.compile(text)
    except re.error as err:
        raise ctx.fail(f"Invalid regular expression '{text}' for {argument}: {err}") from None


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _compact_database(ctx: CallContext, args: dict[str, Any]) -> ProcedureResult:
    """Paimon Spark 2.0's ``CompactDatabaseProcedure``: ``CALL sys.compact`` with only
    ``options`` on every table whose database fully matches ``including_databases`` and
    whose ``db.table`` fully matches ``including_tables`` but not ``excluding_tables``
    (Java regular expressions; Python's ``re`` agrees on the common syntax).

    As in Paimon a table whose compaction fails is counted, logged and skipped, the others
    go on. A malformed ``options`` or pattern fails the call before any table is touched.
    """
    databases = _pattern(ctx, _or(args["including_databases"], ".*"), "including_databases")
    including = _pattern(ctx, _or(args["including_tables"], ".*"), "including_tables")
    excluding = None
    if not _blank(args["excluding_tables"]):
        excluding = _pattern(ctx, args["excluding_tables"], "excluding_tables")
    parse_options(ctx, args["options"])
    succeeded = failed = 0
    for database in ctx.catalog.list_databases():
        if not databases.fullmatch(database):
            continue
        for name in ctx.catalog.list_tables(database):
            full_name = f"{database}.{name}"
            if not including.fullmatch(full_name) or (
                excluding is not None and excluding.fullmatch(full_name)
            ):
                continue
            compact_args = dict.fromkeys(p.name for p in _COMPACT.parameters)
            compact_args["table"] = f"{_quoted(database)}.{_quoted(name)}"
            compact_args["options"] = args["options"]
            try:
                _compact(ctx, compact_args)
            except Exception as err:
                failed += 1
                _LOG.error("Failed to compact table: %s: %s", full_name, " ".join(str(err).split()))
            else:
                succeeded += 1
    message = f"Compact database finished. Success: {succeeded}, Failed: {failed}"
    return ProcedureResult(COMPACT_DATABASE_OUTPUT, [(message,)])


def _or(value: str | None, default: str) -> str:
    return default if value is None else value


_COMPACT = Procedure(
    "compact",
    (
        Parameter("table", "STRING", required=True),
        Parameter("partitions", "STRING"),
        Parameter("compact_strategy", "STRING"),
        Parameter("order_strategy", "STRING"),
        Parameter("order_by", "STRING"),
        Parameter("where", "STRING"),
        Parameter("options", "STRING"),
        Parameter("partition_idle_time", "STRING"),
        Parameter("buckets", "STRING"),
    ),
    COMPACT_OUTPUT,
    _compact,
    "This procedure execute compact action on paimon table.",
)

COMPACT_PROCEDURES = (
    _COMPACT,
    Procedure(
        "compact_manifest",
        (
            Parameter("table", "STRING", required=True),
            Parameter("options", "STRING"),
            Parameter("dry_run", "BOOLEAN"),
        ),
        COMPACT_OUTPUT,
        _compact_manifest,
        "This procedure execute compact action on paimon table.",
    ),
    Procedure(
        "compact_database",
        (
            Parameter("including_databases", "STRING"),
            Parameter("including_tables", "STRING"),
            Parameter("excluding_tables", "STRING"),
            Parameter("options", "STRING"),
        ),
        COMPACT_DATABASE_OUTPUT,
        _compact_database,
        "This procedure executes compact action on all tables in database(s).",
    ),
)

"""File procedures of Paimon Spark 2.0: ``purge_files``, ``remove_unexisting_files`` and
``rewrite_file_index``.

``purge_files(table)`` deletes all data of the table with its branches, tags, consumers,
changelogs and old snapshots (``paimon_core.lifecycle.purge``) and returns the single row
``result = 'Success'``.

``remove_unexisting_files(table, dry_run, parallelism)`` removes the manifest entries of
data files that do not exist (``paimon_core.lifecycle.unexisting``), one row ``fileName``
per file (its full path; sorted), none when all exist. ``dry_run`` only lists them.
``parallelism`` is accepted as Paimon's and must be positive; the existence checks here run
in the driver (in parallel on object stores). Paimon's docs mention ``db.*`` for a whole
database, which its Spark procedure does not accept; neither does this.

``rewrite_file_index(table, where)`` returns ``written_partitions, written_indexes``
(``paimon_core.operations.file_index``): tables without ``file-index.*.columns`` options
are rewritten as Paimon does (obsolete ``.index`` files dropped); tables with them are
refused, since building file indexes is not implemented.
"""

from __future__ import annotations

from typing import Any

from paimon_core.lifecycle.purge import purge_files
from paimon_core.lifecycle.unexisting import remove_unexisting_files
from paimon_core.operations.file_index import rewrite_file_index
from procedures.base import CallContext, Column, Parameter, Procedure, ProcedureResult
from procedures.compact import parse_where

PURGE_OUTPUT = (Column("result", "STRING"),)


def _purge_files(ctx: CallContext, args: dict[str, Any]) -> ProcedureResult:
    purge_files(ctx.table(args["table"]))
    return ProcedureResult(PURGE_OUTPUT, [("Success",)])


UNEXISTING_OUTPUT = (Column("fileName", "STRING", nullable=False),)


def _remove_unexisting_files(ctx: CallContext, args: dict[str, Any]) -> ProcedureResult:
    identifier = args["table"]
    if identifier is None or not identifier:
        raise ctx.fail("Cannot handle an empty tableId for argument table")
    parallelism = args["parallelism"]
    if parallelism is not None and parallelism <= 0:
        raise ctx.fail(f"Positive number of partitions required, got parallelism {parallelism}")
    table = ctx.table(identifier)
    found = remove_unexisting_files(table, dry_run=bool(args["dry_run"]))
    return ProcedureResult(UNEXISTING_OUTPUT, [(path,) for path in found.paths])


FILE_INDEX_OUTPUT = (
    Column("written_partitions", "INT", nullable=False),
    Column("written_indexes", "INT", nullable=False),
)


def _rewrite_file_index(ctx: CallContext, args: dict[str, Any]) -> ProcedureResult:
    where = args["where"]
    predicate = None if where is None or not where.strip() else parse_where(ctx, where)
    table = ctx.table(args["table"])
    result = rewrite_file_index(table, predicate)
    return ProcedureResult(FILE_INDEX_OUTPUT, [(result.written_partitions, result.written_indexes)])


FILE_PROCEDURES = (
    Procedure(
        "purge_files",
        (Parameter("table", "STRING", required=True),),
        PURGE_OUTPUT,
        _purge_files,
        "Delete all data of the table, its branches, tags, consumers and old snapshots.",
    ),
    Procedure(
        "remove_unexisting_files",
        (
            Parameter("table", "STRING", required=True),
            Parameter("dry_run", "BOOLEAN"),
            Parameter("parallelism", "INT"),
        ),
        UNEXISTING_OUTPUT,
        _remove_unexisting_files,
        "Remove the manifest entries of data files that no longer exist.",
    ),
    Procedure(
        "rewrite_file_index",
        (Parameter("table", "STRING", required=True), Parameter("where", "STRING")),
        FILE_INDEX_OUTPUT,
        _rewrite_file_index,
        "Rewrite the file indexes of the table's data files.",
    ),
)

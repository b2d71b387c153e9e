"""File procedures of Paimon Spark 2.0: ``purge_files``, ``remove_unexisting_files``,
``rewrite_file_index`` and ``copy``.

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
(``paimon_core.operations.file_index``, Paimon's ``FileIndexProcessor``): each live file
of the partitions ``where`` selects gets the indexes the table's ``file-index.*`` options
declare, built from its rows (embedded in the manifest when small, else a new ``.index``
file), in one COMPACT snapshot of the files whose meta changed; without declared indexes
their indexes are dropped. Old index files are left to orphan cleanup, as in Paimon. Each
bucket is a task run where the ``CallContext`` says (Spark executors under
``PaimonSession``: the data files are read there), and the driver commits once.

``copy(source_table, target_table, where)`` (Paimon's ``CopyFilesProcedure``) creates the
target table in this catalog when it does not exist (the source's latest columns, keys,
options but ``path``, and comment; its database too), or checks that the existing one is
compatible (Paimon's checks: bucket, file format, primary and partition keys; beyond
Paimon, the same columns rather than a superset, whose files would read wrongly), then
copies the latest snapshot's files (``paimon_core.operations.copy``); ``result = true``.
The byte copies are tasks, one per bucket, run where the ``CallContext`` says (Spark
executors under ``PaimonSession``), and the driver commits once. Targets in other catalogs
are not supported.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from paimon_core.format.types import highest_field_id
from paimon_core.lifecycle.purge import purge_files
from paimon_core.lifecycle.unexisting import remove_unexisting_files
from paimon_core.operations.copy import copy_files
from paimon_core.operations.file_index import rewrite_file_index
from procedures.base import CallContext, Column, Parameter, Procedure, ProcedureResult
from procedures.compact import parse_where

if TYPE_CHECKING:
    from paimon_core.table import FileStoreTable

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
    kwargs: dict[str, Any] = {}
    if ctx.run_tasks is not None:  # Spark tasks read the files; the driver commits
        kwargs["runner"] = ctx.run_tasks
    result = rewrite_file_index(table, predicate, **kwargs)
    return ProcedureResult(FILE_INDEX_OUTPUT, [(result.written_partitions, result.written_indexes)])


COPY_OUTPUT = (Column("result", "BOOLEAN"),)


def _check_compatible(ctx: CallContext, source: FileStoreTable, target: FileStoreTable) -> None:
    """Paimon's ``CopySchemaOperator.checkCompatible``, with equal columns."""
    schema, other = source.schema, target.schema
    checks = [
        (source.options.bucket == target.options.bucket, "bucket"),
        (source.options.file_format == target.options.file_format, "format"),
        (sorted(schema.primary_keys) == sorted(other.primary_keys), "primary keys"),
        (sorted(schema.partition_keys) == sorted(other.partition_keys), "partition keys"),
        (schema.fields == other.fields, "fields"),
    ]
    for ok, what in checks:
        if not ok:
            raise ctx.fail(
                f"source table {what} is not compatible with existed paimon table {what}."
            )


def _runner(ctx: CallContext) -> dict[str, Any]:
    """Where the byte copies run: Spark tasks when the context has them (the driver plans
    and commits), else in process."""
    return {} if ctx.run_tasks is None else {"runner": ctx.run_tasks}


def _copy(ctx: CallContext, args: dict[str, Any]) -> ProcedureResult:
    where = args["where"]
    predicate = None if where is None or not where.strip() else parse_where(ctx, where)
    source = ctx.table(args["source_table"], "source_table")
    keys = list(source.schema.partition_keys)
    for column, _, _ in predicate or ():
        if column not in keys:
            raise ctx.fail(
                f"Only partition columns can select files: '{column}' is not one of {keys}"
            )
    database, name = ctx.split_table(args["target_table"], "target_table")
    identifier = f"{database}.{name}"
    catalog = ctx.catalog
    new_database = not catalog.database_exists(database)
    if not new_database and catalog.table_exists(identifier):
        target = ctx.table(args["target_table"], "target_table")
        _check_compatible(ctx, source, target)
        copy_files(source, target, predicate, **_runner(ctx))
        return ProcedureResult(COPY_OUTPUT, [(True,)])
    schema = replace(
        source.schema,
        schema_id=0,
        options={k: v for k, v in source.schema.options.items() if k != "path"},
        highest_field_id=highest_field_id(source.schema.fields),
        time_millis=int(time.time() * 1000),
    )
    catalog.create_database(database, ignore_if_exists=True)
    created = False
    try:
        catalog.create_table(identifier, schema)
        created = True
        target = ctx.table(args["target_table"], "target_table")
        copy_files(source, target, predicate, **_runner(ctx))
    except BaseException:  # a refused copy leaves no table (nor database) of its own behind
        if created:
            catalog.drop_table(identifier, ignore_if_not_exists=True)
        if new_database and not catalog.list_tables(database):
            catalog.drop_database(database, ignore_if_not_exists=True)
        raise
    return ProcedureResult(COPY_OUTPUT, [(True,)])


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
    Procedure(
        "copy",
        (
            Parameter("source_table", "STRING", required=True),
            Parameter("target_table", "STRING", required=True),
            Parameter("where", "STRING"),
        ),
        COPY_OUTPUT,
        _copy,
        "Copy the latest files of a table into another (created when missing).",
    ),
)

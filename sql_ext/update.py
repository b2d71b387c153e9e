"""UPDATE t SET c = v, s.f = v [WHERE cond] on Paimon tables: one snapshot per statement.

As Paimon-Spark's ``PaimonUpdateTable`` and ``UpdatePaimonTableCommand`` (latest Paimon):

* The assignments are aligned to the table's columns (``sql_ext.rowlevel.align``): a nested
  field ``s.f`` rebuilds its ROW column with ``named_struct``; a column assigned twice, or
  whole and by field, is an error. ``DEFAULT`` as a value writes NULL, which the table write
  turns into the column's default (Paimon's ``DefaultValueRow``).
* Primary-key tables: updating a primary-key column is refused ("Can't update the primary key
  column", unless it is assigned itself); merge engines other than ``deduplicate`` and
  ``partial-update`` are refused (``RowLevelOp``). The rows satisfying the condition are read through the session's read
  path (so the WHERE may hold subqueries, even over Paimon tables), their new values computed
  by Spark and written as ``+U`` rows through the distributed writer: one APPEND snapshot,
  none when no row matches. The whole row is written (every column, assigned or not), so on a
  ``partial-update`` table a column set to NULL keeps its value, as in Paimon-Spark.
* Append tables, by copy-on-write (without deletion vectors): the live files holding a row
  satisfying the condition are found by reading each file on the executors; those files are
  rewritten, every row as ``IF(cond, new, old)`` (a row whose condition is NULL keeps its
  values), and deleted in the same commit: one OVERWRITE snapshot, none when no row matches.
  Subqueries are refused there, as in DELETE: the condition is evaluated per file. On a
  row-tracking table every rewritten row keeps its ``_ROW_ID``, and an updated row's
  ``_SEQUENCE_NUMBER`` becomes the commit's snapshot (Paimon-Spark's ``withRowTracking``).

A refused or failed statement commits nothing.
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import pyarrow as pa
from pyspark.sql import functions as F
from sqlglot import exp

from paimon_core.exceptions import InvalidArgument
from paimon_core.operations.data_evolution import data_evolution_enabled
from paimon_core.operations.row_tracking import ROW_ID, SEQUENCE_NUMBER
from sql_ext.datapath.write import write_dataframe
from sql_ext.errors import SqlError
from sql_ext.rowlevel import (
    FILE_INDEX,
    UPDATE_AFTER,
    Path,
    Reader,
    Target,
    align,
    assignment_key,
    check_engine,
    deleted_files,
    file_frames,
    file_indexes,
    is_default_keyword,
    refuse_subqueries,
    spark_col,
    spark_errors,
    spark_expr,
    tracks_rows,
    with_row_ids,
)
from sql_ext.spark_types import to_spark_type
from sql_ext.syntax.dialect import PaimonSpark, quote_identifier

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from paimon_core.operations.scan import Split
    from paimon_core.table import FileStoreTable
    from sql_ext.datapath.read import ReadPlan


def update(spark: SparkSession, target: Target, tree: exp.Update, read: Reader) -> int | None:
    """Run one UPDATE (see the module docstring); the snapshot id, None when nothing changed.

    Raises:
        SqlError: a form, column, assignment or merge engine Paimon refuses, or an expression
            Spark rejects; nothing is written then.
    """
    statement = f"UPDATE {target.shown}"
    for clause in ("from_", "joins", "order", "limit", "returning"):
        if tree.args.get(clause):
            raise SqlError(f"{statement}: {clause.rstrip('_').upper()} is not supported")
    table = target.table
    check_engine(table, "Update", statement)
    assignments: list[tuple[Path, exp.Expr]] = []
    for item in tree.expressions:
        if not isinstance(item, exp.EQ):
            raise SqlError(f"{statement}: expected `column = value`, got {item.sql('spark')}")
        value = exp.Null() if is_default_keyword(item.expression) else item.expression
        assignments.append((assignment_key(item.this, target, statement), value))
    keys = {k.lower() for k in table.schema.primary_keys}
    for path, value in assignments:
        if path[0].lower() in keys and not _is_itself(value, path, target):
            raise SqlError(f"{statement}: Can't update the primary key column {path[0]}")
    aligned = align(table.schema.fields, assignments, target.column, statement)
    where = tree.args.get("where")
    predicate = where.this if where is not None else None
    if not aligned:
        return None
    if table.schema.primary_keys:
        return _update_rows(target, tree, aligned, predicate, read)
    refuse_subqueries(statement, predicate, *aligned.values())
    if data_evolution_enabled(table.options):
        return _update_columns(spark, target, aligned, predicate, statement)
    return _copy_on_write(spark, target, aligned, predicate, statement)


def _is_itself(value: exp.Expr, path: Path, target: Target) -> bool:
    """``k = k`` or ``k = t.k``: Paimon does not count it as updating the key."""
    if not isinstance(value, exp.Column) or value.db or value.name.lower() != path[-1].lower():
        return False
    return not value.table or value.table.lower() == target.alias.lower()


def _update_rows(
    target: Target,
    tree: exp.Update,
    aligned: dict[str, exp.Expr],
    predicate: exp.Expr | None,
    read: Reader,
) -> int | None:
    """Primary-key tables: the matching rows with their new values, written as ``+U``."""
    columns = [
        exp.alias_(aligned.get(f.name, target.column((f.name,))), f.name, quoted=True)
        for f in target.table.schema.fields
    ]
    select = exp.select(*columns).from_(tree.this.copy())
    if predicate is not None:
        select = select.where(predicate.copy())
    with spark_errors(f"UPDATE {target.shown}"):
        rows = read(select.sql(dialect=PaimonSpark))
    return write_dataframe(target.table, rows, row_kind=UPDATE_AFTER)


def _update_columns(
    spark: SparkSession,
    target: Target,
    aligned: dict[str, exp.Expr],
    predicate: exp.Expr | None,
    statement: str,
) -> int | None:
    """Data-evolution tables (Paimon-Spark's ``UpdatePaimonDataEvolutionTableCommand``): each
    row-id range holding a matching row gets one file of the assigned columns alone over the
    whole range, ``IF(cond, new, old)`` per row, written by an executor
    (``data_evolution_write.write_columns_file``); nothing is deleted, and the commit (one
    APPEND snapshot, none when no row matches) makes those files the newest of their ranges.
    Rows a deletion vector deleted are rewritten as they are and stay deleted."""
    from paimon_core.operations.data_evolution_write import update_fields
    from sql_ext.datapath.read import plan_read

    table = target.table
    updated = [f.name for f in table.schema.fields if f.name in aligned]
    try:
        update_fields(table, updated)
    except InvalidArgument as err:
        raise SqlError(f"{statement}: {err}") from None
    snapshot = table.latest_snapshot()
    if snapshot is None:
        return None
    plan = with_row_ids(plan_read(table, snapshot))  # one split per row-id range
    condition = target.requalify(predicate) if predicate is not None else None
    with spark_errors(statement):
        touched = _touched_splits(spark, plan, target, condition, skip_empty=True)
        if not touched:
            return None
        # Every row of a range, deleted ones too: the new file covers the whole range.
        whole = replace(plan, splits=tuple(replace(s, deletion_files=()) for s in plan.splits))
        rewritten = file_frames(spark, whole, touched)
        assert rewritten is not None
        frame = rewritten.alias(target.alias)
        matched = F.lit(True) if condition is None else spark_expr(condition)
        columns = [F.col(FILE_INDEX), spark_col(target.alias, ROW_ID).alias(ROW_ID)]
        for name in updated:
            f = table.schema.field(name)
            new = spark_expr(target.requalify(aligned[name])).cast(to_spark_type(f.type))
            old = spark_col(target.alias, name)
            columns.append(F.when(matched, new).otherwise(old).alias(name))
        rows = frame.select(*columns)
        probe = table.new_write()
        total = probe.total_buckets
        probe.close()
        splits = whole.splits

        def write(rows: pa.Table) -> pa.Table:  # a plain function: Spark reads its signature
            return _write_range(table, splits, updated, total, rows)

        found = rows.groupBy(FILE_INDEX).applyInArrow(write, "message binary").collect()
    messages = [pickle.loads(m) for (m,) in found]
    commit = table.new_commit()
    try:
        return commit.commit(messages)
    except BaseException:
        commit.abort(messages)
        raise


def _write_range(
    table: FileStoreTable,
    splits: Sequence[Split],
    columns: list[str],
    total_buckets: int,
    rows: pa.Table,
) -> pa.Table:
    """One row-id range's rows (a group of ``FILE_INDEX``, on an executor) written as a file
    of ``columns``; its pickled commit message."""
    from paimon_core.format.commit_message import CommitMessage
    from paimon_core.operations.data_evolution_write import write_columns_file

    split = splits[rows.column(FILE_INDEX)[0].as_py()]
    rows = rows.sort_by(ROW_ID)
    first = rows.column(ROW_ID)[0].as_py()
    meta = write_columns_file(table, split, first, columns, rows.select(columns))
    message = CommitMessage(split.partition, split.bucket, total_buckets, new_files=(meta,))
    return pa.table({"message": [pickle.dumps(message)]})


def _copy_on_write(
    spark: SparkSession,
    target: Target,
    aligned: dict[str, exp.Expr],
    predicate: exp.Expr | None,
    statement: str,
) -> int | None:
    """Append tables: rewrite the files holding matching rows with the rows updated."""
    from sql_ext.datapath.read import plan_read

    table = target.table
    snapshot = table.latest_snapshot()
    if snapshot is None:
        return None
    plan = with_row_ids(plan_read(table, snapshot))  # one split per file on append tables
    tracking = tracks_rows(table)
    condition = target.requalify(predicate) if predicate is not None else None
    with spark_errors(statement):
        touched = _touched_splits(spark, plan, target, condition, skip_empty=False)
        if not touched:
            return None
        rewritten = file_frames(spark, plan, touched)
        assert rewritten is not None
        frame = rewritten.alias(target.alias)
        matched = F.lit(True) if condition is None else spark_expr(condition)
        columns = []
        for f in table.schema.fields:
            value = aligned.get(f.name)
            if value is None:
                columns.append(F.col(quote_identifier(f.name)))
                continue
            new = spark_expr(target.requalify(value)).cast(to_spark_type(f.type))
            old = spark_col(target.alias, f.name)
            columns.append(F.when(matched, new).otherwise(old).alias(f.name))
        if tracking:  # ids kept; an updated row's sequence number is the commit's
            sequence = spark_col(target.alias, SEQUENCE_NUMBER)
            columns.append(spark_col(target.alias, ROW_ID).alias(ROW_ID))
            none = F.lit(None).cast("bigint")
            columns.append(F.when(matched, none).otherwise(sequence).alias(SEQUENCE_NUMBER))
        rows = frame.select(*columns)  # analysed now: a bad expression fails here
    splits = [plan.splits[i] for i in touched]
    deleted = deleted_files(table, splits)
    return write_dataframe(table, rows, deleted=deleted, row_tracking=tracking)


def _touched_splits(
    spark: SparkSession,
    plan: ReadPlan,
    target: Target,
    condition: exp.Expr | None,
    *,
    skip_empty: bool,
) -> list[int]:
    """The indexes of the splits of ``plan`` holding a row ``condition`` matches (every split
    without a condition; ``skip_empty``: not those of no rows), on Spark's executors."""
    everything = range(len(plan.splits))
    if condition is None:
        return [i for i in everything if plan.splits[i].row_count or not skip_empty]
    candidates = file_frames(spark, plan, everything)
    if candidates is None:
        return []
    return file_indexes(candidates.alias(target.alias).filter(spark_expr(condition)))

"""TRUNCATE TABLE and DELETE FROM on Paimon tables: one snapshot per statement.

As Paimon-Spark does:

* ``TRUNCATE TABLE t`` and ``DELETE FROM t`` without WHERE commit one OVERWRITE snapshot
  deleting every file (``truncateTable``); ``TRUNCATE TABLE t PARTITION (p = v, ...)`` one
  deleting the files of the partitions that spec selects (``truncatePartitions``).
* ``DELETE FROM t WHERE c`` with ``c`` on partition columns only (Paimon-Spark's
  ``SupportsDelete.deleteWhere``): ``c`` is evaluated by Spark over the table's partition
  values, and the matching partitions are truncated in one OVERWRITE snapshot (none match:
  no snapshot).
* ``DELETE FROM t WHERE c`` on a primary-key table: the rows satisfying ``c`` are read through
  the distributed read path and written back as retractions (RowKind ``-D``) through the
  distributed writer, in one APPEND snapshot (``performPrimaryKeyDelete``). Whole rows are
  written, not only keys, so NOT NULL value columns keep a value.
* ``DELETE FROM t WHERE c`` on an append table with ``deletion-vectors.enabled``: the
  positions of the matching rows in their files are found on the executors and marked in the
  files' deletion vectors, in one OVERWRITE snapshot; no data file is rewritten (Paimon-Spark's
  ``performNonPrimaryKeyDelete`` with deletion vectors).
* ``DELETE FROM t WHERE c`` on another append table, by copy-on-write (``performNonPrimaryKeyDelete``
  without deletion vectors): the live files holding a row satisfying ``c`` are found by
  reading each file on the executors, their other rows (``NOT (c <=> true)``, so rows where
  ``c`` is NULL stay) are written again, and the old files are deleted in the same commit
  (kind OVERWRITE, as Paimon's commit of deleted files). A predicate with a subquery is
  refused there: it is evaluated per file, outside the session's table resolution.

A refused or failed statement commits nothing.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pyspark.errors import PySparkException
from pyspark.sql import functions as F
from pyspark.sql import types as st
from sqlglot import exp

from paimon_core.format.binary_row import deserialize_row
from sql_ext.dialect import PaimonSpark
from sql_ext.errors import SqlError, first_line, quiet_query_logs
from sql_ext.rowlevel import (
    DELETE,
    FILE_INDEX,
    Reader,
    Target,
    deleted_files,
    file_frames,
    file_indexes,
    spark_errors,
    spark_expr,
)
from sql_ext.spark_types import to_spark_type
from sql_ext.tables import static_partition
from sql_ext.views import local_dataframe

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from paimon_core.format.snapshot import Snapshot
    from paimon_core.table import FileStoreTable
    from sql_ext.datapath.read import ReadPlan

_INDEX = "__paimon_partition_index"


def truncate(
    spark: SparkSession, table: FileStoreTable, tree: exp.TruncateTable, shown: str
) -> int | None:
    """TRUNCATE TABLE [PARTITION (...)]: one OVERWRITE snapshot; returns its id.

    Raises:
        SqlError: the spec names a column that is no partition column, or is not `k = v`.
    """
    partition = tree.args.get("partition")
    if partition is None:
        return table.new_commit().truncate_table()
    statement = f"TRUNCATE TABLE {shown} PARTITION"
    keys = {k.lower() for k in table.schema.partition_keys}
    written: dict[str, exp.Expr] = {}
    for item in partition.expressions:
        if not isinstance(item, exp.EQ) or not isinstance(item.this, exp.Column):
            raise SqlError(f"{statement}: expected `column = value`, got {item.sql('spark')}")
        name = item.this.name
        if name.lower() not in keys:
            columns = ", ".join(table.schema.partition_keys) or "none"
            raise SqlError(
                f"{statement}: {name} is not a partition column (the partition columns are "
                f"{columns})"
            )
        written[name] = item.expression
    spec = static_partition(spark, table, written)
    return table.new_commit().truncate_partitions([spec])


def delete(spark: SparkSession, target: Target, tree: exp.Delete, read: Reader) -> int | None:
    """DELETE FROM t [WHERE c]: one snapshot (see the module docstring); returns its id,
    None when nothing matched.

    Raises:
        SqlError: a non-partition predicate on an append table, or a predicate Spark rejects.
    """
    table, shown = target.table, target.shown
    where = tree.args.get("where")
    if where is None:
        return table.new_commit().truncate_table()
    predicate: exp.Expr = where.this
    if _on_partitions_only(table, predicate):
        specs = _matching_partitions(spark, target, predicate)
        if specs is None:
            return table.new_commit().truncate_table()
        return table.new_commit().truncate_partitions(specs) if specs else None
    if not table.schema.primary_keys:
        if table.options.deletion_vectors_enabled:
            return _delete_with_vectors(spark, target, predicate, shown)
        return _copy_on_write(spark, target, predicate, shown)
    _check_retractable(table, shown)
    select = exp.select(exp.Star()).from_(tree.this.copy()).where(predicate.copy())
    rows = read(select.sql(dialect=PaimonSpark))
    from sql_ext.datapath.write import write_dataframe

    return write_dataframe(table, rows, row_kind=DELETE)


def _check_retractable(table: FileStoreTable, shown: str) -> None:
    """Refuse merge engines that would not drop a key on a ``-D`` row, with Paimon's rule
    (``PrimaryKeyTableUtils.validatePKUpsertDeletable``). Paimon-Spark then rewrites the
    table's files instead; that copy-on-write of primary-key tables is not implemented here."""
    options = table.options
    engine = options.merge_engine
    if engine == "deduplicate":
        return
    if engine == "partial-update" and (
        options.get_bool("partial-update.remove-record-on-delete", False)
        or options.get_str("partial-update.remove-record-on-sequence-group")
    ):
        return
    if engine == "aggregation" and options.get_bool("aggregation.remove-record-on-delete", False):
        return
    raise SqlError(
        f"DELETE FROM {shown}: merge engine {engine} does not remove rows on delete; only "
        "predicates on partition columns are supported (see Paimon's "
        "partial-update/aggregation.remove-record-on-delete)"
    )


def _matches(
    spark: SparkSession, target: Target, predicate: exp.Expr, shown: str, *, positions: bool
) -> tuple[Snapshot, ReadPlan, DataFrame] | None:
    """The latest snapshot, its plan (one split per file on append tables) and its rows matching
    ``predicate``, each tagged with its split's ``FILE_INDEX`` (and, with ``positions``, its
    position in the file); None when the table has no rows."""
    from sql_ext.datapath.read import plan_read

    if predicate.find(exp.Select, exp.Subquery) is not None:
        raise SqlError(f"DELETE FROM {shown}: subqueries in WHERE are not supported here")
    table = target.table
    snapshot = table.latest_snapshot()
    if snapshot is None:
        return None
    plan = replace(plan_read(table, snapshot), row_positions=positions)
    candidates = file_frames(spark, plan, range(len(plan.splits)))
    if candidates is None:
        return None
    with spark_errors(f"DELETE FROM {shown}: invalid WHERE"):
        condition = spark_expr(target.requalify(predicate))
        return snapshot, plan, candidates.alias(target.alias).filter(condition)


def _copy_on_write(
    spark: SparkSession, target: Target, predicate: exp.Expr, shown: str
) -> int | None:
    """Rewrite the files of the latest snapshot holding matching rows without them, and
    delete those files, in one commit; None when no row matches."""
    from sql_ext.datapath.read import plan_dataframe
    from sql_ext.datapath.write import write_dataframe

    matched = _matches(spark, target, predicate, shown, positions=False)
    if matched is None:
        return None
    _, plan, hits = matched
    with spark_errors(f"DELETE FROM {shown}: invalid WHERE"):
        touched = file_indexes(hits)
    if not touched:
        return None
    splits = tuple(plan.splits[i] for i in touched)
    condition = target.requalify(predicate)
    keep = exp.Not(this=exp.NullSafeEQ(this=exp.Paren(this=condition), expression=exp.true()))
    kept = (
        plan_dataframe(spark, replace(plan, splits=splits))
        .alias(target.alias)
        .filter(spark_expr(keep))
    )
    return write_dataframe(target.table, kept, deleted=deleted_files(target.table, splits))


def _delete_with_vectors(
    spark: SparkSession, target: Target, predicate: exp.Expr, shown: str
) -> int | None:
    """Mark the matching rows of the latest snapshot deleted in deletion vectors, one
    commit, no data file rewritten; None when no row matches.

    The executors read each file with its rows' positions and evaluate the predicate; the
    positions of the matches come back to the driver, which merges them into the vectors
    the snapshot has and commits the new index files."""
    from sql_ext.datapath.read import ROW_POSITION_COLUMN

    matched = _matches(spark, target, predicate, shown, positions=True)
    if matched is None:
        return None
    snapshot, plan, hits = matched
    with spark_errors(f"DELETE FROM {shown}: invalid WHERE"):
        found = hits.groupBy(FILE_INDEX).agg(F.collect_list(ROW_POSITION_COLUMN)).collect()
    deletions: dict[tuple[bytes, int], dict[str, list[int]]] = {}
    for index, positions in found:
        split = plan.splits[index]
        (meta,) = split.files
        deletions.setdefault((split.partition, split.bucket), {})[meta.file_name] = positions
    if not deletions:
        return None
    from paimon_core.operations.deletion_vectors import delete_positions

    return delete_positions(target.table, deletions, snapshot)


def _on_partitions_only(table: FileStoreTable, predicate: exp.Expr) -> bool:
    """No subquery, and every column named is a partition column."""
    if predicate.find(exp.Select, exp.Subquery) is not None:
        return False
    keys = {k.lower() for k in table.schema.partition_keys}
    return all(c.name.lower() in keys for c in predicate.find_all(exp.Column))


def _matching_partitions(
    spark: SparkSession, target: Target, predicate: exp.Expr
) -> list[dict[str, Any]] | None:
    """The specs of the latest snapshot's partitions whose values satisfy ``predicate``,
    evaluated by Spark over a small DataFrame of those values; None: the table is not
    partitioned and the (column-free) predicate holds, so everything goes."""
    table, shown = target.table, target.shown
    condition = target.requalify(predicate)
    fields = table.schema.partition_fields
    snapshot = table.latest_snapshot()
    values: list[tuple[Any, ...]] = []
    if snapshot is not None:
        types = [f.type for f in fields]
        seen = {e.partition for e in table.new_scan().read_entries(snapshot)}
        values = [deserialize_row(p, types) if fields else () for p in seen]
    schema = st.StructType(
        [st.StructField(f.name, to_spark_type(f.type), True) for f in fields]
        + [st.StructField(_INDEX, st.IntegerType(), False)]
    )
    frame = local_dataframe(spark, [(*v, i) for i, v in enumerate(values)], schema)
    try:
        with quiet_query_logs():
            matching = frame.alias(target.alias).filter(spark_expr(condition))
            hits = [r[0] for r in matching.select(_INDEX).collect()]
    except PySparkException as e:
        shown_condition = condition.sql(dialect="spark")
        raise SqlError(
            f"DELETE FROM {shown}: invalid WHERE {shown_condition}: {first_line(e)}"
        ) from None
    if not fields:
        return None if hits else []
    names = [f.name for f in fields]
    return [dict(zip(names, values[i])) for i in sorted(hits)]

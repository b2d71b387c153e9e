"""TRUNCATE TABLE and DELETE FROM on Paimon tables: one snapshot per statement (a first-row
table's rewrite adds its compaction's, as Paimon's writer does).

As Paimon-Spark does:

* ``TRUNCATE TABLE t`` and ``DELETE FROM t`` without WHERE commit one OVERWRITE snapshot
  deleting every file (``truncateTable``); ``TRUNCATE TABLE t PARTITION (p = v, ...)`` one
  deleting the files of the partitions that spec selects (``truncatePartitions``).
* ``DELETE FROM t WHERE c`` with ``c`` on partition columns only (Paimon-Spark's
  ``SupportsDelete.deleteWhere``): ``c`` is evaluated by Spark over the table's partition
  values, and the matching partitions are truncated in one OVERWRITE snapshot (none match:
  no snapshot).
* ``DELETE FROM t WHERE c`` on a primary-key table whose merge engine drops a key on a
  retraction (``upsert_deletable``: deduplicate, and partial-update or aggregation with their
  remove-record options): the rows satisfying ``c`` are read through the distributed read
  path and written back as retractions (RowKind ``-D``) through the distributed writer, in
  one APPEND snapshot (``performPrimaryKeyDelete``). Whole rows are written, not only keys,
  so NOT NULL value columns keep a value.
* Every other ``DELETE FROM t WHERE c`` (append tables; aggregation, first-row and
  partial-update tables otherwise) deletes by files, as Paimon-Spark's
  ``performNonPrimaryKeyDelete``: the candidate files are the live files of the latest
  snapshot that the partition and stats filters of ``c`` leave (``_candidates``); then

  - with ``deletion-vectors.enabled``: the positions of the matching rows in their files are
    found on the executors, each file's vector built there, and the vectors merged into the
    snapshot's, in one OVERWRITE snapshot; no data file is rewritten;
  - without: the candidate files holding a row satisfying ``c`` are found by reading each on
    the executors, their other rows (``NOT (c <=> true)``, so rows where ``c`` is NULL stay)
    are written again, and the old files are deleted in the same commit (kind OVERWRITE, as
    Paimon's commit of deleted files). A first-row table's rewrite is compacted on its own
    (``ignorePreviousFiles``), which Paimon publishes as a second, COMPACT snapshot.

  A primary-key table is read file by file, unmerged, as Paimon reads it here: only the
  files of a bucket Paimon would not have to merge qualify. On a table not compacted that
  means: partial-update and aggregation tables without deletion vectors need every candidate
  bucket on one level above 0 (``CALL sys.compact``), or a single candidate file (or
  key-disjoint ones too large to share a split), as after one write into an empty bucket;
  else the statement is refused with Paimon's message. Only the touched files are read again, never merged with the rest of
  their bucket: that is exact because no other file of the bucket holds their keys
  (first-row and deletion-vector tables keep every key in one file above level 0 by
  compacting each write). A predicate with a subquery is refused: it is evaluated per file,
  outside the session's table resolution.

A refused or failed statement commits nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
from pyspark.errors import PySparkException
from pyspark.sql import types as st
from sqlglot import exp

from paimon_core.exceptions import UnsupportedFeature
from paimon_core.format.binary_row import deserialize_row
from paimon_core.format.features import Access
from paimon_core.operations.data_evolution import anchor_file, data_evolution_enabled, row_id_groups
from paimon_core.operations.split_read import NO_FILE_ITERATOR
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
    tracks_rows,
    with_row_ids,
)
from sql_ext.spark_types import to_spark_type
from sql_ext.syntax.dialect import PaimonSpark
from sql_ext.tables import static_partition
from sql_ext.views import local_dataframe

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from paimon_core.format.manifest import DataFileMeta
    from paimon_core.format.snapshot import Snapshot
    from paimon_core.operations.scan import Split
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
        SqlError: a predicate Spark rejects, a subquery where files are rewritten, or (as
            Paimon) a table whose files cannot be read unmerged.
    """
    table = target.table
    where = tree.args.get("where")
    if where is None:
        return table.new_commit().truncate_table()
    predicate: exp.Expr = where.this
    if _on_partitions_only(table, predicate):
        specs = _matching_partitions(spark, target, predicate)
        if specs is None:
            return table.new_commit().truncate_table()
        return table.new_commit().truncate_partitions(specs) if specs else None
    if table.schema.primary_keys and upsert_deletable(table):
        select = exp.select(exp.Star()).from_(tree.this.copy()).where(predicate.copy())
        rows = read(select.sql(dialect=PaimonSpark))
        from sql_ext.datapath.write import write_dataframe

        return write_dataframe(table, rows, row_kind=DELETE)
    return _delete_by_files(spark, target, predicate)


def upsert_deletable(table: FileStoreTable) -> bool:
    """Whether a primary-key table drops a key on a ``-D`` row: Paimon's
    ``PrimaryKeyTableUtils.validatePKUpsertDeletable`` (``deduplicate``; ``partial-update``
    with ``partial-update.remove-record-on-delete`` or
    ``partial-update.remove-record-on-sequence-group``; ``aggregation`` with
    ``aggregation.remove-record-on-delete``). Other tables delete by files."""
    options = table.options
    engine = options.merge_engine
    if engine == "deduplicate":
        return True
    if engine == "partial-update":
        return options.get_bool("partial-update.remove-record-on-delete", False) or bool(
            options.get_str("partial-update.remove-record-on-sequence-group")
        )
    if engine == "aggregation":
        return options.get_bool("aggregation.remove-record-on-delete", False)
    return False


def _delete_by_files(spark: SparkSession, target: Target, predicate: exp.Expr) -> int | None:
    """Paimon-Spark's ``performNonPrimaryKeyDelete``: the live files that may hold a
    matching row (``_candidates``), then with deletion vectors the matching rows marked
    deleted (``_delete_with_vectors``), else the files holding one rewritten without them
    (``_copy_on_write``). None when no row matches."""
    shown = target.shown
    if predicate.find(exp.Select, exp.Subquery) is not None:
        raise SqlError(f"DELETE FROM {shown}: subqueries in WHERE are not supported here")
    table = target.table
    _check_condition(spark, target, predicate)
    table.check_supported(Access.WRITE)  # BLOB columns, ...: before the files are scanned
    snapshot = table.latest_snapshot()
    if snapshot is None:
        return None
    splits = _candidates(target, predicate, snapshot)
    if not splits:
        return None
    if table.options.deletion_vectors_enabled:
        return _delete_with_vectors(spark, target, predicate, snapshot, splits)
    if data_evolution_enabled(table.options) and not table.is_primary_key_table:
        # Rewriting the files of a row-id range without some rows would misalign them.
        raise SqlError(
            f"DELETE FROM {shown}: a data-evolution table deletes rows with deletion vectors "
            "only ('deletion-vectors.enabled' = 'true'); this is not supported yet without"
        )
    return _copy_on_write(spark, target, predicate, snapshot, splits)


def _check_condition(spark: SparkSession, target: Target, predicate: exp.Expr) -> None:
    """Spark's analysis of ``predicate`` over the table's columns (no rows, no job): a bad
    WHERE is reported before any refusal that depends on the table's files, as Spark
    analyses a statement before Paimon-Spark runs it.

    Raises:
        SqlError: the predicate Spark rejects.
    """
    from sql_ext.spark_types import to_spark_schema

    schema = to_spark_schema(target.table.schema.fields)
    with spark_errors(f"DELETE FROM {target.shown}: invalid WHERE"):
        frame = local_dataframe(spark, [], schema).alias(target.alias)
        _ = frame.filter(spark_expr(target.requalify(predicate))).schema  # analysed only


ONLY_COMPACTED = (
    "Only compacted table can generate touched files, please use 'COMPACT' procedure first."
)
"""Paimon-Spark's refusal when a candidate split of a primary-key table must be merged."""


def _candidates(target: Target, predicate: exp.Expr, snapshot: Snapshot) -> list[Split]:
    """The live files of ``snapshot`` whose partition and stats do not rule out a row
    satisfying ``predicate``, one split each (``findCandidateDataSplits``).

    Primary-key tables are planned as Paimon's low-level ``SnapshotReader`` plans them: every
    level (level 0 too, where a batch query of a first-row or deletion-vector table skips
    it), files pruned by key stats, then whole buckets by value stats (Java's
    ``filterWholeBucketByStats``). Each of Paimon's splits of a bucket must be read file by
    file, unmerged (``paimon_core.operations.split_generator``), or Paimon refuses the
    statement.

    One refusal Paimon does not make: on a partial-update or aggregation table without
    deletion vectors, a candidate file whose key range meets that of a newer file the stats
    pruned (a bucket not compacted: ``WHERE k >= 4`` over a file of keys 1-5, then a newer
    one of keys 1-2). Paimon would rewrite the candidate's other rows after every sequence
    number of the bucket, so that its older row of key 1 outranked the newer one and the
    merged row changed.

    Raises:
        SqlError: a split that must be merged, on a table without deletion vectors
            (Paimon's ``ONLY_COMPACTED``), or a candidate sharing keys with a pruned file.
        UnsupportedFeature: the same with deletion vectors (Paimon-Spark's error for file
            metadata columns of a merged split).
    """
    from paimon_core.operations.split_generator import table_split_groups
    from sql_ext.datapath.pushdown import table_predicate

    table = target.table
    node = exp.Table(
        this=exp.to_identifier(target.name, quoted=True),
        alias=exp.TableAlias(this=exp.to_identifier(target.alias, quoted=True)),
    )
    select = exp.select(exp.Star()).from_(node, copy=False)
    select = select.where(target.requalify(predicate), copy=False)
    pushed = table_predicate(select, node, table.schema.fields)
    scan = table.new_scan()
    splits = scan.plan(snapshot, predicate=pushed, all_levels=True)
    if data_evolution_enabled(table.options) and not table.is_primary_key_table:
        return [s.with_files(g) for s in splits for g in row_id_groups(s.files)]
    if not table.is_primary_key_table:
        return [s.with_files((f,)) for s in splits for f in s.files]
    keep = scan.value_filter(pushed)
    options = table.options
    vectors = options.deletion_vectors_enabled
    refused = f"DELETE FROM {target.shown}: {ONLY_COMPACTED}"
    out: list[Split] = []
    for split in splits:
        files = split.files if keep is None else _by_value_stats(table, split.files, keep)
        for group in table_split_groups(table, files):
            if group.raw_convertible:
                continue
            if not vectors:
                raise SqlError(refused)
            if any(f.row_count for f in group.files):
                raise UnsupportedFeature(NO_FILE_ITERATOR)
        out.extend(split.with_files((f,)) for f in files)
    if vectors or options.merge_engine == "first-row" or not out:
        return out
    partitions = set(table.schema.partition_keys)
    whole = scan.plan(
        snapshot, predicate=[p for p in pushed if p[0] in partitions], all_levels=True
    )
    if _shares_keys(table, out, whole):
        raise SqlError(refused)
    return out


def _shares_keys(
    table: FileStoreTable, candidates: Sequence[Split], whole: Sequence[Split]
) -> bool:
    """Whether a candidate file's key range meets that of a file of its bucket that is no
    candidate and holds newer rows (see ``_candidates``)."""
    from paimon_core.operations.split_generator import key_order

    schema = table.schema
    order = key_order([schema.field(k).type for k in schema.trimmed_primary_keys])
    chosen: dict[tuple[bytes, int], list[DataFileMeta]] = {}
    for split in candidates:
        chosen.setdefault((split.partition, split.bucket), []).extend(split.files)
    for split in whole:
        files = chosen.get((split.partition, split.bucket))
        if not files:
            continue
        names = {f.file_name for f in files}
        pruned = [f for f in split.files if f.file_name not in names]
        for f in files:
            low, high = order(f.min_key), order(f.max_key)
            for other in pruned:
                newer = other.max_sequence_number > f.min_sequence_number
                if newer and order(other.min_key) <= high and low <= order(other.max_key):
                    return True
    return False


def _by_value_stats(
    table: FileStoreTable, files: Sequence[DataFileMeta], keep: Callable[[DataFileMeta], bool]
) -> Sequence[DataFileMeta]:
    """Java's ``KeyValueFileStoreScan.postFilterManifestEntries`` with a value filter: files
    of a bucket on one level above 0 (keys never in two files) go by their own value stats;
    other buckets go whole when no file's stats match, except partial-update and aggregation
    tables without deletion vectors, whose merged values no file's stats bound."""
    levels = {f.level for f in files}
    if len(files) <= 1 or (0 not in levels and len(levels) == 1):
        return [f for f in files if keep(f)]
    options = table.options
    if not options.deletion_vectors_enabled and options.merge_engine in (
        "partial-update",
        "aggregation",
    ):
        return files
    return files if any(keep(f) for f in files) else []


def _matches(
    spark: SparkSession,
    target: Target,
    predicate: exp.Expr,
    snapshot: Snapshot,
    splits: Sequence[Split],
    *,
    positions: bool,
) -> tuple[ReadPlan, DataFrame] | None:
    """The plan of ``splits`` (one file each) of ``snapshot`` and their rows matching
    ``predicate``, each tagged with its split's ``FILE_INDEX`` (and, with ``positions``, its
    position in the file); None when there are no splits."""
    from sql_ext.datapath.read import plan_read

    plan = replace(plan_read(target.table, snapshot, splits=splits), row_positions=positions)
    candidates = file_frames(spark, plan, range(len(plan.splits)))
    if candidates is None:
        return None
    with spark_errors(f"DELETE FROM {target.shown}: invalid WHERE"):
        condition = spark_expr(target.requalify(predicate))
        return plan, candidates.alias(target.alias).filter(condition)


def _copy_on_write(
    spark: SparkSession,
    target: Target,
    predicate: exp.Expr,
    snapshot: Snapshot,
    splits: Sequence[Split],
) -> int | None:
    """Rewrite the files of ``splits`` holding matching rows without them, and delete those
    files, in one commit; None when no row matches.

    Only the touched files are read again, each as it is stored: on a primary-key table
    ``_candidates`` made sure that no other file holds their keys. The kept rows are written
    without compaction (Paimon's ``writeOnly``); a first-row table's with
    ``ignorePreviousFiles`` instead: their sequence numbers start again at 0 and they are
    compacted only among themselves (up to the top level, where a batch read sees them),
    never against the files they come from, which first-row would keep in their place and
    which this commit deletes."""
    from sql_ext.datapath.read import plan_dataframe
    from sql_ext.datapath.write import write_dataframe

    table = target.table
    matched = _matches(spark, target, predicate, snapshot, splits, positions=False)
    if matched is None:
        return None
    plan, hits = matched
    plan = with_row_ids(plan)  # a row-tracking table's kept rows keep their ids
    with spark_errors(f"DELETE FROM {target.shown}: invalid WHERE"):
        touched = file_indexes(hits)
    if not touched:
        return None
    rewritten = tuple(plan.splits[i] for i in touched)
    condition = target.requalify(predicate)
    keep = exp.Not(this=exp.NullSafeEQ(this=exp.Paren(this=condition), expression=exp.true()))
    kept = (
        plan_dataframe(spark, replace(plan, splits=rewritten))
        .alias(target.alias)
        .filter(spark_expr(keep))
    )
    first_row = table.is_primary_key_table and table.options.merge_engine == "first-row"
    return write_dataframe(
        table,
        kept,
        deleted=deleted_files(table, rewritten),
        write_only=table.is_primary_key_table and not first_row,
        ignore_previous_files=first_row,
        row_tracking=tracks_rows(table),
    )


def _delete_with_vectors(
    spark: SparkSession,
    target: Target,
    predicate: exp.Expr,
    snapshot: Snapshot,
    splits: Sequence[Split],
) -> int | None:
    """Mark the matching rows of ``splits`` deleted in deletion vectors, one commit, no
    data file rewritten; None when no row matches.

    The executors read each file with its rows' positions, evaluate the predicate and build
    each file's vector (Paimon-Spark's ``collectDeletionVectors``); only the vectors (a
    64-bit roaring bitmap each) come back to the driver, which merges them into the vectors
    ``snapshot`` has and commits the buckets' new index files (``persistDeletionVectors``)."""
    from paimon_core.format.roaring import deserialize64
    from paimon_core.operations.deletion_vectors import delete_positions
    from sql_ext.datapath.read import ROW_POSITION_COLUMN

    matched = _matches(spark, target, predicate, snapshot, splits, positions=True)
    if matched is None:
        return None
    plan, hits = matched
    with spark_errors(f"DELETE FROM {target.shown}: invalid WHERE"):
        found = (
            hits.select(FILE_INDEX, ROW_POSITION_COLUMN)
            .groupBy(FILE_INDEX)
            .applyInArrow(_file_vector, _VECTOR_SCHEMA)
            .collect()
        )
    deletions: dict[tuple[bytes, int], dict[str, Any]] = {}
    for index, bitmap in found:
        split = plan.splits[index]
        # A row-id range's positions are its anchor file's (data evolution).
        meta = anchor_file(split.files) if len(split.files) > 1 else split.files[0]
        positions, _ = deserialize64(bitmap)
        deletions.setdefault((split.partition, split.bucket), {})[meta.file_name] = positions
    if not deletions:
        return None
    return delete_positions(target.table, deletions, snapshot)


_VECTOR_SCHEMA = f"{FILE_INDEX} int, vector binary"


def _file_vector(rows: pa.Table) -> pa.Table:
    """One file's matching positions (a group of ``FILE_INDEX``) as a serialized 64-bit
    roaring bitmap (``applyInArrow`` on an executor)."""
    from paimon_core.format.roaring import serialize64

    index = rows.column(0)[0].as_py()
    positions = np.unique(rows.column(1).to_numpy())
    return pa.table({FILE_INDEX: pa.array([index], pa.int32()), "vector": [serialize64(positions)]})


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

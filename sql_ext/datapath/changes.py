"""Executor reads beyond a table's current rows: row kinds, metadata columns, changes.

A ``ReadPlan`` (``sql_ext.datapath.read``) whose ``view`` is ``audit_log`` or ``binlog``, which
asks for metadata columns, or whose splits are ``IncrementalSplit``\\ s is read here, with the
core's ``SplitRead``, in the schema Paimon-Spark gives it:

* ``$audit_log``: ``rowkind`` (``+I``, ``-U``, ``+U``, ``-D``) then the columns; a key's last
  row is kept even when it retracts (Paimon's ``AuditLogTable``, ``forceKeepDelete``);
* ``$binlog``: the same rows with every column wrapped in a one-element array (a batch read
  never pairs ``-U``/``+U``: ``BinlogTable`` does that for streaming splits only);
* with ``table-read.sequence-number.enabled`` (primary-key tables) both put
  ``_SEQUENCE_NUMBER`` after ``rowkind``;
* the metadata columns ``__paimon_file_path``, ``__paimon_row_index`` (where files are read
  as they are), ``__paimon_partition`` (a struct of the partition columns) and
  ``__paimon_bucket`` follow the columns (Paimon-Spark's ``PaimonMetadataColumn``), and on
  row-tracking tables ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` (the core's ``TableRead``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import pyarrow as pa
from pyspark.sql import types as st

from paimon_core.exceptions import InvalidArgument, UnsupportedFeature
from paimon_core.format.types import to_arrow_type
from paimon_core.operations.data_evolution import data_evolution_enabled, row_id_groups
from paimon_core.operations.read import SEQUENCE_NUMBER, VALUE_KIND
from paimon_core.operations.split_read import (
    FILE_PATH,
    NO_FILE_ITERATOR,
    ROW_INDEX,
    ROW_KINDS,
    IncrementalSplit,
    SplitRead,
    raw_convertible,
)
from sql_ext.datapath.arrow import spark_arrow_schema, to_spark_arrow
from sql_ext.spark_types import to_spark_schema, to_spark_type

if TYPE_CHECKING:
    from paimon_core.format.types import DataField
    from paimon_core.operations.scan import Split
    from paimon_core.table import FileStoreTable


class ReadPlan(Protocol):
    """What this module reads of a ``sql_ext.datapath.read.ReadPlan`` (which it does not
    import: that module dispatches its change views here)."""

    @property
    def table(self) -> FileStoreTable: ...

    @property
    def columns(self) -> tuple[str, ...]: ...

    @property
    def splits(self) -> tuple[Split | IncrementalSplit, ...]: ...

    @property
    def view(self) -> str: ...

    @property
    def meta(self) -> tuple[str, ...]: ...

    @property
    def sequence_number(self) -> bool: ...

    @property
    def fields(self) -> list[DataField]: ...

    @property
    def spark_schema(self) -> st.StructType: ...


__all__ = [
    "AUDIT_LOG",
    "BINLOG",
    "DATA",
    "METADATA_COLUMNS",
    "READ_OPTIMIZED",
    "ROW_KIND",
    "ROW_TRACKING_METADATA",
    "SEQUENCE_NUMBER_OPTION",
    "check_plan",
    "plan_schema",
    "read_split",
    "sequence_number_enabled",
]

DATA, AUDIT_LOG, BINLOG, READ_OPTIMIZED = "data", "audit_log", "binlog", "ro"
ROW_KIND = "rowkind"
SEQUENCE_NUMBER_OPTION = "table-read.sequence-number.enabled"
FILE_PATH_COLUMN = "__paimon_file_path"
ROW_INDEX_COLUMN = "__paimon_row_index"
PARTITION_COLUMN = "__paimon_partition"
BUCKET_COLUMN = "__paimon_bucket"
ROW_ID_COLUMN = "_ROW_ID"
SEQUENCE_NUMBER_COLUMN = "_SEQUENCE_NUMBER"
ROW_TRACKING_METADATA = (ROW_ID_COLUMN, SEQUENCE_NUMBER_COLUMN)
"""The metadata columns of a row-tracking table (Paimon-Spark's, before the others)."""
METADATA_COLUMNS = (
    *ROW_TRACKING_METADATA,
    FILE_PATH_COLUMN,
    ROW_INDEX_COLUMN,
    PARTITION_COLUMN,
    BUCKET_COLUMN,
)
"""Paimon-Spark's metadata columns of a Paimon table, in its order (the row-tracking ones
on row-tracking tables only)."""
_KINDS = pa.array(ROW_KINDS, pa.string())


def sequence_number_enabled(table: FileStoreTable) -> bool:
    """``table-read.sequence-number.enabled`` of the table (not settable per query, as in
    Paimon: ``AuditLogTable.copy`` refuses it as a hint).

    Raises:
        InvalidArgument: the option is given as a dynamic option.
    """
    hinted = table.dynamic_options.get(SEQUENCE_NUMBER_OPTION)
    if hinted is not None and hinted.strip().lower() == "true":
        raise InvalidArgument(f"{SEQUENCE_NUMBER_OPTION} is not supported by hint.")
    text = table.schema.options.get(SEQUENCE_NUMBER_OPTION, "false")
    return text.strip().lower() == "true" and table.is_primary_key_table


def check_plan(plan: ReadPlan) -> None:
    """Refuse on the driver what an executor would fail on: file metadata columns of
    primary-key splits that are merged, and of row-id ranges of a data-evolution table
    merged from several files (Paimon-Spark's error, for splits with rows).

    Raises:
        UnsupportedFeature: with Paimon-Spark's message.
    """
    table = plan.table
    if not any(m in (FILE_PATH_COLUMN, ROW_INDEX_COLUMN) for m in plan.meta):
        return
    if not table.is_primary_key_table:
        if data_evolution_enabled(table.options) and any(
            len(group) > 1 for s in plan.splits for group in row_id_groups(s.files)
        ):
            raise UnsupportedFeature(NO_FILE_ITERATOR)
        return
    for split in plan.splits:
        if not split.row_count:
            continue
        if isinstance(split, IncrementalSplit):
            merged = not split.streaming
        else:
            merged = plan.view in (AUDIT_LOG, BINLOG) or not raw_convertible(split)
        if merged:
            raise UnsupportedFeature(NO_FILE_ITERATOR)


def plan_schema(plan: ReadPlan) -> st.StructType:
    """The Spark schema of a plan's rows (see the module docstring)."""
    data = to_spark_schema(plan.fields)
    out: list[st.StructField] = []
    if plan.view in (AUDIT_LOG, BINLOG):
        out.append(st.StructField(ROW_KIND, st.StringType(), False))
        if plan.sequence_number:
            out.append(st.StructField(SEQUENCE_NUMBER, st.LongType(), False))
    for f in data.fields:
        if plan.view == BINLOG:
            out.append(st.StructField(f.name, st.ArrayType(f.dataType, True), True, f.metadata))
        else:
            out.append(f)
    out += [st.StructField(name, _meta_type(plan.table, name), True) for name in plan.meta]
    return st.StructType(out)


def _meta_type(table: FileStoreTable, name: str) -> st.DataType:
    if name == FILE_PATH_COLUMN:
        return st.StringType()
    if name in (ROW_INDEX_COLUMN, *ROW_TRACKING_METADATA):
        return st.LongType()
    if name == BUCKET_COLUMN:
        return st.IntegerType()
    fields = table.schema.partition_fields
    return st.StructType([st.StructField(f.name, to_spark_type(f.type), True) for f in fields])


def read_split(plan: ReadPlan, split: Split | IncrementalSplit) -> Iterator[pa.RecordBatch]:
    """The rows of one split of ``plan`` as Arrow batches in Spark's types."""

    table = plan.table
    schema = plan.spark_schema
    target = spark_arrow_schema(schema)
    file_meta = any(m in (FILE_PATH_COLUMN, ROW_INDEX_COLUMN) for m in plan.meta)
    reader = SplitRead(
        table, keep_delete=plan.view in (AUDIT_LOG, BINLOG), sequence_number=plan.sequence_number
    )
    columns = list(plan.columns) or [narrowest_column(table)]
    columns += [m for m in plan.meta if m in ROW_TRACKING_METADATA]
    try:
        data = reader.read(split, columns, file_meta=file_meta)
    except UnsupportedFeature:
        if split.row_count:  # Paimon-Spark fails only when there are rows
            raise
        return
    if data.num_rows == 0:
        return
    fields = plan.fields
    n = data.num_rows
    wanted = [target.field(f.name) for f in fields]
    if plan.view == BINLOG:
        wanted = [pa.field(w.name, w.type.value_type, True) for w in wanted]
    converted = to_spark_arrow(
        pa.RecordBatch.from_arrays(
            [data.column(f.name).combine_chunks() for f in fields], names=[f.name for f in fields]
        ),
        fields,
        pa.schema(wanted),
    )
    arrays: list[Any] = []
    for field in target:
        name = field.name
        if name == ROW_KIND and plan.view in (AUDIT_LOG, BINLOG):
            arrays.append(_KINDS.take(data.column(VALUE_KIND).combine_chunks()))
        elif name == SEQUENCE_NUMBER and plan.sequence_number:
            arrays.append(data.column(SEQUENCE_NUMBER).combine_chunks())
        elif name in ROW_TRACKING_METADATA:
            arrays.append(data.column(name).combine_chunks())
        elif name == FILE_PATH_COLUMN:
            arrays.append(data.column(FILE_PATH).combine_chunks())
        elif name == ROW_INDEX_COLUMN:
            arrays.append(data.column(ROW_INDEX).combine_chunks())
        elif name == BUCKET_COLUMN:
            arrays.append(pa.repeat(pa.scalar(split.bucket, pa.int32()), n))
        elif name == PARTITION_COLUMN:
            arrays.append(_partition_struct(table, split.partition_values, field.type, n))
        else:
            column = converted.column(converted.schema.get_field_index(name))
            if plan.view == BINLOG:
                column = _singletons(column, field.type)
            arrays.append(column)
    yield pa.RecordBatch.from_arrays(arrays, schema=target)


def _singletons(column: pa.Array, target: pa.DataType) -> pa.Array:
    """Each value as a one-element array (``BinlogRead.convertToArray`` without a pair)."""
    offsets = pa.array(range(len(column) + 1), pa.int32())
    return pa.ListArray.from_arrays(offsets, column, type=target)


def _partition_struct(
    table: FileStoreTable, values: Sequence[Any], target: pa.DataType, n: int
) -> pa.Array:
    """The split's partition (one value for every row) as Spark's struct."""

    fields = table.schema.partition_fields
    if not fields:
        return pa.array([{}] * n, type=target)
    row = pa.RecordBatch.from_arrays(
        [pa.array([v], to_arrow_type(f.type)) for f, v in zip(fields, values)],
        names=[f.name for f in fields],
    )
    spark_row = to_spark_arrow(row, fields, pa.schema(list(target)))
    children = [pa.repeat(spark_row.column(i)[0], n) for i in range(len(fields))]
    return pa.StructArray.from_arrays(children, fields=list(target))


def narrowest_column(table: FileStoreTable) -> str:
    """A cheap column to count rows with: the first fixed-width one, else the first."""
    fixed = {"BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DATE"}
    for f in table.schema.fields:
        if f.type.root in fixed:
            return f.name
    return table.schema.fields[0].name

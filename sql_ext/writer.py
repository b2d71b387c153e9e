"""Writing a Spark DataFrame into a Paimon table: the one seam between Spark and the writer.

Today the rows are collected to the driver (``toArrow``) and written and committed there in
one snapshot. A distributed writer only has to replace ``write_dataframe``: executors write
files and return commit messages, the driver commits them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.errors import PySparkException
from pyspark.sql import functions as F

from paimon_core.types import DataField, to_arrow_type
from sql_ext.dialect import quote_identifier
from sql_ext.errors import SqlError, first_line
from sql_ext.spark_types import to_spark_type

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from paimon_core.table import FileStoreTable

Overwrite = bool | Mapping[str, Any]
"""False: append. True: replace the partitions the data falls in (the whole table when it
is not partitioned). A mapping: replace that static partition spec (``{}``: the whole table)."""


def conform(table: FileStoreTable, df: DataFrame) -> DataFrame:
    """``df`` (one column per table column, by name) cast in Spark to the table's types.

    Spark's casts apply (with ANSI mode, a value that does not fit is an error).
    """
    names = df.columns
    missing = [f.name for f in table.schema.fields if f.name not in names]
    if missing:
        raise SqlError(f"Data for {table.identifier} lacks columns {missing}")
    return df.select(
        *[
            F.col(quote_identifier(f.name)).cast(to_spark_type(f.type)).alias(f.name)
            for f in table.schema.fields
        ]
    )


def write_dataframe(
    table: FileStoreTable, df: DataFrame, overwrite: Overwrite = False
) -> int | None:
    """Write ``df`` (the table's columns, by name) in one commit; returns the snapshot id.

    Nothing is committed when anything fails; written files are removed again.

    Raises:
        SqlError: a value Spark cannot cast to its column type (ANSI mode), or longer than
            its CHAR/VARCHAR column.
        PaimonError: what the core rejects (NULL in a NOT NULL column, ...).
    """
    try:
        collected = conform(table, df).toArrow()
    except PySparkException as e:
        raise SqlError(f"Cannot write to {table.identifier}: {first_line(e)}") from None
    data = _to_table_arrow(table, collected)
    write = table.new_write(overwrite=overwrite is not False)
    try:
        write.write_arrow(data)
        messages = write.prepare_commit()
    finally:
        write.close()
    commit = table.new_commit()
    try:
        if overwrite is False:
            return commit.commit(messages)
        if overwrite is True:
            return commit.overwrite(messages, dynamic=bool(table.schema.partition_keys))
        return commit.overwrite(messages, partition=dict(overwrite))
    except BaseException:
        commit.abort(messages)
        raise


def _to_table_arrow(table: FileStoreTable, data: pa.Table) -> pa.Table:
    """Spark's Arrow output in the table's Arrow types, where a plain cast would refuse."""
    columns = []
    for f in table.schema.fields:
        column = data.column(f.name)
        columns.append(_fit(f, column))
    return pa.table(columns, names=[f.name for f in table.schema.fields])


def _fit(f: DataField, column: pa.ChunkedArray) -> pa.ChunkedArray:
    root = f.type.root
    if root in ("CHAR", "VARCHAR"):
        length = f.type.length or 1
        if len(column) and (pc.max(pc.utf8_length(column)).as_py() or 0) > length:
            raise SqlError(f"Value of column '{f.name}' exceeds {f.type} length limitation")
        if root == "CHAR":
            column = pc.utf8_rpad(column, width=length)
    elif root in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        # Spark has microseconds; a TIMESTAMP(3) column keeps milliseconds, as Paimon writes.
        target = to_arrow_type(f.type)
        if column.type != target:
            column = pc.cast(column, target, safe=False)
    elif root == "TIME":
        millis = column.cast(pa.int32()).cast(pa.time32("ms"))
        column = millis.cast(to_arrow_type(f.type))
    return column

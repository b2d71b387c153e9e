"""Arrow batches in Spark's types: what the ``paimon`` source's readers yield."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

    from paimon_core.format.types import DataField

__all__ = ["spark_arrow_schema", "to_spark_arrow"]


def spark_arrow_schema(schema: StructType) -> pa.Schema:
    """The Arrow schema Spark reads a batch of ``schema`` from."""
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(schema, timezone="UTC")


def to_spark_arrow(batch: pa.RecordBatch, fields: Sequence[DataField], target: pa.Schema) -> Any:
    """``batch`` (Paimon's Arrow types) in Spark's: TIME as INT milliseconds of the day,
    timestamps in microseconds (nanoseconds cut off, as Paimon-Spark's ``toMicros``),
    MULTISET counts as INT, everything else cast as needed."""
    arrays = []
    for i, f in enumerate(fields):
        column = batch.column(i)
        want = target.field(i).type
        if f.type.root == "TIME":
            column = _time_millis(column)
        if pa.types.is_timestamp(column.type) and column.type.unit == "ns":
            column = _floor_micros(column)
        if column.type != want:
            column = column.cast(want)
        arrays.append(column)
    arrays.extend(batch.column(i) for i in range(len(fields), len(target)))  # row positions
    return pa.RecordBatch.from_arrays(arrays, schema=target)


def _floor_micros(column: pa.Array) -> pa.Array:
    """Nanosecond timestamps as microseconds, rounded down (before 1970 too), as Paimon's
    ``Timestamp.toMicros``."""
    nanos = column.cast(pa.int64())
    thousand = pa.scalar(1000, pa.int64())
    micros = pc.divide(nanos, thousand)  # toward zero
    below = pc.less(pc.subtract(nanos, pc.multiply(micros, thousand)), 0)
    micros = pc.subtract(micros, pc.cast(below, pa.int64()))
    return micros.cast(pa.timestamp("us", column.type.tz))


def _time_millis(column: pa.Array) -> pa.Array:
    if pa.types.is_time64(column.type):
        micros = column.cast(pa.int64())
        return pc.divide(micros, pa.scalar(1000, pa.int64())).cast(pa.int32())
    return column.cast(pa.int32())

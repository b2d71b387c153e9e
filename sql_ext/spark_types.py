"""Paimon types as Spark sees them, both ways, as Paimon's ``SparkTypeUtils`` maps them.

Spark ``TIMESTAMP`` is Paimon ``TIMESTAMP_LTZ(6)`` and ``TIMESTAMP_NTZ`` is ``TIMESTAMP(6)``;
``STRING`` is ``VARCHAR(MAX)``, ``BINARY`` is ``BYTES``; ``TIME`` reads as an INT of
milliseconds. CHAR/VARCHAR read as STRING: DataFrames do not carry lengths, which the writer
checks instead.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import types as st

from paimon_core.format import types as pt
from paimon_core.format.types import DataField, DataType
from sql_ext.errors import SqlError

_TO_SPARK: dict[str, st.DataType] = {
    "BOOLEAN": st.BooleanType(),
    "TINYINT": st.ByteType(),
    "SMALLINT": st.ShortType(),
    "INT": st.IntegerType(),
    "BIGINT": st.LongType(),
    "FLOAT": st.FloatType(),
    "DOUBLE": st.DoubleType(),
    "CHAR": st.StringType(),
    "VARCHAR": st.StringType(),
    "BINARY": st.BinaryType(),
    "VARBINARY": st.BinaryType(),
    "BLOB": st.BinaryType(),
    "DATE": st.DateType(),
    "TIME": st.IntegerType(),
    "TIMESTAMP": st.TimestampNTZType(),
    "TIMESTAMP_LTZ": st.TimestampType(),
    "VARIANT": st.VariantType(),
}


def to_spark_type(t: DataType) -> st.DataType:
    """The Spark type a Paimon column reads as.

    Raises:
        SqlError: Spark has no equivalent (VARIANT).
    """
    simple = _TO_SPARK.get(t.root)
    if simple is not None:
        return simple
    if t.root == "DECIMAL":
        return st.DecimalType(t.precision or 10, t.scale or 0)
    if t.root in ("ARRAY", "VECTOR"):
        assert t.element is not None
        return st.ArrayType(to_spark_type(t.element), t.element.nullable)
    if t.root == "MULTISET":
        assert t.element is not None
        return st.MapType(to_spark_type(t.element), st.IntegerType(), False)
    if t.root == "MAP":
        assert t.key is not None and t.value is not None
        return st.MapType(to_spark_type(t.key), to_spark_type(t.value), t.value.nullable)
    if t.root == "ROW":
        return to_spark_schema(t.fields or ())
    raise SqlError(f"Paimon type {t} has no Spark equivalent")


def to_spark_field(f: DataField) -> st.StructField:
    metadata = {"comment": f.description} if f.description else None
    return st.StructField(f.name, to_spark_type(f.type), f.type.nullable, metadata)


def to_spark_schema(fields: Sequence[DataField]) -> st.StructType:
    """The Spark schema of a row of Paimon fields (nullability and comments kept)."""
    return st.StructType([to_spark_field(f) for f in fields])


_FROM_SPARK: dict[type[st.DataType], DataType] = {
    st.BooleanType: pt.BOOLEAN(),
    st.ByteType: pt.TINYINT(),
    st.ShortType: pt.SMALLINT(),
    st.IntegerType: pt.INT(),
    st.LongType: pt.BIGINT(),
    st.FloatType: pt.FLOAT(),
    st.DoubleType: pt.DOUBLE(),
    st.StringType: pt.STRING(),
    st.BinaryType: pt.BYTES(),
    st.DateType: pt.DATE(),
    st.TimestampType: pt.TIMESTAMP_LTZ(6),
    st.TimestampNTZType: pt.TIMESTAMP(6),
    st.VariantType: pt.VARIANT(),
}


def from_spark_type(t: st.DataType, nullable: bool = True) -> DataType:
    """The Paimon type of a Spark column (nested field ids are placeholders).

    Raises:
        SqlError: Paimon has no equivalent (intervals, VOID, VARIANT, TIME, user types).
    """
    simple = _FROM_SPARK.get(type(t))
    if simple is not None:
        return simple.copy(nullable)
    if isinstance(t, st.CharType):
        return pt.CHAR(t.length, nullable)
    if isinstance(t, st.VarcharType):
        return pt.VARCHAR(t.length, nullable)
    if isinstance(t, st.DecimalType):
        return pt.DECIMAL(t.precision, t.scale, nullable)
    if isinstance(t, st.ArrayType):
        return pt.ARRAY(from_spark_type(t.elementType, t.containsNull), nullable)
    if isinstance(t, st.MapType):
        key = from_spark_type(t.keyType, False)
        return pt.MAP(key, from_spark_type(t.valueType, t.valueContainsNull), nullable)
    if isinstance(t, st.StructType):
        return pt.ROW(from_spark_schema(t), nullable)
    raise SqlError(f"Spark type {t.simpleString().upper()} is not supported by Paimon tables")


def from_spark_schema(schema: st.StructType) -> list[DataField]:
    """Paimon fields (ids are assigned when the table schema is built) of a Spark schema."""
    return [
        DataField(
            -1,
            f.name,
            from_spark_type(f.dataType, f.nullable),
            (f.metadata or {}).get("comment"),
        )
        for f in schema.fields
    ]


def arrow_for_spark(data: pa.Table, fields: Sequence[DataField]) -> pa.Table:
    """Arrow data of ``fields`` in the shape ``createDataFrame`` casts from.

    Only TIME needs help: Spark reads it as INT milliseconds of the day, and pyarrow casts a
    microsecond ``time64`` to its raw micros.
    """
    for i, f in enumerate(fields):
        if f.type.root == "TIME" and pa.types.is_time64(data.schema.field(i).type):
            micros = data.column(i).cast(pa.int64())
            millis = pc.divide(micros, pa.scalar(1000, pa.int64())).cast(pa.int32())
            data = data.set_column(i, pa.field(f.name, pa.int32(), f.type.nullable), millis)
    return data

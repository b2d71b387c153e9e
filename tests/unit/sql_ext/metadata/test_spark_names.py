"""Spark's spellings of Paimon column types, checked against pyspark's own for the same type."""

from __future__ import annotations

from typing import Any

from pyspark.sql import types as st

from paimon_core.format.types import DataField, parse_data_type
from sql_ext.metadata.spark_names import (
    column_ddl,
    quote_if_needed,
    simple_string,
    sql_type,
    tree_string,
)
from sql_ext.spark_types import to_spark_schema, to_spark_type

TYPES = [
    "BOOLEAN",
    "TINYINT",
    "SMALLINT",
    "INT",
    "BIGINT NOT NULL",
    "FLOAT",
    "DOUBLE",
    "STRING",
    "BYTES",
    "DATE",
    "TIMESTAMP(6)",
    "TIMESTAMP(3) WITH LOCAL TIME ZONE",
    "DECIMAL(12, 3)",
    "ARRAY<INT NOT NULL>",
    "MAP<STRING, ARRAY<DOUBLE>>",
    "ROW<a INT, `b c` STRING NOT NULL>",
    "ARRAY<ROW<x MAP<INT, STRING>>>",
]


def test_spellings_match_pyspark(spark: Any) -> None:
    """`simpleString` as pyspark prints it; the `sql` form parses back (Spark's DDL parser)
    to the same type."""
    for text in TYPES:
        t = parse_data_type(text)
        expected = to_spark_type(t).simpleString()
        assert simple_string(t) == expected, text
        parsed = st.StructType.fromDDL(f"x {sql_type(t)}")
        assert parsed.fields[0].dataType.simpleString() == expected, text


def test_tree_string_matches_pyspark() -> None:
    fields = [DataField(i, f"c{i}", parse_data_type(t)) for i, t in enumerate(TYPES)]
    assert tree_string(fields) == to_spark_schema(fields).treeString()


def test_column_ddl_keeps_char_varchar_and_quotes_names() -> None:
    assert column_ddl(DataField(0, "b", parse_data_type("VARCHAR(10)"))) == "b VARCHAR(10)"
    assert column_ddl(DataField(0, "c", parse_data_type("CHAR(10) NOT NULL"))) == (
        "c CHAR(10) NOT NULL"
    )
    field = DataField(0, "my col", parse_data_type("STRING"), "it's")
    assert column_ddl(field) == "`my col` STRING COMMENT 'it\\'s'"
    assert quote_if_needed("123") == "`123`" and quote_if_needed("a_1") == "a_1"


def test_column_ddl_has_the_default_as_struct_field_to_ddl() -> None:
    """Spark's `StructField.toDDL`: NOT NULL, then DEFAULT (`CURRENT_DEFAULT`), then COMMENT."""
    field = DataField(0, "s", parse_data_type("STRING NOT NULL"), "doc", "'x\\'y'")
    assert column_ddl(field) == "s STRING NOT NULL DEFAULT 'x\\'y' COMMENT 'doc'"
    assert column_ddl(DataField(1, "n", parse_data_type("INT"), None, "5")) == "n INT DEFAULT 5"

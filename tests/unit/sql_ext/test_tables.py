"""CREATE TABLE / INSERT trees read into specs, and the Spark <-> Paimon type mapping."""

from __future__ import annotations

import pytest
from pyspark.sql import types as st
from sqlglot import exp

from paimon_core.format import types as pt
from paimon_core.format.types import DataField
from sql_ext.errors import SqlError
from sql_ext.insert import insert_spec
from sql_ext.spark_types import from_spark_type, to_spark_schema, to_spark_type
from sql_ext.syntax.parse import parse_statement
from sql_ext.tables import table_spec


def _create(sql: str) -> exp.Create:
    tree = parse_statement(sql).tree
    assert isinstance(tree, exp.Create)
    return tree


def test_primary_key_not_enforced_parses_with_the_dialect() -> None:
    spec = table_spec(
        _create(
            "CREATE TABLE IF NOT EXISTS paimon.db.t (k INT NOT NULL COMMENT 'the key', "
            "v STRING, dt STRING, PRIMARY KEY (k, dt) NOT ENFORCED) USING paimon "
            "PARTITIONED BY (dt) TBLPROPERTIES ('bucket' = '2', merge.x = true) COMMENT 'c'"
        )
    )
    assert (spec.target.catalog, spec.target.db, spec.target.name) == ("paimon", "db", "t")
    assert spec.primary_keys == ("k", "dt")
    assert spec.partition_keys == ("dt",)
    assert spec.options == {"bucket": "2", "merge.x": "true"}
    assert spec.comment == "c" and spec.if_not_exists and spec.provider == "paimon"
    assert spec.columns_ddl == "k INT NOT NULL COMMENT 'the key', v STRING, dt STRING"


def test_inline_primary_key_and_ctas() -> None:
    assert table_spec(_create("CREATE TABLE t (a INT PRIMARY KEY, b INT)")).primary_keys == ("a",)
    ctas = table_spec(
        _create("CREATE TABLE t TBLPROPERTIES ('primary-key' = 'a') AS SELECT 1 AS a")
    )
    assert ctas.columns_ddl is None and isinstance(ctas.query, exp.Select)
    assert ctas.options == {"primary-key": "a"}


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("CREATE OR REPLACE TABLE IF NOT EXISTS t (a INT)", "IF NOT EXISTS"),
        ("REPLACE TABLE t LIKE s", "LIKE"),
        ("CREATE TABLE t (a, b) AS SELECT 1, 2", "AS SELECT"),
        ("CREATE TABLE t LIKE s (a INT)", "LIKE"),
        ("CREATE TABLE t (a INT, b INT GENERATED ALWAYS AS (a + 1))", "GENERATED"),
        ("CREATE TABLE t (a INT) PARTITIONED BY (b STRING, a)", "PARTITIONED BY"),
        ("CREATE TABLE t PARTITIONED BY (b STRING) AS SELECT 1 AS b", "PARTITIONED BY"),
        ("CREATE TABLE t (a INT) PARTITIONED BY (years(a))", "identity"),
        ("CREATE TABLE t (a INT) AS SELECT 1 AS a", "AS SELECT"),
    ],
)
def test_unsupported_create_clauses(sql: str, message: str) -> None:
    with pytest.raises(SqlError, match=message):
        table_spec(_create(sql))


def test_typed_partition_columns_are_appended_as_spark_does() -> None:
    spec = table_spec(_create("CREATE TABLE t (id INT) PARTITIONED BY (p1 INT, p2 STRING)"))
    assert spec.columns_ddl == "id INT, p1 INT, p2 STRING"
    assert spec.partition_keys == ("p1", "p2")


def test_replace_forms_are_read() -> None:
    replace = table_spec(_create("REPLACE TABLE db.t (a INT) TBLPROPERTIES ('bucket' = '2')"))
    assert replace.replace and replace.replace_only and replace.columns_ddl == "a INT"
    create_or_replace = table_spec(_create("CREATE OR REPLACE TABLE t AS SELECT 1 AS a"))
    assert create_or_replace.replace and not create_or_replace.replace_only
    assert create_or_replace.query is not None


def test_like_and_location_are_kept_for_the_session() -> None:
    like = table_spec(_create("CREATE TABLE t LIKE db.s TBLPROPERTIES ('bucket' = '2')"))
    assert like.like is not None and like.like.sql() == "db.s"
    assert (like.columns_ddl, like.options) == (None, {"bucket": "2"})
    located = table_spec(_create("CREATE TABLE t (a INT) LOCATION '/x'"))
    assert located.location == "/x" and located.like is None


def test_insert_spec_keeps_ctes_partition_and_columns() -> None:
    tree = parse_statement(
        "WITH s AS (SELECT 1 AS a) INSERT OVERWRITE TABLE db.t PARTITION (dt = '1', h) (a) "
        "SELECT a FROM s"
    ).tree
    assert isinstance(tree, exp.Insert)
    spec = insert_spec(tree)
    assert spec.overwrite and spec.columns == ("a",) and not spec.by_name
    assert list(spec.static) == ["dt"] and spec.static["dt"].this == "1"
    assert spec.source.sql(dialect="spark") == "WITH s AS (SELECT 1 AS a) SELECT a FROM s"
    replace = parse_statement("INSERT INTO t REPLACE WHERE a = 1 SELECT 1").tree
    assert isinstance(replace, exp.Insert)
    with pytest.raises(SqlError, match="REPLACE WHERE"):
        insert_spec(replace)


def test_spark_to_paimon_types_as_paimon_spark() -> None:
    cases = [
        (st.StringType(), "STRING"),
        (st.VarcharType(5), "VARCHAR(5)"),
        (st.CharType(3), "CHAR(3)"),
        (st.BinaryType(), "BYTES"),
        (st.ByteType(), "TINYINT"),
        (st.DecimalType(12, 3), "DECIMAL(12, 3)"),
        (st.TimestampType(), "TIMESTAMP(6) WITH LOCAL TIME ZONE"),
        (st.TimestampNTZType(), "TIMESTAMP(6)"),
        (st.ArrayType(st.IntegerType(), False), "ARRAY<INT NOT NULL>"),
        (st.MapType(st.StringType(), st.LongType()), "MAP<STRING NOT NULL, BIGINT>"),
    ]
    for spark_type, paimon in cases:
        assert str(from_spark_type(spark_type)) == paimon
    row = from_spark_type(st.StructType([st.StructField("x", st.DateType(), False)]))
    assert row.root == "ROW" and str(row.fields[0].type) == "DATE NOT NULL"
    with pytest.raises(SqlError, match="INTERVAL"):
        from_spark_type(st.DayTimeIntervalType())


def test_paimon_to_spark_types() -> None:
    fields = [
        DataField(0, "a", pt.INT(False), "key"),
        DataField(1, "b", pt.TIMESTAMP(3)),
        DataField(2, "c", pt.TIMESTAMP_LTZ(6)),
        DataField(3, "d", pt.VARCHAR(10)),
        DataField(4, "e", pt.MULTISET(pt.STRING(False))),
        DataField(5, "f", pt.TIME(3)),
    ]
    schema = to_spark_schema(fields)
    assert schema.simpleString() == (
        "struct<a:int,b:timestamp_ntz,c:timestamp,d:string,e:map<string,int>,f:int>"
    )
    assert not schema["a"].nullable and schema["a"].metadata == {"comment": "key"}
    assert to_spark_type(pt.DECIMAL(38, 10)) == st.DecimalType(38, 10)
    assert to_spark_type(pt.VARIANT()) == st.VariantType()
    assert from_spark_type(st.VariantType(), False) == pt.VARIANT(False)

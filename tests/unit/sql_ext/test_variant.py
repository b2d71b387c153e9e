"""VARIANT columns through Spark SQL: Spark 4's VariantType both ways (``parse_json`` in,
``variant_get``/``to_json``/``v:path`` out), primary-key merges and compaction, partitions and
filters, shredded files, and the refusals (keys, ORC)."""

from __future__ import annotations

import glob
from typing import Any

import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession
from pyspark.sql.types import VariantVal

from paimon_core.exceptions import PaimonError
from paimon_core.format import variant as pv
from sql_ext.errors import SqlError
from sql_ext.session import PaimonSession
from tests.unit.paimon_core.helpers import shredding_schema

pytestmark = pytest.mark.spark

SHREDDING = shredding_schema("v", [("a", "INT"), ("b", "STRING")])


@pytest.fixture
def session(spark: SparkSession, warehouse: str) -> PaimonSession:
    session = PaimonSession(spark, warehouse=warehouse)
    session.sql("CREATE DATABASE db")
    session.sql("USE db")
    return session


def rows(session: PaimonSession, query: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in session.sql(query).collect()]


def test_insert_parse_json_and_query_variant_functions(session: PaimonSession) -> None:
    session.sql("CREATE TABLE t (id INT, v VARIANT, dt STRING) PARTITIONED BY (dt)")
    session.sql(
        """INSERT INTO t VALUES (1, parse_json('{"a": 1, "b": "x"}'), 'd1'),
        (2, parse_json('[1, 2.5]'), 'd2'), (3, NULL, 'd1'), (4, parse_json('null'), 'd2')"""
    )
    assert rows(session, "SELECT id, to_json(v) FROM t ORDER BY id") == [
        (1, '{"a":1,"b":"x"}'),
        (2, "[1,2.5]"),
        (3, None),
        (4, "null"),
    ]
    assert rows(session, "SELECT id FROM t WHERE variant_get(v, '$.a', 'int') = 1") == [(1,)]
    assert rows(session, "SELECT v:b::string FROM t WHERE dt = 'd1' AND v:a::int = 1") == [("x",)]
    assert rows(session, "SELECT id, is_variant_null(v) FROM t WHERE dt = 'd2' ORDER BY id") == [
        (2, False),
        (4, True),
    ]
    assert rows(session, "SELECT schema_of_variant(v) FROM t WHERE id = 1") == [
        ("OBJECT<a: BIGINT, b: STRING>",)
    ]
    # The values Spark reads are the bytes Spark's parse_json builds (and ours does too).
    (value,) = session.sql("SELECT v FROM t WHERE id = 1").collect()[0]
    assert isinstance(value, VariantVal)
    assert (bytes(value.value), bytes(value.metadata)) == pv.from_json('{"a": 1, "b": "x"}')
    assert ("v", "variant", None) in rows(session, "DESCRIBE t")
    (ddl,) = rows(session, "SHOW CREATE TABLE t")[0]
    assert "v VARIANT" in ddl


def test_primary_key_table_merges_updates_and_compacts(session: PaimonSession) -> None:
    session.sql(
        "CREATE TABLE pk (k INT, v VARIANT, n INT) TBLPROPERTIES ('primary-key' = 'k', "
        "'bucket' = '1')"
    )
    session.sql(
        """INSERT INTO pk VALUES (1, parse_json('{"n": 1}'), 1), (2, parse_json('"two"'), 2)"""
    )
    session.sql("""INSERT INTO pk VALUES (1, parse_json('{"n": 2}'), 10)""")
    session.sql("UPDATE pk SET v = parse_json('[3]') WHERE k = 2")
    session.sql(
        """MERGE INTO pk USING (SELECT 3 AS k, parse_json('{"m": true}') AS v, 3 AS n) s
        ON pk.k = s.k WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"""
    )
    expected = [(1, '{"n":2}', 10), (2, "[3]", 2), (3, '{"m":true}', 3)]
    assert rows(session, "SELECT k, to_json(v), n FROM pk ORDER BY k") == expected
    assert rows(session, "CALL sys.compact(table => 'db.pk')") == [(True,)]
    assert rows(session, "SELECT k, to_json(v), n FROM pk ORDER BY k") == expected
    files = rows(session, "SELECT level, null_value_counts, min_value_stats FROM pk$files")
    assert files == [(5, "{k=0, n=0, v=null}", "{k=1, n=2, v=null}")]  # no VARIANT stats


def test_ctas_dataframes_and_added_columns(session: PaimonSession, spark: SparkSession) -> None:
    session.sql("CREATE TABLE t (id INT, v VARIANT)")
    frame = spark.sql("""SELECT 1 AS id, parse_json('{"k": [1, {"x": null}]}') AS v""")
    frame.write.format("paimon").mode("append").save("db.t")
    session.sql("CREATE TABLE c AS SELECT id, v, v:k[0] AS first FROM t")
    assert rows(session, "SELECT id, to_json(v), to_json(first) FROM c") == [
        (1, '{"k":[1,{"x":null}]}', "1")
    ]
    session.sql("ALTER TABLE c ADD COLUMN w VARIANT")
    session.sql("""INSERT INTO c VALUES (2, parse_json('2'), NULL, parse_json('{"w": 1}'))""")
    assert rows(session, "SELECT id, to_json(w) FROM c ORDER BY id") == [(1, None), (2, '{"w":1}')]
    df = session.sql("SELECT * FROM c ORDER BY id")
    assert [f.dataType.simpleString() for f in df.schema.fields] == [
        "int",
        "variant",
        "variant",
        "variant",
    ]


def test_shredded_table_through_spark(session: PaimonSession) -> None:
    session.sql(
        "CREATE TABLE s (id INT, v VARIANT) TBLPROPERTIES ('variant.shreddingSchema' = "
        f"'{SHREDDING}')"
    )
    session.sql(
        """INSERT INTO s VALUES (1, parse_json('{"a": 1, "b": "x", "c": [true]}')),
        (2, parse_json('{"a": "text"}')), (3, parse_json('7')), (4, NULL)"""
    )
    path = session.sql("SELECT file_path FROM s$files").collect()[0][0]
    group = pq.ParquetFile(path).schema_arrow.field("v").type
    assert group.field("typed_value").type.names == ["a", "b"]
    assert rows(session, "SELECT id, to_json(v) FROM s ORDER BY id") == [
        (1, '{"a":1,"b":"x","c":[true]}'),
        (2, '{"a":"text"}'),
        (3, "7"),
        (4, None),
    ]
    assert rows(session, "SELECT id FROM s WHERE try_variant_get(v, '$.a', 'int') = 1") == [(1,)]


@pytest.mark.parametrize(
    ("ddl", "message"),
    [
        ("CREATE TABLE bad (k INT, v VARIANT) PARTITIONED BY (v)", "VariantType in partition"),
        (
            "CREATE TABLE bad (k INT, v VARIANT) TBLPROPERTIES ('primary-key' = 'v')",
            "VariantType in primary key",
        ),
    ],
)
def test_variant_keys_are_refused(session: PaimonSession, ddl: str, message: str) -> None:
    with pytest.raises((SqlError, PaimonError), match=message):
        session.sql(ddl)
    assert rows(session, "SHOW TABLES") == []


def test_orc_refuses_variant_columns(session: PaimonSession, warehouse: str) -> None:
    session.sql("CREATE TABLE o (k INT, v VARIANT) TBLPROPERTIES ('file.format' = 'orc')")
    with pytest.raises((SqlError, PaimonError), match="ORC has no VARIANT"):
        session.sql("INSERT INTO o VALUES (1, parse_json('1'))")
    assert rows(session, "SELECT * FROM o") == []
    assert glob.glob(f"{warehouse}/db.db/o/bucket-0/*") == []


def test_nested_variants_and_type_changes(session: PaimonSession) -> None:
    session.sql(
        "CREATE TABLE a (id INT, w ARRAY<VARIANT>, r STRUCT<x: VARIANT>, m MAP<STRING, VARIANT>)"
    )
    session.sql(
        """INSERT INTO a VALUES (1, array(parse_json('1'), NULL), named_struct('x',
        parse_json('"y"')), map('k', parse_json('[1]'))), (2, NULL, NULL, NULL)"""
    )
    assert rows(
        session,
        "SELECT id, to_json(w[0]), w[1] IS NULL, to_json(r.x), to_json(m['k']) FROM a ORDER BY id",
    ) == [(1, "1", True, '"y"', "[1]"), (2, None, True, None, None)]
    # Neither Java nor this implementation can cast VARIANT values: the change is refused.
    with pytest.raises(SqlError, match="cannot be converted to STRING"):
        session.sql("ALTER TABLE a ALTER COLUMN r.x TYPE STRING")
    with pytest.raises((SqlError, PaimonError), match=r"PARSE_JSON.* for type VARIANT"):
        session.sql("CREATE TABLE d (id INT, v VARIANT DEFAULT parse_json('1'))")

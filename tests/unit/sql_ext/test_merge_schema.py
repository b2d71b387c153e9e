"""``write.merge-schema``: INSERT BY NAME and ``df.write`` adding columns (and nested fields)
before they write, type widening and its refusals; the schema rules without Spark."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from paimon_core.format import schema as sc
from paimon_core.format.types import DataField, parse_data_type
from sql_ext.datapath import source
from sql_ext.errors import SqlError
from sql_ext.merge_schema import MergeSchema, schema_changes
from sql_ext.session import PaimonSession
from tests.unit.sql_ext.test_dml import rows, snapshots

ON = "SET `spark.paimon.write.merge-schema` = true"


@pytest.fixture
def session(spark: Any, warehouse: str) -> Iterator[PaimonSession]:
    session = PaimonSession(spark, warehouse=warehouse)
    session.sql("CREATE DATABASE db").collect()
    session.sql("CREATE TABLE db.t (a INT, b STRING)")
    session.sql("INSERT INTO db.t VALUES (1, '1')")
    yield session
    for key in ("write.merge-schema", "write.merge-schema.type-widening"):
        session.sql(f"RESET `spark.paimon.{key}`")
    session.stop()


def columns(session: PaimonSession, name: str = "db.t") -> list[tuple[str, str]]:
    return [(f.name, str(f.type)) for f in session.catalog.get_table(name).schema.fields]


def test_insert_by_name_adds_columns_only_when_enabled(
    session: PaimonSession, warehouse: str, oracle: Any
) -> None:
    with pytest.raises(SqlError, match="extra columns: `c`"):
        session.sql("INSERT INTO db.t BY NAME SELECT 3 AS a, '3' AS b, 3 AS c")
    assert columns(session) == [("a", "INT"), ("b", "STRING")]
    session.sql(ON)
    session.sql("INSERT INTO db.t BY NAME SELECT 3L AS c, '3' AS b, 3 AS a")  # the docs' example
    assert columns(session) == [("a", "INT"), ("b", "STRING"), ("c", "BIGINT")]
    assert rows(session, "SELECT * FROM db.t") == [(1, "1", None), (3, "3", 3)]
    assert len(snapshots(session)) == 2
    assert [r["c"] for r in oracle("read", warehouse, "db.t")] in ([None, 3], [3, None])
    session.sql("INSERT INTO db.t VALUES (4, '4', 4)")  # by position: the new shape
    session.sql("INSERT INTO db.t BY NAME SELECT 5 AS a, 1.5D AS b")  # types kept: cast
    assert columns(session) == [("a", "INT"), ("b", "STRING"), ("c", "BIGINT")]
    assert rows(session, "SELECT b FROM db.t WHERE a = 5") == [("1.5",)]


def test_nested_fields_and_type_widening(session: PaimonSession) -> None:
    session.sql("CREATE TABLE db.n (id INT, s STRUCT<x: INT, y: STRING>)")
    session.sql(ON)
    session.sql("INSERT INTO db.n BY NAME SELECT 1 AS id, named_struct('z', 9.5D, 'x', 1) AS s")
    assert columns(session, "db.n") == [
        ("id", "INT"),
        ("s", "ROW<`x` INT, `y` STRING, `z` DOUBLE>"),
    ]
    got = session.sql("SELECT s.x, s.y, s.z FROM db.n").collect()
    assert [tuple(r) for r in got] == [(1, None, 9.5)]
    session.sql("INSERT INTO db.n BY NAME SELECT 2L AS id")
    assert columns(session, "db.n")[0] == ("id", "INT")  # without type widening: kept
    session.sql("SET `spark.paimon.write.merge-schema.type-widening` = true")
    session.sql("INSERT INTO db.n BY NAME SELECT 3L AS id")
    assert columns(session, "db.n")[0] == ("id", "BIGINT")
    with pytest.raises(SqlError, match="Failed to merge data types BIGINT and DATE"):
        session.sql("INSERT INTO db.n BY NAME SELECT DATE'2024-01-01' AS id")
    assert rows(session, "SELECT id FROM db.n") == [(1,), (2,), (3,)]


def test_dataframe_write_merges_schema(session: PaimonSession, spark: Any) -> None:
    source.register(spark)
    df = spark.createDataFrame([(7, "x")], "a INT, d STRING")
    writer = df.write.format("paimon").option("warehouse", session.warehouse).mode("append")
    writer.option("mergeSchema", "true").save("db.t")
    assert columns(session) == [("a", "INT"), ("b", "STRING"), ("d", "STRING")]
    assert rows(session, "SELECT * FROM db.t") == [(1, "1", None), (7, None, "x")]


def _fields(text: str) -> list[DataField]:
    row = parse_data_type(f"ROW<{text}>")
    return list(row.fields or ())


def test_schema_rules_as_paimon_merges() -> None:
    base = _fields("a INT, s ROW<x INT>, m MAP<STRING, ROW<p INT>>, d DECIMAL(5, 2), v VARCHAR(5)")
    data = _fields(
        "A BIGINT, s ROW<x INT, y INT>, m MAP<STRING, ROW<p INT, q INT>>, d DECIMAL(9, 2), "
        "v VARCHAR(3), n STRING"
    )
    plain = schema_changes(base, data, MergeSchema(True), sensitive=False)
    assert plain == [
        sc.AddColumn(("s", "y"), parse_data_type("INT")),
        sc.AddColumn(("m", "value", "q"), parse_data_type("INT")),
        sc.AddColumn(("n",), parse_data_type("STRING")),
    ]
    with pytest.raises(SqlError, match="smaller length: VARCHAR\\(5\\) and VARCHAR\\(3\\)"):
        schema_changes(base, data, MergeSchema(True, True), sensitive=False)
    widened = schema_changes(base, data, MergeSchema(True, True, True), sensitive=False)
    assert sc.UpdateColumnType(("a",), parse_data_type("BIGINT"), True) in widened
    assert sc.UpdateColumnType(("d",), parse_data_type("DECIMAL(9, 2)"), True) in widened
    with pytest.raises(SqlError, match="different scale"):
        schema_changes(base, _fields("d DECIMAL(5, 3)"), MergeSchema(True, True), False)
    # Case-sensitive names: `A` is a new column.
    assert sc.AddColumn(("A",), parse_data_type("BIGINT")) in schema_changes(
        base, data, MergeSchema(True), sensitive=True
    )


MERGE_STAR = (
    "MERGE INTO db.t USING (SELECT * FROM VALUES (1, 'one', 10), (2, 'two', 20) AS s(a, b, c)) s "
    "ON t.a = s.a WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
)


def test_merge_into_star_adds_source_columns(
    session: PaimonSession, warehouse: str, oracle: Any
) -> None:
    session.sql(MERGE_STAR)  # without merge-schema: `c` is not part of `*`
    assert columns(session) == [("a", "INT"), ("b", "STRING")]
    assert rows(session, "SELECT * FROM db.t") == [(1, "one"), (2, "two")]
    session.sql(ON)
    session.sql(MERGE_STAR.replace("10", "11"))
    assert columns(session) == [("a", "INT"), ("b", "STRING"), ("c", "INT")]
    assert rows(session, "SELECT * FROM db.t") == [(1, "one", 11), (2, "two", 20)]
    assert [kind for _, kind in snapshots(session)] == ["APPEND", "OVERWRITE", "OVERWRITE"]
    java = sorted((r["a"], r["b"], r["c"]) for r in oracle("read", warehouse, "db.t"))
    assert java == [(1, "one", 11), (2, "two", 20)]


def test_merge_into_primary_key_table_fills_and_keeps(session: PaimonSession) -> None:
    """``UPDATE SET *`` keeps a column the source lacks (at the top and inside a ROW),
    ``INSERT *`` gives it its DEFAULT; an explicit key naming a source column adds it."""
    session.sql(
        "CREATE TABLE db.k (id INT, v STRING DEFAULT 'dflt', s STRUCT<x: INT, y: STRING>, "
        "PRIMARY KEY (id) NOT ENFORCED) TBLPROPERTIES ('bucket' = '1')"
    )
    session.sql("INSERT INTO db.k VALUES (1, 'v1', named_struct('x', 1, 'y', 'y1'))")
    source = (
        "(SELECT * FROM VALUES (1, named_struct('x', 10, 'z', 'z1')), "
        "(2, named_struct('x', 20, 'z', 'z2')) AS src(id, s)) src"
    )
    star = f"MERGE INTO db.k USING {source} ON k.id = src.id "
    with pytest.raises(SqlError, match=r"Cannot UPDATE \* target column 'v'.*merge-schema"):
        session.sql(star + "WHEN MATCHED THEN UPDATE SET *")
    session.sql(ON)
    session.sql(star + "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
    assert columns(session, "db.k") == [
        ("id", "INT NOT NULL"),
        ("v", "STRING"),
        ("s", "ROW<`x` INT, `y` STRING, `z` STRING>"),
    ]
    got = rows(session, "SELECT id, v, s.x, s.y, s.z FROM db.k")
    assert got == [(1, "v1", 10, "y1", "z1"), (2, "dflt", 20, None, "z2")]
    session.sql(
        "MERGE INTO db.k USING (SELECT 1 AS id, 7L AS n) src ON k.id = src.id "
        "WHEN MATCHED THEN UPDATE SET n = src.n"
    )
    assert columns(session, "db.k")[-1] == ("n", "BIGINT")
    assert rows(session, "SELECT id, n FROM db.k") == [(1, 7), (2, None)]

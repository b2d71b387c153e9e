"""`sys.max_pt('<table>')`: the largest top-level partition value with data, as Paimon-Spark."""

from __future__ import annotations

import pytest
from pyspark.sql import SparkSession

from paimon_core.exceptions import TableNotExist
from sql_ext.errors import SqlError
from sql_ext.session import PaimonSession


def test_max_pt_is_the_largest_partition_with_data(spark: SparkSession, warehouse: str) -> None:
    session = PaimonSession(spark, warehouse=warehouse)
    session.sql("CREATE TABLE t (id INT) PARTITIONED BY (p1 INT, p2 STRING)")
    with pytest.raises(SqlError, match=r"sys\.max_pt\('t'\): .* no partitions"):
        session.sql("SELECT sys.max_pt('t')")
    session.sql("INSERT INTO t VALUES (1, 9, 'c'), (2, 10, 'a'), (3, 10, 'b'), (4, NULL, 'z')")
    session.sql("ALTER TABLE t ADD PARTITION (p1 = 99, p2 = 'z')")  # no files: no partition
    df = session.sql("SELECT sys.max_pt('t'), paimon.sys.max_pt('paimon.default.t') AS m")
    assert df.columns == ["max_pt(t)", "m"]
    assert [tuple(r) for r in df.collect()] == [("10", "10")]  # 10 > 9: INT order, not text
    rows = session.sql("SELECT id FROM t WHERE p1 = sys.max_pt('default.t') ORDER BY id")
    assert [r.id for r in rows.collect()] == [2, 3]
    session.sql("ALTER TABLE t DROP PARTITION (p1 = 10, p2 = 'a')")
    session.sql("ALTER TABLE t DROP PARTITION (p1 = 10, p2 = 'b')")
    assert session.sql("SELECT sys.max_pt('t')").collect()[0][0] == "9"  # empty ones skipped


def test_max_pt_refusals_are_one_line(spark: SparkSession, warehouse: str) -> None:
    session = PaimonSession(spark, warehouse=warehouse)
    session.sql("CREATE TABLE u (id INT)")
    session.sql("CREATE TABLE t (id INT) PARTITIONED BY (p1 INT, p2 STRING)")
    for statement, error, message in (
        ("SELECT sys.max_pt('u')", SqlError, "not a partitioned table"),
        ("ALTER TABLE t ADD PARTITION (p1 = 10)", SqlError, "partition spec is invalid"),
        ("SELECT sys.max_pt(1)", SqlError, "string literal"),
        ("SELECT sys.max_pt('u', 'v')", SqlError, "expected 1"),
        ("SELECT sys.max_pt('nope')", TableNotExist, "nope"),
        ("SELECT other.sys.max_pt('u')", SqlError, "not a Paimon catalog"),
    ):
        with pytest.raises(error, match=message) as caught:
            session.sql(statement)
        assert "\n" not in str(caught.value)

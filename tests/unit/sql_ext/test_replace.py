"""REPLACE TABLE and CREATE OR REPLACE TABLE [AS SELECT], history-preserving as Paimon-Spark."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest
from pyspark.sql import SparkSession

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import PaimonError, TableNotExist
from sql_ext.errors import SqlError
from sql_ext.session import PaimonSession


@pytest.fixture
def session(spark: SparkSession, warehouse: str) -> PaimonSession:
    s = PaimonSession(spark, warehouse=warehouse)
    s.sql("CREATE DATABASE db")
    s.sql(
        "CREATE TABLE db.t (user_id BIGINT, item_id BIGINT, behavior STRING) "
        "TBLPROPERTIES ('primary-key' = 'user_id', 'bucket' = '2')"
    )
    s.sql("INSERT INTO db.t VALUES (1, 10, 'pv')")
    return s


def _rows(session: PaimonSession, sql: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in session.sql(sql).collect()]


def _history(session: PaimonSession, table: str) -> tuple[list[Any], list[Any]]:
    """(commit kind of each snapshot, id of each schema) of `table`."""
    kinds = _rows(session, f"SELECT commit_kind FROM {table}$snapshots ORDER BY snapshot_id")
    schemas = _rows(session, f"SELECT schema_id FROM {table}$schemas ORDER BY schema_id")
    return [k for (k,) in kinds], [s for (s,) in schemas]


def test_replace_table_keeps_history_and_location(session: PaimonSession, warehouse: str) -> None:
    session.sql(
        "REPLACE TABLE db.t (user_id BIGINT, item_id BIGINT, category STRING) "
        "TBLPROPERTIES ('primary-key' = 'user_id', 'bucket' = '4')"
    )
    table = FileSystemCatalog(warehouse).get_table("db.t")
    assert table.path == os.path.join(warehouse, "db.db", "t")
    assert table.schema.field_names == ["user_id", "item_id", "category"]
    assert table.schema.options == {"bucket": "4"} and table.schema.schema_id == 1
    assert _rows(session, "SELECT * FROM db.t") == []
    assert _rows(session, "SELECT * FROM db.t VERSION AS OF 1") == [(1, 10, "pv")]
    assert _history(session, "db.t") == (["APPEND", "OVERWRITE"], [0, 1])


def test_create_or_replace_as_select_then_reads_like_paimon(
    session: PaimonSession, warehouse: str, oracle: Callable[..., Any]
) -> None:
    session.sql("CREATE TABLE db.src (user_id BIGINT, item_id BIGINT, behavior STRING)")
    session.sql("INSERT INTO db.src VALUES (2, 20, 'buy'), (3, 30, 'cart')")
    session.sql(
        "CREATE OR REPLACE TABLE db.t TBLPROPERTIES ('primary-key' = 'user_id', 'bucket' = '4') "
        "AS SELECT user_id, item_id, behavior FROM db.src"
    )
    assert sorted(_rows(session, "SELECT * FROM db.t")) == [(2, 20, "buy"), (3, 30, "cart")]
    assert _history(session, "db.t") == (["APPEND", "OVERWRITE", "APPEND"], [0, 1])
    schema = FileSystemCatalog(warehouse).get_table("db.t").schema
    assert schema.primary_keys == ("user_id",) and schema.options == {"bucket": "4"}
    read = oracle("read", warehouse, "db.t")
    assert sorted(r["user_id"] for r in read) == [2, 3]


def test_self_referencing_replace_reads_the_rows_of_before(session: PaimonSession) -> None:
    session.sql("INSERT INTO db.t VALUES (2, 20, 'buy')")
    session.sql(
        "CREATE OR REPLACE TABLE db.t TBLPROPERTIES ('bucket' = '-1') "
        "AS SELECT user_id, behavior FROM db.t WHERE user_id = 2"
    )
    assert _rows(session, "SELECT * FROM db.t") == [(2, "buy")]
    session.sql("REPLACE TABLE db.t AS SELECT * FROM db.t VERSION AS OF 1")
    assert _rows(session, "SELECT * FROM db.t") == [(1, 10, "pv")]


def test_missing_table_replace_fails_create_or_replace_creates(
    session: PaimonSession, warehouse: str
) -> None:
    with pytest.raises(TableNotExist, match=r"REPLACE TABLE paimon\.db\.missing"):
        session.sql("REPLACE TABLE db.missing (a INT)")
    assert not os.path.exists(os.path.join(warehouse, "db.db", "missing"))
    session.sql("CREATE OR REPLACE TABLE db.made (a INT) PARTITIONED BY (a)")
    assert FileSystemCatalog(warehouse).get_table("db.made").schema.partition_keys == ("a",)
    with pytest.raises(SqlError, match="IF NOT EXISTS"):
        session.sql("CREATE OR REPLACE TABLE IF NOT EXISTS db.made (a INT)")


def test_new_partition_keys_drop_and_create_as_spark(session: PaimonSession) -> None:
    with pytest.raises(SqlError, match=r"Cannot replace table paimon\.db\.t because"):
        session.sql("REPLACE TABLE db.t PARTITIONED BY (behavior) AS SELECT * FROM db.t")
    assert _rows(session, "SELECT * FROM db.t") == [(1, 10, "pv")]
    session.sql("REPLACE TABLE db.t (a INT, dt STRING) PARTITIONED BY (dt)")
    assert _history(session, "db.t") == ([], [0])


def test_failing_query_changes_nothing(session: PaimonSession, warehouse: str) -> None:
    before = _history(session, "db.t")
    with pytest.raises(PaimonError, match="Cannot write to"):
        session.sql("CREATE OR REPLACE TABLE db.t AS SELECT CAST(behavior AS INT) AS b FROM db.t")
    assert _history(session, "db.t") == before
    assert _rows(session, "SELECT * FROM db.t") == [(1, 10, "pv")]
    assert [n for n in os.listdir(os.path.join(warehouse, "db.db", "t")) if "_write" in n] == []


@pytest.mark.parametrize(
    "statement",
    [
        "CREATE OR REPLACE TABLE db.t (user_id BIGINT, item_id BIGINT, behavior STRING) "
        "TBLPROPERTIES ('primary-key' = 'user_id', 'bucket' = '2', 'rowkind.field' = 'behavior')",
        "REPLACE TABLE db.t TBLPROPERTIES ('row-tracking.enabled' = 'true') AS SELECT 2 AS a",
        # New partition keys: a drop and create, refused before the drop.
        "CREATE OR REPLACE TABLE db.t (a BIGINT, dt STRING) PARTITIONED BY (dt) "
        "TBLPROPERTIES ('data-file.external-paths' = 'file:///tmp/x', "
        "'data-file.external-paths.strategy' = 'round-robin')",
    ],
    ids=["in-place", "as-select", "drop-and-create"],
)
def test_a_replacement_with_an_unsupported_feature_changes_nothing(
    session: PaimonSession, statement: str
) -> None:
    with pytest.raises(PaimonError, match=r"Cannot (change the schema of|create) table db\.t: "):
        session.sql(statement)
    assert _rows(session, "SELECT * FROM db.t") == [(1, 10, "pv")]
    assert _history(session, "db.t") == (["APPEND"], [0])

"""`spark.paimon.*` dynamic options: precedence, and SET/RESET reaching reads and writes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pyspark.sql import SparkSession

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import PaimonError
from sql_ext.dynamic_options import paimon_confs, table_options
from sql_ext.errors import SqlError
from sql_ext.session import PaimonSession


def _options(confs: dict[str, str], table: str = "T") -> dict[str, str]:
    return {k: v for k, (v, _) in table_options(confs, "paimon", "default", table).items()}


def test_global_and_table_scoped_settings() -> None:
    assert _options({"spark.paimon.scan.snapshot-id": "1", "spark.sql.x": "y"}) == {
        "scan.snapshot-id": "1"
    }
    for scope in ("*.default.T", "*.*.T", "paimon.default.T", "paimon.*.*", "*.*.*"):
        assert _options({f"spark.paimon.{scope}.scan.snapshot-id": "2"}) == {
            "scan.snapshot-id": "2"
        }


def test_table_scoped_wins_over_global_and_specific_over_wildcards() -> None:
    confs = {
        "spark.paimon.scan.snapshot-id": "1",
        "spark.paimon.*.*.T.scan.snapshot-id": "2",
        "spark.paimon.*.*.*.write-only": "false",
        "spark.paimon.paimon.default.T.write-only": "true",
    }
    assert _options(confs) == {"scan.snapshot-id": "2", "write-only": "true"}
    others = _options(confs, "T2")
    assert others["scan.snapshot-id"] == "1" and others["write-only"] == "false"


def test_settings_for_other_tables_and_catalogs_never_set_the_option() -> None:
    for scope in ("*.default.T1", "*.other.T", "spark_catalog.default.T", "*.*.t"):
        assert "scan.snapshot-id" not in _options({f"spark.paimon.{scope}.scan.snapshot-id": "1"})


# --------------------------------------------------------------------------- through SQL


@pytest.fixture
def session(spark: SparkSession, warehouse: str) -> Iterator[PaimonSession]:
    """A session on a fresh warehouse; every `spark.paimon.*` setting is reset afterwards."""
    yield PaimonSession(spark, warehouse=warehouse)
    for key in paimon_confs(spark):
        spark.conf.unset(key)


def _ids(session: PaimonSession, sql: str) -> list[Any]:
    return sorted(tuple(r) for r in session.sql(sql).collect())


def _two_snapshots(session: PaimonSession, *names: str) -> None:
    for name in names:
        session.sql(f"CREATE TABLE {name} (id INT)")
        session.sql(f"INSERT INTO {name} VALUES 1")
        session.sql(f"INSERT INTO {name} VALUES 2")


@pytest.mark.spark
def test_set_and_reset_of_a_table_scoped_snapshot_id(session: PaimonSession) -> None:
    _two_snapshots(session, "T", "U")
    session.sql("SET `spark.paimon.*.default.T.scan.snapshot-id` = 1")
    assert _ids(session, "SELECT * FROM T") == [(1,)]
    assert _ids(session, "SELECT * FROM default.U") == [(1,), (2,)]
    session.sql("RESET `spark.paimon.*.default.T.scan.snapshot-id`")
    assert _ids(session, "SELECT * FROM T") == [(1,), (2,)]
    session.sql("SET `spark.paimon.*.*.T.scan.snapshot-id` = 1")
    assert _ids(session, "SELECT * FROM paimon.default.T") == [(1,)]
    assert _ids(session, "SELECT count(*) FROM `T$files`") == [(2,)]  # not scoped to T$files


@pytest.mark.spark
def test_table_scoped_setting_wins_over_the_global_one(session: PaimonSession) -> None:
    _two_snapshots(session, "T1", "T2")
    session.sql("SET `spark.paimon.scan.snapshot-id` = 1")
    assert _ids(session, "SELECT T1.id, T2.id FROM T1 JOIN T2 ON T1.id = T2.id") == [(1, 1)]
    assert _ids(session, "SELECT count(*) FROM `T1$files`") == [(1,)]
    session.sql("SET `spark.paimon.*.*.T1.scan.snapshot-id` = 2")
    assert _ids(session, "SELECT * FROM T1") == [(1,), (2,)]
    assert _ids(session, "SELECT * FROM T2") == [(1,)]
    assert _ids(session, "SELECT * FROM T1 VERSION AS OF 1") == [(1,)]  # the clause wins


@pytest.mark.spark
def test_write_options_reach_the_commit_and_its_expiry(
    session: PaimonSession, warehouse: str
) -> None:
    session.sql(
        "CREATE TABLE T (id INT) TBLPROPERTIES "
        "('snapshot.num-retained.min' = '1', 'snapshot.num-retained.max' = '1')"
    )
    snapshots = FileSystemCatalog(warehouse).get_table("default.T").snapshot_manager
    session.sql("SET `spark.paimon.write-only` = true")
    session.sql("INSERT INTO T VALUES 1")
    session.sql("INSERT INTO T VALUES 2")
    assert snapshots.list_snapshot_ids() == [1, 2]
    session.sql("SET `spark.paimon.*.default.T.write-only` = false")
    session.sql("SET `spark.paimon.*.default.T.snapshot.num-retained.max` = 2")
    session.sql("INSERT INTO T VALUES 3")
    assert snapshots.list_snapshot_ids() == [2, 3]
    session.sql("RESET `spark.paimon.*.default.T.snapshot.num-retained.max`")
    session.sql("INSERT INTO T VALUES 4")
    assert snapshots.list_snapshot_ids() == [4]
    schema = FileSystemCatalog(warehouse).get_table("default.T").schema
    assert "write-only" not in schema.options  # dynamic options are never stored


@pytest.mark.spark
def test_a_setting_that_changes_a_fixed_option_is_refused(
    session: PaimonSession, warehouse: str
) -> None:
    session.sql("CREATE TABLE T (id INT, v STRING) TBLPROPERTIES ('primary-key' = 'id')")
    session.sql("INSERT INTO T VALUES (1, 'a')")
    session.sql("SET `spark.paimon.merge-engine` = partial-update")
    with pytest.raises(SqlError, match=r"^Cannot apply spark\.paimon\.merge-engine = "):
        session.sql("SELECT * FROM T")
    with pytest.raises(SqlError, match="Change 'merge-engine' is not supported"):
        session.sql("INSERT INTO T VALUES (2, 'b')")
    session.sql("RESET `spark.paimon.merge-engine`")
    assert _ids(session, "SELECT * FROM T") == [(1, "a")]
    assert FileSystemCatalog(warehouse).get_table("default.T").latest_snapshot().snapshot_id == 1


@pytest.mark.spark
def test_procedures_and_tag_statements_see_the_settings(
    session: PaimonSession, warehouse: str
) -> None:
    _two_snapshots(session, "T")
    session.sql("INSERT INTO T VALUES 3")
    snapshots = FileSystemCatalog(warehouse).get_table("default.T").snapshot_manager
    session.sql("SET `spark.paimon.*.default.T.snapshot.num-retained.min` = 1")
    session.sql("SET `spark.paimon.*.default.T.snapshot.num-retained.max` = 2")
    assert _ids(session, "CALL sys.expire_snapshots(table => 'T')") == [(1,)]
    assert snapshots.list_snapshot_ids() == [2, 3]
    session.sql("SET `spark.paimon.merge-engine` = partial-update")
    with pytest.raises(SqlError, match=r"Cannot apply spark\.paimon\.merge-engine"):
        session.sql("ALTER TABLE T CREATE TAG t1")
    with pytest.raises(PaimonError, match=r"Cannot apply spark\.paimon\.merge-engine"):
        session.sql("CALL sys.create_tag(table => 'T', tag => 't1')")
    assert not FileSystemCatalog(warehouse).get_table("default.T").tag_manager.list_tags()

"""Tables pypaimon 2.1 writes with features this implementation lacks (issue 20, "never
corrupt, never misread"): each is read as pypaimon reads it, or refused naming the option;
every write, commit and schema change is refused before anything is written, through the
core and through SQL, and pypaimon still reads the table as before."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import PaimonError, UnsupportedFeature
from paimon_core.format.schema import SetOption
from tests.interop.helpers import pypaimon_commit, pypaimon_read, pypaimon_write, rows
from tests.unit.paimon_core.helpers import file_state

APPEND = pa.schema([("id", pa.int64()), ("v", pa.string())])
PK = pa.schema([pa.field("id", pa.int64(), False), ("v", pa.string()), ("k", pa.string())])


def _append(ids: list[int], values: list[str]) -> pa.Table:
    return pa.table({"id": ids, "v": values}, schema=APPEND)


def _blob(warehouse: str, name: str) -> None:
    schema = pa.schema([("id", pa.int64()), ("b", pa.large_binary())])
    options = {
        "row-tracking.enabled": "true",
        "data-evolution.enabled": "true",
        "blob-field": "b",
    }
    data = pa.table({"id": [1, 2], "b": [b"x", b"yy"]}, schema=schema)
    pypaimon_write(warehouse, name, data, create={"options": options})


def _postpone(warehouse: str, name: str) -> None:
    """Files in real buckets (pypaimon's fixed-bucket batch write, as Java's batch writes and
    compactions leave them) and a file still in ``bucket-postpone``, newer for key 2."""
    from pypaimon import CatalogFactory

    options = {"bucket": "-2", "postpone.default-bucket-num": "2"}
    first = pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"], "k": ["x"] * 3}, schema=PK)
    pypaimon_write(
        warehouse, name, first.slice(0, 0), create={"primary_keys": ["id"], "options": options}
    )
    table = CatalogFactory.create({"warehouse": warehouse}).get_table(name)
    builder = table.new_postpone_fixed_bucket_write_builder()
    write = builder.new_write()
    write.write_arrow(first)
    commit = builder.new_commit()
    commit.commit(write.prepare_commit())
    write.close()
    commit.close()
    pypaimon_commit(table, pa.table({"id": [2, 4], "v": ["B", "d"], "k": ["y"] * 2}, schema=PK))


@dataclass(frozen=True)
class Feature:
    """A table pypaimon makes with one feature, and what the refusals name."""

    make: Callable[[str, str], None]
    option: str
    """What every refusal names (the option, as ``'key' = 'value'``)."""
    readable: bool
    """Whether we read it (as pypaimon does), else reads are refused too."""
    batch: pa.Table
    """Rows our writes try to add."""
    values: str
    """The same row in SQL."""
    create_sql: str
    """A CREATE TABLE body with the feature on, which must be refused."""


FEATURES = {
    "blob": Feature(
        _blob,
        "'blob-field' = 'b'",
        True,
        pa.table({"id": [9], "b": [b"z"]}),
        "(9, X'7A')",
        "(id BIGINT, b BINARY) TBLPROPERTIES ('row-tracking.enabled' = 'true', "
        "'data-evolution.enabled' = 'true', 'blob-field' = 'b')",
    ),
}


@pytest.fixture(params=sorted(FEATURES))
def feature(request: pytest.FixtureRequest, warehouse: str) -> Iterator[tuple[str, Feature]]:
    """``db.<name>`` made by pypaimon with one feature."""
    name: str = request.param
    FEATURES[name].make(warehouse, f"db.{name}")
    yield name, FEATURES[name]


def _state(warehouse: str) -> dict[str, bytes]:
    """Every file of the warehouse (external data paths included)."""
    return file_state(warehouse)


def test_core_reads_as_pypaimon_or_refuses_naming_the_option(
    warehouse: str, feature: tuple[str, Feature]
) -> None:
    name, spec = feature
    table = FileSystemCatalog(warehouse).get_table(f"db.{name}")
    expected = pypaimon_read(warehouse, f"db.{name}")
    if spec.readable:
        assert rows(table.to_arrow()) == rows(expected)
        return
    with pytest.raises(UnsupportedFeature) as refused:
        table.to_arrow()
    assert spec.option in str(refused.value) and "Cannot read" in str(refused.value)
    with pytest.raises(UnsupportedFeature, match="Cannot read"):
        table.new_scan().plan_partitions(table.latest_snapshot())


def test_core_writes_commits_and_schema_changes_are_refused_and_change_nothing(
    warehouse: str, feature: tuple[str, Feature]
) -> None:
    name, spec = feature
    before = _state(warehouse)
    read_before = pypaimon_read(warehouse, f"db.{name}")
    table = FileSystemCatalog(warehouse).get_table(f"db.{name}")
    attempts: list[Callable[[], Any]] = [
        lambda: table.write_arrow(spec.batch),
        lambda: table.write_arrow(spec.batch, overwrite=True),
        table.new_write,
        table.new_commit,
        lambda: table.schema_manager.commit_changes(SetOption("comment-x", "y")),
    ]
    for attempt in attempts:
        with pytest.raises(UnsupportedFeature) as refused:
            attempt()
        message = str(refused.value)
        assert spec.option in message and f"db.{name}" in message, message
        assert "\n" not in message
    assert _state(warehouse) == before
    assert rows(pypaimon_read(warehouse, f"db.{name}")) == rows(read_before)


def test_postpone_reads_leave_bucket_postpone_files_as_pypaimon(warehouse: str) -> None:
    """Batch, incremental delta and diff reads see the real buckets only (Java's
    ``onlyReadRealBuckets``): key 2 keeps the value of its real-bucket file."""
    from paimon_core.operations.incremental import plan_incremental

    _postpone(warehouse, "db.p")
    table = FileSystemCatalog(warehouse).get_table("db.p")
    latest = table.latest_snapshot()
    assert latest is not None and latest.snapshot_id == 2
    assert -2 in {e.bucket for e in table.new_scan().read_entries(latest)}
    expected = [(1, "a", "x"), (2, "b", "x"), (3, "c", "x")]
    assert rows(table.to_arrow()) == rows(pypaimon_read(warehouse, "db.p")) == expected
    assert table.new_scan().plan_partitions(latest) == {
        e.partition for e in table.new_scan().plan()
    }
    for mode in ("delta", "diff"):
        options = {"incremental-between": "1,2", "incremental-between-scan-mode": mode}
        assert plan_incremental(table.copy(options)).splits == (), mode


def test_core_create_is_refused_before_any_file(warehouse: str) -> None:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    for options, named in (
        ({"blob-field": "v", "data-evolution.enabled": "true", "row-tracking.enabled": "true"}, "blob-field"),
        ({"chain-table.enabled": "true"}, "chain-table.enabled"),
    ):  # fmt: skip
        with pytest.raises(UnsupportedFeature, match=f"Cannot create table db.t: .*{named}"):
            catalog.create_table("db.t", APPEND, options=options)
        assert not catalog.table_exists("db.t")
    assert os.listdir(catalog.database_path("db")) == []


# ------------------------------------------------------------------------------ SQL


@pytest.fixture
def session(spark: Any, warehouse: str) -> Iterator[Any]:
    from sql_ext.dynamic_options import paimon_confs
    from sql_ext.session import PaimonSession

    yield PaimonSession(spark, warehouse=warehouse)
    for key in paimon_confs(spark):
        spark.conf.unset(key)


def test_sql_create_insert_and_select(
    session: Any, warehouse: str, feature: tuple[str, Feature]
) -> None:
    name, spec = feature
    before = _state(warehouse)
    expected = pypaimon_read(warehouse, f"db.{name}")
    columns = ", ".join(expected.column_names)
    select = f"SELECT {columns} FROM paimon.db.{name}"
    if spec.readable:
        got = session.sql(select).toArrow()
        assert rows(got) == rows(expected)
    else:
        with pytest.raises(PaimonError, match="Cannot read") as refused:
            session.sql(select).collect()
        assert spec.option in str(refused.value)
    for statement in (
        f"INSERT INTO paimon.db.{name} VALUES {spec.values}",
        f"INSERT OVERWRITE paimon.db.{name} VALUES {spec.values}",
        f"ALTER TABLE paimon.db.{name} SET TBLPROPERTIES ('comment-x' = 'y')",
        f"TRUNCATE TABLE paimon.db.{name}",
        f"DELETE FROM paimon.db.{name} WHERE id = 1",
        f"CALL sys.compact(table => 'db.{name}')",
    ):
        with pytest.raises(PaimonError) as refused:
            session.sql(statement).collect()
        assert spec.option.split(" = ")[0] in str(refused.value), statement
    assert _state(warehouse) == before
    with pytest.raises(PaimonError, match=r"Cannot create table db\.created"):
        session.sql(f"CREATE TABLE paimon.db.created {spec.create_sql}")
    assert not FileSystemCatalog(warehouse).table_exists("db.created")


def test_sql_alter_and_dynamic_options_turning_a_feature_on_are_refused(
    session: Any, spark: Any, warehouse: str
) -> None:
    session.sql("CREATE DATABASE paimon.db")
    session.sql("CREATE TABLE paimon.db.plain (id BIGINT, v STRING)")
    session.sql("INSERT INTO paimon.db.plain VALUES (1, 'a')")
    before = _state(warehouse)
    chain = "TBLPROPERTIES ('chain-table.enabled' = 'true')"
    with pytest.raises(PaimonError, match=r"Cannot change the schema of table db\.plain: chain"):
        session.sql(f"ALTER TABLE paimon.db.plain SET {chain}")
    with pytest.raises(PaimonError, match=r"row-tracking\.enabled"):
        session.sql(
            "ALTER TABLE paimon.db.plain SET TBLPROPERTIES ('row-tracking.enabled' = 'true')"
        )
    spark.conf.set("spark.paimon.chain-table.enabled", "true")
    with pytest.raises(PaimonError, match=r"Cannot write to table db\.plain: chain tables"):
        session.sql("INSERT INTO paimon.db.plain VALUES (2, 'b')").collect()
    spark.conf.unset("spark.paimon.chain-table.enabled")
    assert [tuple(r) for r in session.sql("SELECT * FROM paimon.db.plain").collect()] == [(1, "a")]
    assert _state(warehouse) == before

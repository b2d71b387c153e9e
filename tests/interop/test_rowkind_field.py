"""``rowkind.field`` writes (issue 20): each row's kind is its column's ``+I``/``-U``/``+U``/
``-D``, through the core and SQL INSERT, both ways with pypaimon 2.1 and Java 2.0.0, each
after the other commits on top."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from tests.interop.helpers import json_rows, pypaimon_read, pypaimon_write, rows
from tests.interop.java2 import Java2

SCHEMA = pa.schema([pa.field("id", pa.int64(), False), ("v", pa.string()), ("op", pa.string())])
COLS = ["id", "v", "op"]
OPTIONS = {"bucket": "1", "rowkind.field": "op"}


def _data(ids: list[int], values: list[str], ops: list[str]) -> pa.Table:
    return pa.table({"id": ids, "v": values, "op": ops}, schema=SCHEMA)


def test_pypaimon_and_we_delete_by_the_rowkind_column_both_ways(warehouse: str) -> None:
    pypaimon_write(
        warehouse,
        "db.t",
        _data([1, 2, 3, 4], ["a", "b", "c", "d"], ["+I"] * 4),
        create={"primary_keys": ["id"], "options": OPTIONS},
    )
    table = FileSystemCatalog(warehouse).get_table("db.t")
    table.write_arrow(_data([1, 2, 5], ["a", "B", "e"], ["-D", "+U", "+I"]))
    expected = [(2, "B", "+U"), (3, "c", "+I"), (4, "d", "+I"), (5, "e", "+I")]
    assert rows(pypaimon_read(warehouse, "db.t"), COLS) == rows(table.to_arrow(), COLS) == expected
    pypaimon_write(warehouse, "db.t", _data([3, 4], ["c", "D"], ["-D", "+U"]))
    expected = [(2, "B", "+U"), (4, "D", "+U"), (5, "e", "+I")]
    assert rows(table.to_arrow(), COLS) == rows(pypaimon_read(warehouse, "db.t"), COLS) == expected


@pytest.mark.java2
def test_java2_and_we_delete_by_the_rowkind_column_both_ways(java2: Java2, warehouse: str) -> None:
    java2.create_table(
        "db.t", [("id", "BIGINT NOT NULL"), ("v", "STRING"), ("op", "STRING")],
        primary_keys=["id"], options=OPTIONS,
    )  # fmt: skip
    java2.write("db.t", [{"id": i, "v": v, "op": "+I"} for i, v in ((1, "a"), (2, "b"), (3, "c"))])
    java2.write("db.t", [{"id": 1, "v": "a", "op": "-D"}])
    table = FileSystemCatalog(warehouse).get_table("db.t")
    assert rows(table.to_arrow(), COLS) == [(2, "b", "+I"), (3, "c", "+I")]
    table.write_arrow(_data([2, 3], ["b", "C"], ["-D", "+U"]))
    assert json_rows(java2.read("db.t"), COLS) == [(3, "C", "+U")]
    java2.write("db.t", [{"id": 3, "v": "C", "op": "-D"}, {"id": 4, "v": "d", "op": "+I"}])
    assert rows(table.to_arrow(), COLS) == [(4, "d", "+I")]


# ------------------------------------------------------------------------------ SQL


@pytest.fixture
def session(spark: Any, warehouse: str) -> Iterator[Any]:
    from sql_ext.session import PaimonSession

    yield PaimonSession(spark, warehouse=warehouse)


@pytest.mark.spark
@pytest.mark.java2
def test_sql_insert_deletes_by_the_rowkind_column(
    session: Any, java2: Java2, warehouse: str
) -> None:
    session.sql("CREATE DATABASE paimon.db")
    session.sql(
        "CREATE TABLE paimon.db.t (id BIGINT NOT NULL, v STRING, op STRING) TBLPROPERTIES "
        "('primary-key' = 'id', 'bucket' = '2', 'rowkind.field' = 'op')"
    )
    session.sql("INSERT INTO paimon.db.t VALUES (1, 'a', '+I'), (2, 'b', '+I'), (3, 'c', '+I')")
    session.sql("INSERT INTO paimon.db.t VALUES (1, 'a', '-D'), (2, 'B', '+U')")
    expected = [(2, "B", "+U"), (3, "c", "+I")]
    got = session.sql("SELECT id, v, op FROM paimon.db.t").collect()
    assert sorted(tuple(r) for r in got) == expected
    assert rows(pypaimon_read(warehouse, "db.t"), COLS) == expected
    assert json_rows(java2.read("db.t"), COLS) == expected
    with pytest.raises(Exception, match=r"Unsupported row kind '\*'"):
        session.sql("INSERT INTO paimon.db.t VALUES (3, 'c', '*')").collect()
    assert [s["id"] for s in java2.snapshots("db.t")] == [1, 2]

"""Data-evolution tables (``data-evolution.enabled``, issue 20 point 3) written by Apache
Paimon 2.0.0 (Java) and pypaimon 2.1 read exactly here, through the core and through SQL:
files of some columns (``_WRITE_COLS``) over shared row-id ranges merged column by column,
deletion vectors of the range's anchor file (32- and 64-bit), predicates that must not prune
one file of a range."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import PaimonError
from tests.interop.helpers import json_rows, pypaimon_read, pypaimon_write, rows

OPTIONS = {"row-tracking.enabled": "true", "data-evolution.enabled": "true"}
SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string()), ("w", pa.int32()), ("dt", pa.string())])


def _core(warehouse: str, table: str = "db.t", **kwargs: Any) -> list[tuple[Any, ...]]:
    return rows(FileSystemCatalog(warehouse).get_table(table).to_arrow(**kwargs))


def _update(warehouse: str, columns: list[str], values: dict[str, list[Any]]) -> None:
    """pypaimon's partial-column update of rows by ``_ROW_ID``."""
    from pypaimon import CatalogFactory

    table = CatalogFactory.create({"warehouse": warehouse}).get_table("db.t")
    builder = table.new_batch_write_builder()
    update = builder.new_update().with_update_type(columns)
    types = {"_ROW_ID": pa.int64(), **{f.name: f.type for f in SCHEMA}}
    data = pa.table(values, schema=pa.schema([(c, types[c]) for c in values]))
    commit = builder.new_commit()
    commit.commit(update.update_by_arrow_with_row_id(data))
    commit.close()


def _delete(warehouse: str, row_ids: list[int]) -> None:
    from pypaimon import CatalogFactory

    table = CatalogFactory.create({"warehouse": warehouse}).get_table("db.t")
    builder = table.new_batch_write_builder()
    commit = builder.new_commit()
    commit.commit(builder.new_update().delete_by_row_id(row_ids))
    commit.close()


def _pypaimon_table(warehouse: str, options: dict[str, str], partitioned: bool) -> None:
    """Rows 0-2 and 3-4 (partition d1 then d2 when ``partitioned``), then ``v`` of rows 0,
    2, 4 and ``w, v`` of row 1 rewritten, then row 3 deleted when deletion vectors are on."""
    create = {"options": {**OPTIONS, **options}}
    if partitioned:
        create["partition_keys"] = ["dt"]
    first = {"id": [1, 2, 3], "v": ["a", "b", "c"], "w": [10, 20, 30], "dt": ["d1"] * 3}
    pypaimon_write(warehouse, "db.t", pa.table(first, schema=SCHEMA), create=create)
    second = {"id": [4, 5], "v": ["d", "e"], "w": [40, 50], "dt": ["d2"] * 2}
    pypaimon_write(warehouse, "db.t", pa.table(second, schema=SCHEMA))
    _update(warehouse, ["v"], {"_ROW_ID": [0, 2, 4], "v": ["A", "C", "E"]})
    _update(warehouse, ["w", "v"], {"_ROW_ID": [1], "w": [222], "v": ["BB"]})
    if options.get("deletion-vectors.enabled") == "true":
        _delete(warehouse, [3])


DV = {
    "plain": {},
    "dv32": {"deletion-vectors.enabled": "true"},
    "dv64": {"deletion-vectors.enabled": "true", "deletion-vectors.bitmap64": "true"},
}


@pytest.mark.parametrize("partitioned", [False, True], ids=["unpartitioned", "partitioned"])
@pytest.mark.parametrize("dv", sorted(DV))
def test_core_reads_pypaimon_tables_exactly(warehouse: str, dv: str, partitioned: bool) -> None:
    _pypaimon_table(warehouse, DV[dv], partitioned)
    expected = [
        (1, "A", 10, "d1"),
        (2, "BB", 222, "d1"),
        (3, "C", 30, "d1"),
        (4, "d", 40, "d2"),
        (5, "E", 50, "d2"),
    ]
    if dv != "plain":
        expected.remove((4, "d", 40, "d2"))
    assert _core(warehouse) == rows(pypaimon_read(warehouse, "db.t")) == expected
    table = FileSystemCatalog(warehouse).get_table("db.t")
    files = [e.file for e in table.new_scan().read_entries(table.latest_snapshot())]
    assert sorted(f.write_cols or () for f in files) == [(), (), ("v",), ("v",), ("w", "v")]
    # Stats of the range's first file say v in ['a', 'c'] and w <= 30: they do not prune.
    for predicate, want in (
        ([("v", "=", "BB")], [(2, "BB", 222, "d1")]),
        ([("w", ">", 100)], [(2, "BB", 222, "d1")]),
        ([("v", "=", "E"), ("dt", "=", "d2")], [(5, "E", 50, "d2")]),
    ):
        got = rows(table.to_arrow(predicate=predicate))
        assert all(r in got for r in want), predicate
    projected = rows(table.new_read().to_arrow(table.new_scan().plan(), ["w"]))
    assert projected == sorted((r[2],) for r in expected)


def test_sql_reads_pypaimon_tables_exactly(spark: Any, warehouse: str) -> None:
    from sql_ext.session import PaimonSession

    _pypaimon_table(warehouse, DV["dv64"], partitioned=True)
    session = PaimonSession(spark, warehouse=warehouse)
    expected = rows(pypaimon_read(warehouse, "db.t"))
    assert rows(session.sql("SELECT * FROM paimon.db.t").toArrow()) == expected
    assert session.sql("SELECT id, w FROM paimon.db.t WHERE v = 'BB'").collect() == [(2, 222)]
    assert session.sql("SELECT count(*) FROM paimon.db.t").collect()[0][0] == 4
    got = session.sql("SELECT v FROM paimon.db.t WHERE w > 35").collect()
    assert sorted(tuple(r) for r in got) == [("BB",), ("E",)]
    audit = session.sql("SELECT rowkind, id, v FROM paimon.db.`t$audit_log`").collect()
    assert sorted(tuple(r) for r in audit) == [("+I", r[0], r[1]) for r in expected]
    with pytest.raises(PaimonError, match="FileRecordIterator"):
        session.sql("SELECT id, __paimon_file_path FROM paimon.db.t").collect()


# ------------------------------------------------------------------------ Java 2.0.0

JAVA_FIELDS = [("id", "BIGINT"), ("v", "STRING"), ("w", "INT")]


@pytest.mark.java2
def test_core_and_sql_read_java_tables_exactly(spark: Any, java2: Any, warehouse: str) -> None:
    """Java writes rows 0-2 and 3-4 whole, then ``v`` of range 0 and ``w, v`` of range 3
    (``withWriteType``); we read what Java reads, also after pypaimon updates on top."""
    from sql_ext.session import PaimonSession

    java2.create_table("db.t", JAVA_FIELDS, options=OPTIONS)
    java2.write("db.t", [{"id": 1, "v": "a", "w": 10}, {"id": 2, "v": "b", "w": 20}, {"id": 3, "v": "c", "w": 30}])  # fmt: skip
    java2.write("db.t", [{"id": 4, "v": "d", "w": 40}, {"id": 5, "v": "e", "w": 50}])
    java2.write_cols("db.t", ["v"], 0, [{"v": "A"}, {"v": None}, {"v": "C"}])
    java2.write_cols("db.t", ["w", "v"], 3, [{"w": 44, "v": "D"}, {"w": None, "v": "e"}])
    files = java2.files("db.t")
    assert sorted(tuple(f["writeCols"] or ()) for f in files) == [(), (), ("v",), ("w", "v")]
    cols = ["id", "v", "w"]
    expected = [(1, "A", 10), (2, None, 20), (3, "C", 30), (4, "D", 44), (5, "e", None)]
    assert json_rows(java2.read("db.t"), cols) == expected
    assert _core(warehouse) == expected
    session = PaimonSession(spark, warehouse=warehouse)
    assert rows(session.sql("SELECT * FROM paimon.db.t").toArrow()) == expected
    assert session.sql("SELECT id FROM paimon.db.t WHERE w = 44").collect() == [(4,)]

    _update(warehouse, ["w"], {"_ROW_ID": [0, 4], "w": [1000, 5000]})
    expected = [(1, "A", 1000), (2, None, 20), (3, "C", 30), (4, "D", 44), (5, "e", 5000)]
    assert json_rows(java2.read("db.t"), cols) == expected
    assert _core(warehouse) == rows(pypaimon_read(warehouse, "db.t")) == expected

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


# --------------------------------------------------------------------------- writes


def _our_table(warehouse: str, options: dict[str, str]) -> Any:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    return catalog.create_table(
        "db.t", SCHEMA, partition_keys=["dt"], options={**OPTIONS, **options}
    )


@pytest.mark.parametrize("dv", sorted(DV))
def test_pypaimon_reads_our_inserts_and_column_updates_and_updates_on_top(
    warehouse: str, dv: str
) -> None:
    """Our whole-row inserts get row ids from the commit; our updates write files of the
    updated columns only over whole ranges (sequence number: their snapshot); pypaimon reads
    them as we do, and we read pypaimon's update on top."""
    from paimon_core.operations.data_evolution_write import update_by_row_id

    table = _our_table(warehouse, DV[dv])
    first = {"id": [1, 2, 3], "v": ["a", "b", "c"], "w": [10, 20, 30], "dt": ["d1"] * 3}
    table.write_arrow(pa.table(first, schema=SCHEMA))
    table.write_arrow(pa.table({"id": [4], "v": ["d"], "w": [40], "dt": ["d2"]}, schema=SCHEMA))
    table = FileSystemCatalog(warehouse).get_table("db.t")
    updates = pa.table(
        {"_ROW_ID": pa.array([1, 3], pa.int64()), "w": pa.array([222, 444], pa.int32())}
    )
    sid = table.new_commit().commit(update_by_row_id(table, updates))
    files = [e.file for e in table.new_scan().read_entries(table.latest_snapshot())]
    assert sorted((f.first_row_id, f.row_count, f.write_cols, f.max_sequence_number) for f in files if f.write_cols) == [
        (0, 3, ("w",), sid),
        (3, 1, ("w",), sid),
    ]  # fmt: skip
    expected = [(1, "a", 10, "d1"), (2, "b", 222, "d1"), (3, "c", 30, "d1"), (4, "d", 444, "d2")]
    assert _core(warehouse) == rows(pypaimon_read(warehouse, "db.t")) == expected
    _update(warehouse, ["v"], {"_ROW_ID": [1], "v": ["BB"]})
    expected[1] = (2, "BB", 222, "d1")
    assert _core(warehouse) == rows(pypaimon_read(warehouse, "db.t")) == expected
    table = FileSystemCatalog(warehouse).get_table("db.t")
    table.new_commit().commit(
        update_by_row_id(table, pa.table({"_ROW_ID": pa.array([1], pa.int64()), "v": ["B3"], "w": pa.array([3], pa.int32())}))
    )  # fmt: skip
    expected[1] = (2, "B3", 3, "d1")
    assert _core(warehouse) == rows(pypaimon_read(warehouse, "db.t")) == expected
    assert FileSystemCatalog(warehouse).get_table("db.t").latest_snapshot().next_row_id == 4


def test_an_update_of_rows_an_overwrite_removed_meanwhile_conflicts(warehouse: str) -> None:
    """Java's row-id existence check: a file of some columns over a range no live file has
    any more (an overwrite took it) is refused at commit, nothing published."""
    from paimon_core.exceptions import CommitConflict
    from paimon_core.operations.data_evolution_write import update_by_row_id

    table = _our_table(warehouse, {})
    table.write_arrow(pa.table({"id": [1, 2], "v": ["a", "b"], "w": [1, 2], "dt": ["d1"] * 2}, schema=SCHEMA))  # fmt: skip
    table = FileSystemCatalog(warehouse).get_table("db.t")
    messages = update_by_row_id(table, pa.table({"_ROW_ID": pa.array([0], pa.int64()), "v": ["A"]}))
    table.write_arrow(pa.table({"id": [9], "v": ["z"], "w": [9], "dt": ["d1"]}, schema=SCHEMA), overwrite=True)  # fmt: skip
    latest = table.latest_snapshot()
    with pytest.raises(
        CommitConflict, match=r"Row ID existence conflict: .*firstRowId=0, rowCount=2"
    ):
        table.new_commit().commit(messages)
    assert FileSystemCatalog(warehouse).get_table("db.t").latest_snapshot() == latest
    assert _core(warehouse) == [(9, "z", 9, "d1")]


def test_sql_insert_update_delete_and_refusals(spark: Any, warehouse: str) -> None:
    """INSERT writes whole rows, UPDATE files of the assigned columns over the touched ranges
    (no file deleted), DELETE deletion vectors of the ranges' anchors; pypaimon reads each
    state as we do. MERGE INTO, compaction, DELETE without deletion vectors and updates of
    partition columns are refused, changing nothing."""
    from sql_ext.session import PaimonSession

    session = PaimonSession(spark, warehouse=warehouse)
    session.sql("CREATE DATABASE paimon.db")
    session.sql(
        "CREATE TABLE paimon.db.t (id BIGINT, v STRING, w INT, dt STRING) PARTITIONED BY (dt) "
        "TBLPROPERTIES ('row-tracking.enabled' = 'true', 'data-evolution.enabled' = 'true', "
        "'deletion-vectors.enabled' = 'true')"
    )
    session.sql("INSERT INTO paimon.db.t VALUES (1, 'a', 10, 'x'), (2, 'b', 20, 'x'), (3, 'c', 30, 'y')").collect()  # fmt: skip
    session.sql("INSERT INTO paimon.db.t VALUES (4, 'd', 40, 'y')").collect()

    def state() -> list[tuple[Any, ...]]:
        ours = rows(session.sql("SELECT * FROM paimon.db.t").toArrow())
        assert ours == _core(warehouse) == rows(pypaimon_read(warehouse, "db.t"))
        return ours

    table = FileSystemCatalog(warehouse).get_table("db.t")
    before = {e.file.file_name for e in table.new_scan().read_entries(table.latest_snapshot())}
    session.sql("UPDATE paimon.db.t SET v = upper(v), w = w + 1 WHERE w >= 20 AND id <> 3").collect()  # fmt: skip
    assert state() == [(1, "a", 10, "x"), (2, "B", 21, "x"), (3, "c", 30, "y"), (4, "D", 41, "y")]
    table = FileSystemCatalog(warehouse).get_table("db.t")
    after = [e.file for e in table.new_scan().read_entries(table.latest_snapshot())]
    assert before <= {f.file_name for f in after}
    assert {f.write_cols for f in after if f.file_name not in before} == {("v", "w")}
    session.sql("DELETE FROM paimon.db.t WHERE v = 'B'").collect()
    assert state() == [(1, "a", 10, "x"), (3, "c", 30, "y"), (4, "D", 41, "y")]
    session.sql("UPDATE paimon.db.t SET w = 0").collect()
    assert state() == [(1, "a", 0, "x"), (3, "c", 0, "y"), (4, "D", 0, "y")]

    snapshot = FileSystemCatalog(warehouse).get_table("db.t").latest_snapshot()
    for statement, refusal in (
        ("MERGE INTO paimon.db.t USING (SELECT 1 AS id) s ON t.id = s.id WHEN MATCHED THEN DELETE", "MERGE INTO a data-evolution table"),
        ("CALL sys.compact(table => 'db.t')", "compaction of data evolution"),
        ("UPDATE paimon.db.t SET dt = 'z'", r"Cannot update partition columns \['dt'\]"),
        ("ALTER TABLE paimon.db.t SET TBLPROPERTIES ('row-tracking.enabled' = 'false')", "row-tracking"),
    ):  # fmt: skip
        with pytest.raises(PaimonError, match=refusal):
            session.sql(statement).collect()
    assert FileSystemCatalog(warehouse).get_table("db.t").latest_snapshot() == snapshot


def test_sql_delete_without_deletion_vectors_is_refused(spark: Any, warehouse: str) -> None:
    from sql_ext.session import PaimonSession

    _pypaimon_table(warehouse, {}, partitioned=False)
    session = PaimonSession(spark, warehouse=warehouse)
    snapshot = FileSystemCatalog(warehouse).get_table("db.t").latest_snapshot()
    with pytest.raises(PaimonError, match="deletes rows with deletion vectors only"):
        session.sql("DELETE FROM paimon.db.t WHERE id = 1").collect()
    assert FileSystemCatalog(warehouse).get_table("db.t").latest_snapshot() == snapshot
    with pytest.raises(PaimonError, match="Data evolution config must enabled with row-tracking"):
        session.sql(
            "CREATE TABLE paimon.db.bad (id INT) TBLPROPERTIES ('data-evolution.enabled' = 'true')"
        )


@pytest.mark.java2
def test_java_reads_our_writes_and_we_read_java_writes_on_top(java2: Any, warehouse: str) -> None:
    from paimon_core.operations.data_evolution_write import update_by_row_id

    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    schema = pa.schema([("id", pa.int64()), ("v", pa.string()), ("w", pa.int32())])
    table = catalog.create_table("db.t", schema, options=OPTIONS)
    table.write_arrow(pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"], "w": [1, 2, 3]}, schema=schema))  # fmt: skip
    table = catalog.get_table("db.t")
    table.new_commit().commit(update_by_row_id(table, pa.table({"_ROW_ID": pa.array([2], pa.int64()), "v": ["C"]})))  # fmt: skip
    cols = ["id", "v", "w"]
    expected = [(1, "a", 1), (2, "b", 2), (3, "C", 3)]
    assert json_rows(java2.read("db.t"), cols) == expected
    java2.write("db.t", [{"id": 4, "v": "d", "w": 4}])
    java2.write_cols("db.t", ["w"], 0, [{"w": 100}, {"w": 200}, {"w": 300}])
    expected = [(1, "a", 100), (2, "b", 200), (3, "C", 300), (4, "d", 4)]
    assert _core(warehouse) == json_rows(java2.read("db.t"), cols) == expected
    table = catalog.get_table("db.t")
    table.new_commit().commit(update_by_row_id(table, pa.table({"_ROW_ID": pa.array([0, 3], pa.int64()), "w": pa.array([-1, -4], pa.int32())})))  # fmt: skip
    expected = [(1, "a", -1), (2, "b", 200), (3, "C", 300), (4, "d", -4)]
    assert _core(warehouse) == json_rows(java2.read("db.t"), cols) == expected
    snapshots = java2.snapshots("db.t")
    assert snapshots[-1]["nextRowId"] == 4


@pytest.mark.java2
@pytest.mark.parametrize("bitmap64", [False, True], ids=["bitmap32", "bitmap64"])
def test_java_reads_our_deletes_keyed_by_the_range_anchor(
    spark: Any, java2: Any, warehouse: str, bitmap64: bool
) -> None:
    """Java writes ranges and a file of some columns; our SQL DELETE puts the deleted rows'
    positions in the vector of each range's oldest file, which Java applies to the merged
    rows (32- and 64-bit vectors)."""
    from sql_ext.session import PaimonSession

    options = {**OPTIONS, "deletion-vectors.enabled": "true"}
    if bitmap64:
        options["deletion-vectors.bitmap64"] = "true"
    java2.create_table("db.t", JAVA_FIELDS, options=options)
    java2.write("db.t", [{"id": 1, "v": "a", "w": 10}, {"id": 2, "v": "b", "w": 20}, {"id": 3, "v": "c", "w": 30}])  # fmt: skip
    java2.write_cols("db.t", ["v"], 0, [{"v": "A"}, {"v": "B"}, {"v": "C"}])
    session = PaimonSession(spark, warehouse=warehouse)
    session.sql("DELETE FROM paimon.db.t WHERE v = 'B'").collect()
    expected = [(1, "A", 10), (3, "C", 30)]
    assert _core(warehouse) == json_rows(java2.read("db.t"), ["id", "v", "w"]) == expected
    session.sql("UPDATE paimon.db.t SET w = w * 2 WHERE id = 3").collect()
    expected = [(1, "A", 10), (3, "C", 60)]
    assert _core(warehouse) == json_rows(java2.read("db.t"), ["id", "v", "w"]) == expected

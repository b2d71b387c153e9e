"""Row tracking with Java Paimon 2.0 both ways: ``_ROW_ID``, ``_SEQUENCE_NUMBER`` and the
snapshots' ``nextRowId`` agree whoever wrote, appended on top of the other or compacted
(Java's compaction and ours both store the ids in the compacted file)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.operations.compact import compact_table
from paimon_core.table import FileStoreTable
from tests.interop.helpers import json_rows, rows
from tests.interop.java2 import Java2

pytestmark = pytest.mark.java2

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string()), ("dt", pa.string())])
TRACKED = ["id", "v", "dt", "_ROW_ID", "_SEQUENCE_NUMBER"]


def _rows(ids: list[int], dt: str = "a") -> list[dict[str, Any]]:
    return [{"id": i, "v": f"v{i}", "dt": dt} for i in ids]


def _create(java2: Java2) -> None:
    java2.create_table(
        "db.t",
        [("id", "BIGINT"), ("v", "STRING"), ("dt", "STRING")],
        partition_keys=["dt"],
        options={"row-tracking.enabled": "true", "bucket": "-1"},
    )


def _table(warehouse: str) -> FileStoreTable:
    return FileSystemCatalog(warehouse).get_table("db.t")


def _ours(warehouse: str) -> list[tuple[Any, ...]]:
    table = _table(warehouse)
    return rows(table.new_read().to_arrow(table.new_scan().plan(), TRACKED), TRACKED)


def _java(java2: Java2) -> list[tuple[Any, ...]]:
    return json_rows(java2.read("db.t", row_tracking=True), TRACKED)


def _write(warehouse: str, ids: list[int], dt: str = "a") -> int | None:
    data = pa.table({"id": ids, "v": [f"v{i}" for i in ids], "dt": [dt] * len(ids)}, schema=SCHEMA)
    return _table(warehouse).write_arrow(data)


def test_java_tables_read_with_their_ids_and_ours_continue(java2: Java2, warehouse: str) -> None:
    _create(java2)
    java2.write("db.t", _rows([1, 2]))
    java2.write("db.t", _rows([3], "b"))
    expected = [(1, "v1", "a", 0, 1), (2, "v2", "a", 1, 1), (3, "v3", "b", 2, 2)]
    assert _java(java2) == _ours(warehouse) == expected
    assert _write(warehouse, [4, 5], "c") == 3
    assert java2.snapshots("db.t")[-1]["nextRowId"] == 5
    java2.write("db.t", _rows([6]))
    assert java2.snapshots("db.t")[-1]["nextRowId"] == 6
    ours = _ours(warehouse)
    assert ours == _java(java2)
    assert [(r[0], r[3], r[4]) for r in ours] == [
        (1, 0, 1),
        (2, 1, 1),
        (3, 2, 2),
        (4, 3, 3),
        (5, 4, 3),
        (6, 5, 4),
    ]


def test_java_compaction_is_read_with_the_stored_ids(java2: Java2, warehouse: str) -> None:
    _create(java2)
    for ids in ([1, 2], [3], [4], [5, 6]):
        java2.write("db.t", _rows(ids))
    _write(warehouse, [7])
    before = _java(java2)
    assert java2.compact_append("db.t")["tasks"] == 1
    (compacted,) = java2.files("db.t")
    assert compacted["firstRowId"] is None and compacted["fileSource"] == "COMPACT"
    assert compacted["writeCols"] == TRACKED
    assert _ours(warehouse) == _java(java2) == before
    # our files match Java's compacted file field by field
    assert _write(warehouse, [8]) is not None
    java2.write("db.t", _rows([9]))
    assert compact_table(_table(warehouse), full=True) is not None
    (ours,) = java2.files("db.t")
    keys = ("firstRowId", "fileSource", "writeCols", "minSequenceNumber", "maxSequenceNumber")
    assert {k: ours[k] for k in keys} == {
        "firstRowId": None,
        "fileSource": "COMPACT",
        "writeCols": TRACKED,
        "minSequenceNumber": 1,
        "maxSequenceNumber": 8,
    }
    assert _ours(warehouse) == _java(java2)
    assert [r[3] for r in _ours(warehouse)] == list(range(9))
    java2.write("db.t", _rows([10]))
    assert (10, "v10", "a", 9, 10) in _java(java2)
    assert _ours(warehouse) == _java(java2)


def test_our_update_and_merge_keep_ids_as_java_reads_them(
    java2: Java2, warehouse: str, spark: Any
) -> None:
    from sql_ext.session import PaimonSession

    _create(java2)
    java2.write("db.t", _rows([1, 2, 3]))
    java2.write("db.t", _rows([4], "b"))
    session = PaimonSession(spark, warehouse=warehouse)
    try:
        session.sql("UPDATE paimon.db.t SET v = 'U' WHERE id = 2")
        session.sql("CREATE TABLE paimon.db.s (id BIGINT, v STRING, dt STRING)")
        session.sql("INSERT INTO paimon.db.s VALUES (4, 'M', 'b'), (7, 'n', 'c')")
        session.sql(
            "MERGE INTO paimon.db.t USING paimon.db.s ON t.id = s.id "
            "WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *"
        )
        session.sql("DELETE FROM paimon.db.t WHERE id = 1")
    finally:
        session.stop()
    expected = [
        (2, "U", "a", 1, 3),
        (3, "v3", "a", 2, 1),
        (4, "M", "b", 3, 4),
        (7, "n", "c", 4, 4),
    ]
    assert _ours(warehouse) == _java(java2) == expected
    java2.write("db.t", _rows([8]))
    assert (8, "v8", "a", 5, 6) in _java(java2)
    assert _ours(warehouse) == _java(java2)
    assert java2.snapshots("db.t")[-1]["nextRowId"] == 6

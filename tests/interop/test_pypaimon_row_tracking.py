"""Row tracking with pypaimon 2.1 both ways: the ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` of
every row, and the snapshots' ``nextRowId``, agree whoever wrote, commits on top of the
other's, or compacted."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from paimon_core.catalog import FileSystemCatalog
from paimon_core.operations.compact import compact_table
from paimon_core.table import FileStoreTable
from tests.interop.helpers import pypaimon_write, rows

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string()), ("dt", pa.string())])
TRACKED = ["id", "v", "dt", "_ROW_ID", "_SEQUENCE_NUMBER"]
CREATE = {"partition_keys": ["dt"], "options": {"row-tracking.enabled": "true"}}


def _batch(ids: list[int], dt: str = "a") -> pa.Table:
    return pa.table({"id": ids, "v": [f"v{i}" for i in ids], "dt": [dt] * len(ids)}, schema=SCHEMA)


def _theirs(warehouse: str) -> list[tuple[Any, ...]]:
    """Every row with its row id and sequence number, as pypaimon reads them."""
    from pypaimon import CatalogFactory

    table = CatalogFactory.create({"warehouse": warehouse}).get_table("db.t")
    builder = table.new_read_builder().with_projection(TRACKED)
    return rows(builder.new_read().to_arrow(builder.new_scan().plan().splits()), TRACKED)


def _table(warehouse: str) -> FileStoreTable:
    return FileSystemCatalog(warehouse).get_table("db.t")


def _ours(warehouse: str) -> list[tuple[Any, ...]]:
    table = _table(warehouse)
    return rows(table.new_read().to_arrow(table.new_scan().plan(), TRACKED), TRACKED)


def _next_row_id(warehouse: str) -> int | None:
    latest = _table(warehouse).latest_snapshot()
    assert latest is not None
    return latest.next_row_id


def test_ids_agree_and_continue_across_writers(warehouse: str) -> None:
    pypaimon_write(warehouse, "db.t", _batch([1, 2]), create=CREATE)
    pypaimon_write(warehouse, "db.t", _batch([3], "b"))
    expected = [
        (1, "v1", "a", 0, 1),
        (2, "v2", "a", 1, 1),
        (3, "v3", "b", 2, 2),
    ]
    assert _ours(warehouse) == _theirs(warehouse) == expected
    # ours on top of theirs: ids from their nextRowId, sequence = our snapshot
    assert (
        _table(warehouse).write_arrow(pa.concat_tables([_batch([4], "b"), _batch([5, 6], "a")]))
        == 3
    )
    assert _next_row_id(warehouse) == 6
    ours = _ours(warehouse)
    assert ours == _theirs(warehouse)
    # partition-group-on-commit: each partition's new rows get contiguous ids
    added = sorted((r[2], r[3]) for r in ours if r[4] == 3)
    assert added in ([("a", 3), ("a", 4), ("b", 5)], [("a", 4), ("a", 5), ("b", 3)])
    # theirs on top of ours
    pypaimon_write(warehouse, "db.t", _batch([7], "c"))
    assert _next_row_id(warehouse) == 7
    assert (7, "v7", "c", 6, 4) in _ours(warehouse)
    assert _ours(warehouse) == _theirs(warehouse)


def test_our_compaction_keeps_ids_for_pypaimon_and_ids_go_on(warehouse: str) -> None:
    pypaimon_write(warehouse, "db.t", _batch([1, 2]), create=CREATE)
    _table(warehouse).write_arrow(_batch([3]))
    pypaimon_write(warehouse, "db.t", _batch([4]))
    before = _ours(warehouse)
    assert before == _theirs(warehouse)
    assert compact_table(_table(warehouse), full=True) == 4
    files = [f for s in _table(warehouse).new_scan().plan() for f in s.files]
    assert len(files) == 1 and files[0].first_row_id is None
    assert files[0].write_cols == ("id", "v", "dt", "_ROW_ID", "_SEQUENCE_NUMBER")
    assert (files[0].min_sequence_number, files[0].max_sequence_number) == (1, 3)
    assert _ours(warehouse) == before
    # pypaimon 2.1 ignores a stored _ROW_ID when the file has no _FIRST_ROW_ID (Java's
    # compacted files: Java reads the stored ids, test_java2_row_tracking): it gives null.
    assert [r[:3] + r[4:] for r in _theirs(warehouse)] == [r[:3] + r[4:] for r in before]
    pypaimon_write(warehouse, "db.t", _batch([5]))
    _table(warehouse).write_arrow(_batch([6]))
    assert [r[3] for r in _ours(warehouse)] == [0, 1, 2, 3, 4, 5]
    assert _ours(warehouse)[4:] == _theirs(warehouse)[4:]  # the files appended after it
    assert _next_row_id(warehouse) == 6


def test_pypaimon_reads_our_row_level_changes_and_goes_on(warehouse: str, spark: Any) -> None:
    from sql_ext.session import PaimonSession

    pypaimon_write(warehouse, "db.t", _batch([1, 2, 3]), create=CREATE)
    session = PaimonSession(spark, warehouse=warehouse)
    try:
        session.sql("UPDATE paimon.db.t SET v = 'U' WHERE id = 2")
        session.sql("DELETE FROM paimon.db.t WHERE id = 3")
    finally:
        session.stop()
    ours = _ours(warehouse)
    assert ours == [(1, "v1", "a", 0, 1), (2, "U", "a", 1, 2)]
    # pypaimon 2.1 reads the rewritten file's stored ids as null (see above), the rest exactly
    assert [r[:3] + r[4:] for r in _theirs(warehouse)] == [r[:3] + r[4:] for r in ours]
    pypaimon_write(warehouse, "db.t", _batch([4]))
    assert _next_row_id(warehouse) == 4
    assert (4, "v4", "a", 3, 4) in _ours(warehouse)

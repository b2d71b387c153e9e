"""Row-id and sequence-number assignment of a row-tracking commit (Java's
``RowTrackingCommitUtils``)."""

from __future__ import annotations

import re

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import CorruptMetadata, SchemaError
from paimon_core.format.manifest import EMPTY_STATS, DataFileMeta, FileKind, ManifestEntry
from paimon_core.lifecycle.branch_management import create_branch, merge_branch
from paimon_core.lifecycle.rollback import rollback_to_snapshot
from paimon_core.lifecycle.tag_management import create_tag
from paimon_core.operations.copy import copy_files
from paimon_core.operations.deletion_vectors import delete_positions
from paimon_core.operations.row_tracking import assign_row_tracking
from paimon_core.table import FileStoreTable


def _file(
    name: str,
    rows: int,
    *,
    seq: tuple[int, int] = (0, 0),
    source: int | None = 0,
    first_row_id: int | None = None,
    write_cols: tuple[str, ...] | None = None,
) -> DataFileMeta:
    return DataFileMeta(
        file_name=name,
        file_size=1,
        row_count=rows,
        min_key=b"",
        max_key=b"",
        key_stats=EMPTY_STATS,
        value_stats=EMPTY_STATS,
        min_sequence_number=seq[0],
        max_sequence_number=seq[1],
        schema_id=0,
        level=0,
        file_source=source,
        first_row_id=first_row_id,
        write_cols=write_cols,
    )


def _add(f: DataFileMeta, partition: bytes = b"p") -> ManifestEntry:
    return ManifestEntry(FileKind.ADD, partition, 0, -1, f)


def test_new_files_take_ids_in_commit_order_from_next_row_id() -> None:
    entries = [_add(_file("a", 3, seq=(0, 2))), _add(_file("b", 2, seq=(3, 4)))]
    assigned = assign_row_tracking(7, 10, entries, {})
    a, b = (e.file for e in assigned.entries)
    assert (a.first_row_id, b.first_row_id) == (10, 13)
    assert assigned.next_row_id == 15
    # min 0: both bounds become the snapshot id; a rolled file's own numbers stay (Java)
    assert (a.min_sequence_number, a.max_sequence_number) == (7, 7)
    assert (b.min_sequence_number, b.max_sequence_number) == (3, 4)


def test_no_snapshot_starts_at_zero_and_empty_commit_keeps_counter() -> None:
    assert assign_row_tracking(1, None, [_add(_file("a", 4))], {}).next_row_id == 4
    assert assign_row_tracking(5, 9, [], {}).next_row_id == 9


def test_rewritten_files_keep_their_ids_and_get_the_snapshot_as_max_sequence() -> None:
    rewritten = _file("u", 2, seq=(3, 0), write_cols=("a", "_ROW_ID", "_SEQUENCE_NUMBER"))
    compacted = _file("c", 5, seq=(2, 4), source=1)
    deleted = ManifestEntry(FileKind.DELETE, b"p", 0, -1, _file("old", 5, seq=(0, 0)))
    assigned = assign_row_tracking(9, 20, [deleted, _add(rewritten), _add(compacted)], {})
    d, u, c = (e.file for e in assigned.entries)
    assert d == deleted.file  # a deletion names the live file as it is
    assert u.first_row_id is None and (u.min_sequence_number, u.max_sequence_number) == (3, 9)
    assert c.first_row_id is None and (c.min_sequence_number, c.max_sequence_number) == (2, 4)
    assert assigned.next_row_id == 20


def test_partition_grouping_makes_each_partitions_ids_contiguous() -> None:
    entries = [
        _add(_file("a1", 1), b"a"),
        _add(_file("b1", 2), b"b"),
        _add(_file("a2", 3), b"a"),
    ]
    grouped = assign_row_tracking(1, 0, entries, {})
    assert [(e.file.file_name, e.file.first_row_id) for e in grouped.entries] == [
        ("a1", 0),
        ("a2", 1),
        ("b1", 4),
    ]
    plain = assign_row_tracking(1, 0, entries, {"row-tracking.partition-group-on-commit": "false"})
    assert [e.file.first_row_id for e in plain.entries] == [0, 1, 3]


def test_files_that_come_with_ids_keep_them_and_the_counter_covers_them() -> None:
    copied = _file("x", 5, seq=(4, 4), first_row_id=100)
    assigned = assign_row_tracking(2, 10, [_add(copied), _add(_file("n", 1))], {})
    assert [e.file.first_row_id for e in assigned.entries] == [100, 10]
    assert assigned.next_row_id == 105


def test_blob_files_share_the_ids_of_the_row_file_before_them() -> None:
    entries = [
        _add(_file("r.parquet", 4)),
        _add(_file("b1.blob", 2, write_cols=("pic",))),
        _add(_file("b2.blob", 2, write_cols=("pic",))),
    ]
    assigned = assign_row_tracking(1, 0, entries, {})
    assert [e.file.first_row_id for e in assigned.entries] == [0, 0, 2]
    assert assigned.next_row_id == 4
    with pytest.raises(CorruptMetadata, match="no row file before it"):
        assign_row_tracking(1, 0, entries[1:], {})


def test_a_file_without_file_source_is_refused() -> None:
    with pytest.raises(CorruptMetadata, match="no file source"):
        assign_row_tracking(1, 0, [_add(_file("a", 1, source=None))], {})


# ------------------------------------------------------------------ through a table

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string())])
TRACKED = ["id", "_ROW_ID", "_SEQUENCE_NUMBER"]


def _tracked_table(warehouse: str, name: str = "t", **options: str) -> FileStoreTable:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    return catalog.create_table(
        f"db.{name}",
        SCHEMA,
        partition_keys=["dt"],
        options={"row-tracking.enabled": "true", **options},
    )


def _batch(ids: list[int], dt: str = "a") -> pa.Table:
    return pa.table({"id": ids, "dt": [dt] * len(ids)}, schema=SCHEMA)


def _ids(table: FileStoreTable) -> list[tuple[int, int, int]]:
    fresh = FileSystemCatalog(table.path.rsplit("/", 2)[0]).get_table(table.identifier or "db.t")
    if table.branch_root != fresh.branch_root:
        fresh = fresh.switch_to_branch(table.branch_root.rsplit("branch-", 1)[1])
    rows = fresh.new_read().to_arrow(fresh.new_scan().plan(), TRACKED).to_pylist()
    return sorted((r["id"], r["_ROW_ID"], r["_SEQUENCE_NUMBER"]) for r in rows)


def _next_row_id(table: FileStoreTable) -> int | None:
    latest = table.snapshot_manager.latest_snapshot()
    assert latest is not None
    return latest.next_row_id


def test_overwrite_truncate_and_manifest_compaction_never_reuse_ids(warehouse: str) -> None:
    table = _tracked_table(warehouse)
    table.write_arrow(_batch([1, 2]))
    table.write_arrow(_batch([3]), overwrite=True)
    assert _ids(table) == [(3, 2, 2)]
    table.new_commit().truncate_table()
    assert _next_row_id(table) == 3
    table.new_commit().compact_manifest()
    table.write_arrow(_batch([4], "b"))
    assert _ids(table) == [(4, 3, 5)]
    assert _next_row_id(table) == 4


def test_deletion_vectors_leave_the_other_rows_ids(warehouse: str) -> None:
    """Positions count the rows a deletion vector deletes, as Java's ``returnedPosition``."""
    table = _tracked_table(warehouse, **{"deletion-vectors.enabled": "true"})
    table.write_arrow(_batch([1, 2, 3]))
    (split,) = table.new_scan().plan()
    (f,) = split.files
    assert delete_positions(table, {(split.partition, split.bucket): {f.file_name: [1]}})
    assert _ids(table) == [(1, 0, 1), (3, 2, 1)]
    table.write_arrow(_batch([4]))
    assert _ids(table) == [(1, 0, 1), (3, 2, 1), (4, 3, 3)]
    assert _next_row_id(table) == 4


def test_rollback_takes_the_counter_back_with_the_rows(warehouse: str) -> None:
    """Java 2.0's ``rollbackTo``: the newer snapshots and their files go, their ids are free."""
    table = _tracked_table(warehouse)
    table.write_arrow(_batch([1]))
    table.write_arrow(_batch([2, 3]))
    rollback_to_snapshot(table, 1)
    assert _next_row_id(table) == 1
    table.write_arrow(_batch([4]))
    assert _ids(table) == [(1, 0, 1), (4, 1, 2)]


def test_branches_count_on_their_own_and_a_merge_gives_new_ids(warehouse: str) -> None:
    table = _tracked_table(warehouse)
    table.write_arrow(_batch([1, 2]))
    create_tag(table, "t1", snapshot_id=1)
    create_branch(table, "b", "t1")
    branch = table.switch_to_branch("b")
    branch.write_arrow(_batch([10]))
    table.write_arrow(_batch([3]))
    assert _ids(branch) == [(1, 0, 1), (2, 1, 1), (10, 2, 2)]
    assert _ids(table) == [(1, 0, 1), (2, 1, 1), (3, 2, 2)]
    assert merge_branch(table, "b") == 1
    assert _ids(table) == [(1, 0, 1), (2, 1, 1), (3, 2, 2), (10, 3, 2)]
    assert _next_row_id(table) == 4


def test_copied_files_keep_their_ids_and_the_counter_covers_them(warehouse: str) -> None:
    source = _tracked_table(warehouse, "s")
    source.write_arrow(_batch([1, 2]))
    source.write_arrow(_batch([3]))
    target = _tracked_table(warehouse, "t")
    target.write_arrow(_batch([9], "b"))
    copy_files(source, target)
    assert _ids(target) == [(1, 0, 1), (2, 1, 1), (3, 2, 2), (9, 0, 1)]
    assert _next_row_id(target) == 3
    target.write_arrow(_batch([4], "c"))
    assert (4, 3, 3) in _ids(target)


@pytest.mark.parametrize(
    ("fields", "keys", "options", "error"),
    [
        (["id"], ["id"], {}, "Cannot define primary-key for row tracking table."),
        (["id"], [], {"bucket": "2", "bucket-key": "id"}, "it only support bucket = -1"),
        (["id", "_ROW_ID"], [], {}, "'_ROW_ID' conflicts with existing field names"),
    ],
)
def test_row_tracking_tables_are_append_tables_without_buckets(
    warehouse: str, fields: list[str], keys: list[str], options: dict[str, str], error: str
) -> None:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    schema = pa.schema([pa.field(f, pa.int64(), False) for f in fields])
    with pytest.raises(SchemaError, match=re.escape(error)):
        catalog.create_table(
            "db.t", schema, primary_keys=keys, options={"row-tracking.enabled": "true", **options}
        )
    assert not catalog.table_exists("db.t")

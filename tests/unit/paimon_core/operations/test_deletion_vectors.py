"""Deletion vectors in the core: deleting rows by position, reading them away at every
snapshot, the index manifest combining files as Paimon does, and the maintainers that
compaction and DELETE use."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from paimon_core.exceptions import DeletionVectorUnreadable, InvalidArgument
from paimon_core.format.deletion_vectors import DeletionVector
from paimon_core.format.manifest import FileKind
from paimon_core.format.snapshot import CommitKind
from paimon_core.operations.deletion_vectors import (
    AppendDvMaintainer,
    BucketedDvMaintainer,
    delete_positions,
    deletion_vectors_index,
    snapshot_dv_entries,
)
from paimon_core.table import FileStoreTable
from tests.unit.paimon_core.helpers import kvd_batch, kvd_table

DV = {"deletion-vectors.enabled": "true"}
Layout = dict[tuple[int, ...], tuple[bytes, int, str]]


def layout(table: FileStoreTable) -> Layout:
    """The latest snapshot's files: their k values in file order (deleted rows included)
    -> (partition, bucket, file name)."""
    out: Layout = {}
    read = table.new_read()
    for split in table.new_scan().plan():
        for f in split.files:
            whole = dataclasses.replace(split.with_files([f]), deletion_files=())
            ks = tuple(read.to_arrow([whole]).column("k").to_pylist())
            out[ks] = (split.partition, split.bucket, f.file_name)
    return out


def delete_keys(table: FileStoreTable, doomed: set[int]) -> int | None:
    """DELETE the rows of ``doomed`` keys with deletion vectors, as DELETE does."""
    deletions: dict[tuple[bytes, int], dict[str, list[int]]] = {}
    for ks, (partition, bucket, name) in layout(table).items():
        positions = [i for i, k in enumerate(ks) if k in doomed]
        if positions:
            deletions.setdefault((partition, bucket), {})[name] = positions
    return delete_positions(table, deletions)


def keys_at(table: FileStoreTable, snapshot: int | None = None) -> list[int]:
    kw = {} if snapshot is None else {"snapshot": table.snapshot_manager.snapshot(snapshot)}
    return sorted(table.to_arrow(**kw).column("k").to_pylist())


def dv_entries(table: FileStoreTable, snapshot: int) -> list:
    return snapshot_dv_entries(table, table.snapshot_manager.snapshot(snapshot))


def test_delete_rows_of_an_unaware_append_table_at_every_snapshot(tmp_path: Path) -> None:
    table = kvd_table(str(tmp_path), options=DV)
    table.write_arrow(kvd_batch([1, 2, 3], "a"))
    table.write_arrow(kvd_batch([4, 5], "a"))
    table.write_arrow(kvd_batch([6, 7], "b"))
    assert delete_keys(table, {2, 4}) == 4
    assert delete_keys(table, {3, 6}) == 5
    assert delete_keys(table, {1}) == 6
    assert delete_keys(table, {1}) is None  # already deleted: nothing to commit
    assert [keys_at(table, i) for i in (3, 4, 5, 6)] == [
        [1, 2, 3, 4, 5, 6, 7],
        [1, 3, 5, 6, 7],
        [1, 5, 7],
        [5, 7],
    ]
    snapshot = table.snapshot_manager.snapshot(4)
    assert snapshot.commit_kind == CommitKind.OVERWRITE
    assert snapshot.total_record_count == 7  # deletion vectors leave record counts alone
    read = table.new_read()
    vectors = {
        f.file_name: read._deletion_vector(split, f.file_name)
        for split in table.new_scan().plan()
        for f in split.files
    }
    files = layout(table)
    assert vectors[files[(1, 2, 3)][2]] == DeletionVector.of([0, 1, 2])
    assert vectors[files[(4, 5)][2]] == DeletionVector.of([0])
    assert vectors[files[(6, 7)][2]] == DeletionVector.of([0])


def test_unaware_index_files_are_combined_by_file_name(tmp_path: Path) -> None:
    table = kvd_table(str(tmp_path), options=DV, partition_keys=[])
    table.write_arrow(kvd_batch([1, 2]))
    table.write_arrow(kvd_batch([3, 4]))
    delete_keys(table, {1})
    delete_keys(table, {3})
    first, second = dv_entries(table, 3), dv_entries(table, 4)
    assert len(first) == 1 and len(second) == 2  # the second file's vector in a new file
    assert {e.file_name for e in first} < {e.file_name for e in second}
    delete_keys(table, {2})  # rewrites the index file holding file 1's vector only
    third = dv_entries(table, 5)
    kept = {e.file_name for e in second} & {e.file_name for e in third}
    assert len(third) == 2 and len(kept) == 1
    assert keys_at(table) == [4]


def test_bucketed_tables_keep_one_index_file_per_bucket(tmp_path: Path) -> None:
    options = {**DV, "bucket": "2", "bucket-key": "k"}
    table = kvd_table(str(tmp_path), options=options, partition_keys=[])
    table.write_arrow(kvd_batch(list(range(10))))
    table.write_arrow(kvd_batch(list(range(10, 20))))
    delete_keys(table, {0, 1, 2, 3, 12, 13})
    entries = dv_entries(table, 3)
    assert sorted(e.bucket for e in entries) == [0, 1]
    assert all(e.index_type == "DELETION_VECTORS" for e in entries)
    delete_keys(table, {4, 5})
    after = dv_entries(table, 4)
    assert sorted(e.bucket for e in after) == [0, 1]
    assert not {e.file_name for e in entries} & {e.file_name for e in after if e.bucket == 0}
    assert keys_at(table) == [6, 7, 8, 9, 10, 11, *range(14, 20)]
    assert keys_at(table, 3) == [4, 5, 6, 7, 8, 9, 10, 11, *range(14, 20)]


def test_bucketed_maintainer_restores_merges_removes_and_persists(tmp_path: Path) -> None:
    table = kvd_table(str(tmp_path), options={**DV, "bucket": "1", "bucket-key": "k"})
    table.write_arrow(kvd_batch([1, 2, 3], "a"))
    ((partition, bucket, name),) = layout(table).values()
    empty = BucketedDvMaintainer.restore(table, table.latest_snapshot(), partition, bucket)
    assert empty.persist().is_empty  # nothing changed, nothing written
    empty.notify_new_deletion(name, [2])
    changes = empty.persist()
    assert [e.kind for e in changes.new_index_files] == [FileKind.ADD]
    assert changes.deleted_index_files == ()
    table.new_commit().commit([changes.commit_message(partition, bucket, 1)])
    assert keys_at(table) == [1, 2]

    restored = BucketedDvMaintainer.restore(table, table.latest_snapshot(), partition, bucket)
    assert restored.deletion_vector_of(name) == DeletionVector.of([2])
    restored.merge_new_deletion(name, DeletionVector.of([0]))
    assert restored.deletion_vector_of(name) == DeletionVector.of([0, 2])
    restored.remove_deletion_vector_of(name)
    changes = restored.persist()
    assert changes.new_index_files == ()  # no vector left: the old file is only removed
    assert [e.kind for e in changes.deleted_index_files] == [FileKind.DELETE]
    table.new_commit().commit([changes.commit_message(partition, bucket, 1)])
    assert dv_entries(table, 3) == []
    assert keys_at(table) == [1, 2, 3]


def test_append_maintainer_copies_the_unchanged_vectors_of_a_rewritten_file(
    tmp_path: Path,
) -> None:
    table = kvd_table(str(tmp_path), options=DV, partition_keys=[])
    table.write_arrow(kvd_batch([1, 2]))
    table.write_arrow(kvd_batch([3, 4]))
    files = layout(table)
    partition, a, b = files[(1, 2)][0], files[(1, 2)][2], files[(3, 4)][2]
    maintainer = AppendDvMaintainer.restore(table, table.latest_snapshot(), partition)
    maintainer.notify_new_deletion(a, DeletionVector.of([0]))
    maintainer.notify_new_deletion(b, DeletionVector.of([1]))
    table.new_commit().commit([maintainer.persist().commit_message(partition, 0, -1)])
    (shared,) = dv_entries(table, 3)  # one index file holds both vectors
    maintainer = AppendDvMaintainer.restore(table, table.latest_snapshot(), partition)
    assert maintainer.deletion_vector_of(a) == DeletionVector.of([0])
    maintainer.notify_new_deletion(b, DeletionVector.of([0]))
    changes = maintainer.persist()
    (new,) = changes.new_index_files
    assert [m.data_file_name for m in new.dv_ranges] == [a, b]  # a's vector copied over
    assert [e.file_name for e in changes.deleted_index_files] == [shared.file_name]
    table.new_commit().commit([changes.commit_message(partition, 0, -1)])
    assert [e.file_name for e in dv_entries(table, 4)] == [new.file_name]
    assert keys_at(table) == [2]


def test_corrupt_or_missing_vector_stops_the_read_naming_the_file(tmp_path: Path) -> None:
    table = kvd_table(str(tmp_path), options=DV)
    table.write_arrow(kvd_batch([1, 2, 3]))
    delete_keys(table, {2})
    (entry,) = dv_entries(table, 2)
    path = tmp_path / "db.db" / "t" / "index" / entry.file_name
    data = path.read_bytes()
    path.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    with pytest.raises(DeletionVectorUnreadable, match="checksum") as err:
        table.to_arrow()
    assert str(path) in str(err.value)
    path.unlink()
    with pytest.raises(DeletionVectorUnreadable, match="missing") as err:
        table.to_arrow()
    assert str(path) in str(err.value)


def test_deleting_by_position_needs_deletion_vectors(tmp_path: Path) -> None:
    table = kvd_table(str(tmp_path))
    table.write_arrow(kvd_batch([1]))
    with pytest.raises(InvalidArgument, match=r"deletion-vectors\.enabled"):
        delete_positions(table, {(b"", 0): {"x": [0]}})


def test_rows_with_positions_leave_deleted_rows_out(tmp_path: Path) -> None:
    table = kvd_table(str(tmp_path), options=DV, partition_keys=[])
    table.write_arrow(kvd_batch([10, 11, 12]))
    delete_keys(table, {11})
    (split,) = table.new_scan().plan()
    got = table.new_read().to_arrow_with_positions(split, ["k"])
    assert got.column_names == ["k", "_ROW_POSITION"]
    assert got.to_pylist() == [{"k": 10, "_ROW_POSITION": 0}, {"k": 12, "_ROW_POSITION": 2}]
    pk = kvd_table(str(tmp_path / "pk"), primary_keys=["k"], partition_keys=[])
    pk.write_arrow(kvd_batch([1, 2]))
    pk.write_arrow(kvd_batch([2]))
    (split,) = pk.new_scan().plan()
    rows = pk.new_read().to_arrow_with_positions(split, ["k"]).to_pylist()
    assert sorted((r["k"], r["_ROW_POSITION"], r["_SEQUENCE_NUMBER"]) for r in rows) == [
        (1, 0, 0),
        (2, 0, 2),
        (2, 1, 1),
    ]


@pytest.mark.parametrize("bucket", ["-1", "2"], ids=["unaware", "fixed-bucket"])
def test_compacting_an_append_table_keeps_its_deleted_rows_deleted(
    tmp_path: Path, bucket: str
) -> None:
    """The compacted files take the deleted rows out and the vectors of the files they
    replace leave the index (Java's compaction reads through them and drops them)."""
    from paimon_core.operations.compact import compact_table

    table = kvd_table(
        str(tmp_path),
        options={**DV, "bucket": bucket, **({"bucket-key": "k"} if bucket != "-1" else {})},
    )
    table.write_arrow(kvd_batch([1, 2, 3], "a"))
    delete_keys(table, {2})
    table.write_arrow(kvd_batch([4], "a"))
    table.write_arrow(kvd_batch([5], "a"))
    delete_keys(table, {5})
    compact_table(table, full=True)
    latest = table.snapshot_manager.latest_snapshot()
    assert latest.commit_kind == CommitKind.COMPACT
    assert keys_at(table) == [1, 3, 4]
    live = {f.file_name for s in table.new_scan().plan() for f in s.files}
    vectors = {
        d.data_file_name
        for e in dv_entries(table, latest.snapshot_id)
        for d in deletion_vectors_index(table).deletion_files(e)
    }
    assert vectors <= live
    table.write_arrow(kvd_batch([6], "a"))
    assert keys_at(table) == [1, 3, 4, 6]

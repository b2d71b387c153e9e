"""Manifest merging at commit: full and minor compaction, ADD/DELETE folding, duplicate ADDs."""

from __future__ import annotations

import dataclasses
from typing import Any

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import CommitConflict
from paimon_core.format.commit_message import CommitMessage
from paimon_core.format.manifest import FileKind, ManifestFileMeta
from paimon_core.format.snapshot import CommitKind
from paimon_core.operations.manifest_merge import ManifestMerger, merge_entries
from paimon_core.table import FileStoreTable

SCHEMA = pa.schema([("k", pa.int64()), ("dt", pa.string())])


def _table(warehouse: str) -> FileStoreTable:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    return catalog.create_table("db.t", SCHEMA, partition_keys=["dt"])


def _write(table: FileStoreTable, ks: list[int], dt: str, **kw: Any) -> int | None:
    return table.write_arrow(pa.table({"k": ks, "dt": [dt] * len(ks)}, schema=SCHEMA), **kw)


def _base(table: FileStoreTable) -> list[ManifestFileMeta]:
    return table.manifest_list.read(table.latest_snapshot().base_manifest_list)


def _all(table: FileStoreTable) -> list[ManifestFileMeta]:
    latest = table.latest_snapshot()
    return _base(table) + table.manifest_list.read(latest.delta_manifest_list)


def _entries(table: FileStoreTable, meta: ManifestFileMeta) -> list[tuple[FileKind, str]]:
    return [(e.kind, e.file.file_name) for e in table.manifest_file.read(meta.file_name)]


def _keys(table: FileStoreTable) -> list[int]:
    return sorted(table.to_arrow().column("k").to_pylist())


def _options(**kw: int) -> dict[str, str]:
    names = {
        "target": "manifest.target-file-size",
        "full": "manifest.full-compaction-threshold-size",
        "min_count": "manifest.merge-min-count",
    }
    return {names[k]: str(v) for k, v in kw.items()}


@pytest.mark.parametrize("passes", [True, False], ids=["delta-passes", "delta-below"])
def test_full_compaction_when_delta_passes_threshold(warehouse: str, passes: bool) -> None:
    table = _table(warehouse)
    _write(table, [1], "a")
    _write(table, [2], "b")
    _write(table, [3], "b", overwrite={"dt": "b"})  # deletes the file of key 2
    m_a, m_b, m_overwrite = _all(table)
    assert m_overwrite.num_deleted_files == 1
    # m_a and m_b count as large (untouched base), m_overwrite is the delta with a delete.
    target = min(m_a.file_size, m_b.file_size)
    threshold = m_overwrite.file_size + (0 if passes else 1)
    _write(table.copy(_options(target=target, full=threshold)), [4], "c")
    base = _base(table)
    if not passes:
        assert base == [m_a, m_b, m_overwrite]  # and minor compaction has nothing to do
    else:
        # m_a's partition holds no deleted file: kept as it is; m_b is rewritten without
        # the deleted file, together with the delta's additions.
        assert base[0] == m_a
        assert m_b not in base and m_overwrite not in base
        merged = [e for meta in base[1:] for e in _entries(table, meta)]
        assert [kind for kind, _ in merged] == [FileKind.ADD]
        assert sum(m.num_deleted_files for m in base) == 0
    assert _keys(table) == [1, 3, 4]


def _five_manifests(table: FileStoreTable) -> list[ManifestFileMeta]:
    for k in range(5):
        _write(table, [k], "a")
    metas = _all(table)
    assert len(metas) == 5
    return metas


def test_minor_compaction_when_size_reaches_target(warehouse: str) -> None:
    table = _table(warehouse)
    metas = _five_manifests(table)
    target = sum(m.file_size for m in metas[:3])
    assert sum(m.file_size for m in metas[3:]) < target
    _write(table.copy(_options(target=target, min_count=100)), [9], "a")
    base = _base(table)
    assert len(base) == 3 and base[1:] == metas[3:]
    assert base[0].num_added_files == 3
    assert sorted(_entries(table, base[0])) == sorted(
        e for m in metas[:3] for e in _entries(table, m)
    )
    assert _keys(table) == [0, 1, 2, 3, 4, 9]


@pytest.mark.parametrize("min_count", [5, 6])
def test_minor_compaction_when_count_reaches_merge_min_count(
    warehouse: str, min_count: int
) -> None:
    table = _table(warehouse)
    metas = _five_manifests(table)
    _write(table.copy(_options(min_count=min_count)), [9], "a")
    base = _base(table)
    if min_count == 5:
        assert len(base) == 1 and base[0].num_added_files == 5
    else:
        assert base == metas
    assert _keys(table) == [0, 1, 2, 3, 4, 9]


def test_add_and_later_delete_of_one_file_cancel(warehouse: str) -> None:
    table = _table(warehouse)
    _write(table, [1], "a")
    _write(table, [2], "a", overwrite={"dt": "a"})
    first, second = _all(table)
    (gone,) = _entries(table, first)
    assert (FileKind.DELETE, gone[1]) in _entries(table, second)
    _write(table.copy(_options(min_count=2)), [3], "a")
    (merged,) = _base(table)
    names = [name for _, name in _entries(table, merged)]
    assert len(names) == 1 and gone[1] not in names
    assert [kind for kind, _ in _entries(table, merged)] == [FileKind.ADD]
    assert merged.num_deleted_files == 0
    assert _keys(table) == [2, 3]
    # In one fold: ADD then DELETE leave nothing; a DELETE alone stays (its ADD is elsewhere).
    add = table.manifest_file.read(first.file_name)[0]
    delete = next(
        e for e in table.manifest_file.read(second.file_name) if e.kind == FileKind.DELETE
    )
    assert merge_entries([add, delete]) == {}
    assert list(merge_entries([delete]).values()) == [delete]


def test_duplicate_add_raises(warehouse: str) -> None:
    table = _table(warehouse)
    _write(table, [1], "a")
    (meta,) = _all(table)
    (entry,) = table.manifest_file.read(meta.file_name)
    with pytest.raises(CommitConflict, match=f"{entry.file.file_name} which is already added"):
        merge_entries([entry, entry])
    written: list[str] = []
    types = [f.type for f in table.schema.partition_fields]
    merger = ManifestMerger(table.manifest_file, types, 1 << 20, 2, 1 << 30, written=written)
    with pytest.raises(CommitConflict, match="already added"):
        merger.merge([meta, meta])
    assert written == []


def test_merges_of_this_process_copy_records_that_encode_the_entries(warehouse: str) -> None:
    """A merge rewrites the entries of manifests this process wrote by copying their
    record bytes (``read_for_rewrite``): the merged files are the ones a fresh encoding of
    the decoded entries gives, from any process's point of view."""
    from paimon_core.format.manifest import (
        MANIFEST_CACHE,
        deserialize_manifest,
        read_avro_container,
        serialize_manifest,
    )

    table = _table(warehouse)
    merging = table.copy(_options(min_count=3))
    for k in range(12):  # merges every few commits: merged manifests are merged again
        _write(merging, [k], "ab"[k % 2])
    _write(merging, [0], "a", overwrite={"dt": "a"})  # DELETEs of files of merged manifests
    for k in range(12, 16):
        _write(merging, [k], "b")
    metas = _all(table)
    assert len(metas) < 17 and any(m.num_added_files > 1 for m in metas)
    for meta in metas:
        with open(table.manifest_file.path(meta.file_name), "rb") as f:
            data = f.read()
        entries = deserialize_manifest(data)
        assert read_avro_container(data)[1] == read_avro_container(serialize_manifest(entries))[1]
    MANIFEST_CACHE.clear()
    assert _keys(table) == [0, 1, 3, 5, 7, 9, 11, 12, 13, 14, 15]
    assert _keys(FileStoreTable.load(table.path)) == _keys(table)


def _files(root: str) -> set[str]:
    import os

    return {os.path.join(d, f) for d, _, names in os.walk(root) for f in names}


def test_compact_manifest_merges_all_manifests_into_a_compact_snapshot(warehouse: str) -> None:
    table = _table(warehouse)
    for k in range(12):
        _write(table, [k], "ab"[k % 2])
    _write(table, [100], "a", overwrite={"dt": "a"})  # deletes the six files of partition a
    before = _all(table)
    latest = table.latest_snapshot()
    assert len(before) == 13 and sum(m.num_deleted_files for m in before) == 6
    files = _files(table.path)

    new_id = table.new_commit().compact_manifest()

    snapshot = table.latest_snapshot()
    assert new_id == snapshot.snapshot_id == latest.snapshot_id + 1
    assert snapshot.commit_kind == CommitKind.COMPACT
    assert (snapshot.total_record_count, snapshot.delta_record_count) == (7, 0)
    assert snapshot.schema_id == latest.schema_id
    after = _all(table)
    assert len(after) == 1 and after[0].num_deleted_files == 0
    assert after[0].num_added_files == 7  # 6 files of partition b, 1 of a
    assert table.manifest_list.read(snapshot.delta_manifest_list) == []
    assert _keys(table) == [1, 3, 5, 7, 9, 11, 100]
    # Nothing was deleted: the older snapshots read as before.
    assert files <= _files(table.path)

    def keys_at(snapshot_id: int) -> list[int]:
        old = table.snapshot_manager.snapshot(snapshot_id)
        return sorted(table.to_arrow(snapshot=old).column("k").to_pylist())

    assert keys_at(latest.snapshot_id) == [1, 3, 5, 7, 9, 11, 100]
    assert keys_at(12) == list(range(12))
    # Merged once, there is nothing left to merge: no second snapshot.
    assert table.new_commit().compact_manifest() is None
    assert table.latest_snapshot() == snapshot
    # The next commit builds on the merged list.
    _write(table, [200], "b")
    assert _keys(table) == [1, 3, 5, 7, 9, 11, 100, 200]
    assert _base(table) == after


def test_compact_manifest_of_an_empty_table_or_a_single_manifest_does_nothing(
    warehouse: str,
) -> None:
    table = _table(warehouse)
    assert table.new_commit().compact_manifest() is None
    _write(table, [1], "a")
    assert table.new_commit().compact_manifest() is None
    assert table.latest_snapshot().snapshot_id == 1


def test_compact_manifest_keeps_large_manifests_without_deletes(warehouse: str) -> None:
    table = _table(warehouse)
    three = pa.table({"k": [1, 5, 6], "dt": ["a", "c", "d"]}, schema=SCHEMA)
    table.write_arrow(three)  # one manifest of three files
    (large,) = _all(table)
    for k in range(2, 5):
        _write(table, [k], "b")
    small = _all(table)[1:]
    target = large.file_size
    assert all(m.file_size < target for m in small)  # one file each
    table.copy(_options(target=target)).new_commit().compact_manifest()
    after = _all(table)
    assert after[0] == large and len(after) == 2 and after[1].num_added_files == 3
    assert _keys(table) == [1, 2, 3, 4, 5, 6]


def test_compact_manifest_loses_the_race_and_retries_on_the_new_snapshot(
    warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = _table(warehouse)
    for k in range(3):
        _write(table, [k], "a")
    manager = table.snapshot_manager
    real_commit = manager.commit
    calls: list[int] = []

    def racing_commit(snapshot: Any) -> bool:
        calls.append(snapshot.snapshot_id)
        if len(calls) == 1:  # another writer takes the id first
            _write(FileStoreTable.load(table.path), [9], "a")
            return False
        return real_commit(snapshot)

    monkeypatch.setattr(manager, "commit", racing_commit)
    manifests_before = set(_files(table.path + "/manifest"))
    new_id = table.new_commit().compact_manifest()
    assert calls == [4, 5] and new_id == 5
    assert _keys(table) == [0, 1, 2, 9]
    assert len(_all(table)) == 1
    # The losing attempt's manifests were removed; the winner's and every older one remain.
    left = set(_files(table.path + "/manifest"))
    assert manifests_before <= left
    referenced = {m.file_name for m in _all(table)}
    for sid in manager.list_snapshot_ids():
        s = manager.snapshot(sid)
        for name in (s.base_manifest_list, s.delta_manifest_list):
            referenced.add(name)
            referenced.update(m.file_name for m in table.manifest_list.read(name))
    assert {p.rsplit("/", 1)[1] for p in left} == referenced


def test_full_compaction_keeps_a_file_added_again_with_the_same_identity(
    warehouse: str,
) -> None:
    """A file whose meta goes away and comes back identical (its index rewritten away and
    back: DELETE A, ADD B, DELETE B, ADD A) keeps its last ADD; Paimon's full compaction
    drops every ADD of an identity it saw deleted, the live one too."""
    table = _table(warehouse)
    _write(table, [1], "a")
    (entry,) = table.new_scan().read_entries(table.latest_snapshot())
    original = entry.file
    indexed = dataclasses.replace(original, embedded_index=b"an index")
    for before, after in ((original, indexed), (indexed, original)):
        table.new_commit().commit(
            [
                CommitMessage(
                    entry.partition, entry.bucket, entry.total_buckets,
                    compact_before=(before,), compact_after=(after,),
                )
            ]
        )  # fmt: skip
    assert _keys(table) == [1]
    types = [f.type for f in table.schema.partition_fields]
    merger = ManifestMerger(table.manifest_file, types, 1 << 20, 30, 1, written=[])
    merged = merger.merge(_all(table))
    entries = [e for m in merged for e in table.manifest_file.read(m.file_name)]
    assert [(e.kind, e.file) for e in entries] == [(FileKind.ADD, original)]

"""Dynamic buckets: HASH index bytes, assignment rules, index replacement, pypaimon interop."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import HashIndexUnreadable, MetadataFormatError
from paimon_core.format.index_manifest import serialize_index_manifest
from paimon_core.format.manifest import IndexManifestEntry
from paimon_core.format.types import BIGINT
from paimon_core.operations.bucket import hash_keys
from paimon_core.operations.dynamic_bucket import (
    HASH_INDEX,
    PartitionIndex,
    _Bucket,
    deserialize_hash_index,
    serialize_hash_index,
)
from paimon_core.table import FileStoreTable
from tests.interop.helpers import pypaimon_commit

SCHEMA = pa.schema(
    [pa.field("k", pa.int64(), False), ("v", pa.string()), pa.field("dt", pa.string(), False)]
)


def _table(warehouse: str, name: str = "t", **options: str) -> FileStoreTable:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    return catalog.create_table(
        f"db.{name}",
        SCHEMA,
        partition_keys=["dt"],
        primary_keys=["dt", "k"],
        options={"bucket": "-1", **options},
    )


def _batch(ks: list[int], tag: str = "v", dt: str = "d1") -> pa.Table:
    return pa.table({"k": ks, "v": [f"{tag}{k}" for k in ks], "dt": [dt] * len(ks)}, schema=SCHEMA)


def _hashes(keys: list[int]) -> np.ndarray:
    return hash_keys([pa.array(keys, pa.int64())], [BIGINT(False)])


def _index(table: FileStoreTable) -> list[Any]:
    snapshot = table.snapshot_manager.latest_snapshot()
    return sorted(
        table.index_manifest_file.read(snapshot.index_manifest),
        key=lambda e: (e.partition, e.bucket),
    )


def _index_hashes(table: FileStoreTable, entry: Any) -> set[int]:
    data = (Path(table.path) / "index" / entry.file_name).read_bytes()
    return set(deserialize_hash_index(data).tolist())


def _bucket_of_keys(table: FileStoreTable) -> dict[int, str]:
    placed: dict[int, str] = {}
    for d, _, files in os.walk(table.path):
        for f in files:
            if f.startswith("data-"):
                for k in pq.ParquetFile(os.path.join(d, f)).read().column("k").to_pylist():
                    placed.setdefault(k, os.path.basename(d))
    return placed


def _rows(table: FileStoreTable) -> list[tuple]:
    return sorted((r["k"], r["v"]) for r in table.to_arrow().to_pylist())


def test_index_bytes_equal_the_pypaimon_golden_file() -> None:
    # 05-pkdyn-index-files-hex.txt: the HASH file of keys 1..5 (BIGINT) of one bucket
    data = serialize_hash_index(_hashes([3, 1, 5, 2, 4, 1]))
    assert data.hex() == "d206e5470f8248f44fe4bbf0564770ca5759f99e"
    assert sorted(deserialize_hash_index(data).tolist()) == sorted(
        _hashes([1, 2, 3, 4, 5]).tolist()
    )
    with pytest.raises(MetadataFormatError, match="multiple of 4"):
        deserialize_hash_index(b"\x00\x00\x01")


def test_partition_index_follows_hash_bucket_assigner_rules() -> None:
    existing = {
        0: _Bucket(None, np.array([10, 11], np.int32)),
        1: _Bucket(None, np.array([20], np.int32)),
    }
    index = PartitionIndex(existing, target_row_num=2)
    # known hashes keep their bucket; new ones fill bucket 1, then open bucket 2, then 3
    got = index.assign(np.array([20, 10, 30, 31, 30, 32, 33, 11], np.int32))
    assert got.tolist() == [1, 0, 1, 2, 1, 2, 3, 0]
    assert existing[1].all_hashes().tolist() == [20, 30]
    assert existing[2].all_hashes().tolist() == [31, 32]
    capped = PartitionIndex(
        {0: _Bucket(None, np.array([1, 2], np.int32))}, target_row_num=2, max_buckets=1
    )
    assert capped.assign(np.array([5], np.int32)).tolist() == [0]


def test_overlapping_writes_update_in_place_and_replace_index_files(warehouse: str) -> None:
    table = _table(warehouse)
    table.write_arrow(_batch([1, 2, 3, 4, 5]))
    (first,) = _index(table)
    assert (first.index_type, first.bucket, first.row_count) == (HASH_INDEX, 0, 5)
    write = table.new_write()
    write.write_arrow(_batch([3, 4, 5, 6, 7, 8], "w"))
    messages = write.prepare_commit()
    (message,) = messages
    assert message.deleted_index_files == (first,)
    assert message.new_index_files[0].row_count == 8
    table.new_commit().commit(messages)
    (second,) = _index(table)
    assert second.file_name != first.file_name and second.row_count == 8
    assert _index_hashes(table, second) == set(_hashes(list(range(1, 9))).tolist())
    assert _rows(table) == [(1, "v1"), (2, "v2")] + [(k, f"w{k}") for k in range(3, 9)]
    # keys already known write no new index file
    write = table.new_write()
    write.write_arrow(_batch([1, 2], "x"))
    (message,) = write.prepare_commit()
    assert message.new_index_files == () and message.deleted_index_files == ()


def test_target_row_num_spreads_new_keys_and_keeps_old_keys_in_place(warehouse: str) -> None:
    table = _table(warehouse, **{"dynamic-bucket.target-row-num": "2"})
    table.write_arrow(_batch([1, 2, 3, 4, 5]))
    table.write_arrow(_batch([5, 1, 6], "w"))
    placed = _bucket_of_keys(table)
    assert placed == {
        1: "bucket-0",
        2: "bucket-0",
        3: "bucket-1",
        4: "bucket-1",
        5: "bucket-2",
        6: "bucket-2",
    }
    assert {e.bucket: e.row_count for e in _index(table)} == {0: 2, 1: 2, 2: 2}
    assert _rows(table) == [(1, "w1"), (2, "v2"), (3, "v3"), (4, "v4"), (5, "w5"), (6, "w6")]
    entries = table.new_scan().read_entries(table.latest_snapshot())
    assert {e.total_buckets for e in entries} == {-1}


def test_partitions_have_their_own_index(warehouse: str) -> None:
    table = _table(warehouse)
    table.write_arrow(pa.concat_tables([_batch([1, 2], dt="a"), _batch([1], dt="b")]))
    assert [e.row_count for e in _index(table)] == [2, 1]
    assert len(_rows(table)) == 3


def test_overwrite_starts_a_fresh_index(warehouse: str) -> None:
    table = _table(warehouse)
    table.write_arrow(_batch([1, 2, 3]))
    table.write_arrow(_batch([9]), overwrite=True)
    (entry,) = _index(table)
    assert _index_hashes(table, entry) == set(_hashes([9]).tolist())
    assert _rows(table) == [(9, "v9")]


def test_pypaimon_and_we_share_the_index(warehouse: str) -> None:
    from pypaimon import CatalogFactory, Schema

    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db", True)
    schema = Schema.from_pyarrow_schema(
        SCHEMA, partition_keys=["dt"], primary_keys=["dt", "k"], options={"bucket": "-1"}
    )
    catalog.create_table("db.t", schema, False)

    def pypaimon_write(data: pa.Table) -> None:
        pypaimon_commit(catalog.get_table("db.t"), data)

    def pypaimon_rows() -> list[tuple]:
        builder = catalog.get_table("db.t").new_read_builder()
        rows = builder.new_read().to_arrow(builder.new_scan().plan().splits()).to_pylist()
        return sorted((r["k"], r["v"]) for r in rows)

    pypaimon_write(_batch([1, 2, 3]))
    ours = FileStoreTable.load(os.path.join(warehouse, "db.db", "t"))
    ours.write_arrow(_batch([2, 3, 4], "ours"))
    pypaimon_write(_batch([4, 5], "theirs"))
    expected = [(1, "v1"), (2, "ours2"), (3, "ours3"), (4, "theirs4"), (5, "theirs5")]
    assert pypaimon_rows() == expected
    assert _rows(ours) == expected
    (entry,) = _index(ours)
    assert entry.row_count == 5


# --------------------------------------------------------------- damaged HASH index files


def _three_buckets(warehouse: str) -> FileStoreTable:
    """Keys 0..99 in buckets 0 (0..39), 1 (40..79) and 2 (80..99)."""
    table = _table(warehouse, **{"dynamic-bucket.target-row-num": "40"})
    table.write_arrow(_batch(list(range(100))))
    assert {e.bucket: e.row_count for e in _index(table)} == {0: 40, 1: 40, 2: 20}
    return table


def _files(table: FileStoreTable) -> dict[str, bytes]:
    root = Path(table.path)
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _refused(table: FileStoreTable, data: pa.Table, match: str) -> None:
    """The write of ``data`` fails with ``match`` and leaves the table as it was."""
    before = _files(table)
    rows = _rows(table)
    with pytest.raises(HashIndexUnreadable, match=match) as err:
        table.write_arrow(data)
    assert "\n" not in str(err.value)
    assert _files(table) == before
    assert _rows(table) == rows


def test_a_garbage_index_file_of_the_right_size_stops_the_write(warehouse: str) -> None:
    table = _three_buckets(warehouse)
    entry = next(e for e in _index(table) if e.bucket == 1)
    path = Path(table.path) / "index" / entry.file_name
    path.write_bytes(np.random.default_rng(19).bytes(entry.file_size))
    # Used as it is, keys 40..79 would be new keys again: placed in other buckets, 40
    # primary keys would be there twice.
    _refused(table, _batch(list(range(100)), "w"), f"{entry.file_name}.*bucket 1")


def _index_file(table: FileStoreTable, bucket: int) -> tuple[IndexManifestEntry, Path]:
    entry = next(e for e in _index(table) if e.bucket == bucket)
    return entry, Path(table.path) / "index" / entry.file_name


def _edit_index_manifest(
    table: FileStoreTable, edit: Callable[[list[IndexManifestEntry]], list[IndexManifestEntry]]
) -> None:
    """Rewrite the latest snapshot's index manifest in place with ``edit`` of its entries."""
    name = table.snapshot_manager.latest_snapshot().index_manifest
    path = Path(table.path) / "manifest" / name
    path.write_bytes(serialize_index_manifest(edit(table.index_manifest_file.read(name))))


def test_an_index_file_of_another_size_stops_the_write(warehouse: str) -> None:
    table = _three_buckets(warehouse)
    entry, path = _index_file(table, 2)
    path.write_bytes(path.read_bytes() + bytes(4))
    _refused(
        table,
        _batch([1, 200]),
        f"{entry.file_name} of bucket 2 \\(partition dt=d1\\) is corrupt: it has 84 bytes, "
        "the index manifest says 80",
    )


def test_an_index_entry_whose_row_count_is_not_its_size_stops_the_write(warehouse: str) -> None:
    table = _three_buckets(warehouse)
    entry, _ = _index_file(table, 0)
    _edit_index_manifest(
        table,
        lambda es: [dataclasses.replace(e, row_count=39) if e == entry else e for e in es],
    )
    _refused(table, _batch([1]), f"{entry.file_name}.*says 39 hashes in 160 bytes")


def test_a_missing_index_file_stops_the_write(warehouse: str) -> None:
    table = _three_buckets(warehouse)
    entry, path = _index_file(table, 1)
    path.unlink()
    _refused(table, _batch([1]), f"{entry.file_name} of bucket 1 .*is missing")


def test_hashes_shared_by_two_buckets_stop_the_write(warehouse: str) -> None:
    table = _three_buckets(warehouse)
    first, first_path = _index_file(table, 0)
    second, second_path = _index_file(table, 1)
    second_path.write_bytes(first_path.read_bytes())  # the same size: 40 hashes each
    _refused(
        table,
        _batch([1]),
        f"{first.file_name} of bucket 0 and .*{second.file_name} of bucket 1 .*share 40 hashes",
    )


def test_a_hash_held_twice_by_one_file_stops_the_write(warehouse: str) -> None:
    table = _three_buckets(warehouse)
    entry, path = _index_file(table, 2)
    data = path.read_bytes()
    path.write_bytes(data[:-4] + data[:4])
    _refused(table, _batch([1]), f"{entry.file_name} of bucket 2 .*holds 1 hash more than once")


def test_a_bucket_with_data_and_no_index_file_is_rebuilt_from_its_data(warehouse: str) -> None:
    """Keys already in the bucket stay in it (read as empty, Java's assigner would place them
    anew: a key in two buckets), and the rebuilt index file is committed with the write."""
    from paimon_core.lifecycle.check import check_table

    table = _three_buckets(warehouse)
    _edit_index_manifest(table, lambda es: [e for e in es if e.bucket != 1])
    assert any(p.kind == "mismatch" for p in check_table(table, deep=True))
    table.write_arrow(_batch([45, 100000], tag="w"))
    rows = dict(_rows(table))
    assert len(table.to_arrow()) == 101 and rows[45] == "w45" and rows[100000] == "w100000"
    assert {e.bucket: e.row_count for e in _index(table)} == {0: 40, 1: 40, 2: 21}
    # Only the snapshot edited above still lacks the file.
    assert [p.needed_by for p in check_table(table, deep=True)] == ["snapshot 1"]


def test_an_overwrite_of_the_whole_table_keeps_the_index_of_what_it_wrote(
    warehouse: str,
) -> None:
    """``write_arrow(overwrite={})`` wrote with a writer that was not overwriting: keys
    already indexed got no new index file, and the commit dropped the old one."""
    table = _table(warehouse)
    table.write_arrow(_batch([1, 2], dt="d2"))
    table.write_arrow(_batch([2, 3], tag="w", dt="d2"), overwrite={})
    assert sorted(e.row_count for e in _index(table)) == [2]
    table.write_arrow(_batch([2], tag="x", dt="d2"))
    assert sorted(r["k"] for r in table.to_arrow().to_pylist()) == [2, 3]


def test_only_the_partitions_written_are_checked(warehouse: str) -> None:
    table = _three_buckets(warehouse)
    table.write_arrow(_batch([1, 2], dt="d2"))
    (d2,) = [e for e in _index(table) if e.row_count == 2]
    path = Path(table.path) / "index" / d2.file_name
    path.write_bytes(bytes(len(path.read_bytes())))
    # d1 is written: its index is sound; d2's damage is for d2's writes to find
    table.write_arrow(_batch([5, 500], "w"))
    assert (5, "w5") in _rows(table) and len(_rows(table)) == 103
    _refused(table, _batch([1], dt="d2"), "partition dt=d2")


def test_an_overwrite_does_not_need_the_old_index(warehouse: str) -> None:
    table = _three_buckets(warehouse)
    _, path = _index_file(table, 1)
    path.write_bytes(np.random.default_rng(1).bytes(len(path.read_bytes())))
    table.write_arrow(_batch([7, 8]), overwrite=True)
    assert _rows(table) == [(7, "v7"), (8, "v8")]

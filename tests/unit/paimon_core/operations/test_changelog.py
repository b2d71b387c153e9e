"""Changelog producers: ``input`` (every write's input rows as changelog files) and
``full-compaction`` (the changes a full compaction makes), as Java's ``MergeTreeWriter`` and
``FullChangelogMergeTreeCompactRewriter`` write them, committed in the snapshot's changelog
manifest list and read by incremental queries."""

from __future__ import annotations

import os
from typing import Any

import pyarrow as pa
import pytest

from paimon_core.exceptions import CommitConflict, SchemaError
from paimon_core.operations.compact import compact_table
from paimon_core.operations.incremental import plan_incremental
from paimon_core.operations.split_read import ROW_KINDS, SplitRead
from paimon_core.table import FileStoreTable
from tests.unit.paimon_core.helpers import (
    KVD_SCHEMA,
    changelog_entries,
    changelog_rows,
    kvd_batch,
    kvd_table,
)


def _table(warehouse: str, producer: str, **options: str) -> FileStoreTable:
    options = {"bucket": "1", "changelog-producer": producer, **options}
    return kvd_table(warehouse, primary_keys=["k", "dt"], options=options)


def _rows(ks: list[int], vs: list[str]) -> pa.Table:
    return pa.table({"k": ks, "v": vs, "dt": ["a"] * len(ks)}, schema=KVD_SCHEMA)


def _deletes(table: FileStoreTable, ks: list[int]) -> int | None:
    return table.write_arrow(kvd_batch(ks), row_kinds=pa.array([3] * len(ks), pa.int8()))


def _bucket_files(table: FileStoreTable) -> list[str]:
    return sorted(os.listdir(f"{table.path}/dt=a/bucket-0"))


def _incremental(table: FileStoreTable, **options: str) -> list[tuple]:
    moved = table.copy(options)
    reader = SplitRead(moved, keep_delete=True)
    return [
        (r["k"], r["v"], ROW_KINDS[r["_VALUE_KIND"]])
        for s in plan_incremental(moved).splits
        for r in reader.read(s, ["k", "v"]).to_pylist()
    ]


def test_input_writes_every_input_row_as_changelog(warehouse: str) -> None:
    table = _table(warehouse, "input")
    table.write_arrow(_rows([2, 1, 1], ["a", "b", "c"]))
    names = _bucket_files(table)
    assert [n.split("-")[0] for n in names] == ["changelog", "data"]
    assert names[0].endswith("-0.parquet")
    snapshot = table.latest_snapshot()
    assert snapshot is not None and snapshot.changelog_manifest_list
    assert snapshot.changelog_record_count == 3
    (entry,) = changelog_entries(table, snapshot)
    meta = entry.file
    assert (meta.file_name, meta.level, meta.file_source, meta.row_count) == (names[0], 0, 0, 3)
    assert (meta.min_sequence_number, meta.max_sequence_number) == (0, 2)
    # Unmerged, in the write buffer's order: key, then sequence number.
    assert changelog_rows(table, snapshot) == [
        (1, "b", "+I", 1),
        (1, "c", "+I", 2),
        (2, "a", "+I", 0),
    ]
    _deletes(table, [2])
    deleted = table.latest_snapshot()
    assert deleted is not None and deleted.changelog_record_count == 1
    assert changelog_rows(table, deleted) == [(2, "v2", "-D", 3)]
    assert changelog_entries(table, deleted)[0].file.delete_row_count == 1
    assert table.to_arrow().to_pylist() == [{"k": 1, "v": "c", "dt": "a"}]
    # 'auto' reads the changelog when a producer is set; 'delta' the merged data files.
    changes = [(1, "b", "+I"), (1, "c", "+I"), (2, "a", "+I"), (2, "v2", "-D")]
    assert sorted(_incremental(table, **{"incremental-between": "0,2"})) == changes
    delta = {"incremental-between": "0,2", "incremental-between-scan-mode": "delta"}
    assert sorted(_incremental(table, **delta)) == [(1, "c", "+I"), (2, "a", "+I"), (2, "v2", "-D")]


def test_no_changelog_without_input_producer_or_on_overwrite(warehouse: str) -> None:
    for producer, name in (("none", "n"), ("full-compaction", "f")):
        table = _table(f"{warehouse}/{name}", producer)
        table.write_arrow(kvd_batch([1, 2]))
        snapshot = table.latest_snapshot()
        assert snapshot is not None and snapshot.changelog_manifest_list is None
        assert all(n.startswith("data-") for n in _bucket_files(table))
    table = _table(f"{warehouse}/i", "input")
    table.write_arrow(kvd_batch([1]), overwrite=True)  # Java commits no changelog then
    snapshot = table.latest_snapshot()
    assert snapshot is not None and snapshot.changelog_manifest_list is None
    assert all(n.startswith("data-") for n in _bucket_files(table))


def test_changelog_file_options(warehouse: str) -> None:
    table = _table(
        warehouse,
        "input",
        **{"changelog-file.prefix": "cl-", "changelog-file.format": "avro"},
    )
    table.write_arrow(kvd_batch([1]))
    names = _bucket_files(table)
    assert names[0].startswith("cl-") and names[0].endswith("-0.avro")
    assert names[1].startswith("data-") and names[1].endswith(".parquet")
    snapshot = table.latest_snapshot()
    assert snapshot is not None
    assert changelog_rows(table, snapshot) == [(1, "v1", "+I", 0)]


def test_producer_validated_as_paimon(warehouse: str) -> None:
    with pytest.raises(SchemaError, match="Can not set changelog-producer on table without"):
        kvd_table(warehouse, options={"changelog-producer": "input"})
    with pytest.raises(SchemaError, match="Could not parse value 'sometimes'"):
        _table(warehouse, "sometimes")
    assert not os.path.exists(f"{warehouse}/db.db/t")


def test_aborted_writes_leave_no_changelog_files(warehouse: str) -> None:
    table = _table(warehouse, "input", **{"write-buffer-size": "1 b"})  # every batch flushes
    write = table.new_write()
    write.write_arrow(kvd_batch([1, 2]))
    messages = write.prepare_commit()
    assert [len(m.changelog_files) for m in messages] == [1]
    table.new_commit().abort(messages)
    assert _bucket_files(table) == []
    with table.new_write() as write:
        write.write_arrow(kvd_batch([3]))
        write.prepare_commit()
        write.write_arrow(kvd_batch([4]), row_kinds=pa.array([3], pa.int8()))
        assert len(_bucket_files(table)) == 4  # written, not handed out: close drops them
    assert len(_bucket_files(table)) == 2  # what prepare_commit handed out stays


def test_full_compaction_changelog(warehouse: str) -> None:
    table = _table(warehouse, "full-compaction")
    table.write_arrow(kvd_batch([1, 2, 3]))
    # The first full compaction upgrades the lone level-0 file: each of its rows is a +I.
    first = compact_table(table)
    assert first is not None
    snapshot = table.snapshot_manager.snapshot(first)
    assert changelog_rows(table, snapshot) == [
        (1, "v1", "+I", 0),
        (2, "v2", "+I", 1),
        (3, "v3", "+I", 2),
    ]
    (entry,) = changelog_entries(table, snapshot)
    assert entry.file.level == 5 and entry.file.file_source == 0
    assert entry.file.file_name.startswith("changelog-")
    table.write_arrow(_rows([1, 4, 1], ["x", "y", "z"]))
    _deletes(table, [2, 5])
    table.write_arrow(_rows([3], ["v3"]))
    second = compact_table(table)
    assert second is not None
    snapshot = table.snapshot_manager.snapshot(second)
    # Changed keys: -U old, +U new (sequence numbers of the records copied); a new key +I;
    # a deleted key -D; rewriting 3 with its value is still an update (no row-deduplicate);
    # deleting 5, never written, is nothing.
    assert changelog_rows(table, snapshot) == [
        (1, "v1", "-U", 0),
        (1, "z", "+U", 5),
        (2, "v2", "-D", 1),
        (3, "v3", "-U", 2),
        (3, "v3", "+U", 8),
        (4, "y", "+I", 4),
    ]
    assert snapshot.changelog_record_count == 6
    assert sorted(table.to_arrow().column("k").to_pylist()) == [1, 3, 4]
    # Nothing changed since: a full compaction of one top-level file does nothing.
    assert compact_table(table) is None
    # Incremental reads of the range see the compactions' changelogs only.
    assert _incremental(table, **{"incremental-between": f"{first},{second}"}) == [
        (k, v, kind) for k, v, kind, _ in changelog_rows(table, snapshot)
    ]


def test_full_compaction_row_deduplicate(warehouse: str) -> None:
    table = _table(
        warehouse,
        "full-compaction",
        **{
            "changelog-producer.row-deduplicate": "true",
            "changelog-producer.row-deduplicate-ignore-fields": "v",
        },
    )
    table.write_arrow(kvd_batch([1, 2]))
    compact_table(table)
    table.write_arrow(_rows([1, 2], ["v1", "changed"]))  # v is ignored: both unchanged
    table.write_arrow(_rows([3], ["new"]))
    snapshot_id = compact_table(table)
    assert snapshot_id is not None
    snapshot = table.snapshot_manager.snapshot(snapshot_id)
    assert changelog_rows(table, snapshot) == [(3, "new", "+I", 4)]


def test_a_conflicting_compaction_removes_its_changelog_files(warehouse: str) -> None:
    table = _table(warehouse, "full-compaction")
    table.write_arrow(kvd_batch([1]))
    table.write_arrow(kvd_batch([2]))

    def runner(func, tasks):  # type: ignore[no-untyped-def]
        messages = [func(t) for t in tasks]
        assert [len(m.changelog_files) for m in messages] == [1]
        table.new_commit().truncate_table()  # removes what was compacted
        return messages

    with pytest.raises(CommitConflict):
        compact_table(table, runner=runner)
    added = table.new_scan().read_all_entries(_lists(table))
    # Only the two files the writes committed remain (expiry removes them later).
    assert _bucket_files(table) == sorted({e.file.file_name for e in added})


def _lists(table: FileStoreTable) -> list[str]:
    """The delta lists of every snapshot: what the table's commits added."""
    return [s.delta_manifest_list for s in table.snapshot_manager.snapshots()]


def test_delta_commits_make_every_write_a_full_compaction_with_changelog(
    warehouse: str,
) -> None:
    """``full-compaction.delta-commits`` > 0: each batch write fully compacts the buckets it
    wrote (Paimon-Spark's ``DataWrite.preCommit``), so a full-compaction producer gets its
    changelog from writes alone."""
    table = _table(warehouse, "full-compaction", **{"full-compaction.delta-commits": "1"})
    table.write_arrow(kvd_batch([1, 2]))
    table.write_arrow(_rows([1], ["x"]))
    kinds = [str(s.commit_kind) for s in table.snapshot_manager.snapshots()]
    assert kinds == ["APPEND", "COMPACT", "APPEND", "COMPACT"]
    latest = table.latest_snapshot()
    assert latest is not None
    assert changelog_rows(table, latest) == [(1, "v1", "-U", 0), (1, "x", "+U", 2)]
    levels = {e.file.level for e in table.new_scan().read_entries(latest)}
    assert levels == {5}


@pytest.mark.parametrize(
    ("options", "first"),
    [
        ({}, [(1, "v1", "+I", 0), (2, "v2", "+I", 1)]),
        ({"deletion-vectors.enabled": "true"}, [(1, "v1", "+I", 0), (2, "v2", "+I", 1)]),
        ({"merge-engine": "first-row"}, [(1, "v1", "+I", 0), (2, "v2", "+I", 1)]),
    ],
    ids=["deduplicate", "deletion-vectors", "first-row"],
)
def test_lookup_changelog_comes_with_each_write(
    warehouse: str, oracle: Any, options: dict[str, str], first: list[tuple]
) -> None:
    """``changelog-producer`` = ``lookup``: each write's lookup compaction looks its keys up
    in the older levels and writes their changelog, published in the COMPACT snapshot."""
    table = _table(warehouse, "lookup", **options)
    table.write_arrow(kvd_batch([1, 2]))
    latest = table.latest_snapshot()
    assert latest is not None and str(latest.commit_kind) == "COMPACT"
    assert changelog_rows(table, latest) == first
    table.write_arrow(_rows([1, 3], ["x", "y"]))
    latest = table.latest_snapshot()
    assert latest is not None
    if options.get("merge-engine") == "first-row":
        assert changelog_rows(table, latest) == [(3, "y", "+I", 3)]
        return
    assert changelog_rows(table, latest) == [
        (1, "v1", "-U", 0),
        (1, "x", "+U", 2),
        (3, "y", "+I", 3),
    ]
    _deletes(table, [2])
    latest = table.latest_snapshot()
    assert latest is not None
    assert changelog_rows(table, latest) == [(2, "v2", "-D", 1)]
    rows = oracle("read", table.path.rsplit("/", 2)[0], "db.t")
    assert sorted((r["k"], r["v"]) for r in rows) == [(1, "x"), (3, "y")]
    assert sorted(_incremental(table, **{"incremental-between": "2,6"})) == [
        (1, "v1", "-U"),
        (1, "x", "+U"),
        (2, "v2", "-D"),
        (3, "y", "+I"),
    ]


def test_lookup_aggregation_is_not_counted_twice(warehouse: str, oracle: Any) -> None:
    """The record a lookup compaction writes holds the whole value of its key, so reads merge
    only the level-0 records and the lowest record above (``LookupMergeFunction``): a sum
    over three levels is not counted twice, by us nor by Java."""
    from paimon_core.catalog import FileSystemCatalog

    schema = pa.schema([pa.field("k", pa.int64(), False), ("n", pa.int64())])
    catalog = FileSystemCatalog(f"{warehouse}/agg")
    catalog.create_database("db")
    table = catalog.create_table(
        "db.t",
        schema,
        primary_keys=["k"],
        options={
            "bucket": "1",
            "changelog-producer": "lookup",
            "merge-engine": "aggregation",
            "fields.n.aggregate-function": "sum",
        },
    )
    table.write_arrow(pa.table({"k": list(range(200)), "n": [1] * 200}, schema=schema))
    levels = []
    for n in (10, 100, 1000):
        table.write_arrow(pa.table({"k": [7], "n": [n]}, schema=schema))
        latest = table.latest_snapshot()
        assert latest is not None
        levels.append(sorted(e.file.level for e in table.new_scan().read_entries(latest)))
    assert [4, 5] in levels  # the key on two levels at once
    assert [4, 5] == levels[-1]
    ours = {r["k"]: r["n"] for r in table.to_arrow().to_pylist()}
    assert ours[7] == 1111 and sum(ours.values()) == 1110 + 200
    java = {r["k"]: r["n"] for r in oracle("read", f"{warehouse}/agg", "db.t")}
    assert java == ours

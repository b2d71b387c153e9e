"""``check_table`` and ``diff_tags`` through ``call_procedure``."""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import HashIndexUnreadable
from paimon_core.lifecycle.file_deletion import TableFiles
from paimon_core.operations.dynamic_bucket import DynamicBucketIndex
from paimon_core.table import FileStoreTable
from procedures import ProcedureError
from procedures.check import CHECK_OUTPUT, DIFF_OUTPUT
from tests.unit.procedures.helpers import SCHEMA, call, fingerprint, new_catalog, new_table

DELETE = 3


def files_of(table: FileStoreTable, version: int | str) -> dict[str, tuple]:
    """file path -> (partition dir, bucket, rows, level) of a snapshot id or tag name."""
    if isinstance(version, int):
        snapshot = table.snapshot_manager.snapshot(version)
    else:
        snapshot = table.tag_manager.get(version).snapshot
    paths = TableFiles(table)
    out = {}
    for e in table.new_scan().read_entries(snapshot):
        partition = paths.bucket_dir(e.partition, e.bucket)[len(table.path) + 1 :]
        partition = partition.rsplit("/", 1)[0] if "/" in partition else ""
        out[paths.data_path(e)] = (partition, e.bucket, e.file.row_count, e.file.level)
    return out


def expected_diff(table: FileStoreTable, old: int | str, new: int | str) -> list[tuple]:
    before, after = files_of(table, old), files_of(table, new)
    rows = [(*after[p][:2], p, "added", *after[p][2:]) for p in after if p not in before]
    rows += [(*before[p][:2], p, "removed", *before[p][2:]) for p in before if p not in after]
    return sorted(rows, key=lambda r: (r[0], r[1], r[3], r[2]))


# ----------------------------------------------------------------------------- check_table


def test_check_table_healthy_and_damaged(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=3)
    call(catalog, "create_tag", table="db.t", tag="t1", snapshot=1)
    result = call(catalog, "check_table", "db.t")
    assert result.columns == CHECK_OUTPUT
    assert result.rows == []
    assert call(catalog, "check_table", table="db.t", deep=True).rows == []
    with open(table.snapshot_manager.latest_hint_path, "w") as f:
        f.write("7")
    victim = next(iter(files_of(table, "t1")))
    os.remove(victim)
    before = fingerprint(warehouse)
    rows = call(catalog, "check_table", table="db.t", deep=True).rows
    assert fingerprint(warehouse) == before
    assert rows == [
        ("missing", victim, "snapshots 1-3, tag t1", "data file does not exist"),
        ("hint", table.snapshot_manager.latest_hint_path, None, "LATEST says 7, the latest snapshot is 3"),
    ]  # fmt: skip


def test_check_table_deep_finds_a_garbage_hash_index_and_duplicate_keys(
    warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 19: a dynamic-bucket table's HASH index file overwritten with garbage of its
    size. The deep check reports it (and the duplicate keys a writer trusting it made) as
    rows; writes refuse it."""
    catalog = new_catalog(warehouse)
    table = catalog.create_table(
        "db.d",
        SCHEMA,
        partition_keys=["dt"],
        primary_keys=["id", "dt"],
        options={"bucket": "-1", "dynamic-bucket.target-row-num": "40"},
    )
    ids = list(range(100))
    batch = pa.table({"id": ids, "name": ["a"] * 100, "dt": ["2024-01-01"] * 100}, SCHEMA)
    table.write_arrow(batch)
    assert call(catalog, "check_table", table="db.d", deep=True).rows == []
    snapshot = table.snapshot_manager.latest_snapshot()
    (entry,) = [e for e in table.index_manifest_file.read(snapshot.index_manifest) if e.bucket == 1]
    index_path = f"{table.path}/index/{entry.file_name}"
    with open(index_path, "wb") as f:
        f.write(np.random.default_rng(19).bytes(entry.file_size))
    assert call(catalog, "check_table", table="db.d").rows == []
    ((kind, path, needed_by, detail),) = call(catalog, "check_table", table="db.d", deep=True).rows
    assert (kind, path, needed_by) == ("mismatch", index_path, "snapshot 1")
    assert detail.startswith("HASH index file of bucket 1 lacks keys of 1 data file of its bucket")
    with pytest.raises(HashIndexUnreadable, match=entry.file_name):
        table.write_arrow(batch)
    assert table.snapshot_manager.latest_snapshot().snapshot_id == 1
    monkeypatch.setattr(DynamicBucketIndex, "_check", lambda *_: None)  # a writer before the fix
    table.write_arrow(batch)
    monkeypatch.undo()
    rows = call(catalog, "check_table", table="db.d", deep=True).rows
    assert [row[:3] for row in rows] == [
        ("mismatch", index_path, "snapshots 1-2"),
        ("duplicate", f"{table.path}/dt=2024-01-01", "snapshot 2"),
    ]
    assert rows[1][3].startswith("40 primary keys are in more than one bucket of the partition")


@pytest.mark.parametrize(
    ("named", "message"),
    [
        ({"table": "db.nope"}, "db.nope"),
        ({"table": "db.t", "deep": "yes"}, "Cannot cast STRING to BOOLEAN of deep"),
        ({}, "table"),
    ],
)
def test_check_table_errors(warehouse: str, named: dict, message: str) -> None:
    catalog = new_catalog(warehouse)
    new_table(catalog, commits=1)
    with pytest.raises(ProcedureError) as err:
        call(catalog, "check_table", **named)
    assert message in str(err.value)


# ----------------------------------------------------------------------------- diff_tags


def test_diff_tags_of_appends(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=3)
    call(catalog, "create_tag", table="db.t", tag="t1", snapshot=1)
    call(catalog, "create_tag", table="db.t", tag="t3", snapshot=3)
    before = fingerprint(warehouse)
    result = call(catalog, "diff_tags", table="db.t", **{"from": "t1", "to": "t3"})
    assert fingerprint(warehouse) == before
    assert result.columns == DIFF_OUTPUT
    added = sorted(set(files_of(table, 3)) - set(files_of(table, 1)))
    assert len(added) == 2
    assert result.rows == expected_diff(table, "t1", "t3")
    assert [(r[0], r[1], r[3], r[4], r[5]) for r in result.rows] == [
        ("dt=2024-01-01", 0, "added", 2, 0),
        ("dt=2024-01-02", 0, "added", 2, 0),
    ]
    # The other way round, by snapshot id (an INT literal is cast to STRING), and positionally.
    back = call(catalog, "diff_tags", "db.t", 3, "t1").rows
    assert back == [(*r[:3], "removed", *r[4:]) for r in result.rows]
    assert call(catalog, "diff_tags", "db.t", "t3", "3").rows == []


def test_diff_tags_across_compaction_and_deletes(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=3, primary_keys=["id", "dt"], options={"bucket": "1"})
    call(catalog, "create_tag", table="db.t", tag="before", snapshot=3)
    assert call(catalog, "compact", table="db.t").rows == [(True,)]  # snapshot 4
    table = catalog.get_table("db.t")
    doomed = pa.table({"id": [0], "name": [None], "dt": ["2024-01-01"]}, SCHEMA)
    table.write_arrow(doomed, row_kinds=pa.array([DELETE], pa.int8()))  # snapshot 5
    table = catalog.get_table("db.t")
    compacted = call(catalog, "diff_tags", "db.t", "before", "4").rows
    assert compacted == expected_diff(table, "before", 4)
    assert [(r[0], r[3], r[4], r[5]) for r in compacted] == [
        ("dt=2024-01-01", "added", 4, 5),
        ("dt=2024-01-01", "removed", 2, 0),
        ("dt=2024-01-01", "removed", 2, 0),
    ]
    # dt=2024-01-02's one file was only moved up to level 5 (an upgrade): no data changed.
    (upgraded,) = [p for p, f in files_of(table, 4).items() if f[0] == "dt=2024-01-02"]
    assert files_of(table, 4)[upgraded][3] == 5 and files_of(table, "before")[upgraded][3] == 0
    deleted = call(catalog, "diff_tags", "db.t", "4", "5").rows
    assert deleted == expected_diff(table, 4, 5)
    ((partition, bucket, _path, kind, rows, level),) = deleted
    assert (partition, bucket, kind, rows, level) == ("dt=2024-01-01", 0, "added", 1, 0)
    assert call(catalog, "diff_tags", "db.t", "before", "5").rows == expected_diff(
        table, "before", 5
    )


def test_diff_tags_after_overwrite_removes_files(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=3)
    data = pa.table({"id": [7], "name": ["o"], "dt": ["2024-01-01"]}, SCHEMA)
    table.write_arrow(data, overwrite=True)  # snapshot 4 replaces dt=2024-01-01
    table = catalog.get_table("db.t")
    rows = call(catalog, "diff_tags", "db.t", "3", "4").rows
    assert rows == expected_diff(table, 3, 4)
    assert [(r[0], r[3], r[4]) for r in rows] == [
        ("dt=2024-01-01", "added", 1),
        ("dt=2024-01-01", "removed", 2),
        ("dt=2024-01-01", "removed", 2),
    ]


def test_diff_tags_unpartitioned_partition_is_empty(warehouse: str) -> None:
    catalog: FileSystemCatalog = new_catalog(warehouse)
    table = catalog.create_table("db.u", pa.schema([("id", pa.int64())]))
    table.write_arrow(pa.table({"id": [1, 2]}))
    table.write_arrow(pa.table({"id": [3]}))
    rows = call(catalog, "diff_tags", "db.u", "1", "2").rows
    assert [(r[0], r[1], r[3], r[4], r[5]) for r in rows] == [("", 0, "added", 1, 0)]
    assert rows[0][2].startswith(f"{table.path}/bucket-0/data-")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("db.t", "nope", "1"), "nope"),
        (("db.t", "1", "9"), "Snapshot id '9' doesn't exist."),
        (("db.t", " ", "1"), "Argument from must be a tag name or a snapshot id"),
        (("db.t", "1", None), "Argument to must be a tag name or a snapshot id"),
    ],
)
def test_diff_tags_errors(warehouse: str, args: tuple, message: str) -> None:
    catalog = new_catalog(warehouse)
    new_table(catalog, commits=2)
    with pytest.raises(ProcedureError) as err:
        call(catalog, "diff_tags", *args)
    assert message in str(err.value)


def _schema_file(table: FileStoreTable, schema_id: int, text: str) -> str:
    """Write ``schema-<id>`` of ``table`` with ``text``; returns its path."""
    path = table.schema_manager.schema_path(schema_id)
    with open(path, "w") as f:
        f.write(text)
    return path


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ('{"id": 1, "fields": [', "not JSON"),
        ("\x00\x9f garbage", "not JSON"),
        ('{"id": 1, "fields": [{"id": 0, "name": "x", "type": "FANCY_TYPE"}]}', "FANCY_TYPE"),
    ],
)
def test_a_corrupt_schema_file_is_named_and_reported_by_check_table(
    warehouse: str, text: str, what: str
) -> None:
    """Issue 19.6: opening a table whose latest schema cannot be parsed names the schema
    file (and an unknown type); check_table reports it as a row instead of raising."""
    from paimon_core.exceptions import SchemaError

    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=2)
    path = _schema_file(table, 1, text)
    with pytest.raises(SchemaError) as info:
        FileSystemCatalog(warehouse).get_table("db.t")
    message = str(info.value)
    assert path in message and what in message and "\n" not in message
    before = fingerprint(warehouse)
    rows = call(catalog, "check_table", "db.t").rows
    assert fingerprint(warehouse) == before
    assert [(kind, p) for kind, p, _, _ in rows] == [("corrupt", path)]
    assert what in rows[0][3]

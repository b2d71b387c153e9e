"""``check_table``: healthy tables of every kind give no problem; each kind of damage gives
exactly its row, and the check never changes a byte."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import time
import uuid
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.format.commit_message import CommitMessage
from paimon_core.format.deletion_vectors import DELETION_VECTORS_INDEX
from paimon_core.format.index_manifest import serialize_index_manifest
from paimon_core.format.manifest import FileKind, IndexManifestEntry
from paimon_core.format.snapshot import ChangelogManager, snapshot_to_json
from paimon_core.format.statistics import Statistics
from paimon_core.format.types import BIGINT, INT
from paimon_core.lifecycle import check as check_module
from paimon_core.lifecycle.check import LiveRoot, Problem, check_table, live_roots, render_roots
from paimon_core.lifecycle.file_deletion import TableFiles
from paimon_core.lifecycle.orphan import remove_orphan_files
from paimon_core.lifecycle.tag_management import create_tag
from paimon_core.operations.bucket import bucket_for_hash, hash_keys, row_hash
from paimon_core.operations.dynamic_bucket import HASH_INDEX, DynamicBucketIndex
from paimon_core.table import FileStoreTable
from tests.unit.procedures.helpers import SCHEMA, call, fingerprint, new_catalog, new_table

PAST = "2000-01-01 00:00:00"
DELETE = 3  # RowKind -D
DAYS_AGO = time.time() - 3 * 86_400


def checked(table: FileStoreTable, deep: bool = False) -> list[Problem]:
    """``check_table`` run twice (shallow and deep when asked), asserting it wrote nothing."""
    before = fingerprint(table.path)
    problems = check_table(table, deep=deep)
    assert fingerprint(table.path) == before
    return problems


def healthy(table: FileStoreTable) -> None:
    assert checked(table) == []
    assert checked(table, deep=True) == []


def age(path: str) -> None:
    os.utime(path, (DAYS_AGO, DAYS_AGO))


def rel(table: FileStoreTable, path: str) -> str:
    return path[len(table.path.rstrip("/")) + 1 :]


def live_entries(table: FileStoreTable, snapshot_id: int | None = None) -> list:
    manager = table.snapshot_manager
    snapshot = manager.latest_snapshot() if snapshot_id is None else manager.snapshot(snapshot_id)
    return table.new_scan().read_entries(snapshot)


def data_path(table: FileStoreTable, entry: Any) -> str:
    return TableFiles(table).data_path(entry)


# ----------------------------------------------------------------------------- tables


def append_table(catalog: FileSystemCatalog) -> FileStoreTable:
    table = new_table(catalog, "db.a", commits=3)
    create_tag(table, "t1", snapshot_id=2)
    return catalog.get_table("db.a")


def tagged_pk_table(catalog: FileStoreTable | FileSystemCatalog) -> FileStoreTable:
    """Snapshots 1-3 (tag t1 on 3), a full compaction (4), then 1-3 expired: the level-0
    files are needed by the tag only."""
    new_table(catalog, "db.pk", commits=3, primary_keys=["id", "dt"], options={"bucket": "1"})
    table = catalog.get_table("db.pk")
    create_tag(table, "t1", snapshot_id=3)
    assert call(catalog, "compact", table="db.pk").rows == [(True,)]
    expired = call(
        catalog, "expire_snapshots", table="db.pk", retain_max=1, retain_min=1, older_than=PAST
    )
    assert expired.rows == [(3,)]
    return catalog.get_table("db.pk")


def dv_table(catalog: FileSystemCatalog) -> FileStoreTable:
    """A primary-key table with deletion vectors: the update of id 0 marks its old row."""
    options = {"bucket": "1", "deletion-vectors.enabled": "true"}
    table = new_table(catalog, "db.dv", commits=2, primary_keys=["id", "dt"], options=options)
    table.write_arrow(pa.table({"id": [0], "name": ["x"], "dt": ["2024-01-01"]}, SCHEMA))
    table = catalog.get_table("db.dv")
    create_tag(table, "t1")
    return table


def dv_index_path(table: FileStoreTable) -> str:
    snapshot = table.snapshot_manager.latest_snapshot()
    entries = table.index_manifest_file.read(snapshot.index_manifest)
    (entry,) = [e for e in entries if e.index_type == DELETION_VECTORS_INDEX]
    return f"{table.path}/index/{entry.file_name}"


def changelog_table(catalog: FileSystemCatalog) -> FileStoreTable:
    """``changelog-producer = input``, a tag, a compaction, and decoupled changelogs: snapshots
    1-2 expired into long-lived ``changelog/changelog-N``."""
    options = {
        "bucket": "2",
        "changelog-producer": "input",
        "changelog.num-retained.max": "10",
        "changelog.num-retained.min": "10",
    }
    new_table(catalog, "db.cl", commits=4, primary_keys=["id", "dt"], options=options)
    table = catalog.get_table("db.cl")
    create_tag(table, "t1", snapshot_id=3)
    assert call(catalog, "compact", table="db.cl").rows == [(True,)]
    call(catalog, "expire_snapshots", table="db.cl", retain_max=3, retain_min=1, older_than=PAST)
    table = catalog.get_table("db.cl")
    assert table.snapshot_manager.list_snapshot_ids() == [3, 4, 5]
    assert os.listdir(f"{table.path}/changelog")
    return table


def dynamic_bucket_table(catalog: FileSystemCatalog) -> FileStoreTable:
    """``bucket = -1``: a hash index file per bucket."""
    table = new_table(catalog, "db.dyn", commits=3, primary_keys=["id", "dt"])
    create_tag(table, "t1", snapshot_id=1)
    assert os.listdir(f"{table.path}/index")
    return table


# ----------------------------------------------------------------------------- healthy


@pytest.mark.parametrize(
    "make",
    [append_table, tagged_pk_table, dv_table, changelog_table, dynamic_bucket_table],
    ids=["append", "pk-tag-only-files", "deletion-vectors", "changelog-input", "dynamic-bucket"],
)
def test_healthy_tables_have_no_problem(
    warehouse: str, make: Callable[[FileSystemCatalog], FileStoreTable]
) -> None:
    table = make(new_catalog(warehouse))
    healthy(table)
    roles = {r.role for r in live_roots(table)}
    assert roles == (
        {"snapshot", "tag", "changelog"} if "cl" in table.path else {"snapshot", "tag"}
    )


def test_empty_table_is_healthy(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = catalog.create_table("db.e", pa.schema([("id", pa.int64())]))
    healthy(table)


def test_java_written_tables_are_healthy(warehouse: str, oracle: Callable[..., Any]) -> None:
    """What Paimon itself writes (stats, keys, sizes, retractions, an expired tagged
    snapshot) passes the deep check: no false alarm on Java's choices."""
    oracle(
        "create-table", warehouse, "db.j", "--schema", "k INT, v STRING, dt STRING",
        "--primary-key", "k,dt", "--partition", "dt", "--option", "bucket=2",
        "--option", "changelog-producer=input",
    )  # fmt: skip
    oracle(
        "write",
        warehouse,
        "db.j",
        "--json-rows",
        '[{"k":1,"v":"a","dt":"x"},{"k":2,"v":null,"dt":"y"}]',
    )
    oracle("create-tag", warehouse, "db.j", "t1")
    oracle(
        "write",
        warehouse,
        "db.j",
        "--json-rows",
        '[{"k":1,"v":"b","dt":"x"},{"k":3,"v":"c","dt":"x"}]',
    )
    oracle("write", warehouse, "db.j", "--delete", "--json-rows", '[{"k":2,"v":null,"dt":"y"}]')
    oracle("expire", warehouse, "db.j", "--retain-max", "1", "--retain-min", "1")
    oracle(
        "create-table", warehouse, "db.ja", "--schema", "k INT, v STRING", "--option", "bucket=-1"
    )
    oracle("write", warehouse, "db.ja", "--json-rows", '[{"k":1,"v":"a"},{"k":5,"v":"zz"}]')
    oracle("write", warehouse, "db.ja", "--json-rows", '[{"k":-3,"v":null}]')
    # dynamic buckets: Java's HASH index files (several versions, several buckets)
    oracle(
        "create-table", warehouse, "db.jd", "--schema", "k INT NOT NULL, v STRING",
        "--primary-key", "k", "--option", "bucket=-1",
        "--option", "dynamic-bucket.target-row-num=3",
    )  # fmt: skip
    rows = [{"k": k, "v": f"a{k}"} for k in range(10)]
    oracle("write", warehouse, "db.jd", "--json-rows", json.dumps(rows))
    oracle("create-tag", warehouse, "db.jd", "t1")
    rows = [{"k": k, "v": f"b{k}"} for k in range(5, 15)]
    oracle("write", warehouse, "db.jd", "--json-rows", json.dumps(rows))
    oracle("write", warehouse, "db.jd", "--delete", "--json-rows", '[{"k":7,"v":"b7"}]')
    catalog = FileSystemCatalog(warehouse)
    assert len({e.bucket for e in live_entries(catalog.get_table("db.jd"))}) == 5
    for name in ("db.j", "db.ja", "db.jd"):
        healthy(catalog.get_table(name))


# ----------------------------------------------------------------------------- damage


def test_data_file_needed_only_by_a_tag(warehouse: str) -> None:
    table = tagged_pk_table(new_catalog(warehouse))
    healthy(table)
    current = {e.file.file_name for e in live_entries(table)}
    tagged = table.new_scan().read_entries(table.tag_manager.get("t1").snapshot)
    only_tag = [e for e in tagged if e.file.file_name not in current]
    assert only_tag
    path = data_path(table, only_tag[0])
    os.remove(path)
    assert checked(table) == [Problem("missing", path, "tag t1", "data file does not exist")]


def test_files_of_a_root_deleted_during_the_check_are_no_damage(
    warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tag deleted (with its files) while the check runs: its files are missing, but so
    is the tag by the end, which is no damage."""
    table = tagged_pk_table(new_catalog(warehouse))
    current = {e.file.file_name for e in live_entries(table)}
    tagged = table.new_scan().read_entries(table.tag_manager.get("t1").snapshot)
    path = data_path(table, next(e for e in tagged if e.file.file_name not in current))
    os.remove(path)
    checked_needs = check_module._Check.check_need

    def check_need(self: Any, need: Any, root: LiveRoot) -> None:
        checked_needs(self, need, root)
        if root.role == "tag" and os.path.exists(root.path):
            os.remove(root.path)  # deleted by another process right after we read it

    monkeypatch.setattr(check_module._Check, "check_need", check_need)
    assert check_table(table) == []


def test_truncated_manifest_is_corrupt_for_every_root_reading_it(warehouse: str) -> None:
    table = append_table(new_catalog(warehouse))
    snapshot = table.snapshot_manager.snapshot(1)
    (meta,) = table.manifest_list.read(snapshot.delta_manifest_list)
    path = f"{table.path}/manifest/{meta.file_name}"
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) // 2)
    (problem,) = checked(table)
    assert (problem.kind, problem.path, problem.needed_by) == (
        "corrupt",
        path,
        "snapshots 1-3, tag t1",
    )
    assert problem.detail.startswith("manifest cannot be read: ")


def test_deleted_deletion_vectors_file(warehouse: str) -> None:
    table = dv_table(new_catalog(warehouse))
    path = dv_index_path(table)
    latest = table.snapshot_manager.latest_snapshot().snapshot_id
    os.remove(path)
    assert checked(table) == [
        Problem(
            "missing", path, f"snapshot {latest}, tag t1", "deletion vectors file does not exist"
        )
    ]


def test_corrupt_deletion_vector_is_found_by_the_deep_check_only(warehouse: str) -> None:
    table = dv_table(new_catalog(warehouse))
    path = dv_index_path(table)
    with open(path, "r+b") as f:
        f.seek(12)
        byte = f.read(1)
        f.seek(12)
        f.write(bytes([byte[0] ^ 0xFF]))
    assert checked(table) == []
    (problem,) = checked(table, deep=True)
    latest = table.snapshot_manager.latest_snapshot().snapshot_id
    assert (problem.kind, problem.path, problem.needed_by) == (
        "corrupt",
        path,
        f"snapshot {latest}, tag t1",
    )
    assert "checksum" in problem.detail


def test_corrupt_snapshot_json(warehouse: str) -> None:
    table = append_table(new_catalog(warehouse))
    path = table.snapshot_manager.snapshot_path(2)
    with open(path, "w") as f:
        f.write('{"version": 3, "id": 2, "schemaId": ')
    (problem,) = checked(table, deep=True)
    assert (problem.kind, problem.path, problem.needed_by) == ("corrupt", path, "snapshot 2")
    assert "Snapshot" in problem.detail


def test_corrupt_tag_and_consumer(warehouse: str) -> None:
    table = append_table(new_catalog(warehouse))
    tag = table.tag_manager.tag_path("t1")
    with open(tag, "w") as f:
        f.write("[]")
    consumer = f"{table.path}/consumer/consumer-c1"
    os.makedirs(os.path.dirname(consumer))
    with open(consumer, "w") as f:
        f.write('{"nextSnapshot": "two"}')
    problems = checked(table)
    assert [(p.kind, p.path, p.needed_by) for p in problems] == [
        ("corrupt", consumer, "consumer c1"),
        ("corrupt", tag, "tag t1"),
    ]


def test_wrong_latest_and_earliest_hints(warehouse: str) -> None:
    table = append_table(new_catalog(warehouse))
    latest = table.snapshot_manager.latest_hint_path
    earliest = table.snapshot_manager.earliest_hint_path
    with open(latest, "w") as f:
        f.write("9")
    assert checked(table) == [
        Problem("hint", latest, None, "LATEST says 9, the latest snapshot is 3")
    ]
    with open(latest, "w") as f:
        f.write("3")
    with open(earliest, "w") as f:
        f.write("x")
    assert checked(table) == [
        Problem("hint", earliest, None, "EARLIEST holds 'x', not a snapshot id")
    ]


def test_missing_snapshot_between_others_is_a_gap(warehouse: str) -> None:
    table = new_table(new_catalog(warehouse), "db.g", commits=3)
    path = table.snapshot_manager.snapshot_path(2)
    os.remove(path)
    assert checked(table) == [
        Problem(
            "hint",
            path,
            None,
            "snapshot 2 is missing between snapshots 1 and 3: the ids must be contiguous",
        )
    ]


def test_consumer_resuming_at_an_expired_snapshot(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, "db.c", commits=3)
    consumer = f"{table.path}/consumer/consumer-c1"
    os.makedirs(os.path.dirname(consumer))
    with open(consumer, "w") as f:
        f.write('{"nextSnapshot": 4}')  # caught up: fine
    healthy(table)
    with open(consumer, "w") as f:
        f.write('{"nextSnapshot": 1}')
    os.remove(table.snapshot_manager.snapshot_path(1))  # as expiry would (ignoring consumers)
    with open(table.snapshot_manager.earliest_hint_path, "w") as f:
        f.write("2")
    problems = checked(table)
    assert [(p.kind, p.path, p.needed_by) for p in problems] == [
        ("missing", table.snapshot_manager.snapshot_path(1), "consumer c1")
    ]


def test_old_orphans_are_reported_and_young_ones_not(warehouse: str) -> None:
    table = append_table(new_catalog(warehouse))
    bucket = f"{table.path}/dt=2024-01-01/bucket-0"
    old, young = f"{bucket}/data-old-0.parquet", f"{bucket}/data-young-0.parquet"
    temp = f"{table.path}/snapshot/.snapshot-4.1234.tmp"
    for path in (old, young, temp):
        with open(path, "wb") as f:
            f.write(b"orphan")
    age(old)
    age(temp)
    problems = checked(table)
    assert [(p.kind, p.path, p.needed_by) for p in problems] == [
        ("orphan", old, None),
        ("orphan", temp, None),
    ]
    assert problems[0].detail.startswith("referenced by no snapshot, tag or changelog")
    assert problems[1].detail.startswith("temporary file of a failed write")
    # Exactly what remove_orphan_files would delete.
    dry = remove_orphan_files(table, dry_run=True)
    assert set(dry.paths) == {old, temp}


def test_data_file_with_other_rows_than_its_manifest_says(warehouse: str) -> None:
    table = append_table(new_catalog(warehouse))
    entry = live_entries(table, 1)[0]
    path = data_path(table, entry)
    data = pq.ParquetFile(path).read()
    pq.write_table(data.slice(0, 1), path)
    shallow = checked(table)
    assert [(p.kind, p.path, p.needed_by) for p in shallow] == [
        ("mismatch", path, "snapshots 1-3, tag t1")
    ]
    assert "bytes, its metadata says" in shallow[0].detail
    (deep,) = checked(table, deep=True)
    assert (deep.kind, deep.path, deep.needed_by) == ("mismatch", path, "snapshots 1-3, tag t1")
    assert "data file has 1 rows, its manifest entry says 2" in deep.detail


def test_data_file_whose_values_escape_its_statistics(warehouse: str) -> None:
    """Same rows, other values: only the deep check sees that the stats would prune the
    file away from queries it matches."""
    table = append_table(new_catalog(warehouse))
    entry = live_entries(table, 1)[0]
    path = data_path(table, entry)
    data = pq.ParquetFile(path).read()
    ids = data.column("id").to_pylist()
    changed = data.set_column(0, data.schema.field(0), pa.array([i + 50 for i in ids], pa.int64()))
    pq.write_table(changed, path)
    shallow = checked(table)
    assert all("value column" not in p.detail for p in shallow)
    (problem,) = checked(table, deep=True)
    assert (problem.kind, problem.path) == ("mismatch", path)
    assert "value column id holds 50..150, its stats say 0..100" in problem.detail


def test_deep_check_reads_manifest_lists_in_full(warehouse: str) -> None:
    """A manifest list that claims other file counts than its manifest holds."""
    table = new_table(new_catalog(warehouse), "db.m", commits=1)
    snapshot = table.snapshot_manager.latest_snapshot()
    (meta,) = table.manifest_list.read(snapshot.delta_manifest_list)
    lying = dataclasses.replace(meta, num_added_files=meta.num_added_files + 1)
    name, size = table.manifest_list.write([lying])
    fixed = dataclasses.replace(snapshot, delta_manifest_list=name, delta_manifest_list_size=size)
    table.file_io.write_text(table.snapshot_manager.snapshot_path(1), snapshot_to_json(fixed))
    old_list = f"{table.path}/manifest/{snapshot.delta_manifest_list}"
    os.remove(old_list)
    assert checked(table) == []
    (problem,) = checked(table, deep=True)
    assert (problem.kind, problem.path, problem.needed_by) == (
        "mismatch",
        f"{table.path}/manifest/{meta.file_name}",
        "snapshot 1",
    )
    assert "adds 1 and deletes 0 files" in problem.detail and "says 2 and 0" in problem.detail


def test_changelog_file_needed_by_a_long_lived_changelog(warehouse: str) -> None:
    table = changelog_table(new_catalog(warehouse))
    changelog = ChangelogManager(table.file_io, table.path).snapshot(1)
    _lists, _manifests, paths = TableFiles(table).changelog_usage(changelog)
    path = sorted(paths)[0]
    assert "/changelog-" in path
    os.remove(path)
    assert checked(table) == [
        Problem("missing", path, "changelog 1", "changelog file does not exist")
    ]


def test_statistics_file_missing_or_corrupt(warehouse: str) -> None:
    table = new_table(new_catalog(warehouse), "db.s", commits=2)
    table.new_commit().commit_statistics(Statistics(2, 0, 4, 100))  # snapshot 3 (ANALYZE)
    create_tag(table, "t1", snapshot_id=3)
    healthy(table)
    path = f"{table.path}/statistics/{table.snapshot_manager.snapshot(3).statistics}"
    with open(path, "w") as f:
        f.write("{")
    (problem,) = checked(table)
    assert (problem.kind, problem.path, problem.needed_by) == (
        "corrupt",
        path,
        "snapshot 3, tag t1",
    )
    assert problem.detail.startswith("statistics file cannot be read: ")
    os.remove(path)
    assert checked(table) == [
        Problem("missing", path, "snapshot 3, tag t1", "statistics file does not exist")
    ]


def test_branch_roots_are_checked(warehouse: str) -> None:
    """A branch in Paimon's layout (``branch/branch-<name>/{schema,snapshot}``) is a root
    container of its own: its snapshots keep files alive and are named in ``needed_by``."""
    catalog = new_catalog(warehouse)
    table = new_table(catalog, "db.b", commits=3)
    branch = f"{table.path}/branch/branch-b1"
    shutil.copytree(f"{table.path}/schema", f"{branch}/schema")
    os.makedirs(f"{branch}/snapshot")
    shutil.copy(table.snapshot_manager.snapshot_path(2), f"{branch}/snapshot/snapshot-2")
    healthy(table)
    assert LiveRoot("snapshot", "2", "b1", f"{branch}/snapshot/snapshot-2") in live_roots(table)
    entry = next(e for e in live_entries(table, 1) if e.kind == FileKind.ADD)
    path = data_path(table, entry)
    os.remove(path)
    assert checked(table) == [
        Problem("missing", path, "snapshots 1-3, branch b1 snapshot 2", "data file does not exist")
    ]


def test_render_roots_groups_ids_into_ranges() -> None:
    roots = [LiveRoot("snapshot", str(i), None, "") for i in (1, 2, 3, 5, 7, 8)]
    roots += [LiveRoot("tag", "b", None, ""), LiveRoot("tag", "a", None, "")]
    roots += [LiveRoot("changelog", "4", "x", ""), LiveRoot("consumer", "c", None, "")]
    assert render_roots(roots) == (
        "snapshots 1-3, 5, 7-8, tags a, b, consumer c, branch x changelog 4"
    )


# ----------------------------------------------------------------------------- keys (deep)

DAY = "2024-01-01"


def _rows_of(ids: Iterable[int], name: str, dt: str = DAY) -> pa.Table:
    ids = list(ids)
    return pa.table({"id": ids, "name": [f"{name}{i}" for i in ids], "dt": [dt] * len(ids)}, SCHEMA)


def dynamic_three_buckets(catalog: FileSystemCatalog) -> FileStoreTable:
    """Ids 0-99 of one partition in buckets 0 (0-39), 1 (40-79) and 2 (80-99), tag t1 on
    snapshot 1; snapshot 2 updates every 7th id (no new key: the index files stay)."""
    table = catalog.create_table(
        "db.d3",
        SCHEMA,
        partition_keys=["dt"],
        primary_keys=["id", "dt"],
        options={"bucket": "-1", "dynamic-bucket.target-row-num": "40"},
    )
    table.write_arrow(_rows_of(range(100), "a"))
    create_tag(table, "t1", snapshot_id=1)
    table.write_arrow(_rows_of(range(0, 100, 7), "b"))
    return catalog.get_table("db.d3")


def hash_index_entry(table: FileStoreTable, bucket: int) -> IndexManifestEntry:
    snapshot = table.snapshot_manager.latest_snapshot()
    entries = table.index_manifest_file.read(snapshot.index_manifest)
    return next(e for e in entries if e.index_type == HASH_INDEX and e.bucket == bucket)


def index_path(table: FileStoreTable, entry: IndexManifestEntry) -> str:
    return f"{table.path}/index/{entry.file_name}"


def edit_index_manifests(
    table: FileStoreTable, edit: Callable[[list[IndexManifestEntry]], list[IndexManifestEntry]]
) -> None:
    """Rewrite every snapshot's index manifest in place with ``edit`` of its entries."""
    for snapshot_id in table.snapshot_manager.list_snapshot_ids():
        name = table.snapshot_manager.snapshot(snapshot_id).index_manifest
        entries = table.index_manifest_file.read(name)
        with open(f"{table.path}/manifest/{name}", "wb") as f:
            f.write(serialize_index_manifest(edit(entries)))


def bucket_files(table: FileStoreTable, bucket: int) -> list[str]:
    return sorted(
        os.path.basename(data_path(table, e)) for e in live_entries(table) if e.bucket == bucket
    )


def test_healthy_dynamic_bucket_history_has_no_key_problem(warehouse: str) -> None:
    """Many buckets and index versions, updates, deletes, a compaction, tags and expiry:
    every data file's keys are in its bucket's index, no key or hash in two buckets."""
    catalog = new_catalog(warehouse)
    table = catalog.create_table(
        "db.h",
        SCHEMA,
        partition_keys=["dt"],
        primary_keys=["id", "dt"],
        options={"bucket": "-1", "dynamic-bucket.target-row-num": "7"},
    )
    table.write_arrow(pa.concat_tables([_rows_of(range(30), "a"), _rows_of(range(9), "a", "x")]))
    create_tag(table, "t1")
    table.write_arrow(_rows_of(range(20, 50), "b"))
    deletes = _rows_of(range(0, 50, 5), "b")
    table.write_arrow(deletes, row_kinds=pa.array([DELETE] * deletes.num_rows, pa.int8()))
    create_tag(table, "t2")
    assert call(catalog, "compact", table="db.h").rows == [(True,)]
    table.write_arrow(_rows_of(range(45, 60), "c"))
    assert len({e.bucket for e in live_entries(table)}) >= 8
    healthy(catalog.get_table("db.h"))


def test_garbage_hash_index_of_the_right_size_lacks_its_buckets_keys(warehouse: str) -> None:
    table = dynamic_three_buckets(new_catalog(warehouse))
    healthy(table)
    entry = hash_index_entry(table, 1)
    path = index_path(table, entry)
    with open(path, "wb") as f:
        f.write(np.random.default_rng(19).bytes(entry.file_size))
    assert checked(table) == []  # the size is right: only the keys tell
    (problem,) = checked(table, deep=True)
    # ids 40-79 (tag t1 too), then the update of 42, 49, ..., 77
    counts = {
        os.path.basename(data_path(table, e)): e.file.row_count
        for e in live_entries(table)
        if e.bucket == 1
    }
    assert sorted(counts.values()) == [6, 40]
    assert (problem.kind, problem.path, problem.needed_by) == (
        "mismatch",
        path,
        "snapshots 1-2, tag t1",
    )
    assert problem.detail == (
        "HASH index file of bucket 1 lacks keys of 2 data files of its bucket ("
        + ", ".join(f"{name}: {counts[name]}" for name in sorted(counts))
        + "): the next write puts them in another bucket"
    )


def test_duplicate_keys_across_buckets_are_reported(
    warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The damage of issue 19: a writer trusting a garbage index file put 40 known ids in
    new buckets. The deep check names the partition, the keys and the snapshot."""
    table = dynamic_three_buckets(new_catalog(warehouse))
    entry = hash_index_entry(table, 1)
    with open(index_path(table, entry), "wb") as f:
        f.write(np.random.default_rng(19).bytes(entry.file_size))
    monkeypatch.setattr(DynamicBucketIndex, "_check", lambda *_: None)  # a writer before the fix
    table.write_arrow(_rows_of(range(100), "c"))
    monkeypatch.undo()
    assert table.to_arrow().num_rows == 140
    problems = checked(table, deep=True)
    duplicate = next(p for p in problems if p.kind == "duplicate")
    assert (duplicate.path, duplicate.needed_by) == (f"{table.path}/dt={DAY}", "snapshot 3")
    assert duplicate.detail.startswith(
        "40 primary keys are in more than one bucket of the partition, and read more than "
        "once: (id=40) in buckets 1 ("
    )
    assert duplicate.detail.endswith("; and 37 more")
    # the garbage file is reported too, for every root that has it
    assert [(p.kind, p.path, p.needed_by) for p in problems if p.kind != "duplicate"] == [
        ("mismatch", index_path(table, entry), "snapshots 1-3, tag t1")
    ]


def test_hashes_shared_by_two_buckets_index_files(warehouse: str) -> None:
    table = dynamic_three_buckets(new_catalog(warehouse))
    zero, one = hash_index_entry(table, 0), hash_index_entry(table, 1)
    shutil.copyfile(index_path(table, zero), index_path(table, one))  # 40 hashes each
    assert checked(table) == []
    problems = checked(table, deep=True)
    assert [(p.kind, p.path, p.needed_by) for p in problems] == sorted(
        [
            ("mismatch", index_path(table, zero), "snapshots 1-2, tag t1"),
            ("mismatch", index_path(table, one), "snapshots 1-2, tag t1"),
        ],
        key=lambda r: r[1],
    )
    by_path = {p.path: p.detail for p in problems}
    assert by_path[index_path(table, zero)] == (
        f"HASH index file of bucket 0 shares 40 hashes with the one of bucket 1 "
        f"({one.file_name}): a key is in one bucket only"
    )
    assert by_path[index_path(table, one)].startswith(
        f"HASH index file of bucket 1 shares 40 hashes with the one of bucket 0 "
        f"({zero.file_name}): a key is in one bucket only; HASH index file of bucket 1 lacks "
        "keys of 2 data files"
    )


def test_bucket_with_data_and_no_hash_index_file(warehouse: str) -> None:
    table = dynamic_three_buckets(new_catalog(warehouse))
    edit_index_manifests(table, lambda es: [e for e in es if e.bucket != 1])
    assert checked(table) == []
    assert checked(table, deep=True) == [
        Problem(
            "mismatch",
            f"{table.path}/dt={DAY}/bucket-1",
            "snapshots 1-2, tag t1",
            f"bucket 1 has 2 data files ({', '.join(bucket_files(table, 1))}) but no HASH "
            "index file: the next write puts its keys in another bucket",
        )
    ]


def test_hash_index_entry_counting_other_hashes_than_its_size(warehouse: str) -> None:
    table = dynamic_three_buckets(new_catalog(warehouse))
    entry = hash_index_entry(table, 2)
    edit_index_manifests(
        table, lambda es: [dataclasses.replace(e, row_count=21) if e == entry else e for e in es]
    )
    assert checked(table) == []
    assert checked(table, deep=True) == [
        Problem(
            "mismatch",
            index_path(table, entry),
            "snapshots 1-2, tag t1",
            "HASH index file: its index manifest entry says 21 hashes in 80 bytes (4 bytes each)",
        )
    ]


def test_hash_held_twice_by_one_index_file(warehouse: str) -> None:
    table = dynamic_three_buckets(new_catalog(warehouse))
    entry = hash_index_entry(table, 2)
    path = index_path(table, entry)
    with open(path, "rb") as f:
        data = f.read()
    with open(path, "wb") as f:
        f.write(data[:4] + data[:-4])  # the first hash twice, the last one gone
    (problem,) = checked(table, deep=True)
    assert (problem.kind, problem.path) == ("mismatch", path)
    assert problem.detail.startswith(
        "HASH index file: it holds 1 hash more than once; HASH index file of bucket 2 lacks "
        "keys of "
    )


def test_duplicate_keys_of_a_fixed_bucket_table(warehouse: str) -> None:
    """A data file of bucket 0 committed again in bucket 1: its ids are read twice from
    snapshot 2 on; snapshot 1 (and its tag) are sound."""
    catalog = new_catalog(warehouse)
    table = catalog.create_table(
        "db.f", SCHEMA, partition_keys=["dt"], primary_keys=["id", "dt"], options={"bucket": "2"}
    )
    table.write_arrow(_rows_of(range(10), "a"))
    create_tag(table, "t1")
    (entry,) = [e for e in live_entries(table) if e.bucket == 0]
    ids = sorted(
        pq.ParquetFile(data_path(table, entry)).read(columns=["_KEY_id"]).column(0).to_pylist()
    )
    copy = dataclasses.replace(entry.file, file_name=f"data-{uuid.uuid4()}-0.parquet")
    bucket_dir = f"{table.path}/dt={DAY}/bucket-1"
    shutil.copyfile(data_path(table, entry), f"{bucket_dir}/{copy.file_name}")
    table.new_commit().commit([CommitMessage(entry.partition, 1, 2, new_files=(copy,))])
    assert table.to_arrow().num_rows == 10 + len(ids)
    assert checked(table) == []
    (problem,) = checked(table, deep=True)
    assert (problem.kind, problem.path, problem.needed_by) == (
        "duplicate",
        f"{table.path}/dt={DAY}",
        "snapshot 2",
    )
    original = os.path.basename(data_path(table, entry))
    assert problem.detail.startswith(
        f"{len(ids)} primary keys are in more than one bucket of the partition, and read more "
        f"than once: (id={ids[0]}) in buckets 0 ({original}), 1 ({copy.file_name}); "
    )


def test_duplicate_keys_are_found_in_their_partition_among_many(warehouse: str) -> None:
    """Partitions are checked one at a time while files are read ahead: the duplicate of
    one partition among twelve is reported there only."""
    catalog = new_catalog(warehouse)
    table = catalog.create_table(
        "db.m", SCHEMA, partition_keys=["dt"], primary_keys=["id", "dt"], options={"bucket": "2"}
    )
    days = [f"2024-02-{d:02d}" for d in range(1, 13)]
    table.write_arrow(pa.concat_tables([_rows_of(range(6), "a", day) for day in days]))
    entry = next(
        e
        for e in live_entries(table)
        if e.bucket == 0 and data_path(table, e).startswith(f"{table.path}/dt={days[5]}/")
    )
    copy = dataclasses.replace(entry.file, file_name=f"data-{uuid.uuid4()}-0.parquet")
    shutil.copyfile(data_path(table, entry), f"{table.path}/dt={days[5]}/bucket-1/{copy.file_name}")
    table.new_commit().commit([CommitMessage(entry.partition, 1, 2, new_files=(copy,))])
    problems = checked(table, deep=True)
    assert [(p.kind, p.path, p.needed_by) for p in problems] == [
        ("duplicate", f"{table.path}/dt={days[5]}", "snapshot 2")
    ]
    assert problems[0].detail.startswith(f"{entry.file.row_count} primary key")


def test_keys_sharing_a_hash_in_two_buckets_are_no_duplicate(warehouse: str) -> None:
    """Two keys that hash alike land in two buckets when the bucket key is another column:
    the check compares the keys themselves, not only their hashes."""
    key_types = [BIGINT(False), INT(False)]
    ids = np.arange(300_000, dtype=np.int64)

    def hashes(group: int) -> np.ndarray:
        columns = [pa.array(ids), pa.array(np.full(len(ids), group, np.int32))]
        return np.asarray(hash_keys(columns, key_types))

    zero, one = hashes(0), hashes(1)
    h = np.intersect1d(zero, one)[0]  # a birthday pair: about 20 expected among 300k each
    a, b = int(ids[zero == h][0]), int(ids[one == h][0])
    num_buckets = next(n for n in range(2, 9) if bucket_of(0, n) != bucket_of(1, n))
    schema = pa.schema(
        [pa.field("id", pa.int64(), False), pa.field("g", pa.int32(), False), ("v", pa.string())]
    )
    table = new_catalog(warehouse).create_table(
        "db.c",
        schema,
        primary_keys=["id", "g"],
        options={"bucket": str(num_buckets), "bucket-key": "g"},
    )
    table.write_arrow(pa.table({"id": [a, b], "g": [0, 1], "v": ["x", "y"]}, schema))
    assert len({e.bucket for e in live_entries(table)}) == 2
    healthy(table)


def bucket_of(group: int, num_buckets: int) -> int:
    return bucket_for_hash(row_hash([group], [INT(False)]), num_buckets)

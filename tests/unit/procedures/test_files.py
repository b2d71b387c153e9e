"""CALL sys.purge_files, remove_unexisting_files, rewrite_file_index and copy (Paimon-Spark 2.0)."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import pickle
import shutil
import time
from typing import Any

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import CommitConflict
from paimon_core.format.commit_message import CommitMessage
from paimon_core.format.consumer import Consumer, ConsumerManager
from paimon_core.format.file_index import read_index_metas, write_container
from paimon_core.format.schema import AddColumn, RemoveOption, SetOption
from paimon_core.format.snapshot import ChangelogManager, CommitKind
from paimon_core.format.types import INT
from procedures import ProcedureError
from tests.unit.paimon_core.helpers import kvd_batch, kvd_table
from tests.unit.paimon_core.operations.test_deletion_vectors import DV, delete_keys
from tests.unit.procedures.helpers import (
    SCHEMA,
    call,
    new_catalog,
    new_table,
    snapshot_ids,
    tag_names,
)


def _files(root: str) -> list[str]:
    return sorted(
        os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs
    )


def test_purge_files_deletes_all_data_and_history(warehouse: str, oracle: Any) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=3)
    call(catalog, "create_tag", "db.t", "keep", 1)
    ConsumerManager(table.file_io, table.path).reset_consumer("reader", Consumer(1))
    changelogs = ChangelogManager(table.file_io, table.path)
    assert changelogs.commit(table.snapshot_manager.snapshot(1))
    branch = os.path.join(table.path, "branch", "branch-b")
    shutil.copytree(os.path.join(table.path, "schema"), os.path.join(branch, "schema"))

    result = call(catalog, "purge_files", table="db.t")
    assert [c.name for c in result.columns] == ["result"] and result.rows == [("Success",)]
    assert snapshot_ids(table) == [4]
    latest = table.snapshot_manager.latest_snapshot()
    assert latest.commit_kind == CommitKind.OVERWRITE and latest.total_record_count == 0
    assert tag_names(table) == [] and ConsumerManager(table.file_io, table.path).list_ids() == []
    left = _files(table.path)
    assert not [f for f in left if f.startswith(("branch", "changelog", "tag", "consumer"))]
    assert not [f for f in left if "/bucket-" in f], left  # no data file survives
    assert [f for f in left if f.startswith("schema/")] == ["schema/schema-0"]
    assert table.to_arrow().num_rows == 0
    assert oracle("read", warehouse, "db.t") == []
    table.write_arrow(pa.table({"id": [1], "name": ["a"], "dt": ["x"]}, SCHEMA))
    assert oracle("read", warehouse, "db.t") == [{"id": 1, "name": "a", "dt": "x"}]


def test_purge_files_of_an_empty_table_and_bad_names(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=0)
    assert call(catalog, "purge_files", "db.t").rows == [("Success",)]
    assert table.to_arrow().num_rows == 0
    with pytest.raises(ProcedureError, match="does not exist"):
        call(catalog, "purge_files", "db.nope")
    with pytest.raises(ProcedureError, match="Required parameters \\[table\\]"):
        call(catalog, "purge_files")


# ------------------------------------------------------------- remove_unexisting_files


def _lose_partition(table: Any, day: str) -> list[str]:
    directory = os.path.join(table.path, f"dt={day}", "bucket-0")
    lost = sorted(os.path.join(directory, f) for f in os.listdir(directory))
    shutil.rmtree(directory)
    return lost


def _by_id(row: dict[str, Any]) -> int:
    return row["id"]


@pytest.mark.parametrize("pk", [False, True])
def test_remove_unexisting_files(warehouse: str, oracle: Any, pk: bool) -> None:
    catalog = new_catalog(warehouse)
    options = {"bucket": "1"} if pk else {}
    table = new_table(catalog, commits=3, primary_keys=["id", "dt"] if pk else (), options=options)
    lost = _lose_partition(table, "2024-01-02")
    assert lost
    before = _files(table.path)
    dry = call(catalog, "remove_unexisting_files", table="db.t", dry_run=True)
    assert [c.name for c in dry.columns] == ["fileName"] and not dry.columns[0].nullable
    assert dry.rows == [(path,) for path in lost]
    assert _files(table.path) == before  # a dry run changes nothing
    result = call(catalog, "remove_unexisting_files", "db.t")
    assert result.rows == dry.rows
    latest = table.snapshot_manager.latest_snapshot()
    assert latest.snapshot_id == 4 and latest.commit_kind == CommitKind.OVERWRITE
    expected = [{"id": i, "name": n, "dt": "2024-01-01"} for i, n in ((0, "n0"), (2, "n2"))]
    expected += [{"id": 100, "name": None, "dt": "2024-01-01"}]
    expected += [{"id": 102, "name": None, "dt": "2024-01-01"}]
    assert sorted(table.to_arrow().to_pylist(), key=_by_id) == expected
    assert sorted(oracle("read", warehouse, "db.t"), key=_by_id) == expected
    assert call(catalog, "remove_unexisting_files", "db.t").rows == []
    assert snapshot_ids(table)[-1] == 4


def test_remove_unexisting_files_refuses(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=1)
    _lose_partition(table, "2024-01-01")
    before = _files(table.path)
    for args, needle in [
        ({"table": ""}, "Cannot handle an empty tableId"),
        ({"table": "db.t", "parallelism": 0}, "Positive number of partitions"),
        ({"table": "db.*"}, "does not exist"),
        ({"table": "db.t", "dry_run": "yes"}, "Cannot cast STRING to BOOLEAN"),
    ]:
        with pytest.raises(ProcedureError) as err:
            call(catalog, "remove_unexisting_files", **args)
        assert needle in str(err.value) and "\n" not in str(err.value)
    assert _files(table.path) == before


# ------------------------------------------------------------------ rewrite_file_index


def _with_index_extra(table: Any, day: str) -> str:
    """Give the files of partition ``day`` an index extra file, as Java writes beside them
    when the table declared file index columns that it no longer does."""
    files = [
        e.file
        for e in table.new_scan().read_entries(table.latest_snapshot())
        if table.new_scan().partition_values(e.partition)[0] == day
    ]
    index = files[0].file_name + ".index"
    with open(os.path.join(table.path, f"dt={day}", "bucket-0", index), "wb") as f:
        f.write(write_container([("name", [("bloom-filter", b"\x00\x00\x00\x01\x00")])]))
    messages = [
        CommitMessage(
            _partition(table, day),
            0,
            -1,
            compact_before=(files[0],),
            compact_after=(dataclasses.replace(files[0], extra_files=(index,)),),
        )
    ]
    table.new_commit().commit(messages)
    return index


def _partition(table: Any, day: str) -> bytes:
    for e in table.new_scan().read_entries(table.latest_snapshot()):
        if table.new_scan().partition_values(e.partition)[0] == day:
            return e.partition
    raise AssertionError(day)


def test_rewrite_file_index_without_index_columns(warehouse: str, oracle: Any) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=3)
    result = call(catalog, "rewrite_file_index", table="db.t")
    assert [c.name for c in result.columns] == ["written_partitions", "written_indexes"]
    assert result.rows == [(0, 0)] and snapshot_ids(table) == [1, 2, 3]
    index = _with_index_extra(table, "2024-01-01")
    assert call(catalog, "rewrite_file_index", "db.t", "dt = '2024-01-02'").rows == [(0, 0)]
    assert call(catalog, "rewrite_file_index", "db.t", "dt = '2024-01-01'").rows == [(1, 1)]
    latest = table.latest_snapshot()
    assert latest.snapshot_id == 5 and latest.commit_kind == CommitKind.COMPACT
    extras = [e.file.extra_files for e in table.new_scan().read_entries(latest)]
    assert all(index not in x for x in extras)
    assert sorted(r["id"] for r in oracle("read", warehouse, "db.t")) == [0, 1, 2, 100, 101, 102]
    assert call(catalog, "rewrite_file_index", "db.t").rows == [(0, 0)]


def alter(table: Any, options: dict[str, str | None]) -> None:
    """ALTER TABLE SET / RESET of table options."""
    table.schema_manager.commit_changes(
        [SetOption(k, v) if v is not None else RemoveOption(k) for k, v in options.items()]
    )


def _metas(table: Any) -> dict[str, Any]:
    latest = table.latest_snapshot()
    return {e.file.file_name: e.file for e in table.new_scan().read_entries(latest)}


def _bucket_files(table: Any, day: str) -> set[str]:
    return set(os.listdir(os.path.join(table.path, f"dt={day}", "bucket-0")))


def test_rewrite_file_index_builds_moves_renames_and_drops_indexes(
    warehouse: str, oracle: Any
) -> None:
    """Declared after the writes, indexes are built by the rewrite (small: embedded); a
    lower threshold moves them to ``<data file>.index``, a rewrite of those writes
    ``...-1.index``, and without declarations they go. Old index files stay for the
    snapshots that name them: expiry keeps them (the data file lives on), orphan cleanup
    removes them once no snapshot does."""
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=3)  # partitions 2024-01-01 (2 files), 2024-01-02
    names = sorted(_metas(table))
    alter(table, {"file-index.bloom-filter.columns": "id", "file-index.bloom-filter.id.items": "8"})
    table = catalog.get_table("db.t")
    assert call(catalog, "rewrite_file_index", "db.t", "dt = '2024-01-02'").rows == [(1, 1)]
    assert call(catalog, "rewrite_file_index", table="db.t").rows == [(1, 2)]
    metas = _metas(table)
    assert sorted(metas) == names and all(m.embedded_index for m in metas.values())
    assert table.latest_snapshot().commit_kind == CommitKind.COMPACT
    assert call(catalog, "rewrite_file_index", table="db.t").rows == [(0, 0)]  # unchanged
    pruned = table.new_scan().plan(predicate=[("id", "=", 101)])
    assert 101 in table.new_read().to_arrow(pruned).column("id").to_pylist()
    assert sum(len(s.files) for s in pruned) < 3

    alter(table, {"file-index.in-manifest-threshold": "1 b"})
    assert call(catalog, "rewrite_file_index", table="db.t").rows == [(2, 3)]
    metas = _metas(catalog.get_table("db.t"))
    assert all(m.embedded_index is None for m in metas.values())
    assert all(m.extra_files == (f"{n}.index",) for n, m in metas.items())
    embedded = dict(_metas(table).items())
    assert call(catalog, "rewrite_file_index", table="db.t").rows == [(2, 3)]
    metas = _metas(catalog.get_table("db.t"))
    renamed = {n: n.replace(".parquet", ".parquet-1.index") for n in names}
    assert all(m.extra_files == (renamed[n],) for n, m in metas.items())
    day1 = _bucket_files(table, "2024-01-01")
    for n in names:
        if n in day1:
            with open(
                os.path.join(table.path, "dt=2024-01-01", "bucket-0", f"{n}.index"), "rb"
            ) as a:
                with open(
                    os.path.join(table.path, "dt=2024-01-01", "bucket-0", renamed[n]), "rb"
                ) as b:
                    assert a.read() == b.read() != embedded[n].embedded_index

    alter(
        table, {"file-index.bloom-filter.columns": None, "file-index.bloom-filter.id.items": None}
    )
    assert call(catalog, "rewrite_file_index", table="db.t").rows == [(2, 3)]
    metas = _metas(catalog.get_table("db.t"))
    assert all(m.extra_files == () and m.embedded_index is None for m in metas.values())
    assert sorted(r["id"] for r in oracle("read", warehouse, "db.t")) == [0, 1, 2, 100, 101, 102]

    index_files = {n for n in _bucket_files(table, "2024-01-01") if n.endswith(".index")}
    assert len(index_files) == 4  # two rewrites of two files
    call(catalog, "expire_snapshots", table="db.t", retain_max=1, retain_min=1)
    assert {n for n in _bucket_files(table, "2024-01-01") if n.endswith(".index")} == index_files
    assert sorted(_metas(catalog.get_table("db.t"))) == names
    # The live manifests still list the replaced metas (DELETE entries): their index files
    # are in use until the manifests are merged.
    for n in index_files:  # old enough for orphan cleanup
        path = os.path.join(table.path, "dt=2024-01-01", "bucket-0", n)
        os.utime(path, (time.time() - 3 * 86400, time.time() - 3 * 86400))
    assert call(catalog, "remove_orphan_files", "db.t").rows == [(0, 0)]
    call(catalog, "compact_manifest", table="db.t")
    call(catalog, "expire_snapshots", table="db.t", retain_max=1, retain_min=1)
    assert call(catalog, "remove_orphan_files", "db.t").rows[0][0] >= 4
    assert not {n for n in _bucket_files(table, "2024-01-01") if n.endswith(".index")}
    assert catalog.get_table("db.t").to_arrow().num_rows == 6


def test_rewrite_file_index_of_java_written_index_files(warehouse: str, oracle: Any) -> None:
    """Java 0.9 wrote the indexes; the rewrite keeps each (same bytes) in a new file."""
    oracle(
        "create-table", warehouse, "db.j", "--schema", "id INT, v STRING, dt STRING",
        "--partition", "dt", "--option", "file-index.bloom-filter.columns=id,v",
    )  # fmt: skip
    rows = [{"id": i, "v": f"v{i}", "dt": f"d{i % 2}"} for i in range(6)]
    oracle("write", warehouse, "db.j", "--json-rows", json.dumps(rows))
    catalog = FileSystemCatalog(warehouse)
    table = catalog.get_table("db.j")
    before = _metas(table)
    assert call(catalog, "rewrite_file_index", "db.j", "dt = 'd1'").rows == [(1, 1)]
    after = _metas(catalog.get_table("db.j"))
    changed = [n for n in after if after[n] != before[n]]
    assert len(changed) == 1
    (old_name,), (new_name,) = before[changed[0]].extra_files, after[changed[0]].extra_files
    assert new_name == old_name.replace(".parquet.index", ".parquet-1.index")
    bucket = os.path.join(table.path, "dt=d1", "bucket-0")
    with (
        open(os.path.join(bucket, old_name), "rb") as a,
        open(os.path.join(bucket, new_name), "rb") as b,
    ):
        assert a.read() == b.read()
    assert sorted(r["id"] for r in oracle("read", warehouse, "db.j")) == list(range(6))


def test_rewrite_file_index_switches_index_types(warehouse: str) -> None:
    """Paimon's ``testFileIndexProcedureSwitchIndexType``: bloom filters embedded, then a
    bitmap in an index file once the bloom filter is no longer declared."""
    catalog = new_catalog(warehouse)
    table = new_table(
        catalog,
        commits=1,
        options={
            "file-index.bloom-filter.columns": "id",
            "file-index.in-manifest-threshold": "1 MB",
        },
    )
    assert call(catalog, "rewrite_file_index", table="db.t").rows == [(0, 0)]  # as written
    (meta,) = _metas(table).values()
    assert [(m.column_name, m.index_type) for m in _index_metas(meta.embedded_index)] == [
        ("id", "bloom-filter")
    ]
    alter(
        table,
        {
            "file-index.in-manifest-threshold": "1 b",
            "file-index.bloom-filter.columns": None,
            "file-index.bitmap.columns": "id",
        },
    )
    assert call(catalog, "rewrite_file_index", table="db.t").rows == [(1, 1)]
    (meta,) = _metas(catalog.get_table("db.t")).values()
    assert meta.embedded_index is None and meta.extra_files == (f"{meta.file_name}.index",)
    path = os.path.join(table.path, "dt=2024-01-01", "bucket-0", meta.extra_files[0])
    with open(path, "rb") as f:
        assert [(m.column_name, m.index_type) for m in _index_metas(f.read())] == [("id", "bitmap")]
    table = catalog.get_table("db.t")
    assert sum(len(s.files) for s in table.new_scan().plan(predicate=[("id", "=", 7)])) == 0
    assert sum(len(s.files) for s in table.new_scan().plan(predicate=[("id", "=", 100)])) == 1


def _index_metas(container: bytes | None) -> list[Any]:
    assert container is not None
    return read_index_metas(io.BytesIO(container).read, "test")


def test_rewrite_file_index_refuses_bad_where_and_unknown_types(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=1, options={"file-index.bloom-filter.columns": "name"})
    before = _files(table.path)
    for args, needle in [
        ({"where": "name = 'x'"}, "'name' is not one of ['dt']"),
        ({"where": "dt ~ 1"}, "Unsupported where"),
    ]:
        with pytest.raises(ProcedureError) as err:
            call(catalog, "rewrite_file_index", table="db.t", **args)
        assert needle in str(err.value) and "\n" not in str(err.value)
    assert _files(table.path) == before


def test_rewrite_file_index_runs_picklable_bucket_tasks_and_commits_once(
    warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runner gets one task per bucket and a function that survive pickling (what Spark
    ships to executors); the driver commits their results once. When that commit fails,
    the index files the tasks created are deleted and the table is unchanged."""
    from paimon_core.operations import file_index
    from paimon_core.operations.commit import FileStoreCommit

    catalog = new_catalog(warehouse)
    options = {"file-index.bloom-filter.columns": "id", "file-index.in-manifest-threshold": "1 b"}
    new_table(catalog, commits=3)
    alter(catalog.get_table("db.t"), options)
    table = catalog.get_table("db.t")
    seen: list[list[Any]] = []

    def pickling_runner(func: Any, tasks: Any) -> list[Any]:
        seen.append(list(tasks))
        shipped = pickle.loads(pickle.dumps((func, list(tasks))))
        return [pickle.loads(pickle.dumps(shipped[0](t))) for t in shipped[1]]

    before = _files(table.path)

    def refuse(*_: Any, **__: Any) -> Any:
        raise CommitConflict("lost a race")

    with monkeypatch.context() as patch:
        patch.setattr(FileStoreCommit, "commit", refuse)
        with pytest.raises(CommitConflict):
            file_index.rewrite_file_index(table, runner=pickling_runner)
    assert _files(table.path) == before  # the tasks' index files were deleted
    assert [len(t.files) for t in seen[0]] == [2, 1]  # dt=2024-01-01 has two files

    result = file_index.rewrite_file_index(table, runner=pickling_runner)
    assert result == file_index.FileIndexRewrite(2, 3)
    assert snapshot_ids(table) == [1, 2, 3, 4]
    metas = _metas(table)
    assert all(m.extra_files == (f"{n}.index",) for n, m in metas.items())
    new_indexes = {f for f in set(_files(table.path)) - set(before) if f.endswith(".index")}
    assert sorted(os.path.basename(f) for f in new_indexes) == sorted(f"{n}.index" for n in metas)


def test_a_failing_rewrite_task_deletes_the_index_files_it_wrote(
    warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A task whose second file fails (an unreadable data file) deletes the index file it
    wrote for the first; nothing is committed."""
    from paimon_core.operations import file_index

    catalog = new_catalog(warehouse)
    new_table(catalog, commits=3)
    options = {"file-index.bloom-filter.columns": "id", "file-index.in-manifest-threshold": "1 b"}
    alter(catalog.get_table("db.t"), options)
    table = catalog.get_table("db.t")
    before = _files(table.path)
    real = file_index.FileIndexProcessor._read_columns
    reads: list[str] = []

    def second_fails(self: Any, path: str, info: Any) -> Any:
        reads.append(path)
        if len(reads) == 2:
            raise OSError(f"cannot read {path}")
        return real(self, path, info)

    monkeypatch.setattr(file_index.FileIndexProcessor, "_read_columns", second_fails)
    with pytest.raises(OSError, match="cannot read"):
        file_index.rewrite_file_index(table)
    assert len(reads) == 2 and "dt=2024-01-01" in reads[0]  # the first task's two files
    assert _files(table.path) == before and snapshot_ids(table) == [1, 2, 3]


# ------------------------------------------------------------------------------- copy


def _dv_table(warehouse: str) -> Any:
    """``db.t`` (k, v, dt): an append table with deletion vectors, key 1 deleted by one."""
    table = kvd_table(warehouse, options=DV)
    table.write_arrow(kvd_batch([1, 2], "a"))
    table.write_arrow(kvd_batch([3], "b"))
    delete_keys(table, {1})
    return table


def _kvd_rows(rows: list[dict[str, Any]]) -> list[tuple]:
    return sorted((r["k"], r["v"], r["dt"]) for r in rows)


def test_copy_into_a_new_table(warehouse: str, oracle: Any) -> None:
    source = _dv_table(warehouse)
    catalog = FileSystemCatalog(warehouse)
    assert source.latest_snapshot().index_manifest  # deletion vectors are in play
    expected = [(2, "v2", "a"), (3, "v3", "b")]
    assert _kvd_rows(source.to_arrow().to_pylist()) == expected
    before = _files(source.path)
    result = call(catalog, "copy", source_table="db.t", target_table="db2.c")
    assert [c.name for c in result.columns] == ["result"] and result.rows == [(True,)]
    assert _files(source.path) == before  # the source is only read
    target = catalog.get_table("db2.c")
    assert target.schema.fields == source.schema.fields
    assert target.schema.partition_keys == source.schema.partition_keys
    assert target.options.to_dict() == source.options.to_dict()
    assert target.latest_snapshot().commit_kind == CommitKind.OVERWRITE
    names = {e.file.file_name for e in target.new_scan().read_entries(target.latest_snapshot())}
    source_names = {
        e.file.file_name for e in source.new_scan().read_entries(source.latest_snapshot())
    }
    assert names and not names & source_names
    assert _kvd_rows(target.to_arrow().to_pylist()) == expected  # the deletion vector applies
    assert _kvd_rows(oracle("read", warehouse, "db2.c")) == expected


def test_copy_where_into_an_existing_table(warehouse: str) -> None:
    source = _dv_table(warehouse)
    catalog = FileSystemCatalog(warehouse)
    call(catalog, "copy", "db.t", "db.c", "dt = 'b'")
    target = catalog.get_table("db.c")
    assert _kvd_rows(target.to_arrow().to_pylist()) == [(3, "v3", "b")]
    source.write_arrow(kvd_batch([4], "b"))
    call(catalog, "copy", "db.t", "db.c")  # partitions a and b replaced by the copy
    assert _kvd_rows(target.to_arrow().to_pylist()) == [
        (2, "v2", "a"),
        (3, "v3", "b"),
        (4, "v4", "b"),
    ]


def test_copy_of_an_empty_table_creates_the_target(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    new_table(catalog, commits=0)
    assert call(catalog, "copy", "db.t", "db.e").rows == [(True,)]
    assert catalog.get_table("db.e").latest_snapshot() is None


def test_copy_refusals_change_nothing(warehouse: str) -> None:
    _dv_table(warehouse)
    catalog = FileSystemCatalog(warehouse)
    new_table(catalog, "db.s", commits=1)  # another layout
    evolved = new_table(catalog, "db.evolved", commits=1)
    evolved.schema_manager.commit_changes(AddColumn("extra", INT()))
    before = _files(warehouse)
    for args, needle in [
        (("db.s", "db.t"), "source table fields is not compatible with existed paimon table"),
        (("db.t", "db3.x", "v = 'x'"), "'v' is not one of ['dt']"),
        (("db.t", "db3.x", "dt ~ 'x'"), "Unsupported where"),
        (("db.nope", "db3.x"), "does not exist"),
        (("db.evolved", "db3.x"), "Cannot copy files written under schema 0"),
        (("db.t", "other.db3.x"), "Cannot run procedure in catalog 'paimon'"),
    ]:
        with pytest.raises(ProcedureError) as err:
            call(catalog, "copy", *args)
        assert needle in str(err.value) and "\n" not in str(err.value)
    assert _files(warehouse) == before
    assert not os.path.exists(os.path.join(warehouse, "db3.db"))


def _index_bytes(table: Any, day: str, meta: Any) -> bytes:
    (name,) = [x for x in meta.extra_files if x.endswith(".index")]
    with open(os.path.join(table.path, f"dt={day}", "bucket-0", name), "rb") as f:
        return f.read()


def test_copy_takes_each_files_index_file_along(warehouse: str) -> None:
    """A data file's external file index (``<data file>.index`` in its extra files) is
    copied beside the copied data file under the copy's name and referenced by it, so the
    target prunes by the same index the source does; nothing of the source is touched."""
    catalog = new_catalog(warehouse)
    options = {"file-index.bloom-filter.columns": "id", "file-index.in-manifest-threshold": "1 b"}
    source = new_table(catalog, commits=3, options=options)
    source_metas = _metas(source)
    assert all(m.extra_files == (f"{n}.index",) for n, m in source_metas.items())
    before = _files(source.path)

    assert call(catalog, "copy", "db.t", "db.c").rows == [(True,)]
    target = catalog.get_table("db.c")
    assert _files(source.path) == before
    entries = target.new_scan().read_entries(target.latest_snapshot())
    assert len(entries) == len(source_metas) == 3
    copied = []
    for e in entries:
        day = target.new_scan().partition_values(e.partition)[0]
        assert e.file.extra_files == (f"{e.file.file_name}.index",)
        copied.append((day, _index_bytes(target, day, e.file)))
    originals = [
        (day, _index_bytes(source, day, m))
        for e in source.new_scan().read_entries(source.latest_snapshot())
        for day, m in [(source.new_scan().partition_values(e.partition)[0], e.file)]
    ]
    assert sorted(copied) == sorted(originals) and len(set(originals)) == 3
    pruned = target.new_scan().plan(predicate=[("id", "=", 101)])
    assert sum(len(s.files) for s in pruned) == 1  # the index proves the others lack 101
    assert sorted(target.new_read().to_arrow(pruned).column("id").to_pylist()) == [1, 101]
    assert sorted(target.to_arrow().column("id").to_pylist()) == [0, 1, 2, 100, 101, 102]


def _failing_copies(monkeypatch: pytest.MonkeyPatch, fail_at: int) -> list[str]:
    """Make the ``fail_at``-th byte copy write a partial file and fail; returns the target
    paths copied to, in order."""
    from paimon_core.operations import copy

    real = copy._copy_bytes
    targets: list[str] = []

    def copy_bytes(source_io: Any, source: str, target_io: Any, target: str) -> None:
        targets.append(target)
        if len(targets) == fail_at:
            target_io.write_bytes(target, b"partial")
            raise OSError(f"cannot copy {source}")
        real(source_io, source, target_io, target)

    monkeypatch.setattr(copy, "_copy_bytes", copy_bytes)
    return targets


def _observing_runner(root: str, after_failure: list[list[str]]) -> Any:
    """An in-process runner that records the files under ``root`` when a task fails, before
    the failure reaches the driver (what is left then is the task's doing)."""

    def run(func: Any, tasks: Any) -> list[Any]:
        results = []
        for task in tasks:
            try:
                results.append(func(task))
            except OSError:
                after_failure.append(_files(root))
                raise
        return results

    return run


def test_a_failing_copy_task_deletes_the_files_it_copied(
    warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A task whose second file fails deletes the first file it copied and the half-written
    second before the failure reaches the driver; nothing is committed."""
    from paimon_core.operations import copy

    catalog = new_catalog(warehouse)
    source = new_table(catalog, commits=3)  # dt=2024-01-01: two files, 2024-01-02: one
    target = new_table(catalog, "db.c", commits=0)
    before = _files(target.path)
    targets = _failing_copies(monkeypatch, fail_at=2)
    after_failure: list[list[str]] = []
    with pytest.raises(OSError, match="cannot copy"):
        copy.copy_files(source, target, runner=_observing_runner(target.path, after_failure))
    assert len(targets) == 2 and all("dt=2024-01-01" in t for t in targets)
    assert after_failure == [before]  # the task itself deleted both
    assert _files(target.path) == before and target.latest_snapshot() is None


def test_a_failing_copy_task_makes_the_driver_delete_the_other_tasks_copies(
    warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the second task fails after the first one finished, the driver deletes what
    the first copied (Spark reports only the failure): the target is unchanged."""
    from paimon_core.operations import copy

    catalog = new_catalog(warehouse)
    source = new_table(catalog, commits=3)
    target = new_table(catalog, "db.c", commits=0)
    before = _files(target.path)
    targets = _failing_copies(monkeypatch, fail_at=3)
    after_failure: list[list[str]] = []
    with pytest.raises(OSError, match="cannot copy"):
        copy.copy_files(source, target, runner=_observing_runner(target.path, after_failure))
    assert len(targets) == 3 and "dt=2024-01-02" in targets[2]
    (left,) = after_failure
    assert len(set(left) - set(before)) == 2  # the first task's two copies, until the driver
    assert _files(target.path) == before and target.latest_snapshot() is None


def test_copy_runs_picklable_bucket_tasks_and_a_failed_commit_deletes_every_copy(
    warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runner gets one task per bucket (its data files and index files) and a function
    that survive pickling (what Spark ships to executors); the driver commits once. When
    that commit fails, every copied file is deleted and the target is unchanged."""
    from paimon_core.operations import copy
    from paimon_core.operations.commit import FileStoreCommit

    source = _dv_table(warehouse)
    catalog = FileSystemCatalog(warehouse)
    call(catalog, "copy", "db.t", "db.c", "dt = 'x'")  # creates db.c, copies nothing
    target = catalog.get_table("db.c")
    assert target.latest_snapshot() is None
    seen: list[list[Any]] = []

    def pickling_runner(func: Any, tasks: Any) -> list[Any]:
        seen.append(list(tasks))
        shipped = pickle.loads(pickle.dumps((func, list(tasks))))
        return [pickle.loads(pickle.dumps(shipped[0](t))) for t in shipped[1]]

    def refuse(*_: Any, **__: Any) -> Any:
        raise CommitConflict("lost a race")

    before = _files(target.path)
    with monkeypatch.context() as patch:
        patch.setattr(FileStoreCommit, "overwrite", refuse)
        with pytest.raises(CommitConflict):
            copy.copy_files(source, target, runner=pickling_runner)
    assert _files(target.path) == before and target.latest_snapshot() is None
    (tasks,) = seen
    copies = [dst for t in tasks for _, dst in t.files]
    assert len(tasks) == 2  # the buckets of dt=a and dt=b
    assert sum(dst.endswith(".parquet") for dst in copies) == 2
    assert sum("/index/" in dst for dst in copies) == 1  # dt=a's deletion vectors

    assert copy.copy_files(source, target, runner=pickling_runner) == 1
    assert target.latest_snapshot().commit_kind == CommitKind.OVERWRITE
    assert _kvd_rows(target.to_arrow().to_pylist()) == [(2, "v2", "a"), (3, "v3", "b")]

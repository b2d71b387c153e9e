"""Snapshot JSON serde against golden files, and the manager: hints, publish, cache, time search."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import CorruptMetadata, SnapshotNotFound
from paimon_core.format.snapshot import (
    JSON_NAMES,
    ChangelogManager,
    CommitKind,
    Snapshot,
    SnapshotManager,
    jackson_json,
    snapshot_from_dict,
    snapshot_from_json,
    snapshot_to_dict,
    snapshot_to_json,
)
from paimon_core.io.fileio import FileIO, FileStatus, LocalFileIO, PyArrowFileIO
from paimon_core.table import FileStoreTable
from tests.unit.paimon_core.helpers import CORRUPT_SNAPSHOT_JSON, corrupt_file

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "paimon"
PYPAIMON = FIXTURES / "pypaimon-2.1"
GOLDEN = sorted(PYPAIMON.glob("*/snapshot/snapshot-*"))
JAVA_ORDER = list(JSON_NAMES.values())


def _snap(snapshot_id: int, time_millis: int = 0, **kw: object) -> Snapshot:
    return Snapshot(
        snapshot_id=snapshot_id,
        schema_id=0,
        base_manifest_list=f"manifest-list-b-{snapshot_id}",
        delta_manifest_list=f"manifest-list-d-{snapshot_id}",
        commit_user="user",
        commit_identifier=snapshot_id,
        commit_kind=CommitKind.APPEND,
        time_millis=time_millis or 1_000 * snapshot_id,
        total_record_count=snapshot_id,
        delta_record_count=1,
        **kw,  # type: ignore[arg-type]
    )


class CountingIO(LocalFileIO):
    """Counts the file-system calls the manager makes."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: Counter[str] = Counter()

    def exists(self, path: str) -> bool:
        self.calls["exists"] += 1
        return super().exists(path)

    def read_bytes(self, path: str) -> bytes:
        self.calls["read"] += 1
        return super().read_bytes(path)

    def list_names(self, directory: str) -> list[str]:
        self.calls["list"] += 1
        return super().list_names(directory)


def _manager(tmp_path: Path, ids: range | list[int] = range(1, 6)) -> SnapshotManager:
    manager = SnapshotManager(CountingIO(), str(tmp_path / "t"))
    for i in ids:
        assert manager.commit(_snap(i))
    return SnapshotManager(CountingIO(), str(tmp_path / "t"))  # fresh cache


def _hint(manager: SnapshotManager, name: str, text: str | None) -> None:
    path = Path(manager.snapshot_dir, name)
    if text is None:
        path.unlink(missing_ok=True)
    else:
        path.write_text(text)


# ------------------------------------------------------------------------------ serde


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: f"{p.parts[-3]}-{p.name}")
def test_pypaimon_golden_snapshots_round_trip(path: Path) -> None:
    text = path.read_text()
    original = json.loads(text)
    snapshot = snapshot_from_json(text)
    assert snapshot.snapshot_id == int(path.name.split("-")[1]) == original["id"]
    as_dict = snapshot_to_dict(snapshot)
    assert as_dict == original
    assert list(as_dict) == [k for k in JAVA_ORDER if k in original]
    assert snapshot_from_json(snapshot_to_json(snapshot)) == snapshot


def test_pypaimon_golden_values() -> None:
    snapshot = snapshot_from_json((PYPAIMON / "pkdyn/snapshot/snapshot-2").read_text())
    assert snapshot.commit_kind is CommitKind.APPEND
    assert snapshot.commit_identifier == 2**63 - 1
    assert snapshot.index_manifest == "index-manifest-082f754f-a154-4c2b-aedd-11faf666ed19"
    assert (snapshot.base_manifest_list_size, snapshot.delta_manifest_list_size) == (1349, 1345)
    assert (snapshot.total_record_count, snapshot.delta_record_count) == (5, 2)
    assert snapshot.writer_version.startswith("python-2.1.0-")  # type: ignore[union-attr]
    assert snapshot.next_row_id is None and snapshot.changelog_manifest_list is None


def test_java_142_example_round_trips_byte_for_byte() -> None:
    text = (FIXTURES / "java/java-1.4.2-snapshot-2").read_text()
    snapshot = snapshot_from_json(text)
    assert snapshot.next_row_id == 0 and snapshot.uuid is None
    assert snapshot_to_json(snapshot) == text


def test_java_10_shape_is_read_and_rewritten_in_142_shape() -> None:
    text = (FIXTURES / "java/java-1.0-snapshot-5").read_text()
    snapshot = snapshot_from_json(text)
    assert snapshot.commit_kind is CommitKind.COMPACT
    assert snapshot.changelog_manifest_list is None
    assert snapshot.log_offsets == {}
    assert snapshot.watermark == -(2**63)
    assert snapshot.properties == {"flink.job-id": "0f1e2d3c", "note": 'é " \\ /'}
    out = snapshot_to_json(snapshot)
    assert '"changelogManifestList"' not in out and "someFutureKey" not in out
    assert '  "logOffsets" : { },\n' in out
    assert (
        '  "properties" : {\n    "flink.job-id" : "0f1e2d3c",\n    "note" : "é \\" \\\\ /"\n  }\n}'
    ) == out[out.index('  "properties"') :]
    assert snapshot_from_json(out) == snapshot


def test_nulls_always_written_and_optional_primitives_default_to_zero() -> None:
    """Paimon <= 0.3 wrote no version and no record counts: Jackson reads them as 0."""
    snapshot = snapshot_from_json(
        '{"id": 4, "schemaId": 1, "baseManifestList": null, "deltaManifestList": null,'
        ' "commitUser": null, "commitIdentifier": 7, "commitKind": "OVERWRITE",'
        ' "timeMillis": 9, "unknown": 1}'
    )
    assert (snapshot.version, snapshot.total_record_count, snapshot.delta_record_count) == (
        0,
        0,
        0,
    )
    assert (snapshot.schema_id, snapshot.commit_identifier, snapshot.time_millis) == (1, 7, 9)
    assert snapshot.commit_kind is CommitKind.OVERWRITE
    assert snapshot.base_manifest_list is None  # type: ignore[comparison-overlap]
    expected = (FIXTURES / "java/TagTest-plain").read_text()
    java_test = replace(snapshot_from_json(expected))
    assert snapshot_to_json(java_test) == expected
    assert list(snapshot_to_dict(java_test))[3:6] == [
        "baseManifestList",
        "deltaManifestList",
        "commitUser",
    ]


def test_jackson_printer_shapes() -> None:
    assert jackson_json({}) == "{ }"
    assert jackson_json('a\x01\n"\\é\x7f') == '"a\\u0001\\n\\"\\\\é\x7f"'
    assert jackson_json({"a": [], "b": [1, 2], "c": {"d": None}}) == (
        '{\n  "a" : [ ],\n  "b" : [ 1, 2 ],\n  "c" : {\n    "d" : null\n  }\n}'
    )


def test_every_field_has_one_json_name() -> None:
    full = _snap(
        3,
        base_manifest_list_size=1,
        delta_manifest_list_size=2,
        changelog_manifest_list="manifest-list-c",
        changelog_manifest_list_size=3,
        index_manifest="index-manifest-x",
        changelog_record_count=4,
        watermark=5,
        statistics="stat-x",
        properties={"k": "v"},
        next_row_id=6,
        uuid="u",
        operation="WRITE",
        writer_version="w",
        log_offsets={0: 7},
    )
    as_dict = snapshot_to_dict(full)
    assert list(as_dict) == JAVA_ORDER
    assert as_dict["logOffsets"] == {"0": 7}
    assert snapshot_from_dict(json.loads(snapshot_to_json(full))) == full
    assert hash(full) == hash(replace(full, properties={"other": "x"}))


# ------------------------------------------------------------------------- manager


def test_manager_reads_pypaimon_table(tmp_path: Path) -> None:
    table = tmp_path / "app"
    shutil.copytree(PYPAIMON / "app", table)
    manager = SnapshotManager(LocalFileIO(), str(table))
    assert manager.latest_snapshot_id() == 3
    assert manager.earliest_snapshot_id() == 1  # pypaimon writes no EARLIEST
    assert [s.total_record_count for s in manager.snapshots()] == [2, 3, 5]
    assert manager.latest_snapshot().time_millis == 1795345130858  # type: ignore[union-attr]


def test_empty_table(tmp_path: Path) -> None:
    manager = SnapshotManager(CountingIO(), str(tmp_path / "t"))
    assert manager.latest_snapshot_id() is None
    assert manager.earliest_snapshot_id() is None
    assert manager.latest_snapshot() is None and manager.earliest_snapshot() is None
    assert manager.list_snapshot_ids() == [] and manager.snapshots() == []
    assert manager.earlier_or_equal_time_millis(10**15) is None


def test_good_latest_hint_costs_one_read_and_two_exists(tmp_path: Path) -> None:
    manager = _manager(tmp_path)
    assert manager.latest_snapshot_id() == 5
    assert manager.file_io.calls == Counter(read=1, exists=2)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("hint", "expected"),
    [
        (None, 5),  # missing
        ("4", 5),  # stale by one
        ("1", 5),  # stale by many
        ("9", 5),  # ahead of the table
        ("abc", 5),  # garbage
        ("", 5),  # empty file (a writer is overwriting it)
        ("0", 5),
        ("-3", 5),
        ("5\n", 5),  # tolerated whitespace
    ],
)
def test_latest_hint_fallbacks(tmp_path: Path, hint: str | None, expected: int) -> None:
    manager = _manager(tmp_path)
    _hint(manager, "LATEST", hint)
    assert manager.latest_snapshot_id() == expected
    assert manager.latest_snapshot().snapshot_id == expected  # type: ignore[union-attr]


def test_latest_hint_pointing_to_a_deleted_snapshot(tmp_path: Path) -> None:
    manager = _manager(tmp_path)
    os.remove(manager.snapshot_path(5))  # e.g. a rollback that died before its hint write
    assert manager.latest_snapshot_id() == 4
    assert manager.latest_snapshot().snapshot_id == 4  # type: ignore[union-attr]


def test_known_latest_is_trusted_as_the_hint_is(tmp_path: Path) -> None:
    """A committer's own last snapshot id stands in for LATEST: used while no snapshot
    follows it, passed over when another one does or when it is gone."""
    manager = _manager(tmp_path)  # snapshots 1..5
    calls = manager.file_io.calls  # type: ignore[attr-defined]
    assert manager.latest_snapshot(fresh=True, known=5).snapshot_id == 5  # type: ignore[union-attr]
    assert calls["read"] == 1  # snapshot-5 only, not LATEST
    assert manager.latest_snapshot(fresh=True, known=3).snapshot_id == 5  # type: ignore[union-attr]
    os.remove(manager.snapshot_path(5))  # rolled back elsewhere
    _hint(manager, "LATEST", "4")
    assert manager.latest_snapshot(fresh=True, known=5).snapshot_id == 4  # type: ignore[union-attr]


def test_earliest_hint(tmp_path: Path) -> None:
    manager = _manager(tmp_path)
    assert manager.earliest_snapshot_id() == 1
    for i in (1, 2, 3):
        manager.delete_snapshot(i)
    _hint(manager, "EARLIEST", "2")  # stale: points to an expired snapshot
    assert manager.earliest_snapshot_id() == 4
    manager.write_earliest_hint(4)
    assert Path(manager.earliest_hint_path).read_text() == "4"
    calls = manager.file_io.calls  # type: ignore[attr-defined]
    calls.clear()
    assert manager.earliest_snapshot().snapshot_id == 4  # type: ignore[union-attr]
    assert calls["list"] == 0
    for bad in ("", "x", "0"):
        _hint(manager, "EARLIEST", bad)
        assert manager.earliest_snapshot_id() == 4


def test_listing_ignores_temp_and_foreign_files(tmp_path: Path) -> None:
    manager = _manager(tmp_path, [1, 2])
    for name in (".snapshot-3.0b1c.tmp", "snapshot-x", "snapshot-", "snapshot-3.tmp", "EARLIEST"):
        Path(manager.snapshot_dir, name).write_text("junk")
    _hint(manager, "LATEST", None)
    assert manager.list_snapshot_ids() == [1, 2]
    assert manager.latest_snapshot_id() == 2


def test_commit_publishes_once_and_writes_hint(tmp_path: Path) -> None:
    manager = SnapshotManager(LocalFileIO(), str(tmp_path / "t"))
    first = _snap(1, properties={"a": "b"})
    assert manager.commit(first) is True
    assert Path(manager.snapshot_path(1)).read_text() == snapshot_to_json(first)
    assert Path(manager.latest_hint_path).read_bytes() == b"1"
    assert manager.commit(replace(first, commit_user="rival")) is False
    assert snapshot_from_json(Path(manager.snapshot_path(1)).read_text()) == first
    assert sorted(os.listdir(manager.snapshot_dir)) == ["LATEST", "snapshot-1"]
    assert SnapshotManager(LocalFileIO(), str(tmp_path / "t")).snapshot(1) == first


class _HintFails(LocalFileIO):
    def overwrite_atomic(self, path: str, data: bytes) -> None:
        if path.endswith("LATEST"):
            raise OSError("injected hint failure")
        super().overwrite_atomic(path, data)


def test_lost_latest_hint_is_harmless(tmp_path: Path) -> None:
    manager = SnapshotManager(_HintFails(), str(tmp_path / "t"))
    assert manager.commit(_snap(1))
    assert manager.commit(_snap(2))
    assert not os.path.exists(manager.latest_hint_path)
    assert SnapshotManager(LocalFileIO(), str(tmp_path / "t")).latest_snapshot_id() == 2


def test_writes_go_through_injectable_methods(tmp_path: Path) -> None:
    steps: list[str] = []

    class Recording(LocalFileIO):
        def write_no_clobber(self, path: str, data: bytes) -> bool:
            steps.append(f"no_clobber {os.path.basename(path)}")
            return super().write_no_clobber(path, data)

        def write_bytes(self, path: str, data: bytes) -> None:
            steps.append(f"write {os.path.basename(path)}")
            super().write_bytes(path, data)

        def overwrite_atomic(self, path: str, data: bytes) -> None:
            steps.append(f"replace {os.path.basename(path)}")
            super().overwrite_atomic(path, data)

    SnapshotManager(Recording(), str(tmp_path / "t")).commit(_snap(1))
    assert steps == ["no_clobber snapshot-1", "replace LATEST"]


def test_snapshot_lookup_and_cache(tmp_path: Path) -> None:
    manager = _manager(tmp_path, [1, 2, 3])
    calls = manager.file_io.calls  # type: ignore[attr-defined]
    assert manager.snapshot(2) == _snap(2)
    assert manager.snapshot(2) == _snap(2)
    assert calls["read"] == 1
    assert manager.snapshot_exists(2) and not manager.snapshot_exists(9)
    with pytest.raises(SnapshotNotFound):
        manager.snapshot(9)
    assert manager.try_snapshot(9) is None
    assert manager.delete_snapshot(2) is True
    assert manager.delete_snapshot(2) is False
    with pytest.raises(SnapshotNotFound):
        manager.snapshot(2)
    assert manager.list_snapshot_ids() == [1, 3]
    assert [s.snapshot_id for s in manager.snapshots()] == [1, 3]


def test_cache_is_bounded(tmp_path: Path) -> None:
    _manager(tmp_path, [1, 2, 3])
    manager = SnapshotManager(CountingIO(), str(tmp_path / "t"), cache_size=2)
    for i in (1, 2, 3, 1):
        manager.snapshot(i)
    assert manager.file_io.calls["read"] == 4  # type: ignore[attr-defined]
    manager.snapshot(3)
    assert manager.file_io.calls["read"] == 4  # type: ignore[attr-defined]


def test_time_millis_search_with_gaps(tmp_path: Path) -> None:
    manager = SnapshotManager(LocalFileIO(), str(tmp_path / "t"))
    for i in range(1, 11):
        manager.commit(_snap(i, time_millis=100 * i))
    for i in (1, 2, 5, 6, 9):
        manager.delete_snapshot(i)
    # left: 3@300 4@400 7@700 8@800 10@1000
    earlier = manager.earlier_or_equal_time_millis
    later = manager.later_or_equal_time_millis
    assert earlier(299) is None
    assert earlier(300).snapshot_id == 3  # type: ignore[union-attr]
    assert earlier(699).snapshot_id == 4  # type: ignore[union-attr]
    assert earlier(5000).snapshot_id == 10  # type: ignore[union-attr]
    assert later(0).snapshot_id == 3  # type: ignore[union-attr]
    assert later(401).snapshot_id == 7  # type: ignore[union-attr]
    assert later(1000).snapshot_id == 10  # type: ignore[union-attr]
    assert later(1001) is None
    assert manager.snapshot_ids_between(3, 8) == [4, 7, 8]


def test_time_search_survives_concurrent_deletion(tmp_path: Path) -> None:
    writer = SnapshotManager(LocalFileIO(), str(tmp_path / "t"))
    for i in range(1, 8):
        writer.commit(_snap(i, time_millis=100 * i))
    manager = SnapshotManager(LocalFileIO(), str(tmp_path / "t"))
    listed = manager.list_snapshot_ids

    def stale_listing() -> list[int]:
        ids = listed()
        os.remove(manager.snapshot_path(4))  # deleted after the listing, before reading
        return ids

    manager.list_snapshot_ids = stale_listing  # type: ignore[method-assign]
    assert manager.earlier_or_equal_time_millis(450).snapshot_id == 3  # type: ignore[union-attr]


def test_branch_layout(tmp_path: Path) -> None:
    main = SnapshotManager(LocalFileIO(), str(tmp_path / "t"), branch="main")
    branch = SnapshotManager(LocalFileIO(), str(tmp_path / "t"), branch="b1")
    assert main.snapshot_path(1) == f"{tmp_path}/t/snapshot/snapshot-1"
    assert branch.snapshot_path(1) == f"{tmp_path}/t/branch/branch-b1/snapshot/snapshot-1"


class _CoarseIO(LocalFileIO):
    """Like an object store: modification times in whole seconds, and a version built on
    them (the weakest token a file system could give)."""

    def get_status(self, path: str) -> FileStatus:
        s = super().get_status(path)
        return FileStatus(s.path, s.size, s.mtime_ms // 1000 * 1000, s.is_dir)

    def version(self, path: str) -> object:
        s = self.get_status(path)
        return s.size, s.mtime_ms


def _recommitted_snapshot_2(warehouse: str, make_io: Callable[[], FileIO]) -> list[list[int]]:
    """Handle A caches snapshot 2; snapshot 2 is rolled back (files only, as pypaimon and
    Paimon >= 1.2 do) and B commits another snapshot 2 of the same size; then A commits."""
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    schema = pa.schema([("k", pa.int64())])
    first = catalog.create_table("db.t", schema, options={"write-only": "true"})
    first.write_arrow(pa.table({"k": [1]}, schema=schema))
    a = FileStoreTable(make_io(), first.path, first.schema, first.identifier)
    b = FileStoreTable(make_io(), first.path, first.schema, first.identifier)
    a.write_arrow(pa.table({"k": [2]}, schema=schema))
    assert a.to_arrow()["k"].to_pylist() == [1, 2]
    snapshot_2 = Path(first.path, "snapshot", "snapshot-2")
    size = snapshot_2.stat().st_size
    snapshot_2.unlink()
    Path(first.path, "snapshot", "LATEST").write_text("1")
    b.write_arrow(pa.table({"k": [3]}, schema=schema))
    assert snapshot_2.stat().st_size == size
    seen = [sorted(t.to_arrow()["k"].to_pylist()) for t in (a, b)]
    a.write_arrow(pa.table({"k": [4]}, schema=schema))
    return [*seen, sorted(FileStoreTable.load(first.path).to_arrow()["k"].to_pylist())]


@pytest.mark.parametrize(
    "make_io",
    [LocalFileIO, _CoarseIO, lambda: PyArrowFileIO("/", pafs.LocalFileSystem())],
    ids=["local", "coarse-version", "pyarrow"],
)
def test_snapshot_replaced_within_a_second_is_never_stale_and_loses_nothing(
    tmp_path: Path, make_io: Callable[[], FileIO]
) -> None:
    a_sees, b_sees, final = _recommitted_snapshot_2(str(tmp_path), make_io)
    assert final == [1, 3, 4]  # A's commit builds on B's snapshot 2, not its cached one
    assert b_sees == [1, 3]
    if make_io is not _CoarseIO:  # a coarse version can fool reads, never a commit
        assert a_sees == [1, 3]


def test_fresh_read_ignores_a_matching_version(tmp_path: Path) -> None:
    manager = SnapshotManager(_CoarseIO(), str(tmp_path / "t"))
    assert manager.commit(replace(_snap(1), commit_user="a"))
    path = Path(manager.snapshot_path(1))
    mtime = path.stat().st_mtime_ns
    path.write_text(snapshot_to_json(replace(_snap(1), commit_user="b")))  # same size
    os.utime(path, ns=(mtime, mtime))
    assert manager.snapshot(1).commit_user == "a"  # the coarse version matches: cached
    assert manager.snapshot(1, fresh=True).commit_user == "b"
    assert manager.latest_snapshot(fresh=True).commit_user == "b"  # type: ignore[union-attr]


# ------------------------------------------------------------------------- corrupt files


def _raises_naming(path: str, what: str = "Snapshot") -> pytest.RaisesContext[CorruptMetadata]:
    return pytest.raises(
        CorruptMetadata, match=f"^{what} file {re.escape(path)} is corrupt: [^\n]+$"
    )


@pytest.mark.parametrize("how", CORRUPT_SNAPSHOT_JSON)
def test_corrupt_snapshot_file_is_a_clear_error_naming_it(tmp_path: Path, how: str) -> None:
    manager = _manager(tmp_path)
    assert len(manager.snapshots()) == 5  # cached: a corrupted file must not read as cached
    path = manager.snapshot_path(3)
    corrupt_file(path, how, CORRUPT_SNAPSHOT_JSON)
    before = Path(path).read_bytes()
    for read in (
        lambda: manager.snapshot(3),
        lambda: manager.try_snapshot(3),
        lambda: manager.try_snapshot(3, fresh=True),
        manager.snapshots,
        lambda: manager.earlier_or_equal_time_millis(3_000),
        lambda: SnapshotManager(LocalFileIO(), manager.table_path).snapshot(3),
    ):
        with _raises_naming(path):
            read()
    assert Path(path).read_bytes() == before
    assert manager.snapshot(4).snapshot_id == 4


def test_the_example_of_the_issue_lacks_its_manifest_lists(tmp_path: Path) -> None:
    manager = _manager(tmp_path)
    Path(manager.snapshot_path(4)).write_text('{"version":3,"id":4}')
    with pytest.raises(CorruptMetadata) as error:
        manager.snapshot(4)
    assert str(error.value) == (
        f"Snapshot file {manager.snapshot_path(4)} is corrupt: required fields 'schemaId', "
        "'baseManifestList', 'deltaManifestList', 'commitUser', 'commitIdentifier', "
        "'commitKind', 'timeMillis' are missing"
    )


@pytest.mark.parametrize(("hint", "snapshot_id"), [("LATEST", 5), ("EARLIEST", 1)])
def test_hint_pointing_at_a_corrupt_snapshot_names_the_snapshot(
    tmp_path: Path, hint: str, snapshot_id: int
) -> None:
    manager = _manager(tmp_path)
    _hint(manager, hint, str(snapshot_id))
    path = manager.snapshot_path(snapshot_id)
    corrupt_file(path, "truncated", CORRUPT_SNAPSHOT_JSON)
    read = manager.latest_snapshot if hint == "LATEST" else manager.earliest_snapshot
    with _raises_naming(path):
        read()


@pytest.mark.parametrize("data", [b"\xff\xfe\x00", b"{}", b"5" * 400, b"\x00"])
def test_garbage_hint_bytes_fall_back_to_the_listing(tmp_path: Path, data: bytes) -> None:
    manager = _manager(tmp_path)
    Path(manager.latest_hint_path).write_bytes(data)
    Path(manager.earliest_hint_path).write_bytes(data)
    assert (manager.latest_snapshot_id(), manager.earliest_snapshot_id()) == (5, 1)


def test_corrupt_changelog_file_names_it(tmp_path: Path) -> None:
    changelogs = ChangelogManager(LocalFileIO(), str(tmp_path / "t"))
    assert changelogs.commit(_snap(2))
    path = changelogs.snapshot_path(2)
    corrupt_file(path, "id-mismatch", CORRUPT_SNAPSHOT_JSON)
    with _raises_naming(path, "Changelog"):
        changelogs.try_snapshot(2)


@settings(max_examples=200, deadline=None)
@given(
    st.builds(
        Snapshot,
        snapshot_id=st.integers(1, 2**63 - 1),
        schema_id=st.integers(0, 2**63 - 1),
        base_manifest_list=st.text(),
        delta_manifest_list=st.text(),
        commit_user=st.text(),
        commit_identifier=st.integers(-(2**63), 2**63 - 1),
        commit_kind=st.sampled_from(list(CommitKind)),
        time_millis=st.integers(0, 2**63 - 1),
        total_record_count=st.integers(-(2**63), 2**63 - 1),
        delta_record_count=st.integers(-(2**63), 2**63 - 1),
        index_manifest=st.none() | st.text(),
        watermark=st.none() | st.integers(-(2**63), 2**63 - 1),
        statistics=st.none() | st.text(),
        properties=st.none() | st.dictionaries(st.text(), st.text(), max_size=3),
        log_offsets=st.none() | st.dictionaries(st.integers(0, 9), st.integers(0, 99), max_size=3),
        changelog_manifest_list=st.none() | st.text(),
        changelog_record_count=st.none() | st.integers(0, 10),
        next_row_id=st.none() | st.integers(0, 10),
        uuid=st.none() | st.text(),
    )
)
def test_snapshot_json_is_the_generic_jackson_rendering(snapshot: Snapshot) -> None:
    """The field-by-field writer every commit uses renders what the generic Jackson
    rendering of the snapshot's JSON object does."""
    text = snapshot_to_json(snapshot)
    assert text == jackson_json(snapshot_to_dict(snapshot))
    assert snapshot_from_json(text) == snapshot

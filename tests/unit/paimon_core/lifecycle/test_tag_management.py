"""Tag management: create/replace/rename/delete/list/expire, errors change nothing, interop."""

from __future__ import annotations

import json
import os
import time
import types
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pyarrow as pa
import pytest

import paimon_core.operations.commit as commit_module
from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import (
    InvalidArgument,
    InvalidTagName,
    SnapshotNotFound,
    TagAlreadyExists,
    TagNotFound,
)
from paimon_core.format.names import validate_tag_name
from paimon_core.format.snapshot import snapshot_to_json
from paimon_core.io.fileio import LocalFileIO
from paimon_core.lifecycle import tag_management as tm
from paimon_core.lifecycle.expire import expire_snapshots
from paimon_core.lifecycle.orphan import remove_orphan_files
from paimon_core.table import FileStoreTable
from tests.interop.helpers import pypaimon_read, rows
from tests.unit.paimon_core.helpers import file_state, keys

SCHEMA = pa.schema([("k", pa.int64()), ("v", pa.string())])
NOW = datetime(2024, 5, 6, 7, 8, 9, 123456)


def _table(warehouse: str, **options: str) -> FileStoreTable:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    return catalog.create_table("db.t", SCHEMA, options=options)


def _write(table: FileStoreTable, *ks: int) -> int:
    data = pa.table({"k": list(ks), "v": [f"v{k}" for k in ks]}, schema=SCHEMA)
    snapshot_id = table.write_arrow(data)
    assert snapshot_id is not None
    return snapshot_id


def _tag_json(table: FileStoreTable, name: str) -> dict[str, Any]:
    return json.loads(table.file_io.read_bytes(table.tag_manager.tag_path(name)))


@pytest.fixture
def commit_at(monkeypatch: pytest.MonkeyPatch) -> types.SimpleNamespace:
    """Set ``.millis`` to fix the commit time of the next commits (None: the real clock)."""
    clock = types.SimpleNamespace(millis=None)
    fake = types.SimpleNamespace(**{n: getattr(time, n) for n in dir(time) if n[0] != "_"})
    fake.time = lambda: time.time() if clock.millis is None else clock.millis / 1000
    monkeypatch.setattr(commit_module, "time", fake)
    return clock


# --------------------------------------------------------------------------- names


@pytest.mark.parametrize(
    "name",
    ["", "   ", "\t", "a/b", "a\\b", "..", "a..b", ".hidden", "a\nb", "a\x00b", "x\x7f", "\x85"],
)
def test_invalid_tag_names_are_rejected_and_nothing_is_written(warehouse: str, name: str) -> None:
    table = _table(warehouse)
    _write(table, 1)
    before = file_state(warehouse)
    with pytest.raises(InvalidTagName) as err:
        tm.create_tag(table, name)
    assert "\n" not in str(err.value)
    with pytest.raises(InvalidTagName):
        tm.delete_tags(table, [name] if name.strip() else name)
    assert file_state(warehouse) == before


@pytest.mark.parametrize("name", ["20240101", "123", "007"])
def test_purely_numeric_names_cannot_be_created_but_stay_usable(warehouse: str, name: str) -> None:
    table = _table(warehouse)
    _write(table, 1)
    before = file_state(warehouse)
    with pytest.raises(InvalidTagName, match="purely numeric"):
        tm.create_tag(table, name)
    assert file_state(warehouse) == before
    tm.create_tag(table, name, allow_numeric=True)  # as automatic tags and other writers do
    assert list(tm.list_tags(table)) == [name]
    assert keys(table, **{"scan.tag-name": name}) == [1]
    with pytest.raises(InvalidTagName, match="purely numeric"):
        tm.rename_tag(table, name, "42")
    tm.rename_tag(table, name, "named")
    tm.delete_tags(table, "named")
    assert tm.list_tags(table) == {}


@pytest.mark.parametrize("name", ["t1", "2024-01-01", "tag-1", "a b", "ü.x", "v2"])
def test_valid_tag_names(warehouse: str, name: str) -> None:
    table = _table(warehouse)
    _write(table, 1)
    validate_tag_name(name)
    tm.create_tag(table, name)
    assert list(tm.list_tags(table)) == [name]
    assert keys(table, **{"scan.tag-name": name}) == [1]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (" lead", "must not start or end with whitespace"),
        ("trail ", "must not start or end with whitespace"),
        ("\u3000wide", "must not start or end with whitespace"),
        ("x" * 201, "is 201 bytes long; at most 200 bytes are allowed"),
        ("ü" * 101, "is 202 bytes long"),
    ],
)
def test_new_names_without_surrounding_whitespace_and_short_enough(
    warehouse: str, name: str, message: str
) -> None:
    table = _table(warehouse)
    _write(table, 1)
    tm.create_tag(table, "old")
    before = file_state(warehouse)
    for create in (
        lambda: tm.create_tag(table, name),
        lambda: tm.create_tag(table, name, allow_numeric=True),
        lambda: tm.create_tag_from_timestamp(table, name, 0),
        lambda: tm.rename_tag(table, "old", name),
    ):
        with pytest.raises(InvalidTagName, match=message) as err:
            create()
        assert "\n" not in str(err.value)
    assert file_state(warehouse) == before


def test_longest_new_names_work_end_to_end(warehouse: str) -> None:
    table = _table(warehouse)
    _write(table, 1)
    for name in ("x" * 200, "ü" * 100):
        tm.create_tag(table, name)
        tm.replace_tag(table, name, time_retained="1 d")  # the atomic rewrite's temp name fits
        assert keys(table, **{"scan.tag-name": name}) == [1]
    tm.delete_tags(table, ["x" * 200, "ü" * 100])
    assert tm.list_tags(table) == {}


def test_blank_name_message_is_paimons(warehouse: str) -> None:
    with pytest.raises(InvalidTagName, match=r"^Tag name shouldn't be blank\.$"):
        validate_tag_name(" ")


# -------------------------------------------------------------------------- create


def test_create_tag_on_latest_is_the_exact_snapshot_json(warehouse: str) -> None:
    table = _table(warehouse)
    _write(table, 1)
    _write(table, 2)
    tag = tm.create_tag(table, "t")
    manager = table.snapshot_manager
    assert tag.snapshot_id == 2 and tag.tag_time_retained is None
    assert table.file_io.read_bytes(table.tag_manager.tag_path("t")) == table.file_io.read_bytes(
        manager.snapshot_path(2)
    )
    tm.create_tag(table, "first", snapshot_id=1)
    assert table.file_io.read_text(table.tag_manager.tag_path("first")) == snapshot_to_json(
        manager.snapshot(1)
    )
    assert keys(table, **{"scan.tag-name": "first"}) == [1]


def test_create_tag_with_retention_writes_create_time_and_duration(warehouse: str) -> None:
    table = _table(warehouse)
    _write(table, 1)
    tag = tm.create_tag(table, "ttl", time_retained="1 d", now=NOW)
    assert tag.tag_create_time == NOW and tag.tag_time_retained == timedelta(days=1)
    data = _tag_json(table, "ttl")
    assert data["tagCreateTime"] == [2024, 5, 6, 7, 8, 9, 123456000]
    assert data["tagTimeRetained"] == 86400.0
    assert b"86400.000000000" in table.file_io.read_bytes(table.tag_manager.tag_path("ttl"))
    assert table.tag_manager.get("ttl") == tag
    tm.create_tag(table, "td", time_retained=timedelta(hours=2), now=NOW)
    assert _tag_json(table, "td")["tagTimeRetained"] == 7200.0


def test_default_time_retained_applies_unless_disabled(warehouse: str) -> None:
    table = _table(warehouse, **{"tag.default-time-retained": "2 h"})
    _write(table, 1)
    before = datetime.now()
    assert tm.create_tag(table, "a").tag_time_retained == timedelta(hours=2)
    created = table.tag_manager.get("a").tag_create_time
    assert created is not None and before <= created <= datetime.now()
    assert tm.create_tag(table, "b", default_retention=False).tag_time_retained is None
    assert "tagTimeRetained" not in _tag_json(table, "b")
    assert tm.create_tag(table, "c", time_retained="5 min").tag_time_retained == timedelta(
        minutes=5
    )


def test_create_tag_errors_change_nothing(warehouse: str) -> None:
    table = _table(warehouse)
    before = file_state(warehouse)
    with pytest.raises(SnapshotNotFound, match="latest snapshot doesn't exist"):
        tm.create_tag(table, "t")
    assert file_state(warehouse) == before
    _write(table, 1)
    tm.create_tag(table, "t", time_retained="1 h", now=NOW)
    before = file_state(warehouse)
    with pytest.raises(SnapshotNotFound, match=r"given snapshot #7 doesn't exist"):
        tm.create_tag(table, "x", snapshot_id=7)
    with pytest.raises(TagAlreadyExists, match=r"^Tag 't' already exists\.$"):
        tm.create_tag(table, "t")
    with pytest.raises(InvalidArgument):
        tm.create_tag(table, "x", time_retained="1 parsec")
    existing = tm.create_tag(table, "t", ignore_if_exists=True)
    assert existing.tag_create_time == NOW
    assert file_state(warehouse) == before


def test_tag_an_expired_snapshot_that_another_tag_still_holds(warehouse: str) -> None:
    table = _table(warehouse)
    _write(table, 1)
    _write(table, 2)
    tm.create_tag(table, "keep", snapshot_id=1, time_retained="1 h", now=NOW)
    table.snapshot_manager.delete_snapshot(1)
    table.snapshot_manager.write_earliest_hint(2)
    tag = tm.create_tag(table, "again", snapshot_id=1)
    assert tag.snapshot_id == 1 and tag.tag_time_retained is None
    assert "tagCreateTime" not in _tag_json(table, "again")
    assert keys(table, **{"scan.tag-name": "again"}) == [1]


def test_create_tag_from_timestamp(warehouse: str, commit_at: types.SimpleNamespace) -> None:
    table = _table(warehouse)
    for i, ms in enumerate((1_000, 2_000, 3_000), start=1):
        commit_at.millis = ms
        _write(table, i)
    assert tm.create_tag_from_timestamp(table, "a", 1_500).snapshot_id == 2
    assert tm.create_tag_from_timestamp(table, "b", 2_000).snapshot_id == 2
    assert tm.create_tag_from_timestamp(table, "c", 0).snapshot_id == 1
    before = file_state(warehouse)
    with pytest.raises(SnapshotNotFound, match="commit-time later than 3001"):
        tm.create_tag_from_timestamp(table, "d", 3_001)
    assert file_state(warehouse) == before
    # Once snapshot 1 has expired, its tag is still found and preferred when older.
    table.snapshot_manager.delete_snapshot(1)
    table.snapshot_manager.write_earliest_hint(2)
    assert tm.create_tag_from_timestamp(table, "e", 500).snapshot_id == 1
    assert tm.create_tag_from_timestamp(table, "f", 1_001).snapshot_id == 2
    assert keys(table, **{"scan.tag-name": "e"}) == [1]


# ------------------------------------------------------------------ replace / rename


def test_replace_tag_moves_it_and_drops_the_retention(warehouse: str) -> None:
    table = _table(warehouse)
    _write(table, 1)
    _write(table, 2)
    tm.create_tag(table, "t", snapshot_id=1, time_retained="1 d", now=NOW)
    tag = tm.replace_tag(table, "t")
    assert tag.snapshot_id == 2 and tag.tag_time_retained is None
    assert "tagTimeRetained" not in _tag_json(table, "t")
    tag = tm.replace_tag(table, "t", snapshot_id=1, time_retained="3 h", now=NOW)
    assert (tag.snapshot_id, tag.tag_time_retained) == (1, timedelta(hours=3))
    assert keys(table, **{"scan.tag-name": "t"}) == [1]
    before = file_state(warehouse)
    with pytest.raises(TagNotFound, match=r"^Tag 'nope' doesn't exist\.$"):
        tm.replace_tag(table, "nope")
    with pytest.raises(SnapshotNotFound):
        tm.replace_tag(table, "t", snapshot_id=9)
    with pytest.raises(InvalidTagName):
        tm.replace_tag(table, "")
    assert file_state(warehouse) == before


class _Crash(BaseException):
    """The process dying: no handler of the code under test sees it."""


class _CrashAt:
    """Replaces the ``os`` calls of a file write; the ``fail_at``-th (0-based) dies."""

    STEPS = ("open", "write", "ftruncate", "fstat", "close", "replace", "link", "unlink")

    def __init__(self, monkeypatch: pytest.MonkeyPatch, fail_at: int) -> None:
        self.fail_at = fail_at
        self.calls = 0
        for name in self.STEPS:
            monkeypatch.setattr(os, name, self._wrap(getattr(os, name)))

    def _wrap(self, real: Callable[..., Any]) -> Callable[..., Any]:
        def step(*args: Any, **kw: Any) -> Any:
            self.calls += 1
            if self.calls - 1 == self.fail_at:
                raise _Crash(self.fail_at)
            return real(*args, **kw)

        return step


def test_crash_at_each_step_of_replace_tag_leaves_a_readable_tag(
    warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The audit's case: the new JSON is shorter (the TTL goes), so an in-place rewrite torn
    between write and truncate left invalid JSON that broke listing, expiry and reads."""
    table = _table(warehouse)
    _write(table, 1)
    _write(table, 2)
    tm.create_tag(table, "x", snapshot_id=1, time_retained="7 d", now=NOW)
    tag_path = table.tag_manager.tag_path("x")
    with open(tag_path, "rb") as f:
        original = f.read()
    outcomes = set()
    for fail_at in range(100):
        with monkeypatch.context() as m:
            _CrashAt(m, fail_at)
            try:
                tm.replace_tag(table, "x", snapshot_id=2)
                crashed = False
            except _Crash:
                crashed = True
        tags = tm.list_tags(table)  # every tag file still parses
        assert list(tags) == ["x"]
        held = tags["x"].snapshot_id
        outcomes.add(held)
        assert (held, tags["x"].tag_time_retained) in ((1, timedelta(days=7)), (2, None))
        assert keys(table, **{"scan.tag-name": "x"}) == list(range(1, held + 1))
        assert [n for n in os.listdir(table.tag_manager.tag_dir) if not n.startswith(".")] == [
            "tag-x"
        ]
        if not crashed:
            break
        with open(tag_path, "wb") as f:  # start the next run from the old tag
            f.write(original)
    assert not crashed and outcomes == {1, 2} and fail_at >= 3


def test_rename_tag_keeps_the_bytes(warehouse: str) -> None:
    table = _table(warehouse)
    _write(table, 1)
    tm.create_tag(table, "old", time_retained="1 d", now=NOW)
    tm.create_tag(table, "other")
    data = table.file_io.read_bytes(table.tag_manager.tag_path("old"))
    tm.rename_tag(table, "old", "new")
    assert list(tm.list_tags(table)) == ["new", "other"]
    assert table.file_io.read_bytes(table.tag_manager.tag_path("new")) == data
    before = file_state(warehouse)
    with pytest.raises(TagNotFound):
        tm.rename_tag(table, "old", "x")
    with pytest.raises(TagAlreadyExists, match=r"^Tag 'other' already exists\.$"):
        tm.rename_tag(table, "new", "other")
    with pytest.raises(TagAlreadyExists):
        tm.rename_tag(table, "new", "new")
    with pytest.raises(InvalidTagName, match=r"^Original tag name shouldn't be blank"):
        tm.rename_tag(table, " ", "x")
    with pytest.raises(InvalidTagName, match=r"^New tag name shouldn't be blank"):
        tm.rename_tag(table, "new", "")
    with pytest.raises(InvalidTagName):
        tm.rename_tag(table, "new", "../x")
    assert file_state(warehouse) == before


# -------------------------------------------------------------------------- delete


def test_delete_tags_comma_list_missing_ignored_and_dry_run(warehouse: str) -> None:
    table = _table(warehouse)
    _write(table, 1)
    for name in ("a", "b", "c"):
        tm.create_tag(table, name)
    before = file_state(warehouse)
    plan = tm.delete_tags(table, "a, b,missing", dry_run=True)
    assert file_state(warehouse) == before
    assert [p.rsplit("/", 1)[-1] for p in plan.tag_files] == ["tag-a", "tag-b"]
    assert not plan.data_files  # snapshot 1 still exists: only the tag files go
    tm.delete_tags(table, "a, b,missing")
    assert list(tm.list_tags(table)) == ["c"]
    tm.delete_tags(table, ["c"])
    assert tm.list_tags(table) == {}
    with pytest.raises(InvalidTagName):
        tm.delete_tags(table, "x,,y")
    assert keys(table) == [1]


def test_delete_tag_of_expired_snapshot_removes_the_files_only_it_kept(warehouse: str) -> None:
    table = _table(warehouse)
    _write(table, 1)
    tm.create_tag(table, "t1")
    old_files = {p for p in file_state(warehouse) if p.endswith(".parquet")}
    table.write_arrow(pa.table({"k": [2], "v": ["v2"]}, schema=SCHEMA), overwrite=True)
    _write(table, 3)
    table.snapshot_manager.delete_snapshot(1)
    table.snapshot_manager.write_earliest_hint(2)
    assert keys(table, **{"scan.tag-name": "t1"}) == [1]
    plan = tm.delete_tags(table, "t1")
    remaining = set(file_state(warehouse))
    assert old_files and not old_files & remaining
    assert {f.rsplit("/", 1)[-1] for f in plan.data_files} == {
        p.rsplit("/", 1)[-1] for p in old_files
    }
    assert keys(table) == [2, 3]
    assert keys(table, **{"scan.snapshot-id": "2"}) == [2]


# ---------------------------------------------------------------------- list/expire


def test_list_tags_sorted_by_name(warehouse: str) -> None:
    table = _table(warehouse)
    _write(table, 1)
    _write(table, 2)
    tm.create_tag(table, "z", snapshot_id=1)
    tm.create_tag(table, "a")
    tm.create_tag(table, "m", snapshot_id=1)
    tags = tm.list_tags(table)
    assert list(tags) == ["a", "m", "z"]
    assert [t.snapshot_id for t in tags.values()] == [2, 1, 1]
    assert tm.tags_removed_by_rollback(table, 1) == ["a"]
    assert tm.tags_removed_by_rollback(table, 2) == []


def test_expire_tags_by_retention_and_older_than(warehouse: str) -> None:
    table = _table(warehouse)
    _write(table, 1)
    tm.create_tag(table, "short", time_retained="1 h", now=NOW)
    tm.create_tag(table, "long", time_retained="10 d", now=NOW)
    tm.create_tag(table, "plain")
    plain = table.tag_manager.tag_path("plain")
    mtime = datetime(2024, 5, 1).timestamp()
    os.utime(plain, (mtime, mtime))
    none = tm.expire_tags(table, now=NOW + timedelta(minutes=59))
    assert none.names == () and none.plan.is_empty
    before = file_state(warehouse)
    dry = tm.expire_tags(table, now=NOW + timedelta(hours=2), dry_run=True)
    assert dry.names == ("short",)
    assert dry.plan.tag_files == (table.tag_manager.tag_path("short"),)
    assert str(dry).startswith("expired tags: short\nDeletionPlan(1 tag files)")
    assert file_state(warehouse) == before
    assert tm.expire_tags(table, now=NOW + timedelta(hours=2)) == dry
    assert list(tm.list_tags(table)) == ["long", "plain"]
    # older_than: tags created before it go; a tag without create time uses its file's mtime.
    cutoff = int(datetime(2024, 5, 3).timestamp() * 1000)
    assert tm.expire_tags(table, cutoff, now=NOW).names == ("plain",)
    cutoff = int((NOW + timedelta(seconds=1)).timestamp() * 1000)
    assert tm.expire_tags(table, cutoff, now=NOW).names == ("long",)
    assert tm.list_tags(table) == {}


def test_auto_tag_name_conflict_while_auto_creation_is_on(warehouse: str) -> None:
    import paimon_core.lifecycle.tag_auto  # noqa: F401  (registers the commit hook)

    table = _table(warehouse, **{"tag.automatic-creation": "process-time"})
    _write(table, 1)
    auto = list(tm.list_tags(table))
    assert len(auto) == 1  # the first snapshot gets the previous day's tag
    before = file_state(warehouse)
    with pytest.raises(InvalidArgument, match=r"Snapshot 1 is already auto-tagged with \["):
        tm.create_tag(table, "2000-01-01")
    assert file_state(warehouse) == before
    tm.create_tag(table, "manual")
    tm.replace_tag(table, auto[0])  # in place: not a conflict with itself
    assert sorted(tm.list_tags(table)) == sorted([*auto, "manual"])


# ------------------------------------------------------------------------- interop


def test_pypaimon_reads_our_tags_and_we_read_theirs(warehouse: str) -> None:
    from pypaimon import CatalogFactory

    table = _table(warehouse)
    _write(table, 1, 2)
    _write(table, 3)
    tm.create_tag(table, "plain", snapshot_id=1)
    tm.create_tag(table, "ttl", time_retained="1 d", now=NOW)
    assert rows(pypaimon_read(warehouse, "db.t", {"scan.tag-name": "plain"}), ["k"]) == [(1,), (2,)]
    assert rows(pypaimon_read(warehouse, "db.t", {"scan.tag-name": "ttl"}), ["k"]) == [
        (1,),
        (2,),
        (3,),
    ]
    theirs = CatalogFactory.create({"warehouse": warehouse}).get_table("db.t")
    ttl = theirs.tag_manager().get("ttl")
    assert ttl.tag_time_retained == timedelta(days=1) and ttl.tag_create_time == NOW
    theirs.create_tag("py1", snapshot_id=1)
    theirs.create_tag("py2", time_retained="5 h")
    tags = tm.list_tags(table)
    assert list(tags) == ["plain", "py1", "py2", "ttl"]
    assert tags["py2"].tag_time_retained == timedelta(hours=5) and tags["py2"].snapshot_id == 2
    assert keys(table, **{"scan.tag-name": "py1"}) == [1, 2]
    tm.rename_tag(table, "py1", "ours")
    tm.delete_tags(table, "py2")
    assert rows(pypaimon_read(warehouse, "db.t", {"scan.tag-name": "ours"}), ["k"]) == [(1,), (2,)]


@pytest.mark.oracle
def test_java_reads_our_tags(warehouse: str, oracle: Any) -> None:
    table = _table(warehouse)
    _write(table, 1, 2)
    _write(table, 3)
    tm.create_tag(table, "plain", snapshot_id=1)
    tm.create_tag(table, "ttl", time_retained="1 d", now=NOW)
    assert oracle("tags", warehouse, "db.t") == {"plain": 1, "ttl": 2}
    assert sorted(r["k"] for r in oracle("read", warehouse, "db.t", "--tag", "plain")) == [1, 2]
    assert sorted(r["k"] for r in oracle("read", warehouse, "db.t", "--tag", "ttl")) == [1, 2, 3]
    oracle("create-tag", warehouse, "db.t", "java", "--snapshot", "1")
    assert list(tm.list_tags(table)) == ["java", "plain", "ttl"]
    assert keys(table, **{"scan.tag-name": "java"}) == [1, 2]


# ---------------------------------------------------------------- tags racing deletions


class _HookedIO(LocalFileIO):
    """Local disk that runs ``hook`` once, just before the first call of ``method`` whose
    path ends with ``suffix``: another process acting at that exact moment."""

    def __init__(self, method: str, suffix: str, hook: Callable[[], object]) -> None:
        super().__init__()
        self._method, self._suffix, self._hook = method, suffix, hook
        self.fired = False

    def _maybe(self, method: str, path: str) -> None:
        if not self.fired and method == self._method and path.endswith(self._suffix):
            self.fired = True
            self._hook()

    def delete(self, path: str) -> bool:
        self._maybe("delete", path)
        return super().delete(path)

    def write_no_clobber(self, path: str, data: bytes) -> bool:
        self._maybe("write_no_clobber", path)
        return super().write_no_clobber(path, data)

    def overwrite_atomic(self, path: str, data: bytes) -> None:
        self._maybe("overwrite_atomic", path)
        super().overwrite_atomic(path, data)


def _four_snapshots(warehouse: str) -> FileStoreTable:
    """Snapshots 1-4, each replacing all rows (OVERWRITE), so each has files of its own."""
    table = _table(warehouse, **{"snapshot.num-retained.min": "1", "write-only": "true"})
    for k in range(1, 5):
        data = pa.table({"k": [k], "v": [f"v{k}"]}, schema=SCHEMA)
        table.write_arrow(data, overwrite=True)
    return table


def _readable_tags(table: FileStoreTable) -> dict[str, list[int]]:
    fresh = FileStoreTable.load(table.path)
    return {name: keys(fresh, **{"scan.tag-name": name}) for name in fresh.tag_manager.tag_names()}


def _with(table: FileStoreTable, io: LocalFileIO) -> FileStoreTable:
    return FileStoreTable.load(table.path, file_io=io)


def test_tag_created_after_expiry_planned_keeps_its_files(warehouse: str) -> None:
    """The tag is written after expiry listed the tags, before it deleted snapshot 1."""
    table = _four_snapshots(warehouse)
    hooked = _HookedIO("delete", "snapshot-1", lambda: tm.create_tag(table, "race", snapshot_id=1))
    expire_snapshots(_with(table, hooked), retain_max=1)
    assert hooked.fired
    assert FileStoreTable.load(table.path).snapshot_manager.list_snapshot_ids() == [4]
    assert _readable_tags(table) == {"race": [1]}
    assert _orphans(table) == ()


def test_tag_written_after_its_snapshot_expired_is_withdrawn(warehouse: str) -> None:
    """The creator read snapshot 1, then a whole expiry ran, then the tag file was written."""
    table = _four_snapshots(warehouse)
    hooked = _HookedIO(
        "write_no_clobber", "tag-race", lambda: expire_snapshots(table, retain_max=1)
    )
    with pytest.raises(SnapshotNotFound, match="snapshot #1 was expired"):
        tm.create_tag(_with(table, hooked), "race", snapshot_id=1)
    assert hooked.fired
    assert _readable_tags(table) == {}
    assert _orphans(table) == ()


def test_tag_on_a_tag_held_snapshot_racing_that_tags_deletion(warehouse: str) -> None:
    """Snapshot 1 is held only by tag ``a``; ``b`` is created from it while ``a`` is deleted."""
    table = _four_snapshots(warehouse)
    tm.create_tag(table, "a", snapshot_id=1)
    expire_snapshots(table, retain_max=1)
    hooked = _HookedIO("delete", "tag-a", lambda: tm.create_tag(table, "b", snapshot_id=1))
    tm.delete_tags(_with(table, hooked), "a")
    assert hooked.fired
    assert _readable_tags(table) == {"b": [1]}


def test_tag_replaced_onto_a_snapshot_being_rolled_back_past(warehouse: str) -> None:
    table = _four_snapshots(warehouse)
    tm.create_tag(table, "moving", snapshot_id=2)
    hooked = _HookedIO(
        "delete", "snapshot-4", lambda: tm.replace_tag(table, "moving", snapshot_id=4)
    )
    from paimon_core.lifecycle.rollback import rollback_to_snapshot

    rollback_to_snapshot(_with(table, hooked), 3)
    assert hooked.fired
    assert _readable_tags(table) == {"moving": [4]}


def _orphans(table: FileStoreTable) -> tuple[str, ...]:
    """Orphans of a fresh handle (a dry run): fails if a tag names a missing file."""
    fresh = FileStoreTable.load(table.path)
    return remove_orphan_files(
        fresh, older_than_millis=int(time.time() * 1000) - 1, dry_run=True
    ).paths


def _race_worker(role: str, paths: list[str], barrier: Any) -> None:
    from paimon_core.exceptions import SnapshotNotFound as Vanished
    from paimon_core.lifecycle import tag_management
    from paimon_core.lifecycle.expire import expire_snapshots as expire

    for path in paths:
        table = FileStoreTable.load(path)
        barrier.wait()
        if role == "expire":
            expire(table, retain_max=1)
        else:
            try:
                tag_management.create_tag(table, "race", snapshot_id=1)
            except Vanished:
                pass


def test_tag_and_expiry_in_two_processes_never_leave_an_unreadable_tag(tmp_path: Any) -> None:
    """The reported race, as it happens: two processes started together on each table."""
    import multiprocessing

    paths = [_four_snapshots(str(tmp_path / f"wh{i}")).path for i in range(12)]
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(2)
    workers = [
        context.Process(target=_race_worker, args=(role, paths, barrier))
        for role in ("expire", "tag")
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
        assert worker.exitcode == 0
    for path in paths:
        table = FileStoreTable.load(path)
        assert table.snapshot_manager.list_snapshot_ids() == [4]
        tags = _readable_tags(table)
        assert tags in ({}, {"race": [1]}), path
        # A tag the expiry saw and kept files for may still be withdrawn by its creator:
        # those files are orphans then (never the other way round), which orphan removal
        # finds; it would fail if a tag named a missing file.
        orphans = _orphans(table)
        assert not (tags and orphans), path

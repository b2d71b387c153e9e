"""Random table lifecycles against a model: what every snapshot and tag read when made.

A ``RuleBasedStateMachine`` mixes commits (appends, overwrites, primary-key upserts and
deletes, abandoned writes), tag create/delete/rename/replace, snapshot expiry, rollback and
orphan removal (each also as a dry run, and errors), through two long-lived table handles;
``BranchLifecycleMachine`` adds branches (create, write, expire, tag deletion, fast-forward,
delete), each of which must keep reading what it held.
After every step each remaining snapshot and tag must read exactly the rows recorded when
it was made, no file they reference may be missing or taken for an orphan, and the hints
must match the listing. Regressions the machine found are at the end.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import types
from collections.abc import Callable
from typing import Any
from unittest import mock

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

import paimon_core.lifecycle.orphan as orphan_module
import paimon_core.operations.commit as commit_module
from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import (
    BranchAlreadyExists,
    BranchNotFound,
    InvalidArgument,
    SnapshotNotFound,
    TagAlreadyExists,
    TagNotFound,
)
from paimon_core.format.snapshot import Snapshot
from paimon_core.lifecycle import branch_management as bm
from paimon_core.lifecycle import rollback as rb
from paimon_core.lifecycle import tag_management as tm
from paimon_core.lifecycle.expire import expire_snapshots
from paimon_core.lifecycle.file_deletion import files_in_use
from paimon_core.lifecycle.orphan import OrphanResult, remove_orphan_files
from paimon_core.operations.time_travel import resolve_snapshot
from paimon_core.table import FileStoreTable

Row = tuple[int, str, str]
Rows = tuple[Row, ...]

APPEND_SCHEMA = pa.schema([("k", pa.int64()), ("v", pa.string()), ("dt", pa.string())])
PK_SCHEMA = pa.schema(
    [
        pa.field("k", pa.int64(), nullable=False),
        ("v", pa.string()),
        pa.field("dt", pa.string(), nullable=False),
    ]
)
PARTS = ("a", "b")
TAGS = ("t1", "t2", "t3")
KEYS = st.tuples(st.integers(0, 4), st.sampled_from(PARTS))
START_MILLIS = 1_700_000_000_000
DELETE = 3  # RowKind -D
DRY_RUN = st.sampled_from([False, False, True])


def _rows(data: pa.Table) -> Rows:
    return tuple(sorted(zip(*(data.column(c).to_pylist() for c in ("k", "v", "dt")))))


def read_rows(table: FileStoreTable, **options: str) -> Rows:
    return _rows(table.copy(options).to_arrow())


def disk_state(root: str) -> dict[str, tuple[int, int]]:
    """Every file under ``root`` with its size and modification time."""
    out = {}
    for directory, _, names in os.walk(root):
        for name in names:
            path = os.path.join(directory, name)
            st_ = os.stat(path)
            out[os.path.relpath(path, root)] = (st_.st_size, st_.st_mtime_ns)
    return out


def find_orphans(table: FileStoreTable, dry_run: bool) -> OrphanResult:
    """``remove_orphan_files`` with the clock a day ahead: every unreferenced file goes."""
    real = time.time()
    ahead = types.SimpleNamespace(time=lambda: real + 86_400)
    with mock.patch.object(orphan_module, "time", ahead):
        return remove_orphan_files(
            table, older_than_millis=int((real + 3_600) * 1000), dry_run=dry_run
        )


def check_table(
    table_path: str,
    snapshots: dict[int, Rows],
    tags: dict[str, tuple[int, Rows]],
    verified: dict[tuple, Rows] | None = None,
    exact_hints: bool = True,
) -> None:
    """The invariants, on a freshly loaded table: reads, referenced files, hints.

    ``verified`` remembers the manifest lists already read with the expected rows: metadata
    and data files never change once written, so while every file they reference exists
    (checked each time) reading them again would give the same rows. Without
    ``exact_hints`` (after a crash) the hint files may be stale, but must not mislead.
    """
    verified = {} if verified is None else verified
    table = FileStoreTable.load(table_path)
    manager = table.snapshot_manager
    ids = manager.list_snapshot_ids()
    assert ids == sorted(snapshots)
    assert not ids or ids == list(range(ids[0], ids[-1] + 1))
    listed = table.tag_manager.list_tags()
    assert {n: t.snapshot_id for n, t in listed.items()} == {n: s for n, (s, _) in tags.items()}

    def check(snapshot: Snapshot, expected: Rows, option: str, value: str) -> None:
        key = (snapshot.base_manifest_list, snapshot.delta_manifest_list, snapshot.index_manifest)
        if verified.get(key) != expected:
            assert read_rows(table, **{option: value}) == expected, value
            verified[key] = expected

    for sid, expected in snapshots.items():
        check(manager.snapshot(sid), expected, "scan.snapshot-id", str(sid))
    for name, (_sid, expected) in tags.items():
        check(listed[name].snapshot, expected, "scan.tag-name", name)
    if ids:  # a plain read sees the latest snapshot (whose rows were checked above)
        assert resolve_snapshot(table) == manager.snapshot(ids[-1])
    used = files_in_use(table, [*manager.snapshots(), *(t.snapshot for t in listed.values())])
    missing = sorted(p for p in used.all_paths() if not os.path.exists(p))
    assert not missing, missing
    metadata = {
        f"{directory}/{name}"
        for directory in (manager.snapshot_dir, table.tag_manager.tag_dir, f"{table_path}/schema")
        if os.path.isdir(directory)
        for name in os.listdir(directory)
        if not name.startswith(".")
    }
    wrongly_orphaned = set(find_orphans(table, dry_run=True).paths) & (used.all_paths() | metadata)
    assert not wrongly_orphaned, wrongly_orphaned
    latest_hint = os.path.join(table_path, "snapshot", "LATEST")
    earliest_hint = os.path.join(table_path, "snapshot", "EARLIEST")
    if ids:
        assert manager.latest_snapshot_id() == ids[-1]
        assert manager.earliest_snapshot_id() == ids[0]
        if not exact_hints:
            return
        with open(latest_hint) as f:
            assert f.read() == str(ids[-1])
        if os.path.exists(earliest_hint):
            with open(earliest_hint) as f:
                assert f.read() == str(ids[0])


class LifecycleMachine(RuleBasedStateMachine):
    """One table, driven through two long-lived handles and checked through fresh ones."""

    primary_key = False

    def __init__(self) -> None:
        super().__init__()
        self.dir = tempfile.mkdtemp(prefix="lifecycle-")
        catalog = FileSystemCatalog(self.dir)
        catalog.create_database("db")
        keys = ["k", "dt"] if self.primary_key else []
        self.table = catalog.create_table(
            "db.t",
            PK_SCHEMA if self.primary_key else APPEND_SCHEMA,
            partition_keys=["dt"],
            primary_keys=keys,
            options={"write-only": "true"},  # no commit-time expiry: expiry is a rule here
        )
        self.path = self.table.path
        # Another long-lived handle (another process, say): each has its own caches.
        self.other = FileStoreTable.load(self.path)
        self.now = [START_MILLIS]
        self.clock = mock.patch.object(
            commit_module,
            "time",
            types.SimpleNamespace(time=self._tick, sleep=time.sleep),
        )
        self.clock.start()
        self.snapshots: dict[int, Rows] = {}
        self.times: dict[int, int] = {}
        self.tags: dict[str, tuple[int, Rows]] = {}
        self.serial = 0
        self.abandoned: set[str] = set()
        self.verified: dict[tuple, Rows] = {}

    def _tick(self) -> float:
        self.now[0] += 1000
        return self.now[0] / 1000

    def teardown(self) -> None:
        self.clock.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    # ------------------------------------------------------------------ model helpers

    @property
    def latest(self) -> int | None:
        return max(self.snapshots) if self.snapshots else None

    @property
    def current(self) -> Rows:
        return self.snapshots[self.latest] if self.snapshots else ()

    def _resolvable(self, sid: int | None) -> Rows | None:
        """Rows of a snapshot a tag may name: live, or held by a tag; None if neither."""
        if sid is None:
            return self.current if self.snapshots else None
        if sid in self.snapshots:
            return self.snapshots[sid]
        for tagged, rows in self.tags.values():
            if tagged == sid:
                return rows
        return None

    def _committed(self, sid: int | None, rows: Rows) -> None:
        if sid is None:
            return
        assert sid == (self.latest or 0) + 1
        self.snapshots[sid] = tuple(sorted(rows))
        self.times[sid] = self.table.snapshot_manager.snapshot(sid).time_millis

    def _values(self, keys: list[tuple[int, str]]) -> list[Row]:
        out = []
        for k, dt in keys:
            self.serial += 1
            out.append((k, f"v{self.serial}", dt))
        return out

    def _arrow(self, rows: list[Row]) -> pa.Table:
        schema = PK_SCHEMA if self.primary_key else APPEND_SCHEMA
        names = ("k", "v", "dt")
        return pa.table({n: [r[i] for r in rows] for i, n in enumerate(names)}, schema=schema)

    def _unchanged(self, action: Callable[[], Any], error: type[Exception]) -> None:
        before = disk_state(self.path)
        with pytest.raises(error):
            action()
        assert disk_state(self.path) == before

    def _pick_snapshot(self, data: st.DataObject) -> int:
        """A live id, an expired id a tag holds, or an id nothing has."""
        held = [s for s, _ in self.tags.values()]
        missing = [(self.latest or 0) + 1, 0]
        return data.draw(st.sampled_from(sorted({*self.snapshots, *held, *missing})))

    # -------------------------------------------------------------------------- writes

    @initialize(
        commits=st.lists(
            st.tuples(st.lists(KEYS, min_size=1, max_size=3), st.booleans()), min_size=2, max_size=5
        ),
        tagged=st.lists(st.integers(1, 5), max_size=2, unique=True),
        keep=st.integers(1, 5),
    )
    def history(
        self, commits: list[tuple[list[tuple[int, str]], bool]], tagged: list[int], keep: int
    ) -> None:
        """Commits, tags and an expiry to start from: tags often hold expired snapshots."""
        for keys, overwrite in commits:
            if overwrite:
                unique = list(dict.fromkeys(k for k, _ in keys))
                self.overwrite("partition", keys[0][1], unique, [])
            else:
                self.write_rows(keys, [False] * len(keys))
        for name, sid in zip(TAGS, tagged):
            if sid in self.snapshots:
                tm.create_tag(self.table, name, snapshot_id=sid)
                self.tags[name] = (sid, self.snapshots[sid])
        self.expire(keep, keep, 10, None, dry_run=False)  # keeps the newest ``keep``

    @rule(keys=st.lists(KEYS, min_size=1, max_size=3))
    def abandoned_write(self, keys: list[tuple[int, str]]) -> None:
        """Data files of a writer that died before committing: orphans, nothing else."""
        write = self.table.new_write()
        write.write_arrow(self._arrow(self._values(keys)))
        files = {f.file_name for m in write.prepare_commit() for f in m.new_files}
        assert files
        self.abandoned |= files

    @rule(keys=st.lists(KEYS, min_size=1, max_size=3), data=st.data())
    def write(self, keys: list[tuple[int, str]], data: st.DataObject) -> None:
        keys = list(dict.fromkeys(keys)) if self.primary_key else keys
        deletes = [False] * len(keys)
        if self.primary_key:
            deletes = data.draw(st.lists(st.booleans(), min_size=len(keys), max_size=len(keys)))
        self.write_rows(keys, deletes)

    def write_rows(self, keys: list[tuple[int, str]], deletes: list[bool]) -> None:
        """Append (append table) or upsert/delete (primary-key table) and record the state."""
        if not self.primary_key:
            rows = self._values(keys)
            sid = self.table.write_arrow(self._arrow(rows))
            self._committed(sid, self.current + tuple(rows))
            return
        chosen = dict(zip(keys, deletes))
        unique, deletes = list(chosen), list(chosen.values())
        rows = self._values(unique)
        kinds = pa.array([DELETE if d else 0 for d in deletes], pa.int8())
        sid = self.table.write_arrow(self._arrow(rows), row_kinds=kinds)
        state = {(k, dt): v for k, v, dt in self.current}
        for (k, v, dt), deleted in zip(rows, deletes):
            if deleted:
                state.pop((k, dt), None)
            else:
                state[(k, dt)] = v
        self._committed(sid, tuple((k, v, dt) for (k, dt), v in state.items()))

    @rule(
        mode=st.sampled_from(["table", "partition", "dynamic", "truncate"]),
        partition=st.sampled_from(PARTS),
        keys=st.lists(st.integers(0, 4), max_size=3, unique=True),
        other=st.lists(st.integers(0, 4), max_size=2, unique=True),
    )
    def overwrite(self, mode: str, partition: str, keys: list[int], other: list[int]) -> None:
        rows = self._values([(k, partition) for k in keys])
        if mode in ("table", "dynamic"):
            rows += self._values([(k, "b" if partition == "a" else "a") for k in other])
        if mode == "truncate":
            sid = self.table.new_commit().truncate_table()
            self._committed(sid, ())
            return
        if mode == "dynamic":
            touched = {r[2] for r in rows}
            sid = self.table.write_arrow(self._arrow(rows), overwrite=True)
            kept = tuple(r for r in self.current if r[2] not in touched)
            assert (sid is None) == (not rows)
            self._committed(sid, kept + tuple(rows))
        elif mode == "partition":
            sid = self.table.write_arrow(self._arrow(rows), overwrite={"dt": partition})
            kept = tuple(r for r in self.current if r[2] != partition)
            self._committed(sid, kept + tuple(rows))
        else:
            sid = self.table.write_arrow(self._arrow(rows), overwrite={})
            self._committed(sid, tuple(rows))

    # ---------------------------------------------------------------------------- tags

    @rule(name=st.sampled_from(TAGS), latest=st.sampled_from([True, False, False]), data=st.data())
    def create_tag(self, name: str, latest: bool, data: st.DataObject) -> None:
        sid = None if latest or not self.snapshots else self._pick_snapshot(data)
        rows = self._resolvable(sid)
        action = lambda: tm.create_tag(self.table, name, snapshot_id=sid)  # noqa: E731
        if rows is None:
            self._unchanged(action, SnapshotNotFound)
        elif name in self.tags:
            self._unchanged(action, TagAlreadyExists)
        else:
            tag = action()
            self.tags[name] = (tag.snapshot_id, rows)
            assert sid is None or tag.snapshot_id == sid

    @rule(names=st.lists(st.sampled_from(TAGS), min_size=1, max_size=3), dry_run=DRY_RUN)
    def delete_tags(self, names: list[str], dry_run: bool) -> None:
        if dry_run:
            before = disk_state(self.path)
            tm.delete_tags(self.table, names, dry_run=True)
            assert disk_state(self.path) == before
            return
        tm.delete_tags(self.table, names)
        for name in names:
            self.tags.pop(name, None)

    @rule(old=st.sampled_from(TAGS), new=st.sampled_from(TAGS))
    def rename_tag(self, old: str, new: str) -> None:
        action = lambda: tm.rename_tag(self.table, old, new)  # noqa: E731
        if old not in self.tags:
            self._unchanged(action, TagNotFound)
        elif new in self.tags:
            self._unchanged(action, TagAlreadyExists)
        else:
            action()
            self.tags[new] = self.tags.pop(old)

    @rule(name=st.sampled_from(TAGS), latest=st.booleans(), data=st.data())
    def replace_tag(self, name: str, latest: bool, data: st.DataObject) -> None:
        sid = None if latest or not self.snapshots else self._pick_snapshot(data)
        rows = self._resolvable(sid)
        action = lambda: tm.replace_tag(self.table, name, snapshot_id=sid)  # noqa: E731
        if rows is None:
            self._unchanged(action, SnapshotNotFound)
        elif name not in self.tags:
            self._unchanged(action, TagNotFound)
        else:
            tag = action()
            self.tags[name] = (tag.snapshot_id, rows)

    # ------------------------------------------------------------------------ expiry

    def _expected_expiry(
        self, retain_max: int, retain_min: int, max_deletes: int, older_than: int
    ) -> int:
        """Paimon 2.0's rule, restated: how many of the oldest snapshots expire."""
        if not self.snapshots:
            return 0
        earliest, latest = min(self.snapshots), max(self.snapshots)
        first = max(latest - retain_max + 1, earliest)
        end = min(latest - max(retain_min, 1) + 1, earliest + max_deletes)
        for sid in range(first, end):
            if older_than <= self.times[sid + 1]:
                end = sid
                break
        return max(end - earliest, 0)

    @rule(
        retain_max=st.sampled_from([1, 1, 2, 3, 5]),
        retain_min=st.integers(0, 2),
        max_deletes=st.sampled_from([0, 2, 10, 10]),
        age=st.sampled_from([None, None, 0, 1, 2, 4, -1]),
        dry_run=DRY_RUN,
    )
    def expire(
        self, retain_max: int, retain_min: int, max_deletes: int, age: int | None, dry_run: bool
    ) -> None:
        # ``age`` counts commits back from the clock (each commit ticks one second).
        older_than = 2**62 if age is None else self.now[0] - age * 1000
        args = {
            "retain_max": retain_max,
            "retain_min": retain_min,
            "max_deletes": max_deletes,
            "older_than_millis": older_than,
        }
        if retain_max < retain_min and self.snapshots:
            self._unchanged(lambda: expire_snapshots(self.table, **args), InvalidArgument)
            return
        expected = self._expected_expiry(retain_max, retain_min, max_deletes, older_than)
        before = disk_state(self.path) if dry_run else None
        result = expire_snapshots(self.table, dry_run=dry_run, **args)
        assert result.expired == expected
        if dry_run:
            assert disk_state(self.path) == before
            return
        for sid in sorted(self.snapshots)[:expected]:
            del self.snapshots[sid]

    # ---------------------------------------------------------------------- rollback

    def _roll_back_model(self, sid: int, rows: Rows) -> None:
        """Newer snapshots and tags go; an expired target comes back (``times`` still has it:
        its id cannot have been reused while a tag held it)."""
        self.snapshots = {s: r for s, r in self.snapshots.items() if s < sid}
        self.snapshots[sid] = rows
        self.tags = {n: t for n, t in self.tags.items() if t[0] <= sid}

    @rule(by_tag=st.booleans(), dry_run=DRY_RUN, data=st.data())
    def rollback(self, by_tag: bool, dry_run: bool, data: st.DataObject) -> None:
        if by_tag:
            name = data.draw(st.sampled_from(TAGS))
            action = lambda: rb.rollback_to_tag(self.table, name, dry_run=dry_run)  # noqa: E731
            target = self.tags.get(name)
            error: type[Exception] = TagNotFound
        else:
            sid = self._pick_snapshot(data)
            action = lambda: rb.rollback_to_snapshot(self.table, sid, dry_run=dry_run)  # noqa: E731
            rows = self._resolvable(sid)
            target = None if rows is None else (sid, rows)
            error = SnapshotNotFound
        if target is None:
            self._unchanged(action, error)
            return
        before = disk_state(self.path) if dry_run else None
        result = action()
        assert (result.previous_snapshot_id, result.snapshot_id) == (self.latest, target[0])
        if dry_run:
            assert disk_state(self.path) == before
            return
        self._roll_back_model(*target)

    # ------------------------------------------------------------------------ orphans

    @rule(dry_run=DRY_RUN)
    def remove_orphans(self, dry_run: bool) -> None:
        before = disk_state(self.path)
        result = find_orphans(self.table, dry_run)
        assert self.abandoned <= {p.rsplit("/", 1)[-1] for p in result.paths}
        if dry_run:
            assert disk_state(self.path) == before
            return
        gone = {os.path.relpath(p, self.path) for p in result.paths}
        assert set(disk_state(self.path)) == set(before) - gone
        assert find_orphans(self.table, dry_run=True).count == 0
        self.abandoned.clear()

    @rule()
    def switch_handle(self) -> None:
        """Go on through the other handle, which missed whatever this one did meanwhile."""
        self.table, self.other = self.other, self.table

    # ---------------------------------------------------------------------- invariant

    @invariant()
    def every_snapshot_and_tag_reads_what_it_held(self) -> None:
        check_table(self.path, self.snapshots, self.tags, self.verified)


class PrimaryKeyLifecycleMachine(LifecycleMachine):
    primary_key = True


SETTINGS = settings(
    max_examples=30,
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

TestAppendTableLifecycle = LifecycleMachine.TestCase
TestAppendTableLifecycle.settings = SETTINGS
TestPrimaryKeyTableLifecycle = PrimaryKeyLifecycleMachine.TestCase
TestPrimaryKeyTableLifecycle.settings = SETTINGS


# ------------------------------------------------------------------ regressions found here


def _keys_table(warehouse: str) -> FileStoreTable:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    table = catalog.create_table("db.t", APPEND_SCHEMA)
    for k in (1, 2, 3):
        table.write_arrow(pa.table({"k": [k], "v": ["x"], "dt": ["a"]}, schema=APPEND_SCHEMA))
    return table


def _keys(table: FileStoreTable) -> list[int]:
    return sorted(table.to_arrow().column("k").to_pylist())


def test_a_handle_sees_snapshots_another_handle_rolled_back_and_recommitted(
    warehouse: str,
) -> None:
    stale = _keys_table(warehouse)
    assert _keys(stale) == [1, 2, 3]  # caches snapshots 1..3
    other = FileStoreTable.load(stale.path)
    rb.rollback_to_snapshot(other, 1)
    other.write_arrow(pa.table({"k": [20], "v": ["x"], "dt": ["a"]}, schema=APPEND_SCHEMA))
    # Snapshot 2 is a new file now: the cached old one must not be served (its manifest lists
    # are gone), and a commit must not build on it (that would drop k=20 and revive k=2).
    assert _keys(stale) == [1, 20]
    stale.write_arrow(pa.table({"k": [4], "v": ["x"], "dt": ["a"]}, schema=APPEND_SCHEMA))
    assert _keys(FileStoreTable.load(stale.path)) == [1, 4, 20]
    expire_snapshots(other, retain_max=1, retain_min=1, older_than_millis=2**62)
    with pytest.raises(SnapshotNotFound):
        stale.snapshot_manager.snapshot(1)  # expired elsewhere: no longer served from cache


def test_a_reused_committer_builds_on_the_snapshot_that_now_has_its_last_id(
    warehouse: str,
) -> None:
    table = _keys_table(warehouse)
    committer = table.new_commit()

    def commit(k: int) -> int | None:
        write = table.new_write()
        write.write_arrow(pa.table({"k": [k], "v": ["x"], "dt": ["a"]}, schema=APPEND_SCHEMA))
        return committer.commit(write.prepare_commit())

    assert commit(4) == 4  # the committer remembers snapshot 4's manifests
    other = FileStoreTable.load(table.path)
    rb.rollback_to_snapshot(other, 3)
    other.write_arrow(pa.table({"k": [30], "v": ["x"], "dt": ["a"]}, schema=APPEND_SCHEMA))
    assert commit(5) == 5
    assert _keys(FileStoreTable.load(table.path)) == [1, 2, 3, 5, 30]


# ------------------------------------------------------------------------------ branches

BRANCHES = ("b1", "b2")


class BranchLifecycleMachine(LifecycleMachine):
    """The lifecycle above plus branches: created from a tag or empty, written, expired,
    their tags deleted, fast-forwarded into main and deleted. After every step every branch
    must still read what each of its snapshots and tags held, whatever main or another
    branch deleted."""

    def __init__(self) -> None:
        super().__init__()
        self.branches: dict[str, dict[str, Any]] = {}

    def _branch(self, name: str) -> FileStoreTable:
        return FileStoreTable.load(self.path, branch=name)

    @initialize(tag=st.sampled_from([None, *TAGS]), keys=st.lists(KEYS, min_size=1, max_size=2))
    def first_branch(self, tag: str | None, keys: list[tuple[int, str]]) -> None:
        """Branch b1 after the history (from a tag when it exists), with a commit of its own."""
        self.create_branch("b1", tag if tag in self.tags else None)
        self.write_branch("b1", keys)

    @rule(name=st.sampled_from(BRANCHES), tag=st.sampled_from([None, *TAGS]))
    def create_branch(self, name: str, tag: str | None) -> None:
        action = lambda: bm.create_branch(self.table, name, tag)  # noqa: E731
        if name in self.branches:
            self._unchanged(action, BranchAlreadyExists)
        elif tag is not None and tag not in self.tags:
            self._unchanged(action, TagNotFound)
        else:
            action()
            held = {} if tag is None else {self.tags[tag][0]: self.tags[tag][1]}
            tags = {} if tag is None else {tag: self.tags[tag]}
            self.branches[name] = {"snapshots": held, "tags": tags}

    @rule(name=st.sampled_from(BRANCHES), keys=st.lists(KEYS, min_size=1, max_size=2))
    @precondition(lambda self: bool(self.branches))
    def write_branch(self, name: str, keys: list[tuple[int, str]]) -> None:
        if name not in self.branches:
            return
        model = self.branches[name]["snapshots"]
        rows = self._values(keys)
        sid = self._branch(name).write_arrow(self._arrow(rows))
        assert sid == max(model, default=0) + 1
        current = model[max(model)] if model else ()
        model[sid] = tuple(sorted(current + tuple(rows)))

    @rule(name=st.sampled_from(BRANCHES))
    @precondition(lambda self: bool(self.branches))
    def expire_branch(self, name: str) -> None:
        if name not in self.branches:
            return
        expire_snapshots(self._branch(name), retain_max=1, retain_min=1, older_than_millis=2**62)
        model = self.branches[name]["snapshots"]
        if model:
            latest = max(model)
            self.branches[name]["snapshots"] = {latest: model[latest]}

    @rule(name=st.sampled_from(BRANCHES), tag=st.sampled_from(TAGS))
    @precondition(lambda self: bool(self.branches))
    def delete_branch_tag(self, name: str, tag: str) -> None:
        if name not in self.branches:
            return
        tm.delete_tags(self._branch(name), tag)
        self.branches[name]["tags"].pop(tag, None)

    @rule(name=st.sampled_from(BRANCHES))
    def delete_branch(self, name: str) -> None:
        action = lambda: bm.delete_branch(self.table, name)  # noqa: E731
        if name not in self.branches:
            self._unchanged(action, BranchNotFound)
            return
        action()
        del self.branches[name]

    @rule(name=st.sampled_from(BRANCHES))
    def fast_forward(self, name: str) -> None:
        action = lambda: bm.fast_forward(self.table, name)  # noqa: E731
        if name not in self.branches:
            self._unchanged(action, BranchNotFound)
            return
        model = self.branches[name]
        if not model["snapshots"]:
            self._unchanged(action, SnapshotNotFound)
            return
        manager = self._branch(name).snapshot_manager
        times = {sid: manager.snapshot(sid).time_millis for sid in model["snapshots"]}
        action()
        first = min(model["snapshots"])
        self.snapshots = {s: r for s, r in self.snapshots.items() if s < first}
        self.snapshots.update(model["snapshots"])
        self.times.update(times)
        self.tags = {n: t for n, t in self.tags.items() if t[0] < first}
        self.tags.update(model["tags"])

    @invariant()
    def every_branch_reads_what_it_held(self) -> None:
        used: set[str] = set()
        for name, model in self.branches.items():
            branch = self._branch(name)
            manager = branch.snapshot_manager
            assert manager.list_snapshot_ids() == sorted(model["snapshots"])
            listed = branch.tag_manager.list_tags()
            assert {n: t.snapshot_id for n, t in listed.items()} == {
                n: s for n, (s, _) in model["tags"].items()
            }
            for sid, expected in model["snapshots"].items():
                assert read_rows(branch, **{"scan.snapshot-id": str(sid)}) == expected
            for tag, (_sid, expected) in model["tags"].items():
                assert read_rows(branch, **{"scan.tag-name": tag}) == expected
            snapshots = [*manager.snapshots(), *(t.snapshot for t in listed.values())]
            paths = files_in_use(branch, snapshots).all_paths()
            missing = sorted(p for p in paths if not os.path.exists(p))
            assert not missing, missing
            used |= paths
        if used:
            orphaned = set(find_orphans(FileStoreTable.load(self.path), dry_run=True).paths)
            assert not orphaned & used, orphaned & used


TestBranchLifecycle = BranchLifecycleMachine.TestCase
TestBranchLifecycle.settings = settings(
    max_examples=30,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

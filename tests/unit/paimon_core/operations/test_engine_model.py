"""Random histories of primary-key tables of every merge engine the writer takes, against a
plain-Python model of Paimon's merge semantics (Apache Paimon 2.0, the latest release).

A ``RuleBasedStateMachine`` upserts and deletes (+I, +U, -U, -D records, several per key in
one commit), compacts (full and minor, ``compact_table`` with its in-process runner), expires
snapshots, rolls back (to a snapshot or a tag) and creates and deletes tags, on a table with
two buckets, keys 0..7 and, in some examples, two partitions. After every step each live
snapshot and tag must read exactly the rows the model gives for it, list exactly the data
files (at the levels) the model holds for it, and no file it needs may be missing.

Why the model keeps the LSM tree's shape rather than one row per key: Paimon's result is not a
function of the records alone. A key's records are merged in groups (the records of one key in
one commit by the writer's buffer, the files of a compaction unit), a lone record is never
passed to the merge function (a lone ``-D`` stays a ``-D``), and a compaction that rewrites
every file of its bucket drops the retractions it produces, which later records then no longer
merge with. So the model holds, for every key, one record per data file that has it, and merges
exactly the groups Paimon merges. Which files a minor compaction picks (universal compaction
over file sizes) is the one thing taken from the table: the model reads the files a COMPACT
snapshot removed and added, and predicts everything else (what each new file holds, whether
retractions are dropped, every read).

The merge functions below restate Java's ``DeduplicateMergeFunction``,
``PartialUpdateMergeFunction``, ``AggregateMergeFunction`` and ``Field*Agg`` of Paimon 2.0
(docs/docs/primary-key-table/merge-engine/*.md) without using ``operations/merge``. first-row
and deletion-vector tables are left out until the writer takes them: each is one more
``Engine`` in ``ENGINES``. Each engine is its own test of a few examples, so that every run
covers every engine in well under a minute. What the machine found is pinned by regression
tests next to the merge functions (``test_a_first_retraction_fills_the_row``,
``test_listagg_delimiter_and_distinct``).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from paimon_core.catalog import FileSystemCatalog
from paimon_core.format.manifest import FileKind, ManifestEntry
from paimon_core.format.snapshot import Snapshot
from paimon_core.lifecycle import rollback as rb
from paimon_core.lifecycle import tag_management as tm
from paimon_core.lifecycle.expire import expire_snapshots
from paimon_core.lifecycle.file_deletion import TableFiles, files_in_use
from paimon_core.operations.compact import compact_table
from paimon_core.operations.live_files import LiveFiles, cover
from paimon_core.table import FileStoreTable

INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = 0, 1, 2, 3
RETRACT = frozenset({UPDATE_BEFORE, DELETE})
KEYS = range(8)
PARTS = ("a", "b")
TAGS = ("t1", "t2", "t3")
BUCKETS = 2

Key = tuple[Any, ...]  # (k,) or (dt, k)
Row = tuple[Any, ...]


@dataclass(frozen=True)
class Rec:
    """One key-value record: its row kind, value columns (table order), and ``n``, standing
    for its ``_SEQUENCE_NUMBER`` (the model numbers records in write order)."""

    kind: int
    values: tuple[Any, ...]
    n: int

    @property
    def retract(self) -> bool:
        return self.kind in RETRACT


# ----------------------------------------------------------------------- merge functions


class Merge(ABC):
    """Java's ``MergeFunction``: the records of one key (at least two, in merge order) -> the
    result record, or None for no record at all."""

    @abstractmethod
    def merge(self, recs: Sequence[Rec]) -> Rec | None: ...


@dataclass(frozen=True)
class Deduplicate(Merge):
    """The last record wins; with ``ignore-delete`` the last +I/+U."""

    ignore_delete: bool = False

    def merge(self, recs: Sequence[Rec]) -> Rec | None:
        if self.ignore_delete:
            adds = [r for r in recs if not r.retract]
            return adds[-1] if adds else None
        return recs[-1]


@dataclass(frozen=True)
class Group:
    """``fields.<sequence>.sequence-group = <protected>``."""

    sequence: tuple[str, ...]
    protected: tuple[str, ...]


@dataclass(frozen=True)
class PartialUpdate(Merge):
    """Latest non-null value per column, or per sequence group (Paimon 2.0).

    * Non-null values of +I/+U overwrite; nulls leave the column alone.
    * The first record of a merge, when a retraction, fills the whole row with its values.
    * ``ignore-delete``: retractions skipped. ``remove-record-on-delete``: a -D replaces the
      row by its own values and marks it deleted, until a later +I/+U (which updates those
      values); a -U is skipped. Without either option and without groups, a retraction is an
      error (not generated here).
    * Sequence groups, fields in table order: a record whose group sequence is all null leaves
      the group alone; one whose sequence is not older (nulls first) than the row's sets the
      sequence fields and every protected field to its values (nulls included), or, when a
      retraction, sets the sequence fields and clears the protected ones; with
      ``remove-record-on-sequence-group`` naming one of its sequence fields, a -D instead
      replaces the row by its own values, deleted. Columns in no group take non-null values
      of +I/+U only.
    * The result is a -D when the row was deleted last or no +I/+U came at all, else +I; its
      sequence number is the last record's that was not skipped.
    """

    names: tuple[str, ...]
    groups: tuple[Group, ...] = ()
    ignore_delete: bool = False
    remove_record_on_delete: bool = False
    remove_record_on_group: frozenset[str] = frozenset()

    def _group_of(self) -> dict[str, Group]:
        out = {}
        for g in self.groups:
            for name in (*g.protected, *g.sequence):
                out[name] = g
        return out

    def merge(self, recs: Sequence[Rec]) -> Rec | None:
        row: list[Any] = [None] * len(self.names)
        filled = met_insert = deleted = False
        latest = 0
        for rec in recs:
            deleted = False
            if rec.retract:
                if not filled:
                    row, filled = list(rec.values), True
                if self.ignore_delete:
                    continue
                latest = rec.n
                if self.groups:
                    deleted, row = self._retract(row, rec)
                elif self.remove_record_on_delete:
                    if rec.kind == DELETE:
                        deleted, row = True, list(rec.values)
                else:
                    raise AssertionError("the model generates no deletes for this engine")
                continue
            latest = rec.n
            if self.groups:
                self._update(row, rec)
            else:
                for i, value in enumerate(rec.values):
                    if value is not None:
                        row[i] = value
            met_insert = filled = True
        kind = DELETE if deleted or not met_insert else INSERT
        return Rec(kind, tuple(row), latest)

    def _older(self, rec: Rec, row: list[Any], sequence: tuple[str, ...]) -> bool:
        for name in sequence:
            i = self.names.index(name)
            a, b = rec.values[i], row[i]
            if a == b:
                continue
            if a is None or b is None:
                return a is None
            return a < b
        return False

    def _empty(self, rec: Rec, group: Group) -> bool:
        return all(rec.values[self.names.index(s)] is None for s in group.sequence)

    def _update(self, row: list[Any], rec: Rec) -> None:
        group_of, done = self._group_of(), set()
        for i, name in enumerate(self.names):
            group = group_of.get(name)
            if group is None:
                if rec.values[i] is not None:
                    row[i] = rec.values[i]
                continue
            if name in done:
                continue
            if self._empty(rec, group):
                done.update(group.sequence)
                continue
            if self._older(rec, row, group.sequence):
                continue
            if name in group.sequence:
                for s in group.sequence:
                    row[self.names.index(s)] = rec.values[self.names.index(s)]
                    done.add(s)
            else:
                row[i] = rec.values[i]

    def _retract(self, row: list[Any], rec: Rec) -> tuple[bool, list[Any]]:
        group_of, done, updated = self._group_of(), set(), set()
        for i, name in enumerate(self.names):
            group = group_of.get(name)
            if group is None or name in done:
                continue
            if self._empty(rec, group):
                done.update(group.sequence)
                continue
            if self._older(rec, row, group.sequence):
                continue
            if name in group.sequence:
                for s in group.sequence:
                    if s not in updated:
                        if rec.kind == DELETE and s in self.remove_record_on_group:
                            return True, list(rec.values)
                        row[self.names.index(s)] = rec.values[self.names.index(s)]
                        updated.add(s)
                    done.add(s)
            else:
                row[i] = None
        return False, row


class Agg(ABC):
    """One ``Field*Agg``: ``agg`` folds an input in, ``retract`` takes one out (functions that
    cannot retract are wrapped in ``IgnoreRetract`` here, as Paimon requires)."""

    @abstractmethod
    def agg(self, acc: Any, value: Any) -> Any: ...

    def retract(self, acc: Any, value: Any) -> Any:
        raise AssertionError(f"{type(self).__name__} cannot retract")


class Sum(Agg):
    def agg(self, acc: Any, value: Any) -> Any:
        return value if acc is None else acc if value is None else acc + value

    def retract(self, acc: Any, value: Any) -> Any:
        if acc is None:
            return None if value is None else -value
        return acc if value is None else acc - value


class Max(Agg):
    def agg(self, acc: Any, value: Any) -> Any:
        return value if acc is None else acc if value is None else max(acc, value)


class LastNonNull(Agg):
    def agg(self, acc: Any, value: Any) -> Any:
        return acc if value is None else value

    def retract(self, acc: Any, value: Any) -> Any:
        return None if value is not None else acc


@dataclass(frozen=True)
class Listagg(Agg):
    """Blank strings (empty or whitespace only) count as null (Paimon 2.0)."""

    delimiter: str = ","

    def agg(self, acc: Any, value: Any) -> Any:
        if value is None or not value.strip():
            return acc
        if acc is None or not acc.strip():
            return value
        return acc + self.delimiter + value


@dataclass(frozen=True)
class IgnoreRetract(Agg):
    inner: Agg

    def agg(self, acc: Any, value: Any) -> Any:
        return self.inner.agg(acc, value)

    def retract(self, acc: Any, value: Any) -> Any:
        return acc


@dataclass(frozen=True)
class Aggregate(Merge):
    """Every column folds with its function from nothing; the result is always a +I with the
    last record's sequence number."""

    functions: tuple[Agg, ...]

    def merge(self, recs: Sequence[Rec]) -> Rec | None:
        row: list[Any] = [None] * len(self.functions)
        for rec in recs:
            for i, f in enumerate(self.functions):
                row[i] = (
                    f.retract(row[i], rec.values[i])
                    if rec.retract
                    else f.agg(row[i], rec.values[i])
                )
        return Rec(INSERT, tuple(row), recs[-1].n)


# ------------------------------------------------------------------------------ engines


@dataclass(frozen=True)
class Column:
    name: str
    type: pa.DataType
    samples: tuple[Any, ...]


@dataclass(frozen=True)
class Engine:
    """One parametrisation: table options, value columns, the model merge, which row kinds to
    write (weights of +I, +U, -U, -D) and the ``sequence.field`` ordering merges."""

    name: str
    options: Mapping[str, str]
    columns: tuple[Column, ...]
    merge: Merge
    kinds: tuple[int, ...] = (INSERT,) * 6 + (UPDATE_AFTER, UPDATE_BEFORE, DELETE, DELETE)
    sequence_field: str | None = None

    @property
    def ignore_delete(self) -> bool:
        return self.options.get("ignore-delete") == "true"

    def order(self, rec: Rec) -> tuple:
        """Merge order: the sequence field (nulls first), then the sequence number."""
        if self.sequence_field is None:
            return (rec.n,)
        value = rec.values[[c.name for c in self.columns].index(self.sequence_field)]
        return (value is not None, value if value is not None else 0, rec.n)

    def merged(self, recs: Sequence[Rec]) -> Rec | None:
        """The records of one key merged as Paimon's reducer does: a lone one as it is."""
        recs = sorted(recs, key=self.order)
        return recs[0] if len(recs) == 1 else self.merge.merge(recs)


INTS = (None, 0, 1, 2, 3)
STRS = (None, "x", "y", "")
SEQ = (None, 0, 1, 2)
PU_COLUMNS = (
    Column("a", pa.int32(), INTS),
    Column("b", pa.string(), STRS),
    Column("c", pa.int32(), INTS),
)
GROUP_COLUMNS = (
    Column("a", pa.int32(), INTS),
    Column("g1", pa.int32(), SEQ),
    Column("b", pa.string(), STRS),
    Column("c", pa.int32(), INTS),
    Column("g2", pa.int32(), SEQ),
    Column("d", pa.string(), STRS),
)
GROUPS = (Group(("g1",), ("a", "b")), Group(("g2",), ("c",)))
GROUP_OPTIONS = {
    "merge-engine": "partial-update",
    "fields.g1.sequence-group": "a,b",
    "fields.g2.sequence-group": "c",
}
GROUP_NAMES = tuple(c.name for c in GROUP_COLUMNS)

ENGINES = (
    Engine(
        "deduplicate",
        {},
        (Column("v", pa.string(), STRS), Column("w", pa.int32(), INTS)),
        Deduplicate(),
    ),
    Engine(
        "deduplicate-sequence-field",
        {"sequence.field": "s"},
        (Column("s", pa.int32(), SEQ), Column("v", pa.string(), STRS)),
        Deduplicate(),
        sequence_field="s",
    ),
    Engine(
        "partial-update-ignore-delete",
        {"merge-engine": "partial-update", "ignore-delete": "true"},
        PU_COLUMNS,
        PartialUpdate(("a", "b", "c"), ignore_delete=True),
    ),
    Engine(
        "partial-update-remove-record-on-delete",
        {"merge-engine": "partial-update", "partial-update.remove-record-on-delete": "true"},
        PU_COLUMNS,
        PartialUpdate(("a", "b", "c"), remove_record_on_delete=True),
    ),
    Engine(
        "partial-update-sequence-group",
        GROUP_OPTIONS,
        GROUP_COLUMNS,
        PartialUpdate(GROUP_NAMES, GROUPS),
    ),
    Engine(
        "partial-update-sequence-group-ignore-delete",
        {**GROUP_OPTIONS, "ignore-delete": "true"},
        GROUP_COLUMNS,
        PartialUpdate(GROUP_NAMES, GROUPS, ignore_delete=True),
    ),
    Engine(
        "partial-update-sequence-group-remove-record",
        {**GROUP_OPTIONS, "partial-update.remove-record-on-sequence-group": "g2"},
        GROUP_COLUMNS,
        PartialUpdate(GROUP_NAMES, GROUPS, remove_record_on_group=frozenset({"g2"})),
    ),
    Engine(
        "aggregation",
        {
            "merge-engine": "aggregation",
            "fields.s.aggregate-function": "sum",
            "fields.m.aggregate-function": "max",
            "fields.m.ignore-retract": "true",
            "fields.g.aggregate-function": "listagg",
            "fields.g.ignore-retract": "true",
            "fields.g.list-agg-delimiter": "|",
        },  # l: last_non_null_value, the default
        (
            Column("s", pa.int64(), (None, -2, 1, 3)),
            Column("m", pa.int32(), INTS),
            Column("l", pa.string(), STRS),
            Column("g", pa.string(), ("p", "q", "", " ", None)),
        ),
        Aggregate((Sum(), IgnoreRetract(Max()), LastNonNull(), IgnoreRetract(Listagg("|")))),
    ),
)


# -------------------------------------------------------------------------------- model


@dataclass(frozen=True)
class State:
    """What one snapshot holds: each key's records with the file they are in, and each data
    file's level. Never changed once made (snapshots and tags share them)."""

    entries: Mapping[Key, tuple[tuple[str, Rec], ...]] = field(default_factory=dict)
    levels: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class FileRow:
    key: Key
    kind: int
    values: tuple[Any, ...]


class EngineModelMachine(RuleBasedStateMachine):
    def __init__(self, engine: Engine) -> None:
        super().__init__()
        self.engine = engine
        self.dir = tempfile.mkdtemp(prefix="engine-model-")
        self.table: FileStoreTable | None = None
        self.snapshots: dict[int, State] = {}
        self.tags: dict[str, tuple[int, State]] = {}
        self.n = 0
        self.bucket_of: dict[Key, tuple[bytes, int]] = {}  # learnt: the key's (partition, bucket)
        self.file_bucket: dict[str, tuple[bytes, int]] = {}
        self.file_rows: dict[str, tuple[FileRow, ...]] = {}
        self.verified: dict[tuple, Any] = {}

    def teardown(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

    # -------------------------------------------------------------------- helpers

    @property
    def state(self) -> State:
        return self.snapshots[max(self.snapshots)] if self.snapshots else State()

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.engine.columns]

    def _key_names(self) -> list[str]:
        return ["dt", "k"] if self.partitioned else ["k"]

    def _rows(self, state: State) -> list[Row]:
        """What a read of ``state`` shows: each key's records merged, retractions dropped."""
        out = []
        for key, entries in state.entries.items():
            result = self.engine.merged([r for _, r in entries])
            if result is not None and not result.retract:
                out.append((*key, *result.values))
        return sorted(out, key=repr)

    def _read(self, **options: str) -> list[Row]:
        assert self.table is not None
        data = self.table.copy(options).to_arrow()
        columns = [data.column(n).to_pylist() for n in [*self._key_names(), *self.names]]
        return sorted(zip(*columns), key=repr)

    def _file_rows(self, entry: ManifestEntry) -> tuple[FileRow, ...]:
        """The records of a data file, read with pyarrow (files never change once written)."""
        name = entry.file.file_name
        if name not in self.file_rows:
            assert self.table is not None
            path = TableFiles(self.table).data_path(entry)
            rows = pq.ParquetFile(path).read().to_pylist()
            self.file_rows[name] = tuple(
                FileRow(
                    tuple(r[k] for k in self._key_names()),
                    r["_VALUE_KIND"],
                    tuple(r[c] for c in self.names),
                )
                for r in rows
            )
            self.file_bucket[name] = (entry.partition, entry.bucket)
        assert self.file_bucket[name] == (entry.partition, entry.bucket)
        return self.file_rows[name]

    def _delta(self, sid: int) -> tuple[list[ManifestEntry], list[ManifestEntry]]:
        """The files snapshot ``sid`` added and removed."""
        assert self.table is not None
        snapshot = self.table.snapshot_manager.snapshot(sid)
        adds, deletes = [], []
        for meta in self.table.manifest_list.read(snapshot.delta_manifest_list):
            for e in self.table.manifest_file.read(meta.file_name):
                (adds if e.kind == FileKind.ADD else deletes).append(e)
        return adds, deletes

    def _place(self, adds: Sequence[ManifestEntry], expected: Mapping[Key, Rec]) -> dict[Key, str]:
        """Check that the new files hold exactly ``expected`` (one record per key, in the
        key's bucket) and say which file has each key."""
        found: dict[Key, str] = {}
        for e in adds:
            for row in self._file_rows(e):
                assert row.key not in found, f"{row.key} written twice"
                found[row.key] = e.file.file_name
                bucket = self.bucket_of.setdefault(row.key, (e.partition, e.bucket))
                assert bucket == (e.partition, e.bucket), f"{row.key} moved bucket"
                want = expected.get(row.key)
                assert want is not None, f"{row.key} written, none expected"
                assert (row.kind, row.values) == (want.kind, want.values), (row, want)
        assert set(found) == set(expected), (sorted(found), sorted(expected))
        return found

    def _commit(self, sid: int | None, state: State) -> None:
        assert sid is not None
        assert sid == max(self.snapshots, default=0) + 1
        self.snapshots[sid] = state

    # ----------------------------------------------------------------------- rules

    @initialize(
        partitioned=st.booleans(),
        trigger=st.sampled_from([2, 2, 3, 5]),
        newest_runs=st.sampled_from([True, True, False]),
        data=st.data(),
    )
    def create(
        self,
        partitioned: bool,
        trigger: int,
        newest_runs: bool,
        data: st.DataObject,
    ) -> None:
        """The table, partitioned by ``dt`` or not, and a few commits. More than ``trigger``
        sorted runs start a minor compaction (the max level is ``trigger``: ``num-levels``
        defaults to it + 1). Tiny files are all about the same size, so Paimon's default
        size amplification and ratio make nearly every minor compaction rewrite the whole
        bucket; with ``newest_runs`` they never do by size: a minor compaction takes the
        newest runs beyond the trigger, merging them above the older ones."""
        amplification, ratio = ("100000", "-100") if newest_runs else ("200", "1")
        self.partitioned = partitioned
        self.max_level = trigger
        catalog = FileSystemCatalog(self.dir)
        catalog.create_database("db")
        fields = [pa.field("k", pa.int32(), nullable=False)]
        if partitioned:
            fields.append(pa.field("dt", pa.string(), nullable=False))
        fields += [pa.field(c.name, c.type) for c in self.engine.columns]
        self.schema = pa.schema(fields)
        self.table = catalog.create_table(
            "db.t",
            self.schema,
            partition_keys=["dt"] if partitioned else [],
            primary_keys=self._key_names(),
            options={
                "bucket": str(BUCKETS),
                "write-only": "true",  # no commit-time expiry or compaction: rules do those
                "num-sorted-run.compaction-trigger": str(trigger),
                "compaction.max-size-amplification-percent": amplification,
                "compaction.size-ratio": ratio,
                **self.engine.options,
            },
        )
        for records in self._commits(data, 4):
            self._write(records)

    def _commits(self, data: st.DataObject, max_commits: int) -> list[list[tuple[Key, Rec]]]:
        """Up to ``max_commits`` commits of 1..5 records each (keys repeat within one), drawn
        at once (each draw costs)."""
        key = st.tuples(st.sampled_from(PARTS), st.sampled_from(KEYS))
        if not self.partitioned:
            key = st.tuples(st.sampled_from(KEYS))
        record = st.tuples(
            key,
            st.sampled_from(self.engine.kinds),
            st.tuples(*(st.sampled_from(c.samples) for c in self.engine.columns)),
        )
        batches = data.draw(
            st.lists(st.lists(record, min_size=1, max_size=5), max_size=max_commits)
        )
        out = []
        for batch in batches:
            out.append([])
            for k, kind, values in batch:
                self.n += 1
                out[-1].append((k, Rec(kind, values, self.n)))
        return out

    @rule(data=st.data())
    def write(self, data: st.DataObject) -> None:
        for records in self._commits(data, 3):
            self._write(records)

    def _write(self, records: list[tuple[Key, Rec]]) -> None:
        assert self.table is not None
        engine = self.engine
        rows = [
            dict(zip(self._key_names(), key)) | dict(zip(self.names, r.values))
            for key, r in records
        ]
        kinds = pa.array([r.kind for _, r in records], pa.int8())
        sid = self.table.write_arrow(
            pa.Table.from_pylist(rows, schema=self.schema), row_kinds=kinds
        )
        if engine.ignore_delete:  # the writer drops retractions unwritten (TableWriteImpl)
            records = [(key, r) for key, r in records if not r.retract]
        if not records:
            assert sid is None
            return
        batch: dict[Key, list[Rec]] = {}
        for key, rec in records:
            batch.setdefault(key, []).append(rec)
        expected = {}
        for key, recs in batch.items():  # the writer's buffer merges each key's records
            merged = engine.merged(recs)
            if merged is not None:
                expected[key] = merged
        assert sid is not None
        adds, deletes = self._delta(sid)
        assert not deletes
        placed = self._place(adds, expected)
        entries = dict(self.state.entries)
        for key, rec in expected.items():
            entries[key] = (*entries.get(key, ()), (placed[key], rec))
        levels = dict(self.state.levels)
        for e in adds:
            assert e.file.level == 0
            levels[e.file.file_name] = 0
        self._commit(sid, State(entries, levels))

    @rule(full=st.sampled_from([False, False, True]))
    def compact(self, full: bool) -> None:
        assert self.table is not None
        sid = compact_table(self.table, full=full)
        state = self.state
        if sid is not None:
            state = self._compacted(sid, state)
            self._commit(sid, state)
        if full:  # one sorted run at the max level in every bucket, no retractions
            assert set(state.levels.values()) <= {self.max_level}
            for key, entries in state.entries.items():
                assert len(entries) == 1 and not entries[0][1].retract, (key, entries)

    def _compacted(self, sid: int, state: State) -> State:
        """The state after the COMPACT snapshot ``sid``: per bucket, each key's records in the
        removed files merged into one (dropped when a retraction and the compaction rewrote
        every file of the bucket: nothing older is left below it)."""
        adds, deletes = self._delta(sid)
        assert deletes
        units: dict[tuple[bytes, int], set[str]] = {}
        for e in deletes:
            assert state.levels.get(e.file.file_name) == e.file.level, e.file.file_name
            units.setdefault((e.partition, e.bucket), set()).add(e.file.file_name)
        entries = dict(state.entries)
        levels = {
            f: lv for f, lv in state.levels.items() if not any(f in u for u in units.values())
        }
        for bucket, removed in units.items():
            in_bucket = {f for f in state.levels if self.file_bucket[f] == bucket}
            drop = removed == in_bucket
            expected: dict[Key, Rec] = {}
            for key, key_entries in state.entries.items():
                inside = [r for f, r in key_entries if f in removed]
                if not inside:
                    continue
                merged = self.engine.merged(inside)
                entries[key] = tuple((f, r) for f, r in key_entries if f not in removed)
                if merged is not None and not (drop and merged.retract):
                    expected[key] = merged
            outputs = [e for e in adds if (e.partition, e.bucket) == bucket]
            placed = self._place(outputs, expected)
            for key, rec in expected.items():
                entries[key] = (*entries[key], (placed[key], rec))
            for e in outputs:
                assert e.file.level > 0
                levels[e.file.file_name] = e.file.level
        assert all((e.partition, e.bucket) in units for e in adds)
        return State({k: v for k, v in entries.items() if v}, levels)

    @rule(retain=st.sampled_from([1, 1, 2, 3]))
    def expire(self, retain: int) -> None:
        assert self.table is not None
        result = expire_snapshots(
            self.table, retain_max=retain, retain_min=retain, older_than_millis=2**62
        )
        expired = sorted(self.snapshots)[: max(len(self.snapshots) - retain, 0)]
        assert result.expired == len(expired)
        for sid in expired:
            del self.snapshots[sid]

    @precondition(lambda self: self.snapshots)
    @rule(name=st.sampled_from(TAGS), data=st.data())
    def create_tag(self, name: str, data: st.DataObject) -> None:
        assert self.table is not None
        if name in self.tags:
            tm.delete_tags(self.table, name)
            del self.tags[name]
        sid = data.draw(st.sampled_from(sorted(self.snapshots)))
        tag = tm.create_tag(self.table, name, snapshot_id=sid)
        assert tag.snapshot_id == sid
        self.tags[name] = (sid, self.snapshots[sid])

    @precondition(lambda self: self.tags)
    @rule(data=st.data())
    def delete_tag(self, data: st.DataObject) -> None:
        assert self.table is not None
        name = data.draw(st.sampled_from(sorted(self.tags)))
        tm.delete_tags(self.table, name)
        del self.tags[name]

    def _rollback_targets(self) -> list[tuple[str, Any]]:
        """Tags and snapshot ids (live, or expired and held by a tag) other than the latest."""
        latest = max(self.snapshots, default=None)
        out: list[tuple[str, Any]] = [
            ("tag", n) for n, (s, _) in sorted(self.tags.items()) if s != latest
        ]
        held = {s for s, _ in self.tags.values()}
        out += [("snapshot", s) for s in sorted({*self.snapshots, *held}) if s != latest]
        return out

    @precondition(lambda self: self._rollback_targets())
    @rule(data=st.data())
    def rollback(self, data: st.DataObject) -> None:
        assert self.table is not None
        how, target = data.draw(st.sampled_from(self._rollback_targets()))
        if how == "tag":
            sid, state = self.tags[target]
            result = rb.rollback_to_tag(self.table, target)
        else:
            sid = target
            state = {**dict(self.tags.values()), **self.snapshots}[sid]
            result = rb.rollback_to_snapshot(self.table, sid)
        assert (result.previous_snapshot_id, result.snapshot_id) == (max(self.snapshots), sid)
        self.snapshots = {s: v for s, v in self.snapshots.items() if s < sid}
        self.snapshots[sid] = state
        self.tags = {n: t for n, t in self.tags.items() if t[0] <= sid}

    # ------------------------------------------------------------------ invariant

    @invariant()
    def snapshots_and_tags_read_the_model(self) -> None:
        if self.table is None:
            return
        table = FileStoreTable.load(self.table.path)
        manager = table.snapshot_manager
        assert manager.list_snapshot_ids() == sorted(self.snapshots)
        tags = table.tag_manager.list_tags()
        assert {n: t.snapshot_id for n, t in tags.items()} == {
            n: s for n, (s, _) in self.tags.items()
        }
        files = TableFiles(table)
        pinned: list[tuple[Snapshot, State, dict[str, str]]] = [
            (manager.snapshot(s), state, {"scan.snapshot-id": str(s)})
            for s, state in self.snapshots.items()
        ]
        pinned += [
            (tags[n].snapshot, state, {"scan.tag-name": n}) for n, (_, state) in self.tags.items()
        ]
        for snapshot, state, options in pinned:
            # Files never change once written: a snapshot read with the rows expected now
            # reads them again while every file it lists exists (checked each time).
            key = (snapshot.base_manifest_list, snapshot.delta_manifest_list)
            expected = (self._rows(state), dict(state.levels))
            if self.verified.get(key, (None,))[0] != expected:
                assert self._read(**options) == expected[0], options
                # Every file it needs: data files (as the model lists them), manifests, lists.
                paths = {*self._live_paths(table, files, snapshot, state)}
                paths |= files_in_use(table, [snapshot], files).all_paths()
                self.verified[key] = (expected, sorted(paths))
            missing = [p for p in self.verified[key][1] if not os.path.exists(p)]
            assert not missing, (options, missing)

    def _live_paths(
        self, table: FileStoreTable, files: TableFiles, snapshot: Snapshot, state: State
    ) -> list[str]:
        """The snapshot's live data files (the core's listing), which must be the model's."""
        live = LiveFiles(snapshot)
        lists = table.manifest_list

        def manifests(s: Snapshot) -> list:
            return [*lists.read(s.base_manifest_list), *lists.read(s.delta_manifest_list)]

        cover(table, live, None, manifests)
        levels = {e.file.file_name: e.file.level for e in live.entries.values()}
        assert levels == dict(state.levels)
        return [files.data_path(e) for e in live.entries.values()]


SETTINGS = settings(
    max_examples=5,
    stateful_step_count=20,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
)


@pytest.mark.parametrize("engine", ENGINES, ids=lambda e: e.name)
def test_merge_engine_matches_model(engine: Engine) -> None:
    run_state_machine_as_test(lambda: EngineModelMachine(engine), settings=SETTINGS)

"""Random histories of primary-key tables of every merge engine, against a plain-Python model of
Paimon's merge semantics (Apache Paimon 2.0, the latest release).

A ``RuleBasedStateMachine`` upserts and deletes (+I, +U, -U, -D records, several per key in
one commit), compacts (full and minor, ``compact_table`` with its in-process runner), expires
snapshots, rolls back (to a snapshot or a tag) and creates and deletes tags, on a table with
two buckets, keys 0..7 and, in some examples, two partitions. After every step each live
snapshot and tag must read exactly the rows the model gives for it, list exactly the data
files (at the levels) the model holds for it, have exactly the deletion vectors the model
holds for it, and no file it needs may be missing (``check_table`` finds no problem after
expiry, rollback and tag deletion).

Why the model keeps the LSM tree's shape rather than one row per key: Paimon's result is not a
function of the records alone. A key's records are merged in groups (the records of one key in
one commit by the writer's buffer, the files of a compaction unit), a lone record is never
passed to the merge function by a reducer (a lone ``-D`` stays a ``-D``), and a compaction
that rewrites every file of its bucket drops the retractions it produces, which later records
then no longer merge with. So the model holds, for every key, one record per data file that has
it, and merges exactly the groups Paimon merges. Which files a compaction picks (universal
compaction over file sizes) is the one thing taken from the table's own picker: the model
predicts everything else (what each new file holds, which files are upgraded unchanged,
whether retractions are dropped, which rows deletion vectors delete, every read).

Lookup tables (``first-row``, ``deletion-vectors.enabled``, ``changelog-producer`` =
``lookup``: Java's ``CoreOptions.needLookup``) follow Java's ``LookupMergeTreeCompactRewriter``:
a compaction holding level-0 files into a level above 0 passes every key through the lookup
wrapper (``LookupChangelogMergeFunctionWrapper``, ``FirstRowMergeFunctionWrapper``), with no
reducer: lone records are merged too, and a key without a record above level 0 in the unit
is looked up in the levels below the output (its record merged in as the oldest, and deleted
by a deletion vector; first-row drops the new record instead). Their merge function sees only
a key's level-0 records and its record on the lowest level above 0 (``LookupMergeFunction``),
and batch reads of first-row and deletion-vector tables skip level 0. Each configuration runs
with ``write-only`` (compaction only by the ``compact`` rule) and without (every write compacts
the buckets it wrote, lookup tables forcing level 0 up: ``ForceUpLevel0Compaction``).

The merge functions below restate Java's ``DeduplicateMergeFunction``,
``PartialUpdateMergeFunction``, ``AggregateMergeFunction``, ``FirstRowMergeFunction`` and
``Field*Agg`` of Paimon 2.0 (docs/docs/primary-key-table/merge-engine/*.md) without using
``operations/merge``. Each configuration is its own test of a few examples, so that every run
covers every engine in about a minute (``ENGINE_MODEL_EXAMPLES=60`` runs more). What the machine found is pinned by regression tests
next to the code it fixed (``test_a_first_retraction_fills_the_row``,
``test_listagg_delimiter_and_distinct``, and in ``test_lookup_compaction.py``).
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
from paimon_core.format.manifest import DataFileMeta, FileKind, ManifestEntry
from paimon_core.format.snapshot import CommitKind, Snapshot
from paimon_core.lifecycle import rollback as rb
from paimon_core.lifecycle import tag_management as tm
from paimon_core.lifecycle.check import check_table
from paimon_core.lifecycle.expire import expire_snapshots
from paimon_core.lifecycle.file_deletion import TableFiles, files_in_use
from paimon_core.operations.compact import (
    CompactOptions,
    CompactUnit,
    compact_table,
    level_sorted_runs,
    pick_full_compaction,
)
from paimon_core.operations.deletion_vectors import (
    deletion_vectors_index,
    snapshot_deletion_files,
)
from paimon_core.operations.live_files import LiveFiles, cover
from paimon_core.operations.scan import TableScan
from paimon_core.table import FileStoreTable

INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = 0, 1, 2, 3
RETRACT = frozenset({UPDATE_BEFORE, DELETE})
KEYS = range(8)
PARTS = ("a", "b")
TAGS = ("t1", "t2", "t3")
BUCKETS = 2

Key = tuple[Any, ...]  # (k,) or (dt, k)
Row = tuple[Any, ...]
Bucket = tuple[bytes, int]  # (partition, bucket)


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
class FirstRow(Merge):
    """The first +I/+U wins. Retractions are skipped with ``ignore-delete`` (the writer drops
    them before they reach a file) and refused otherwise (not generated here)."""

    ignore_delete: bool = False

    def merge(self, recs: Sequence[Rec]) -> Rec | None:
        adds = [r for r in recs if not r.retract]
        assert self.ignore_delete or len(adds) == len(recs), "first-row refuses retractions"
        return adds[0] if adds else None


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
        return "true" in (self.options.get("ignore-delete"), self.options.get(FIRST_ROW_IGNORE))

    @property
    def first_row(self) -> bool:
        return self.options.get("merge-engine") == "first-row"

    @property
    def dv(self) -> bool:
        return self.options.get("deletion-vectors.enabled") == "true"

    @property
    def lookup(self) -> bool:
        """Java's ``CoreOptions.needLookup``."""
        return self.first_row or self.dv or self.options.get("changelog-producer") == "lookup"

    @property
    def skip_level0(self) -> bool:
        """Java's ``batchScanSkipLevel0``."""
        return self.first_row or self.dv

    @property
    def deduplicate_without_sequence(self) -> bool:
        """A level-0 file upgrades unchanged into any level (``upgradeStrategy``)."""
        engine = self.options.get("merge-engine", "deduplicate")
        return engine == "deduplicate" and self.sequence_field is None

    def order(self, rec: Rec) -> tuple:
        """Merge order: the sequence field (nulls first), then the sequence number."""
        if self.sequence_field is None:
            return (rec.n,)
        value = rec.values[[c.name for c in self.columns].index(self.sequence_field)]
        return (value is not None, value if value is not None else 0, rec.n)

    def candidates(self, recs: Sequence[tuple[int, Rec]]) -> list[Rec]:
        """``(level, record)`` pairs of one key -> what its merge function sees, in merge order:
        on lookup tables but first-row (``LookupMergeFunction``) the level-0 records and the
        one on the lowest level above 0, else all."""
        ordered = sorted(recs, key=lambda lr: self.order(lr[1]))
        if not self.lookup or self.first_row:
            return [r for _, r in ordered]
        high = min((lv for lv, _ in ordered if lv > 0), default=None)
        return [r for lv, r in ordered if lv <= 0 or lv == high]

    def reduced(self, recs: Sequence[tuple[int, Rec]]) -> Rec | None:
        """A key's ``(level, record)`` pairs merged as a reducer does (reads, the writer's
        buffer, compactions without lookup): a lone record as it is."""
        if len(recs) == 1:
            return recs[0][1]
        return self.merge.merge(self.candidates(recs))


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

DEDUP_COLUMNS = (Column("v", pa.string(), STRS), Column("w", pa.int32(), INTS))
SEQ_COLUMNS = (Column("s", pa.int32(), SEQ), Column("v", pa.string(), STRS))
AGG_OPTIONS = {
    "merge-engine": "aggregation",
    "fields.s.aggregate-function": "sum",
    "fields.m.aggregate-function": "max",
    "fields.m.ignore-retract": "true",
    "fields.g.aggregate-function": "listagg",
    "fields.g.ignore-retract": "true",
    "fields.g.list-agg-delimiter": "|",
}  # l: last_non_null_value, the default
AGG_COLUMNS = (
    Column("s", pa.int64(), (None, -2, 1, 3)),
    Column("m", pa.int32(), INTS),
    Column("l", pa.string(), STRS),
    Column("g", pa.string(), ("p", "q", "", " ", None)),
)
AGG_MERGE = Aggregate((Sum(), IgnoreRetract(Max()), LastNonNull(), IgnoreRetract(Listagg("|"))))
DV = {"deletion-vectors.enabled": "true"}
LOOKUP_CHANGELOG = {"changelog-producer": "lookup"}
FIRST_ROW_IGNORE = "first-row.ignore-delete"  # the fallback key of ignore-delete
ADDS = (INSERT,) * 3 + (UPDATE_AFTER,)

ENGINES = (
    Engine("deduplicate", {}, DEDUP_COLUMNS, Deduplicate()),
    Engine(
        "deduplicate-sequence-field",
        {"sequence.field": "s"},
        SEQ_COLUMNS,
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
    Engine("aggregation", AGG_OPTIONS, AGG_COLUMNS, AGG_MERGE),
)

LOOKUP_ENGINES = (
    Engine("first-row", {"merge-engine": "first-row"}, DEDUP_COLUMNS, FirstRow(), kinds=ADDS),
    Engine(
        "first-row-ignore-delete",
        {"merge-engine": "first-row", FIRST_ROW_IGNORE: "true"},
        DEDUP_COLUMNS,
        FirstRow(ignore_delete=True),
    ),
    Engine(
        "first-row-changelog-lookup",
        {"merge-engine": "first-row", "ignore-delete": "true", **LOOKUP_CHANGELOG},
        DEDUP_COLUMNS,
        FirstRow(ignore_delete=True),
    ),
    Engine("deduplicate-dv", DV, DEDUP_COLUMNS, Deduplicate()),
    Engine(
        "deduplicate-sequence-field-dv",
        {"sequence.field": "s", **DV},
        SEQ_COLUMNS,
        Deduplicate(),
        sequence_field="s",
    ),
    Engine(
        "partial-update-remove-record-on-delete-dv",
        {
            "merge-engine": "partial-update",
            "partial-update.remove-record-on-delete": "true",
            **DV,
        },
        PU_COLUMNS,
        PartialUpdate(("a", "b", "c"), remove_record_on_delete=True),
    ),
    Engine(
        "partial-update-sequence-group-dv",
        {**GROUP_OPTIONS, **DV},
        GROUP_COLUMNS,
        PartialUpdate(GROUP_NAMES, GROUPS),
    ),
    Engine("aggregation-dv", {**AGG_OPTIONS, **DV}, AGG_COLUMNS, AGG_MERGE),
    Engine("deduplicate-changelog-lookup", LOOKUP_CHANGELOG, DEDUP_COLUMNS, Deduplicate()),
    Engine(
        "partial-update-sequence-group-changelog-lookup",
        {**GROUP_OPTIONS, **LOOKUP_CHANGELOG},
        GROUP_COLUMNS,
        PartialUpdate(GROUP_NAMES, GROUPS),
    ),
    Engine(
        "aggregation-changelog-lookup", {**AGG_OPTIONS, **LOOKUP_CHANGELOG}, AGG_COLUMNS, AGG_MERGE
    ),
)


# -------------------------------------------------------------------------------- model


def _changelog_order(record: tuple[Key, int, tuple[Any, ...]]) -> tuple:
    """Key order, then a key's -U before its +U (values compared as text: they may be None)."""
    key, kind, values = record
    return (repr(key), kind != UPDATE_BEFORE, kind, repr(values))


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


AS_IS, PLAIN, LOOKUP, LOOKUP_AS_IS = "as-is", "plain", "lookup", "lookup-as-is"
"""How a compaction treats its unit (``MergeTreeCompactTask``, the rewriters'
``upgradeStrategy``): one file upgraded unchanged; a rewrite through a reducer; a rewrite
through the lookup wrapper; one level-0 file upgraded unchanged after the lookup wrapper ran
(its lookups delete older rows, its changelog is written)."""


class EngineModelMachine(RuleBasedStateMachine):
    def __init__(self, engine: Engine, write_only: bool = True) -> None:
        super().__init__()
        self.engine = engine
        self.write_only = write_only
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
        """What a batch read of ``state`` shows: each key's records (level 0 skipped on
        first-row and deletion-vector tables) merged, retractions dropped."""
        out = []
        engine = self.engine
        for key, entries in state.entries.items():
            recs = [(state.levels[f], r) for f, r in entries]
            if engine.skip_level0:
                recs = [(lv, r) for lv, r in recs if lv > 0]
            if engine.dv:  # every older row of a key is deleted by its deletion vector
                assert len(recs) <= 1, (key, entries)
            result = engine.reduced(recs) if recs else None
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
                # Without write-only every write compacts the buckets it wrote; commit-time
                # expiry keeps everything (10 snapshots at least, each for an hour).
                "write-only": str(self.write_only).lower(),
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
        compacted = None
        if sid is not None:
            snapshot = self.table.snapshot_manager.snapshot(sid)
            if snapshot.commit_kind == CommitKind.COMPACT:
                assert not self.write_only
                compacted, sid = sid, sid - 1
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
            merged = engine.reduced([(-1, r) for r in recs])
            if merged is not None:
                expected[key] = merged
        assert sid is not None
        adds, deletes = self._delta(sid)
        assert not deletes and not self._changelog(sid)  # lookup: compactions make it
        placed = self._place(adds, expected)
        entries = dict(self.state.entries)
        for key, rec in expected.items():
            entries[key] = (*entries.get(key, ()), (placed[key], rec))
        levels = dict(self.state.levels)
        for e in adds:
            assert e.file.level == 0
            levels[e.file.file_name] = 0
        self._commit(sid, State(entries, levels))
        if compacted is not None:
            self._commit(compacted, self._compacted(compacted, self.state, full=False))

    @rule(full=st.sampled_from([False, False, True]))
    def compact(self, full: bool) -> None:
        assert self.table is not None
        sid = compact_table(self.table, full=full)
        state = self.state
        if sid is not None:
            state = self._compacted(sid, state, full)
            self._commit(sid, state)
        if full:  # one sorted run at the max level in every bucket, no retractions
            assert set(state.levels.values()) <= {self.max_level}
            for key, entries in state.entries.items():
                assert len(entries) == 1 and not entries[0][1].retract, (key, entries)

    def _compacted(self, sid: int, state: State, full: bool) -> State:
        """The state after the COMPACT snapshot ``sid`` (made by a full or minor compaction of
        the state before it): per bucket compacted, the unit the table's picker gives (which
        must be the files removed) treated as Java treats it."""
        assert self.table is not None
        adds, deletes = self._delta(sid)
        assert deletes
        units: dict[Bucket, set[str]] = {}
        for e in deletes:
            assert state.levels.get(e.file.file_name) == e.file.level, e.file.file_name
            units.setdefault((e.partition, e.bucket), set()).add(e.file.file_name)
        assert all((e.partition, e.bucket) in units for e in adds)
        files: dict[Bucket, list[DataFileMeta]] = {}
        parent = self.table.snapshot_manager.snapshot(sid - 1)
        for e in TableScan(self.table).read_entries(parent):
            files.setdefault((e.partition, e.bucket), []).append(e.file)
        options = CompactOptions.of(self.table, full)
        entries = dict(state.entries)
        levels = dict(state.levels)
        changelog = self._changelog(sid)
        for bucket, removed in units.items():
            unit = self._pick(files[bucket], options)
            assert unit is not None and {f.file_name for f in unit.files} == removed
            outputs = [e for e in adds if (e.partition, e.bucket) == bucket]
            expected = self._compact_unit(
                state, entries, levels, removed, unit.output_level, outputs
            )
            assert changelog.pop(bucket, []) == expected, bucket
        assert not changelog
        return State({k: v for k, v in entries.items() if v}, levels)

    def _changelog(self, sid: int) -> dict[Bucket, list[tuple[Key, int, tuple[Any, ...]]]]:
        """The changelog files snapshot ``sid`` lists: per bucket, its records in key order."""
        assert self.table is not None
        snapshot = self.table.snapshot_manager.snapshot(sid)
        out: dict[Bucket, list[tuple[Key, int, tuple[Any, ...]]]] = {}
        if not snapshot.changelog_manifest_list:
            return out
        for meta in self.table.manifest_list.read(snapshot.changelog_manifest_list):
            for e in self.table.manifest_file.read(meta.file_name):
                assert e.kind == FileKind.ADD
                rows = out.setdefault((e.partition, e.bucket), [])
                rows += [(r.key, r.kind, r.values) for r in self._file_rows(e)]
        return {b: sorted(rows, key=_changelog_order) for b, rows in out.items()}

    @staticmethod
    def _pick(files: Sequence[DataFileMeta], options: CompactOptions) -> CompactUnit | None:
        """The table's picker: full compaction, or universal compaction (lookup tables forcing
        level 0 up when it picks nothing: ``ForceUpLevel0Compaction``)."""
        runs = level_sorted_runs(files)
        if options.full:
            return pick_full_compaction(options.num_levels, runs)
        unit = options.universal.pick(options.num_levels, runs)
        if unit is None and options.lookup:
            unit = options.universal.force_pick_l0(options.num_levels, runs)
        return unit

    def _strategy(self, state: State, removed: set[str], output: int) -> tuple[str, bool]:
        """How Java compacts ``removed`` into level ``output`` and whether it drops the
        retractions it writes (``MergeTreeCompactManager``: when nothing older lies below,
        and always with deletion vectors; ``MergeTreeCompactTask.upgrade``; the lookup
        rewriter's ``rewriteLookupChangelog`` and ``upgradeStrategy``)."""
        engine = self.engine
        bucket = self.file_bucket[next(iter(removed))]
        highest = max(lv for f, lv in state.levels.items() if self.file_bucket[f] == bucket)
        drop = output != 0 and (output >= highest or engine.dv)
        level0 = any(state.levels[f] == 0 for f in removed)
        rewrite = LOOKUP if engine.lookup and output != 0 and level0 else PLAIN
        if len(removed) > 1:
            return rewrite, drop
        (name,) = removed
        retracts = any(row.kind in RETRACT for row in self.file_rows[name])
        if output == self.max_level and retracts:
            return rewrite, drop
        if not engine.lookup or state.levels[name] != 0:
            return AS_IS, drop
        if engine.dv and retracts:
            return LOOKUP, True
        if output == self.max_level or engine.deduplicate_without_sequence:
            return LOOKUP_AS_IS, drop
        return LOOKUP, engine.dv

    def _compact_unit(
        self,
        state: State,
        entries: dict[Key, tuple[tuple[str, Rec], ...]],
        levels: dict[str, int],
        removed: set[str],
        output: int,
        outputs: Sequence[ManifestEntry],
    ) -> list[tuple[Key, int, tuple[Any, ...]]]:
        """``entries`` and ``levels`` after compacting the files ``removed`` (a unit of one
        bucket, taken from ``state``) into level ``output``; ``outputs``: the files the table
        added for it. Returns the changelog the compaction writes (in key order)."""
        mode, drop = self._strategy(state, removed, output)
        for name in removed:
            del levels[name]
        if mode in (AS_IS, LOOKUP_AS_IS):
            (name,) = removed
            assert [(e.file.file_name, e.file.level) for e in outputs] == [(name, output)]
            levels[name] = output
        expected: dict[Key, Rec] = {}
        changelog: list[tuple[Key, int, tuple[Any, ...]]] = []
        for key, key_entries in state.entries.items():
            inside = [(state.levels[f], r) for f, r in key_entries if f in removed]
            if not inside or mode == AS_IS:
                continue
            if mode == PLAIN:
                result, older = self.engine.reduced(inside), None
            else:
                result, older, changes = self._lookup_merge(
                    state, key_entries, inside, removed, output
                )
                changelog += [(key, kind, values) for kind, values in changes]
            kept = [(f, r) for f, r in key_entries if f not in removed and (f, r) != older]
            if mode == LOOKUP_AS_IS:
                kept += [(f, r) for f, r in key_entries if f in removed]
            elif result is not None and not (drop and result.retract):
                expected[key] = result
            entries[key] = tuple(kept)
        changelog.sort(key=_changelog_order)
        if mode in (AS_IS, LOOKUP_AS_IS):
            return changelog
        assert all(e.file.file_name not in removed for e in outputs)
        placed = self._place(outputs, expected)
        for key, rec in expected.items():
            entries[key] = (*entries[key], (placed[key], rec))
        for e in outputs:
            assert e.file.level == output > 0
            levels[e.file.file_name] = output
        return changelog

    def _lookup_merge(
        self,
        state: State,
        key_entries: Sequence[tuple[str, Rec]],
        inside: Sequence[tuple[int, Rec]],
        removed: set[str],
        output: int,
    ) -> tuple[Rec | None, tuple[str, Rec] | None, list[tuple[int, tuple[Any, ...]]]]:
        """One key through the lookup wrapper: its result (None: nothing written), with
        deletion vectors the older record the lookup deletes, and its changelog
        (``changelog-producer`` = ``lookup``).

        The merge function sees every key, lone or not. A key with no record above level 0
        in the unit is looked up in the levels below ``output`` (the newest level holding a
        live record of it, retractions included): first-row then writes nothing (the key
        exists), the other engines merge that record in as the oldest. A key with a level-0
        record gets changelog: first-row the record of a new key; the others compare the
        record before (the one above level 0, or found below; none when a retraction) with
        the result (``setChangelog``)."""
        engine = self.engine
        below = sorted(
            ((state.levels[f], f, r) for f, r in key_entries),
            key=lambda t: t[0],
        )
        below = [t for t in below if t[1] not in removed and t[0] > output]
        high = [(lv, r) for lv, r in inside if lv > 0]
        produce = engine.options.get("changelog-producer") == "lookup"
        changes: list[tuple[int, tuple[Any, ...]]] = []
        if engine.first_row:  # FirstRowMergeFunctionWrapper
            if not high and below:
                return None, None, changes
            result = engine.merge.merge(engine.candidates(inside))
            if produce and not high and result is not None:
                changes.append((result.kind, result.values))
            return result, None, changes
        candidates = engine.candidates(inside)
        before = min(high, key=lambda lr: lr[0])[1] if high else None
        older = None
        if not high and below:
            _, name, before = below[0]
            candidates = sorted([*candidates, before], key=engine.order)
            older = (name, before) if engine.dv else None
        result = engine.merge.merge(candidates)
        if produce and any(lv == 0 for lv, _ in inside) and result is not None:
            if before is None or before.retract:
                if not result.retract:
                    changes.append((INSERT, result.values))
            elif result.retract:
                changes.append((DELETE, before.values))
            else:
                changes += [(UPDATE_BEFORE, before.values), (UPDATE_AFTER, result.values)]
        return result, older, changes

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
        self._check_table()

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
        self._check_table()

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
        self._check_table()

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
                self._check_deletion_vectors(table, snapshot, state)
                self.verified[key] = (expected, sorted(paths))
            missing = [p for p in self.verified[key][1] if not os.path.exists(p)]
            assert not missing, (options, missing)

    def _check_deletion_vectors(
        self, table: FileStoreTable, snapshot: Snapshot, state: State
    ) -> None:
        """The snapshot's deletion vectors delete exactly the rows of its files that the
        model holds no more (none without deletion vectors)."""
        live = {(f, key) for key, entries in state.entries.items() for f, _ in entries}
        expected = {}
        for name in state.levels:
            deleted = [
                i for i, row in enumerate(self.file_rows[name]) if (name, row.key) not in live
            ]
            if deleted:
                expected[name] = deleted
        index = snapshot_deletion_files(table, snapshot)
        files = [d for bucket in index.values() for d in bucket.values()]
        vectors = deletion_vectors_index(table).read_many(files) if files else {}
        actual = {n: v.positions.tolist() for n, v in vectors.items() if not v.is_empty()}
        assert actual == expected, snapshot.snapshot_id
        assert self.engine.dv or not files

    def _check_table(self) -> None:
        """Nothing a live snapshot or tag needs is missing or broken, DV index files included."""
        assert self.table is not None
        assert check_table(FileStoreTable.load(self.table.path), deep=True) == []

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
    max_examples=int(os.environ.get("ENGINE_MODEL_EXAMPLES", "5")),
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


@pytest.mark.parametrize("write_only", [True, False], ids=["write-only", "compacting"])
@pytest.mark.parametrize("engine", LOOKUP_ENGINES, ids=lambda e: e.name)
def test_lookup_table_matches_model(engine: Engine, write_only: bool) -> None:
    run_state_machine_as_test(lambda: EngineModelMachine(engine, write_only), settings=SETTINGS)

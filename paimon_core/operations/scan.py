"""Scan planning: a snapshot's manifests -> live data files -> one split per (partition, bucket).

Planning is on the path of every query, so it reads each manifest once, folds ADD/DELETE
entries in one dict keyed by file identifier, and decodes each distinct partition row once.
Pruning is by partition (manifest partition stats, then exact partition values), by file
stats (value stats for append tables, key stats for primary-key tables) and by file indexes
(``file-index.*``: what an index proves no row matches). Value predicates reach a primary-key
table's files as Java's whole-bucket value filter lets them: a newer version of a row may
live in another file of the bucket.
"""

from __future__ import annotations

import datetime as dt
import math
import struct
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from decimal import Decimal
from functools import partial
from itertools import repeat
from operator import and_, itemgetter, not_, or_
from typing import TYPE_CHECKING, Any

from paimon_core.exceptions import InvalidArgument, MetadataFormatError
from paimon_core.format.binary_row import row_codec
from paimon_core.format.data_file_index import BytesSource, StreamSource, evaluate, index_columns
from paimon_core.format.deletion_vectors import DeletionFile
from paimon_core.format.features import Access, check_files
from paimon_core.format.file_index import INDEX_PATH_SUFFIX, file_index_read_enabled
from paimon_core.format.manifest import (
    DataFileMeta,
    FileKind,
    ManifestEntry,
    ManifestFileMeta,
    PartitionVerdicts,
    gc_paused,
)
from paimon_core.format.paths import POSTPONE_BUCKET, bucket_dir_name, partition_path
from paimon_core.format.stats import ColumnStats, decode_stats
from paimon_core.format.types import DataType
from paimon_core.operations.data_evolution import data_evolution_enabled
from paimon_core.operations.deletion_vectors import snapshot_deletion_files
from paimon_core.operations.time_travel import resolve_snapshot

if TYPE_CHECKING:
    from paimon_core.format.schema import TableSchema
    from paimon_core.format.snapshot import Snapshot
    from paimon_core.table import FileStoreTable

Predicate = tuple[str, str, Any]
OPERATORS = frozenset({"=", "!=", "<", "<=", ">", ">=", "in", "is_null", "is_not_null"})
"""``in`` takes a collection of literals (SQL's ``IN (...)``: a null among them matches
nothing, as Spark's three-valued ``IN`` in a filter)."""
_PARALLEL_INDEX_READS = 16


@dataclass(frozen=True, slots=True)
class Split:
    """The live files of one (partition, bucket) of a snapshot: the unit of reading.

    ``deletion_files``: the deletion vectors of those files that have one (tables with
    ``deletion-vectors.enabled``), found by data file name; a reader drops their rows."""

    partition: bytes
    partition_values: tuple
    bucket: int
    files: tuple[DataFileMeta, ...]
    snapshot_id: int | None
    deletion_files: tuple[DeletionFile, ...] = ()

    @property
    def row_count(self) -> int:
        """Rows of the files, deleted rows included (as Java's ``DataSplit.rowCount``)."""
        return sum(f.row_count for f in self.files)

    def deletion_file(self, file_name: str) -> DeletionFile | None:
        for d in self.deletion_files:
            if d.data_file_name == file_name:
                return d
        return None

    def with_files(self, files: Sequence[DataFileMeta]) -> Split:
        """This split narrowed to ``files``, with their deletion vectors only."""
        names = {f.file_name for f in files}
        deletion = tuple(d for d in self.deletion_files if d.data_file_name in names)
        return replace(self, files=tuple(files), deletion_files=deletion)


def _coerce(literal: Any, sample: Any) -> Any:
    """``literal`` as the Python type of the stored ``sample`` (SQL hands over strings)."""
    if literal is None or sample is None or type(literal) is type(sample):
        return literal
    try:
        if isinstance(literal, str):
            if isinstance(sample, bool):
                return literal.strip().lower() == "true"
            if isinstance(sample, int):
                return int(literal)
            if isinstance(sample, float):
                return float(literal)
            if isinstance(sample, Decimal):
                return Decimal(literal)
            if isinstance(sample, dt.datetime):
                return _naive_utc(dt.datetime.fromisoformat(literal))
            if isinstance(sample, dt.date):
                return dt.date.fromisoformat(literal)
            if isinstance(sample, dt.time):
                return dt.time.fromisoformat(literal)
            if isinstance(sample, bytes):
                return literal.encode()
        if isinstance(sample, dt.datetime):
            if isinstance(literal, dt.datetime):
                return _naive_utc(literal)
            if isinstance(literal, dt.date):
                return dt.datetime.combine(literal, dt.time())
        if isinstance(sample, Decimal) and isinstance(literal, (int, float)):
            return Decimal(str(literal))
    except ValueError:
        return literal
    return literal


def _naive_utc(value: dt.datetime) -> dt.datetime:
    if value.tzinfo is None:
        return value
    return value.astimezone(dt.UTC).replace(tzinfo=None)


def _spark_order(value: float) -> tuple[int, float]:
    """Spark's order of floating-point values: NaN equals NaN and is above every number;
    -0.0 equals 0.0."""
    return (1, 0.0) if math.isnan(value) else (0, value)


def _compare(op: str, value: Any, literal: Any) -> bool:
    if op == "=":
        return bool(value == literal)
    if op == "!=":
        return bool(value != literal)
    if op == "<":
        return bool(value < literal)
    if op == "<=":
        return bool(value <= literal)
    if op == ">":
        return bool(value > literal)
    return bool(value >= literal)


def _nan_matches(op: str, literal: float) -> bool:
    """Whether a NaN satisfies ``NaN <op> literal`` under Spark's semantics."""
    return _compare(op, _spark_order(math.nan), _spark_order(literal))


def value_matches(op: str, literal: Any, value: Any) -> bool:
    """Whether a known value satisfies ``value <op> literal`` (SQL: null matches only is_null).

    FLOAT/DOUBLE values compare as in Spark: NaN = NaN holds and NaN is above every number.
    """
    if op == "is_null":
        return value is None
    if op == "is_not_null":
        return value is not None
    if value is None or literal is None:
        return False
    if op == "in":
        if isinstance(literal, InLiterals):
            return literal.holds(value)
        return any(value_matches("=", one, value) for one in literal)
    literal = _coerce(literal, value)
    if isinstance(value, float) and isinstance(literal, (int, float)):
        return _compare(op, _spark_order(value), _spark_order(float(literal)))
    try:
        if op == "=":
            return value == literal
        if op == "!=":
            return value != literal
        if op == "<":
            return value < literal
        if op == "<=":
            return value <= literal
        if op == ">":
            return value > literal
        return value >= literal
    except TypeError:
        return op == "!="


class InLiterals(tuple):
    """An ``in`` predicate's literals that answer membership with a set of them converted
    to the type of the values asked about (a plan asks for every partition of a table), where
    a set gives ``=``'s answer: not for FLOAT/DOUBLE (NaN and -0.0 compare as in Spark)."""

    _sets: dict[type, frozenset | None]

    def holds(self, value: Any) -> bool:
        sets = self.__dict__.setdefault("_sets", {})
        kind = type(value)
        if kind not in sets:
            literals = [_coerce(one, value) for one in self if one is not None]
            sets[kind] = None
            if not isinstance(value, float) and all(type(v) is kind for v in literals):
                try:
                    sets[kind] = frozenset(literals)
                except TypeError:
                    pass
        accepted = sets[kind]
        if accepted is not None:
            try:
                return value in accepted
            except TypeError:
                pass
        return any(value_matches("=", one, value) for one in self)


def stats_may_match(op: str, literal: Any, stats: ColumnStats, row_count: int) -> bool:
    """False only when ``stats`` prove that no row satisfies the predicate.

    FLOAT/DOUBLE bounds are not trusted to cover NaN: ORC bounds leave a NaN out (Paimon 2's
    and this writer's, ``stats._orc_float_stats``), and so do those of files written before
    this project followed Java. So a file may also hold a NaN unless the predicate is one that
    no NaN satisfies; a NaN lower bound (an all-NaN partition, or one an older writer got
    wrong) proves nothing.
    """
    if op == "is_null":
        return stats.null_count is None or stats.null_count > 0
    if op == "is_not_null":
        return stats.null_count is None or stats.null_count < row_count
    if op == "in":
        return literal is None or any(
            stats_may_match("=", one, stats, row_count) for one in literal if one is not None
        )
    low, high = stats.min, stats.max
    if literal is None or low is None or high is None:
        return True
    literal = _coerce(literal, low)
    if isinstance(low, float) and isinstance(literal, (int, float)):
        literal = float(literal)
        if math.isnan(low) or _nan_matches(op, literal):
            return True
        low_key, high_key, key = _spark_order(low), _spark_order(high), _spark_order(literal)
        return _bounds_may_match(op, key, low_key, high_key)
    return _bounds_may_match(op, literal, low, high)


def _bounds_may_match(op: str, literal: Any, low: Any, high: Any) -> bool:
    try:
        if op == "=":
            return low <= literal <= high
        if op == "!=":
            return not (low == high == literal)
        if op == "<":
            return low < literal
        if op == "<=":
            return low <= literal
        if op == ">":
            return high > literal
        return high >= literal
    except TypeError:
        return True


def validate_predicate(predicate: Iterable[Predicate], column_names: Collection[str]) -> None:
    for column, op, literal in predicate:
        if op not in OPERATORS:
            raise InvalidArgument(
                f"Unsupported predicate operator '{op}': expected one of {sorted(OPERATORS)}"
            )
        if column not in column_names:
            raise InvalidArgument(f"Predicate column '{column}' is not a column of the table")
        if op == "in" and (
            isinstance(literal, (str, bytes)) or not isinstance(literal, Collection)
        ):
            raise InvalidArgument(
                f"Predicate '{column} in' needs a list of literals, not {literal!r}"
            )


_INT_SLOTS = {
    root: struct.Struct(code)
    for root, code in (("TINYINT", "<b"), ("SMALLINT", "<h"), ("INT", "<i"), ("BIGINT", "<q"))
}
"""Integer types: their value is the integer in the first bytes of the slot, nothing else."""
_SLOT_OPS = {"=": "__eq__", "<": "__gt__", "<=": "__ge__", ">": "__lt__", ">=": "__le__"}
"""``value <op> literal`` as a method of the literal."""
_STRING_ROOTS = frozenset(("CHAR", "VARCHAR"))


def _int_check(
    code: struct.Struct, offset: int, test: Callable[[int], bool], partitions: list[bytes]
) -> Iterator[bool]:
    """``test`` of the integer in the slot at ``offset`` of each serialized partition (of
    one length), or True when they are too short to hold it (a searched read of a table
    with variable-size fields takes its size from a manifest's first record: a damaged one
    is the general way's to report)."""
    if partitions and len(partitions[0]) < offset + code.size:
        return repeat(True, len(partitions))
    return map(test, map(_FIRST, map(code.unpack_from, partitions, repeat(offset))))


def _string_check(
    offset: int, test: Callable[[bytes], bool], partitions: list[bytes]
) -> Iterator[bool]:
    """``test`` of the bytes of the string in the slot at ``offset`` of each serialized
    partition, or True: where they do not sit alike in all (``_slot_strings``), and for
    bytes not ASCII (a row's reader decodes bad UTF-8 with replacements, which do not
    compare as their bytes; ASCII and the literal's UTF-8 compare as their strings)."""
    strings = _slot_strings(partitions, offset)
    if strings is None:
        return repeat(True, len(partitions))
    return map(or_, map(test, strings), map(not_, map(bytes.isascii, strings)))


def _slot_strings(partitions: list[bytes], offset: int) -> list[bytes] | None:
    """The bytes of the string in the slot at ``offset`` of each serialized partition, at C
    speed, when they sit alike in all: all inline (7 bytes or fewer, in the slot) of one
    length, or all at one place of the variable part (one slot: strings of one length,
    as dates are); else None. The slot as ``binary_row._slot_bytes`` reads it."""
    if not partitions or len(set(map(len, partitions))) != 1:
        return None
    size = len(partitions[0])
    if offset + 8 > size:
        return None
    marks = set(map(itemgetter(offset + 7), partitions))
    if len(marks) != 1:
        return None
    (mark,) = marks
    if mark & 0x80:
        return list(map(itemgetter(slice(offset, offset + min(mark & 0x7F, 8))), partitions))
    slots = set(map(itemgetter(slice(offset, offset + 8)), partitions))
    if len(slots) != 1:
        return None
    slot = int.from_bytes(slots.pop(), "little")
    start = 4 + (slot >> 32)  # the arity first
    stop = start + (slot & 0xFFFFFFFF)
    if stop > size:
        return None
    return list(map(itemgetter(slice(start, stop)), partitions))


_FIRST = itemgetter(0)


class _StatsLayout:
    """Where a column's stats sit in files of one schema: index and type per field id."""

    def __init__(self, schema: TableSchema, stats_cols: tuple[str, ...] | None) -> None:
        fields = list(schema.fields)
        if stats_cols is not None:
            by_name = {f.name: f for f in fields}
            if not all(n in by_name for n in stats_cols):
                fields = []  # stats of columns the schema does not know: cannot decode them
            else:
                fields = [by_name[n] for n in stats_cols]
        self.types = [f.type for f in fields]
        self.index = {f.id: i for i, f in enumerate(fields)}


class TableScan:
    """Plans reads of one table (its schema and options as of the table handle)."""

    def __init__(self, table: FileStoreTable) -> None:
        self.table = table
        schema = table.schema
        self.partition_keys: list[str] = list(schema.partition_keys)
        self.partition_types = [f.type for f in schema.partition_fields]
        self._partition_codec = row_codec(self.partition_types)
        self._partitions: dict[bytes, tuple] = {}
        self._schemas: dict[int, TableSchema] = {schema.schema_id: schema}
        self._layouts: dict[tuple[int, tuple[str, ...] | None], _StatsLayout] = {}

    # ------------------------------------------------------------------------ entries

    def partition_values(self, partition: bytes) -> tuple:
        """The decoded partition row (cached: many files share few partitions)."""
        values = self._partitions.get(partition)
        if values is None:
            values = tuple(self._partition_codec.deserialize(partition))
            self._partitions[partition] = values
        return values

    def read_manifest_metas(
        self, manifest_list_names: Iterable[str | None]
    ) -> list[ManifestFileMeta]:
        """The manifests listed by the given manifest lists, in order (None names skipped)."""
        lists = self.table.manifest_list
        return [m for name in manifest_list_names if name for m in lists.read(name)]

    def read_all_entries(self, manifest_list_names: Iterable[str | None]) -> list[ManifestEntry]:
        """Every entry (ADD and DELETE, unfolded) of the manifests of the given lists."""
        read = self.table.manifest_file.read
        return [e for m in self.read_manifest_metas(manifest_list_names) for e in read(m.file_name)]

    def read_entries(
        self,
        snapshot: Snapshot,
        partition_filter: Mapping[str, Any] | None = None,
        *,
        predicate: Sequence[Predicate] | None = None,
        partitions: Collection[bytes] | None = None,
        lazy_files: bool = False,
    ) -> list[ManifestEntry]:
        """The live (ADD, not deleted) entries of ``snapshot``, partition-pruned.

        Args:
            snapshot: the snapshot whose base + delta manifest lists are folded.
            partition_filter: partition column -> value (None selects the null partition).
            predicate: conjunctive predicates; those on partition columns prune here.
            partitions: keep only these serialized partition rows.
            lazy_files: for a caller that does not look at the files: when no manifest
                deletes a file (nothing to fold by file), their fields are decoded on first
                use only.
        """
        part_preds = self._partition_predicates(partition_filter, predicate)
        metas = self.read_manifest_metas(
            (snapshot.base_manifest_list, snapshot.delta_manifest_list)
        )
        if part_preds:
            metas = [m for m in metas if self._manifest_may_match(m, part_preds)]
        keep = self._partition_keeper(part_preds, partitions)
        read = self.table.manifest_file.read
        deletes = any(m.num_deleted_files for m in metas)
        lazy = lazy_files and not deletes
        verdicts = PartitionVerdicts()
        size = self._partition_codec.exact_size
        size = None if size is None else 4 + size  # serialized: the arity first
        # Variable-size fields: each manifest is searched if its partitions are of one size.
        arity = self._partition_codec.arity if size is None else None
        chunks = [
            read(
                m.file_name,
                keep,
                lazy=lazy,
                verdicts=verdicts,
                partition_size=size,
                partition_arity=arity,
            )
            for m in metas
        ]
        add = FileKind.ADD
        if deletes:
            folded: dict[tuple, ManifestEntry] = {}
            for chunk in chunks:
                for entry in chunk:
                    key = entry.identifier
                    if entry.kind == FileKind.ADD:
                        folded[key] = entry
                    elif folded.pop(key, None) is None:
                        folded[key] = entry
            live = [e for e in folded.values() if e.kind == add]
        else:
            live = [e for chunk in chunks for e in chunk if e.kind == add]
        if partitions is not None:
            wanted = partitions if isinstance(partitions, (set, frozenset)) else set(partitions)
            live = [e for e in live if e.partition in wanted]
        if part_preds:
            verdict: dict[bytes, bool] = {}
            kept = []
            for e in live:
                ok = verdict.get(e.partition)
                if ok is None:
                    ok = verdict[e.partition] = self._partition_matches(e.partition, part_preds)
                if ok:
                    kept.append(e)
            live = kept
        return live

    def _partition_keeper(
        self, preds: list[tuple[int, str, Any]], partitions: Collection[bytes] | None
    ) -> Callable[[bytes], bool] | None:
        """Which serialized partitions the plan wants (None: all), decided once per partition,
        so that the manifests skip the entries of the others before decoding them."""
        if not preds and partitions is None:
            return None
        wanted = None if partitions is None else frozenset(partitions)
        verdicts: dict[bytes, bool] = {}

        def keep(partition: bytes) -> bool:
            ok = verdicts.get(partition)
            if ok is None:
                ok = (wanted is None or partition in wanted) and (
                    not preds or self._partition_matches(partition, preds)
                )
                verdicts[partition] = ok
            return ok

        necessary = self._slot_prefilter(preds)
        if necessary is not None:
            keep.necessary = necessary  # type: ignore[attr-defined]
        return keep

    def _slot_prefilter(
        self, preds: list[tuple[int, str, Any]]
    ) -> Callable[[list[bytes]], list[bool]] | None:
        """A condition that every partition ``preds`` keep meets, checked on many serialized
        partitions at once in C, so that a manifest's read decides with Python steps only
        the partitions that meet it, not each of the table's (``manifest._decode_by_heads``,
        which hands it partitions of one length): the integer in the slot of each integer
        column compared with an integer literal; the bytes of each string column compared
        with a string literal's UTF-8 (``_slot_strings``: when they sit alike in every
        partition). A null's slot may hold anything, whatever it answers there: these
        operators reject a null anyway."""
        width = self._partition_codec.width
        checks: list[Callable[[list[bytes]], Any]] = []
        for i, op, literal in preds:
            offset = 4 + width + 8 * i
            root = self.partition_types[i].root
            code = _INT_SLOTS.get(root)
            if code is not None:
                if op == "in" and all(type(v) is int or v is None for v in literal):
                    test: Callable[[Any], bool] = frozenset(
                        v for v in literal if v is not None
                    ).__contains__
                elif op in _SLOT_OPS and type(literal) is int:
                    test = getattr(literal, _SLOT_OPS[op])
                else:
                    continue
                checks.append(partial(_int_check, code, offset, test))
            elif root in _STRING_ROOTS:
                try:
                    if op == "in" and all(type(v) is str or v is None for v in literal):
                        test = frozenset(
                            v.encode("utf-8") for v in literal if v is not None
                        ).__contains__
                    elif op in _SLOT_OPS and type(literal) is str:
                        test = getattr(literal.encode("utf-8"), _SLOT_OPS[op])
                    else:
                        continue
                except UnicodeEncodeError:  # a lone surrogate: no bytes to compare with
                    continue
                checks.append(partial(_string_check, offset, test))
        if not checks:
            return None

        def necessary(partitions: list[bytes]) -> list[bool]:
            passed: Any = None
            for check in checks:
                ok = check(partitions)
                passed = ok if passed is None else map(and_, passed, ok)
            return list(passed)

        return necessary

    def _partition_predicates(
        self,
        partition_filter: Mapping[str, Any] | None,
        predicate: Sequence[Predicate] | None,
    ) -> list[tuple[int, str, Any]]:
        index = {k: i for i, k in enumerate(self.partition_keys)}
        preds: list[tuple[int, str, Any]] = []
        for name, value in (partition_filter or {}).items():
            if name not in index:
                raise InvalidArgument(f"'{name}' is not a partition column of the table")
            preds.append((index[name], "is_null" if value is None else "=", value))
        for column, op, literal in predicate or ():
            if column in index:
                preds.append((index[column], op, InLiterals(literal) if op == "in" else literal))
        return preds

    def _manifest_may_match(
        self, meta: ManifestFileMeta, preds: list[tuple[int, str, Any]]
    ) -> bool:
        stats = meta.partition_stats
        if not stats.min_values or len(stats.min_values) <= 4 + 8:
            return True  # no partition stats recorded (empty row)
        try:
            columns = decode_stats(stats, self.partition_types)
        except Exception:
            return True
        count = meta.num_added_files + meta.num_deleted_files
        return all(stats_may_match(op, lit, columns[i], count) for i, op, lit in preds)

    def _partition_matches(self, partition: bytes, preds: list[tuple[int, str, Any]]) -> bool:
        values = self.partition_values(partition)
        return all(value_matches(op, lit, values[i]) for i, op, lit in preds)

    # ---------------------------------------------------------------------- file stats

    def _schema(self, schema_id: int) -> TableSchema:
        schema = self._schemas.get(schema_id)
        if schema is None:
            schema = self.table.schema_manager.schema(schema_id)
            self._schemas[schema_id] = schema
        return schema

    def _layout(self, schema_id: int, stats_cols: tuple[str, ...] | None) -> _StatsLayout:
        key = (schema_id, stats_cols)
        layout = self._layouts.get(key)
        if layout is None:
            layout = self._layouts[key] = _StatsLayout(self._schema(schema_id), stats_cols)
        return layout

    def _file_filter(self, predicate: Sequence[Predicate]) -> Any:
        """A function ``DataFileMeta -> bool`` that is False when stats exclude the file:
        key stats for primary-key tables, value stats for append tables."""
        partition = set(self.partition_keys)
        preds = [p for p in predicate if p[0] not in partition]
        if not preds:
            return None
        if self.table.is_primary_key_table:
            return self._key_stats_filter(preds)
        return self._value_stats_filter(preds)

    def _key_stats_filter(self, preds: Sequence[Predicate]) -> Any:
        schema = self.table.schema
        keys = list(schema.trimmed_primary_keys)
        key_preds = [(keys.index(c), op, lit) for c, op, lit in preds if c in keys]
        if not key_preds:
            return None
        key_types = [schema.field(k).type for k in keys]

        def by_key_stats(f: DataFileMeta) -> bool:
            try:
                columns = decode_stats(f.key_stats, key_types)
            except Exception:
                return True
            return all(
                stats_may_match(op, lit, columns[i], f.row_count) for i, op, lit in key_preds
            )

        return by_key_stats

    def value_filter(self, predicate: Sequence[Predicate]) -> Callable[[DataFileMeta], bool] | None:
        """A function ``DataFileMeta -> bool``, False when the file's value stats exclude
        every row satisfying ``predicate`` (its partition conjuncts aside); None when no
        conjunct is left. On a primary-key table that speaks of the rows stored in the file,
        not of the merged rows (Java's ``KeyValueFileStoreScan.filterByValueFilter``)."""
        partition = set(self.partition_keys)
        preds = [p for p in predicate if p[0] not in partition]
        return self._value_stats_filter(preds) if preds else None

    def _value_stats_filter(self, preds: Sequence[Predicate]) -> Callable[[DataFileMeta], bool]:
        schema = self.table.schema
        ids = [(schema.field(c).id, op, lit) for c, op, lit in preds]
        current = {f.id: f.type.copy(True) for f in schema.fields}

        def by_value_stats(f: DataFileMeta) -> bool:
            cols = f.value_stats_cols
            if cols is not None and not cols:
                return True
            layout = self._layout(f.schema_id, cols)
            # Stats of a column whose type changed since the file was written order values
            # by the old type ('100' < '9' as strings): they cannot exclude the file.
            wanted = [
                (
                    i if i is not None and layout.types[i].copy(True) == current[fid] else None,
                    op,
                    lit,
                )
                for fid, op, lit in ids
                for i in (layout.index.get(fid),)
            ]
            if all(i is None for i, _, _ in wanted):
                return True
            try:
                columns = decode_stats(f.value_stats, layout.types)
            except Exception:
                return True
            return all(
                i is None or stats_may_match(op, lit, columns[i], f.row_count)
                for i, op, lit in wanted
            )

        return by_value_stats

    # ---------------------------------------------------------------------- file index

    def _index_filter(self, predicate: Sequence[Predicate], *, index_files: bool) -> Any:
        """A function ``ManifestEntry -> bool`` that is False when the file's index proves
        that no row matches (Java's ``FileIndexPredicate``): the index embedded in the
        manifest, and with ``index_files`` also a ``.index`` extra file (which Java reads
        when it opens the file, ``FileIndexEvaluator``; here the scan does, so that every
        reader skips it). None when ``file-index.read.enabled`` is off or no predicate is
        one an index answers.

        A predicate reaches a file's index under the file's name of its column (found by
        field id), and not at all when the column's type changed since the file was
        written. A ``.index`` file is read only when some predicate column is indexed by
        the table's options or by those of the file's schema.
        """
        options = self.table.options
        if not file_index_read_enabled(options):
            return None
        preds = [p for p in predicate if p[1] in OPERATORS]
        if not preds:
            return None
        schema = self.table.schema
        by_id = [
            (schema.field(c).id, schema.field(c).type.copy(True), op, lit) for c, op, lit in preds
        ]
        indexed_now = {f.id for f in schema.fields if f.name in index_columns(options)}
        devolved: dict[int, tuple[list[Predicate], dict[str, DataType], bool]] = {}

        def for_schema(schema_id: int) -> tuple[list[Predicate], dict[str, DataType], bool]:
            found = devolved.get(schema_id)
            if found is None:
                file_schema = self._schema(schema_id)
                fields = {f.id: f for f in file_schema.fields}
                indexed_then = index_columns(file_schema.options)
                mapped: list[Predicate] = []
                types: dict[str, DataType] = {}
                look = False
                for fid, t, op, lit in by_id:
                    f = fields.get(fid)
                    if f is not None and f.type.copy(True) == t:
                        mapped.append((f.name, op, lit))
                        types[f.name] = f.type
                        look = look or fid in indexed_now or f.name in indexed_then
                found = devolved[schema_id] = (mapped, types, look)
            return found

        def may_match(e: ManifestEntry) -> bool:
            f = e.file
            if f.embedded_index is None and not (index_files and f.extra_files):
                return True
            mapped, types, look_in_files = for_schema(f.schema_id)
            if not mapped:
                return True
            if f.embedded_index is not None:
                source = BytesSource(f.embedded_index)
                return evaluate(source, f.file_name, types, mapped).remain()
            names = [x for x in f.extra_files if x.endswith(INDEX_PATH_SUFFIX)]
            if not names or not look_in_files:
                return True
            if len(names) > 1:
                raise MetadataFormatError(
                    "Found more than one index file for one data file: " + " and ".join(names)
                )
            path = self._extra_file_path(e, names[0])
            with self.table.file_io.open_input(path) as stream:
                return evaluate(StreamSource(stream), path, types, mapped).remain()

        return may_match

    def _extra_file_path(self, e: ManifestEntry, name: str) -> str:
        """An extra file sits beside its data file (external paths too)."""
        f = e.file
        if f.external_path:
            return f"{f.external_path.rsplit('/', 1)[0]}/{name}"
        parts = [self.table.path.rstrip("/")]
        if self.partition_keys:
            parts.append(
                partition_path(
                    self.partition_keys,
                    self.partition_values(e.partition),
                    self.partition_types,
                    self.table.options.partition_default_name,
                )
            )
        parts += [bucket_dir_name(e.bucket), name]
        return "/".join(parts)

    def _value_filter(
        self, entries: list[ManifestEntry], predicate: Sequence[Predicate]
    ) -> list[ManifestEntry]:
        """Value predicates beyond stats: the file index of append files, Java's whole-bucket
        value filter for primary-key tables."""
        partition = set(self.partition_keys)
        preds = [p for p in predicate if p[0] not in partition]
        if not preds:
            return entries
        if self.table.is_primary_key_table:
            return self._whole_bucket_filter(entries, preds)
        keep = self._index_filter(preds, index_files=True)
        return entries if keep is None else self._filter_by_index(entries, keep)

    def _filter_by_index(
        self, entries: list[ManifestEntry], keep: Callable[[ManifestEntry], bool]
    ) -> list[ManifestEntry]:
        """``entries`` whose index may match; ``.index`` files are read in parallel."""
        with_files = sum(1 for e in entries if e.file.embedded_index is None and e.file.extra_files)
        if with_files < 8:
            return [e for e in entries if keep(e)]
        with ThreadPoolExecutor(_PARALLEL_INDEX_READS) as pool:
            verdicts = list(pool.map(keep, entries))
        return [e for e, ok in zip(entries, verdicts) if ok]

    def _whole_bucket_filter(
        self, entries: list[ManifestEntry], predicate: Sequence[Predicate]
    ) -> list[ManifestEntry]:
        """Java's ``KeyValueFileStoreScan`` value filter of a batch scan (whole buckets):
        a file's value stats, and for deletion-vector tables its embedded index, decide.
        A bucket whose files do not overlap (one level above 0) keeps the files that may
        match; any other keeps all its files when one may match, and all of them anyway for
        partial-update and aggregation tables whose reads merge (without deletion vectors,
        or with ``deletion-vectors.merge-on-read``: their rows merge into values no single
        file holds; Java 2.0 still drops such a bucket under merge-on-read, losing rows)."""
        stats = self._value_stats_filter(predicate)
        options = self.table.options
        index = (
            self._index_filter(predicate, index_files=False)
            if options.deletion_vectors_enabled
            else None
        )
        if stats is None and index is None:
            return entries

        def may_match(e: ManifestEntry) -> bool:
            return (stats is None or stats(e.file)) and (index is None or index(e))

        merging = not self.skips_level0 and options.merge_engine in (
            "partial-update",
            "aggregation",
        )
        buckets: dict[tuple[bytes, int], list[ManifestEntry]] = {}
        for e in entries:
            buckets.setdefault((e.partition, e.bucket), []).append(e)
        out: list[ManifestEntry] = []
        for group in buckets.values():
            levels = {e.file.level for e in group}
            if len(group) <= 1 or (len(levels) == 1 and 0 not in levels):
                out.extend(e for e in group if may_match(e))
            elif merging or any(may_match(e) for e in group):
                out.extend(group)
        return out

    # -------------------------------------------------------------------------- plan

    @property
    def skips_level0(self) -> bool:
        """Java's ``batchScanSkipLevel0``: first-row tables and primary-key tables with
        deletion vectors are compacted (with lookup) after every commit, and a batch read
        leaves their level-0 files, not yet deduplicated, unread; unless
        ``deletion-vectors.merge-on-read`` (Paimon 2.0) has them merged in."""
        options = self.table.options
        if not self.table.is_primary_key_table:
            return False
        if options.deletion_vectors_enabled:
            return not options.deletion_vectors_merge_on_read
        return options.merge_engine == "first-row"

    @property
    def data_evolution(self) -> bool:
        """An append table with ``data-evolution.enabled``: files are pruned by partition
        only (``operations.data_evolution``)."""
        return not self.table.is_primary_key_table and data_evolution_enabled(self.table.options)

    @property
    def only_real_buckets(self) -> bool:
        """Java's ``onlyReadRealBuckets`` of batch scans of postpone-bucket tables
        (``bucket`` = -2): files still in ``bucket-postpone`` are not read until a compaction
        moves them into a real bucket."""
        return self.table.options.bucket == POSTPONE_BUCKET

    def batch_entries(self, entries: list[ManifestEntry]) -> list[ManifestEntry]:
        """``entries`` as a batch read sees them: without ``bucket-postpone`` files
        (``only_real_buckets``)."""
        if self.only_real_buckets:
            return [e for e in entries if e.bucket >= 0]
        return entries

    def check_readable(self) -> None:
        """Refuse to read a table with a feature this reader lacks (``features``: data
        evolution, BLOB columns, ...).

        Raises:
            UnsupportedFeature: naming the option or column type.
        """
        self.table.check_supported(Access.READ)

    def check_files(self, files: Iterable[DataFileMeta]) -> None:
        """Refuse to read ``files`` whose manifest fields need a feature the table does not
        declare (``features.check_files``: ``_WRITE_COLS``, ``_FIRST_ROW_ID``).

        Raises:
            UnsupportedFeature: naming the file and the field.
        """
        check_files(files, self.table.options, self.table.identifier or self.table.path)

    def plan_partitions(
        self,
        snapshot: Snapshot,
        predicate: Sequence[Predicate] | None = None,
        partition_filter: Mapping[str, Any] | None = None,
    ) -> set[bytes]:
        """The partitions a batch read of ``snapshot`` has files in, by ``partition_filter``
        and the partition predicates of ``predicate`` only (Java's ``listPartitions`` of a
        batch scan).

        Raises:
            UnsupportedFeature: a table feature this reader lacks (``check_readable``).
        """
        self.check_readable()
        entries = self.read_entries(
            snapshot, partition_filter, predicate=predicate, lazy_files=not self.skips_level0
        )
        entries = self.batch_entries(entries)
        if self.skips_level0:
            return {e.partition for e in entries if e.file.level != 0}
        return {e.partition for e in entries}

    def plan(
        self,
        snapshot: Snapshot | None = None,
        partition_filter: Mapping[str, Any] | None = None,
        predicate: Sequence[Predicate] | None = None,
        *,
        all_levels: bool = False,
    ) -> list[Split]:
        """Splits of ``snapshot`` (default: the time-travel options, else the latest).

        Args:
            snapshot: the snapshot to read; None resolves ``scan.*`` options, else latest.
            partition_filter: partition column -> value, exact.
            predicate: conjunctive ``(column, op, literal)``; prunes files whose stats cannot
                match (rows are not filtered).
            all_levels: level-0 files of first-row and deletion-vector tables too (Java's
                ``SnapshotReader``, which rewrites read: their rows merge in), not only what
                a batch query reads.

        Returns:
            One split per (partition, bucket) with live files; [] for an empty table.

        Raises:
            UnsupportedFeature: a table feature this reader lacks, or files that need one
                (``check_readable``, ``check_files``).
        """
        self.check_readable()
        predicate = list(predicate or ())
        validate_predicate(predicate, {f.name for f in self.table.schema.fields})
        if snapshot is None:
            snapshot = resolve_snapshot(self.table)
            if snapshot is None:
                return []
        # One pause of the cyclic collector for the whole plan: re-enabled after each manifest
        # it would trace every entry built so far (they hold no cycles) again and again.
        with gc_paused():
            # A data-evolution file holds some columns of its rows: its stats and index speak
            # of its copy of them, which a newer file of its row-id range may replace.
            by_file = predicate and not self.data_evolution
            keep = self._file_filter(predicate) if by_file else None
            skip_level0 = not all_levels and self.skips_level0
            entries = self.read_entries(
                snapshot,
                partition_filter,
                predicate=predicate,
                lazy_files=keep is None and not skip_level0,
            )
            if keep is not None:
                entries = [e for e in entries if keep(e.file)]
            if skip_level0:
                entries = [e for e in entries if e.file.level != 0]
            entries = self.batch_entries(entries)
            self.check_files(e.file for e in entries)
            if by_file:
                entries = self._value_filter(entries, predicate)
            groups: defaultdict[tuple[bytes, int], list[DataFileMeta]] = defaultdict(list)
            for e in entries:
                groups[e.partition, e.bucket].append(e.file)
            sid = snapshot.snapshot_id
            values = self.partition_values
            splits = [
                Split(part, values(part), bucket, tuple(files), sid)
                for (part, bucket), files in sorted(groups.items())  # keys are unique
            ]
        if self.table.options.deletion_vectors_enabled and splits:
            splits = self._with_deletion_files(snapshot, splits)
        return splits

    def _with_deletion_files(self, snapshot: Snapshot, splits: list[Split]) -> list[Split]:
        """``splits`` with the deletion vectors ``snapshot`` has for their files."""
        index = snapshot_deletion_files(self.table, snapshot)
        if not index:
            return splits
        out = []
        for split in splits:
            bucket = index.get((split.partition, split.bucket))
            if bucket:
                found = tuple(bucket[f.file_name] for f in split.files if f.file_name in bucket)
                split = replace(split, deletion_files=found)
            out.append(split)
        return out

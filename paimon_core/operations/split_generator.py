"""Java's ``MergeTreeSplitGenerator.splitForBatch``: how Paimon cuts the files of one bucket of
a primary-key table into splits, and which of those splits it reads file by file, unmerged
(``rawConvertible``).

The scan here plans one split per bucket and merges what needs merging; this module only
answers Paimon's question where its answer changes what a statement may do: DELETE on a
table whose merge engine cannot delete by retraction reads files with their
``__paimon_file_path``, which only raw-convertible splits have (Paimon-Spark's
``PaimonRowLevelCommand.findTouchedFiles``).

As Java (latest Paimon):

* every file is above level 0 and has no retraction (``withoutDeleteRow``: a
  ``_DELETE_ROW_COUNT`` of 0, or unknown as in old files), and the table has deletion vectors,
  is ``first-row``, or all files are on one level: the files are packed in order into splits
  of ``source.split.target-size`` (each weighing at least ``source.split.open-file-cost``),
  all raw-convertible;
* otherwise the files are cut into sections of overlapping key ranges (``IntervalPartition``),
  the sections packed in order the same way, and a split is raw-convertible only when it
  holds one file without retractions.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from paimon_core.format.binary_row import deserialize_row
from paimon_core.format.float_order import order_key

if TYPE_CHECKING:
    from paimon_core.format.manifest import DataFileMeta
    from paimon_core.format.types import DataType
    from paimon_core.table import FileStoreTable

__all__ = ["SplitGroup", "interval_partition", "split_for_batch", "table_split_groups"]

TARGET_SIZE = "source.split.target-size"
OPEN_FILE_COST = "source.split.open-file-cost"
DEFAULT_TARGET_SIZE = 128 * 2**20
DEFAULT_OPEN_FILE_COST = 4 * 2**20


@dataclass(frozen=True, slots=True)
class SplitGroup:
    """The files of one of Paimon's splits (Java's ``SplitGroup``)."""

    files: tuple[DataFileMeta, ...]
    raw_convertible: bool


KeyOrder = Callable[[bytes], tuple[Any, ...]]
"""A file's min or max key (BinaryRow bytes) as a value that sorts as Java compares keys."""


def key_order(key_types: Sequence[DataType]) -> KeyOrder:
    """Java's ``RecordComparator`` of a key: field by field, NULL first, strings and binaries
    by their (UTF-8) bytes, FLOAT/DOUBLE as ``Float.compare``/``Double.compare``."""
    types = list(key_types)

    def order(key: bytes) -> tuple[Any, ...]:
        return tuple(_field_order(v) for v in deserialize_row(key, types))

    return order


def _field_order(value: Any) -> tuple[int, Any]:
    if value is None:
        return (0, 0)
    if isinstance(value, float):
        return (1, order_key(value))
    if isinstance(value, (bool, int, Decimal, str, bytes, dt.date, dt.datetime, dt.time)):
        return (1, value)
    return (1, repr(value))


def _without_delete_row(f: DataFileMeta) -> bool:
    return f.delete_row_count is None or f.delete_row_count == 0


def interval_partition(
    files: Sequence[DataFileMeta], order: KeyOrder
) -> list[list[list[DataFileMeta]]]:
    """Java's ``IntervalPartition.partition``: sections whose key ranges do not overlap, each
    as sorted runs (files of a run do not overlap either)."""
    ordered = sorted(files, key=lambda f: (order(f.min_key), order(f.max_key)))
    sections: list[list[list[DataFileMeta]]] = []
    section: list[DataFileMeta] = []
    bound: tuple[Any, ...] | None = None
    for meta in ordered:
        low = order(meta.min_key)
        if section and bound is not None and low > bound:
            sections.append(_runs(section, order))
            section, bound = [], None
        section.append(meta)
        high = order(meta.max_key)
        if bound is None or high > bound:
            bound = high
    if section:
        sections.append(_runs(section, order))
    return sections


def _runs(metas: list[DataFileMeta], order: KeyOrder) -> list[list[DataFileMeta]]:
    """A section's files as sorted runs: each file joins the run whose last file ends
    first, if it starts after that end, else starts a run (Java's priority queue)."""
    runs: list[list[DataFileMeta]] = [[metas[0]]]
    for meta in metas[1:]:
        top = min(range(len(runs)), key=lambda i: order(runs[i][-1].max_key))
        if order(meta.min_key) > order(runs[top][-1].max_key):
            runs[top].append(meta)
        else:
            runs.append([meta])
    return runs


def _pack_ordered(
    items: Sequence[Sequence[DataFileMeta]], open_file_cost: int, target: int
) -> list[list[DataFileMeta]]:
    """Java's ``BinPacking.packForOrdered`` of file lists, flattened per bin."""
    packed: list[list[DataFileMeta]] = []
    current: list[DataFileMeta] = []
    weight = 0
    started = False
    for item in items:
        w = max(sum(f.file_size for f in item), open_file_cost)
        if weight + w > target and started:
            packed.append(current)
            current, weight, started = [], 0, False
        weight += w
        current.extend(item)
        started = True
    if started:
        packed.append(current)
    return packed


def split_for_batch(
    files: Sequence[DataFileMeta],
    order: KeyOrder,
    *,
    deletion_vectors: bool,
    first_row: bool,
    target_size: int = DEFAULT_TARGET_SIZE,
    open_file_cost: int = DEFAULT_OPEN_FILE_COST,
) -> list[SplitGroup]:
    """The splits of one bucket's ``files`` (see the module docstring)."""
    if not files:
        return []
    raw = all(f.level != 0 and _without_delete_row(f) for f in files)
    one_level = len({f.level for f in files}) == 1
    if raw and (deletion_vectors or first_row or one_level):
        bins = _pack_ordered([[f] for f in files], open_file_cost, target_size)
        return [SplitGroup(tuple(b), True) for b in bins]
    sections = [[f for run in section for f in run] for section in interval_partition(files, order)]
    bins = _pack_ordered(sections, open_file_cost, target_size)
    return [SplitGroup(tuple(b), len(b) == 1 and _without_delete_row(b[0])) for b in bins]


def table_split_groups(table: FileStoreTable, files: Sequence[DataFileMeta]) -> list[SplitGroup]:
    """``split_for_batch`` of one bucket of ``table`` with its options."""
    options = table.options
    schema = table.schema
    keys = schema.trimmed_primary_keys
    return split_for_batch(
        files,
        key_order([schema.field(k).type for k in keys]),
        deletion_vectors=options.deletion_vectors_enabled,
        first_row=options.merge_engine == "first-row",
        target_size=options.get_memory_size(TARGET_SIZE, DEFAULT_TARGET_SIZE) or 0,
        open_file_cost=options.get_memory_size(OPEN_FILE_COST, DEFAULT_OPEN_FILE_COST) or 0,
    )

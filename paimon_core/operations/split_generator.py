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
    from paimon_core.format.schema import TableSchema
    from paimon_core.format.types import DataType
    from paimon_core.table import FileStoreTable

__all__ = [
    "SplitGroup",
    "interval_partition",
    "interval_partition_indices",
    "merge_sections",
    "split_for_batch",
    "table_key_order",
    "table_split_groups",
]

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
    as sorted runs (files of a run do not overlap either), in Java's order."""
    return [
        [[files[i] for i in run] for run in section]
        for section in interval_partition_indices(files, order)
    ]


def interval_partition_indices(
    files: Sequence[DataFileMeta], order: KeyOrder
) -> list[list[list[int]]]:
    """``interval_partition`` as indices into ``files``.

    As Java: the files sorted (stably) by min key, then max key; a section ends where a file
    starts after every key before it; a section's runs are built with a
    ``java.util.PriorityQueue`` of runs by the max key of their last file (each file joins the
    polled run if it starts after that run's end, else starts a run offered before the polled
    one goes back), and come out in the queue's array order, which is the order Java's merge
    reads them in (its loser tree breaks ties by that position)."""
    bounds = [(order(f.min_key), order(f.max_key)) for f in files]
    ordered = sorted(range(len(files)), key=lambda i: bounds[i])
    sections: list[list[list[int]]] = []
    section: list[int] = []
    bound: tuple[Any, ...] | None = None
    for i in ordered:
        low, high = bounds[i]
        if section and bound is not None and low > bound:
            sections.append(_runs(section, bounds))
            section, bound = [], None
        section.append(i)
        if bound is None or high > bound:
            bound = high
    if section:
        sections.append(_runs(section, bounds))
    return sections


def _runs(section: list[int], bounds: Sequence[tuple[Any, Any]]) -> list[list[int]]:
    """A section's files as sorted runs, in the array order of Java's priority queue."""
    queue = _JavaPriorityQueue(lambda run: bounds[run[-1]][1])
    queue.offer([section[0]])
    for i in section[1:]:
        top = queue.poll()
        if bounds[i][0] > bounds[top[-1]][1]:
            top.append(i)
        else:
            queue.offer([i])
        queue.offer(top)
    return queue.items


class _JavaPriorityQueue:
    """``java.util.PriorityQueue``'s binary heap (``siftUp``/``siftDown``), so that equal
    elements end up where Java puts them; ``items`` is its array order (``stream()``)."""

    def __init__(self, key: Callable[[list[int]], Any]) -> None:
        self.items: list[list[int]] = []
        self.key = key

    def offer(self, item: list[int]) -> None:
        items, key = self.items, self.key
        items.append(item)
        k = len(items) - 1
        while k > 0:
            parent = (k - 1) >> 1
            if key(item) >= key(items[parent]):
                break
            items[k] = items[parent]
            k = parent
        items[k] = item

    def poll(self) -> list[int]:
        items, key = self.items, self.key
        result = items[0]
        last = items.pop()
        n = len(items)
        if n:
            k, half = 0, n >> 1
            while k < half:
                child = 2 * k + 1
                if child + 1 < n and key(items[child]) > key(items[child + 1]):
                    child += 1
                if key(last) <= key(items[child]):
                    break
                items[k] = items[child]
                k = child
            items[k] = last
        return result


def merge_sections(
    files: Sequence[DataFileMeta], order: KeyOrder, *, split: bool
) -> list[list[list[int]]]:
    """How Java's merge reads ``files``: sections of sorted runs (one reader each, in reader
    order) as indices into ``files``. ``split``: the files of a batch read, which Java's split
    generator first put in its own order (``interval_partition`` flattened: sections, runs,
    files) before the reader partitions them again (``MergeFileSplitRead``); otherwise a
    compaction unit's files, partitioned once (``MergeTreeCompactTask``)."""
    if not split:
        return interval_partition_indices(files, order)
    first = [i for section in interval_partition_indices(files, order) for r in section for i in r]
    again = interval_partition_indices([files[i] for i in first], order)
    return [[[first[i] for i in run] for run in section] for section in again]


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


def table_key_order(schema: TableSchema) -> KeyOrder:
    """``key_order`` of the keys in a table's data files (its trimmed primary keys)."""
    return key_order([schema.field(k).type for k in schema.trimmed_primary_keys])


def table_split_groups(table: FileStoreTable, files: Sequence[DataFileMeta]) -> list[SplitGroup]:
    """``split_for_batch`` of one bucket of ``table`` with its options."""
    options = table.options
    return split_for_batch(
        files,
        table_key_order(table.schema),
        deletion_vectors=options.deletion_vectors_enabled,
        first_row=options.merge_engine == "first-row",
        target_size=options.get_memory_size(TARGET_SIZE, DEFAULT_TARGET_SIZE) or 0,
        open_file_cost=options.get_memory_size(OPEN_FILE_COST, DEFAULT_OPEN_FILE_COST) or 0,
    )

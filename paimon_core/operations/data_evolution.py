"""Data evolution (``data-evolution.enabled``): files of some columns of shared row-id ranges.

An append table with row tracking and data evolution stores a row's columns in several
files: every file covers a row-id range (``_FIRST_ROW_ID`` .. ``_FIRST_ROW_ID`` +
``_ROW_COUNT`` - 1) and holds the columns its ``_WRITE_COLS`` name (all of its schema's when
null). A row-id range is written whole first (an INSERT), then column by column (an UPDATE
writes a file of the updated columns over the same range). Java reads it as
``DataEvolutionSplitRead`` (Paimon 2.0/2.1):

* the files are grouped by overlapping row-id ranges (``RangeHelper.mergeOverlappingRanges``:
  groups by range start, files in a group in manifest order);
* the files of a group must all cover the same range; they are taken newest first (by
  ``_MAX_SEQUENCE_NUMBER``, stable), and each column comes from the first file that wrote it
  (found by field id through the file's schema, projected to ``_WRITE_COLS``); a column no
  file wrote reads as null;
* deletion vectors belong to the group's *anchor*, its oldest file (least
  ``_MAX_SEQUENCE_NUMBER``, then file name: ``DataEvolutionUtils.retrieveAnchorFile``), and
  delete rows by their position in the range.

``_WRITE_COLS_SEQUENCES`` (Paimon 2.1, ``DataFileMeta.columnMaxSequenceNumbers``) only tells
a global-index refresh which columns changed; reads ignore it, as Java's do.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from paimon_core.exceptions import DataFileUnreadable

if TYPE_CHECKING:
    from paimon_core.format.manifest import DataFileMeta
    from paimon_core.format.schema import TableSchema
    from paimon_core.format.types import DataField

DATA_EVOLUTION = "data-evolution.enabled"


def data_evolution_enabled(options: Mapping[str, str]) -> bool:
    """Whether the options turn data evolution on."""
    return (options.get(DATA_EVOLUTION) or "").strip().lower() == "true"


def row_id_range(meta: DataFileMeta) -> tuple[int, int]:
    """``(first, last)`` row id of a file (Java's ``nonNullRowIdRange``, inclusive).

    Raises:
        DataFileUnreadable: the file has no ``_FIRST_ROW_ID``.
    """
    if meta.first_row_id is None:
        raise DataFileUnreadable(
            f"Data file {meta.file_name} of a data-evolution table has no row ids "
            "(_FIRST_ROW_ID is null)"
        )
    return meta.first_row_id, meta.first_row_id + meta.row_count - 1


def row_id_groups(files: Sequence[DataFileMeta]) -> list[list[DataFileMeta]]:
    """``files`` in groups of overlapping row-id ranges, by range start; each group's files
    in their order in ``files`` (Java's ``RangeHelper.mergeOverlappingRanges``)."""
    if not files:
        return []
    indexed = sorted(range(len(files)), key=lambda i: row_id_range(files[i]))
    groups: list[list[int]] = []
    end = None
    for i in indexed:
        start, last = row_id_range(files[i])
        if end is None or start > end:
            groups.append([i])
            end = last
        else:
            groups[-1].append(i)
            end = max(end, last)
    return [[files[i] for i in sorted(group)] for group in groups]


def newest_first(group: Sequence[DataFileMeta]) -> list[DataFileMeta]:
    """A group's files by ``_MAX_SEQUENCE_NUMBER`` descending (stable), after checking that
    they all cover one row-id range (``DataEvolutionSplitRead.mergeRangesAndSort``).

    Raises:
        DataFileUnreadable: files of the group cover different ranges.
    """
    ranges = {row_id_range(f) for f in group}
    if len(ranges) > 1:
        names = ", ".join(f"{f.file_name} {list(row_id_range(f))}" for f in group)
        raise DataFileUnreadable(
            f"Data files of overlapping row-id ranges must cover the same range: {names}"
        )
    return sorted(group, key=lambda f: -f.max_sequence_number)


def anchor_file(group: Sequence[DataFileMeta]) -> DataFileMeta:
    """The file a group's deletion vector is keyed by: the oldest (least
    ``_MAX_SEQUENCE_NUMBER``, then file name; ``DataEvolutionUtils.retrieveAnchorFile``)."""
    return min(group, key=lambda f: (f.max_sequence_number, f.file_name))


def file_fields(schema: TableSchema, meta: DataFileMeta) -> list[DataField]:
    """The columns a file holds: its schema's, those named by ``_WRITE_COLS`` (in that order,
    names that are no column of the schema, such as a stored ``_ROW_ID``, left out) when set
    (Java's ``DataEvolutionUtils.fileFields``)."""
    if meta.write_cols is None:
        return list(schema.fields)
    by_name = {f.name: f for f in schema.fields}
    return [by_name[n] for n in meta.write_cols if n in by_name]


def column_sources(
    files: Sequence[DataFileMeta],
    fields: Sequence[DataField],
    schema_of: Callable[[int], TableSchema],
) -> list[tuple[DataFileMeta, list[DataField]]]:
    """For files of one group newest first, which of ``fields`` (current columns) each
    file gives: a column from the first file holding its field id. Files giving none are
    left out; a field no file holds is in no list."""
    taken: set[int] = set()
    out: list[tuple[DataFileMeta, list[DataField]]] = []
    for meta in files:
        ids = {f.id for f in file_fields(schema_of(meta.schema_id), meta)}
        mine = [f for f in fields if f.id in ids and f.id not in taken]
        if mine:
            taken.update(f.id for f in mine)
            out.append((meta, mine))
    return out

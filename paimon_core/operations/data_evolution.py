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

A BLOB column lives in ``.blob`` files (``format.blob_file``) of that one column, which cover
contiguous sub-ranges of their group's range (a writer rolls them at
``blob.target-file-size``): they join the group by overlap, take no part in the same-range
check or the choice of the anchor, and a column's ``.blob`` files, by first row id, must
cover the group's range (Java's ``BlobFileBunch``). A file written later for part of the range
(a greater ``_MAX_SEQUENCE_NUMBER``) gives the values of its rows but where its index says
*placeholder* (-2): there, and where it does not reach, the next older file's value holds,
null where no file has one (Java's ``BlobFallbackRecordReader``).

``_WRITE_COLS_SEQUENCES`` (Paimon 2.1, ``DataFileMeta.columnMaxSequenceNumbers``) only tells
a global-index refresh which columns changed; reads ignore it, as Java's do.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import pairwise
from typing import TYPE_CHECKING

from paimon_core.exceptions import DataFileUnreadable
from paimon_core.format.blob_file import is_blob_file

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
    """A group's files but ``.blob`` files by ``_MAX_SEQUENCE_NUMBER`` descending (stable),
    after checking that they all cover one row-id range
    (``DataEvolutionSplitRead.mergeRangesAndSort``).

    Raises:
        DataFileUnreadable: files of the group cover different ranges.
    """
    group = [f for f in group if not is_blob_file(f.file_name)]
    ranges = {row_id_range(f) for f in group}
    if len(ranges) > 1:
        names = ", ".join(f"{f.file_name} {list(row_id_range(f))}" for f in group)
        raise DataFileUnreadable(
            f"Data files of overlapping row-id ranges must cover the same range: {names}"
        )
    return sorted(group, key=lambda f: -f.max_sequence_number)


def anchor_file(group: Sequence[DataFileMeta]) -> DataFileMeta:
    """The file a group's deletion vector is keyed by: the oldest (least
    ``_MAX_SEQUENCE_NUMBER``, then file name; ``DataEvolutionUtils.retrieveAnchorFile``)
    that is no ``.blob`` file.

    Raises:
        DataFileUnreadable: the group has only ``.blob`` files.
    """
    normal = [f for f in group if not is_blob_file(f.file_name)]
    if not normal:
        names = [f.file_name for f in group]
        raise DataFileUnreadable(f"Row-id range of only blob files has no data file: {names}")
    return min(normal, key=lambda f: (f.max_sequence_number, f.file_name))


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


def blob_bunches(
    group: Sequence[DataFileMeta], schema_of: Callable[[int], TableSchema]
) -> dict[int, list[DataFileMeta]]:
    """The ``.blob`` files of a group by the field id of their column, each column's newest
    first (``_MAX_SEQUENCE_NUMBER`` descending, then by first row id), checked as Java's
    ``BlobFileBunch`` and ``BlobFallbackRecordReader`` check them: together they cover the
    group's range without a gap, and files of one sequence number do not overlap.

    Raises:
        DataFileUnreadable: a file holds more than one column, or a column's files leave a
            gap, miss the range of the group's other files, or overlap within one
            sequence number.
    """
    normal = newest_first(group)
    bunches: dict[int, list[DataFileMeta]] = {}
    for meta in group:
        if not is_blob_file(meta.file_name):
            continue
        fields = file_fields(schema_of(meta.schema_id), meta)
        if len(fields) != 1:
            raise DataFileUnreadable(
                f"Blob file {meta.file_name} must hold one column, not {meta.write_cols}"
            )
        bunches.setdefault(fields[0].id, []).append(meta)
    for files in bunches.values():
        files.sort(key=lambda f: (-f.max_sequence_number, row_id_range(f)[0]))
        names = [f.file_name for f in files]
        for a, b in pairwise(files):
            if a.max_sequence_number == b.max_sequence_number and (
                row_id_range(b)[0] <= row_id_range(a)[1]
            ):
                raise DataFileUnreadable(
                    f"Blob files {a.file_name} and {b.file_name} of one sequence number overlap"
                )
        spans = sorted(row_id_range(f) for f in files)
        first, end = spans[0][0], spans[0][1]
        for start, last in spans[1:]:
            if start > end + 1:
                raise DataFileUnreadable(f"Blob files {names} leave a gap in their row-id range")
            end = max(end, last)
        if normal and (first, end) != row_id_range(normal[0]):
            raise DataFileUnreadable(
                f"Blob files {names} cover row ids {[first, end]}, not the row-id range of "
                f"{normal[0].file_name} {list(row_id_range(normal[0]))}"
            )
    return bunches

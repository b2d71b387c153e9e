"""Row tracking (``row-tracking.enabled``): the commit side, Paimon 2.1's
``RowTrackingCommitUtils``.

Every row of a row-tracking table has a ``_ROW_ID``, unique in the table, and a
``_SEQUENCE_NUMBER``, the snapshot that last wrote it. A commit gives them out without
touching the data:

* ``assign_row_tracking`` replaces the writers' sequence numbers of the files it adds
  (``assignSnapshotId``): a file whose ``min_sequence_number`` is 0 (new rows) gets the new
  snapshot id as both bounds; one whose ``max_sequence_number`` is 0 (rows rewritten with a
  physical ``_SEQUENCE_NUMBER`` column, some of them null: updated rows) gets it as its max;
  any other keeps its own (a compaction's, or a rolled file after the first of one writer,
  as Java's writer numbers them).
* It then gives each added file of source APPEND without a ``_FIRST_ROW_ID`` and without a
  physical ``_ROW_ID`` column (``_WRITE_COLS``) the next ids, in commit order (grouped by
  partition, first seen first, when ``row-tracking.partition-group-on-commit``, the
  default), from the latest snapshot's ``nextRowId`` (0 when absent), which advances by
  their row counts; the new snapshot's ``nextRowId`` is where it ended.

Reads then take a row's ``_ROW_ID`` from its file's physical ``_ROW_ID`` column where that
is not null, else ``_FIRST_ROW_ID`` + the row's position in the file; ``_SEQUENCE_NUMBER``
likewise from the physical column, else the file's ``max_sequence_number``
(``operations.read``).

BLOB files (``.blob``) and vector-store files (``.vector.``) of data evolution share the
ids of the row file written just before them, as in Java.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from paimon_core.exceptions import CorruptMetadata
from paimon_core.format.manifest import FileKind, ManifestEntry

ROW_ID = "_ROW_ID"
"""The row id system column (Java ``SpecialFields.ROW_ID``: BIGINT NOT NULL)."""
ROW_ID_FIELD_ID = 2**31 - 1 - 5
"""Its field id (``Integer.MAX_VALUE - 5``), the Parquet field id of a physical column."""
SEQUENCE_NUMBER = "_SEQUENCE_NUMBER"
"""The sequence number system column (``SpecialFields.SEQUENCE_NUMBER``)."""
SEQUENCE_NUMBER_FIELD_ID = 2**31 - 1 - 1
ROW_TRACKING_COLUMNS = (ROW_ID, SEQUENCE_NUMBER)

FILE_SOURCE_APPEND = 0
FILE_SOURCE_COMPACT = 1
ENABLED = "row-tracking.enabled"
PARTITION_GROUP_ON_COMMIT = "row-tracking.partition-group-on-commit"


def row_tracking_enabled(options: Mapping[str, str]) -> bool:
    """Whether ``row-tracking.enabled`` is true in ``options`` (a table's, dynamic on top)."""
    return (options.get(ENABLED) or "").strip().lower() == "true"


def _group_on_commit(options: Mapping[str, str]) -> bool:
    return (options.get(PARTITION_GROUP_ON_COMMIT) or "true").strip().lower() != "false"


@dataclass(frozen=True, slots=True)
class RowTrackingAssigned:
    """What ``assign_row_tracking`` made of a commit's entries."""

    entries: tuple[ManifestEntry, ...]
    """The entries, added files with their sequence numbers and first row ids assigned."""
    next_row_id: int
    """The new snapshot's ``nextRowId``."""


def _is_blob_file(name: str) -> bool:
    return name.endswith(".blob")


def _is_vector_store_file(name: str) -> bool:
    return ".vector." in name


def has_physical_row_id(write_cols: Sequence[str] | None) -> bool:
    """Whether a file of these ``_WRITE_COLS`` stores a ``_ROW_ID`` column of its own."""
    return write_cols is not None and ROW_ID in write_cols


def assign_row_tracking(
    snapshot_id: int,
    next_row_id: int | None,
    entries: Sequence[ManifestEntry],
    options: Mapping[str, str],
) -> RowTrackingAssigned:
    """The row-tracking metadata of a commit that will publish ``snapshot_id`` on top of a
    snapshot whose ``nextRowId`` is ``next_row_id`` (None or no snapshot: 0); see the module
    docstring for the rules. Only ADD entries change (a DELETE names a live file as it is).

    ``next_row_id`` of the result never falls below the end of an added file's id range
    (a file that came with ids: a copy, a branch merge), so later appends cannot reuse them.

    Args:
        snapshot_id: the id the commit publishes.
        next_row_id: the latest snapshot's ``nextRowId``.
        entries: the commit's data entries, in commit order.
        options: the table's options (``row-tracking.partition-group-on-commit``).

    Raises:
        CorruptMetadata: an added file has no file source, or a BLOB/vector-store file
            has no row file before it in the commit.
    """
    start = next_row_id or 0
    ordered = list(entries)
    if _group_on_commit(options):
        by_partition: dict[bytes, list[ManifestEntry]] = {}
        for e in ordered:
            by_partition.setdefault(e.partition, []).append(e)
        ordered = [e for group in by_partition.values() for e in group]
    result: list[ManifestEntry] = []
    blob_default = start
    blob_starts: dict[str, int] = {}
    vector_start = start
    covered = start
    for e in ordered:
        if e.kind != FileKind.ADD:
            result.append(e)
            continue
        f = e.file
        if f.min_sequence_number == 0:
            f = dataclasses.replace(
                f, min_sequence_number=snapshot_id, max_sequence_number=snapshot_id
            )
        elif f.max_sequence_number == 0:
            f = dataclasses.replace(f, max_sequence_number=snapshot_id)
        if f.file_source is None:
            raise CorruptMetadata(
                f"Data file {f.file_name} of a row-tracking table has no file source"
            )
        if (
            f.file_source == FILE_SOURCE_APPEND
            and f.first_row_id is None
            and not has_physical_row_id(f.write_cols)
        ):
            if _is_blob_file(f.file_name):
                column = (f.write_cols or ("",))[0]
                first = blob_starts.get(column, blob_default)
                if first >= start:
                    raise CorruptMetadata(
                        f"BLOB file {f.file_name} has no row file before it in the commit"
                    )
                blob_starts[column] = first + f.row_count
            elif _is_vector_store_file(f.file_name):
                first = vector_start
                if first >= start:
                    raise CorruptMetadata(
                        f"Vector-store file {f.file_name} has no row file before it in the commit"
                    )
                vector_start += f.row_count
            else:
                first = start
                blob_default = start
                blob_starts.clear()
                start += f.row_count
            f = dataclasses.replace(f, first_row_id=first)
        elif f.first_row_id is not None:
            covered = max(covered, f.first_row_id + f.row_count)
        result.append(e if f is e.file else dataclasses.replace(e, file=f))
    return RowTrackingAssigned(tuple(result), max(start, covered))

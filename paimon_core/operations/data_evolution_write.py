"""Writing data-evolution tables: files of some columns over existing row-id ranges.

What Paimon-Spark's data-evolution UPDATE and MERGE INTO write (``DataEvolutionPaimonWriter``,
``DataEvolutionTableDataWrite``) and pypaimon's ``update_by_arrow_with_row_id``: for every
row-id range holding an updated row, one file of the updated columns over the whole range,
its other rows' current values copied (``operations.data_evolution`` reads the newest file
of a range first). New rows are whole-row files, written and given row ids as any append
(``operations.row_tracking``).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from paimon_core.exceptions import InvalidArgument
from paimon_core.format.commit_message import CommitMessage
from paimon_core.format.data_files import check_fields, write_data_file, write_format
from paimon_core.format.manifest import EMPTY_ROW, EMPTY_STATS, DataFileMeta
from paimon_core.format.stats import (
    FooterStats,
    collect_stats,
    dense_value_stats,
    value_stats_modes,
)
from paimon_core.format.types import to_arrow_schema
from paimon_core.operations.data_evolution import (
    data_evolution_enabled,
    row_id_groups,
    row_id_range,
)
from paimon_core.operations.read import data_file_path
from paimon_core.operations.row_tracking import ROW_ID
from paimon_core.operations.write import local_millis_as_utc

if TYPE_CHECKING:
    from paimon_core.format.types import DataField
    from paimon_core.operations.scan import Split
    from paimon_core.table import FileStoreTable


def range_of(split: Split, first_row_id: int) -> list[DataFileMeta]:
    """The files of ``split`` whose row-id range starts at ``first_row_id`` (one group)."""
    for group in row_id_groups(split.files):
        if row_id_range(group[0])[0] == first_row_id:
            return group
    raise InvalidArgument(f"No row-id range starts at {first_row_id}")


def write_columns_file(
    table: FileStoreTable,
    split: Split,
    first_row_id: int,
    columns: Sequence[str],
    data: pa.Table,
) -> DataFileMeta:
    """Write ``data`` (every row of the row-id range starting at ``first_row_id``, in row-id
    order, ``columns`` of the table) as one file of those columns alone, as Paimon-Spark's
    data-evolution UPDATE / MERGE INTO writes (``DataEvolutionTableDataWrite``): its
    ``_WRITE_COLS`` are ``columns`` in table order, its ``_FIRST_ROW_ID`` the range's, its
    sequence numbers 0 (the commit gives it its snapshot id, so that it is the newest of its
    range) and its source APPEND.

    Raises:
        InvalidArgument: ``data`` does not have exactly the range's rows, a column is no column
            of the table or a partition column, or a NOT NULL column gets a null.
    """
    group = range_of(split, first_row_id)
    first, last = row_id_range(group[0])
    if data.num_rows != last - first + 1:
        raise InvalidArgument(
            f"Rows {first}..{last} are {last - first + 1} rows, {data.num_rows} given"
        )
    fields = update_fields(table, columns)
    file_fields = list(fields)
    arrow = to_arrow_schema(file_fields)
    arrays = []
    for f, target in zip(file_fields, arrow):
        column = data.column(f.name)
        if column.type != target.type:
            column = column.cast(target.type)
        if not f.type.nullable and column.null_count:
            raise InvalidArgument(f"Cannot write null to non-null column '{f.name}'")
        arrays.append(column)
    rows = pa.Table.from_arrays(arrays, schema=arrow)
    options = table.options
    file_format = write_format(options, False, level=0)
    check_fields(file_format, file_fields)
    name = f"{options.data_file_prefix}{uuid.uuid4()}-0{file_format.suffix}"
    path = data_file_path(table, split.partition_values, split.bucket, name)
    footers: list[Any] = []
    size = write_data_file(table.file_io, path, rows, file_fields, file_format, footers)
    footer = FooterStats(footers[0]) if footers else None
    modes = value_stats_modes(options, [f.name for f in file_fields])
    value_stats, stats_cols = dense_value_stats(
        collect_stats(rows, file_fields, modes, file_format.name, footer),
        file_fields,
        options.stats_dense_store,
    )
    return DataFileMeta(
        file_name=name,
        file_size=size,
        row_count=rows.num_rows,
        min_key=EMPTY_ROW,
        max_key=EMPTY_ROW,
        key_stats=EMPTY_STATS,
        value_stats=value_stats,
        min_sequence_number=0,
        max_sequence_number=0,
        schema_id=table.schema.schema_id,
        level=0,
        creation_time_millis=local_millis_as_utc(),
        delete_row_count=0,
        file_source=0,
        value_stats_cols=stats_cols,
        first_row_id=first,
        write_cols=tuple(f.name for f in file_fields),
    )


def update_fields(table: FileStoreTable, columns: Sequence[str]) -> list[DataField]:
    """The fields of ``columns`` in table order.

    Raises:
        InvalidArgument: no columns, a name that is no column, or a partition column.
    """
    by_name = {f.name: f for f in table.schema.fields}
    unknown = [c for c in columns if c not in by_name]
    if unknown or not columns:
        raise InvalidArgument(f"Columns {list(columns)} to update: {unknown} are no columns")
    partition = [c for c in columns if c in set(table.schema.partition_keys)]
    if partition:
        raise InvalidArgument(f"Cannot update partition columns {partition} by row id")
    wanted = set(columns)
    return [f for f in table.schema.fields if f.name in wanted]


def update_by_row_id(table: FileStoreTable, updates: pa.Table) -> list[CommitMessage]:
    """Commit messages setting some columns of some rows, by ``_ROW_ID`` (pypaimon's
    ``update_by_arrow_with_row_id``): ``updates`` holds ``_ROW_ID`` and the columns to set.
    Each row-id range holding an updated row gets one file of those columns over the whole
    range (its other rows keep their current values: ``write_columns_file``); nothing is
    written for the others. Rows a deletion vector deleted keep theirs too (they stay deleted).

    Raises:
        InvalidArgument: not a data-evolution table, a row id that is no row of the latest
            snapshot or given twice, or bad columns.
    """
    if table.is_primary_key_table or not data_evolution_enabled(table.options):
        raise InvalidArgument(
            f"Table {table.identifier or table.path} has no 'data-evolution.enabled' = 'true'"
        )
    if ROW_ID not in updates.column_names:
        raise InvalidArgument("Updates by row id need a _ROW_ID column")
    columns = [c for c in updates.column_names if c != ROW_ID]
    fields = update_fields(table, columns)
    ids = updates.column(ROW_ID).to_numpy()
    if len(np.unique(ids)) != len(ids):
        raise InvalidArgument("A _ROW_ID is given twice")
    snapshot = table.latest_snapshot()
    splits = [] if snapshot is None else table.new_scan().plan(snapshot)
    ranges = sorted(
        (row_id_range(g[0]), split) for split in splits for g in row_id_groups(split.files)
    )
    starts = np.array([r[0][0] for r in ranges], dtype=np.int64)
    slot = np.searchsorted(starts, ids, side="right") - 1
    bad = [
        int(i) for i, s in zip(ids, slot) if s < 0 or not ranges[s][0][0] <= i <= ranges[s][0][1]
    ]
    if bad:
        raise InvalidArgument(f"Row ids {bad[:5]} are no rows of the table")
    read = table.new_read()
    total = table.new_write().total_buckets
    messages = []
    for s in np.unique(slot):
        (first, last), split = ranges[s]
        group = range_of(split, first)
        current = read.read_range(replace(split, deletion_files=()), group, fields, ())
        mine = updates.filter(pa.array(slot == s)).select(columns)
        positions = ids[slot == s] - first
        index = np.arange(last - first + 1)
        index[positions] = current.num_rows + np.arange(len(positions))
        merged = pa.concat_tables([current, mine.cast(current.schema)]).take(pa.array(index))
        meta = write_columns_file(table, split, first, columns, merged)
        messages.append(CommitMessage(split.partition, split.bucket, total, new_files=(meta,)))
    return messages

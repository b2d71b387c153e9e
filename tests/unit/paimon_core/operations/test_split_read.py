"""SplitRead: row kinds and kept retractions, raw reads with file positions, deltas, diffs."""

from __future__ import annotations

import dataclasses

import pyarrow as pa
import pytest

from paimon_core.exceptions import UnsupportedFeature
from paimon_core.operations.split_read import (
    DELETE,
    FILE_PATH,
    INSERT,
    ROW_INDEX,
    IncrementalSplit,
    SplitRead,
    raw_convertible,
)
from paimon_core.table import FileStoreTable
from tests.unit.paimon_core.helpers import KVD_SCHEMA, kvd_batch, kvd_table

_DELETE = pa.array([DELETE], pa.int8())


def _rows(data: pa.Table) -> list[tuple]:
    return sorted(tuple(r.values()) for r in data.to_pylist())


@pytest.fixture
def pk(warehouse: str) -> FileStoreTable:
    """Primary key (k, dt), one bucket: keys 1, 2; then 1 again; then 2 deleted."""
    table = kvd_table(warehouse, primary_keys=["k", "dt"], options={"bucket": "1"})
    table.write_arrow(kvd_batch([1, 2]))
    table.write_arrow(pa.table({"k": [1], "v": ["new"], "dt": ["a"]}, schema=KVD_SCHEMA))
    table.write_arrow(kvd_batch([2]), row_kinds=_DELETE)
    return table


def test_merged_rows_with_row_kinds_and_kept_retractions(pk: FileStoreTable) -> None:
    (split,) = pk.new_scan().plan()
    plain = SplitRead(pk).read(split)
    assert plain.column_names == ["k", "v", "dt", "_VALUE_KIND"]
    assert _rows(plain) == [(1, "new", "a", INSERT)]
    kept = SplitRead(pk, keep_delete=True).read(split, ["v"])
    assert kept.column_names == ["v", "_VALUE_KIND"]
    assert _rows(kept) == [("new", INSERT), ("v2", DELETE)]
    numbered = SplitRead(pk, keep_delete=True, sequence_number=True).read(split, ["k"])
    assert numbered.column_names == ["k", "_SEQUENCE_NUMBER", "_VALUE_KIND"]
    assert _rows(numbered) == [(1, 2, INSERT), (2, 3, DELETE)]


def test_file_positions_of_append_files(warehouse: str) -> None:
    table = kvd_table(warehouse)
    table.write_arrow(kvd_batch([5, 6, 7]))
    (split,) = table.new_scan().plan()
    data = SplitRead(table).read(split, ["k"], file_meta=True)
    assert data.column_names == ["k", "_VALUE_KIND", FILE_PATH, ROW_INDEX]
    assert data.column(ROW_INDEX).to_pylist() == [0, 1, 2]
    (path,) = set(data.column(FILE_PATH).to_pylist())
    assert path.startswith(table.path + "/dt=a/bucket-0/data-") and path.endswith(".parquet")
    with pytest.raises(UnsupportedFeature, match="only valid for primary key tables"):
        SplitRead(table, sequence_number=True)


def test_raw_convertible_follows_paimons_split_generator(pk: FileStoreTable) -> None:
    (split,) = pk.new_scan().plan()
    assert not raw_convertible(split)  # three level-0 files
    first = min(split.files, key=lambda f: f.min_sequence_number)
    clean = dataclasses.replace(first, delete_row_count=0)
    assert raw_convertible(dataclasses.replace(split, files=(clean,)))
    unknown = dataclasses.replace(first, delete_row_count=None)  # legacy: may hold deletes
    assert not raw_convertible(dataclasses.replace(split, files=(unknown,)))
    up = [dataclasses.replace(f, level=3, delete_row_count=0) for f in split.files]
    assert raw_convertible(dataclasses.replace(split, files=tuple(up)))
    mixed = [up[0], dataclasses.replace(up[1], level=4)]
    assert not raw_convertible(dataclasses.replace(split, files=tuple(mixed)))
    with pytest.raises(UnsupportedFeature, match="FileRecordIterator"):
        SplitRead(pk).read(split, file_meta=True)
    with pytest.raises(UnsupportedFeature, match="FileRecordIterator"):
        SplitRead(pk, keep_delete=True).read(
            dataclasses.replace(split, files=(clean,)), file_meta=True
        )
    rows = SplitRead(pk).read(dataclasses.replace(split, files=(clean,)), file_meta=True)
    assert rows.column(ROW_INDEX).to_pylist() == [0, 1]
    assert set(rows.column(FILE_PATH).to_pylist()) == {f"{pk.path}/dt=a/bucket-0/{clean.file_name}"}


def _incremental(split: object, before: tuple, after: tuple, streaming: bool) -> IncrementalSplit:
    return IncrementalSplit(
        split.partition,
        split.partition_values,
        split.bucket,
        before,
        after,
        3,
        streaming,  # type: ignore[attr-defined]
    )


def test_delta_reads_files_as_they_are_deletes_included(pk: FileStoreTable) -> None:
    (split,) = pk.new_scan().plan()
    files = tuple(sorted(split.files, key=lambda f: f.min_sequence_number))
    delta = _incremental(split, (), files[1:], streaming=True)
    expected = [(1, "new", "a", INSERT), (2, "v2", "a", DELETE)]
    assert _rows(SplitRead(pk).read(delta)) == expected  # Paimon's no-merge reader
    assert _rows(SplitRead(pk, keep_delete=True).read(delta)) == expected
    (row,) = (
        SplitRead(pk).read(_incremental(split, (), files[2:], True), file_meta=True).to_pylist()
    )
    assert row[ROW_INDEX] == 0


def test_diff_of_two_states_of_a_bucket(pk: FileStoreTable) -> None:
    (split,) = pk.new_scan().plan()
    first, second, third = sorted(split.files, key=lambda f: f.min_sequence_number)
    # start: {1: v1, 2: v2}; end: {1: new} (2 deleted) -> 1 changed; 2 gone (-D when kept).
    diff = _incremental(split, (first,), (first, second, third), streaming=False)
    assert _rows(SplitRead(pk).read(diff)) == [(1, "new", "a", INSERT)]
    assert _rows(SplitRead(pk, keep_delete=True).read(diff)) == [
        (1, "new", "a", INSERT),
        (2, "v2", "a", DELETE),
    ]
    # A key deleted at the end without a retraction kept: the start's row comes out as -D.
    only_first = _incremental(split, (first,), (), streaming=False)
    assert _rows(SplitRead(pk).read(only_first)) == []
    assert _rows(SplitRead(pk, keep_delete=True).read(only_first, ["k"])) == [
        (1, DELETE),
        (2, DELETE),
    ]
    # Equal rows on both sides are no change.
    same = _incremental(split, (first,), (first,), streaming=False)
    assert SplitRead(pk, keep_delete=True).read(same).num_rows == 0
    with pytest.raises(UnsupportedFeature, match="FileRecordIterator"):
        SplitRead(pk).read(diff, file_meta=True)


def test_diff_compares_every_column(warehouse: str) -> None:
    table = kvd_table(warehouse, primary_keys=["k", "dt"], options={"bucket": "1"})
    table.write_arrow(kvd_batch([1, 2, 3]))
    table.write_arrow(pa.table({"k": [1, 2], "v": ["v1", None], "dt": ["a", "a"]}, KVD_SCHEMA))
    (split,) = table.new_scan().plan()
    first, second = sorted(split.files, key=lambda f: f.min_sequence_number)
    diff = _incremental(split, (first,), (first, second), streaming=False)
    # Key 1 was rewritten with the same value: no change. Key 2 became null.
    assert _rows(SplitRead(table).read(diff, ["k", "v"])) == [(2, None, INSERT)]

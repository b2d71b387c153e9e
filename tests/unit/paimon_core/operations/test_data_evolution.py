"""Row-id ranges of data-evolution tables (``operations.data_evolution``): grouping as Java's
``RangeHelper``, newest-first order, anchors, which file gives each column."""

from __future__ import annotations

import dataclasses

import pytest

from paimon_core.exceptions import DataFileUnreadable
from paimon_core.format.manifest import EMPTY_ROW, EMPTY_STATS, DataFileMeta
from paimon_core.format.schema import new_table_schema
from paimon_core.format.types import BIGINT, BLOB, INT, STRING
from paimon_core.operations.data_evolution import (
    anchor_file,
    blob_bunches,
    column_sources,
    file_fields,
    newest_first,
    row_id_groups,
)

SCHEMA = new_table_schema([("id", BIGINT()), ("v", STRING()), ("w", INT())])


def _file(name: str, first: int | None, rows: int, seq: int, cols: tuple[str, ...] | None = None) -> DataFileMeta:  # fmt: skip
    return DataFileMeta(name, 1, rows, EMPTY_ROW, EMPTY_ROW, EMPTY_STATS, EMPTY_STATS, seq, seq, 0, 0, first_row_id=first, write_cols=cols)  # fmt: skip


def test_groups_overlapping_ranges_by_start_keeping_the_given_order_inside() -> None:
    a = _file("a", 0, 3, 1)
    b = _file("b", 3, 2, 2)
    c = _file("c", 0, 3, 3, ("v",))
    d = _file("d", 5, 1, 4)
    e = _file("e", 3, 2, 5, ("w",))
    groups = row_id_groups([e, d, c, b, a])
    assert [[f.file_name for f in g] for g in groups] == [["c", "a"], ["e", "b"], ["d"]]
    assert row_id_groups([]) == []


def test_newest_first_is_stable_and_refuses_ranges_that_differ() -> None:
    a, b, c = _file("a", 0, 3, 1), _file("b", 0, 3, 5, ("v",)), _file("c", 0, 3, 5, ("w",))
    assert [f.file_name for f in newest_first([a, b, c])] == ["b", "c", "a"]
    assert [f.file_name for f in newest_first([a, c, b])] == ["c", "b", "a"]
    with pytest.raises(DataFileUnreadable, match="must cover the same range"):
        newest_first([a, _file("x", 1, 3, 2, ("v",))])
    with pytest.raises(DataFileUnreadable, match="has no row ids"):
        row_id_groups([_file("y", None, 3, 1)])


def test_anchor_is_the_oldest_file_then_the_least_name() -> None:
    files = [_file("b", 0, 3, 1), _file("a", 0, 3, 1, ("v",)), _file("c", 0, 3, 0, ("w",))]
    assert anchor_file(files).file_name == "c"
    assert anchor_file(files[:2]).file_name == "a"


def test_each_column_from_the_first_file_holding_it_by_field_id() -> None:
    renamed = dataclasses.replace(
        SCHEMA,
        schema_id=1,
        fields=tuple(dataclasses.replace(f, name="v2") if f.name == "v" else f for f in SCHEMA.fields),
    )  # fmt: skip
    schemas = {0: SCHEMA, 1: renamed}
    newest = dataclasses.replace(_file("n", 0, 3, 3, ("v2", "_ROW_ID")), schema_id=1)
    middle = _file("m", 0, 3, 2, ("w", "v"))
    oldest = _file("o", 0, 3, 1)
    assert [f.name for f in file_fields(renamed, newest)] == ["v2"]
    assert [f.name for f in file_fields(SCHEMA, middle)] == ["w", "v"]
    current = list(renamed.fields)
    sources = column_sources([newest, middle, oldest], current, schemas.__getitem__)
    assert [(m.file_name, [f.name for f in fs]) for m, fs in sources] == [
        ("n", ["v2"]),
        ("m", ["w"]),
        ("o", ["id"]),
    ]


BLOBS = new_table_schema([("id", BIGINT()), ("b", BLOB()), ("c", BLOB())])


def _blob(name: str, first: int, rows: int, seq: int, col: str = "b") -> DataFileMeta:
    return _file(f"{name}.blob", first, rows, seq, (col,))


def test_blob_files_join_their_group_but_not_the_range_check_or_the_anchor() -> None:
    data = _file("d.parquet", 0, 5, 1, ("id",))
    blobs = [_blob("b1", 0, 2, 1), _blob("b2", 2, 3, 1), _blob("c1", 0, 5, 1, "c")]
    (group,) = row_id_groups([data, *blobs])
    assert newest_first(group) == [data] and anchor_file(group) is data
    bunches = blob_bunches(group, lambda _: BLOBS)
    assert {k: [f.file_name for f in v] for k, v in bunches.items()} == {
        1: ["b1.blob", "b2.blob"],
        2: ["c1.blob"],
    }
    with pytest.raises(DataFileUnreadable, match="no data file"):
        anchor_file(blobs)


def test_blob_bunches_newest_first_and_checked() -> None:
    data = _file("d.parquet", 0, 5, 1, ("id",))
    update = _blob("u", 1, 3, 7)
    bunch = blob_bunches(
        [data, _blob("b1", 0, 2, 1), update, _blob("b2", 2, 3, 2)], lambda _: BLOBS
    )
    assert [f.file_name for f in bunch[1]] == ["u.blob", "b2.blob", "b1.blob"]
    for files, error in (
        ([_blob("b1", 0, 2, 1), _blob("b2", 3, 2, 1)], "gap"),
        ([_blob("b1", 0, 3, 1), _blob("b2", 2, 3, 1)], "overlap"),
        ([_blob("b1", 0, 4, 1)], "not the row-id range"),
    ):
        with pytest.raises(DataFileUnreadable, match=error):
            blob_bunches([data, *files], lambda _: BLOBS)

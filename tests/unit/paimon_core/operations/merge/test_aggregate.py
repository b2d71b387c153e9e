"""aggregation: per-column functions, primary keys kept, +I result with the last sequence,
remove-record-on-delete; the sketch, rbm64 and nested functions through a table."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import MergeError
from paimon_core.format.roaring_bitmap64 import RoaringBitmap64
from paimon_core.format.sketches import (
    hll_estimate,
    hll_sketch_of,
    theta_estimate,
    theta_sketch_of,
    theta_union_bytes,
)
from paimon_core.operations.compact import compact_table
from paimon_core.operations.merge.factory import key_value_merge
from paimon_core.table import FileStoreTable
from tests.unit.paimon_core.operations.merge.helpers import kv_rows, shown, table_schema

SCHEMA = pa.schema([pa.field("k", pa.int32(), False), ("n", pa.int64()), ("v", pa.string())])


def test_columns_aggregate_and_default_to_last_non_null() -> None:
    options = {"merge-engine": "aggregation", "fields.n.aggregate-function": "sum"}
    merge = key_value_merge(table_schema(SCHEMA, options))
    rows = kv_rows(SCHEMA, [{"k": 1, "n": 2, "v": "a"}, {"k": 1, "n": 3}, {"k": 1, "n": 1}],
                   ["+I", "+I", "-U"], sequences=[4, 7, 9])  # fmt: skip
    merged = merge.merge(rows)
    assert shown(merged) == [(1, 4, "a", 0)]
    assert merged.column("_SEQUENCE_NUMBER").to_pylist() == [9]


def test_default_aggregate_function() -> None:
    options = {"merge-engine": "aggregation", "fields.default-aggregate-function": "max"}
    merge = key_value_merge(table_schema(SCHEMA, options))
    rows = kv_rows(SCHEMA, [{"k": 1, "n": 2, "v": "b"}, {"k": 1, "n": 1, "v": "c"}])
    assert shown(merge.merge(rows)) == [(1, 2, "c", 0)]


def test_remove_record_on_delete() -> None:
    options = {"merge-engine": "aggregation", "fields.n.aggregate-function": "sum",
               "aggregation.remove-record-on-delete": "true"}  # fmt: skip
    merge = key_value_merge(table_schema(SCHEMA, options))
    rows = kv_rows(
        SCHEMA,
        [{"k": 1, "n": 2}, {"k": 1, "n": 2}, {"k": 2, "n": 5}, {"k": 2, "n": 5},
         {"k": 2, "n": 1}, {"k": 3, "n": 1}, {"k": 3, "n": 1}],
        ["+I", "-D", "+I", "-D", "+I", "+I", "-U"],
    )  # fmt: skip
    # k=1 deleted; k=2 restarts from the deleted values (Paimon 1.x); k=3 retracts as usual.
    assert shown(merge.merge(rows)) == [(1, 2, None, 3), (2, 6, None, 0), (3, 0, None, 0)]


# --------------------------------------- theta/hll/rbm64/keytime/nested partial, in a table

ROW = pa.struct([("v", pa.string()), ("ts", pa.string())])
NESTED = pa.list_(pa.struct([("id", pa.int32()), ("a", pa.int32()), ("b", pa.string())]))
NEW_SCHEMA = pa.schema(
    [pa.field("k", pa.int32(), False), ("th", pa.binary()), ("hl", pa.binary()),
     ("rb", pa.binary()), ("mm", pa.map_(pa.string(), ROW)), ("np", NESTED)]
)  # fmt: skip
NEW_OPTIONS = {
    "bucket": "1",
    "merge-engine": "aggregation",
    "fields.th.aggregate-function": "theta_sketch",
    "fields.hl.aggregate-function": "hll_sketch",
    "fields.rb.aggregate-function": "rbm64",
    "fields.mm.aggregate-function": "merge_map_with_keytime",
    "fields.np.aggregate-function": "nested_partial_update",
    "fields.np.nested-key": "id",
}
WRITES = [
    ([1, 2], [("a", {"v": "x", "ts": "1"})], [{"id": 1, "a": 1, "b": None}]),
    ([2, 3, 1 << 40], [("a", {"v": "old", "ts": "0"}), ("b", {"v": "z", "ts": "2"})],
     [{"id": 1, "a": None, "b": "B"}, {"id": 2, "a": 5, "b": None}]),
    ([-7], [("b", None)], [{"id": 2, "a": None, "b": "C"}]),
]  # fmt: skip


def _new_batch(values: list[int], entries: list, rows: list, k: int = 1) -> pa.Table:
    return pa.table(
        {"k": [k], "th": [theta_sketch_of(values)], "hl": [hll_sketch_of(values)],
         "rb": [RoaringBitmap64.bitmap_of(values).serialize()], "mm": [entries], "np": [rows]},
        schema=NEW_SCHEMA,
    )  # fmt: skip


def _new_table(warehouse: str, name: str = "t", **options: str) -> FileStoreTable:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    return catalog.create_table(
        f"db.{name}", NEW_SCHEMA, primary_keys=["k"], options={**NEW_OPTIONS, **options}
    )


def test_sketch_bitmap_and_nested_functions_through_a_table(warehouse: str) -> None:
    table = _new_table(warehouse)
    for values, entries, rows in WRITES:
        table.write_arrow(_new_batch(values, entries, rows))
    table.write_arrow(_new_batch([9], [], [], k=2))
    got = {r["k"]: r for r in table.to_arrow().to_pylist()}
    one = got[1]
    assert theta_estimate(one["th"]) == 5.0 and hll_estimate(one["hl"]) == pytest.approx(5)
    assert list(RoaringBitmap64.deserialize(one["rb"])) == [1, 2, 3, 1 << 40, -7]
    # The read folds the three files' records in sequence order, as Java's merge does.
    batches = [_new_batch(*w).to_pylist()[0] for w in WRITES]
    expected_rb = batches[0]["rb"]
    for b in batches[1:]:
        expected_rb = (
            RoaringBitmap64.deserialize(expected_rb)
            .or_(RoaringBitmap64.deserialize(b["rb"]))
            .serialize()
        )
    assert one["rb"] == expected_rb
    assert one["th"] == theta_union_bytes(
        theta_union_bytes(batches[0]["th"], batches[1]["th"]), batches[2]["th"]
    )
    assert one["mm"] == [("a", {"v": "x", "ts": "1"})]
    assert one["np"] == [{"id": 1, "a": 1, "b": "B"}, {"id": 2, "a": 5, "b": "C"}]
    assert got[2]["th"] == theta_sketch_of([9]) and got[2]["mm"] == []


def test_retracting_fails_the_read_unless_ignored(warehouse: str) -> None:
    ignore = {f"fields.{f}.ignore-retract": "true" for f in ("th", "hl", "rb", "mm", "np")}
    for name, options in (("strict", {}), ("ignoring", ignore)):
        table = _new_table(warehouse, name, **options)
        table.write_arrow(_new_batch(*WRITES[0]))
        table.write_arrow(_new_batch(*WRITES[1]), row_kinds=pa.array([1], pa.int8()))  # -U
        if name == "strict":
            with pytest.raises(MergeError, match="'theta_sketch' does not support retraction"):
                table.to_arrow()
        else:
            assert table.to_arrow().to_pylist() == _new_batch(*WRITES[0]).to_pylist()


def test_nested_update_options_through_a_table(warehouse: str) -> None:
    """``fields.<f>.nested-key``, ``nested-sequence-field`` and ``count-limit`` read from the
    table's options, on reads and on a full compaction (the bulk fold) alike."""
    element = pa.struct([("id", pa.int32()), ("v", pa.string()), ("ts", pa.int64())])
    schema = pa.schema([pa.field("k", pa.int32(), False), ("items", pa.list_(element))])
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    table = catalog.create_table(
        "db.nested",
        schema,
        primary_keys=["k"],
        options={
            "bucket": "1",
            "merge-engine": "aggregation",
            "fields.items.aggregate-function": "nested_update",
            "fields.items.nested-key": "id",
            "fields.items.nested-sequence-field": "ts",
            "fields.items.count-limit": "2",
        },
    )
    for items in (
        [{"id": 1, "v": "a", "ts": 5}, None],
        [{"id": 1, "v": "stale", "ts": 4}, {"id": 2, "v": "b", "ts": 1}],
        [{"id": 3, "v": "over the limit", "ts": 9}, {"id": 2, "v": "b2", "ts": 1}],
    ):
        table.write_arrow(pa.table({"k": [1], "items": [items]}, schema=schema))
    expected = [{"k": 1, "items": [{"id": 1, "v": "a", "ts": 5}, {"id": 2, "v": "b2", "ts": 1}]}]
    assert table.to_arrow().to_pylist() == expected
    compact_table(table, full=True)
    assert FileStoreTable.load(table.path).to_arrow().to_pylist() == expected


def test_an_overflowing_sum_fails_naming_the_field(warehouse: str) -> None:
    """The latest Paimon fails an INT sum that overflows (Paimon 0.9 wrapped around): the
    read of two commits fails naming the field, and a write whose buffer overflows commits
    nothing."""
    schema = pa.schema([pa.field("k", pa.int32(), False), ("n", pa.int32())])
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    table = catalog.create_table(
        "db.sums",
        schema,
        primary_keys=["k"],
        options={"bucket": "1", "merge-engine": "aggregation", "fields.n.aggregate-function": "sum",
                 "write-only": "true"},
    )  # fmt: skip
    table.write_arrow(pa.table({"k": [1], "n": [2**31 - 1]}, schema=schema))
    table.write_arrow(pa.table({"k": [1], "n": [1]}, schema=schema))
    message = r"^int overflow: 2147483647 \+ 1 \(aggregate function 'sum' of field 'n'\)$"
    with pytest.raises(MergeError, match=message):
        table.to_arrow()
    before = sorted(p.name for p in Path(table.path).rglob("*"))
    with pytest.raises(MergeError, match=message):
        table.write_arrow(pa.table({"k": [2, 2], "n": [2**31 - 1, 1]}, schema=schema))
    assert sorted(p.name for p in Path(table.path).rglob("*")) == before

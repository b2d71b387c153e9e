"""``key_value_merge``: every engine from a table's options, and the property Paimon's LSM tree
relies on: merging the records of a key in pieces (a writer's buffer, one file per commit, a
compaction of some files) and then merging the pieces gives what merging them all at once
gives, for every engine and ordering where Paimon guarantees it."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paimon_core.operations.merge.aggregate import AggregateMergeFunction
from paimon_core.operations.merge.deduplicate import DeduplicateMergeFunction
from paimon_core.operations.merge.factory import key_value_merge
from paimon_core.operations.merge.first_row import FirstRowMergeFunction
from paimon_core.operations.merge.partial_update import PartialUpdateMergeFunction
from tests.unit.paimon_core.operations.merge.helpers import kv_rows, table_schema

SCHEMA = pa.schema(
    [pa.field("k", pa.int32(), False), ("s", pa.int32()), ("n", pa.int64()),
     ("v", pa.string()), ("m", pa.int32())]
)  # fmt: skip

ENGINES: dict[str, tuple[dict[str, str], tuple[str, ...]]] = {
    "deduplicate": ({}, ("+I", "-D", "-U", "+U")),
    "deduplicate-sequence-field": ({"sequence.field": "s"}, ("+I", "-D")),
    "deduplicate-descending": (
        {"sequence.field": "s", "sequence.field.sort-order": "descending"}, ("+I", "-D")
    ),
    "first-row": ({"merge-engine": "first-row", "ignore-delete": "true"}, ("+I", "-D")),
    "partial-update": ({"merge-engine": "partial-update"}, ("+I",)),
    "partial-update-sequence-group": (
        {"merge-engine": "partial-update", "fields.s.sequence-group": "v,m"}, ("+I",)
    ),
    "partial-update-group-sum": (
        {"merge-engine": "partial-update", "fields.s.sequence-group": "n,v",
         "fields.n.aggregate-function": "sum"},
        ("+I",),
    ),
    "aggregation": (
        {"merge-engine": "aggregation", "fields.n.aggregate-function": "sum",
         "fields.v.aggregate-function": "last_value", "fields.s.aggregate-function": "max",
         "fields.s.ignore-retract": "true", "fields.m.aggregate-function": "product",
         "fields.m.ignore-retract": "true"},
        ("+I", "-U", "-D"),
    ),
    "aggregation-insert-only": (
        {"merge-engine": "aggregation", "fields.v.aggregate-function": "listagg",
         "fields.s.aggregate-function": "first_non_null_value",
         "fields.m.aggregate-function": "min"},
        ("+I",),
    ),
}  # fmt: skip


# Not here, because Paimon itself does not merge them the same in pieces: a piece holding a
# -D and then a +I under partial-update.remove-record-on-delete becomes one +I (the delete of
# older pieces is lost); a piece holding only retractions of an aggregated sequence group
# becomes one -D that retracts again when the pieces merge; a partial-update piece starting
# with a retraction fills the row with the retraction's values (Paimon 1.4 and later), which
# merging at once does only when it starts the key (ignore-delete and sequence groups with
# retractions: tests/unit/paimon_core/operations/test_engine_model.py models the pieces).


def _records(kinds: tuple[str, ...]) -> Any:
    record = st.fixed_dictionaries(
        {
            "k": st.integers(0, 3),
            "s": st.one_of(st.none(), st.integers(0, 3)),
            "n": st.one_of(st.none(), st.integers(-5, 5)),
            "v": st.one_of(st.none(), st.sampled_from(["a", "b", "c"])),
            "m": st.one_of(st.none(), st.integers(1, 3)),
            "kind": st.sampled_from(kinds),
        }
    )
    return st.lists(record, min_size=1, max_size=14)


def _shown(rows: pa.Table) -> list[dict[str, Any]]:
    return rows.select(SCHEMA.names).to_pylist()


@pytest.mark.parametrize("engine", sorted(ENGINES))
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_merging_in_pieces_equals_merging_at_once(engine: str, data: st.DataObject) -> None:
    options, kinds = ENGINES[engine]
    merge = key_value_merge(table_schema(SCHEMA, options))
    records = data.draw(_records(kinds))
    cuts = sorted(data.draw(st.sets(st.integers(1, len(records)), max_size=4)) | {len(records)})
    rows = kv_rows(SCHEMA, records, [r["kind"] for r in records])
    pieces, start = [], 0
    for end in cuts:
        pieces.append(merge.merge(rows.slice(start, end - start)))  # kinds kept, as files do
        start = end
    assert _shown(merge.merge_for_read(pa.concat_tables(pieces))) == _shown(
        merge.merge_for_read(rows)
    )


def test_each_engine_gets_its_function() -> None:
    def function(options: dict[str, str]) -> Any:
        return key_value_merge(table_schema(SCHEMA, options)).function

    assert function({}) == DeduplicateMergeFunction(False)
    assert function({"deduplicate.ignore-delete": "true"}) == DeduplicateMergeFunction(True)
    assert function({"merge-engine": "first-row"}) == FirstRowMergeFunction(False)
    assert isinstance(function({"merge-engine": "partial-update"}), PartialUpdateMergeFunction)
    aggregation = function({"merge-engine": "aggregation"})
    assert isinstance(aggregation, AggregateMergeFunction)
    assert {n: a.name for n, a in aggregation.aggregators.items()} == {
        "k": "primary-key", "s": "last_non_null_value", "n": "last_non_null_value",
        "v": "last_non_null_value", "m": "last_non_null_value",
    }  # fmt: skip
    merge = key_value_merge(table_schema(SCHEMA, {"sequence.field": "s,m"}))
    assert merge.sequence_fields == ("s", "m") and merge.required_fields(["v"]) == ["k", "s", "m"]

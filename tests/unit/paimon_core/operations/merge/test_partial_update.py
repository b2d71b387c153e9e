"""partial-update: last non-null per column, deletes, sequence groups (vectorised and
per-record paths agree), aggregators in groups, remove-record-on-sequence-group."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from paimon_core.exceptions import MergeError
from paimon_core.operations.merge.factory import key_value_merge
from tests.unit.paimon_core.operations.merge.helpers import kv_rows, shown, table_schema

SCHEMA = pa.schema(
    [pa.field("k", pa.int32(), False), ("g", pa.int32()), ("a", pa.string()),
     ("b", pa.string()), ("n", pa.int64())]
)  # fmt: skip


def _merge(
    options: dict[str, str], rows: list[dict[str, Any]], kinds: list[str] | None = None
) -> list[tuple]:
    schema = table_schema(SCHEMA, {"merge-engine": "partial-update", **options})
    return shown(key_value_merge(schema).merge(kv_rows(SCHEMA, rows, kinds)))


def test_non_null_values_overwrite() -> None:
    rows = [{"k": 1, "a": "a1", "n": 1}, {"k": 1, "b": "b2"}, {"k": 1, "a": "a3"}]
    assert _merge({}, rows) == [(1, None, "a3", "b2", 1, 0)]


def test_deletes_fail_by_default_and_remove_the_row_when_asked() -> None:
    rows = [{"k": 1, "a": "a1", "b": "b1"}, {"k": 1, "a": "a1", "b": "b1"}, {"k": 1, "b": "b3"}]
    with pytest.raises(MergeError, match="Partial update can not accept delete records"):
        _merge({}, rows, ["+I", "-D", "+I"])
    options = {"partial-update.remove-record-on-delete": "true"}
    assert _merge(options, rows[:2], ["+I", "-D"]) == [(1, None, "a1", "b1", None, 3)]
    # After the -D the row restarts from the deleted values (Paimon 1.x); -U is skipped.
    got = _merge(options, rows, ["+I", "-D", "+I"])
    assert got == [(1, None, "a1", "b3", None, 0)]
    assert _merge(options, rows, ["+I", "-U", "+I"]) == [(1, None, "a1", "b3", None, 0)]
    ignore = {"ignore-delete": "true"}
    assert _merge(ignore, rows, ["+I", "-D", "+I"]) == [(1, None, "a1", "b3", None, 0)]
    # A key with only retractions is deleted (Paimon 0.9 returned a row of nulls).
    assert _merge(ignore, rows[:2], ["-D", "-D"])[0][-1] == 3


GROUP_ROWS = [
    {"k": 1, "g": 5, "a": "a5", "b": "b5", "n": 1},
    {"k": 1, "g": 3, "a": "a3", "b": "b3", "n": 2},
    {"k": 1, "g": None, "a": "no-seq", "n": 3},
    {"k": 1, "g": 5, "a": "a5-again", "b": None, "n": None},
    {"k": 2, "g": 1, "a": "x"},
    {"k": 2, "g": 2, "a": "x"},
]


def test_sequence_group_takes_the_newest_record() -> None:
    kinds = ["+I", "+I", "+I", "+I", "+I", "-D"]
    got = _merge({"fields.g.sequence-group": "a,b"}, GROUP_ROWS, kinds)
    # Equal sequence: the later record wins, nulls included; a winning -D clears the group.
    assert got == [(1, 5, "a5-again", None, 3, 0), (2, 2, None, None, None, 0)]


def test_sequence_group_paths_agree() -> None:
    """An aggregator on a column outside the group forces the per-record path; the group's
    columns must come out as the vectorised path gives them."""
    kinds = ["+I", "-U", "+I", "+I", "+I", "-D"]
    vectorised = _merge({"fields.g.sequence-group": "a,b"}, GROUP_ROWS, kinds)
    options = {"fields.g.sequence-group": "a,b", "fields.n.aggregate-function": "sum"}
    per_record = key_value_merge(
        table_schema(SCHEMA, {"merge-engine": "partial-update", **options})
    )
    got = shown(per_record.merge(kv_rows(SCHEMA, GROUP_ROWS, kinds)))
    assert [r[:4] for r in got] == [r[:4] for r in vectorised]
    assert got[0][4] == 1 + 3  # n: sum of the additions outside any group; -U skipped there


def test_aggregators_in_groups_aggregate_in_both_directions() -> None:
    options = {"fields.g.sequence-group": "a,n", "fields.n.aggregate-function": "sum",
               "fields.a.aggregate-function": "last_non_null_value"}  # fmt: skip
    rows = [{"k": 1, "g": 5, "a": "new", "n": 10}, {"k": 1, "g": 1, "a": "old", "n": 1},
            {"k": 1, "g": 6, "a": None, "n": 4}]  # fmt: skip
    # n sums whatever the order; a keeps 'new': the older record aggregates reversed.
    assert _merge(options, rows) == [(1, 6, "new", None, 15, 0)]
    # The -D wins the group: n retracts 4; a retracts a null, which last_non_null ignores.
    assert _merge(options, rows, ["+I", "+I", "-D"]) == [(1, 6, "new", None, 7, 0)]


def test_remove_record_on_sequence_group() -> None:
    options = {
        "fields.g.sequence-group": "a",
        "partial-update.remove-record-on-sequence-group": "g",
    }
    rows = [{"k": 1, "g": 1, "a": "x", "b": "keep"}, {"k": 1, "g": 2, "a": "x"}]
    assert _merge(options, rows, ["+I", "-D"]) == [(1, 2, "x", None, None, 3)]
    older = [{"k": 1, "g": 3, "a": "x", "b": "keep"}, {"k": 1, "g": 2, "a": "x"}]
    assert _merge(options, older, ["+I", "-D"]) == [(1, 3, "x", "keep", None, 0)]


def test_a_first_retraction_fills_the_row() -> None:
    """Paimon 1.4 and later (``initRow``): a key's first record, when a retraction, gives the
    row its values before it applies; what later records leave alone keeps them. Found by
    test_engine_model (a -U and a +I of one key in one commit)."""
    rows = [{"k": 1, "a": "a0", "b": "b0", "n": 7}, {"k": 1}]
    group = {"fields.g.sequence-group": "a"}
    # g is null: the -U leaves the group alone, the +I sets nothing.
    assert _merge(group, rows, ["-U", "+I"]) == [(1, None, "a0", "b0", 7, 0)]
    summed = {**group, "fields.n.aggregate-function": "sum"}  # Java's per-record path
    assert _merge(summed, rows, ["-U", "+I"]) == [(1, None, "a0", "b0", 7, 0)]
    assert _merge({"ignore-delete": "true"}, rows, ["-D", "+I"]) == [(1, None, "a0", "b0", 7, 0)]
    # With a sequence the -D retracts its own group (a cleared); the older +I loses to it.
    older = [{"k": 1, "g": 3, "a": "a0", "b": "b0"}, {"k": 1, "g": 2, "a": "late"}]
    assert _merge(group, older, ["-D", "+I"]) == [(1, 3, None, "b0", None, 0)]
    # ignore-delete skips the -D, but its values stay the row's, its sequence the group's.
    ignore = {**group, "ignore-delete": "true"}
    assert _merge(ignore, older, ["-D", "+I"]) == [(1, 3, "a0", "b0", None, 0)]


def test_projection_reads_the_groups_sequence_fields() -> None:
    schema = table_schema(SCHEMA, {"merge-engine": "partial-update",
                                              "fields.g.sequence-group": "a,b"})  # fmt: skip
    assert key_value_merge(schema).required_fields(["a"]) == ["k", "g"]
    assert key_value_merge(schema).required_fields(["n"]) == ["k"]

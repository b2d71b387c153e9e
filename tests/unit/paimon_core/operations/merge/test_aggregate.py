"""aggregation: per-column functions, primary keys kept, +I result with the last sequence,
remove-record-on-delete."""

from __future__ import annotations

import pyarrow as pa

from paimon_core.operations.merge.factory import key_value_merge
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

"""Merge-engine options: parsed with Paimon's fallback keys, and refused at CREATE TABLE with
Paimon's messages when Paimon refuses them."""

from __future__ import annotations

import pyarrow as pa
import pytest

from paimon_core.exceptions import SchemaError
from paimon_core.format.merge_options import MergeOptions, SequenceGroup
from paimon_core.format.schema import schema_from_arrow

SCHEMA = pa.schema(
    [pa.field("k", pa.int32(), False), ("a", pa.int32()), ("b", pa.string()),
     ("c", pa.int64()), pa.field("p", pa.string(), False)]
)  # fmt: skip


def _create(options: dict[str, str], **kw: object) -> MergeOptions:
    kw.setdefault("primary_keys", ["k"])
    schema = schema_from_arrow(SCHEMA, options={"bucket": "1", **options}, **kw)  # type: ignore[arg-type]
    return MergeOptions.of_schema(schema)


def test_parsing() -> None:
    merge = _create({
        "merge-engine": "partial-update", "partial-update.ignore-delete": "true",
        "fields.a,c.sequence-group": "b", "fields.b.aggregate-function": "max",
        "fields.default-aggregate-function": "last_value", "sequence.field.sort-order": "descending",
    })  # fmt: skip
    assert merge.engine == "partial-update" and merge.ignore_delete
    assert merge.sequence_groups == (SequenceGroup(("a", "c"), ("b",)),)
    assert merge.aggregate_function("b") == "max" and merge.aggregate_function("k") == "last_value"
    assert not merge.sequence_ascending
    assert _create({"first-row.ignore-delete": "true"}).ignore_delete


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"merge-engine": "fancy"}, "Could not parse value 'fancy' for key 'merge-engine'"),
        ({"fields.x.aggregate-function": "sum"}, "Field x can not be found in table schema."),
        ({"sequence.field": "x"}, "Sequence field: 'x' can not be found in table schema."),
        ({"sequence.field": "a,a"}, "Sequence field 'a' is defined repeatedly."),
        ({"sequence.field": "a", "fields.a.aggregate-function": "sum",
          "merge-engine": "aggregation"}, "Should not define aggregation on sequence field: 'a'."),
        ({"sequence.field": "a", "merge-engine": "first-row"},
         "Do not support use sequence field on FIRST_MERGE merge engine."),
        ({"sequence.field.sort-order": "sideways"}, "sequence.field.sort-order"),
        ({"merge-engine": "first-row", "changelog-producer": "input"},
         "Only support 'none' and 'lookup' changelog-producer on FIRST_MERGE merge engine"),
        ({"deletion-vectors.enabled": "true", "changelog-producer": "full-compaction"},
         "Deletion vectors mode is only supported for NONE/INPUT/LOOKUP changelog producer now."),
        ({"merge-engine": "partial-update", "fields.a.sequence-group": "x"},
         "Field x can not be found in table schema."),
        ({"merge-engine": "partial-update", "fields.a.sequence-group": "b",
          "fields.c.sequence-group": "b"}, "Field b is defined repeatedly by multiple groups"),
        ({"merge-engine": "partial-update", "fields.a.sequence-group": "b",
          "fields.a.aggregate-function": "max"},
         "Should not defined aggregation function on sequence group: ['a']"),
        ({"merge-engine": "partial-update", "fields.b.aggregate-function": "max"},
         "Must use sequence group for aggregation functions."),
        ({"merge-engine": "partial-update", "ignore-delete": "true",
          "partial-update.remove-record-on-delete": "true"}, "conflicting behavior"),
        ({"merge-engine": "partial-update", "fields.a.sequence-group": "b",
          "partial-update.remove-record-on-delete": "true"}, "sequence group and partial-update"),
        ({"merge-engine": "partial-update", "fields.a.sequence-group": "b",
          "partial-update.remove-record-on-sequence-group": "c"},
         "must be part of sequence groups"),
        ({"merge-engine": "aggregation", "fields.a.aggregate-function": "median"},
         "Use unsupported aggregation: median or spell aggregate function incorrectly!"),
    ],
)  # fmt: skip
def test_refused_as_paimon_refuses(options: dict[str, str], message: str) -> None:
    with pytest.raises(SchemaError) as info:
        _create(options)
    assert message in str(info.value)


def test_sequence_field_needs_the_partition_in_the_key() -> None:
    with pytest.raises(SchemaError, match=r"can not use sequence\.field in cross partition update"):
        _create({"sequence.field": "a", "bucket": "-1"}, partition_keys=["p"])


def test_aggregate_functions_on_primary_keys_are_ignored_as_in_paimon() -> None:
    merge = _create({"merge-engine": "aggregation", "fields.k.aggregate-function": "median"})
    assert merge.engine == "aggregation"  # Java aggregates primary keys as 'primary-key'


def test_ignore_delete_cannot_be_switched_off_once_written() -> None:
    from paimon_core.format.schema import check_dynamic_option

    options = {"ignore-delete": "true"}
    with pytest.raises(SchemaError, match="Cannot change ignore-delete from true to false"):
        check_dynamic_option(options, "ignore-delete", "false")
    check_dynamic_option({"ignore-delete": "false"}, "ignore-delete", "true")  # allowed

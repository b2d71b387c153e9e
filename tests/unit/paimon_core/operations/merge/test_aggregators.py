"""Field aggregators: the vectorised ``reduce`` of each function equals Java's record-at-a-time
fold (the scalar ``agg``/``retract`` methods, ported from Paimon 0.9), and the scalar methods
give Java's values on the cases Java's own ``FieldAggregatorTest`` checks."""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paimon_core.exceptions import MergeError, SchemaError, UnsupportedFeature
from paimon_core.format.merge_options import FieldAggregation
from paimon_core.format.roaring_bitmap64 import RoaringBitmap64
from paimon_core.format.sketches import hll_sketch_of, theta_sketch_of
from paimon_core.format.types import from_arrow_type
from paimon_core.operations.merge.aggregators import FieldAggregator, create_aggregator
from paimon_core.operations.merge.base import Groups


def _aggregator(function: str, arrow_type: pa.DataType, **config: Any) -> FieldAggregator:
    return create_aggregator(
        function, "f", from_arrow_type(arrow_type), arrow_type, FieldAggregation(function, **config)
    )


def _scalar(
    agg: FieldAggregator, values: list[Any], retract: list[bool], lengths: list[int]
) -> list[Any]:
    """Java's fold: reset per key, agg or retract each record in order."""
    out, start = [], 0
    for n in lengths:
        agg.reset()
        acc = None
        for i in range(start, start + n):
            acc = agg.retract(acc, values[i]) if retract[i] else agg.agg(acc, values[i])
        out.append(acc)
        start += n
    return out


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (
            a == b and math.copysign(1, a) == math.copysign(1, b)
        )
    return a == b


INT_VALUES = st.one_of(st.none(), st.integers(-(2**31), 2**31 - 1))
FLOAT_VALUES = st.one_of(
    st.none(), st.floats(width=32), st.sampled_from([0.0, -0.0, float("nan"), float("inf")])
)
CASES = [
    ("sum", pa.int32(), INT_VALUES, True),
    ("sum", pa.int64(), st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)), True),
    ("sum", pa.float32(), FLOAT_VALUES, True),
    ("sum", pa.float64(), FLOAT_VALUES, True),
    ("product", pa.int16(), st.one_of(st.none(), st.integers(-300, 300)), False),
    ("product", pa.int64(), st.one_of(st.none(), st.integers(-(2**40), 2**40)), False),
    ("product", pa.float64(), FLOAT_VALUES, True),
    ("max", pa.float64(), FLOAT_VALUES, False),
    ("min", pa.float32(), FLOAT_VALUES, False),
    ("max", pa.string(), st.one_of(st.none(), st.text(max_size=3)), False),
    ("min", pa.int8(), st.one_of(st.none(), st.integers(-128, 127)), False),
    ("last_value", pa.string(), st.one_of(st.none(), st.text(max_size=2)), True),
    ("last_non_null_value", pa.int32(), INT_VALUES, True),
    ("first_value", pa.int32(), INT_VALUES, False),
    ("first_non_null_value", pa.string(), st.one_of(st.none(), st.text(max_size=2)), False),
    ("bool_and", pa.bool_(), st.one_of(st.none(), st.booleans()), False),
    ("bool_or", pa.bool_(), st.one_of(st.none(), st.booleans()), False),
    ("listagg", pa.string(), st.one_of(st.none(), st.text(max_size=2)), False),
    ("primary-key", pa.int32(), st.integers(0, 3), True),
]


@pytest.mark.parametrize(
    ("function", "arrow_type", "values", "retracts"),
    CASES,
    ids=[f"{c[0]}-{c[1]}" for c in CASES],
)
@settings(max_examples=12, deadline=None)
@given(data=st.data())
def test_vectorised_reduce_equals_javas_fold(
    function: str, arrow_type: pa.DataType, values: Any, retracts: bool, data: st.DataObject
) -> None:
    lengths = data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=6))
    n = sum(lengths)
    column = data.draw(st.lists(values, min_size=n, max_size=n))
    retract = (
        data.draw(st.lists(st.booleans(), min_size=n, max_size=n)) if retracts else [False] * n
    )
    groups = Groups.of_lengths(np.array(lengths, np.int64))
    array = pa.array(column, type=arrow_type)
    present = np.ones(n, bool)
    try:
        expected = _scalar(_aggregator(function, arrow_type), array.to_pylist(), retract, lengths)
    except MergeError as err:  # an integer overflow: the bulk fold fails the same way
        with pytest.raises(MergeError) as raised:
            _aggregator(function, arrow_type).reduce(array, present, np.array(retract), groups)
        assert str(raised.value) == str(err)
        return
    got = _aggregator(function, arrow_type).reduce(array, present, np.array(retract), groups)
    assert len(got) == len(expected)
    for g, e in zip(got.to_pylist(), expected):
        assert _same(g, e), (g, e)


def test_integer_overflow_fails_naming_the_field() -> None:
    """The latest Paimon's ``FieldSumAgg``/``FieldProductAgg`` (``Math.addExact`` and the
    like): an integer sum or product that overflows fails the merge, where Paimon 0.9
    wrapped around."""
    add = _aggregator("sum", pa.int32())
    field = r" \(aggregate function 'sum' of field 'f'\)$"
    with pytest.raises(MergeError, match="^int overflow: 2147483647 \\+ 1" + field):
        add.agg(2147483647, 1)
    with pytest.raises(MergeError, match="^int overflow: --2147483648" + field):
        add.retract(None, -2147483648)
    with pytest.raises(MergeError, match="^int overflow: -2147483648 - 1" + field):
        add.retract(-2147483648, 1)
    assert add.agg(2147483646, 1) == 2147483647 and add.retract(None, 5) == -5
    with pytest.raises(MergeError, match="^byte overflow: 127 \\+ 1 = 128" + field):
        _aggregator("sum", pa.int8()).agg(127, 1)
    with pytest.raises(MergeError, match="^long overflow: 9223372036854775807 \\+ 1" + field):
        _aggregator("sum", pa.int64()).agg(2**63 - 1, 1)
    product = _aggregator("product", pa.int32())
    times = field.replace("sum", "product")
    with pytest.raises(MergeError, match="^int overflow: 65536 \\* 65536" + times):
        product.agg(65536, 65536)
    with pytest.raises(MergeError, match="^int overflow: -2147483648 / -1" + times):
        product.retract(-(2**31), -1)
    with pytest.raises(MergeError, match=r"^short overflow: 300 \* 300 = 90000"):
        _aggregator("product", pa.int16()).agg(300, 300)
    # An intermediate overflow fails even when the end result would fit, in the bulk fold too.
    values = pa.array([2147483647, 1, -1], pa.int32())
    with pytest.raises(MergeError, match="^int overflow: 2147483647 \\+ 1" + field):
        add.reduce(values, np.ones(3, bool), np.zeros(3, bool), Groups.of_lengths(np.array([3])))


def test_java_rounding_and_division() -> None:
    f32 = _aggregator("sum", pa.float32())
    assert f32.agg(0.1, 0.2) == float(np.float32(0.1) + np.float32(0.2))
    product = _aggregator("product", pa.int32())
    assert product.retract(7, 2) == 3 and product.retract(-7, 2) == -3  # Java truncates
    assert product.retract(None, 5) is None  # Paimon 1.0 on; 0.9 took the 5
    with pytest.raises(MergeError, match=r"^/ by zero .*of field 'f'"):
        product.retract(7, 0)


def test_decimal_sum_and_product_follow_paimon_decimal() -> None:
    wide = _aggregator("sum", pa.decimal128(20, 2))
    assert wide.agg(Decimal("1.10"), Decimal("2.25")) == Decimal("3.35")
    assert wide.agg(Decimal("999999999999999999.99"), Decimal("0.01")) is None  # > precision
    narrow = _aggregator("sum", pa.decimal128(5, 2))
    with pytest.raises(MergeError, match="overflows"):
        narrow.agg(Decimal("999.99"), Decimal("0.01"))
    product = _aggregator("product", pa.decimal128(10, 2))
    assert product.agg(Decimal("1.25"), Decimal("1.25")) == Decimal("1.56")  # HALF_UP
    assert product.retract(Decimal("1.00"), Decimal("4.00")) == Decimal("0.25")
    with pytest.raises(MergeError, match="Non-terminating"):
        product.retract(Decimal("1.00"), Decimal("3.00"))
    got = wide.reduce(
        pa.array([Decimal("1.10"), Decimal("0.05"), None], pa.decimal128(20, 2)),
        np.ones(3, bool),
        np.array([False, True, False]),
        Groups.of_lengths(np.array([3])),
    )
    assert got.to_pylist() == [Decimal("1.05")]


def test_retraction_of_a_function_that_cannot_retract_fails_unless_ignored() -> None:
    groups = Groups.of_lengths(np.array([2]))
    values = pa.array([3, 9], pa.int32())
    retract = np.array([False, True])
    with pytest.raises(
        MergeError, match=r"'max' does not support retraction.*fields\.f\.ignore-retract"
    ):
        _aggregator("max", pa.int32()).reduce(values, np.ones(2, bool), retract, groups)
    ignoring = _aggregator("max", pa.int32(), ignore_retract=True)
    assert ignoring.reduce(values, np.ones(2, bool), retract, groups).to_pylist() == [3]
    assert ignoring.retract(3, 9) == 3


def test_collect_merge_map_and_nested_update() -> None:
    collect = _aggregator("collect", pa.list_(pa.int32()))
    assert collect.agg([1, 2], [2, 3]) == [1, 2, 2, 3]
    assert collect.retract([1, 2, 2, 3], [2, 5]) == [1, 2, 3]
    distinct = _aggregator("collect", pa.list_(pa.int32()), distinct=True)
    assert distinct.agg(None, [1, 1, 2]) == [1, 2]
    assert distinct.agg([1, 2], [2, 3]) == [1, 2, 3]
    merge_map = _aggregator("merge_map", pa.map_(pa.string(), pa.int32()))
    assert dict(merge_map.agg([("a", 1), ("b", 2)], [("b", 3), ("c", 4)])) == {
        "a": 1,
        "b": 3,
        "c": 4,
    }
    assert merge_map.retract([("a", 1), ("b", 2)], [("a", 9)]) == [("b", 2)]
    row = pa.struct([("id", pa.int32()), ("name", pa.string())])
    nested = _aggregator("nested_update", pa.list_(row), nested_key=("id",))
    acc = [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]
    assert nested.agg(acc, [{"id": 1, "name": "a2"}]) == [
        {"id": 1, "name": "a2"},
        {"id": 2, "name": "b"},
    ]
    assert nested.retract(acc, [{"id": 2, "name": "whatever"}]) == [{"id": 1, "name": "a"}]
    appending = _aggregator("nested_update", pa.list_(row))
    assert appending.agg(acc, acc[:1]) == [*acc, acc[0]]
    assert appending.retract([*acc, acc[0]], acc[:1]) == acc[1:]
    # The bulk path round-trips nested values through Arrow.
    values = pa.array([[("k", 1)], [("k", 2), ("j", 3)]], pa.map_(pa.string(), pa.int32()))
    got = merge_map.reduce(
        values, np.ones(2, bool), np.zeros(2, bool), Groups.of_lengths(np.array([2]))
    )
    assert dict(got.to_pylist()[0]) == {"k": 2, "j": 3}


def test_listagg_delimiter_and_distinct() -> None:
    plain = _aggregator("listagg", pa.string(), delimiter="|")
    got = plain.reduce(
        pa.array(["a", None, "", "b"]),
        np.ones(4, bool),
        np.zeros(4, bool),
        Groups.of_lengths(np.array([4])),
    )
    assert got.to_pylist() == ["a|b"]  # Paimon 2.0 skips blank strings (0.9 kept them)
    # Blank is Java's isBlank: no-break spaces are not whitespace there.
    blanks = pa.array([" ", "\t\u3000", "x", "\xa0", "", "y"])
    got = plain.reduce(
        blanks, np.ones(6, bool), np.zeros(6, bool), Groups.of_lengths(np.array([3, 3]))
    )
    assert got.to_pylist() == ["x", "\xa0|y"]
    assert plain.agg(None, " ") is None and plain.agg(" ", "b") == "b" and plain.agg("a", "") == "a"
    distinct = _aggregator("listagg", pa.string(), delimiter=",", distinct=True)
    assert distinct.agg("a,b", "b,c, ,a") == "a,b,c"


def test_rbm32_unions_bitmaps_as_java_serializes_them() -> None:
    from pyroaring import BitMap

    rbm = _aggregator("rbm32", pa.binary())
    a, b = BitMap([1, 2, 100]).serialize(), BitMap(range(1000, 1100)).serialize()
    merged = BitMap.deserialize(rbm.agg(a, b))
    assert set(merged) == {1, 2, 100, *range(1000, 1100)}


def test_types_and_unsupported_functions_are_refused() -> None:
    with pytest.raises(SchemaError, match="type VARCHAR not support in aggregate function 'sum'"):
        _aggregator("sum", pa.string())
    with pytest.raises(SchemaError, match="collect column must be 'Array'"):
        _aggregator("collect", pa.int32())
    for name, what in [("rbm32", "roaring bitmap"), ("rbm64", "roaring bitmap"),
                       ("theta_sketch", "theta sketch"), ("hll_sketch", "hll sketch")]:  # fmt: skip
        with pytest.raises(
            SchemaError,
            match=f"^Data type for {what} column must be 'VarBinaryType' but was 'BIGINT'.$",
        ):
            _aggregator(name, pa.int64())
    with pytest.raises(UnsupportedFeature, match="unsupported aggregation: median"):
        _aggregator("median", pa.int64())


# ------------------------------------------- sketches, rbm64 (Java's FieldAggregatorTest)


@pytest.mark.parametrize(
    ("function", "of"),
    [
        ("theta_sketch", theta_sketch_of),
        ("hll_sketch", hll_sketch_of),
        ("rbm64", lambda values: RoaringBitmap64.bitmap_of(values).serialize()),
    ],
)
def test_binary_unions_follow_javas_field_aggregator_test(function: str, of: Any) -> None:
    agg = _aggregator(function, pa.binary())
    input_val, acc1, acc2 = of([1]), of([2, 3]), of([1, 2, 3])
    assert agg.agg(None, None) is None
    assert agg.agg(None, input_val) == input_val
    assert agg.agg(acc1, None) == acc1
    assert agg.agg(acc1, input_val) == acc2
    assert agg.agg(acc2, input_val) == acc2
    groups = Groups.of_lengths(np.array([3, 1]))
    column = pa.array([acc1, None, input_val, None], pa.binary())
    got = agg.reduce(column, np.ones(4, bool), np.zeros(4, bool), groups)
    assert got.to_pylist() == [acc2, None]


@pytest.mark.parametrize("function", ["theta_sketch", "hll_sketch", "rbm64"])
def test_binary_unions_refuse_bytes_of_another_kind(function: str) -> None:
    with pytest.raises(MergeError, match="field 'f'"):
        _aggregator(function, pa.binary()).agg(b"\x01\x02\x03", b"\x04\x05\x06\x07\x08\x09")


RETRACT_CASES = [
    ("theta_sketch", pa.binary(), theta_sketch_of([1])),
    ("hll_sketch", pa.binary(), hll_sketch_of([1])),
    ("rbm64", pa.binary(), RoaringBitmap64.bitmap_of([1]).serialize()),
    (
        "merge_map_with_keytime",
        pa.map_(pa.string(), pa.struct([("v", pa.string()), ("ts", pa.string())])),
        [("a", {"v": "x", "ts": "1"})],
    ),
    (
        "nested_partial_update",
        pa.list_(pa.struct([("k", pa.int32()), ("v", pa.string())])),
        [{"k": 1, "v": "x"}],
    ),
]


@pytest.mark.parametrize(
    ("function", "arrow_type", "value"), RETRACT_CASES, ids=[c[0] for c in RETRACT_CASES]
)
def test_new_functions_cannot_retract_unless_ignored(
    function: str, arrow_type: pa.DataType, value: Any
) -> None:
    config = {"nested_key": ("k",)} if function == "nested_partial_update" else {}
    agg = _aggregator(function, arrow_type, **config)
    message = (
        f"^Aggregate function '{function}' does not support retraction, If you allow this "
        "function to ignore retraction messages, you can configure "
        "'fields.f.ignore-retract'='true'.$"
    )
    with pytest.raises(MergeError, match=message):
        agg.retract(value, value)
    column = pa.array([value, value], arrow_type)
    groups = Groups.of_lengths(np.array([2]))
    with pytest.raises(MergeError, match=message):
        agg.reduce(column, np.ones(2, bool), np.array([False, True]), groups)
    ignoring = _aggregator(function, arrow_type, ignore_retract=True, **config)
    assert ignoring.retract(value, value) == value
    got = ignoring.reduce(column, np.ones(2, bool), np.array([False, True]), groups)
    assert got.to_pylist() == pa.array([value], arrow_type).to_pylist()


# ---------------------------------------------------------------- merge_map_with_keytime

KEYTIME_ROW = pa.struct([("actual_value", pa.string()), ("dbsync_ts", pa.string())])


def _entries(*entries: tuple[Any, str, str]) -> list[tuple[Any, dict[str, str]]]:
    return [(k, {"actual_value": v, "dbsync_ts": ts}) for k, v, ts in entries]


def _values(acc: list[tuple[Any, Any]]) -> dict[Any, str | None]:
    return {k: None if row is None else row["actual_value"] for k, row in acc}


def test_merge_map_with_keytime_follows_javas_field_aggregator_test() -> None:
    agg = _aggregator("merge_map_with_keytime", pa.map_(pa.string(), KEYTIME_ROW))
    map1 = _entries(("key1", "A", "17682882903686900100"), ("key2", "B", "17682882903686900100"))
    map2 = _entries(("key1", "A1", "17682882903686900200"), ("key3", "C", "17682882903686900200"))
    map3 = _entries(("key2", "B2", "17682882903686900050"))
    acc = agg.agg(None, map1)
    assert _values(acc) == {"key1": "A", "key2": "B"}
    acc = agg.agg(acc, map2)
    assert _values(acc) == {"key1": "A1", "key2": "B", "key3": "C"}
    acc = agg.agg(acc, map3)
    assert _values(acc) == {"key1": "A1", "key2": "B", "key3": "C"}


def test_merge_map_with_keytime_binary_keys_tombstones_and_null_timestamps() -> None:
    agg = _aggregator("merge_map_with_keytime", pa.map_(pa.binary(), KEYTIME_ROW))
    acc = agg.agg(None, _entries((b"\x01\x02", "A", "100")))
    acc = agg.agg(acc, _entries((b"\x01\x02", "A1", "200")))
    assert _values(acc) == {b"\x01\x02": "A1"}
    acc = agg.agg(acc, _entries((b"\x01\x02", "A0", "050")))
    assert _values(acc) == {b"\x01\x02": "A1"}
    assert agg.agg(acc, [(b"\x01\x02", None)]) == []  # a null row removes its key
    # A row with a null timestamp is skipped; one onto a null-timestamp row replaces it.
    acc = agg.agg(None, [("k", {"actual_value": "old", "dbsync_ts": None})])
    assert _values(agg.agg(acc, _entries(("k", "new", "1")))) == {"k": "new"}
    assert _values(agg.agg(acc, [("k", {"actual_value": "x", "dbsync_ts": None})])) == {"k": "old"}
    # Java compares UTF-16 code units: U+FFFF sorts after U+10000 (a surrogate pair).
    acc = agg.agg(None, _entries(("k", "bmp", "\uffff")))
    assert _values(agg.agg(acc, _entries(("k", "astral", "\U00010000")))) == {"k": "bmp"}


def test_merge_map_with_keytime_ts_field_option_and_type_checks() -> None:
    row = pa.struct([("ts", pa.string()), ("v", pa.string())])
    agg = _aggregator("merge_map_with_keytime", pa.map_(pa.int32(), row), ts_field="ts")
    acc = agg.agg([(1, {"ts": "5", "v": "a"})], [(1, {"ts": "6", "v": "b"})])
    assert acc == [(1, {"ts": "6", "v": "b"})]
    with pytest.raises(
        SchemaError,
        match=r"^Timestamp field 'when' not found in ROW type for field 'f'. "
        r"Available fields: \[ts, v\]$",
    ):
        _aggregator("merge_map_with_keytime", pa.map_(pa.int32(), row), ts_field="when")
    with pytest.raises(SchemaError, match=r"^Data type for field 'f' must be 'MAP' but was 'INT'$"):
        _aggregator("merge_map_with_keytime", pa.int32())
    with pytest.raises(SchemaError, match="Value type of MAP for field 'f' must be ROW but was"):
        _aggregator("merge_map_with_keytime", pa.map_(pa.int32(), pa.string()))
    one = pa.map_(pa.int32(), pa.struct([("ts", pa.string())]))
    with pytest.raises(SchemaError, match=r"must have at least 2 fields, but found 1$"):
        _aggregator("merge_map_with_keytime", one)
    numeric = pa.map_(pa.int32(), pa.struct([("v", pa.string()), ("ts", pa.int64())]))
    by_number = _aggregator("merge_map_with_keytime", numeric)
    assert by_number.agg([(1, {"v": "a", "ts": 1})], [(2, {"v": "b", "ts": 2})]) == [
        (1, {"v": "a", "ts": 1}),
        (2, {"v": "b", "ts": 2}),
    ]
    with pytest.raises(MergeError, match="'ts' of field 'f' is compared as a string"):
        by_number.agg([(1, {"v": "a", "ts": 1})], [(1, {"v": "b", "ts": 2})])


# ----------------------------------------------------------------- nested_partial_update

NESTED = pa.list_(pa.struct([("k", pa.int32()), ("v1", pa.int32()), ("v2", pa.string())]))


def _row(k: Any, v1: Any, v2: Any) -> dict[str, Any]:
    return {"k": k, "v1": v1, "v2": v2}


def test_nested_partial_update_follows_javas_field_aggregator_test() -> None:
    agg = _aggregator("nested_partial_update", NESTED, nested_key=("k",))
    acc = agg.agg(None, [_row(0, 0, None)])
    assert acc == [_row(0, 0, None)]
    acc = agg.agg(acc, [_row(0, None, "A")])
    assert acc == [_row(0, 0, "A")]
    acc = agg.agg(acc, [_row(0, 1, "B")])
    assert acc == [_row(0, 1, "B")]
    acc = agg.agg(acc, [_row(1, 2, "C")])
    assert acc == [_row(0, 1, "B"), _row(1, 2, "C")]
    acc = agg.agg(acc, [_row(None, 0, "D")])  # merge (the default) keeps null keys
    assert acc == [_row(0, 1, "B"), _row(1, 2, "C"), _row(None, 0, "D")]
    assert agg.agg(acc, None) == acc
    assert agg.agg(None, [None, _row(5, 1, None), _row(5, None, "x")]) == [_row(5, 1, "x")]


def test_nested_partial_update_null_key_strategies() -> None:
    ignore = _aggregator(
        "nested_partial_update", NESTED, nested_key=("k",), nested_key_null_strategy="IGNORE"
    )
    acc = ignore.agg(None, [_row(0, 0, None)])
    assert ignore.agg(acc, [_row(None, None, "A_ignore")]) == [_row(0, 0, None)]
    assert ignore.agg(None, [_row(None, None, "FirstInput")]) == []
    error = _aggregator(
        "nested_partial_update", NESTED, nested_key=("k",), nested_key_null_strategy="error"
    )
    message = "^Nested key contains null values. Primary key fields must not be null.$"
    with pytest.raises(MergeError, match=message):
        error.agg([_row(0, 0, None)], [_row(None, 0, "A")])
    with pytest.raises(MergeError, match=message):
        error.agg(None, [_row(None, None, "FirstInput")])


def test_nested_partial_update_options_are_checked() -> None:
    with pytest.raises(SchemaError, match=r"needs 'fields.f.nested-key'"):
        _aggregator("nested_partial_update", NESTED)
    with pytest.raises(SchemaError, match=r"Nested key \['id'\] of field 'f'"):
        _aggregator("nested_partial_update", NESTED, nested_key=("id",))
    with pytest.raises(SchemaError, match=r"for key 'fields.f.nested-key-null-strategy'"):
        _aggregator(
            "nested_partial_update", NESTED, nested_key=("k",), nested_key_null_strategy="drop"
        )
    with pytest.raises(SchemaError, match="nested table column must be 'Array<Row>'"):
        _aggregator("nested_partial_update", pa.list_(pa.int32()), nested_key=("k",))


@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_rbm64_reduce_equals_javas_fold_byte_for_byte(data: st.DataObject) -> None:
    """The bulk fold keeps the bitmap between records (run-optimized, as Java's
    serialize-deserialize round trip leaves it): the same bytes as Java's record-at-a-time
    fold."""
    lengths = data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=4))
    scattered = st.lists(st.integers(0, 2**34), max_size=30)
    ranges = st.lists(
        st.tuples(st.integers(0, 2**18), st.integers(1, 5000), st.integers(1, 3)), max_size=3
    ).map(lambda rs: [v for start, n, step in rs for v in range(start, start + n, step)])
    value = st.one_of(
        st.none(),
        st.one_of(scattered, ranges).map(lambda v: RoaringBitmap64.bitmap_of(v).serialize()),
    )
    column = data.draw(st.lists(value, min_size=sum(lengths), max_size=sum(lengths)))
    agg = _aggregator("rbm64", pa.binary())
    n = len(column)
    got = agg.reduce(
        pa.array(column, pa.binary()),
        np.ones(n, bool),
        np.zeros(n, bool),
        Groups.of_lengths(np.array(lengths)),
    )
    assert got.to_pylist() == _scalar(agg, column, [False] * n, lengths)


# ------------------------------------------- nested_update's options (the latest Paimon)

NESTED_SEQ = pa.list_(pa.struct([("id", pa.float64()), ("v", pa.string()), ("ts", pa.int64())]))


def _nr(key: float | None, v: str, ts: int | None = None) -> dict[str, Any]:
    return {"id": key, "v": v, "ts": ts}


def test_nested_update_without_key_drops_nulls_and_stops_at_the_count_limit() -> None:
    agg = _aggregator("nested_update", NESTED_SEQ, count_limit="3")
    a, b, c, d = (_nr(i, str(i)) for i in range(4))
    assert agg.agg(None, [a, None, b, c, d]) == [a, b, c]
    # Java counts the accumulator's size, its null elements included.
    assert agg.agg([a, None], [b, c, d]) == [a, b]
    full = [a, None, b]
    assert agg.agg(full, [d]) is full
    assert agg.retract([a, None, b, a], [a]) == [b]
    assert _aggregator("nested_update", NESTED_SEQ, count_limit="-1").agg(None, [a]) == []


def test_nested_update_sequence_field_and_count_limit_by_key() -> None:
    agg = _aggregator(
        "nested_update",
        NESTED_SEQ,
        nested_key=("id",),
        nested_sequence_field=("ts",),
        count_limit="2",
    )
    acc = agg.agg(None, [_nr(1, "a", 5), _nr(2, "b", 5), _nr(3, "c", 5)])
    assert acc == [_nr(1, "a", 5), _nr(2, "b", 5)]
    # An older row leaves its key alone, an equal or newer one replaces it, a new key waits
    # for room.
    got = agg.agg(acc, [_nr(1, "old", 4), _nr(2, "new", 5), _nr(3, "x", 9)])
    assert got == [_nr(1, "a", 5), _nr(2, "new", 5)]
    assert agg.agg([_nr(1, "a")], [_nr(1, "b", 0)]) == [_nr(1, "b", 0)]  # nulls first
    assert agg.agg([_nr(1, "a", 0)], [_nr(1, "b")]) == [_nr(1, "a", 0)]
    # Keys compare as Java's BinaryRow: -0.0 is another key than 0.0, NaN is one key.
    nan = float("nan")
    plain = _aggregator("nested_update", NESTED_SEQ, nested_key=("id",))
    got = plain.agg([_nr(0.0, "z"), _nr(nan, "n")], [_nr(-0.0, "m"), _nr(nan, "n2")])
    assert [r["v"] for r in got] == ["z", "n2", "m"]
    assert [r["v"] for r in plain.retract(got, [_nr(nan, "?")])] == ["z", "m"]


def test_nested_update_null_key_strategies() -> None:
    merge = _aggregator("nested_update", NESTED_SEQ, nested_key=("id",))
    assert merge.agg([_nr(None, "a")], [_nr(None, "b")]) == [_nr(None, "b")]
    ignore = _aggregator(
        "nested_update", NESTED_SEQ, nested_key=("id",), nested_key_null_strategy="IGNORE"
    )
    assert ignore.agg([_nr(1, "a")], [_nr(None, "b")]) == [_nr(1, "a")]
    assert ignore.retract([_nr(None, "a"), _nr(1, "b")], [_nr(2, "c")]) == [_nr(1, "b")]
    error = _aggregator(
        "nested_update", NESTED_SEQ, nested_key=("id",), nested_key_null_strategy="error"
    )
    message = "^Nested key contains null values. Primary key fields must not be null.$"
    with pytest.raises(MergeError, match=message):
        error.agg(None, [_nr(None, "a")])
    with pytest.raises(MergeError, match=message):
        error.retract([_nr(1, "a")], [_nr(None, "a")])


def test_nested_update_options_are_checked() -> None:
    needs_key = r"^Option 'fields.<field-name>.{}' requires 'fields.<field-name>.nested-key'"
    with pytest.raises(SchemaError, match=needs_key.format("nested-key-null-strategy")):
        _aggregator("nested_update", NESTED_SEQ, nested_key_null_strategy="ignore")
    with pytest.raises(SchemaError, match=needs_key.format("nested-sequence-field")):
        _aggregator("nested_update", NESTED_SEQ, nested_sequence_field=("ts",))
    with pytest.raises(SchemaError, match=r"^Nested sequence field \['nope'\] of field 'f'"):
        _aggregator(
            "nested_update", NESTED_SEQ, nested_key=("id",), nested_sequence_field=("nope",)
        )
    with pytest.raises(SchemaError, match=r"^Nested key \['nope'\] of field 'f'"):
        _aggregator("nested_update", NESTED_SEQ, nested_key=("nope",))
    for bad in ("many", "2147483648"):
        with pytest.raises(SchemaError, match=r"for key 'fields.f.count-limit' as an integer$"):
            _aggregator("nested_update", NESTED_SEQ, count_limit=bad)
    with pytest.raises(SchemaError, match="for nested table column must be 'Array<Row>'"):
        _aggregator("nested_update", pa.list_(pa.int32()))

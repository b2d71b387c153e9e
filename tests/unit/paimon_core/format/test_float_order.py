"""FLOAT/DOUBLE order: integers that compare like Java's ``Double.compare``/``Float.compare``."""

from __future__ import annotations

import math
import struct

import numpy as np
import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from paimon_core.format.float_order import order_key, ordered, with_order_columns

NAN = float("nan")
INF = float("inf")
ODD_NAN = struct.unpack("<d", bytes.fromhex("010000000000f8ff"))[0]  # negative, with payload


def java_double_compare(a: float, b: float) -> int:
    """``java.lang.Double.compare``, written out as the JDK does it."""
    if a < b:
        return -1
    if a > b:
        return 1
    bits_a = struct.unpack("<q", struct.pack("<d", NAN if math.isnan(a) else a))[0]
    bits_b = struct.unpack("<q", struct.pack("<d", NAN if math.isnan(b) else b))[0]
    return 0 if bits_a == bits_b else (-1 if bits_a < bits_b else 1)


def _sign(x: int) -> int:
    return (x > 0) - (x < 0)


JAVA_ORDER = [-INF, -1.5, -0.0, 0.0, 1e-300, 1.5, INF, NAN]


def test_the_order_is_javas_on_the_special_values() -> None:
    for arrow_type in (pa.float64(), pa.float32()):
        shuffled = [1.5, NAN, 0.0, -INF, ODD_NAN, -0.0, INF, -1.5]
        column = ordered(pa.array(shuffled, arrow_type)).to_pylist()
        got = [shuffled[i] for i in np.argsort(column, kind="stable")]
        assert [struct.pack("<d", v) for v in got[:-2]] == [
            struct.pack("<d", v) for v in [-INF, -1.5, -0.0, 0.0, 1.5, INF]
        ]
        assert all(math.isnan(v) for v in got[-2:])
        assert column[1] == column[4]  # every NaN is the same key
    by_key = sorted([NAN, 0.0, INF, -0.0, 1.5, -INF, 1e-300, -1.5], key=order_key)
    assert [struct.pack("<d", v) for v in by_key] == [struct.pack("<d", v) for v in JAVA_ORDER]


def test_nulls_stay_null_and_other_types_pass_through() -> None:
    assert ordered(pa.array([None, 1.0])).to_pylist()[0] is None
    ints = pa.array([3, 1])
    assert ordered(ints) is ints
    chunked = pa.chunked_array([[1.0], [NAN]], pa.float64())
    assert len(ordered(chunked)) == 2


def test_order_columns_are_added_only_for_floats() -> None:
    table = pa.table({"k": [2.0, -0.0], "s": ["a", "b"]})
    extended, names = with_order_columns(table, ["s", "k"])
    assert names[0] == "s" and names[1] != "k"
    assert extended.column(names[1]).to_pylist() == ordered(table.column("k")).to_pylist()
    assert extended.select(["k", "s"]).equals(table)


@given(st.floats(allow_nan=True), st.floats(allow_nan=True))
def test_order_key_agrees_with_double_compare(a: float, b: float) -> None:
    assert _sign(order_key(a) - order_key(b)) == java_double_compare(a, b)
    column = ordered(pa.array([a, b], pa.float64())).to_pylist()
    assert _sign(column[0] - column[1]) == java_double_compare(a, b)


@given(st.floats(width=32, allow_nan=True), st.floats(width=32, allow_nan=True))
def test_float_columns_agree_with_float_compare(a: float, b: float) -> None:
    # Float.compare(a, b) == Double.compare((double) a, (double) b) for every float.
    column = ordered(pa.array([a, b], pa.float32())).to_pylist()
    assert _sign(column[0] - column[1]) == java_double_compare(a, b)
    assert _sign(order_key(a) - order_key(b)) == java_double_compare(a, b)

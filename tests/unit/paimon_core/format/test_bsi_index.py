"""The ``bsi`` file index: Java's ``BitSliceIndexBitmapFileIndex`` layout and O'Neil's
comparisons, checked against every row."""

from __future__ import annotations

import datetime as dt
import random
import struct
from decimal import Decimal

import pyarrow as pa
import pytest
from pyroaring import BitMap

from paimon_core.exceptions import InvalidArgument, SchemaError
from paimon_core.format.bsi_index import BsiReader, BsiWriter
from paimon_core.format.data_file_index import validate_file_index
from paimon_core.format.file_index import REMAIN, java_column
from paimon_core.format.roaring import serialize32
from paimon_core.format.types import BIGINT, DECIMAL, STRING, TIMESTAMP, DataField, DataType

OPS = {
    "=": lambda v, x: v == x,
    "!=": lambda v, x: v != x,
    "<": lambda v, x: v < x,
    "<=": lambda v, x: v <= x,
    ">": lambda v, x: v > x,
    ">=": lambda v, x: v >= x,
}


def _reader(t: DataType, values: pa.Array) -> BsiReader:
    writer = BsiWriter(t, {})
    writer.write(java_column(values, t))
    return BsiReader(t, writer.serialized())


def test_layout() -> None:
    """Rows 5, null, -3, 0 of a BIGINT column, laid out by hand from Java's code."""
    writer = BsiWriter(BIGINT(), {})
    writer.write(java_column(pa.array([5, None, -3, 0], pa.int64()), BIGINT()))
    positive = struct.pack(">bqq", 1, 0, 5) + serialize32([0, 3]) + struct.pack(">i", 3)
    positive += serialize32([0]) + serialize32([]) + serialize32([0])  # 5 = 0b101
    negative = struct.pack(">bqq", 1, 0, 3) + serialize32([2]) + struct.pack(">i", 2)
    negative += serialize32([2]) + serialize32([2])  # |-3| = 0b11
    expected = struct.pack(">bi", 1, 4) + b"\x01" + positive + b"\x01" + negative
    assert writer.serialized() == expected


@pytest.mark.parametrize("seed", [1, 2])
def test_every_comparison_finds_exactly_the_matching_rows(seed: int) -> None:
    rng = random.Random(seed)
    values = [rng.choice([None, rng.randint(-70, 70), rng.randint(-5, 5)]) for _ in range(300)]
    reader = _reader(BIGINT(), pa.array(values, pa.int64()))
    for literal in [-71, -70, -6, -1, 0, 1, 3, 69, 70, 71]:
        for op, test in OPS.items():
            expected = BitMap(i for i, v in enumerate(values) if v is not None and test(v, literal))
            got = reader.visit(op, literal, ()).rows
            assert expected <= got, (op, literal)
            if op != "!=":
                assert got == expected, (op, literal)
    nulls = BitMap(i for i, v in enumerate(values) if v is None)
    assert reader.visit("is_null", None, ()).rows == nulls
    assert len(reader.visit("is_not_null", None, ()).rows) == 300 - len(nulls)
    assert reader.visit("in", None, [3, -5, 1000]).rows == BitMap(
        i for i, v in enumerate(values) if v in (3, -5)
    )


def test_decimals_timestamps_and_undecidable_literals() -> None:
    decimals = _reader(DECIMAL(20, 2), pa.array([Decimal("1.50"), Decimal("-2.25"), None]))
    assert decimals.visit("=", Decimal("1.5"), ()).rows == BitMap([0])
    assert decimals.visit("<", 0, ()).rows == BitMap([1])
    assert decimals.visit("=", Decimal("1.505"), ()) is REMAIN  # not a DECIMAL(20, 2)
    stamps = [dt.datetime(2024, 1, 1, 0, 0, 0, 1000 * i) for i in range(5)]
    t = TIMESTAMP(3)
    reader = _reader(t, pa.array(stamps, pa.timestamp("ms")))
    assert reader.visit(">=", stamps[3], ()).rows == BitMap([3, 4])
    # A literal between two millis is not a TIMESTAMP(3): the index cannot decide.
    assert reader.visit("<", stamps[2] + dt.timedelta(microseconds=500), ()) is REMAIN


def test_types_java_refuses() -> None:
    fields = [DataField(0, "s", STRING())]
    with pytest.raises(SchemaError, match="STRING type is not support to build bsi index yet"):
        validate_file_index(fields, {"file-index.bsi.columns": "s"}, ["s"])
    with pytest.raises(InvalidArgument, match="cannot hold -9223372036854775808"):
        _reader(BIGINT(), pa.array([-(2**63)], pa.int64()))

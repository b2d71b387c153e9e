"""BinaryRow bytes: the test vectors of paimon-format.md §4.2, Java's null forms, nested
values, a property round trip, and byte equality with pypaimon where pypaimon is right."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Context, Decimal
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from paimon_core.exceptions import InvalidArgument, MetadataFormatError
from paimon_core.format.binary_row import (
    EMPTY_ROW,
    decode_row,
    deserialize_row,
    encode_row,
    null_bits_width,
    row_arity,
    row_codec,
    serialize_row,
)
from paimon_core.format.types import (
    ARRAY,
    BIGINT,
    BINARY,
    BOOLEAN,
    BYTES,
    CHAR,
    DATE,
    DECIMAL,
    DOUBLE,
    FLOAT,
    INT,
    MAP,
    MULTISET,
    ROW,
    SMALLINT,
    STRING,
    TIME,
    TIMESTAMP,
    TIMESTAMP_LTZ,
    TINYINT,
    VARCHAR,
    DataField,
    DataType,
    data_type_to_json,
)

TS3 = dt.datetime(2024, 1, 1, 0, 0, 0, 123000)
TS6 = dt.datetime(2024, 1, 1, 0, 0, 0, 123456)

# paimon-format.md §4.2, serialized form (4-byte arity prefix included)
VECTORS = [
    ((), (), "00000000 0000000000000000"),
    (("p1",), (STRING(),), "00000001 0000000000000000 7031000000000082"),
    (
        ("2024-01-01",),
        (STRING(),),
        "00000001 0000000000000000 0a00000010000000 323032342d30312d3031000000000000",
    ),
    ((1,), (BIGINT(),), "00000001 0000000000000000 0100000000000000"),
    ((None,), (INT(),), "00000001 0001000000000000 0000000000000000"),
    ((True,), (BOOLEAN(),), "00000001 0000000000000000 0100000000000000"),
    ((1.5,), (DOUBLE(),), "00000001 0000000000000000 000000000000f83f"),
    ((Decimal("1.50"),), (DECIMAL(10, 2),), "00000001 0000000000000000 9600000000000000"),
    (
        (Decimal("12.34"),),
        (DECIMAL(20, 2),),
        "00000001 0000000000000000 0200000010000000 04d2000000000000 0000000000000000",
    ),
    ((TS3,), (TIMESTAMP(3),), "00000001 0000000000000000 7bf451c28c010000"),
    ((TS6,), (TIMESTAMP(6),), "00000001 0000000000000000 40f5060010000000 7bf451c28c010000"),
    ((None,), (TIMESTAMP(6),), "00000001 0001000000000000 0000000010000000 0000000000000000"),
    (
        (7, "abcdefgh"),
        (INT(), STRING()),
        "00000002 0000000000000000 0700000000000000 0800000018000000 6162636465666768",
    ),
]


@pytest.mark.parametrize(("values", "types", "hex_bytes"), VECTORS)
def test_format_test_vectors(values: tuple, types: tuple, hex_bytes: str) -> None:
    data = bytes.fromhex(hex_bytes.replace(" ", ""))
    assert serialize_row(values, types) == data
    assert encode_row(values, types) == data[4:]
    assert deserialize_row(data, types) == values
    assert deserialize_row(memoryview(data), types) == values
    assert decode_row(data[4:], types) == values
    assert row_arity(data) == len(types)


def test_empty_row_is_twelve_bytes() -> None:
    assert EMPTY_ROW == bytes(12)
    assert deserialize_row(EMPTY_ROW, []) == ()


def _hex(values: Any, types: Any) -> str:
    return encode_row(values, types).hex()


def test_every_fixed_width_type_sits_little_endian_in_its_slot() -> None:
    head = "00" * 8
    assert _hex([-1], [TINYINT()]) == head + "ff00000000000000"
    assert _hex([-2], [SMALLINT()]) == head + "feff000000000000"
    assert _hex([-3], [INT()]) == head + "fdffffff00000000"
    assert _hex([2**63 - 1], [BIGINT()]) == head + "ffffffffffffff7f"
    assert _hex([1.5], [FLOAT()]) == head + "0000c03f00000000"
    assert _hex([False], [BOOLEAN()]) == head + "0000000000000000"
    assert _hex([dt.date(1970, 1, 2)], [DATE()]) == head + "0100000000000000"
    assert _hex([dt.date(1969, 12, 31)], [DATE()]) == head + "ffffffff00000000"
    assert _hex([dt.time(0, 0, 1, 500000)], [TIME()]) == head + "dc05000000000000"
    assert _hex([Decimal("-0.01")], [DECIMAL(18, 2)]) == head + "ffffffffffffffff"


def test_nan_keeps_its_bits_as_java_raw_bits() -> None:
    """Java's ``BinaryRowWriter.writeDouble/writeFloat`` store ``doubleToRawLongBits``."""
    import struct

    odd_nan = struct.unpack("<d", bytes.fromhex("010000000000f8ff"))[0]
    assert encode_row([odd_nan], [DOUBLE()])[8:] == bytes.fromhex("010000000000f8ff")
    odd_float_nan = struct.unpack("<f", bytes.fromhex("0100c0ff"))[0]
    assert encode_row([odd_float_nan], [FLOAT()])[8:12] == bytes.fromhex("0100c0ff")
    assert encode_row([float("nan")], [DOUBLE()])[8:] == bytes.fromhex("000000000000f87f")
    assert math.isnan(decode_row(encode_row([odd_nan], [FLOAT()]), [FLOAT()])[0])
    assert encode_row([-0.0], [DOUBLE()])[8:] == bytes.fromhex("0000000000000080")


def test_strings_up_to_seven_bytes_are_inline() -> None:
    head = "00" * 8
    assert _hex([""], [STRING()]) == head + "0000000000000080"
    assert _hex(["abcdefg"], [STRING()]) == head + "6162636465666787"
    assert _hex(["é"], [VARCHAR(3)]) == head + "c3a9000000000082"  # 2 UTF-8 bytes
    assert _hex([b"\x01\x02"], [BYTES()]) == head + "0102000000000082"
    long = encode_row(["abcdefghi"], [STRING()])
    assert long.hex() == head + "0900000010000000" + "616263646566676869" + "00" * 7
    assert decode_row(long, [STRING()]) == ("abcdefghi",)
    assert decode_row(encode_row([b"\x00" * 9], [BINARY(9)]), [BINARY(9)]) == (b"\x00" * 9,)


@pytest.mark.parametrize(
    ("unscaled", "minimal"),
    [
        (0, "00"),
        (1, "01"),
        (127, "7f"),
        (128, "0080"),
        (-1, "ff"),
        (-128, "80"),  # pypaimon writes ff80 here; Java's BigInteger.toByteArray() writes 80
        (-129, "ff7f"),
        (-32768, "8000"),
        (32767, "7fff"),
        (10**38 - 1, "4b3b4ca85a86c47a098a223fffffffff"),
        (-(10**38) + 1, "b4c4b357a5793b85f675ddc000000001"),
    ],
)
def test_big_decimals_use_minimal_twos_complement(unscaled: int, minimal: str) -> None:
    t = DECIMAL(38, 0)
    row = encode_row([Decimal(unscaled)], [t])
    n = len(minimal) // 2
    assert row[8:16] == (16 << 32 | n).to_bytes(8, "little")
    assert row[16:].hex() == minimal + "00" * (16 - n)
    assert decode_row(row, [t]) == (Decimal(unscaled),)


def test_null_non_compact_values_keep_their_reserved_chunk() -> None:
    types = [DECIMAL(20, 2), INT(), TIMESTAMP_LTZ(9), DECIMAL(19, 0)]
    row = encode_row([None, 5, None, Decimal(3)], types)
    assert row[:8].hex() == "0005000000000000"  # fields 0 and 2 null
    fixed = 8 + 4 * 8
    assert row[8:16] == (fixed << 32).to_bytes(8, "little")
    assert row[24:32] == ((fixed + 16) << 32).to_bytes(8, "little")
    assert row[32:40] == ((fixed + 24) << 32 | 1).to_bytes(8, "little")
    assert len(row) == fixed + 16 + 8 + 16 and row[fixed : fixed + 24] == bytes(24)
    assert decode_row(row, types) == (None, 5, None, Decimal(3))


def test_decimals_round_half_up_and_refuse_overflow() -> None:
    t = [DECIMAL(5, 2)]
    assert decode_row(encode_row([Decimal("1.005")], t), t) == (Decimal("1.01"),)
    assert decode_row(encode_row([Decimal("-1.005")], t), t) == (Decimal("-1.01"),)
    assert decode_row(encode_row([7], t), t) == (Decimal("7.00"),)
    assert decode_row(encode_row(["2.5"], t), t) == (Decimal("2.50"),)
    for bad in (Decimal("1000"), Decimal("999.995"), Decimal("NaN"), "x"):
        with pytest.raises(InvalidArgument):
            encode_row([bad], t)
    big = [DECIMAL(38, 10)]
    value = Decimal("1234567890123456789012345678.0123456789")
    assert decode_row(encode_row([value], big), big) == (value,)


def test_timestamps() -> None:
    before_epoch = dt.datetime(1969, 12, 31, 23, 59, 59, 999999)
    for p in (0, 3, 6, 9):
        t = [TIMESTAMP(p)]
        got = decode_row(encode_row([before_epoch], t), t)[0]
        assert got == (before_epoch if p > 3 else dt.datetime(1969, 12, 31, 23, 59, 59, 999000))
    row = encode_row([before_epoch], [TIMESTAMP(6)])
    assert row[8:16] == (16 << 32 | 999000).to_bytes(8, "little")
    assert row[16:24] == (-1).to_bytes(8, "little", signed=True)
    # LTZ values are UTC instants: aware datetimes are converted, naive ones are UTC already.
    paris = dt.timezone(dt.timedelta(hours=1))
    aware = dt.datetime(2024, 1, 1, 1, 0, 0, 123000, tzinfo=paris)
    assert encode_row([aware], [TIMESTAMP_LTZ(3)]) == encode_row([TS3], [TIMESTAMP_LTZ(3)])
    assert decode_row(encode_row([aware], [TIMESTAMP_LTZ(6)]), [TIMESTAMP_LTZ(6)]) == (TS3,)
    # TIMESTAMP (no zone) keeps the wall clock.
    wall = dt.datetime(2024, 1, 1, 0, 0, 0, 123000, tzinfo=paris)
    assert encode_row([wall], [TIMESTAMP(3)]) == encode_row([TS3], [TIMESTAMP(3)])


def test_header_byte_is_the_row_kind_and_wide_rows_grow_the_bit_set() -> None:
    assert encode_row([1], [INT()], row_kind=3)[0] == 3
    # Java: ((arity + 63 + 8) / 64) * 8 (paimon-format.md's "0..55" is off by one)
    assert [null_bits_width(n) for n in (0, 56, 57, 120, 121)] == [8, 8, 16, 16, 24]
    types = [INT()] * 60
    values = [None if i % 7 == 0 else i for i in range(60)]
    row = encode_row(values, types)
    assert len(row) == 16 + 60 * 8
    assert row[1] == 0x81 and row[8] == 0x01  # fields 0, 7 and 56 are null
    assert decode_row(row, types) == tuple(values)


def test_nested_array_map_and_row() -> None:
    t = ARRAY(INT())
    row = encode_row([[1, None, 3]], [t])
    # BinaryArray: count, null bits (4 bytes), 3 int slots; its size is the padded fixed part
    array = bytes.fromhex("030000000200000001000000000000000300000000000000")
    assert row[8:16] == (16 << 32 | 24).to_bytes(8, "little")
    assert row[16:] == array
    assert decode_row(row, [t]) == ([1, None, 3],)
    types = [
        MAP(STRING(), ARRAY(STRING())),
        ROW([DataField(0, "a", DECIMAL(20, 2)), DataField(1, "b", TIMESTAMP(6))]),
        MULTISET(BIGINT()),
        ARRAY(BOOLEAN()),
        ARRAY(ROW([DataField(0, "x", SMALLINT())])),
    ]
    values = (
        {"k": ["a long string value", None], "short": []},
        (Decimal("-1.28"), TS6),
        {5: 2, 7: 1},
        [True, False, None],
        [(1,), None, (-2,)],
    )
    assert decode_row(encode_row(values, types), types) == values
    named = encode_row([{"b": TS6, "a": Decimal("1.00")}], [types[1]])
    assert decode_row(named, [types[1]]) == ((Decimal("1.00"), TS6),)
    assert decode_row(encode_row([[5, 5, 7]], [types[2]]), [types[2]]) == ({5: 2, 7: 1},)


def test_bad_values_and_bad_bytes_raise_domain_errors() -> None:
    with pytest.raises(InvalidArgument):
        encode_row([1, 2], [INT()])
    with pytest.raises(InvalidArgument):
        encode_row([128], [TINYINT()])
    with pytest.raises(InvalidArgument):
        encode_row([5], [STRING()])
    with pytest.raises(InvalidArgument):
        encode_row(["x"], [DATE()])
    data = serialize_row([1, "abcdefghijk"], [INT(), STRING()])
    with pytest.raises(MetadataFormatError, match="arity 2, expected 1"):
        deserialize_row(data, [INT()])
    with pytest.raises(MetadataFormatError):
        deserialize_row(data[:10], [INT(), STRING()])
    with pytest.raises(MetadataFormatError):
        deserialize_row(b"\x00", [])


def test_codec_is_cached() -> None:
    """One codec per type list (bench/ measures its speed)."""
    types = [STRING(), INT(), DATE()]
    assert row_codec(types) is row_codec(tuple(types))
    values = ["2024-01-01", 5, dt.date(2024, 1, 1)]
    assert list(deserialize_row(serialize_row(values, types), types)) == values


# ------------------------------------------------------------------ property round trip


def _values_for(t: DataType) -> st.SearchStrategy[Any]:
    root = t.root
    if root == "BOOLEAN":
        return st.booleans()
    if root in ("TINYINT", "SMALLINT", "INT", "BIGINT"):
        bits = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64}[root]
        return st.integers(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    if root == "FLOAT":
        return st.floats(width=32, allow_nan=False)
    if root == "DOUBLE":
        return st.floats(allow_nan=False)
    if root == "DECIMAL":
        limit = 10**t.precision - 1  # type: ignore[operator]
        return st.integers(-limit, limit).map(lambda u: Decimal(f"{u}e-{t.scale}"))
    if root in ("CHAR", "VARCHAR"):
        return st.text(max_size=20)
    if root in ("BINARY", "VARBINARY"):
        return st.binary(max_size=20)
    if root == "DATE":
        return st.dates()
    if root == "TIME":
        return st.times().map(lambda v: v.replace(microsecond=v.microsecond // 1000 * 1000))
    if root in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        values = st.datetimes(dt.datetime(1000, 1, 1), dt.datetime(9000, 1, 1))
        if t.precision <= 3:  # type: ignore[operator]
            return values.map(lambda v: v.replace(microsecond=v.microsecond // 1000 * 1000))
        return values
    if root == "ARRAY":
        return st.lists(st.none() | _values_for(t.element), max_size=4)  # type: ignore[arg-type]
    raise AssertionError(root)


_types = st.one_of(
    st.sampled_from(
        [
            BOOLEAN(),
            TINYINT(),
            SMALLINT(),
            INT(),
            BIGINT(),
            FLOAT(),
            DOUBLE(),
            STRING(),
            CHAR(3),
            BYTES(),
            DATE(),
            TIME(3),
            TIMESTAMP(3),
            TIMESTAMP(6),
            TIMESTAMP(9),
            TIMESTAMP_LTZ(3),
            TIMESTAMP_LTZ(6),
            ARRAY(STRING()),
            ARRAY(DECIMAL(20, 2)),
            ARRAY(TIMESTAMP(6)),
        ]
    ),
    st.builds(lambda p, s: DECIMAL(p, min(s, p)), st.integers(1, 38), st.integers(0, 10)),
)


@st.composite
def _rows(draw: st.DrawFn) -> tuple[list[DataType], list[Any]]:
    types = draw(st.lists(_types, max_size=70))
    values = [draw(st.none() | _values_for(t)) for t in types]
    return types, values


@settings(max_examples=200, deadline=None)
@given(_rows())
def test_encode_decode_round_trip(row: tuple[list[DataType], list[Any]]) -> None:
    types, values = row
    data = serialize_row(values, types)
    assert len(data) % 8 == 4
    assert deserialize_row(data, types) == tuple(values)
    assert data[4:] == encode_row(values, types)


# --------------------------------------------------------------- pypaimon byte equality


def _pypaimon_bytes(values: list[Any], types: list[DataType]) -> bytes:
    from pypaimon.schema.data_types import AtomicType
    from pypaimon.schema.data_types import DataField as PyField
    from pypaimon.table.row.generic_row import GenericRow, GenericRowSerializer

    fields = [PyField(i, f"f{i}", AtomicType(data_type_to_json(t))) for i, t in enumerate(types)]  # type: ignore[arg-type]
    return GenericRowSerializer.to_bytes(GenericRow(values, fields))


_pypaimon_types = st.sampled_from(
    [BOOLEAN(), TINYINT(), SMALLINT(), INT(), BIGINT(), FLOAT(), DOUBLE(), STRING(), VARCHAR(9),
     CHAR(2), BYTES(), BINARY(3), DATE(), TIME(0), TIMESTAMP(3), TIMESTAMP(6), TIMESTAMP_LTZ(3),
     DECIMAL(10, 2), DECIMAL(18, 0), DECIMAL(25, 5), DECIMAL(38, 10)]
)  # fmt: skip


def _pypaimon_is_right(t: DataType, v: Any) -> bool:
    """§4.1 pypaimon deviations: null non-compact values, negative powers of two."""
    if t.is_compact:
        return True
    if v is None:
        return False
    if t.root == "DECIMAL":
        unscaled = int(v.scaleb(t.scale, Context(prec=100)))
        return not (unscaled < 0 and (-unscaled) & (-unscaled - 1) == 0)
    return True


@settings(max_examples=100, deadline=None)
@given(st.lists(_pypaimon_types, min_size=1, max_size=12).flatmap(
    lambda ts: st.tuples(st.just(ts), st.tuples(*[st.none() | _values_for(t) for t in ts]))))  # fmt: skip
def test_same_bytes_as_pypaimon_where_pypaimon_follows_java(
    row: tuple[list[DataType], tuple[Any, ...]],
) -> None:
    types, values = row
    assume(all(_pypaimon_is_right(t, v) for t, v in zip(types, values)))
    assert serialize_row(values, types) == _pypaimon_bytes(list(values), types)


def test_pypaimon_deviations_are_where_the_format_note_says() -> None:
    t = [DECIMAL(20, 0)]
    assert serialize_row([Decimal(-128)], t) != _pypaimon_bytes([Decimal(-128)], t)
    assert serialize_row([None], [TIMESTAMP(6)]) != _pypaimon_bytes([None], [TIMESTAMP(6)])
    assert serialize_row([Decimal(-127)], t) == _pypaimon_bytes([Decimal(-127)], t)

"""Bucket hashing: §6.3 vectors, buckets Java 0.9 chose (recorded with paimon-oracle), the
HASH index file pypaimon wrote, and the vectorised Arrow path against the per-row one."""

from __future__ import annotations

import datetime as dt
import random
import struct
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paimon_core.exceptions import InvalidArgument
from paimon_core.format.types import (
    BIGINT,
    BINARY,
    BOOLEAN,
    BYTES,
    DATE,
    DECIMAL,
    DOUBLE,
    FLOAT,
    INT,
    SMALLINT,
    STRING,
    TIME,
    TIMESTAMP,
    TIMESTAMP_LTZ,
    TINYINT,
    VARCHAR,
    DataType,
    to_arrow_type,
)
from paimon_core.operations.bucket import (
    assign_buckets,
    bucket_for_hash,
    hash_keys,
    murmur_hash,
    row_hash,
)


@pytest.mark.parametrize(
    ("values", "types", "expected_hash", "bucket_of_4"),
    [
        ([1], [INT()], 1465514398, 2),
        ([1], [BIGINT()], 1465514398, 2),
        ([42], [INT()], 907821237, 1),
        (["a"], [STRING()], 943281246, 2),
        (["hello world!"], [STRING()], 609810467, 3),
    ],
)
def test_format_vectors(
    values: list[Any], types: list[DataType], expected_hash: int, bucket_of_4: int
) -> None:
    assert row_hash(values, types) == expected_hash
    assert bucket_for_hash(expected_hash, 4) == bucket_of_4
    assert hash_keys([pa.array(values)], types).tolist() == [expected_hash]


def test_bigint_keys_1_to_4_with_2_buckets() -> None:
    assert assign_buckets([pa.array([1, 2, 3, 4])], [BIGINT()], 2).tolist() == [0, 0, 1, 0]


def test_java_math_abs_of_truncating_remainder() -> None:
    assert bucket_for_hash(-7, 4) == 3  # Java: -7 % 4 == -3
    assert bucket_for_hash(-(2**31), 3) == 2
    assert bucket_for_hash(2**31 - 1, 10) == 7
    with pytest.raises(InvalidArgument):
        bucket_for_hash(1, 0)


def test_hash_index_file_written_by_pypaimon() -> None:
    # pypaimon-golden-dumps/05-pkdyn-index-files-hex.txt: keys k = 1..5 (BIGINT)
    index = bytes.fromhex("d206e5470f8248f44fe4bbf0564770ca5759f99e")
    hashes = struct.unpack(">5i", index)
    assert sorted(hashes) == sorted(row_hash([k], [BIGINT()]) for k in range(1, 6))
    assert sorted(hash_keys([pa.array(range(1, 6))], [BIGINT()]).tolist()) == sorted(hashes)


def test_murmur_needs_whole_words() -> None:
    assert murmur_hash(b"") == murmur_hash(b"", 42)
    with pytest.raises(InvalidArgument):
        murmur_hash(b"abc")


# Buckets Java 0.9 assigned (paimon-oracle: PK table, bucket=7, one row per partition; the
# bucket key is every non-partition PK column). d is DECIMAL(20, 2): a non-compact decimal.
JAVA_COMPOSITE_TYPES = [STRING(False), INT(False), DECIMAL(20, 2, False), DECIMAL(10, 3, False),
    TIMESTAMP(6, False), TIMESTAMP(3, False), DATE(False), BOOLEAN(False), TINYINT(False),
    SMALLINT(False), BIGINT(False), FLOAT(False), DOUBLE(False), BYTES(False), TIME(3, False)]  # fmt: skip
JAVA_COMPOSITE = [
    (("bxzaa€yacy", 31936245, "-84145533240621586.32", "-101982.131", "3059-01-24 20:10:55.088527", "1979-03-15 15:46:38.169", "2052-05-05", True, -65, -3508, -1905908760335480075, -2.25, 1.5, "abbacacb", "17:52:43.185"), 3),
    (("yyz", -1340583739, "4107574717109330.47", "329312.984", "4227-01-15 07:10:07.132127", "1978-08-08 10:04:07.892", "2053-06-12", False, 110, 26631, -3693646940721862312, -2.25, -2.25, "c", "09:33:31.896"), 0),
    (("zxcyaayxb€", -678365138, "-9802228693947648.3", "-915803.061", "5011-08-17 23:29:00.735988", "1986-07-20 08:40:00.134", "2100-04-10", False, 32, 11812, 8202918413664118839, 3.25, 1.5, "", "23:44:19.662"), 2),
    (("z€xczxzcaxcbyaxab€", -912972903, "-54323125725693619.46", "-160441.906", "2328-01-01 14:01:50.475324", "1975-07-16 05:46:49.498", "2044-02-19", False, -58, 23661, 926387336645580297, 3.25, 0.0, "baaaaaacaa", "15:53:37.186"), 6),
    (("cabxycyy", 1029867649, "-26569114418888740.77", "-153633.706", "4159-01-11 23:11:58.834732", "1973-12-19 23:28:37.131", "1922-05-04", True, -22, 24985, -7195552666719833179, 1.5, 1.5, "", "18:09:34.103"), 2),
    (("yaa€byxbzcc", 439285775, "-77339607742591801.42", "823078.163", "4088-02-03 08:54:44.614051", "1976-10-21 05:50:58.664", "2011-11-30", True, -76, 12141, -4339469364529485723, -2.25, 1e300, "", "06:33:23.150"), 2),
    (("a€ycz€az€cycbc€by", 11583627, "57282252597400317.46", "731040.585", "2995-06-24 10:31:04.498941", "1977-12-28 16:38:44.273", "2076-11-02", True, -114, -29107, -4069009703114052730, 0.0, -2.25, "cbbcbbaaaab", "06:21:13.494"), 5),
    (("x€b€", 1605917709, "-53544676720648783.82", "-370858.904", "3058-07-02 15:56:23.192022", "1980-07-08 12:04:34.080", "2016-12-26", True, 86, -15588, 7336343977526925040, 3.25, 1e300, "ca", "16:32:01.893"), 4),
    (("€bya€€bbbxyzay", -1882246710, "-89518085389004591.69", "-589173.204", "2152-09-17 17:13:06.826640", "1963-07-05 03:30:18.586", "2082-03-14", True, -114, -24463, 5669830812716328168, -2.25, 1e300, "caba", "13:07:25.452"), 6),
]  # fmt: skip


def _python_value(value: Any, t: DataType) -> Any:
    if value is None:
        return None
    if t.root == "DECIMAL":
        return Decimal(value)
    if t.is_timestamp:
        return dt.datetime.fromisoformat(value)
    if t.root == "DATE":
        return dt.date.fromisoformat(value)
    if t.root == "TIME":
        return dt.time.fromisoformat(value)
    if t.root == "VARBINARY":
        return value.encode()
    return value


def test_buckets_java_assigned_to_composite_primary_keys() -> None:
    types = JAVA_COMPOSITE_TYPES
    rows = [[_python_value(v, t) for v, t in zip(r, types)] for r, _ in JAVA_COMPOSITE]
    expected = [b for _, b in JAVA_COMPOSITE]
    assert [bucket_for_hash(row_hash(r, types), 7) for r in rows] == expected
    columns = [pa.array([r[i] for r in rows], to_arrow_type(t)) for i, t in enumerate(types)]
    assert assign_buckets(columns, types, 7).tolist() == expected
    # Without the non-compact decimal the vectorised builder handles every column.
    keep = [i for i, t in enumerate(types) if t.is_compact or t.root in ("VARCHAR", "VARBINARY")]
    keep_types = [types[i] for i in keep]
    assert hash_keys([columns[i] for i in keep], keep_types).tolist() == [
        row_hash([r[i] for i in keep], keep_types) for r in rows
    ]


# Append table, bucket=5, bucket-key=k,n,ts: Java hashes nulls with their null bits, and a
# null TIMESTAMP(6) with its reserved variable-part chunk.
JAVA_NULLABLE = [
    ((None, None, None), 3), (("cca", -243, "2024-02-11 12:00:00.123451"), 0),
    (("bccacabbc", -521, "2024-03-12 12:00:00.123452"), 0), (("cbc", None, "2024-04-13 12:00:00.123453"), 2),
    ((None, 713, "2024-05-14 12:00:00.123454"), 2), (("bbcaacac", -202, None), 1),
    (("acaacababbc", None, "2024-07-16 12:00:00.123456"), 1), ((None, 13, "2024-09-18 12:00:00.123458"), 3),
    (("cbbcbcbccbca", 851, None), 4), ((None, None, "2024-04-12 12:00:00.123452"), 3),
    (("aabc", None, None), 0), ((None, -10, "2024-08-16 12:00:00.123456"), 2),
    (("b", None, "2024-01-18 12:00:00.123458"), 3), ((None, 574, None), 1),
    (("bbabb", -58, None), 2), ((None, -472, "2024-02-18 12:00:00.123458"), 4),
]  # fmt: skip


def test_buckets_java_assigned_to_nullable_bucket_keys() -> None:
    types = [STRING(), INT(), TIMESTAMP(6)]
    rows = [[_python_value(v, t) for v, t in zip(r, types)] for r, _ in JAVA_NULLABLE]
    expected = [b for _, b in JAVA_NULLABLE]
    assert [bucket_for_hash(row_hash(r, types), 5) for r in rows] == expected
    columns = [pa.array([r[i] for r in rows], to_arrow_type(t)) for i, t in enumerate(types)]
    assert assign_buckets(columns, types, 5).tolist() == expected


# -------------------------------------------------------- vectorised == per-row, pypaimon


def test_murmur_matches_pypaimon() -> None:
    from pypaimon.write.row_key_extractor import _hash_bytes_by_words

    rng = random.Random(5)
    for _ in range(300):
        data = rng.randbytes(4 * rng.randint(0, 40))
        theirs = _hash_bytes_by_words(data)
        assert murmur_hash(data) == (theirs - 2**32 if theirs >= 2**31 else theirs)


_VECTOR_TYPES = [BOOLEAN(), TINYINT(), SMALLINT(), INT(), BIGINT(), FLOAT(), DOUBLE(), DATE(),
    TIME(3), DECIMAL(9, 2), DECIMAL(18, 0), TIMESTAMP(3), TIMESTAMP(6), TIMESTAMP(9),
    TIMESTAMP_LTZ(3), TIMESTAMP_LTZ(6), STRING(), VARCHAR(20), BYTES(), BINARY(4),
    DECIMAL(30, 4)]  # fmt: skip


def _strategy(t: DataType) -> st.SearchStrategy[Any]:
    root = t.root
    if root == "BOOLEAN":
        return st.booleans()
    if t.is_integer:
        bits = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64}[root]
        return st.integers(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    if root in ("FLOAT", "DOUBLE"):
        return st.floats(width=32 if root == "FLOAT" else 64)
    if root == "DECIMAL":
        limit = 10**t.precision - 1  # type: ignore[operator]
        return st.integers(-limit, limit).map(lambda u: Decimal(f"{u}e-{t.scale}"))
    if t.is_string:
        return st.text(max_size=24)
    if t.is_binary:
        return st.binary(min_size=4, max_size=4) if root == "BINARY" else st.binary(max_size=24)
    if root == "DATE":
        return st.dates()
    if root == "TIME":
        return st.times().map(lambda v: v.replace(microsecond=v.microsecond // 1000 * 1000))
    return st.datetimes(dt.datetime(1677, 9, 22), dt.datetime(2262, 4, 11))


@st.composite
def _columns(draw: st.DrawFn) -> tuple[list[DataType], list[list[Any]]]:
    types = draw(st.lists(st.sampled_from(_VECTOR_TYPES), min_size=1, max_size=5))
    n = draw(st.integers(1, 12))
    columns = [draw(st.lists(st.none() | _strategy(t), min_size=n, max_size=n)) for t in types]
    return types, columns


@settings(max_examples=200, deadline=None)
@given(_columns())
def test_vectorised_hashes_equal_per_row_hashes(data: tuple[list[DataType], list[list]]) -> None:
    types, columns = data
    arrays = [pa.array(c, to_arrow_type(t)) for c, t in zip(columns, types)]
    expected = [row_hash(list(row), types) for row in zip(*columns)]
    assert hash_keys(arrays, types).tolist() == expected


def test_arrow_layout_variants_hash_alike() -> None:
    values = ["a", None, "longer than seven", "", "€uro", "x" * 40] * 3
    expected = [row_hash([v], [STRING()]) for v in values]
    base = pa.array(values)
    for variant in (
        pa.array(values, pa.large_string()),
        pa.array(values, pa.string_view()),
        base.dictionary_encode(),
        pa.chunked_array([base[:5], base[5:]]),
        pa.concat_arrays([pa.array(["skip", "me"]), base]).slice(2),
    ):
        assert hash_keys([variant], [STRING()]).tolist() == expected
    ints = pa.array([1, None, 3], pa.int64())
    assert hash_keys([ints], [INT()]).tolist() == [row_hash([v], [INT()]) for v in [1, None, 3]]
    us = pa.array([dt.datetime(1969, 12, 31, 23, 59, 59, 999999)], pa.timestamp("us"))
    assert hash_keys([us], [TIMESTAMP(3)]).tolist() == [
        row_hash([dt.datetime(1969, 12, 31, 23, 59, 59, 999000)], [TIMESTAMP(3)])
    ]


def test_bad_key_columns() -> None:
    with pytest.raises(InvalidArgument):
        hash_keys([], [])
    with pytest.raises(InvalidArgument):
        hash_keys([pa.array([1]), pa.array([1, 2])], [INT(), INT()])
    with pytest.raises(InvalidArgument):
        hash_keys([pa.array([300])], [TINYINT()])
    with pytest.raises(InvalidArgument):
        assign_buckets([pa.array([1])], [INT()], 0)
    assert hash_keys([pa.array([], pa.int32())], [INT()]).tolist() == []


def test_assign_buckets_matches_pypaimon_fixed_bucket_extractor() -> None:
    from pypaimon.schema.table_schema import TableSchema as PyTableSchema
    from pypaimon.write.row_key_extractor import FixedBucketRowKeyExtractor

    from paimon_core.format.schema import new_table_schema, schema_to_json

    schema = new_table_schema(
        [("k", STRING()), ("n", INT()), ("dt", STRING())],
        partition_keys=["dt"],
        primary_keys=["k", "n", "dt"],
        options={"bucket": "6"},
    )
    rng = random.Random(9)
    keys = ["".join(rng.choices("ab€z", k=rng.randint(0, 15))) for _ in range(300)]
    ns = [rng.randint(-(2**31), 2**31 - 1) for _ in range(300)]
    batch = pa.record_batch({"k": keys, "n": pa.array(ns, pa.int32()), "dt": ["d"] * 300})
    theirs = FixedBucketRowKeyExtractor(PyTableSchema.from_json(schema_to_json(schema)))
    ours = assign_buckets([batch.column("k"), batch.column("n")], [STRING(), INT()], 6)
    assert ours.tolist() == theirs._extract_buckets_batch(batch)


def test_vectorised_assignment_matches_the_per_row_path() -> None:
    """The vectorised hash over 20,000 rows equals the per-row BinaryRow hash (its speed is
    a bench/ matter)."""
    n = 20_000
    ints = pa.array(np.arange(n, dtype=np.int64))
    strings = pa.array([f"key-{i}" for i in range(n)])
    got = assign_buckets([ints, strings], [BIGINT(), STRING()], 16).tolist()
    sample = range(0, n, 997)
    expected = [
        bucket_for_hash(row_hash([i, f"key-{i}"], [BIGINT(), STRING()]), 16) for i in sample
    ]
    assert [got[i] for i in sample] == expected


def test_float_keys_hash_their_raw_bits_as_java() -> None:
    """Java hashes the BinaryRow of the key, whose FLOAT/DOUBLE slots hold the raw bits:
    a NaN with another bit pattern, or -0.0 against 0.0, may land in another bucket."""
    odd_nan = struct.unpack("<d", bytes.fromhex("010000000000f8ff"))[0]
    doubles = [odd_nan, float("nan"), -0.0, 0.0]
    expected = [
        murmur_hash(bytes(8) + bytes.fromhex(h))
        for h in ("010000000000f8ff", "000000000000f87f", "0000000000000080", "0000000000000000")
    ]
    assert hash_keys([pa.array(doubles)], [DOUBLE()]).tolist() == expected
    assert [row_hash([v], [DOUBLE()]) for v in doubles] == expected
    float_bits = np.array([0xFFC00001, 0x7FC00000, 0x80000000], dtype=np.uint32)
    floats = pa.array(float_bits.view(np.float32))
    expected = [murmur_hash(bytes(8) + struct.pack("<I", b) + bytes(4)) for b in float_bits]
    assert hash_keys([floats], [FLOAT()]).tolist() == expected
    assert [row_hash([v], [FLOAT()]) for v in floats.to_pylist()] == expected

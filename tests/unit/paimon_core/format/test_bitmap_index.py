"""The ``bitmap`` file index: V1 bytes equal Java 0.9's, V2 as Java's ``BitmapFileIndexMetaV2``
lays them out, readers of both."""

from __future__ import annotations

import random
import struct
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pytest
from pyroaring import BitMap

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import InvalidArgument
from paimon_core.format.bitmap_index import BitmapReader, BitmapWriter, binary_string_hash
from paimon_core.format.data_file_index import BytesSource, DataFileIndexWriter, evaluate
from paimon_core.format.file_index import REMAIN, BitmapResult, file_index_options, java_column
from paimon_core.format.roaring import serialize32
from paimon_core.format.types import DECIMAL, FLOAT, INT, STRING, DataField
from tests.unit.paimon_core.format.index_twins import containers, java_filtered_reads, twins

COLUMNS = "i,b,s,f,d,dt,ts,tu,t,sm"
SCHEMA = (
    "i INT, b BIGINT, s STRING, f FLOAT, d DOUBLE, dt DATE, ts TIMESTAMP(3), tu TIMESTAMP(6), "
    "t TINYINT, sm SMALLINT"
)


def _rows() -> list[dict[str, Any]]:
    rng = random.Random(3)
    rows = []
    for _ in range(300):
        k = rng.randint(0, 40)
        rows.append(
            {
                "i": k if k % 7 else None,
                "b": k * 1000003 - 5 if k % 5 else None,
                "s": f"s{k}é" if k % 3 else None,
                "f": [1.5, -0.0, 0.0, "NaN", 3.25][k % 5],
                "d": [2.5, -0.0, 0.0, "NaN", -7.0][k % 5] if k % 4 else None,
                "dt": f"2024-01-{1 + k % 28:02d}",
                "ts": f"2024-01-01 12:00:{k % 60:02d}.{k:03d}",
                "tu": f"1969-12-31 23:59:59.{k:06d}",
                "t": k - 20,
                "sm": k * 300 - 6000,
            }
        )
    rows.append({"i": 12345, "s": "unique"})  # values of one row: no bitmap, -1 - row
    return rows


def test_v1_equals_javas(warehouse: str, oracle: Callable[..., Any]) -> None:
    """Paimon 0.9 writes V1 only; ``version`` = 1 makes ours V1 too. Strings hash with
    Paimon's Murmur (Java's ``HashMap`` order of values), floats by their bits."""
    options = {"file-index.bitmap.columns": COLUMNS, "file-index.in-manifest-threshold": "1 b"}
    options |= {f"file-index.bitmap.{c}.version": "1" for c in COLUMNS.split(",")}
    java, ours = twins(warehouse, oracle, SCHEMA, options, [_rows()])
    (java_bytes,), (our_bytes,) = containers(java), containers(ours)
    assert len(our_bytes) > 10_000 and our_bytes == java_bytes


def test_binary_string_hash_equals_javas() -> None:
    """``BinaryString.fromString(s).hashCode()`` as a JVM printed them."""
    assert [binary_string_hash(s.encode()) for s in ("", "a", "abcd", "héllo", "s12é")] == [
        JAVA_HASHES[s] for s in ("", "a", "abcd", "héllo", "s12é")
    ]


JAVA_HASHES = {"": 142593372, "a": 1485273170, "abcd": -396302900, "héllo": 1212979866,
               "s12é": 1275872104}  # fmt: skip


def test_v2_layout() -> None:
    """Rows 5, 7, 5, null, 9 of an INT column, laid out by hand from Java's code."""
    writer = BitmapWriter(INT(), {})
    writer.write(java_column(pa.array([5, 7, 5, None, 9], pa.int32()), INT()))
    five = serialize32([0, 2])
    expected = struct.pack(">bii?ii", 2, 5, 3, True, -4, len(serialize32([3])))
    expected += struct.pack(">i", 1) + struct.pack(">ii", 5, 0)  # one block: first key, offset
    expected += struct.pack(">i", 4 + 3 * 12)  # the blocks' size
    expected += struct.pack(">i", 3)
    expected += struct.pack(">iii", 5, 0, len(five))
    expected += struct.pack(">iii", 7, -2, -1) + struct.pack(">iii", 9, -5, -1)
    assert writer.serialized() == expected + five


def test_v2_blocks_split_at_the_block_size() -> None:
    strings = [f"value-{i:03d}" for i in range(60)] * 2 + [None, None, "once"]
    t = STRING()
    v2 = BitmapWriter(t, {"index-block-size": "100 b"})
    v2.write(java_column(pa.array(strings), t))
    payload = v2.serialized()
    blocks = struct.unpack_from(">i", payload, 18)[0]
    assert blocks == 60 // 4 + 1  # 4 entries of 21 bytes fit after each block's count
    reader = BitmapReader(t, payload)
    assert reader.visit("=", "value-042", ()).rows == BitMap([42, 102])
    assert reader.visit("=", "once", ()).rows == BitMap([122])
    assert reader.visit("is_null", None, ()).rows == BitMap([120, 121])
    assert len(reader.visit("is_not_null", None, ()).rows) == 121
    assert reader.visit("in", None, ["nope", "value-000"]).rows == BitMap([0, 60])
    assert not reader.visit("=", "nope", ()).remain()
    assert len(reader.visit("!=", "value-000", ()).rows) == 121
    assert reader.visit("<", "a", ()) is REMAIN


@pytest.mark.parametrize("version", ["1", "2"])
def test_readers_of_both_versions_find_every_row(version: str) -> None:
    floats = [0.5, -0.0, 0.0, float("nan"), None, 0.5, 2.0]
    t = FLOAT()
    writer = BitmapWriter(t, {"version": version})
    writer.write(java_column(pa.array(floats, pa.float32()), t))
    reader = BitmapReader(t, writer.serialized())
    assert reader.visit("=", 0.0, ()).rows == BitMap([1, 2])  # SQL: 0.0 = -0.0
    assert reader.visit("=", float("nan"), ()).rows == BitMap([3])
    assert reader.visit("=", 0.5, ()).rows == BitMap([0, 5])
    assert reader.visit("=", 0.1, ()) is REMAIN  # not a FLOAT value
    assert reader.visit("is_null", None, ()).rows == BitMap([4])


def test_rows_of_several_indexed_columns_intersect() -> None:
    fields = [DataField(0, "a", INT()), DataField(1, "b", STRING())]
    options = file_index_options({"file-index.bitmap.columns": "a,b"})
    writer = DataFileIndexWriter(fields, options)
    writer.write(pa.table({"a": pa.array([1, 2, 1, 3], pa.int32()), "b": ["x", "y", "y", None]}))
    source = BytesSource(writer.container())
    types = {"a": INT(), "b": STRING()}
    both = evaluate(source, "mem", types, [("a", "=", 1), ("b", "=", "y")])
    assert isinstance(both, BitmapResult) and both.rows == BitMap([2])
    assert not evaluate(source, "mem", types, [("a", "=", 3), ("b", "=", "x")]).remain()
    assert not evaluate(source, "mem", types, [("a", "=", 2), ("b", "is_null", None)]).remain()
    assert evaluate(source, "mem", types, [("a", "in", (2, 3)), ("b", "is_null", None)]).remain()


def test_types_java_refuses() -> None:
    with pytest.raises(InvalidArgument, match="Does not support decimal"):
        BitmapWriter(DECIMAL(10, 2), {})
    with pytest.raises(InvalidArgument, match="invalid version: 3"):
        BitmapWriter(INT(), {"version": "3"})
    with pytest.raises(InvalidArgument, match="plugin version is lower than 3"):
        BitmapReader(INT(), b"\x03" + b"\x00" * 12)


def test_java_09_reads_tables_with_v2_bitmaps_unfiltered(
    warehouse: str, oracle: Callable[..., Any], tmp_path: Any
) -> None:
    """V2 is what Paimon 1.0+ writes; Paimon 0.9 reads such a table, but its reader of a
    V2 bitmap fails (``your plugin version is lower than 2``) once a filter consults it,
    as with a table Java 1.x wrote: ``version`` = 1 is for 0.9 readers."""
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    schema = pa.schema([("k", pa.int32()), ("b", pa.int32())])
    table = catalog.create_table("db.t", schema, options={"file-index.bitmap.columns": "b"})
    table.write_arrow(pa.table({"k": [1, 2, 3], "b": [5, 6, 5]}, schema))
    (entry,) = table.new_scan().read_entries(table.latest_snapshot())
    assert entry.file.embedded_index is not None
    assert sorted(r["k"] for r in oracle("read", warehouse, "db.t")) == [1, 2, 3]
    with pytest.raises(RuntimeError, match="your plugin version is lower than 2"):
        java_filtered_reads(tmp_path, warehouse, "db.t", [("b", 5)])

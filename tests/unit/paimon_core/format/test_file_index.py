"""The file index container (Java's ``FileIndexFormat``) and the ``file-index.*`` options."""

from __future__ import annotations

import io
import struct

import pytest

from paimon_core.exceptions import InvalidArgument, MetadataFormatError
from paimon_core.format.file_index import (
    MAGIC,
    FileIndexMeta,
    file_index_options,
    file_index_read_enabled,
    java_hash_order,
    java_string_hash,
    read_header,
    read_index_metas,
    write_container,
)


def _utf(text: bytes) -> bytes:
    return struct.pack(">H", len(text)) + text


def _container(columns: list[tuple[bytes, list[tuple[bytes, int, int]]]]) -> bytes:
    """A header as Java's ``FileIndexFormat.Writer`` lays it out, then a dummy body."""
    head = struct.pack(">i", len(columns))
    for name, indexes in columns:
        head += _utf(name) + struct.pack(">i", len(indexes))
        for kind, start, length in indexes:
            head += _utf(kind) + struct.pack(">ii", start, length)
    head += struct.pack(">i", 0)  # redundant length
    return struct.pack(">qii", MAGIC, 1, 16 + len(head)) + head + b"\x00" * 64


def test_header_in_java_hash_map_order() -> None:
    data = _container(
        [
            (b"v", [(b"bloom-filter", 60, 40), (b"bitmap", -1, 0)]),
            (b"id", [(b"bitmap", 100, 12)]),
            (b"n\xc0\x80\xed\xa0\xbd\xed\xb8\x80", [(b"bitmap", 112, 3)]),
        ]
    )
    metas = read_index_metas(io.BytesIO(data).read, "mem")
    assert metas == [  # java.util.HashMap's order (checked with a JVM)
        FileIndexMeta("v", "bloom-filter", 40, False),
        FileIndexMeta("v", "bitmap", 0, True),
        FileIndexMeta("n\x00\U0001f600", "bitmap", 3, False),
        FileIndexMeta("id", "bitmap", 12, False),
    ]


def test_java_hashes() -> None:
    """Values printed by a JVM: ``String.hashCode`` and ``HashMap.keySet()`` orders."""
    assert java_string_hash("id") == 3355
    assert java_string_hash("bloom-filter") == 862074498
    assert java_string_hash("bitmap") == -1388777169 & 0xFFFFFFFF
    assert java_hash_order(["bloom-filter", "bitmap"]) == ["bloom-filter", "bitmap"]
    twelve = [f"c{i}" for i in range(12)]
    assert java_hash_order(twelve) == [f"c{i}" for i in (3, 4, 5, 11, 6, 10, 7, 8, 9, 0, 1, 2)]
    thirteen = [f"c{i}" for i in range(13)]  # past 12 keys the table has 32 buckets
    assert java_hash_order(thirteen) == ["c11", "c10", "c12"] + [f"c{i}" for i in range(10)]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x00" * 16, "not file index file"),
        (struct.pack(">qii", MAGIC, 2, 20), "version of 2"),
        (struct.pack(">qii", MAGIC, 1, 40) + b"\x00\x00\x00\x01", "truncated"),
        (b"\x01\x02", "truncated"),
    ],
)
def test_bad_headers(data: bytes, message: str) -> None:
    with pytest.raises(MetadataFormatError) as err:
        read_index_metas(io.BytesIO(data).read, "/t/x.index")
    assert str(err.value).startswith("Failed to read file index metadata from /t/x.index.")
    assert message in str(err.value)


def test_compute_if_absent_prepends_within_a_bucket() -> None:
    """``HashMap.computeIfAbsent`` links a new key before its bucket's first: reversed
    insertion order within a bucket, across resizes too (orders printed by a JVM)."""
    keys = "s,ts,by,f,dt,x1,x2,x3,x4,x5,x6,x7,x8,x9,y1,y2".split(",")
    assert ",".join(java_hash_order(keys, prepend=True)) == (
        "x8,x9,f,dt,s,by,y1,y2,x1,x2,x3,x4,x5,x6,x7,ts"
    )
    assert ",".join(java_hash_order(keys)) == "x8,x9,f,dt,s,by,y1,x1,y2,x2,x3,x4,x5,x6,ts,x7"


def test_container_round_trip() -> None:
    data = write_container(
        [("v", [("bloom-filter", b"\x01\x02\x03"), ("bitmap", None)]), ("id", [("bsi", b"")])]
    )
    entries = read_header(io.BytesIO(data).read, "mem")
    by_key = {(e.column_name, e.index_type): e for e in entries}
    bloom = by_key["v", "bloom-filter"]
    assert data[bloom.start : bloom.start + bloom.length] == b"\x01\x02\x03"
    assert by_key["v", "bitmap"].empty and by_key["v", "bitmap"].length == 0
    assert by_key["id", "bsi"].length == 0 and not by_key["id", "bsi"].empty
    assert struct.unpack(">i", data[bloom.start - 4 : bloom.start])[0] == 0  # redundant length


def test_file_index_options_in_javas_order_and_errors() -> None:
    parsed = file_index_options(
        {
            "file-index.bloom-filter.columns": "a, b ,m[k1]",
            "file-index.bitmap.columns": "a",
            "file-index.bloom-filter.b.fpp": "0.01",
            "file-index.bloom-filter.m.items": "10",
            "file-index.bloom-filter.m[k1].fpp": "0.2",
            "file-index.in-manifest-threshold": "1 kb",
            "file-index.read.enabled": "false",
        }
    )
    columns = {column.full_name: dict(types) for column, types in parsed.columns}
    assert set(columns) == {"a", "b", "m[k1]"}
    assert set(columns["a"]) == {"bloom-filter", "bitmap"}
    assert columns["b"]["bloom-filter"] == {"fpp": "0.01"}
    assert columns["m[k1]"]["bloom-filter"] == {"fpp": "0.2"}
    assert parsed.map_options["m", "bloom-filter"] == {"items": "10"}
    assert parsed.in_manifest_threshold == 1024
    assert not file_index_read_enabled({"file-index.read.enabled": "false"})
    assert file_index_read_enabled({}) and file_index_options({}).empty
    with pytest.raises(InvalidArgument, match="should not have empty column"):
        file_index_options({"file-index.bitmap.columns": "a,,b"})
    with pytest.raises(InvalidArgument, match="column 'c' is not declared in"):
        file_index_options({"file-index.bitmap.columns": "a", "file-index.bitmap.c.version": "1"})

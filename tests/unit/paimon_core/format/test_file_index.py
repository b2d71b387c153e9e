"""The file index container's header (Java's ``FileIndexFormat``), read without payloads."""

from __future__ import annotations

import io
import struct

import pytest

from paimon_core.exceptions import MetadataFormatError
from paimon_core.format.file_index import (
    MAGIC,
    FileIndexMeta,
    java_hash_order,
    java_string_hash,
    read_index_metas,
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

"""Deletion vectors and their index files: Java 0.9's file read and rewritten byte for byte,
the 64-bit frame, and every kind of damage refused naming the file."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np
import pytest

from paimon_core.exceptions import DeletionVectorUnreadable
from paimon_core.format.deletion_vectors import (
    BITMAP32_MAGIC,
    BITMAP64_MAGIC,
    DeletionFile,
    DeletionVector,
    DeletionVectorsIndexFile,
    deserialize_deletion_vector,
    serialize_deletion_vector,
)
from paimon_core.format.manifest import DeletionVectorMeta, FileKind, IndexManifestEntry
from paimon_core.io.fileio import LocalFileIO
from tests.unit.paimon_core.format.test_roaring import FIXTURES, JAVA_POSITIONS

JAVA_FILE = FIXTURES / "java09-pk-index"
JAVA_DATA_FILE = "data-8580a564-08a4-497f-9041-686a4fa22aea-0.parquet"
# Java 0.9's index file holding the vector {0} of one data file (offset 1, length 22).
JAVA_SMALL = bytes.fromhex("01000000165e43f2d03a3000000100000000000000100000000000e33060d3")


def test_java_index_file_reads_and_is_rewritten_byte_for_byte(tmp_path: Path) -> None:
    data = JAVA_FILE.read_bytes()
    dv = deserialize_deletion_vector(data, 1, 8239, str(JAVA_FILE))
    assert np.array_equal(dv.positions, JAVA_POSITIONS)
    frame, length = serialize_deletion_vector(dv)
    assert (frame, length) == (data[1:], 8239)
    index = DeletionVectorsIndexFile(LocalFileIO(), str(tmp_path))
    entry = index.write({JAVA_DATA_FILE: dv}, b"", 0)
    assert (tmp_path / "index" / entry.file_name).read_bytes() == data
    assert entry.dv_ranges == (DeletionVectorMeta(JAVA_DATA_FILE, 1, 8239, 15072),)
    assert (entry.kind, entry.index_type, entry.file_size, entry.row_count) == (
        FileKind.ADD,
        "DELETION_VECTORS",
        len(data),
        1,
    )


def test_java_small_frame() -> None:
    assert serialize_deletion_vector(DeletionVector.of([0])) == (JAVA_SMALL[1:], 22)
    assert deserialize_deletion_vector(JAVA_SMALL, 1, 22, "f").positions.tolist() == [0]


def test_64_bit_frame_as_paimon_1x_writes_it() -> None:
    dv = DeletionVector.of([1, 5, (1 << 32) + 2])
    frame, length = serialize_deletion_vector(dv, bitmap64=True)
    (size,) = struct.unpack(">i", frame[:4])
    assert length == len(frame) == size + 8  # the meta counts the whole frame
    assert struct.unpack("<i", frame[4:8])[0] == BITMAP64_MAGIC  # little-endian magic
    assert struct.unpack(">I", frame[-4:])[0] == zlib.crc32(frame[4:-4])
    data = b"\x01" + frame
    assert deserialize_deletion_vector(data, 1, length, "f") == dv
    assert deserialize_deletion_vector(data, 1, None, "f") == dv


def test_32_bit_vectors_refuse_positions_beyond_int() -> None:
    with pytest.raises(ValueError, match="bitmap64"):
        serialize_deletion_vector(DeletionVector.of([2**31]))


def test_vector_operations() -> None:
    a = DeletionVector.of([5, 1, 1])
    b = DeletionVector.of(range(4, 7))
    assert a.positions.tolist() == [1, 5] and a.cardinality == 2
    assert a.merge(b).positions.tolist() == [1, 4, 5, 6]
    assert a.is_deleted(5) and not a.is_deleted(2) and not a.is_deleted(99)
    assert a.keep_mask(4).tolist() == [True, False, True, True]  # position 5 is beyond
    assert a == DeletionVector.of([1, 5]) and a != b
    with pytest.raises(ValueError, match="Negative"):
        DeletionVector.of([-1])


def _index(tmp_path: Path, data: bytes) -> tuple[DeletionVectorsIndexFile, DeletionFile, str]:
    path = tmp_path / "index" / "index-x-0"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return (
        DeletionVectorsIndexFile(LocalFileIO(), str(tmp_path)),
        DeletionFile("data-1.parquet", str(path), 1, 22, 1),
        str(path),
    )


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1 :]


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda d: _flip(d, len(d) - 1), "checksum"),
        (lambda d: _flip(d, 20), "checksum"),
        (lambda d: _flip(d, 6), "magic"),
        (lambda d: d[:-3], "truncated"),
        (lambda d: b"\x02" + d[1:], "version 2"),
        (lambda d: b"", "version nothing"),
        (lambda d: d[:1] + struct.pack(">i", 30) + d[5:], "size 30"),
    ],
)
def test_damaged_vectors_raise_naming_the_file(tmp_path: Path, damage, message: str) -> None:
    index, deletion_file, path = _index(tmp_path, damage(JAVA_SMALL))
    with pytest.raises(DeletionVectorUnreadable, match=message) as err:
        index.read(deletion_file)
    assert path in str(err.value)


def test_missing_index_file_raises_naming_it(tmp_path: Path) -> None:
    index, deletion_file, path = _index(tmp_path, JAVA_SMALL)
    Path(path).unlink()
    with pytest.raises(DeletionVectorUnreadable, match="missing") as err:
        index.read(deletion_file)
    assert path in str(err.value)


def test_bitmap_magic_with_undecodable_bitmap(tmp_path: Path) -> None:
    body = struct.pack(">i", BITMAP32_MAGIC) + struct.pack("<II", 77, 0)
    data = b"\x01" + struct.pack(">i", len(body)) + body + struct.pack(">I", zlib.crc32(body))
    index, _, path = _index(tmp_path, data)
    with pytest.raises(DeletionVectorUnreadable, match="cookie"):
        index.read(DeletionFile("d", path, 1, len(body), None))


def test_index_file_of_many_vectors_round_trips(tmp_path: Path) -> None:
    index = DeletionVectorsIndexFile(LocalFileIO(), str(tmp_path))
    vectors = {
        "a.parquet": DeletionVector.of([0, 3]),
        "b.parquet": DeletionVector.of(range(100, 5000)),
        "c.parquet": DeletionVector.of([7, 1 << 33]),
    }
    entry = index.write(vectors, b"p", 3, bitmap64=True)
    assert (entry.partition, entry.bucket, entry.row_count) == (b"p", 3, 3)
    assert [m.data_file_name for m in entry.dv_ranges] == list(vectors)
    assert index.read_all(entry) == vectors
    files = index.deletion_files(entry)
    assert index.read(files[1]) == vectors["b.parquet"]
    assert [f.cardinality for f in files] == [2, 4900, 2]
    unrelated = IndexManifestEntry(FileKind.ADD, b"", 0, "DELETION_VECTORS", "x", 1, 0, ())
    assert index.deletion_files(unrelated) == []

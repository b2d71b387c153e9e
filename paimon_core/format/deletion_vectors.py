"""Deletion vectors and their index files (``index/index-<uuid>-<n>``, type ``DELETION_VECTORS``).

A deletion vector lists the positions (0-based row numbers) of the deleted rows of one data
file. The vectors of a bucket (or, in bucket-unaware append tables, of any files) are stored
one after another in an index file, which the snapshot's index manifest lists with one
``DeletionVectorMeta`` (data file name, offset, length, cardinality) per vector.

The index file (Java's ``DeletionVectorsIndexFile``, ``DeletionFileWriter``; the same in
Paimon 0.9 and 1.x): one version byte ``1``, then per vector, at the offset its meta names:

* 32-bit (``BitmapDeletionVector``, the default): ``size`` as big-endian int32, the magic
  ``1581511376`` as big-endian int32, a ``RoaringBitmap32`` (``roaring.serialize32``), then
  the CRC-32 of magic + bitmap as big-endian int32. ``size`` counts magic + bitmap, and so
  does the meta's length.
* 64-bit (``Bitmap64DeletionVector``, ``deletion-vectors.bitmap64``, Paimon 1.x): the same
  frame, but the magic ``1681511377`` is little-endian and the bitmap is an
  ``OptimizedRoaringBitmap64`` (``roaring.serialize64``); the meta's length counts the whole
  frame (size + magic + bitmap + CRC), i.e. ``size + 8``.

Java 0.9 verifies the checksum, Java 1.x skips it; this reader verifies it: a vector that
does not decode is an error naming the file (``DeletionVectorUnreadable``), never "no
deletions".
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from paimon_core.exceptions import DeletionVectorUnreadable
from paimon_core.format.manifest import DeletionVectorMeta, FileKind, IndexManifestEntry
from paimon_core.format.paths import INDEX_DIR, INDEX_PREFIX, new_file_name
from paimon_core.format.roaring import (
    RoaringFormatError,
    deserialize32,
    deserialize64,
    serialize32,
    serialize64,
)

if TYPE_CHECKING:
    from paimon_core.io.fileio import FileIO

__all__ = [
    "BITMAP32_MAGIC",
    "BITMAP64_MAGIC",
    "DELETION_VECTORS_INDEX",
    "DeletionFile",
    "DeletionVector",
    "DeletionVectorsIndexFile",
    "deserialize_deletion_vector",
    "serialize_deletion_vector",
]

DELETION_VECTORS_INDEX = "DELETION_VECTORS"
VERSION_ID_V1 = 1
BITMAP32_MAGIC = 1581511376
BITMAP64_MAGIC = 1681511377
MAX_POSITION_32 = 2**31 - 1  # RoaringBitmap32.MAX_VALUE
_BE_INT = struct.Struct(">i")
_LE_INT = struct.Struct("<i")


@dataclass(frozen=True, eq=False)
class DeletionVector:
    """The deleted positions of one data file: sorted, distinct, read-only int64s."""

    positions: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))

    def __post_init__(self) -> None:
        self.positions.setflags(write=False)

    @classmethod
    def of(cls, positions: np.ndarray | list[int] | range) -> DeletionVector:
        """A vector of ``positions`` (any order, duplicates allowed, each >= 0)."""
        array = np.unique(np.asarray(positions, dtype=np.int64))
        if array.size and array[0] < 0:
            raise ValueError(f"Negative row position {int(array[0])} in a deletion vector")
        return cls(array)

    @property
    def cardinality(self) -> int:
        return int(self.positions.size)

    def is_empty(self) -> bool:
        return self.positions.size == 0

    def is_deleted(self, position: int) -> bool:
        i = int(np.searchsorted(self.positions, position))
        return i < self.positions.size and int(self.positions[i]) == position

    def merge(self, other: DeletionVector) -> DeletionVector:
        """The union of both vectors (``DeletionVector.merge``)."""
        if other.is_empty():
            return self
        if self.is_empty():
            return other
        return DeletionVector(np.union1d(self.positions, other.positions))

    def keep_mask(self, num_rows: int) -> np.ndarray:
        """A boolean mask of ``num_rows`` rows, False at the deleted positions.

        Positions at or beyond ``num_rows`` are ignored (Java reads only the rows it has)."""
        mask = np.ones(num_rows, dtype=bool)
        mask[self.positions[self.positions < num_rows]] = False
        return mask

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DeletionVector) and np.array_equal(self.positions, other.positions)

    def __hash__(self) -> int:
        return hash(self.positions.tobytes())

    def __repr__(self) -> str:
        shown = self.positions[:8].tolist()
        more = ", ..." if self.positions.size > 8 else ""
        return f"DeletionVector({self.cardinality} rows: {shown}{more})"


@dataclass(frozen=True, slots=True)
class DeletionFile:
    """Where the deletion vector of one data file is (Java's ``DeletionFile``): a reader
    needs only this, so splits carry it to the executors."""

    data_file_name: str
    path: str
    offset: int
    length: int
    cardinality: int | None


# ------------------------------------------------------------------------ one vector


def serialize_deletion_vector(dv: DeletionVector, bitmap64: bool = False) -> tuple[bytes, int]:
    """The framed bytes of ``dv`` (size, magic, bitmap, CRC) and the length its
    ``DeletionVectorMeta`` records (see the module docstring for both versions)."""
    if bitmap64:
        body = _LE_INT.pack(BITMAP64_MAGIC) + serialize64(dv.positions)
        frame = _BE_INT.pack(len(body)) + body + _crc(body)
        return frame, len(frame)
    if dv.positions.size and int(dv.positions[-1]) > MAX_POSITION_32:
        raise ValueError(
            "The file has too many rows, RoaringBitmap32 only supports files with row count "
            f"not exceeding {MAX_POSITION_32} (set 'deletion-vectors.bitmap64')."
        )
    body = _BE_INT.pack(BITMAP32_MAGIC) + serialize32(dv.positions)
    return _BE_INT.pack(len(body)) + body + _crc(body), len(body)


def _crc(body: bytes | memoryview) -> bytes:
    return _BE_INT.pack(_signed(zlib.crc32(body)))


def _signed(value: int) -> int:
    return value - (1 << 32) if value >= 1 << 31 else value


def deserialize_deletion_vector(
    data: bytes | memoryview, offset: int, length: int | None, where: str
) -> DeletionVector:
    """The vector framed at ``offset`` of ``data``; ``length``: its meta's length, checked
    when given. ``where`` names the file in errors."""
    view = memoryview(data)
    try:
        if offset < 0 or offset + 8 > len(view):
            raise ValueError(f"no deletion vector at offset {offset} of {len(view)} bytes")
        (size,) = _BE_INT.unpack_from(view, offset)
        (magic,) = _BE_INT.unpack_from(view, offset + 4)
        if magic == BITMAP32_MAGIC:
            expected = length
            decode = deserialize32
        elif _LE_INT.unpack(_BE_INT.pack(magic))[0] == BITMAP64_MAGIC:
            expected = None if length is None else length - 8
            decode = deserialize64
        else:
            raise ValueError(
                f"invalid magic number {magic} (expected {BITMAP32_MAGIC} or the "
                f"little-endian {BITMAP64_MAGIC})"
            )
        if expected is not None and size != expected:
            raise ValueError(f"size {size} does not match the index manifest's {expected}")
        end = offset + 4 + size
        if size < 4 or end + 4 > len(view):
            raise ValueError(f"truncated: {size} + 8 bytes at offset {offset}")
        body = view[offset + 4 : end]
        (stored,) = _BE_INT.unpack_from(view, end)
        actual = _signed(zlib.crc32(body))
        if stored != actual:
            raise ValueError(f"checksum {stored} does not match the content's {actual}")
        positions, consumed = decode(body, 4)
        if consumed != size:
            raise ValueError(f"bitmap ends at {consumed} of {size} bytes")
    except (ValueError, RoaringFormatError, struct.error) as err:
        raise DeletionVectorUnreadable(
            f"Deletion vector file {where} is corrupt at offset {offset}: {err}"
        ) from None
    return DeletionVector(positions)


# ------------------------------------------------------------------------ index files


class DeletionVectorsIndexFile:
    """Reads and writes a table's deletion-vector index files."""

    def __init__(self, file_io: FileIO, table_path: str) -> None:
        self.file_io = file_io
        self.dir = f"{table_path.rstrip('/')}/{INDEX_DIR}"

    def path(self, entry: IndexManifestEntry) -> str:
        return entry.external_path or f"{self.dir}/{entry.file_name}"

    def deletion_files(self, entry: IndexManifestEntry) -> list[DeletionFile]:
        """One ``DeletionFile`` per vector the entry lists (its ``toDeletionFiles``)."""
        path = self.path(entry)
        return [
            DeletionFile(m.data_file_name, path, m.offset, m.length, m.cardinality)
            for m in entry.dv_ranges or ()
        ]

    def _read(self, path: str) -> bytes:
        try:
            data = self.file_io.read_bytes(path)
        except FileNotFoundError:
            raise DeletionVectorUnreadable(
                f"Deletion vector file {path} is missing: the rows it deletes cannot be known"
            ) from None
        if not data or data[0] != VERSION_ID_V1:
            found = data[0] if data else "nothing"
            raise DeletionVectorUnreadable(
                f"Deletion vector file {path} is corrupt: version {found}, expected {VERSION_ID_V1}"
            )
        return data

    def read(self, deletion_file: DeletionFile) -> DeletionVector:
        """The vector one ``DeletionFile`` points at."""
        return self.read_many([deletion_file])[deletion_file.data_file_name]

    def read_many(self, deletion_files: list[DeletionFile]) -> dict[str, DeletionVector]:
        """The vectors of ``deletion_files`` by data file name, each index file read once."""
        out: dict[str, DeletionVector] = {}
        by_path: dict[str, list[DeletionFile]] = {}
        for d in deletion_files:
            by_path.setdefault(d.path, []).append(d)
        for path, files in by_path.items():
            data = self._read(path)
            for d in files:
                out[d.data_file_name] = deserialize_deletion_vector(data, d.offset, d.length, path)
        return out

    def read_all(self, entry: IndexManifestEntry) -> dict[str, DeletionVector]:
        """Every vector of one index file, by data file name."""
        return self.read_many(self.deletion_files(entry))

    def write(
        self,
        vectors: Mapping[str, DeletionVector],
        partition: bytes,
        bucket: int,
        bitmap64: bool = False,
    ) -> IndexManifestEntry:
        """Write ``vectors`` (data file name -> vector, in that order) to one new index file;
        its ADD entry for the index manifest (``DeletionVectorIndexFileWriter.writeSingleFile``).

        Empty vectors are written too, as Java does; callers drop them before when a file
        without deletions should have no vector."""
        out = bytearray([VERSION_ID_V1])
        metas = []
        for name, dv in vectors.items():
            frame, length = serialize_deletion_vector(dv, bitmap64)
            metas.append(DeletionVectorMeta(name, len(out), length, dv.cardinality))
            out += frame
        name = new_file_name(INDEX_PREFIX)
        self.file_io.write_bytes(f"{self.dir}/{name}", bytes(out))
        return IndexManifestEntry(
            kind=FileKind.ADD,
            partition=partition,
            bucket=bucket,
            index_type=DELETION_VECTORS_INDEX,
            file_name=name,
            file_size=len(out),
            row_count=len(metas),
            dv_ranges=tuple(metas),
        )

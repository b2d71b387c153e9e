"""The ``.blob`` file format of BLOB columns, and the serialized ``BlobDescriptor``.

A data-evolution table stores each BLOB column (type ``BLOB``) in files of its own, named
``data-<uuid>-<n>.blob``, that hold one column for a row-id range (Java's ``BlobFileFormat``,
``BlobFormatWriter`` and ``BlobFileMeta``, Paimon 2.0-2.1; pypaimon's ``BlobFormatWriter``).
Every integer is little-endian. A file is its records, one a row, then a footer::

    record  := magic:int32 (0x584E11CF) | payload bytes | record length:int64 | crc32:uint32
    footer  := index bytes | index length:int32 | version:int8 (1)

The record length counts the whole record (magic, payload, length and CRC: payload + 16); the
CRC is zlib's CRC-32 of everything before it in the record. A null value has no record. The
index lists every row's record length, -1 for null and -2 for a placeholder (the value lives
in an older file of the same row-id range), delta-encoded, zig-zagged and varint-encoded
(Java's ``DeltaVarintCompressor``). Records are back to back from offset 0 in row order.

With ``blob-as-descriptor`` a reader returns, instead of the bytes, a serialized
``BlobDescriptor`` of where they are (Java's ``BlobDescriptor.serialize``, version 2)::

    version:int8 (2) | magic:int64 ("BLOBDESC") | uri length:int32 | uri (UTF-8) |
    offset:int64 | length:int64

Version 1 descriptors (no magic) are still read. Only columns of type BLOB are read here;
ARRAY<BLOB> and MAP<..., BLOB> columns (newer nested record layouts) are refused by the
feature gate.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pyarrow as pa

from paimon_core.exceptions import DataFileUnreadable

BLOB_SUFFIX = ".blob"
MAGIC = 1481511375
"""Of every record (``BlobFormatWriter.MAGIC_NUMBER``): bytes ``CF 11 4E 58``."""
VERSION = 1
NULL_LENGTH = -1
PLACEHOLDER_LENGTH = -2
_FOOTER = 5
_RECORD_OVERHEAD = 16
"""Magic (4), record length (8) and CRC (4) around a payload."""
DESCRIPTOR_VERSION = 2
DESCRIPTOR_MAGIC = 0x424C4F4244455343


def is_blob_file(file_name: str) -> bool:
    """Whether a data file is a ``.blob`` file (Java's ``BlobFileFormat.isBlobFile``)."""
    return file_name.endswith(BLOB_SUFFIX)


# ------------------------------------------------------------------------------ index


def compress_lengths(values: Sequence[int]) -> bytes:
    """``values`` delta-, zig-zag- and varint-encoded (``DeltaVarintCompressor.compress``)."""
    out = bytearray()
    previous = 0
    for i, value in enumerate(values):
        delta = value if i == 0 else value - previous
        previous = value
        z = ((delta << 1) ^ (delta >> 63)) & 0xFFFFFFFFFFFFFFFF
        while z & ~0x7F:
            out.append((z & 0x7F) | 0x80)
            z >>= 7
        out.append(z)
    return bytes(out)


def decompress_lengths(data: bytes) -> list[int]:
    """The values ``compress_lengths`` encoded.

    Raises:
        ValueError: a truncated or overlong varint.
    """
    values: list[int] = []
    pos, n = 0, len(data)
    while pos < n:
        result = shift = 0
        while True:
            if pos >= n:
                raise ValueError("unexpected end of the index")
            b = data[pos]
            pos += 1
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                break
            shift += 7
            if shift > 63:
                raise ValueError("varint overflow in the index")
        delta = (result >> 1) ^ -(result & 1)
        values.append(delta if not values else values[-1] + delta)
    return values


@dataclass(frozen=True, slots=True)
class BlobIndex:
    """The footer of a ``.blob`` file: each row's record length and offset (-1: none)."""

    lengths: tuple[int, ...]
    offsets: tuple[int, ...]

    @property
    def row_count(self) -> int:
        return len(self.lengths)


def parse_index(tail: bytes, file_size: int) -> BlobIndex:
    """The index of a file of ``file_size`` bytes from its last bytes (``tail``, holding at
    least the footer and the index; the whole file will do), checked as Java's
    ``BlobFileMeta`` checks it.

    Raises:
        ValueError: the footer or index is not of a ``.blob`` file (the reason).
    """
    if file_size < _FOOTER or len(tail) < _FOOTER:
        raise ValueError(f"file size {file_size} is smaller than the footer")
    (index_length,) = struct.unpack_from("<i", tail, len(tail) - _FOOTER)
    version = tail[-1]
    if version != VERSION:
        raise ValueError(f"unsupported version {version}")
    index_start = file_size - _FOOTER - index_length
    if index_length < 0 or index_start < 0 or index_length > len(tail) - _FOOTER:
        raise ValueError(f"invalid index length {index_length} for file size {file_size}")
    lengths = decompress_lengths(tail[len(tail) - _FOOTER - index_length : len(tail) - _FOOTER])
    offsets: list[int] = []
    offset = 0
    for i, length in enumerate(lengths):
        if length in (NULL_LENGTH, PLACEHOLDER_LENGTH):
            offsets.append(-1)
            continue
        if length < _RECORD_OVERHEAD or length > index_start - offset:
            raise ValueError(f"invalid record length {length} at position {i}")
        offsets.append(offset)
        offset += length
    if offset != index_start:
        raise ValueError(f"indexed records use {offset} bytes, the data region has {index_start}")
    return BlobIndex(tuple(lengths), tuple(offsets))


# ------------------------------------------------------------------------------ descriptor


@dataclass(frozen=True, slots=True)
class BlobDescriptor:
    """Where a BLOB value's bytes are: ``length`` bytes at ``offset`` of the file ``uri``."""

    uri: str
    offset: int
    length: int

    def serialize(self) -> bytes:
        """The version-2 bytes Java's ``BlobDescriptor.serialize`` writes."""
        uri = self.uri.encode("utf-8")
        return (
            struct.pack("<BQi", DESCRIPTOR_VERSION, DESCRIPTOR_MAGIC, len(uri))
            + uri
            + struct.pack("<qq", self.offset, self.length)
        )

    @staticmethod
    def deserialize(data: bytes) -> BlobDescriptor:
        """A descriptor from its bytes (version 1, without magic, or 2).

        Raises:
            ValueError: bytes of no descriptor (the reason).
        """
        if len(data) < 1:
            raise ValueError("invalid BlobDescriptor: too short")
        version, pos = data[0], 1
        if version > DESCRIPTOR_VERSION:
            raise ValueError(f"unsupported BlobDescriptor version {version}")
        if version > 1:
            if len(data) < pos + 8 or struct.unpack_from("<Q", data, pos)[0] != DESCRIPTOR_MAGIC:
                raise ValueError("invalid BlobDescriptor: missing magic header")
            pos += 8
        if len(data) < pos + 4:
            raise ValueError("invalid BlobDescriptor: too short")
        (uri_length,) = struct.unpack_from("<i", data, pos)
        pos += 4
        if uri_length < 0 or len(data) - pos - uri_length < 16:
            raise ValueError(f"invalid BlobDescriptor: bad URI length {uri_length}")
        uri = data[pos : pos + uri_length].decode("utf-8")
        offset, length = struct.unpack_from("<qq", data, pos + uri_length)
        return BlobDescriptor(uri, offset, length)


def path_to_descriptor(path: str | None) -> bytes | None:
    """The serialized descriptor of a whole file (offset 0, length -1: to its end), what
    Paimon-Spark's ``sys.path_to_descriptor(path)`` returns; None for None."""
    return None if path is None else BlobDescriptor(path, 0, -1).serialize()


def descriptor_to_string(data: bytes | None) -> str | None:
    """A serialized descriptor as Java's ``BlobDescriptor.toString`` shows it (what
    ``sys.descriptor_to_string(descriptor)`` returns); None for None.

    Raises:
        ValueError: bytes of no descriptor.
    """
    if data is None:
        return None
    d = BlobDescriptor.deserialize(data)
    return (
        f"BlobDescriptor{{version={data[0]}, uri='{d.uri}', offset={d.offset}, length={d.length}}}"
    )


# ------------------------------------------------------------------------------ reading


def _payload(data: bytes | memoryview, start: int, length: int, row: int, path: str) -> bytes:
    """The payload of the record of ``length`` bytes at ``start`` of ``data``, its magic,
    stored length and CRC checked."""
    record = bytes(data[start : start + length])
    (magic,) = struct.unpack_from("<I", record, 0)
    if magic != MAGIC:
        raise DataFileUnreadable(f"Blob file {path}: row {row} has no record magic")
    stored_length, crc = struct.unpack_from("<qI", record, length - 12)
    if stored_length != length:
        raise DataFileUnreadable(
            f"Blob file {path}: row {row} says {stored_length} bytes, the index {length}"
        )
    if zlib.crc32(record[: length - 4]) != crc:
        raise DataFileUnreadable(f"Blob file {path}: row {row} fails its CRC check")
    return record[4 : length - 12]


def read_blob_values(
    data: bytes, path: str, *, as_descriptor: bool = False, uri: str | None = None
) -> tuple[pa.Array, list[bool]]:
    """The BLOB column of a whole ``.blob`` file (``data``, read from ``path``) as an Arrow
    ``large_binary`` array, one value a row, null where null or a placeholder, and which rows
    are placeholders.

    Args:
        as_descriptor: return each value's serialized ``BlobDescriptor`` (``blob-as-descriptor``)
            instead of its bytes; the payload is not read.
        uri: the file's URI in descriptors (``path`` when None).

    Raises:
        DataFileUnreadable: a file that is no ``.blob`` file or fails a check (naming it).
    """
    try:
        index = parse_index(data, len(data))
    except ValueError as err:
        raise DataFileUnreadable(f"Cannot read blob file {path}: {err}") from None
    values: list[bytes | None] = []
    placeholders = [length == PLACEHOLDER_LENGTH for length in index.lengths]
    view = memoryview(data)
    for row, (length, offset) in enumerate(zip(index.lengths, index.offsets, strict=True)):
        if length in (NULL_LENGTH, PLACEHOLDER_LENGTH):
            values.append(None)
        elif as_descriptor:
            payload = BlobDescriptor(uri or path, offset + 4, length - _RECORD_OVERHEAD)
            values.append(payload.serialize())
        else:
            values.append(_payload(view, offset, length, row, path))
    return pa.array(values, pa.large_binary()), placeholders


def read_blob_file(
    data: bytes, path: str, *, as_descriptor: bool = False, uri: str | None = None
) -> pa.Array:
    """As ``read_blob_values``, for a file with no placeholder rows.

    Raises:
        DataFileUnreadable: as ``read_blob_values``, or a placeholder row (its value is in
            another file).
    """
    values, placeholders = read_blob_values(data, path, as_descriptor=as_descriptor, uri=uri)
    if any(placeholders):
        raise DataFileUnreadable(
            f"Cannot read blob file {path} alone: row {placeholders.index(True)} is a "
            "placeholder for a value of an older file"
        )
    return values


# ------------------------------------------------------------------------------ writing


def write_blob_file(values: Iterable[bytes | None]) -> bytes:
    """A ``.blob`` file of ``values`` (None: null), byte for byte as Java's and pypaimon's
    ``BlobFormatWriter`` write it."""
    out = bytearray()
    lengths: list[int] = []
    for value in values:
        if value is None:
            lengths.append(NULL_LENGTH)
            continue
        length = len(value) + _RECORD_OVERHEAD
        record = struct.pack("<I", MAGIC) + bytes(value) + struct.pack("<q", length)
        out += record + struct.pack("<I", zlib.crc32(record))
        lengths.append(length)
    index = compress_lengths(lengths)
    out += index + struct.pack("<iB", len(index), VERSION)
    return bytes(out)

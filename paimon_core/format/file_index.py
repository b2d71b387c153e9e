"""The file index container (Java's ``FileIndexFormat``): the header of a data file's
column indexes (bloom filter, bitmap, ...), embedded in the manifest entry
(``DataFileMeta.embedded_index``) or in a ``<data file>.index`` file beside it (one of the
file's ``extra_files``).

Only the header is read here (``FileIndexFormat.createMetadataReader``): magic (8 bytes),
version (4, only 1), head length (4), column count (4), then per column its name
(``DataOutput.writeUTF``: 2-byte length and modified UTF-8), its index count (4) and per
index its type name, start and length (4 each; start -1 marks an empty index), all
big-endian. The index payloads that follow are not decoded.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from paimon_core.exceptions import MetadataFormatError

MAGIC = 1493475289347502
VERSION = 1
EMPTY_INDEX_FLAG = -1
INDEX_PATH_SUFFIX = ".index"
"""``DataFilePathFactory.INDEX_PATH_SUFFIX``: the extra file holding a data file's indexes."""
_PREFIX = struct.Struct(">qii")


@dataclass(frozen=True, slots=True)
class FileIndexMeta:
    """One column index of a container (Java's ``FileIndexFormat.FileIndexMeta``)."""

    column_name: str
    index_type: str
    size_in_bytes: int
    empty: bool


def read_index_metas(read: Callable[[int], bytes], where: str) -> list[FileIndexMeta]:
    """The indexes a container's header lists, in the order Java's ``indexMetas`` gives them
    (its header is a ``HashMap`` of columns to ``HashMap`` s of index types).

    Args:
        read: reads the next ``n`` bytes of the container (fewer at its end).
        where: the container's location, for messages.

    Raises:
        MetadataFormatError: not a file index container, another version, or a torn header
            (``Failed to read file index metadata from <where>.``, as Paimon says).
    """
    failed = f"Failed to read file index metadata from {where}."
    prefix = read(_PREFIX.size)
    if len(prefix) != _PREFIX.size:
        raise MetadataFormatError(f"{failed} The header is truncated.")
    magic, version, head_length = _PREFIX.unpack(prefix)
    if magic != MAGIC:
        raise MetadataFormatError(f"{failed} This file is not file index file.")
    if version != VERSION:
        raise MetadataFormatError(
            f"{failed} This index file is version of {version}, not in supported version "
            f"list [{VERSION}]"
        )
    size = head_length - _PREFIX.size
    head = read(size) if size > 0 else b""
    if size < 4 or len(head) != size:
        raise MetadataFormatError(f"{failed} The header is truncated.")
    reader = _Reader(head, failed)
    columns: dict[str, dict[str, tuple[int, int]]] = {}
    for _ in range(reader.int()):
        column = reader.utf()
        indexes = columns.setdefault(column, {})
        for _ in range(reader.int()):
            name = reader.utf()
            indexes[name] = (reader.int(), reader.int())
    return [
        FileIndexMeta(column, name, length, start == EMPTY_INDEX_FLAG)
        for column in java_hash_order(list(columns))
        for name, (start, length) in (
            (n, columns[column][n]) for n in java_hash_order(list(columns[column]))
        )
    ]


class _Reader:
    def __init__(self, data: bytes, failed: str) -> None:
        self.data = data
        self.position = 0
        self.failed = failed

    def _take(self, n: int) -> bytes:
        end = self.position + n
        if end > len(self.data):
            raise MetadataFormatError(f"{self.failed} The header is truncated.")
        out = self.data[self.position : end]
        self.position = end
        return out

    def int(self) -> int:
        return int(struct.unpack(">i", self._take(4))[0])

    def utf(self) -> str:
        (length,) = struct.unpack(">H", self._take(2))
        return decode_modified_utf8(self._take(length), self.failed)


def decode_modified_utf8(data: bytes, failed: str = "Invalid modified UTF-8") -> str:
    """Java's ``DataInput.readUTF`` text: UTF-8 with NUL as ``C0 80`` and characters beyond
    the BMP as two encoded surrogates."""
    try:
        text = data.replace(b"\xc0\x80", b"\x00").decode("utf-8", "surrogatepass")
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
    except UnicodeError:
        raise MetadataFormatError(f"{failed} A name is not modified UTF-8.") from None


def java_string_hash(text: str) -> int:
    """``String.hashCode`` (over UTF-16 code units, 32-bit wrap-around)."""
    h = 0
    units = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] << 8 | units[i + 1])) & 0xFFFFFFFF
    return h


def java_hash_order(keys: Sequence[str]) -> list[str]:
    """The iteration order of a ``java.util.HashMap`` the ``keys`` were put into in this
    order: by bucket (the spread hash masked by the table size, which doubles past 0.75
    load), within a bucket in insertion order (bins never grow to trees at these sizes)."""
    capacity = 16
    while len(keys) > capacity * 3 // 4:
        capacity *= 2

    def bucket(key: str) -> int:
        h = java_string_hash(key)
        return (h ^ (h >> 16)) & (capacity - 1)

    return [k for _, k in sorted(enumerate(keys), key=lambda p: (bucket(p[1]), p[0]))]

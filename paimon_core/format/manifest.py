"""Manifest lists and manifests: the Avro metadata files that list a snapshot's data files.

Files are written in exactly the Avro shape Java Paimon 1.4.2 writes (paimon-format.md §3.6)
and read in every shape Java 0.8 .. HEAD and pypaimon 2.1 write: fields are matched by name,
a field the file lacks reads as its default, unknown fields are skipped, record names and
nullable wrappers (0.8) do not matter.

Planning a scan decodes thousands of entries, and fastavro's generic reader alone costs more
than our budget (dicts, logical types). So the reader compiles, once per writer schema, a
Python decoder that builds our dataclasses straight from the bytes; writing uses small
hand-written encoders for the one schema we write. The Avro container is parsed and built here
too, which keeps the header to Java's two metadata keys.
"""

from __future__ import annotations

import bz2
import dataclasses
import gc
import json
import lzma
import os
import re
import struct
import threading
import zlib
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import IntEnum
from itertools import accumulate, compress, repeat
from operator import add, itemgetter, methodcaller, not_
from typing import TYPE_CHECKING, Any, TypeVar

import zstandard

from paimon_core.exceptions import InvalidArgument, MetadataFormatError
from paimon_core.format.avro_split import (
    RecordPattern,
    long_bytes,
    read_long,
    record_pattern,
    register_named,
)
from paimon_core.format.float_order import order_key
from paimon_core.format.paths import (
    MANIFEST_DIR,
    MANIFEST_LIST_PREFIX,
    MANIFEST_PREFIX,
    new_file_name,
)

if TYPE_CHECKING:
    from paimon_core.format.types import DataType
    from paimon_core.io.fileio import FileIO

# --------------------------------------------------------------------------------- models


class FileKind(IntEnum):
    """Whether a manifest entry adds or deletes a file."""

    ADD = 0
    DELETE = 1


EMPTY_ROW = bytes(12)
"""Serialized BinaryRow of arity 0: 4-byte arity prefix plus an 8-byte null bit set."""


@dataclass(frozen=True, slots=True)
class SimpleStats:
    """Min/max rows (serialized BinaryRows with arity prefix) and null counts of some columns."""

    min_values: bytes
    max_values: bytes
    null_counts: tuple[int | None, ...] | None


EMPTY_STATS = SimpleStats(EMPTY_ROW, EMPTY_ROW, ())


@dataclass(frozen=True, slots=True)
class DataFileMeta:
    """One data file as a manifest describes it (Java ``DataFileMeta``).

    ``creation_time_millis`` is the raw timestamp-millis value: Java stores its local wall
    clock as if it were UTC.
    """

    file_name: str
    file_size: int
    row_count: int
    min_key: bytes
    max_key: bytes
    key_stats: SimpleStats
    value_stats: SimpleStats
    min_sequence_number: int
    max_sequence_number: int
    schema_id: int
    level: int
    extra_files: tuple[str, ...] = ()
    creation_time_millis: int | None = None
    delete_row_count: int | None = None
    embedded_index: bytes | None = None
    file_source: int | None = None
    value_stats_cols: tuple[str, ...] | None = None
    external_path: str | None = None
    first_row_id: int | None = None
    write_cols: tuple[str, ...] | None = None
    write_cols_sequences: tuple[int, ...] | None = None
    """``_WRITE_COLS_SEQUENCES`` (Paimon 2.1): per written column, its largest sequence
    number; kept as read."""


_FILE_FIELDS = frozenset(f.name for f in dataclasses.fields(DataFileMeta))
_LAZY_LOCK = threading.Lock()
# Where a lazy file keeps its source until decoded: the slot of its last field, shadowed by
# a property of the lazy class, so that the object has exactly DataFileMeta's layout and
# can become a plain DataFileMeta by ``__class__`` assignment.
_SOURCE_SLOT = DataFileMeta.write_cols_sequences  # type: ignore[attr-defined]


class _LazyDataFileMeta(DataFileMeta):
    """A ``DataFileMeta`` of a manifest, decoded on first use.

    A plan lists thousands of files and most uses of a file read a few of them, if any
    (a count, a partition's splits): the manifest reader checks each record and decodes
    the file name, and leaves the rest (stats, keys, sizes) in the decompressed bytes until
    another field is read. Then every field is filled at once and the object becomes a
    plain ``DataFileMeta`` (same layout): equal to, hashed and pickled as one.
    """

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        # Only called for a field not filled yet (or a name that is no field).
        if name not in _FILE_FIELDS:
            raise AttributeError(name)
        _materialize(self)
        return getattr(self, name)

    @property  # type: ignore[misc]
    def write_cols_sequences(self) -> tuple[int, ...] | None:
        _materialize(self)
        return self.write_cols_sequences

    def __eq__(self, other: object) -> bool:
        _materialize(self)
        return self == other

    def __hash__(self) -> int:
        _materialize(self)
        return hash(self)

    def __repr__(self) -> str:
        _materialize(self)
        return repr(self)

    def __reduce__(self) -> Any:
        _materialize(self)
        return self.__reduce__()


class _LazyBatch:
    """The lazy files one decoder call made, and where each starts in ``buf``: the first
    use of any of them decodes them all (a file used is seldom used alone: a split is read
    whole, a plan is pickled whole), in one loop instead of one fault per file."""

    __slots__ = ("buf", "decode_into", "files", "starts")

    def __init__(self, buf: bytes, decode_into: Callable[..., None]) -> None:
        self.buf = buf
        self.decode_into = decode_into
        self.files: list[DataFileMeta] = []
        self.starts: list[int] = []


class _IntoError(Exception):
    """A lazy record that failed to decode: ``(obj, error)``."""


def _materialize(file: DataFileMeta) -> None:
    """Decode the fields of a lazy file, and of the other files of its batch, into them and
    make them plain ``DataFileMeta`` objects."""
    with _LAZY_LOCK:
        if type(file) is not _LazyDataFileMeta:
            return  # another thread did it
        batch: _LazyBatch = _SOURCE_SLOT.__get__(file)
        try:
            if len(batch.files) < _GC_PAUSE_RECORDS:
                batch.decode_into(batch.buf, batch.files, batch.starts, _LazyDataFileMeta)
            else:
                with gc_paused():
                    batch.decode_into(batch.buf, batch.files, batch.starts, _LazyDataFileMeta)
        except _IntoError as failed:
            _, err = failed.args  # that file is as it was: a later use fails the same way
            if isinstance(err, (LookupError, ValueError, TypeError, struct.error)):
                raise MetadataFormatError(f"Corrupt manifest entry: {err!r}") from err
            raise err from None
        batch.files, batch.starts, batch.buf = [], [], b""


@dataclass(frozen=True, slots=True)
class ManifestEntry:
    """A file added to or deleted from one (partition, bucket)."""

    kind: FileKind
    partition: bytes
    bucket: int
    total_buckets: int
    file: DataFileMeta

    @property
    def identifier(self) -> tuple:
        """Identity of the file across ADD and DELETE entries, as Java's ``FileEntry.Identifier``."""
        f = self.file
        return (
            self.partition,
            self.bucket,
            f.level,
            f.file_name,
            tuple(f.extra_files),
            f.embedded_index,
            f.external_path,
        )


@dataclass(frozen=True, slots=True)
class ManifestFileMeta:
    """One manifest file as a manifest list describes it."""

    file_name: str
    file_size: int
    num_added_files: int
    num_deleted_files: int
    partition_stats: SimpleStats
    schema_id: int
    min_bucket: int | None = None
    max_bucket: int | None = None
    min_level: int | None = None
    max_level: int | None = None
    min_row_id: int | None = None
    max_row_id: int | None = None


@dataclass(frozen=True, slots=True)
class DeletionVectorMeta:
    """Where the deletion vector of one data file sits inside a DV index file."""

    data_file_name: str
    offset: int
    length: int
    cardinality: int | None


@dataclass(frozen=True, slots=True)
class IndexManifestEntry:
    """An index file (HASH buckets, deletion vectors, global index) of a (partition, bucket).

    ``global_index`` is kept as the decoded Avro record (a dict) and written back as read.
    """

    kind: FileKind
    partition: bytes
    bucket: int
    index_type: str
    file_name: str
    file_size: int
    row_count: int
    dv_ranges: tuple[DeletionVectorMeta, ...] | None = None
    external_path: str | None = None
    global_index: dict | None = field(default=None, hash=False)


# --------------------------------------------------------------- Avro schemas Java writes

_STATS = (
    '{"type":"record","name":"%s","fields":[{"name":"_MIN_VALUES","type":"bytes"},'
    '{"name":"_MAX_VALUES","type":"bytes"},{"name":"_NULL_COUNTS","type":["null",'
    '{"type":"array","items":["null","long"]}],"default":null}]}'
)
_HEAD = '{"type":"record","name":"record","namespace":"org.apache.paimon.avro.generated","fields":['

MANIFEST_LIST_SCHEMA = (
    _HEAD + '{"name":"_VERSION","type":"int"},{"name":"_FILE_NAME","type":"string"},'
    '{"name":"_FILE_SIZE","type":"long"},{"name":"_NUM_ADDED_FILES","type":"long"},'
    '{"name":"_NUM_DELETED_FILES","type":"long"},{"name":"_PARTITION_STATS","type":'
    + _STATS % "record__PARTITION_STATS"
    + '},{"name":"_SCHEMA_ID","type":"long"},'
    + ",".join(
        f'{{"name":"{name}","type":["null","{kind}"],"default":null}}'
        for name, kind in (
            ("_MIN_BUCKET", "int"),
            ("_MAX_BUCKET", "int"),
            ("_MIN_LEVEL", "int"),
            ("_MAX_LEVEL", "int"),
            ("_MIN_ROW_ID", "long"),
            ("_MAX_ROW_ID", "long"),
        )
    )
    + "]}"
)
"""The manifest-list schema of Java 1.4.2, verbatim (paimon-format.md §3.6)."""

_STRINGS = '["null",{"type":"array","items":"string"}]'
MANIFEST_SCHEMA = (
    _HEAD + '{"name":"_VERSION","type":"int"},{"name":"_KIND","type":"int"},'
    '{"name":"_PARTITION","type":"bytes"},{"name":"_BUCKET","type":"int"},'
    '{"name":"_TOTAL_BUCKETS","type":"int"},{"name":"_FILE","type":{"type":"record",'
    '"name":"record__FILE","fields":[{"name":"_FILE_NAME","type":"string"},'
    '{"name":"_FILE_SIZE","type":"long"},{"name":"_ROW_COUNT","type":"long"},'
    '{"name":"_MIN_KEY","type":"bytes"},{"name":"_MAX_KEY","type":"bytes"},'
    '{"name":"_KEY_STATS","type":' + _STATS % "record__FILE__KEY_STATS" + "},"
    '{"name":"_VALUE_STATS","type":' + _STATS % "record__FILE__VALUE_STATS" + "},"
    '{"name":"_MIN_SEQUENCE_NUMBER","type":"long"},{"name":"_MAX_SEQUENCE_NUMBER","type":"long"},'
    '{"name":"_SCHEMA_ID","type":"long"},{"name":"_LEVEL","type":"int"},'
    '{"name":"_EXTRA_FILES","type":{"type":"array","items":"string"}},'
    '{"name":"_CREATION_TIME","type":["null",{"type":"long","logicalType":"timestamp-millis"}],'
    '"default":null},{"name":"_DELETE_ROW_COUNT","type":["null","long"],"default":null},'
    '{"name":"_EMBEDDED_FILE_INDEX","type":["null","bytes"],"default":null},'
    '{"name":"_FILE_SOURCE","type":["null","int"],"default":null},'
    '{"name":"_VALUE_STATS_COLS","type":' + _STRINGS + ',"default":null},'
    '{"name":"_EXTERNAL_PATH","type":["null","string"],"default":null},'
    '{"name":"_FIRST_ROW_ID","type":["null","long"],"default":null},'
    '{"name":"_WRITE_COLS","type":' + _STRINGS + ',"default":null},'
    '{"name":"_WRITE_COLS_SEQUENCES","type":["null",{"type":"array","items":"long"}],'
    '"default":null}]}}]}'
)
"""The manifest-entry schema of Java 1.4.2 (paimon-format.md §3.6) with the field Paimon 2.1
adds last: ``_FILE._WRITE_COLS_SEQUENCES``."""

MANIFEST_VERSION = 2
MANIFEST_LIST_VERSION = 2

# ------------------------------------------------------------------------ Avro container

_MAGIC = b"Obj\x01"
_SYNC_INTERVAL = 64000  # Avro's default block size (uncompressed bytes), as Java writes
_ROLLING_CHECK_RECORDS = 1000  # Java's RollingFileWriter looks at the size this often


def _snappy_decompress(block: bytes) -> bytes:
    import cramjam

    try:
        data = bytes(cramjam.snappy.decompress_raw(block[:-4]))
    except Exception as err:  # cramjam's DecompressionError
        raise MetadataFormatError(f"Corrupt Avro snappy block: {err}") from err
    if zlib.crc32(data) != int.from_bytes(block[-4:], "big"):
        raise MetadataFormatError("Avro snappy block fails its CRC32 check")
    return data


def _snappy_compress(data: bytes) -> bytes:
    import cramjam

    return bytes(cramjam.snappy.compress_raw(data)) + zlib.crc32(data).to_bytes(4, "big")


def _deflate(data: bytes) -> bytes:
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


class _Zstd(threading.local):
    """One zstd (de)compressor per thread: creating one costs more than compressing a manifest.

    Java's ``file.compression.zstd-level`` defaults to 1.
    """

    def __init__(self) -> None:
        self.compressor = zstandard.ZstdCompressor(level=1)
        self.decompressor = zstandard.ZstdDecompressor()


_ZSTD = _Zstd()


_DECOMPRESS: dict[str, Callable[[bytes], bytes]] = {
    "null": bytes,
    "zstandard": lambda b: _ZSTD.decompressor.decompressobj().decompress(b),
    "snappy": _snappy_decompress,
    "deflate": lambda b: zlib.decompress(b, -15),
    "bzip2": bz2.decompress,
    "xz": lzma.decompress,
}
_COMPRESS: dict[str, Callable[[bytes], bytes]] = {
    "null": bytes,
    "zstandard": lambda b: _ZSTD.compressor.compress(b),
    "snappy": _snappy_compress,
    "deflate": _deflate,
    "bzip2": bz2.compress,
    "xz": lzma.compress,
}
_CODEC_NAMES = {"zstd": "zstandard", "none": "null", **{c: c for c in _COMPRESS}}


def avro_codec(compression: str) -> str:
    """The ``avro.codec`` name of a ``manifest.compression`` value (``zstd`` -> ``zstandard``)."""
    codec = _CODEC_NAMES.get(compression.lower())
    if codec is None:
        raise InvalidArgument(
            f"Unsupported manifest compression {compression!r}; use one of {sorted(_CODEC_NAMES)}"
        )
    return codec


_HEADERS: tuple[tuple[bytes, bytes, str], ...] = ()


def _read_header(data: bytes) -> tuple[bytes, str, int]:
    """(schema JSON, codec, position of the sync marker) of an Avro file's header.

    The metadata of files of one writer is byte for byte the same (only the sync marker
    after it differs), so the last few metadata blocks seen are kept and matched first.
    """
    global _HEADERS
    for header, schema, codec in _HEADERS:
        if data.startswith(header):
            return schema, codec, len(header)
    p = 4
    meta: dict[str, bytes] = {}
    while True:
        count, p = read_long(data, p)
        if count == 0:
            break
        if count < 0:
            count = -count
            _, p = read_long(data, p)
        for _ in range(count):
            n, p = read_long(data, p)
            key = data[p : p + n].decode()
            p += n
            n, p = read_long(data, p)
            meta[key] = data[p : p + n]
            p += n
    schema = meta["avro.schema"]
    codec = meta.get("avro.codec", b"null").decode() or "null"
    if p + 16 <= len(data):
        _HEADERS = ((data[:p], schema, codec), *_HEADERS[:7])
    return schema, codec, p


def read_avro_container(data: bytes) -> tuple[bytes, bytes, int]:
    """Split an Avro object container file into (schema JSON, decompressed records, count)."""
    schema, body, total, _ = read_avro_blocks(data)
    return schema, body, total


def read_avro_blocks(data: bytes) -> tuple[bytes, bytes, int, list[tuple[int, int]]]:
    """``read_avro_container``, and its blocks: (where each starts in the records, how many
    records it says it holds). Avro writes whole records in a block, so a block's start is a
    place where a record is known to start, and its count what a search of it must find."""
    if data[:4] != _MAGIC:
        raise MetadataFormatError("Not an Avro object container file")
    try:
        schema, codec, p = _read_header(data)
        sync = data[p : p + 16]
        p += 16
        decompress = _DECOMPRESS.get(codec)
        if decompress is None:
            raise MetadataFormatError(f"Unsupported Avro codec {codec!r}")
        blocks: list[bytes] = []
        starts: list[tuple[int, int]] = []
        total = at = 0
        end = len(data)
        while p < end:
            count, p = read_long(data, p)
            size, p = read_long(data, p)
            starts.append((at, count))
            blocks.append(decompress(data[p : p + size]))
            at += len(blocks[-1])
            p += size
            if data[p : p + 16] != sync:
                raise MetadataFormatError("Avro block is not followed by the file's sync marker")
            p += 16
            total += count
    except (
        LookupError,
        ValueError,
        zlib.error,
        zstandard.ZstdError,
        lzma.LZMAError,
        OSError,
    ) as err:
        raise MetadataFormatError(f"Corrupt Avro file: {err!r}") from err
    return schema, blocks[0] if len(blocks) == 1 else b"".join(blocks), total, starts


class _AvroWriter:
    """Builds one Avro object container file in memory, header keys exactly as Java's."""

    def __init__(self, schema_json: bytes, codec: str) -> None:
        self.sync = os.urandom(16)
        self.compress = _COMPRESS[codec]
        header = bytearray(_MAGIC)
        avro_long(header, 2)
        for key, value in ((b"avro.schema", schema_json), (b"avro.codec", codec.encode())):
            avro_bytes(header, key)
            avro_bytes(header, value)
        header += b"\x00" + self.sync
        self.parts: list[bytes] = [bytes(header)]
        self.size = len(header)
        self.block = bytearray()
        self.block_count = 0

    def add(self, encode: Callable[[bytearray, Any], None], record: Any) -> None:
        encode(self.block, record)
        self.block_count += 1
        if len(self.block) >= _SYNC_INTERVAL:
            self.flush()

    def add_encoded(self, record: bytes) -> None:
        """Add one record already encoded (blocks end where ``add`` would end them)."""
        self.block += record
        self.block_count += 1
        if len(self.block) >= _SYNC_INTERVAL:
            self.flush()

    def flush(self) -> None:
        if not self.block_count:
            return
        data = self.compress(bytes(self.block))
        head = bytearray()
        avro_long(head, self.block_count)
        avro_long(head, len(data))
        for part in (bytes(head), data, self.sync):
            self.parts.append(part)
            self.size += len(part)
        self.block = bytearray()
        self.block_count = 0

    def finish(self) -> bytes:
        self.flush()
        return b"".join(self.parts)


def write_avro_container(
    schema_json: str, compression: str, encode: Callable[[bytearray, Any], None], records: Iterable
) -> bytes:
    """An Avro file of ``records``, each written by ``encode(buffer, record)``."""
    writer = _AvroWriter(schema_json.encode(), avro_codec(compression))
    for record in records:
        writer.add(encode, record)
    return writer.finish()


# ------------------------------------------------------------------------------ encoders


def avro_long(out: bytearray, n: int) -> None:
    """Append an Avro int/long (zigzag varint); the other ``avro_*`` helpers build on it."""
    n = (n << 1) ^ (n >> 63)
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


def avro_bytes(out: bytearray, value: bytes) -> None:
    avro_long(out, len(value))
    out += value


def avro_str(out: bytearray, value: str) -> None:
    avro_bytes(out, value.encode())


def avro_opt_long(out: bytearray, value: int | None) -> None:
    if value is None:
        out.append(0)
    else:
        out.append(2)
        avro_long(out, value)


def avro_opt_bytes(out: bytearray, value: bytes | None) -> None:
    if value is None:
        out.append(0)
    else:
        out.append(2)
        avro_bytes(out, value)


def avro_opt_str(out: bytearray, value: str | None) -> None:
    if value is None:
        out.append(0)
    else:
        out.append(2)
        avro_str(out, value)


def avro_strings(out: bytearray, values: Sequence[str]) -> None:
    if values:
        avro_long(out, len(values))
        for v in values:
            avro_str(out, v)
    out.append(0)


def avro_opt_strings(out: bytearray, values: Sequence[str] | None) -> None:
    if values is None:
        out.append(0)
    else:
        out.append(2)
        avro_strings(out, values)


def _avro_stats(out: bytearray, stats: SimpleStats) -> None:
    avro_bytes(out, stats.min_values)
    avro_bytes(out, stats.max_values)
    counts = stats.null_counts
    if counts is None:
        out.append(0)
        return
    out.append(2)
    if counts:
        avro_long(out, len(counts))
        for c in counts:
            avro_opt_long(out, c)
    out.append(0)


def _encode_entry(out: bytearray, e: ManifestEntry) -> None:
    f = e.file
    out.append(MANIFEST_VERSION << 1)
    avro_long(out, e.kind)
    avro_bytes(out, e.partition)
    avro_long(out, e.bucket)
    avro_long(out, e.total_buckets)
    avro_str(out, f.file_name)
    avro_long(out, f.file_size)
    avro_long(out, f.row_count)
    avro_bytes(out, f.min_key)
    avro_bytes(out, f.max_key)
    _avro_stats(out, f.key_stats)
    _avro_stats(out, f.value_stats)
    avro_long(out, f.min_sequence_number)
    avro_long(out, f.max_sequence_number)
    avro_long(out, f.schema_id)
    avro_long(out, f.level)
    avro_strings(out, f.extra_files)
    avro_opt_long(out, f.creation_time_millis)
    avro_opt_long(out, f.delete_row_count)
    avro_opt_bytes(out, f.embedded_index)
    avro_opt_long(out, f.file_source)
    avro_opt_strings(out, f.value_stats_cols)
    avro_opt_str(out, f.external_path)
    avro_opt_long(out, f.first_row_id)
    avro_opt_strings(out, f.write_cols)
    if f.write_cols_sequences is None:
        out.append(0)
    else:
        out.append(2)
        if f.write_cols_sequences:
            avro_long(out, len(f.write_cols_sequences))
            for value in f.write_cols_sequences:
                avro_long(out, value)
        out.append(0)


def _encode_meta(out: bytearray, m: ManifestFileMeta) -> None:
    out.append(MANIFEST_LIST_VERSION << 1)
    avro_str(out, m.file_name)
    avro_long(out, m.file_size)
    avro_long(out, m.num_added_files)
    avro_long(out, m.num_deleted_files)
    _avro_stats(out, m.partition_stats)
    avro_long(out, m.schema_id)
    for value in (m.min_bucket, m.max_bucket, m.min_level, m.max_level):
        avro_opt_long(out, value)
    avro_opt_long(out, m.min_row_id)
    avro_opt_long(out, m.max_row_id)


_ENCODED_METAS: dict[str, tuple[ManifestFileMeta, bytes]] = {}
_ENCODED_METAS_MAX = 8192


def _encode_meta_reusing(out: bytearray, m: ManifestFileMeta) -> None:
    """``_encode_meta``, reusing the bytes of the very same meta object encoded before: every
    commit rewrites the base list with the previous one's metas, mostly unchanged objects."""
    cached = _ENCODED_METAS.get(m.file_name)
    if cached is not None and cached[0] is m:
        out += cached[1]
        return
    start = len(out)
    _encode_meta(out, m)
    if len(_ENCODED_METAS) >= _ENCODED_METAS_MAX:
        _ENCODED_METAS.clear()
    _ENCODED_METAS[m.file_name] = (m, bytes(out[start:]))


# ---------------------------------------------------------------- compiled Avro decoders


@dataclass(frozen=True)
class AvroField:
    """How a reader field is filled from the writer's field of the same name.

    ``spec``: None keeps the decoded value (records become dicts, arrays lists), an
    ``AvroRecord`` builds an object, an ``AvroArray`` a tuple, ``"kind"`` maps to ``FileKind``.
    ``default`` is used when the writer lacks the field or wrote null; a ``required`` field
    must be present and non-null; ``expect`` checks a version number; ``arg=False`` fields
    are checked but not passed to the factory.
    """

    name: str
    spec: Any = None
    default: Any = None
    required: bool = False
    expect: int | None = None
    arg: bool = True


@dataclass(frozen=True)
class AvroRecord:
    """Build ``factory(*args)`` from a record, args in the order of ``fields``."""

    factory: Callable[..., Any]
    fields: tuple[AvroField, ...]
    what: str


@dataclass(frozen=True)
class AvroArray:
    """Decode an array into a tuple; null items of record arrays are dropped."""

    items: Any = None


@dataclass(frozen=True)
class AvroLazy:
    """A record only walked (checked) when its container is decoded, and built when first
    used: ``lazy`` is a subclass of ``record.factory`` that decodes itself on the first
    access to a field other than ``eager``, a string field decoded straight away; it finds
    what to decode in its slot ``source``: the ``batch`` of the lazy objects of one
    decoder call, decoded together.

    Used when the writer's record has the reader's required fields as plain, non-null
    types (every Paimon version from 0.9, and pypaimon); otherwise ``record`` is decoded
    eagerly. Every check a full decode makes (structure, UTF-8) is made by the walk."""

    record: AvroRecord
    lazy: type
    eager: str
    source: Any  # the slot descriptor where a lazy object keeps its batch
    batch: type  # ``batch(buf, decode_into)``, with lists ``files`` and ``starts``


_PRIMITIVES = frozenset(("null", "boolean", "int", "long", "float", "double", "bytes", "string"))
_KNOWN_KINDS = _PRIMITIVES | {"record", "error", "array", "map", "enum", "fixed"}
_ZZ = tuple((b >> 1) ^ -(b & 1) for b in range(128))
_KINDS = {0: FileKind.ADD, 1: FileKind.DELETE}


def _version_error(what: str, expected: int) -> Callable[[int], None]:
    def fail(version: int) -> None:
        raise MetadataFormatError(
            f"Unsupported {what} version {version}; this reader knows version {expected}"
        )

    return fail


def _bad_union(index: int) -> None:
    raise ValueError(f"union branch {index} does not exist")


def _bad_length(length: int) -> None:
    raise ValueError(f"negative length {length}")


class _Codegen:
    """Emits the Python source of a decoder for one writer schema and one reader spec.

    ``filter_field``: the name of a top-level field; the decoder then takes ``keep`` (value
    -> bool, asked once per distinct value) and skips, without building anything, the rest
    of each record whose value it rejects.
    """

    def __init__(self, filter_field: str | None = None) -> None:
        self.filter_field = filter_field
        # While walking a lazy record: strings are decoded (and dropped) to check them.
        self.check_strings = False
        # The variable of an object the outermost record is decoded into (``build_into``).
        self.into: str | None = None
        # Lines run once per call before the record loop (``build``).
        self.prologue: list[str] = []
        self.lines: list[str] = []
        self.consts: dict[str, Any] = {
            "zz": _ZZ,
            "rl": read_long,
            "bad_union": _bad_union,
            "bad_length": _bad_length,
        }
        self.named: dict[str, Any] = {}
        self.counter = 0
        self.depth = 0

    def const(self, value: Any) -> str:
        name = f"k{len(self.consts)}"
        self.consts[name] = value
        return name

    def var(self, prefix: str = "v") -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def emit(self, ind: int, line: str) -> None:
        self.lines.append("    " * ind + line)

    def long(self, target: str | None, ind: int) -> None:
        e = self.emit
        e(ind, "b = buf[p]")
        e(ind, "if b < 128:")
        if target:
            e(ind + 1, f"{target} = zz[b]")
        e(ind + 1, "p += 1")
        e(ind, "elif buf[p + 1] < 128:")
        if target:
            e(ind + 1, "w = (b & 127) | (buf[p + 1] << 7)")
            e(ind + 1, f"{target} = (w >> 1) ^ -(w & 1)")
        e(ind + 1, "p += 2")
        e(ind, "else:")
        if target:
            self._varint(target, ind + 1)
        else:  # skipped: only where it ends matters (timestamps, sizes: 3 to 10 bytes)
            e(ind + 1, "p += 3")
            e(ind + 1, "while buf[p - 1] > 127:")
            e(ind + 2, "p += 1")

    def _varint(self, target: str | None, ind: int) -> None:
        """Inline loop for varints of three or more bytes (timestamps, large sizes)."""
        e = self.emit
        e(ind, "w = b & 127")
        e(ind, "s = 7")
        e(ind, "p += 1")
        e(ind, "while True:")
        e(ind + 1, "b = buf[p]")
        e(ind + 1, "p += 1")
        e(ind + 1, "w |= (b & 127) << s")
        e(ind + 1, "if b < 128:")
        e(ind + 2, "break")
        e(ind + 1, "s += 7")
        if target:
            e(ind, f"{target} = (w >> 1) ^ -(w & 1)")

    def length(self, ind: int) -> None:
        """Like ``long`` into ``n``, for lengths: never negative, so no loop can run backwards."""
        e = self.emit
        e(ind, "b = buf[p]")
        e(ind, "if b < 128:")
        e(ind + 1, "n = b >> 1")
        e(ind + 1, "p += 1")
        e(ind, "elif buf[p + 1] < 128:")
        e(ind + 1, "n = ((b & 127) | (buf[p + 1] << 7)) >> 1")
        e(ind + 1, "p += 2")
        e(ind, "else:")
        self._varint("n", ind + 1)
        e(ind + 1, "if n < 0:")
        e(ind + 2, "bad_length(n)")

    def resolve(self, schema: Any, ns: str) -> Any:
        if isinstance(schema, str) and schema not in _PRIMITIVES:
            full = schema if "." in schema or not ns else f"{ns}.{schema}"
            found = self.named.get(full, self.named.get(schema))
            if found is None:
                raise MetadataFormatError(f"Avro schema names unknown type {schema!r}")
            return found
        if isinstance(schema, dict):
            inner = schema.get("type")
            if isinstance(inner, (dict, list)) or inner not in _KNOWN_KINDS:
                return self.resolve(inner, ns)
        return schema

    def register(self, schema: dict, ns: str) -> str:
        return register_named(self.named, schema, ns)

    def value(self, schema: Any, spec: Any, target: str | None, ind: int, ns: str) -> None:
        """Emit code decoding ``schema`` at ``p`` into ``target`` (None: skip it)."""
        self.depth += 1
        if self.depth > 64:
            raise MetadataFormatError("Recursive Avro schemas are not supported")
        schema = self.resolve(schema, ns)
        e = self.emit
        if isinstance(schema, list):
            self.union(schema, spec, target, ind, ns)
            self.depth -= 1
            return
        kind = schema if isinstance(schema, str) else schema["type"]
        if isinstance(spec, AvroLazy):
            if target and self._lazy(schema, spec, target, ind, ns):
                self.depth -= 1
                return
            spec = spec.record
        if kind in ("int", "long"):
            self.long(target, ind)
            if target and spec == "kind":
                e(ind, f"{target} = {self.const(_KINDS)}[{target}]")
        elif kind in ("bytes", "string"):
            self.length(ind)
            if target:
                decode = ".decode()" if kind == "string" else ""
                e(ind, f"{target} = buf[p:p + n]{decode}")
            elif kind == "string" and self.check_strings:
                e(ind, "if n:")
                e(ind + 1, "buf[p:p + n].decode()")
            e(ind, "p += n")
        elif kind == "boolean":
            if target:
                e(ind, f"{target} = buf[p] != 0")
            e(ind, "p += 1")
        elif kind in ("float", "double"):
            size = 4 if kind == "float" else 8
            if target:
                unpack = self.const(struct.Struct("<f" if size == 4 else "<d").unpack_from)
                e(ind, f"{target} = {unpack}(buf, p)[0]")
            e(ind, f"p += {size}")
        elif kind == "null":
            if target:
                e(ind, f"{target} = None")
        elif kind == "fixed":
            self.register(schema, ns)
            if target:
                e(ind, f"{target} = buf[p:p + {int(schema['size'])}]")
            e(ind, f"p += {int(schema['size'])}")
        elif kind == "enum":
            self.register(schema, ns)
            self.long("n", ind)
            if target:
                e(ind, f"{target} = {self.const(tuple(schema['symbols']))}[n]")
        elif kind == "array":
            self.array(schema["items"], spec, target, ind, ns)
        elif kind == "map":
            self.map(schema["values"], target, ind, ns)
        elif kind in ("record", "error"):
            self.record(schema, spec, target, ind, ns)
        else:
            raise MetadataFormatError(f"Unsupported Avro type {kind!r}")
        self.depth -= 1

    def union(self, branches: list, spec: Any, target: str | None, ind: int, ns: str) -> None:
        e = self.emit
        e(ind, "b = buf[p]")
        e(ind, "p += 1")
        for i, branch in enumerate(branches):
            e(ind, f"{'if' if i == 0 else 'elif'} b == {i * 2}:")
            before = len(self.lines)
            self.value(branch, spec, target, ind + 1, ns)
            if len(self.lines) == before:
                e(ind + 1, "pass")
        e(ind, "else:")
        e(ind + 1, "bad_union(b)")

    def blocks(self, ind: int, item: Callable[[int], None]) -> None:
        """Emit the block loop of an array or map; ``item(ind)`` emits one element."""
        count = self.var("c")
        e = self.emit
        e(ind, "while True:")
        self.long(count, ind + 1)
        e(ind + 1, f"if {count} == 0:")
        e(ind + 2, "break")
        e(ind + 1, f"if {count} < 0:")
        e(ind + 2, f"{count} = -{count}")
        self.long(None, ind + 2)
        e(ind + 1, f"for _ in range({count}):")
        item(ind + 2)

    def array(self, items: Any, spec: Any, target: str | None, ind: int, ns: str) -> None:
        e = self.emit
        item_spec = spec.items if isinstance(spec, AvroArray) else None
        as_tuple = isinstance(spec, AvroArray)
        drop_nulls = isinstance(item_spec, AvroRecord)
        acc = self.var("a")
        x = self.var("x") if target else None
        e(ind, "if buf[p] == 0:")
        e(ind + 1, "p += 1")
        if target:
            e(ind + 1, f"{target} = {'()' if as_tuple else '[]'}")
        e(ind, "else:")
        if target:
            e(ind + 1, f"{acc} = []")

        def item(i: int) -> None:
            self.value(items, item_spec, x, i, ns)
            if target and drop_nulls:
                e(i, f"if {x} is not None:")
                e(i + 1, f"{acc}.append({x})")
            elif target:
                e(i, f"{acc}.append({x})")

        self.blocks(ind + 1, item)
        if target:
            e(ind + 1, f"{target} = {'tuple(' + acc + ')' if as_tuple else acc}")

    def map(self, values: Any, target: str | None, ind: int, ns: str) -> None:
        e = self.emit
        acc, key, x = self.var("m"), self.var("s"), self.var("x")
        if target:
            e(ind, f"{acc} = {{}}")

        def item(i: int) -> None:
            self.value("string", None, key if target else None, i, ns)
            self.value(values, None, x if target else None, i, ns)
            if target:
                e(i, f"{acc}[{key}] = {x}")

        self.blocks(ind, item)
        if target:
            e(ind, f"{target} = {acc}")

    def record(self, schema: dict, spec: Any, target: str | None, ind: int, ns: str) -> None:
        ns = self.register(schema, ns)
        into, self.into = self.into, None  # the outermost record only
        e = self.emit
        wanted = {f.name: f for f in spec.fields} if isinstance(spec, AvroRecord) else {}
        got: dict[str, str] = {}
        filter_field, self.filter_field = self.filter_field, None  # top-level record only
        fields = schema["fields"]
        for position, wf in enumerate(fields):
            name = wf["name"]
            rf = wanted.get(name)
            keep = target is not None and (rf is not None or not isinstance(spec, AvroRecord))
            var = self.var() if keep else None
            self.value(wf["type"], rf.spec if rf else None, var, ind, ns)
            if name == filter_field and var is not None:
                self._skip_unless_kept(var, fields[position + 1 :], ind, ns)
            if var is None:
                continue
            got[name] = var
            if rf is None:
                continue
            nullable = self._nullable(wf["type"], ns)
            if rf.required and nullable:
                fail = self.const(_missing_error(spec.what, name))
                e(ind, f"if {var} is None:")
                e(ind + 1, f"{fail}()")
            elif rf.default is not None and nullable:
                e(ind, f"if {var} is None:")
                e(ind + 1, f"{var} = {self.const(rf.default)}")
            if rf.expect is not None:
                fail = self.const(_version_error(spec.what, rf.expect))
                e(ind, f"if {var} != {rf.expect}:")
                e(ind + 1, f"{fail}({var})")
        if target is None:
            return
        if not isinstance(spec, AvroRecord):
            items = ", ".join(f"{name!r}: {var}" for name, var in got.items())
            e(ind, f"{target} = {{{items}}}")
            return
        args = []
        for rf in spec.fields:
            if rf.name not in got and rf.required:
                raise MetadataFormatError(f"The {spec.what} file lacks the field {rf.name}")
            if rf.arg:
                args.append(got.get(rf.name) or self.const(rf.default))
        if _is_plain_namedtuple(spec.factory, len(args)):
            new = self.const(tuple.__new__)
            e(ind, f"{target} = {new}({self.const(spec.factory)}, ({', '.join(args)},))")
            return
        twin = _mutable_twin(spec.factory, len(args))
        if into is not None and twin is not None:
            # Through the slot descriptors: ``into`` stays an instance of a subclass of the
            # frozen factory while its fields are filled, so another thread reading it sees
            # set fields, or waits for the rest (``_LazyDataFileMeta``).
            for name, arg in zip(twin.__slots__, args):
                e(ind, f"{self.const(getattr(spec.factory, name).__set__)}({into}, {arg})")
            return
        if twin is None:
            e(ind, f"{target} = {self.const(spec.factory)}({', '.join(args)})")
            return
        # Filling a mutable twin and retyping it skips the frozen dataclass __init__ (its
        # object.__setattr__ calls), which would be most of the decoding time.
        e(ind, f"{target} = {self.const(object.__new__)}({self.const(twin)})")
        for name, arg in zip(twin.__slots__, args):
            e(ind, f"{target}.{name} = {arg}")
        e(ind, f"{target}.__class__ = {self.const(spec.factory)}")

    def _lazy(self, schema: Any, spec: AvroLazy, target: str, ind: int, ns: str) -> bool:
        """Emit the walk of a lazy record into ``target``; False (nothing emitted) when the
        writer's record does not qualify, so that it is decoded eagerly."""
        record = spec.record
        if not isinstance(schema, dict) or schema.get("type") not in ("record", "error"):
            return False
        types = {f["name"]: self.resolve(f["type"], ns) for f in schema["fields"]}
        for rf in record.fields:
            if rf.required and (rf.name not in types or self._nullable(types[rf.name], ns)):
                return False
        if types.get(spec.eager) != "string":
            return False
        one = _Codegen()
        one.named = dict(self.named)
        decode_into = one.build_into(schema, record, ns)
        inner = self.register(schema, ns)
        e = self.emit
        start, eager = self.var("o"), self.var("v")
        e(ind, f"{start} = p")
        self.check_strings = True
        try:
            for wf in schema["fields"]:
                keep = eager if wf["name"] == spec.eager else None
                self.value(wf["type"], None, keep, ind, inner)
        finally:
            self.check_strings = False
        e(ind, f"{target} = {self.const(object.__new__)}({self.const(spec.lazy)})")
        args = [rf.name for rf in record.fields if rf.arg]
        attribute = dataclasses.fields(record.factory)[args.index(spec.eager)].name
        set_eager = self.const(getattr(record.factory, attribute).__set__)
        e(ind, f"{set_eager}({target}, {eager})")
        batch = self.var("lb")
        self.prologue.append(f"{batch} = {self.const(spec.batch)}(buf, {self.const(decode_into)})")
        self.prologue.append(f"{batch}_file = {batch}.files.append")
        self.prologue.append(f"{batch}_start = {batch}.starts.append")
        e(ind, f"{self.const(spec.source.__set__)}({target}, {batch})")
        e(ind, f"{batch}_file({target})")
        e(ind, f"{batch}_start({start})")
        return True

    def _skip_unless_kept(self, var: str, rest: list[dict], ind: int, ns: str) -> None:
        """Emit: a record whose ``var`` ``keep`` rejects has its remaining fields skipped."""
        e = self.emit
        e(ind, f"ok = seen.get({var})")
        e(ind, "if ok is None:")
        e(ind + 1, f"ok = seen[{var}] = keep({var})")
        e(ind, "if not ok:")
        for wf in rest:
            self.value(wf["type"], None, None, ind + 1, ns)
        e(ind + 1, "continue")

    def _nullable(self, schema: Any, ns: str) -> bool:
        schema = self.resolve(schema, ns) if not isinstance(schema, list) else schema
        if isinstance(schema, list):
            return any(
                b == "null" or (isinstance(b, dict) and b.get("type") == "null") for b in schema
            )
        return schema == "null"

    def build_into(self, schema: Any, spec: AvroRecord, ns: str) -> Callable[..., None]:
        """``decode(buf, objs, starts, lazy)``: each object of ``objs`` still of class
        ``lazy`` (a subclass of ``spec.factory`` adding no slots) gets the record ``schema``
        at its start decoded into its slots as ``spec`` says, then becomes a
        ``spec.factory``. A record that fails to decode leaves its object untouched and
        raises ``_IntoError(obj, error)``."""
        if _mutable_twin(spec.factory, sum(1 for f in spec.fields if f.arg)) is None:
            raise MetadataFormatError(f"{spec.factory.__name__} cannot be decoded lazily")
        e = self.emit
        e(1, "for obj, p in zip(objs, starts):")
        e(2, "if type(obj) is not lazy:")
        e(3, "continue")
        e(2, "try:")
        self.into = "obj"  # every field is decoded before the first is stored
        self.value(schema, spec, "r", 3, ns)
        e(2, "except BaseException as err:")
        e(3, f"raise {self.const(_IntoError)}(obj, err) from err")
        # object.__setattr__: a frozen dataclass's own refuses (and fails on subclasses).
        e(2, f"{self.const(object.__setattr__)}(obj, '__class__', {self.const(spec.factory)})")
        params = ", ".join(f"{k}={k}" for k in self.consts)
        source = "\n".join([f"def decode(buf, objs, starts, lazy, {params}):", *self.lines])
        namespace = dict(self.consts)
        exec(compile(source, f"<avro decoder: one {spec.what} record>", "exec"), namespace)
        return namespace["decode"]

    def build(self, schema: Any, spec: AvroRecord) -> Callable[..., int]:
        """``decode(buf, p, count, out, keep, seen)``: append the ``count`` records from ``p``
        (those ``keep`` accepts, when filtering; ``seen`` memoises its answers); the end."""
        e = self.emit
        e(1, "append = out.append")
        e(1, "for _ in range(count):")
        self.value(schema, spec, "r", 2, "")
        if self._nullable(schema, ""):
            e(2, "if r is not None:")
            e(3, "append(r)")
        else:
            e(2, "append(r)")
        e(1, "return p")
        params = ", ".join(["keep=None", "seen=None", *(f"{k}={k}" for k in self.consts)])
        prologue = [f"    {line}" for line in self.prologue]
        source = "\n".join([f"def decode(buf, p, count, out, {params}):", *prologue, *self.lines])
        namespace = dict(self.consts)
        exec(compile(source, f"<avro decoder: {spec.what}>", "exec"), namespace)
        return namespace["decode"]


def _is_plain_namedtuple(cls: Any, arity: int) -> bool:
    """Whether ``cls`` is a namedtuple class of ``arity`` fields made by ``namedtuple`` or
    ``NamedTuple`` itself: its instances are then built by ``tuple.__new__`` directly."""
    return (
        isinstance(cls, type)
        and cls.__bases__ == (tuple,)
        and len(getattr(cls, "_fields", ())) == arity
        and hasattr(cls, "_make")
    )


def _mutable_twin(cls: Any, arity: int) -> type | None:
    """A plain class with the slots of the frozen slots dataclass ``cls``, else None.

    Its instances can take ``cls`` as their ``__class__`` (same layout): set the fields, then
    retype. None when ``cls`` is not such a dataclass built from ``arity`` positional args.
    """
    if not dataclasses.is_dataclass(cls) or "__slots__" not in vars(cls):
        return None
    names = tuple(f.name for f in dataclasses.fields(cls))
    if len(names) != arity or hasattr(cls, "__post_init__") or cls.__bases__ != (object,):
        return None
    if tuple(cls.__slots__) != names:
        return None
    twin = _TWINS.get(cls)
    if twin is None:
        twin = type(f"_Mutable{cls.__name__}", (), {"__slots__": names})
        probe = object.__new__(twin)
        for name in names:
            setattr(probe, name, None)
        try:
            probe.__class__ = cls
        except TypeError:
            return None
        _TWINS[cls] = twin
    return twin


_TWINS: dict[type, type] = {}


def _missing_error(what: str, name: str) -> Callable[[], None]:
    def fail() -> None:
        raise MetadataFormatError(f"The {what} file has no value for the required field {name}")

    return fail


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many acyclic metadata objects.

    Decoding allocates several tracked objects per entry, so the collector would otherwise run
    full passes over the whole heap during a plan, for nothing: these objects hold no cycles.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


_GC_PAUSE_RECORDS = 256
_SMALL_BODY = 64 * 1024
_DECODERS: dict[tuple[int, bytes, str | None], tuple[AvroRecord, Callable[..., int]]] = {}
# The last small body each decoder decoded: (body, count, records).
_LAST_SMALL: dict[Callable, tuple[bytes, int, tuple]] = {}


_Decoded = TypeVar("_Decoded")


def read_avro_file(file_io: FileIO, path: str, decode: Callable[[bytes], _Decoded]) -> _Decoded:
    """``decode`` of the bytes at ``path``; a file that does not decode fails naming itself
    (a missing one still raises ``FileNotFoundError``: callers tell vanished from corrupt)."""
    data = file_io.read_bytes(path)
    try:
        return decode(data)
    except MetadataFormatError as err:
        raise MetadataFormatError(f"Metadata file {path} is corrupt: {err}") from None


def decode_avro(
    data: bytes,
    spec: AvroRecord,
    keep: Callable[[Any], bool] | None = None,
    filter_field: str = "_PARTITION",
    verdicts: dict[bytes, bool] | None = None,
    scope: str = "",
    partition_size: int | None = None,
    partition_arity: int | None = None,
) -> list:
    """Decode every record of an Avro file into objects as ``spec`` says.

    ``keep``: when given, records whose top-level ``filter_field`` it rejects are skipped
    before the rest of them is decoded (a plan of a few partitions builds nothing for the
    others); it is asked once per distinct value, and ``verdicts`` keeps its answers by the
    field's bytes as written, for the next files of the same plan. Every record is still
    checked to parse: records are split and their fields found, in C, by the writer
    schema's ``RecordPattern`` (learnt per ``scope``, a table's manifest directory), and the
    kept ones decoded.

    ``partition_size``: for manifests whose every ``_PARTITION`` has this many bytes (rows of
    fixed-size fields only): a ``keep`` read then finds the entries' heads by searching the
    bytes, and parses only the records it keeps (``_decode_by_heads``): records it does not
    keep are not checked to parse. ``partition_arity``: for tables whose partition has
    variable-size fields (``dt STRING``), whose rows are still often all of one length: the
    same search, with the size of the manifest's first partition, once checked that no
    record has a partition of another size (of this arity), else the general way.

    Raises:
        MetadataFormatError: not a readable Avro file, a corrupt one, or a wrong ``_VERSION``.
    """
    if keep is not None:
        schema_json, body, count, starts = read_avro_blocks(data)
        return _decode_filtered(
            schema_json,
            body,
            count,
            spec,
            keep,
            filter_field,
            verdicts,
            scope,
            starts
            if (partition_size is not None or partition_arity is not None)
            and filter_field == "_PARTITION"
            else None,
            partition_size,
            partition_arity,
        )
    schema_json, body, count = read_avro_container(data)
    if spec is MANIFEST_SPEC_LAZY and count >= _LAZY_MATCH_RECORDS:
        file_decoder = _lazy_file_decoder(schema_json)
        pattern = None
        if file_decoder is not None:
            pattern = record_pattern(schema_json, _LAZY_CAPTURES, scope, ascii_strings=True)
        if pattern is not None and file_decoder is not None:

            def walk(*args: Any) -> int:  # generated when first needed (a few ms)
                return _decoder(schema_json, spec, None)(*args)

            return _decode_lazy_matched(body, count, pattern, file_decoder, walk, spec)
    decoder = _decoder(schema_json, spec, None)
    # A base manifest list usually extends the previous snapshot's (its manifests plus the
    # new delta ones, same bytes): only the records after a known prefix are decoded.
    start, out = 0, []
    last = _LAST_SMALL.get(decoder)
    if last is not None and count >= last[1] and body.startswith(last[0]):
        start, out = len(last[0]), list(last[2])
    try:
        if count - len(out) < _GC_PAUSE_RECORDS:
            end = decoder(body, start, count - len(out), out)
        else:
            with gc_paused():
                end = decoder(body, start, count - len(out), out)
    except (LookupError, ValueError, TypeError, struct.error) as err:
        raise MetadataFormatError(f"Corrupt {spec.what} file: {err!r}") from err
    _check_end(end, body, spec)
    if len(body) <= _SMALL_BODY:
        if len(_LAST_SMALL) > 64:
            _LAST_SMALL.clear()
        _LAST_SMALL[decoder] = (body, count, tuple(out))
    return out


def _check_end(end: int, body: bytes, spec: AvroRecord) -> None:
    if end != len(body):
        raise MetadataFormatError(f"Corrupt {spec.what} file: records do not fill their blocks")


def _decoder(schema_json: bytes, spec: AvroRecord, filter_field: str | None) -> Callable[..., int]:
    key = (id(spec), schema_json, filter_field)
    cached = _DECODERS.get(key)
    if cached is not None and cached[0] is spec:
        return cached[1]
    try:
        writer_schema = json.loads(schema_json)
    except ValueError as err:
        raise MetadataFormatError(f"The {spec.what} file has a bad Avro schema") from err
    decoder = _Codegen(filter_field).build(writer_schema, spec)
    if len(_DECODERS) > 256:
        _DECODERS.clear()
    _DECODERS[key] = (spec, decoder)
    return decoder


def _decode_filtered(
    schema_json: bytes,
    body: bytes,
    count: int,
    spec: AvroRecord,
    keep: Callable[[Any], bool],
    filter_field: str,
    verdicts: dict[bytes, bool] | None,
    scope: str,
    starts: list[tuple[int, int]] | None = None,
    partition_size: int | None = None,
    partition_arity: int | None = None,
) -> list:
    pattern = record_pattern(schema_json, (((), filter_field, filter_field),), scope)
    if pattern is not None and not pattern.has_value:
        pattern = None
    out: list = []
    seen: dict[Any, bool] = {}
    if verdicts is None:
        verdicts = {}
    try:
        with gc_paused():
            guard = None
            if partition_size is None and partition_arity is not None:
                partition_size, guard = _first_partition_size(body), partition_arity
            if (
                pattern is not None
                and starts is not None
                and partition_size is not None
                and _plain_head(schema_json)
            ):
                decode = _kept_decoder(schema_json, spec, scope)
                if _decode_by_heads(
                    body, starts, partition_size, pattern, keep, verdicts, seen, decode, out, guard
                ):
                    return out
                out = []
            if pattern is None:
                walk = _decoder(schema_json, spec, filter_field)
                end = walk(body, 0, count, out, keep, seen)
            else:
                decode = _kept_decoder(schema_json, spec, scope)

                def walk(*args: Any) -> int:  # generated when first needed (a few ms)
                    return _decoder(schema_json, spec, filter_field)(*args)

                end = _decode_matched(body, count, pattern, keep, verdicts, seen, walk, decode, out)
    except (LookupError, ValueError, TypeError, struct.error) as err:
        raise MetadataFormatError(f"Corrupt {spec.what} file: {err!r}") from err
    _check_end(end, body, spec)
    return out


_FIRST = itemgetter(0)
_SECOND = itemgetter(1)
_LEARN_ROUNDS = 4
_LEARN_RECORDS = 32


class PartitionVerdicts(dict):
    """``keep``'s answers that the filtered reads of one plan share, by a partition's bytes
    as written (``ManifestFile.read``), and the set of those it kept: a searched read
    (``_decode_by_heads``) intersects a manifest's partitions with the few kept ones rather
    than looking each up (a manifest may hold every partition of the table)."""

    def __init__(self) -> None:
        super().__init__()
        self.kept: set[bytes] = set()


_PLAIN_HEADS: dict[bytes, bool] = {}
_HEAD_SEARCHES: dict[tuple[int, int | None], re.Pattern[bytes]] = {}


def _plain_head(schema_json: bytes) -> bool:
    """Whether records of this writer schema start with ``_VERSION`` and ``_KIND`` (ints)
    then ``_PARTITION`` (bytes): the head ``_decode_by_heads`` searches (every Paimon from
    0.9, pypaimon, ours)."""
    known = _PLAIN_HEADS.get(schema_json)
    if known is None:
        try:
            fields = json.loads(schema_json)["fields"][:3]
            known = [(f["name"], f["type"]) for f in fields] in (
                [("_VERSION", a), ("_KIND", b), ("_PARTITION", "bytes")]
                for a in ("int", "long")
                for b in ("int", "long")
            )
        except (LookupError, TypeError, ValueError, AttributeError):
            known = False
        if len(_PLAIN_HEADS) > 64:
            _PLAIN_HEADS.clear()
        _PLAIN_HEADS[schema_json] = known
    return known


def _head_search(size: int, guard: int | None = None) -> re.Pattern[bytes]:
    """The head of an entry of version 2, ADD or DELETE, whose partition has ``size`` bytes:
    the raw ``_PARTITION`` (length and row) captured. ``guard`` (an arity): also the head of
    a partition of any other length whose row has that arity (a serialized partition
    starts with it, big-endian), capturing its length and arity only (shorter than any
    partition of ``size``, and not starting with its length): the records that a search
    for ``size`` alone would miss."""
    key = (size, guard)
    found = _HEAD_SEARCHES.get(key)
    if found is None:
        version = re.escape(long_bytes(MANIFEST_VERSION))
        kinds = b"[%s]" % b"".join(re.escape(long_bytes(k)) for k in FileKind)
        length = re.escape(long_bytes(size))
        head = length + b".{%d}" % size
        if guard is not None:
            other = rb"(?!%s)[\x80-\xff]*+[\x00-\x7f]" % length
            head += b"|" + other + re.escape(_PARTITION_ARITY.pack(guard))
        # The rest a lookahead: heads overlapping one another (one not a record's) are all
        # found; the version byte first, which ``re`` searches for fast.
        found = re.compile(version + b"(?=" + kinds + b"(" + head + b"))", re.DOTALL)
        _HEAD_SEARCHES[key] = found
    return found


_PARTITION_ARITY = struct.Struct(">i")


def _first_partition_size(body: bytes) -> int | None:
    """The length of the first record's ``_PARTITION`` (after a one-byte version and kind),
    if the body starts with such a head: the size a searched read of a table with
    variable-size partition fields tries (then checks that every record has it)."""
    if len(body) < 3 or body[0] != _VERSION_BYTE or body[1] not in _KIND_BYTES:
        return None
    try:
        size, _ = read_long(body, 2)
    except (LookupError, ValueError):
        return None
    return size if 0 <= size <= len(body) else None


_VERSION_BYTE = long_bytes(MANIFEST_VERSION)[0]
_KIND_BYTES = frozenset(long_bytes(k)[0] for k in FileKind)


def _decode_by_heads(
    body: bytes,
    blocks: list[tuple[int, int]],
    size: int,
    pattern: RecordPattern,
    keep: Callable[[Any], bool],
    verdicts: dict[bytes, bool],
    seen: dict[Any, bool],
    decode: Callable[[bytes, int, list], None],
    out: list,
    guard: int | None = None,
) -> bool:
    """A filtered read of a manifest whose partitions all have ``size`` bytes, in time of
    the kept records, not the file: whether it was done (else ``out`` is to be dropped and
    the manifest read the general way).

    Every record starts with its head (version, kind, partition: ``_head_search``), so a
    search of each block's bytes (C speed) finds the partitions of all its records, and
    perhaps some that are not (the same bytes inside another field). Each distinct one is
    decided once (``keep.necessary``, when the keeper has it, first rules out most in C).
    Where a block holds as many heads as it says it holds records, the heads are its
    records', in order: the kept records lie from their head to the next, and nothing is
    parsed but them (by their decoder). Elsewhere the places of kept heads are looked at:
    one is a record if the records parsed from the start of its block (where one is known
    to start) reach exactly it; a place inside a record is passed over.

    Why every record is found: a partition of fixed-size fields is always that many bytes
    (a BinaryRow has a variable part only for variable-size fields: Java's, pypaimon's and
    our writers write none then). The first record of each block is checked to have that
    head, and the search of each block to find at least its count of heads; anything
    else, or a record that the pattern has not learned, leaves the file to the general way.
    A record of a partition not kept is not parsed, so its damage goes unnoticed (the read
    of every partition notices it).

    ``guard`` (the partition's arity): for partitions with variable-size fields, whose
    rows need not all have ``size`` bytes (``size`` is then the first record's): the search
    also finds heads of partitions of any other length with that arity, and one found (a
    record of another size, or the same bytes inside a field) leaves the file to the
    general way. So the file is searched only when every record's partition has ``size``
    bytes, as with fixed-size fields."""
    length = long_bytes(size)
    head = len(length) + 2
    search = _head_search(size, guard)
    found: list[list[bytes]] = []
    spans: list[tuple[int, int, int]] = []
    end = len(body)
    for i, (start, records) in enumerate(blocks):
        stop = blocks[i + 1][0] if i + 1 < len(blocks) else end
        if records <= 0:
            if records < 0 or stop > start:
                return False
            continue
        if not (
            body[start + 2 : start + head] == length
            and body[start] == _VERSION_BYTE
            and body[start + 1] in _KIND_BYTES
        ):
            return False  # not the head searched for: records may have other partitions
        heads = search.findall(body, start, stop)
        if len(heads) < records:
            return False
        found.append(heads)
        spans.append((start, stop, records))
    distinct = set().union(*found)
    if guard is not None:
        if set(map(len, distinct)) != {len(length) + size}:
            return False  # a head of another size: perhaps a record the search misses
    suspects: set[bytes] = set()
    new = list(distinct.difference(verdicts))
    if new:
        values = list(map(itemgetter(slice(len(length), None)), new))
        necessary = getattr(keep, "necessary", None)
        if necessary is not None:  # those that fail it are not kept: no Python step each
            passed = necessary(values)
            verdicts.update(zip(compress(new, map(not_, passed)), repeat(False)))
            new, values = list(compress(new, passed)), list(compress(values, passed))
        for raw, value in zip(new, values):
            ok = seen.get(value)
            if ok is None:
                try:
                    ok = bool(keep(value))
                except Exception:  # perhaps not a partition: looked at if it is a record
                    suspects.add(raw)
                    continue
                seen[value] = ok
            verdicts[raw] = ok
            if ok and isinstance(verdicts, PartitionVerdicts):
                verdicts.kept.add(raw)
    if isinstance(verdicts, PartitionVerdicts):  # the few kept, not each partition asked
        wanted = distinct.intersection(verdicts.kept)
        wanted.update(suspects)
    else:
        wanted = set(compress(distinct, map(verdicts.get, distinct, repeat(True))))
    if not wanted:
        return True
    kept: list[bytes] = []
    for heads, (start, stop, records) in zip(found, spans):
        if wanted.isdisjoint(heads):
            continue
        flags = list(map(wanted.__contains__, heads))
        chosen = list(compress(range(len(heads)), flags))
        if any(heads[j] in suspects for j in chosen):
            return False  # a record whose partition ``keep`` fails on: the general way
        if len(heads) == records:  # the heads are the records'
            _cut(body, start, stop, [heads[j] for j in chosen], search, kept)
        else:
            places = list(map(_START, compress(search.finditer(body, start, stop), flags)))
            if not _verified(body, start, places, pattern, kept):
                return False
    if kept:
        decode(b"".join(kept), len(kept), out)
    return True


_START = methodcaller("start")


def _cut(
    body: bytes,
    start: int,
    stop: int,
    raws: list[bytes],
    search: re.Pattern[bytes],
    kept: list[bytes],
) -> None:
    """Add to ``kept`` the records of a block whose heads are all records' heads, whose
    partitions (raw) are ``raws`` in order, each record's and no other record's between: the
    first head of each after the previous one's record (found at the speed of
    ``bytes.find``), up to the next head."""
    cursor = start
    for raw in raws:
        at = body.find(raw, cursor + 2, stop)
        while at >= 0 and not (body[at - 2] == _VERSION_BYTE and body[at - 1] in _KIND_BYTES):
            at = body.find(raw, at + 1, stop)  # the same bytes inside a field
        if at < 0:
            raise ValueError("a partition's head is not where the search found it")
        following = search.search(body, at - 1, stop)
        cursor = stop if following is None else following.start()
        kept.append(body[at - 2 : cursor])


def _verified(
    body: bytes, start: int, places: list[int], pattern: RecordPattern, kept: list[bytes]
) -> bool:
    """Add to ``kept`` the records starting at ``places`` (in order, in the block from
    ``start``), passing over places inside a record; False on a record the pattern does
    not match (not learned yet)."""
    compiled = pattern.compiled
    if compiled is None:
        pattern.learn(body, start, _LEARN_RECORDS)
        compiled = pattern.compiled
        if compiled is None:
            return False
    one, run = compiled
    cursor = start
    for place in places:
        if place < cursor:
            continue  # inside the record just taken
        stop = run.match(body, cursor, place).end()
        if stop != place:
            record = one.match(body, stop)
            if record is None or record.end() <= place:
                return False  # a record the pattern does not match: the general way
            cursor = stop  # inside that record: not a head
            continue
        record = one.match(body, place)
        if record is None:
            return False
        kept.append(record.group(1))
        cursor = record.end()
    return True


def _decode_matched(
    body: bytes,
    count: int,
    pattern: RecordPattern,
    keep: Callable[[Any], bool],
    verdicts: dict[bytes, bool] | None,
    seen: dict[Any, bool],
    walk: Callable[..., int],
    decode: Callable[[bytes, int, list], None],
    out: list,
) -> int:
    """``_decode_filtered`` through ``pattern``: the records it matches are split from
    ``body`` in C with their raw filter field, and only those kept are decoded (their bytes
    joined); the others are walked (``_split_records``). The end."""
    if verdicts is None:
        verdicts = {}

    def matched(found: list[tuple[bytes, ...]], pos: int) -> None:
        raws = list(map(_SECOND, found))
        for raw in set(raws).difference(verdicts):
            value = pattern.value(raw)
            ok = seen.get(value)
            if ok is None:
                ok = seen[value] = bool(keep(value))
            verdicts[raw] = ok
            if ok and isinstance(verdicts, PartitionVerdicts):
                verdicts.kept.add(raw)
        kept = list(map(_FIRST, compress(found, map(verdicts.__getitem__, raws))))
        if kept:
            decode(b"".join(kept), len(kept), out)

    return _split_records(
        body, count, pattern, matched, lambda pos, n: walk(body, pos, n, out, keep, seen)
    )


_LEARN_ROUNDS = 2  # a file
_LEARN_RECORDS = 16
_WALKED_MIN = 16
_WALKED_SHARE = 8


def _split_records(
    body: bytes,
    count: int,
    pattern: RecordPattern,
    matched: Callable[[list[tuple[bytes, ...]], int], None],
    walk: Callable[[int, int], int],
) -> int:
    """Hand the runs of the ``count`` records of ``body`` that ``pattern`` matches to
    ``matched(found, start)``; at a record it does not match, let it learn from the next
    few (a few times a file), or ``walk(start, n)`` (decode ``n`` records the generated
    way: the end). When more than one record in ``_WALKED_SHARE`` had to be walked, the
    pattern does not fit this file: the rest is walked in one call. The end."""
    pos, end = 0, len(body)
    rounds = walked = done = 0
    whole = True
    while pos < end and count > 0:
        if walked > _WALKED_MIN and walked * _WALKED_SHARE > done:
            break
        found, stop = pattern.run(body, pos, whole)
        whole = False
        if found:
            if len(found) > count:
                raise ValueError("more records than the blocks say")
            matched(found, pos)
            count -= len(found)
            done += len(found)
            pos = stop
            continue
        if rounds < _LEARN_ROUNDS:
            rounds += 1
            if pattern.learn(body, pos, _LEARN_RECORDS):
                continue
        pos = walk(pos, 1)
        count -= 1
        walked += 1
        done += 1
    if count > 0:  # the rest, or more records than the body holds: fails as the walk does
        pos = walk(pos, count)
    return pos


def _kept_decoder(
    schema_json: bytes, spec: AvroRecord, scope: str
) -> Callable[[bytes, int, list], None]:
    """``decode(records, n, out)``: append the objects of ``n`` whole records; for lazy
    manifest entries through the pattern of whole lazy reads when it matches them all (its
    objects built in C, no decoder generated), else by the generated decoder."""

    def generated(records: bytes, n: int, out: list) -> None:
        if _decoder(schema_json, spec, None)(records, 0, n, out) != len(records):
            raise ValueError("a record is not what its pattern matched")

    if spec is not MANIFEST_SPEC_LAZY:
        return generated
    file_decoder = _lazy_file_decoder(schema_json)
    if file_decoder is None:
        return generated
    pattern = record_pattern(schema_json, _LAZY_CAPTURES, scope, ascii_strings=True)
    if pattern is None:
        return generated

    def matched(records: bytes, n: int, out: list) -> None:
        found, stop = pattern.run(records, 0, True)
        if stop < len(records) and pattern.learn(records, stop, n):
            found, stop = pattern.run(records, 0, True)
        if stop == len(records) and len(found) == n:
            _lazy_entries(found, records, 0, file_decoder, _heads(), out)
        else:
            generated(records, n, out)

    return matched


_LAZY_MATCH_RECORDS = 64
_ENTRY_HEAD = ("_VERSION", "_KIND", "_PARTITION", "_BUCKET", "_TOTAL_BUCKETS")
_LAZY_CAPTURES = (((), "_VERSION", "_TOTAL_BUCKETS"), (("_FILE",), "_FILE_NAME", "_FILE_NAME"))
_LAZY_FILE_DECODERS: dict[bytes, Callable[..., None] | None] = {}
_UNKNOWN = object()


def _lazy_file_decoder(schema_json: bytes) -> Callable[..., None] | None:
    """The ``decode_into`` of the lazy files of manifests of this writer schema, when its
    entries are the five head fields then a ``_FILE`` record that ``MANIFEST_SPEC_LAZY``
    decodes lazily (every Paimon version from 0.9, and ours); else None."""
    known = _LAZY_FILE_DECODERS.get(schema_json, _UNKNOWN)
    if known is not _UNKNOWN:
        return known  # type: ignore[return-value]
    found = None
    try:
        schema = json.loads(schema_json)
        names = tuple(f["name"] for f in schema["fields"])
        types = [f["type"] for f in schema["fields"]]
        plain = ("int", "int", "bytes", "int", "int")
        if names == (*_ENTRY_HEAD, "_FILE") and all(
            t == want or (want == "int" and t == "long") for t, want in zip(types, plain)
        ):
            gen = _Codegen()
            ns = gen.register(schema, "")
            file_schema = gen.resolve(types[5], ns)
            if isinstance(file_schema, dict) and file_schema.get("type") == "record":
                inner = file_schema.get("namespace", ns)
                fields = {f["name"]: gen.resolve(f["type"], inner) for f in file_schema["fields"]}
                if fields.get("_FILE_NAME") == "string" and all(
                    rf.name in fields and not gen._nullable(fields[rf.name], inner)
                    for rf in _FILE_SPEC.fields
                    if rf.required
                ):
                    found = _DecodeInto(file_schema, dict(gen.named), ns)
    except (LookupError, TypeError, ValueError, AttributeError, MetadataFormatError):
        found = None
    if len(_LAZY_FILE_DECODERS) > 64:
        _LAZY_FILE_DECODERS.clear()
    _LAZY_FILE_DECODERS[schema_json] = found
    return found


class _DecodeInto:
    """``_Codegen.build_into`` of a writer's file record, generated on the first call (the
    first use of a lazy file): a plan that hands its files on never pays for it."""

    def __init__(self, schema: dict, named: dict[str, Any], ns: str) -> None:
        self.schema, self.named, self.ns = schema, named, ns
        self.built: Callable[..., None] | None = None

    def __call__(self, *args: Any) -> None:
        if self.built is None:
            gen = _Codegen()
            gen.named = dict(self.named)
            self.built = gen.build_into(self.schema, _FILE_SPEC, self.ns)
        self.built(*args)


def _decode_lazy_matched(
    body: bytes,
    count: int,
    pattern: RecordPattern,
    file_decoder: Callable[..., None],
    decoder: Callable[..., int],
    spec: AvroRecord,
) -> list:
    """``decode_avro`` of ``MANIFEST_SPEC_LAZY`` through ``pattern``: the records it matches
    (their strings ASCII, so valid UTF-8: what the lazy walk checks) are split from ``body``
    in C with their head fields and file name, and their objects built by C loops (``map``),
    distinct heads decoded once; the others are decoded by ``decoder`` (``_split_records``)."""
    out: list = []
    heads = _heads()
    try:
        with gc_paused():
            pos = _split_records(
                body,
                count,
                pattern,
                lambda found, start: _lazy_entries(found, body, start, file_decoder, heads, out),
                lambda start, n: decoder(body, start, n, out),
            )
    except (LookupError, ValueError, TypeError, struct.error) as err:
        raise MetadataFormatError(f"Corrupt {spec.what} file: {err!r}") from err
    _check_end(pos, body, spec)
    return out


def _entry_head(raw: bytes) -> tuple[FileKind, bytes, int, int]:
    """(kind, partition, bucket, total buckets) of an entry's head fields as written."""
    version, p = read_long(raw, 0)
    if version != MANIFEST_VERSION:
        _version_error("manifest", MANIFEST_VERSION)(version)
    kind, p = read_long(raw, p)
    size, p = read_long(raw, p)
    if size < 0:
        raise ValueError(f"negative length {size}")
    partition = raw[p : p + size]
    bucket, p = read_long(raw, p + size)
    total, p = read_long(raw, p)
    if p != len(raw):
        raise ValueError("an entry's head is not what its pattern matched")
    return _KINDS[kind], partition, bucket, total


_HEADS: dict[bytes, tuple[FileKind, bytes, int, int]] = {}
"""``_entry_head`` of the heads met so far (a pure function of the bytes): a table has
about as many as (partition, bucket) pairs, met again in each manifest."""
_HEADS_MAX = 1 << 17


def _heads() -> dict[bytes, tuple[FileKind, bytes, int, int]]:
    global _HEADS
    if len(_HEADS) > _HEADS_MAX:
        _HEADS = {}  # not cleared: other threads may be using it
    return _HEADS


_THIRD = itemgetter(2)
_NEW = object.__new__
_AFTER_PREFIX = itemgetter(slice(1, None))
_ENTRY_SLOTS = tuple(
    getattr(ManifestEntry, f.name).__set__ for f in dataclasses.fields(ManifestEntry)
)
_SET_FILE_NAME = DataFileMeta.file_name.__set__  # type: ignore[attr-defined]
_SET_SOURCE = _SOURCE_SLOT.__set__


def _lazy_entries(
    found: list[tuple[bytes, ...]],
    body: bytes,
    pos: int,
    file_decoder: Callable[..., None],
    heads: dict[bytes, tuple[FileKind, bytes, int, int]],
    out: list,
) -> None:
    """Append the entries of ``found`` (record, head, raw file name), records from ``pos``
    in ``body``, with lazy files: one Python step per distinct head, the rest in C."""
    n = len(found)
    head_raws = list(map(_SECOND, found))
    for raw in set(head_raws).difference(heads):
        heads[raw] = _entry_head(raw)
    try:
        decoded = list(map(heads.__getitem__, head_raws))
    except KeyError:  # emptied meanwhile (forget_reads)
        decoded = [heads.get(raw) or _entry_head(raw) for raw in head_raws]
    starts = accumulate(map(len, map(_FIRST, found)), initial=pos)
    name_raws = list(map(_THIRD, found))
    if max(map(_FIRST, name_raws)) < 0x80:  # every length in one byte
        names = list(map(bytes.decode, map(_AFTER_PREFIX, name_raws)))
    else:
        names = [raw[read_long(raw, 0)[1] :].decode() for raw in name_raws]
    batch = _LazyBatch(body, file_decoder)
    files = list(map(_NEW, repeat(_LazyDataFileMeta, n)))
    deque(map(_SET_FILE_NAME, files, names), 0)
    deque(map(_SET_SOURCE, files, repeat(batch, n)), 0)
    batch.starts = list(map(add, starts, map(len, head_raws)))
    batch.files = files
    entries = list(map(_NEW, repeat(ManifestEntry, n)))
    for i, set_field in enumerate(_ENTRY_SLOTS[:4]):
        deque(map(set_field, entries, map(itemgetter(i), decoded)), 0)
    deque(map(_ENTRY_SLOTS[4], entries, files), 0)
    out += entries


def _stats_spec(what: str) -> AvroRecord:
    return AvroRecord(
        SimpleStats,
        (
            AvroField("_MIN_VALUES", required=True),
            AvroField("_MAX_VALUES", required=True),
            AvroField("_NULL_COUNTS", AvroArray()),
        ),
        what,
    )


_FILE_SPEC = AvroRecord(
    DataFileMeta,
    (
        AvroField("_FILE_NAME", required=True),
        AvroField("_FILE_SIZE", required=True),
        AvroField("_ROW_COUNT", required=True),
        AvroField("_MIN_KEY", default=EMPTY_ROW),
        AvroField("_MAX_KEY", default=EMPTY_ROW),
        AvroField("_KEY_STATS", _stats_spec("manifest"), default=EMPTY_STATS),
        AvroField("_VALUE_STATS", _stats_spec("manifest"), default=EMPTY_STATS),
        AvroField("_MIN_SEQUENCE_NUMBER", required=True),
        AvroField("_MAX_SEQUENCE_NUMBER", required=True),
        AvroField("_SCHEMA_ID", required=True),
        AvroField("_LEVEL", required=True),
        AvroField("_EXTRA_FILES", AvroArray(), default=()),
        AvroField("_CREATION_TIME"),
        AvroField("_DELETE_ROW_COUNT"),
        AvroField("_EMBEDDED_FILE_INDEX"),
        AvroField("_FILE_SOURCE"),
        AvroField("_VALUE_STATS_COLS", AvroArray()),
        AvroField("_EXTERNAL_PATH"),
        AvroField("_FIRST_ROW_ID"),
        AvroField("_WRITE_COLS", AvroArray()),
        AvroField("_WRITE_COLS_SEQUENCES", AvroArray()),
    ),
    "manifest",
)
_ENTRY_FIELDS = (
    AvroField("_VERSION", required=True, expect=MANIFEST_VERSION, arg=False),
    AvroField("_KIND", "kind", required=True),
    AvroField("_PARTITION", required=True),
    AvroField("_BUCKET", required=True),
    AvroField("_TOTAL_BUCKETS", required=True),
)
MANIFEST_SPEC = AvroRecord(
    ManifestEntry, (*_ENTRY_FIELDS, AvroField("_FILE", _FILE_SPEC, required=True)), "manifest"
)
MANIFEST_SPEC_LAZY = AvroRecord(
    ManifestEntry,
    (
        *_ENTRY_FIELDS,
        AvroField(
            "_FILE",
            AvroLazy(_FILE_SPEC, _LazyDataFileMeta, "_FILE_NAME", _SOURCE_SLOT, _LazyBatch),
            required=True,
        ),
    ),
    "manifest",
)
"""``MANIFEST_SPEC`` with each entry's file decoded on first use (``_LazyDataFileMeta``):
for plans that hand the files on without looking at them. Files used cost about 1.6 times
their eager decode (walked, then decoded), so whoever uses every field (merges, conflict
checks, stats filters) decodes eagerly."""
MANIFEST_LIST_SPEC = AvroRecord(
    ManifestFileMeta,
    (
        AvroField("_VERSION", required=True, expect=MANIFEST_LIST_VERSION, arg=False),
        AvroField("_FILE_NAME", required=True),
        AvroField("_FILE_SIZE", required=True),
        AvroField("_NUM_ADDED_FILES", required=True),
        AvroField("_NUM_DELETED_FILES", required=True),
        AvroField("_PARTITION_STATS", _stats_spec("manifest list"), default=EMPTY_STATS),
        AvroField("_SCHEMA_ID", required=True),
        AvroField("_MIN_BUCKET"),
        AvroField("_MAX_BUCKET"),
        AvroField("_MIN_LEVEL"),
        AvroField("_MAX_LEVEL"),
        AvroField("_MIN_ROW_ID"),
        AvroField("_MAX_ROW_ID"),
    ),
    "manifest list",
)

# ------------------------------------------------------------------------- pure serde


def serialize_manifest(entries: Iterable[ManifestEntry], compression: str = "zstd") -> bytes:
    """A manifest file of ``entries`` in Java 2.1's Avro shape (``MANIFEST_SCHEMA``)."""
    return write_avro_container(MANIFEST_SCHEMA, compression, _encode_entry, entries)


def deserialize_manifest(
    data: bytes,
    keep: Callable[[bytes], bool] | None = None,
    *,
    lazy: bool = False,
    verdicts: dict[bytes, bool] | None = None,
    scope: str = "",
    partition_size: int | None = None,
    partition_arity: int | None = None,
) -> list[ManifestEntry]:
    """The entries of a manifest file written by any Paimon version or pypaimon; with ``keep``
    only those of the partitions (serialized rows) it accepts (``verdicts``, ``scope``,
    ``partition_size``, ``partition_arity``: see ``decode_avro``); ``lazy``: files decoded
    on first use (``MANIFEST_SPEC_LAZY``)."""
    spec = MANIFEST_SPEC_LAZY if lazy else MANIFEST_SPEC
    return decode_avro(
        data,
        spec,
        keep,
        verdicts=verdicts,
        scope=scope,
        partition_size=partition_size,
        partition_arity=partition_arity,
    )


def serialize_manifest_list(metas: Iterable[ManifestFileMeta], compression: str = "zstd") -> bytes:
    """A manifest-list file of ``metas`` in Java 1.4.2's Avro shape."""
    return write_avro_container(MANIFEST_LIST_SCHEMA, compression, _encode_meta_reusing, metas)


def deserialize_manifest_list(data: bytes) -> list[ManifestFileMeta]:
    """The manifest metas of a manifest-list file written by any Paimon version or pypaimon."""
    return decode_avro(data, MANIFEST_LIST_SPEC)


def _identity(value: Any) -> Any:
    return value


def partition_stats(
    partitions: Iterable[bytes], partition_types: Sequence[DataType]
) -> SimpleStats:
    """Min, max and null count of every partition field over ``partitions`` (one per entry).

    Java computes these with full-mode stats over the partition row; values compare by type,
    FLOAT/DOUBLE by ``Double.compareTo`` (-0.0 below 0.0, NaN above everything).
    """
    if not partition_types:
        return EMPTY_STATS
    from paimon_core.format.binary_row import deserialize_row, serialize_row

    arity = len(partition_types)
    mins: list[Any] = [None] * arity
    maxs: list[Any] = [None] * arity
    nulls = [0] * arity
    for part, count in Counter(partitions).items():
        for i, value in enumerate(deserialize_row(part, partition_types)):
            if value is None:
                nulls[i] += count
                continue
            key = order_key if isinstance(value, float) else _identity
            if mins[i] is None or key(value) < key(mins[i]):
                mins[i] = value
            if maxs[i] is None or key(value) > key(maxs[i]):
                maxs[i] = value
    return SimpleStats(
        serialize_row(mins, partition_types), serialize_row(maxs, partition_types), tuple(nulls)
    )


def manifest_file_meta(
    file_name: str,
    file_size: int,
    entries: Sequence[ManifestEntry],
    partition_types: Sequence[DataType],
    default_schema_id: int = 0,
) -> ManifestFileMeta:
    """The manifest-list record of a manifest holding ``entries`` (Java's ``ManifestEntryWriter``)."""
    added = sum(1 for e in entries if e.kind == FileKind.ADD)
    buckets = [e.bucket for e in entries]
    levels = [e.file.level for e in entries]
    first_ids = [e.file.first_row_id for e in entries]
    min_row_id = max_row_id = None
    if entries and None not in first_ids:
        min_row_id = min(first_ids)
        max_row_id = max(i + e.file.row_count - 1 for i, e in zip(first_ids, entries))
    return ManifestFileMeta(
        file_name=file_name,
        file_size=file_size,
        num_added_files=added,
        num_deleted_files=len(entries) - added,
        partition_stats=partition_stats((e.partition for e in entries), partition_types),
        schema_id=max((e.file.schema_id for e in entries), default=default_schema_id),
        min_bucket=min(buckets, default=None),
        max_bucket=max(buckets, default=None),
        min_level=min(levels, default=None),
        max_level=max(levels, default=None),
        min_row_id=min_row_id,
        max_row_id=max_row_id,
    )


# ------------------------------------------------------------------------------ file I/O


def rolling_names(prefix: str) -> Iterable[str]:
    """``<prefix><uuid>-0``, ``-1``, ...: the names of files rolled by one writer."""
    stem = new_file_name(prefix).rsplit("-", 1)[0]
    n = 0
    while True:
        yield f"{stem}-{n}"
        n += 1


@dataclass(frozen=True, slots=True)
class _CachedManifest:
    """One manifest file as this process last saw it.

    ``records``: each entry's Avro record bytes, when known (files this process wrote), so
    that a merge rewriting the entries copies them instead of encoding them again.
    ``decoded``: the entries were decoded from the file; otherwise they are the objects it
    was written from, which only a rewrite (``read_for_rewrite``) is given.
    """

    version: object
    entries: tuple[ManifestEntry, ...]
    records: tuple[bytes, ...] | None
    decoded: bool


class _ManifestCache:
    """Process-wide: decoded manifests by path, at most ``max_entries`` entries in all.

    Manifest files are immutable and their names unique, but each use is still checked
    against the file's ``FileIO.version`` (one stat): a manifest deleted (expiry) or damaged
    since is then read again and fails as it would without the cache. File systems without
    a version token (object stores) are not cached.

    Plans of a fresh table handle (Paimon's manifest cache), and the commit's live-file
    checks and manifest merges, so read each manifest once per process.
    """

    def __init__(self, max_entries: int = 100_000) -> None:
        self.max_entries = max_entries
        self._files: OrderedDict[str, _CachedManifest] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()
        # Manifests read once for some partitions only (not cached): read again, they are.
        self._asked: OrderedDict[str, object] = OrderedDict()

    def asked_before(self, path: str, version: object) -> bool:
        """Whether a partial read of this manifest (same version) came before; notes this one."""
        with self._lock:
            before = self._asked.get(path) == version
            self._asked[path] = version
            self._asked.move_to_end(path)
            while len(self._asked) > 4096:
                self._asked.popitem(last=False)
            return before

    def get(self, path: str, version: object) -> _CachedManifest | None:
        with self._lock:
            cached = self._files.get(path)
            if cached is None:
                return None
            if cached.version != version:
                self._drop(path)
                return None
            self._files.move_to_end(path)
            return cached

    def put(self, path: str, cached: _CachedManifest) -> None:
        if len(cached.entries) > self.max_entries // 4:
            return  # one huge manifest would push out everything else
        with self._lock:
            self._drop(path)
            self._files[path] = cached
            self._size += len(cached.entries)
            while self._size > self.max_entries:
                self._drop(next(iter(self._files)))

    def _drop(self, path: str) -> None:
        old = self._files.pop(path, None)
        if old is not None:
            self._size -= len(old.entries)

    def clear(self) -> None:
        """Forget everything (benchmarks of reads from storage; tests)."""
        with self._lock:
            self._files.clear()
            self._asked.clear()
            self._size = 0


MANIFEST_CACHE = _ManifestCache()


def _encoded_entry(entry: ManifestEntry) -> bytes:
    out = bytearray()
    _encode_entry(out, entry)
    return bytes(out)


class ManifestFile:
    """Reads and writes ``<table>/manifest/manifest-*`` files."""

    def __init__(
        self,
        file_io: FileIO,
        table_path: str,
        compression: str = "zstd",
        target_file_size: int = 8 * 1024 * 1024,
    ) -> None:
        self.file_io = file_io
        self.dir = f"{table_path.rstrip('/')}/{MANIFEST_DIR}"
        self.codec = avro_codec(compression)
        self.target_file_size = target_file_size

    def path(self, name: str) -> str:
        return f"{self.dir}/{name}"

    def read(
        self,
        name: str,
        keep: Callable[[bytes], bool] | None = None,
        *,
        lazy: bool = False,
        verdicts: dict[bytes, bool] | None = None,
        partition_size: int | None = None,
        partition_arity: int | None = None,
    ) -> list[ManifestEntry]:
        """The entries of manifest ``name``; with ``keep``, only those of the partitions
        (serialized rows) it accepts. ``verdicts``: a dict that the reads of one plan share
        (``keep``'s answers by the bytes of a partition as written). ``partition_size``:
        the bytes of every serialized partition of the table, when its partition fields are
        all of fixed size (a filtered read then looks only at the kept records);
        ``partition_arity``: else the partition's number of fields (the same, when the
        manifest's partitions are found to be of one size).

        A ``keep`` read of a manifest not cached skips the entries of other partitions
        before decoding them. ``lazy`` (plans): the files of entries decoded from the file
        are decoded on first use (``MANIFEST_SPEC_LAZY``); and a manifest that plans keep
        asking for some partitions is decoded whole and cached the second time, so that the
        plans after find it whatever partitions they ask for.
        """
        path = self.path(name)
        version = self.file_io.version(path)
        cached = MANIFEST_CACHE.get(path, version) if version is not None else None
        if cached is None or not cached.decoded:
            if keep is not None and not (
                lazy and version is not None and MANIFEST_CACHE.asked_before(path, version)
            ):
                return read_avro_file(
                    self.file_io,
                    path,
                    lambda data: deserialize_manifest(
                        data,
                        keep,
                        lazy=lazy,
                        verdicts=verdicts,
                        scope=self.dir,
                        partition_size=partition_size,
                        partition_arity=partition_arity,
                    ),
                )
            entries = read_avro_file(
                self.file_io,
                path,
                lambda data: deserialize_manifest(data, lazy=lazy, scope=self.dir),
            )
            if version is None:
                return entries
            records = cached.records if cached is not None else None
            cached = _CachedManifest(version, tuple(entries), records, True)
            MANIFEST_CACHE.put(path, cached)
        if keep is None:
            return list(cached.entries)
        verdicts: dict[bytes, bool] = {}
        kept = []
        for e in cached.entries:
            ok = verdicts.get(e.partition)
            if ok is None:
                ok = verdicts[e.partition] = keep(e.partition)
            if ok:
                kept.append(e)
        return kept

    def read_for_rewrite(self, name: str) -> tuple[Sequence[ManifestEntry], Sequence[bytes] | None]:
        """The entries of manifest ``name`` for a merge that writes them into a new manifest,
        with their record bytes when known (then ``write`` copies them).

        The entries may be the very objects the file was written from, when this process
        wrote it: equal to the decoded ones, and only re-encoded.
        """
        path = self.path(name)
        version = self.file_io.version(path)
        cached = MANIFEST_CACHE.get(path, version) if version is not None else None
        if cached is not None:
            return cached.entries, cached.records
        return self.read(name), None

    def write(
        self,
        entries: Sequence[ManifestEntry],
        partition_types: Sequence[DataType],
        records: Sequence[bytes | None] | None = None,
    ) -> list[ManifestFileMeta]:
        """Write ``entries`` to new manifests, rolling at the target size; their list records.

        ``records``: for each entry, its Avro record bytes when already known (None: encode
        it), as ``read_for_rewrite`` gives them. As Java, the size is looked at every 1000
        entries. Files already written are removed again when a later one fails.
        """
        schema = MANIFEST_SCHEMA.encode()
        names = rolling_names(MANIFEST_PREFIX)
        metas: list[ManifestFileMeta] = []
        written: list[str] = []
        encoded: list[bytes] = []
        start = 0
        writer = _AvroWriter(schema, self.codec)

        def roll(end: int) -> None:
            name = next(names)
            written.append(name)
            data = writer.finish()
            path = self.path(name)
            self.file_io.write_bytes(path, data)
            chunk = entries[start:end]
            metas.append(manifest_file_meta(name, len(data), chunk, partition_types))
            try:
                version = self.file_io.version(path)
            except OSError:
                version = None  # not cached; the commit's own checks decide
            if version is not None:
                cached = _CachedManifest(version, tuple(chunk), tuple(encoded), False)
                MANIFEST_CACHE.put(path, cached)
            encoded.clear()

        try:
            for i, entry in enumerate(entries):
                record = records[i] if records is not None else None
                if record is None:
                    record = _encoded_entry(entry)
                encoded.append(record)
                writer.add_encoded(record)
                if (i + 1 - start) % _ROLLING_CHECK_RECORDS == 0 and (
                    writer.size >= self.target_file_size
                ):
                    roll(i + 1)
                    start = i + 1
                    writer = _AvroWriter(schema, self.codec)
            if start < len(entries):
                roll(len(entries))
        except BaseException:
            for name in written:
                self.file_io.delete(self.path(name))
            raise
        return metas


class ManifestList:
    """Reads and writes ``<table>/manifest/manifest-list-*`` files."""

    def __init__(self, file_io: FileIO, table_path: str, compression: str = "zstd") -> None:
        self.file_io = file_io
        self.dir = f"{table_path.rstrip('/')}/{MANIFEST_DIR}"
        self.compression = compression
        avro_codec(compression)

    def read(self, name: str) -> list[ManifestFileMeta]:
        return read_avro_file(self.file_io, f"{self.dir}/{name}", deserialize_manifest_list)

    def write(self, metas: Sequence[ManifestFileMeta]) -> tuple[str, int]:
        """Write ``metas`` (possibly none) to a new manifest list; its (name, size)."""
        data = serialize_manifest_list(metas, self.compression)
        name = new_file_name(MANIFEST_LIST_PREFIX)
        self.file_io.write_bytes(f"{self.dir}/{name}", data)
        return name, len(data)

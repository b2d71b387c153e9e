"""Index manifests: the Avro file listing a snapshot's index files (HASH buckets, DVs, global).

The models live in ``manifest.py`` beside the other manifest records; this module holds the
Avro shape Java 2.0/2.1 writes for them and the ``index-manifest-*`` file I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from paimon_core.format.manifest import (
    AvroArray,
    AvroField,
    AvroRecord,
    DeletionVectorMeta,
    IndexManifestEntry,
    avro_bytes,
    avro_codec,
    avro_long,
    avro_opt_bytes,
    avro_opt_long,
    avro_opt_str,
    avro_str,
    decode_avro,
    read_avro_file,
    write_avro_container,
)
from paimon_core.format.paths import INDEX_MANIFEST_PREFIX, MANIFEST_DIR, new_file_name

if TYPE_CHECKING:
    from paimon_core.io.fileio import FileIO

INDEX_MANIFEST_VERSION = 1

INDEX_MANIFEST_SCHEMA = (
    '{"type":"record","name":"record","namespace":"org.apache.paimon.avro.generated","fields":['
    '{"name":"_VERSION","type":"int"},{"name":"_KIND","type":"int"},'
    '{"name":"_PARTITION","type":"bytes"},{"name":"_BUCKET","type":"int"},'
    '{"name":"_INDEX_TYPE","type":"string"},{"name":"_FILE_NAME","type":"string"},'
    '{"name":"_FILE_SIZE","type":"long"},{"name":"_ROW_COUNT","type":"long"},'
    '{"name":"_DELETIONS_VECTORS_RANGES","type":["null",{"type":"array","items":["null",'
    '{"type":"record","name":"record__DELETIONS_VECTORS_RANGES","fields":['
    '{"name":"f0","type":"string"},{"name":"f1","type":"int"},{"name":"f2","type":"int"},'
    '{"name":"_CARDINALITY","type":["null","long"],"default":null}]}]}],"default":null},'
    '{"name":"_EXTERNAL_PATH","type":["null","string"],"default":null},'
    '{"name":"_GLOBAL_INDEX","type":["null",{"type":"record","name":"record__GLOBAL_INDEX",'
    '"fields":[{"name":"_ROW_RANGE_START","type":"long"},{"name":"_ROW_RANGE_END","type":"long"},'
    '{"name":"_INDEX_FIELD_ID","type":"int"},{"name":"_EXTRA_FIELD_IDS","type":["null",'
    '{"type":"array","items":"int"}],"default":null},'
    '{"name":"_INDEX_META","type":["null","bytes"],"default":null},'
    '{"name":"_SOURCE_META","type":["null","bytes"],"default":null}]}],"default":null}]}'
)
"""The index-manifest-entry schema of Java 1.4.2 (paimon-format.md §3.6) with the field
Paimon 2.0/2.1 add: ``_GLOBAL_INDEX._SOURCE_META``."""

_DV_SPEC = AvroRecord(
    DeletionVectorMeta,
    (
        AvroField("f0", required=True),
        AvroField("f1", required=True),
        AvroField("f2", required=True),
        AvroField("_CARDINALITY"),
    ),
    "index manifest",
)
INDEX_MANIFEST_SPEC = AvroRecord(
    IndexManifestEntry,
    (
        AvroField("_VERSION", required=True, expect=INDEX_MANIFEST_VERSION, arg=False),
        AvroField("_KIND", "kind", required=True),
        AvroField("_PARTITION", required=True),
        AvroField("_BUCKET", required=True),
        AvroField("_INDEX_TYPE", required=True),
        AvroField("_FILE_NAME", required=True),
        AvroField("_FILE_SIZE", required=True),
        AvroField("_ROW_COUNT", required=True),
        AvroField("_DELETIONS_VECTORS_RANGES", AvroArray(_DV_SPEC)),
        AvroField("_EXTERNAL_PATH"),
        AvroField("_GLOBAL_INDEX"),
    ),
    "index manifest",
)


def _encode_global_index(out: bytearray, meta: dict) -> None:
    avro_long(out, meta["_ROW_RANGE_START"])
    avro_long(out, meta["_ROW_RANGE_END"])
    avro_long(out, meta["_INDEX_FIELD_ID"])
    extra = meta.get("_EXTRA_FIELD_IDS")
    if extra is None:
        out.append(0)
    else:
        out.append(2)
        if extra:
            avro_long(out, len(extra))
            for field_id in extra:
                avro_long(out, field_id)
        out.append(0)
    avro_opt_bytes(out, meta.get("_INDEX_META"))
    avro_opt_bytes(out, meta.get("_SOURCE_META"))


def _encode_index_entry(out: bytearray, e: IndexManifestEntry) -> None:
    out.append(INDEX_MANIFEST_VERSION << 1)
    avro_long(out, e.kind)
    avro_bytes(out, e.partition)
    avro_long(out, e.bucket)
    avro_str(out, e.index_type)
    avro_str(out, e.file_name)
    avro_long(out, e.file_size)
    avro_long(out, e.row_count)
    if e.dv_ranges is None:
        out.append(0)
    else:
        out.append(2)
        if e.dv_ranges:
            avro_long(out, len(e.dv_ranges))
            for dv in e.dv_ranges:
                out.append(2)  # Java's element row is nullable: branch 1 of ["null", record]
                avro_str(out, dv.data_file_name)
                avro_long(out, dv.offset)
                avro_long(out, dv.length)
                avro_opt_long(out, dv.cardinality)
        out.append(0)
    avro_opt_str(out, e.external_path)
    if e.global_index is None:
        out.append(0)
    else:
        out.append(2)
        _encode_global_index(out, e.global_index)


def serialize_index_manifest(
    entries: Iterable[IndexManifestEntry], compression: str = "zstd"
) -> bytes:
    """An index-manifest file of ``entries`` in Java 2.0/2.1's Avro shape."""
    return write_avro_container(INDEX_MANIFEST_SCHEMA, compression, _encode_index_entry, entries)


def deserialize_index_manifest(data: bytes) -> list[IndexManifestEntry]:
    """The entries of an index manifest written by any Paimon version or pypaimon."""
    return decode_avro(data, INDEX_MANIFEST_SPEC)


class IndexManifestFile:
    """Reads and writes ``<table>/manifest/index-manifest-*`` files."""

    def __init__(self, file_io: FileIO, table_path: str, compression: str = "zstd") -> None:
        self.file_io = file_io
        self.dir = f"{table_path.rstrip('/')}/{MANIFEST_DIR}"
        self.compression = compression
        avro_codec(compression)

    def read(self, name: str) -> list[IndexManifestEntry]:
        return read_avro_file(self.file_io, f"{self.dir}/{name}", deserialize_index_manifest)

    def write(self, entries: Sequence[IndexManifestEntry]) -> tuple[str, int]:
        """Write the full index state ``entries`` to a new index manifest; its (name, size)."""
        data = serialize_index_manifest(entries, self.compression)
        name = new_file_name(INDEX_MANIFEST_PREFIX)
        self.file_io.write_bytes(f"{self.dir}/{name}", data)
        return name, len(data)

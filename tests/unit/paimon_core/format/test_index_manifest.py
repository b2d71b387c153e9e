"""Index manifests: Java 1.4.2's Avro shape out; Java 0.9 and pypaimon 2.1 shapes in."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pytest

from paimon_core.exceptions import MetadataFormatError
from paimon_core.format.index_manifest import (
    INDEX_MANIFEST_SCHEMA,
    IndexManifestFile,
    deserialize_index_manifest,
    serialize_index_manifest,
)
from paimon_core.format.manifest import DeletionVectorMeta, FileKind, IndexManifestEntry
from paimon_core.io.fileio import LocalFileIO

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "avro"
P_D1 = bytes.fromhex("0000000100000000000000006431000000000082")  # ("d1")

HASH = IndexManifestEntry(FileKind.ADD, P_D1, 0, "HASH", "index-a-0", 20, 5)
DV = IndexManifestEntry(
    FileKind.ADD,
    P_D1,
    3,
    "DELETION_VECTORS",
    "index-b-0",
    123,
    2,
    dv_ranges=(
        DeletionVectorMeta("data-1.parquet", 1, 22, 3),
        DeletionVectorMeta("data-ü.parquet", 27, 30, None),
    ),
    external_path="s3://b/index-b-0",
)
GLOBAL = IndexManifestEntry(
    FileKind.DELETE,
    bytes(12),
    0,
    "btree",
    "index-c-0",
    9,
    1000,
    dv_ranges=(),
    global_index={
        "_ROW_RANGE_START": 0,
        "_ROW_RANGE_END": 999,
        "_INDEX_FIELD_ID": 2,
        "_EXTRA_FIELD_IDS": [3, 4],
        "_INDEX_META": b"\x01\x02",
        "_SOURCE_META": b"\x05",  # Paimon 2.0/2.1, kept as read
    },
)

# The writer schema of pypaimon 2.1's index manifest (golden dump 05): other record names,
# non-null DV items, and _SOURCE_META in the global-index record.
PYPAIMON_SCHEMA = {
    "type": "record",
    "name": "IndexManifestEntry",
    "fields": [
        {"name": "_VERSION", "type": "int"},
        {"name": "_KIND", "type": "int"},
        {"name": "_PARTITION", "type": "bytes"},
        {"name": "_BUCKET", "type": "int"},
        {"name": "_INDEX_TYPE", "type": "string"},
        {"name": "_FILE_NAME", "type": "string"},
        {"name": "_FILE_SIZE", "type": "long"},
        {"name": "_ROW_COUNT", "type": "long"},
        {
            "default": None,
            "name": "_DELETIONS_VECTORS_RANGES",
            "type": [
                "null",
                {
                    "type": "array",
                    "items": {
                        "type": "record",
                        "name": "DeletionVectorMeta",
                        "fields": [
                            {"name": "f0", "type": "string"},
                            {"name": "f1", "type": "int"},
                            {"name": "f2", "type": "int"},
                            {"default": None, "name": "_CARDINALITY", "type": ["null", "long"]},
                        ],
                    },
                },
            ],
        },
        {"default": None, "name": "_EXTERNAL_PATH", "type": ["null", "string"]},
        {
            "default": None,
            "name": "_GLOBAL_INDEX",
            "type": [
                "null",
                {
                    "type": "record",
                    "name": "GlobalIndexMeta",
                    "fields": [
                        {"name": "_ROW_RANGE_START", "type": "long"},
                        {"name": "_ROW_RANGE_END", "type": "long"},
                        {"name": "_INDEX_FIELD_ID", "type": "int"},
                        {
                            "default": None,
                            "name": "_EXTRA_FIELD_IDS",
                            "type": ["null", {"type": "array", "items": "int"}],
                        },
                        {"default": None, "name": "_INDEX_META", "type": ["null", "bytes"]},
                        {"default": None, "name": "_SOURCE_META", "type": ["null", "bytes"]},
                    ],
                },
            ],
        },
    ],
}


def _records(entries: list[IndexManifestEntry]) -> list[dict]:
    return list(fastavro.reader(io.BytesIO(serialize_index_manifest(entries))))


def _fastavro_file(schema: Any, records: list, codec: str = "zstandard") -> bytes:
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(schema), records, codec=codec)
    return buf.getvalue()


def test_schema_is_javas_with_nullable_dv_items() -> None:
    schema = json.loads(INDEX_MANIFEST_SCHEMA)
    assert schema["name"] == "record" and schema["namespace"] == "org.apache.paimon.avro.generated"
    fields = {f["name"]: f for f in schema["fields"]}
    assert list(fields)[:2] == ["_VERSION", "_KIND"] and len(fields) == 11
    dv = fields["_DELETIONS_VECTORS_RANGES"]
    assert dv["default"] is None and dv["type"][0] == "null"
    items = dv["type"][1]["items"]
    assert items[0] == "null" and items[1]["name"] == "record__DELETIONS_VECTORS_RANGES"
    assert fields["_GLOBAL_INDEX"]["type"][1]["name"] == "record__GLOBAL_INDEX"
    for f in schema["fields"]:
        if isinstance(f["type"], list):
            assert f["type"][0] == "null" and f["default"] is None
    fastavro.parse_schema(schema)


def test_fastavro_reads_ours_with_the_exact_schema() -> None:
    data = serialize_index_manifest([HASH, DV, GLOBAL])
    reader = fastavro.reader(io.BytesIO(data))
    assert reader.codec == "zstandard" and sorted(reader.metadata) == ["avro.codec", "avro.schema"]
    assert reader.metadata["avro.schema"] == INDEX_MANIFEST_SCHEMA
    hash_rec, dv_rec, global_rec = reader
    assert hash_rec == {
        "_VERSION": 1, "_KIND": 0, "_PARTITION": P_D1, "_BUCKET": 0, "_INDEX_TYPE": "HASH",
        "_FILE_NAME": "index-a-0", "_FILE_SIZE": 20, "_ROW_COUNT": 5,
        "_DELETIONS_VECTORS_RANGES": None, "_EXTERNAL_PATH": None, "_GLOBAL_INDEX": None,
    }  # fmt: skip
    assert dv_rec["_DELETIONS_VECTORS_RANGES"] == [
        {"f0": "data-1.parquet", "f1": 1, "f2": 22, "_CARDINALITY": 3},
        {"f0": "data-ü.parquet", "f1": 27, "f2": 30, "_CARDINALITY": None},
    ]
    assert dv_rec["_EXTERNAL_PATH"] == "s3://b/index-b-0"
    assert global_rec["_KIND"] == 1 and global_rec["_DELETIONS_VECTORS_RANGES"] == []
    assert global_rec["_GLOBAL_INDEX"] == GLOBAL.global_index


@pytest.mark.parametrize("compression", ["zstd", "snappy", "deflate", "null"])
def test_round_trip(compression: str) -> None:
    entries = [HASH, DV, GLOBAL]
    assert deserialize_index_manifest(serialize_index_manifest(entries, compression)) == entries
    assert deserialize_index_manifest(serialize_index_manifest([])) == []


def test_entries_are_hashable_despite_the_global_index_dict() -> None:
    assert len({HASH, DV, GLOBAL, HASH}) == 3


def test_reads_java_09_index_manifest() -> None:
    entries = deserialize_index_manifest((FIXTURES / "java09-index-manifest").read_bytes())
    day = "0000000100000000000000000a00000010000000323032342d30312d303{}000000000000"
    assert entries == [
        IndexManifestEntry(
            FileKind.ADD,
            bytes.fromhex(day.format(d)),
            0,
            "HASH",
            f"index-f3bc133f-7b94-4df0-bdc6-24d881a5d792-{n}",
            size,
            rows,
        )
        for d, n, size, rows in [(1, 0, 8, 2), (2, 1, 4, 1)]
    ]


def test_reads_09_dv_ranges_without_cardinality() -> None:
    schema = json.loads(INDEX_MANIFEST_SCHEMA)
    schema["fields"] = schema["fields"][:9]  # no _EXTERNAL_PATH, _GLOBAL_INDEX
    schema["fields"][8]["type"][1]["items"][1]["fields"].pop()  # no _CARDINALITY
    records = _records([DV])
    del records[0]["_EXTERNAL_PATH"]
    (got,) = deserialize_index_manifest(_fastavro_file(schema, records, "snappy"))
    assert got.dv_ranges == (
        DeletionVectorMeta("data-1.parquet", 1, 22, None),
        DeletionVectorMeta("data-ü.parquet", 27, 30, None),
    )
    assert got.external_path is None and got.global_index is None and got.file_name == "index-b-0"


def test_null_dv_items_are_dropped() -> None:
    records = _records([DV])
    records[0]["_DELETIONS_VECTORS_RANGES"].insert(1, None)
    (got,) = deserialize_index_manifest(_fastavro_file(json.loads(INDEX_MANIFEST_SCHEMA), records))
    assert got == DV


def test_reads_pypaimon_shape_golden_05() -> None:
    golden = {
        "_VERSION": 1, "_KIND": 0, "_PARTITION": P_D1, "_BUCKET": 0, "_INDEX_TYPE": "HASH",
        "_FILE_NAME": "index-3db8cbbd-6c92-4fdb-82b8-46e3f483b1d3-0", "_FILE_SIZE": 20,
        "_ROW_COUNT": 5, "_DELETIONS_VECTORS_RANGES": None, "_EXTERNAL_PATH": None,
        "_GLOBAL_INDEX": None,
    }  # fmt: skip
    dv, global_index = _records([DV, GLOBAL])
    global_index["_GLOBAL_INDEX"]["_SOURCE_META"] = b"src"
    data = _fastavro_file(PYPAIMON_SCHEMA, [golden, dv, global_index])
    first, second, third = deserialize_index_manifest(data)
    assert first == IndexManifestEntry(
        FileKind.ADD, P_D1, 0, "HASH", "index-3db8cbbd-6c92-4fdb-82b8-46e3f483b1d3-0", 20, 5
    )
    assert second == DV
    assert third.global_index == {**GLOBAL.global_index, "_SOURCE_META": b"src"}
    # Written back as read: Java 2.0/2.1's shape has _SOURCE_META too.
    assert _records([third])[0]["_GLOBAL_INDEX"] == third.global_index


def test_wrong_version_is_a_clear_error() -> None:
    records = _records([HASH])
    records[0]["_VERSION"] = 2
    data = _fastavro_file(json.loads(INDEX_MANIFEST_SCHEMA), records)
    with pytest.raises(MetadataFormatError, match="index manifest version 2"):
        deserialize_index_manifest(data)


def test_missing_required_field_is_a_clear_error() -> None:
    schema = json.loads(INDEX_MANIFEST_SCHEMA)
    schema["fields"] = [f for f in schema["fields"] if f["name"] != "_INDEX_TYPE"]
    data = _fastavro_file(schema, _records([HASH]))
    with pytest.raises(MetadataFormatError, match="_INDEX_TYPE"):
        deserialize_index_manifest(data)


def test_index_manifest_file_write_and_read(tmp_path: Path) -> None:
    imf = IndexManifestFile(LocalFileIO(), str(tmp_path))
    name, size = imf.write([HASH, DV])
    assert re.fullmatch(r"index-manifest-[0-9a-f-]{36}-0", name)
    assert size == (tmp_path / "manifest" / name).stat().st_size
    assert imf.read(name) == [HASH, DV]


def test_pypaimon_reads_ours_and_we_read_pypaimons(tmp_path: Path) -> None:
    from pypaimon import CatalogFactory, Schema
    from pypaimon.manifest.index_manifest_file import IndexManifestFile as PyIndexManifestFile

    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    catalog.create_database("db", False)
    schema = pa.schema([("k", pa.int64()), ("v", pa.string()), ("dt", pa.string())])
    options = {"bucket": "-1"}
    catalog.create_table(
        "db.t", Schema.from_pyarrow_schema(schema, ["dt"], ["dt", "k"], options), False
    )
    table = catalog.get_table("db.t")
    wb = table.new_batch_write_builder()
    w = wb.new_write()
    w.write_arrow(pa.table({"k": [1, 2, 3], "v": ["a", "b", None], "dt": ["d1", "d1", "d2"]}))
    c = wb.new_commit()
    c.commit(w.prepare_commit())
    w.close()
    c.close()
    manifest_dir = Path(table.table_path) / "manifest"
    (theirs,) = manifest_dir.glob("index-manifest-*")
    ours = deserialize_index_manifest(theirs.read_bytes())
    assert sorted((e.index_type, e.bucket, e.row_count) for e in ours) == [
        ("HASH", 0, 1),
        ("HASH", 0, 2),
    ]
    assert all(e.partition.startswith(bytes.fromhex("00000001")) for e in ours)

    (manifest_dir / "index-manifest-ours-0").write_bytes(serialize_index_manifest([*ours, DV]))
    read_back = PyIndexManifestFile(table).read("index-manifest-ours-0")
    assert [(e.index_file.file_name, e.index_file.row_count) for e in read_back] == [
        (e.file_name, e.row_count) for e in [*ours, DV]
    ]
    dvs = read_back[-1].index_file.dv_ranges
    assert dvs["data-1.parquet"].length == 22 and dvs["data-ü.parquet"].cardinality is None

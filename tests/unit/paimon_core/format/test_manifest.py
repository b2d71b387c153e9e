"""Manifests and manifest lists: Java 1.4.2's exact Avro shape out, every older shape in."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import re
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pytest

from paimon_core.exceptions import InvalidArgument, MetadataFormatError
from paimon_core.format.binary_row import serialize_row
from paimon_core.format.manifest import (
    EMPTY_ROW,
    EMPTY_STATS,
    MANIFEST_LIST_SCHEMA,
    MANIFEST_SCHEMA,
    DataFileMeta,
    FileKind,
    ManifestEntry,
    ManifestFile,
    ManifestFileMeta,
    ManifestList,
    SimpleStats,
    deserialize_manifest,
    deserialize_manifest_list,
    manifest_file_meta,
    serialize_manifest,
    serialize_manifest_list,
)
from paimon_core.format.types import INT
from paimon_core.io.fileio import LocalFileIO

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "avro"
P_D1 = bytes.fromhex("0000000100000000000000006431000000000082")  # ("d1")
KEY_1 = bytes.fromhex("0000000100000000000000000100000000000000")  # (1) BIGINT


def _file(i: int = 0, **kw: Any) -> DataFileMeta:
    base: dict[str, Any] = {
        "file_name": f"data-{i}.parquet",
        "file_size": 1000 + i,
        "row_count": 3 + i,
        "min_key": KEY_1,
        "max_key": KEY_1,
        "key_stats": SimpleStats(KEY_1, KEY_1, (0,)),
        "value_stats": EMPTY_STATS,
        "min_sequence_number": i,
        "max_sequence_number": i + 2,
        "schema_id": 0,
        "level": 0,
        "creation_time_millis": 1_795_353_177_949 + i,
        "delete_row_count": 0,
        "file_source": 0,
    }
    return DataFileMeta(**(base | kw))


def _entry(i: int = 0, kind: FileKind = FileKind.ADD, **kw: Any) -> ManifestEntry:
    return ManifestEntry(kind, P_D1, i % 4, 4, _file(i, **kw))


FULL = ManifestEntry(
    FileKind.DELETE,
    EMPTY_ROW,
    -2,
    -2,
    DataFileMeta(
        file_name="data-ü-🙂.parquet",
        file_size=2**40,
        row_count=2**62,
        min_key=EMPTY_ROW,
        max_key=KEY_1,
        key_stats=SimpleStats(KEY_1, KEY_1, None),
        value_stats=SimpleStats(KEY_1 * 3, KEY_1, (None, 7, -1, 2**63 - 1)),
        min_sequence_number=-(2**63),
        max_sequence_number=2**63 - 1,
        schema_id=12,
        level=5,
        extra_files=("data-x.parquet.index", "b"),
        creation_time_millis=-1,
        delete_row_count=None,
        embedded_index=b"\x00\x01idx",
        file_source=1,
        value_stats_cols=("k", "v"),
        external_path="s3://bucket/x/data-ü.parquet",
        first_row_id=100,
        write_cols=(),
    ),
)


def _schema_facts(schema: Any, path: str = "") -> list[str]:
    """Every nullable field of an Avro schema, checked for Java's union order and default."""
    out = []
    for f in schema["fields"]:
        t = f["type"]
        if isinstance(t, list):
            assert t[0] == "null" and len(t) == 2, f["name"]
            assert "default" in f and f["default"] is None, f["name"]
            out.append(path + f["name"])
            t = t[1]
        if isinstance(t, dict) and t["type"] == "record":
            assert t["name"] == "record_" + (path + f["name"]).replace(".", "_"), t["name"]
            out += _schema_facts(t, path + f["name"] + ".")
    return out


# ------------------------------------------------------------------------ the exact shape


def test_written_schemas_are_javas_with_null_first_unions() -> None:
    entry = json.loads(MANIFEST_SCHEMA)
    assert entry["name"] == "record" and entry["namespace"] == "org.apache.paimon.avro.generated"
    assert [f["name"] for f in entry["fields"]][:6] == [
        "_VERSION", "_KIND", "_PARTITION", "_BUCKET", "_TOTAL_BUCKETS", "_FILE",
    ]  # fmt: skip
    nullable = _schema_facts(entry)
    assert "_FILE._WRITE_COLS" in nullable and "_FILE._KEY_STATS._NULL_COUNTS" in nullable
    file_fields = [f["name"] for f in entry["fields"][5]["type"]["fields"]]
    assert len(file_fields) == 21 and file_fields[-1] == "_WRITE_COLS_SEQUENCES"  # Paimon 2.1
    lst = json.loads(MANIFEST_LIST_SCHEMA)
    assert _schema_facts(lst) == [
        "_PARTITION_STATS._NULL_COUNTS", "_MIN_BUCKET", "_MAX_BUCKET", "_MIN_LEVEL",
        "_MAX_LEVEL", "_MIN_ROW_ID", "_MAX_ROW_ID",
    ]  # fmt: skip
    fastavro.parse_schema(entry)
    fastavro.parse_schema(lst)


@pytest.mark.parametrize(
    ("compression", "codec"),
    [("zstd", "zstandard"), ("snappy", "snappy"), ("deflate", "deflate"), ("null", "null")],
)
def test_fastavro_reads_our_manifest_with_the_exact_schema(compression: str, codec: str) -> None:
    data = serialize_manifest([_entry(1), FULL], compression)
    reader = fastavro.reader(io.BytesIO(data))
    assert reader.codec == codec
    assert sorted(reader.metadata) == ["avro.codec", "avro.schema"]
    assert reader.metadata["avro.schema"] == MANIFEST_SCHEMA
    records = list(reader)
    assert [r["_VERSION"] for r in records] == [2, 2]
    f = records[1]["_FILE"]
    assert f["_FILE_NAME"] == "data-ü-🙂.parquet" and f["_ROW_COUNT"] == 2**62
    assert f["_VALUE_STATS"]["_NULL_COUNTS"] == [None, 7, -1, 2**63 - 1]
    assert f["_KEY_STATS"]["_NULL_COUNTS"] is None
    assert f["_EXTRA_FILES"] == ["data-x.parquet.index", "b"] and f["_WRITE_COLS"] == []
    assert f["_MIN_SEQUENCE_NUMBER"] == -(2**63)
    created = records[0]["_FILE"]["_CREATION_TIME"]
    assert round(created.timestamp() * 1000) == 1_795_353_177_950
    assert records[0]["_FILE"]["_VALUE_STATS_COLS"] is None


def test_fastavro_reads_our_manifest_list() -> None:
    meta = ManifestFileMeta("manifest-a-0", 1234, 3, 1, SimpleStats(P_D1, P_D1, (0,)), 4, 0, 3)
    data = serialize_manifest_list([meta])
    reader = fastavro.reader(io.BytesIO(data))
    assert reader.metadata["avro.schema"] == MANIFEST_LIST_SCHEMA
    assert list(reader) == [
        {
            "_VERSION": 2, "_FILE_NAME": "manifest-a-0", "_FILE_SIZE": 1234,
            "_NUM_ADDED_FILES": 3, "_NUM_DELETED_FILES": 1,
            "_PARTITION_STATS": {"_MIN_VALUES": P_D1, "_MAX_VALUES": P_D1, "_NULL_COUNTS": [0]},
            "_SCHEMA_ID": 4, "_MIN_BUCKET": 0, "_MAX_BUCKET": 3, "_MIN_LEVEL": None,
            "_MAX_LEVEL": None, "_MIN_ROW_ID": None, "_MAX_ROW_ID": None,
        }
    ]  # fmt: skip


@pytest.mark.parametrize("compression", ["zstd", "snappy", "deflate", "null", "bzip2", "xz"])
def test_round_trip_keeps_every_field(compression: str) -> None:
    entries = [_entry(i, FileKind(i % 2)) for i in range(5)] + [FULL]
    assert deserialize_manifest(serialize_manifest(entries, compression)) == entries
    metas = [
        ManifestFileMeta("m-0", 1, 2, 3, EMPTY_STATS, 0),
        ManifestFileMeta("m-1", 10, 0, 9, SimpleStats(P_D1, P_D1, (None,)), 7, 0, 9, 0, 5, 0, 99),
    ]
    assert deserialize_manifest_list(serialize_manifest_list(metas, compression)) == metas


def test_many_entries_span_several_avro_blocks() -> None:
    entries = [_entry(i) for i in range(3000)]
    data = serialize_manifest(entries)
    blocks = list(fastavro.block_reader(io.BytesIO(data)))
    assert len(blocks) > 1 and sum(b.num_records for b in blocks) == 3000
    assert deserialize_manifest(data) == entries


def test_empty_files() -> None:
    assert deserialize_manifest(serialize_manifest([])) == []
    assert deserialize_manifest_list(serialize_manifest_list([])) == []
    assert deserialize_manifest_list((FIXTURES / "java09-manifest-list-empty").read_bytes()) == []


def test_unknown_compression_is_rejected() -> None:
    with pytest.raises(InvalidArgument, match="lz4"):
        serialize_manifest([], "lz4")


def test_identifier_is_javas_file_entry_identifier() -> None:
    e = _entry(3, extra_files=["i"])
    assert e.identifier == (P_D1, 3, 0, "data-3.parquet", ("i",), None, None)
    assert _entry(3, FileKind.DELETE, extra_files=("i",)).identifier == e.identifier
    assert _entry(3, level=1).identifier != _entry(3).identifier
    assert FULL.identifier[-2:] == (b"\x00\x01idx", "s3://bucket/x/data-ü.parquet")


# ------------------------------------------------------------------------- older shapes


def test_reads_java_08_manifest_nullable_records_and_snappy() -> None:
    data = (FIXTURES / "java08-manifest").read_bytes()
    assert fastavro.reader(io.BytesIO(data)).codec == "snappy"
    one = bytes.fromhex("0000000100000000000000000100000000000000")
    stats = bytes.fromhex("00000002000000000000000031000000000000810100000000000000")
    assert deserialize_manifest(data) == [
        ManifestEntry(
            kind,
            one,
            bucket,
            10,
            DataFileMeta(
                file_name=name,
                file_size=10,
                row_count=100,
                min_key=one,
                max_key=one,
                key_stats=SimpleStats(stats, stats, (1, 2)),
                value_stats=SimpleStats(stats, stats, (1, 2)),
                min_sequence_number=1,
                max_sequence_number=100,
                schema_id=0,
                level=1,
                creation_time_millis=1_725_608_755_039,
                delete_row_count=deletes,
            ),
        )
        for kind, bucket, name, deletes in [
            (FileKind.DELETE, 1, "f1.parquet", 0),
            (FileKind.ADD, 2, "f2.parquet", 1),
        ]
    ]


def test_reads_java_08_manifest_list() -> None:
    metas = deserialize_manifest_list((FIXTURES / "java08-manifest-list").read_bytes())
    row = bytes.fromhex("00000002000000000000000001000000000000003100000000000081")
    assert metas == [
        ManifestFileMeta(
            "manifest-19d138df-233f-46f7-beb6-fadaf4741c0e",
            10,
            10,
            10,
            SimpleStats(row, row, (1, 2)),
            1,
        ),
        ManifestFileMeta(
            "manifest-a703ee48-c411-413e-b84e-c03bdb179631",
            11,
            0,
            10,
            SimpleStats(row, row, (1, 2)),
            2,
        ),
    ]


def test_reads_java_09_manifest_and_list() -> None:
    entries = deserialize_manifest((FIXTURES / "java09-manifest").read_bytes())
    assert [(e.kind, e.bucket, e.total_buckets, e.file.row_count) for e in entries] == [
        (FileKind.ADD, 0, -1, 2),
        (FileKind.ADD, 0, -1, 1),
    ]
    f = entries[1].file
    assert f.file_name == "data-0cf35233-e025-4219-a103-5d471b3c4a88-0.parquet"
    assert f.file_source == 0 and f.creation_time_millis == 1_795_353_177_961
    assert f.value_stats_cols is None and f.external_path is None and f.write_cols is None
    assert f.value_stats.null_counts == (0, 1, 0) and f.key_stats.null_counts == (0,)
    assert entries[0].partition == bytes.fromhex(
        "0000000100000000000000000a00000010000000323032342d30312d3031000000000000"
    )
    (meta,) = deserialize_manifest_list((FIXTURES / "java09-manifest-list").read_bytes())
    assert (meta.file_name, meta.file_size, meta.num_added_files, meta.schema_id) == (
        "manifest-ace462eb-a733-4e78-9899-e03da2eadf6c-0",
        1890,
        2,
        0,
    )
    assert meta.min_bucket is None and meta.max_row_id is None


def _drop_fields(schema_json: str, names: set[str]) -> dict:
    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            out = {k: strip(v) for k, v in node.items()}
            if "fields" in out:
                out["fields"] = [f for f in out["fields"] if f["name"] not in names]
            return out
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    return strip(json.loads(schema_json))


def _fastavro_file(schema: Any, records: list, codec: str = "null") -> bytes:
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(schema), records, codec=codec)
    return buf.getvalue()


@pytest.mark.parametrize(
    "missing",
    [
        ["_WRITE_COLS", "_FIRST_ROW_ID"],  # 1.0 .. 1.2
        ["_WRITE_COLS", "_FIRST_ROW_ID", "_EXTERNAL_PATH", "_VALUE_STATS_COLS"],  # 0.9
        ["_WRITE_COLS", "_FIRST_ROW_ID", "_EXTERNAL_PATH", "_VALUE_STATS_COLS", "_FILE_SOURCE"],
    ],
)
def test_missing_optional_fields_read_as_none(missing: list[str]) -> None:
    records = list(fastavro.reader(io.BytesIO(serialize_manifest([FULL]))))
    data = _fastavro_file(_drop_fields(MANIFEST_SCHEMA, set(missing)), records, "deflate")
    expected = dataclasses.replace(FULL.file, **{name[1:].lower(): None for name in missing})
    assert deserialize_manifest(data) == [dataclasses.replace(FULL, file=expected)]


def test_reads_a_10_manifest_list_without_bucket_and_level_fields() -> None:
    meta = ManifestFileMeta("m", 1, 2, 0, SimpleStats(P_D1, P_D1, (0,)), 3, 0, 1, 0, 0, 5, 9)
    records = list(fastavro.reader(io.BytesIO(serialize_manifest_list([meta]))))
    gone = {"_MIN_BUCKET", "_MAX_BUCKET", "_MIN_LEVEL", "_MAX_LEVEL", "_MIN_ROW_ID", "_MAX_ROW_ID"}
    data = _fastavro_file(_drop_fields(MANIFEST_LIST_SCHEMA, gone), records)
    assert deserialize_manifest_list(data) == [
        ManifestFileMeta("m", 1, 2, 0, meta.partition_stats, 3)
    ]


def _nullable_08(schema: Any) -> Any:
    """Java 0.8's shape: the top record and every nested record wrapped in ["null", ...]."""
    for f in schema["fields"]:
        if isinstance(f["type"], dict) and f["type"]["type"] == "record":
            f["type"] = ["null", _nullable_08(f["type"])]
            f["default"] = None
    return schema


def test_synthesized_08_shape_with_null_top_records_and_nested_unions() -> None:
    schema = ["null", _nullable_08(json.loads(MANIFEST_SCHEMA))]
    records = list(fastavro.reader(io.BytesIO(serialize_manifest([FULL, _entry(1)]))))
    records[1]["_FILE"]["_VALUE_STATS"] = None  # a null stats record reads as empty stats
    data = _fastavro_file(schema, [records[0], None, records[1]], "snappy")
    got = deserialize_manifest(data)
    assert got[0] == FULL
    assert got[1] == dataclasses.replace(_entry(1), file=_file(1, value_stats=EMPTY_STATS))
    assert len(got) == 2


def test_pypaimon_extra_fields_and_record_names_are_skipped() -> None:
    schema = json.loads(MANIFEST_SCHEMA.replace('"record__FILE"', '"DataFileMeta"'))
    schema["name"], schema["namespace"] = "ManifestEntry", ""
    schema["fields"].insert(2, {"name": "_UNKNOWN", "type": {"type": "map", "values": "double"}})
    records = list(fastavro.reader(io.BytesIO(serialize_manifest([FULL]))))
    records[0]["_UNKNOWN"] = {"a": 1.5}
    assert deserialize_manifest(_fastavro_file(schema, records)) == [FULL]


def test_write_cols_sequences_of_paimon_2_1_are_kept() -> None:
    """``_WRITE_COLS_SEQUENCES`` (pypaimon and Java 2.1) reads and writes back as it was."""
    with_sequences = dataclasses.replace(
        FULL, file=dataclasses.replace(FULL.file, write_cols_sequences=(1, 2**62))
    )
    data = serialize_manifest([with_sequences, FULL])
    records = list(fastavro.reader(io.BytesIO(data)))
    assert [r["_FILE"]["_WRITE_COLS_SEQUENCES"] for r in records] == [[1, 2**62], None]
    assert deserialize_manifest(data) == [with_sequences, FULL]
    assert deserialize_manifest(_fastavro_file(json.loads(MANIFEST_SCHEMA), records)) == [
        with_sequences,
        FULL,
    ]


def test_wrong_version_is_a_clear_error() -> None:
    records = list(fastavro.reader(io.BytesIO(serialize_manifest([FULL]))))
    records[0]["_VERSION"] = 3
    with pytest.raises(MetadataFormatError, match="manifest version 3"):
        deserialize_manifest(_fastavro_file(json.loads(MANIFEST_SCHEMA), records))
    lists = list(
        fastavro.reader(
            io.BytesIO(serialize_manifest_list([ManifestFileMeta("m", 1, 1, 0, EMPTY_STATS, 0)]))
        )
    )
    lists[0]["_VERSION"] = 1
    with pytest.raises(MetadataFormatError, match="manifest list version 1"):
        deserialize_manifest_list(_fastavro_file(json.loads(MANIFEST_LIST_SCHEMA), lists))


def test_corrupt_or_foreign_files_are_clear_errors() -> None:
    data = serialize_manifest([FULL, _entry(1)], "null")
    with pytest.raises(MetadataFormatError, match="Not an Avro"):
        deserialize_manifest(b'{"version": 3}')
    with pytest.raises(MetadataFormatError):
        deserialize_manifest(data[:-30])
    with pytest.raises(MetadataFormatError):
        deserialize_manifest(
            serialize_manifest_list([ManifestFileMeta("m", 1, 1, 0, EMPTY_STATS, 0)])
        )
    flipped = bytearray(data)
    flipped[-5] ^= 0xFF  # inside the sync marker
    with pytest.raises(MetadataFormatError, match="sync"):
        deserialize_manifest(bytes(flipped))


# ----------------------------------------------------------------- pypaimon interop


@pytest.fixture(scope="module")
def pypaimon_tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Two tables written by pypaimon 2.1: fixed bucket (2) and dynamic bucket (-1)."""
    from pypaimon import CatalogFactory, Schema

    wh = tmp_path_factory.mktemp("pypaimon")
    catalog = CatalogFactory.create({"warehouse": str(wh)})
    catalog.create_database("db", False)
    schema = pa.schema([("k", pa.int64()), ("v", pa.string()), ("dt", pa.string())])
    tables = {}
    for name, bucket in (("pk", "2"), ("pkdyn", "-1")):
        catalog.create_table(
            f"db.{name}",
            Schema.from_pyarrow_schema(
                schema, partition_keys=["dt"], primary_keys=["dt", "k"], options={"bucket": bucket}
            ),
            False,
        )
        table = catalog.get_table(f"db.{name}")
        for i in range(2):
            wb = table.new_batch_write_builder()
            w = wb.new_write()
            w.write_arrow(
                pa.table(
                    {"k": [1, 2, 3 + i], "v": ["a", None, "c"], "dt": ["d1", "d1", "d2"]},
                    schema=schema,
                )
            )
            c = wb.new_commit()
            c.commit(w.prepare_commit())
            w.close()
            c.close()
        tables[name] = table
    return tables


def _manifest_dir(table: Any) -> Path:
    return Path(table.table_path) / "manifest"


def test_reads_pypaimon_manifests_like_fastavro(pypaimon_tables: dict[str, Any]) -> None:
    seen = 0
    for table in pypaimon_tables.values():
        for path in sorted(_manifest_dir(table).glob("manifest-*")):
            data = path.read_bytes()
            records = list(fastavro.reader(io.BytesIO(data)))
            if path.name.startswith("manifest-list-"):
                metas = deserialize_manifest_list(data)
                assert [
                    (m.file_name, m.file_size, m.num_added_files, m.min_bucket, m.max_bucket)
                    for m in metas
                ] == [
                    (
                        r["_FILE_NAME"],
                        r["_FILE_SIZE"],
                        r["_NUM_ADDED_FILES"],
                        r["_MIN_BUCKET"],
                        r["_MAX_BUCKET"],
                    )
                    for r in records
                ]
                assert [m.partition_stats.null_counts for m in metas] == [
                    tuple(r["_PARTITION_STATS"]["_NULL_COUNTS"]) for r in records
                ]
                continue
            entries = deserialize_manifest(data)
            assert len(entries) == len(records) > 0
            for e, r in zip(entries, records):
                f = r["_FILE"]
                assert (e.kind, e.partition, e.bucket, e.total_buckets) == (
                    r["_KIND"], r["_PARTITION"], r["_BUCKET"], r["_TOTAL_BUCKETS"],
                )  # fmt: skip
                created = round(f["_CREATION_TIME"].timestamp() * 1000)
                assert e.file.creation_time_millis == created
                ks = f["_KEY_STATS"]
                assert e.file.key_stats == SimpleStats(
                    ks["_MIN_VALUES"], ks["_MAX_VALUES"], tuple(ks["_NULL_COUNTS"])
                )
                assert e.file.value_stats_cols == () and e.file.min_key == f["_MIN_KEY"]
                assert (e.file.file_name, e.file.row_count, e.file.max_sequence_number) == (
                    f["_FILE_NAME"], f["_ROW_COUNT"], f["_MAX_SEQUENCE_NUMBER"],
                )  # fmt: skip
            seen += 1
    assert seen == 4


def test_pypaimon_reads_our_manifests_and_lists(pypaimon_tables: dict[str, Any]) -> None:
    from pypaimon.manifest.manifest_file_manager import ManifestFileManager
    from pypaimon.manifest.manifest_list_manager import ManifestListManager

    table = pypaimon_tables["pk"]
    files, lists = ManifestFileManager(table), ManifestListManager(table)
    mdir = _manifest_dir(table)
    original = sorted(p.name for p in mdir.glob("manifest-*") if "list" not in p.name)[0]
    ours = deserialize_manifest((mdir / original).read_bytes())
    (mdir / "manifest-ours-0").write_bytes(serialize_manifest(ours))
    theirs, again = (
        files.read(original, drop_stats=False),
        files.read("manifest-ours-0", drop_stats=False),
    )
    assert len(again) == len(theirs) == len(ours)
    for a, b in zip(theirs, again):
        assert (a.kind, a.bucket, a.total_buckets, a.partition.values) == (
            b.kind,
            b.bucket,
            b.total_buckets,
            b.partition.values,
        )
        assert (a.file.file_name, a.file.row_count, a.file.creation_time) == (
            b.file.file_name,
            b.file.row_count,
            b.file.creation_time,
        )
        assert a.file.key_stats.min_values.data == b.file.key_stats.min_values.data
    meta = manifest_file_meta("manifest-ours-0", 2345, ours, [])
    (mdir / "manifest-list-ours-0").write_bytes(serialize_manifest_list([meta]))
    (got,) = lists.read("manifest-list-ours-0")
    assert (got.file_name, got.file_size, got.num_added_files, got.min_bucket, got.max_level) == (
        "manifest-ours-0", 2345, len(ours), meta.min_bucket, 0,
    )  # fmt: skip


# ------------------------------------------------------------------ file-level writers


def test_manifest_file_rolls_every_1000_entries_at_target_size(tmp_path: Path) -> None:
    mf = ManifestFile(LocalFileIO(), str(tmp_path), target_file_size=1)
    entries = [_entry(i, FileKind(i % 3 == 0), schema_id=i % 5, level=i % 2) for i in range(2500)]
    metas = mf.write(entries, [])
    assert len(metas) == 3
    names = [m.file_name for m in metas]
    assert re.fullmatch(r"manifest-[0-9a-f-]{36}-0", names[0])
    assert names[1:] == [names[0][:-1] + "1", names[0][:-1] + "2"]
    assert [m.num_added_files + m.num_deleted_files for m in metas] == [1000, 1000, 500]
    assert metas[0].num_deleted_files == sum(1 for i in range(1000) if i % 3 == 0)
    assert all(m.file_size == (tmp_path / "manifest" / m.file_name).stat().st_size for m in metas)
    assert [(m.min_bucket, m.max_bucket, m.min_level, m.max_level, m.schema_id) for m in metas] == [
        (0, 3, 0, 1, 4)
    ] * 3
    assert all(m.partition_stats == EMPTY_STATS and m.min_row_id is None for m in metas)
    assert [e for m in metas for e in mf.read(m.file_name)] == entries
    big = ManifestFile(LocalFileIO(), str(tmp_path))
    assert len(big.write(entries, [])) == 1


class _FailingSecondWrite(LocalFileIO):
    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def write_bytes(self, path: str, data: bytes) -> None:
        self.writes += 1
        if self.writes == 2:
            raise OSError("disk full")
        super().write_bytes(path, data)


def test_manifest_file_removes_its_files_when_a_roll_fails(tmp_path: Path) -> None:
    mf = ManifestFile(_FailingSecondWrite(), str(tmp_path), target_file_size=1)
    with pytest.raises(OSError, match="disk full"):
        mf.write([_entry(i) for i in range(2500)], [])
    assert mf.file_io.writes == 2
    assert list((tmp_path / "manifest").iterdir()) == []


def test_manifest_meta_row_id_range_needs_every_first_row_id() -> None:
    rows = [_entry(0, first_row_id=10), _entry(1, first_row_id=0)]  # row counts 3 and 4
    meta = manifest_file_meta("m", 1, rows, [])
    assert (meta.min_row_id, meta.max_row_id) == (0, 12)
    meta = manifest_file_meta("m", 1, [*rows, _entry(2)], [])
    assert (meta.min_row_id, meta.max_row_id) == (None, None)


def test_partition_stats_compare_values_by_type(tmp_path: Path) -> None:
    from paimon_core.format.binary_row import deserialize_row, serialize_row
    from paimon_core.format.types import parse_data_type

    types = [parse_data_type("INT"), parse_data_type("STRING")]
    parts = [(10, "b"), (9, None), (100, "a"), (10, "b"), (None, "c")]
    entries = [
        ManifestEntry(FileKind.ADD, serialize_row(list(p), types), 0, 1, _file(i))
        for i, p in enumerate(parts)
    ]
    (meta,) = ManifestFile(LocalFileIO(), str(tmp_path)).write(entries, types)
    stats = meta.partition_stats
    assert deserialize_row(stats.min_values, types) == (9, "a")  # 100 > 9 as numbers
    assert deserialize_row(stats.max_values, types) == (100, "c")
    assert stats.null_counts == (1, 1)
    assert stats.min_values == serialize_row([9, "a"], types)


def test_list_record_of_a_java_manifest_is_the_one_java_wrote() -> None:
    from paimon_core.format.types import STRING

    data = (FIXTURES / "java09-manifest").read_bytes()
    (java,) = deserialize_manifest_list((FIXTURES / "java09-manifest-list").read_bytes())
    ours = manifest_file_meta(java.file_name, len(data), deserialize_manifest(data), [STRING()])
    # Java 0.9 predates the bucket and level fields.
    assert (
        dataclasses.replace(ours, min_bucket=None, max_bucket=None, min_level=None, max_level=None)
        == java
    )
    assert (ours.min_bucket, ours.max_bucket, ours.min_level, ours.max_level) == (0, 0, 0, 0)


def test_manifest_list_write_and_read(tmp_path: Path) -> None:
    ml = ManifestList(LocalFileIO(), str(tmp_path), compression="snappy")
    metas = [
        ManifestFileMeta(f"manifest-{i}", i, i, 0, EMPTY_STATS, 0, 0, 1, 0, 0) for i in range(3)
    ]
    name, size = ml.write(metas)
    assert re.fullmatch(r"manifest-list-[0-9a-f-]{36}-0", name)
    assert size == os.path.getsize(tmp_path / "manifest" / name)
    assert ml.read(name) == metas
    empty, _ = ml.write([])
    assert ml.read(empty) == [] and empty != name


# ------------------------------------------------------------------------- many entries


def test_a_thousand_entries_round_trip() -> None:
    """Speed is measured in bench/plan.py; here only that a large manifest decodes exactly."""
    entries = [
        _entry(i, value_stats=SimpleStats(KEY_1 * 2, KEY_1 * 2, (0, 1, None)), file_size=10**6 + i)
        for i in range(1000)
    ]
    data = serialize_manifest(entries)
    assert deserialize_manifest(data) == entries
    assert deserialize_manifest(serialize_manifest(entries[:1])) == entries[:1]


def test_partition_stats_order_floats_as_double_compare_to() -> None:
    """Java's full-mode collector uses ``Double.compareTo``: -0.0 < 0.0 and NaN is the max,
    whichever partition comes first (paimon-oracle: partitions 1.0, NaN, -0.0, 0.0 gave
    min -0.0 and max NaN)."""
    from paimon_core.format.binary_row import serialize_row
    from paimon_core.format.manifest import partition_stats
    from paimon_core.format.types import DOUBLE

    types = [DOUBLE()]
    for values in ([float("nan"), 1.0, 0.0, -0.0], [1.0, float("nan"), -0.0, 0.0]):
        stats = partition_stats([serialize_row([v], types) for v in values], types)
        assert stats.min_values == serialize_row([-0.0], types)
        assert stats.max_values == serialize_row([float("nan")], types)


def test_a_filtered_read_builds_only_the_kept_partitions_entries(tmp_path: Path) -> None:
    manifests = ManifestFile(LocalFileIO(), str(tmp_path))
    rows = [serialize_row([p], [INT()]) for p in range(5)]
    entries = [ManifestEntry(FileKind.ADD, rows[i % 5], 0, 1, _file(i)) for i in range(20)]
    [meta] = manifests.write(entries, [INT()])
    asked: list[bytes] = []

    def keep(partition: bytes) -> bool:
        asked.append(partition)
        return partition in (rows[1], rows[3])

    kept = manifests.read(meta.file_name, keep)
    assert kept == [e for e in entries if e.partition in (rows[1], rows[3])]
    assert sorted(asked) == sorted(rows)  # once per distinct partition
    assert manifests.read(meta.file_name, lambda _: False) == []
    assert manifests.read(meta.file_name) == entries


def test_decoded_manifests_are_cached_until_the_file_changes(tmp_path: Path) -> None:
    """A manifest is decoded once per process; a reader is never handed the objects it was
    written from, and a file deleted or damaged since fails as without the cache."""
    from paimon_core.format.manifest import MANIFEST_CACHE

    reads: list[str] = []

    class Counting(LocalFileIO):
        def read_bytes(self, path: str) -> bytes:
            reads.append(path)
            return super().read_bytes(path)

    manifests = ManifestFile(Counting(), str(tmp_path))
    entries = [_entry(i) for i in range(5)]
    [meta] = manifests.write(entries, [])
    first = manifests.read(meta.file_name)
    assert first == entries and all(a is not b for a, b in zip(first, entries))
    again = manifests.read(meta.file_name)
    assert again == first and again[0] is first[0] and len(reads) == 1
    assert manifests.read(meta.file_name, lambda _: False) == [] and len(reads) == 1
    rewrite, records = manifests.read_for_rewrite(meta.file_name)
    assert list(rewrite) == entries and records is not None and len(records) == 5
    path = tmp_path / "manifest" / meta.file_name
    path.write_bytes(path.read_bytes()[:-20])  # damaged in place
    with pytest.raises(MetadataFormatError, match="corrupt"):
        manifests.read(meta.file_name)
    os.remove(path)
    with pytest.raises(FileNotFoundError):
        manifests.read(meta.file_name)
    with pytest.raises(FileNotFoundError):
        manifests.read_for_rewrite(meta.file_name)
    MANIFEST_CACHE.clear()


def test_lazy_files_are_plain_data_file_metas_once_used() -> None:
    """``lazy=True`` (plans): each entry's file is walked and checked, its fields decoded on
    first use, for all the files of the read at once; it then is a plain DataFileMeta, and
    before that equal to, hashed and pickled as one."""
    import copy
    import pickle

    extreme = _entry(
        5,
        file_size=2**63 - 1,
        row_count=2**40,
        min_sequence_number=-(2**63),
        max_sequence_number=2**63 - 1,
        creation_time_millis=-(2**62),
        delete_row_count=2**35,
        first_row_id=2**50,
    )  # varints of every length are walked over
    entries = [FULL, *(_entry(i) for i in range(1, 5)), extreme]
    data = serialize_manifest(entries)
    lazy = deserialize_manifest(data, lazy=True)
    files = [e.file for e in lazy]
    assert all(type(f) is not DataFileMeta for f in files)
    assert [f.file_name for f in files] == [e.file.file_name for e in entries]  # read eagerly
    assert all(type(f) is not DataFileMeta for f in files)
    assert files[2].row_count == entries[2].file.row_count  # decodes the whole read
    assert all(type(f) is DataFileMeta for f in files)
    assert lazy == entries
    again = deserialize_manifest(data, lazy=True)
    assert again[0].file == FULL.file and again[1].file.__hash__() == hash(entries[1].file)
    again = deserialize_manifest(data, lazy=True)
    assert pickle.loads(pickle.dumps(again[3].file)) == entries[3].file
    assert type(pickle.loads(pickle.dumps(again[3]))).__name__ == "ManifestEntry"
    again = deserialize_manifest(data, lazy=True)
    assert repr(again[4].file) == repr(entries[4].file)
    assert dataclasses.replace(again[1].file, level=3) == dataclasses.replace(
        entries[1].file, level=3
    )
    assert copy.copy(deserialize_manifest(data, lazy=True)[2].file) == entries[2].file
    # Older shapes (nullable records) and filtered reads decode as eagerly.
    java08 = (FIXTURES / "java08-manifest").read_bytes()
    assert deserialize_manifest(java08, lazy=True) == deserialize_manifest(java08)
    kept = deserialize_manifest(data, lambda p: True, lazy=True)
    assert kept == entries


def test_lazy_reads_check_every_record_when_read() -> None:
    """A damaged file record fails the read, not the first use of the file."""
    data = bytearray(serialize_manifest([_entry(0), _entry(1, file_name="xxxxx")], "null"))
    at = bytes(data).rindex(b"xxxxx")
    data[at] = 0xFF  # not UTF-8
    with pytest.raises(MetadataFormatError):
        deserialize_manifest(bytes(data), lazy=True)
    stats_cols = _entry(2, value_stats_cols=("abc",))
    data = bytearray(serialize_manifest([stats_cols], "null"))
    at = bytes(data).rindex(b"abc")
    data[at] = 0xFF
    with pytest.raises(MetadataFormatError):
        deserialize_manifest(bytes(data), lazy=True)


def test_lazy_files_used_by_many_threads_at_once() -> None:
    """Threads that use the files of one lazy read together all see every field."""
    from concurrent.futures import ThreadPoolExecutor

    entries = [_entry(i, file_size=10**6 + i) for i in range(3000)]
    data = serialize_manifest(entries)
    expected = [(e.file.file_size, e.file.write_cols, e.file.row_count) for e in entries]
    for _ in range(3):
        files = [e.file for e in deserialize_manifest(data, lazy=True)]

        def use(order: int, files: list = files) -> list:
            picked = files if order % 2 else files[::-1]
            got = [(f.file_size, f.write_cols, f.row_count) for f in picked]
            return got if order % 2 else got[::-1]

        with ThreadPoolExecutor(8) as pool:
            assert all(got == expected for got in pool.map(use, range(8)))


def test_plans_of_some_partitions_cache_a_manifest_the_second_time(tmp_path: Path) -> None:
    """A one-off plan of a few partitions skips the others' entries undecoded; a manifest
    that plans keep asking for is decoded whole once and then served from the cache."""
    reads: list[str] = []

    class Counting(LocalFileIO):
        def read_bytes(self, path: str) -> bytes:
            reads.append(path)
            return super().read_bytes(path)

    rows = [serialize_row([p], [INT()]) for p in range(4)]
    entries = [ManifestEntry(FileKind.ADD, rows[i % 4], 0, 1, _file(i)) for i in range(12)]
    [meta] = ManifestFile(LocalFileIO(), str(tmp_path)).write(entries, [INT()])
    manifests = ManifestFile(Counting(), str(tmp_path))
    wanted = [e for e in entries if e.partition == rows[2]]
    for expected_reads in (1, 2, 2, 2):
        assert manifests.read(meta.file_name, rows[2].__eq__, lazy=True) == wanted
        assert len(reads) == expected_reads
    assert manifests.read(meta.file_name, lazy=True) == entries and len(reads) == 2

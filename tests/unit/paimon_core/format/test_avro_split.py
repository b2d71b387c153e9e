"""Filtered manifest reads through ``RecordPattern``: the records a regular expression splits
off are exactly the records, and a filtered read is the full read filtered, whatever the
shapes (lengths, arrays, unions, older writers) and whatever the pattern learned before."""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path
from typing import Any

import fastavro
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paimon_core.exceptions import MetadataFormatError
from paimon_core.format import avro_split
from paimon_core.format import manifest as manifest_module
from paimon_core.format.avro_split import RecordPattern, record_pattern
from paimon_core.format.binary_row import serialize_row
from paimon_core.format.manifest import (
    EMPTY_ROW,
    MANIFEST_SCHEMA,
    DataFileMeta,
    FileKind,
    ManifestEntry,
    ManifestFile,
    SimpleStats,
    avro_long,
    avro_str,
    deserialize_manifest,
    read_avro_container,
    serialize_manifest,
    write_avro_container,
)
from paimon_core.format.manifest import _encode_entry as encode_entry
from paimon_core.format.types import STRING
from paimon_core.io.fileio import LocalFileIO

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "avro"
PARTITION = (((), "_PARTITION", "_PARTITION"),)

rows = st.binary(min_size=0, max_size=150)  # lengths of one- and two-byte varints
names = st.text(min_size=0, max_size=80)
longs = st.integers(-(2**63), 2**63 - 1)
stats = st.builds(
    SimpleStats,
    rows,
    rows,
    st.none() | st.lists(st.none() | longs, max_size=5).map(tuple),
)
files = st.builds(
    DataFileMeta,
    file_name=names,
    file_size=longs,
    row_count=longs,
    min_key=rows,
    max_key=rows,
    key_stats=stats,
    value_stats=stats,
    min_sequence_number=longs,
    max_sequence_number=longs,
    schema_id=longs,
    level=st.integers(-(2**31), 2**31 - 1),
    extra_files=st.lists(names, max_size=3).map(tuple),
    creation_time_millis=st.none() | longs,
    delete_row_count=st.none() | longs,
    embedded_index=st.none() | rows,
    file_source=st.none() | st.integers(-(2**31), 2**31 - 1),
    value_stats_cols=st.none() | st.lists(names, max_size=3).map(tuple),
    external_path=st.none() | names,
    first_row_id=st.none() | longs,
    write_cols=st.none() | st.lists(names, max_size=3).map(tuple),
)
PARTITIONS = [EMPTY_ROW, b"\x00\x00\x00\x01" + bytes(16), b"p" * 20, b"q" * 70, b""]
entries = st.builds(
    ManifestEntry,
    st.sampled_from(FileKind),
    st.sampled_from(PARTITIONS),
    st.integers(-(2**31), 2**31 - 1),
    st.integers(-(2**31), 2**31 - 1),
    files,
)


def _filtered(data: bytes, wanted: set[bytes], scope: str, lazy: bool) -> list[ManifestEntry]:
    asked: list[bytes] = []

    def keep(partition: bytes) -> bool:
        asked.append(partition)
        return partition in wanted

    kept = deserialize_manifest(data, keep, lazy=lazy, scope=scope)
    assert len(asked) == len(set(asked))  # once per distinct partition
    return kept


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(entries, max_size=40),
    st.sets(st.sampled_from(PARTITIONS)),
    st.sampled_from(["a", "b", "fresh"]),
    st.booleans(),
    st.sampled_from(["null", "zstd"]),
)
def test_a_filtered_read_is_the_full_read_filtered(
    batch: list[ManifestEntry], wanted: set[bytes], scope: str, lazy: bool, codec: str
) -> None:
    """Scopes "a" and "b" keep what earlier examples taught them (lengths and counts the
    records at hand may not have); "fresh" starts from nothing."""
    if scope == "fresh":
        avro_split._PATTERNS.clear()
    data = serialize_manifest(batch, codec)
    full = deserialize_manifest(data)
    assert full == batch
    assert _filtered(data, wanted, scope, lazy) == [e for e in batch if e.partition in wanted]


def test_the_pattern_splits_records_and_finds_the_field() -> None:
    batch = [
        ManifestEntry(FileKind.ADD, PARTITIONS[i % 4], i, 4, _file(i, "x" * (i % 3)))
        for i in range(300)
    ]
    schema, body, count = read_avro_container(serialize_manifest(batch, "null"))
    pattern = RecordPattern(json.loads(schema), PARTITION)
    assert pattern.run(body, 0, True) == ([], 0)  # nothing learned yet
    assert pattern.learn(body, 0, 2)
    found, stop = pattern.run(body, 0, True)
    assert 0 < stop < len(body) and len(found) == 2  # the third file name is longer
    assert b"".join(r for r, _ in found) == body[:stop]
    # Each record not matched teaches at least one length: file names, partitions.
    shapes = len({len(e.file.file_name) for e in batch}) + len({len(p) for p in PARTITIONS[:4]})
    for _ in range(shapes):
        if stop == len(body):
            break
        assert pattern.learn(body, stop, 1)
        found, stop = pattern.run(body, 0, False)
        assert b"".join(r for r, _ in found) == body[:stop]
    assert stop == len(body) and len(found) == count
    records = []
    for e in batch:
        out = bytearray()
        encode_entry(out, e)
        records.append(bytes(out))
    assert [r for r, _ in found] == records
    assert [pattern.value(raw) for _, raw in found] == [e.partition for e in batch]
    assert not pattern.learn(body, 0, 10)  # nothing new: not compiled again


def _file(i: int, suffix: str = "", **kw: Any) -> DataFileMeta:
    fields: dict[str, Any] = {
        "file_name": f"data-{i}{suffix}.parquet",
        "file_size": 1000 + i,
        "row_count": 3 + i,
        "min_key": EMPTY_ROW,
        "max_key": EMPTY_ROW,
        "key_stats": SimpleStats(EMPTY_ROW, EMPTY_ROW, ()),
        "value_stats": SimpleStats(b"m" * 28, b"M" * 28, (0, 1)),
        "min_sequence_number": i,
        "max_sequence_number": i + 2,
        "schema_id": 0,
        "level": 0,
        "creation_time_millis": 1_795_353_177_949 + i,
    }
    return DataFileMeta(**(fields | kw))


def _encode_blocks(out: bytearray, e: ManifestEntry) -> None:
    """``_encode_entry``, but a non-empty ``_EXTRA_FILES`` in two blocks, the second sized
    (negative count): valid Avro that no learned count describes."""
    extra = e.file.extra_files
    if not extra:
        encode_entry(out, e)
        return
    plain = bytearray()
    encode_entry(plain, dataclasses.replace(e, file=dataclasses.replace(e.file, extra_files=())))
    at = _extra_files_offset(bytes(plain))
    out += plain[:at]
    avro_long(out, 1)
    avro_str(out, extra[0])
    item = bytearray()
    for name in extra[1:]:
        avro_str(item, name)
    avro_long(out, -(len(extra) - 1))
    avro_long(out, len(item))
    out += item
    out.append(0)
    out += plain[at + 1 :]


def _extra_files_offset(record: bytes) -> int:
    """Where the (empty) ``_EXTRA_FILES`` array of a record starts."""
    pattern = RecordPattern(json.loads(MANIFEST_SCHEMA), PARTITION)
    p = 0
    for field in pattern.fields[:5]:
        p = avro_split._walk(field, record, p, None)
    for field in pattern.fields[5][1][:11]:  # the _FILE record, up to and including _LEVEL
        p = avro_split._walk(field, record, p, None)
    assert record[p] == 0
    return p


def test_records_the_pattern_cannot_learn_are_walked() -> None:
    batch = [
        ManifestEntry(
            FileKind.ADD,
            PARTITIONS[i % 3],
            0,
            1,
            _file(i, extra_files=("a.index", "bb.index", "c") if i % 2 else ()),
        )
        for i in range(40)
    ]
    data = write_avro_container(MANIFEST_SCHEMA, "zstd", _encode_blocks, batch)
    assert list(fastavro.reader(io.BytesIO(data)))[1]["_FILE"]["_EXTRA_FILES"] == [
        "a.index",
        "bb.index",
        "c",
    ]
    full = deserialize_manifest(data)
    assert full == batch
    for wanted in ({PARTITIONS[1]}, {PARTITIONS[0], PARTITIONS[2]}, set()):
        for scope in ("blocks", "blocks", "blocks-2"):
            kept = _filtered(data, wanted, scope, lazy=False)
            assert kept == [e for e in batch if e.partition in wanted]


@pytest.mark.parametrize("name", ["java08-manifest", "java09-manifest"])
def test_java_manifests_filtered(name: str) -> None:
    data = (FIXTURES / name).read_bytes()
    full = deserialize_manifest(data)
    for partition in {e.partition for e in full} | {b"none"}:
        for lazy in (False, True):
            kept = _filtered(data, {partition}, name, lazy)
            assert kept == [e for e in full if e.partition == partition]


def test_schemas_it_cannot_describe_read_as_before() -> None:
    top_union = b'["null", {"type": "record", "name": "r", "fields": []}]'
    assert record_pattern(top_union, (((), "x", "x"),)) is None
    with_map = {
        "type": "record",
        "name": "r",
        "fields": [
            {"name": "_PARTITION", "type": "bytes"},
            {"name": "m", "type": {"type": "map", "values": "long"}},
        ],
    }
    assert record_pattern(json.dumps(with_map).encode(), PARTITION) is None
    bucket = record_pattern(MANIFEST_SCHEMA.encode(), (((), "_BUCKET", "_BUCKET"),))
    assert bucket is not None and not bucket.has_value  # not bytes
    assert record_pattern(MANIFEST_SCHEMA.encode(), (((), "_NOPE", "_NOPE"),)) is None
    assert record_pattern(MANIFEST_SCHEMA.encode(), (((), "_KIND", "_VERSION"),)) is None
    nullable = json.loads(MANIFEST_SCHEMA)
    nullable["fields"][2]["type"] = ["null", "bytes"]
    pattern = record_pattern(json.dumps(nullable).encode(), PARTITION)
    assert pattern is not None and pattern.has_value
    assert pattern.value(b"\x00") is None and pattern.value(b"\x02\x04ab") == b"ab"


def test_damaged_records_fail_filtered_reads() -> None:
    batch = [ManifestEntry(FileKind.ADD, PARTITIONS[i % 2], 0, 1, _file(i)) for i in range(30)]
    data = serialize_manifest(batch, "null")
    wanted = {PARTITIONS[0]}
    assert _filtered(data, wanted, "damaged", False) == batch[0::2]
    # A rejected record whose file name claims more bytes than the file holds.
    record = bytearray()
    encode_entry(record, batch[-1])
    at = len(data) - 16 - len(record)
    name_at = at + record.index(b"data-29")
    damaged = bytearray(data)
    damaged[name_at - 1] = 0x7E
    with pytest.raises(MetadataFormatError):
        _filtered(bytes(damaged), wanted, "damaged", False)
    # A block that says it holds a record more than it does.
    head = data.index(data[-16:]) + 16  # the first block, after the header's sync marker
    assert data[head] == 60  # 30 records, zigzag
    lying = bytearray(data)
    lying[head] = 62
    with pytest.raises(MetadataFormatError):
        _filtered(bytes(lying), wanted, "damaged", False)
    lying[head] = 58
    with pytest.raises(MetadataFormatError):
        _filtered(bytes(lying), wanted, "damaged", False)


def test_one_plan_asks_each_partition_once_across_manifests(tmp_path: Path) -> None:
    manifests = ManifestFile(LocalFileIO(), str(tmp_path))
    metas = [
        manifests.write(
            [
                ManifestEntry(FileKind.ADD, PARTITIONS[i % 3], 0, 1, _file(i + 10 * m))
                for i in range(9)
            ],
            [],
        )[0]
        for m in range(3)
    ]
    from paimon_core.format.manifest import MANIFEST_CACHE

    MANIFEST_CACHE.clear()
    asked: list[bytes] = []

    def keep(partition: bytes) -> bool:
        asked.append(partition)
        return partition == PARTITIONS[1]

    verdicts: dict[bytes, bool] = {}
    kept = [e for m in metas for e in manifests.read(m.file_name, keep, verdicts=verdicts)]
    assert sorted(asked) == sorted(PARTITIONS[:3])
    assert [e.file.file_name for e in kept] == [
        f"data-{i + 10 * m}.parquet" for m in range(3) for i in range(1, 9, 3)
    ]
    MANIFEST_CACHE.clear()


# ------------------------------------------------ whole lazy reads (plans of every partition)


def _lazy_read(data: bytes, scope: str) -> list[ManifestEntry]:
    lazy = deserialize_manifest(data, lazy=True, scope=scope)
    assert all(type(e.file) is not DataFileMeta for e in lazy)  # not decoded yet
    return lazy


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(entries, min_size=1, max_size=8),
    st.integers(64, 120),
    st.sampled_from(["a", "fresh"]),
)
def test_a_lazy_read_of_many_entries_is_the_eager_read(
    odd: list[ManifestEntry], size: int, scope: str
) -> None:
    """Mostly regular entries (the pattern's), some of any shape (walked or learned)."""
    if scope == "fresh":
        avro_split._PATTERNS.clear()
    regular = [
        ManifestEntry(FileKind.ADD, PARTITIONS[i % 3], i % 2, 2, _file(i)) for i in range(size)
    ]
    batch = regular[: size // 2] + odd + regular[size // 2 :]
    data = serialize_manifest(batch)
    lazy = _lazy_read(data, scope)
    assert [e.file.file_name for e in lazy] == [e.file.file_name for e in batch]
    assert lazy == batch == deserialize_manifest(data)
    assert all(type(e.file) is DataFileMeta for e in lazy)


def test_lazy_reads_of_many_entries_check_every_record() -> None:
    """What the lazy walk checks when it reads (UTF-8, versions, kinds), the split does."""
    batch = [ManifestEntry(FileKind.ADD, PARTITIONS[1], 0, 1, _file(i)) for i in range(100)]
    odd = _file(50, value_stats_cols=("abc", "ü"), extra_files=("é.index",))
    batch[50] = dataclasses.replace(batch[50], file=odd)
    data = serialize_manifest(batch, "null")
    assert _lazy_read(data, "checks") == batch  # non-ASCII strings: that record walked
    damaged = bytearray(data)
    damaged[data.rindex(b"abc")] = 0xFF  # not UTF-8
    with pytest.raises(MetadataFormatError):
        deserialize_manifest(bytes(damaged), lazy=True, scope="checks")
    record = bytearray()
    encode_entry(record, batch[70])
    at = data.index(bytes(record))
    assert data[at] == 4  # _VERSION 2
    for offset, byte, message in ((0, 6, "version 3"), (1, 10, "Corrupt")):
        wrong = bytearray(data)
        wrong[at + offset] = byte
        with pytest.raises(MetadataFormatError, match=message):
            deserialize_manifest(bytes(wrong), lazy=True, scope="checks")


@pytest.mark.parametrize(
    "missing",
    [
        ["_WRITE_COLS", "_FIRST_ROW_ID", "_EXTERNAL_PATH", "_VALUE_STATS_COLS"],  # Java 0.9
        ["_WRITE_COLS", "_FIRST_ROW_ID", "_EXTERNAL_PATH", "_VALUE_STATS_COLS", "_FILE_SOURCE"],
    ],
)
def test_lazy_reads_of_older_shapes(missing: list[str]) -> None:
    batch = [
        ManifestEntry(FileKind.ADD, PARTITIONS[i % 3], 0, 1, _file(i, file_source=0))
        for i in range(80)
    ]
    records = list(fastavro.reader(io.BytesIO(serialize_manifest(batch))))
    schema = json.loads(MANIFEST_SCHEMA)
    for field in schema["fields"][5]["type"]["fields"][:]:
        if field["name"] in missing:
            schema["fields"][5]["type"]["fields"].remove(field)
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(schema), records, codec="deflate")
    expected = [
        dataclasses.replace(
            e, file=dataclasses.replace(e.file, **{n[1:].lower(): None for n in missing})
        )
        for e in batch
    ]
    assert _lazy_read(out.getvalue(), "older") == expected
    nullable = json.loads(MANIFEST_SCHEMA)
    nullable["fields"][5]["type"] = ["null", nullable["fields"][5]["type"]]  # Java 0.8
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(nullable), records, codec="null")
    assert deserialize_manifest(out.getvalue(), lazy=True, scope="older") == batch


def test_pypaimon_manifests_through_the_patterns(tmp_path: Path) -> None:
    """pypaimon 2.1's manifest shape (its own schema JSON), its records repeated past the
    size from which whole lazy reads go through the pattern."""
    import pyarrow as pa
    from pypaimon import CatalogFactory, Schema

    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    catalog.create_database("db", False)
    schema = pa.schema([("k", pa.int64()), ("v", pa.string()), ("dt", pa.string())])
    catalog.create_table("db.t", Schema.from_pyarrow_schema(schema, partition_keys=["dt"]), False)
    table = catalog.get_table("db.t")
    builder = table.new_batch_write_builder()
    write = builder.new_write()
    rows = {"k": [1, 2, 3], "v": ["a", None, "c"], "dt": ["d1", "d2", "a-longer-dt"]}
    write.write_arrow(pa.table(rows, schema=schema))
    commit = builder.new_commit()
    commit.commit(write.prepare_commit())
    write.close()
    commit.close()
    paths = list((tmp_path / "db.db" / "t" / "manifest").glob("manifest-*"))
    manifests = [p for p in paths if not p.name.startswith("manifest-list-")]
    assert manifests
    for path in manifests:
        reader = fastavro.reader(io.BytesIO(path.read_bytes()))
        records = list(reader)
        out = io.BytesIO()
        fastavro.writer(out, reader.writer_schema, records * (70 // len(records) + 1))
        data = out.getvalue()
        eager = deserialize_manifest(data)
        assert len(eager) >= 70 and {e.partition for e in eager} == {
            e.partition for e in deserialize_manifest(path.read_bytes())
        }
        assert _lazy_read(data, "pypaimon") == eager
        for partition in {e.partition for e in eager}:
            kept = _filtered(data, {partition}, "pypaimon", lazy=True)
            assert kept == [e for e in eager if e.partition == partition]
        schema_json = read_avro_container(data)[0]
        for captures in (PARTITION, manifest_module._LAZY_CAPTURES):
            pattern = avro_split._PATTERNS.get(
                (schema_json, captures, "pypaimon", captures != PARTITION)
            )
            assert pattern is not None and pattern.compiled is not None


def test_files_of_too_many_shapes_are_walked() -> None:
    """Stats rows of 60 lengths: the pattern learns what it may (32 lengths a field, a few
    rounds a file, 32 in all), and every read is still the eager read."""
    batch = [
        ManifestEntry(
            FileKind.ADD,
            PARTITIONS[i % 3],
            0,
            1,
            _file(i, value_stats=SimpleStats(b"a" * (12 + 8 * (i * 7 % 60)), b"b" * 12, (0,))),
        )
        for i in range(400)
    ]
    data = serialize_manifest(batch)
    for _ in range(3):
        assert _lazy_read(data, "shapes") == batch
        for partition in PARTITIONS[:3]:
            kept = _filtered(data, {partition}, "shapes", lazy=False)
            assert kept == [e for e in batch if e.partition == partition]
    patterns = [p for k, p in avro_split._PATTERNS.items() if k[2] == "shapes"]
    assert len(patterns) == 2
    for pattern in patterns:
        assert pattern is not None and pattern.learnt <= avro_split._MAX_LEARNING
        assert max(len(known) for known in pattern.lengths) == avro_split._MAX_ALTERNATIVES


# --------------------------- searched heads (partitions of fixed-size fields, one size)

SIZED = [b"\x00\x00\x00\x01" + bytes(8) + i.to_bytes(8, "little") for i in (0, 7, 8, 300)]
"""Partitions of one INT field (every one 20 bytes), and bytes that hold their heads."""
FAKE_HEADS = [b"\x04" + kind + b"\x28" + p for p in SIZED for kind in (b"\x00", b"\x02")]
tricky_rows = st.sampled_from(FAKE_HEADS) | st.binary(max_size=40) | st.sampled_from(SIZED)


def _with_fake_heads(e: ManifestEntry, key: bytes, name_tail: bytes) -> ManifestEntry:
    """``e`` with a head of some partition inside its keys and its file name's bytes."""
    file = dataclasses.replace(
        e.file,
        min_key=key,
        max_key=key[::-1],
        file_name=e.file.file_name + name_tail.decode("latin-1"),
    )
    return dataclasses.replace(e, file=file)


def _container(batch: list[ManifestEntry], per_block: int, codec: str = "null") -> bytes:
    """A manifest of ``batch`` with ``per_block`` records in each Avro block."""
    writer = manifest_module._AvroWriter(
        MANIFEST_SCHEMA.encode(), manifest_module.avro_codec(codec)
    )
    for i, e in enumerate(batch):
        writer.add(encode_entry, e)
        if (i + 1) % per_block == 0:
            writer.flush()
    return writer.finish()


def _searched(
    data: bytes, wanted: set[bytes], scope: str, lazy: bool, necessary: bool = False
) -> list[ManifestEntry]:
    asked: list[bytes] = []

    def keep(partition: bytes) -> bool:
        asked.append(partition)
        return partition in wanted

    if necessary:  # a condition every kept partition meets: its INT is not 8
        keep.necessary = lambda values: [v[12:16] != b"\x08\x00\x00\x00" for v in values]  # type: ignore[attr-defined]
    kept = deserialize_manifest(data, keep, lazy=lazy, scope=scope, partition_size=20)
    assert len(asked) == len(set(asked))  # once per distinct partition
    return kept


sized_entries = st.builds(
    ManifestEntry,
    st.sampled_from(FileKind),
    st.sampled_from(SIZED),
    st.integers(-(2**31), 2**31 - 1),
    st.integers(-(2**31), 2**31 - 1),
    files,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(sized_entries, tricky_rows, tricky_rows), max_size=30),
    st.sets(st.sampled_from(SIZED)),
    st.integers(1, 12),
    st.sampled_from(["a", "fresh"]),
    st.booleans(),
    st.booleans(),
)
def test_a_searched_read_is_the_full_read_filtered(
    drawn: list[tuple[ManifestEntry, bytes, bytes]],
    wanted: set[bytes],
    per_block: int,
    scope: str,
    lazy: bool,
    necessary: bool,
) -> None:
    """Heads of kept and other partitions inside keys and file names (latin-1: not ASCII,
    so those records are walked by the general way), blocks of 1 to 12 records."""
    if scope == "fresh":
        avro_split._PATTERNS.clear()
    batch = [_with_fake_heads(e, key, tail) for e, key, tail in drawn]
    data = _container(batch, per_block, "zstd")
    assert deserialize_manifest(data) == batch
    if necessary:
        wanted = {p for p in wanted if p[12:16] != b"\x08\x00\x00\x00"}
    expected = [e for e in batch if e.partition in wanted]
    assert _searched(data, wanted, scope, lazy, necessary) == expected


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """The answers of ``_decode_by_heads`` (done, or left to the general way) from now on."""
    answers: list[bool] = []
    real = manifest_module._decode_by_heads

    def spy(*args: Any) -> bool:
        answers.append(real(*args))
        return answers[-1]

    monkeypatch.setattr(manifest_module, "_decode_by_heads", spy)
    return answers


def test_heads_inside_other_fields_are_passed_over(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every record holds the head of the kept partition in its keys (ASCII file names: the
    pattern matches the records), in blocks with more heads than records: the places
    inside records are looked at and passed over, without the general way."""
    wanted = SIZED[1]
    batch = [
        ManifestEntry(
            FileKind.ADD,
            SIZED[i % 3 == 0],
            0,
            1,
            _file(i, min_key=b"\x04\x00\x28" + wanted, max_key=b"\x04\x02\x28" + wanted),
        )
        for i in range(60)
    ]
    data = _container(batch, 7)
    _filtered(data, {wanted}, "heads-inside", False)  # learn the records' pattern
    answers = _spy(monkeypatch)
    for lazy in (False, True):
        kept = _searched(data, {wanted}, "heads-inside", lazy)
        assert kept == [e for e in batch if e.partition == wanted]
        assert [e.file.file_name for e in kept] == [f"data-{i}.parquet" for i in range(0, 60, 3)]
    assert answers == [True, True]


def test_blocks_of_exact_heads_are_read_without_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Heads only where records start: the kept records are cut from head to head (the
    pattern is never run: it knows nothing in a new scope)."""
    batch = [ManifestEntry(FileKind.ADD, SIZED[i % 4], 0, 1, _file(i)) for i in range(50)]
    data = _container(batch, 9)
    answers = _spy(monkeypatch)
    avro_split._PATTERNS.clear()
    kept = _searched(data, {SIZED[2], SIZED[3]}, "exact-heads", False)
    assert kept == [e for e in batch if e.partition in (SIZED[2], SIZED[3])]
    assert answers == [True]
    pattern = record_pattern(MANIFEST_SCHEMA.encode(), PARTITION, "exact-heads")
    assert pattern is not None and pattern.compiled is None  # nothing matched by it


@pytest.mark.parametrize("odd_at", [0, 9, 23])
def test_other_partition_sizes_are_read_the_general_way(
    monkeypatch: pytest.MonkeyPatch, odd_at: int
) -> None:
    """A record whose partition is not of the size searched for: first in its block, or
    leaving its block with fewer heads than records. The manifest is read the general way,
    that record found."""
    odd = SIZED[1] + bytes(8)
    batch = [ManifestEntry(FileKind.ADD, SIZED[i % 2], 0, 1, _file(i)) for i in range(30)]
    batch[odd_at] = dataclasses.replace(batch[odd_at], partition=odd)
    data = _container(batch, 10)
    answers = _spy(monkeypatch)
    kept = _searched(data, {odd, SIZED[1]}, "odd-size", False)
    assert kept == [e for e in batch if e.partition in (odd, SIZED[1])]
    assert answers == [False]


def test_a_kept_partition_that_fails_keep_fails_the_read() -> None:
    """``keep`` raising on a record's partition: the general way asks it again and fails
    the read as before; on a head inside another field, it is passed over."""
    batch = [
        ManifestEntry(FileKind.ADD, SIZED[i % 2], 0, 1, _file(i, min_key=FAKE_HEADS[6]))
        for i in range(12)
    ]
    data = _container(batch, 5)

    def keep(partition: bytes) -> bool:
        if partition == SIZED[1]:
            raise MetadataFormatError("bad partition")
        return partition == SIZED[0]

    with pytest.raises(MetadataFormatError, match="bad partition"):
        deserialize_manifest(data, keep, scope="fails", partition_size=20)

    def keep_fake(partition: bytes) -> bool:
        if partition == SIZED[3]:  # only inside the keys
            raise MetadataFormatError("not a partition")
        return partition == SIZED[0]

    kept = deserialize_manifest(data, keep_fake, scope="fails", partition_size=20)
    assert kept == batch[0::2]


def test_verdicts_of_the_general_way_serve_the_searched_reads_after() -> None:
    """One plan's answers, shared: a manifest read the general way (a partition of another
    size in it) decides the kept partition; the next manifest, searched, is not asked about
    it again and still finds its entries."""
    odd = SIZED[1] + bytes(8)
    first = [ManifestEntry(FileKind.ADD, SIZED[i % 2], 0, 1, _file(i)) for i in range(10)]
    first[0] = dataclasses.replace(first[0], partition=odd)
    second = [ManifestEntry(FileKind.ADD, SIZED[i % 3], 0, 1, _file(i + 10)) for i in range(9)]
    asked: list[bytes] = []

    def keep(partition: bytes) -> bool:
        asked.append(partition)
        return partition == SIZED[1]

    verdicts = manifest_module.PartitionVerdicts()
    kept = []
    for batch in (first, second):
        data = _container(batch, 4)
        kept += deserialize_manifest(
            data, keep, verdicts=verdicts, scope="shared", partition_size=20
        )
    assert kept == [e for e in first + second if e.partition == SIZED[1]]
    assert len(asked) == len(set(asked)) and SIZED[1] in asked
    assert verdicts.kept == {b"\x28" + SIZED[1]}


# ------------------- partitions with variable-size fields: searched when all of one size

DATES = [serialize_row([f"2024-01-{d:02d}"], [STRING()]) for d in (1, 2, 3, 31)]
"""Partitions of one STRING field of 10 bytes (in the variable part): every one 36 bytes."""
SAME_SIZE = [serialize_row([s], [STRING()]) for s in ("2024-1-01", "ab-cd-ef-gh-ij-k", "é" * 8)]
"""Other strings whose rows have the same 36 bytes (9 to 16 bytes of UTF-8)."""
OTHER_SIZES = [serialize_row([s], [STRING()]) for s in (None, "", "x", "2024-01-01-extra-17")]
"""Rows of the same arity and other sizes (inline strings, nulls, a longer variable part)."""
STRINGS = DATES + SAME_SIZE + OTHER_SIZES
STRING_FAKE_HEADS = [
    b"\x04" + kind + bytes([len(p) * 2]) + p for p in STRINGS for kind in (b"\x00", b"\x02")
]


def _searched_strings(data: bytes, wanted: set[bytes], scope: str) -> list[ManifestEntry]:
    """A filtered read as a plan of a table of one STRING partition field does it."""
    asked: list[bytes] = []

    def keep(partition: bytes) -> bool:
        asked.append(partition)
        return partition in wanted

    kept = deserialize_manifest(data, keep, scope=scope, partition_arity=1)
    assert len(asked) == len(set(asked))  # once per distinct partition
    return kept


def test_string_partitions_of_one_size_are_searched(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows of one size but strings of different lengths (and bytes): searched, the kept
    records found, also with heads of their partitions inside keys."""
    batch = [
        ManifestEntry(
            FileKind.ADD,
            (DATES + SAME_SIZE)[i % 7],
            0,
            1,
            _file(i, min_key=STRING_FAKE_HEADS[i % 14] if i % 3 else EMPTY_ROW),
        )
        for i in range(70)
    ]
    answers = _spy(monkeypatch)
    for per_block in (1, 9, 70):
        data = _container(batch, per_block)
        for wanted in ({DATES[1]}, {SAME_SIZE[0], SAME_SIZE[2]}, set(), {DATES[3], b"nothing"}):
            kept = _searched_strings(data, wanted, f"strings-{per_block}")
            assert kept == [e for e in batch if e.partition in wanted]
    assert answers and all(answers)


@pytest.mark.parametrize("odd_at", [0, 9, 23, 29])
@pytest.mark.parametrize("odd", OTHER_SIZES)
def test_string_partitions_of_other_sizes_are_read_the_general_way(
    monkeypatch: pytest.MonkeyPatch, odd_at: int, odd: bytes
) -> None:
    """One record of another size anywhere (first: its size is searched for, the others
    are of another size): the manifest is read the general way, that record found."""
    batch = [ManifestEntry(FileKind.ADD, DATES[i % 2], 0, 1, _file(i)) for i in range(30)]
    batch[odd_at] = dataclasses.replace(batch[odd_at], partition=odd)
    answers = _spy(monkeypatch)
    for per_block in (10, 30):
        data = _container(batch, per_block)
        kept = _searched_strings(data, {odd, DATES[1]}, "odd-strings")
        assert kept == [e for e in batch if e.partition in (odd, DATES[1])]
    assert answers == [False, False]


def test_a_head_of_another_size_inside_a_field_leaves_the_general_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """All records of one size, but a key holds the head of a partition of another size:
    it may be a record's, so the manifest is read the general way (correct, not faster)."""
    batch = [ManifestEntry(FileKind.ADD, DATES[i % 3], 0, 1, _file(i)) for i in range(12)]
    batch[5] = dataclasses.replace(batch[5], file=_file(5, min_key=STRING_FAKE_HEADS[-3]))
    answers = _spy(monkeypatch)
    kept = _searched_strings(_container(batch, 5), {DATES[2]}, "fake-other")
    assert kept == [e for e in batch if e.partition == DATES[2]]
    assert answers == [False]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.sampled_from(FileKind),
            st.sampled_from(DATES + SAME_SIZE) | st.sampled_from(STRINGS),
            st.sampled_from(STRING_FAKE_HEADS) | st.binary(max_size=40),
            st.sampled_from(STRING_FAKE_HEADS) | st.binary(max_size=8),
        ),
        max_size=30,
    ),
    st.sets(st.sampled_from(STRINGS)),
    st.integers(1, 12),
    st.sampled_from(["s", "fresh"]),
)
def test_a_searched_string_read_is_the_full_read_filtered(
    drawn: list[tuple[FileKind, bytes, bytes, bytes]],
    wanted: set[bytes],
    per_block: int,
    scope: str,
) -> None:
    """Partitions mostly of one size, sometimes of others; heads of any of them inside
    keys and file names; blocks of 1 to 12 records."""
    if scope == "fresh":
        avro_split._PATTERNS.clear()
    batch = [
        _with_fake_heads(ManifestEntry(kind, partition, 0, 1, _file(i)), key, tail)
        for i, (kind, partition, key, tail) in enumerate(drawn)
    ]
    data = _container(batch, per_block, "zstd")
    assert deserialize_manifest(data) == batch
    expected = [e for e in batch if e.partition in wanted]
    assert _searched_strings(data, wanted, scope) == expected

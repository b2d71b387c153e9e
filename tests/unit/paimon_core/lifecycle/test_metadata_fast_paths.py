"""The shortcuts taken for speed (bench/) give exactly what the plain paths give."""

from __future__ import annotations

import dataclasses
import gc
import pickle
from pathlib import Path

import pytest

from paimon_core.format.manifest import (
    EMPTY_ROW,
    EMPTY_STATS,
    DataFileMeta,
    FileKind,
    ManifestEntry,
    ManifestFileMeta,
    SimpleStats,
    _encode_meta,
    deserialize_manifest,
    deserialize_manifest_list,
    read_avro_container,
    serialize_manifest,
    serialize_manifest_list,
)
from paimon_core.io.fileio import LocalFileIO
from paimon_core.lifecycle import file_deletion

P_1 = bytes.fromhex("0000000100000000000000000100000000000000")


def _meta(i: int) -> ManifestFileMeta:
    return ManifestFileMeta(f"manifest-{i}-0", 100 + i, i, 0, SimpleStats(P_1, P_1, (0,)), 0)


def _entry(i: int) -> ManifestEntry:
    file = DataFileMeta(
        f"data-{i}.parquet", 10, 1, EMPTY_ROW, EMPTY_ROW, EMPTY_STATS, EMPTY_STATS,
        i, i, 0, 0, creation_time_millis=1_795_353_177_949 + i,
    )  # fmt: skip
    return ManifestEntry(FileKind.ADD, P_1, 0, 1, file)


def test_a_list_extending_the_previous_one_decodes_like_a_fresh_one() -> None:
    metas = [_meta(i) for i in range(12)]
    short = deserialize_manifest_list(serialize_manifest_list(metas[:5]))
    longer = deserialize_manifest_list(serialize_manifest_list(metas))
    assert short == metas[:5] and longer == metas
    longer.append(None)  # the caller's list is its own
    assert deserialize_manifest_list(serialize_manifest_list(metas)) == metas
    other = [_meta(i) for i in range(20, 23)]
    assert deserialize_manifest_list(serialize_manifest_list(other)) == other
    assert deserialize_manifest_list(serialize_manifest_list([])) == []


def test_headers_of_other_codecs_are_not_mistaken_for_a_cached_one() -> None:
    metas = [_meta(1), _meta(2)]
    for compression in ("zstd", "none", "snappy", "zstd", "deflate"):
        data = serialize_manifest_list(metas, compression)
        assert deserialize_manifest_list(data) == metas, compression


def test_decoded_records_are_real_frozen_dataclasses() -> None:
    entries = [_entry(i) for i in range(300)]  # enough records to pause the collector
    was_enabled = gc.isenabled()
    decoded = deserialize_manifest(serialize_manifest(entries))
    assert gc.isenabled() == was_enabled
    assert decoded == entries
    first = decoded[0]
    assert type(first) is ManifestEntry and type(first.file) is DataFileMeta
    assert hash(first) == hash(entries[0])
    assert pickle.loads(pickle.dumps(first)) == first
    assert dataclasses.replace(first.file, level=3).level == 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.file.level = 1  # type: ignore[misc]


@pytest.mark.parametrize("size", [0, 1, 65_535, 65_536, 65_537, 300_000])
def test_local_read_bytes_reads_whole_files(tmp_path: Path, size: int) -> None:
    path = tmp_path / "f"
    data = bytes(i % 251 for i in range(size))
    path.write_bytes(data)
    assert LocalFileIO().read_bytes(str(path)) == data
    with pytest.raises(FileNotFoundError):
        LocalFileIO().read_bytes(str(tmp_path / "missing"))


def test_slow_local_deletes_finish_in_a_thread_pool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = []
    for i in range(100):
        path = tmp_path / f"f{i}"
        path.write_bytes(b"x")
        paths.append(str(path))
    paths.append(str(tmp_path / "already-gone"))
    ticks = iter(range(0, 10**6, 10))  # every clock reading 10 s later: deletes look slow
    monkeypatch.setattr(file_deletion.time, "perf_counter", lambda: next(ticks))
    pools = []
    real_pool = file_deletion.ThreadPoolExecutor

    def counting_pool(*args: object, **kwargs: object) -> object:
        pools.append(args)
        return real_pool(*args, **kwargs)

    monkeypatch.setattr(file_deletion, "ThreadPoolExecutor", counting_pool)
    assert file_deletion.delete_quietly(LocalFileIO(), paths) == 100
    assert pools and not list(tmp_path.iterdir())


def test_quick_local_deletes_stay_sequential(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = []
    for i in range(40):
        path = tmp_path / f"f{i}"
        path.write_bytes(b"x")
        paths.append(str(path))
    monkeypatch.setattr(file_deletion.time, "perf_counter", lambda: 0.0)

    def no_pool(*args: object, **kwargs: object) -> object:
        raise AssertionError("quick local deletes need no threads")

    monkeypatch.setattr(file_deletion, "ThreadPoolExecutor", no_pool)
    assert file_deletion.delete_quietly(LocalFileIO(), paths) == 40
    assert not list(tmp_path.iterdir())


def test_a_list_reusing_encoded_metas_has_the_records_of_a_fresh_encoding() -> None:
    def records(data: bytes) -> bytes:
        return read_avro_container(data)[1]

    metas = [_meta(i) for i in range(6)]
    plain = bytearray()
    for m in metas:
        _encode_meta(plain, m)
    serialize_manifest_list(metas)  # now every meta's bytes are cached
    assert records(serialize_manifest_list(metas)) == bytes(plain)
    # Another object under a cached name (same name, other content) is encoded anew.
    changed = dataclasses.replace(metas[2], file_size=999_999)
    assert deserialize_manifest_list(serialize_manifest_list([metas[0], changed])) == [
        metas[0],
        changed,
    ]

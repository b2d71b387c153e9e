"""File access: local and pyarrow implementations, atomic no-clobber publish, races."""

from __future__ import annotations

import errno
import multiprocessing
import os
import re
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from paimon_core.exceptions import AtomicCreateUnsupported
from paimon_core.io.fileio import (
    FileIO,
    FileStatus,
    LocalFileIO,
    PyArrowFileIO,
    is_local,
    temp_name,
)
from paimon_core.io.load import get_file_io

IMPLEMENTATIONS: dict[str, Callable[[Path], tuple[FileIO, str]]] = {
    "local": lambda root: (LocalFileIO(), str(root)),
    "local-file-uri": lambda root: (LocalFileIO(), f"file://{root}"),
    "pyarrow": lambda root: (PyArrowFileIO(str(root)), str(root)),
    "pyarrow-file-uri": lambda root: (PyArrowFileIO(f"file://{root}"), f"file://{root}"),
}


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def io_root(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[FileIO, str]:
    return IMPLEMENTATIONS[request.param](tmp_path)


def test_write_read_overwrite_and_parent_dirs(io_root: tuple[FileIO, str]) -> None:
    io, root = io_root
    path = f"{root}/a/b/c/file"
    assert not io.exists(path)
    io.write_bytes(path, b"one")
    assert io.read_bytes(path) == b"one"
    io.write_text(path, "zwei é")
    assert io.read_text(path) == "zwei é"
    io.write_bytes(path, b"3")  # shorter than before: nothing of the old content is left
    assert io.read_bytes(path) == b"3"
    assert io.exists(f"{root}/a/b")
    with pytest.raises(FileNotFoundError):
        io.read_bytes(f"{root}/missing")


def test_delete_list_status_walk(io_root: tuple[FileIO, str]) -> None:
    io, root = io_root
    io.write_bytes(f"{root}/d/x", b"12345")
    io.write_bytes(f"{root}/d/sub/y", b"1")
    io.write_bytes(f"{root}/d/sub/deeper/z", b"")
    io.mkdirs(f"{root}/d/empty")

    listing = {s.name: s for s in io.list_status(f"{root}/d")}
    assert set(listing) == {"x", "sub", "empty"}
    assert listing["x"] == FileStatus(f"{root}/d/x", 5, listing["x"].mtime_ms, False)
    assert listing["x"].mtime_ms > 1_500_000_000_000
    assert listing["sub"].is_dir and listing["empty"].is_dir
    assert sorted(io.list_names(f"{root}/d")) == ["empty", "sub", "x"]
    assert io.list_status(f"{root}/nope") == [] and io.list_names(f"{root}/nope") == []

    walked = sorted(s.path for s in io.walk(f"{root}/d"))
    assert walked == [f"{root}/d/sub/deeper/z", f"{root}/d/sub/y", f"{root}/d/x"]
    assert list(io.walk(f"{root}/nope")) == []

    status = io.get_status(f"{root}/d/x")
    assert (status.size, status.is_dir, status.name) == (5, False, "x")
    with pytest.raises(FileNotFoundError):
        io.get_status(f"{root}/d/missing")

    assert io.delete(f"{root}/d/x") is True
    assert io.delete(f"{root}/d/x") is False
    assert io.delete(f"{root}/d/empty") is True
    io.delete_dir(f"{root}/d")
    assert not io.exists(f"{root}/d")
    io.delete_dir(f"{root}/d")  # missing is fine


def test_write_no_clobber_creates_once_and_leaves_no_temp(io_root: tuple[FileIO, str]) -> None:
    io, root = io_root
    path = f"{root}/snapshot/snapshot-1"
    assert io.write_no_clobber(path, b"first") is True
    assert io.write_no_clobber(path, b"second") is False
    assert io.read_bytes(path) == b"first"
    assert io.list_names(f"{root}/snapshot") == ["snapshot-1"]


def test_parquet_through_open_output_open_input_and_arrow_fs(io_root: tuple[FileIO, str]) -> None:
    io, root = io_root
    table = pa.table({"k": [1, 2, 3], "v": ["a", "b", None]})
    path = f"{root}/p=1/bucket-0/data-x-0.parquet"
    with io.open_output(path) as out:
        pq.write_table(table, out)
    with io.open_input(path) as f:
        assert pq.ParquetFile(f).read().equals(table)
    read = pq.read_table(io.to_fs_path(path), filesystem=io.arrow_fs(), partitioning=None)
    assert read.equals(table)


def test_temp_names_are_hidden_and_never_versioned() -> None:
    name = temp_name("snapshot-7")
    assert re.fullmatch(r"\.snapshot-7\.[0-9a-f-]{36}\.tmp", name)
    assert not name.startswith(("snapshot-", "schema-"))


def test_failed_publish_removes_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    io = LocalFileIO()

    def crash(self: LocalFileIO, src: str, dst: str) -> None:
        raise OSError(errno.EIO, "injected")

    monkeypatch.setattr(LocalFileIO, "_link", crash)
    with pytest.raises(OSError, match="injected"):
        io.write_no_clobber(str(tmp_path / "s" / "snapshot-1"), b"x")
    assert os.listdir(tmp_path / "s") == []


def test_failed_temp_write_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_write = os.write

    def full_disk(fd: int, data: bytes) -> int:
        real_write(fd, bytes(data)[:1])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full_disk)
    with pytest.raises(OSError, match="No space"):
        LocalFileIO().write_no_clobber(str(tmp_path / "snapshot-1"), b"payload")
    monkeypatch.undo()
    assert os.listdir(tmp_path) == []


def test_publish_without_hard_links_falls_back_to_exclusive_create(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_links(self: LocalFileIO, src: str, dst: str) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(LocalFileIO, "_link", no_links)
    io = LocalFileIO()
    path = str(tmp_path / "schema-0")
    assert io.write_no_clobber(path, b"a") is True
    assert io.write_no_clobber(path, b"b") is False
    assert io.read_bytes(path) == b"a"
    assert os.listdir(tmp_path) == ["schema-0"]


def _race(directory: str, n: int, tag: str, barrier: object, out: multiprocessing.Queue) -> None:
    io = LocalFileIO()
    barrier.wait()  # type: ignore[attr-defined]
    won = [i for i in range(n) if io.write_no_clobber(f"{directory}/snapshot-{i}", tag.encode())]
    out.put((tag, won))


def test_two_processes_race_for_the_same_names(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(2)
    out = ctx.Queue()
    directory = str(tmp_path / "snapshot")
    os.mkdir(directory)
    procs = [ctx.Process(target=_race, args=(directory, 200, t, barrier, out)) for t in "ab"]
    for p in procs:
        p.start()
    results = dict(out.get(timeout=60) for _ in procs)
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    won_a, won_b = set(results["a"]), set(results["b"])
    assert not won_a & won_b
    assert won_a | won_b == set(range(200))
    for i in range(200):
        content = Path(directory, f"snapshot-{i}").read_text()
        assert content == ("a" if i in won_a else "b")
    assert sorted(os.listdir(directory)) == sorted(f"snapshot-{i}" for i in range(200))


def test_get_file_io_dispatch(tmp_path: Path) -> None:
    assert isinstance(get_file_io(str(tmp_path)), LocalFileIO)
    assert isinstance(get_file_io(f"file://{tmp_path}"), LocalFileIO)
    assert isinstance(get_file_io("relative/dir"), LocalFileIO)
    assert is_local("file:/tmp/x") and is_local("C:\\wh") and not is_local("s3://b/wh")


def test_object_store_paths_keep_the_bucket(tmp_path: Path) -> None:
    io = PyArrowFileIO("s3://bucket/wh", filesystem=pafs.LocalFileSystem())
    assert io.to_fs_path("s3://bucket/wh/db.db/t/snapshot") == "bucket/wh/db.db/t/snapshot"
    hdfs = PyArrowFileIO("hdfs://nn:8020/wh", filesystem=pafs.LocalFileSystem())
    assert hdfs.to_fs_path("hdfs://nn:8020/wh/t") == "/wh/t"


def test_pyarrow_without_conditional_create_refuses_to_publish(tmp_path: Path) -> None:
    """Check-then-write would let two committers both publish snapshot-N: refused, and
    nothing is written."""
    sub = pafs.SubTreeFileSystem(str(tmp_path), pafs.LocalFileSystem())
    io = PyArrowFileIO("gs://bucket/wh", filesystem=sub)
    with pytest.raises(AtomicCreateUnsupported) as info:
        io.write_no_clobber("gs://bucket/wh/t/snapshot/snapshot-1", b"x")
    message = str(info.value)
    assert "\n" not in message
    assert "gs://bucket/wh/t/snapshot/snapshot-1" in message
    assert "no conditional create" in message
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("sizes", [(b"12", b"9"), (b"9", b"10"), (b"x" * 900, b"y" * 40)])
def test_overwrite_atomic_replaces_whole_content(
    io_root: tuple[FileIO, str], sizes: tuple[bytes, bytes]
) -> None:
    io, root = io_root
    path = f"{root}/tag/tag-x"
    old, new = sizes
    io.overwrite_atomic(path, old)  # missing file and parent directory: created
    assert io.read_bytes(path) == old
    io.overwrite_atomic(path, new)
    assert io.read_bytes(path) == new
    assert io.list_names(f"{root}/tag") == ["tag-x"]  # no temp file left


def _failing(monkeypatch: pytest.MonkeyPatch, name: str, error: type[BaseException]) -> None:
    real = getattr(os, name)

    def fail(*args: object) -> object:
        if any(isinstance(a, str) and ".tmp" in a for a in args) or name == "write":
            raise error("injected")
        return real(*args)

    monkeypatch.setattr(os, name, fail)


class _Crash(BaseException):
    pass


@pytest.mark.parametrize("step", ["open", "write", "replace"])
@pytest.mark.parametrize("error", [OSError, _Crash])
def test_failed_atomic_overwrite_keeps_old_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: str, error: type[BaseException]
) -> None:
    io = LocalFileIO()
    path = str(tmp_path / "tag" / "tag-x")
    io.overwrite_atomic(path, b'{"old": "a longer json document"}')
    for data in (b'{"new": 1}', b"7"):  # shorter: both paths (temp + rename, in place)
        with monkeypatch.context() as m:
            _failing(m, step, error)
            with pytest.raises(error, match="injected"):
                io.overwrite_atomic(path, data)
        assert io.read_bytes(path) == b'{"old": "a longer json document"}'
        assert os.listdir(tmp_path / "tag") == ["tag-x"]


def test_small_overwrite_in_place_only_when_it_covers_the_old_bytes(tmp_path: Path) -> None:
    io = LocalFileIO()
    path = str(tmp_path / "LATEST")
    io.overwrite_atomic(path, b"99")
    inode = os.stat(path).st_ino
    io.overwrite_atomic(path, b"100")  # covers "99": rewritten in place
    assert os.stat(path).st_ino == inode and io.read_bytes(path) == b"100"
    io.overwrite_atomic(path, b"9")  # shorter: a new file renamed over it, never "900"
    assert os.stat(path).st_ino != inode and io.read_bytes(path) == b"9"


def test_local_version_changes_on_same_size_rewrite_within_a_second(tmp_path: Path) -> None:
    io = LocalFileIO()
    path = str(tmp_path / "snapshot-2")
    io.write_bytes(path, b"aaaa")
    first = io.version(path)
    assert io.version(path) == first
    os.rename(path, f"{path}.old")  # still allocated: the new file gets another inode
    io.write_no_clobber(path, b"bbbb")  # same size, same second
    assert io.version(path) != first
    with pytest.raises(FileNotFoundError):
        io.version(str(tmp_path / "missing"))
    assert PyArrowFileIO(str(tmp_path)).version(path) is None  # mtime in seconds: no version


def test_publish_leaves_no_temp_and_refuses_to_replace(tmp_path: Path) -> None:
    """The publish (a rename that refuses to replace where the system has one, else a hard
    link) leaves exactly the published file, and never replaces one."""
    io = LocalFileIO()
    for i in range(3):
        assert io.write_no_clobber(str(tmp_path / f"snapshot-{i}"), f"s{i}".encode())
        assert not io.write_no_clobber(str(tmp_path / f"snapshot-{i}"), b"other")
    assert sorted(os.listdir(tmp_path)) == ["snapshot-0", "snapshot-1", "snapshot-2"]
    assert [io.read_bytes(str(tmp_path / f"snapshot-{i}")) for i in range(3)] == [
        b"s0",
        b"s1",
        b"s2",
    ]

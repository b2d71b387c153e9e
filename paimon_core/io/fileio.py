"""All file access of the core: local disk through ``os`` calls, anything else through pyarrow.

Paths are plain strings, a local path (optionally ``file://``) or a URI. Every write of the
local implementation goes through ``write_bytes``, ``write_no_clobber``, ``overwrite_atomic``
and ``open_output`` (and ``_link``/``_replace`` for their publish steps), so tests can inject
failures by overriding them.
"""

from __future__ import annotations

import errno
import logging
import os
import shutil
import stat
import threading
import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit

import pyarrow as pa
import pyarrow.fs as pafs

from paimon_core.exceptions import AtomicCreateUnsupported

logger = logging.getLogger(__name__)

# No O_TRUNC: overwrites truncate after writing. Truncating a file to zero and rewriting it
# makes ext4 flush it on close (auto_da_alloc), 15x slower for the LATEST hint.
_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | getattr(os, "O_BINARY", 0)
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0)
_READ_CHUNK = 1 << 16  # larger reads allocate (and mmap) more than small files need
_IN_PLACE_MAX = 64  # hint files: an id, far below one block
_WRITE_BUFFER = 1 << 16
# ``os.link`` is missing on some file systems (FUSE mounts, SMB); then fall back to O_EXCL.
_NO_LINK_ERRNOS = frozenset(
    e
    for e in (
        getattr(errno, "EPERM", None),
        getattr(errno, "ENOTSUP", None),
        getattr(errno, "EOPNOTSUPP", None),
        getattr(errno, "ENOSYS", None),
        getattr(errno, "EXDEV", None),
        getattr(errno, "EMLINK", None),
    )
    if e is not None
)
# Object stores address "bucket/key": the authority is part of the pyarrow path.
_BUCKET_SCHEMES = frozenset({"s3", "s3a", "s3n", "gs", "gcs", "oss", "abfs", "abfss", "az"})
_ARROW_SCHEME = {"s3a": "s3", "s3n": "s3", "gcs": "gs"}
# pyarrow file systems whose object PUT replaces an object atomically.
_ATOMIC_PUT_FILE_SYSTEMS = frozenset({"s3", "gcs", "abfs"})


@dataclass(frozen=True, slots=True)
class FileStatus:
    """One entry of a listing: a file or a directory."""

    path: str
    size: int
    mtime_ms: int
    is_dir: bool

    @property
    def name(self) -> str:
        return self.path.rstrip("/").rsplit("/", 1)[-1]


def temp_name(name: str) -> str:
    """Java's temp-file name for ``name``: hidden, so listings by prefix never see it."""
    return f".{name}.{uuid.uuid4()}.tmp"


def _join(directory: str, name: str) -> str:
    return f"{directory.rstrip('/')}/{name}" if directory not in ("", "/") else f"/{name}"


class FileIO(ABC):
    """File access used by every module of the core (never ``open`` or ``os`` directly)."""

    @abstractmethod
    def exists(self, path: str) -> bool:
        """Whether a file or directory is at ``path``."""

    @abstractmethod
    def read_bytes(self, path: str) -> bytes:
        """The whole file; raises ``FileNotFoundError`` when it is missing."""

    def read_text(self, path: str) -> str:
        return self.read_bytes(path).decode("utf-8")

    @abstractmethod
    def write_bytes(self, path: str, data: bytes) -> None:
        """Create or overwrite ``path`` (parent directories are created as needed)."""

    def write_text(self, path: str, text: str) -> None:
        self.write_bytes(path, text.encode("utf-8"))

    @abstractmethod
    def overwrite_atomic(self, path: str, data: bytes) -> None:
        """Create or replace ``path`` so that readers see the old or the new bytes, never a mix.

        For files other writers may replace: tags (``replace_tag``) and the hint files. A
        crash at any moment leaves the old or the new file, plus at most a hidden temp file
        (``temp_name``) that no Paimon listing matches.
        """

    def version(self, path: str) -> object | None:
        """A token that changes whenever ``path`` is replaced or rewritten, or None when this
        file system has none it can give cheaply and reliably (object stores report whole
        seconds): then callers compare the bytes. May raise ``FileNotFoundError``.
        """
        return None

    @abstractmethod
    def write_no_clobber(self, path: str, data: bytes) -> bool:
        """Create ``path`` with ``data`` unless it exists; False when it does.

        Used to publish ``snapshot-N`` and ``schema-N``: of several writers racing for one
        name exactly one wins, and readers never see a partly written file.
        """

    @property
    def failed_create_is_final(self) -> bool:
        """Whether a ``write_no_clobber`` that raised, with ``path`` absent afterwards, can
        no longer create it. True on a local disk; False on a remote store, where a request
        whose answer was lost may still be carried out."""
        return False

    @abstractmethod
    def delete(self, path: str) -> bool:
        """Delete one file (or an empty directory); False when it was already gone."""

    @abstractmethod
    def delete_dir(self, path: str) -> None:
        """Delete a directory with everything below it (missing is fine)."""

    def rename(self, src: str, dst: str) -> None:
        """Move a file or directory to ``dst``, which must not exist (Java's ``FileIO.rename``:
        a table directory moves with ``ALTER TABLE ... RENAME TO``). Object stores have no
        directories to move: each file is copied, then the source deleted (not atomic, as
        Hadoop's S3A rename).

        Raises:
            FileExistsError: ``dst`` exists.
        """
        if self.exists(dst):
            raise FileExistsError(dst)
        fs = self.arrow_fs()
        source, target = self.to_fs_path(src).rstrip("/"), self.to_fs_path(dst).rstrip("/")
        if fs.get_file_info(source).type != pafs.FileType.Directory:
            fs.move(source, target)
            return
        for child in fs.get_file_info(pafs.FileSelector(source, recursive=True)):
            if child.type == pafs.FileType.File:
                fs.copy_file(child.path, target + child.path[len(source) :])
        fs.delete_dir(source)

    @abstractmethod
    def list_status(self, directory: str) -> list[FileStatus]:
        """Direct children of ``directory``; [] when it does not exist."""

    def list_names(self, directory: str) -> list[str]:
        """Names of the direct children of ``directory``; [] when it does not exist."""
        return [s.name for s in self.list_status(directory)]

    @abstractmethod
    def get_status(self, path: str) -> FileStatus:
        """Status of ``path``; raises ``FileNotFoundError`` when it is missing."""

    @abstractmethod
    def mkdirs(self, path: str) -> None:
        """Create ``path`` and its parents (existing is fine)."""

    @abstractmethod
    def walk(self, directory: str) -> Iterator[FileStatus]:
        """Every file (not directory) below ``directory``, recursively."""

    @abstractmethod
    def open_input(self, path: str) -> pa.NativeFile:
        """A random-access pyarrow file, e.g. for ``pyarrow.parquet.ParquetFile``."""

    @abstractmethod
    def open_output(self, path: str) -> pa.NativeFile:
        """A pyarrow output stream that creates or overwrites ``path``."""

    @abstractmethod
    def arrow_fs(self) -> pafs.FileSystem:
        """The pyarrow file system for dataset/parquet APIs (paths via ``to_fs_path``)."""

    @abstractmethod
    def to_fs_path(self, path: str) -> str:
        """``path`` as the file system returned by ``arrow_fs`` names it."""


_AT_FDCWD = -100
_RENAME_NOREPLACE = 1
# renameat2 reports these when the kernel or the file system cannot refuse to replace.
_NO_NOREPLACE_ERRNOS = frozenset(
    e for e in (errno.EINVAL, errno.ENOSYS, getattr(errno, "ENOTSUP", None)) if e is not None
)
_renameat2: object | None = None  # None: not looked up yet; False: unavailable


def _rename_noreplace(src: str, dst: str) -> bool:
    """Rename ``src`` to ``dst`` unless ``dst`` exists (``FileExistsError``); False when this
    system cannot (no ``renameat2``, or a file system without ``RENAME_NOREPLACE``), then
    nothing was done."""
    global _renameat2
    if _renameat2 is None:
        try:
            import ctypes

            function = ctypes.CDLL(None, use_errno=True).renameat2
            function.argtypes = (
                ctypes.c_int,
                ctypes.c_char_p,
                ctypes.c_int,
                ctypes.c_char_p,
                ctypes.c_uint,
            )
            function.restype = ctypes.c_int
            _renameat2 = function
        except (ImportError, OSError, AttributeError):
            _renameat2 = False
    if _renameat2 is False:
        return False
    import ctypes

    rename = _renameat2
    if rename(_AT_FDCWD, os.fsencode(src), _AT_FDCWD, os.fsencode(dst), _RENAME_NOREPLACE) == 0:  # type: ignore[operator]
        return True
    err = ctypes.get_errno()
    if err in _NO_NOREPLACE_ERRNOS:
        return False
    if err == errno.EEXIST:
        raise FileExistsError(err, os.strerror(err), dst)
    raise OSError(err, os.strerror(err), dst)


def _local(path: str) -> str:
    if path.startswith("file:"):
        rest = path[5:]
        if rest.startswith("//"):
            rest = rest[2:]
            # file://host/path is not local-only; only the empty or localhost authority is.
            if not rest.startswith("/"):
                host, _, tail = rest.partition("/")
                if host not in ("", "localhost"):
                    raise ValueError(f"Not a local path: {path}")
                rest = "/" + tail
        return rest
    return path


def _absent(err: OSError) -> bool:
    """Whether listing failed because nothing is there: a missing path, a file, or a name
    longer than the file system allows (so it cannot have been created)."""
    return isinstance(err, (FileNotFoundError, NotADirectoryError)) or (
        err.errno == errno.ENAMETOOLONG
    )


def _status_of(path: str, st: os.stat_result) -> FileStatus:
    return FileStatus(path, st.st_size, st.st_mtime_ns // 1_000_000, stat.S_ISDIR(st.st_mode))


class LocalFileIO(FileIO):
    """Local disk with plain ``os`` calls: no needless stats or mkdirs on the commit path.

    Parent directories are created only when a write fails because they are missing, so the
    common case is a single ``open``.
    """

    _fs: pafs.LocalFileSystem | None = None
    _fs_lock = threading.Lock()

    def __init__(self) -> None:
        pass

    @property
    def failed_create_is_final(self) -> bool:
        return True

    def exists(self, path: str) -> bool:
        return os.path.exists(_local(path))

    def read_bytes(self, path: str) -> bytes:
        # Plain os calls: metadata files are small, and a file object costs more than a read.
        fd = os.open(_local(path), _READ_FLAGS)
        try:
            data = os.read(fd, _READ_CHUNK)
            if not data:
                return data
            more = os.read(fd, _READ_CHUNK)
            if not more:
                return data
            parts = [data, more]
            while more:
                more = os.read(fd, _READ_CHUNK)
                parts.append(more)
            return b"".join(parts)
        finally:
            os.close(fd)

    def write_bytes(self, path: str, data: bytes) -> None:
        # Metadata files get fresh names: creating exclusively first spares the truncate an
        # overwrite needs (one system call per file of every commit).
        local = _local(path)
        try:
            self._write_file(local, data, _CREATE_FLAGS)
        except FileExistsError:
            self._write_file(local, data, _WRITE_FLAGS)

    def write_no_clobber(self, path: str, data: bytes) -> bool:
        local = _local(path)
        directory, name = os.path.split(local)
        tmp = os.path.join(directory, temp_name(name))
        self._write_file(tmp, data, _CREATE_FLAGS)
        moved = False
        try:
            try:
                moved = bool(self._link(tmp, local))
            except FileExistsError:
                return False
            except OSError as err:
                if err.errno not in _NO_LINK_ERRNOS:
                    raise
                logger.debug("hard links unsupported for %s, using O_EXCL create", local)
                try:
                    self._write_file(local, data, _CREATE_FLAGS)
                except FileExistsError:
                    return False
            return True
        finally:
            if not moved:
                try:
                    os.unlink(tmp)
                except FileNotFoundError:
                    pass

    def _link(self, src: str, dst: str) -> bool | None:
        """The publish step: atomic, and fails with ``FileExistsError`` instead of replacing.

        A rename that refuses to replace (Linux ``renameat2`` with ``RENAME_NOREPLACE``)
        where the file system has one: one directory change instead of a hard link and the
        temp file's removal. True when ``src`` was moved (nothing left to remove); else a
        hard link is made.
        """
        if _rename_noreplace(src, dst):
            return True
        os.link(src, dst)
        return False

    def overwrite_atomic(self, path: str, data: bytes) -> None:
        """A hidden temp file renamed over ``path``; a hint-sized ``data`` that covers every
        byte of the current (non-empty) file is written in place instead.

        One ``write`` that replaces the whole content is as atomic as the rename against a
        crash, and 0.3-0.5 ms cheaper per commit on ext4, where a rename over a file makes
        the new one be written back at once (``auto_da_alloc``).
        """
        local = _local(path)
        if len(data) <= _IN_PLACE_MAX and self._overwrite_in_place(local, data):
            return
        directory, name = os.path.split(local)
        tmp = os.path.join(directory, temp_name(name))
        self._write_file(tmp, data, _CREATE_FLAGS)
        try:
            self._replace(tmp, local)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise

    @staticmethod
    def _overwrite_in_place(local: str, data: bytes) -> bool:
        try:
            fd = os.open(local, _WRITE_FLAGS & ~os.O_CREAT)
        except (FileNotFoundError, IsADirectoryError):
            return False
        try:
            if not 0 < os.fstat(fd).st_size <= len(data):
                return False
            return os.write(fd, data) == len(data)
        finally:
            os.close(fd)

    def _replace(self, src: str, dst: str) -> None:
        """The publish step of ``overwrite_atomic``: an atomic rename over ``dst``."""
        os.replace(src, dst)

    def version(self, path: str) -> tuple[int, int, int]:
        """Inode, nanosecond modification time and size: a file replaced by a rename or
        rewritten in place changes at least one of them, even within the same second."""
        st = os.stat(_local(path))
        return st.st_ino, st.st_mtime_ns, st.st_size

    @staticmethod
    def _write_file(path: str, data: bytes, flags: int) -> None:
        try:
            fd = os.open(path, flags, 0o666)
        except FileNotFoundError:
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            fd = os.open(path, flags, 0o666)
        created = bool(flags & os.O_EXCL)
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            if not created:
                os.ftruncate(fd, len(data))
        except BaseException:
            os.close(fd)
            if created:  # a half-written file of ours; an overwritten one is left to the caller
                try:
                    os.unlink(path)
                except OSError:
                    pass
            raise
        os.close(fd)

    def delete(self, path: str) -> bool:
        local = _local(path)
        try:
            os.unlink(local)
            return True
        except FileNotFoundError:
            return False
        except (IsADirectoryError, PermissionError):
            if not os.path.isdir(local):
                raise
            os.rmdir(local)
            return True

    def rename(self, src: str, dst: str) -> None:
        target = _local(dst)
        if os.path.lexists(target):
            raise FileExistsError(dst)
        os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
        os.rename(_local(src), target)

    def delete_dir(self, path: str) -> None:
        try:
            shutil.rmtree(_local(path))
        except FileNotFoundError:
            pass

    def list_status(self, directory: str) -> list[FileStatus]:
        local = _local(directory)
        result = []
        try:
            with os.scandir(local) as entries:
                for entry in entries:
                    try:
                        st = entry.stat()
                    except FileNotFoundError:
                        continue
                    result.append(_status_of(_join(directory, entry.name), st))
        except OSError as err:
            if not _absent(err):
                raise
            return []
        return result

    def list_names(self, directory: str) -> list[str]:
        try:
            return os.listdir(_local(directory))
        except OSError as err:
            if not _absent(err):
                raise
            return []

    def get_status(self, path: str) -> FileStatus:
        return _status_of(path, os.stat(_local(path)))

    def mkdirs(self, path: str) -> None:
        os.makedirs(_local(path), exist_ok=True)

    def walk(self, directory: str) -> Iterator[FileStatus]:
        stack = [directory]
        while stack:
            current = stack.pop()
            try:
                with os.scandir(_local(current)) as it:
                    entries = list(it)
            except (FileNotFoundError, NotADirectoryError):
                continue
            for entry in entries:
                child = _join(current, entry.name)
                if entry.is_dir(follow_symlinks=False):
                    stack.append(child)
                    continue
                try:
                    yield _status_of(child, entry.stat())
                except FileNotFoundError:
                    continue

    def open_input(self, path: str) -> pa.NativeFile:
        return pa.OSFile(_local(path), "rb")

    def open_output(self, path: str) -> pa.NativeFile:
        """Buffered: a Parquet writer's many small writes (a dozen for a 10-row file) become
        one system call per 64 KiB."""
        local = _local(path)
        try:
            raw = pa.OSFile(local, "wb")
        except FileNotFoundError:
            os.makedirs(os.path.dirname(local) or ".", exist_ok=True)
            raw = pa.OSFile(local, "wb")
        return pa.BufferedOutputStream(raw, _WRITE_BUFFER)

    def arrow_fs(self) -> pafs.FileSystem:
        if LocalFileIO._fs is None:
            with LocalFileIO._fs_lock:
                if LocalFileIO._fs is None:
                    LocalFileIO._fs = pafs.LocalFileSystem()
        return LocalFileIO._fs

    def to_fs_path(self, path: str) -> str:
        return os.path.abspath(_local(path))


class PyArrowFileIO(FileIO):
    """Any file system pyarrow knows (``gs://``, ``hdfs://``, ...; ``s3://`` is ``S3FileIO``).

    pyarrow can create a file only if it is absent on a local disk alone: elsewhere
    ``write_no_clobber`` could only check and then write, which lets two committers both
    publish ``snapshot-N`` and lose one commit's rows, so it refuses
    (``AtomicCreateUnsupported``). Reading and every other write work as usual.
    """

    def __init__(self, uri: str, filesystem: pafs.FileSystem | None = None) -> None:
        parts = urlsplit(uri) if "://" in uri else None
        self.scheme = parts.scheme if parts else ""
        self.netloc = parts.netloc if parts else ""
        if filesystem is None:
            scheme = _ARROW_SCHEME.get(self.scheme, self.scheme)
            target = uri if scheme == self.scheme else scheme + uri[len(self.scheme) :]
            filesystem, _ = pafs.FileSystem.from_uri(target)
        self._fs = filesystem

    def to_fs_path(self, path: str) -> str:
        if "://" not in path:
            return path
        parts = urlsplit(path)
        if parts.scheme in _BUCKET_SCHEMES:
            return f"{parts.netloc}{parts.path}".rstrip("/")
        return parts.path.rstrip("/") or "/"

    def _to_uri(self, fs_path: str) -> str:
        if not self.scheme:
            return fs_path
        if self.scheme in _BUCKET_SCHEMES:
            return f"{self.scheme}://{fs_path}"
        return f"{self.scheme}://{self.netloc}{fs_path}"

    def _status(self, info: pafs.FileInfo, path: str | None = None) -> FileStatus:
        mtime = info.mtime_ns // 1_000_000 if info.mtime_ns is not None else 0
        return FileStatus(
            path if path is not None else self._to_uri(info.path),
            info.size or 0,
            mtime,
            info.type == pafs.FileType.Directory,
        )

    def exists(self, path: str) -> bool:
        return self._fs.get_file_info(self.to_fs_path(path)).type != pafs.FileType.NotFound

    def read_bytes(self, path: str) -> bytes:
        with self._fs.open_input_stream(self.to_fs_path(path), compression=None) as f:
            return f.read()

    def write_bytes(self, path: str, data: bytes) -> None:
        with self.open_output(path) as out:
            out.write(data)

    @property
    def failed_create_is_final(self) -> bool:
        return self._fs.type_name == "local"

    def write_no_clobber(self, path: str, data: bytes) -> bool:
        """A local disk behind pyarrow publishes as ``LocalFileIO`` does; any other file
        system raises ``AtomicCreateUnsupported`` before writing anything."""
        if self._fs.type_name == "local":
            return LocalFileIO().write_no_clobber(self.to_fs_path(path), data)
        raise AtomicCreateUnsupported(
            f"Cannot publish {path}: the {self._fs.type_name} file system has no conditional "
            "create, so concurrent commits could overwrite each other; commit to a local, "
            "file:// or s3:// warehouse"
        )

    def overwrite_atomic(self, path: str, data: bytes) -> None:
        """An object store's PUT is all-or-nothing: write in place. Elsewhere (HDFS, a local
        disk through pyarrow) write a hidden temp file and move it over ``path``."""
        if self._fs.type_name in _ATOMIC_PUT_FILE_SYSTEMS:
            self.write_bytes(path, data)
            return
        fs_path = self.to_fs_path(path)
        parent, _, name = fs_path.rpartition("/")
        tmp = f"{parent}/{temp_name(name)}"
        self.write_bytes(self._to_uri(tmp), data)
        try:
            self._fs.move(tmp, fs_path)
        except BaseException:
            try:
                self._fs.delete_file(tmp)
            except OSError:
                pass
            raise

    def delete(self, path: str) -> bool:
        fs_path = self.to_fs_path(path)
        info = self._fs.get_file_info(fs_path)
        if info.type == pafs.FileType.NotFound:
            return False
        try:
            if info.type == pafs.FileType.Directory:
                self._fs.delete_dir(fs_path)
            else:
                self._fs.delete_file(fs_path)
        except FileNotFoundError:
            return False
        return True

    def delete_dir(self, path: str) -> None:
        try:
            self._fs.delete_dir(self.to_fs_path(path))
        except FileNotFoundError:
            pass

    def list_status(self, directory: str) -> list[FileStatus]:
        selector = pafs.FileSelector(self.to_fs_path(directory), allow_not_found=True)
        try:
            infos = self._fs.get_file_info(selector)
        except (FileNotFoundError, NotADirectoryError):
            return []
        return [self._status(i, _join(directory, i.base_name)) for i in infos]

    def get_status(self, path: str) -> FileStatus:
        info = self._fs.get_file_info(self.to_fs_path(path))
        if info.type == pafs.FileType.NotFound:
            raise FileNotFoundError(path)
        return self._status(info, path)

    def mkdirs(self, path: str) -> None:
        self._fs.create_dir(self.to_fs_path(path), recursive=True)

    def walk(self, directory: str) -> Iterator[FileStatus]:
        selector = pafs.FileSelector(
            self.to_fs_path(directory), allow_not_found=True, recursive=True
        )
        try:
            infos = self._fs.get_file_info(selector)
        except (FileNotFoundError, NotADirectoryError):
            return
        for info in infos:
            if info.type == pafs.FileType.File:
                yield self._status(info)

    def open_input(self, path: str) -> pa.NativeFile:
        return self._fs.open_input_file(self.to_fs_path(path))

    def open_output(self, path: str) -> pa.NativeFile:
        fs_path = self.to_fs_path(path)
        try:
            return self._fs.open_output_stream(fs_path, compression=None)
        except FileNotFoundError:
            parent = fs_path.rsplit("/", 1)[0]
            if parent:
                self._fs.create_dir(parent, recursive=True)
            return self._fs.open_output_stream(fs_path, compression=None)

    def arrow_fs(self) -> pafs.FileSystem:
        return self._fs


S3_SCHEMES = frozenset({"s3", "s3a", "s3n"})
"""The URI schemes `paimon_core.io.s3_fileio.S3FileIO` serves."""


def is_local(path: str) -> bool:
    """Plain paths and ``file:`` URIs are local; anything else with a scheme is not."""
    if path.startswith("file:"):
        return True
    scheme, sep, _ = path.partition("://")
    # A drive letter (C:\\...) is not a scheme.
    return not sep or not scheme or len(scheme) == 1

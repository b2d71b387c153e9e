"""Helpers shared by the paimon_core tests: reading keys, snapshotting a directory, and a
local file I/O that fails at a chosen step to simulate a crash or an I/O error."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

import pyarrow as pa

from paimon_core.catalog import FileSystemCatalog
from paimon_core.fileio import LocalFileIO
from paimon_core.table import FileStoreTable

WRITES = ("write_bytes", "write_no_clobber", "overwrite_atomic")
DELETES = ("delete",)
DEFAULT_OPERATIONS = (*WRITES, *DELETES)
# Every method FailingIO can count; the ones not in ``operations`` only delegate.
_WRAPPABLE = (*WRITES, "write_text", "open_output", *DELETES)


KVD_SCHEMA = pa.schema([("k", pa.int64()), ("v", pa.string()), ("dt", pa.string())])


def kvd_table(warehouse: str, **kw: Any) -> FileStoreTable:
    """``db.t`` (k, v, dt), partitioned by ``dt`` unless ``partition_keys`` says otherwise."""
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    kw.setdefault("partition_keys", ["dt"])
    return catalog.create_table("db.t", KVD_SCHEMA, **kw)


def kvd_batch(ks: list[int], dt: str = "a") -> pa.Table:
    return pa.table({"k": ks, "v": [f"v{k}" for k in ks], "dt": [dt] * len(ks)}, schema=KVD_SCHEMA)


def keys(table: FileStoreTable, **options: str) -> list[int]:
    """The sorted ``k`` column of ``table`` read with ``options`` (time travel, tags...).

    Always through a fresh copy, so no cached snapshot of ``table``'s managers is reused."""
    return sorted(table.copy(options).to_arrow().column("k").to_pylist())


def file_state(root: str) -> dict[str, bytes]:
    """Every file under ``root`` (path relative to it) with its bytes, to prove nothing changed."""
    out = {}
    for directory, _, files in os.walk(root):
        for name in files:
            path = os.path.join(directory, name)
            with open(path, "rb") as f:
                out[os.path.relpath(path, root)] = f.read()
    return out


class FailingIO(LocalFileIO):
    """Local disk that raises ``error`` at the ``fail_at``-th (0-based) step.

    A step is a call of one of ``operations``; each is recorded in ``steps`` as
    ``"<method> <basename>"``, the failing one included. ``fail_at=None`` (or a step never
    reached) only records, so a dry run tells how many steps an operation takes.
    """

    def __init__(
        self,
        fail_at: int | None,
        operations: Iterable[str] = DEFAULT_OPERATIONS,
        error: type[BaseException] = OSError,
    ) -> None:
        super().__init__()
        self.fail_at = fail_at
        self.operations = frozenset(operations)
        unknown = self.operations - set(_WRAPPABLE)
        if unknown:
            raise ValueError(f"FailingIO cannot count {sorted(unknown)}")
        self.error = error
        self.steps: list[str] = []

    @property
    def calls(self) -> int:
        return len(self.steps)

    def _step(self, method: str, path: str) -> None:
        if method not in self.operations:
            return
        self.steps.append(f"{method} {os.path.basename(path)}")
        if self.fail_at is not None and len(self.steps) - 1 == self.fail_at:
            raise self.error(f"injected failure at step {self.fail_at}: {method} {path}")


def _counted(name: str) -> Callable[..., Any]:
    def method(self: FailingIO, path: str, *args: Any, **kw: Any) -> Any:
        self._step(name, path)
        return getattr(LocalFileIO, name)(self, path, *args, **kw)

    method.__name__ = name
    return method


for _name in _WRAPPABLE:
    setattr(FailingIO, _name, _counted(_name))

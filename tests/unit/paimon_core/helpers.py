"""Helpers shared by the paimon_core tests: reading keys, reading a snapshot's changelog,
snapshotting a directory, a local file I/O that fails at a chosen step to simulate a crash
or an I/O error, and a corpus of corrupt snapshot and tag files."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from paimon_core.catalog import FileSystemCatalog
from paimon_core.format.schema import schema_from_arrow, schema_to_json
from paimon_core.io.fileio import LocalFileIO
from paimon_core.operations.split_read import ROW_KINDS, IncrementalSplit, SplitRead
from paimon_core.table import FileStoreTable

if TYPE_CHECKING:
    from paimon_core.format.manifest import ManifestEntry
    from paimon_core.format.snapshot import Snapshot

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


def foreign_table(warehouse: str, identifier: str, schema: pa.Schema, **kw: Any) -> FileStoreTable:
    """A table as Java or pypaimon creates it: its ``schema-0`` written as is, with options
    (row tracking, postpone buckets, ...) this implementation refuses to create."""
    catalog = FileSystemCatalog(warehouse)
    database = identifier.split(".")[0]
    catalog.create_database(database, ignore_if_exists=True)
    path = catalog.table_path(identifier)
    table_schema = schema_from_arrow(schema, **kw)
    catalog.file_io.write_bytes(f"{path}/schema/schema-0", schema_to_json(table_schema).encode())
    return catalog.get_table(identifier)


def kvd_batch(ks: list[int], dt: str = "a") -> pa.Table:
    return pa.table({"k": ks, "v": [f"v{k}" for k in ks], "dt": [dt] * len(ks)}, schema=KVD_SCHEMA)


def keys(table: FileStoreTable, **options: str) -> list[int]:
    """The sorted ``k`` column of ``table`` read with ``options`` (time travel, tags...).

    Always through a fresh copy, so no cached snapshot of ``table``'s managers is reused."""
    return sorted(table.copy(options).to_arrow().column("k").to_pylist())


def changelog_entries(table: FileStoreTable, snapshot: Snapshot) -> list[ManifestEntry]:
    """The entries of ``snapshot``'s changelog manifest list (none without one)."""
    if not snapshot.changelog_manifest_list:
        return []
    metas = table.manifest_list.read(snapshot.changelog_manifest_list)
    return [e for m in metas for e in table.manifest_file.read(m.file_name)]


def changelog_rows(
    table: FileStoreTable, snapshot: Snapshot, columns: Sequence[str] = ("k", "v")
) -> list[tuple[Any, ...]]:
    """The rows of ``snapshot``'s changelog files as they are, in file order: ``columns``,
    then the row kind (``+I``...) and the sequence number."""
    scan = table.new_scan()
    reader = SplitRead(table, keep_delete=True, sequence_number=True)
    out = []
    for e in changelog_entries(table, snapshot):
        values = scan.partition_values(e.partition)
        split = IncrementalSplit(e.partition, values, e.bucket, (), (e.file,), None, True)
        for row in reader.read(split, list(columns)).to_pylist():
            kind, seq = ROW_KINDS[row["_VALUE_KIND"]], row["_SEQUENCE_NUMBER"]
            out.append((*(row[c] for c in columns), kind, seq))
    return out


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


# ------------------------------------------------------------------ corrupt metadata files


def _dump(data: Any) -> bytes:
    return json.dumps(data).encode()


def _without(*keys: str) -> Callable[[dict[str, Any]], bytes]:
    return lambda good: _dump({k: v for k, v in good.items() if k not in keys})


def _with(**values: Any) -> Callable[[dict[str, Any]], bytes]:
    return lambda good: _dump({**good, **values})


# Name -> the corrupt bytes made from a good snapshot or tag JSON object: every way a file
# can parse badly or parse into something that is not a snapshot of a table.
CORRUPT_JSON: dict[str, Callable[[dict[str, Any]], bytes]] = {
    "empty": lambda good: b"",
    "blank": lambda good: b" \n",
    "truncated": lambda good: _dump(good)[: len(_dump(good)) // 2],
    "garbage-bytes": lambda good: b"\x00\x9f\xff garbage \x01",
    "non-utf8": lambda good: _dump(good).replace(b'"commitUser": "', b'"commitUser": "\xe9'),
    "array": lambda good: b"[]",
    "number": lambda good: b"4",
    "string": lambda good: b'"snapshot"',
    "null": lambda good: b"null",
    "deep-nesting": lambda good: b"[" * 100_000,
    "only-version-and-id": lambda good: _dump({"version": 3, "id": good["id"]}),
    "no-base-list": _without("baseManifestList"),
    "no-delta-list": _without("deltaManifestList"),
    "no-id": _without("id"),
    "no-schema-id": _without("schemaId"),
    "no-commit-kind": _without("commitKind"),
    "no-time": _without("timeMillis"),
    "null-base-list": _with(baseManifestList=None),
    "empty-delta-list": _with(deltaManifestList=""),
    "null-id": _with(id=None),
    "id-string": lambda good: _dump({**good, "id": str(good["id"])}),
    "id-float": lambda good: _dump({**good, "id": float(good["id"])}),
    "id-bool": _with(id=True),
    "id-beyond-long": _with(id=2**64),
    "base-list-number": _with(baseManifestList=7),
    "unknown-commit-kind": _with(commitKind="DELETE"),
    "time-string": _with(timeMillis="yesterday"),
    "record-count-string": _with(totalRecordCount="5"),
    "log-offsets-array": _with(logOffsets=[1]),
    "properties-string": _with(properties="k=v"),
}
# Only for snapshot-N (and changelog-N): a tag holds any snapshot id.
CORRUPT_SNAPSHOT_JSON: dict[str, Callable[[dict[str, Any]], bytes]] = {
    **CORRUPT_JSON,
    "id-mismatch": lambda good: _dump({**good, "id": good["id"] + 1}),
}
# Only for tag-<name>: its retention fields.
CORRUPT_TAG_JSON: dict[str, Callable[[dict[str, Any]], bytes]] = {
    **CORRUPT_JSON,
    "create-time-garbage": _with(tagCreateTime="garbage", tagTimeRetained=5),
    "create-time-object": _with(tagCreateTime={"y": 1}, tagTimeRetained=5),
    "retention-garbage": _with(tagCreateTime=[2024, 1, 1, 0, 0], tagTimeRetained="soon"),
    "retention-array": _with(tagCreateTime=[2024, 1, 1, 0, 0], tagTimeRetained=[1]),
}
# Well-formed tags that lifecycle operations cannot resolve: a snapshot the table never had,
# whose manifest lists are absent.
UNRESOLVABLE_TAG_JSON: dict[str, Callable[[dict[str, Any]], bytes]] = {
    "unresolvable": _with(
        id=99,
        baseManifestList="manifest-list-00000000-0000-0000-0000-000000000000-0",
        deltaManifestList="manifest-list-00000000-0000-0000-0000-000000000000-1",
    ),
}


def corrupt_file(path: str, how: str, corpus: dict[str, Callable[[dict[str, Any]], bytes]]) -> None:
    """Replace the JSON file at ``path`` by its ``how`` corruption from ``corpus``."""
    with open(path, "rb") as f:
        good = json.loads(f.read())
    with open(path, "wb") as f:
        f.write(corpus[how](good))


def shredding_schema(column: str, fields: list[tuple[str, Any]]) -> str:
    """A ``variant.shreddingSchema`` value: the VARIANT ``column`` shredded into ``fields``
    (name, Paimon type as JSON), field ids in order, as Paimon's option takes it."""
    shredded = [{"id": i, "name": n, "type": t} for i, (n, t) in enumerate(fields, start=1)]
    row = {"type": "ROW", "fields": shredded}
    return json.dumps({"type": "ROW", "fields": [{"id": 0, "name": column, "type": row}]})

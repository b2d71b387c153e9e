"""Tables made with the core, CALL shortcuts and a directory fingerprint for "nothing changed"."""

from __future__ import annotations

import dataclasses
import hashlib
import os
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from paimon_core.catalog import FileSystemCatalog
from paimon_core.format.snapshot import snapshot_to_json
from paimon_core.table import FileStoreTable
from procedures import ProcedureResult, call_procedure

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("dt", pa.string())])
T0 = 1_700_000_000_000  # 2023-11-14 22:13:20 UTC: commit times are pinned from here


def new_catalog(warehouse: str) -> FileSystemCatalog:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    return catalog


def new_table(
    catalog: FileSystemCatalog,
    identifier: str = "db.t",
    commits: int = 3,
    *,
    primary_keys: Sequence[str] = (),
    options: dict[str, str] | None = None,
    step_millis: int = 60_000,
) -> FileStoreTable:
    """A table partitioned by ``dt`` with ``commits`` snapshots, committed at T0 + i * step."""
    table = catalog.create_table(
        identifier,
        SCHEMA,
        partition_keys=["dt"],
        primary_keys=primary_keys,
        options=options or {},
    )
    for i in range(commits):
        day = f"2024-01-0{1 + i % 2}"
        table.write_arrow(
            pa.table({"id": [i, i + 100], "name": [f"n{i}", None], "dt": [day, day]}, SCHEMA)
        )
    set_commit_times(table, {i: T0 + (i - 1) * step_millis for i in range(1, commits + 1)})
    return catalog.get_table(identifier)


def set_commit_times(table: FileStoreTable, times: dict[int, int]) -> None:
    """Rewrite ``timeMillis`` of snapshot files (tests cannot wait between commits)."""
    manager = table.snapshot_manager
    for snapshot_id, millis in times.items():
        snapshot = dataclasses.replace(manager.snapshot(snapshot_id), time_millis=millis)
        table.file_io.write_text(manager.snapshot_path(snapshot_id), snapshot_to_json(snapshot))


def call(catalog: FileSystemCatalog, name: str, *positional: Any, **named: Any) -> ProcedureResult:
    """``CALL sys.<name>(...)`` in database ``db``, session time zone UTC."""
    return call_procedure(
        name,
        named or None,
        positional or None,
        catalog=catalog,
        current_database="db",
        time_zone="UTC",
        catalog_name="paimon",
    )


def fingerprint(root: str) -> dict[str, str]:
    """Every file under ``root`` with a hash of its bytes (directories included, empty)."""
    out: dict[str, str] = {}
    for directory, _dirs, files in os.walk(root):
        rel = os.path.relpath(directory, root)
        out[rel + "/"] = ""
        for name in files:
            with open(os.path.join(directory, name), "rb") as fh:
                out[os.path.join(rel, name)] = hashlib.sha1(fh.read()).hexdigest()
    return out


def snapshot_ids(table: FileStoreTable) -> list[int]:
    return table.snapshot_manager.list_snapshot_ids()


def tag_names(table: FileStoreTable) -> list[str]:
    return table.tag_manager.tag_names()

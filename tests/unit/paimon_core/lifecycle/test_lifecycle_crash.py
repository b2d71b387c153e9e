"""A failure at any write or delete of a lifecycle operation leaves every snapshot readable.

test_expire.py and test_rollback.py crash expiry (primary-key table) and rollback to a tag
(append table) at each step. Here the same is done, on one primary-key table with dynamic
buckets (so index files too), tags on expired snapshots and overwrites, for expiry with a
tag inside the window, rollback to a snapshot, rollback restoring an expired tag's snapshot,
deleting tags (one whose snapshot has expired) and orphan removal; each both as a crash
(the process dies) and as an I/O error the operation sees. After the failure every
remaining snapshot and tag reads what it held; running the operation again finishes it
(same snapshots, tags and hints as a run without failure, and none of the files that run
keeps is gone).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.io.fileio import LocalFileIO
from paimon_core.lifecycle import rollback as rb
from paimon_core.lifecycle import tag_management as tm
from paimon_core.lifecycle.expire import expire_snapshots
from paimon_core.table import FileStoreTable
from tests.unit.paimon_core.helpers import FailingIO
from tests.unit.paimon_core.lifecycle.test_lifecycle_state_machine import (
    PK_SCHEMA,
    Rows,
    check_table,
    disk_state,
    find_orphans,
    read_rows,
)


class Crash(BaseException):
    """The process dying: not an ``Exception``, so no handler of the code under test sees it."""


def _batch(*rows: tuple[int, str]) -> pa.Table:
    return pa.table(
        {"k": [k for k, _ in rows], "v": [f"v{k}" for k, _ in rows], "dt": [d for _, d in rows]},
        schema=PK_SCHEMA,
    )


def _history(warehouse: str) -> FileStoreTable:
    """Snapshots 3..7 live, t2 on expired snapshot 2, t4 and t5 on live ones, and orphans."""
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    table = catalog.create_table(
        "db.t",
        PK_SCHEMA,
        partition_keys=["dt"],
        primary_keys=["k", "dt"],
        options={"write-only": "true"},
    )
    table.write_arrow(_batch((1, "a"), (2, "a"), (3, "b")))
    table.write_arrow(_batch((4, "a")))
    tm.create_tag(table, "t2")
    table.write_arrow(_batch((5, "a")), overwrite={"dt": "a"})
    table.write_arrow(_batch((6, "b"), (3, "b")), row_kinds=pa.array([0, 3], pa.int8()))
    tm.create_tag(table, "t4")
    table.write_arrow(_batch((7, "a"), (8, "b")), overwrite={})
    tm.create_tag(table, "t5")
    table.write_arrow(_batch((9, "a")))
    table.write_arrow(_batch((10, "a")), overwrite={"dt": "a"})  # a=[9]: no tag holds it
    assert expire_snapshots(table, retain_min=1, max_deletes=2, older_than_millis=2**62).expired
    abandoned = table.new_write()
    abandoned.write_arrow(_batch((11, "b"), (12, "c")))
    assert abandoned.prepare_commit()  # data and index files nobody will commit
    return table


OPERATIONS: dict[str, Callable[[FileStoreTable], Any]] = {
    "expire": lambda t: expire_snapshots(
        t, retain_max=1, retain_min=1, max_deletes=10, older_than_millis=2**62
    ),
    "rollback-to-snapshot": lambda t: rb.rollback_to_snapshot(t, 5),
    "rollback-to-expired-tag": lambda t: rb.rollback_to_tag(t, "t2"),
    "delete-tags": lambda t: tm.delete_tags(t, "t2,t4"),
    "remove-orphans": lambda t: find_orphans(t, dry_run=False),
}


def _expected(table: FileStoreTable) -> tuple[dict[int, Rows], dict[str, tuple[int, Rows]]]:
    """What every snapshot and tag reads, by snapshot id and by tag name."""
    by_id = {
        sid: read_rows(table, **{"scan.snapshot-id": str(sid)})
        for sid in table.snapshot_manager.list_snapshot_ids()
    }
    tags = {}
    for name, tag in table.tag_manager.list_tags().items():
        tags[name] = (tag.snapshot_id, read_rows(table, **{"scan.tag-name": name}))
        by_id.setdefault(tag.snapshot_id, tags[name][1])
    return by_id, tags


def _check_remaining(
    path: str,
    by_id: dict[int, Rows],
    tags: dict[str, tuple[int, Rows]],
    verified: dict[tuple, Rows],
    exact_hints: bool,
) -> None:
    """Whatever snapshots and tags are left read as before (``check_table``'s invariants)."""
    table = FileStoreTable.load(path)
    ids = table.snapshot_manager.list_snapshot_ids()
    names = table.tag_manager.tag_names()
    assert set(names) <= set(tags)
    check_table(
        path,
        {sid: by_id[sid] for sid in ids},
        {name: tags[name] for name in names},
        verified,
        exact_hints=exact_hints,
    )


def _with_io(path: str, io: LocalFileIO) -> FileStoreTable:
    good = FileStoreTable.load(path)
    return FileStoreTable(io, good.path, good.schema, good.identifier)


@pytest.mark.parametrize("error", [Crash, OSError], ids=["crash", "io-error"])
@pytest.mark.parametrize("operation", list(OPERATIONS))
def test_a_failure_at_any_step_leaves_every_snapshot_and_tag_readable(
    tmp_path: Path, operation: str, error: type[BaseException]
) -> None:
    run = OPERATIONS[operation]
    origin = _history(str(tmp_path / "origin")).path
    by_id, tags = _expected(FileStoreTable.load(origin))
    assert len(by_id) == 6 and set(tags) == {"t2", "t4", "t5"}

    reference = str(tmp_path / "reference")
    shutil.copytree(origin, reference)
    counting = FailingIO(None, error=error)
    run(_with_io(reference, counting))
    steps = counting.calls
    assert steps >= 3
    verified: dict[tuple, Rows] = {}
    _check_remaining(reference, by_id, tags, verified, exact_hints=True)
    kept = set(disk_state(reference))
    ref_ids = FileStoreTable.load(reference).snapshot_manager.list_snapshot_ids()
    ref_tags = FileStoreTable.load(reference).tag_manager.tag_names()

    raised = 0
    for fail_at in range(steps):
        path = str(tmp_path / f"run{fail_at}")
        shutil.copytree(origin, path)
        try:
            run(_with_io(path, FailingIO(fail_at, error=error)))
        except (Crash, OSError):
            raised += 1
        _check_remaining(path, by_id, tags, verified, exact_hints=False)
        run(FileStoreTable.load(path))  # the retry
        table = FileStoreTable.load(path)
        assert table.snapshot_manager.list_snapshot_ids() == ref_ids, fail_at
        assert table.tag_manager.tag_names() == ref_tags, fail_at
        _check_remaining(path, by_id, tags, verified, exact_hints=True)
        assert kept <= set(disk_state(path)), fail_at
        shutil.rmtree(path)
    # A crash always stops the operation; an I/O error on an unreferenced file is skipped.
    assert raised == steps if error is Crash else raised < steps


def test_the_history_exercises_what_the_operations_clean(tmp_path: Path) -> None:
    """Each operation above has data files to delete, and all but orphan removal manifests."""
    origin = _history(str(tmp_path / "origin")).path
    before = set(disk_state(origin))
    for name, run in OPERATIONS.items():
        path = str(tmp_path / name)
        shutil.copytree(origin, path)
        run(FileStoreTable.load(path))
        gone = before - set(disk_state(path))
        kinds = {p.split("/")[0] if "/" in p else p for p in gone}
        assert any(p.endswith(".parquet") for p in gone), name
        assert "manifest" in kinds or name == "remove-orphans", name
        assert os.path.isdir(os.path.join(path, "snapshot"))


# ------------------------------------------------------------------ regressions found here


def test_expiry_run_again_after_dying_before_its_hint_rewrites_earliest(tmp_path: Path) -> None:
    path = _history(str(tmp_path / "wh")).path
    plan = OPERATIONS["expire"](FileStoreTable.load(path)).plan
    assert [value for _, value in plan.hints] == [7]
    # Rewind: as if the process died after all deletions, just before the hint write.
    hint = os.path.join(path, "snapshot", "EARLIEST")
    with open(hint, "w") as f:
        f.write("3")
    table = FileStoreTable.load(path)
    assert table.snapshot_manager.earliest_snapshot_id() == 7  # readers fall back to a listing
    assert OPERATIONS["expire"](table).expired == 0
    with open(hint) as f:
        assert f.read() == "7"  # Paimon only writes a missing EARLIEST, leaving this stale


def test_rollback_dying_right_after_restoring_a_snapshot_keeps_it_the_earliest(
    tmp_path: Path,
) -> None:
    path = _history(str(tmp_path / "wh")).path
    restore_step = 1  # EARLIEST is written first (step 0), then snapshot-2 (step 1)
    try:
        rb.rollback_to_tag(_with_io(path, FailingIO(restore_step + 1, error=Crash)), "t2")
    except Crash:
        pass
    table = FileStoreTable.load(path)
    assert table.snapshot_manager.list_snapshot_ids() == [2, 3, 4, 5, 6, 7]
    # Written after the snapshot (as Paimon does), EARLIEST would still say 3 here, so an
    # expiry would start at 3 and leave snapshot 2 behind with files nothing protects.
    assert table.snapshot_manager.earliest_snapshot_id() == 2

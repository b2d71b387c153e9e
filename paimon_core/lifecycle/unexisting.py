"""Removing manifest entries of data files that no longer exist: Paimon 2.0's
``ListUnexistingFiles`` and Spark's ``SparkRemoveUnexistingFiles``.

For a table whose data files were lost outside Paimon (a bucket directory deleted by
hand): every live data file of the latest snapshot, all levels, is checked for existence,
and the missing ones are removed in one commit of DELETE entries (an OVERWRITE snapshot,
as any commit that deletes files), after which the table reads again without them. Their
rows are gone for good; older snapshots and tags still name the files and stay unreadable,
as in Paimon. Only the data file itself is checked (not its extra files, not deletion
vectors). ``plan_unexisting_files`` is the dry run.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_core.format.commit_message import CommitMessage
from paimon_core.io.fileio import LocalFileIO
from paimon_core.operations.read import data_file_path
from paimon_core.operations.scan import TableScan

if TYPE_CHECKING:
    from paimon_core.format.manifest import ManifestEntry
    from paimon_core.table import FileStoreTable

__all__ = ["UnexistingFiles", "plan_unexisting_files", "remove_unexisting_files"]

_PARALLEL_CHECKS = 16


@dataclass(frozen=True, slots=True)
class UnexistingFiles:
    """The live entries whose data file is missing, by path, and the snapshot they are from."""

    snapshot_id: int | None
    missing: tuple[tuple[str, ManifestEntry], ...]

    @property
    def paths(self) -> list[str]:
        return [path for path, _ in self.missing]


def plan_unexisting_files(table: FileStoreTable) -> UnexistingFiles:
    """Find the live data files of the latest snapshot that do not exist (nothing changes)."""
    snapshot = table.snapshot_manager.latest_snapshot()
    if snapshot is None:
        return UnexistingFiles(None, ())
    scan = TableScan(table)
    entries = scan.read_entries(snapshot)
    paths = [
        e.file.external_path
        or data_file_path(table, scan.partition_values(e.partition), e.bucket, e.file.file_name)
        for e in entries
    ]
    io = table.file_io
    if isinstance(io, LocalFileIO) or len(paths) < 2:
        found = list(map(io.exists, paths))
    else:  # an object store answers each in milliseconds: ask in parallel
        with ThreadPoolExecutor(min(_PARALLEL_CHECKS, len(paths))) as pool:
            found = list(pool.map(io.exists, paths))
    missing = sorted(
        ((path, e) for path, e, ok in zip(paths, entries, found) if not ok), key=lambda m: m[0]
    )
    return UnexistingFiles(snapshot.snapshot_id, tuple(missing))


def remove_unexisting_files(table: FileStoreTable, *, dry_run: bool = False) -> UnexistingFiles:
    """Remove the entries of missing data files in one commit (unless ``dry_run``).

    Returns:
        What was missing (and is now removed unless ``dry_run``).

    Raises:
        CommitConflict: another commit removed one of those entries meanwhile.
    """
    planned = plan_unexisting_files(table)
    if dry_run or not planned.missing:
        return planned
    groups: dict[tuple[bytes, int], list[ManifestEntry]] = {}
    for _, entry in planned.missing:
        groups.setdefault((entry.partition, entry.bucket), []).append(entry)
    messages = [
        CommitMessage(
            partition,
            bucket,
            entries[0].total_buckets,
            deleted_files=tuple(e.file for e in entries),
        )
        for (partition, bucket), entries in groups.items()
    ]
    table.new_commit().commit(messages)
    return planned

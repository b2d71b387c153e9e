"""The data files added and removed between two versions of a table (``CALL sys.diff_tags``).

No Paimon release has this. Each version's state is its folded base + delta manifests, as a
batch read plans it (``TableScan.read_entries``); a file is the same file in both when its
partition, bucket and name are: a compaction that only moves a file to a higher level
(Paimon's level upgrade) changes no data and is neither an addition nor a removal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_core.format.binary_row import deserialize_row
from paimon_core.format.manifest import ManifestEntry
from paimon_core.format.paths import partition_path
from paimon_core.operations.read import data_file_path

if TYPE_CHECKING:
    from paimon_core.format.snapshot import Snapshot
    from paimon_core.table import FileStoreTable

__all__ = ["ADDED", "REMOVED", "FileChange", "diff_snapshots"]

ADDED, REMOVED = "added", "removed"


@dataclass(frozen=True, slots=True)
class FileChange:
    """A data file in one version and not the other.

    ``partition``: the partition's directory (``dt=2024-01-01/hr=3``, '' unpartitioned);
    ``row_count``: the rows of the file as its manifest entry records them (primary-key
    tables: every record, retractions included; rows a deletion vector hides still count).
    """

    partition: str
    bucket: int
    file_path: str
    kind: str
    row_count: int
    level: int


def diff_snapshots(table: FileStoreTable, before: Snapshot, after: Snapshot) -> list[FileChange]:
    """Files of ``after`` not in ``before`` (``added``) and of ``before`` not in ``after``
    (``removed``), sorted by partition, bucket, kind and path. ``before`` may be the newer
    version: the kinds are then the other way round, as the arguments say."""
    scan = table.new_scan()
    old = _files(scan.read_entries(before))
    new = _files(scan.read_entries(after))
    keys = table.schema.partition_keys
    types = [f.type for f in table.schema.partition_fields]
    default = table.options.partition_default_name
    partitions: dict[bytes, tuple[str, tuple]] = {}

    def change(entry: ManifestEntry, kind: str) -> FileChange:
        rendered = partitions.get(entry.partition)
        if rendered is None:
            values = tuple(deserialize_row(entry.partition, types)) if types else ()
            text = partition_path(keys, values, types, default) if keys else ""
            rendered = partitions[entry.partition] = (text, values)
        f = entry.file
        path = f.external_path or data_file_path(table, rendered[1], entry.bucket, f.file_name)
        return FileChange(rendered[0], entry.bucket, path, kind, f.row_count, f.level)

    changes = [change(e, ADDED) for k, e in new.items() if k not in old]
    changes += [change(e, REMOVED) for k, e in old.items() if k not in new]
    changes.sort(key=lambda c: (c.partition, c.bucket, c.kind, c.file_path))
    return changes


def _files(entries: list[ManifestEntry]) -> dict[tuple[bytes, int, str], ManifestEntry]:
    return {(e.partition, e.bucket, e.file.file_name): e for e in entries}

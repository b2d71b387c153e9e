"""Table statistics (Paimon's ``Statistics`` / ``ColStats`` / ``StatsFileHandler``).

``ANALYZE TABLE`` writes one JSON file ``statistics/stat-<uuid>-0`` and commits an ANALYZE
snapshot whose ``statistics`` field names it; later commits inherit that name while the
schema stays the one the statistics were computed under (as ``FileStoreCommitImpl`` does).
Min and max are kept as Paimon's ``Serializer.serializeToString`` strings.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from paimon_core.exceptions import CorruptMetadata
from paimon_core.format.paths import STATISTICS_DIR
from paimon_core.format.snapshot import jackson_json

if TYPE_CHECKING:
    from paimon_core.format.snapshot import Snapshot
    from paimon_core.table import FileStoreTable

__all__ = ["ColStats", "Statistics", "read_statistics", "statistics_path", "write_statistics"]

STATISTICS_PREFIX = "stat-"


@dataclass(frozen=True, slots=True)
class ColStats:
    """One column's statistics; ``None`` fields are left out of the JSON (``NON_NULL``)."""

    col_id: int
    distinct_count: int | None = None
    min: str | None = None
    max: str | None = None
    null_count: int | None = None
    avg_len: int | None = None
    max_len: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"colId": self.col_id}
        for key, value in (
            ("distinctCount", self.distinct_count),
            ("min", self.min),
            ("max", self.max),
            ("nullCount", self.null_count),
            ("avgLen", self.avg_len),
            ("maxLen", self.max_len),
        ):
            if value is not None:
                out[key] = value
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ColStats:
        return cls(
            int(data["colId"]),
            data.get("distinctCount"),
            data.get("min"),
            data.get("max"),
            data.get("nullCount"),
            data.get("avgLen"),
            data.get("maxLen"),
        )


@dataclass(frozen=True, slots=True)
class Statistics:
    """What one ANALYZE computed over snapshot ``snapshot_id``."""

    snapshot_id: int
    schema_id: int
    merged_record_count: int | None
    merged_record_size: int | None
    col_stats: dict[str, ColStats] = field(default_factory=dict)

    def to_json(self) -> str:
        data: dict[str, Any] = {"snapshotId": self.snapshot_id, "schemaId": self.schema_id}
        if self.merged_record_count is not None:
            data["mergedRecordCount"] = self.merged_record_count
        if self.merged_record_size is not None:
            data["mergedRecordSize"] = self.merged_record_size
        data["colStats"] = self.col_stats_json()
        return jackson_json(data)

    def col_stats_json(self) -> dict[str, Any]:
        return {name: stats.to_json() for name, stats in self.col_stats.items()}

    @classmethod
    def from_json(cls, text: str | bytes, path: str = "") -> Statistics:
        """Parse a statistics file's JSON (bytes are decoded as UTF-8).

        Raises:
            CorruptMetadata: anything that is not a statistics object, naming ``path``.
        """
        try:
            data = json.loads(text)
            return cls(
                int(data["snapshotId"]),
                int(data["schemaId"]),
                data.get("mergedRecordCount"),
                data.get("mergedRecordSize"),
                {k: ColStats.from_json(v) for k, v in (data.get("colStats") or {}).items()},
            )
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as e:
            raise CorruptMetadata(f"Statistics file {path} is corrupt: {e}") from None


def statistics_path(table: FileStoreTable, name: str) -> str:
    return f"{table.path}/{STATISTICS_DIR}/{name}"


def write_statistics(table: FileStoreTable, stats: Statistics) -> str:
    """Write a new statistics file; returns its name (what a snapshot's ``statistics`` holds)."""
    name = f"{STATISTICS_PREFIX}{uuid.uuid4()}-0"
    table.file_io.mkdirs(f"{table.path}/{STATISTICS_DIR}")
    table.file_io.write_bytes(statistics_path(table, name), stats.to_json().encode("utf-8"))
    return name


def read_statistics(table: FileStoreTable, snapshot: Snapshot | None) -> Statistics | None:
    """The statistics a snapshot references, None when it has none.

    Raises:
        CorruptMetadata: the file is not a statistics file (named in the message).
    """
    if snapshot is None or not snapshot.statistics:
        return None
    path = statistics_path(table, snapshot.statistics)
    return Statistics.from_json(table.file_io.read_bytes(path), path)

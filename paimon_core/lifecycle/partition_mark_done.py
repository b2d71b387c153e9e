"""Marking partitions done: Paimon 2.0's ``PartitionMarkDoneAction``s.

``partition.mark-done-action`` (default ``success-file``) lists the actions, comma-separated
without spaces as Java parses them. Each partition given as ``key=value`` strings becomes its
directory name in partition-key order (``PartitionPathUtils.generatePartitionPath``, keys
and values escaped, a partial spec giving its leading directories) and then:

* ``success-file``: ``<partition>/_SUCCESS`` is written with Paimon's ``SuccessFile`` JSON
  (``creationTime``, ``modificationTime``; an existing one keeps its creation time).
* ``done-partition``: needs a metastore to add ``<last value>.done`` partitions to; a
  filesystem catalog has none, so it fails as Paimon does ("Cannot mark done partition for
  table without metastore.").
* ``mark-event``: Paimon's filesystem catalog accepts the event and does nothing with it,
  after checking ``metastore.partitioned-table``; so does this.
* ``http-report`` and ``custom`` (a Java class) are refused.

Every action is checked before anything is written, so a refused call changes nothing.
Beyond Paimon, a spec naming a non-partition column, an empty spec and an unpartitioned
table are refused (Paimon drops unknown keys and would write ``_SUCCESS`` in the table root).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_core.exceptions import CorruptMetadata, InvalidArgument, UnsupportedFeature
from paimon_core.format.paths import escape_path_name
from paimon_core.format.snapshot import corrupt_file, jackson_json, load_json

if TYPE_CHECKING:
    from paimon_core.table import FileStoreTable

__all__ = [
    "SUCCESS_FILE_NAME",
    "SuccessFile",
    "mark_done_actions",
    "mark_partitions_done",
    "partition_dir",
    "success_file_from_json",
    "success_file_to_json",
]

SUCCESS_FILE_NAME = "_SUCCESS"
MARK_DONE_ACTION = "partition.mark-done-action"
_ACTIONS = ("SUCCESS_FILE", "DONE_PARTITION", "MARK_EVENT", "HTTP_REPORT", "CUSTOM")


@dataclass(frozen=True, slots=True)
class SuccessFile:
    """``_SUCCESS``: when the partition was first and last marked done (epoch millis)."""

    creation_time: int
    modification_time: int


def success_file_to_json(success: SuccessFile) -> str:
    return jackson_json(
        {"creationTime": success.creation_time, "modificationTime": success.modification_time}
    )


def success_file_from_json(text: str | bytes) -> SuccessFile:
    data = load_json(text)
    if not isinstance(data, dict):
        raise CorruptMetadata("a success file is a JSON object")
    values = [data.get("creationTime"), data.get("modificationTime")]
    if any(isinstance(v, bool) or not isinstance(v, int) for v in values):
        raise CorruptMetadata("'creationTime' and 'modificationTime' must be integers")
    return SuccessFile(values[0], values[1])


def mark_done_actions(table: FileStoreTable) -> list[str]:
    """The table's mark-done actions (Java enum names), each checked as Paimon's
    ``createActions`` does for a table of a filesystem catalog.

    Raises:
        InvalidArgument: an unknown action, ``done-partition`` (no metastore),
            ``mark-event`` without ``metastore.partitioned-table``, ``custom`` without its class.
        UnsupportedFeature: ``http-report``, ``custom`` with a class.
    """
    options = table.options
    text = options.get_str(MARK_DONE_ACTION, "success-file") or ""
    actions = []
    for item in text.split(","):
        name = item.replace("-", "_").upper()
        if name not in _ACTIONS:
            raise InvalidArgument(
                f"No enum constant org.apache.paimon.CoreOptions.PartitionMarkDoneAction.{name}"
            )
        if name not in actions:
            actions.append(name)
    for name in actions:
        if name == "DONE_PARTITION":
            raise InvalidArgument("Cannot mark done partition for table without metastore.")
        if name == "MARK_EVENT" and not options.get_bool("metastore.partitioned-table", False):
            raise InvalidArgument("Table should enable metastore.partitioned-table")
        if name == "HTTP_REPORT":
            raise UnsupportedFeature("The http-report partition mark-done action is not supported")
        if name == "CUSTOM":
            if not (options.get_str("partition.mark-done-action.custom.class") or "").strip():
                raise InvalidArgument(
                    "You need to set [partition.mark-done-action.custom.class] when you add "
                    f"[custom] mark done action in your property [{MARK_DONE_ACTION}]."
                )
            raise UnsupportedFeature(
                "The custom partition mark-done action (a Java class) is not supported"
            )
    return actions


def partition_dir(table: FileStoreTable, spec: Mapping[str, str]) -> str:
    """``k1=v1/k2=v2`` of ``spec`` in partition-key order (Java's ``generatePartitionPath``).

    Raises:
        InvalidArgument: an unpartitioned table, an empty spec, a non-partition column or
            an empty value.
    """
    keys = list(table.schema.partition_keys)
    if not keys:
        raise InvalidArgument(f"Table {table.identifier or table.path} is not partitioned")
    unknown = [k for k in spec if k not in keys]
    if unknown:
        raise InvalidArgument(f"{unknown} are not partition columns; they are {keys}")
    if not spec:
        raise InvalidArgument("A partition to mark done needs at least one 'key=value'")
    parts = []
    for key in keys:
        if key in spec:
            value = spec[key]
            if not value:
                raise InvalidArgument(
                    f"Partition value '{value}' cannot be used as a partition path component."
                )
            parts.append(f"{escape_path_name(key)}={escape_path_name(value)}")
    return "/".join(parts)


def mark_partitions_done(
    table: FileStoreTable, partitions: Sequence[Mapping[str, str]], *, now_millis: int | None = None
) -> list[str]:
    """Run the table's mark-done actions for each partition; returns the ``_SUCCESS`` paths
    written (none when ``success-file`` is not an action).

    Raises:
        InvalidArgument, UnsupportedFeature: as ``mark_done_actions`` and ``partition_dir``;
            nothing is written then.
        CorruptMetadata: an existing ``_SUCCESS`` is not a success file (nothing written).
    """
    actions = mark_done_actions(table)
    directories = [partition_dir(table, spec) for spec in partitions]
    if "SUCCESS_FILE" not in actions:
        return []
    now = int(time.time() * 1000) if now_millis is None else now_millis
    io = table.file_io
    planned: dict[str, SuccessFile] = {}
    for directory in directories:
        path = f"{table.path.rstrip('/')}/{directory}/{SUCCESS_FILE_NAME}"
        try:
            existing = success_file_from_json(io.read_bytes(path))
        except FileNotFoundError:
            planned[path] = SuccessFile(now, now)
        except CorruptMetadata as err:
            raise corrupt_file("Success", path, err) from None
        else:
            planned[path] = SuccessFile(existing.creation_time, now)
    for path, success in planned.items():
        io.overwrite_atomic(path, success_file_to_json(success).encode())
    return list(planned)

"""Consumers: ``consumer/consumer-<id>`` files holding a reader's ``nextSnapshot`` (Paimon's
``Consumer`` and ``ConsumerManager``).

A streaming reader with ``consumer-id`` records the next snapshot it will read; snapshot
expiry keeps every snapshot from the smallest such id on (``lifecycle/expire.py``), so a
consumer that stopped must be reset or deleted (``CALL sys.reset_consumer`` /
``clear_consumers``) or expire by ``consumer.expiration-time`` before older snapshots can go.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_core.exceptions import CorruptMetadata
from paimon_core.format.names import validate_consumer_id
from paimon_core.format.paths import CONSUMER_DIR, CONSUMER_PREFIX, branch_path
from paimon_core.format.snapshot import corrupt_file, jackson_json, load_json

if TYPE_CHECKING:
    from paimon_core.io.fileio import FileIO

__all__ = ["Consumer", "ConsumerManager", "consumer_from_json", "consumer_to_json"]


@dataclass(frozen=True, slots=True)
class Consumer:
    """A consumer's progress: the id of the next snapshot it will read."""

    next_snapshot: int


def consumer_to_json(consumer: Consumer) -> str:
    """Jackson's pretty form, as Java's ``Consumer.toJson``: ``{\\n  "nextSnapshot" : 5\\n}``."""
    return jackson_json({"nextSnapshot": consumer.next_snapshot})


def consumer_from_json(text: str | bytes) -> Consumer:
    """Parse a consumer file; ``CorruptMetadata`` unless ``nextSnapshot`` is an integer."""
    data = load_json(text)
    value = data.get("nextSnapshot") if isinstance(data, dict) else None
    if isinstance(value, bool) or not isinstance(value, int):
        raise CorruptMetadata("'nextSnapshot' must be an integer")
    return Consumer(value)


class ConsumerManager:
    """The consumer files of one table (or branch)."""

    def __init__(self, file_io: FileIO, table_path: str, branch: str | None = None) -> None:
        self.file_io = file_io
        self.directory = f"{branch_path(table_path.rstrip('/'), branch)}/{CONSUMER_DIR}"

    def consumer_path(self, consumer_id: str) -> str:
        """``consumer/consumer-<id>`` of this branch, never outside it.

        Raises:
            InvalidArgument: an id that is blank or not one directory entry
                (``names.validate_consumer_id``).
        """
        validate_consumer_id(consumer_id)
        return f"{self.directory}/{CONSUMER_PREFIX}{consumer_id}"

    def consumer(self, consumer_id: str) -> Consumer | None:
        """The consumer, None when it has no file.

        Raises:
            CorruptMetadata: the file is not a consumer (a reader may need any snapshot, so
                no caller may guess; Java fails after its retries too).
        """
        path = self.consumer_path(consumer_id)
        try:
            data = self.file_io.read_bytes(path)
        except FileNotFoundError:
            return None
        try:
            return consumer_from_json(data)
        except CorruptMetadata as err:
            raise corrupt_file("Consumer", path, err) from None

    def list_ids(self) -> list[str]:
        """Ids of all consumer files (``consumer-<id>``; temp files start with a dot)."""
        cut = len(CONSUMER_PREFIX)
        names = self.file_io.list_names(self.directory)
        return sorted(n[cut:] for n in names if n.startswith(CONSUMER_PREFIX) and len(n) > cut)

    def consumers(self) -> dict[str, int]:
        """Every consumer id -> its next snapshot (ones deleted while listing are skipped)."""
        found = {}
        for consumer_id in self.list_ids():
            consumer = self.consumer(consumer_id)
            if consumer is not None:
                found[consumer_id] = consumer.next_snapshot
        return found

    def min_next_snapshot(self) -> int | None:
        """The smallest ``nextSnapshot`` of all consumers, None without consumers."""
        return min(self.consumers().values(), default=None)

    def reset_consumer(self, consumer_id: str, consumer: Consumer) -> None:
        """Write (or replace) the consumer file atomically."""
        path = self.consumer_path(consumer_id)
        self.file_io.overwrite_atomic(path, consumer_to_json(consumer).encode())

    def delete_consumer(self, consumer_id: str) -> None:
        """Delete the consumer file; a missing one is ignored (Java's ``deleteQuietly``)."""
        self.file_io.delete(self.consumer_path(consumer_id))

    def expire(self, older_than_millis: int) -> list[str]:
        """Delete consumers whose file was last modified before ``older_than_millis`` (epoch
        millis); returns their ids. Java's ``ConsumerManager.expire``."""
        expired = []
        for status in self.file_io.list_status(self.directory):
            name = status.path.rstrip("/").rsplit("/", 1)[-1]
            if not name.startswith(CONSUMER_PREFIX) or status.is_dir:
                continue
            if status.mtime_ms < older_than_millis:
                self.file_io.delete(status.path)
                expired.append(name[len(CONSUMER_PREFIX) :])
        return sorted(expired)

    def clear_consumers(
        self, including: re.Pattern[str], excluding: re.Pattern[str] | None = None
    ) -> list[str]:
        """Delete consumers whose id fully matches ``including`` and not ``excluding`` (Java
        ``Matcher.matches``); returns their ids."""
        cleared = []
        for consumer_id in self.list_ids():
            if not including.fullmatch(consumer_id):
                continue
            if excluding is not None and excluding.fullmatch(consumer_id):
                continue
            self.delete_consumer(consumer_id)
            cleared.append(consumer_id)
        return cleared

"""Snapshots: the JSON of ``snapshot/snapshot-N`` and the manager that finds and publishes them.

JSON follows Java 1.4.2 (paimon-format.md §1): Jackson's pretty printer, declaration key
order, nulls omitted except ``baseManifestList``/``deltaManifestList``/``commitUser``.
Reading accepts Java's and pypaimon's forms (any key order, unknown keys ignored).
"""

from __future__ import annotations

import json
import logging
import threading
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any

from paimon_core.exceptions import SnapshotNotFound
from paimon_core.fileio import FileIO
from paimon_core.paths import (
    CHANGELOG_DIR,
    CHANGELOG_PREFIX,
    EARLIEST_HINT,
    LATEST_HINT,
    SNAPSHOT_DIR,
    SNAPSHOT_PREFIX,
    branch_path,
)

logger = logging.getLogger(__name__)

CURRENT_VERSION = 3
FIRST_SNAPSHOT_ID = 1


class CommitKind(StrEnum):
    """What a snapshot did to the table."""

    APPEND = "APPEND"
    COMPACT = "COMPACT"
    OVERWRITE = "OVERWRITE"
    ANALYZE = "ANALYZE"


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One ``snapshot-N`` file. ``snapshot_id`` is JSON ``id``."""

    snapshot_id: int
    schema_id: int
    base_manifest_list: str
    delta_manifest_list: str
    commit_user: str
    commit_identifier: int
    commit_kind: CommitKind
    time_millis: int
    total_record_count: int
    delta_record_count: int
    version: int = CURRENT_VERSION
    base_manifest_list_size: int | None = None
    delta_manifest_list_size: int | None = None
    changelog_manifest_list: str | None = None
    changelog_manifest_list_size: int | None = None
    index_manifest: str | None = None
    changelog_record_count: int | None = None
    watermark: int | None = None
    statistics: str | None = None
    properties: dict[str, str] | None = field(default=None, hash=False)
    next_row_id: int | None = None
    uuid: str | None = None
    operation: str | None = None
    writer_version: str | None = None
    log_offsets: dict[int, int] | None = field(default=None, hash=False)


# Field -> JSON name, in Java's declaration order (1.4.2 plus the 2.0/HEAD additions).
JSON_NAMES: dict[str, str] = {
    "version": "version",
    "uuid": "uuid",
    "snapshot_id": "id",
    "schema_id": "schemaId",
    "base_manifest_list": "baseManifestList",
    "base_manifest_list_size": "baseManifestListSize",
    "delta_manifest_list": "deltaManifestList",
    "delta_manifest_list_size": "deltaManifestListSize",
    "changelog_manifest_list": "changelogManifestList",
    "changelog_manifest_list_size": "changelogManifestListSize",
    "index_manifest": "indexManifest",
    "commit_user": "commitUser",
    "writer_version": "writerVersion",
    "commit_identifier": "commitIdentifier",
    "commit_kind": "commitKind",
    "time_millis": "timeMillis",
    "log_offsets": "logOffsets",
    "total_record_count": "totalRecordCount",
    "delta_record_count": "deltaRecordCount",
    "changelog_record_count": "changelogRecordCount",
    "watermark": "watermark",
    "statistics": "statistics",
    "properties": "properties",
    "next_row_id": "nextRowId",
    "operation": "operation",
}
assert set(JSON_NAMES) == {f.name for f in fields(Snapshot)}
# Java writes these even when null; every other nullable property is omitted.
ALWAYS_WRITTEN = frozenset({"baseManifestList", "deltaManifestList", "commitUser"})
_PRIMITIVES = frozenset(
    {
        "version",
        "snapshot_id",
        "schema_id",
        "commit_identifier",
        "time_millis",
        "total_record_count",
        "delta_record_count",
    }
)
_FIELDS = tuple(JSON_NAMES.items())


def snapshot_to_dict(snapshot: Snapshot) -> dict[str, Any]:
    """The JSON object of ``snapshot`` in Java's key order, null optionals left out."""
    out: dict[str, Any] = {}
    for attr, key in _FIELDS:
        value = getattr(snapshot, attr)
        if value is None:
            if key in ALWAYS_WRITTEN:
                out[key] = None
            continue
        if attr == "commit_kind":
            value = value.value
        elif attr == "log_offsets":
            value = {str(k): v for k, v in value.items()}
        out[key] = value
    return out


def snapshot_to_json(snapshot: Snapshot) -> str:
    """Jackson's pretty form: ``{\\n  "version" : 3,\\n  "id" : 1, ...}`` (no final newline)."""
    return jackson_json(snapshot_to_dict(snapshot))


_COMMIT_KINDS = {kind.value: kind for kind in CommitKind}


def snapshot_from_dict(data: Mapping[str, Any]) -> Snapshot:
    """Parse a snapshot (or tag) JSON object; unknown keys are ignored, missing numbers are 0."""
    get = data.get
    kwargs = {attr: get(key) for attr, key in _FIELDS}
    for attr in _PRIMITIVES:
        if kwargs[attr] is None:
            kwargs[attr] = 0
    kind = kwargs["commit_kind"]
    kwargs["commit_kind"] = (
        CommitKind.APPEND
        if kind is None
        else (isinstance(kind, str) and _COMMIT_KINDS.get(kind)) or CommitKind(str(kind).upper())
    )
    offsets = kwargs["log_offsets"]
    if offsets is not None:
        kwargs["log_offsets"] = {int(k): int(v) for k, v in offsets.items()}
    properties = kwargs["properties"]
    if properties is not None:
        kwargs["properties"] = {str(k): str(v) for k, v in properties.items()}
    return Snapshot(**kwargs)


def snapshot_from_json(text: str | bytes) -> Snapshot:
    return snapshot_from_dict(json.loads(text))


class RawJson(str):
    """A pre-rendered JSON token (e.g. Jackson's ``5.000000000`` for a Duration)."""


_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
}


def _json_string(value: str) -> str:
    """A JSON string as Jackson writes it: UTF-8 as is, other controls as upper-case ``\\u00XX``."""
    if value.isprintable() and '"' not in value and "\\" not in value:
        return f'"{value}"'
    out = []
    for c in value:
        escaped = _ESCAPES.get(c)
        if escaped is not None:
            out.append(escaped)
        elif ord(c) < 0x20:
            out.append(f"\\u{ord(c):04X}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def jackson_json(value: Any, indent: str = "") -> str:
    """Render like Jackson's ``DefaultPrettyPrinter``: 2-space objects, ``" : "``,
    arrays on one line as ``[ 1, 2 ]``, empty containers as ``{ }`` and ``[ ]``."""
    if value is None:
        return "null"
    if isinstance(value, RawJson):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _json_string(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return json.dumps(value)
    if isinstance(value, Mapping):
        if not value:
            return "{ }"
        inner = indent + "  "
        items = ",\n".join(
            f"{inner}{_json_string(str(k))} : {jackson_json(v, inner)}" for k, v in value.items()
        )
        return "{\n" + items + "\n" + indent + "}"
    if isinstance(value, (list, tuple)):
        if not value:
            return "[ ]"
        return "[ " + ", ".join(jackson_json(v, indent) for v in value) + " ]"
    raise TypeError(f"Cannot render {type(value).__name__} as JSON")


class SnapshotManager:
    """Finds, reads and publishes the snapshots of one table (or branch).

    ``LATEST``/``EARLIEST`` are hints: each answer is checked against the snapshot files
    and falls back to a listing. Parsed snapshots are cached by id, but every hit is checked
    against storage, because ``snapshot-N`` does change when another process expires it, or
    rolls back past it and commits a new ``N`` (possibly of the same size, within the same
    second). The check is ``FileIO.version`` (inode, nanosecond mtime and size on a local
    disk); where a file system has no reliable version (object stores report whole
    seconds) the bytes are read again and compared, which only saves the parsing.
    ``fresh=True`` always reads the bytes: a commit builds on such a read, so no version
    token, however coarse, can make it lose another writer's data.
    """

    DIRECTORY = SNAPSHOT_DIR
    PREFIX = SNAPSHOT_PREFIX
    WHAT = "Snapshot"

    def __init__(
        self,
        file_io: FileIO,
        table_path: str,
        branch: str | None = None,
        cache_size: int = 1024,
    ) -> None:
        self.file_io = file_io
        self.table_path = table_path.rstrip("/")
        self.branch = branch
        self.snapshot_dir = f"{branch_path(self.table_path, branch)}/{self.DIRECTORY}"
        self.latest_hint_path = f"{self.snapshot_dir}/{LATEST_HINT}"
        self.earliest_hint_path = f"{self.snapshot_dir}/{EARLIEST_HINT}"
        # id -> (snapshot, the file's FileIO.version when read, the file's bytes)
        self._cache: OrderedDict[int, tuple[Snapshot, object | None, bytes]] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    def snapshot_path(self, snapshot_id: int) -> str:
        return f"{self.snapshot_dir}/{self.PREFIX}{snapshot_id}"

    # ----------------------------------------------------------------------- reading

    def snapshot_exists(self, snapshot_id: int) -> bool:
        return self.file_io.exists(self.snapshot_path(snapshot_id))

    def snapshot(self, snapshot_id: int, *, fresh: bool = False) -> Snapshot:
        """The snapshot ``snapshot_id``; raises ``SnapshotNotFound`` when it does not exist.

        ``fresh``: read the file whatever its version says (the cached parse is reused only
        when the bytes are the same).
        """
        path = self.snapshot_path(snapshot_id)
        with self._lock:
            cached = self._cache.get(snapshot_id)
        try:
            # Versioned before reading: a file replaced in between is then only read again.
            version = self.file_io.version(path)
            if not fresh and cached is not None and version is not None and cached[1] == version:
                return self._hit(snapshot_id, cached[0])
            data = self.file_io.read_bytes(path)
        except FileNotFoundError:
            self._forget(snapshot_id)
            raise SnapshotNotFound(f"{self.WHAT} {snapshot_id} does not exist") from None
        if cached is not None and cached[2] == data:
            snapshot = cached[0]
        else:
            snapshot = snapshot_from_json(data)
        self._remember(snapshot_id, snapshot, version, data)
        return snapshot

    def _hit(self, snapshot_id: int, snapshot: Snapshot) -> Snapshot:
        with self._lock:
            if snapshot_id in self._cache:
                self._cache.move_to_end(snapshot_id)
        return snapshot

    def try_snapshot(self, snapshot_id: int, *, fresh: bool = False) -> Snapshot | None:
        try:
            return self.snapshot(snapshot_id, fresh=fresh)
        except SnapshotNotFound:
            return None

    def _remember(
        self, snapshot_id: int, snapshot: Snapshot, version: object | None, data: bytes
    ) -> None:
        with self._lock:
            self._cache[snapshot_id] = (snapshot, version, data)
            self._cache.move_to_end(snapshot_id)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)

    def _forget(self, snapshot_id: int) -> None:
        with self._lock:
            self._cache.pop(snapshot_id, None)

    def list_snapshot_ids(self) -> list[int]:
        """Ids of all ``snapshot-<digits>`` files, sorted (temp files never match)."""
        prefix = self.PREFIX
        cut = len(prefix)
        ids = []
        for name in self.file_io.list_names(self.snapshot_dir):
            if name.startswith(prefix):
                rest = name[cut:]
                if rest.isascii() and rest.isdigit():
                    ids.append(int(rest))
        ids.sort()
        return ids

    def snapshots(self) -> list[Snapshot]:
        """All snapshots in id order (ones deleted while reading are skipped)."""
        return [s for s in map(self.try_snapshot, self.list_snapshot_ids()) if s is not None]

    def _read_hint(self, path: str) -> int | None:
        try:
            text = self.file_io.read_bytes(path)
        except FileNotFoundError:
            return None
        except OSError as err:
            logger.warning("Cannot read snapshot hint %s: %s", path, err)
            return None
        try:
            return int(text.strip())
        except ValueError:
            return None

    def latest_snapshot_id(self) -> int | None:
        """The newest snapshot id, None for a table without snapshots.

        Trusts ``LATEST`` = L only when ``snapshot-(L+1)`` is absent and ``snapshot-L``
        present (Java ``findLatest`` plus the second check); otherwise lists the directory.
        """
        hint = self._read_hint(self.latest_hint_path)
        if (
            hint is not None
            and hint > 0
            and not self.snapshot_exists(hint + 1)
            and self.snapshot_exists(hint)
        ):
            return hint
        ids = self.list_snapshot_ids()
        return ids[-1] if ids else None

    def earliest_snapshot_id(self) -> int | None:
        """The oldest snapshot id: ``EARLIEST`` if that snapshot exists, else the listing's min."""
        hint = self._read_hint(self.earliest_hint_path)
        if hint is not None and hint > 0 and self.snapshot_exists(hint):
            return hint
        ids = self.list_snapshot_ids()
        return ids[0] if ids else None

    def _resolve(self, find: Callable[[], int | None], fresh: bool) -> Snapshot | None:
        # A snapshot may vanish between finding its id and reading it (expiry, rollback).
        for _ in range(3):
            snapshot_id = find()
            if snapshot_id is None:
                return None
            snapshot = self.try_snapshot(snapshot_id, fresh=fresh)
            if snapshot is not None:
                return snapshot
        raise SnapshotNotFound(f"{self.WHAT} files under {self.snapshot_dir} keep disappearing")

    def latest_snapshot(self, *, fresh: bool = False) -> Snapshot | None:
        """The newest snapshot; ``fresh`` (what a commit builds on) reads it from storage."""
        return self._resolve(self.latest_snapshot_id, fresh)

    def earliest_snapshot(self, *, fresh: bool = False) -> Snapshot | None:
        return self._resolve(self.earliest_snapshot_id, fresh)

    def earlier_or_equal_time_millis(self, time_millis: int) -> Snapshot | None:
        """The latest snapshot committed at or before ``time_millis`` (None if none is)."""
        return self._search_time(lambda millis: millis <= time_millis, latest=True)

    def later_or_equal_time_millis(self, time_millis: int) -> Snapshot | None:
        """The earliest snapshot committed at or after ``time_millis`` (None if none is)."""
        return self._search_time(lambda millis: millis >= time_millis, latest=False)

    def _search_time(self, matches: Callable[[int], bool], *, latest: bool) -> Snapshot | None:
        """Binary search over commit times (monotonic in the id), skipping vanished files.

        ``latest``: the highest id that ``matches`` (which holds for a prefix of the ids);
        otherwise the lowest (it holds for a suffix).
        """
        ids = self.list_snapshot_ids()
        found: Snapshot | None = None
        lo, hi = 0, len(ids) - 1
        while lo <= hi:
            mid = (lo + hi) // 2
            snapshot = self.try_snapshot(ids[mid])
            if snapshot is None:
                del ids[mid]
                hi -= 1
                continue
            if matches(snapshot.time_millis):
                found = snapshot
                lo, hi = (mid + 1, hi) if latest else (lo, mid - 1)
            else:
                lo, hi = (lo, mid - 1) if latest else (mid + 1, hi)
        return found

    def snapshot_ids_between(self, start_exclusive: int, end_inclusive: int) -> list[int]:
        """Existing ids in ``(start_exclusive, end_inclusive]``."""
        ids = self.list_snapshot_ids()
        return ids[bisect_right(ids, start_exclusive) : bisect_right(ids, end_inclusive)]

    # ----------------------------------------------------------------------- writing

    def commit(self, snapshot: Snapshot) -> bool:
        """Publish ``snapshot-N`` atomically; False when N is already taken.

        On success the ``LATEST`` hint follows; losing that write is harmless (readers
        check the hint), so its failure is only logged.
        """
        path = self.snapshot_path(snapshot.snapshot_id)
        data = snapshot_to_json(snapshot).encode("utf-8")
        if not self.file_io.write_no_clobber(path, data):
            return False
        try:
            version = self.file_io.version(path)
        except FileNotFoundError:  # already expired or rolled back by another process
            pass
        else:
            self._remember(snapshot.snapshot_id, snapshot, version, data)
        try:
            self.write_latest_hint(snapshot.snapshot_id)
        except OSError as err:
            logger.warning(
                "Snapshot %d published but LATEST not updated: %s", snapshot.snapshot_id, err
            )
        return True

    def write_latest_hint(self, snapshot_id: int) -> None:
        """Replace ``LATEST`` with the id (no newline), atomically as Java's ``HintFileUtils``:
        an in-place rewrite torn by a crash can leave a larger id (``100`` -> ``9`` gives
        ``900``), which Java's ``findLatest`` trusts when ``snapshot-901`` is absent."""
        self.file_io.overwrite_atomic(self.latest_hint_path, str(snapshot_id).encode())

    def write_earliest_hint(self, snapshot_id: int) -> None:
        self.file_io.overwrite_atomic(self.earliest_hint_path, str(snapshot_id).encode())

    def delete_snapshot(self, snapshot_id: int) -> bool:
        """Delete ``snapshot-N`` only (not its files); False when it was already gone."""
        self._forget(snapshot_id)
        return self.file_io.delete(self.snapshot_path(snapshot_id))


class ChangelogManager(SnapshotManager):
    """The long-lived changelogs ``changelog/changelog-N`` (Paimon's ``ChangelogManager``).

    A changelog is the JSON of snapshot N, written by snapshot expiry when the changelog
    lifecycle is decoupled (``changelog.num-retained.*``/``changelog.time-retained`` beyond
    the snapshot ones), so that streaming readers can still read the changes of expired
    snapshots. ``LATEST``/``EARLIEST`` hints live in ``changelog/`` too. Every
    ``SnapshotManager`` read works here; ``snapshot_dir`` is the changelog directory.
    """

    DIRECTORY = CHANGELOG_DIR
    PREFIX = CHANGELOG_PREFIX
    WHAT = "Changelog"

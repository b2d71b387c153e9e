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

from paimon_core.exceptions import (
    AtomicCreateUnsupported,
    CommitOutcomeUnknown,
    CorruptMetadata,
    InvalidArgument,
    SnapshotNotFound,
)
from paimon_core.format.paths import (
    CHANGELOG_DIR,
    CHANGELOG_PREFIX,
    EARLIEST_HINT,
    LATEST_HINT,
    SNAPSHOT_DIR,
    SNAPSHOT_PREFIX,
    branch_path,
    is_main_branch,
)
from paimon_core.io.fileio import FileIO

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
# Keys every Paimon version and pypaimon write (Java's creator has no defaults for them that
# make sense): a file without one is damaged. The manifest lists may be null (Java's TagTest
# writes such a tag), but a snapshot of a table must name them (``require_manifest_lists``).
REQUIRED_KEYS = (
    "id",
    "schemaId",
    "baseManifestList",
    "deltaManifestList",
    "commitUser",
    "commitIdentifier",
    "commitKind",
    "timeMillis",
)
# Java primitives that Paimon <= 0.3 or pypaimon may leave out: 0 then, as Jackson reads them.
_DEFAULT_ZERO = frozenset({"version", "totalRecordCount", "deltaRecordCount"})
_REQUIRED_LONGS = frozenset({"id", "schemaId", "commitIdentifier", "timeMillis"})
_NULLABLE_LONGS = frozenset(
    {
        "baseManifestListSize",
        "deltaManifestListSize",
        "changelogManifestListSize",
        "changelogRecordCount",
        "watermark",
        "nextRowId",
    }
)
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
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
    """Jackson's pretty form: ``{\\n  "version" : 3,\\n  "id" : 1, ...}`` (no final newline).

    Written field by field (every commit writes one): the same text as
    ``jackson_json(snapshot_to_dict(snapshot))``."""
    lines = []
    for attr, key in _FIELDS:
        value = getattr(snapshot, attr)
        if value is None:
            if key in ALWAYS_WRITTEN:
                lines.append(f'  "{key}" : null')
            continue
        kind = type(value)
        if kind is int:
            text = str(value)
        elif kind is str:
            text = _json_string(value)
        elif attr == "commit_kind":
            text = f'"{value.value}"'
        elif attr == "log_offsets":
            text = jackson_json({str(k): v for k, v in value.items()}, "  ")
        else:
            text = jackson_json(value, "  ")
        lines.append(f'  "{key}" : {text}')
    return "{\n" + ",\n".join(lines) + "\n}"


_COMMIT_KINDS = {kind.value: kind for kind in CommitKind}


def _json_kind(value: object) -> str:
    """How a JSON value reads in an error message: ``a string``, ``an array``, ..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return "a number"


def _long(key: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not _LONG_MIN <= value <= _LONG_MAX:
        raise CorruptMetadata(f"'{key}' must be a 64-bit integer, not {_json_kind(value)}")
    return value


def _field(key: str, value: Any) -> Any:
    """The value of JSON ``key``, checked against its Java type (None when null)."""
    if value is None:
        if key in _REQUIRED_LONGS or key == "commitKind":
            raise CorruptMetadata(f"'{key}' must not be null")
        return 0 if key in _DEFAULT_ZERO else None
    if key in _REQUIRED_LONGS or key in _DEFAULT_ZERO or key in _NULLABLE_LONGS:
        return _long(key, value)
    if key == "commitKind":
        kind = _COMMIT_KINDS.get(value.upper()) if isinstance(value, str) else None
        if kind is None:
            raise CorruptMetadata(f"'commitKind' {value!r} is not one of {list(_COMMIT_KINDS)}")
        return kind
    if key == "logOffsets":
        if not isinstance(value, Mapping):
            raise CorruptMetadata(f"'logOffsets' must be an object, not {_json_kind(value)}")
        try:
            return {int(k): _long(key, v) for k, v in value.items()}
        except ValueError as err:
            raise CorruptMetadata(f"'logOffsets' has a key that is not a number: {err}") from None
    if key == "properties":
        if not isinstance(value, Mapping) or any(
            isinstance(v, Mapping | list) for v in value.values()
        ):
            raise CorruptMetadata("'properties' must be an object of strings")
        return {str(k): str(v) for k, v in value.items()}
    if not isinstance(value, str):
        raise CorruptMetadata(f"'{key}' must be a string, not {_json_kind(value)}")
    return value


def snapshot_from_dict(data: Mapping[str, Any]) -> Snapshot:
    """Parse a snapshot (or tag) JSON object; unknown keys are ignored.

    Keys that old Paimon versions or pypaimon leave out default as Java reads them
    (``version`` and the record counts 0, the rest null); a missing required key
    (``REQUIRED_KEYS``) or a value of the wrong type raises ``CorruptMetadata``, since
    read as zeros and nulls a damaged file looks like an empty snapshot.
    """
    if not isinstance(data, Mapping):
        raise CorruptMetadata(f"expected a JSON object, found {_json_kind(data)}")
    missing = [key for key in REQUIRED_KEYS if key not in data]
    if missing:
        names = ", ".join(map(repr, missing))
        raise CorruptMetadata(
            f"required field {names} is missing"
            if len(missing) == 1
            else f"required fields {names} are missing"
        )
    get = data.get
    return Snapshot(**{attr: _field(key, get(key)) for attr, key in _FIELDS})


def load_json(text: str | bytes, **kwargs: Any) -> Any:
    """``json.loads``, failing with ``CorruptMetadata`` (bad UTF-8, syntax, nesting depth)."""
    try:
        return json.loads(text, **kwargs)
    except (ValueError, RecursionError) as err:
        reason = "not UTF-8 text" if isinstance(err, UnicodeDecodeError) else err
        raise CorruptMetadata(f"not valid JSON ({reason})") from None


def snapshot_from_json(text: str | bytes) -> Snapshot:
    """Parse a snapshot file's text; ``CorruptMetadata`` when it is not a snapshot."""
    return snapshot_from_dict(load_json(text))


def require_manifest_lists(snapshot: Snapshot) -> None:
    """A snapshot of a table names its base and delta manifest lists: without them it would
    read as empty, and expiry or orphan removal would delete the files it uses."""
    for key, name in (
        ("baseManifestList", snapshot.base_manifest_list),
        ("deltaManifestList", snapshot.delta_manifest_list),
    ):
        if not name:
            raise CorruptMetadata(f"'{key}' is {'null' if name is None else 'empty'}")


def corrupt_file(what: str, path: str, err: CorruptMetadata) -> CorruptMetadata:
    """``err`` (what is wrong) as the one-line error naming the file."""
    return CorruptMetadata(f"{what} file {path} is corrupt: {err}")


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


class _ParsedFiles:
    """Process-wide: the last parse of each snapshot file (by path) with the bytes it came
    from. A manager that reads bytes it has not parsed itself (every commit of a freshly
    opened table reads the latest snapshot afresh) reuses the parse when the bytes are the
    same; the read is never skipped, so nothing here can serve a changed file."""

    MAX = 4096

    def __init__(self) -> None:
        self._entries: OrderedDict[str, tuple[bytes, Snapshot]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, path: str, data: bytes) -> Snapshot | None:
        with self._lock:
            hit = self._entries.get(path)
        return hit[1] if hit is not None and hit[0] == data else None

    def put(self, path: str, data: bytes, snapshot: Snapshot) -> None:
        with self._lock:
            self._entries[path] = (data, snapshot)
            self._entries.move_to_end(path)
            while len(self._entries) > self.MAX:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


PARSED_SNAPSHOTS = _ParsedFiles()


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
        self.branch = None if is_main_branch(branch) else branch
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
            snapshot = self._parse(path, snapshot_id, data)
        self._remember(snapshot_id, snapshot, version, data)
        return snapshot

    def _parse(self, path: str, snapshot_id: int, data: bytes) -> Snapshot:
        """The snapshot in ``data``, checked to be snapshot ``snapshot_id`` of a table."""
        parsed = PARSED_SNAPSHOTS.get(path, data)
        if parsed is not None:
            return parsed
        try:
            snapshot = snapshot_from_json(data)
            if snapshot.snapshot_id != snapshot_id:
                raise CorruptMetadata(f"it holds id {snapshot.snapshot_id}, not {snapshot_id}")
            require_manifest_lists(snapshot)
        except CorruptMetadata as err:
            raise corrupt_file(self.WHAT, path, err) from None
        PARSED_SNAPSHOTS.put(path, data, snapshot)
        return snapshot

    def _hit(self, snapshot_id: int, snapshot: Snapshot) -> Snapshot:
        with self._lock:
            if snapshot_id in self._cache:
                self._cache.move_to_end(snapshot_id)
        return snapshot

    def try_snapshot(self, snapshot_id: int, *, fresh: bool = False) -> Snapshot | None:
        """The snapshot, or None when it does not exist (e.g. expired meanwhile).

        A file that exists but is corrupt raises ``CorruptMetadata``: only a vanished
        snapshot may be skipped, never one that cannot be read.
        """
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
        """All snapshots in id order (ones deleted while reading are skipped, corrupt ones raise)."""
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

    def earliest_hint(self) -> int | None:
        """The id in ``EARLIEST`` as written (None if absent or unreadable); unchecked."""
        return self._read_hint(self.earliest_hint_path)

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

    def latest_snapshot(self, *, fresh: bool = False, known: int | None = None) -> Snapshot | None:
        """The newest snapshot; ``fresh`` (what a commit builds on) reads it from storage.

        The snapshot ``LATEST`` names is read straight away (its existence check is the read
        itself); only when the hint is stale, or that file has vanished, are ids listed.
        ``known``: an id the caller saw as the latest (the snapshot this process committed
        last), tried first and trusted exactly as ``LATEST`` is, which saves reading it.
        """
        if known is not None and known > 0 and not self.snapshot_exists(known + 1):
            snapshot = self.try_snapshot(known, fresh=fresh)
            if snapshot is not None:
                return snapshot
        hint = self._read_hint(self.latest_hint_path)
        if hint is not None and hint > 0 and not self.snapshot_exists(hint + 1):
            snapshot = self.try_snapshot(hint, fresh=fresh)
            if snapshot is not None:
                return snapshot
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

    def latest_snapshot_of_user(self, user: str, earliest_id: int | None = None) -> Snapshot | None:
        """The newest snapshot committed by ``user``, searched from the latest id down to
        ``earliest_id`` (default 1) and stopping at the first snapshot that no longer
        exists (expired): Java's ``SnapshotManager.latestSnapshotOfUser``."""
        latest = self.latest_snapshot_id()
        if latest is None:
            return None
        for snapshot_id in range(latest, max(earliest_id or 1, 1) - 1, -1):
            snapshot = self.try_snapshot(snapshot_id)
            if snapshot is None:
                logger.warning(
                    "Snapshot #%d is expired. The latest snapshot of current user(%s) is not "
                    "found.",
                    snapshot_id,
                    user,
                )
                return None
            if snapshot.commit_user == user:
                return snapshot
        return None

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
        try:
            created = self.file_io.write_no_clobber(path, data)
        except AtomicCreateUnsupported:
            raise
        except OSError as err:
            created = self._created_by_us(path, data, err)
        else:
            created = created or self._created_by_us(path, data, None)
        if not created:
            return False
        try:
            version = self.file_io.version(path)
        except OSError:  # gone already (expired, rolled back) or a store's transient error:
            pass  # only the cache misses it, the commit has happened
        else:
            self._remember(snapshot.snapshot_id, snapshot, version, data)
            PARSED_SNAPSHOTS.put(path, data, snapshot)
        try:
            self.write_latest_hint(snapshot.snapshot_id)
        except OSError as err:
            logger.warning(
                "Snapshot %d published but LATEST not updated: %s", snapshot.snapshot_id, err
            )
        return True

    def _created_by_us(self, path: str, data: bytes, error: OSError | None) -> bool:
        """Whether ``path`` holds ``data`` after a create that reported the key taken
        (``error`` None) or failed with ``error``: an object store's client retries a PUT
        whose answer was lost, and the retry then finds the first attempt's object. A
        snapshot's bytes are unique (commit user, time, manifest list names), so equal bytes
        are this commit's.

        Raises:
            OSError: ``error``, when the file is absent and the file system says a failed
                create stays failed (a local disk).
            CommitOutcomeUnknown: the create failed and the file cannot be read back: it
                may still appear, so the caller must keep everything it names.
        """
        try:
            found = self.file_io.read_bytes(path)
        except FileNotFoundError:
            found = None
        except OSError as read_error:
            if error is None:
                error = read_error
            found = None
        if found is not None:
            return found == data
        if error is None:  # taken, then gone already (expired, rolled back): not ours
            return False
        if self.file_io.failed_create_is_final:
            raise error  # not created, and it never will be
        raise CommitOutcomeUnknown(
            f"Cannot tell whether {path} was created ({error}): the commit's outcome is "
            "unknown and its files are kept"
        ) from error

    def write_latest_hint(self, snapshot_id: int) -> None:
        """Replace ``LATEST`` with the id (no newline), atomically as Java's ``HintFileUtils``:
        an in-place rewrite torn by a crash can leave a larger id (``100`` -> ``9`` gives
        ``900``), which Java's ``findLatest`` trusts when ``snapshot-901`` is absent."""
        self.file_io.overwrite_atomic(self.latest_hint_path, str(snapshot_id).encode())

    def write_earliest_hint(self, snapshot_id: int) -> None:
        self.file_io.overwrite_atomic(self.earliest_hint_path, str(snapshot_id).encode())

    def repair_earliest_snapshot(self, snapshot_id: int) -> int:
        """Point ``EARLIEST`` at ``snapshot_id``, the first of the unbroken run of snapshots
        that ends at the latest one; returns the previous earliest id (Paimon 2.0's
        ``SnapshotManager.repairEarliestSnapshot``, for a table left with a gap in its ids).

        Raises:
            InvalidArgument: an empty table, an id outside [earliest, latest], a missing
                snapshot between it and the latest, or a snapshot right before it (no gap).
        """
        previous = self.earliest_snapshot_id()
        latest = self.latest_snapshot_id()
        if previous is None or latest is None:
            raise InvalidArgument("Cannot repair earliest snapshot for an empty table.")
        if snapshot_id < previous:
            raise InvalidArgument(
                f"Snapshot {snapshot_id} must not be earlier than current earliest snapshot "
                f"{previous}."
            )
        if snapshot_id > latest:
            raise InvalidArgument(
                f"Snapshot {snapshot_id} must not be later than latest snapshot {latest}."
            )
        present = set(self.snapshot_ids_between(snapshot_id - 1, latest))
        for expected in range(snapshot_id, latest + 1):
            if expected not in present:
                raise InvalidArgument(f"Snapshot {expected} does not exist.")
        if snapshot_id != previous and self.snapshot_exists(snapshot_id - 1):
            raise InvalidArgument(
                f"Snapshot {snapshot_id} does not immediately follow a snapshot gap."
            )
        self.write_earliest_hint(snapshot_id)
        return previous

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

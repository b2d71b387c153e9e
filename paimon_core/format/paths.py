"""File names and directory layout of a Paimon table (paimon-format.md §5).

Partition directories follow Java's ``PartitionPathUtils`` and the legacy value rendering of
``InternalRowPartitionComputer`` (``partition.legacy-name=true``, the 1.x default): a data
file is found by the path Java computes, so every byte of the directory name matters.
"""

from __future__ import annotations

import datetime as dt
import math
import struct
import unicodedata
import uuid
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from paimon_core.exceptions import InvalidArgument
from paimon_core.format.names import DEFAULT_BRANCH, check_branch

SNAPSHOT_PREFIX = "snapshot-"
SCHEMA_PREFIX = "schema-"
TAG_PREFIX = "tag-"
CHANGELOG_PREFIX = "changelog-"
CONSUMER_PREFIX = "consumer-"
BRANCH_PREFIX = "branch-"
MANIFEST_PREFIX = "manifest-"
MANIFEST_LIST_PREFIX = "manifest-list-"
INDEX_MANIFEST_PREFIX = "index-manifest-"
INDEX_PREFIX = "index-"
STATISTICS_PREFIX = "stat-"
DATA_PREFIX = "data-"
BUCKET_PREFIX = "bucket-"
DEFAULT_PARTITION_NAME = "__DEFAULT_PARTITION__"

SNAPSHOT_DIR = "snapshot"
SCHEMA_DIR = "schema"
TAG_DIR = "tag"
MANIFEST_DIR = "manifest"
INDEX_DIR = "index"
STATISTICS_DIR = "statistics"
CHANGELOG_DIR = "changelog"
CONSUMER_DIR = "consumer"
BRANCH_DIR = "branch"
LATEST_HINT = "LATEST"
EARLIEST_HINT = "EARLIEST"

POSTPONE_BUCKET = -2
DB_SUFFIX = ".db"

# Java PartitionPathUtils.CHAR_TO_ESCAPE: ASCII controls, DEL and "#%'*/:=?\{}[]^.
_ESCAPED = frozenset([chr(c) for c in range(32)] + [chr(127), *"\"#%'*/:=?\\{}[]^"])
_EPOCH = dt.date(1970, 1, 1)
_UTC = dt.UTC


def join(*parts: str) -> str:
    """Join path parts with single slashes (paths are strings, local or URIs)."""
    out = parts[0].rstrip("/") if parts[0] != "/" else ""
    for part in parts[1:]:
        out = f"{out}/{part.strip('/')}"
    return out


def table_path(warehouse: str, database: str, table: str) -> str:
    """``<warehouse>/<db>.db/<table>``."""
    return f"{warehouse.rstrip('/')}/{database}{DB_SUFFIX}/{table}"


def table_name(path: str) -> str:
    """``db.t`` for a table at ``<warehouse>/<db>.db/<t>`` (``table_path``), else ``path``:
    how messages name a table known by its path only."""
    parent, _, table = path.rstrip("/").rpartition("/")
    database = parent.rpartition("/")[2]
    if database.endswith(DB_SUFFIX) and len(database) > len(DB_SUFFIX) and table:
        return f"{database[: -len(DB_SUFFIX)]}.{table}"
    return path


def normalize_branch(branch: str | None) -> str:
    """Paimon's ``BranchManager.normalizeBranch``: a missing or blank name is ``main``."""
    return DEFAULT_BRANCH if branch is None or not branch.strip() else branch


def is_main_branch(branch: str | None) -> bool:
    return normalize_branch(branch) == DEFAULT_BRANCH


def branch_path(table_root: str, branch: str | None) -> str:
    """Root of a branch: the table itself for ``main``, else ``branch/branch-<name>``
    (Paimon's ``BranchManager.branchPath``), never outside the table.

    Raises:
        InvalidBranchName: a name that is not one directory entry (``names.check_branch``).
    """
    if check_branch(branch) == DEFAULT_BRANCH:
        return table_root
    return f"{table_root.rstrip('/')}/{BRANCH_DIR}/{BRANCH_PREFIX}{branch}"


def escape_path_name(name: str) -> str:
    """Java ``escapePathName``: ``%XX`` (upper-case hex) for the characters in ``_ESCAPED``."""
    if not name:
        raise InvalidArgument(f"Path should not be null or empty: {name!r}")
    if not any(c in _ESCAPED for c in name):
        return name
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in name)


def _hex_code(two: str) -> int:
    # Java uses Integer.parseInt(s, 16), which also accepts a leading '+' ("%+1").
    digits = two[1:] if two[:1] == "+" else two
    if digits and all(c in "0123456789abcdefABCDEF" for c in digits):
        return int(digits, 16)
    return -1


def unescape_path_name(name: str) -> str:
    """Inverse of ``escape_path_name`` (Java ``unescapePathName``)."""
    if "%" not in name:
        return name
    out = []
    i, n = 0, len(name)
    while i < n:
        c = name[i]
        if c == "%" and i + 2 < n:
            code = _hex_code(name[i + 1 : i + 3])
            if code >= 0:
                out.append(chr(code))
                i += 3
                continue
        out.append(c)
        i += 1
    return "".join(out)


def _is_java_whitespace(c: str) -> bool:
    # Character.isWhitespace: Unicode space separators except the no-break ones, plus controls.
    if c in "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f":
        return True
    if c in "\u00a0\u2007\u202f":
        return False
    return unicodedata.category(c) in ("Zs", "Zl", "Zp")


def _is_blank(text: str) -> bool:
    return all(_is_java_whitespace(c) for c in text)


def _root_name(data_type: Any) -> str:
    root = getattr(data_type, "root", None)
    if root is None:
        return str(data_type).split("(", 1)[0].split()[0].upper()
    root = getattr(root, "value", root) if not isinstance(root, str) else root
    return str(root).upper()


def java_local_date_time(value: dt.datetime, nanos: int | None = None) -> str:
    """Java ``LocalDateTime.toString()``: ``2024-01-01T00:00``, seconds and fraction only
    when non-zero, the fraction in groups of 3 digits."""
    nano = value.microsecond * 1000 if nanos is None else nanos
    text = f"{value.year:04d}-{value.month:02d}-{value.day:02d}T{value.hour:02d}:{value.minute:02d}"
    if value.second or nano:
        text += f":{value.second:02d}"
        if nano:
            if nano % 1_000_000 == 0:
                text += f".{nano // 1_000_000:03d}"
            elif nano % 1000 == 0:
                text += f".{nano // 1000:06d}"
            else:
                text += f".{nano:09d}"
    return text


def _shortest_digits(value: float, single: bool) -> Decimal:
    if not single:
        return Decimal(repr(value))
    bits = struct.pack(">f", value)
    for precision in range(1, 10):
        text = f"{value:.{precision}g}"
        try:
            if struct.pack(">f", float(text)) == bits:
                return Decimal(text)
        except OverflowError:  # rounded past FLT_MAX
            continue
    return Decimal(repr(value))


def java_float_string(value: float, single: bool = False) -> str:
    """Java ``Double.toString`` / ``Float.toString`` (shortest digits, ``1.0E10`` form)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    if single:
        value = struct.unpack(">f", struct.pack(">f", value))[0]
    _, digit_tuple, exponent = _shortest_digits(abs(value), single).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    assert isinstance(exponent, int)
    sci = len("".join(map(str, digit_tuple))) - 1 + exponent
    prefix = "-" if value < 0 else ""
    if -3 <= sci < 7:
        if sci >= 0:
            whole = digits[: sci + 1].ljust(sci + 1, "0")
            frac = digits[sci + 1 :] or "0"
        else:
            whole, frac = "0", "0" * (-sci - 1) + digits
        return f"{prefix}{whole}.{frac}"
    return f"{prefix}{digits[0]}.{digits[1:] or '0'}E{sci}"


def partition_value_string(value: Any, data_type: Any) -> str | None:
    """A partition value as Java's legacy ``toString()`` of the internal value (None for null)."""
    if value is None:
        return None
    root = _root_name(data_type)
    if isinstance(value, bool):
        return "true" if value else "false"
    if root == "DATE":
        if isinstance(value, dt.datetime):
            value = value.date()
        if isinstance(value, dt.date):
            return str((value - _EPOCH).days)
        return str(value)
    if root.startswith("TIMESTAMP"):
        if isinstance(value, dt.datetime):
            if value.tzinfo is not None:
                value = value.astimezone(_UTC).replace(tzinfo=None)
            return java_local_date_time(value)
        return str(value)
    if root.startswith("TIME"):
        if isinstance(value, dt.time):
            ms = ((value.hour * 60 + value.minute) * 60 + value.second) * 1000
            return str(ms + value.microsecond // 1000)
        return str(value)
    if root == "DECIMAL" or isinstance(value, Decimal):
        dec = Decimal(value) if not isinstance(value, Decimal) else value
        scale = getattr(data_type, "scale", None)
        if isinstance(scale, int) and dec.is_finite():
            dec = dec.quantize(Decimal(1).scaleb(-scale))
        return format(dec, "f")
    if isinstance(value, float):
        return java_float_string(value, single=root == "FLOAT")
    if isinstance(value, (bytes, bytearray, memoryview)):
        # Java renders byte[] as an identity hash ("[B@1b6d3586"), which no one can match;
        # use hex so the path is at least stable.
        return bytes(value).hex()
    return str(value)


def partition_path(
    names: Sequence[str],
    values: Sequence[Any],
    types: Sequence[Any],
    default_name: str = DEFAULT_PARTITION_NAME,
) -> str:
    """``k1=v1/k2=v2`` in partition-key order, keys and values escaped.

    Null, empty and whitespace-only values become ``default_name``.
    """
    parts = []
    for name, value, data_type in zip(names, values, types):
        text = partition_value_string(value, data_type)
        if text is None or _is_blank(text):
            text = default_name
        parts.append(f"{escape_path_name(name)}={escape_path_name(text)}")
    return "/".join(parts)


def parse_partition_path(path: str) -> dict[str, str]:
    """``k1=v1/k2=v2`` -> ``{"k1": "v1", "k2": "v2"}`` (unescaped; non ``k=v`` parts skipped)."""
    spec: dict[str, str] = {}
    for part in path.strip("/").split("/"):
        key, sep, value = part.partition("=")
        if sep:
            spec[unescape_path_name(key)] = unescape_path_name(value)
    return spec


def bucket_dir_name(bucket: int) -> str:
    """``bucket-N``; postpone mode (``bucket=-2``) writes ``bucket-postpone``."""
    return f"{BUCKET_PREFIX}postpone" if bucket == POSTPONE_BUCKET else f"{BUCKET_PREFIX}{bucket}"


def new_file_name(prefix: str) -> str:
    """``<prefix><uuid4>-0``, e.g. a manifest or manifest-list name."""
    return f"{prefix}{uuid.uuid4()}-0"


def new_data_file_name(file_format: str = "parquet", prefix: str = DATA_PREFIX) -> str:
    """``data-<uuid4>-0.parquet``: a fresh uuid per file, as pypaimon does."""
    return f"{prefix}{uuid.uuid4()}-0.{file_format}"

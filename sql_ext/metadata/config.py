"""The Spark configuration a `paimon-sql` session would have, read without starting Spark.

Spark's launcher loads `spark-defaults.conf` from `SPARK_CONF_DIR` (else `$SPARK_HOME/conf`;
pip's pyspark is its own SPARK_HOME), keeps its `spark.*` keys, and `--conf` settings win over
them. The warehouse and the catalog options then come from that configuration exactly as the
SparkSession path takes them (`resolve_warehouse`, `resolve_catalog_options`).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "CATALOG_CONF_PREFIX",
    "CATALOG_NAME",
    "DEFAULT_WAREHOUSE",
    "WAREHOUSE_CONF",
    "parse_properties",
    "resolve_catalog_options",
    "resolve_warehouse",
    "session_conf",
    "spark_defaults",
]

CATALOG_NAME = "paimon"
CATALOG_CONF_PREFIX = f"spark.sql.catalog.{CATALOG_NAME}."
WAREHOUSE_CONF = f"{CATALOG_CONF_PREFIX}warehouse"
DEFAULT_WAREHOUSE = "warehouse"
DEFAULTS_FILE = "spark-defaults.conf"
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def resolve_warehouse(
    warehouse: str | None, conf: Mapping[str, str] | None = None, spark: Any = None
) -> str:
    """The warehouse argument, else `spark.sql.catalog.paimon.warehouse` (the `conf` given,
    then the session's), else `./warehouse`; made absolute, without a `file:` scheme."""
    path = warehouse or (conf or {}).get(WAREHOUSE_CONF)
    if not path and spark is not None:
        path = spark.conf.get(WAREHOUSE_CONF, None)
    path = path or DEFAULT_WAREHOUSE
    if path.startswith("file:"):
        path = "/" + path[len("file:") :].lstrip("/")
    if "://" not in path:
        path = os.path.abspath(os.path.expanduser(path))
    return path


def resolve_catalog_options(
    conf: Mapping[str, str] | None = None, spark: Any = None
) -> dict[str, str]:
    """Paimon's catalog options from `spark.sql.catalog.paimon.<option>` (the session's
    configuration, then the `conf` given, which wins), as Paimon's SparkCatalog takes them:
    `spark.sql.catalog.paimon.s3.endpoint` is the catalog option `s3.endpoint`. The
    warehouse is left out (`resolve_warehouse` owns it)."""
    options: dict[str, str] = {}
    sources: list[Mapping[str, str]] = [spark.conf.getAll] if spark is not None else []
    for source in [*sources, conf or {}]:
        for key, value in source.items():
            if key.startswith(CATALOG_CONF_PREFIX) and key != WAREHOUSE_CONF:
                options[key[len(CATALOG_CONF_PREFIX) :]] = value
    return options


def _logical_lines(text: str) -> Iterable[str]:
    """Java `Properties` lines: a line ending in an odd number of backslashes continues."""
    pending = ""
    for raw in text.splitlines():
        line = raw.lstrip() if pending else raw
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2:
            pending += line[:-1]
            continue
        yield pending + line
        pending = ""
    if pending:
        yield pending


def _unescape(text: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text):
            following = text[i + 1]
            if following == "u" and i + 6 <= len(text):
                try:
                    out.append(chr(int(text[i + 2 : i + 6], 16)))
                    i += 6
                    continue
                except ValueError:
                    pass
            out.append(_ESCAPES.get(following, following))
            i += 2
            continue
        out.append(char)
        i += 1
    return "".join(out)


def parse_properties(text: str) -> dict[str, str]:
    """A Java `.properties` text (`key value`, `key=value` or `key: value`; `#`/`!` comments)
    as Spark reads `spark-defaults.conf`: values trimmed."""
    properties: dict[str, str] = {}
    for line in _logical_lines(text):
        stripped = line.lstrip()
        if not stripped or stripped[0] in "#!":
            continue
        i = 0
        while i < len(stripped) and stripped[i] not in "=: \t\f":
            i += 2 if stripped[i] == "\\" else 1
        key = stripped[:i]
        rest = stripped[i:].lstrip(" \t\f")
        if rest[:1] in ("=", ":"):
            rest = rest[1:].lstrip(" \t\f")
        properties[_unescape(key)] = _unescape(rest).strip()
    return properties


def _conf_dir(environ: Mapping[str, str]) -> Path | None:
    if environ.get("SPARK_CONF_DIR"):
        return Path(environ["SPARK_CONF_DIR"])
    home = environ.get("SPARK_HOME")
    if not home:
        spec = importlib.util.find_spec("pyspark")  # locates the package, never imports it
        if spec is None or spec.origin is None:
            return None
        home = str(Path(spec.origin).parent)
    return Path(home) / "conf"


def spark_defaults(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The `spark.*` settings of the `spark-defaults.conf` Spark would load (none if absent)."""
    directory = _conf_dir(os.environ if environ is None else environ)
    if directory is None:
        return {}
    try:
        text = (directory / DEFAULTS_FILE).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    return {k: v for k, v in parse_properties(text).items() if k.startswith("spark.")}


def session_conf(
    conf: Iterable[tuple[str, str]] | Mapping[str, str],
    environ: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The settings a session started with `--conf conf` has: spark-defaults, then `conf`."""
    pairs = conf.items() if isinstance(conf, Mapping) else conf
    return {**spark_defaults(environ), **dict(pairs)}

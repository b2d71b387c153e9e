"""CREATE / DROP / DESCRIBE DATABASE of the Paimon catalog, read on tokens, as Paimon does them.

Spark's grammar, every spelling (`DATABASE`, `SCHEMA`, `NAMESPACE`; clauses in any order):

* `CREATE DATABASE [IF NOT EXISTS] db [COMMENT 'c'] [LOCATION 'l']
  [WITH DBPROPERTIES | PROPERTIES (k = v, ...)]`: Spark hands the comment, location and
  properties to `SparkCatalog.createNamespace`; Paimon's `FileSystemCatalog.createDatabaseImpl`
  (latest release) refuses a location ("Cannot specify location for a database when using
  fileSystem catalog.") and discards the rest with a warning (it "can't store database
  properties"), creating the database.
* `DROP DATABASE [IF EXISTS] db [RESTRICT | CASCADE]`.
* `DESCRIBE DATABASE [EXTENDED] db`: Spark's `DescribeNamespaceExec` over
  `loadNamespaceMetadata`, which the filesystem catalog leaves empty: rows `Catalog Name`,
  `Namespace Name` and, with EXTENDED, `Properties` (empty).

`sys` is Paimon's system database: it can be described, not created or dropped. Shared by
the Spark session and the in-process engine (no pyspark here).
"""

from __future__ import annotations

from procedures.base import Column, ProcedureResult
from sql_ext.errors import SqlError
from sql_ext.metadata.config import CATALOG_NAME
from sql_ext.syntax.databases import DatabaseStatement

__all__ = [
    "DESCRIBE_DATABASE",
    "LOCATION_REFUSED",
    "check_create",
    "describe_database",
    "paimon_database",
]

DESCRIBE_DATABASE = (Column("info_name", "STRING", False), Column("info_value", "STRING"))
LOCATION_REFUSED = "Cannot specify location for a database when using fileSystem catalog."


def check_create(statement: DatabaseStatement) -> None:
    """Paimon's filesystem catalog refuses a database location (and keeps no properties).

    Raises:
        SqlError: the statement names a LOCATION.
    """
    if statement.location is not None:
        raise SqlError(f"{statement.shown}: {LOCATION_REFUSED}")


def describe_database(catalog_name: str, database: str, extended: bool) -> ProcedureResult:
    """DESCRIBE DATABASE's rows for a database of Paimon's filesystem catalog."""
    rows: list[tuple[str, str | None]] = [
        ("Catalog Name", catalog_name),
        ("Namespace Name", database),
    ]
    if extended:
        rows.append(("Properties", ""))
    return ProcedureResult(DESCRIBE_DATABASE, rows)


def paimon_database(name: tuple[str, ...]) -> str | None:
    """`db` or `paimon.db` -> the database; None: another catalog's (Spark's).

    Raises:
        SqlError: more parts than a catalog and a database.
    """
    if len(name) == 1:
        return name[0]
    if len(name) == 2 and name[0].lower() == CATALOG_NAME:
        return name[1]
    if len(name) == 2:
        return None
    raise SqlError(f"Nested namespaces are not supported: {'.'.join(name)}")

"""The `sys` database: Paimon's global system tables as plain rows, for both SQL paths.

`sys.tables`, `sys.partitions`, `sys.all_table_options` and `sys.catalog_options`, with the
columns of Paimon's `AllTablesTable`, `AllPartitionsTable`, `AllTableOptionsTable` and
`CatalogOptionsTable` (`paimon-core/.../table/system`, master) and the rows
`CatalogUtils.createGlobalSystemTable` builds for the filesystem catalog:

* `tables`: one row per table of every database; `table_type` is the `type` option (default
  `table`), `owner` / `created_at` / ... come from the table's options (only REST catalogs set
  them), and `record_count`, `file_size_in_bytes`, `file_count`, `last_file_creation_time` are
  NULL: Paimon takes them from `Catalog.loadSnapshot`, which only catalogs with version
  management (REST) have.
* `partitions`: one row per partition of every partitioned table (the live files of its latest
  snapshot, every level): `partition_name` `k=v/k2=v2`, the counts, the newest file's
  creation time in epoch milliseconds, and `done` false (the filesystem catalog records none).
* `all_table_options`: every table's options, then its `path`.
* `catalog_options`: the catalog's options, the warehouse included; only with the catalog
  option `catalog-options-table.enabled` = true, otherwise the table does not exist (and
  SHOW TABLES IN sys does not list it), as in Paimon.

Only `sys` (exactly) is the system database, as Paimon's `SYSTEM_DATABASE_NAME.equals`; table
names are case-insensitive there. Paimon leaves row order open; here databases, tables and
partitions come sorted.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from paimon_core.exceptions import DatabaseNotExist, TableNotExist
from procedures.base import Column, ProcedureResult
from sql_ext.system_tables import PARTITIONS, system_table_rows

if TYPE_CHECKING:
    from paimon_core.catalog import FileSystemCatalog
    from paimon_core.table import FileStoreTable

__all__ = [
    "CATALOG_OPTIONS_TABLE_ENABLED",
    "SYSTEM_DATABASE",
    "global_table_columns",
    "global_table_names",
    "global_table_rows",
    "is_system_database",
]

SYSTEM_DATABASE = "sys"
CATALOG_OPTIONS_TABLE_ENABLED = "catalog-options-table.enabled"
WAREHOUSE = "warehouse"
SYSTEM_DATABASE_ERROR = "Can't do operation on system database."
"""Paimon's `ProcessSystemDatabaseException` (CREATE / DROP / ALTER DATABASE sys)."""

ALL_TABLES = (
    Column("database_name", "STRING"),
    Column("table_name", "STRING"),
    Column("table_type", "STRING"),
    Column("partitioned", "BOOLEAN"),
    Column("primary_key", "BOOLEAN"),
    Column("owner", "STRING"),
    Column("created_at", "BIGINT"),
    Column("created_by", "STRING"),
    Column("updated_at", "BIGINT"),
    Column("updated_by", "STRING"),
    Column("record_count", "BIGINT"),
    Column("file_size_in_bytes", "BIGINT"),
    Column("file_count", "BIGINT"),
    Column("last_file_creation_time", "BIGINT"),
)
ALL_PARTITIONS = (
    Column("database_name", "STRING"),
    Column("table_name", "STRING"),
    Column("partition_name", "STRING"),
    Column("record_count", "BIGINT"),
    Column("file_size_in_bytes", "BIGINT"),
    Column("file_count", "BIGINT"),
    Column("last_file_creation_time", "BIGINT"),
    Column("done", "BOOLEAN"),
)
ALL_TABLE_OPTIONS = (
    Column("database_name", "STRING"),
    Column("table_name", "STRING"),
    Column("key", "STRING"),
    Column("value", "STRING"),
)
CATALOG_OPTIONS = (Column("key", "STRING", False), Column("value", "STRING", False))
GLOBAL_SYSTEM_TABLES: dict[str, tuple[Column, ...]] = {
    "tables": ALL_TABLES,
    "partitions": ALL_PARTITIONS,
    "all_table_options": ALL_TABLE_OPTIONS,
    "catalog_options": CATALOG_OPTIONS,
}
"""Paimon's `SystemTableLoader.GLOBAL_SYSTEM_TABLES`, in its order."""

_PARTITION_COLUMNS = {name: i for i, (name, _, _) in enumerate(PARTITIONS)}
_UTC_EPOCH = dt.datetime(1970, 1, 1)


def is_system_database(name: str | None) -> bool:
    return name == SYSTEM_DATABASE


def _catalog_options_enabled(options: Mapping[str, str]) -> bool:
    return str(options.get(CATALOG_OPTIONS_TABLE_ENABLED, "false")).strip().lower() == "true"


def global_table_names(options: Mapping[str, str]) -> list[str]:
    """What SHOW TABLES IN sys lists, given the catalog options (`loadGlobalTableNames`)."""
    names = list(GLOBAL_SYSTEM_TABLES)
    if not _catalog_options_enabled(options):
        names.remove("catalog_options")
    return names


def global_table_columns(name: str, options: Mapping[str, str]) -> tuple[Column, ...] | None:
    """The columns of `sys.<name>`; None when there is no such table."""
    key = name.lower()
    return GLOBAL_SYSTEM_TABLES.get(key) if key in global_table_names(options) else None


def global_table_rows(catalog: FileSystemCatalog, name: str) -> ProcedureResult:
    """The rows of `sys.<name>` now.

    Raises:
        TableNotExist: no such global system table (or `catalog_options` not enabled).
    """
    columns = global_table_columns(name, catalog.options)
    if columns is None:
        raise TableNotExist(f"Table {SYSTEM_DATABASE}.{name} does not exist")
    key = name.lower()
    if key == "catalog_options":
        options = {WAREHOUSE: catalog.warehouse, **catalog.options}
        return ProcedureResult(columns, sorted(options.items()))
    rows: list[tuple[Any, ...]] = []
    for database, table_name, table in _all_tables(catalog):
        options = table.schema.options
        if key == "tables":
            rows.append(_table_row(database, table_name, table))
        elif key == "all_table_options":
            with_path = {**options, "path": options.get("path", table.path)}
            rows.extend((database, table_name, k, v) for k, v in with_path.items())
        elif table.schema.partition_keys:
            rows.extend((database, table_name, *p) for p in _partitions(table))
    return ProcedureResult(columns, rows)


def _all_tables(catalog: FileSystemCatalog) -> list[tuple[str, str, FileStoreTable]]:
    """Every table of every database (`CatalogUtils.listAllTables`); one dropped meanwhile is
    skipped, as Paimon skips it."""
    found = []
    for database in catalog.list_databases():
        try:
            names = catalog.list_tables(database)
        except DatabaseNotExist:
            continue
        for name in names:
            try:
                found.append((database, name, catalog.get_table(f"{database}.{name}")))
            except TableNotExist:
                continue
    return found


def _long(value: str | None) -> int | None:
    return None if value is None else int(value)


def _table_row(database: str, name: str, table: FileStoreTable) -> tuple[Any, ...]:
    options = table.schema.options
    return (
        database,
        name,
        options.get("type", "table"),
        bool(table.schema.partition_keys),
        bool(table.schema.primary_keys),
        options.get("owner"),
        _long(options.get("createdAt")),
        options.get("createdBy"),
        _long(options.get("updatedAt")),
        options.get("updatedBy"),
        None,
        None,
        None,
        None,
    )


def _partitions(table: FileStoreTable) -> list[tuple[Any, ...]]:
    """(name, records, bytes, files, newest file's creation millis, done) per partition,
    from the same aggregation as `t$partitions`."""
    at = _PARTITION_COLUMNS
    out = []
    for row in system_table_rows(table, "partitions"):
        out.append(
            (
                row[at["partition"]],
                row[at["record_count"]],
                row[at["file_size_in_bytes"]],
                row[at["file_count"]],
                _epoch_millis(row[at["last_update_time"]]),
                False,
            )
        )
    return out


def _epoch_millis(local: dt.datetime | None) -> int | None:
    """A file's creation time (local wall clock) as epoch millis in the local zone, as Java's
    `DataFileMeta.creationTimeEpochMillis` (`atZone(ZoneId.systemDefault())`)."""
    if local is None:
        return None
    raw = (local - _UTC_EPOCH) // dt.timedelta(milliseconds=1)
    offset = local.astimezone().utcoffset() or dt.timedelta(0)
    return raw - offset // dt.timedelta(milliseconds=1)

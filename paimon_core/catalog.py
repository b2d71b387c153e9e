"""A file-system catalog: databases are ``<warehouse>/<db>.db`` folders, tables live inside.

This is the layout of Paimon's ``FileSystemCatalog`` (Java and pypaimon), so a warehouse
written here is a warehouse Paimon can open, and the other way round.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pyarrow as pa

from paimon_core.exceptions import (
    DatabaseAlreadyExist,
    DatabaseNotExist,
    InvalidArgument,
    TableAlreadyExist,
    TableNotExist,
)
from paimon_core.format.names import check_branch, validate_database_name, validate_table_name
from paimon_core.format.schema import SchemaManager, TableSchema, schema_from_arrow
from paimon_core.io.fileio import FileIO
from paimon_core.io.load import get_file_io
from paimon_core.table import FileStoreTable

DB_SUFFIX = ".db"
DEFAULT_DATABASE = "default"
SYSTEM_TABLE_SPLITTER = "$"
BRANCH_TABLE_PREFIX = "branch_"


def split_identifier(identifier: str, default_database: str = DEFAULT_DATABASE) -> tuple[str, str]:
    """``'db.t'`` -> ``('db', 't')``; ``'t'`` -> ``(default_database, 't')``."""
    parts = identifier.split(".")
    if len(parts) == 1 and parts[0]:
        return default_database, parts[0]
    if len(parts) == 2 and all(parts):
        return parts[0], parts[1]
    raise InvalidArgument(
        f"Invalid table identifier '{identifier}': expected 'db.table' or 'table'"
    )


def _branch_of(name: str) -> tuple[str, str | None]:
    """``t$branch_b`` -> (``t``, ``b``); another ``$`` name (a system table) -> (``t``, None)."""
    table, suffix = name.split(SYSTEM_TABLE_SPLITTER, 1)
    if not suffix.startswith(BRANCH_TABLE_PREFIX) or SYSTEM_TABLE_SPLITTER in suffix:
        return table, None
    branch = suffix[len(BRANCH_TABLE_PREFIX) :]
    if not branch:
        raise InvalidArgument(f"Invalid table name '{name}': empty branch name")
    check_branch(branch)
    return table, branch


def _check_not_branch(identifier: str, method: str) -> None:
    """Paimon's ``CatalogUtils.checkNotBranch``: tables are created, renamed and dropped on
    the default branch only."""
    _, table = split_identifier(identifier)
    if SYSTEM_TABLE_SPLITTER in table and _branch_of(table)[1] is not None:
        raise InvalidArgument(
            f"Cannot '{method}' for branch table '{identifier}', please modify the table with "
            "the default branch."
        )


class FileSystemCatalog:
    """Databases and tables under one warehouse path (local or a URI).

    ``options`` are Paimon's catalog options; the file-system ones (``s3.endpoint``,
    ``s3.access-key``, ...) configure the one ``FileIO`` that every table of the catalog uses.
    """

    def __init__(
        self,
        warehouse: str,
        file_io: FileIO | None = None,
        options: Mapping[str, str] | None = None,
    ) -> None:
        self.warehouse = warehouse.rstrip("/") or "/"
        self.options: dict[str, str] = dict(options or {})
        self.file_io = file_io or get_file_io(self.warehouse, self.options)

    def database_path(self, database: str) -> str:
        """``<warehouse>/<database>.db``, never outside the warehouse.

        Raises:
            InvalidArgument: a name that is not one directory entry
                (``names.validate_database_name``).
        """
        validate_database_name(database)
        return f"{self.warehouse}/{database}{DB_SUFFIX}"

    def table_path(self, identifier: str) -> str:
        """``<warehouse>/<db>.db/<table>`` of ``db.table`` (or ``table``), never outside the
        database directory.

        Raises:
            InvalidArgument: a malformed identifier, or a name that is not one directory
                entry (``names.validate_table_name``).
        """
        database, table = split_identifier(identifier)
        validate_table_name(table)
        return f"{self.database_path(database)}/{table}"

    def list_databases(self) -> list[str]:
        return sorted(
            s.name[: -len(DB_SUFFIX)]
            for s in self.file_io.list_status(self.warehouse)
            if s.is_dir and s.name.endswith(DB_SUFFIX)
        )

    def database_exists(self, database: str) -> bool:
        return self.file_io.exists(self.database_path(database))

    def create_database(self, database: str, ignore_if_exists: bool = False) -> None:
        validate_database_name(database, new=True)
        if self.database_exists(database):
            if ignore_if_exists:
                return
            raise DatabaseAlreadyExist(f"Database {database} already exists")
        self.file_io.mkdirs(self.database_path(database))

    def drop_database(
        self, database: str, ignore_if_not_exists: bool = False, cascade: bool = False
    ) -> None:
        if not self.database_exists(database):
            if ignore_if_not_exists:
                return
            raise DatabaseNotExist(f"Database {database} does not exist")
        if self.list_tables(database) and not cascade:
            raise InvalidArgument(f"Database {database} is not empty")
        self.file_io.delete_dir(self.database_path(database))

    def list_tables(self, database: str) -> list[str]:
        if not self.database_exists(database):
            raise DatabaseNotExist(f"Database {database} does not exist")
        db_path = self.database_path(database)
        return sorted(
            s.name
            for s in self.file_io.list_status(db_path)
            if s.is_dir and SchemaManager(self.file_io, s.path).list_ids()
        )

    def table_exists(self, identifier: str) -> bool:
        """Whether ``db.t`` (or its branch ``db.t$branch_<name>``) exists; system tables
        are not tables here."""
        database, table = split_identifier(identifier)
        branch = None
        if SYSTEM_TABLE_SPLITTER in table:
            table, branch = _branch_of(table)
            if branch is None:
                return False
        path = self.table_path(f"{database}.{table}")
        return bool(SchemaManager(self.file_io, path, branch).list_ids())

    def create_table(
        self,
        identifier: str,
        schema: TableSchema | pa.Schema,
        *,
        partition_keys: Sequence[str] = (),
        primary_keys: Sequence[str] = (),
        options: Mapping[str, str] | None = None,
        comment: str | None = None,
        ignore_if_exists: bool = False,
    ) -> FileStoreTable:
        """Create a table from a ``TableSchema`` or a pyarrow schema with keys and options."""
        _check_not_branch(identifier, "createTable")
        database, table = split_identifier(identifier)
        validate_table_name(table, new=True)
        if not self.database_exists(database):
            raise DatabaseNotExist(f"Database {database} does not exist")
        if self.table_exists(identifier):
            if ignore_if_exists:
                return self.get_table(identifier)
            raise TableAlreadyExist(f"Table {database}.{table} already exists")
        if isinstance(schema, pa.Schema):
            schema = schema_from_arrow(
                schema,
                partition_keys=tuple(partition_keys),
                primary_keys=tuple(primary_keys),
                options=dict(options or {}),
                comment=comment,
            )
        path = self.table_path(identifier)
        if not SchemaManager(self.file_io, path).commit(schema):
            raise TableAlreadyExist(f"Table {database}.{table} already exists")
        return FileStoreTable(self.file_io, path, schema, f"{database}.{table}")

    def get_table(self, identifier: str, branch: str | None = None) -> FileStoreTable:
        """The table ``db.t``, or its branch: ``branch`` given or ``db.t$branch_<name>``
        (Paimon's ``Identifier``, whose ``branch_`` prefix is case-sensitive).

        Raises:
            TableNotExist: no such table, or no such branch of it.
            InvalidArgument: a system table (``t$snapshots``), served by the SQL layer.
        """
        database, table = split_identifier(identifier)
        if SYSTEM_TABLE_SPLITTER in table:
            table, named = _branch_of(table)
            if named is None:
                raise InvalidArgument(
                    f"'{identifier}' is a system table; system tables are served by the SQL layer"
                )
            if branch is not None:
                raise InvalidArgument(f"'{identifier}' already names a branch")
            branch = named
        path = self.table_path(f"{database}.{table}")
        return FileStoreTable.load(path, f"{database}.{table}", self.file_io, branch)

    def rename_table(self, from_identifier: str, to_identifier: str) -> None:
        """Move the table directory, as Java's ``AbstractCatalog.renameTable`` with the file
        system catalog's ``renameTableImpl`` (the target may be in another database).

        Raises:
            TableNotExist: the source table does not exist.
            TableAlreadyExist: a table of the target name exists.
            DatabaseNotExist: the target database does not exist.
            InvalidArgument: a name is not a valid table name or names a system table.
        """
        _check_not_branch(from_identifier, "renameTable")
        _check_not_branch(to_identifier, "renameTable")
        source_db, source = split_identifier(from_identifier)
        target_db, target = split_identifier(to_identifier)
        for name in (source, target):
            if SYSTEM_TABLE_SPLITTER in name:
                raise InvalidArgument(f"Cannot rename system table '{name}'")
        validate_table_name(target, new=True)
        if not self.table_exists(from_identifier):
            raise TableNotExist(f"Table {source_db}.{source} does not exist")
        if self.table_exists(to_identifier):
            raise TableAlreadyExist(f"Table {target_db}.{target} already exists")
        if not self.database_exists(target_db):
            raise DatabaseNotExist(f"Database {target_db} does not exist")
        try:
            self.file_io.rename(self.table_path(from_identifier), self.table_path(to_identifier))
        except FileExistsError:
            raise TableAlreadyExist(
                f"Cannot rename {source_db}.{source} to {target_db}.{target}: "
                f"{self.table_path(to_identifier)} exists"
            ) from None

    def drop_table(self, identifier: str, ignore_if_not_exists: bool = False) -> None:
        _check_not_branch(identifier, "dropTable")
        if not self.table_exists(identifier):
            if ignore_if_not_exists:
                return
            database, table = split_identifier(identifier)
            raise TableNotExist(f"Table {database}.{table} does not exist")
        self.file_io.delete_dir(self.table_path(identifier))

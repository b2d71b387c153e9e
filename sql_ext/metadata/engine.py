"""`MetadataEngine`: the statements `paimon-sql` answers in its own process, without Spark.

`run(text)` returns the result of a statement it answers exactly as `PaimonSession` would
(same columns, values and errors), or `ToSpark` before doing anything when Spark must run it.
Answered here: `CALL sys.*`, tag DDL and `SHOW TAGS`, `SHOW DATABASES / TABLES / CURRENT
NAMESPACE`, `SHOW CREATE TABLE / COLUMNS / PARTITIONS / TBLPROPERTIES / TABLE EXTENDED`,
`USE`, `DESCRIBE [TABLE] [EXTENDED | FORMATTED]` of a Paimon table, `DESCRIBE [TABLE]` of a
system table, `DESCRIBE DATABASE`, and the `SELECT`s over `$snapshots`, `$tags`, `$schemas`,
`$options`, `$branches` and the global `sys` tables that `sql_ext.metadata.query` compiles. Settings are the ones Spark would start with (`sql_ext.metadata.config`): the
session time zone, `spark.paimon.*` dynamic options, the catalog options.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from paimon_core.catalog import DEFAULT_DATABASE, FileSystemCatalog
from paimon_core.exceptions import DatabaseNotExist
from paimon_core.operations.time_travel import travel_table
from procedures import ProcedureResult, call_procedure
from procedures.base import CallContext, Column
from sql_ext.alter_syntax import is_alter
from sql_ext.dynamic_options import PREFIX, with_dynamic_options
from sql_ext.errors import SqlError
from sql_ext.global_system_tables import (
    global_table_columns,
    global_table_rows,
    is_system_database,
)
from sql_ext.metadata.config import (
    CATALOG_NAME,
    resolve_catalog_options,
    resolve_warehouse,
)
from sql_ext.metadata.databases import (
    DatabaseStatement,
    describe_database,
    paimon_database,
    parse_database_statement,
)
from sql_ext.metadata.describe import describe_system_table
from sql_ext.metadata.query import compile_select
from sql_ext.metadata.result import NO_RESULT, Rows, ToSpark
from sql_ext.metadata.show import show_catalog
from sql_ext.metadata.table_info import describe_statement
from sql_ext.parse import (
    CallStatement,
    QueryStatement,
    Statement,
    TableRef,
    code_of,
    parse_statement,
    table_nodes,
)
from sql_ext.system_tables import SYSTEM_TABLES, system_table_rows
from sql_ext.tag_ddl import is_tag_ddl, parse_tag_ddl, run_tag_statement

if TYPE_CHECKING:
    from paimon_core.table import FileStoreTable

__all__ = ["QUERIED_SYSTEM_TABLES", "MetadataEngine", "Rows", "ToSpark"]

SPARK_PROCEDURES = frozenset(
    {"compact", "compact_database", "copy", "rescale", "rewrite_file_index"}
)
"""Procedures that read, rewrite or copy data files: handed to Spark (`ToSpark`), whose executors
do the work (the driver only plans and commits)."""
QUERIED_SYSTEM_TABLES = frozenset({"snapshots", "tags", "schemas", "options", "branches"})
TIME_ZONE_CONF = "spark.sql.session.timeZone"
_DATABASE_KINDS = frozenset({"DATABASE", "SCHEMA", "NAMESPACE"})
_EXPLAIN = re.compile(r"\s*EXPLAIN\b", re.IGNORECASE)
QUERY_DEFAULTS = {"spark.sql.casesensitive": "false", "spark.sql.orderbyordinal": "true"}
"""Settings the SELECT evaluator assumes; set otherwise, Spark answers the queries."""


def run_call(
    statement: CallStatement,
    catalog: FileSystemCatalog,
    current_database: str,
    time_zone: str | None,
    table_hook: Callable[[FileStoreTable, str, str], FileStoreTable],
    run_tasks: Callable[[Callable[[Any], Any], Sequence[Any]], list[Any]] | None = None,
) -> ProcedureResult:
    """``CALL [paimon.]sys.<procedure>(...)``: the same rows whether Spark runs or not;
    ``run_tasks`` runs a procedure's data work (Spark tasks), else in process."""
    if statement.catalog and statement.catalog.lower() != CATALOG_NAME:
        raise SqlError(f"Catalog {statement.catalog} does not support procedures")
    return call_procedure(
        statement.procedure,
        statement.args or None,
        statement.positional or None,
        catalog=catalog,
        current_database=current_database,
        time_zone=time_zone,
        catalog_name=CATALOG_NAME,
        table_hook=table_hook,
        run_tasks=run_tasks,
    )


def run_tag_ddl(
    text: str,
    catalog: FileSystemCatalog,
    current_database: str,
    table_hook: Callable[[FileStoreTable, str, str], FileStoreTable],
) -> ProcedureResult:
    """``ALTER TABLE ... CREATE|REPLACE|DELETE|RENAME TAG`` or ``SHOW TAGS``, run as the
    procedure it stands for, whether Spark runs or not."""
    statement = parse_tag_ddl(text)
    procedure = "show_tags" if statement.action == "show" else f"{statement.action}_tag"
    context = CallContext(
        catalog, current_database, procedure, catalog_name=CATALOG_NAME, table_hook=table_hook
    )
    return run_tag_statement(statement, context=context)


class MetadataEngine:
    """Answers metadata statements over one warehouse, holding the current database."""

    def __init__(
        self,
        warehouse: str | None = None,
        conf: Mapping[str, str] | None = None,
    ) -> None:
        """`warehouse` (the `--warehouse` argument) and `conf` (the session's settings:
        spark-defaults and `--conf`) resolve as `PaimonSession` resolves them."""
        self.conf = dict(conf or {})
        self.warehouse = resolve_warehouse(warehouse, self.conf)
        self.catalog = FileSystemCatalog(self.warehouse, options=resolve_catalog_options(self.conf))
        self.current_database = DEFAULT_DATABASE
        self._default_ready = False
        self._time_zone = self.conf.get(TIME_ZONE_CONF)
        self._dynamic = {k: v for k, v in self.conf.items() if k.startswith(PREFIX)}

    # ------------------------------------------------------------------------ public

    def run(self, text: str) -> Rows | ToSpark:
        """The result of one statement, or `ToSpark` (nothing done) when Spark must run it.

        Raises the errors `PaimonSession` raises for the statement.
        """
        text = code_of(text)
        if "${" in text or _EXPLAIN.match(text):
            return ToSpark()  # variable substitution and EXPLAIN are Spark's
        if is_tag_ddl(text):
            return self._tag_ddl(text)
        if is_alter(text):
            return ToSpark()  # read once, by PaimonSession (sql_ext.alter_syntax)
        database_statement = parse_database_statement(text)
        if database_statement is not None:
            return self._database_statement(database_statement)
        statement = parse_statement(text)
        answered = self._answer(statement)
        return ToSpark(statement) if answered is None else answered

    def _answer(self, statement: Statement) -> Rows | None:
        if isinstance(statement, CallStatement):
            if statement.procedure in SPARK_PROCEDURES:
                return None  # data work: Spark's executors run it
            return self._call(statement)
        tree = statement.tree
        if isinstance(tree, exp.Command):
            rest = tree.expression
            rest = rest if isinstance(rest, str) else rest.name
            if tree.name.upper() != "SHOW":
                return None
            shown = show_catalog(rest, self._paimon, self.current_database, self._show_load)
            return None if shown is None else Rows.of(shown)
        if isinstance(tree, exp.Use):
            return self._use(tree)
        if isinstance(tree, exp.Describe):
            return self._describe(statement, tree)
        if isinstance(tree, exp.Select):
            return self._select(statement, tree)
        return None

    # -------------------------------------------------------------------- statements

    def _paimon(self) -> FileSystemCatalog:
        """The catalog, its default database created on first use (as Paimon's catalog)."""
        if not self._default_ready:
            self.catalog.create_database(DEFAULT_DATABASE, ignore_if_exists=True)
            self._default_ready = True
        return self.catalog

    def _procedure_table(self, table: FileStoreTable, database: str, name: str) -> FileStoreTable:
        return with_dynamic_options(
            table, self._dynamic, CATALOG_NAME, database, name, time_travel=False
        )

    def _load(
        self, database: str, name: str, scoped_as: str, branch: str | None = None
    ) -> FileStoreTable:
        table = self.catalog.get_table(f"{database}.{name}", branch)
        return with_dynamic_options(table, self._dynamic, CATALOG_NAME, database, scoped_as)

    def _load_ref(self, database: str, ref: TableRef) -> FileStoreTable:
        """The table (or branch) of a `t[$branch_b]$sys` name."""
        scoped = ref.table if ref.branch is None else f"{ref.table}$branch_{ref.branch}"
        return self._load(database, ref.table, f"{scoped}${ref.system_table}", ref.branch)

    def _call(self, statement: CallStatement) -> Rows:
        return Rows.of(
            run_call(
                statement,
                self._paimon(),
                self.current_database,
                self._time_zone,
                self._procedure_table,
            )
        )

    def _tag_ddl(self, text: str) -> Rows:
        return Rows.of(
            run_tag_ddl(text, self._paimon(), self.current_database, self._procedure_table)
        )

    def _use(self, tree: exp.Use) -> Rows | None:
        target = tree.this
        if not isinstance(target, exp.Table) or tree.args.get("kind"):
            return None
        if not target.db and target.name.lower() == CATALOG_NAME:
            self._paimon()
            self.current_database = DEFAULT_DATABASE
            return NO_RESULT
        if target.catalog:
            return None  # Spark's error for nested namespaces
        if target.db and target.db.lower() != CATALOG_NAME:
            return None
        if not is_system_database(target.name) and not self._paimon().database_exists(target.name):
            raise DatabaseNotExist(f"Database {target.name} does not exist")
        self.current_database = target.name
        return NO_RESULT

    def _database(self, table: exp.Table) -> str | None:
        """The Paimon database of a table name; None: another catalog's (Spark's)."""
        if table.catalog and table.catalog.lower() != CATALOG_NAME:
            return None
        return table.db or self.current_database

    def _database_statement(self, statement: DatabaseStatement) -> Rows | ToSpark:
        """DESCRIBE DATABASE of the Paimon catalog; CREATE / DROP DATABASE go to Spark."""
        database = paimon_database(statement.name)
        if statement.action != "describe" or database is None:
            return ToSpark()
        if not is_system_database(database) and not self._paimon().database_exists(database):
            raise DatabaseNotExist(f"Database {database} does not exist")
        return Rows.of(describe_database(CATALOG_NAME, database, statement.extended))

    def _describe(self, statement: QueryStatement, tree: exp.Describe) -> Rows | None:
        table = tree.this
        if str(tree.args.get("kind") or "TABLE").upper() != "TABLE":
            return None
        if not isinstance(table, exp.Table) or not isinstance(table.this, exp.Identifier):
            return None
        if any(v for k, v in table.args.items() if k not in ("this", "db", "catalog")):
            return None
        database = self._database(table)
        if database is None:
            return None
        refs = statement.paimon_tables
        if refs:  # a `$` name
            extra = {k for k, v in tree.args.items() if v and k not in ("this", "kind")}
            (ref,) = refs
            if extra or ref.version is not None or ref.timestamp is not None:
                return None
            columns = SYSTEM_TABLES.get((ref.system_table or "").lower())
            if columns is None:
                return None
            self._load_ref(database, ref)
            return Rows.of(describe_system_table(columns))
        if is_system_database(database):
            global_columns = global_table_columns(table.name, self.catalog.options)
            if global_columns is None:
                return None
            return Rows.of(describe_system_table(_triples(global_columns)))
        if not self._exists(database, table.name):
            return None
        moved, _ = travel_table(self._load(database, table.name, table.name))
        name = f"{database}.{table.name}"
        return Rows.of(describe_statement(tree, moved, name, statement.text))

    def _show_load(self, database: str, name: str) -> FileStoreTable | None:
        if not self._exists(database, name):
            return None
        return self._load(database, name, name)

    def _exists(self, database: str, name: str) -> bool:
        try:
            return self.catalog.table_exists(f"{database}.{name}")
        except Exception:  # an invalid name is no Paimon table: Spark says what it is
            return False

    def _query_semantics_are_default(self) -> bool:
        settings = {k.lower(): v.strip().lower() for k, v in self.conf.items()}
        return all(settings.get(k, v) == v for k, v in QUERY_DEFAULTS.items())

    def _select(self, statement: QueryStatement, tree: exp.Select) -> Rows | None:
        if not self._query_semantics_are_default():
            return None
        nodes = list(table_nodes(tree))
        refs = statement.paimon_tables
        if len(nodes) == 1 and not refs:
            return self._select_global(tree, nodes[0])
        if len(nodes) != 1 or len(refs) != 1 or refs[0].node is not nodes[0]:
            return None
        ref = refs[0]
        system = (ref.system_table or "").lower()
        if system not in QUERIED_SYSTEM_TABLES:
            return None
        if ref.version is not None or ref.timestamp is not None:
            return None
        database = self._database(ref.node)
        if database is None:
            return None
        columns = SYSTEM_TABLES[system]
        compiled = compile_select(tree, columns, ref.node)
        if compiled is None:
            return None
        table = self._load_ref(database, ref)
        rows = system_table_rows(table, system, snapshot_id=None, time_zone=self._time_zone)
        return Rows(list(compiled.columns), compiled.rows(rows))

    def _select_global(self, tree: exp.Select, node: exp.Table) -> Rows | None:
        """A SELECT over one global system table (`sys.tables`, ...)."""
        database = self._database(node)
        if not is_system_database(database) or not isinstance(node.this, exp.Identifier):
            return None
        columns = global_table_columns(node.name, self.catalog.options)
        if columns is None:
            return None
        compiled = compile_select(tree, _triples(columns), node)
        if compiled is None:
            return None
        result = global_table_rows(self._paimon(), node.name)
        return Rows(list(compiled.columns), compiled.rows(result.rows))


def _triples(columns: tuple[Column, ...]) -> tuple[tuple[str, str, bool], ...]:
    return tuple((c.name, c.type, c.nullable) for c in columns)

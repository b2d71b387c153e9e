"""`StatementContext`: what every statement family needs besides its statement, whether Spark
runs or not: the catalog, the current database, the `spark.paimon.*` dynamic options, the
session time zone and Paimon's name resolution. It generalizes `procedures.CallContext` (which
`call_context` builds from it) to every statement; `PaimonSession` and the in-process engine
(`sql_ext.metadata.engine`) each hold one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from sqlglot import exp

from paimon_core.catalog import DEFAULT_DATABASE, FileSystemCatalog
from paimon_core.exceptions import PaimonError
from procedures.base import CallContext, Column
from sql_ext.dynamic_options import with_dynamic_options
from sql_ext.errors import SqlError
from sql_ext.global_system_tables import global_table_columns, is_system_database
from sql_ext.metadata.config import CATALOG_NAME
from sql_ext.syntax.dialect import quote_identifier

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from paimon_core.table import FileStoreTable
    from procedures.base import ProcedureResult
    from sql_ext.errors import Rewrite
    from sql_ext.syntax.parse import Fragment
    from sql_ext.syntax.statements import QueryStatement, TableRef

__all__ = [
    "Session",
    "StatementContext",
    "column_triples",
    "database_name",
    "has_paimon_syntax",
    "is_branch_name",
    "is_cte",
    "table_node",
]


def is_branch_name(name: str) -> bool:
    """`t$branch_b`: a table's branch, which reads and writes as a table (not `t$branch_b$x`)."""
    _, _, rest = name.partition("$")
    return rest.startswith("branch_") and len(rest) > 7 and "$" not in rest


def has_paimon_syntax(table: exp.Table) -> bool:
    """Time travel or a `$` name: whatever it names can only be a Paimon table."""
    return table.args.get("version") is not None or "$" in table.name


def is_cte(table: exp.Table) -> bool:
    """Whether an unqualified name refers to a CTE visible where it is used."""
    if table.args.get("db") or table.args.get("catalog"):
        return False
    name = table.name.lower()
    node: exp.Expr = table
    parent = table.parent
    while parent is not None:
        if isinstance(parent, exp.With):
            # Inside a CTE's definition: the earlier CTEs (and itself when recursive).
            ctes = parent.expressions
            index = next((i for i, cte in enumerate(ctes) if cte is node), len(ctes))
            index += 1 if parent.args.get("recursive") else 0
            if name in (cte.alias_or_name.lower() for cte in ctes[:index]):
                return True
        else:
            with_ = parent.args.get("with_") if "with_" in parent.arg_types else None
            if isinstance(with_, exp.With) and with_ is not node:
                if name in (cte.alias_or_name.lower() for cte in with_.expressions):
                    return True
        node, parent = parent, parent.parent
    return False


def column_triples(columns: Sequence[Column]) -> tuple[tuple[str, str, bool], ...]:
    """`(name, type, nullable)` of each column, as `describe_system_table` takes them."""
    return tuple((c.name, c.type, c.nullable) for c in columns)


def table_node(parts: list[str]) -> exp.Table:
    """`[catalog.][db.]name` as a table node."""
    names = [exp.to_identifier(p) for p in parts]
    catalog, db = ([None] * (3 - len(names)) + names)[:2]
    return exp.Table(this=names[-1], db=db, catalog=catalog)


class StatementContext:
    """The catalog and session settings statements run with; `confs()` gives the
    `spark.paimon.*` settings (with their keys' original case where known) and `time_zone()`
    the session time zone, both read when a statement asks (Spark's can change)."""

    def __init__(
        self,
        catalog: FileSystemCatalog,
        confs: Callable[[], Mapping[str, Any]],
        time_zone: Callable[[], str | None],
        settings: Mapping[str, str] | None = None,
        *,
        is_temp_view: Callable[[str], bool] = lambda name: False,
        spark_table_exists: Callable[[str], bool] = lambda name: False,
    ) -> None:
        """`settings`: the configuration Spark would start with, where no Spark runs (the
        in-process engine answers only when they keep Spark's defaults); `is_temp_view(name)`
        and `spark_table_exists(quoted name)` ask Spark's session catalog, where Spark runs."""
        self.catalog = catalog
        self.is_temp_view = is_temp_view
        self.spark_table_exists = spark_table_exists
        self.settings = dict(settings or {})
        self.current_database: str = DEFAULT_DATABASE
        self.confs = confs
        self.time_zone = time_zone
        self._default_ready = False

    def paimon(self) -> FileSystemCatalog:
        """The catalog, with its default database created on first use as Paimon's Spark
        catalog does when it starts."""
        if not self._default_ready:
            self.catalog.create_database(DEFAULT_DATABASE, ignore_if_exists=True)
            self._default_ready = True
        return self.catalog

    def table_exists(self, database: str, name: str) -> bool:
        """Whether `database.name` is a Paimon table (an invalid name is none)."""
        try:
            return self.catalog.table_exists(f"{database}.{name}")
        except PaimonError:
            return False

    def has_table(self, database: str, name: str) -> bool:
        """Whether `database.name` is a Paimon table; any failure (an invalid name) is
        none, so that Spark says what the name is."""
        try:
            return self.catalog.table_exists(f"{database}.{name}")
        except Exception:
            return False

    def with_dynamic_options(
        self, table: FileStoreTable, database: str, name: str, *, writes: bool = False
    ) -> FileStoreTable:
        """`table` with the session's dynamic options on top (`name`: the name table-scoped
        settings use); time travel options only for reads."""
        return with_dynamic_options(
            table, self.confs(), CATALOG_NAME, database, name, time_travel=not writes
        )

    def load(
        self,
        database: str,
        name: str,
        *,
        scoped_as: str | None = None,
        writes: bool = False,
        branch: str | None = None,
    ) -> FileStoreTable:
        """The table (its `branch`, or the branch a `t$branch_b` name says) with the
        session's `spark.paimon.*` dynamic options on top; `scoped_as` is the name
        table-scoped settings must use (`t$files` for a system table)."""
        table = self.catalog.get_table(f"{database}.{name}", branch)
        return self.with_dynamic_options(table, database, scoped_as or name, writes=writes)

    def load_ref(self, database: str, ref: TableRef) -> FileStoreTable:
        """The table (or branch) of a `t[$branch_b]$sys` name."""
        scoped = ref.table if ref.branch is None else f"{ref.table}$branch_{ref.branch}"
        return self.load(
            database, ref.table, scoped_as=f"{scoped}${ref.system_table}", branch=ref.branch
        )

    def procedure_table(self, table: FileStoreTable, database: str, name: str) -> FileStoreTable:
        """A table a CALL or tag statement works on, with the session's dynamic options
        (`snapshot.num-retained.*` for expiry, ...); they manage the latest state."""
        return self.with_dynamic_options(table, database, name, writes=True)

    def call_context(self, procedure: str, run_tasks: Any = None) -> CallContext:
        """The `CallContext` of a procedure run in this context."""
        return CallContext(
            self.paimon(),
            self.current_database,
            procedure,
            catalog_name=CATALOG_NAME,
            table_hook=self.procedure_table,
            run_tasks=run_tasks,
        )

    def paimon_database(self, table: exp.Table) -> str:
        """The database of a name with Paimon syntax ($ names, time travel)."""
        if table.catalog and table.catalog.lower() != CATALOG_NAME:
            raise SqlError(
                f"{table.sql(dialect='spark')}: system tables and time travel need a Paimon "
                f"table, '{table.catalog}' is not the Paimon catalog"
            )
        return table.db or self.current_database

    def resolve(self, table: exp.Table) -> tuple[str, str] | None:
        """`(database, table)` when a plain name is a Paimon table, None when it is Spark's
        (a temporary view of that name hides the table, as in Spark)."""
        catalog, database, name = table.catalog, table.db, table.name
        if catalog:
            if catalog.lower() == CATALOG_NAME:
                return database or self.current_database, name
            return None
        if "$" in name:
            return None  # Paimon syntax (`sql_ext.syntax.parse.TableRef`), never a plain name
        resolved = database or self.current_database
        if is_system_database(resolved):
            if global_table_columns(name, self.catalog.options) is None:
                return None
        elif not self.table_exists(resolved, name):
            return None
        if not database and self.is_temp_view(name):
            return None
        return resolved, name

    def target(self, table: exp.Table, *, must_exist: bool = True) -> tuple[str, str] | None:
        """The Paimon table a statement writes to; None leaves the statement to Spark."""
        catalog, database, name = table.catalog, table.db, table.name
        if catalog and catalog.lower() != CATALOG_NAME:
            return None
        resolved = database or self.current_database
        if is_branch_name(name) and not is_system_database(resolved):
            return resolved, name  # only a Paimon table's branch: loading it checks it
        if "$" in name or is_system_database(resolved):
            raise SqlError(f"Cannot write to {name}: system tables are read-only")
        if not catalog and must_exist:
            if not database and self.is_temp_view(name):
                return None
            if not self.table_exists(resolved, name) and self.spark_table_exists(
                ".".join(quote_identifier(p) for p in (database, name) if p)
            ):
                return None
        return resolved, name

    def database_of(self, table: exp.Table) -> str | None:
        """The Paimon database of a table name; None: another catalog's (Spark's)."""
        if table.catalog and table.catalog.lower() != CATALOG_NAME:
            return None
        return table.db or self.current_database


def database_name(table: exp.Table) -> str | None:
    """`db` or `paimon.db` (parsed into the table and db slots); None: another catalog."""
    if table.catalog:
        raise SqlError(f"Nested namespaces are not supported: {table.sql(dialect='spark')}")
    if table.db and table.db.lower() != CATALOG_NAME:
        return None
    return table.name


class Session(Protocol):
    """What a statement family's `run` uses of `sql_ext.session.PaimonSession`: the Spark
    bridge, the read rewrite and name resolution that asks Spark (temporary views)."""

    spark: SparkSession
    ctx: StatementContext
    catalog: FileSystemCatalog
    current_database: str
    pinned: list[str]

    def frame(self, result: ProcedureResult) -> DataFrame: ...

    def empty(self) -> DataFrame: ...

    def spark_sql(self, text: str, rewrite: Rewrite | None = None) -> DataFrame: ...

    def query(
        self,
        statement: QueryStatement,
        tree: exp.Expr | None = None,
        *,
        fragment: Fragment | None = None,
        schema_only: bool = False,
        pin: bool = False,
        prefix: str = "",
        refusal: str | None = None,
    ) -> DataFrame: ...

    def is_temp_view(self, name: str) -> bool: ...

    def own_pins(self, view: str, pins: list[str]) -> None: ...

    def unsupported_on_paimon(self, tree: exp.Expr, text: str) -> DataFrame: ...

    def case_sensitive(self) -> bool: ...

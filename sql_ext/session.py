"""`PaimonSession`: Spark SQL with a Paimon catalog named `paimon` as the current catalog.

Each statement is parsed (`sql_ext.parse`) and either handled here or given to Spark:

* CALL, database statements, CREATE/DROP TABLE and INSERT on Paimon tables run on the
  metadata core;
* any other statement that reads Paimon tables is rewritten to read temporary views holding
  the rows of the snapshot it asks for (`sql_ext.views`), then run by Spark;
* a statement without Paimon tables or syntax is handed to Spark verbatim.

Name resolution follows Spark with `paimon` as the current catalog: `paimon.db.t` and `db.t`
are Paimon tables, an unqualified `t` is a temporary view if one has that name, else the table
of the current Paimon database. Names that are no Paimon table (`spark_catalog.db.t`, a Spark
table) stay with Spark. CTE names are never tables.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pyspark.errors import AnalysisException, ParseException, PySparkException
from pyspark.sql import SparkSession
from pyspark.sql import types as st
from sqlglot import exp
from sqlglot.errors import TokenError
from sqlglot.tokens import Token

from paimon_core.catalog import DEFAULT_DATABASE, FileSystemCatalog
from paimon_core.exceptions import (
    DatabaseNotExist,
    InvalidArgument,
    PaimonError,
    TableAlreadyExist,
    TableNotExist,
)
from paimon_core.operations.fallback import fallback_read
from paimon_core.operations.time_travel import travel_table
from procedures.base import ProcedureResult
from sql_ext.alter import alter_database, alter_table
from sql_ext.alter_syntax import is_alter, parse_head
from sql_ext.analyze import analyze_spec, analyze_table
from sql_ext.create_like import check_location, like_schema
from sql_ext.datapath import source as data_source
from sql_ext.datapath.pushdown import (
    count_query,
    needed_names,
    partition_predicate,
    table_predicate,
)
from sql_ext.datapath.write import Overwrite, write_dataframe
from sql_ext.dialect import SPAN, PaimonSpark, quote_identifier
from sql_ext.dml import delete, truncate
from sql_ext.dynamic_options import paimon_confs, table_options, with_dynamic_options
from sql_ext.errors import Rewrite, SqlError, first_line
from sql_ext.errors import quiet_query_logs as _quiet_query_logs
from sql_ext.global_system_tables import (
    SYSTEM_DATABASE_ERROR,
    global_table_columns,
    global_table_rows,
    is_system_database,
)
from sql_ext.insert import insert_dataframe, insert_spec, with_default_keywords
from sql_ext.jvm import is_temp_view
from sql_ext.max_pt import has_max_pt, max_partition, replace_max_pt
from sql_ext.merge_into import Source, merge_into, source_alias, source_query, using_span
from sql_ext.merge_schema import Evolution, MergeSchema, align_nested, plan_evolution
from sql_ext.metadata.config import (
    CATALOG_NAME,
    WAREHOUSE_CONF,
    resolve_catalog_options,
    resolve_warehouse,
)
from sql_ext.metadata.databases import (
    DatabaseStatement,
    check_create,
    describe_database,
    paimon_database,
    parse_database_statement,
)
from sql_ext.metadata.describe import describe_system_table
from sql_ext.metadata.engine import run_call, run_tag_ddl
from sql_ext.metadata.show import show_catalog
from sql_ext.metadata.table_info import describe_statement
from sql_ext.metadata_columns import applicable, requested_metadata, star_edits
from sql_ext.parse import (
    CallStatement,
    Fragment,
    QueryStatement,
    SqlParseError,
    Statement,
    TableRef,
    code_of,
    parse_statement,
    query_fragment,
    replace_tables,
    split_statements,
    table_nodes,
)
from sql_ext.replace import SELF_REFERENCE, plan_replace, replace_in_place
from sql_ext.rowlevel import Target
from sql_ext.spark_types import from_spark_schema
from sql_ext.splice import Edit, Spliced, splice
from sql_ext.system_tables import SNAPSHOT_SYSTEM_TABLES
from sql_ext.table_functions import EXCEPT_FALLBACK, TableFunctionCall, table_function_calls
from sql_ext.tables import (
    PAIMON_PROVIDER,
    TableSpec,
    static_partition,
    table_spec,
)
from sql_ext.tag_ddl import is_tag_ddl
from sql_ext.update import update
from sql_ext.views import (
    DATA_SYSTEM_TABLES,
    ViewScope,
    local_dataframe,
    system_table_dataframe,
    table_dataframe,
    travelled,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from paimon_core.format.snapshot import Snapshot
    from paimon_core.table import FileStoreTable

__all__ = [
    "CATALOG_NAME",
    "WAREHOUSE_CONF",
    "PaimonSession",
    "resolve_catalog_options",
    "resolve_warehouse",
]

_LOG = logging.getLogger(__name__)
_DATABASE_KINDS = frozenset({"DATABASE", "SCHEMA", "NAMESPACE"})
_EXPLAIN_MODES = frozenset({"EXTENDED", "CODEGEN", "COST", "FORMATTED"})
_TOKENIZER = PaimonSpark.Tokenizer
_NO_VIEWS = (
    "Paimon's filesystem catalog does not support views (only its Hive, JDBC and REST "
    "metastores keep them); use CREATE TEMPORARY VIEW"
)
_PERMANENT_VIEW = "Permanent views over Paimon tables are not supported: use CREATE TEMPORARY VIEW"
_STATEMENT_NAMES = {"truncatetable": "TRUNCATE TABLE", "alter": "ALTER TABLE"}
_DML_NAMES = {
    "delete": "DELETE FROM",
    "update": "UPDATE",
    "merge": "MERGE INTO",
    "truncatetable": "TRUNCATE TABLE",
}
_SUBSTITUTE_CONF = "spark.sql.variable.substitute"
_VARIABLE = re.compile(r"\$\{(?:(\w+?):)?(\S+?)\}")  # Spark's ConfigReader.REF_RE
_CONF_PREFIXES = frozenset({"spark", "sparkconf", "hivevar", "hiveconf"})
_QUERY_WORDS = frozenset({"SELECT", "WITH", "FROM", "VALUES", "TABLE", "INSERT"})
_USING_PAIMON = re.compile(r"\bUSING\s+`?paimon\b", re.IGNORECASE)
_AUTO_ALIAS = {"__autoGeneratedAlias": "true"}
"""Field metadata Spark gives a column it named itself (`count(1)`)."""


def _named(error: PaimonError, prefix: str) -> PaimonError:
    """``error`` with its message led by ``prefix`` (the statement), unless it already names
    the statement; of the same type where that type takes a message alone."""
    message = str(error)
    if message.split(" ", 1)[0].upper() == prefix.split(" ", 1)[0]:
        return error
    try:
        return type(error)(f"{prefix}: {message}")
    except TypeError:
        return SqlError(f"{prefix}: {message}")


def _view(name: str) -> exp.Table:
    return exp.Table(this=exp.to_identifier(name, quoted=True))


def _is_target(table: exp.Table) -> bool:
    """The table a CREATE/INSERT writes to (not one it reads)."""
    node: exp.Expr = table
    if isinstance(node.parent, exp.Schema) and node.arg_key == "this":
        node = node.parent
    return node.arg_key == "this" and isinstance(node.parent, (exp.Insert, exp.Create))


def _has_metadata_columns(table: exp.Table) -> bool:
    """A data table, or a system table of its rows (`$audit_log`, ...): not `$files` & co."""
    _, _, system = table.name.partition("$")
    return not system or system.lower() in DATA_SYSTEM_TABLES


def _is_branch_name(name: str) -> bool:
    """`t$branch_b`: a table's branch, which reads and writes as a table (not `t$branch_b$x`)."""
    _, _, rest = name.partition("$")
    return rest.startswith("branch_") and len(rest) > 7 and "$" not in rest


def _has_paimon_syntax(table: exp.Table) -> bool:
    """Time travel or a `$` name: whatever it names can only be a Paimon table."""
    return table.args.get("version") is not None or "$" in table.name


def _is_cte(table: exp.Table) -> bool:
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


def _empty(spark: SparkSession) -> DataFrame:
    return local_dataframe(spark, [], st.StructType([]))


class PaimonSession:
    """A SparkSession whose SQL also reaches the Paimon tables of one warehouse.

    A statement reads Paimon tables as of the moment `.sql()` runs: each table (or system
    table, or travelled version) it reads is planned then (snapshot pinned, files pruned,
    used columns) and registered as a temporary view named `__paimon_<uuid>`, the statement's
    text is edited to read that view (aliased with the table's own name; nothing else in the
    text changes) and run by Spark, and the views are dropped before `.sql()` returns. The
    DataFrame reads that plan on Spark's executors each time it is collected: it shows the
    table as it was when the statement ran, not newer commits (run the statement again for
    those). Only `CREATE TEMPORARY VIEW ... AS` and `CACHE TABLE ... AS`, whose stored
    plan reads the views, keep them until `stop()`.

    Before parsing, Spark's `${var}` substitution is applied (when
    `spark.sql.variable.substitute` is true), so `SET tbl=t` then `SELECT * FROM ${tbl}` reads
    the Paimon table `t`.
    """

    def __init__(
        self,
        spark: SparkSession | None = None,
        *,
        warehouse: str | None = None,
        master: str | None = None,
        conf: Mapping[str, str] | None = None,
        app_name: str = "paimon-sql",
        owns_spark: bool | None = None,
        sql_only: bool = False,
    ) -> None:
        """`spark` (else a new SparkSession from `master`, `conf`, `app_name`) over the
        Paimon `warehouse` (else the session's `spark.sql.catalog.paimon.warehouse`);
        `owns_spark`: whether `stop()` stops Spark (default: when this session started it).
        `sql_only` (the shell's session, whose Spark is reached through `sql` alone): the
        `paimon` data source is registered when a statement first needs it, not now."""
        self._owns_spark = spark is None if owns_spark is None else owns_spark
        if spark is None:
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
            builder = SparkSession.builder.appName(app_name)
            if master:
                builder = builder.master(master)
            for key, value in (conf or {}).items():
                builder = builder.config(key, value)
            spark = builder.getOrCreate()
        self.spark: SparkSession = spark
        self.warehouse: str = resolve_warehouse(warehouse, conf, spark)
        self.catalog: FileSystemCatalog = FileSystemCatalog(
            self.warehouse, options=resolve_catalog_options(conf, spark)
        )
        self.current_database: str = DEFAULT_DATABASE
        self._default_ready = False
        self._pinned: list[str] = []
        # The pinned reads of each temporary view (lower-case name), dropped with it.
        self._view_pins: dict[str, list[str]] = {}
        data_source.register(
            spark, {"warehouse": self.warehouse, **self.catalog.options}, lazy=sql_only
        )

    # ------------------------------------------------------------------------ public

    def sql(self, text: str, parsed: Statement | None = None) -> DataFrame:
        """Run exactly one statement (a trailing `;` is fine) and return its result.

        Raises:
            SqlParseError: the statement does not parse.
            PaimonError: a Paimon error (unknown table, tag, ...); `SqlError` for statements
                the session cannot run.
            PySparkException: errors Spark raises for the parts it runs.
        """
        statements = split_statements(text)
        if not statements:
            raise SqlParseError("Empty statement")
        if len(statements) > 1:
            raise SqlParseError(
                f"sql() runs one statement, got {len(statements)}; use run_script() for scripts"
            )
        statement = code_of(statements[0])
        if parsed is not None and parsed.text != statement:
            parsed = None
        return self._statement(statement, parsed)

    def run_script(self, text: str) -> Iterator[tuple[str, DataFrame]]:
        """Each statement of `text` with its result, run one at a time as the caller iterates.

        Stops at the first error (which is raised); earlier statements stay done.
        """
        for statement in split_statements(text):
            yield statement, self.sql(statement)

    def stop(self) -> None:
        """Drop the views this session kept; stop Spark if this session started it."""
        for name in self._pinned:
            self.spark.catalog.dropTempView(name)
        self._pinned.clear()
        self._view_pins.clear()
        if self._owns_spark:
            self.spark.stop()

    # -------------------------------------------------------------------- dispatch

    def _substitute(self, text: str) -> str:
        """Spark's `${var}` substitution (`VariableSubstitution`), done before parsing so that
        `SET tbl=t; SELECT * FROM ${tbl}` reads a Paimon table as Spark would.

        `${name}`, `${spark:name}`, `${sparkconf:name}`, `${hivevar:name}` and
        `${hiveconf:name}` are session configuration values, `${env:NAME}` environment
        variables; values are substituted in turn; unknown references stay as written.
        """
        if "${" not in text:
            return text
        enabled = self.spark.conf.get(_SUBSTITUTE_CONF, "true")
        if str(enabled).strip().lower() != "true":
            return text

        def lookup(prefix: str | None, name: str) -> str | None:
            if prefix is None or prefix.lower() in _CONF_PREFIXES:
                try:
                    return self.spark.conf.get(name, None) or None
                except PySparkException:
                    return None
            if prefix.lower() == "env":
                return os.environ.get(name) or None
            return None

        def substitute(value: str, seen: frozenset[str]) -> str:
            def replace(match: re.Match[str]) -> str:
                reference = match.group()
                found = lookup(match.group(1), match.group(2))
                if found is None:
                    return reference
                if reference in seen:
                    raise SqlError(f"Circular reference in {reference}")
                return substitute(found, seen | {reference})

            return _VARIABLE.sub(replace, value)

        return substitute(text, frozenset())

    def _statement(self, text: str, parsed: Statement | None = None) -> DataFrame:
        text = code_of(self._substitute(text))
        if is_tag_ddl(text):
            return self._tag_ddl(text)
        if is_alter(text):
            return self._alter(text)
        database_statement = parse_database_statement(text)
        if database_statement is not None:
            return self._database_statement(database_statement)
        explained = self._explain(text)
        if explained is not None:
            return explained
        statement = parse_statement(text) if parsed is None else parsed
        if isinstance(statement, QueryStatement) and has_max_pt(statement.tree):
            statement = parse_statement(
                replace_max_pt(statement.parsed, statement.tree, CATALOG_NAME, self._max_pt)
            )
        if isinstance(statement, CallStatement):
            return self._call(statement)
        tree = statement.tree
        if isinstance(tree, exp.Command):
            rest = tree.expression
            rest = rest if isinstance(rest, str) else rest.name
            if tree.name.upper() == "SHOW":
                shown = self._show(rest)
                if shown is not None:
                    return shown
            return self._spark_sql(text)
        if isinstance(tree, exp.Use):
            return self._use(tree, text)
        if isinstance(tree, (exp.Create, exp.Drop, exp.Describe)):
            kind = str(tree.args.get("kind") or "").upper()
            if kind in _DATABASE_KINDS:  # `parse_database_statement` reads every one it can
                raise SqlError(f"Cannot read this {tree.key.upper()} {kind} statement")
        if isinstance(tree, exp.Create):
            kind = str(tree.args.get("kind") or "").upper()
            if kind == "TABLE":
                return self._create_table(statement)
            if kind == "VIEW":
                properties = tree.args.get("properties")
                temporary = properties is not None and any(
                    isinstance(p, exp.TemporaryProperty) for p in properties.expressions
                )
                view = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
                if not temporary and isinstance(view, exp.Table):
                    self._refuse_paimon_view("CREATE VIEW", view)
                refusal = None if temporary else _PERMANENT_VIEW
                owner = view.name if temporary and isinstance(view, exp.Table) else None
                pinned = len(self._pinned)
                result = self._query(statement, pin=True, refusal=refusal)
                if owner:
                    self._own_pins(owner, self._pinned[pinned:])
                return result
            return self._query(statement)
        if isinstance(tree, exp.Drop):
            kind = str(tree.args.get("kind") or "").upper()
            if kind == "TABLE":
                return self._drop_table(tree, text)
            if kind == "VIEW":
                (view,) = tree.args.get("tables") or [tree.this]
                if isinstance(view, exp.Table) and not (
                    not view.db and self._is_temp_view(view.name)
                ):
                    self._refuse_paimon_view("DROP VIEW", view)
                result = self._spark_sql(text)
                if isinstance(view, exp.Table) and not view.db:
                    self._own_pins(view.name, [])
                return result
            return self._spark_sql(text)
        if isinstance(tree, exp.Insert):
            return self._insert(statement)
        if isinstance(tree, exp.Describe):
            return self._describe(statement, tree, text)
        if isinstance(tree, (exp.Query, exp.Values)):
            return self._query(statement)
        if isinstance(tree, exp.Cache):
            return self._query(statement, pin=True)
        if isinstance(tree, exp.Analyze):
            return self._analyze(tree, text)
        if isinstance(tree, exp.Refresh) and isinstance(tree.this, exp.Table):
            return self._refresh(tree.this, text)
        if isinstance(tree, (exp.Delete, exp.TruncateTable, exp.Update, exp.Merge)):
            return self._dml(statement, tree, text)
        return self._unsupported_on_paimon(tree, text)

    def _spark_sql(self, text: str, rewrite: Rewrite | None = None) -> DataFrame:
        """Run `text` on Spark; its errors are raised (restated in the user's terms), never
        also logged, since the caller or the shell reports each error once."""
        if _USING_PAIMON.search(text):  # Spark resolves the `paimon` source itself
            data_source.ensure_registered(self.spark)
        try:
            with _quiet_query_logs():
                return self.spark.sql(text)
        except PySparkException as e:
            if rewrite is not None:
                rewrite.restore(e)
            if isinstance(e, ParseException):
                raise SqlParseError(first_line(e)) from None
            if not isinstance(e, AnalysisException):
                raise
            if e.getCondition() != "TABLE_OR_VIEW_NOT_FOUND":
                raise
            name = (e.getMessageParameters() or {}).get("relationName", "?")
            self._unparsed_paimon_table(name, text)
            raise SqlError(
                f"Table or view {name} not found: neither a Paimon table (current database "
                f"'{self.current_database}') nor a Spark table or view"
            ) from None

    def _unparsed_paimon_table(self, relation: str, text: str) -> None:
        """Spark missed a Paimon table because sqlglot could not parse the statement."""
        parts = [p.replace("``", "`") for p in re.findall(r"`((?:[^`]|``)*)`", relation)]
        if not 1 <= len(parts) <= 3 or self._resolve(_table(parts)) is None:
            return
        command = _command_name(text, parts)
        if command is not None:
            raise SqlError(f"{command} is not supported on Paimon table {relation}")
        try:
            PaimonSpark().parse(text)
            reason = "unsupported syntax"
        except Exception as error:
            reason = first_line(error)
        raise SqlParseError(
            f"Cannot read Paimon table {relation}: the statement does not parse ({reason})"
        )

    def _max_pt(self, name: str) -> str:
        """The value `sys.max_pt('<name>')` stands for (`sql_ext.max_pt`)."""
        try:
            node = exp.to_table(name, dialect=PaimonSpark)
        except Exception:
            raise SqlError(f"sys.max_pt('{name}'): not a table name") from None
        if node.catalog and node.catalog.lower() != CATALOG_NAME:
            raise SqlError(f"sys.max_pt('{name}'): '{node.catalog}' is not a Paimon catalog")
        database = node.db or self.current_database
        table = self._load(database, node.name)
        shown = f"{CATALOG_NAME}.{database}.{node.name}"
        return max_partition(table, name, shown, self._time_zone())

    def _time_zone(self) -> str | None:
        return self.spark.conf.get("spark.sql.session.timeZone", None)

    def _paimon(self) -> FileSystemCatalog:
        """The catalog, with its default database created on first use as Paimon's Spark
        catalog does when it starts."""
        if not self._default_ready:
            self.catalog.create_database(DEFAULT_DATABASE, ignore_if_exists=True)
            self._default_ready = True
        return self.catalog

    # ------------------------------------------------------------------- resolution

    def _table_exists(self, database: str, name: str) -> bool:
        try:
            return self.catalog.table_exists(f"{database}.{name}")
        except PaimonError:
            return False

    def _own_pins(self, view: str, pins: list[str]) -> None:
        """``view`` now holds ``pins`` (none once dropped): the reads its earlier definition
        pinned are dropped, nothing else refers to them (a view that reads ``view`` names
        it, not its reads)."""
        for name in self._view_pins.pop(view.lower(), []):
            self.spark.catalog.dropTempView(name)
            self._pinned.remove(name)
        if pins:
            self._view_pins[view.lower()] = pins

    def _is_temp_view(self, name: str) -> bool:
        """Whether `name` is a temporary view of the session (which hides a Paimon table
        of that name). Asked of Spark's session catalog directly: `spark.catalog.getTable`
        raises for a name that is no view, and PySpark's conversion of that error costs
        ~30 py4j round trips, on every statement that names a table without its database."""
        return is_temp_view(self.spark, name)

    def _paimon_database(self, table: exp.Table) -> str:
        """The database of a name with Paimon syntax ($ names, time travel)."""
        if table.catalog and table.catalog.lower() != CATALOG_NAME:
            raise SqlError(
                f"{table.sql(dialect='spark')}: system tables and time travel need a Paimon "
                f"table, '{table.catalog}' is not the Paimon catalog"
            )
        return table.db or self.current_database

    def _resolve(self, table: exp.Table) -> tuple[str, str] | None:
        """`(database, table)` when a plain name is a Paimon table, None when it is Spark's."""
        catalog, database, name = table.catalog, table.db, table.name
        if catalog:
            if catalog.lower() == CATALOG_NAME:
                return database or self.current_database, name
            return None
        if "$" in name:
            return None  # Paimon syntax (`sql_ext.parse.TableRef`), never a plain name
        resolved = database or self.current_database
        if is_system_database(resolved):
            if global_table_columns(name, self.catalog.options) is None:
                return None
        elif not self._table_exists(resolved, name):
            return None
        if not database and self._is_temp_view(name):
            return None
        return resolved, name

    def _load(
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
        return self._with_dynamic_options(table, database, scoped_as or name, writes=writes)

    def _with_dynamic_options(
        self, table: FileStoreTable, database: str, name: str, *, writes: bool = False
    ) -> FileStoreTable:
        confs = paimon_confs(self.spark)
        return with_dynamic_options(
            table, confs, CATALOG_NAME, database, name, time_travel=not writes
        )

    def _procedure_table(self, table: FileStoreTable, database: str, name: str) -> FileStoreTable:
        """A table a CALL or tag statement works on, with the session's dynamic options
        (`snapshot.num-retained.*` for expiry, ...); they manage the latest state."""
        return self._with_dynamic_options(table, database, name, writes=True)

    def _target(self, table: exp.Table, *, must_exist: bool = True) -> tuple[str, str] | None:
        """The Paimon table a statement writes to; None leaves the statement to Spark."""
        catalog, database, name = table.catalog, table.db, table.name
        if catalog and catalog.lower() != CATALOG_NAME:
            return None
        resolved = database or self.current_database
        if _is_branch_name(name) and not is_system_database(resolved):
            return resolved, name  # only a Paimon table's branch: loading it checks it
        if "$" in name or is_system_database(resolved):
            raise SqlError(f"Cannot write to {name}: system tables are read-only")
        if not catalog and must_exist:
            if not database and self._is_temp_view(name):
                return None
            if not self._table_exists(resolved, name) and self.spark.catalog.tableExists(
                ".".join(quote_identifier(p) for p in (database, name) if p)
            ):
                return None
        return resolved, name

    # ------------------------------------------------------------------------ reads

    def _query(
        self,
        statement: QueryStatement,
        tree: exp.Expr | None = None,
        *,
        fragment: Fragment | None = None,
        schema_only: bool = False,
        pin: bool = False,
        prefix: str = "",
        refusal: str | None = None,
    ) -> DataFrame:
        """Run a statement that may read Paimon tables (`refusal`: the error if it does).

        `tree` and `fragment` pick a query inside the statement (the source of an INSERT);
        by default it is the whole statement.
        """
        if tree is None and fragment is None and not (schema_only or pin or prefix or refusal):
            counted = self._pushed_count(statement.tree)
            if counted is not None:
                return counted
        tree = statement.tree if tree is None else tree
        with ViewScope(self.spark, self._pinned) as scope:
            rewritten = self._rewrite(statement.parsed, tree, scope, fragment, schema_only, refusal)
            if rewritten is None:
                if fragment is None:
                    return self._spark_sql(prefix + statement.text)
                return self._spark_sql(
                    prefix + splice(statement.parsed, fragment.edits, fragment.pieces).text
                )
            scope.pin = pin
            rewrite = Rewrite(rewritten, statement.parsed, len(prefix), scope.shown)
            return self._spark_sql(prefix + rewritten.text, rewrite)

    def _pushed_count(self, tree: exp.Expr) -> DataFrame | None:
        """`SELECT count(*) FROM t [WHERE <partition columns only>]` of an append table
        without deletion vectors, answered from the manifests' row counts as Paimon-Spark's
        aggregate pushdown does (no data file is opened); None when it does not apply.

        Exact because append-table files are never merged: a file's row count is its rows.
        Primary-key tables are read (a key's versions in several files count once)."""
        query = count_query(tree)
        if query is None or _has_paimon_syntax(query.table):
            return None
        target = self._resolve(query.table)
        if target is None or is_system_database(target[0]):
            return None
        table, snapshot = travelled(self._load(*target))
        if table.is_primary_key_table or table.options.deletion_vectors_enabled:
            return None
        if fallback_read(table) is not None:
            return None  # partitions of the other branch count too
        predicate = partition_predicate(query, table.schema.fields, table.schema.partition_keys)
        if predicate is None:
            return None
        splits = [] if snapshot is None else table.new_scan().plan(snapshot, predicate=predicate)
        rows = sum(s.row_count for s in splits)
        schema = st.StructType(
            [
                st.StructField(name, st.LongType(), False, _AUTO_ALIAS if auto else None)
                for name, auto in query.columns
            ]
        )
        return local_dataframe(self.spark, [[rows] * len(query.columns)], schema)

    def _rewrite(
        self,
        text: str,
        tree: exp.Expr,
        scope: ViewScope,
        fragment: Fragment | None = None,
        schema_only: bool = False,
        refusal: str | None = None,
    ) -> Spliced | None:
        """`text` reading views for the Paimon tables of `tree`; None when it has none."""
        resolved: dict[tuple[str, str, str], tuple[str, str] | None] = {}

        def plain(table: exp.Table) -> bool:
            if (_is_target(table) and not schema_only) or _is_cte(table):
                return False
            key = (table.catalog, table.db, table.name)
            if key not in resolved:
                resolved[key] = self._resolve(table)
            return resolved[key] is not None

        tables = list(table_nodes(tree))
        calls = table_function_calls(tree, text)
        if (
            not calls
            and not any(_has_paimon_syntax(t) for t in tables)
            and not any(plain(t) for t in tables if isinstance(t.this, exp.Identifier))
        ):
            return None
        if refusal is not None:
            raise SqlError(refusal)
        views: dict[tuple[Any, ...], str] = {}
        needed = needed_names(tree)
        pins: dict[tuple[Any, ...], tuple[FileStoreTable, Snapshot | None]] = {}
        # Metadata columns (`__paimon_file_path`, ...) the statement reads, per table node.
        meta = {
            id(t): self._applicable_metadata(t, resolved, requested_metadata(tree, t))
            for t in tables
            if isinstance(t.this, exp.Identifier)
            and _has_metadata_columns(t)
            and (_has_paimon_syntax(t) or plain(t))
        }
        meta.update({id(c.node): requested_metadata(tree, c.node) for c in calls})
        hidden = [(t, meta.get(id(t), ())) for t in tables]
        edits = star_edits(tree, hidden)
        for call in calls:
            df, shown = self._table_function(call, needed, meta[id(call.node)], schema_only)
            edits.append(Edit(call.start, call.end, _view(scope.register(df, shown)).sql("spark")))
        if edits:
            pieces = fragment.pieces if fragment is not None else ((0, len(text)),)
            previous = fragment.edits if fragment is not None else ()
            fragment = Fragment(pieces, (*previous, *edits))

        def mapping(ref: TableRef) -> exp.Expr:
            node = ref.node
            target = resolved.get((node.catalog, node.db, node.name))
            if target is None:  # Paimon syntax: the name can only be a Paimon table
                target = self._paimon_database(node), ref.table
            timestamp = None if ref.timestamp is None else ref.timestamp.sql(dialect="spark")
            key = (*target, ref.branch, ref.system_table, ref.version, timestamp)
            columns = meta.get(id(node), ())
            df, pruned = self._read(
                target, ref, schema_only, text, tree, needed, pins, key, columns
            )
            key = (*key, pruned, columns)
            if key not in views:
                shown = f"{CATALOG_NAME}.{target[0]}.{node.name}"
                views[key] = scope.register(df, shown)
            return _view(views[key])

        return replace_tables(text, tree, mapping, plain=plain, fragment=fragment)

    def _applicable_metadata(
        self, table: exp.Table, resolved: Mapping[Any, Any], columns: tuple[str, ...]
    ) -> tuple[str, ...]:
        """``columns`` as ``metadata_columns.applicable`` keeps them for ``table``."""
        target = resolved.get((table.catalog, table.db, table.name))
        database, name = target or (self._paimon_database(table), table.name.split("$")[0])
        return applicable(table, columns, lambda: self._load(database, name).options)

    def _table_function(
        self,
        call: TableFunctionCall,
        needed: frozenset[str] | None,
        meta: tuple[str, ...],
        schema_only: bool,
    ) -> tuple[DataFrame, str]:
        """The DataFrame of an incremental table function (`sql_ext.table_functions`): the
        table it names read with the option it sets; and how errors name it."""
        parts = list(call.parts)
        if len(parts) > 3:
            raise SqlError(f"{call.function}: invalid table identifier: {'.'.join(parts)}")
        if len(parts) == 3 and parts[0].lower() != CATALOG_NAME:
            raise SqlError(f"{call.function} reads Paimon tables, not {'.'.join(parts)}")
        database = parts[-2] if len(parts) > 1 else self.current_database
        name, _, system = parts[-1].partition("$")
        system = system.lower() or None
        if system is not None and system not in DATA_SYSTEM_TABLES:
            raise SqlError(
                f"{call.function} reads a table, its $audit_log, $binlog or $ro, not {parts[-1]}"
            )
        shown = f"{CATALOG_NAME}.{database}.{parts[-1]}"
        table = self._load(database, name, scoped_as=parts[-1]).copy(call.options)
        fields = table.schema.fields
        columns = None
        if needed is not None and not schema_only:
            columns = [f.name for f in fields if f.name.lower() in needed]
        try:
            df = table_dataframe(
                self.spark,
                table,
                None,
                schema_only,
                columns,
                system=system,
                meta=meta,
                except_fallback=call.function in EXCEPT_FALLBACK,
            )
        except InvalidArgument as e:  # name the call: the option it set is the user's input
            raise InvalidArgument(f"{call.function} on {shown}: {e}") from None
        return df, shown

    def _read(
        self,
        target: tuple[str, str],
        ref: TableRef,
        schema_only: bool,
        text: str,
        tree: exp.Expr,
        needed: frozenset[str] | None,
        pins: dict[tuple[Any, ...], tuple[FileStoreTable, Snapshot | None]],
        key: tuple[Any, ...],
        meta: tuple[str, ...] = (),
    ) -> tuple[DataFrame, tuple[Any, ...]]:
        """The DataFrame `ref` reads, and what its plan pruned (references that pruned the
        same way share one view). `pins` holds the snapshot each table version was pinned
        to, so that all references to it in one statement read the same snapshot."""
        database, name = target
        shown = f"{CATALOG_NAME}.{database}.{name}"
        if is_system_database(database):
            return self._global_table(shown, name, ref, schema_only), ()
        scoped = name if ref.branch is None else f"{name}$branch_{ref.branch}"
        system = "" if ref.system_table is None else f"${ref.system_table}"
        table = self._load(database, name, scoped_as=scoped + system, branch=ref.branch)
        millis = None if ref.timestamp is None else self._timestamp_millis(ref.timestamp, text)
        travels = ref.version is not None or millis is not None
        if ref.system_table is not None and ref.system_table not in DATA_SYSTEM_TABLES:
            system = ref.system_table
            snapshot_id = None
            if travels:
                if system not in SNAPSHOT_SYSTEM_TABLES:
                    raise SqlError(
                        f"Time travel on {shown}${system} is not supported: only "
                        f"{', '.join(sorted(SNAPSHOT_SYSTEM_TABLES))} show a snapshot"
                    )
                _, snapshot = travelled(table, ref.version, millis)
                snapshot_id = None if snapshot is None else snapshot.snapshot_id
            df = system_table_dataframe(
                self.spark, table, system, snapshot_id, self._time_zone(), schema_only
            )
            return df, ()
        if key not in pins:
            pins[key] = travelled(table, ref.version, millis)
        moved, snapshot = pins[key]
        fields = moved.schema.fields
        columns = None
        if needed is not None and not schema_only:  # DESCRIBE shows every column
            columns = [f.name for f in fields if f.name.lower() in needed]
        predicate = table_predicate(tree, ref.node, fields)
        df = table_dataframe(
            self.spark,
            moved,
            snapshot,
            schema_only,
            columns,
            predicate,
            system=ref.system_table,
            meta=meta,
        )
        return df, (None if columns is None else tuple(columns), repr(predicate))

    def _global_table(self, shown: str, name: str, ref: TableRef, schema_only: bool) -> DataFrame:
        """`sys.<name>`, a global system table (`sql_ext.global_system_tables`)."""
        if ref.system_table is not None or ref.branch is not None:
            raise SqlError(f"{shown}${ref.system_table or ref.branch}: no such table")
        if ref.version is not None or ref.timestamp is not None:
            raise SqlError(f"Time travel on {shown} is not supported: it has no snapshots")
        if schema_only:
            columns = global_table_columns(name, self.catalog.options) or ()
            result = ProcedureResult(columns, [])
        else:
            result = global_table_rows(self._paimon(), name)
        return local_dataframe(self.spark, result.rows, result.spark_schema())

    def _timestamp_millis(self, value: exp.Expr, text: str) -> int:
        """`TIMESTAMP AS OF <value>` as epoch millis: Spark casts the value to TIMESTAMP in
        the session time zone (a number is seconds), as it does for Paimon.

        The value is evaluated as written in `text` (sqlglot parsed that span as one
        expression), so that functions keep Spark's meaning. PySpark's error log is held back:
        the failure is reported once, as a `SqlError`.
        """
        span = value.meta.get(SPAN)
        shown = text[span[0] : span[1]] if span else value.sql(dialect="spark")
        query = f"SELECT unix_micros(CAST((\n{shown}\n) AS TIMESTAMP))"
        try:
            with _quiet_query_logs():
                micros = self.spark.sql(query).collect()[0][0]
        except PySparkException as e:
            raise SqlError(f"Invalid TIMESTAMP AS OF {shown}: {first_line(e)}") from None
        if micros is None:
            raise SqlError(f"Invalid TIMESTAMP AS OF {shown}: it is NULL")
        return int(micros) // 1000

    def _unsupported_on_paimon(self, tree: exp.Expr, text: str) -> DataFrame:
        for table in table_nodes(tree):
            if not isinstance(table.this, exp.Identifier) or _is_cte(table):
                continue
            if _has_paimon_syntax(table):
                target: tuple[str, str] | None = (self._paimon_database(table), table.name)
            else:
                target = self._resolve(table)
            if target is not None:
                kind = _STATEMENT_NAMES.get(tree.key, tree.key.upper())
                raise SqlError(
                    f"{kind} is not supported on Paimon table "
                    f"{CATALOG_NAME}.{target[0]}.{target[1]}"
                )
        return self._spark_sql(text)

    def _explain(self, text: str) -> DataFrame | None:
        tokens = _tokenize(text)
        if len(tokens) != 2 or tokens[0].text.upper() != "EXPLAIN":
            return None
        rest = tokens[1].text
        inner = _tokenize(rest)
        mode = ""
        if inner and inner[0].text.upper() in _EXPLAIN_MODES:
            mode = inner[0].text.upper() + " "
            rest = rest[inner[0].end + 1 :]
        statement = parse_statement(rest)
        if isinstance(statement, CallStatement):
            raise SqlError("EXPLAIN of a CALL is not supported")
        tree = statement.tree
        if not isinstance(tree, (exp.Query, exp.Values)):
            if statement.paimon_tables:
                raise SqlError("EXPLAIN on Paimon tables is supported for queries only")
            return self._spark_sql(text)
        return self._query(statement, prefix=f"EXPLAIN {mode}")

    # ------------------------------------------------------------------- statements

    def _call(self, statement: CallStatement) -> DataFrame:
        result = run_call(
            statement,
            self._paimon(),
            self.current_database,
            self._time_zone(),
            self._procedure_table,
            run_tasks=self._run_tasks,
        )
        return local_dataframe(self.spark, result.rows, result.spark_schema())

    def _run_tasks(self, func: Callable[[Any], Any], tasks: Sequence[Any]) -> list[Any]:
        """A procedure's data work as one Spark job: one task per item, results collected
        to the driver (which commits them once)."""
        if not tasks:
            return []
        rdd = self.spark.sparkContext.parallelize(list(tasks), len(tasks))
        return rdd.map(func).collect()

    def _alter(self, text: str) -> DataFrame:
        """ALTER TABLE / DATABASE of the Paimon catalog (`sql_ext.alter`); others: Spark's."""
        head = parse_head(text)
        if head.kind == "DATABASE":
            database = self._database_name(_table(list(head.name)))
            if database is None:
                return self._spark_sql(text)
            alter_database(self._paimon(), database)
        node = _table(list(head.name))
        if _is_branch_name(node.name) and not (
            node.catalog and node.catalog.lower() != CATALOG_NAME
        ):
            target: tuple[str, str] | None = (node.db or self.current_database, node.name)
        else:
            target = self._resolve(node)
        if target is None:
            return self._spark_sql(text)
        alter_table(self.spark, self._paimon(), *target, head)
        return _empty(self.spark)

    def _tag_ddl(self, text: str) -> DataFrame:
        result = run_tag_ddl(text, self._paimon(), self.current_database, self._procedure_table)
        return local_dataframe(self.spark, result.rows, result.spark_schema())

    def _database_name(self, table: exp.Table) -> str | None:
        """`db` or `paimon.db` (parsed into the table and db slots); None: another catalog."""
        if table.catalog:
            raise SqlError(f"Nested namespaces are not supported: {table.sql(dialect='spark')}")
        if table.db and table.db.lower() != CATALOG_NAME:
            return None
        return table.name

    def _use(self, tree: exp.Use, text: str) -> DataFrame:
        target = tree.this
        if not isinstance(target, exp.Table):
            return self._spark_sql(text)
        if not target.db and target.name.lower() == CATALOG_NAME:
            self._paimon()
            self.current_database = DEFAULT_DATABASE
            return _empty(self.spark)
        database = self._database_name(target)
        if database is None:
            return self._spark_sql(text)
        if not is_system_database(database) and not self._paimon().database_exists(database):
            raise DatabaseNotExist(f"Database {database} does not exist")
        self.current_database = database
        return _empty(self.spark)

    def _refuse_paimon_view(self, statement: str, view: exp.Table) -> None:
        """A permanent view in the Paimon catalog: Paimon's filesystem catalog has none
        (`Catalog.createView` / `dropView` are unsupported there), so CREATE VIEW and DROP
        VIEW of one are refused, as Paimon-Spark refuses them; a temporary view, or a view
        of another catalog (`spark_catalog.db.v`, `global_temp.v`), stays Spark's."""
        catalog, database = view.catalog, view.db
        if catalog and catalog.lower() != CATALOG_NAME:
            return
        global_temp = str(self.spark.conf.get("spark.sql.globalTempDatabase", "global_temp"))
        if not catalog and database and database.lower() == global_temp.lower():
            return
        shown = f"{CATALOG_NAME}.{database or self.current_database}.{view.name}"
        if statement == "DROP VIEW":
            raise SqlError(
                f"{statement} {shown}: no temporary view has that name, and Paimon's "
                "filesystem catalog has no views"
            )
        raise SqlError(f"{statement} {shown}: {_NO_VIEWS}")

    def _database_statement(self, statement: DatabaseStatement) -> DataFrame:
        """CREATE / DROP / DESCRIBE DATABASE of the Paimon catalog as its filesystem catalog
        does them (`sql_ext.metadata.databases`); of another catalog: Spark's."""
        database = paimon_database(statement.name)
        if database is None:
            return self._spark_sql(statement.text)
        catalog = self._paimon()
        if statement.action == "describe":
            if not is_system_database(database) and not catalog.database_exists(database):
                raise DatabaseNotExist(f"Database {database} does not exist")
            result = describe_database(CATALOG_NAME, database, statement.extended)
            return local_dataframe(self.spark, result.rows, result.spark_schema())
        if is_system_database(database):
            raise SqlError(f"{statement.shown}: {SYSTEM_DATABASE_ERROR}")
        if statement.action == "create":
            check_create(statement)
            if statement.comment is not None or statement.properties:
                _LOG.warning(
                    "%s: Paimon's filesystem catalog keeps no database comment or "
                    "properties; they are discarded",
                    statement.shown,
                )
            catalog.create_database(database, ignore_if_exists=statement.if_exists)
            return _empty(self.spark)
        catalog.drop_database(
            database, ignore_if_not_exists=statement.if_exists, cascade=statement.cascade
        )
        if database == self.current_database:
            self.current_database = DEFAULT_DATABASE
        return _empty(self.spark)

    def _describe(self, statement: QueryStatement, tree: exp.Describe, text: str) -> DataFrame:
        """DESCRIBE of a Paimon table (`sql_ext.metadata.table_info`); of anything else
        (system tables, travelled versions, Spark's tables), the view or Spark's own."""
        table = tree.this
        if (
            isinstance(table, exp.Table)
            and isinstance(table.this, exp.Identifier)
            and not _has_paimon_syntax(table)
        ):
            target = self._resolve(table)
            if target is not None and is_system_database(target[0]):
                columns = global_table_columns(target[1], self.catalog.options) or ()
                result = describe_system_table(tuple((c.name, c.type, c.nullable) for c in columns))
                return local_dataframe(self.spark, result.rows, result.spark_schema())
            if target is not None:
                loaded, _ = travel_table(self._load(*target))
                result = describe_statement(tree, loaded, ".".join(target), text)
                return local_dataframe(self.spark, result.rows, result.spark_schema())
        return self._query(statement, schema_only=True)

    def _show_load(self, database: str, name: str) -> FileStoreTable | None:
        if not self._table_exists(database, name):
            return None
        return self._load(database, name)

    def _show(self, rest: str) -> DataFrame | None:
        """SHOW of the Paimon catalog (`sql_ext.metadata.show`); None: Spark's."""
        shown = show_catalog(rest, self._paimon, self.current_database, self._show_load)
        if shown is None:
            return None
        return local_dataframe(self.spark, shown.rows, shown.spark_schema())

    def _analyze(self, tree: exp.Analyze, text: str) -> DataFrame:
        spec = analyze_spec(tree, text)
        target = self._resolve(spec.table)
        if target is None:
            return self._spark_sql(text)
        table = self._load(*target, writes=True)
        analyze_table(self.spark, table, spec, f"{CATALOG_NAME}.{target[0]}.{target[1]}")
        return _empty(self.spark)

    def _refresh(self, table: exp.Table, text: str) -> DataFrame:
        """REFRESH TABLE of a Paimon table only checks that it exists: every statement reads
        Paimon tables afresh, so there is no cache to drop."""
        target = self._resolve(table) if not _has_paimon_syntax(table) else None
        if target is None:
            return self._spark_sql(text)
        self._load(*target)
        return _empty(self.spark)

    def _dml(
        self,
        statement: QueryStatement,
        tree: exp.Delete | exp.TruncateTable | exp.Update | exp.Merge,
        text: str,
    ) -> DataFrame:
        """TRUNCATE TABLE, DELETE FROM, UPDATE and MERGE INTO of a Paimon table
        (`sql_ext.dml`, `sql_ext.update`, `sql_ext.merge_into`); others: Spark's.

        Every error of one on a Paimon table (or on a table found nowhere) is one line
        naming the statement: `UPDATE paimon.db.t: ...`."""
        kind = _DML_NAMES[tree.key]
        tables = [tree.this] if not isinstance(tree, exp.TruncateTable) else tree.expressions
        if len(tables) != 1 or not isinstance(tables[0], exp.Table):
            return self._unsupported_on_paimon(tree, text)
        node = tables[0]
        writable = not _has_paimon_syntax(node) or (
            _is_branch_name(node.name) and node.args.get("version") is None
        )
        target = self._target(node) if writable else None
        if target is None or not self._table_exists(*target):
            try:
                return self._unsupported_on_paimon(tree, text)
            except SqlError as e:
                raise _named(e, kind) from None
        shown = f"{CATALOG_NAME}.{target[0]}.{target[1]}"
        try:
            self._run_dml(statement, tree, target, node)
        except PaimonError as e:
            raise _named(e, f"{kind} {shown}") from None
        except PySparkException as e:
            raise SqlError(f"{kind} {shown}: {first_line(e)}") from None
        return _empty(self.spark)

    def _run_dml(
        self,
        statement: QueryStatement,
        tree: exp.Delete | exp.TruncateTable | exp.Update | exp.Merge,
        target: tuple[str, str],
        node: exp.Table,
    ) -> None:
        table = self._load(*target, writes=True)
        shown = f"{CATALOG_NAME}.{target[0]}.{target[1]}"
        if isinstance(tree, exp.TruncateTable):
            truncate(self.spark, table, tree, shown)
            return
        alias = node.alias or node.name
        written = Target(table, target[0], target[1], alias, node.db or None)

        def read(query: str) -> DataFrame:
            return self._query(parse_statement(query))

        if isinstance(tree, exp.Delete):
            delete(self.spark, written, tree, read)
        elif isinstance(tree, exp.Update):
            update(self.spark, written, tree, read)
        else:
            source = self._merge_source(statement, tree)
            flags = self._merge_schema_flags(*target)
            merge_into(self.spark, written, tree, source, read, flags, self._case_sensitive())

    def _merge_source(self, statement: QueryStatement, tree: exp.Merge) -> Source:
        """The rows MERGE INTO reads from: a table (Paimon's or Spark's) or a subquery,
        read through the session as any query is (the subquery's text as written)."""
        using = tree.args.get("using")
        alias = source_alias(using)
        if isinstance(using, exp.Table):
            if using.args.get("db") is None and using.name.lower() == CATALOG_NAME:
                raise SqlError(f"MERGE INTO: invalid source {using.sql(dialect='spark')}")
            rows = self._query(parse_statement(source_query(using)))
            return Source(rows, alias, using)
        query = using.this if isinstance(using, exp.Subquery) else using
        if isinstance(query, (exp.Query, exp.Values)):
            span = using_span(statement.parsed)
            if span is None:
                raise SqlParseError("MERGE INTO: cannot find the source query's text")
            rows = self._query(statement, query, fragment=Fragment((span,)))
            return Source(_with_column_names(rows, using, alias), alias)
        shown = using.sql(dialect="spark") if using is not None else "nothing"
        raise SqlError(f"MERGE INTO: expected a table or (subquery) after USING, got {shown}")

    def _drop_table(self, tree: exp.Drop, text: str) -> DataFrame:
        (table,) = tree.args.get("tables") or [tree.this]
        if tree.args.get("temporary") or not isinstance(table, exp.Table):
            return self._spark_sql(text)
        target = self._target(table)
        if target is None:
            return self._spark_sql(text)
        database, name = target
        self._paimon().drop_table(f"{database}.{name}", bool(tree.args.get("exists")))
        return _empty(self.spark)

    def _create_table(self, statement: QueryStatement) -> DataFrame:
        tree = statement.tree
        assert isinstance(tree, exp.Create)
        spec = table_spec(tree)
        if spec.temporary or (spec.provider not in (None, PAIMON_PROVIDER)):
            if spec.target.catalog.lower() == CATALOG_NAME:
                raise SqlError(
                    f"Paimon tables are created USING paimon, not {spec.provider or 'TEMPORARY'}"
                )
            return self._query(statement)
        target = self._target(spec.target, must_exist=False)
        if target is None:
            return self._query(statement)
        database, name = target
        identifier = f"{database}.{name}"
        catalog = self._paimon()
        spec = check_location(spec, f"{CATALOG_NAME}.{identifier}", catalog.table_path(identifier))
        if not catalog.database_exists(database):
            raise DatabaseNotExist(f"Database {database} does not exist")
        if spec.like is not None:
            return self._create_like(spec, identifier)
        if spec.replace and catalog.table_exists(identifier):
            return self._replace_table(statement, spec, database, name)
        if spec.replace_only:
            raise TableNotExist(
                f"REPLACE TABLE {CATALOG_NAME}.{identifier}: the table does not exist "
                "(CREATE OR REPLACE TABLE creates it)"
            )
        if spec.query is None:
            catalog.create_table(identifier, spec.schema(), ignore_if_exists=spec.if_not_exists)
            return _empty(self.spark)
        if catalog.table_exists(identifier):
            if spec.if_not_exists:
                return _empty(self.spark)
            raise TableAlreadyExist(f"Table {identifier} already exists")
        source = self._query(statement, spec.query, fragment=query_fragment(tree))
        table = catalog.create_table(identifier, spec.schema(_query_fields(source)))
        self._fill_new_table(table, database, name, source)
        return _empty(self.spark)

    def _fill_new_table(
        self, table: FileStoreTable, database: str, name: str, source: DataFrame
    ) -> None:
        """Write a CTAS / RTAS query's rows into the table just created; a failed write
        drops the table again, so the statement leaves nothing behind."""
        try:
            table = self._with_dynamic_options(table, database, name, writes=True)
            write_dataframe(table, source, overwrite=False)
        except BaseException:
            self._paimon().drop_table(f"{database}.{name}", ignore_if_not_exists=True)
            raise

    def _replace_table(
        self, statement: QueryStatement, spec: TableSpec, database: str, name: str
    ) -> DataFrame:
        """REPLACE TABLE / CREATE OR REPLACE TABLE [AS SELECT] of an existing Paimon table,
        as Paimon-Spark does it (`sql_ext.replace`): everything is checked and the query's
        rows written before the table changes."""
        tree = statement.tree
        identifier = f"{database}.{name}"
        existing = self._load(database, name, writes=True)
        source = None
        if spec.query is None:
            schema = spec.schema()
        else:
            source = self._query(statement, spec.query, fragment=query_fragment(tree))
            schema = spec.schema(_query_fields(source))
        plan = plan_replace(existing, schema)
        if plan.in_place:
            staged = plan.staged()
            if source is None:
                replace_in_place(staged)
            else:
                staged = self._with_dynamic_options(staged, database, name, writes=True)
                write_dataframe(
                    staged, source, fresh=True, before_commit=lambda: replace_in_place(staged)
                )
            return _empty(self.spark)
        if spec.query is not None and self._reads_table(spec.query, (database, name)):
            raise SqlError(SELF_REFERENCE.format(name=f"{CATALOG_NAME}.{identifier}"))
        catalog = self._paimon()
        catalog.drop_table(identifier)
        table = catalog.create_table(identifier, schema)
        if source is not None:
            self._fill_new_table(table, database, name, source)
        return _empty(self.spark)

    def _reads_table(self, query: exp.Expr, target: tuple[str, str]) -> bool:
        """Whether `query` reads the data of the Paimon table `target` (system tables aside)."""
        for table in table_nodes(query):
            if not isinstance(table.this, exp.Identifier) or _is_cte(table):
                continue
            if "$" in table.name:
                continue
            if table.args.get("version") is not None:
                found: tuple[str, str] | None = (self._paimon_database(table), table.name)
            else:
                found = self._resolve(table)
            if found == target:
                return True
        return False

    def _create_like(self, spec: TableSpec, identifier: str) -> DataFrame:
        assert spec.like is not None
        source = self._resolve(spec.like)
        shown = spec.like.sql(dialect="spark")
        if source is None:
            raise SqlError(f"CREATE TABLE {identifier} LIKE {shown}: {shown} is no Paimon table")
        table = self._load(*source)
        schema = like_schema(table, spec, f"{CATALOG_NAME}.{source[0]}.{source[1]}")
        self._paimon().create_table(identifier, schema, ignore_if_exists=spec.if_not_exists)
        return _empty(self.spark)

    def _case_sensitive(self) -> bool:
        return str(self.spark.conf.get("spark.sql.caseSensitive", "false")).lower() == "true"

    def _merge_schema_flags(self, database: str, name: str) -> MergeSchema:
        """The ``spark.paimon.write.merge-schema`` settings that apply to a table."""
        options = table_options(paimon_confs(self.spark), CATALOG_NAME, database, name)
        return MergeSchema.of({k: v for k, (v, _) in options.items()})

    def _merge_schema(
        self, table: FileStoreTable, database: str, name: str, source: DataFrame
    ) -> Evolution:
        """The schema evolution ``spark.paimon.write.merge-schema`` asks of a write by name."""
        flags = self._merge_schema_flags(database, name)
        return plan_evolution(table, source.schema, flags, self._case_sensitive())

    def _insert(self, statement: QueryStatement) -> DataFrame:
        tree = statement.tree
        assert isinstance(tree, exp.Insert)
        spec = insert_spec(tree)
        target = self._target(spec.target)
        if target is None:
            return self._query(statement)
        table = self._load(*target, writes=True)
        fragment = with_default_keywords(statement.parsed, tree, query_fragment(tree))
        source = self._query(statement, spec.source, fragment=fragment)
        evolution = None
        if spec.by_name:  # only writes by name merge schemas (`sql_ext.merge_schema`)
            evolution = self._merge_schema(table, *target, source)
            table = evolution.table
            if evolution.changes:
                source = align_nested(table, source, self._case_sensitive())
        rows = insert_dataframe(table, spec, source)
        if evolution is not None and evolution.changes:
            evolution.commit()
            table = self._load(*target, writes=True)
        overwrite: Overwrite = False
        if spec.overwrite:
            mode = self.spark.conf.get("spark.sql.sources.partitionOverwriteMode", "static")
            if str(mode).lower() == "dynamic" and table.schema.partition_keys:
                overwrite = True
            else:
                overwrite = static_partition(self.spark, table, spec.static)
        write_dataframe(table, rows, overwrite)
        return _empty(self.spark)


def _query_fields(source: DataFrame) -> list[Any]:
    """The Paimon fields of a CTAS / RTAS query's columns: all nullable, as Spark's
    `query.schema.asNullable` (primary-key columns become NOT NULL in the schema)."""
    nullable = st.StructType(
        [st.StructField(f.name, f.dataType, True, f.metadata) for f in source.schema.fields]
    )
    return from_spark_schema(nullable)


def _with_column_names(rows: DataFrame, using: exp.Expr, alias: str) -> DataFrame:
    """The MERGE source's rows with the column names its alias gives (`s(a, b)`), as Spark
    names a `(VALUES ...)` or `(subquery)` source; the names must match its columns."""
    alias_node = using.args.get("alias")
    names = [c.name for c in alias_node.columns] if alias_node is not None else []
    if not names:
        return rows
    if len(names) != len(rows.columns):
        raise SqlError(
            f"MERGE INTO: source {alias} has {len(rows.columns)} columns but its alias gives "
            f"{len(names)} names ({', '.join(names)})"
        )
    return rows.toDF(*names)


def _table(parts: list[str]) -> exp.Table:
    """`[catalog.][db.]name` as a table node."""
    names = [exp.to_identifier(p) for p in parts]
    catalog, db = ([None] * (3 - len(names)) + names)[:2]
    return exp.Table(this=names[-1], db=db, catalog=catalog)


def _command_name(text: str, parts: list[str]) -> str | None:
    """The words naming a statement other than a query (`SHOW TBLPROPERTIES`, `DESCRIBE`):
    those before the table name; None for queries and DML, whose syntax was the problem."""
    first = text.lstrip().split(None, 1)[0].upper() if text.strip() else ""
    if first.startswith("(") or first in _QUERY_WORDS:
        return None
    name = re.search(rf"(?i)[`\s.]{re.escape(parts[0])}\b", text)
    words = (text[: name.start()] if name else first).split()
    shown = " ".join(w.upper() for w in words if w.isalpha())
    return shown if 0 < len(shown) <= 40 else first


def _tokenize(text: str) -> list[Token]:
    """Tokens of `text`, or none when it does not tokenize (the parser then says why)."""
    try:
        return _TOKENIZER(dialect=PaimonSpark()).tokenize(text)
    except TokenError:
        return []

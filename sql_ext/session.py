"""`PaimonSession`: Spark SQL with a Paimon catalog named `paimon` as the current catalog.

Each statement is parsed once (`sql_ext.syntax.parse.parse_statement`) into its family's
statement type and run by that family's module (`sql_ext.statements.routes.ROUTES`): CALL,
database statements, CREATE/DROP TABLE, INSERT and row-level DML on Paimon tables run on the
metadata core; statements that read Paimon tables are rewritten to read temporary views
holding the rows of the snapshot they ask for (`sql_ext.read_rewrite`), then run by Spark; a
statement without Paimon tables or syntax is handed to Spark verbatim. This module keeps the
public API, the Spark bridge the families use (`sql_ext.statements.context.Session`) and the
entry of the read rewrite.

Name resolution follows Spark with `paimon` as the current catalog: `paimon.db.t` and `db.t`
are Paimon tables, an unqualified `t` is a temporary view if one has that name, else the table
of the current Paimon database. Names that are no Paimon table (`spark_catalog.db.t`, a Spark
table) stay with Spark. CTE names are never tables.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from pyspark.errors import AnalysisException, ParseException, PySparkException
from pyspark.sql import SparkSession
from pyspark.sql import types as st
from sqlglot import exp

from paimon_core.catalog import FileSystemCatalog
from paimon_core.operations.commit import commit_operation
from procedures.base import ProcedureResult
from sql_ext.datapath import source as data_source
from sql_ext.datapath.registry import ensure_registered
from sql_ext.dynamic_options import paimon_confs
from sql_ext.errors import Rewrite, SqlError, first_line
from sql_ext.errors import quiet_query_logs as _quiet_query_logs
from sql_ext.jvm import is_temp_view as jvm_temp_view
from sql_ext.max_pt import has_max_pt, max_partition, replace_max_pt
from sql_ext.metadata.config import (
    CATALOG_NAME,
    WAREHOUSE_CONF,
    resolve_catalog_options,
    resolve_warehouse,
)
from sql_ext.read_rewrite import pushed_count, rewrite_reads, unparsed_paimon_table
from sql_ext.snapshot_operation import snapshot_operation
from sql_ext.splice import splice
from sql_ext.statements.context import (
    StatementContext,
    has_paimon_syntax,
    is_cte,
)
from sql_ext.statements.routes import route
from sql_ext.syntax.dialect import PaimonSpark
from sql_ext.syntax.parse import (
    Fragment,
    QueryStatement,
    SqlParseError,
    Statement,
    code_of,
    parse_statement,
    split_statements,
    table_nodes,
)
from sql_ext.syntax.variables import substitute_variables
from sql_ext.views import (
    ViewScope,
    local_dataframe,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = [
    "CATALOG_NAME",
    "WAREHOUSE_CONF",
    "PaimonSession",
    "resolve_catalog_options",
    "resolve_warehouse",
]

_STATEMENT_NAMES = {"truncatetable": "TRUNCATE TABLE", "alter": "ALTER TABLE"}
_USING_PAIMON = re.compile(r"\bUSING\s+`?paimon\b", re.IGNORECASE)


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
        self.ctx = StatementContext(
            self.catalog,
            lambda: paimon_confs(self.spark),
            lambda: self.spark.conf.get("spark.sql.session.timeZone", None),
            is_temp_view=self.is_temp_view,
            spark_table_exists=self.spark.catalog.tableExists,
        )
        self.pinned: list[str] = []
        # The pinned reads of each temporary view (lower-case name), dropped with it.
        self._view_pins: dict[str, list[str]] = {}
        data_source.register(
            spark, {"warehouse": self.warehouse, **self.catalog.options}, lazy=sql_only
        )

    # ------------------------------------------------------------------------ public

    @property
    def current_database(self) -> str:
        """The current database of the Paimon catalog (`USE`)."""
        return self.ctx.current_database

    @current_database.setter
    def current_database(self, database: str) -> None:
        self.ctx.current_database = database

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
        with commit_operation(snapshot_operation(statement)):
            return self._statement(statement, parsed)

    def run_script(self, text: str) -> Iterator[tuple[str, DataFrame]]:
        """Each statement of `text` with its result, run one at a time as the caller iterates.

        Stops at the first error (which is raised); earlier statements stay done.
        """
        for statement in split_statements(text):
            yield statement, self.sql(statement)

    def stop(self) -> None:
        """Drop the views this session kept; stop Spark if this session started it."""
        for name in self.pinned:
            self.spark.catalog.dropTempView(name)
        self.pinned.clear()
        self._view_pins.clear()
        if self._owns_spark:
            self.spark.stop()

    # -------------------------------------------------------------------- dispatch

    def _statement(self, text: str, parsed: Statement | None = None) -> DataFrame:
        """Parse (unless `parsed`), expand `sys.max_pt`, and run on the statement's route."""
        text = code_of(substitute_variables(text, self._conf))
        statement = parse_statement(text) if parsed is None else parsed
        if isinstance(statement, QueryStatement) and has_max_pt(statement.tree):
            statement = parse_statement(
                replace_max_pt(
                    statement.parsed,
                    statement.tree,
                    CATALOG_NAME,
                    self._max_pt,
                    statement.tokens or None,
                )
            )
        return route(statement).run(self, statement)

    # ------------------------------------------------------------------ Spark bridge

    def _conf(self, key: str) -> str | None:
        """The session's setting `key`; None when unset."""
        try:
            return self.spark.conf.get(key, None)
        except PySparkException:
            return None

    def frame(self, result: ProcedureResult) -> DataFrame:
        """A result computed on the driver as a DataFrame."""
        return local_dataframe(self.spark, result.rows, result.spark_schema())

    def empty(self) -> DataFrame:
        """The result of a statement that returns no rows."""
        return local_dataframe(self.spark, [], st.StructType([]))

    def spark_sql(self, text: str, rewrite: Rewrite | None = None) -> DataFrame:
        """Run `text` on Spark; its errors are raised (restated in the user's terms), never
        also logged, since the caller or the shell reports each error once."""
        if _USING_PAIMON.search(text):  # Spark resolves the `paimon` source itself
            ensure_registered(self.spark)
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
            unparsed_paimon_table(self, name, text)
            raise SqlError(
                f"Table or view {name} not found: neither a Paimon table (current database "
                f"'{self.current_database}') nor a Spark table or view"
            ) from None

    def _max_pt(self, name: str) -> str:
        """The value `sys.max_pt('<name>')` stands for (`sql_ext.max_pt`)."""
        try:
            node = exp.to_table(name, dialect=PaimonSpark)
        except Exception:
            raise SqlError(f"sys.max_pt('{name}'): not a table name") from None
        if node.catalog and node.catalog.lower() != CATALOG_NAME:
            raise SqlError(f"sys.max_pt('{name}'): '{node.catalog}' is not a Paimon catalog")
        database = node.db or self.current_database
        table = self.ctx.load(database, node.name)
        shown = f"{CATALOG_NAME}.{database}.{node.name}"
        return max_partition(table, name, shown, self.ctx.time_zone())

    def own_pins(self, view: str, pins: list[str]) -> None:
        """``view`` now holds ``pins`` (none once dropped): the reads its earlier definition
        pinned are dropped, nothing else refers to them (a view that reads ``view`` names
        it, not its reads)."""
        for name in self._view_pins.pop(view.lower(), []):
            self.spark.catalog.dropTempView(name)
            self.pinned.remove(name)
        if pins:
            self._view_pins[view.lower()] = pins

    def is_temp_view(self, name: str) -> bool:
        """Whether `name` is a temporary view of the session (which hides a Paimon table
        of that name). Asked of Spark's session catalog directly: `spark.catalog.getTable`
        raises for a name that is no view, and PySpark's conversion of that error costs
        ~30 py4j round trips, on every statement that names a table without its database."""
        return jvm_temp_view(self.spark, name)

    # ------------------------------------------------------------------------ reads

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
    ) -> DataFrame:
        """Run a statement that may read Paimon tables (`refusal`: the error if it does).

        `tree` and `fragment` pick a query inside the statement (the source of an INSERT);
        by default it is the whole statement.
        """
        if tree is None and fragment is None and not (schema_only or pin or prefix or refusal):
            counted = pushed_count(self, statement.tree)
            if counted is not None:
                return counted
        tree = statement.tree if tree is None else tree
        with ViewScope(self.spark, self.pinned) as scope:
            rewritten = rewrite_reads(
                self,
                statement.parsed,
                tree,
                scope,
                fragment,
                schema_only,
                refusal,
                statement.tokens or None,
            )
            if rewritten is None:
                if fragment is None:
                    return self.spark_sql(prefix + statement.text)
                return self.spark_sql(
                    prefix + splice(statement.parsed, fragment.edits, fragment.pieces).text
                )
            scope.pin = pin
            rewrite = Rewrite(rewritten, statement.parsed, len(prefix), scope.shown)
            return self.spark_sql(prefix + rewritten.text, rewrite)

    def unsupported_on_paimon(self, tree: exp.Expr, text: str) -> DataFrame:
        """Run `text` on Spark unless it names a Paimon table, which it cannot handle."""
        for table in table_nodes(tree):
            if not isinstance(table.this, exp.Identifier) or is_cte(table):
                continue
            if has_paimon_syntax(table):
                target: tuple[str, str] | None = (self.ctx.paimon_database(table), table.name)
            else:
                target = self.ctx.resolve(table)
            if target is not None:
                kind = _STATEMENT_NAMES.get(tree.key, tree.key.upper())
                raise SqlError(
                    f"{kind} is not supported on Paimon table "
                    f"{CATALOG_NAME}.{target[0]}.{target[1]}"
                )
        return self.spark_sql(text)

    def case_sensitive(self) -> bool:
        """Whether Spark compares column names case-sensitively (`spark.sql.caseSensitive`)."""
        return str(self.spark.conf.get("spark.sql.caseSensitive", "false")).lower() == "true"

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
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
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
)
from paimon_core.time_travel import travel_table
from sql_ext.alter import alter_database, alter_table
from sql_ext.alter_syntax import is_alter, parse_head
from sql_ext.analyze import analyze_spec, analyze_table
from sql_ext.create_like import like_schema, refuse_location
from sql_ext.datapath import source as data_source
from sql_ext.datapath.pushdown import needed_names, table_predicate
from sql_ext.datapath.write import Overwrite, write_dataframe
from sql_ext.dialect import SPAN, PaimonSpark, quote_identifier
from sql_ext.dml import delete, truncate
from sql_ext.dynamic_options import paimon_confs, with_dynamic_options
from sql_ext.errors import QUERY_CONTEXT_LOGGERS, Rewrite, SqlError, first_line
from sql_ext.insert import insert_dataframe, insert_spec, with_default_keywords
from sql_ext.metadata.config import (
    CATALOG_NAME,
    WAREHOUSE_CONF,
    resolve_catalog_options,
    resolve_warehouse,
)
from sql_ext.metadata.engine import run_call, run_tag_ddl
from sql_ext.metadata.show import show_catalog
from sql_ext.metadata.table_info import describe_statement
from sql_ext.metadata_columns import requested_metadata, star_edits
from sql_ext.parse import (
    CallStatement,
    Fragment,
    QueryStatement,
    SqlParseError,
    Statement,
    TableRef,
    parse_statement,
    query_fragment,
    replace_tables,
    split_statements,
    table_nodes,
)
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

    from paimon_core.snapshot import Snapshot
    from paimon_core.table import FileStoreTable

__all__ = [
    "CATALOG_NAME",
    "WAREHOUSE_CONF",
    "PaimonSession",
    "resolve_catalog_options",
    "resolve_warehouse",
]

_EXPLAIN_MODES = frozenset({"EXTENDED", "CODEGEN", "COST", "FORMATTED"})
_DATABASE_KINDS = frozenset({"DATABASE", "SCHEMA", "NAMESPACE"})
_TOKENIZER = PaimonSpark.Tokenizer
_PERMANENT_VIEW = "Permanent views over Paimon tables are not supported: use CREATE TEMPORARY VIEW"
_STATEMENT_NAMES = {"truncatetable": "TRUNCATE TABLE", "alter": "ALTER TABLE"}
_SUBSTITUTE_CONF = "spark.sql.variable.substitute"
_VARIABLE = re.compile(r"\$\{(?:(\w+?):)?(\S+?)\}")  # Spark's ConfigReader.REF_RE
_CONF_PREFIXES = frozenset({"spark", "sparkconf", "hivevar", "hiveconf"})
_QUERY_WORDS = frozenset({"SELECT", "WITH", "FROM", "VALUES", "TABLE", "INSERT"})


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
    ) -> None:
        self._owns_spark = spark is None
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
        data_source.register(spark, {"warehouse": self.warehouse, **self.catalog.options})

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
        if parsed is not None and parsed.text != statements[0]:
            parsed = None
        return self._statement(statements[0], parsed)

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
        text = self._substitute(text)
        if is_tag_ddl(text):
            return self._tag_ddl(text)
        if is_alter(text):
            return self._alter(text)
        explained = self._explain(text)
        if explained is not None:
            return explained
        statement = parse_statement(text) if parsed is None else parsed
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
        if isinstance(tree, exp.Create):
            kind = str(tree.args.get("kind") or "").upper()
            if kind in _DATABASE_KINDS:
                return self._create_database(tree, text)
            if kind == "TABLE":
                return self._create_table(statement)
            if kind == "VIEW":
                properties = tree.args.get("properties")
                temporary = properties is not None and any(
                    isinstance(p, exp.TemporaryProperty) for p in properties.expressions
                )
                refusal = None if temporary else _PERMANENT_VIEW
                return self._query(statement, pin=True, refusal=refusal)
            return self._query(statement)
        if isinstance(tree, exp.Drop):
            kind = str(tree.args.get("kind") or "").upper()
            if kind in _DATABASE_KINDS:
                return self._drop_database(tree, text)
            if kind == "TABLE":
                return self._drop_table(tree, text)
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
        if isinstance(tree, (exp.Delete, exp.TruncateTable)):
            return self._dml(tree, text)
        return self._unsupported_on_paimon(tree, text)

    def _spark_sql(self, text: str, rewrite: Rewrite | None = None) -> DataFrame:
        """Run `text` on Spark; its errors are raised (restated in the user's terms), never
        also logged, since the caller or the shell reports each error once."""
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

    def _is_temp_view(self, name: str) -> bool:
        try:
            return bool(self.spark.catalog.getTable(quote_identifier(name)).isTemporary)
        except AnalysisException:
            return False

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
        resolved = database or self.current_database
        if self._table_exists(resolved, name):
            if not database and self._is_temp_view(name):
                return None
            return resolved, name
        return None

    def _load(
        self, database: str, name: str, *, scoped_as: str | None = None, writes: bool = False
    ) -> FileStoreTable:
        """The table with the session's `spark.paimon.*` dynamic options on top; `scoped_as`
        is the name table-scoped settings must use (`t$files` for a system table)."""
        table = self.catalog.get_table(f"{database}.{name}")
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
        if "$" in name:
            raise SqlError(f"Cannot write to {name}: system tables and branches are read-only")
        resolved = database or self.current_database
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
            id(t): requested_metadata(tree, t)
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
        system = "" if ref.system_table is None else f"${ref.system_table}"
        table = self._load(database, name, scoped_as=name + system)
        if ref.branch is not None:
            raise SqlError(f"Reading branch '{ref.branch}' of {shown} is not supported")
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
        )
        return local_dataframe(self.spark, result.rows, result.spark_schema())

    def _alter(self, text: str) -> DataFrame:
        """ALTER TABLE / DATABASE of the Paimon catalog (`sql_ext.alter`); others: Spark's."""
        head = parse_head(text)
        if head.kind == "DATABASE":
            database = self._database_name(_table(list(head.name)))
            if database is None:
                return self._spark_sql(text)
            alter_database(self._paimon(), database)
        target = self._resolve(_table(list(head.name)))
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
        if not self._paimon().database_exists(database):
            raise DatabaseNotExist(f"Database {database} does not exist")
        self.current_database = database
        return _empty(self.spark)

    def _create_database(self, tree: exp.Create, text: str) -> DataFrame:
        database = self._database_name(tree.this)
        if database is None:
            return self._spark_sql(text)
        self._paimon().create_database(database, ignore_if_exists=bool(tree.args.get("exists")))
        return _empty(self.spark)

    def _drop_database(self, tree: exp.Drop, text: str) -> DataFrame:
        (target,) = tree.args.get("tables") or [tree.this]
        database = self._database_name(target)
        if database is None:
            return self._spark_sql(text)
        self._paimon().drop_database(
            database,
            ignore_if_not_exists=bool(tree.args.get("exists")),
            cascade=bool(tree.args.get("cascade")),
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

    def _dml(self, tree: exp.Delete | exp.TruncateTable, text: str) -> DataFrame:
        """TRUNCATE TABLE / DELETE FROM a Paimon table (`sql_ext.dml`); others: Spark's."""
        tables = [tree.this] if isinstance(tree, exp.Delete) else tree.expressions
        if len(tables) != 1 or not isinstance(tables[0], exp.Table):
            return self._unsupported_on_paimon(tree, text)
        target = self._target(tables[0]) if not _has_paimon_syntax(tables[0]) else None
        if target is None or not self._table_exists(*target):
            return self._unsupported_on_paimon(tree, text)
        table = self._load(*target, writes=True)
        shown = f"{CATALOG_NAME}.{target[0]}.{target[1]}"
        if isinstance(tree, exp.TruncateTable):
            truncate(self.spark, table, tree, shown)
        else:
            delete(self.spark, table, tree, shown, lambda q: self._query(parse_statement(q)))
        return _empty(self.spark)

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
        refuse_location(spec, f"{CATALOG_NAME}.{identifier}")
        catalog = self._paimon()
        if not catalog.database_exists(database):
            raise DatabaseNotExist(f"Database {database} does not exist")
        if spec.like is not None:
            return self._create_like(spec, identifier)
        if spec.query is None:
            catalog.create_table(identifier, spec.schema(), ignore_if_exists=spec.if_not_exists)
            return _empty(self.spark)
        if catalog.table_exists(identifier):
            if spec.if_not_exists:
                return _empty(self.spark)
            raise TableAlreadyExist(f"Table {identifier} already exists")
        source = self._query(statement, spec.query, fragment=query_fragment(tree))
        nullable = st.StructType(
            [st.StructField(f.name, f.dataType, True, f.metadata) for f in source.schema.fields]
        )
        table = catalog.create_table(identifier, spec.schema(from_spark_schema(nullable)))
        try:
            table = self._with_dynamic_options(table, database, name, writes=True)
            write_dataframe(table, source, overwrite=False)
        except BaseException:
            catalog.drop_table(identifier, ignore_if_not_exists=True)
            raise
        return _empty(self.spark)

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
        rows = insert_dataframe(table, spec, source)
        overwrite: Overwrite = False
        if spec.overwrite:
            mode = self.spark.conf.get("spark.sql.sources.partitionOverwriteMode", "static")
            if str(mode).lower() == "dynamic" and table.schema.partition_keys:
                overwrite = True
            else:
                overwrite = static_partition(self.spark, table, spec.static)
        write_dataframe(table, rows, overwrite)
        return _empty(self.spark)


@contextmanager
def _quiet_query_logs() -> Iterator[None]:
    """Hold back PySpark's JSON error log of failing queries (internal ones, reported once)."""
    from pyspark.logger import PySparkLogger

    loggers = [PySparkLogger.getLogger(name) for name in QUERY_CONTEXT_LOGGERS]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


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

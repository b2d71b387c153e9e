"""Queries (SELECT, VALUES, CACHE TABLE): Spark runs them over views of the Paimon tables they read
(the session's read rewrite); without Spark, the SELECTs over `$snapshots`, `$tags`,
`$schemas`, `$options`, `$branches` and the global `sys` tables that
`sql_ext.metadata.query` compiles."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from sql_ext.global_system_tables import (
    global_table_columns,
    global_table_rows,
    is_system_database,
)
from sql_ext.metadata.query import compile_select
from sql_ext.metadata.result import Rows
from sql_ext.statements.context import column_triples
from sql_ext.syntax.parse import table_nodes
from sql_ext.syntax.statements import CacheStatement, ReadStatement
from sql_ext.system_tables import SYSTEM_TABLES, system_table_rows

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from sql_ext.statements.context import Session, StatementContext

QUERIED_SYSTEM_TABLES = frozenset({"snapshots", "tags", "schemas", "options", "branches"})
QUERY_DEFAULTS = {"spark.sql.casesensitive": "false", "spark.sql.orderbyordinal": "true"}
"""Settings the SELECT evaluator assumes; set otherwise, Spark answers the queries."""


def _semantics_are_default(ctx: StatementContext) -> bool:
    settings = {k.lower(): v.strip().lower() for k, v in ctx.settings.items()}
    return all(settings.get(k, v) == v for k, v in QUERY_DEFAULTS.items())


def local(ctx: StatementContext, statement: ReadStatement | CacheStatement) -> Rows | None:
    tree = statement.tree
    if not isinstance(tree, exp.Select) or not _semantics_are_default(ctx):
        return None
    nodes = list(table_nodes(tree))
    refs = statement.paimon_tables
    if len(nodes) == 1 and not refs:
        return _select_global(ctx, tree, nodes[0])
    if len(nodes) != 1 or len(refs) != 1 or refs[0].node is not nodes[0]:
        return None
    ref = refs[0]
    system = (ref.system_table or "").lower()
    if system not in QUERIED_SYSTEM_TABLES:
        return None
    if ref.version is not None or ref.timestamp is not None:
        return None
    database = ctx.database_of(ref.node)
    if database is None:
        return None
    compiled = compile_select(tree, SYSTEM_TABLES[system], ref.node)
    if compiled is None:
        return None
    table = ctx.load_ref(database, ref)
    rows = system_table_rows(table, system, snapshot_id=None, time_zone=ctx.time_zone())
    return Rows(list(compiled.columns), compiled.rows(rows))


def _select_global(ctx: StatementContext, tree: exp.Select, node: exp.Table) -> Rows | None:
    """A SELECT over one global system table (`sys.tables`, ...)."""
    database = ctx.database_of(node)
    if not is_system_database(database) or not isinstance(node.this, exp.Identifier):
        return None
    columns = global_table_columns(node.name, ctx.catalog.options)
    if columns is None:
        return None
    compiled = compile_select(tree, column_triples(columns), node)
    if compiled is None:
        return None
    result = global_table_rows(ctx.paimon(), node.name)
    return Rows(list(compiled.columns), compiled.rows(result.rows))


def run(session: Session, statement: ReadStatement | CacheStatement) -> DataFrame:
    return session.query(statement, pin=isinstance(statement, CacheStatement))

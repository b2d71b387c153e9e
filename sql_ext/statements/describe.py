"""DESCRIBE [TABLE] of a Paimon table (`sql_ext.metadata.table_info`), of a system table or a
global `sys` table; of anything else (travelled versions, queries, Spark's tables), the
schema Spark reads or Spark's own."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from paimon_core.operations.time_travel import travel_table
from sql_ext.errors import SqlError
from sql_ext.global_system_tables import global_table_columns, is_system_database
from sql_ext.metadata.describe import describe_system_table
from sql_ext.metadata.result import Rows
from sql_ext.metadata.table_info import describe_statement
from sql_ext.statements.context import column_triples, has_paimon_syntax
from sql_ext.syntax.statements import DescribeStatement
from sql_ext.system_tables import SYSTEM_TABLES

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from sql_ext.statements.context import Session, StatementContext

DATABASE_KINDS = frozenset({"DATABASE", "SCHEMA", "NAMESPACE"})


def refuse_database_kind(tree: exp.Expr) -> None:
    """A CREATE / DROP / DESCRIBE DATABASE that `sql_ext.syntax.databases` could not read."""
    kind = str(tree.args.get("kind") or "").upper()
    if kind in DATABASE_KINDS:  # `parse_database_statement` reads every one it can
        raise SqlError(f"Cannot read this {tree.key.upper()} {kind} statement")


def local(ctx: StatementContext, statement: DescribeStatement) -> Rows | None:
    tree = statement.tree
    table = tree.this
    if str(tree.args.get("kind") or "TABLE").upper() != "TABLE":
        return None
    if not isinstance(table, exp.Table) or not isinstance(table.this, exp.Identifier):
        return None
    if any(v for k, v in table.args.items() if k not in ("this", "db", "catalog")):
        return None
    database = ctx.database_of(table)
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
        ctx.load_ref(database, ref)
        return Rows.of(describe_system_table(columns))
    if is_system_database(database):
        global_columns = global_table_columns(table.name, ctx.catalog.options)
        if global_columns is None:
            return None
        return Rows.of(describe_system_table(column_triples(global_columns)))
    if not ctx.has_table(database, table.name):
        return None
    moved, _ = travel_table(ctx.load(database, table.name))
    name = f"{database}.{table.name}"
    return Rows.of(describe_statement(tree, moved, name, statement.text))


def run(session: Session, statement: DescribeStatement) -> DataFrame:
    tree = statement.tree
    refuse_database_kind(tree)
    table = tree.this
    if (
        isinstance(table, exp.Table)
        and isinstance(table.this, exp.Identifier)
        and not has_paimon_syntax(table)
    ):
        target = session.ctx.resolve(table)
        if target is not None and is_system_database(target[0]):
            columns = global_table_columns(target[1], session.catalog.options) or ()
            return session.frame(describe_system_table(column_triples(columns)))
        if target is not None:
            loaded, _ = travel_table(session.ctx.load(*target))
            return session.frame(describe_statement(tree, loaded, ".".join(target), statement.text))
    return session.query(statement, schema_only=True)

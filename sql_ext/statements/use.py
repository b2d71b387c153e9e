"""USE of the Paimon catalog or one of its databases (`sys` too); of another catalog: Spark's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from paimon_core.catalog import DEFAULT_DATABASE
from paimon_core.exceptions import DatabaseNotExist
from sql_ext.global_system_tables import is_system_database
from sql_ext.metadata.config import CATALOG_NAME
from sql_ext.metadata.result import NO_RESULT, Rows
from sql_ext.statements.context import database_name
from sql_ext.syntax.statements import UseStatement

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from sql_ext.statements.context import Session, StatementContext


def _use_database(ctx: StatementContext, database: str) -> None:
    if not is_system_database(database) and not ctx.paimon().database_exists(database):
        raise DatabaseNotExist(f"Database {database} does not exist")
    ctx.current_database = database


def local(ctx: StatementContext, statement: UseStatement) -> Rows | None:
    tree = statement.tree
    target = tree.this
    if not isinstance(target, exp.Table) or tree.args.get("kind"):
        return None
    if not target.db and target.name.lower() == CATALOG_NAME:
        ctx.paimon()
        ctx.current_database = DEFAULT_DATABASE
        return NO_RESULT
    if target.catalog:
        return None  # Spark's error for nested namespaces
    if target.db and target.db.lower() != CATALOG_NAME:
        return None
    _use_database(ctx, target.name)
    return NO_RESULT


def run(session: Session, statement: UseStatement) -> DataFrame:
    target = statement.tree.this
    if not isinstance(target, exp.Table):
        return session.spark_sql(statement.text)
    if not target.db and target.name.lower() == CATALOG_NAME:
        session.ctx.paimon()
        session.current_database = DEFAULT_DATABASE
        return session.empty()
    database = database_name(target)
    if database is None:
        return session.spark_sql(statement.text)
    _use_database(session.ctx, database)
    return session.empty()

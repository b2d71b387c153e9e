"""CREATE / DROP / DESCRIBE DATABASE of the Paimon catalog as its filesystem catalog does them
(`sql_ext.metadata.databases`); of another catalog: Spark's."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from paimon_core.catalog import DEFAULT_DATABASE
from paimon_core.exceptions import DatabaseNotExist
from sql_ext.errors import SqlError
from sql_ext.global_system_tables import SYSTEM_DATABASE_ERROR, is_system_database
from sql_ext.metadata.config import CATALOG_NAME
from sql_ext.metadata.databases import check_create, describe_database, paimon_database
from sql_ext.metadata.result import Rows
from sql_ext.syntax.databases import DatabaseStatement

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from procedures.base import ProcedureResult
    from sql_ext.statements.context import Session, StatementContext

_LOG = logging.getLogger(__name__)


def _describe(
    ctx: StatementContext, database: str, statement: DatabaseStatement
) -> ProcedureResult:
    if not is_system_database(database) and not ctx.paimon().database_exists(database):
        raise DatabaseNotExist(f"Database {database} does not exist")
    return describe_database(CATALOG_NAME, database, statement.extended)


def local(ctx: StatementContext, statement: DatabaseStatement) -> Rows | None:
    """DESCRIBE DATABASE of the Paimon catalog; CREATE / DROP DATABASE are left to Spark."""
    database = paimon_database(statement.name)
    if statement.action != "describe" or database is None:
        return None
    return Rows.of(_describe(ctx, database, statement))


def run(session: Session, statement: DatabaseStatement) -> DataFrame:
    database = paimon_database(statement.name)
    if database is None:
        return session.spark_sql(statement.text)
    if statement.action == "describe":
        return session.frame(_describe(session.ctx, database, statement))
    catalog = session.ctx.paimon()
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
        return session.empty()
    catalog.drop_database(
        database, ignore_if_not_exists=statement.if_exists, cascade=statement.cascade
    )
    if database == session.current_database:
        session.current_database = DEFAULT_DATABASE
    return session.empty()

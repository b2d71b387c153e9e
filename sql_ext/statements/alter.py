"""ALTER TABLE / ALTER DATABASE of the Paimon catalog (`sql_ext.alter`); of others: Spark's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sql_ext.metadata.config import CATALOG_NAME
from sql_ext.statements.context import database_name, is_branch_name, table_node
from sql_ext.syntax.alter import AlterHead

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from sql_ext.metadata.result import Rows
    from sql_ext.statements.context import Session, StatementContext


def local(ctx: StatementContext, statement: AlterHead) -> Rows | None:
    return None  # Spark's session runs it: ALTER TABLE may need Spark's types


def run(session: Session, head: AlterHead) -> DataFrame:
    from sql_ext.alter import alter_database, alter_table

    text = head.text
    if head.kind == "DATABASE":
        database = database_name(table_node(list(head.name)))
        if database is None:
            return session.spark_sql(text)
        alter_database(session.ctx.paimon(), database)
    node = table_node(list(head.name))
    if is_branch_name(node.name) and not (node.catalog and node.catalog.lower() != CATALOG_NAME):
        target: tuple[str, str] | None = (node.db or session.current_database, node.name)
    else:
        target = session.ctx.resolve(node)
    if target is None:
        return session.spark_sql(text)
    alter_table(session.spark, session.ctx.paimon(), *target, head)
    return session.empty()

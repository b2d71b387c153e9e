"""DROP TABLE of a Paimon table and DROP VIEW (temporary views are Spark's; the Paimon
filesystem catalog has no views); other DROP statements: Spark's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from sql_ext.statements.context import (
    Session,
)
from sql_ext.statements.create import refuse_paimon_view
from sql_ext.statements.describe import refuse_database_kind
from sql_ext.syntax.statements import (
    DropStatement,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def _drop_table(session: Session, tree: exp.Drop, text: str) -> DataFrame:
    (table,) = tree.args.get("tables") or [tree.this]
    if tree.args.get("temporary") or not isinstance(table, exp.Table):
        return session.spark_sql(text)
    target = session.ctx.target(table)
    if target is None:
        return session.spark_sql(text)
    database, name = target
    session.ctx.paimon().drop_table(f"{database}.{name}", bool(tree.args.get("exists")))
    return session.empty()


def run(session: Session, statement: DropStatement) -> DataFrame:
    tree = statement.tree
    text = statement.text
    refuse_database_kind(tree)
    kind = str(tree.args.get("kind") or "").upper()
    if kind == "TABLE":
        return _drop_table(session, tree, text)
    if kind != "VIEW":
        return session.spark_sql(text)
    (view,) = tree.args.get("tables") or [tree.this]
    if isinstance(view, exp.Table) and not (not view.db and session.is_temp_view(view.name)):
        refuse_paimon_view(session, "DROP VIEW", view)
    result = session.spark_sql(text)
    if isinstance(view, exp.Table) and not view.db:
        session.own_pins(view.name, [])
    return result

"""EXPLAIN: of a query reading Paimon tables, Spark's plan of the rewritten query; of other
statements without Paimon tables, Spark's own."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from sql_ext.errors import SqlError
from sql_ext.syntax.statements import CallStatement, ExplainStatement

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from sql_ext.metadata.result import Rows
    from sql_ext.statements.context import Session, StatementContext


def local(ctx: StatementContext, statement: ExplainStatement) -> Rows | None:
    return None  # plans are Spark's


def run(session: Session, explain: ExplainStatement) -> DataFrame:
    statement = explain.statement
    if isinstance(statement, CallStatement):
        raise SqlError("EXPLAIN of a CALL is not supported")
    if not isinstance(statement.tree, (exp.Query, exp.Values)):
        if statement.paimon_tables:
            raise SqlError("EXPLAIN on Paimon tables is supported for queries only")
        return session.spark_sql(explain.text)
    return session.query(statement, prefix=f"EXPLAIN {explain.mode}")

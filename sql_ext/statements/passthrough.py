"""Every other statement (SET, ADD JAR, CACHE/UNCACHE forms sqlglot keeps as commands, ...):
Spark's; one sqlglot parsed that names a Paimon table is refused with a clear error."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from sql_ext.syntax.statements import PassthroughStatement

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from sql_ext.statements.context import Session


def run(session: Session, statement: PassthroughStatement) -> DataFrame:
    if isinstance(statement.tree, exp.Command):
        return session.spark_sql(statement.text)
    return session.unsupported_on_paimon(statement.tree, statement.text)

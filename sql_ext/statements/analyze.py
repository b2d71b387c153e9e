"""ANALYZE TABLE of a Paimon table (`sql_ext.analyze`); of others: Spark's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from sql_ext.analyze import analyze_spec, analyze_table
from sql_ext.metadata.config import (
    CATALOG_NAME,
)
from sql_ext.statements.context import (
    Session,
)
from sql_ext.syntax.statements import (
    AnalyzeStatement,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def _analyze(session: Session, tree: exp.Analyze, text: str) -> DataFrame:
    spec = analyze_spec(tree, text)
    target = session.ctx.resolve(spec.table)
    if target is None:
        return session.spark_sql(text)
    table = session.ctx.load(*target, writes=True)
    analyze_table(session.spark, table, spec, f"{CATALOG_NAME}.{target[0]}.{target[1]}")
    return session.empty()


def run(session: Session, statement: AnalyzeStatement) -> DataFrame:
    return _analyze(session, statement.tree, statement.text)

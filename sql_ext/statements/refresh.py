"""REFRESH TABLE: of a Paimon table it only checks that the table exists (every statement reads
Paimon tables afresh, there is no cache to drop); of others: Spark's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from sql_ext.statements.context import (
    Session,
    has_paimon_syntax,
)
from sql_ext.syntax.statements import (
    RefreshStatement,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def _refresh(session: Session, table: exp.Table, text: str) -> DataFrame:
    """REFRESH TABLE of a Paimon table only checks that it exists: every statement reads
    Paimon tables afresh, so there is no cache to drop."""
    target = session.ctx.resolve(table) if not has_paimon_syntax(table) else None
    if target is None:
        return session.spark_sql(text)
    session.ctx.load(*target)
    return session.empty()


def run(session: Session, statement: RefreshStatement) -> DataFrame:
    tree = statement.tree
    if isinstance(tree.this, exp.Table):
        return _refresh(session, tree.this, statement.text)
    return session.unsupported_on_paimon(tree, statement.text)

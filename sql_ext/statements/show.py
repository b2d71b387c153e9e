"""SHOW of the Paimon catalog (`sql_ext.metadata.show`, `sql_ext.metadata.show_table`), whether
Spark runs or not; Spark's own SHOW forms (other catalogs, `SHOW FUNCTIONS`, ...): Spark's."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from sql_ext.metadata.result import Rows
from sql_ext.metadata.show import show_catalog
from sql_ext.syntax.statements import ShowStatement

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from paimon_core.table import FileStoreTable
    from procedures.base import ProcedureResult
    from sql_ext.statements.context import Session, StatementContext


def _show(
    ctx: StatementContext, statement: ShowStatement, exists: Callable[[str, str], bool]
) -> ProcedureResult | None:
    def load(database: str, name: str) -> FileStoreTable | None:
        if not exists(database, name):
            return None
        return ctx.load(database, name)

    return show_catalog(
        statement.rest, ctx.paimon, ctx.current_database, load, statement.rest_tokens or None
    )


def local(ctx: StatementContext, statement: ShowStatement) -> Rows | None:
    shown = _show(ctx, statement, ctx.has_table)
    return None if shown is None else Rows.of(shown)


def run(session: Session, statement: ShowStatement) -> DataFrame:
    shown = _show(session.ctx, statement, session.ctx.table_exists)
    if shown is None:
        return session.spark_sql(statement.text)
    return session.frame(shown)

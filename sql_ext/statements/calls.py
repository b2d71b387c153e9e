"""`CALL [paimon.]sys.<procedure>(...)`: the procedure registry (`procedures`) runs it, with the
same rows whether Spark runs or not; Spark's executors do a procedure's data work."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from procedures import call_procedure
from sql_ext.errors import SqlError
from sql_ext.metadata.config import CATALOG_NAME
from sql_ext.metadata.result import Rows
from sql_ext.syntax.statements import CallStatement

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from procedures.base import ProcedureResult
    from sql_ext.statements.context import Session, StatementContext

SPARK_PROCEDURES = frozenset(
    {"compact", "compact_database", "copy", "rescale", "rewrite_file_index"}
)
"""Procedures that read, rewrite or copy data files: left to Spark, whose executors do the work
(the driver only plans and commits)."""


def call(
    ctx: StatementContext,
    statement: CallStatement,
    run_tasks: Callable[[Callable[[Any], Any], Sequence[Any]], list[Any]] | None = None,
) -> ProcedureResult:
    """Run the procedure; ``run_tasks`` runs its data work (Spark tasks), else in process."""
    if statement.catalog and statement.catalog.lower() != CATALOG_NAME:
        raise SqlError(f"Catalog {statement.catalog} does not support procedures")
    return call_procedure(
        statement.procedure,
        statement.args or None,
        statement.positional or None,
        catalog=ctx.paimon(),
        current_database=ctx.current_database,
        time_zone=ctx.time_zone(),
        catalog_name=CATALOG_NAME,
        table_hook=ctx.procedure_table,
        run_tasks=run_tasks,
    )


def local(ctx: StatementContext, statement: CallStatement) -> Rows | None:
    if statement.procedure in SPARK_PROCEDURES:
        return None  # data work: Spark's executors run it
    return Rows.of(call(ctx, statement))


def run(session: Session, statement: CallStatement) -> DataFrame:
    def run_tasks(func: Callable[[Any], Any], tasks: Sequence[Any]) -> list[Any]:
        """A procedure's data work as one Spark job: one task per item, results collected
        to the driver (which commits them once)."""
        if not tasks:
            return []
        rdd = session.spark.sparkContext.parallelize(list(tasks), len(tasks))
        return rdd.map(func).collect()

    return session.frame(call(session.ctx, statement, run_tasks))

"""INSERT INTO / OVERWRITE of a Paimon table: the source query read through the session, written
by the data path (`sql_ext.datapath.write`), schemas merged by name where asked; others: Spark's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from sql_ext.datapath.write import Overwrite, write_dataframe
from sql_ext.dynamic_options import paimon_confs, table_options
from sql_ext.insert import insert_dataframe, insert_spec, with_default_keywords
from sql_ext.merge_schema import Evolution, MergeSchema, align_nested, plan_evolution
from sql_ext.metadata.config import (
    CATALOG_NAME,
)
from sql_ext.statements.context import (
    Session,
)
from sql_ext.syntax.parse import (
    QueryStatement,
    query_fragment,
)
from sql_ext.syntax.statements import (
    InsertStatement,
)
from sql_ext.tables import (
    static_partition,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from paimon_core.table import FileStoreTable


def _insert(session: Session, statement: QueryStatement) -> DataFrame:
    tree = statement.tree
    assert isinstance(tree, exp.Insert)
    spec = insert_spec(tree)
    target = session.ctx.target(spec.target)
    if target is None:
        return session.query(statement)
    table = session.ctx.load(*target, writes=True)
    fragment = with_default_keywords(
        statement.parsed, tree, query_fragment(tree), statement.tokens or None
    )
    source = session.query(statement, spec.source, fragment=fragment)
    evolution = None
    if spec.by_name:  # only writes by name merge schemas (`sql_ext.merge_schema`)
        evolution = _merge_schema(session, table, *target, source)
        table = evolution.table
        if evolution.changes:
            source = align_nested(table, source, session.case_sensitive())
    rows = insert_dataframe(table, spec, source)
    if evolution is not None and evolution.changes:
        evolution.commit()
        table = session.ctx.load(*target, writes=True)
    overwrite: Overwrite = False
    if spec.overwrite:
        mode = session.spark.conf.get("spark.sql.sources.partitionOverwriteMode", "static")
        if str(mode).lower() == "dynamic" and table.schema.partition_keys:
            overwrite = True
        else:
            overwrite = static_partition(session.spark, table, spec.static)
    write_dataframe(table, rows, overwrite)
    return session.empty()


def _merge_schema(
    session: Session, table: FileStoreTable, database: str, name: str, source: DataFrame
) -> Evolution:
    """The schema evolution ``spark.paimon.write.merge-schema`` asks of a write by name."""
    flags = merge_schema_flags(session, database, name)
    return plan_evolution(table, source.schema, flags, session.case_sensitive())


def merge_schema_flags(session: Session, database: str, name: str) -> MergeSchema:
    """The ``spark.paimon.write.merge-schema`` settings that apply to a table."""
    options = table_options(paimon_confs(session.spark), CATALOG_NAME, database, name)
    return MergeSchema.of({k: v for k, (v, _) in options.items()})


def run(session: Session, statement: InsertStatement) -> DataFrame:
    return _insert(session, statement)

"""CREATE [OR REPLACE] TABLE (with AS query or LIKE), REPLACE TABLE and CREATE VIEW: Paimon tables
are created as Paimon-Spark creates them; other tables and temporary views: Spark's."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyspark.sql import types as st
from sqlglot import exp

from paimon_core.exceptions import (
    DatabaseNotExist,
    TableAlreadyExist,
    TableNotExist,
)
from sql_ext.create_like import check_location, like_schema
from sql_ext.datapath.write import write_dataframe
from sql_ext.errors import SqlError
from sql_ext.metadata.config import (
    CATALOG_NAME,
)
from sql_ext.replace import SELF_REFERENCE, plan_replace, replace_in_place
from sql_ext.spark_types import from_spark_schema
from sql_ext.statements.context import (
    Session,
    is_cte,
)
from sql_ext.statements.describe import refuse_database_kind
from sql_ext.syntax.parse import (
    QueryStatement,
    query_fragment,
    table_nodes,
)
from sql_ext.syntax.statements import (
    CreateStatement,
)
from sql_ext.tables import (
    PAIMON_PROVIDER,
    TableSpec,
    table_spec,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from paimon_core.table import FileStoreTable


_NO_VIEWS = (
    "Paimon's filesystem catalog does not support views (only its Hive, JDBC and REST "
    "metastores keep them); use CREATE TEMPORARY VIEW"
)
_PERMANENT_VIEW = "Permanent views over Paimon tables are not supported: use CREATE TEMPORARY VIEW"


def _create_table(session: Session, statement: QueryStatement) -> DataFrame:
    tree = statement.tree
    assert isinstance(tree, exp.Create)
    spec = table_spec(tree)
    if spec.temporary or (spec.provider not in (None, PAIMON_PROVIDER)):
        if spec.target.catalog.lower() == CATALOG_NAME:
            raise SqlError(
                f"Paimon tables are created USING paimon, not {spec.provider or 'TEMPORARY'}"
            )
        return session.query(statement)
    target = session.ctx.target(spec.target, must_exist=False)
    if target is None:
        return session.query(statement)
    database, name = target
    identifier = f"{database}.{name}"
    catalog = session.ctx.paimon()
    spec = check_location(spec, f"{CATALOG_NAME}.{identifier}", catalog.table_path(identifier))
    if not catalog.database_exists(database):
        raise DatabaseNotExist(f"Database {database} does not exist")
    if spec.like is not None:
        return _create_like(session, spec, identifier)
    if spec.replace and catalog.table_exists(identifier):
        return _replace_table(session, statement, spec, database, name)
    if spec.replace_only:
        raise TableNotExist(
            f"REPLACE TABLE {CATALOG_NAME}.{identifier}: the table does not exist "
            "(CREATE OR REPLACE TABLE creates it)"
        )
    if spec.query is None:
        catalog.create_table(identifier, spec.schema(), ignore_if_exists=spec.if_not_exists)
        return session.empty()
    if catalog.table_exists(identifier):
        if spec.if_not_exists:
            return session.empty()
        raise TableAlreadyExist(f"Table {identifier} already exists")
    source = session.query(statement, spec.query, fragment=query_fragment(tree))
    table = catalog.create_table(identifier, spec.schema(_query_fields(source)))
    _fill_new_table(session, table, database, name, source)
    return session.empty()


def _fill_new_table(
    session: Session, table: FileStoreTable, database: str, name: str, source: DataFrame
) -> None:
    """Write a CTAS / RTAS query's rows into the table just created; a failed write
    drops the table again, so the statement leaves nothing behind."""
    try:
        table = session.ctx.with_dynamic_options(table, database, name, writes=True)
        write_dataframe(table, source, overwrite=False)
    except BaseException:
        session.ctx.paimon().drop_table(f"{database}.{name}", ignore_if_not_exists=True)
        raise


def _replace_table(
    session: Session, statement: QueryStatement, spec: TableSpec, database: str, name: str
) -> DataFrame:
    """REPLACE TABLE / CREATE OR REPLACE TABLE [AS SELECT] of an existing Paimon table,
    as Paimon-Spark does it (`sql_ext.replace`): everything is checked and the query's
    rows written before the table changes."""
    tree = statement.tree
    identifier = f"{database}.{name}"
    existing = session.ctx.load(database, name, writes=True)
    source = None
    if spec.query is None:
        schema = spec.schema()
    else:
        source = session.query(statement, spec.query, fragment=query_fragment(tree))
        schema = spec.schema(_query_fields(source))
    plan = plan_replace(existing, schema)
    if plan.in_place:
        staged = plan.staged()
        if source is None:
            replace_in_place(staged)
        else:
            staged = session.ctx.with_dynamic_options(staged, database, name, writes=True)
            write_dataframe(
                staged, source, fresh=True, before_commit=lambda: replace_in_place(staged)
            )
        return session.empty()
    if spec.query is not None and _reads_table(session, spec.query, (database, name)):
        raise SqlError(SELF_REFERENCE.format(name=f"{CATALOG_NAME}.{identifier}"))
    catalog = session.ctx.paimon()
    catalog.drop_table(identifier)
    table = catalog.create_table(identifier, schema)
    if source is not None:
        _fill_new_table(session, table, database, name, source)
    return session.empty()


def _reads_table(session: Session, query: exp.Expr, target: tuple[str, str]) -> bool:
    """Whether `query` reads the data of the Paimon table `target` (system tables aside)."""
    for table in table_nodes(query):
        if not isinstance(table.this, exp.Identifier) or is_cte(table):
            continue
        if "$" in table.name:
            continue
        if table.args.get("version") is not None:
            found: tuple[str, str] | None = (session.ctx.paimon_database(table), table.name)
        else:
            found = session.ctx.resolve(table)
        if found == target:
            return True
    return False


def _create_like(session: Session, spec: TableSpec, identifier: str) -> DataFrame:
    assert spec.like is not None
    source = session.ctx.resolve(spec.like)
    shown = spec.like.sql(dialect="spark")
    if source is None:
        raise SqlError(f"CREATE TABLE {identifier} LIKE {shown}: {shown} is no Paimon table")
    table = session.ctx.load(*source)
    schema = like_schema(table, spec, f"{CATALOG_NAME}.{source[0]}.{source[1]}")
    session.ctx.paimon().create_table(identifier, schema, ignore_if_exists=spec.if_not_exists)
    return session.empty()


def refuse_paimon_view(session: Session, statement: str, view: exp.Table) -> None:
    """A permanent view in the Paimon catalog: Paimon's filesystem catalog has none
    (`Catalog.createView` / `dropView` are unsupported there), so CREATE VIEW and DROP
    VIEW of one are refused, as Paimon-Spark refuses them; a temporary view, or a view
    of another catalog (`spark_catalog.db.v`, `global_temp.v`), stays Spark's."""
    catalog, database = view.catalog, view.db
    if catalog and catalog.lower() != CATALOG_NAME:
        return
    global_temp = str(session.spark.conf.get("spark.sql.globalTempDatabase", "global_temp"))
    if not catalog and database and database.lower() == global_temp.lower():
        return
    shown = f"{CATALOG_NAME}.{database or session.current_database}.{view.name}"
    if statement == "DROP VIEW":
        raise SqlError(
            f"{statement} {shown}: no temporary view has that name, and Paimon's "
            "filesystem catalog has no views"
        )
    raise SqlError(f"{statement} {shown}: {_NO_VIEWS}")


def _query_fields(source: DataFrame) -> list[Any]:
    """The Paimon fields of a CTAS / RTAS query's columns: all nullable, as Spark's
    `query.schema.asNullable` (primary-key columns become NOT NULL in the schema)."""
    nullable = st.StructType(
        [st.StructField(f.name, f.dataType, True, f.metadata) for f in source.schema.fields]
    )
    return from_spark_schema(nullable)


def run(session: Session, statement: CreateStatement) -> DataFrame:
    tree = statement.tree
    refuse_database_kind(tree)
    kind = str(tree.args.get("kind") or "").upper()
    if kind == "TABLE":
        return _create_table(session, statement)
    if kind != "VIEW":
        return session.query(statement)
    properties = tree.args.get("properties")
    temporary = properties is not None and any(
        isinstance(p, exp.TemporaryProperty) for p in properties.expressions
    )
    view = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    if not temporary and isinstance(view, exp.Table):
        refuse_paimon_view(session, "CREATE VIEW", view)
    refusal = None if temporary else _PERMANENT_VIEW
    owner = view.name if temporary and isinstance(view, exp.Table) else None
    pinned = len(session.pinned)
    result = session.query(statement, pin=True, refusal=refusal)
    if owner:
        session.own_pins(owner, session.pinned[pinned:])
    return result

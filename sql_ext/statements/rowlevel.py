"""DELETE FROM, UPDATE, MERGE INTO and TRUNCATE TABLE of a Paimon table (`sql_ext.dml`,
`sql_ext.update`, `sql_ext.merge_into`); of other tables: Spark's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.errors import PySparkException
from sqlglot import exp

from paimon_core.exceptions import (
    PaimonError,
)
from sql_ext.dml import delete, truncate
from sql_ext.errors import SqlError, first_line
from sql_ext.merge_into import (
    Source,
    merge_into,
    source_alias,
    source_query,
    using_span,
)
from sql_ext.metadata.config import (
    CATALOG_NAME,
)
from sql_ext.rowlevel import Target
from sql_ext.statements.context import (
    Session,
    has_paimon_syntax,
    is_branch_name,
)
from sql_ext.statements.insert import merge_schema_flags
from sql_ext.syntax.parse import (
    Fragment,
    QueryStatement,
    SqlParseError,
    parse_statement,
)
from sql_ext.syntax.statements import (
    RowLevelStatement,
)
from sql_ext.update import update

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


_DML_NAMES = {
    "delete": "DELETE FROM",
    "update": "UPDATE",
    "merge": "MERGE INTO",
    "truncatetable": "TRUNCATE TABLE",
}


def _named(error: PaimonError, prefix: str) -> PaimonError:
    """``error`` with its message led by ``prefix`` (the statement), unless it already names
    the statement; of the same type where that type takes a message alone."""
    message = str(error)
    if message.split(" ", 1)[0].upper() == prefix.split(" ", 1)[0]:
        return error
    try:
        return type(error)(f"{prefix}: {message}")
    except TypeError:
        return SqlError(f"{prefix}: {message}")


def _dml(
    session: Session,
    statement: QueryStatement,
    tree: exp.Delete | exp.TruncateTable | exp.Update | exp.Merge,
    text: str,
) -> DataFrame:
    """TRUNCATE TABLE, DELETE FROM, UPDATE and MERGE INTO of a Paimon table
    (`sql_ext.dml`, `sql_ext.update`, `sql_ext.merge_into`); others: Spark's.

    Every error of one on a Paimon table (or on a table found nowhere) is one line
    naming the statement: `UPDATE paimon.db.t: ...`."""
    kind = _DML_NAMES[tree.key]
    tables = [tree.this] if not isinstance(tree, exp.TruncateTable) else tree.expressions
    if len(tables) != 1 or not isinstance(tables[0], exp.Table):
        return session.unsupported_on_paimon(tree, text)
    node = tables[0]
    writable = not has_paimon_syntax(node) or (
        is_branch_name(node.name) and node.args.get("version") is None
    )
    target = session.ctx.target(node) if writable else None
    if target is None or not session.ctx.table_exists(*target):
        try:
            return session.unsupported_on_paimon(tree, text)
        except SqlError as e:
            raise _named(e, kind) from None
    shown = f"{CATALOG_NAME}.{target[0]}.{target[1]}"
    try:
        _run_dml(session, statement, tree, target, node)
    except PaimonError as e:
        raise _named(e, f"{kind} {shown}") from None
    except PySparkException as e:
        raise SqlError(f"{kind} {shown}: {first_line(e)}") from None
    return session.empty()


def _run_dml(
    session: Session,
    statement: QueryStatement,
    tree: exp.Delete | exp.TruncateTable | exp.Update | exp.Merge,
    target: tuple[str, str],
    node: exp.Table,
) -> None:
    table = session.ctx.load(*target, writes=True)
    shown = f"{CATALOG_NAME}.{target[0]}.{target[1]}"
    if isinstance(tree, exp.TruncateTable):
        truncate(session.spark, table, tree, shown)
        return
    alias = node.alias or node.name
    written = Target(table, target[0], target[1], alias, node.db or None)

    def read(query: str) -> DataFrame:
        return session.query(parse_statement(query))

    if isinstance(tree, exp.Delete):
        delete(session.spark, written, tree, read)
    elif isinstance(tree, exp.Update):
        update(session.spark, written, tree, read)
    else:
        source = _merge_source(session, statement, tree)
        flags = merge_schema_flags(session, *target)
        merge_into(session.spark, written, tree, source, read, flags, session.case_sensitive())


def _merge_source(session: Session, statement: QueryStatement, tree: exp.Merge) -> Source:
    """The rows MERGE INTO reads from: a table (Paimon's or Spark's) or a subquery,
    read through the session as any query is (the subquery's text as written)."""
    using = tree.args.get("using")
    alias = source_alias(using)
    if isinstance(using, exp.Table):
        if using.args.get("db") is None and using.name.lower() == CATALOG_NAME:
            raise SqlError(f"MERGE INTO: invalid source {using.sql(dialect='spark')}")
        rows = session.query(parse_statement(source_query(using)))
        return Source(rows, alias, using)
    query = using.this if isinstance(using, exp.Subquery) else using
    if isinstance(query, (exp.Query, exp.Values)):
        span = using_span(statement.parsed, statement.tokens or None)
        if span is None:
            raise SqlParseError("MERGE INTO: cannot find the source query's text")
        rows = session.query(statement, query, fragment=Fragment((span,)))
        return Source(_with_column_names(rows, using, alias), alias)
    shown = using.sql(dialect="spark") if using is not None else "nothing"
    raise SqlError(f"MERGE INTO: expected a table or (subquery) after USING, got {shown}")


def _with_column_names(rows: DataFrame, using: exp.Expr, alias: str) -> DataFrame:
    """The MERGE source's rows with the column names its alias gives (`s(a, b)`), as Spark
    names a `(VALUES ...)` or `(subquery)` source; the names must match its columns."""
    alias_node = using.args.get("alias")
    names = [c.name for c in alias_node.columns] if alias_node is not None else []
    if not names:
        return rows
    if len(names) != len(rows.columns):
        raise SqlError(
            f"MERGE INTO: source {alias} has {len(rows.columns)} columns but its alias gives "
            f"{len(names)} names ({', '.join(names)})"
        )
    return rows.toDF(*names)


def run(session: Session, statement: RowLevelStatement) -> DataFrame:
    return _dml(session, statement, statement.tree, statement.text)

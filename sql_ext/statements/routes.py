"""`ROUTES`: the one place that says which module runs each statement family.

Each family module answers `run(session, statement)` on Spark (`sql_ext.session`) and, where it
can do without a JVM, `local(ctx, statement)` (`sql_ext.metadata.engine`): rows, or None to
leave the statement to Spark. Modules are named, not imported, so that routing loads only the
families a session runs (the in-process engine never imports pyspark).
"""

from __future__ import annotations

import importlib
from types import ModuleType

from sql_ext.syntax.statements import (
    AlterHead,
    AnalyzeStatement,
    CacheStatement,
    CallStatement,
    CreateStatement,
    DatabaseStatement,
    DescribeStatement,
    DropStatement,
    ExplainStatement,
    InsertStatement,
    PassthroughStatement,
    ReadStatement,
    RefreshStatement,
    RowLevelStatement,
    ShowStatement,
    Statement,
    TagStatement,
    UseStatement,
)

__all__ = ["ROUTES", "route"]

ROUTES: dict[type, str] = {
    CallStatement: "calls",
    TagStatement: "tags",
    AlterHead: "alter",
    DatabaseStatement: "databases",
    ExplainStatement: "explain",
    ShowStatement: "show",
    UseStatement: "use",
    DescribeStatement: "describe",
    CreateStatement: "create",
    DropStatement: "drop",
    InsertStatement: "insert",
    RowLevelStatement: "rowlevel",
    ReadStatement: "query",
    CacheStatement: "query",
    AnalyzeStatement: "analyze",
    RefreshStatement: "refresh",
    PassthroughStatement: "passthrough",
}
"""Statement type -> its family module in `sql_ext.statements`."""


def route(statement: Statement) -> ModuleType:
    """The family module of `statement`."""
    return importlib.import_module(f"sql_ext.statements.{ROUTES[type(statement)]}")

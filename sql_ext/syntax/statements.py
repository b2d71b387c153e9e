"""The statement model: one typed statement per family, as `sql_ext.syntax.parse.parse_statement`
returns it, and what `sql_ext.statements.ROUTES` routes on.

Families sqlglot parses are `QueryStatement`s (the tree, the Paimon table references, the text
it was parsed from and its tokens), one subclass per family; the grammars sqlglot lacks have
their own types: `CallStatement`, `TagStatement` (`sql_ext.syntax.tags`), `AlterHead`
(`sql_ext.syntax.alter`), `DatabaseStatement` (`sql_ext.syntax.databases`) and
`ExplainStatement`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp
from sqlglot.tokens import Token

from sql_ext.syntax.alter import AlterHead
from sql_ext.syntax.databases import DatabaseStatement
from sql_ext.syntax.tags import TagStatement

__all__ = [
    "AlterHead",
    "AnalyzeStatement",
    "CacheStatement",
    "CallStatement",
    "CreateStatement",
    "DatabaseStatement",
    "DescribeStatement",
    "DropStatement",
    "ExplainStatement",
    "InsertStatement",
    "PassthroughStatement",
    "QueryStatement",
    "ReadStatement",
    "RefreshStatement",
    "RowLevelStatement",
    "ShowStatement",
    "Statement",
    "TableRef",
    "TagStatement",
    "UseStatement",
    "query_family",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class CallStatement:
    """`CALL [catalog.]sys.<procedure>(...)` with constant arguments as Python values.

    Exactly one of `args` (named, names lower-cased) and `positional` is filled, or neither.
    """

    procedure: str
    text: str
    args: dict[str, Any] = field(default_factory=dict)
    positional: tuple[Any, ...] = ()
    catalog: str | None = None

    @property
    def is_named(self) -> bool:
        return bool(self.args)


@dataclass(frozen=True, slots=True)
class TableRef:
    """One Paimon-specific table reference of a query and the node it came from."""

    catalog: str | None
    database: str | None
    table: str
    branch: str | None
    system_table: str | None
    version: str | int | None
    timestamp: exp.Expr | None
    node: exp.Table


@dataclass(frozen=True, slots=True)
class QueryStatement:
    """Any statement but CALL; Spark runs `text` unchanged when `paimon_tables` is empty.

    `tree` was parsed from `parsed`: `text` with `TABLE t` and `IDENTIFIER('t')` expanded (see
    the module docstring); positions in `tree` are offsets into `parsed`.
    """

    text: str
    tree: exp.Expr
    paimon_tables: list[TableRef]
    parsed: str = ""
    tokens: Sequence[Token] = field(default=(), repr=False, compare=False)
    """The tokens of `parsed` (`sql_ext.syntax.tokens.tokenize`), read once."""

    def __post_init__(self) -> None:
        if not self.parsed:
            object.__setattr__(self, "parsed", self.text)


class ReadStatement(QueryStatement):
    """A query: SELECT, VALUES, set operations."""

    __slots__ = ()


class ShowStatement(QueryStatement):
    """SHOW ... (sqlglot keeps it as a command; `rest` is the text after SHOW)."""

    __slots__ = ()

    @property
    def rest(self) -> str:
        rest = self.tree.expression
        return rest if isinstance(rest, str) else rest.name

    @property
    def rest_tokens(self) -> Sequence[Token]:
        """The tokens after SHOW."""
        return self.tokens[1:]


class UseStatement(QueryStatement):
    """USE [NAMESPACE] ..."""

    __slots__ = ()


class DescribeStatement(QueryStatement):
    """DESCRIBE [TABLE] ... (of a table or a query)."""

    __slots__ = ()


class CreateStatement(QueryStatement):
    """CREATE [OR REPLACE] TABLE / VIEW ..., REPLACE TABLE, CTAS, CREATE TABLE LIKE."""

    __slots__ = ()


class DropStatement(QueryStatement):
    """DROP TABLE / VIEW / ..."""

    __slots__ = ()


class InsertStatement(QueryStatement):
    """INSERT INTO / OVERWRITE."""

    __slots__ = ()


class RowLevelStatement(QueryStatement):
    """DELETE, UPDATE, MERGE INTO and TRUNCATE TABLE."""

    __slots__ = ()


class CacheStatement(QueryStatement):
    """CACHE TABLE ... [AS query]."""

    __slots__ = ()


class AnalyzeStatement(QueryStatement):
    """ANALYZE TABLE ..."""

    __slots__ = ()


class RefreshStatement(QueryStatement):
    """REFRESH TABLE ..."""

    __slots__ = ()


class PassthroughStatement(QueryStatement):
    """Any other statement (SET, ADD JAR, ...): Spark's, unless it names Paimon tables."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class ExplainStatement:
    """EXPLAIN [EXTENDED | CODEGEN | COST | FORMATTED] <statement>."""

    text: str
    mode: str
    """The mode followed by a space (`EXTENDED `), or empty."""
    statement: CallStatement | QueryStatement


_FAMILIES: tuple[tuple[type[exp.Expr] | tuple[type[exp.Expr], ...], type[QueryStatement]], ...] = (
    ((exp.Query, exp.Values), ReadStatement),
    (exp.Insert, InsertStatement),
    ((exp.Delete, exp.Update, exp.Merge, exp.TruncateTable), RowLevelStatement),
    (exp.Create, CreateStatement),
    (exp.Drop, DropStatement),
    (exp.Describe, DescribeStatement),
    (exp.Use, UseStatement),
    (exp.Cache, CacheStatement),
    (exp.Analyze, AnalyzeStatement),
    (exp.Refresh, RefreshStatement),
)
"""The family of a statement sqlglot parsed, by its tree's type (first match)."""


def query_family(tree: exp.Expr) -> type[QueryStatement]:
    """The `QueryStatement` subclass for `tree`."""
    if isinstance(tree, exp.Command):
        return ShowStatement if tree.name.upper() == "SHOW" else PassthroughStatement
    for kinds, family in _FAMILIES:
        if isinstance(tree, kinds):
            return family
    return PassthroughStatement


Statement = (
    CallStatement | TagStatement | AlterHead | DatabaseStatement | ExplainStatement | QueryStatement
)

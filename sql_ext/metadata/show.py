"""`SHOW DATABASES / TABLES / CURRENT NAMESPACE` of the Paimon catalog, as plain rows.

`SHOW TABLES IN sys` lists the global system tables (`sql_ext.global_system_tables`), in
Paimon's order; `sys` is not listed by SHOW DATABASES (Paimon's catalog does not list it).

Shared by the Spark session and the in-process engine, so both answer alike; Spark's own
`SHOW` forms (other catalogs, `SHOW FUNCTIONS`, ...) are left to Spark (None).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from sqlglot.tokens import Token

from procedures.base import Column, ProcedureResult
from sql_ext.errors import SqlParseError
from sql_ext.global_system_tables import global_table_names, is_system_database
from sql_ext.metadata.config import CATALOG_NAME
from sql_ext.metadata.show_table import parse_table_show, run_table_show
from sql_ext.syntax.tokens import dotted_name, like_pattern, matches_pattern, tokenize

if TYPE_CHECKING:
    from paimon_core.catalog import FileSystemCatalog
    from paimon_core.table import FileStoreTable

__all__ = ["show_catalog", "show_tokens"]

CURRENT_NAMESPACE = (Column("catalog", "STRING", False), Column("namespace", "STRING", False))
DATABASES = (Column("namespace", "STRING", False),)
VIEWS = (
    Column("namespace", "STRING", False),
    Column("viewName", "STRING", False),
    Column("isTemporary", "BOOLEAN", False),
)
"""SHOW VIEWS of the Paimon catalog lists its views (Paimon-Spark's `ShowPaimonViewsExec`), not
Spark's temporary views; the filesystem catalog has none, so it is always empty."""
TABLES = (
    Column("namespace", "STRING", False),
    Column("tableName", "STRING", False),
    Column("isTemporary", "BOOLEAN", False),
)


def show_tokens(rest: str) -> list[Token]:
    """The tokens of ``SHOW <rest>``'s rest; none when it does not tokenize (Spark says why)."""
    try:
        return tokenize(rest)
    except SqlParseError:
        return []


def show_catalog(
    rest: str,
    catalog: Callable[[], FileSystemCatalog],
    current_database: str,
    load: Callable[[str, str], FileStoreTable | None] | None = None,
    tokens: Sequence[Token] | None = None,
) -> ProcedureResult | None:
    """The result of `SHOW <rest>` on the Paimon catalog; None: Spark's own SHOW.

    `catalog` is called only once the statement is known to be the Paimon catalog's;
    `load(database, name)` gives a Paimon table (None: not one) for the SHOW statements
    about one table (`sql_ext.metadata.show_table`). `tokens`: the rest's tokens, when the
    statement was read already.
    """
    tokens = show_tokens(rest) if tokens is None else tokens
    table_show = parse_table_show(rest, tokens)
    if table_show is not None:
        if load is None:
            return None
        return run_table_show(table_show, f"SHOW {rest}", catalog, current_database, load)
    words = [t.text.upper() for t in tokens]
    if words[:2] in (["CURRENT", "NAMESPACE"], ["CURRENT", "DATABASE"]) and len(words) == 2:
        return ProcedureResult(CURRENT_NAMESPACE, [(CATALOG_NAME, current_database)])
    if not words or words[0] not in ("DATABASES", "SCHEMAS", "NAMESPACES", "TABLES", "VIEWS"):
        return None
    position = 1
    namespace: tuple[str, ...] = ()
    if position < len(tokens) and words[position] in ("FROM", "IN"):
        namespace, position = dotted_name(tokens, position + 1)
    pattern, position = like_pattern(tokens, position)
    if position != len(tokens):
        return None
    if words[0] == "VIEWS":
        if len(namespace) > 2 or (len(namespace) == 2 and namespace[0].lower() != CATALOG_NAME):
            return None
        return ProcedureResult(VIEWS, [])
    if words[0] != "TABLES":
        if namespace and [n.lower() for n in namespace] != [CATALOG_NAME]:
            return None
        names = [d for d in catalog().list_databases() if matches_pattern(d, pattern)]
        return ProcedureResult(DATABASES, [(d,) for d in names])
    if len(namespace) == 2 and namespace[0].lower() == CATALOG_NAME:
        namespace = namespace[1:]
    if len(namespace) > 1:
        return None
    database = namespace[0] if namespace else current_database
    if is_system_database(database):
        listed = global_table_names(catalog().options)
    else:
        listed = catalog().list_tables(database)
    names = [t for t in listed if matches_pattern(t, pattern)]
    return ProcedureResult(TABLES, [(database, t, False) for t in names])

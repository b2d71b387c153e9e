"""Golden rewrite pairs (tests/fixtures/rewrites.sql) and one-line assertion helpers."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from sqlglot import exp

from sql_ext.syntax.parse import (
    CallStatement,
    Statement,
    TableRef,
    parse_statement,
    replace_tables,
    split_statements,
)

REWRITES = Path(__file__).resolve().parents[2] / "fixtures" / "rewrites.sql"


def load_pairs(path: Path = REWRITES) -> list[tuple[str, list[str], list[str]]]:
    """`-- title:` blocks as (title, input statements, expected outputs), half and half."""
    pairs = []
    for block in re.split(r"^-- title: ", path.read_text(encoding="utf-8"), flags=re.M)[1:]:
        title, _, body = block.partition("\n")
        statements = split_statements(body)
        half = len(statements) // 2
        assert statements and len(statements) == 2 * half, f"odd block: {title}"
        pairs.append((title.strip(), statements[:half], statements[half:]))
    return pairs


def view_for(ref: TableRef) -> exp.Expr:
    """Test-only view naming: `__paimon_<db>_<table>[_branch_<b>][_<sys>][_v<version>][_ts]`."""
    parts = [
        ref.database,
        ref.table,
        ref.branch and f"branch_{ref.branch}",
        ref.system_table,
        ref.version is not None and f"v{ref.version}",
        ref.timestamp is not None and "ts",
    ]
    name = "__paimon_" + "_".join(str(p) for p in parts if p)
    return exp.Table(this=exp.to_identifier(re.sub(r"\W", "_", name)))


def render(statement: Statement) -> str:
    """A CALL in canonical form (Python reprs), a query rewritten, or the verbatim text."""
    if isinstance(statement, CallStatement):
        prefix = f"{statement.catalog}." if statement.catalog else ""
        items = [f"{k} => {v!r}" for k, v in statement.args.items()]
        items = items or [repr(v) for v in statement.positional]
        return f"CALL {prefix}sys.{statement.procedure}({', '.join(items)})"
    if not statement.paimon_tables:
        return statement.text
    return replace_tables(statement.parsed, statement.tree, view_for).text


def assert_rewrite(sql: str, expected: str) -> None:
    assert render(parse_statement(sql)) == expected


def assert_call(sql: str, procedure: str, args: dict[str, Any] | tuple[Any, ...]) -> None:
    statement = parse_statement(sql)
    assert isinstance(statement, CallStatement)
    assert statement.procedure == procedure
    assert (statement.args if isinstance(args, dict) else statement.positional) == args

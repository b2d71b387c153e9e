"""`sys.max_pt('<table>')`: the largest top-level partition value that holds data.

As Paimon-Spark's `MaxPtFunction` and its `ReplacePaimonFunctions` rule (latest release): the
argument must be one string literal naming a table (`'t'`, `'db.t'`, `'paimon.db.t'`); the
call is replaced, before the query runs, by that value cast to STRING. The value is the first
partition column's, over the partitions holding live files of the latest snapshot (an empty
partition does not count, nor does the default partition, whose value is NULL), compared as
values of the column's type (so INT `10` beats `9`); with `scan.fallback-branch` or
`scan.primary-branch` the other branch's partitions count too. A table that is not partitioned, or has
no partition with data, is an error. Spark names the column `max_pt(<table>)`; an unaliased
call in the SELECT list keeps that name here.

The calls are found in the parsed statement and replaced in its text (a quoted literal built
by sqlglot); everything else of the statement stays as written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from paimon_core.operations.fallback import branch_entries, fallback_read
from procedures.base import resolve_time_zone
from sql_ext.errors import SqlError
from sql_ext.splice import Edit, splice
from sql_ext.syntax.dialect import quote_identifier
from sql_ext.syntax.tokens import tokenize
from sql_ext.system_tables import cast_to_string

if TYPE_CHECKING:
    from paimon_core.table import FileStoreTable

__all__ = ["FUNCTION", "has_max_pt", "max_partition", "replace_max_pt"]

FUNCTION = "max_pt"
SYSTEM_NAMESPACE = "sys"


@dataclass(frozen=True, slots=True)
class _Call:
    node: exp.Dot
    start: int
    end: int
    argument: str


def _parts(node: exp.Dot) -> list[str] | None:
    """`[catalog.]sys` of `[catalog.]sys.max_pt(...)`, or None when it is no such call."""
    call = node.expression
    if not isinstance(call, exp.Anonymous) or str(call.this).lower() != FUNCTION:
        return None
    head = node.this
    names = list(head.flatten()) if isinstance(head, exp.Dot) else [head]
    if not all(isinstance(n, exp.Identifier) for n in names):
        return None
    parts = [n.name for n in names]
    if not 1 <= len(parts) <= 2 or parts[-1].lower() != SYSTEM_NAMESPACE:
        return None
    return parts


def has_max_pt(tree: exp.Expr) -> bool:
    return any(_parts(dot) is not None for dot in tree.find_all(exp.Dot))


def _calls(
    text: str, tree: exp.Expr, catalog_name: str, tokens: Sequence[Token] | None
) -> list[_Call]:
    tokens = tokenize(text) if tokens is None else tokens
    by_start = {t.start: i for i, t in enumerate(tokens)}
    calls = []
    for dot in tree.find_all(exp.Dot):
        parts = _parts(dot)
        if parts is None:
            continue
        if len(parts) == 2 and parts[0].lower() != catalog_name:
            raise SqlError(f"{'.'.join(parts)}.{FUNCTION}: '{parts[0]}' is not a Paimon catalog")
        call = dot.expression
        arguments = call.expressions
        if len(arguments) != 1:
            raise SqlError(
                f"sys.{FUNCTION}: wrong number of inputs, expected 1 (the table name) but got "
                f"{len(arguments)}"
            )
        argument = arguments[0]
        if not isinstance(argument, exp.Literal) or not argument.is_string:
            raise SqlError(
                f"sys.{FUNCTION}: the table name must be a string literal, got "
                f"{argument.sql(dialect='spark')}"
            )
        first = dot.find(exp.Identifier)
        start = first.meta.get("start") if first is not None else None
        name_at = by_start.get(call.meta.get("start", -1))
        if start is None or name_at is None:
            raise SqlError(f"Cannot find sys.{FUNCTION}(...) in the statement text")
        depth, end = 0, None
        for token in tokens[name_at + 1 :]:
            if token.token_type == TokenType.L_PAREN:
                depth += 1
            elif token.token_type == TokenType.R_PAREN:
                depth -= 1
                if depth == 0:
                    end = token.end + 1
                    break
        if end is None:
            raise SqlError(f"Cannot find the end of sys.{FUNCTION}(...) in the statement text")
        calls.append(_Call(dot, start, end, argument.name))
    return calls


def replace_max_pt(
    text: str,
    tree: exp.Expr,
    catalog_name: str,
    evaluate: Callable[[str], str],
    tokens: Sequence[Token] | None = None,
) -> str:
    """`text` (which `tree` was parsed from; `tokens`: its tokens, when read) with each
    `sys.max_pt('<t>')` replaced by the string literal `evaluate('<t>')`, aliased
    `max_pt(<t>)` where it is an unaliased item of a SELECT list."""
    edits = []
    for call in _calls(text, tree, catalog_name, tokens):
        literal = exp.Literal.string(evaluate(call.argument)).sql(dialect="spark")
        parent = call.node.parent
        if isinstance(parent, exp.Select) and call.node.arg_key == "expressions":
            literal += f" AS {quote_identifier(f'{FUNCTION}({call.argument})')}"
        edits.append(Edit(call.start, call.end, literal))
    return splice(text, edits).text


def max_partition(table: FileStoreTable, argument: str, shown: str, time_zone: str | None) -> str:
    """The largest value of `table`'s first partition column among partitions with data, as
    Spark casts it to STRING.

    Raises:
        SqlError: the table is not partitioned, or no partition holds data.
    """
    keys = table.schema.partition_keys
    if not keys:
        raise SqlError(f"sys.{FUNCTION}('{argument}'): {shown} is not a partitioned table")
    values: set[Any] = set()
    for side in branch_entries(table, table.latest_snapshot(), fallback_read(table)):
        scan = side.table.new_scan()
        for entry in side.splits:
            value = scan.partition_values(entry.partition)[0]
            if value is not None:
                values.add(value)
    if not values:
        raise SqlError(
            f"sys.{FUNCTION}('{argument}'): {shown} has no partitions or none of the partitions "
            "have any data"
        )
    field = table.schema.partition_fields[0]
    text = cast_to_string(max(values), field.type, resolve_time_zone(time_zone))
    assert text is not None
    return text

"""Paimon-Spark's incremental table functions (`PaimonTableValuedFunctions`).

* `paimon_incremental_query('db.t', start, end)`: `incremental-between` = `start,end`
  (two snapshot ids, or two tags);
* `paimon_incremental_between_timestamp('db.t', t1, t2)`: `incremental-between-timestamp`;
* `paimon_incremental_to_auto_tag('db.t', 'tag')`: `incremental-to-auto-tag`.

The first argument names a table as Spark's multipart identifier parser reads it (`t`,
`db.t`, `paimon.db.t`, `` `t$audit_log` ``); the others are constants. The session replaces
each call by a view of the table read with that option (`sql_ext.views.table_dataframe`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import Token, TokenType

from paimon_core.operations.incremental import (
    INCREMENTAL_BETWEEN,
    INCREMENTAL_BETWEEN_TIMESTAMP,
    INCREMENTAL_TO_AUTO_TAG,
)
from sql_ext.errors import SqlError, SqlParseError
from sql_ext.syntax.dialect import PaimonSpark
from sql_ext.syntax.tokens import tokenize

__all__ = ["EXCEPT_FALLBACK", "TABLE_FUNCTIONS", "TableFunctionCall", "table_function_calls"]

INCREMENTAL_QUERY = "paimon_incremental_query"
INCREMENTAL_BETWEEN_TIMESTAMP_FN = "paimon_incremental_between_timestamp"
INCREMENTAL_TO_AUTO_TAG_FN = "paimon_incremental_to_auto_tag"
TABLE_FUNCTIONS: dict[str, tuple[str, str]] = {
    INCREMENTAL_QUERY: (
        INCREMENTAL_BETWEEN,
        "needs two parameters: startSnapshotId, and endSnapshotId.",
    ),
    INCREMENTAL_BETWEEN_TIMESTAMP_FN: (
        INCREMENTAL_BETWEEN_TIMESTAMP,
        "needs two parameters: startTimestamp, and endTimestamp.",
    ),
    INCREMENTAL_TO_AUTO_TAG_FN: (INCREMENTAL_TO_AUTO_TAG, "needs one parameter: endTagName."),
}
"""Function name -> (the option it sets, Paimon's message for a wrong argument count)."""
EXCEPT_FALLBACK = frozenset({INCREMENTAL_QUERY, INCREMENTAL_TO_AUTO_TAG_FN})
"""Functions that read `end EXCEPT start` when a diff crosses a bucket rescale."""
_DIALECT = PaimonSpark()


@dataclass(frozen=True)
class TableFunctionCall:
    """One call in a statement: the table it reads (`parts` of its name) with `options`, and
    where the call is in the statement's text (end exclusive)."""

    node: exp.Table
    function: str
    parts: tuple[str, ...]
    options: dict[str, str] = field(default_factory=dict)
    start: int = 0
    end: int = 0


def table_function_calls(
    tree: exp.Expr, text: str, tokens: Sequence[Token] | None = None
) -> list[TableFunctionCall]:
    """The incremental table function calls of `tree` (parsed from `text`, whose tokens are
    `tokens` when read).

    Raises:
        SqlError: a call with a wrong number of arguments, a non-constant argument, or a
            first argument that is no table name.
    """
    calls = []
    for table in tree.find_all(exp.Table):
        call = table.this
        if not isinstance(call, exp.Anonymous):
            continue
        name = str(call.this).lower()
        if name not in TABLE_FUNCTIONS:
            continue
        key, arity = TABLE_FUNCTIONS[name]
        args = [_constant(name, a) for a in call.expressions]
        wanted = 1 if key == INCREMENTAL_TO_AUTO_TAG else 2
        if len(args) != wanted + 1:
            raise SqlError(f"{name} {arity}")
        start = call.meta.get("start")
        if start is None:
            raise SqlError(f"Cannot find the text of {name}(...) in the statement")
        calls.append(
            TableFunctionCall(
                node=table,
                function=name,
                parts=_identifier(name, args[0]),
                options={key: ",".join(args[1:])},
                start=start,
                end=_call_end(text, start, name, tokens),
            )
        )
    return calls


def _constant(function: str, node: exp.Expr) -> str:
    """An argument as Spark's `eval().toString` gives it: string or number literals."""
    if isinstance(node, exp.Literal):
        return node.this
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and not node.this.is_string:
        return "-" + node.this.this
    raise SqlError(
        f"{function} takes constant arguments (string or number literals), got "
        f"{node.sql(dialect='spark')}"
    )


def _identifier(function: str, text: str) -> tuple[str, ...]:
    """Spark's `parseMultipartIdentifier` of the table argument."""
    try:
        node = exp.maybe_parse(text, into=exp.Table, dialect=_DIALECT)
    except (ParseError, TokenError):
        node = None
    if not isinstance(node, exp.Table) or not isinstance(node.this, exp.Identifier):
        raise SqlError(f"{function}: invalid table identifier: {text}")
    if any(node.args.get(k) for k in node.args if k not in ("this", "db", "catalog")):
        raise SqlError(f"{function}: invalid table identifier: {text}")
    return tuple(p.name for p in node.parts)


def _call_end(text: str, start: int, function: str, read: Sequence[Token] | None) -> int:
    """The offset just past the `)` closing the call whose name starts at `start`."""
    if read is not None:
        tokens = [t for t in read if t.start >= start]
        start = 0
    else:
        try:
            tokens = tokenize(text[start:])
        except SqlParseError:
            tokens = []
    depth = 0
    for token in tokens:
        if token.token_type == TokenType.L_PAREN:
            depth += 1
        elif token.token_type == TokenType.R_PAREN:
            depth -= 1
            if depth == 0:
                return start + token.end + 1
    raise SqlError(f"Cannot find the end of {function}(...) in the statement")

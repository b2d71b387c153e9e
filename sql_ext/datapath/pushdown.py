"""What a statement needs from a table: its columns and the filters that prune its files.

Spark's Python data source is told neither (no column pruning; filter pushdown would make
its cached partitions depend on the filters), so the session works them out from the
parsed statement, conservatively: a column is needed when its name appears anywhere in the
statement as an identifier or a string (``IDENTIFIER('c')``), and every column is needed
when anything can reach columns without naming them (``*`` other than ``count(*)``,
``NATURAL JOIN``, text sqlglot did not parse). Filters are only the top-level ``AND``ed
comparisons of a column with a literal in the ``WHERE`` of a ``SELECT`` whose only source
is the table; they prune partitions and files, and Spark still applies the ``WHERE``.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator, Sequence
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

from sqlglot import exp

if TYPE_CHECKING:
    from paimon_core.format.types import DataField
    from paimon_core.operations.scan import Predicate

_COMPARISONS: dict[type[exp.Expr], str] = {
    exp.EQ: "=",
    exp.NEQ: "!=",
    exp.GT: ">",
    exp.GTE: ">=",
    exp.LT: "<",
    exp.LTE: "<=",
}
_FLIPPED = {"=": "=", "!=": "!=", ">": "<", ">=": "<=", "<": ">", "<=": ">="}
_INTEGERS = frozenset({"TINYINT", "SMALLINT", "INT", "BIGINT"})
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def needed_names(tree: exp.Expr) -> frozenset[str] | None:
    """Lower-cased names the statement may use as columns; None when it may use them all."""
    names: set[str] = set()
    for node in tree.walk():
        if isinstance(node, exp.Star) and not isinstance(node.parent, exp.Count):
            return None
        if isinstance(node, exp.Command):
            return None
        if isinstance(node, exp.Join) and str(node.args.get("method") or "").upper() == "NATURAL":
            return None
        if isinstance(node, exp.Identifier):
            names.add(node.name.lower())
        elif isinstance(node, exp.Literal) and node.is_string:
            names.add(node.name.lower())
    return frozenset(names)


def needed_columns(tree: exp.Expr, fields: Sequence[DataField]) -> list[str] | None:
    """The table's columns the statement may use (in table order); None: all of them."""
    names = needed_names(tree)
    if names is None:
        return None
    return [f.name for f in fields if f.name.lower() in names]


def table_predicate(
    tree: exp.Expr, table: exp.Table, fields: Sequence[DataField]
) -> list[Predicate]:
    """``(column, op, literal)`` conjuncts that every row the statement reads from ``table``
    satisfies; [] when the table is read anywhere without such a filter."""
    selects = [s for s in tree.find_all(exp.Select) if _reads_only(s, table)]
    if len(selects) != 1 or table.args.get("sample") or table.args.get("pivots"):
        return []
    where = selects[0].args.get("where")
    if where is None:
        return []
    by_name = {f.name.lower(): f for f in fields}
    alias = table.alias_or_name.lower()
    out: list[Predicate] = []
    for conjunct in _conjuncts(where.this):
        out.extend(_predicates(conjunct, by_name, alias))
    return out


def _reads_only(select: exp.Select, table: exp.Table) -> bool:
    source = select.args.get("from_")
    if source is None or source.this is not table:
        return False
    return not select.args.get("joins") and not select.args.get("laterals")


def _conjuncts(node: exp.Expr) -> Iterator[exp.Expr]:
    if isinstance(node, exp.Paren):
        yield from _conjuncts(node.this)
    elif isinstance(node, exp.And):
        yield from _conjuncts(node.this)
        yield from _conjuncts(node.expression)
    else:
        yield node


def _predicates(node: exp.Expr, by_name: dict[str, DataField], alias: str) -> list[Predicate]:
    if isinstance(node, exp.Between):
        field = _column(node.this, by_name, alias)
        low, high = (_literal(node.args.get(k), field) for k in ("low", "high"))
        if field is None or low is None or high is None:
            return []
        return [(field.name, ">=", low), (field.name, "<=", high)]
    if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
        field = _column(node.this, by_name, alias)
        return [] if field is None else [(field.name, "is_null", None)]
    if isinstance(node, exp.Not) and isinstance(node.this, exp.Is):
        inner = node.this
        field = _column(inner.this, by_name, alias)
        if field is None or not isinstance(inner.expression, exp.Null):
            return []
        return [(field.name, "is_not_null", None)]
    op = _COMPARISONS.get(type(node))
    if op is None:
        return []
    left, right = node.this, node.expression
    field = _column(left, by_name, alias)
    if field is None:
        left, right, op = right, left, _FLIPPED[op]
        field = _column(left, by_name, alias)
    value = _literal(right, field)
    if field is None or value is None:
        return []
    return [(field.name, op, value)]


def _column(node: exp.Expr | None, by_name: dict[str, DataField], alias: str) -> DataField | None:
    if not isinstance(node, exp.Column) or node.args.get("db") or node.args.get("catalog"):
        return None
    if node.table and node.table.lower() != alias:
        return None
    return by_name.get(node.name.lower())


def _literal(node: exp.Expr | None, field: DataField | None) -> Any:
    """The literal as the Python value Spark compares the column with; None when the
    comparison would need a cast whose meaning differs (then nothing is pruned)."""
    if node is None or field is None:
        return None
    root = field.type.root
    negative = isinstance(node, exp.Neg)
    if negative:
        node = node.this
    if isinstance(node, exp.Literal) and not node.is_string:
        try:
            number = Decimal(node.name)
        except InvalidOperation:
            return None
        number = -number if negative else number
        if root in _INTEGERS:
            return int(number) if number == number.to_integral_value() else number
        if root in ("FLOAT", "DOUBLE"):
            return float(number)
        if root == "DECIMAL":
            return number
        return None
    if negative:
        return None
    if isinstance(node, exp.Boolean) and root == "BOOLEAN":
        return bool(node.this)
    if root == "DATE":
        text = _date_text(node)
        return None if text is None else dt.date.fromisoformat(text)
    if isinstance(node, exp.Literal) and root in ("VARCHAR", "STRING"):
        return node.name
    return None


def _date_text(node: exp.Expr) -> str | None:
    if isinstance(node, exp.Cast) and node.to.is_type(exp.DataType.Type.DATE):
        node = node.this
    if isinstance(node, exp.Literal) and node.is_string and _ISO_DATE.fullmatch(node.name):
        return node.name
    return None

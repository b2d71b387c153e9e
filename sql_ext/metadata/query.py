"""`SELECT` over one system table, evaluated on Python rows the way Spark would.

A deliberately small whitelist, each item checked against Spark's output: projections of
columns (`*`, `c`, `t.c`, `c AS x`), or only the aggregates `count(*)`, `count(1)`,
`count(c)`, `min(c)`, `max(c)`, `sum(c)` of integer columns; `WHERE` with comparisons of
same-typed operands, `AND`/`OR`/`NOT` (three-valued), `IS [NOT] NULL`, `IN (literals)`,
`BETWEEN` and `LIKE`; `ORDER BY` columns, output names or ordinals with Spark's null order;
`LIMIT n`. `compile_select` returns None for anything else (casts between types, functions,
`GROUP BY`, joins, ...), and the statement goes to Spark, the reference.

Output names are Spark's: a column keeps the spelling the query gives it (`SNAPSHOT_ID`),
an aggregate is `count(1)` / `max(snapshot_id)`.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

__all__ = ["CompiledSelect", "compile_select"]

Row = Sequence[Any]
Value = Callable[[Row], Any]
_INTEGERS = frozenset({"TINYINT", "SMALLINT", "INT", "BIGINT"})
_COMPARABLE = frozenset({"STRING", "BOOLEAN", "TIMESTAMP_NTZ", *_INTEGERS})
_ALLOWED_SELECT_ARGS = frozenset({"expressions", "from_", "where", "order", "limit"})
_COMPARISONS: dict[type[exp.Expr], Callable[[Any, Any], bool]] = {
    exp.EQ: operator.eq,
    exp.NEQ: operator.ne,
    exp.GT: operator.gt,
    exp.GTE: operator.ge,
    exp.LT: operator.lt,
    exp.LTE: operator.le,
}
_AGGREGATES = {exp.Min: "min", exp.Max: "max", exp.Sum: "sum", exp.Count: "count"}


class _Unsupported(Exception):
    """Not answered here: the statement goes to Spark."""


@dataclass(frozen=True, slots=True)
class _Typed:
    value: Value
    type: str  # a Spark SQL type name; "NULL" for the NULL literal


@dataclass(frozen=True, slots=True)
class _OrderKey:
    value: Callable[[Row, Row], Any]  # (input row, output row) -> key
    descending: bool
    nulls_first: bool


@dataclass(frozen=True, slots=True)
class CompiledSelect:
    """A checked query: run it on the system table's rows with `rows()`."""

    columns: tuple[str, ...]
    where: Value | None
    projections: tuple[Value, ...]
    aggregates: tuple[Callable[[list[Row]], Any], ...]
    order: tuple[_OrderKey, ...]
    limit: int | None

    def rows(self, rows: Sequence[Row]) -> list[tuple[Any, ...]]:
        kept = [r for r in rows if self.where is None or self.where(r) is True]
        if self.aggregates:
            result = [tuple(aggregate(kept) for aggregate in self.aggregates)]
        else:
            pairs = [(r, tuple(p(r) for p in self.projections)) for r in kept]
            for key in reversed(self.order):  # stable sorts, last key first
                pairs.sort(key=_sort_key(key), reverse=key.descending)
            result = [out for _, out in pairs]
        return result if self.limit is None else result[: self.limit]


def _sort_key(key: _OrderKey) -> Callable[[tuple[Row, Row]], tuple[int, Any]]:
    # With reverse=True the rank flips too: nulls go where the flag says either way.
    null_rank = 0 if key.nulls_first != key.descending else 2

    def sort_key(pair: tuple[Row, Row]) -> tuple[int, Any]:
        value = key.value(*pair)
        return (null_rank, 0) if value is None else (1, value)

    return sort_key


class _Scope:
    """The system table's columns, found case-insensitively as Spark does by default."""

    def __init__(self, columns: Sequence[tuple[str, str, bool]], qualifiers: set[str]) -> None:
        self.names = [name for name, _, _ in columns]
        self.types = {name.lower(): (i, kind) for i, (name, kind, _) in enumerate(columns)}
        self.qualifiers = qualifiers

    def column(self, node: exp.Column) -> tuple[int, str, str]:
        """(index, type, the name as written) of a column reference."""
        if not isinstance(node.this, exp.Identifier) or node.args.get("db"):
            raise _Unsupported
        table = node.args.get("table")
        if table is not None and table.name.lower() not in self.qualifiers:
            raise _Unsupported
        found = self.types.get(node.name.lower())
        if found is None:
            raise _Unsupported
        return found[0], found[1], node.name


def _literal(node: exp.Expr) -> _Typed | None:
    if isinstance(node, exp.Literal):
        if node.is_string:
            text = node.this
            return _Typed(lambda _r: text, "STRING")
        if re.fullmatch(r"\d+", node.this) and int(node.this) < 2**31:
            number = int(node.this)
            return _Typed(lambda _r: number, "INT")
        raise _Unsupported
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal):
        inner = _literal(node.this)
        if inner is not None and inner.type == "INT":
            number = -inner.value(())
            return _Typed(lambda _r: number, "INT")
        raise _Unsupported
    if isinstance(node, exp.Boolean):
        flag = bool(node.this)
        return _Typed(lambda _r: flag, "BOOLEAN")
    if isinstance(node, exp.Null):
        return _Typed(lambda _r: None, "NULL")
    return None


def _family(kind: str) -> str:
    return "INTEGER" if kind in _INTEGERS else kind


def _same_family(*typed: _Typed) -> None:
    kinds = {_family(t.type) for t in typed if t.type != "NULL"}
    if len(kinds) > 1 or not kinds <= {_family(k) for k in _COMPARABLE}:
        raise _Unsupported


def _like(pattern: str) -> re.Pattern[str]:
    """Spark's LIKE with the default escape `\\`: `%` any text, `_` one character."""
    out: list[str] = []
    chars = iter(pattern)
    for char in chars:
        if char == "\\":
            escaped = next(chars, None)
            if escaped is None or escaped not in "\\%_":
                raise _Unsupported  # Spark rejects the pattern
            out.append(re.escape(escaped))
        elif char == "%":
            out.append(".*")
        elif char == "_":
            out.append(".")
        else:
            out.append(re.escape(char))
    return re.compile("".join(out), re.DOTALL)


def _and(a: Value, b: Value) -> Value:
    def value(row: Row) -> bool | None:
        left = a(row)
        if left is False:
            return False
        right = b(row)
        if right is False:
            return False
        return None if left is None or right is None else True

    return value


def _or(a: Value, b: Value) -> Value:
    def value(row: Row) -> bool | None:
        left = a(row)
        if left is True:
            return True
        right = b(row)
        if right is True:
            return True
        return None if left is None or right is None else False

    return value


def _compare(compare: Callable[[Any, Any], bool], a: Value, b: Value) -> Value:
    def value(row: Row) -> bool | None:
        left, right = a(row), b(row)
        return None if left is None or right is None else compare(left, right)

    return value


def _expression(node: exp.Expr, scope: _Scope) -> _Typed:
    """A scalar expression of one input row."""
    literal = _literal(node)
    if literal is not None:
        return literal
    if isinstance(node, exp.Paren):
        return _expression(node.this, scope)
    if isinstance(node, exp.Column):
        index, kind, _ = scope.column(node)
        return _Typed(operator.itemgetter(index), kind)
    compare = _COMPARISONS.get(type(node))
    if compare is not None:
        left, right = _expression(node.this, scope), _expression(node.expression, scope)
        _same_family(left, right)
        return _Typed(_compare(compare, left.value, right.value), "BOOLEAN")
    if isinstance(node, (exp.And, exp.Or)):
        left, right = _expression(node.this, scope), _expression(node.expression, scope)
        if {left.type, right.type} - {"BOOLEAN", "NULL"}:
            raise _Unsupported
        combine = _and if isinstance(node, exp.And) else _or
        return _Typed(combine(left.value, right.value), "BOOLEAN")
    if isinstance(node, exp.Not):
        inner = _expression(node.this, scope)
        if inner.type not in ("BOOLEAN", "NULL"):
            raise _Unsupported
        negate = inner.value
        return _Typed(lambda r: None if (v := negate(r)) is None else not v, "BOOLEAN")
    if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
        inner = _expression(node.this, scope).value
        return _Typed(lambda r: inner(r) is None, "BOOLEAN")
    if isinstance(node, exp.In) and not node.args.get("query") and not node.args.get("unnest"):
        subject = _expression(node.this, scope)
        items = [_literal(e) for e in node.expressions]
        if not items or any(i is None or i.type == "NULL" for i in items):
            raise _Unsupported
        _same_family(subject, *[i for i in items if i is not None])
        options = frozenset(i.value(()) for i in items if i is not None)
        get = subject.value
        return _Typed(lambda r: None if (v := get(r)) is None else v in options, "BOOLEAN")
    if isinstance(node, exp.Between):
        subject = _expression(node.this, scope)
        low, high = _expression(node.args["low"], scope), _expression(node.args["high"], scope)
        _same_family(subject, low, high)
        ge = _compare(operator.ge, subject.value, low.value)
        le = _compare(operator.le, subject.value, high.value)
        return _Typed(_and(ge, le), "BOOLEAN")
    if isinstance(node, exp.Like) and not node.args.get("escape"):
        subject = _expression(node.this, scope)
        pattern = node.expression
        if subject.type != "STRING" or not (isinstance(pattern, exp.Literal) and pattern.is_string):
            raise _Unsupported
        regex = _like(pattern.this)
        get = subject.value
        return _Typed(
            lambda r: None if (v := get(r)) is None else regex.fullmatch(v) is not None, "BOOLEAN"
        )
    raise _Unsupported


def _aggregate(node: exp.Expr, scope: _Scope) -> tuple[str, Callable[[list[Row]], Any]] | None:
    """(Spark's output name, the aggregate over the kept rows); None: not an aggregate."""
    name = _AGGREGATES.get(type(node))
    if name is None:
        return None
    argument = node.this
    if isinstance(node, exp.Count):
        if isinstance(argument, exp.Star) or (
            isinstance(argument, exp.Literal) and argument.this == "1" and not argument.is_string
        ):
            return "count(1)", len
    if not isinstance(argument, exp.Column) or node.expressions:
        raise _Unsupported
    index, kind, written = scope.column(argument)
    if written != scope.names[index]:
        raise _Unsupported  # Spark's name would need its resolution rules
    if argument.args.get("table") is not None:
        raise _Unsupported
    label = f"{name}({written})"
    values = operator.itemgetter(index)
    if name == "count":
        return label, lambda rows: sum(values(r) is not None for r in rows)
    if name == "sum" and kind not in _INTEGERS:
        raise _Unsupported
    if kind not in _COMPARABLE:
        raise _Unsupported
    reduce = {"min": min, "max": max, "sum": sum}[name]

    def aggregate(rows: list[Row]) -> Any:
        present = [values(r) for r in rows if values(r) is not None]
        return reduce(present) if present else None

    return label, aggregate


def _projections(
    nodes: Sequence[exp.Expr], scope: _Scope
) -> tuple[list[str], list[Value], list[Callable[[list[Row]], Any]]]:
    names: list[str] = []
    values: list[Value] = []
    aggregates: list[Callable[[list[Row]], Any]] = []
    for node in nodes:
        alias = None
        if isinstance(node, exp.Alias):
            alias, node = node.alias, node.this
            if not alias:
                raise _Unsupported
        if isinstance(node, exp.Star) and alias is None:
            for i, name in enumerate(scope.names):
                names.append(name)
                values.append(operator.itemgetter(i))
            continue
        found = _aggregate(node, scope)
        if found is not None:
            names.append(alias or found[0])
            aggregates.append(found[1])
            continue
        if not isinstance(node, exp.Column) or isinstance(node.this, exp.Star):
            raise _Unsupported
        index, _, written = scope.column(node)
        names.append(alias or written)
        values.append(operator.itemgetter(index))
    if aggregates and values:
        raise _Unsupported  # Spark refuses it; let Spark say so
    return names, values, aggregates


def _order(order: exp.Order, names: list[str], scope: _Scope) -> tuple[_OrderKey, ...]:
    keys: list[_OrderKey] = []
    lowered = [n.lower() for n in names]
    for item in order.expressions:
        if not isinstance(item, exp.Ordered):
            raise _Unsupported
        node = item.this
        descending = bool(item.args.get("desc"))
        nulls_first = bool(item.args.get("nulls_first"))
        if isinstance(node, exp.Literal) and not node.is_string:
            position = int(node.this) - 1 if node.this.isdigit() else -1
            if not 0 <= position < len(names):
                raise _Unsupported
            keys.append(_OrderKey(lambda _r, out, p=position: out[p], descending, nulls_first))
            continue
        if not isinstance(node, exp.Column):
            raise _Unsupported
        if node.args.get("table") is None and lowered.count(node.name.lower()) == 1:
            position = lowered.index(node.name.lower())
            keys.append(_OrderKey(lambda _r, out, p=position: out[p], descending, nulls_first))
            continue
        if node.name.lower() in lowered:
            raise _Unsupported  # ambiguous between output names
        index, kind, _ = scope.column(node)
        if kind not in _COMPARABLE:
            raise _Unsupported
        keys.append(_OrderKey(lambda row, _o, i=index: row[i], descending, nulls_first))
    return tuple(keys)


def _limit(limit: exp.Limit | None) -> int | None:
    if limit is None:
        return None
    if limit.args.get("offset") or limit.args.get("expressions"):
        raise _Unsupported
    node = limit.expression
    if not (isinstance(node, exp.Literal) and not node.is_string and node.this.isdigit()):
        raise _Unsupported
    return int(node.this)


def compile_select(
    tree: exp.Expr, columns: Sequence[tuple[str, str, bool]], table: exp.Table
) -> CompiledSelect | None:
    """`tree` (a SELECT reading only `table`, whose columns are `columns`) compiled, or None
    when Spark must answer it."""
    if not isinstance(tree, exp.Select):
        return None
    if any(tree.args.get(k) for k in tree.args if k not in _ALLOWED_SELECT_ARGS):
        return None
    source = tree.args.get("from_")
    if source is None or source.this is not table:
        return None
    if any(table.args.get(k) for k in table.args if k not in ("this", "db", "catalog", "alias")):
        return None
    alias = table.args.get("alias")
    if alias is not None and (alias.columns or not alias.name):
        return None
    qualifiers = {alias.name.lower()} if alias is not None else {table.name.lower()}
    scope = _Scope(columns, qualifiers)
    try:
        names, values, aggregates = _projections(tree.expressions, scope)
        where = None
        if tree.args.get("where") is not None:
            condition = _expression(tree.args["where"].this, scope)
            if condition.type not in ("BOOLEAN", "NULL"):
                raise _Unsupported
            where = condition.value
        order: tuple[_OrderKey, ...] = ()
        if tree.args.get("order") is not None:
            if aggregates:
                raise _Unsupported
            order = _order(tree.args["order"], names, scope)
        limit = _limit(tree.args.get("limit"))
    except _Unsupported:
        return None
    return CompiledSelect(tuple(names), where, tuple(values), tuple(aggregates), order, limit)

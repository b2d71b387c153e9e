"""INSERT INTO | OVERWRITE on Paimon tables: which source column feeds which table column.

The forms are those of Spark 4's ``INSERT`` on a Paimon table (Paimon-Spark's
``PaimonAnalysis`` / ``PaimonOutputResolver`` run before Spark's own resolution):

* by position: the query has one column per table column not fixed by a static
  ``PARTITION (k = v)`` spec, in table order;
* with a column list ``(c, a)``: the query has one column per listed column; columns not
  listed get their DEFAULT, else NULL (Spark 3.4+; "fill"). Unknown or repeated columns, and
  a column given both in the list and the static partition spec, are errors;
* ``BY NAME``: query columns are matched to table columns by name, case-insensitively, in
  any order. As in the latest Paimon-Spark (which differs from Spark's own v2 tables, where a
  missing column is ``INCOMPATIBLE_DATA_FOR_TABLE.CANNOT_FIND_DATA``) a missing top-level
  column is NULL-filled; a query column naming no table column is
  ``Cannot write to `t`, extra columns: ...``, one naming a column twice is ambiguous.

Defaults: a column left out is written as NULL and the core's table write turns every NULL
of a column with a default into the default (Paimon's ``DefaultValueRow``, which also gives an
explicit NULL the default); the ``DEFAULT`` keyword in a VALUES row is that NULL too.

A NOT NULL column without a default that would be filled with NULL is refused before any job
runs, naming the column (Paimon-Spark fills NULL and fails only when the write task meets the
first row). Every refusal happens before anything is written.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pyspark.sql import functions as F
from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from sql_ext.errors import SqlError
from sql_ext.spark_types import to_spark_type
from sql_ext.splice import Edit
from sql_ext.syntax.dialect import SPAN, PaimonSpark
from sql_ext.syntax.parse import Fragment
from sql_ext.syntax.tokens import tokenize

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from paimon_core.table import FileStoreTable


@dataclass(frozen=True, slots=True)
class InsertSpec:
    """What an INSERT asks for: target, column mapping, static partition, source query."""

    target: exp.Table
    source: exp.Expr
    overwrite: bool
    columns: tuple[str, ...] | None = None
    static: dict[str, exp.Expr] = field(default_factory=dict)
    by_name: bool = False


def insert_spec(tree: exp.Insert) -> InsertSpec:
    """Read an ``INSERT INTO|OVERWRITE`` tree; the source keeps the statement's CTEs.

    Raises:
        SqlError: REPLACE WHERE, IF NOT EXISTS, an INSERT into a directory, or BY NAME
            together with a column list (Spark's grammar has either).
    """
    if tree.args.get("where") is not None:
        raise SqlError("INSERT ... REPLACE WHERE is not supported on Paimon tables")
    if tree.args.get("exists"):
        raise SqlError("INSERT ... IF NOT EXISTS is not supported on Paimon tables")
    this = tree.this
    columns = None
    if isinstance(this, exp.Schema):
        columns = tuple(c.name for c in this.expressions)
        this = this.this
    if not isinstance(this, exp.Table):
        raise SqlError(f"Cannot INSERT into {this.sql(dialect='spark')}")
    by_name = bool(tree.args.get("by_name"))
    if by_name and columns is not None:
        raise SqlError(
            f"INSERT INTO {this.sql(dialect='spark')}: BY NAME cannot be used with a column list"
        )
    static: dict[str, exp.Expr] = {}
    partition = this.args.get("partition")
    for item in partition.expressions if partition is not None else []:
        if isinstance(item, exp.EQ):
            static[item.this.name] = item.expression
        elif not isinstance(item, (exp.Column, exp.Identifier)):
            raise SqlError(f"Unsupported PARTITION item {item.sql(dialect='spark')}")
    source = tree.expression.copy()
    for keyword in _default_keywords(source):
        keyword.replace(exp.Null())
    ctes = tree.args.get("with_")
    if ctes is not None:
        if "with_" not in source.arg_types:
            raise SqlError("WITH ... INSERT ... VALUES is not supported")
        own = source.args.get("with_")
        merged = ctes.copy()
        if own is not None:
            merged.set("expressions", [*merged.expressions, *own.expressions])
        source.set("with_", merged)
    return InsertSpec(
        target=this,
        source=source,
        overwrite=bool(tree.args.get("overwrite")),
        columns=columns,
        static=static,
        by_name=by_name,
    )


def with_default_keywords(
    text: str, tree: exp.Insert, fragment: Fragment, tokens: Sequence[Token] | None = None
) -> Fragment:
    """``fragment`` (the INSERT's source query) with each ``DEFAULT`` value of a VALUES row
    spelled ``NULL``: the table write gives NULL the column's default (``DefaultValueRow``),
    and NULL is what Spark fills for a column without one.

    Raises:
        SqlError: a DEFAULT keyword elsewhere than as a value of a VALUES row.
    """
    source = tree.expression
    wanted = len(_default_keywords(source))
    if not wanted:
        return fragment
    start, end = source.meta[SPAN]
    tokens = [
        t
        for t in (tokenize(text) if tokens is None else tokens)
        if t.token_type == TokenType.DEFAULT and start <= t.start and t.end < end
    ]
    if len(tokens) != wanted:
        raise SqlError("INSERT ... VALUES: DEFAULT is only supported as a value of its own")
    edits = tuple(Edit(t.start, t.end + 1, "NULL") for t in tokens)
    return dataclasses.replace(fragment, edits=fragment.edits + edits)


def _default_keywords(source: exp.Expr) -> list[exp.Var]:
    """The ``DEFAULT`` values of a VALUES source's rows."""
    if not isinstance(source, exp.Values):
        return []
    return [
        v
        for v in source.find_all(exp.Var)
        if v.name.upper() == "DEFAULT" and isinstance(v.parent, exp.Tuple)
    ]


def insert_dataframe(table: FileStoreTable, spec: InsertSpec, source: DataFrame) -> DataFrame:
    """The source rows as the table's columns (still in the source's types).

    Raises:
        SqlError: unknown, duplicate, extra or misplaced columns, a column count mismatch, or
            a NOT NULL column the statement leaves NULL; each names the table.
    """
    schema = table.schema
    names = schema.field_names
    label = f"Cannot write to {table.identifier}"
    static: dict[str, exp.Expr] = {}
    for key, value in spec.static.items():
        column = _lookup(names, key, "PARTITION column", label)
        if column not in schema.partition_keys:
            raise SqlError(f"{label}: PARTITION column '{key}' is not a partition key")
        static[column] = value

    width = len(source.columns)
    if spec.by_name:
        sources = _by_name(names, source.columns, static, label)
    else:
        targets = _targets(names, spec.columns, static, label)
        if width != len(targets):
            raise SqlError(
                f"{label}: the query has {width} columns but "
                f"{len(targets)} are expected ({', '.join(targets)})"
            )
        sources = dict(zip(targets, range(width), strict=True))

    filled = [f.name for f in schema.fields if f.name not in static and f.name not in sources]
    not_null = [
        f.name
        for f in schema.fields
        if f.name in filled and not f.type.nullable and f.default_value is None
    ]
    if not_null:
        raise SqlError(
            f"{label}: NOT NULL column{'s' if len(not_null) > 1 else ''} "
            f"{', '.join(not_null)} not given a value"
        )

    positional = source.toDF(*[f"_c{i}" for i in range(width)])
    columns = []
    for f in schema.fields:
        if f.name in static:
            value = F.expr(static[f.name].sql(dialect=PaimonSpark))
        elif f.name in sources:
            value = F.col(f"_c{sources[f.name]}")
        else:
            value = F.lit(None).cast(to_spark_type(f.type))
        columns.append(value.alias(f.name))
    return positional.select(*columns)


def _lookup(names: Sequence[str], wanted: str, what: str, label: str) -> str:
    """The table column ``wanted`` names (Spark matches column names case-insensitively)."""
    for name in names:
        if name.lower() == wanted.lower():
            return name
    raise SqlError(f"{label}: {what} '{wanted}' is not a column (columns: {', '.join(names)})")


def _targets(
    names: Sequence[str], listed: Sequence[str] | None, static: dict[str, exp.Expr], label: str
) -> list[str]:
    """The table columns the query's columns feed, in order (by position)."""
    if listed is None:
        return [n for n in names if n not in static]
    targets = [_lookup(names, c, "Column", label) for c in listed]
    duplicates = sorted({c for c in targets if targets.count(c) > 1})
    if duplicates:
        raise SqlError(f"{label}: the column list names {', '.join(duplicates)} more than once")
    fixed = [c for c in targets if c in static]
    if fixed:
        raise SqlError(f"{label}: {', '.join(fixed)} given both in PARTITION and the column list")
    return targets


def _by_name(
    names: Sequence[str], columns: Sequence[str], static: dict[str, exp.Expr], label: str
) -> dict[str, int]:
    """Table column -> index of the query column of the same name (``BY NAME``)."""
    lowered = {n.lower(): n for n in names}
    extras = [c for c in columns if c.lower() not in lowered]
    if extras:
        raise SqlError(f"{label}, extra columns: {', '.join(f'`{c}`' for c in extras)}")
    sources: dict[str, int] = {}
    for i, column in enumerate(columns):
        name = lowered[column.lower()]
        if name in sources:
            raise SqlError(f"{label}, due to ambiguous column name `{name}`")
        if name in static:
            raise SqlError(f"{label}: {name} given both in PARTITION and the query")
        sources[name] = i
    return sources

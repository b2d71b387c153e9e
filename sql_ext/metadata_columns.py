"""Paimon-Spark's metadata columns in SQL: `SELECT __paimon_file_path, * FROM t`.

A Paimon table has the hidden columns `__paimon_file_path`, `__paimon_row_index`,
`__paimon_partition` and `__paimon_bucket`, a row-tracking table `_ROW_ID` and
`_SEQUENCE_NUMBER` too (Paimon-Spark's `PaimonMetadataColumn`): a query
may name them, and `*` does not include them. The session reads a table through a view, so
a table whose statement names one of them gets a view with those columns (filled by the
executors' read, `sql_ext.datapath.changes`), and every `*` or `t.*` of a `SELECT` reading
that view directly is edited to `* EXCEPT (t.__paimon_...)`, which keeps them hidden.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from sqlglot import exp

from paimon_core.exceptions import PaimonError
from paimon_core.operations.row_tracking import row_tracking_enabled
from sql_ext.datapath.changes import METADATA_COLUMNS, ROW_TRACKING_METADATA
from sql_ext.errors import SqlError
from sql_ext.splice import Edit
from sql_ext.syntax.dialect import quote_identifier

__all__ = ["applicable", "requested_metadata", "star_edits"]

_NAMES = {name.lower(): name for name in METADATA_COLUMNS}


def requested_metadata(tree: exp.Expr, table: exp.Table) -> tuple[str, ...]:
    """The metadata columns `tree` may read from `table`: those it names unqualified or
    qualified with the table's alias (or name), in Paimon-Spark's order."""
    qualifier = table.alias_or_name.lower()
    found: set[str] = set()
    for column in tree.find_all(exp.Column):
        parts = [p.name for p in column.parts]  # `__paimon_partition.dt` is a field of one
        for i, part in enumerate(parts):
            name = _NAMES.get(part.lower())
            if name is not None and (i == 0 or parts[i - 1].lower() == qualifier):
                found.add(name)
    return tuple(name for name in METADATA_COLUMNS if name in found)


def applicable(
    table: exp.Table, columns: tuple[str, ...], options: Callable[[], Mapping[str, str]]
) -> tuple[str, ...]:
    """``columns`` less ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` unless ``table``, whose
    ``options`` are given, has row tracking: Paimon-Spark's metadata columns of such tables
    only; elsewhere the names are no columns, and in ``t$row_tracking`` they are plain
    columns. A table that cannot be loaded keeps none (its read says what is wrong)."""
    if not any(c in ROW_TRACKING_METADATA for c in columns):
        return columns
    if table.name.lower().endswith("$row_tracking"):
        return tuple(c for c in columns if c not in ROW_TRACKING_METADATA)
    try:
        tracks = row_tracking_enabled(options())
    except PaimonError:
        tracks = False
    return tuple(c for c in columns if tracks or c not in ROW_TRACKING_METADATA)


def _sources(select: exp.Select) -> list[exp.Expr]:
    from_ = select.args.get("from_")
    sources = [from_.this] if from_ is not None else []
    return sources + [join.this for join in select.args.get("joins") or ()]


def star_edits(tree: exp.Expr, tables: Iterable[tuple[exp.Table, Sequence[str]]]) -> list[Edit]:
    """Edits hiding the metadata columns of `tables` (each with the columns its view adds)
    from the `*` and `t.*` of the `SELECT`s that read them directly.

    Raises:
        SqlError: such a star already has an `EXCEPT` list.
    """
    by_node = {id(table): (table, columns) for table, columns in tables if columns}
    edits: list[Edit] = []
    if not by_node:
        return edits
    for select in tree.find_all(exp.Select):
        reading = [by_node[id(s)] for s in _sources(select) if id(s) in by_node]
        if not reading:
            continue
        for projection in select.expressions:
            if isinstance(projection, exp.Star):
                hidden = reading
                star = projection
            elif isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star):
                qualifier = projection.table.lower()
                hidden = [r for r in reading if r[0].alias_or_name.lower() == qualifier]
                star = projection.this
            else:
                continue
            if not hidden:
                continue
            if any(star.args.get(k) for k in ("except_", "except", "replace", "rename")):
                raise SqlError(
                    "SELECT * EXCEPT/REPLACE over a Paimon table whose metadata columns the "
                    "statement reads is not supported: list the columns"
                )
            end = star.meta.get("end")
            if end is None:
                raise SqlError("Cannot find the text of a * in the statement")
            names = [_qualified(table, column) for table, columns in hidden for column in columns]
            edits.append(Edit(end + 1, end + 1, f" EXCEPT ({', '.join(names)})"))
    return edits


def _qualified(table: exp.Table, column: str) -> str:
    if isinstance(table.this, exp.Identifier) or table.alias:
        return f"{quote_identifier(table.alias_or_name)}.{quote_identifier(column)}"
    return quote_identifier(column)  # a table function without an alias

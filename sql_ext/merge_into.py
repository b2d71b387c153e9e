"""MERGE INTO target USING source ON cond WHEN ... on Paimon tables: one snapshot per statement.

The forms of Paimon's ``docs/spark/sql-write.md`` (Spark's grammar): ``WHEN MATCHED [AND c]
THEN UPDATE SET ... | UPDATE SET * | DELETE``, ``WHEN NOT MATCHED [BY TARGET] [AND c] THEN
INSERT (cols) VALUES (...) | INSERT *`` and ``WHEN NOT MATCHED BY SOURCE [AND c] THEN UPDATE
SET ... | DELETE``. Clauses of a kind are tried in order, the first whose condition holds wins
(only the last of a kind may omit its condition, as Spark's parser requires). The source is a
table (Paimon's, read at its latest snapshot or one time travel names, or Spark's) or a
subquery, read through the session. As Paimon-Spark's ``PaimonMergeInto`` and
``MergeIntoPaimonTable`` (latest Paimon):

* ``*`` expands against the target's columns, taken from the source column of the same name;
  a target column the source lacks is an error ("Cannot INSERT * into target column ..." /
  "Cannot UPDATE * target column ..."); source columns the target lacks are ignored.
  ``INSERT (cols) VALUES`` gives the columns left out NULL, which the table write turns into
  their DEFAULT; a NOT NULL column without one is refused before anything runs.
* Unqualified names in a NOT MATCHED clause are the source's, in a NOT MATCHED BY SOURCE
  clause the target's (Spark resolves them against that side only). An INSERT column list
  names target columns (``x`` or ``t.x``; ``s.x`` of the source only with merge-schema, below);
  a nested field there is refused ("INSERT assignment keys cannot be nested fields").
* Every value of a ROW column, or of ROWs inside ARRAY and MAP columns, from ``*`` or an
  explicit clause alike, is rebuilt field by field by name (``PaimonAssignmentUtils`` /
  ``PaimonOutputResolver.resolveValue``): a field the value lacks or one the column lacks is
  refused ("Cannot write to ..., nested struct field `s.b` is missing in source", "extra
  struct fields at `s`"), where Spark's cast would pair fields by position. Names match
  case-insensitively unless ``spark.sql.caseSensitive``.
* Primary-key tables: only the ``deduplicate`` and ``partial-update`` merge engines. On
  ``partial-update`` an updated row is written whole (every column, the new values and the
  current ones), so a column set to NULL keeps its value, as in Paimon; a DELETE clause on a
  ``partial-update`` table that cannot merge ``-D`` rows is refused before anything is written
  (Paimon-Spark writes them and every later read fails: ``rowlevel.check_retractable``). An UPDATE of a WHEN MATCHED clause may assign
  a primary-key column only when the ON condition equates every primary-key column with a
  source column ("Can't update the primary key column in update clause."); a NOT MATCHED BY
  SOURCE update of a key column, which Paimon lets through and which would leave the old row
  and add a new one, is refused. Subqueries in the conditions are refused, as in Paimon.
* Cardinality: when there are WHEN MATCHED clauses, a target row matched by more than one
  source row is an error (Paimon's ``checkMatchRationality``), checked before anything is
  written.
* Primary-key tables: source and target are joined by Spark (a full outer join on the
  executors); each joined row becomes ``+U`` (update), ``-D`` (delete, the whole target row)
  or ``+I`` (insert), or nothing; those rows are written through the distributed writer in one
  APPEND snapshot (none when nothing changes). When there is no NOT MATCHED BY SOURCE clause,
  the conjuncts of ON that name only the target prune the target's read, as Paimon does.
* Append tables, by copy-on-write: the target files holding a row matched by a source row
  (WHEN MATCHED updates or deletes) or matched by none (NOT MATCHED BY SOURCE updates or
  deletes) are rewritten: their rows updated, deleted or kept as they are. Inserted rows are
  appended, and the rewritten files deleted, in one commit (OVERWRITE when files were
  rewritten, else APPEND; none when nothing changes). A file holding matched rows is read
  even when only inserts are asked for, so that matched source rows are not inserted. Where a
  NOT MATCHED BY SOURCE clause rewrites files, a target row matched by several source rows
  is refused too: Paimon would keep it once per match.

``write.merge-schema`` (the session's ``spark.paimon.write.merge-schema``, as Paimon-Spark's
``MergeSchemaEvolutionHelper`` and ``PaimonAssignmentUtils``, latest Paimon): when a clause is
``UPDATE SET *`` / ``INSERT *``, or assigns a column only the source has (``UPDATE SET x =
s.x``, ``INSERT (x) VALUES (s.x)``), the source's columns (all of them with a ``*`` in a
MATCHED or NOT MATCHED clause, else the assigned ones) are merged into the table's schema as
INSERT BY NAME merges them (new columns and nested ROW fields added, types widened with
``write.merge-schema.type-widening``; names compared as ``spark.sql.caseSensitive`` says, as
Paimon's ``SchemaMergingUtils`` is told). An INSERT column list may name a source column
``s.x``: the target's ``x``, added if new. The clauses then see the evolved columns: a ``*``
takes each one from the source by name; one the source lacks keeps its current value in
``UPDATE SET *`` and gets its DEFAULT (else NULL) in ``INSERT *`` (instead of the "source is
missing this column" error); an explicit clause gives the new columns NULL. Inside ROW values
a missing field is NULL, except in ``UPDATE SET *`` of a ROW column, which keeps the current
field (a NULL source value then leaves the current fields the source does not have, as
Paimon's ``PreserveTarget``); fields of a value its column lacks, where no evolution added
them (an explicit ``SET s = ...``), are not written. Existing rows read the new columns as NULL. The new ``schema-N`` is committed once the
statement is checked, just before the data is written (as Paimon's ``run``); a write that fails
after it leaves the evolved schema, as in Paimon.

A refused or failed statement commits nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property, reduce
from typing import TYPE_CHECKING, Literal

from pyspark.sql import functions as F
from pyspark.sql import types as st
from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from paimon_core.operations.data_evolution import data_evolution_enabled
from paimon_core.operations.row_tracking import ROW_ID, SEQUENCE_NUMBER
from sql_ext.datapath.write import ROW_KIND_COLUMN, write_dataframe
from sql_ext.errors import SqlError
from sql_ext.merge_schema import Evolution, MergeSchema, conform, plan_evolution
from sql_ext.rowlevel import (
    DELETE,
    FILE_INDEX,
    INSERT,
    UPDATE_AFTER,
    Reader,
    Target,
    align,
    assignment_key,
    check_engine,
    check_retractable,
    deleted_files,
    file_frames,
    file_indexes,
    is_default_keyword,
    refuse_subqueries,
    resolve_path,
    spark_col,
    spark_errors,
    spark_expr,
    tracks_rows,
    with_row_ids,
)
from sql_ext.spark_types import to_spark_type
from sql_ext.syntax.dialect import PaimonSpark
from sql_ext.syntax.tokens import tokenize

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

    from paimon_core.format.types import DataField, DataType
    from paimon_core.table import FileStoreTable
    from sql_ext.datapath.read import ReadPlan

Kind = Literal["matched", "not_matched", "not_matched_by_source"]
Action = Literal["update", "delete", "insert"]

_SOURCE_ROW = "__paimon_source_row"
_TARGET_ROW = "__paimon_target_row"
_TOUCHED = "__paimon_file_touched"
_ACTION = "__paimon_action"
_ROW_ID = "__paimon_row_id"
_NOOP = -1
_KEEP = -2
_KINDS = {"update": UPDATE_AFTER, "delete": DELETE, "insert": INSERT}
_SIMPLE = (
    exp.Column, exp.Identifier, exp.Literal, exp.Boolean, exp.Null, exp.Paren, exp.EQ,
    exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.In, exp.Is, exp.Not, exp.And, exp.Or,
    exp.Between, exp.Tuple, exp.Neg, exp.Cast, exp.DataType, exp.NullSafeEQ,
)  # fmt: skip
"""Node kinds of an ON conjunct that may prune the target's read (deterministic, cheap)."""


@dataclass(frozen=True)
class Source:
    """The USING side: its rows (read through the session) and the alias naming them."""

    rows: DataFrame
    alias: str
    table: exp.Table | None = None
    """The source table when USING names one (its ``db.s.c`` columns are ``s.c``)."""


@dataclass(frozen=True)
class Clause:
    """One WHEN clause with its values aligned to the target's columns: updates give the
    columns they change, inserts every column (NULL for those left out)."""

    kind: Kind
    action: Action
    condition: exp.Expr | None
    values: dict[str, exp.Expr]


def source_query(using: exp.Table) -> str:
    """``SELECT * FROM <the USING table>`` (with its time travel), generated by sqlglot."""
    table = using.copy()
    table.set("alias", None)
    return exp.select(exp.Star()).from_(table).sql(dialect=PaimonSpark)


def source_alias(using: exp.Expr) -> str:
    """The name the statement's expressions give the source."""
    alias = using.args.get("alias")
    if alias is not None and alias.name:
        return alias.name
    if isinstance(using, exp.Table):
        return using.name
    return "__paimon_source"


def using_span(text: str, tokens: Sequence[Token] | None = None) -> tuple[int, int] | None:
    """Offsets (end exclusive) of the query in ``USING ( <query> )`` of a MERGE statement's
    text, found on its tokens: so that Spark runs the subquery as the user wrote it."""
    tokens = tokenize(text) if tokens is None else tokens
    depth = 0
    for i, token in enumerate(tokens):
        if token.token_type == TokenType.L_PAREN:
            depth += 1
        elif token.token_type == TokenType.R_PAREN:
            depth -= 1
        elif depth == 0 and token.token_type == TokenType.USING:
            if i + 1 == len(tokens) or tokens[i + 1].token_type != TokenType.L_PAREN:
                return None
            opening, level = tokens[i + 1], 0
            for closing in tokens[i + 1 :]:
                if closing.token_type == TokenType.L_PAREN:
                    level += 1
                elif closing.token_type == TokenType.R_PAREN:
                    level -= 1
                    if level == 0:
                        return opening.end + 1, closing.start
            return None
    return None


def merge_into(
    spark: SparkSession,
    target: Target,
    tree: exp.Merge,
    source: Source,
    read: Reader,
    flags: MergeSchema | None = None,
    case_sensitive: bool = False,
) -> int | None:
    """Run one MERGE INTO (see the module docstring); the snapshot id, None when nothing
    changed. ``flags``: the ``write.merge-schema`` settings that apply to the target;
    ``case_sensitive``: Spark's ``spark.sql.caseSensitive`` (how ``*``, nested fields and
    new columns match names).

    Raises:
        SqlError: a clause, column, assignment, merge engine or cardinality Paimon refuses, or
            an expression Spark rejects; nothing is written then.
    """
    statement = f"MERGE INTO {target.shown}"
    table = target.table
    flags = flags or MergeSchema()
    check_engine(table, "MergeInto", statement)
    if not table.is_primary_key_table and data_evolution_enabled(table.options):
        # Its copy-on-write would rewrite files of some row-id ranges only partly.
        raise SqlError(
            f"{statement}: MERGE INTO a data-evolution table ('data-evolution.enabled' = "
            "'true') is not supported yet"
        )
    if source.alias.lower() == target.alias.lower():
        raise SqlError(f"{statement}: the source and the target are both named {target.alias}")
    on = tree.args.get("on")
    if not isinstance(on, exp.Expr) or tree.args.get("using_cond"):
        raise SqlError(f"{statement}: expected ON <merge condition>")
    on = _requalified(on, target, source)
    refuse_subqueries(statement, on)
    source_names = {c.lower(): c for c in source.rows.columns}
    whens = tree.args.get("whens")
    when_list: list[exp.When] = list(whens.expressions) if whens is not None else []
    evolution = _evolution(
        when_list, target, source, source_names, flags, statement, case_sensitive
    )
    base = table
    if evolution is not None:
        target = replace(target, table=evolution.table)
    context = _Context(target, source, source_names, statement, flags.enabled, case_sensitive)
    clauses = [_clause(when, context) for when in when_list]
    _check_order(clauses, statement)
    _check_keys(clauses, on, target, source_names, statement)
    if any(c.action == "delete" for c in clauses):
        check_retractable(table, statement)
    if not clauses:
        return None
    if table.schema.primary_keys:
        return _merge_rows(spark, target, source, on, clauses, read, statement, evolution)
    return _copy_on_write(spark, target, base, source, on, clauses, statement, evolution)


def _is_star(when: exp.When) -> bool:
    then = when.args.get("then")
    if isinstance(then, exp.Update):
        return len(then.expressions) == 1 and isinstance(then.expressions[0], exp.Star)
    return isinstance(then, exp.Insert) and isinstance(then.this, exp.Star)


def _source_bound(
    key: exp.Expr,
    target: Target,
    source: Source,
    source_names: dict[str, str],
    case_sensitive: bool = False,
) -> str | None:
    """The source column an assignment key names when the target has no such column
    (Paimon-Spark resolves a key against the target, then, with merge-schema, the source)."""
    if isinstance(key, exp.Identifier):
        qualifier, name = "", key.name
    elif isinstance(key, exp.Column) and isinstance(key.this, exp.Identifier) and not key.db:
        qualifier, name = key.table, key.name
    else:
        return None
    if qualifier and qualifier.lower() != source.alias.lower():
        return None
    if case_sensitive:
        if any(f.name == name for f in target.table.schema.fields):
            return None
        return name if name in source.rows.columns else None
    if resolve_path(target.table.schema.fields, [name]) is not None:
        return None
    return source_names.get(name.lower())


def _keys(when: exp.When) -> list[exp.Expr]:
    then = when.args.get("then")
    if isinstance(then, exp.Update):
        return [e.this for e in then.expressions if isinstance(e, exp.EQ)]
    if isinstance(then, exp.Insert) and isinstance(then.this, exp.Tuple):
        return list(then.this.expressions)
    return []


def _evolution(
    whens: Sequence[exp.When],
    target: Target,
    source: Source,
    source_names: dict[str, str],
    flags: MergeSchema,
    statement: str,
    case_sensitive: bool = False,
) -> Evolution | None:
    """The schema change ``write.merge-schema`` asks of this MERGE (Paimon-Spark's
    ``evolveTargetIfNeeded``), None when there is none. Names match as Spark's resolver
    does (``case_sensitive``), as Paimon's ``SchemaMergingUtils`` is told."""
    if not flags.enabled:
        return None
    bound = {
        when: [
            n
            for n in (
                _source_bound(k, target, source, source_names, case_sensitive) for k in _keys(when)
            )
            if n is not None
        ]
        for when in whens
    }
    if not any(_is_star(w) or bound[w] for w in whens):
        return None
    scoped = [w for w in whens if not w.args.get("source")]
    if any(_is_star(w) for w in scoped):
        names = set(source_names.values())
    else:
        names = {n for w in scoped for n in bound[w]}
    data = st.StructType([f for f in source.rows.schema.fields if f.name in names])
    try:
        evolution = plan_evolution(target.table, data, flags, case_sensitive)
    except SqlError as e:
        raise SqlError(f"{statement}: {e}") from None
    return evolution if evolution.changes else None


# --------------------------------------------------------------------------- clauses


def _requalified(node: exp.Expr, target: Target, source: Source) -> exp.Expr:
    out = target.requalify(node)
    if source.table is not None and source.alias.lower() == source.table.name.lower():
        out = Target(
            target.table, source.table.db or "", source.table.name, source.alias
        ).requalify(out)
    return out


def _qualify(node: exp.Expr, alias: str, names: set[str]) -> exp.Expr:
    """``node`` with its unqualified columns among ``names`` (lower case) qualified with
    ``alias``; lambda variables stay as they are."""
    out = node.copy()
    for column in list(out.find_all(exp.Column)):
        if column.table or column.name.lower() not in names:
            continue
        bound = any(
            column.name.lower() in {p.name.lower() for p in scope.expressions}
            for scope in _ancestors(column, exp.Lambda)
        )
        if not bound:
            column.set("table", exp.to_identifier(alias, quoted=True))
    return out


def _ancestors(node: exp.Expr, kind: type[exp.Expr]) -> list[exp.Expr]:
    found = []
    parent = node.parent
    while parent is not None:
        if isinstance(parent, kind):
            found.append(parent)
        parent = parent.parent
    return found


Behavior = Literal["fail", "null", "preserve"]
"""How a ROW value meets the fields of its target (Paimon's ``MissingFieldBehavior``):
``fail`` (strict: a field missing or extra is an error), ``null`` (merge-schema: a missing
field is NULL), ``preserve`` (merge-schema ``UPDATE SET *`` of a ROW column: a missing field
keeps the target's current value)."""


@dataclass(frozen=True)
class _Context:
    """What resolving the clauses of one MERGE needs."""

    target: Target
    source: Source
    source_names: dict[str, str]
    """The source's columns by lower-cased name."""
    statement: str
    merge_schema: bool
    case_sensitive: bool

    def source_column(self, name: str) -> str | None:
        """The source column ``name`` means, as Spark's resolver matches names."""
        if self.case_sensitive:
            return name if name in self.source.rows.columns else None
        return self.source_names.get(name.lower())

    def same(self, a: str, b: str) -> bool:
        return a == b if self.case_sensitive else a.lower() == b.lower()

    @cached_property
    def _frame(self) -> DataFrame:
        """No rows of the source and the target side by side: Spark analyses a clause's
        value against it (no job runs) to tell its type."""
        from sql_ext.spark_types import to_spark_schema
        from sql_ext.views import local_dataframe

        rows = self.source.rows
        schema = to_spark_schema(self.target.table.schema.fields)
        target = local_dataframe(rows.sparkSession, [], schema).alias(self.target.alias)
        return rows.limit(0).alias(self.source.alias).crossJoin(target)

    def type_of(self, node: exp.Expr) -> st.DataType:
        """Spark's type of a clause's value (already qualified)."""
        with spark_errors(self.statement):
            return self._frame.select(spark_expr(node)).schema.fields[0].dataType

    def behavior(self) -> Behavior:
        return "null" if self.merge_schema else "fail"


def _clause(when: exp.When, ctx: _Context) -> Clause:
    """One WHEN clause, its names resolved and its values aligned."""
    target, source, statement = ctx.target, ctx.source, ctx.statement
    if when.args.get("matched"):
        kind: Kind = "matched"
    elif when.args.get("source"):
        kind = "not_matched_by_source"
    else:
        kind = "not_matched"
    fields = target.table.schema.fields
    target_names = {f.name.lower() for f in fields}

    def resolve(node: exp.Expr) -> exp.Expr:
        node = _requalified(node, target, source)
        if kind == "not_matched":
            node = _qualify(node, source.alias, set(ctx.source_names))
        elif kind == "not_matched_by_source":
            node = _qualify(node, target.alias, target_names)
        refuse_subqueries(statement, node)
        return node

    condition = when.args.get("condition")
    condition = None if condition is None else resolve(condition)
    then = when.args.get("then")
    shown = kind.replace("_", " ").upper()
    if isinstance(then, exp.Var) and then.name.upper() == "DELETE":
        if kind == "not_matched":
            raise SqlError(f"{statement}: WHEN {shown} can only INSERT")
        return Clause(kind, "delete", condition, {})
    if isinstance(then, exp.Update):
        if kind == "not_matched":
            raise SqlError(f"{statement}: WHEN {shown} can only INSERT")
        if len(then.expressions) == 1 and isinstance(then.expressions[0], exp.Star):
            if kind != "matched":
                raise SqlError(f"{statement}: UPDATE SET * needs WHEN MATCHED")
            assignments = [
                ((f.name,), value)
                for f in fields
                if (value := _star_value(f, "UPDATE *", ctx)) is not None
            ]
        else:
            assignments = []
            for item in then.expressions:
                if not isinstance(item, exp.EQ):
                    raise SqlError(
                        f"{statement}: expected `column = value`, got {item.sql('spark')}"
                    )
                key_node = _unqualified_source_key(item.this, source, ctx.merge_schema)
                key = assignment_key(key_node, target, statement)
                value = item.expression
                if is_default_keyword(value):
                    assignments.append((key, exp.Null()))
                    continue
                value = resolve(value)
                field_type = _field_at(fields, key).type
                assignments.append((key, _aligned_value(ctx, value, field_type, key)))
        values = align(fields, assignments, target.column, statement)
        return Clause(kind, "update", condition, values)
    if isinstance(then, exp.Insert):
        if kind != "not_matched":
            raise SqlError(f"{statement}: only WHEN NOT MATCHED can INSERT")
        return Clause(kind, "insert", condition, _insert_values(then, ctx, resolve))
    raise SqlError(f"{statement}: unsupported clause {when.sql('spark')}")


def _field_at(fields: Sequence[DataField], path: Sequence[str]) -> DataField:
    """The field at a stored path (``assignment_key``'s)."""
    current = list(fields)
    found = None
    for name in path:
        found = next(f for f in current if f.name == name)
        current = list(found.type.fields or ()) if found.type.root == "ROW" else []
    assert found is not None
    return found


def _unqualified_source_key(key: exp.Expr, source: Source, merge_schema: bool) -> exp.Expr:
    """``s.x`` as a SET key with merge-schema: the target's (possibly new) column ``x``."""
    if (
        merge_schema
        and isinstance(key, exp.Column)
        and not key.db
        and key.table
        and key.table.lower() == source.alias.lower()
    ):
        return exp.column(key.name, quoted=True)
    return key


def _star_value(f: DataField, form: str, ctx: _Context) -> exp.Expr | None:
    """The value ``*`` gives target column ``f``: the source column of its name (its ROW
    values aligned by name), None when the source has none and merge-schema lets
    ``UPDATE SET *`` keep the current value (NULL for ``INSERT *``).

    Raises:
        SqlError: the source lacks the column without merge-schema (Paimon's messages), or
            a ROW value does not fit its column (``_aligned``).
    """
    statement = ctx.statement
    found = ctx.source_column(f.name)
    if found is None:
        if ctx.merge_schema:
            return None if form == "UPDATE *" else exp.Null()
        if form == "INSERT *":
            raise SqlError(
                f"{statement}: Cannot INSERT * into target column '{f.name}': source is missing "
                "this column. Enable 'spark.paimon.write.merge-schema' to fill it with "
                "CURRENT_DEFAULT / NULL."
            )
        raise SqlError(
            f"{statement}: Cannot UPDATE * target column '{f.name}': source is missing this "
            "column. Enable 'spark.paimon.write.merge-schema' to preserve the current value."
        )
    value: exp.Expr = exp.column(found, table=ctx.source.alias, quoted=True)
    if not _has_row(f.type):
        return value
    data = ctx.source.rows.schema[found].dataType
    if form == "UPDATE *" and ctx.merge_schema and f.type.root == "ROW":
        current = ctx.target.column((f.name,))
        return _aligned(ctx, value, data, f.type, "preserve", current, (f.name,))
    return _aligned(ctx, value, data, f.type, ctx.behavior(), None, (f.name,))


def _aligned_value(
    ctx: _Context, value: exp.Expr, field_type: DataType, path: Sequence[str]
) -> exp.Expr:
    """An explicit clause's value for a column (or nested field) of ``field_type``, its ROW
    values aligned by name (Paimon's ``PaimonAssignmentUtils``, for every assignment)."""
    if isinstance(value, exp.Null) or not _has_row(field_type):
        return value
    return _aligned(ctx, value, ctx.type_of(value), field_type, ctx.behavior(), None, tuple(path))


def _has_row(t: DataType) -> bool:
    if t.root == "ROW":
        return True
    return any(c is not None and _has_row(c) for c in (t.element, t.key, t.value))


def _aligned(
    ctx: _Context,
    value: exp.Expr,
    data: st.DataType,
    target: DataType,
    behavior: Behavior,
    current: exp.Expr | None,
    path: tuple[str, ...],
) -> exp.Expr:
    """``value`` (of Spark type ``data``) in the shape of ``target``: ROW fields matched by
    name at every depth, through arrays and map keys and values (Paimon's
    ``PaimonOutputResolver.resolveValue``); other values as they are (the write casts them).
    Inside arrays and maps ``preserve`` has no current value to keep: missing fields are
    NULL, as in Paimon.

    Raises:
        SqlError: with ``fail``, a field missing from the value or one the target lacks;
            a field the value has twice (Paimon's messages).
    """
    if target.root == "ROW" and isinstance(data, st.StructType):
        return _aligned_struct(ctx, value, data, target, behavior, current, path)
    inner: Behavior = "null" if behavior == "preserve" else behavior
    if target.root == "ARRAY" and isinstance(data, st.ArrayType):
        assert target.element is not None
        return _transformed(
            ctx, "transform", value, [(data.elementType, target.element)], inner, path
        )
    if target.root == "MAP" and isinstance(data, st.MapType):
        assert target.key is not None and target.value is not None
        out = _transformed(ctx, "transform_keys", value, [(data.keyType, target.key)], inner, path)
        return _transformed(
            ctx, "transform_values", out, [(data.valueType, target.value)], inner, path
        )
    return value


def _transformed(
    ctx: _Context,
    function: str,
    value: exp.Expr,
    parts: list[tuple[st.DataType, DataType]],
    behavior: Behavior,
    path: tuple[str, ...],
) -> exp.Expr:
    """``function(value, (k, v) -> ...)`` aligning an array's elements (``transform``) or a
    map's keys or values; ``value`` itself when nothing inside needs it."""
    ((data, target),) = parts
    depth = len(path)
    key, item = f"__paimon_k{depth}", f"__paimon_v{depth}"
    variable = key if function == "transform_keys" else item
    name = "element" if function == "transform" else "key" if variable == key else "value"
    if not _has_row(target):
        return value
    body = _aligned(ctx, exp.column(variable), data, target, behavior, None, (*path, name))
    params = (
        [exp.to_identifier(item)]
        if function == "transform"
        else [
            exp.to_identifier(key),
            exp.to_identifier(item),
        ]
    )
    return exp.Anonymous(
        this=function, expressions=[value, exp.Lambda(this=body, expressions=params)]
    )


def _field_of(value: exp.Expr, name: str) -> exp.Expr:
    base = value.copy()
    if not isinstance(base, (exp.Column, exp.Dot)):
        base = exp.Paren(this=base)
    return exp.Dot(this=base, expression=exp.to_identifier(name, quoted=True))


def _aligned_struct(
    ctx: _Context,
    value: exp.Expr,
    data: st.StructType,
    target: DataType,
    behavior: Behavior,
    current: exp.Expr | None,
    path: tuple[str, ...],
) -> exp.Expr:
    """A ROW value rebuilt as ``named_struct`` of the target's fields (see ``_aligned``); a
    NULL value stays NULL, unless ``preserve`` keeps fields of a current value that is not."""
    where = f"{ctx.statement}: Cannot write to `{ctx.target.shown}`"
    used: set[str] = set()
    parts: list[exp.Expr] = []
    for sub in target.fields or ():
        sub_path = (*path, sub.name)
        shown = ".".join(sub_path)
        matches = [f for f in data.fields if ctx.same(f.name, sub.name)]
        kept = _field_of(current, sub.name) if current is not None else None
        if len(matches) > 1:
            raise SqlError(f"{where}, due to ambiguous column name `{shown}`.")
        if not matches:
            if behavior == "fail":
                raise SqlError(
                    f"{where}, nested struct field `{shown}` is missing in source. Enable "
                    "'spark.paimon.write.merge-schema' to fill it with NULL."
                )
            part: exp.Expr = kept if kept is not None else exp.Null()
        else:
            found = matches[0]
            used.add(found.name)
            inner = _field_of(value, found.name)
            part = _aligned(ctx, inner, found.dataType, sub.type, behavior, kept, sub_path)
        parts += [exp.Literal.string(sub.name), part]
    extras = [f.name for f in data.fields if f.name not in used]
    if extras and behavior == "fail":
        listed = ", ".join(f"`{n}`" for n in extras)
        raise SqlError(f"{where}, extra struct fields at `{'.'.join(path)}`: {listed}")
    struct = exp.Anonymous(this="named_struct", expressions=parts)
    is_null: exp.Expr = exp.Is(this=value.copy(), expression=exp.Null())
    if current is not None and _keeps_target_fields(ctx, data, target):
        is_null = exp.And(
            this=is_null, expression=exp.Is(this=current.copy(), expression=exp.Null())
        )
    return exp.If(this=is_null, true=exp.Null(), false=struct)


def _keeps_target_fields(ctx: _Context, data: st.StructType, target: DataType) -> bool:
    """Whether ``target`` has a field, at any depth, that ``data`` lacks (Paimon's
    ``hasExtraStructFieldsToPreserveValue``)."""
    fields = list(target.fields or ())
    if len(fields) > len(data.fields):
        return True
    for sub in fields:
        found = next((f for f in data.fields if ctx.same(f.name, sub.name)), None)
        if found is None:
            return True
        if (
            sub.type.root == "ROW"
            and isinstance(found.dataType, st.StructType)
            and _keeps_target_fields(ctx, found.dataType, sub.type)
        ):
            return True
    return False


def _insert_values(
    then: exp.Insert, ctx: _Context, resolve: Callable[[exp.Expr], exp.Expr]
) -> dict[str, exp.Expr]:
    """Every column's value of an INSERT clause.

    The column list names target columns, qualified with the target's alias or not; with
    merge-schema also source columns (``s.x``: the target's column ``x``, new if the target
    lacks it), as Paimon-Spark resolves an INSERT key against the target, then the source.

    Raises:
        SqlError: a key that is a nested field or no column, a column given twice, a NOT
            NULL column without a value, or a ROW value that does not fit (Paimon's messages).
    """
    statement = ctx.statement
    fields = ctx.target.table.schema.fields
    values: dict[str, exp.Expr] = {}
    if isinstance(then.this, exp.Star):
        for f in fields:
            value = _star_value(f, "INSERT *", ctx)
            if value is not None and not isinstance(value, exp.Null):
                values[f.name] = value
        return _with_nulls(values, fields, statement)
    columns = then.this.expressions if isinstance(then.this, exp.Tuple) else []
    given = then.expression.expressions if isinstance(then.expression, exp.Tuple) else []
    if not columns or len(columns) != len(given):
        raise SqlError(
            f"{statement}: INSERT needs (columns) VALUES (values) of the same length, or *"
        )
    for column, value in zip(columns, given):
        path = _insert_key(column, ctx)
        if path[0] in values:
            raise SqlError(f"{statement}: Multiple assignments for '{path[0]}'")
        if is_default_keyword(value):
            values[path[0]] = exp.Null()
            continue
        field_type = _field_at(fields, path).type
        values[path[0]] = _aligned_value(ctx, resolve(value), field_type, path)
    return _with_nulls(values, fields, statement)


def _insert_key(column: exp.Expr, ctx: _Context) -> tuple[str, ...]:
    """The target column an INSERT column list names (see ``_insert_values``)."""
    statement = ctx.statement
    fields = ctx.target.table.schema.fields
    shown = column.sql("spark")
    if isinstance(column, exp.Identifier):
        qualifier, name = "", column.name
    elif (
        isinstance(column, exp.Column) and isinstance(column.this, exp.Identifier) and not column.db
    ):
        qualifier, name = column.table, column.name
    else:
        raise SqlError(f"{statement}: INSERT assignment keys cannot be nested fields: {shown}")
    shown = f"{qualifier}.{name}" if qualifier else name
    if qualifier:
        if resolve_path(fields, [qualifier, name]) is not None and not ctx.same(
            qualifier, ctx.target.alias
        ):
            raise SqlError(f"{statement}: INSERT assignment keys cannot be nested fields: {shown}")
        source_key = ctx.merge_schema and ctx.same(qualifier, ctx.source.alias)
        if not ctx.same(qualifier, ctx.target.alias) and not source_key:
            raise SqlError(f"{statement}: cannot resolve column {shown} of the INSERT")
    found = next((f for f in fields if ctx.same(f.name, name)), None)
    if found is None:
        raise SqlError(f"{statement}: cannot resolve column {shown} of the INSERT")
    return (found.name,)


def _with_nulls(
    values: dict[str, exp.Expr], fields: Sequence[DataField], statement: str
) -> dict[str, exp.Expr]:
    """Every column's value, NULL (then its DEFAULT) for those not given.

    Raises:
        SqlError: a NOT NULL column without a default is not given a value.
    """
    missing = [
        f.name
        for f in fields
        if f.name not in values and not f.type.nullable and f.default_value is None
    ]
    if missing:
        raise SqlError(f"{statement}: NOT NULL column(s) {', '.join(missing)} not given a value")
    return {f.name: values.get(f.name, exp.Null()) for f in fields}


def _check_order(clauses: list[Clause], statement: str) -> None:
    """Only the last clause of a kind may omit its condition (Spark's parser)."""
    for kind in ("matched", "not_matched", "not_matched_by_source"):
        of_kind = [c for c in clauses if c.kind == kind]
        if any(c.condition is None for c in of_kind[:-1]):
            shown = kind.replace("_", " ").upper()
            raise SqlError(f"{statement}: only the last WHEN {shown} clause can omit the condition")


def _check_keys(
    clauses: list[Clause],
    on: exp.Expr,
    target: Target,
    source_names: dict[str, str],
    statement: str,
) -> None:
    """Paimon's ``checkUpdateActionValidity`` (see the module docstring)."""
    keys = list(target.table.schema.primary_keys)
    if not keys:
        return

    def assigns_key(clause: Clause) -> bool:
        return clause.action == "update" and any(
            k in clause.values and not _is_target_column(clause.values[k], k, target, source_names)
            for k in keys
        )

    if any(c.kind == "not_matched_by_source" and assigns_key(c) for c in clauses):
        raise SqlError(f"{statement}: Can't update the primary key column in update clause.")
    conjuncts = list(on.flatten()) if isinstance(on, exp.And) else [on]
    equated = all(
        any(
            isinstance(c, exp.EQ)
            and isinstance(c.this, exp.Column)
            and isinstance(c.expression, exp.Column)
            and c.this != c.expression
            and (
                _is_target_column(c.this, k, target, source_names)
                or _is_target_column(c.expression, k, target, source_names)
            )
            for c in conjuncts
        )
        for k in keys
    )
    if not equated and any(c.kind == "matched" and assigns_key(c) for c in clauses):
        raise SqlError(f"{statement}: Can't update the primary key column in update clause.")


def _is_target_column(
    node: exp.Expr, name: str, target: Target, source_names: dict[str, str]
) -> bool:
    if not isinstance(node, exp.Column) or node.db or node.name.lower() != name.lower():
        return False
    if node.table:
        return node.table.lower() == target.alias.lower()
    return name.lower() not in source_names


# --------------------------------------------------------------------------- running


def _joined(source: Source, target_rows: DataFrame, target: Target, on: exp.Expr) -> DataFrame:
    """Source and target rows, full outer joined on ON, each side marked."""
    left = source.rows.withColumn(_SOURCE_ROW, F.lit(True)).alias(source.alias)
    right = target_rows.withColumn(_TARGET_ROW, F.lit(True)).alias(target.alias)
    return left.join(right, spark_expr(on), "full_outer")


def _action(clauses: list[Clause], target: Target, source: Source, keep: Column) -> Column:
    """The index of the clause each joined row takes, ``_KEEP`` or ``_NOOP``."""

    def chain(kind: Kind, default: Column) -> Column:
        column = default
        for i in reversed(range(len(clauses))):
            clause = clauses[i]
            if clause.kind != kind:
                continue
            holds = F.lit(True) if clause.condition is None else spark_expr(clause.condition)
            column = F.when(holds, F.lit(i)).otherwise(column)
        return column

    no_target = spark_col(target.alias, _TARGET_ROW).isNull()
    no_source = spark_col(source.alias, _SOURCE_ROW).isNull()
    return (
        F.when(no_target, chain("not_matched", F.lit(_NOOP)))
        .when(no_source, chain("not_matched_by_source", keep))
        .otherwise(chain("matched", keep))
    )


def _outputs(
    joined: DataFrame,
    clauses: list[Clause],
    target: Target,
    source: Source,
    keep: Column,
    tracking: bool = False,
) -> DataFrame:
    """The target's columns after each row's action, with the action index. ``tracking``
    (a row-tracking table): also the target row's ``_ROW_ID`` (null for an inserted row)
    and ``_SEQUENCE_NUMBER``, null for an updated row (the commit's snapshot), as
    Paimon-Spark's ``constructChangedRows`` with ``writeRowTracking``."""
    with_action = joined.withColumn(_ACTION, _action(clauses, target, source, keep))
    action = F.col(_ACTION)
    columns = []
    for f in target.table.schema.fields:
        columns.append(_value(f, clauses, target, action).alias(f.name))
    if tracking:
        updates = [i for i, c in enumerate(clauses) if c.action == "update"]
        sequence = spark_col(target.alias, SEQUENCE_NUMBER)
        if updates:
            sequence = F.when(action.isin(updates), F.lit(None)).otherwise(sequence)
        columns.append(spark_col(target.alias, ROW_ID).alias(ROW_ID))
        columns.append(sequence.cast("bigint").alias(SEQUENCE_NUMBER))
    kinds = F.lit(INSERT)
    for i, clause in enumerate(clauses):
        kinds = F.when(action == i, F.lit(_KINDS[clause.action])).otherwise(kinds)
    return with_action.select(*columns, kinds.cast("tinyint").alias(ROW_KIND_COLUMN), action)


def _value(f: DataField, clauses: list[Clause], target: Target, action: Column) -> Column:
    spark_type = to_spark_type(f.type)
    value = spark_col(target.alias, f.name)
    for i in reversed(range(len(clauses))):
        new = clauses[i].values.get(f.name)
        if new is not None:
            cast = spark_expr(new).cast(spark_type)
            value = F.when(action == i, cast).otherwise(value)
    return value


def _check_cardinality(
    source: Source, target_rows: DataFrame, target: Target, on: exp.Expr, statement: str
) -> None:
    """Paimon's ``checkMatchRationality``: no target row matched by two source rows."""
    ids = target_rows.withColumn(_ROW_ID, F.monotonically_increasing_id()).alias(target.alias)
    matches = source.rows.alias(source.alias).join(ids, spark_expr(on), "inner")
    repeated = matches.groupBy(F.col(_ROW_ID)).count().filter(F.col("count") > 1).limit(1)
    if repeated.count():
        raise SqlError(
            f"{statement}: Can't execute this MergeInto when there are some target rows that "
            "each of them match more than one source rows. It may lead to an unexpected result."
        )


def _merge_rows(
    spark: SparkSession,
    target: Target,
    source: Source,
    on: exp.Expr,
    clauses: list[Clause],
    read: Reader,
    statement: str,
    evolution: Evolution | None = None,
) -> int | None:
    """Primary-key tables: the changed rows with their row kinds, written as upserts and
    retractions."""
    table_node = exp.Table(
        this=exp.to_identifier(target.name, quoted=True),
        db=exp.to_identifier(target.database, quoted=True),
        catalog=exp.to_identifier("paimon", quoted=True),
        alias=exp.TableAlias(this=exp.to_identifier(target.alias, quoted=True)),
    )
    select = exp.select(exp.Star()).from_(table_node)
    if not any(c.kind == "not_matched_by_source" for c in clauses):
        pruning = _target_only(on, target)
        if pruning is not None:
            select = select.where(pruning)
    target_rows = read(select.sql(dialect=PaimonSpark))
    with spark_errors(statement):
        if any(c.kind == "matched" for c in clauses):
            _check_cardinality(source, target_rows, target, on, statement)
        if evolution is not None:
            target_rows = conform(target_rows, target.table)
        joined = _joined(source, target_rows, target, on)
        out = _outputs(joined, clauses, target, source, F.lit(_NOOP))
        changed = out.filter(F.col(_ACTION) != _NOOP).drop(_ACTION)
    return write_dataframe(_committed(target, evolution), changed)


def _committed(target: Target, evolution: Evolution | None) -> FileStoreTable:
    """The table to write: with the evolved schema published first, if any."""
    return target.table if evolution is None else evolution.commit()


def _target_only(on: exp.Expr, target: Target) -> exp.Expr | None:
    """The conjuncts of ON that read only the target's (qualified) columns, simply."""
    conjuncts = list(on.flatten()) if isinstance(on, exp.And) else [on]
    kept = []
    for conjunct in conjuncts:
        columns = list(conjunct.find_all(exp.Column))
        if not columns or any(
            not c.table or c.table.lower() != target.alias.lower() or c.db for c in columns
        ):
            continue
        if all(isinstance(node, _SIMPLE) for node in conjunct.walk()):
            kept.append(conjunct.copy())
    if not kept:
        return None
    return reduce(lambda a, b: exp.And(this=a, expression=b), kept)


def _copy_on_write(
    spark: SparkSession,
    target: Target,
    table: FileStoreTable,
    source: Source,
    on: exp.Expr,
    clauses: list[Clause],
    statement: str,
    evolution: Evolution | None = None,
) -> int | None:
    """Append tables: rewrite the touched files, append the inserted rows, in one commit.
    ``table``: the target as it is read (``target.table`` may have an evolved schema)."""
    from sql_ext.datapath.read import plan_read

    snapshot = table.latest_snapshot()
    tracking = tracks_rows(table)
    plan = with_row_ids(plan_read(table, snapshot))  # one split per file on append tables
    changes = ("update", "delete")
    matched_change = any(c.kind == "matched" and c.action in changes for c in clauses)
    unmatched_change = any(
        c.kind == "not_matched_by_source" and c.action in changes for c in clauses
    )
    inserts = any(c.kind == "not_matched" for c in clauses)
    with spark_errors(statement):
        everything = file_frames(spark, plan, range(len(plan.splits)))
        inner: list[int] = []
        anti: list[int] = []
        if everything is not None:
            framed = everything.alias(target.alias)
            if any(c.kind == "matched" for c in clauses) or unmatched_change:
                _check_cardinality(source, everything, target, on, statement)
            if matched_change or inserts:
                matched = framed.join(source.rows.alias(source.alias), spark_expr(on), "left_semi")
                inner = file_indexes(matched)
            if unmatched_change:
                alone = framed.join(source.rows.alias(source.alias), spark_expr(on), "left_anti")
                anti = file_indexes(alone)
        rewritten = sorted(set(inner if matched_change else []) | set(anti))
        read_only = sorted(set(inner) - set(rewritten)) if inserts else []
        target_rows = _touched_frames(spark, plan, rewritten, read_only)
        if evolution is not None:
            target_rows = conform(target_rows, target.table)
        joined = _joined(source, target_rows, target, on)
        keep = F.when(spark_col(target.alias, _TOUCHED), F.lit(_KEEP)).otherwise(F.lit(_NOOP))
        out = _outputs(joined, clauses, target, source, keep, tracking)
        deletes = [i for i, c in enumerate(clauses) if c.action == "delete"] + [_NOOP]
        written = out.filter(~F.col(_ACTION).isin(deletes)).drop(_ACTION, ROW_KIND_COLUMN)
    splits = [plan.splits[i] for i in rewritten]
    deleted = deleted_files(table, splits)
    return write_dataframe(
        _committed(target, evolution), written, deleted=deleted, row_tracking=tracking
    )


def _touched_frames(
    spark: SparkSession, plan: ReadPlan, rewritten: list[int], read_only: list[int]
) -> DataFrame:
    """The rows of the files to rewrite (touched) and of those only read, marked."""
    from sql_ext.datapath.read import plan_dataframe

    frames = []
    for indexes, touched in ((rewritten, True), (read_only, False)):
        frame = file_frames(spark, plan, indexes)
        if frame is not None:
            frames.append(frame.drop(FILE_INDEX).withColumn(_TOUCHED, F.lit(touched)))
    if not frames:
        empty = plan_dataframe(spark, replace(plan, splits=()))
        return empty.withColumn(_TOUCHED, F.lit(False))
    return reduce(lambda a, b: a.unionByName(b), frames)

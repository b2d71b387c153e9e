"""``write.merge-schema``: a write whose data has columns the table lacks adds them first.

As Paimon-Spark's ``SchemaEvolutionHelper`` and the core's ``SchemaMergingUtils`` (latest
Paimon, ``docs/spark/sql-write.md`` "Write Merge Schema"):

* Enabled by the write option ``write.merge-schema`` (``df.write.option(...)``) or the
  session setting ``spark.paimon.write.merge-schema`` (table-scoped forms too, as every
  dynamic option). Paimon reads no table property for it, and neither does this. The
  DataFrame writer also takes ``mergeSchema``, the name Spark's own file sources use (Paimon
  knows only ``write.merge-schema``).
* Only writes that match columns by name evolve the schema: ``INSERT INTO ... BY NAME`` and
  ``df.write.format("paimon")``. A data column the table lacks is added (nullable, last, with
  a new field id), so is a nested field a ROW column lacks (at any depth, through arrays and
  maps); columns the data lacks are NULL (then their DEFAULT). All changes are one new
  ``schema-N``, committed before the data is written.
* Existing column types are kept and the data is cast to them, unless
  ``write.merge-schema.type-widening`` is also true: then a column whose data type is wider
  (INT -> BIGINT, DECIMAL(5, 2) -> DECIMAL(10, 2), VARCHAR(5) -> VARCHAR(10)) takes that type;
  a lossy change (BIGINT -> INT, STRING -> DATE) is refused unless
  ``write.merge-schema.explicit-cast`` is true as well. DECIMALs of different scales never
  merge. Refusals carry Paimon's messages ("Failed to merge data types ...").

Nothing is evolved or written when a refusal happens.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from pyspark.sql import functions as F
from pyspark.sql import types as st

from paimon_core.format import schema as sc
from paimon_core.format.type_casts import supports_cast
from sql_ext.errors import SqlError
from sql_ext.spark_types import from_spark_schema, to_spark_type
from sql_ext.syntax.dialect import quote_identifier

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

    from paimon_core.format.types import DataField, DataType
    from paimon_core.table import FileStoreTable

MERGE_SCHEMA = "write.merge-schema"
TYPE_WIDENING = "write.merge-schema.type-widening"
EXPLICIT_CAST = "write.merge-schema.explicit-cast"
SPARK_MERGE_SCHEMA = "mergeSchema"
_ARRAY_ELEMENT = "element"
_MAP_VALUE = "value"


@dataclass(frozen=True, slots=True)
class MergeSchema:
    """The three flags; each only counts when the one before it is set."""

    enabled: bool = False
    type_widening: bool = False
    explicit_cast: bool = False

    @classmethod
    def of(cls, options: Mapping[str, str], *, dataframe: bool = False) -> MergeSchema:
        """The flags of write options (``dataframe``: also Spark's ``mergeSchema``)."""
        lowered = {k.lower(): v for k, v in options.items()}

        def flag(key: str) -> bool:
            return str(lowered.get(key.lower(), "false")).strip().lower() == "true"

        enabled = flag(MERGE_SCHEMA) or (dataframe and flag(SPARK_MERGE_SCHEMA))
        widening = enabled and flag(TYPE_WIDENING)
        return cls(enabled, widening, widening and flag(EXPLICIT_CAST))


def schema_changes(
    fields: Sequence[DataField], data: Sequence[DataField], flags: MergeSchema, sensitive: bool
) -> list[sc.SchemaChange]:
    """The changes that make ``fields`` take ``data`` (Paimon's ``mergeSchemas`` followed by
    ``diffSchemaChanges``): new columns and nested fields, and widened types.

    Raises:
        SqlError: types that do not merge (Paimon's messages).
    """
    changes: list[sc.SchemaChange] = []
    _merge_fields(fields, data, (), flags, sensitive, changes)
    return changes


def _key(name: str, sensitive: bool) -> str:
    return name if sensitive else name.lower()


def _merge_fields(
    fields: Sequence[DataField],
    data: Sequence[DataField],
    path: tuple[str, ...],
    flags: MergeSchema,
    sensitive: bool,
    changes: list[sc.SchemaChange],
) -> None:
    existing = {_key(f.name, sensitive): f for f in fields}
    for incoming in data:
        found = existing.get(_key(incoming.name, sensitive))
        if found is None:
            changes.append(sc.AddColumn((*path, incoming.name), incoming.type.copy(True)))
            continue
        _merge_type(found.type, incoming.type, (*path, found.name), flags, sensitive, changes)


def _merge_type(
    base: DataType,
    update: DataType,
    path: tuple[str, ...],
    flags: MergeSchema,
    sensitive: bool,
    changes: list[sc.SchemaChange],
) -> None:
    if _same(base, update):
        return
    if base.root == "ROW" and update.root == "ROW":
        _merge_fields(base.fields or (), update.fields or (), path, flags, sensitive, changes)
        return
    if base.root in ("ARRAY", "MULTISET") and base.root == update.root:
        assert base.element is not None and update.element is not None
        element = (*path, _ARRAY_ELEMENT)
        _merge_type(base.element, update.element, element, flags, sensitive, changes)
        return
    if base.root == "MAP" and update.root == "MAP":
        assert base.value is not None and update.value is not None
        if not _same(base.key, update.key):  # type: ignore[arg-type]
            _widen(base, update, path, flags, changes)
            return
        value = (*path, _MAP_VALUE)
        _merge_type(base.value, update.value, value, flags, sensitive, changes)
        return
    _widen(base, update, path, flags, changes)


def _widen(
    base: DataType,
    update: DataType,
    path: tuple[str, ...],
    flags: MergeSchema,
    changes: list[sc.SchemaChange],
) -> None:
    """A leaf whose data type differs: kept (the data is cast), or widened."""
    if not flags.type_widening:
        return
    failed = f"Failed to merge data types {base.copy(True)} and {update.copy(True)}"
    if base.root == "DECIMAL" and update.root == "DECIMAL":
        if base.scale != update.scale:
            raise SqlError(
                f"Failed to merge decimal types with different scale: {base.copy(True)} and "
                f"{update.copy(True)}"
            )
        precision = max(base.precision or 0, update.precision or 0)
        if precision != base.precision:
            widened = replace(base, precision=precision)
            changes.append(sc.UpdateColumnType(path, widened, keep_nullability=True))
        return
    if base.root in ("ROW", "ARRAY", "MAP", "MULTISET") or update.root in (
        "ROW",
        "ARRAY",
        "MAP",
        "MULTISET",
    ):
        raise SqlError(failed)
    if not supports_cast(base.copy(True), update.copy(True), flags.explicit_cast):
        raise SqlError(failed)
    if base.length is not None and update.length is not None:
        if not flags.explicit_cast and base.length > update.length:
            raise SqlError(
                "Failed to merge the target type that has a smaller length: "
                f"{base.copy(True)} and {update.copy(True)}"
            )
    elif base.precision is not None and update.precision is not None:
        if not flags.explicit_cast and base.precision > update.precision:
            raise SqlError(
                "Failed to merge the target type that has a lower precision: "
                f"{base.copy(True)} and {update.copy(True)}"
            )
    changes.append(sc.UpdateColumnType(path, update.copy(base.nullable), keep_nullability=True))


def _same(a: DataType, b: DataType) -> bool:
    """Equal ignoring nullability and field ids (the data's types carry no ids)."""
    if a.root != b.root or (a.length, a.precision, a.scale) != (b.length, b.precision, b.scale):
        return False
    for x, y in ((a.element, b.element), (a.key, b.key), (a.value, b.value)):
        if (x is None) != (y is None) or (x is not None and y is not None and not _same(x, y)):
            return False
    left, right = a.fields or (), b.fields or ()
    return len(left) == len(right) and all(
        f.name == g.name and _same(f.type, g.type) for f, g in zip(left, right)
    )


@dataclass(frozen=True)
class Evolution:
    """The changes a write needs and the table as it will be after them (in memory, so
    that the write is checked before anything is committed)."""

    changes: tuple[sc.SchemaChange, ...]
    table: FileStoreTable

    def commit(self) -> FileStoreTable:
        """Publish the changes as one ``schema-N`` (none: nothing); the table with the schema
        published."""
        if not self.changes:
            return self.table
        try:
            published = self.table.schema_manager.commit_changes(self.changes)
        except Exception as e:  # the core's SchemaError, with its message
            raise SqlError(f"Cannot merge the schema of {self.table.identifier}: {e}") from None
        return replace(self.table, schema=published)


def plan_evolution(
    table: FileStoreTable, data: st.StructType, flags: MergeSchema, sensitive: bool
) -> Evolution:
    """What writing ``data`` (a DataFrame's schema) into ``table`` changes in its schema.

    Raises:
        SqlError: types that do not merge, or a change the core refuses.
    """
    if not flags.enabled:
        return Evolution((), table)
    nullable = st.StructType([st.StructField(f.name, f.dataType, True) for f in data.fields])
    changes = schema_changes(table.schema.fields, from_spark_schema(nullable), flags, sensitive)
    if not changes:
        return Evolution((), table)
    try:
        evolved = sc.apply_changes(table.schema, changes)
    except Exception as e:  # the core's SchemaError, with its message
        raise SqlError(f"Cannot merge the schema of {table.identifier}: {e}") from None
    return Evolution(tuple(changes), replace(table, schema=evolved))


def align_nested(table: FileStoreTable, df: DataFrame, sensitive: bool) -> DataFrame:
    """``df`` with each column feeding a ROW column rebuilt by name, at every depth (a field
    the data lacks is NULL): after a merge, such a column may lack fields or have them in
    another order, and Spark casts structs by position. Other columns stay as they are."""
    targets = {_key(f.name, sensitive): f for f in table.schema.fields}
    columns = []
    for f in df.schema.fields:
        column = F.col(quote_identifier(f.name))
        found = targets.get(_key(f.name, sensitive))
        if found is not None and found.type.root == "ROW":
            column = _align(column, f.dataType, found.type, sensitive)
        columns.append(column.alias(f.name))
    return df.select(*columns)


def _align(column: Column, data: st.DataType, target: DataType, sensitive: bool) -> Column:
    if target.root != "ROW" or not isinstance(data, st.StructType):
        return column
    present = {_key(f.name, sensitive): f for f in data.fields}
    parts = []
    for sub in target.fields or ():
        found = present.get(_key(sub.name, sensitive))
        if found is None:
            parts.append(F.lit(None).cast(to_spark_type(sub.type)).alias(sub.name))
        else:
            value = column.getField(found.name)
            parts.append(_align(value, found.dataType, sub.type, sensitive).alias(sub.name))
    return F.when(column.isNull(), F.lit(None)).otherwise(F.struct(*parts))


def conform(df: DataFrame, table: FileStoreTable) -> DataFrame:
    """``df`` (a table's rows read before its schema evolved) in ``table``'s evolved columns:
    new columns NULL, ROW columns rebuilt with their new fields NULL, widened columns cast;
    ``df``'s other columns (markers of the statement) kept after them."""
    names = {f.name.lower(): f for f in df.schema.fields}
    columns = []
    for target in table.schema.fields:
        found = names.pop(target.name.lower(), None)
        spark_type = to_spark_type(target.type)
        if found is None:
            columns.append(F.lit(None).cast(spark_type).alias(target.name))
            continue
        column = _align(F.col(quote_identifier(found.name)), found.dataType, target.type, False)
        columns.append(column.cast(spark_type).alias(target.name))
    columns += [F.col(quote_identifier(f.name)) for f in names.values()]
    return df.select(*columns)

"""CREATE TABLE and INSERT on Paimon tables: from the statement's tree to core calls.

Column types are parsed by Spark itself (``DataType.fromDDL`` of the column list sqlglot
prints back), so every type spelling Spark accepts is accepted, then mapped as Paimon's
Spark catalog maps it (``spark_types``). INSERT resolves columns as Spark does for a table:
by position (or the column list, or ``BY NAME``), missing columns are NULL, and values are
cast to the column types in Spark.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pyspark.errors import PySparkException
from pyspark.sql import functions as F
from pyspark.sql import types as st
from sqlglot import exp

from paimon_core.schema import TableSchema, new_table_schema
from paimon_core.types import DataField
from sql_ext.errors import SqlError, first_line
from sql_ext.spark_types import from_spark_schema, to_spark_type

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from paimon_core.table import FileStoreTable

PAIMON_PROVIDER = "paimon"
_COLUMN_CONSTRAINTS = (exp.NotNullColumnConstraint, exp.CommentColumnConstraint)


@dataclass(frozen=True, slots=True)
class TableSpec:
    """What a CREATE TABLE asks for, before its column types are parsed."""

    target: exp.Table
    columns_ddl: str | None
    partition_keys: tuple[str, ...] = ()
    primary_keys: tuple[str, ...] = ()
    options: dict[str, str] = field(default_factory=dict)
    comment: str | None = None
    if_not_exists: bool = False
    provider: str | None = None
    temporary: bool = False
    query: exp.Expr | None = None
    like: exp.Table | None = None
    location: str | None = None

    def schema(self, fields: Sequence[DataField] | None = None) -> TableSchema:
        """The new table's schema (Paimon makes primary-key columns NOT NULL).

        Raises:
            SqlError: the column types are not valid Spark types or have no Paimon type.
            SchemaError: keys or options Paimon rejects.
        """
        if fields is None:
            fields = parse_columns(self.columns_ddl or "")
        return new_table_schema(
            fields, self.partition_keys, self.primary_keys, self.options, self.comment
        )


def parse_columns(ddl: str) -> list[DataField]:
    """Paimon fields of a Spark column list (``a INT NOT NULL COMMENT 'x', ...``)."""
    try:
        schema = st.StructType.fromDDL(ddl)
    except PySparkException as e:
        raise SqlError(f"Invalid column definition: {first_line(e)}") from None
    return from_spark_schema(schema)


def _text(node: exp.Expr) -> str:
    if isinstance(node, exp.Boolean):
        return "true" if node.this else "false"
    if isinstance(node, (exp.Literal, exp.Var, exp.Identifier)):
        return str(node.this)
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal):
        return "-" + str(node.this.this)
    if isinstance(node, exp.Dot):
        return ".".join(_text(part) for part in node.flatten())
    if isinstance(node, exp.Column):
        return ".".join(part.name for part in node.parts)
    raise SqlError(f"Expected a constant, got {node.sql(dialect='spark')}")


def _properties(node: exp.Expr) -> dict[str, str]:
    items = node.expressions if isinstance(node, exp.OptionsProperty) else [node]
    return {_text(p.this): _text(p.args["value"]) for p in items}


def table_spec(tree: exp.Create) -> TableSpec:
    """Read a ``CREATE TABLE`` tree.

    Raises:
        SqlError: a clause Paimon tables do not support (LOCATION, OR REPLACE, LIKE, ...).
    """
    if tree.args.get("replace"):
        raise SqlError("CREATE OR REPLACE TABLE is not supported on Paimon tables")
    schema = tree.this if isinstance(tree.this, exp.Schema) else None
    target = schema.this if schema is not None else tree.this
    if not isinstance(target, exp.Table):
        raise SqlError("CREATE TABLE needs a table name")
    primary: list[str] = []
    columns: list[str] = []
    for item in schema.expressions if schema is not None else []:
        if isinstance(item, exp.PrimaryKey):
            primary.extend(_text(e) for e in item.expressions)
        elif isinstance(item, exp.ColumnDef):
            column = item.copy()
            kept = []
            for constraint in column.args.get("constraints") or []:
                if isinstance(constraint.kind, exp.PrimaryKeyColumnConstraint):
                    primary.append(column.name)
                elif isinstance(constraint.kind, _COLUMN_CONSTRAINTS):
                    kept.append(constraint)
                else:
                    raise SqlError(
                        f"Column {column.name}: {constraint.sql(dialect='spark')} is not "
                        "supported on Paimon tables"
                    )
            column.set("constraints", kept)
            columns.append(column.sql(dialect="spark"))
        else:
            raise SqlError(f"Unsupported table element: {item.sql(dialect='spark')}")

    options: dict[str, str] = {}
    partitions: list[str] = []
    comment = None
    provider = None
    temporary = False
    like = None
    location = None
    properties = tree.args.get("properties")
    for prop in properties.expressions if properties is not None else []:
        if isinstance(prop, exp.FileFormatProperty) and not prop.args.get("hive_format"):
            provider = _text(prop.this).lower()
        elif isinstance(prop, exp.PartitionedByProperty):
            for key in prop.this.expressions:
                if not isinstance(key, (exp.Identifier, exp.Column)):
                    raise SqlError(
                        f"PARTITIONED BY ({key.sql(dialect='spark')}): declare partition "
                        "columns in the column list and name them in PARTITIONED BY"
                    )
                partitions.append(_text(key))
        elif type(prop) is exp.Property or isinstance(prop, exp.OptionsProperty):
            options.update(_properties(prop))
        elif isinstance(prop, exp.SchemaCommentProperty):
            comment = _text(prop.this)
        elif isinstance(prop, exp.TemporaryProperty):
            temporary = True
        elif isinstance(prop, exp.LikeProperty) and isinstance(prop.this, exp.Table):
            like = prop.this
        elif isinstance(prop, exp.LocationProperty):
            location = _text(prop.this)
        else:
            raise SqlError(
                f"CREATE TABLE clause {prop.sql(dialect='spark')} is not supported on Paimon tables"
            )
    query = tree.args.get("expression")
    if query is not None and columns:
        raise SqlError("CREATE TABLE ... AS SELECT takes its columns from the query, not a list")
    if like is not None and (columns or query is not None):
        raise SqlError("CREATE TABLE ... LIKE takes its columns from the source table")
    if query is None and not columns and like is None and location is None:
        raise SqlError("CREATE TABLE needs a column list (or AS SELECT)")
    return TableSpec(
        target=target,
        columns_ddl=", ".join(columns) if columns else None,
        partition_keys=tuple(partitions),
        primary_keys=tuple(primary),
        options=options,
        comment=comment,
        if_not_exists=bool(tree.args.get("exists")),
        provider=provider,
        temporary=temporary,
        query=query,
        like=like,
        location=location,
    )


# ----------------------------------------------------------------------------- INSERT


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
        SqlError: REPLACE WHERE, IF NOT EXISTS or an INSERT into a directory.
    """
    if tree.args.get("where") is not None:
        raise SqlError("INSERT ... REPLACE WHERE is not supported on Paimon tables")
    if tree.args.get("exists"):
        raise SqlError("INSERT ... IF NOT EXISTS is not supported on Paimon tables")
    this = tree.this
    columns = None
    if isinstance(this, exp.Schema):
        columns = tuple(_text(c) for c in this.expressions)
        this = this.this
    if not isinstance(this, exp.Table):
        raise SqlError(f"Cannot INSERT into {this.sql(dialect='spark')}")
    static: dict[str, exp.Expr] = {}
    partition = this.args.get("partition")
    for item in partition.expressions if partition is not None else []:
        if isinstance(item, exp.EQ):
            static[_text(item.this)] = item.expression
        elif not isinstance(item, (exp.Column, exp.Identifier)):
            raise SqlError(f"Unsupported PARTITION item {item.sql(dialect='spark')}")
    source = tree.expression.copy()
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
        by_name=bool(tree.args.get("by_name")),
    )


def _lookup(names: Sequence[str], wanted: str, what: str, table: str) -> str:
    """Spark matches column names case-insensitively."""
    for name in names:
        if name.lower() == wanted.lower():
            return name
    raise SqlError(f"{what} '{wanted}' is not a column of {table} (columns: {', '.join(names)})")


def insert_dataframe(table: FileStoreTable, spec: InsertSpec, source: DataFrame) -> DataFrame:
    """The source rows as the table's columns (still in the source's types).

    Raises:
        SqlError: unknown, duplicate or misplaced columns, or a column count mismatch.
    """
    schema = table.schema
    names = schema.field_names
    label = table.identifier
    static: dict[str, exp.Expr] = {}
    for key, value in spec.static.items():
        column = _lookup(names, key, "PARTITION column", label)
        if column not in schema.partition_keys:
            raise SqlError(f"PARTITION column '{key}' is not a partition key of {label}")
        static[column] = value
    if spec.columns is not None:
        targets = [_lookup(names, c, "Column", label) for c in spec.columns]
        duplicates = sorted({c for c in targets if targets.count(c) > 1})
        if duplicates:
            raise SqlError(f"INSERT column list names {duplicates} more than once")
        fixed = [c for c in targets if c in static]
        if fixed:
            raise SqlError(f"Columns {fixed} are given both in PARTITION and the column list")
    else:
        targets = [n for n in names if n not in static]

    width = len(source.columns)
    positional = source.toDF(*[f"_c{i}" for i in range(width)])
    sources: dict[str, str] = {}
    if spec.by_name:
        for i, column in enumerate(source.columns):
            name = _lookup(names, column, "Query column", label)
            if name in static or name in sources:
                raise SqlError(f"Query column '{column}' is given twice")
            sources[name] = f"_c{i}"
    else:
        if width != len(targets):
            raise SqlError(
                f"Cannot write to {label}: the query has {width} columns but "
                f"{len(targets)} are expected ({', '.join(targets)})"
            )
        sources = {name: f"_c{i}" for i, name in enumerate(targets)}

    columns = []
    for f in schema.fields:
        if f.name in static:
            value = F.expr(static[f.name].sql(dialect="spark"))
        elif f.name in sources:
            value = F.col(sources[f.name])
        else:
            value = F.lit(None).cast(to_spark_type(f.type))
        columns.append(value.alias(f.name))
    return positional.select(*columns)


def static_partition(
    spark: SparkSession, table: FileStoreTable, static: Mapping[str, exp.Expr]
) -> dict[str, Any]:
    """The PARTITION (k = v) values as Python values of the partition column types."""
    if not static:
        return {}
    by_name = {f.name.lower(): f for f in table.schema.partition_fields}
    columns = []
    for key, value in static.items():
        f = by_name[key.lower()]
        columns.append(F.expr(value.sql(dialect="spark")).cast(to_spark_type(f.type)).alias(f.name))
    row = spark.range(1).select(*columns).toArrow().to_pylist()[0]
    return {name: _naive_utc(value) for name, value in row.items()}


def _naive_utc(value: Any) -> Any:
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(dt.UTC).replace(tzinfo=None)
    return value

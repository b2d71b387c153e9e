"""CREATE TABLE on Paimon tables and INSERT's static partitions: from the tree to core calls.

Column types are parsed by Spark itself (``DataType.fromDDL`` of the column list sqlglot
prints back), so every type spelling Spark accepts is accepted, then mapped as Paimon's
Spark catalog maps it (``spark_types``). INSERT's column mapping is ``insert.py``'s.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import getpass
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pyspark.errors import PySparkException
from pyspark.sql import functions as F
from pyspark.sql import types as st
from sqlglot import exp

from paimon_core.format.default_value import validate_defaults
from paimon_core.format.schema import TableSchema, new_table_schema
from paimon_core.format.types import DataField
from sql_ext.errors import SqlError, first_line
from sql_ext.spark_types import from_spark_schema, to_spark_type
from sql_ext.syntax.dialect import REPLACE_ONLY, PaimonSpark

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from paimon_core.table import FileStoreTable

PAIMON_PROVIDER = "paimon"
_CTAS_COLUMNS = (
    "CREATE TABLE ... AS SELECT takes its columns from the query, not a list: name them in "
    "the query (SELECT x AS a, ...), as Spark requires"
)
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
    replace: bool = False
    """`CREATE OR REPLACE TABLE` or `REPLACE TABLE` (`sql_ext.replace`)."""
    replace_only: bool = False
    """`REPLACE TABLE`: the table must exist."""
    defaults: dict[str, str] = field(default_factory=dict)
    """Column name -> its ``DEFAULT`` expression as Spark's ``CURRENT_DEFAULT`` keeps it (the
    text Paimon-Spark stores in ``DataField.default_value``)."""

    def schema(self, fields: Sequence[DataField] | None = None) -> TableSchema:
        """The new table's schema (Paimon makes primary-key columns NOT NULL; the option `owner`
        is the current user, as Spark adds it).

        Raises:
            SqlError: the column types are not valid Spark types or have no Paimon type.
            SchemaError: keys or options Paimon rejects, or a DEFAULT its column type cannot
                hold.
        """
        if fields is None:
            fields = parse_columns(self.columns_ddl or "")
        if self.defaults:
            fields = [
                dataclasses.replace(f, default_value=self.defaults.get(f.name)) for f in fields
            ]
            validate_defaults(fields)
        options = {**self.options, OWNER_PROPERTY: current_user()}
        return new_table_schema(
            fields, self.partition_keys, self.primary_keys, options, self.comment
        )


OWNER_PROPERTY = "owner"


def current_user() -> str:
    """The user Spark names as a new table's owner (``Utils.getCurrentUserName``):
    ``SPARK_USER``, else Hadoop's user (``HADOOP_USER_NAME``, else the OS login name).

    Spark adds it to the properties of every table CREATE TABLE, CTAS and REPLACE TABLE make
    (``CatalogV2Util.withDefaultOwnership``) and Paimon-Spark keeps it as the option
    ``owner``; CREATE TABLE ... LIKE does not copy or add it."""
    for variable in ("SPARK_USER", "HADOOP_USER_NAME"):
        if os.environ.get(variable):
            return os.environ[variable]
    return getpass.getuser()


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
        SqlError: a clause Paimon tables do not support (a column constraint, a partition
            transform, ...); LOCATION and LIKE are kept for the session to judge.
    """
    replace = bool(tree.args.get("replace"))
    replace_only = bool(tree.meta.get(REPLACE_ONLY))
    statement = "REPLACE TABLE" if replace_only else "CREATE OR REPLACE TABLE"
    if replace and tree.args.get("exists"):
        raise SqlError(f"{statement} ... IF NOT EXISTS is not allowed: a table is replaced or not")
    schema = tree.this if isinstance(tree.this, exp.Schema) else None
    target = schema.this if schema is not None else tree.this
    if not isinstance(target, exp.Table):
        raise SqlError("CREATE TABLE needs a table name")
    primary: list[str] = []
    columns: list[str] = []
    defaults: dict[str, str] = {}

    def add_column(item: exp.ColumnDef) -> None:
        column = item.copy()
        kept = []
        for constraint in column.args.get("constraints") or []:
            if isinstance(constraint.kind, exp.PrimaryKeyColumnConstraint):
                primary.append(column.name)
            elif isinstance(constraint.kind, _COLUMN_CONSTRAINTS):
                kept.append(constraint)
            elif isinstance(constraint.kind, exp.DefaultColumnConstraint):
                defaults[column.name] = constraint.kind.this.sql(dialect=PaimonSpark)
            else:
                raise SqlError(
                    f"Column {column.name}: {constraint.sql(dialect='spark')} is not "
                    "supported on Paimon tables"
                )
        column.set("constraints", kept)
        columns.append(column.sql(dialect="spark"))

    for item in schema.expressions if schema is not None else []:
        if isinstance(item, exp.PrimaryKey):
            primary.extend(_text(e) for e in item.expressions)
        elif isinstance(item, exp.ColumnDef):
            add_column(item)
        elif tree.args.get("expression") is not None:
            raise SqlError(_CTAS_COLUMNS)
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
            keys = prop.this.expressions
            typed = [k for k in keys if isinstance(k, exp.ColumnDef)]
            if typed and len(typed) != len(keys):
                raise SqlError(
                    "PARTITIONED BY: give either partition columns with types or the names "
                    "of declared columns, not both (as Spark requires)"
                )
            if typed and tree.args.get("expression") is not None:
                raise SqlError(
                    "PARTITIONED BY: partition column types may not be specified in CREATE "
                    "TABLE ... AS SELECT (as Spark requires): name the query's columns"
                )
            for key in keys:
                if isinstance(key, exp.ColumnDef):  # Spark appends it to the columns
                    add_column(key)
                elif not isinstance(key, (exp.Identifier, exp.Column)):
                    raise SqlError(
                        f"PARTITIONED BY ({key.sql(dialect='spark')}): only columns (identity "
                        "partitions) are supported, as in Paimon"
                    )
                partitions.append(_text(key.this if isinstance(key, exp.ColumnDef) else key))
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
        raise SqlError(_CTAS_COLUMNS)
    if like is not None and (columns or query is not None):
        raise SqlError("CREATE TABLE ... LIKE takes its columns from the source table")
    if like is not None and replace:
        raise SqlError(f"{statement} ... LIKE is not supported: Spark has no such statement")
    if query is None and not columns and like is None and location is None:
        raise SqlError("CREATE TABLE needs a column list (or AS SELECT)")
    return TableSpec(
        target=target,
        columns_ddl=", ".join(columns) if columns else None,
        defaults=defaults,
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
        replace=replace,
        replace_only=replace_only,
    )


# ------------------------------------------------------------------ static partitions


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

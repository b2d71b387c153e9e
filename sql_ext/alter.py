"""ALTER TABLE and ALTER DATABASE on Paimon tables: Spark's grammar, Paimon-Spark's semantics.

The statement is read by ``sql_ext.syntax.alter`` (once, on sqlglot's tokens). The table
name is read first: a name that is no Paimon table goes to Spark untouched. The actions
become Paimon schema changes as Paimon-Spark's ``SparkCatalog.toSchemaChange`` maps Spark's
``TableChange``s (latest Paimon): property ``comment`` is the table comment,
``primary-key`` cannot change, a type change keeps the column's nullability, ``ALTER COLUMN c
SET DEFAULT v`` / ``DROP DEFAULT`` set the field's ``defaultValue`` (Spark hands the catalog
the expression's SQL, which Paimon stores and checks converts to the column type), and all of a
statement's changes are committed as one new ``schema-N``. ``RENAME TO`` moves the table
directory (``FileSystemCatalog.renameTable``); an unqualified new name stays in the table's
database, as Spark's ``RenameTableExec`` does. ``DROP PARTITION`` is one OVERWRITE
snapshot deleting the partitions' files (``truncatePartitions``). ``ALTER DATABASE`` is
refused as Paimon's file system catalog refuses it (it keeps no database properties).
Column types are parsed by Spark (``StructType.fromDDL``) and mapped by ``spark_types``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pyspark.errors import PySparkException
from pyspark.sql import types as st

from paimon_core.exceptions import DatabaseNotExist, PaimonError
from paimon_core.format import schema as sc
from paimon_core.format.types import DataField, DataType
from sql_ext.errors import SqlError, first_line
from sql_ext.metadata.config import CATALOG_NAME
from sql_ext.spark_types import from_spark_type
from sql_ext.syntax.alter import AlterHead, AlterTable, ColumnChange, parse_actions
from sql_ext.tables import static_partition

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from paimon_core.catalog import FileSystemCatalog
    from paimon_core.table import FileStoreTable

_CASE_SENSITIVE = "spark.sql.caseSensitive"
_RESERVED_PROPERTIES = {
    "provider": "please use the USING clause to specify it",
    "location": "please use the LOCATION clause to specify it",
    "owner": "it will be set to the current user",
    "external": "please use CREATE EXTERNAL TABLE",
    "is_managed_location": "it cannot be set",
}
PRIMARY_KEY_OPTION = "primary-key"
COMMENT_PROPERTY = "comment"


# -------------------------------------------------------------------------------- running


def alter_database(catalog: FileSystemCatalog, database: str) -> None:
    """Paimon's file system catalog keeps no database properties or location: Paimon-Spark's
    ``alterNamespace`` ends in its ``alterDatabaseImpl``, which refuses every change (after
    Spark checked the database exists)."""
    if not catalog.database_exists(database):
        raise DatabaseNotExist(f"Database {database} does not exist")
    raise SqlError(
        f"ALTER DATABASE {database}: alter database is not supported by Paimon's filesystem catalog"
    )


def alter_table(
    spark: SparkSession,
    catalog: FileSystemCatalog,
    database: str,
    name: str,
    head: AlterHead,
) -> None:
    """Run one ALTER TABLE on the Paimon table ``database.name``; a failure changes nothing."""
    shown = f"{CATALOG_NAME}.{database}.{name}"
    statement = parse_actions(head, shown)
    try:
        table = catalog.get_table(f"{database}.{name}")
        if statement.rename_to is not None:
            _rename_table(catalog, f"{database}.{name}", database, statement.rename_to, shown)
        elif statement.partitions:
            _drop_partitions(spark, table, statement, shown)
        elif statement.add_partitions:
            _add_partitions(spark, table, statement, shown)
        else:
            sensitive = str(spark.conf.get(_CASE_SENSITIVE, "false")).lower() == "true"
            names = _Names(table.schema.fields, sensitive)
            table.alter_schema_manager.commit_changes(_schema_changes(names, statement, shown))
    except SqlError:
        raise
    except (PaimonError, ValueError) as e:
        raise SqlError(f"ALTER TABLE {shown}: {first_line(e)}") from None


def _rename_table(
    catalog: FileSystemCatalog,
    identifier: str,
    database: str,
    new: tuple[str, ...],
    shown: str,
) -> None:
    """Paimon-Spark's ``renameTable``: a catalog in the new name must be this one."""
    if len(new) > 3:
        raise SqlError(f"ALTER TABLE {shown} RENAME TO: invalid table name {'.'.join(new)}")
    if len(new) == 3:
        if new[0].lower() != CATALOG_NAME:
            raise SqlError(
                f"ALTER TABLE {shown} RENAME TO: Only supports operations within the same "
                f"catalog, target catalog name: {new[0]}, current catalog name: {CATALOG_NAME}"
            )
        new = new[1:]
    target = f"{new[0]}.{new[1]}" if len(new) == 2 else f"{database}.{new[0]}"
    catalog.rename_table(identifier, target)


class _Names:
    """Column paths as stored: Spark resolves the names an ALTER mentions against the table
    (case-insensitively unless ``spark.sql.caseSensitive``) and hands Paimon the stored ones.
    A name that matches nothing stays as written, for the core to report."""

    def __init__(self, fields: Sequence[DataField], case_sensitive: bool) -> None:
        self.fields = fields
        self.case_sensitive = case_sensitive

    def resolve(self, path: tuple[str, ...]) -> tuple[str, ...]:
        out: list[str] = []
        current = list(self.fields)
        for part in path:
            found = next((f for f in current if f.name == part), None)
            if found is None and not self.case_sensitive:
                matches = [f for f in current if f.name.lower() == part.lower()]
                found = matches[0] if len(matches) == 1 else None
            if found is None:
                return (*out, *path[len(out) :])
            out.append(found.name)
            current = list(found.type.fields or ()) if found.type.root == "ROW" else []
        return tuple(out)

    def sibling(self, path: tuple[str, ...], name: str | None) -> str | None:
        """``AFTER name``: a field next to ``path``'s last part."""
        return None if name is None else self.resolve((*path[:-1], name))[-1]

    def new(self, path: tuple[str, ...]) -> tuple[str, ...]:
        """A field to add: its parent resolved, its own name as written."""
        return (*self.resolve(path[:-1]), path[-1])


def _schema_changes(names: _Names, statement: AlterTable, shown: str) -> list[sc.SchemaChange]:
    changes: list[sc.SchemaChange] = []
    for key, value in statement.properties.items():
        _check_property(key, shown)
        changes.append(
            sc.UpdateComment(value) if key == COMMENT_PROPERTY else sc.SetOption(key, value)
        )
    for key in statement.unset:
        _check_property(key, shown)
        changes.append(sc.UpdateComment(None) if key == COMMENT_PROPERTY else sc.RemoveOption(key))
    for column in statement.add:
        column_type = parse_type(column.type_text).copy(not column.not_null)
        after = names.sibling(column.path, column.after)
        path = names.new(column.path)
        changes.append(sc.AddColumn(_name(path), column_type, column.comment, column.first, after))
    if statement.rename_column is not None:
        path, new_name = statement.rename_column
        changes.append(sc.RenameColumn(_name(names.resolve(path)), new_name))
    for path in statement.drop:
        resolved = names.resolve(path)
        if statement.drop_if_exists and not _exists(names.fields, resolved):
            continue
        changes.append(sc.DropColumn(_name(resolved)))
    for change in statement.alter:
        changes.extend(_column_changes(names, change, shown))
    return changes


def _column_changes(names: _Names, change: ColumnChange, shown: str) -> list[sc.SchemaChange]:
    path = names.resolve(change.path)
    name = _name(path)
    current = _field_type(names.fields, path)
    out: list[sc.SchemaChange] = []
    if change.type_text is not None:
        new_type = parse_type(change.type_text)
        if current is not None:
            _check_spark_type_change(current, new_type, change.path, shown)
        out.append(sc.UpdateColumnType(name, new_type, keep_nullability=True))
    if change.set_comment:
        out.append(sc.UpdateColumnComment(name, change.comment))
    if change.nullable is False and current is not None and current.nullable:
        raise SqlError(
            f"ALTER TABLE {shown}: Cannot change nullable column to non-nullable: "
            f"{'.'.join(change.path)} (Spark refuses SET NOT NULL on a nullable column)"
        )
    if change.nullable is not None:
        out.append(sc.UpdateColumnNullability(name, change.nullable))
    if change.default is not None or change.drop_default:
        out.append(sc.UpdateColumnDefaultValue(name, change.default))
    if change.first or change.after is not None:
        if len(change.path) > 1:
            raise SqlError(f"Moving nested field {'.'.join(change.path)} is not supported")
        after = names.sibling(path, change.after)
        out.append(sc.UpdateColumnPosition(path[0], first=change.first, after=after))
    return out


def _check_property(key: str, shown: str) -> None:
    """Spark's parser refuses its reserved table properties (``cleanTableProperties``);
    Paimon-Spark's ``validateAlterProperty`` refuses ``primary-key``."""
    reserved = _RESERVED_PROPERTIES.get(key.lower())
    if reserved is not None:
        raise SqlError(f"ALTER TABLE {shown}: {key} is a reserved table property, {reserved}")
    if key == PRIMARY_KEY_OPTION:
        raise SqlError(f"ALTER TABLE {shown}: Alter primary key is not supported")


def _name(path: tuple[str, ...]) -> sc.FieldPath:
    return path[0] if len(path) == 1 else path


def _field_type(fields: Sequence[DataField], path: tuple[str, ...]) -> DataType | None:
    """The type of a (nested ROW) field; None when there is none (the core then says so)."""
    current = list(fields)
    found: DataField | None = None
    for part in path:
        if found is not None:
            if found.type.root != "ROW":
                return None
            current = list(found.type.fields or ())
        found = next((f for f in current if f.name == part), None)
        if found is None:
            return None
    return None if found is None else found.type


def _exists(fields: Sequence[DataField], path: tuple[str, ...]) -> bool:
    """Whether the (nested) field exists: DROP COLUMN IF EXISTS skips the missing ones."""
    return _field_type(fields, path) is not None


_NUMERIC_PRECEDENCE = ("TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE")
_INTEGRAL_DIGITS = {"TINYINT": 3, "SMALLINT": 5, "INT": 10, "BIGINT": 20}
_STRINGS = ("CHAR", "VARCHAR")
_TIMESTAMPS = ("TIMESTAMP", "TIMESTAMP_LTZ")


def _check_spark_type_change(
    old: DataType, new: DataType, path: tuple[str, ...], shown: str
) -> None:
    """Spark's analysis of ``ALTER COLUMN ... TYPE`` on a v2 table, which runs before Paimon
    sees the change: only an atomic column, only to a type it can up-cast to
    (``Cast.canUpCast``, as Spark sees the Paimon types: CHAR/VARCHAR are STRING)."""
    shown_path = ".".join(path)
    if old.root in ("ROW", "ARRAY", "MAP", "MULTISET"):
        raise SqlError(
            f"ALTER TABLE {shown}: Cannot update field {shown_path} of type {old}: "
            "update its nested fields instead"
        )
    if not _can_up_cast(old, new):
        raise SqlError(
            f"ALTER TABLE {shown}: Cannot update field {shown_path}: {old} cannot be cast to "
            f"{new} (Spark allows widening type changes only)"
        )


def _decimal_of(t: DataType) -> tuple[int, int] | None:
    if t.root == "DECIMAL":
        return t.precision or 10, t.scale or 0
    digits = _INTEGRAL_DIGITS.get(t.root)
    return None if digits is None else (digits, 0)


def _can_up_cast(old: DataType, new: DataType) -> bool:
    """Spark's ``Cast.canUpCast`` for the atomic types Paimon columns read as."""
    a = "VARCHAR" if old.root in _STRINGS else old.root
    b = "VARCHAR" if new.root in _STRINGS else new.root
    if a == b and a not in ("DECIMAL",):
        return True
    if b == "VARCHAR":
        return True
    if a in _NUMERIC_PRECEDENCE and b in _NUMERIC_PRECEDENCE:
        return _NUMERIC_PRECEDENCE.index(a) <= _NUMERIC_PRECEDENCE.index(b)
    wide, narrow = _decimal_of(new), _decimal_of(old)
    if b == "DECIMAL" and narrow is not None and wide is not None:
        return wide[0] - wide[1] >= narrow[0] - narrow[1] and wide[1] >= narrow[1]
    if a == "DECIMAL" and narrow is not None and wide is not None:
        return wide[0] - wide[1] >= narrow[0] - narrow[1] and wide[1] >= narrow[1]
    if a == "DATE" and b in _TIMESTAMPS:
        return True
    if a in _TIMESTAMPS and b in _TIMESTAMPS:
        return True
    return (a, b) in (("TIMESTAMP_LTZ", "BIGINT"), ("BIGINT", "TIMESTAMP_LTZ"))


def parse_type(text: str) -> DataType:
    """A Spark type as written (``BIGINT``, ``STRUCT<a: INT>``, ``DECIMAL(10, 2)``) as the
    Paimon type Paimon-Spark gives it.

    Raises:
        SqlError: Spark does not parse it, or Paimon has no such type.
    """
    try:
        parsed = st.StructType.fromDDL(f"`c` {text}")
    except PySparkException as e:
        raise SqlError(f"Invalid column type {text}: {first_line(e)}") from None
    if len(parsed.fields) != 1:
        raise SqlError(f"Invalid column type {text}")
    return from_spark_type(parsed.fields[0].dataType)


def _add_partitions(
    spark: SparkSession, table: FileStoreTable, statement: AlterTable, shown: str
) -> None:
    """ALTER TABLE ... ADD PARTITION: checked as Spark checks it (every partition column
    named; an existing partition, one with data, is an error without IF NOT EXISTS), then
    nothing: Paimon's filesystem catalog keeps partitions only as their files
    (`PaimonPartitionManagement.createPartitions` registers them only in a metastore)."""
    keys = list(table.schema.partition_keys)
    if not keys:
        raise SqlError(f"ALTER TABLE {shown} ADD PARTITION: the table is not partitioned")
    specs = []
    for written in statement.add_partitions:
        if sorted(k.lower() for k in written) != sorted(k.lower() for k in keys):
            raise SqlError(
                f"ALTER TABLE {shown} ADD PARTITION: partition spec is invalid, "
                f"({', '.join(written)}) must name the partition columns ({', '.join(keys)})"
            )
        specs.append(static_partition(spark, table, written))
    snapshot = table.latest_snapshot()
    scan = table.new_scan()
    existing = [s for s in specs if snapshot is not None and scan.read_entries(snapshot, s)]
    if existing and not statement.partitions_if_exists:
        shown_specs = "; ".join(", ".join(f"{k}={v}" for k, v in s.items()) for s in existing)
        raise SqlError(
            f"ALTER TABLE {shown} ADD PARTITION: partitions already exist: {shown_specs}"
        )


def _drop_partitions(
    spark: SparkSession, table: FileStoreTable, statement: AlterTable, shown: str
) -> None:
    keys = {k.lower(): k for k in table.schema.partition_keys}
    if not keys:
        raise SqlError(f"ALTER TABLE {shown} DROP PARTITION: the table is not partitioned")
    specs = []
    for written in statement.partitions:
        unknown = [k for k in written if k.lower() not in keys]
        if unknown:
            raise SqlError(
                f"ALTER TABLE {shown} DROP PARTITION: {', '.join(unknown)} is not a partition "
                f"column (the partition columns are {', '.join(table.schema.partition_keys)})"
            )
        specs.append(static_partition(spark, table, written))
    snapshot = table.latest_snapshot()
    scan = table.new_scan()
    missing = [spec for spec in specs if snapshot is None or not scan.read_entries(snapshot, spec)]
    if missing and not statement.partitions_if_exists:
        shown_specs = "; ".join(", ".join(f"{k}={v}" for k, v in s.items()) for s in missing)
        raise SqlError(f"ALTER TABLE {shown} DROP PARTITION: partitions not found: {shown_specs}")
    present = [s for s in specs if s not in missing]
    if present:
        table.new_commit().truncate_partitions(present)

"""`CREATE TABLE ... LIKE` and `CREATE TABLE ... LOCATION` on the Paimon catalog.

LIKE follows Paimon-Spark's `PaimonCreateTableLikeCommand` (latest release): the target gets
the source's Spark schema (CHAR/VARCHAR kept, other types as they round-trip through Spark,
so TIME becomes INT and TIMESTAMP(p) TIMESTAMP(6)), its partitioning, comment and
properties (`primary-key` and the options) except `path`, `provider`, `location`, `owner`,
`external` and `is-managed-location`; the statement's TBLPROPERTIES win. LIKE of a non-Paimon
source or with another provider is not supported.

LOCATION: Paimon's filesystem catalog (`AbstractCatalog.validateCustomTablePath`, latest
release: only the Hive and JDBC metastores allow custom table paths) refuses a table path, for
CREATE TABLE, CTAS and REPLACE alike, and so does this catalog, with Paimon's message and
creating nothing; a table stays at `<warehouse>/<db>.db/<name>`. The docs' "external table"
and `CREATE TABLE t LOCATION '/path'` (open an existing table) are Hive-metastore features.
What Paimon-Spark does offer for a table at any path is its data source, and so does this one:
`spark.read.format("paimon").load("/path/to/table")` and `df.write.format("paimon").save(...)`
(`sql_ext.datapath.read.source_table`). SQL has no path syntax for it, in Paimon-Spark either:
``SELECT * FROM paimon.`/path` `` gets Spark's "Unsupported data source type for direct query
on files: paimon".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from paimon_core.format.schema import TableSchema, new_table_schema
from paimon_core.format.types import DataField
from sql_ext.errors import SqlError
from sql_ext.spark_types import from_spark_type, to_spark_type
from sql_ext.tables import PAIMON_PROVIDER

if TYPE_CHECKING:
    from paimon_core.table import FileStoreTable
    from sql_ext.tables import TableSpec

__all__ = ["like_schema", "refuse_location"]

_NOT_COPIED = frozenset(
    {"path", "provider", "comment", "location", "owner", "external", "is-managed-location"}
)


def refuse_location(spec: TableSpec, identifier: str) -> None:
    """Raise Paimon's refusal when the CREATE TABLE names a LOCATION."""
    if spec.location is not None:
        raise SqlError(
            f"Cannot create table {identifier} at LOCATION '{spec.location}': the current "
            "catalog FileSystemCatalog does not support specifying the table path when "
            "creating a table (Paimon keeps its tables at <warehouse>/<db>.db/<table>; only "
            "its Hive and JDBC metastores take LOCATION); a Paimon table at a path is read "
            """with spark.read.format("paimon").load('<path>')"""
        )


def _spark_round_trip(field: DataField) -> DataField:
    t = field.type
    if t.root not in ("CHAR", "VARCHAR"):
        t = from_spark_type(to_spark_type(t), t.nullable)
    return DataField(field.id, field.name, t, field.description)


def like_schema(source: FileStoreTable, spec: TableSpec, shown_source: str) -> TableSchema:
    """The schema of `CREATE TABLE <target> LIKE <source>`."""
    if spec.provider not in (None, PAIMON_PROVIDER):
        raise SqlError(
            f"CREATE TABLE ... LIKE {shown_source} USING {spec.provider} is not supported: "
            "Paimon tables are created USING paimon"
        )
    schema = source.schema
    options = {k: v for k, v in schema.options.items() if k not in _NOT_COPIED}
    if schema.primary_keys:
        options["primary-key"] = ",".join(schema.primary_keys)
    options.update(spec.options)
    fields = [_spark_round_trip(f) for f in schema.fields]
    return new_table_schema(
        fields, schema.partition_keys, (), options, spec.comment or schema.comment
    )

"""`CREATE TABLE ... LIKE` and `CREATE TABLE ... LOCATION` on the Paimon catalog.

LIKE follows Paimon-Spark's `PaimonCreateTableLikeCommand` (latest release): the target gets
the source's Spark schema (CHAR/VARCHAR kept, other types as they round-trip through Spark,
so TIME becomes INT and TIMESTAMP(p) TIMESTAMP(6)), its partitioning, comment and
properties (`primary-key` and the options) except `path`, `provider`, `location`, `owner`,
`external` and `is-managed-location`; the statement's TBLPROPERTIES win. LIKE of a non-Paimon
source or with another provider is not supported.

LOCATION: Paimon's filesystem catalog (`AbstractCatalog.validateCustomTablePath`, latest
release: only the Hive and JDBC metastores allow custom table paths) keeps a table at
`<warehouse>/<db>.db/<name>` and refuses any other table path, for CREATE TABLE, CTAS and
REPLACE alike, and so does this catalog, with Paimon's message and creating nothing. A
LOCATION (or a `path` property) that *is* the new table's own place is accepted and changes
nothing: `SHOW CREATE TABLE` prints Paimon-Spark's statement, `LOCATION` and `'path'` included,
and a user pasting it into CREATE TABLE (after a DROP TABLE, or into a copy of the warehouse at
the same path) expects the table back, not an error. The docs' "external table" and `CREATE
TABLE t LOCATION '/path'` (open an existing table elsewhere) are Hive-metastore features.
What Paimon-Spark does offer for a table at any path is its data source, and so does this one:
`spark.read.format("paimon").load("/path/to/table")` and `df.write.format("paimon").save(...)`
(`sql_ext.datapath.read.source_table`). SQL has no path syntax for it, in Paimon-Spark either:
``SELECT * FROM paimon.`/path` `` gets Spark's "Unsupported data source type for direct query
on files: paimon".
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from paimon_core.format.schema import TableSchema, new_table_schema
from paimon_core.format.types import DataField
from sql_ext.errors import SqlError
from sql_ext.spark_types import from_spark_type, to_spark_type
from sql_ext.tables import PAIMON_PROVIDER

if TYPE_CHECKING:
    from paimon_core.table import FileStoreTable
    from sql_ext.tables import TableSpec

__all__ = ["check_location", "like_schema"]

_NOT_COPIED = frozenset(
    {"path", "provider", "comment", "location", "owner", "external", "is-managed-location"}
)


def _same_path(written: str, own: str) -> bool:
    """Whether a LOCATION names `own` (a `file:` scheme and trailing slashes aside)."""

    def plain(path: str) -> str:
        if path.startswith("file:"):
            path = "/" + path[len("file:") :].lstrip("/")
        return path.rstrip("/") or "/"

    return plain(written) == plain(own)


def check_location(spec: TableSpec, identifier: str, own_path: str) -> TableSpec:
    """`spec` without its LOCATION and `path` property when they name `own_path` (the new
    table's place in the warehouse); Paimon's refusal when either names another path.
    """
    location = spec.location
    path = spec.options.get("path")
    for written in (location, path):
        if written is not None and not _same_path(written, own_path):
            raise SqlError(
                f"Cannot create table {identifier} at LOCATION '{written}': the current "
                "catalog FileSystemCatalog does not support specifying the table path when "
                f"creating a table (Paimon keeps this table at {own_path}; only its Hive and "
                "JDBC metastores take another LOCATION); a Paimon table at a path is read "
                """with spark.read.format("paimon").load('<path>')"""
            )
    if location is None and path is None:
        return spec
    if spec.columns_ddl is None and spec.query is None and spec.like is None:
        raise SqlError(
            f"CREATE TABLE {identifier} LOCATION '{location or path}' needs a column list (or "
            "AS SELECT): the filesystem catalog opens no table by its path"
        )
    options = {k: v for k, v in spec.options.items() if k != "path"}
    return dataclasses.replace(spec, location=None, options=options)


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

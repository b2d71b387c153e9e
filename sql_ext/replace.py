"""REPLACE TABLE and CREATE OR REPLACE TABLE [AS SELECT] on Paimon tables.

As Paimon-Spark (latest release, Spark >= 3.4) does it. `SparkCatalog.stageReplace` /
`stageCreateOrReplace` call `Catalog.replaceTable`, which for the filesystem catalog
(`AbstractCatalog.replaceTable` + `FileSystemCatalog.replaceTableImpl`) keeps the table where it
is and its history:

1. the table is truncated: one OVERWRITE snapshot deleting every file (`truncateTable`), under
   the old schema;
2. the new schema is committed as `schema-<latest + 1>`, built from the statement alone (field
   ids from 0; keys, options and comment all new; nothing of the old schema is kept);
3. with `AS SELECT`, the query's rows are appended in one more snapshot.

Older snapshots and schemas stay: `VERSION AS OF` an old snapshot reads the old rows with the
old schema, and a self-referencing `CREATE OR REPLACE TABLE t AS SELECT * FROM t` reads the rows
of before the replacement (Paimon pins the query to that snapshot).

When the partition keys change, Paimon does not replace in place
(`PaimonTableAsSelectHelper.canAtomicReplace` is false, and `replaceTable` refuses to change
partition keys): Spark's non-atomic `ReplaceTable[AsSelect]Exec` drops the table and creates it
again, so the history is lost, and an `AS SELECT` reading the table itself is refused with
Paimon's message (`checkNonAtomicSelfReference`). If that query then fails, the new table is
dropped again, as Spark does.

Docs and behaviour differ on one point: `sql-ddl.md` says `REPLACE TABLE` does not accept
`AS SELECT`, but Paimon-Spark's `PaimonReplaceTableAsSelectStrategy` plans it (its DDL tests run
`REPLACE TABLE q AS SELECT ...`), so it is accepted here, as the release behaves.

One improvement over Paimon, at no cost: the query's rows are written (on the executors) before
the table is touched, then the table is truncated, its schema replaced and the rows committed,
so a statement whose query fails changes nothing; Paimon truncates first and can leave the table
empty under its new schema.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paimon_core.exceptions import TableNotExist
from paimon_core.format.features import Access, check_supported
from paimon_core.table import FileStoreTable

if TYPE_CHECKING:
    from paimon_core.format.schema import TableSchema

__all__ = ["SELF_REFERENCE", "ReplacePlan", "plan_replace", "replace_in_place"]

SELF_REFERENCE = (
    "Cannot replace table {name} because the replacement query reads from the same table and "
    "the requested table definition requires a non-atomic drop-and-create. Write the query "
    "result to a temporary table first, or keep the existing provider, table type, and "
    "partitioning."
)
"""Paimon's `checkNonAtomicSelfReference` message."""


@dataclass(frozen=True, slots=True)
class ReplacePlan:
    """How an existing table is replaced by `schema` (its id still unassigned: 0)."""

    existing: FileStoreTable
    schema: TableSchema
    in_place: bool
    """Same partition keys: truncate and append a schema (history kept); else drop + create."""

    def staged(self) -> FileStoreTable:
        """The table as it will be once replaced in place (the next schema id), to write its
        new rows before anything is committed."""
        latest = self.existing.schema_manager.latest()
        if latest is None:
            raise TableNotExist(f"Table {self.existing.identifier} does not exist")
        schema = dataclasses.replace(self.schema, schema_id=latest.schema_id + 1)
        existing = self.existing
        return FileStoreTable(existing.file_io, existing.path, schema, existing.identifier)


def plan_replace(existing: FileStoreTable, schema: TableSchema) -> ReplacePlan:
    """Replace in place when the partition keys stay (in order), as Paimon-Spark decides.

    Raises:
        UnsupportedFeature: the new definition turns on a table feature this implementation
            lacks, or (in place) the table has one its truncation may not touch: before the
            table is truncated or dropped.
    """
    same_keys = tuple(existing.schema.partition_keys) == tuple(schema.partition_keys)
    if same_keys:
        existing.check_supported(Access.WRITE)
    access = Access.ALTER if same_keys else Access.CREATE
    check_supported(schema, schema.options, access, existing.identifier)
    return ReplacePlan(existing, schema, same_keys)


def replace_in_place(staged: FileStoreTable) -> None:
    """Truncate the table (one OVERWRITE snapshot), then commit `staged.schema` as the next
    schema: Paimon's `FileSystemCatalog.replaceTableImpl`.

    Raises:
        CommitConflict: another writer kept committing schemas (`staged` is then stale).
    """
    current = FileStoreTable.load(staged.path, staged.identifier, staged.file_io)
    current.new_commit().truncate_table()
    if not current.schema_manager.commit(staged.schema):
        from paimon_core.exceptions import CommitConflict

        raise CommitConflict(
            f"Cannot replace {staged.identifier}: schema {staged.schema.schema_id} was "
            "committed by another writer meanwhile; run the statement again"
        )

"""Beyond Paimon: ``check_table`` and ``diff_tags`` (no Paimon release has either).

``CALL sys.check_table(table, deep => false)`` reads the table and all its branches and
returns one row per problem, none when the table is healthy; it changes nothing:

* ``kind STRING``: ``missing`` (a file a live root needs does not exist), ``corrupt`` (a
  file that cannot be read as what it is: snapshot/tag/changelog/consumer JSON, schema,
  manifest list, manifest, index manifest, hint; with ``deep`` data and deletion-vector
  files), ``mismatch`` (a file unlike its metadata: size; with ``deep`` row count, column
  statistics, min/max key, retract count, deletion-vector cardinality, a manifest's size
  and file counts, a HASH index file's hash count, repeated or shared hashes and keys of
  its bucket it lacks, a bucket directory with data and no HASH index file), ``duplicate``
  (with ``deep``: primary keys in live data files of two buckets of one partition, the
  path being the partition directory), ``hint`` (``EARLIEST``/``LATEST`` not the first/last
  id, or ids missing between them), ``orphan`` (a file no root references, older than one
  day: what ``remove_orphan_files`` with its default ``older_than`` would delete);
* ``path STRING``: the file;
* ``needed_by STRING``: the live roots that need it (``snapshots 3-5, tag t1``,
  ``changelog 2``, ``consumer c1``, ``branch b1 snapshot 4``), NULL for hints and orphans;
* ``detail STRING``: what is wrong, in one line.

``deep`` also reads every live data file, deletion-vector file, HASH index file and manifest
list in full, and checks the keys of each partition (``paimon_core.lifecycle.check_keys``).

``CALL sys.diff_tags(table, from, to)``: ``from`` and ``to`` are versions as ``VERSION AS
OF`` takes them (a tag name, else a snapshot id). One row per data file in one and not the
other: ``partition STRING`` (its directory, '' unpartitioned), ``bucket INT``, ``file_path
STRING``, ``kind STRING`` (``added``: in ``to`` only, ``removed``: in ``from`` only),
``row_count BIGINT`` (the file's records), ``level INT``; sorted by partition, bucket, kind,
path. No rows when nothing differs. Totals are the sums of ``row_count`` by kind.
"""

from __future__ import annotations

from typing import Any

from paimon_core.exceptions import InvalidArgument, SchemaError, SnapshotNotFound, TagNotFound
from paimon_core.format.schema import SchemaManager
from paimon_core.io.fileio import FileIO
from paimon_core.lifecycle.check import check_table
from paimon_core.operations.diff import diff_snapshots
from paimon_core.operations.time_travel import snapshot_for_version
from paimon_core.table import FileStoreTable
from procedures.base import CallContext, Column, Parameter, Procedure, ProcedureResult

CHECK_OUTPUT = (
    Column("kind", "STRING", nullable=False),
    Column("path", "STRING", nullable=False),
    Column("needed_by", "STRING"),
    Column("detail", "STRING", nullable=False),
)
DIFF_OUTPUT = (
    Column("partition", "STRING", nullable=False),
    Column("bucket", "INT", nullable=False),
    Column("file_path", "STRING", nullable=False),
    Column("kind", "STRING", nullable=False),
    Column("row_count", "BIGINT", nullable=False),
    Column("level", "INT", nullable=False),
)


def _checkable_table(file_io: FileIO, path: str, identifier: str = "") -> FileStoreTable:
    """The table at ``path`` opened with its newest schema that parses, so that
    ``check_table`` can report a corrupt latest schema instead of failing to open it.

    Raises:
        SchemaError: no schema file of the table parses (the latest one's error).
    """
    manager = SchemaManager(file_io, path)
    first: SchemaError | None = None
    for schema_id in reversed(manager.list_ids()):
        try:
            return FileStoreTable(file_io, path, manager.schema(schema_id), identifier)
        except SchemaError as err:
            first = first or err
    if first is None:
        return FileStoreTable.load(path, identifier, file_io)  # no schema: TableNotExist
    raise first


def _check_table(ctx: CallContext, args: dict[str, Any]) -> ProcedureResult:
    """Rows ``(kind, path, needed_by, detail)``, one per problem, none when healthy (see the
    module docstring); read-only, so it is answered without Spark even with ``deep``."""
    try:
        table = ctx.table(args["table"])
    except SchemaError:  # a corrupt latest schema: a row of the result, not a failure
        database, name = ctx.split_table(args["table"], "table")
        identifier = f"{database}.{name}"
        table = _checkable_table(
            ctx.catalog.file_io, ctx.catalog.table_path(identifier), identifier
        )
    problems = check_table(table, deep=bool(args["deep"]))
    return ProcedureResult(
        CHECK_OUTPUT, [(p.kind, p.path, p.needed_by, p.detail) for p in problems]
    )


def _diff_tags(ctx: CallContext, args: dict[str, Any]) -> ProcedureResult:
    """Rows ``(partition, bucket, file_path, kind, row_count, level)``: the files ``added``
    in ``to`` and ``removed`` from ``from``. Both versions are resolved before anything is
    read, so a bad one fails with one line naming it."""
    versions = []
    for argument in ("from", "to"):
        value = args[argument]
        if value is None or not value.strip():
            raise ctx.fail(f"Argument {argument} must be a tag name or a snapshot id")
        versions.append(value.strip())
    table = ctx.table(args["table"])
    snapshots = []
    for version in versions:
        try:
            snapshots.append(snapshot_for_version(table, version))
        except (TagNotFound, SnapshotNotFound, InvalidArgument) as err:
            raise ctx.fail(str(err)) from None
    changes = diff_snapshots(table, snapshots[0], snapshots[1])
    return ProcedureResult(
        DIFF_OUTPUT,
        [(c.partition, c.bucket, c.file_path, c.kind, c.row_count, c.level) for c in changes],
    )


CHECK_PROCEDURES = (
    Procedure(
        "check_table",
        (Parameter("table", "STRING", required=True), Parameter("deep", "BOOLEAN", default=False)),
        CHECK_OUTPUT,
        _check_table,
        "Report every missing, corrupt or mismatched file, bad hint and old orphan; read-only.",
    ),
    Procedure(
        "diff_tags",
        (
            Parameter("table", "STRING", required=True),
            Parameter("from", "STRING", required=True),
            Parameter("to", "STRING", required=True),
        ),
        DIFF_OUTPUT,
        _diff_tags,
        "The data files added and removed between two tags or snapshots.",
    ),
)

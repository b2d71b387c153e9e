"""The table: one object that knows where everything of a Paimon table lives."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

from paimon_core.exceptions import InvalidBranchName
from paimon_core.format.features import Access, check_supported
from paimon_core.format.names import validate_path_options
from paimon_core.format.options import CoreOptions
from paimon_core.format.paths import DEFAULT_BRANCH, branch_path, is_main_branch, normalize_branch
from paimon_core.format.schema import SchemaManager, TableSchema
from paimon_core.format.snapshot import Snapshot, SnapshotManager
from paimon_core.format.tag import TagManager
from paimon_core.io.fileio import FileIO
from paimon_core.io.load import get_file_io
from paimon_core.operations.time_travel import try_travel_snapshot

if TYPE_CHECKING:
    import pyarrow as pa

    from paimon_core.format.index_manifest import IndexManifestFile
    from paimon_core.format.manifest import ManifestFile, ManifestList
    from paimon_core.operations.commit import FileStoreCommit
    from paimon_core.operations.fallback import FallbackRead
    from paimon_core.operations.read import TableRead
    from paimon_core.operations.scan import Split, TableScan
    from paimon_core.operations.write import TableWrite


BRANCH_OPTION = "branch"
_SCHEMA_OPTIONS: dict[int, tuple[TableSchema, CoreOptions]] = {}
_SCHEMA_OPTIONS_MAX = 64


def _schema_options(schema: TableSchema) -> CoreOptions:
    """The ``CoreOptions`` of ``schema`` alone, one object per schema object: the schema
    manager hands every handle of a table the same parsed schema, so the handles of a
    user's script share the parsed option values (durations, sizes, stats modes) too."""
    cached = _SCHEMA_OPTIONS.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1]
    options = CoreOptions(schema.options)
    if len(_SCHEMA_OPTIONS) >= _SCHEMA_OPTIONS_MAX:
        _SCHEMA_OPTIONS.clear()
    _SCHEMA_OPTIONS[id(schema)] = (schema, options)  # the schema held: its id stays unique
    return options


@dataclass(eq=False)
class FileStoreTable:
    """A Paimon table at ``path`` with its latest schema.

    ``dynamic_options`` override the schema's options for this handle only (time travel
    with ``scan.snapshot-id``/``scan.tag-name``, Spark's dynamic options), as in Paimon's
    ``table.copy(options)``.

    Option ``branch`` (Paimon's ``CoreOptions.BRANCH``, default ``main``) makes the handle a
    branch's: its schemas, snapshots, tags, changelogs and consumers live under
    ``branch/branch-<name>/``, while data files, manifests, index and statistics files stay
    in the table's directories, shared by all branches (``switch_to_branch``).
    """

    file_io: FileIO
    path: str
    schema: TableSchema
    identifier: str = ""
    dynamic_options: dict[str, str] = field(default_factory=dict)

    @classmethod
    def load(
        cls,
        path: str,
        identifier: str = "",
        file_io: FileIO | None = None,
        branch: str | None = None,
    ) -> FileStoreTable:
        """Open the table at ``path`` (its ``branch``, default main) with its latest schema."""
        from paimon_core.exceptions import TableNotExist

        io = file_io or get_file_io(path)
        schema = SchemaManager(io, path, branch).latest()
        if schema is None:
            if not is_main_branch(branch) and SchemaManager(io, path).latest() is not None:
                raise TableNotExist(f"Branch {branch} of table {identifier or path} does not exist")
            raise TableNotExist(f"Table {identifier or path} does not exist")
        options = {} if is_main_branch(branch) else {"branch": str(branch)}
        return cls(io, path, schema, identifier, options)

    @property
    def branch(self) -> str:
        """The branch this handle reads and writes (``main`` unless option ``branch``).

        Raises:
            InvalidBranchName: option ``branch`` (a dynamic one, or one stored in the schema
                before it was checked, or by hand) names no directory of the table; nothing
                of such a handle can be read or written (``alter_schema_manager`` repairs).
        """
        value = self.options.get_str(BRANCH_OPTION)
        if value is not None:
            validate_path_options(
                {BRANCH_OPTION: value}, f" of table {self.identifier or self.path}"
            )
        return normalize_branch(value)

    @property
    def alter_schema_manager(self) -> SchemaManager:
        """Where ALTER TABLE commits: this branch's schemas (``schema_manager``), or main's
        when the option ``branch`` stored in the schema names no directory of the table.

        Such a table cannot be read or written, but a change that removes or corrects the
        option (``RemoveOption('branch')``) repairs it; any other change is still refused,
        naming the option, because every committed schema is validated.

        Raises:
            InvalidBranchName: a dynamic option ``branch`` that names no branch directory.
        """
        try:
            return self.schema_manager
        except InvalidBranchName:
            if BRANCH_OPTION in self.dynamic_options:
                raise
            return SchemaManager(self.file_io, self.path)

    @property
    def branch_root(self) -> str:
        """The directory of this branch's schema, snapshot and tag directories."""
        return branch_path(self.path, self.branch)

    def switch_to_branch(self, branch: str | None) -> FileStoreTable:
        """Paimon's ``switchToBranch``: the branch's own latest schema with option ``branch``
        (this handle's dynamic options are not carried over, as in Paimon).

        Raises:
            TableNotExist: the branch does not exist.
        """
        if normalize_branch(branch) == self.branch:
            return self
        target = normalize_branch(branch)
        return FileStoreTable.load(
            self.path,
            self.identifier,
            self.file_io,
            None if target == DEFAULT_BRANCH else target,
        )

    def copy(self, dynamic_options: dict[str, str], time_travel: bool = True) -> FileStoreTable:
        """The same table with extra options on top (they win over the schema's).

        As Paimon's ``copy``, when the merged options travel (``scan.snapshot-id``,
        ``scan.tag-name``, ``scan.timestamp[-millis]``, ``scan.version``, ...) the copy has the
        schema of the snapshot they travel to, so old files read as they were written; an
        unresolvable travel keeps the schema and the scan reports it. ``time_travel=False``
        (Paimon's ``copyWithoutTimeTravel``) keeps the schema: writes use the latest one.

        A ``branch`` option naming another branch switches to it first (its schema), as
        Paimon-Spark reads ``branch`` as the table's ``$branch_<name>``.

        Raises:
            InvalidBranchName, InvalidTagName, InvalidArgument: an option naming a path that
                would leave its directory (``names.validate_path_options``).
        """
        validate_path_options(dynamic_options, f" of table {self.identifier or self.path}")
        branch = dynamic_options.get("branch")
        if branch is not None and normalize_branch(branch) != self.branch:
            merged = {**self.dynamic_options, **dynamic_options}
            rest = {k: v for k, v in merged.items() if k != "branch"}
            return self.switch_to_branch(branch).copy(rest, time_travel)
        copied = FileStoreTable(
            self.file_io,
            self.path,
            self.schema,
            self.identifier,
            {**self.dynamic_options, **dynamic_options},
        )
        if not time_travel:
            return copied
        snapshot = try_travel_snapshot(copied)
        return copied if snapshot is None else copied.with_schema_of(snapshot)

    def with_schema_of(self, snapshot: Snapshot) -> FileStoreTable:
        """This table in the schema ``snapshot`` was committed under.

        Paimon reads an older snapshot with its own schema: its columns, names and types, with
        the options of this handle (the latest ones plus dynamic options), as Paimon's
        ``schema(snapshot.schemaId()).copy(options)``.
        """
        schema_id = snapshot.schema_id
        if schema_id == self.schema.schema_id:
            return self
        old = self.schema_manager.schema(schema_id)
        return FileStoreTable(
            self.file_io,
            self.path,
            replace(old, options=dict(self.schema.options)),
            self.identifier,
            dict(self.dynamic_options),
        )

    def __getstate__(self) -> dict[str, Any]:
        """Only the fields: the cached managers hold locks and caches, and are rebuilt on
        demand (a table goes to Spark executors and worker processes by pickle)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    @cached_property
    def options(self) -> CoreOptions:
        if not self.dynamic_options:
            return _schema_options(self.schema)
        return CoreOptions({**self.schema.options, **self.dynamic_options})

    @cached_property
    def schema_manager(self) -> SchemaManager:
        return SchemaManager(self.file_io, self.path, self.branch)

    @cached_property
    def snapshot_manager(self) -> SnapshotManager:
        return SnapshotManager(self.file_io, self.path, self.branch)

    @cached_property
    def tag_manager(self) -> TagManager:
        return TagManager(self.file_io, self.path, self.branch)

    @cached_property
    def manifest_file(self) -> ManifestFile:
        from paimon_core.format.manifest import ManifestFile

        return ManifestFile(
            self.file_io,
            self.path,
            compression=self.options.manifest_compression,
            target_file_size=self.options.manifest_target_file_size,
        )

    @cached_property
    def manifest_list(self) -> ManifestList:
        from paimon_core.format.manifest import ManifestList

        return ManifestList(self.file_io, self.path, compression=self.options.manifest_compression)

    @cached_property
    def index_manifest_file(self) -> IndexManifestFile:
        from paimon_core.format.index_manifest import IndexManifestFile

        return IndexManifestFile(
            self.file_io, self.path, compression=self.options.manifest_compression
        )

    def check_supported(self, access: Access) -> None:
        """Refuse ``access`` (read, write) when this handle's schema or options (dynamic
        options included) turn on a table feature this implementation lacks.

        Raises:
            UnsupportedFeature: one line naming the option or column type (``features``).
        """
        check_supported(self.schema, self.options, access, self.identifier or self.path)

    @property
    def is_primary_key_table(self) -> bool:
        return bool(self.schema.primary_keys)

    def latest_snapshot(self) -> Snapshot | None:
        return self.snapshot_manager.latest_snapshot()

    def new_write(self, overwrite: bool = False, **kwargs: Any) -> TableWrite:
        """A writer producing data files and commit messages (runs anywhere: no driver state);
        ``kwargs`` as ``TableWrite``'s (``base_snapshot``, ``on_new_file``)."""
        from paimon_core.operations.compact import write_compaction
        from paimon_core.operations.write import TableWrite

        kwargs.setdefault("compaction", write_compaction(self))
        return TableWrite(self, overwrite=overwrite, **kwargs)

    def new_commit(self, commit_user: str | None = None) -> FileStoreCommit:
        """The driver's committer, with the post-commit maintenance of this table's options.

        Raises:
            InvalidArgument: a malformed partition expiry option.
        """
        from paimon_core.lifecycle.post_commit import post_commit_hooks
        from paimon_core.operations.commit import FileStoreCommit

        return FileStoreCommit(self, commit_user=commit_user, post_commit=post_commit_hooks(self))

    def new_scan(self) -> TableScan:
        from paimon_core.operations.scan import TableScan

        return TableScan(self)

    def new_read(self) -> TableRead:
        from paimon_core.operations.read import TableRead

        return TableRead(self)

    def write_arrow(
        self,
        data: pa.Table,
        *,
        row_kinds: pa.Array | None = None,
        overwrite: bool | dict[str, Any] = False,
    ) -> int | None:
        """Write and commit ``data`` in one snapshot; returns its id (None if nothing changed).

        ``overwrite=True`` replaces the partitions the data falls in (Paimon's dynamic
        partition overwrite; the whole table when unpartitioned); a dict replaces that static
        partition. When the commit fails the written data files are removed again.
        """
        commit = self.new_commit()  # refuses malformed maintenance options before any write
        write = self.new_write(overwrite=overwrite is not False)  # {}: the whole table
        write.write_arrow(data, row_kinds=row_kinds)
        messages = write.prepare_commit()
        try:
            if overwrite is False:
                return commit.commit(messages)
            if isinstance(overwrite, dict):
                return commit.overwrite(messages, partition=overwrite)
            return commit.overwrite(messages, dynamic=bool(self.schema.partition_keys))
        except BaseException:
            commit.abort(messages)
            raise

    def to_arrow(self, **scan_args: Any) -> pa.Table:
        """Read the whole table (or what ``scan_args`` select) into one Arrow table.

        A ``snapshot`` given reads in the schema it was committed under, as time travel does.
        Without one, ``scan.fallback-branch``/``scan.primary-branch`` read each partition
        from one of two branches (``operations.fallback``), as Paimon's table reads do.
        """
        snapshot = scan_args.get("snapshot")
        if snapshot is None:
            from paimon_core.operations.fallback import fallback_read

            read = fallback_read(self)
            if read is not None:
                return self._read_branches(read, **scan_args)
        table = self if snapshot is None else self.with_schema_of(snapshot)
        splits = table.new_scan().plan(**scan_args)
        return table.new_read().to_arrow(splits)

    def _read_branches(self, read: FallbackRead, **scan_args: Any) -> pa.Table:
        """``to_arrow`` of a two-branch read: the other branch's rows by position."""
        import pyarrow as pa

        from paimon_core.operations.fallback import plan_branches
        from paimon_core.operations.time_travel import resolve_snapshot

        partition_filter = scan_args.get("partition_filter")
        predicate = scan_args.get("predicate")
        all_levels = bool(scan_args.get("all_levels", False))

        def scan(table: FileStoreTable, at: Snapshot | None) -> list[Split]:
            if at is None:
                return []
            return table.new_scan().plan(at, partition_filter, predicate, all_levels=all_levels)

        def listing(table: FileStoreTable, at: Snapshot | None) -> set[bytes]:
            if at is None:
                return set()
            return table.new_scan().plan_partitions(at, predicate, partition_filter)

        plan = plan_branches(read, resolve_snapshot(self), scan, listing)
        own = self.new_read().to_arrow(plan.wrapped.splits)
        theirs = plan.other.table.new_read().to_arrow(plan.other.splits)
        return pa.concat_tables([own, theirs.rename_columns(own.column_names).cast(own.schema)])

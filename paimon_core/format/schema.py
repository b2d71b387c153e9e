"""Table schemas: ``TableSchema``, its ``schema/schema-N`` JSON and the ``SchemaManager``.

Schema files are immutable once published (no-clobber create of ``schema-N``), so the manager
caches what it parsed. JSON is written exactly as Java's Jackson pretty printer does and read
with Java's compatibility rules for schema versions 1 and 2.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa

from paimon_core.exceptions import InvalidArgument, SchemaError, TableNotExist
from paimon_core.format.data_file_index import validate_file_index
from paimon_core.format.default_value import default_scalar
from paimon_core.format.features import Access, check_supported
from paimon_core.format.merge_options import validate_merge_options
from paimon_core.format.names import check_path_option, validate_path_options
from paimon_core.format.options import CoreOptions
from paimon_core.format.paths import branch_path, is_main_branch, table_name
from paimon_core.format.snapshot import jackson_json
from paimon_core.format.type_casts import supports_cast
from paimon_core.format.types import (
    DataField,
    DataType,
    FieldIds,
    data_field_from_json,
    data_field_to_json,
    from_arrow_type,
    highest_field_id,
    reassign_field_ids,
)
from paimon_core.io.fileio import FileIO

CURRENT_VERSION = 3
PAIMON_07_VERSION = 1
PAIMON_08_VERSION = 2
SCHEMA_DIR = "schema"
SCHEMA_PREFIX = "schema-"
PRIMARY_KEY_OPTION = "primary-key"
PARTITION_OPTION = "partition"
BUCKET_OPTION = "bucket"
BUCKET_KEY_OPTION = "bucket-key"
# Options that fix the table's layout: Java refuses to change them once there are snapshots.
IMMUTABLE_OPTIONS = frozenset(
    {
        "type",
        "primary-key",
        "partition",
        "bucket-key",
        "bucket-function.type",
        "merge-engine",
        "rowkind.field",
        "sequence.snapshot-ordering",
        "aggregation.remove-record-on-delete",
        "partial-update.remove-record-on-delete",
        "partial-update.remove-record-on-sequence-group",
        "primary-key.nullable",
        "dynamic-bucket.initial-buckets",
        "data-file.path-directory",
        "force-lookup",
        "row-tracking.enabled",
        "data-evolution.enabled",
        "index-file-in-data-file-dir",
    }
)


@dataclass(frozen=True, slots=True)
class TableSchema:
    """One version of a table's schema (``schema/schema-<schema_id>``); ``options`` is read-only."""

    schema_id: int
    fields: tuple[DataField, ...]
    highest_field_id: int
    partition_keys: tuple[str, ...]
    primary_keys: tuple[str, ...]
    options: dict[str, str]
    comment: str | None = None
    time_millis: int = 0
    version: int = CURRENT_VERSION

    @property
    def field_names(self) -> list[str]:
        return [f.name for f in self.fields]

    def field(self, name: str) -> DataField:
        """The top-level column ``name``.

        Raises:
            SchemaError: there is no such column.
        """
        for f in self.fields:
            if f.name == name:
                return f
        raise SchemaError(f"Column '{name}' does not exist in {self.field_names}")

    def fields_of(self, names: Iterable[str]) -> list[DataField]:
        by_name = {f.name: f for f in self.fields}
        try:
            return [by_name[n] for n in names]
        except KeyError as e:
            raise SchemaError(f"Column {e} does not exist in {self.field_names}") from None

    @property
    def partition_fields(self) -> list[DataField]:
        return self.fields_of(self.partition_keys)

    @property
    def trimmed_primary_keys(self) -> tuple[str, ...]:
        """Primary key minus partition keys, in primary-key order (the key of data files)."""
        partition = set(self.partition_keys)
        return tuple(k for k in self.primary_keys if k not in partition)

    @property
    def trimmed_primary_key_fields(self) -> list[DataField]:
        return self.fields_of(self.trimmed_primary_keys)

    @property
    def bucket_keys(self) -> tuple[str, ...]:
        """The ``bucket-key`` option's columns, else the trimmed primary key."""
        keys = _split_keys(self.options.get(BUCKET_KEY_OPTION))
        return keys if keys else self.trimmed_primary_keys

    @property
    def bucket_key_fields(self) -> list[DataField]:
        return self.fields_of(self.bucket_keys)

    @property
    def num_buckets(self) -> int:
        return int(self.options.get(BUCKET_OPTION, "-1"))

    @property
    def row_type(self) -> DataType:
        return DataType("ROW", False, fields=self.fields)

    @property
    def cross_partition_update(self) -> bool:
        """A primary key that misses a partition column: keys move between partitions."""
        return bool(self.primary_keys) and not set(self.partition_keys) <= set(self.primary_keys)


def _split_keys(value: str | None) -> tuple[str, ...]:
    if value is None or not value.strip():
        return ()
    return tuple(k.strip() for k in value.split(",") if k.strip())


# ---------------------------------------------------------------------------------- JSON


def schema_to_dict(s: TableSchema) -> dict[str, Any]:
    """The schema file's JSON object, keys in Java's order (``comment`` only when set)."""
    out: dict[str, Any] = {
        "version": s.version,
        "id": s.schema_id,
        "fields": [data_field_to_json(f) for f in s.fields],
        "highestFieldId": s.highest_field_id,
        "partitionKeys": list(s.partition_keys),
        "primaryKeys": list(s.primary_keys),
        "options": dict(s.options),
    }
    if s.comment is not None:
        out["comment"] = s.comment
    out["timeMillis"] = s.time_millis
    return out


def schema_to_json(s: TableSchema) -> str:
    """The content of ``schema/schema-N`` as Java writes it (Jackson's pretty printer)."""
    return jackson_json(schema_to_dict(s))


def _json_text(value: Any) -> str:
    """Jackson's ``asText()``: options and keys are strings even when written as numbers."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    return json.dumps(value) if isinstance(value, dict | list) else str(value)


def schema_from_dict(data: Mapping[str, Any]) -> TableSchema:
    """A schema from its parsed JSON object, with Java's defaults for old versions.

    Raises:
        SchemaError: required keys are missing or malformed.
    """
    if (
        not isinstance(data, Mapping)
        or "id" not in data
        or not isinstance(data.get("fields"), list)
    ):
        raise SchemaError("Schema JSON needs at least 'id' and 'fields'")
    try:
        version = int(data.get("version", PAIMON_07_VERSION))
        ids = FieldIds()
        fields = tuple(data_field_from_json(f, ids) for f in data["fields"])
        options = {str(k): _json_text(v) for k, v in (data.get("options") or {}).items()}
        if version <= PAIMON_07_VERSION and BUCKET_OPTION not in options:
            options[BUCKET_OPTION] = "1"
        if version <= PAIMON_08_VERSION and "file.format" not in options:
            options["file.format"] = "orc"
        highest = data.get("highestFieldId")
        comment = data.get("comment")
        return TableSchema(
            schema_id=int(data["id"]),
            fields=fields,
            highest_field_id=highest_field_id(fields) if highest is None else int(highest),
            partition_keys=tuple(_json_text(k) for k in data.get("partitionKeys") or ()),
            primary_keys=tuple(_json_text(k) for k in data.get("primaryKeys") or ()),
            options=options,
            comment=None if comment is None else _json_text(comment),
            time_millis=int(data.get("timeMillis") or 0),
            version=version,
        )
    except (TypeError, ValueError, AttributeError) as e:
        raise SchemaError(f"Malformed schema JSON: {e}") from e


def schema_from_json(text: str | bytes) -> TableSchema:
    """Parse a ``schema-N`` file (Java, pypaimon or ours).

    Raises:
        SchemaError: the text is not a schema.
    """
    try:
        data = json.loads(text)
    except ValueError as e:
        raise SchemaError(f"not JSON: {e}") from e
    return schema_from_dict(data)


# ------------------------------------------------------------------------------ creation


FieldSpec = DataField | tuple[str, DataType] | tuple[str, DataType, str | None]


def _as_field(spec: FieldSpec) -> DataField:
    if isinstance(spec, DataField):
        return spec
    name, data_type, *rest = spec
    return DataField(-1, name, data_type, rest[0] if rest else None)


def _duplicates(names: Sequence[str]) -> list[str]:
    seen: set[str] = set()
    dups: set[str] = set()
    for n in names:
        (dups if n in seen else seen).add(n)
    return sorted(dups)


def _keys_from_option(
    keys: Sequence[str], options: dict[str, str], option: str, what: str
) -> tuple[str, ...]:
    if option in options:
        if keys:
            raise SchemaError(f"Cannot define {what} on DDL and table options at the same time.")
        return _split_keys(options.pop(option))
    return tuple(keys)


def new_table_schema(
    fields: Sequence[FieldSpec],
    partition_keys: Sequence[str] = (),
    primary_keys: Sequence[str] = (),
    options: Mapping[str, str] | None = None,
    comment: str | None = None,
    schema_id: int = 0,
) -> TableSchema:
    """A new table's schema as Java's ``Schema`` + ``TableSchema.create`` build it.

    Field ids are assigned from 0 (a column, then its nested fields), primary-key columns
    become NOT NULL, and ``primary-key``/``partition`` options turn into keys.

    Raises:
        SchemaError: duplicate or unknown columns, or an invalid bucket layout.
    """
    opts = {str(k): str(v) for k, v in (options or {}).items()}
    pks = _keys_from_option(primary_keys, opts, PRIMARY_KEY_OPTION, "primary key")
    parts = _keys_from_option(partition_keys, opts, PARTITION_OPTION, "partition")
    ids = FieldIds()
    new_fields: list[DataField] = []
    for spec in fields:
        f = _as_field(spec)
        field_id = ids.next()
        data_type = reassign_field_ids(f.type, ids)
        if f.name in pks:
            data_type = data_type.copy(False)
        new_fields.append(DataField(field_id, f.name, data_type, f.description, f.default_value))
    schema = TableSchema(
        schema_id=schema_id,
        fields=tuple(new_fields),
        highest_field_id=highest_field_id(new_fields),
        partition_keys=parts,
        primary_keys=pks,
        options=opts,
        comment=comment,
        time_millis=int(time.time() * 1000),
    )
    validate_schema(schema)
    return schema


def validate_schema(s: TableSchema) -> None:
    """Java's structural checks (``Schema.normalizeFields``, ``SchemaValidation``).

    Raises:
        SchemaError: the schema is one Java would reject.
        InvalidArgument: retention options Java rejects (``validate_retention_options``);
            an option naming a path that would leave its directory
            (``names.validate_path_options``: stricter than Java, which takes any).
    """
    validate_path_options(s.options)
    validate_retention_options(s.options)
    names = s.field_names
    if not names:
        raise SchemaError("Table must have at least one column")
    for what, keys in (
        ("Table column", names),
        ("Partition key constraint", s.partition_keys),
        ("Primary key constraint", s.primary_keys),
    ):
        dups = _duplicates(keys)
        if dups:
            raise SchemaError(
                f"{what} {list(keys)} must not contain duplicate columns. Found: {dups}"
            )
    missing = [k for k in s.partition_keys if k not in names]
    if missing:
        raise SchemaError(f"Table column {names} should include all partition fields {missing}")
    missing = [k for k in s.primary_keys if k not in names]
    if missing:
        raise SchemaError(
            f"Table column {names} should include all primary key constraint {missing}"
        )
    _check_key_types(s.fields, s.primary_keys, "primary key")
    _check_key_types(s.fields, s.partition_keys, "partition")
    _check_key_types(s.fields, _split_keys(s.options.get(BUCKET_KEY_OPTION)), "bucket key")
    if s.primary_keys and not s.trimmed_primary_keys:
        raise SchemaError(
            f"Primary key constraint {list(s.primary_keys)} should not be same with partition "
            f"fields {list(s.partition_keys)}, this will result in only one record in a partition"
        )
    try:
        bucket = s.num_buckets
    except ValueError:
        raise SchemaError(
            f"Option 'bucket' must be an integer: {s.options[BUCKET_OPTION]!r}"
        ) from None
    bucket_keys = _split_keys(s.options.get(BUCKET_KEY_OPTION))
    if bucket_keys:
        if bucket == -1:
            raise SchemaError(
                "Cannot define 'bucket-key' with bucket = -1, please remove the 'bucket-key' "
                "setting or specify a bucket number."
            )
        if any(k not in names for k in bucket_keys):
            raise SchemaError(
                f"Field names {names} should contains all bucket keys {list(bucket_keys)}."
            )
        if any(k in s.partition_keys for k in bucket_keys):
            raise SchemaError(
                f"Bucket keys {list(bucket_keys)} should not in partition keys {list(s.partition_keys)}."
            )
        if s.primary_keys and any(k not in s.primary_keys for k in bucket_keys):
            raise SchemaError(
                f"Primary keys {list(s.primary_keys)} should contains all bucket keys {list(bucket_keys)}."
            )
    if bucket == 0 or bucket < -2 or (bucket == -2 and not s.primary_keys):
        raise SchemaError("The number of buckets needs to be greater than 0.")
    if bucket > 0 and not s.primary_keys and not bucket_keys:
        raise SchemaError("You should define a 'bucket-key' for bucketed append mode.")
    if bucket > 0 and s.cross_partition_update:
        raise SchemaError(
            "You should use dynamic bucket (bucket = -1) mode in cross partition update case "
            f"(Primary key constraint {list(s.primary_keys)} not include all partition fields "
            f"{list(s.partition_keys)})."
        )
    _validate_row_tracking(s, bucket)
    rowkind = s.options.get("rowkind.field")
    if rowkind is not None and rowkind not in names:
        raise SchemaError(f"Rowkind field: '{rowkind}' can not be found in table schema.")
    if _is_true(s.options.get("data-evolution.enabled")):
        if not _is_true(s.options.get("row-tracking.enabled")):
            raise SchemaError("Data evolution config must enabled with row-tracking.enabled")
        if _is_true(s.options.get("clustering.incremental")):
            raise SchemaError("Data evolution config must disabled with clustering.incremental")
    validate_merge_options(s)
    validate_file_index(s.fields, s.options, names)


def _validate_row_tracking(s: TableSchema, bucket: int) -> None:
    """``SchemaValidation.validateRowTracking``: a row-tracking table has no primary key, one
    bucket mode (-1) and no column named as its row-tracking columns."""
    if (s.options.get("row-tracking.enabled") or "").strip().lower() != "true":
        return
    if s.primary_keys:
        raise SchemaError("Cannot define primary-key for row tracking table.")
    if bucket != -1:
        raise SchemaError(
            "Cannot define bucket for row tracking table, it only support bucket = -1"
        )
    for name in ("_ROW_ID", "_SEQUENCE_NUMBER"):
        if name in s.field_names:
            raise SchemaError(
                f"Row tracking field name '{name}' conflicts with existing field names."
            )


_KEY_UNSUPPORTED = {
    "MAP": "MapType",
    "ARRAY": "ArrayType",
    "ROW": "RowType",
    "MULTISET": "MultisetType",
    "VECTOR": "VectorType",
    "VARIANT": "VariantType",
}
"""Column types that cannot be keys: Java's ``PRIMARY_KEY_UNSUPPORTED_LOGICAL_TYPES``, and
VARIANT, which Java 2.x accepts in the schema but then fails to write (``Illegal type:
VARIANT`` from its generated key projection)."""


def _check_key_types(fields: Sequence[DataField], keys: Sequence[str], what: str) -> None:
    """Java's ``validateOnlyContainPrimitiveType`` of the ``what`` fields ``keys``."""
    by_name = {f.name: f for f in fields}
    for key in keys:
        f = by_name.get(key)
        if f is not None and f.type.root in _KEY_UNSUPPORTED:
            raise SchemaError(
                f"The type {_KEY_UNSUPPORTED[f.type.root]} in {what} field {key} is unsupported"
            )


def _is_true(value: str | None) -> bool:
    return (value or "").strip().lower() == "true"


def validate_retention_options(options: Mapping[str, str]) -> None:
    """``SchemaValidation.validateTableSchema``'s expiry checks, with Paimon's messages: a
    table whose expiry can never run (every commit would fail to expire) is never created.

    Raises:
        InvalidArgument: a minimum below 1 or above its maximum, or a value that is not a
            number, for snapshots and changelogs.
    """
    core = CoreOptions(options)
    for kind, low, high in (
        ("snapshot", core.snapshot_num_retained_min, core.snapshot_num_retained_max),
        ("changelog", core.changelog_num_retained_min, core.changelog_num_retained_max),
    ):
        if low <= 0:
            raise InvalidArgument(f"{kind}.num-retained.min should be at least 1")
        if low > high:
            raise InvalidArgument(
                f"{kind}.num-retained.min should not be larger than {kind}.num-retained.max"
            )


def schema_from_arrow(
    pa_schema: pa.Schema,
    partition_keys: Sequence[str] = (),
    primary_keys: Sequence[str] = (),
    options: Mapping[str, str] | None = None,
    comment: str | None = None,
) -> TableSchema:
    """A new table's schema from an Arrow schema (field nullability kept, ids from 0).

    Raises:
        SchemaError: an Arrow type has no Paimon equivalent, or the keys are invalid.
    """
    fields = []
    for f in pa_schema:
        description = None
        if f.metadata and b"description" in f.metadata:
            description = f.metadata[b"description"].decode()
        fields.append(DataField(-1, f.name, from_arrow_type(f.type, f.nullable), description))
    return new_table_schema(fields, partition_keys, primary_keys, options, comment)


# ------------------------------------------------------------------------- schema changes


@dataclass(frozen=True, slots=True)
class SetOption:
    key: str
    value: str


@dataclass(frozen=True, slots=True)
class RemoveOption:
    key: str


@dataclass(frozen=True, slots=True)
class UpdateComment:
    comment: str | None


FieldPath = str | tuple[str, ...]
"""A column, or a nested field as Paimon's ``fieldNames``: ``("s", "x")`` is field ``x`` of the
ROW column ``s``; ``element`` and ``value`` step into an array's element and a map's value."""


@dataclass(frozen=True, slots=True)
class AddColumn:
    """A new nullable column (or nested field): last, first, or right after ``after``."""

    name: FieldPath
    type: DataType
    description: str | None = None
    first: bool = False
    after: str | None = None


@dataclass(frozen=True, slots=True)
class RenameColumn:
    name: FieldPath
    new_name: str


@dataclass(frozen=True, slots=True)
class DropColumn:
    name: FieldPath


@dataclass(frozen=True, slots=True)
class UpdateColumnComment:
    name: FieldPath
    comment: str | None


@dataclass(frozen=True, slots=True)
class UpdateColumnDefaultValue:
    """``ALTER COLUMN c SET DEFAULT v`` (the default's SQL text, as the engine gave it) or
    ``DROP DEFAULT`` (None): Java's ``SchemaChange.updateColumnDefaultValue``, checked with
    ``validateDefaultValue``."""

    name: FieldPath
    default_value: str | None


@dataclass(frozen=True, slots=True)
class UpdateColumnType:
    """``ALTER COLUMN c TYPE t``: allowed when ``type_casts.supports_cast`` says so (explicit
    casts unless ``disable-explicit-type-casting``); old files are cast when read."""

    name: FieldPath
    new_type: DataType
    keep_nullability: bool = False


@dataclass(frozen=True, slots=True)
class UpdateColumnNullability:
    """``ALTER COLUMN c DROP NOT NULL`` (``nullable``) or ``SET NOT NULL`` (only with
    ``alter-column-null-to-not-null.disabled`` = false, as in Paimon)."""

    name: FieldPath
    nullable: bool


@dataclass(frozen=True, slots=True)
class UpdateColumnPosition:
    """``ALTER COLUMN c FIRST | AFTER x`` (Paimon's ``Move``, also BEFORE and LAST)."""

    name: str
    first: bool = False
    after: str | None = None
    before: str | None = None
    last: bool = False


SchemaChange = (
    SetOption
    | RemoveOption
    | UpdateComment
    | AddColumn
    | RenameColumn
    | DropColumn
    | UpdateColumnComment
    | UpdateColumnDefaultValue
    | UpdateColumnType
    | UpdateColumnNullability
    | UpdateColumnPosition
)
NULL_TO_NOT_NULL_DISABLED = "alter-column-null-to-not-null.disabled"
EXPLICIT_CASTS_DISABLED = "disable-explicit-type-casting"


def _path(name: FieldPath) -> tuple[str, ...]:
    return (name,) if isinstance(name, str) else tuple(name)


def _row_fields(t: DataType, out: list[DataField]) -> int:
    """Java's ``extractRowDataFields``: the ROW fields under ``t`` (through array elements
    and map values) into ``out``; how many path names that step consumes."""
    if t.root == "ROW":
        out.extend(t.fields or ())
        return 1
    if t.root == "ARRAY":
        return _row_fields(t.element, out) + 1  # type: ignore[arg-type]
    if t.root == "MAP":
        return _row_fields(t.value, out) + 1  # type: ignore[arg-type]
    return 1


def _wrap_row(t: DataType, fields: list[DataField]) -> DataType:
    if t.root == "ROW":
        return replace(t, fields=tuple(fields))
    if t.root == "ARRAY":
        return replace(t, element=_wrap_row(t.element, fields))  # type: ignore[arg-type]
    if t.root == "MAP":
        return replace(t, value=_wrap_row(t.value, fields))  # type: ignore[arg-type]
    return t


def _modify_nested(
    fields: list[DataField],
    path: tuple[str, ...],
    update_last: Callable[[int, list[DataField], str], None],
) -> None:
    """Java's ``NestedColumnModifier``: walk ``path`` into ROW fields (through arrays and
    maps) and let ``update_last`` change the list that holds the last name in place."""

    def visit(current: list[DataField], previous: list[DataField], depth: int, prev: int) -> None:
        if depth == len(path) - 1:
            update_last(depth, current, path[depth])
            return
        if depth >= len(path):  # ``[a, element]``: a change of an array's element type
            update_last(prev, previous, path[prev])
            return
        for i, f in enumerate(current):
            if f.name != path[depth]:
                continue
            nested: list[DataField] = []
            deeper = depth + _row_fields(f.type, nested)
            visit(nested, current, deeper, depth)
            f = current[i]
            current[i] = replace(f, type=_wrap_row(f.type, nested))
            return
        raise SchemaError(f"Column '{'.'.join(path[: depth + 1])}' does not exist")

    visit(fields, fields, 0, 0)


def _update_field(
    fields: list[DataField], path: tuple[str, ...], update: Callable[[DataField, int], DataField]
) -> None:
    def last(depth: int, current: list[DataField], name: str) -> None:
        for i, f in enumerate(current):
            if f.name == name:
                current[i] = update(f, depth)
                return
        raise SchemaError(f"Column '{'.'.join(path)}' does not exist")

    _modify_nested(fields, path, last)


def _root_type(t: DataType, depth: int, size: int) -> DataType:
    """The type a path of ``size`` names ends at, from the field found at ``depth``."""
    if depth == size - 1:
        return t
    if t.root == "ARRAY":
        return _root_type(t.element, depth + 1, size)  # type: ignore[arg-type]
    if t.root == "MAP":
        return _root_type(t.value, depth + 1, size)  # type: ignore[arg-type]
    return t


def _with_root_type(t: DataType, target: DataType, depth: int, size: int) -> DataType:
    if depth == size - 1:
        return target
    if t.root == "ARRAY":
        return replace(t, element=_with_root_type(t.element, target, depth + 1, size))  # type: ignore[arg-type]
    if t.root == "MAP":
        return replace(t, value=_with_root_type(t.value, target, depth + 1, size))  # type: ignore[arg-type]
    return target


def _check_nullability(old: bool, new: bool, name: str, null_to_not_null_disabled: bool) -> None:
    if null_to_not_null_disabled and old and not new:
        raise SchemaError(
            f"Cannot update column type from nullable to non nullable for {name}. You can set "
            f"table configuration option '{NULL_TO_NOT_NULL_DISABLED}' = 'false' to allow "
            "converting null columns to not null"
        )


def _move(fields: list[DataField], move: UpdateColumnPosition) -> None:
    """Java's ``applyMove``."""
    index = {f.name: i for i, f in enumerate(fields)}
    at = index.get(move.name, -1)
    if at == -1:
        raise SchemaError(f"Field name not found: {move.name}")

    def refuse_self(ref: int) -> None:
        if ref == at:
            raise SchemaError(f"Cannot move itself for column {move.name}")

    if move.first or move.last:
        target = 0 if move.first else len(fields) - 1
        refuse_self(target)
    else:
        reference = move.after if move.after is not None else move.before
        ref = index.get(reference or "", -1)
        if ref == -1:
            raise SchemaError(f"Reference field name not found: {reference}")
        refuse_self(ref)
        target = ref
        if move.after is not None and at > ref:
            target += 1
        if move.before is not None and at < ref:
            target -= 1
        target = min(target, len(fields) - 1)
    fields.insert(target, fields.pop(at))


def _index_of(fields: list[DataField], name: str) -> int:
    for i, f in enumerate(fields):
        if f.name == name:
            return i
    raise SchemaError(f"Column '{name}' does not exist")


def _check_option_change(options: Mapping[str, str], key: str, value: str | None) -> None:
    """Java's ``checkAlterTableOption``/``checkResetTableOption`` (table has snapshots)."""
    if key in IMMUTABLE_OPTIONS:
        raise SchemaError(f"Change '{key}' is not supported yet.")
    if (
        key == "ignore-delete"
        and (options.get(key) or "false").strip().lower() == "true"
        and (value or "false").strip().lower() != "true"
    ):
        # Deletes dropped so far cannot come back: merges would differ from what was read.
        raise SchemaError("Cannot change ignore-delete from true to false.")
    if key == BUCKET_OPTION:
        if value is None:
            raise SchemaError("Cannot reset bucket.")
        if int(options.get(BUCKET_OPTION, "-1")) == -1:
            raise SchemaError("Cannot change bucket when it is -1.")
        if int(value) == -1:
            raise SchemaError("Cannot change bucket to -1.")


def check_dynamic_option(options: Mapping[str, str], key: str, value: str) -> None:
    """Java's ``checkImmutability`` of ``table.copy``: a dynamic option may not change what
    ALTER TABLE could not (``primary-key``, ``merge-engine``, ``bucket`` of -1, ...).

    Also refuses a value naming a path that would leave its directory
    (``names.check_path_option``: ``branch``, ``consumer-id``, ...), which Java takes.

    Raises:
        SchemaError: the option is fixed for the table's life.
        ValueError: a ``bucket`` value that is not a number.
        InvalidArgument, InvalidBranchName, InvalidTagName: an unsafe path name.
    """
    check_path_option(key, value)
    if options.get(key) != value:
        _check_option_change(options, key, value)


def apply_changes(
    old: TableSchema, changes: Iterable[SchemaChange], has_snapshots: bool = False
) -> TableSchema:
    """The next schema (id + 1) after ``changes``, as Java's ``generateTableSchema``.

    Raises:
        SchemaError: a change Java would refuse (unknown column, key column, option lock).
    """
    options = dict(old.options)
    fields = list(old.fields)
    comment = old.comment
    primary_keys = list(old.primary_keys)
    ids = FieldIds(old.highest_field_id)
    renames: dict[str, str] = {}
    for change in changes:
        if isinstance(change, SetOption):
            if has_snapshots and options.get(change.key) != change.value:
                _check_option_change(old.options, change.key, change.value)
            options[change.key] = str(change.value)
        elif isinstance(change, RemoveOption):
            if has_snapshots:
                _check_option_change(old.options, change.key, None)
            options.pop(change.key, None)
        elif isinstance(change, UpdateComment):
            comment = change.comment
        elif isinstance(change, AddColumn):
            _add_column(fields, change, ids, options, old.partition_keys)
        elif isinstance(change, RenameColumn):
            path = _path(change.name)
            if len(path) == 1 and path[0] in old.partition_keys:
                raise SchemaError(f"Cannot rename partition column: [{path[0]}]")
            _rename(fields, path, change.new_name)
            if len(path) == 1:
                renames[path[0]] = change.new_name
                primary_keys = [renames.get(k, k) for k in primary_keys]
        elif isinstance(change, DropColumn):
            _drop(fields, _path(change.name), old)
        elif isinstance(change, UpdateColumnComment):
            comment_of = change.comment
            _update_field(
                fields,
                _path(change.name),
                lambda f, _depth, c=comment_of: replace(f, description=c),
            )
        elif isinstance(change, UpdateColumnDefaultValue):
            _update_field(fields, _path(change.name), _with_default(change.default_value))
        elif isinstance(change, UpdateColumnType):
            _update_type(fields, change, old)
        elif isinstance(change, UpdateColumnNullability):
            _update_nullability(fields, change, old)
        elif isinstance(change, UpdateColumnPosition):
            _move(fields, change)
        else:
            raise SchemaError(f"Unsupported schema change: {change!r}")
    for option in (BUCKET_KEY_OPTION, "sequence.field"):
        columns = _split_keys(options.get(option))
        if renames and columns:
            options[option] = ",".join(renames.get(k, k) for k in columns)
    new = TableSchema(
        schema_id=old.schema_id + 1,
        fields=tuple(fields),
        highest_field_id=ids.value,
        partition_keys=old.partition_keys,
        primary_keys=tuple(primary_keys),
        options=options,
        comment=comment,
        time_millis=int(time.time() * 1000),
    )
    validate_schema(new)
    return new


def _with_default(value: str | None) -> Callable[[DataField, int], DataField]:
    def update(f: DataField, _depth: int) -> DataField:
        if value is not None:
            default_scalar(f.type, value)  # Java's validateDefaultValue
        return replace(f, default_value=value)

    return update


def _add_column(
    fields: list[DataField],
    change: AddColumn,
    ids: FieldIds,
    options: Mapping[str, str],
    partition_keys: Sequence[str],
) -> None:
    path = _path(change.name)
    if not change.type.nullable:
        raise SchemaError(f"Column {'.'.join(path)} cannot specify NOT NULL in the table.")
    field_id = ids.next()
    new_type = reassign_field_ids(change.type, ids)

    def last(_depth: int, current: list[DataField], name: str) -> None:
        if any(f.name == name for f in current):
            raise SchemaError(f"Column '{'.'.join(path)}' already exists")
        added = DataField(field_id, name, new_type, change.description)
        if change.first:
            current.insert(0, added)
        elif change.after is not None:
            current.insert(_index_of(current, change.after) + 1, added)
        elif (
            options.get("add-column-before-partition") == "true"
            and partition_keys
            and len(path) == 1
        ):
            first_partition = next(
                (i for i, f in enumerate(current) if f.name in partition_keys), len(current)
            )
            current.insert(first_partition, added)
        else:
            current.append(added)

    _modify_nested(fields, path, last)


def _rename(fields: list[DataField], path: tuple[str, ...], new_name: str) -> None:
    def last(_depth: int, current: list[DataField], name: str) -> None:
        i = _index_of(current, name)
        if any(f.name == new_name for f in current):
            raise SchemaError(f"Column '{new_name}' already exists")
        current[i] = replace(current[i], name=new_name)

    _modify_nested(fields, path, last)


def _drop(fields: list[DataField], path: tuple[str, ...], old: TableSchema) -> None:
    if len(path) == 1 and (path[0] in old.partition_keys or path[0] in old.primary_keys):
        raise SchemaError(f"Cannot drop partition key or primary key: [{path[0]}]")

    def last(_depth: int, current: list[DataField], name: str) -> None:
        del current[_index_of(current, name)]
        if not current:
            raise SchemaError("Cannot drop all fields in table")

    _modify_nested(fields, path, last)


def _update_type(fields: list[DataField], change: UpdateColumnType, old: TableSchema) -> None:
    path = _path(change.name)
    shown = ".".join(path)
    if len(path) == 1 and path[0] in old.partition_keys:
        raise SchemaError(f"Cannot update partition column: [{shown}]")
    if len(path) == 1 and path[0] in old.primary_keys:
        raise SchemaError("Cannot update primary key")
    explicit = old.options.get(EXPLICIT_CASTS_DISABLED, "false").lower() != "true"
    strict = old.options.get(NULL_TO_NOT_NULL_DISABLED, "true").lower() != "false"

    def update(f: DataField, depth: int) -> DataField:
        source = _root_type(f.type, depth, len(path))
        target = change.new_type
        if change.keep_nullability:
            target = target.copy(source.nullable)
        else:
            _check_nullability(source.nullable, target.nullable, shown, strict)
        if not supports_cast(source, target, explicit):
            raise SchemaError(
                f"Column type {f.name}[{source}] cannot be converted to {target} without "
                "losing information."
            )
        return replace(f, type=_with_root_type(f.type, target, depth, len(path)))

    _update_field(fields, path, update)


def _update_nullability(
    fields: list[DataField], change: UpdateColumnNullability, old: TableSchema
) -> None:
    path = _path(change.name)
    if change.nullable and len(path) == 1 and path[0] in old.primary_keys:
        raise SchemaError("Cannot change nullability of primary key")
    strict = old.options.get(NULL_TO_NOT_NULL_DISABLED, "true").lower() != "false"

    def update(f: DataField, depth: int) -> DataField:
        source = _root_type(f.type, depth, len(path))
        _check_nullability(source.nullable, change.nullable, ".".join(path), strict)
        target = source.copy(change.nullable)
        return replace(f, type=_with_root_type(f.type, target, depth, len(path)))

    _update_field(fields, path, update)


# -------------------------------------------------------------------------------- manager


class _ParsedSchemas:
    """Process-wide: the schemas parsed from ``schema-N`` files, by path, with the file's
    ``FileIO.version`` and bytes when read.

    Every table handle of a user's script opens the latest schema anew; parsing its JSON costs
    more than checking that the file is still the one parsed. A hit needs the same version
    token (inode, nanosecond mtime and size on a local disk) or, where the file system has
    none, the same bytes: a schema file deleted and published again under its id (a rollback
    elsewhere) is then parsed again, never served stale. Hits are the same object, so caches
    keyed by a schema (the writer's Arrow schema, ...) carry over between handles.
    """

    MAX = 256

    def __init__(self) -> None:
        self._entries: OrderedDict[str, tuple[object | None, bytes, TableSchema]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, path: str) -> tuple[object | None, bytes, TableSchema] | None:
        with self._lock:
            return self._entries.get(path)

    def put(self, path: str, version: object | None, data: bytes, schema: TableSchema) -> None:
        with self._lock:
            self._entries[path] = (version, data, schema)
            self._entries.move_to_end(path)
            while len(self._entries) > self.MAX:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


PARSED_SCHEMAS = _ParsedSchemas()


class SchemaManager:
    """Lists, reads and publishes the ``schema/schema-N`` files of one table or branch
    (``branch/branch-<name>/schema``)."""

    _cache_lock = threading.Lock()

    def __init__(self, file_io: FileIO, table_path: str, branch: str | None = None) -> None:
        self.file_io = file_io
        self.table_path = table_path.rstrip("/")
        self.branch = None if is_main_branch(branch) else branch
        self.root = branch_path(self.table_path, branch)
        self.schema_dir = f"{self.root}/{SCHEMA_DIR}"
        self._cache: dict[int, TableSchema] = {}

    def schema_path(self, schema_id: int) -> str:
        return f"{self.schema_dir}/{SCHEMA_PREFIX}{schema_id}"

    def list_ids(self) -> list[int]:
        """Ids of the published schema files, ascending (other names are ignored)."""
        ids = []
        for name in self.file_io.list_names(self.schema_dir):
            suffix = name[len(SCHEMA_PREFIX) :]
            if name.startswith(SCHEMA_PREFIX) and suffix.isdigit() and suffix.isascii():
                ids.append(int(suffix))
        return sorted(ids)

    def latest(self) -> TableSchema | None:
        """The schema with the highest id, None when the table has none."""
        ids = self.list_ids()
        return self.schema(ids[-1]) if ids else None

    def schema(self, schema_id: int) -> TableSchema:
        """Schema ``schema_id`` (cached: a published schema file never changes).

        Raises:
            SchemaError: it does not exist or cannot be parsed (the message names the file).
        """
        cached = self._cache.get(schema_id)
        if cached is not None:
            return cached
        path = self.schema_path(schema_id)
        parsed = PARSED_SCHEMAS.get(path)
        try:
            # Versioned before reading: a file replaced in between is then only read again.
            version = self.file_io.version(path)
            if parsed is not None and version is not None and parsed[0] == version:
                schema = parsed[2]
            else:
                text = self.file_io.read_bytes(path)
                if parsed is not None and parsed[1] == text:
                    schema = parsed[2]
                else:
                    schema = schema_from_json(text)
                PARSED_SCHEMAS.put(path, version, text, schema)
        except FileNotFoundError:
            raise SchemaError(f"Schema {schema_id} does not exist in {self.schema_dir}") from None
        except (SchemaError, RecursionError) as e:
            raise SchemaError(f"Schema file {path} is corrupt: {e}") from None
        with self._cache_lock:
            self._cache[schema_id] = schema
        return schema

    def schema_exists(self, schema_id: int) -> bool:
        return schema_id in self._cache or self.file_io.exists(self.schema_path(schema_id))

    def list_all(self) -> list[TableSchema]:
        return [self.schema(i) for i in self.list_ids()]

    def commit(self, schema: TableSchema) -> bool:
        """Publish ``schema-<id>`` unless it exists (False then): the atomic step of DDL.

        Raises:
            SchemaError, InvalidArgument: a schema Paimon's ``SchemaManager.commit`` refuses.
            UnsupportedFeature: a table feature this implementation cannot write (row
                tracking, BLOB columns, ...: ``features.check_supported``); nothing published.
        """
        validate_schema(schema)
        self._validate_fallback_branch(schema)
        access = Access.CREATE if schema.schema_id == 0 else Access.ALTER
        check_supported(schema, schema.options, access, table_name(self.table_path))
        published = self.file_io.write_no_clobber(
            self.schema_path(schema.schema_id), schema_to_json(schema).encode("utf-8")
        )
        if published:
            with self._cache_lock:
                self._cache[schema.schema_id] = schema
        return published

    def _validate_fallback_branch(self, schema: TableSchema) -> None:
        """``SchemaValidation.validateFallbackBranch``: one of ``scan.fallback-branch`` and
        ``scan.primary-branch`` at most, naming a branch that exists."""
        keys = ("scan.fallback-branch", "scan.primary-branch")
        named = {k: v for k in keys if (v := schema.options.get(k)) is not None and v.strip()}
        if len(named) == 2:
            raise InvalidArgument(f"Cannot set both '{keys[0]}' and '{keys[1]}' at the same time.")
        for key, branch in named.items():
            if SchemaManager(self.file_io, self.table_path, branch).latest() is None:
                raise InvalidArgument(
                    f"Cannot set '{key}' = '{branch}' because the branch '{branch}' does not exist."
                )

    def _has_snapshots(self) -> bool:
        return any(
            n.startswith("snapshot-") for n in self.file_io.list_names(f"{self.root}/snapshot")
        )

    def commit_changes(self, *changes: SchemaChange | Iterable[SchemaChange]) -> TableSchema:
        """Apply ``changes`` to the latest schema and publish it as the next id.

        Retries on the latest schema when another writer published that id first.

        Raises:
            TableNotExist: the table has no schema.
            SchemaError: a change is invalid.
        """
        flat: list[SchemaChange] = []
        for c in changes:
            if isinstance(c, Iterable) and not isinstance(c, str | bytes):
                flat.extend(c)
            else:
                flat.append(c)  # type: ignore[arg-type]
        has_snapshots: bool | None = None
        while True:
            old = self.latest()
            if old is None:
                raise TableNotExist(f"Table {self.table_path} does not exist")
            if has_snapshots is None:
                has_snapshots = self._has_snapshots()
            new = apply_changes(old, flat, has_snapshots)
            if self.commit(new):
                return new

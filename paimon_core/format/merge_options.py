"""The merge-engine options of a primary-key table, parsed and validated as Paimon does.

What a table's options say about merging the records of one key: the engine
(``merge-engine``), the ordering (``sequence.field``, ``sequence.field.sort-order``),
``ignore-delete`` (and its ``first-row.``/``deduplicate.``/``partial-update.`` fallback keys),
partial-update's ``fields.<f1,f2>.sequence-group`` and ``remove-record-on-*`` options, and the
per-field aggregate functions (``fields.<f>.aggregate-function``,
``fields.default-aggregate-function``, ``fields.<f>.ignore-retract``, ``.list-agg-delimiter``,
``.distinct``, ``.nested-key``, ``.nested-key-null-strategy``, ``.nested-sequence-field``,
``.count-limit``, ``.ts-field``).

It lives in ``format`` because table creation (``schema.validate_schema``) refuses what Paimon
refuses, with Paimon's messages (``SchemaValidation``, and the checks the Java merge-function
factories make, which would otherwise fail every later read and write of the table); the merge
functions themselves (``operations/merge``) are built from a ``MergeOptions``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from paimon_core.exceptions import SchemaError

if TYPE_CHECKING:
    from paimon_core.format.types import DataType


class TableSchema(Protocol):
    """What merge options read of a ``schema.TableSchema`` (which imports this module)."""

    @property
    def options(self) -> Mapping[str, str]: ...

    @property
    def field_names(self) -> Sequence[str]: ...

    @property
    def primary_keys(self) -> Sequence[str]: ...

    @property
    def partition_keys(self) -> Sequence[str]: ...


FIELDS_PREFIX = "fields"
SEQUENCE_GROUP = "sequence-group"
AGG_FUNCTION = "aggregate-function"
DEFAULT_AGG_FUNCTION = "default-aggregate-function"
ENGINES = ("deduplicate", "partial-update", "aggregation", "first-row")
CHANGELOG_PRODUCERS = ("none", "input", "full-compaction", "lookup")

# Every aggregate function Paimon documents (0.9 and later), with Java's legacy alias.
AGGREGATE_FUNCTIONS = frozenset(
    {
        "sum",
        "product",
        "max",
        "min",
        "last_value",
        "last_non_null_value",
        "first_value",
        "first_non_null_value",
        "first_not_null_value",
        "listagg",
        "bool_and",
        "bool_or",
        "collect",
        "merge_map",
        "nested_update",
        "theta_sketch",
        "hll_sketch",
        "rbm32",
        "rbm64",
        "merge_map_with_keytime",
        "nested_partial_update",
    }
)


@dataclass(frozen=True, slots=True)
class SequenceGroup:
    """``fields.<sequence_fields>.sequence-group = <fields>``: the fields updated only by a
    record whose sequence fields are not all null and not older than the row's."""

    sequence_fields: tuple[str, ...]
    fields: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FieldAggregation:
    """How one field aggregates: ``function`` None means the engine's default."""

    function: str | None
    ignore_retract: bool = False
    delimiter: str = ","
    distinct: bool = False
    nested_key: tuple[str, ...] = ()
    nested_key_null_strategy: str | None = None
    nested_sequence_field: tuple[str, ...] = ()
    count_limit: str | None = None  # parsed by the aggregator, with Paimon's message
    ts_field: str | None = None


def _bool(options: Mapping[str, str], key: str, default: bool = False) -> bool:
    value = options.get(key)
    if value is None:
        return default
    text = value.strip().lower()
    if text not in ("true", "false"):
        raise SchemaError(f"Could not parse value '{value}' for key '{key}' as a boolean")
    return text == "true"


def _split(value: str | None) -> tuple[str, ...]:
    if value is None or not value.strip():
        return ()
    return tuple(v.strip() for v in value.split(","))


@dataclass(frozen=True, slots=True)
class MergeOptions:
    """The merge semantics of a table, read from its options (see the module docstring)."""

    engine: str
    ignore_delete: bool
    sequence_fields: tuple[str, ...]
    sequence_ascending: bool
    sequence_groups: tuple[SequenceGroup, ...]
    partial_remove_record_on_delete: bool
    partial_remove_record_on_sequence_group: tuple[str, ...]
    aggregation_remove_record_on_delete: bool
    default_function: str | None
    fields: Mapping[str, FieldAggregation]
    primary_keys: tuple[str, ...]

    @classmethod
    def of(
        cls, options: Mapping[str, str], field_names: Sequence[str], primary_keys: Sequence[str]
    ) -> MergeOptions:
        """Parse ``options``; nothing is validated here (``validate_merge_options`` does)."""
        engine = (options.get("merge-engine") or "deduplicate").strip().lower()
        ignore_delete = False
        for key in (
            "ignore-delete",
            "first-row.ignore-delete",
            "deduplicate.ignore-delete",
            "partial-update.ignore-delete",
        ):
            if key in options:
                ignore_delete = _bool(options, key)
                break
        order = (options.get("sequence.field.sort-order") or "ascending").strip().lower()
        groups = []
        prefix = FIELDS_PREFIX + "."
        suffix = "." + SEQUENCE_GROUP
        for key, value in options.items():
            if key.startswith(prefix) and key.endswith(suffix):
                sequence = _split(key[len(prefix) : len(key) - len(suffix)])
                groups.append(SequenceGroup(sequence, _split(value)))
        default = options.get(f"{FIELDS_PREFIX}.{DEFAULT_AGG_FUNCTION}")
        fields = {}
        for name in field_names:
            base = f"{FIELDS_PREFIX}.{name}."
            fields[name] = FieldAggregation(
                function=options.get(base + AGG_FUNCTION),
                ignore_retract=_bool(options, base + "ignore-retract"),
                delimiter=options.get(base + "list-agg-delimiter", ","),
                distinct=_bool(options, base + "distinct"),
                nested_key=_split(options.get(base + "nested-key")),
                nested_key_null_strategy=options.get(base + "nested-key-null-strategy"),
                nested_sequence_field=_split(options.get(base + "nested-sequence-field")),
                count_limit=options.get(base + "count-limit"),
                ts_field=options.get(base + "ts-field"),
            )
        return cls(
            engine=engine,
            ignore_delete=ignore_delete,
            sequence_fields=_split(options.get("sequence.field")),
            sequence_ascending=order != "descending",
            sequence_groups=tuple(groups),
            partial_remove_record_on_delete=_bool(
                options, "partial-update.remove-record-on-delete"
            ),
            partial_remove_record_on_sequence_group=_split(
                options.get("partial-update.remove-record-on-sequence-group")
            ),
            aggregation_remove_record_on_delete=_bool(
                options, "aggregation.remove-record-on-delete"
            ),
            default_function=default,
            fields=fields,
            primary_keys=tuple(primary_keys),
        )

    @classmethod
    def of_schema(cls, schema: TableSchema) -> MergeOptions:
        return cls.of(schema.options, schema.field_names, schema.primary_keys)

    def aggregate_function(self, field: str) -> str | None:
        """The function configured for ``field``: its own, else the table default, else None
        (a primary-key field with one aggregates as ``primary-key``: Java's
        ``FieldPrimaryKeyAgg``)."""
        own = self.fields[field].function
        return own if own is not None else self.default_function

    @property
    def sequence_group_of(self) -> dict[str, SequenceGroup]:
        """Field -> its group, the group's own sequence fields included (Java adds "self")."""
        out: dict[str, SequenceGroup] = {}
        for group in self.sequence_groups:
            for f in group.fields:
                out[f] = group
            for f in group.sequence_fields:
                out[f] = group
        return out


def validate_merge_options(schema: TableSchema) -> None:
    """Refuse what Paimon refuses about merging, with its messages: ``SchemaValidation``
    (fields prefix, sequence field, sequence groups, first-row's changelog producer, deletion
    vectors' changelog producers: their compaction looks keys up) and the
    merge-function factories' checks, which make every read and write of such a table fail.

    Raises:
        SchemaError: the options contradict each other or the columns.
    """
    options = schema.options
    names = list(schema.field_names)
    for key in options:
        if key.startswith(FIELDS_PREFIX + "."):
            for field in key.split(".")[1].split(","):
                if field != DEFAULT_AGG_FUNCTION and field not in names:
                    raise SchemaError(f"Field {field} can not be found in table schema.")
    engine = (options.get("merge-engine") or "deduplicate").strip().lower()
    if engine not in ENGINES:
        raise SchemaError(
            f"Could not parse value '{options.get('merge-engine')}' for key 'merge-engine' "
            f"(one of {list(ENGINES)})"
        )
    merge = MergeOptions.of_schema(schema)
    order = (options.get("sequence.field.sort-order") or "ascending").strip().lower()
    if order not in ("ascending", "descending"):
        raise SchemaError(
            f"Could not parse value '{options['sequence.field.sort-order']}' for key "
            "'sequence.field.sort-order' (one of ['ascending', 'descending'])"
        )
    _validate_sequence_field(schema, merge)
    _validate_sequence_groups(merge, names)
    changelog = (options.get("changelog-producer") or "none").strip().lower()
    if changelog not in CHANGELOG_PRODUCERS:
        raise SchemaError(
            f"Could not parse value '{options.get('changelog-producer')}' for key "
            f"'changelog-producer' (one of {list(CHANGELOG_PRODUCERS)})"
        )
    if changelog != "none" and not schema.primary_keys:
        raise SchemaError(
            "Can not set changelog-producer on table without primary keys, please define "
            "primary keys."
        )
    if engine == "first-row" and changelog not in ("none", "lookup"):
        raise SchemaError(
            "Only support 'none' and 'lookup' changelog-producer on FIRST_MERGE merge engine"
        )
    if _bool(options, "deletion-vectors.enabled") and changelog == "full-compaction":
        raise SchemaError(
            "Deletion vectors mode is only supported for NONE/INPUT/LOOKUP changelog producer now."
        )
    if _bool(options, "deletion-vectors.merge-on-read") and not _bool(
        options, "deletion-vectors.enabled"
    ):
        raise SchemaError(
            "deletion-vectors.merge-on-read requires deletion-vectors.enabled to be true."
        )
    if engine == "first-row" and _bool(options, "deletion-vectors.enabled"):
        raise SchemaError(
            "First row merge engine does not need deletion vectors because there is no "
            "deletion of old data in this merge engine."
        )
    if not schema.primary_keys:
        return
    for name in names:
        function = merge.aggregate_function(name)
        if engine not in ("aggregation", "partial-update") or name in schema.primary_keys:
            continue
        if function is not None and function not in AGGREGATE_FUNCTIONS:
            raise SchemaError(
                f"Use unsupported aggregation: {function} or spell aggregate function incorrectly!"
            )
    if engine == "partial-update":
        _validate_partial_update(merge)


def _validate_sequence_field(schema: TableSchema, merge: MergeOptions) -> None:
    fields = merge.sequence_fields
    if not fields:
        return
    names = set(schema.field_names)
    for field in fields:
        if field not in names:
            raise SchemaError(f"Sequence field: '{field}' can not be found in table schema.")
        if merge.fields[field].function is not None:
            raise SchemaError(f"Should not define aggregation on sequence field: '{field}'.")
        if fields.count(field) > 1:
            raise SchemaError(f"Sequence field '{field}' is defined repeatedly.")
    if merge.engine == "first-row":
        raise SchemaError("Do not support use sequence field on FIRST_MERGE merge engine.")
    if schema.primary_keys and not set(schema.partition_keys) <= set(schema.primary_keys):
        raise SchemaError(
            "You can not use sequence.field in cross partition update case (Primary key "
            f"constraint '{list(schema.primary_keys)}' not include all partition fields "
            f"'{list(schema.partition_keys)}')."
        )


def _validate_sequence_groups(merge: MergeOptions, names: list[str]) -> None:
    grouped: dict[str, list[str]] = {}
    for group in merge.sequence_groups:
        for field in group.fields:
            if field not in names:
                raise SchemaError(f"Field {field} can not be found in table schema.")
            for sequence in group.sequence_fields:
                if sequence not in names:
                    raise SchemaError(
                        f"The sequence field group: {sequence} can not be found in table schema."
                    )
            if field in grouped:
                groups = [sorted(grouped[field]), list(group.sequence_fields)]
                raise SchemaError(
                    f"Field {field} is defined repeatedly by multiple groups: {groups}."
                )
            grouped[field] = list(group.sequence_fields)
    illegal = sorted(
        {s for seqs in grouped.values() for s in seqs if merge.fields[s].function is not None}
    )
    if illegal:
        raise SchemaError(f"Should not defined aggregation function on sequence group: {illegal}")


def _validate_partial_update(merge: MergeOptions) -> None:
    """``PartialUpdateMergeFunction.Factory``'s checks."""
    has_aggregators = any(merge.aggregate_function(f) is not None for f in merge.fields)
    if has_aggregators and not merge.sequence_groups:
        raise SchemaError("Must use sequence group for aggregation functions.")
    if merge.partial_remove_record_on_delete and merge.ignore_delete:
        raise SchemaError(
            "ignore-delete and partial-update.remove-record-on-delete have conflicting "
            "behavior so should not be enabled at the same time."
        )
    if merge.partial_remove_record_on_delete and merge.sequence_groups:
        raise SchemaError(
            "sequence group and partial-update.remove-record-on-delete have conflicting "
            "behavior so should not be enabled at the same time."
        )
    if merge.partial_remove_record_on_sequence_group:
        if merge.ignore_delete:
            raise SchemaError(
                "ignore-delete and partial-update.remove-record-on-sequence-group have "
                "conflicting behavior so should not be enabled at the same time."
            )
        sequence_fields = {s for g in merge.sequence_groups for s in g.sequence_fields}
        for field in merge.partial_remove_record_on_sequence_group:
            if field not in sequence_fields:
                raise SchemaError(
                    f"field '{field}' defined in 'partial-update.remove-record-on-sequence-group' "
                    "option must be part of sequence groups"
                )


_VARBINARY_FUNCTIONS = {
    "rbm32": "roaring bitmap",
    "rbm64": "roaring bitmap",
    "theta_sketch": "theta sketch",
    "hll_sketch": "hll sketch",
}


def check_aggregate_type(function: str, field: str, data_type: DataType) -> None:
    """The type checks Java's field aggregators make when they are created (at the first read
    or write of the table), with their messages.

    Raises:
        SchemaError: ``function`` cannot aggregate a column of ``data_type``.
    """
    root = data_type.root
    numeric = ("DECIMAL", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE")
    comparable = (
        *numeric,
        "BOOLEAN",
        "CHAR",
        "VARCHAR",
        "BINARY",
        "VARBINARY",
        "DATE",
        "TIME",
        "TIMESTAMP",
        "TIMESTAMP_LTZ",
    )
    sql = str(data_type)
    java_root = "INTEGER" if root == "INT" else root
    if (
        (function in ("sum", "product") and root not in numeric)
        or (function in ("max", "min") and root not in comparable)
        or (function in ("bool_and", "bool_or") and root != "BOOLEAN")
        or (function == "listagg" and root not in ("VARCHAR", "CHAR"))
    ):
        raise SchemaError(
            f"type {java_root} not support in aggregate function '{function}' of field '{field}'"
        )
    if function in _VARBINARY_FUNCTIONS and root != "VARBINARY":
        raise SchemaError(
            f"Data type for {_VARBINARY_FUNCTIONS[function]} column must be 'VarBinaryType' "
            f"but was '{sql}'."
        )
    if function == "collect" and root != "ARRAY":
        raise SchemaError(f"Data type for collect column must be 'Array' but was '{sql}'.")
    if function == "merge_map" and root != "MAP":
        raise SchemaError(f"Data type of merge map column must be 'MAP' but was '{sql}'")
    if function == "nested_update" and (
        root != "ARRAY" or data_type.element is None or data_type.element.root != "ROW"
    ):
        raise SchemaError(
            f"Data type for nested table column must be 'Array<Row>' but was '{sql}'."
        )
    if function == "nested_partial_update" and (
        root != "ARRAY" or data_type.element is None or data_type.element.root != "ROW"
    ):
        raise SchemaError(
            f"Data type for nested table column must be 'Array<Row>' but was '{sql}'."
        )
    if function == "merge_map_with_keytime":
        if root != "MAP" or data_type.value is None:
            raise SchemaError(f"Data type for field '{field}' must be 'MAP' but was '{sql}'")
        value = data_type.value
        if value.root != "ROW":
            raise SchemaError(
                f"Value type of MAP for field '{field}' must be ROW but was '{value}'"
            )
        if len(value.fields or ()) < 2:
            raise SchemaError(
                f"ROW type for field '{field}' must have at least 2 fields, but found "
                f"{len(value.fields or ())}"
            )

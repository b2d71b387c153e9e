"""Table features this implementation does not fully read or write, refused in one place.

Apache Paimon 1.3-2.1 added features (data evolution writes, BLOB columns, postpone
merge-on-read, ...) that a reader or writer not implementing them misreads or corrupts: a commit
that restarts row ids, a read that takes a file of some columns for whole rows. ``FEATURES``
lists each with what turns it on (an option, or a column type in ``UNSUPPORTED_TYPES``) and
whether this implementation reads such a table correctly without implementing it.

``check_supported`` is the gate: creating a table or changing a schema (the schema published,
``SchemaManager.commit``), writing or committing (``TableWrite``, ``FileStoreCommit``) with
any of them on, and reading a table with one that is not readable, fail with one line naming
the option or column type, before anything is written. ``check_files`` refuses the data files
whose manifest fields (``_WRITE_COLS``, ``_FIRST_ROW_ID``) say a feature the table does not
declare. Options set as dynamic options (``table.copy``) count as the table's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Protocol

from paimon_core.exceptions import UnsupportedFeature

if TYPE_CHECKING:
    from paimon_core.format.manifest import DataFileMeta
    from paimon_core.format.types import DataField, DataType


class Columns(Protocol):
    """What the gate reads of a ``TableSchema`` (``schema`` imports this module)."""

    @property
    def schema_id(self) -> int: ...

    @property
    def fields(self) -> tuple[DataField, ...]: ...


class Access(Enum):
    """What is done to a table; the verb of a refusal."""

    CREATE = "create"
    ALTER = "change the schema of"
    READ = "read"
    WRITE = "write to"


def _is_true(options: Mapping[str, str], key: str) -> bool:
    return (options.get(key) or "").strip().lower() == "true"


def _is_set(options: Mapping[str, str], key: str) -> bool:
    return bool((options.get(key) or "").strip())


def _true(key: str) -> Callable[[Mapping[str, str]], bool]:
    """On when boolean option ``key`` is true."""
    return lambda options: _is_true(options, key)


def _named(*keys: str) -> Callable[[Mapping[str, str]], bool]:
    """On when any of ``keys`` (an option and its fallback keys) names something."""
    return lambda options: any(_is_set(options, k) for k in keys)


def _is_postpone(options: Mapping[str, str]) -> bool:
    return (options.get("bucket") or "").strip() == "-2"


def _postpone_merge_on_read(options: Mapping[str, str]) -> bool:
    return _is_postpone(options) and _is_true(options, "postpone.merge-on-read")


@dataclass(frozen=True, slots=True)
class Feature:
    """A table feature this implementation does not implement, and the option turning it on."""

    name: str
    option: str
    enabled: Callable[[Mapping[str, str]], bool]
    readable: bool
    """Whether reads of a table with the feature are correct without implementing it."""
    fallbacks: tuple[str, ...] = ()
    """Older keys of ``option`` (Paimon's ``withFallbackKeys``)."""

    def setting(self, options: Mapping[str, str]) -> str:
        """``'key' = 'value'`` of the option (or fallback key) set in ``options``."""
        key = next((k for k in (self.option, *self.fallbacks) if k in options), self.option)
        return f"'{key}' = '{options.get(key, '')}'"


FEATURES: tuple[Feature, ...] = (
    # The most specific first: a refusal names the first one on. Data evolution
    # (``operations.data_evolution``) and row tracking are implemented.
    # BLOB columns in ``.blob`` files (``format.blob_file``) are read, not written yet.
    Feature("BLOB fields", "blob-field", _named("blob-field"), True),
    Feature(
        "BLOB descriptor fields",
        "blob-descriptor-field",
        _named("blob-descriptor-field", "blob.stored-descriptor-fields"),
        False,
        ("blob.stored-descriptor-fields",),
    ),
    Feature("BLOB view fields", "blob-view-field", _named("blob-view-field"), False),
    # Batch reads merging ``bucket-postpone`` files into the real buckets' (Paimon 2.1).
    Feature("postpone merge-on-read", "postpone.merge-on-read", _postpone_merge_on_read, False),
    # Writers pick each file's VARIANT shredding from its rows; readers rebuild any shredding.
    Feature(
        "VARIANT shredding inference",
        "variant.inferShreddingSchema",
        _true("variant.inferShreddingSchema"),
        True,
    ),
    # Partitions missing from the table are read from its snapshot and delta branches.
    Feature("chain tables", "chain-table.enabled", _true("chain-table.enabled"), False),
)

_ROW_TRACKING = {"_ROW_ID", "_SEQUENCE_NUMBER"}

UNSUPPORTED_TYPES: dict[str, bool] = {"BLOB": True}
"""Column type root -> whether tables with such a column read correctly (as ``readable``):
a top-level BLOB column (in ``.blob`` files) is read; one nested in another type
(``ARRAY<BLOB>``, ``MAP<..., BLOB>``, a ROW field) is not."""


def _type_roots(data_type: DataType, nested: bool = False) -> Iterable[tuple[str, bool]]:
    """Every type root in ``data_type`` with whether it is nested in another type."""
    yield data_type.root, nested
    for child in (data_type.element, data_type.key, data_type.value):
        if child is not None:
            yield from _type_roots(child, True)
    for f in data_type.fields or ():
        yield from _type_roots(f.type, True)


def unsupported(schema: Columns, options: Mapping[str, str], access: Access) -> str | None:
    """What ``access`` to a table of ``schema`` with ``options`` may not do, or None.

    Args:
        schema: the table's schema (its column types are checked).
        options: the options in effect (the schema's, with dynamic options on top).
        access: reads refuse only features that are not ``readable``; the rest refuse all.

    Returns:
        The refused feature as a phrase naming its option and value, or the column and
        type and the schema file declaring it; None when nothing is refused.
    """
    for feature in FEATURES:
        if feature.enabled(options) and (access is not Access.READ or not feature.readable):
            return f"{feature.name} ({feature.setting(options)})"
    for f in schema.fields:
        for root, nested in _type_roots(f.type):
            readable = UNSUPPORTED_TYPES.get(root)
            if readable is not None and (access is not Access.READ or not readable or nested):
                return f"column '{f.name}' of type {root} (schema/schema-{schema.schema_id})"
    return None


def check_supported(
    schema: Columns, options: Mapping[str, str], access: Access, table: str
) -> None:
    """Refuse ``access`` to ``table`` when it needs a feature this implementation lacks.

    Args:
        schema: the table's schema.
        options: the options in effect (the schema's, with dynamic options on top).
        access: create, alter, read or write.
        table: how the table is named in the message.

    Raises:
        UnsupportedFeature: one line naming the access, the table and the option (with its
            value) or the column type; nothing was done.
    """
    refused = unsupported(schema, options, access)
    if refused is not None:
        raise UnsupportedFeature(
            f"Cannot {access.value} table {table}: {refused} is not supported yet"
        )


def check_files(files: Iterable[DataFileMeta], options: Mapping[str, str], table: str) -> None:
    """Refuse data files whose manifest fields mean a feature ``table`` does not declare:
    ``_WRITE_COLS`` (a file of some columns) without ``data-evolution.enabled`` and
    ``_FIRST_ROW_ID`` without ``row-tracking.enabled``; read as plain files they would be
    taken for whole rows.

    A row-tracking table without data evolution has files whose ``_WRITE_COLS`` are its
    columns plus ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` (rows rewritten by a compaction or an
    UPDATE, keeping their ids, as Java writes them): whole rows, read by field id.

    Raises:
        UnsupportedFeature: naming the first such file and its field.
    """
    row_tracking = _is_true(options, "row-tracking.enabled")
    data_evolution = _is_true(options, "data-evolution.enabled")
    whole_rows = row_tracking and not data_evolution
    for f in files:
        if (
            f.write_cols is not None
            and not data_evolution
            and not (whole_rows and _ROW_TRACKING & set(f.write_cols))
        ):
            raise UnsupportedFeature(
                f"Cannot read table {table}: data file {f.file_name} holds only columns "
                f"{list(f.write_cols)} (_WRITE_COLS) but the table has no "
                "'data-evolution.enabled' = 'true'"
            )
        if f.first_row_id is not None and not row_tracking:
            raise UnsupportedFeature(
                f"Cannot read table {table}: data file {f.file_name} has row ids "
                f"(_FIRST_ROW_ID = {f.first_row_id}) but the table has no "
                "'row-tracking.enabled' = 'true'"
            )

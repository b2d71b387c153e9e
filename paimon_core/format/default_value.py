"""Column default values (``DataField.default_value``, JSON ``defaultValue``), as Paimon has them.

Paimon stores the default as the text the engine gave it (Spark: the expression as written,
``5`` or ``'my_value'``) and turns it into a value as ``DefaultValueUtils.convertDefaultValue``
does: one pair of surrounding single quotes removed, then a cast from STRING to the column
type. A table write then replaces every NULL of such a column with its default
(``TableWriteImpl`` wraps each row in a ``DefaultValueRow``), so a column left out of an INSERT
and an explicit NULL both get the default.

Only atomic types have defaults here; Paimon's casts from STRING to ARRAY / MAP / ROW (and
expressions such as ``current_timestamp()``) are refused with Paimon's message.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from paimon_core.exceptions import SchemaError
from paimon_core.format.types import DataField, DataType, to_arrow_type

_UNSUPPORTED_ROOTS = frozenset({"ARRAY", "MAP", "MULTISET", "ROW", "VECTOR", "VARIANT", "BLOB"})


def default_scalar(data_type: DataType, text: str) -> pa.Scalar:
    """The default ``text`` as an Arrow scalar of ``data_type``'s Arrow type.

    Raises:
        SchemaError: ``Unsupported default value `text` for type T`` (Paimon's wording).
    """
    unsupported = SchemaError(f"Unsupported default value `{text}` for type {data_type}")
    if data_type.root in _UNSUPPORTED_ROOTS:
        raise unsupported
    value = text[1:-1] if len(text) >= 2 and text[0] == "'" and text[-1] == "'" else text
    if data_type.root == "CHAR":
        value = value.ljust(data_type.length or 1)
    if data_type.root in ("CHAR", "VARCHAR") and len(value) > (data_type.length or 1):
        raise unsupported
    target = to_arrow_type(data_type)
    try:
        if data_type.root in ("BINARY", "VARBINARY"):
            return pa.scalar(value.encode(), target)
        if data_type.root == "BOOLEAN":
            lowered = value.strip().lower()
            if lowered not in ("true", "false"):
                raise unsupported
            return pa.scalar(lowered == "true", target)
        if data_type.root in ("CHAR", "VARCHAR"):
            return pa.scalar(value, target)
        return pa.array([value.strip()], pa.string()).cast(target)[0]
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError):
        raise unsupported from None


def validate_defaults(fields: Sequence[DataField]) -> None:
    """Check every field's default converts to its type (Paimon's ``validateDefaultValue``).

    Raises:
        SchemaError: the first default that does not.
    """
    for f in fields:
        if f.default_value is not None:
            default_scalar(f.type, f.default_value)


def field_defaults(fields: Sequence[DataField]) -> dict[str, Any]:
    """Column name -> the Arrow scalar a NULL of that column is written as."""
    return {
        f.name: default_scalar(f.type, f.default_value)
        for f in fields
        if f.default_value is not None
    }

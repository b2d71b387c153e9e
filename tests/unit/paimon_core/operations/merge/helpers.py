"""Key-value rows for the merge tests: table columns, ``_SEQUENCE_NUMBER`` in row order (or
given), ``_VALUE_KIND`` (+I unless given)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from paimon_core.format.schema import TableSchema, schema_from_arrow
from paimon_core.operations.merge.base import SEQUENCE_NUMBER, VALUE_KIND

KINDS = {"+I": 0, "-U": 1, "+U": 2, "-D": 3}


def kv_rows(
    schema: pa.Schema,
    rows: Sequence[dict[str, Any]],
    kinds: Sequence[str] | None = None,
    sequences: Sequence[int] | None = None,
) -> pa.Table:
    data = pa.Table.from_pylist([{n: r.get(n) for n in schema.names} for r in rows], schema=schema)
    seq = list(sequences) if sequences is not None else list(range(len(rows)))
    kind = [KINDS[k] for k in kinds] if kinds is not None else [0] * len(rows)
    data = data.append_column(
        pa.field(SEQUENCE_NUMBER, pa.int64(), False), pa.array(seq, pa.int64())
    )
    return data.append_column(pa.field(VALUE_KIND, pa.int8(), False), pa.array(kind, pa.int8()))


def table_schema(schema: pa.Schema, options: dict[str, str]) -> TableSchema:
    """A primary-key (``k``) table's schema with ``options``, validated as at CREATE TABLE."""
    return schema_from_arrow(schema, primary_keys=["k"], options={"bucket": "1", **options})


def shown(rows: pa.Table) -> list[tuple[Any, ...]]:
    """The rows with their kind, sequence columns dropped, in order."""
    names = [n for n in rows.column_names if n != SEQUENCE_NUMBER]
    return [tuple(r[n] for n in names) for r in rows.to_pylist()]

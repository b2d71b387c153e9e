"""Java's order of FLOAT and DOUBLE values: ``Float.compare`` / ``Double.compare``.

Paimon sorts and deduplicates primary keys (and sequence fields) with these comparisons:
``-0.0 < 0.0``, and every NaN equals every other NaN and is larger than +Infinity. Arrow's
sort and ``==`` see -0.0 and 0.0 as one value and NaN as unequal to itself, which splits one
NaN key into many and merges two zero keys into one. So such columns are compared through
integers that order exactly like Java: the IEEE bits with NaN made canonical
(``doubleToLongBits``) and, for negative numbers, all bits but the sign flipped.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_ORDER_PREFIX = "\x00order:"
_WIDTHS = {
    pa.float32(): (np.float32, np.int32, 0x7FC00000, 31),
    pa.float64(): (np.float64, np.int64, 0x7FF8000000000000, 63),
}
_DOUBLE = struct.Struct("<d")
_LONG = struct.Struct("<q")


def is_floating(arrow_type: pa.DataType) -> bool:
    return arrow_type in _WIDTHS


def ordered(column: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """``column`` as integers in Java's order if it is FLOAT/DOUBLE; other columns as they are.

    Nulls stay null, so null placement is the caller's as before.
    """
    width = _WIDTHS.get(column.type)
    if width is None:
        return column
    float_type, int_type, canonical_nan, sign_shift = width
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    values = np.asarray(pc.fill_null(column, 0).to_numpy(zero_copy_only=False), dtype=float_type)
    bits = values.view(int_type).copy()
    bits[np.isnan(values)] = canonical_nan
    bits ^= (bits >> sign_shift) & int_type(np.iinfo(int_type).max)
    mask = column.is_null().to_numpy(zero_copy_only=False) if column.null_count else None
    return pa.array(bits, mask=mask)


def with_order_columns(table: pa.Table, names: Sequence[str]) -> tuple[pa.Table, list[str]]:
    """``table`` plus an ordered copy of each FLOAT/DOUBLE column of ``names``.

    Returns the table and, per name, the column to sort and compare by (the name itself when
    the column needs no copy). Callers select their output columns by name, which drops the
    copies again.
    """
    out: list[str] = []
    for name in names:
        column = table.column(name)
        if is_floating(column.type):
            order_name = f"{_ORDER_PREFIX}{name}"
            table = table.append_column(order_name, ordered(column))
            out.append(order_name)
        else:
            out.append(name)
    return table, out


def order_key(value: float) -> int:
    """One FLOAT/DOUBLE value as an int that sorts like ``Double.compare`` (and ``Float.compare``
    on values of a FLOAT column, which convert to double exactly)."""
    if math.isnan(value):
        return 0x7FF8000000000000
    bits = _LONG.unpack(_DOUBLE.pack(value))[0]
    return bits ^ 0x7FFFFFFFFFFFFFFF if bits < 0 else bits

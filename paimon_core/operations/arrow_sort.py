"""Sorting Arrow tables with nulls first, as Paimon orders keys, on every supported pyarrow.

pyarrow 25 deprecated ``SortOptions(null_placement=...)`` (a ``FutureWarning`` users would see)
in favour of a placement per sort key, which older releases reject.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc

_PER_KEY_PLACEMENT = int(pa.__version__.split(".")[0]) >= 25


def sort_indices_nulls_first(data: pa.Table, sort_keys: Sequence[tuple[str, str]]) -> pa.Array:
    """``pc.sort_indices`` of ``(column, "ascending" | "descending")`` keys, nulls first."""
    if _PER_KEY_PLACEMENT:
        keys = [(name, order, "at_start") for name, order in sort_keys]
        return pc.sort_indices(data, sort_keys=keys)
    return pc.sort_indices(data, sort_keys=list(sort_keys), null_placement="at_start")

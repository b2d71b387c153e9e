"""Paimon Spark's ``TableSorter`` (``OrderSorter``, ``ZorderSorter``, ``HilbertSorter``) on one
Arrow table: the rows a sort compaction rewrites, in the order the strategy asks for.

Spark range-partitions the rows by the sort key and sorts within the partitions, which is a
total order; one Arrow table sorted whole gives the same order. The z-value and Hilbert index
are binary columns compared as unsigned bytes (Spark's binary order).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from paimon_core.exceptions import InvalidArgument
from paimon_core.format.types import DataField
from paimon_core.operations.arrow_sort import sort_indices_nulls_first
from paimon_core.operations.sort.hilbert import HilbertIndexer
from paimon_core.operations.sort.zorder import DEFAULT_VAR_TYPE_SIZE, ZIndexer

if TYPE_CHECKING:
    from paimon_core.table import FileStoreTable

ORDER_TYPES = ("order", "zorder", "hilbert")
"""``CoreOptions.OrderType`` values that sort (``none`` does not)."""


def byte_rows_order(keys: np.ndarray) -> np.ndarray:
    """The stable ascending order of the rows of a ``(rows, width)`` uint8 matrix compared as
    unsigned bytes: the rows as big-endian 64-bit words (zero-padded), sorted word by word."""
    rows, width = keys.shape
    words = -(-width // 8)
    padded = np.zeros((rows, words * 8), dtype=np.uint8)
    padded[:, :width] = keys
    columns = padded.view(">u8").astype(np.uint64)
    if words == 1:
        return np.argsort(columns[:, 0], kind="stable")
    return np.lexsort([columns[:, j] for j in range(words - 1, -1, -1)])


@dataclass(frozen=True)
class TableSorter:
    """How a sort compaction orders rows: by the columns themselves (``order``, ascending,
    nulls first), by their z-value (``zorder``) or by their Hilbert index (``hilbert``).

    Raises (on construction, so a compaction fails before it writes anything):
        InvalidArgument: an unknown order type, no or unknown columns, fewer than two
            Hilbert columns.
        UnsupportedFeature: a column type the curve cannot order.
    """

    order_type: str
    fields: tuple[DataField, ...]
    order_columns: tuple[str, ...]
    var_type_size: int = DEFAULT_VAR_TYPE_SIZE

    def __post_init__(self) -> None:
        if self.order_type not in ORDER_TYPES:
            raise InvalidArgument(f"cannot match order type: {self.order_type}")
        if not self.order_columns:
            raise InvalidArgument("order column could not be empty")
        names = [f.name for f in self.fields]
        for column in self.order_columns:
            if column not in names:
                raise InvalidArgument(
                    f"Can't find column {column} in table columns. Possible columns are "
                    f"[{','.join(names)}]"
                )
        _ = self.indexer

    @classmethod
    def of(
        cls, table: FileStoreTable, order_type: str, order_columns: Sequence[str]
    ) -> TableSorter:
        """``TableSorter.getSorter``: the table's columns and ``zorder.var-length-contribution``."""
        return cls(
            order_type.lower(),
            tuple(table.schema.fields),
            tuple(order_columns),
            table.options.zorder_var_length_contribution,
        )

    @cached_property
    def indexer(self) -> ZIndexer | HilbertIndexer | None:
        if self.order_type == "zorder":
            return ZIndexer(self.fields, self.order_columns, self.var_type_size)
        if self.order_type == "hilbert":
            return HilbertIndexer(self.fields, self.order_columns)
        return None

    def sort(self, rows: pa.Table) -> pa.Table:
        """``rows`` in this sorter's order (ties keep their input order)."""
        if self.indexer is None:
            keys = [(c, "ascending") for c in self.order_columns]
            return rows.take(sort_indices_nulls_first(rows, keys))
        return rows.take(byte_rows_order(self.indexer.index(rows)))

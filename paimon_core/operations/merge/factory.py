"""Which merge a table needs, built from its schema and options: the entry point of the seam.

``key_value_merge(schema)`` returns a ``KeyValueMerge``: the table's ``MergeFunction`` plus
the key and sequence ordering it runs under. Merge-on-read (``operations/read.py``), the
writer's buffer (``operations/write.py``) and a compaction all call ``merge`` on key-value rows
(value columns by name, ``_SEQUENCE_NUMBER``, ``_VALUE_KIND``) gathered from any number of
files, and get one row per key in key order, retractions kept.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from paimon_core.format.merge_options import MergeOptions
from paimon_core.format.types import to_arrow_type
from paimon_core.operations.merge.aggregate import AggregateMergeFunction
from paimon_core.operations.merge.aggregators import FieldAggregator, create_aggregator
from paimon_core.operations.merge.base import (
    MergeFunction,
    SortedRuns,
    drop_retractions,
    java_pop_positions,
    merge_key_values,
)
from paimon_core.operations.merge.deduplicate import DeduplicateMergeFunction
from paimon_core.operations.merge.first_row import FirstRowMergeFunction
from paimon_core.operations.merge.lookup import lookup_candidates, lookup_keep, needs_lookup
from paimon_core.operations.merge.partial_update import PartialUpdateMergeFunction

if TYPE_CHECKING:
    from paimon_core.format.schema import TableSchema


@dataclass(frozen=True)
class KeyValueMerge:
    """How the key-value rows of one table merge (see the module docstring)."""

    function: MergeFunction
    key_names: tuple[str, ...]
    sequence_fields: tuple[str, ...]
    sequence_ascending: bool
    ignore_delete: bool
    engine: str
    lookup: bool = False

    def merge(
        self,
        rows: pa.Table,
        reduce: bool = True,
        runs: SortedRuns | None = None,
        tie_rank: np.ndarray | None = None,
    ) -> pa.Table:
        """One row per key of ``rows``, in key order, with the merged ``_SEQUENCE_NUMBER`` and
        ``_VALUE_KIND`` (retractions kept: ``drop_retractions`` for what a read shows);
        ``reduce=False``: lone records merged too; ``runs`` (the files ``rows`` came from) or
        ``tie_rank``: Java's order of records that tie (``merge_key_values``)."""
        return merge_key_values(
            rows,
            self.function,
            self.key_names,
            self.sequence_fields,
            self.sequence_ascending,
            reduce,
            runs,
            tie_rank,
        )

    def pop_positions(self, rows: pa.Table, runs: SortedRuns) -> np.ndarray | None:
        """Each row's position in Java's merge of ``rows`` (None: no records tie), for a
        merge of some of them (``tie_rank``)."""
        return java_pop_positions(
            rows, self.key_names, self.sequence_fields, self.sequence_ascending, runs
        )

    def merge_for_read(self, rows: pa.Table) -> pa.Table:
        """``merge`` without the deleted keys."""
        return drop_retractions(self.merge(rows))

    def merge_files(
        self,
        tables: Sequence[pa.Table],
        levels: Sequence[int],
        sections: Callable[[], Sequence[Sequence[Sequence[int]]]] | None = None,
    ) -> pa.Table:
        """``merge`` of the key-value rows of several files (``levels`` theirs): on a lookup
        table only what ``LookupMergeFunction`` merges (``merge.lookup``). ``sections``: how
        Java reads these files (``SortedRuns.sections``), for records that tie."""
        runs = None
        if sections is not None:
            runs = SortedRuns([t.num_rows for t in tables], sections)
        if not self.lookup:
            return self.merge(pa.concat_tables(tables), runs=runs)
        rows, _ = lookup_candidates(tables, levels, self.key_names)
        tie_rank = None if runs is None else self.lookup_tie_rank(tables, levels, runs)
        return self.merge(rows, tie_rank=tie_rank)

    def lookup_tie_rank(
        self, tables: Sequence[pa.Table], levels: Sequence[int], runs: SortedRuns
    ) -> np.ndarray | None:
        """For the rows ``lookup_candidates`` keeps of ``tables`` (read from the files of
        ``runs``): their positions in Java's merge of all the rows (None: no records tie)."""
        every = pa.concat_tables(tables)
        positions = self.pop_positions(every, runs)
        if positions is None:
            return None
        row_levels = np.repeat(np.asarray(levels, np.int64), [t.num_rows for t in tables])
        keep = lookup_keep(every, row_levels, self.key_names)
        return positions if keep is None else positions[keep]

    def required_fields(self, names: Sequence[str]) -> list[str]:
        """The columns a merge producing ``names`` must read besides them: the keys, the
        sequence fields and what the merge function needs."""
        wanted = list(names)
        extra = [n for n in (*self.key_names, *self.sequence_fields) if n not in wanted]
        for name in self.function.required_fields([*wanted, *extra]):
            if name not in wanted and name not in extra:
                extra.append(name)
        return extra


def key_value_merge(schema: TableSchema) -> KeyValueMerge:
    """The merge of a primary-key table with ``schema`` (Java's
    ``PrimaryKeyTableUtils.createMergeFunctionFactory``).

    Raises:
        SchemaError: an aggregate function that cannot take its column's type.
        UnsupportedFeature: an aggregate function this implementation does not have.
    """
    options = MergeOptions.of_schema(schema)
    table_options = schema.options
    lookup = options.engine != "first-row" and needs_lookup(
        bool(schema.primary_keys),
        options.engine,
        str(table_options.get("deletion-vectors.enabled", "false")).lower() == "true",
        str(table_options.get("changelog-producer", "none")).lower(),
    )
    return KeyValueMerge(
        function=merge_function(schema, options),
        key_names=tuple(schema.trimmed_primary_keys),
        sequence_fields=options.sequence_fields,
        sequence_ascending=options.sequence_ascending,
        ignore_delete=options.ignore_delete,
        engine=options.engine,
        lookup=lookup,
    )


def _aggregators(
    schema: TableSchema, options: MergeOptions, default: str | None
) -> dict[str, FieldAggregator]:
    out = {}
    for f in schema.fields:
        function = options.aggregate_function(f.name) or default
        if function is not None and f.name in schema.primary_keys:
            function = "primary-key"
        if function is not None:
            arrow_type = to_arrow_type(f.type)
            out[f.name] = create_aggregator(
                function, f.name, f.type, arrow_type, options.fields[f.name]
            )
    return out


def merge_function(schema: TableSchema, options: MergeOptions | None = None) -> MergeFunction:
    """The ``MergeFunction`` of ``schema``'s ``merge-engine``."""
    options = options or MergeOptions.of_schema(schema)
    if options.engine == "first-row":
        return FirstRowMergeFunction(options.ignore_delete)
    if options.engine == "aggregation":
        return AggregateMergeFunction(
            _aggregators(schema, options, "last_non_null_value"),
            options.aggregation_remove_record_on_delete,
        )
    if options.engine == "partial-update":
        aggregators = _aggregators(schema, options, None)
        return PartialUpdateMergeFunction(
            field_names=tuple(schema.field_names),
            ignore_delete=options.ignore_delete,
            remove_record_on_delete=options.partial_remove_record_on_delete,
            sequence_groups=options.sequence_groups,
            remove_record_on_sequence_group=frozenset(
                options.partial_remove_record_on_sequence_group
            ),
            aggregators=aggregators,
            primary_keys=tuple(schema.primary_keys),
        )
    return DeduplicateMergeFunction(options.ignore_delete)

"""``merge-engine = aggregation``: every column folds its records with its aggregate function
(Java's ``AggregateMergeFunction``).

Primary-key columns keep the key; every other column uses ``fields.<f>.aggregate-function``,
else ``fields.default-aggregate-function``, else ``last_non_null_value``. ``+I``/``+U`` records
aggregate, ``-U``/``-D`` retract (``aggregators``). The result is an ``+I`` with the sequence
number of the key's last record: an aggregated key is never deleted by a retraction, except
with ``aggregation.remove-record-on-delete`` (Paimon 1.x), where a ``-D`` replaces the row by
the deleted values and marks it deleted unless later records follow, which then aggregate on
top of it, as Paimon does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from paimon_core.operations.merge.aggregators import FieldAggregator
from paimon_core.operations.merge.base import (
    DELETE,
    INSERT,
    SEQUENCE_NUMBER,
    VALUE_KIND,
    Groups,
    MergeFunction,
    kinds_of,
    retractions,
)


def subset(rows: pa.Table, groups: Groups, chosen: np.ndarray) -> tuple[pa.Table, Groups]:
    """The rows and groups of the groups where ``chosen`` holds."""
    lengths = groups.lengths[chosen]
    index = (
        np.concatenate(
            [np.arange(s, e) for s, e in zip(groups.starts[chosen], groups.ends[chosen])]
        )
        if chosen.any()
        else np.zeros(0, np.int64)
    )
    return rows.take(pa.array(index, pa.int64())), Groups.of_lengths(lengths)


def reassemble(parts: list[tuple[np.ndarray, pa.Table]], schema: pa.Schema) -> pa.Table:
    """Tables of merged groups (each with the group numbers it holds) back in group order."""
    tables = [t.cast(schema) if t.schema != schema else t for _, t in parts]
    position = np.concatenate([p for p, _ in parts])
    return pa.concat_tables(tables).take(pa.array(np.argsort(position, kind="stable")))


@dataclass(frozen=True)
class AggregateMergeFunction(MergeFunction):
    aggregators: Mapping[str, FieldAggregator]
    remove_record_on_delete: bool = False

    def merge(self, rows: pa.Table, groups: Groups) -> pa.Table:
        kinds = kinds_of(rows)
        if self.remove_record_on_delete:
            deleting = groups.any(kinds == DELETE)
            if deleting.any():
                plain = np.flatnonzero(~deleting)
                parts = [(plain, self._reduce(*subset(rows, groups, ~deleting)))]
                parts.append(
                    (np.flatnonzero(deleting), self._per_record(*subset(rows, groups, deleting)))
                )
                return reassemble(parts, rows.schema)
        return self._reduce(rows, groups)

    def _reduce(self, rows: pa.Table, groups: Groups) -> pa.Table:
        retract = retractions(kinds_of(rows))
        present = np.ones(rows.num_rows, bool)
        columns = []
        for name in rows.column_names:
            column = rows.column(name)
            if name == SEQUENCE_NUMBER:
                columns.append(column.take(pa.array(groups.last)))
            elif name == VALUE_KIND:
                columns.append(pa.array(np.full(len(groups), INSERT, np.int8)))
            else:
                values = column.combine_chunks()
                columns.append(self.aggregators[name].reduce(values, present, retract, groups))
        return pa.Table.from_arrays(columns, schema=rows.schema)

    def _per_record(self, rows: pa.Table, groups: Groups) -> pa.Table:
        """Java's ``add``/``getResult`` one record at a time (``remove-record-on-delete``)."""
        names = [n for n in rows.column_names if n not in (SEQUENCE_NUMBER, VALUE_KIND)]
        records = rows.select(names).to_pylist()
        kinds = kinds_of(rows)
        retract = retractions(kinds)
        out: list[dict] = []
        result_kinds = []
        for start, end in zip(groups.starts.tolist(), groups.ends.tolist()):
            row: dict = dict.fromkeys(names)
            for agg in self.aggregators.values():
                agg.reset()
            deleted = False
            for i in range(start, end):
                record = records[i]
                deleted = bool(kinds[i] == DELETE)
                if deleted:
                    row = dict(record)
                    continue
                for name in names:
                    agg = self.aggregators[name]
                    row[name] = (
                        agg.retract(row[name], record[name])
                        if retract[i]
                        else agg.agg(row[name], record[name])
                    )
            out.append(row)
            result_kinds.append(DELETE if deleted else INSERT)
        merged = pa.Table.from_pylist(out, schema=rows.select(names).schema)
        merged = merged.append_column(
            rows.schema.field(SEQUENCE_NUMBER),
            rows.column(SEQUENCE_NUMBER).take(pa.array(groups.last)),
        )
        merged = merged.append_column(
            rows.schema.field(VALUE_KIND), pa.array(np.array(result_kinds, np.int8))
        )
        return merged.select(rows.column_names)

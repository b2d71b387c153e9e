"""``merge-engine = partial-update``: each column keeps its latest non-null value (Java's
``PartialUpdateMergeFunction``).

* Without sequence groups a column takes the last non-null value of the key's ``+I``/``+U``
  records (merge order). Retractions fail the merge (Paimon's message lists the options)
  unless ``ignore-delete`` skips them or ``partial-update.remove-record-on-delete`` makes a
  ``-D`` delete the row (``-U`` is skipped then); records after that ``-D`` update the deleted
  values again, as Paimon 1.x does (0.9 fails there).
* ``fields.<s1,s2>.sequence-group = <f1,f2>``: the group's fields (and its sequence fields)
  take the values of the record with the highest sequence-field values (nulls lowest; among
  equal ones the latest record); records whose sequence fields are all null leave the group
  alone. A winning retraction clears the group's fields (its sequence fields take the
  retraction's). Columns in no group behave as above; retractions never touch them.
* ``fields.<f>.aggregate-function`` (or ``fields.default-aggregate-function``, which primary
  keys ignore) aggregates a column instead, only with sequence groups (Paimon refuses
  otherwise): an input older than the group's sequence aggregates "reversed", a retraction
  retracts. ``partial-update.remove-record-on-sequence-group`` (Paimon 1.x): a winning ``-D``
  in a group with one of the listed sequence fields deletes the whole row.
* A key's first record, when a retraction, fills the whole row with its values before it is
  applied (Java's ``initRow``, Paimon 1.4 and later; also with ``ignore-delete``, which then
  skips it): columns no later record sets keep them, and a sequence group compares later
  records with its sequence.

The result is an ``+I``, or a ``-D`` when the key was deleted or got no ``+I``/``+U`` at all (a
key with only retractions disappears; Paimon 0.9 returned a row of nulls there).

Without aggregators or ``remove-record-on-sequence-group`` the merge is vectorised (last
non-null per column; one "winner" per sequence group); otherwise it runs Java's per-record
algorithm on the keys with several records.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from paimon_core.exceptions import MergeError
from paimon_core.format.float_order import is_floating, order_key, ordered
from paimon_core.format.merge_options import SequenceGroup
from paimon_core.operations.arrow_sort import sort_indices_nulls_first
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
    take_or_null,
    valid_of,
)

DELETE_ERROR = (
    "By default, Partial update can not accept delete records, you can choose one of the "
    "following solutions: 1. Configure 'ignore-delete' to ignore delete records. "
    "2. Configure 'partial-update.remove-record-on-delete' to remove the whole row when "
    "receiving delete records. 3. Configure 'sequence-group's to retract partial columns. "
    "Also configure 'partial-update.remove-record-on-sequence-group' to remove the whole row "
    "when receiving deleted records of `specified sequence group`."
)
"""Paimon 2's message (0.9's lacks the last sentence), its lines joined into one."""


@dataclass(frozen=True)
class PartialUpdateMergeFunction(MergeFunction):
    field_names: tuple[str, ...]
    ignore_delete: bool = False
    remove_record_on_delete: bool = False
    sequence_groups: tuple[SequenceGroup, ...] = ()
    remove_record_on_sequence_group: frozenset[str] = frozenset()
    aggregators: Mapping[str, FieldAggregator] = field(default_factory=dict)
    primary_keys: tuple[str, ...] = ()

    @property
    def _group_of(self) -> dict[str, SequenceGroup]:
        out: dict[str, SequenceGroup] = {}
        for group in self.sequence_groups:
            for name in (*group.fields, *group.sequence_fields):
                out[name] = group
        return out

    def required_fields(self, names: Sequence[str]) -> list[str]:
        group_of = self._group_of
        extra: list[str] = []
        for name in names:
            group = group_of.get(name)
            if group is not None:
                extra += [s for s in group.sequence_fields if s not in names and s not in extra]
        return extra

    def merge(self, rows: pa.Table, groups: Groups) -> pa.Table:
        kinds = kinds_of(rows)
        retract = retractions(kinds)
        if (
            retract.any()
            and not self.ignore_delete
            and not self.sequence_groups
            and not self.remove_record_on_delete
        ):
            raise MergeError(DELETE_ERROR)
        if self.aggregators or self.remove_record_on_sequence_group:
            return self._per_record(rows, groups)
        counted = ~retract if self.ignore_delete else np.ones(len(kinds), bool)
        adds = ~retract
        has_add = groups.any(adds)
        columns: dict[str, Any] = {}
        names = [n for n in rows.column_names if n not in (SEQUENCE_NUMBER, VALUE_KIND)]
        # A key's first record, when a retraction, fills the row with its values (Java's
        # initRow, also with ignore-delete); -1 where it is an addition.
        initial = np.where(retract[groups.starts], groups.starts, -1)
        if self.remove_record_on_delete and not self.ignore_delete:
            # The row restarts from each -D's values: later non-null values update them.
            deleted_at = groups.last_where(kinds == DELETE)
            base = np.where(deleted_at < 0, initial, deleted_at)
            deleted_last = kinds[groups.last] == DELETE
        else:
            base = initial
            deleted_last = np.zeros(len(groups), bool)
        after = np.arange(len(kinds)) > np.repeat(base, groups.lengths)
        group_of = self._group_of
        for name in names:
            if name in group_of:
                continue
            column = rows.column(name).combine_chunks()
            if name in self.primary_keys:
                # The key, even of a key that saw only retractions (Paimon 0.9 left it null).
                columns[name] = column.take(pa.array(groups.last))
                continue
            pick = groups.last_where(adds & valid_of(column) & after)
            columns[name] = take_or_null(column, np.where(pick < 0, base, pick))
        for group in self.sequence_groups:
            members = [n for n in (*group.sequence_fields, *group.fields) if n in names]
            if members:
                columns.update(self._group_winner(rows, groups, group, members, retract, initial))
        # Java's latestSequenceNumber: of the last record not skipped by ignore-delete.
        latest = groups.last_where(counted)
        sequence = rows.column(SEQUENCE_NUMBER).take(
            pa.array(np.where(latest < 0, groups.last, latest))
        )
        deleted = deleted_last | ~has_add
        kind = pa.array(np.where(deleted, DELETE, INSERT).astype(np.int8))
        arrays = [
            sequence if n == SEQUENCE_NUMBER else kind if n == VALUE_KIND else columns[n]
            for n in rows.column_names
        ]
        return pa.Table.from_arrays(arrays, schema=rows.schema)

    def _group_winner(
        self,
        rows: pa.Table,
        groups: Groups,
        group: SequenceGroup,
        members: list[str],
        retract: np.ndarray,
        initial: np.ndarray,
    ) -> dict[str, pa.Array]:
        """The group's columns from the record with the highest (sequence fields, position)
        among those whose sequence fields are not all null; a retraction clears them.

        A first record that is a retraction (``initial``) filled the row first: with
        ``ignore-delete`` it competes with its values kept, and the group keeps its values
        when no record set the group's sequence."""
        sequence = [rows.column(s).combine_chunks() for s in group.sequence_fields]
        some_set = np.zeros(rows.num_rows, bool)
        for column in sequence:
            some_set |= valid_of(column)
        clears = retract
        if self.ignore_delete:
            filled = np.zeros(rows.num_rows, bool)
            filled[initial[initial >= 0]] = True
            some_set &= ~retract | filled
            clears = np.zeros(rows.num_rows, bool)
        chosen = np.flatnonzero(some_set)
        winner = np.full(len(groups), -1, np.int64)
        if len(chosen):
            gid = groups.ids[chosen]
            table = {"g": pa.array(gid)}
            sort = [("g", "ascending")]
            for i, column in enumerate(sequence):
                values = column.take(pa.array(chosen))
                table[f"s{i}"] = ordered(values) if is_floating(values.type) else values
                sort.append((f"s{i}", "ascending"))
            table["i"] = pa.array(chosen)
            sort.append(("i", "ascending"))
            order = np.asarray(
                sort_indices_nulls_first(pa.table(table), sort).to_numpy(), dtype=np.int64
            )
            sorted_g = gid[order]
            last = np.flatnonzero(np.append(sorted_g[1:] != sorted_g[:-1], True))
            winner[sorted_g[last]] = chosen[order[last]]
        won_by_retraction = (winner >= 0) & clears[np.maximum(winner, 0)]
        winner = np.where(winner < 0, initial, winner)
        out = {}
        for name in members:
            column = rows.column(name).combine_chunks()
            if name in group.sequence_fields:
                out[name] = take_or_null(column, winner)
            else:
                out[name] = take_or_null(column, np.where(won_by_retraction, -1, winner))
        return out

    # -------------------------------------------------------------- per record (Java)

    def _per_record(self, rows: pa.Table, groups: Groups) -> pa.Table:
        present = set(rows.column_names)
        names = [n for n in self.field_names if n in present]
        records = rows.select(names).to_pylist()
        kinds = kinds_of(rows)
        sequence_numbers = rows.column(SEQUENCE_NUMBER).to_pylist()
        out: list[dict[str, Any]] = []
        result_sequence: list[int] = []
        result_kinds: list[int] = []
        for start, end in zip(groups.starts.tolist(), groups.ends.tolist()):
            row, latest, kind = self._merge_key(
                names, records[start:end], kinds[start:end], sequence_numbers[start:end]
            )
            for key in self.primary_keys:
                if key in row:
                    row[key] = records[end - 1][key]
            out.append(row)
            result_sequence.append(latest)
            result_kinds.append(kind)
        merged = pa.Table.from_pylist(out, schema=rows.select(names).schema)
        merged = merged.append_column(
            rows.schema.field(SEQUENCE_NUMBER), pa.array(result_sequence, pa.int64())
        )
        merged = merged.append_column(
            rows.schema.field(VALUE_KIND), pa.array(np.array(result_kinds, np.int8))
        )
        return merged.select(rows.column_names)

    def _merge_key(
        self,
        names: list[str],
        records: list[dict[str, Any]],
        kinds: np.ndarray,
        sequence_numbers: list[int],
    ) -> tuple[dict[str, Any], int, int]:
        row: dict[str, Any] = dict.fromkeys(names)
        for agg in self.aggregators.values():
            agg.reset()
        latest = sequence_numbers[-1]
        meet_insert = filled = False
        deleted = False
        group_of = {n: g for n, g in self._group_of.items() if n in row}
        for record, kind, sequence in zip(records, kinds.tolist(), sequence_numbers):
            deleted = False
            if kind in (1, 3):
                if not filled:  # Java's initRow: a first retraction fills the row
                    row, filled = dict(record), True
                if self.ignore_delete:
                    continue
                latest = sequence
                if self.sequence_groups:
                    deleted, row = self._retract(names, group_of, row, record, kind)
                    continue
                if self.remove_record_on_delete:
                    if kind == DELETE:
                        deleted, row = True, dict(record)
                    continue
                raise MergeError(DELETE_ERROR)
            latest = sequence
            if self.sequence_groups:
                self._update(names, group_of, row, record)
            else:
                for name in names:
                    if record[name] is not None:
                        row[name] = record[name]
            meet_insert = filled = True
        return row, latest, DELETE if deleted or not meet_insert else INSERT

    @staticmethod
    def _compare(record: dict[str, Any], row: dict[str, Any], fields: Sequence[str]) -> int:
        """Java's ``RecordComparator`` of the sequence fields: nulls first, then values."""
        for name in fields:
            a, b = record[name], row[name]
            if a is None or b is None:
                if a is None and b is None:
                    continue
                return -1 if a is None else 1
            if isinstance(a, float):
                a, b = order_key(a), order_key(b)
            if a != b:
                return -1 if a < b else 1
        return 0

    def _update(
        self,
        names: list[str],
        group_of: dict[str, SequenceGroup],
        row: dict[str, Any],
        record: dict[str, Any],
    ) -> None:
        processed: set[str] = set()
        for name in names:
            group = group_of.get(name)
            agg = self.aggregators.get(name)
            acc, value = row[name], record[name]
            if group is None:
                if agg is not None:
                    row[name] = agg.agg(acc, value)
                elif value is not None:
                    row[name] = value
                continue
            if name in processed:
                continue
            sequence = [s for s in group.sequence_fields if s in row]
            if all(record[s] is None for s in sequence):
                processed.update(sequence)
                continue
            if self._compare(record, row, sequence) >= 0:
                if name in sequence:
                    for s in sequence:
                        row[s] = record[s]
                        processed.add(s)
                    continue
                row[name] = value if agg is None else agg.agg(acc, value)
            elif agg is not None:
                row[name] = agg.agg_reversed(acc, value)

    def _retract(
        self,
        names: list[str],
        group_of: dict[str, SequenceGroup],
        row: dict[str, Any],
        record: dict[str, Any],
        kind: int,
    ) -> tuple[bool, dict[str, Any]]:
        processed: set[str] = set()
        updated: set[str] = set()
        for name in names:
            group = group_of.get(name)
            if group is None or name in processed:
                continue
            agg = self.aggregators.get(name)
            sequence = [s for s in group.sequence_fields if s in row]
            if all(record[s] is None for s in sequence):
                processed.update(sequence)
                continue
            if self._compare(record, row, sequence) >= 0:
                if name in sequence:
                    for s in sequence:
                        if s not in updated:
                            if kind == DELETE and s in self.remove_record_on_sequence_group:
                                return True, dict(record)
                            row[s] = record[s]
                            updated.add(s)
                        processed.add(s)
                elif agg is None:
                    row[name] = None
                else:
                    row[name] = agg.retract(row[name], record[name])
            elif agg is not None:
                row[name] = agg.retract(row[name], record[name])
        return False, row

"""The Java 2 interop matrix: scenarios (a table and the actions taken on it) run once per
writer pattern, Java 2's side of every table batched into a few JVMs.

A ``Case`` is a table (Paimon SQL types, keys, options) and its actions: ``write`` (rows, each
with an optional ``_kind``), ``compact`` (full or not), ``alter`` (schema changes in the
``alter`` step's form of ``java2/Paimon2.java``) or ``delete`` (ours only: deletion-vector
deletes of keys of an append table). ``run`` creates one table per case and writer:

* ``java``: Java 2 creates the table and takes every action;
* ``ours``: we do;
* ``java-ours`` / ``ours-java``: the first side creates the table and takes the even actions,
  the other the odd ones (each commits on top of the other).

Java's steps of every table go into one JVM per turn (a turn ends where any table's next action
is ours), so the JVM count is about half the longest action list, whatever the number of
cases. Then one JVM reads every table at the snapshot after each action (and its changelog
since the action before), and we read the same in-process. ``Outcome`` holds both; the
reference of a case is Java 2's read of the table it wrote itself (writer ``java``), and the
tests assert that every other read equals it.

Values go to Java as their text (Paimon's ``castFromString``) and come back as JSON numbers or
Paimon's cast to STRING; ``python_value`` turns such text into the Python value Arrow gives for
the column, and ``canonical`` compares rows whatever side they came from (NaN and -0.0 spelled
out, since Python compares them otherwise).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import pyarrow as pa

from paimon_core.catalog import FileSystemCatalog
from paimon_core.format.schema import (
    AddColumn,
    DropColumn,
    RenameColumn,
    SchemaChange,
    UpdateColumnType,
)
from paimon_core.format.types import DataField, parse_data_type, to_arrow_schema
from paimon_core.operations.compact import compact_table
from paimon_core.table import FileStoreTable
from tests.interop.java2 import Java2
from tests.unit.paimon_core.helpers import changelog_rows

WRITERS = ("java", "ours", "java-ours", "ours-java")
KINDS = {"+I": 0, "-U": 1, "+U": 2, "-D": 3}

Row = dict[str, Any]
Rows = list[tuple[tuple[str, Any], ...]]


@dataclass(frozen=True)
class Case:
    """A table and what is done to it, in order."""

    fields: Sequence[tuple[str, str]]
    actions: Sequence[Mapping[str, Any]]
    primary_keys: Sequence[str] = ()
    partition_keys: Sequence[str] = ()
    options: Mapping[str, str] = field(default_factory=dict)
    writers: Sequence[str] = WRITERS
    changelog: bool = False
    """Also read each action's changelog (``incremental-between`` in changelog mode)."""


@dataclass
class Outcome:
    """One table of a case and writer: the snapshot after each action and the reads of it."""

    table: str
    snapshots: list[int] = field(default_factory=list)
    java: list[Rows | str] = field(default_factory=list)
    """Java 2's read at each snapshot: rows, or the error text."""
    ours: list[Rows | str] = field(default_factory=list)
    java_changelog: list[Rows | str] = field(default_factory=list)
    ours_changelog: list[Rows | str] = field(default_factory=list)


def side(writer: str, action: int) -> str:
    """Who takes action ``action`` (0: also creates the table) under ``writer``."""
    if writer in ("java", "ours"):
        return writer
    first, second = writer.split("-")
    return first if action % 2 == 0 else second


def table_name(case: str, writer: str) -> str:
    return "db." + f"{case}_{writer}".replace("-", "_")


# ------------------------------------------------------------------------ values


def python_value(value: Any, arrow_type: pa.DataType) -> Any:
    """``value`` as Java prints it (or as it parses it) in the Python type Arrow uses."""
    if value is None:
        return None
    if pa.types.is_boolean(arrow_type):
        return value if isinstance(value, bool) else str(value).lower() == "true"
    if pa.types.is_integer(arrow_type):
        return int(value)
    if pa.types.is_floating(arrow_type):
        return float(value)
    if pa.types.is_decimal(arrow_type):
        return Decimal(str(value))
    if pa.types.is_binary(arrow_type) or pa.types.is_fixed_size_binary(arrow_type):
        return value if isinstance(value, bytes) else str(value).encode()
    if pa.types.is_date(arrow_type):
        return dt.date.fromisoformat(value)
    if pa.types.is_time(arrow_type):
        return dt.time.fromisoformat(value)
    if pa.types.is_timestamp(arrow_type) and arrow_type.unit == "ns":
        import pandas as pd  # Arrow's Python value of nanosecond timestamps

        return pd.Timestamp(value, tz="UTC" if arrow_type.tz else None)
    if pa.types.is_timestamp(arrow_type):
        parsed = dt.datetime.fromisoformat(value)
        return parsed.replace(tzinfo=dt.UTC) if arrow_type.tz else parsed
    return str(value)


def _canonical_value(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, float) and value == 0 and math.copysign(1, value) < 0:
        return "-0.0"
    return value


def canonical(rows: Sequence[Row]) -> Rows:
    """Rows as sorted tuples of (column, value), whichever side read them."""
    out = [tuple(sorted((k, _canonical_value(v)) for k, v in r.items())) for r in rows]
    return sorted(out, key=repr)


def typed_rows(rows: Sequence[Row], schema: pa.Schema) -> list[Row]:
    """Java's JSON rows in the Python types of ``schema`` (its columns; extra ones, such as
    ``rowkind``, kept as they are)."""
    out = []
    for r in rows:
        out.append(
            {
                k: python_value(v, schema.field(k).type) if k in schema.names else v
                for k, v in r.items()
            }
        )
    return out


def arrow_batch(table: FileStoreTable, rows: Sequence[Row]) -> tuple[pa.Table, pa.Array]:
    """``rows`` (JSON, as given to Java) as an Arrow table of ``table``'s latest schema, and
    their row kinds."""
    schema = to_arrow_schema(list(table.schema.fields))
    for r in rows:
        unknown = set(r) - set(schema.names) - {"_kind"}
        assert not unknown, f"unknown columns {unknown}"
    data = [{f.name: python_value(r.get(f.name), f.type) for f in schema} for r in rows]
    kinds = pa.array([KINDS[r.get("_kind", "+I")] for r in rows], pa.int8())
    return pa.Table.from_pylist(data, schema=schema), kinds


def _change(change: Mapping[str, Any]) -> SchemaChange:
    if "add" in change:
        return AddColumn(change["add"], parse_data_type(change["type"]))
    if "rename" in change:
        return RenameColumn(change["rename"][0], change["rename"][1])
    if "drop" in change:
        return DropColumn(change["drop"])
    if "type" in change:
        return UpdateColumnType(change["type"][0], parse_data_type(change["type"][1]))
    raise AssertionError(f"unknown schema change {change}")


# ------------------------------------------------------------------------ running


def _java_step(name: str, action: Mapping[str, Any]) -> dict[str, Any]:
    op = action["op"]
    if op == "write":
        return {"op": "write", "table": name, "rows": list(action["rows"])}
    if op == "compact":
        return {"op": "compact", "table": name, "full": action.get("full", True)}
    if op == "alter":
        return {"op": "alter", "table": name, "changes": list(action["changes"])}
    raise AssertionError(f"Java takes no {op} action")


def _ours(catalog: FileSystemCatalog, name: str, action: Mapping[str, Any]) -> None:
    table = catalog.get_table(name)
    op = action["op"]
    if op == "write":
        data, kinds = arrow_batch(table, action["rows"])
        table.write_arrow(data, row_kinds=kinds)
    elif op == "compact":
        compact_table(table, full=action.get("full", True))
    elif op == "alter":
        table.alter_schema_manager.commit_changes([_change(c) for c in action["changes"]])
    elif op == "delete":
        from tests.unit.paimon_core.operations.test_deletion_vectors import delete_keys

        delete_keys(table, set(action["keys"]))
    else:
        raise AssertionError(f"unknown action {op}")


def to_arrow_schema_of(fields: Sequence[tuple[str, str]]) -> pa.Schema:
    """The Arrow schema of (name, Paimon SQL type) fields."""
    return to_arrow_schema([DataField(i, n, parse_data_type(t)) for i, (n, t) in enumerate(fields)])


def _create_ours(catalog: FileSystemCatalog, name: str, case: Case) -> None:
    catalog.create_database("db", ignore_if_exists=True)
    catalog.create_table(
        name,
        to_arrow_schema_of(case.fields),
        primary_keys=list(case.primary_keys),
        partition_keys=list(case.partition_keys),
        options=dict(case.options),
    )


def _latest(catalog: FileSystemCatalog, name: str) -> int:
    snapshot = catalog.get_table(name).latest_snapshot()
    return 0 if snapshot is None else snapshot.snapshot_id


def _taker(case: Case, writer: str, i: int) -> str:
    """``delete`` actions are always ours (Java writes no deletion vectors of append tables)."""
    return "ours" if case.actions[i]["op"] == "delete" else side(writer, i)


def run(java2: Java2, warehouse: str, cases: Mapping[str, Case]) -> dict[tuple[str, str], Outcome]:
    """Every case under each of its writers in ``warehouse``, then every read (see the module
    docstring); keyed by (case, writer)."""
    catalog = FileSystemCatalog(warehouse)
    todo = {(c, w): 0 for c, case in cases.items() for w in case.writers}
    outcomes = {(c, w): Outcome(table_name(c, w)) for c, w in todo}
    created: set[tuple[str, str]] = set()
    while any(i < len(cases[c].actions) for (c, _), i in todo.items()):
        # Java's turn: each table's Java actions up to its next action of ours.
        steps: list[dict[str, Any]] = []
        owners: list[tuple[tuple[str, str], bool]] = []
        for key, i in todo.items():
            case, name = cases[key[0]], outcomes[key].table
            if key not in created and side(key[1], 0) == "java":
                steps.append({"op": "create", "table": name, "fields": [list(f) for f in case.fields],
                              "primaryKeys": list(case.primary_keys),
                              "partitionKeys": list(case.partition_keys),
                              "options": dict(case.options)})  # fmt: skip
                owners.append((key, False))
                created.add(key)
            while i < len(case.actions) and _taker(case, key[1], i) == "java":
                steps.append(_java_step(name, case.actions[i]))
                owners.append((key, True))
                i += 1
            todo[key] = i
        if steps:
            for (key, is_action), result in zip(owners, java2.run(*steps), strict=True):
                if is_action:
                    previous = outcomes[key].snapshots[-1] if outcomes[key].snapshots else 0
                    outcomes[key].snapshots.append(result.get("latestSnapshot") or previous)
        # Our turn.
        for key, i in todo.items():
            case, name = cases[key[0]], outcomes[key].table
            if key not in created:
                _create_ours(catalog, name, case)
                created.add(key)
            while i < len(case.actions) and _taker(case, key[1], i) == "ours":
                _ours(catalog, name, case.actions[i])
                outcomes[key].snapshots.append(_latest(catalog, name))
                i += 1
            todo[key] = i
    _read_all(java2, catalog, cases, outcomes)
    return outcomes


def _read_steps(outcome: Outcome, changelog: bool) -> Iterator[dict[str, Any]]:
    previous = 0
    for snapshot in outcome.snapshots:
        options = {"scan.snapshot-id": str(snapshot)}
        yield {"op": "read", "table": outcome.table, "options": options, "catch": True}
        if changelog:
            between = {"incremental-between": f"{previous},{snapshot}",
                       "incremental-between-scan-mode": "changelog"}  # fmt: skip
            yield {"op": "read", "table": f"{outcome.table}$audit_log", "options": between,
                   "catch": True}  # fmt: skip
        previous = snapshot


def _read_all(
    java2: Java2,
    catalog: FileSystemCatalog,
    cases: Mapping[str, Case],
    outcomes: dict[tuple[str, str], Outcome],
) -> None:
    steps = [s for (c, _), o in outcomes.items() for s in _read_steps(o, cases[c].changelog)]
    results = iter(java2.run(*steps))
    for (c, _), outcome in outcomes.items():
        table = catalog.get_table(outcome.table)
        previous = 0
        for snapshot in outcome.snapshots:
            at = table.copy({"scan.snapshot-id": str(snapshot)})
            schema = to_arrow_schema(list(at.schema.fields))
            outcome.java.append(_java_rows(next(results), schema))
            outcome.ours.append(_our_read(at))
            if cases[c].changelog:
                outcome.java_changelog.append(_java_rows(next(results), schema))
                outcome.ours_changelog.append(_our_changelog(table, previous, snapshot))
            previous = snapshot


def _java_rows(result: Mapping[str, Any], schema: pa.Schema) -> Rows | str:
    if "error" in result:
        return str(result["error"])
    return canonical(typed_rows(result["rows"], schema))


def _our_read(table: FileStoreTable) -> Rows | str:
    try:
        return canonical(table.to_arrow().to_pylist())
    except Exception as e:  # the error is the outcome compared with Java's
        return f"{type(e).__name__}: {e}"


def _our_changelog(table: FileStoreTable, start: int, end: int) -> Rows | str:
    """The changelog files of the commits in (start, end], each row with its ``rowkind``, as
    Java's ``$audit_log`` in changelog mode reads them (OVERWRITE commits left out)."""
    columns = [f.name for f in table.schema.fields]
    rows: list[Row] = []
    for sid in range(start + 1, end + 1):
        snapshot = table.snapshot_manager.snapshot(sid)
        if snapshot.commit_kind.name == "OVERWRITE":
            continue
        at = table.with_schema_of(snapshot)
        for r in changelog_rows(at, snapshot, columns):
            rows.append({"rowkind": r[-2], **dict(zip(columns, r[:-2], strict=True))})
    return canonical(rows)


def same(a: Rows | str, b: Rows | str) -> bool:
    """Equal rows, or both reads failed."""
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str)
    return a == b


def split_fields(ddl: str, primary_keys: Sequence[str] = ()) -> list[tuple[str, str]]:
    """``k INT, d DECIMAL(10, 2)`` as [(name, type)], primary-key columns NOT NULL."""
    fields, depth, start = [], 0, 0
    for i, ch in enumerate(ddl + ","):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            name, sql = ddl[start:i].strip().split(" ", 1)
            fields.append((name, f"{sql} NOT NULL" if name in primary_keys else sql))
            start = i + 1
    return fields


def assert_as_reference(
    outcomes: Mapping[tuple[str, str], Outcome], case: str, writer: str
) -> None:
    """Java 2's and our reads of ``writer``'s table, after every action, equal Java 2's read
    of the table it wrote itself (and so do the changelogs, when read)."""
    reference = outcomes[(case, "java")]
    got = outcomes[(case, writer)]
    assert len(got.snapshots) == len(reference.snapshots)
    for i, expected in enumerate(reference.java):
        assert same(got.java[i], expected), f"Java 2's read after action {i}"
        assert same(got.ours[i], expected), f"our read after action {i}"
    for i, expected in enumerate(reference.java_changelog):
        assert same(got.java_changelog[i], expected), f"Java 2's changelog of action {i}"
        assert same(got.ours_changelog[i], expected), f"our changelog of action {i}"

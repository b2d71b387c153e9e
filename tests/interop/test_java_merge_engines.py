"""Merge engines against Apache Paimon 0.9 (Java), both directions.

Java's side is a fixture (``merge_engine_scenarios``: the tables Java wrote for each scenario,
and Java's read of them at every snapshot). We read Java's files and must see what Java saw
(but where Paimon 2.0, which we follow, reads otherwise: ``PAIMON_2``);
we write the same commits and Java (paimon-oracle, one read per scenario) must see the same
rows in our files, which proves our files carry the rows, kinds and sequence numbers Java
merges identically.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import MergeError
from paimon_core.format.types import to_arrow_schema
from paimon_core.table import FileStoreTable
from tests.interop.merge_engine_scenarios import EXPECTED, SCENARIOS, WAREHOUSE

Oracle = Callable[..., Any]
EXPECTATIONS: dict[str, Any] = json.loads(EXPECTED.read_text())
KINDS = {"insert": 0, "update_before": 1, "delete": 3}
WRITTEN_BY_US = [n for n, s in SCENARIOS.items() if not s.get("java_only")]
# Where we follow a later Paimon than the 0.9 oracle: (scenario, snapshot, k) -> the columns
# Paimon 2.0 reads otherwise. listagg skips empty strings since 2.0 (apache/paimon#8480).
PAIMON_2: dict[tuple[str, str, int], dict[str, Any]] = {
    ("aggregation_every_function", "2", 2): {"agg": "only"},
    ("aggregation_every_function", "3", 2): {"agg": "only|z"},
}


def _value(value: Any) -> Any:
    """A read value as the oracle prints it: DECIMAL as text; NaN and -0.0 spelled out
    (NaN equals nothing and -0.0 equals 0.0 in Python)."""
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, float) and value == 0 and math.copysign(1, value) < 0:
        return "-0.0"
    return value


def _rows(rows: list[dict[str, Any]]) -> list[tuple[tuple[str, Any], ...]]:
    out = [tuple(sorted((k, _value(v)) for k, v in r.items())) for r in rows]
    return sorted(out, key=repr)


def _java_table(name: str) -> FileStoreTable:
    return FileSystemCatalog(str(WAREHOUSE)).get_table(f"db.{name}")


def _last_snapshot(name: str) -> str:
    return max(EXPECTATIONS[name]["reads"], key=int)


def _last_read(name: str) -> Any:
    return EXPECTATIONS[name]["reads"][_last_snapshot(name)]


def _as_paimon_2(name: str, snapshot: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Java 0.9's read of a snapshot as Paimon 2.0, which we follow, reads it."""
    return [{**r, **PAIMON_2.get((name, snapshot, r["k"]), {})} for r in rows]


def _ours(warehouse: str, name: str) -> FileStoreTable:
    """The scenario's table created and written by us, with Java's schema and options."""
    java = _java_table(name).schema
    schema = to_arrow_schema(list(java.fields))
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    options = {k: v for k, v in java.options.items() if k != "path"}
    table = catalog.create_table(f"db.{name}", schema, primary_keys=["k"], options=options)
    for commit in SCENARIOS[name]["commits"]:
        rows = [{f.name: _typed(r.get(f.name), f.type) for f in schema} for r in commit["rows"]]
        kinds = pa.array([KINDS[commit["kind"]]] * len(rows), pa.int8())
        table.write_arrow(pa.Table.from_pylist(rows, schema=schema), row_kinds=kinds)
    return table


def _typed(value: Any, arrow_type: pa.DataType) -> Any:
    if value is None:
        return None
    if pa.types.is_decimal(arrow_type):
        return Decimal(value)
    if pa.types.is_floating(arrow_type):
        return float(value)
    return value


def test_the_fixture_was_generated_from_these_scenarios() -> None:
    assert set(EXPECTATIONS) == set(SCENARIOS)
    for name, scenario in SCENARIOS.items():
        assert EXPECTATIONS[name]["commits"] == scenario["commits"], name


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_we_read_java_tables_at_every_snapshot(name: str) -> None:
    table = _java_table(name)
    for snapshot, expected in EXPECTATIONS[name]["reads"].items():
        at = table.copy({"scan.snapshot-id": snapshot})
        if isinstance(expected, dict):
            with pytest.raises(MergeError, match="Partial update can not accept delete records"):
                at.to_arrow()
            assert "Partial update can not accept delete records" in expected["error"]
        else:
            ours = _as_paimon_2(name, snapshot, expected)
            assert _rows(at.to_arrow().to_pylist()) == _rows(ours), f"snapshot {snapshot}"


@pytest.mark.oracle
@pytest.mark.parametrize("name", WRITTEN_BY_US)
def test_java_reads_our_tables_as_it_reads_its_own(
    warehouse: str, oracle: Oracle, name: str
) -> None:
    table = _ours(warehouse, name)
    expected = _last_read(name)
    if isinstance(expected, dict):
        with pytest.raises(RuntimeError, match="Partial update can not accept delete records"):
            oracle("read", warehouse, f"db.{name}")
        with pytest.raises(MergeError, match="Partial update can not accept delete records"):
            table.to_arrow()
        return
    assert _rows(oracle("read", warehouse, f"db.{name}")) == _rows(expected)
    ours = _as_paimon_2(name, _last_snapshot(name), expected)
    assert _rows(table.to_arrow().to_pylist()) == _rows(ours)


@pytest.mark.oracle
def test_java_retracts_our_update_before_rows(warehouse: str, oracle: Oracle) -> None:
    """-U rows (the oracle writes only +I and -D): Java merges ours as we do."""
    schema = pa.schema([pa.field("k", pa.int32(), False), ("total", pa.int64())])
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    options = {"bucket": "1", "merge-engine": "aggregation"}
    options["fields.total.aggregate-function"] = "sum"
    table = catalog.create_table("db.ub", schema, primary_keys=["k"], options=options)
    for ks, totals, kind in (([1, 2], [10, 3], 0), ([1], [4], 1), ([1, 2, 2], [1, 3, 5], 2)):
        data = pa.table({"k": pa.array(ks, pa.int32()), "total": totals}, schema=schema)
        table.write_arrow(data, row_kinds=pa.array([kind] * len(ks), pa.int8()))
    expected = [{"k": 1, "total": 7}, {"k": 2, "total": 11}]
    assert _rows(oracle("read", warehouse, "db.ub")) == _rows(expected)
    assert _rows(table.to_arrow().to_pylist()) == _rows(expected)


def test_fixture_paths_are_relative() -> None:
    """The fixture warehouse can move: no file names an absolute path of where it was made."""
    for path in Path(WAREHOUSE).rglob("schema-*"):
        assert "/tmp" not in path.read_text() and "/work" not in path.read_text()

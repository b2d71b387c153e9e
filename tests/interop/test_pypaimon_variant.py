"""VARIANT tables both ways with pypaimon 2.1: its ``GenericVariant`` values read here, ours
read there, each committing on top of the other, plain and shredded
(``variant.shreddingSchema``) files."""

from __future__ import annotations

import glob
import json
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pypaimon.data.generic_variant import GenericVariant

from paimon_core.catalog import FileSystemCatalog
from paimon_core.format import variant as pv
from paimon_core.format.types import VARIANT, to_arrow_type
from tests.interop.helpers import pypaimon_commit, pypaimon_read, pypaimon_write
from tests.unit.paimon_core.helpers import shredding_schema

pytest.importorskip("pypaimon")

SHREDDING = shredding_schema("v", [("a", "INT"), ("b", "STRING")])
THEIRS: dict[int, Any] = {1: {"a": 1, "b": "x", "c": [1, 2]}, 2: None, 3: "text"}
OURS = {4: '{"a": "no", "z": {"deep": true}}', 5: "[1, null]", 6: None}
THEIRS_AGAIN: dict[int, Any] = {7: {"b": "again"}}


def _theirs(batch: dict[int, Any]) -> pa.Table:
    values = [None if v is None else GenericVariant.from_python(v) for v in batch.values()]
    return pa.table(
        {"k": pa.array(list(batch), pa.int32()), "v": GenericVariant.to_arrow_array(values)}
    )


def _ours(batch: dict[int, str | None]) -> pa.Table:
    values = []
    for text in batch.values():
        if text is None:
            values.append(None)
        else:
            value, metadata = pv.from_json(text)
            values.append({"value": value, "metadata": metadata})
    return pa.table(
        {
            "k": pa.array(list(batch), pa.int32()),
            "v": pa.array(values, to_arrow_type(VARIANT())),
        }
    )


def _read_ours(warehouse: str, identifier: str) -> list[tuple[int, Any]]:
    data = FileSystemCatalog(warehouse).get_table(identifier).to_arrow()
    return sorted(
        (r["k"], None if r["v"] is None else json.loads(pv.to_json(**r["v"])))
        for r in data.to_pylist()
    )


def _read_theirs(warehouse: str, identifier: str) -> list[tuple[int, Any]]:
    data = pypaimon_read(warehouse, identifier)
    return sorted(
        (r["k"], None if r["v"] is None else GenericVariant.from_arrow_struct(r["v"]).to_python())
        for r in data.to_pylist()
    )


def _expected(*batches: dict[int, Any]) -> list[tuple[int, Any]]:
    out = []
    for batch in batches:
        for k, v in batch.items():
            out.append((k, json.loads(v) if isinstance(v, str) and batch is OURS else v))
    return sorted(out)


@pytest.mark.parametrize("options", [{}, {"variant.shreddingSchema": SHREDDING}])
def test_variant_both_ways_with_pypaimon(warehouse: str, options: dict[str, str]) -> None:
    pypaimon_write(warehouse, "db.t", _theirs(THEIRS), create={"options": options})
    assert _read_ours(warehouse, "db.t") == _expected(THEIRS)
    FileSystemCatalog(warehouse).get_table("db.t").write_arrow(_ours(OURS))
    assert _read_theirs(warehouse, "db.t") == _read_ours(warehouse, "db.t")
    assert _read_ours(warehouse, "db.t") == _expected(THEIRS, OURS)
    from pypaimon import CatalogFactory

    table = CatalogFactory.create({"warehouse": warehouse}).get_table("db.t")
    pypaimon_commit(table, _theirs(THEIRS_AGAIN))
    assert _read_ours(warehouse, "db.t") == _expected(THEIRS, OURS, THEIRS_AGAIN)
    groups = {
        tuple(pq.ParquetFile(p).schema_arrow.field("v").type.names)
        for p in glob.glob(f"{warehouse}/db.db/t/bucket-0/*.parquet")
    }
    shredded = ("metadata", "value", "typed_value")
    assert groups == ({shredded} if options else {("value", "metadata")})

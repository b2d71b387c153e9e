"""VARIANT values: the binary codec, Parquet shredding both ways, and VARIANT tables in the core
(null rows, stats, keys, the shredding option)."""

from __future__ import annotations

import datetime as dt
import glob
import json
import re
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import DataFileUnreadable, SchemaError, UnsupportedFeature
from paimon_core.format import variant as pv
from paimon_core.format.data_files import read_data_file
from paimon_core.format.types import VARIANT, parse_data_type, to_arrow_type
from paimon_core.io.fileio import LocalFileIO
from paimon_core.table import FileStoreTable
from tests.unit.paimon_core.helpers import shredding_schema

SHAPE_JSON = shredding_schema(
    "v",
    [
        ("a", "INT"),
        ("b", "STRING"),
        ("arr", {"type": "ARRAY", "element": "BIGINT"}),
        ("d", "DECIMAL(5, 2)"),
    ],
)
DOCUMENTS = [
    '{"a": 1, "b": "x", "c": 3}',
    '{"a": "not an int", "b": null}',
    '{"a": 3000000000, "arr": [1, "two", 3], "d": 1.5}',
    '{"d": 1.234, "nested": {"a": 1}}',
    '{"arr": {"not": "an array"}}',
    "[1, 2]",
    '"a string"',
    "null",
    "{}",
]


def variant_array(texts: list[str | None]) -> pa.Array:
    rows = []
    for text in texts:
        if text is None:
            rows.append(None)
        else:
            value, metadata = pv.from_json(text)
            rows.append({"value": value, "metadata": metadata})
    return pa.array(rows, to_arrow_type(VARIANT()))


def as_json(column: pa.Array | pa.ChunkedArray) -> list[str | None]:
    return [
        None if r is None else pv.to_json(r["value"], r["metadata"]) for r in column.to_pylist()
    ]


def test_json_round_trip() -> None:
    for text in DOCUMENTS:
        value, metadata = pv.from_json(text)
        assert json.loads(pv.to_json(value, metadata)) == json.loads(text)
        assert pv.value_size(value) == len(value)


def test_from_json_refuses_bad_text() -> None:
    with pytest.raises(pv.MalformedVariant, match="not JSON"):
        pv.from_json("{")
    with pytest.raises(pv.MalformedVariant, match="twice"):
        pv.from_json('{"a": 1, "a": 2}')


def test_shred_then_rebuild_keeps_every_value() -> None:
    shapes = pv.shredding_schema({"variant.shreddingSchema": SHAPE_JSON})
    assert shapes is not None
    column = variant_array([*DOCUMENTS, None])
    shredded = pv.shred(column, shapes["v"])
    assert shredded.type == pv.physical_type(shapes["v"])
    rebuilt = pv.rebuild(shredded)
    assert [None if t is None else json.loads(t) for t in as_json(rebuilt)] == [
        *(json.loads(t) for t in DOCUMENTS),
        None,
    ]
    rows = shredded.to_pylist()
    # Typed where the type matches, in the residual value where it does not.
    assert rows[0]["typed_value"]["a"] == {"value": None, "typed_value": 1}
    assert rows[0]["typed_value"]["b"] == {"value": None, "typed_value": "x"}
    assert rows[0]["value"] is not None  # "c" stays in the residual object
    assert rows[1]["typed_value"]["a"]["typed_value"] is None
    assert rows[1]["typed_value"]["a"]["value"] is not None
    assert rows[1]["typed_value"]["b"]["value"] == b"\x00"  # a variant null, not missing
    assert rows[2]["typed_value"]["a"]["typed_value"] is None  # does not fit INT
    assert rows[2]["typed_value"]["d"]["typed_value"] == Decimal("1.50")
    assert [e["typed_value"] for e in rows[2]["typed_value"]["arr"]["typed_value"]] == [
        1,
        None,
        3,
    ]
    assert rows[3]["typed_value"]["d"]["typed_value"] is None  # 1.234 needs scale 3
    assert rows[5]["typed_value"] is None and rows[5]["value"] is not None  # not an object
    assert rows[8]["value"] is None and rows[8]["typed_value"]["a"] == {
        "value": None,
        "typed_value": None,
    }  # {} is an object with every shredded key missing
    assert rows[9] is None


def test_shredding_matches_java_bytes() -> None:
    """The row Java 2.0.0 wrote for ``{"a": 1, "b": "x", "c": 3}`` shredded to
    ``ROW<a INT, b STRING>`` (read from its Parquet file)."""
    java = {
        "metadata": b"\x01\x03\x00\x01\x02\x03abc",
        "value": b"\x02\x01\x02\x00\x02\x0c\x03",
        "typed_value": {
            "a": {"value": None, "typed_value": 1},
            "b": {"value": None, "typed_value": "x"},
        },
    }
    shape = pv.shredding_schema(
        {
            "parquet.variant.shreddingSchema": '{"type": "ROW", "fields": [{"id": 0, "name": "v",'
            ' "type": {"type": "ROW", "fields": [{"id": 1, "name": "a", "type": "INT"},'
            ' {"id": 2, "name": "b", "type": "STRING"}]}}]}'
        }
    )["v"]  # type: ignore[index]
    ours = pv.shred(variant_array(['{"a": 1, "b": "x", "c": 3}']), shape).to_pylist()[0]
    assert ours == java
    rebuilt = pv.rebuild(pa.array([java], pv.physical_type(shape)))
    assert json.loads(as_json(rebuilt)[0] or "") == {"a": 1, "b": "x", "c": 3}


def test_rebuild_refuses_malformed_shredding() -> None:
    shape = pv.Shape(scalar=parse_data_type("INT"))
    broken = pa.array(
        [{"metadata": b"\x01\x00\x00", "value": None, "typed_value": None}],
        pv.physical_type(shape),
    )
    with pytest.raises(pv.MalformedVariant, match="no value"):
        pv.rebuild(broken)
    with pytest.raises(pv.MalformedVariant, match="Invalid variant shredding"):
        pv.rebuild(pa.array([{"value": b"\x00", "other": b""}]))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"type": "ROW", "fields": [{"id": 0, "name": "v", "type": "TIMESTAMP(6)"}]}', "Invalid"),
        ('{"type": "ROW", "fields": [{"id": 0, "name": "v", "type": "MAP<INT, INT>"}]}', "Invalid"),
        ('"INT"', "ROW"),
        ('{"type": "ROW", "fields": [{"id": 0, "name": "v", "type": "CHAR(3)"}]}', "Invalid"),
        ('{"type": "ROW", "fields": [{"id": 0, "name": "v", "type": "BYTES"}]}', "Invalid"),
        ('{"type": "ROW", "fields": [{"id": 0, "name": "v", "type": "BINARY(4)"}]}', "fixed"),
        ("{not json", "not the JSON"),
    ],
)
def test_bad_shredding_schema(text: str, message: str) -> None:
    with pytest.raises(SchemaError, match=message):
        pv.shredding_schema({"variant.shreddingSchema": text})


def test_rebuild_reads_typed_dates_and_timestamps() -> None:
    """Typed values Java's reader takes though its writer never shreds to them."""
    metadata = b"\x01\x00\x00"
    when = dt.datetime(2024, 5, 6, 7, 8, 9, 123456)
    rows = [
        {
            "metadata": metadata,
            "value": None,
            "typed_value": {"d": {"typed_value": dt.date(2024, 5, 6)}, "t": {"typed_value": when}},
        },
    ]
    group = pa.struct(
        [
            pa.field("metadata", pa.binary(), False),
            pa.field("value", pa.binary()),
            pa.field(
                "typed_value",
                pa.struct(
                    [
                        pa.field(
                            "d",
                            pa.struct([("value", pa.binary()), ("typed_value", pa.date32())]),
                            False,
                        ),
                        pa.field(
                            "t",
                            pa.struct(
                                [("value", pa.binary()), ("typed_value", pa.timestamp("us"))]
                            ),
                            False,
                        ),
                    ]
                ),
            ),
        ]
    )
    (got,) = as_json(pv.rebuild(pa.array(rows, group)))
    micros = (when - dt.datetime(1970, 1, 1)) // dt.timedelta(microseconds=1)
    assert json.loads(got or "") == {"d": "2024-05-06", "t": micros}


def test_fill_null_children_lets_pyarrow_write_null_rows() -> None:
    children = [pa.array([b"\x0c\x01", None]), pa.array([b"\x01\x00\x00", None])]
    column = pa.StructArray.from_arrays(
        children, fields=list(to_arrow_type(VARIANT())), mask=pa.array([False, True])
    )
    filled = pv.fill_null_children(column)
    assert filled.is_null().to_pylist() == [False, True]
    assert filled.field(0).null_count == 0
    assert filled.to_pylist() == column.to_pylist()


# ------------------------------------------------------------------------- tables


def _table(warehouse: str, **kw: object) -> FileStoreTable:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    schema = pa.schema([pa.field("k", pa.int32()), pa.field("v", to_arrow_type(VARIANT()))])
    return catalog.create_table("db.t", schema, **kw)  # type: ignore[arg-type]


def _data(ks: list[int], texts: list[str | None]) -> pa.Table:
    return pa.table({"k": pa.array(ks, pa.int32()), "v": variant_array(texts)})


def _read(table: FileStoreTable) -> list[tuple[int, str | None]]:
    data = table.to_arrow()
    return sorted(zip(data.column("k").to_pylist(), as_json(data.column("v")), strict=True))


def test_plain_table_writes_value_and_metadata_without_stats(warehouse: str) -> None:
    table = _table(warehouse)
    table.write_arrow(_data([1, 2], ['{"a": 1}', None]))
    assert _read(table) == [(1, '{"a":1}'), (2, None)]
    (path,) = glob.glob(f"{table.path}/bucket-0/*.parquet")
    group = pq.ParquetFile(path).schema_arrow.field("v").type
    assert [group.field(i).name for i in range(group.num_fields)] == ["value", "metadata"]
    (split,) = table.new_scan().plan()
    (meta,) = split.files
    assert meta.value_stats_cols == ("k",)  # as Java: no stats of the VARIANT group


def test_shredded_table_writes_typed_columns_and_reads_them_back(warehouse: str) -> None:
    table = _table(warehouse, options={"variant.shreddingSchema": SHAPE_JSON})
    texts: list[str | None] = [*DOCUMENTS, None]
    table.write_arrow(_data(list(range(len(texts))), texts))
    (path,) = glob.glob(f"{table.path}/bucket-0/*.parquet")
    group = pq.ParquetFile(path).schema_arrow.field("v").type
    assert [group.field(i).name for i in range(group.num_fields)] == [
        "metadata",
        "value",
        "typed_value",
    ]
    # Java's reader converts the shredded group to a Paimon type: every field needs an id.
    ids = re.findall(
        r"(?:required|optional) (?:group|binary|int32|int64)\S* field_id=(-?\d+)",
        str(pq.ParquetFile(path).schema),
    )
    assert ids and "-1" not in ids[1:]  # [0] is the file's root
    got = _read(table)
    assert [k for k, _ in got] == list(range(len(texts)))
    assert [None if t is None else json.loads(t) for _, t in got] == [
        None if t is None else json.loads(t) for t in texts
    ]


def test_shredding_needs_parquet(warehouse: str) -> None:
    table = _table(
        warehouse, options={"variant.shreddingSchema": SHAPE_JSON, "file.format": "avro"}
    )
    with pytest.raises(UnsupportedFeature, match="does not support VARIANT write plans"):
        table.write_arrow(_data([1], ["1"]))
    assert table.latest_snapshot() is None


def test_inferred_shredding_is_refused_for_writes(warehouse: str) -> None:
    with pytest.raises(UnsupportedFeature, match=r"variant\.inferShreddingSchema"):
        _table(warehouse, options={"variant.inferShreddingSchema": "true"})


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"primary_keys": ["v"]}, "VariantType in primary key field v"),
        ({"partition_keys": ["v"]}, "VariantType in partition field v"),
        ({"options": {"bucket": "2", "bucket-key": "v"}}, "VariantType in bucket key field v"),
    ],
)
def test_variant_cannot_be_a_key(warehouse: str, kw: dict[str, object], message: str) -> None:
    with pytest.raises(SchemaError, match=message):
        _table(warehouse, **kw)
    assert FileSystemCatalog(warehouse).list_tables("db") == []


def test_malformed_shredding_stops_the_read_naming_the_file(tmp_path: Path) -> None:
    shape = pv.Shape(scalar=parse_data_type("INT"))
    broken = pa.array(
        [{"metadata": b"\x01\x00\x00", "value": None, "typed_value": None}],
        pv.physical_type(shape),
    )
    path = str(tmp_path / "data-broken-0.parquet")
    pq.write_table(pa.table({"v": broken}), path)
    with pytest.raises(
        DataFileUnreadable, match=r"data-broken-0\.parquet of table db\.t as Parquet: MALFORMED"
    ):
        read_data_file(LocalFileIO(), path, [("v", VARIANT())], "db.t")

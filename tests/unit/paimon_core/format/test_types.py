"""Data types: the schema-JSON grammar (as Java writes and parses it) and the Arrow mapping."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paimon_core.exceptions import SchemaError
from paimon_core.format.types import (
    ARRAY,
    BIGINT,
    BINARY,
    BOOLEAN,
    BYTES,
    CHAR,
    DATE,
    DECIMAL,
    DOUBLE,
    FLOAT,
    INT,
    MAP,
    MULTISET,
    ROW,
    SMALLINT,
    STRING,
    TIME,
    TIMESTAMP,
    TIMESTAMP_LTZ,
    TINYINT,
    VARBINARY,
    VARCHAR,
    VECTOR,
    DataField,
    DataType,
    FieldIds,
    data_field_from_json,
    data_type_to_json,
    from_arrow_type,
    highest_field_id,
    parse_data_type,
    reassign_field_ids,
    to_arrow_schema,
    to_arrow_type,
)

# (input string, what Java writes back)
ATOMIC = [
    ("BOOLEAN", "BOOLEAN"),
    ("TINYINT", "TINYINT"),
    ("SMALLINT", "SMALLINT"),
    ("INT", "INT"),
    ("INTEGER", "INT"),
    ("integer not null", "INT NOT NULL"),
    ("BIGINT NOT NULL", "BIGINT NOT NULL"),
    ("BIGINT NULL", "BIGINT"),
    ("FLOAT", "FLOAT"),
    ("DOUBLE", "DOUBLE"),
    ("DOUBLE PRECISION", "DOUBLE"),
    ("DECIMAL", "DECIMAL(10, 0)"),
    ("DECIMAL(12)", "DECIMAL(12, 0)"),
    ("DECIMAL(10,2)", "DECIMAL(10, 2)"),
    ("NUMERIC(38, 18) NOT NULL", "DECIMAL(38, 18) NOT NULL"),
    ("DEC(5, 5)", "DECIMAL(5, 5)"),
    ("CHAR", "CHAR(1)"),
    ("CHAR(5)", "CHAR(5)"),
    ("VARCHAR(20)", "VARCHAR(20)"),
    ("VARCHAR(2147483647)", "STRING"),
    ("STRING", "STRING"),
    ("STRING NOT NULL", "STRING NOT NULL"),
    ("BINARY(16)", "BINARY(16)"),
    ("VARBINARY(16)", "VARBINARY(16)"),
    ("VARBINARY(2147483647)", "BYTES"),
    ("BYTES", "BYTES"),
    ("DATE", "DATE"),
    ("TIME", "TIME(0)"),
    ("TIME(3) WITHOUT TIME ZONE", "TIME(3)"),
    ("TIMESTAMP", "TIMESTAMP(6)"),
    ("TIMESTAMP(3)", "TIMESTAMP(3)"),
    ("TIMESTAMP(9) WITHOUT TIME ZONE", "TIMESTAMP(9)"),
    ("TIMESTAMP_LTZ", "TIMESTAMP(6) WITH LOCAL TIME ZONE"),
    ("TIMESTAMP_LTZ(3)", "TIMESTAMP(3) WITH LOCAL TIME ZONE"),
    ("TIMESTAMP(3) WITH LOCAL TIME ZONE", "TIMESTAMP(3) WITH LOCAL TIME ZONE"),
    ("timestamp(0) with local time zone not null", "TIMESTAMP(0) WITH LOCAL TIME ZONE NOT NULL"),
    ("VARIANT", "VARIANT"),
    ("BLOB", "BLOB"),
]


@pytest.mark.parametrize(("text", "java"), ATOMIC)
def test_atomic_types_parse_and_serialize_as_java(text: str, java: str) -> None:
    t = parse_data_type(text)
    assert data_type_to_json(t) == java
    assert parse_data_type(java) == t
    assert str(t) == java


def test_parameters_land_in_fields() -> None:
    assert parse_data_type("DECIMAL(12, 3) NOT NULL") == DataType(
        "DECIMAL", False, precision=12, scale=3
    )
    assert parse_data_type("STRING") == DataType("VARCHAR", length=2147483647)
    assert parse_data_type("TIMESTAMP_LTZ(3)") == TIMESTAMP_LTZ(3)
    assert parse_data_type("CHAR(5)").length == 5
    assert parse_data_type("TIME(3)").precision == 3


def test_constructors_build_what_the_parser_builds() -> None:
    pairs = [
        (BOOLEAN(), "BOOLEAN"),
        (TINYINT(), "TINYINT"),
        (SMALLINT(False), "SMALLINT NOT NULL"),
        (INT(), "INT"),
        (BIGINT(), "BIGINT"),
        (FLOAT(), "FLOAT"),
        (DOUBLE(), "DOUBLE"),
        (DECIMAL(20, 4), "DECIMAL(20, 4)"),
        (CHAR(3), "CHAR(3)"),
        (VARCHAR(8), "VARCHAR(8)"),
        (STRING(), "STRING"),
        (BINARY(2), "BINARY(2)"),
        (VARBINARY(4), "VARBINARY(4)"),
        (BYTES(), "BYTES"),
        (DATE(), "DATE"),
        (TIME(3), "TIME(3)"),
        (TIMESTAMP(), "TIMESTAMP(6)"),
        (TIMESTAMP_LTZ(9), "TIMESTAMP_LTZ(9)"),
    ]
    for built, text in pairs:
        assert built == parse_data_type(text)


def test_composite_types_serialize_as_java_objects() -> None:
    row = ROW([DataField(5, "x", INT(False), "the x"), DataField(6, "y", STRING())], False)
    t = MAP(STRING(False), ARRAY(row), nullable=True)
    assert data_type_to_json(t) == {
        "type": "MAP",
        "key": "STRING NOT NULL",
        "value": {
            "type": "ARRAY",
            "element": {
                "type": "ROW NOT NULL",
                "fields": [
                    {"id": 5, "name": "x", "type": "INT NOT NULL", "description": "the x"},
                    {"id": 6, "name": "y", "type": "STRING"},
                ],
            },
        },
    }
    assert data_type_to_json(MULTISET(INT(), False)) == {
        "type": "MULTISET NOT NULL",
        "element": "INT",
    }
    assert data_type_to_json(VECTOR(FLOAT(False), 3)) == {
        "type": "VECTOR",
        "element": "FLOAT NOT NULL",
        "length": 3,
    }
    assert (
        str(t) == "MAP<STRING NOT NULL, ARRAY<ROW<`x` INT NOT NULL 'the x', `y` STRING> NOT NULL>>"
    )


def test_composite_json_round_trips_with_field_ids() -> None:
    obj = {
        "type": "ARRAY NOT NULL",
        "element": {
            "type": "ROW",
            "fields": [
                {"id": 7, "name": "a", "type": "BIGINT", "defaultValue": "0"},
                {"id": 8, "name": "b", "type": {"type": "MAP", "key": "INT", "value": "BYTES"}},
            ],
        },
    }
    t = parse_data_type(obj)
    assert not t.nullable and t.element is not None and t.element.nullable
    fields = t.element.fields
    assert fields is not None
    assert [f.id for f in fields] == [7, 8] and fields[0].default_value == "0"
    assert data_type_to_json(t) == obj


def test_composite_nullability_follows_not_null_anywhere_in_type() -> None:
    # Java decides by typeString.contains("NOT NULL"), so extra keys such as pypaimon's
    # "nullable" are ignored.
    t = parse_data_type({"type": "ARRAY NOT NULL", "element": "INT", "nullable": True})
    assert not t.nullable
    assert parse_data_type(
        {"type": "MAP", "key": "INT", "value": "INT", "nullable": False}
    ).nullable


def test_fields_without_ids_are_numbered_and_string_rows_parse() -> None:
    ids = FieldIds()
    f = data_field_from_json({"name": "r", "type": {"type": "ROW", "fields": [
        {"name": "x", "type": "INT"}, {"name": "y", "type": "STRING"}]}}, ids)  # fmt: skip
    assert f.id == 0 and [g.id for g in f.type.fields or ()] == [1, 2]
    t = parse_data_type("ROW<`a b` INT NOT NULL 'it''s', c ARRAY<STRING>>")
    assert t.fields is not None
    assert [(g.name, str(g.type), g.description) for g in t.fields] == [
        ("a b", "INT NOT NULL", "it's"),
        ("c", "ARRAY<STRING>", None),
    ]
    assert parse_data_type("INT ARRAY NOT NULL") == ARRAY(INT(), False)
    assert parse_data_type("STRING MULTISET") == MULTISET(STRING())
    assert parse_data_type("VECTOR<FLOAT NOT NULL, 4>") == VECTOR(FLOAT(False), 4)


@pytest.mark.parametrize(
    "bad",
    [
        "FOO",
        "",
        "INT NOT",
        "DECIMAL(10, 2",
        "DECIMAL(39, 2)",
        "DECIMAL(5, 6)",
        "TIMESTAMP(10)",
        "TIMESTAMP(3) WITH TIME ZONE",
        "VARCHAR(x)",
        "CHAR(0)",
        "INTERVAL DAY",
        "VECTOR<STRING, 3>",
        "MAP<INT>",
        {"type": "ARRAY"},
        {"type": "ROW", "fields": "x"},
        {"type": "MAP", "key": "INT"},
        {"element": "INT"},
        42,
    ],
)
def test_unparseable_types_raise_one_line_schema_errors(bad: object) -> None:
    with pytest.raises(SchemaError) as info:
        parse_data_type(bad)  # type: ignore[arg-type]
    assert "\n" not in str(info.value) and str(info.value)


def test_invalid_constructions_are_rejected() -> None:
    with pytest.raises(SchemaError):
        DataType("NUMBER")
    with pytest.raises(SchemaError):
        DataType("ARRAY")
    with pytest.raises(SchemaError):
        VECTOR(INT(), 0)


def test_copy_changes_only_nullability() -> None:
    t = DECIMAL(20, 2)
    assert t.copy(False) == DECIMAL(20, 2, nullable=False)
    assert t.copy(True) is t
    assert hash(t) == hash(DECIMAL(20, 2)) and t != t.copy(False)


def test_type_predicates() -> None:
    assert STRING().is_string and CHAR().is_string and not BYTES().is_string
    assert BINARY().is_binary and BYTES().is_binary
    assert TINYINT().is_integer and not DECIMAL().is_integer and DECIMAL().is_numeric
    assert TIMESTAMP_LTZ().is_timestamp and not DATE().is_timestamp
    assert ARRAY(INT()).is_nested and not STRING().is_nested
    assert DECIMAL(18, 2).is_compact and not DECIMAL(19, 2).is_compact
    assert TIMESTAMP(3).is_compact and not TIMESTAMP(4).is_compact and not STRING().is_compact


def test_field_ids_java_way() -> None:
    nested = ROW(
        [
            DataField(0, "x", INT()),
            DataField(0, "s", ROW([DataField(0, "q", STRING())])),
            DataField(0, "m", MAP(INT(), ROW([DataField(0, "v", INT())]))),
        ]
    )
    ids = FieldIds(10)  # the column itself took 10
    out = reassign_field_ids(nested, ids)
    assert out.fields is not None
    # Java's ReassignFieldId visits a nested field's type before giving the field its id.
    assert [f.id for f in out.fields] == [11, 13, 15]
    assert out.fields[1].type.fields[0].id == 12  # type: ignore[index]
    assert out.fields[2].type.value.fields[0].id == 14  # type: ignore[union-attr,index]
    fields = [DataField(10, "c", out), DataField(1073741823, "_KEY_c", INT())]
    assert highest_field_id(fields) == 15
    assert highest_field_id([]) == -1


# ----------------------------------------------------------------------------- Arrow

ARROW = [
    (BOOLEAN(), pa.bool_()),
    (TINYINT(), pa.int8()),
    (SMALLINT(), pa.int16()),
    (INT(), pa.int32()),
    (BIGINT(), pa.int64()),
    (FLOAT(), pa.float32()),
    (DOUBLE(), pa.float64()),
    (DECIMAL(10, 2), pa.decimal128(10, 2)),
    (DECIMAL(38, 0), pa.decimal128(38, 0)),
    (CHAR(3), pa.string()),
    (VARCHAR(5), pa.string()),
    (STRING(), pa.string()),
    (BINARY(4), pa.binary()),
    (BYTES(), pa.binary()),
    (DATE(), pa.date32()),
    (TIME(0), pa.time32("ms")),
    (TIME(3), pa.time32("ms")),
    (TIME(6), pa.time64("us")),
    (TIMESTAMP(0), pa.timestamp("ms")),
    (TIMESTAMP(3), pa.timestamp("ms")),
    (TIMESTAMP(4), pa.timestamp("us")),
    (TIMESTAMP(6), pa.timestamp("us")),
    (TIMESTAMP(9), pa.timestamp("ns")),
    (TIMESTAMP_LTZ(3), pa.timestamp("ms", tz="UTC")),
    (TIMESTAMP_LTZ(6), pa.timestamp("us", tz="UTC")),
    (ARRAY(INT(False)), pa.list_(pa.field("element", pa.int32(), nullable=False))),
    (MAP(STRING(), BIGINT()), pa.map_(pa.string(), pa.int64())),
    (MULTISET(STRING()), pa.map_(pa.string(), pa.field("value", pa.int32(), nullable=False))),
    (VECTOR(FLOAT(), 3), pa.list_(pa.float32(), 3)),
    (ROW([DataField(1, "a", INT(False)), DataField(2, "b", STRING())]),
     pa.struct([pa.field("a", pa.int32(), nullable=False), pa.field("b", pa.string())])),
]  # fmt: skip


@pytest.mark.parametrize(("paimon", "arrow"), ARROW)
def test_to_arrow_type(paimon: DataType, arrow: pa.DataType) -> None:
    assert to_arrow_type(paimon) == arrow


def test_arrow_nested_children_carry_nullability_and_ids() -> None:
    t = to_arrow_type(ROW([DataField(4, "a", INT(False)), DataField(5, "b", ARRAY(STRING()))]))
    assert not t.field("a").nullable and t.field("a").metadata == {b"PARQUET:field_id": b"4"}
    assert t.field("b").type.value_field.nullable
    m = to_arrow_type(MAP(INT(), STRING(False)))
    assert not m.key_field.nullable and not m.item_field.nullable


def test_arrow_schema_writes_paimon_field_ids_to_parquet(tmp_path: Path) -> None:
    fields = [
        DataField(0, "k", BIGINT(False)),
        DataField(7, "v", STRING()),
        DataField(3, "r", ROW([DataField(4, "x", INT())])),
    ]
    schema = to_arrow_schema(fields)
    assert [f.nullable for f in schema] == [False, True, True]
    path = tmp_path / "f.parquet"
    pq.write_table(pa.table({"k": [1], "v": ["a"], "r": [{"x": 1}]}, schema=schema), path)
    text = str(pq.ParquetFile(path).schema)
    assert "field_id=0 k" in text and "field_id=7 v" in text
    assert "field_id=3 r" in text and "field_id=4 x" in text


FROM_ARROW = [
    (pa.bool_(), "BOOLEAN"),
    (pa.int8(), "TINYINT"),
    (pa.int16(), "SMALLINT"),
    (pa.int32(), "INT"),
    (pa.int64(), "BIGINT"),
    (pa.uint8(), "SMALLINT"),
    (pa.uint32(), "BIGINT"),
    (pa.float16(), "FLOAT"),
    (pa.float32(), "FLOAT"),
    (pa.float64(), "DOUBLE"),
    (pa.string(), "STRING"),
    (pa.large_string(), "STRING"),
    (pa.binary(), "BYTES"),
    (pa.large_binary(), "BYTES"),
    (pa.binary(16), "BINARY(16)"),
    (pa.decimal128(12, 3), "DECIMAL(12, 3)"),
    (pa.date32(), "DATE"),
    (pa.date64(), "DATE"),
    (pa.time32("ms"), "TIME(3)"),
    (pa.time64("us"), "TIME(6)"),
    (pa.timestamp("s"), "TIMESTAMP(0)"),
    (pa.timestamp("ms"), "TIMESTAMP(3)"),
    (pa.timestamp("us"), "TIMESTAMP(6)"),
    (pa.timestamp("ns"), "TIMESTAMP(9)"),
    (pa.timestamp("us", tz="Europe/Paris"), "TIMESTAMP(6) WITH LOCAL TIME ZONE"),
    (pa.dictionary(pa.int32(), pa.string()), "STRING"),
    (pa.list_(pa.field("e", pa.int32(), nullable=False)), "ARRAY<INT NOT NULL>"),
    (pa.large_list(pa.string()), "ARRAY<STRING>"),
    (pa.list_(pa.float32(), 4), "VECTOR<FLOAT, 4>"),
    (pa.list_(pa.string(), 2), "ARRAY<STRING>"),
    (pa.map_(pa.string(), pa.int64()), "MAP<STRING NOT NULL, BIGINT>"),
    (pa.struct([pa.field("a", pa.int32(), nullable=False), ("b", pa.string())]),
     "ROW<`a` INT NOT NULL, `b` STRING>"),
    (pa.struct([pa.field("value", pa.binary(), False), pa.field("metadata", pa.binary(), False)]),
     "VARIANT"),
]  # fmt: skip


@pytest.mark.parametrize(("arrow", "sql"), FROM_ARROW)
def test_from_arrow_type(arrow: pa.DataType, sql: str) -> None:
    assert str(from_arrow_type(arrow)) == sql
    assert not from_arrow_type(arrow, nullable=False).nullable


@pytest.mark.parametrize(
    "arrow",
    [pa.uint64(), pa.null(), pa.decimal256(40, 2), pa.dense_union([pa.field("a", pa.int8())])],
)
def test_from_arrow_rejects_types_without_paimon_equivalent(arrow: pa.DataType) -> None:
    with pytest.raises(SchemaError, match="Unsupported Arrow type"):
        from_arrow_type(arrow)


def test_arrow_round_trip_of_common_types() -> None:
    for t in [INT(), BIGINT(False), STRING(), BYTES(), DECIMAL(7, 2), DATE(), TIMESTAMP(6),
              TIMESTAMP_LTZ(3), TIMESTAMP(9), ARRAY(STRING()), MAP(STRING(False), DOUBLE())]:  # fmt: skip
        assert from_arrow_type(to_arrow_type(t), t.nullable) == t


# ------------------------------------------------------------------- property: JSON trip

_atomic = st.one_of(
    st.sampled_from([BOOLEAN(), TINYINT(), SMALLINT(), INT(), BIGINT(), FLOAT(), DOUBLE(), DATE()]),
    st.builds(lambda p, s: DECIMAL(p, min(s, p)), st.integers(1, 38), st.integers(0, 38)),
    st.builds(CHAR, st.integers(1, 2147483647)),
    st.builds(VARCHAR, st.integers(1, 2147483647)),
    st.builds(BINARY, st.integers(1, 100)),
    st.builds(VARBINARY, st.integers(1, 2147483647)),
    st.builds(TIME, st.integers(0, 9)),
    st.builds(TIMESTAMP, st.integers(0, 9)),
    st.builds(TIMESTAMP_LTZ, st.integers(0, 9)),
).flatmap(lambda t: st.sampled_from([t, t.copy(False)]))

_names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=8)


def _extend(children: st.SearchStrategy[DataType]) -> st.SearchStrategy[DataType]:
    field = st.builds(
        DataField, st.integers(0, 10**6), _names, children, st.none() | _names, st.none() | _names
    )
    return st.one_of(
        st.builds(ARRAY, children, st.booleans()),
        st.builds(MULTISET, children, st.booleans()),
        st.builds(MAP, children, children, st.booleans()),
        st.builds(ROW, st.lists(field, max_size=3), st.booleans()),
    )


@settings(max_examples=200, deadline=None)
@given(st.recursive(_atomic, _extend, max_leaves=8))
def test_any_type_survives_a_json_round_trip(t: DataType) -> None:
    text = json.dumps(data_type_to_json(t))
    assert parse_data_type(json.loads(text)) == t
    if not t.is_nested:
        assert parse_data_type(str(t)) == t

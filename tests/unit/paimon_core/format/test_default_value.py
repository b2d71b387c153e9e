"""Column defaults: Paimon's text -> value conversion, and the table write filling NULLs."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import InvalidArgument, SchemaError
from paimon_core.format.default_value import default_scalar, validate_defaults
from paimon_core.format.schema import UpdateColumnDefaultValue, apply_changes, new_table_schema
from paimon_core.format.types import DataField, DataType, parse_data_type


def _type(text: str) -> DataType:
    return parse_data_type(text)


@pytest.mark.parametrize(
    ("type_text", "default", "value"),
    [
        ("INT", "5", 5),
        ("BIGINT", "-2", -2),
        ("DOUBLE", "1.5", 1.5),
        ("DECIMAL(5, 2)", "1.5", Decimal("1.50")),
        ("STRING", "'my_value'", "my_value"),
        ("STRING", "plain", "plain"),
        ("CHAR(3)", "'x'", "x  "),
        ("BOOLEAN", "true", True),
        ("BOOLEAN", "FALSE", False),
        ("DATE", "'2024-01-02'", dt.date(2024, 1, 2)),
        ("TIMESTAMP(6)", "'2024-01-02 03:04:05'", dt.datetime(2024, 1, 2, 3, 4, 5)),
    ],
)
def test_default_text_converts_as_paimon(type_text: str, default: str, value: object) -> None:
    assert default_scalar(_type(type_text), default).as_py() == value


@pytest.mark.parametrize(
    ("type_text", "default"),
    [
        ("INT", "'abc'"),
        ("INT", "1.5x"),
        ("BOOLEAN", "maybe"),
        ("VARCHAR(2)", "'abc'"),
        ("ARRAY<STRING>", "ARRAY('a')"),
        ("TIMESTAMP(6)", "current_timestamp()"),
    ],
)
def test_unsupported_default_is_paimons_error(type_text: str, default: str) -> None:
    field = DataField(0, "a", _type(type_text), default_value=default)
    with pytest.raises(SchemaError, match=r"Unsupported default value `.+` for type "):
        validate_defaults([field])


def test_table_write_fills_nulls_with_defaults(warehouse: str) -> None:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    schema = new_table_schema(
        [
            DataField(0, "a", _type("INT")),
            DataField(1, "b", _type("INT NOT NULL"), default_value="7"),
            DataField(2, "s", _type("STRING"), default_value="'v'"),
        ]
    )
    table = catalog.create_table("db.t", schema)
    data = pa.table(
        {
            "a": pa.array([1, 2], pa.int32()),
            "b": pa.array([None, 3], pa.int32()),
            "s": pa.array(["x", None]),
        }
    )
    table.write_arrow(data)
    got = sorted(table.to_arrow().to_pylist(), key=lambda r: r["a"])
    assert got == [{"a": 1, "b": 7, "s": "x"}, {"a": 2, "b": 3, "s": "v"}]
    # A NOT NULL column without a default still refuses NULL.
    plain = catalog.create_table(
        "db.p", new_table_schema([DataField(0, "a", _type("INT NOT NULL"))])
    )
    with pytest.raises(InvalidArgument, match="non-null column 'a'"):
        plain.write_arrow(pa.table({"a": pa.array([None], pa.int32())}))


def test_update_column_default_value_sets_checks_and_drops() -> None:
    """Java's ``updateColumnDefaultValue``: nested fields too; an unconvertible default is
    refused with Paimon's message; None drops it."""
    old = new_table_schema(
        [DataField(0, "a", _type("INT")), DataField(1, "s", _type("ROW<x INT, y STRING>"))]
    )
    new = apply_changes(
        old, [UpdateColumnDefaultValue("a", "5"), UpdateColumnDefaultValue(("s", "y"), "'q'")]
    )
    assert new.field("a").default_value == "5"
    assert new.field("s").type.fields[1].default_value == "'q'"
    assert new.schema_id == old.schema_id + 1
    with pytest.raises(SchemaError, match="Unsupported default value `x`"):
        apply_changes(new, [UpdateColumnDefaultValue("a", "x")])
    assert (
        apply_changes(new, [UpdateColumnDefaultValue("a", None)]).field("a").default_value is None
    )

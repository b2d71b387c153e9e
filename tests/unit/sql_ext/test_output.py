"""Result formatting of the shell: aligned table, TSV and JSON lines, from plain Python values."""

from __future__ import annotations

import datetime as dt
import io
import json
from decimal import Decimal
from typing import Any

import pytest
from pyspark.sql import Row

from sql_ext.output import (
    OutputFormat,
    format_rows,
    json_keys,
    json_value,
    text_value,
    write_result,
)


def lines(columns: list[str], rows: list[tuple[Any, ...]], fmt: str) -> list[str]:
    return list(format_rows(columns, rows, fmt))


def test_table_is_show_layout_without_truncation() -> None:
    long = "x" * 60
    assert lines(["id", "name"], [(1, "a"), (22, long)], "table") == [
        "+---+" + "-" * 60 + "+",
        "|id |name" + " " * 56 + "|",
        "+---+" + "-" * 60 + "+",
        "|1  |a" + " " * 59 + "|",
        "|22 |" + long + "|",
        "+---+" + "-" * 60 + "+",
    ]


def test_table_without_rows_keeps_the_header() -> None:
    assert lines(["snapshot_id"], [], "table") == [
        "+-----------+",
        "|snapshot_id|",
        "+-----------+",
        "+-----------+",
    ]


def test_table_aligns_wide_characters_and_breaks_lines_within_a_row() -> None:
    out = lines(["k", "v"], [("日本", "a\nbcde\tf"), ("x", None)], "table")
    assert out[3:6] == ["|日本|a      |", "|    |bcde\\tf|", "|x   |NULL   |"]


@pytest.mark.parametrize("fmt", list(OutputFormat))
def test_no_columns_prints_nothing(fmt: OutputFormat) -> None:
    assert lines([], [(), ()], fmt) == []


def test_tsv_has_a_header_and_escapes_separators() -> None:
    rows = [(1, "a\tb", None, True), (2, "back\\slash\nnl", Decimal("1.50"), False)]
    assert lines(["id", "s", "d", "b"], rows, "tsv") == [
        "id\ts\td\tb",
        "1\ta\\tb\tNULL\ttrue",
        "2\tback\\\\slash\\nnl\t1.50\tfalse",
    ]


def test_text_values_follow_spark_show() -> None:
    assert text_value(dt.datetime(2024, 1, 2, 3, 4, 5)) == "2024-01-02 03:04:05"
    assert text_value(dt.datetime(2024, 1, 2, 3, 4, 5, 120000)) == "2024-01-02 03:04:05.12"
    assert text_value(dt.date(2024, 1, 2)) == "2024-01-02"
    assert text_value(Decimal("1E+2")) == "100"
    assert text_value(float("nan")) == "NaN"
    assert text_value(float("-inf")) == "-Infinity"
    assert text_value(b"\x0a\xff") == "[0A FF]"
    assert text_value([1, None, "a"]) == "[1, null, a]"
    assert text_value({"k": [1, 2]}) == "{k -> [1, 2]}"
    assert text_value(Row(a=1, b="x")) == "{1, x}"


def test_json_lines_are_typed() -> None:
    stamp = dt.datetime(2024, 1, 2, 3, 4, 5, 500000)
    row = (7, 1.5, Decimal("12.50"), True, None, stamp, dt.date(2024, 1, 2), "é")
    columns = ["i", "f", "dec", "b", "n", "ts", "d", "s"]
    (line,) = lines(columns, [row], "json")
    assert json.loads(line) == {
        "i": 7,
        "f": 1.5,
        "dec": "12.50",
        "b": True,
        "n": None,
        "ts": "2024-01-02T03:04:05.500000",
        "d": "2024-01-02",
        "s": "é",
    }
    assert "é" in line and " " not in line


def test_json_makes_duplicate_column_names_unique_in_order() -> None:
    (line,) = lines(["id", "id"], [(1, 2)], "json")
    assert line == '{"id":1,"id_2":2}'
    (line,) = lines(["id", "id_2", "id", "id"], [(1, 2, 3, 4)], "json")
    assert line == '{"id":1,"id_2":2,"id_3":3,"id_4":4}'
    assert json.loads(line) == {"id": 1, "id_2": 2, "id_3": 3, "id_4": 4}
    assert json_keys(["a", "A", "a"]) == ["a", "A", "a_2"]
    # The text formats keep the names as they are.
    assert lines(["id", "id"], [(1, 2)], "tsv")[0] == "id\tid"


def test_json_nested_values_and_special_floats() -> None:
    assert json_value(Row(a=1, tags=["x"])) == {"a": 1, "tags": ["x"]}
    assert json_value({1: b"\x00\x01"}) == {"1": "AAE="}
    assert json_value(float("inf")) == "Infinity"
    assert json.loads(next(format_rows(["x"], [(float("nan"),)], "json"))) == {"x": "NaN"}


class FakeResult:
    def __init__(self, columns: list[str], rows: list[tuple[Any, ...]]) -> None:
        self.columns = columns
        self.rows = rows
        self.collected = 0

    def collect(self) -> list[tuple[Any, ...]]:
        self.collected += 1
        return self.rows


def test_write_result_skips_results_without_columns() -> None:
    out = io.StringIO()
    command = FakeResult([], [])
    assert write_result(command, "table", out) == 0
    assert out.getvalue() == "" and command.collected == 0
    query = FakeResult(["a"], [(1,), (2,)])
    assert write_result(query, "tsv", out) == 2
    assert out.getvalue() == "a\n1\n2\n"


def test_unknown_format_is_rejected() -> None:
    with pytest.raises(ValueError, match="csv"):
        lines(["a"], [(1,)], "csv")

"""In-place text edits and the mapping of positions back to the source."""

from __future__ import annotations

import pytest

from sql_ext.errors import Rewrite
from sql_ext.splice import Edit, position, splice


def test_edits_replace_only_their_spans() -> None:
    text = "SELECT a FROM t -- c\nWHERE b"
    spliced = splice(text, [Edit(14, 15, "view AS t"), Edit(7, 7, "x, ")])
    assert spliced.text == "SELECT x, a FROM view AS t -- c\nWHERE b"
    assert spliced.source_offset(spliced.text.index("WHERE")) == text.index("WHERE")
    assert spliced.source_offset(spliced.text.index("view")) == 14
    assert spliced.source_offset(spliced.text.index("AS t")) == 14  # replaced: the edit start
    assert spliced.source_offset(0) == 0


def test_pieces_are_joined_by_a_space_and_keep_their_edits() -> None:
    text = "WITH a AS (x) INSERT INTO t SELECT * FROM u"
    spliced = splice(text, [Edit(42, 43, "v"), Edit(0, 4, "IGNORED")], [(0, 13), (28, 43)])
    assert spliced.text == "IGNORED a AS (x) SELECT * FROM v"
    assert spliced.source_offset(spliced.text.index("SELECT")) == 28
    spliced = splice(text, [Edit(42, 43, "v")], [(28, 43)])
    assert spliced.text == "SELECT * FROM v"


def test_bad_edits_are_rejected() -> None:
    with pytest.raises(ValueError, match="Overlapping"):
        splice("abcdef", [Edit(0, 3, "x"), Edit(2, 4, "y")])
    with pytest.raises(ValueError, match="straddles"):
        splice("abcdef", [Edit(1, 4, "x")], [(0, 2)])


def test_position_is_sparks_line_and_pos() -> None:
    assert position("ab\ncd\nef", 0) == (1, 0)
    assert position("ab\ncd\nef", 4) == (2, 1)
    assert position("ab\ncd\nef", 8) == (3, 2)


def test_rewrite_puts_spark_positions_and_view_names_back() -> None:
    source = "SELECT *\nFROM t JOIN u ON x = 1"
    edits = [Edit(14, 15, "__paimon_1 AS t"), Edit(21, 22, "__paimon_2 AS u")]
    spliced = splice(source, edits)
    rewrite = Rewrite(spliced, source, 0, {"__paimon_1": "paimon.default.t"})
    at = spliced.text.index("x = 1")
    line, pos = position(spliced.text, at)
    message = f"cannot resolve `x`; line {line} pos {pos};\n+- View (`__paimon_1`)"
    assert rewrite.message(message) == (
        f"cannot resolve `x`; line 2 pos {source.split(chr(10))[1].index('x')};\n"
        "+- View (`paimon.default.t`)"
    )
    explained = Rewrite(spliced, source, len("EXPLAIN "), {})
    assert explained.message("(line 1, pos 8)") == "(line 1, pos 0)"
    assert explained.message("== SQL (line 2, position 3) ==") == "== SQL (line 2, position 3) =="
    assert rewrite.message("line 9 pos 0") == "line 9 pos 0"  # not in the text: kept

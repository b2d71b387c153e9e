"""The one tokenizer and the cursor the hand-written grammars share."""

from __future__ import annotations

import pytest

from sql_ext.errors import SqlParseError
from sql_ext.syntax.tokens import Cursor, dotted_name, like_pattern, matches_pattern, tokenize


def test_commands_are_tokenized_word_by_word() -> None:
    assert [t.text for t in tokenize("SHOW TAGS `db`.t")] == ["SHOW", "TAGS", "db", ".", "t"]
    assert [t.text for t in tokenize("EXPLAIN SELECT 1")] == ["EXPLAIN", "SELECT", "1"]


def test_a_text_that_does_not_tokenize_is_a_parse_error() -> None:
    with pytest.raises(SqlParseError, match="Cannot tokenize"):
        tokenize("SELECT 'x")


def test_cursor_reads_keywords_names_and_fails_in_one_line() -> None:
    text = "ALTER TABLE a.`b.c` RETAIN 3 'x'"
    cur = Cursor(tokenize(text), text, "Test")
    assert not cur.peek("ALTER", "VIEW")
    cur.expect("ALTER", "TABLE")
    assert cur.dotted("a name") == ("a", "b.c")
    assert cur.accept("RETAIN") and cur.integer("a number") == 3
    assert cur.rest() == "'x'"
    with pytest.raises(SqlParseError, match=r"Test: a tag must be an identifier .* near 'x'"):
        cur.identifier("a tag")
    assert cur.string("a string") == "x"
    cur.end()
    with pytest.raises(SqlParseError, match="Test: expected TAG at the end of the statement"):
        cur.expect("TAG")


def test_quoted_words_are_no_keywords() -> None:
    text = "`ALTER` TABLE"
    assert not Cursor(tokenize(text), text, "Test").peek("ALTER")


def test_show_helpers() -> None:
    tokens = tokenize("IN paimon.db LIKE 'a*|b'")
    name, position = dotted_name(tokens, 1)
    assert name == ("paimon", "db")
    pattern, position = like_pattern(tokens, position)
    assert pattern == "a*|b" and position == len(tokens)
    assert matches_pattern("abc", pattern) and matches_pattern("B", pattern)
    assert not matches_pattern("c", pattern)

"""Spark's ALTER grammar on sqlglot's tokens: forms, names, and where reading stops."""

from __future__ import annotations

import pytest

from sql_ext.errors import SqlError, SqlParseError
from sql_ext.syntax.alter import is_alter, parse_actions, parse_head


def test_alter_is_recognised_by_its_first_words() -> None:
    assert is_alter("alter table t add column c int")
    assert is_alter("ALTER DATABASE d SET DBPROPERTIES ('a' = 'b')")
    assert not is_alter("ALTER VIEW v AS SELECT 1")
    assert not is_alter("SELECT 'ALTER TABLE'")


def test_parse_actions_reads_unquoted_and_quoted_names() -> None:
    head = parse_head(
        "ALTER TABLE `db`.`my t` ADD COLUMNS (`first` INT FIRST, s.`x y` MAP<STRING, INT>)"
    )
    assert head.name == ("db", "my t")
    statement = parse_actions(head)
    assert [(c.path, c.type_text, c.first) for c in statement.add] == [
        (("first",), "INT", True),
        (("s", "x y"), "MAP<STRING, INT>", False),
    ]
    with pytest.raises(SqlParseError, match="unexpected text"):
        parse_actions(parse_head("ALTER TABLE t RENAME TO u v"))


def test_column_descriptors_and_nested_types() -> None:
    head = parse_head(
        "ALTER TABLE t ADD COLUMNS (m MAP<STRING, ARRAY<INT>> COMMENT 'c' NOT NULL AFTER a, n INT)"
    )
    add = parse_actions(head).add
    assert [(c.path, c.type_text, c.comment, c.not_null, c.after) for c in add] == [
        (("m",), "MAP<STRING, ARRAY<INT>>", "c", True, "a"),
        (("n",), "INT", None, False, None),
    ]
    change = parse_actions(parse_head("ALTER TABLE t ALTER COLUMN s.x TYPE DECIMAL(10, 2)")).alter
    assert [(c.path, c.type_text) for c in change] == [(("s", "x"), "DECIMAL(10, 2)")]


def test_unsupported_forms_and_bad_syntax_are_named() -> None:
    with pytest.raises(SqlError, match=r"SET SERDE is not supported on Paimon table db\.t"):
        parse_actions(parse_head("ALTER TABLE db.t SET SERDE 'x'"))
    with pytest.raises(SqlError, match=r"CREATE BRANCH B .* use CALL sys\.create_branch"):
        parse_actions(parse_head("ALTER TABLE db.t CREATE BRANCH b"))
    with pytest.raises(SqlParseError, match="expected a partition value"):
        parse_actions(parse_head("ALTER TABLE t DROP PARTITION (dt = x)"))
    with pytest.raises(SqlParseError, match="expected TABLE or DATABASE"):
        parse_head("ALTER VIEW v AS SELECT 1")

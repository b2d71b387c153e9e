"""Paimon's tag DDL (ALTER TABLE ... TAG, SHOW TAGS): parsing and effect on the table."""

from __future__ import annotations

import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import PaimonError
from procedures.base import CallContext
from sql_ext.errors import SqlParseError
from sql_ext.statements.tags import run_tag_statement
from sql_ext.syntax.tags import TagStatement, is_tag_ddl, parse_tag_ddl
from tests.unit.procedures.helpers import fingerprint, new_catalog, new_table


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "ALTER TABLE db.t CREATE TAG IF NOT EXISTS `tag-1` AS OF VERSION 3 RETAIN 2 DAYS",
            TagStatement("create", "db.t", "tag-1", None, 3, "2 d", True),
        ),
        ("alter table t create or replace tag x", TagStatement("replace", "t", "x")),
        (
            "ALTER TABLE t REPLACE TAG x AS OF VERSION 1 RETAIN 3 HOURS;",
            TagStatement("replace", "t", "x", None, 1, "3 h"),
        ),
        ("ALTER TABLE t DELETE TAG IF EXISTS `a,b`", TagStatement("delete", "t", "a,b")),
        (
            "ALTER TABLE paimon.db.t RENAME TAG a TO b",
            TagStatement("rename", "paimon.db.t", "a", "b"),
        ),
        ("SHOW TAGS `db`.`t`", TagStatement("show", "db.t")),
    ],
)
def test_parse(text: str, expected: TagStatement) -> None:
    assert is_tag_ddl(text)
    assert parse_tag_ddl(text) == expected


@pytest.mark.parametrize(
    "text", ["ALTER TABLE t ADD COLUMNS (x INT)", "ALTER TABLE tag RENAME TO x", "SHOW TABLES"]
)
def test_other_statements_are_not_tag_ddl(text: str) -> None:
    assert not is_tag_ddl(text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("ALTER TABLE t CREATE TAG 'x'", "must be an identifier"),
        ("ALTER TABLE t CREATE TAG x AS OF VERSION abc", "snapshot id"),
        ("ALTER TABLE t CREATE TAG x RETAIN 2 WEEKS", "DAYS, HOURS or MINUTES"),
        ("ALTER TABLE t RENAME TAG a b", "expected TO"),
        ("SHOW TAGS", "table name"),
        ("SHOW TAGS t; DROP TABLE t", "unexpected text"),
    ],
)
def test_parse_errors_name_the_problem(text: str, message: str) -> None:
    with pytest.raises(SqlParseError, match=message) as err:
        parse_tag_ddl(text)
    assert "\n" not in str(err.value)


def _context(catalog: FileSystemCatalog) -> CallContext:
    return CallContext(catalog, "db", "tag_ddl", catalog_name="paimon")


def _run(catalog: FileSystemCatalog, text: str) -> list[tuple]:
    return run_tag_statement(parse_tag_ddl(text), context=_context(catalog)).rows


def test_statements_change_tags_as_paimon(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=3)
    assert _run(catalog, "ALTER TABLE db.t CREATE TAG `tag-1` AS OF VERSION 1 RETAIN 2 DAYS") == []
    tag = table.tag_manager.get("tag-1")
    assert tag.snapshot_id == 1
    assert tag.tag_time_retained is not None and tag.tag_time_retained.days == 2

    _run(catalog, "ALTER TABLE t CREATE TAG latest")
    assert table.tag_manager.get("latest").snapshot_id == 3
    _run(catalog, "ALTER TABLE t CREATE TAG IF NOT EXISTS latest AS OF VERSION 2")
    assert table.tag_manager.get("latest").snapshot_id == 3
    with pytest.raises(PaimonError, match="latest"):
        _run(catalog, "ALTER TABLE t CREATE TAG latest AS OF VERSION 2")

    _run(catalog, "ALTER TABLE paimon.db.t REPLACE TAG latest AS OF VERSION 2")
    assert table.tag_manager.get("latest").snapshot_id == 2
    _run(catalog, "ALTER TABLE t CREATE OR REPLACE TAG fresh AS OF VERSION 1")
    assert table.tag_manager.get("fresh").snapshot_id == 1

    _run(catalog, "ALTER TABLE t RENAME TAG fresh TO renamed")
    assert _run(catalog, "SHOW TAGS db.t") == [("latest",), ("renamed",), ("tag-1",)]
    _run(catalog, "ALTER TABLE t DELETE TAG `latest,renamed,missing`")
    assert _run(catalog, "SHOW TAGS t") == [("tag-1",)]


@pytest.mark.parametrize(
    "text",
    [
        "ALTER TABLE t CREATE TAG `../x`",
        "ALTER TABLE t CREATE TAG `123`x AS OF VERSION 1",
        "ALTER TABLE t CREATE TAG x AS OF VERSION 99",
        "ALTER TABLE t RENAME TAG nope TO x",
        "ALTER TABLE db.missing CREATE TAG x",
    ],
)
def test_bad_statements_change_nothing(warehouse: str, text: str) -> None:
    catalog = new_catalog(warehouse)
    new_table(catalog, commits=2)
    before = fingerprint(warehouse)
    with pytest.raises((PaimonError, SqlParseError)) as err:
        _run(catalog, text)
    assert "\n" not in str(err.value)
    assert fingerprint(warehouse) == before

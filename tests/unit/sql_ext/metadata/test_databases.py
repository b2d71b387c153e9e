"""CREATE / DROP / DESCRIBE DATABASE read on tokens (every spelling, leading comments)."""

from __future__ import annotations

import pytest

from sql_ext.errors import SqlError
from sql_ext.metadata.databases import (
    check_create,
    describe_database,
    paimon_database,
)
from sql_ext.syntax.databases import parse_database_statement


def test_every_spelling_is_read() -> None:
    create = parse_database_statement(
        "-- a script's comment\n/* and another */ CREATE SCHEMA IF NOT EXISTS paimon.db "
        "COMMENT 'c' WITH DBPROPERTIES (a.b = 1, 'k' = 'v', on = true)"
    )
    assert create is not None and create.action == "create" and create.if_exists
    assert (create.name, create.comment) == (("paimon", "db"), "c")
    assert create.properties == {"a.b": "1", "k": "v", "on": "true"}
    drop = parse_database_statement("DROP NAMESPACE IF EXISTS db CASCADE")
    assert drop is not None and (drop.action, drop.if_exists, drop.cascade) == ("drop", True, True)
    restrict = parse_database_statement("DROP DATABASE db RESTRICT")
    assert restrict is not None and not restrict.cascade
    described = parse_database_statement("DESC DATABASE EXTENDED default")
    assert described is not None and described.extended and described.name == ("default",)
    assert parse_database_statement("CREATE TABLE t (a INT)") is None
    assert parse_database_statement("DROP TABLE db.t") is None


def test_location_and_bad_text_are_one_line_errors() -> None:
    located = parse_database_statement("CREATE DATABASE db LOCATION '/x'")
    assert located is not None
    with pytest.raises(SqlError, match="Cannot specify location for a database"):
        check_create(located)
    for text in ("DESCRIBE DATABASE a b", "CREATE DATABASE db COMMENT", "DROP DATABASE db NOW"):
        with pytest.raises(SqlError, match="DATABASE"):
            parse_database_statement(text)
    with pytest.raises(SqlError, match="Nested namespaces"):
        paimon_database(("a", "b", "c"))
    assert paimon_database(("spark_catalog", "db")) is None


def test_describe_database_is_spark_s_rows_over_no_metadata() -> None:
    assert describe_database("paimon", "db", extended=True).rows == [
        ("Catalog Name", "paimon"),
        ("Namespace Name", "db"),
        ("Properties", ""),
    ]

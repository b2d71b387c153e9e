"""Names that become paths (branch, tag, consumer id, database, table, file-naming options)
through every SQL entry point: refused with one line, nothing written outside the warehouse,
the table unchanged (issue 19, point 2)."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from paimon_core.exceptions import PaimonError
from paimon_core.format.schema import SchemaManager, schema_to_json
from paimon_core.io.fileio import LocalFileIO
from sql_ext.errors import SqlError
from sql_ext.session import PaimonSession

# Six levels up from `<wh>/default.db/T/branch/branch-..`: beside the warehouse.
ESCAPING = "../../../../../../outside"


@pytest.fixture
def session(spark: SparkSession, warehouse: str) -> PaimonSession:
    return PaimonSession(spark, warehouse=warehouse)


def rows(session: PaimonSession, sql: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in session.sql(sql).collect()]


def files_outside(warehouse: str) -> list[str]:
    """Every file under the warehouse's parent directory but not under the warehouse."""
    root = Path(warehouse)
    return sorted(str(p) for p in root.parent.rglob("*") if p.is_file() and root not in p.parents)


def files(warehouse: str) -> dict[str, bytes]:
    return {
        str(p.relative_to(warehouse)): p.read_bytes()
        for p in Path(warehouse).rglob("*")
        if p.is_file()
    }


def refused(session: PaimonSession, sql: str, message: str) -> None:
    with pytest.raises((SqlError, PaimonError), match=message) as info:
        session.sql(sql).collect()
    assert "\n" not in str(info.value)


def _table(session: PaimonSession) -> None:
    session.sql("CREATE TABLE T (id INT) USING paimon")
    session.sql("INSERT INTO T VALUES (1)")


@pytest.mark.parametrize("value", ["../../..", ESCAPING])
def test_alter_table_set_branch_to_a_path_is_refused_and_insert_stays_in_the_table(
    session: PaimonSession, value: str
) -> None:
    _table(session)
    before = files(session.warehouse)
    shown = re.escape(value)
    refused(
        session,
        f"ALTER TABLE T SET TBLPROPERTIES ('branch' = '{value}')",
        rf"ALTER TABLE paimon\.default\.T: Option 'branch' = '{shown}': Branch name .* "
        "must not contain '/'",
    )
    assert files(session.warehouse) == before
    session.sql("INSERT INTO T VALUES (2)")
    assert rows(session, "SELECT id FROM T ORDER BY id") == [(1,), (2,)]
    assert files_outside(session.warehouse) == []


def test_a_stored_bad_branch_fails_clearly_and_unset_repairs_it(session: PaimonSession) -> None:
    """A `branch` stored before names were checked (or by hand) is refused on every read
    and write; `ALTER TABLE ... UNSET TBLPROPERTIES ('branch')` removes it."""
    _table(session)
    path = f"{session.warehouse}/default.db/T"
    manager = SchemaManager(LocalFileIO(), path)
    latest = manager.latest()
    assert latest is not None
    bad = replace(
        latest,
        schema_id=latest.schema_id + 1,
        options={**latest.options, "branch": ESCAPING},
    )
    Path(manager.schema_path(bad.schema_id)).write_text(schema_to_json(bad))
    before = files(session.warehouse)
    message = re.escape(f"Option 'branch' = '{ESCAPING}'") + ".*must not contain '/'"
    for sql in (
        "INSERT INTO T VALUES (2)",
        "SELECT * FROM T",
        "CALL sys.create_tag('default.T', 't1')",
        "ALTER TABLE T SET TBLPROPERTIES ('x' = 'y')",
    ):
        refused(session, sql, message)
    assert files(session.warehouse) == before
    assert files_outside(session.warehouse) == []

    session.sql("ALTER TABLE T UNSET TBLPROPERTIES ('branch')")
    session.sql("INSERT INTO T VALUES (2)")
    assert rows(session, "SELECT id FROM T ORDER BY id") == [(1,), (2,)]
    assert files_outside(session.warehouse) == []

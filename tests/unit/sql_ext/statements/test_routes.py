"""`ROUTES`: every statement type `parse_statement` returns has a family module that runs it."""

from __future__ import annotations

import subprocess
import sys
import typing

from sql_ext.statements.routes import ROUTES, route
from sql_ext.syntax import statements
from sql_ext.syntax.parse import parse_statement


def _statement_types() -> set[type]:
    """The concrete statement types: the `Statement` union's members and every subclass of
    `QueryStatement` (the families sqlglot parses)."""
    found = {t for t in typing.get_args(statements.Statement) if t is not statements.QueryStatement}
    found |= set(statements.QueryStatement.__subclasses__())
    return found


def test_every_statement_type_has_a_route_with_run() -> None:
    types = _statement_types()
    assert len(types) >= 17
    assert types == set(ROUTES)
    for kind in types:
        module = route.__globals__["importlib"].import_module(f"sql_ext.statements.{ROUTES[kind]}")
        assert callable(getattr(module, "run", None)), kind


def test_route_is_looked_up_by_the_parsed_type() -> None:
    assert route(parse_statement("SHOW TAGS t")).__name__ == "sql_ext.statements.tags"
    assert route(parse_statement("SHOW TABLES")).__name__ == "sql_ext.statements.show"
    assert (
        route(parse_statement("CACHE TABLE c AS SELECT 1")).__name__ == "sql_ext.statements.query"
    )


LOCAL_FAMILIES = """
import sys
from sql_ext.statements.routes import ROUTES, route
from sql_ext.syntax.parse import parse_statement
for text in ["CALL sys.expire_snapshots(table => 't')", "SHOW TAGS t", "SHOW TABLES", "USE d",
             "DESCRIBE t", "DESCRIBE DATABASE d", "SELECT * FROM t$snapshots"]:
    assert callable(route(parse_statement(text)).local), text
print(sorted(m for m in sys.modules if m.split('.')[0] == 'pyspark'))
"""


def test_families_answered_without_a_jvm_load_without_pyspark() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", LOCAL_FAMILIES], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"

"""Metadata columns in SQL: which a statement reads, and `*` edited to keep them hidden."""

from __future__ import annotations

import pytest
from sqlglot import exp

from sql_ext.errors import SqlError
from sql_ext.metadata_columns import requested_metadata, star_edits
from sql_ext.splice import splice
from sql_ext.syntax.parse import parse_statement, table_nodes


def _tables(sql: str) -> tuple[str, exp.Expr, dict[str, exp.Table]]:
    statement = parse_statement(sql)
    nodes = {t.alias_or_name: t for t in table_nodes(statement.tree)}
    return statement.parsed, statement.tree, nodes


def _hidden(sql: str, *names: str) -> str:
    """`sql` with the stars over tables `names` edited (each asks for what it names)."""
    text, tree, nodes = _tables(sql)
    tables = [(nodes[n], requested_metadata(tree, nodes[n])) for n in names]
    return splice(text, star_edits(tree, tables)).text


def test_requested_columns_in_paimon_spark_order() -> None:
    _, tree, nodes = _tables(
        "SELECT __PAIMON_BUCKET, t.__paimon_file_path, u.__paimon_row_index FROM t JOIN u ON t.k = u.k"
    )
    assert requested_metadata(tree, nodes["t"]) == ("__paimon_file_path", "__paimon_bucket")
    assert requested_metadata(tree, nodes["u"]) == ("__paimon_row_index", "__paimon_bucket")
    _, tree, nodes = _tables("SELECT * FROM t")
    assert requested_metadata(tree, nodes["t"]) == ()
    _, tree, nodes = _tables("SELECT __paimon_partition.dt, x.__paimon_partition.p FROM t x")
    assert requested_metadata(tree, nodes["x"]) == ("__paimon_partition",)


def test_stars_hide_the_metadata_columns() -> None:
    assert _hidden("SELECT __paimon_file_path, * FROM t", "t") == (
        "SELECT __paimon_file_path, * EXCEPT (`t`.`__paimon_file_path`) FROM t"
    )
    assert _hidden("SELECT x.*, x.__paimon_bucket FROM db.t AS x", "x") == (
        "SELECT x.* EXCEPT (`x`.`__paimon_bucket`), x.__paimon_bucket FROM db.t AS x"
    )
    # A join: the other table's star is left alone; a bare star hides from its tables only.
    sql = "SELECT u.*, *, __paimon_partition FROM t JOIN u ON t.k = u.k"
    assert _hidden(sql, "t") == (
        "SELECT u.*, * EXCEPT (`t`.`__paimon_partition`), __paimon_partition "
        "FROM t JOIN u ON t.k = u.k"
    )
    # Stars over a subquery keep the columns it selected.
    sql = "SELECT * FROM (SELECT __paimon_bucket AS b, * FROM t) AS s"
    assert _hidden(sql, "t") == (
        "SELECT * FROM (SELECT __paimon_bucket AS b, * EXCEPT (`t`.`__paimon_bucket`) FROM t) AS s"
    )
    assert _hidden("SELECT count(*), max(__paimon_row_index) FROM t", "t") == (
        "SELECT count(*), max(__paimon_row_index) FROM t"
    )


def test_star_except_of_the_user_is_refused() -> None:
    with pytest.raises(SqlError, match="EXCEPT/REPLACE over a Paimon table"):
        _hidden("SELECT __paimon_bucket, * EXCEPT (k) FROM t", "t")

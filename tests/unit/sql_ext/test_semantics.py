"""The rewrite keeps the statement's meaning: Spark on plain Spark views and the session on
Paimon tables with the same rows give the same columns, rows and join strategies; errors speak
of the statement as written."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from typing import Any

import pytest
from pyspark.errors import AnalysisException
from pyspark.logger import PySparkLogger
from pyspark.sql import DataFrame, SparkSession

from sql_ext import views
from sql_ext.errors import QUERY_CONTEXT_LOGGERS, SqlError, SqlParseError
from sql_ext.session import PaimonSession

pytestmark = pytest.mark.spark

T_ROWS = "(1, 'a'), (2, 'b'), (3, 'c'), (10, 'd')"
U_ROWS = "(1, 'x'), (10, 'y')"
OURS = {"t": "sem_t", "u": "sem_u"}
SPARK = {"t": "ref_t", "u": "ref_u"}


@pytest.fixture(scope="module")
def session(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Paimon tables sem_t(k, v) and sem_u(k, w), and Spark views ref_t, ref_u with their rows."""
    paimon = PaimonSession(spark, warehouse=str(tmp_path_factory.mktemp("semantics")))
    paimon.sql("CREATE TABLE sem_t (k INT, v STRING)")
    paimon.sql(f"INSERT INTO sem_t VALUES {T_ROWS}")
    paimon.sql("CREATE TABLE sem_u (k INT, w STRING)")
    paimon.sql(f"INSERT INTO sem_u VALUES {U_ROWS}")
    spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW ref_t AS SELECT * FROM VALUES {T_ROWS} AS r(k, v)")
    spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW ref_u AS SELECT * FROM VALUES {U_ROWS} AS r(k, w)")
    yield paimon
    for name in ("ref_t", "ref_u"):
        spark.catalog.dropTempView(name)


def result(df: DataFrame) -> tuple[list[str], list[str]]:
    return df.columns, sorted(repr(tuple(row)) for row in df.collect())


GOLDEN = [
    "SELECT percentile_disc(0.25) WITHIN GROUP (ORDER BY k DESC) FROM {t}",
    "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY k) FROM {t}",
    "SELECT listagg(v, '+') WITHIN GROUP (ORDER BY k DESC) FROM {t}",
    "SELECT string_agg(v) WITHIN GROUP (ORDER BY k), listagg(DISTINCT v) WITHIN GROUP (ORDER BY v)"
    " FROM {t}",
    "SELECT to_char(k, '999'), try_divide(k, 0), k DIV 3 FROM {t}",
    "SELECT dateadd(DAY, k, DATE '2024-01-01'), date_diff(DATE '2024-02-01', DATE '2024-01-01')"
    " FROM {t}",
    "SELECT /*+ BROADCAST({u}) */ {t}.k, {u}.w FROM {t} JOIN {u} ON {t}.k = {u}.k",
    "SELECT k -- a comment; with a semicolon\nFROM {t} /* and another */ WHERE k > 1",
    "TABLE {t}",
    "SELECT * FROM (TABLE {u}) JOIN {t} USING (k)",
    "SELECT * FROM IDENTIFIER('{t}') WHERE k < 3",
    "SELECT k FROM {t} TABLESAMPLE (100 PERCENT) WHERE k > 2",
    "WITH x AS (SELECT k FROM {t}) SELECT count(*) FROM x JOIN {u} USING (k)",
]


@pytest.mark.parametrize("sql", GOLDEN)
def test_paimon_tables_give_what_spark_gives(session: PaimonSession, sql: str) -> None:
    expected = result(session.spark.sql(sql.format(**SPARK)))
    assert result(session.sql(sql.format(**OURS))) == expected


def join_strategy(plan: str) -> list[str]:
    return re.findall(
        r"(BroadcastHashJoin|SortMergeJoin|ShuffledHashJoin).*?(Build\w+)?$", plan, re.M
    )


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT /*+ BROADCAST({t}) */ {t}.k FROM {t} JOIN {u} ON {t}.k = {u}.k",
        "SELECT /*+ MERGE({t}, {u}) */ {t}.k FROM {t} JOIN {u} ON {t}.k = {u}.k",
        "SELECT /*+ SHUFFLE_HASH(b) */ a.k FROM {t} a JOIN {u} b ON a.k = b.k",
    ],
)
def test_hints_naming_tables_still_apply(session: PaimonSession, sql: str) -> None:
    spark_plan = session.spark.sql("EXPLAIN " + sql.format(**SPARK)).collect()[0][0]
    our_plan = session.sql("EXPLAIN " + sql.format(**OURS)).collect()[0][0]
    assert join_strategy(our_plan) == join_strategy(spark_plan) != []
    assert join_strategy(our_plan)[0][0] != "BroadcastHashJoin" or "BROADCAST" in sql


def test_insert_and_ctas_read_their_query_as_written(session: PaimonSession) -> None:
    session.sql("CREATE TABLE sem_p (p DOUBLE, s STRING)")
    session.sql(
        "WITH top AS (SELECT k FROM sem_t WHERE k > 1)\n"
        "INSERT INTO sem_p SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY k DESC), "
        "listagg(CAST(k AS STRING), '+') WITHIN GROUP (ORDER BY k) FROM top"
    )
    expected = session.spark.sql(
        "SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY k DESC), "
        "listagg(CAST(k AS STRING), '+') WITHIN GROUP (ORDER BY k) FROM ref_t WHERE k > 1"
    ).collect()
    assert [tuple(r) for r in session.sql("SELECT * FROM sem_p").collect()] == [tuple(expected[0])]
    session.sql("CREATE TABLE sem_c AS SELECT /* kept */ to_char(k, '999') AS c FROM sem_t")
    assert sorted(r.c for r in session.sql("SELECT c FROM sem_c").collect()) == [
        "  1",
        "  2",
        "  3",
        " 10",
    ]


def message(error: pytest.ExceptionInfo[BaseException]) -> str:
    return str(error.value)


def test_errors_name_the_table_not_the_view(session: PaimonSession) -> None:
    with pytest.raises(AnalysisException) as error:
        session.sql("SELECT x.k FROM sem_t")
    assert "`sem_t`.`k`" in message(error)
    assert views.VIEW_PREFIX not in message(error)
    sql = "SELECT * FROM sem_t VERSION AS OF 1 JOIN sem_u ON nope = 1"
    with pytest.raises(AnalysisException) as error:
        session.sql(sql)
    assert views.VIEW_PREFIX not in message(error)
    assert f"line 1 pos {sql.index('nope')};" in message(error)


def test_error_positions_are_those_of_the_statement(session: PaimonSession) -> None:
    sql = "SELECT *\nFROM sem_t\nWHERE\n  nocol = 1"
    with pytest.raises(AnalysisException) as error:
        session.sql(sql)
    assert "line 4 pos 2;" in message(error).splitlines()[0]
    with pytest.raises(AnalysisException) as error:
        session.sql("SELECT k\nFROM sem_t JOIN sem_u USING (k) WHERE\n  w = 1 AND nocol = 1")
    assert "line 3 pos 12;" in message(error).splitlines()[0]
    with pytest.raises(AnalysisException) as error:
        session.spark.sql("SELECT *\nFROM ref_t\nWHERE\n  nocol = 1")
    assert "line 4 pos 2;" in message(error)  # what Spark says on a Spark view


def test_syntax_errors_are_worded_for_users(session: PaimonSession) -> None:
    with pytest.raises(SqlParseError) as error:
        session.sql("SELECT * FROM sem_t$snapshots WHERE")
    assert message(error) == "Syntax error at or near end of input (line 1, col 36)"
    with pytest.raises(SqlParseError) as error:
        session.sql("SELECT k\nFROM sem_t$snapshots a b")
    assert message(error) == "Syntax error at or near 'b' (line 2, col 24)"


def test_spark_variable_substitution(
    session: PaimonSession, spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SEM_TABLE", "sem_u")
    session.sql("SET sem_tbl=sem_t")
    try:
        assert len(session.sql("SELECT * FROM ${sem_tbl}").collect()) == 4
        assert len(session.sql("SELECT * FROM ${spark:sem_tbl} VERSION AS OF 1").collect()) == 4
        assert len(session.sql("SELECT * FROM ${env:SEM_TABLE}").collect()) == 2
        assert session.sql("SELECT '${sem_tbl}' AS s").collect()[0].s == "sem_t"
        with pytest.raises(SqlParseError):  # unknown: left as written, as Spark does
            session.sql("SELECT * FROM ${sem_nope}$snapshots")
        session.sql("SET spark.sql.variable.substitute=false")
        with pytest.raises(SqlParseError):
            session.sql("SELECT * FROM ${sem_tbl}")
    finally:
        spark.conf.unset("sem_tbl")
        spark.conf.unset("spark.sql.variable.substitute")


def test_bad_timestamp_as_of_logs_nothing(session: PaimonSession) -> None:
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    loggers = [PySparkLogger.getLogger(name) for name in QUERY_CONTEXT_LOGGERS]
    saved = [(logger.level, logger.handlers[:]) for logger in loggers]
    try:
        for logger in loggers:  # as in a plain PySpark program, whatever ran before
            logger.setLevel(logging.WARNING)
            logger.handlers = [Keep()]
        with pytest.raises(SqlError, match=r"Invalid TIMESTAMP AS OF 'garbage': \[CAST_INVALID"):
            session.sql("SELECT * FROM sem_t TIMESTAMP AS OF 'garbage'")
        assert records == []
        assert [logger.level for logger in loggers] == [logging.WARNING] * len(loggers)
        # A failing query is raised in the user's terms (the view's name restored) and not
        # also logged as PySpark's JSON record, whose plan shows the session's views.
        with pytest.raises(AnalysisException, match="sem_t"):
            session.sql("SELECT nope FROM sem_t")
        assert records == []
    finally:
        for logger, (level, handlers) in zip(loggers, saved):
            logger.setLevel(level)
            logger.handlers = handlers


def test_timestamp_as_of_is_evaluated_as_written(session: PaimonSession) -> None:
    sql = "SELECT count(*) FROM sem_t TIMESTAMP AS OF dateadd(DAY, 1, current_timestamp())"
    assert session.sql(sql).collect()[0][0] == 4
    with pytest.raises(SqlError, match="Invalid TIMESTAMP AS OF to_char"):
        session.sql("SELECT * FROM sem_t TIMESTAMP AS OF to_char(1, 'nope')")

"""PaimonSession end to end on the shared SparkSession: DDL, INSERT, queries, CALL, errors."""

from __future__ import annotations

import datetime as dt
import os
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest
from pypaimon import CatalogFactory
from pyspark.errors import AnalysisException, PySparkException
from pyspark.sql import SparkSession

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import (
    DatabaseNotExist,
    PaimonError,
    TableAlreadyExist,
    TableNotExist,
)
from paimon_core.format.schema import AddColumn, SetOption
from paimon_core.format.types import INT
from paimon_core.io.s3_fileio import S3FileIO, S3Options
from procedures import ProcedureError
from sql_ext import views
from sql_ext.errors import QUERY_CONTEXT_LOGGERS, SqlError, SqlParseError, first_line
from sql_ext.session import PaimonSession, resolve_catalog_options, resolve_warehouse
from sql_ext.system_tables import SYSTEM_TABLES, spark_schema
from sql_ext.tables import current_user
from tests.conftest import S3Warehouse
from tests.unit.procedures.helpers import T0, fingerprint, new_catalog, new_table

pytestmark = pytest.mark.spark


@pytest.fixture
def session(spark: SparkSession, warehouse: str) -> PaimonSession:
    return PaimonSession(spark, warehouse=warehouse)


@pytest.fixture
def core_table(session: PaimonSession) -> FileSystemCatalog:
    """`db.t` (id BIGINT, name STRING, dt STRING) partitioned by dt, 3 snapshots a minute apart
    from T0, made by the core."""
    catalog = new_catalog(session.warehouse)
    new_table(catalog)
    return catalog


def rows(session: PaimonSession, sql: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in session.sql(sql).collect()]


def leftover_views(spark: SparkSession) -> list[str]:
    return [t.name for t in spark.catalog.listTables() if t.name.startswith(views.VIEW_PREFIX)]


def test_warehouse_resolution(spark: SparkSession, tmp_path: Any) -> None:
    assert resolve_warehouse("file:///data/wh") == "/data/wh"
    assert resolve_warehouse("file:/data/wh") == "/data/wh"
    assert resolve_warehouse("s3://bucket/wh") == "s3://bucket/wh"
    assert resolve_warehouse(None, {"spark.sql.catalog.paimon.warehouse": "rel"}) == (
        os.path.abspath("rel")
    )
    assert resolve_warehouse(None) == os.path.abspath("warehouse")
    from_conf = spark.conf.get("spark.sql.catalog.paimon.warehouse")
    assert PaimonSession(spark).warehouse == from_conf
    assert PaimonSession(spark, warehouse=str(tmp_path)).warehouse == str(tmp_path)


def test_catalog_options_come_from_spark_catalog_conf(
    spark: SparkSession, s3_warehouse: S3Warehouse, no_aws_env: None
) -> None:
    prefix = "spark.sql.catalog.paimon."
    given = {"spark.sql.catalog.paimon.warehouse": "ignored", "spark.sql.catalog.paimon.x": "1"}
    assert resolve_catalog_options(given) == {"x": "1"}
    # The endpoint and keys as the session's Spark conf (spark-defaults, --conf), the path
    # style as the conf given to PaimonSession, which wins over the session's.
    for key, value in s3_warehouse.options.items():
        spark.conf.set(prefix + key, value)
    spark.conf.set(prefix + "s3.path.style.access", "false")
    try:
        session = PaimonSession(
            spark,
            warehouse=s3_warehouse.uri,
            conf={prefix + "s3.path.style.access": "true"},
        )
        io = session.catalog.file_io
        assert isinstance(io, S3FileIO)
        assert io.s3_options == S3Options.from_options(s3_warehouse.options)
        session.sql("CREATE DATABASE db")
        session.sql("CREATE TABLE db.t (k INT)")
        session.sql("INSERT INTO db.t VALUES (1), (2)")
        assert rows(session, "SELECT k FROM db.t ORDER BY k") == [(1,), (2,)]
        assert session.catalog.get_table("db.t").latest_snapshot() is not None
    finally:
        for key in [*s3_warehouse.options, "s3.path.style.access"]:
            spark.conf.unset(prefix + key)


def test_databases_and_use(session: PaimonSession, warehouse: str) -> None:
    session.sql("CREATE DATABASE db")
    session.sql("CREATE DATABASE IF NOT EXISTS paimon.db;")
    session.sql("CREATE DATABASE other")
    assert rows(session, "SHOW DATABASES") == [("db",), ("default",), ("other",)]
    assert rows(session, "SHOW NAMESPACES LIKE 'd*'") == [("db",), ("default",)]
    session.sql("USE paimon.db")
    assert session.current_database == "db"
    assert rows(session, "SHOW CURRENT NAMESPACE") == [("paimon", "db")]
    before = fingerprint(warehouse)
    with pytest.raises(DatabaseNotExist, match="nope"):
        session.sql("USE nope")
    assert session.current_database == "db"
    session.sql("CREATE TABLE t (a INT)")
    with pytest.raises(PaimonError, match="db is not empty"):
        session.sql("DROP DATABASE db")
    assert os.path.isdir(os.path.join(warehouse, "db.db", "t"))
    session.sql("USE paimon")
    assert session.current_database == "default"
    session.sql("DROP DATABASE db CASCADE")
    session.sql("DROP DATABASE IF EXISTS nope")
    assert rows(session, "SHOW DATABASES") == [("default",), ("other",)]
    assert before != fingerprint(warehouse)


def test_create_table_maps_spark_types_and_keys(session: PaimonSession) -> None:
    session.sql("CREATE DATABASE db")
    session.sql(
        "CREATE TABLE paimon.db.t (k INT COMMENT 'key', s STRING NOT NULL, c CHAR(3), "
        "d DECIMAL(10, 2), ts TIMESTAMP, ntz TIMESTAMP_NTZ, day DATE, b BINARY, f FLOAT, "
        "a ARRAY<BIGINT>, m MAP<STRING, INT>, r STRUCT<x: INT, y: STRING>, dt STRING, "
        "PRIMARY KEY (k, dt) NOT ENFORCED) USING paimon PARTITIONED BY (dt) "
        "TBLPROPERTIES ('bucket' = '2', 'file.format' = 'parquet') COMMENT 'a table'"
    )
    schema = session.catalog.get_table("db.t").schema
    assert [str(f.type) for f in schema.fields] == [
        "INT NOT NULL",
        "STRING NOT NULL",
        "CHAR(3)",
        "DECIMAL(10, 2)",
        "TIMESTAMP(6) WITH LOCAL TIME ZONE",
        "TIMESTAMP(6)",
        "DATE",
        "BYTES",
        "FLOAT",
        "ARRAY<BIGINT>",
        "MAP<STRING NOT NULL, INT>",
        "ROW<`x` INT, `y` STRING>",
        "STRING NOT NULL",
    ]
    assert schema.fields[0].description == "key"
    assert schema.primary_keys == ("k", "dt") and schema.partition_keys == ("dt",)
    assert schema.options == {"bucket": "2", "file.format": "parquet", "owner": current_user()}
    assert schema.comment == "a table"

    session.sql("USE db")
    session.sql("CREATE TABLE p (k INT, v STRING) TBLPROPERTIES ('primary-key' = 'k')")
    assert session.catalog.get_table("db.p").schema.primary_keys == ("k",)
    session.sql("CREATE TABLE IF NOT EXISTS p (other INT)")
    with pytest.raises(TableAlreadyExist, match=r"db\.p"):
        session.sql("CREATE TABLE p (k INT)")
    assert rows(session, "SHOW TABLES") == [("db", "p", False), ("db", "t", False)]
    session.sql("DROP TABLE p")
    session.sql("DROP TABLE IF EXISTS p")
    assert rows(session, "SHOW TABLES IN paimon.db LIKE 'p*|t'") == [("db", "t", False)]


def test_insert_and_select_all_types(session: PaimonSession) -> None:
    session.sql("CREATE DATABASE db")
    session.sql(
        "CREATE TABLE db.t (id BIGINT, d DECIMAL(10, 2), ts TIMESTAMP, ntz TIMESTAMP_NTZ, "
        "day DATE, b BINARY, c CHAR(3), a ARRAY<INT>, m MAP<STRING, INT>, r STRUCT<x: INT>)"
    )
    empty = session.sql("SELECT * FROM db.t")
    assert empty.collect() == []
    assert empty.schema["d"].dataType.simpleString() == "decimal(10,2)"
    assert empty.schema["ntz"].dataType.simpleString() == "timestamp_ntz"
    assert (
        session.sql(
            "INSERT INTO db.t VALUES (1, 1.5, TIMESTAMP '2024-01-02 03:04:05', "
            "TIMESTAMP_NTZ '2024-01-02 03:04:05', DATE '2024-01-02', X'CAFE', 'ab', array(1, 2), "
            "map('k', 1), named_struct('x', 7))"
        ).columns
        == []
    )
    session.sql("INSERT INTO db.t (id) VALUES (2)")
    got = rows(session, "SELECT * FROM db.t ORDER BY id")
    assert got[0][:7] == (
        1,
        Decimal("1.50"),
        dt.datetime(2024, 1, 2, 3, 4, 5),
        dt.datetime(2024, 1, 2, 3, 4, 5),
        dt.date(2024, 1, 2),
        bytearray(b"\xca\xfe"),
        "ab ",
    )
    assert got[0][7:9] == ([1, 2], {"k": 1}) and got[0][9].x == 7
    assert got[1] == (2, *[None] * 9)
    snapshot = session.catalog.get_table("db.t").latest_snapshot()
    assert snapshot is not None and snapshot.total_record_count == 2


def test_primary_key_upsert_insert_select_and_overwrite(
    session: PaimonSession, spark: SparkSession
) -> None:
    session.sql("CREATE DATABASE db")
    session.sql("USE db")
    session.sql(
        "CREATE TABLE pk (k INT, v STRING, dt STRING, PRIMARY KEY (k, dt) NOT ENFORCED) "
        "PARTITIONED BY (dt) TBLPROPERTIES ('bucket' = '2')"
    )
    session.sql("INSERT INTO pk VALUES (1, 'a', 'd1'), (2, 'b', 'd1'), (3, 'c', 'd2')")
    session.sql("INSERT INTO pk VALUES (1, 'A', 'd1'), (4, 'd', 'd2')")
    assert rows(session, "SELECT k, v FROM pk ORDER BY k") == [
        (1, "A"),
        (2, "b"),
        (3, "c"),
        (4, "d"),
    ]
    session.sql("CREATE TABLE copy (k INT, v STRING, dt STRING) PARTITIONED BY (dt)")
    session.sql("INSERT INTO copy SELECT k * 10, upper(v), dt FROM paimon.db.pk WHERE k > 1")
    assert rows(session, "SELECT k, v FROM db.copy ORDER BY k") == [
        (20, "B"),
        (30, "C"),
        (40, "D"),
    ]
    session.sql("INSERT OVERWRITE copy PARTITION (dt = 'd1') SELECT 7, 'x'")
    assert rows(session, "SELECT * FROM copy ORDER BY k") == [
        (7, "x", "d1"),
        (30, "C", "d2"),
        (40, "D", "d2"),
    ]
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    try:
        session.sql("INSERT OVERWRITE copy VALUES (8, 'y', 'd2')")
    finally:
        spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
    assert rows(session, "SELECT k FROM copy ORDER BY k") == [(7,), (8,)]
    session.sql("INSERT OVERWRITE copy SELECT k, v, dt FROM pk WHERE k = 2")  # static: all
    assert rows(session, "SELECT * FROM copy") == [(2, "b", "d1")]
    kinds = rows(session, "SELECT commit_kind FROM `copy$snapshots` ORDER BY snapshot_id")
    assert [k for (k,) in kinds] == ["APPEND", "OVERWRITE", "OVERWRITE", "OVERWRITE"]


def test_name_resolution(session: PaimonSession, spark: SparkSession, core_table: Any) -> None:
    for name in ("paimon.db.t", "db.t", "`db`.`t`"):
        assert rows(session, f"SELECT count(*) FROM {name}") == [(6,)], name
    assert rows(session, "SELECT max(db.t.id), max(t.id) FROM db.t") == [(102, 102)]
    with pytest.raises(SqlError, match="`t`"):
        session.sql("SELECT * FROM t")  # default database has no t
    session.sql("USE db")
    assert rows(session, "SELECT count(*) FROM t") == [(6,)]
    assert rows(session, "WITH t AS (SELECT 1 AS x) SELECT * FROM t") == [(1,)]
    assert rows(
        session,
        "WITH a AS (SELECT id FROM t WHERE id < 2), t AS (SELECT 5 AS id) "
        "SELECT (SELECT count(*) FROM a), (SELECT max(id) FROM t)",
    ) == [(2, 5)]
    spark.sql("SELECT 100L AS id, 'x' AS label").createOrReplaceTempView("t")
    try:
        assert rows(session, "SELECT label FROM t") == [("x",)]  # a temp view shadows t
        assert rows(
            session,
            "SELECT v.label, p.name FROM t v JOIN db.t p ON v.id = p.id",
        ) == [("x", None)]
    finally:
        spark.catalog.dropTempView("t")
    assert leftover_views(spark) == []


def test_system_tables_in_queries(session: PaimonSession, core_table: Any) -> None:
    session.sql("CALL sys.create_tag(table => 'db.t', tag => 'first', snapshot => 1)")
    for name in SYSTEM_TABLES:
        df = session.sql(f"SELECT * FROM db.`t${name}`")
        assert df.schema == spark_schema(name), name
    assert rows(session, "SELECT snapshot_id FROM db.`t$snapshots` WHERE snapshot_id > 1") == [
        (2,),
        (3,),
    ]
    assert rows(
        session,
        "SELECT g.tag_name, s.commit_kind, s.total_record_count FROM db.`t$snapshots` s "
        "JOIN db.`t$tags` g ON s.snapshot_id = g.snapshot_id",
    ) == [("first", "APPEND", 2)]
    assert rows(
        session,
        "SELECT partition, sum(record_count) FROM paimon.db.`t$files` GROUP BY partition "
        "ORDER BY partition",
    ) == [("{2024-01-01}", 4), ("{2024-01-02}", 2)]
    assert rows(
        session,
        "SELECT count(*) FROM db.`t$files` VERSION AS OF 1 WHERE schema_id IN "
        "(SELECT schema_id FROM db.`t$schemas`)",
    ) == [(1,)]
    assert rows(session, "SELECT count(*) FROM db.`t$manifests` VERSION AS OF 'first'") == [(1,)]
    assert rows(session, "SELECT value FROM db.`t$options` WHERE key = 'bucket'") == []
    with pytest.raises(SqlError, match="Time travel"):
        session.sql("SELECT * FROM db.`t$snapshots` VERSION AS OF 1")
    with pytest.raises(TableNotExist, match="no_such_system_table"):
        session.sql("SELECT * FROM db.`t$no_such_system_table`")
    assert rows(session, "SELECT count(*) FROM db.`t$file_indexes`") == [(0,)]
    assert rows(session, "SELECT DISTINCT rowkind FROM db.`t$audit_log`") == [("+I",)]


def test_time_travel(
    session: PaimonSession, spark: SparkSession, core_table: FileSystemCatalog
) -> None:
    table = core_table.get_table("db.t")
    table.schema_manager.commit_changes(AddColumn("extra", INT()))
    table = core_table.get_table("db.t")
    table.write_arrow(table.new_read().output_schema().empty_table())  # no-op
    session.sql("USE db")
    assert rows(session, "SELECT count(*) FROM t VERSION AS OF 1") == [(2,)]
    assert session.sql("SELECT * FROM t VERSION AS OF 1").columns == ["id", "name", "dt"]
    assert session.sql("SELECT * FROM t").columns == ["id", "name", "dt", "extra"]
    session.sql("CALL sys.create_tag(table => 't', tag => 'two', snapshot => 2)")
    assert rows(session, "SELECT count(*) FROM t VERSION AS OF 'two'") == [(4,)]
    assert rows(session, "SELECT count(*) FROM t FOR SYSTEM_VERSION AS OF 2") == [(4,)]
    # Snapshots were committed at T0, T0 + 1 min, T0 + 2 min (UTC session time zone).
    at = dt.datetime.fromtimestamp(T0 / 1000, dt.UTC).replace(tzinfo=None)
    stamp = (at + dt.timedelta(seconds=70)).strftime("%Y-%m-%d %H:%M:%S")
    assert rows(session, f"SELECT count(*) FROM t TIMESTAMP AS OF '{stamp}'") == [(4,)]
    spark.conf.set("spark.sql.session.timeZone", "Asia/Shanghai")  # UTC+8: same instant
    try:
        local = (at + dt.timedelta(hours=8, seconds=70)).strftime("%Y-%m-%d %H:%M:%S")
        assert rows(session, f"SELECT count(*) FROM t TIMESTAMP AS OF '{local}'") == [(4,)]
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")
    seconds = T0 // 1000 + 10
    assert rows(session, f"SELECT count(*) FROM t TIMESTAMP AS OF {seconds}") == [(2,)]
    assert rows(
        session,
        "SELECT a.c, b.c FROM (SELECT count(*) c FROM t VERSION AS OF 2) a, "
        "(SELECT count(*) c FROM t) b",
    ) == [(4, 6)]
    with pytest.raises(PaimonError, match="no snapshot earlier"):
        session.sql("SELECT * FROM t TIMESTAMP AS OF '2000-01-01 00:00:00'")
    with pytest.raises(PaimonError, match="nope"):
        session.sql("SELECT * FROM t VERSION AS OF 'nope'")


PROCEDURES = [
    ("create_tag(table => 't', tag => 'a', snapshot => 1)", ["result"], [(True,)]),
    ("create_tag(table => 't', tag => 'b', time_retained => '1 h')", ["result"], [(True,)]),
    ("rename_tag(table => 't', tag => 'b', target_tag => 'c')", ["result"], [(True,)]),
    ("replace_tag(table => 't', tag => 'c', snapshot => 2)", ["result"], [(True,)]),
    (
        f"create_tag_from_timestamp('t', 'd', {T0 + 30_000})",
        ["tagName", "snapshot", "commit_time", "watermark"],
        [("d", 2, T0 + 60_000, "null")],
    ),
    ("delete_tag(table => 't', tag => 'd')", ["result"], [(True,)]),
    ("expire_tags(table => 't')", ["expired_tags"], [("No expired tags.",)]),
    (
        "remove_orphan_files(table => 'db.t', dry_run => true)",
        ["deletedFileCount", "deletedFileTotalLenInBytes"],
        [(0, 0)],
    ),
    (
        "expire_snapshots(table => 't', retain_max => 2, retain_min => 2)",
        ["deleted_snapshots_count"],
        [(1,)],
    ),
    (
        f"rollback_to_timestamp(table => 't', timestamp => {T0 + 90_000})",
        ["previous_snapshot_id", "current_snapshot_id"],
        [(3, 2)],
    ),
    (
        "rollback(table => 't', tag => 'a')",
        ["previous_snapshot_id", "current_snapshot_id"],
        [(2, 1)],
    ),
]


def test_every_procedure_through_sql(session: PaimonSession, core_table: Any) -> None:
    session.sql("USE db")
    for call, columns, expected in PROCEDURES:
        df = session.sql(f"CALL sys.{call}")
        assert df.columns[: len(columns)] == columns, call
        assert [tuple(r)[: len(columns)] for r in df.collect()] == expected, call
    assert rows(session, "SELECT tag_name FROM `t$tags`") == [("a",)]  # c was on snapshot 2
    assert rows(session, "SELECT snapshot_id FROM `t$snapshots`") == [(1,)]
    assert rows(session, "SELECT count(*) FROM t") == [(2,)]


def test_user_views_named_like_ours_are_kept(
    session: PaimonSession, spark: SparkSession, core_table: Any, monkeypatch: Any
) -> None:
    names = iter(["__paimon_user", "__paimon_ours"])
    monkeypatch.setattr(views, "new_view_name", lambda: next(names))
    spark.sql("SELECT 7 AS x").createOrReplaceTempView("__paimon_user")
    try:
        assert rows(session, "SELECT count(*) FROM db.t") == [(6,)]
        assert spark.sql("SELECT * FROM __paimon_user").collect()[0].x == 7
        assert leftover_views(spark) == ["__paimon_user"]
    finally:
        spark.catalog.dropTempView("__paimon_user")


def test_views_describe_explain_ctas(
    session: PaimonSession, spark: SparkSession, core_table: Any
) -> None:
    session.sql("USE db")
    df = session.sql("SELECT id FROM t WHERE id > 100")  # lazy; its views are gone already
    assert leftover_views(spark) == []
    session.sql("INSERT INTO t VALUES (200, 'new', '2024-01-03')")
    assert sorted(r.id for r in df.collect()) == [101, 102]  # the data as the query ran
    assert rows(session, "SELECT count(*) FROM t WHERE id > 100") == [(3,)]  # read again
    session.sql("CREATE TEMPORARY VIEW recent AS SELECT id FROM t VERSION AS OF 1")
    try:
        assert rows(session, "SELECT count(*) FROM recent") == [(2,)]
    finally:
        spark.catalog.dropTempView("recent")
        session.stop()  # drops the view kept for `recent`; the shared Spark keeps running
    assert leftover_views(spark) == [] and rows(session, "SELECT 1") == [(1,)]
    with pytest.raises(SqlError, match="TEMPORARY VIEW"):
        session.sql("CREATE VIEW forever AS SELECT * FROM t")
    assert [r.col_name for r in session.sql("DESCRIBE t").collect()][:3] == ["id", "name", "dt"]
    plan = session.sql("EXPLAIN SELECT * FROM `t$snapshots`").collect()[0].plan
    assert "snapshot_id" in plan and "$" not in plan
    session.sql("CREATE TABLE c TBLPROPERTIES ('primary-key' = 'id') AS SELECT id, name FROM t")
    schema = session.catalog.get_table("db.c").schema
    assert [str(f.type) for f in schema.fields] == ["BIGINT NOT NULL", "STRING"]
    assert rows(session, "SELECT count(*) FROM c") == [(7,)]


def test_errors_are_one_line_and_change_nothing(
    session: PaimonSession, core_table: Any, warehouse: str
) -> None:
    session.sql("USE db")
    session.sql("CREATE TABLE s (k INT NOT NULL, c VARCHAR(2))")
    before = fingerprint(warehouse)
    cases: list[tuple[str, type[BaseException], str]] = [
        ("SELECT * FROM missing", SqlError, "missing"),
        ("SELECT * FROM paimon.db.missing", TableNotExist, "missing"),
        ("SELECT * FROM `missing$snapshots`", TableNotExist, "missing"),
        ("SELECT * FROM nodb.t", SqlError, "nodb"),
        ("INSERT INTO missing VALUES (1)", TableNotExist, "missing"),
        ("CREATE TABLE nodb.x (a INT)", DatabaseNotExist, "nodb"),
        ("CREATE TABLE x (a FOO)", SqlParseError, "FOO"),
        ("SELECT * FROM db.t WHERE", SqlParseError, "Cannot read Paimon table `db`.`t`"),
        ("CREATE TABLE x (a INTERVAL DAY)", SqlError, "INTERVAL"),
        ("CREATE TABLE x (a INT, PRIMARY KEY (b) NOT ENFORCED)", PaimonError, "b"),
        ("CALL sys.create_tag(table => 't')", ProcedureError, "tag"),
        ("CALL sys.create_tag(table => 'missing', tag => 'x')", ProcedureError, "missing"),
        ("CALL spark_catalog.sys.create_tag('t', 'x')", SqlError, "spark_catalog"),
        ("INSERT INTO s VALUES (1, 'a', 'b')", SqlError, "3 columns"),
        ("INSERT INTO s VALUES (NULL, 'a')", PaimonError, "'k'"),
        ("INSERT INTO s VALUES (1, 'abc')", SqlError, "VARCHAR"),
        ("INSERT INTO s VALUES ('one', 'a')", SqlError, "Cannot write to db.s"),
        ("INSERT INTO s (k, nope) VALUES (1, 'a')", SqlError, "nope"),
        ("INSERT INTO t PARTITION (name = 'x') SELECT 1, 'd'", SqlError, "partition"),
        ("DELETE FROM t WHERE id IN (SELECT 1)", SqlError, "DELETE FROM paimon.db.t"),
        ("TRUNCATE TABLE t PARTITION (id = 1)", SqlError, "TRUNCATE TABLE paimon.db.t"),
        ("ALTER TABLE t REPLACE COLUMNS (a INT)", SqlError, "REPLACE COLUMNS"),
        ("SELECT * FROM t VERSION AS OF 99", PaimonError, "99"),
        ("SELECT 1; SELECT 2", SqlParseError, "run_script"),
    ]
    for sql, kind, needle in cases:
        with pytest.raises(kind) as info:
            session.sql(sql)
        message = str(info.value)
        if isinstance(info.value, PySparkException):  # Spark's own: the shell shows line one
            message = first_line(info.value)
        assert "\n" not in message and needle in message, (sql, message)
    assert fingerprint(warehouse) == before


def test_run_script_is_lazy_and_stops_at_the_first_error(session: PaimonSession) -> None:
    script = (
        "CREATE DATABASE db; CREATE TABLE db.t (a INT);\nSELECT * FROM db.nope; DROP TABLE db.t"
    )
    results = session.run_script(script)
    statement, df = next(results)
    assert statement == "CREATE DATABASE db" and df.columns == []
    assert session.catalog.list_tables("db") == []
    assert next(results)[0] == "CREATE TABLE db.t (a INT)"
    with pytest.raises(SqlError, match="nope"):
        next(results)
    assert session.catalog.list_tables("db") == ["t"]


def test_pypaimon_reads_what_the_session_wrote(session: PaimonSession, warehouse: str) -> None:
    script = (
        "CREATE DATABASE db; "
        "CREATE TABLE db.t (k INT, v STRING, dt STRING, PRIMARY KEY (k, dt) NOT ENFORCED) "
        "PARTITIONED BY (dt) TBLPROPERTIES ('bucket' = '2');"
        "INSERT INTO db.t VALUES (1, 'a', 'x'), (2, 'b', 'x'), (3, 'c', 'y');"
        "INSERT INTO db.t VALUES (2, 'B', 'x')"
    )
    assert len(list(session.run_script(script))) == 4
    table = CatalogFactory.create({"warehouse": warehouse}).get_table("db.t")
    builder = table.new_read_builder()
    data = builder.new_read().to_arrow(builder.new_scan().plan().splits())
    assert sorted(data.to_pylist(), key=lambda r: r["k"]) == [
        {"k": 1, "v": "a", "dt": "x"},
        {"k": 2, "v": "B", "dt": "x"},
        {"k": 3, "v": "c", "dt": "y"},
    ]


def test_tag_ddl_through_the_session(session: PaimonSession, core_table: FileSystemCatalog) -> None:
    session.sql("USE db")
    assert (
        session.sql("ALTER TABLE t CREATE TAG `tag-1` AS OF VERSION 1 RETAIN 1 DAYS").columns == []
    )
    session.sql("ALTER TABLE paimon.db.t CREATE TAG latest")
    session.sql("ALTER TABLE db.t RENAME TAG latest TO newest")
    assert rows(session, "SHOW TAGS t") == [("newest",), ("tag-1",)]
    assert rows(session, "SELECT tag_name, snapshot_id FROM t$tags ORDER BY tag_name") == [
        ("newest", 3),
        ("tag-1", 1),
    ]
    assert len(rows(session, "SELECT * FROM t VERSION AS OF 'tag-1'")) == 2
    session.sql("ALTER TABLE t DELETE TAG `newest,tag-1`")
    assert rows(session, "SHOW TAGS t") == []


@pytest.mark.parametrize(
    "statement",
    [
        "SHOW CREATE TABLE db.no_such_table",
        "SELECT * FROM db.no_such_table",
        "SELEC 1",
        "SELECT nope FROM db.t",
    ],
)
def test_handled_errors_leave_no_query_context_log(
    session: PaimonSession, core_table: FileSystemCatalog, statement: str
) -> None:
    """PySpark logs each failed query as a multi-kilobyte JSON record; the session raises the
    error itself (one line), so users of the Python API must not see that record too."""
    import logging

    from pyspark.logger import PySparkLogger

    records: list[logging.LogRecord] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Collect()
    loggers = [PySparkLogger.getLogger(name) for name in QUERY_CONTEXT_LOGGERS]
    saved = [logger.level for logger in loggers]
    try:
        for logger in loggers:  # as in a plain PySpark program, whatever ran before
            logger.setLevel(logging.WARNING)
            logger.addHandler(handler)
        with pytest.raises((PaimonError, PySparkException, SqlParseError)):
            session.sql(statement).collect()
        assert records == []
        assert [logger.level for logger in loggers] == [logging.WARNING] * len(loggers)
    finally:
        for logger, level in zip(loggers, saved):
            logger.removeHandler(handler)
            logger.setLevel(level)


def test_refresh_table_checks_that_the_paimon_table_exists(
    session: PaimonSession, core_table: FileSystemCatalog
) -> None:
    assert session.sql("REFRESH TABLE db.t").collect() == []
    session.sql("USE db")
    before = rows(session, "SELECT count(*) FROM t")
    session.sql("INSERT INTO db.t VALUES (9, 'n', '2024-01-03')")
    assert session.sql("REFRESH TABLE t").collect() == []
    assert rows(session, "SELECT count(*) FROM t") == [(before[0][0] + 1,)]
    with pytest.raises(TableNotExist, match="missing"):
        session.sql("REFRESH TABLE paimon.db.missing")


def test_rewrite_file_index_reads_files_on_spark_tasks(
    session: PaimonSession, core_table: FileSystemCatalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The per-file work (reading a data file's rows, building and writing its index) runs
    in Spark tasks, never in the driver: the driver's ``FileIndexProcessor.process`` is made
    to fail, the executors' Python workers import the module unpatched. The driver commits
    the metas the tasks return, once."""
    from paimon_core.operations import file_index

    def on_driver(*_: Any) -> Any:
        raise AssertionError("a data file's index was rebuilt on the driver")

    monkeypatch.setattr(file_index.FileIndexProcessor, "process", on_driver)
    table = core_table.get_table("db.t")
    table.schema_manager.commit_changes(
        [
            SetOption("file-index.bloom-filter.columns", "id"),
            SetOption("file-index.in-manifest-threshold", "1 b"),
        ]
    )
    assert rows(session, "CALL sys.rewrite_file_index(table => 'db.t')") == [(2, 3)]
    table = core_table.get_table("db.t")
    assert table.snapshot_manager.list_snapshot_ids() == [1, 2, 3, 4]
    assert table.latest_snapshot().commit_kind.value == "COMPACT"
    entries = table.new_scan().read_entries(table.latest_snapshot())
    assert all(e.file.extra_files == (f"{e.file.file_name}.index",) for e in entries)
    pruned = table.new_scan().plan(predicate=[("id", "=", 101)])
    assert sum(len(s.files) for s in pruned) == 1
    assert rows(session, "SELECT id FROM db.t WHERE id = 101") == [(101,)]


def test_copy_copies_files_on_spark_tasks(
    session: PaimonSession, core_table: FileSystemCatalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The byte copies of ``CALL sys.copy`` run in Spark tasks, never in the driver: the
    driver's byte copy is made to fail, the executors' Python workers import the module
    unpatched. The driver plans the names and commits the copy once (one OVERWRITE)."""
    from paimon_core.operations import copy

    def on_driver(*_: Any) -> Any:
        raise AssertionError("a file was copied on the driver")

    monkeypatch.setattr(copy, "_copy_bytes", on_driver)
    source = core_table.get_table("db.t")
    source_names = {
        e.file.file_name for e in source.new_scan().read_entries(source.latest_snapshot())
    }
    assert rows(session, "CALL sys.copy(source_table => 'db.t', target_table => 'db.c')") == [
        (True,)
    ]
    target = core_table.get_table("db.c")
    assert target.snapshot_manager.list_snapshot_ids() == [1]
    assert target.latest_snapshot().commit_kind.value == "OVERWRITE"
    entries = target.new_scan().read_entries(target.latest_snapshot())
    assert len(entries) == len(source_names) == 3
    assert not {e.file.file_name for e in entries} & source_names
    assert rows(session, "SELECT id, name, dt FROM db.c ORDER BY id") == rows(
        session, "SELECT id, name, dt FROM db.t ORDER BY id"
    )


def test_rescale_rewrites_partitions_on_spark_tasks(
    session: PaimonSession, core_table: FileSystemCatalog
) -> None:
    """Each partition is a Spark task (the rewrite is pickled to the executors); the driver
    commits one OVERWRITE. An append table without a bucket key cannot get fixed buckets:
    refused before any task runs."""
    with pytest.raises(PaimonError, match="You should define a 'bucket-key'"):
        session.sql("CALL sys.rescale(table => 'db.t', bucket_num => 2)")
    schema = pa.schema(
        [
            pa.field("id", pa.int64(), False),
            ("name", pa.string()),
            pa.field("dt", pa.string(), False),
        ]
    )
    table = core_table.create_table(
        "db.k", schema, partition_keys=["dt"], primary_keys=["id", "dt"], options={"bucket": "1"}
    )
    for day in ("a", "b"):
        table.write_arrow(pa.table({"id": [1, 2, 3], "name": ["x"] * 3, "dt": [day] * 3}, schema))
    before = rows(session, "SELECT id, name, dt FROM db.k ORDER BY dt, id")
    assert rows(session, "CALL sys.rescale(table => 'db.k', bucket_num => 2)") == [(True,)]
    entries = table.new_scan().read_entries(table.latest_snapshot())
    assert {e.total_buckets for e in entries} == {2} and len(entries) > 2
    assert table.latest_snapshot().commit_kind.value == "OVERWRITE"
    assert rows(session, "SELECT id, name, dt FROM db.k ORDER BY dt, id") == before


def _pinned_views(spark: SparkSession) -> set[str]:
    return {t.name for t in spark.catalog.listTables("default") if t.name.startswith("__paimon_")}


def test_replacing_or_dropping_a_temp_view_drops_the_reads_it_pinned(
    session: PaimonSession, spark: SparkSession
) -> None:
    """A long shell session that redefines a view must not keep every earlier definition's
    planned reads registered (each holds a table's file list) until it stops."""
    session.sql("CREATE TABLE pins (a INT)")
    session.sql("INSERT INTO pins VALUES (1), (2)")
    before = _pinned_views(spark)
    session.sql("CREATE OR REPLACE TEMPORARY VIEW pv AS SELECT * FROM pins")
    of_pv = _pinned_views(spark) - before
    session.sql("CREATE TEMPORARY VIEW pw AS SELECT a * 10 AS b FROM pv")
    of_pw = _pinned_views(spark) - before - of_pv
    assert of_pv
    session.sql("INSERT INTO pins VALUES (3)")
    session.sql("CREATE OR REPLACE TEMPORARY VIEW pv AS SELECT * FROM pins WHERE a > 1")
    of_new_pv = _pinned_views(spark) - before - of_pw
    assert of_new_pv and not of_new_pv & of_pv
    assert sorted(r[0] for r in session.sql("SELECT b FROM pw").collect()) == [20, 30]
    with pytest.raises(AnalysisException, match="TEMP_TABLE_OR_VIEW_ALREADY_EXISTS"):
        session.sql("CREATE TEMPORARY VIEW pv AS SELECT * FROM pins WHERE a > 2")
    assert sorted(r[0] for r in session.sql("SELECT b FROM pw").collect()) == [20, 30]
    session.sql("DROP VIEW pw")
    assert _pinned_views(spark) - before == of_new_pv
    session.sql("DROP VIEW pv")
    assert _pinned_views(spark) == before


def test_paimon_sessions_on_new_spark_sessions_of_one_context(
    spark: SparkSession, new_spark_session: Any, warehouse: str, tmp_path: Any
) -> None:
    """Issue 19.7a: `PaimonSession(spark.newSession())` works, and so does every later one
    (another new SparkSession, the same one again); the first session keeps working."""
    first = PaimonSession(spark, warehouse=warehouse)
    other = new_spark_session()
    second = PaimonSession(other, warehouse=str(tmp_path / "wh2"))
    PaimonSession(new_spark_session(), warehouse=str(tmp_path / "wh3"))
    again = PaimonSession(other, warehouse=str(tmp_path / "wh2"))
    PaimonSession(spark, warehouse=warehouse)
    second.sql("CREATE TABLE t (a INT)")
    again.sql("INSERT INTO t VALUES (2)")
    assert rows(second, "SELECT a FROM t") == [(2,)]
    assert [tuple(r) for r in other.read.format("paimon").load("default.t").collect()] == [(2,)]
    first.sql("CREATE TABLE t (a INT)")
    first.sql("INSERT INTO t VALUES (1)")
    assert rows(first, "SELECT a FROM t") == [(1,)]

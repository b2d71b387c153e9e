"""ALTER TABLE / ALTER DATABASE through PaimonSession: one `schema-N` per statement, data read
back under the new schema, time travel in the old one, refusals that change nothing."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import PaimonError
from paimon_core.format.schema import TableSchema
from sql_ext.errors import SqlError, SqlParseError
from sql_ext.session import PaimonSession
from tests.unit.procedures.helpers import fingerprint


@pytest.fixture
def session(spark: Any, warehouse: str) -> Iterator[PaimonSession]:
    session = PaimonSession(spark, warehouse=warehouse)
    session.sql("CREATE DATABASE db").collect()
    yield session
    session.stop()


def rows(session: PaimonSession, query: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in session.sql(query).collect()]


def schema(session: PaimonSession, name: str = "db.t") -> TableSchema:
    latest = session.catalog.get_table(name).schema_manager.latest()
    assert latest is not None
    return latest


def columns(session: PaimonSession, name: str = "db.t") -> list[tuple[str, str]]:
    return [(f.name, str(f.type)) for f in schema(session, name).fields]


@pytest.fixture
def table(session: PaimonSession) -> PaimonSession:
    """db.t (id INT, name STRING, dt STRING) partitioned by dt, two snapshots, schema 0."""
    session.sql("CREATE TABLE db.t (id INT, name STRING, dt STRING) PARTITIONED BY (dt)").collect()
    session.sql("INSERT INTO db.t VALUES (1, 'a', 'x'), (2, 'b', 'y')").collect()
    session.sql("INSERT INTO db.t VALUES (3, 'c', 'y')").collect()
    return session


def test_set_and_unset_properties_and_comment(table: PaimonSession) -> None:
    table.sql(
        "ALTER TABLE db.t SET TBLPROPERTIES ('snapshot.num-retained.max' = '17', 'comment' = 'hi')"
    )
    s = schema(table)
    assert s.schema_id == 1
    assert s.options["snapshot.num-retained.max"] == "17"
    assert s.comment == "hi"
    table.sql("ALTER TABLE db.t UNSET TBLPROPERTIES ('snapshot.num-retained.max', 'comment')")
    s = schema(table)
    assert s.schema_id == 2
    assert "snapshot.num-retained.max" not in s.options and s.comment is None
    assert rows(table, "SELECT count(*) FROM db.t") == [(3,)]


def test_add_columns_first_after_and_comment(table: PaimonSession) -> None:
    table.sql(
        "ALTER TABLE db.t ADD COLUMNS (c0 BIGINT COMMENT 'first one' FIRST, c1 DOUBLE AFTER id)"
    )
    s = schema(table)
    assert s.schema_id == 1
    assert [f.name for f in s.fields] == ["c0", "id", "c1", "name", "dt"]
    assert s.field("c0").description == "first one"
    assert str(s.field("c1").type) == "DOUBLE"
    table.sql("INSERT INTO db.t VALUES (9, 4, 4.5, 'd', 'x')")
    assert rows(table, "SELECT c0, id, c1, name FROM db.t ORDER BY id") == [
        (None, 1, None, "a"),
        (None, 2, None, "b"),
        (None, 3, None, "c"),
        (9, 4, 4.5, "d"),
    ]
    assert rows(table, "SELECT * FROM db.t VERSION AS OF 2 ORDER BY id") == [
        (1, "a", "x"),
        (2, "b", "y"),
        (3, "c", "y"),
    ]


def test_nested_fields_add_rename_drop_and_type(session: PaimonSession) -> None:
    session.sql("CREATE TABLE db.n (id INT, s STRUCT<x: INT, y: STRING>)")
    session.sql("INSERT INTO db.n VALUES (1, named_struct('x', 1, 'y', 'one'))")
    session.sql("ALTER TABLE db.n ADD COLUMN s.z STRING COMMENT 'zed'")
    assert columns(session, "db.n")[1] == ("s", "ROW<`x` INT, `y` STRING, `z` STRING 'zed'>")
    session.sql("ALTER TABLE db.n RENAME COLUMN s.y TO why")
    session.sql("ALTER TABLE db.n ALTER COLUMN s.x TYPE BIGINT")
    session.sql("ALTER TABLE db.n DROP COLUMN s.z")
    assert schema(session, "db.n").schema_id == 4
    assert columns(session, "db.n")[1] == ("s", "ROW<`x` BIGINT, `why` STRING>")
    row = session.sql("SELECT s.x, s.why FROM db.n").collect()[0]
    assert tuple(row) == (1, "one")


def test_rename_drop_columns_and_time_travel(table: PaimonSession) -> None:
    table.sql("ALTER TABLE db.t RENAME COLUMN name TO label")
    table.sql("ALTER TABLE db.t ADD COLUMN extra INT")
    table.sql("ALTER TABLE db.t DROP COLUMNS (extra, label)")
    assert schema(table).schema_id == 3
    assert columns(table) == [("id", "INT"), ("dt", "STRING")]
    assert rows(table, "SELECT * FROM db.t ORDER BY id") == [(1, "x"), (2, "y"), (3, "y")]
    travelled = table.sql("SELECT * FROM db.t VERSION AS OF 1")
    assert travelled.columns == ["id", "name", "dt"]
    table.sql("ALTER TABLE db.t DROP COLUMN IF EXISTS (missing)")
    assert schema(table).schema_id == 4


def test_alter_column_type_comment_position_nullability(table: PaimonSession) -> None:
    table.sql("ALTER TABLE db.t ALTER COLUMN id TYPE BIGINT")
    table.sql("ALTER TABLE db.t ALTER COLUMN id COMMENT 'the id'")
    table.sql("ALTER TABLE db.t ALTER COLUMN name FIRST")
    table.sql("ALTER TABLE db.t ALTER COLUMN id AFTER dt")
    s = schema(table)
    assert s.schema_id == 4
    assert [(f.name, str(f.type), f.description) for f in s.fields] == [
        ("name", "STRING", None),
        ("dt", "STRING", None),
        ("id", "BIGINT", "the id"),
    ]
    assert rows(table, "SELECT * FROM db.t ORDER BY id") == [
        ("a", "x", 1),
        ("b", "y", 2),
        ("c", "y", 3),
    ]
    assert table.sql("SELECT * FROM db.t VERSION AS OF 1").columns == ["id", "name", "dt"]
    table.sql("CREATE TABLE db.nn (k INT NOT NULL, v INT)")
    table.sql("ALTER TABLE db.nn ALTER COLUMN k SET NOT NULL")
    assert schema(table, "db.nn").field("k").type.nullable is False
    table.sql("ALTER TABLE db.nn ALTER COLUMN k DROP NOT NULL")
    assert schema(table, "db.nn").schema_id == 2
    assert schema(table, "db.nn").field("k").type.nullable is True
    table.sql("ALTER TABLE db.t CHANGE COLUMN id id DECIMAL(20, 0) COMMENT 'wide'")
    assert (str(schema(table).field("id").type), schema(table).field("id").description) == (
        "DECIMAL(20, 0)",
        "wide",
    )


def test_set_and_drop_column_default(table: PaimonSession, warehouse: str, oracle: Any) -> None:
    """Paimon keeps the default in the field (``defaultValue``); a NULL written to the column
    becomes it, and DROP DEFAULT stops that for later writes."""
    table.sql("ALTER TABLE db.t ALTER COLUMN id SET DEFAULT 7, name SET DEFAULT 'n/a'")
    fields = {f.name: f.default_value for f in schema(table).fields}
    assert fields == {"id": "7", "name": "'n/a'", "dt": None}
    assert schema(table).schema_id == 1
    table.sql("INSERT INTO db.t (dt) VALUES ('z')")
    assert rows(table, "SELECT * FROM db.t WHERE dt = 'z'") == [(7, "n/a", "z")]
    table.sql("ALTER TABLE db.t ALTER COLUMN name DROP DEFAULT")
    assert schema(table).field("name").default_value is None
    table.sql("INSERT INTO db.t (id, dt) VALUES (8, 'w')")
    assert rows(table, "SELECT * FROM db.t WHERE dt = 'w'") == [(8, None, "w")]
    java = oracle("read", warehouse, "db.t")
    assert sorted((r["id"], r["name"], r["dt"]) for r in java if r["dt"] in ("z", "w")) == [
        (7, "n/a", "z"),
        (8, None, "w"),
    ]


def test_rename_table_moves_the_directory(table: PaimonSession, warehouse: str) -> None:
    table.sql("ALTER TABLE db.t RENAME TO t2")
    assert not os.path.exists(f"{warehouse}/db.db/t")
    assert os.path.isdir(f"{warehouse}/db.db/t2/schema")
    assert rows(table, "SELECT count(*) FROM db.t2") == [(3,)]
    table.sql("CREATE DATABASE other")
    table.sql("ALTER TABLE paimon.db.t2 RENAME TO other.t3")
    assert rows(table, "SELECT count(*) FROM other.t3") == [(3,)]
    assert table.catalog.list_tables("db") == []


def test_drop_partitions_is_one_overwrite_snapshot(table: PaimonSession) -> None:
    table.sql("INSERT INTO db.t VALUES (4, 'd', 'z')")
    table.sql("ALTER TABLE db.t DROP PARTITION (dt = 'y'), PARTITION (dt = 'z')")
    t = table.catalog.get_table("db.t")
    latest = t.latest_snapshot()
    assert latest is not None and latest.snapshot_id == 4
    assert latest.commit_kind.name == "OVERWRITE"
    assert rows(table, "SELECT * FROM db.t") == [(1, "a", "x")]
    assert len(rows(table, "SELECT * FROM db.t VERSION AS OF 3")) == 4
    table.sql("ALTER TABLE db.t DROP IF EXISTS PARTITION (dt = 'gone')")
    assert t.latest_snapshot() == latest


def test_alter_on_spark_tables_goes_to_spark(session: PaimonSession, spark: Any) -> None:
    spark.sql("CREATE OR REPLACE TEMPORARY VIEW tv AS SELECT 1 AS a")
    spark.sql("CREATE TABLE IF NOT EXISTS spark_catalog.default.alter_plain (a INT) USING parquet")
    try:
        session.sql("ALTER TABLE spark_catalog.default.alter_plain ADD COLUMNS (b STRING)")
        assert spark.table("spark_catalog.default.alter_plain").columns == ["a", "b"]
    finally:
        spark.sql("DROP TABLE IF EXISTS spark_catalog.default.alter_plain")


def test_alter_database_is_refused_as_paimon_filesystem_catalog_does(
    session: PaimonSession, warehouse: str
) -> None:
    before = fingerprint(warehouse)
    with pytest.raises(SqlError, match="ALTER DATABASE db: alter database is not supported"):
        session.sql("ALTER DATABASE db SET DBPROPERTIES ('k' = 'v')")
    with pytest.raises(PaimonError, match="Database nope does not exist"):
        session.sql("ALTER DATABASE nope SET DBPROPERTIES ('k' = 'v')")
    assert fingerprint(warehouse) == before


REFUSED = [
    ("ALTER TABLE db.t DROP COLUMN dt", "Cannot drop partition key"),
    ("ALTER TABLE db.t RENAME COLUMN dt TO d", "Cannot rename partition column"),
    ("ALTER TABLE db.t ALTER COLUMN dt TYPE STRING", "Cannot update partition column"),
    ("ALTER TABLE db.t ALTER COLUMN name TYPE INT", "STRING cannot be cast to INT"),
    ("ALTER TABLE db.t ALTER COLUMN id TYPE SMALLINT", "INT cannot be cast to SMALLINT"),
    ("ALTER TABLE db.t ALTER COLUMN id TYPE DATE", "cannot be cast to DATE"),
    ("ALTER TABLE db.t ALTER COLUMN id TYPE INTERVAL DAY", "not supported by Paimon"),
    ("ALTER TABLE db.t ALTER COLUMN id TYPE NOPE", "Invalid column type NOPE"),
    ("ALTER TABLE db.t ALTER COLUMN name SET NOT NULL", "nullable column to non-nullable"),
    ("ALTER TABLE db.t ADD COLUMN c INT NOT NULL", "cannot specify NOT NULL"),
    ("ALTER TABLE db.t ADD COLUMN id INT", "already exists"),
    ("ALTER TABLE db.t ADD COLUMN c INT AFTER missing", "missing"),
    ("ALTER TABLE db.u DROP COLUMNS (a)", "Cannot drop all fields"),
    ("ALTER TABLE db.t DROP COLUMN missing", "missing"),
    ("ALTER TABLE db.t SET TBLPROPERTIES ('bucket' = '4')", "bucket"),
    ("ALTER TABLE db.t SET TBLPROPERTIES ('primary-key' = 'id')", "primary key"),
    ("ALTER TABLE db.t SET TBLPROPERTIES ('merge-engine' = 'first-row')", "merge-engine"),
    ("ALTER TABLE db.t UNSET TBLPROPERTIES ('bucket')", "bucket"),
    ("ALTER TABLE db.t SET TBLPROPERTIES ('location' = '/tmp/x')", "reserved table property"),
    ("ALTER TABLE db.t UNSET TBLPROPERTIES ('provider')", "reserved table property"),
    ("ALTER TABLE db.t RENAME TO db.u", "already exists"),
    ("ALTER TABLE db.t RENAME TO nodb.t", "nodb"),
    ("ALTER TABLE db.t RENAME TO spark_catalog.db.t", "same catalog"),
    ("ALTER TABLE db.t DROP PARTITION (dt = 'nope')", "not found"),
    ("ALTER TABLE db.t DROP PARTITION (id = 1)", "not a partition column"),
    (
        "ALTER TABLE db.t REPLACE COLUMNS (a INT)",
        "... REPLACE COLUMNS is not supported on Paimon table paimon.db.t",
    ),
    ("ALTER TABLE db.t SET LOCATION '/tmp/x'", "SET LOCATION is not supported"),
    ("ALTER TABLE db.t ADD PARTITION (dt = 'x')", "partitions already exist: dt=x"),
    ("ALTER TABLE db.t RENAME TO a.b.c.d", "invalid table name a.b.c.d"),
    ("ALTER TABLE db.t ALTER COLUMN id SET DEFAULT 'abc'", "Unsupported default value `'abc'`"),
    ("ALTER TABLE db.t ALTER COLUMN id SET DEFAULT", "expected a default value"),
    ("ALTER TABLE db.t ALTER COLUMN nope SET DEFAULT 1", "nope"),
    ("ALTER TABLE db.t ADD COLUMN c INT DEFAULT 1", "DEFAULT"),
    ("ALTER TABLE db.t CHANGE COLUMN id ident BIGINT", "RENAME COLUMN"),
    ("ALTER TABLE db.t ADD COLUMNS (c INT", "expected ')'"),
    ("ALTER TABLE db.t ALTER COLUMN id", "expected TYPE"),
    ("ALTER TABLE db.t RENAME COLUMN id", "expected TO"),
    ("ALTER TABLE db.missing ADD COLUMN c INT", "missing"),
]


@pytest.mark.parametrize(("statement", "named"), REFUSED, ids=[s for s, _ in REFUSED])
def test_refused_alter_is_one_line_and_changes_nothing(
    table: PaimonSession, warehouse: str, statement: str, named: str
) -> None:
    table.sql("CREATE TABLE db.u (a INT)")
    before = fingerprint(warehouse)
    with pytest.raises((PaimonError, SqlParseError)) as err:
        table.sql(statement)
    message = str(err.value)
    assert "\n" not in message and named.lower() in message.lower()
    assert fingerprint(warehouse) == before


def test_bucket_of_a_fixed_bucket_table_may_change_but_not_of_a_dynamic_one(
    session: PaimonSession, warehouse: str
) -> None:
    session.sql(
        "CREATE TABLE db.fixed (k INT, v INT) TBLPROPERTIES ('primary-key' = 'k', 'bucket' = '2')"
    )
    session.sql("CREATE TABLE db.dyn (k INT, v INT) TBLPROPERTIES ('primary-key' = 'k')")
    session.sql("INSERT INTO db.fixed VALUES (1, 1)")
    session.sql("INSERT INTO db.dyn VALUES (1, 1)")
    session.sql("ALTER TABLE db.fixed SET TBLPROPERTIES ('bucket' = '4')")
    assert schema(session, "db.fixed").options["bucket"] == "4"
    before = fingerprint(warehouse)
    with pytest.raises(
        SqlError, match=re.escape("ALTER TABLE paimon.db.dyn: Cannot change bucket when it is -1")
    ):
        session.sql("ALTER TABLE db.dyn SET TBLPROPERTIES ('bucket' = '4')")
    with pytest.raises(SqlError, match="Cannot update primary key"):
        session.sql("ALTER TABLE db.fixed ALTER COLUMN k TYPE BIGINT")
    with pytest.raises(SqlError, match="Cannot drop partition key or primary key"):
        session.sql("ALTER TABLE db.fixed DROP COLUMN k")
    assert fingerprint(warehouse) == before


def test_properties_of_every_literal_kind(table: PaimonSession) -> None:
    table.sql(
        "ALTER TABLE db.t SET TBLPROPERTIES ('snapshot.num-retained.min' = 2, "
        "'write-only' = true, x.y 'z')"
    )
    options = schema(table).options
    assert (options["snapshot.num-retained.min"], options["write-only"], options["x.y"]) == (
        "2",
        "true",
        "z",
    )


def test_schema_file_is_written_as_paimon_writes_it(table: PaimonSession, warehouse: str) -> None:
    table.sql("ALTER TABLE db.t ADD COLUMN c INT COMMENT 'n'")
    with open(f"{warehouse}/db.db/t/schema/schema-1") as fh:
        written = json.load(fh)
    assert written["id"] == 1
    assert written["highestFieldId"] == 3
    assert written["fields"][-1] == {"id": 3, "name": "c", "type": "INT", "description": "n"}
    assert written["partitionKeys"] == ["dt"]


def test_catalog_lists_the_renamed_table(table: PaimonSession, warehouse: str) -> None:
    table.sql("ALTER TABLE db.t RENAME TO moved")
    assert FileSystemCatalog(warehouse).list_tables("db") == ["moved"]


def test_java_and_pypaimon_read_a_table_evolved_through_sql(
    table: PaimonSession, warehouse: str, oracle: Any
) -> None:
    from tests.interop.helpers import pypaimon_read
    from tests.interop.helpers import rows as arrow_rows

    table.sql("ALTER TABLE db.t ALTER COLUMN id TYPE BIGINT")
    table.sql("ALTER TABLE db.t ADD COLUMN score DOUBLE FIRST")
    table.sql("ALTER TABLE db.t RENAME COLUMN name TO label")
    table.sql("ALTER TABLE db.t ADD COLUMN gone STRING")
    table.sql("ALTER TABLE db.t DROP COLUMN gone")
    table.sql("INSERT INTO db.t VALUES (0.5, 4, 'd', 'x')")
    expected = [
        (None, 1, "a", "x"),
        (None, 2, "b", "y"),
        (None, 3, "c", "y"),
        (0.5, 4, "d", "x"),
    ]
    assert sorted(rows(table, "SELECT * FROM db.t"), key=lambda r: r[1]) == expected
    java = oracle("read", warehouse, "db.t")
    assert (
        sorted(((r["score"], r["id"], r["label"], r["dt"]) for r in java), key=lambda r: r[1])
        == expected
    )
    assert list(java[0]) == ["score", "id", "label", "dt"]
    data = pypaimon_read(warehouse, "db.t")
    assert data.schema.names == ["score", "id", "label", "dt"]
    assert sorted(arrow_rows(data), key=lambda r: r[1]) == expected


def test_alter_through_the_shell(table: PaimonSession, warehouse: str) -> None:
    from tests.unit.sql_ext.test_shell import run

    script = (
        "ALTER TABLE db.t ADD COLUMN c INT COMMENT 'new' FIRST; "
        "ALTER TABLE db.t UNSET TBLPROPERTIES ('nothing-set'); "
        "ALTER TABLE db.t ALTER COLUMN c AFTER id; "
        "SELECT * FROM db.t WHERE id = 1"
    )
    code, out, err = run("--output", "tsv", "-e", script, session=table)
    assert (code, out, err) == (0, "id\tc\tname\tdt\n1\tNULL\ta\tx\n", "")
    assert schema(table).schema_id == 3
    before = fingerprint(warehouse)
    code, out, err = run("-e", "ALTER TABLE db.t DROP COLUMN dt", session=table)
    assert (code, out) == (1, "")
    assert err == (
        "Error: ALTER TABLE paimon.db.t: Cannot drop partition key or primary key: [dt]\n"
    )
    assert fingerprint(warehouse) == before


def test_paimon_sql_command_alters_a_table(table: PaimonSession, warehouse: str) -> None:
    """The installed command in its own process (own JVM), as a user runs it."""
    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "PYTHONPATH": str(root), "SPARK_CONF_DIR": str(root / "spark-conf")}
    script = (
        "ALTER TABLE db.t RENAME COLUMN name TO label; "
        "ALTER TABLE db.t ALTER COLUMN id TYPE BIGINT; "
        "ALTER TABLE db.t DROP PARTITION (dt = 'y'); "
        "SELECT * FROM db.t"
    )
    command = [str(Path(sys.executable).with_name("paimon-sql")), "--warehouse", warehouse]
    done = subprocess.run(
        [*command, "--output", "json", "-e", script],
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
    )
    assert done.returncode == 0, done.stderr
    assert [json.loads(line) for line in done.stdout.splitlines()] == [
        {"id": 1, "label": "a", "dt": "x"}
    ]
    assert [f.name for f in schema(table).fields] == ["id", "label", "dt"]
    assert str(schema(table).field("id").type) == "BIGINT"


def test_columns_are_named_as_spark_resolves_them(table: PaimonSession, spark: Any) -> None:
    """Case-insensitive by default (the stored name is kept), exact with caseSensitive."""
    table.sql("ALTER TABLE db.t RENAME COLUMN NAME TO Label")
    table.sql("ALTER TABLE db.t ADD COLUMN c INT COMMENT 'x' AFTER ID")
    table.sql("ALTER TABLE db.t ALTER COLUMN C TYPE BIGINT")
    assert columns(table) == [("id", "INT"), ("c", "BIGINT"), ("Label", "STRING"), ("dt", "STRING")]
    assert schema(table).field("c").description == "x"
    spark.conf.set("spark.sql.caseSensitive", "true")
    try:
        with pytest.raises(SqlError, match="'label' does not exist"):
            table.sql("ALTER TABLE db.t DROP COLUMN label")
    finally:
        spark.conf.unset("spark.sql.caseSensitive")
    table.sql("ALTER TABLE db.t DROP COLUMN label")
    assert [name for name, _ in columns(table)] == ["id", "c", "dt"]


def test_a_comment_before_alter_is_fine(table: PaimonSession) -> None:
    table.sql("/* evolve */ -- note\nALTER TABLE db.t ADD COLUMN c INT")
    assert [name for name, _ in columns(table)][-1] == "c"


def test_java_reads_a_primary_key_table_after_drop_partition(
    session: PaimonSession, warehouse: str, oracle: Any
) -> None:
    session.sql(
        "CREATE TABLE db.pk (k INT, v STRING, dt STRING, PRIMARY KEY (k, dt) NOT ENFORCED) "
        "PARTITIONED BY (dt) TBLPROPERTIES ('bucket' = '2')"
    )
    session.sql("INSERT INTO db.pk VALUES (1, 'a', 'x'), (2, 'b', 'y'), (3, 'c', 'z')")
    session.sql("INSERT INTO db.pk VALUES (2, 'B', 'y'), (1, 'A', 'x')")
    session.sql("ALTER TABLE db.pk DROP PARTITION (dt = 'y'), PARTITION (dt = 'z')")
    expected = [(1, "A", "x")]
    assert rows(session, "SELECT * FROM db.pk") == expected
    java = oracle("read", warehouse, "db.pk")
    assert [(r["k"], r["v"], r["dt"]) for r in java] == expected

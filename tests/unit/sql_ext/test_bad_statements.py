"""A corpus of bad statements and arguments: each is a clear one-line error and changes nothing.

Names and string arguments that look like injections (quotes, ``;``, ``--``, path tricks)
must never reach Spark as SQL nor the file system as paths.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pyspark.errors import PySparkException

from paimon_core.exceptions import PaimonError
from sql_ext.errors import SqlParseError
from sql_ext.session import PaimonSession
from tests.unit.procedures.helpers import fingerprint, new_catalog, new_table, tag_names

USER_ERRORS = (PaimonError, SqlParseError, PySparkException)

BAD = [
    # CALL: names, arguments, types
    ("CALL sys.no_such_procedure(table => 'db.t')", "no_such_procedure"),
    ("CALL sys.create_tag(table => 'db.t')", "tag"),
    ("CALL sys.create_tag(table => 'db.t', tag => 'x', bogus => 1)", "bogus"),
    ("CALL sys.create_tag(table => 'db.t', 'x')", "mix"),
    ("CALL sys.create_tag(table => 'db.t', tag => 'x', snapshot => 'abc')", "snapshot"),
    (
        "CALL sys.create_tag(table => 'db.t', tag => 'x', time_retained => '1 fortnight')",
        "fortnight",
    ),
    ("CALL sys.create_tag(table => 'db.missing', tag => 'x')", "missing"),
    ("CALL sys.create_tag(table => 'nodb.t', tag => 'x')", "nodb"),
    ("CALL sys.create_tag(table => 'db.t; DROP TABLE db.t', tag => 'x')", "DROP TABLE"),
    # tag names
    ("CALL sys.create_tag(table => 'db.t', tag => '../x')", ".."),
    ("CALL sys.create_tag(table => 'db.t', tag => 'a/b')", "/"),
    ("CALL sys.create_tag(table => 'db.t', tag => '..\\\\snapshot')", ".."),
    ("CALL sys.create_tag(table => 'db.t', tag => '.hidden')", ".hidden"),
    ("CALL sys.create_tag(table => 'db.t', tag => '')", "blank"),
    ("CALL sys.create_tag(table => 'db.t', tag => '123')", "numeric"),
    ("CALL sys.create_tag(table => 'db.t', tag => 'x/../../snapshot/snapshot-1')", "/"),
    ("CALL sys.create_tag(table => 'db.t', tag => 'first', snapshot => 1)", "first"),
    ("CALL sys.rename_tag(table => 'db.t', tag => 'missing', target_tag => 'y')", "missing"),
    ("CALL sys.rename_tag(table => 'db.t', tag => 'first', target_tag => '../y')", ".."),
    ("CALL sys.delete_tag(table => 'db.t', tag => 'first,../x')", ".."),
    ("CALL sys.replace_tag(table => 'db.t', tag => 'missing')", "missing"),
    # rollback and expiry
    ("CALL sys.rollback(table => 'db.t', snapshot => 99)", "99"),
    ("CALL sys.rollback(table => 'db.t', tag => 'missing')", "missing"),
    ("CALL sys.rollback(table => 'db.t', snapshot => 1, tag => 'first')", "only"),
    ("CALL sys.rollback_to_timestamp(table => 'db.t', timestamp => 'yesterday')", "timestamp"),
    ("CALL sys.expire_snapshots(table => 'db.t', retain_max => 1, retain_min => 2)", "retain"),
    ("CALL sys.expire_snapshots(table => 'db.t', older_than => 'not a time')", "not a time"),
    ("CALL sys.remove_orphan_files(table => 'db.t', older_than => 'soon')", "soon"),
    # syntax
    ("CALL sys.create_tag(table => 'db.t', tag => 'x'", ""),
    ("CALL sys.create_tag(table => 'db.t', tag => 'unterminated)", "nterminated"),
    ("SELECT * FROM db.t$snapshots WHERE", ""),
    # system tables and time travel
    ("SELECT * FROM db.missing$snapshots", "missing"),
    ("SELECT * FROM db.t$no_such_table", "no_such_table"),
    ("SELECT * FROM db.t VERSION AS OF 99", "99"),
    ("SELECT * FROM db.t VERSION AS OF 'no_such_tag'", "no_such_tag"),
    ("SELECT * FROM db.t TIMESTAMP AS OF '1999-01-01 00:00:00'", "no snapshot"),
    # tag DDL and tables
    ("ALTER TABLE db.t CREATE TAG `../x`", ".."),
    ("ALTER TABLE db.t CREATE TAG first", "first"),
    ("CREATE TABLE db.t (id BIGINT)", "t"),
    ("SELECT * FROM db.no_such_table", "no_such_table"),
    ("INSERT INTO db.no_such_table VALUES (1)", "no_such_table"),
    # INSERT column lists and BY NAME
    ("INSERT INTO db.t (id, nope) VALUES (1, 'a')", "nope"),
    ("INSERT INTO db.t (id, ID, dt) VALUES (1, 2, 'x')", "more than once"),
    ("INSERT INTO db.t (id, dt) VALUES (1)", "db.t"),
    ("INSERT INTO db.t (`id; DROP TABLE db.t`) VALUES (1)", "DROP TABLE"),
    ("INSERT INTO db.t PARTITION (dt = 'x') (id, dt) SELECT 1, 'y'", "both"),
    ("INSERT INTO db.t BY NAME SELECT 1 AS id, 'x' AS zz", "extra columns"),
    ("INSERT INTO db.t BY NAME SELECT 1 AS id, 2 AS Id", "ambiguous"),
    ("INSERT INTO db.t (id) BY NAME SELECT 1 AS id", "BY NAME"),
    ("CREATE TABLE db.d (a INT DEFAULT 'abc')", "Unsupported default value"),
    ("CREATE TABLE db.d (a TIMESTAMP DEFAULT current_timestamp())", "Unsupported default value"),
    ("CREATE TABLE db.d (a MAP<INT, INT> DEFAULT map(1, 2))", "Unsupported default value"),
    # DDL variants and auxiliary statements
    ("SHOW PARTITIONS db.t PARTITION (nope = 'x')", "nope"),
    ("SHOW PARTITIONS db.t PARTITION (dt)", "value"),
    ("SHOW PARTITIONS db.t PARTITION (dt = 'a'", "PARTITION"),
    ("SHOW CREATE TABLE db.t AS SERDE", "SERDE"),
    ("SHOW CREATE TABLE db.missing", "missing"),
    ("SHOW COLUMNS IN db.missing", "missing"),
    ("SHOW COLUMNS IN other.t IN db", "conflicting"),
    ("SHOW TABLE EXTENDED IN db LIKE 't' PARTITION (dt = 'x')", "PARTITIONS_NOT_FOUND"),
    ("SHOW TABLE EXTENDED IN db LIKE 't' PARTITION (nope = 'x')", "nope"),
    ("DESCRIBE db.t PARTITION (dt = '2024-01-01')", "PARTITION"),
    ("DESCRIBE EXTENDED db.t AS JSON", "AS JSON"),
    ("ANALYZE TABLE db.t COMPUTE STATISTICS NOSCAN", "NOSCAN"),
    ("ANALYZE TABLE db.t COMPUTE STATISTICS FOR COLUMNS nope", "nope"),
    ("ANALYZE TABLE db.t PARTITION (dt = 'x') COMPUTE STATISTICS", "ANALYZE TABLE"),
    ("ANALYZE TABLE db.missing COMPUTE STATISTICS", "missing"),
    ("CREATE TABLE db.t2 LIKE db.missing", "missing"),
    ("CREATE TABLE db.t LIKE db.t", "already exists"),
    ("CREATE TABLE db.x (a INT) USING paimon LOCATION '/tmp/x'", "table path"),
    ("CREATE TABLE db.x LOCATION '../../etc'", "table path"),
    ("REFRESH TABLE paimon.db.missing", "missing"),
    ("DESCRIBE db.t id", "DESCRIBE is not supported on Paimon table"),
    ("SHOW TBLPROPERTIES db.missing", "missing"),
    # ALTER TABLE / DATABASE
    ("ALTER TABLE db.t DROP COLUMN dt", "partition key"),
    ("ALTER TABLE db.t RENAME COLUMN dt TO d", "partition column"),
    ("ALTER TABLE db.t ALTER COLUMN name TYPE INT", "cannot be cast"),
    ("ALTER TABLE db.t ALTER COLUMN id TYPE INTERVAL DAY", "INTERVAL"),
    ("ALTER TABLE db.t ALTER COLUMN id TYPE STRUCT<a INT", "STRUCT"),
    ("ALTER TABLE db.t SET TBLPROPERTIES ('primary-key' = 'id')", "primary key"),
    ("ALTER TABLE db.t SET TBLPROPERTIES ('bucket' = '2')", "bucket"),
    ("ALTER TABLE db.t UNSET TBLPROPERTIES ('bucket')", "bucket"),
    ("ALTER TABLE db.t ADD COLUMN c INT NOT NULL", "NOT NULL"),
    ("ALTER TABLE db.t ADD COLUMNS (c INT, c STRING)", "already exists"),
    ("ALTER TABLE db.t RENAME COLUMN `name; DROP TABLE db.t` TO x", "DROP TABLE"),
    ("ALTER TABLE db.t RENAME TO `../x`", ".."),
    ("ALTER TABLE db.t RENAME TO `a/b`", "a/b"),
    ("ALTER TABLE db.t RENAME TO nodb.x", "nodb"),
    ("ALTER TABLE db.t RENAME TO db.t", "already exists"),
    ("ALTER TABLE db.t DROP PARTITION (dt = '1999-01-01')", "not found"),
    ("ALTER TABLE db.t DROP PARTITION (dt = '2024-01-01'; DROP TABLE db.t)", "run_script"),
    ("ALTER TABLE db.t DROP PARTITION (dt = '2024-01-01' OR 1 = 1)", "')'"),
    ("ALTER TABLE db.t DROP PARTITION (name = 'n1')", "partition column"),
    ("ALTER TABLE db.t ALTER COLUMN id TYPE STRING; DROP TABLE db.t", "run_script"),
    ("ALTER TABLE db.t SET TBLPROPERTIES ('a' = 'b'", "')'"),
    ("ALTER TABLE db.t ADD COLUMN", "column name"),
    ("ALTER TABLE db.missing ADD COLUMN c INT", "missing"),
    ("ALTER DATABASE db SET DBPROPERTIES ('a' = 'b')", "alter database"),
    ("ALTER DATABASE nodb SET DBPROPERTIES ('a' = 'b')", "nodb"),
    # row-level DML: one line naming the statement (db.pk: primary key (id, dt))
    ("UPDATE db.t SET nope = 1", "UPDATE paimon.db.t: cannot resolve column nope"),
    ("UPDATE db.t SET id = nosuch(1)", "UPDATE paimon.db.t: [UNRESOLVED_ROUTINE]"),
    ("UPDATE db.t SET id = 1, id = 2", "UPDATE paimon.db.t: Multiple assignments for 'id'"),
    ("UPDATE db.t SET id = 1 WHERE id IN (SELECT 1)", "UPDATE paimon.db.t: subqueries"),
    ("UPDATE db.t SET name.x = 1", "UPDATE paimon.db.t: Updating nested fields"),
    ("UPDATE db.t SET id = 'abc' WHERE id = 1", "UPDATE paimon.db.t: Cannot write to db.t"),
    ("UPDATE db.t SET id = 1 WHERE nope > 1", "UPDATE paimon.db.t: [UNRESOLVED_COLUMN"),
    ("UPDATE db.t SET id = 1 ORDER BY id LIMIT 1", "UPDATE paimon.db.t: ORDER"),
    ("UPDATE db.pk SET id = 5", "UPDATE paimon.db.pk: Can't update the primary key column"),
    ("UPDATE db.pk SET name = NULL, dt = 'z'", "UPDATE paimon.db.pk: Can't update the primary"),
    ("UPDATE db.pk SET name = 'x' WHERE nope = 1", "UPDATE paimon.db.pk: [UNRESOLVED_COLUMN"),
    ("UPDATE db.missing SET id = 1", "UPDATE: Table or view `db`.`missing` not found"),
    ("UPDATE db.t$snapshots SET snapshot_id = 1", "UPDATE is not supported"),
    ("DELETE FROM db.t WHERE nope = 1", "DELETE FROM paimon.db.t: invalid WHERE"),
    ("DELETE FROM db.t WHERE id IN (SELECT 1)", "DELETE FROM paimon.db.t: subqueries"),
    ("DELETE FROM db.t WHERE nosuch(id)", "DELETE FROM paimon.db.t: invalid WHERE"),
    ("DELETE FROM db.pk WHERE nope = 1", "DELETE FROM paimon.db.pk: [UNRESOLVED_COLUMN"),
    ("DELETE FROM db.missing WHERE id = 1", "DELETE FROM: Table or view `db`.`missing`"),
    ("DELETE FROM db.t$snapshots WHERE snapshot_id = 1", "DELETE is not supported"),
    (
        "MERGE INTO db.t USING (SELECT 1 AS id) s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET nope = 1",
        "MERGE INTO paimon.db.t: cannot resolve column nope",
    ),
    (
        "MERGE INTO db.t USING (SELECT 1 AS id) s ON t.id = s.id WHEN NOT MATCHED THEN INSERT *",
        "MERGE INTO paimon.db.t: Cannot INSERT * into target column 'name'",
    ),
    (
        "MERGE INTO db.t USING (SELECT 1 AS id) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET *",
        "MERGE INTO paimon.db.t: Cannot UPDATE * target column 'name'",
    ),
    (
        "MERGE INTO db.t USING db.missing s ON t.id = s.id WHEN MATCHED THEN DELETE",
        "MERGE INTO paimon.db.t: Table or view `db`.`missing` not found",
    ),
    (
        "MERGE INTO db.t USING (SELECT 1 AS id UNION ALL SELECT 1) s ON t.id = s.id "
        "WHEN MATCHED THEN DELETE",
        "MERGE INTO paimon.db.t: Can't execute this MergeInto",
    ),
    (
        "MERGE INTO db.t USING (SELECT 1 AS id) s ON t.id = s.id WHEN MATCHED THEN INSERT *",
        "MERGE INTO paimon.db.t: only WHEN NOT MATCHED can INSERT",
    ),
    (
        "MERGE INTO db.t USING (SELECT 1 AS id) s ON t.id IN (SELECT 1) WHEN MATCHED THEN DELETE",
        "MERGE INTO paimon.db.t: subqueries",
    ),
    (
        "MERGE INTO db.t USING (SELECT 1 AS id) t ON t.id = t.id WHEN MATCHED THEN DELETE",
        "MERGE INTO paimon.db.t: the source and the target are both named t",
    ),
    (
        "MERGE INTO db.pk USING (SELECT 1 AS id, 'x' AS dt) s ON pk.dt = s.dt "
        "WHEN MATCHED THEN UPDATE SET id = s.id",
        "MERGE INTO paimon.db.pk: Can't update the primary key column in update clause.",
    ),
    (
        "MERGE INTO db.t USING (SELECT 1 AS id) s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET id = nosuch(1)",
        "MERGE INTO paimon.db.t: [UNRESOLVED_ROUTINE]",
    ),
    (
        "MERGE INTO db.t USING (SELECT 1 AS id) s ON t.id = s.id WHEN MATCHED THEN DELETE "
        "WHEN MATCHED AND s.id > 0 THEN DELETE",
        "MERGE INTO paimon.db.t: only the last WHEN MATCHED clause",
    ),
    (
        "MERGE INTO db.t USING (SELECT 1 AS id) s ON t.nope = s.id WHEN MATCHED THEN DELETE",
        "MERGE INTO paimon.db.t: [UNRESOLVED_COLUMN",
    ),
    (
        "MERGE INTO db.t USING (SELECT 1 AS id) s WHEN MATCHED THEN DELETE",
        "MERGE INTO paimon.db.t: expected ON",
    ),
    (
        "MERGE INTO db.missing USING (SELECT 1 AS id) s ON missing.id = s.id "
        "WHEN MATCHED THEN DELETE",
        "MERGE INTO: Table or view `db`.`missing` not found",
    ),
    # names longer than a file name
    (f"CREATE DATABASE {'d' * 300}", "300 bytes"),
    (f"CREATE TABLE db.{'t' * 300} (id BIGINT)", "300 bytes"),
    (f"CREATE TABLE db.{'t' * 300} AS SELECT 1 AS id", "300 bytes"),
    (f"SELECT * FROM db.{'t' * 300}", "not found"),
    (f"CALL sys.create_tag(table => 'db.{'t' * 300}', tag => 'x')", "t" * 300),
    ("CALL sys.create_tag(table => 'db.t', tag => '" + "x" * 300 + "')", "300 bytes"),
]


@pytest.fixture
def session(spark: Any, warehouse: str) -> Iterator[PaimonSession]:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=3)
    from paimon_core.lifecycle.tag_management import create_tag

    create_tag(table, "first", snapshot_id=1)
    new_table(catalog, "db.pk", commits=2, primary_keys=["id", "dt"], options={"bucket": "1"})
    session = PaimonSession(spark, warehouse=warehouse)
    session.sql("SHOW DATABASES").collect()  # the catalog's own set-up (Paimon's `default` db)
    yield session


@pytest.mark.parametrize(("statement", "named"), BAD, ids=[s[:80] for s, _ in BAD])
def test_bad_statement_is_a_clear_error_and_changes_nothing(
    session: PaimonSession, warehouse: str, statement: str, named: str
) -> None:
    before = fingerprint(warehouse)
    with pytest.raises(USER_ERRORS) as err:
        session.sql(statement).collect()
    message = str(err.value)
    first_line = message.splitlines()[0] if message else ""
    assert first_line.strip(), f"empty error for {statement!r}"
    if not isinstance(err.value, PySparkException):
        assert "\n" not in message
    assert named.lower() in message.lower()
    assert fingerprint(warehouse) == before


@pytest.mark.parametrize(
    "name", ["x'; DROP TABLE db.t; --", 'a"b', "$snapshots", "tag with spaces", "ünï-标签"]
)
def test_injection_like_tag_names_are_just_names(session: PaimonSession, name: str) -> None:
    """Quotes, ``;`` and comments in a string argument are part of the value, nothing else."""
    from sqlglot import exp

    literal = exp.Literal.string(name).sql(dialect="spark")
    session.sql(f"CALL sys.create_tag(table => 'db.t', tag => {literal})").collect()
    table = session.catalog.get_table("db.t")
    assert sorted(tag_names(table)) == sorted(["first", name])
    assert session.sql("SELECT count(*) AS n FROM db.t").collect()[0]["n"] == 6
    rows = session.sql(f"SELECT * FROM db.t VERSION AS OF {literal}").collect()
    assert len(rows) == 6

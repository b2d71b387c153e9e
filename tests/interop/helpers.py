"""Helpers shared by the interoperability tests: row comparison, pypaimon reads and writes,
and small Java programs (``tests/interop/java/*.java``) compiled at test time against the
paimon-oracle's Paimon 0.9 jars and run."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

JAVA_SOURCES = Path(__file__).resolve().parent / "java"


def rows(table: pa.Table, columns: list[str] | None = None) -> list[tuple[Any, ...]]:
    """Rows of an Arrow table as sorted tuples (order-free comparison, nulls sort first)."""
    names = columns or table.column_names
    data = table.select(names).to_pylist()
    out = [tuple(r[n] for n in names) for r in data]
    return sorted(out, key=lambda r: tuple((v is not None, v) for v in r))


def json_rows(objs: list[dict[str, Any]], columns: list[str]) -> list[tuple[Any, ...]]:
    out = [tuple(o.get(c) for c in columns) for o in objs]
    return sorted(out, key=lambda r: tuple((v is not None, v) for v in r))


def pypaimon_read(
    warehouse: str, identifier: str, options: dict[str, str] | None = None
) -> pa.Table:
    from pypaimon import CatalogFactory

    table = CatalogFactory.create({"warehouse": warehouse}).get_table(identifier)
    if options:
        table = table.copy(options)
    builder = table.new_read_builder()
    return builder.new_read().to_arrow(builder.new_scan().plan().splits())


def pypaimon_write(
    warehouse: str,
    identifier: str,
    data: pa.Table,
    *,
    create: dict[str, Any] | None = None,
    overwrite: dict[str, str] | None = None,
) -> None:
    """Write ``data`` with pypaimon 2.1, creating the table first when ``create`` is given."""
    from pypaimon import CatalogFactory, Schema

    catalog = CatalogFactory.create({"warehouse": warehouse})
    if create is not None:
        catalog.create_database(identifier.split(".")[0], True)
        schema = Schema.from_pyarrow_schema(
            data.schema,
            partition_keys=create.get("partition_keys"),
            primary_keys=create.get("primary_keys"),
            options=create.get("options"),
        )
        catalog.create_table(identifier, schema, False)
    pypaimon_commit(catalog.get_table(identifier), data, overwrite=overwrite)


def pypaimon_commit(table: Any, data: pa.Table, *, overwrite: dict[str, str] | None = None) -> None:
    """One batch write + commit of ``data`` to a pypaimon table object."""
    builder = table.new_batch_write_builder()
    if overwrite is not None:
        builder = builder.overwrite(overwrite)
    write = builder.new_write()
    write.write_arrow(data)
    commit = builder.new_commit()
    commit.commit(write.prepare_commit())
    write.close()
    commit.close()


EVOLVED_FIRST = pa.schema([pa.field("k", pa.int64(), False), ("a", pa.string()), ("b", pa.int32())])
EVOLVED_LATEST = pa.schema(
    [pa.field("k", pa.int64(), False), ("a2", pa.string()), ("c", pa.string())]
)


def pypaimon_evolved_table(warehouse: str, identifier: str) -> None:
    """With pypaimon: snapshot 1 `{k:1, a:'a1', b:10}`; then column c added, a renamed to a2,
    b dropped (schema 3); snapshot 2 `{k:2, a2:'x', c:'c2'}` under the new schema."""
    from pypaimon import CatalogFactory
    from pypaimon.schema.data_types import AtomicType
    from pypaimon.schema.schema_change import SchemaChange

    first = pa.table({"k": [1], "a": ["a1"], "b": [10]}, schema=EVOLVED_FIRST)
    pypaimon_write(warehouse, identifier, first, create={})
    catalog = CatalogFactory.create({"warehouse": warehouse})
    for change in (
        SchemaChange.add_column("c", AtomicType("STRING")),
        SchemaChange.rename_column("a", "a2"),
        SchemaChange.drop_column("b"),
    ):
        catalog.alter_table(identifier, [change], False)
    latest = pa.table({"k": [2], "a2": ["x"], "c": ["c2"]}, schema=EVOLVED_LATEST)
    pypaimon_write(warehouse, identifier, latest)


def _oracle_classpath() -> list[str]:
    """The jars the paimon-oracle runs Paimon 0.9 with: slf4j and Hadoop's client from
    pyspark's ``jars/``, then the Paimon bridge jar from the oracle's cache (run the oracle
    once first: it fetches the jar)."""
    cache = Path(os.environ.get("PAIMON_ORACLE_CACHE", Path.home() / ".cache" / "paimon-oracle"))
    spec = importlib.util.find_spec("pyspark")
    assert spec is not None and spec.origin is not None
    jars = Path(spec.origin).parent / "jars"
    classpath = [
        str(next(jars.glob(f"{name}-[0-9]*.jar")))
        for name in ("slf4j-api", "hadoop-client-api", "hadoop-client-runtime")
    ]
    classpath.append(str(cache / "paimon-python-java-bridge-0.9.0.jar"))
    return classpath


def run_java(build_dir: Path, program: str, args: Sequence[str]) -> list[Any]:
    """Compile ``tests/interop/java/<program>.java`` into ``build_dir`` (once per directory)
    and run its ``main`` with ``args`` in one JVM on the oracle's jars; returns the JSON
    objects of the stdout lines that start with ``{`` (Paimon's own logging is dropped).

    Raises:
        RuntimeError: the program exited non-zero (its stderr in the message).
    """
    classpath = _oracle_classpath()
    classes = build_dir / "classes"
    if not (classes / f"{program}.class").exists():
        classes.mkdir(parents=True, exist_ok=True)
        source = JAVA_SOURCES / f"{program}.java"
        subprocess.run(
            ["javac", "-nowarn", "-d", str(classes), "-cp", ":".join(classpath), str(source)],
            check=True,
            capture_output=True,
        )
    proc = subprocess.run(
        ["java", "-Xlog:disable", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
         "-cp", ":".join([*classpath, str(classes)]), program, *args],
        capture_output=True,
        text=True,
        check=False,
    )  # fmt: skip
    if proc.returncode:
        raise RuntimeError(f"Java's {program} failed: {proc.stderr}")
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


SQL_MADE_TABLE = """
    CREATE DATABASE db;
    CREATE TABLE db.orders (id BIGINT, amount DECIMAL(10, 2), ts TIMESTAMP, dt STRING,
        PRIMARY KEY (dt, id) NOT ENFORCED) PARTITIONED BY (dt)
        TBLPROPERTIES ('bucket' = '2', 'snapshot.num-retained.min' = '1');
    INSERT INTO db.orders VALUES (1, 1.50, TIMESTAMP '2024-05-01 10:00:00', 'd1'),
        (2, 2.25, NULL, 'd1');
    CALL sys.create_tag(table => 'db.orders', tag => 'first');
    INSERT INTO db.orders VALUES (1, 9.99, NULL, 'd1'), (3, 3.00, NULL, 'd2');
    ALTER TABLE db.orders CREATE TAG second;
    INSERT INTO db.orders VALUES (4, 4.00, NULL, 'd2');
    CALL sys.expire_snapshots(table => 'db.orders', retain_max => 1);
"""
"""CREATE TABLE / INSERT / CALL / tag DDL / expiry through the SQL session: ``db.orders``
with tags ``first`` (snapshot 1) and ``second`` (2) and only snapshot 3 left; read as
``SQL_MADE_READS`` (id, amount as text, dt) at each tag and at the latest snapshot (None)."""
SQL_MADE_READS: dict[str | None, list[tuple[Any, ...]]] = {
    "first": [(1, "1.50", "d1"), (2, "2.25", "d1")],
    "second": [(1, "9.99", "d1"), (2, "2.25", "d1"), (3, "3.00", "d2")],
    None: [(1, "9.99", "d1"), (2, "2.25", "d1"), (3, "3.00", "d2"), (4, "4.00", "d2")],
}


def sql_made_table(spark: Any, warehouse: str) -> list[tuple[Any, ...]]:
    """Run ``SQL_MADE_TABLE`` in a SQL session on ``warehouse``; returns the session's read
    of the table (id, amount as text, dt), sorted."""
    from sql_ext.session import PaimonSession

    session = PaimonSession(spark, warehouse=warehouse)
    for _statement, df in session.run_script(SQL_MADE_TABLE):
        df.collect()
    return sorted(
        (r["id"], str(r["amount"]), r["dt"])
        for r in session.sql("SELECT * FROM db.orders").collect()
    )

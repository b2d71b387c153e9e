"""Reads through Spark executors (issue 8, read half) against plain Spark Parquet, same run.

Usage: python bench/spark_read.py [--rows 1000000] [--repeat 3]

Builds, in a child process (so its memory does not count), an append table partitioned by
``p`` (10 values) and a primary-key table (``id``, bucket 4) with an upsert of 10% of the keys,
plus the same rows as plain Parquet partitioned by ``p``. Then, in one ``local[2]`` session with
a 1g driver (the project's configuration), the median of ``--repeat`` runs of each query:
``count(*)``, ``sum(x) WHERE p = 3``, one column, a full scan of the append table (all
columns, to Spark's ``noop`` sink) and a full scan of the PK table; each next to the same
query on the plain Parquet copy. Prints the driver's peak memory: the Python process's peak
RSS and the JVM's peak heap (in local mode the executors share that JVM).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import resource
import subprocess
import sys
import tempfile
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _common import median, timed

CHUNK = 500_000


def _data(start: int, n: int, salt: str = "") -> object:
    import numpy as np
    import pyarrow as pa

    ids = np.arange(start, start + n, dtype=np.int64)
    day = dt.date(2024, 1, 1)
    return pa.table(
        {
            "id": ids,
            "name": pa.array([f"name-{i}{salt}" for i in ids.tolist()]),
            "x": (ids % 1000).astype(np.float64) / 7.0,
            "amount": pa.array(
                [Decimal(i % 100000) / 100 for i in ids.tolist()], pa.decimal128(10, 2)
            ),
            "d": pa.array([day + dt.timedelta(days=int(i % 365)) for i in ids.tolist()]),
            "p": (ids % 10).astype(np.int32),
        }
    )


def build(warehouse: str, parquet: str, rows: int) -> None:
    import pyarrow.parquet as pq

    from paimon_core.catalog import FileSystemCatalog

    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    first = _data(0, 1)
    append = catalog.create_table("db.app", first.schema, partition_keys=["p"])
    pk = catalog.create_table("db.pk", first.schema, primary_keys=["id"], options={"bucket": "4"})
    for start in range(0, rows, CHUNK):
        chunk = _data(start, min(CHUNK, rows - start))
        append.write_arrow(chunk)
        pk.write_arrow(chunk)
        pq.write_to_dataset(chunk, parquet, partition_cols=["p"])
    upsert = rows // 10
    for start in range(0, upsert, CHUNK):
        pk.write_arrow(_data(start * 10 % rows, min(CHUNK, upsert - start), salt="-u"))


def run(warehouse: str, parquet: str, repeat: int) -> None:
    from sql_ext.session import PaimonSession

    session = PaimonSession(
        master="local[2]",
        warehouse=warehouse,
        conf={"spark.ui.enabled": "false", "spark.driver.memory": "1g"},
    )
    spark = session.spark
    spark.sparkContext.setLogLevel("ERROR")
    spark.read.parquet(parquet).createOrReplaceTempView("plain")

    def ours(sql: str, noop: bool = False) -> float:
        def go() -> None:
            df = session.sql(sql)
            if noop:
                df.write.format("noop").mode("overwrite").save()
            else:
                df.collect()

        go()  # warm
        return median([timed(go) for _ in range(repeat)])

    def plain(sql: str, noop: bool = False) -> float:
        def go() -> None:
            df = spark.sql(sql)
            if noop:
                df.write.format("noop").mode("overwrite").save()
            else:
                df.collect()

        go()
        return median([timed(go) for _ in range(repeat)])

    cases = [
        ("count(*)", "SELECT count(*) FROM {}", "db.app", False, 1.5),
        ("sum(x) WHERE p = 3", "SELECT sum(x) FROM {} WHERE p = 3", "db.app", False, 1.5),
        ("one column", "SELECT max(name) FROM {}", "db.app", False, 1.5),
        ("full scan append", "SELECT * FROM {}", "db.app", True, 1.5),
        ("full scan PK after 10% upsert", "SELECT * FROM {}", "db.pk", True, 4.0),
    ]
    print(f"{'query':32} {'ours ms':>9} {'parquet ms':>11} {'ratio':>6} target")
    for title, sql, table, noop, target in cases:
        a = ours(sql.format(table), noop)
        b = plain(sql.format("plain"), noop)
        verdict = "met" if a / b <= target else "MISSED"
        print(f"{title:32} {a:9.0f} {b:11.0f} {a / b:5.2f}x <= {target}x {verdict}")
    pk_rows = session.sql("SELECT count(*) FROM db.pk").collect()[0][0]
    print(f"PK table rows after upsert: {pk_rows}")
    jvm = spark._jvm.java.lang.management.ManagementFactory  # type: ignore[union-attr]
    heap = sum(
        pool.getPeakUsage().getUsed()
        for pool in jvm.getMemoryPoolMXBeans()
        if str(pool.getType()) == "Heap memory"
    )
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"driver peak: Python RSS {rss:.0f} MB, JVM heap {heap / 2**20:.0f} MB (of 1g)")
    session.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--build", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.build:
        build(args.build[0], args.build[1], args.rows)
        return
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    with tempfile.TemporaryDirectory() as tmp:
        warehouse, parquet = os.path.join(tmp, "wh"), os.path.join(tmp, "plain")
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        subprocess.run(
            [sys.executable, __file__, "--rows", str(args.rows), "--build", warehouse, parquet],
            check=True,
            env=env,
        )
        print(f"rows: {args.rows}, repeat: {args.repeat}, local[2], driver memory 1g")
        run(warehouse, parquet, args.repeat)


if __name__ == "__main__":
    main()

"""Compaction of a primary-key table through ``CALL sys.compact`` against plain Spark, same run.

Usage: python bench/compact.py [--commits 100] [--rows 100000] [--repeat 3] [--master M]

A primary-key table ``db.t (id BIGINT, v BIGINT, name STRING, x DOUBLE)``, ``'bucket' = '4'``,
gets ``--commits`` commits of ``--rows`` rows each through the core writer
(``FileStoreTable.write_arrow``, one snapshot per commit, no Spark). Commit ``i`` writes the
ids ``i * rows / 2 .. i * rows / 2 + rows - 1``: each commit updates half of the previous
one's keys, so every bucket holds ``--commits`` overlapping level-0 files and a compaction
has rows to merge away. Then, in one ``PaimonSession`` under the project's configuration
(``SPARK_CONF_DIR=spark-conf``: ``local[*]`` on this machine's cores, 4 shuffle partitions):

- reads before: ``SELECT count(*)`` and a full-scan ``SELECT sum(v), sum(x)`` (median of
  ``--repeat``, after a warm-up);
- plain Spark doing the same job on the same data files: ``spark.read.parquet`` of the
  table's four bucket directories (which hold exactly its data files), the newest row per key (``max_by`` on ``_SEQUENCE_NUMBER``), four files
  by key (``repartition(4, id)``) with ``df.write.parquet`` ("Spark merge + rewrite"); and
  the merged rows read back and written again ("Spark rewrite only": the I/O floor);
- ``CALL sys.compact(table => 'db.t')``: one Spark task per bucket merges its files with the
  table's merge engine and writes them at the top level, the driver commits once;
- reads after, the same queries; and plain Spark's queries of its merged Parquet copy;
- ``CALL sys.compact_manifest(table => 'db.t')`` on the result.

``count(*)``, ``sum(v)`` and ``sum(x)`` of the table before and after and of the Spark copy
are checked equal. Only inserts are written, so the Spark baseline has no deletes to drop.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _common import median, timed

READS = (
    ("SELECT count(*)", "SELECT count(*) FROM {}"),
    ("full scan: sum(v), sum(x)", "SELECT sum(v), sum(x) FROM {}"),
)


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def write_commits(warehouse: str, commits: int, rows: int) -> tuple[Any, float]:
    """The table after ``commits`` core commits, and their total seconds."""
    import numpy as np
    import pyarrow as pa

    from paimon_core.catalog import FileSystemCatalog

    schema = pa.schema(
        [("id", pa.int64()), ("v", pa.int64()), ("name", pa.string()), ("x", pa.float64())]
    )
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    table = catalog.create_table("db.t", schema, primary_keys=["id"], options={"bucket": "4"})
    start = time.perf_counter()
    for i in range(commits):
        ids = np.arange(i * rows // 2, i * rows // 2 + rows, dtype=np.int64)
        data = pa.table(
            {
                "id": ids,
                "v": np.full(rows, i, dtype=np.int64),
                "name": pa.array([f"n{k}-{i}" for k in ids.tolist()]),
                "x": ids / 7.0,
            },
            schema=schema,
        )
        table.write_arrow(data)
        if (i + 1) % 10 == 0 or i + 1 == commits:
            elapsed = time.perf_counter() - start
            print(f"  {i + 1} commits, {elapsed:.1f} s, load {_load()}", flush=True)
    return catalog.get_table("db.t"), time.perf_counter() - start


def data_files(table: Any) -> list[str]:
    from paimon_core.operations.read import data_file_path

    snapshot = table.snapshot_manager.latest_snapshot()
    return [
        data_file_path(table, (), e.bucket, e.file.file_name)
        for e in table.new_scan().read_entries(snapshot)
    ]


def timed_reads(run: Callable[[str], Any], name: str, repeat: int) -> dict[str, float]:
    out: dict[str, float] = {}
    for title, sql in READS:
        query = sql.format(name)
        run(query)  # warm-up
        out[title] = median([timed(lambda q=query: run(q)) for _ in range(repeat)])
    return out


def run(commits: int, rows: int, repeat: int, master: str | None) -> None:
    from sql_ext.session import PaimonSession

    tmp = tempfile.mkdtemp(prefix="compact-bench-")
    warehouse = f"{tmp}/wh"
    print(f"commits={commits} rows/commit={rows} buckets=4 repeat={repeat} load {_load()}")
    table, write_s = write_commits(warehouse, commits, rows)
    files = data_files(table)
    size_mb = sum(os.path.getsize(f) for f in files) / 2**20
    print(
        f"core writer: {commits} commits in {write_s:.1f} s ({write_s / commits * 1000:.0f} ms "
        f"each); {len(files)} data files, {size_mb:.0f} MB"
    )

    session = PaimonSession(master=master, warehouse=warehouse)
    spark = session.spark
    spark.sparkContext.setLogLevel("ERROR")
    conf = spark.sparkContext.getConf()
    print(
        f"master={conf.get('spark.master')} driver memory={conf.get('spark.driver.memory', '1g')}"
        f" shuffle partitions={spark.conf.get('spark.sql.shuffle.partitions')}"
    )

    def ours(query: str) -> Any:
        return session.sql(query).collect()

    check = "SELECT count(*), sum(v), sum(x) FROM {}"
    count_before = ours(check.format("db.t"))[0]
    before = timed_reads(ours, "db.t", repeat)

    merged_dir, copy_dir = f"{tmp}/spark_merged", f"{tmp}/spark_copy"

    # The bucket directories hold exactly the table's files here: Spark lists 4 directories
    # on the driver instead of running a listing job over 400 paths.
    buckets = sorted({os.path.dirname(f) for f in files})
    assert sorted(os.path.join(d, n) for d in buckets for n in os.listdir(d)) == sorted(files)

    def spark_merge() -> None:
        spark.read.parquet(*buckets).createOrReplaceTempView("raw")
        spark.sql(
            "SELECT r.* FROM (SELECT max_by(struct(id, v, name, x), _SEQUENCE_NUMBER) AS r "
            "FROM raw GROUP BY _KEY_id)"
        ).repartition(4, "id").write.mode("overwrite").parquet(merged_dir)

    def spark_copy() -> None:
        spark.read.parquet(merged_dir).write.mode("overwrite").parquet(copy_dir)

    _warm_up_spark(spark, files[:8], f"{tmp}/warm")
    spark_merge_s = timed(spark_merge) / 1000
    spark_copy_s = timed(spark_copy) / 1000
    print(f"load {_load()}")

    compact_s = timed(lambda: _check_true(session.sql("CALL sys.compact(table => 'db.t')"))) / 1000
    table = session.catalog.get_table("db.t")
    latest = table.snapshot_manager.latest_snapshot()
    assert latest.commit_kind == "COMPACT", latest.commit_kind
    after_files = data_files(table)
    after_mb = sum(os.path.getsize(f) for f in after_files) / 2**20

    count_after = ours(check.format("db.t"))[0]
    after = timed_reads(ours, "db.t", repeat)
    spark.read.parquet(merged_dir).createOrReplaceTempView("spark_merged")
    count_spark = spark.sql(check.format("spark_merged")).collect()[0]
    plain = timed_reads(lambda q: spark.sql(q).collect(), "spark_merged", repeat)
    results = (tuple(count_before), tuple(count_after), tuple(count_spark))
    assert len({r[:2] for r in results}) == 1, results  # count(*) and sum(v) exactly
    assert max(r[2] for r in results) - min(r[2] for r in results) < 1e-6 * results[0][2], results

    manifests_before = _manifest_count(table)
    manifest_s = timed(
        lambda: _check_true(session.sql("CALL sys.compact_manifest(table => 'db.t')"))
    )
    manifests_after = _manifest_count(session.catalog.get_table("db.t"))

    print(f"\nrows written {commits * rows:,}; rows in the table {count_after[0]:,}")
    print(f"\n{'rewrite':34} {'seconds':>8} {'ours/it':>8}")
    print(f"{'CALL sys.compact (4 bucket tasks)':34} {compact_s:8.1f}")
    print(f"{'Spark merge + rewrite':34} {spark_merge_s:8.1f} {compact_s / spark_merge_s:7.2f}x")
    print(f"{'Spark rewrite only':34} {spark_copy_s:8.1f} {compact_s / spark_copy_s:7.2f}x")
    print(f"files: {len(files)} -> {len(after_files)} ({size_mb:.0f} MB -> {after_mb:.0f} MB)")
    print(f"\n{'read, median ms':28} {'before':>8} {'after':>8} {'speedup':>8} {'Spark pq':>9}")
    for title, _sql in READS:
        b, a, p = before[title], after[title], plain[title]
        print(f"{title:28} {b:8.0f} {a:8.0f} {b / a:7.1f}x {p:9.0f}")
    print(
        f"\nCALL sys.compact_manifest: {manifest_s:.0f} ms, data manifests "
        f"{manifests_before} -> {manifests_after}; load {_load()}"
    )
    session.stop()
    shutil.rmtree(tmp, ignore_errors=True)


def _warm_up_spark(spark: Any, files: list[str], directory: str) -> None:
    """The baseline's query once on a few files, so that plain Spark pays no first-run
    costs (code generation, the first shuffle) in its timed run; ours is warm from the reads."""
    spark.read.parquet(*files).createOrReplaceTempView("raw")
    spark.sql(
        "SELECT r.* FROM (SELECT max_by(struct(id, v, name, x), _SEQUENCE_NUMBER) AS r "
        "FROM raw GROUP BY _KEY_id)"
    ).repartition(4, "id").write.mode("overwrite").parquet(directory)
    spark.read.parquet(directory).write.mode("overwrite").parquet(directory + "-copy")


def _check_true(df: Any) -> None:
    assert [tuple(r) for r in df.collect()] == [(True,)]


def _manifest_count(table: Any) -> int:
    latest = table.snapshot_manager.latest_snapshot()
    lists = table.manifest_list
    return len(lists.read(latest.base_manifest_list) + lists.read(latest.delta_manifest_list))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--commits", type=int, default=100)
    parser.add_argument("--rows", type=int, default=100_000, help="rows per commit")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--master", help="overrides spark-conf's spark.master")
    args = parser.parse_args()
    os.environ.setdefault("SPARK_CONF_DIR", str(ROOT / "spark-conf"))
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    run(args.commits, args.rows, args.repeat, args.master)


if __name__ == "__main__":
    main()

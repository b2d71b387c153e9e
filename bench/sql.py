"""Latency of the SQL extension: warm-session CALL and system-table query, and shell cold start.

Usage: python bench/sql.py [--snapshots 1000] [--repeat 20] [--cold-repeat 3]

On a table with 1,000 snapshots, through one warm PaimonSession:
- ``CALL sys.create_tag(...)`` (a new tag each time), next to pypaimon 2.1's ``create_tag`` (a
  plain Python call, no DataFrame) and to Spark creating and collecting a 1-row DataFrame (the
  floor of any CALL that returns a DataFrame);
- ``SELECT * FROM db.t$snapshots`` collected, next to pypaimon's ``db.t$snapshots`` read and
  to Spark collecting a 1,000-row ``range`` (the floor of a query through Spark).
Then the cold start of ``paimon-sql -e "CALL ..."`` and ``-e "SELECT ... FROM db.t$snapshots"``
in fresh processes (answered without Spark), next to a bare SparkSession start and stop in a
fresh process, all measured in this run (median of ``--cold-repeat``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _common import median, ratio, timed

from paimon_core.catalog import FileSystemCatalog

SCHEMA = pa.schema([("k", pa.int64()), ("v", pa.string())])
NO_EXPIRY = {"snapshot.num-retained.min": "100000", "snapshot.num-retained.max": "100000"}


def build(warehouse: str, snapshots: int) -> None:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    table = catalog.create_table("db.t", SCHEMA, options=NO_EXPIRY)
    for i in range(snapshots):
        table.write_arrow(pa.table({"k": [i], "v": [f"v{i}"]}, schema=SCHEMA))


def warm(warehouse: str, repeat: int) -> dict[str, float]:
    from pypaimon import CatalogFactory

    from sql_ext.session import PaimonSession
    from sql_ext.views import local_dataframe

    session = PaimonSession(
        master="local[2]", warehouse=warehouse, conf={"spark.ui.enabled": "false"}
    )
    session.spark.sparkContext.setLogLevel("ERROR")
    for _ in range(3):  # JIT the JVM paths
        session.sql("SELECT * FROM db.t$snapshots").collect()
    peer = CatalogFactory.create({"warehouse": warehouse})
    peer_table = peer.get_table("db.t")

    def peer_snapshots() -> None:
        system = peer.get_table("db.t$snapshots")
        builder = system.new_read_builder()
        builder.new_read().to_arrow(builder.new_scan().plan().splits())

    out = {
        "call": median(
            [
                timed(
                    lambda i=i: session.sql(
                        f"CALL sys.create_tag(table => 'db.t', tag => 'ours{i}', snapshot => {i + 1})"
                    ).collect()
                )
                for i in range(repeat)
            ]
        ),
        "floor_call": median(
            [
                timed(lambda: local_dataframe(session.spark, [(True,)], "result BOOLEAN").collect())
                for _ in range(repeat)
            ]
        ),
        "peer_call": median(
            [timed(lambda i=i: peer_table.create_tag(f"peer{i}", i + 1)) for i in range(repeat)]
        ),
        "select": median(
            [
                timed(lambda: session.sql("SELECT * FROM db.t$snapshots").collect())
                for _ in range(repeat)
            ]
        ),
        "peer_select": median([timed(peer_snapshots) for _ in range(repeat)]),
        "floor_select": median(
            [timed(lambda: session.spark.range(1000).collect()) for _ in range(repeat)]
        ),
    }
    session.stop()
    return out


COLD_STATEMENTS = {
    "CALL": "CALL sys.create_tag(table => 'db.t', tag => 'cold{i}')",
    "SELECT": "SELECT snapshot_id, commit_time FROM db.t$snapshots "
    "WHERE snapshot_id > 990 ORDER BY snapshot_id DESC LIMIT 5",
}


def cold(warehouse: str, repeat: int) -> dict[str, float]:
    """Median wall time of fresh processes: `paimon-sql -e` per statement, and a bare
    SparkSession start and stop, interleaved so that both see the same machine load."""
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYTHONPATH": str(ROOT)}

    def shell(statement: str) -> list[str]:
        return [sys.executable, "-m", "sql_ext.shell", "--warehouse", warehouse, "-e", statement]

    bare = [
        sys.executable,
        "-c",
        "from pyspark.sql import SparkSession\n"
        "s = SparkSession.builder.master('local[*]').getOrCreate()\n"
        "s.sparkContext.setLogLevel('ERROR')\n"
        "s.stop()",
    ]

    def run(cmd: list[str]) -> float:
        start = time.perf_counter()
        subprocess.run(cmd, cwd=ROOT, env=env, check=True, capture_output=True)
        return time.perf_counter() - start

    times: dict[str, list[float]] = {"bare": [], **{name: [] for name in COLD_STATEMENTS}}
    for i in range(repeat):
        times["bare"].append(run(bare))
        for name, statement in COLD_STATEMENTS.items():
            times[name].append(run(shell(statement.format(i=i))))
    return {name: median(values) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshots", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--cold-repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        warehouse = os.path.join(tmp, "warehouse")
        build(warehouse, args.snapshots)
        w = warm(warehouse, args.repeat)
        c = cold(warehouse, args.cold_repeat)
    n = args.snapshots
    print(f"table with {n} snapshots, warm session, median of {args.repeat}")
    print(
        f"CALL sys.create_tag          ours {w['call']:8.1f} ms   pypaimon create_tag "
        f"{w['peer_call']:8.1f} ms   ({ratio(w['call'], w['peer_call'])})"
    )
    print(
        f"  Spark floor: a 1-row DataFrame created and collected {w['floor_call']:.1f} ms "
        f"(ours is {w['call'] / w['floor_call']:.1f}x the floor)"
    )
    print(
        f"SELECT * FROM db.t$snapshots ours {w['select']:8.1f} ms   pypaimon $snapshots "
        f"{w['peer_select']:8.1f} ms   ({ratio(w['select'], w['peer_select'])})"
    )
    print(
        f"  Spark floor: range(1000).collect() {w['floor_select']:.1f} ms "
        f"(ours is {w['select'] / w['floor_select']:.1f}x the floor)"
    )
    print(f"cold start, fresh processes, median of {args.cold_repeat}:")
    print(f"  bare SparkSession start+stop {c['bare']:.2f} s")
    for name, statement in COLD_STATEMENTS.items():
        shown = statement.format(i=0)
        print(
            f'  paimon-sql -e "{shown}"\n    {c[name]:.2f} s = {c[name] / c["bare"]:.2f}x the bare '
            f"start (target <= 0.25x)"
        )


if __name__ == "__main__":
    main()

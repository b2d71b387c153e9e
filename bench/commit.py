"""Median latency of a 10-row append commit (data file included), early and late in a table's life.

Usage: python bench/commit.py [--commits 1000] [--peer-commits 200] [--java-commits 1000]

Each commit opens the table anew, as a user's script does (catalog, table, writer, commit),
for ours and for pypaimon 2.1, in the same process. Java Paimon 0.9 (the oracle's
``bench-commit``, one warm JVM, same machine, same run; ``--java-commits 0`` skips it) reuses
its table object, so its figure is a floor for the JVM. The ratios compare the medians of the
last 20 commits (pypaimon's grows with the number of snapshots).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import java_bench, median, ratio, timed

from paimon_core.catalog import FileSystemCatalog

SCHEMA = pa.schema([("k", pa.int64()), ("v", pa.string())])
NO_EXPIRY = {
    "snapshot.num-retained.min": "1000000",
    "snapshot.num-retained.max": "1000000",
    "snapshot.time-retained": "1000000 h",
}


def batch(i: int) -> pa.Table:
    return pa.table({"k": list(range(i * 10, i * 10 + 10)), "v": [f"v{i}"] * 10}, schema=SCHEMA)


def ours(warehouse: str, commits: int) -> list[float]:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    catalog.create_table("db.t", SCHEMA, options=NO_EXPIRY)
    times = []
    for i in range(commits):
        data = batch(i)  # the user's data exists before the commit starts

        def one(data: pa.Table = data) -> None:
            table = FileSystemCatalog(warehouse).get_table("db.t")
            write = table.new_write()
            write.write_arrow(data)
            table.new_commit().commit(write.prepare_commit())

        times.append(timed(one))
    return times


def pypaimon_peer(warehouse: str, commits: int) -> list[float]:
    from pypaimon import CatalogFactory, Schema

    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db", True)
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA), False)
    times = []
    for i in range(commits):
        data = batch(i)

        def one(data: pa.Table = data) -> None:
            table = CatalogFactory.create({"warehouse": warehouse}).get_table("db.t")
            builder = table.new_batch_write_builder()
            write = builder.new_write()
            write.write_arrow(data)
            commit = builder.new_commit()
            commit.commit(write.prepare_commit())
            write.close()
            commit.close()

        times.append(timed(one))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--commits", type=int, default=1000)
    parser.add_argument("--peer-commits", type=int, default=200)
    parser.add_argument("--java-commits", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.sync()  # no write-back of earlier runs' files competing with the commits
        mine = ours(f"{tmp}/ours", args.commits)
        os.sync()
        peer = pypaimon_peer(f"{tmp}/peer", args.peer_commits)
        os.sync()
        java = (
            java_bench("bench-commit", f"{tmp}/java", "db.t", "--commits", args.java_commits)
            if args.java_commits
            else None
        )
    rows = [
        ("ours", args.commits, median(mine[:20]), median(mine[-20:]), median(mine), sum(mine)),
        (
            "pypaimon 2.1",
            args.peer_commits,
            median(peer[:20]),
            median(peer[-20:]),
            median(peer),
            sum(peer),
        ),
    ]
    if java is not None:
        total_ms = java["totalS"] * 1000
        rows.append(
            (
                "Java 0.9",
                java["commits"],
                java["firstMedianMs"],
                java["lastMedianMs"],
                float("nan"),  # the oracle reports the first and last 20 only
                total_ms,
            )
        )
    print(
        f"{'writer':<14}{'commits':>8}{'first20 ms':>12}{'last20 ms':>11}{'all ms':>8}"
        f"{'mean ms':>9}{'total s':>9}"
    )
    for name, n, first, last, every, total in rows:
        print(
            f"{name:<14}{n:>8}{first:>12.2f}{last:>11.2f}{every:>8.2f}"
            f"{total / n:>9.2f}{total / 1000:>9.2f}"
        )
    print(f"last-20 median: ours is {ratio(rows[0][3], rows[1][3])} than pypaimon")
    print(f"first-20 median: ours is {ratio(rows[0][2], rows[1][2])} than pypaimon")
    if java is not None:
        print(f"last-20 median: ours is {ratio(rows[0][3], rows[2][3])} than Java")
        print(f"mean: ours is {ratio(rows[0][5] / rows[0][1], rows[2][5] / rows[2][1])} than Java")


if __name__ == "__main__":
    main()

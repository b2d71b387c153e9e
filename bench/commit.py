"""Median latency of a 10-row append commit (data file included), early and late in a table's life.

Usage: python bench/commit.py [--commits 1000] [--peer-commits 200]

Ours and pypaimon 2.1 run in the same process on the same machine; the ratio compares the
medians of the last 20 commits (pypaimon's grows with the number of snapshots).
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

from _common import median, ratio, timed

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
    table = catalog.create_table("db.t", SCHEMA, options=NO_EXPIRY)
    committer = table.new_commit()
    times = []
    for i in range(commits):

        def one(i: int = i) -> None:
            write = table.new_write()
            write.write_arrow(batch(i))
            committer.commit(write.prepare_commit())

        times.append(timed(one))
    return times


def pypaimon_peer(warehouse: str, commits: int) -> list[float]:
    from pypaimon import CatalogFactory, Schema

    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db", True)
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA), False)
    table = catalog.get_table("db.t")
    times = []
    for i in range(commits):

        def one(i: int = i) -> None:
            builder = table.new_batch_write_builder()
            write = builder.new_write()
            write.write_arrow(batch(i))
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
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.sync()  # no write-back of earlier runs' files competing with the commits
        mine = ours(f"{tmp}/ours", args.commits)
        os.sync()
        peer = pypaimon_peer(f"{tmp}/peer", args.peer_commits)
    rows = [
        ("ours", args.commits, median(mine[:20]), median(mine[-20:]), sum(mine) / 1000),
        (
            "pypaimon 2.1",
            args.peer_commits,
            median(peer[:20]),
            median(peer[-20:]),
            sum(peer) / 1000,
        ),
    ]
    print(f"{'writer':<14}{'commits':>8}{'first20 ms':>12}{'last20 ms':>11}{'total s':>9}")
    for name, n, first, last, total in rows:
        print(f"{name:<14}{n:>8}{first:>12.2f}{last:>11.2f}{total:>9.2f}")
    print(f"last-20 median: ours is {ratio(rows[0][3], rows[1][3])} than pypaimon")
    print(f"first-20 median: ours is {ratio(rows[0][2], rows[1][2])} than pypaimon")


if __name__ == "__main__":
    main()

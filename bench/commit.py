"""Median latency of a 10-row append commit (data file included), early and late in a table's life.

Usage: python bench/commit.py [--commits 1000] [--peer-commits 200] [--java-commits 1000]

Each commit opens the table anew, as a user's script does (catalog, table, writer, commit),
for ours and for pypaimon 2.1, in the same process and interleaved (commit i of ours, then
commit i of pypaimon, while pypaimon has commits left), so that both meet the same load.
Java Paimon 0.9 (the oracle's ``bench-commit``, one warm JVM, same machine, same run;
``--java-commits 0`` skips it) reuses its table object, so its figure is a floor for the
JVM. A fixed CPU loop timed after every commit gives the run's load factor (``_common.
Calibration``); the idle-equivalent estimate is the median CPU time divided by it.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Calibration, java_bench, median, ratio

from paimon_core.catalog import FileSystemCatalog

SCHEMA = pa.schema([("k", pa.int64()), ("v", pa.string())])
NO_EXPIRY = {
    "snapshot.num-retained.min": "1000000",
    "snapshot.num-retained.max": "1000000",
    "snapshot.time-retained": "1000000 h",
}


def batch(i: int) -> pa.Table:
    return pa.table({"k": list(range(i * 10, i * 10 + 10)), "v": [f"v{i}"] * 10}, schema=SCHEMA)


def ours(warehouse: str) -> Callable[[pa.Table], None]:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    catalog.create_table("db.t", SCHEMA, options=NO_EXPIRY)

    def one(data: pa.Table) -> None:
        table = FileSystemCatalog(warehouse).get_table("db.t")
        write = table.new_write()
        write.write_arrow(data)
        table.new_commit().commit(write.prepare_commit())

    return one


def pypaimon_peer(warehouse: str) -> Callable[[pa.Table], None]:
    from pypaimon import CatalogFactory, Schema

    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db", True)
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA), False)

    def one(data: pa.Table) -> None:
        table = CatalogFactory.create({"warehouse": warehouse}).get_table("db.t")
        builder = table.new_batch_write_builder()
        write = builder.new_write()
        write.write_arrow(data)
        commit = builder.new_commit()
        commit.commit(write.prepare_commit())
        write.close()
        commit.close()

    return one


class Series:
    """Wall and CPU milliseconds of each commit of one writer, and the calibration after."""

    def __init__(self, commit: Callable[[pa.Table], None]) -> None:
        self.commit = commit
        self.wall: list[float] = []
        self.cpu: list[float] = []
        self.calibration = Calibration()

    def run(self, data: pa.Table) -> None:
        wall, cpu = time.perf_counter(), time.process_time()
        self.commit(data)
        self.cpu.append((time.process_time() - cpu) * 1000)
        self.wall.append((time.perf_counter() - wall) * 1000)
        self.calibration.sample()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--commits", type=int, default=1000)
    parser.add_argument("--peer-commits", type=int, default=200)
    parser.add_argument("--java-commits", type=int, default=1000)
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f} (2 cores)")
    with tempfile.TemporaryDirectory() as tmp:
        os.sync()  # no write-back of earlier runs' files competing with the commits
        mine, peer = Series(ours(f"{tmp}/ours")), Series(pypaimon_peer(f"{tmp}/peer"))
        for i in range(max(args.commits, args.peer_commits)):
            data = batch(i)  # the user's data exists before the commit starts
            for series, n in ((mine, args.commits), (peer, args.peer_commits))[:: 1 - 2 * (i % 2)]:
                if i < n:
                    series.run(data)
        os.sync()
        java = (
            java_bench("bench-commit", f"{tmp}/java", "db.t", "--commits", args.java_commits)
            if args.java_commits
            else None
        )
    print(
        f"{'writer':<14}{'commits':>8}{'first20':>9}{'last20':>8}{'median':>8}{'mean':>8}"
        f"{'total s':>9}{'cpu med':>9}{'cpu mean':>9}{'load f':>8}{'idle-eq':>9}"
    )
    rows = []
    for name, s in (("ours", mine), ("pypaimon 2.1", peer)):
        every = median(s.wall)
        factor = s.calibration.factor
        later = s.cpu[1:]  # the first commit of a process pays imports and code generation
        rows.append((name, len(s.wall), median(s.wall[:20]), median(s.wall[-20:]), every))
        print(
            f"{name:<14}{len(s.wall):>8}{median(s.wall[:20]):>9.2f}{median(s.wall[-20:]):>8.2f}"
            f"{every:>8.2f}{sum(s.wall) / len(s.wall):>8.2f}{sum(s.wall) / 1000:>9.2f}"
            f"{median(s.cpu):>9.2f}{sum(later) / max(len(later), 1):>9.2f}{factor:>8.2f}"
            f"{median(s.cpu) / factor:>9.2f}"
        )
    if java is not None:
        total_ms = java["totalS"] * 1000
        print(
            f"{'Java 0.9':<14}{java['commits']:>8}{java['firstMedianMs']:>9.2f}"
            f"{java['lastMedianMs']:>8.2f}{'':>8}{total_ms / java['commits']:>8.2f}"
            f"{java['totalS']:>9.2f}"
        )
    print("(milliseconds per commit: wall first/last 20, median and mean; process CPU time)")
    print(f"ours: {mine.calibration.line()}")
    print(
        "(idle-eq: the median CPU time of a commit over the load factor; Java's figures "
        "have no calibration: it runs after ours, alone)"
    )
    print(f"last-20 median: ours is {ratio(rows[0][3], rows[1][3])} than pypaimon")
    print(f"first-20 median: ours is {ratio(rows[0][2], rows[1][2])} than pypaimon")
    if java is not None:
        print(f"last-20 median: ours is {ratio(rows[0][3], java['lastMedianMs'])} than Java")
        mean = sum(mine.wall) / len(mine.wall)
        print(f"mean: ours is {ratio(mean, java['totalS'] * 1000 / java['commits'])} than Java")


if __name__ == "__main__":
    main()

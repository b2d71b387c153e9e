"""Planning a scan of a table with 10,000 data files (1,000 partitions x 10 commits).

Usage: python bench/plan.py [--partitions 1000] [--commits 10] [--runs 5] [--no-java]

Every plan opens the table anew. "cold": the process forgets what it decoded before
(``_common.forget_reads``), so manifests are read and decoded from disk, as in a new
process, and as pypaimon 2.1 and Java Paimon 0.9's ``cache-enabled=false`` catalog do;
"warm": this process planned the whole table just before (our manifest cache, as Java's
default ``CachingCatalog``). "every file used" then reads fields of every planned file (what
reading the splits does): the plan hands files on decoded lazily. Then plans of one
partition (``p = 7``) and of 10 partitions (``p < 10``): their time should follow the
partitions they touch, not the table. Ours and pypaimon are interleaved on the very same
table in one process; Java plans it after them (the oracle's ``bench-plan``, warm JVM). A
calibration loop gives the run's load factor and an idle-equivalent estimate from CPU time.
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

from _common import Calibration, forget_reads, java_bench, median, ratio

from paimon_core.catalog import FileSystemCatalog

SCHEMA = pa.schema([("k", pa.int64()), ("v", pa.string()), ("p", pa.int32())])


def build(warehouse: str, partitions: int, commits: int) -> None:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    table = catalog.create_table("db.t", SCHEMA, partition_keys=["p"])
    committer = table.new_commit()
    for c in range(commits):
        data = pa.table(
            {
                "k": list(range(c * partitions, (c + 1) * partitions)),
                "v": ["x"] * partitions,
                "p": list(range(partitions)),
            },
            schema=SCHEMA,
        )
        write = table.new_write()
        write.write_arrow(data)
        committer.commit(write.prepare_commit())


def plan_ours(warehouse: str, use_files: bool = False, **kwargs: object) -> int:
    splits = FileSystemCatalog(warehouse).get_table("db.t").new_scan().plan(**kwargs)
    if use_files:  # what reading the splits needs of each file
        rows = sum(f.row_count + f.schema_id + f.level for s in splits for f in s.files)
        assert rows >= 0
    return sum(len(s.files) for s in splits)


def plan_pypaimon(warehouse: str) -> int:
    from pypaimon import CatalogFactory

    table = CatalogFactory.create({"warehouse": warehouse}).get_table("db.t")
    splits = table.new_read_builder().new_scan().plan().splits()
    return sum(len(s.files) for s in splits)


ONE = {"partition_filter": {"p": 7}}
TEN = {"predicate": [("p", "<", 10)]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--partitions", type=int, default=1000)
    parser.add_argument("--commits", type=int, default=10)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-java", action="store_true")
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f} (2 cores)")
    with tempfile.TemporaryDirectory() as tmp:
        build(tmp, args.partitions, args.commits)
        expected = args.partitions * args.commits
        assert plan_ours(tmp) == expected, "our plan missed files"
        assert plan_pypaimon(tmp) == expected, "pypaimon's plan missed files"
        assert plan_ours(tmp, **ONE) == args.commits
        assert plan_ours(tmp, **TEN) == 10 * args.commits
        cases: dict[str, tuple[Callable[[], object], bool]] = {
            "ours, cold": (lambda: plan_ours(tmp), True),
            "ours, cold, every file used": (lambda: plan_ours(tmp, use_files=True), True),
            "ours, warm": (lambda: plan_ours(tmp), False),
            "ours, cold, p = 7": (lambda: plan_ours(tmp, **ONE), True),
            "ours, warm, p = 7": (lambda: plan_ours(tmp, **ONE), False),
            "ours, cold, p < 10": (lambda: plan_ours(tmp, **TEN), True),
            "ours, warm, p < 10": (lambda: plan_ours(tmp, **TEN), False),
            "pypaimon 2.1": (lambda: plan_pypaimon(tmp), False),
        }
        wall: dict[str, list[float]] = {name: [] for name in cases}
        cpu: dict[str, list[float]] = {name: [] for name in cases}
        calibration = Calibration()
        for _ in range(args.runs):
            for name, (plan, cold) in cases.items():
                if cold:
                    forget_reads()
                elif name.startswith("ours"):
                    plan_ours(tmp)  # untimed: warm means this process planned the table
                start, start_cpu = time.perf_counter(), time.process_time()
                plan()
                cpu[name].append((time.process_time() - start_cpu) * 1000)
                wall[name].append((time.perf_counter() - start) * 1000)
                calibration.sample()
        java = None if args.no_java else java_bench("bench-plan", tmp, "db.t")
    factor = calibration.factor
    print(f"data files: {expected}; median of {args.runs} runs")
    print(f"{'':<30}{'wall ms':>9}{'cpu ms':>9}{'idle-eq ms':>12}")
    for name in cases:
        every, busy = median(wall[name]), median(cpu[name])
        print(f"{name:<30}{every:>9.1f}{busy:>9.1f}{busy / factor:>12.1f}")
    if java is not None:
        print(f"{'Java 0.9, manifests read':<30}{java['medianMs']:>9.1f}   (median of 5)")
        print(f"{'Java 0.9, its manifest cache':<30}{java['cachedMedianMs']:>9.1f}")
    print(calibration.line())
    print("(idle-eq: median CPU time over the load factor; Java runs after ours, alone)")
    cold = median(wall["ours, cold"])
    print(f"cold: ours is {ratio(cold, median(wall['pypaimon 2.1']))} than pypaimon")
    if java is not None:
        print(f"cold: ours is {ratio(cold, java['medianMs'])} than Java (manifests read)")
        warm = median(wall["ours, warm"])
        print(f"warm: ours is {ratio(warm, java['cachedMedianMs'])} than Java (its cache)")


if __name__ == "__main__":
    main()

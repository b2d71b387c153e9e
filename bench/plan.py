"""Planning a scan of a table with 10,000 data files (1,000 partitions x 10 commits).

Usage: python bench/plan.py [--partitions 1000] [--commits 10] [--runs 5] [--no-java]

Every plan opens the table anew. "cold": the process forgets what it decoded before
(``_common.forget_reads``), so manifests are read and decoded from disk, as in a new
process, and as pypaimon 2.1 and Java Paimon 0.9's ``cache-enabled=false`` catalog do;
"warm": this process planned the whole table just before (our manifest cache, as Java's
default ``CachingCatalog``). "every file used" then reads fields of every planned file (what
reading the splits does): the plan hands files on decoded lazily. Then partition-filtered
plans of 1, 10 and 100 of the 1,000 partitions (equality, a range, an IN list): every
manifest holds every partition, so the manifest list prunes nothing and the time should
follow the partitions the plan touches, not the table; each prints its ratio to the cold
full plan of the same run (ratios of CPU time hold on a loaded machine). "new process": one
plan in a fresh interpreter (its modules imported first), which also pays for generating
the manifest decoders and learning the table's record pattern. Ours and pypaimon are interleaved on the
very same table in one process; Java plans it after them (the oracle's ``bench-plan``, warm
JVM). A calibration loop gives the run's load factor and an idle-equivalent estimate from
CPU time.

A second table, "disjoint": the same 10,000 files and 1,000 partitions, but commit c writes
only partitions [100c, 100c + 100) (10 files each, one commit of 10 writes): each manifest
holds a range of its own, so the manifest list's partition stats prune whole manifests
before any is read, and the filtered/full ratios there show that pruning on top.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
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
STRING_SCHEMA = pa.schema([("k", pa.int64()), ("v", pa.string()), ("dt", pa.string())])
DAY0 = datetime.date(2022, 1, 1)


def day(i: int) -> str:
    """Partition ``i`` of the string table: a date (10 bytes), as ``dt`` usually is."""
    return (DAY0 + datetime.timedelta(days=i)).isoformat()


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


def build_disjoint(warehouse: str, partitions: int, commits: int) -> None:
    """``db.d``: commit c writes the partitions of range c only, ``commits`` files each."""
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    table = catalog.create_table("db.d", SCHEMA, partition_keys=["p"])
    committer = table.new_commit()
    width = partitions // commits
    for c in range(commits):
        messages = []
        for f in range(commits):  # one file per partition per write
            first = c * width
            data = pa.table(
                {
                    "k": [(c * commits + f) * width + i for i in range(width)],
                    "v": ["x"] * width,
                    "p": list(range(first, first + width)),
                },
                schema=SCHEMA,
            )
            write = table.new_write()
            write.write_arrow(data)
            messages += write.prepare_commit()
        committer.commit(messages)


def build_string(warehouse: str, partitions: int, commits: int) -> None:
    """``db.s``: as ``db.t`` (every commit writes every partition), partitioned by a
    ``dt STRING`` of dates: a partition row with a variable part (10 bytes)."""
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    table = catalog.create_table("db.s", STRING_SCHEMA, partition_keys=["dt"])
    committer = table.new_commit()
    days = [day(i) for i in range(partitions)]
    for c in range(commits):
        data = pa.table(
            {
                "k": list(range(c * partitions, (c + 1) * partitions)),
                "v": ["x"] * partitions,
                "dt": days,
            },
            schema=STRING_SCHEMA,
        )
        write = table.new_write()
        write.write_arrow(data)
        committer.commit(write.prepare_commit())


def plan_ours(
    warehouse: str, use_files: bool = False, table: str = "db.t", **kwargs: object
) -> int:
    splits = FileSystemCatalog(warehouse).get_table(table).new_scan().plan(**kwargs)
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
TEN_IN = {"predicate": [("p", "in", tuple(range(5, 1000, 100)))]}
HUNDRED = {"predicate": [("p", ">=", 300), ("p", "<", 400)]}
FILTERED = {"p = 7": ONE, "p < 10": TEN, "p in (10 values)": TEN_IN, "300 <= p < 400": HUNDRED}
STRING_FILTERED = {
    "dt = day 7": ({"partition_filter": {"dt": day(7)}}, 1),
    "dt < day 10": ({"predicate": [("dt", "<", day(10))]}, 10),
    "dt in (10 values)": ({"predicate": [("dt", "in", tuple(map(day, range(5, 1000, 100))))]}, 10),
    "day 300 <= dt < day 400": (
        {"predicate": [("dt", ">=", day(300)), ("dt", "<", day(400))]},
        100,
    ),
}

NEW_PROCESS = """
import json, sys, time
sys.path.insert(0, {root!r})
from paimon_core.catalog import FileSystemCatalog
import paimon_core.operations.scan  # imports are not the plan's (no .pyc: PYTHONDONTWRITEBYTECODE)
start, start_cpu = time.perf_counter(), time.process_time()
FileSystemCatalog({warehouse!r}).get_table("db.t").new_scan().plan(**{kwargs!r})
print(json.dumps([(time.perf_counter() - start) * 1000, (time.process_time() - start_cpu) * 1000]))
"""


def new_process(warehouse: str, kwargs: dict) -> tuple[float, float]:
    """(wall, CPU) ms of one plan in a fresh interpreter, after its imports."""
    root = str(Path(__file__).resolve().parent.parent)
    code = NEW_PROCESS.format(root=root, warehouse=warehouse, kwargs=kwargs)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    wall, cpu = json.loads(out.stdout)
    return wall, cpu


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
        build_disjoint(tmp, args.partitions, args.commits)
        build_string(tmp, args.partitions, args.commits)
        expected = args.partitions * args.commits
        assert plan_ours(tmp) == expected, "our plan missed files"
        assert plan_ours(tmp, table="db.d") == expected, "our plan missed files"
        assert plan_pypaimon(tmp) == expected, "pypaimon's plan missed files"
        for kwargs, partitions in ((ONE, 1), (TEN, 10), (TEN_IN, 10), (HUNDRED, 100)):
            assert plan_ours(tmp, **kwargs) == partitions * args.commits
            assert plan_ours(tmp, table="db.d", **kwargs) == partitions * args.commits
        assert plan_ours(tmp, table="db.s") == expected, "our plan missed files"
        for kwargs, partitions in STRING_FILTERED.values():
            assert plan_ours(tmp, table="db.s", **kwargs) == partitions * args.commits
        cases: dict[str, tuple[Callable[[], object], bool]] = {
            "ours, cold": (lambda: plan_ours(tmp), True),
            "ours, cold, every file used": (lambda: plan_ours(tmp, use_files=True), True),
            "ours, warm": (lambda: plan_ours(tmp), False),
        }
        for label, kwargs in FILTERED.items():
            cases[f"ours, cold, {label}"] = (lambda kw=kwargs: plan_ours(tmp, **kw), True)
        for label, kwargs in list(FILTERED.items())[:2]:
            cases[f"ours, warm, {label}"] = (lambda kw=kwargs: plan_ours(tmp, **kw), False)
        cases["pypaimon 2.1"] = (lambda: plan_pypaimon(tmp), False)
        cases["disjoint, cold"] = (lambda: plan_ours(tmp, table="db.d"), True)
        for label, kwargs in FILTERED.items():
            cases[f"disjoint, cold, {label}"] = (
                lambda kw=kwargs: plan_ours(tmp, table="db.d", **kw),
                True,
            )
        cases["string, cold"] = (lambda: plan_ours(tmp, table="db.s"), True)
        for label, (kwargs, _) in STRING_FILTERED.items():
            cases[f"string, cold, {label}"] = (
                lambda kw=kwargs: plan_ours(tmp, table="db.s", **kw),
                True,
            )
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
        fresh: dict[str, list[tuple[float, float]]] = {"full": [], "p = 7": [], "p < 10": []}
        for _ in range(3):
            for label in fresh:
                fresh[label].append(new_process(tmp, FILTERED.get(label, {})))
        java = None if args.no_java else java_bench("bench-plan", tmp, "db.t")
    factor = calibration.factor
    full_cpu = median(cpu["ours, cold"])
    disjoint_cpu = median(cpu["disjoint, cold"])
    string_cpu = median(cpu["string, cold"])
    print(f"data files: {expected}; median of {args.runs} runs")
    print(f"{'':<36}{'wall ms':>9}{'cpu ms':>9}{'idle-eq ms':>12}{'cpu / cold full':>17}")
    for name in cases:
        every, busy = median(wall[name]), median(cpu[name])
        share = ""
        if name.startswith("ours, cold"):
            share = f"{busy / full_cpu:>17.2f}"
        elif name.startswith("disjoint, cold"):  # to the full plan of the disjoint table
            share = f"{busy / disjoint_cpu:>17.2f}"
        elif name.startswith("string, cold"):  # to the full plan of the string table
            share = f"{busy / string_cpu:>17.2f}"
        print(f"{name:<36}{every:>9.1f}{busy:>9.1f}{busy / factor:>12.1f}{share}")
    fresh_full = median([c for _, c in fresh["full"]])
    for label, runs in fresh.items():
        every, busy = median([w for w, _ in runs]), median([c for _, c in runs])
        name = f"ours, new process, {label}"
        print(
            f"{name:<36}{every:>9.1f}{busy:>9.1f}{busy / factor:>12.1f}{busy / fresh_full:>17.2f}"
        )
    if java is not None:
        print(f"{'Java 0.9, manifests read':<36}{java['medianMs']:>9.1f}   (median of 5)")
        print(f"{'Java 0.9, its manifest cache':<36}{java['cachedMedianMs']:>9.1f}")
    print(calibration.line())
    print(f"load average at end: {os.getloadavg()[0]:.2f} (2 cores)")
    print("(idle-eq: median CPU time over the load factor; Java runs after ours, alone;")
    print(" cpu / cold full: of a new process, to the full plan in a new process; medians of 3;")
    print(" of the disjoint and string tables, to their own cold full plans)")
    cold = median(wall["ours, cold"])
    print(f"cold: ours is {ratio(cold, median(wall['pypaimon 2.1']))} than pypaimon")
    if java is not None:
        print(f"cold: ours is {ratio(cold, java['medianMs'])} than Java (manifests read)")
        warm = median(wall["ours, warm"])
        print(f"warm: ours is {ratio(warm, java['cachedMedianMs'])} than Java (its cache)")


if __name__ == "__main__":
    main()

"""Interleaved A/B of the core against an older revision, in one process.

Usage: python bench/ab.py --rev REV [--commits 600] [--plan-runs 9] [--partitions 1000]

The machine is shared: two runs minutes apart differ by up to 2x, so each optimisation is
judged here instead. ``paimon_core`` of git revision REV and of the working tree are loaded
side by side (as packages ``ab_base`` and ``ab_head``); commits and plans alternate between
them, in alternating order, each on its own table. Printed: medians of wall-clock and of
process CPU time (less disturbed by other jobs), per commit (table opened each time) and per
plan (full, one partition, ten partitions, and full with every file's fields then used) of a
1,000-partition x 10-commit table, cold (the process's caches of what it read emptied first,
``_common.forget_reads``) and warm (right after a plan of the whole table).
"""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import forget_reads, median

SCHEMA = pa.schema([("k", pa.int64()), ("v", pa.string())])
PLAN_SCHEMA = pa.schema([("k", pa.int64()), ("v", pa.string()), ("p", pa.int32())])
NO_EXPIRY = {
    "snapshot.num-retained.min": "1000000",
    "snapshot.num-retained.max": "1000000",
    "snapshot.time-retained": "1000000 h",
}


def load_copy(source: Path, name: str, into: Path) -> Any:
    """Import the package at ``source`` as ``name`` (its own imports renamed)."""
    target = into / name
    for path in source.rglob("*.py"):
        text = path.read_text().replace("paimon_core", name)
        out = target / path.relative_to(source)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
    return importlib.import_module(f"{name}.catalog").FileSystemCatalog


def export(rev: str, into: Path) -> Path:
    """``paimon_core`` as of ``rev``, written under ``into``."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "paimon_core"], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "paimon_core"


def timed(fn: Any) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return (time.perf_counter() - wall) * 1e3, (time.process_time() - cpu) * 1e3


def ab_commits(catalogs: dict[str, Any], tmp: Path, commits: int) -> None:
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in catalogs}
    for name, catalog in catalogs.items():
        c = catalog(str(tmp / f"c-{name}"))
        c.create_database("db")
        c.create_table("db.t", SCHEMA, options=NO_EXPIRY)
    for i in range(commits):
        data = pa.table({"k": range(i * 10, i * 10 + 10), "v": [f"v{i}"] * 10}, schema=SCHEMA)
        for name in list(catalogs) if i % 2 == 0 else list(catalogs)[::-1]:

            def one(name: str = name, data: pa.Table = data) -> None:
                table = catalogs[name](str(tmp / f"c-{name}")).get_table("db.t")
                write = table.new_write()
                write.write_arrow(data)
                table.new_commit().commit(write.prepare_commit())

            results[name].append(timed(one))
    print(f"commit, table opened each time, {commits} commits: median ms")
    for name, times in results.items():
        walls, cpus = [w for w, _ in times], [c for _, c in times]
        print(
            f"  {name}: wall {median(walls):.3f} (last 100 {median(walls[-100:]):.3f}), "
            f"cpu {median(cpus):.3f}"
        )


def ab_plans(catalogs: dict[str, Any], tmp: Path, partitions: int, runs: int) -> None:
    first = next(iter(catalogs.values()))
    warehouse = str(tmp / "plan")
    c = first(warehouse)
    c.create_database("db")
    table = c.create_table("db.t", PLAN_SCHEMA, partition_keys=["p"])
    for commit in range(10):
        ks = range(commit * partitions, (commit + 1) * partitions)
        data = pa.table({"k": ks, "v": ["x"] * partitions, "p": range(partitions)}, PLAN_SCHEMA)
        table.write_arrow(data)
    kinds = {
        "full": {},
        "p = 7": {"partition_filter": {"p": 7}},
        "p < 10": {"predicate": [("p", "<", 10)]},
        "full, every file read": {},  # each file's fields used after the plan (a read)
    }
    results = {(n, k, c): [] for n in catalogs for k in kinds for c in ("cold", "warm")}
    for i in range(runs):
        for kind, kwargs in kinds.items():
            for cache in ("cold", "warm"):
                for name in list(catalogs) if i % 2 == 0 else list(catalogs)[::-1]:

                    def plan(name: str = name, kwargs: dict = kwargs, kind: str = kind) -> None:
                        table = catalogs[name](warehouse).get_table("db.t")
                        splits = table.new_scan().plan(**kwargs)
                        if kind.endswith("read"):
                            sum(f.row_count + f.schema_id for s in splits for f in s.files)

                    if cache == "cold":
                        forget_reads(name)
                    else:  # untimed: warm means this process planned the whole table
                        catalogs[name](warehouse).get_table("db.t").new_scan().plan()
                    results[(name, kind, cache)].append(timed(plan))
    print(f"plan, {partitions * 10} files, table opened each time, {runs} runs: median ms")
    print("  (cold: manifests decoded from the files; warm: this process planned it just before)")
    for (name, kind, cache), times in results.items():
        walls, cpus = [w for w, _ in times], [c for _, c in times]
        print(f"  {name} {cache} {kind:<22} wall {median(walls):7.1f}  cpu {median(cpus):7.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rev", required=True)
    parser.add_argument("--commits", type=int, default=600)
    parser.add_argument("--plan-runs", type=int, default=9)
    parser.add_argument("--partitions", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        packages = tmp / "packages"
        packages.mkdir()
        (tmp / "rev").mkdir()
        sys.path.insert(0, str(packages))
        catalogs = {
            "ab_base": load_copy(export(args.rev, tmp / "rev"), "ab_base", packages),
            "ab_head": load_copy(ROOT / "paimon_core", "ab_head", packages),
        }
        print(f"ab_base = paimon_core at {args.rev}; ab_head = the working tree")
        if args.commits:
            ab_commits(catalogs, tmp, args.commits)
        if args.plan_runs:
            ab_plans(catalogs, tmp, args.partitions, args.plan_runs)


if __name__ == "__main__":
    main()

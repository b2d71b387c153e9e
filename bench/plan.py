"""Planning a scan of a table with 10,000 data files (1,000 partitions x 10 commits).

Usage: python bench/plan.py [--partitions 1000] [--commits 10] [--runs 5] [--no-java]

Every plan opens the table anew, so manifests are read from disk each time (no cache), for
ours and for pypaimon 2.1 on the very same table, in the same process; Java Paimon 0.9 plans
the same table too (the oracle's ``bench-plan``: warm JVM, ``cache-enabled=false``). Then the
plans of one partition (``p = 7``) and of 10 partitions (``p < 10``): their time should follow
the partitions they touch, not the table.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import java_bench, median, ratio, timed

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


def plan_ours(warehouse: str) -> int:
    return sum(
        len(s.files) for s in FileSystemCatalog(warehouse).get_table("db.t").new_scan().plan()
    )


def plan_filtered(warehouse: str, **kwargs: object) -> int:
    scan = FileSystemCatalog(warehouse).get_table("db.t").new_scan()
    return sum(len(s.files) for s in scan.plan(**kwargs))


def plan_pypaimon(warehouse: str) -> int:
    from pypaimon import CatalogFactory

    table = CatalogFactory.create({"warehouse": warehouse}).get_table("db.t")
    splits = table.new_read_builder().new_scan().plan().splits()
    return sum(len(s.files) for s in splits)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--partitions", type=int, default=1000)
    parser.add_argument("--commits", type=int, default=10)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-java", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        build(tmp, args.partitions, args.commits)
        expected = args.partitions * args.commits
        assert plan_ours(tmp) == expected, "our plan missed files"
        assert plan_pypaimon(tmp) == expected, "pypaimon's plan missed files"
        one = {"partition_filter": {"p": 7}}
        ten = {"predicate": [("p", "<", 10)]}
        assert plan_filtered(tmp, **one) == args.commits
        assert plan_filtered(tmp, **ten) == 10 * args.commits
        mine = median([timed(lambda: plan_ours(tmp)) for _ in range(args.runs)])
        peer = median([timed(lambda: plan_pypaimon(tmp)) for _ in range(args.runs)])
        mine_one = median([timed(lambda: plan_filtered(tmp, **one)) for _ in range(args.runs)])
        mine_ten = median([timed(lambda: plan_filtered(tmp, **ten)) for _ in range(args.runs)])
        java = None if args.no_java else java_bench("bench-plan", tmp, "db.t")
    print(f"data files: {expected}")
    print(f"ours:         {mine:8.1f} ms (median of {args.runs})")
    print(f"pypaimon 2.1: {peer:8.1f} ms (median of {args.runs})")
    if java is not None:
        print(f"Java 0.9:     {java['medianMs']:8.1f} ms (median of 5, manifests read each time)")
        print(f"Java 0.9:     {java['cachedMedianMs']:8.1f} ms (its manifest cache on)")
    print(f"ours, p = 7:  {mine_one:8.1f} ms ({args.commits} files)")
    print(f"ours, p < 10: {mine_ten:8.1f} ms ({10 * args.commits} files)")
    print(f"ours is {ratio(mine, peer)} than pypaimon")
    if java is not None:
        print(f"ours is {ratio(mine, java['medianMs'])} than Java")


if __name__ == "__main__":
    main()

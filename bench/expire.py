"""Expiring 990 of 1,000 snapshots (keep 10), against the floor of plain ``os`` calls.

Usage: python bench/expire.py [--commits 1000] [--keep 10] [--tag-every 100] [--runs 5] [--sync]

A table gets ``--commits`` 10-row append commits (commit-time expiry off: ``write-only``),
then ``expire_snapshots(retain_max=keep, retain_min=1, max_deletes=commits)`` is timed on a
fresh copy of it. The floor is timed on another identical copy: walk its directories with
``os.scandir`` and ``os.remove`` exactly the files our expiry deleted. Both are the best of
``--runs`` copies (the machine is shared). The same is then run on a table with a tag every
``--tag-every`` snapshots (tagged snapshots keep their manifests), and on a table
partitioned 10 ways where every commit overwrites one partition, with the same tags: there
every expired snapshot deletes a data file, and whether a tag still holds it is decided for
each (the tag-skipping logic). With ``--sync`` the build is flushed to disk first, so both
also pay the file system's journal.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from paimon_core.catalog import FileSystemCatalog
from paimon_core.lifecycle.expire import expire_snapshots
from paimon_core.lifecycle.tag_management import create_tag

SCHEMA = pa.schema([("k", pa.int64()), ("v", pa.string())])
PARTITIONED = pa.schema([("k", pa.int64()), ("v", pa.string()), ("dt", pa.string())])


def build(warehouse: str, commits: int, tag_every: int, overwrite: bool = False) -> str:
    """A table of ``commits`` 10-row commits (tagged every ``tag_every``); its path.

    ``overwrite``: partitioned by ``dt`` (10 values), commit i replaces partition
    ``p<i % 10>``, so each one deletes the data file the overwrite before it wrote there.
    """
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    schema = PARTITIONED if overwrite else SCHEMA
    keys = ["dt"] if overwrite else []
    table = catalog.create_table(
        "db.t", schema, partition_keys=keys, options={"write-only": "true"}
    )
    committer = table.new_commit()
    for i in range(commits):
        columns = {"k": list(range(i * 10, i * 10 + 10)), "v": [f"v{i}"] * 10}
        if overwrite:
            columns["dt"] = [f"p{i % 10}"] * 10
        write = table.new_write(overwrite=overwrite)
        write.write_arrow(pa.table(columns, schema=schema))
        messages = write.prepare_commit()
        if overwrite:
            snapshot_id = committer.overwrite(messages, dynamic=True)
        else:
            snapshot_id = committer.commit(messages)
        if tag_every and snapshot_id % tag_every == 0:
            create_tag(table, f"tag-{snapshot_id}", snapshot_id=snapshot_id)
    return table.path


def files_under(root: str) -> set[str]:
    """Every file below ``root``, relative to it."""
    out: set[str] = set()
    stack = [root]
    while stack:
        current = stack.pop()
        with os.scandir(current) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                else:
                    out.add(os.path.relpath(entry.path, root))
    return out


def floor_delete(root: str, doomed: set[str]) -> int:
    """List ``root`` with ``os.scandir`` and remove the files in ``doomed`` (relative)."""
    names: dict[str, set[str]] = {}
    for rel in doomed:
        directory, _, name = rel.rpartition("/")
        names.setdefault(os.path.join(root, directory) if directory else root, set()).add(name)
    deleted = 0
    stack = [root]
    while stack:
        current = stack.pop()
        wanted = names.get(current, ())
        with os.scandir(current) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif entry.name in wanted:
                    os.remove(entry.path)
                    deleted += 1
    return deleted


def run(
    tmp: str, label: str, args: argparse.Namespace, tag_every: int, overwrite: bool = False
) -> dict:
    """Best of ``args.runs`` fresh copies of one built table: ours, then the floor."""
    template = f"{tmp}/{label}"
    build(template, args.commits, tag_every, overwrite)
    before = files_under(template)
    ours_s, floor_s, summary, doomed_count = [], [], "", 0
    for r in range(args.runs):
        mine, floor = f"{tmp}/{label}-ours-{r}", f"{tmp}/{label}-floor-{r}"
        shutil.copytree(template, mine)
        shutil.copytree(template, floor)
        table = FileSystemCatalog(mine).get_table("db.t")
        if args.sync:
            os.sync()  # start from files on disk, not dirty pages being written back
        start = time.perf_counter()
        result = expire_snapshots(
            table, retain_max=args.keep, retain_min=1, max_deletes=args.commits
        )
        ours_s.append(time.perf_counter() - start)
        assert result.expired == args.commits - args.keep, result.expired

        after = files_under(mine)
        doomed = before - after
        if args.sync:
            os.sync()
        start = time.perf_counter()
        deleted = floor_delete(floor, doomed)
        floor_s.append(time.perf_counter() - start)
        assert deleted == len(doomed)
        # Expiry also writes the EARLIEST hint, which the floor does not.
        assert files_under(floor) == after - (after - before), "the floor deleted other files"
        summary, doomed_count = result.plan.summary(), len(doomed)
        shutil.rmtree(mine)
        shutil.rmtree(floor)
    return {
        "expired": args.commits - args.keep,
        "files": doomed_count,
        "ours": min(ours_s),
        "floor": min(floor_s),
        "summary": summary,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--commits", type=int, default=1000)
    parser.add_argument("--keep", type=int, default=10)
    parser.add_argument("--tag-every", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--sync",
        action="store_true",
        help="os.sync() before each timing: deletes then pay the disk's journal, not only ours",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows = [
            ("no tags", run(tmp, "plain", args, 0)),
            (f"tag every {args.tag_every}", run(tmp, "tagged", args, args.tag_every)),
            ("overwrite, tags", run(tmp, "overwrite", args, args.tag_every, overwrite=True)),
        ]
    mode = "after os.sync()" if args.sync else "files in page cache"
    print(f"expire keeping {args.keep} of {args.commits} snapshots ({mode}, best of {args.runs})")
    header = f"{'table':<16}{'expired':>8}{'files':>7}{'ours s':>8}{'files/s':>9}"
    print(header + f"{'floor s':>9}{'ours/floor':>11}")
    for name, r in rows:
        print(
            f"{name:<16}{r['expired']:>8}{r['files']:>7}{r['ours']:>8.3f}"
            f"{r['files'] / r['ours']:>9.0f}{r['floor']:>9.3f}{r['ours'] / r['floor']:>11.2f}"
        )
    for name, r in rows:
        print(f"{name}: {r['summary']}")


if __name__ == "__main__":
    main()

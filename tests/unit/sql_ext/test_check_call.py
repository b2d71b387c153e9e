"""``CALL sys.check_table`` and ``CALL sys.diff_tags`` through ``PaimonSession`` (Spark
DataFrames) and through ``paimon-sql -e`` in a subprocess, which answers them without a JVM."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from sql_ext.session import PaimonSession
from tests.unit.procedures.helpers import call, fingerprint, new_catalog, new_table

ROOT = Path(__file__).resolve().parents[3]
NO_SPARK = """
import sys


class NoSpark:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in ("pyspark", "py4j"):
            raise ImportError(f"{name} must not be imported")


sys.meta_path.insert(0, NoSpark())
from sql_ext.shell import main

sys.exit(main(sys.argv[1:]))
"""


def paimon_sql(warehouse: str, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SPARK_CONF_DIR": str(ROOT / "spark-conf")}
    command = [sys.executable, "-c", NO_SPARK, "--warehouse", warehouse, *argv]
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT)


def damaged_table(warehouse: str) -> tuple[str, str]:
    """db.t with tags t1 (snapshot 1) and t3 (3); a file of snapshot 1 deleted. Returns
    (that file, the LATEST hint, which is wrong)."""
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=3)
    call(catalog, "create_tag", table="db.t", tag="t1", snapshot=1)
    call(catalog, "create_tag", table="db.t", tag="t3", snapshot=3)
    (victim,) = Path(table.path, "dt=2024-01-02", "bucket-0").iterdir()
    victim.unlink()
    latest = table.snapshot_manager.latest_hint_path
    Path(latest).write_text("2")
    return str(victim), latest


def test_check_table_and_diff_tags_through_the_session(spark: Any, warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    new_table(catalog, commits=3)
    call(catalog, "create_tag", table="db.t", tag="t1", snapshot=1)
    session = PaimonSession(spark, warehouse=warehouse)
    try:
        healthy = session.sql("CALL sys.check_table(table => 'db.t', deep => true)")
        assert healthy.schema.simpleString() == (
            "struct<kind:string,path:string,needed_by:string,detail:string>"
        )
        assert healthy.collect() == []
        diff = session.sql("CALL sys.diff_tags(table => 'db.t', from => 't1', to => 3)")
        assert diff.schema.simpleString() == (
            "struct<partition:string,bucket:int,file_path:string,kind:string,"
            "row_count:bigint,level:int>"
        )
        rows = [tuple(r) for r in diff.collect()]
        assert [(r[0], r[1], r[3], r[4], r[5]) for r in rows] == [
            ("dt=2024-01-01", 0, "added", 2, 0),
            ("dt=2024-01-02", 0, "added", 2, 0),
        ]
        victim = rows[1][2]
        os.remove(victim)
        before = fingerprint(warehouse)
        damaged = session.sql("CALL sys.check_table('db.t')").collect()
        assert fingerprint(warehouse) == before
        assert [tuple(r) for r in damaged] == [
            ("missing", victim, "snapshots 2-3", "data file does not exist")
        ]
    finally:
        session.stop()


def test_check_table_and_diff_tags_through_paimon_sql(warehouse: str) -> None:
    victim, latest = damaged_table(warehouse)
    before = fingerprint(f"{warehouse}/db.db")  # the shell itself creates default.db
    done = paimon_sql(
        warehouse,
        "--output",
        "json",
        "-e",
        "CALL sys.check_table(table => 'db.t'); "
        "CALL sys.diff_tags(table => 'db.t', from => 't3', to => 't1')",
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert fingerprint(f"{warehouse}/db.db") == before
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[:2] == [
        {
            "kind": "missing",
            "path": victim,
            "needed_by": "snapshots 2-3, tag t3",
            "detail": "data file does not exist",
        },
        {
            "kind": "hint",
            "path": latest,
            "needed_by": None,
            "detail": "LATEST says 2, the latest snapshot is 3",
        },
    ]
    assert [(r["partition"], r["kind"], r["row_count"]) for r in lines[2:]] == [
        ("dt=2024-01-01", "removed", 2),
        ("dt=2024-01-02", "removed", 2),
    ]
    assert lines[3]["file_path"] == victim
    failed = paimon_sql(warehouse, "-e", "CALL sys.diff_tags('db.t', 't1', 'nope')")
    assert failed.returncode != 0
    assert failed.stderr.startswith("Error: CALL sys.diff_tags: ")
    assert "nope" in failed.stderr

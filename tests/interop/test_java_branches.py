"""Branches with Apache Paimon's Java implementation (0.9, paimon-oracle) and pypaimon 2.1.

The oracle has no branch command, but Paimon 0.9's catalog opens `db.t$branch_<name>`: Java
reads and writes our branches, its branch snapshots are read by us, and it reads the table
after our fast-forward. The other direction runs ``tests/interop/java/Branches.java`` (Paimon
0.9's ``createBranch``, ``fastForward``, writes through ``db.t$branch_<name>`` and
``switchToBranch``): we read what Java made (core and Spark SQL, ``$branches``, the branch's
``$snapshots``, main after Java's fast-forward), and our maintenance of main keeps every file
Java's branches use. pypaimon's ``FileSystemBranchManager`` (a port of Java's) creates
branches byte for byte as we do.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.lifecycle import branch_management as bm
from paimon_core.lifecycle import tag_management as tm
from paimon_core.lifecycle.check import check_table
from tests.interop.helpers import json_rows, pypaimon_read, rows, run_java
from tests.unit.paimon_core.helpers import file_state

pytestmark = pytest.mark.oracle

SCHEMA = pa.schema(
    [
        pa.field("k", pa.int32(), nullable=False),
        ("v", pa.string()),
        pa.field("dt", pa.string(), nullable=False),
    ]
)
COLS = ["k", "v", "dt"]


def _batch(ks: list[int], dt: str = "a") -> pa.Table:
    return pa.table({"k": ks, "v": [f"v{k}" for k in ks], "dt": [dt] * len(ks)}, schema=SCHEMA)


def _table(warehouse: str, **kw: Any) -> Any:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    return catalog.create_table("db.t", SCHEMA, partition_keys=["dt"], **kw)


@pytest.mark.parametrize("primary_key", [False, True])
def test_java_reads_and_writes_our_branch_and_reads_main_after_fast_forward(
    warehouse: str, oracle: Callable[..., Any], primary_key: bool
) -> None:
    keys = {"primary_keys": ["k", "dt"], "options": {"bucket": "2"}} if primary_key else {}
    table = _table(warehouse, **keys)
    table.write_arrow(_batch([1, 2]))
    tm.create_tag(table, "t1")
    table.write_arrow(_batch([3], "b"))
    bm.create_branch(table, "b1", "t1")
    branch = FileSystemCatalog(warehouse).get_table("db.t$branch_b1")
    branch.write_arrow(_batch([4], "c"))
    expected = rows(pa.concat_tables([_batch([1, 2]), _batch([4], "c")]))
    assert json_rows(oracle("read", warehouse, "db.t$branch_b1"), COLS) == expected
    assert [s["id"] for s in oracle("snapshots", warehouse, "db.t$branch_b1")] == [1, 2]
    assert oracle("tags", warehouse, "db.t$branch_b1") == {"t1": 1}
    main = rows(pa.concat_tables([_batch([1, 2]), _batch([3], "b")]))
    assert json_rows(oracle("read", warehouse, "db.t"), COLS) == main

    java_rows = [{"k": 5, "v": "java", "dt": "c"}]
    oracle("write", warehouse, "db.t$branch_b1", "--json-rows", json.dumps(java_rows))
    branch = FileSystemCatalog(warehouse).get_table("db.t$branch_b1")
    assert branch.snapshot_manager.latest_snapshot_id() == 3
    expected = sorted([*expected, (5, "java", "c")])
    assert rows(branch.to_arrow(), COLS) == expected
    assert json_rows(oracle("read", warehouse, "db.t"), COLS) == main

    bm.fast_forward(FileSystemCatalog(warehouse).get_table("db.t"), "b1")
    assert json_rows(oracle("read", warehouse, "db.t"), COLS) == expected
    assert [s["id"] for s in oracle("snapshots", warehouse, "db.t")] == [1, 2, 3]
    assert oracle("tags", warehouse, "db.t") == {"t1": 1}
    assert json_rows(oracle("read", warehouse, "db.t", "--tag", "t1"), COLS) == rows(_batch([1, 2]))
    oracle("write", warehouse, "db.t", "--json-rows", json.dumps([{"k": 6, "v": "x", "dt": "a"}]))
    assert rows(FileSystemCatalog(warehouse).get_table("db.t").to_arrow(), ["k"]) == sorted(
        [(k,) for k, _, _ in expected] + [(6,)]
    )


def test_java_expiry_of_main_and_our_branch_of_an_expired_tag(
    warehouse: str, oracle: Callable[..., Any]
) -> None:
    """A branch made from a tag whose snapshot Java expired reads what the tag holds."""
    table = _table(warehouse)
    table.write_arrow(_batch([1]))
    tm.create_tag(table, "t1")
    for k in (2, 3):
        table.write_arrow(_batch([k]), overwrite=True)
    oracle("expire", warehouse, "db.t", "--retain-max", 1)
    table = FileSystemCatalog(warehouse).get_table("db.t")
    assert table.snapshot_manager.list_snapshot_ids() == [3]
    bm.create_branch(table, "old", "t1")
    assert json_rows(oracle("read", warehouse, "db.t$branch_old"), COLS) == rows(_batch([1]))
    assert rows(FileSystemCatalog(warehouse).get_table("db.t$branch_old").to_arrow(), COLS) == (
        rows(_batch([1]))
    )


def test_our_branches_are_the_files_pypaimon_makes(warehouse: str) -> None:
    from pypaimon import CatalogFactory

    table = _table(warehouse)
    table.write_arrow(_batch([1, 2]))
    tm.create_tag(table, "t1")
    table.write_arrow(_batch([3]))
    twin = f"{warehouse}-pypaimon"
    shutil.copytree(warehouse, twin)
    bm.create_branch(table, "b1", "t1")
    bm.create_branch(table, "empty")
    theirs = CatalogFactory.create({"warehouse": twin}).get_table("db.t")
    theirs.branch_manager().create_branch("b1", tag_name="t1")
    theirs.branch_manager().create_branch("empty")
    ours = file_state(f"{table.path}/branch")
    assert ours == file_state(f"{twin}/db.db/t/branch")
    assert sorted(ours) == [
        "branch-b1/schema/schema-0",
        "branch-b1/snapshot/snapshot-1",
        "branch-b1/tag/tag-t1",
        "branch-empty/schema/schema-0",
    ]
    # Each reads the other's branches.
    assert rows(pypaimon_read(warehouse, "db.t$branch_b1"), COLS) == rows(_batch([1, 2]))
    bm.rename_branch(FileSystemCatalog(twin).get_table("db.t"), "b1", "b2")
    got = FileSystemCatalog(twin).get_table("db.t$branch_b2").to_arrow()
    assert rows(got, COLS) == rows(_batch([1, 2]))
    assert not os.path.exists(f"{twin}/db.db/t/branch/branch-b1")


# ------------------------------------------------------ branches Java made, read by us


@pytest.fixture(scope="module")
def java_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where ``Branches.java`` is compiled, once for the module's tests."""
    return tmp_path_factory.mktemp("branches-java")


def _java(build_dir: Path, warehouse: str, *steps: str) -> list[dict[str, Any]]:
    """Run ``Branches.java``'s steps (``op|table|...``) in one JVM; one JSON object each."""
    out = run_java(build_dir, "Branches", [warehouse, *steps])
    assert len(out) == len(steps), out
    return out


def _json(ks: list[int], dt: str, v: str = "java") -> str:
    return json.dumps([{"k": k, "v": f"{v}{k}", "dt": dt} for k in ks])


def _expected(*parts: tuple[list[int], str, str]) -> list[tuple[Any, ...]]:
    return sorted((k, f"{v}{k}", dt) for ks, dt, v in parts for k in ks)


def _sql(session: Any, text: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in session.sql(text).collect()]


@pytest.mark.parametrize("primary_key", [False, True])
def test_we_read_branches_java_creates_writes_and_fast_forwards(
    warehouse: str,
    oracle: Callable[..., Any],
    spark: Any,
    java_build: Path,
    primary_key: bool,
) -> None:
    """Java 0.9 makes a branch from our tag and an empty one, writes into both (through the
    catalog's ``db.t$branch_b1`` and ``switchToBranch``); we read exactly its rows, branch
    list, branch snapshots and tags, with the core and with Spark SQL. After Java's
    ``fastForward`` we read main as the branch, and Java reads what we then write."""
    from sql_ext.session import PaimonSession

    keys = {"primary_keys": ["k", "dt"], "options": {"bucket": "2"}} if primary_key else {}
    table = _table(warehouse, **keys)
    table.write_arrow(_batch([1, 2]))
    tm.create_tag(table, "t1")
    table.write_arrow(_batch([3], "b"))
    out = _java(
        java_build,
        warehouse,
        "create|db.t|b1|t1",
        "create|db.t|e",
        f"write|db.t$branch_b1|{_json([4], 'c')}",
        f"switch-write|db.t|e|{_json([5], 'a')}",
        f"write|db.t$branch_b1|{_json([6, 1], 'a', 'j2_')}",
        "branches|db.t",
    )
    assert [o.get("latestSnapshot") for o in out[2:5]] == [2, 1, 3]
    assert out[5] == {"branches": ["b1", "e"]}
    ours = [(1, "v1", "a"), (2, "v2", "a")]
    b1 = sorted([*ours, *_expected(([4], "c", "java"), ([6, 1], "a", "j2_"))])
    if primary_key:  # key (1, a) was overwritten on the branch
        b1.remove((1, "v1", "a"))
    e = _expected(([5], "a", "java"))

    catalog = FileSystemCatalog(warehouse)
    assert bm.list_branches(catalog.get_table("db.t")) == ["b1", "e"]
    assert rows(catalog.get_table("db.t$branch_b1").to_arrow(), COLS) == b1
    assert rows(catalog.get_table("db.t$branch_e").to_arrow(), COLS) == e
    main = sorted([*ours, (3, "v3", "b")])
    assert rows(catalog.get_table("db.t").to_arrow(), COLS) == main

    session = PaimonSession(spark, warehouse=warehouse)
    assert _sql(session, "SELECT branch_name FROM db.`t$branches`") == [("b1",), ("e",)]
    assert _sql(session, "SELECT k, v, dt FROM db.`t$branch_b1` ORDER BY k, v") == sorted(b1)
    assert _sql(session, "SELECT k, v, dt FROM db.`t$branch_e`") == e
    java_snapshots = oracle("snapshots", warehouse, "db.t$branch_b1")
    got = _sql(
        session,
        "SELECT snapshot_id, commit_kind, total_record_count, delta_record_count "
        "FROM db.`t$branch_b1$snapshots` ORDER BY snapshot_id",
    )
    assert [s[0] for s in got] == [1, 2, 3]
    assert got == [
        (s["id"], s["commitKind"], s["totalRecordCount"], s["deltaRecordCount"])
        for s in java_snapshots
    ]
    assert _sql(session, "SELECT tag_name, snapshot_id FROM db.`t$branch_b1$tags`") == [("t1", 1)]
    assert _sql(session, "SELECT snapshot_id FROM db.`t$branch_e$snapshots`") == [(1,)]

    (forwarded, read_back) = _java(java_build, warehouse, "fast-forward|db.t|b1", "read|db.t")
    assert forwarded == {"fast_forwarded": "b1"}
    assert sorted(tuple(r) for r in read_back["rows"]) == sorted((str(k), v, dt) for k, v, dt in b1)
    catalog = FileSystemCatalog(warehouse)
    assert rows(catalog.get_table("db.t").to_arrow(), COLS) == b1
    assert _sql(session, "SELECT k, v, dt FROM db.t ORDER BY k, v") == sorted(b1)
    assert [r[0] for r in _sql(session, "SELECT snapshot_id FROM db.`t$snapshots`")] == [1, 2, 3]
    assert _sql(session, "SELECT tag_name FROM db.`t$tags`") == [("t1",)]
    session.sql("INSERT INTO db.t VALUES (7, 'ours', 'b')")
    assert json_rows(oracle("read", warehouse, "db.t"), COLS) == sorted([*b1, (7, "ours", "b")])
    # The branch itself is untouched by the fast-forward and our write.
    assert rows(catalog.get_table("db.t$branch_b1").to_arrow(), COLS) == b1


def _age_every_file(root: str) -> None:
    """Make every file look two days old, so orphan removal's default age spares none."""
    old = time.time() - 2 * 86400
    for directory, _, names in os.walk(root):
        for name in names:
            os.utime(os.path.join(directory, name), (old, old))


@pytest.mark.parametrize("primary_key", [False, True])
def test_our_maintenance_of_main_keeps_what_javas_branches_use(
    warehouse: str,
    oracle: Callable[..., Any],
    spark: Any,
    java_build: Path,
    primary_key: bool,
) -> None:
    """Java 0.9 makes branch ``b1`` from our tag ``t1`` (its files: main's snapshot 1) and
    writes into it. Then on main we delete the tag, overwrite every partition, expire, roll
    back and remove orphans (every file aged): what only main used goes, and Java still
    reads both its branches whole, and so do we; the integrity check finds nothing missing."""
    from sql_ext.session import PaimonSession

    keys = {"primary_keys": ["k", "dt"], "options": {"bucket": "2"}} if primary_key else {}
    table = _table(warehouse, **keys)
    table.write_arrow(_batch([1, 2]))
    tm.create_tag(table, "t1")
    table.write_arrow(_batch([3], "b"))
    _java(
        java_build,
        warehouse,
        "create|db.t|b1|t1",
        f"write|db.t$branch_b1|{_json([4], 'c')}",
        "create|db.t|e",
        f"switch-write|db.t|e|{_json([5], 'a')}",
    )
    b1 = sorted([(1, "v1", "a"), (2, "v2", "a"), (4, "java4", "c")])
    e = [(5, "java5", "a")]
    b_files = {
        e_.file.file_name
        for e_ in table.new_scan().read_entries(table.latest_snapshot())
        if table.new_scan().partition_values(e_.partition)[0] == "b"
    }

    session = PaimonSession(spark, warehouse=warehouse)
    session.sql("CALL sys.delete_tag(table => 'db.t', tag => 't1')")
    session.sql("INSERT OVERWRITE db.t VALUES (8, 'o', 'a'), (9, 'o', 'b')")  # snapshot 3
    session.sql("CALL sys.create_tag(table => 'db.t', tag => 't2', snapshot => 3)")
    session.sql("INSERT INTO db.t VALUES (10, 'x', 'a')")  # snapshot 4
    got = _sql(
        session, "CALL sys.expire_snapshots(table => 'db.t', retain_max => 1, retain_min => 1)"
    )
    assert got == [(3,)]  # snapshots 1 to 3 (3 is still held by the tag t2)
    session.sql("CALL sys.rollback(table => 'db.t', version => 't2')")
    session.sql("CALL sys.delete_tag(table => 'db.t', tag => 't2')")
    stray = os.path.join(table.path, "dt=c", "bucket-0", "data-stray-0.parquet")
    Path(stray).write_bytes(b"no snapshot names this")
    _age_every_file(table.path)
    removed = _sql(session, "CALL sys.remove_orphan_files(table => 'db.t')")
    # Only the stray goes: Java's branch files in dt=c and dt=a look like orphans to main.
    assert removed[0][0] == 1 and not os.path.exists(stray)

    main = [(8, "o", "a"), (9, "o", "b")]
    catalog = FileSystemCatalog(warehouse)
    assert rows(catalog.get_table("db.t").to_arrow(), COLS) == main
    for name in b_files:  # only main's snapshot 2 used the files of partition b: gone
        assert not [f for _, _, fs in os.walk(table.path) for f in fs if f == name]
    assert json_rows(oracle("read", warehouse, "db.t$branch_b1"), COLS) == b1
    assert json_rows(oracle("read", warehouse, "db.t$branch_e"), COLS) == e
    # The branch's own tag t1 is kept and still reads (Java 0.9's read of db.t$branch_b1
    # with scan.tag-name = t1 fails with "Tag 't1' doesn't exist" once main's t1 is gone).
    assert oracle("tags", warehouse, "db.t$branch_b1") == {"t1": 1}
    assert _sql(session, "SELECT k, v, dt FROM db.`t$branch_b1` VERSION AS OF 't1'") == sorted(
        rows(_batch([1, 2]))
    )
    assert rows(catalog.get_table("db.t$branch_b1").to_arrow(), COLS) == b1
    assert _sql(session, "SELECT k, v, dt FROM db.`t$branch_e`") == e
    assert [p for p in check_table(catalog.get_table("db.t")) if p.kind != "orphan"] == []
    # Java can still fast-forward main to its branch.
    _java(java_build, warehouse, "fast-forward|db.t|b1")
    assert json_rows(oracle("read", warehouse, "db.t"), COLS) == b1

"""Tags, branches, fast-forward, rollback and expiry against Apache Paimon 2 (Java), both ways:
Java 2 tags, branches, fast-forwards, rolls back and expires our tables and we read exactly
what it made (core and Spark SQL); we do the same to Java 2's tables (through SQL) and Java 2
reads them and commits on top. The Java 0.9 counterparts are ``test_java_branches.py``,
``test_java.py`` (a table made through SQL) and ``test_java_changelog.py`` (expiry)."""

from __future__ import annotations

import os
from typing import Any

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.lifecycle import branch_management as bm
from paimon_core.lifecycle import tag_management as tm
from paimon_core.lifecycle.check import check_table
from paimon_core.operations.compact import compact_table
from paimon_core.table import FileStoreTable
from tests.interop.helpers import SQL_MADE_READS, json_rows, rows, sql_made_table
from tests.interop.java2 import Java2
from tests.interop.test_java_branches import COLS, SCHEMA
from tests.unit.paimon_core.helpers import changelog_entries
from tests.unit.paimon_core.lifecycle.test_lifecycle_state_machine import find_orphans

pytestmark = pytest.mark.java2

FIELDS = [("k", "INT NOT NULL"), ("v", "STRING"), ("dt", "STRING NOT NULL")]


def _batch(ks: list[int], tag: str = "v", dt: str = "a") -> list[dict[str, Any]]:
    return [{"k": k, "v": f"{tag}{k}", "dt": dt} for k in ks]


def _arrow(batch: list[dict[str, Any]]) -> pa.Table:
    return pa.Table.from_pylist(batch, schema=SCHEMA)


def _expected(*batches: list[dict[str, Any]], keyed: bool = True) -> list[tuple[Any, ...]]:
    latest: dict[Any, dict[str, Any]] = {}
    everything = []
    for batch in batches:
        for r in batch:
            latest[(r["k"], r["dt"])] = r
            everything.append(r)
    return json_rows(list(latest.values()) if keyed else everything, COLS)


def _sql(session: Any, text: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in session.sql(text).collect()]


def _keys(primary_key: bool) -> dict[str, Any]:
    return {"primary_keys": ["k", "dt"], "options": {"bucket": "2"}} if primary_key else {}


@pytest.mark.parametrize("primary_key", [True, False], ids=["pk", "append"])
def test_we_read_what_java2_tags_branches_fast_forwards_rolls_back_and_expires(
    java2: Java2, warehouse: str, spark: Any, primary_key: bool
) -> None:
    """On our table Java 2 tags, branches from our tag and from nothing, writes into the
    branches: we read them (core and SQL, ``$branches``, ``$tags``). We write into its
    branch; Java 2 fast-forwards main to it, tags, writes, rolls back to the tag and expires
    all but the latest snapshot: we read main, every tag, and nothing any of them needs is
    gone."""
    from sql_ext.session import PaimonSession

    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    table = catalog.create_table("db.t", SCHEMA, partition_keys=["dt"], **_keys(primary_key))
    first, second = _batch([1, 2]), _batch([2, 3], "w", "b")
    table.write_arrow(_arrow(first))
    tm.create_tag(table, "t1")
    table.write_arrow(_arrow(second))
    on_b1, on_e = _batch([4, 1], "j"), _batch([5], "e", "c")
    out = java2.run(
        {"op": "create-tag", "table": "db.t", "tag": "t2"},
        {"op": "create-branch", "table": "db.t", "branch": "b1", "tag": "t1"},
        {"op": "create-branch", "table": "db.t", "branch": "e"},
        {"op": "write", "table": "db.t$branch_b1", "rows": on_b1},
        {"op": "write", "table": "db.t$branch_e", "rows": on_e},
    )
    assert out[0] == {"tags": {"t1": 1, "t2": 2}}
    assert [o["latestSnapshot"] for o in out[3:]] == [2, 1]

    b1 = _expected(first, on_b1, keyed=primary_key)
    assert bm.list_branches(catalog.get_table("db.t")) == ["b1", "e"]
    assert sorted(tm.list_tags(catalog.get_table("db.t"))) == ["t1", "t2"]
    assert rows(catalog.get_table("db.t$branch_b1").to_arrow(), COLS) == b1
    assert rows(catalog.get_table("db.t$branch_e").to_arrow(), COLS) == _expected(on_e)
    session = PaimonSession(spark, warehouse=warehouse)
    assert _sql(session, "SELECT branch_name FROM db.`t$branches`") == [("b1",), ("e",)]
    assert _sql(session, "SELECT tag_name, snapshot_id FROM db.`t$tags`") == [("t1", 1), ("t2", 2)]
    assert sorted(_sql(session, "SELECT k, v, dt FROM db.`t$branch_b1`")) == b1

    ours = _batch([6], "o", "c")
    catalog.get_table("db.t$branch_b1").write_arrow(_arrow(ours))
    b1 = _expected(first, on_b1, ours, keyed=primary_key)
    last = _batch([7], "x")
    out = java2.run(
        {"op": "fast-forward", "table": "db.t", "branch": "b1"},
        {"op": "read", "table": "db.t"},
        {"op": "create-tag", "table": "db.t", "tag": "t3"},
        {"op": "write", "table": "db.t", "rows": last},
        {"op": "rollback", "table": "db.t", "tag": "t3"},
        {"op": "expire", "table": "db.t", "retainMax": 1},
        {"op": "tags", "table": "db.t"},
    )
    assert out[0] == {"latestSnapshot": 3}
    assert json_rows(out[1]["rows"], COLS) == b1
    assert out[4] == {"latestSnapshot": 3}
    assert out[6] == {"tags": {"t1": 1, "t3": 3}}  # fast-forward took b1's tags (t2 was main's)

    table = catalog.get_table("db.t")
    assert table.snapshot_manager.list_snapshot_ids() == [3]
    assert rows(table.to_arrow(), COLS) == b1
    assert sorted(_sql(session, "SELECT k, v, dt FROM db.t")) == b1
    assert rows(table.copy({"scan.tag-name": "t1"}).to_arrow(), COLS) == _expected(first)
    assert sorted(_sql(session, "SELECT k, v, dt FROM db.t VERSION AS OF 't1'")) == (
        _expected(first)
    )
    assert rows(catalog.get_table("db.t$branch_e").to_arrow(), COLS) == _expected(on_e)
    # Java 2's expiry of main looks at no branch: the snapshot main took from b1 by the
    # fast-forward shares b1's manifest list, which the expiry deleted (ours keeps it).
    problems = [(p.kind, p.needed_by) for p in check_table(table) if p.kind != "orphan"]
    assert problems and set(problems) == {("missing", "branch b1 snapshot 2")}
    assert rows(catalog.get_table("db.t$branch_b1").to_arrow(), COLS) == b1


@pytest.mark.parametrize("primary_key", [True, False], ids=["pk", "append"])
def test_java2_reads_and_writes_on_what_we_tag_branch_roll_back_and_expire(
    java2: Java2, warehouse: str, spark: Any, primary_key: bool
) -> None:
    """On Java 2's table we tag, branch, write into the branch, roll main back to the tag and
    expire, through SQL: Java 2 reads our tags and branch exactly, and its commits on main and
    on the branch land on top of ours; then we read Java's."""
    from sql_ext.session import PaimonSession

    keys = ["k", "dt"] if primary_key else []
    options = {"bucket": "2"} if primary_key else {}
    first, second = _batch([1, 2]), _batch([2, 3], "w", "b")
    java2.run(
        {"op": "create", "table": "db.t", "fields": [list(f) for f in FIELDS],
         "primaryKeys": keys, "partitionKeys": ["dt"], "options": options},
        {"op": "write", "table": "db.t", "rows": first},
        {"op": "write", "table": "db.t", "rows": second},
    )  # fmt: skip
    session = PaimonSession(spark, warehouse=warehouse)
    for statement in (
        "CALL sys.create_tag(table => 'db.t', tag => 't1', snapshot => 1)",
        "CALL sys.create_tag(table => 'db.t', tag => 't2')",
        "CALL sys.create_branch(table => 'db.t', branch => 'b1', tag => 't2')",
        "INSERT INTO db.`t$branch_b1` VALUES (4, 'o4', 'c')",
        "CALL sys.rollback(table => 'db.t', version => 't1')",
        "INSERT INTO db.t VALUES (5, 'o5', 'a')",
        "CALL sys.expire_snapshots(table => 'db.t', retain_max => 1, retain_min => 1)",
    ):
        session.sql(statement).collect()
    b1 = _expected(first, second, _batch([4], "o", "c"), keyed=primary_key)
    main = _expected(first, _batch([5], "o"), keyed=primary_key)
    java_main, java_b1 = _batch([6], "j"), _batch([7, 1], "j", "c")
    out = java2.run(
        {"op": "tags", "table": "db.t"},
        {"op": "branches", "table": "db.t"},
        {"op": "snapshots", "table": "db.t"},
        {"op": "read", "table": "db.t"},
        {"op": "read", "table": "db.t", "options": {"scan.tag-name": "t1"}},
        {"op": "read", "table": "db.t$branch_b1"},
        {"op": "write", "table": "db.t", "rows": java_main},
        {"op": "write", "table": "db.t$branch_b1", "rows": java_b1},
        {"op": "read", "table": "db.t"},
    )
    assert out[0] == {"tags": {"t1": 1}}  # the rollback to t1 dropped t2, as Java's does
    assert out[1] == {"branches": ["b1"]}
    assert [s["id"] for s in out[2]["snapshots"]] == [2]  # rollback to 1, then 2 is ours
    assert json_rows(out[3]["rows"], COLS) == main
    assert json_rows(out[4]["rows"], COLS) == _expected(first)
    assert json_rows(out[5]["rows"], COLS) == b1
    assert [o["latestSnapshot"] for o in out[6:8]] == [3, 4]
    main = _expected(first, _batch([5], "o"), java_main, keyed=primary_key)
    assert json_rows(out[8]["rows"], COLS) == main

    catalog = FileSystemCatalog(warehouse)
    assert rows(catalog.get_table("db.t").to_arrow(), COLS) == main
    b1 = _expected(first, second, _batch([4], "o", "c"), java_b1, keyed=primary_key)
    assert sorted(_sql(session, "SELECT k, v, dt FROM db.`t$branch_b1`")) == b1
    assert [p for p in check_table(catalog.get_table("db.t")) if p.kind != "orphan"] == []


def _changelog_files(table: FileStoreTable, snapshot_id: int) -> list[str]:
    snapshot = table.snapshot_manager.snapshot(snapshot_id)
    return [f"{table.path}/bucket-0/{e.file.file_name}" for e in changelog_entries(table, snapshot)]


@pytest.mark.parametrize("producer", ["input", "lookup", "full-compaction"])
def test_java2_expires_our_changelog_tables(java2: Java2, warehouse: str, producer: str) -> None:
    """Java 2's expiry reads our changelog manifests: it deletes what only the expired
    snapshots' changelogs held and keeps the rest; what is left reads the same."""
    kv = pa.schema([pa.field("k", pa.int32(), nullable=False), ("v", pa.string())])
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    options = {"bucket": "1", "changelog-producer": producer}
    table = catalog.create_table("db.t", kv, primary_keys=["k"], options=options)

    def write(ks: list[int], vs: list[str], kind: int = 0) -> None:
        data = pa.table({"k": pa.array(ks, pa.int32()), "v": vs}, schema=kv)
        table.write_arrow(data, row_kinds=pa.array([kind] * len(ks), pa.int8()))

    write([1, 2, 1], ["a", "b", "c"])
    compact_table(table)
    write([2], ["b"], 3)
    write([3], ["d"])
    compact_table(table)
    with_changelog = [
        s.snapshot_id for s in table.snapshot_manager.snapshots() if s.changelog_manifest_list
    ]
    assert len(with_changelog) >= 2
    first = _changelog_files(table, with_changelog[0])
    kept = _changelog_files(table, with_changelog[-1])
    assert first and kept
    expected = rows(table.to_arrow(), ["k", "v"])
    assert expected == [(1, "c"), (3, "d")]
    out = java2.run(
        {"op": "expire", "table": "db.t", "retainMax": 2},
        {"op": "read", "table": "db.t"},
    )
    assert out[0]["expired"] > 0
    assert json_rows(out[1]["rows"], ["k", "v"]) == expected
    assert not any(map(os.path.exists, first))
    assert all(map(os.path.exists, kept))
    assert find_orphans(FileStoreTable.load(table.path), dry_run=True).count == 0
    assert rows(FileStoreTable.load(table.path).to_arrow(), ["k", "v"]) == expected


def test_java2_reads_a_table_made_through_sql(java2: Java2, warehouse: str, spark: Any) -> None:
    """``helpers.SQL_MADE_TABLE`` (CREATE TABLE / INSERT / CALL / tag DDL / expiry through the
    SQL session), then Java 2 reads every tag and the latest snapshot."""
    ours = sql_made_table(spark, warehouse)
    ids = ["id", "amount", "dt"]
    tags, first, second, latest, snapshots = java2.run(
        {"op": "tags", "table": "db.orders"},
        {"op": "read", "table": "db.orders", "options": {"scan.tag-name": "first"}},
        {"op": "read", "table": "db.orders", "options": {"scan.tag-name": "second"}},
        {"op": "read", "table": "db.orders"},
        {"op": "snapshots", "table": "db.orders"},
    )
    assert tags == {"tags": {"first": 1, "second": 2}}
    assert json_rows(first["rows"], ids) == SQL_MADE_READS["first"]
    assert json_rows(second["rows"], ids) == SQL_MADE_READS["second"]
    assert json_rows(latest["rows"], ids) == SQL_MADE_READS[None] == ours
    assert [s["id"] for s in snapshots["snapshots"]] == [3]

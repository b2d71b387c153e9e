"""DELETE FROM on primary-key tables whose merge engine cannot delete by retraction
(aggregation, first-row, partial-update without remove-record options): Paimon-Spark's
``performNonPrimaryKeyDelete``, by deletion vectors or by rewriting the touched files.

Each case checks the rows left against the merged rows the engine gives (rows whose
condition is NULL stay), the snapshots Paimon commits, Java reading the same rows, and the
refusals Paimon makes on buckets it would have to merge (nothing changed then)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import pytest

from paimon_core.operations.commit import FileStoreCommit
from sql_ext.datapath.write import STAGING_PREFIX, WriteJob
from sql_ext.errors import SqlError
from sql_ext.session import PaimonSession
from tests.unit.sql_ext.test_dml import data_files, rows, snapshots
from tests.unit.sql_ext.test_dml_failures import FailingFileIO

ONLY_COMPACTED = "Only compacted table can generate touched files, please use 'COMPACT'"

Row = tuple[int, int | None, str]

FIRST: list[Row] = [
    (1, 10, "a"),
    (2, 20, "a"),
    (3, None, "a"),
    (4, 40, "b"),
    (5, 5, "b"),
    (7, None, "b"),
]
SECOND: list[Row] = [(1, 1, "a"), (6, 60, "a"), (3, 7, "a")]


def _sum(old: int | None, new: int | None) -> int | None:
    return new if old is None else old if new is None else old + new


MERGES: dict[str, Callable[[int | None, int | None], int | None]] = {
    "aggregation": _sum,
    "first-row": lambda old, new: old,
    "partial-update": lambda old, new: old if new is None else new,
}
"""How each engine merges a later value of ``v`` into the current one."""

TABLES = {
    "aggregation": "'merge-engine' = 'aggregation', 'fields.v.aggregate-function' = 'sum'",
    "first-row": "'merge-engine' = 'first-row'",
    "partial-update": "'merge-engine' = 'partial-update'",
    "aggregation-dv": "'merge-engine' = 'aggregation', 'fields.v.aggregate-function' = 'sum', "
    "'deletion-vectors.enabled' = 'true'",
    "partial-update-dv": "'merge-engine' = 'partial-update', 'deletion-vectors.enabled' = 'true'",
}


def merged(engine: str, *batches: list[Row]) -> dict[tuple[int, str], int | None]:
    out: dict[tuple[int, str], int | None] = {}
    merge = MERGES[engine]
    for batch in batches:
        for k, v, dt in batch:
            key = (k, dt)
            out[key] = merge(out[key], v) if key in out else v
    return out


def kept(state: dict[tuple[int, str], int | None], keep: Callable[[Row], bool]) -> list[Row]:
    return sorted(((k, v, dt) for (k, dt), v in state.items() if keep((k, v, dt))), key=repr)


@pytest.fixture
def session(spark: Any, warehouse: str) -> Iterator[PaimonSession]:
    session = PaimonSession(spark, warehouse=warehouse)
    session.sql("CREATE DATABASE db")
    yield session
    session.stop()


def create(session: PaimonSession, properties: str, name: str = "t") -> None:
    session.sql(
        f"CREATE TABLE db.{name} (k INT NOT NULL, v INT, dt STRING, "
        "PRIMARY KEY (k, dt) NOT ENFORCED) PARTITIONED BY (dt) "
        f"TBLPROPERTIES ('bucket' = '2', {properties})"
    )


def insert(session: PaimonSession, batch: list[Row], name: str = "t") -> None:
    values = ", ".join(f"({k}, {'NULL' if v is None else v}, '{dt}')" for k, v, dt in batch)
    session.sql(f"INSERT INTO db.{name} VALUES {values}")


def java_rows(oracle: Any, warehouse: str, name: str = "db.t") -> list[Row]:
    return sorted(((r["k"], r["v"], r["dt"]) for r in oracle("read", warehouse, name)), key=repr)


def kinds_since(session: PaimonSession, start: int) -> list[str]:
    return [kind for sid, kind in snapshots(session) if sid > start]


@pytest.mark.parametrize("case", sorted(TABLES))
def test_delete_by_files_before_and_after_compaction(
    session: PaimonSession, warehouse: str, oracle: Any, case: str
) -> None:
    engine = case.removesuffix("-dv")
    vectors = case.endswith("-dv")
    create(session, TABLES[case])
    insert(session, FIRST)
    insert(session, SECOND)  # partition a: two writes into its buckets, b: one
    state = merged(engine, FIRST, SECOND)
    assert rows(session, "SELECT * FROM db.t") == kept(state, lambda r: True)

    # A partition predicate keeps the candidates to partition b, whose buckets hold one file.
    last = len(snapshots(session))
    files = data_files(warehouse)
    session.sql("DELETE FROM db.t WHERE dt = 'b' AND v > 15")
    state.pop((4, "b"))
    assert rows(session, "SELECT * FROM db.t") == kept(state, lambda r: True)
    # The rewrite of a first-row table is compacted on its own: a second, COMPACT snapshot.
    expected = ["OVERWRITE", "COMPACT"] if engine == "first-row" else ["OVERWRITE"]
    assert kinds_since(session, last) == expected
    if vectors:
        assert data_files(warehouse) == files  # rows deleted by vector, no file rewritten
    assert java_rows(oracle, warehouse) == kept(state, lambda r: True)

    # Partition a's buckets were written twice: Paimon rewrites them only once compacted, or
    # with deletion vectors, or on first-row tables (their writes compact up to one level).
    last = len(snapshots(session))
    statement = "DELETE FROM db.t WHERE v > 15"
    if not vectors and engine != "first-row":
        files = data_files(warehouse)
        with pytest.raises(SqlError, match=f"DELETE FROM paimon.db.t: {ONLY_COMPACTED}"):
            session.sql(statement)
        assert len(snapshots(session)) == last and data_files(warehouse) == files
        session.sql("CALL sys.compact(table => 'db.t')")
        last = len(snapshots(session))
    session.sql(statement)
    left = kept(state, lambda r: r[1] is None or r[1] <= 15)  # a NULL v stays
    assert rows(session, "SELECT * FROM db.t") == left
    assert (7, None, "b") in left
    assert kinds_since(session, last) == expected
    assert java_rows(oracle, warehouse) == left
    assert rows(session, f"SELECT * FROM db.t VERSION AS OF {last}") == kept(state, lambda r: True)

    session.sql("DELETE FROM db.t WHERE v > 15")  # nothing matches any more: no snapshot
    assert kinds_since(session, last) == expected
    # The table goes on merging as before: a key deleted is a new key again.
    insert(session, [(2, 2, "a"), (1, 3, "a")])
    after = {(k, dt): v for k, v, dt in left}
    after[(2, "a")] = 2
    after[(1, "a")] = MERGES[engine](after[(1, "a")], 3)
    assert rows(session, "SELECT * FROM db.t") == kept(after, lambda r: True)
    assert java_rows(oracle, warehouse) == kept(after, lambda r: True)


def test_first_row_rewrite_keeps_the_first_rows(
    session: PaimonSession, warehouse: str, oracle: Any
) -> None:
    """The kept rows are written again with sequence numbers from 0, compacted among
    themselves (``ignorePreviousFiles``): later inserts of their keys still lose."""
    create(session, TABLES["first-row"])
    insert(session, FIRST)
    session.sql("DELETE FROM db.t WHERE k = 2")
    table = session.catalog.get_table("db.t")
    snapshot = table.latest_snapshot()
    assert snapshot is not None
    entries = table.new_scan().read_entries(snapshot)
    assert all(e.file.level > 0 for e in entries)  # a batch read of first-row sees them
    insert(session, [(1, 100, "a"), (2, 200, "a"), (3, 300, "a")])
    later = [(1, 100, "a"), (2, 200, "a"), (3, 300, "a")]
    state = merged("first-row", [r for r in FIRST if r[0] != 2], later)
    assert rows(session, "SELECT * FROM db.t") == kept(state, lambda r: True)
    assert java_rows(oracle, warehouse) == kept(state, lambda r: True)


def test_pruned_buckets_follow_paimon_and_newer_rows_are_never_outranked(
    session: PaimonSession, warehouse: str, oracle: Any
) -> None:
    """Not compacted, a bucket of two level-0 files: Paimon rewrites a file when the key
    stats leave it the only candidate, as here when the other file is older; a newer file
    of the same keys pruned would let the rewritten older row win, so that is refused."""
    props = "'merge-engine' = 'partial-update', 'bucket' = '1'"
    session.sql(
        "CREATE TABLE db.t (k INT NOT NULL, a STRING, b STRING, PRIMARY KEY (k) NOT ENFORCED) "
        f"TBLPROPERTIES ({props})"
    )
    session.sql("INSERT INTO db.t VALUES (1, 'a1', NULL), (2, 'a2', 'b2'), (3, 'a3', NULL)")
    session.sql("INSERT INTO db.t VALUES (1, NULL, 'b1'), (5, 'a5', 'b5')")
    session.sql("DELETE FROM db.t WHERE k = 5")  # only the newer file's key range has 5
    expected = [(1, "a1", "b1"), (2, "a2", "b2"), (3, "a3", None)]
    assert rows(session, "SELECT * FROM db.t") == expected
    assert sorted((r["k"], r["a"], r["b"]) for r in oracle("read", warehouse, "db.t")) == expected

    session.sql(
        "CREATE TABLE db.u (k INT NOT NULL, a STRING, b STRING, PRIMARY KEY (k) NOT ENFORCED) "
        f"TBLPROPERTIES ({props})"
    )
    session.sql("INSERT INTO db.u VALUES (1, 'a1', NULL), (5, 'a5', 'b5')")
    session.sql("INSERT INTO db.u VALUES (1, 'A1', 'b1'), (2, 'a2', 'b2')")
    files = data_files(warehouse, "u")
    for statement in ("DELETE FROM db.u WHERE k >= 4", "DELETE FROM db.u WHERE a = 'a5'"):
        with pytest.raises(SqlError, match=ONLY_COMPACTED):
            session.sql(statement)
    # A bad WHERE is Spark's error first, as Spark analyses before Paimon-Spark runs.
    with pytest.raises(SqlError, match=r"DELETE FROM paimon.db.u: invalid WHERE: .*nope"):
        session.sql("DELETE FROM db.u WHERE nope = 1")
    assert data_files(warehouse, "u") == files
    assert len(snapshots(session, "db.u")) == 2
    assert rows(session, "SELECT * FROM db.u") == [
        (1, "A1", "b1"),
        (2, "a2", "b2"),
        (5, "a5", "b5"),
    ]


@pytest.mark.parametrize("case", ["aggregation", "first-row"])
def test_failed_writer_task_changes_nothing(
    session: PaimonSession, warehouse: str, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    create(session, TABLES[case])
    insert(session, FIRST)
    before = (snapshots(session), rows(session, "SELECT * FROM db.t"), data_files(warehouse))
    start = WriteJob.start.__func__  # type: ignore[attr-defined]

    def failing(cls: type[WriteJob], table: Any, overwrite: bool, fresh: bool = False) -> Any:
        job = start(cls, table, overwrite, fresh)
        return replace(job, table=replace(job.table, file_io=FailingFileIO("dt=a")))

    monkeypatch.setattr(WriteJob, "start", classmethod(failing))
    with pytest.raises(SqlError, match=r"^DELETE FROM paimon.db.t: .*injected failure"):
        session.sql("DELETE FROM db.t WHERE v = 10 OR v = 40")
    monkeypatch.undo()
    after = (snapshots(session), rows(session, "SELECT * FROM db.t"), data_files(warehouse))
    assert after == before
    root = os.path.join(warehouse, "db.db", "t")
    assert not [n for n in os.listdir(root) if n.startswith(STAGING_PREFIX)]


@pytest.mark.parametrize("case", ["partial-update", "aggregation-dv"])
def test_failed_commit_changes_nothing(
    session: PaimonSession, warehouse: str, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    create(session, TABLES[case])
    insert(session, FIRST)
    root = os.path.join(warehouse, "db.db", "t")

    def index_files() -> set[str]:
        path = os.path.join(root, "index")
        return set(os.listdir(path)) if os.path.isdir(path) else set()

    before = (snapshots(session), rows(session, "SELECT * FROM db.t"), data_files(warehouse))
    indexes = index_files()

    def fail(*_args: Any, **_kwargs: Any) -> None:
        raise RuntimeError("injected commit failure")

    monkeypatch.setattr(FileStoreCommit, "_commit_with_retry", fail)
    with pytest.raises(RuntimeError, match="injected commit failure"):
        session.sql("DELETE FROM db.t WHERE v = 10 OR v = 40")
    monkeypatch.undo()
    after = (snapshots(session), rows(session, "SELECT * FROM db.t"), data_files(warehouse))
    assert after == before
    assert index_files() == indexes  # no deletion-vector index file left behind
    session.sql("DELETE FROM db.t WHERE v = 10 OR v = 40")
    assert len(rows(session, "SELECT * FROM db.t")) == len(FIRST) - 2


def test_delete_through_paimon_sql(session: PaimonSession, warehouse: str, oracle: Any) -> None:
    from tests.unit.sql_ext.test_shell import run

    create(session, TABLES["aggregation"])
    insert(session, FIRST)
    script = "DELETE FROM db.t WHERE v >= 20; SELECT k, v FROM db.t ORDER BY k"
    code, out, err = run("--output", "tsv", "-e", script, session=session)
    assert (code, err) == (0, "")
    assert out == "k\tv\n1\t10\n3\tNULL\n5\t5\n7\tNULL\n"
    assert java_rows(oracle, warehouse) == [
        (1, 10, "a"),
        (3, None, "a"),
        (5, 5, "b"),
        (7, None, "b"),
    ]

"""UPDATE, DELETE and MERGE INTO failing in the middle, on a primary-key and an append table:
in a writer task (a data file half written, other tasks' files already complete) or in the
core commit. Nothing changes: the same snapshot, the same rows, no new data file on disk."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pyarrow as pa
import pytest

from paimon_core.io.fileio import LocalFileIO
from paimon_core.operations.commit import FileStoreCommit
from sql_ext.datapath.write import STAGING_PREFIX, WriteJob
from sql_ext.errors import SqlError
from sql_ext.session import PaimonSession
from tests.unit.sql_ext.test_dml import data_files, rows


class FailingFileIO(LocalFileIO):
    """Local disk where creating a data file whose path holds ``marker`` fails after part of
    it is written. Pickled with the table to the writer tasks (this module is importable
    there), so only the tasks writing those files fail."""

    def __init__(self, marker: str) -> None:
        super().__init__()
        self.marker = marker

    def open_output(self, path: str) -> pa.NativeFile:
        if "/data-" not in path or self.marker not in path:
            return super().open_output(path)
        with super().open_output(path) as out:
            out.write(b"PAR1\x00\x00")
        raise OSError(f"injected failure writing {os.path.basename(path)}")


@pytest.fixture
def session(spark: Any, warehouse: str) -> Iterator[PaimonSession]:
    """db.k: primary key (k, dt), two buckets; db.a: append, partitioned by dt. Two commits
    each, files of several rows in both buckets and both partitions."""
    session = PaimonSession(spark, warehouse=warehouse)
    session.sql("CREATE DATABASE db")
    session.sql(
        "CREATE TABLE db.k (k INT, v STRING, dt STRING, PRIMARY KEY (k, dt) NOT ENFORCED) "
        "TBLPROPERTIES ('bucket' = '2')"
    )
    session.sql("CREATE TABLE db.a (k INT, v STRING, dt STRING) PARTITIONED BY (dt)")
    schema = pa.schema([("k", pa.int32()), ("v", pa.string()), ("dt", pa.string())])
    for name in ("k", "a"):
        table = session.catalog.get_table(f"db.{name}")
        for ks in ([1, 2, 3, 4, 5, 6], [7, 8, 9, 10]):  # a file per partition and bucket
            dt = ["x" if k in (1, 2, 3, 7, 8) else "y" for k in ks]
            table.write_arrow(pa.table({"k": ks, "v": [chr(96 + k) for k in ks], "dt": dt}, schema))
    yield session
    session.stop()


STATEMENTS = [
    "UPDATE db.{t} SET v = upper(v) WHERE k > 1",
    "DELETE FROM db.{t} WHERE k % 3 = 0",
    "MERGE INTO db.{t} USING (SELECT k, 'm' AS v, dt FROM db.{t} WHERE k <= 4 "
    "UNION ALL SELECT 9, 'n', 'y') s ON {t}.k = s.k AND {t}.dt = s.dt "
    "WHEN MATCHED AND s.k = 1 THEN DELETE WHEN MATCHED THEN UPDATE SET * "
    "WHEN NOT MATCHED THEN INSERT *",
]
"""Each changes rows of both partitions (append) and both buckets (primary key)."""
TABLES = {"k": "bucket-1", "a": "dt=y"}
"""Table -> the files whose writer task fails (the others' tasks succeed)."""


def _state(session: PaimonSession, warehouse: str, name: str) -> tuple[Any, ...]:
    latest = session.catalog.get_table(f"db.{name}").latest_snapshot()
    root = os.path.join(warehouse, "db.db", name)
    staged = [n for n in os.listdir(root) if n.startswith(STAGING_PREFIX)]
    return (
        latest.snapshot_id if latest else None,
        rows(session, f"SELECT * FROM db.{name}"),
        data_files(warehouse, name),
        staged,
    )


@pytest.mark.parametrize("name", sorted(TABLES))
@pytest.mark.parametrize("statement", STATEMENTS, ids=["update", "delete", "merge"])
def test_failed_writer_task_changes_nothing(
    session: PaimonSession,
    warehouse: str,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    statement: str,
) -> None:
    before = _state(session, warehouse, name)
    start = WriteJob.start.__func__  # type: ignore[attr-defined]

    def failing(cls: type[WriteJob], table: Any, overwrite: bool, fresh: bool = False) -> Any:
        job = start(cls, table, overwrite, fresh)
        return replace(job, table=replace(job.table, file_io=FailingFileIO(TABLES[name])))

    monkeypatch.setattr(WriteJob, "start", classmethod(failing))
    text = statement.format(t=name)
    with pytest.raises(SqlError) as err:
        session.sql(text)
    message = str(err.value)
    assert message.startswith(text.split(" db.")[0] + " paimon.db.")  # names the statement
    assert "injected failure writing data-" in message and "\n" not in message
    monkeypatch.undo()
    assert _state(session, warehouse, name) == before
    session.sql(text)  # the statement itself is fine: it now changes the table
    assert _state(session, warehouse, name)[0] > before[0]


@pytest.mark.parametrize("name", sorted(TABLES))
@pytest.mark.parametrize("statement", STATEMENTS, ids=["update", "delete", "merge"])
def test_failed_commit_changes_nothing(
    session: PaimonSession,
    warehouse: str,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    statement: str,
) -> None:
    before = _state(session, warehouse, name)

    def fail(*_args: Any, **_kwargs: Any) -> None:
        raise RuntimeError("injected commit failure")

    monkeypatch.setattr(FileStoreCommit, "_commit_with_retry", fail)
    with pytest.raises(RuntimeError, match="injected commit failure"):
        session.sql(statement.format(t=name))
    monkeypatch.undo()
    assert _state(session, warehouse, name) == before

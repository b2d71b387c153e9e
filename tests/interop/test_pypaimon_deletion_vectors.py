"""pypaimon 2.1 reads the deletion vectors we write (bucket-unaware and bucketed append
tables, 32-bit bitmaps), snapshot by snapshot."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from tests.interop.helpers import pypaimon_read
from tests.unit.paimon_core.operations.test_deletion_vectors import delete_keys

SCHEMA = pa.schema([("k", pa.int64()), ("name", pa.string())])


@pytest.mark.parametrize(
    "options", [{}, {"bucket": "2", "bucket-key": "k"}], ids=["unaware", "bucketed"]
)
def test_pypaimon_reads_our_deletion_vectors(tmp_path: Path, options: dict[str, str]) -> None:
    catalog = FileSystemCatalog(str(tmp_path))
    catalog.create_database("db")
    table = catalog.create_table(
        "db.t", SCHEMA, options={"deletion-vectors.enabled": "true", **options}
    )
    for ids in ([1, 2, 3], [4, 5, 6]):
        table.write_arrow(pa.table({"k": ids, "name": [f"n{i}" for i in ids]}, schema=SCHEMA))
    delete_keys(table, {1, 5})
    delete_keys(table, {2})
    for sid, left in ((2, [1, 2, 3, 4, 5, 6]), (3, [2, 3, 4, 6]), (4, [3, 4, 6])):
        got = pypaimon_read(str(tmp_path), "db.t", {"scan.snapshot-id": str(sid)})
        assert sorted(got.column("k").to_pylist()) == left, sid

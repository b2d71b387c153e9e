"""BLOB columns of tables pypaimon 2.1 writes (issue 20, point 4: reads): values from
``.blob`` files rolled at ``blob.target-file-size``, over several commits and after an update
by row id that writes placeholders, read through the core and SQL as pypaimon reads them;
``blob-as-descriptor`` reads the descriptors pypaimon reads. Writes stay refused."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import PaimonError, UnsupportedFeature
from paimon_core.format.blob_file import (
    BlobDescriptor,
    is_blob_file,
    read_blob_file,
    write_blob_file,
)
from tests.interop.helpers import pypaimon_read, pypaimon_write, rows
from tests.unit.paimon_core.helpers import file_state

SCHEMA = pa.schema([("id", pa.int64()), ("s", pa.string()), ("b", pa.large_binary())])
OPTIONS = {
    "row-tracking.enabled": "true",
    "data-evolution.enabled": "true",
    "blob-field": "b",
    "blob.target-file-size": "40b",
}
FIRST = pa.table(
    {"id": [1, 2, 3, 4, 5], "s": list("abcde"), "b": [b"x" * 30, None, b"yy" * 20, b"", b"z"]},
    schema=SCHEMA,
)
SECOND = pa.table({"id": [6, 7], "s": ["f", "g"], "b": [b"\x00\xff", None]}, schema=SCHEMA)


def _table(warehouse: str) -> None:
    """``db.t``: two pypaimon commits, the first's BLOB column in three ``.blob`` files."""
    pypaimon_write(warehouse, "db.t", FIRST, create={"options": OPTIONS})
    pypaimon_write(warehouse, "db.t", SECOND)


def _update_blobs(warehouse: str, row_ids: list[int], values: list[bytes]) -> None:
    """pypaimon's update by row id of column ``b``: a newer ``.blob`` file over the range,
    placeholders where rows keep their value."""
    from pypaimon import CatalogFactory

    table = CatalogFactory.create({"warehouse": warehouse}).get_table("db.t")
    builder = table.new_batch_write_builder()
    update = builder.new_update().with_update_type(["b"])
    messages = update.update_by_arrow_with_row_id(
        pa.table(
            {"_ROW_ID": pa.array(row_ids, pa.int64()), "b": pa.array(values, pa.large_binary())}
        )
    )
    commit = builder.new_commit()
    commit.commit(messages)
    commit.close()


def test_reads_blob_values_as_pypaimon(warehouse: str) -> None:
    _table(warehouse)
    table = FileSystemCatalog(warehouse).get_table("db.t")
    blob_files = [e.file for e in table.new_scan().read_entries(table.latest_snapshot())]
    assert sum(is_blob_file(f.file_name) for f in blob_files) >= 3  # rolled
    got = table.to_arrow()
    assert got.schema.field("b").type == pa.large_binary()
    assert (
        rows(got)
        == rows(pypaimon_read(warehouse, "db.t"))
        == rows(pa.concat_tables([FIRST, SECOND]))
    )
    read = table.new_read()
    splits = table.new_scan().plan()
    assert rows(read.to_arrow(splits, ["b"])) == rows(pa.concat_tables([FIRST, SECOND]), ["b"])
    assert rows(read.to_arrow(splits, ["id"])) == [(i,) for i in range(1, 8)]
    tracked = read.to_arrow(splits, ["_ROW_ID", "b"])
    assert rows(tracked) == sorted(
        zip(range(7), [*FIRST.column("b").to_pylist(), *SECOND.column("b").to_pylist()]),
        key=lambda r: r[0],
    )


def test_blob_as_descriptor_reads_pypaimons_descriptors(warehouse: str) -> None:
    _table(warehouse)
    table = FileSystemCatalog(warehouse).get_table("db.t").copy({"blob-as-descriptor": "true"})
    got = table.to_arrow()
    assert rows(got) == rows(pypaimon_read(warehouse, "db.t", {"blob-as-descriptor": "true"}))
    values = dict(zip(FIRST.column("id").to_pylist(), FIRST.column("b").to_pylist()))
    for ident, raw in zip(got.column("id").to_pylist(), got.column("b").to_pylist()):
        if ident not in values:
            continue
        if values[ident] is None:
            assert raw is None
            continue
        d = BlobDescriptor.deserialize(raw)
        with open(d.uri, "rb") as f:
            f.seek(d.offset)
            assert f.read(d.length) == values[ident]


def test_reads_blobs_updated_by_row_id_with_placeholders_as_pypaimon(warehouse: str) -> None:
    """The newer file's values where it has one, the older files' under its placeholders;
    a file older by ``_MAX_SEQUENCE_NUMBER`` loses where they overlap, as in Java's
    ``BlobFallbackRecordReader`` (pypaimon gives a rolled file the sequence of its last row)."""
    _table(warehouse)
    _update_blobs(warehouse, [1, 2, 5], [b"NEW1", b"NEW2", b"NEW5"])
    table = FileSystemCatalog(warehouse).get_table("db.t")
    expected = pypaimon_read(warehouse, "db.t")
    assert rows(table.to_arrow()) == rows(expected)
    by_id = dict(zip(expected.column("id").to_pylist(), expected.column("b").to_pylist()))
    assert by_id[2] == b"NEW1" and by_id[1] == b"x" * 30  # new value; a placeholder's old one


def test_writes_stay_refused_and_change_nothing(warehouse: str) -> None:
    _table(warehouse)
    table = FileSystemCatalog(warehouse).get_table("db.t")
    before = file_state(warehouse)
    for attempt in (lambda: table.write_arrow(SECOND), table.new_write, table.new_commit):
        with pytest.raises(UnsupportedFeature, match=r"Cannot write to table db\.t: BLOB fields"):
            attempt()
    assert file_state(warehouse) == before


@pytest.fixture
def session(spark: Any, warehouse: str) -> Iterator[Any]:
    from sql_ext.dynamic_options import paimon_confs
    from sql_ext.session import PaimonSession

    yield PaimonSession(spark, warehouse=warehouse)
    for key in paimon_confs(spark):
        spark.conf.unset(key)


def test_sql_reads_blob_as_binary(session: Any, spark: Any, warehouse: str) -> None:
    _table(warehouse)
    _update_blobs(warehouse, [1], [b"NEW1"])
    expected = pypaimon_read(warehouse, "db.t")
    got = session.sql("SELECT id, s, b FROM paimon.db.t").toArrow()
    assert rows(got) == rows(expected)
    filtered = session.sql("SELECT b FROM paimon.db.t WHERE id = 2").collect()
    assert [bytes(r[0]) for r in filtered] == [b"NEW1"]
    spark.conf.set("spark.paimon.blob-as-descriptor", "true")
    (raw,) = session.sql("SELECT b FROM paimon.db.t WHERE id = 2").collect()[0]
    d = BlobDescriptor.deserialize(bytes(raw))
    with open(d.uri, "rb") as f:
        f.seek(d.offset)
        assert f.read(d.length) == b"NEW1"
    spark.conf.unset("spark.paimon.blob-as-descriptor")
    with pytest.raises(PaimonError, match="BLOB fields"):
        session.sql("INSERT INTO paimon.db.t VALUES (9, 'i', X'7A')").collect()


def test_reads_java2_blob_files_and_java2_reads_pypaimons(java2: Any, warehouse: str) -> None:
    """Java 2.0.0 writes BLOB columns in ``.blob`` files (rolled at ``blob.target-file-size``)
    that we read as Java does; Java reads the pypaimon table we read."""
    options = {**OPTIONS, "blob.target-file-size": "16b"}
    java2.create_table("db.j", [("id", "BIGINT"), ("b", "BLOB")], options=options)
    values = {1: "alpha-alpha-alpha", 2: None, 3: "", 4: "ünïcode", 5: "e"}
    java2.write("db.j", [{"id": k, "b": v} for k, v in values.items()])
    java2.write("db.j", [{"id": 6, "b": "six"}])
    table = FileSystemCatalog(warehouse).get_table("db.j")
    blobs = [f for f in java2.files("db.j") if is_blob_file(f["file"])]
    assert len(blobs) >= 3  # rolled in the first commit, one more in the second
    expected = [(k, None if v is None else v.encode()) for k, v in {**values, 6: "six"}.items()]
    assert rows(table.to_arrow()) == expected
    for meta in blobs:  # our writer makes Java's bytes of the values we read from them
        with open(os.path.join(warehouse, "db.db", "j", "bucket-0", meta["file"]), "rb") as f:
            data = f.read()
        assert write_blob_file(read_blob_file(data, meta["file"]).to_pylist()) == data
    descriptors = table.copy({"blob-as-descriptor": "true"}).to_arrow().to_pydict()
    for ident, raw in zip(descriptors["id"], descriptors["b"]):
        if raw is not None:
            d = BlobDescriptor.deserialize(raw)
            with open(d.uri, "rb") as f:
                f.seek(d.offset)
                assert f.read(d.length) == dict(expected)[ident]
    _table(warehouse)
    got = {r["id"]: r["b"] for r in java2.read("db.t")}
    ours = FileSystemCatalog(warehouse).get_table("db.t").to_arrow().to_pydict()
    assert got == {
        i: None if b is None else b.decode("utf-8", "replace")
        for i, b in zip(ours["id"], ours["b"], strict=True)
    }


def test_incremental_delta_of_a_blob_update_reads_its_values_alone(warehouse: str) -> None:
    """A delta holding only pypaimon's ``.blob`` update file: its values at their rows, null
    at its placeholders (no older file in the delta) and in the columns it does not hold, as
    data-evolution deltas of some columns read; row ids of such a range are refused."""
    from paimon_core.operations.incremental import plan_incremental

    _table(warehouse)
    _update_blobs(warehouse, [1, 3], [b"NEW1", b"NEW3"])
    table = FileSystemCatalog(warehouse).get_table("db.t").copy({"incremental-between": "2,3"})
    splits = list(plan_incremental(table).splits)
    got = table.new_read().to_arrow(splits).to_pydict()
    assert got["b"][1] == b"NEW1" and got["b"][0] is None and set(got["id"]) == {None}
    with pytest.raises(UnsupportedFeature, match="only blob files"):
        table.new_read().to_arrow(splits, ["_ROW_ID", "b"])

"""Data-evolution reads and writes against a plain-Python model (issue 20 point 3).

pypaimon 2.1 and we write a data-evolution table by random steps, interleaved: whole rows
(new row-id ranges), updates of random columns of random rows (pypaimon's
``update_by_arrow_with_row_id``, our ``update_by_row_id``: files of some columns over
existing ranges), deletes by row id (deletion vectors, 32- or 64-bit, pypaimon's and ours),
and column additions; the model is a dict of row id -> row. After every step the core reads the
table (every column, and a random projection, and ``_ROW_ID``) exactly as the model says,
and at the end pypaimon reads it so too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paimon_core.catalog import FileSystemCatalog
from tests.interop.helpers import pypaimon_read

COLUMNS = ("a", "b", "c")
TYPES = {"id": pa.int64(), "a": pa.int32(), "b": pa.string(), "c": pa.float64()}


def _value(column: str, n: int) -> Any:
    return {"a": n, "b": f"s{n}", "c": n / 4}[column]


step = st.one_of(
    st.tuples(st.just("insert"), st.integers(1, 4)),
    st.tuples(
        st.just("update"),
        st.lists(st.sampled_from(COLUMNS), min_size=1, max_size=3, unique=True),
        st.lists(st.integers(0, 30), min_size=1, max_size=5, unique=True),
    ),
    st.tuples(st.just("delete"), st.lists(st.integers(0, 30), min_size=1, max_size=3)),
    st.tuples(st.just("add_column")),
    st.tuples(st.just("our_insert"), st.integers(1, 3)),
    st.tuples(
        st.just("our_update"),
        st.lists(st.sampled_from(COLUMNS), min_size=1, max_size=3, unique=True),
        st.lists(st.integers(0, 30), min_size=1, max_size=5, unique=True),
    ),
    st.tuples(st.just("our_delete"), st.lists(st.integers(0, 30), min_size=1, max_size=3)),
)


def _commit(builder: Any, messages: Any) -> None:
    commit = builder.new_commit()
    commit.commit(messages)
    commit.close()


class Model:
    """The table as pypaimon is told to change it: row id -> {column: value}."""

    def __init__(self, warehouse: str, dv: str | None) -> None:
        from pypaimon import CatalogFactory, Schema

        self.catalog = CatalogFactory.create({"warehouse": warehouse})
        self.catalog.create_database("db", True)
        options = {"row-tracking.enabled": "true", "data-evolution.enabled": "true"}
        if dv is not None:
            options["deletion-vectors.enabled"] = "true"
            options["deletion-vectors.bitmap64"] = str(dv == "bitmap64").lower()
        schema = pa.schema([(n, TYPES[n]) for n in ("id", *COLUMNS)])
        self.catalog.create_table(
            "db.t", Schema.from_pyarrow_schema(schema, options=options), False
        )
        self.dv = dv is not None
        self.warehouse = warehouse
        self.columns = ["id", *COLUMNS]
        self.rows: dict[int, dict[str, Any]] = {}
        self.next_id = 0
        self.counter = 0

    def table(self) -> Any:
        return self.catalog.get_table("db.t")

    def _n(self) -> int:
        self.counter += 1
        return self.counter

    def insert(self, count: int) -> None:
        rows = []
        for _ in range(count):
            n = self._n()
            row = {c: (n if c == "id" else _value(c[0], n)) for c in self.columns}
            rows.append(row)
        data = pa.Table.from_pylist(rows, schema=self._schema(self.columns))
        builder = self.table().new_batch_write_builder()
        write = builder.new_write()
        write.write_arrow(data)
        _commit(builder, write.prepare_commit())
        write.close()
        for row in rows:
            self.rows[self.next_id] = row
            self.next_id += 1

    def update(self, columns: list[str], ids: list[int]) -> None:
        live = sorted(i for i in ids if i in self.rows)
        if not live:
            return
        columns = [c for c in self.columns if c in columns or (c[0] in columns and c != "id")]
        values: dict[str, list[Any]] = {"_ROW_ID": live}
        for c in columns:
            values[c] = [_value(c[0], self._n()) for _ in live]
        schema = pa.schema([("_ROW_ID", pa.int64()), *((c, TYPES[c[0]]) for c in columns)])
        builder = self.table().new_batch_write_builder()
        update = builder.new_update().with_update_type(columns)
        _commit(builder, update.update_by_arrow_with_row_id(pa.table(values, schema=schema)))
        for k, i in enumerate(live):
            for c in columns:
                self.rows[i][c] = values[c][k]

    def delete(self, ids: list[int]) -> None:
        live = sorted({i for i in ids if i in self.rows})
        if not self.dv or not live:
            return
        builder = self.table().new_batch_write_builder()
        _commit(builder, builder.new_update().delete_by_row_id(live))
        for i in live:
            del self.rows[i]

    def our_insert(self, count: int) -> None:
        """Whole rows written by us (the commit gives them the next row ids)."""
        rows = []
        for _ in range(count):
            n = self._n()
            rows.append({c: (n if c == "id" else _value(c[0], n)) for c in self.columns})
        ours = FileSystemCatalog(self.warehouse).get_table("db.t")
        ours.write_arrow(pa.Table.from_pylist(rows, schema=self._schema(self.columns)))
        for row in rows:
            self.rows[self.next_id] = row
            self.next_id += 1

    def our_update(self, columns: list[str], ids: list[int]) -> None:
        """Columns of rows set by us (``data_evolution_write.update_by_row_id``)."""
        from paimon_core.operations.data_evolution_write import update_by_row_id

        live = sorted(i for i in ids if i in self.rows)
        if not live:
            return
        columns = [c for c in self.columns if c != "id" and c[0] in columns]
        values: dict[str, list[Any]] = {"_ROW_ID": live}
        for c in columns:
            values[c] = [_value(c[0], self._n()) for _ in live]
        schema = pa.schema([("_ROW_ID", pa.int64()), *((c, TYPES[c[0]]) for c in columns)])
        ours = FileSystemCatalog(self.warehouse).get_table("db.t")
        ours.new_commit().commit(update_by_row_id(ours, pa.table(values, schema=schema)))
        for k, i in enumerate(live):
            for c in columns:
                self.rows[i][c] = values[c][k]

    def our_delete(self, ids: list[int]) -> None:
        """Rows deleted by us: positions in their range, in its anchor file's vector."""
        from paimon_core.operations.data_evolution import anchor_file, row_id_groups, row_id_range
        from paimon_core.operations.deletion_vectors import delete_positions

        live = sorted({i for i in ids if i in self.rows})
        if not self.dv or not live:
            return
        ours = FileSystemCatalog(self.warehouse).get_table("db.t")
        deletions: dict[tuple[bytes, int], dict[str, list[int]]] = {}
        for split in ours.new_scan().plan():
            for group in row_id_groups(split.files):
                first, last = row_id_range(group[0])
                mine = [i - first for i in live if first <= i <= last]
                if mine:
                    bucket = deletions.setdefault((split.partition, split.bucket), {})
                    bucket[anchor_file(group).file_name] = mine
        delete_positions(ours, deletions)
        for i in live:
            del self.rows[i]

    def add_column(self) -> None:
        from pypaimon.schema.data_types import AtomicType
        from pypaimon.schema.schema_change import SchemaChange

        name = f"{'abc'[len(self.columns) % 3]}{len(self.columns)}"
        change = SchemaChange.add_column(name, AtomicType(_SQL[name[0]]))
        self.catalog.alter_table("db.t", [change], False)
        self.columns.append(name)
        for row in self.rows.values():
            row[name] = None

    def _schema(self, columns: list[str]) -> pa.Schema:
        return pa.schema([(c, TYPES[c] if c == "id" else TYPES[c[0]]) for c in columns])

    def expected(self, columns: list[str]) -> list[tuple[Any, ...]]:
        return sorted((tuple(row.get(c) for c in columns) for row in self.rows.values()), key=repr)


_SQL = {"a": "INT", "b": "STRING", "c": "DOUBLE"}


def _read(warehouse: str, columns: list[str] | None) -> list[tuple[Any, ...]]:
    table = FileSystemCatalog(warehouse).get_table("db.t")
    read = table.new_read()
    data = read.to_arrow(table.new_scan().plan(), columns)
    return sorted((tuple(r.values()) for r in data.to_pylist()), key=repr)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    dv=st.sampled_from([None, "bitmap32", "bitmap64"]),
    steps=st.lists(step, min_size=1, max_size=7),
    projection=st.lists(st.sampled_from(["id", *COLUMNS]), min_size=1, max_size=3, unique=True),
)
def test_reads_match_the_model(
    tmp_path_factory: Any, dv: str | None, steps: list[tuple[Any, ...]], projection: list[str]
) -> None:
    warehouse = str(tmp_path_factory.mktemp("de"))
    model = Model(warehouse, dv)
    model.insert(3)
    for op, *args in steps:
        getattr(model, op)(*args)
        assert _read(warehouse, None) == model.expected(model.columns), (op, args)
    assert _read(warehouse, projection) == model.expected(projection)
    if dv == "bitmap64":
        return  # pypaimon 2.1 reads 32-bit vectors only (its DeletionVector.read)
    got = pypaimon_read(warehouse, "db.t")
    assert sorted((tuple(r.values()) for r in got.to_pylist()), key=repr) == model.expected(
        model.columns
    )
    ids = sorted(((i, row["id"]) for i, row in model.rows.items()), key=repr)
    assert _read(warehouse, ["_ROW_ID", "id"]) == ids


def test_model_steps_write_files_of_some_columns(tmp_path: Path) -> None:
    """The model's updates are files of the updated columns over shared row-id ranges, and
    its deletes deletion vectors keyed by the range's oldest file: what the reads prove."""
    model = Model(str(tmp_path), "bitmap32")
    model.insert(3)
    model.insert(2)
    model.update(["b"], [0, 4])
    model.delete([1])
    table = FileSystemCatalog(str(tmp_path)).get_table("db.t")
    files = [e.file for e in table.new_scan().read_entries(table.latest_snapshot())]
    assert sorted((f.first_row_id, f.row_count, f.write_cols or ()) for f in files) == [
        (0, 3, ()),
        (0, 3, ("b",)),
        (3, 2, ()),
        (3, 2, ("b",)),
    ]
    (split,) = table.new_scan().plan()
    oldest = next(f for f in files if f.first_row_id == 0 and f.write_cols is None)
    assert [d.data_file_name for d in split.deletion_files] == [oldest.file_name]
    assert _read(str(tmp_path), None) == model.expected(model.columns)

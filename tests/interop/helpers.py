"""Row comparison helpers shared by the interoperability tests."""

from __future__ import annotations

from typing import Any

import pyarrow as pa


def rows(table: pa.Table, columns: list[str] | None = None) -> list[tuple[Any, ...]]:
    """Rows of an Arrow table as sorted tuples (order-free comparison, nulls sort first)."""
    names = columns or table.column_names
    data = table.select(names).to_pylist()
    out = [tuple(r[n] for n in names) for r in data]
    return sorted(out, key=lambda r: tuple((v is not None, v) for v in r))


def json_rows(objs: list[dict[str, Any]], columns: list[str]) -> list[tuple[Any, ...]]:
    out = [tuple(o.get(c) for c in columns) for o in objs]
    return sorted(out, key=lambda r: tuple((v is not None, v) for v in r))


def pypaimon_read(
    warehouse: str, identifier: str, options: dict[str, str] | None = None
) -> pa.Table:
    from pypaimon import CatalogFactory

    table = CatalogFactory.create({"warehouse": warehouse}).get_table(identifier)
    if options:
        table = table.copy(options)
    builder = table.new_read_builder()
    return builder.new_read().to_arrow(builder.new_scan().plan().splits())


def pypaimon_write(
    warehouse: str,
    identifier: str,
    data: pa.Table,
    *,
    create: dict[str, Any] | None = None,
    overwrite: dict[str, str] | None = None,
) -> None:
    """Write ``data`` with pypaimon 2.1, creating the table first when ``create`` is given."""
    from pypaimon import CatalogFactory, Schema

    catalog = CatalogFactory.create({"warehouse": warehouse})
    if create is not None:
        catalog.create_database(identifier.split(".")[0], True)
        schema = Schema.from_pyarrow_schema(
            data.schema,
            partition_keys=create.get("partition_keys"),
            primary_keys=create.get("primary_keys"),
            options=create.get("options"),
        )
        catalog.create_table(identifier, schema, False)
    pypaimon_commit(catalog.get_table(identifier), data, overwrite=overwrite)


def pypaimon_commit(table: Any, data: pa.Table, *, overwrite: dict[str, str] | None = None) -> None:
    """One batch write + commit of ``data`` to a pypaimon table object."""
    builder = table.new_batch_write_builder()
    if overwrite is not None:
        builder = builder.overwrite(overwrite)
    write = builder.new_write()
    write.write_arrow(data)
    commit = builder.new_commit()
    commit.commit(write.prepare_commit())
    write.close()
    commit.close()


EVOLVED_FIRST = pa.schema([pa.field("k", pa.int64(), False), ("a", pa.string()), ("b", pa.int32())])
EVOLVED_LATEST = pa.schema(
    [pa.field("k", pa.int64(), False), ("a2", pa.string()), ("c", pa.string())]
)


def pypaimon_evolved_table(warehouse: str, identifier: str) -> None:
    """With pypaimon: snapshot 1 `{k:1, a:'a1', b:10}`; then column c added, a renamed to a2,
    b dropped (schema 3); snapshot 2 `{k:2, a2:'x', c:'c2'}` under the new schema."""
    from pypaimon import CatalogFactory
    from pypaimon.schema.data_types import AtomicType
    from pypaimon.schema.schema_change import SchemaChange

    first = pa.table({"k": [1], "a": ["a1"], "b": [10]}, schema=EVOLVED_FIRST)
    pypaimon_write(warehouse, identifier, first, create={})
    catalog = CatalogFactory.create({"warehouse": warehouse})
    for change in (
        SchemaChange.add_column("c", AtomicType("STRING")),
        SchemaChange.rename_column("a", "a2"),
        SchemaChange.drop_column("b"),
    ):
        catalog.alter_table(identifier, [change], False)
    latest = pa.table({"k": [2], "a2": ["x"], "c": ["c2"]}, schema=EVOLVED_LATEST)
    pypaimon_write(warehouse, identifier, latest)

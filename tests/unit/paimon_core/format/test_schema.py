"""Table schemas: Java's exact JSON, the read rules for old versions, creation and validation,
and the SchemaManager's publish, listing, cache and evolution."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pytest

from paimon_core.exceptions import SchemaError, TableNotExist
from paimon_core.format.schema import (
    AddColumn,
    DropColumn,
    RemoveOption,
    RenameColumn,
    SchemaManager,
    SetOption,
    TableSchema,
    UpdateColumnComment,
    UpdateColumnNullability,
    UpdateColumnPosition,
    UpdateColumnType,
    UpdateComment,
    apply_changes,
    check_dynamic_option,
    new_table_schema,
    schema_from_arrow,
    schema_from_json,
    schema_to_json,
)
from paimon_core.format.types import (
    ARRAY,
    BIGINT,
    BYTES,
    CHAR,
    DATE,
    DECIMAL,
    DOUBLE,
    INT,
    MAP,
    ROW,
    STRING,
    TIMESTAMP,
    TIMESTAMP_LTZ,
    TINYINT,
    DataField,
    DataType,
)
from paimon_core.io.fileio import LocalFileIO

# schema/schema-0 written by Java Paimon 0.9 (paimon-oracle create-table db.s --schema 'k INT,
# v STRING, d DECIMAL(10, 2), ts TIMESTAMP(3), tz TIMESTAMP_LTZ(6), b BYTES, c CHAR(3),
# p STRING' --primary-key k,p --partition p --option bucket=2 snapshot.num-retained.max=50)
JAVA_SCHEMA = """{
  "version" : 3,
  "id" : 0,
  "fields" : [ {
    "id" : 0,
    "name" : "k",
    "type" : "INT NOT NULL"
  }, {
    "id" : 1,
    "name" : "v",
    "type" : "STRING"
  }, {
    "id" : 2,
    "name" : "d",
    "type" : "DECIMAL(10, 2)"
  }, {
    "id" : 3,
    "name" : "ts",
    "type" : "TIMESTAMP(3)"
  }, {
    "id" : 4,
    "name" : "tz",
    "type" : "TIMESTAMP(6) WITH LOCAL TIME ZONE"
  }, {
    "id" : 5,
    "name" : "b",
    "type" : "BYTES"
  }, {
    "id" : 6,
    "name" : "c",
    "type" : "CHAR(3)"
  }, {
    "id" : 7,
    "name" : "p",
    "type" : "STRING NOT NULL"
  } ],
  "highestFieldId" : 7,
  "partitionKeys" : [ "p" ],
  "primaryKeys" : [ "k", "p" ],
  "options" : {
    "bucket" : "2",
    "snapshot.num-retained.max" : "50"
  },
  "timeMillis" : 1795356184574
}"""

# pypaimon-golden-dumps/01-pk-schema-0.json (compact form, explicit "comment": null)
PYPAIMON_SCHEMA = (
    '{"version": 3, "id": 0, "fields": [{"id": 0, "name": "k", "type": "BIGINT NOT NULL"}, '
    '{"id": 1, "name": "v", "type": "STRING"}, {"id": 2, "name": "dt", "type": "STRING NOT NULL"}],'
    ' "highestFieldId": 2, "partitionKeys": ["dt"], "primaryKeys": ["dt", "k"], '
    '"options": {"bucket": "2"}, "comment": null, "timeMillis": 1795345130876}'
)


def test_java_schema_file_round_trips_byte_for_byte() -> None:
    schema = schema_from_json(JAVA_SCHEMA)
    assert schema.field("tz").type == TIMESTAMP_LTZ(6)
    assert schema.field("k").type == INT(False)
    assert schema_to_json(schema) == JAVA_SCHEMA


def test_new_table_schema_writes_what_java_writes() -> None:
    schema = new_table_schema(
        [("k", INT()), ("v", STRING()), ("d", DECIMAL(10, 2)), ("ts", TIMESTAMP(3)),
         ("tz", TIMESTAMP_LTZ(6)), ("b", BYTES()), ("c", CHAR(3)), ("p", STRING())],
        partition_keys=["p"],
        primary_keys=["k", "p"],
        options={"bucket": "2", "snapshot.num-retained.max": "50"},
    )  # fmt: skip
    assert schema_to_json(replace(schema, time_millis=1795356184574)) == JAVA_SCHEMA


def test_pypaimon_schema_reads_and_is_rewritten_in_java_form() -> None:
    schema = schema_from_json(PYPAIMON_SCHEMA)
    assert schema == TableSchema(
        schema_id=0,
        fields=(
            DataField(0, "k", BIGINT(False)),
            DataField(1, "v", STRING()),
            DataField(2, "dt", STRING(False)),
        ),
        highest_field_id=2,
        partition_keys=("dt",),
        primary_keys=("dt", "k"),
        options={"bucket": "2"},
        comment=None,
        time_millis=1795345130876,
    )
    text = schema_to_json(schema)
    assert '"comment"' not in text and json.loads(text) == {
        k: v for k, v in json.loads(PYPAIMON_SCHEMA).items() if k != "comment"
    }


def test_comment_and_field_extras_are_written_in_java_key_order() -> None:
    schema = TableSchema(
        5,
        (
            DataField(0, "a", INT(), "the a", "1"),
            DataField(1, "m", MAP(STRING(False), ARRAY(INT()))),
        ),
        1,
        (),
        (),
        {},
        "a table",
        7,
    )
    text = schema_to_json(schema)
    assert text == (
        "{\n"
        '  "version" : 3,\n'
        '  "id" : 5,\n'
        '  "fields" : [ {\n'
        '    "id" : 0,\n'
        '    "name" : "a",\n'
        '    "type" : "INT",\n'
        '    "description" : "the a",\n'
        '    "defaultValue" : "1"\n'
        "  }, {\n"
        '    "id" : 1,\n'
        '    "name" : "m",\n'
        '    "type" : {\n'
        '      "type" : "MAP",\n'
        '      "key" : "STRING NOT NULL",\n'
        '      "value" : {\n'
        '        "type" : "ARRAY",\n'
        '        "element" : "INT"\n'
        "      }\n"
        "    }\n"
        "  } ],\n"
        '  "highestFieldId" : 1,\n'
        '  "partitionKeys" : [ ],\n'
        '  "primaryKeys" : [ ],\n'
        '  "options" : { },\n'
        '  "comment" : "a table",\n'
        '  "timeMillis" : 7\n'
        "}"
    )
    assert schema_from_json(text) == schema


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        (None, {"bucket": "1", "file.format": "orc"}),
        (1, {"bucket": "1", "file.format": "orc"}),
        (2, {"file.format": "orc"}),
        (3, {}),
    ],
)
def test_old_schema_versions_get_javas_defaults(version: int | None, expected: dict) -> None:
    data: dict = {"id": 0, "fields": [], "highestFieldId": -1, "partitionKeys": [],
                  "primaryKeys": [], "options": {}}  # fmt: skip
    if version is not None:
        data["version"] = version
    schema = schema_from_json(json.dumps(data))
    assert schema.options == expected and schema.version == (version or 1)
    data["options"] = {"bucket": "4", "file.format": "parquet"}
    assert schema_from_json(json.dumps(data)).options == data["options"]


def test_lenient_reading() -> None:
    text = json.dumps(
        {
            "id": 3,
            "fields": [{"name": "a", "type": "INT"}, {"name": "b", "type": "STRING"}],
            "partitionKeys": [],
            "primaryKeys": [],
            "options": {"bucket": 2, "x": True},
            "comment": None,
            "someFutureKey": {"nested": 1},
            "version": 3,
        }
    )
    schema = schema_from_json(text)
    assert [f.id for f in schema.fields] == [0, 1] and schema.highest_field_id == 1
    assert schema.options == {"bucket": "2", "x": "true"}
    assert schema.comment is None and schema.time_millis == 0
    for bad in ("not json", "[]", '{"fields": []}', '{"id": 0, "fields": [{"name": "a"}]}'):
        with pytest.raises(SchemaError):
            schema_from_json(bad)


# ------------------------------------------------------------------------------ creation


def test_new_table_schema_ids_keys_and_nullability() -> None:
    schema = new_table_schema(
        [
            DataField(99, "a", INT()),
            DataField(99, "r", ROW([DataField(0, "x", INT()), DataField(0, "y", STRING())])),
            ("b", STRING(), "the b"),
            ("dt", STRING()),
        ],
        partition_keys=["dt"],
        primary_keys=["a", "dt"],
        comment="c",
    )
    assert [f.id for f in schema.fields] == [0, 1, 4, 5]
    assert [f.id for f in schema.field("r").type.fields or ()] == [2, 3]
    assert schema.highest_field_id == 5
    assert not schema.field("a").type.nullable and not schema.field("dt").type.nullable
    assert schema.field("b").type.nullable and schema.field("b").description == "the b"
    assert schema.trimmed_primary_keys == ("a",)
    assert [f.name for f in schema.trimmed_primary_key_fields] == ["a"]
    assert [f.name for f in schema.partition_fields] == ["dt"]
    assert schema.bucket_keys == ("a",) and schema.num_buckets == -1
    assert schema.comment == "c" and schema.time_millis > 0 and schema.version == 3
    assert schema.row_type.fields == schema.fields


def test_primary_key_and_partition_from_options() -> None:
    schema = new_table_schema(
        [("a", INT()), ("b", INT()), ("p", STRING())],
        options={"primary-key": "a, p", "partition": "p", "bucket": "3"},
    )
    assert schema.primary_keys == ("a", "p") and schema.partition_keys == ("p",)
    assert schema.options == {"bucket": "3"}
    with pytest.raises(SchemaError, match="at the same time"):
        new_table_schema([("a", INT())], primary_keys=["a"], options={"primary-key": "a"})


def test_bucket_keys_option() -> None:
    schema = new_table_schema(
        [("a", INT()), ("b", INT()), ("p", STRING())],
        partition_keys=["p"],
        options={"bucket": "4", "bucket-key": "b,a"},
    )
    assert schema.bucket_keys == ("b", "a") and schema.num_buckets == 4
    assert [f.name for f in schema.bucket_key_fields] == ["b", "a"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"fields": [("a", INT()), ("a", STRING())]}, "duplicate"),
        ({"partition_keys": ["zz"]}, "partition fields"),
        ({"primary_keys": ["zz"]}, "primary key constraint"),
        ({"primary_keys": ["a", "a"]}, "duplicate"),
        ({"primary_keys": ["p"], "partition_keys": ["p"]}, "only one record"),
        ({"options": {"bucket": "x"}}, "integer"),
        ({"options": {"bucket": "0"}}, "greater than 0"),
        ({"options": {"bucket": "-2"}}, "greater than 0"),
        ({"options": {"bucket": "2"}}, "bucket-key"),
        ({"options": {"bucket-key": "a"}}, "bucket = -1"),
        ({"options": {"bucket": "2", "bucket-key": "zz"}}, "bucket keys"),
        ({"options": {"bucket": "2", "bucket-key": "p"}, "partition_keys": ["p"]}, "partition keys"),
        ({"options": {"bucket": "2", "bucket-key": "b"}, "primary_keys": ["a"]}, "Primary keys"),
        ({"options": {"bucket": "2"}, "primary_keys": ["a"], "partition_keys": ["p"]},
         "cross partition"),
        ({"fields": []}, "at least one column"),
    ],
)  # fmt: skip
def test_invalid_schemas_are_rejected(kwargs: dict, message: str) -> None:
    args = {"fields": [("a", INT()), ("b", INT()), ("p", STRING())], **kwargs}
    with pytest.raises(SchemaError, match=message):
        new_table_schema(**args)


def test_schema_from_arrow() -> None:
    pa_schema = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            pa.field("name", pa.string(), metadata={b"description": b"who"}),
            ("tags", pa.list_(pa.string())),
            ("dt", pa.string()),
        ]
    )
    schema = schema_from_arrow(pa_schema, partition_keys=["dt"], primary_keys=["id", "dt"],
                               options={"bucket": "2"})  # fmt: skip
    assert [str(f.type) for f in schema.fields] == [
        "BIGINT NOT NULL",
        "STRING",
        "ARRAY<STRING>",
        "STRING NOT NULL",
    ]
    assert schema.field("name").description == "who" and schema.num_buckets == 2
    with pytest.raises(SchemaError):
        schema_from_arrow(pa.schema([("u", pa.uint64())]))


def test_field_lookup_errors() -> None:
    schema = new_table_schema([("a", INT())])
    assert schema.field("a").id == 0 and schema.field_names == ["a"]
    with pytest.raises(SchemaError, match="'zz' does not exist"):
        schema.field("zz")


# ------------------------------------------------------------------------------- manager


class _CountingIO(LocalFileIO):
    def __init__(self) -> None:
        super().__init__()
        self.reads = 0

    def read_bytes(self, path: str) -> bytes:
        self.reads += 1
        return super().read_bytes(path)


def _base() -> TableSchema:
    return new_table_schema(
        [("k", BIGINT()), ("v", STRING()), ("dt", STRING())],
        partition_keys=["dt"],
        primary_keys=["k", "dt"],
        options={"bucket": "2"},
    )


def test_commit_is_no_clobber_and_listing_ignores_other_names(tmp_path: Path) -> None:
    io = _CountingIO()
    manager = SchemaManager(io, str(tmp_path / "t"))
    assert manager.latest() is None and manager.list_ids() == []
    schema = _base()
    assert manager.commit(schema)
    assert not manager.commit(replace(schema, comment="other writer"))
    schema_dir = tmp_path / "t" / "schema"
    assert (schema_dir / "schema-0").read_text() == schema_to_json(schema)
    for junk in ("schema-x", "schema-1.tmp", ".schema-2.abc.tmp", "schema-", "schema-٣", "other"):
        (schema_dir / junk).write_text("{}")
    (schema_dir / "schema-10").write_text(schema_to_json(replace(schema, schema_id=10)))
    assert manager.list_ids() == [0, 10]
    assert manager.latest().schema_id == 10  # type: ignore[union-attr]
    assert manager.schema_path(3) == f"{tmp_path}/t/schema/schema-3"
    assert manager.schema_exists(0) and not manager.schema_exists(1)
    assert [s.schema_id for s in manager.list_all()] == [0, 10]


def test_schemas_are_read_once(tmp_path: Path) -> None:
    io = _CountingIO()
    writer = SchemaManager(LocalFileIO(), str(tmp_path))
    writer.commit(_base())
    manager = SchemaManager(io, str(tmp_path))
    first = manager.schema(0)
    assert manager.schema(0) is first and manager.latest() is first and io.reads == 1
    with pytest.raises(SchemaError, match="does not exist"):
        manager.schema(5)


def test_new_managers_share_parsed_schemas_until_the_file_changes(tmp_path: Path) -> None:
    """Every table handle opens its schema anew: the parse is shared by the whole process,
    but a schema file published again under its id (rollback elsewhere) is read again."""
    SchemaManager(LocalFileIO(), str(tmp_path)).commit(_base())
    io = _CountingIO()
    first = SchemaManager(io, str(tmp_path)).latest()
    again = SchemaManager(io, str(tmp_path)).latest()
    assert again is first and io.reads == 1
    path = tmp_path / "schema" / "schema-0"
    os.remove(path)
    path.write_text(schema_to_json(replace(_base(), comment="republished")))
    assert SchemaManager(io, str(tmp_path)).latest().comment == "republished"  # type: ignore[union-attr]
    path.write_text("{not json")
    with pytest.raises(SchemaError):
        SchemaManager(io, str(tmp_path)).latest()


def test_commit_changes_options_and_columns(tmp_path: Path) -> None:
    manager = SchemaManager(LocalFileIO(), str(tmp_path))
    with pytest.raises(TableNotExist):
        manager.commit_changes(SetOption("a", "b"))
    manager.commit(_base())
    s1 = manager.commit_changes(
        SetOption("snapshot.num-retained.max", "20"),
        AddColumn("score", DOUBLE(), "points"),
        UpdateComment("scores"),
    )
    assert s1.schema_id == 1 and manager.latest() == s1
    assert s1.options == {"bucket": "2", "snapshot.num-retained.max": "20"}
    assert s1.field("score").id == 3 and s1.highest_field_id == 3 and s1.comment == "scores"
    s2 = manager.commit_changes(
        [RemoveOption("snapshot.num-retained.max"), DropColumn("score"), AddColumn("x", INT())]
    )
    assert s2.field_names == ["k", "v", "dt", "x"]
    assert s2.field("x").id == 4 and s2.highest_field_id == 4  # ids are never reused
    s3 = manager.commit_changes(
        RenameColumn("k", "key"),
        UpdateColumnComment("v", "value"),
        AddColumn("first", INT(), first=True),
        AddColumn("r", ROW([DataField(0, "a", INT())]), after="v"),
    )
    assert s3.field_names == ["first", "key", "v", "r", "dt", "x"]
    assert s3.primary_keys == ("key", "dt") and s3.field("v").description == "value"
    assert s3.field("r").id == 6 and s3.field("r").type.fields[0].id == 7  # type: ignore[index]
    assert manager.list_ids() == [0, 1, 2, 3]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (AddColumn("v", INT()), "already exists"),
        (AddColumn("n", INT(False)), "NOT NULL"),
        (AddColumn("n", INT(), after="zz"), "does not exist"),
        (RenameColumn("dt", "day"), "partition column"),
        (RenameColumn("v", "k"), "already exists"),
        (RenameColumn("zz", "y"), "does not exist"),
        (DropColumn("k"), "primary key"),
        (DropColumn("dt"), "partition key"),
        (UpdateColumnComment("zz", "c"), "does not exist"),
        (SetOption("bucket", "0"), "greater than 0"),
    ],
)
def test_invalid_changes(change: object, message: str) -> None:
    with pytest.raises(SchemaError, match=message):
        apply_changes(_base(), [change])  # type: ignore[list-item]


def test_layout_options_are_locked_once_there_are_snapshots(tmp_path: Path) -> None:
    manager = SchemaManager(LocalFileIO(), str(tmp_path))
    manager.commit(_base())
    assert manager.commit_changes(SetOption("merge-engine", "first-row")).schema_id == 1
    (tmp_path / "snapshot").mkdir()
    (tmp_path / "snapshot" / "snapshot-1").write_text("{}")
    for change in (
        SetOption("merge-engine", "deduplicate"),
        RemoveOption("merge-engine"),
        SetOption("bucket", "-1"),
        RemoveOption("bucket"),
    ):
        with pytest.raises(SchemaError):
            manager.commit_changes(change)
    assert manager.commit_changes(SetOption("bucket", "8")).num_buckets == 8
    assert manager.commit_changes(SetOption("merge-engine", "first-row")).schema_id == 3
    dyn = replace(_base(), options={"bucket": "-1"})
    with pytest.raises(SchemaError, match="when it is -1"):
        apply_changes(dyn, [SetOption("bucket", "4")], has_snapshots=True)


def test_rename_follows_into_bucket_key_and_sequence_field() -> None:
    schema = new_table_schema(
        [("a", INT()), ("b", INT()), ("s", BIGINT())],
        primary_keys=["a", "b"],
        options={"bucket": "2", "bucket-key": "b", "sequence.field": "s"},
    )
    out = apply_changes(schema, [RenameColumn("b", "bb"), RenameColumn("s", "seq")])
    assert out.options["bucket-key"] == "bb" and out.options["sequence.field"] == "seq"
    assert out.primary_keys == ("a", "bb")


def test_add_column_before_partition_option() -> None:
    schema = replace(_base(), options={"bucket": "2", "add-column-before-partition": "true"})
    assert apply_changes(schema, [AddColumn("n", INT())]).field_names == ["k", "v", "n", "dt"]


def test_commit_changes_retries_when_another_writer_wins(tmp_path: Path) -> None:
    class RacingIO(LocalFileIO):
        raced = False

        def write_no_clobber(self, path: str, data: bytes) -> bool:
            if not self.raced and path.endswith("schema-1"):
                self.raced = True
                other = apply_changes(schema_from_json(schema_text), [SetOption("o", "x")])
                super().write_no_clobber(path, schema_to_json(other).encode())
            return super().write_no_clobber(path, data)

    schema_text = schema_to_json(_base())
    manager = SchemaManager(RacingIO(), str(tmp_path))
    manager.commit(schema_from_json(schema_text))
    result = manager.commit_changes(SetOption("mine", "y"))
    assert result.schema_id == 2 and result.options["o"] == "x" and result.options["mine"] == "y"


def test_pypaimon_reads_our_schema_files() -> None:
    from pypaimon.schema.table_schema import TableSchema as PyTableSchema

    schema = new_table_schema(
        [("k", INT()), ("r", ROW([DataField(0, "x", DECIMAL(20, 3))])), ("dt", STRING())],
        partition_keys=["dt"],
        primary_keys=["k", "dt"],
        options={"bucket": "2"},
        comment="c",
    )
    theirs = PyTableSchema.from_json(schema_to_json(schema))
    assert [f.id for f in theirs.fields] == [0, 1, 3] and theirs.highest_field_id == 3
    assert theirs.primary_keys == ["k", "dt"] and theirs.options == {"bucket": "2"}
    assert theirs.comment == "c"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"snapshot.num-retained.min": "0"}, "snapshot.num-retained.min should be at least 1"),
        (
            {"snapshot.num-retained.max": "5"},  # the default minimum is 10
            "snapshot.num-retained.min should not be larger than snapshot.num-retained.max",
        ),
        (
            {"snapshot.num-retained.min": "1", "changelog.num-retained.min": "-1"},
            "changelog.num-retained.min should be at least 1",
        ),
        (
            {"changelog.num-retained.min": "20", "changelog.num-retained.max": "15"},
            "changelog.num-retained.min should not be larger than changelog.num-retained.max",
        ),
        ({"snapshot.num-retained.min": "ten"}, "Could not parse|Cannot parse"),
    ],
)
def test_expiry_options_paimon_rejects_are_rejected_before_anything_is_written(
    tmp_path: Path, options: dict[str, str], message: str
) -> None:
    from paimon_core.catalog import FileSystemCatalog
    from paimon_core.exceptions import InvalidArgument

    catalog = FileSystemCatalog(str(tmp_path))
    catalog.create_database("db")
    with pytest.raises(InvalidArgument, match=message) as err:
        catalog.create_table("db.t", pa.schema([("k", pa.int64())]), options=options)
    assert "\n" not in str(err.value)
    assert not catalog.table_exists("db.t") and os.listdir(tmp_path / "db.db") == []
    table = catalog.create_table("db.t", pa.schema([("k", pa.int64())]))
    manager = SchemaManager(LocalFileIO(), table.path)
    with pytest.raises(InvalidArgument, match=message):  # ALTER TABLE ... SET too
        manager.commit_changes([SetOption(k, v) for k, v in options.items()])
    assert manager.list_ids() == [0]
    retained = {"snapshot.num-retained.min": "3", "snapshot.num-retained.max": "3"}
    assert manager.commit_changes([SetOption(k, v) for k, v in retained.items()]).schema_id == 1


def test_dynamic_options_may_not_change_fixed_options() -> None:
    options = {"bucket": "2", "merge-engine": "deduplicate"}
    check_dynamic_option(options, "merge-engine", "deduplicate")  # unchanged: fine
    check_dynamic_option(options, "bucket", "4")
    check_dynamic_option(options, "write-only", "true")
    with pytest.raises(SchemaError, match="Change 'merge-engine' is not supported yet"):
        check_dynamic_option(options, "merge-engine", "partial-update")
    with pytest.raises(SchemaError, match="Cannot change bucket to -1"):
        check_dynamic_option(options, "bucket", "-1")
    with pytest.raises(SchemaError, match="Cannot change bucket when it is -1"):
        check_dynamic_option({}, "bucket", "3")


# ------------------------------------------------------------- types, nullability, positions


def _wide() -> TableSchema:
    return new_table_schema(
        [
            ("k", BIGINT(False)),
            ("i", INT()),
            ("s", STRING()),
            ("n", INT(False)),
            ("arr", ARRAY(INT())),
            ("m", MAP(STRING(), INT())),
            ("r", ROW([DataField(0, "x", INT()), DataField(1, "y", STRING())])),
            ("dt", STRING()),
        ],
        partition_keys=["dt"],
        primary_keys=["k", "dt"],
        options={"bucket": "2"},
    )


@pytest.mark.parametrize(
    ("path", "new_type", "expected"),
    [
        ("i", BIGINT(), "BIGINT"),  # implicit widening
        ("i", DOUBLE(), "DOUBLE"),
        ("i", STRING(), "STRING"),  # explicit, allowed by default
        ("s", INT(), "INT"),
        ("i", DECIMAL(12, 2), "DECIMAL(12, 2)"),
        (("arr", "element"), BIGINT(), "ARRAY<BIGINT>"),
        (("m", "value"), DOUBLE(), "MAP<STRING, DOUBLE>"),
        (("r", "x"), BIGINT(), "ROW<`x` BIGINT, `y` STRING>"),
    ],
)
def test_update_column_type(path: str | tuple[str, ...], new_type: DataType, expected: str) -> None:
    out = apply_changes(_wide(), [UpdateColumnType(path, new_type)])
    top = path if isinstance(path, str) else path[0]
    assert str(out.field(top).type) == expected
    assert out.field(top).id == _wide().field(top).id  # same field, new type
    assert out.highest_field_id == _wide().highest_field_id


@pytest.mark.parametrize(
    ("change", "options", "message"),
    [
        (UpdateColumnType("dt", INT()), {}, "partition column"),
        (UpdateColumnType("k", INT(False)), {}, "primary key"),
        (UpdateColumnType("i", DATE()), {}, "cannot be converted"),
        (UpdateColumnType("arr", STRING()), {}, None),  # any type -> STRING is explicit
        (UpdateColumnType("i", TINYINT()), {"disable-explicit-type-casting": "true"}, "cannot"),
        (UpdateColumnType("r", INT()), {}, "cannot be converted"),
        (UpdateColumnType(("r", "zz"), INT()), {}, "does not exist"),
        (UpdateColumnType("i", INT(False)), {}, "nullable to non nullable"),
        (UpdateColumnNullability("i", False), {}, "nullable to non nullable"),
        (UpdateColumnNullability("k", True), {}, "primary key"),
        (UpdateColumnPosition("i"), {}, "Reference field name not found"),
        (UpdateColumnPosition("zz", first=True), {}, "Field name not found"),
        (UpdateColumnPosition("k", first=True), {}, "Cannot move itself"),
        (UpdateColumnPosition("i", after="i"), {}, "Cannot move itself"),
    ],
)
def test_refused_column_updates(
    change: object, options: dict[str, str], message: str | None
) -> None:
    schema = replace(_wide(), options={**_wide().options, **options})
    if message is None:
        assert apply_changes(schema, [change]).field("arr").type == STRING()  # type: ignore[list-item]
        return
    with pytest.raises(SchemaError, match=message):
        apply_changes(schema, [change])  # type: ignore[list-item]


def test_nullability_changes() -> None:
    out = apply_changes(_wide(), [UpdateColumnNullability("n", True)])
    assert out.field("n").type == INT()
    relaxed = replace(
        _wide(), options={"bucket": "2", "alter-column-null-to-not-null.disabled": "false"}
    )
    strict = apply_changes(relaxed, [UpdateColumnNullability("i", False)])
    assert strict.field("i").type == INT(False)
    kept = apply_changes(_wide(), [UpdateColumnType("n", BIGINT(), keep_nullability=True)])
    assert kept.field("n").type == BIGINT(False)
    nested = apply_changes(_wide(), [UpdateColumnNullability(("arr", "element"), True)])
    assert nested.field("arr").type == ARRAY(INT())


@pytest.mark.parametrize(
    ("move", "order"),
    [
        (UpdateColumnPosition("dt", first=True), "dt k i s n arr m r"),
        (UpdateColumnPosition("k", last=True), "i s n arr m r dt k"),
        (UpdateColumnPosition("k", after="s"), "i s k n arr m r dt"),
        (UpdateColumnPosition("r", after="i"), "k i r s n arr m dt"),
        (UpdateColumnPosition("r", before="i"), "k r i s n arr m dt"),
        (UpdateColumnPosition("k", before="n"), "i s k n arr m r dt"),
    ],
)
def test_column_positions_move_as_java(move: UpdateColumnPosition, order: str) -> None:
    assert apply_changes(_wide(), [move]).field_names == order.split()


def test_nested_fields_are_added_renamed_and_dropped() -> None:
    schema = _wide()
    added = apply_changes(schema, [AddColumn(("r", "z"), DOUBLE(), first=True)])
    r = added.field("r").type
    assert [f.name for f in r.fields] == ["z", "x", "y"]  # type: ignore[union-attr]
    assert r.fields[0].id == schema.highest_field_id + 1  # type: ignore[index]
    renamed = apply_changes(added, [RenameColumn(("r", "x"), "x2")])
    assert [f.name for f in renamed.field("r").type.fields] == ["z", "x2", "y"]  # type: ignore[union-attr]
    dropped = apply_changes(renamed, [DropColumn(("r", "y"))])
    assert [f.name for f in dropped.field("r").type.fields] == ["z", "x2"]  # type: ignore[union-attr]
    with pytest.raises(SchemaError, match=r"'r\.x2' already exists"):
        apply_changes(renamed, [AddColumn(("r", "x2"), INT())])
    with pytest.raises(SchemaError, match=r"'nope' does not exist"):
        apply_changes(schema, [DropColumn(("nope", "a"))])

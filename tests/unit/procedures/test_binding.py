"""CALL argument binding (Paimon's ``PaimonProcedureResolver`` + Spark up-cast rules)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest

from paimon_core.catalog import FileSystemCatalog
from procedures import PROCEDURES, ProcedureError, call_procedure
from procedures.base import (
    CallContext,
    Column,
    Parameter,
    Procedure,
    ProcedureResult,
    TypedValue,
    bind_arguments,
    epoch_millis_to_local,
    literal_type,
    local_to_epoch_millis,
    parse_local_timestamp,
    resolve_time_zone,
)
from tests.unit.procedures.helpers import call, fingerprint, new_catalog, new_table

TOY = Procedure(
    "toy",
    (
        Parameter("table", "STRING", required=True),
        Parameter("tag", "STRING", required=True),
        Parameter("snapshot", "BIGINT"),
        Parameter("retain", "INT"),
        Parameter("flag", "BOOLEAN", default=False),
    ),
    (Column("result", "BOOLEAN"),),
    lambda ctx, args: ProcedureResult((), []),
)


def bind(named: Any = None, positional: Any = None) -> dict[str, Any]:
    return bind_arguments(TOY, named, positional, time_zone=dt.UTC)


def test_registry_has_the_procedures_in_scope() -> None:
    assert {
        "create_tag",
        "create_tag_from_timestamp",
        "delete_tag",
        "rename_tag",
        "replace_tag",
        "expire_tags",
        "rollback",
        "rollback_to_timestamp",
        "expire_snapshots",
        "remove_orphan_files",
        "compact",
        "compact_manifest",
        "compact_database",
        "reset_consumer",
        "clear_consumers",
        "repair_earliest_snapshot",
        "trigger_tag_automatic_creation",
        "expire_partitions",
        "mark_partition_done",
        "purge_files",
        "remove_unexisting_files",
        "rescale",
        "rewrite_file_index",
        "copy",
    } <= set(PROCEDURES)
    for proc in PROCEDURES.values():
        required = [p.required for p in proc.parameters]
        assert required == sorted(required, reverse=True), proc.name  # required ones first


@pytest.mark.parametrize(
    ("name", "parameters"),
    [
        ("create_tag", "table, tag, snapshot, time_retained"),
        ("replace_tag", "table, tag, snapshot, time_retained"),
        ("create_tag_from_timestamp", "table, tag, timestamp, time_retained"),
        ("delete_tag", "table, tag, dry_run"),
        ("rename_tag", "table, tag, target_tag"),
        ("expire_tags", "table, older_than, dry_run"),
        ("rollback", "table, version, snapshot, tag, dry_run"),
        ("rollback_to_timestamp", "table, timestamp, dry_run"),
        (
            "expire_snapshots",
            "table, retain_max, retain_min, older_than, max_deletes, options, dry_run",
        ),
        ("remove_orphan_files", "table, older_than, dry_run, parallelism, mode"),
        ("compact_manifest", "table, options, dry_run"),
        ("compact_database", "including_databases, including_tables, excluding_tables, options"),
        ("reset_consumer", "table, consumerId, nextSnapshotId"),
        ("clear_consumers", "table, includingConsumers, excludingConsumers"),
        ("repair_earliest_snapshot", "table, snapshot_id"),
        ("trigger_tag_automatic_creation", "table"),
        (
            "expire_partitions",
            "table, expiration_time, timestamp_formatter, timestamp_pattern, expire_strategy, "
            "max_expires, options",
        ),
        ("mark_partition_done", "table, partitions"),
        ("purge_files", "table"),
        ("remove_unexisting_files", "table, dry_run, parallelism"),
        ("rescale", "table, bucket_num, partitions, where"),
        ("rewrite_file_index", "table, where"),
        ("copy", "source_table, target_table, where"),
    ],
)
def test_parameters_in_paimon_code_order(name: str, parameters: str) -> None:
    assert PROCEDURES[name].signature == parameters


def test_named_positional_and_defaults() -> None:
    assert bind({"table": "t", "tag": "x"}) == {
        "table": "t",
        "tag": "x",
        "snapshot": None,
        "retain": None,
        "flag": False,
    }
    assert bind(positional=("t", "x", 3)) == {
        "table": "t",
        "tag": "x",
        "snapshot": 3,
        "retain": None,
        "flag": False,
    }


def test_names_are_matched_case_insensitively() -> None:
    assert bind({"TABLE": "t", "Tag": "x", "sNaPsHoT": 1})["snapshot"] == 1


@pytest.mark.parametrize(
    ("named", "positional", "message"),
    [
        ({"table": "t", "tag": "x", "snapshot_id": 1}, None, "Argument snapshot_id is unknown."),
        ([("table", "t"), ("tag", "a"), ("TAG", "b")], None, "argument tag is duplicated."),
        ({"table": "t"}, None, "Required parameters [tag] is missed."),
        ({}, ("t",), "Required parameters [tag] is missed."),
        (None, ("t", "x", 1, 2, True, 6), "Too many arguments for procedure"),
        ({"table": "t"}, ("t", "x"), "Cannot mix named and positional arguments."),
        ({"table": "t", "tag": "x", "snapshot": "10"}, None, "Cannot cast STRING to BIGINT"),
        ({"table": "t", "tag": "x", "retain": 2**40}, None, "Cannot cast BIGINT to INT of retain"),
        ({"table": "t", "tag": "x", "snapshot": 1.5}, None, "Cannot cast DOUBLE to BIGINT"),
        (
            {"table": "t", "tag": "x", "snapshot": Decimal("1.5")},
            None,
            "Cannot cast DECIMAL(2,1) to BIGINT",
        ),
        ({"table": "t", "tag": "x", "flag": "true"}, None, "Cannot cast STRING to BOOLEAN"),
        ({"table": "t", "tag": {"k": "v"}}, None, "Cannot cast MAP<STRING,STRING> to STRING"),
        ({"table": "t", "tag": "x", "retain": dt.date(2024, 1, 1)}, None, "Cannot cast DATE"),
    ],
)
def test_binding_errors(named: Any, positional: Any, message: str) -> None:
    with pytest.raises(ProcedureError) as err:
        bind(named, positional)
    text = str(err.value)
    assert message in text
    assert "\n" not in text
    assert text.startswith("CALL sys.toy: ")


def test_up_casts_follow_spark() -> None:
    args = bind({"table": 10, "tag": True, "snapshot": 7, "retain": None, "flag": None})
    assert args == {"table": "10", "tag": "true", "snapshot": 7, "retain": None, "flag": None}
    assert bind({"table": 1.5, "tag": Decimal("2.50")})["table"] == "1.5"
    assert bind({"table": "t", "tag": Decimal("2.50")})["tag"] == "2.50"
    assert bind({"table": "t", "tag": "x", "snapshot": Decimal("12")})["snapshot"] == 12
    stamp = dt.datetime(2024, 1, 1, 0, 0, 1, 500000)
    assert bind({"table": "t", "tag": stamp})["tag"] == "2024-01-01 00:00:01.5"
    # TIMESTAMP -> BIGINT is an up-cast in Spark: epoch *seconds* (Paimon expects millis there).
    assert bind({"table": "t", "tag": "x", "snapshot": stamp})["snapshot"] == 1704067201
    assert bind({"table": "t", "tag": dt.date(2024, 2, 3)})["tag"] == "2024-02-03"
    assert bind({"table": "t", "tag": b"ab"})["tag"] == "ab"


@pytest.mark.parametrize(
    ("literal", "snapshot", "retain", "table"),
    [
        # value of `snapshot => x` (BIGINT), of `retain => x` (INT; None: rejected), as a STRING
        ("10L", 10, None, "10"),
        ("-10L", -10, None, "-10"),
        ("10S", 10, 10, "10"),
        ("-128Y", -128, -128, "-128"),
        ("1.5D", None, None, "1.5"),
        ("2F", None, None, "2.0"),
        ("10BD", 10, 10, "10"),
        ("1.5BD", None, None, "1.5"),
        ("10", 10, 10, "10"),
    ],
)
def test_suffixed_literals_bind_with_their_spark_type(
    literal: str, snapshot: int | None, retain: int | None, table: str
) -> None:
    from sql_ext.syntax.parse import CallStatement, parse_statement

    def value(name: str) -> Any:
        statement = parse_statement(f"CALL sys.toy({name} => {literal})")
        assert isinstance(statement, CallStatement)
        return statement.args[name]

    for name, expected in (("snapshot", snapshot), ("retain", retain)):
        kind = "BIGINT" if name == "snapshot" else "INT"
        args = {"table": "t", "tag": "x", name: value(name)}
        if expected is None:
            with pytest.raises(ProcedureError, match=f"Cannot cast .* to {kind} of {name}"):
                bind(args)
        else:
            bound = bind(args)[name]
            assert (bound, type(bound)) == (expected, int)
    assert bind({"table": value("table"), "tag": "x"})["table"] == table


def test_bigint_literal_is_rejected_for_an_int_parameter_as_in_paimon() -> None:
    with pytest.raises(ProcedureError) as error:
        bind({"table": "t", "tag": "x", "retain": TypedValue(10, "BIGINT")})
    assert str(error.value) == ("CALL sys.toy: Cannot cast BIGINT to INT of retain (got 10L).")
    assert literal_type(TypedValue(1, "SMALLINT")) == "SMALLINT"


def test_literal_types() -> None:
    assert literal_type(None) == "VOID"
    assert literal_type(True) == "BOOLEAN"
    assert literal_type(2**31 - 1) == "INT"
    assert literal_type(2**31) == "BIGINT"
    assert literal_type(2**63) == "DECIMAL(19,0)"
    assert literal_type(0.5) == "DOUBLE"
    assert literal_type(Decimal("0.5")) == "DECIMAL(1,1)"
    assert literal_type(Decimal("-12.345")) == "DECIMAL(5,3)"
    assert literal_type(dt.datetime(2024, 1, 1)) == "TIMESTAMP"
    assert literal_type({}) == "MAP<VOID,VOID>"


def test_unknown_procedure(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    with pytest.raises(ProcedureError, match=r"Procedure sys\.nope is not found\. Available: "):
        call(catalog, "nope", table="db.t")


def test_procedure_names_are_case_insensitive(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    new_table(catalog, commits=1)
    assert call(catalog, "CREATE_TAG", table="db.t", tag="x").rows == [(True,)]


@pytest.mark.parametrize(
    ("identifier", "expected"),
    [
        ("t", ("db", "t")),
        ("other.t", ("other", "t")),
        ("`db`.`t.x`", ("db", "t.x")),
        ("`a``b`", ("db", "a`b")),
        ("paimon.db.t", ("db", "t")),
        ("PAIMON.db.t", ("db", "t")),
    ],
)
def test_table_identifiers(identifier: str, expected: tuple[str, str]) -> None:
    context = CallContext(FileSystemCatalog("/nonexistent"), "db", "toy", None, "paimon")
    assert context.split_table(identifier) == expected


@pytest.mark.parametrize(
    ("identifier", "message"),
    [
        ("", "Cannot handle an empty identifier for argument table"),
        ("  ", "Cannot handle an empty identifier for argument table"),
        (None, "Cannot handle an empty identifier for argument table"),
        ("a.b.c.d", "Invalid identifier 'a.b.c.d'"),
        ("db..t", "Invalid identifier"),
        ("`db.t", "Invalid identifier"),
        ("spark_catalog.db.t", "Cannot run procedure in catalog 'paimon'"),
    ],
)
def test_bad_table_identifiers(identifier: str | None, message: str) -> None:
    context = CallContext(FileSystemCatalog("/nonexistent"), "db", "toy", None, "paimon")
    with pytest.raises(ProcedureError, match=message.replace(".", r"\.").replace("(", r"\(")):
        context.split_table(identifier)


def test_unknown_table_and_database(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    with pytest.raises(ProcedureError, match=r"^CALL sys\.create_tag: Table db\.nope does not"):
        call(catalog, "create_tag", table="nope", tag="x")
    with pytest.raises(ProcedureError, match="does not exist"):
        call(catalog, "create_tag", table="nodb.t", tag="x")


def test_errors_change_nothing(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    new_table(catalog)
    before = fingerprint(warehouse)
    failing: list[tuple[str, dict[str, Any]]] = [
        ("create_tag", {"table": "db.t", "tag": "x", "snapshot": "10"}),
        ("create_tag", {"table": "db.t", "tag": "x", "snapshot_id": 1}),
        ("create_tag", {"table": "db.t"}),
        ("create_tag", {"table": "db.t", "tag": "x", "time_retained": "1 fortnight"}),
        ("rollback", {"table": "db.t", "version": "1", "snapshot": 1}),
        ("expire_snapshots", {"table": "db.t", "retain_max": 10**12}),
        ("expire_snapshots", {"table": "db.t", "options": "novalue"}),
        ("expire_tags", {"table": "db.t", "older_than": "yesterday"}),
    ]
    for name, named in failing:
        with pytest.raises(ProcedureError):
            call(catalog, name, **named)
    with pytest.raises(ProcedureError, match="Cannot mix"):
        call_procedure(
            "create_tag", {"table": "db.t"}, ("x",), catalog=catalog, current_database="db"
        )
    assert fingerprint(warehouse) == before


def test_time_zones_and_timestamps() -> None:
    assert resolve_time_zone(None) is None
    assert resolve_time_zone("UTC") is dt.UTC
    assert resolve_time_zone("+08:00").utcoffset(None) == dt.timedelta(hours=8)
    assert resolve_time_zone("GMT-05:30").utcoffset(None) == -dt.timedelta(hours=5, minutes=30)
    shanghai = resolve_time_zone("Asia/Shanghai")
    with pytest.raises(ProcedureError, match="Unknown time zone 'Mars/Base'"):
        resolve_time_zone("Mars/Base")
    assert parse_local_timestamp("2024-01-02 03:04:05.678912") == dt.datetime(
        2024, 1, 2, 3, 4, 5, 678000
    )
    assert parse_local_timestamp("2024-1-2") == dt.datetime(2024, 1, 2)
    assert parse_local_timestamp("2024-01-02T03:04") == dt.datetime(2024, 1, 2, 3, 4)
    with pytest.raises(ValueError):
        parse_local_timestamp("02/01/2024")
    local = dt.datetime(2024, 1, 1, 8, 0)
    assert local_to_epoch_millis(local, shanghai) == 1704067200000
    assert local_to_epoch_millis(local, dt.UTC) == 1704067200000 + 8 * 3600_000
    assert epoch_millis_to_local(1704067200123, shanghai) == dt.datetime(
        2024, 1, 1, 8, 0, 0, 123000
    )
    round_trip = epoch_millis_to_local(local_to_epoch_millis(local, None), None)
    assert round_trip == local


def test_result_spark_schema() -> None:
    result = ProcedureResult(
        (Column("a", "BIGINT", False), Column("b", "STRING"), Column("c", "ARRAY<STRING>")), []
    )
    schema = result.spark_schema()
    assert [(f.name, f.dataType.simpleString(), f.nullable) for f in schema.fields] == [
        ("a", "bigint", False),
        ("b", "string", True),
        ("c", "array<string>", True),
    ]


def test_the_table_hook_sees_every_table_a_procedure_loads(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=3)
    seen: list[tuple[str, str]] = []

    def retain_two(loaded: Any, database: str, name: str) -> Any:
        seen.append((database, name))
        return loaded.copy({"snapshot.num-retained.min": "2", "snapshot.num-retained.max": "2"})

    result = call_procedure(
        "expire_snapshots",
        {"table": "t"},
        catalog=catalog,
        current_database="db",
        table_hook=retain_two,
    )
    assert result.rows == [(1,)] and seen == [("db", "t")]
    assert table.snapshot_manager.list_snapshot_ids() == [2, 3]

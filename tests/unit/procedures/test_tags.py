"""Tag procedures through ``call_procedure`` on tables written by the core."""

from __future__ import annotations

import datetime as dt
import os

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import InvalidTagName
from paimon_core.format.names import validate_tag_name
from paimon_core.lifecycle import tag_management
from paimon_core.lifecycle.expire import expire_snapshots
from paimon_core.table import FileStoreTable
from procedures import ProcedureError
from procedures.rollback import DRY_RUN_COLUMN
from procedures.tags import EXPIRE_TAGS_OUTPUT, FROM_TIMESTAMP_OUTPUT, RESULT
from tests.unit.procedures.helpers import (
    SCHEMA,
    T0,
    call,
    fingerprint,
    new_catalog,
    new_table,
    tag_names,
)


def test_create_tag_on_latest_and_given_snapshot(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog)
    result = call(catalog, "create_tag", table="db.t", tag="latest")
    assert result.columns == RESULT
    assert result.rows == [(True,)]
    assert call(catalog, "create_tag", "t", "first", 1).rows == [(True,)]  # positional, unqualified
    tags = table.tag_manager.list_tags()
    assert tags["latest"].snapshot_id == 3
    assert tags["first"].snapshot_id == 1
    assert tags["first"].tag_time_retained is None
    assert tags["first"].snapshot == table.snapshot_manager.snapshot(1)


def test_create_tag_with_retention_ignores_table_default(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, options={"tag.default-time-retained": "2 h"})
    call(catalog, "create_tag", table="db.t", tag="ttl", time_retained="1 d")
    call(catalog, "create_tag", table="db.t", tag="plain")
    tags = table.tag_manager.list_tags()
    assert tags["ttl"].tag_time_retained == dt.timedelta(days=1)
    assert tags["ttl"].tag_create_time is not None
    # The Spark procedure passes null: tag.default-time-retained is not applied.
    assert tags["plain"].tag_time_retained is None


@pytest.mark.parametrize(
    ("named", "message"),
    [
        ({"tag": "t1"}, "Tag 't1' already exists."),
        ({"tag": "x", "snapshot": 42}, "given snapshot #42 doesn't exist"),
        ({"tag": "", "snapshot": 1}, "Tag name shouldn't be blank."),
        ({"tag": "   "}, "Tag name shouldn't be blank."),
        ({"tag": "../x"}, "must not contain"),
        ({"tag": "a/b"}, "must not contain '/'"),
        ({"tag": ".hidden"}, "must not start with '.'"),
        ({"tag": None}, "Argument tag must not be NULL."),
        ({"tag": "x", "time_retained": "5 fortnights"}, "fortnights"),
        ({"tag": "x", "snapshot": "1"}, "Cannot cast STRING to BIGINT of snapshot"),
    ],
)
def test_create_tag_errors_change_nothing(warehouse: str, named: dict, message: str) -> None:
    catalog = new_catalog(warehouse)
    new_table(catalog)
    call(catalog, "create_tag", table="db.t", tag="t1")
    before = fingerprint(warehouse)
    with pytest.raises(ProcedureError) as err:
        call(catalog, "create_tag", table="db.t", **named)
    assert message in str(err.value)
    assert str(err.value).startswith("CALL sys.create_tag: ")
    assert fingerprint(warehouse) == before


def test_create_tag_on_empty_table(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    new_table(catalog, commits=0)
    with pytest.raises(ProcedureError, match="latest snapshot doesn't exist"):
        call(catalog, "create_tag", table="db.t", tag="x")


@pytest.mark.parametrize(
    "name",
    [
        "x'; DROP TABLE t; --",
        "tag with spaces",
        "20240101",
        "ünïcødé-标签",
        "a,b",
        "$snapshots",
        "`q`",
        "..",
        "x\ny",
        "a\\b",
    ],
)
def test_injection_like_names_are_stored_verbatim_only_when_valid(
    warehouse: str, name: str
) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=1)
    try:
        validate_tag_name(name, allow_numeric=False)
        valid = True
    except InvalidTagName:
        valid = False
    before = fingerprint(warehouse)
    if valid:
        assert call(catalog, "create_tag", table="db.t", tag=name).rows == [(True,)]
        assert tag_names(table) == [name]
        assert os.path.exists(table.tag_manager.tag_path(name))
        assert table.tag_manager.get(name).snapshot_id == 1
    else:
        with pytest.raises(ProcedureError):
            call(catalog, "create_tag", table="db.t", tag=name)
        assert fingerprint(warehouse) == before


def test_create_tag_from_timestamp(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog)  # snapshots at T0, T0+60s, T0+120s
    result = call(catalog, "create_tag_from_timestamp", table="db.t", tag="ts", timestamp=T0 + 1)
    assert result.columns == FROM_TIMESTAMP_OUTPUT
    assert result.rows == [("ts", 2, T0 + 60_000, "null")]
    assert table.tag_manager.get("ts").snapshot_id == 2
    with pytest.raises(ProcedureError, match="Could not find any snapshot whose commit-time later"):
        call(catalog, "create_tag_from_timestamp", table="db.t", tag="late", timestamp=T0 * 2)
    with pytest.raises(ProcedureError, match="timestamp"):
        call(catalog, "create_tag_from_timestamp", table="db.t", tag="none")
    assert tag_names(table) == ["ts"]


def test_replace_tag(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog)
    call(catalog, "create_tag", table="db.t", tag="t", snapshot=1, time_retained="1 h")
    assert call(catalog, "replace_tag", table="db.t", tag="t", snapshot=2).rows == [(True,)]
    tag = table.tag_manager.get("t")
    assert tag.snapshot_id == 2
    assert tag.tag_time_retained is None  # omitting time_retained drops the TTL, as Paimon
    call(catalog, "replace_tag", table="db.t", tag="t")
    assert table.tag_manager.get("t").snapshot_id == 3
    before = fingerprint(warehouse)
    with pytest.raises(ProcedureError, match=r"Tag 'nope' doesn't exist\."):
        call(catalog, "replace_tag", table="db.t", tag="nope")
    assert fingerprint(warehouse) == before


def test_rename_tag(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog)
    call(catalog, "create_tag", table="db.t", tag="a", snapshot=1)
    call(catalog, "create_tag", table="db.t", tag="b", snapshot=2)
    assert call(catalog, "rename_tag", table="db.t", tag="a", target_tag="c").rows == [(True,)]
    assert tag_names(table) == ["b", "c"]
    assert table.tag_manager.get("c").snapshot_id == 1
    before = fingerprint(warehouse)
    for named, message in [
        ({"tag": "zz", "target_tag": "d"}, "Tag 'zz' doesn't exist."),
        ({"tag": "b", "target_tag": "c"}, "Tag 'c' already exists."),
        ({"tag": "b", "target_tag": "../evil"}, "must not contain"),
        ({"tag": "b"}, "Required parameters [target_tag] is missed."),
    ]:
        with pytest.raises(ProcedureError) as err:
            call(catalog, "rename_tag", table="db.t", **named)
        assert message in str(err.value)
    assert fingerprint(warehouse) == before


def test_delete_tag_list_and_missing(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog)
    for name, snapshot in (("a", 1), ("b", 2), ("c", 3)):
        call(catalog, "create_tag", table="db.t", tag=name, snapshot=snapshot)
    assert call(catalog, "delete_tag", table="db.t", tag=" a , nope,b").rows == [(True,)]
    assert tag_names(table) == ["c"]
    assert call(catalog, "delete_tag", table="db.t", tag="nope").rows == [(True,)]
    before = fingerprint(warehouse)
    with pytest.raises(ProcedureError, match="blank"):
        call(catalog, "delete_tag", table="db.t", tag="c,,")
    assert fingerprint(warehouse) == before
    assert tag_names(table) == ["c"]


def test_expire_tags(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    table = new_table(catalog)
    call(catalog, "create_tag", table="db.t", tag="plain", snapshot=1)
    call(catalog, "create_tag", table="db.t", tag="ttl", snapshot=2, time_retained="1 d")
    result = call(catalog, "expire_tags", table="db.t")
    assert result.columns == EXPIRE_TAGS_OUTPUT
    assert result.rows == [("No expired tags.",)]
    assert call(catalog, "expire_tags", "db.t", "2000-01-01 00:00:00").rows == [
        ("No expired tags.",)
    ]
    assert tag_names(table) == ["plain", "ttl"]
    # older_than in the future: every tag was created before it, TTL or not.
    result = call(catalog, "expire_tags", table="db.t", older_than="2999-12-31 23:59:59.999")
    assert result.rows == [("plain",), ("ttl",)]
    assert tag_names(table) == []


def _tagged_and_expired(warehouse: str) -> tuple[FileSystemCatalog, FileStoreTable]:
    """Tags on snapshots 1 and 2; both overwritten, and snapshots 1-3 expired."""
    catalog = new_catalog(warehouse)
    table = new_table(catalog, commits=2)
    call(catalog, "create_tag", table="db.t", tag="one", snapshot=1, time_retained="1 s")
    call(catalog, "create_tag", table="db.t", tag="two", snapshot=2, time_retained="1 s")
    table.write_arrow(
        pa.table({"id": [7], "name": ["x"], "dt": ["2024-01-01"]}, SCHEMA), overwrite=True
    )
    table.write_arrow(
        pa.table({"id": [8], "name": ["y"], "dt": ["2024-01-02"]}, SCHEMA), overwrite=True
    )
    expire_snapshots(table, retain_max=1, retain_min=1, older_than_millis=2**62)
    assert table.snapshot_manager.list_snapshot_ids() == [4]
    return catalog, table


def test_delete_tag_dry_run_lists_files_and_changes_nothing(warehouse: str) -> None:
    catalog, table = _tagged_and_expired(warehouse)
    before = fingerprint(warehouse)
    result = call(catalog, "delete_tag", table="db.t", tag="two", dry_run=True)
    assert result.columns == (*RESULT, DRY_RUN_COLUMN)
    assert fingerprint(warehouse) == before
    assert {row[0] for row in result.rows} == {True}
    files = [row[1] for row in result.rows]
    assert files[0] == table.tag_manager.tag_path("two")
    assert any(f.endswith(".parquet") for f in files)  # the data only tag two kept alive
    assert len(files) == len(set(files))
    assert call(catalog, "delete_tag", table="db.t", tag="two").rows == [(True,)]
    assert not any(map(os.path.exists, files))
    assert tag_names(table) == ["one"]
    missing = call(catalog, "delete_tag", table="db.t", tag="nope", dry_run=True)
    assert missing.rows == [(True, None)]


def test_expire_tags_dry_run_lists_files_and_changes_nothing(
    warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog, table = _tagged_and_expired(warehouse)
    assert call(catalog, "expire_tags", "db.t", None, True).rows == [("No expired tags.", None)]
    real = tag_management.expire_tags
    later = dt.datetime.now() + dt.timedelta(minutes=1)  # the 1-second TTLs have passed
    monkeypatch.setattr(tag_management, "expire_tags", lambda *a, **kw: real(*a, now=later, **kw))
    before = fingerprint(warehouse)
    dry = call(catalog, "expire_tags", table="db.t", dry_run=True)
    assert dry.columns == (*EXPIRE_TAGS_OUTPUT, DRY_RUN_COLUMN)
    assert fingerprint(warehouse) == before
    assert {row[0] for row in dry.rows} == {"one,two"}
    files = [row[1] for row in dry.rows]
    manager = table.tag_manager
    assert files[:2] == [manager.tag_path("one"), manager.tag_path("two")]
    assert any(f.endswith(".parquet") for f in files)
    assert call(catalog, "expire_tags", table="db.t").rows == [("one",), ("two",)]
    assert not any(map(os.path.exists, files))
    assert tag_names(table) == []


@pytest.mark.parametrize(
    ("name", "named", "message"),
    [
        ("create_tag", {"tag": "a\\b"}, r"must not contain '\\'"),
        ("create_tag", {"tag": ".."}, r"must not contain '\.\.'"),
        ("create_tag", {"tag": "."}, r"must not start with '\.'"),
        ("replace_tag", {"tag": "../../snapshot/snapshot-1"}, "must not contain"),
        ("rename_tag", {"tag": "a", "target_tag": "..\\x"}, "must not contain"),
        ("rename_tag", {"tag": "../tag/tag-a", "target_tag": "x"}, "must not contain"),
        ("delete_tag", {"tag": "a,../../snapshot/snapshot-1"}, "must not contain"),
        ("create_branch", {"branch": "b", "tag": "../tag/tag-a"}, "must not contain"),
        ("rollback", {"version": "../tag/tag-a"}, "must not contain"),
    ],
)
def test_tag_names_that_leave_the_tag_directory_are_refused(
    warehouse: str, name: str, named: dict[str, str], message: str
) -> None:
    """Paimon checks only that tag names are not blank; nothing in or beside the warehouse
    changes here."""
    catalog = new_catalog(warehouse)
    table = new_table(catalog)
    call(catalog, "create_tag", table="db.t", tag="a", snapshot=1)
    beside = os.path.dirname(warehouse)
    before = fingerprint(beside)
    with pytest.raises(ProcedureError, match=f"CALL sys.{name}: .*{message}") as info:
        call(catalog, name, table="db.t", **named)
    assert "\n" not in str(info.value)
    assert fingerprint(beside) == before
    assert tag_names(table) == ["a"]

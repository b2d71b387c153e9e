"""Branch procedures through ``call_procedure``: Paimon-Spark's arguments and results."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from procedures import ProcedureError
from procedures.tags import RESULT
from tests.unit.procedures.helpers import SCHEMA, call, fingerprint, new_catalog, new_table


def _ids(catalog: FileSystemCatalog, name: str) -> list[int]:
    return sorted(catalog.get_table(name).to_arrow().column("id").to_pylist())


def test_create_branch_from_a_tag_and_empty(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    new_table(catalog, commits=2)
    call(catalog, "create_tag", table="db.t", tag="tag1", snapshot=1)
    result = call(catalog, "create_branch", table="db.t", branch="b1", tag="tag1")
    assert result.columns == RESULT and result.rows == [(True,)]
    assert call(catalog, "create_branch", "db.t", "e").rows == [(True,)]  # positional
    assert _ids(catalog, "db.t$branch_b1") == [0, 100]
    assert _ids(catalog, "db.t$branch_e") == []
    root = catalog.get_table("db.t").path
    assert sorted(os.listdir(f"{root}/branch")) == ["branch-b1", "branch-e"]
    # From a branch table: its tags (the copied tag1) and schemas.
    call(catalog, "create_branch", table="db.t$branch_b1", branch="b2", tag="tag1")
    assert _ids(catalog, "db.t$branch_b2") == [0, 100]


@pytest.mark.parametrize("value", ["true", "TRUE", "True"])
def test_ignore_if_exists_is_a_string_read_as_java_parse_boolean(
    warehouse: str, value: str
) -> None:
    catalog = new_catalog(warehouse)
    new_table(catalog, commits=1)
    call(catalog, "create_branch", table="db.t", branch="b")
    before = fingerprint(warehouse)
    assert call(catalog, "create_branch", table="db.t", branch="b", ignoreIfExists=value).rows == [
        (True,)
    ]
    assert fingerprint(warehouse) == before
    with pytest.raises(ProcedureError, match="Branch name 'b' already exists"):
        call(catalog, "create_branch", table="db.t", branch="b", ignoreifexists="yes")


def test_delete_rename_fast_forward_and_merge(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    new_table(catalog, commits=1)
    call(catalog, "create_tag", table="db.t", tag="t1")
    for name in ("a", "b", "c"):
        call(catalog, "create_branch", table="db.t", branch=name, tag="t1")
    assert call(catalog, "delete_branch", table="db.t", branch="b,c").rows == [(True,)]
    assert call(catalog, "rename_branch", "db.t", "a", "x").rows == [(True,)]
    root = catalog.get_table("db.t").path
    assert os.listdir(f"{root}/branch") == ["branch-x"]
    branch = catalog.get_table("db.t$branch_x")
    branch.write_arrow(pa.table({"id": [7], "name": ["s"], "dt": ["d"]}, SCHEMA))
    assert call(catalog, "merge_branch", table="db.t", source_branch="x").rows == [(True,)]
    assert _ids(catalog, "db.t") == [0, 7, 100]
    call(catalog, "create_branch", table="db.t", branch="y", tag="t1")
    assert call(catalog, "fast_forward", table="db.t", branch="y").rows == [(True,)]
    assert _ids(catalog, "db.t") == [0, 100]
    assert catalog.get_table("db.t").snapshot_manager.list_snapshot_ids() == [1]


@pytest.mark.parametrize(
    ("name", "named", "message"),
    [
        ("create_branch", {"branch": "main"}, "is the default branch and cannot be used"),
        ("create_branch", {"branch": "12"}, "cannot be pure numeric string"),
        ("create_branch", {"branch": "b", "tag": "nope"}, "Tag 'nope' doesn't exist"),
        ("create_branch", {"branch": None}, "Argument branch must not be NULL"),
        ("delete_branch", {"branch": "nope"}, "Branch name 'nope' doesn't exist"),
        ("delete_branch", {"branch": "e,nope"}, "Branch name 'nope' doesn't exist"),
        ("rename_branch", {"from_branch": "main", "to_branch": "x"}, "Cannot rename the main"),
        ("rename_branch", {"from_branch": "e", "to_branch": "e"}, "'e' already exists"),
        ("fast_forward", {"branch": "main"}, "do not use in fast-forward"),
        ("fast_forward", {"branch": "e"}, "because it does not have snapshot"),
        ("merge_branch", {"source_branch": "e"}, "because it does not have snapshot"),
        ("merge_branch", {"source_branch": "main"}, "Cannot merge branch 'main' into itself"),
    ],
)
def test_errors_change_nothing(
    warehouse: str, name: str, named: dict[str, str | None], message: str
) -> None:
    catalog = new_catalog(warehouse)
    new_table(catalog, commits=1)
    call(catalog, "create_branch", table="db.t", branch="e")
    before = fingerprint(warehouse)
    with pytest.raises(ProcedureError, match=f"CALL sys.{name}: .*{message}"):
        call(catalog, name, table="db.t", **named)
    assert fingerprint(warehouse) == before


def test_missing_arguments_and_tables(warehouse: str) -> None:
    catalog = new_catalog(warehouse)
    new_table(catalog, commits=1)
    with pytest.raises(ProcedureError, match=r"Required parameters \[branch\] is missed"):
        call(catalog, "create_branch", table="db.t")
    with pytest.raises(ProcedureError, match=r"Required parameters \[from_branch,to_branch\]"):
        call(catalog, "rename_branch", table="db.t")
    with pytest.raises(ProcedureError, match=r"Table db\.nope does not exist"):
        call(catalog, "create_branch", table="db.nope", branch="b")
    with pytest.raises(ProcedureError, match=r"Branch nope of table db\.t does not exist"):
        call(catalog, "create_branch", table="db.t$branch_nope", branch="b")


@pytest.mark.parametrize(
    ("name", "named", "message"),
    [
        # Paimon takes these (validateBranch checks only main/blank/digits): each would be
        # a directory outside `branch/`, here the table's own `snapshot/` or beside it.
        ("delete_branch", {"branch": "e/../../snapshot"}, r"'e/\.\./\.\./snapshot' must not"),
        ("delete_branch", {"branch": "e,.."}, r"Branch name '\.\.' must not be '\.' or"),
        ("create_branch", {"branch": "../../../x"}, "must not contain '/'"),
        ("create_branch", {"branch": "a\\b"}, r"must not contain '\\'"),
        ("create_branch", {"branch": ".."}, r"must not contain '\.\.'"),
        ("rename_branch", {"from_branch": "e/../..", "to_branch": "x"}, "must not contain '/'"),
        ("rename_branch", {"from_branch": "e", "to_branch": "../../../../moved"}, "'/'"),
        ("fast_forward", {"branch": "e/../../branch/branch-e"}, "must not contain '/'"),
        ("merge_branch", {"source_branch": "e/.."}, "must not contain '/'"),
        ("merge_branch", {"source_branch": "e", "target_branch": "e/.."}, "must not contain"),
    ],
)
def test_branch_names_that_leave_the_branch_directory_are_refused(
    warehouse: str, name: str, named: dict[str, str], message: str
) -> None:
    """Nothing in or beside the warehouse changes: before the check, `delete_branch` of
    `e/../../snapshot` deleted the table's snapshots."""
    catalog = new_catalog(warehouse)
    new_table(catalog, commits=1)
    call(catalog, "create_branch", table="db.t", branch="e")
    beside = os.path.dirname(warehouse)
    before = fingerprint(beside)
    with pytest.raises(ProcedureError, match=f"CALL sys.{name}: .*{message}") as info:
        call(catalog, name, table="db.t", **named)
    assert "\n" not in str(info.value)
    assert fingerprint(beside) == before
    assert _ids(catalog, "db.t") == [0, 100]


@pytest.mark.parametrize("table", ["db.t$branch_e/x", "db.t$branch_a\\b", "x/y.t", "db.x/y"])
def test_a_table_argument_naming_a_path_is_refused(warehouse: str, table: str) -> None:
    """(`.` splits the identifier, so `..` cannot reach a name here.)"""
    catalog = new_catalog(warehouse)
    new_table(catalog, commits=1)
    call(catalog, "create_branch", table="db.t", branch="e")
    beside = os.path.dirname(warehouse)
    before = fingerprint(beside)
    with pytest.raises(ProcedureError, match=r"CALL sys\.create_tag: .*must not") as info:
        call(catalog, "create_tag", table=table, tag="t1")
    assert "\n" not in str(info.value)
    assert fingerprint(beside) == before

"""``format.names``: every name that becomes a path, checked once, and the path builders that
refuse names leaving their directory (issue 19, point 2)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from paimon_core.exceptions import (
    InvalidArgument,
    InvalidBranchName,
    InvalidTagName,
    PaimonError,
)
from paimon_core.format.consumer import ConsumerManager
from paimon_core.format.names import (
    PATH_OPTIONS,
    check_branch,
    check_path_option,
    check_path_segment,
    validate_branch_name,
    validate_consumer_id,
    validate_database_name,
    validate_path_options,
    validate_table_name,
)
from paimon_core.format.paths import branch_path
from paimon_core.format.schema import SchemaManager
from paimon_core.format.snapshot import SnapshotManager
from paimon_core.format.tag import TagManager
from paimon_core.io.fileio import LocalFileIO

UNSAFE = [
    ("a/b", "must not contain '/'"),
    ("../x", "must not contain '/'"),
    ("a\\b", "must not contain '\\'"),
    ("..", "must not be '.' or '..'"),
    (".", "must not be '.' or '..'"),
    ("a\x00b", "must not contain a NUL character"),
    ("", "must not be empty"),
]


@pytest.mark.parametrize(("name", "message"), UNSAFE)
def test_a_segment_must_stay_one_directory_entry(name: str, message: str) -> None:
    with pytest.raises(InvalidArgument, match=re.escape(message)) as info:
        check_path_segment(name, "Thing name")
    assert str(info.value).startswith("Thing name") and "\n" not in str(info.value)


@pytest.mark.parametrize("name", ["a", "a.b", "...", "a..b", ".hidden", "x y", "é", "$t"])
def test_other_segments_pass(name: str) -> None:
    check_path_segment(name, "Thing name")


def test_a_segment_error_has_the_callers_type() -> None:
    with pytest.raises(InvalidTagName):
        check_path_segment("a/b", "Tag name", InvalidTagName)
    with pytest.raises(InvalidArgument, match="must be a string, not int"):
        check_path_segment(5, "Thing name")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        # Paimon's BranchManager.validateBranch, with its messages.
        ("main", "Branch name 'main' is the default branch and cannot be used."),
        ("  ", "Branch name '  ' is blank."),
        ("123", "Branch name cannot be pure numeric string but is '123'."),
        # Stricter than Paimon (a safe directory and one `t$branch_<name>`).
        ("a/b", "must not contain '/'"),
        ("a\\b", "must not contain '\\'"),
        ("..", "must not contain '..'"),
        ("a$b", "must not contain '$'"),
        (".x", "must not start with '.'"),
        (" x", "must not start or end with whitespace"),
        ("a\tb", "must not contain control characters"),
        ("b" * 201, "201 bytes long"),
    ],
)
def test_new_branch_names(name: str, message: str) -> None:
    with pytest.raises(InvalidBranchName, match=re.escape(message)):
        validate_branch_name(name)


@pytest.mark.parametrize(("name", "message"), [u for u in UNSAFE if u[0]])
def test_a_branch_reference_must_stay_in_the_branch_directory(name: str, message: str) -> None:
    with pytest.raises(InvalidBranchName, match=f"Branch name .*{re.escape(message)}"):
        check_branch(name)
    with pytest.raises(InvalidBranchName, match=re.escape(message)):
        branch_path("/wh/db.db/t", name)


def test_branch_references_normalize_as_paimon() -> None:
    assert check_branch(None) == check_branch("") == check_branch("  ") == "main"
    assert check_branch("main") == "main"
    # Branches other writers may have made stay reachable (Java allows them).
    assert check_branch(".x") == ".x" and check_branch("a..b") == "a..b"
    assert branch_path("/wh/db.db/t", "a..b") == "/wh/db.db/t/branch/branch-a..b"
    assert branch_path("/wh/db.db/t", None) == branch_path("/wh/db.db/t", "main") == "/wh/db.db/t"


def test_consumer_ids() -> None:
    assert validate_consumer_id("reader-1") == "reader-1"
    for blank in (None, "", "  "):
        with pytest.raises(InvalidArgument, match=r"^consumer id cannot be empty string\.$"):
            validate_consumer_id(blank)
    for name, message in UNSAFE[:-1]:
        with pytest.raises(InvalidArgument, match=f"Consumer id .*{re.escape(message)}"):
            validate_consumer_id(name)


@pytest.mark.parametrize("check", [validate_database_name, validate_table_name])
def test_database_and_table_names(check: object) -> None:
    for name, message in UNSAFE:
        with pytest.raises(InvalidArgument, match=re.escape(message)):
            check(name)  # type: ignore[operator]
    check(".x")  # type: ignore[operator]  # looked up: only what would leave the directory
    with pytest.raises(InvalidArgument, match=r"Invalid (database|table) name '\.x'"):
        check(".x", new=True)  # type: ignore[operator]
    with pytest.raises(InvalidArgument, match="201 bytes long"):
        check("n" * 201, new=True)  # type: ignore[operator]


def test_new_table_names_refuse_the_system_table_separator() -> None:
    with pytest.raises(InvalidArgument, match=r"Table name 'a\$b' must not contain '\$'"):
        validate_table_name("a$b", new=True)
    validate_table_name("a$b")  # `t$branch_b` and `t$snapshots` are looked up


@pytest.mark.parametrize(
    ("key", "value", "error", "message"),
    [
        ("branch", "../../..", InvalidBranchName, "must not contain '/'"),
        ("branch", "..", InvalidBranchName, "must not be '.' or '..'"),
        ("scan.fallback-branch", "a/b", InvalidBranchName, "must not contain '/'"),
        ("scan.primary-branch", "a\\b", InvalidBranchName, "must not contain '\\'"),
        ("scan.tag-name", "../t", InvalidTagName, "must not contain"),
        ("incremental-to-auto-tag", "a/b", InvalidTagName, "must not contain '/'"),
        ("tag.batch.customized-name", "../../x", InvalidTagName, "must not contain"),
        ("consumer-id", "a/b", InvalidArgument, "must not contain '/'"),
        ("consumer-id", " ", InvalidArgument, "consumer id cannot be empty string"),
        ("data-file.prefix", "../x-", InvalidArgument, "must not contain '/'"),
        ("changelog-file.prefix", "..", InvalidArgument, "must not be '.' or '..'"),
        ("data-file.path-directory", "/abs", InvalidArgument, "relative to the table"),
        ("data-file.path-directory", "a/../../x", InvalidArgument, "must not be '.' or '..'"),
    ],
)
def test_options_naming_paths(key: str, value: str, error: type[PaimonError], message: str) -> None:
    assert key in PATH_OPTIONS
    with pytest.raises(error, match=re.escape(message)):
        check_path_option(key, value)
    with pytest.raises(error) as info:
        validate_path_options({"bucket": "2", key: value}, " of table db.t")
    assert str(info.value).startswith(f"Option '{key}' = '{value}' of table db.t: ")
    assert "\n" not in str(info.value)


def test_harmless_option_values_pass() -> None:
    validate_path_options(
        {
            "branch": "",
            "scan.fallback-branch": "main",
            "scan.tag-name": "daily",
            "data-file.prefix": "",
            "changelog-file.prefix": "cl-",
            "data-file.path-directory": "data/dir",
            "path": "/anywhere/../else",  # not a name: the catalog sets the table's path
            "x": "../..",
        }
    )


def test_path_builders_refuse_before_any_io(tmp_path: Path) -> None:
    """Every manager builds its paths through the checks: a name that slips past an entry
    point still cannot reach the file system."""
    table = str(tmp_path / "wh" / "db.db" / "t")
    os.makedirs(table)
    io = LocalFileIO()
    for make in (SchemaManager, SnapshotManager, TagManager, ConsumerManager):
        with pytest.raises(InvalidBranchName, match="must not contain '/'"):
            make(io, table, "x/../../../..")  # type: ignore[operator]
    tags = TagManager(io, table)
    for name in ("../x", "..", "a\\b"):
        with pytest.raises(InvalidTagName):
            tags.tag_exists(name)
    consumers = ConsumerManager(io, table)
    with pytest.raises(InvalidArgument, match="must not contain '/'"):
        consumers.delete_consumer("../../schema/schema-0")
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == [
        "wh",
        "wh/db.db",
        "wh/db.db/t",
    ]

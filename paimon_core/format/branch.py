"""Branch names and the ``branch/branch-<name>/`` directories (Paimon's ``BranchManager``).

A branch is a directory ``<table>/branch/branch-<name>/`` holding its own ``schema/``,
``snapshot/``, ``tag/``, ``changelog/`` and ``consumer/`` directories; data files,
manifests, index and statistics files live in the table's directories, shared by every
branch. A branch exists while its directory does (``FileSystemBranchManager.branchExists``).
"""

from __future__ import annotations

from paimon_core.exceptions import InvalidBranchName
from paimon_core.format.paths import (
    BRANCH_DIR,
    BRANCH_PREFIX,
    DEFAULT_BRANCH,
    MAX_NAME_BYTES,
    branch_path,
)
from paimon_core.io.fileio import FileIO

__all__ = ["branch_exists", "list_branches", "validate_branch_name"]

_FORBIDDEN = ("/", "\\", "..", "$")


def list_branches(file_io: FileIO, table_path: str) -> list[str]:
    """Names of the table's branches (``main`` not included), sorted.

    Paimon's ``branches()`` lists the directories named ``branch-<name>``; hidden or
    otherwise named entries are not branches."""
    cut = len(BRANCH_PREFIX)
    return sorted(
        s.name[cut:]
        for s in file_io.list_status(f"{table_path.rstrip('/')}/{BRANCH_DIR}")
        if s.is_dir and s.name.startswith(BRANCH_PREFIX) and len(s.name) > cut
    )


def branch_exists(file_io: FileIO, table_path: str, branch: str) -> bool:
    """Whether ``branch`` exists: ``main`` always, another while its directory does."""
    if branch == DEFAULT_BRANCH:
        return True
    return file_io.exists(branch_path(table_path, branch))


def validate_branch_name(name: str) -> None:
    """Paimon's ``BranchManager.validateBranch`` (not ``main``, not blank, not only digits),
    plus what keeps ``branch/branch-<name>`` one safe directory and ``t$branch_<name>`` one
    table name: no path separator, ``..``, ``$``, control character, leading dot, surrounding
    whitespace, nor more than ``MAX_NAME_BYTES`` bytes.

    Raises:
        InvalidBranchName: with Paimon's message where Paimon rejects the name too.
    """
    if not isinstance(name, str):
        raise InvalidBranchName(f"Branch name '{name}' is blank.")
    if name == DEFAULT_BRANCH:
        raise InvalidBranchName(
            f"Branch name '{DEFAULT_BRANCH}' is the default branch and cannot be used."
        )
    if not name.strip():
        raise InvalidBranchName(f"Branch name '{name}' is blank.")
    if name.isdecimal():
        raise InvalidBranchName(f"Branch name cannot be pure numeric string but is '{name}'.")
    if name != name.strip():
        raise InvalidBranchName(f"Branch name {name!r} must not start or end with whitespace.")
    for bad in _FORBIDDEN:
        if bad in name:
            raise InvalidBranchName(f"Branch name '{name}' must not contain '{bad}'.")
    if any(c < " " or "\x7f" <= c <= "\x9f" or c in "\u2028\u2029" for c in name):
        raise InvalidBranchName(f"Branch name {name!r} must not contain control characters.")
    if name.startswith("."):
        raise InvalidBranchName(f"Branch name '{name}' must not start with '.'.")
    size = len(name.encode("utf-8", "surrogatepass"))
    if size > MAX_NAME_BYTES:
        raise InvalidBranchName(
            f"Branch name is {size} bytes long; at most {MAX_NAME_BYTES} bytes are allowed."
        )

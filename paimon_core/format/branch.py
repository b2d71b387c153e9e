"""The ``branch/branch-<name>/`` directories (Paimon's ``BranchManager``); branch names are
checked in ``format.names``.

A branch is a directory ``<table>/branch/branch-<name>/`` holding its own ``schema/``,
``snapshot/``, ``tag/``, ``changelog/`` and ``consumer/`` directories; data files,
manifests, index and statistics files live in the table's directories, shared by every
branch. A branch exists while its directory does (``FileSystemBranchManager.branchExists``).
"""

from __future__ import annotations

from paimon_core.format.paths import BRANCH_DIR, BRANCH_PREFIX, DEFAULT_BRANCH, branch_path
from paimon_core.io.fileio import FileIO

__all__ = ["branch_exists", "list_branches"]


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

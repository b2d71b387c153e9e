"""Every name that becomes a path, checked in one place: branches, tags, consumer ids,
databases, tables and the table options that name files or directories.

Apache Paimon (2.1) checks few of these names, and none as a path:

* ``BranchManager.validateBranch`` (creating a branch): not ``main``, not blank, not only
  digits; ``normalizeBranch``: a missing or blank branch is ``main``;
* ``TagManager`` (creating, replacing, renaming, deleting a tag): ``Tag name shouldn't be
  blank.`` (``Original``/``New tag name`` for renames);
* ``CoreOptions.consumerId``: ``consumer id cannot be empty string.``;
* ``CatalogUtils.checkNotSystemDatabase`` / ``checkNotSystemTable`` / ``checkNotBranch``:
  which databases and tables DDL may touch, not how they are spelled.

A name reaches the file system unchanged (``branch/branch-<name>``, ``tag/tag-<name>``,
``consumer/consumer-<id>``, ``<warehouse>/<db>.db/<table>``), so in Java a ``branch`` option
of ``../../x`` puts snapshots outside the table. This module is stricter than Paimon on
purpose: a name that would not stay one directory entry (``check_path_segment``: a ``/`` or
``\\``, a NUL, ``.`` or ``..``, empty) is refused wherever it enters (table options, dynamic
options, procedure arguments, tag DDL, ``t$branch_<name>``) and again where the path is built
(``paths.branch_path``, ``TagManager.tag_path``, ``ConsumerManager.consumer_path``,
``FileSystemCatalog.database_path``/``table_path``), so that no entry point can be missed.
Names this implementation creates follow stricter rules still (``validate_branch_name``,
``validate_tag_name(new=True)``, ``validate_database_name(new=True)``): see each function.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from paimon_core.exceptions import (
    InvalidArgument,
    InvalidBranchName,
    InvalidTagName,
    PaimonError,
)

__all__ = [
    "BRANCH_OPTIONS",
    "DEFAULT_BRANCH",
    "MAX_NAME_BYTES",
    "PATH_OPTIONS",
    "check_branch",
    "check_path_option",
    "check_path_segment",
    "validate_branch_name",
    "validate_consumer_id",
    "validate_database_name",
    "validate_path_options",
    "validate_table_name",
    "validate_tag_name",
]

DEFAULT_BRANCH = "main"
# File names are limited to 255 bytes. A tag is ``tag-<name>``, written through a temp file
# ``.tag-<name>.<uuid>.tmp`` (46 more bytes); databases (``<name>.db``) and tables get the same
# limit, so every name a user creates fits wherever it is used in a file name.
MAX_NAME_BYTES = 200

_SEPARATORS = ("/", "\\")
# Unsafe inside names this implementation creates or looks up as branches and tags: a path
# separator, ``..`` (``a/../b`` once a separator slips through), and for branches ``$``
# (``t$branch_a$b`` would not name branch ``a$b``).
_TAG_FORBIDDEN = ("/", "\\", "..")
_BRANCH_FORBIDDEN = ("/", "\\", "..", "$")


def _size(name: str) -> int:
    return len(name.encode("utf-8", "surrogatepass"))


def _has_control(name: str) -> bool:
    return any(c < " " or "\x7f" <= c <= "\x9f" or c in "\u2028\u2029" for c in name)


def check_path_segment(name: str, what: str, error: type[PaimonError] = InvalidArgument) -> None:
    """Refuse ``name`` unless it stays one directory entry once it is part of a path.

    Stricter than Paimon, which checks none of this: a name holding ``/`` or ``\\``, or one
    that is ``.`` or ``..``, would make Java (and this implementation, before this check)
    read and write outside the table or warehouse; a NUL cannot be in a file name at all.
    The empty name is refused too (``<db>.db/`` + ``''`` is the database itself).

    Raises:
        error: one line, ``<what> '<name>' must not ...``.
    """
    if not isinstance(name, str):
        raise error(f"{what} must be a string, not {type(name).__name__}.")
    if not name:
        raise error(f"{what} must not be empty.")
    for bad in _SEPARATORS:
        if bad in name:
            raise error(f"{what} '{name}' must not contain '{bad}'.")
    if "\x00" in name:
        raise error(f"{what} {name!r} must not contain a NUL character.")
    if name in (".", ".."):
        raise error(f"{what} '{name}' must not be '.' or '..'.")


# ------------------------------------------------------------------------------ branches


def validate_branch_name(name: str) -> None:
    """Accept only a name a new branch may have: Paimon's ``BranchManager.validateBranch``
    (not ``main``, not blank, not only digits), plus what keeps ``branch/branch-<name>`` one
    safe directory and ``t$branch_<name>`` one table name: no path separator, ``..``, ``$``,
    control character, leading dot, surrounding whitespace, nor more than ``MAX_NAME_BYTES``
    bytes.

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
    for bad in _BRANCH_FORBIDDEN:
        if bad in name:
            raise InvalidBranchName(f"Branch name '{name}' must not contain '{bad}'.")
    if _has_control(name):
        raise InvalidBranchName(f"Branch name {name!r} must not contain control characters.")
    if name.startswith("."):
        raise InvalidBranchName(f"Branch name '{name}' must not start with '.'.")
    size = _size(name)
    if size > MAX_NAME_BYTES:
        raise InvalidBranchName(
            f"Branch name is {size} bytes long; at most {MAX_NAME_BYTES} bytes are allowed."
        )


def check_branch(name: str | None, what: str = "Branch name") -> str:
    """The branch ``name`` refers to (Paimon's ``normalizeBranch``: None or blank is
    ``main``), refused unless ``branch/branch-<name>`` is one directory of the table
    (``check_path_segment``; stricter than Paimon, see the module docstring).

    This is the check of a branch that should exist (an option, ``t$branch_<name>``, a
    procedure argument): branches other writers created keep working. New branches also
    pass ``validate_branch_name``.

    Raises:
        InvalidBranchName: the name would leave the table's ``branch`` directory.
    """
    if name is None or (isinstance(name, str) and not name.strip()):
        return DEFAULT_BRANCH
    check_path_segment(name, what, InvalidBranchName)
    return name


# ---------------------------------------------------------------------------------- tags


def validate_tag_name(
    name: str, what: str = "Tag name", *, allow_numeric: bool = True, new: bool = False
) -> None:
    """Reject a name Paimon rejects (blank) or that is unsafe as ``tag/tag-<name>``.

    Stricter than Paimon (which checks only blank names): no path separator, ``..``,
    control character or leading dot. ``new`` is for names about to be created: they must
    not start or end with whitespace (``delete_tag`` trims names, so such a tag could never
    be deleted) and must fit in a file name (at most ``MAX_NAME_BYTES`` bytes of UTF-8).
    ``allow_numeric=False`` is for names a user is about to create: a purely numeric one
    would read as a snapshot id wherever a version string is accepted.

    Raises:
        InvalidTagName: blank, a path separator, ``..``, a control character or a leading dot;
            for new names also surrounding whitespace or too long; only digits when
            ``allow_numeric`` is False.
    """
    if not isinstance(name, str) or not name.strip():
        raise InvalidTagName(f"{what} shouldn't be blank.")
    if new:
        if name != name.strip():
            raise InvalidTagName(f"{what} {name!r} must not start or end with whitespace.")
        size = _size(name)
        if size > MAX_NAME_BYTES:
            raise InvalidTagName(
                f"{what} is {size} bytes long; at most {MAX_NAME_BYTES} bytes are allowed."
            )
    for bad in _TAG_FORBIDDEN:
        if bad in name:
            raise InvalidTagName(f"{what} '{name}' must not contain '{bad}'.")
    if _has_control(name):
        raise InvalidTagName(f"{what} {name!r} must not contain control characters.")
    if name.startswith("."):
        raise InvalidTagName(f"{what} '{name}' must not start with '.'.")
    if not allow_numeric and name.strip().isdecimal():
        raise InvalidTagName(
            f"{what} '{name}' must not be purely numeric (it would read as a snapshot id)."
        )


# ----------------------------------------------------------------------------- consumers


def validate_consumer_id(consumer_id: str | None) -> str:
    """``consumer_id`` if it can name ``consumer/consumer-<id>``: Paimon's ``consumer id
    cannot be empty string.`` for a blank id, and ``check_path_segment`` (stricter than
    Paimon, which would write ``consumer-a/b`` into a new directory ``consumer-a``).

    Raises:
        InvalidArgument: blank, or not one directory entry.
    """
    if consumer_id is None or (isinstance(consumer_id, str) and not consumer_id.strip()):
        raise InvalidArgument("consumer id cannot be empty string.")
    check_path_segment(consumer_id, "Consumer id")
    return consumer_id


# ------------------------------------------------------------------- databases and tables


def _validate_catalog_name(kind: str, name: str, new: bool) -> None:
    check_path_segment(name, f"{kind.capitalize()} name")
    if not new:
        return
    if not name.strip() or name.startswith("."):
        raise InvalidArgument(f"Invalid {kind} name '{name}'")
    size = _size(name)
    if size > MAX_NAME_BYTES:
        raise InvalidArgument(
            f"{kind.capitalize()} name '{name[:20]}...' is {size} bytes long; at most "
            f"{MAX_NAME_BYTES} bytes are allowed"
        )


def validate_database_name(name: str, *, new: bool = False) -> None:
    """Refuse a database name whose ``<warehouse>/<name>.db`` would not be one directory of
    the warehouse (``check_path_segment``; Paimon checks only ``sys``, the SQL layer's
    business). ``new`` (CREATE DATABASE) also refuses blank names, a leading dot (a hidden
    directory) and more than ``MAX_NAME_BYTES`` bytes.

    Raises:
        InvalidArgument: one line naming the database.
    """
    _validate_catalog_name("database", name, new)


def validate_table_name(name: str, *, new: bool = False) -> None:
    """Refuse a table name whose ``<db>.db/<name>`` would not be one directory of the
    database (``check_path_segment``: ``..`` would be the warehouse itself). ``new`` (CREATE
    TABLE, a rename's target) also refuses blank names, a leading dot, ``$`` (Paimon's system
    table separator) and more than ``MAX_NAME_BYTES`` bytes.

    Raises:
        InvalidArgument: one line naming the table.
    """
    _validate_catalog_name("table", name, new)
    if new and "$" in name:
        raise InvalidArgument(f"Table name '{name}' must not contain '$'")


# ------------------------------------------------------------------------------- options


def _branch_option(value: str) -> None:
    check_branch(value)


def _tag_option(value: str) -> None:
    if value.strip():
        validate_tag_name(value)


def _consumer_option(value: str) -> None:
    validate_consumer_id(value)


def _file_prefix(value: str) -> None:
    if value:
        check_path_segment(value, "File name prefix")


def _relative_directory(value: str) -> None:
    """``data-file.path-directory``: a directory under the table, ``a/b`` allowed."""
    if not value:
        return
    if value.startswith("/") or "\\" in value:
        raise InvalidArgument(f"Directory '{value}' must be relative to the table, with '/'.")
    for part in value.rstrip("/").split("/"):
        check_path_segment(part, f"Directory '{value}' part")


BRANCH_OPTIONS = (
    "branch",
    "scan.fallback-branch",
    "scan.primary-branch",
    "scan.fallback-snapshot-branch",
    "scan.fallback-delta-branch",
)
"""Options naming a branch (``branch/branch-<name>``)."""

PATH_OPTIONS: dict[str, Callable[[str], None]] = {
    **dict.fromkeys(BRANCH_OPTIONS, _branch_option),
    "scan.tag-name": _tag_option,
    "incremental-to-auto-tag": _tag_option,
    "tag.batch.customized-name": _tag_option,
    "consumer-id": _consumer_option,
    "data-file.prefix": _file_prefix,
    "changelog-file.prefix": _file_prefix,
    "data-file.path-directory": _relative_directory,
}
"""Table options whose value becomes part of a path, and the check of each. Not here:
``scan.version`` and ``incremental-between`` (snapshot ids or tags: the tag is checked where
``TagManager.tag_path`` builds its path), ``data-file.external-paths`` (absolute locations
by design) and ``partition.default-name`` (escaped as a partition value)."""


def check_path_option(key: str, value: str) -> None:
    """Refuse ``value`` for option ``key`` if the option names a path and the value would
    leave its directory (``PATH_OPTIONS``); any other option passes.

    Raises:
        InvalidBranchName, InvalidTagName, InvalidArgument: the reason, one line.
    """
    check = PATH_OPTIONS.get(key)
    if check is not None:
        check(value)


def validate_path_options(options: Mapping[str, str], where: str = "") -> None:
    """``check_path_option`` of every option, the error naming the option and ``where``
    (e.g. ``" of table db.t"``): ``Option 'branch' = '../x' of table db.t: Branch name
    '../x' must not contain '/'.``

    Raises:
        InvalidBranchName, InvalidTagName, InvalidArgument: the first bad option.
    """
    for key, value in options.items():
        if key not in PATH_OPTIONS:
            continue
        try:
            check_path_option(key, value)
        except PaimonError as e:
            raise type(e)(f"Option '{key}' = '{value}'{where}: {e}") from None

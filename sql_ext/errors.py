"""Errors the SQL layer raises for statements it understands but cannot run."""

from __future__ import annotations

from paimon_core.exceptions import PaimonError


class SqlError(PaimonError):
    """A user error found by the session: unknown table, unsupported statement, bad types, ...

    The message is one line and names what was wrong; nothing has been changed.
    """

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(message.split()))


def first_line(error: BaseException) -> str:
    """The first non-blank line of an error (Spark's messages start with a newline)."""
    return next((line.strip() for line in str(error).splitlines() if line.strip()), repr(error))

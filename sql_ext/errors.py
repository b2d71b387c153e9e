"""Errors the SQL layer raises for statements it understands but cannot run, and the
translation of Spark's errors about a rewritten statement back to the statement as written."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

from sqlglot.errors import ParseError

from paimon_core.exceptions import PaimonError
from sql_ext.splice import Spliced, position

QUERY_CONTEXT_LOGGERS = ("SQLQueryContextLogger", "DataFrameQueryContextLogger")
"""PySpark's loggers that print every failed query as JSON on stderr before it is raised."""


class SqlError(PaimonError):
    """A user error found by the session: unknown table, unsupported statement, bad types, ...

    The message is one line and names what was wrong; nothing has been changed.
    """

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(message.split()))


class SqlParseError(ParseError):
    """A statement that cannot be parsed; the message is always a single line."""

    def __init__(self, description: str, line: int | None = None, col: int | None = None):
        description = " ".join(description.split())
        where = f" (line {line}, col {col})" if line is not None and col is not None else ""
        super().__init__(
            description + where, errors=[{"description": description, "line": line, "col": col}]
        )
        self.description = description
        self.line = line
        self.col = col


def first_line(error: BaseException) -> str:
    """The first non-blank line of an error (Spark's messages start with a newline)."""
    return next((line.strip() for line in str(error).splitlines() if line.strip()), repr(error))


@contextmanager
def quiet_query_logs() -> Iterator[None]:
    """Hold back PySpark's JSON error log of failing queries (internal ones, reported once)."""
    from pyspark.logger import PySparkLogger

    loggers = [PySparkLogger.getLogger(name) for name in QUERY_CONTEXT_LOGGERS]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


_LINE_POS = re.compile(r"(line )(\d+)(,? pos(?:ition)? )(\d+)")


@dataclass(frozen=True, slots=True)
class Rewrite:
    """How a statement was rewritten for Spark, to put Spark's errors back in the user's terms:
    `line L pos P` of the rewritten text becomes the position in `source` (the statement as
    written), and view names become the tables they hold (`views`).

    `prefix` characters (without line breaks) precede the rewritten text, e.g. `EXPLAIN `.
    """

    spliced: Spliced
    source: str
    prefix: int
    views: Mapping[str, str]

    def restore(self, error: BaseException) -> None:
        """Rewrite the message of a pyspark `CapturedException` (what `str()` shows) in place."""
        description = getattr(error, "_desc", None)
        if isinstance(description, str):
            error._desc = self.message(description)  # type: ignore[attr-defined]

    def message(self, text: str) -> str:
        text = _LINE_POS.sub(self._position, text)
        for view, table in self.views.items():
            text = text.replace(view, table)
        return text

    def _position(self, match: re.Match[str]) -> str:
        line, column = int(match.group(2)), int(match.group(4))
        one_based = match.group(3).endswith("position ")
        column -= int(one_based) + (self.prefix if line == 1 else 0)
        lines = self.spliced.text.split("\n")
        if not 1 <= line <= len(lines) or not 0 <= column <= len(lines[line - 1]):
            return match.group()
        offset = sum(len(text) + 1 for text in lines[: line - 1]) + column
        line, column = position(self.source, self.spliced.source_offset(offset))
        return f"{match.group(1)}{line}{match.group(3)}{column + int(one_based)}"

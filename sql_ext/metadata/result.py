"""What the metadata engine gives back: `Rows` it answered, or `ToSpark`.

Kept apart from the engine so that the shell can route without importing the core.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from procedures.base import ProcedureResult
    from sql_ext.syntax.parse import Statement

__all__ = ["NO_RESULT", "Rows", "ToSpark"]


@dataclass(frozen=True, slots=True)
class Rows:
    """A statement's result as `sql_ext.output.write_result` takes it (like a DataFrame)."""

    columns: list[str]
    rows: list[tuple[Any, ...]] = field(default_factory=list)

    def collect(self) -> list[tuple[Any, ...]]:
        return self.rows

    @classmethod
    def of(cls, result: ProcedureResult) -> Rows:
        return cls([c.name for c in result.columns], list(result.rows))


NO_RESULT = Rows([])


@dataclass(frozen=True, slots=True)
class ToSpark:
    """A statement left to Spark, with its parse when the engine got that far (so that
    Spark's session does not parse it again)."""

    parsed: Statement | None = None

"""Editing a statement's text in place: every byte stays as the user wrote it but the edited spans.

Regenerating SQL from a syntax tree changes what a statement means (sqlglot renames and
normalises functions, drops comments, moves hints), so the SQL layer replaces only the spans
that name Paimon tables. `Spliced` remembers where each copied piece came from, so that a
position Spark reports in the edited text can be given in the user's text.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Edit", "Spliced", "position", "splice"]


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace `text[start:end]` (an insertion when `start == end`) with `replacement`."""

    start: int
    end: int
    replacement: str


@dataclass(frozen=True, slots=True)
class Spliced:
    """An edited text and, for each piece copied from the source, `(offset, source offset,
    length)` in ascending order."""

    text: str
    copies: tuple[tuple[int, int, int], ...]

    def source_offset(self, offset: int) -> int:
        """Where `offset` of the edited text comes from; replaced or inserted text maps to
        the start of the edit."""
        starts = [new for new, _, _ in self.copies]
        i = bisect.bisect_right(starts, offset) - 1
        if i < 0:
            return self.copies[0][1] if self.copies else 0
        new, old, length = self.copies[i]
        return old + min(offset - new, length)


def splice(
    text: str, edits: Sequence[Edit], pieces: Sequence[tuple[int, int]] | None = None
) -> Spliced:
    """`text` with `edits` applied; with `pieces`, only those `(start, end)` parts of it,
    joined by a space (edits outside them are ignored).

    Raises:
        ValueError: two edits overlap, or an edit straddles the end of a piece.
    """
    ordered = sorted(edits, key=lambda e: (e.start, e.end))
    for before, after in itertools.pairwise(ordered):
        if after.start < before.end:
            raise ValueError(f"Overlapping edits at {before.start} and {after.start}")
    out: list[str] = []
    copies: list[tuple[int, int, int]] = []
    size = 0

    def copy(start: int, end: int) -> None:
        nonlocal size
        if end > start:
            copies.append((size, start, end - start))
            out.append(text[start:end])
            size += end - start

    for n, (start, end) in enumerate(pieces if pieces is not None else [(0, len(text))]):
        if n:
            out.append(" ")
            size += 1
        cursor = start
        for edit in ordered:
            if not (start <= edit.start and edit.end <= end):
                if edit.start < end and edit.end > start:
                    raise ValueError(f"Edit at {edit.start} straddles a piece")
                continue
            copy(cursor, edit.start)
            out.append(edit.replacement)
            size += len(edit.replacement)
            cursor = edit.end
        copy(cursor, end)
    return Spliced("".join(out), tuple(copies))


def position(text: str, offset: int) -> tuple[int, int]:
    """1-based line and 0-based position in the line (Spark's `line L pos P`) of `offset`."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1)

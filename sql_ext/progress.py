"""One-line progress of the driver's own long phases (planning a scan, committing a write),
shown by `paimon-sql` on a terminal; silent everywhere else (notebooks, scripts, tests).

Spark's console progress bar shows the executors' stages; the driver's own work between them
(reading manifests to plan a scan, writing manifests and the snapshot of a commit) would
otherwise look like a hang on a large table. `phase(text)` wraps such work; the shell
installs its status line with `show_phases` when stderr is a terminal.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager

__all__ = ["phase", "show_phases"]

_status: Callable[[str], AbstractContextManager[None]] | None = None


def show_phases(status: Callable[[str], AbstractContextManager[None]] | None) -> None:
    """Show every later `phase` through `status` (a status line's context manager); None
    stops showing them."""
    global _status
    _status = status


@contextlib.contextmanager
def phase(text: str) -> Iterator[None]:
    """`text` on the status line while the block runs, when a shell shows phases."""
    status = _status
    if status is None:
        yield
        return
    with status(text):
        yield

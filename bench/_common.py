"""Small helpers shared by the benchmark scripts (not a test: prints numbers)."""

from __future__ import annotations

import importlib
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def timed(fn: Callable[[], Any]) -> float:
    """Wall-clock milliseconds of one call."""
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000.0


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def calibration_loop() -> None:
    """A fixed piece of pure-Python CPU work (about 0.5 ms on this machine when idle)."""
    total = 0
    for i in range(20_000):
        total += i


class Calibration:
    """Times ``calibration_loop`` between the measured operations of a run, to tell how
    much the machine's load slowed that run down: the shared 2-core machine moves the same
    command by 2-4x between runs.

    Waiting for a core (the run queue) and for the disk's journal make wall times of a
    loaded machine useless for an idle estimate, so the estimate is made from process CPU
    time: on an idle machine a commit's wall time is about its CPU time (system calls on the
    page cache are CPU time). Load still inflates CPU time (the other hyperthread, caches):
    ``factor`` is the loop's median CPU time over its fastest (about 1 when idle), and a
    median CPU time divided by it is the idle-equivalent estimate.
    """

    def __init__(self) -> None:
        self.cpu: list[float] = []

    def sample(self) -> None:
        start = time.process_time()
        calibration_loop()
        self.cpu.append((time.process_time() - start) * 1000.0)

    @property
    def factor(self) -> float:
        return median(self.cpu) / min(self.cpu) if self.cpu else float("nan")

    def line(self) -> str:
        return (
            f"calibration loop CPU time: median {median(self.cpu):.3f} ms, best "
            f"{min(self.cpu):.3f} ms over {len(self.cpu)} samples: load factor {self.factor:.2f}"
        )


def ratio(ours: float, peer: float) -> str:
    return f"{peer / ours:.1f}x faster" if ours < peer else f"{ours / peer:.1f}x slower"


def _find_oracle() -> Path:
    """``PAIMON_ORACLE``, else ``shared/tools/paimon-oracle`` next to an ancestor directory
    (the checkout, or the directory of a git worktree)."""
    if "PAIMON_ORACLE" in os.environ:
        return Path(os.environ["PAIMON_ORACLE"])
    here = Path(__file__).resolve()
    for ancestor in here.parents:
        candidate = ancestor / "shared/tools/paimon-oracle/paimon-oracle"
        if candidate.exists():
            return candidate
    return here.parents[2] / "shared/tools/paimon-oracle/paimon-oracle"


ORACLE = _find_oracle()


def java_bench(*args: Any) -> dict[str, Any] | None:
    """The JSON line of a paimon-oracle ``bench-*`` command (Java Paimon 0.9 timing itself
    inside one warm JVM), or None when the oracle is not there or fails (then said so)."""
    if not ORACLE.exists():
        print(f"(no Java figure: paimon-oracle not found at {ORACLE}; set PAIMON_ORACLE)")
        return None
    env = {**os.environ, "ORACLE_PYTHON": sys.executable}
    proc = subprocess.run(
        [str(ORACLE), *map(str, args)], capture_output=True, text=True, env=env, check=False
    )
    if proc.returncode:
        print(f"(no Java figure: paimon-oracle {args[0]} failed: {proc.stderr.strip()[-300:]})")
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


_READ_CACHES = (
    ("format.manifest", "MANIFEST_CACHE"),
    ("format.manifest", "_HEADS"),  # decoded entry heads (partition, bucket) of manifests
    ("format.schema", "PARSED_SCHEMAS"),
    ("format.snapshot", "PARSED_SNAPSHOTS"),
)


def forget_reads(package: str = "paimon_core") -> None:
    """Empty the process-wide caches of what was read (decoded manifests, parsed schemas and
    snapshots) of ``package`` (a copy of ``paimon_core`` in ``bench/ab.py``), so that the
    next plan reads and decodes everything from storage, as a new process would."""
    for module, name in _READ_CACHES:
        try:
            cache = getattr(importlib.import_module(f"{package}.{module}"), name)
        except (ImportError, AttributeError):
            continue  # an older revision without that cache
        cache.clear()

"""Shared fixtures: a scratch warehouse, the Java oracle, pypaimon, and one SparkSession."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
# PAIMON_ORACLE points elsewhere when the checkout is not next to ``shared`` (a git worktree).
ORACLE = Path(
    os.environ.get(
        "PAIMON_ORACLE", ROOT.parent / "shared" / "tools" / "paimon-oracle" / "paimon-oracle"
    )
)


@pytest.fixture
def warehouse(tmp_path: Path) -> str:
    path = tmp_path / "warehouse"
    path.mkdir()
    return str(path)


def run_oracle(*args: Any) -> Any:
    """Run one paimon-oracle command (Apache Paimon 0.9, Java) and return its JSON."""
    env = {**os.environ, "ORACLE_PYTHON": sys.executable}
    proc = subprocess.run(
        [str(ORACLE), *map(str, args)], capture_output=True, text=True, env=env, check=False
    )
    if proc.returncode:
        raise RuntimeError(f"paimon-oracle {args[0]} failed ({proc.returncode}): {proc.stderr}")
    return json.loads(proc.stdout)


@pytest.fixture(scope="session")
def oracle() -> Callable[..., Any]:
    if not ORACLE.exists():
        pytest.fail(f"paimon-oracle not found at {ORACLE}")
    return run_oracle


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One local[2] SparkSession for the whole test run, configured like the shell."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    wh = tmp_path_factory.mktemp("spark-warehouse")
    session = (
        SparkSession.builder.master("local[2]")
        .appName("paimon-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.warehouse.dir", str(wh / "spark"))
        .config("spark.sql.catalog.paimon.warehouse", str(wh / "paimon"))
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()

"""Start-up overhead of `paimon-sql` over a bare Spark SQL start, in the same run.

Usage: python bench/startup.py [--repeat 3] [--nice -10]

Times, in fresh processes, alternating so that load changes hit both alike:
- ``paimon-sql -e "SELECT 1"`` (the statement needs Spark: the shell's whole path, JVM
  included: Python imports, the metadata engine handing the statement over, the session, the
  query, the stop);
- ``spark-sql -e "SELECT 1"`` (PySpark's ``bin/spark-sql``: the JVM CLI alone);
- a bare PySpark start: ``python -c`` building a SparkSession, collecting ``SELECT 1``, stopping.
Both commands use the repository's ``spark-conf`` (``SPARK_CONF_DIR``) and ``local[2]``; the
median of each and the ratios of the medians are printed, with the machine's load average.
Each round runs the commands in another order. On a machine shared with other jobs,
``--nice -10`` (root only) runs all of them ahead of the other jobs alike, so that the load
moves the three less.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

BARE_PYSPARK = (
    "from pyspark.sql import SparkSession; "
    "s = SparkSession.builder.master('local[2]').getOrCreate(); "
    "s.sql('SELECT 1').collect(); s.stop()"
)


def spark_sql() -> str:
    """PySpark's own `bin/spark-sql`."""
    import importlib.util

    spec = importlib.util.find_spec("pyspark")
    assert spec is not None and spec.origin is not None
    return str(Path(spec.origin).parent / "bin" / "spark-sql")


def commands(workdir: str) -> dict[str, list[str]]:
    paimon_sql = shutil.which("paimon-sql") or ""
    shell = [paimon_sql] if paimon_sql else [sys.executable, "-m", "sql_ext.shell"]
    return {
        "paimon-sql": [*shell, "--master", "local[2]", "--warehouse", workdir, "-e", "SELECT 1"],
        "spark-sql": [spark_sql(), "--master", "local[2]", "-e", "SELECT 1"],
        "bare pyspark": [sys.executable, "-c", BARE_PYSPARK],
    }


def timed_run(argv: list[str], env: dict[str, str], cwd: str, nice: int) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        argv,
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        preexec_fn=(lambda: os.nice(nice)) if nice else None,
    )
    elapsed = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"{argv[0]} failed ({done.returncode}): {done.stderr[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--nice", type=int, default=0, help="niceness increment of the runs")
    args = parser.parse_args()
    env = {
        **os.environ,
        "SPARK_CONF_DIR": str(ROOT / "spark-conf"),
        "PYSPARK_PYTHON": sys.executable,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    load_before = os.getloadavg()
    times: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as workdir:  # spark-sql leaves metastore_db here
        runs = list(commands(workdir).items())
        for round_ in range(args.repeat):
            shift = round_ % len(runs)
            for name, argv in runs[shift:] + runs[:shift]:
                times.setdefault(name, []).append(timed_run(argv, env, workdir, args.nice))
    load_after = os.getloadavg()
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(f"{'command':<14} {'median s':>9}   runs (s)")
    for name, values in sorted(times.items()):
        shown = ", ".join(f"{v:.1f}" for v in values)
        print(f"{name:<14} {medians[name]:>9.2f}   {shown}")
    print(f"paimon-sql / spark-sql:    {medians['paimon-sql'] / medians['spark-sql']:.2f}x")
    print(f"paimon-sql / bare pyspark: {medians['paimon-sql'] / medians['bare pyspark']:.2f}x")
    print(
        "load average (1, 5, 15 min): before "
        + " ".join(f"{x:.2f}" for x in load_before)
        + ", after "
        + " ".join(f"{x:.2f}" for x in load_after)
    )


if __name__ == "__main__":
    main()

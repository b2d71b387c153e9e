"""spark-submit entry: `spark-submit sql_ext/submit.py -f script.sql` (or `-e "SQL"`).

Same options, output and exit codes as `paimon-sql` (`sql_ext.shell.run`); the SparkSession is
the one spark-submit sets up (its `--master`, `--conf` and spark-defaults.conf, e.g.
`SPARK_CONF_DIR=spark-conf`), plus any `--conf`/`--master` given after the script.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sql_ext.session import PaimonSession

PROG = "submit.py"


def _make_importable() -> None:
    """Run as a file, Python puts `sql_ext/` first on sys.path; the package root is wanted."""
    here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]
    if importlib.util.find_spec("sql_ext") is None:
        sys.path.insert(0, str(here.parent))


def submitted_session(args: argparse.Namespace) -> PaimonSession:
    """A PaimonSession over `SparkSession.builder.getOrCreate()` with the command line's
    settings (`sql_ext.shell.spark_conf`)."""
    from pyspark.sql import SparkSession

    from sql_ext.session import PaimonSession
    from sql_ext.shell import quiet_spark, spark_conf

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    # `--master`, `--conf`, and Spark's progress bar only when stderr is a terminal.
    conf = spark_conf(args, progress=sys.stderr.isatty())
    spark = SparkSession.builder.config(conf=conf).getOrCreate()
    quiet_spark(spark)
    return PaimonSession(spark, warehouse=args.warehouse, sql_only=True)


def main() -> int:
    _make_importable()
    from sql_ext.shell import run

    return run(sys.argv[1:], session_factory=submitted_session, prog=PROG)


if __name__ == "__main__":
    sys.exit(main())

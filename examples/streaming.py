"""Structured Streaming with Paimon tables (docs/streaming.md).

A rate source is upserted into the primary-key table ``default.events`` (one snapshot per
micro-batch, exactly once), and a second query streams that table's changelog (``lookup``:
``+I`` for a new key, ``-U``/``+U`` for an update) to the console, recording its progress in
consumer ``console``. After ``--seconds`` the writer stops, the reader reads what is left
and stops.

    spark-submit examples/streaming.py --warehouse /tmp/wh --checkpoints /tmp/ck --seconds 60
"""

from __future__ import annotations

import argparse

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from sql_ext.session import PaimonSession


def main() -> None:
    """Run both queries for ``--seconds`` (0: until one fails or is stopped), then stop the
    writer, let the reader catch up, and stop it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warehouse", default="./warehouse")
    parser.add_argument("--checkpoints", default="./checkpoints")
    parser.add_argument("--seconds", type=float, default=0)
    args = parser.parse_args()

    spark = SparkSession.builder.appName("paimon-streaming").getOrCreate()
    paimon = PaimonSession(spark, warehouse=args.warehouse)
    paimon.sql(
        "CREATE TABLE IF NOT EXISTS events (k BIGINT, v BIGINT, ts TIMESTAMP) TBLPROPERTIES "
        "('primary-key' = 'k', 'bucket' = '2', 'changelog-producer' = 'lookup')"
    )

    rate = spark.readStream.format("rate").option("rowsPerSecond", 10).load()
    upserts = rate.select(
        (F.col("value") % 20).alias("k"), F.col("value").alias("v"), F.col("timestamp").alias("ts")
    )
    writer = (
        upserts.writeStream.format("paimon")
        .option("checkpointLocation", f"{args.checkpoints}/write")
        .trigger(processingTime="5 seconds")
        .start("default.events")
    )
    reader = (
        spark.readStream.format("paimon")
        .option("read.changelog", "true")
        .option("consumer-id", "console")
        .load("default.events")
        .writeStream.format("console")
        .option("checkpointLocation", f"{args.checkpoints}/read")
        .option("truncate", "false")
        .start()
    )
    try:
        spark.streams.awaitAnyTermination(args.seconds or None)
        writer.stop()
        reader.processAllAvailable()
    finally:
        writer.stop()
        reader.stop()


if __name__ == "__main__":
    main()

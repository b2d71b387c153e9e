"""The Paimon metadata core: reads and writes the Apache Paimon table format.

This package must not import pyspark or sqlglot: it runs on Spark executors and in
plain Python processes alike.
"""

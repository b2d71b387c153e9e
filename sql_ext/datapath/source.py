"""``format("paimon")``: Paimon tables through PySpark's Python data source API.

The class only routes: reading belongs to ``sql_ext.datapath.read``, writing to
``sql_ext.datapath.write`` (imported when used, so executors load only their side).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceWriter

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.types import StructType

FORMAT = "paimon"


class PaimonDataSource(DataSource):
    """Options: the table (``path`` of ``load``/``save``: ``db.t``), ``warehouse``, and
    Paimon's read and write options (``scan.snapshot-id``, ``scan.tag-name``, ...)."""

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def schema(self) -> StructType:
        from sql_ext.datapath.read import source_schema

        return source_schema(dict(self.options))

    def reader(self, schema: StructType) -> DataSourceReader:
        from sql_ext.datapath.read import source_reader

        return source_reader(dict(self.options), schema)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        from sql_ext.datapath.write import source_writer

        return source_writer(dict(self.options), schema, overwrite)


def register(spark: SparkSession) -> None:
    """Make ``format("paimon")`` available in ``spark`` (idempotent)."""
    spark.dataSource.register(PaimonDataSource)

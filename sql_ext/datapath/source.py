"""``format("paimon")``: Paimon tables through PySpark's Python data source API.

The class only routes: reading belongs to ``sql_ext.datapath.read``, writing to
``sql_ext.datapath.write`` (imported when used, so executors load only their side).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceWriter

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.types import StructType

FORMAT = "paimon"


class PaimonDataSource(DataSource):
    """Options: the table (``path`` of ``load``/``save``: ``db.t``), ``warehouse``, and
    Paimon's read and write options (``scan.snapshot-id``, ``scan.tag-name``, ...).

    ``DEFAULTS`` fill options not given: a ``PaimonSession`` registers its warehouse and
    catalog options there, because the source runs in Python workers that cannot see the
    session's configuration."""

    DEFAULTS: ClassVar[Mapping[str, str]] = {}

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def _options(self) -> dict[str, str]:
        return {**self.DEFAULTS, **dict(self.options)}

    def schema(self) -> StructType:
        from sql_ext.datapath.read import source_schema

        return source_schema(self._options())

    def reader(self, schema: StructType) -> DataSourceReader:
        from sql_ext.datapath.read import source_reader

        return source_reader(self._options(), schema)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        from sql_ext.datapath.write import source_writer

        return source_writer(self._options(), schema, overwrite)


def register(spark: SparkSession, defaults: Mapping[str, str] | None = None) -> None:
    """Make ``format("paimon")`` available in ``spark``, with ``defaults`` for options not
    given (the latest registration wins). The subclass is pickled by value, defaults and all."""
    source = PaimonDataSource
    if defaults:
        source = type(PaimonDataSource.__name__, (PaimonDataSource,), {"DEFAULTS": dict(defaults)})
    spark.dataSource.register(source)

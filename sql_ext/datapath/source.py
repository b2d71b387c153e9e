"""``format("paimon")``: Paimon tables through PySpark's Python data source API.

The class only routes: reading belongs to ``sql_ext.datapath.read``, writing to
``sql_ext.datapath.write`` (imported when used, so executors load only their side).

Writes: a Python data source's writer gets each task's rows as Spark happened to partition
them, and Spark offers no way to ask for a distribution, so it could not give a
primary-key bucket a single writer. Paimon-Spark's source receives the DataFrame itself
(``CreatableRelationProvider``) and shuffles it. The equivalent here: ``register`` wraps
PySpark's ``DataFrameWriter.save`` (once per process) so that a save with format
``paimon`` hands the DataFrame to ``write.save_dataframe``, the job INSERT runs; other
formats go to Spark untouched.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

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


_DEFAULTS: dict[str, str] = {}
"""The latest registration's defaults, for ``DataFrameWriter.save`` (driver side)."""


def register(spark: SparkSession, defaults: Mapping[str, str] | None = None) -> None:
    """Make ``format("paimon")`` available in ``spark``, with ``defaults`` for options not
    given (the latest registration wins). The subclass is pickled by value, defaults and all.
    Also routes ``df.write.format("paimon").save(...)`` to the distributed writer."""
    source = PaimonDataSource
    if defaults:
        source = type(PaimonDataSource.__name__, (PaimonDataSource,), {"DEFAULTS": dict(defaults)})
    spark.dataSource.register(source)
    _DEFAULTS.clear()
    _DEFAULTS.update(defaults or {})
    _route_saves()


def _route_saves() -> None:
    """Wrap ``DataFrameWriter.save`` (once): format ``paimon`` goes to ``save_dataframe``."""
    from pyspark.sql.readwriter import DataFrameWriter

    original = DataFrameWriter.save
    if getattr(original, "_paimon", False):
        return

    @functools.wraps(original)
    def save(
        self: DataFrameWriter,
        path: str | None = None,
        format: str | None = None,
        mode: str | None = None,
        partitionBy: Any = None,
        **options: Any,
    ) -> None:
        # As PySpark's own save, up to handing over to the JVM.
        self.mode(mode).options(**options)
        if partitionBy is not None:
            self.partitionBy(partitionBy)
        if format is not None:
            self.format(format)
        jwrite = self._jwrite
        if str(jwrite.source()).lower() != FORMAT:
            return original(self, path)
        from sql_ext.datapath.write import save_dataframe
        from sql_ext.jvm import scala_string_map

        spark = self._spark
        given = scala_string_map(spark, jwrite.extraOptions().originalMap())
        merged = {**_DEFAULTS, **given}
        if path is not None:
            merged["path"] = path
        save_dataframe(self._df, str(jwrite.curmode().toString()), merged)
        return None

    save._paimon = True  # type: ignore[attr-defined]
    DataFrameWriter.save = save  # type: ignore[method-assign]

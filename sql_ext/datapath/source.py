"""``format("paimon")``: Paimon tables through PySpark's Python data source API.

The class only routes: reading belongs to ``sql_ext.datapath.read``, writing to
``sql_ext.datapath.write`` (imported when used, so executors load only their side).

Writes: a Python data source's writer gets each task's rows as Spark happened to partition
them, and Spark offers no way to ask for a distribution, so it could not give a
primary-key bucket a single writer. Paimon-Spark's source receives the DataFrame itself
(``CreatableRelationProvider``) and shuffles it. The equivalent here: ``register`` wraps
PySpark's ``DataFrameWriter.save`` (once per process) so that a save with format
``paimon`` hands the DataFrame to ``write.save_dataframe``, the job INSERT runs; other
formats go to Spark untouched. Streams the same way: ``DataStreamWriter.start`` (and
``toTable``) with format ``paimon`` becomes ``foreachBatch`` of
``stream_write.PaimonStreamSink``, which runs that job for each micro-batch. Stream reads
are ``stream_read``'s.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
)

from sql_ext.datapath.registry import FORMAT, PENDING, REGISTERED, session_key

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.types import StructType


class PaimonDataSource(DataSource):
    """Options: the table (``path`` of ``load``/``save``: ``db.t``), ``warehouse``, and
    Paimon's read and write options (``scan.snapshot-id``, ``scan.tag-name``, ...).

    ``DEFAULTS`` fill options not given: a ``PaimonSession`` registers a subclass with its
    warehouse and catalog options in its SparkSession (each SparkSession has its own
    registry), because the source runs in Python workers that cannot see the session's
    configuration; the class carries them there, pickled by value."""

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
        from sql_ext.datapath.scan import source_reader

        return source_reader(self._options(), schema)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        from sql_ext.datapath.write import source_writer

        return source_writer(self._options(), schema, overwrite)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        from sql_ext.datapath.stream_read import source_stream_reader

        return source_stream_reader(self._options(), schema)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        from sql_ext.datapath.stream_write import source_stream_writer

        return source_stream_writer(self._options(), schema, overwrite)


def register(
    spark: SparkSession, defaults: Mapping[str, str] | None = None, *, lazy: bool = False
) -> None:
    """Make ``format("paimon")`` available in ``spark``, with ``defaults`` for options not
    given (the latest registration in ``spark`` wins); registering the same defaults again
    does nothing. The subclass is pickled by value, defaults and all. Also routes
    ``df.write.format("paimon").save(...)`` to the distributed writer.

    Each SparkSession of a SparkContext has its own registry, but Spark refuses to register
    a name that the *active* session already knows (``DATA_SOURCE_ALREADY_EXISTS``), so
    ``spark`` is made the active session while it registers (then the previous one is
    restored): a ``spark.newSession()`` gets its own ``paimon`` source.

    ``lazy`` puts the registration off until ``ensure_registered`` (two JVM calls that cost a
    shell's start-up up to a second while most first statements never use the source)."""
    wanted = dict(defaults or {})
    key = session_key(spark)
    if lazy and REGISTERED.get(key) != wanted:
        PENDING[key] = (wanted, lambda: register(spark, wanted))
        _route_saves()
        return
    PENDING.pop(key, None)
    if REGISTERED.get(key) != wanted:
        source = PaimonDataSource
        if wanted:
            source = type(PaimonDataSource.__name__, (PaimonDataSource,), {"DEFAULTS": wanted})
        with _active(spark):
            spark.dataSource.register(source)
        REGISTERED[key] = wanted
    _route_saves()
    _route_stream_starts()


@contextlib.contextmanager
def _active(spark: SparkSession) -> Iterator[None]:
    """``spark`` as the JVM's active session of this thread, then the previous one again."""
    sessions = getattr(spark._jvm, "org.apache.spark.sql.classic.SparkSession")
    previous = sessions.getActiveSession()
    sessions.setActiveSession(spark._jsparkSession)
    try:
        yield
    finally:
        if previous.isDefined():
            sessions.setActiveSession(previous.get())
        else:
            sessions.clearActiveSession()


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
        key = session_key(spark)
        registered = PENDING[key][0] if key in PENDING else REGISTERED.get(key, {})
        merged = {**registered, **given}
        if path is not None:
            merged["path"] = path
        save_dataframe(self._df, str(jwrite.curmode().toString()), merged)
        return None

    save._paimon = True  # type: ignore[attr-defined]
    DataFrameWriter.save = save  # type: ignore[method-assign]


def _route_stream_starts() -> None:
    """Wrap ``DataStreamWriter.start`` and ``toTable`` (once): format ``paimon`` becomes
    ``foreachBatch`` of a ``stream_write.PaimonStreamSink``, which shuffles each micro-batch
    by bucket and commits it exactly once (the table and output mode are checked before
    the query starts)."""
    from pyspark.sql.streaming.readwriter import DataStreamWriter

    original = DataStreamWriter.start
    if getattr(original, "_paimon", False):
        return
    original_to_table = DataStreamWriter.toTable

    def route(writer: DataStreamWriter, path: str | None) -> bool:
        """Make ``writer`` a Paimon sink if its format is ``paimon``; whether it is."""
        jwrite = writer._jwrite
        if str(jwrite.source()).lower() != FORMAT:
            return False
        from sql_ext.datapath.stream_write import checked_sink
        from sql_ext.jvm import scala_string_map

        spark = writer._spark
        given = scala_string_map(spark, jwrite.extraOptions().originalMap())
        merged = {**REGISTERED.get(session_key(spark), {}), **given}
        if path is not None:
            merged["path"] = path
        writer.foreachBatch(checked_sink(merged, str(jwrite.outputMode())))
        return True

    def configure(writer: DataStreamWriter, **settings: Any) -> None:
        # As PySpark's own start and toTable, up to handing over to the JVM.
        options = settings.pop("options")
        writer.options(**options)
        for name, value in settings.items():
            if value is not None:
                getattr(writer, name)(value)

    @functools.wraps(original)
    def start(
        self: DataStreamWriter,
        path: str | None = None,
        format: str | None = None,
        outputMode: str | None = None,
        partitionBy: Any = None,
        queryName: str | None = None,
        **options: Any,
    ) -> Any:
        configure(
            self,
            options=options,
            outputMode=outputMode,
            partitionBy=partitionBy,
            format=format,
            queryName=queryName,
        )
        if route(self, path):
            return original(self)
        return original(self, path)

    @functools.wraps(original_to_table)
    def to_table(
        self: DataStreamWriter,
        tableName: str,
        format: str | None = None,
        outputMode: str | None = None,
        partitionBy: Any = None,
        queryName: str | None = None,
        **options: Any,
    ) -> Any:
        configure(
            self,
            options=options,
            outputMode=outputMode,
            partitionBy=partitionBy,
            format=format,
            queryName=queryName,
        )
        if route(self, tableName):
            return original(self)
        return original_to_table(self, tableName)

    start._paimon = True  # type: ignore[attr-defined]
    DataStreamWriter.start = start  # type: ignore[method-assign]
    DataStreamWriter.toTable = to_table  # type: ignore[method-assign]

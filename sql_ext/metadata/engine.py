"""`MetadataEngine`: the statements `paimon-sql` answers in its own process, without Spark.

`run(text)` parses the statement once and asks its family's module (`sql_ext.statements.ROUTES`)
to answer it locally: the result `PaimonSession` would give (same columns, values and errors),
or `ToSpark` before doing anything when Spark must run it. Settings are the ones Spark would
start with (`sql_ext.metadata.config`): the session time zone, `spark.paimon.*` dynamic
options, the catalog options.
"""

from __future__ import annotations

from collections.abc import Mapping

from paimon_core.catalog import FileSystemCatalog
from sql_ext.dynamic_options import PREFIX
from sql_ext.metadata.config import resolve_catalog_options, resolve_warehouse
from sql_ext.metadata.result import Rows, ToSpark
from sql_ext.statements.context import StatementContext
from sql_ext.statements.routes import route
from sql_ext.syntax.parse import code_of, parse_statement

__all__ = ["MetadataEngine", "Rows", "ToSpark"]

TIME_ZONE_CONF = "spark.sql.session.timeZone"


class MetadataEngine:
    """Answers metadata statements over one warehouse, holding the current database."""

    def __init__(self, warehouse: str | None = None, conf: Mapping[str, str] | None = None) -> None:
        """`warehouse` (the `--warehouse` argument) and `conf` (the session's settings:
        spark-defaults and `--conf`) resolve as `PaimonSession` resolves them."""
        self.conf = dict(conf or {})
        self.warehouse = resolve_warehouse(warehouse, self.conf)
        self.catalog = FileSystemCatalog(self.warehouse, options=resolve_catalog_options(self.conf))
        dynamic = {k: v for k, v in self.conf.items() if k.startswith(PREFIX)}
        time_zone = self.conf.get(TIME_ZONE_CONF)
        self.ctx = StatementContext(self.catalog, lambda: dynamic, lambda: time_zone, self.conf)

    @property
    def current_database(self) -> str:
        return self.ctx.current_database

    def run(self, text: str) -> Rows | ToSpark:
        """The result of one statement, or `ToSpark` (nothing done) when Spark must run it.

        Raises the errors `PaimonSession` raises for the statement.
        """
        text = code_of(text)
        if "${" in text:
            return ToSpark()  # variable substitution is Spark's
        statement = parse_statement(text)
        local = getattr(route(statement), "local", None)
        answered = None if local is None else local(self.ctx, statement)
        return ToSpark(statement) if answered is None else answered

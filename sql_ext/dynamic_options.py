"""Paimon-Spark's dynamic options: `spark.paimon.*` session settings applied to tables.

`SET spark.paimon.<key> = v` applies `<key>` to every Paimon table a statement reads or
writes; `spark.paimon.<catalog>.<db>.<table>.<key>` (each of the three may be `*`) applies it
to the tables it names only, and wins over the global form (Paimon-Spark's
`OptionUtils.copyWithSQLConf`). As in Paimon, a key that is not table-scoped for this table
counts as global, so the scoped keys of other tables reach it under names no option has.
When several scoped keys name the table, the one with fewer `*` wins (Paimon leaves that order
undefined). `spark.paimon.branch` reads a table's branch instead of the table, unless the name
already says which (`t$branch_b`), as Paimon-Spark's `withBranchFromOptions`. The settings are read from the session when each statement runs, so `SET` and
`RESET` take effect for the statements that follow.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from paimon_core.exceptions import PaimonError
from paimon_core.format.schema import check_dynamic_option
from sql_ext.errors import SqlError
from sql_ext.jvm import session_confs

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from paimon_core.table import FileStoreTable

PREFIX = "spark.paimon."
WILDCARD = "*"


def paimon_confs(spark: SparkSession) -> dict[str, str]:
    """The session's `spark.paimon.*` settings (SET ones and those the session started with).

    Read for every statement, so in one py4j round trip (`spark.conf.getAll` takes one per
    setting)."""
    return {k: v for k, v in session_confs(spark).items() if k.startswith(PREFIX)}


def table_options(
    confs: Mapping[str, str], catalog: str, database: str, table: str
) -> dict[str, tuple[str, str]]:
    """Option key -> (value, the setting it came from) for table `catalog.database.table`."""
    parts = "".join(rf"({re.escape(name)}|\*)\." for name in (catalog, database, table))
    scoped_key = re.compile(rf"{re.escape(PREFIX)}{parts}(.+)", re.DOTALL)
    options: dict[str, tuple[str, str]] = {}
    scoped: dict[str, tuple[int, str, str]] = {}
    for setting, value in sorted(confs.items()):
        if not setting.startswith(PREFIX):
            continue
        match = scoped_key.fullmatch(setting)
        if match is None:
            options[setting[len(PREFIX) :]] = (value, setting)
            continue
        wildcards = sum(group == WILDCARD for group in match.groups()[:3])
        key = match.group(4)
        if key not in scoped or wildcards < scoped[key][0]:
            scoped[key] = (wildcards, value, setting)
    options.update({key: (value, setting) for key, (_, value, setting) in scoped.items()})
    return options


def with_dynamic_options(
    table: FileStoreTable,
    confs: Mapping[str, str],
    catalog: str,
    database: str,
    name: str,
    *,
    time_travel: bool = True,
) -> FileStoreTable:
    """`table` with the session's dynamic options on top (the schema file is not changed).

    `time_travel=False` is for writes: a `scan.*` setting does not move the schema they
    write with.

    Raises:
        SqlError: a setting changes an option Paimon fixes for the table's life (`bucket` of
            a dynamic-bucket table, `primary-key`, `merge-engine`, ...), or names a path that
            would leave its directory (`spark.paimon.branch = ../x`), naming the setting.
    """
    options = table_options(confs, catalog, database, name)
    if table.branch != "main":
        options.pop("branch", None)  # `t$branch_b` names its branch (Paimon-Spark's rule)
    if not options:
        return table
    for key, (value, setting) in options.items():
        try:
            check_dynamic_option(table.schema.options, key, value)
        except (PaimonError, ValueError) as e:
            raise SqlError(
                f"Cannot apply {setting} = '{value}' to {catalog}.{database}.{name}: {e}"
            ) from None
    return table.copy({k: v for k, (v, _) in options.items()}, time_travel=time_travel)

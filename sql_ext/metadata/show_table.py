"""SHOW CREATE TABLE / COLUMNS / PARTITIONS / TBLPROPERTIES / TABLE EXTENDED of Paimon tables.

Paimon-Spark answers these with Spark's v2 commands (latest Spark) over its `SparkTable`:
`ShowCreateTableExec` (columns as `StructField.toDDL`, `USING paimon`, `PARTITIONED BY`,
`COMMENT`, `LOCATION`, then every other property as TBLPROPERTIES, `path` and
`primary-key` included), `ShowColumnsExec`, `ShowPartitionsExec` (`k=v/k2=v2`, each part
escaped as a path name, sorted; a PARTITION spec keeps the matching ones),
`ShowTablePropertiesExec` (the non-reserved properties, redacted, sorted by key; one key's
value or Spark's "does not have property" text) and `ShowTablesExtendedExec` (one row per
table whose name matches, with its information block; temporary views, which only Spark
holds, are not listed); with a PARTITION spec, Paimon-Spark's
`PaimonShowTablePartitionCommand` (the LIKE pattern is then the table's name, as in Spark's
grammar). Shared by the Spark session and the in-process engine, so both answer alike.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlglot.tokens import Token, TokenType

from procedures.base import Column, ProcedureResult
from sql_ext.errors import SqlError, SqlParseError
from sql_ext.metadata.config import CATALOG_NAME
from sql_ext.metadata.spark_names import column_ddl, quote_if_needed, tree_string
from sql_ext.metadata.table_info import RESERVED, redacted, table_properties, table_type
from sql_ext.syntax.tokens import dotted_name, like_pattern, matches_pattern, tokenize

if TYPE_CHECKING:
    from paimon_core.catalog import FileSystemCatalog
    from paimon_core.format.types import DataType
    from paimon_core.table import FileStoreTable

__all__ = ["TableShow", "parse_table_show", "run_table_show"]

_NAME_TOKENS = (TokenType.VAR, TokenType.IDENTIFIER)
CREATE_COLUMNS = (Column("createtab_stmt", "STRING", False),)
# Paimon-Spark answers SHOW COLUMNS itself (`PaimonShowColumnsCommand`): one nullable `column`.
COLUMNS = (Column("column", "STRING"),)
PARTITIONS = (Column("partition", "STRING", False),)
PROPERTIES = (Column("key", "STRING", False), Column("value", "STRING", False))
EXTENDED = (
    Column("namespace", "STRING", False),
    Column("tableName", "STRING", False),
    Column("isTemporary", "BOOLEAN", False),
    Column("information", "STRING", False),
)
_ESCAPED = frozenset("\"#%'*/:=?\\\x7f{[]^") | frozenset(chr(c) for c in range(1, 32))


@dataclass(frozen=True, slots=True)
class TableShow:
    """A SHOW statement about one table (`kind` create/columns/partitions) or, for
    `extended`, about the tables of `database` whose names match `pattern`."""

    kind: str
    table: tuple[str, ...] = ()
    database: tuple[str, ...] = ()
    partition: tuple[tuple[str, Token | None], ...] | None = None
    pattern: str | None = None


def _property_key(tokens: list[Token], position: int) -> tuple[str | None, int]:
    """`key)` or `'key')` or `a.b.c)` after SHOW TBLPROPERTIES t (."""
    if position < len(tokens) and tokens[position].token_type == TokenType.STRING:
        key: str | None = tokens[position].text
        position += 1
    else:
        words: list[str] = []
        while position < len(tokens) and (
            tokens[position].token_type in _NAME_TOKENS or tokens[position].text.isidentifier()
        ):
            words.append(tokens[position].text)
            position += 1
            if position < len(tokens) and tokens[position].token_type == TokenType.DOT:
                position += 1
            else:
                break
        key = ".".join(words) if words else None
    if key is None or position >= len(tokens) or tokens[position].token_type != TokenType.R_PAREN:
        return None, position
    return key, position + 1


def _partition_spec(
    tokens: list[Token], position: int, text: str
) -> tuple[tuple[tuple[str, Token | None], ...], int]:
    """`PARTITION (k = v, ...)` starting at `position` (after the PARTITION word)."""
    if position >= len(tokens) or tokens[position].token_type != TokenType.L_PAREN:
        raise SqlError(f"Invalid PARTITION clause: {text}")
    position += 1
    spec: list[tuple[str, Token | None]] = []
    while True:
        if position >= len(tokens) or tokens[position].token_type not in _NAME_TOKENS:
            raise SqlError(f"Invalid PARTITION clause: {text}")
        key = tokens[position].text
        position += 1
        value = None
        if position < len(tokens) and tokens[position].token_type == TokenType.EQ:
            position += 1
            if position >= len(tokens):
                raise SqlError(f"Invalid PARTITION clause: {text}")
            value = tokens[position]
            position += 1
        spec.append((key, value))
        if position < len(tokens) and tokens[position].token_type == TokenType.COMMA:
            position += 1
            continue
        if position < len(tokens) and tokens[position].token_type == TokenType.R_PAREN:
            return tuple(spec), position + 1
        raise SqlError(f"Invalid PARTITION clause: {text}")


def parse_table_show(rest: str, tokens: Sequence[Token] | None = None) -> TableShow | None:
    """The statement `SHOW <rest>` (of `tokens`, when read already) when it is one of these;
    None: another SHOW."""
    if tokens is None:
        try:
            tokens = tokenize(rest)
        except SqlParseError:
            return None
    words = [t.text.upper() for t in tokens]
    text = f"SHOW {rest}"
    if words[:2] == ["CREATE", "TABLE"]:
        table, position = dotted_name(tokens, 2)
        if words[position : position + 2] == ["AS", "SERDE"]:
            raise SqlError(
                f"SHOW CREATE TABLE ... AS SERDE is not supported on Paimon tables: {text}"
            )
        if not table or position != len(tokens):
            return None
        return TableShow("create", table)
    if words[:1] == ["COLUMNS"] and len(words) > 2 and words[1] in ("IN", "FROM"):
        table, position = dotted_name(tokens, 2)
        database: tuple[str, ...] = ()
        if position < len(tokens) and words[position] in ("IN", "FROM"):
            database, position = dotted_name(tokens, position + 1)
            if not database:
                return None
        if not table or position != len(tokens):
            return None
        return TableShow("columns", table, database)
    if words[:1] == ["TBLPROPERTIES"]:
        table, position = dotted_name(tokens, 1)
        key = None
        if position < len(tokens) and tokens[position].token_type == TokenType.L_PAREN:
            parts, position = _property_key(tokens, position + 1)
            if parts is None:
                return None
            key = parts
        if not table or position != len(tokens):
            return None
        return TableShow("properties", table, pattern=key)
    if words[:1] == ["PARTITIONS"]:
        table, position = dotted_name(tokens, 1)
        spec = None
        if position < len(tokens) and words[position] == "PARTITION":
            spec, position = _partition_spec(tokens, position + 1, text)
        if not table or position != len(tokens):
            return None
        return TableShow("partitions", table, partition=spec)
    if words[:2] == ["TABLE", "EXTENDED"]:
        position = 2
        database = ()
        if position < len(tokens) and words[position] in ("IN", "FROM"):
            database, position = dotted_name(tokens, position + 1)
        pattern, position = like_pattern(tokens, position)
        if pattern is None:
            return None
        spec = None
        if position < len(tokens) and words[position] == "PARTITION":
            spec, position = _partition_spec(tokens, position + 1, text)
        if position != len(tokens):
            return None
        return TableShow("extended", database=database, partition=spec, pattern=pattern)
    return None


def _spark_string(value: Any, t: DataType) -> str:
    """Spark's `CAST(value AS STRING)` of a partition value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        from paimon_core.format.paths import java_float_string

        return java_float_string(value, single=t.root == "FLOAT")
    if isinstance(value, dt.datetime):
        text = value.strftime("%Y-%m-%d %H:%M:%S")
        return text + (f".{value.microsecond:06d}".rstrip("0") if value.microsecond else "")
    if isinstance(value, (dt.date, decimal.Decimal, int, str)):
        return value.isoformat() if isinstance(value, dt.date) else str(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _escape_path(text: str) -> str:
    """Spark's `ExternalCatalogUtils.escapePathName`."""
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in text)


def _spec_value(token: Token | None, t: DataType, text: str) -> str:
    """A PARTITION spec value as the column's Spark string (Spark casts it to the type)."""
    if token is None:
        raise SqlError(f"Partition spec needs a value for each column: {text}")
    raw = token.text
    if token.token_type == TokenType.NULL:
        return "null"
    try:
        if t.root in ("TINYINT", "SMALLINT", "INT", "BIGINT"):
            return str(int(raw))
        if t.root in ("FLOAT", "DOUBLE"):
            return _spark_string(float(raw), t)
        if t.root == "BOOLEAN":
            return str(raw.lower() == "true").lower()
        if t.root == "DATE":
            return dt.date.fromisoformat(raw.strip()).isoformat()
        if t.root == "DECIMAL":
            return str(decimal.Decimal(raw))
    except ValueError:
        raise SqlError(f"Invalid partition value {raw!r} for a {t} column: {text}") from None
    return raw


def _partitions(table: FileStoreTable, spec: TableShow, shown: str, text: str) -> list[tuple[str]]:
    from paimon_core.format.binary_row import deserialize_row

    schema = table.schema
    if not schema.partition_keys:
        raise SqlError(f"SHOW PARTITIONS is not allowed on {shown}: it is not partitioned")
    fields = [schema.field(k) for k in schema.partition_keys]
    types = [f.type for f in fields]
    wanted: dict[int, str] = {}
    for key, token in spec.partition or ():
        index = next((i for i, f in enumerate(fields) if f.name.lower() == key.lower()), None)
        if index is None:
            raise SqlError(f"{key} is not a partition column of {shown}: {text}")
        wanted[index] = _spec_value(token, types[index], text)
    from paimon_core.operations.fallback import branch_entries, fallback_read

    snapshot = table.snapshot_manager.latest_snapshot()
    sides = branch_entries(table, snapshot, fallback_read(table))  # the other branch's too
    seen: set[bytes] = set()
    out = []
    for entry in (e for side in sides for e in side.splits):
        if entry.partition in seen:
            continue
        seen.add(entry.partition)
        values = [
            _spark_string(v, t) for v, t in zip(deserialize_row(entry.partition, types), types)
        ]
        if any(values[i] != v for i, v in wanted.items()):
            continue
        parts = [f"{_escape_path(f.name)}={_escape_path(v)}" for f, v in zip(fields, values)]
        out.append(("/".join(parts),))
    return sorted(out)


def _escape_quoted(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "\\'")


def _lines(items: list[str]) -> str:
    return "(\n  " + ",\n  ".join(items) + ")\n"


def show_create_table(table: FileStoreTable, database: str, name: str) -> str:
    """`ShowCreateTableExec`'s statement for a Paimon table."""
    schema = table.schema
    properties = table_properties(table)
    quoted = ".".join(quote_if_needed(p) for p in (CATALOG_NAME, database, name))
    out = [f"CREATE TABLE {quoted} ", _lines([column_ddl(f) for f in schema.fields])]
    out.append(f"USING {_escape_quoted(properties['provider'])}\n")
    if schema.partition_keys:
        out.append(
            f"PARTITIONED BY ({', '.join(quote_if_needed(k) for k in schema.partition_keys)})\n"
        )
    if "comment" in properties:
        out.append(f"COMMENT '{_escape_quoted(properties['comment'])}'\n")
    out.append(f"LOCATION '{_escape_quoted(properties['location'])}'\n")
    shown = [f"'{_escape_quoted(k)}' = '{_escape_quoted(v)}'" for k, v in redacted(properties)]
    if shown:
        out.append("TBLPROPERTIES " + _lines(shown))
    return "".join(out)


def _information(table: FileStoreTable, database: str, name: str) -> str:
    """`ShowTablesExtendedExec.getTableDetails`, with the trailing newline the row adds."""
    properties = table_properties(table)
    lines = [f"Catalog: {CATALOG_NAME}", f"Namespace: {quote_if_needed(database)}"]
    lines += [f"Table: {name}", f"Type: {table_type(properties)}"]
    lines += [
        f"{k.capitalize()}: {properties[k]}"
        for k in RESERVED
        if k != "external" and k in properties
    ]
    lines.append(
        "Table Properties: [" + ", ".join(f"{k}={v}" for k, v in redacted(properties)) + "]"
    )
    keys = table.schema.partition_keys
    if keys:
        lines.append("Partition Provider: Catalog")
        lines.append("Partition Columns: [" + ", ".join(f"`{k}`" for k in keys) + "]")
    if table.schema.fields:
        lines.append(f"Schema: {tree_string(table.schema.fields)}")
    return "\n".join(lines) + "\n"


def _partition_information(table: FileStoreTable, show: TableShow, database: str, text: str) -> str:
    """Paimon-Spark's ``PaimonShowTablePartitionCommand``: the partition's values, then its
    parameters and statistics (``PaimonPartitionManagement.loadPartitionMetadata``: the live
    files' record count, size, count and latest creation time), with the trailing newline
    the row adds.

    Raises:
        SqlError: the spec is not one value for each partition column, or no such partition.
    """
    from paimon_core.format.binary_row import deserialize_row

    schema = table.schema
    statement = "SHOW TABLE EXTENDED ... PARTITION"
    fields = [schema.field(k) for k in schema.partition_keys]
    if not fields:
        raise SqlError(f"{statement}: {database}.{show.pattern} is not partitioned: {text}")
    types = [f.type for f in fields]
    wanted: dict[int, str] = {}
    for key, token in show.partition or ():
        index = next((i for i, f in enumerate(fields) if f.name.lower() == key.lower()), None)
        if index is None:
            raise SqlError(f"{statement}: {key} is not a partition column: {text}")
        wanted[index] = _spec_value(token, types[index], text)
    if len(wanted) != len(fields):
        columns = ", ".join(f.name for f in fields)
        raise SqlError(
            f"{statement}: the spec must give every partition column ({columns}): {text}"
        )
    totals: list[int] | None = None  # records, bytes, files, latest creation
    values: list[str] = []
    snapshot = table.snapshot_manager.latest_snapshot()
    for entry in table.new_scan().read_entries(snapshot) if snapshot is not None else ():
        shown = [
            _spark_string(v, t) for v, t in zip(deserialize_row(entry.partition, types), types)
        ]
        if any(shown[i] != v for i, v in wanted.items()):
            continue
        values = shown
        created = _epoch_millis(entry.file.creation_time_millis)
        if totals is None:
            totals = [0, 0, 0, created]
        totals[0] += entry.file.row_count
        totals[1] += entry.file.file_size
        totals[2] += 1
        totals[3] = max(totals[3], created)
    if totals is None:
        part = ", ".join(f"{f.name} = {wanted[i]}" for i, f in enumerate(fields))
        raise SqlError(
            f"[PARTITIONS_NOT_FOUND] The partition(s) PARTITION ({part}) cannot be found in "
            f"table {database}.{show.pattern}. Verify the partition specification and table name."
        )
    records, size, count, created = totals
    parts = [f"{_escape_path(f.name)}={_escape_path(v)}" for f, v in zip(fields, values)]
    parameters = [("recordCount", records), ("fileSizeInBytes", size), ("fileCount", count)]
    parameters.append(("lastFileCreationTime", created))
    lines = [
        f"Partition Values: [{', '.join(parts)}]",
        "Partition Parameters: {" + ", ".join(f"{k}={v}" for k, v in parameters if v >= 0) + "}",
        f"Partition Statistics: {records} rows, {size} bytes",
    ]
    return "\n".join(lines) + "\n"


def _epoch_millis(raw: int | None) -> int:
    """Java's ``DataFileMeta.creationTimeEpochMillis``: the stored wall clock read in the
    JVM's (here the process's) time zone; -1, unknown, when the file has none."""
    if raw is None:
        return -1
    local = dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=raw)
    offset = local.astimezone().utcoffset() or dt.timedelta()
    return raw - int(offset.total_seconds() * 1000)


def run_table_show(
    show: TableShow,
    text: str,
    catalog: Callable[[], FileSystemCatalog],
    current_database: str,
    load: Callable[[str, str], FileStoreTable | None],
) -> ProcedureResult | None:
    """The result of `show`; None when it names no Paimon table (Spark's own then).

    `load(database, name)` gives the Paimon table, None when that name is not one.
    """
    if show.kind == "extended":
        database = _database(show.database, current_database)
        if database is None:
            return None
        if show.partition is not None:
            assert show.pattern is not None
            table = load(database, show.pattern)
            if table is None:
                return None
            information = _partition_information(table, show, database, text)
            return ProcedureResult(EXTENDED, [(database, show.pattern, False, information)])
        rows = []
        for name in catalog().list_tables(database):
            if matches_pattern(name, show.pattern):
                table = load(database, name)
                if table is not None:
                    rows.append((database, name, False, _information(table, database, name)))
        return ProcedureResult(EXTENDED, rows)
    parts = show.table
    if show.kind == "columns" and show.database:
        if len(parts) > 1 and parts[-2].lower() != show.database[-1].lower():
            raise SqlError(
                f"SHOW COLUMNS with conflicting namespaces: {'.'.join(show.database)} != "
                f"{'.'.join(parts[:-1])}"
            )
        parts = (*show.database, parts[-1])
    if len(parts) == 3:
        if parts[0].lower() != CATALOG_NAME:
            return None
        parts = parts[1:]
    database = parts[0] if len(parts) == 2 else current_database
    name = parts[-1]
    if "$" in name:
        raise SqlError(
            f"{text.split('(')[0].strip()}: {name} is a system table, not a Paimon table"
        )
    table = load(database, name)
    if table is None:
        return None
    shown = f"{CATALOG_NAME}.{database}.{name}"
    if show.kind == "create":
        return ProcedureResult(CREATE_COLUMNS, [(show_create_table(table, database, name),)])
    if show.kind == "columns":
        return ProcedureResult(COLUMNS, [(f.name,) for f in table.schema.fields])
    if show.kind == "properties":
        properties = dict(redacted(table_properties(table)))
        if show.pattern is None:
            return ProcedureResult(PROPERTIES, sorted(properties.items()))
        missing = f"Table {database}.{name} does not have property: {show.pattern}"
        return ProcedureResult(PROPERTIES, [(show.pattern, properties.get(show.pattern, missing))])
    return ProcedureResult(PARTITIONS, _partitions(table, show, shown, text))


def _database(parts: tuple[str, ...], current: str) -> str | None:
    if len(parts) == 2 and parts[0].lower() == CATALOG_NAME:
        parts = parts[1:]
    if len(parts) > 1:
        return None
    return parts[0] if parts else current

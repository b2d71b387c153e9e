"""How Spark spells the type a Paimon column reads as (`sql_ext.spark_types`), without Spark.

Three spellings: `simpleString` (DESCRIBE), `sql` (SHOW CREATE TABLE column DDL, with
Paimon-Spark's raw CHAR(n)/VARCHAR(n)) and `typeName` with `treeString` (SHOW TABLE
EXTENDED's schema). Shared by the Spark session and the in-process engine so that both
print the same text.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from sql_ext.errors import SqlError

if TYPE_CHECKING:
    from paimon_core.format.types import DataField, DataType

__all__ = ["column_ddl", "quote_if_needed", "simple_string", "sql_type", "tree_string"]

_MAX_LENGTH = 2147483647
# root: (simpleString, sql, typeName)
_PRIMITIVES = {
    "BOOLEAN": ("boolean", "BOOLEAN", "boolean"),
    "TINYINT": ("tinyint", "TINYINT", "byte"),
    "SMALLINT": ("smallint", "SMALLINT", "short"),
    "INT": ("int", "INT", "integer"),
    "BIGINT": ("bigint", "BIGINT", "long"),
    "FLOAT": ("float", "FLOAT", "float"),
    "DOUBLE": ("double", "DOUBLE", "double"),
    "CHAR": ("string", "STRING", "string"),
    "VARCHAR": ("string", "STRING", "string"),
    "BINARY": ("binary", "BINARY", "binary"),
    "VARBINARY": ("binary", "BINARY", "binary"),
    "BLOB": ("binary", "BINARY", "binary"),
    "DATE": ("date", "DATE", "date"),
    "TIME": ("int", "INT", "integer"),
    "TIMESTAMP": ("timestamp_ntz", "TIMESTAMP_NTZ", "timestamp_ntz"),
    "TIMESTAMP_LTZ": ("timestamp", "TIMESTAMP", "timestamp"),
    "VARIANT": ("variant", "VARIANT", "variant"),
}
_PLAIN_NAME = re.compile(r"[a-zA-Z0-9_]+")


def quote_if_needed(name: str) -> str:
    """Spark's `quoteIfNeeded`: back-quoted unless letters, digits and `_` (not all digits)."""
    if _PLAIN_NAME.fullmatch(name) and not name.isdigit():
        return name
    return "`" + name.replace("`", "``") + "`"


def _unsupported(t: DataType) -> SqlError:
    return SqlError(f"Type {t} has no Spark type in this project")


def simple_string(t: DataType) -> str:
    """`DataType.simpleString` (`int`, `array<string>`, `struct<a:int>`)."""
    if t.root in _PRIMITIVES:
        return _PRIMITIVES[t.root][0]
    if t.root == "DECIMAL":
        return f"decimal({t.precision},{t.scale or 0})"
    if t.root in ("ARRAY", "VECTOR") and t.element is not None:
        return f"array<{simple_string(t.element)}>"
    if t.root == "MULTISET" and t.element is not None:
        return f"map<{simple_string(t.element)},int>"
    if t.root == "MAP" and t.key is not None and t.value is not None:
        return f"map<{simple_string(t.key)},{simple_string(t.value)}>"
    if t.root == "ROW" and t.fields is not None:
        return "struct<" + ",".join(f"{f.name}:{simple_string(f.type)}" for f in t.fields) + ">"
    raise _unsupported(t)


def sql_type(t: DataType) -> str:
    """`DataType.sql` of Paimon-Spark's raw schema: CHAR(n) and VARCHAR(n) kept, unbounded
    VARCHAR as STRING."""
    if t.root == "CHAR":
        return f"CHAR({t.length})"
    if t.root == "VARCHAR":
        return "STRING" if t.length in (None, _MAX_LENGTH) else f"VARCHAR({t.length})"
    if t.root in _PRIMITIVES:
        return _PRIMITIVES[t.root][1]
    if t.root == "DECIMAL":
        return f"DECIMAL({t.precision},{t.scale or 0})"
    if t.root in ("ARRAY", "VECTOR") and t.element is not None:
        return f"ARRAY<{sql_type(t.element)}>"
    if t.root == "MULTISET" and t.element is not None:
        return f"MAP<{sql_type(t.element)}, INT>"
    if t.root == "MAP" and t.key is not None and t.value is not None:
        return f"MAP<{sql_type(t.key)}, {sql_type(t.value)}>"
    if t.root == "ROW" and t.fields is not None:
        inner = ", ".join(
            f"{quote_if_needed(f.name)}: {sql_type(f.type)}{_comment(f)}" for f in t.fields
        )
        return f"STRUCT<{inner}>"
    raise _unsupported(t)


def _escape(text: str) -> str:
    """Spark's `escapeSingleQuotedString`."""
    return text.replace("\\", "\\\\").replace("'", "\\'")


def _comment(f: DataField) -> str:
    return "" if f.description is None else f" COMMENT '{_escape(f.description)}'"


def column_ddl(f: DataField) -> str:
    """`StructField.toDDL`: `name TYPE[ NOT NULL][ DEFAULT <expr>][ COMMENT '...']`, the
    default as Spark's `CURRENT_DEFAULT` text (what `DataField.default_value` holds), so
    that SHOW CREATE TABLE's statement creates the same column again."""
    null = "" if f.type.nullable else " NOT NULL"
    default = f" DEFAULT {f.default_value}" if f.default_value is not None else ""
    return f"{quote_if_needed(f.name)} {sql_type(f.type)}{null}{default}{_comment(f)}"


def _type_name(t: DataType) -> str:
    if t.root in _PRIMITIVES:
        return _PRIMITIVES[t.root][2]
    if t.root == "DECIMAL":
        return f"decimal({t.precision},{t.scale or 0})"
    if t.root in ("ARRAY", "VECTOR"):
        return "array"
    if t.root in ("MAP", "MULTISET"):
        return "map"
    if t.root == "ROW":
        return "struct"
    raise _unsupported(t)


def _nested(t: DataType, prefix: str, out: list[str]) -> None:
    """Spark's `DataType.buildFormattedString` below one field."""
    inner = prefix + "    |"
    if t.root in ("ARRAY", "VECTOR") and t.element is not None:
        null = str(t.element.nullable).lower()
        out.append(f"{inner}-- element: {_type_name(t.element)} (containsNull = {null})")
        _nested(t.element, inner, out)
    elif t.root in ("MAP", "MULTISET"):
        key = t.key if t.root == "MAP" else t.element
        assert key is not None
        out.append(f"{inner}-- key: {_type_name(key)}")
        _nested(key, inner, out)
        if t.root == "MAP":
            assert t.value is not None
            null = str(t.value.nullable).lower()
            out.append(f"{inner}-- value: {_type_name(t.value)} (valueContainsNull = {null})")
            _nested(t.value, inner, out)
        else:
            out.append(f"{inner}-- value: integer (valueContainsNull = false)")
    elif t.root == "ROW" and t.fields is not None:
        _fields(t.fields, inner, out)


def _fields(fields: tuple[DataField, ...] | list[DataField], prefix: str, out: list[str]) -> None:
    for f in fields:
        null = str(f.type.nullable).lower()
        out.append(f"{prefix}-- {f.name}: {_type_name(f.type)} (nullable = {null})")
        _nested(f.type, prefix, out)


def tree_string(fields: tuple[DataField, ...] | list[DataField]) -> str:
    """`StructType.treeString` of the columns."""
    out = ["root"]
    _fields(fields, " |", out)
    return "\n".join(out) + "\n"

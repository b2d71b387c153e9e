"""The procedure model, argument binding as Paimon Spark does it, and the registry.

A procedure computes plain rows (Python tuples) with a declared schema; turning them into a
Spark DataFrame is a thin adapter (``ProcedureResult.spark_schema``). Binding follows
``PaimonProcedureResolver``: named or positional arguments, names lower-cased, Spark's up-cast
rules for the literal types, an omitted optional parameter is NULL.
"""

from __future__ import annotations

import datetime as dt
import re
import zoneinfo
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from paimon_core.exceptions import PaimonError
from paimon_core.format.paths import java_float_string

if TYPE_CHECKING:
    from pyspark.sql.types import DataType as SparkDataType
    from pyspark.sql.types import StructType

    from paimon_core.catalog import FileSystemCatalog
    from paimon_core.table import FileStoreTable

__all__ = [
    "PROCEDURES",
    "CallContext",
    "Column",
    "Parameter",
    "Procedure",
    "ProcedureError",
    "ProcedureResult",
    "TypedValue",
    "bind_arguments",
    "call_procedure",
    "epoch_millis_to_local",
    "literal_type",
    "local_to_epoch_millis",
    "parse_local_timestamp",
    "register",
    "resolve_time_zone",
    "spark_type",
]

PARAMETER_TYPES = frozenset({"STRING", "BIGINT", "INT", "BOOLEAN"})
# Spark's `Cast.numericPrecedence`: each type up-casts to the ones after it.
_NUMERIC_PRECEDENCE = ("TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE")
_SUFFIXES = {"TINYINT": "Y", "SMALLINT": "S", "BIGINT": "L", "FLOAT": "F", "DOUBLE": "D"}
_INT_RANGE = (-(2**31), 2**31 - 1)
_LONG_RANGE = (-(2**63), 2**63 - 1)
_TIMESTAMP = re.compile(
    r"\s*(\d{4})-(\d{1,2})-(\d{1,2})"
    r"(?:[ T](\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{1,9}))?)?)?\s*"
)


class ProcedureError(PaimonError):
    """A CALL that cannot run: unknown procedure or argument, bad value, missing table/tag/snapshot.

    Raised before anything is changed on disk.
    """


@dataclass(frozen=True, slots=True)
class Column:
    """A result column: Spark SQL type name (``BIGINT``, ``STRING``, ...) and nullability."""

    name: str
    type: str
    nullable: bool = True


@dataclass(frozen=True, slots=True)
class Parameter:
    """A procedure parameter; ``type`` is one of STRING, BIGINT, INT, BOOLEAN."""

    name: str
    type: str
    required: bool = False
    default: Any = None

    def __post_init__(self) -> None:
        if self.type not in PARAMETER_TYPES:
            raise ValueError(f"Unsupported parameter type {self.type} of {self.name}")


@dataclass(frozen=True, slots=True)
class ProcedureResult:
    """The rows a CALL returns and their columns (Paimon's columns first)."""

    columns: tuple[Column, ...]
    rows: list[tuple[Any, ...]] = field(hash=False)

    def spark_schema(self) -> StructType:
        """The result schema as a pyspark ``StructType`` (pyspark is imported here only)."""
        from pyspark.sql.types import StructField, StructType

        return StructType(
            [StructField(c.name, spark_type(c.type), c.nullable) for c in self.columns]
        )


@dataclass(frozen=True, slots=True)
class CallContext:
    """What a procedure body needs besides its arguments: the catalog and the session."""

    catalog: FileSystemCatalog
    current_database: str
    procedure: str
    time_zone: dt.tzinfo | None = None
    catalog_name: str | None = None
    table_hook: Callable[[FileStoreTable, str, str], FileStoreTable] | None = None
    """Applied to every table a procedure loads (the session's dynamic options)."""
    run_tasks: Callable[[Callable[[Any], Any], Sequence[Any]], list[Any]] | None = None
    """``(func, tasks) -> [func(task)...]`` where data work runs (Spark executors under
    ``PaimonSession``); None: in this process."""

    def fail(self, message: str) -> ProcedureError:
        return ProcedureError(f"CALL sys.{self.procedure}: {message}")

    def _name_parts(self, identifier: str | None, argument: str, size: int) -> list[str]:
        """``size`` dot-separated parts (back-quotes allowed), optionally after this catalog."""
        if identifier is None or not identifier.strip():
            raise self.fail(f"Cannot handle an empty identifier for argument {argument}")
        parts = _split_multipart(identifier)
        if parts is None or not all(parts) or len(parts) > size + 1:
            expected = "'table', 'db.table' or 'catalog.db.table'" if size == 2 else "'db'"
            raise self.fail(
                f"Invalid identifier '{identifier}' for argument {argument}: expected {expected}"
            )
        if len(parts) == size + 1:
            catalog = parts.pop(0)
            if self.catalog_name is None or catalog.lower() != self.catalog_name.lower():
                raise self.fail(
                    f"Cannot run procedure in catalog '{self.catalog_name}': "
                    f"'{identifier}' is a table in catalog '{catalog}'"
                )
        return parts

    def split_table(self, identifier: str | None, argument: str = "table") -> tuple[str, str]:
        """``'t'``, ``'db.t'`` or ``'catalog.db.t'`` (back-quotes allowed) -> (database, table)."""
        parts = self._name_parts(identifier, argument, 2)
        if len(parts) == 1:
            return self.current_database, parts[0]
        return parts[0], parts[1]

    def database(self, identifier: str, argument: str = "table") -> str:
        """``'db'`` or ``'catalog.db'`` -> the database name."""
        return self._name_parts(identifier, argument, 1)[0]

    def table(self, identifier: str | None, argument: str = "table") -> FileStoreTable:
        """Load the table named by a ``table`` argument (current database when unqualified)."""
        database, name = self.split_table(identifier, argument)
        table = self.catalog.get_table(f"{database}.{name}")
        return table if self.table_hook is None else self.table_hook(table, database, name)

    def timestamp_millis(self, text: str, argument: str) -> int:
        """A ``'yyyy-MM-dd HH:mm:ss[.SSS]'`` argument in the session time zone, as epoch millis."""
        try:
            local = parse_local_timestamp(text)
        except ValueError as err:
            raise self.fail(f"Invalid {argument} '{text}': {err}") from None
        return local_to_epoch_millis(local, self.time_zone)


ProcedureFunc = Callable[[CallContext, dict[str, Any]], ProcedureResult]


@dataclass(frozen=True, slots=True)
class Procedure:
    """A ``CALL sys.<name>``: parameters in Paimon's code order (= positional order).

    ``output`` is Paimon's result schema; a call may append columns (dry runs) but never
    reorders or drops these.
    """

    name: str
    parameters: tuple[Parameter, ...]
    output: tuple[Column, ...]
    func: ProcedureFunc = field(compare=False)
    description: str = ""

    @property
    def signature(self) -> str:
        return ", ".join(p.name for p in self.parameters)


PROCEDURES: dict[str, Procedure] = {}
"""Every procedure by (lower-case) name; filled when the ``procedures`` package is imported."""


def register(*procedures: Procedure) -> None:
    for proc in procedures:
        if proc.name in PROCEDURES:
            raise ValueError(f"Procedure {proc.name} is registered twice")
        PROCEDURES[proc.name] = proc


# ---------------------------------------------------------------------------- time zones


def resolve_time_zone(time_zone: str | dt.tzinfo | None) -> dt.tzinfo | None:
    """A session time zone: an IANA name, 'UTC', '+08:00', a tzinfo, or None (local zone)."""
    if time_zone is None or isinstance(time_zone, dt.tzinfo):
        return time_zone
    text = time_zone.strip()
    match = re.fullmatch(r"(?:GMT|UTC)?([+-])(\d{1,2})(?::?(\d{2}))?", text)
    if match:
        sign = -1 if match.group(1) == "-" else 1
        offset = dt.timedelta(hours=int(match.group(2)), minutes=int(match.group(3) or 0))
        return dt.timezone(sign * offset)
    if text.upper() in ("UTC", "Z", "GMT"):
        return dt.UTC
    try:
        return zoneinfo.ZoneInfo(text)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ProcedureError(f"Unknown time zone '{time_zone}'") from None


def parse_local_timestamp(text: str) -> dt.datetime:
    """``yyyy-MM-dd[ HH:mm[:ss[.fraction]]]`` as a naive datetime, cut to milliseconds
    (Paimon's ``DateTimeUtils.parseTimestampData(text, 3, ...)``)."""
    match = _TIMESTAMP.fullmatch(text)
    if match is None:
        raise ValueError("expected 'yyyy-MM-dd HH:mm:ss[.SSS]'")
    year, month, day, hour, minute, second, fraction = match.groups()
    millis = int((fraction or "0")[:3].ljust(3, "0"))
    return dt.datetime(
        int(year),
        int(month),
        int(day),
        int(hour or 0),
        int(minute or 0),
        int(second or 0),
        millis * 1000,
    )


def local_to_epoch_millis(local: dt.datetime, time_zone: dt.tzinfo | None) -> int:
    """A naive wall-clock time in ``time_zone`` (None: the local zone) as epoch millis."""
    aware = local.astimezone() if time_zone is None else local.replace(tzinfo=time_zone)
    return (aware - _EPOCH) // dt.timedelta(milliseconds=1)


def epoch_millis_to_local(millis: int, time_zone: dt.tzinfo | None) -> dt.datetime:
    """Epoch millis as a naive wall-clock datetime in ``time_zone`` (None: the local zone)."""
    instant = _EPOCH + dt.timedelta(milliseconds=millis)
    if time_zone is None:
        return instant.astimezone().replace(tzinfo=None)
    return instant.astimezone(time_zone).replace(tzinfo=None)


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


# ---------------------------------------------------------------------------- binding


@dataclass(frozen=True, slots=True)
class TypedValue:
    """A CALL argument whose Spark type is not the one its Python value implies: a suffixed
    number literal such as ``10L`` (BIGINT, where ``10`` is INT), ``2S``, ``3Y``, ``1.5F``.

    The type decides whether the argument binds (``retain_max => 10L`` does not: Spark does
    not up-cast BIGINT to INT).
    """

    value: Any
    type: str

    def __repr__(self) -> str:
        suffix = _SUFFIXES.get(self.type)
        return f"{self.value!r}{suffix}" if suffix else f"TypedValue({self.value!r}, {self.type!r})"


def literal_type(value: Any) -> str:
    """The Spark SQL type of a CALL argument value, as Spark types the literal."""
    if isinstance(value, TypedValue):
        return value.type
    if value is None:
        return "VOID"
    if isinstance(value, bool):
        return "BOOLEAN"
    if isinstance(value, int):
        if _INT_RANGE[0] <= value <= _INT_RANGE[1]:
            return "INT"
        if _LONG_RANGE[0] <= value <= _LONG_RANGE[1]:
            return "BIGINT"
        return f"DECIMAL({len(str(abs(value)))},0)"
    if isinstance(value, float):
        return "DOUBLE"
    if isinstance(value, Decimal):
        precision, scale = _decimal_shape(value)
        return f"DECIMAL({precision},{scale})"
    if isinstance(value, str):
        return "STRING"
    if isinstance(value, (bytes, bytearray)):
        return "BINARY"
    if isinstance(value, dt.datetime):
        return "TIMESTAMP"
    if isinstance(value, dt.date):
        return "DATE"
    if isinstance(value, Mapping):
        if not value:
            return "MAP<VOID,VOID>"
        key, item = next(iter(value.items()))
        return f"MAP<{literal_type(key)},{literal_type(item)}>"
    if isinstance(value, (list, tuple)):
        return f"ARRAY<{literal_type(value[0]) if value else 'VOID'}>"
    return type(value).__name__.upper()


def _decimal_shape(value: Decimal) -> tuple[int, int]:
    _, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    scale = max(-exponent, 0)
    precision = max(len(digits) + max(exponent, 0), scale, 1)
    return precision, scale


def _can_up_cast(source: str, target: str) -> bool:
    """Spark's ``UpCastRule.canUpCast`` for the literal types a CALL can carry."""
    if source == target or source == "VOID":
        return True
    if target == "STRING":
        return not source.startswith(("MAP<", "ARRAY<"))
    if source.startswith("DECIMAL("):
        precision, scale = (int(x) for x in source[8:-1].split(","))
        bound = {"INT": 10, "BIGINT": 20}.get(target)
        return bound is not None and scale == 0 and precision <= bound
    if source in _NUMERIC_PRECEDENCE and target in _NUMERIC_PRECEDENCE:
        return _NUMERIC_PRECEDENCE.index(source) < _NUMERIC_PRECEDENCE.index(target)
    return source == "TIMESTAMP" and target == "BIGINT"


def _cast(value: Any, target: str, time_zone: dt.tzinfo | None) -> Any:
    """The literal cast to the parameter type (only called when ``_can_up_cast`` holds)."""
    if isinstance(value, TypedValue):
        value = value.value
    if value is None:
        return None
    if target == "STRING":
        return _to_string(value)
    if target in ("BIGINT", "INT"):
        if isinstance(value, dt.datetime):
            return local_to_epoch_millis(value, time_zone) // 1000  # Spark: epoch seconds
        number = int(value)
        low, high = _INT_RANGE if target == "INT" else _LONG_RANGE
        if not low <= number <= high:
            raise OverflowError(f"{value} is out of the {target} range")
        return number
    return value


def _to_string(value: Any) -> str:
    """Spark's ``CAST(literal AS STRING)``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_float_string(value)
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, dt.datetime):
        text = value.strftime("%Y-%m-%d %H:%M:%S")
        if value.microsecond:
            text += f".{value.microsecond:06d}".rstrip("0")
        return text
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", errors="replace")
    return str(value)


def _named_pairs(named: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> list[tuple[str, Any]]:
    items = named.items() if isinstance(named, Mapping) else named
    return [(str(name).lower(), value) for name, value in items]


def bind_arguments(
    proc: Procedure,
    named: Mapping[str, Any] | Iterable[tuple[str, Any]] | None,
    positional: Sequence[Any] | None,
    *,
    time_zone: dt.tzinfo | None = None,
) -> dict[str, Any]:
    """Match CALL arguments to ``proc``'s parameters and cast them to the parameter types.

    Args:
        proc: the procedure.
        named: ``name -> value`` (or pairs, to detect duplicates); names match case-insensitively.
        positional: values in the parameters' code order.
        time_zone: session zone, for a TIMESTAMP literal given to a BIGINT parameter.

    Returns:
        Every parameter name -> its value; omitted optional parameters get their default.

    Raises:
        ProcedureError: mixed, unknown, duplicated, missing or too many arguments, or a value
            Spark would not up-cast to the parameter type.
    """
    label = f"CALL sys.{proc.name}"
    pairs = _named_pairs(named or {})
    positional = tuple(positional or ())
    if pairs and positional:
        raise ProcedureError(f"{label}: Cannot mix named and positional arguments.")
    params = {p.name.lower(): p for p in proc.parameters}
    given: dict[str, Any] = {}
    if pairs:
        errors: list[str] = []
        for name, value in pairs:
            if name in given:
                errors.append(f"Procedure argument {name} is duplicated.")
            elif name not in params:
                errors.append(f"Argument {name} is unknown.")
            given[name] = value
        if errors:
            raise ProcedureError(
                f"{label}: {' '.join(dict.fromkeys(errors))} Parameters are ({proc.signature})."
            )
    else:
        if len(positional) > len(proc.parameters):
            raise ProcedureError(
                f"{label}: Too many arguments for procedure: {len(positional)} given, "
                f"at most {len(proc.parameters)} ({proc.signature})."
            )
        given = {p.name.lower(): v for p, v in zip(proc.parameters, positional)}
    missing = [p.name for p in proc.parameters if p.required and p.name.lower() not in given]
    if missing:
        raise ProcedureError(f"{label}: Required parameters [{','.join(missing)}] is missed.")

    bound: dict[str, Any] = {}
    for param in proc.parameters:
        if param.name.lower() not in given:
            bound[param.name] = param.default
            continue
        value = given[param.name.lower()]
        source = literal_type(value)
        if not _can_up_cast(source, param.type):
            raise ProcedureError(
                f"{label}: Cannot cast {source} to {param.type} of {param.name}"
                f" (got {_show(value)})."
            )
        try:
            bound[param.name] = _cast(value, param.type, time_zone)
        except (OverflowError, ValueError, TypeError) as err:
            raise ProcedureError(f"{label}: Cannot cast {param.name}: {err}.") from None
    return bound


def _show(value: Any) -> str:
    text = repr(value) if not isinstance(value, str) else f"'{value}'"
    return text if len(text) <= 60 else text[:57] + "..."


def _split_multipart(text: str) -> list[str] | None:
    """Spark's multipart identifier: dot-separated parts, each optionally back-quoted."""
    parts: list[str] = []
    i, n = 0, len(text := text.strip())
    while True:
        if i < n and text[i] == "`":
            buf, i = [], i + 1
            while True:
                if i >= n:
                    return None
                if text[i] == "`":
                    if i + 1 < n and text[i + 1] == "`":
                        buf.append("`")
                        i += 2
                        continue
                    i += 1
                    break
                buf.append(text[i])
                i += 1
            parts.append("".join(buf))
        else:
            end = text.find(".", i)
            end = n if end < 0 else end
            part = text[i:end]
            if "`" in part:
                return None
            parts.append(part)
            i = end
        if i == n:
            return parts
        if text[i] != ".":
            return None
        i += 1


# ---------------------------------------------------------------------------- calling


def call_procedure(
    name: str,
    named: Mapping[str, Any] | Iterable[tuple[str, Any]] | None = None,
    positional: Sequence[Any] | None = None,
    *,
    catalog: FileSystemCatalog,
    current_database: str,
    time_zone: str | dt.tzinfo | None = None,
    catalog_name: str | None = None,
    table_hook: Callable[[FileStoreTable, str, str], FileStoreTable] | None = None,
    run_tasks: Callable[[Callable[[Any], Any], Sequence[Any]], list[Any]] | None = None,
) -> ProcedureResult:
    """Run ``CALL sys.<name>(...)`` against ``catalog``.

    Args:
        name: procedure name (case-insensitive, without ``sys.``).
        named: named arguments; or ``positional`` (never both).
        positional: positional arguments in Paimon's parameter order.
        catalog: the Paimon catalog the procedure works on.
        current_database: database of unqualified ``table`` arguments.
        time_zone: session time zone for timestamp strings (None: the local zone).
        catalog_name: this catalog's name in Spark, for ``'catalog.db.t'`` identifiers.
        table_hook: ``(table, database, name) -> table`` applied to the tables the procedure
            loads, e.g. Spark's ``spark.paimon.*`` dynamic options.
        run_tasks: where a procedure's data work runs (see ``CallContext.run_tasks``).

    Returns:
        The result columns (Paimon's first) and rows.

    Raises:
        ProcedureError: anything that stops the call; nothing has been changed then.

    >>> call_procedure("nope", catalog=None, current_database="default")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    procedures.base.ProcedureError: Procedure sys.nope is not found...
    """
    key = name.strip().lower()
    proc = PROCEDURES.get(key)
    if proc is None:
        raise ProcedureError(
            f"Procedure sys.{key} is not found. Available: {', '.join(sorted(PROCEDURES))}."
        )
    zone = resolve_time_zone(time_zone)
    args = bind_arguments(proc, named, positional, time_zone=zone)
    context = CallContext(
        catalog, current_database, proc.name, zone, catalog_name, table_hook, run_tasks
    )
    try:
        return proc.func(context, args)
    except ProcedureError:
        raise
    except PaimonError as err:
        raise context.fail(" ".join(str(err).split()) or type(err).__name__) from err


# ---------------------------------------------------------------------------- Spark types

_SIMPLE_SPARK_TYPES = {
    "STRING": "StringType",
    "BIGINT": "LongType",
    "INT": "IntegerType",
    "BOOLEAN": "BooleanType",
    "DOUBLE": "DoubleType",
    "TIMESTAMP": "TimestampType",
    "TIMESTAMP_NTZ": "TimestampNTZType",
    "DATE": "DateType",
    "BINARY": "BinaryType",
}


def spark_type(text: str) -> SparkDataType:
    """A pyspark type for the Spark SQL type names used in result schemas (``ARRAY<STRING>``)."""
    from pyspark.sql import types

    upper = text.strip().upper()
    if upper.startswith("ARRAY<") and upper.endswith(">"):
        return types.ArrayType(spark_type(upper[6:-1]), True)
    simple = _SIMPLE_SPARK_TYPES.get(upper)
    if simple is None:
        raise ValueError(f"Unsupported result column type {text}")
    return getattr(types, simple)()

"""ALTER TABLE and ALTER DATABASE on Paimon tables: Spark's grammar, Paimon-Spark's semantics.

Every form is read on sqlglot's token stream (sqlglot leaves several as bare commands and
parses the others into unlike trees), so the statement is parsed once, here. The table
name is read first: a name that is no Paimon table goes to Spark untouched. The actions
become Paimon schema changes as Paimon-Spark's ``SparkCatalog.toSchemaChange`` maps Spark's
``TableChange``s (latest Paimon): property ``comment`` is the table comment,
``primary-key`` cannot change, a type change keeps the column's nullability, and all of a
statement's changes are committed as one new ``schema-N``. ``RENAME TO`` moves the table
directory (``FileSystemCatalog.renameTable``); an unqualified new name stays in the table's
database, as Spark's ``RenameTableExec`` does. ``DROP PARTITION`` is one OVERWRITE
snapshot deleting the partitions' files (``truncatePartitions``). ``ALTER DATABASE`` is
refused as Paimon's file system catalog refuses it (it keeps no database properties).
Column types are parsed by Spark (``StructType.fromDDL``) and mapped by ``spark_types``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from pyspark.errors import PySparkException
from pyspark.sql import types as st
from sqlglot import exp
from sqlglot.errors import TokenError
from sqlglot.tokens import Token, TokenType

from paimon_core import schema as sc
from paimon_core.exceptions import DatabaseNotExist, PaimonError
from paimon_core.types import DataField, DataType
from sql_ext.dialect import PaimonSpark
from sql_ext.errors import SqlError, first_line
from sql_ext.metadata.config import CATALOG_NAME
from sql_ext.parse import SqlParseError
from sql_ext.spark_types import from_spark_type
from sql_ext.tables import static_partition

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from paimon_core.catalog import FileSystemCatalog
    from paimon_core.table import FileStoreTable

_DATABASE_KINDS = ("DATABASE", "SCHEMA", "NAMESPACE")
_NAME_TOKENS = (TokenType.VAR, TokenType.IDENTIFIER)
_COLUMN_ENDS = ("COMMENT", "FIRST", "AFTER", "NOT", "DEFAULT")
T = TypeVar("T")
_CASE_SENSITIVE = "spark.sql.caseSensitive"
_RESERVED_PROPERTIES = {
    "provider": "please use the USING clause to specify it",
    "location": "please use the LOCATION clause to specify it",
    "owner": "it will be set to the current user",
    "external": "please use CREATE EXTERNAL TABLE",
    "is_managed_location": "it cannot be set",
}
PRIMARY_KEY_OPTION = "primary-key"
COMMENT_PROPERTY = "comment"


# ----------------------------------------------------------------------------- statements


@dataclass(frozen=True, slots=True)
class NewColumn:
    """One column of ADD COLUMN(S): ``path`` (``("s", "z")`` for a nested field)."""

    path: tuple[str, ...]
    type_text: str
    not_null: bool = False
    comment: str | None = None
    first: bool = False
    after: str | None = None


@dataclass(frozen=True, slots=True)
class ColumnChange:
    """One ``ALTER|CHANGE COLUMN path ...`` action (the fields it does not set are None)."""

    path: tuple[str, ...]
    type_text: str | None = None
    comment: str | None = None
    set_comment: bool = False
    nullable: bool | None = None
    first: bool = False
    after: str | None = None


@dataclass(frozen=True, slots=True)
class AlterTable:
    """What one ALTER TABLE asks for; only one kind of action is set."""

    name: tuple[str, ...]
    properties: dict[str, str] = field(default_factory=dict)
    unset: tuple[str, ...] = ()
    rename_to: tuple[str, ...] | None = None
    add: tuple[NewColumn, ...] = ()
    rename_column: tuple[tuple[str, ...], str] | None = None
    drop: tuple[tuple[str, ...], ...] = ()
    drop_if_exists: bool = False
    alter: tuple[ColumnChange, ...] = ()
    partitions: tuple[dict[str, exp.Expr], ...] = ()
    partitions_if_exists: bool = False


@dataclass(frozen=True, slots=True)
class AlterHead:
    """``ALTER TABLE|DATABASE <name>`` and the cursor just after the name."""

    kind: str
    name: tuple[str, ...]
    cursor: _Cursor
    text: str


class _Cursor:
    """A cursor over the statement's tokens with keyword matching and clear failures."""

    def __init__(self, text: str) -> None:
        self.tokens: list[Token] = PaimonSpark().tokenize(text)
        self.text = text
        self.i = 0

    def at_end(self) -> bool:
        return self.i >= len(self.tokens) or self.tokens[self.i].token_type == TokenType.SEMICOLON

    def peek(self, *words: str) -> bool:
        window = self.tokens[self.i : self.i + len(words)]
        return len(window) == len(words) and all(
            t.text.upper() == w and t.token_type not in (TokenType.STRING, TokenType.IDENTIFIER)
            for t, w in zip(window, words)
        )

    def peek_type(self, kind: TokenType) -> bool:
        return self.i < len(self.tokens) and self.tokens[self.i].token_type == kind

    def accept(self, *words: str) -> bool:
        if self.peek(*words):
            self.i += len(words)
            return True
        return False

    def accept_type(self, kind: TokenType) -> bool:
        if self.peek_type(kind):
            self.i += 1
            return True
        return False

    def expect(self, *words: str) -> None:
        if not self.accept(*words):
            raise self.error(f"expected {' '.join(words)}")

    def expect_type(self, kind: TokenType, what: str) -> None:
        if not self.accept_type(kind):
            raise self.error(f"expected {what}")

    def error(self, message: str) -> SqlParseError:
        if not self.at_end():
            token = self.tokens[self.i]
            return SqlParseError(f"ALTER: {message} near '{token.text}'", token.line, token.col)
        return SqlParseError(f"ALTER: {message} at the end of the statement")

    def identifier(self, what: str) -> str:
        if not self.at_end():
            token = self.tokens[self.i]
            if token.token_type in _NAME_TOKENS or (
                token.token_type != TokenType.STRING and token.text.isidentifier()
            ):
                self.i += 1
                return token.text
        raise self.error(f"expected {what}")

    def dotted(self, what: str) -> tuple[str, ...]:
        parts = [self.identifier(what)]
        while self.accept_type(TokenType.DOT):
            parts.append(self.identifier(what))
        return tuple(parts)

    def string(self, what: str) -> str:
        if self.peek_type(TokenType.STRING):
            self.i += 1
            return self.tokens[self.i - 1].text
        raise self.error(f"expected {what} (a quoted string)")

    def value(self) -> str:
        """A property value: a string, number, boolean or bare word."""
        if self.at_end():
            raise self.error("expected a property value")
        token = self.tokens[self.i]
        negative = token.token_type == TokenType.DASH
        if negative:
            self.i += 1
            if not self.peek_type(TokenType.NUMBER):
                raise self.error("expected a number")
            token = self.tokens[self.i]
        if token.token_type in (TokenType.TRUE, TokenType.FALSE):
            self.i += 1
            return token.text.lower()
        if token.token_type in (TokenType.STRING, TokenType.NUMBER, *_NAME_TOKENS):
            self.i += 1
            return "-" + token.text if negative else token.text
        raise self.error("expected a property value")

    def property_key(self) -> str:
        if self.peek_type(TokenType.STRING):
            return self.string("a property key")
        return ".".join(self.dotted("a property key"))

    def span(self, stops: Sequence[str]) -> str:
        """The text of the tokens up to a top-level `,`, `)`, end or one of ``stops``."""
        start, depth = self.i, 0
        while not self.at_end():
            token = self.tokens[self.i]
            kind = token.token_type
            if depth == 0 and (
                kind in (TokenType.COMMA, TokenType.R_PAREN)
                or (
                    kind not in (TokenType.STRING, TokenType.IDENTIFIER)
                    and token.text.upper() in stops
                )
            ):
                break
            if kind in (TokenType.L_PAREN, TokenType.LT):
                depth += 1
            elif kind in (TokenType.R_PAREN, TokenType.GT):
                depth -= 1
            self.i += 1
        if self.i == start:
            raise self.error("expected a column type")
        first, last = self.tokens[start], self.tokens[self.i - 1]
        return self.text[first.start : last.end + 1]


def is_alter(text: str) -> bool:
    """Whether ``text`` is ALTER TABLE or ALTER DATABASE|SCHEMA|NAMESPACE (tag DDL aside),
    decided on its first tokens (comments before it are fine)."""
    if "alter" not in text.lower():
        return False
    try:
        cur = _Cursor(text)
    except TokenError:
        return False
    return any(cur.peek("ALTER", kind) for kind in ("TABLE", *_DATABASE_KINDS))


def parse_head(text: str) -> AlterHead:
    """The statement's kind and the name it alters; the actions are read by ``alter_table``."""
    cur = _Cursor(text)
    cur.expect("ALTER")
    kind = next((k for k in ("TABLE", *_DATABASE_KINDS) if cur.accept(k)), None)
    if kind is None:
        raise cur.error("expected TABLE or DATABASE")
    name = cur.dotted("a table name" if kind == "TABLE" else "a database name")
    return AlterHead("TABLE" if kind == "TABLE" else "DATABASE", name, cur, text)


def parse_actions(head: AlterHead, shown: str | None = None) -> AlterTable:
    """The actions of an ALTER TABLE (Spark's grammar) on the table ``shown``; raise
    ``SqlParseError`` or, for a Spark form Paimon tables do not support, ``SqlError``."""
    cur = head.cursor
    if cur.accept("SET", "TBLPROPERTIES"):
        statement = AlterTable(head.name, properties=_property_list(cur, values=True))
    elif cur.accept("UNSET", "TBLPROPERTIES"):
        cur.accept("IF", "EXISTS")
        statement = AlterTable(head.name, unset=tuple(_property_list(cur, values=False)))
    elif cur.accept("RENAME", "TO"):
        statement = AlterTable(head.name, rename_to=cur.dotted("the new table name"))
    elif cur.accept("RENAME", "COLUMN"):
        path = cur.dotted("a column name")
        cur.expect("TO")
        statement = AlterTable(head.name, rename_column=(path, cur.identifier("new column name")))
    elif cur.accept("ADD", "COLUMNS") or cur.accept("ADD", "COLUMN"):
        statement = AlterTable(head.name, add=tuple(_list(cur, _new_column)))
    elif cur.accept("DROP", "COLUMNS") or cur.accept("DROP", "COLUMN"):
        if_exists = cur.accept("IF", "EXISTS")
        paths = _list(cur, lambda c: c.dotted("a column name"))
        statement = AlterTable(head.name, drop=tuple(paths), drop_if_exists=if_exists)
    elif cur.peek("DROP", "PARTITION") or cur.peek("DROP", "IF", "EXISTS", "PARTITION"):
        cur.expect("DROP")
        if_exists = cur.accept("IF", "EXISTS")
        specs = [_partition_spec(cur)]
        while cur.accept_type(TokenType.COMMA):
            specs.append(_partition_spec(cur))
        cur.accept("PURGE")
        statement = AlterTable(head.name, partitions=tuple(specs), partitions_if_exists=if_exists)
    elif cur.accept("ALTER") or cur.accept("CHANGE"):
        cur.accept("COLUMN")
        changes = [_column_change(cur)]
        while cur.accept_type(TokenType.COMMA):
            changes.append(_column_change(cur))
        statement = AlterTable(head.name, alter=tuple(changes))
    else:
        words = []
        for token in cur.tokens[cur.i : cur.i + 3]:
            if token.token_type in (TokenType.STRING, TokenType.IDENTIFIER):
                break
            if not token.text.isidentifier():
                break
            words.append(token.text.upper())
        form = " ".join(words) or "this form"
        raise SqlError(
            f"ALTER TABLE ... {form} is not supported on Paimon table "
            f"{shown or '.'.join(head.name)}"
        )
    if not cur.at_end():
        raise cur.error("unexpected text")
    return statement


def _list(cur: _Cursor, item: Callable[[_Cursor], T]) -> list[T]:
    """Items separated by commas, in parentheses or not (Spark accepts both)."""
    parenthesised = cur.accept_type(TokenType.L_PAREN)
    items = [item(cur)]
    while cur.accept_type(TokenType.COMMA):
        items.append(item(cur))
    if parenthesised:
        cur.expect_type(TokenType.R_PAREN, "')'")
    return items


def _property_list(cur: _Cursor, *, values: bool) -> dict[str, str]:
    cur.expect_type(TokenType.L_PAREN, "'('")
    out: dict[str, str] = {}
    while True:
        key = cur.property_key()
        if values:
            cur.accept_type(TokenType.EQ)
            out[key] = cur.value()
        else:
            out[key] = ""
        if not cur.accept_type(TokenType.COMMA):
            break
    cur.expect_type(TokenType.R_PAREN, "')'")
    return out


def _new_column(cur: _Cursor) -> NewColumn:
    """``name type`` then NOT NULL, COMMENT and FIRST / AFTER in any order, as Spark reads
    them (``colDefinitionDescriptorWithPosition``)."""
    path = cur.dotted("a column name")
    type_text = cur.span(_COLUMN_ENDS)
    not_null, comment, first, after = False, None, False, None
    while True:
        if cur.accept("NOT", "NULL"):
            not_null = True
        elif cur.accept("COMMENT"):
            comment = cur.string("a comment")
        elif cur.accept("FIRST"):
            first = True
        elif cur.accept("AFTER"):
            after = cur.identifier("a column name")
        elif cur.peek("DEFAULT"):
            raise SqlError(f"ADD COLUMN {'.'.join(path)} DEFAULT is not supported on Paimon tables")
        else:
            return NewColumn(path, type_text, not_null, comment, first, after)


def _column_change(cur: _Cursor) -> ColumnChange:
    path = cur.dotted("a column name")
    if cur.accept("TYPE"):
        return ColumnChange(path, type_text=cur.span(_COLUMN_ENDS))
    if cur.accept("COMMENT"):
        return ColumnChange(path, comment=cur.string("a comment"), set_comment=True)
    if cur.accept("FIRST"):
        return ColumnChange(path, first=True)
    if cur.accept("AFTER"):
        return ColumnChange(path, after=cur.identifier("a column name"))
    if cur.accept("SET", "NOT", "NULL"):
        return ColumnChange(path, nullable=False)
    if cur.accept("DROP", "NOT", "NULL"):
        return ColumnChange(path, nullable=True)
    if cur.peek("SET", "DEFAULT") or cur.peek("DROP", "DEFAULT"):
        raise SqlError(f"Column DEFAULT of {'.'.join(path)} is not supported on Paimon tables")
    # Hive's CHANGE COLUMN a a TYPE: the same name again, then the type.
    renamed = cur.identifier("TYPE, COMMENT, FIRST, AFTER, SET or DROP NOT NULL")
    if renamed != path[-1]:
        raise SqlError(
            f"Renaming column {'.'.join(path)} with CHANGE COLUMN is not supported: "
            "use RENAME COLUMN"
        )
    type_text = cur.span(_COLUMN_ENDS)
    comment = cur.string("a comment") if cur.accept("COMMENT") else None
    first = cur.accept("FIRST")
    after = cur.identifier("a column name") if not first and cur.accept("AFTER") else None
    return ColumnChange(path, type_text, comment, comment is not None, None, first, after)


def _partition_spec(cur: _Cursor) -> dict[str, exp.Expr]:
    cur.expect("PARTITION")
    cur.expect_type(TokenType.L_PAREN, "'('")
    spec: dict[str, exp.Expr] = {}
    while True:
        key = cur.identifier("a partition column")
        cur.expect_type(TokenType.EQ, "'='")
        negative = cur.accept_type(TokenType.DASH)
        if cur.peek_type(TokenType.STRING) and not negative:
            spec[key] = exp.Literal.string(cur.string("a value"))
        elif cur.peek_type(TokenType.NUMBER):
            cur.i += 1
            number = exp.Literal.number(cur.tokens[cur.i - 1].text)
            spec[key] = exp.Neg(this=number) if negative else number
        elif not negative and cur.accept("NULL"):
            spec[key] = exp.Null()
        elif not negative and (cur.accept("TRUE") or cur.accept("FALSE")):
            spec[key] = exp.Boolean(this=cur.tokens[cur.i - 1].text.upper() == "TRUE")
        else:
            raise cur.error("expected a partition value (a literal)")
        if not cur.accept_type(TokenType.COMMA):
            break
    cur.expect_type(TokenType.R_PAREN, "')'")
    return spec


# -------------------------------------------------------------------------------- running


def alter_database(catalog: FileSystemCatalog, database: str) -> None:
    """Paimon's file system catalog keeps no database properties or location: Paimon-Spark's
    ``alterNamespace`` ends in its ``alterDatabaseImpl``, which refuses every change (after
    Spark checked the database exists)."""
    if not catalog.database_exists(database):
        raise DatabaseNotExist(f"Database {database} does not exist")
    raise SqlError(
        f"ALTER DATABASE {database}: alter database is not supported by Paimon's filesystem catalog"
    )


def alter_table(
    spark: SparkSession,
    catalog: FileSystemCatalog,
    database: str,
    name: str,
    head: AlterHead,
) -> None:
    """Run one ALTER TABLE on the Paimon table ``database.name``; a failure changes nothing."""
    shown = f"{CATALOG_NAME}.{database}.{name}"
    statement = parse_actions(head, shown)
    try:
        table = catalog.get_table(f"{database}.{name}")
        if statement.rename_to is not None:
            _rename_table(catalog, f"{database}.{name}", database, statement.rename_to, shown)
        elif statement.partitions:
            _drop_partitions(spark, table, statement, shown)
        else:
            sensitive = str(spark.conf.get(_CASE_SENSITIVE, "false")).lower() == "true"
            names = _Names(table.schema.fields, sensitive)
            table.schema_manager.commit_changes(_schema_changes(names, statement, shown))
    except SqlError:
        raise
    except (PaimonError, ValueError) as e:
        raise SqlError(f"ALTER TABLE {shown}: {first_line(e)}") from None


def _rename_table(
    catalog: FileSystemCatalog,
    identifier: str,
    database: str,
    new: tuple[str, ...],
    shown: str,
) -> None:
    """Paimon-Spark's ``renameTable``: a catalog in the new name must be this one."""
    if len(new) > 3:
        raise SqlError(f"ALTER TABLE {shown} RENAME TO: invalid table name {'.'.join(new)}")
    if len(new) == 3:
        if new[0].lower() != CATALOG_NAME:
            raise SqlError(
                f"ALTER TABLE {shown} RENAME TO: Only supports operations within the same "
                f"catalog, target catalog name: {new[0]}, current catalog name: {CATALOG_NAME}"
            )
        new = new[1:]
    target = f"{new[0]}.{new[1]}" if len(new) == 2 else f"{database}.{new[0]}"
    catalog.rename_table(identifier, target)


class _Names:
    """Column paths as stored: Spark resolves the names an ALTER mentions against the table
    (case-insensitively unless ``spark.sql.caseSensitive``) and hands Paimon the stored ones.
    A name that matches nothing stays as written, for the core to report."""

    def __init__(self, fields: Sequence[DataField], case_sensitive: bool) -> None:
        self.fields = fields
        self.case_sensitive = case_sensitive

    def resolve(self, path: tuple[str, ...]) -> tuple[str, ...]:
        out: list[str] = []
        current = list(self.fields)
        for part in path:
            found = next((f for f in current if f.name == part), None)
            if found is None and not self.case_sensitive:
                matches = [f for f in current if f.name.lower() == part.lower()]
                found = matches[0] if len(matches) == 1 else None
            if found is None:
                return (*out, *path[len(out) :])
            out.append(found.name)
            current = list(found.type.fields or ()) if found.type.root == "ROW" else []
        return tuple(out)

    def sibling(self, path: tuple[str, ...], name: str | None) -> str | None:
        """``AFTER name``: a field next to ``path``'s last part."""
        return None if name is None else self.resolve((*path[:-1], name))[-1]

    def new(self, path: tuple[str, ...]) -> tuple[str, ...]:
        """A field to add: its parent resolved, its own name as written."""
        return (*self.resolve(path[:-1]), path[-1])


def _schema_changes(names: _Names, statement: AlterTable, shown: str) -> list[sc.SchemaChange]:
    changes: list[sc.SchemaChange] = []
    for key, value in statement.properties.items():
        _check_property(key, shown)
        changes.append(
            sc.UpdateComment(value) if key == COMMENT_PROPERTY else sc.SetOption(key, value)
        )
    for key in statement.unset:
        _check_property(key, shown)
        changes.append(sc.UpdateComment(None) if key == COMMENT_PROPERTY else sc.RemoveOption(key))
    for column in statement.add:
        column_type = parse_type(column.type_text).copy(not column.not_null)
        after = names.sibling(column.path, column.after)
        path = names.new(column.path)
        changes.append(sc.AddColumn(_name(path), column_type, column.comment, column.first, after))
    if statement.rename_column is not None:
        path, new_name = statement.rename_column
        changes.append(sc.RenameColumn(_name(names.resolve(path)), new_name))
    for path in statement.drop:
        resolved = names.resolve(path)
        if statement.drop_if_exists and not _exists(names.fields, resolved):
            continue
        changes.append(sc.DropColumn(_name(resolved)))
    for change in statement.alter:
        changes.extend(_column_changes(names, change, shown))
    return changes


def _column_changes(names: _Names, change: ColumnChange, shown: str) -> list[sc.SchemaChange]:
    path = names.resolve(change.path)
    name = _name(path)
    current = _field_type(names.fields, path)
    out: list[sc.SchemaChange] = []
    if change.type_text is not None:
        new_type = parse_type(change.type_text)
        if current is not None:
            _check_spark_type_change(current, new_type, change.path, shown)
        out.append(sc.UpdateColumnType(name, new_type, keep_nullability=True))
    if change.set_comment:
        out.append(sc.UpdateColumnComment(name, change.comment))
    if change.nullable is False and current is not None and current.nullable:
        raise SqlError(
            f"ALTER TABLE {shown}: Cannot change nullable column to non-nullable: "
            f"{'.'.join(change.path)} (Spark refuses SET NOT NULL on a nullable column)"
        )
    if change.nullable is not None:
        out.append(sc.UpdateColumnNullability(name, change.nullable))
    if change.first or change.after is not None:
        if len(change.path) > 1:
            raise SqlError(f"Moving nested field {'.'.join(change.path)} is not supported")
        after = names.sibling(path, change.after)
        out.append(sc.UpdateColumnPosition(path[0], first=change.first, after=after))
    return out


def _check_property(key: str, shown: str) -> None:
    """Spark's parser refuses its reserved table properties (``cleanTableProperties``);
    Paimon-Spark's ``validateAlterProperty`` refuses ``primary-key``."""
    reserved = _RESERVED_PROPERTIES.get(key.lower())
    if reserved is not None:
        raise SqlError(f"ALTER TABLE {shown}: {key} is a reserved table property, {reserved}")
    if key == PRIMARY_KEY_OPTION:
        raise SqlError(f"ALTER TABLE {shown}: Alter primary key is not supported")


def _name(path: tuple[str, ...]) -> sc.FieldPath:
    return path[0] if len(path) == 1 else path


def _field_type(fields: Sequence[DataField], path: tuple[str, ...]) -> DataType | None:
    """The type of a (nested ROW) field; None when there is none (the core then says so)."""
    current = list(fields)
    found: DataField | None = None
    for part in path:
        if found is not None:
            if found.type.root != "ROW":
                return None
            current = list(found.type.fields or ())
        found = next((f for f in current if f.name == part), None)
        if found is None:
            return None
    return None if found is None else found.type


def _exists(fields: Sequence[DataField], path: tuple[str, ...]) -> bool:
    """Whether the (nested) field exists: DROP COLUMN IF EXISTS skips the missing ones."""
    return _field_type(fields, path) is not None


_NUMERIC_PRECEDENCE = ("TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE")
_INTEGRAL_DIGITS = {"TINYINT": 3, "SMALLINT": 5, "INT": 10, "BIGINT": 20}
_STRINGS = ("CHAR", "VARCHAR")
_TIMESTAMPS = ("TIMESTAMP", "TIMESTAMP_LTZ")


def _check_spark_type_change(
    old: DataType, new: DataType, path: tuple[str, ...], shown: str
) -> None:
    """Spark's analysis of ``ALTER COLUMN ... TYPE`` on a v2 table, which runs before Paimon
    sees the change: only an atomic column, only to a type it can up-cast to
    (``Cast.canUpCast``, as Spark sees the Paimon types: CHAR/VARCHAR are STRING)."""
    shown_path = ".".join(path)
    if old.root in ("ROW", "ARRAY", "MAP", "MULTISET"):
        raise SqlError(
            f"ALTER TABLE {shown}: Cannot update field {shown_path} of type {old}: "
            "update its nested fields instead"
        )
    if not _can_up_cast(old, new):
        raise SqlError(
            f"ALTER TABLE {shown}: Cannot update field {shown_path}: {old} cannot be cast to "
            f"{new} (Spark allows widening type changes only)"
        )


def _decimal_of(t: DataType) -> tuple[int, int] | None:
    if t.root == "DECIMAL":
        return t.precision or 10, t.scale or 0
    digits = _INTEGRAL_DIGITS.get(t.root)
    return None if digits is None else (digits, 0)


def _can_up_cast(old: DataType, new: DataType) -> bool:
    """Spark's ``Cast.canUpCast`` for the atomic types Paimon columns read as."""
    a = "VARCHAR" if old.root in _STRINGS else old.root
    b = "VARCHAR" if new.root in _STRINGS else new.root
    if a == b and a not in ("DECIMAL",):
        return True
    if b == "VARCHAR":
        return True
    if a in _NUMERIC_PRECEDENCE and b in _NUMERIC_PRECEDENCE:
        return _NUMERIC_PRECEDENCE.index(a) <= _NUMERIC_PRECEDENCE.index(b)
    wide, narrow = _decimal_of(new), _decimal_of(old)
    if b == "DECIMAL" and narrow is not None and wide is not None:
        return wide[0] - wide[1] >= narrow[0] - narrow[1] and wide[1] >= narrow[1]
    if a == "DECIMAL" and narrow is not None and wide is not None:
        return wide[0] - wide[1] >= narrow[0] - narrow[1] and wide[1] >= narrow[1]
    if a == "DATE" and b in _TIMESTAMPS:
        return True
    if a in _TIMESTAMPS and b in _TIMESTAMPS:
        return True
    return (a, b) in (("TIMESTAMP_LTZ", "BIGINT"), ("BIGINT", "TIMESTAMP_LTZ"))


def parse_type(text: str) -> DataType:
    """A Spark type as written (``BIGINT``, ``STRUCT<a: INT>``, ``DECIMAL(10, 2)``) as the
    Paimon type Paimon-Spark gives it.

    Raises:
        SqlError: Spark does not parse it, or Paimon has no such type.
    """
    try:
        parsed = st.StructType.fromDDL(f"`c` {text}")
    except PySparkException as e:
        raise SqlError(f"Invalid column type {text}: {first_line(e)}") from None
    if len(parsed.fields) != 1:
        raise SqlError(f"Invalid column type {text}")
    return from_spark_type(parsed.fields[0].dataType)


def _drop_partitions(
    spark: SparkSession, table: FileStoreTable, statement: AlterTable, shown: str
) -> None:
    keys = {k.lower(): k for k in table.schema.partition_keys}
    if not keys:
        raise SqlError(f"ALTER TABLE {shown} DROP PARTITION: the table is not partitioned")
    specs = []
    for written in statement.partitions:
        unknown = [k for k in written if k.lower() not in keys]
        if unknown:
            raise SqlError(
                f"ALTER TABLE {shown} DROP PARTITION: {', '.join(unknown)} is not a partition "
                f"column (the partition columns are {', '.join(table.schema.partition_keys)})"
            )
        specs.append(static_partition(spark, table, written))
    snapshot = table.latest_snapshot()
    scan = table.new_scan()
    missing = [spec for spec in specs if snapshot is None or not scan.read_entries(snapshot, spec)]
    if missing and not statement.partitions_if_exists:
        shown_specs = "; ".join(", ".join(f"{k}={v}" for k, v in s.items()) for s in missing)
        raise SqlError(f"ALTER TABLE {shown} DROP PARTITION: partitions not found: {shown_specs}")
    present = [s for s in specs if s not in missing]
    if present:
        table.new_commit().truncate_partitions(present)

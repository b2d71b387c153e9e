"""Building and evaluating a data file's indexes: Java's ``DataFileIndexWriter`` (the
container of a file's column indexes, embedded in the manifest or written as ``<data
file>.index``), ``FileIndexPredicate`` (whether a file may hold rows a filter selects) and
``SchemaValidation.validateFileIndex``.

The index types are Paimon's ``bloom-filter``, ``bitmap`` and ``bsi``
(``file-index.<type>.columns``); Paimon 1.3's ``range-bitmap`` is refused with a clear
error (neither written nor used for reading).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import pyarrow as pa
import pyarrow.compute as pc

from paimon_core.exceptions import InvalidArgument, SchemaError, UnsupportedFeature
from paimon_core.format import bitmap_index as bitmap
from paimon_core.format import bloom_filter_index as bloom
from paimon_core.format import bsi_index as bsi
from paimon_core.format.file_index import (
    INDEX_PATH_SUFFIX,
    REMAIN,
    SKIP,
    ContainerEntry,
    FileIndexOptions,
    FileIndexResult,
    JavaColumn,
    file_index_options,
    java_column,
    java_hash_order,
    read_header,
    validation_error,
    write_container,
)
from paimon_core.format.types import DataField, DataType

if TYPE_CHECKING:
    from paimon_core.io.fileio import FileIO

_JAVA_INT = re.compile(r"[+-]?[0-9]+")
SUPPORTED_OPERATORS = frozenset({"=", "!=", "<", "<=", ">", ">=", "is_null", "is_not_null", "in"})
UNSUPPORTED_TYPES = frozenset({"range-bitmap"})


class IndexWriter(Protocol):
    def write(self, column: JavaColumn) -> None: ...

    def serialized(self) -> bytes: ...


class IndexReader(Protocol):
    def visit(self, op: str, literal: Any, literals: Sequence[Any]) -> FileIndexResult: ...


@dataclass(frozen=True, slots=True)
class IndexType:
    """One file index type: its refusal of a column type, its writer and its reader."""

    name: str
    unsupported: Callable[[DataType], str | None]
    writer: Callable[[DataType, Mapping[str, str]], IndexWriter]
    reader: Callable[[DataType, bytes], IndexReader]


INDEX_TYPES: dict[str, IndexType] = {
    bloom.BLOOM_FILTER: IndexType(
        bloom.BLOOM_FILTER,
        bloom.unsupported_reason,
        bloom.BloomFilterWriter,
        bloom.BloomFilterReader,
    ),
    bitmap.BITMAP: IndexType(
        bitmap.BITMAP, bitmap.unsupported_reason, bitmap.BitmapWriter, bitmap.BitmapReader
    ),
    bsi.BSI: IndexType(bsi.BSI, bsi.unsupported_reason, bsi.BsiWriter, bsi.BsiReader),
}


def index_type(name: str) -> IndexType:
    """``FileIndexerFactoryUtils.load``.

    Raises:
        UnsupportedFeature: a Paimon index type this implementation does not build.
        InvalidArgument: an unknown type (``Can't find file index for type: <name>``).
    """
    found = INDEX_TYPES.get(name)
    if found is not None:
        return found
    if name in UNSUPPORTED_TYPES:
        raise UnsupportedFeature(f"File index type '{name}' is not supported")
    raise InvalidArgument(f"Can't find file index for type: {name}")


# ------------------------------------------------------------------------ validation


def validate_file_index(
    fields: Sequence[DataField], options: Mapping[str, str], field_names: Sequence[str]
) -> None:
    """``SchemaValidation.validateFileIndex``: every indexed column exists, map keys index
    maps with string keys, and each index type takes its column's type.

    Raises:
        SchemaError: with Paimon's messages.
        UnsupportedFeature: an index type this implementation cannot build.
    """
    try:
        parsed = file_index_options(options)
    except InvalidArgument as err:
        raise SchemaError(str(err)) from None
    by_name = {f.name: f for f in fields}
    for column, types in parsed.columns:
        found = by_name.get(column.name)
        if found is None:
            raise SchemaError(
                f"Column '{column.name}' specified in 'file-index.<index-type>.columns' does "
                f"not exist in table schema. Existing columns: [{', '.join(field_names)}]."
            )
        t = found.type
        if column.nested is not None:
            if t.root != "MAP":
                raise SchemaError(
                    f"Column '{column.name}' is configured as nested column in "
                    "'file-index.<index-type>.columns' but is not a map type. Only map type "
                    "supports nested column."
                )
            assert t.key is not None and t.value is not None
            if t.key.root not in ("CHAR", "VARCHAR"):
                raise SchemaError(
                    f"Column '{column.name}' is configured as nested column in "
                    f"'file-index.<index-type>.columns', but its map key type is {t.key}. "
                    "Only CHAR/VARCHAR/STRING is supported."
                )
            t = t.value
        for name, _ in types:
            try:
                kind = index_type(name)
            except InvalidArgument as err:
                raise SchemaError(str(err)) from None
            reason = kind.unsupported(t)
            if reason is not None:
                raise validation_error(column.name, t, name, reason)


# --------------------------------------------------------------------------- writing


class _Maintainer:
    """One index of one top-level column (Java's ``FileIndexMaintainer``)."""

    def __init__(self, column: str, t: DataType, kind: IndexType, options: Mapping[str, str]):
        self.column = column
        self.type = t
        self.writer = kind.writer(t, options)

    def write(self, data: pa.Table) -> None:
        self.writer.write(java_column(data.column(self.column), self.type))

    def entries(self) -> list[tuple[str, bytes | None]]:
        return [(self.column, self.writer.serialized())]


class _MapMaintainer:
    """The indexes of keys of one map column (Java's ``MapFileIndexMaintainer``): each key's
    values, null where a row lacks the key."""

    def __init__(self, column: str, t: DataType, kind: IndexType, options: Mapping[str, str]):
        assert t.value is not None
        self.column = column
        self.kind = kind
        self.value_type: DataType = t.value
        self.options = dict(options)
        self.writers: dict[str, IndexWriter] = {}
        self.written = False

    def add(self, key: str, options: Mapping[str, str]) -> None:
        self.writers[key] = self.kind.writer(self.value_type, {**self.options, **options})

    def write(self, data: pa.Table) -> None:
        column = data.column(self.column)
        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks()
        if len(column):
            self.written = True
        for key, writer in self.writers.items():
            values = pc.map_lookup(column, pa.scalar(key, column.type.key_type), "first")
            writer.write(java_column(values, self.value_type))

    def entries(self) -> list[tuple[str, bytes | None]]:
        # indexWritersMap.forEach -> result.put("col[key]"): two HashMaps, both appending.
        names = {f"{self.column}[{key}]": key for key in java_hash_order(list(self.writers))}
        return [
            (name, self.writers[names[name]].serialized() if self.written else None)
            for name in java_hash_order(list(names))
        ]


class DataFileIndexWriter:
    """Java's ``DataFileIndexWriter``: the indexes ``options`` declare over ``fields``.

    ``name_mapping`` (the current column names to those of an older schema's ``fields``,
    for rewriting old files) drops declared columns the old schema lacks.

    Raises:
        InvalidArgument: a declared column missing from ``fields`` or of a type its index
            cannot take.
        UnsupportedFeature: an index type this implementation cannot build.
    """

    def __init__(
        self,
        fields: Sequence[DataField],
        options: FileIndexOptions,
        name_mapping: Mapping[str, str] | None = None,
    ) -> None:
        self.options = options
        by_name = {f.name: f for f in fields}
        self.maintainers: dict[str, dict[str, _Maintainer | _MapMaintainer]] = {}
        for column, types in options.columns:
            name = column.name
            if name_mapping is not None:
                mapped = name_mapping.get(name)
                if mapped is None:
                    continue
                name = mapped
            found = by_name.get(name)
            if found is None:
                raise InvalidArgument(f"{name} does not exist in column fields")
            for type_name, type_options in types:
                kind = index_type(type_name)
                per_column = self.maintainers.setdefault(type_name, {})
                existing = per_column.get(name)
                if column.nested is not None:
                    if found.type.root != "MAP":
                        raise InvalidArgument(
                            f"Column {name} is nested column, but is not map type. Only "
                            "should map type yet."
                        )
                    if existing is None:
                        top = options.map_options.get((column.name, type_name), {})
                        existing = _MapMaintainer(name, found.type, kind, top)
                        per_column[name] = existing
                    assert isinstance(existing, _MapMaintainer)
                    existing.add(column.nested, type_options)
                elif existing is None:
                    reason = kind.unsupported(found.type)
                    if reason is not None:
                        raise InvalidArgument(reason)
                    per_column[name] = _Maintainer(name, found.type, kind, type_options)

    @property
    def empty(self) -> bool:
        return not self.maintainers

    def write(self, data: pa.Table) -> None:
        """Add the rows of ``data`` (a table holding at least the indexed columns)."""
        for per_column in self.maintainers.values():
            for maintainer in per_column.values():
                maintainer.write(data)

    def serialize_maintainers(self) -> dict[str, dict[str, bytes | None]]:
        """``serializeMaintainers``: column (``m[k]`` for map keys) -> index type ->
        payload, each dict in the insertion order of Java's ``HashMap`` s."""
        out: dict[str, dict[str, bytes | None]] = {}
        # indexMaintainers.computeIfAbsent(type) prepends; column2maintainers.put appends.
        for type_name in java_hash_order(list(self.maintainers), prepend=True):
            per_column = self.maintainers[type_name]
            for name in java_hash_order(list(per_column)):
                for column, payload in per_column[name].entries():
                    out.setdefault(column, {})[type_name] = payload
        return out

    def container(self) -> bytes:
        return container_bytes(self.serialize_maintainers())


def container_bytes(indexes: Mapping[str, Mapping[str, bytes | None]]) -> bytes:
    """The container of ``indexes`` (dicts in Java's insertion order), as Java orders it."""
    # indexMaps.computeIfAbsent(column) prepends, .put(type) appends.
    return write_container(
        [
            (column, [(t, indexes[column][t]) for t in java_hash_order(list(indexes[column]))])
            for column in java_hash_order(list(indexes), prepend=True)
        ]
    )


@dataclass(frozen=True, slots=True)
class WrittenIndex:
    """Java's ``FileIndexResult`` of a writer: the embedded bytes or the extra file name."""

    embedded: bytes | None = None
    file_name: str | None = None


def store_container(
    file_io: FileIO, index_path: str, container: bytes, threshold: int
) -> WrittenIndex:
    """Embed ``container`` when it is at most ``threshold`` bytes, else write it to
    ``index_path`` (Java's ``DataFileIndexWriter.close``)."""
    if len(container) > threshold:
        file_io.write_bytes(index_path, container)
        return WrittenIndex(file_name=index_path.rsplit("/", 1)[-1])
    return WrittenIndex(embedded=container)


def index_path_of(data_path: str) -> str:
    """``DataFilePathFactory.dataFileToFileIndexPath``."""
    return data_path + INDEX_PATH_SUFFIX


def new_index_path(index_path: str) -> str:
    """``DataFilePathFactory.createNewFileIndexFilePath``: ``<data>-1.index`` for the first
    rewrite of ``<data>.index``, then ``-2``, ... ."""
    directory, slash, name = index_path.rpartition("/")
    dot = name.rfind(".")
    dash = name.rfind("-")
    number = name[dash + 1 : dot] if dash != -1 and dot > dash else None
    if number is not None and _JAVA_INT.fullmatch(number):
        renamed = f"{name[: dash + 1]}{int(number) + 1}{INDEX_PATH_SUFFIX}"
    else:
        renamed = f"{name[:dot]}-1{INDEX_PATH_SUFFIX}"
    return f"{directory}{slash}{renamed}"


def new_data_file_index(
    fields: Sequence[DataField], options: Mapping[str, str]
) -> DataFileIndexWriter | None:
    """The index writer of a table's data files; None when it declares no index."""
    parsed = file_index_options(options)
    if parsed.empty:
        return None
    return DataFileIndexWriter(fields, parsed)


# -------------------------------------------------------------------------- reading


class ContainerSource(Protocol):
    def read_at(self, start: int, length: int) -> bytes: ...


class BytesSource:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def read_at(self, start: int, length: int) -> bytes:
        return self.data[start : start + length]


class StreamSource:
    """A container in a file (a seekable ``pyarrow.NativeFile``)."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def read_at(self, start: int, length: int) -> bytes:
        self.stream.seek(start)
        return bytes(self.stream.read(length))


def _reader_of(source: ContainerSource, where: str) -> list[ContainerEntry]:
    position = [0]

    def read(n: int) -> bytes:
        chunk = source.read_at(position[0], n)
        position[0] += len(chunk)
        return chunk

    return read_header(read, where)


def read_container(
    source: ContainerSource, where: str
) -> list[tuple[str, list[tuple[str, bytes | None]]]]:
    """Every index of a container with its payload (None: empty), columns and types in the
    order Java's reader iterates them (``FileIndexFormat.Reader.readAll``).

    Raises:
        MetadataFormatError: a container whose header cannot be read.
    """
    out: dict[str, list[tuple[str, bytes | None]]] = {}
    for entry in _reader_of(source, where):
        payload = None if entry.empty else source.read_at(entry.start, entry.length)
        out.setdefault(entry.column_name, []).append((entry.index_type, payload))
    return list(out.items())


def evaluate(
    source: ContainerSource,
    where: str,
    field_types: Mapping[str, DataType],
    predicate: Sequence[tuple[str, str, Any]],
) -> FileIndexResult:
    """Java's ``FileIndexPredicate.evaluate`` of the conjunction ``predicate`` (column names
    of the file's schema, whose types ``field_types`` gives) against the container.

    Leaves whose column has no index, whose index type is unknown here, or whose literal is
    not a value of the column's type give ``REMAIN``: only what an index proves is skipped.

    Raises:
        MetadataFormatError: a container whose header cannot be read.
    """
    wanted = {column for column, _, _ in predicate}
    entries: dict[str, list[ContainerEntry]] = {}
    for entry in _reader_of(source, where):
        if entry.column_name in wanted:
            entries.setdefault(entry.column_name, []).append(entry)
    if not entries:
        return REMAIN
    readers: dict[tuple[str, str], IndexReader | None] = {}
    result: FileIndexResult | None = None
    for column, op, literal in predicate:
        leaf = REMAIN
        t = field_types.get(column)
        if t is not None and op in SUPPORTED_OPERATORS:
            for entry in entries.get(column, ()):
                reader = _index_reader(source, entry, t, readers)
                if reader is None:
                    continue
                leaf = leaf.and_(_visit(reader, op, literal))
                if not leaf.remain():
                    break
        result = leaf if result is None else result.and_(leaf)
        if not result.remain():
            return result
    return REMAIN if result is None else result


def _visit(reader: IndexReader, op: str, literal: Any) -> FileIndexResult:
    if op == "in":
        values = list(literal) if isinstance(literal, (list, tuple, set, frozenset)) else [literal]
        return reader.visit("in", None, values)
    return reader.visit(op, literal, ())


def _index_reader(
    source: ContainerSource,
    entry: ContainerEntry,
    t: DataType,
    cache: dict[tuple[str, str], IndexReader | None],
) -> IndexReader | None:
    key = (entry.column_name, entry.index_type)
    if key in cache:
        return cache[key]
    reader: IndexReader | None
    if entry.empty:
        reader = EmptyIndexReader()
    else:
        kind = INDEX_TYPES.get(entry.index_type)
        if kind is None or kind.unsupported(t) is not None:
            reader = None
        else:
            reader = kind.reader(t, source.read_at(entry.start, entry.length))
    cache[key] = reader
    return reader


class EmptyIndexReader:
    """Java's ``EmptyFileIndexReader``: an index that saw no value."""

    def visit(self, op: str, literal: Any, literals: Sequence[Any]) -> FileIndexResult:
        if op in ("=", "is_not_null", "<", "<=", ">", ">=", "in"):
            return SKIP
        return REMAIN


def index_columns(options: Mapping[str, str]) -> set[str]:
    """The top-level columns ``options`` index (for deciding cheaply whether to look); none
    for options Paimon would refuse (a table an older Paimon created unchecked)."""
    try:
        return {column.name for column, _ in file_index_options(options).columns}
    except InvalidArgument:
        return set()

"""Data file formats: which one a table writes, and reading any file by its name.

Paimon writes each data file in ``file.format`` (parquet, orc or avro); primary-key tables may
pick another format and compression per LSM level (``file.format.per.level``,
``file.compression.per.level``; append tables ignore them, as Java's append writer does). A
reader must not trust the table's current option: the format can change during a table's
life, so every file is read in the format its name ends with (Java's
``DataFilePathFactory.formatIdentifier``).

One module per format (``parquet_file``, ``orc_file``, ``avro_file``) knows its library; this
one picks the module, names the files and turns a broken file into ``DataFileUnreadable``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING

import pyarrow as pa

from paimon_core.exceptions import DataFileUnreadable, UnsupportedFeature
from paimon_core.format import avro_file, orc_file, parquet_file
from paimon_core.format.variant import Shape, shredding_schema

if TYPE_CHECKING:
    import pyarrow.parquet as pq

    from paimon_core.format.options import CoreOptions
    from paimon_core.format.types import DataField, DataType
    from paimon_core.io.fileio import FileIO

FORMATS: dict[str, ModuleType] = {"parquet": parquet_file, "orc": orc_file, "avro": avro_file}
"""``file.format`` identifier -> the module reading and writing it."""
_COMPRESSION_EXTENSIONS = {
    "none": None,
    "gzip": "gz",
    "bzip2": "bz2",
    "deflate": "deflate",
    "snappy": "snappy",
    "lz4": "lz4",
    "zstd": "zst",
}
"""Java's ``HadoopCompressionType`` file extensions (other values are used as they are)."""


@dataclass(frozen=True, slots=True)
class WriteFormat:
    """How a writer encodes data files: format, the library's codec name and file suffix."""

    name: str
    codec: str
    zstd_level: int
    suffix: str
    orc_dictionary_key_threshold: float = orc_file.DEFAULT_DICTIONARY_KEY_THRESHOLD
    variant_shredding: tuple[tuple[str, Shape], ...] = ()
    """VARIANT column -> the shape its Parquet values are shredded to (``variant.shreddingSchema``)."""


def file_format_of(file_name: str) -> str:
    """The format a data file is in, from its name: the last extension, or the one before a
    compression extension (``data-...-0.parquet``, ``data-...-0.zst.orc``, ``x.csv.gz``)."""
    parts = file_name.rsplit("/", 1)[-1].lower().split(".")
    if len(parts) < 2:
        return ""
    if parts[-1] in _COMPRESSION_EXTENSIONS.values() and len(parts) > 2:
        return parts[-2]
    return parts[-1]


def write_format(
    options: CoreOptions, primary_key: bool, level: int = 0, *, changelog: bool = False
) -> WriteFormat:
    """The format of files a writer creates at ``level``, checked for this writer.

    ``changelog``: a changelog file, whose ``changelog-file.format`` and
    ``changelog-file.compression`` win over the data files' (Java's ``WriteFormatKey``).

    Raises:
        UnsupportedFeature: a format or compression this writer cannot produce.
    """
    name, compression = options.file_format, options.file_compression
    if primary_key:
        name = options.file_format_per_level.get(level, name)
        compression = options.file_compression_per_level.get(level, compression)
    if changelog:
        name = options.changelog_file_format or name
        compression = options.changelog_file_compression or compression
    module = FORMATS.get(name)
    if module is None:
        key = (
            "changelog-file.format"
            if changelog and options.changelog_file_format
            else "file.format"
        )
        raise UnsupportedFeature(
            f"Writing '{key}' = '{name}' is not supported (only parquet, orc and avro)"
        )
    override_key = {"orc": "orc.compress", "avro": "avro.codec"}.get(name)
    override = options.get_str(override_key) if override_key else None
    chosen = (override or compression).lower()
    codec = module.COMPRESSIONS.get(chosen)
    if codec is None:
        key = "file.compression"
        if override:
            key = override_key
        elif changelog and options.changelog_file_compression:
            key = "changelog-file.compression"
        raise UnsupportedFeature(
            f"Writing {module.LABEL} files with '{key}' = '{chosen}' is not supported "
            f"(expected one of {sorted(module.COMPRESSIONS)})"
        )
    extension = _COMPRESSION_EXTENSIONS.get(compression, compression)
    include = options.file_suffix_include_compression and extension
    threshold = orc_file.DEFAULT_DICTIONARY_KEY_THRESHOLD
    if name == "orc":
        text = options.get_str("orc.dictionary.key.threshold")
        threshold = float(text) if text else threshold
    shredding = shredding_schema(options)
    if shredding is not None and name != "parquet":
        # Java's ShreddingWritePlanWriterFactories: only Parquet takes VARIANT write plans.
        raise UnsupportedFeature(
            f"File format '{name}' does not support VARIANT write plans "
            "('variant.shreddingSchema' is set)"
        )
    return WriteFormat(
        name=name,
        codec=codec,
        zstd_level=options.file_compression_zstd_level,
        suffix=f".{extension}.{name}" if include else f".{name}",
        orc_dictionary_key_threshold=threshold,
        variant_shredding=tuple((shredding or {}).items()),
    )


def check_fields(write: WriteFormat, fields: Sequence[DataField]) -> None:
    """Refuse columns the format cannot hold the way Paimon (Java) reads them.

    Raises:
        UnsupportedFeature: e.g. TIMESTAMP(9) in Parquet or Avro, VARIANT in ORC.
    """
    problem = FORMATS[write.name].unsupported_fields(fields)
    if problem:
        raise UnsupportedFeature(problem)


def write_data_file(
    file_io: FileIO,
    path: str,
    data: pa.Table,
    fields: Sequence[DataField],
    write: WriteFormat,
    footers: list[pq.FileMetaData] | None = None,
) -> int:
    """Write ``data`` (the columns of ``fields``, in order) to ``path``; returns its size.
    A Parquet file's footer is appended to ``footers``."""
    sink = file_io.open_output(path)
    try:
        if write.name == "orc":
            orc_file.write(sink, data, fields, write.codec, write.orc_dictionary_key_threshold)
        elif write.name == "parquet":
            parquet_file.write(
                sink,
                data,
                fields,
                write.codec,
                write.zstd_level,
                footers,
                dict(write.variant_shredding),
            )
        else:
            FORMATS[write.name].write(sink, data, fields, write.codec, write.zstd_level)
        return sink.tell()
    finally:
        sink.close()


def read_data_file(
    file_io: FileIO, path: str, columns: Sequence[tuple[str, DataType]], table: str
) -> pa.Table:
    """The named columns of one data file, in the format its name says.

    ORC and Avro columns come in the Arrow types of their Paimon types; Parquet columns as
    the file stores them (the caller casts).

    Raises:
        UnsupportedFeature: a format this reader does not know (naming it, the file, the table).
        DataFileUnreadable: a file that cannot be decoded as its format (torn, foreign).
    """
    name = file_format_of(path)
    module = FORMATS.get(name)
    if module is None:
        raise UnsupportedFeature(
            f"Cannot read {name.upper() or 'unnamed-format'} data file {path} of table {table}: "
            "only Parquet, ORC and Avro data files can be read"
        )
    with file_io.open_input(path) as source:
        try:
            return module.read(source, columns)
        except module.READ_ERRORS as err:
            reason = " ".join(str(err).split()) or type(err).__name__
            raise DataFileUnreadable(
                f"Cannot read data file {path} of table {table} as {module.LABEL}: {reason}"
            ) from None

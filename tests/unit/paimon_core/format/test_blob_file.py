"""The ``.blob`` codec against pypaimon 2.1's ``BlobFormatWriter`` / ``FormatBlobReader`` and
``BlobDescriptor``: same bytes written, same values read, damage refused."""

from __future__ import annotations

import io
import struct

import pytest
from pypaimon.common.delta_varint_compressor import DeltaVarintCompressor
from pypaimon.schema.data_types import AtomicType, DataField
from pypaimon.table.row.blob import BlobDescriptor as PyDescriptor
from pypaimon.write.blob_format_writer import BlobFormatWriter

from paimon_core.exceptions import DataFileUnreadable
from paimon_core.format.blob_file import (
    BlobDescriptor,
    compress_lengths,
    decompress_lengths,
    descriptor_to_string,
    is_blob_file,
    parse_index,
    path_to_descriptor,
    read_blob_file,
    write_blob_file,
)

VALUES: list[bytes | None] = [b"x", None, b"", b"\x00\xff" * 300, None, b"yy"]


class _Sink(io.BytesIO):
    def close(self) -> None:  # keep the bytes readable after the writer closes
        pass


def _pypaimon_file(values: list[bytes | None]) -> bytes:
    sink = _Sink()
    writer = BlobFormatWriter(sink)
    fields = [DataField(0, "b", AtomicType("BLOB"))]
    for value in values:
        writer.write_value(value, fields)
    writer.close()
    return sink.getvalue()


def test_written_bytes_equal_pypaimons() -> None:
    assert write_blob_file(VALUES) == _pypaimon_file(VALUES)
    assert write_blob_file([]) == _pypaimon_file([])


def test_reads_pypaimons_file() -> None:
    data = _pypaimon_file(VALUES)
    assert read_blob_file(data, "f.blob").to_pylist() == VALUES
    assert parse_index(data, len(data)).row_count == len(VALUES)


def test_descriptors_point_at_the_payloads_and_serialize_as_pypaimons() -> None:
    data = _pypaimon_file(VALUES)
    got = read_blob_file(data, "f.blob", as_descriptor=True, uri="file:/w/f.blob").to_pylist()
    for raw, value in zip(got, VALUES, strict=True):
        if value is None:
            assert raw is None
            continue
        d = BlobDescriptor.deserialize(raw)
        assert d.uri == "file:/w/f.blob" and data[d.offset : d.offset + d.length] == value
        assert raw == PyDescriptor(d.uri, d.offset, d.length).serialize()
        py = PyDescriptor.deserialize(raw)
        assert (py.uri, py.offset, py.length) == (d.uri, d.offset, d.length)


def test_version_one_descriptor_is_read() -> None:
    uri = b"s3://b/k"
    v1 = struct.pack("<Bi", 1, len(uri)) + uri + struct.pack("<qq", 7, 9)
    assert BlobDescriptor.deserialize(v1) == BlobDescriptor("s3://b/k", 7, 9)
    with pytest.raises(ValueError, match="magic"):
        BlobDescriptor.deserialize(b"\x02" + b"\x00" * 30)


@pytest.mark.parametrize("values", [[], [5], [17, -1, 18, -2, 0, 1 << 40, 3]])
def test_lengths_codec_matches_pypaimons(values: list[int]) -> None:
    assert compress_lengths(values) == DeltaVarintCompressor.compress(values)
    assert decompress_lengths(compress_lengths(values)) == values


def test_damaged_files_are_refused_naming_the_file() -> None:
    data = bytearray(_pypaimon_file([b"abc", b"def"]))
    flipped = bytearray(data)
    flipped[5] ^= 0xFF  # a payload byte
    with pytest.raises(DataFileUnreadable, match=r"d\.blob.*CRC"):
        read_blob_file(bytes(flipped), "d.blob")
    with pytest.raises(DataFileUnreadable, match=r"d\.blob.*version"):
        read_blob_file(bytes(data[:-1]) + b"\x07", "d.blob")
    with pytest.raises(DataFileUnreadable, match=r"d\.blob"):
        read_blob_file(bytes(data[3:]), "d.blob")
    with pytest.raises(DataFileUnreadable, match=r"d\.blob"):
        read_blob_file(b"\x01", "d.blob")


def test_placeholder_rows_are_refused() -> None:
    from pypaimon.table.row.blob import Blob

    sink = _Sink()
    writer = BlobFormatWriter(sink)
    writer.write_value(Blob.PLACE_HOLDER, [DataField(0, "b", AtomicType("BLOB"))])
    writer.close()
    with pytest.raises(DataFileUnreadable, match="placeholder"):
        read_blob_file(sink.getvalue(), "p.blob")


def test_blob_file_names() -> None:
    assert is_blob_file("data-1-0.blob") and not is_blob_file("data-1-0.parquet")


def test_path_to_descriptor_and_descriptor_to_string_as_paimon_spark() -> None:
    """Paimon-Spark's functions: a whole file (offset 0, length -1), shown as Java's
    ``BlobDescriptor.toString``; pypaimon reads the bytes as the same descriptor."""
    raw = path_to_descriptor("file:///w/x.bin")
    assert raw is not None
    py = PyDescriptor.deserialize(raw)
    assert (py.uri, py.offset, py.length) == ("file:///w/x.bin", 0, -1)
    assert raw == PyDescriptor("file:///w/x.bin", 0, -1).serialize()
    assert descriptor_to_string(raw) == (
        "BlobDescriptor{version=2, uri='file:///w/x.bin', offset=0, length=-1}"
    )
    assert path_to_descriptor(None) is None and descriptor_to_string(None) is None
    with pytest.raises(ValueError):
        descriptor_to_string(b"\x02nope")

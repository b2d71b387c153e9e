"""Roaring bitmaps in their portable serialization, as Java's ``org.roaringbitmap`` writes them.

Deletion vectors store the deleted row positions of a data file as a roaring bitmap:
Paimon's ``RoaringBitmap32`` (``BitmapDeletionVector``, every Paimon version) and, with
``deletion-vectors.bitmap64``, ``OptimizedRoaringBitmap64`` (``Bitmap64DeletionVector``,
Paimon 1.x). Both are decoded and encoded here with numpy, without a roaring library: the
formats are small and fixed (RoaringFormatSpec), and the encoder has to choose container
kinds exactly as Java does for the bytes to match Java's.

32-bit layout (all little-endian):

* cookie: ``12346`` as uint32 then the container count as uint32 when no container is a run
  container; else ``12347 | (count - 1) << 16`` as uint32 and a bit set (``ceil(count / 8)``
  bytes) marking the run containers;
* per container: its key (the high 16 bits of its values) and cardinality - 1, two uint16;
* per container, its byte offset (uint32), when there is no run container or at least 4
  containers;
* the containers: an array container is its sorted uint16 values (cardinality <= 4096), a
  bitmap container 1024 uint64 words (cardinality > 4096), a run container its run count
  then (start, length - 1) uint16 pairs.

Java's ``runOptimize`` (Paimon calls it before every serialization) turns a container into a
run container when that is strictly smaller: 2 + 4 x runs bytes against 2 x cardinality
bytes (array) or 8192 (bitmap). A bitmap Java restored with run containers and then
extended keeps a run container also at equal size; the encoder here follows the rule for a
bitmap built by adding positions (the only difference is the container kind at such ties;
every reader reads both).

64-bit layout (``OptimizedRoaringBitmap64.serialize``, also Iceberg's): the number of 32-bit
bitmaps as uint64, then for each key (the high 32 bits), ascending, the key as uint32 and a
32-bit bitmap of the low 32 bits. Java writes every key from 0 to the highest, empty bitmaps
included.
"""

from __future__ import annotations

import struct

import numpy as np

__all__ = [
    "RoaringFormatError",
    "deserialize32",
    "deserialize64",
    "serialize32",
    "serialize64",
]

SERIAL_COOKIE_NO_RUNCONTAINER = 12346
SERIAL_COOKIE = 12347
NO_OFFSET_THRESHOLD = 4
ARRAY_MAX = 4096  # an array container holds at most this many values
BITMAP_BYTES = 8192
MAX_POSITION_64 = ((2**31 - 2) << 32) | 0xFFFFFFFF  # OptimizedRoaringBitmap64.MAX_VALUE

_U16 = np.dtype("<u2")
_U64 = np.dtype("<u8")
_EMPTY = np.empty(0, dtype=np.int64)


class RoaringFormatError(ValueError):
    """Bytes that are not a roaring bitmap in the portable format (truncated, bad cookie,
    keys out of order, a container that contradicts its header)."""


# ----------------------------------------------------------------------------- decoding


class _Reader:
    def __init__(self, data: bytes | memoryview, pos: int) -> None:
        self.data = memoryview(data)
        self.pos = pos

    def take(self, n: int) -> memoryview:
        end = self.pos + n
        if n < 0 or end > len(self.data):
            raise RoaringFormatError(
                f"truncated bitmap: needs {n} bytes at offset {self.pos}, "
                f"{len(self.data) - self.pos} left"
            )
        out = self.data[self.pos : end]
        self.pos = end
        return out

    def u32(self) -> int:
        return struct.unpack("<I", self.take(4))[0]


def _container_values(
    r: _Reader, is_run: bool, card: int
) -> np.ndarray:  # the low 16 bits, int64, sorted
    if is_run:
        (runs,) = struct.unpack("<H", r.take(2))
        pairs = np.frombuffer(r.take(4 * runs), dtype=_U16).astype(np.int64).reshape(runs, 2)
        starts, lengths = pairs[:, 0], pairs[:, 1] + 1
        if runs and (
            np.any(starts[1:] <= starts[:-1] + lengths[:-1] - 1)
            or starts[-1] + lengths[-1] > 1 << 16
        ):
            raise RoaringFormatError("run container with overlapping or unsorted runs")
        total = int(lengths.sum())
        if total != card:
            raise RoaringFormatError(f"run container of {total} values, header says {card}")
        offsets = np.repeat(starts - np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths)
        return np.arange(total, dtype=np.int64) + offsets
    if card > ARRAY_MAX:
        bits = np.unpackbits(np.frombuffer(r.take(BITMAP_BYTES), dtype=np.uint8), bitorder="little")
        values = np.flatnonzero(bits).astype(np.int64)
        if len(values) != card:
            raise RoaringFormatError(
                f"bitmap container of {len(values)} values, header says {card}"
            )
        return values
    values = np.frombuffer(r.take(2 * card), dtype=_U16).astype(np.int64)
    if card > 1 and np.any(values[1:] <= values[:-1]):
        raise RoaringFormatError("array container values not strictly ascending")
    return values


def _deserialize32(r: _Reader) -> np.ndarray:
    cookie = r.u32()
    if cookie & 0xFFFF == SERIAL_COOKIE:
        size = (cookie >> 16) + 1
        run_flags = np.unpackbits(
            np.frombuffer(r.take((size + 7) // 8), dtype=np.uint8), bitorder="little"
        )[:size].astype(bool)
    elif cookie == SERIAL_COOKIE_NO_RUNCONTAINER:
        size = r.u32()
        run_flags = np.zeros(size, dtype=bool)
    else:
        raise RoaringFormatError(f"unknown roaring cookie {cookie}")
    header = np.frombuffer(r.take(4 * size), dtype=_U16).astype(np.int64).reshape(size, 2)
    keys, cards = header[:, 0], header[:, 1] + 1
    if size > 1 and np.any(keys[1:] <= keys[:-1]):
        raise RoaringFormatError("container keys not strictly ascending")
    if not run_flags.any() or size >= NO_OFFSET_THRESHOLD:
        r.take(4 * size)  # offsets: the containers follow one another anyway
    parts = [
        _container_values(r, bool(run_flags[i]), int(cards[i])) + (int(keys[i]) << 16)
        for i in range(size)
    ]
    return np.concatenate(parts) if parts else _EMPTY


def deserialize32(data: bytes | memoryview, offset: int = 0) -> tuple[np.ndarray, int]:
    """The values (sorted int64) of the 32-bit bitmap at ``offset``, and the offset after it."""
    r = _Reader(data, offset)
    return _deserialize32(r), r.pos


def deserialize64(data: bytes | memoryview, offset: int = 0) -> tuple[np.ndarray, int]:
    """The values (sorted int64) of the 64-bit bitmap at ``offset``, and the offset after it."""
    r = _Reader(data, offset)
    (count,) = struct.unpack("<Q", r.take(8))
    if count > 2**31 - 1:
        raise RoaringFormatError(f"invalid bitmap count {count}")
    parts = []
    last = -1
    for _ in range(count):
        key = r.u32()
        if key > 2**31 - 2 or key <= last:
            raise RoaringFormatError(f"64-bit bitmap key {key} out of order or too large")
        last = key
        parts.append(_deserialize32(r) + (key << 32))
    return (np.concatenate(parts) if parts else _EMPTY), r.pos


# ----------------------------------------------------------------------------- encoding


def _sorted_unique(values: np.ndarray | list[int], limit: int) -> np.ndarray:
    array = np.asarray(values, dtype=np.int64)
    if array.size == 0:
        return _EMPTY
    if array.ndim != 1:
        raise ValueError("positions must be one-dimensional")
    array = np.unique(array)
    if array[0] < 0 or array[-1] > limit:
        raise ValueError(f"positions must be within [0, {limit}]")
    return array


def _encode_container(low: np.ndarray) -> tuple[bool, bytes]:
    """(is run container, bytes) of the sorted distinct low 16 bits of one container."""
    card = len(low)
    breaks = np.flatnonzero(np.diff(low) != 1) + 1
    runs = len(breaks) + 1
    size = 2 * card if card <= ARRAY_MAX else BITMAP_BYTES
    if size > 2 + 4 * runs:
        starts = low[np.concatenate(([0], breaks))]
        ends = low[np.concatenate((breaks - 1, [card - 1]))]
        pairs = np.empty((runs, 2), dtype=_U16)
        pairs[:, 0] = starts
        pairs[:, 1] = ends - starts
        return True, struct.pack("<H", runs) + pairs.tobytes()
    if card <= ARRAY_MAX:
        return False, low.astype(_U16).tobytes()
    bits = np.zeros(1 << 16, dtype=np.uint8)
    bits[low] = 1
    return False, np.packbits(bits, bitorder="little").tobytes()


def _serialize32(values: np.ndarray) -> bytes:
    """``values``: sorted distinct ints in [0, 2**32)."""
    keys, starts = np.unique(values >> 16, return_index=True)
    bounds = [*starts.tolist(), len(values)]
    size = len(keys)
    containers = [
        _encode_container(values[bounds[i] : bounds[i + 1]] & 0xFFFF) for i in range(size)
    ]
    has_run = any(run for run, _ in containers)
    out = bytearray()
    if has_run:
        out += struct.pack("<I", SERIAL_COOKIE | ((size - 1) << 16))
        flags = np.array([run for run, _ in containers], dtype=np.uint8)
        out += np.packbits(flags, bitorder="little").tobytes()
    else:
        out += struct.pack("<II", SERIAL_COOKIE_NO_RUNCONTAINER, size)
    header = np.empty((size, 2), dtype=_U16)
    header[:, 0] = keys
    header[:, 1] = np.diff(bounds) - 1
    out += header.tobytes()
    if not has_run or size >= NO_OFFSET_THRESHOLD:
        start = len(out) + 4 * size
        for _, body in containers:
            out += struct.pack("<I", start)
            start += len(body)
    for _, body in containers:
        out += body
    return bytes(out)


def serialize32(positions: np.ndarray | list[int]) -> bytes:
    """Java's ``RoaringBitmap32.serialize`` (after ``runOptimize``) of ``positions`` (any
    order, duplicates allowed; each in [0, 2**31 - 1], as ``BitmapDeletionVector`` allows)."""
    return _serialize32(_sorted_unique(positions, 2**31 - 1))


def serialize64(positions: np.ndarray | list[int]) -> bytes:
    """Java's ``OptimizedRoaringBitmap64.serialize`` (after ``runLengthEncode``) of
    ``positions`` (each in [0, ``MAX_POSITION_64``])."""
    values = _sorted_unique(positions, MAX_POSITION_64)
    high = values >> 32
    count = int(high[-1]) + 1 if len(values) else 0
    out = bytearray(struct.pack("<Q", count))
    bounds = np.searchsorted(high, np.arange(count + 1))
    for key in range(count):
        out += struct.pack("<I", key)
        out += _serialize32(values[bounds[key] : bounds[key + 1]] & 0xFFFFFFFF)
    return bytes(out)

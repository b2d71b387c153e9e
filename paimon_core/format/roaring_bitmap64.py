"""Paimon's ``RoaringBitmap64``: the bytes the ``rbm64`` aggregate function stores.

Paimon wraps RoaringBitmap's ``Roaring64Bitmap`` (RoaringBitmap 1.2.1 in the latest Paimon,
1.0.5 in Paimon 0.9: the same format) and serializes it with ``runOptimize()`` then
``Roaring64Bitmap.serialize(DataOutput)``. That is not the portable 64-bit format
(``format/roaring.py``) but a dump of the bitmap's in-memory structure: an adaptive radix tree
(ART) over the high 48 bits of each value, then the containers of the low 16 bits in the
order they were created. The bytes therefore depend on the history of the bitmap (the order
its keys were inserted, the node kinds the tree grew through), and a union (``or``) keeps the
accumulator's tree and appends the other bitmap's new keys. This module models that
structure exactly (``org.roaringbitmap.art`` and ``longlong.HighLowContainer``), so that
``RoaringBitmap64.deserialize(a).or_(...).serialize()`` gives Java's bytes.

Layout (every number little-endian): a byte 0 (empty) or 1, then the ART: the key count as
uint64 and the nodes in pre-order, each a header (node type: 0 Node4, 1 Node16, 2 Node48,
3 Node256, 4 leaf; the child count as uint16; the prefix length and prefix bytes) and a body
(Node4: its 4 key bytes, Node16: 16, Node48: a 256-byte child index, Node256: a 256-bit
mask, written as Java writes its int/long fields reversed; a leaf: the 6 key bytes and the
container index as uint64); then the containers: the count of container arrays as uint32,
and for each a byte ``0xFE``, its capacity as uint32 and per slot 0 (empty) or 1, the
container type (0 run, 1 bitmap, 2 array), the cardinality as uint32 and the container's
uint16 values (array), 1024 uint64 words (bitmap) or run count and (start, length - 1) pairs
(run); last the container count (uint64) and the last slot used (two uint32).

Containers change kind as Java's do: ``or`` follows each container class's ``ior`` and
``runOptimize`` makes an array or bitmap container a run container when that is smaller,
while a run container stays one.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from paimon_core.format.roaring import RoaringFormatError

__all__ = ["RoaringBitmap64"]

_RUN, _BITMAP, _ARRAY = 0, 1, 2
_NODE4, _NODE16, _NODE48, _NODE256, _LEAF = 0, 1, 2, 3, 4
_KEY_BYTES = 6
_ARRAY_MAX = 4096
_BITMAP_BYTES = 8192
_EMPTY48 = 0xFF
_U16 = np.dtype("<u2")
_U64 = np.dtype("<u8")


# ----------------------------------------------------------------------------- containers


def _runs(values: np.ndarray) -> int:
    return int(np.count_nonzero(np.diff(values) != 1)) + 1 if len(values) else 0


class _Container:
    """A container of the low 16 bits of one key: its Java class (``kind``), its values, and
    for one read and not changed since, the exact bytes it was read from."""

    __slots__ = ("card", "kind", "optimized", "raw", "values")

    def __init__(self, kind: int, values: np.ndarray, raw: bytes | None = None) -> None:
        self.kind = kind
        self.values = values
        self.card = len(values)
        self.raw = raw
        self.optimized = False

    @property
    def full_run(self) -> bool:
        """Java's ``RunContainer.isFull``: one run over all 65536 values."""
        if self.kind != _RUN or self.card != 1 << 16:
            return False
        if self.raw is None:
            return True
        return self.raw[6:] == b"\x01\x00\x00\x00\xff\xff"

    def payload(self) -> bytes:
        if self.raw is not None:
            return self.raw
        head = struct.pack("<bBi", 1, self.kind, self.card)
        if self.kind == _ARRAY:
            return head + self.values.astype(_U16).tobytes()
        if self.kind == _BITMAP:
            bits = np.zeros(1 << 16, np.uint8)
            bits[self.values] = 1
            return head + np.packbits(bits, bitorder="little").tobytes()
        breaks = np.flatnonzero(np.diff(self.values) != 1) + 1
        starts = self.values[np.concatenate(([0], breaks))]
        ends = self.values[np.concatenate((breaks - 1, [self.card - 1]))]
        pairs = np.empty((len(starts), 2), _U16)
        pairs[:, 0] = starts
        pairs[:, 1] = ends - starts
        return head + struct.pack("<H", len(starts)) + pairs.tobytes()

    def run_optimized(self) -> _Container:
        """``Roaring64Bitmap.runOptimize`` of this container (a run container stays one)."""
        if self.kind == _RUN or self.optimized:
            return self
        size = 2 * self.card if self.kind == _ARRAY else _BITMAP_BYTES
        if size > 2 + 4 * _runs(self.values):
            return _Container(_RUN, self.values)
        self.optimized = True
        return self


def _efficient(values: np.ndarray) -> _Container:
    """``RunContainer.toEfficientContainer`` of a run container holding ``values``."""
    card = len(values)
    if 2 + 4 * _runs(values) <= min(_BITMAP_BYTES, 2 * card + 2):
        return _Container(_RUN, values)
    return _Container(_ARRAY if card <= _ARRAY_MAX else _BITMAP, values)


def _union(acc: _Container, other: _Container) -> _Container:
    """``acc.ior(other)``: the union, of the container class Java's ``ior`` returns."""
    if acc.kind == _RUN and acc.full_run:
        return acc
    values = np.union1d(acc.values, other.values)
    full = len(values) == 1 << 16
    if acc.kind == _ARRAY and other.kind == _ARRAY:
        return _Container(_ARRAY if len(values) <= _ARRAY_MAX else _BITMAP, values)
    if _RUN in (acc.kind, other.kind) and _BITMAP not in (acc.kind, other.kind):
        return _efficient(values)
    if acc.kind == _BITMAP and other.kind == _ARRAY:
        return _Container(_BITMAP, values)
    return _Container(_RUN if full else _BITMAP, values)


# ------------------------------------------------------------------------------------ ART


class _Leaf:
    __slots__ = ("count", "index", "key", "prefix")

    def __init__(self, key: bytes, index: int) -> None:
        self.key = key
        self.index = index
        self.prefix = b""
        self.count = 0


class _Inner:
    """Node4/Node16 (``keys`` and ``children`` by position, sorted by key byte), Node48
    (``keys``: the 256-byte child index into ``children``, 48 slots) and Node256
    (``children`` by key byte)."""

    __slots__ = ("children", "count", "keys", "kind", "prefix")

    def __init__(self, kind: int, prefix: bytes) -> None:
        self.kind = kind
        self.prefix = prefix
        self.count = 0
        if kind == _NODE4:
            self.keys, self.children = bytearray(4), [None] * 4
        elif kind == _NODE16:
            self.keys, self.children = bytearray(16), [None] * 16
        elif kind == _NODE48:
            self.keys, self.children = bytearray([_EMPTY48] * 256), [None] * 48
        else:
            self.keys, self.children = bytearray(0), [None] * 256

    def positions(self) -> Iterator[int]:
        """Child positions in ascending key order (Java's ``getNextLargerPos`` walk)."""
        if self.kind in (_NODE4, _NODE16):
            return iter(range(self.count))
        if self.kind == _NODE48:
            return (p for p in range(256) if self.keys[p] != _EMPTY48)
        return (p for p in range(256) if self.children[p] is not None)

    def child_pos(self, byte: int) -> int:
        if self.kind in (_NODE4, _NODE16):
            for i in range(self.count):
                if self.keys[i] == byte:
                    return i
            return -1
        if self.kind == _NODE48:
            return byte if self.keys[byte] != _EMPTY48 else -1
        return byte if self.children[byte] is not None else -1

    def child(self, pos: int) -> Any:
        return self.children[self.keys[pos]] if self.kind == _NODE48 else self.children[pos]

    def replace(self, pos: int, node: Any) -> None:
        if self.kind == _NODE48:
            self.children[self.keys[pos]] = node
        else:
            self.children[pos] = node


_Node = _Leaf | _Inner


def _sort_small(keys: bytearray, children: list[Any], left: int, right: int) -> None:
    """``Node.sortSmallByteArray``: insertion sort of positions ``left..right``."""
    for i in range(left, right):
        j = i
        byte, child = keys[i + 1], children[i + 1]
        while byte < keys[j]:
            keys[j + 1], children[j + 1] = keys[j], children[j]
            j -= 1
            if j + 1 == left:
                break
        keys[j + 1], children[j + 1] = byte, child


def _insert_child(node: _Inner, child: _Node, byte: int) -> _Inner:
    """``Node{4,16,48,256}.insert``: add ``child`` under ``byte``, growing the node when full."""
    if node.kind == _NODE4:
        if node.count < 4:
            node.keys[node.count] = byte
            node.children[node.count] = child
            node.count += 1
            _sort_small(node.keys, node.children, 0, node.count - 1)
            return node
        grown = _Inner(_NODE16, node.prefix)
        grown.count = 4
        grown.keys[:4] = node.keys
        grown.children[:4] = node.children
        return _insert_child(grown, child, byte)
    if node.kind == _NODE16:
        if node.count < 16:
            node.keys[node.count] = byte
            node.children[node.count] = child
            _sort_small(node.keys, node.children, 0, node.count)
            node.count += 1
            return node
        grown = _Inner(_NODE48, node.prefix)
        for i in range(node.count):
            grown.keys[node.keys[i]] = i
            grown.children[i] = node.children[i]
        grown.count = node.count
        return _insert_child(grown, child, byte)
    if node.kind == _NODE48:
        if node.count < 48:
            pos = node.count
            if node.children[pos] is not None:
                pos = node.children.index(None)
            node.children[pos] = child
            node.keys[byte] = pos
            node.count += 1
            return node
        grown = _Inner(_NODE256, node.prefix)
        for p in node.positions():
            grown.children[p] = node.child(p)
        grown.count = node.count
        return _insert_child(grown, child, byte)
    node.count += 1
    node.children[byte] = child
    return node


def _insert(node: _Node | None, key: bytes, depth: int, index: int) -> _Node:
    """``Art.insert`` of a key the tree does not hold."""
    if node is None:
        return _Leaf(key, index)
    if isinstance(node, _Leaf):
        common = depth
        while common < _KEY_BYTES and node.key[common] == key[common]:
            common += 1
        node.prefix = b""
        split = _Inner(_NODE4, key[depth:common])
        _insert_child(split, node, node.key[common])
        _insert_child(split, _Leaf(key, index), key[common])
        return split
    prefix = node.prefix
    if prefix:
        mismatch = 0
        while mismatch < len(prefix) and prefix[mismatch] == key[depth + mismatch]:
            mismatch += 1
        if mismatch != len(prefix):
            split = _Inner(_NODE4, prefix[:mismatch])
            _insert_child(split, node, prefix[mismatch])
            node.prefix = prefix[mismatch + 1 :]
            _insert_child(split, _Leaf(key, index), key[depth + mismatch])
            return split
        depth += len(prefix)
    pos = node.child_pos(key[depth])
    if pos != -1:
        child = node.child(pos)
        fresh = _insert(child, key, depth + 1, index)
        if fresh is not child:
            node.replace(pos, fresh)
        return node
    return _insert_child(node, _Leaf(key, index), key[depth])


def _find(node: _Node | None, key: bytes) -> _Leaf | None:
    """``Art.findByKey``."""
    depth = 0
    while node is not None:
        if isinstance(node, _Leaf):
            return node if node.key[depth:] == key[depth:] else None
        if node.prefix:
            if key[depth : depth + len(node.prefix)] != node.prefix:
                return None
            depth += len(node.prefix)
        pos = node.child_pos(key[depth])
        if pos == -1:
            return None
        node = node.child(pos)
        depth += 1
    return None


def _leaves(node: _Node | None) -> Iterator[_Leaf]:
    """The leaves in ascending key order (Java's ``KeyIterator``)."""
    if node is None:
        return
    if isinstance(node, _Leaf):
        yield node
        return
    for pos in node.positions():
        yield from _leaves(node.child(pos))


# ----------------------------------------------------------------------------- reading


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def take(self, n: int) -> bytes:
        end = self.pos + n
        if n < 0 or end > len(self.data):
            raise RoaringFormatError(
                f"truncated RoaringBitmap64: needs {n} bytes at offset {self.pos}, "
                f"{len(self.data) - self.pos} left"
            )
        out = self.data[self.pos : end]
        self.pos = end
        return out

    def unpack(self, fmt: str) -> Any:
        values = struct.unpack(fmt, self.take(struct.calcsize(fmt)))
        return values[0] if len(values) == 1 else values


def _read_node(r: _Reader, depth: int) -> _Node:
    kind, count, prefix_length = r.unpack("<BHb")
    prefix = r.take(prefix_length) if prefix_length > 0 else b""
    if kind == _LEAF:
        leaf = _Leaf(r.take(_KEY_BYTES), r.unpack("<q"))
        leaf.prefix, leaf.count = prefix, count
        return leaf
    if kind > _NODE256 or depth + len(prefix) >= _KEY_BYTES:
        raise RoaringFormatError(f"bad ART node (type {kind}) at depth {depth}")
    node = _Inner(kind, prefix)
    node.count = count
    if kind == _NODE4:
        node.keys[:] = r.take(4)[::-1]
    elif kind == _NODE16:
        body = r.take(16)
        node.keys[:] = body[7::-1] + body[:7:-1]
    elif kind == _NODE48:
        body = r.take(256)
        node.keys[:] = b"".join(body[i : i + 8][::-1] for i in range(0, 256, 8))
    else:
        mask = np.unpackbits(np.frombuffer(r.take(32), np.uint8), bitorder="little")
    children = [_read_node(r, depth + len(prefix) + 1) for _ in range(count)]
    if kind in (_NODE4, _NODE16):
        if count > len(node.children):
            raise RoaringFormatError(f"ART node of {len(node.children)} with {count} children")
        node.children[:count] = children
    elif kind == _NODE48:
        slots = [p for p in range(256) if node.keys[p] != _EMPTY48]
        if len(slots) != count or any(node.keys[p] >= 48 for p in slots):
            raise RoaringFormatError("Node48 child index does not match its child count")
        for p, child in zip(slots, children):
            node.children[node.keys[p]] = child
    else:
        present = np.flatnonzero(mask).tolist()
        if len(present) != count:
            raise RoaringFormatError("Node256 mask does not match its child count")
        for p, child in zip(present, children):
            node.children[p] = child
    return node


def _read_container(r: _Reader) -> _Container | None:
    start = r.pos
    tag = r.unpack("<b")
    if tag == 0:
        return None
    if tag != 1:
        raise RoaringFormatError(f"the null tag byte value:{tag} is not right!")
    kind, card = r.unpack("<Bi")
    if kind == _RUN:
        runs = r.unpack("<H")
        pairs = np.frombuffer(r.take(4 * runs), _U16).astype(np.int64).reshape(runs, 2)
        values = np.concatenate(
            [np.arange(s, s + n + 1, dtype=np.int64) for s, n in pairs.tolist()]
            or [np.empty(0, np.int64)]
        )
        values = np.unique(values)
    elif kind == _BITMAP:
        bits = np.unpackbits(np.frombuffer(r.take(_BITMAP_BYTES), np.uint8), bitorder="little")
        values = np.flatnonzero(bits).astype(np.int64)
    elif kind == _ARRAY:
        values = np.unique(np.frombuffer(r.take(2 * card), _U16).astype(np.int64))
    else:
        raise RoaringFormatError(f"Not supported container type:{kind}")
    if len(values) != card:
        raise RoaringFormatError(f"container of {len(values)} values, header says {card}")
    return _Container(kind, values, r.data[start : r.pos])


# ----------------------------------------------------------------------------- the bitmap


class RoaringBitmap64:
    """Paimon's ``RoaringBitmap64`` (``Roaring64Bitmap``): a set of Java longs, unsigned
    ordered, serialized as Java serializes it."""

    def __init__(self) -> None:
        self._root: _Node | None = None
        self._keys = 0
        self._arrays: list[list[_Container | None]] = []
        self._size = 0
        self._first = -1
        self._second = 0

    # ------------------------------------------------------------------ building

    @classmethod
    def bitmap_of(cls, values: Iterable[int]) -> RoaringBitmap64:
        """``RoaringBitmap64.bitmapOf(values)``: the values added in the given order (the
        order decides the tree's shape, so the bytes)."""
        bitmap = cls()
        lows: dict[bytes, list[int]] = {}
        for value in values:
            if not -(1 << 63) <= value < 1 << 64:
                raise ValueError(f"{value} is not a 64-bit value")
            unsigned = value & 0xFFFFFFFFFFFFFFFF
            lows.setdefault((unsigned >> 16).to_bytes(_KEY_BYTES, "big"), []).append(
                unsigned & 0xFFFF
            )
        for key, low in lows.items():
            values_ = np.unique(np.array(low, np.int64))
            kind = _ARRAY if len(values_) <= _ARRAY_MAX else _BITMAP
            bitmap._put(key, _Container(kind, values_))
        return bitmap

    def _add_container(self, container: _Container) -> int:
        """``Containers.addContainer``: the next slot, the array growing by half."""
        if self._first == -1:
            self._arrays.append([None])
            self._first, self._second = 0, 0
        else:
            self._second += 1
        slots = self._arrays[self._first]
        if self._second >= len(slots):
            grown = max(len(slots) + (len(slots) >> 1), self._second + 1)
            slots.extend([None] * (grown - len(slots)))
        slots[self._second] = container
        self._size += 1
        return (self._first << 32) | self._second

    def _container(self, index: int) -> _Container:
        container = self._arrays[index >> 32][index & 0xFFFFFFFF]
        if container is None:
            raise RoaringFormatError(f"ART leaf points to the empty container slot {index}")
        return container

    def _set_container(self, index: int, container: _Container) -> None:
        self._arrays[index >> 32][index & 0xFFFFFFFF] = container

    def _put(self, key: bytes, container: _Container) -> None:
        index = self._add_container(container)
        self._root = _insert(self._root, key, 0, index)
        self._keys += 1

    def or_(self, other: RoaringBitmap64) -> RoaringBitmap64:
        """``Roaring64Bitmap.or`` in place: ``other``'s keys in ascending order, a new key's
        container copied into the next slot, a known key's container unioned in place."""
        if other is self:
            return self
        for leaf in _leaves(other._root):
            theirs = other._container(leaf.index)
            mine = _find(self._root, leaf.key)
            if mine is None:
                self._put(leaf.key, _Container(theirs.kind, theirs.values, theirs.raw))
            else:
                self._set_container(mine.index, _union(self._container(mine.index), theirs))
        return self

    # ------------------------------------------------------------------ reading

    def __iter__(self) -> Iterator[int]:
        """The values as Java longs, in Roaring64Bitmap's (unsigned) order."""
        for leaf in _leaves(self._root):
            high = int.from_bytes(leaf.key, "big") << 16
            for low in self._container(leaf.index).values.tolist():
                value = high | low
                yield value - (1 << 64) if value >= 1 << 63 else value

    def __len__(self) -> int:
        return sum(self._container(leaf.index).card for leaf in _leaves(self._root))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RoaringBitmap64) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    # ------------------------------------------------------------------ serde

    @classmethod
    def deserialize(cls, data: bytes) -> RoaringBitmap64:
        """``RoaringBitmap64.deserialize``: the bitmap with the tree and container slots the
        bytes describe.

        Raises:
            RoaringFormatError: bytes that are not a serialized ``Roaring64Bitmap``.
        """
        bitmap = cls()
        r = _Reader(bytes(data))
        tag = r.unpack("<b")
        if tag == 0:
            return bitmap
        bitmap._keys = r.unpack("<q")
        bitmap._root = _read_node(r, 0)
        arrays = r.unpack("<i")
        for _ in range(arrays):
            r.take(1)  # trimmed mark
            slots = r.unpack("<i")
            bitmap._arrays.append([_read_container(r) for _ in range(slots)])
        bitmap._size, bitmap._first, bitmap._second = r.unpack("<qii")
        for leaf in _leaves(bitmap._root):
            if not 0 <= leaf.index >> 32 < len(bitmap._arrays) or not (
                0 <= leaf.index & 0xFFFFFFFF < len(bitmap._arrays[leaf.index >> 32])
            ):
                raise RoaringFormatError(f"ART leaf points to no container slot ({leaf.index})")
            bitmap._container(leaf.index)
        return bitmap

    def run_optimize(self) -> RoaringBitmap64:
        """``Roaring64Bitmap.runOptimize``: array and bitmap containers that are smaller as
        run containers become ones. ``deserialize(serialize(b))`` is ``b`` run-optimized."""
        for slots in self._arrays:
            for i, container in enumerate(slots):
                if container is not None:
                    slots[i] = container.run_optimized()
        return self

    def serialize(self) -> bytes:
        """``RoaringBitmap64.serialize``: ``runOptimize`` (which changes this bitmap, as in
        Java), then the bytes."""
        self.run_optimize()
        if self._root is None:
            return b"\x00"
        out = bytearray(b"\x01")
        out += struct.pack("<q", self._keys)
        self._write_node(self._root, out)
        out += struct.pack("<i", len(self._arrays))
        for slots in self._arrays:
            out += struct.pack("<bi", -2, len(slots))
            for container in slots:
                out += b"\x00" if container is None else container.payload()
        out += struct.pack("<qii", self._size, self._first, self._second)
        return bytes(out)

    def _write_node(self, node: _Node, out: bytearray) -> None:
        out += struct.pack("<BHb", _LEAF if isinstance(node, _Leaf) else node.kind,
                           node.count, len(node.prefix))  # fmt: skip
        out += node.prefix
        if isinstance(node, _Leaf):
            out += node.key + struct.pack("<q", node.index)
            return
        if node.kind == _NODE4:
            out += node.keys[::-1]
        elif node.kind == _NODE16:
            out += node.keys[7::-1] + node.keys[:7:-1]
        elif node.kind == _NODE48:
            out += b"".join(node.keys[i : i + 8][::-1] for i in range(0, 256, 8))
        else:
            bits = np.array([c is not None for c in node.children], np.uint8)
            out += np.packbits(bits, bitorder="little").tobytes()
        for pos in node.positions():
            self._write_node(node.child(pos), out)

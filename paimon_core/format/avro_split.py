"""Finding the records of an Avro block, and one field of each, at C speed.

Avro records carry no lengths: to find where a record ends every field must be walked, and a
walk in Python bytecode costs about 2.5 us a manifest entry, most of a cold plan. A
partition-filtered plan needs only each entry's ``_PARTITION`` and its extent, so the
records of a writer schema are matched by a regular expression made from the schema, which
``re`` runs in C: a varint is ``[\\x80-\\xff]*+[\\x00-\\x7f]``, a fixed-size value ``.{n}``,
a union its branch index byte and that branch, a record its fields in order. A bytes or
string value needs its length, which a regular expression cannot read: each such field
matches the lengths seen so far (``\\x28.{20}|\\x2a.{21}``), and an array the item counts
seen so far. They are learned from the records that did not match yet, walked in Python
(a table's files have few shapes: BinaryRows come in 8-byte words, stats strings are
truncated, file names have one length), and kept per writer schema for the process.

Why a match is the record: Avro's binary encoding of a schema is a prefix code, and the
expression only spells out (some of) that code's words, each branch starting with a byte
the others do not: at a record's start it matches that record exactly or not at all. So
``findall`` over a block whose matches tile it (their lengths add up to the block's, as
many as its count) has found every record, each whole; when they do not, the records that
match from the start are those up to the first that does not, which the caller walks.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable, Sequence
from operator import itemgetter
from typing import Any

_PRIMITIVES = frozenset(("null", "boolean", "int", "long", "float", "double", "bytes", "string"))
_FIXED_SIZES = {"boolean": 1, "float": 4, "double": 8}
_VARINT = rb"[\x80-\xff]*+[\x00-\x7f]"
_NEVER = b"(?!)"
_RECORD = itemgetter(0)
_MAX_ALTERNATIVES = 32  # lengths (counts) of one field; more, and records walk in Python
_MAX_LEARNING = 32

# Shape nodes: ("v",) varint; ("f", n) n bytes; ("b", slot, is_string) length-prefixed;
# ("u", branches); ("a", slot, item) array; ("r", fields, names).
Node = tuple


class Unsupported(Exception):
    """A schema the expression cannot describe (maps, recursion, an odd filter field)."""


def long_bytes(n: int) -> bytes:
    """Avro's encoding of a long (zigzag varint)."""
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def register_named(named: dict[str, dict], schema: dict, ns: str) -> str:
    """Record the named Avro type ``schema`` (in namespace ``ns``) under its full name in
    ``named``; returns the namespace its own fields resolve names in."""
    name = schema.get("name", "")
    space = schema.get("namespace", ns)
    full = name if "." in name or not space else f"{space}.{name}"
    named[full] = schema
    return full.rsplit(".", 1)[0] if "." in full else ""


def read_long(buf: bytes, p: int) -> tuple[int, int]:
    """The Avro long (zigzag varint) at ``p``: (value, position after it)."""
    b = buf[p]
    n = b & 0x7F
    shift = 7
    p += 1
    while b & 0x80:
        b = buf[p]
        p += 1
        n |= (b & 0x7F) << shift
        shift += 7
    return (n >> 1) ^ -(n & 1), p


def _any_of(options: Iterable[bytes]) -> bytes:
    """One of ``options`` (each starting with bytes no other starts with): no atomic group,
    which costs more in ``re`` than the few bytes it could save backtracking over."""
    found = list(options)
    if not found:
        return _NEVER
    return found[0] if len(found) == 1 else b"(?:%s)" % b"|".join(found)


class _Shapes:
    """Turns a writer schema into shape nodes, numbering the fields whose lengths (or
    item counts) are learned."""

    def __init__(self) -> None:
        self.named: dict[str, Any] = {}
        self.slots = 0
        self.depth = 0

    def slot(self) -> int:
        self.slots += 1
        return self.slots - 1

    def node(self, schema: Any, ns: str) -> Node:
        self.depth += 1
        if self.depth > 64:
            raise Unsupported("recursive schema")
        try:
            return self._node(schema, ns)
        finally:
            self.depth -= 1

    def _node(self, schema: Any, ns: str) -> Node:
        if isinstance(schema, list):
            return ("u", tuple(self.node(branch, ns) for branch in schema))
        if isinstance(schema, str) and schema not in _PRIMITIVES:
            full = schema if "." in schema or not ns else f"{ns}.{schema}"
            found = self.named.get(full, self.named.get(schema))
            if found is None:
                raise Unsupported(f"unknown type {schema!r}")
            return self.node(found, ns)
        kind = schema if isinstance(schema, str) else schema.get("type")
        if isinstance(kind, (dict, list)) or (
            isinstance(kind, str) and kind not in _PRIMITIVES and kind not in _COMPLEX
        ):
            return self.node(kind, ns)
        if kind in ("int", "long", "enum"):
            if kind == "enum":
                self.register(schema, ns)
            return ("v",)
        if kind in _FIXED_SIZES:
            return ("f", _FIXED_SIZES[kind])
        if kind == "null":
            return ("f", 0)
        if kind in ("bytes", "string"):
            return ("b", self.slot(), kind == "string")
        if kind == "fixed":
            self.register(schema, ns)
            return ("f", int(schema["size"]))
        if kind == "array":
            return ("a", self.slot(), self.node(schema["items"], ns))
        if kind in ("record", "error"):
            inner = self.register(schema, ns)
            fields = schema["fields"]
            return (
                "r",
                tuple(self.node(f["type"], inner) for f in fields),
                tuple(f["name"] for f in fields),
            )
        raise Unsupported(f"Avro type {kind!r}")

    def register(self, schema: dict, ns: str) -> str:
        return register_named(self.named, schema, ns)


_COMPLEX = frozenset(("record", "error", "array", "map", "enum", "fixed"))


def _walk(node: Node, buf: bytes, p: int, facts: list[tuple[int, int]] | None) -> int:
    """The end of the value ``node`` at ``p``, noting (slot, length or count) in ``facts``
    (None once a value cannot be learned: an array in several or sized blocks)."""
    kind = node[0]
    if kind == "v":
        while buf[p] > 127:
            p += 1
        return p + 1
    if kind == "f":
        return p + node[1]
    if kind == "b":
        n, p = read_long(buf, p)
        if n < 0:
            raise ValueError(f"negative length {n}")
        if facts is not None:
            facts.append((node[1], n))
        return p + n
    if kind == "u":
        index = buf[p]
        if index & 1 or index >> 1 >= len(node[1]):
            raise ValueError(f"union branch {index} does not exist")
        return _walk(node[1][index >> 1], buf, p + 1, facts)
    if kind == "a":
        blocks = 0
        while True:
            count, p = read_long(buf, p)
            if count == 0:
                return p
            blocks += 1
            if count < 0:
                count = -count
                _, p = read_long(buf, p)
                facts = None
            if blocks > 1:
                facts = None
            if facts is not None:
                facts.append((node[1], count))
            for _ in range(count):
                p = _walk(node[2], buf, p, facts)
    for field in node[1]:
        p = _walk(field, buf, p, facts)
    return p


Capture = tuple[tuple[str, ...], str, str]
"""Fields captured raw (as written): the names of the record fields leading from the top
record to a record, and its first and last field captured."""


class RecordPattern:
    """The records of one writer schema as a regular expression, learning lengths as it
    meets them. Each match gives the record and its ``captures``, in order. The first
    capture, when one bytes field (or a union of null and bytes), has a ``value``.
    ``ascii_strings``: string values match only when ASCII (so valid UTF-8: a match then
    checks what a decode would); others are left to the caller's walk."""

    def __init__(
        self, schema: Any, captures: Sequence[Capture], ascii_strings: bool = False
    ) -> None:
        if not isinstance(schema, dict) or schema.get("type") not in ("record", "error"):
            raise Unsupported("not a record")
        shapes = _Shapes()
        self.top: Node = shapes.node(schema, "")
        self.ascii_strings = ascii_strings
        self.captures: dict[tuple[int, ...], list[tuple[int, int]]] = {}
        first_field: Node | None = None
        for names, first, last in captures:
            node, path = self.top, ()
            for name in names:
                if node[0] != "r" or name not in node[2]:
                    raise Unsupported(f"no record field {name}")
                path += (node[2].index(name),)
                node = node[1][path[-1]]
            if node[0] != "r" or first not in node[2] or last not in node[2]:
                raise Unsupported(f"no fields {first} .. {last}")
            start, stop = node[2].index(first), node[2].index(last) + 1
            if stop <= start:
                raise Unsupported(f"{first} is after {last}")
            self.captures.setdefault(path, []).append((start, stop))
            if first_field is None:
                first_field = node[1][start] if stop == start + 1 else ("r", (), ())
        # Whether the first capture has a value: bytes, or null (this branch) or bytes.
        self.has_value = first_field is not None and first_field[0] == "b"
        self.null_branch: int | None = None
        if first_field is not None and first_field[0] == "u":
            branches = first_field[1]
            if sorted(b[0] for b in branches) == ["b", "f"] and ("f", 0) in branches:
                self.null_branch = branches.index(("f", 0))
                self.has_value = True
        self.lengths: list[list[int]] = [[] for _ in range(shapes.slots)]
        self.lock = threading.Lock()
        self.compiled: tuple[re.Pattern[bytes], re.Pattern[bytes]] | None = None
        self.whole = True
        self.learnt = 0

    @property
    def fields(self) -> tuple[Node, ...]:
        return self.top[1]

    # ---------------------------------------------------------------- the expression

    def _rx(self, node: Node, path: tuple[int, ...] | None, groups: bool) -> bytes:
        kind = node[0]
        if kind == "v":
            return _VARINT
        if kind == "f":
            return b".{%d}" % node[1] if node[1] else b""
        if kind == "b":
            content = rb"[\x00-\x7f]" if node[2] and self.ascii_strings else b"."
            return _any_of(
                re.escape(long_bytes(n)) + content + b"{%d}" % n for n in self.lengths[node[1]]
            )
        if kind == "u":
            return _any_of(
                re.escape(long_bytes(i)) + rx
                for i, branch in enumerate(node[1])
                for rx in (self._rx(branch, None, groups),)
                if rx != _NEVER
            )
        if kind == "a":
            item = self._rx(node[2], None, groups)
            runs = [b"\x00"]
            if item != _NEVER:
                for count in self.lengths[node[1]]:
                    items = item * count if count <= 4 else b"(?:%s){%d}" % (item, count)
                    runs.append(re.escape(long_bytes(count)) + items + b"\x00")
            return _any_of(runs)
        parts = [
            self._rx(f, None if path is None else (*path, i), groups) for i, f in enumerate(node[1])
        ]
        if groups and path is not None:
            for start, stop in sorted(self.captures.get(path, ()), reverse=True):
                parts[start:stop] = [b"(" + b"".join(parts[start:stop]) + b")"]
        return b"".join(parts)

    def _compile(self) -> None:
        one = re.compile(b"(" + self._rx(self.top, (), True) + b")", re.DOTALL)
        # The run of records from a position: no group, nothing to backtrack into.
        run = re.compile(b"(?:" + self._rx(self.top, (), False) + b")*+", re.DOTALL)
        self.compiled = (one, run)

    def learn(self, body: bytes, pos: int, records: int) -> bool:
        """Learn the shapes of up to ``records`` records from ``pos`` (where one starts);
        whether that changed the expression (it is then compiled anew). A pattern learns
        ``_MAX_LEARNING`` times at most: a table that needs more has too many shapes for
        an expression."""
        if self.learnt >= _MAX_LEARNING:
            return False
        self.learnt += 1
        facts: list[tuple[int, int]] = []
        try:
            for _ in range(records):
                for field in self.fields:
                    pos = _walk(field, body, pos, facts)
                if pos >= len(body):
                    break
        except (LookupError, ValueError):
            pass  # a damaged record: the caller's walk says so
        with self.lock:
            new = False
            for slot, n in facts:
                known = self.lengths[slot]
                if n not in known and len(known) < _MAX_ALTERNATIVES:
                    known.append(n)
                    new = True
            if new or self.compiled is None:
                self._compile()
                return True
        return False

    # --------------------------------------------------------------------- matching

    def run(self, body: bytes, pos: int, whole: bool) -> tuple[list[tuple[bytes, ...]], int]:
        """The records matching from ``pos`` on, as (record, *captures) tuples, and where
        they stop: at the end of ``body`` or at a record not matched (not learned yet).
        ``whole``: first try the whole rest at once, one pass when every record matches
        (unless the last such try failed and no whole file matched since)."""
        compiled = self.compiled
        if compiled is None:
            return [], pos
        one, run = compiled
        end = len(body)
        if whole and self.whole:
            found = one.findall(body, pos)
            if sum(map(len, map(_RECORD, found))) == end - pos:
                return found, end
            self.whole = False  # searching past records not matched costs: not next time
        stop = run.match(body, pos).end()
        if whole and stop == end:
            self.whole = True
        if stop == pos:
            return [], pos
        return one.findall(body, pos, stop), stop

    def value(self, raw: bytes) -> bytes | None:
        """The first capture's value from its raw bytes (``has_value``)."""
        if self.null_branch is not None:
            if raw[0] >> 1 == self.null_branch:
                return None
            raw = raw[1:]
        _, p = read_long(raw, 0)
        return raw[p:]


_PATTERNS: dict[tuple[bytes, tuple[Capture, ...], str, bool], RecordPattern | None] = {}
_PATTERNS_LOCK = threading.Lock()


def record_pattern(
    schema_json: bytes,
    captures: tuple[Capture, ...],
    scope: str = "",
    ascii_strings: bool = False,
) -> RecordPattern | None:
    """The learning pattern of records of a writer schema, kept for the process per
    ``scope`` (a table's manifest directory: what it learns is that table's data); None
    when the schema is one it cannot describe."""
    key = (schema_json, captures, scope, ascii_strings)
    try:
        return _PATTERNS[key]
    except KeyError:
        pass
    try:
        schema = json.loads(schema_json)
        pattern: RecordPattern | None = RecordPattern(schema, captures, ascii_strings)
    except (Unsupported, ValueError, LookupError, TypeError, AttributeError):
        pattern = None
    with _PATTERNS_LOCK:
        if len(_PATTERNS) >= 256:
            _PATTERNS.pop(next(iter(_PATTERNS)))
        return _PATTERNS.setdefault(key, pattern)

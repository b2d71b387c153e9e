"""Partition-filtered plans are the full plan filtered: whatever the predicate (equality, IN,
ranges, nulls, several partition columns), the manifests' writer (ours, Java 0.9), and
whether the manifests come from the cache, are read for some partitions only, or decoded
whole on a second partial read."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import InvalidArgument
from paimon_core.format import avro_split
from paimon_core.format.manifest import MANIFEST_CACHE
from paimon_core.table import FileStoreTable

A_VALUES = [None, -3, 0, 1, 2, 7, 100_000]
B_VALUES = [None, "", "x", "yy", "a-longer-partition-value", "Ünïcode ☃ value"]
SCHEMA = pa.schema([("k", pa.int64()), ("a", pa.int32()), ("b", pa.string())])


def _new_table(root: Path, name: str, schema: pa.Schema, keys: list[str]) -> FileStoreTable:
    catalog = FileSystemCatalog(str(root))
    catalog.create_database("db", ignore_if_exists=True)
    return catalog.create_table(f"db.{name}", schema, partition_keys=keys)


def _java_table(
    root: Path,
    oracle: Callable[..., Any],
    name: str,
    schema: str,
    keys: str,
    commits: Iterable[list[dict[str, Any]]],
) -> FileStoreTable:
    """A table Java 0.9 created and wrote ``commits`` into (its own manifest shape)."""
    warehouse = str(root)
    oracle("create-table", warehouse, f"db.{name}", "--schema", schema, "--partition", keys)
    for rows in commits:
        oracle("write", warehouse, f"db.{name}", "--json-rows", json.dumps(rows))
    return FileSystemCatalog(warehouse).get_table(f"db.{name}")


def _ours(root: Path) -> FileStoreTable:
    """Six commits over every (a, b) partition, then an overwrite of some (DELETE entries)."""
    table = _new_table(root, "ours", SCHEMA, ["a", "b"])
    pairs = [(a, b) for a in A_VALUES for b in B_VALUES]
    for commit in range(6):
        chosen = pairs[commit % 3 :: 1 + commit % 2]
        table.write_arrow(
            pa.table(
                {
                    "k": list(range(len(chosen))),
                    "a": [a for a, _ in chosen],
                    "b": [b for _, b in chosen],
                },
                schema=SCHEMA,
            )
        )
    table.write_arrow(
        pa.table({"k": [9, 9], "a": [1, None], "b": ["x", None]}, schema=SCHEMA), overwrite=True
    )
    return table


def _javas(root: Path, oracle: Callable[..., Any]) -> FileStoreTable:
    """Java 0.9's manifests (its own Avro shape): three commits."""
    pairs = [(a, b) for a in A_VALUES for b in B_VALUES]
    commits = [
        [
            {"k": i, "a": a, "b": b}
            for i, (a, b) in enumerate(pairs[commit::2])
            if b != "Ünïcode ☃ value"  # the oracle's JSON in argv: plain ASCII only
        ]
        for commit in range(3)
    ]
    return _java_table(root, oracle, "java", "k BIGINT, a INT, b STRING", "a,b", commits)


@pytest.fixture(scope="module")
def tables(
    tmp_path_factory: pytest.TempPathFactory, oracle: Callable[..., Any]
) -> dict[str, FileStoreTable]:
    root = tmp_path_factory.mktemp("filtered")
    return {"ours": _ours(root), "java": _javas(root, oracle)}


def _sql_matches(op: str, literal: Any, value: Any) -> bool:
    """SQL's WHERE semantics, independently of the scan's own evaluation."""
    if op == "is_null":
        return value is None
    if op == "is_not_null":
        return value is not None
    if value is None:
        return False
    if op == "in":
        return any(one is not None and value == one for one in literal)
    return {
        "=": value == literal,
        "!=": value != literal,
        "<": value < literal,
        "<=": value <= literal,
        ">": value > literal,
        ">=": value >= literal,
    }[op]


def _files(table: FileStoreTable, **kwargs: Any) -> set[tuple]:
    return {
        (s.partition_values, s.bucket, f.file_name)
        for s in table.new_scan().plan(**kwargs)
        for f in s.files
    }


def _expected(
    table: FileStoreTable, predicate: list[tuple[str, str, Any]], columns: tuple[str, str]
) -> set:
    """The full plan's files, filtered in Python by the partition values."""
    MANIFEST_CACHE.clear()
    index = {c: i for i, c in enumerate(columns)}
    return {
        f
        for f in _files(table)
        if all(_sql_matches(op, lit, f[0][index[c]]) for c, op, lit in predicate)
    }


def _check(table: FileStoreTable, predicate: list[tuple[str, str, Any]]) -> None:
    expected = _expected(table, predicate, ("a", "b"))
    MANIFEST_CACHE.clear()
    assert _files(table, predicate=predicate) == expected  # manifests read for some partitions
    assert _files(table, predicate=predicate) == expected  # read again: decoded whole, cached
    assert _files(table, predicate=predicate) == expected  # from the cache


def _literal(column: str) -> st.SearchStrategy[Any]:
    values = A_VALUES if column == "a" else B_VALUES
    known = st.sampled_from([v for v in values if v is not None])
    other = st.integers(-5, 10) if column == "a" else st.text(max_size=4)
    return known | other


def _conjunct(
    columns: list[str], literal: Callable[[str], st.SearchStrategy[Any]]
) -> st.SearchStrategy[tuple[str, str, Any]]:
    """One conjunct on ``columns``, its literals drawn from ``literal(column)``."""

    @st.composite
    def conjunct(draw: st.DrawFn) -> tuple[str, str, Any]:
        column = draw(st.sampled_from(columns))
        ops = ["=", "!=", "<", "<=", ">", ">=", "in", "is_null", "is_not_null"]
        op = draw(st.sampled_from(ops))
        if op in ("is_null", "is_not_null"):
            return (column, op, None)
        if op == "in":
            items = st.lists(literal(column) | st.none(), min_size=1, max_size=4)
            return (column, op, tuple(draw(items)))
        return (column, op, draw(literal(column)))

    return conjunct()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_conjunct(["a", "b"], _literal), min_size=1, max_size=3),
    st.sampled_from(["ours", "java"]),
    st.booleans(),
)
def test_a_filtered_plan_is_the_full_plan_filtered(
    tables: dict[str, FileStoreTable],
    predicate: list[tuple[str, str, Any]],
    which: str,
    forget_patterns: bool,
) -> None:
    if forget_patterns:
        avro_split._PATTERNS.clear()
    _check(tables[which], predicate)


@pytest.mark.parametrize("which", ["ours", "java"])
@pytest.mark.parametrize(
    "predicate",
    [
        [("a", "=", 7)],
        [("a", "=", 7), ("b", "=", "yy")],
        [("a", "in", (0, 2, 55)), ("b", "in", ("x", "a-longer-partition-value"))],
        [("a", "is_null", None)],
        [("a", "is_null", None), ("b", "is_null", None)],
        [("b", "is_not_null", None), ("a", "<", 1)],
        [("a", ">=", 1), ("a", "<=", 7)],
        [("b", ">", "x")],
        [("a", "in", ())],
        [("a", "in", (None,))],
    ],
)
def test_partition_predicates(
    tables: dict[str, FileStoreTable], which: str, predicate: list[tuple[str, str, Any]]
) -> None:
    _check(tables[which], predicate)


def test_partition_filter_with_a_null_value_selects_the_null_partition(
    tables: dict[str, FileStoreTable],
) -> None:
    table = tables["ours"]
    MANIFEST_CACHE.clear()
    planned = table.new_scan().plan(partition_filter={"a": None, "b": "x"})
    assert {s.partition_values for s in planned} == {(None, "x")}
    MANIFEST_CACHE.clear()
    assert {(s.partition_values, f.file_name) for s in planned for f in s.files} == {
        (s.partition_values, f.file_name)
        for s in table.new_scan().plan()
        for f in s.files
        if s.partition_values == (None, "x")
    }


def test_in_needs_a_list_of_literals(tables: dict[str, FileStoreTable]) -> None:
    with pytest.raises(InvalidArgument, match="list of literals"):
        tables["ours"].new_scan().plan(predicate=[("b", "in", "xy")])
    with pytest.raises(InvalidArgument, match="list of literals"):
        tables["ours"].new_scan().plan(predicate=[("a", "in", 3)])


# ------------------------------------- partitions of fixed-size fields: heads searched for

C_VALUES = [None, -(2**40), -1, 0, 7, 2**33]
FIXED = pa.schema([("k", pa.int64()), ("a", pa.int32()), ("c", pa.int64())])


def _ours_fixed(root: Path) -> FileStoreTable:
    """Partitions (a INT, c BIGINT), every Paimon writer's row of a fixed size: the filtered
    reads search each manifest for its entries' heads. Small values everywhere (keys, the
    stats of ``a`` and ``c``), so that a partition's bytes also sit inside other fields;
    an overwrite (DELETE entries) last."""
    table = _new_table(root, "fixed", FIXED, ["a", "c"])
    pairs = [(a, c) for a in A_VALUES for c in C_VALUES]
    for commit in range(5):
        chosen = pairs[commit % 3 :: 1 + commit % 2]
        table.write_arrow(
            pa.table(
                {
                    "k": [a if a is not None else c for a, c in chosen],
                    "a": [a for a, _ in chosen],
                    "c": [c for _, c in chosen],
                },
                schema=FIXED,
            )
        )
    table.write_arrow(
        pa.table({"k": [7, 0], "a": [7, None], "c": [0, None]}, schema=FIXED), overwrite=True
    )
    return table


def _javas_fixed(root: Path, oracle: Callable[..., Any]) -> FileStoreTable:
    """Java 0.9's manifests of a table partitioned by (a INT, c BIGINT)."""
    pairs = [(a, c) for a in A_VALUES for c in C_VALUES]
    commits = [[{"k": a or 0, "a": a, "c": c} for a, c in pairs[n::2]] for n in range(3)]
    return _java_table(root, oracle, "jfixed", "k BIGINT, a INT, c BIGINT", "a,c", commits)


@pytest.fixture(scope="module")
def fixed_tables(
    tmp_path_factory: pytest.TempPathFactory, oracle: Callable[..., Any]
) -> dict[str, FileStoreTable]:
    root = tmp_path_factory.mktemp("fixed")
    return {"ours": _ours_fixed(root), "java": _javas_fixed(root, oracle)}


def _check_fixed(table: FileStoreTable, predicate: list[tuple[str, str, Any]]) -> None:
    as_int = [(c, op, _as_int(lit)) for c, op, lit in predicate]
    expected = _expected(table, as_int, ("a", "c"))
    MANIFEST_CACHE.clear()
    assert _files(table, predicate=predicate) == expected  # manifests searched
    assert _files(table, predicate=predicate) == expected  # read again: decoded whole, cached


def _as_int(literal: Any) -> Any:
    """A literal as the SQL layer means it for an integer column (strings are numbers)."""
    if isinstance(literal, tuple):
        return tuple(map(_as_int, literal))
    return int(literal) if isinstance(literal, str) else literal


def _fixed_literal(column: str) -> st.SearchStrategy[Any]:
    values = A_VALUES if column == "a" else C_VALUES
    known = st.sampled_from([v for v in values if v is not None])
    other = st.integers(-5, 10) | st.integers(-(2**63), 2**63 - 1)
    text = known.map(str)  # SQL hands literals over as strings too: not pre-filtered in C
    return known | other | text


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_conjunct(["a", "c"], _fixed_literal), min_size=1, max_size=3),
    st.sampled_from(["ours", "java"]),
    st.booleans(),
)
def test_a_searched_plan_is_the_full_plan_filtered(
    fixed_tables: dict[str, FileStoreTable],
    predicate: list[tuple[str, str, Any]],
    which: str,
    forget_patterns: bool,
) -> None:
    if forget_patterns:
        avro_split._PATTERNS.clear()
    _check_fixed(fixed_tables[which], predicate)


@pytest.mark.parametrize("which", ["ours", "java"])
@pytest.mark.parametrize(
    "predicate",
    [
        [("a", "=", 7)],
        [("a", "=", 7), ("c", "=", 0)],
        [("a", "in", (0, 2, 7, None))],
        [("c", "in", (-(2**40), 2**33))],
        [("a", "<", 1)],
        [("a", ">=", 1), ("c", "<=", 7)],
        [("a", "is_null", None)],
        [("c", "=", "7")],
        [("a", "in", ())],
    ],
)
def test_searched_partition_predicates(
    fixed_tables: dict[str, FileStoreTable],
    which: str,
    predicate: list[tuple[str, str, Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """And the manifests are read by searching their heads, never the general way."""
    from paimon_core.format import manifest

    searched: list[bool] = []
    real = manifest._decode_by_heads

    def spy(*args: Any) -> bool:
        searched.append(real(*args))
        return searched[-1]

    monkeypatch.setattr(manifest, "_decode_by_heads", spy)
    _check_fixed(fixed_tables[which], predicate)
    assert all(searched)
    # Every manifest searched, unless the manifest list's partition stats pruned them all.
    assert searched or predicate == [("a", "in", ())]


# ----------------------- partitions with variable-size fields: searched when of one size

DT_SAME = ["2024-01-01", "2024-01-02", "2024-02-29", "2024-1-05", "2024-12-31x", "Ünïcode-x"]
"""Strings of 9 to 16 bytes: partition rows (dt, h) of one size (the variable part 16)."""
DT_OTHER = [None, "", "x", "2024-01-01 00:00:00 UTC"]
"""Strings whose rows are of other sizes (null and inline: none; 23 bytes: 24)."""
H_VALUES = [None, 0, 7]
DATED = pa.schema([("k", pa.int64()), ("dt", pa.string()), ("h", pa.int32())])


def _dated_rows(dts: list[str | None]) -> pa.Table:
    pairs = [(dt, h) for dt in dts for h in H_VALUES]
    return pa.table(
        {"k": list(range(len(pairs))), "dt": [d for d, _ in pairs], "h": [h for _, h in pairs]},
        schema=DATED,
    )


def _ours_dated(root: Path) -> FileStoreTable:
    """Partitions (dt STRING, h INT): four commits of rows of one size, one of short
    strings only (another size, but one per manifest), one mixing sizes (its manifest read
    the general way), then an overwrite (DELETE entries)."""
    table = _new_table(root, "dated", DATED, ["dt", "h"])
    for commit in range(4):
        table.write_arrow(_dated_rows(DT_SAME[commit % 3 :: 1 + commit % 2]))
    table.write_arrow(_dated_rows(["", "x"]))
    table.write_arrow(_dated_rows(DT_OTHER + DT_SAME[:2]))
    table.write_arrow(_dated_rows(["2024-01-02", "x"])[:2], overwrite=True)
    return table


def _javas_dated(root: Path, oracle: Callable[..., Any]) -> FileStoreTable:
    """Java 0.9's manifests of a table partitioned by (dt STRING, h INT), rows of one size."""
    ascii_dts = [d for d in DT_SAME if d.isascii()]  # the oracle's JSON in argv: ASCII
    commits = [_dated_rows(ascii_dts[n::2]).to_pylist() for n in range(3)]
    return _java_table(root, oracle, "jdated", "k BIGINT, dt STRING, h INT", "dt,h", commits)


@pytest.fixture(scope="module")
def dated_tables(
    tmp_path_factory: pytest.TempPathFactory, oracle: Callable[..., Any]
) -> dict[str, FileStoreTable]:
    root = tmp_path_factory.mktemp("dated")
    return {"ours": _ours_dated(root), "java": _javas_dated(root, oracle)}


def _check_dated(table: FileStoreTable, predicate: list[tuple[str, str, Any]]) -> None:
    expected = _expected(table, predicate, ("dt", "h"))
    MANIFEST_CACHE.clear()
    assert _files(table, predicate=predicate) == expected  # manifests searched
    assert _files(table, predicate=predicate) == expected  # read again: decoded whole, cached


def _dated_literal(column: str) -> st.SearchStrategy[Any]:
    if column == "h":
        return st.sampled_from([0, 7]) | st.integers(-2, 9)
    known = st.sampled_from([v for v in DT_SAME + DT_OTHER if v is not None])
    return known | st.text(max_size=12) | known.map(lambda s: s[:-1])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_conjunct(["dt", "dt", "h"], _dated_literal), min_size=1, max_size=3),
    st.sampled_from(["ours", "java"]),
    st.booleans(),
)
def test_a_searched_plan_of_string_partitions_is_the_full_plan_filtered(
    dated_tables: dict[str, FileStoreTable],
    predicate: list[tuple[str, str, Any]],
    which: str,
    forget_patterns: bool,
) -> None:
    if forget_patterns:
        avro_split._PATTERNS.clear()
    _check_dated(dated_tables[which], predicate)


@pytest.mark.parametrize("which", ["ours", "java"])
@pytest.mark.parametrize(
    "predicate",
    [
        [("dt", "=", "2024-01-02")],
        [("dt", "=", "Ünïcode-x"), ("h", "=", 7)],
        [("dt", "in", ("2024-1-05", "x", None, "2024-02-29"))],
        [("dt", "<", "2024-02")],
        [("dt", ">=", "2024-01-02"), ("dt", "<", "2024-12-31")],
        [("dt", "=", "x")],
        [("dt", "is_null", None)],
        [("h", "in", (0, None))],
    ],
)
def test_searched_string_partition_predicates(
    dated_tables: dict[str, FileStoreTable],
    which: str,
    predicate: list[tuple[str, str, Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Java's manifests (rows of one size) are all searched; ours too but those mixing
    sizes, read the general way: the sixth commit's and the overwrite's (its DELETE
    entries name files of every size)."""
    from paimon_core.format import manifest

    searched: list[bool] = []
    real = manifest._decode_by_heads

    def spy(*args: Any) -> bool:
        searched.append(real(*args))
        return searched[-1]

    monkeypatch.setattr(manifest, "_decode_by_heads", spy)
    _check_dated(dated_tables[which], predicate)
    if which == "java":
        assert all(searched)
    else:
        assert searched.count(False) <= 2


@st.composite
def _dated_partitions(draw: st.DrawFn) -> list[tuple[str | None, int | None]]:
    """Partitions mostly of strings of one length (dates: their bytes in one place of each
    row, or inline), sometimes others; any letters (ASCII or not)."""
    length = draw(st.integers(0, 17))
    letters = st.sampled_from("0123-9x") | st.characters(codec="utf-8")
    same = st.text(letters, min_size=length, max_size=length)
    dts = st.lists(same | st.sampled_from(DT_SAME + DT_OTHER) | st.none(), max_size=4)
    return draw(st.lists(st.tuples(same, st.sampled_from(H_VALUES)), min_size=1, max_size=12)) + [
        (dt, 0) for dt in draw(dts)
    ]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    _dated_partitions(),
    st.lists(_conjunct(["dt", "dt", "h"], _dated_literal), min_size=1, max_size=2),
    st.booleans(),
)
def test_the_slot_prefilter_passes_every_kept_string_partition(
    dated_tables: dict[str, FileStoreTable],
    partitions: list[tuple[str | None, int | None]],
    predicate: list[tuple[str, str, Any]],
    uniform: bool,
) -> None:
    """``keep.necessary`` (strings compared as their bytes, in C) holds for every partition
    ``keep`` keeps, of one size or not."""
    from paimon_core.format.binary_row import serialize_row

    scan = dated_tables["ours"].new_scan()
    keep = scan._partition_keeper(scan._partition_predicates(None, predicate), None)
    assert keep is not None
    necessary = getattr(keep, "necessary", None)
    if necessary is None:
        return
    raws = [serialize_row(list(p), scan.partition_types) for p in partitions]
    if uniform:  # as the searched read hands them over: of one size
        raws = [r for r in raws if len(r) == len(raws[0])]
    passed = necessary(raws)
    assert len(passed) == len(raws)
    assert all(ok for raw, ok in zip(raws, passed) if keep(raw))


def test_the_slot_prefilter_rules_out_dates_in_c(dated_tables: dict[str, FileStoreTable]) -> None:
    """Dates (one place in every row) and short strings (inline, one length) are compared
    by ``necessary``: only those that compare as wanted pass."""
    from paimon_core.format.binary_row import serialize_row

    scan = dated_tables["ours"].new_scan()
    for days, pred in (
        ([f"2024-01-{d:02d}" for d in range(1, 31)], ("dt", "<", "2024-01-10")),
        ([f"d{d:02d}" for d in range(30)], ("dt", "in", ("d03", "d04", "d08", "x"))),
    ):
        keep = scan._partition_keeper(scan._partition_predicates(None, [pred]), None)
        necessary = getattr(keep, "necessary", None)
        assert necessary is not None
        raws = [serialize_row([d, 0], scan.partition_types) for d in days]
        assert necessary(raws) == list(map(keep, raws))
        assert sum(necessary(raws)) in (3, 9)

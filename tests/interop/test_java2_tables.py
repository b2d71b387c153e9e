"""Tables against Apache Paimon 2 (Java), both directions and mixed (``java2_matrix``): file
formats with every atomic type, FLOAT/DOUBLE keys with NaN and signed zeros, fixed and
dynamic buckets over partitions, deletion vectors, changelog producers, compaction and schema
evolution. Each case's table is written by Java 2, by us, and by both in turn; after every
action Java 2 and we read every table as Java 2 reads the one it wrote itself (and the
changelog of each action, where a case has a producer)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.format.manifest import DataFileMeta
from tests.interop import java2_matrix as matrix
from tests.interop.java2 import Java2
from tests.interop.test_java_float_keys import KEYS
from tests.interop.test_java_formats import COLUMNS, NANOS

pytestmark = pytest.mark.java2

Case = matrix.Case


def _w(rows: list[dict[str, Any]], kind: str = "+I") -> dict[str, Any]:
    return {"op": "write", "rows": [{**r, "_kind": kind} for r in rows]}


COMPACT = {"op": "compact", "full": True}


def _formats() -> dict[str, Case]:
    cases = {}
    for file_format in ("parquet", "orc", "avro"):
        columns = [*COLUMNS, NANOS] if file_format == "orc" else COLUMNS
        fields = [(name, sql) for name, sql, _, _ in columns]
        full = {name: text for name, _, text, _ in columns}
        for keyed in (False, True):
            updates = [{"k": 3, **full}]
            if keyed:
                updates.append({"k": 1, "s": "second"})
            cases[f"{file_format}_{'pk' if keyed else 'append'}"] = Case(
                fields=[("k", "INT NOT NULL"), *fields],
                primary_keys=["k"] if keyed else [],
                options={"file.format": file_format, **({"bucket": "1"} if keyed else {})},
                actions=[_w([{"k": 1, **full}, {"k": 2}]), _w(updates)],
            )
    # We read Java's TIMESTAMP(9) in Parquet (INT96), which we refuse to write.
    cases["parquet_timestamp9"] = Case(
        fields=[("k", "INT"), (NANOS[0], NANOS[1])],
        actions=[_w([{"k": 1, NANOS[0]: NANOS[2]}, {"k": 2}])],
        writers=("java",),
    )
    return cases


def _floats() -> dict[str, Case]:
    """Paimon 2 compares float keys with ``Double.compare``: NaN is one key, -0.0 and 0.0
    two, so one bucket holds them all (0.9 merged NaN with its neighbours)."""
    cases = {}
    for sql in ("DOUBLE", "FLOAT"):

        def batch(tag: str, keys: list[str] = KEYS) -> dict[str, Any]:
            return _w([{"k": k, "v": f"{tag}{k}"} for k in keys])

        actions = [batch("a"), batch("b"), batch("c", KEYS[::2]),
                   _w([{"k": "NaN"}, {"k": "-0.0"}], "-D")]  # fmt: skip
        cases[f"float_keys_{sql.lower()}"] = Case(
            fields=[("k", f"{sql} NOT NULL"), ("v", "STRING")],
            primary_keys=["k"],
            options={"bucket": "1"},
            actions=actions,
        )
        cases[f"float_keys_{sql.lower()}_dynamic_bucket"] = Case(
            fields=[("k", f"{sql} NOT NULL"), ("v", "STRING")],
            primary_keys=["k"],
            actions=actions,
        )
    rows = [
        {"a": 1.0, "z": "-0.0", "c": "0.0", "y": "0.0"},
        {"a": "NaN", "z": -2.0, "c": 0.5, "y": None},
        {"a": 3.0, "z": -1.0, "c": "NaN", "y": 1.0},
    ]
    for file_format in ("parquet", "orc", "avro"):
        cases[f"float_stats_{file_format}"] = Case(
            fields=[("a", "DOUBLE"), ("z", "DOUBLE"), ("c", "FLOAT"), ("y", "FLOAT")],
            actions=[_w(rows)],
            options={"file.format": file_format},
            writers=("java", "ours"),
        )
    for name, keys in (("float_key_stats_zero", ["-0.0", 2.0, "-Infinity"]),
                       ("float_key_stats_nan", ["NaN"])):  # fmt: skip
        cases[name] = Case(
            fields=[("k", "DOUBLE NOT NULL"), ("d", "DOUBLE")],
            primary_keys=["k"],
            options={"bucket": "1"},
            actions=[_w([{"k": k, "d": "-0.0"} for k in keys])],
            writers=("java", "ours"),
        )
    return cases


KVD = [("k", "INT NOT NULL"), ("v", "STRING"), ("dt", "STRING NOT NULL")]


def _kvd(keys: range | list[int], tag: str, parts: int = 2) -> list[dict[str, Any]]:
    return [{"k": k, "v": f"{tag}{k}", "dt": f"p{k % parts}"} for k in keys]


def _layouts() -> dict[str, Case]:
    keyed_actions = [
        _w(_kvd(range(30), "a")),
        _w(_kvd(range(20, 45), "b")),
        _w(_kvd([3, 4, 25, 40], "x"), "-D"),
        _w(_kvd(range(0, 50, 3), "c")),
    ]
    return {
        "pk_fixed_buckets": Case(
            KVD, keyed_actions, ["k", "dt"], ["dt"], {"bucket": "4"}
        ),
        "pk_dynamic_bucket": Case(
            KVD, keyed_actions, ["k", "dt"], ["dt"],
            {"bucket": "-1", "dynamic-bucket.target-row-num": "7"},
        ),
        "pk_string_keys_dynamic_bucket": Case(
            [("s", "STRING NOT NULL"), ("v", "STRING"), ("dt", "STRING NOT NULL")],
            [_w([{"s": f"key-{k:05d}", "v": t, "dt": f"p{k % 2}"} for k in ks])
             for ks, t in ((range(40), "j"), (range(30, 50), "j2"), (range(20, 60), "o"),
                           (range(55, 70), "j3"), (range(5), "o2"))],
            ["s", "dt"], ["dt"], {"bucket": "-1", "dynamic-bucket.target-row-num": "7"},
        ),
        "append_partitioned": Case(
            KVD, [_w(_kvd(range(10), "a", 3)), _w(_kvd(range(5, 15), "b", 3))], [], ["dt"]
        ),
        "append_fixed_buckets": Case(
            KVD, [_w(_kvd(range(10), "a", 3)), _w(_kvd(range(5, 15), "b", 3))], [], ["dt"],
            {"bucket": "3", "bucket-key": "k"},
        ),
    }  # fmt: skip


DV = {"deletion-vectors.enabled": "true"}


def _deletion_vectors() -> dict[str, Case]:
    kv = [("k", "INT NOT NULL"), ("v", "STRING")]
    keyed = [
        _w([{"k": k, "v": f"a{k}"} for k in range(20)]),
        _w([{"k": k, "v": f"b{k}"} for k in (1, 5, 7, 30)]),
        _w([{"k": k} for k in (2, 7, 30)], "-D"),
        _w([{"k": 5, "v": "c5"}, {"k": 2, "v": "c2"}]),
    ]
    parted = [
        _w([{"k": k, "v": f"a{k}", "dt": d} for k in range(12) for d in ("x", "y")]),
        _w([{"k": k, "v": f"b{k}", "dt": "x"} for k in range(0, 12, 3)]),
        _w([{"k": k, "dt": d} for k in (4, 5) for d in ("x", "y")], "-D"),
    ]
    appended = [
        _w(_kvd(range(6), "v")),
        _w(_kvd(range(6, 10), "v")),
        {"op": "delete", "keys": [1, 2, 7]},
        {"op": "delete", "keys": [3, 8]},
        _w(_kvd(range(10, 13), "w")),
    ]
    return {
        "dv_pk": Case(kv, keyed, ["k"], [], {"bucket": "1", **DV}),
        "dv_pk_partitioned": Case(KVD, parted, ["k", "dt"], ["dt"], {"bucket": "2", **DV}),
        "dv_append": Case(KVD, appended, [], ["dt"], DV),
        "dv_append_fixed_buckets": Case(
            KVD, appended, [], ["dt"], {"bucket": "2", "bucket-key": "k", **DV}
        ),
    }


def _changelogs() -> dict[str, Case]:
    kv = [("k", "INT NOT NULL"), ("v", "STRING")]
    actions = [
        _w([{"k": 1, "v": "a"}, {"k": 2, "v": "b"}, {"k": 1, "v": "c"}]),
        COMPACT,
        _w([{"k": 2, "v": "b"}], "-D"),
        _w([{"k": 3, "v": "d"}, {"k": 1, "v": "e"}]),
        COMPACT,
    ]
    cases = {
        f"changelog_{producer.replace('-', '_')}": Case(
            kv, actions, ["k"], [], {"bucket": "1", "changelog-producer": producer},
            changelog=True,
        )
        for producer in ("input", "lookup", "full-compaction")
    }  # fmt: skip
    cases["changelog_lookup_aggregation"] = Case(
        [("k", "INT NOT NULL"), ("n", "BIGINT")],
        [_w([{"k": k, "n": 1} for k in range(50)]),
         *(_w([{"k": 7, "n": n}]) for n in (10, 100, 1000))],
        ["k"], [],
        {"bucket": "1", "changelog-producer": "lookup", "merge-engine": "aggregation",
         "fields.n.aggregate-function": "sum"},
        changelog=True,
    )  # fmt: skip
    return cases


def _compactions() -> dict[str, Case]:
    kvd = [("k", "BIGINT NOT NULL"), ("v", "BIGINT"), ("dt", "STRING NOT NULL")]

    def batch(ks: list[int], v: int, dt: str = "a", kind: str = "+I") -> dict[str, Any]:
        return _w([{"k": k, "v": v, "dt": dt} for k in ks], kind)

    keyed = [batch([1, 2, 3], 1), batch([2, 3, 4], 2), batch([7], 5, "b"), batch([3], 9, "a", "-D")]
    return {
        "compact_deduplicate": Case(kvd, [*keyed, COMPACT], ["k", "dt"], ["dt"], {"bucket": "2"}),
        "compact_aggregation": Case(
            kvd, [*keyed, COMPACT], ["k", "dt"], ["dt"],
            {"bucket": "1", "merge-engine": "aggregation", "fields.v.aggregate-function": "sum"},
        ),
        "compact_minor": Case(
            kvd, [*keyed, {"op": "compact", "full": False}], ["k", "dt"], ["dt"],
            {"bucket": "1", "num-sorted-run.compaction-trigger": "2"},
        ),
        "compact_append": Case(
            kvd, [*keyed[:3], batch([8], 9), COMPACT], [], ["dt"], {"bucket": "1",
                                                                    "bucket-key": "k"},
        ),
    }  # fmt: skip


def _evolution() -> dict[str, Case]:
    """Every schema change taken by one side and written on by the other (``java-ours``:
    Java 2 writes after each of our ALTERs; ``ours-java``: we write after Java's)."""
    actions = [
        _w([{"k": 1, "a": "a1", "b": 10, "n": 1, "f": 0.5},
            {"k": 2, "a": "a2", "b": 20, "n": 2, "f": 1.5}]),
        {"op": "alter", "changes": [{"add": "c", "type": "STRING"}, {"rename": ["a", "a2"]}]},
        _w([{"k": 2, "a2": "x", "b": 21, "n": 3, "c": "c2"}, {"k": 3, "a2": "a3", "c": "c3"}]),
        {"op": "alter", "changes": [{"drop": "b"}, {"type": ["n", "BIGINT"]},
                                    {"type": ["f", "DOUBLE"]}]},
        _w([{"k": 1, "a2": "y", "n": 9999999999, "c": "c1", "f": 0.1}, {"k": 4, "a2": "z"}]),
        COMPACT,  # files of three schemas rewritten in the latest
    ]  # fmt: skip
    fields = [("k", "INT NOT NULL"), ("a", "STRING"), ("b", "INT"), ("n", "INT"), ("f", "FLOAT")]
    return {
        "evolution_pk": Case(fields, actions, ["k"], [], {"bucket": "1"}),
        "evolution_append": Case(fields, actions, [], [], {"bucket": "1", "bucket-key": "k"}),
    }


CASES: dict[str, Case] = {
    **_formats(), **_floats(), **_layouts(), **_deletion_vectors(), **_changelogs(),
    **_compactions(), **_evolution(),
}  # fmt: skip
PAIRS = [(name, writer) for name, case in CASES.items() for writer in case.writers]


@pytest.fixture(scope="module")
def outcomes(
    java2_runtime: Any, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, dict[tuple[str, str], matrix.Outcome]]:
    warehouse = str(tmp_path_factory.mktemp("java2-tables"))
    return warehouse, matrix.run(Java2(java2_runtime, warehouse), warehouse, CASES)


@pytest.mark.parametrize(("name", "writer"), PAIRS, ids=[f"{n}-{w}" for n, w in PAIRS])
def test_every_writer_reads_as_java2_reads_its_own(
    outcomes: tuple[str, dict[tuple[str, str], matrix.Outcome]], name: str, writer: str
) -> None:
    matrix.assert_as_reference(outcomes[1], name, writer)


def _only_file(warehouse: str, name: str) -> DataFileMeta:
    table = FileSystemCatalog(warehouse).get_table(name)
    (entry,) = table.new_scan().read_entries(table.latest_snapshot())
    return entry.file


@pytest.mark.parametrize(
    "name",
    ["float_stats_parquet", "float_stats_orc", "float_stats_avro", "float_key_stats_zero",
     "float_key_stats_nan"],
)  # fmt: skip
def test_our_float_stats_and_key_range_are_java2s(
    outcomes: tuple[str, dict[tuple[str, str], matrix.Outcome]], name: str
) -> None:
    """The same rows, one file each: NaN and signed zeros in value stats, key stats and the
    min/max key as Java 2 writes them."""
    warehouse, done = outcomes
    java = _only_file(warehouse, done[(name, "java")].table)
    ours = _only_file(warehouse, done[(name, "ours")].table)
    assert ours.value_stats_cols == java.value_stats_cols
    assert ours.value_stats == java.value_stats
    assert ours.key_stats == java.key_stats
    assert (ours.min_key, ours.max_key) == (java.min_key, java.max_key)


SQL_CASES = [
    "float_keys_double", "pk_dynamic_bucket", "dv_pk_partitioned",
    "changelog_lookup_aggregation", "evolution_pk",
]  # fmt: skip


@pytest.mark.parametrize("name", SQL_CASES)
def test_spark_sql_reads_java2s_tables_as_java2(
    outcomes: tuple[str, dict[tuple[str, str], matrix.Outcome]], spark: Any, name: str
) -> None:
    """``SELECT *`` through the SQL session reads the table Java 2 wrote as Java 2 does."""
    from sql_ext.session import PaimonSession

    warehouse, done = outcomes
    outcome = done[(name, "java")]
    session = PaimonSession(spark, warehouse=warehouse)
    got = [r.asDict() for r in session.sql(f"SELECT * FROM {outcome.table}").collect()]
    assert matrix.canonical(got) == outcome.java[-1]


def test_spark_sql_reads_java2s_nanosecond_timestamps_as_microseconds(
    outcomes: tuple[str, dict[tuple[str, str], matrix.Outcome]], spark: Any
) -> None:
    """Spark's timestamps hold microseconds: TIMESTAMP(9) reads truncated, as Paimon-Spark's
    ``Timestamp.toMicros``, not as an error."""
    from sql_ext.session import PaimonSession

    warehouse, done = outcomes
    session = PaimonSession(spark, warehouse=warehouse)
    table = done[("orc_append", "java")].table
    got = session.sql(f"SELECT k, ts9 FROM {table} ORDER BY k").collect()
    micros = dt.datetime(2024, 1, 1, 12, 0, 0, 123456)
    assert [tuple(r) for r in got] == [(1, micros), (2, None), (3, micros)]

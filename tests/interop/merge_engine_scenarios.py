"""Merge-engine scenarios run by Apache Paimon 0.9 (Java) and by us.

Each scenario is a primary-key table (schema in Paimon SQL, options) and a list of commits
(rows, and whether they are inserts or deletes). Commits repeat keys inside one write (the
writer's buffer merges them), across writes, and delete or retract.

Java's side is generated once, because a JVM per oracle call costs seconds:

    PAIMON_ORACLE=... python -m tests.interop.merge_engine_scenarios [scenario ...]

runs every scenario through paimon-oracle into ``tests/fixtures/paimon/java-0.9-merge-engines``
(the warehouse Java wrote, plus ``expected.json``: each scenario's commits and Java's read of
its own table, per snapshot, or the error Java's read fails with). The tests read Java's files
with our reader, and write the same commits with our writer for Java to read.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "paimon" / "java-0.9-merge-engines"
WAREHOUSE = FIXTURE / "warehouse"
EXPECTED = FIXTURE / "expected.json"

Row = dict[str, Any]

# fmt: off
AGG_FUNCTIONS = {
    "i_sum": "sum", "d_sum": "sum", "dec_sum": "sum", "l_prod": "product", "s_max": "max",
    "f_min": "min", "last": "last_value", "last_nn": "last_non_null_value",
    "first": "first_value", "first_nn": "first_non_null_value", "agg": "listagg",
    "b_and": "bool_and", "b_or": "bool_or",
}

_SEQ = {"schema": "k INT, v STRING, s INT"}
_PU = {"schema": "k INT, a INT, b STRING, c DOUBLE"}
_SG = {"schema": "k INT, g1 INT, a STRING, b STRING, g2 BIGINT, total BIGINT, other STRING"}
_SEQ_COMMITS = [
    {"kind": "insert", "rows": [{"k": 1, "v": "a", "s": 5}, {"k": 1, "v": "b", "s": 3},
                                {"k": 2, "v": "c", "s": 1}]},
    {"kind": "insert", "rows": [{"k": 1, "v": "old", "s": 4}, {"k": 2, "v": "null-seq"}]},
    {"kind": "delete", "rows": [{"k": 2, "v": "c", "s": 9}]},
]
_PU_DELETES = [
    {"kind": "insert", "rows": [{"k": 1, "a": 1, "b": "x"}, {"k": 2, "a": 2}]},
    {"kind": "delete", "rows": [{"k": 1, "a": 1, "b": "x"}, {"k": 3, "a": 3}]},
    {"kind": "insert", "rows": [{"k": 2, "b": "z"}]},
]
_SG_COMMITS = [
    {"kind": "insert", "rows": [
        {"k": 1, "g1": 2, "a": "a2", "b": "b2", "g2": 1, "total": 10, "other": "o"},
        {"k": 1, "g1": 1, "a": "a1", "g2": 5, "total": 1},
        {"k": 2, "g1": 1, "a": "x", "g2": 1, "total": 3}]},
    {"kind": "insert", "rows": [
        {"k": 1, "a": "ignored", "g2": 2, "total": 100},
        {"k": 2, "g1": 3, "a": "y"}]},
    {"kind": "delete", "rows": [
        {"k": 2, "g1": 4, "g2": 2, "total": 3},
        {"k": 1, "g1": 0, "g2": 6, "total": 1}]},
]

SCENARIOS: dict[str, dict[str, Any]] = {
    # deduplicate: sequence.field beats commit order (null oldest); a -D with a higher s wins.
    "dedup_seq": {**_SEQ, "options": {"sequence.field": "s"}, "commits": _SEQ_COMMITS},
    "dedup_seq_ignore_delete": {
        **_SEQ,
        "options": {"sequence.field": "s", "ignore-delete": "true"},
        "commits": _SEQ_COMMITS,
    },
    "dedup_two_sequence_fields": {
        "schema": "k INT, v STRING, s1 INT, s2 BIGINT",
        "options": {"sequence.field": "s1,s2"},
        "commits": [
            {
                "kind": "insert",
                "rows": [
                    {"k": 1, "v": "a", "s1": 1, "s2": 9},
                    {"k": 2, "v": "x", "s1": 2, "s2": 1},
                ],
            },
            {
                "kind": "insert",
                "rows": [{"k": 1, "v": "b", "s1": 2, "s2": 0}, {"k": 2, "v": "y", "s1": 2}],
            },
        ],
    },
    "partial_update": {
        **_PU,
        "options": {"merge-engine": "partial-update"},
        "commits": [
            {
                "kind": "insert",
                "rows": [{"k": 1, "a": 1}, {"k": 1, "b": "x"}, {"k": 2, "a": 2, "c": 0.5}],
            },
            {"kind": "insert", "rows": [{"k": 1, "c": 1.5}, {"k": 2, "a": 3, "b": "y"}]},
            {"kind": "insert", "rows": [{"k": 3, "b": "only"}]},
        ],
    },
    "partial_update_remove_record_on_delete": {
        **_PU,
        "options": {
            "merge-engine": "partial-update",
            "partial-update.remove-record-on-delete": "true",
        },
        "commits": _PU_DELETES,
    },
    "partial_update_ignore_delete": {
        **_PU,
        "options": {"merge-engine": "partial-update", "partial-update.ignore-delete": "true"},
        "commits": _PU_DELETES,
    },
    # Without either option a delete fails the read, in Java and in ours.
    "partial_update_refuses_delete": {
        **_PU,
        "options": {"merge-engine": "partial-update"},
        "commits": _PU_DELETES[:2],
    },
    # Group (g1 -> a, b) takes the record with the highest g1, a winning delete clears it;
    # group (g2 -> total) sums total in any order and retracts it on delete.
    "partial_update_sequence_groups_with_sum": {
        **_SG,
        "options": {
            "merge-engine": "partial-update",
            "fields.g1.sequence-group": "a,b",
            "fields.g2.sequence-group": "total",
            "fields.total.aggregate-function": "sum",
        },
        "commits": _SG_COMMITS,
    },
    "partial_update_sequence_group": {
        **_SG,
        "options": {"merge-engine": "partial-update", "fields.g1.sequence-group": "a,b"},
        "commits": _SG_COMMITS,
    },
    "partial_update_sequence_field": {
        **_SEQ,
        "options": {"merge-engine": "partial-update", "sequence.field": "s"},
        "commits": [
            {"kind": "insert", "rows": [{"k": 1, "v": "late", "s": 9}, {"k": 1, "s": 1}]},
            {"kind": "insert", "rows": [{"k": 1, "v": "early", "s": 2}]},
        ],
    },
    # i_sum reaches INT's maximum and l_prod BIGINT's without overflowing: Paimon 0.9 wraps
    # around where the latest Paimon (and we) fail the merge.
    "aggregation_every_function": {
        "schema": (
            "k INT, i_sum INT, d_sum DOUBLE, dec_sum DECIMAL(10, 2), l_prod BIGINT, "
            "s_max STRING, f_min DOUBLE, last STRING, last_nn STRING, first STRING, "
            "first_nn STRING, agg STRING, b_and BOOLEAN, b_or BOOLEAN, dflt STRING"
        ),
        "options": {
            "merge-engine": "aggregation",
            "fields.agg.list-agg-delimiter": "|",
            **{f"fields.{c}.aggregate-function": f for c, f in AGG_FUNCTIONS.items()},
        },
        "commits": [
            {
                "kind": "insert",
                "rows": [
                    {
                        "k": 1,
                        "i_sum": 2147483646,
                        "d_sum": 0.1,
                        "dec_sum": "1.10",
                        "l_prod": 3,
                        "s_max": "b",
                        "f_min": 2.5,
                        "last": "l1",
                        "last_nn": "n1",
                        "agg": "x",
                        "b_and": True,
                        "b_or": False,
                        "dflt": "d1",
                    },
                    {
                        "k": 1,
                        "i_sum": 1,
                        "d_sum": 0.2,
                        "dec_sum": "2.25",
                        "l_prod": 5,
                        "s_max": "a",
                        "f_min": -0.0,
                        "first": "f2",
                        "first_nn": "g2",
                    },
                    {"k": 2, "s_max": "z", "agg": "only"},
                ],
            },
            {
                "kind": "insert",
                "rows": [
                    {
                        "k": 1,
                        "i_sum": -5,
                        "d_sum": 0.3,
                        "dec_sum": "0.01",
                        "l_prod": -7,
                        "s_max": "c",
                        "f_min": 0.0,
                        "last": "l3",
                        "last_nn": "n3",
                        "first": "f3",
                        "first_nn": "g3",
                        "agg": "y",
                        "b_and": False,
                        "b_or": True,
                        "dflt": "d3",
                    },
                    {"k": 2, "i_sum": 4, "d_sum": 1e300, "l_prod": 9223372036854775807, "agg": ""},
                ],
            },
            {
                "kind": "insert",
                "rows": [{"k": 2, "d_sum": 1e300, "l_prod": 1, "agg": "z", "f_min": "NaN"}],
            },
        ],
    },
    # sum subtracts, product divides, last_value clears, last_non_null clears when the -D
    # carries a value; max and listagg skip retractions (ignore-retract). A key whose only
    # record is a -D (k=3) is gone: a single record is never aggregated.
    "aggregation_retractions": {
        "schema": (
            "k INT, total BIGINT, amount DOUBLE, dec DECIMAL(20, 3), prod INT, last STRING, "
            "last_nn STRING, top INT, tags STRING"
        ),
        "options": {
            "merge-engine": "aggregation",
            "fields.total.aggregate-function": "sum",
            "fields.amount.aggregate-function": "sum",
            "fields.dec.aggregate-function": "sum",
            "fields.prod.aggregate-function": "product",
            "fields.last.aggregate-function": "last_value",
            "fields.top.aggregate-function": "max",
            "fields.top.ignore-retract": "true",
            "fields.tags.aggregate-function": "listagg",
            "fields.tags.ignore-retract": "true",
        },
        "commits": [
            {
                "kind": "insert",
                "rows": [
                    {
                        "k": 1,
                        "total": 10,
                        "amount": 1.5,
                        "dec": "1.005",
                        "prod": 6,
                        "last": "a",
                        "last_nn": "a",
                        "top": 3,
                        "tags": "t1",
                    },
                    {"k": 2, "total": 1, "prod": 7, "last_nn": "keep", "top": 1},
                ],
            },
            {
                "kind": "delete",
                "rows": [
                    {
                        "k": 1,
                        "total": 4,
                        "amount": 0.5,
                        "dec": "0.005",
                        "prod": 4,
                        "last": "b",
                        "last_nn": "b",
                        "top": 9,
                        "tags": "t9",
                    },
                    {"k": 3, "total": 5},
                ],
            },
            {"kind": "delete", "rows": [{"k": 2, "total": 2, "prod": 2, "top": 0}]},
        ],
    },
    # last_value follows sequence.field, not commit order.
    "aggregation_sequence_field": {
        **_SEQ,
        "options": {
            "merge-engine": "aggregation",
            "sequence.field": "s",
            "fields.v.aggregate-function": "last_value",
        },
        "commits": [
            {"kind": "insert", "rows": [{"k": 1, "v": "late", "s": 9}, {"k": 1, "v": "x", "s": 1}]},
            {"kind": "insert", "rows": [{"k": 1, "v": "early", "s": 2}]},
        ],
    },
    # Java follows each commit with a COMPACT snapshot (lookup) and skips level 0 on read.
    "first_row": {
        "schema": "k INT, v STRING",
        "options": {"merge-engine": "first-row", "first-row.ignore-delete": "true"},
        "commits": [
            {
                "kind": "insert",
                "rows": [{"k": 1, "v": "a"}, {"k": 2, "v": "b"}, {"k": 1, "v": "dup"}],
            },
            {"kind": "insert", "rows": [{"k": 1, "v": "a2"}, {"k": 3, "v": "c"}]},
            {"kind": "delete", "rows": [{"k": 3, "v": "c"}]},
        ],
        "java_only": True,
    },
}


# fmt: on


def generate(oracle: Any, names: list[str] | None = None) -> None:
    """Run every scenario (or only ``names``, keeping the others' tables and reads) through
    Java into the fixture warehouse and ``expected.json``."""
    expected: dict[str, Any] = {}
    if names:
        expected = json.loads(EXPECTED.read_text())
        for name in names:
            shutil.rmtree(WAREHOUSE / "db.db" / name, ignore_errors=True)
    else:
        if WAREHOUSE.exists():
            shutil.rmtree(WAREHOUSE)
        WAREHOUSE.mkdir(parents=True)
    for name, scenario in SCENARIOS.items():
        if names and name not in names:
            continue
        table = f"db.{name}"
        options = [
            a
            for k, v in {"bucket": "1", **scenario["options"]}.items()
            for a in ("--option", f"{k}={v}")
        ]
        oracle(
            "create-table",
            WAREHOUSE,
            table,
            "--schema",
            scenario["schema"],
            "--primary-key",
            "k",
            *options,
        )
        for commit in scenario["commits"]:
            flag = ["--delete"] if commit["kind"] == "delete" else []
            oracle("write", WAREHOUSE, table, "--json-rows", json.dumps(commit["rows"]), *flag)
        reads: dict[str, Any] = {}
        for snapshot in oracle("snapshots", WAREHOUSE, table):
            sid = snapshot["id"]
            try:
                reads[str(sid)] = oracle("read", WAREHOUSE, table, "--snapshot", sid)
            except RuntimeError as err:
                reads[str(sid)] = {"error": str(err).splitlines()[0]}
        expected[name] = {"commits": scenario["commits"], "reads": reads}
    for lock in WAREHOUSE.rglob("*.lock"):
        lock.unlink()
    EXPECTED.write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.conftest import run_oracle

    generate(run_oracle, sys.argv[1:] or None)

"""Merge engines against Apache Paimon 2 (Java): the 0.9 scenarios (``merge_engine_scenarios``)
written by Java 2, by us, and by both in turn (``java2_matrix``); every table reads, after every
commit, as Java 2 reads the table it wrote itself, in Java 2 and here. Java 2's own reads are
Java 0.9's but where ``test_java_merge_engines.PAIMON_2`` says Paimon 2 reads otherwise."""

from __future__ import annotations

from typing import Any

import pytest

from tests.interop import java2_matrix as matrix
from tests.interop.java2 import Java2
from tests.interop.merge_engine_scenarios import SCENARIOS
from tests.interop.test_java_merge_engines import EXPECTATIONS, _as_paimon_2, _last_snapshot

pytestmark = pytest.mark.java2

KIND = {"insert": "+I", "delete": "-D"}
CASES = {
    name: matrix.Case(
        fields=matrix.split_fields(scenario["schema"], ["k"]),
        primary_keys=["k"],
        options={"bucket": "1", **scenario["options"]},
        actions=[
            {"op": "write", "rows": [{**r, "_kind": KIND[c["kind"]]} for r in c["rows"]]}
            for c in scenario["commits"]
        ],
    )
    for name, scenario in SCENARIOS.items()
}


@pytest.fixture(scope="module")
def outcomes(
    java2_runtime: Any, tmp_path_factory: pytest.TempPathFactory
) -> dict[tuple[str, str], matrix.Outcome]:
    warehouse = str(tmp_path_factory.mktemp("java2-merge-engines"))
    return matrix.run(Java2(java2_runtime, warehouse), warehouse, CASES)


@pytest.mark.parametrize("writer", matrix.WRITERS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_every_writer_reads_as_java2_reads_its_own(
    outcomes: dict[tuple[str, str], matrix.Outcome], name: str, writer: str
) -> None:
    matrix.assert_as_reference(outcomes, name, writer)


@pytest.mark.parametrize("name", sorted(CASES))
def test_java2_reads_as_java_09_but_where_paimon_2_differs(
    outcomes: dict[tuple[str, str], matrix.Outcome], name: str
) -> None:
    """The last read of Java 2's own table is the 0.9 oracle's, changed only by ``PAIMON_2``
    (so that list holds every difference these scenarios show)."""
    java2 = outcomes[(name, "java")].java[-1]
    java09 = EXPECTATIONS[name]["reads"][_last_snapshot(name)]
    if isinstance(java09, dict):
        assert isinstance(java2, str) and "Partial update can not accept delete records" in java2
        assert "Partial update can not accept delete records" in outcomes[(name, "ours")].ours[-1]
        return
    schema = matrix.to_arrow_schema_of(CASES[name].fields)
    expected = matrix.typed_rows(_as_paimon_2(name, _last_snapshot(name), java09), schema)
    assert java2 == matrix.canonical(expected)


def test_our_partial_update_delete_error_is_java2s(
    outcomes: dict[tuple[str, str], matrix.Outcome],
) -> None:
    """The refusal names every way out Paimon 2 names (on one line)."""
    java = outcomes[("partial_update_refuses_delete", "java")].java[-1]
    ours = outcomes[("partial_update_refuses_delete", "java")].ours[-1]
    assert isinstance(java, str) and isinstance(ours, str)
    message = java.split("IllegalArgumentException: ", 1)[1]
    assert ours == "MergeError: " + " ".join(message.splitlines())

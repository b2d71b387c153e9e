"""``format.external_paths``: which roots ``data-file.external-paths`` and its strategies give,
the paths of new files, and the options Java refuses."""

from __future__ import annotations

import re

import pytest

from paimon_core.exceptions import InvalidArgument
from paimon_core.format.external_paths import ExternalPaths, entropy_dirs, murmur3_32

ROOTS = "file:///tmp/a/, s3://bucket/b"


def _paths(strategy: str, **options: str) -> ExternalPaths | None:
    return ExternalPaths.of(
        {
            "data-file.external-paths": ROOTS,
            "data-file.external-paths.strategy": strategy,
            **options,
        }
    )


def test_none_and_unset_leave_files_in_the_table() -> None:
    assert ExternalPaths.of({}) is None
    assert ExternalPaths.of({"data-file.external-paths": ROOTS}) is None
    assert _paths("NONE") is None
    assert ExternalPaths.of({"data-file.external-paths.strategy": "round-robin"}) is None


def test_round_robin_takes_the_roots_in_turn_as_paimons_paths_print() -> None:
    paths = _paths("Round-Robin")
    assert paths is not None and paths.roots == ("file:/tmp/a", "s3://bucket/b")
    provider = paths.provider("dt=x/bucket-0")
    got = [provider.next_path(f"data-{i}.parquet") for i in range(4)]
    roots = [g.split("/dt=x/bucket-0/")[0] for g in got]
    assert [g.split("/dt=x/bucket-0/")[1] for g in got] == [f"data-{i}.parquet" for i in range(4)]
    assert set(roots[:2]) == set(paths.roots) and roots[2:] == roots[:2]  # in turn


def test_specific_fs_keeps_the_roots_of_its_scheme() -> None:
    paths = _paths("specific-fs", **{"data-file.external-paths.specific-fs": "S3"})
    assert paths is not None and paths.roots == ("s3://bucket/b",)
    assert paths.provider("bucket-1").next_path("f") == "s3://bucket/b/bucket-1/f"
    with pytest.raises(InvalidArgument, match="specificFS should not be null"):
        _paths("specific-fs")
    with pytest.raises(InvalidArgument, match="should not be empty"):
        _paths("specific-fs", **{"data-file.external-paths.specific-fs": "oss"})


def test_entropy_inject_hashes_the_name_into_directories() -> None:
    # Guava's murmur3_32 of "hello" (seed 0), and of "" (Paimon's entropy hash).
    assert murmur3_32(b"hello") == 0x248BFA47
    assert murmur3_32(b"") == 0
    dirs = entropy_dirs("data-1.parquet")
    assert re.fullmatch(r"[01]{4}/[01]{4}/[01]{4}/[01]{8}", dirs)
    assert dirs == entropy_dirs("data-1.parquet") != entropy_dirs("data-2.parquet")
    bits = format(murmur3_32(b"data-1.parquet"), "032b")[-20:]
    assert dirs.replace("/", "") == bits
    paths = _paths("entropy-inject")
    assert paths is not None
    provider = paths.provider("bucket-0")
    assert provider.next_path("data-1.parquet") == f"s3://bucket/b/bucket-0/{dirs}/data-1.parquet"
    assert provider.next_path("data-1.parquet").startswith("file:/tmp/a/bucket-0/")


def test_weight_robin_draws_by_weight() -> None:
    paths = _paths("weight-robin", **{"data-file.external-paths.weights": "1, 1000000"})
    assert paths is not None and paths.weights == (1, 1000000)
    provider = paths.provider("bucket-0")
    drawn = [provider.next_path("f").split("/bucket-0")[0] for _ in range(50)]
    assert drawn.count("s3://bucket/b") >= 45
    for weights, message in (
        ("1,0", "Weight must be positive"),
        ("1", "number of external paths and weights"),
        ("x", r"Invalid 'data-file\.external-paths\.weights'"),
    ):
        with pytest.raises(InvalidArgument, match=message):
            _paths("weight-robin", **{"data-file.external-paths.weights": weights})
    unweighted = _paths("weight-robin")
    assert unweighted is not None
    provider = unweighted.provider("bucket-0")
    first, second = provider.next_path("f"), provider.next_path("f")
    assert first != second  # round-robin without weights


def test_bad_options_name_the_option() -> None:
    with pytest.raises(InvalidArgument, match=r"Invalid 'data-file\.external-paths\.strategy'"):
        _paths("random")
    with pytest.raises(InvalidArgument, match="scheme should not be null: /tmp/x"):
        ExternalPaths.of(
            {
                "data-file.external-paths": "/tmp/x",
                "data-file.external-paths.strategy": "round-robin",
            }
        )

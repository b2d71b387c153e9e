"""Java's ``MergeTreeSplitGenerator.splitForBatch``: which files of a bucket make a split, and
which splits Paimon reads unmerged; ``IntervalPartition``'s sections and runs."""

from __future__ import annotations

from paimon_core.format.binary_row import serialize_row
from paimon_core.format.manifest import DataFileMeta
from paimon_core.format.types import DataType, parse_data_type
from paimon_core.operations.split_generator import (
    interval_partition,
    interval_partition_indices,
    key_order,
    merge_sections,
    split_for_batch,
)

INT: DataType = parse_data_type("INT")
ORDER = key_order([INT])
MB = 2**20


def _file(name: str, low: int, high: int, level: int = 0, size: int = MB, deletes: int | None = 0):
    return DataFileMeta(
        name,
        size,
        1,
        serialize_row([low], [INT]),
        serialize_row([high], [INT]),
        None,  # type: ignore[arg-type]
        None,  # type: ignore[arg-type]
        0,
        0,
        0,
        level,
        delete_row_count=deletes,
    )


def _names(groups) -> list[tuple[list[str], bool]]:
    return [([f.file_name for f in g.files], g.raw_convertible) for g in groups]


def test_interval_partition_as_java() -> None:
    files = [_file("c", 5, 180), _file("a", 1, 2), _file("e", 200, 600), _file("b", 3, 4)]
    files += [_file("d", 5, 190), _file("f", 210, 700)]
    sections = interval_partition(files, ORDER)
    assert [[[f.file_name for f in run] for run in s] for s in sections] == [
        [["a"]],
        [["b"]],
        [["c"], ["d"]],
        [["e"], ["f"]],
    ]
    runs = interval_partition([_file("x", 1, 3), _file("y", 2, 9), _file("z", 4, 5)], ORDER)
    assert [[[f.file_name for f in run] for run in s] for s in runs] == [[["x", "z"], ["y"]]]


def test_files_above_level_0_on_one_level_are_read_unmerged() -> None:
    files = [_file("a", 1, 5, 5), _file("b", 6, 9, 5)]
    assert _names(split_for_batch(files, ORDER, deletion_vectors=False, first_row=False)) == [
        (["a", "b"], True)
    ]
    two_levels = [_file("a", 1, 5, 4), _file("b", 2, 9, 5)]
    plain = split_for_batch(two_levels, ORDER, deletion_vectors=False, first_row=False)
    assert _names(plain) == [(["a", "b"], False)]  # overlapping: one section, merged
    for flags in ({"deletion_vectors": True, "first_row": False}, {"first_row": True}):
        flags.setdefault("deletion_vectors", False)
        assert _names(split_for_batch(two_levels, ORDER, **flags)) == [(["a", "b"], True)]


def test_level_0_sections_are_unmerged_only_alone_in_their_split() -> None:
    files = [_file("a", 1, 3), _file("b", 5, 9)]
    small = split_for_batch(files, ORDER, deletion_vectors=False, first_row=False)
    assert _names(small) == [(["a", "b"], False)]  # both sections packed into one split
    big = [_file("a", 1, 3, size=100 * MB), _file("b", 5, 9, size=100 * MB)]
    split = split_for_batch(big, ORDER, deletion_vectors=False, first_row=False)
    assert _names(split) == [(["a"], True), (["b"], True)]
    assert _names(
        split_for_batch([_file("a", 1, 3)], ORDER, deletion_vectors=False, first_row=False)
    ) == [(["a"], True)]


def test_retractions_need_merging() -> None:
    retracting = [_file("a", 1, 3, 5, deletes=2)]
    groups = split_for_batch(retracting, ORDER, deletion_vectors=True, first_row=False)
    assert _names(groups) == [(["a"], False)]
    unknown = [_file("a", 1, 3, 5, deletes=None), _file("b", 4, 6, 5)]  # an old file: none
    groups = split_for_batch(unknown, ORDER, deletion_vectors=False, first_row=False)
    assert _names(groups) == [(["a", "b"], True)]


def test_key_order_is_javas() -> None:
    order = key_order([parse_data_type("DOUBLE"), parse_data_type("STRING")])
    keys = [(-0.0, "b"), (0.0, "a"), (float("nan"), "a"), (float("inf"), "z"), (-1.0, "é")]
    encoded = [
        serialize_row(list(k), [parse_data_type("DOUBLE"), parse_data_type("STRING")]) for k in keys
    ]
    ranked = sorted(range(len(keys)), key=lambda i: order(encoded[i]))
    assert [keys[i][1] for i in ranked] == ["é", "b", "a", "z", "a"]


def test_equal_files_make_runs_in_javas_priority_queue_order() -> None:
    """Files of one key range: each starts a run, and the runs come out in the array order of
    Java's ``PriorityQueue`` (the polled run goes back after the new one), which is the
    reader order of Java's merge; a read partitions the split generator's order once more."""
    a, b, c = _file("a", 0, 9), _file("b", 0, 9), _file("c", 0, 9)
    assert interval_partition_indices([a, b], ORDER) == [[[1], [0]]]
    assert merge_sections([a, b], ORDER, split=False) == [[[1], [0]]]
    assert merge_sections([a, b], ORDER, split=True) == [[[0], [1]]]
    # offer [a]; poll [a], offer [b], [a]: [b, a]; poll [b] (sift down: [a]), offer [c], [b]
    assert interval_partition_indices([a, b, c], ORDER) == [[[0], [2], [1]]]
    # A file after a run's end joins the run the queue polls first (the smallest end).
    x, y, z = _file("x", 0, 5), _file("y", 0, 3), _file("z", 4, 8)
    assert interval_partition_indices([x, y, z], ORDER) == [[[0], [1, 2]]]

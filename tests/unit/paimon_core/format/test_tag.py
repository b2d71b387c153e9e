"""Tag files: serde with and without retention (Java TagTest, pypaimon golden), TagManager."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import replace
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from paimon_core.exceptions import CorruptMetadata, TagNotFound
from paimon_core.format.snapshot import snapshot_from_json, snapshot_to_json
from paimon_core.format.tag import (
    TAG_PREFIX,
    Tag,
    TagManager,
    duration_from_json,
    duration_to_json,
    local_date_time_from_json,
    local_date_time_to_json,
    tag_from_json,
    tag_to_json,
)
from paimon_core.io.fileio import LocalFileIO
from tests.unit.paimon_core.helpers import CORRUPT_TAG_JSON, corrupt_file

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "paimon"
APP = FIXTURES / "pypaimon-2.1" / "app"
JAVA_PLAIN = (FIXTURES / "java/TagTest-plain").read_text()
JAVA_TTL = (FIXTURES / "java/TagTest-ttl").read_text()


def test_java_tag_without_retention_is_the_snapshot_json() -> None:
    tag = tag_from_json(JAVA_PLAIN)
    assert tag.tag_create_time is None and tag.tag_time_retained is None
    assert tag_to_json(tag) == JAVA_PLAIN == snapshot_to_json(tag.snapshot)


def test_java_tag_with_retention() -> None:
    tag = tag_from_json(JAVA_TTL)
    # Python keeps microseconds: Java's 123456789 ns read back as 123456 us.
    assert tag.tag_create_time == datetime(1969, 1, 1, 0, 0, 0, 123456)
    assert tag.tag_time_retained == timedelta(seconds=5)
    assert tag.snapshot == tag_from_json(JAVA_PLAIN).snapshot
    assert tag_to_json(tag) == JAVA_TTL.replace("123456789", "123456000")
    made = Tag(tag.snapshot, datetime(1969, 1, 1, 0, 0, 0, 123456), timedelta(seconds=5))
    assert made == tag


def test_retention_without_create_time_and_create_time_without_retention() -> None:
    snapshot = tag_from_json(JAVA_PLAIN).snapshot
    only_create = Tag(snapshot, tag_create_time=datetime(2024, 1, 1))
    assert tag_to_json(only_create) == JAVA_PLAIN
    only_ttl = tag_to_json(Tag(snapshot, tag_time_retained=timedelta(hours=1)))
    assert only_ttl.endswith('"deltaRecordCount" : 0,\n  "tagTimeRetained" : 3600.000000000\n}')


@pytest.mark.parametrize(
    ("value", "array"),
    [
        (datetime(2024, 1, 2, 3, 4), [2024, 1, 2, 3, 4]),
        (datetime(2024, 1, 2, 3, 4, 5), [2024, 1, 2, 3, 4, 5]),
        (datetime(2024, 1, 2, 3, 4, 0, 1), [2024, 1, 2, 3, 4, 0, 1000]),
        (datetime(2026, 11, 22, 10, 59, 34, 108675), [2026, 11, 22, 10, 59, 34, 108675000]),
    ],
)
def test_local_date_time_arrays_drop_trailing_zeros(value: datetime, array: list[int]) -> None:
    assert local_date_time_to_json(value) == array
    assert local_date_time_from_json(array) == value


def test_local_date_time_accepts_iso_strings() -> None:
    assert local_date_time_from_json("2024-05-06T07:08:09.123456789") == datetime(
        2024, 5, 6, 7, 8, 9, 123456
    )
    assert local_date_time_from_json("2024-05-06T07:08") == datetime(2024, 5, 6, 7, 8)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (timedelta(seconds=5), "5.000000000"),
        (timedelta(days=1), "86400.000000000"),
        (timedelta(seconds=1, milliseconds=500), "1.500000000"),
        (timedelta(microseconds=1), "0.000001000"),
        (timedelta(0), "0.000000000"),
    ],
)
def test_duration_as_decimal_seconds(value: timedelta, text: str) -> None:
    assert duration_to_json(value) == text
    assert duration_from_json(Decimal(text)) == value


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (86400.0, timedelta(days=1)),  # pypaimon
        (5, timedelta(seconds=5)),
        ("5.000000000", timedelta(seconds=5)),
        ("PT24H", timedelta(days=1)),
        ("PT1H30M", timedelta(hours=1, minutes=30)),
        ("PT0.5S", timedelta(milliseconds=500)),
        ("P2DT1S", timedelta(days=2, seconds=1)),
    ],
)
def test_duration_reader_forms(raw: object, expected: timedelta) -> None:
    assert duration_from_json(raw) == expected


def test_pypaimon_golden_tags() -> None:
    snapshots = {
        i: snapshot_from_json((APP / f"snapshot/snapshot-{i}").read_text()) for i in (1, 2, 3)
    }
    plain = tag_from_json((APP / "tag/tag-t1").read_text())
    assert plain.snapshot == snapshots[1] and plain.tag_time_retained is None
    assert tag_to_json(plain) == snapshot_to_json(snapshots[1])

    text = (APP / "tag/tag-t3").read_text()
    ttl = tag_from_json(text)
    assert ttl.snapshot == snapshots[2]
    assert ttl.tag_create_time == datetime(2026, 11, 22, 10, 59, 34, 108675)
    assert ttl.tag_time_retained == timedelta(days=1)
    rewritten = tag_to_json(ttl)
    assert json.loads(rewritten) == json.loads(text)  # 86400.000000000 == 86400.0
    assert rewritten.endswith(
        '  "tagCreateTime" : [ 2026, 11, 22, 10, 59, 34, 108675000 ],\n'
        '  "tagTimeRetained" : 86400.000000000\n}'
    )
    assert tag_from_json(rewritten) == ttl


def test_expiry() -> None:
    snapshot = tag_from_json(JAVA_PLAIN).snapshot
    tag = Tag(snapshot, datetime(2024, 1, 1), timedelta(hours=1))
    assert not tag.is_expired(datetime(2024, 1, 1, 1, 0))
    assert tag.is_expired(datetime(2024, 1, 1, 1, 0, 1))
    assert not Tag(snapshot).is_expired(datetime(2999, 1, 1))


def _manager(tmp_path: Path) -> TagManager:
    shutil.copytree(APP, tmp_path / "app")
    return TagManager(LocalFileIO(), str(tmp_path / "app"))


def test_manager_lists_pypaimon_tags_by_snapshot_then_name(tmp_path: Path) -> None:
    manager = _manager(tmp_path)
    (Path(manager.tag_dir) / ".tag-t9.0b1c.tmp").write_text("{}")
    (Path(manager.tag_dir) / "README").write_text("not a tag")
    tags = manager.list_tags()
    assert list(tags) == ["t1", "t3", "t2"]
    assert [t.snapshot_id for t in tags.values()] == [1, 2, 3]
    assert manager.tag_names() == ["t1", "t2", "t3"]
    assert manager.tagged_snapshot_ids() == [1, 2, 3]
    assert manager.tag_path("t1") == f"{tmp_path}/app/tag/{TAG_PREFIX}t1"


def test_manager_write_get_replace_delete(tmp_path: Path) -> None:
    manager = _manager(tmp_path)
    with pytest.raises(TagNotFound):
        manager.get("nope")
    assert manager.try_get("nope") is None and not manager.tag_exists("nope")

    snapshot = manager.get("t2").snapshot
    manager.write_tag("a", Tag(snapshot))
    manager.write_tag("b", Tag(snapshot))
    assert Path(manager.tag_path("a")).read_text() == snapshot_to_json(snapshot)
    assert list(manager.list_tags()) == ["t1", "t3", "a", "b", "t2"]

    replaced = Tag(manager.get("t1").snapshot, datetime(2025, 1, 1), timedelta(days=2))
    manager.write_tag("a", replaced)
    assert manager.get("a") == replaced
    assert manager.tagged_snapshot_ids() == [1, 2, 3]

    assert manager.delete_tag_file("a") is True
    assert manager.delete_tag_file("a") is False
    assert not manager.tag_exists("a")
    assert manager.tag_exists("b")


def test_manager_without_tags(tmp_path: Path) -> None:
    manager = TagManager(LocalFileIO(), str(tmp_path / "t"))
    assert manager.list_tags() == {} and manager.tagged_snapshot_ids() == []
    branch = TagManager(LocalFileIO(), str(tmp_path / "t"), branch="b1")
    assert branch.tag_path("x") == f"{tmp_path}/t/branch/branch-b1/tag/tag-x"


@pytest.mark.parametrize("how", CORRUPT_TAG_JSON)
def test_corrupt_tag_file_is_a_clear_error_naming_it(tmp_path: Path, how: str) -> None:
    manager = _manager(tmp_path)
    path = manager.tag_path("t2")
    corrupt_file(path, how, CORRUPT_TAG_JSON)
    before = Path(path).read_bytes()
    for read in (
        lambda: manager.get("t2"),
        lambda: manager.try_get("t2"),
        manager.list_tags,
        manager.tagged_snapshot_ids,
    ):
        with pytest.raises(CorruptMetadata, match=f"^Tag file {re.escape(path)} is corrupt: .+$"):
            read()
    assert Path(path).read_bytes() == before
    assert manager.get("t1").snapshot_id == 1


def test_a_tag_may_hold_any_snapshot_id_but_needs_its_manifest_lists(tmp_path: Path) -> None:
    manager = _manager(tmp_path)
    manager.write_tag("t9", Tag(replace(tag_from_json(JAVA_PLAIN).snapshot, snapshot_id=7)))
    with pytest.raises(CorruptMetadata, match="'baseManifestList' is null"):
        manager.get("t9")
    good = manager.get("t1").snapshot
    manager.write_tag("t9", Tag(replace(good, snapshot_id=7)))
    assert manager.get("t9").snapshot_id == 7

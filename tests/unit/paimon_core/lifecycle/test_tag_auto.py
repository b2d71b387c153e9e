"""Automatic tags: period names, process-time/watermark/batch modes, retention, TTL expiry."""

from __future__ import annotations

import os
import time
import types
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pyarrow as pa
import pytest

import paimon_core.operations.commit as commit_module
from paimon_core.catalog import FileSystemCatalog
from paimon_core.exceptions import InvalidArgument
from paimon_core.format.options import CoreOptions
from paimon_core.format.schema import schema_to_json
from paimon_core.lifecycle import tag_auto
from paimon_core.lifecycle import tag_management as tm
from paimon_core.table import FileStoreTable
from tests.interop.helpers import pypaimon_read, rows

SCHEMA = pa.schema([("k", pa.int64()), ("v", pa.string())])
UTC_ZONE = {"sink.process-time-zone": "UTC"}


def _ms(*parts: int) -> int:
    return int(datetime(*parts, tzinfo=UTC).timestamp() * 1000)


def _table(warehouse: str, name: str = "t", **options: str) -> FileStoreTable:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    return catalog.create_table(f"db.{name}", SCHEMA, options={**UTC_ZONE, **options})


@pytest.fixture
def commit_at(monkeypatch: pytest.MonkeyPatch) -> Any:
    """``commit_at(table, millis, k)`` commits row k with that commit time."""
    clock = types.SimpleNamespace(millis=None)
    fake = types.SimpleNamespace(**{n: getattr(time, n) for n in dir(time) if n[0] != "_"})
    fake.time = lambda: time.time() if clock.millis is None else clock.millis / 1000
    monkeypatch.setattr(commit_module, "time", fake)

    def commit(table: FileStoreTable, millis: int, k: int = 0) -> int:
        clock.millis = millis
        snapshot_id = table.write_arrow(pa.table({"k": [k], "v": [f"v{k}"]}, schema=SCHEMA))
        assert snapshot_id is not None
        return snapshot_id

    return commit


def _tags(table: FileStoreTable) -> dict[str, int]:
    return {name: tag.snapshot_id for name, tag in tm.list_tags(table).items()}


# ------------------------------------------------------------------- period handlers


@pytest.mark.parametrize(
    ("options", "time", "name"),
    [
        ({}, datetime(2024, 1, 2, 10, 30), "2024-01-01"),
        ({"tag.period-formatter": "without_dashes"}, datetime(2024, 1, 2, 0, 0), "20240101"),
        ({"tag.creation-period": "hourly"}, datetime(2024, 1, 2, 10, 30), "2024-01-02 09"),
        (
            {"tag.creation-period": "hourly", "tag.period-formatter": "without_dashes"},
            datetime(2024, 1, 2, 0, 5),
            "20240101 23",
        ),
        (
            {
                "tag.creation-period": "hourly",
                "tag.period-formatter": "without_dashes_and_spaces",
            },
            datetime(2024, 1, 2, 10, 30),
            "2024010209",
        ),
        (
            {"tag.creation-period": "two-hours", "tag.period-formatter": "without_dashes"},
            datetime(2024, 1, 2, 11, 30),
            "2024-01-02 08",
        ),
        ({"tag.creation-period-duration": "30 min"}, datetime(2024, 1, 2, 10, 40), "202401021000"),
    ],
)
def test_period_handler_names(options: dict[str, str], time: datetime, name: str) -> None:
    handler = tag_auto.period_handler(CoreOptions(options))
    start = handler.normalize_to_previous_tag(time)
    assert handler.time_to_tag(start) == name
    assert handler.tag_to_time(name) == start and handler.is_auto_tag(name)
    assert handler.next_tag_time(start) - start == handler.period
    assert handler.previous_tag_time(start) == start - handler.period


def test_auto_tag_names_are_strict() -> None:
    daily = tag_auto.period_handler(CoreOptions({}))
    assert daily.is_auto_tag("2024-02-29") and daily.is_auto_tag("2024-01-01 10")  # as Paimon
    for name in ("2023-02-29", "2024-13-01", "2024-1-01", "20240101", "x", " 2024-01-01"):
        assert not daily.is_auto_tag(name)
    hourly = tag_auto.period_handler(CoreOptions({"tag.creation-period": "hourly"}))
    assert hourly.is_auto_tag("2024-01-01 23") and not hourly.is_auto_tag("2024-01-01 24")
    assert not hourly.is_auto_tag("2024-01-01")
    assert tag_auto.auto_tag_period_handler(CoreOptions({})) is None
    daily.validate_delay(timedelta(hours=23))
    with pytest.raises(InvalidArgument, match=r"tag\.creation-delay"):
        daily.validate_delay(timedelta(days=1))


def test_commits_of_a_table_run_expiry_then_auto_tags(warehouse: str) -> None:
    from paimon_core.lifecycle.expire import expire_after_commit

    table = _table(warehouse)
    hooks = table.new_commit()._post_commit
    assert hooks.index(expire_after_commit) < hooks.index(tag_auto.auto_create_tags)


# --------------------------------------------------------------------- process-time


def test_daily_process_time_tags(warehouse: str, commit_at: Any) -> None:
    table = _table(warehouse, **{"tag.automatic-creation": "process-time"})
    commit_at(table, _ms(2024, 1, 2, 10), 1)
    assert _tags(table) == {"2024-01-01": 1}  # the first snapshot gets the previous period
    commit_at(table, _ms(2024, 1, 2, 20), 2)
    commit_at(table, _ms(2024, 1, 3, 0, 30), 3)
    commit_at(table, _ms(2024, 1, 3, 5), 4)
    commit_at(table, _ms(2024, 1, 6, 1), 5)
    assert _tags(table) == {"2024-01-01": 1, "2024-01-02": 3, "2024-01-05": 5}
    assert table.tag_manager.get("2024-01-02").tag_time_retained is None
    tagged = table.copy({"scan.tag-name": "2024-01-02"}).to_arrow()
    assert sorted(tagged["k"].to_pylist()) == [1, 2, 3]


def test_automatic_completion_fills_skipped_periods_one_per_snapshot(
    warehouse: str, commit_at: Any
) -> None:
    table = _table(
        warehouse,
        **{"tag.automatic-creation": "process-time", "tag.automatic-completion": "true"},
    )
    commit_at(table, _ms(2024, 1, 2, 10), 1)
    commit_at(table, _ms(2024, 1, 6, 1), 2)
    commit_at(table, _ms(2024, 1, 6, 2), 3)
    commit_at(table, _ms(2024, 1, 6, 3), 4)
    assert _tags(table) == {"2024-01-01": 1, "2024-01-02": 2, "2024-01-03": 3, "2024-01-04": 4}


def test_creation_delay(warehouse: str, commit_at: Any) -> None:
    table = _table(
        warehouse, **{"tag.automatic-creation": "process-time", "tag.creation-delay": "1 h"}
    )
    commit_at(table, _ms(2024, 1, 2, 10), 1)
    commit_at(table, _ms(2024, 1, 3, 0, 30), 2)
    assert _tags(table) == {"2024-01-01": 1}
    commit_at(table, _ms(2024, 1, 3, 1, 0), 3)
    assert _tags(table) == {"2024-01-01": 1, "2024-01-02": 3}


def test_bad_delay_is_logged_and_the_commit_succeeds(
    warehouse: str, commit_at: Any, caplog: pytest.LogCaptureFixture
) -> None:
    table = _table(
        warehouse,
        **{
            "tag.automatic-creation": "process-time",
            "tag.creation-period": "hourly",
            "tag.creation-delay": "2 h",
        },
    )
    assert commit_at(table, _ms(2024, 1, 2, 10), 1) == 1
    assert _tags(table) == {}
    assert "Tag maintenance after commit of snapshot 1 failed" in caplog.text
    with pytest.raises(InvalidArgument):
        tag_auto.run_tag_auto_creation(table)


def test_hourly_tags_and_num_retained_max_keeps_manual_tags(warehouse: str, commit_at: Any) -> None:
    table = _table(
        warehouse,
        **{
            "tag.automatic-creation": "process-time",
            "tag.creation-period": "hourly",
            "tag.period-formatter": "without_dashes_and_spaces",
            "tag.num-retained-max": "2",
        },
    )
    commit_at(table, _ms(2024, 1, 2, 10, 5), 1)
    tm.create_tag(table, "manual")
    for i, hour in enumerate((11, 12, 13), start=2):
        commit_at(table, _ms(2024, 1, 2, hour, 5), i)
    assert _tags(table) == {"2024010211": 3, "2024010212": 4, "manual": 1}


def test_default_time_retained_uses_the_clock_and_ttl_expiry_runs_on_commit(
    warehouse: str, commit_at: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = datetime(2024, 1, 2, 11)
    monkeypatch.setattr(tag_auto, "clock", lambda: now)
    table = _table(
        warehouse,
        **{"tag.automatic-creation": "process-time", "tag.default-time-retained": "1 d"},
    )
    commit_at(table, _ms(2024, 1, 2, 10), 1)
    tag = table.tag_manager.get("2024-01-01")
    assert (tag.tag_create_time, tag.tag_time_retained) == (now, timedelta(days=1))
    tm.create_tag(table, "manual-ttl", time_retained="2 h", now=now)
    tm.create_tag(table, "manual", default_retention=False)
    now = datetime(2024, 1, 2, 14)
    commit_at(table, _ms(2024, 1, 2, 12), 2)
    assert _tags(table) == {"2024-01-01": 1, "manual": 1}
    now = datetime(2024, 1, 3, 12)
    commit_at(table, _ms(2024, 1, 2, 13), 3)
    assert _tags(table) == {"manual": 1}


def test_ttl_expiry_on_commit_without_auto_creation_can_be_disabled(
    warehouse: str, commit_at: Any
) -> None:
    old = datetime(2000, 1, 1)
    off = _table(warehouse, "off", **{"tag.time-expire-enabled": "false"})
    on = _table(warehouse, "on")
    for table in (off, on):
        commit_at(table, _ms(2024, 1, 2, 10), 1)
        tm.create_tag(table, "ttl", time_retained="1 h", now=old)
        commit_at(table, _ms(2024, 1, 2, 11), 2)
    assert _tags(off) == {"ttl": 1}
    assert _tags(on) == {}


def test_write_only_tables_get_no_auto_tags(warehouse: str, commit_at: Any) -> None:
    table = _table(warehouse, **{"tag.automatic-creation": "process-time", "write-only": "true"})
    commit_at(table, _ms(2024, 1, 2, 10), 1)
    assert _tags(table) == {}
    assert tag_auto.run_tag_maintenance(table) == ["2024-01-01"]


# ------------------------------------------------------------------------ watermark


def test_watermark_tags_in_the_watermark_time_zone(warehouse: str) -> None:
    table = _table(
        warehouse,
        **{"tag.automatic-creation": "watermark", "sink.watermark-time-zone": "Asia/Shanghai"},
    )
    table.write_arrow(pa.table({"k": [1], "v": ["a"]}, schema=SCHEMA))
    assert _tags(table) == {}  # no watermark: no tag
    manager = table.snapshot_manager
    base = manager.snapshot(1)
    marks = [-(2**63), _ms(2024, 1, 2, 10), _ms(2024, 1, 2, 15, 59), _ms(2024, 1, 2, 16)]
    for i, mark in enumerate(marks, start=2):
        assert manager.commit(replace(base, snapshot_id=i, watermark=mark))
    assert tag_auto.run_tag_auto_creation(table) == ["2024-01-01", "2024-01-02"]
    assert _tags(table) == {"2024-01-01": 3, "2024-01-02": 5}  # 16:00 UTC is 00:00 +08
    assert tag_auto.run_tag_auto_creation(table) == []


# ---------------------------------------------------------------------------- batch


def test_batch_tags_are_replaced_per_day_and_retained_over_all_tags(
    warehouse: str, commit_at: Any
) -> None:
    table = _table(warehouse, **{"tag.automatic-creation": "batch", "tag.num-retained-max": "2"})
    commit_at(table, _ms(2024, 1, 2, 10), 1)
    assert _tags(table) == {"batch-write-2024-01-02": 1}
    tm.create_tag(table, "manual")
    commit_at(table, _ms(2024, 1, 2, 23, 59), 2)
    assert _tags(table) == {"batch-write-2024-01-02": 2, "manual": 1}
    commit_at(table, _ms(2024, 1, 3, 0, 1), 3)
    assert _tags(table) == {"batch-write-2024-01-02": 2, "batch-write-2024-01-03": 3}
    tagged = table.copy({"scan.tag-name": "batch-write-2024-01-02"}).to_arrow()
    assert sorted(tagged["k"].to_pylist()) == [1, 2]


def test_batch_customized_name_and_write_only(warehouse: str, commit_at: Any) -> None:
    table = _table(
        warehouse,
        **{
            "tag.automatic-creation": "batch",
            "tag.batch.customized-name": "nightly",
            "tag.default-time-retained": "3 d",
            "write-only": "true",
        },
    )
    commit_at(table, _ms(2024, 1, 2, 10), 1)
    commit_at(table, _ms(2024, 1, 5, 10), 2)
    assert _tags(table) == {"nightly": 2}
    assert table.tag_manager.get("nightly").tag_time_retained == timedelta(days=3)


def test_a_stored_customized_name_leaving_the_tag_directory_makes_no_tag(
    warehouse: str, commit_at: Any
) -> None:
    """Such a name is refused when set; one stored by hand fails the batch tag (logged, as
    every post-commit failure) without touching anything: the commit itself stands."""
    table = _table(warehouse, **{"tag.automatic-creation": "batch"})
    name = "../../snapshot/snapshot-1"
    options = {**table.schema.options, "tag.batch.customized-name": name}
    table.file_io.write_text(
        table.schema_manager.schema_path(1),
        schema_to_json(replace(table.schema, schema_id=1, options=options)),
    )
    table = FileSystemCatalog(warehouse).get_table("db.t")
    commit_at(table, _ms(2024, 1, 2, 10), 1)
    commit_at(table, _ms(2024, 1, 2, 11), 2)
    assert _tags(table) == {}
    assert table.snapshot_manager.list_snapshot_ids() == [1, 2]
    assert "tag" not in os.listdir(table.path)


def test_no_tags_without_auto_creation(warehouse: str, commit_at: Any) -> None:
    table = _table(warehouse)
    for day in (2, 3, 4):
        commit_at(table, _ms(2024, 1, day, 10), day)
    assert _tags(table) == {}
    assert tag_auto.create_batch_tag(_table(warehouse, "empty")) is None


# ------------------------------------------------------------------------- interop


def test_pypaimon_reads_auto_tags(warehouse: str, commit_at: Any) -> None:
    table = _table(warehouse, **{"tag.automatic-creation": "process-time"})
    commit_at(table, _ms(2024, 1, 2, 10), 1)
    commit_at(table, _ms(2024, 1, 3, 10), 2)
    commit_at(table, _ms(2024, 1, 3, 11), 3)
    assert _tags(table) == {"2024-01-01": 1, "2024-01-02": 2}
    result = pypaimon_read(warehouse, "db.t", {"scan.tag-name": "2024-01-02"})
    assert rows(result, ["k"]) == [(1,), (2,)]


@pytest.mark.oracle
def test_java_reads_auto_tags(warehouse: str, commit_at: Any, oracle: Any) -> None:
    table = _table(warehouse, **{"tag.automatic-creation": "batch"})
    commit_at(table, _ms(2024, 1, 2, 10), 1)
    commit_at(table, _ms(2024, 1, 3, 10), 2)
    assert oracle("tags", warehouse, "db.t") == {
        "batch-write-2024-01-02": 1,
        "batch-write-2024-01-03": 2,
    }
    tagged = oracle("read", warehouse, "db.t", "--tag", "batch-write-2024-01-02")
    assert [r["k"] for r in tagged] == [1]

"""Tags, expiry, rollback and orphan removal across implementations, with pypaimon 2.1.

test_tag_management.py and test_rollback.py check plain tags and a rollback to a live tag.
Here the lifecycle goes further: snapshots that tags hold are expired, rollbacks restore an
expired tag's snapshot, primary-key tables with dynamic buckets (index files) are included,
and pypaimon's own tags, tag deletion and rollback (which leave files behind) meet our
expiry and orphan removal. pypaimon reads with ``scan.tag-name``/``scan.snapshot-id``.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pyarrow as pa
import pytest

from paimon_core.catalog import FileSystemCatalog
from paimon_core.lifecycle import rollback as rb
from paimon_core.lifecycle import tag_management as tm
from paimon_core.lifecycle.expire import expire_snapshots
from paimon_core.table import FileStoreTable
from tests.interop.helpers import pypaimon_commit, pypaimon_read, pypaimon_write, rows
from tests.unit.paimon_core.lifecycle.test_lifecycle_state_machine import find_orphans

SCHEMA = pa.schema(
    [
        pa.field("k", pa.int64(), nullable=False),
        ("v", pa.string()),
        pa.field("dt", pa.string(), nullable=False),
    ]
)
COLUMNS = ["k", "v", "dt"]
KINDS = {
    "append": {"partition_keys": ["dt"]},
    "pk-dynamic-bucket": {"partition_keys": ["dt"], "primary_keys": ["k", "dt"]},
}
EVERYTHING_OLD = 2**62


def _batch(dt: str, *ks: int) -> pa.Table:
    return pa.table(
        {"k": list(ks), "v": [f"v{k}" for k in ks], "dt": [dt] * len(ks)}, schema=SCHEMA
    )


def _ours(warehouse: str, kind: str) -> FileStoreTable:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    return catalog.create_table("db.t", SCHEMA, options={"write-only": "true"}, **KINDS[kind])


def _theirs(warehouse: str) -> Any:
    from pypaimon import CatalogFactory

    return CatalogFactory.create({"warehouse": warehouse}).get_table("db.t")


def _read_ours(warehouse: str, **options: str) -> list[tuple]:
    table = FileSystemCatalog(warehouse).get_table("db.t")
    return rows(table.copy(options).to_arrow(), COLUMNS)


def _read_theirs(warehouse: str, **options: str) -> list[tuple]:
    return rows(pypaimon_read(warehouse, "db.t", options), COLUMNS)


def _both(warehouse: str, **options: str) -> list[tuple]:
    """The rows both implementations read, asserting that they agree."""
    ours = _read_ours(warehouse, **options)
    assert _read_theirs(warehouse, **options) == ours, options
    return ours


@pytest.mark.parametrize("kind", list(KINDS))
def test_our_expiry_keeps_our_and_pypaimon_tags_readable_by_both(warehouse: str, kind: str) -> None:
    table = _ours(warehouse, kind)
    table.write_arrow(pa.concat_tables([_batch("a", 1, 2), _batch("b", 3)]))  # s1
    table.write_arrow(_batch("a", 4))  # s2
    tm.create_tag(table, "ours", snapshot_id=2)
    table.write_arrow(_batch("a", 5), overwrite={"dt": "a"})  # s3
    _theirs(warehouse).create_tag("py", snapshot_id=3)
    table.write_arrow(_batch("b", 6))  # s4
    table.write_arrow(_batch("a", 7), overwrite={"dt": "a"})  # s5: a=[5] is held by py
    table.write_arrow(_batch("a", 8))  # s6
    table.write_arrow(_batch("a", 9), overwrite={"dt": "a"})  # s7: a=[7], a=[8] are not held
    expected = {n: _both(warehouse, **{"scan.tag-name": n}) for n in ("ours", "py")}
    latest = _both(warehouse)

    result = expire_snapshots(
        table, retain_max=1, retain_min=1, max_deletes=100, older_than_millis=EVERYTHING_OLD
    )
    assert result.expired == 6 and len(result.plan.data_files) == 2
    assert sorted(_theirs(warehouse).list_tags()) == ["ours", "py"]
    for name, want in expected.items():
        assert _both(warehouse, **{"scan.tag-name": name}) == want
    assert _both(warehouse) == _both(warehouse, **{"scan.snapshot-id": "7"}) == latest
    assert _theirs(warehouse).snapshot_manager().get_latest_snapshot().id == 7
    with pytest.raises(ValueError, match="doesn't exist"):
        _read_theirs(warehouse, **{"scan.snapshot-id": "6"})


@pytest.mark.parametrize("kind", list(KINDS))
def test_pypaimon_reads_our_rollbacks_and_commits_after_them(warehouse: str, kind: str) -> None:
    table = _ours(warehouse, kind)
    for i in range(1, 6):
        overwrite = {"dt": "a"} if i == 3 else False
        table.write_arrow(_batch("a" if i % 2 else "b", i), overwrite=overwrite)
        if i % 2:
            tm.create_tag(table, f"t{i}")
    states = {i: _both(warehouse, **{"scan.snapshot-id": str(i)}) for i in range(1, 6)}
    expire_snapshots(table, retain_min=2, max_deletes=100, older_than_millis=EVERYTHING_OLD)
    assert table.snapshot_manager.list_snapshot_ids() == [4, 5]

    rb.rollback_to_snapshot(table, 4)  # drops snapshot 5 and tag t5
    assert sorted(_theirs(warehouse).list_tags()) == ["t1", "t3"]
    assert _both(warehouse) == _both(warehouse, **{"scan.snapshot-id": "4"}) == states[4]
    assert _both(warehouse, **{"scan.tag-name": "t3"}) == states[3]

    result = rb.rollback_to_tag(table, "t1")  # snapshot 1 expired: restored from the tag
    assert result.plan.restore_path is not None
    theirs = _theirs(warehouse)
    assert sorted(theirs.list_tags()) == ["t1"]
    assert theirs.snapshot_manager().get_latest_snapshot().id == 1
    assert _both(warehouse) == _both(warehouse, **{"scan.snapshot-id": "1"}) == states[1]

    pypaimon_commit(theirs, _batch("b", 10))
    assert table.snapshot_manager.list_snapshot_ids() == [1, 2]
    assert _both(warehouse) == sorted([*states[1], (10, "v10", "b")])
    assert _both(warehouse, **{"scan.tag-name": "t1"}) == states[1]


def test_pypaimon_tags_survive_our_expiry_and_orphan_removal_after_its_own_cleanup(
    warehouse: str,
) -> None:
    create = {"partition_keys": ["dt"], "primary_keys": ["k", "dt"], "options": {"bucket": "-1"}}
    pypaimon_write(
        warehouse, "db.t", pa.concat_tables([_batch("a", 1, 2), _batch("b", 3)]), create=create
    )
    theirs = _theirs(warehouse)
    theirs.create_tag("p1", time_retained="1d")
    pypaimon_write(warehouse, "db.t", _batch("a", 4), overwrite={"dt": "a"})  # s2
    pypaimon_write(warehouse, "db.t", _batch("b", 5))  # s3
    theirs.create_tag("p3")
    pypaimon_write(warehouse, "db.t", _batch("b", 6), overwrite={"dt": "b"})  # s4
    pypaimon_write(warehouse, "db.t", _batch("a", 7))  # s5
    pypaimon_write(warehouse, "db.t", _batch("a", 8), overwrite={"dt": "a"})  # s6

    table = FileSystemCatalog(warehouse).get_table("db.t")
    tags = tm.list_tags(table)
    assert {n: t.snapshot_id for n, t in tags.items()} == {"p1": 1, "p3": 3}
    assert tags["p1"].tag_time_retained == timedelta(days=1)
    expected = {n: _both(warehouse, **{"scan.tag-name": n}) for n in tags}
    assert expected["p1"] == [(1, "v1", "a"), (2, "v2", "a"), (3, "v3", "b")]

    # Ours: expire all but the latest; the tags keep their files.
    result = expire_snapshots(
        table, retain_min=1, max_deletes=100, older_than_millis=EVERYTHING_OLD
    )
    assert result.expired == 5 and result.plan.data_files  # a=[7] went; nothing tagged did
    for name, want in expected.items():
        assert _both(warehouse, **{"scan.tag-name": name}) == want

    # Theirs: deleting a tag or rolling back only removes metadata files, ours frees the rest.
    assert _theirs(warehouse).delete_tag("p1")
    _theirs(warehouse).rollback_to("p3")
    assert _theirs(warehouse).snapshot_manager().get_latest_snapshot().id == 3
    orphans = find_orphans(table, dry_run=False)
    names = {p.rsplit("/", 1)[-1] for p in orphans.paths}
    assert any(n.endswith(".parquet") for n in names)
    assert any(n.startswith("manifest") for n in names)
    assert find_orphans(table, dry_run=True).count == 0
    assert _both(warehouse) == _both(warehouse, **{"scan.tag-name": "p3"}) == expected["p3"]
    pypaimon_write(warehouse, "db.t", _batch("b", 9))
    assert _both(warehouse) == sorted([*expected["p3"], (9, "v9", "b")])

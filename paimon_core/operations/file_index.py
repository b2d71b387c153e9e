"""Rewriting file indexes: Paimon 2.0's ``FileIndexProcessor`` as ``rewrite_file_index`` runs it,
for the tables this implementation can serve.

File indexes (``file-index.<type>.columns``: bloom filters, bitmaps, ...) are not built
here. Without such options Paimon's rewrite of a file builds no index and keeps none of its
old ones: a data file carrying a ``.index`` extra file gets the same file without it (a
COMPACT commit of before and after entries; the index file goes with the snapshots that
still name it), an index embedded in the manifest stays (Java copies it over), and every
other file is left alone. That is exactly what this does; a table that declares index
columns is refused, since its rewrite would have to build them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from paimon_core.exceptions import InvalidArgument, UnsupportedFeature
from paimon_core.format.commit_message import CommitMessage
from paimon_core.operations.scan import Predicate, TableScan

if TYPE_CHECKING:
    from paimon_core.table import FileStoreTable

__all__ = ["INDEX_PATH_SUFFIX", "FileIndexRewrite", "index_columns_options", "rewrite_file_index"]

INDEX_PATH_SUFFIX = ".index"


@dataclass(frozen=True, slots=True)
class FileIndexRewrite:
    """Java's result: partitions written and index-rewritten files (``compactAfter`` count)."""

    written_partitions: int
    written_indexes: int


def index_columns_options(table: FileStoreTable) -> dict[str, str]:
    """The ``file-index.<type>.columns`` options that declare index columns."""
    return {
        k: v
        for k, v in table.options.items()
        if k.startswith("file-index.") and k.endswith(".columns") and v.strip()
    }


def rewrite_file_index(
    table: FileStoreTable, predicate: Sequence[Predicate] | None = None
) -> FileIndexRewrite:
    """Rewrite the file indexes of the live files in the partitions ``predicate`` selects.

    Raises:
        InvalidArgument: the predicate names a non-partition column.
        UnsupportedFeature: the table declares file index columns.
    """
    keys = list(table.schema.partition_keys)
    for column, _, _ in predicate or ():
        if column not in keys:
            raise InvalidArgument(
                f"Only partition columns can select files: '{column}' is not one of {keys}"
            )
    declared = index_columns_options(table)
    if declared:
        raise UnsupportedFeature(
            "Building file indexes is not supported (the table declares "
            f"{', '.join(sorted(declared))})"
        )
    snapshot = table.snapshot_manager.latest_snapshot()
    if snapshot is None:
        return FileIndexRewrite(0, 0)
    entries = TableScan(table).read_entries(snapshot, predicate=list(predicate or ()))
    messages = []
    for e in entries:
        kept = tuple(x for x in e.file.extra_files if not x.endswith(INDEX_PATH_SUFFIX))
        if kept == tuple(e.file.extra_files):
            continue
        after = replace(e.file, extra_files=kept)
        messages.append(
            CommitMessage(
                e.partition,
                e.bucket,
                e.total_buckets,
                compact_before=(e.file,),
                compact_after=(after,),
            )
        )
    if messages:
        table.new_commit().commit(messages)
    return FileIndexRewrite(len({m.partition for m in messages}), len(messages))

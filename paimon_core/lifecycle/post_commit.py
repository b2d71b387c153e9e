"""The maintenance every commit of a table handle runs once its snapshot is published.

The order is Paimon 0.9's ``TableCommitImpl.expire`` (the Java oracle): snapshot expiry first,
then partition expiry, then automatic tag creation and tag TTL expiry (Paimon 1.x/2.0's
``maintain`` runs tags, then partitions, then snapshots; the order only decides which commit's
maintenance frees a file). ``FileStoreTable.new_commit`` hands these to the committer, which
lives in a lower layer and so never imports them itself.

Partition expiry keeps state per committer (its last check, ``PartitionExpire``), so every
committer gets its own hooks from ``post_commit_hooks``.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from paimon_core.lifecycle.expire import expire_after_commit
from paimon_core.lifecycle.partition_expire import Clock, PartitionExpire
from paimon_core.lifecycle.tag_auto import auto_create_tags
from paimon_core.operations.commit import PostCommitHook

if TYPE_CHECKING:
    from paimon_core.table import FileStoreTable


def post_commit_hooks(
    table: FileStoreTable, clock: Clock = dt.datetime.now
) -> tuple[PostCommitHook, ...]:
    """The hooks of one new committer of ``table`` (``clock``: the local wall clock partition
    expiry goes by).

    Raises:
        InvalidArgument: a malformed partition expiry option (Paimon's ``newCommit`` fails).
    """
    partitions = PartitionExpire.of(table, clock)
    if partitions is None:
        return (expire_after_commit, auto_create_tags)
    return (expire_after_commit, partitions, auto_create_tags)

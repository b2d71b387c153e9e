"""The maintenance every commit of a table handle runs once its snapshot is published.

The order is Paimon 0.9's ``TableCommitImpl.expire`` (the Java oracle): snapshot expiry first,
then automatic tag creation and tag TTL expiry. ``FileStoreTable.new_commit`` hands these to
the committer, which lives in a lower layer and so never imports them itself.
"""

from __future__ import annotations

from paimon_core.lifecycle.expire import expire_after_commit
from paimon_core.lifecycle.tag_auto import auto_create_tags
from paimon_core.operations.commit import PostCommitHook

POST_COMMIT_HOOKS: tuple[PostCommitHook, ...] = (expire_after_commit, auto_create_tags)

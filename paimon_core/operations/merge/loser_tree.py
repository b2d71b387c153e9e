"""The order in which Java Paimon 2.1's merge pops records that tie: a port of its
``LoserTree`` (``SortMergeReaderWithLoserTree``, the default ``sort-engine``).

Records of one key pop oldest first: by ``sequence.field``, sequence number, and (2.1) a
retraction before an add. Records equal in all of these (writers that started from the same
snapshot give the same keys the same sequence numbers) pop in the order the tree's state
gives them: a record that meets an equal one already sitting in a tree node pops after it,
so the outcome depends on the readers' positions and on what popped before. With two runs of
the same keys, the last record (the one deduplicate keeps) alternates between the runs from
key to key. Nothing simpler reproduces that, so the tree is replayed here record by record on
integer ranks of keys and sequences; ``base.merge_key_values`` does it only for the sections
that hold such ties.

The readers are Java's: per section of ``IntervalPartition`` one sorted run each, in the
array order of its ``PriorityQueue`` (``split_generator.merge_sections``); a batch read
partitions the files of a ``DataSplit`` (already in ``MergeTreeSplitGenerator``'s order) as
``MergeFileSplitRead`` does, a compaction its unit's files (``Levels`` order) as
``MergeTreeCompactTask`` does. Not replayed: the ``min-heap`` sort engine (its ties depend on
where the file readers' batches end), and the external
sort Java switches to when a section has more runs than ``sort-spill-threshold`` and the
reader has an IO manager (compactions of many level-0 files).

Paimon 2.0 lacks the retraction-before-add rule (apache/paimon#8990, in 2.1): there the tree
decides between an add and a retraction of equal sequences too. The interop tests run Java
2.0.0 (the newest release Maven Central serves here, ``tests/interop/java2.py``), so they tie
adds with adds only; 2.1's rule is tested in
``tests/unit/paimon_core/operations/merge/test_loser_tree.py``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["pop_order"]

# LeafIterator states (Java's LoserTree.State); the first three lose, the last three win.
_LOSER_WITH_NEW_KEY, _LOSER_WITH_SAME_KEY, _LOSER_POPPED = 0, 1, 2
_WINNER_WITH_NEW_KEY, _WINNER_WITH_SAME_KEY, _WINNER_POPPED = 3, 4, 5


class _Leaf:
    """One sorted run (Java's ``LeafIterator``): its records as row ids, in run order."""

    __slots__ = ("first_same_key_index", "kv", "pos", "rows", "state")

    def __init__(self, rows: list[int]) -> None:
        self.rows = rows
        self.pos = 0
        self.kv: int | None = None
        self.state = _WINNER_WITH_NEW_KEY
        self.first_same_key_index = -1

    def advance(self) -> None:
        self.first_same_key_index = -1
        self.state = _WINNER_WITH_NEW_KEY
        if self.pos < len(self.rows):
            self.kv = self.rows[self.pos]
            self.pos += 1
        else:
            self.kv = None

    def set_first_same_key_index(self, index: int) -> None:
        if self.first_same_key_index == -1:
            self.first_same_key_index = index


class _LoserTree:
    """Java's ``LoserTree`` with its comparators: a record wins (pops first) with the smaller
    key, then the smaller sequence rank; an exhausted run always loses."""

    def __init__(self, runs: Sequence[list[int]], key: list[int], seq: list[int]) -> None:
        self.leaves = [_Leaf(rows) for rows in runs]
        self.size = len(self.leaves)
        self.tree = [-1] * self.size
        self.key = key
        self.seq = seq

    def _first(self, e1: int | None, e2: int | None) -> int:
        if e1 is None:
            return -1
        if e2 is None:
            return 1
        a, b = self.key[e2], self.key[e1]
        return (a > b) - (a < b)

    def _second(self, e1: int | None, e2: int | None) -> int:
        if e1 is None:
            return -1
        if e2 is None:
            return 1
        a, b = self.seq[e2], self.seq[e1]
        return (a > b) - (a < b)

    def initialize(self) -> None:
        for i in range(self.size - 1, -1, -1):
            self.leaves[i].advance()
            self._adjust(i)

    def adjust_for_next_loop(self) -> None:
        winner = self.leaves[self.tree[0]]
        while winner.state == _WINNER_POPPED:
            winner.advance()
            self._adjust(self.tree[0])
            winner = self.leaves[self.tree[0]]

    def pop_winner(self) -> int | None:
        winner = self.leaves[self.tree[0]]
        if winner.state == _WINNER_POPPED:
            return None
        winner.state = _WINNER_POPPED
        result = winner.kv
        self._adjust(self.tree[0])
        return result

    def peek_winner(self) -> int | None:
        winner = self.leaves[self.tree[0]]
        return winner.kv if winner.state != _WINNER_POPPED else None

    def _adjust(self, winner: int) -> None:
        tree, leaves = self.tree, self.leaves
        parent = (winner + self.size) // 2
        while parent > 0 and winner >= 0:
            node = leaves[winner]
            if tree[parent] == -1:
                node.state = _LOSER_WITH_NEW_KEY
            else:
                other = leaves[tree[parent]]
                if node.state == _WINNER_WITH_NEW_KEY:
                    self._adjust_with_new_winner_key(parent, other, node)
                elif node.state == _WINNER_WITH_SAME_KEY:
                    self._adjust_with_same_winner_key(parent, other, node)
                elif node.state == _WINNER_POPPED:
                    if node.first_same_key_index < 0:
                        parent = -1
                    else:
                        parent = node.first_same_key_index
                        other = leaves[tree[parent]]
                        node.state = _LOSER_POPPED
                        other.state = _WINNER_WITH_SAME_KEY
                else:
                    raise AssertionError(f"loser tree: unknown state {node.state}")
            if node.state < _WINNER_WITH_NEW_KEY:  # the climbing node lost: exchange
                winner, tree[parent] = tree[parent], winner
            parent = parent // 2 if parent > 0 else 0  # Java's int division of -1 is 0
        tree[0] = winner

    def _adjust_with_same_winner_key(self, index: int, parent: _Leaf, winner: _Leaf) -> None:
        if parent.state == _LOSER_WITH_SAME_KEY:
            if self._second(parent.kv, winner.kv) > 0:
                parent.state = _WINNER_WITH_SAME_KEY
                winner.state = _LOSER_WITH_SAME_KEY
                parent.set_first_same_key_index(index)
            else:
                winner.set_first_same_key_index(index)
        elif parent.state not in (_LOSER_WITH_NEW_KEY, _LOSER_POPPED):
            raise AssertionError(f"loser tree: unknown state {parent.state}")

    def _adjust_with_new_winner_key(self, index: int, parent: _Leaf, winner: _Leaf) -> None:
        if parent.state == _LOSER_WITH_NEW_KEY:
            first = self._first(parent.kv, winner.kv)
            if first == 0:
                # Same key: the sitting record wins unless it is the newer one.
                if self._second(parent.kv, winner.kv) < 0:
                    parent.state = _LOSER_WITH_SAME_KEY
                    winner.set_first_same_key_index(index)
                else:
                    winner.state = _LOSER_WITH_SAME_KEY
                    parent.state = _WINNER_WITH_NEW_KEY
                    parent.set_first_same_key_index(index)
            elif first > 0:
                parent.state = _WINNER_WITH_NEW_KEY
                winner.state = _LOSER_WITH_NEW_KEY
        elif parent.state == _LOSER_POPPED:
            parent.state = _WINNER_POPPED
            parent.first_same_key_index = -1
            winner.state = _LOSER_WITH_NEW_KEY
        else:
            raise AssertionError(f"loser tree: a new key met state {parent.state}")


def pop_order(runs: Sequence[np.ndarray], key_rank: np.ndarray, seq_rank: np.ndarray) -> np.ndarray:
    """The row ids of ``runs`` in the order Java's loser tree pops them.

    Args:
        runs: the sorted runs of one section in Java's reader order, each the row ids of its
            records in run order (keys ascending within a run).
        key_rank: per row id, the rank of its key (equal keys, equal ranks).
        seq_rank: per row id, the rank of its sequence among its key's records (older
            smaller; records Java's comparator cannot tell apart share a rank).
    """
    tree = _LoserTree([r.tolist() for r in runs], key_rank.tolist(), seq_rank.tolist())
    out: list[int] = []
    if not tree.size:
        return np.zeros(0, np.int64)
    tree.initialize()
    while True:  # SortMergeIterator.next: one key per round
        tree.adjust_for_next_loop()
        first = tree.pop_winner()
        if first is None:
            break
        out.append(first)
        while (kv := tree.peek_winner()) is not None:
            popped = tree.pop_winner()
            assert popped == kv
            out.append(kv)
    return np.asarray(out, dtype=np.int64)

"""The simulator's queue of pending pods: QueueSort order, one heap per (job kind, priority).

A scheduling round (see ``simulate``) gives every pending pod, in QueueSort order
(higher priority first, then arrival), one scheduling cycle, except that once a
pod of some kind fails without preemption the other pods of that kind wait for
the next round: nothing changed for them (kube-scheduler's queueing hints skip
them the same way). With one heap for all pods a round still had to pop and
push back every waiting pod, so a backlog of n pods cost n log n per round and
n^2 log n over a run. With a heap per kind, a round merges the heads of the
kinds still eligible and never touches the pods of a kind once it failed: a
round costs what it attempts.

The order of attempts is exactly the single heap's: the merged heads come out
in (-priority, sequence) order, and ``reopen`` (preemption changed the cluster)
makes failed kinds eligible again only from the current pod on, as popping one
heap in order would.
"""

from __future__ import annotations

import heapq

__all__ = ["Item", "KindKey", "KindQueues"]

Item = tuple[int, int, str]     # (-priority, sequence, pod key): QueueSort order
KindKey = tuple[str, int]       # (job kind name, priority)


class KindQueues:
    """Pending pods by kind. Outside a round: ``push``. In a round: ``start_round``,
    then ``next`` / ``settle`` per pod (``reopen`` after a preemption), ``end_round``.

    Mutable; owned by one run. Pods are never lost: every item popped by ``next``
    comes back at ``end_round`` unless ``settle`` says it is done.
    """

    def __init__(self) -> None:
        self._queues: dict[KindKey, list[Item]] = {}
        self._heads: list[tuple[Item, KindKey]] | None = None  # set during a round
        self._failed: set[KindKey] = set()
        self._back: list[tuple[KindKey, Item]] = []  # popped this round, queued again at its end

    def __len__(self) -> int:
        return sum(len(q) for q in self._queues.values()) + len(self._back)

    def push(self, kind: KindKey, item: Item) -> None:
        queue = self._queues.setdefault(kind, [])
        heapq.heappush(queue, item)
        if self._heads is not None and kind not in self._failed:
            # During a round (a re-created preemption victim): its kind's head may change.
            heapq.heappush(self._heads, (queue[0], kind))

    def start_round(self) -> None:
        self._heads = [(q[0], k) for k, q in self._queues.items() if q]
        heapq.heapify(self._heads)
        self._failed.clear()

    def next(self) -> tuple[KindKey, Item] | None:
        """The next pod of the round in QueueSort order among kinds that have not failed,
        taken off its queue; None when the round is over. The caller must ``settle`` it."""
        assert self._heads is not None, "next() outside a round"
        while self._heads:
            head, kind = heapq.heappop(self._heads)
            queue = self._queues.get(kind)
            # Stale entries: the kind failed, or its head changed since this entry.
            if kind in self._failed or not queue or queue[0] != head:
                continue
            heapq.heappop(queue)
            return kind, head
        return None

    def settle(self, kind: KindKey, item: Item, *, done: bool, kind_failed: bool) -> None:
        """After the attempt at ``item``: ``done`` (started, or no longer pending) drops it,
        otherwise it waits for the next round; ``kind_failed`` keeps its kind out of this
        round, otherwise the kind's next pod takes its turn."""
        assert self._heads is not None, "settle() outside a round"
        if not done:
            self._back.append((kind, item))
        if kind_failed:
            self._failed.add(kind)
            return
        queue = self._queues.get(kind)
        if queue:
            heapq.heappush(self._heads, (queue[0], kind))

    def reopen(self, current: Item) -> None:
        """The cluster changed (victims were evicted for ``current``): kinds that failed
        are eligible again for their pods after ``current``; the ones before it had their
        turn this round, as in a single queue."""
        assert self._heads is not None, "reopen() outside a round"
        for kind in sorted(self._failed):
            queue = self._queues[kind]
            while queue and queue[0] < current:
                self._back.append((kind, heapq.heappop(queue)))
            if queue:
                heapq.heappush(self._heads, (queue[0], kind))
        self._failed.clear()

    def end_round(self) -> None:
        for kind, item in self._back:
            heapq.heappush(self._queues.setdefault(kind, []), item)
        self._back.clear()
        self._heads = None
        self._failed.clear()

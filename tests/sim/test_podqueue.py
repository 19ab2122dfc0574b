"""The per-kind pod queue against the plain single heap it replaces: same attempts, same order.

The plain model is the simulator's round as it was: pop every pending pod in
QueueSort order, skip (and keep for the next round) pods of a kind that failed,
forget which kinds failed when a preemption changed the cluster. Random rounds
drive both with the same outcomes; the pods attempted, in order, must agree.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st

from dralab.sim.podqueue import Item, KindKey, KindQueues


@dataclass
class PlainQueue:
    """One heap of every pending pod; the reference behaviour."""

    heap: list[tuple[Item, KindKey]] = field(default_factory=list)
    failed: set[KindKey] = field(default_factory=set)
    back: list[tuple[Item, KindKey]] = field(default_factory=list)

    def push(self, kind: KindKey, item: Item) -> None:
        heapq.heappush(self.heap, (item, kind))

    def start_round(self) -> None:
        self.failed.clear()

    def next(self) -> tuple[KindKey, Item] | None:
        while self.heap:
            item, kind = heapq.heappop(self.heap)
            if kind in self.failed:
                self.back.append((item, kind))
                continue
            return kind, item
        return None

    def settle(self, kind: KindKey, item: Item, *, done: bool, kind_failed: bool) -> None:
        if not done:
            self.back.append((item, kind))
        if kind_failed:
            self.failed.add(kind)

    def reopen(self, current: Item) -> None:
        self.failed.clear()

    def end_round(self) -> None:
        for entry in self.back:
            heapq.heappush(self.heap, entry)
        self.back.clear()


# What happens to an attempted pod: started, failed (its kind waits), not started
# but its kind carries on, or preemption (victims re-queued, then the pod starts).
OUTCOMES = ("started", "failed", "retry", "preempt")


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[list[list[tuple[int, int]]], list[str]]:
    """Rounds of arrivals (kind index, priority) and a cycle of outcomes."""
    rounds = draw(st.lists(st.lists(st.tuples(st.integers(0, 3), st.sampled_from([0, 0, 5, 9])),
                                    max_size=12), min_size=1, max_size=8))
    outcomes = draw(st.lists(st.sampled_from(OUTCOMES), min_size=1, max_size=30))
    return rounds, outcomes


def drive(queue: KindQueues | PlainQueue, rounds: list[list[tuple[int, int]]],
          outcomes: list[str]) -> list[str]:
    seq = 0
    attempted: list[str] = []
    turn = 0

    def add(kind: int, priority: int) -> None:
        nonlocal seq
        seq += 1
        queue.push((f"k{kind}", priority), (-priority, seq, f"pod-{seq}"))

    for arrivals in rounds:
        for kind, priority in arrivals:
            add(kind, priority)
        queue.start_round()
        while (taken := queue.next()) is not None:
            kind_key, item = taken
            attempted.append(item[2])
            outcome = outcomes[turn % len(outcomes)]
            turn += 1
            if outcome == "preempt" and seq < 200:
                # Victims have a lower priority: they queue behind the current pod.
                add(int(kind_key[0][1:]), item[0] * -1 - 1)
                queue.reopen(item)
                queue.settle(kind_key, item, done=True, kind_failed=False)
            else:
                # (past 200 pods a preemption is just a start: every round must end)
                queue.settle(kind_key, item, done=outcome in ("started", "preempt"),
                             kind_failed=outcome == "failed")
        queue.end_round()
        attempted.append("|")
    return attempted


@settings(max_examples=300, deadline=None)
@given(scenarios())
def test_kind_queues_attempt_what_one_heap_would(
        case: tuple[list[list[tuple[int, int]]], list[str]]) -> None:
    rounds, outcomes = case
    assert drive(KindQueues(), rounds, outcomes) == drive(PlainQueue(), rounds, outcomes)


def test_a_failed_kind_is_not_touched_again_in_the_round() -> None:
    queue = KindQueues()
    for seq in range(1, 1001):
        queue.push(("big", 0), (0, seq, f"p{seq}"))
    queue.push(("other", 0), (0, 2000, "last"))
    queue.start_round()
    first = queue.next()
    assert first == (("big", 0), (0, 1, "p1"))
    queue.settle(*first, done=False, kind_failed=True)
    # The other 999 pods of the failed kind stay where they are: the next pod is "last".
    assert queue.next() == (("other", 0), (0, 2000, "last"))
    queue.settle(("other", 0), (0, 2000, "last"), done=True, kind_failed=False)
    assert queue.next() is None
    queue.end_round()
    assert len(queue) == 1000

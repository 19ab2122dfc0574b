"""The session's fast queue comparison (actions.order, numbers taken once per pop)
agrees with kai-proportion's port of KAI's queue order (queue_order.queue_order, checked
against upstream's queue_order_test.go) on random queues, jobs and victims."""

from __future__ import annotations

import random

from dralab.queueing.kai.actions.order import _QueueView, _view_cmp
from dralab.queueing.kai.model import UNLIMITED
from dralab.queueing.kai.queue_order import queue_order
from dralab.queueing.kai.shares import QueueShare, ResourceShare

RESOURCES = ("cpu", "memory", "gpu")


def _share(rng: random.Random, name: str) -> QueueShare:
    def one() -> ResourceShare:
        pick = rng.choice
        return ResourceShare(deserved=pick([UNLIMITED, 0.0, 1.0, 2.0, 4.0]),
                             fair_share=pick([0.0, 1.0, 2.0, 3.0, 8.0]),
                             max_allowed=pick([UNLIMITED, 2.0, 6.0]),
                             allocated=pick([0.0, 1.0, 2.0, 3.0, 5.0]))
    return QueueShare(name=name, priority=rng.choice([100, 100, 50]),
                      created=rng.choice([0.0, 60.0, 120.0]), cpu=one(), memory=one(),
                      gpu=one())


def _amounts(rng: random.Random) -> dict[str, float]:
    return {r: rng.choice([0.0, 0.0, 1.0, 2.0]) for r in RESOURCES}


def test_fast_queue_compare_matches_queue_order() -> None:
    rng = random.Random(35)
    total = {"cpu": 8.0, "memory": 8.0, "gpu": 8.0}
    for _ in range(3000):
        left, right = _share(rng, "a"), _share(rng, "b")
        ljob, rjob = _amounts(rng), _amounts(rng)
        lvic, rvic = _amounts(rng), _amounts(rng)
        fast = _view_cmp(total, _QueueView.of(left, total), _QueueView.of(right, total),
                         ljob, rjob, lvic, rvic)
        assert fast == queue_order(left, right, ljob, rjob, total, [lvic], [rvic])

"""KAI's reclaimable tables, ported case by case.

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092,
``pkg/scheduler/plugins/proportion/reclaimable/reclaimable_test.go`` (Apache-2.0), one
pytest case per upstream case (id = the Ginkgo path and the case name):

* "Can Reclaim Resources" (preemptible and non-preemptible job tables):
  ``can_reclaim_resources`` on one queue.
* "Reclaimable - Single department", "- Multiple departments", "- Multiple hierarchy
  levels": ``reclaimable`` (saturation multiplier 1) with the victims' resources per
  queue as upstream's reclaimeeResourcesByQueue gives them (each victim job's active
  allocated requests, one entry per job).
"""

# ruff: noqa: E501

from __future__ import annotations

from collections.abc import Callable

import pytest
from tests.peers.kai.proportion_helpers import Cite, Q, R, S, U

from dralab.queueing.kai.reclaimable import can_reclaim_resources, reclaimable
from dralab.queueing.kai.shares import Quantities, QueueShare

FILE = "reclaimable/reclaimable_test.go"

PREEMPTIBLE: list[tuple[str, int, Quantities, bool, QueueShare, bool]] = [
    ('No allocated resources, below fair share', 43, R(1000, 1000, 1), True, Q('queue1', gpu=S(fair_share=2, allocated=0), cpu=S(fair_share=2000, allocated=0), memory=S(fair_share=2000, allocated=0)), True),
    ('Some resources allocated, below fair share', 70, R(1000, 1000, 1), True, Q('queue1', gpu=S(fair_share=3, allocated=1), cpu=S(fair_share=3000, allocated=1000), memory=S(fair_share=3000, allocated=1000)), True),
    ('Some resources at fair share with job, other stay below', 97, R(500, 1000, 0), True, Q('queue1', gpu=S(fair_share=2, allocated=1), cpu=S(fair_share=2000, allocated=1000), memory=S(fair_share=2000, allocated=1000)), True),
    ('Exactly at fair share with job', 124, R(1000, 1000, 1), True, Q('queue1', gpu=S(fair_share=2, allocated=1), cpu=S(fair_share=2000, allocated=1000), memory=S(fair_share=2000, allocated=1000)), True),
    ('Partially above fair share', 151, R(1, 1000, 1000), True, Q('queue1', gpu=S(fair_share=1, allocated=1), cpu=S(fair_share=1500, allocated=1000), memory=S(fair_share=3000, allocated=1000)), False),
    ('Fully above fair share', 178, R(1, 1000, 1000), True, Q('queue1', gpu=S(fair_share=1, allocated=1), cpu=S(fair_share=1500, allocated=1000), memory=S(fair_share=1500, allocated=1000)), False),
    ('Queue partially above fair share without job resources', 205, R(1, 1000, 1000), True, Q('queue1', gpu=S(fair_share=0, allocated=1), cpu=S(fair_share=3000, allocated=2000), memory=S(fair_share=3000, allocated=1000)), False),
]
NON_PREEMPTIBLE: list[tuple[str, int, Quantities, bool, QueueShare, bool]] = [
    ('No allocated resources, below quota', 254, R(1000, 1000, 1), False, Q('queue1', gpu=S(deserved=2, fair_share=2, allocated=0, allocated_not_preemptible=0), cpu=S(deserved=2000, fair_share=2000, allocated=0, allocated_not_preemptible=0), memory=S(deserved=2000, fair_share=2000, allocated=0, allocated_not_preemptible=0)), True),
    ('No allocated resources, exactly at quota', 287, R(1000, 1000, 1), False, Q('queue1', gpu=S(deserved=1, fair_share=2, allocated=0, allocated_not_preemptible=0), cpu=S(deserved=1000, fair_share=2000, allocated=0, allocated_not_preemptible=0), memory=S(deserved=1000, fair_share=2000, allocated=0, allocated_not_preemptible=0)), True),
    ('No allocated resources, partially above quota', 320, R(1, 1000, 1000), False, Q('queue1', gpu=S(deserved=0, fair_share=2, allocated=0, allocated_not_preemptible=0), cpu=S(deserved=1000, fair_share=2000, allocated=0, allocated_not_preemptible=0), memory=S(deserved=500, fair_share=2000, allocated=0, allocated_not_preemptible=0)), False),
    ('Some resources allocated, below quota', 353, R(1000, 1000, 1), False, Q('queue1', gpu=S(deserved=3, fair_share=3, allocated=1, allocated_not_preemptible=1), cpu=S(deserved=3000, fair_share=3000, allocated=1000, allocated_not_preemptible=1000), memory=S(deserved=3000, fair_share=3000, allocated=1000, allocated_not_preemptible=1000)), True),
    ('Some preemptible resources allocated, zero quota', 386, R(1, 1000, 1000), False, Q('queue1', gpu=S(deserved=0, fair_share=3, allocated=1, allocated_not_preemptible=0), cpu=S(deserved=0, fair_share=3000, allocated=1000, allocated_not_preemptible=0), memory=S(deserved=0, fair_share=3000, allocated=1000, allocated_not_preemptible=0)), False),
    ('Partially above quota', 419, R(1, 1000, 1000), False, Q('queue1', gpu=S(deserved=0, fair_share=3, allocated=1, allocated_not_preemptible=1), cpu=S(deserved=1500, fair_share=3000, allocated=1000, allocated_not_preemptible=1000), memory=S(deserved=3000, fair_share=3000, allocated=1000, allocated_not_preemptible=1000)), False),
    ('Fully above quota', 452, R(1, 1000, 1000), False, Q('queue1', gpu=S(deserved=1, fair_share=3, allocated=1, allocated_not_preemptible=1), cpu=S(deserved=1500, fair_share=3000, allocated=1000, allocated_not_preemptible=1000), memory=S(deserved=1500, fair_share=3000, allocated=1000, allocated_not_preemptible=1000)), False),
    ('Queue partially over quota without job resources', 485, R(1, 1000, 1000), False, Q('queue1', gpu=S(deserved=0, fair_share=3, allocated=1, allocated_not_preemptible=1), cpu=S(deserved=1500, fair_share=3000, allocated=1000, allocated_not_preemptible=1000), memory=S(deserved=3000, fair_share=3000, allocated=1000, allocated_not_preemptible=1000)), False),
]


@pytest.mark.parametrize("case", PREEMPTIBLE + NON_PREEMPTIBLE,
                         ids=[f"{'Preemptible' if c[3] else 'Non-Preemptible'} job / {c[0]}" for c in PREEMPTIBLE + NON_PREEMPTIBLE])
def test_can_reclaim_resources(case: tuple[str, int, Quantities, bool, QueueShare, bool]) -> None:
    name, line, required, preemptible, queue, expected = case
    context = "Preemptible job" if preemptible else "Non-Preemptible job"
    result = can_reclaim_resources({queue.name: queue.copy()}, queue.name, required, preemptible)
    assert result == expected, Cite(FILE, f"Can Reclaim Resources / {context}", name, line)


Queues = dict[str, QueueShare]


def _single_department() -> Queues:
    """Reclaimable - Single department, BeforeEach (line 540)."""
    return {
        "p1": Q("p1", parent="default", gpu=S(deserved=3, fair_share=3, allocated=2, allocated_not_preemptible=0, max_allowed=U)),
        "p2": Q("p2", parent="default", gpu=S(deserved=2, fair_share=2, allocated=3, allocated_not_preemptible=0, max_allowed=U)),
        "default": Q("default", gpu=S(deserved=5, fair_share=5, allocated=5, allocated_not_preemptible=0, max_allowed=U)),
    }


def _multiple_departments() -> Queues:
    """Reclaimable - Multiple departments, BeforeEach (line 686)."""
    return {
        "p1": Q("p1", parent="d1", gpu=S(deserved=3, fair_share=3, allocated=2, max_allowed=U)),
        "p2": Q("p2", parent="d2", gpu=S(deserved=2, fair_share=2, allocated=3, max_allowed=U)),
        "d1": Q("d1", gpu=S(deserved=3, fair_share=3, allocated=2, max_allowed=U)),
        "d2": Q("d2", gpu=S(deserved=2, fair_share=2, allocated=3, max_allowed=U)),
    }


def _levels(data: dict[str, tuple[str, float, float, float]]) -> Callable[[], Queues]:
    """buildQueues: (parent, deserved, fairShare, allocated) GPUs, unlimited limit."""
    def build() -> Queues:
        return {name: Q(name, parent=parent, gpu=S(deserved=d, fair_share=f, allocated=a, max_allowed=U))
                for name, (parent, d, f, a) in data.items()}
    return build


SAME_BRANCH = {"top": ("", 2, 2, 2), "mid1": ("top", 1, 1, 0.5), "mid2": ("top", 1, 1, 1.5),
               "left-leaf1": ("mid1", 1, 1, 0), "left-leaf2": ("mid1", 0, 0, 0.5),
               "right-leaf": ("mid2", 1, 1, 1.5)}
# (queue, resource, field, value) changes; "+fair_share" is AddResourceShare
Change = tuple[str, str, str, float]
SINGLE = "Reclaimable - Single department"
MULTI = "Reclaimable - Multiple departments"
LEVELS = "Reclaimable - Multiple hierarchy levels"
ONE_GPU = R(0, 0, 1)
# (function, name, line, queues, changes, reclaimer queue, required, preemptible, victims by queue, expected)
SCENARIOS: list[tuple[str, str, int, Callable[[], Queues], list[Change], str, Quantities, bool, dict[str, list[Quantities]], bool]] = [
    (SINGLE, "Reclaimer is below fair share, reclaimee above fair share", 616, _single_department, [], "p1", ONE_GPU, True, {"p2": [R(0, 0, 1)]}, True),
    (SINGLE, "Reclaimer is below fair share, reclaimer exactly at fair share", 620, _single_department,
     [("p2", "gpu", "allocated", 2), ("default", "gpu", "allocated", 4)], "p1", ONE_GPU, True, {"p2": [R(0, 0, 1)]}, False),
    (SINGLE, "Reclaimer and reclaimee are below fair share", 626, _single_department,
     [("p2", "gpu", "allocated", 1), ("default", "gpu", "allocated", 3)], "p1", ONE_GPU, True, {"p2": [R(0, 0, 1)]}, False),
    (SINGLE, "Reclaimer below deserved and reclaimee above deserved (within fair share)", 632, _single_department,
     [("p2", "gpu", "+fair_share", 3 - 2)], "p1", ONE_GPU, True, {"p2": [R(0, 0, 1)]}, True),
    (SINGLE, "Reclaimer at fair share, reclaimee above fair share, department below fair share", 638, _single_department,
     [("p1", "gpu", "allocated", 3), ("default", "gpu", "allocated", 6), ("default", "gpu", "deserved", 7),
      ("default", "gpu", "+fair_share", 7 - 2)], "p1", ONE_GPU, True, {"p2": [R(0, 0, 1)]}, False),
    (SINGLE, "Reclaimer at fair share, reclaimee above fair share, department above fair share", 646, _single_department,
     [("p1", "gpu", "allocated", 3), ("default", "gpu", "allocated", 6)], "p1", ONE_GPU, True, {"p2": [R(0, 0, 1)]}, False),
    (SINGLE, "Reclaimer above deserved, attempting to reclaim for non preemptible job", 652, _single_department,
     [("p1", "gpu", "deserved", 2)], "p1", ONE_GPU, False, {"p2": [R(0, 0, 1)]}, True),
    (SINGLE, "Reclaimer department only preemptible above deserved, attempting to reclaim for non preemptible job", 658, _single_department,
     [("p1", "gpu", "deserved", 2), ("default", "gpu", "deserved", 3)], "p1", ONE_GPU, False, {"p2": [R(0, 0, 1)]}, True),
    (SINGLE, "Reclaimer department nonpreemtible equal to deserved, attempting to reclaim for non preemptible job", 665, _single_department,
     [("p1", "gpu", "deserved", 2), ("default", "gpu", "deserved", 3), ("default", "gpu", "allocated_not_preemptible", 3)],
     "p1", ONE_GPU, False, {"p2": [R(0, 0, 1)]}, False),
    (SINGLE, "Reclaimer department allocated above fair share, attempting to reclaim for job", 673, _single_department,
     [("p1", "gpu", "deserved", 2), ("default", "gpu", "deserved", 1), ("default", "gpu", "fair_share", 1),
      ("default", "gpu", "allocated", 3)], "p1", ONE_GPU, True, {"p2": [R(0, 0, 1)]}, True),
    (MULTI, "Reclaimer is below fair share, reclaimee above fair share - sanity", 779, _multiple_departments, [], "p1", ONE_GPU, True, {"p2": [R(0, 0, 1)]}, True),
    (MULTI, "Reclaimee department goes below fair share", 783, _multiple_departments,
     [("p2", "gpu", "allocated", 2), ("d2", "gpu", "allocated", 2)], "p1", ONE_GPU, True, {"p2": [R(0, 0, 1)]}, False),
    (MULTI, "Reclaimer department is below deserved and reclaimee department is above deserved but within fair share", 789, _multiple_departments,
     [("p1", "gpu", "allocated", 1), ("d1", "gpu", "allocated", 1), ("p2", "gpu", "fair_share", 4), ("d2", "gpu", "fair_share", 4)],
     "p1", ONE_GPU, True, {"p2": [R(0, 0, 1)]}, True),
    (LEVELS, "Reclaimer is below fair share, reclaimee above fair share - sanity", 830,
     _levels({"left-top": ("", 1, 1, 0), "left-mid": ("left-top", 1, 1, 0), "left-leaf": ("left-mid", 1, 1, 0),
              "right-top": ("", 1, 1, 2), "right-mid": ("right-top", 1, 1, 2), "right-leaf": ("right-mid", 1, 1, 2)}),
     [], "left-leaf", ONE_GPU, True, {"right-leaf": [R(0, 0, 2)]}, True),
    (LEVELS, "Reclaimer top queue will go over quota - don't reclaim", 876,
     _levels({"left-top": ("", 1, 1, 1), "left-top-oq-leaf": ("left-top", 0, 0, 1), "left-mid": ("left-top", 1, 1, 0),
              "left-leaf": ("left-mid", 1, 1, 0), "right-top": ("", 1, 1, 2), "right-mid": ("right-top", 1, 1, 2),
              "right-leaf": ("right-mid", 1, 1, 2)}),
     [], "left-leaf", ONE_GPU, True, {"right-leaf": [R(0, 0, 2)]}, False),
    (LEVELS, "Reclaimer in the same tree branch and will go over fair share - don't reclaim", 928, _levels(SAME_BRANCH),
     [], "left-leaf1", ONE_GPU, True, {"right-leaf": [R(0, 0, 1.5)]}, False),
    (LEVELS, "Reclaimer in the same tree branch - reclaim", 979, _levels(SAME_BRANCH),
     [], "left-leaf1", ONE_GPU, True, {"right-leaf": [R(0, 0, 1.5)], "left-leaf2": [R(0, 0, 0.5)]}, True),
    (LEVELS, "Reclaimer has lower utilization ratio than reclaimee but over 1", 1045,
     _levels({"d1": ("", 4, 4, 4), "d1-project-1": ("d1", 3, 1, 0), "d1-project-2": ("d1", 1, 3, 4),
              "d2": ("", 3, 3, 7), "d2-project-1": ("d2", 3, 3, 7)}),
     [], "d1-project-1", ONE_GPU, True, {"d2-project-1": [R(0, 0, 1)]}, True),
    (LEVELS, "Reclamation with uninvolved resources", 1104,
     _levels({"d1": ("", 4, 4, 4), "d1-project-1": ("d1", 1, 1, 1), "d2": ("", 3, 3, 7), "d2-project-1": ("d2", 3, 3, 7)}),
     [("d1", "cpu", "allocated", 3000), ("d1", "cpu", "fair_share", 1000), ("d2", "cpu", "allocated", 1000),
      ("d2", "cpu", "fair_share", 1000)], "d1-project-1", ONE_GPU, True, {"d2-project-1": [R(0, 0, 1)]}, True),
]


@pytest.mark.parametrize("case", SCENARIOS, ids=[f"{c[0]} / {c[1]}" for c in SCENARIOS])
def test_reclaimable(case: tuple[str, str, int, Callable[[], Queues], list[Change], str, Quantities, bool,
                                 dict[str, list[Quantities]], bool]) -> None:
    function, name, line, build, changes, queue, required, preemptible, victims, expected = case
    queues = build()
    for target, resource, field, value in changes:
        share = queues[target].share(resource)
        if field == "+fair_share":
            share.fair_share += value
        else:
            setattr(share, field, value)
    result = reclaimable(queues, queue, required, preemptible, victims, saturation_multiplier=1.0)
    assert result == expected, Cite(FILE, function, name, line)

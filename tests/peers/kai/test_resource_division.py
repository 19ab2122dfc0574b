"""KAI's resource division tables, ported case by case.

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092,
``pkg/scheduler/plugins/proportion/resource_division/resource_division_test.go``
(Apache-2.0): every ``It`` and ``Entry`` of the Ginkgo suite, one pytest case each, id =
the Ginkgo path (Describe / Context / When / It). Each case builds upstream's queue
literals (Go zero values: an unset MaxAllowed is 0), applies the case's BeforeEach
changes and calls dralab's port of the function the case calls (setResourceShare ->
``divide_resource``, divideOverQuotaResource -> ``divide_over_quota``,
SetResourcesShare -> ``set_resources_share``, getQueuesByPriority ->
``queues_by_priority``), with kValue 0 as upstream, comparing the remaining amount and
the fair shares exactly (float equality, as Gomega's Equal).

Upstream runs the same It name twice in "single queue over quota (sanity)" ("doesn't
give when over quota weight is zero", lines 137 and 167, different totals); the second
is suffixed " (2)" here.
"""

# The data below is upstream's tables transcribed value by value.
# ruff: noqa: E501

from __future__ import annotations

from collections.abc import Callable

import pytest
from tests.peers.kai.proportion_helpers import Cite, Q, S, U

from dralab.queueing.kai.proportion import (
    divide_over_quota,
    divide_resource,
    queues_by_priority,
    set_resources_share,
)
from dralab.queueing.kai.shares import QueueShare

FILE = "resource_division/resource_division_test.go"
Queues = dict[str, QueueShare]
# (queue, resource, field, value): a BeforeEach or in-It assignment
Change = tuple[str, str, str, float]


def _apply(queues: Queues, changes: list[Change]) -> Queues:
    for queue, resource, name, value in changes:
        setattr(queues[queue].share(resource), name, value)
    return queues


# --- setResourceShare - GPU ---------------------------------------------------------

def _gpu_within_quota() -> Queues:
    return {"1": Q("1", title="queue-1", gpu=S(deserved=3, fair_share=0, over_quota_weight=0,
                                               max_allowed=U, allocated=0, request=2))}


def _gpu_over_quota() -> Queues:
    return {"1": Q("1", title="queue-1", gpu=S(deserved=3, fair_share=3, over_quota_weight=1,
                                               max_allowed=U, allocated=0, request=5))}


def _gpu_two_over_quota() -> Queues:
    return {"1": Q("1", title="queue-1", gpu=S(deserved=3, fair_share=3, over_quota_weight=1,
                                               max_allowed=U, allocated=0, request=5)),
            "2": Q("2", title="queue-2", gpu=S(deserved=3, fair_share=3, over_quota_weight=1,
                                               max_allowed=U, allocated=0, request=3))}


def _gpu_two_queues() -> Queues:
    # both created by v1.Now() in map-literal order: "1" first
    return {q: Q(q, title=f"queue-{q}", created=float(i),
                 gpu=S(deserved=2, fair_share=0, over_quota_weight=2, max_allowed=U,
                       allocated=0, request=6))
            for i, q in enumerate(("1", "2"))}


def _gpu_priorities() -> Queues:
    return {
        "1": Q("1", title="queue-1", created=0, priority=2,
               gpu=S(deserved=2, fair_share=0, over_quota_weight=2, max_allowed=U, request=5)),
        "2": Q("2", title="queue-2", created=1, priority=2,
               gpu=S(deserved=2, fair_share=0, over_quota_weight=2, max_allowed=U, request=5)),
        "3": Q("3", title="queue-3", created=2, priority=1,
               gpu=S(deserved=1, fair_share=0, over_quota_weight=2, max_allowed=U, request=0)),
    }


# --- setResourceShare - CPU / memory (the same tables on either resource) -----------

def _one(resource: str) -> Callable[[], Queues]:
    def build() -> Queues:
        share = S(deserved=3000, fair_share=0, over_quota_weight=3000, max_allowed=U,
                  allocated=0, request=2000)
        return {"1": Q("1", title="queue-1", **{resource: share})}  # type: ignore[arg-type]
    return build


def _two(resource: str) -> Callable[[], Queues]:
    def build() -> Queues:
        return {
            "1": Q("1", title="queue-1", **{resource: S(  # type: ignore[arg-type]
                deserved=5000, fair_share=0, over_quota_weight=5000, max_allowed=U,
                allocated=0, request=10000)}),
            "2": Q("2", title="queue-2", **{resource: S(  # type: ignore[arg-type]
                deserved=0, fair_share=0, over_quota_weight=0, max_allowed=U,
                allocated=5000, request=5000)}),
        }
    return build


def _three(resource: str) -> Callable[[], Queues]:
    def build() -> Queues:
        return {q: Q(q, title=f"queue-{q}", **{resource: S(  # type: ignore[arg-type]
            deserved=5000, fair_share=0, over_quota_weight=5000, max_allowed=U, allocated=0,
            request=5000)}) for q in ("1", "2", "3")}
    return build


def _cases_for(resource: str, label: str, lines: dict[str, int]) -> list[tuple[object, ...]]:
    """The CPU and memory Describes (lines 473-789 and 791-1109) in one list."""
    r = resource
    d = f"setResourceShare - {label}"
    word = "CPU" if r == "cpu" else "memory"
    alloc = [("1", r, "allocated", 5000), ("2", r, "allocated", 5000)]
    over = [("1", r, "request", 7000), ("2", r, "request", 2000), ("3", r, "request", 2000)]
    allowed = [("1", r, "request", 7000), ("1", r, "max_allowed", 7000),
               ("2", r, "request", 2000), ("3", r, "request", 2000)]
    no_deserved = [("2", r, "deserved", 0), ("2", r, "max_allowed", U)]
    more = [("1", r, "request", 10000), ("3", r, "request", 10000)]
    rec = "reclaims unneeded resources from an allocated queue to fulfill the unallocated queue"
    both = "reclaims from both allocated queues to fulfill the last unallocated queue"
    q2 = "reclaims all resources of queue 2 and allocates allowed resource in queue 3"
    same = f"all queues deserve the same fairShare of {word}"
    oq = f"q2 has no deserved {word} but is allowed OQ"
    npa, ara = "no pre-allocated resources", "all resources allocated between 2 queues"
    cases: list[tuple[object, ...]] = [
        (f"{d} / one queue / gives requested {'CPUs' if r == 'cpu' else 'memory'} to queue",
         lines["one1"], r, "set", _one(r), [], 3000, 1000, {"1": 2000}),
        (f"{d} / one queue / gives deserved in over subscription",
         lines["one2"], r, "set", _one(r), [], 1000, 0, {"1": 2000}),
        (f"{d} / two queues / queue 2 has no deserved {word} / reclaims all resources of queue 2",
         lines["two"], r, "set", _two(r), [], 10000, 0, {"2": 0, "1": 10000}),
        (f"{d} / three queues / {npa} / {same} / all queues request more than they deserve / all queues get their deserved fairShare - over subscription",
         lines["a"], r, "set", _three(r), [], 10000, 0, {"1": 5000, "2": 5000, "3": 5000}),
        (f"{d} / three queues / {npa} / {same} / all queues request more than they deserve / all queues get their deserved fairShare - over quota",
         lines["b"], r, "set", _three(r), [(q, r, "request", 6000) for q in ("1", "2", "3")],
         18000, 0, {"1": 6000, "2": 6000, "3": 6000}),
        (f"{d} / three queues / {npa} / {same} / one queue request more than it deserves / {rec}",
         lines["c"], r, "set", _three(r), over, 10000, 0, {"1": 6000, "2": 2000, "3": 2000}),
        (f"{d} / three queues / {npa} / {same} / one queue request more than it deserves / {both}",
         lines["d"], r, "set", _three(r), [*over, ("2", r, "request", 5000)], 10000, 0,
         {"1": 5000, "2": 5000, "3": 2000}),
        (f"{d} / three queues / {npa} / {same} / one queue request more than it deserves and allowed / {rec}",
         lines["e"], r, "set", _three(r), allowed, 10000, 0, {"1": 6000, "2": 2000, "3": 2000}),
        (f"{d} / three queues / {npa} / {oq} / q1 uses the max allowed {word} and q2 use all the rest as OQ / {q2}",
         lines["f"], r, "set", _three(r), no_deserved, 10000, 0, {"1": 5000, "2": 0, "3": 5000}),
        (f"{d} / three queues / {ara} / {same} / all queues request more than they deserve / they get deserved and compete on the available resources",
         lines["g"], r, "set", _three(r), alloc, 10000, 0, {"1": 5000, "2": 5000, "3": 5000}),
        (f"{d} / three queues / {ara} / {same} / one queue request more than it deserves but not allowed / {rec}",
         lines["h"], r, "set", _three(r), [*alloc, *over], 10000, 0,
         {"1": 6000, "2": 2000, "3": 2000}),
        (f"{d} / three queues / {ara} / {same} / one queue request more than it deserves but not allowed / {both}",
         lines["i"], r, "set", _three(r), [*alloc, *over, ("2", r, "request", 5000)], 10000, 0,
         {"1": 5000, "2": 5000, "3": 2000}),
        (f"{d} / three queues / {ara} / {same} / one queue request more than it deserves and allowed / {rec}",
         lines["j"], r, "set", _three(r), [*alloc, *allowed], 10000, 0,
         {"1": 6000, "2": 2000, "3": 2000}),
        (f"{d} / three queues / {ara} / {same} / one queue request more than it deserves and allowed / {both}",
         lines["k"], r, "set", _three(r), [*alloc, *allowed, ("2", r, "request", 5000)], 10000,
         0, {"1": 5000, "2": 5000, "3": 2000}),
    ]
    if r == "cpu":
        # the two cases sit inside "q2 has no deserved CPU but is allowed OQ"
        cases += [
            (f"{d} / three queues / {ara} / {oq} / q1 uses the max allowed CPU and q2 use all the rest as OQ and q1,q3 request more than they deserve / {q2}",
             lines["l"], r, "set", _three(r), [*alloc, *no_deserved, *more], 10000, 0,
             {"1": 5000, "3": 5000}),
            (f"{d} / three queues / {ara} / {oq} / {q2}",
             lines["m"], r, "set", _three(r), [*alloc, *no_deserved], 10000, 0,
             {"1": 5000, "3": 5000}),
        ]
    else:
        # in the memory Describe the "q2 has no deserved memory" When holds no It;
        # the two cases sit beside it, with q2's deserved quota unchanged
        cases += [
            (f"{d} / three queues / {ara} / q1 uses the max allowed memory and q2 use all the rest as OQ and q1,q3 request more than they deserve / {q2}",
             lines["l"], r, "set", _three(r), [*alloc, *more], 10000, 0,
             {"1": 5000, "3": 5000}),
            (f"{d} / three queues / {ara} / {q2}",
             lines["m"], r, "set", _three(r), alloc, 10000, 0, {"1": 5000, "3": 5000}),
        ]
    return cases


G = "setResourceShare - GPU"
WITHIN = f"{G} / single queue within quota (sanity)"
OVER = f"{G} / single queue over quota (sanity)"
# (id, line, resource, call, queues, changes, total, remaining, fair shares)
HAND_CASES: list[tuple[object, ...]] = [
    (f"{WITHIN} / gives requested GPUs - no remaining", 50, "gpu", "set", _gpu_within_quota, [], 2, 0, {"1": 2}),
    (f"{WITHIN} / gives requested GPUs with remaining", 55, "gpu", "set", _gpu_within_quota, [], 3, 1, {"1": 2}),
    (f"{WITHIN} / doesn't give more GPUs than allowed", 60, "gpu", "set", _gpu_within_quota, [("1", "gpu", "max_allowed", 2)], 3, 1, {"1": 2}),
    (f"{WITHIN} / gives up to deserved when over subscribed", 66, "gpu", "set", _gpu_within_quota, [], 1, 0, {"1": 2}),
    (f"{WITHIN} / gives up to full quota", 71, "gpu", "set", _gpu_within_quota, [("1", "gpu", "request", 5)], 7, 4, {"1": 3}),
    (f"{WITHIN} / gives with fraction, if stated in deserved", 77, "gpu", "set", _gpu_within_quota, [("1", "gpu", "deserved", 1.5)], 2, 0.5, {"1": 1.5}),
    (f"{WITHIN} / gives with fraction, if stated in request", 83, "gpu", "set", _gpu_within_quota, [("1", "gpu", "request", 1.5)], 2, 0.5, {"1": 1.5}),
    (f"{WITHIN} / doesn't give if deserved is zero", 89, "gpu", "set", _gpu_within_quota, [("1", "gpu", "deserved", 0)], 2, 2, {"1": 0}),
    (f"{OVER} / gives requested GPUs no remaining", 121, "gpu", "over", _gpu_over_quota, [], 2, 0, {"1": 5}),
    (f"{OVER} / gives requested GPUs with remaining", 126, "gpu", "over", _gpu_over_quota, [], 3, 1, {"1": 5}),
    (f"{OVER} / doesn't give more GPUs than allowed", 131, "gpu", "over", _gpu_over_quota, [("1", "gpu", "max_allowed", 4)], 2, 1, {"1": 4}),
    (f"{OVER} / doesn't give when over quota weight is zero", 137, "gpu", "over", _gpu_over_quota, [("1", "gpu", "over_quota_weight", 0)], 2, 2, {"1": 3}),
    (f"{OVER} / gives with fraction if requested", 143, "gpu", "over", _gpu_over_quota, [("1", "gpu", "request", 4.5)], 2, 0.5, {"1": 4.5}),
    (f"{OVER} / gives remainder fraction", 149, "gpu", "over", _gpu_over_quota, [], 0.5, 0, {"1": 3.5}),
    (f"{OVER} / gives when deserved is zero", 154, "gpu", "over", _gpu_over_quota, [("1", "gpu", "deserved", 0), ("1", "gpu", "fair_share", 0)], 6, 1, {"1": 5}),
    (f"{OVER} / doesn't break when there are zero resources to divide", 161, "gpu", "over", _gpu_over_quota, [], 0, 0, {"1": 3}),
    (f"{OVER} / doesn't give when over quota weight is zero (2)", 167, "gpu", "over", _gpu_over_quota, [("1", "gpu", "over_quota_weight", 0)], 10, 10, {"1": 3}),
    (f"{G} / two queues over quota (sanity) / doesn't give when over quota weight is zero", 216, "gpu", "over", _gpu_two_over_quota, [("1", "gpu", "over_quota_weight", 0)], 10, 10, {"1": 3}),
    (f"{G} / divides the remainder even when using priorities", 401, "gpu", "set", _gpu_priorities, [], 5, 0, {"1": 3, "2": 2, "3": 0}),
    *_cases_for("cpu", "CPU", {"one1": 498, "one2": 503, "two": 551, "a": 619, "b": 633, "c": 647,
                               "d": 655, "e": 671, "f": 689, "g": 706, "h": 720, "i": 727,
                               "j": 743, "k": 750, "l": 773, "m": 780}),
    *_cases_for("memory", "memory", {"one1": 816, "one2": 821, "two": 869, "a": 937, "b": 951,
                                     "c": 965, "d": 973, "e": 989, "f": 1007, "g": 1024,
                                     "h": 1038, "i": 1045, "j": 1062, "k": 1069, "l": 1094,
                                     "m": 1101}),
]

# DescribeTable "two queues" (line 284): Entry(name, line, total GPUs, request, maxAllowed,
# gpuOverQuotaWeights, overQuotaPriority overrides, expected remaining, expected shares)
TWO_QUEUES_ENTRIES = [
    ('allocates many available gpus', 295, 15, {}, {}, {}, {}, 3, {'1': 6, '2': 6}),
    ('allocates exact requested amount gpus', 303, 12, {}, {}, {}, {}, 0, {'1': 6, '2': 6}),
    ('allocates GPUs proportionally', 311, 8, {}, {}, {'1': 1, '2': 3}, {}, 0, {'1': 3, '2': 5}),
    ("doesn't allocate more than allowed", 323, 12, {}, {'1': 5}, {}, {}, 1, {'1': 5, '2': 6}),
    ('distributes remainder between queues based on largest remaining', 334, 11, {'1': 10, '2': 10}, {}, {'1': 1, '2': 4}, {}, 0, {'1': 3, '2': 8}),
    ('distributes remainder between queues based on creation time', 350, 11, {}, {}, {}, {}, 0, {'1': 6, '2': 5}),
    ("priority doesn't affect deserved", 358, 4, {}, {}, {}, {'1': 1, '2': 2}, 0, {'1': 2, '2': 2}),
    ('priority does affect over-quota', 370, 6, {}, {}, {}, {'1': 1, '2': 2}, 0, {'1': 2, '2': 4}),
    ('priority does affect over-quota, even when overQuotaWeight is set', 382, 6, {}, {}, {'1': 100, '2': 1}, {'1': 1, '2': 2}, 0, {'1': 2, '2': 4}),
]

# Describe "SetResourcesShare" (line 1111): (context, name, line, queues, total, fair shares)
SET_RESOURCES_SHARE = [
    ('one queue', 'Enough resources - should gets all request', 1119,
     {'1': Q('1', gpu=S(deserved=1, fair_share=0, over_quota_weight=1, max_allowed=U, allocated=0, request=1), cpu=S(deserved=200, fair_share=0, over_quota_weight=1, max_allowed=U, allocated=0, request=500), memory=S(deserved=1000, fair_share=0, over_quota_weight=1, max_allowed=U, allocated=0, request=500))},
     {'gpu': 10, 'cpu': 2500, 'memory': 1000},
     {'1': {'gpu': 1, 'cpu': 500, 'memory': 500}}),
    ('one queue', 'Not enough resources - should gets all cluster', 1171,
     {'1': Q('1', gpu=S(deserved=2, fair_share=0, over_quota_weight=1, max_allowed=U, allocated=0, request=3), cpu=S(deserved=20000, fair_share=0, over_quota_weight=1, max_allowed=U, allocated=0, request=2500), memory=S(deserved=1000, fair_share=0, over_quota_weight=1, max_allowed=U, allocated=0, request=5000))},
     {'gpu': 1, 'cpu': 1000, 'memory': 3000},
     {'1': {'gpu': 2, 'cpu': 2500, 'memory': 3000}}),
    ('two queues', 'Enough resources - should gets all request', 1227,
     {'1': Q('1', gpu=S(deserved=1, fair_share=0, over_quota_weight=1, max_allowed=U, allocated=0, request=1), cpu=S(deserved=200, fair_share=0, over_quota_weight=1, max_allowed=U, allocated=0, request=500), memory=S(deserved=1000, fair_share=0, over_quota_weight=1, max_allowed=U, allocated=0, request=500)), '2': Q('2', gpu=S(deserved=1, fair_share=0, over_quota_weight=1, max_allowed=U, allocated=0, request=1), cpu=S(deserved=200, fair_share=0, over_quota_weight=1, max_allowed=U, allocated=0, request=500), memory=S(deserved=1000, fair_share=0, over_quota_weight=1, max_allowed=U, allocated=0, request=500))},
     {'memory': 1000, 'gpu': 10, 'cpu': 2500},
     {'1': {'gpu': 1, 'cpu': 500, 'memory': 500}, '2': {'gpu': 1, 'cpu': 500, 'memory': 500}}),
    ('two queues', 'Request more than total with same Over Quota and deserved - divide evenly', 1320,
     {'1': Q('1', gpu=S(deserved=1, fair_share=0, over_quota_weight=1, max_allowed=U, allocated=0, request=8), cpu=S(deserved=2000, fair_share=0, over_quota_weight=1, max_allowed=U, allocated=0, request=3000), memory=S(deserved=1000, fair_share=0, over_quota_weight=1, max_allowed=U, allocated=0, request=5000)), '2': Q('2', gpu=S(deserved=1, fair_share=0, over_quota_weight=1, max_allowed=U, allocated=0, request=8), cpu=S(deserved=2000, fair_share=0, over_quota_weight=1, max_allowed=U, allocated=0, request=3000), memory=S(deserved=1000, fair_share=0, over_quota_weight=1, max_allowed=U, allocated=0, request=5000))},
     {'memory': 1000, 'gpu': 10, 'cpu': 3000},
     {'1': {'gpu': 5, 'cpu': 2000, 'memory': 1000}, '2': {'gpu': 5, 'cpu': 2000, 'memory': 1000}}),
    ('two queues', 'Request more than total with different Over Quota', 1414,
     {'1': Q('1', gpu=S(deserved=250, fair_share=0, over_quota_weight=1, max_allowed=U, allocated=0, request=5000), cpu=S(deserved=250, fair_share=0, over_quota_weight=1, max_allowed=U, allocated=0, request=5000), memory=S(deserved=250, fair_share=0, over_quota_weight=1, max_allowed=U, allocated=0, request=5000)), '2': Q('2', gpu=S(deserved=150, fair_share=0, over_quota_weight=2, max_allowed=U, allocated=0, request=5000), cpu=S(deserved=150, fair_share=0, over_quota_weight=2, max_allowed=U, allocated=0, request=5000), memory=S(deserved=150, fair_share=0, over_quota_weight=2, max_allowed=U, allocated=0, request=5000))},
     {'memory': 1000, 'gpu': 1000, 'cpu': 1000},
     {'1': {'gpu': 450, 'cpu': 450, 'memory': 450}, '2': {'gpu': 550, 'cpu': 550, 'memory': 550}}),
    ('two queues', 'Request more than total with different Over Quota and max allowed', 1507,
     {'1': Q('1', gpu=S(deserved=250, fair_share=0, over_quota_weight=1, max_allowed=U, allocated=0, request=5000), cpu=S(deserved=250, fair_share=0, over_quota_weight=1, max_allowed=U, allocated=0, request=5000), memory=S(deserved=250, fair_share=0, over_quota_weight=1, max_allowed=U, allocated=0, request=5000)), '2': Q('2', gpu=S(deserved=150, fair_share=0, over_quota_weight=2, max_allowed=400, allocated=0, request=5000), cpu=S(deserved=150, fair_share=0, over_quota_weight=2, max_allowed=400, allocated=0, request=5000), memory=S(deserved=150, fair_share=0, over_quota_weight=2, max_allowed=400, allocated=0, request=5000))},
     {'memory': 1000, 'gpu': 1000, 'cpu': 1000},
     {'1': {'gpu': 600, 'cpu': 600, 'memory': 600}, '2': {'gpu': 400, 'cpu': 400, 'memory': 400}}),
    ('three queues', 'divide resource evenly queues', 1602,
     {'1': Q('1', gpu=S(deserved=1000, fair_share=0, over_quota_weight=1, max_allowed=U, allocated=0, request=10000), cpu=S(deserved=1000, fair_share=0, over_quota_weight=1, max_allowed=U, allocated=0, request=10000), memory=S(deserved=1000, fair_share=0, over_quota_weight=1, max_allowed=U, allocated=0, request=10000)), '2': Q('2', gpu=S(deserved=1000, fair_share=0, over_quota_weight=1, max_allowed=U, allocated=0, request=10000), cpu=S(deserved=1000, fair_share=0, over_quota_weight=1, max_allowed=U, allocated=0, request=10000), memory=S(deserved=1000, fair_share=0, over_quota_weight=1, max_allowed=U, allocated=0, request=10000)), '3': Q('3', gpu=S(deserved=1000, fair_share=0, over_quota_weight=1, max_allowed=U, allocated=0, request=10000), cpu=S(deserved=1000, fair_share=0, over_quota_weight=1, max_allowed=U, allocated=0, request=10000), memory=S(deserved=1000, fair_share=0, over_quota_weight=1, max_allowed=U, allocated=0, request=10000))},
     {'memory': 9999, 'gpu': 9999, 'cpu': 9999},
     {'1': {'gpu': 3333, 'cpu': 3333, 'memory': 3333}, '2': {'gpu': 3333, 'cpu': 3333, 'memory': 3333}, '3': {'gpu': 3333, 'cpu': 3333, 'memory': 3333}}),
    ('three queues', 'divide resource between queues with different over quota', 1736,
     {'1': Q('1', gpu=S(deserved=0, fair_share=0, over_quota_weight=6, max_allowed=U, allocated=0, request=10000), cpu=S(deserved=0, fair_share=0, over_quota_weight=6, max_allowed=U, allocated=0, request=10000), memory=S(deserved=0, fair_share=0, over_quota_weight=6, max_allowed=U, allocated=0, request=10000)), '2': Q('2', gpu=S(deserved=0, fair_share=0, over_quota_weight=2, max_allowed=U, allocated=0, request=10000), cpu=S(deserved=0, fair_share=0, over_quota_weight=2, max_allowed=U, allocated=0, request=10000), memory=S(deserved=0, fair_share=0, over_quota_weight=2, max_allowed=U, allocated=0, request=10000)), '3': Q('3', gpu=S(deserved=0, fair_share=0, over_quota_weight=1, max_allowed=U, allocated=0, request=10000), cpu=S(deserved=0, fair_share=0, over_quota_weight=1, max_allowed=U, allocated=0, request=10000), memory=S(deserved=0, fair_share=0, over_quota_weight=1, max_allowed=U, allocated=0, request=10000))},
     {'memory': 9999, 'gpu': 9999, 'cpu': 9999},
     {'1': {'gpu': 6666, 'cpu': 6666, 'memory': 6666}, '2': {'gpu': 2222, 'cpu': 2222, 'memory': 2222}, '3': {'gpu': 1111, 'cpu': 1111, 'memory': 1111}}),
    ('advanced scenarios', 'fractional fair share', 1872,
     {'1': Q('1', gpu=S(deserved=12, fair_share=0, over_quota_weight=12, max_allowed=U, allocated=0, request=32.54999999999996)), '2': Q('2', gpu=S(deserved=7, fair_share=0, over_quota_weight=7, max_allowed=U, allocated=0, request=9.5)), '3': Q('3', gpu=S(deserved=2, fair_share=0, over_quota_weight=2, max_allowed=2, allocated=0, request=1.65))},
     {'gpu': 45},
     {'1': {'gpu': 32.54999999999996}, '2': {'gpu': 9.5}, '3': {'gpu': 1.65}}),
    ('advanced scenarios', 'divide last remaining GPU based to similar queues', 1938,
     {'1': Q('queue-1', gpu=S(deserved=2, fair_share=0, over_quota_weight=2, max_allowed=U, allocated=0, request=3)), '2': Q('queue-2', gpu=S(deserved=2, fair_share=0, over_quota_weight=2, max_allowed=U, allocated=0, request=3))},
     {'gpu': 5},
     {'1': {'gpu': 3}, '2': {'gpu': 2}}),
]


def _two_queue_entry(request: dict[str, float], max_allowed: dict[str, float],
                     weights: dict[str, float], priority: dict[str, int]) -> list[Change]:
    changes: list[Change] = [(q, "gpu", "max_allowed", v) for q, v in max_allowed.items()]
    changes += [(q, "gpu", "over_quota_weight", v) for q, v in weights.items()]
    changes += [(q, "gpu", "request", v) for q, v in request.items()]
    return changes


def _all_cases() -> list[tuple[object, ...]]:
    cases = list(HAND_CASES)
    for name, line, total, request, max_allowed, weights, priority, remaining, shares in TWO_QUEUES_ENTRIES:
        cases.append((f"{G} / two queues / two queues / {name}", line, "gpu", "set",
                      _gpu_two_queues, _two_queue_entry(request, max_allowed, weights, priority),
                      total, remaining, shares, priority))
    return cases


CASES = _all_cases()


@pytest.mark.parametrize("case", CASES, ids=[str(c[0]) for c in CASES])
def test_set_resource_share(case: tuple[object, ...]) -> None:
    name, line, resource, call, build, changes, total, remaining, shares = case[:9]
    priorities = case[9] if len(case) > 9 else {}
    assert callable(build) and isinstance(changes, list) and isinstance(shares, dict)
    assert isinstance(resource, str) and isinstance(total, (int, float))
    assert isinstance(priorities, dict)
    queues = _apply(build(), changes)
    for queue, value in priorities.items():
        queues[queue].priority = value
    cite = Cite(FILE, "Describe(Proportion)", str(name), int(str(line)))
    if call == "set":
        left = divide_resource(float(total), 0.0, resource, queues)
    else:
        left = divide_over_quota(float(total), 0.0, queues, resource)
    assert left == remaining, cite
    for queue, expected in shares.items():
        assert queues[queue].share(resource).fair_share == expected, (cite, queue)


@pytest.mark.parametrize("case", SET_RESOURCES_SHARE,
                         ids=[f"SetResourcesShare / {c[0]} / {c[1]}" for c in SET_RESOURCES_SHARE])
def test_set_resources_share(case: tuple[str, str, int, Queues, dict[str, float],
                                         dict[str, dict[str, float]]]) -> None:
    context, name, line, queues, total, expected = case
    cite = Cite(FILE, f"Describe(SetResourcesShare) / {context}", name, line)
    queues = {k: q.copy() for k, q in queues.items()}
    set_resources_share(total, 0.0, queues)
    for queue, shares in expected.items():
        for resource in ("cpu", "memory", "gpu"):
            assert queues[queue].share(resource).fair_share == shares.get(resource, 0), (
                cite, queue, resource)


def test_get_queues_by_priority() -> None:
    """getQueuesByPriority / should return queues by priority (line 2023)."""
    queues = {q: Q(q, priority=p) for q, p in (("1", 1), ("2", 6), ("3", 2), ("4", 3), ("6", 2))}
    groups, priorities = queues_by_priority(queues)
    assert priorities == [6, 3, 2, 1]
    assert {p: sorted(g) for p, g in groups.items()} == {6: ["2"], 3: ["4"], 2: ["3", "6"],
                                                         1: ["1"]}


def test_case_names_are_unique() -> None:
    names = [str(c[0]) for c in CASES] + [f"{c[0]} / {c[1]}" for c in SET_RESOURCES_SHARE]
    assert len(names) == len(set(names))

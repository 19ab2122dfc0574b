"""KAI's resource_share tables (the proportion plugin's per-queue numbers), ported
case by case.

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092,
``pkg/scheduler/plugins/proportion/resource_share/`` (Apache-2.0):
``queue_attributes_test.go`` (Ginkgo: requestable share per resource, dominant
resource share, allocatable share, clone), ``queue_resource_share_test.go``,
``resource_quantities_test.go`` and ``resource_share_test.go`` (Go test functions and
TestCompareResources' table), one pytest case each, against ``dralab.queueing.kai.shares``
(Clone -> ``copy``, ResourceShare(name) -> ``share``; an unknown name raises KeyError
where KAI answers nil).
"""

# ruff: noqa: E501

from __future__ import annotations

from collections.abc import Callable

import pytest
from tests.peers.kai.proportion_helpers import Cite, Q, S, U

from dralab.queueing.kai.shares import (
    NO_FAIR_SHARE_DRF_MULTIPLIER,
    QueueShare,
    ResourceShare,
    add,
    compare,
    less,
    less_equal,
    less_in_at_least_one,
    quantities,
    sub,
)

QA = "resource_share/queue_attributes_test.go"
QRS = "resource_share/queue_resource_share_test.go"
RQ = "resource_share/resource_quantities_test.go"
RS = "resource_share/resource_share_test.go"
R3 = ("cpu", "memory", "gpu")


def _q(cpu: float, memory: float, gpu: float) -> dict[str, float]:
    return quantities(cpu, memory, gpu)


# --- queue_attributes_test.go -----------------------------------------------------------

REQUESTABLE = [(name, max_allowed, expected) for name, max_allowed, expected in (
    ("maxAllowed > requested", 6, 5), ("maxAllowed = requested", 5, 5),
    ("maxAllowed < requested and not UnlimitedResourceQuantity", 3, 3),
    ("maxAllowed is UnlimitedResourceQuantity", U, 5))]
REQUESTABLE_CASES = [(resource, line, name, m, e)
                     for resource, line in (("GPU", 48), ("CPU", 94), ("Memory", 140))
                     for name, m, e in REQUESTABLE]


@pytest.mark.parametrize("case", REQUESTABLE_CASES, ids=[f"GetRequestedResource / {c[0]} / {c[2]}" for c in REQUESTABLE_CASES])
def test_get_requested_resource(case: tuple[str, int, str, float, float]) -> None:
    resource, line, name, max_allowed, expected = case
    share = S(request=5, max_allowed=max_allowed)
    assert share.requestable() == expected, Cite(QA, f"QueueAttributes / GetRequestedResource / {resource}", name, line)


# (name, line, deserved, fairShare, allocated, totalCapacity, expected)
DOMINANT = [
    ("CPU is most dominant", 214, _q(1000, 1000, 1000), _q(1000, 1000, 1000), _q(500, 100, 200), {}, 500.0 / 1000.0),
    ("Memory is most dominant", 220, _q(1000, 1000, 1000), _q(1000, 1000, 1000), _q(500, 600, 0), {}, 600.0 / 1000.0),
    ("GPU is most dominant", 226, _q(1000, 1000, 1000), _q(1000, 1000, 1000), _q(500, 600, 700), {}, 700.0 / 1000.0),
    ("CPU allocated but not deserved", 232, _q(0, 1000, 1000), _q(0, 1000, 1000), _q(500, 0, 700), {}, 500.0 * NO_FAIR_SHARE_DRF_MULTIPLIER),
    ("unlimited deserved GPU means the ratio is from total capacity - CPU dominant", 238, _q(1000, 1000, U), _q(500, 1000, 1500), _q(500, 0, 700), _q(10000, 10000, 2000), 500.0 / 1000.0),
    ("unlimited deserved GPU means the ratio is from total capacity - GPU dominant", 245, _q(10000, 1000, U), _q(500, 1000, 1500), _q(500, 0, 700), _q(10000, 10000, 2000), 700.0 / 2000.0),
]


@pytest.mark.parametrize("case", DOMINANT, ids=[c[0] for c in DOMINANT])
def test_dominant_resource(case: tuple[str, int, dict[str, float], dict[str, float], dict[str, float], dict[str, float], float]) -> None:
    name, line, deserved, fair, allocated, total, expected = case
    queue = Q("q")
    for r in R3:
        share = queue.share(r)
        share.deserved, share.fair_share, share.allocated, share.max_allowed = deserved[r], fair[r], allocated[r], U
    assert queue.dominant_resource_share(total) == expected, Cite(QA, "QueueAttributes / DominantResource / test", name, line)


ALL_U = _q(U, U, U)
# (name, line, deserved, fairShare, maxAllowed, expected)
ALLOCATABLE = [
    ("maxAllowed is limiting all resources", 286, _q(1000, 1000, 1000), _q(1000, 1000, 1000), _q(500, 100, 200), _q(500, 100, 200)),
    ("maxAllowed is limiting some resources", 292, _q(1000, 1000, 1000), _q(1500, 1500, 1500), _q(2000, 600, 2000), _q(1500, 600, 1500)),
    ("maxAllowed is limiting some, deserved is dominant in other", 298, _q(2000, 1000, 1000), _q(1000, 1500, 1500), _q(3000, 600, 3000), _q(2000, 600, 1500)),
    ("maxAllowed is unlimited", 304, _q(2000, 1000, 1000), _q(1000, 1500, 1500), ALL_U, _q(2000, 1500, 1500)),
    ("deserved is unlimited maxAllowed is sometimes not", 310, ALL_U, _q(1000, 1500, 1500), _q(2000, U, 1000), _q(2000, U, 1000)),
]


@pytest.mark.parametrize("case", ALLOCATABLE, ids=[c[0] for c in ALLOCATABLE])
def test_get_allocatable_share(case: tuple[str, int, dict[str, float], dict[str, float], dict[str, float], dict[str, float]]) -> None:
    name, line, deserved, fair, max_allowed, expected = case
    queue = Q("q")
    for r in R3:
        share = queue.share(r)
        share.deserved, share.fair_share, share.max_allowed = deserved[r], fair[r], max_allowed[r]
    assert queue.allocatable() == expected, Cite(QA, "QueueAttributes / GetAllocatableShare / sanity", name, line)


def _queue_resource_share() -> QueueShare:
    """createQueueResourceShare (queue_resource_share_test.go:129)."""
    return Q("q", cpu=S(1, 2, 4, 3, 5, 7, 6), memory=S(8, 9, 11, 10, 12, 14, 13),
             gpu=S(15, 16, 18, 17, 19, 21, 20))


def test_queue_attributes_clone() -> None:
    """QueueAttributes / Clone / clone QueueAttributes struct (queue_attributes_test.go:338)."""
    orig = Q("123", title="some-name", parent="p1", children=("c1", "c2", "c3"), created=5.0)
    orig.cpu, orig.memory, orig.gpu = (_queue_resource_share().share(r) for r in R3)
    clone = orig.copy()
    assert clone == orig
    assert clone.gpu is not orig.gpu


# --- queue_resource_share_test.go ---------------------------------------------------------

def _check_resource_share() -> None:
    qrs = _queue_resource_share()
    assert qrs.share("memory") == S(8, 9, 11, 10, 12, 14, 13)


def _check_modify() -> None:
    qrs = _queue_resource_share()
    share = qrs.share("memory")
    qrs.memory.deserved = 123
    assert share.deserved == 123


def _check_unknown() -> None:
    with pytest.raises(KeyError):
        _queue_resource_share().share("unknown")


def _check_add_resource_share() -> None:
    qrs = _queue_resource_share()
    qrs.gpu.fair_share += 1
    assert qrs.gpu.fair_share == 17


def _check_set_quota() -> None:
    qrs = _queue_resource_share()
    qrs.cpu.deserved, qrs.cpu.max_allowed, qrs.cpu.over_quota_weight = 8.8, 9.9, 1.1
    assert (qrs.cpu.deserved, qrs.cpu.max_allowed, qrs.cpu.over_quota_weight) == (8.8, 9.9, 1.1)


def _getter(pick: Callable[[QueueShare], dict[str, float]], expected: tuple[float, float, float]) -> Callable[[], None]:
    def check() -> None:
        assert pick(_queue_resource_share()) == _q(*expected)
    return check


def _dominant_empty_total() -> None:
    assert _queue_resource_share().dominant_resource_share({}) == 2.5


QRS_CASES: list[tuple[str, int, Callable[[], None]]] = [
    ("TestQueueResourceShare_ResourceShare", 12, _check_resource_share),
    ("TestQueueResourceShare_ResourceShare_Modify", 24, _check_modify),
    ("TestQueueResourceShare_ResourceShareUnknownResource", 31, _check_unknown),
    ("TestQueueResourceShare_GetAllocatableShare", 37, _getter(QueueShare.allocatable, (2, 9, 16))),
    ("TestQueueResourceShare_GetFairShare", 45, _getter(QueueShare.fair_share, (2, 9, 16))),
    ("TestQueueResourceShare_GetDeservedShare", 53, _getter(QueueShare.deserved, (1, 8, 15))),
    ("TestQueueResourceShare_GetAllocatedShare", 61, _getter(QueueShare.allocated, (5, 12, 19))),
    ("TestQueueResourceShare_GetAllocatedNonPreemptible", 69, _getter(QueueShare.allocated_not_preemptible, (6, 13, 20))),
    ("TestQueueResourceShare_GetMaxAllowedShare", 77, _getter(QueueShare.max_allowed, (3, 10, 17))),
    ("TestQueueResourceShare_GetRequestShare", 85, _getter(QueueShare.request, (7, 14, 21))),
    ("TestQueueResourceShare_GetRequestedShare", 93, _getter(QueueShare.requestable, (3, 10, 17))),
    ("TestQueueResourceShare_GetDominantResourceShare", 101, _dominant_empty_total),
    ("TestQueueResourceShare_AddResourceShare", 107, _check_add_resource_share),
    ("TestQueueResourceShare_SetQuotaResources", 113, _check_set_quota),
]


@pytest.mark.parametrize("case", QRS_CASES, ids=[c[0] for c in QRS_CASES])
def test_queue_resource_share(case: tuple[str, int, Callable[[], None]]) -> None:
    name, line, check = case
    try:
        check()
    except AssertionError as error:
        raise AssertionError(str(Cite(QRS, name, name, line))) from error


# --- resource_quantities_test.go ------------------------------------------------------------

CPU, MEMORY, GPU = 111.0, 22.0, 0.5


def _rq() -> dict[str, float]:
    return _q(CPU, MEMORY, GPU)


def _rq_clone_and_modify() -> None:
    rq = _rq()
    clone = dict(rq)
    rq["memory"] = 3
    assert rq["memory"] == 3 and clone["memory"] == MEMORY


RQ_CASES: list[tuple[str, int, Callable[[], bool]]] = [
    ("TestNewResourceQuantities", 20, lambda: _rq() == {"cpu": CPU, "memory": MEMORY, "gpu": GPU}),
    ("TestEmptyResourceQuantities", 25, lambda: all(v == 0 for v in quantities().values())),
    ("TestResourceQuantitiesClone", 32, lambda: dict(_rq()) == {"cpu": CPU, "memory": MEMORY, "gpu": GPU}),
    ("TestResourceQuantitiesCloneAndModify", 38, lambda: _rq_clone_and_modify() is None),
    ("TestResourceQuantitiesAdd", 46, lambda: add(_rq(), _q(1, 2, 3)) == _q(CPU + 1, MEMORY + 2, GPU + 3)),
    ("TestResourceQuantitiesSub", 55, lambda: sub(_rq(), _q(3, 2, 1)) == _q(CPU - 3, MEMORY - 2, GPU - 1)),
    ("TestResourceQuantitiesLess", 64, lambda: less(_rq(), _q(CPU + 1, MEMORY + 1, GPU + 0.1))),
    ("TestResourceQuantitiesNotLess", 70, lambda: not less(_rq(), _q(CPU + 1, MEMORY, GPU + 0.1))),
    ("TestResourceQuantitiesLessEqual", 76, lambda: less_equal(_rq(), _q(CPU + 1, MEMORY + 1, GPU))),
    ("TestResourceQuantitiesNotLessEqual", 82, lambda: not less_equal(_rq(), _q(CPU + 1, MEMORY + 1, GPU - 0.1))),
    ("TestResourceQuantitiesLessEqualInOneResource", 88, lambda: less_in_at_least_one(_rq(), _q(CPU + 1, MEMORY, GPU - 0.1))),
    ("TestResourceQuantitiesNotLessEqualInOneResource", 94, lambda: not less_in_at_least_one(_rq(), _q(CPU, MEMORY - 1, GPU - 0.1))),
]


@pytest.mark.parametrize("case", RQ_CASES, ids=[c[0] for c in RQ_CASES])
def test_resource_quantities(case: tuple[str, int, Callable[[], bool]]) -> None:
    name, line, check = case
    assert check(), Cite(RQ, name, name, line)


COMPARE = [("sanity smaller", 112, 1.5, 2.5, -1), ("sanity bigger", 117, 2.5, 1.5, 1),
           ("equal", 122, 2.5, 2.5, 0), ("unlimited vs number", 127, U, 2.5, 1),
           ("unlimited vs number other direction", 132, 2.5, U, -1),
           ("unlimited vs unlimited", 137, U, U, 0)]


@pytest.mark.parametrize("case", COMPARE, ids=[c[0] for c in COMPARE])
def test_compare_resources(case: tuple[str, int, float, float, int]) -> None:
    name, line, left, right, expected = case
    assert compare(left, right) == expected, Cite(RQ, "TestCompareResources", name, line)


# --- resource_share_test.go ---------------------------------------------------------------------

def _resource_share() -> ResourceShare:
    """createResourceShare (resource_share_test.go:70)."""
    return S(deserved=21, fair_share=22, max_allowed=10, over_quota_weight=2, allocated=5,
             allocated_not_preemptible=4, request=17)


def _clone_and_modify() -> bool:
    share = _resource_share()
    clone = share.copy()
    share.fair_share = 33
    return share.fair_share == 33 and clone.fair_share == 22


def _unlimited(share: ResourceShare) -> ResourceShare:
    share.max_allowed = U
    return share


RS_CASES: list[tuple[str, int, Callable[[], bool]]] = [
    ("TestEmptyResource", 14, lambda: S() == ResourceShare()),
    ("TestResourceShareClone", 25, lambda: _resource_share().copy() == _resource_share()),
    ("TestCloneAndModify", 36, _clone_and_modify),
    ("TestGetRequestedShareLimited", 44, lambda: _resource_share().requestable() == 10),
    ("TestGetRequestedShareUnlimited", 50, lambda: _unlimited(_resource_share()).requestable() == 17),
    ("TestGetAllocatableShareLimited", 57, lambda: _resource_share().allocatable() == 10),
    ("TestGetAllocatableShareUnlimited", 63, lambda: _unlimited(_resource_share()).allocatable() == 22),
]


@pytest.mark.parametrize("case", RS_CASES, ids=[c[0] for c in RS_CASES])
def test_resource_share(case: tuple[str, int, Callable[[], bool]]) -> None:
    name, line, check = case
    assert check(), Cite(RS, name, name, line)

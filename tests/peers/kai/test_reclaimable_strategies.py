"""KAI's reclaim strategy tables, ported case by case.

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092,
``pkg/scheduler/plugins/proportion/reclaimable/strategies/strategies_test.go``
(Apache-2.0), one pytest case per upstream case (id = the Ginkgo context and the case
name): MaintainFairShareStrategy (``maintain_fair_share``; the reclaimee's remaining
share is its allocation, or the table's remainingResourceShare in the multi-resource
context) and GuaranteeDeservedQuotaStrategy (``guarantee_deserved_quota``, remaining =
the reclaimee's allocation).
"""

# ruff: noqa: E501

from __future__ import annotations

import pytest
from tests.peers.kai.proportion_helpers import MIN_MEMORY, Cite, Q, R, S, U

from dralab.queueing.kai.reclaimable import guarantee_deserved_quota, maintain_fair_share
from dralab.queueing.kai.shares import Quantities, QueueShare

FILE = "reclaimable/strategies/strategies_test.go"
Case = tuple[str, int, Quantities | None, QueueShare, QueueShare, Quantities | None, bool]

MAINTAIN: list[Case] = [
    ('Reclaimee has less than quota', 29, None, Q('p1', gpu=S(deserved=5, fair_share=5, allocated=0, max_allowed=U)), Q('p2', gpu=S(deserved=3, fair_share=4, allocated=1, max_allowed=U)), None, False),
    ('Reclaimee has less than fair share', 59, None, Q('p1', gpu=S(deserved=5, fair_share=5, allocated=0, max_allowed=U)), Q('p2', gpu=S(deserved=3, fair_share=4, allocated=3, max_allowed=U)), None, False),
    ('Reclaimee has exactly fair share and above quota', 89, None, Q('p1', gpu=S(deserved=5, fair_share=5, allocated=0, max_allowed=U)), Q('p2', gpu=S(deserved=1, fair_share=3, allocated=3, max_allowed=U)), None, False),
    ('Reclaimee has exactly fair share and equal to quota', 118, None, Q('p1', gpu=S(deserved=5, fair_share=5, allocated=0, max_allowed=U)), Q('p2', gpu=S(deserved=3, fair_share=3, allocated=3, max_allowed=U)), None, False),
    ('Reclaimee has more than fair share', 147, None, Q('p1', gpu=S(deserved=5, fair_share=5, allocated=0, max_allowed=U)), Q('p2', gpu=S(deserved=2, fair_share=3, allocated=4, max_allowed=U)), None, True),
]
MAINTAIN_MULTI: list[Case] = [
    ('deserved less than fair share. GPU under, CPU over, Memory over', 197, None, Q('p1'), Q('reclaimee-1', gpu=S(deserved=100, fair_share=200, max_allowed=U), cpu=S(deserved=100, fair_share=200, max_allowed=U), memory=S(deserved=100 * MIN_MEMORY, fair_share=200 * MIN_MEMORY, max_allowed=U)), {'gpu': 80, 'cpu': 220, 'memory': 220 * MIN_MEMORY}, True),
    ('deserved less than fair share. GPU under, CPU under, Memory over', 228, None, Q('p1'), Q('reclaimee-1', gpu=S(deserved=100, fair_share=200, max_allowed=U), cpu=S(deserved=100, fair_share=200, max_allowed=U), memory=S(deserved=100 * MIN_MEMORY, fair_share=200 * MIN_MEMORY, max_allowed=U)), {'gpu': 220, 'cpu': 80, 'memory': 220 * MIN_MEMORY}, True),
    ('deserved less than fair share. GPU over, CPU over, Memory under', 259, None, Q('p1'), Q('reclaimee-1', gpu=S(deserved=100, fair_share=200, max_allowed=U), cpu=S(deserved=100, fair_share=200, max_allowed=U), memory=S(deserved=100 * MIN_MEMORY, fair_share=200 * MIN_MEMORY, max_allowed=U)), {'gpu': 220, 'cpu': 220, 'memory': 80 * MIN_MEMORY}, True),
    ('deserved equal to fair share. GPU under, CPU over, Memory over', 290, None, Q('p1'), Q('reclaimee-1', gpu=S(deserved=200, fair_share=200, max_allowed=U), cpu=S(deserved=200, fair_share=200, max_allowed=U), memory=S(deserved=200 * MIN_MEMORY, fair_share=200 * MIN_MEMORY, max_allowed=U)), {'gpu': 80, 'cpu': 220, 'memory': 220 * MIN_MEMORY}, True),
    ('deserved equal to fair share. GPU over, CPU under, Memory over', 321, None, Q('p1'), Q('reclaimee-1', gpu=S(deserved=200, fair_share=200, max_allowed=U), cpu=S(deserved=200, fair_share=200, max_allowed=U), memory=S(deserved=200 * MIN_MEMORY, fair_share=200 * MIN_MEMORY, max_allowed=U)), {'gpu': 220, 'cpu': 80, 'memory': 220 * MIN_MEMORY}, True),
    ('deserved equal to fair share. GPU over, CPU over, Memory under', 352, None, Q('p1'), Q('reclaimee-1', gpu=S(deserved=200, fair_share=200, max_allowed=U), cpu=S(deserved=200, fair_share=200, max_allowed=U), memory=S(deserved=200 * MIN_MEMORY, fair_share=200 * MIN_MEMORY, max_allowed=U)), {'gpu': 220, 'cpu': 220, 'memory': 80 * MIN_MEMORY}, True),
    ('deserved equal to fair share. GPU over, CPU under, Memory under', 383, None, Q('p1'), Q('reclaimee-1', gpu=S(deserved=200, fair_share=200, max_allowed=U), cpu=S(deserved=200, fair_share=200, max_allowed=U), memory=S(deserved=200 * MIN_MEMORY, fair_share=200 * MIN_MEMORY, max_allowed=U)), {'gpu': 220, 'cpu': 120, 'memory': 120 * MIN_MEMORY}, True),
    ('deserved equal to fair share. GPU under, CPU over, Memory under', 414, None, Q('p1'), Q('reclaimee-1', gpu=S(deserved=200, fair_share=200, max_allowed=U), cpu=S(deserved=200, fair_share=200, max_allowed=U), memory=S(deserved=200 * MIN_MEMORY, fair_share=200 * MIN_MEMORY, max_allowed=U)), {'gpu': 120, 'cpu': 220, 'memory': 120 * MIN_MEMORY}, True),
    ('deserved equal to fair share. GPU under, CPU under, Memory over', 445, None, Q('p1'), Q('reclaimee-1', gpu=S(deserved=200, fair_share=200, max_allowed=U), cpu=S(deserved=200, fair_share=200, max_allowed=U), memory=S(deserved=200 * MIN_MEMORY, fair_share=200 * MIN_MEMORY, max_allowed=U)), {'gpu': 120, 'cpu': 120, 'memory': 220 * MIN_MEMORY}, True),
    ('deserved equal to fair share. GPU under, CPU under, Memory under', 476, None, Q('p1'), Q('reclaimee-1', gpu=S(deserved=200, fair_share=200, max_allowed=U), cpu=S(deserved=200, fair_share=200, max_allowed=U), memory=S(deserved=200 * MIN_MEMORY, fair_share=200 * MIN_MEMORY, max_allowed=U)), {'gpu': 120, 'cpu': 120, 'memory': 120 * MIN_MEMORY}, False),
    ('Max Allowed is lower than Deserved/FairShare', 507, None, Q('p1'), Q('reclaimee-1', gpu=S(deserved=200, fair_share=200, max_allowed=100), cpu=S(deserved=200, fair_share=200, max_allowed=100), memory=S(deserved=200 * MIN_MEMORY, fair_share=200 * MIN_MEMORY, max_allowed=100)), {'gpu': 50, 'cpu': 120, 'memory': 30 * MIN_MEMORY}, True),
]
GUARANTEE: list[Case] = [
    ('Reclaimer is above deserved quota and reclaimee above deserved quota', 559, R(0, 0, 2), Q('p1', gpu=S(deserved=1, fair_share=5, allocated=3)), Q('p2', gpu=S(deserved=1, fair_share=5, allocated=3)), None, False),
    ('Reclaimer reaches exactly deserved quota and reclaimee above deserved quota', 587, R(0, 0, 2), Q('p1', gpu=S(deserved=5, fair_share=5, allocated=3)), Q('p2', gpu=S(deserved=1, fair_share=5, allocated=4)), None, True),
    ('Reclaimer gets exactly deserved quota and reclaimee remains with exactly deserved quota', 615, R(0, 0, 2), Q('p1', gpu=S(deserved=5, fair_share=5, allocated=3)), Q('p2', gpu=S(deserved=1, fair_share=3, allocated=3)), None, True),
    ('Reclaimer gets exactly deserved quota and reclaimee goes below deserved quota', 643, R(0, 0, 2), Q('p1', gpu=S(deserved=4, fair_share=5, allocated=2)), Q('p2', gpu=S(deserved=3, fair_share=5, allocated=4), cpu=S(deserved=1, fair_share=1, allocated=0), memory=S(deserved=1, fair_share=1, allocated=0)), None, True),
    ('Reclaimer is below deserved quota and reclaimee is above deserved quota in *only one* of the resources', 679, R(0, 0, 2), Q('p1', gpu=S(deserved=5, fair_share=2, allocated=2)), Q('p2', gpu=S(deserved=1, fair_share=3, allocated=3), cpu=S(deserved=100, fair_share=100)), None, True),
    ('Reclaimer is below deserved quota and reclaimee has exactly deserved quota', 710, R(0, 0, 2), Q('p1', gpu=S(deserved=5, fair_share=2, allocated=2)), Q('p2', gpu=S(deserved=3, fair_share=3, allocated=3)), None, False),
    ('Reclaimer is below deserved quota and reclaimee is below deserved quota', 738, R(0, 0, 2), Q('p1', gpu=S(deserved=5, fair_share=2, allocated=2)), Q('p2', gpu=S(deserved=3, fair_share=2, allocated=2)), None, False),
    ('Zero quota queue gives up on all resources in favor of a starved queue', 766, R(0, 0, 2), Q('p1', gpu=S(deserved=4, fair_share=4, allocated=2)), Q('p2', gpu=S(deserved=0, fair_share=2, allocated=2)), None, True),
]

CASES = ([("Maintain Fair Share Strategy", c) for c in MAINTAIN]
         + [("Maintain Fair Share Strategy - Multi Resource", c) for c in MAINTAIN_MULTI]
         + [("Guarantee Deserved Quota Strategy", c) for c in GUARANTEE])


@pytest.mark.parametrize("context, case", CASES, ids=[f"{ctx} / {c[0]}" for ctx, c in CASES])
def test_reclaim_strategy(context: str, case: Case) -> None:
    name, line, required, reclaimer, reclaimee, remaining, expected = case
    cite = Cite(FILE, f"Reclaim strategies / {context}", name, line)
    if context.startswith("Guarantee"):
        assert required is not None
        result = guarantee_deserved_quota(required, reclaimer, reclaimee, reclaimee.allocated())
    else:
        result = maintain_fair_share(reclaimee, remaining if remaining is not None else reclaimee.allocated())
    assert result == expected, cite

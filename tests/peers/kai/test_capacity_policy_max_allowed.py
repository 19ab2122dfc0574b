"""KAI's limit (maxAllowed) check tables, ported case by case.

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092,
``pkg/scheduler/plugins/proportion/capacity_policy/max_allowed_check_test.go``
(Apache-2.0), one pytest case per upstream case: isOverLimit -> ``over_limit_resource``
(verdict and the first resource over, CPU/memory/GPU order) and resultsOverLimit ->
``over_limit`` (verdict, and the queue details where the case sets them).
"""

# ruff: noqa: E501

from __future__ import annotations

import pytest
from tests.peers.kai.proportion_helpers import Cite, Q, S, U

from dralab.queueing.kai.capacity import over_limit, over_limit_resource
from dralab.queueing.kai.model import KaiJob

FILE = "capacity_policy/max_allowed_check_test.go"
# (name, line, maxAllowed, allocated, requestedQuota, over, resource)
IS_OVER_LIMIT = [
    ('no maxAllowed',
     46,
     {'cpu': U, 'memory': U, 'gpu': U},
     {'cpu': 500, 'memory': 1, 'gpu': 1},
     {'cpu': 1000, 'memory': 1, 'gpu': 1},
     False,
     ''),
    ('no allocated equal to max allowed',
     65,
     {'cpu': 1000, 'memory': 1, 'gpu': 1},
     {},
     {'cpu': 1000, 'memory': 1, 'gpu': 1},
     False,
     ''),
    ('no allocated under max allowed',
     80,
     {'cpu': 1000, 'memory': 1, 'gpu': 1},
     {'cpu': 0, 'memory': 0, 'gpu': 0},
     {'cpu': 500, 'memory': 0.5, 'gpu': 0.5},
     False,
     ''),
    ('over max allowed in all recources',
     99,
     {'cpu': 1000, 'memory': 1, 'gpu': 1},
     {'cpu': 500, 'memory': 1, 'gpu': 1},
     {'cpu': 1000, 'memory': 1, 'gpu': 1},
     True,
     'cpu'),
    ('over max allowed only cpu',
     118,
     {'cpu': 1000, 'memory': 1, 'gpu': 1},
     {'cpu': 500, 'memory': 1, 'gpu': 1},
     {'cpu': 1000, 'memory': 0, 'gpu': 0},
     True,
     'cpu'),
    ('over max allowed only Memory',
     137,
     {'cpu': 1000, 'memory': 1, 'gpu': 1},
     {'cpu': 500, 'memory': 1, 'gpu': 1},
     {'cpu': 0, 'memory': 1, 'gpu': 0},
     True,
     'memory'),
    ('over max allowed only gpu',
     156,
     {'cpu': 1000, 'memory': 1, 'gpu': 1},
     {'cpu': 500, 'memory': 1, 'gpu': 1},
     {'cpu': 0, 'memory': 0, 'gpu': 1},
     True,
     'gpu'),
    ('over max allowed but not requesting exceeding resource',
     175,
     {'cpu': 1000, 'memory': 1, 'gpu': 1},
     {'cpu': 1500, 'memory': 1, 'gpu': 0},
     {'cpu': 0, 'memory': 0, 'gpu': 1},
     False,
     ''),
]
# (name, line, queues, job, requestedShare, schedulable[, expected QueueAllocatedResources])
RESULTS_OVER_LIMIT = [
    ('single queue - unlimited queue',
     220,
     {'queue1': Q('queue1', gpu=S(max_allowed=U, allocated=1))},
     KaiJob('job-a', 'queue1', namespace='team-a', preemptible=False),
     {'gpu': 10},
     True),
    ('single queue - limited queue - results below limit',
     246,
     {'queue1': Q('queue1', gpu=S(max_allowed=3, allocated=1))},
     KaiJob('job-a', 'queue1', namespace='team-a', preemptible=False),
     {'gpu': 2},
     True),
    ('single queue - limited queue - results above limit',
     272,
     {'queue1': Q('queue1', gpu=S(max_allowed=3, allocated=1))},
     KaiJob('job-a', 'queue1', namespace='team-a', preemptible=False),
     {'gpu': 3},
     False),
    ('single queue - limited queue - results above limit 0 allocated',
     298,
     {'queue1': Q('queue1', gpu=S(max_allowed=3, allocated=0))},
     KaiJob('job-a', 'queue1', namespace='team-a', preemptible=False),
     {'gpu': 4},
     False,
     {'cpu': 0.0, 'memory': 0.0, 'gpu': 0.0}),
    ('multiple queues - limited queues - results below limit',
     331,
     {'top-queue': Q('top-queue', children=('mid-queue',), gpu=S(max_allowed=3, allocated=2)),
      'mid-queue': Q('mid-queue', parent='top-queue', children=('leaf-queue',), gpu=S(max_allowed=3, allocated=2)),
      'leaf-queue': Q('leaf-queue', parent='mid-queue', gpu=S(max_allowed=3, allocated=2))},
     KaiJob('job-a', 'leaf-queue', namespace='team-a', preemptible=False),
     {'gpu': 1},
     True),
    ('multiple queues - limited queues - result above limit',
     383,
     {'top-queue': Q('top-queue', children=('mid-queue',), gpu=S(max_allowed=3, allocated=3)),
      'mid-queue': Q('mid-queue', parent='top-queue', children=('leaf-queue',), gpu=S(max_allowed=2, allocated=1)),
      'leaf-queue': Q('leaf-queue', parent='mid-queue', gpu=S(max_allowed=1, allocated=0))},
     KaiJob('job-a', 'leaf-queue', namespace='team-a', preemptible=False),
     {'gpu': 1},
     False),
]


@pytest.mark.parametrize("case", IS_OVER_LIMIT, ids=[c[0] for c in IS_OVER_LIMIT])
def test_is_over_max_allowed(case: tuple[str, int, dict[str, float], dict[str, float], dict[str, float], bool, str]) -> None:
    name, line, max_allowed, allocated, requested, over, resource = case
    queue = Q("q")
    for r in ("cpu", "memory", "gpu"):
        queue.share(r).max_allowed = max_allowed.get(r, 0.0)
        queue.share(r).allocated = allocated.get(r, 0.0)
    found = over_limit_resource(queue, requested)
    cite = Cite(FILE, "IsOverMaxAllowed / IsOverMaxAllowed tests", name, line)
    assert (found is not None, found or "") == (over, resource), cite


@pytest.mark.parametrize("case", RESULTS_OVER_LIMIT, ids=[c[0] for c in RESULTS_OVER_LIMIT])
def test_results_over_limit(case: tuple[object, ...]) -> None:
    name, line, queues, job, requested, expected = case[:6]
    assert isinstance(queues, dict) and isinstance(job, KaiJob) and isinstance(requested, dict)
    result = over_limit(queues, job, requested)
    cite = Cite(FILE, "resultsOverLimit / resultsOverLimit tests", str(name), int(str(line)))
    assert result.schedulable == expected, cite
    if len(case) > 6:
        assert result.details is not None and result.details.queue_allocated == case[6], cite

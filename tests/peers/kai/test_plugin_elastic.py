"""KAI's elastic plugin tables, ported case by case.

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092 (Apache-2.0),
``pkg/scheduler/plugins/elastic/elastic_test.go``:

* TestJobOrderFn: two pod groups, each one default pod set with a minAvailable and pods
  in the given statuses, compared by JobOrderFn -- here ``plugins.elastic.job_order`` on
  each session job's ``job_state`` (what ``actions.order.job_cmp`` asks after priority).
* Test_elasticPlugin_OnSessionOpen "Sets the elastic job order func": it opens the
  plugin on an empty session and asserts nothing about the order itself (no check
  follows the call): "not a decision".
"""

from __future__ import annotations

import pytest
from tests.peers.kai.plugin_helpers import Cite

from dralab.queueing.kai.framework import SessionJob, SessionTask
from dralab.queueing.kai.model import KaiJob, KaiTask, PodStatus
from dralab.queueing.kai.plugins.elastic import job_order, job_state

R: PodStatus = "Running"

# (name, line, left minAvailable, left pod statuses, right minAvailable, right statuses, want)
CASES: list[tuple[str, int, int, list[PodStatus], int, list[PodStatus], int]] = [
    ("no pods", 31, 0, [], 0, [], 0),
    ("running single pod", 55, 1, [R], 1, [R], 0),
    ("allocated pod counts as allocated", 91, 1, ["Allocated"], 1, [R], 0),
    ("bound pod counts as allocated", 127, 1, ["Bound"], 1, [R], 0),
    ("releasing pod doesn't count as allocated", 163, 1, ["Releasing"], 1, [R], -1),
    ("pod group with min pods against pod group with no pods", 199, 1, [R], 1, [], 1),
    ("pod group with less then min pods against pod group with min pods", 226, 2, [R], 2,
     [R, R], -1),
    ("pod group with less then min pods against pod group with more than min pods", 268, 2,
     [R], 2, [R, R, R], -1),
    ("pod group with min pods against pod group with more than min pods", 316, 1, [R], 1,
     [R, R], -1),
    ("pod group with min pods against pod group with less than min pods", 358, 1, [R], 3,
     [R, R], 1),
    ("pod group with more than min pods against pod group with min pods", 400, 1, [R, R], 1,
     [R], 1),
    ("pod group with more than min pods against pod group with less than min pods", 442, 1,
     [R, R], 1, [], 1),
]


def _job(name: str, minimum: int, statuses: list[PodStatus]) -> SessionJob:
    tasks = [KaiTask(name=f"{name}-{i}", job=name, status=s, node="n" if s != "Pending" else None)
             for i, s in enumerate(statuses)]
    spec = KaiJob(name=name, queue="q", min_member=minimum, tasks=tuple(tasks))
    return SessionJob(spec, [SessionTask(name, t, t.status, t.node, (), i)
                             for i, t in enumerate(tasks)])


@pytest.mark.parametrize(("name", "line", "lmin", "lpods", "rmin", "rpods", "want"), CASES,
                         ids=[c[0] for c in CASES])
def test_job_order(name: str, line: int, lmin: int, lpods: list[PodStatus], rmin: int,
                   rpods: list[PodStatus], want: int) -> None:
    cite = Cite("elastic/elastic_test.go", "TestJobOrderFn", name, line)
    left, right = _job("l", lmin, lpods), _job("r", rmin, rpods)
    assert job_order(job_state(left), job_state(right)) == want, str(cite)


def test_on_session_open() -> None:
    pytest.skip("not a decision: Test_elasticPlugin_OnSessionOpen 'Sets the elastic job "
                "order func' (line 515) opens the plugin and checks nothing after")

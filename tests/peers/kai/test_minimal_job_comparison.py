"""KAI's minimal job representatives (scheduling signatures), ported case by case.

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092,
``pkg/scheduler/actions/common/minimal_job_comparison_test.go`` (Apache-2.0), the Ginkgo
suite ``MinimalJobComparison`` (TestMinimalJobComparison): every entry of its tables,
one pytest case each (id = Describe / Context / entry), against
``actions.signatures.FailedJobs`` (MinimalJobRepresentatives): ``worth_trying`` is
IsEasierToSchedule's answer, ``failed`` is UpdateRepresentative. A job is upstream's
JobFromPodSignatureData: one pod per resource list in group "test", Pending unless the
entry gives the pod another phase.
"""

# ruff: noqa: E501

from __future__ import annotations

import pytest
from tests.peers.kai.actions_helpers import Cite

from dralab.queueing.kai.actions.signatures import FailedJobs, job_signature
from dralab.queueing.kai.framework import SessionJob, SessionTask
from dralab.queueing.kai.model import KaiJob, KaiTask, PodStatus

FILE = "common/minimal_job_comparison_test.go"
FUNCTION = "TestMinimalJobComparison (Ginkgo MinimalJobComparison)"
Mi = 1024 * 1024

# a pod: (cpu milli, memory bytes, gpus, phase)
Pod = tuple[float, float, float, PodStatus]


def cpu(milli: float, status: PodStatus = "Pending") -> Pod:
    return (milli, 0.0, 0.0, status)


def mem(mib: float) -> Pod:
    return (0.0, mib * Mi, 0.0, "Pending")


def gpu(count: float) -> Pod:
    return (0.0, 0.0, count, "Pending")


def both(milli: float, mib: float) -> Pod:
    return (milli, mib * Mi, 0.0, "Pending")


NONE: Pod = (0.0, 0.0, 0.0, "Pending")


def _job(pods: list[Pod]) -> SessionJob:
    tasks = tuple(KaiTask(f"test-{i}", "test", status=status, node="n" if status == "Running" else None,
                          cpu_milli=c, memory_bytes=m, gpus=g)
                  for i, (c, m, g, status) in enumerate(pods))
    return SessionJob(KaiJob("test", "q", tasks=tasks),
                      [SessionTask("test", t, t.status, t.node, (), i) for i, t in enumerate(tasks)])


# (id, line, the representative's pods, the job's pods, IsEasierToSchedule)
EASIER: list[tuple[str, int, list[Pod], list[Pod], bool]] = [
    ("IsEasierToSchedule/single pod/empty job", 50, [cpu(100)], [NONE], True),
    ("IsEasierToSchedule/single pod/empty representative", 55, [NONE], [cpu(100)], False),
    ("IsEasierToSchedule/single pod/equal jobs", 60, [cpu(100)], [cpu(100)], False),
    ("IsEasierToSchedule/single pod/cpu only over", 65, [cpu(100)], [cpu(200)], False),
    ("IsEasierToSchedule/single pod/cpu only under", 70, [cpu(100)], [cpu(50)], True),
    ("IsEasierToSchedule/single pod/memory only over", 75, [mem(100)], [mem(200)], False),
    ("IsEasierToSchedule/single pod/memory only under", 80, [mem(100)], [mem(50)], True),
    ("IsEasierToSchedule/single pod/cpu over memory under", 85, [both(100, 100)], [both(200, 50)], False),
    ("IsEasierToSchedule/single pod/cpu under memory over", 96, [both(100, 100)], [both(50, 200)], False),
    ("IsEasierToSchedule/single pod/gpu only over", 109, [gpu(1)], [gpu(2)], False),
    ("IsEasierToSchedule/single pod/gpu only under", 118, [gpu(2)], [gpu(1)], True),
    ("IsEasierToSchedule/single pod/gpu fraction over", 127, [gpu(0.25)], [gpu(0.5)], False),
    ("IsEasierToSchedule/single pod/gpu fraction under", 136, [gpu(0.5)], [gpu(0.25)], True),
    ("IsEasierToSchedule/multiple pods/empty representatives", 163, [NONE, NONE], [cpu(100), cpu(100)], False),
    ("IsEasierToSchedule/multiple pods/empty job", 171, [cpu(100), cpu(100)], [NONE, NONE], True),
    ("IsEasierToSchedule/multiple pods/only one pod is small, other is equal", 179, [cpu(100), cpu(100)], [cpu(100), cpu(50)], True),
    ("IsEasierToSchedule/multiple pods/total smaller, but one pod is bigger", 190, [cpu(1000), cpu(100), cpu(100)], [cpu(500), cpu(500), cpu(500)], True),
    ("IsEasierToSchedule/multiple pods, different pod statuses/representative has a failing pod", 223,
     [cpu(100), cpu(100, "Failed")], [cpu(100), cpu(100)], False),
    ("IsEasierToSchedule/multiple pods, different pod statuses/same signature, job resources have one pod running", 246,
     [cpu(100), cpu(100)], [cpu(100), cpu(100, "Failed")], True),
    ("IsEasierToSchedule/multiple pods, different pod statuses/same signature, job resources have one pod running. The running pod is bigger", 269,
     [cpu(100), cpu(100)], [cpu(100), cpu(150, "Running")], True),
]


@pytest.mark.parametrize("case", EASIER, ids=[c[0] for c in EASIER])
def test_is_easier_to_schedule(case: tuple[str, int, list[Pod], list[Pod], bool]) -> None:
    name, line, representative, job, expected = case
    failed = FailedJobs()
    failed.failed(_job(representative))
    assert failed.worth_trying(_job(job)) == expected, Cite(FILE, FUNCTION, name, line)


# (id, line, the representative's pods, the job's pods, whether the job becomes the representative)
UPDATE: list[tuple[str, int, list[Pod], list[Pod], bool]] = [
    ("UpdateRepresentative/multiple pods/only one pod is small, other is equal", 316, [cpu(100), cpu(100)], [cpu(100), cpu(50)], True),
    ("UpdateRepresentative/multiple pods/total smaller, but one pod is bigger", 327, [cpu(1000), cpu(100), cpu(100)], [cpu(500), cpu(500), cpu(500)], False),
]


@pytest.mark.parametrize("case", UPDATE, ids=[c[0] for c in UPDATE])
def test_update_representative(case: tuple[str, int, list[Pod], list[Pod], bool]) -> None:
    name, line, representative, job, expected = case
    failed = FailedJobs()
    failed.failed(_job(representative))
    other = _job(job)
    failed.failed(other)
    assert (failed.representatives[job_signature(other)] is other) == expected, Cite(FILE, FUNCTION, name, line)

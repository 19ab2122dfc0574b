"""KAI's queue order table, ported case by case.

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092,
``pkg/scheduler/plugins/proportion/queue_order/queue_order_test.go`` (Apache-2.0),
``TestGetQueueOrderResult``: one pytest case per table entry (id = its Name), comparing
``queue_order`` with upstream's expected -1/1. A job built by
createPodGroupWithGpuMemoryTask is one pending task asking numDevices shares of
gpuMemory MiB; its request counts devices * memory / minNodeGPUMemory GPUs
(``job_init_request``); an empty PodGroupInfo asks nothing.
"""

# ruff: noqa: E501

from __future__ import annotations

import pytest
from tests.peers.kai.proportion_helpers import Cite, Q, S

from dralab.queueing.kai.model import KaiTask
from dralab.queueing.kai.queue_order import LEFT_FIRST, RIGHT_FIRST, job_init_request, queue_order
from dralab.queueing.kai.shares import QueueShare

FILE = "queue_order/queue_order_test.go"


def _gpu_memory_job(name: str, devices: int, memory: int) -> tuple[KaiTask, ...]:
    return (KaiTask(f"task-{name}", name, status="Pending", gpu_memory_mib=memory, fraction_devices=devices),)


# (Name, line, lqueue, rqueue, lJobInfo tasks, rJobInfo tasks, totalResources, minNodeGPUMemory, expected)
CASES: list[tuple[str, int, QueueShare, QueueShare, tuple[KaiTask, ...], tuple[KaiTask, ...], dict[str, float], int, int]] = [
    ('test prioritization based on fair share starvation', 56,
     Q('lQueue', gpu=S(deserved=2, fair_share=99, max_allowed=-1, over_quota_weight=1, allocated=20, allocated_not_preemptible=0, request=99)),
     Q('rQueue', gpu=S(deserved=2, fair_share=2, max_allowed=-1, over_quota_weight=1, allocated=0, allocated_not_preemptible=0, request=2)),
     (), (), {}, 0, RIGHT_FIRST),
    ('test prioritization based on quota starvation, even if priority is different', 94,
     Q('lQueue', priority=1, gpu=S(deserved=2, fair_share=99, max_allowed=-1, over_quota_weight=1, allocated=20, allocated_not_preemptible=0, request=99)),
     Q('rQueue', gpu=S(deserved=2, fair_share=2, max_allowed=-1, over_quota_weight=1, allocated=0, allocated_not_preemptible=0, request=2)),
     (), (), {}, 0, RIGHT_FIRST),
    ('prioritize queue priority if queues are satisfied', 134,
     Q('lQueue', priority=1, gpu=S(deserved=2, fair_share=99, max_allowed=-1, over_quota_weight=1, allocated=20, allocated_not_preemptible=0, request=99)),
     Q('rQueue', gpu=S(deserved=2, fair_share=2, max_allowed=-1, over_quota_weight=1, allocated=3, allocated_not_preemptible=0, request=99)),
     (), (), {}, 0, LEFT_FIRST),
    ('prioritize queue priority if queues are satisfied, quota < rQueue < fairshare', 174,
     Q('lQueue', priority=1, gpu=S(deserved=2, fair_share=99, max_allowed=-1, over_quota_weight=1, allocated=20, allocated_not_preemptible=0, request=99)),
     Q('rQueue', gpu=S(deserved=2, fair_share=80, max_allowed=-1, over_quota_weight=1, allocated=3, allocated_not_preemptible=0, request=99)),
     (), (), {}, 0, LEFT_FIRST),
    ('GPU memory affects queue order - lower memory request prioritized', 214,
     Q('lQueue', gpu=S(deserved=50, fair_share=50, max_allowed=-1, over_quota_weight=1, allocated=40, allocated_not_preemptible=0, request=50)),
     Q('rQueue', gpu=S(deserved=50, fair_share=50, max_allowed=-1, over_quota_weight=1, allocated=40, allocated_not_preemptible=0, request=50)),
     _gpu_memory_job('lJob', 2, 5000), _gpu_memory_job('rJob', 2, 10000), {'gpu': 100}, 10000, LEFT_FIRST),
    ('GPU memory affects queue order - higher memory request deprioritized', 256,
     Q('lQueue', gpu=S(deserved=50, fair_share=50, max_allowed=-1, over_quota_weight=1, allocated=40, allocated_not_preemptible=0, request=50)),
     Q('rQueue', gpu=S(deserved=50, fair_share=50, max_allowed=-1, over_quota_weight=1, allocated=40, allocated_not_preemptible=0, request=50)),
     _gpu_memory_job('lJobHigh', 4, 8000), _gpu_memory_job('rJobLow', 4, 2000), {'gpu': 100}, 10000, RIGHT_FIRST),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_get_queue_order_result(case: tuple[str, int, QueueShare, QueueShare, tuple[KaiTask, ...], tuple[KaiTask, ...], dict[str, float], int, int]) -> None:
    name, line, left, right, left_tasks, right_tasks, total, min_memory, expected = case
    result = queue_order(left, right, job_init_request(left_tasks, min_memory),
                         job_init_request(right_tasks, min_memory), total)
    assert result == expected, Cite(FILE, "TestGetQueueOrderResult", name, line)

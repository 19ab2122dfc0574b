"""Our own checks of ``proportion.divide_shares``: what a KaiState's jobs count for in
their queues and the queues' ancestors, the total divided, and the units (KAI's
proportion.go createQueueResourceAttrs / updateQueuesCurrentResourceUsage /
setTotalResources). The division itself is checked by the ported upstream tables in
tests/peers/kai."""

from __future__ import annotations

import math

import pytest

from dralab.queueing.kai.model import (
    UNLIMITED,
    KaiConfig,
    KaiJob,
    KaiNode,
    KaiQueue,
    KaiState,
    KaiTask,
    QueueResource,
)
from dralab.queueing.kai.proportion import (
    allocate,
    cluster_total,
    deallocate,
    divide_shares,
    task_accepted,
    task_requested,
)

UNL = QueueResource(quota=UNLIMITED, over_quota_weight=1, limit=UNLIMITED)


def _state(*jobs: KaiJob, k_value: float = 1.0) -> KaiState:
    queues = {
        "dept": KaiQueue("dept", gpu=QueueResource(4, 1, UNLIMITED), cpu=UNL, memory=UNL),
        "a": KaiQueue("a", parent="dept", gpu=QueueResource(2, 1, UNLIMITED),
                      cpu=UNL, memory=QueueResource(1000, 1, 2000)),
        "b": KaiQueue("b", parent="dept", gpu=QueueResource(2, 1, UNLIMITED), cpu=UNL, memory=UNL),
    }
    nodes = {f"n{i}": KaiNode(f"n{i}", gpus=4, gpu_memory_mib=40000, cpu_milli=8000,
                              memory_bytes=64e9) for i in range(2)}
    return KaiState(nodes=nodes, queues=queues, jobs={j.name: j for j in jobs},
                    config=KaiConfig(k_value=k_value))


def test_allocated_and_requested_roll_up_by_status() -> None:
    tasks = (KaiTask("r", "j", status="Running", node="n0", gpus=2, cpu_milli=1000),
             KaiTask("p", "j", status="Pending", gpus=1),
             KaiTask("pl", "j", status="Pipelined", node="n1", gpus=1),
             KaiTask("rel", "j", status="Releasing", node="n1", gpus=1),
             KaiTask("g", "j", status="Gated", gpus=1))
    shares = divide_shares(_state(KaiJob("j", "a", tasks=tasks, preemptible=True)))
    for queue in ("a", "dept"):
        # Running counts as allocated and requested; Pending only as requested;
        # Pipelined, Releasing and Gated not at all at session open
        assert shares[queue].gpu.allocated == 2
        assert shares[queue].gpu.request == 3
        assert shares[queue].cpu.allocated == 1000
        assert shares[queue].gpu.allocated_not_preemptible == 0
    assert shares["b"].gpu.allocated == 0


def test_non_preemptible_allocation_is_counted_apart() -> None:
    job = KaiJob("j", "b", priority=125, tasks=(
        KaiTask("r", "j", status="Running", node="n0", gpus=1),))
    shares = divide_shares(_state(job))
    assert shares["b"].gpu.allocated_not_preemptible == 1
    assert shares["dept"].gpu.allocated_not_preemptible == 1


def test_memory_quota_is_megabytes_and_unlimited_stays_unlimited() -> None:
    shares = divide_shares(_state())
    assert shares["a"].memory.deserved == 1000 * 1e6
    assert shares["a"].memory.max_allowed == 2000 * 1e6
    assert shares["b"].memory.deserved == UNLIMITED
    assert shares["dept"].children == ("a", "b")


def test_total_and_fair_share() -> None:
    jobs = [KaiJob(f"j{q}", q, tasks=tuple(
        KaiTask(f"t{q}{i}", f"j{q}", gpus=1) for i in range(n))) for q, n in (("a", 6), ("b", 1))]
    state = _state(*jobs)
    assert cluster_total(state.nodes.values()) == {"cpu": 16000, "memory": 128e9, "gpu": 8}
    shares = divide_shares(state)
    # dept gets its 4 deserved plus the 3 more its queues ask (7 of 8); inside it b
    # gets what it asks (1) and a the rest
    assert shares["dept"].gpu.fair_share == 7
    assert shares["b"].gpu.fair_share == 1
    assert shares["a"].gpu.fair_share == 6


def test_mig_nodes_count_their_slices() -> None:
    node = KaiNode("m", mig_instances={"nvidia.com/mig-3g.20gb": 2, "nvidia.com/mig-1g.5gb": 1,
                                       "not-mig": 4})
    assert cluster_total([node])["gpu"] == 7


@pytest.mark.parametrize(("task", "expected"), [
    (KaiTask("f", "j", gpus=0.5), 0.5),
    (KaiTask("m", "j", gpu_memory_mib=2000, fraction_devices=2), 2 * 2000 / 100),
    (KaiTask("w", "j", gpus=3), 3),
    (KaiTask("mig", "j", mig={"nvidia.com/mig-2g.10gb": 2}), 4),
])
def test_pending_task_request(task: KaiTask, expected: float) -> None:
    # a gpu-memory request over KAI's minimum node GPU memory, which stays 100
    assert task_requested(task)["gpu"] == pytest.approx(expected)


def test_placed_gpu_memory_task_is_its_share_of_the_node() -> None:
    node = KaiNode("n", gpus=1, gpu_memory_mib=40000)
    task = KaiTask("m", "j", status="Running", node="n", gpu_memory_mib=10000)
    assert task_accepted(task, node)["gpu"] == 0.25


def test_allocate_and_deallocate_move_the_chain() -> None:
    job = KaiJob("j", "a", preemptible=False)
    shares = divide_shares(_state())
    allocate(shares, job, {"gpu": 1, "cpu": 500})
    assert shares["a"].gpu.allocated == shares["dept"].gpu.allocated == 1
    assert shares["dept"].gpu.allocated_not_preemptible == 1
    deallocate(shares, job, {"gpu": 1, "cpu": 500})
    assert shares["a"].gpu.allocated == shares["dept"].cpu.allocated == 0


def test_k_value_at_or_below_zero_reads_zero() -> None:
    jobs = [KaiJob("ja", "a", tasks=tuple(KaiTask(f"t{i}", "ja", gpus=1) for i in range(9)))]
    low = divide_shares(_state(*jobs, k_value=-3))
    zero = divide_shares(_state(*jobs, k_value=0))
    assert low["a"].gpu.fair_share == zero["a"].gpu.fair_share
    assert not math.isnan(low["a"].gpu.fair_share)

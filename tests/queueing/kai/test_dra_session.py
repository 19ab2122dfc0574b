"""Our own checks of DRA in a KAI session (queueing.kai.dra), beside the ported cases.

What they pin down: DRA GPUs fold in as whole GPUs (nodes from slices of a GPU driver,
pods from claims of a GPU class); a pod's claims are allocated on its node with
dralab's allocator, shared claims once; a node with DRA GPUs refuses a device-plugin GPU
pod (KAI's HasDRAGPUs rule) unless the snapshot says otherwise; eviction frees a claim
for the pod taking its place; the answer is the same on every run.
"""

from __future__ import annotations

from dralab.api.base import ObjectMeta
from dralab.api.quantity import Quantity
from dralab.api.resource import (
    AllocationResult,
    Device,
    DeviceAllocationResult,
    DeviceCapacity,
    DeviceClaim,
    DeviceClass,
    DeviceRequest,
    DeviceRequestAllocationResult,
    ExactDeviceRequest,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimSpec,
    ResourceClaimStatus,
    ResourcePool,
    ResourceSlice,
    ResourceSliceSpec,
)
from dralab.queueing.kai import dra
from dralab.queueing.kai.model import (
    KaiJob,
    KaiNode,
    KaiQueue,
    KaiState,
    KaiTask,
    QueueResource,
)
from dralab.queueing.kai.session import run_session

UNL = QueueResource(quota=-1, limit=-1, over_quota_weight=1)
GPU_CLASS = "gpu.example.com"
DRIVER = "gpu.example.com"


def _slice(node: str, devices: int, driver: str = DRIVER) -> ResourceSlice:
    return ResourceSlice(
        metadata=ObjectMeta(name=f"{node}-{driver}"),
        spec=ResourceSliceSpec(driver=driver, pool=ResourcePool(name=node, resource_slice_count=1),
                               node_name=node, devices=[
                                   Device(name=f"gpu-{i}",
                                          capacity={"memory": DeviceCapacity(value=Quantity(1))})
                                   for i in range(devices)]))


def _claim(name: str, count: int = 1, cls: str = GPU_CLASS, queue: str = "q",
           allocated: list[str] | None = None, node: str = "node0",
           reserved: list[str] | None = None) -> ResourceClaim:
    status = ResourceClaimStatus()
    if allocated is not None:
        status = ResourceClaimStatus(
            allocation=AllocationResult(devices=DeviceAllocationResult(results=[
                DeviceRequestAllocationResult(request="r", driver=DRIVER, pool=node, device=d)
                for d in allocated])),
            reserved_for=[ResourceClaimConsumerReference(api_group="", resource="pods",
                                                         name=p, uid=p)
                          for p in reserved or []])
    return ResourceClaim(
        metadata=ObjectMeta(name=name, namespace="ns", labels={"kai.scheduler/queue": queue}),
        spec=ResourceClaimSpec(devices=DeviceClaim(requests=[DeviceRequest(
            name="r", exactly=ExactDeviceRequest(device_class_name=cls,
                                                 allocation_mode="ExactCount", count=count))])),
        status=status)


def _job(name: str, *tasks: KaiTask, priority: int = 50, created: float = 0.0) -> KaiJob:
    return KaiJob(name, "q", namespace="ns", priority=priority, created=created,
                  min_member=len(tasks), tasks=tasks)


def _task(name: str, job: str, *claims: str, gpus: float = 0.0, status: str = "Pending",
          node: str | None = None) -> KaiTask:
    return KaiTask(name, job, status=status, node=node, gpus=gpus,  # type: ignore[arg-type]
                   cpu_milli=1000, memory_bytes=1e9, claims=claims)


def _state(jobs: list[KaiJob], claims: list[ResourceClaim], slices: list[ResourceSlice],
           nodes: dict[str, int] | None = None, quota: float = -1) -> KaiState:
    node_gpus = nodes or {"node0": 0}
    return KaiState(
        nodes={n: KaiNode(n, gpus=g, cpu_milli=16000, memory_bytes=64e9, max_pods=110)
               for n, g in node_gpus.items()},
        queues={"dept": KaiQueue("dept", gpu=UNL, cpu=UNL, memory=UNL),
                "q": KaiQueue("q", parent="dept", gpu=QueueResource(quota, 1, -1),
                              cpu=UNL, memory=UNL)},
        jobs={j.name: j for j in jobs},
        resource_claims={f"ns/{c.name}": c for c in claims},
        resource_slices=tuple(slices),
        device_classes={name: DeviceClass(metadata=ObjectMeta(name=name))
                        for name in (GPU_CLASS, "nic.example.com")})


def test_dra_gpus_fold_into_nodes_and_pods() -> None:
    state = _state([_job("a", _task("a-0", "a", "c1", "c2"))],
                   [_claim("c1", 2), _claim("c2", 3, cls="nic.example.com")],
                   [_slice("node0", 4), _slice("node0", 2, driver="nic.example.com")])
    folded = dra.with_dra_gpus(state)
    assert folded.nodes["node0"].gpus == 4      # only the GPU driver's devices
    assert folded.jobs["a"].tasks[0].gpus == 2  # only the GPU class's request
    assert state.nodes["node0"].gpus == 0 and state.jobs["a"].tasks[0].gpus == 0


def test_shared_claim_allocated_once_and_reserved_for_both() -> None:
    job = _job("a", _task("a-0", "a", "shared"), _task("a-1", "a", "shared"))
    # KAI counts a claim's GPUs in every pod that uses it: with one DRA GPU on the node
    # the two pods ask for two and wait
    one = run_session(_state([job], [_claim("shared", 1)], [_slice("node0", 1)]),
                      ("allocate",))
    assert [t.status for t in one.tasks] == ["Pending", "Pending"]
    result = run_session(_state([job], [_claim("shared", 1)], [_slice("node0", 2)]),
                         ("allocate",))
    assert [t.status for t in result.tasks] == ["Binding", "Binding"]
    claim = result.resource_claims["ns/shared"]
    assert claim.status.allocation is not None
    assert [r.device for r in claim.status.allocation.devices.results] == ["gpu-0"]
    assert sorted(r.name for r in claim.status.reserved_for) == ["a-0", "a-1"]


def test_claims_need_free_devices_on_the_node() -> None:
    jobs = [_job("a", _task("a-0", "a", "c1"), created=0.0),
            _job("b", _task("b-0", "b", "c2"), created=1.0)]
    # one DRA GPU on each node; both claims want it: one pod per node
    result = run_session(_state(jobs, [_claim("c1"), _claim("c2")],
                                [_slice("node0", 1), _slice("node1", 1)],
                                nodes={"node0": 0, "node1": 0}), ("allocate",))
    nodes = sorted(t.node or "" for t in result.tasks)
    assert nodes == ["node0", "node1"]
    for task, claim in (("a-0", "ns/c1"), ("b-0", "ns/c2")):
        allocation = result.resource_claims[claim].status.allocation
        assert allocation is not None
        node = result.task(task[0], task).node
        assert [r.pool for r in allocation.devices.results] == [node]


def test_device_plugin_gpu_pod_refused_on_dra_node() -> None:
    job = _job("dp", _task("dp-0", "dp", gpus=1))
    state = _state([job], [], [_slice("node0", 2)], nodes={"node0": 0, "node1": 1})
    placed = run_session(state, ("allocate",)).task("dp", "dp-0")
    assert (placed.status, placed.node) == ("Binding", "node1")
    only_dra = _state([job], [], [_slice("node0", 2)], nodes={"node0": 0})
    result = run_session(only_dra, ("allocate",))
    assert result.task("dp", "dp-0").status == "Pending"
    assert "device-plugin GPU requests cannot be scheduled on DRA-only nodes" in \
        result.unschedulable["dp"]
    only_dra.dra_nodes_refuse_device_plugin_gpus = False
    assert run_session(only_dra, ("allocate",)).task("dp", "dp-0").status == "Binding"


def test_eviction_frees_the_claim_for_the_preemptor() -> None:
    running = _job("low", _task("low-0", "low", "old", status="Running", node="node0"),
                   priority=50, created=0.0)
    pending = _job("high", _task("high-0", "high", "new"), priority=200, created=1.0)
    state = _state([running, pending],
                   [_claim("old", allocated=["gpu-0"], reserved=["low-0"]), _claim("new")],
                   [_slice("node0", 1)])
    result = run_session(state)
    assert result.task("low", "low-0").status == "Releasing"
    assert result.task("high", "high-0").status == "Pipelined"
    old, new = result.resource_claims["ns/old"], result.resource_claims["ns/new"]
    assert old.status.allocation is None and not old.status.reserved_for
    assert new.status.allocation is not None
    assert [r.device for r in new.status.allocation.devices.results] == ["gpu-0"]
    assert [r.name for r in new.status.reserved_for] == ["high-0"]
    assert run_session(state) == result   # deterministic

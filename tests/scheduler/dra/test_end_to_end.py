"""DynamicResources inside the scheduler loop (default profile)."""

from __future__ import annotations

from dralab.api.features import FeatureGates
from dralab.api.resource import ResourceClaim
from dralab.cluster import ClusterState
from dralab.scheduler.result import ScheduleResult
from dralab.scheduler.scheduler import Scheduler

from .builders import (
    GPU,
    claim,
    cluster,
    container,
    devices_of,
    gpu_class,
    gpu_nodes,
    gpus,
    node,
    pod,
    request,
    template,
)

NV = "nvidia.com/gpu"
PREEMPTION = FeatureGates.parse("DRAPreemption=true")
# kube-scheduler's FailedScheduling message when the claims fit on no node of two:
# DynamicResources' Filter says "cannot allocate all claims" (UnschedulableAndUnresolvable
# in kubernetes v1.36.2, statusUnschedulable in
# pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go), its PostFilter
# "still not schedulable", and DefaultPreemption (pkg/scheduler/framework/preemption,
# nodesWherePreemptionMightHelp) finds no node where preemption might help.
NOT_HELPFUL_MESSAGE = ("0/2 nodes are available: 2 cannot allocate all claims. still not "
                       "schedulable, preemption: 0/2 nodes are available: 2 Preemption is not "
                       "helpful for scheduling.")


def _run(state: ClusterState, seed: int = 0) -> ScheduleResult:
    return Scheduler.build(state, None, seed=seed).run()


def _allocated(state: ClusterState) -> list[ResourceClaim]:
    return [c for c in state.claims.values() if c.status.allocation is not None]


def test_template_pods_fill_the_gpus_and_the_rest_waits() -> None:
    nodes, slices = gpu_nodes(3, 2)
    state = cluster(nodes, slices, templates=[template("tpl")])
    for i in range(7):
        state.add_pod(pod(f"p{i}", templates={"gpu": "tpl"}))
    result = _run(state)
    assert len(result.placed) == 6
    [left] = result.unplaced
    assert "cannot allocate all claims" in left.message
    devices = [d for c in _allocated(state) for d in devices_of(c)]
    assert len(devices) == len(set(devices)) == 6
    for placement in result.placed:
        [entry] = placement.pod.status.resource_claim_statuses
        generated = state.claims[f"default/{entry.resource_claim_name}"]
        assert devices_of(generated)[0][0] == placement.node


def test_preemption_frees_a_gpu_held_through_a_claim() -> None:
    nodes, slices = gpu_nodes(1, 1)
    state = cluster(nodes, slices, templates=[template("tpl")], gates=PREEMPTION)
    state.add_pod(pod("low", templates={"gpu": "tpl"}, priority=1))
    assert len(_run(state).placed) == 1
    state.add_pod(pod("high", templates={"gpu": "tpl"}, priority=1000))
    result = _run(state, seed=1)
    assert [p.pod.metadata.name for p in result.placed] == ["high"]
    assert [e.pod.metadata.name for e in result.evicted] == ["low"]
    owners = {c.metadata.owner_references[0].name for c in state.claims.values()}
    assert owners == {"high"}  # the victim's generated claim is gone
    assert len(state.allocated.claims()) == 1


def test_shared_claim_and_node_affinity() -> None:
    nodes, slices = gpu_nodes(3, 1)
    state = cluster(nodes, slices, claims=[claim("shared")])
    state.add_pod(pod("a", claims={"gpu": "shared"}, nodes=["node-2"]))
    state.add_pod(pod("b", claims={"gpu": "shared"}))
    result = _run(state)
    assert {p.node for p in result.placed} == {"node-2"}
    assert devices_of(state.claims["default/shared"]) == [("node-2", "gpu-0")]


def test_extended_resource_on_a_dra_only_node() -> None:
    state = cluster([node("dra-node")], [gpus("dra-node", 4)],
                    classes=[gpu_class(GPU, extended=NV)])
    state.add_pod(pod("p", containers=[container("main", requests={NV: 2})]))
    result = _run(state)
    [placed] = result.placed
    status = placed.pod.status.extended_resource_claim_status
    assert status is not None and status.request_mappings
    special = state.claims[f"default/{status.resource_claim_name}"]
    assert len(devices_of(special)) == 2


def test_missing_claim_keeps_the_pod_waiting() -> None:
    nodes, slices = gpu_nodes(1, 1)
    state = cluster(nodes, slices)
    state.add_pod(pod("p", claims={"gpu": "later"}))
    result = _run(state)
    [left] = result.unplaced
    assert 'resourceclaim.resource.k8s.io "later" not found' in left.message


def test_runs_are_deterministic() -> None:
    def names(seed: int) -> list[tuple[str, str]]:
        nodes, slices = gpu_nodes(4, 2)
        state = cluster(nodes, slices, templates=[template("tpl")])
        for i in range(6):
            state.add_pod(pod(f"p{i}", templates={"gpu": "tpl"}))
        result = _run(state, seed)
        return sorted((p.node, p.pod.status.resource_claim_statuses[0].resource_claim_name or "")
                      for p in result.placed)

    assert names(3) == names(3)


def _two_full_nodes(gates: FeatureGates | None = None) -> ClusterState:
    """Two nodes of one GPU each, both held by low-priority pods, and a high-priority
    pod that wants a GPU."""
    nodes, slices = gpu_nodes(2, 1)
    state = cluster(nodes, slices, templates=[template("tpl")], gates=gates)
    for i in range(2):
        state.add_pod(pod(f"low-{i}", templates={"gpu": "tpl"}, priority=1))
    assert len(_run(state).placed) == 2
    state.add_pod(pod("high", templates={"gpu": "tpl"}, priority=1000))
    return state


def test_without_dra_preemption_devices_are_never_freed_and_the_message_is_upstreams() -> None:
    state = _two_full_nodes()
    result = _run(state, seed=1)
    assert not result.placed and not result.evicted
    [left] = result.unplaced
    assert left.message == NOT_HELPFUL_MESSAGE
    assert left.nominated_node is None
    assert len(state.allocated.claims()) == 2  # the low pods keep their GPUs


def test_with_dra_preemption_a_victim_frees_its_gpu() -> None:
    state = _two_full_nodes(PREEMPTION)
    result = _run(state, seed=1)
    assert [p.pod.metadata.name for p in result.placed] == ["high"]
    [victim] = result.evicted
    assert victim.pod.metadata.name in {"low-0", "low-1"}
    assert victim.node == result.placed[0].node


def test_claims_that_fit_nowhere_without_victims() -> None:
    # Two GPUs wanted, one per node: no node can ever hold the claim.
    nodes, slices = gpu_nodes(2, 1)
    for gates, preemption in ((None, "2 Preemption is not helpful for scheduling."),
                              (PREEMPTION, "2 No preemption victims found for incoming pod.")):
        state = cluster(nodes, slices, templates=[template("tpl", request(count=2))],
                        gates=gates)
        state.add_pod(pod("big", templates={"gpu": "tpl"}, priority=10))
        [left] = _run(state).unplaced
        assert left.message == (
            "0/2 nodes are available: 2 cannot allocate all claims. still not schedulable, "
            f"preemption: 0/2 nodes are available: {preemption}")

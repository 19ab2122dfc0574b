"""DynamicResources through its extension points: expected result per phase."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from dralab.api.resource import ResourceClaimConsumerReference
from dralab.cluster import ClusterState
from dralab.controllers.resourceclaims import delete_pod
from dralab.scheduler.framework import Code, CycleState
from dralab.scheduler.plugins.dynamicresources.plugin import NAME
from dralab.scheduler.plugins.nodeaffinity import NodeAffinityPlugin

from .builders import (
    GPU,
    Harness,
    claim,
    claims_of,
    cluster,
    devices_of,
    first_available,
    gpu_class,
    gpu_nodes,
    gpus,
    node,
    pod,
    request,
    template,
)

# --- PreFilter outcomes -----------------------------------------------------------------


@dataclass(frozen=True)
class PreFilterCase:
    name: str
    setup: Callable[[], ClusterState]
    pod_claims: dict[str, str]
    code: Code
    reason: str = ""


def _with_claim(*claims_: object) -> Callable[[], ClusterState]:
    def build() -> ClusterState:
        nodes, slices = gpu_nodes(1, 2)
        return cluster(nodes, slices, claims=claims_)  # type: ignore[arg-type]
    return build


FULL = [f"u{i}" for i in range(256)]
PRE_FILTER_CASES = [
    PreFilterCase("no claims", _with_claim(), {}, Code.SKIP),
    PreFilterCase("unallocated claim", _with_claim(claim("c")), {"gpu": "c"}, Code.SUCCESS),
    PreFilterCase("missing class", _with_claim(claim("c", request("gpu", "nope"))),
                  {"gpu": "c"}, Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                  "request gpu: device class nope does not exist"),
    PreFilterCase("missing subrequest class",
                  _with_claim(claim("c", first_available("gpu", ("big", GPU, 2),
                                                         ("small", "nope", 1)))),
                  {"gpu": "c"}, Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                  "request gpu/small: device class nope does not exist"),
    PreFilterCase("reservedFor full", _with_claim(claim(
        "c", allocated=[("node-0", "gpu-0")], reserved_for=FULL)), {"gpu": "c"},
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "resourceclaim in use"),
    PreFilterCase("one slot left", _with_claim(claim(
        "c", allocated=[("node-0", "gpu-0")], reserved_for=FULL[:255])), {"gpu": "c"},
        Code.SUCCESS),
    PreFilterCase("missing claim", _with_claim(), {"gpu": "c"},
                  Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                  'resourceclaim.resource.k8s.io "c" not found'),
]


@pytest.mark.parametrize("case", PRE_FILTER_CASES, ids=lambda c: c.name)
def test_pre_filter(case: PreFilterCase) -> None:
    state = case.setup()
    h = Harness(state)
    info = state.add_pod(pod("p", uid="pod-uid", claims=case.pod_claims))
    _, status = h.plugin.pre_filter(CycleState(), info, state)
    assert status.code is case.code, status
    if case.reason:
        assert status.reasons == (case.reason,)


# --- Whole cycles -----------------------------------------------------------------------


def test_template_per_pod_across_nodes() -> None:
    nodes, slices = gpu_nodes(3, 2)
    state = cluster(nodes, slices, templates=[template("tpl")])
    h = Harness(state)
    pods = [h.add(pod(f"pod-{i}", templates={"gpu": "tpl"})) for i in range(7)]
    placed = [h.schedule(p).node for p in pods]
    assert placed[:6].count("node-0") == placed[:6].count("node-1") == 2
    assert placed[6] is None
    used = set()
    for p in pods[:6]:
        [c] = claims_of(state, p)
        assert c.metadata.name and c.metadata.name.startswith(f"{p.pod.metadata.name}-gpu-")
        assert c.metadata.owner_references[0].uid == p.pod.metadata.uid
        assert c.status.reserved_for == [ResourceClaimConsumerReference(
            resource="pods", name=p.pod.metadata.name or "", uid=p.pod.metadata.uid or "")]
        [dev] = devices_of(c)
        assert dev[0] == p.pod.spec.node_name
        used.add(dev)
    assert len(used) == 6
    last = h.schedule(pods[6])
    # Without DRAPreemption a failed allocation is final for the node: kubernetes
    # v1.36.2, pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go,
    # statusUnschedulable returns UnschedulableAndUnresolvable.
    assert {s.code for s in last.statuses.values()} == {Code.UNSCHEDULABLE_AND_UNRESOLVABLE}
    assert {s.reasons for s in last.statuses.values()} == {("cannot allocate all claims",)}


def test_shared_claim_pins_its_pods_to_the_node_of_its_devices() -> None:
    nodes, slices = gpu_nodes(3, 1)
    state = cluster(nodes, slices, claims=[claim("shared", allocated=[("node-2", "gpu-0")],
                                                 on="node-2")])
    h = Harness(state)
    a = h.schedule(pod("a", claims={"gpu": "shared"}))
    b = h.schedule(pod("b", claims={"gpu": "shared"}))
    assert (a.node, b.node) == ("node-2", "node-2")
    assert a.statuses["node-0"].code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert a.statuses["node-0"].reasons == ("resourceclaim not available on the node",)
    assert a.statuses["node-0"].plugin == NAME
    shared = state.claims["default/shared"]
    assert [r.name for r in shared.status.reserved_for] == ["a", "b"]
    assert len(state.allocated.claims()) == 1


def test_unallocated_shared_claim_is_allocated_once_then_pins() -> None:
    nodes, slices = gpu_nodes(2, 1)
    state = cluster(nodes, slices, claims=[claim("shared")])
    h = Harness(state)
    first = h.schedule(pod("a", claims={"gpu": "shared"}))
    second = h.schedule(pod("b", claims={"gpu": "shared"}))
    assert first.node == second.node == "node-0"
    assert second.statuses["node-1"].reasons == ("resourceclaim not available on the node",)


def test_node_affinity_and_claims() -> None:
    nodes, slices = gpu_nodes(3, 1)
    state = cluster(nodes, slices, templates=[template("tpl")])
    h = Harness(state, filters=[NodeAffinityPlugin.create])
    a = h.schedule(pod("a", templates={"gpu": "tpl"}, nodes=["node-1", "node-2"]))
    b = h.schedule(pod("b", templates={"gpu": "tpl"}, nodes=["node-1", "node-2"]))
    c = h.schedule(pod("c", templates={"gpu": "tpl"}, nodes=["node-1", "node-2"]))
    assert (a.node, b.node, c.node) == ("node-1", "node-2", None)
    assert c.statuses["node-0"].plugin == "NodeAffinity"
    assert c.statuses["node-1"].reasons == ("cannot allocate all claims",)


def test_post_filter_deallocates_an_unreachable_unused_claim() -> None:
    nodes, slices = gpu_nodes(2, 1)
    state = cluster(nodes, slices, claims=[claim("c", allocated=[("node-0", "gpu-0")],
                                                 on="node-0")])
    h = Harness(state, filters=[NodeAffinityPlugin.create])
    p = h.add(pod("p", claims={"gpu": "c"}, nodes=["node-1"]))
    first = h.schedule(p)
    assert first.node is None
    assert first.post_filter is not None
    assert first.post_filter.reasons == ("deallocation of ResourceClaim completed",)
    assert state.claims["default/c"].status.allocation is None
    assert not state.allocated.claims()
    assert h.schedule(p).node == "node-1"


def test_post_filter_keeps_a_claim_other_pods_use() -> None:
    nodes, slices = gpu_nodes(2, 1)
    state = cluster(nodes, slices, claims=[claim("c", allocated=[("node-0", "gpu-0")],
                                                 on="node-0", reserved_for=["other"])])
    h = Harness(state, filters=[NodeAffinityPlugin.create])
    attempt = h.schedule(pod("p", claims={"gpu": "c"}, nodes=["node-1"]))
    assert attempt.post_filter is not None
    assert attempt.post_filter.reasons == ("still not schedulable",)
    assert state.claims["default/c"].status.allocation is not None


def test_reserved_for_reaches_256_then_refuses() -> None:
    nodes, slices = gpu_nodes(1, 1)
    state = cluster(nodes, slices, claims=[claim(
        "c", allocated=[("node-0", "gpu-0")], reserved_for=FULL[:255])])
    h = Harness(state)
    assert h.schedule(pod("p256", claims={"gpu": "c"})).node == "node-0"
    assert len(state.claims["default/c"].status.reserved_for) == 256
    late = h.schedule(pod("p257", claims={"gpu": "c"}))
    assert late.pre_filter is not None and late.pre_filter.reasons == ("resourceclaim in use",)


def test_unreserve_restores_the_cluster_and_is_idempotent() -> None:
    nodes, slices = gpu_nodes(1, 2)
    state = cluster(nodes, slices, templates=[template("tpl")],
                    claims=[claim("shared", allocated=[("node-0", "gpu-1")], on="node-0")])
    h = Harness(state)
    info = h.add(pod("p", templates={"gpu": "tpl"}, claims={"other": "shared"}))
    assert h.plugin.pre_enqueue(info).is_success()
    before = dict(state.claims)
    cycle = CycleState()
    h.plugin.pre_filter(cycle, info, state)
    assert h.plugin.filter(cycle, info, state.nodes["node-0"]).is_success()
    assert h.plugin.reserve(cycle, info, "node-0").is_success()
    assert len(state.allocated.claims()) == 2
    h.plugin.unreserve(cycle, info, "node-0")
    h.plugin.unreserve(cycle, info, "node-0")
    assert state.claims == before
    assert len(state.allocated.claims()) == 1


def test_reserve_without_filter_result_is_an_error() -> None:
    nodes, slices = gpu_nodes(1, 1)
    state = cluster(nodes, slices, claims=[claim("c")])
    h = Harness(state)
    info = h.add(pod("p", claims={"gpu": "c"}))
    cycle = CycleState()
    h.plugin.pre_filter(cycle, info, state)
    status = h.plugin.reserve(cycle, info, "node-0")
    assert status.code is Code.ERROR
    assert status.reasons == ("claim allocation not found for node",)


def test_broken_cel_is_an_error_not_unschedulable() -> None:
    nodes, slices = gpu_nodes(1, 1)
    state = cluster(nodes, slices, classes=[gpu_class(selectors=["device.nope("])],
                    claims=[claim("c")])
    h = Harness(state)
    attempt = h.schedule(pod("p", claims={"gpu": "c"}))
    assert attempt.statuses["node-0"].code is Code.ERROR


def test_explain_attaches_allocator_details() -> None:
    nodes, slices = gpu_nodes(1, 1)
    state = cluster(nodes, slices, claims=[claim("c", request("gpu", count=2))])
    h = Harness(state)
    info = h.add(pod("p", claims={"gpu": "c"}))
    cycle = CycleState()
    h.plugin.pre_filter(cycle, info, state)
    plain = h.plugin.filter(cycle, info, state.nodes["node-0"])
    explained = h.plugin.explain_filter(cycle, info, state.nodes["node-0"])
    assert plain.reasons == explained.reasons == ("cannot allocate all claims",)
    assert not plain.details and explained.details


def test_prioritized_list_scores_earlier_alternatives_higher() -> None:
    state = cluster([node("big"), node("small")], [gpus("big", 2), gpus("small", 1)])
    h = Harness(state)
    state.add_claim(claim("c", first_available("gpu", ("two", GPU, 2), ("one", GPU, 1))))
    attempt = h.schedule(pod("p", claims={"gpu": "c"}))
    assert attempt.node == "big"
    assert attempt.scores == {"big": 100, "small": 87}  # 8 vs 7, normalised
    [result] = devices_of(state.claims["default/c"])[:1]
    assert result[0] == "big"


def test_reschedules_deterministically() -> None:
    def run(seed: int) -> list[tuple[str | None, str | None, list[tuple[str, str]]]]:
        nodes, slices = gpu_nodes(4, 3)
        state = cluster(nodes, slices, templates=[template("tpl")])
        h = Harness(state, seed=seed)
        out = []
        for i in range(14):
            p = h.add(pod(f"p{i}", templates={"gpu": "tpl"}))
            placed = h.schedule(p).node
            names = [c.metadata.name for c in claims_of(state, p)]
            devs = [d for c in claims_of(state, p) if c.status.allocation for d in devices_of(c)]
            out.append((placed, names[0] if names else None, devs))
        return out

    assert run(5) == run(5)
    assert [r[0] for r in run(5)] == [r[0] for r in run(6)]
    assert [r[1] for r in run(5)] != [r[1] for r in run(6)]


def test_search_budget_turns_into_timed_out() -> None:
    nodes, slices = gpu_nodes(1, 2)
    state = cluster(nodes, slices, templates=[template("tpl")])
    h = Harness(state, args={"maxSteps": 1})
    attempt = h.schedule(pod("p", templates={"gpu": "tpl"}))
    status = attempt.statuses["node-0"]
    # maxSteps is dralab's own budget (upstream's filterTimeout answers Error); its
    # rejection follows the other allocation failures: final without DRAPreemption.
    assert status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.reasons == ("timed out trying to allocate devices",)


def test_cluster_changes_reach_the_shared_allocator() -> None:
    nodes, slices = gpu_nodes(1, 1)
    state = cluster(nodes, slices, templates=[template("tpl")])
    h = Harness(state)
    assert h.schedule(pod("a", templates={"gpu": "tpl"})).node == "node-0"
    assert h.schedule(pod("b", templates={"gpu": "tpl"})).node is None
    state.add_node(node("node-new", {"kubernetes.io/hostname": "node-new"}))
    state.put_slice(gpus("node-new", 1))
    assert h.schedule(pod("c", templates={"gpu": "tpl"})).node == "node-new"
    state.remove_class(GPU)
    late = h.schedule(pod("d", templates={"gpu": "tpl"}))
    assert late.pre_filter is not None
    assert late.pre_filter.reasons == ("request gpu: device class gpu does not exist",)


def test_cached_outcomes_follow_device_use() -> None:
    nodes, slices = gpu_nodes(2, 2)
    state = cluster(nodes, slices, templates=[template("tpl")])
    h = Harness(state)
    placed = [h.schedule(pod(f"p{i}", templates={"gpu": "tpl"})).node for i in range(5)]
    assert placed == ["node-0", "node-0", "node-1", "node-1", None]
    assert h.plugin.cache.total_hits > 0
    delete_pod(state, "default/p0")
    assert h.schedule(pod("p5", templates={"gpu": "tpl"})).node == "node-0"

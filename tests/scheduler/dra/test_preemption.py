"""Preemption support: removing victims frees their claims' devices in a what-if state.

Only with the DRAPreemption gate (alpha, off by default; KEP-5690). The behaviour
follows kubernetes/kubernetes master (commit 04f5fdea),
pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go: AddPod and
RemovePod return at once without the gate; with it RemovePod releases a claim once
every pod in its reservedFor is removed (never one reserved for a PodGroup) and
AddPod takes the devices back. The gate-off cases follow kubernetes v1.36.2
(PreFilterExtensions returns nil; statusUnschedulable is UnschedulableAndUnresolvable)
and test/integration/dra's testPreemptionDisabled (master): the preemptor stays
unschedulable.
"""

from __future__ import annotations

from msgspec.structs import replace

from dralab.api.features import FeatureGates
from dralab.api.resource import ResourceClaimConsumerReference
from dralab.cluster import PodInfo
from dralab.controllers.resourceclaims import delete_pod
from dralab.scheduler.framework import Code, CycleState
from dralab.scheduler.plugins.dynamicresources.plugin import NAME

from .builders import Harness, claim, cluster, gpu_nodes, pod, template

PREEMPTION = FeatureGates.parse("DRAPreemption=true")


def _full_node() -> tuple[Harness, PodInfo]:
    nodes, slices = gpu_nodes(1, 1)
    state = cluster(nodes, slices, templates=[template("tpl")], gates=PREEMPTION)
    h = Harness(state)
    victim = h.add(pod("low", templates={"gpu": "tpl"}, priority=1))
    assert h.schedule(victim).node == "node-0"
    return h, victim


def test_removing_the_victim_frees_its_gpu_on_a_clone_only() -> None:
    h, victim = _full_node()
    state = h.cluster
    high = h.add(pod("high", templates={"gpu": "tpl"}, priority=100))
    assert h.plugin.pre_enqueue(high).is_success()
    cycle = CycleState()
    _, status = h.plugin.pre_filter(cycle, high, state)
    assert status.is_success()
    node = state.nodes["node-0"]
    rejected = h.plugin.filter(cycle, high, node)
    assert rejected.code is Code.UNSCHEDULABLE  # preemption may help

    what_if = cycle.clone()
    assert h.plugin.remove_pod(what_if, high, victim, node.clone()).is_success()
    assert h.plugin.filter(what_if, high, node).is_success()
    # The real cycle and the cluster are untouched.
    assert h.plugin.filter(cycle, high, node).code is Code.UNSCHEDULABLE
    assert len(state.allocated.claims()) == 1

    # Backtracking: adding the victim back takes the GPU again.
    assert h.plugin.add_pod(what_if, high, victim, node).is_success()
    assert h.plugin.filter(what_if, high, node).code is Code.UNSCHEDULABLE


def test_preemptor_fits_after_the_victim_is_really_removed() -> None:
    h, victim = _full_node()
    state = h.cluster
    high = h.add(pod("high", templates={"gpu": "tpl"}, priority=100))
    assert h.schedule(high).node is None
    delete_pod(state, victim.key)
    assert h.schedule(high).node == "node-0"


def test_shared_claim_is_freed_only_when_all_its_pods_are_removed() -> None:
    nodes, slices = gpu_nodes(1, 1)
    state = cluster(nodes, slices, templates=[template("tpl")], claims=[claim("shared")],
                    gates=PREEMPTION)
    h = Harness(state)
    a = h.add(pod("a", claims={"gpu": "shared"}, priority=1))
    b = h.add(pod("b", claims={"gpu": "shared"}, priority=1))
    assert h.schedule(a).node == h.schedule(b).node == "node-0"
    high = h.add(pod("high", templates={"gpu": "tpl"}, priority=100))
    assert h.plugin.pre_enqueue(high).is_success()
    cycle = CycleState()
    h.plugin.pre_filter(cycle, high, state)
    node = state.nodes["node-0"]
    what_if = cycle.clone()
    h.plugin.remove_pod(what_if, high, a, node)
    assert h.plugin.filter(what_if, high, node).code is Code.UNSCHEDULABLE
    h.plugin.remove_pod(what_if, high, b, node)
    assert h.plugin.filter(what_if, high, node).is_success()
    h.plugin.add_pod(what_if, high, a, node)
    assert h.plugin.filter(what_if, high, node).code is Code.UNSCHEDULABLE


def test_claim_held_by_a_pod_group_is_not_freed() -> None:
    nodes, slices = gpu_nodes(1, 1)
    state = cluster(nodes, slices, templates=[template("tpl")], gates=PREEMPTION)
    held = claim("grouped", allocated=[("node-0", "gpu-0")])
    held = replace(held, status=replace(held.status, reserved_for=[
        ResourceClaimConsumerReference(api_group="scheduling.k8s.io", resource="podgroups",
                                       name="g", uid="group-uid")]))
    state.add_claim(held)
    h = Harness(state)
    member = h.add(pod("member", uid="m", claims={"gpu": "grouped"}))
    high = h.add(pod("high", templates={"gpu": "tpl"}, priority=100))
    assert h.plugin.pre_enqueue(high).is_success()
    cycle = CycleState()
    h.plugin.pre_filter(cycle, high, state)
    node = state.nodes["node-0"]
    h.plugin.remove_pod(cycle, high, member, node)
    assert h.plugin.filter(cycle, high, node).code is Code.UNSCHEDULABLE


def test_extensions_are_offered() -> None:
    h, _ = _full_node()
    assert h.plugin.pre_filter_extensions() is h.plugin
    assert h.plugin.name == NAME


def test_without_the_gate_there_are_no_extensions_and_rejections_are_final() -> None:
    nodes, slices = gpu_nodes(1, 1)
    h = Harness(cluster(nodes, slices, templates=[template("tpl")]))
    victim = h.add(pod("low", templates={"gpu": "tpl"}, priority=1))
    assert h.schedule(victim).node == "node-0"
    # v1.36.2: PreFilterExtensions() returns nil, so preemption never asks us.
    assert h.plugin.pre_filter_extensions() is None
    high = h.add(pod("high", templates={"gpu": "tpl"}, priority=100))
    assert h.plugin.pre_enqueue(high).is_success()
    cycle = CycleState()
    h.plugin.pre_filter(cycle, high, h.cluster)
    node = h.cluster.nodes["node-0"]
    rejected = h.plugin.filter(cycle, high, node)
    assert rejected.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert rejected.reasons == ("cannot allocate all claims",)
    # master: RemovePod returns at once without the gate; nothing is freed.
    what_if = cycle.clone()
    assert h.plugin.remove_pod(what_if, high, victim, node.clone()).is_success()
    assert h.plugin.filter(what_if, high, node).code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE

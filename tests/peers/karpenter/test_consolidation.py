"""Karpenter's consolidation tests, ported case by case.

Source: kubernetes-sigs/karpenter at 2266468104f36373ed002241afaee2d3bbc26078,
pkg/controllers/disruption/consolidation_test.go, Describe("Consolidation"). Each
test's id is the upstream Context/It (or DescribeTable/Entry) path. Upstream runs
one disruption reconcile and reads the command queue; here one loop of the
Karpenter model (``Run.deleted``: the nodes its command deletes, ``Run.launched``:
the replacement). The fixtures follow the suite's BeforeEach: NodePool with
consolidationPolicy WhenEmptyOrUnderutilized, consolidateAfter 0s, budget 100%;
nodes as test.NodeClaimAndNode makes them (allocatable from the NodeClaim status);
pods of one ReplicaSet, without requests unless the case gives them. The suite's
BeforeEach turns the SpotToSpotConsolidation gate on (``run`` here does too).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

import msgspec
import pytest

from dralab.api.codec import decode
from dralab.api.core import Pod, Taint
from dralab.autoscale.karpenter_nodepool import NodePoolSettings
from dralab.autoscale.karpenter_pdb import read_pdbs
from dralab.autoscale.karpenter_validation import ValidationWait

from .harness import (
    CAPACITY_TYPE,
    INSTANCE_TYPE,
    ZONES,
    Doc,
    InstanceType,
    Run,
    assorted,
    by_price,
    node,
    nodepool,
    pod,
    ported_ids,
)
from .harness import run as harness_run
from .test_inflight import next_round
from .upstream_cases import CONSOLIDATION


def run(*args: Any, spot_to_spot_consolidation: bool = True, **kwargs: Any) -> Run:
    """One loop as the suite's BeforeEach sets it up: SpotToSpotConsolidation on."""
    return harness_run(*args, spot_to_spot_consolidation=spot_to_spot_consolidation,
                       **kwargs)


ON_DEMAND = by_price(assorted())
SPOT = by_price(assorted(capacity_type="spot"))
LEAST, MOST = ON_DEMAND[0], ON_DEMAND[-1]


def entries(table: str) -> pytest.MarkDecorator:
    """A DescribeTable's two Entries (on-demand, spot candidate) as pytest ids."""
    return pytest.mark.parametrize("spot", [
        pytest.param(False, id=f"{table}/if the candidate is on-demand node"),
        pytest.param(True, id=f"{table}/if the candidate is spot node")])


def upstream(path: str) -> pytest.MarkDecorator:
    """One upstream It, its Context/It path as the test id."""
    return pytest.mark.parametrize("case", [pytest.param(path, id=path)])


def _types(spot: bool) -> list[InstanceType]:
    return SPOT if spot else ON_DEMAND


# -- Context("Budgets"): ten nodes of the most expensive type, 32 CPUs, 100 pods ----

def _ten() -> list[Doc]:
    return [node(f"node-{i}", MOST) for i in range(10)]


@pytest.mark.parametrize(("budget", "deleted"), [
    pytest.param("30%", 3, id="Budgets/should only allow 3 empty nodes to be disrupted"),
    pytest.param("100%", 10, id="Budgets/should allow all empty nodes to be disrupted"),
    pytest.param("0%", 0, id="Budgets/should allow no empty nodes to be disrupted"),
])
def test_budgets_empty(budget: str, deleted: int) -> None:
    settings = nodepool({"consolidationPolicy": "WhenEmptyOrUnderutilized",
                         "consolidateAfter": "0s", "budgets": [{"nodes": budget}]})
    result = run(ON_DEMAND, *_ten(), settings=settings)
    assert len(result.deleted) == deleted
    assert result.launched == []


@pytest.mark.parametrize("cpu", [
    pytest.param("100m", id="Budgets/should only allow 3 nodes to be deleted in multi node "
                            "consolidation delete"),
    pytest.param("15", id="Budgets/should only allow 3 nodes to be deleted in single node "
                          "consolidation delete"),
])
def test_budgets_busy(cpu: str) -> None:
    settings = nodepool({"consolidationPolicy": "WhenEmptyOrUnderutilized",
                         "consolidateAfter": "0s", "budgets": [{"nodes": "30%"}]})
    pods = [pod(f"p{i}", on=f"node-{i}", cpu=cpu) for i in range(10)]
    result = run(ON_DEMAND, *_ten(), *pods, settings=settings)
    assert len(result.deleted) == 3  # 7 NodeClaims left
    assert result.launched == []


# -- Context("Replace") --------------------------------------------------------------

@entries("Replace/can replace node")
def test_replace_can_replace_node(spot: bool) -> None:
    types = _types(spot)
    result = run(types, node("node", types[-1]), pod("p", on="node"))
    assert result.deleted == ["node"]
    assert len(result.launched) == 1 and result.launched[0][0] != types[-1].name


@entries("Replace/can replace nodes, considers karpenter.sh/do-not-disrupt set to true on nodes")
def test_replace_considers_do_not_disrupt_on_nodes(spot: bool) -> None:
    # "can replace nodes, considers karpenter.sh/do-not-disrupt set to true on nodes"
    types = _types(spot)
    result = run(types, node("node", types[-1]),
                 node("annotated", types[-1], cpu="5",
                      annotations={"karpenter.sh/do-not-disrupt": "true"}),
                 pod("p0", on="node", cpu="2"), pod("p1", on="node", cpu="2"),
                 pod("p2", on="annotated", cpu="2"))
    assert result.deleted == ["node"]
    assert len(result.launched) == 1  # two NodeClaims left: the annotated one and the new


@entries("Replace/can replace nodes, considers karpenter.sh/do-not-disrupt set to true on pods")
def test_replace_considers_do_not_disrupt_on_pods(spot: bool) -> None:
    # "can replace nodes, considers karpenter.sh/do-not-disrupt set to true on pods"
    types = _types(spot)
    result = run(types, node("node", types[-1]), node("node2", types[-1], cpu="5"),
                 pod("p0", on="node", cpu="2"), pod("p1", on="node", cpu="2"),
                 pod("p2", on="node2", cpu="2",
                     annotations={"karpenter.sh/do-not-disrupt": "true"}))
    assert result.deleted == ["node"]
    assert len(result.launched) == 1


# -- Replace: offerings, prices and the spot-to-spot rules ---------------------------

def fake_assorted(cpus: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64),
                  mems: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128)) -> list[InstanceType]:
    """fake.InstanceTypesAssorted in upstream's order (cpu, memory, zone, capacity type
    spot first, os linux then windows, arch amd64 then arm64): one offering each."""
    return [InstanceType(f"{cpu}-cpu-{mem}-mem-{arch}-{os}-{zone}-{ct}", cpu, mem, zone=zone,
                         capacity_type=ct, arch=arch, os=os)
            for cpu in cpus for mem in mems for zone in ZONES
            for ct in ("spot", "on-demand") for os in ("linux", "windows")
            for arch in ("amd64", "arm64")]


def _spot_by_price(types: list[InstanceType]) -> list[InstanceType]:
    """The suite's spotInstances: the spot types, cheapest first (stable)."""
    return sorted((t for t in types if t.capacity_type == "spot"), key=lambda t: t.cost)


def _one_pod_on(itype: InstanceType, types: list[InstanceType],
                settings: NodePoolSettings | None = None, gate: bool = True) -> Run:
    return run(types, node("node", itype), pod("p", on="node"), settings=settings,
               spot_to_spot_consolidation=gate)


def _min_values(count: int) -> NodePoolSettings:
    return nodepool(template={"spec": {"requirements": [
        {"key": INSTANCE_TYPE, "operator": "Exists", "minValues": count}]}})


@upstream("Replace/cannot replace spot with spot if less than minimum InstanceTypes "
          "flexibility")
def test_replace_spot_needs_minimum_flexibility(case: str) -> None:
    types = fake_assorted()[:5]
    types[0] = replace(types[0], price=0.001)
    result = _one_pod_on(_spot_by_price(types)[-1], types)
    assert result.deleted == [] and result.launched == []  # 1 cheaper spot type < 15


@upstream("Replace/cannot replace spot with spot if the spotToSpotConsolidation is disabled")
def test_replace_spot_with_spot_gate_disabled(case: str) -> None:
    result = _one_pod_on(SPOT[-1], SPOT, gate=False)
    assert result.deleted == [] and result.launched == []


@upstream("Replace/cannot replace spot with spot if it is part of the 15 cheapest instance "
          "types.")
def test_replace_spot_among_15_cheapest(case: str) -> None:
    types = fake_assorted()[:20]
    types[0] = replace(types[0], price=0.001)
    types = sorted(types, key=lambda t: t.cost)
    result = _one_pod_on(_spot_by_price(types)[1], types)
    assert result.deleted == [] and result.launched == []


def _eighteen_spot() -> list[InstanceType]:
    """The first 18 spot types of the fake, priced 1.0 + 0.1 i, the 17th at 0.001."""
    spot = [t for t in fake_assorted((1,), (1, 2)) if t.capacity_type == "spot"][:18]
    spot = [replace(t, price=round(1.0 + i * 0.1, 9)) for i, t in enumerate(spot)]
    spot[16] = replace(spot[16], price=0.001)
    return spot


@pytest.mark.parametrize("min_values", [
    pytest.param(None, id="Replace/spot to spot consolidation should order the instance types "
                          "by price before enforcing minimum flexibility."),
    pytest.param(16, id="Replace/spot to spot consolidation should consider the max of default "
                        "and minimum number of instanceTypeOptions from minValues in requirement "
                        "for truncation if minimum number of instanceTypeOptions from minValues "
                        "in requirement is greater than 15."),
    pytest.param(10, id="Replace/spot to spot consolidation should consider the default for "
                        "truncation if minimum number of instanceTypeOptions from minValues in "
                        "requirement is less than 15."),
])
def test_replace_spot_to_spot_truncation(min_values: int | None) -> None:
    spot = _eighteen_spot()
    cheapest, dearest = spot[16], spot[17]
    settings = _min_values(min_values) if min_values is not None else None
    result = _one_pod_on(dearest, spot, settings)
    assert result.deleted == ["node"]
    assert result.launched == [(cheapest.pool, 1)]
    command = result.karpenter.last_command
    assert command is not None
    count = max(15, min_values or 0)
    assert len(command.options) == count and dearest.name not in command.options
    assert set(command.options) == {t.name for t in by_price(spot)[:count]}


@upstream("Replace/should handle failing filterOutSameInstanceType correctly (without a panic) "
          "when minValues isn't satisfied")
def test_replace_filter_out_same_type_breaks_min_values(case: str) -> None:
    # Multi-node consolidation of the first two nodes would replace them with one node,
    # but filterOutSameInstanceType leaves one option (minValues 2): single-node
    # consolidation deletes one of them instead.
    current = InstanceType("current-on-demand", 5, 4, zone="test-zone-1a", price=0.5)
    other = InstanceType("other-on-demand", 5, 4, zone="test-zone-1a", price=0.4)
    settings = nodepool(template={"spec": {"requirements": [
        {"key": INSTANCE_TYPE, "operator": "Exists", "minValues": 2},
        {"key": CAPACITY_TYPE, "operator": "In", "values": ["on-demand"]}]}})
    nodes = [node(f"node-{i}", current, cpu="4") for i in range(3)]
    pods = [pod(f"p{i}", on=f"node-{min(i, 2)}", cpu="2") for i in range(4)]
    result = run([current, other], *nodes, *pods, settings=settings)
    assert len(result.deleted) == 1 and result.launched == []  # two NodeClaims left


def _filter_by_price_types() -> tuple[list[InstanceType], InstanceType]:
    # The fake's types no dearer than the candidate (spotInstances[15]); the dearer
    # ones cannot be cheaper options, and are left out to keep the Fleet small.
    types = fake_assorted((1, 2), (1, 2))
    candidate = _spot_by_price(types)[15]
    return [t for t in types if t.cost <= candidate.cost], candidate


@entries("Replace/Consolidation should fail if filterByPrice breaks the minimum requirement "
         "from the NodePools.")
def test_replace_filter_by_price_breaks_min_values(spot: bool) -> None:
    # Both entries apply the spot node (upstream's ExpectApplied takes spotNode).
    types, candidate = _filter_by_price_types()
    result = _one_pod_on(candidate, types, _min_values(16))
    assert result.deleted == [] and result.launched == []


def _priced(name: str, offerings: list[tuple[str, str, float]]) -> list[InstanceType]:
    """fake.NewInstanceType (4 CPUs, 4Gi) with offerings (capacity type, zone, price)."""
    return [InstanceType(name, 4, 4, zone=zone, capacity_type=ct, price=price,
                         pool_name=f"{name}-{zone}-{ct}") for ct, zone, price in offerings]


@upstream("Replace/won't replace node if any spot replacement is more expensive")
def test_replace_wont_if_any_spot_replacement_is_dearer(case: str) -> None:
    # WorstLaunchPrice: the spot launch may land on the 1.0 offering.
    [current] = _priced("current-on-demand", [("on-demand", "test-zone-1a", 0.5)])
    types = [current, *_priced("potential-spot-replacement", [
        ("spot", "test-zone-1a", 1.0), ("spot", "test-zone-1b", 0.2),
        ("spot", "test-zone-1c", 0.4)])]
    result = _one_pod_on(current, types)
    assert result.deleted == [] and result.launched == []


@upstream("Replace/won't replace on-demand node if on-demand replacement is more expensive")
def test_replace_wont_if_on_demand_replacement_is_dearer(case: str) -> None:
    [current] = _priced("current-on-demand", [("on-demand", "test-zone-1a", 0.5)])
    types = [current, *_priced("on-demand-replacement", [
        ("on-demand", "test-zone-1a", 0.6), ("on-demand", "test-zone-1b", 0.6),
        ("spot", "test-zone-1b", 0.2), ("spot", "test-zone-1c", 0.3)])]
    settings = nodepool(template={"spec": {"requirements": [
        {"key": CAPACITY_TYPE, "operator": "In", "values": ["on-demand"]}]}})
    result = _one_pod_on(current, types, settings)
    assert result.deleted == [] and result.launched == []


# -- Context("MinValuesPolicy"): instance types In every fake type, minValues 3 ---------

@upstream("MinValuesPolicy/should not consolidate a node by relaxing min values when policy "
          "is set to BestEffort")
def test_min_values_policy_best_effort_does_not_relax_consolidation(case: str) -> None:
    # --min-values-policy BestEffort relaxes minValues while provisioning only; the
    # replacement's options ([least]) still fail minValues 3, so there is no command.
    settings = nodepool(template={"spec": {"requirements": [
        {"key": INSTANCE_TYPE, "operator": "In",
         "values": [t.name for t in fake_assorted()], "minValues": 3}]}})
    result = run([LEAST, MOST], node("node-0", MOST, cpu="5"), pod("p0", on="node-0"),
                 settings=settings)
    assert result.deleted == [] and result.launched == []


# -- Context("Reserved Capacity"): a reserved offering of the most expensive type, at a
#    millionth of its price (ReservationCapacity 10), the ReservedCapacity gate on -----

RESERVATION_ID = "karpenter.sh/reservation-id"


def _reserved(itype: InstanceType) -> InstanceType:
    return replace(itype, capacity_type="reserved", price=itype.cost / 1_000_000.0,
                   pool_name=f"{itype.name}-reserved",
                   extra_labels=((RESERVATION_ID, f"r-{itype.name}"),))


def _launched_labels(result: Run) -> dict[str, str]:
    [(_, count)] = result.launched
    assert count == 1
    return result.node_labels(result.placed[0])


@upstream("Reserved Capacity/can consolidate from one reserved offering to another")
def test_reserved_to_reserved(case: str) -> None:
    types = [*ON_DEMAND, _reserved(MOST), _reserved(LEAST)]
    result = run(types, node("node", _reserved(MOST)), pod("p", on="node"))
    assert result.deleted == ["node"]
    labels = _launched_labels(result)
    assert labels[INSTANCE_TYPE] == LEAST.name and labels[CAPACITY_TYPE] == "reserved"
    assert labels[RESERVATION_ID] == f"r-{LEAST.name}"


@pytest.mark.parametrize("initial", [
    pytest.param("on-demand", id="Reserved Capacity/can consolidate into reserved capacity for "
                                 "the same instance pool/from on-demand"),
    pytest.param("spot", id="Reserved Capacity/can consolidate into reserved capacity for the "
                            "same instance pool/from spot")])
def test_into_reserved_for_the_same_instance_pool(initial: str) -> None:
    types = [*ON_DEMAND, *SPOT, _reserved(MOST)]
    result = run(types, node("node", MOST if initial == "on-demand" else SPOT[-1]),
                 pod("p", on="node"))
    assert result.deleted == ["node"]
    labels = _launched_labels(result)
    assert labels[INSTANCE_TYPE] == MOST.name and labels[CAPACITY_TYPE] == "reserved"
    assert labels[RESERVATION_ID] == f"r-{MOST.name}"


# -- PodDisruptionBudgets ------------------------------------------------------------

def pdb(namespace: str = "default", status: bool = True,
        policy: str | None = None) -> Doc:
    """test.PodDisruptionBudget: app=test pods, maxUnavailable 0; ``status``: upstream's
    counted status (0 disruptions allowed); without it the field is absent (0 too)."""
    spec: Doc = {"maxUnavailable": 0, "selector": {"matchLabels": {"app": "test"}}}
    if policy is not None:
        spec["unhealthyPodEvictionPolicy"] = policy
    doc: Doc = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                "metadata": {"name": "pdb", "namespace": namespace}, "spec": spec}
    if status:
        doc["status"] = {"observedGeneration": 1, "disruptionsAllowed": 0,
                         "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1}
    return doc


def _not_ready(doc: Doc) -> Doc:
    doc["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
    return doc


@entries("Replace/can replace nodes, considers PDB")
def test_replace_considers_pdb(spot: bool) -> None:
    types = _types(spot)
    pods = [pod(f"p{i}", on="node") for i in range(3)]
    result = run(types, node("node", types[-1]), *pods, pdb())
    assert result.deleted == [] and result.launched == []


@entries("Replace/can replace nodes, considers PDB policy")
def test_replace_considers_pdb_policy(spot: bool) -> None:
    # AlwaysAllow: the budget does not stop the eviction of pods that are not Ready.
    types = _types(spot)
    pods = [_not_ready(pod(f"p{i}", on="node")) for i in range(3)]
    result = run(types, node("node", types[-1]), *pods, pdb(policy="AlwaysAllow"))
    assert result.deleted == ["node"] and len(result.launched) == 1


@entries("Replace/can replace nodes, PDB namespace must match")
def test_replace_pdb_namespace_must_match(spot: bool) -> None:
    types = _types(spot)
    result = run(types, node("node", types[-1]), pod("p", on="node"), pdb("other-namespace"))
    assert result.deleted == ["node"] and len(result.launched) == 1


@upstream("Delete/can delete nodes, considers PDB")
def test_delete_considers_pdb(case: str) -> None:
    # Only p2 (on node-1) is covered: node-0, with more pods, goes.
    pods = [pod(f"p{i}", on="node-0" if i < 2 else "node-1",
                labels=None if i == 2 else {"other": "pod"}) for i in range(3)]
    result = run(ON_DEMAND, *_two(*pods), pdb())
    assert result.deleted == ["node-0"] and result.launched == []


@upstream("Delete/does not consolidate nodes with pods with blocking PDBs when the NodePool's "
          "TerminationGracePeriod is not nil")
def test_delete_blocking_pdbs_with_termination_grace_period(case: str) -> None:
    # A grace period only lets eventual disruption (drift, expiration) past blocking
    # budgets; consolidation is graceful.
    result = run(ON_DEMAND, *_two(*_three_pods()), pdb(status=False))
    assert result.deleted == [] and result.launched == []


# -- Context("Delete"): two nodes of the least expensive type, 32 CPUs, 100 pods -----

def _two(*pods: Doc, annotate: int | None = None) -> list[Doc]:
    nodes = [node(f"node-{i}", LEAST, annotations={"karpenter.sh/do-not-disrupt": "true"}
                  if annotate == i else None) for i in range(2)]
    return [*nodes, *pods]


def _three_pods(annotations: dict[int, dict[str, str]] | None = None,
                owner_less: int | None = None) -> list[Doc]:
    annotations = annotations or {}
    return [pod(f"p{i}", on="node-0" if i < 2 else "node-1", annotations=annotations.get(i),
                owner=None if owner_less == i else "ReplicaSet") for i in range(3)]


@upstream('Delete/can delete nodes')
def test_delete_can_delete_nodes(case: str) -> None:
    result = run(ON_DEMAND, *_two(*_three_pods()))
    assert result.deleted == ["node-1"] and result.launched == []


@upstream('Delete/can delete nodes, when non-Karpenter capacity can fit pods')
def test_delete_when_non_karpenter_capacity_can_fit_pods(case: str) -> None:
    # "can delete nodes, when non-Karpenter capacity can fit pods"
    pods = [pod(f"p{i}", on="node-0") for i in range(3)]
    result = run(ON_DEMAND, node("node-0", LEAST), node("unmanaged", None), *pods)
    assert result.deleted == ["node-0"] and result.launched == []


@upstream('Delete/can delete nodes, considers karpenter.sh/do-not-disrupt set to true on nodes')
def test_delete_considers_do_not_disrupt_on_nodes(case: str) -> None:
    result = run(ON_DEMAND, *_two(*_three_pods(), annotate=1))
    assert result.deleted == ["node-0"] and result.launched == []


@upstream('Delete/can delete nodes, considers karpenter.sh/do-not-disrupt set to true on pods')
def test_delete_considers_do_not_disrupt_on_pods(case: str) -> None:
    pods = _three_pods({2: {"karpenter.sh/do-not-disrupt": "true"}})
    result = run(ON_DEMAND, *_two(*pods))
    assert result.deleted == ["node-0"] and result.launched == []


@upstream("Delete/does not consolidate nodes with karpenter.sh/do-not-disrupt set to true on pods when the NodePool's TerminationGracePeriod is not nil")  # noqa: E501 (the upstream case name)
def test_delete_do_not_disrupt_pods_with_termination_grace_period(case: str) -> None:
    # "does not consolidate nodes with karpenter.sh/do-not-disrupt set to true on pods when
    # the NodePool's TerminationGracePeriod is not nil": a grace period only lets
    # eventual disruption (drift, expiration) past blocking pods; consolidation is
    # graceful, so the model (which has no eventual disruption) gives the same answer.
    dnd = {"karpenter.sh/do-not-disrupt": "true"}
    result = run(ON_DEMAND, *_two(*_three_pods({0: dnd, 1: dnd, 2: dnd})))
    assert result.deleted == [] and result.launched == []


@upstream('Delete/does not consolidate nodes with pods that have a duration-based do-not-disrupt annotation that is still active')  # noqa: E501 (the upstream case name)
def test_delete_duration_do_not_disrupt_still_active(case: str) -> None:
    # "does not consolidate nodes with pods that have a duration-based do-not-disrupt
    # annotation that is still active"
    pods = _three_pods({2: {"karpenter.sh/do-not-disrupt": "2m"}})
    result = run(ON_DEMAND, *_two(*pods))
    assert result.deleted == ["node-0"] and result.launched == []


@upstream("Delete/can consolidate nodes after duration-based do-not-disrupt annotation expires")
def test_delete_after_duration_do_not_disrupt_expires(case: str) -> None:
    # Every pod started at the loops' clock 0 with a 2m do-not-disrupt: nothing at 0,
    # a command once the clock is three minutes on.
    start = "2026-01-01T00:00:00Z"
    pods = _three_pods({i: {"karpenter.sh/do-not-disrupt": "2m"} for i in range(3)})
    for doc in pods:
        doc["status"]["startTime"] = start
    first = run(ON_DEMAND, *_two(*pods), clock_epoch=datetime.fromisoformat(
        start.replace("Z", "+00:00")).timestamp())
    assert first.deleted == [] and first.launched == []
    later = first.karpenter.loop([], 180.0)
    assert len(later.scale_downs) == 1


@upstream('Delete/can delete nodes, considers invalid do-not-disrupt annotation format as not blocking')  # noqa: E501 (the upstream case name)
def test_delete_invalid_do_not_disrupt_is_not_blocking(case: str) -> None:
    # "can delete nodes, considers invalid do-not-disrupt annotation format as not blocking"
    pods = _three_pods({2: {"karpenter.sh/do-not-disrupt": "invalid-format"}})
    result = run(ON_DEMAND, *_two(*pods))
    assert result.deleted == ["node-1"] and result.launched == []


@upstream('Delete/can delete nodes, evicts pods without an ownerRef')
def test_delete_evicts_pods_without_an_owner_ref(case: str) -> None:
    result = run(ON_DEMAND, *_two(*_three_pods(owner_less=2)))
    assert result.deleted == ["node-1"] and result.launched == []


@upstream('Delete/should not consolidate pods onto a destination node that is under its consolidateAfter window')  # noqa: E501 (the upstream case name)
def test_delete_not_onto_a_destination_under_consolidate_after(case: str) -> None:
    # "should not consolidate pods onto a destination node that is under its
    # consolidateAfter window": nothing within the minute, node-1 goes after two.
    settings = nodepool({"consolidationPolicy": "WhenEmptyOrUnderutilized",
                         "consolidateAfter": "1m", "budgets": [{"nodes": "100%"}]})
    first = run(ON_DEMAND, *_two(*_three_pods()), settings=settings)
    assert first.deleted == [] and first.launched == []
    later = first.karpenter.loop([], 120.0)
    assert sorted(d.node for d in later.scale_downs) == ["node-1"]
    assert later.scale_ups == ()


@upstream('Delete/should replace a node with a cheaper one even when consolidateAfter has not expired')  # noqa: E501 (the upstream case name)
def test_delete_replace_cheaper_after_consolidate_after(case: str) -> None:
    # "should replace a node with a cheaper one even when consolidateAfter has not
    # expired": upstream steps the clock two minutes before reconciling.
    settings = nodepool({"consolidationPolicy": "WhenEmptyOrUnderutilized",
                         "consolidateAfter": "1m", "budgets": [{"nodes": "100%"}]})
    first = run(ON_DEMAND, node("node", MOST), pod("p", on="node"), settings=settings)
    later = first.karpenter.loop([], 120.0)
    assert [d.node for d in later.scale_downs] == ["node"]
    assert len(later.scale_ups) == 1 and later.scale_ups[0].pool != MOST.name


@upstream('Delete/can delete nodes with a permanently pending pod')
def test_delete_with_a_permanently_pending_pod(case: str) -> None:
    # "can delete nodes with a permanently pending pod": a pod selecting a label no
    # node or instance type has stays pending and blocks nothing.
    pending = pod("pending", spec={"nodeSelector": {"non-existent": "node-label"}})
    result = run(ON_DEMAND, *_two(*_three_pods(), pending))
    assert result.deleted == ["node-1"] and result.launched == []
    assert result.pending == ["default/pending"]


@upstream("Delete/won't delete nodes if it would make a non-pending pod go pending")
def test_delete_wont_make_a_non_pending_pod_go_pending(case: str) -> None:
    # "won't delete nodes if it would make a non-pending pod go pending": the pods
    # select a label only their own node has.
    nodes = [node("node-0", LEAST, labels={"foo": "1"}), node("node-1", LEAST, labels={"foo": "2"})]
    pods = [pod(f"p{i}", on="node-0" if i < 2 else "node-1",
                spec={"nodeSelector": {"foo": "1" if i < 2 else "2"}}) for i in range(3)]
    result = run(ON_DEMAND, *nodes, *pods)
    assert result.deleted == [] and result.launched == []


# -- Node initialization (Delete) ------------------------------------------------------

@upstream("Delete/won't delete node if it would require pods to schedule on an uninitialized "
          "node")
def test_delete_wont_schedule_onto_an_uninitialized_node(case: str) -> None:
    # node-0 is left uninitialized: it is no candidate, and node-1's pod would only
    # fit there ("would schedule against uninitialized nodeclaim").
    nodes = [node("node-0", LEAST, initialized=False), node("node-1", LEAST)]
    result = run(ON_DEMAND, *nodes, *_three_pods())
    assert result.deleted == [] and result.launched == []


def _fake_type(name: str, cpu: int, memory_gi: int, pods: int) -> list[InstanceType]:
    """fake.NewInstanceType with its default offerings (spot in zones 1-2, on-demand in
    zones 1-3), priced from its resources; the first is the one NodeClaims label."""
    offerings = [("spot", "test-zone-1"), ("spot", "test-zone-2"), ("on-demand", "test-zone-1"),
                 ("on-demand", "test-zone-2"), ("on-demand", "test-zone-3")]
    return [InstanceType(name, cpu, memory_gi, pods, zone, ct, pool_name=f"{name}-{zone}-{ct}")
            for ct, zone in offerings]


@upstream("Delete/should consider initialized nodes before uninitialized nodes")
def test_delete_initialized_nodes_before_uninitialized(case: str) -> None:
    # 100 nodes of the default type, each with a 2-CPU pod, one initialized (upstream
    # picks it at random); the small node's pod goes to that one's spare CPU.
    default = _fake_type("default-instance-type", 3, 3, 110)
    small = _fake_type("small-instance-type", 1, 1, 10)
    chosen = 37
    nodes = [node(f"node-{i}", default[0], cpu="3", memory="3Gi", initialized=i == chosen)
             for i in range(100)]
    pods = [pod(f"p{i}", on=f"node-{i}", cpu="2", memory="2Gi") for i in range(100)]
    result = run([*default, *small], *nodes, *pods,
                 node("consolidatable", small[0], cpu="1", memory="1Gi"),
                 pod("consolidatable-pod", on="consolidatable", cpu="1", memory="1Gi"))
    assert result.deleted == ["consolidatable"] and result.launched == []


# -- Context("Multi-NodeClaim"): three nodes of the most expensive type -------------

@entries("Multi-NodeClaim/can merge 3 nodes into 1")
def test_multi_can_merge_3_nodes_into_1(spot: bool) -> None:
    types = _types(spot)
    nodes = [node(f"node-{i}", types[-1]) for i in range(3)]
    pods = [pod(f"p{i}", on=f"node-{i}") for i in range(3)]
    result = run(types, *nodes, *pods)
    assert result.deleted == ["node-0", "node-1", "node-2"]
    assert len(result.launched) == 1 and result.launched[0][1] == 1


@upstream('Multi-NodeClaim/can merge 3 nodes into 1 if the candidates have both spot and on-demand')
def test_multi_can_merge_3_nodes_into_1_with_spot_and_on_demand(case: str) -> None:
    # "can merge 3 nodes into 1 if the candidates have both spot and on-demand"
    # The fake's types, on-demand and spot: the replacement NodeClaim (on-demand and
    # spot allowed) is held to spot, so it needs the spot offerings.
    types = [*ON_DEMAND, *SPOT]
    nodes = [node("node-0", MOST), node("node-1", MOST), node("node-2", SPOT[-1])]
    pods = [pod(f"p{i}", on=f"node-{i}") for i in range(3)]
    result = run(types, *nodes, *pods)
    assert result.deleted == ["node-0", "node-1", "node-2"]
    assert len(result.launched) == 1
    assert result.launched[0][0] in {t.pool for t in SPOT}


@entries("Multi-NodeClaim/won't merge 2 nodes into 1 of the same type")
def test_multi_wont_merge_2_nodes_into_1_of_the_same_type(spot: bool) -> None:
    types = _types(not spot)  # upstream's Ternary picks the other capacity type
    least = types[0]
    nodes = [node("node-0", least), node("node-1", least)]
    pods = [pod("p0", on="node-0"), pod("p1", on="node-1"), pod("p2", on="node-1")]
    result = run(types, *nodes, *pods)
    assert result.deleted == ["node-0"] and result.launched == []


# -- Context("Topology Consideration"): zone 1 and 3 cheapest, zone 2 most expensive,
#    one CPU allocatable each ---------------------------------------------------------

ZONED = by_price([*assorted("test-zone-1"), *assorted("test-zone-2"),
                  *assorted("test-zone-3")])


def _cheapest(zone: str) -> InstanceType:
    return next(t for t in ZONED if t.zone == zone)


def _dearest(zone: str) -> InstanceType:
    return [t for t in ZONED if t.zone == zone][-1]


@upstream('Topology Consideration/can replace node maintaining zonal topology spread')
def test_topology_can_replace_node_maintaining_zonal_topology_spread(case: str) -> None:
    labels = {"app": "test-zonal-spread"}
    spread = {"topologySpreadConstraints": [{
        "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
        "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": labels}}]}
    nodes = [node("node-0", _cheapest("test-zone-1"), cpu="1"),
             node("node-1", _dearest("test-zone-2"), cpu="1"),
             node("node-2", _cheapest("test-zone-3"), cpu="1")]
    pods = [pod(f"p{i}", on=f"node-{i}", cpu="1", labels=labels, spec=spread)
            for i in range(3)]
    result = run(ZONED, *nodes, *pods)
    assert result.deleted == ["node-1"]
    assert len(result.launched) == 1
    new = next(t for t in ZONED if t.name == result.launched[0][0])
    assert new.zone == "test-zone-2"  # the skew stays 1, 1, 1


@upstream("Topology Consideration/won't delete node if it would violate pod anti-affinity")
def test_topology_wont_delete_node_if_it_would_violate_pod_anti_affinity(case: str) -> None:
    anti = {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "test"}},
         "topologyKey": "kubernetes.io/hostname"}]}}}
    nodes = [node("node-0", _cheapest("test-zone-1"), cpu="1"),
             node("node-1", _cheapest("test-zone-2"), cpu="1"),
             node("node-2", _cheapest("test-zone-3"), cpu="1")]
    pods = [pod(f"p{i}", on=f"node-{i}", cpu="1", spec=anti) for i in range(3)]
    result = run(ZONED, *nodes, *pods)
    assert result.deleted == [] and result.launched == []


# -- Context("Preferences"): upstream runs these with --preference-policy=Ignore, which
#    is the model's only behaviour (it places pods by Filter plugins; preferred
#    affinities are Score plugins). Karpenter's default, Respect, is a known difference.

@upstream('Preferences/should consolidate a node through deletion when ignoring preferences')
def test_preferences_deletion_when_ignoring_preferences(case: str) -> None:
    anti = {"affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "foo"}},
                                          "topologyKey": "kubernetes.io/hostname"}}]}}}
    nodes = [node(f"node-{i}", LEAST, cpu="5") for i in range(2)]
    pods = [pod(f"p{i}", on="node-0" if i < 2 else "node-1", owner=None,
                labels={"app": "foo"}, spec=anti) for i in range(3)]
    result = run(ON_DEMAND, *nodes, *pods)
    assert result.deleted == ["node-1"] and result.launched == []


@upstream('Preferences/should consolidate a node through replacement when ignoring preferences')
def test_preferences_replacement_when_ignoring_preferences(case: str) -> None:
    prefer = {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "preference": {"matchExpressions": [
            {"key": "node.kubernetes.io/instance-type", "operator": "In",
             "values": [MOST.name]}]}}]}}}
    result = run(ON_DEMAND, node("node", MOST), pod("p", on="node", owner=None,
                                                     labels={"app": "foo"}, spec=prefer))
    assert result.deleted == ["node"]
    assert len(result.launched) == 1 and result.launched[0][0] != MOST.name


# -- Context("TTL"): the 15 s validation wait, what arrives during it an input ---------

def run_validated(types: list[InstanceType], *objects: Doc, arrive: Sequence[Doc] = ()
                  ) -> Run:
    """One consolidation loop whose command waits for validation (the TTL contexts' real
    validator) while ``arrive`` (pods, bound or pending, and PodDisruptionBudgets) comes."""
    model = run(types, *objects, consolidation=False).karpenter
    arrivals = [decode(d) for d in arrive]
    model.consolidation = True
    model.validation_wait = ValidationWait(
        tuple(o for o in arrivals if isinstance(o, Pod)), read_pdbs(arrivals))
    return Run(model, model.loop([], 0.0))


TTL_NODES = ("node-0", "node-1")


@upstream("TTL/should wait for the node TTL for non-empty nodes before consolidating")
def test_ttl_wait_non_empty(case: str) -> None:
    result = run_validated(ON_DEMAND, *_two(*_three_pods()))
    # After the wait the command still holds: the node with one pod goes.
    assert result.deleted == ["node-1"] and result.launched == []


@upstream("TTL/should not consolidate if the action picks different instance types after the "
          "node TTL wait")
def test_ttl_different_instance_types(case: str) -> None:
    objects = (node("node-0", MOST), pod("p", on="node-0", cpu="1"))
    assert run(ON_DEMAND, *objects).deleted == ["node-0"]  # replaced without a wait
    result = run_validated(ON_DEMAND, *objects, arrive=[pod("p2", on="node-0", cpu="1")])
    assert result.deleted == [] and result.launched == []


@upstream("TTL/should not consolidate if the action becomes invalid during the node TTL wait")
def test_ttl_action_becomes_invalid(case: str) -> None:
    blocking = pod("p", on="node-0", annotations={"karpenter.sh/do-not-disrupt": "true"})
    assert run_validated(ON_DEMAND, node("node-0", MOST)).deleted == ["node-0"]
    result = run_validated(ON_DEMAND, node("node-0", MOST), arrive=[blocking])
    assert result.deleted == [] and result.launched == []


DO_NOT_DISRUPT = {"karpenter.sh/do-not-disrupt": "true"}


def _arrivals(blocker: str, nodes: Sequence[str]) -> list[Doc]:
    """A do-not-disrupt pod, or a pod a blocking budget covers, on each node."""
    if blocker == "do-not-disrupt":
        return [pod(f"late-{n}", on=n, annotations=DO_NOT_DISRUPT, labels={"app": "late"})
                for n in nodes]
    return [*(pod(f"late-{n}", on=n) for n in nodes), pdb(status=False)]


@pytest.mark.parametrize("blocker", [
    pytest.param("do-not-disrupt", id="TTL/should not replace node if a pod schedules with "
                 "karpenter.sh/do-not-disrupt set to true during the TTL wait"),
    pytest.param("pdb", id="TTL/should not replace node if a pod schedules with a blocking "
                 "PDB during the TTL wait"),
])
def test_ttl_replace_blocked_during_wait(blocker: str) -> None:
    objects = (node("node-0", MOST), pod("p", on="node-0", labels={"app": "first"}))
    assert run_validated(ON_DEMAND, *objects).deleted == ["node-0"]
    result = run_validated(ON_DEMAND, *objects, arrive=_arrivals(blocker, ["node-0"]))
    assert result.deleted == [] and result.launched == []


@pytest.mark.parametrize("blocker", [
    pytest.param("do-not-disrupt", id="TTL/should not delete node if pods schedule with "
                 "karpenter.sh/do-not-disrupt set to true during the TTL wait"),
    pytest.param("pdb", id="TTL/should not delete node if pods schedule with a blocking PDB "
                 "during the TTL wait"),
])
def test_ttl_delete_blocked_during_wait(blocker: str) -> None:
    objects = (*(node(n, MOST) for n in TTL_NODES),
               *(pod(f"p{i}", on=n, labels={"app": "first"}) for i, n in enumerate(TTL_NODES)))
    # Without arrivals the two nodes consolidate.
    assert run_validated(ON_DEMAND, *objects).deleted == list(TTL_NODES)
    result = run_validated(ON_DEMAND, *objects, arrive=_arrivals(blocker, TTL_NODES))
    assert result.deleted == [] and result.launched == []


# -- Multi-NodeClaim with the validation wait, and pod churn during it ----------------

@entries("Multi-NodeClaim/should wait for the node TTL for non-empty nodes before "
         "consolidating (multi-node)")
def test_multi_ttl_wait_non_empty(spot: bool) -> None:
    types = _types(spot)
    nodes = [node(f"node-{i}", types[-1]) for i in range(2)]
    pods = [pod(f"p{i}", on="node-0" if i < 2 else "node-1") for i in range(3)]
    result = run_validated(types, *nodes, *pods)
    # After the wait both go, for one cheaper node.
    assert result.deleted == ["node-0", "node-1"]
    assert len(result.launched) == 1 and result.launched[0][1] == 1


@entries("Multi-NodeClaim/should consolidate multiple empty nodes via multi-nodeclaim "
         "consolidation")
def test_multi_empty_nodes_after_wait(spot: bool) -> None:
    # Upstream also creates three pods it never binds (pending pods no node takes part
    # in the disruption decision); kube-scheduler would bind them here, so they are left
    # out.
    types = _types(spot)
    result = run_validated(types, *(node(f"node-{i}", types[-1]) for i in range(3)))
    assert result.deleted == ["node-0", "node-1", "node-2"] and result.launched == []


@entries("Multi-NodeClaim/should continue to single nodeclaim consolidation when "
         "multi-nodeclaim consolidation fails validation after the node ttl")
def test_multi_fails_validation_then_single(spot: bool) -> None:
    types = _types(spot)
    nodes = [node(f"node-{i}", types[-1]) for i in range(3)]
    pods = [pod(f"p{i}", on=f"node-{i}") for i in range(3)]
    assert run_validated(types, *nodes, *pods).deleted == ["node-0", "node-1", "node-2"]
    # Two 1-CPU pods land on node-0 and node-1 during the wait: merging the three no
    # longer validates, and single-node consolidation deletes node-2.
    extra = [pod(f"extra{i}", on=f"node-{i}", cpu="1") for i in range(2)]
    result = run_validated(types, *nodes, *pods, arrive=extra)
    assert result.deleted == ["node-2"] and result.launched == []


@upstream("Delete/does not delete nodes with pod churn, deletes nodes without pod churn")
def test_delete_pod_churn(case: str) -> None:
    # Two empty nodes; a pod lands on node-0 during the validation (the test validator's
    # churn): only node-1 is deleted.
    churn = pod("churn", on="node-0", cpu="100m")
    nodes = [node(f"node-{i}", MOST) for i in range(2)]
    assert run_validated(ON_DEMAND, *nodes).deleted == ["node-0", "node-1"]
    result = run_validated(ON_DEMAND, *nodes, arrive=[churn])
    assert result.deleted == ["node-1"] and result.launched == []


# -- Context("Parallelization"): the replacement in flight takes new pending pods -----

@upstream("Parallelization/should not schedule an additional node when receiving pending pods "
          "while consolidating")
def test_pending_pods_while_consolidating(case: str) -> None:
    first = run(ON_DEMAND, node("node", MOST), pod("p", on="node", labels={"app": "first"}))
    assert first.deleted == ["node"] and len(first.launched) == 1
    # The command is under way: the old node tainted karpenter.sh/disrupted (its
    # finalizer keeps it), its replacement launched and not ready.
    cluster = first.karpenter.scheduler.cluster
    old = cluster.nodes["node"].node
    cluster.add_node(msgspec.structs.replace(old, spec=msgspec.structs.replace(old.spec, taints=[
        *old.spec.taints, Taint(key="karpenter.sh/disrupted", effect="NoSchedule")])))
    second = next_round(first, pod("pending"))
    assert second.launched == []
    assert "default/pending" in second.decisions.helped_by_upcoming


# -- Several NodePools: each consolidates by its own disruption block and budgets ------
#    (a node's NodePool is the one its karpenter.sh/nodepool label names; NodePools not
#    named "default" each get every fake type, as NODEPOOL-TYPE pools)

def _of(nodepool_name: str, itype: InstanceType) -> dict[str, str]:
    """The labels of a node of ``nodepool_name`` (its copy of ``itype``'s pool)."""
    return {"dralab.dev/pool": f"{nodepool_name}-{itype.pool}",
            "karpenter.sh/nodepool": nodepool_name}


@pytest.mark.parametrize(("budget", "deleted"), [
    pytest.param("50%", 20, id="Budgets/should allow 2 nodes from each nodePool to be deleted"),
    pytest.param("100%", 30, id="Budgets/should allow all nodes from each nodePool to be "
                               "deleted"),
    pytest.param("0%", 0, id="Budgets/should allow no nodes from each nodePool to be deleted"),
])
def test_budgets_per_nodepool(budget: str, deleted: int) -> None:
    # Ten NodePools, three empty nodes of the most expensive type each; the suite's
    # NodePool is applied too, without nodes. 50% of 3 rounds up to 2 per NodePool.
    block = {"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "0s",
             "budgets": [{"nodes": budget}]}
    nps = [nodepool(block, name=f"np-{i}") for i in range(10)]
    nodes = [node(f"{np.name}-node-{j}", MOST, labels=_of(np.name, MOST))
             for np in nps for j in range(3)]
    # Two fake types only: eleven NodePools of every type would pass the Fleet's node
    # bound (MAX_FLEET_NODES), and emptiness reads no type but the candidates' own.
    result = run([LEAST, MOST], *nodes, nodepools=[nodepool(name="suite"), *nps])
    assert len(result.deleted) == deleted and result.launched == []
    per_pool = {np.name: sum(1 for n in result.deleted if n.startswith(f"{np.name}-"))
                for np in nps}
    assert set(per_pool.values()) == {deleted // 10}


@entries("Replace/can replace nodes if another nodePool returns no instance types")
def test_replace_another_nodepool_without_instance_types(spot: bool) -> None:
    # The Fleet's pools are the suite NodePool's ("default"): the other has no instance
    # types at all, and takes no part.
    types = _types(spot)
    result = run(types, node("node", types[-1]), pod("p", on="node"),
                 nodepools=[nodepool(), nodepool(name="nodepool-2")])
    assert result.deleted == ["node"]
    assert len(result.launched) == 1 and result.launched[0][0] != types[-1].pool
    command = result.karpenter.last_command
    assert command is not None and types[-1].name not in command.options


@upstream("Delete/can delete nodes if another nodePool has no node template")
def test_delete_another_nodepool_without_node_template(case: str) -> None:
    # Upstream builds a NodePool without a nodeClassRef but never applies it: the case
    # is the suite's NodePool alone. With that NodePool present (no instance types of
    # its own here) the answer is the same.
    objects = _two(*_three_pods())
    assert run(ON_DEMAND, *objects).deleted == ["node-1"]
    result = run(ON_DEMAND, *objects, nodepools=[nodepool(), nodepool(name="no-template")])
    assert result.deleted == ["node-1"] and result.launched == []


@upstream("Delete/should consolidate pods onto a destination node with consolidateAfter set "
          "to Never")
def test_delete_onto_a_destination_with_consolidate_after_never(case: str) -> None:
    # The destination's NodePool never consolidates its nodes (consolidateAfter Never),
    # but they take pods: the source node's pod moves there and the source goes.
    never = nodepool({"consolidationPolicy": "WhenEmptyOrUnderutilized",
                      "consolidateAfter": "Never", "budgets": [{"nodes": "100%"}]},
                     name="destination")
    source = nodepool(name="source")
    nodes = [node("node-0", LEAST, labels=_of("source", LEAST)),
             node("destination", LEAST, labels=_of("destination", LEAST))]
    result = run(ON_DEMAND, *nodes, pod("p", on="node-0"), nodepools=[source, never])
    assert result.deleted == ["node-0"] and result.launched == []


@upstream("Delete/can delete nodes while an invalid node pool exists")
def test_delete_while_an_invalid_nodepool_exists(case: str) -> None:
    # Upstream's bad NodePool fails to list its instance types (the cloud provider's
    # error); here it has none (the Fleet's pools are the suite NodePool's). It does
    # not stop the other NodePool's consolidation.
    bad = nodepool(name="bad-nodepool", template={"spec": {"requirements": [], "nodeClassRef": {
        "group": "karpenter.test.sh", "kind": "TestNodeClass", "name": "non-existent"}}})
    result = run(ON_DEMAND, *_two(*_three_pods()), nodepools=[bad, nodepool()])
    assert result.deleted == ["node-1"] and result.launched == []


@upstream("Static NodePool/should not consolidate static NodePool nodes")
def test_static_nodepool_nodes_are_not_consolidated(case: str) -> None:
    # Two empty initialized nodes (10 CPUs, 1000Mi, 2 pods) of a static NodePool
    # (replicas 2), the only NodePool: no command. Without replicas they would go.
    def nodes(name: str) -> list[Doc]:
        return [node(f"node-{i}", LEAST, cpu="10", memory="1000Mi", pods="2",
                     labels={"karpenter.sh/nodepool": name, "karpenter.sh/initialized": "true"})
                for i in range(2)]
    static = nodepool(name="static", spec_extra={"replicas": 2})
    result = run(ON_DEMAND, *nodes("static"), nodepools=[static])
    assert result.deleted == [] and result.launched == []
    assert run(ON_DEMAND, *nodes("dynamic"), nodepools=[nodepool(name="dynamic")]).deleted == \
        ["node-0", "node-1"]


# -- Context("Node Lifetime Consideration"): expireAfter 3s on the NodePool and its
#    NodeClaims, node-0 two seconds older -------------------------------------------------

@upstream("Node Lifetime Consideration/should consolidate the node with best savings ratio "
          "first")
def test_lifetime_best_savings_ratio_first(case: str) -> None:
    # Consolidation orders candidates by savings ratio, price over
    # RescheduleDisruptionCost (1 + each pod's eviction cost): node-1, with one pod,
    # first. The lifetime-weighted DisruptionCost (LifetimeRemaining) is read only by
    # the Balanced policy's scoring, and nothing expires within the case's 3s.
    settings = nodepool(template={"spec": {"expireAfter": "3s"}})
    result = run(ON_DEMAND, *_two(*_three_pods()), settings=settings)
    assert result.deleted == ["node-1"] and result.launched == []


# -- The cases not ported, each with its reason ----------------------------------------

EVENTS = ("not a decision: asserts Kubernetes events, which the model does not emit (it "
          "returns decisions)")
METRICS = "not a decision: asserts Prometheus metrics of the disruption controller"
MARKED = "not a decision: asserts the controller's internal 'consolidated' memo"
BUFFER = ("needs CapacityBuffer virtual pods (autoscaling.x-k8s.io CapacityBuffers the "
          "provisioner places, counted per node: cluster.UpdateBufferPodCounts), which "
          "dralab does not read or model")
QUEUE = ("not a decision: its only assertion is the disruption controller's RequeueAfter > 0, "
         "which holds whether it acts (RequeueImmediately, 1ns) or not (pollingPeriod)")

SKIPPED = [
    ("Events/should not fire an event for ConsolidationDisabled when the NodePool has "
     "consolidation set to WhenEmptyOrUnderutilized", EVENTS),
    ("Events/should fire an event for ConsolidationDisabled when the NodePool has "
     "consolidation set to WhenEmpty", EVENTS),
    ("Events/should fire an event for ConsolidationDisabled when the NodePool has "
     "consolidateAfter set to 'Never'", EVENTS),
    ("Events/should fire an event when a candidate does not have a resolvable instance type",
     EVENTS),
    ("Events/should fire an event when a candidate does not have the capacity type label",
     EVENTS),
    ("Events/should fire an event when a candidate does not have the zone label", EVENTS),
    ("Metrics/should correctly report eligible nodes", METRICS),
    *[(f"Metrics/should correctly report invalidated commands for {kind} disruption/{entry}",
       METRICS)
      for kind, entries in (
          ("emptiness", ("when a candidate is blocked by budgets",
                         "when candidates are filtered out due to pod churn",
                         "when candidates are filtered out due to candidate being nominated")),
          ("multi node", ("when candidates are blocked by budgets",
                          "when candidates are filtered out due to pod churn",
                          "when candidates are filtered out due to candidate being nominated")),
          ("single node", ("when a candidate is blocked by budgets",
                           "when candidates are filtered out due to pod churn",
                           "when candidates are filtered out due to candidate being "
                           "nominated")))
      for entry in entries],
    *[(f"Budgets/should not mark {kind} consolidated if {what}", MARKED)
      for kind in ("empty node", "multi node", "single node")
      for what in ("the candidates can't be disrupted due to budgets with one nodepool",
                   "all candidates can't be disrupted due to budgets with many nodepools")],
    ("Parallelization/should not consolidate a node that is launched for pods on a deleting "
     "node", QUEUE),
    ("Buffer Pods/should not empty-consolidate a node with only buffer pods", BUFFER),
    ("Buffer Pods/should allow consolidation of a node with real pods and buffer pods to a "
     "cheaper instance", BUFFER),
    ("Buffer Pods/should skip buffer-only nodes in single-node consolidation but protect via "
     "emptiness", BUFFER),
    ("Buffer Pods/should consolidate a buffer node once buffer pods are cleared", BUFFER),
]


@pytest.mark.parametrize("reason", [pytest.param(r, id=case) for case, r in SKIPPED])
def test_not_expressible(reason: str) -> None:
    pytest.skip(reason)


def test_every_upstream_case_is_accounted_for() -> None:
    skipped = {case for case, _ in SKIPPED}
    ported = ported_ids(globals()) - skipped
    assert sorted(ported | skipped) == sorted(CONSOLIDATION)
    # A case is either ported or skipped, never both.
    assert len(ported) + len(SKIPPED) == len(CONSOLIDATION)

"""Karpenter's In-Flight Nodes tests, ported case by case.

Source: kubernetes-sigs/karpenter at 2266468104f36373ed002241afaee2d3bbc26078,
pkg/controllers/provisioning/scheduling/suite_test.go, Describe("In-Flight Nodes")
(test_scheduling.py counts these cases as ported). Upstream provisions in rounds
(ExpectProvisioned, then the node state controller sees the NodeClaim's node, not yet
initialized); here one Karpenter model follows the rounds: a round's launches stay in
flight (nobody reports them joined), and the next round's pods are new pending pods of
the same cluster. A node of an earlier round that upstream then edits (taints, the
karpenter.sh/initialized label) is an input node in that state instead.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from dralab.api.codec import decode
from dralab.api.core import Pod
from dralab.autoscale import karpenter
from dralab.autoscale.karpenter_inflight import place_in_flight
from dralab.scheduler.result import REASON_UNSCHEDULABLE

from .harness import (
    VENDOR_A,
    VENDOR_B,
    Doc,
    InstanceType,
    Run,
    daemonset,
    defaults,
    node,
    nodepool,
    pod,
    run,
)

DEFAULTS = defaults()
BY_POOL = {t.pool: t for t in DEFAULTS}
SMALL_CPU = {"cpu": "10m"}
NODEPOOL_LABEL = "karpenter.sh/nodepool"


def upstream(path: str) -> pytest.MarkDecorator:
    return pytest.mark.parametrize("case", [pytest.param(path, id=path)])


def next_round(previous: Run, *pods: Doc, now: float = 10.0) -> Run:
    """The next ExpectProvisioned: ``pods`` created; kube-scheduler tries them on the
    cluster's nodes, then the same model's loop gets those left pending (the earlier
    rounds' pods wait for their launches in flight, held by the caller)."""
    model = previous.karpenter
    scheduler = model.scheduler
    infos = []
    for doc in pods:
        obj = decode(doc)
        assert isinstance(obj, Pod)
        infos.append(scheduler.cluster.add_pod(obj))
    result = scheduler.run(infos)
    new = {i.key for i in infos}
    waiting = []
    for item in result.unplaced:
        key = f"{item.pod.metadata.namespace or 'default'}/{item.pod.metadata.name}"
        info = scheduler.cluster.pods.get(key)
        if item.reason == REASON_UNSCHEDULABLE and info is not None and key in new:
            waiting.append(info)
    return Run(model, model.loop(waiting, now))


def zone_pod(name: str, *zones: str) -> Doc:
    return pod(name, limits=SMALL_CPU, spec={"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{
            "matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In",
                                  "values": list(zones)}]}]}}}})


def launched_nodes(result: Run) -> int:
    return sum(n for _, n in result.launched)


@upstream("In-Flight Nodes/should not launch a second node if there is an in-flight node "
          "that can support the pod")
def test_no_second_node(case: str) -> None:
    first = run(DEFAULTS, pod("initial", limits=SMALL_CPU))
    assert launched_nodes(first) == 1 and first.placed == ["default/initial"]
    second = next_round(first, pod("second", limits=SMALL_CPU))
    assert second.launched == [] and second.pending == []
    assert second.decisions.helped_by_upcoming == ("default/second",)


@upstream("In-Flight Nodes/should not launch a second node if there is an in-flight node "
          "that can support the pod (node selectors)")
def test_no_second_node_node_selectors(case: str) -> None:
    first = run(DEFAULTS, zone_pod("initial", "test-zone-2"))
    [(pool, count)] = first.launched
    assert count == 1 and BY_POOL[pool].zone == "test-zone-2"
    # test-zone-2 is in the intersection of the selectors: the node in flight takes it.
    second = next_round(first, zone_pod("second", "test-zone-1", "test-zone-2"))
    assert second.launched == [] and second.decisions.helped_by_upcoming == ("default/second",)
    # The node in flight is in test-zone-2: this pod needs a new node.
    third = next_round(second, zone_pod("third", "test-zone-1", "test-zone-3"))
    assert launched_nodes(third) == 1 and third.placed == ["default/third"]


@upstream("In-Flight Nodes/should launch a second node if a pod won't fit on the "
          "existingNodes node")
def test_second_node_when_no_fit(case: str) -> None:
    first = run(DEFAULTS, pod("initial", limits={"cpu": "1001m"}))
    [(pool, count)] = first.launched
    # The node has 2000m CPU: both pods cannot fit on it.
    assert count == 1 and BY_POOL[pool].cpu == 2
    second = next_round(first, pod("second", limits={"cpu": "1"}))
    assert launched_nodes(second) == 1 and second.placed == ["default/second"]


@upstream("In-Flight Nodes/should launch a second node if an in-flight node is terminating")
def test_second_node_when_in_flight_terminating(case: str) -> None:
    first = run(DEFAULTS, pod("initial", limits=SMALL_CPU))
    [(pool, count)] = first.launched
    # The NodeClaim and its node deleted before the node joined: nothing is in flight.
    first.karpenter.launches_withdrawn(pool, count)
    second = next_round(first, pod("second", limits=SMALL_CPU))
    assert launched_nodes(second) == 1 and second.placed == ["default/second"]
    assert second.decisions.helped_by_upcoming == ()


@upstream("In-Flight Nodes/should launch a second node if a pod isn't compatible with the "
          "existingNodes node (node selector)")
def test_second_node_when_incompatible(case: str) -> None:
    first = run(DEFAULTS, pod("initial", limits=SMALL_CPU))
    second = next_round(first, pod("second", spec={"nodeSelector": {
        "kubernetes.io/arch": "arm64"}}))
    [(pool, count)] = second.launched
    assert count == 1 and BY_POOL[pool].arch == "arm64" and second.placed == ["default/second"]


# -- Taints: input nodes of a NodePool in the state upstream edits them to ----------

def _karpenter_node(name: str, taints: list[Doc], initialized: bool) -> Doc:
    """The round-one node as upstream leaves it: a NodePool's, registered, with
    ``taints``, karpenter.sh/initialized only when ``initialized``."""
    labels = {"karpenter.sh/registered": "true"}
    if initialized:
        labels["karpenter.sh/initialized"] = "true"
    return node(name, DEFAULTS[0], cpu="4", memory="4Gi", pods="5", labels=labels,
                taints=taints)


NOT_READY_NO_EXECUTE = {"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}
CUSTOM = {"key": "foo.com/taint", "value": "tainted", "effect": "NoSchedule"}


@upstream("In-Flight Nodes/Taints/should assume pod will schedule to a tainted node with "
          "no taints")
def test_node_with_no_taints(case: str) -> None:
    # The round-one node, its pod gone and its taints removed: the pod goes there.
    result = run(DEFAULTS, _karpenter_node("node1", [], initialized=False), pod("second"))
    assert result.launched == [] and result.pending == []
    info = result.karpenter.scheduler.cluster.pods["default/second"]
    assert info.assumed_node == "node1"


@upstream("In-Flight Nodes/Taints/should assume pod will schedule to a node with ephemeral "
          "taint node.kubernetes.io/not-ready:NoExecute when the node is uninitialized")
def test_ephemeral_taint_while_uninitialized(case: str) -> None:
    uninitialized = run(DEFAULTS, _karpenter_node("node1", [NOT_READY_NO_EXECUTE], False),
                        pod("second"))
    assert uninitialized.launched == []
    assert uninitialized.decisions.helped_by_upcoming == ("default/second",)
    # Initialized, the taint counts: a new node.
    initialized = run(DEFAULTS, _karpenter_node("node1", [NOT_READY_NO_EXECUTE], True),
                      pod("third"))
    assert launched_nodes(initialized) == 1 and initialized.placed == ["default/third"]


@upstream("In-Flight Nodes/Taints/should not assume pod will schedule to a tainted node")
def test_tainted_initialized_node(case: str) -> None:
    result = run(DEFAULTS, _karpenter_node("node1", [CUSTOM], True), pod("second"))
    assert launched_nodes(result) == 1 and result.decisions.helped_by_upcoming == ()


@upstream("In-Flight Nodes/Taints/should assume pod will schedule to a tainted node with a "
          "custom startup taint")
def test_custom_startup_taint(case: str) -> None:
    settings = nodepool(template={"spec": {"startupTaints": [CUSTOM]}})
    # Startup taint + node not ready taint, not initialized yet.
    result = run(DEFAULTS, _karpenter_node(
        "node1", [CUSTOM, {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}],
        False), pod("second"), settings=settings)
    assert result.launched == [] and result.decisions.helped_by_upcoming == ("default/second",)


@upstream("In-Flight Nodes/Taints/should not assume pod will schedule to a node with "
          "startup taints after initialization")
def test_startup_taint_after_initialization(case: str) -> None:
    startup = {"key": "ignore-me", "value": "nothing-to-see-here", "effect": "NoSchedule"}
    settings = nodepool(template={"spec": {"startupTaints": [startup]}})
    result = run(DEFAULTS, _karpenter_node("node1", [startup], True), pod("second"),
                 settings=settings)
    assert launched_nodes(result) == 1 and result.decisions.helped_by_upcoming == ()


@upstream("In-Flight Nodes/should not launch a second node if there is an in-flight node "
          "that can support the pod (#2011)")
def test_same_pod_pending_again(case: str) -> None:
    first = run(DEFAULTS, pod("p", limits=SMALL_CPU))
    assert launched_nodes(first) == 1
    # The same pod reported unschedulable again while its node is in flight.
    model = first.karpenter
    again = model.loop([model.scheduler.cluster.pods["default/p"]], 10.0)
    assert again.scale_ups == () and again.helped_by_upcoming == ("default/p",)


@upstream("In-Flight Nodes/should schedule pods with the same host port to different nodes")
def test_same_host_port(case: str) -> None:
    result = run(DEFAULTS, pod("a", host_port=8080), pod("b", host_port=8080))
    assert launched_nodes(result) == 2 and result.placed == ["default/a", "default/b"]


# -- Topology: Karpenter's domains for new NodeClaims (karpenter_domains) ------------

FOO = {"foo": "bar"}


def _spread(key: str) -> Doc:
    return {"topologySpreadConstraints": [{
        "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": FOO}, "maxSkew": 1}]}


def _spread_pods(prefix: str, count: int, key: str) -> list[Doc]:
    return [pod(f"{prefix}{i}", labels=FOO, spec=_spread(key)) for i in range(count)]


@upstream("In-Flight Nodes/Topology/should balance pods across zones with in-flight nodes")
def test_balance_zones_in_flight(case: str) -> None:
    key = "topology.kubernetes.io/zone"
    first = run(DEFAULTS, *_spread_pods("a", 4, key))
    per_zone: dict[str, int] = {}
    for up in first.decisions.scale_ups:
        zone = BY_POOL[up.pool].zone
        per_zone[zone] = per_zone.get(zone, 0) + len(up.pods)
    assert sorted(per_zone.values()) == [1, 1, 2]
    # The nodes in flight take the five new pods (no new node); with maxSkew 1 the nine
    # pods over three zones are 3, 3, 3.
    second = next_round(first, *_spread_pods("b", 5, key))
    assert second.launched == [] and second.pending == []
    assert sorted(second.decisions.helped_by_upcoming) == [f"default/b{i}" for i in range(5)]


@upstream("In-Flight Nodes/Topology/should balance pods across hostnames with in-flight nodes")
def test_balance_hostnames_in_flight(case: str) -> None:
    key = "kubernetes.io/hostname"
    first = run(DEFAULTS, *_spread_pods("a", 4, key))
    assert launched_nodes(first) == 4 and len(first.placed) == 4
    # A new node is always an empty hostname domain: five new nodes rather than the
    # nodes in flight (1, 1, 1, 1, 1, 1, 1, 1, 1).
    second = next_round(first, *_spread_pods("b", 5, key))
    assert launched_nodes(second) == 5 and len(second.placed) == 5
    assert second.decisions.helped_by_upcoming == ()


# -- Daemonsets -----------------------------------------------------------------------

def _ds_requiring(name: str, key: str) -> Doc:
    return daemonset(name, requests={"cpu": "1"}, spec={"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{
            "matchExpressions": [{"key": key, "operator": "In", "values": ["true"]}]}]}}}})


@upstream("In-Flight Nodes/Daemonsets/Should properly handle DaemonSet resources with Node "
          "Affinity for `karpenter.sh/initialized` and `karpenter.sh/registered`")
def test_daemonsets_selecting_lifecycle_labels(case: str) -> None:
    # Both DaemonSets count on a new node (it will be registered and initialized): two
    # CPUs of overhead and the pod's two need the 16-CPU type, not a 4-CPU one.
    result = run(DEFAULTS, _ds_requiring("ds1", "karpenter.sh/initialized"),
                 _ds_requiring("ds2", "karpenter.sh/registered"),
                 pod("initial", limits={"cpu": "2"}), node_claims=True)
    [(pool, count)] = result.launched
    assert count == 1 and BY_POOL[pool].cpu == 16
    # The simulation-only requirements do not leak into the NodeClaim.
    [claim] = result.node_claims
    keys = {r["key"] for r in claim["spec"]["requirements"]} | set(claim["metadata"]["labels"])
    assert not keys & {"karpenter.sh/registered", "karpenter.sh/initialized"}


ARM = next(t for t in DEFAULTS if t.name == "arm-instance-type" and t.os == "linux")


def _arm_in_flight(**labels: str) -> Doc:
    """Round one's node as upstream leaves it: the 16-CPU type (15.9 allocatable), not
    initialized, its pod deleted."""
    return node("node1", ARM, cpu="15900m", memory="128Gi", pods="5", labels=labels,
                initialized=False)


def _ds_pod(ds: str, **spec: Any) -> Doc:
    """A DaemonSet's pod bound to node1 (1 CPU, 2Gi)."""
    doc = pod(f"{ds}-pod", on="node1", cpu="1", memory="2Gi", owner=None, spec=spec or None)
    doc["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "DaemonSet",
                                           "name": ds, "uid": f"uid-{ds}", "controller": True}]
    return doc


ONE_CPU_1GI = {"cpu": "1", "memory": "1Gi"}


@upstream("In-Flight Nodes/Daemonsets/should track daemonset usage separately so we know how "
          "many DS resources are remaining to be scheduled")
def test_daemonset_usage_tracked(case: str) -> None:
    # The DaemonSet's pod is bound: none of its overhead is left to hold, and the
    # 14.9-CPU pod fits the node in flight.
    result = run(DEFAULTS, daemonset("ds", requests=ONE_CPU_1GI), _arm_in_flight(),
                 _ds_pod("ds"), pod("second", limits={"cpu": "14.9"}))
    assert result.launched == [] and result.decisions.helped_by_upcoming == ("default/second",)


@upstream("In-Flight Nodes/Daemonsets/should handle unexpected daemonset pods binding to the "
          "node")
def test_unexpected_daemonset_pod(case: str) -> None:
    # ds1's pod bound (1 CPU, 2Gi, more than its 1Gi) and ds2's 1m still to come: the
    # node holds 14.899 CPUs, not the 15.5 the pod asks (the memory overshoot is no credit).
    selector = {"my-node-label": "value"}
    result = run(DEFAULTS, daemonset("ds1", requests=ONE_CPU_1GI, spec={"nodeSelector": selector}),
                 daemonset("ds2", requests={"cpu": "1m"}), _arm_in_flight(**selector),
                 _ds_pod("ds1", nodeSelector=selector), pod("second", limits={"cpu": "15.5"}))
    assert launched_nodes(result) == 1 and result.placed == ["default/second"]


@upstream("In-Flight Nodes/should pack in-flight nodes before launching new nodes")
def test_pack_in_flight_first(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Ten rounds of random batches (0-9 pods of 1 CPU; seeded here) on "medium" (4.25
    # CPUs, 4 pods). Upstream binds each round's pods; here every pod still pending is
    # passed again, as a caller does, and goes back to the node in flight it was given.
    # The pods on each node in flight, as the last loop sees them:
    seen: dict[str, int] = {}

    def spy(scheduler: Any, launches: Any, *args: Any, **kwargs: Any) -> Any:
        out = place_in_flight(scheduler, launches, *args, **kwargs)
        seen.clear()
        seen.update({n.metadata.name: len(scheduler.cluster.nodes[n.metadata.name].pods)
                     for launch in launches for n, _ in launch.nodes})
        return out
    monkeypatch.setattr(karpenter, "place_in_flight", spy)
    for seed in range(5):
        rng = random.Random(f"pack-in-flight-{seed}")
        model = run([InstanceType("medium", 4.25, 4, pods=4)]).karpenter
        cluster, keys = model.scheduler.cluster, []
        for r in range(10):
            for i in range(rng.randrange(10)):
                obj = decode(pod(f"r{r}-{i}", limits={"cpu": "1"}))
                assert isinstance(obj, Pod)
                keys.append(cluster.add_pod(obj).key)
            assert model.loop([cluster.pods[k] for k in keys], 10.0 * r).pending == ()
        model.loop([cluster.pods[k] for k in keys], 100.0)
        assert sum(seen.values()) == len(keys)
        # 4.15 CPUs allocatable: a node with a CPU free has three pods or fewer.
        assert sum(1 for n in seen.values() if n <= 3) <= 1, seed


# -- Describe("No Pre-Binding"): Karpenter launches but binds no pod --------------------

def _unbound(result: Run, *keys: str) -> bool:
    cluster = result.karpenter.scheduler.cluster
    return all(cluster.pods[k].assumed_node is None for k in keys)


@upstream("No Pre-Binding/should not bind pods to nodes")
def test_no_pre_binding(case: str) -> None:
    first = run(DEFAULTS, pod("initial", limits=SMALL_CPU))
    assert launched_nodes(first) == 1 and _unbound(first, "default/initial")
    # The node in flight can take the second pod: no second node, and nothing bound.
    second = next_round(first, pod("second", limits=SMALL_CPU))
    assert second.launched == [] and second.decisions.helped_by_upcoming == ("default/second",)
    assert _unbound(second, "default/initial", "default/second")


@upstream("No Pre-Binding/should handle resource zeroing of extended resources by kubelet")
def test_extended_resources_zeroed_by_kubelet(case: str) -> None:
    # Round one's node (the vendor-a GPU type) as the kubelet first reports it: capacity
    # {vendor-a: 0}, allocatable {vendor-b: 0}; not initialized, so Karpenter counts its
    # type's allocatable for what it reports zero.
    gpu_type = next(t for t in DEFAULTS if t.name == "gpu-vendor-instance-type")
    node1 = node("node1", gpu_type, initialized=False)
    node1["status"]["capacity"] = {VENDOR_A: "0"}
    node1["status"]["allocatable"] = {VENDOR_B: "0"}
    result = run(DEFAULTS, node1, pod("second", limits={"cpu": "10m", VENDOR_A: "1"}))
    assert result.launched == [] and result.decisions.helped_by_upcoming == ("default/second",)
    assert _unbound(result, "default/second")


@upstream("No Pre-Binding/should respect self pod affinity without pod binding (zone)")
def test_self_affinity_without_binding(case: str) -> None:
    labels = {"security": "s2"}
    spec = {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
        "labelSelector": {"matchLabels": labels},
        "topologyKey": "topology.kubernetes.io/zone"}]}}}
    first = run(DEFAULTS, pod("p0", labels=labels, spec=spec))
    assert launched_nodes(first) == 1
    # p0 is not bound, yet the node in flight holds it: p1 joins it there, no new node.
    second = next_round(first, pod("p1", labels=labels, spec=spec))
    assert second.launched == [] and second.decisions.helped_by_upcoming == ("default/p1",)


# -- NodeClaims of the input (karpenter_claims) ------------------------------------------

DEFAULT_TYPE = DEFAULTS[0]  # default-instance-type, test-zone-1


def _node_claim(name: str, node_name: str | None = None, initialized: bool = False) -> Doc:
    """test.NodeClaim as the fake cloud provider launched it (default-instance-type)."""
    conditions = [{"type": "Launched", "status": "True"}]
    if node_name is not None:
        conditions.append({"type": "Registered", "status": "True"})
    if initialized:
        conditions.append({"type": "Initialized", "status": "True"})
    status: Doc = {"conditions": conditions}
    if node_name is not None:
        status["nodeName"] = node_name
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "metadata": {
        "name": name, "labels": {"karpenter.sh/nodepool": "default",
                                 "node.kubernetes.io/instance-type": DEFAULT_TYPE.name,
                                 "topology.kubernetes.io/zone": DEFAULT_TYPE.zone,
                                 "karpenter.sh/capacity-type": "on-demand"}},
        "spec": {"nodeClassRef": {"group": "karpenter.test.sh", "kind": "TestNodeClass",
                                  "name": "default"}}, "status": status}


@upstream("In-Flight Nodes/Taints/should consider a tainted NotReady node as in-flight even "
          "if initialized")
def test_not_ready_node_labelled_initialized(case: str) -> None:
    # Round one's node, labelled initialized but NotReady, its NodeClaim not Initialized:
    # Karpenter reads initialization from the NodeClaim, so the node is still in flight
    # and its well-known ephemeral taints are ignored.
    taints = [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"},
              {"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule"},
              {"key": "node.cloudprovider.kubernetes.io/uninitialized", "value": "true",
               "effect": "NoSchedule"}]
    node1 = node("node1", DEFAULT_TYPE, cpu="3900m", memory="4Gi", pods="5", taints=taints,
                 labels={"karpenter.sh/registered": "true",
                         "karpenter.sh/initialized": "true"})
    result = run(DEFAULTS, node1, pod("first", on="node1", cpu="10m"), pod("second", cpu="10m"),
                 claims=[_node_claim("claim1", "node1")])
    assert result.launched == [] and result.decisions.helped_by_upcoming == ("default/second",)
    # Without its NodeClaim the label is all there is: initialized, and its taints count.
    alone = run(DEFAULTS, node1, pod("first", on="node1", cpu="10m"), pod("second", cpu="10m"))
    assert launched_nodes(alone) == 1


@upstream("In-Flight Nodes/should order initialized nodes for scheduling uninitialized nodes "
          "when all other nodes are inflight")
def test_initialized_node_before_claims_in_flight(case: str) -> None:
    # 99 NodeClaims launched without a node yet, and one initialized node: the pod goes to
    # the initialized node (kube-scheduler binds it there: the others are no nodes yet),
    # and nothing is launched.
    claims = [_node_claim(f"claim-{i:02d}") for i in range(99)]
    ready = node("ready-node", DEFAULT_TYPE, cpu="3900m", memory="4Gi", pods="5",
                 labels={"karpenter.sh/registered": "true",
                         "karpenter.sh/initialized": "true"})
    result = run(DEFAULTS, ready, pod("p"), consolidation=False,
                 claims=[*claims, _node_claim("claim-ready", "ready-node", initialized=True)])
    assert result.launched == [] and result.pending == []
    assert result.karpenter.scheduler.cluster.pods["default/p"].assumed_node == "ready-node"

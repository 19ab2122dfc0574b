"""Karpenter's provisioner tests, ported case by case.

Source: kubernetes-sigs/karpenter at 2266468104f36373ed002241afaee2d3bbc26078,
pkg/controllers/provisioning/suite_test.go, Describe("Provisioning"). Each test's id
is the upstream Context/It path. Upstream provisions pending pods and reads whether
each was scheduled on a launched node; here one loop of the Karpenter model (a pod is
scheduled when a scale-up is for it). The instance types are the fake cloud
provider's defaults (``harness.defaults``); a NodePool's limits are
``spec.limits`` of the model's NodePool, its template taints every pool's taints.
"""

from __future__ import annotations

import pytest

from dralab.api.core import Node
from dralab.api.quantity import parse_quantity
from dralab.autoscale.karpenter_nodepool import NodePoolSettings

from .harness import (
    VENDOR_A,
    VENDOR_B,
    Doc,
    InstanceType,
    Run,
    assert_accounted_for,
    daemonset,
    defaults,
    node,
    nodepool,
    not_ported,
    pod,
    run,
)
from .upstream_cases import PROVISIONING

DEFAULTS = defaults()


def upstream(path: str) -> pytest.MarkDecorator:
    return pytest.mark.parametrize("case", [pytest.param(path, id=path)])


@upstream("should provision nodes")
def test_provision_nodes(case: str) -> None:
    result = run(DEFAULTS, pod("p"))
    assert sum(n for _, n in result.launched) == 1 and result.placed == ["default/p"]


@upstream("should provision nodes for accelerators")
def test_provision_accelerators(case: str) -> None:
    # Limits only: the API server defaults an extended resource's request to its limit.
    result = run(DEFAULTS, pod("a", limits={VENDOR_A: "1"}), pod("b", limits={VENDOR_B: "1"}))
    assert result.placed == ["default/a", "default/b"] and result.pending == []
    assert _types(result, "default/a") == ["gpu-vendor-instance-type"]
    assert _types(result, "default/b") == ["gpu-vendor-b-instance-type"]


def _types(result: Run, pod_key: str) -> list[str]:
    """The instance type of the node launched for ``pod_key``."""
    return [result.node_labels(pod_key)["node.kubernetes.io/instance-type"]]


@upstream("should schedule all pods on one inflight node when node is in deleting state")
def test_all_pods_on_one_node_when_node_deleting(case: str) -> None:
    # A NodePool's node being deleted (its finalizer holds it) with three pods bound: its
    # pods and the two pending ones all go to one new node, none to the old one.
    old = node("old-node", DEFAULTS[0], cpu="4", memory="4Gi", pods="5")
    old["metadata"].update(deletionTimestamp="2026-01-01T00:00:00Z",
                           finalizers=["karpenter.sh/termination"])
    result = run(DEFAULTS, old, *[pod(f"bound{i}", on="old-node", owner=None) for i in range(3)],
                 pod("new0", owner=None), pod("new1", owner=None))
    [(_, count)] = result.launched
    assert count == 1 and result.pending == []
    assert result.placed == ["default/bound0", "default/bound1", "default/bound2",
                             "default/new0", "default/new1"]


@upstream("Should provision nodes for multiple pods")
def test_provision_multiple_pods(case: str) -> None:
    result = run(DEFAULTS, *[pod(f"p{i:03d}") for i in range(100)])
    assert result.launched and len(result.placed) == 100 and result.pending == []


SCHEDULABLE = [{"karpenter.sh/nodepool": "default"},
               {"topology.kubernetes.io/zone": "test-zone-1"},
               {"node.kubernetes.io/instance-type": "default-instance-type"},
               {"kubernetes.io/arch": "arm64"},
               {"kubernetes.io/os": "linux"}]
UNSCHEDULABLE = [{"karpenter.sh/nodepool": "unknown"},
                 {"topology.kubernetes.io/zone": "unknown"},
                 {"node.kubernetes.io/instance-type": "unknown"},
                 {"kubernetes.io/arch": "unknown"},
                 {"kubernetes.io/os": "unknown"},
                 {"karpenter.sh/capacity-type": "unknown"},
                 {"foo": "bar"}]


def _affinity(selector: dict[str, str]) -> Doc:
    ((key, value),) = selector.items()
    return {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [
            {"key": key, "operator": "In", "values": [value]}]}]}}}}


@pytest.mark.parametrize(("as_affinity", "case"), [
    pytest.param(False, "", id="should provision nodes for pods with supported node "
                               "selectors"),
    pytest.param(True, "", id="should provision nodes for pods with supported node "
                              "affinities"),
])
def test_supported_selectors(as_affinity: bool, case: str) -> None:
    def spec(selector: dict[str, str]) -> Doc:
        return _affinity(selector) if as_affinity else {"nodeSelector": selector}
    good = [pod(f"good{i}", spec=spec(s)) for i, s in enumerate(SCHEDULABLE)]
    result = run(DEFAULTS, *good)
    assert result.placed == [f"default/good{i}" for i in range(len(SCHEDULABLE))]
    bad = [pod(f"bad{i}", spec=spec(s)) for i, s in enumerate(UNSCHEDULABLE)]
    result = run(DEFAULTS, *bad)
    assert result.launched == []
    assert result.pending == [f"default/bad{i}" for i in range(len(UNSCHEDULABLE))]


@upstream("should provision multiple nodes when maxPods is set")
def test_max_pods(case: str) -> None:
    # The NodePool requires single-pod-instance-type: it is the Fleet's only type.
    types = [t for t in DEFAULTS if t.name == "single-pod-instance-type"]
    result = run(types, *[pod(f"p{i}") for i in range(3)])
    assert sum(n for _, n in result.launched) == 3 and len(result.placed) == 3


# -- initContainers, sidecars and pod-level resources: three "example" types of
#    AddInstanceResources (10 CPUs/4Gi, 11/5Gi, 12/6Gi) next to the defaults -------

EXAMPLES = [InstanceType("example", cpu, mem, capacity_type="spot", arch="arch",
                         pool_name=f"example-{cpu}")
            for cpu, mem in ((10, 4), (11, 5), (12, 6))]


def _containers(main: tuple[str, str], init: list[tuple[str, str, bool]],
                pod_level: tuple[str, str] | None = None) -> Doc:
    def resources(cpu: str, memory: str) -> Doc:
        amount = {"cpu": cpu, "memory": memory}
        return {"requests": dict(amount), "limits": dict(amount)}
    spec: Doc = {"containers": [{"name": "main", "image": "busybox",
                                 "resources": resources(*main)}],
                 "initContainers": [{"name": f"init{i}", "image": "busybox",
                                     "resources": resources(cpu, memory),
                                     **({"restartPolicy": "Always"} if sidecar else {})}
                                    for i, (cpu, memory, sidecar) in enumerate(init)]}
    if pod_level is not None:
        spec["resources"] = {"requests": {"cpu": pod_level[0], "memory": pod_level[1]},
                             "limits": {"cpu": "10", "memory": "4Gi"}}
    return spec


@pytest.mark.parametrize(("spec", "capacity", "case"), [
    pytest.param(_containers(("6", "2Gi"), [("10", "4Gi", False), ("4.9", "2.9Gi", True)]),
                 (11, 5), "",
                 id="should schedule based on the max resource requests of containers and "
                    "initContainers with sidecar containers when initcontainer comes first"),
    pytest.param(_containers(("6", "2Gi"), [("4.9", "2.9Gi", True), ("5", "1Gi", False)]),
                 (11, 5), "",
                 id="should schedule based on the max resource requests of containers and "
                    "initContainers with sidecar containers when sidecar container comes "
                    "first and init container resources are smaller than container resources"),
    pytest.param(_containers(("5", "1Gi"), [("4.9", "2.9Gi", True), ("6", "2Gi", False)]),
                 (11, 5), "",
                 id="should schedule based on the max resource requests of containers and "
                    "initContainers with sidecar containers when sidecar container comes "
                    "first and init container resources are bigger than container resources"),
    pytest.param(_containers(("5", "1Gi"), [("6", "2Gi", False), ("4", "2Gi", True)],
                             ("9.9", "3.9Gi")),
                 (10, 4), "", id="should schedule based on the pod level resources requests"),
])
def test_container_requests(spec: Doc, capacity: tuple[int, int], case: str) -> None:
    types = [*DEFAULTS, *EXAMPLES]
    doc = pod("p")
    doc["spec"] = spec
    result = run(types, doc)
    by_pool = {t.pool: (t.cpu, t.memory_gi) for t in types}
    assert [by_pool[p] for p, _ in result.launched] == [capacity]


# -- Context("Resource Limits") ------------------------------------------------------

ANTI = {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": {"matchLabels": {"app": "foo"}},
     "topologyKey": "kubernetes.io/hostname"}]}}}


@upstream("Resource Limits/should not schedule when limits are exceeded")
def test_limits_exceeded(case: str) -> None:
    # An existing NodeClaim of the NodePool with 100 CPUs of capacity (upstream has no
    # Node for it: here a node the pod cannot use, tainted).
    full = node("in-flight", DEFAULTS[0], cpu="100",
                taints=[{"key": "not-ready", "effect": "NoSchedule"}])
    result = run(DEFAULTS, full, pod("p"), settings=nodepool(None, {"cpu": "20"}),
                 consolidation=False)
    assert result.launched == [] and result.pending == ["default/p"]
    assert result.decisions.pending[0].reason == \
        'all available instance types exceed limits for nodepool "default"'


@upstream("Resource Limits/should schedule if limits would be met")
def test_limits_met(case: str) -> None:
    result = run(DEFAULTS, pod("p", cpu="1.75"), settings=nodepool(None, {"cpu": "2"}))
    assert result.placed == ["default/p"]


@upstream("Resource Limits/should partially schedule if limits would be exceeded")
def test_limits_partial(case: str) -> None:
    pods = [pod(f"p{i}", cpu="1.5", labels={"app": "foo"}, spec=ANTI) for i in range(2)]
    result = run(DEFAULTS, *pods, settings=nodepool(None, {"cpu": "3"}))
    assert len(result.placed) == 1 and len(result.pending) == 1


@upstream("Resource Limits/should not schedule if limits would be exceeded")
def test_limits_would_be_exceeded(case: str) -> None:
    result = run(DEFAULTS, pod("p", cpu="2.1"), settings=nodepool(None, {"cpu": "2"}))
    assert result.launched == [] and result.pending == ["default/p"]


@upstream("Resource Limits/should not schedule if limits would be exceeded (GPU)")
def test_limits_gpu(case: str) -> None:
    # The only type with vendor-a GPUs has 5 pods of capacity, over the limit of 1.
    result = run(DEFAULTS, pod("p", limits={VENDOR_A: "1"}),
                 settings=nodepool(None, {"pods": "1"}))
    assert result.launched == [] and result.pending == ["default/p"]


@upstream("Resource Limits/should not schedule to a nodepool after a scheduling round if "
          "limits would be exceeded")
def test_limits_after_a_round(case: str) -> None:
    # Upstream's two rounds, one pod each, as one loop with both pods: the first
    # node takes the two CPUs the limit allows.
    result = run(DEFAULTS, pod("p0", cpu="1.75"), pod("p1", cpu="1.75"),
                 settings=nodepool(None, {"cpu": "2"}))
    assert len(result.placed) == 1 and len(result.pending) == 1


@upstream("Resource Limits/should not schedule if limits would be exceeded (node)")
def test_limits_nodes(case: str) -> None:
    # Upstream's three rounds of one pod each, as one loop with three pods.
    pods = [pod(f"p{i}", cpu="1.5", labels={"app": "foo"}, spec=ANTI) for i in range(3)]
    result = run(DEFAULTS, *pods, settings=nodepool(None, {"nodes": "2"}))
    assert len(result.placed) == 2 and len(result.pending) == 1
    assert result.decisions.pending[0].reason == \
        'node limits have been exhausted for nodepool "default"'


# -- Taints -------------------------------------------------------------------------

@upstream("Taints/should schedule pods that tolerate taints")
def test_tolerated_taints(case: str) -> None:
    taint = {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}
    tolerations = [
        [{"key": "nvidia.com/gpu", "operator": "Equal", "value": "true",
          "effect": "NoSchedule"}],
        [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        [{"key": "nvidia.com/gpu", "operator": "Exists"}],
        [{"operator": "Exists"}]]
    pods = [pod(f"p{i}", spec={"tolerations": t}) for i, t in enumerate(tolerations)]
    result = run(DEFAULTS, *pods, taints=[taint])
    assert result.placed == [f"default/p{i}" for i in range(4)]


# -- Context("Daemonsets"): the input DaemonSets' pods on every new node -------------

def _capacity(result_pools: list[tuple[str, int]]) -> list[tuple[int, int]]:
    by_pool = {t.pool: (t.cpu, t.memory_gi) for t in DEFAULTS}
    return [by_pool[p] for p, _ in result_pools]


DS_2 = {"cpu": "2", "memory": "2Gi"}


# A pending pod of DaemonSet "ds" (its owner reference as test.UnschedulablePod sets it).
DS_POD = pod("ds-pod", cpu="2", memory="2Gi", owner="DaemonSet")
DS_POD["metadata"]["ownerReferences"][0]["name"] = "ds"
HOSTNAME_DS_POD = pod("ds-pod", cpu="2", memory="2Gi", owner="DaemonSet",
                      spec=_affinity({"metadata.name": "node-name"}))
HOSTNAME_DS_POD["metadata"]["ownerReferences"][0]["name"] = "ds"
MAX_OF_INIT = daemonset("ds", {"cpu": "1"}, limits={"cpu": "10000", "memory": "1Gi"})
MAX_OF_INIT["spec"]["template"]["spec"]["initContainers"] = [{
    "name": "init", "image": "busybox",
    "resources": {"requests": {"cpu": "3"}, "limits": {"cpu": "10000", "memory": "3Gi"}}}]
SMALL = {"cpu": "1", "memory": "1Gi"}


def _terms(*values: str) -> Doc:
    return {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "foo", "operator": "In",
                                                     "values": [v]}]} for v in values]}}}}


HUGE = {"cpu": "10000", "memory": "10000Gi"}
TOO_LARGE_INIT = daemonset("ds", {"cpu": "1"}, limits={"cpu": "10000", "memory": "1Gi"})
TOO_LARGE_INIT["spec"]["template"]["spec"]["initContainers"] = [{
    "name": "init", "image": "busybox",
    "resources": {"requests": {"cpu": "1"}, "limits": HUGE}}]
INIT_TOO_LARGE = daemonset("ds", init=HUGE)


@pytest.mark.parametrize(("objects", "case"), [
    pytest.param([daemonset("ds", HUGE)], "",
                 id="Daemonsets/should not schedule if daemonset overhead is too large"),
    pytest.param([daemonset("ds", {"cpu": "1"}, limits=HUGE)], "",
                 id="Daemonsets/should not schedule if resource requests are not defined and "
                    "limits (requests) are too large"),
    pytest.param([TOO_LARGE_INIT], "",
                 id="Daemonsets/should not schedule if combined max resources are too large "
                    "for any node"),
    pytest.param([INIT_TOO_LARGE], "",
                 id="Daemonsets/should not schedule if initContainer resources are too large"),
])
def test_daemonset_overhead_too_large(objects: list[Doc], case: str) -> None:
    result = run(DEFAULTS, *objects, pod("p"))
    assert result.launched == [] and result.pending == ["default/p"]


@pytest.mark.parametrize(("ds", "pod_spec", "labels", "taints", "case"), [
    pytest.param(daemonset("ds", DS_2, spec={"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "foo", "operator": "NotIn", "values": ["bar"]}]}]}}}}),
        _affinity({"topology.kubernetes.io/zone": "test-zone-2"}), None, None, "",
        id="Daemonsets/should account daemonsets with NotIn operator and unspecified key"),
    pytest.param(daemonset("ds", DS_2, spec=_terms("voo", "bar")), None, {"foo": "bar"}, None,
                 "", id="Daemonsets/should consider a daemonset schedulable with multiple node "
                        "affinity terms"),
    pytest.param(daemonset("ds", DS_2, spec={"affinity": {"nodeAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": {
            "matchExpressions": [{"key": "node", "operator": "In", "values": ["invalid"]}]}}]}}}),
        None, None, None, "",
        id="Daemonsets/should consider a daemonset schedulable with an incompatible node "
           "affinity preference"),
    pytest.param(daemonset("ds", DS_2), None, None,
                 [{"key": "test", "effect": "PreferNoSchedule"}], "",
                 id="Daemonsets/should consider a daemonset schedulable with a PreferNoSchedule "
                    "taint"),
    pytest.param(daemonset("ds", DS_2, spec={"nodeSelector": {"purpose": "monitoring"}}), None,
                 {"purpose": "monitoring"}, None, "",
                 id="Daemonsets/should account for daemonsets with a custom label nodeSelector "
                    "that matches the nodepool"),
])
def test_daemonset_counted(ds: Doc, pod_spec: Doc | None, labels: dict[str, str] | None,
                           taints: list[Doc] | None, case: str) -> None:
    result = run(DEFAULTS, ds, pod("p", spec=pod_spec, cpu="1", memory="1Gi"), labels=labels,
                 taints=taints)
    assert result.placed == ["default/p"]
    assert _capacity(result.launched) == [(4, 4)]


@pytest.mark.parametrize(("objects", "taints", "requests", "expected", "case"), [
    pytest.param([daemonset("ds", DS_2)], None, SMALL, (4, 4), "",
                 id="Daemonsets/should account for daemonsets"),
    pytest.param([MAX_OF_INIT], None, {}, (4, 4), "",
                 id="Daemonsets/should schedule based on the max resource requests of "
                    "containers and initContainers"),
    pytest.param([daemonset("ds")], None, {}, "any", "",
                 id="Daemonsets/should be able to schedule pods if resource requests and "
                    "limits are not defined"),
    pytest.param([daemonset("ds", DS_2)], [{"key": "foo", "value": "bar",
                                            "effect": "NoSchedule"}], SMALL, (2, 2), "",
                 id="Daemonsets/should ignore daemonsets without matching tolerations"),
    pytest.param([daemonset("ds", DS_2, spec={"nodeSelector": {"node": "invalid"}})], None,
                 SMALL, (2, 2), "",
                 id="Daemonsets/should ignore daemonsets with an invalid selector"),
    pytest.param([daemonset("ds", DS_2, spec=_affinity(
        {"node.kubernetes.io/instance-type": "non-existent-instance-type"}))], None, SMALL,
                 (2, 2), "",
                 id="Daemonsets/should ignore daemonsets when no instance types meet the "
                    "daemonset requirements"),
    pytest.param([daemonset("small", {"cpu": "1"}, spec=_affinity({"size": "small"})),
                  daemonset("large", {"cpu": "10"}, spec=_affinity({"size": "large"}))], None,
                 SMALL, (4, 4), "",
                 id="Daemonsets/should filter out daemonsets based on instance type "
                    "requirements"),
    pytest.param([daemonset("ds", {"cpu": "4", "memory": "4Gi"}), DS_POD], None, SMALL,
                 (4, 4), "",
                 id="Daemonsets/should account for overhead using daemonset pod spec instead "
                    "of daemonset spec"),
    pytest.param([daemonset("ds", {"cpu": "4", "memory": "4Gi"}, spec=_affinity({"foo": "bar"})),
                  HOSTNAME_DS_POD], None, {**SMALL, "spec": {"nodeSelector": {"foo": "bar"}}},
                 (4, 4), "",
                 id="Daemonsets/should remove daemonset node hostname affinity when considering "
                    "daemonset schedulability"),
])
def test_daemonset_overhead(objects: list[Doc], taints: list[Doc] | None, requests: Doc,
                            expected: tuple[int, int] | str, case: str) -> None:
    tolerate = {"tolerations": [{"operator": "Exists"}]} if taints else None
    requests = dict(requests)
    spec = requests.pop("spec", tolerate)
    labels = {"foo": "bar"} if spec and "nodeSelector" in spec else None
    result = run(DEFAULTS, *objects, pod("p", spec=spec, **requests), taints=taints,
                 labels=labels)
    assert "default/p" in result.placed
    if expected == "any":
        return
    assert _capacity(result.launched) == [expected]


@upstream("Daemonsets/should account for daemonset hostports")
def test_daemonset_hostports(case: str) -> None:
    result = run(DEFAULTS, daemonset("ds", DS_2, host_port=8080),
                 pod("p", cpu="1", memory="1Gi", host_port=8080))
    assert result.launched == [] and result.pending == ["default/p"]


@upstream("Daemonsets/should not account for daemonset hostports when daemonset would not "
          "schedule on selected node")
def test_daemonset_hostports_elsewhere(case: str) -> None:
    large = daemonset("large", {"cpu": "4", "memory": "4Gi"}, host_port=8080,
                      spec=_affinity({"size": "large"}))
    small = daemonset("small", DS_2, host_port=8081, spec=_affinity({"size": "small"}))
    result = run(DEFAULTS, large, small, pod("p", cpu="1", memory="1Gi", host_port=8080,
                                             spec=_affinity({"size": "small"})))
    assert result.placed == ["default/p"]
    assert _capacity(result.launched) == [(4, 4)]


# -- Context("Preferential Fallback"), Context("Required"): node affinity terms are ORed.

def _zone_terms(*zones: str) -> Doc:
    return {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [z]}]}
            for z in zones]}}}}


@upstream("Preferential Fallback/Required/should not relax the final term")
def test_required_final_term(case: str) -> None:
    types = [t for t in DEFAULTS if t.zone == "test-zone-1"]  # the NodePool's zone requirement
    result = run(types, pod("p", spec=_zone_terms("invalid")))
    assert result.launched == [] and result.pending == ["default/p"]


@upstream("Preferential Fallback/Required/should relax multiple terms")
def test_required_multiple_terms(case: str) -> None:
    # Karpenter tries the terms in order (test-zone-1 first); the model takes any term's
    # nodes and breaks the price tie among zones by pool name (test-zone-1 first here).
    result = run(DEFAULTS, pod("p", spec=_zone_terms("invalid", "invalid", "test-zone-1",
                                                     "test-zone-2")))
    zones = {t.pool: t.zone for t in DEFAULTS}
    assert [zones[p] for p, _ in result.launched] == ["test-zone-1"]


# -- Context("Volume Topology Requirements"): a WaitForFirstConsumer StorageClass offering
#    test-zone-2 and test-zone-3 (test.StorageClass), PVCs and PVs as test.Persistent*
#    makes them (1Gi claims, 100Gi CSI volumes of driver test.driver). A claim upstream
#    binds by spec.volumeName alone (envtest runs no PV controller) is written as the
#    controller leaves a bound pair: status.phase Bound on both, the PV's claimRef ------

def _storage_class(name: str = "my-storage-class", zones: tuple[str, ...] = (
        "test-zone-2", "test-zone-3"), provisioner: str = "test-provisioner") -> Doc:
    doc: Doc = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                "metadata": {"name": name}, "provisioner": provisioner,
                "volumeBindingMode": "WaitForFirstConsumer"}
    if zones:
        doc["allowedTopologies"] = [{"matchLabelExpressions": [
            {"key": "topology.kubernetes.io/zone", "values": list(zones)}]}]
    return doc


def _pvc(name: str, storage_class: str | None = "my-storage-class",
         volume: str | None = None, bound: bool = True) -> Doc:
    spec: Doc = {"accessModes": ["ReadWriteOnce"],
                 "resources": {"requests": {"storage": "1Gi"}}}
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    doc: Doc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": name, "namespace": "default"}, "spec": spec}
    if volume is not None:
        spec["volumeName"] = volume
        if bound:
            doc["status"] = {"phase": "Bound"}
    return doc


def _pv(name: str, storage_class: str = "my-storage-class", zones: tuple[str, ...] = (),
        hostname: str | None = None, source: str = "csi", claim: str | None = "claim") -> Doc:
    sources: dict[str, Doc] = {
        "csi": {"csi": {"driver": "test.driver", "volumeHandle": "test-handle"}},
        "local": {"local": {"path": "/mnt/local"}},
        "hostPath": {"hostPath": {"path": "/mnt/local"}}}
    spec: Doc = {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "100Gi"},
                 "storageClassName": storage_class, **sources[source]}
    key, values = (("kubernetes.io/hostname", [hostname]) if hostname is not None
                   else ("topology.kubernetes.io/zone", list(zones)))
    if values:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": key, "operator": "In", "values": values}]}]}}
    doc: Doc = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
                "spec": spec}
    if claim is not None:
        spec["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": "default",
                            "name": claim}
        doc["status"] = {"phase": "Bound"}
    return doc


def _with_claim(doc: Doc, claim: str) -> Doc:
    doc["spec"]["volumes"] = [{"name": "vol", "persistentVolumeClaim": {"claimName": claim}}]
    return doc


def _with_ephemeral(doc: Doc, storage_class: str) -> Doc:
    doc["spec"]["volumes"] = [{"name": "vol", "ephemeral": {"volumeClaimTemplate": {"spec": {
        "accessModes": ["ReadWriteOnce"], "storageClassName": storage_class,
        "resources": {"requests": {"storage": "1Gi"}}}}}}]
    return doc


def _zone_in(*zones: str) -> Doc:
    return {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": list(zones)}]}]}}}}


def _zones(result_pools: list[tuple[str, int]]) -> list[str]:
    zones = {t.pool: t.zone for t in DEFAULTS}
    return [zones[p] for p, _ in result_pools]


def _ephemeral_claim(volume: str | None) -> Doc:
    """The claim the ephemeral volume controller made for pod p's volume "vol"."""
    claim = _pvc("p-vol", volume=volume)
    claim["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "p",
                                             "uid": "uid-p", "controller": True}]
    return claim


def _pod_p() -> Doc:
    doc = pod("p")
    doc["metadata"]["uid"] = "uid-p"
    return doc


@pytest.mark.parametrize(("objects", "claim", "scheduled", "case"), [
    pytest.param([], "invalid", False, "",
                 id="Volume Topology Requirements/should not schedule if invalid pvc"),
    pytest.param([_pvc("claim", "", "test-volume"), _pv("test-volume", "")], "claim", True, "",
                 id="Volume Topology Requirements/should schedule with an empty storage class if "
                    "the pvc is bound"),
    pytest.param([_pvc("claim", "")], "claim", False, "",
                 id="Volume Topology Requirements/should not schedule with an empty storage "
                    "class if the pvc is not bound"),
    pytest.param([_pvc("claim", "missing-storage-class", "test-volume"),
                  _pv("test-volume", "missing-storage-class")], "claim", True, "",
                 id="Volume Topology Requirements/should schedule with a missing storage class "
                    "if the pvc is bound"),
    pytest.param([_pvc("claim", "missing-storage-class")], "claim", False, "",
                 id="Volume Topology Requirements/should not schedule with a missing storage "
                    "class if the pvc is not bound"),
])
def test_volume_claims(objects: list[Doc], claim: str, scheduled: bool, case: str) -> None:
    result = run(DEFAULTS, *objects, _with_claim(pod("p"), claim))
    assert ("default/p" in result.placed) is scheduled
    if not scheduled:
        assert result.launched == []


@pytest.mark.parametrize(("objects", "claim", "case"), [
    pytest.param([], "invalid", "",
                 id="Volume Topology Requirements/should schedule valid pods when a pod with an "
                    "invalid pvc is encountered (pvc)"),
    pytest.param([_pvc("claim", "invalid-storage-class")], "claim", "",
                 id="Volume Topology Requirements/should schedule valid pods when a pod with an "
                    "invalid pvc is encountered (storage class)"),
    pytest.param([_pvc("claim", None, "invalid-volume-name", bound=False)], "claim", "",
                 id="Volume Topology Requirements/should schedule valid pods when a pod with an "
                    "invalid pvc is encountered (volume name)"),
])
def test_volume_invalid_beside_valid(objects: list[Doc], claim: str, case: str) -> None:
    # Upstream's two provisioning rounds (the invalid pod, then a valid one) as one loop.
    result = run(DEFAULTS, *objects, _with_claim(pod("invalid"), claim), pod("valid"))
    assert result.placed == ["default/valid"]


@pytest.mark.parametrize(("ephemeral", "zones", "expected", "case"), [
    pytest.param(False, ("test-zone-1", "test-zone-3"), ["test-zone-3"], "",
                 id="Volume Topology Requirements/should schedule to storage class zones if "
                    "volume does not exist"),
    pytest.param(True, ("test-zone-1", "test-zone-3"), ["test-zone-3"], "",
                 id="Volume Topology Requirements/should schedule to storage class zones if "
                    "volume does not exist (ephemeral volume)"),
    pytest.param(False, ("test-zone-1",), [], "",
                 id="Volume Topology Requirements/should not schedule if storage class zones "
                    "are incompatible"),
    pytest.param(True, ("test-zone-1",), [], "",
                 id="Volume Topology Requirements/should not schedule if storage class zones "
                    "are incompatible (ephemeral volume)"),
])
def test_storage_class_zones(ephemeral: bool, zones: tuple[str, ...], expected: list[str],
                             case: str) -> None:
    doc = _pod_p()
    doc["spec"].update(_zone_in(*zones))
    if ephemeral:
        objects = [_storage_class(), _ephemeral_claim(None),
                   _with_ephemeral(doc, "my-storage-class")]
    else:
        objects = [_storage_class(), _pvc("claim"), _with_claim(doc, "claim")]
    result = run(DEFAULTS, *objects)
    assert _zones(result.launched) == expected
    assert ("default/p" in result.placed) is bool(expected)


@pytest.mark.parametrize(("ephemeral", "zones", "expected", "case"), [
    pytest.param(False, None, ["test-zone-3"], "",
                 id="Volume Topology Requirements/should schedule to volume zones if volume "
                    "already bound"),
    pytest.param(True, None, ["test-zone-3"], "",
                 id="Volume Topology Requirements/should schedule to volume zones if volume "
                    "already bound (ephemeral volume)"),
    pytest.param(False, ("test-zone-1",), [], "",
                 id="Volume Topology Requirements/should not schedule if volume zones are "
                    "incompatible"),
    pytest.param(True, ("test-zone-1",), [], "",
                 id="Volume Topology Requirements/should not schedule if volume zones are "
                    "incompatible (ephemeral volume)"),
])
def test_volume_zones(ephemeral: bool, zones: tuple[str, ...] | None, expected: list[str],
                      case: str) -> None:
    doc = _pod_p()
    if zones is not None:
        doc["spec"].update(_zone_in(*zones))
    volume = _pv("pv", zones=("test-zone-3",), claim="p-vol" if ephemeral else "claim")
    if ephemeral:
        objects = [_storage_class(), volume, _ephemeral_claim("pv"),
                   _with_ephemeral(doc, "my-storage-class")]
    else:
        objects = [_storage_class(), volume, _pvc("claim", volume="pv"), _with_claim(doc, "claim")]
    result = run(DEFAULTS, *objects)
    assert _zones(result.launched) == expected


@pytest.mark.parametrize(("ephemeral", "source", "case"), [
    pytest.param(False, "local", "",
                 id="Volume Topology Requirements/should ignore hostname affinity scheduling "
                    "when using local path volumes/when using local volumes"),
    pytest.param(False, "hostPath", "",
                 id="Volume Topology Requirements/should ignore hostname affinity scheduling "
                    "when using local path volumes/when using hostpath volumes"),
    pytest.param(True, "local", "",
                 id="Volume Topology Requirements/should ignore hostname affinity scheduling "
                    "when using local path volumes (ephemeral volume)/when using local volumes"),
    pytest.param(True, "hostPath", "",
                 id="Volume Topology Requirements/should ignore hostname affinity scheduling "
                    "when using local path volumes (ephemeral volume)/when using hostpath "
                    "volumes"),
    pytest.param(False, "csi", "",
                 id="Volume Topology Requirements/should not ignore hostname affinity when "
                    "using non-local path volumes"),
])
def test_hostname_affinity_volumes(ephemeral: bool, source: str, case: str) -> None:
    local = source != "csi"
    sc = _storage_class("local-path", (), "kubernetes.io/no-provisioner") if local \
        else _storage_class()
    volume = _pv("pv", str(sc["metadata"]["name"]), hostname="random-node", source=source,
                 claim="p-vol" if ephemeral else "claim")
    doc = _pod_p()
    if ephemeral:
        claim = _ephemeral_claim("pv")
        claim["spec"]["storageClassName"] = sc["metadata"]["name"]
        objects = [sc, volume, claim, _with_ephemeral(doc, str(sc["metadata"]["name"]))]
    else:
        objects = [sc, volume, _pvc("claim", str(sc["metadata"]["name"]), "pv"),
                   _with_claim(doc, "claim")]
    result = run(DEFAULTS, *objects)
    assert ("default/p" in result.placed) is local
    if local:
        # Karpenter launched the node; kube-scheduler still reads the volume's hostname
        # affinity and does not bind the pod there: it stays pending (not an upstream
        # assertion: what dralab's scheduler then decides).
        [(pool, _)] = result.launched
        model = result.karpenter
        node, slices = model.templates().node(pool, 0)
        model.scheduler.cluster.add_node(node, slices)
        again = model.scheduler.run([model.scheduler.cluster.pods["default/p"]])
        assert [u.pod.metadata.name for u in again.unplaced] == ["p"]
        assert "didn't match PersistentVolume's node affinity" in again.unplaced[0].message


@upstream("Volume Topology Requirements/should not relax an added volume topology zone "
          "node-selector away")
def test_volume_zone_not_relaxed(case: str) -> None:
    doc = _with_claim(pod("p"), "claim")
    doc["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": "example.com/label", "operator": "In",
                                   "values": ["unsupported"]}]},
            {"matchExpressions": [{"key": "karpenter.sh/capacity-type", "operator": "In",
                                   "values": ["on-demand"]}]}]}}}
    result = run(DEFAULTS, _storage_class(), _pv("pv", zones=("test-zone-3",)),
                 _pvc("claim", volume="pv"), doc)
    assert _zones(result.launched) == ["test-zone-3"]


# -- Preferential Fallback/Preferences: --preference-policy Respect (Karpenter's default)
# on preferred node affinity, relaxed term by term.

PREFS = "Preferential Fallback/Preferences/"
ZONE_LABEL, TYPE_LABEL = "topology.kubernetes.io/zone", "node.kubernetes.io/instance-type"


def _preferring(*terms: tuple[int, str, str]) -> Doc:
    """A pod whose preferred node affinity terms are (weight, key, In value)."""
    return pod("p", spec={"affinity": {"nodeAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": w, "preference": {"matchExpressions": [
                {"key": k, "operator": "In", "values": [v]}]}} for w, k, v in terms]}}})


def _template_of(result: Run) -> Node:
    [pool] = [u.pool for u in result.decisions.scale_ups if "default/p" in u.pods]
    return result.karpenter.templates().node(pool, 0)[0]


@upstream(PREFS + "should relax all node affinity terms")
def test_relax_all_node_affinity_terms(case: str) -> None:
    result = run(DEFAULTS, _preferring((1, ZONE_LABEL, "invalid"), (1, TYPE_LABEL, "invalid")))
    assert result.placed == ["default/p"]


@upstream(PREFS + "should relax to use lighter weights")
def test_relax_to_lighter_weights(case: str) -> None:
    settings = nodepool(template={"spec": {"requirements": [
        {"key": ZONE_LABEL, "operator": "In", "values": ["test-zone-1", "test-zone-2"]}]}})
    result = run(DEFAULTS, _preferring((100, TYPE_LABEL, "test-zone-3"),
                                       (50, ZONE_LABEL, "test-zone-2"),
                                       (1, ZONE_LABEL, "test-zone-1")), settings=settings)
    assert (_template_of(result).metadata.labels or {})[ZONE_LABEL] == "test-zone-2"


@upstream(PREFS + "should tolerate PreferNoSchedule taint only after trying to relax Affinity "
          "terms")
def test_prefer_no_schedule_after_relaxing(case: str) -> None:
    taint = {"key": "foo", "value": "bar", "effect": "PreferNoSchedule"}
    settings = nodepool(template={"spec": {"taints": [taint]}})
    result = run(DEFAULTS, _preferring((1, ZONE_LABEL, "invalid"), (1, TYPE_LABEL, "invalid")),
                 settings=settings)
    taints = _template_of(result).spec.taints
    assert [(t.key, t.value, t.effect) for t in taints] == [("foo", "bar", "PreferNoSchedule")]


@pytest.mark.parametrize(("key", "case"), [
    pytest.param(ZONE_LABEL, "", id=PREFS + "should ignore node "
                 "preferredDuringSchedulingIgnoredDuringExecution affinity/"
                 "topology.kubernetes.io/zone"),
    pytest.param("kubernetes.io/hostname", "", id=PREFS + "should ignore node "
                 "preferredDuringSchedulingIgnoredDuringExecution affinity/"
                 "kubernetes.io/hostname"),
])
def test_unmet_node_preference_shares_a_node(key: str, case: str) -> None:
    # No type meets the preference (value-1): relaxed, the two pods share one node.
    preferring = _preferring((1, key, "value-1"))
    preferring["metadata"]["name"] = "pref"
    preferring["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "1"}}
    result = run(DEFAULTS, pod("p1", cpu="2", labels={"app": "foo"}), preferring)
    assert [(n, sorted(pods)) for _, n, pods in _ups(result)] == [
        (1, ["default/p1", "default/pref"])]


# -- Preferential Fallback/Ignore Preferences (--preference-policy Ignore): the model's
# launches read no preferred terms. Upstream asserts which pods share a node: here, a
# node is one launch of a type (add 1) and the pods it is for.

IGNORE = "Preferential Fallback/Ignore Preferences/"
ZONE, HOSTNAME = "topology.kubernetes.io/zone", "kubernetes.io/hostname"


def _node_of(result_ups: list[tuple[str, int, list[str]]], pod_key: str) -> tuple[str, int]:
    """The launch (pool, add) whose pods include ``pod_key``; each must be one node."""
    [(pool, add)] = [(p, n) for p, n, pods in result_ups if pod_key in pods]
    assert add == 1
    return pool, add


def _ups(result: Run) -> list[tuple[str, int, list[str]]]:
    return [(u.pool, u.add, list(u.pods)) for u in result.decisions.scale_ups]


def _zone_pods(preference: Doc) -> list[Doc]:
    """A 2-CPU pod in zone 1, two 3-CPU pods in zone 2, and a 1-CPU pod with
    ``preference`` (towards zone 2, or the zone-2 pods)."""
    return [pod("zone1", cpu="2", labels={"app": "foo"}, spec={"nodeSelector": {
                ZONE: "test-zone-1"}}),
            *[pod(f"zone2-{i}", cpu="3", labels={"app": "bar"}, spec={"nodeSelector": {
                ZONE: "test-zone-2"}}) for i in range(2)],
            pod("pref", cpu="1", labels={"app": "baz"}, spec={"affinity": preference})]


def _assert_with_zone1(result: Run) -> None:
    ups = _ups(result)
    assert result.pending == []
    assert _node_of(ups, "default/pref") == _node_of(ups, "default/zone1")
    assert _zones([_node_of(ups, "default/pref")]) == ["test-zone-1"]


@upstream(IGNORE + "should ignore node affinity preferences")
def test_ignore_node_affinity_preferences(case: str) -> None:
    preference = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
        "weight": 1, "preference": {"matchExpressions": [
            {"key": ZONE, "operator": "In", "values": ["test-zone-2"]}]}}]}}
    _assert_with_zone1(run(DEFAULTS, *_zone_pods(preference), preference_policy="Ignore"))


@pytest.mark.parametrize(("key", "case"), [
    pytest.param(ZONE, "", id=IGNORE + "should ignore pod affinity preferences/"
                 "topology.kubernetes.io/zone"),
    pytest.param(HOSTNAME, "", id=IGNORE + "should ignore pod affinity preferences/"
                 "topology.kubernetes.io/zone #2"),
])
def test_ignore_pod_affinity_preferences(key: str, case: str) -> None:
    preference = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
        "weight": 1, "podAffinityTerm": {"topologyKey": key,
                                         "labelSelector": {"matchLabels": {"app": "bar"}}}}]}}
    _assert_with_zone1(run(DEFAULTS, *_zone_pods(preference), preference_policy="Ignore"))


def _five_on_one_node(spec: Doc) -> None:
    result = run(DEFAULTS, *[pod(f"p{i}", labels={"app": "foo"}, spec=spec) for i in range(5)],
                 preference_policy="Ignore")
    assert [n for _, n in result.launched] == [1]
    assert result.placed == [f"default/p{i}" for i in range(5)]


@pytest.mark.parametrize(("key", "case"), [
    pytest.param(ZONE, "", id=IGNORE + "should ignore topologySpreadConstraint preferences/"
                 "topology.kubernetes.io/zone"),
    pytest.param(HOSTNAME, "", id=IGNORE + "should ignore topologySpreadConstraint "
                 "preferences/topology.kubernetes.io/zone #2"),
])
def test_ignore_spread_preferences(key: str, case: str) -> None:
    _five_on_one_node({"topologySpreadConstraints": [{
        "maxSkew": 1, "topologyKey": key, "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {"matchLabels": {"app": "foo"}}}]})


@pytest.mark.parametrize(("key", "case"), [
    pytest.param(ZONE, "", id=IGNORE + "should ignore pod anti-affinity preferences/"
                 "topology.kubernetes.io/zone"),
    pytest.param(HOSTNAME, "", id=IGNORE + "should ignore pod anti-affinity preferences/"
                 "topology.kubernetes.io/zone #2"),
])
def test_ignore_anti_affinity_preferences(key: str, case: str) -> None:
    _five_on_one_node({"affinity": {"podAntiAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [{
            "weight": 1, "podAffinityTerm": {"topologyKey": key, "labelSelector": {
                "matchLabels": {"app": "foo"}}}}]}}})


# -- Several NodePools: weights, labels, taints; static, deleting and not Ready ones -----

def _pools(*settings: tuple[str, Doc]) -> list[NodePoolSettings]:
    """NodePools by name with more spec fields each (test.NodePool's names are random;
    these are chosen so that the order of equal weights, later names first, would pick
    the wrong one)."""
    return [nodepool(name=name, spec_extra=extra) for name, extra in settings]


def _nodepool_of(result: Run, key: str) -> str:
    return result.node_labels(key)["karpenter.sh/nodepool"]


@upstream("Multiple NodePools/should schedule to an explicitly selected NodePool")
def test_explicit_nodepool(case: str) -> None:
    result = run(DEFAULTS, pod("p", spec={"nodeSelector": {"karpenter.sh/nodepool": "np-a"}}),
                 nodepools=_pools(("np-a", {}), ("np-b", {})))
    assert _nodepool_of(result, "default/p") == "np-a"


@upstream("Multiple NodePools/should schedule to a NodePool by labels")
def test_nodepool_by_labels(case: str) -> None:
    labelled = nodepool(name="np-a", template={"metadata": {"labels": {"foo": "bar"}}})
    result = run(DEFAULTS, pod("p", spec={"nodeSelector": {"foo": "bar"}}),
                 nodepools=[labelled, nodepool(name="np-b")])
    assert _nodepool_of(result, "default/p") == "np-a"


@upstream("Multiple NodePools/should not match NodePool with PreferNoSchedule taint when "
          "other NodePool match")
def test_prefer_no_schedule_nodepool(case: str) -> None:
    tainted = nodepool(name="np-b", template={"spec": {"taints": [
        {"key": "foo", "value": "bar", "effect": "PreferNoSchedule"}]}})
    result = run(DEFAULTS, pod("p"), nodepools=[tainted, nodepool(name="np-a")])
    assert _nodepool_of(result, "default/p") != "np-b"


@upstream("Multiple NodePools/Weighted NodePools/should schedule to the nodepool with the "
          "highest priority always")
def test_weighted_nodepools(case: str) -> None:
    pools = _pools(("np-c", {}), ("np-b", {"weight": 20}), ("np-a", {"weight": 100}))
    result = run(DEFAULTS, pod("p0"), pod("p1"), pod("p2"), nodepools=pools)
    assert [_nodepool_of(result, f"default/p{i}") for i in range(3)] == ["np-a"] * 3


@upstream("Multiple NodePools/Weighted NodePools/should schedule to explicitly selected "
          "nodepool even if other nodePools are higher priority")
def test_weighted_explicit_nodepool(case: str) -> None:
    pools = _pools(("np-c", {}), ("np-b", {"weight": 20}), ("np-a", {"weight": 100}))
    result = run(DEFAULTS, pod("p", spec={"nodeSelector": {"karpenter.sh/nodepool": "np-c"}}),
                 nodepools=pools)
    assert _nodepool_of(result, "default/p") == "np-c"


@upstream("StaticNodePool/should not create NodeClaims for StaticNodePool")
def test_static_nodepool(case: str) -> None:
    result = run(DEFAULTS, pod("p"), nodepools=_pools(("np-static", {"replicas": 2})))
    assert result.launched == [] and result.pending == ["default/p"]


@upstream("StaticNodePool/should still provision dynamic NodeClaims when there are both "
          "Static and Dynamic NodePools")
def test_static_and_dynamic_nodepools(case: str) -> None:
    # The static one named later: it would come first by name if it were used.
    result = run(DEFAULTS, pod("p"),
                 nodepools=_pools(("np-a", {}), ("np-static", {"replicas": 1})))
    assert _nodepool_of(result, "default/p") == "np-a"


DELETING = {"deletionTimestamp": "2026-01-01T00:00:00Z"}


@upstream("should ignore NodePools that are deleting")
def test_deleting_nodepool(case: str) -> None:
    result = run(DEFAULTS, pod("p"), settings=nodepool(meta_extra=DELETING))
    assert result.launched == [] and result.pending == ["default/p"]


@upstream("should mark pod as unschedulable if there are no valid nodepools")
def test_no_valid_nodepools(case: str) -> None:
    result = run(DEFAULTS, pod("p"), settings=nodepool(meta_extra=DELETING))
    assert [(p.pod, p.reason) for p in result.decisions.pending] == [
        ("default/p", "no dynamic nodepools found")]


@upstream("Daemonsets/should account for daemonsets (with startup taint)")
def test_daemonset_with_startup_taint(case: str) -> None:
    # Startup taints are on the node only until its daemons remove them: pods and the
    # DaemonSet need not tolerate them, so the overhead counts (the 4-CPU type, not 2).
    taint = {"key": "foo.com/taint", "effect": "NoSchedule"}
    settings = nodepool(template={"spec": {"startupTaints": [taint]}})
    result = run(DEFAULTS, daemonset("ds", DS_2), pod("p", cpu="1", memory="1Gi"),
                 settings=settings,
                 node_claims=True)
    assert result.placed == ["default/p"] and _capacity(result.launched) == [(4, 4)]
    assert result.node_claims[0]["spec"]["startupTaints"] == [taint]


# -- What Karpenter writes on the NodeClaim (CreateCalls) and the node -----------------

def _one_claim(*docs: Doc, settings: NodePoolSettings | None = None,
               grace: str | None = None) -> Doc:
    """Provision; the one NodeClaim created (CreateCalls has length 1)."""
    result = run(DEFAULTS, *docs, settings=settings, node_claims=True,
                 default_termination_grace_period=grace)
    assert result.pending == [] and len(result.node_claims) == 1
    return result.node_claims[0]


def _expect_requirements(claim: Doc, *expected: tuple[str, str, list[str]]) -> None:
    """ExpectNodeClaimRequirements: per key and operator, the same set of values."""
    for key, operator, values in expected:
        [found] = [r for r in claim["spec"]["requirements"]
                   if r["key"] == key and r["operator"] == operator]
        assert sorted(set(found.get("values", []))) == sorted(set(values)), key


def _requests(claim: Doc) -> dict[str, str]:
    return dict(claim["spec"]["resources"]["requests"])


def _template_np(requirements: list[Doc] | None = None, **spec: Doc | list[Doc] | str
                 ) -> NodePoolSettings:
    body: Doc = {**spec}
    if requirements is not None:
        body["requirements"] = requirements
    return nodepool(name="default", template={"spec": body},
                    meta_extra={"uid": "uid-nodepool-default"})


ALL_TYPES = sorted({t.name for t in DEFAULTS})


@upstream("should expect nodeclaim terminationGracePeriod to be the global value when the "
          "nodepool terminationGracePeriod is not set")
def test_grace_period_global(case: str) -> None:
    claim = _one_claim(pod("p"), grace="98h")
    assert claim["spec"]["terminationGracePeriod"] == "98h"


@upstream("should expect nodeclaim terminationGracePeriod to be the nil when the nodepool "
          "terminationGracePeriod and global terminationGracePeriod is not set")
def test_grace_period_none(case: str) -> None:
    assert "terminationGracePeriod" not in _one_claim(pod("p"))["spec"]


@upstream("should respect terminationGracePeriod value set on the nodePool over global "
          "terminationGracePeriod")
def test_grace_period_nodepool(case: str) -> None:
    claim = _one_claim(pod("p"), settings=_template_np(terminationGracePeriod="223h"),
                       grace="47h")
    assert claim["spec"]["terminationGracePeriod"] == "223h"


@upstream("Annotations/should annotate nodes")
def test_annotate_nodes(case: str) -> None:
    settings = nodepool(template={"metadata": {"annotations": {
        "karpenter.sh/do-not-disrupt": "true"}}})
    claim = _one_claim(pod("p"), settings=settings)
    # The NodeClaim's annotations are the node's (Karpenter's registration copies them).
    assert claim["metadata"]["annotations"]["karpenter.sh/do-not-disrupt"] == "true"


@upstream("Labels/should label nodes")
def test_label_nodes(case: str) -> None:
    settings = nodepool(name="default", template={
        "metadata": {"labels": {"test-key-1": "test-value-1"}},
        "spec": {"requirements": [
            {"key": "test-key-2", "operator": "In", "values": ["test-value-2"]},
            {"key": "test-key-3", "operator": "NotIn", "values": ["test-value-3"]},
            {"key": "test-key-4", "operator": "Lt", "values": ["4"]},
            {"key": "test-key-5", "operator": "Gt", "values": ["5"]},
            {"key": "test-key-6", "operator": "Exists"},
            {"key": "test-key-7", "operator": "DoesNotExist"}]}})
    result = run(DEFAULTS, pod("p"), settings=settings)
    labels = result.node_labels("default/p")
    assert labels["karpenter.sh/nodepool"] == "default"
    assert labels["test-key-1"] == "test-value-1" and labels["test-key-2"] == "test-value-2"
    for key, not_value in (("test-key-3", "test-value-3"), ("test-key-4", "test-value-4"),
                           ("test-key-5", "test-value-5")):
        assert key in labels and labels[key] != not_value
    assert "test-key-6" in labels and "test-key-7" not in labels


@pytest.mark.parametrize(("prefix", "case"), [
    pytest.param("", "", id="Labels/should label nodes with labels in the kubernetes domains"),
    pytest.param("subdomain.", "", id="Labels/should label nodes with labels in the subdomain "
                 "from kubernetes domains"),
])
def test_label_kubernetes_domains(prefix: str, case: str) -> None:
    for domain in ("kubernetes.io", "k8s.io"):
        key = f"{prefix}{domain}/test"
        settings = nodepool(template={"metadata": {"labels": {key: "test-value"}}})
        doc = pod("p", spec={"affinity": {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": key, "operator": "In",
                                       "values": ["test-value"]}]}]}}}})
        result = run(DEFAULTS, doc, settings=settings)
        assert result.node_labels("default/p")[key] == "test-value"


@upstream("Labels/should not label nodes with well-known labels from requirements")
def test_no_well_known_labels_from_requirements(case: str) -> None:
    settings = nodepool(template={"spec": {"requirements": [
        {"key": "foo", "operator": "In", "values": ["bar"]},
        {"key": "node.kubernetes.io/windows-build", "operator": "NotIn",
         "values": ["test-value"]}]}})
    labels = run(DEFAULTS, pod("p"), settings=settings).node_labels("default/p")
    assert labels.get("node.kubernetes.io/windows-build") != "test-value"
    assert labels["foo"] == "bar"


NC = "NodeClaim Creation/"


@upstream(NC + "should create a nodeclaim request with expected requirements")
def test_claim_requirements(case: str) -> None:
    # Every instance type of the fake list takes the pod.
    _expect_requirements(_one_claim(pod("p"), settings=_template_np()),
                         ("node.kubernetes.io/instance-type", "In", ALL_TYPES),
                         ("karpenter.sh/nodepool", "In", ["default"]))


@upstream(NC + "should create a nodeclaim request with additional expected requirements")
def test_claim_additional_requirements(case: str) -> None:
    settings = _template_np([
        {"key": "custom-requirement-key", "operator": "In", "values": ["value"]},
        {"key": "custom-requirement-key2", "operator": "In", "values": ["value"]}])
    _expect_requirements(_one_claim(pod("p"), settings=settings),
                         ("node.kubernetes.io/instance-type", "In", ALL_TYPES),
                         ("karpenter.sh/nodepool", "In", ["default"]),
                         ("custom-requirement-key", "In", ["value"]),
                         ("custom-requirement-key2", "In", ["value"]))


@pytest.mark.parametrize(("key", "value", "case"), [
    pytest.param("kubernetes.io/arch", "arm64", "", id=NC + "should create a nodeclaim request "
                 "restricting instance types on architecture"),
    pytest.param("kubernetes.io/os", "ios", "", id=NC + "should create a nodeclaim request "
                 "restricting instance types on operating system"),
])
def test_claim_restricted_types(key: str, value: str, case: str) -> None:
    settings = _template_np([{"key": key, "operator": "In", "values": [value]}])
    _expect_requirements(_one_claim(pod("p"), settings=settings),
                         (key, "In", [value]),
                         ("node.kubernetes.io/instance-type", "In", ["arm-instance-type"]))


def _gpu_pod(name: str, **requests: str) -> Doc:
    """A pod requesting one vendor-a GPU (requests and limits) and ``requests``."""
    doc = pod(name, limits={VENDOR_A: "1"})
    doc["spec"]["containers"][0]["resources"]["requests"] = {**requests, VENDOR_A: "1"}
    return doc


@upstream(NC + "should create a nodeclaim request restricting instance types based on pod "
          "resource requests")
def test_claim_restricted_by_requests(case: str) -> None:
    _expect_requirements(_one_claim(_gpu_pod("p")), ("node.kubernetes.io/instance-type", "In",
                                                     ["gpu-vendor-instance-type"]))


@upstream(NC + "should create a nodeclaim request with the correct owner reference")
def test_claim_owner(case: str) -> None:
    claim = _one_claim(pod("p"), settings=_template_np())
    assert {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "name": "default",
            "uid": "uid-nodepool-default", "blockOwnerDeletion": True} in \
        claim["metadata"]["ownerReferences"]


@upstream(NC + "should create a nodeclaim request propagating the nodeClass reference")
def test_claim_node_class(case: str) -> None:
    ref = {"group": "karpenter.test.sh", "kind": "TestNodeClass", "name": "test"}
    claim = _one_claim(pod("p"), settings=_template_np(nodeClassRef=ref))
    assert claim["spec"]["nodeClassRef"] == ref


def _approx(requests: dict[str, str], expected: dict[str, str]) -> None:
    """ExpectNodeClaimRequests: each expected resource within 10 of its value."""
    for name, value in expected.items():
        have = parse_quantity(requests[name]).as_approximate_float()
        assert abs(have - parse_quantity(value).as_approximate_float()) <= 10, name


ONE_CPU = {"cpu": "1", "memory": "1Mi"}


@upstream(NC + "should create a nodeclaim with resource requests")
def test_claim_requests(case: str) -> None:
    requests = _requests(_one_claim(_gpu_pod("p", cpu="1", memory="1Mi")))
    assert len(requests) == 4
    _approx(requests, {"cpu": "1", "memory": "1Mi", VENDOR_A: "1", "pods": "1"})


@upstream(NC + "should create a nodeclaim with resource requests with daemon overhead")
def test_claim_requests_daemon_overhead(case: str) -> None:
    claim = _one_claim(daemonset("ds", requests=ONE_CPU), pod("p", cpu="1", memory="1Mi"))
    _approx(_requests(claim), {"cpu": "2", "memory": "2Mi", "pods": "2"})


@upstream(NC + "should not double-count daemon overhead when multiple pods are scheduled to "
          "the same nodeclaim")
def test_claim_requests_no_double_count(case: str) -> None:
    claim = _one_claim(daemonset("ds", requests=ONE_CPU), pod("p1", cpu="1", memory="1Mi"),
                       pod("p2", cpu="1", memory="1Mi"))
    _approx(_requests(claim), {"cpu": "3", "memory": "3Mi", "pods": "3"})


# -- Context("MinValuesPolicy"): --min-values-policy Strict (default) and BestEffort --------

MV = "MinValuesPolicy/"
IT_REQ = {"key": "node.kubernetes.io/instance-type", "operator": "In",
          "values": ["instance-type-1", "instance-type-2", "instance-type-3"]}
ZONE_REQ = {"key": "topology.kubernetes.io/zone", "operator": "In",
            "values": ["test-zone-1", "test-zone-2", "test-zone-3"]}


def _mv_types() -> list[InstanceType]:
    """Two arm64 types of 4 CPUs and 4Gi, one spot offering each (zones the fake names
    test-zone-N-spot), at 0.52."""
    return [InstanceType(f"instance-type-{i}", 4, 4, zone=f"test-zone-{i}-spot",
                         capacity_type="spot", price=0.52, arch="arm64") for i in (1, 2)]


def _mv_zone_types() -> list[InstanceType]:
    """One type with spot offerings in two zones (0.52 and 0.54)."""
    return [InstanceType("instance-type-1", 4, 4, zone=zone, capacity_type="spot",
                         price=price, arch="arm64", pool_name=f"instance-type-1-{zone}")
            for zone, price in (("test-zone-1", 0.52), ("test-zone-2", 0.54))]


def _mv_pool(name: str, weight: int | None, *requirements: Doc) -> NodePoolSettings:
    return nodepool(name=name, spec_extra={"weight": weight} if weight else {},
                    template={"spec": {"requirements": list(requirements)}})


def _with_min(requirement: Doc, min_values: int) -> Doc:
    return {**requirement, "minValues": min_values}


def _mv_run(types: list[InstanceType], policy: str, *pools: NodePoolSettings) -> Run:
    return run(types, pod("p", cpu="900m", memory="0.9Gi"), nodepools=list(pools),
               node_claims=True, min_values_policy=policy)


def _relaxed_claim(result: Run, nodepool_name: str = "default") -> tuple[Doc, dict[str, str]]:
    """The one NodeClaim (annotated relaxed) and the labels of the pod's node."""
    assert result.pending == [] and len(result.node_claims) == 1
    [claim] = result.node_claims
    labels = result.node_labels("default/p")
    assert labels["karpenter.sh/nodepool"] == nodepool_name
    assert labels["node.kubernetes.io/instance-type"] == "instance-type-1"
    assert claim["metadata"]["annotations"]["karpenter.sh/nodeclaim-min-values-relaxed"] == \
        "true"
    return claim, labels


def _requirement(claim: Doc, key: str) -> tuple[list[str], int | None]:
    [found] = [r for r in claim["spec"]["requirements"] if r["key"] == key]
    return found["values"], found.get("minValues")


@upstream(MV + "with instance type requirements/with MinValuesPolicy set to Strict/should not "
          "schedule when minValues requirement is not met")
def test_min_values_strict(case: str) -> None:
    result = _mv_run(_mv_types(), "Strict", _mv_pool("default", 100, _with_min(IT_REQ, 3)))
    assert result.launched == [] and result.pending == ["default/p"]
    assert result.decisions.pending[0].reason.startswith("minValues requirement is not met")


BE = MV + "with instance type requirements/with MinValuesPolicy set to BestEffort/"


@upstream(BE + "should schedule even when minValues requirement is not met")
def test_min_values_best_effort(case: str) -> None:
    result = _mv_run(_mv_types(), "BestEffort", _mv_pool("default", 100, _with_min(IT_REQ, 3)))
    claim, _ = _relaxed_claim(result)
    assert _requirement(claim, "node.kubernetes.io/instance-type") == (
        ["instance-type-1", "instance-type-2"], 2)


@upstream(BE + "should relax minValues before falling back to other nodepools")
def test_min_values_relax_before_fallback(case: str) -> None:
    result = _mv_run(_mv_types(), "BestEffort", _mv_pool("default", 100, _with_min(IT_REQ, 3)),
                     _mv_pool("other", 10, IT_REQ))
    claim, _ = _relaxed_claim(result)
    assert _requirement(claim, "node.kubernetes.io/instance-type") == (
        ["instance-type-1", "instance-type-2"], 2)


@upstream(BE + "should choose nodepool with higher weight when relaxing minValues")
def test_min_values_higher_weight(case: str) -> None:
    # The lighter NodePool's name comes later: by name alone it would be tried first.
    result = _mv_run(_mv_types(), "BestEffort", _mv_pool("default", 100, _with_min(IT_REQ, 3)),
                     _mv_pool("other", 10, _with_min(IT_REQ, 3)))
    claim, _ = _relaxed_claim(result)
    assert _requirement(claim, "node.kubernetes.io/instance-type") == (
        ["instance-type-1", "instance-type-2"], 2)


@upstream(MV + "with zone requirements/with MinValuesPolicy set to Strict/should not schedule "
          "when zone minValues requirement is not met")
def test_zone_min_values_strict(case: str) -> None:
    result = _mv_run(_mv_zone_types(), "Strict", _mv_pool("default", None,
                                                          _with_min(ZONE_REQ, 3)))
    assert result.launched == [] and result.pending == ["default/p"]


@upstream(MV + "with zone requirements/with MinValuesPolicy set to BestEffort/should schedule "
          "even when zone minValues requirement is not met")
def test_zone_min_values_best_effort(case: str) -> None:
    result = _mv_run(_mv_zone_types(), "BestEffort", _mv_pool("default", None,
                                                              _with_min(ZONE_REQ, 3)))
    claim, labels = _relaxed_claim(result)
    assert labels["topology.kubernetes.io/zone"] in ("test-zone-1", "test-zone-2")
    assert _requirement(claim, "topology.kubernetes.io/zone") == (ZONE_REQ["values"], 2)


@upstream(MV + "with both instance type and zone requirements/with MinValuesPolicy set to "
          "BestEffort/should schedule when minValues requirement is not met")
def test_both_min_values_best_effort(case: str) -> None:
    result = _mv_run(_mv_zone_types(), "BestEffort", _mv_pool(
        "default", 100, _with_min(IT_REQ, 3), _with_min(ZONE_REQ, 3)))
    claim, labels = _relaxed_claim(result)
    assert labels["topology.kubernetes.io/zone"] in ("test-zone-1", "test-zone-2")
    assert _requirement(claim, "node.kubernetes.io/instance-type") == (["instance-type-1"], 1)
    assert _requirement(claim, "topology.kubernetes.io/zone") == (ZONE_REQ["values"], 2)


# -- The cases the model cannot run (or that are not ported), each with its reason -----

NODEPOOL_HASH = ("not applicable offline: a NodePool changed while a scheduling round runs "
                 "(the hash annotation, karpenter.sh/nodepool-hash, from the NodePool as it "
                 "was); the model reads one snapshot")
PROV_REASONS: list[tuple[str, str]] = [
    ("Batcher/", "not applicable offline: asserts the provisioner's batching window (idle and "
     "max durations on a wall clock); the model provisions a loop's pending pods at once"),
    ("should not use a different NodePool hash", NODEPOOL_HASH),
    ("should mark podHealthyNodePoolScheduledTime", "not a decision: asserts the cluster "
     "state's per-pod timestamp of scheduling against a NodeRegistrationHealthy NodePool "
     "(the pod is scheduled either way)"),
    ("should not mark podHealthyNodePoolScheduledTime", "not a decision: asserts the "
     "cluster state's per-pod timestamp of scheduling against a NodeRegistrationHealthy "
     "NodePool (the pod is scheduled either way)"),
]


NOT_PORTED = not_ported(globals(), PROVISIONING, PROV_REASONS)


@pytest.mark.parametrize("reason", [pytest.param(r, id=c) for c, r in NOT_PORTED])
def test_not_expressible(reason: str) -> None:
    pytest.skip(reason)


def test_every_ported_case_is_upstream() -> None:
    assert_accounted_for(globals(), PROVISIONING, NOT_PORTED)

"""Karpenter's provisioning scheduler tests, ported case by case.

Source: kubernetes-sigs/karpenter at 2266468104f36373ed002241afaee2d3bbc26078,
pkg/controllers/provisioning/scheduling/suite_test.go, Context("Scheduling"). Each
test's id is the upstream Describe/Context/It path. Upstream provisions pending pods
(ExpectProvisioned) and reads which instance type each pod's node has; here one
loop of the Karpenter model and its scale-ups (the Fleet pool per instance type,
zone and OS: ``harness.defaults``). A NodePool requirement on instance-type labels
(arch) is the choice of which fake types are the Fleet's pools.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from dralab.autoscale.karpenter_nodepool import NodePoolSettings

from . import test_deleting, test_inflight
from .harness import (
    ZONES,
    Doc,
    InstanceType,
    Run,
    assert_accounted_for,
    daemonset,
    defaults,
    node,
    nodepool,
    not_ported,
    numbered,
    pod,
    run,
)
from .upstream_cases import SCHEDULING

DEFAULTS = defaults()
AMD64 = [t for t in DEFAULTS if t.arch == "amd64"]


def upstream(path: str) -> pytest.MarkDecorator:
    return pytest.mark.parametrize("case", [pytest.param(path, id=path)])


def _types_of(result_pools: list[tuple[str, int]], types: list[InstanceType]) -> list[str]:
    by_pool = {t.pool: t.name for t in types}
    return sorted(by_pool[p] for p, _ in result_pools)


def _nodes(result_pools: list[tuple[str, int]]) -> int:
    return sum(n for _, n in result_pools)


# -- Describe("Instance Type Compatibility") ----------------------------------------

@upstream("Instance Type Compatibility/should not schedule if requesting more resources "
          "than any instance type has")
def test_more_than_any_type(case: str) -> None:
    result = run(DEFAULTS, pod("p", cpu="512"))
    assert result.launched == [] and result.pending == ["default/p"]


SUPER_GPU = "karpenter.sh/super-great-gpu"
BETTER_GPU = "karpenter.sh/even-better-gpu"


def _gpu_types() -> list[InstanceType]:
    """fake.InstanceTypes(5) with 25 of a fake GPU added to the first type's capacity and
    25 of another to the second's (after pricing: the prices are the plain types')."""
    types = numbered(5)
    return [replace(types[0], extended=((SUPER_GPU, 25),)),
            replace(types[1], extended=((BETTER_GPU, 25),)), *types[2:]]


@upstream("Instance Type Compatibility/should launch pods with resources that aren't on any "
          "single instance type on different instances")
def test_resources_on_different_instances(case: str) -> None:
    result = run(_gpu_types(), pod("a", limits={SUPER_GPU: "1"}),
                 pod("b", limits={BETTER_GPU: "1"}))
    assert result.placed == ["default/a", "default/b"] and _nodes(result.launched) == 2


@upstream("Instance Type Compatibility/should fail to schedule a pod with resources requests "
          "that aren't on a single instance type")
def test_resources_not_on_one_type(case: str) -> None:
    result = run(_gpu_types(), pod("p", limits={SUPER_GPU: "1", BETTER_GPU: "1"}))
    assert result.launched == [] and result.pending == ["default/p"]


@pytest.mark.parametrize(("selectors", "case"), [
    pytest.param(({"kubernetes.io/arch": "amd64"}, {"kubernetes.io/arch": "arm64"}), "",
                 id="Instance Type Compatibility/should launch pods with different archs on "
                    "different instances"),
    pytest.param(({"kubernetes.io/os": "linux"}, {"kubernetes.io/os": "windows"}), "",
                 id="Instance Type Compatibility/should launch pods with different operating "
                    "systems on different instances"),
    pytest.param(({"beta.kubernetes.io/instance-type": "small-instance-type"},
                  {"node.kubernetes.io/instance-type": "default-instance-type"}), "",
                 id="Instance Type Compatibility/should launch pods with different instance "
                    "type node selectors on different instances"),
    pytest.param(({"topology.kubernetes.io/zone": "test-zone-1"},
                  {"topology.kubernetes.io/zone": "test-zone-2"}), "",
                 id="Instance Type Compatibility/should launch pods with different zone "
                    "selectors on different instances"),
])
def test_different_selectors_different_instances(selectors: tuple[dict[str, str], ...],
                                                 case: str) -> None:
    pods = [pod(f"p{i}", spec={"nodeSelector": s}) for i, s in enumerate(selectors)]
    result = run(DEFAULTS, *pods)
    assert result.pending == []
    assert _nodes(result.launched) == 2 and result.placed == ["default/p0", "default/p1"]


@pytest.mark.parametrize(("requirement", "case"), [
    pytest.param({"key": "node.kubernetes.io/instance-type", "operator": "In",
                  "values": ["arm-instance-type"]}, "",
                 id="Instance Type Compatibility/should exclude instance types that are not "
                    "supported by the pod constraints (node affinity/instance type)"),
    pytest.param({"key": "kubernetes.io/os", "operator": "In", "values": ["ios"]}, "",
                 id="Instance Type Compatibility/should exclude instance types that are not "
                    "supported by the pod constraints (node affinity/operating system)"),
])
def test_excluded_by_nodepool_arch(requirement: Doc, case: str) -> None:
    # The NodePool requires amd64: its types are the amd64 ones.
    affinity = {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [requirement]}]}}}}
    result = run(AMD64, pod("p", spec=affinity))
    assert result.launched == [] and result.pending == ["default/p"]


@upstream("Instance Type Compatibility/should exclude instance types that are not supported "
          "by the provider constraints (arch)")
def test_excluded_by_provider_arch(case: str) -> None:
    result = run(AMD64, pod("p", limits={"cpu": "14"}))
    assert result.launched == [] and result.pending == ["default/p"]


@pytest.mark.parametrize(("selectors", "expected", "case"), [
    pytest.param(({"size": "large"}, {"size": "small"}), ["fake-it-0", "fake-it-4"], "",
                 id="Instance Type Compatibility/Provider Specific Labels/should filter "
                    "instance types that match labels"),
    pytest.param(({"size": "large", "node.kubernetes.io/instance-type": "fake-it-0"},
                  {"size": "small", "node.kubernetes.io/instance-type": "fake-it-4"}), [], "",
                 id="Instance Type Compatibility/Provider Specific Labels/should not schedule "
                    "with incompatible labels"),
])
def test_provider_labels(selectors: tuple[dict[str, str], ...], expected: list[str],
                         case: str) -> None:
    types = numbered(5)
    pods = [pod(f"p{i}", spec={"nodeSelector": s}) for i, s in enumerate(selectors)]
    result = run(types, *pods)
    assert _types_of(result.launched, types) == expected
    if not expected:
        assert result.pending == ["default/p0", "default/p1"]


@pytest.mark.parametrize(("operator", "expected", "case"), [
    pytest.param("Exists", "fake-it-4", "",
                 id="Instance Type Compatibility/Provider Specific Labels/should schedule "
                    "optional labels"),
    pytest.param("DoesNotExist", "fake-it-0", "",
                 id="Instance Type Compatibility/Provider Specific Labels/should schedule "
                    "without optional labels if disallowed"),
])
def test_optional_labels(operator: str, expected: str, case: str) -> None:
    types = numbered(5)
    affinity = {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "special", "operator": operator}]}]}}}}
    result = run(types, pod("p", spec=affinity))
    assert _types_of(result.launched, types) == [expected]


# -- Describe("Binpacking") ---------------------------------------------------------

@pytest.mark.parametrize(("memory", "case"), [
    pytest.param("100M", "", id="Binpacking/should schedule a small pod on the smallest "
                                "instance"),
    pytest.param("2000M", "", id="Binpacking/should schedule a small pod on the smallest "
                                 "possible instance type"),
])
def test_small_pod_smallest_instance(memory: str, case: str) -> None:
    result = run(DEFAULTS, pod("p", memory=memory))
    assert _types_of(result.launched, DEFAULTS) == ["small-instance-type"]


@upstream("Binpacking/should schedule multiple small pods on the smallest possible "
          "instance type")
def test_multiple_small_pods(case: str) -> None:
    result = run(DEFAULTS, *[pod(f"p{i}", memory="10M") for i in range(5)])
    assert result.launched and _nodes(result.launched) == 1
    assert _types_of(result.launched, DEFAULTS) == ["small-instance-type"]
    assert len(result.placed) == 5


@upstream("Binpacking/should create new nodes when a node is at capacity")
def test_new_nodes_at_capacity(case: str) -> None:
    amd = {"nodeSelector": {"kubernetes.io/arch": "amd64"}}
    result = run(DEFAULTS, *[pod(f"p{i:02d}", memory="1.8G", spec=amd) for i in range(40)])
    assert _nodes(result.launched) == 20 and len(result.placed) == 40
    assert set(_types_of(result.launched, DEFAULTS)) == {"default-instance-type"}


@upstream("Binpacking/should pack small and large pods together")
def test_pack_small_and_large(case: str) -> None:
    amd = {"nodeSelector": {"kubernetes.io/arch": "amd64"}}
    pods = [*[pod(f"l{i:02d}", memory="1.8G", spec=amd) for i in range(40)],
            *[pod(f"s{i:02d}", memory="400M", spec=amd) for i in range(20)]]
    result = run(DEFAULTS, *pods)
    assert _nodes(result.launched) == 20 and len(result.placed) == 60
    assert set(_types_of(result.launched, DEFAULTS)) == {"default-instance-type"}


@upstream("Binpacking/should pack nodes tightly")
def test_pack_tightly(case: str) -> None:
    types = numbered(5)
    result = run(types, pod("big", cpu="4.5"), pod("small", cpu="1"))
    assert _nodes(result.launched) == 2 and len(set(result.launched)) == 2


@upstream("Binpacking/should handle zero-quantity resource requests")
def test_zero_quantity(case: str) -> None:
    weird = {"foo.com/weird-resources": "0"}
    doc = pod("p", limits=weird)
    doc["spec"]["containers"][0]["resources"]["requests"] = dict(weird)
    result = run(DEFAULTS, doc)
    assert result.placed == ["default/p"]


@upstream("Binpacking/should not schedule pods that exceed every instance type's capacity")
def test_exceed_every_type(case: str) -> None:
    result = run(DEFAULTS, pod("p", memory="2Ti"))
    assert result.launched == [] and result.pending == ["default/p"]


@upstream("Binpacking/should create new nodes when a node is at capacity due to pod limits "
          "per node")
def test_pod_limits_per_node(case: str) -> None:
    amd = {"nodeSelector": {"kubernetes.io/arch": "amd64"}}
    result = run(DEFAULTS, *[pod(f"p{i:02d}", cpu="1m", memory="1m", spec=amd)
                             for i in range(25)])
    assert _nodes(result.launched) == 5 and len(result.placed) == 25
    assert set(_types_of(result.launched, DEFAULTS)) == {"small-instance-type"}


@upstream("Binpacking/should take into account initContainer resource requests when "
          "binpacking")
def test_init_container_requests(case: str) -> None:
    result = run(DEFAULTS, pod("p", cpu="1", memory="1Gi", init={"cpu": "2", "memory": "1Gi"}))
    assert _types_of(result.launched, DEFAULTS) == ["default-instance-type"]


@upstream("Binpacking/should not schedule pods when initContainer resource requests are "
          "greater than available instance types")
def test_init_container_too_large(case: str) -> None:
    result = run(DEFAULTS, pod("p", cpu="1", memory="1Gi", init={"cpu": "2", "memory": "1Ti"}))
    assert result.launched == [] and result.pending == ["default/p"]


@upstream("Binpacking/should select for valid instance types, regardless of price")
def test_regardless_of_price(case: str) -> None:
    types = [InstanceType("medium", 2, 2, price=3.0), InstanceType("small", 1, 1, price=2.0),
             InstanceType("large", 4, 4, price=1.0)]
    result = run(types, pod("p", limits={"cpu": "1m", "memory": "1Mi"}))
    assert _types_of(result.launched, types) == ["large"]


# -- Describe("Existing Nodes") -----------------------------------------------------

@pytest.mark.parametrize(("count", "case"), [
    pytest.param(1, "", id="Existing Nodes/should schedule a pod to an existing node unowned "
                           "by Karpenter"),
    pytest.param(100, "", id="Existing Nodes/should schedule multiple pods to an existing node "
                             "unowned by Karpenter"),
])
def test_existing_unowned_node(count: int, case: str) -> None:
    memory = "10Gi" if count == 1 else "100Gi"
    pods = [pod(f"p{i:03d}", cpu="10m", limits={"cpu": "10m"}) for i in range(count)]
    result = run(DEFAULTS, node("existing", None, cpu="10", memory=memory, pods="110"), *pods,
                 consolidation=False)
    # The scheduler placed every pod on the existing node: nothing to launch.
    assert result.launched == [] and result.pending == []


@upstream("Existing Nodes/should consider a pod incompatible with an existing node but "
          "compatible with NodePool")
def test_incompatible_existing_compatible_nodepool(case: str) -> None:
    zone = {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [
            {"key": "topology.kubernetes.io/zone", "operator": "In",
             "values": ["test-zone-1"]}]}]}}}}
    # The existing node has no zone label: the pod launches a node in test-zone-1.
    result = run(DEFAULTS, node("existing", None, cpu="10", memory="10Gi", pods="110"),
                 pod("p", spec=zone), consolidation=False)
    assert result.placed == ["default/p"]
    zones = {t.pool: t.zone for t in DEFAULTS}
    assert [zones[p] for p, _ in result.launched] == ["test-zone-1"]


@upstream("Existing Nodes/Daemonsets/should not subtract daemonset overhead that is not "
          "strictly compatible with an existing node")
def test_daemonset_overhead_not_on_existing_node(case: str) -> None:
    # A DaemonSet of 100 CPUs pinned to test-zone-1 has no pod on the existing node (no
    # zone label), so one pod takes that node; the other would need a new node, and every
    # type offered in test-zone-1 carries the DaemonSet's overhead: none can take it.
    existing = node("existing", None, cpu="1", memory="1Gi", pods="110",
                    labels={"karpenter.sh/nodepool": "default"})
    zone1 = {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [
            {"key": "topology.kubernetes.io/zone", "operator": "In",
             "values": ["test-zone-1"]}]}]}}}}
    ds = daemonset("ds", requests={"cpu": "100", "memory": "100Gi"}, spec=zone1)
    result = run(DEFAULTS, existing, ds, pod("p1", cpu="1", memory="1Gi"),
                 pod("p2", cpu="1", memory="1Gi"), consolidation=False)
    assert result.launched == [] and len(result.pending) == 1
    assert result.karpenter.scheduler.cluster.pods[
        ({"default/p1", "default/p2"} - set(result.pending)).pop()].assumed_node == "existing"


# -- Describe("Dynamic Resource Allocation (DRA)"): with --ignore-dra-requests (upstream's
#    default) a pod with resource claims gets no NodeClaim but a DRA error. test.PodOptions'
#    ContainerResourceClaims name a claim the pod does not list, which the API server
#    refuses; here the pod lists it (spec.resourceClaims), as a valid pod must.

CLAIM = {"resourceClaims": [{"name": "gpu-claim", "resourceClaimName": "gpu-claim"}]}
GPU_CLAIM = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "gpu-claim", "namespace": "default"},
             "spec": {"devices": {"requests": [
                 {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}}


def _claims(on_init: bool, on_main: bool) -> Doc:
    spec: Doc = {"containers": [{"name": "main", "image": "nvidia/cuda:latest", "resources": {
        "requests": {"cpu": "1", "memory": "1Gi"},
        **({"claims": [{"name": "gpu-claim"}]} if on_main else {})}}]}
    if on_init:
        spec["initContainers"] = [{"name": "init", "image": "nvidia/cuda:latest", "resources": {
            "requests": {"cpu": "500m", "memory": "512Mi"}, "claims": [{"name": "gpu-claim"}]}}]
    if on_init or on_main:
        spec.update(CLAIM)
    return spec


@pytest.mark.parametrize(("on_init", "on_main", "dra", "case"), [
    pytest.param(False, True, True, "", id="Dynamic Resource Allocation (DRA)/should handle DRA "
                                           "pods correctly/container with resource claims"),
    pytest.param(True, False, True, "", id="Dynamic Resource Allocation (DRA)/should handle DRA "
                                           "pods correctly/init container with resource claims"),
    pytest.param(True, True, True, "",
                 id="Dynamic Resource Allocation (DRA)/should handle DRA pods correctly/pod "
                    "with both container and init container resource claims"),
    pytest.param(False, False, False, "",
                 id="Dynamic Resource Allocation (DRA)/should handle DRA pods correctly/"
                    "non-DRA pod without resource claims"),
])
def test_dra_pods_ignored(on_init: bool, on_main: bool, dra: bool, case: str) -> None:
    doc = pod("p")
    doc["spec"] = _claims(on_init, on_main)
    result = run(DEFAULTS, GPU_CLAIM, doc)
    if dra:
        assert result.launched == [] and result.pending == ["default/p"]
        assert result.decisions.pending[0].reason == (
            "pod has Dynamic Resource Allocation requirements that are not yet supported by "
            "Karpenter")
    else:
        assert result.placed == ["default/p"] and sum(n for _, n in result.launched) == 1


@upstream("Dynamic Resource Allocation (DRA)/should handle DaemonSet pods with DRA "
          "requirements based on IgnoreDRARequests flag value")
def test_dra_daemonset_overhead(case: str) -> None:
    # The DaemonSet's pod asks 3 CPUs and a GPU through a claim template (upstream's pod
    # names a container claim it does not list, which the API server refuses); each
    # type here has one GPU. Ignoring DRA requests, its pod is no overhead: the cheapest
    # type for the 1-CPU pod; counting them, a type with 4 CPUs more.
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "gpu", "namespace": "default"},
                "spec": {"spec": {"devices": {"requests": [
                    {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}}}
    ds = daemonset("dra-daemon", requests={"cpu": "3"}, spec={
        "resourceClaims": [{"name": "gpu-claim", "resourceClaimTemplateName": "gpu"}]})
    ds["spec"]["template"]["spec"]["containers"][0]["resources"]["claims"] = [
        {"name": "gpu-claim"}]
    gpus = {"gpu": {"model": "h100-80gb", "count": 1}}
    cpus: dict[bool, int] = {}
    for ignore in (True, False):
        result = run(DEFAULTS, template, ds, pod("app", cpu="1"), ignore_dra_requests=ignore,
                     pool_extra=gpus, consolidation=False)
        assert result.placed == ["default/app"]
        [(pool, _)] = result.launched
        cpus[ignore] = {t.pool: t.cpu for t in DEFAULTS}[pool]
    assert cpus[True] < cpus[False]


# -- Describe("Preferential Fallback"), Context("Required"): node affinity terms are ORed.

def _zone_terms(*zones: str) -> Doc:
    return {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [z]}]}
            for z in zones]}}}}


@upstream("Preferential Fallback/Required/should not relax the final term")
def test_required_final_term(case: str) -> None:
    # The NodePool requires test-zone-1 and default-instance-type: those are its types.
    types = [t for t in DEFAULTS if t.zone == "test-zone-1" and t.name == "default-instance-type"]
    result = run(types, pod("p", spec=_zone_terms("invalid")))
    assert result.launched == [] and result.pending == ["default/p"]


@upstream("Preferential Fallback/Required/should relax multiple terms")
def test_required_multiple_terms(case: str) -> None:
    # Karpenter tries the terms in order and stops at the first that schedules
    # (test-zone-1); the model takes any term's nodes and breaks the price tie among
    # the zones by pool name, which puts test-zone-1 first here.
    result = run(DEFAULTS, pod("p", spec=_zone_terms("invalid", "invalid", "test-zone-1",
                                                     "test-zone-2")))
    zones = {t.pool: t.zone for t in DEFAULTS}
    assert [zones[p] for p, _ in result.launched] == ["test-zone-1"]


@upstream("Binpacking/should take pod runtime class into consideration")
def test_runtime_class_overhead(case: str) -> None:
    # The RuntimeClass's podFixed overhead (2 CPUs) is on the pod as the API server's
    # RuntimeClass admission writes it (spec.overhead): the model reads pods as stored.
    doc = pod("p", cpu="1")
    doc["spec"]["runtimeClassName"] = "my-runtime-class"
    doc["spec"]["overhead"] = {"cpu": "2"}
    result = run(DEFAULTS, doc)
    assert _types_of(result.launched, DEFAULTS) == ["default-instance-type"]


# -- Describe("VolumeUsage"): one type, "instance-type" (1024 CPUs and pods), offered
#    in test-zone-1..3 ------------------------------------------------------------------

ONE_TYPE = [InstanceType("instance-type", 1024, 4, 1024, zone, per_zone=True)
            for zone in ("test-zone-1", "test-zone-2", "test-zone-3")]
ZONE_TERMS = [{"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In",
                                     "values": [z]}]} for z in ("test-zone-1", "test-zone-2")]


def _anti_zone(name: str, claim: str, app: str) -> Doc:
    doc = pod(name, labels={"app": app}, spec={"affinity": {"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [{
            "labelSelector": {"matchLabels": {"app": app}},
            "topologyKey": "topology.kubernetes.io/zone"}]}}})
    doc["spec"]["volumes"] = [{"name": "vol", "persistentVolumeClaim": {"claimName": claim}}]
    return doc


def _launched_zones(result_pools: list[tuple[str, int]]) -> list[str]:
    zones = {t.pool: t.zone for t in ONE_TYPE}
    return sorted(zones[p] for p, n in result_pools for _ in range(n))


@upstream("VolumeUsage/should schedule pods using a PV with multiple zones")
def test_pv_with_multiple_zones(case: str) -> None:
    objects: list[Doc] = []
    for i in range(2):
        objects.append({"apiVersion": "v1", "kind": "PersistentVolume",
                        "metadata": {"name": f"multi-zone-pv-{i}"},
                        "spec": {"accessModes": ["ReadWriteOnce"],
                                 "capacity": {"storage": "100Gi"},
                                 "csi": {"driver": "test.driver", "volumeHandle": f"h{i}"},
                                 "claimRef": {"kind": "PersistentVolumeClaim",
                                              "namespace": "default",
                                              "name": f"multi-zone-pvc-{i}"},
                                 "nodeAffinity": {"required": {"nodeSelectorTerms": ZONE_TERMS}}},
                        "status": {"phase": "Bound"}})
        objects.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                        "metadata": {"name": f"multi-zone-pvc-{i}", "namespace": "default"},
                        "spec": {"accessModes": ["ReadWriteOnce"],
                                 "resources": {"requests": {"storage": "1Gi"}},
                                 "volumeName": f"multi-zone-pv-{i}"},
                        "status": {"phase": "Bound"}})
        objects.append(_anti_zone(f"pod-{i}", f"multi-zone-pvc-{i}", "multi-zone-app"))
    result = run(ONE_TYPE, *objects)
    assert result.placed == ["default/pod-0", "default/pod-1"]
    assert _launched_zones(result.launched) == ["test-zone-1", "test-zone-2"]


@upstream("VolumeUsage/should schedule pods using a StorageClass with multiple zones in "
          "AllowedTopologies")
def test_storage_class_with_multiple_zones(case: str) -> None:
    sc = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
          "metadata": {"name": "multi-zone-sc"}, "provisioner": "test-provisioner",
          "volumeBindingMode": "WaitForFirstConsumer",
          "allowedTopologies": [{"matchLabelExpressions": [
              {"key": "topology.kubernetes.io/zone", "values": [z]}]}
              for z in ("test-zone-1", "test-zone-2")]}
    objects: list[Doc] = [sc]
    for i in range(2):
        objects.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                        "metadata": {"name": f"multi-zone-pvc-{i}", "namespace": "default"},
                        "spec": {"accessModes": ["ReadWriteOnce"],
                                 "resources": {"requests": {"storage": "1Gi"}},
                                 "storageClassName": "multi-zone-sc"}})
        objects.append(_anti_zone(f"sc-pod-{i}", f"multi-zone-pvc-{i}", "multi-zone-sc-app"))
    result = run(ONE_TYPE, *objects)
    assert result.placed == ["default/sc-pod-0", "default/sc-pod-1"]
    assert _launched_zones(result.launched) == ["test-zone-1", "test-zone-2"]


CSI_PROVIDER = "fake.csi.provider"  # suite_test.go's csiProvider
DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
VU = "VolumeUsage/"


def _sc(name: str, provisioner: str = CSI_PROVIDER, mode: str | None = "WaitForFirstConsumer",
        default: bool = False, zones: tuple[str, ...] = ("test-zone-1",)) -> Doc:
    """test.StorageClass: allowed topologies from ``zones``."""
    doc: Doc = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                "metadata": {"name": name}, "provisioner": provisioner}
    if default:
        doc["metadata"]["annotations"] = {DEFAULT_CLASS: "true"}
    if mode is not None:
        doc["volumeBindingMode"] = mode
    if zones:
        doc["allowedTopologies"] = [{"matchLabelExpressions": [
            {"key": "topology.kubernetes.io/zone", "values": list(zones)}]}]
    return doc


def _claim(name: str, storage_class: str | None = None, volume: str | None = None,
           **meta: Any) -> Doc:
    """test.PersistentVolumeClaim (bound, with bind-completed, when it names a volume)."""
    spec: Doc = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    doc: Doc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": name, "namespace": "default", **meta}, "spec": spec}
    if volume is not None:
        spec["volumeName"] = volume
        doc["status"] = {"phase": "Bound"}
    return doc


def _volume(name: str, driver: str = "test-driver", claim: str | None = None,
            terms: list[Doc] | None = None, source: Doc | None = None,
            storage_class: str = "") -> Doc:
    """test.PersistentVolume: a CSI volume of ``driver`` unless ``source``."""
    spec: Doc = {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "100Gi"},
                 **(source or {"csi": {"driver": driver, "volumeHandle": f"{name}-handle"}})}
    if storage_class:
        spec["storageClassName"] = storage_class
    if terms:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": terms}}
    doc: Doc = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
                "spec": spec}
    if claim is not None:
        spec["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": "default",
                            "name": claim}
        doc["status"] = {"phase": "Bound"}
    return doc


def _using(name: str, *claims: str, on: str | None = None) -> Doc:
    doc = pod(name, on=on)
    doc["spec"]["volumes"] = [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}}
                              for i, c in enumerate(claims)]
    return doc


def _ephemeral(name: str, storage_class: str | None, on: str | None = None) -> Doc:
    """A pod with the ephemeral volume "tmp-ephemeral" (its claim: NAME-tmp-ephemeral)."""
    doc = pod(name, on=on)
    claim: Doc = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    if storage_class is not None:
        claim["storageClassName"] = storage_class
    doc["spec"]["volumes"] = [{"name": "tmp-ephemeral",
                               "ephemeral": {"volumeClaimTemplate": {"spec": claim}}}]
    doc["metadata"]["uid"] = f"uid-{name}"
    return doc


def _ephemeral_claim(owner: str, storage_class: str | None = None, volume: str | None = None
                     ) -> Doc:
    return _claim(f"{owner}-tmp-ephemeral", storage_class, volume, ownerReferences=[{
        "apiVersion": "v1", "kind": "Pod", "name": owner, "uid": f"uid-{owner}",
        "controller": True}])


def _csi_node(node_name: str, **counts: int) -> Doc:
    """A CSINode for ``node_name``: driver -> allocatable volume count."""
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": node_name},
            "spec": {"drivers": [{"name": d.replace("_", "."), "nodeID": "fake-node-id",
                                  "allocatable": {"count": n}} for d, n in counts.items()]}}


# The node the first provisioning round launched for upstream's initial pod, in zone 1.
FIRST = node("first-node", ONE_TYPE[0], cpu="1024", pods="1024")


def _new_nodes(result: Run) -> int:
    return sum(n for _, n in result.launched)


@upstream(VU + "should launch multiple nodes if required due to volume limits")
def test_volume_limits_launch_a_second_node(case: str) -> None:
    # The first node's CSINode takes 10 volumes: five of the six two-volume pods.
    objects: list[Doc] = [FIRST, pod("initial", on="first-node"),
                          _csi_node("first-node", fake_csi_provider=10), _sc("my-storage-class")]
    for i in range(6):
        objects += [_claim(f"my-claim-a-{i}", "my-storage-class"),
                    _claim(f"my-claim-b-{i}", "my-storage-class"),
                    _using(f"p{i}", f"my-claim-a-{i}", f"my-claim-b-{i}")]
    result = run(ONE_TYPE, *objects)
    assert _new_nodes(result) == 1 and len(result.placed) == 1 and result.pending == []


@upstream(VU + "should launch a single node if all pods use the same PVC")
def test_volume_limits_one_pvc_many_pods(case: str) -> None:
    objects: list[Doc] = [FIRST, pod("initial", on="first-node"),
                          _csi_node("first-node", fake_csi_provider=10),
                          _sc("my-storage-class", mode=None),
                          _volume("my-volume", terms=ZONE_TERMS[:1], claim="my-claim"),
                          _claim("my-claim", "my-storage-class", "my-volume")]
    objects += [_using(f"p{i:03d}", "my-claim") for i in range(100)]
    result = run(ONE_TYPE, *objects)
    assert _new_nodes(result) == 0 and result.pending == []


@upstream(VU + "should not fail for NFS volumes")
def test_nfs_volumes(case: str) -> None:
    nfs = _volume("my-volume", source={"nfs": {"server": "fake.server", "path": "/some/path"}},
                  terms=ZONE_TERMS[:1], claim="my-claim", storage_class="nfs")
    objects: list[Doc] = [FIRST, pod("initial", on="first-node"), nfs,
                          _claim("my-claim", "", "my-volume")]
    objects += [_using(f"p{i}", "my-claim", "my-claim") for i in range(5)]
    result = run(ONE_TYPE, *objects)
    assert _new_nodes(result) == 0 and result.pending == []


@pytest.mark.parametrize(("source", "case"), [
    pytest.param({"local": {"path": "/mnt/local"}}, "",
                 id=VU + "should preserve unconstrained PV alternatives after ignoring "
                         "hostname affinity/for local volumes"),
    pytest.param({"hostPath": {"path": "/mnt/local"}}, "",
                 id=VU + "should preserve unconstrained PV alternatives after ignoring "
                         "hostname affinity/for hostpath volumes"),
])
def test_unconstrained_pv_alternative(source: Doc, case: str) -> None:
    terms = [{"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In",
                                    "values": ["existing-host"]}]},
             {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In",
                                    "values": ["invalid-zone"]}]}]
    result = run(ONE_TYPE, _volume("hostname-or-zone-pv", source=source, terms=terms,
                                   claim="hostname-or-zone-pvc"),
                 _claim("hostname-or-zone-pvc", volume="hostname-or-zone-pv"),
                 _using("hostname-or-zone-pod", "hostname-or-zone-pvc"))
    assert result.placed == ["default/hostname-or-zone-pod"]


def _first_with_ephemeral(storage_class: str | None) -> list[Doc]:
    """The first round: the initial pod on the first node with its ephemeral volume's claim
    bound (a volume of the CSI provider)."""
    return [FIRST, _ephemeral("initial", storage_class, on="first-node"),
            _volume("initial-pv", driver=CSI_PROVIDER, claim="initial-tmp-ephemeral"),
            _ephemeral_claim("initial", storage_class, "initial-pv")]


@pytest.mark.parametrize(("classes", "storage_class", "case"), [
    pytest.param([_sc("my-storage-class"),
                  _sc("default-storage-class", "other-provider", default=True)],
                 "my-storage-class", "",
                 id=VU + "should launch nodes for pods with ephemeral volume using the "
                         "specified storage class name"),
    pytest.param([_sc("default-storage-class", default=True)], None, "",
                 id=VU + "should launch nodes for pods with ephemeral volume using a default "
                         "storage class"),
])
def test_ephemeral_volume_limits(classes: list[Doc], storage_class: str | None,
                                 case: str) -> None:
    # The first node takes one volume of the CSI provider (ten of the other): the second
    # pod's ephemeral volume needs a new node.
    limits = _csi_node("first-node", fake_csi_provider=1, **{"other-provider": 10})
    result = run(ONE_TYPE, *classes, *_first_with_ephemeral(storage_class), limits,
                 _ephemeral("p", storage_class),
                 _ephemeral_claim("p", storage_class))
    assert _new_nodes(result) == 1 and result.placed == ["default/p"]


@upstream(VU + "should launch nodes for pods with ephemeral volume using the newest storage "
          "class")
def test_ephemeral_volume_newest_default_class(case: str) -> None:
    # Two default classes: the API server's DefaultStorageClass admission writes the newest
    # (upstream creates it 2 s later) into the claims, which the model reads as stored.
    classes = [_sc("default-storage-class", "other-provider", default=True),
               _sc("newer-default-storage-class", default=True)]
    first = _first_with_ephemeral(None)
    first[-1]["spec"]["storageClassName"] = "newer-default-storage-class"
    claim = _ephemeral_claim("p", "newer-default-storage-class")
    limits = _csi_node("first-node", fake_csi_provider=1, **{"other-provider": 10})
    result = run(ONE_TYPE, *classes, *first, limits, _ephemeral("p", None), claim)
    assert _new_nodes(result) == 1 and result.placed == ["default/p"]


@pytest.mark.parametrize(("storage_class", "case"), [
    pytest.param("non-existent", "", id=VU + "should launch nodes for pods with ephemeral "
                 "volume without a storage class when the PVC is bound/non-existent storage "
                 "class"),
    pytest.param("", "", id=VU + "should launch nodes for pods with ephemeral volume without a "
                 "storage class when the PVC is bound/explicitly disabled storage class "
                 "(empty string)"),
])
def test_ephemeral_bound_without_class(storage_class: str, case: str) -> None:
    result = run(ONE_TYPE, _ephemeral("p", storage_class),
                 _ephemeral_claim("p", storage_class, "test-pv"),
                 _volume("test-pv", claim="p-tmp-ephemeral"))
    assert _new_nodes(result) == 1 and result.placed == ["default/p"]


@pytest.mark.parametrize(("storage_class", "case"), [
    pytest.param("non-existent", "", id=VU + "should not launch nodes for pods with ephemeral "
                 "volume without a storage class when the PVC is unbound/non-existent storage "
                 "class"),
    pytest.param("", "", id=VU + "should not launch nodes for pods with ephemeral volume "
                 "without a storage class when the PVC is unbound/explicitly disabled storage "
                 "class (empty string)"),
])
def test_ephemeral_unbound_without_class(storage_class: str, case: str) -> None:
    result = run(ONE_TYPE, _ephemeral("p", storage_class))
    assert result.launched == [] and result.pending == ["default/p"]


@upstream(VU + "should not launch nodes for pod with unbound volume for volumeBindingMode "
          "immediate")
def test_unbound_immediate(case: str) -> None:
    result = run(ONE_TYPE, _sc("default-storage-class", "other-provider", mode="Immediate"),
                 _claim("tmp-ephemeral", "default-storage-class"),
                 _using("p", "tmp-ephemeral"))
    assert result.launched == [] and result.pending == ["default/p"]


@upstream(VU + "should not launch nodes for pod with deleting persistentVolumeClaim")
def test_deleting_claim(case: str) -> None:
    claim = _claim("tmp-ephemeral", "default-storage-class",
                   deletionTimestamp="2026-01-01T00:00:00Z", finalizers=["kubernetes"])
    result = run(ONE_TYPE, _sc("default-storage-class", "other-provider"), claim,
                 _using("p", "tmp-ephemeral"))
    assert result.launched == [] and result.pending == ["default/p"]


@upstream(VU + "should not launch nodes for pod with Lost persistentVolumeClaim")
def test_lost_claim(case: str) -> None:
    claim = _claim("tmp-ephemeral", "default-storage-class")
    claim["status"] = {"phase": "Lost"}
    result = run(ONE_TYPE, _sc("default-storage-class", "other-provider"), claim,
                 _using("p", "tmp-ephemeral"))
    assert result.launched == [] and result.pending == ["default/p"]


@pytest.mark.parametrize(("annotated", "case"), [
    pytest.param(False, "", id=VU + "should handle pods with PVCs with defined volumeName/"
                 "when pv.kubernetes.io/bind-completed is missing"),
    pytest.param(True, "", id=VU + "should handle pods with PVCs with defined volumeName/"
                 "when pv.kubernetes.io/bind-completed is present"),
])
def test_claim_with_volume_name(annotated: bool, case: str) -> None:
    claim = _claim("tmp-ephemeral", "default-storage-class", "pv-x")
    if annotated:
        claim["metadata"]["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
    else:
        claim.pop("status")  # not bound yet: the PV controller has not finished binding
    result = run(ONE_TYPE, _sc("default-storage-class", "other-provider"), claim,
                 _volume("pv-x", driver="other-provider", claim="tmp-ephemeral"),
                 _using("p", "tmp-ephemeral"))
    assert (result.placed == ["default/p"]) is annotated


@upstream(VU + "should not launch nodes for pod with bound persistentVolume that is marked for "
          "deletion")
def test_deleting_volume(case: str) -> None:
    # Karpenter's own check (kube-scheduler would bind the pod to the volume).
    pv = _volume("pv-x", driver="other-provider", claim="p-tmp-ephemeral")
    pv["metadata"].update(deletionTimestamp="2026-01-01T00:00:00Z", finalizers=["kubernetes"])
    result = run(ONE_TYPE, _ephemeral("p", None), _ephemeral_claim("p", None, "pv-x"), pv)
    assert result.launched == [] and result.pending == ["default/p"]
    assert result.decisions.pending[0].reason == \
        "failed to validate pvc, persistentvolume is being deleted"


def _class_terms(name: str, *terms: list[tuple[str, str]]) -> Doc:
    """A WaitForFirstConsumer StorageClass whose allowedTopologies are ``terms``."""
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": name}, "provisioner": "test-provisioner",
            "volumeBindingMode": "WaitForFirstConsumer",
            "allowedTopologies": [{"matchLabelExpressions": [
                {"key": k, "values": [v]} for k, v in term]} for term in terms]}


@upstream(VU + "should schedule pods when a valid multi-volume topology alternative remains "
          "after pruning disjoint branches")
def test_multi_volume_topology_alternative(case: str) -> None:
    # fake.InstanceTypes(5) offered in the three zones; only fake-it-4 is large, with
    # the exotic label special=optional (no type has "required").
    types = [replace(t, zone=z, per_zone=True) for t in numbered(5) for z in ZONES]
    special, zone = "special", "topology.kubernetes.io/zone"
    result = run(types,
                 _class_terms("pruned-overlap-a", [(special, "required")],
                              [(special, "optional")]),
                 _class_terms("pruned-overlap-b", [(zone, "test-zone-1"), (special, "optional")],
                              [(zone, "test-zone-2"), (special, "required")]),
                 _claim("pruned-overlap-pvc-a", "pruned-overlap-a"),
                 _claim("pruned-overlap-pvc-b", "pruned-overlap-b"),
                 _using("pruned-overlap-pod", "pruned-overlap-pvc-a", "pruned-overlap-pvc-b"))
    labels = result.node_labels("default/pruned-overlap-pod")
    assert labels[zone] == "test-zone-1" and labels[special] == "optional"


# -- Context("CSIMigration"): in-tree kubernetes.io/aws-ebs volumes count against the
#    ebs.csi.aws.com driver's limit (NodeVolumeLimits' CSI translation).

IN_TREE = "in-tree-storage-class"
EBS_LIMIT_1 = _csi_node("first-node", **{"ebs.csi.aws.com": 1})


@upstream(VU + "CSIMigration/should launch nodes for pods with non-dynamic PVC using a migrated "
          "PVC/PV")
def test_migrated_pvc(case: str) -> None:
    # The first round's pod on the first node, its claim bound to an in-tree EBS volume.
    pv = _volume("my-volume", claim="pvc-1", terms=ZONE_TERMS[:1], source={
        "awsElasticBlockStore": {"fsType": "ext4", "volumeID": "fake:///vol-1"}})
    result = run(ONE_TYPE, _sc(IN_TREE, "kubernetes.io/aws-ebs", default=True), FIRST,
                 _claim("pvc-1", IN_TREE, "my-volume"), pv,
                 _using("initial", "pvc-1", on="first-node"), EBS_LIMIT_1,
                 _claim("pvc-2", IN_TREE), _using("p", "pvc-2"))
    assert _new_nodes(result) == 1 and result.placed == ["default/p"]


@upstream(VU + "CSIMigration/should launch nodes for pods with ephemeral volume using a "
          "migrated PVC/PV")
def test_migrated_ephemeral(case: str) -> None:
    result = run(ONE_TYPE, _sc(IN_TREE, "kubernetes.io/aws-ebs", default=True), FIRST,
                 _ephemeral("initial", IN_TREE, on="first-node"),
                 _ephemeral_claim("initial", IN_TREE), EBS_LIMIT_1,
                 _ephemeral("p", IN_TREE), _ephemeral_claim("p", IN_TREE))
    assert _new_nodes(result) == 1 and result.placed == ["default/p"]


# -- Describe("Custom Constraints"): the suite's NodePool (capacity types spot, on-demand,
#    reserved) with template labels and requirements (harness.nodepool(template=...), read
#    as dralab autoscale reads a NodePool). Upstream repeats three of its contexts: each
#    case below runs for its entry and its " #2" twin. A node's labels are those of the
#    launched type's template node.

CC = "Custom Constraints/"
CAPACITY_TYPES = {"key": "karpenter.sh/capacity-type", "operator": "In",
                  "values": ["spot", "on-demand", "reserved"]}
ZONE_KEY, TYPE_KEY = "topology.kubernetes.io/zone", "node.kubernetes.io/instance-type"
ALL_ZONES = ["test-zone-1", "test-zone-2", "test-zone-3"]


def _np(*requirements: Doc, labels: dict[str, str] | None = None) -> NodePoolSettings:
    template: Doc = {"spec": {"requirements": [CAPACITY_TYPES, *requirements]}}
    if labels:
        template["metadata"] = {"labels": labels}
    return nodepool(template=template)


def _req(key: str, operator: str, *values: str) -> Doc:
    return {"key": key, "operator": operator, **({"values": list(values)} if values else {})}


def _constrained(name: str = "p", selector: dict[str, str] | None = None,
                 required: list[Doc] | None = None, preferred: list[Doc] | None = None) -> Doc:
    """test.UnschedulablePod with NodeSelector, NodeRequirements (one term) and
    NodePreferences (one weight-1 term)."""
    spec: Doc = {}
    if selector:
        spec["nodeSelector"] = selector
    node_affinity: Doc = {}
    if required:
        node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": [{"matchExpressions": required}]}
    if preferred:
        node_affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": 1, "preference": {"matchExpressions": preferred}}]
    if node_affinity:
        spec["affinity"] = {"nodeAffinity": node_affinity}
    return pod(name, spec=spec)


def _labels(settings: NodePoolSettings, doc: Doc,
            types: list[InstanceType] | None = None) -> dict[str, str]:
    """ExpectScheduled: the pod gets a launch; the labels of its node."""
    result = run(types or DEFAULTS, doc, settings=settings, consolidation=False)
    key = f"default/{doc['metadata']['name']}"
    assert result.pending == [] and result.placed == [key]
    return result.node_labels(key)


def _unscheduled(settings: NodePoolSettings, *docs: Doc) -> None:
    """ExpectNotScheduled: no launch, every pod pending."""
    result = run(DEFAULTS, *docs, settings=settings, consolidation=False)
    assert result.launched == []
    assert result.pending == sorted(f"default/{d['metadata']['name']}" for d in docs)


def _with_spot(types: list[InstanceType]) -> list[InstanceType]:
    """The fake's types offered as spot too (one pool per offering here)."""
    return [*types, *(replace(t, capacity_type="spot", pool_name=f"{t.pool}-spot")
                      for t in types)]


TEST_KEY = {"test-key": "test-value"}
IN_TEST_VALUE = _req("test-key", "In", "test-value")


def cc_labels_unconstrained() -> None:
    assert _labels(_np(labels=TEST_KEY), _constrained())["test-key"] == "test-value"


def cc_labels_conflicting_selector() -> None:
    _unscheduled(_np(labels=TEST_KEY), _constrained(selector={"test-key": "different-value"}))


def cc_labels_undefined_key() -> None:
    _unscheduled(_np(), _constrained(selector=TEST_KEY))


def cc_labels_matching_requirements() -> None:
    doc = _constrained(required=[_req("test-key", "In", "test-value", "another-value")])
    assert _labels(_np(labels=TEST_KEY), doc)["test-key"] == "test-value"


def cc_labels_conflicting_requirements() -> None:
    _unscheduled(_np(labels=TEST_KEY),
                 _constrained(required=[_req("test-key", "In", "another-value")]))


def cc_nodepool_constraints() -> None:
    labels = _labels(_np(_req(ZONE_KEY, "In", "test-zone-2")), _constrained())
    assert labels[ZONE_KEY] == "test-zone-2"


def cc_node_selectors() -> None:
    labels = _labels(_np(_req(ZONE_KEY, "In", "test-zone-1", "test-zone-2")),
                     _constrained(selector={ZONE_KEY: "test-zone-2"}))
    assert labels[ZONE_KEY] == "test-zone-2"


def cc_hostname_selector() -> None:
    _unscheduled(_np(), _constrained(selector={"kubernetes.io/hostname": "red-node"}))


def cc_selector_unknown() -> None:
    _unscheduled(_np(_req(ZONE_KEY, "In", "test-zone-1")),
                 _constrained(selector={ZONE_KEY: "unknown"}))


def cc_selector_outside_nodepool() -> None:
    _unscheduled(_np(_req(ZONE_KEY, "In", "test-zone-1")),
                 _constrained(selector={ZONE_KEY: "test-zone-2"}))


def cc_in() -> None:
    labels = _labels(_np(), _constrained(required=[_req(ZONE_KEY, "In", "test-zone-3")]))
    assert labels[ZONE_KEY] == "test-zone-3"


def _integer(operator: str, value: str, expected: str) -> Callable[[], None]:
    def case() -> None:
        labels = _labels(_np(_req("integer", operator, value)), _constrained())
        assert labels["integer"] == expected
    return case


def cc_incompatible_in() -> None:
    _unscheduled(_np(), _constrained(required=[_req(ZONE_KEY, "In", "unknown")]))


def cc_not_in() -> None:
    doc = _constrained(required=[_req(ZONE_KEY, "NotIn", "test-zone-1", "test-zone-2",
                                      "unknown")])
    assert _labels(_np(), doc)[ZONE_KEY] == "test-zone-3"


def cc_incompatible_not_in() -> None:
    _unscheduled(_np(), _constrained(required=[_req(ZONE_KEY, "NotIn", *ALL_ZONES,
                                                    "unknown")]))


def _preferring(*preferred: Doc) -> Doc:
    return _constrained(required=[_req(ZONE_KEY, "In", *ALL_ZONES, "unknown")],
                        preferred=list(preferred))


def cc_compatible_preference_in() -> None:
    doc = _preferring(_req(ZONE_KEY, "In", "test-zone-2", "unknown"))
    assert _labels(_np(), doc)[ZONE_KEY] == "test-zone-2"


def cc_incompatible_preference_in() -> None:
    _labels(_np(), _preferring(_req(ZONE_KEY, "In", "unknown")))


def cc_compatible_preference_not_in() -> None:
    doc = _preferring(_req(ZONE_KEY, "NotIn", "test-zone-1", "test-zone-3"))
    assert _labels(_np(), doc)[ZONE_KEY] == "test-zone-2"


def cc_incompatible_preference_not_in() -> None:
    _labels(_np(), _preferring(_req(ZONE_KEY, "NotIn", *ALL_ZONES)))


def cc_selector_preferences_requirements() -> None:
    doc = _constrained(selector={ZONE_KEY: "test-zone-3"},
                       required=[_req(ZONE_KEY, "In", *ALL_ZONES)],
                       preferred=[_req(ZONE_KEY, "In", *ALL_ZONES)])
    assert _labels(_np(), doc)[ZONE_KEY] == "test-zone-3"


def cc_multidimensional() -> None:
    doc = _constrained(
        selector={ZONE_KEY: "test-zone-3", TYPE_KEY: "arm-instance-type"},
        required=[_req(ZONE_KEY, "In", "test-zone-1", "test-zone-3"),
                  _req(TYPE_KEY, "In", "default-instance-type", "arm-instance-type")],
        preferred=[_req(ZONE_KEY, "NotIn", "unknown"), _req(TYPE_KEY, "NotIn", "unknown")])
    labels = _labels(_np(), doc)
    assert (labels[ZONE_KEY], labels[TYPE_KEY]) == ("test-zone-3", "arm-instance-type")


def cc_restricted_labels() -> None:
    # v1.RestrictedLabels: the hostname.
    _unscheduled(_np(), _constrained(required=[_req("kubernetes.io/hostname", "In", "test")]))


def cc_restricted_domains() -> None:
    # v1.RestrictedLabelDomains: karpenter.sh.
    _unscheduled(_np(), _constrained(required=[_req("karpenter.sh/test", "In", "test")]))


def _domains(prefix: str) -> Callable[[], None]:
    def case() -> None:
        keys = [f"{prefix}{domain}/test" for domain in ("kubernetes.io", "k8s.io")]
        settings = _np(*(_req(k, "In", "test-value") for k in keys))
        for i, key in enumerate(keys):
            assert _labels(settings, _constrained(f"p{i}"))[key] == "test-value"
    return case


def cc_well_known_list() -> None:
    selectors = [{ZONE_KEY: "test-zone-1"}, {TYPE_KEY: "default-instance-type"},
                 {"kubernetes.io/arch": "arm64"}, {"kubernetes.io/os": "linux"},
                 {"karpenter.sh/capacity-type": "spot"}]
    docs = [_constrained(f"p{i}", selector=s) for i, s in enumerate(selectors)]
    result = run(_with_spot(DEFAULTS), *docs, settings=_np(), consolidation=False)
    assert result.pending == [] and len(result.placed) == len(docs)


def cc_in_undefined_key() -> None:
    _unscheduled(_np(), _constrained(required=[IN_TEST_VALUE]))


def cc_not_in_undefined_key() -> None:
    labels = _labels(_np(), _constrained(required=[_req("test-key", "NotIn", "test-value")]))
    assert labels.get("test-key") != "test-value"


def cc_exists_undefined_key() -> None:
    _unscheduled(_np(), _constrained(required=[_req("test-key", "Exists")]))


def cc_does_not_exist_undefined_key() -> None:
    labels = _labels(_np(), _constrained(required=[_req("test-key", "DoesNotExist")]))
    assert "test-key" not in labels


def cc_requirement_unconstrained() -> None:
    assert _labels(_np(IN_TEST_VALUE), _constrained())["test-key"] == "test-value"


def cc_matching_in() -> None:
    labels = _labels(_np(IN_TEST_VALUE), _constrained(required=[IN_TEST_VALUE]))
    assert labels["test-key"] == "test-value"


def cc_matching_not_in() -> None:
    _unscheduled(_np(IN_TEST_VALUE),
                 _constrained(required=[_req("test-key", "NotIn", "test-value")]))


def cc_exists_defined_key() -> None:
    _labels(_np(IN_TEST_VALUE), _constrained(required=[_req("test-key", "Exists")]))


def cc_does_not_exist_defined_key() -> None:
    _unscheduled(_np(IN_TEST_VALUE), _constrained(required=[_req("test-key", "DoesNotExist")]))


def cc_different_in() -> None:
    _unscheduled(_np(IN_TEST_VALUE),
                 _constrained(required=[_req("test-key", "In", "another-value")]))


def cc_different_not_in() -> None:
    labels = _labels(_np(IN_TEST_VALUE),
                     _constrained(required=[_req("test-key", "NotIn", "another-value")]))
    assert labels["test-key"] == "test-value"


def cc_exists_keeps_value() -> None:
    _unscheduled(_np(), _constrained(required=[_req(ZONE_KEY, "In", "non-existent-zone"),
                                               _req(ZONE_KEY, "Exists")]))


TWO_VALUES = _req("test-key", "In", "test-value", "another-value")


def _two_pods(second: Doc) -> tuple[Run, dict[str, str], dict[str, str]]:
    """Two pods on a NodePool with test-key In [test-value, another-value]: the run and
    the labels of each pod's node."""
    first = _constrained("p0", required=[_req("test-key", "In", "test-value")])
    result = run(DEFAULTS, first, second, settings=_np(TWO_VALUES), consolidation=False)
    assert result.pending == [] and result.placed == ["default/p0", "default/p1"]
    return result, result.node_labels("default/p0"), result.node_labels("default/p1")


def cc_compatible_same_node() -> None:
    result, one, two = _two_pods(_constrained(
        "p1", required=[_req("test-key", "NotIn", "another-value")]))
    assert one["test-key"] == two["test-key"] == "test-value"
    assert _nodes(result.launched) == 1


def cc_incompatible_different_nodes() -> None:
    result, one, two = _two_pods(_constrained(
        "p1", required=[_req("test-key", "In", "another-value")]))
    assert (one["test-key"], two["test-key"]) == ("test-value", "another-value")
    assert _nodes(result.launched) == 2


def cc_nodepool_not_ready() -> None:
    settings = nodepool(status={"conditions": [
        {"type": "Ready", "status": "False", "reason": "NodePoolNotReady",
         "message": "Node Pool Not Ready"}]})
    _unscheduled(settings, _constrained())


WKL, CV, SL = "Well Known Labels/", "Constraints Validation/", "Scheduling Logic/"
CUSTOM_CASES: dict[str, Callable[[], None]] = {
    "NodePool with Labels/should schedule unconstrained pods that don't have matching node "
    "selectors": cc_labels_unconstrained,
    "NodePool with Labels/should not schedule pods that have conflicting node selectors":
        cc_labels_conflicting_selector,
    "NodePool with Labels/should not schedule pods that have node selectors with undefined key":
        cc_labels_undefined_key,
    "NodePool with Labels/should schedule pods that have matching requirements":
        cc_labels_matching_requirements,
    "NodePool with Labels/should not schedule pods that have conflicting requirements":
        cc_labels_conflicting_requirements,
    WKL + "should use NodePool constraints": cc_nodepool_constraints,
    WKL + "should use node selectors": cc_node_selectors,
    WKL + "should not schedule nodes with a hostname selector": cc_hostname_selector,
    WKL + "should not schedule the pod if nodeselector unknown": cc_selector_unknown,
    WKL + "should not schedule if node selector outside of NodePool constraints":
        cc_selector_outside_nodepool,
    WKL + "should schedule compatible requirements with Operator=In": cc_in,
    WKL + "should schedule compatible requirements with Operator=Gt": _integer("Gt", "8", "16"),
    WKL + "should schedule compatible requirements with Operator=Lt": _integer("Lt", "8", "2"),
    WKL + "should schedule compatible requirements with Operator=Gte":
        _integer("Gte", "16", "16"),
    WKL + "should schedule compatible requirements with Operator=Lte": _integer("Lte", "2", "2"),
    WKL + "should not schedule incompatible preferences and requirements with Operator=In":
        cc_incompatible_in,
    WKL + "should schedule compatible requirements with Operator=NotIn": cc_not_in,
    WKL + "should not schedule incompatible preferences and requirements with Operator=NotIn":
        cc_incompatible_not_in,
    WKL + "should schedule compatible preferences and requirements with Operator=In":
        cc_compatible_preference_in,
    WKL + "should schedule incompatible preferences and requirements with Operator=In":
        cc_incompatible_preference_in,
    WKL + "should schedule compatible preferences and requirements with Operator=NotIn":
        cc_compatible_preference_not_in,
    WKL + "should schedule incompatible preferences and requirements with Operator=NotIn":
        cc_incompatible_preference_not_in,
    WKL + "should schedule compatible node selectors, preferences and requirements":
        cc_selector_preferences_requirements,
    WKL + "should combine multidimensional node selectors, preferences and requirements":
        cc_multidimensional,
    CV + "should not schedule pods that have node selectors with restricted labels":
        cc_restricted_labels,
    CV + "should not schedule pods that have node selectors with restricted domains":
        cc_restricted_domains,
    CV + "should schedule pods that have node selectors with label in the kubernetes domains":
        _domains(""),
    CV + "should schedule pods that have node selectors with label in kubernetes domains":
        _domains(""),
    CV + "should schedule pods that have node selectors with label in subdomain from "
    "kubernetes domains": _domains("subdomain."),
    CV + "should schedule pods that have node selectors with label in wellknown label list":
        cc_well_known_list,
    SL + "should not schedule pods that have node selectors with In operator and undefined key":
        cc_in_undefined_key,
    SL + "should schedule pods that have node selectors with NotIn operator and undefined key":
        cc_not_in_undefined_key,
    SL + "should not schedule pods that have node selectors with Exists operator and "
    "undefined key": cc_exists_undefined_key,
    SL + "should schedule pods that with DoesNotExists operator and undefined key":
        cc_does_not_exist_undefined_key,
    SL + "should schedule unconstrained pods that don't have matching node selectors":
        cc_requirement_unconstrained,
    SL + "should schedule pods that have node selectors with matching value and In operator":
        cc_matching_in,
    SL + "should not schedule pods that have node selectors with matching value and NotIn "
    "operator": cc_matching_not_in,
    SL + "should schedule the pod with Exists operator and defined key": cc_exists_defined_key,
    SL + "should not schedule the pod with DoesNotExists operator and defined key":
        cc_does_not_exist_defined_key,
    SL + "should not schedule pods that have node selectors with different value and In "
    "operator": cc_different_in,
    SL + "should schedule pods that have node selectors with different value and NotIn "
    "operator": cc_different_not_in,
    SL + "Exists operator should not overwrite the existing value": cc_exists_keeps_value,
    SL + "should schedule compatible pods to the same node": cc_compatible_same_node,
    SL + "should schedule incompatible pods to the different node":
        cc_incompatible_different_nodes,
    SL + "should not schedule pods with nodePool which is not ready ": cc_nodepool_not_ready,
}
# -- Describe("Preferential Fallback"), Context("Preferred"): --preference-policy Respect
#    (Karpenter's default) on preferred node affinity, relaxed term by term.

PF = "Preferential Fallback/Preferred/"


def _preferred_terms(*terms: tuple[int, Doc]) -> Doc:
    return pod("p", spec={"affinity": {"nodeAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": w, "preference": {"matchExpressions": [r]}} for w, r in terms]}}})


@upstream(PF + "should relax all terms")
def test_preferred_relax_all_terms(case: str) -> None:
    _labels(_np(), _preferred_terms((1, _req(ZONE_KEY, "In", "invalid")),
                                    (1, _req(TYPE_KEY, "In", "invalid"))))


@upstream(PF + "should relax to use lighter weights")
def test_preferred_lighter_weights(case: str) -> None:
    doc = _preferred_terms((100, _req(TYPE_KEY, "In", "test-zone-3")),
                           (50, _req(ZONE_KEY, "In", "test-zone-2")),
                           (1, _req(ZONE_KEY, "In", "test-zone-1")))
    labels = _labels(_np(_req(ZONE_KEY, "In", "test-zone-1", "test-zone-2")), doc)
    assert labels[ZONE_KEY] == "test-zone-2"


@upstream(PF + "should schedule even if preference is conflicting with requirement")
def test_preferred_conflicting_with_requirement(case: str) -> None:
    doc = _preferred_terms((1, _req(ZONE_KEY, "NotIn", "test-zone-3")))
    doc["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = {
        "nodeSelectorTerms": [{"matchExpressions": [_req(ZONE_KEY, "In", "test-zone-3")]}]}
    assert _labels(_np(), doc)[ZONE_KEY] == "test-zone-3"


@upstream(PF + "should schedule even if preference requirements are conflicting")
def test_preferred_conflicting_requirements(case: str) -> None:
    _labels(_np(), _constrained(preferred=[_req(ZONE_KEY, "In", "invalid"),
                                           _req(ZONE_KEY, "NotIn", "invalid")]))


# -- Describe("NodePool requirements instance filtering") ------------------------------

NRF = "NodePool requirements instance filtering/"
FILTERED = "nodepool requirements filtered out all available instance types"


def _filtered_out(requirements: list[Doc], *docs: Doc, objects: tuple[Doc, ...] = ()) -> None:
    result = run(DEFAULTS, *objects, *docs,
                 settings=nodepool(template={"spec": {"requirements": requirements}}))
    assert result.launched == []
    assert [(p.pod, p.reason) for p in result.decisions.pending] == [
        (f"default/{d['metadata']['name']}", FILTERED) for d in docs]


@upstream(NRF + "should return appropriate pod error when no available instance types exist")
def test_filtered_no_instance_types(case: str) -> None:
    first = run(DEFAULTS, pod("normal"))
    [(pool, count)] = first.launched
    assert count == 1
    [itype] = [t for t in DEFAULTS if t.pool == pool]
    # The first round's node, with its pod; then the NodePool's requirement names an
    # instance type that does not exist, and a pod too large for that node comes.
    big = pod("test-pod-filtered", cpu="32", memory="256Gi", limits={"cpu": "32",
                                                                     "memory": "256Gi"})
    _filtered_out([_req(TYPE_KEY, "In", "non-existent-instance-type")], big,
                  objects=(node("n1", itype, cpu=str(itype.cpu), memory=f"{itype.memory_gi}Gi",
                                pods=str(itype.pods)), pod("normal", on="n1")))


@upstream(NRF + "should handle multiple pods when requirements filter out all instance types")
def test_filtered_multiple_pods(case: str) -> None:
    _filtered_out([_req("kubernetes.io/arch", "In", "non-existent-arch")],
                  pod("pod-1"), pod("pod-2"), pod("pod-3"))


@upstream(NRF + "should handle conflicting requirements that eliminate all instance types")
def test_filtered_conflicting(case: str) -> None:
    _filtered_out([_req("kubernetes.io/arch", "In", "amd64"),
                   _req("kubernetes.io/arch", "In", "arm64")],
                  pod("conflicting-requirements-pod"))


@upstream(NRF + "should handle zone requirements that filter out all instance types")
def test_filtered_zones(case: str) -> None:
    _filtered_out([_req(ZONE_KEY, "In", "non-existent-zone-1", "non-existent-zone-2")],
                  pod("zone-filtered-pod"))


def _custom_params() -> list[Any]:
    params = []
    for case in SCHEDULING:
        if not case.startswith(CC):
            continue
        base = case[len(CC):].removesuffix(" #2")
        if base not in CUSTOM_CASES:
            continue
        params.append(pytest.param(base, id=case))
    return params


@pytest.mark.parametrize("base", _custom_params())
def test_custom_constraints(base: str) -> None:
    CUSTOM_CASES[base]()


# -- Context("Offering Overrides"): an offering whose CapacityOverride and OverheadOverride
#    differ from its instance type's is its own Fleet pool of that type (the same
#    instance-type label and price, the override's capacity and overhead); an unavailable
#    offering is no pool (a Fleet lists what can be launched).

SLOTS = "test.com/extended-slots"


def _override_types(override_available: bool) -> list[InstanceType]:
    """override-capable (4 CPUs, 8Gi) in the three zones, plus, when available, an override
    offering in each (4 extended slots; systemReserved 1Gi of memory over kubeReserved's
    CPU); with ``normal``, the same shape without overrides, when the overrides are."""
    out = []
    for zone in ZONES:
        base = InstanceType("override-capable", 4, 8, zone=zone, per_zone=True)
        out.append(base)
        if override_available:
            out.append(replace(base, extended=((SLOTS, 4),), reserved_memory="1Gi",
                               pool_name=f"override-capable-slots-{zone}"))
            out.append(InstanceType("normal", 4, 8, zone=zone, per_zone=True))
    return out


def _slots_pod() -> Doc:
    doc = pod("p", limits={SLOTS: "1"})
    doc["spec"]["containers"][0]["resources"]["requests"] = {SLOTS: "1"}
    return doc


@upstream("Offering Overrides/should only select instance types whose offerings have "
          "CapacityOverride when pod requests an override resource")
def test_override_offerings_selected(case: str) -> None:
    result = run(_override_types(True), _slots_pod(), node_claims=True)
    [claim] = result.node_claims
    [types] = [r["values"] for r in claim["spec"]["requirements"]
               if r["key"] == "node.kubernetes.io/instance-type"]
    assert "override-capable" in types and "normal" not in types


@upstream("Offering Overrides/should reject instance type when override allocatable fits but "
          "override offerings are unavailable")
def test_override_offerings_unavailable(case: str) -> None:
    result = run(_override_types(False), _slots_pod())
    assert result.launched == [] and result.pending == ["default/p"]


# -- Describe("Reserved Instance Types"): the ReservedCapacity gate on; large (6 CPUs),
#    medium (3) and small (2) with the fake's offerings (spot in zones 1-2, on-demand in
#    1-3), medium and small also reserved in zone 1 (r-<type>, capacity 1, price / 1e5):
#    one pool per offering. Upstream's rounds are the same model's loops: a round's
#    launches stay in flight, its pods that got none are pending again.

RIT = "Reserved Instance Types/"
RID = "karpenter.sh/reservation-id"
SMALL = "small-instance-type"


def _offerings(name: str, cpu: int, *reservations: tuple[str, int], nodepool: str = "default"
               ) -> list[InstanceType]:
    base = InstanceType(name, cpu, cpu, nodepool=nodepool)
    out = [replace(base, zone=z, capacity_type=ct, pool_name=f"{nodepool}-{name}-{ct}-{z}")
           for ct, zones in (("spot", ZONES[:2]), ("on-demand", ZONES)) for z in zones]
    out += [replace(base, capacity_type="reserved", extra_labels=((RID, rid),),
                    price=round(base.cost / 100_000, 12), max_nodes=capacity,
                    pool_name=f"{nodepool}-{name}-{rid}") for rid, capacity in reservations]
    return out


def _reserved_types(nodepool: str = "default", small_extra: tuple[str, int] | None = None
                    ) -> list[InstanceType]:
    small = [("r-small-instance-type", 1), *([small_extra] if small_extra else [])]
    return [*_offerings("large-instance-type", 6, nodepool=nodepool),
            *_offerings("medium-instance-type", 3, ("r-medium-instance-type", 1),
                        nodepool=nodepool),
            *_offerings(SMALL, 2, *small, nodepool=nodepool)]


def _rit_np(name: str = "default", weight: int | None = None) -> NodePoolSettings:
    return nodepool(name=name, template={"spec": {"requirements": [CAPACITY_TYPES]}},
                    spec_extra={"weight": weight} if weight is not None else None)


def _rit_pod(name: str, nodepool_name: str | None = None, preferred: str | None = None,
             **spec: Any) -> Doc:
    """test.UnschedulablePod for small-instance-type with hostname anti-affinity to its
    kind (app: test), optionally required in one NodePool or preferring one."""
    required = [_req(TYPE_KEY, "In", SMALL)]
    if nodepool_name is not None:
        required.append(_req("karpenter.sh/nodepool", "In", nodepool_name))
    affinity: Doc = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
        "labelSelector": {"matchLabels": {"app": "test"}},
        "topologyKey": "kubernetes.io/hostname"}]},
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": required}]}}}
    if preferred is not None:
        affinity["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"] = [{
            "weight": 1, "preference": {"matchExpressions": [
                _req("karpenter.sh/nodepool", "In", preferred)]}}]
    return pod(name, labels={"app": "test"}, spec={"affinity": affinity, **spec})


def _again(previous: Run, now: float = 10.0) -> Run:
    """The next round: the pods the last one left pending, on the same model."""
    model = previous.karpenter
    infos = [model.scheduler.cluster.pods[k] for k in previous.pending]
    return Run(model, model.loop(infos, now))


def _launch(result: Run) -> dict[str, str]:
    """The one node a round launched: its labels."""
    [(_, count)] = result.launched
    assert count == 1
    return result.node_labels(result.placed[0])


def _reserved(labels: dict[str, str], rid: str | None = None) -> bool:
    return labels[CAPACITY_KEY] == "reserved" and RID in labels and \
        (rid is None or labels[RID] == rid)


CAPACITY_KEY = "karpenter.sh/capacity-type"


@upstream(RIT + "shouldn't fallback to on-demand or spot when compatible reserved offerings "
          "are available")
def test_reserved_no_fallback(case: str) -> None:
    # Each new node holds both reservations it could launch into: one pod per round.
    first = run(_reserved_types(), *[pod(f"p{i}", cpu="1800m") for i in range(3)],
                settings=_rit_np())
    labels = _launch(first)
    assert _reserved(labels, "r-small-instance-type") and labels[TYPE_KEY] == SMALL
    assert {p.reason for p in first.decisions.pending} == {
        "one or more instance types with compatible reserved offerings are available, but "
        "could not be reserved"} and len(first.pending) == 2
    second = _again(first)
    labels = _launch(second)
    assert _reserved(labels, "r-medium-instance-type") and labels[TYPE_KEY] == \
        "medium-instance-type"
    third = _again(second, 20.0)
    labels = _launch(third)
    assert not _reserved(labels) and RID not in labels and labels[TYPE_KEY] == SMALL
    assert third.pending == []


@upstream(RIT + "should correctly track reservations shared across nodepools")
def test_reservations_shared_across_nodepools(case: str) -> None:
    nodepools = [_rit_np("np-1"), _rit_np("np-2")]
    first = run(_reserved_types(), _rit_pod("a", "np-1"), _rit_pod("b", "np-2"),
                nodepools=nodepools)
    labels = _launch(first)
    assert _reserved(labels, "r-small-instance-type") and labels[TYPE_KEY] == SMALL
    assert len(first.pending) == 1
    labels = _launch(_again(first))
    assert not _reserved(labels) and labels[TYPE_KEY] == SMALL


@upstream(RIT + "should correctly track reservations for multiple nodepools with distinct "
          "reservations for the same instance pool")
def test_distinct_reservations_per_nodepool(case: str) -> None:
    # np-2's only type is small with its own reservation, r-distinct.
    types = [*_reserved_types("np-1"),
             *_offerings(SMALL, 2, ("r-distinct", 1), nodepool="np-2")]
    result = run(types, _rit_pod("a", "np-1"), _rit_pod("b", "np-2"),
                 nodepools=[_rit_np("np-1"), _rit_np("np-2")])
    assert sum(n for _, n in result.launched) == 2 and result.pending == []
    ids = set()
    for key in ("default/a", "default/b"):
        labels = result.node_labels(key)
        assert _reserved(labels) and labels[TYPE_KEY] == SMALL
        ids.add(labels[RID])
    assert len(ids) == 2


@upstream(RIT + "should correctly track multiple reservations for the same instance pool")
def test_multiple_reservations_same_pool(case: str) -> None:
    # small also has r-small-instance-type-2 with capacity 2.
    types = _reserved_types(small_extra=("r-small-instance-type-2", 2))
    first = run(types, *[_rit_pod(f"p{i}") for i in range(4)], settings=_rit_np())
    assert sum(n for _, n in first.launched) == 2 and len(first.pending) == 2
    for key in first.placed:
        labels = first.node_labels(key)
        assert _reserved(labels) and labels[TYPE_KEY] == SMALL
    second = _again(first)
    labels = _launch(second)
    assert _reserved(labels) and labels[TYPE_KEY] == SMALL and len(second.pending) == 1
    labels = _launch(_again(second, 20.0))
    assert not _reserved(labels) and labels[TYPE_KEY] == SMALL


@upstream(RIT + "shouldn't fallback to a lower weight NodePool if a reserved offering is "
          "available")
def test_no_fallback_to_lighter_nodepool(case: str) -> None:
    types = [*_reserved_types("np-primary"),
             *_offerings(SMALL, 2, ("r-fallback", 1), nodepool="np-fallback")]
    nodepools = [_rit_np("np-primary", 100), _rit_np("np-fallback", 50)]
    first = run(types, _rit_pod("a"), _rit_pod("b"), nodepools=nodepools)
    labels = _launch(first)
    assert _reserved(labels) and labels["karpenter.sh/nodepool"] == "np-primary"
    assert len(first.pending) == 1
    labels = _launch(_again(first))
    assert not _reserved(labels) and labels[TYPE_KEY] == SMALL
    assert labels["karpenter.sh/nodepool"] == "np-primary"


@upstream(RIT + "shouldn't relax preferences when a pod fails to schedule due to a reserved "
          "offering error")
def test_no_relaxing_on_reserved_error(case: str) -> None:
    # np-2's small has its own reservation; both pods prefer np-1.
    types = [*_reserved_types("np-1"),
             *_offerings(SMALL, 2, ("r-distinct", 1), nodepool="np-2")]
    nodepools = [_rit_np("np-1"), _rit_np("np-2")]
    first = run(types, _rit_pod("a", preferred="np-1"), _rit_pod("b", preferred="np-1"),
                nodepools=nodepools)
    labels = _launch(first)
    assert _reserved(labels) and labels["karpenter.sh/nodepool"] == "np-1"
    assert len(first.pending) == 1
    labels = _launch(_again(first))
    assert not _reserved(labels) and labels[TYPE_KEY] == SMALL
    assert labels["karpenter.sh/nodepool"] == "np-1"


@upstream(RIT + "should handle multiple pods on reserved nodes")
def test_multiple_pods_on_reserved_node(case: str) -> None:
    required = [_req(TYPE_KEY, "In", SMALL), _req("karpenter.sh/nodepool", "In", "np-1"),
                _req(CAPACITY_KEY, "In", "reserved"), _req(ZONE_KEY, "In", "test-zone-1")]
    spec = {"affinity": {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": required}]}},
        "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
            "labelSelector": {"matchLabels": {"app": "test"}}, "topologyKey": ZONE_KEY}]}}}
    result = run(_reserved_types("np-1"), pod("a", spec=spec), pod("b", spec=spec),
                 settings=_rit_np("np-1"))
    labels = _launch(result)
    assert result.placed == ["default/a", "default/b"]
    assert _reserved(labels, "r-small-instance-type") and labels[TYPE_KEY] == SMALL


# -- The cases the model cannot run (or that are not ported), each with its reason -----

SCHED_REASONS: list[tuple[str, str]] = [
    ("Existing Nodes/should order initialized nodes", "not a decision: asserts which of "
     "100 schedulable nodes (one initialized) Karpenter's simulation nominates for a pod, "
     "which the test then binds there; in a cluster kube-scheduler binds it, as dralab "
     "does (no node is launched either way)"),
    ("VolumeUsage/should not launch nodes for pod with storageClass that uses an unsupported "
     "provisioner", "not applicable offline: sets Karpenter's UnsupportedProvisioners "
     "(a package variable, empty in Karpenter core, that a cloud provider's build fills)"),
    ("VolumeUsage/should not launch nodes for pod with bound persistentVolume that uses an "
     "unsupported provisioner", "not applicable offline: sets Karpenter's UnsupportedProvisioners "
     "(a package variable, empty in Karpenter core, that a cloud provider's build fills)"),
    ("VolumeUsage/should not launch nodes for pod with storageClass that uses an unsupported "
     "topology key", "not applicable offline: sets Karpenter's UnsupportedTopologyKeys "
     "(a package variable, empty in Karpenter core, that a cloud provider's build fills)"),
    ("Metrics/", "not a decision: asserts Prometheus metrics of the provisioner"),
]
# The In-Flight Nodes and Deleting Nodes cases are ported in test_inflight.py and
# test_deleting.py.
PORTED_HERE = {**vars(test_inflight), **vars(test_deleting), **globals()}
NOT_PORTED = not_ported(PORTED_HERE, SCHEDULING, SCHED_REASONS)


@pytest.mark.parametrize("reason", [pytest.param(r, id=c) for c, r in NOT_PORTED])
def test_not_expressible(reason: str) -> None:
    pytest.skip(reason)


def test_every_ported_case_is_upstream() -> None:
    assert_accounted_for(PORTED_HERE, SCHEDULING, NOT_PORTED)

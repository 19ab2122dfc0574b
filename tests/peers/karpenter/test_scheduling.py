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

import pytest

from .harness import Doc, InstanceType, defaults, node, numbered, pod, run

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

"""Cluster Autoscaler's DRA scale-up cases, ported.

Upstream: kubernetes/autoscaler, branch cluster-autoscaler-release-1.37 at
a16f0ae8b5578f09604371c75e0cad29ed794e59, cluster-autoscaler/core/
static_autoscaler_dra_test.go, TestStaticAutoscalerDynamicResources: its "scale-up"
and "no scale-up" cases (id = the case name); the scale-down ones are ported with
the scale-down tables.

Each case is one loop over the same objects: node groups (min 0, max 10) whose nodes
are BuildTestNode(name, 1000m, 1000 bytes) with the case's ResourceSlices (driver
dra.example.com, one pool per node named after it); each group's template is the
cloud provider's (``<group>-template`` with the same slices, and the case's template
pods, made DaemonSet pods as upstream does); pods of 100m CPU / 100 bytes whose
claims (one per request, class "default-class", a CEL selector on the gpuType or
nicType attribute) are created with them, allocated for the scheduled ones.
Upstream's limits (MaxNodesTotal 1000, MaxCoresTotal 1000, MaxMemoryTotal 1e8) are
given too. Group names are lower-cased (Kubernetes object names).

Upstream's template pods hold claims allocated on the template's devices; here the
template pods' claims are given unallocated and the scheduler allocates the copies
on each new node (CA re-points the allocation at the new node's pool): the same
devices are in use.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from dralab.autoscale import AutoscalerOptions

from .builders_up import Doc, Loop, ProviderTemplate, fleet, node, pod, scale_ups

DRIVER = "dra.example.com"
CLASS: Doc = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
              "metadata": {"name": "default-class"}, "spec": {}}


@dataclass(frozen=True)
class Request:
    name: str
    attribute: str
    value: str
    count: int = 1


REQ1_GPU_A = Request("req1GpuA", "gpuType", "gpuA")
REQ2_GPU_A = Request("req2GpuA", "gpuType", "gpuA", 2)
REQ1_GPU_B = Request("req1GpuB", "gpuType", "gpuB")
REQ1_NIC = Request("req1Nic", "nicType", "nicA")
REQ1_GLOBAL = Request("req1Global", "globalDevType", "globalDevA")


def _devices(prefix: str, count: int, attribute: str, value: str) -> list[Doc]:
    return [{"name": f"{prefix}-{i}", "attributes": {attribute: {"string": value}}}
            for i in range(count)]


@dataclass(frozen=True, eq=False)
class Group:
    name: str
    slice_count: int
    devices: list[Doc]

    def slices(self, node_name: str) -> list[Doc]:
        """testResourceSlices: the devices split over ``slice_count`` slices of one pool."""
        per = -(-len(self.devices) // self.slice_count)
        return [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                 "metadata": {"name": f"{DRIVER}-{node_name}-gen0-slice{i}"},
                 "spec": {"driver": DRIVER, "nodeName": node_name,
                          "pool": {"name": node_name, "generation": 0,
                                   "resourceSliceCount": self.slice_count},
                          "devices": self.devices[i * per:(i + 1) * per]}}
                for i in range(self.slice_count)]


NODE1_GPU_A_1SLICE = Group("node1gpua1slice", 1, _devices("gpuDevice", 1, "gpuType", "gpuA"))
NODE1_GPU_B_1SLICE = Group("node1gpub1slice", 1, _devices("gpuDevice", 1, "gpuType", "gpuB"))
NODE3_GPU_A_1SLICE = Group("node3gpua1slice", 1, _devices("gpuDevice", 3, "gpuType", "gpuA"))
NODE3_GPU_A_3SLICE = Group("node3gpua3slice", 3, _devices("gpuDevice", 3, "gpuType", "gpuA"))
NODE1_NIC_1SLICE = Group("node1nic1slice", 1, _devices("nicDevice", 1, "nicType", "nicA"))
NODE1_GPU1_NIC_1SLICE = Group("node1gpu1nic1slice", 1, [
    *_devices("gpuDevice", 1, "gpuType", "gpuA"), *_devices("nicDevice", 1, "nicType", "nicA")])


def _claim(name: str, requests: Sequence[Request], owner: str | None = None,
           node_name: str | None = None, allocated: Sequence[tuple[str, str, str]] = (),
           reserved: str | None = None) -> Doc:
    """testResourceClaim; ``allocated``: (request, pool, device)."""
    doc: Doc = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                "metadata": {"name": name, "namespace": "default", "uid": name},
                "spec": {"devices": {"requests": [
                    {"name": r.name, "exactly": {
                        "deviceClassName": "default-class", "allocationMode": "ExactCount",
                        "count": r.count, "selectors": [{"cel": {"expression":
                            f'device.attributes["{DRIVER}"].{r.attribute} == "{r.value}"'}}]}}
                    for r in requests]}}}
    if owner:
        doc["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod",
                                               "name": owner, "uid": owner,
                                               "controller": True}]
    if allocated:
        allocation: Doc = {"devices": {"results": [
            {"request": r, "driver": DRIVER, "pool": p, "device": d} for r, p, d in allocated]}}
        if node_name:
            allocation["nodeSelector"] = {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}
        doc["status"] = {"allocation": allocation}
        if reserved:
            doc["status"]["reservedFor"] = [{"resource": "pods", "name": reserved,
                                             "uid": reserved}]
    return doc


SHARED_GPU_B = _claim("sharedGpuBClaim", [REQ1_GPU_B])
SHARED_ALLOCATED_GLOBAL = _claim("sharedGlobalClaim", [REQ1_GLOBAL],
                                 allocated=[("req1Global", "global-pool", "globalDev-0")])


def _test_pod(name: str, controller: str, node_name: str | None,
              requests: Sequence[Request], devices: dict[str, list[str]] | None = None,
              shared: Sequence[Doc] = (), daemon: bool = False) -> list[Doc]:
    """createTestPod: one claim per request (sorted by name), referenced by its
    template entry with the claim recorded in the pod's status; shared claims by name."""
    entries: list[Doc] = []
    statuses: list[Doc] = []
    claims: list[Doc] = []
    for i, request in enumerate(sorted(requests, key=lambda r: r.name)):
        claim_name = f"{name}-claim-{i}"
        ref = f"claim-ref-{i}"
        entries.append({"name": ref, "resourceClaimTemplateName": f"{name}-{ref}-template"})
        statuses.append({"name": ref, "resourceClaimName": claim_name})
        allocated = [(request.name, node_name or "", d)
                     for d in (devices or {}).get(request.name, [])]
        claims.append(_claim(claim_name, [request], owner=name, node_name=node_name,
                             allocated=allocated, reserved=name if allocated else None))
    for i, claim in enumerate(shared):
        entries.append({"name": f"claim-ref-extra-{i}",
                        "resourceClaimName": claim["metadata"]["name"]})
    the_pod = pod(name, 100, 100, node_name=node_name, owner=None if daemon else controller,
                  daemon_set=controller if daemon else None, claims=entries,
                  claim_statuses=statuses)
    return [the_pod, *claims]


def _unscheduled(base: str, count: int, requests: Sequence[Request],
                 shared: Sequence[Doc] = ()) -> list[Doc]:
    return [d for i in range(count)
            for d in _test_pod(f"{base}-{i}", base, None, requests, shared=shared)]


def _scheduled(name: str, node_name: str, devices: dict[Request, list[str]],
               shared: Sequence[Doc] = (), daemon: bool = False) -> list[Doc]:
    return _test_pod(name, f"{name}-controller", node_name, list(devices),
                     {r.name: d for r, d in devices.items()}, shared, daemon)


@dataclass
class Case:
    groups: dict[Group, int]
    pods: list[Doc]
    scale_ups: dict[str, int]
    template_pods: dict[str, list[Doc]] = field(default_factory=dict)
    extra_claims: list[Doc] = field(default_factory=list)
    no_scale_up_prefix: tuple[str, int] | None = None


def _cases() -> dict[str, Case]:
    g1a, g1b, g3a1, g3a3 = (NODE1_GPU_A_1SLICE, NODE1_GPU_B_1SLICE, NODE3_GPU_A_1SLICE,
                            NODE3_GPU_A_3SLICE)
    nic, gn = NODE1_NIC_1SLICE, NODE1_GPU1_NIC_1SLICE
    return {
        "scale-up: one pod per node, one device per node": Case(
            {g1a: 1}, [*_unscheduled("unschedulable", 3, [REQ1_GPU_A]),
                       *_scheduled("scheduled-0", f"{g1a.name}-0", {REQ1_GPU_A: ["gpuDevice-0"]})],
            {g1a.name: 3}),
        "scale-up: multiple pods per node, pods requesting one device": Case(
            {g3a1: 1}, [*_unscheduled("unschedulable", 10, [REQ1_GPU_A]),
                        *_scheduled("scheduled-0", f"{g3a1.name}-0", {REQ1_GPU_A: ["gpuDevice-0"]}),
                        *_scheduled("scheduled-1", f"{g3a1.name}-0",
                                    {REQ1_GPU_A: ["gpuDevice-1"]})],
            {g3a1.name: 3}),
        "scale-up: multiple pods per node, pods requesting multiple identical devices": Case(
            {g3a1: 1}, [*_unscheduled("unschedulable", 4, [REQ2_GPU_A]),
                        *_scheduled("scheduled-0", f"{g3a1.name}-0",
                                    {REQ1_GPU_A: ["gpuDevice-0"]})],
            {g3a1.name: 3}),
        "scale-up: multiple devices in one slice work correctly": Case(
            {g3a1: 1}, [*_unscheduled("unschedulable", 5, [REQ1_GPU_A]),
                        *_scheduled("scheduled-0", f"{g3a1.name}-0",
                                    {REQ2_GPU_A: ["gpuDevice-0", "gpuDevice-1"]})],
            {g3a1.name: 2}),
        "scale-up: multiple devices in multiple slices work correctly": Case(
            {g3a3: 1}, [*_unscheduled("unschedulable", 5, [REQ1_GPU_A]),
                        *_scheduled("scheduled-0", f"{g3a3.name}-0",
                                    {REQ2_GPU_A: ["gpuDevice-0", "gpuDevice-1"]})],
            {g3a3.name: 2}),
        "scale-up: one pod per node, pods requesting multiple different devices": Case(
            {gn: 1}, [*_unscheduled("unschedulable", 3, [REQ1_GPU_A, REQ1_NIC]),
                      *_scheduled("scheduled-0", f"{gn.name}-0",
                                  {REQ1_NIC: ["nicDevice-0"], REQ1_GPU_A: ["gpuDevice-0"]})],
            {gn.name: 3}),
        "scale-up: scale from 0 nodes in a node group": Case(
            {gn: 0}, _unscheduled("unschedulable", 3, [REQ1_GPU_A, REQ1_NIC]), {gn.name: 3}),
        "scale-up: scale from 0 nodes in a node group, with pods on the template nodes "
        "consuming DRA resources": Case(
            {g3a1: 0}, _unscheduled("unschedulable", 3, [REQ1_GPU_A]), {g3a1.name: 3},
            template_pods={g3a1.name: [
                *_scheduled("template-0", f"{g3a1.name}-template",
                            {REQ1_GPU_A: ["gpuDevice-0"]}, daemon=True),
                *_scheduled("template-1", f"{g3a1.name}-template",
                            {REQ1_GPU_A: ["gpuDevice-1"]}, daemon=True)]}),
        "scale-up: scale from 0 nodes in a node group, with pods on the template nodes "
        "consuming DRA resources, including shared claims": Case(
            {g3a1: 0},
            _unscheduled("unschedulable", 3, [REQ1_GPU_A], shared=[SHARED_ALLOCATED_GLOBAL]),
            {g3a1.name: 3},
            template_pods={g3a1.name: [
                *_scheduled("template-0", f"{g3a1.name}-template",
                            {REQ1_GPU_A: ["gpuDevice-0"]}, [SHARED_ALLOCATED_GLOBAL],
                            daemon=True),
                *_scheduled("template-1", f"{g3a1.name}-template",
                            {REQ1_GPU_A: ["gpuDevice-1"]}, [SHARED_ALLOCATED_GLOBAL],
                            daemon=True)]},
            extra_claims=[SHARED_ALLOCATED_GLOBAL]),
        "no scale-up: pods requesting multiple different devices, but they're on different "
        "nodes": Case(
            {g1a: 1, nic: 1}, _unscheduled("unschedulable", 3, [REQ1_GPU_A, REQ1_NIC]), {}),
        "scale-up: pods requesting a shared, unallocated claim": Case(
            {g1b: 1}, [*_unscheduled("unschedulable", 13, [], shared=[SHARED_GPU_B]),
                       *_scheduled("scheduled-0", f"{g1b.name}-0",
                                   {REQ1_GPU_B: ["gpuDevice-0"]})],
            {g1b.name: 1}, extra_claims=[SHARED_GPU_B],
            no_scale_up_prefix=("unschedulable", 3)),
    }


CASES = _cases()


def _loop(case: Case) -> Loop:
    docs: list[Doc] = [CLASS, *case.extra_claims]
    groups: dict[str, dict[str, Any]] = {}
    templates: dict[str, ProviderTemplate] = {}
    for group, count in case.groups.items():
        groups[group.name] = {"min": 0, "max": 10, "cpu": "1", "memory": "1000"}
        for i in range(count):
            name = f"{group.name}-{i}"
            docs.append(node(name, 1000, 1000, 100, group=group.name))
            docs += group.slices(name)
        template_name = f"{group.name}-template"
        made = case.template_pods.get(group.name, [])
        templates[group.name] = ProviderTemplate(
            node(template_name, 1000, 1000, 100, group=group.name),
            group.slices(template_name),
            [d for d in made if d["kind"] == "Pod"],
            [d for d in made if d["kind"] == "ResourceClaim"])
    docs += case.pods
    options = AutoscalerOptions(max_nodes_total=1000, cores_total=(0, 1000),
                                memory_total=(0, 100000000))
    return Loop(fleet(groups), docs, options, templates)


@pytest.mark.parametrize("name", list(CASES), ids=list(CASES))
def test_static_autoscaler_dynamic_resources(name: str) -> None:
    """static_autoscaler_dra_test.go TestStaticAutoscalerDynamicResources."""
    case = CASES[name]
    decisions = _loop(case).run()
    assert scale_ups(decisions) == case.scale_ups
    if case.no_scale_up_prefix is not None:
        prefix, count = case.no_scale_up_prefix
        pending = [p.pod for p in decisions.pending if p.pod.startswith(f"default/{prefix}")]
        assert len(pending) == count



def test_template_copied_from_a_real_node_keeps_its_daemonset_pods_devices() -> None:
    """Ours (issue 31: CA builds a template from a real node of the group, its slices and
    DaemonSet pods included; mixed_nodeinfos_processor.go). The group's one node has 3
    GPUs, a DaemonSet pod holds one; of 5 pending one-GPU pods the node takes 2, and the
    other 3 need two new nodes (two free GPUs each), not one."""
    group = NODE3_GPU_A_1SLICE
    node_name = f"{group.name}-0"
    docs: list[Doc] = [CLASS, node(node_name, 1000, 1000, 100, group=group.name),
                       *group.slices(node_name),
                       *_scheduled("daemon-0", node_name, {REQ1_GPU_A: ["gpuDevice-0"]},
                                   daemon=True),
                       *_unscheduled("unschedulable", 5, [REQ1_GPU_A])]
    loop = Loop(fleet({group.name: {"min": 0, "max": 10, "cpu": "1", "memory": "1000"}}),
                docs)
    assert scale_ups(loop.run()) == {group.name: 2}


def test_generated_template_runs_the_daemonsets_first() -> None:
    """Ours (issue 31: DaemonSet pods are placed on template nodes before the pending
    pods). A Fleet pool of 4 example-driver GPUs and no node yet; a DaemonSet whose pod
    claims one GPU; 4 pending one-GPU pods need two nodes (three GPUs left on each)."""
    the_fleet: Doc = {"apiVersion": "dralab.dev/v1alpha1", "kind": "Fleet",
                      "metadata": {"name": "ex"}, "spec": {"pools": [{
                          "name": "ex", "count": 0, "driver": "example", "cpu": "16",
                          "memory": "64Gi", "gpu": {"count": 4},
                          "autoscaling": {"min": 0, "max": 4}}]}}
    template: Doc = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                     "metadata": {"name": "one-gpu", "namespace": "default"},
                     "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                         "deviceClassName": "gpu.example.com", "count": 1}}]}}}}
    claim_entry = [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]
    daemon_pod = pod("agent", 100, 0, owner=None, claims=claim_entry)
    daemon_set: Doc = {"apiVersion": "apps/v1", "kind": "DaemonSet",
                       "metadata": {"name": "agent", "namespace": "default"},
                       "spec": {"selector": {"matchLabels": {"app": "agent"}},
                                "template": {"metadata": {"labels": {"app": "agent"}},
                                             "spec": daemon_pod["spec"]}}}
    pending = [pod(f"w-{i}", 100, 0, owner="w", claims=claim_entry) for i in range(4)]
    loop = Loop(the_fleet, [template, *pending], daemon_sets=[daemon_set])
    assert scale_ups(loop.run()) == {"ex": 2}
    without = Loop(the_fleet, [template, *pending])
    assert scale_ups(without.run()) == {"ex": 1}

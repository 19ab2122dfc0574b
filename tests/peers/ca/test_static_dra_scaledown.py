"""Cluster Autoscaler's DRA scale-down cases of the static autoscaler, ported.

kubernetes/autoscaler, branch cluster-autoscaler-release-1.37 at
a16f0ae8b5578f09604371c75e0cad29ed794e59,
cluster-autoscaler/core/static_autoscaler_dra_test.go, TestStaticAutoscalerDynamicResources:
its three scale-down cases ("scale-down: empty single-device nodes", "scale-down:
single-device nodes with drain", "no scale-down: no place to reschedule"); the scale-up
cases are in test_static_dra_scaleup.py.

As upstream: node groups of 1000m/1000-byte nodes whose dra.example.com devices are
in one pool per node; bound pods whose claims (generated from a template, owned by
and reserved for the pod, allocated on the node) hold the devices; the options
ScaleDownUnneededTime 1m, ScaleDownUnreadyTime 1m, ScaleDownUtilizationThreshold 0.7;
one loop at t, the next at t + 2 min removes, the one at t + 4 min reports why the
others stay. dralab's differences in form: names are lowercase (node groups are
Fleet pools and node names must be DNS names: node1GpuA1slice -> node1gpua1slice),
the claim templates exist (upstream names them "for completeness only"; dralab
re-creates a moved pod's claims from them), and the node groups are Fleet pools
with min 0 and max 10.

Upstream's own test asserts less than it states: its scale-down cases return after
the first node deletion, before the unremovable nodes are checked, and its "single-
device nodes with drain" names the unremovable nodes node1GpuA1slice-0/-1 (no such
nodes). The port asserts what the cases state, on the nodes they mean
(node3gpua1slice-0/-1).
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from dralab.autoscale import AutoscalerOptions, ClusterAutoscaler
from dralab.fleet import parse_fleet

from .builders_down import Doc, cluster_of, device_doc, dra_test_slices, node, pod

DRIVER = "dra.example.com"
GPU_A = f'device.attributes["{DRIVER}"].gpuType == "gpuA"'

# The node groups: (devices per node, slices per node).
GROUPS = {"node1gpua1slice": (1, 1), "node3gpua1slice": (3, 1)}


def _request(name: str, count: int) -> Doc:
    return {"name": name, "exactly": {"deviceClassName": "default-class", "count": count,
                                      "allocationMode": "ExactCount",
                                      "selectors": [{"cel": {"expression": GPU_A}}]}}


REQ_1_GPU_A = ("req1GpuA", 1)
REQ_2_GPU_A = ("req2GpuA", 2)


def _scheduled(big: bool, name: str, node_name: str, request: tuple[str, int],
               devs: Sequence[str]) -> list[Doc]:
    """scheduledPod: the pod (baseBigPod 600m or baseSmallPod 100m, 100 bytes; owned by
    ReplicaSet <name>-controller), its claim <name>-claim-0 allocated on ``node_name``
    and the claim's template."""
    template = f"{name}-claim-ref-0-template"
    claim = f"{name}-claim-0"
    spec = pod(name, 600 if big else 100, 100, node_name=node_name,
               owner=("ReplicaSet", f"{name}-controller"))
    spec["spec"]["resourceClaims"] = [{"name": "claim-ref-0",
                                       "resourceClaimTemplateName": template}]
    spec["spec"]["containers"][0]["resources"]["claims"] = [{"name": "claim-ref-0"}]
    spec["status"] = {"resourceClaimStatuses": [{"name": "claim-ref-0",
                                                 "resourceClaimName": claim}]}
    requests = [_request(*request)]
    claim_doc: Doc = {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": claim, "namespace": "default", "uid": claim,
                     "annotations": {"resource.kubernetes.io/pod-claim-name": "claim-ref-0"},
                     "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": name,
                                          "uid": name, "controller": True,
                                          "blockOwnerDeletion": True}]},
        "spec": {"devices": {"requests": requests}},
        "status": {"allocation": {
            "devices": {"results": [{"request": request[0], "driver": DRIVER,
                                     "pool": node_name, "device": d} for d in devs]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{
                "key": "metadata.name", "operator": "In", "values": [node_name]}]}]}},
            "reservedFor": [{"resource": "pods", "name": name, "uid": name}]}}
    template_doc: Doc = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                         "metadata": {"name": template, "namespace": "default"},
                         "spec": {"spec": {"devices": {"requests": requests}}}}
    return [spec, claim_doc, template_doc]


def _world(groups: dict[str, int], pods: list[list[Doc]]) -> tuple[list[Doc], Doc]:
    """The nodes (ready), their slices, the device class, the pods; and the Fleet."""
    docs: list[Doc] = [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                        "metadata": {"name": "default-class"}, "spec": {}}]
    pools = []
    for group, count in groups.items():
        per_node, slices = GROUPS[group]
        for i in range(count):
            name = f"{group}-{i}"
            docs.append(node(name, 1000, 1000, group=group, ready=True))
            docs += dra_test_slices(DRIVER, name, name, slices, 0, [
                device_doc(f"gpuDevice-{d}", attributes={f"{DRIVER}/gpuType": "gpuA"})
                for d in range(per_node)])
        pools.append({"name": group, "count": 0, "cpu": "1", "memory": "1000",
                      "autoscaling": {"min": 0, "max": 10}})
    for objects in pods:
        docs += objects
    fleet = {"apiVersion": "dralab.dev/v1alpha1", "kind": "Fleet",
             "metadata": {"name": "static-autoscaler-dra"}, "spec": {"pools": pools}}
    return docs, fleet


OPTIONS = AutoscalerOptions(scale_down_unneeded_time=60.0, scale_down_unready_time=60.0,
                            scale_down_utilization_threshold=0.7)

# (name, node groups, pods, want scale-downs, want unremovable (node, reason))
CASES: list[tuple[str, dict[str, int], list[list[Doc]], list[str], list[tuple[str, str]]]] = [
    ("scale-down: empty single-device nodes", {"node1gpua1slice": 3},
     [_scheduled(True, "scheduled-0", "node1gpua1slice-1", REQ_1_GPU_A, ["gpuDevice-0"])],
     ["node1gpua1slice-0", "node1gpua1slice-2"],
     [("node1gpua1slice-1", "NotUnderutilized")]),
    ("scale-down: single-device nodes with drain", {"node3gpua1slice": 3},
     [_scheduled(False, "scheduled-0", "node3gpua1slice-0", REQ_2_GPU_A,
                 ["gpuDevice-0", "gpuDevice-1"]),
      _scheduled(False, "scheduled-1", "node3gpua1slice-1", REQ_2_GPU_A,
                 ["gpuDevice-0", "gpuDevice-1"]),
      _scheduled(False, "scheduled-2", "node3gpua1slice-2", REQ_1_GPU_A, ["gpuDevice-0"]),
      _scheduled(False, "scheduled-3", "node3gpua1slice-2", REQ_1_GPU_A, ["gpuDevice-1"])],
     ["node3gpua1slice-2"],
     [("node3gpua1slice-0", "NoPlaceToMovePods"), ("node3gpua1slice-1", "NoPlaceToMovePods")]),
    ("no scale-down: no place to reschedule", {"node3gpua1slice": 3},
     [_scheduled(True, "scheduled-0", "node3gpua1slice-0", REQ_2_GPU_A,
                 ["gpuDevice-0", "gpuDevice-1"]),
      _scheduled(True, "scheduled-1", "node3gpua1slice-1", REQ_2_GPU_A,
                 ["gpuDevice-0", "gpuDevice-1"]),
      _scheduled(True, "scheduled-2", "node3gpua1slice-1", REQ_1_GPU_A, ["gpuDevice-2"]),
      _scheduled(False, "scheduled-3", "node3gpua1slice-2", REQ_1_GPU_A, ["gpuDevice-0"]),
      _scheduled(False, "scheduled-4", "node3gpua1slice-2", REQ_1_GPU_A, ["gpuDevice-1"])],
     [],
     [("node3gpua1slice-0", "NoPlaceToMovePods"), ("node3gpua1slice-1", "NotUnderutilized"),
      ("node3gpua1slice-2", "NoPlaceToMovePods")]),
]


@pytest.mark.parametrize(("groups", "pods", "downs", "kept"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_static_autoscaler_dynamic_resources_scale_down(
        groups: dict[str, int], pods: list[list[Doc]], downs: list[str],
        kept: list[tuple[str, str]]) -> None:
    docs, fleet_doc = _world(groups, pods)
    _, scheduler = cluster_of(docs)
    model = ClusterAutoscaler(scheduler, parse_fleet(fleet_doc, "fleet"), OPTIONS)
    first = model.loop([], 0.0)
    assert first.scale_ups == () and first.scale_downs == ()
    second = model.loop([], 120.0)
    assert second.scale_ups == ()
    assert sorted(d.node for d in second.scale_downs) == downs
    assert sorted((u.node, u.reason) for u in second.unremovable) == kept
    if not downs:
        # Upstream's third loop (t + 4 min) reports the same reasons.
        third = model.loop([], 240.0)
        assert sorted((u.node, u.reason) for u in third.unremovable) == kept

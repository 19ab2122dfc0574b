"""Extended resources backed by DRA: class mapping, the special claim, pod status."""

from __future__ import annotations

from dralab.api.core import ContainerExtendedResourceRequest
from dralab.controllers.resourceclaims import EXTENDED_CLAIM_ANNOTATION, delete_pod
from dralab.scheduler.framework import Code
from dralab.scheduler.plugins.dynamicresources.extended import (
    DEVICE_CLASS_PREFIX,
    dra_backed_resources,
    extended_resource_classes,
    extended_spec,
    node_serves_via_dra,
)

from .builders import GPU, Harness, cluster, container, gpu_class, gpus, node, pod

NV = "nvidia.com/gpu"


def _dra_cluster() -> Harness:
    state = cluster([node("dra-node")], [gpus("dra-node", 4)],
                    classes=[gpu_class(extended=NV)])
    return Harness(state)


def test_pod_with_extended_resource_gets_a_special_claim_on_a_dra_only_node() -> None:
    h = _dra_cluster()
    state = h.cluster
    info = h.add(pod("trainer", uid="pod-uid",
                     containers=[container("main", requests={"cpu": 1, NV: 2})]))
    attempt = h.schedule(info)
    assert attempt.node == "dra-node"
    status = info.pod.status.extended_resource_claim_status
    assert status is not None
    special = state.claims[f"default/{status.resource_claim_name}"]
    name = special.metadata.name or ""
    assert name.startswith("trainer-extended-resources-") and len(name) == 27 + 5
    assert special.metadata.generate_name == "trainer-extended-resources-"
    assert special.metadata.annotations == {EXTENDED_CLAIM_ANNOTATION: "true"}
    [owner] = special.metadata.owner_references
    assert (owner.kind, owner.name, owner.uid, owner.controller) == ("Pod", "trainer",
                                                                    "pod-uid", True)
    [req] = special.spec.devices.requests
    assert req.name == "container-0-request-1"  # cpu sorts before nvidia.com/gpu
    assert req.exactly is not None
    assert (req.exactly.device_class_name, req.exactly.count) == (GPU, 2)
    assert special.status.allocation is not None
    assert len(special.status.allocation.devices.results) == 2
    assert [r.uid for r in special.status.reserved_for] == ["pod-uid"]
    assert status.request_mappings == [ContainerExtendedResourceRequest(
        container_name="main", resource_name=NV, request_name="container-0-request-1")]
    # A second pod gets the remaining two GPUs, a third does not fit.
    assert h.schedule(pod("b", containers=[container("c", requests={NV: 2})])).node
    third = h.schedule(pod("c", containers=[container("c", requests={NV: 1})]))
    assert third.node is None
    assert third.statuses["dra-node"].reasons == ("cannot allocate all claims",)
    # Removing the pod deletes its special claim and frees its GPUs.
    delete_pod(state, info.key)
    assert status.resource_claim_name and f"default/{status.resource_claim_name}" \
        not in state.claims
    assert h.schedule(pod("d", containers=[container("c", requests={NV: 2})])).node


def test_device_plugin_node_needs_no_special_claim() -> None:
    state = cluster([node("dp-node", allocatable={NV: 8})], classes=[gpu_class(extended=NV)])
    h = Harness(state)
    info = h.add(pod("p", containers=[container("c", requests={NV: 2})]))
    assert h.schedule(info).node == "dp-node"
    assert info.pod.status.extended_resource_claim_status is None
    assert not state.claims


def test_unbacked_resource_missing_on_the_node_does_not_fit() -> None:
    h = _dra_cluster()
    attempt = h.schedule(pod("p", containers=[container("c", requests={
        NV: 1, "example.com/fpga": 1})]))
    assert attempt.node is None
    status = attempt.statuses["dra-node"]
    assert status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.reasons == ("cannot fit resource",)


def test_implicit_device_class_resource_name() -> None:
    h = _dra_cluster()
    info = h.add(pod("p", containers=[container("c", requests={DEVICE_CLASS_PREFIX + GPU: 3})]))
    assert h.schedule(info).node == "dra-node"
    status = info.pod.status.extended_resource_claim_status
    assert status is not None
    special = h.cluster.claims[f"default/{status.resource_claim_name}"]
    assert special.status.allocation is not None
    assert len(special.status.allocation.devices.results) == 3


def test_newest_class_wins_then_first_name() -> None:
    classes = [gpu_class("b-old", extended=NV, created="2025-01-01T00:00:00Z"),
               gpu_class("c-new", extended=NV, created="2025-06-01T00:00:00Z"),
               gpu_class("a-new", extended=NV, created="2025-06-01T00:00:00Z"),
               gpu_class("plain")]
    mapping = extended_resource_classes(classes)
    assert mapping[NV] == "a-new"
    assert mapping[DEVICE_CLASS_PREFIX + "plain"] == "plain"
    assert mapping[DEVICE_CLASS_PREFIX + "b-old"] == "b-old"
    assert extended_resource_classes(classes[:2])[NV] == "c-new"


def test_dra_backed_resources_for_node_resources_fit() -> None:
    state = cluster([node("dra"), node("dp", allocatable={NV: 4})],
                    classes=[gpu_class(extended=NV)])
    backed = dra_backed_resources(state)
    assert backed == {NV, DEVICE_CLASS_PREFIX + GPU}
    assert node_serves_via_dra(state.nodes["dra"], NV, backed)
    assert not node_serves_via_dra(state.nodes["dp"], NV, backed)
    assert not node_serves_via_dra(state.nodes["dra"], "example.com/other", backed)


def test_init_containers_reuse_regular_requests_or_get_the_largest() -> None:
    mapping = {NV: GPU}
    covered = pod("p", init_containers=[container("init", requests={NV: 1})],
                  containers=[container("main", requests={NV: 2})])
    made = extended_spec(covered, {NV}, mapping)
    assert [r.name for r in made.spec.devices.requests] == ["container-1-request-0"]
    assert [(m.container_name, m.request_name) for m in made.mappings] == [
        ("main", "container-1-request-0"), ("init", "container-1-request-0")]

    larger = pod("p", init_containers=[container("i0", requests={NV: 3}),
                                       container("i1", requests={NV: 4})],
                 containers=[container("main", requests={NV: 2})])
    made = extended_spec(larger, {NV}, mapping)
    counts = {r.name: r.exactly.count for r in made.spec.devices.requests if r.exactly}
    assert counts == {"container-1-request-0": 2, "container-2-request-0": 2}
    assert [(m.container_name, m.request_name) for m in made.mappings] == [
        ("main", "container-2-request-0"),
        ("i0", "container-2-request-0"), ("i0", "container-1-request-0"),
        ("i1", "container-2-request-0"), ("i1", "container-1-request-0")]


def test_unreserve_deletes_the_special_claim_and_the_status() -> None:
    from dralab.scheduler.framework import CycleState

    h = _dra_cluster()
    info = h.add(pod("p", containers=[container("c", requests={NV: 1})]))
    cycle = CycleState()
    h.plugin.pre_filter(cycle, info, h.cluster)
    assert h.plugin.filter(cycle, info, h.cluster.nodes["dra-node"]).is_success()
    assert h.plugin.reserve(cycle, info, "dra-node").is_success()
    assert h.plugin.pre_bind(cycle, info, "dra-node").is_success()
    assert info.pod.status.extended_resource_claim_status is not None
    assert len(h.cluster.claims) == 1
    h.plugin.unreserve(cycle, info, "dra-node")
    h.plugin.unreserve(cycle, info, "dra-node")
    assert not h.cluster.claims and not h.cluster.allocated.claims()
    assert info.pod.status.extended_resource_claim_status is None

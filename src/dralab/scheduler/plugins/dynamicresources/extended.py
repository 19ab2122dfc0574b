"""Extended resources backed by DRA (KEP-5004, gate DRAExtendedResource).

A DeviceClass may name an extended resource (``spec.extendedResourceName``);
every class also stands for ``deviceclass.resource.kubernetes.io/<class>``. A
pod asking for such a resource (``nvidia.com/gpu: 2``) on a node that does not
advertise it (no device plugin) is served by DRA instead: the scheduler makes a
special claim for the pod with one ExactCount request per (container,
resource), allocates it with the pod's other claims and records in
``pod.status.extendedResourceClaimStatus`` which container got which request.

This module holds the pure parts: the resource -> class mapping, which node
serves what through DRA, and the requests and mappings of the special claim.
The DynamicResources plugin drives them.

For NodeResourcesFit: call ``dra_backed_resources(cluster)`` once per pod (in
PreFilter) and skip the "Insufficient <resource>" check on nodes where
``node_serves_via_dra(node, resource, backed)`` holds; DynamicResources then
decides whether the node's devices suffice.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from msgspec.structs import replace

from dralab.api.base import ObjectMeta, OwnerReference
from dralab.api.core import Container, ContainerExtendedResourceRequest, Pod
from dralab.api.features import FeatureGates
from dralab.api.keys import object_key
from dralab.api.quantity import Quantity
from dralab.api.resource import (
    V1,
    DeviceClaim,
    DeviceClass,
    DeviceRequest,
    ExactDeviceRequest,
    ResourceClaim,
    ResourceClaimSpec,
)
from dralab.cluster import ClusterState, NodeInfo
from dralab.controllers.resourceclaims import EXTENDED_CLAIM_ANNOTATION

__all__ = [
    "DEVICE_CLASS_PREFIX",
    "GATE",
    "ExtendedClaimSpec",
    "dra_backed_resources",
    "extended_claim_base",
    "extended_resource_classes",
    "extended_spec",
    "find_extended_claim",
    "is_dra_extended_resource_name",
    "new_extended_claim",
    "node_serves_via_dra",
    "pod_extended_requests",
]

GATE = "DRAExtendedResource"
DEVICE_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"
_MAX_GENERATED_BASE = 58
_NANO = 10**9


def is_dra_extended_resource_name(name: str) -> bool:
    """An extended resource name (domain-qualified, not kubernetes.io, not a quota
    ``requests.`` name) or an implicit device-class name."""
    if name.startswith(DEVICE_CLASS_PREFIX):
        return True
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


def _created(cls: DeviceClass) -> str:
    # RFC 3339 timestamps in UTC sort lexicographically; a missing one is oldest.
    return cls.metadata.creation_timestamp or ""


def extended_resource_classes(classes: Mapping[str, DeviceClass] | Sequence[DeviceClass]
                              ) -> dict[str, str]:
    """Extended resource name -> device class name. Pure.

    Every class maps its implicit ``deviceclass.resource.kubernetes.io/<name>``.
    When several classes claim the same ``extendedResourceName`` the most
    recently created wins; equal creation times go to the lexicographically
    first class name.
    """
    items = list(classes.values()) if isinstance(classes, Mapping) else list(classes)
    items.sort(key=lambda c: c.name)
    mapping: dict[str, str] = {}
    newest: dict[str, str] = {}  # resource -> creation time of the class holding it
    for cls in items:
        name = cls.spec.extended_resource_name
        if not name:
            continue
        # Strictly newer wins; names are visited in order, so ties keep the first.
        if name not in mapping or _created(cls) > newest[name]:
            mapping[name] = cls.name
            newest[name] = _created(cls)
    for cls in items:
        mapping[DEVICE_CLASS_PREFIX + cls.name] = cls.name
    return mapping


def dra_backed_resources(cluster: ClusterState) -> set[str]:
    """Names of the extended resources a DeviceClass can serve; empty while the
    DRAExtendedResource gate is off. Pure; O(number of classes), so call it once
    per pod rather than per node."""
    if not _enabled(cluster.features):
        return set()
    return set(extended_resource_classes(cluster.classes))


def _enabled(features: FeatureGates) -> bool:
    return features.is_enabled(GATE)


def node_serves_via_dra(node: NodeInfo, resource: str,
                        backed: Collection[str] | None = None) -> bool:
    """Whether ``node`` would get ``resource`` from DRA rather than a device plugin:
    the node does not advertise it (allocatable absent or zero). With ``backed``
    (from ``dra_backed_resources``) the resource must also map to a class.

    NodeResourcesFit must not report "Insufficient" for such a resource on such
    a node; DynamicResources checks the devices.
    """
    if backed is not None and resource not in backed:
        return False
    return node.allocatable.get(resource, 0) == 0


def _count(quantity: Quantity) -> int | None:
    nano = quantity.nano
    return nano // _NANO if nano % _NANO == 0 else None


def _requests_of(container: Container) -> dict[str, Quantity]:
    merged = dict(container.resources.limits)
    merged.update(container.resources.requests)
    return merged


def pod_extended_requests(pod_requests: Mapping[str, int], mapping: Mapping[str, str]
                          ) -> dict[str, int]:
    """The pod's non-zero extended-resource requests in whole units, if at least
    one of them maps to a device class (else empty: DRA has nothing to do).

    Unmapped ones are kept: on a node that lacks them the pod cannot fit.
    ``pod_requests`` are the effective pod requests in milli-units (``PodInfo.requests``).
    """
    out = {name: -(-milli // 1000) for name, milli in pod_requests.items()
           if milli > 0 and is_dra_extended_resource_name(name)}
    return out if any(name in mapping for name in out) else {}


@dataclass(frozen=True, slots=True)
class ExtendedClaimSpec:
    """What the special claim asks for on one kind of node, and the pod status mapping."""

    spec: ResourceClaimSpec
    mappings: tuple[ContainerExtendedResourceRequest, ...]


def _container_request(index: int, container: Container, resource: str, class_name: str,
                       reusable: Sequence[DeviceRequest | None]
                       ) -> tuple[DeviceRequest | None, list[ContainerExtendedResourceRequest]]:
    requests = _requests_of(container)
    quantity = requests.get(resource)
    if quantity is None:
        return None, []
    wanted = _count(quantity)
    if not wanted:
        return None, []
    mappings: list[ContainerExtendedResourceRequest] = []
    covered = 0
    # An init container runs before the long-lived ones start, so it may use
    # devices they will get later instead of asking for its own.
    for other in reusable:
        if other is None or other.exactly is None:
            continue
        covered += other.exactly.count or 0
        mappings.append(ContainerExtendedResourceRequest(
            container_name=container.name, resource_name=resource, request_name=other.name))
        if covered >= wanted:
            return None, mappings
    # Request names index the resource among the container's sorted request names.
    position = sorted(requests).index(resource)
    name = f"container-{index}-request-{position}"
    request = DeviceRequest(name=name, exactly=ExactDeviceRequest(
        device_class_name=class_name, allocation_mode="ExactCount", count=wanted - covered))
    mappings.append(ContainerExtendedResourceRequest(
        container_name=container.name, resource_name=resource, request_name=name))
    return request, mappings


def extended_spec(pod: Pod, resources: Collection[str], mapping: Mapping[str, str]
                  ) -> ExtendedClaimSpec:
    """Requests and mappings of the special claim for the ``resources`` a node
    serves through DRA. Pure and deterministic.

    Containers are numbered init containers first. Regular containers get one
    request each per resource; init containers reuse the regular containers'
    requests where those cover them, otherwise the largest init-container
    request is kept and every init container is mapped to it. Requests are
    sorted by name.
    """
    containers = [*pod.spec.init_containers, *pod.spec.containers]
    n_init = len(pod.spec.init_containers)
    requests: list[DeviceRequest] = []
    mappings: list[ContainerExtendedResourceRequest] = []
    for resource in sorted(resources):
        class_name = mapping.get(resource)
        if class_name is None:
            continue
        regular: list[DeviceRequest | None] = [None] * len(containers)
        regular_maps: list[ContainerExtendedResourceRequest] = []
        for i in range(n_init, len(containers)):
            req, maps = _container_request(i, containers[i], resource, class_name, ())
            regular[i] = req
            regular_maps += maps
        largest: DeviceRequest | None = None
        init_names: set[str] = set()
        init_maps: list[ContainerExtendedResourceRequest] = []
        for i in range(n_init):
            req, maps = _container_request(i, containers[i], resource, class_name, regular[i:])
            if req is not None and req.exactly is not None:
                init_names.add(req.name)
                if largest is None or (largest.exactly is not None and
                                       (largest.exactly.count or 0) < (req.exactly.count or 0)):
                    largest = req
            init_maps += maps
        if largest is not None and len(init_names) > 1:
            init_maps = [replace(m, request_name=largest.name)
                         if m.request_name in init_names else m for m in init_maps]
        if largest is not None:
            requests.append(largest)
        requests.extend(r for r in regular if r is not None)
        mappings += regular_maps + init_maps
    requests.sort(key=lambda r: r.name)
    return ExtendedClaimSpec(ResourceClaimSpec(devices=DeviceClaim(requests=requests)),
                             tuple(mappings))


def extended_claim_base(pod_name: str) -> str:
    """The generateName of a pod's special claim, cut as the name generator cuts it."""
    return (pod_name + "-extended-resources-")[:_MAX_GENERATED_BASE]


def new_extended_claim(pod: Pod, spec: ResourceClaimSpec, name: str, uid: str,
                       created: str | None = None) -> ResourceClaim:
    """The special claim object for ``pod`` (owned by it, annotated), not yet allocated;
    ``created`` is its creationTimestamp."""
    owner = OwnerReference(api_version="v1", kind="Pod", name=pod.metadata.name or "",
                           uid=pod.metadata.uid or "", controller=True)
    return ResourceClaim(
        api_version=V1,
        kind="ResourceClaim",
        metadata=ObjectMeta(name=name, generate_name=extended_claim_base(pod.metadata.name or ""),
                            namespace=pod.metadata.namespace or "default", uid=uid,
                            creation_timestamp=created,
                            annotations={EXTENDED_CLAIM_ANNOTATION: "true"},
                            owner_references=[owner]),
        spec=spec,
    )


def find_extended_claim(cluster: ClusterState, pod: Pod) -> ResourceClaim | None:
    """The special claim recorded for ``pod`` in its status, if it still exists and
    is the pod's (annotated, controlled by it).

    Upstream searches every claim for the annotation and owner because its
    status write may lag behind; here both happen in the same binding cycle, so
    the status is authoritative and the lookup stays O(1).
    """
    status = pod.status.extended_resource_claim_status
    if status is None or not status.resource_claim_name:
        return None
    claim = cluster.claims.get(object_key(pod.metadata.namespace, status.resource_claim_name))
    if claim is None or claim.metadata.annotations.get(EXTENDED_CLAIM_ANNOTATION) != "true":
        return None
    uid = pod.metadata.uid
    if not any(ref.controller and ref.uid == uid for ref in claim.metadata.owner_references):
        return None
    return claim

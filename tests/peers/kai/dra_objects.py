"""The DRA objects of a KAI table case (``TestDRAObjects``) as dralab's own API objects.

What upstream's builders make of them (pkg/scheduler/test_utils at 72de64fc:
test_utils_builder.go getDeviceClasses / getResourceSlices / getResourceClaims,
dra_fake/dra.go, tasks_fake.go), and so what this module makes:

* a DeviceClass per name, with an empty spec (it selects every device);
* a ResourceSlice per ``TestResourceSlice``: driver ``nvidia.com/gpu`` whatever the
  slice's DeviceClassName (so every slice's devices count as DRA GPUs of its node),
  pool named after the node, ``Count`` devices named ``0``, ``1``, ... each with a
  ``gpu`` capacity of 1;
* a ResourceClaim per ``TestResourceClaim``: one request ``request`` of the class,
  ExactCount ``Count``, the labels given, and the status given (allocation results,
  reservedFor); ``dra_fake.RandomReservedForReferences(n)`` is n pod references
  (upstream draws random UIDs; only their number is read).

One deliberate difference: upstream writes every slice's ``resourceSliceCount`` as the
number of slices in the *whole table*, so with two nodes each node's one-slice pool
announces two slices. KAI builds with the Kubernetes 1.34 allocator, which still takes
ExactCount devices from such an incomplete pool (only ``All`` requests refuse it), and
the tables' expectations rely on that (e.g. allocate_dra_test.go "2 simple pods with
simple resource claims, allocating on separate nodes"). dralab's allocator follows the
newer rule (an incomplete pool offers no device), so here each pool announces the
slices it really has. The tables have no ``All`` request, the one place the 1.34
allocator reads the count.

Between integration rounds upstream's runner copies each claim's status as the
session's DRA manager left it back into the table; :func:`advance_claims` does that.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from dralab.api.base import ObjectMeta
from dralab.api.quantity import Quantity
from dralab.api.resource import (
    AllocationResult,
    Device,
    DeviceAllocationResult,
    DeviceCapacity,
    DeviceClaim,
    DeviceClass,
    DeviceRequest,
    DeviceRequestAllocationResult,
    ExactDeviceRequest,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimSpec,
    ResourceClaimStatus,
    ResourcePool,
    ResourceSlice,
    ResourceSliceSpec,
)

__all__ = ["advance_claims", "build_dra", "claim_key"]

SLICE_DRIVER = "nvidia.com/gpu"        # getResourceSlices: Driver
CLAIM_REQUEST = "request"              # getResourceClaims: the one request's name
RANDOM_REFERENCES = "dra_fake.RandomReservedForReferences"
STATUS_KEY = "$dralab_status"          # a status carried over from a previous round


def claim_key(namespace: str, name: str) -> str:
    return f"{namespace}/{name}"


def build_dra(objects: Mapping[str, Any] | None) -> tuple[
        dict[str, ResourceClaim], tuple[ResourceSlice, ...], dict[str, DeviceClass]]:
    """(claims by "namespace/name", slices, classes by name) of ``TestDRAObjects``."""
    if not objects:
        return {}, (), {}
    classes = {name: DeviceClass(metadata=ObjectMeta(name=name))
               for name in objects.get("DeviceClasses") or []}
    slices_in = list(objects.get("ResourceSlices") or [])
    per_pool = Counter(s.get("NodeName", "") for s in slices_in)
    slices = tuple(_slice(s, per_pool[s.get("NodeName", "")]) for s in slices_in)
    claims: dict[str, ResourceClaim] = {}
    for c in objects.get("ResourceClaims") or []:
        claim = _claim(c)
        claims[claim_key(claim.namespace, claim.name)] = claim
    return claims, slices, classes


def _slice(s: Mapping[str, Any], count: int) -> ResourceSlice:
    node = s.get("NodeName", "")
    devices = [Device(name=str(i), capacity={"gpu": DeviceCapacity(value=Quantity(1))})
               for i in range(int(s.get("Count", 0)))]
    return ResourceSlice(
        metadata=ObjectMeta(name=s["Name"]),
        spec=ResourceSliceSpec(driver=SLICE_DRIVER,
                               pool=ResourcePool(name=node, resource_slice_count=count),
                               node_name=node or None,
                               all_nodes=bool(s.get("AllNodes")) or None,
                               devices=devices))


def _claim(c: Mapping[str, Any]) -> ResourceClaim:
    status = c.get(STATUS_KEY)
    if not isinstance(status, ResourceClaimStatus):
        status = _status(c.get("ClaimStatus"))
    count = c.get("Count")
    return ResourceClaim(
        metadata=ObjectMeta(name=c["Name"], namespace=c.get("Namespace", ""),
                            labels=dict(c.get("Labels") or {})),
        spec=ResourceClaimSpec(devices=DeviceClaim(requests=[DeviceRequest(
            name=CLAIM_REQUEST, exactly=ExactDeviceRequest(
                device_class_name=c.get("DeviceClassName", ""),
                allocation_mode="ExactCount",
                count=int(count) if count else None))])),
        status=status)


def _status(value: Any) -> ResourceClaimStatus:
    if not isinstance(value, Mapping):
        return ResourceClaimStatus()
    allocation = None
    alloc = value.get("Allocation")
    if isinstance(alloc, Mapping):
        results = [DeviceRequestAllocationResult(
            request=r.get("Request", ""), driver=r.get("Driver", ""), pool=r.get("Pool", ""),
            device=r.get("Device", ""))
            for r in ((alloc.get("Devices") or {}).get("Results") or [])]
        allocation = AllocationResult(devices=DeviceAllocationResult(results=results))
    reserved_in = value.get("ReservedFor")
    reserved: list[ResourceClaimConsumerReference] = []
    if isinstance(reserved_in, Mapping) and reserved_in.get("$call") == RANDOM_REFERENCES:
        reserved = [ResourceClaimConsumerReference(resource="pods", name=f"pod-{i}",
                                                   uid=f"random-{i}")
                    for i in range(int(reserved_in["args"][0]))]
    elif isinstance(reserved_in, list):
        reserved = [ResourceClaimConsumerReference(
            resource=r.get("Resource", ""), name=r.get("Name", ""), uid=r.get("UID", ""),
            api_group=r.get("APIGroup") or None) for r in reserved_in]
    return ResourceClaimStatus(allocation=allocation, reserved_for=reserved)


def advance_claims(topology: dict[str, Any], claims: Mapping[str, ResourceClaim] | None) -> None:
    """runSchedulerOneRound's last step: each table claim takes the status the session
    left it with."""
    objects = topology.get("TestDRAObjects")
    if not objects or not claims:
        return
    for c in objects.get("ResourceClaims") or []:
        found = claims.get(claim_key(c.get("Namespace", ""), c["Name"]))
        if found is not None:
            c[STATUS_KEY] = found.status

"""KAI Scheduler's pkg/common/resources DRA tests, ported case by case (28 cases).

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092,
pkg/common/resources/dra_test.go (TestUpsertReservedFor 3, TestRemoveReservedFor 4,
TestGetResourceClaimName 4; t.Run tables) and dra_gpu_test.go (TestDRA, Describe("DRA
GPU Extraction"): countGPUDevicesFromClaim 8, ExtractDRAGPUResources 9). One test per
upstream case, id "<function or Describe> / <case name or It>"; inputs are upstream's,
rebuilt as dralab objects, expectations upstream's.

These decide which pods hold a claim (its consumers, which free it when none is left
and cap it at 256), which claim a pod's entry means, and how many GPUs a pod's claims
are (``dra.upsert_reserved_for``, ``remove_reserved_for``, ``resource_claim_name``,
``claim_gpu_count``, ``extract_dra_gpus``). ``nvidia.com/gpu`` is KAI's
constants.NvidiaGpuResource.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import pytest

from dralab.api.base import ObjectMeta
from dralab.api.core import Pod, PodResourceClaim, PodResourceClaimStatus, PodSpec, PodStatus
from dralab.api.resource import (
    DeviceClaim,
    DeviceRequest,
    ExactDeviceRequest,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimSpec,
)
from dralab.queueing.kai import dra

GPU = "nvidia.com/gpu"   # constants.NvidiaGpuResource
OTHER = "other-device-class"


def ref(name: str, uid: str) -> ResourceClaimConsumerReference:
    return ResourceClaimConsumerReference(api_group="", resource="pods", name=name, uid=uid)


def refs_match(got: list[ResourceClaimConsumerReference],
               want: list[ResourceClaimConsumerReference]) -> None:
    """assert.ElementsMatch (an unset API group is the core group, "")."""
    def key(r: ResourceClaimConsumerReference) -> tuple[str, str, str, str]:
        return (r.api_group or "", r.resource, r.name, r.uid)
    assert Counter(map(key, got)) == Counter(map(key, want))


def exact(cls: str, mode: str | None, count: int | None = None) -> DeviceRequest:
    return DeviceRequest(exactly=ExactDeviceRequest(device_class_name=cls,
                                                    allocation_mode=mode, count=count))


def claim(*requests: DeviceRequest, name: str = "", namespace: str = "default") -> ResourceClaim:
    return ResourceClaim(metadata=ObjectMeta(name=name or None, namespace=namespace),
                         spec=ResourceClaimSpec(devices=DeviceClaim(requests=list(requests))))


def pod(*entries: PodResourceClaim, statuses: tuple[PodResourceClaimStatus, ...] = (),
        name: str = "test-pod", namespace: str = "default") -> Pod:
    return Pod(metadata=ObjectMeta(name=name, namespace=namespace),
               spec=PodSpec(resource_claims=list(entries)),
               status=PodStatus(resource_claim_statuses=list(statuses)))


def by_name(name: str, claim_name: str) -> PodResourceClaim:
    return PodResourceClaim(name=name, resource_claim_name=claim_name)


def by_template(name: str, template: str) -> PodResourceClaim:
    return PodResourceClaim(name=name, resource_claim_template_name=template)


def store(*claims: ResourceClaim) -> dict[str, ResourceClaim]:
    return {dra.claim_key(c.namespace, c.name): c for c in claims}


# --- dra_test.go -----------------------------------------------------------------------------

def upsert(existing: list[ResourceClaimConsumerReference],
           want: list[ResourceClaimConsumerReference]) -> Callable[[], None]:
    return lambda: refs_match(dra.upsert_reserved_for(existing, "pod1", "uid1"), want)


def remove(existing: list[ResourceClaimConsumerReference],
           want: list[ResourceClaimConsumerReference]) -> Callable[[], None]:
    return lambda: refs_match(dra.remove_reserved_for(existing, "pod1", "uid1"), want)


def claim_name(p: Pod, entry: PodResourceClaim, want: str | None) -> Callable[[], None]:
    def check() -> None:
        if want is None:
            with pytest.raises(dra.DraError):
                dra.resource_claim_name(p, entry)
        else:
            assert dra.resource_claim_name(p, entry) == want
    return check


_OTHER_STATUS = (PodResourceClaimStatus(name="another-claim",
                                        resource_claim_name="claimFromTemplate"),)

# --- dra_gpu_test.go -------------------------------------------------------------------------


def count(c: ResourceClaim, want: int) -> Callable[[], None]:
    return lambda: _eq(dra.claim_gpu_count(c), want)


def _eq(got: object, want: object) -> None:
    assert got == want


def extract(p: Pod, claims: dict[str, ResourceClaim], want: dict[str, int] | None
            ) -> Callable[[], None]:
    def check() -> None:
        if want is None:
            with pytest.raises(dra.DraError):
                dra.extract_dra_gpus(p, claims)
        else:
            assert dra.extract_dra_gpus(p, claims) == want
    return check


CASES: list[tuple[str, str, Callable[[], None]]] = [
    ("TestUpsertReservedFor", "empty claim", upsert([], [ref("pod1", "uid1")])),
    ("TestUpsertReservedFor", "claim with existing reference",
     upsert([ref("pod2", "uid2")], [ref("pod1", "uid1"), ref("pod2", "uid2")])),
    ("TestUpsertReservedFor", "claim with existing identical reference",
     upsert([ref("pod1", "uid1")], [ref("pod1", "uid1")])),
    ("TestRemoveReservedFor", "empty claim", remove([], [])),
    ("TestRemoveReservedFor", "claim with existing reference",
     remove([ref("pod2", "uid2")], [ref("pod2", "uid2")])),
    ("TestRemoveReservedFor", "claim with existing identical reference",
     remove([ref("pod1", "uid1")], [])),
    ("TestRemoveReservedFor", "claim with existing identical reference (#3)",
     remove([ref("pod1", "uid1"), ref("pod2", "uid2")], [ref("pod2", "uid2")])),
    ("TestGetResourceClaimName", "simple resource claim",
     claim_name(Pod(), by_name("claim1", "claim1"), "claim1")),
    ("TestGetResourceClaimName", "simple resource template claim",
     claim_name(pod(statuses=(PodResourceClaimStatus(
         name="claim1", resource_claim_name="claimFromTemplate"),)),
         by_template("claim1", "claim1"), "claimFromTemplate")),
    ("TestGetResourceClaimName", "missing resource template claim",
     claim_name(pod(statuses=_OTHER_STATUS), by_template("claim1", "claim1"), None)),
    ("TestGetResourceClaimName", "missing everything",
     claim_name(pod(statuses=_OTHER_STATUS), PodResourceClaim(name="claim1"), None)),
    ("countGPUDevicesFromClaim", "should count devices with ExactCount mode and explicit count",
     count(claim(exact(GPU, "ExactCount", 2)), 2)),
    ("countGPUDevicesFromClaim", "should default to 1 when ExactCount mode has no count "
     "specified", count(claim(exact(GPU, "ExactCount", 0)), 1)),
    ("countGPUDevicesFromClaim", "should count devices with AllocationModeAll",
     count(claim(exact(GPU, "All")), 1)),
    ("countGPUDevicesFromClaim", "should sum multiple GPU device requests",
     count(claim(exact(GPU, "ExactCount", 2), exact(GPU, "ExactCount", 3)), 5)),
    ("countGPUDevicesFromClaim", "should ignore non-GPU device requests",
     count(claim(exact(OTHER, "ExactCount", 5), exact(GPU, "ExactCount", 2)), 2)),
    ("countGPUDevicesFromClaim", "should return 0 for empty claim", count(claim(), 0)),
    ("countGPUDevicesFromClaim", "should return 0 for claim with no Exactly field",
     count(claim(DeviceRequest()), 0)),
    ("countGPUDevicesFromClaim", "should skip unknown allocation modes",
     count(claim(exact(GPU, "UnknownMode", 5)), 0)),
    ("ExtractDRAGPUResources", "should return empty ResourceList", extract(pod(), {}, {})),
    ("ExtractDRAGPUResources", "should extract GPU resources from a single claim",
     extract(pod(by_name("gpu-claim", "gpu-claim-1")),
             store(claim(exact(GPU, "ExactCount", 2), name="gpu-claim-1")), {GPU: 2})),
    ("ExtractDRAGPUResources", "should aggregate GPU resources from multiple claims",
     extract(pod(by_name("gpu-claim-1", "gpu-claim-1"), by_name("gpu-claim-2", "gpu-claim-2")),
             store(claim(exact(GPU, "ExactCount", 2), name="gpu-claim-1"),
                   claim(exact(GPU, "ExactCount", 3), name="gpu-claim-2")), {GPU: 5})),
    ("ExtractDRAGPUResources", "should handle ResourceClaimTemplate references",
     extract(pod(by_template("gpu-claim", "gpu-template"), statuses=(PodResourceClaimStatus(
         name="gpu-claim", resource_claim_name="gpu-claim-from-template"),)),
         store(claim(exact(GPU, "ExactCount", 1), name="gpu-claim-from-template")), {GPU: 1})),
    ("ExtractDRAGPUResources", "should return error when claim doesn't exist",
     extract(pod(by_name("missing-claim", "non-existent-claim")), {}, None)),
    ("ExtractDRAGPUResources", "should return error when claim name cannot be determined",
     extract(pod(by_template("gpu-claim", "gpu-template")), {}, None)),
    ("ExtractDRAGPUResources", "should ignore non-GPU device claims",
     extract(pod(by_name("non-gpu-claim", "non-gpu-claim")),
             store(claim(exact(OTHER, "ExactCount", 5), name="non-gpu-claim")), {})),
    ("ExtractDRAGPUResources", "should extract GPU resources and ignore non-GPU resources",
     extract(pod(by_name("gpu-claim", "gpu-claim"), by_name("non-gpu-claim", "non-gpu-claim")),
             store(claim(exact(GPU, "ExactCount", 2), name="gpu-claim"),
                   claim(exact(OTHER, "ExactCount", 10), name="non-gpu-claim")), {GPU: 2})),
    ("ExtractDRAGPUResources", "should handle ExactCount and All modes together",
     extract(pod(by_name("exact-count-claim", "exact-count-claim"),
                 by_name("all-mode-claim", "all-mode-claim")),
             store(claim(exact(GPU, "ExactCount", 2), name="exact-count-claim"),
                   claim(exact(GPU, "All"), name="all-mode-claim")), {GPU: 3})),
]


@pytest.mark.parametrize("check", [pytest.param(c[2], id=f"{c[0]} / {c[1]}") for c in CASES])
def test_case(check: Callable[[], None]) -> None:
    check()

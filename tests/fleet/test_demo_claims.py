"""The NVIDIA driver's demo claims (notes §7, gpu-test1..8) against generated fleets."""

from __future__ import annotations

from functools import cache

from msgspec.structs import replace

from dralab.allocator import Allocated, AllocationError, Unschedulable, allocate
from dralab.api.base import KubeObject
from dralab.api.resource import (
    DeviceClaimConfiguration,
    OpaqueDeviceConfiguration,
    ResourceClaim,
)
from dralab.fleet import default_fleet, generate, parse_mig_device_name

from .helpers import NV, claim, devices_of, fleet_of, mig_claim, request


@cache
def cluster() -> tuple[KubeObject, ...]:
    return tuple(generate(default_fleet()).objects())


def run(claims: list[ResourceClaim], node: str,
        objects: tuple[KubeObject, ...] | None = None, *allocated: ResourceClaim) -> Allocated:
    outcome = allocate(claims, node, [*(objects or cluster()), *allocated])
    assert isinstance(outcome, Allocated), outcome
    return outcome


def gpu_claim(name: str, *cel: str, count: int | None = None) -> ResourceClaim:
    return claim(name, request("gpu", "gpu.nvidia.com", *cel, count=count))


def test_gpu_test1_two_pods_get_distinct_gpus() -> None:
    first = run([gpu_claim("pod0-gpu")], "h100-node-01")
    second = run([gpu_claim("pod1-gpu")], "h100-node-01", None, *first.claims)
    assert devices_of(first) == ["gpu-0"] and devices_of(second) == ["gpu-1"]


def test_gpu_test2_and_3_one_claim_is_one_gpu() -> None:
    # Two containers (test2) or two pods (test3) share one claim: one allocation, one GPU.
    assert devices_of(run([gpu_claim("shared")], "h100-node-01")) == ["gpu-0"]


def test_gpu_test4_four_mig_requests_on_one_gpu() -> None:
    allocated: list[ResourceClaim] = []
    gpus = set()
    for replica in range(4):
        outcome = run([mig_claim(f"mig-{replica}", ["1g.5gb", "1g.5gb", "2g.10gb", "3g.20gb"])],
                      "a100-mig-node-01", None, *allocated)
        allocated += outcome.claims
        parsed = [parse_mig_device_name(d) for d in devices_of(outcome)]
        assert all(p is not None for p in parsed)
        minors = {p[0] for p in parsed if p is not None}
        assert len(minors) == 1
        gpus |= minors
        # 1g.5gb at 0 and 1, 2g.10gb at 2, 3g.20gb at 4: the whole GPU's memory.
        assert sorted((p[2], p[3]) for p in parsed if p is not None) == [
            (9, 4), (14, 2), (19, 0), (19, 1)]
    assert len(gpus) == 4


def test_gpu_test5_two_requests_two_gpus_with_config() -> None:
    ts = {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig",
          "sharing": {"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Long"}}}
    mps = {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig",
           "sharing": {"strategy": "MPS", "mpsConfig": {
               "defaultActiveThreadPercentage": 50, "defaultPinnedDeviceMemoryLimit": "10Gi"}}}
    c = claim("multiple-gpus", request("ts-gpu"), request("mps-gpu"))
    devices = replace(c.spec.devices, config=[
        DeviceClaimConfiguration(requests=["ts-gpu"],
                                 opaque=OpaqueDeviceConfiguration(driver=NV, parameters=ts)),
        DeviceClaimConfiguration(requests=["mps-gpu"],
                                 opaque=OpaqueDeviceConfiguration(driver=NV, parameters=mps)),
    ])
    c = replace(c, spec=replace(c.spec, devices=devices))
    outcome = run([c], "h100-node-01")
    assert devices_of(outcome) == ["gpu-0", "gpu-1"]
    allocation = outcome.claims[0].status.allocation
    assert allocation is not None
    assert [cfg.requests for cfg in allocation.devices.config] == [["ts-gpu"], ["mps-gpu"]]


A100_SELECTOR = f"device.attributes['{NV}'].productName.lowerAscii().matches('^.*a100.*$')"


def test_gpu_test6_product_selector_and_stale_index() -> None:
    objects = tuple(generate(fleet_of("a100-40gb", gpus=8)).objects())
    allocated: list[ResourceClaim] = []
    for replica in range(4):
        outcome = run([gpu_claim(f"a100-{replica}", A100_SELECTOR)], "p-01", objects, *allocated)
        allocated += outcome.claims
    assert [d for c in allocated for d in devices_of(Allocated(claims=(c,)))] == [
        "gpu-0", "gpu-1", "gpu-2", "gpu-3"]
    # The demo also selects on `index`, which current releases no longer publish.
    stale = gpu_claim("stale", A100_SELECTOR, f"device.attributes['{NV}'].index in [0, 2, 4, 6]")
    outcome = allocate([stale], "p-01", objects)
    assert isinstance(outcome, AllocationError) and "index" in outcome.message
    # On the default fleet's A100 nodes MIG mode is on: no full GPU is published.
    assert isinstance(allocate([gpu_claim("a100", A100_SELECTOR)], "a100-mig-node-01",
                               cluster()), Unschedulable)


def test_gpu_test7_two_claims_one_pod() -> None:
    outcome = run([gpu_claim("c0"), gpu_claim("c1")], "h100-node-01")
    assert devices_of(outcome) == ["gpu-0", "gpu-1"]


def test_gpu_test8_count_two() -> None:
    assert devices_of(run([gpu_claim("pair", count=2)], "h100-node-01")) == ["gpu-0", "gpu-1"]


def test_product_name_selectors_pick_the_right_nodes() -> None:
    h100 = gpu_claim("h100", f"device.attributes['{NV}'].productName == 'NVIDIA H100 80GB HBM3'")
    assert devices_of(run([h100], "h100-node-02")) == ["gpu-0"]
    assert isinstance(allocate([h100], "l4-node-01", cluster()), Unschedulable)
    assert devices_of(run([claim("t", request("gpu", "training-h100", count=8))],
                          "h100-node-01")) == [f"gpu-{i}" for i in range(8)]
    assert isinstance(allocate([claim("t", request("gpu", "training-h100"))], "l4-node-01",
                               cluster()), Unschedulable)
    assert devices_of(run([claim("i", request("gpu", "inference-l4"))], "l4-node-03")) == ["gpu-0"]
    mig = run([claim("m", request("mig", "mig-1g"))], "a100-mig-node-02")
    parsed = parse_mig_device_name(devices_of(mig)[0])
    assert parsed is not None and parsed[1].startswith("1g")


def test_gpu_and_nic_under_one_pcie_root() -> None:
    c = claim("rdma", request("gpu"), request("nic", "sriovnetwork.k8snetworkplumbingwg.io"),
              match=["resource.kubernetes.io/pcieRoot"])
    outcome = run([c], "h100-node-01")
    assert devices_of(outcome) == ["gpu-0", "0000-18-00-1"]
    allocated = list(outcome.claims)
    second = run([claim("rdma2", request("gpu"),
                        request("nic", "sriovnetwork.k8snetworkplumbingwg.io"),
                        match=["resource.kubernetes.io/pcieRoot"])],
                 "h100-node-01", None, *allocated)
    assert devices_of(second) == ["gpu-1", "0000-40-00-1"]

"""What the generated slices publish, device by device, for each documented driver setting.

Expected values are read off the drivers' code and tests (commits in
tests/data/upstream/README.md):

* dra-example-driver ``internal/profiles/gpu/gpu.go`` (``EnumerateDevices``,
  ``memoryCapacity``, ``computeCapacity``) and ``test/e2e`` (``verifyResourceSlice
  AllowMultipleAllocations``: min, step and max set on memory and compute);
* dra-driver-nvidia-gpu ``tests/bats/test_gpu_basic.bats``, ``test_gpu_dynmig.bats`` and
  ``test_gpu_mig.bats`` (``assert_attrs_equal`` with exact reference lists),
  ``test_gpu_mig.bats`` "StaticMIG: mutual exclusivity with physical GPU", and
  ``demo/specs/consumable-shares/README.md`` for the request policies.
"""

from __future__ import annotations

from typing import Any

import pytest

from dralab.api.codec import encode
from dralab.api.resource import DeviceClass, ResourceSlice
from dralab.fleet import generate, parse_fleet
from dralab.validation.check import validate_objects


def fleet(pool: dict[str, Any], **spec: Any) -> list[Any]:
    data = {"apiVersion": "dralab.dev/v1alpha1", "kind": "Fleet", "spec": {
        **spec, "pools": [{"name": "worker", "nodeNames": ["worker"], **pool}]}}
    objects = generate(parse_fleet(data, "<test>")).objects()
    assert [str(p) for p in validate_objects(objects)] == []
    return objects


def slices(objects: list[Any], driver: str) -> list[dict[str, Any]]:
    return [encode(o)["spec"] for o in objects
            if isinstance(o, ResourceSlice) and o.spec.driver == driver]


def devices(objects: list[Any], driver: str) -> list[dict[str, Any]]:
    return [d for s in slices(objects, driver) for d in s.get("devices", [])]


def without_uuid(device: dict[str, Any]) -> dict[str, Any]:
    attrs = {k: v for k, v in device["attributes"].items() if k not in ("uuid", "parentUUID")}
    return {**device, "attributes": attrs}


def example(**gpu: Any) -> list[Any]:
    return fleet({"driver": "example", "gpu": {"count": 8, **gpu}})


# --- dra-example-driver --------------------------------------------------------------

EX = "gpu.example.com"
BASE_ATTRS = {"driverVersion": {"version": "1.0.0"}, "model": {"string": "LATEST-GPU-MODEL"}}


def test_example_default_devices() -> None:
    objects = example()
    (spec,) = slices(objects, EX)
    assert spec["pool"] == {"name": "worker", "generation": 1, "resourceSliceCount": 1}
    got = [without_uuid(d) for d in spec["devices"]]
    assert got == [{
        "name": f"gpu-{i}",
        "attributes": {**BASE_ATTRS, "index": {"int": i}},
        "capacity": {"compute": {"value": "100"}, "memory": {"value": "80Gi"}},
        # The driver sets the pointer to false; kept from 1.36 (DRAConsumableCapacity beta).
        "allowMultipleAllocations": False,
    } for i in range(8)]
    uuids = [d["attributes"]["uuid"]["string"] for d in spec["devices"]]
    assert all(u.startswith("gpu-") for u in uuids) and len(set(uuids)) == 8


def test_example_num_devices_defaults_to_the_chart_value() -> None:
    # values.yaml: kubeletPlugin.numDevices: 8.
    names = [d["name"] for d in devices(fleet({"driver": "example"}), EX)]
    assert names == [f"gpu-{i}" for i in range(8)]
    assert devices(fleet({"driver": "example", "gpu": {"count": 2}}), EX)[-1]["name"] == "gpu-1"


def test_example_false_flag_dropped_before_1_36() -> None:
    data = {"apiVersion": "dralab.dev/v1alpha1", "kind": "Fleet", "spec": {
        "kubernetesVersion": "1.35",
        "pools": [{"name": "w", "count": 1, "driver": "example", "gpu": {"count": 1}}]}}
    (dev,) = devices(generate(parse_fleet(data)).objects(), EX)
    assert "allowMultipleAllocations" not in dev


def partition(i: int, j: int, memory: str, compute: str, **extra: Any) -> dict[str, Any]:
    return {
        "name": f"gpu-{i}-partition-{j}",
        "attributes": {**BASE_ATTRS, "index": {"int": i}, "partition": {"int": j},
                       "partitionable": {"bool": True}},
        "capacity": {"compute": {"value": compute}, "memory": {"value": memory}},
        "consumesCounters": [{"counterSet": f"gpu-{i}-counters", "counters": {
            "compute": {"value": compute}, "memory": {"value": memory}}}],
        **extra,
    }


def full(i: int, **extra: Any) -> dict[str, Any]:
    return {
        "name": f"gpu-{i}-full",
        "attributes": {**BASE_ATTRS, "index": {"int": i}, "full": {"bool": True},
                       "partitionable": {"bool": True}},
        "capacity": {"compute": {"value": "100"}, "memory": {"value": "80Gi"}},
        "consumesCounters": [{"counterSet": f"gpu-{i}-counters", "counters": {
            "compute": {"value": "100"}, "memory": {"value": "80Gi"}}}],
        **extra,
    }


def test_example_partitions_before_full_devices() -> None:
    # gpuPartitions=4, numDevices=2 (the partitionable-devices demo's install).
    counters, devs = slices(example(count=2, partitions=4), EX)
    assert "devices" not in counters and counters["pool"]["resourceSliceCount"] == 2
    assert counters["sharedCounters"] == [
        {"name": f"gpu-{i}-counters", "counters": {"compute": {"value": "100"},
                                                   "memory": {"value": "80Gi"}}}
        for i in range(2)]
    off = {"allowMultipleAllocations": False}
    assert [without_uuid(d) for d in devs["devices"]] == [
        *(partition(0, j, "20Gi", "25", **off) for j in range(4)), full(0, **off),
        *(partition(1, j, "20Gi", "25", **off) for j in range(4)), full(1, **off)]


def test_example_partition_sizes_are_integer_divisions() -> None:
    # 80Gi / 3 bytes as a BinarySI quantity (not a whole Mi), 100 / 3 = 33.
    (dev,) = [d for d in devices(example(count=1, partitions=3), EX)
              if d["name"] == "gpu-0-partition-0"]
    assert dev["capacity"] == {"compute": {"value": "33"},
                               "memory": {"value": str(80 * 2**30 // 3)}}


def policy(value: str, low: str) -> dict[str, Any]:
    return {"value": value, "requestPolicy": {
        "default": value, "validRange": {"min": low, "max": value, "step": low}}}


def test_example_multiple_allocations_default_is_the_whole_device() -> None:
    devs = devices(example(multipleAllocations=True), EX)
    assert all(d["allowMultipleAllocations"] is True for d in devs)
    assert devs[0]["capacity"] == {"compute": policy("100", "1"), "memory": policy("80Gi", "1Gi")}


def test_example_multiple_allocations_with_partitions() -> None:
    # Supported and documented (gpu-allow-multiple-allocations-partitionable demo).
    _, devs = slices(example(count=1, partitions=4, multipleAllocations=True), EX)
    on = {"allowMultipleAllocations": True}
    got = [without_uuid(d) for d in devs["devices"]]
    want = [*(partition(0, j, "20Gi", "25", **on) for j in range(4)), full(0, **on)]
    for w in want[:4]:
        w["capacity"] = {"compute": policy("25", "1"), "memory": policy("20Gi", "1Gi")}
    want[4]["capacity"] = {"compute": policy("100", "1"), "memory": policy("80Gi", "1Gi")}
    assert got == want


def test_example_binding_conditions() -> None:
    for dev in devices(example(bindingConditions=True, partitions=2), EX):
        assert dev["bindingConditions"] == ["BindingConditions"]
        assert dev["bindingFailureConditions"] == ["BindingFailureConditions"]


def test_example_device_class_extended_resource_name() -> None:
    objects = fleet({"driver": "example", "gpu": {"count": 1}},
                    example={"extendedResourceName": "example.com/gpu"})
    (cls,) = [o for o in objects if isinstance(o, DeviceClass)]
    assert encode(cls)["spec"] == {
        "selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}],
        "extendedResourceName": "example.com/gpu"}


# --- NVIDIA --------------------------------------------------------------------------

NV = "gpu.nvidia.com"
# tests/bats/test_gpu_basic.bats and test_gpu_dynmig.bats "(gpu)" reference lists.
BATS_GPU = {"architecture", "brand", "cudaComputeCapability", "cudaDriverVersion",
            "driverVersion", "productName", "resource.kubernetes.io/pciBusID",
            "resource.kubernetes.io/pcieRoot", "type", "uuid", "addressingMode"}
# test_gpu_dynmig.bats "(mig)".
BATS_DYNAMIC_MIG = {"architecture", "brand", "cudaComputeCapability", "cudaDriverVersion",
                    "driverVersion", "productName", "resource.kubernetes.io/pciBusID",
                    "resource.kubernetes.io/pcieRoot", "type", "addressingMode",
                    "parentUUID", "profile"}
# test_gpu_mig.bats "StaticMIG: inspect device attributes in resource slice (mig)".
BATS_STATIC_MIG = BATS_DYNAMIC_MIG | {"uuid"}


def nvidia(model: str = "h100", count: int = 8, spec: dict[str, Any] | None = None,
           **gpu: Any) -> list[Any]:
    return fleet({"gpu": {"model": model, "count": count, **gpu}}, **(spec or {}))


def attr_sets(objects: list[Any], kind: str) -> list[set[str]]:
    return [set(d["attributes"]) for d in devices(objects, NV)
            if d["attributes"]["type"]["string"] == kind]


@pytest.mark.parametrize("model", ["h100", "a100-40gb", "gb200", "l4"])
def test_nvidia_gpu_attributes_are_the_bats_list(model: str) -> None:
    sets = attr_sets(nvidia(model), "gpu")
    assert sets and all(s == BATS_GPU for s in sets)


def test_nvidia_dynamic_mig_attributes_are_the_bats_lists() -> None:
    objects = nvidia(mig={"mode": "dynamic"})
    assert all(s == BATS_GPU for s in attr_sets(objects, "gpu"))
    migs = attr_sets(objects, "mig")
    assert migs and all(s == BATS_DYNAMIC_MIG for s in migs)


def test_nvidia_static_mig_attributes_are_the_bats_list() -> None:
    migs = attr_sets(nvidia(mig={"mode": "static", "profiles": ["1g.10gb"]}), "mig")
    assert len(migs) == 8 and all(s == BATS_STATIC_MIG for s in migs)


def test_nvidia_numa_node_only_when_asked_and_known() -> None:
    # Main (unreleased) publishes it where sysfs gives a NUMA node: HGX hosts yes, VMs no.
    on = {"nvidia": {"numaNodeAttribute": True}}
    metal = attr_sets(nvidia(spec=on), "gpu")
    assert metal and all(s == BATS_GPU | {"resource.kubernetes.io/numaNode"} for s in metal)
    migs = attr_sets(nvidia(spec=on, mig={"mode": "dynamic"}), "mig")
    assert migs and all(s == BATS_DYNAMIC_MIG | {"resource.kubernetes.io/numaNode"}
                        for s in migs)


def test_nvidia_numa_node_absent_in_a_vm() -> None:
    data = {"apiVersion": "dralab.dev/v1alpha1", "kind": "Fleet", "spec": {
        "nvidia": {"numaNodeAttribute": True},
        "pools": [{"name": "vm", "count": 1, "platform": "vm",
                   "gpu": {"model": "l4", "count": 4}}]}}
    sets = attr_sets(generate(parse_fleet(data)).objects(), "gpu")
    assert sets and all(s == BATS_GPU for s in sets)


def test_nvidia_static_mig_replaces_its_gpu() -> None:
    # StaticMIG "mutual exclusivity with physical GPU": one 1g device on GPU 0 and the
    # number of announced devices stays the same, GPU 0 itself is not announced.
    before = [d["name"] for d in devices(nvidia(), NV)]
    after = [d["name"] for d in devices(
        nvidia(mig={"mode": "static", "perGpu": [["1g.10gb"]] + [[]] * 7}), NV)]
    assert len(before) == len(after) == 8
    assert "gpu-0" in before and "gpu-0" not in after
    assert "gpu-0-mig-1g10gb-19-0" in after


def test_nvidia_gpu_capacity_is_memory_only() -> None:
    (dev, *_) = devices(nvidia(), NV)
    assert dev["capacity"] == {"memory": {"value": "81559Mi"}}
    assert "allowMultipleAllocations" not in dev


SHARES = {
    # consumable-shares README: unlimited -> default 0, min 0, step 1Mi, max total.
    "unlimited": {"memory": {"value": "81559Mi", "requestPolicy": {
        "default": "0", "validRange": {"min": "0", "max": "81559Mi", "step": "1Mi"}}}},
    # memory -> default = total, min 1Mi, step 1Mi.
    "memory": {"memory": {"value": "81559Mi", "requestPolicy": {
        "default": "81559Mi", "validRange": {"min": "1Mi", "max": "81559Mi", "step": "1Mi"}}}},
    # N -> memory as unlimited, plus shares N with default 1, min 1, max N, step 1.
    "4": {"memory": {"value": "81559Mi", "requestPolicy": {
        "default": "0", "validRange": {"min": "0", "max": "81559Mi", "step": "1Mi"}}},
        "shares": {"value": "4", "requestPolicy": {
            "default": "1", "validRange": {"min": "1", "max": "4", "step": "1"}}}},
}


@pytest.mark.parametrize("mode", sorted(SHARES))
def test_nvidia_consumable_shares_policies(mode: str) -> None:
    value: Any = int(mode) if mode.isdigit() else mode
    devs = devices(nvidia(sharing={"consumableShares": value}), NV)
    assert all(d["allowMultipleAllocations"] is True for d in devs)
    assert devs[0]["capacity"] == SHARES[mode]

"""Generated objects: valid for every model and mode, shaped like the driver's, deterministic."""

from __future__ import annotations

from typing import Any

import pytest

from dralab.api.io import dumps, to_list
from dralab.api.resource import ResourceSlice
from dralab.fleet import CATALOG, generate, model_keys, parse_fleet
from dralab.validation.check import validate_objects

from .helpers import fleet_of

MIG_MODELS = [k for k in model_keys() if CATALOG[k].mig is not None]


def static_profiles(model: str) -> list[str]:
    geometry = CATALOG[model].mig
    assert geometry is not None
    small, _, _, two, three, _, _ = geometry.names
    return [three, two, small, small]


def modes(model: str) -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = [
        ("off", {}),
        ("off-shares-unlimited", {"gpu": {"sharing": {"consumableShares": "unlimited"}}}),
        ("off-shares-4", {"gpu": {"sharing": {"consumableShares": 4}}}),
        ("off-extended", {"gpu": {"extendedResources": True}}),
    ]
    if CATALOG[model].mig is not None:
        out += [
            ("dynamic", {"mig": "dynamic"}),
            ("dynamic-shares-memory", {"mig": "dynamic",
                                       "gpu": {"sharing": {"consumableShares": "memory"}}}),
            ("static", {"mig": "static",
                        "gpu": {"mig": {"mode": "static", "profiles": static_profiles(model)},
                                "extendedResources": True}}),
        ]
    return out


CASES = [(m, name, kw) for m in model_keys() for name, kw in modes(m)]


@pytest.mark.parametrize(("model", "mode", "kw"), CASES, ids=[f"{m}-{n}" for m, n, _ in CASES])
def test_every_model_and_mode_is_valid(model: str, mode: str, kw: dict[str, Any]) -> None:
    objects = generate(fleet_of(model, count=2, gpus=8, **kw)).objects()
    assert [str(p) for p in validate_objects(objects)] == []


@pytest.mark.parametrize("pool", [
    {"driver": "example", "gpus": 8},
    {"driver": "example", "gpus": 8, "gpu": {"partitions": 4}},
    {"driver": "example", "gpus": 8, "gpu": {"partitions": 7}},
    {"driver": "example", "gpus": 8, "gpu": {"multipleAllocations": True}},
    {"driver": "example", "gpus": 8, "gpu": {"multipleAllocations": True, "partitions": 4}},
    {"driver": "example", "gpus": 8, "gpu": {"bindingConditions": True, "partitions": 2}},
    {"driver": "example", "gpus": 16, "gpu": {"partitions": 8}},
    {"gpus": 16, "mig": "dynamic"},
    {"gpus": 8, "nics": {"count": 8, "driver": "sriov", "vfs": 4}},
    {"gpus": 8, "nics": {"count": 4, "driver": "dranet", "alignment": "numa"}},
    {"gpus": 8, "nics": {"count": 2, "alignment": "none", "linkType": "ethernet"}},
    {"gpus": 4, "platform": "vm", "nics": {"count": 2}},
    {"gpus": 4, "platform": "pcie", "nics": {"count": 4}},
    {"gpus": 8, "computeDomains": True},
], ids=lambda p: "-".join(f"{k}={v}" for k, v in p.items()))
def test_other_drivers_and_layouts_are_valid(pool: dict[str, Any]) -> None:
    model = None if pool.get("driver") == "example" else "h100"
    objects = generate(fleet_of(model, count=2, **pool)).objects()
    assert [str(p) for p in validate_objects(objects)] == []


def test_grace_node() -> None:
    objects = generate(fleet_of("gb200", gpus=4, computeDomains=True,
                                nics={"count": 4})).objects()
    assert [str(p) for p in validate_objects(objects)] == []


def gpu_slices(objects: list[Any]) -> list[ResourceSlice]:
    return [o for o in objects if isinstance(o, ResourceSlice)
            and o.spec.driver == "gpu.nvidia.com"]


def test_output_is_deterministic_and_seeded() -> None:
    fleet = fleet_of("a100-40gb", count=3, mig="dynamic", nics={"count": 8})
    a = dumps(to_list(generate(fleet).objects()))
    assert a == dumps(to_list(generate(fleet).objects()))
    b = dumps(to_list(generate(fleet, seed=7).objects()))
    assert a != b
    assert a.replace("uid", "") != b.replace("uid", "")


def test_dynamic_split_layout_and_counter_slices() -> None:
    fleet = fleet_of("h100", gpus=16, mig="dynamic")
    slices = gpu_slices(generate(fleet).objects())
    counters = [s for s in slices if s.spec.shared_counters]
    assert [len(s.spec.shared_counters) for s in counters] == [8, 8]
    assert all(not s.spec.devices for s in counters)
    assert len(slices) == 2 + 16
    assert {s.spec.pool.resource_slice_count for s in slices} == {18}
    assert slices[0] is counters[0] and slices[1] is counters[1]
    # One devices slice per GPU, devices sorted by name, the full GPU first.
    first = slices[2].spec.devices
    assert [d.name for d in first] == sorted(d.name for d in first)
    assert first[0].name == "gpu-0" and len(first) == 26
    assert all(len(s.spec.devices) <= 64 for s in slices)


def test_ampere_dynamic_mig_publishes_no_full_gpu() -> None:
    slices = gpu_slices(generate(fleet_of("a100-40gb", gpus=2, mig="dynamic")).objects())
    names = [d.name for s in slices for d in s.spec.devices]
    assert len(names) == 50 and "gpu-0" not in names
    # Counter names are the capacity names as DNS labels, plus 8 memory slices.
    counters = slices[0].spec.shared_counters[0].counters
    assert sorted(counters) == sorted(
        ["copy-engines", "decoders", "encoders", "jpeg-engines", "memory", "multiprocessors",
         "ofa-engines"] + [f"memory-slice-{i}" for i in range(8)])


def test_kubernetes_134_combined_layout() -> None:
    data = {"apiVersion": "dralab.dev/v1alpha1", "kind": "Fleet",
            "spec": {"kubernetesVersion": "1.34", "pools": [
                {"name": "p", "count": 1, "gpu": {"model": "h100", "count": 2,
                                                  "mig": {"mode": "dynamic"}}}]}}
    fleet = parse_fleet(data)
    slices = gpu_slices(generate(fleet).objects())
    assert len(slices) == 2
    assert all(len(s.spec.shared_counters) == 1 and len(s.spec.devices) == 26 for s in slices)


def test_static_mig_devices_replace_the_gpu() -> None:
    fleet = fleet_of("h100", gpus=2, mig="static",
                     gpu={"mig": {"mode": "static", "perGpu": [["3g.40gb", "4g.40gb"], []]},
                          "extendedResources": True})
    objects = generate(fleet).objects()
    (slice_,) = gpu_slices(objects)
    devices = {d.name: d for d in slice_.spec.devices}
    assert sorted(devices) == ["gpu-0-mig-3g40gb-9-4", "gpu-0-mig-4g40gb-5-0", "gpu-1"]
    mig = devices["gpu-0-mig-3g40gb-9-4"]
    assert mig.attributes["uuid"].string.startswith("MIG-")  # type: ignore[union-attr]
    assert sorted(k for k in mig.capacity if k.startswith("memorySlice")) == [
        "memorySlice4", "memorySlice5", "memorySlice6", "memorySlice7"]
    assert not mig.consumes_counters
    node = generate(fleet).nodes[0]
    capacity = {k: str(v) for k, v in node.status.capacity.items()}
    assert capacity["nvidia.com/gpu"] == "1"
    assert capacity["nvidia.com/mig-3g.40gb"] == "1"
    assert capacity["nvidia.com/mig-4g.40gb"] == "1"


def test_consumable_shares_policies() -> None:
    objects = generate(fleet_of("l4", gpus=1, gpu={"sharing": {"consumableShares": 3}})).objects()
    (device,) = gpu_slices(objects)[0].spec.devices
    assert device.allow_multiple_allocations is True
    memory = device.capacity["memory"]
    assert memory.request_policy is not None and memory.request_policy.valid_range is not None
    assert str(memory.request_policy.default) == "0"
    assert str(memory.request_policy.valid_range.max) == "23034Mi"
    assert str(memory.request_policy.valid_range.step) == "1Mi"
    shares = device.capacity["shares"]
    assert str(shares.value) == "3" and shares.request_policy is not None
    assert str(shares.request_policy.default) == "1"


def test_nic_alignment_shares_pcie_root() -> None:
    objects = generate(fleet_of("h100", gpus=8, nics={"count": 8, "vfs": 2})).objects()
    slices = [o for o in objects if isinstance(o, ResourceSlice)]
    gpus = [d for d in slices[0].spec.devices]
    nics = [d for d in slices[1].spec.devices]
    assert slices[1].spec.driver == "sriovnetwork.k8snetworkplumbingwg.io"
    assert len(nics) == 16
    root = "resource.kubernetes.io/pcieRoot"
    for i, gpu in enumerate(gpus):
        assert gpu.attributes[root] == nics[2 * i].attributes[root]
        assert gpu.attributes[root] == nics[2 * i + 1].attributes[root]
    assert len({g.attributes[root].string for g in gpus}) == 8


def test_topology_labels() -> None:
    fleet = fleet_of("l4", count=10, gpus=1,
                     topology={"zones": ["a", "b"], "nodesPerRack": 2, "racksPerBlock": 2})
    nodes = generate(fleet).nodes
    labels = [(n.metadata.labels["topology.kubernetes.io/zone"],
               n.metadata.labels["dralab.dev/topology-block"],
               n.metadata.labels["dralab.dev/topology-rack"]) for n in nodes]
    assert labels == [
        ("a", "p-block-01", "p-rack-01"), ("a", "p-block-01", "p-rack-01"),
        ("a", "p-block-01", "p-rack-02"), ("a", "p-block-01", "p-rack-02"),
        ("a", "p-block-02", "p-rack-03"),
        ("b", "p-block-03", "p-rack-04"), ("b", "p-block-03", "p-rack-04"),
        ("b", "p-block-03", "p-rack-05"), ("b", "p-block-03", "p-rack-05"),
        ("b", "p-block-04", "p-rack-06"),
    ]
    assert nodes[0].metadata.labels["kubernetes.io/hostname"] == "p-01"


def test_pool_extended_resources_on_every_node() -> None:
    # A device plugin's resources beside the NVIDIA plugin's nvidia.com/gpu.
    fleet = fleet_of("h100", count=2, gpus=2, gpu={"extendedResources": True},
                     extendedResources={"example.com/fpga": 3})
    for node in generate(fleet).nodes:
        for resources in (node.status.capacity, node.status.allocatable):
            have = {k: str(v) for k, v in resources.items()}
            assert have["example.com/fpga"] == "3" and have["nvidia.com/gpu"] == "2"

"""Stored objects with fields of a gate that is now off: upstream's allocator outcome.

An API server keeps a field written while its gate was on after the gate is
turned off. The scheduler then reads the object as stored and the allocator
decides: devices consuming counters (DRAPartitionableDevices off) or carrying
binding conditions (DRADeviceBindingConditions off) are never picked and
counter slices are ignored; a multi-allocatable device is an ordinary one
(DRAConsumableCapacity off), so a share held by another claim makes it taken;
taints are ignored without DRADeviceTaints. Each row runs the same objects with
the gate on and off, as the example driver publishes them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from dralab.allocator import Allocated, AllocatorFeatures, Unschedulable
from dralab.api.base import KubeObject
from dralab.api.features import FeatureGates
from dralab.api.resource import ResourceClaim

from .builders import (
    UNSCHEDULABLE,
    Scenario,
    capacity,
    claim,
    consumes,
    counter_set,
    dclass,
    device,
    in_use,
    node,
    policy_range,
    r,
    request,
    rslice,
    taint,
)
from .runner import check

DRIVER = "gpu.example.com"
NODE = "kind-worker"
GPU = dclass(DRIVER, DRIVER)


def attrs(index: int, **extra: Any) -> dict[str, Any]:
    """The example driver's GPU attributes."""
    return {"index": index, "uuid": f"gpu-{index}-uuid", "model": "LATEST-GPU-MODEL", **extra}


def partitions_pool() -> list[KubeObject]:
    """``gpuPartitions=2``, one GPU: a counters slice, then partitions and the full GPU."""
    counters = rslice("w-counters", NODE, NODE, DRIVER,
                      counters=[counter_set("gpu-0-counters", memory="80Gi", compute=100)],
                      count=2)
    devs = [device(f"gpu-0-partition-{j}", attrs=attrs(0, partition=j, partitionable=True),
                   cap={"memory": "40Gi", "compute": 50},
                   counters=[consumes("gpu-0-counters", memory="40Gi", compute=50)])
            for j in range(2)]
    devs.append(device("gpu-0-full", attrs=attrs(0, partitionable=True, full=True),
                       cap={"memory": "80Gi", "compute": 100},
                       counters=[consumes("gpu-0-counters", memory="80Gi", compute=100)]))
    return [GPU, counters, rslice("w-devices", NODE, NODE, DRIVER, *devs, count=2)]


def plain_pool(name: str = "plain", dev: str = "nic-0") -> KubeObject:
    """A second pool on the node without any gated field."""
    return rslice(name, NODE, name, DRIVER, device(dev, attrs={"index": 9}))


def binding_pool() -> list[KubeObject]:
    """``bindingConditions=true``, two GPUs."""
    devs = [device(f"gpu-{i}", attrs=attrs(i), cap={"memory": "80Gi", "compute": 100},
                   binding=["BindingConditions"], binding_failure=["BindingFailureConditions"])
            for i in range(2)]
    return [GPU, rslice("w-bc", NODE, NODE, DRIVER, *devs)]


def shared_gpu(gpus: int = 1) -> list[KubeObject]:
    """``gpuAllowMultipleAllocations=true``: default = max = the full value."""
    devs = [device(f"gpu-{i}", attrs=attrs(i), multi=True, cap={
        "memory": capacity("80Gi", policy_range("1Gi", "1Gi", "80Gi", default="80Gi")),
        "compute": capacity(100, policy_range(1, 1, 100, default=100))})
        for i in range(gpus)]
    share = in_use("first-share", (DRIVER, NODE, "gpu-0"),
                   share="5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b",
                   consumed={"memory": "10Gi", "compute": 10})
    return [GPU, rslice("w-multi", NODE, NODE, DRIVER, *devs), share]


def tainted_gpu() -> list[KubeObject]:
    dev = device("gpu-0", attrs=attrs(0), taints=[taint("maintenance", "true", "NoSchedule")])
    return [GPU, rslice("w-taint", NODE, NODE, DRIVER, dev)]


def one_gpu() -> ResourceClaim:
    return claim("one-gpu", request("gpu", DRIVER), namespace="default")


def small_share() -> ResourceClaim:
    return claim("small-share", request("gpu", DRIVER, capacity_requests={
        "memory": "10Gi", "compute": 10}), namespace="default")


@dataclass(frozen=True)
class Row:
    """One stored input under a gate on and off, with both expected outcomes."""

    name: str
    gate: str
    objects: list[KubeObject]
    claim: ResourceClaim
    gate_on: Any
    gate_off: Any
    # Upstream gives no reason; our explanation must name why the devices are unusable.
    explains: str = ""

    def __str__(self) -> str:
        return self.name


ROWS = [
    Row("partitions-unusable-without-partitionable-devices", "DRAPartitionableDevices",
        partitions_pool(), one_gpu(),
        [[r("gpu", NODE, "gpu-0-partition-0", DRIVER)]], UNSCHEDULABLE,
        "3 consume shared counters (DRAPartitionableDevices off)"),
    Row("other-pools-still-usable-without-partitionable-devices", "DRAPartitionableDevices",
        [*partitions_pool(), plain_pool()], one_gpu(),
        [[r("gpu", NODE, "gpu-0-partition-0", DRIVER)]],
        [[r("gpu", "plain", "nic-0", DRIVER)]]),
    Row("binding-condition-devices-unusable", "DRADeviceBindingConditions",
        binding_pool(), one_gpu(),
        [[r("gpu", NODE, "gpu-0", DRIVER)]], UNSCHEDULABLE,
        "2 have binding conditions (DRADeviceBindingConditions off)"),
    Row("binding-conditions-skip-to-a-plain-pool", "DRADeviceBindingConditions",
        [*binding_pool(), plain_pool("zz-plain")], one_gpu(),
        # With the gate on, pools with binding conditions come last.
        [[r("gpu", "zz-plain", "nic-0", DRIVER)]],
        [[r("gpu", "zz-plain", "nic-0", DRIVER)]]),
    Row("share-in-use-makes-the-device-taken", "DRAConsumableCapacity",
        shared_gpu(), one_gpu(),
        # On: the default (the whole GPU) no longer fits next to the 10Gi share.
        UNSCHEDULABLE, UNSCHEDULABLE, "1 in use"),
    Row("share-in-use-leaves-the-next-gpu", "DRAConsumableCapacity",
        shared_gpu(2), one_gpu(),
        [[r("gpu", NODE, "gpu-1", DRIVER)]], [[r("gpu", NODE, "gpu-1", DRIVER)]]),
    Row("capacity-request-is-an-error", "DRAConsumableCapacity",
        shared_gpu(), small_share(),
        [[r("gpu", NODE, "gpu-0", DRIVER)]],
        ("error", "request gpu: has capacity requests, but the DRAConsumableCapacity feature "
                  "is disabled")),
    Row("taints-ignored-without-device-taints", "DRADeviceTaints",
        tainted_gpu(), one_gpu(),
        UNSCHEDULABLE, [[r("gpu", NODE, "gpu-0", DRIVER)]]),
]


def _scenario(row: Row, on: bool) -> Scenario:
    gates = FeatureGates.parse(f"{row.gate}={str(on).lower()}")
    return Scenario(row.name, [row.claim], row.objects,
                    row.gate_on if on else row.gate_off, node=node(NODE), features=gates)


@pytest.mark.parametrize("row", ROWS, ids=str)
def test_gate_on(row: Row) -> None:
    check(_scenario(row, True))


@pytest.mark.parametrize("row", ROWS, ids=str)
def test_gate_off(row: Row) -> None:
    outcome = check(_scenario(row, False))
    if row.explains:
        assert isinstance(outcome, Unschedulable)
        assert any(row.explains in line for line in outcome.explanations), \
            outcome.explanations


def test_consumable_capacity_off_shares_are_exclusive_for_later_claims() -> None:
    # Two new claims on a two-GPU node where gpu-0 holds a share: with the gate
    # off only gpu-1 is free, so both cannot fit; with it on, the default (whole
    # GPU) still does not fit next to the share, so the same answer for another reason.
    objects = shared_gpu(2)
    two = [claim("a", request("gpu", DRIVER)), claim("b", request("gpu", DRIVER))]
    for on in (True, False):
        gates = AllocatorFeatures(consumable_capacity=on)
        outcome = check(Scenario("two", two, objects, UNSCHEDULABLE, node=node(NODE),
                                 features=gates))
        assert isinstance(outcome, Unschedulable)


def test_admin_access_ignores_a_share_even_with_consumable_capacity_off() -> None:
    admin = claim("admin", request("gpu", DRIVER, admin=True))
    outcome = check(Scenario("admin", [admin], shared_gpu(),
                             [[r("gpu", NODE, "gpu-0", DRIVER)]], node=node(NODE),
                             features=AllocatorFeatures(consumable_capacity=False)))
    assert isinstance(outcome, Allocated)

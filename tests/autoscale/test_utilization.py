"""Node utilisation as Cluster Autoscaler computes it (its
simulator/dynamicresources/utils/utilization.go and simulator/utilization/info.go):
whole GPUs, DynamicMIG counters, consumable capacity, mixed pools, CPU/memory."""

from __future__ import annotations

from typing import Any

import pytest

from dralab.api.codec import decode
from dralab.api.resource import ResourceClaim, ResourceSlice
from dralab.autoscale import allocated_devices, cluster_objects, node_utilization, pool_utilization
from dralab.fleet import parse_fleet
from dralab.fleet.generate import grown_pool_nodes
from dralab.scheduler import Scheduler, build_cluster

from .helpers import fleet, load, pod, template


def _slices(pool: str) -> tuple[ResourceSlice, ...]:
    return grown_pool_nodes(parse_fleet(fleet("cpu", "h100", "a100"), "t"), pool, 1)[0][1]


def _claim(name: str, results: list[dict[str, Any]]) -> ResourceClaim:
    obj = decode({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                  "metadata": {"name": name, "namespace": "default"},
                  "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                      "deviceClassName": "gpu.nvidia.com"}}]}},
                  "status": {"allocation": {"devices": {"results": results}}}})
    assert isinstance(obj, ResourceClaim)
    return obj


def _result(device: str, pool: str = "h100-01", **extra: Any) -> dict[str, Any]:
    return {"request": "gpu", "driver": "gpu.nvidia.com", "pool": pool, "device": device,
            **extra}


WHOLE = [
    ("nothing allocated", set(), 0.0),
    ("two of eight GPUs", {"gpu-0", "gpu-1"}, 0.25),
    ("all eight", {f"gpu-{i}" for i in range(8)}, 1.0),
]


@pytest.mark.parametrize(("allocated", "expected"), [w[1:] for w in WHOLE],
                         ids=[w[0] for w in WHOLE])
def test_whole_gpus_allocated_over_all(allocated: set[str], expected: float) -> None:
    assert pool_utilization(_slices("h100"), frozenset(allocated)) == expected


# DynamicMIG: each GPU is a counter set; a set is as used as its most used counter.
# A 3g.40gb takes memory slices 0-3 whole (ratio 1 on those counters), so its GPU
# counts as fully used: one GPU of eight -> 0.125.
MIG = [
    ("one 3g.40gb", {"gpu-0-mig-3g40gb-9-0"}, 0.125),
    ("a 1g.10gb too, same GPU: still one GPU's worth", {"gpu-0-mig-3g40gb-9-0",
                                                        "gpu-0-mig-1g10gb-19-4"}, 0.125),
    ("MIG slices on two GPUs", {"gpu-0-mig-1g10gb-19-0", "gpu-3-mig-1g10gb-19-0"}, 0.25),
]


@pytest.mark.parametrize(("allocated", "expected"), [m[1:] for m in MIG],
                         ids=[m[0] for m in MIG])
def test_mig_mean_over_counter_sets_of_the_highest_counter(allocated: set[str],
                                                           expected: float) -> None:
    assert pool_utilization(_slices("a100"), frozenset(allocated)) == pytest.approx(expected)


def test_consumable_capacity_counts_a_shared_device_once() -> None:
    # Two claims hold shares of gpu-0 (consumable capacity): CA counts the device as
    # allocated, once; admin access reserves nothing.
    claims = [_claim("a", [_result("gpu-0", shareID="s-1",
                                   consumedCapacity={"memory": "10Gi"})]),
              _claim("b", [_result("gpu-0", shareID="s-2",
                                   consumedCapacity={"memory": "20Gi"})]),
              _claim("admin", [_result("gpu-5", adminAccess=True)])]
    allocated = allocated_devices(claims)
    assert allocated == {("gpu.nvidia.com", "h100-01"): frozenset({"gpu-0"})}
    assert pool_utilization(_slices("h100"),
                            allocated[("gpu.nvidia.com", "h100-01")]) == 0.125


def _mixed() -> list[ResourceSlice]:
    """A pool with two atomic devices and one GPU partitioned by a counter set."""
    counters = {"memory": {"value": "8"}, "slices": {"value": "4"}}
    spec = {"driver": "gpu.example.com", "nodeName": "n1",
            "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
            "sharedCounters": [{"name": "gpu-9", "counters": counters}],
            "devices": [{"name": "a0"}, {"name": "a1"},
                        {"name": "p-half", "consumesCounters": [{
                            "counterSet": "gpu-9",
                            "counters": {"memory": {"value": "4"}, "slices": {"value": "1"}}}]},
                        {"name": "p-quarter", "consumesCounters": [{
                            "counterSet": "gpu-9",
                            "counters": {"memory": {"value": "2"}, "slices": {"value": "1"}}}]}]}
    obj = decode({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                  "metadata": {"name": "n1-gpu"}, "spec": spec})
    assert isinstance(obj, ResourceSlice)
    return [obj]


# CA (simulator/dynamicresources/utils calculatePoolUtil): a pool whose slices declare
# shared counters is measured by its counter sets alone; its atomic devices do not count.
MIXED = [
    ("only atomic allocated: not counted in a partitionable pool", {"a0"}, 0.0),
    ("only partitionable allocated: the set's highest ratio", {"p-half"}, 0.5),
    ("both: the counter set's highest ratio only", {"a0", "p-quarter"}, 0.25),
]


@pytest.mark.parametrize(("allocated", "expected"), [m[1:] for m in MIXED],
                         ids=[m[0] for m in MIXED])
def test_mixed_pool_counts_counter_sets_only(allocated: set[str], expected: float) -> None:
    assert pool_utilization(_mixed(), frozenset(allocated)) == pytest.approx(expected)


def test_node_with_slices_reads_dra_only_others_cpu_or_memory() -> None:
    on_cpu = pod("cpu-pod", cpu="24", memory="8Gi")
    on_cpu["spec"]["nodeSelector"] = {"dralab.dev/pool": "cpu"}
    data = load(fleet("cpu", "h100", h100={"count": 1}), template("two", count=2),
                pod("gpu-pod", "two", cpu="150"), on_cpu)
    cluster, pending = build_cluster(cluster_objects(data))
    Scheduler.build(cluster).run(pending)
    gpu_node = cluster.nodes["h100-01"]
    util = node_utilization(cluster, gpu_node)
    # 150 of 192 CPUs requested, but a node with slices is as used as its DRA pools.
    assert (util.value, util.resource, util.dra) == (0.25, "gpu.nvidia.com/h100-01", 0.25)
    cpu_node = cluster.nodes[cluster.pods["default/cpu-pod"].assumed_node or ""]
    util = node_utilization(cluster, cpu_node)
    assert (util.value, util.resource) == (0.75, "cpu") and util.dra is None

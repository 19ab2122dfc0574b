"""Cluster Autoscaler's utilisation tables, ported whole.

kubernetes/autoscaler, branch cluster-autoscaler-release-1.37 at
a16f0ae8b5578f09604371c75e0cad29ed794e59:

* cluster-autoscaler/simulator/dynamicresources/utils/utilization_test.go:
  TestDynamicResourceUtilization (14), TestCalculateAtomicDevicesPoolUtilization (4),
  TestCalculatePartitionableDevicesPoolUtilization (8),
  TestGetUniquePartitionableDevicesCount (9);
* cluster-autoscaler/simulator/utilization/info_test.go: TestCalculate (one
  function of 11 checks, one pytest case per check) and
  TestCalculateWithDynamicResources (10).

Each case id is the upstream case name (TestCalculate: the check's step and what it
checks). The DRA cases run dralab's pool and node functions on the same objects
(slices, claims with their allocations, pods); where upstream hands a NodeInfo its
"local" slices, the port gives the slices ``nodeName: node`` (what node-local is).
"""

from __future__ import annotations

from typing import Any

import pytest

from dralab.autoscale.utilization import (
    GpuConfig,
    UtilizationError,
    atomic_utilization,
    claim_allocations,
    dra_utilizations,
    highest_dra_utilization,
    node_utilization,
    partitionable_device_count,
    partitionable_utilization,
    pool_utilization,
)

from .builders_down import (
    Doc,
    claim_doc,
    cluster_of,
    counter_set_doc,
    counter_sets,
    device_doc,
    devices,
    node,
    pod,
    resource_claim,
    resource_slice,
    slice_doc,
    util_test_custom_claim,
    util_test_partitionable_slices,
    util_test_pod_claims,
    util_test_slices,
)

FOO = "driver.foo.com"
BAR = "driver.bar.com"
ERROR = "error"


def _uneven_partition() -> list[Doc]:
    """"multi-counter partitionable devices": addPartitionableDeviceToResourceSlices adds
    gpu-0-uneven-partition (1Gi memory, 500m cpu) to gpu-0's counter set and sets that
    set's cpu total to 1."""
    slices = util_test_partitionable_slices(FOO, "pool1", "node", 1, 4, 2, "gpu-0")
    slices[0]["spec"]["devices"].append(device_doc(
        "gpu-0-uneven-partition", "gpu-0-counter-set", {"memory": "1Gi", "cpu": "500m"}))
    slices[1]["spec"]["sharedCounters"][0]["counters"]["cpu"] = {"value": "1"}
    return slices


# (name, slices, claims, per-pool want or ERROR, highest name, highest value)
DYNAMIC: list[tuple[str, list[Doc], list[Doc], Any, str, float]] = [
    ("no DRA resources", [], [], {}, "", 0.0),
    ("single slice, single pool, 6/10 devices used",
     util_test_slices(FOO, "pool1", "node", 0, 10, 1),
     util_test_pod_claims(FOO, "pool1", 6, 1),
     {FOO: {"pool1": 0.6}}, f"{FOO}/pool1", 0.6),
    ("multiple slices, multiple pools, multiple drivers",
     [*util_test_slices(FOO, "pool1", "node", 0, 10, 2),
      *util_test_slices(FOO, "pool2", "node", 0, 20, 5),
      *util_test_slices(BAR, "pool1", "node", 0, 8, 2)],
     [*util_test_pod_claims(FOO, "pool1", 6, 2), *util_test_pod_claims(FOO, "pool2", 18, 3),
      *util_test_pod_claims(BAR, "pool1", 2, 1)],
     {FOO: {"pool1": 0.6, "pool2": 0.9}, BAR: {"pool1": 0.25}}, f"{FOO}/pool2", 0.9),
    ("old pool generations are ignored",
     [*util_test_slices(FOO, "pool1", "node", 0, 10, 2),
      *util_test_slices(FOO, "pool1", "node", 1, 20, 2),
      *util_test_slices(FOO, "pool1", "node", 2, 30, 2)],
     util_test_pod_claims(FOO, "pool1", 6, 2), {FOO: {"pool1": 0.2}}, f"{FOO}/pool1", 0.2),
    ("incomplete newest pool generation is an error",
     [*util_test_slices(FOO, "pool1", "node", 0, 10, 2),
      *util_test_slices(FOO, "pool1", "node", 1, 20, 2),
      *util_test_slices(FOO, "pool1", "node", 2, 30, 2)[:14]],
     util_test_pod_claims(FOO, "pool1", 6, 2), ERROR, "", 0.0),
    ("incomplete older pool generations are not an error",
     [*util_test_slices(FOO, "pool1", "node", 0, 10, 2)[:3],
      *util_test_slices(FOO, "pool1", "node", 1, 20, 2)[:7],
      *util_test_slices(FOO, "pool1", "node", 2, 30, 2)],
     util_test_pod_claims(FOO, "pool1", 6, 2), {FOO: {"pool1": 0.2}}, f"{FOO}/pool1", 0.2),
    ("partitionable devices, 2/4 partitions used",
     util_test_partitionable_slices(FOO, "pool1", "node", 1, 4, 2, "gpu-0"),
     [util_test_custom_claim("pod", FOO, "pool1", ["gpu-0-partition-0", "gpu-0-partition-1"])],
     {FOO: {"pool1": 0.5}}, f"{FOO}/pool1", 0.5),
    ("partitionable devices, multiple pods, 2/4 partitions used",
     util_test_partitionable_slices(FOO, "pool1", "node", 1, 4, 2, "gpu-0"),
     [util_test_custom_claim("pod-0", FOO, "pool1", ["gpu-0-partition-0"]),
      util_test_custom_claim("pod-1", FOO, "pool1", ["gpu-0-partition-1"])],
     {FOO: {"pool1": 0.5}}, f"{FOO}/pool1", 0.5),
    ("partitionable devices, multiple pools",
     [*util_test_partitionable_slices(FOO, "pool0", "node", 1, 4, 2, "gpu-0"),
      *util_test_partitionable_slices(FOO, "pool1", "node", 1, 4, 2, "gpu-0"),
      *util_test_partitionable_slices(FOO, "pool2", "node", 1, 4, 2, "gpu-1")],
     [util_test_custom_claim("pod0", FOO, "pool0", ["gpu-0-partition-0", "gpu-0-partition-1"]),
      util_test_custom_claim("pod1", FOO, "pool1", ["gpu-0"])],
     {FOO: {"pool0": 0.5, "pool1": 1.0, "pool2": 0.0}}, f"{FOO}/pool1", 1.0),
    ("multi-counter partitionable devices", _uneven_partition(),
     [util_test_custom_claim("pod", FOO, "pool1", ["gpu-0-uneven-partition"])],
     {FOO: {"pool1": 0.5}}, f"{FOO}/pool1", 0.5),
    ("multi-GPU partitionable devices, 2/8 partitions used",
     util_test_partitionable_slices(FOO, "pool1", "node", 1, 4, 2, "gpu-0", "gpu-1"),
     [util_test_custom_claim("pod", FOO, "pool1", ["gpu-0-partition-0", "gpu-0-partition-1"])],
     {FOO: {"pool1": 0.25}}, f"{FOO}/pool1", 0.25),
    ("Single Pod with AdminAccess ResourceClaim doesn't count for utilization",
     util_test_slices(FOO, "pool1", "node", 0, 10, 1),
     util_test_pod_claims(FOO, "pool1", 6, 1, admin=True),
     {FOO: {"pool1": 0.0}}, f"{FOO}/pool1", 0.0),
    ("Multiple Pods with AdminAccess ResourceClaims don't count for utilization",
     util_test_slices(FOO, "pool1", "node", 0, 10, 1),
     [*util_test_pod_claims(FOO, "pool1", 6, 1, admin=True),
      *util_test_pod_claims(FOO, "pool1", 6, 1, admin=False, offset=6)],
     {FOO: {"pool1": 0.6}}, f"{FOO}/pool1", 0.6),
    ("Pod with mixed AdminAccess requests counts only non-admin",
     util_test_slices(FOO, "pool1", "node", 0, 10, 1),
     util_test_pod_claims(FOO, "pool1", 6, 6, admin=[True, True, False, False, False, False]),
     {FOO: {"pool1": 0.4}}, f"{FOO}/pool1", 0.4),
]


@pytest.mark.parametrize(("slices", "claims", "want", "top_name", "top"),
                         [c[1:] for c in DYNAMIC], ids=[c[0] for c in DYNAMIC])
def test_dynamic_resource_utilization(slices: list[Doc], claims: list[Doc], want: Any,
                                      top_name: str, top: float) -> None:
    """utilization_test.go TestDynamicResourceUtilization: CalculateDynamicResourceUtilization
    and HighestDynamicResourceUtilization of the node's slices and its pods' claims."""
    objects = [resource_slice(s) for s in slices]
    allocated = claim_allocations(resource_claim(c) for c in claims)
    if want == ERROR:
        with pytest.raises(UtilizationError, match="newest generation"):
            dra_utilizations(objects, allocated)
        with pytest.raises(UtilizationError):
            highest_dra_utilization(objects, allocated)
        return
    got: dict[str, dict[str, float]] = {}
    for (driver, pool), value in dra_utilizations(objects, allocated).items():
        got.setdefault(driver, {})[pool] = value
    assert got == want
    assert highest_dra_utilization(objects, allocated) == (top_name, top)


def test_a_claim_not_allocated_is_an_error() -> None:
    # groupAllocatedReservedDevices (utilization.go): a claim of a pod on the node
    # without an allocation makes the node's DRA utilisation an error. No upstream
    # case; the function the table above runs through.
    with pytest.raises(UtilizationError, match="claim default/c not allocated"):
        claim_allocations([resource_claim(claim_doc("c", allocated=False))])


ATOMIC = [
    ("no devices", [], [], 0.0),
    ("no allocated devices", [], ["dev-0", "dev-1"], 0.0),
    ("all devices allocated", ["dev-0", "dev-1"], [], 1.0),
    ("partial allocation", ["dev-0"], ["dev-1", "dev-2"], 1.0 / 3.0),
]


@pytest.mark.parametrize(("allocated", "unallocated", "want"), [a[1:] for a in ATOMIC],
                         ids=[a[0] for a in ATOMIC])
def test_calculate_atomic_devices_pool_utilization(allocated: list[str], unallocated: list[str],
                                                   want: float) -> None:
    """utilization_test.go TestCalculateAtomicDevicesPoolUtilization, through the whole
    pool (a slice of the devices) and the ratio itself."""
    one = resource_slice(slice_doc("s", FOO, "p", "node", 0, 1,
                                   [device_doc(d) for d in allocated + unallocated]))
    assert pool_utilization([one], frozenset(allocated)) == want
    assert atomic_utilization(len(allocated), len(allocated) + len(unallocated)) == want


def _dev(name: str, counter_set: str, memory: str, cores: str | None = None) -> Doc:
    counters = {"memory": memory} if cores is None else {"memory": memory, "cores": cores}
    return device_doc(name, counter_set, counters)


def _set(name: str, memory: str, cores: str | None = None) -> Doc:
    return counter_set_doc(name, {"memory": memory} if cores is None
                           else {"memory": memory, "cores": cores})


PARTITIONABLE: list[tuple[str, list[Doc], list[Doc], list[Doc], float]] = [
    ("no devices", [], [], [], 0.0),
    ("no allocated devices", [], [_dev("dev-0", "counter-set-0", "10Gi")],
     [_set("counter-set-0", "10Gi")], 0.0),
    ("partial allocation", [_dev("dev-0-partition-0", "counter-set-0", "5Gi")],
     [_dev("dev-0", "counter-set-0", "10Gi"), _dev("dev-0-partition-1", "counter-set-0", "5Gi")],
     [_set("counter-set-0", "10Gi")], 0.5),
    ("full allocation of one device, all partitions used",
     [_dev("dev-0-partition-0", "counter-set-0", "5Gi"),
      _dev("dev-0-partition-1", "counter-set-0", "5Gi")],
     [_dev("dev-0", "counter-set-0", "10Gi")], [_set("counter-set-0", "10Gi")], 1.0),
    ("full allocation of one device, 1 device used", [_dev("dev-0", "counter-set-0", "10Gi")],
     [_dev("dev-0-partition-0", "counter-set-0", "5Gi"),
      _dev("dev-0-partition-1", "counter-set-0", "5Gi")],
     [_set("counter-set-0", "10Gi")], 1.0),
    ("full allocation of one device, multiple counters used",
     [_dev("dev-0", "counter-set-0", "10Gi", "8")],
     [_dev("dev-0-partition-0", "counter-set-0", "5Gi", "6"),
      _dev("dev-0-partition-1", "counter-set-0", "5Gi", "2")],
     [_set("counter-set-0", "10Gi", "16")], 1.0),
    ("partial allocation of one device, multiple counters used",
     [_dev("dev-0-partition-0", "counter-set-0", "5Gi", "6")],
     [_dev("dev-0", "counter-set-0", "10Gi", "8"),
      _dev("dev-0-partition-1", "counter-set-0", "5Gi", "2")],
     [_set("counter-set-0", "10Gi", "8")], 0.75),
    ("complex allocation of multiple devices, multiple counters used",
     [_dev("dev-0-partition-0", "counter-set-0", "25Gi", "8"),
      _dev("dev-0-partition-2", "counter-set-0", "50Gi", "8"),
      _dev("dev-1-partition-0", "counter-set-1", "50Gi", "16"),
      _dev("dev-1-partition-1", "counter-set-1", "50Gi", "16"),
      _dev("dev-2", "counter-set-2", "100Gi", "32")],
     [_dev("dev-0", "counter-set-0", "100Gi", "32"),
      _dev("dev-0-partition-1", "counter-set-0", "25Gi", "16"),
      _dev("dev-1", "counter-set-1", "100Gi", "32"),
      _dev("dev-2", "counter-set-2", "100Gi", "32"),
      _dev("dev-3", "counter-set-3", "100Gi", "32")],
     [_set(f"counter-set-{i}", "100Gi", "32") for i in range(4)], 0.6875),
]


@pytest.mark.parametrize(("allocated", "unallocated", "sets", "want"),
                         [p[1:] for p in PARTITIONABLE], ids=[p[0] for p in PARTITIONABLE])
def test_calculate_partitionable_devices_pool_utilization(
        allocated: list[Doc], unallocated: list[Doc], sets: list[Doc], want: float) -> None:
    """utilization_test.go TestCalculatePartitionableDevicesPoolUtilization: the
    allocated devices, all devices and the counter sets, as upstream hands them."""
    used = devices(allocated)
    assert partitionable_utilization(used, used + devices(unallocated),
                                     counter_sets(sets)) == want


def _consumer(name: str, counter_set: str) -> Doc:
    return {"name": name, "consumesCounters": [{"counterSet": counter_set, "counters": {}}]}


UNIQUE: list[tuple[str, list[Doc], int]] = [
    ("no devices", [], 0),
    ("single atomic device (no counters)", [{"name": "gpu-0"}], 0),
    ("multiple atomic devices (no counters)",
     [{"name": "gpu-0"}, {"name": "gpu-1"}, {"name": "cpu-0"}], 0),
    ("single partitionable device", [_consumer("gpu-0-whole", "gpu-0-counters")], 1),
    ("single GPU partitioned into 4 devices",
     [_consumer(n, "gpu-0-counters")
      for n in ("gpu-0-whole", "gpu-0-half-1", "gpu-0-half-2", "gpu-0-quarter-1")], 1),
    ("two GPUs each partitioned into 2 devices",
     [_consumer("gpu-0-whole", "gpu-0-counters"), _consumer("gpu-0-half", "gpu-0-counters"),
      _consumer("gpu-1-whole", "gpu-1-counters"), _consumer("gpu-1-half", "gpu-1-counters")], 2),
    ("mixed atomic and partitionable devices",
     [{"name": "cpu-0"}, _consumer("gpu-0-whole", "gpu-0-counters"),
      _consumer("gpu-0-half", "gpu-0-counters")], 1),
    ("complex multi-GPU scenario",
     [_consumer("gpu-0-whole", "gpu-0-counters"), _consumer("gpu-0-half-1", "gpu-0-counters"),
      _consumer("gpu-0-quarter-1", "gpu-0-counters"),
      _consumer("gpu-1-whole", "gpu-1-counters"), _consumer("gpu-1-half-1", "gpu-1-counters"),
      _consumer("gpu-2-whole", "gpu-2-counters")], 3),
    ("device with no counter consumption entries",
     [{"name": "device-1", "consumesCounters": []}], 0),
]


@pytest.mark.parametrize(("devs", "want"), [u[1:] for u in UNIQUE], ids=[u[0] for u in UNIQUE])
def test_get_unique_partitionable_devices_count(devs: list[Doc], want: int) -> None:
    """utilization_test.go TestGetUniquePartitionableDevicesCount."""
    assert partitionable_device_count(devices(devs)) == want


# --- simulator/utilization/info_test.go ----------------------------------------------------

GKE_GPU_LABEL = "cloud.google.com/gke-accelerator"
TEST_TIME = 1608310800.0  # time.Date(2020, time.December, 18, 17, 0, 0, 0, time.UTC)


def _p1(name: str = "p1") -> Doc:
    return pod(name, 100, 200000, node_name="node1")


def _init_pod(name: str, sidecar: bool) -> Doc:
    """p-init (a restartable sidecar 50m/100000 and a plain init 5m/100) or p-large-init
    (one plain init 50000m/100000000) over 100m/200000."""
    out = pod(name, 100, 200000, node_name="node1")
    if sidecar:
        out["spec"]["initContainers"] = [
            {"name": "sidecar", "image": "busybox", "restartPolicy": "Always",
             "resources": {"requests": {"cpu": "50m", "memory": "100000"}}},
            {"name": "init", "image": "busybox",
             "resources": {"requests": {"cpu": "5m", "memory": "100"}}}]
    else:
        out["spec"]["initContainers"] = [
            {"name": "init", "image": "busybox",
             "resources": {"requests": {"cpu": "50000m", "memory": "100000000"}}}]
    return out


DS3 = pod("p3", 100, 200000, node_name="node1", owner=("DaemonSet", "ds"))
DS4 = pod("p4", 100, 200000, node_name="node1", owner=("CustomDaemonSet", "ds"),
          annotations={"cluster-autoscaler.kubernetes.io/daemonset-pod": "true"})
MIRROR = pod("p4", 100, 200000, node_name="node1",
             annotations={"kubernetes.io/config.mirror": ""})
TERMINATED = pod("podTerminated", 100, 200000, node_name="node1",
                 deletion="2020-12-18T16:50:00Z")
P2 = pod("p2", -1, -1, node_name="node1")
NODE1 = node("node1", 2000, 2000000, ready=True)

# (check, node, pods, skip daemonsets, skip mirror pods, want utilisation or ERROR,
#  want cpu or None)
CALCULATE: list[tuple[str, Doc, list[Doc], bool, bool, Any, float | None]] = [
    ("1: cpu and memory", NODE1, [_p1(), _p1("p1b"), P2], False, False, 2.0 / 10, 0.1),
    ("2: no memory allocatable is an error", node("node1", 2000, -1),
     [_p1(), _p1("p1b"), P2], False, False, ERROR, None),
    ("3: sidecars and init containers", NODE1,
     [_p1(), _init_pod("p-init", True), _init_pod("p-large-init", False)],
     False, False, 50.25, 25.125),
    ("4: daemonset pods skipped", NODE1, [_p1(), _p1("p1b"), P2, DS3, DS4], True, False,
     2.5 / 10, None),
    ("5: daemonset pods counted", NODE1, [_p1(), P2, DS3], False, False, 2.0 / 10, None),
    ("6: long-terminating pod not counted", NODE1, [_p1(), _p1("p1b"), P2, TERMINATED],
     False, False, 2.0 / 10, None),
    ("7: mirror pods skipped", NODE1, [_p1(), _p1("p1b"), P2, MIRROR], False, True,
     2.0 / 9.0, None),
    ("8: mirror pods counted", NODE1, [_p1(), P2, MIRROR], False, False, 2.0 / 10, None),
    ("9: daemonset and mirror pods skipped", NODE1, [_p1(), MIRROR, DS3], True, True,
     1.0 / 8.0, None),
]


@pytest.mark.parametrize(("node_doc", "pods", "skip_ds", "skip_mirror", "want", "cpu"),
                         [c[1:] for c in CALCULATE],
                         ids=[f"TestCalculate/{c[0]}" for c in CALCULATE])
def test_calculate(node_doc: Doc, pods: list[Doc], skip_ds: bool, skip_mirror: bool, want: Any,
                   cpu: float | None) -> None:
    """info_test.go TestCalculate (no table: its checks in order). Utilisation within 1%
    as upstream's InEpsilon."""
    cluster, _ = cluster_of([node_doc, *pods])
    info = cluster.nodes["node1"]
    util = node_utilization(cluster, info, ignore_daemonsets=skip_ds,
                            ignore_mirror_pods=skip_mirror, gpu=None, now=TEST_TIME)
    if want == ERROR:
        # CalculateUtilizationOfResource: "failed to get memory from node1"
        assert util.error == "failed to get memory from node1"
        return
    assert util.error is None
    assert util.value == pytest.approx(want, rel=0.01)
    if cpu is not None:
        assert util.cpu == pytest.approx(cpu, rel=0.005)


def test_calculate_gpu_node() -> None:
    """info_test.go TestCalculate, check 10: a GPU node (one nvidia.com/gpu, the GKE
    label) whose pods request it: the GPU's utilisation, 1."""
    gpu_pod = pod("gpu_pod", 100, 200000, node_name="gpu-node", extra={"nvidia.com/gpu": "1"})
    gpu_pod["spec"]["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists"}]
    cluster, _ = cluster_of([
        node("gpu-node", 2000, 2000000, labels={GKE_GPU_LABEL: "nvidia-tesla-k80"},
             extra={"nvidia.com/gpu": "1"},
             taints=[{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]),
        pod("p1", 100, 200000, node_name="gpu-node"), pod("p1b", 100, 200000,
                                                          node_name="gpu-node"), gpu_pod])
    util = node_utilization(cluster, cluster.nodes["gpu-node"], gpu_labels=(GKE_GPU_LABEL,),
                            now=TEST_TIME)
    assert (util.value, util.resource, util.error) == (1.0, "nvidia.com/gpu", None)


def test_calculate_unready_gpu() -> None:
    """info_test.go TestCalculate, check 11: a node with the GPU label but no GPU
    advertised yet (an unready GPU): utilisation 0, so that it can still go."""
    cluster, _ = cluster_of([
        node("gpu-node", 2000, 2000000, labels={GKE_GPU_LABEL: "nvidia-tesla-k80"}),
        pod("p1", 100, 200000, node_name="gpu-node"),
        pod("p1b", 100, 200000, node_name="gpu-node")])
    util = node_utilization(cluster, cluster.nodes["gpu-node"], gpu_labels=(GKE_GPU_LABEL,))
    assert (util.value, util.resource, util.error) == (0.0, "nvidia.com/gpu", None)


def _dra_slice(name: str, driver: str, pool: str, count: int, devs: int, node_name: str
               ) -> Doc:
    return slice_doc(name, driver, pool, node_name, 0, count,
                     [device_doc(f"dev{i}") for i in range(1, devs + 1)])


def _dra_objects(gpu: bool, slices: str, pods: str) -> list[Doc]:
    """TestCalculateWithDynamicResources' NodeInfos: node (1000m, 1000) or gpuNode (one
    nvidia.com/gpu and the GKE label); ``slices``: none, "1", "12" or "123"
    (resourceSlice1, 2 and the incomplete 3); ``pods``: "", "1", "2", "12" and whether
    their claims are there ("c")."""
    name = "gpuNode" if gpu else "node"
    out: list[Doc] = [node(name, 1000, 1000, labels={GKE_GPU_LABEL: "nvidia-tesla-k80"}
                           if gpu else None, extra={"nvidia.com/gpu": "1"} if gpu else None)]
    if "1" in slices:
        out.append(_dra_slice("node-slice1", FOO, "node-pool1", 1, 5, name))
    if "2" in slices:
        out.append(_dra_slice("node-slice2", BAR, "node-pool2", 1, 5, name))
    if "3" in slices:
        out.append(_dra_slice("incompleteResourceSlice", FOO, "node-pool3", 999, 3, name))
    with_claims = "c" in pods
    if "1" in pods:
        claims = ["pod1-claim1", "pod1-claim2"] if with_claims else []
        out.append(pod("pod1", 250, 0, node_name=name, claims=claims))
        if with_claims:
            out.append(claim_doc("pod1-claim1", [("req1", FOO, "node-pool1", "dev1"),
                                                 ("req2", FOO, "node-pool1", "dev2"),
                                                 ("req3", FOO, "node-pool1", "dev3")]))
            out.append(claim_doc("pod1-claim2", [("req4", BAR, "node-pool2", "dev1")]))
    if "2" in pods:
        out.append(pod("pod2", 250, 0, node_name=name,
                       claims=["pod2-claim"] if with_claims else []))
        if with_claims:
            out.append(claim_doc("pod2-claim", [("req1", FOO, "node-pool1", "dev4"),
                                                ("req2", BAR, "node-pool2", "dev2"),
                                                ("req3", BAR, "node-pool2", "dev3")]))
    return out


GPU_PLUGIN = GpuConfig("nvidia.com/gpu")
GPU_DRA = GpuConfig("", exposed_via_dra=True)

# (name, dra enabled, gpu node, slices, pods, gpu config, want (value, resource, cpu, dra)
#  or ERROR)
WITH_DRA: list[tuple[str, bool, bool, str, str, GpuConfig | None, Any]] = [
    ("no DRA resources, DRA disabled -> normal resource util returned",
     False, False, "", "12", None, (0.5, "cpu", 0.5, None)),
    ("DRA slices present, but no claims, DRA disabled -> normal resource util returned",
     False, False, "1", "12", None, (0.5, "cpu", 0.5, None)),
    ("DRA slices and claims present, DRA disabled -> normal resource util returned",
     False, False, "12", "12c", None, (0.5, "cpu", 0.5, None)),
    ("no DRA resources, DRA enabled -> normal resource util returned",
     True, False, "", "12", None, (0.5, "cpu", 0.5, None)),
    ("DRA slices present, but no claims, DRA enabled -> DRA util returned despite being lower "
     "than CPU", True, False, "1", "12", None, (0.0, f"{FOO}/node-pool1", 0.0, 0.0)),
    ("DRA slices and claims present, DRA enabled -> DRA util returned despite being lower than "
     "CPU", True, False, "12", "2c", None, (0.4, f"{BAR}/node-pool2", 0.0, 0.4)),
    ("DRA slices and claims present, DRA enabled -> DRA util returned",
     True, False, "12", "12c", None, (0.8, f"{FOO}/node-pool1", 0.0, 0.8)),
    ("DRA slices and claims present, DRA enabled, GPU config passed -> GPU util returned",
     True, True, "12", "12c", GPU_PLUGIN, (0.0, "nvidia.com/gpu", 0.0, None)),
    ("DRA slices and claims present, DRA enabled, DRA GPU config passed -> DRA util returned",
     True, True, "12", "12c", GPU_DRA, (0.8, f"{FOO}/node-pool1", 0.0, 0.8)),
    ("DRA slices and claims present, DRA enabled, error while calculating DRA util -> error "
     "returned", True, False, "123", "12c", None, ERROR),
]


@pytest.mark.parametrize(("dra", "gpu_node", "slices", "pods", "gpu", "want"),
                         [w[1:] for w in WITH_DRA], ids=[w[0] for w in WITH_DRA])
def test_calculate_with_dynamic_resources(dra: bool, gpu_node: bool, slices: str, pods: str,
                                          gpu: GpuConfig | None, want: Any) -> None:
    """info_test.go TestCalculateWithDynamicResources: Calculate with DRA on or off and
    the GPU config upstream passes."""
    cluster, _ = cluster_of(_dra_objects(gpu_node, slices, pods))
    info = cluster.nodes["gpuNode" if gpu_node else "node"]
    util = node_utilization(cluster, info, dra_enabled=dra, gpu=gpu)
    if want == ERROR:
        assert util.error is not None and "node-pool3" in util.error
        assert (util.value, util.resource) == (0.0, "")
        return
    assert util.error is None
    assert (util.value, util.resource, util.cpu, util.dra) == want

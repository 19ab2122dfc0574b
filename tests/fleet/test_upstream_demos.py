"""The drivers' own demos and bats specs, scheduled on fleets generated with the matching setting.

Inputs are verbatim copies in tests/data/upstream (origin, commit and licence in its
README.md); every expected outcome is the one upstream states -- quoted in that README
and next to each case here. A case fails if dralab's fleet publishes something the
driver does not (another device order, attribute set or request policy) or if the
scheduler places the workload differently.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from dralab.api.base import KubeObject
from dralab.api.features import FeatureGates
from dralab.api.io import load
from dralab.api.resource import ResourceClaim
from dralab.fleet import generate, parse_fleet, parse_mig_device_name
from dralab.scheduler import ScheduleResult, schedule

UPSTREAM = Path(__file__).resolve().parents[1] / "data" / "upstream"
EXAMPLE = UPSTREAM / "dra-example-driver"
NVIDIA = UPSTREAM / "k8s-dra-driver-gpu"


@cache
def _fleet(spec_json: str) -> tuple[KubeObject, ...]:
    return tuple(generate(parse_fleet(json.loads(spec_json), "<test>")).objects())


def fleet(gpu: dict[str, Any], driver: str, **spec: Any) -> tuple[KubeObject, ...]:
    """One worker node named ``worker`` (as in the drivers' kind demos) with ``gpu``."""
    data = {"apiVersion": "dralab.dev/v1alpha1", "kind": "Fleet", "spec": {
        **spec, "pools": [{"name": "worker", "nodeNames": ["worker"], "driver": driver,
                           "gpu": gpu}]}}
    return _fleet(json.dumps(data, sort_keys=True))


def example_fleet(**gpu: Any) -> tuple[KubeObject, ...]:
    """The example driver with Helm values; numDevices defaults to the chart's 8."""
    return fleet({"count": 8, **gpu}, "example")


def nvidia_fleet(model: str, count: int = 8, **gpu: Any) -> tuple[KubeObject, ...]:
    return fleet({"model": model, "count": count, **gpu}, "nvidia")


def run(objects: tuple[KubeObject, ...], *manifests: Path,
        gates: str = "") -> ScheduleResult:
    inputs = [*objects]
    for path in manifests:
        inputs += load(str(path))
    features = FeatureGates.parse(gates) if gates else None
    return schedule(inputs, features=features)


# --- reading the outcome -------------------------------------------------------------

Devices = dict[str, dict[str, list[str]]]  # pod claim name -> request -> devices


def allocations(result: ScheduleResult, qualified: bool = False) -> dict[str, Devices]:
    """Per placed pod (``name``, or ``namespace/name`` if ``qualified``): its claims'
    allocated devices by request (extended resources under the key ``<extended>``)."""
    claims: dict[tuple[str, str], ResourceClaim] = {
        (c.metadata.namespace or "default", c.metadata.name): c for c in result.claims}

    def devices(ns: str, name: str) -> dict[str, list[str]]:
        claim = claims[(ns, name)]
        assert claim.status.allocation is not None, name
        out: dict[str, list[str]] = {}
        for r in claim.status.allocation.devices.results:
            out.setdefault(r.request, []).append(r.device)
        return out

    out: dict[str, Devices] = {}
    for placement in result.placed:
        pod = placement.pod
        ns = pod.metadata.namespace or "default"
        generated = {s.name: s.resource_claim_name for s in pod.status.resource_claim_statuses}
        per_claim: Devices = {}
        for ref in pod.spec.resource_claims:
            name = ref.resource_claim_name or generated.get(ref.name)
            assert name, f"{pod.metadata.name}: claim {ref.name} was not generated"
            per_claim[ref.name] = devices(ns, name)
        extended = pod.status.extended_resource_claim_status
        if extended is not None:
            per_claim["<extended>"] = devices(ns, extended.resource_claim_name)
        key = f"{ns}/{pod.metadata.name}" if qualified else pod.metadata.name
        assert key not in out, f"two pods named {key}"
        out[key] = per_claim
    return out


def flat(per_claim: Devices) -> list[str]:
    return [d for requests in per_claim.values() for ds in requests.values() for d in ds]


def pods_named(allocs: dict[str, Devices], prefix: str) -> list[Devices]:
    return [v for k, v in sorted(allocs.items()) if k.startswith(prefix)]


def all_placed(result: ScheduleResult) -> None:
    assert not result.unplaced, [(u.pod.metadata.name, u.message) for u in result.unplaced]


# --- dra-example-driver demos --------------------------------------------------------

@dataclass(frozen=True)
class Case:
    manifest: str
    fleet: Callable[[], tuple[KubeObject, ...]]
    check: Callable[[ScheduleResult], None]
    gates: str = ""


def distinct_gpus_per_pod(result: ScheduleResult) -> None:
    # basic-resourceclaimtemplate: "each pod received a different GPU".
    all_placed(result)
    allocs = allocations(result)
    assert {p: flat(c) for p, c in allocs.items()} == {"pod0": ["gpu-0"], "pod1": ["gpu-1"]}


def two_distinct_gpus_one_container(result: ScheduleResult) -> None:
    # basic-multiple-requests: "2 GPU_DEVICE environment variables with distinct GPU IDs".
    all_placed(result)
    (devices,) = [flat(c) for c in allocations(result).values()]
    assert devices == ["gpu-0", "gpu-1"]


def one_gpu_for_the_pod(result: ScheduleResult) -> None:
    # basic-shared-claim-across-containers / initcontainer-shared-gpu: both containers
    # reference one claim, "the same GPU ID".
    all_placed(result)
    assert {p: flat(c) for p, c in allocations(result).items()} == {"pod0": ["gpu-0"]}


def pods_share_one_gpu(result: ScheduleResult) -> None:
    # basic-shared-claim-across-pods: "Both pods should show the same GPU ID".
    all_placed(result)
    assert {p: flat(c) for p, c in allocations(result).items()} == {
        "pod0": ["gpu-0"], "pod1": ["gpu-0"]}


def opaque_config_two_gpus(result: ScheduleResult) -> None:
    # basic-resourceclaim-opaque-config: the TimeSlicing pair and the SpacePartitioning
    # pair each share one GPU, "different from TimeSlicing GPU".
    all_placed(result)
    (per_claim,) = allocations(result).values()
    (requests,) = per_claim.values()
    assert requests == {"ts-gpu": ["gpu-0"], "sp-gpu": ["gpu-1"]}


def cel_selected_gpu(result: ScheduleResult) -> None:
    # cel-selector: one GPU with model LATEST-GPU-MODEL and at least 4Gi.
    all_placed(result)
    assert {p: flat(c) for p, c in allocations(result).items()} == {"pod0": ["gpu-0"]}


def prioritized(result: ScheduleResult) -> None:
    # prioritized-alternatives: pod0 falls back to gpu/older-gpu, pod1 gets gpu/latest-gpu,
    # "the two pods get distinct GPUs".
    all_placed(result)
    allocs = allocations(result)
    assert {p: c["gpu"] for p, c in allocs.items()} == {
        "pod0": {"gpu/older-gpu": ["gpu-0"]}, "pod1": {"gpu/latest-gpu": ["gpu-1"]}}


def admin_gets_every_gpu(result: ScheduleResult) -> None:
    # admin-access: GPU_DEVICE variables "for all available GPUs on the node".
    all_placed(result)
    assert {p: flat(c) for p, c in allocations(result).items()} == {
        "pod0": [f"gpu-{i}" for i in range(8)]}


def extended_both_pods(result: ScheduleResult) -> None:
    # extended-resource-request with deviceClass.extendedResourceName=example.com/gpu:
    # "Each pod should get one GPU".
    all_placed(result)
    assert {p: flat(c) for p, c in allocations(result).items()} == {
        "pod0": ["gpu-0"], "pod1": ["gpu-1"]}


def extended_without_setting(result: ScheduleResult) -> None:
    # Default chart: "pod1 will remain in Pending state while pod0 runs normally".
    assert {p: flat(c) for p, c in allocations(result).items()} == {"pod0": ["gpu-0"]}
    assert [u.pod.metadata.name for u in result.unplaced] == ["pod1"]


def two_partitions(result: ScheduleResult) -> None:
    # partitionable-devices (gpuPartitions=4, numDevices=2): "pod0 gets two GPU partitions".
    # The driver lists partitions before gpu-<i>-full, so first-fit takes partitions 0, 1.
    all_placed(result)
    assert {p: flat(c) for p, c in allocations(result).items()} == {
        "pod0": ["gpu-0-partition-0", "gpu-0-partition-1"]}


def shared_gpu_0(result: ScheduleResult) -> None:
    # gpu-allow-multiple-allocations: "Both pods should show the same GPU ID" (gpu-0),
    # each consuming its requested 16Gi / 20.
    all_placed(result)
    assert {p: flat(c) for p, c in allocations(result).items()} == {
        "pod0": ["gpu-0"], "pod1": ["gpu-0"]}
    consumed = {(str(r.consumed_capacity["memory"]), str(r.consumed_capacity["compute"]))
                for c in result.claims if c.status.allocation
                for r in c.status.allocation.devices.results}
    assert consumed == {("16Gi", "20")}


def shared_partition_0(result: ScheduleResult) -> None:
    # gpu-allow-multiple-allocations-partitionable: "Both pods should show the same GPU
    # partition device ID" -- gpu-0-partition-0 in the README's example output.
    all_placed(result)
    assert {p: flat(c) for p, c in allocations(result).items()} == {
        "pod0": ["gpu-0-partition-0"], "pod1": ["gpu-0-partition-0"]}
    share_ids = {r.share_id for c in result.claims if c.status.allocation
                 for r in c.status.allocation.devices.results}
    assert len(share_ids) == 2 and None not in share_ids


def binding_conditions(result: ScheduleResult) -> None:
    # binding-conditions: the allocation result of device gpu-0 carries the device's
    # bindingConditions / bindingFailureConditions.
    all_placed(result)
    (claim,) = result.claims
    assert claim.status.allocation is not None
    (r,) = claim.status.allocation.devices.results
    assert (r.device, r.binding_conditions, r.binding_failure_conditions) == (
        "gpu-0", ["BindingConditions"], ["BindingFailureConditions"])


def podgroups_share_gpu(result: ScheduleResult) -> None:
    # podgroup-resourceclaimtemplate: "All pods in group-1 should show the same GPU ID",
    # group-2's "different from group-1".
    all_placed(result)
    allocs = allocations(result)
    g1 = {tuple(flat(c)) for c in pods_named(allocs, "group-1-")}
    g2 = {tuple(flat(c)) for c in pods_named(allocs, "group-2-")}
    assert len(g1) == 1 and len(g2) == 1 and g1 != g2


EXAMPLE_CASES = [
    Case("basic-resourceclaimtemplate", example_fleet, distinct_gpus_per_pod),
    Case("basic-multiple-requests", example_fleet, two_distinct_gpus_one_container),
    Case("basic-shared-claim-across-containers", example_fleet, one_gpu_for_the_pod),
    Case("basic-shared-claim-across-pods", example_fleet, pods_share_one_gpu),
    Case("basic-resourceclaim-opaque-config", example_fleet, opaque_config_two_gpus),
    Case("initcontainer-shared-gpu", example_fleet, one_gpu_for_the_pod),
    Case("cel-selector", example_fleet, cel_selected_gpu),
    Case("prioritized-alternatives", example_fleet, prioritized),
    Case("admin-access", example_fleet, admin_gets_every_gpu),
    Case("extended-resource-request",
         lambda: fleet({"count": 8}, "example",
                       example={"extendedResourceName": "example.com/gpu"}),
         extended_both_pods),
    Case("extended-resource-request", example_fleet, extended_without_setting),
    Case("partitionable-devices", lambda: example_fleet(count=2, partitions=4), two_partitions),
    Case("gpu-allow-multiple-allocations", lambda: example_fleet(multipleAllocations=True),
         shared_gpu_0),
    # gpuAllowMultipleAllocations: a claim that asks for no capacity gets the request
    # policies' default, which the driver sets to the whole device -- so the basic
    # demo still gives "each pod ... a different GPU" (not two shares of gpu-0).
    Case("basic-resourceclaimtemplate", lambda: example_fleet(multipleAllocations=True),
         distinct_gpus_per_pod),
    Case("gpu-allow-multiple-allocations-partitionable",
         lambda: example_fleet(multipleAllocations=True, partitions=4), shared_partition_0),
    Case("binding-conditions", lambda: example_fleet(bindingConditions=True),
         binding_conditions),
]


@pytest.mark.parametrize("case", EXAMPLE_CASES,
                         ids=[f"{c.manifest}-{i}" for i, c in enumerate(EXAMPLE_CASES)])
def test_example_driver_demo(case: Case) -> None:
    case.check(run(case.fleet(), EXAMPLE / f"{case.manifest}.yaml", gates=case.gates))


def test_example_driver_podgroup_demo() -> None:
    # The demo's README requires GenericWorkload, GangScheduling (merged into GenericWorkload
    # in 1.37) and DRAWorkloadResourceClaims. Without GenericWorkload the API server drops
    # the pods' spec.schedulingGroup, so no pod is in a PodGroup and each gets its own GPU.
    result = run(example_fleet(), EXAMPLE / "podgroup-resourceclaimtemplate.yaml",
                 gates="GenericWorkload=true,DRAWorkloadResourceClaims=true")
    podgroups_share_gpu(result)
    # One claim per PodGroup, reserved for the group rather than for its pods.
    allocated = [c for c in result.claims if c.status.allocation is not None]
    assert sorted(c.metadata.name.rsplit("-", 1)[0] for c in allocated) == \
        ["group-1-gpu", "group-2-gpu"]
    assert all([(r.api_group, r.resource) for r in c.status.reserved_for]
               == [("scheduling.k8s.io", "podgroups")] for c in allocated)


# --- NVIDIA driver demos and bats specs ---------------------------------------------

# demo/specs/quickstart/mig-parted-config.yaml, config "half-balanced": GPUs 0-3 with
# MIG 1g.5gb x2, 2g.10gb, 3g.20gb; GPUs 4-7 without MIG (the README's A100 node).
HALF_BALANCED = [["1g.5gb", "1g.5gb", "2g.10gb", "3g.20gb"]] * 4 + [[]] * 4


def quickstart_node() -> tuple[KubeObject, ...]:
    return nvidia_fleet("a100-40gb", mig={"mode": "static", "perGpu": HALF_BALANCED})


def test_quickstart_gpu_test1_to_4_together() -> None:
    # README: "kubectl apply --filename=gpu-test{1,2,3,4}.yaml" on the half-balanced node.
    result = run(quickstart_node(), *(NVIDIA / "quickstart" / f"gpu-test{i}.yaml"
                                      for i in (1, 2, 3, 4)))
    all_placed(result)
    allocs = allocations(result, qualified=True)
    full = {p: flat(c) for p, c in allocs.items() if not p.startswith("gpu-test4/")}
    # gpu-test1: two pods, a GPU each, distinct; gpu-test2: one pod (two containers, one
    # claim); gpu-test3: two pods sharing one claim -- exactly the four full GPUs 4..7.
    assert sorted(full) == ["gpu-test1/pod1", "gpu-test1/pod2", "gpu-test2/pod",
                            "gpu-test3/pod1", "gpu-test3/pod2"]
    assert all(len(d) == 1 for d in full.values())
    assert full["gpu-test3/pod1"] == full["gpu-test3/pod2"]
    owners = [full["gpu-test1/pod1"][0], full["gpu-test1/pod2"][0], full["gpu-test2/pod"][0],
              full["gpu-test3/pod1"][0]]
    assert sorted(owners) == ["gpu-4", "gpu-5", "gpu-6", "gpu-7"]
    mig_pods = [c for p, c in allocs.items() if p.startswith("gpu-test4/pod-")]
    assert len(mig_pods) == 4
    parents = set()
    for per_claim in mig_pods:
        (requests,) = per_claim.values()
        # One request per container, all on one GPU (matchAttribute parentUUID).
        assert sorted(requests) == ["mig-1g-5gb-0", "mig-1g-5gb-1", "mig-2g-10gb",
                                    "mig-3g-20gb"]
        minors = {d.split("-")[1] for ds in requests.values() for d in ds}
        assert len(minors) == 1
        parents |= minors
    assert parents == {"0", "1", "2", "3"}


def test_quickstart_full_gpu_pods() -> None:
    results = {i: allocations(run(quickstart_node(), NVIDIA / "quickstart" /
                                  f"gpu-test{i}.yaml")) for i in (1, 2, 3)}
    # gpu-test1: distinct GPUs; gpu-test2: both containers one GPU; gpu-test3: shared.
    assert {p: flat(c) for p, c in results[1].items()} == {"pod1": ["gpu-4"],
                                                          "pod2": ["gpu-5"]}
    assert {p: flat(c) for p, c in results[2].items()} == {"pod": ["gpu-4"]}
    assert {p: flat(c) for p, c in results[3].items()} == {"pod1": ["gpu-4"],
                                                          "pod2": ["gpu-4"]}


def test_quickstart_gpu_test5_two_shared_gpus() -> None:
    result = run(nvidia_fleet("h100"), NVIDIA / "quickstart" / "gpu-test5.yaml")
    all_placed(result)
    ((requests,),) = [list(c.values()) for c in allocations(result).values()]
    assert requests == {"ts-gpu": ["gpu-0"], "mps-gpu": ["gpu-1"]}


def test_quickstart_gpu_test6_selects_on_a_retired_attribute() -> None:
    # The driver stopped publishing `index` in v25.8 (deviceinfo.go has no such
    # attribute); the CEL `device.attributes[...].index` fails on every device.
    result = run(nvidia_fleet("a100-40gb"), NVIDIA / "quickstart" / "gpu-test6.yaml")
    assert not result.placed and len(result.unplaced) == 4


def test_quickstart_mps_two_containers_one_gpu() -> None:
    result = run(nvidia_fleet("h100"), NVIDIA / "quickstart" / "gpu-test-mps.yaml")
    all_placed(result)
    assert [flat(c) for c in allocations(result).values()] == [["gpu-0"]]


@pytest.mark.parametrize("mode", ["unlimited", "memory", "integer"])
def test_consumable_shares_demo_co_allocates(mode: str) -> None:
    # consumable-shares README: claims "co-allocate on the device".
    shares = 4 if mode == "integer" else mode
    result = run(nvidia_fleet("h100", sharing={"consumableShares": shares}),
                 NVIDIA / "consumable-shares" / f"{mode}-sharing.yaml")
    all_placed(result)
    devices = [flat(c) for c in allocations(result).values()]
    assert len(devices) >= 2 and all(d == ["gpu-0"] for d in devices)


def test_extended_resource_gpu_full() -> None:
    result = run(nvidia_fleet("h100"), NVIDIA / "extended-resources" / "gpu-full.yaml")
    all_placed(result)
    assert [flat(c) for c in allocations(result).values()] == [["gpu-0"]]


BATS_FULL_GPU = [
    # (spec, expectation from the bats test)
    ("gpu-simple-full", {"pod-full-gpu": ["gpu-0"]}),                      # 1 pod, 1 GPU
    ("gpu-2pods-2gpus", {"pod1": ["gpu-0"], "pod2": ["gpu-1"]}),           # assert_not_equal
    ("gpu-2pods-1gpu", {"pod1": ["gpu-0"], "pod2": ["gpu-0"]}),            # assert_equal
    ("gpu-1pod-2cnt-1gpu", {"pod1": ["gpu-0"]}),                            # shared, 1 RCT
    ("gpu-two-claims-one-pod", {"pod-two-claims": ["gpu-0", "gpu-1"]}),    # two distinct GPUs
    ("gpu-timeslicing", {"pod-timeslicing": ["gpu-0"]}),                   # 2 ctrs share
    ("gpu-mps", {"pod-mps": ["gpu-0"]}),
]


@pytest.mark.parametrize(("spec", "expected"), BATS_FULL_GPU, ids=[s for s, _ in BATS_FULL_GPU])
def test_bats_full_gpu_specs(spec: str, expected: dict[str, list[str]]) -> None:
    result = run(nvidia_fleet("h100"), NVIDIA / "bats" / f"{spec}.yaml")
    all_placed(result)
    assert {p: flat(c) for p, c in allocations(result).items()} == expected


def test_bats_cel_nomatch_stays_pending() -> None:
    result = run(nvidia_fleet("h100"), NVIDIA / "bats" / "gpu-cel-nomatch.yaml")
    assert not result.placed
    assert [u.pod.metadata.name for u in result.unplaced] == ["pod-cel-nomatch"]


def test_bats_job_completions_get_gpus() -> None:
    # "Job with ResourceClaimTemplate allocates GPUs to completions" (parallelism 1:
    # one pod at a time).
    result = run(nvidia_fleet("h100", count=1), NVIDIA / "bats" / "gpu-job-rct.yaml")
    all_placed(result)
    assert [flat(c) for c in allocations(result).values()] == [["gpu-0"]]


def test_bats_deployment_replicas_get_distinct_gpus() -> None:
    result = run(nvidia_fleet("h100"), NVIDIA / "bats" / "gpu-job-rct-parallel.yaml")
    all_placed(result)
    devices = sorted(d for c in allocations(result).values() for d in flat(c))
    assert devices == ["gpu-0", "gpu-1"]


def test_bats_static_mig_anymig() -> None:
    # StaticMIG: a 1g device created on GPU 0 of the node ("mig_create_1g0_on_node").
    result = run(nvidia_fleet("h100", mig={"mode": "static",
                                           "perGpu": [["1g.10gb"]] + [[]] * 7}),
                 NVIDIA / "bats" / "gpu-anymig.yaml")
    all_placed(result)
    assert [flat(c) for c in allocations(result).values()] == [["gpu-0-mig-1g10gb-19-0"]]


@pytest.mark.parametrize("spec", ["gpu-simple-mig", "gpu-simple-mig-ts"])
def test_bats_dynamic_mig_one_device(spec: str) -> None:
    # "DynMIG: 1 pod, 1 MIG": selectors multiprocessors > 10 (and memory > 10Gi).
    result = run(nvidia_fleet("h100", mig={"mode": "dynamic"}), NVIDIA / "bats" / f"{spec}.yaml")
    all_placed(result)
    ((device,),) = [flat(c) for c in allocations(result).values()]
    # Which GPU is not stated (slice order is the API server's, not the driver's).
    assert parse_mig_device_name(device) is not None


def test_bats_dynamic_mig_two_containers_two_devices() -> None:
    # "DynMIG: 1 pod, 2 containers (1 MIG each)": assert_not_equal on the MIG UUIDs.
    result = run(nvidia_fleet("h100", mig={"mode": "dynamic"}),
                 NVIDIA / "bats" / "gpu-multiple-mig.yaml")
    all_placed(result)
    (per_claim,) = allocations(result).values()
    (requests,) = per_claim.values()
    assert set(requests) == {"mig1", "mig2"}
    assert requests["mig1"] != requests["mig2"]


@pytest.mark.parametrize(("spec", "shares"), [("gpu-consumable-shares-memory", "memory"),
                                              ("gpu-consumable-shares-integer", 4)])
def test_bats_consumable_shares_two_pods_one_gpu(spec: str, shares: Any) -> None:
    # "ConsumableShares -- memory / integer shares mode with 2 independent pods":
    # assert_equal "$uid0" "$uid1".
    result = run(nvidia_fleet("h100", sharing={"consumableShares": shares}),
                 NVIDIA / "bats" / f"{spec}.yaml")
    all_placed(result)
    assert sorted(flat(c)[0] for c in allocations(result).values()) == ["gpu-0", "gpu-0"]

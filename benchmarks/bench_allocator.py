"""Allocator benchmark: upstream scheduler_perf's DRA shapes with kube-scheduler's procedure.

Every figure is one pod's DRA work as kube-scheduler does it: a fresh claim
(from the pod's claim template), a new allocator over the cluster (upstream's
``NewAllocator`` per pod), then ``Allocate`` node after node, round-robin from
where the previous pod stopped, until kube-scheduler's number of feasible
nodes is found (230 of 500 nodes; all of them below 100 nodes). Shapes:

- shapes: 500 nodes with one slice of 10 devices each (``instance-<i>``,
  model A100, driverVersion 1.2.3, ``dra.example.com/numa``, 1Gi memory),
  empty and half full; claims: one device, with a CEL selector, two devices
  with matchAttribute, firstAvailable. Nothing is committed (steady state).
- full: every node full; a new claim tries all 500 nodes (unschedulable).
- fill: 5,000 pods onto those 500 nodes; each pod takes the first feasible
  node of its search and is committed (dralab: one pod in ten cold).
- partitionable: upstream's SteadyStateClusterResourceClaimTemplatePartitionable
  (2,000 pools of a counter-set slice and a device slice, 6 devices on 4
  counters, node selector ``node-with-dra``; device-2-counters-1 of every pool
  allocated first; claim: 2 devices with matchAttribute dra.example.com/slice);
  100 nodes, all feasible.
- backtracking: upstream's ...PartitionableBacktracking (one pool: a counter
  slice with cpu1..8 = 1 and mem = 70Gi on node scheduler-perf-dra-0, eight
  devices each taking one cpu and 10Gi, device-1 20Gi; claim for 7 devices).

- hetero, hetero-dense: issue 34's heterogeneous fleet (``hetero_fleet.py``):
  500 nodes, no two alike (4/8 devices a node, 8/16 in the dense fleet; product,
  memory, driver version, PCIe roots and a uuid per device drawn from a seed), a
  third of the devices allocated, and 200 pods cycling through ten claim shapes
  (the common CEL selector forms, matchAttribute, firstAvailable, a two-claim
  pod) with churn: before every fifth pod five nodes publish a new pool
  generation, some keeping the old one's slices beside it. Every pod is cold (a
  new SliceIndex and Allocator over the slices of the moment) and timed alone;
  the figures are each shape's median (p50) and p90 per pod, with the twin
  lookup on (dralab's default) and switched off (``, no twins``). Nothing is
  committed. The input is one JSON document both sides read (``--write-hetero
  DIR`` writes it; ``--go`` hands the same file to ``draharness -input``), and the
  check lines hash every call of every pod of a shape.

dralab figures come twice: ``cold`` builds everything per pod (a new
SliceIndex and Allocator: pools gathered from new slices, no selector results
or prepared claims kept; only compiled CEL programs survive, as in
kube-scheduler's CEL cache), ``warm`` keeps one SliceIndex and Allocator
across pods (dralab's design for a simulator). Time is process CPU time, the
collector runs as in a real run (no gc.freeze). A line ``check <segment>
<digest>`` hashes the first pod's outcomes (node, devices, search steps);
the Go harness prints the same line, so equal digests mean both sides chose
the same devices with the same number of search steps.

    python benchmarks/bench_allocator.py [--quick] [--only SEGMENT]
    python benchmarks/bench_allocator.py --write-hetero DIR [--quick]
    python benchmarks/bench_allocator.py --go PATH/draharness [--rounds N] [--quick]

``--go`` runs the Go harness (benchmarks/go, upstream's allocator) and this
script alternately, segment by segment, in fresh single-threaded processes,
and prints the median of the rounds per figure with the ratio dralab / Go.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import hetero_fleet

from dralab.allocator import Allocated, AllocatedState, Allocator, NodeView, SliceIndex
from dralab.allocator.outcome import AllocationOutcome
from dralab.api.base import ObjectMeta
from dralab.api.core import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from dralab.api.quantity import parse_quantity
from dralab.api.resource import (
    AllocationResult,
    CELDeviceSelector,
    Counter,
    CounterSet,
    Device,
    DeviceAllocationResult,
    DeviceAttribute,
    DeviceCapacity,
    DeviceClaim,
    DeviceClass,
    DeviceClassSpec,
    DeviceConstraint,
    DeviceCounterConsumption,
    DeviceRequest,
    DeviceRequestAllocationResult,
    DeviceSelector,
    DeviceSubRequest,
    ExactDeviceRequest,
    ResourceClaim,
    ResourceClaimSpec,
    ResourcePool,
    ResourceSlice,
    ResourceSliceSpec,
)

DRIVER = "test-driver.cdi.k8s.io"
CLASS = "test-class"
SELECTOR = (f'device.attributes["{DRIVER}"].driverVersion.major() >= 1 && '
            f'device.capacity["{DRIVER}"].memory.isGreaterThan(quantity("1Mi"))')
NUMA = "dra.example.com/numa"
SLICE_ATTR = "dra.example.com/slice"
DRA_LABEL = {"node-with-dra": "true"}
COLD_EVERY = 10  # fill: one pod in ten is scheduled cold
SEGMENTS = ("shapes", "full", "fill", "partitionable", "backtracking", "hetero",
            "hetero-dense")
HETERO_FLEETS = {"hetero": "mixed", "hetero-dense": "dense"}

clock = time.process_time


# ---- object builders ------------------------------------------------------------


def cel(expr: str) -> DeviceSelector:
    return DeviceSelector(cel=CELDeviceSelector(expression=expr))


def device_class(name: str, driver: str) -> DeviceClass:
    return DeviceClass(metadata=ObjectMeta(name=name), spec=DeviceClassSpec(
        selectors=[cel(f'device.driver == "{driver}"')]))


CLASSES = [device_class(CLASS, DRIVER), device_class("empty-class", "no-such-driver")]


def node_slice(node: str, count: int) -> ResourceSlice:
    devices = [Device(
        name=f"instance-{i}",
        attributes={"model": DeviceAttribute(string="A100"),
                    "family": DeviceAttribute(string="GPU"),
                    "driverVersion": DeviceAttribute(version="1.2.3"),
                    NUMA: DeviceAttribute(int_=i)},
        capacity={"memory": DeviceCapacity(value=parse_quantity("1Gi"))},
    ) for i in range(count)]
    return ResourceSlice(metadata=ObjectMeta(name=f"{node}-slice"), spec=ResourceSliceSpec(
        driver=DRIVER, node_name=node,
        pool=ResourcePool(name=node, generation=1, resource_slice_count=1), devices=devices))


def request(name: str, cls: str = CLASS, count: int = 1, *selectors: str) -> DeviceRequest:
    return DeviceRequest(name=name, exactly=ExactDeviceRequest(
        device_class_name=cls, allocation_mode="ExactCount", count=count,
        selectors=[cel(s) for s in selectors]))


def make_claim(name: str, requests: Sequence[DeviceRequest],
               constraints: Sequence[DeviceConstraint] = ()) -> ResourceClaim:
    return ResourceClaim(metadata=ObjectMeta(name=name, namespace="bench", uid=name),
                         spec=ResourceClaimSpec(devices=DeviceClaim(
                             requests=list(requests), constraints=list(constraints))))


CLAIM_SHAPES: dict[str, Callable[[str], ResourceClaim]] = {
    "one-device": lambda n: make_claim(n, [request("req-0")]),
    "selector": lambda n: make_claim(n, [request("req-0", CLASS, 1, SELECTOR)]),
    "match-attribute": lambda n: make_claim(
        n, [request("req-0"), request("req-1")],
        [DeviceConstraint(match_attribute=f"{DRIVER}/model")]),
    "first-available": lambda n: make_claim(n, [DeviceRequest(name="req-0", first_available=[
        DeviceSubRequest(name="none", device_class_name="empty-class", count=1),
        DeviceSubRequest(name="any", device_class_name=CLASS, count=1)])]),
}


def dra_selector() -> NodeSelector:
    return NodeSelector(node_selector_terms=[NodeSelectorTerm(match_expressions=[
        NodeSelectorRequirement(key="node-with-dra", operator="In", values=["true"])])])


def partitionable_slices(pools: int) -> list[ResourceSlice]:
    """upstream's resourceslice-partitionable-{countersets,devices}.yaml, ``pools`` times."""
    one = parse_quantity("1")
    out = []
    for i in range(pools):
        name = f"resourceslice-{i}"

        def dev(dn: str, pre: bool, cap: str, *consumes: str, i: int = i) -> Device:
            return Device(
                name=dn,
                attributes={"preallocate": DeviceAttribute(bool_=pre),
                            SLICE_ATTR: DeviceAttribute(int_=i)},
                capacity={"counters": DeviceCapacity(value=parse_quantity(cap))},
                consumes_counters=[DeviceCounterConsumption(
                    counter_set="counter-set", counters={c: Counter(value=one) for c in consumes})])

        spec: dict[str, Any] = {"driver": DRIVER, "node_selector": dra_selector(),
                                "pool": ResourcePool(name=name, generation=1,
                                                     resource_slice_count=2)}
        out.append(ResourceSlice(metadata=ObjectMeta(name=f"resourceslice-countersets-{i}"),
                                 spec=ResourceSliceSpec(shared_counters=[CounterSet(
                                     name="counter-set",
                                     counters={f"counter{k}": Counter(value=one)
                                               for k in range(1, 5)})], **spec)))
        out.append(ResourceSlice(metadata=ObjectMeta(name=f"resourceslice-devices-{i}"),
                                 spec=ResourceSliceSpec(devices=[
                                     dev("device-2-counters-1", True, "2", "counter1", "counter2"),
                                     dev("device-2-counters-2", False, "2", "counter3", "counter4"),
                                     dev("device-1-counter-1", False, "1", "counter1"),
                                     dev("device-1-counter-2", False, "1", "counter2"),
                                     dev("device-1-counter-3", False, "1", "counter3"),
                                     dev("device-1-counter-4", False, "1", "counter4")], **spec)))
    return out


def backtracking_slices() -> list[ResourceSlice]:
    """upstream's resourceslice-partitionable-backtracking-{countersets,devices}.yaml, index 0."""
    pool = ResourcePool(name="resourceslice-0", generation=1, resource_slice_count=2)
    counters = CounterSet(name="counter-set-for-cpu", counters={
        f"cpu{k}": Counter(value=parse_quantity("1")) for k in range(1, 9)})
    memory = CounterSet(name="counter-set-for-mem",
                        counters={"mem": Counter(value=parse_quantity("70Gi"))})
    devices = [Device(name=f"device-{k}", consumes_counters=[
        DeviceCounterConsumption(counter_set="counter-set-for-cpu",
                                 counters={f"cpu{k}": Counter(value=parse_quantity("1"))}),
        DeviceCounterConsumption(counter_set="counter-set-for-mem", counters={
            "mem": Counter(value=parse_quantity("20Gi" if k == 1 else "10Gi"))})])
        for k in range(1, 9)]
    return [
        ResourceSlice(metadata=ObjectMeta(name="resourceslice-countersets-0"),
                      spec=ResourceSliceSpec(driver=DRIVER, node_name="scheduler-perf-dra-0",
                                             pool=pool, shared_counters=[counters, memory])),
        ResourceSlice(metadata=ObjectMeta(name="resourceslice-devices-0"),
                      spec=ResourceSliceSpec(driver=DRIVER, node_selector=dra_selector(),
                                             pool=pool, devices=devices)),
    ]


# ---- kube-scheduler's procedure ---------------------------------------------------


def feasible_nodes_to_find(nodes: int) -> int:
    """kube-scheduler's numFeasibleNodesToFind with the default percentage (adaptive)."""
    if nodes < 100:
        return nodes
    percentage = max(5, 50 - nodes // 125)  # minFeasibleNodesPercentageToFind = 5
    return max(100, nodes * percentage // 100)


@dataclass
class Cluster:
    """Slices, classes, nodes and allocated state; ``warm`` is the long-lived allocator."""

    slices: list[ResourceSlice]
    classes: list[DeviceClass]
    nodes: list[NodeView]
    state: AllocatedState = field(default_factory=AllocatedState)
    warm: Allocator | None = None
    position: int = 0  # where the next pod's node search starts

    def allocator(self, cold: bool) -> Allocator:
        """A new SliceIndex and Allocator (cold) or the one kept across pods (warm)."""
        if cold or self.warm is None:
            engine = Allocator(SliceIndex(self.slices), self.classes, self.state)
            if not cold:
                self.warm = engine
            return engine
        return self.warm


@dataclass
class PodResult:
    """What one pod's node search saw: the calls (for the check line) and the first fit."""

    calls: list[tuple[str, AllocationOutcome]]
    first_fit: Allocated | None


def schedule_pod(cluster: Cluster, claim: ResourceClaim, cold: bool,
                 record: bool = False) -> PodResult:
    """One pod: a new allocator, then nodes round-robin until enough are feasible."""
    engine = cluster.allocator(cold)
    nodes = cluster.nodes
    target = feasible_nodes_to_find(len(nodes))
    found = 0
    calls: list[tuple[str, AllocationOutcome]] = []
    first: Allocated | None = None
    for _ in range(len(nodes)):
        if found >= target:
            break
        node = nodes[cluster.position]
        cluster.position = (cluster.position + 1) % len(nodes)
        out = engine.allocate([claim], node, explain_failure=False)
        if record:
            calls.append((node.name, out))
        if isinstance(out, Allocated):
            found += 1
            if first is None:
                first = out
    return PodResult(calls, first)


def check_text(calls: Sequence[tuple[str, AllocationOutcome]]) -> str:
    """node|outcome|request=pool/device,...|steps lines over the calls; the devices of
    all the pod's claims in order (the Go harness writes the same text)."""
    lines = []
    for node, out in calls:
        if isinstance(out, Allocated):
            parts = []
            for claim in out.claims:
                results = claim.status.allocation
                assert results is not None
                parts += [f"{r.request}={r.pool}/{r.device}" for r in results.devices.results]
            lines.append(f"{node}|allocated|{','.join(parts)}|{out.steps}\n")
        else:
            lines.append(f"{node}|{out.kind}||{out.steps}\n")
    return "".join(lines)


def digest(text: str) -> str:
    if os.environ.get("CHECK_TEXT"):  # to find where the two sides differ
        sys.stderr.write(text)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def check_digest(calls: Sequence[tuple[str, AllocationOutcome]]) -> str:
    """The first 16 hex digits of a SHA-256 over ``check_text``."""
    return digest(check_text(calls))


def timed_pods(one_pod: Callable[[], object], pods: int, rounds: int = 3) -> float:
    """Best-of-``rounds`` mean CPU seconds per pod."""
    best = float("inf")
    for _ in range(rounds):
        start = clock()
        for _ in range(pods):
            one_pod()
        best = min(best, (clock() - start) / pods)
    return best


def report(label: str, value: float, unit: str = "us") -> None:
    print(f"{label:<58} {value:>12.1f} {unit}", flush=True)


def fill_state(cluster: Cluster, per_node: int, fraction: float) -> None:
    """Allocate one-device claims until ``fraction`` of every node's devices are used."""
    engine = Allocator(SliceIndex(cluster.slices), cluster.classes, cluster.state)
    for node in cluster.nodes:
        for j in range(int(per_node * fraction)):
            out = engine.allocate([make_claim(f"fill-{node.name}-{j}", [request("req-0")])],
                                  node, explain_failure=False)
            assert isinstance(out, Allocated), out
            cluster.state.add_claim(out.claims[0])


def node_cluster(nodes: int, devices: int = 10) -> Cluster:
    names = [f"node-{i:04d}" for i in range(nodes)]
    return Cluster([node_slice(n, devices) for n in names], CLASSES,
                   [NodeView(n) for n in names])


# ---- the segments -------------------------------------------------------------------


def bench_shapes(quick: bool) -> None:
    pods = 2 if quick else 20  # enough that a full collection in one round moves the mean little
    for fraction, tag in ((0.0, "empty"), (0.5, "half full")):
        cluster = node_cluster(500)
        fill_state(cluster, 10, fraction)
        for shape, make in CLAIM_SHAPES.items():
            label = f"pod {shape} ({tag})"
            cluster.position = 0
            first = schedule_pod(cluster, make(f"check-{shape}"), cold=True, record=True)
            print(f"check {label} {check_digest(first.calls)}")
            for variant in ("cold", "warm"):
                cluster.position = 0
                counter = iter(range(10**9))

                def one(cluster: Cluster = cluster, make: Callable[[str], ResourceClaim] = make,
                        counter: Any = counter, cold: bool = variant == "cold",
                        shape: str = shape) -> None:
                    schedule_pod(cluster, make(f"{shape}-{next(counter)}"), cold)

                if variant == "warm":
                    one()  # the caches a long-lived allocator has in a real run
                gc.collect()
                report(f"{label} {variant}", timed_pods(one, pods) * 1e6)


def bench_full(quick: bool) -> None:
    cluster = node_cluster(100 if quick else 500)
    fill_state(cluster, 10, 1.0)
    first = schedule_pod(cluster, CLAIM_SHAPES["one-device"]("check-full"), cold=True,
                         record=True)
    assert first.first_fit is None
    label = f"pod, all {len(cluster.nodes)} nodes full"
    print(f"check {label} {check_digest(first.calls)}")
    for variant in ("cold", "warm"):
        counter = iter(range(10**9))

        def one(counter: Any = counter, cold: bool = variant == "cold") -> None:
            schedule_pod(cluster, CLAIM_SHAPES["one-device"](f"full-{next(counter)}"), cold)

        if variant == "warm":
            one()
        gc.collect()
        report(f"{label} {variant}", timed_pods(one, 3 if quick else 20) * 1e6)


def bench_fill(quick: bool) -> None:
    """Every pod is committed on the first feasible node of its search. A cold pod
    costs about 20 warm ones, so one pod in ``COLD_EVERY`` is scheduled cold (a new
    SliceIndex and Allocator) and the others warm; each rate is its pods over their
    CPU time. Both kinds choose the same node (the check hashes every placement)."""
    nodes = 50 if quick else 500
    cluster = node_cluster(nodes)
    pods = nodes * 10
    claims = [CLAIM_SHAPES["one-device"](f"pod-{i}") for i in range(pods)]
    placed: list[tuple[str, AllocationOutcome]] = []
    seconds = {(cold, half): 0.0 for cold in (False, True) for half in (False, True)}
    counts = dict.fromkeys(seconds, 0)
    gc.collect()
    for i, claim in enumerate(claims):
        cold = i % COLD_EVERY == 0
        start = clock()
        fit = schedule_pod(cluster, claim, cold).first_fit
        assert fit is not None, "cluster full too early"
        cluster.state.add_claim(fit.claims[0])
        elapsed = clock() - start
        for half in (False, True):
            if not half or i >= pods // 2:
                seconds[cold, half] += elapsed
                counts[cold, half] += 1
        allocation = fit.claims[0].status.allocation
        assert allocation is not None
        placed.append((allocation.devices.results[0].pool, fit))
    label = f"fill {pods} pods on {nodes} nodes"
    print(f"check {label} {check_digest(placed)}")
    for half, part in ((False, "all pods"), (True, "second half")):
        for cold, variant in ((True, "cold"), (False, "warm")):
            report(f"{label}, {part} {variant}", counts[cold, half] / seconds[cold, half],
                   "pods/s")


def partitionable_cluster(pools: int, nodes: int) -> Cluster:
    cluster = Cluster(partitionable_slices(pools), CLASSES[:1],
                      [NodeView(f"scheduler-perf-dra-{k}", DRA_LABEL) for k in range(nodes)])
    # upstream allocates 2,000 claims with a selector (counters >= 2 && preallocate)
    # first: each takes device-2-counters-1 of one pool.
    for i in range(pools):
        cluster.state.add_allocation(f"init/claim-{i}", AllocationResult(
            devices=DeviceAllocationResult(results=[DeviceRequestAllocationResult(
                request="req-0", driver=DRIVER, pool=f"resourceslice-{i}",
                device="device-2-counters-1")])))
    return cluster


def partitionable_claim(name: str) -> ResourceClaim:
    return make_claim(name, [request("req-0", CLASS, 2)],
                      [DeviceConstraint(requests=["req-0"], match_attribute=SLICE_ATTR)])


def bench_first_call_and_pod(cluster: Cluster, label: str, make: Callable[[str], ResourceClaim],
                             pods: int, rounds: int) -> None:
    """Per pod: the first Allocate with the allocator's construction, and the whole pod."""
    cluster.position = 0
    first = schedule_pod(cluster, make("check"), cold=True, record=True)
    print(f"check {label} {check_digest(first.calls)}")
    for variant in ("cold", "warm"):
        cold = variant == "cold"
        if not cold:
            schedule_pod(cluster, make("warm-up"), cold)
        gc.collect()
        best = float("inf")
        for k in range(3):  # best of 3 means over ``pods`` first calls
            start = clock()
            for j in range(pods):
                engine = cluster.allocator(cold)
                out = engine.allocate([make(f"first-{variant}-{k}-{j}")], cluster.nodes[0],
                                      explain_failure=False)
                assert isinstance(out, Allocated), out
            best = min(best, (clock() - start) / pods)
        report(f"{label}, first Allocate with a new allocator {variant}", best * 1e6)
        counter = iter(range(10**9))

        def one(counter: Any = counter, cold: bool = cold) -> None:
            schedule_pod(cluster, make(f"pod-{next(counter)}"), cold)

        cluster.position = 0
        report(f"{label}, pod ({len(cluster.nodes)} nodes) {variant}",
               timed_pods(one, pods, rounds) * 1e6)


def bench_partitionable(quick: bool) -> None:
    pools, nodes = (200, 10) if quick else (2000, 100)
    cluster = partitionable_cluster(pools, nodes)
    # One pod tries 100 nodes of 12,000 devices each: seconds per pod on both sides.
    bench_first_call_and_pod(cluster, f"partitionable {pools} pools", partitionable_claim, 1, 1)


def bench_backtracking(quick: bool) -> None:
    cluster = Cluster(backtracking_slices(), CLASSES[:1],
                      [NodeView("scheduler-perf-dra-0", DRA_LABEL), NodeView("scheduler-perf-0")])
    bench_first_call_and_pod(cluster, "backtracking",
                             lambda n: make_claim(n, [request("req-0", CLASS, 7)]),
                             20 if quick else 200, 3)


class NoTwinAllocator(Allocator):
    """The twin lookup switched off: every node is searched (issue 34's figures
    that a fleet of identical nodes cannot flatter)."""

    def _twin_probe(self, *args: Any) -> None:
        return None


def hetero_sizes(quick: bool) -> tuple[int, int]:
    """Nodes and pods of the heterogeneous segments."""
    return (100, 20) if quick else (500, 200)


def hetero_document(segment: str, quick: bool) -> dict[str, Any]:
    nodes, pods = hetero_sizes(quick)
    return hetero_fleet.generate(HETERO_FLEETS[segment], nodes, pods)


def write_hetero(directory: str, quick: bool) -> list[str]:
    """The heterogeneous inputs as JSON files (``<segment>.json``) in ``directory``."""
    os.makedirs(directory, exist_ok=True)
    paths = []
    for segment in HETERO_FLEETS:
        path = os.path.join(directory, f"{segment}.json")
        with open(path, "w", encoding="utf-8") as out:
            json.dump(hetero_document(segment, quick), out, separators=(",", ":"))
        paths.append(path)
    return paths


@dataclass
class HeteroRun:
    """Per shape: each pod's CPU seconds and the text of its calls (for the check)."""

    seconds: dict[str, list[float]] = field(default_factory=dict)
    text: dict[str, list[str]] = field(default_factory=dict)


def hetero_search(make: type[Allocator], slices: list[ResourceSlice],
                  inp: hetero_fleet.Input, state: AllocatedState, claims: list[ResourceClaim],
                  nodes: Sequence[NodeView], position: int,
                  ) -> tuple[float, list[tuple[str, AllocationOutcome]]]:
    """One cold pod: a new SliceIndex and Allocator, nodes round-robin from
    ``position`` until enough are feasible; its CPU seconds and its calls."""
    calls: list[tuple[str, AllocationOutcome]] = []
    target = feasible_nodes_to_find(len(nodes))
    start = clock()
    engine = make(SliceIndex(slices), inp.classes, state)
    found = 0
    for _ in range(len(nodes)):
        if found >= target:
            break
        node = nodes[position]
        position = (position + 1) % len(nodes)
        out = engine.allocate(claims, node, explain_failure=False)
        calls.append((node.name, out))
        if isinstance(out, Allocated):
            found += 1
    return clock() - start, calls


def run_hetero(inp: hetero_fleet.Input) -> dict[bool, HeteroRun]:
    """Every pod of the stream, cold, timed alone with the twin lookup on and off
    (back to back, which one first alternating: both meet the same CEL cache);
    slice changes applied before each pod."""
    slices = {s.name: s for s in inp.slices}  # insertion order = the Go side's list order
    state = AllocatedState()
    by_pool: dict[tuple[str, str], list[str]] = {}
    for driver, pool, device in inp.allocated:
        by_pool.setdefault((driver, pool), []).append(device)
    for (driver, pool), names in by_pool.items():
        state.add_allocation(f"prefill/{pool}", AllocationResult(
            devices=DeviceAllocationResult(results=[DeviceRequestAllocationResult(
                request="prefill", driver=driver, pool=pool, device=name) for name in names])))
    nodes = [NodeView(name, labels) for name, labels in inp.nodes]
    position = 0
    runs = {True: HeteroRun(), False: HeteroRun()}
    gc.collect()
    for i, pod in enumerate(inp.pods):
        for name in pod.remove:
            del slices[name]
        for added in pod.add:
            slices[added.name] = added
        current = list(slices.values())
        calls: list[tuple[str, AllocationOutcome]] = []
        for twins in (i % 2 == 0, i % 2 != 0):
            make = Allocator if twins else NoTwinAllocator
            elapsed, calls = hetero_search(make, current, inp, state, pod.claims, nodes,
                                           position)
            run = runs[twins]
            run.seconds.setdefault(pod.shape, []).append(elapsed)
            run.text.setdefault(pod.shape, []).append(check_text(calls))
        position = (position + len(calls)) % len(nodes)
    return runs


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank percentile (the Go harness computes the same)."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))  # ceil(n * q / 100), at least 1
    return ordered[int(rank) - 1]


def bench_hetero(segment: str, quick: bool, path: str | None = None) -> None:
    if path is None:
        doc = hetero_document(segment, quick)
    else:
        with open(path, encoding="utf-8") as src:
            doc = json.load(src)
    inp = hetero_fleet.read(doc)
    label = f"hetero {inp.fleet} {len(inp.nodes)} nodes"
    runs = run_hetero(inp)
    off, on = runs[False], runs[True]
    if off.text != on.text:
        raise SystemExit(f"{label}: the twin lookup changed an outcome")
    everything = []
    for shape in off.seconds:
        text = "".join(off.text[shape])
        everything.append(text)
        print(f"check {label} {shape} {digest(text)}")
    whole = hashlib.sha256("".join(everything).encode()).hexdigest()[:16]
    print(f"check {label} all pods {whole}")
    for twins, suffix in ((True, ""), (False, ", no twins")):
        seconds = runs[twins].seconds
        for shape in [*seconds, "all pods"]:
            values = ([v for vs in seconds.values() for v in vs] if shape == "all pods"
                      else seconds[shape])
            for q, name in ((50, "p50"), (90, "p90")):
                report(f"{label} {shape} {name}{suffix} cold", percentile(values, q) * 1e6)


BENCHES: dict[str, Callable[[bool], None]] = {
    "shapes": bench_shapes, "full": bench_full, "fill": bench_fill,
    "partitionable": bench_partitionable, "backtracking": bench_backtracking,
    "hetero": lambda quick: bench_hetero("hetero", quick),
    "hetero-dense": lambda quick: bench_hetero("hetero-dense", quick),
}


# ---- side by side with the Go harness ---------------------------------------------------

LINE = re.compile(r"^(\S.*?)\s+(-?\d+(?:\.\d+)?) (us|pods/s)$")
CHECK = re.compile(r"^check (.*) ([0-9a-f]{16})$")


@dataclass
class Run:
    """One process's figures: label -> (value, unit), and check label -> digest."""

    figures: dict[str, tuple[float, str]] = field(default_factory=dict)
    checks: dict[str, str] = field(default_factory=dict)


def parse_run(text: str) -> Run:
    run = Run()
    for line in text.splitlines():
        if m := CHECK.match(line):
            run.checks[m.group(1)] = m.group(2)
        elif m := LINE.match(line):
            run.figures[m.group(1)] = (float(m.group(2)), m.group(3))
    return run


def run_process(argv: list[str], env: dict[str, str]) -> Run:
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{argv[0]} failed ({done.returncode}): {done.stderr.strip()[-800:]}")
    return parse_run(done.stdout)


def go_label(label: str) -> str:
    return label.removesuffix(" cold").removesuffix(" warm")


def side_by_side(go: Sequence[Run], py: Sequence[Run]) -> list[str]:
    """Markdown rows: per figure, Go's and dralab's median over the rounds and the ratio
    of dralab's time to Go's (below 1 = dralab faster)."""
    rows = ["| figure | unit | Go | dralab cold | dralab warm | cold / Go | warm / Go |",
            "|---|---|---|---|---|---|---|"]
    labels = list(dict.fromkeys(go_label(x) for r in py for x in r.figures))

    def median(runs: Sequence[Run], label: str) -> float | None:
        values = [r.figures[label][0] for r in runs if label in r.figures]
        return statistics.median(values) if values else None

    for label in labels:
        unit = next(r.figures[k][1] for r in py for k in r.figures if go_label(k) == label)
        g = median(go, label.replace(", no twins", ""))  # Go has no twin lookup
        cells = [label, unit, "-" if g is None else f"{g:.1f}"]
        ratios = []
        for variant in ("cold", "warm"):
            p = median(py, f"{label} {variant}")
            cells.append("-" if p is None else f"{p:.1f}")
            if g is None or p is None or p == 0 or g == 0:
                ratios.append("-")
            else:
                ratios.append(f"{(g / p if unit == 'pods/s' else p / g):.2f}")
        rows.append("| " + " | ".join(cells + ratios) + " |")
    checks_go = {k: v for r in go for k, v in r.checks.items()}
    checks_py = {k: v for r in py for k, v in r.checks.items()}
    for label in sorted(checks_py):
        theirs = checks_go.get(label)
        verdict = ("same devices and search steps" if theirs == checks_py[label]
                   else "Go has no check" if theirs is None else "DIFFERENT outcomes")
        rows.append(f"\ncheck {label}: {verdict}")
    return rows


def compare_with_go(go_binary: str, rounds: int, quick: bool, only: str | None) -> int:
    env = dict(os.environ, GOMAXPROCS="1", OMP_NUM_THREADS="1")
    segments = [only] if only else list(SEGMENTS)
    go_runs: list[Run] = []
    py_runs: list[Run] = []
    # The heterogeneous inputs: one JSON file per segment, read by both sides.
    inputs_dir = tempfile.mkdtemp(prefix="dralab-hetero-")
    inputs = dict(zip(HETERO_FLEETS, write_hetero(inputs_dir, quick), strict=True))
    for r in range(rounds):
        go_round, py_round = Run(), Run()
        for seg in segments:
            quick_flags = ["-quick"] if quick else []
            go_input = ["-input", inputs[seg]] if seg in inputs else []
            py_input = ["--hetero-input", inputs[seg]] if seg in inputs else []
            print(f"round {r + 1}/{rounds} {seg}", file=sys.stderr, flush=True)
            g = run_process([go_binary, "-only", seg, *quick_flags, *go_input], env)
            p = run_process([sys.executable, os.path.abspath(__file__), "--only", seg,
                             *(["--quick"] if quick else []), *py_input], env)
            go_round.figures.update(g.figures)
            go_round.checks.update(g.checks)
            py_round.figures.update(p.figures)
            py_round.checks.update(p.checks)
            for label, (value, unit) in p.figures.items():  # progress, on stderr
                theirs = g.figures.get(go_label(label))
                go_text = f"{theirs[0]:.1f}" if theirs else "-"
                print(f"  {label}: {value:.1f} {unit} (Go {go_text})", file=sys.stderr,
                      flush=True)
        go_runs.append(go_round)
        py_runs.append(py_round)
    print(f"Median of {rounds} interleaved rounds, process CPU time, one thread each "
          f"(Go: {go_binary}, python {sys.version.split()[0]}).\n")
    print("\n".join(side_by_side(go_runs, py_runs)))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller shapes (smoke test)")
    parser.add_argument("--only", choices=SEGMENTS)
    parser.add_argument("--go", metavar="PATH",
                        help="the Go harness binary (benchmarks/go): run both, interleaved")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds with --go")
    parser.add_argument("--write-hetero", metavar="DIR",
                        help="write the heterogeneous segments' JSON inputs and stop")
    parser.add_argument("--hetero-input", metavar="FILE",
                        help="with --only hetero|hetero-dense: read this input")
    args = parser.parse_args(argv)
    if args.write_hetero:
        for path in write_hetero(args.write_hetero, args.quick):
            print(path)
        return 0
    if args.hetero_input and args.only not in HETERO_FLEETS:
        parser.error("--hetero-input needs --only hetero or --only hetero-dense")
    if args.go:
        return compare_with_go(args.go, args.rounds, args.quick, args.only)
    print(f"{'figure (process CPU time)':<58} {'measured':>12}")
    for seg in [args.only] if args.only else SEGMENTS:
        if args.hetero_input:
            try:
                bench_hetero(seg, args.quick, args.hetero_input)
            except (OSError, ValueError, KeyError, TypeError) as exc:
                parser.exit(2, f"bench_allocator: {args.hetero_input}: {exc}\n")
        else:
            BENCHES[seg](args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())

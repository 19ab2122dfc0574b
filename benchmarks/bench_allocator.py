"""Allocator benchmark: upstream scheduler_perf shapes rebuilt in memory.

Cluster: per node one ResourceSlice of driver ``test-driver.cdi.k8s.io``,
pool = node name, devices ``instance-<i>`` with model "A100", family "GPU",
driverVersion 1.2.3, ``dra.example.com/numa`` = i and 1Gi of memory; a
DeviceClass ``test-class`` selecting the driver. Prints microseconds per
allocation per shape and the ratio to the upstream reference range (Go
allocator as measured by scheduler_perf; ratio 1.0 = as fast as its slow end).

    python benchmarks/bench_allocator.py [--quick]
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from dralab.allocator import Allocated, AllocatedState, Allocator, SliceIndex, Unschedulable
from dralab.api.base import ObjectMeta
from dralab.api.quantity import parse_quantity
from dralab.api.resource import (
    CELDeviceSelector,
    Counter,
    CounterSet,
    Device,
    DeviceAttribute,
    DeviceCapacity,
    DeviceClaim,
    DeviceClass,
    DeviceClassSpec,
    DeviceConstraint,
    DeviceCounterConsumption,
    DeviceRequest,
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

# Upstream reference, microseconds per allocation (low, high), or pods/s for "fill".
REFERENCE = {
    "one-device": (9, 19),
    "selector": (15, 34),
    "first-available": (53, 113),
    "node-full": (4, 13),
    "fill-pods-per-s": (254, 343),
    "partitionable-per-node": (90_000, 120_000),
    "backtracking": (200, 200),
}


def cel(expr: str) -> DeviceSelector:
    return DeviceSelector(cel=CELDeviceSelector(expression=expr))


def device_class(name: str, driver: str) -> DeviceClass:
    return DeviceClass(metadata=ObjectMeta(name=name), spec=DeviceClassSpec(
        selectors=[cel(f'device.driver == "{driver}"')]))


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


def cluster(nodes: int, devices: int) -> tuple[SliceIndex, list[DeviceClass], list[str]]:
    names = [f"node-{i:04d}" for i in range(nodes)]
    index = SliceIndex([node_slice(n, devices) for n in names])
    classes = [device_class(CLASS, DRIVER), device_class("empty-class", "no-such-driver")]
    return index, classes, names


def fill(engine: Allocator, nodes: Sequence[str], per_node: int, fraction: float) -> None:
    """Allocate one-device claims until ``fraction`` of every node's devices are used."""
    for node in nodes:
        for j in range(int(per_node * fraction)):
            out = engine.allocate([make_claim(f"fill-{node}-{j}", [request("req-0")])], node,
                                  explain_failure=False)
            assert isinstance(out, Allocated), out
            engine.state.add_claim(out.claims[0])


def timed(fn: Callable[[], object], repeat: int) -> float:
    """Best-of-3 mean seconds per call (callers feed every call a fresh claim)."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(repeat):
            fn()
        best = min(best, (time.perf_counter() - start) / repeat)
    return best


def report(label: str, value: float, ref: tuple[float, float] | None, unit: str = "us") -> None:
    """Print one row; the ratio is our time over upstream's (below 1 = faster than upstream)."""
    if ref is None:
        print(f"{label:<58} {value:>10.1f} {unit:<6}")
        return
    low, high = ref
    if unit == "pods/s":  # a rate: time per pod is its inverse
        slow_end, fast_end = low / value, high / value
    else:
        slow_end, fast_end = value / high, value / low
    print(f"{label:<58} {value:>10.1f} {unit:<6} upstream {low:g}-{high:g} {unit}; "
          f"time ratio {slow_end:.2f}..{fast_end:.2f}")


def bench_shapes(quick: bool) -> None:
    index, classes, names = cluster(500, 10)
    for fraction, tag in ((0.0, "empty"), (0.5, "half full")):
        state = AllocatedState()
        engine = Allocator(index, classes, state)
        fill(engine, names, 10, fraction)
        gc.collect()
        gc.freeze()
        for shape, make in CLAIM_SHAPES.items():
            repeat = 300 if quick else 2000
            # Fresh claim objects for every call: nothing prepared is reused.
            claims = [make(f"{shape}-{i}") for i in range(3 * repeat)]
            it = iter(range(10**9))

            def one(claims: list[ResourceClaim] = claims, it: object = it,
                    engine: Allocator = engine) -> None:
                i = next(it) % len(claims)  # type: ignore[call-overload]
                out = engine.allocate([claims[i]], names[i % len(names)],
                                      explain_failure=False)
                assert isinstance(out, Allocated), out

            seconds = timed(one, repeat)
            ref = REFERENCE.get(shape)
            report(f"{shape} ({tag})", seconds * 1e6, ref if fraction == 0 else None)
        gc.unfreeze()
    # Full nodes: the allocator must say no quickly.
    state = AllocatedState()
    engine = Allocator(index, classes, state)
    fill(engine, names[:50], 10, 1.0)
    claims = [CLAIM_SHAPES["one-device"](f"full-{i}") for i in range(3000)]
    it = iter(range(10**9))

    def on_full() -> None:
        i = next(it) % len(claims)
        out = engine.allocate([claims[i]], names[i % 50], explain_failure=False)
        assert isinstance(out, Unschedulable)

    report("node already full (fresh claim per call)", timed(on_full, 1000) * 1e6, None)
    same = claims[0]

    def on_full_same_claim() -> None:
        i = next(it)
        out = engine.allocate([same], names[i % 50], explain_failure=False)
        assert isinstance(out, Unschedulable)

    report("node already full (claim tried on many nodes)", timed(on_full_same_claim, 1000) * 1e6,
           REFERENCE["node-full"])


def bench_fill(quick: bool) -> None:
    nodes, per_node = (100, 10) if quick else (500, 10)
    index, classes, names = cluster(nodes, per_node)
    state = AllocatedState()
    engine = Allocator(index, classes, state)
    pods = nodes * per_node
    claims = [CLAIM_SHAPES["one-device"](f"pod-{i}") for i in range(pods)]
    gc.collect()
    start = time.perf_counter()
    half_time = 0.0
    for i, c in enumerate(claims):
        if i == pods // 2:
            half_time = time.perf_counter()
        for n in names:  # every pod tries the nodes in order, from the first
            out = engine.allocate([c], n, explain_failure=False)
            if isinstance(out, Allocated):
                state.add_claim(out.claims[0])
                break
        else:
            raise AssertionError("cluster full too early")
    end = time.perf_counter()
    report(f"fill {pods} pods, all pods", pods / (end - start), None, "pods/s")
    report(f"fill {pods} pods, second half", (pods - pods // 2) / (end - half_time),
           REFERENCE["fill-pods-per-s"], "pods/s")


def partitionable_slices(pools: int) -> list[ResourceSlice]:
    slices = []
    counters = {"memory": "40Gi", "compute": "7", "encoders": "2", "decoders": "2"}
    parts = [("gpu", counters), ("mig-3g-0", {"memory": "20Gi", "compute": "3"}),
             ("mig-3g-1", {"memory": "20Gi", "compute": "3"}),
             ("mig-1g-0", {"memory": "5Gi", "compute": "1", "encoders": "1"}),
             ("mig-1g-1", {"memory": "5Gi", "compute": "1", "decoders": "1"}),
             ("mig-1g-2", {"memory": "5Gi", "compute": "1"})]
    for p in range(pools):
        pool = f"gpu-pool-{p:04d}"
        devices = [Device(
            name=name,
            attributes={NUMA: DeviceAttribute(int_=p % 2),
                        "profile": DeviceAttribute(string=name.rsplit("-", 1)[0])},
            capacity={"memory": DeviceCapacity(value=parse_quantity(c["memory"]))},
            consumes_counters=[DeviceCounterConsumption(
                counter_set="gpu", counters={k: Counter(value=parse_quantity(v))
                                             for k, v in c.items()})],
        ) for name, c in parts]
        spec: dict[str, Any] = {"driver": DRIVER, "all_nodes": True,
                "pool": ResourcePool(name=pool, generation=1, resource_slice_count=2)}
        slices.append(ResourceSlice(metadata=ObjectMeta(name=f"{pool}-devices"),
                                    spec=ResourceSliceSpec(devices=devices, **spec)))
        slices.append(ResourceSlice(metadata=ObjectMeta(name=f"{pool}-counters"),
                                    spec=ResourceSliceSpec(shared_counters=[CounterSet(
                                        name="gpu", counters={
                                            k: Counter(value=parse_quantity(v))
                                            for k, v in counters.items()})], **spec)))
    return slices


def bench_partitionable(quick: bool) -> None:
    pools, nodes = (400, 20) if quick else (2000, 100)
    index = SliceIndex(partitionable_slices(pools))
    classes = [device_class(CLASS, DRIVER)]
    state = AllocatedState()
    engine = Allocator(index, classes, state)
    cold: list[float] = []
    warm: list[float] = []
    for n in range(nodes):
        node = f"node-{n:04d}"
        for attempt in range(2):
            c = make_claim(f"p-{n}-{attempt}", [request("req-0", CLASS, 2)],
                           [DeviceConstraint(match_attribute=NUMA)])
            start = time.perf_counter()
            out = engine.allocate([c], node, explain_failure=False)
            (cold if attempt == 0 else warm).append(time.perf_counter() - start)
            assert isinstance(out, Allocated), out
            state.add_claim(out.claims[0])
    report(f"partitionable {pools} pools x 6, very first call (builds pools)", cold[0] * 1e6,
           REFERENCE["partitionable-per-node"])
    report("partitionable, first call on each later node",
           sum(cold[1:]) / len(cold[1:]) * 1e6, REFERENCE["partitionable-per-node"])
    report("partitionable, later calls on the same node", sum(warm) / len(warm) * 1e6, None)


def bench_backtracking() -> None:
    # d0 needs 2 of the 7 units, the others 1: first-fit takes d0 and must back out.
    units = [parse_quantity("2")] + [parse_quantity("1")] * 7
    devices = [Device(name=f"d{i}", consumes_counters=[DeviceCounterConsumption(
        counter_set="cs", counters={"units": Counter(value=units[i])})]) for i in range(8)]
    spec: dict[str, Any] = {"driver": DRIVER, "node_name": "node-0",
            "pool": ResourcePool(name="p", generation=1, resource_slice_count=2)}
    index = SliceIndex([
        ResourceSlice(metadata=ObjectMeta(name="a"), spec=ResourceSliceSpec(devices=devices,
                                                                            **spec)),
        ResourceSlice(metadata=ObjectMeta(name="b"), spec=ResourceSliceSpec(shared_counters=[
            CounterSet(name="cs", counters={"units": Counter(value=parse_quantity("7"))})],
            **spec))])
    engine = Allocator(index, [device_class(CLASS, DRIVER)])
    claims = [make_claim(f"b{i}", [request("req-0", CLASS, 7)]) for i in range(600)]
    it = iter(range(10**9))
    steps = 0

    def once() -> None:
        nonlocal steps
        out = engine.allocate([claims[next(it) % len(claims)]], "node-0")
        assert isinstance(out, Allocated), out
        steps = out.steps

    report("backtracking: 8 devices with counters, claim for 7",
           timed(once, 200) * 1e6, REFERENCE["backtracking"])
    print(f"{'':<58} ({steps} search steps per allocation)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller shapes (smoke test)")
    parser.add_argument("--only", choices=["shapes", "fill", "partitionable", "backtracking"])
    args = parser.parse_args(argv)
    print(f"{'shape':<58} {'measured':>10}")
    if args.only in (None, "shapes"):
        bench_shapes(args.quick)
    if args.only in (None, "backtracking"):
        bench_backtracking()
    if args.only in (None, "fill"):
        bench_fill(args.quick)
    if args.only in (None, "partitionable"):
        bench_partitionable(args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())

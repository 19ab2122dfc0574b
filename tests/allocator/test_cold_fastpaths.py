"""Cold-path shortcuts against the plain path, on random small fleets.

``pools._sole_pool`` gathers a node whose only pool is one plain slice of its
own without the general collecting; it must give the same pools, candidates
and verdicts as the general gather.

``pools.LazyRecords`` builds such a node's device records only as the search
reaches them; every outcome must be the one of the general gather, which
builds them all first.

``Allocator._taken_node`` answers a node whose every device is taken with no
candidates, decided from device keys before any record is built. It must give
exactly the outcome (kind, message, search steps, devices) of gathering the
node's pools and searching them, for every shape of slices, allocated state,
feature gates and claim: the node shapes include the ones it must refuse
(cluster-wide slices, incomplete pools, duplicate names, counters), and the
claims the ones it must let through (admin, "All", firstAvailable, no
requests, a missing class, too many devices).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dralab.allocator import Allocated, AllocatedState, Allocator, SliceIndex
from dralab.allocator.capacity import CapacityError, consumption
from dralab.allocator.features import AllocatorFeatures
from dralab.allocator.index import SliceEntry
from dralab.allocator.nodes import NodeView
from dralab.allocator.pools import NodePools, Pool, gather_pools
from dralab.allocator.twins import Probe
from dralab.api.features import FeatureGates
from dralab.api.resource import DeviceRequest, ResourceClaim, ResourceSlice

from .builders import (
    ALL_NODES,
    CLASS_A,
    DRIVER_A,
    all_request,
    capacity,
    claim,
    consumes,
    counter_set,
    dclass,
    device,
    distinct,
    first_available,
    in_use,
    match,
    policy_range,
    policy_values,
    request,
    rslice,
    sub,
    taint,
)
from .runner import outcome_summary

NODES = ("node-0", "node-1", "node-2")
# Node shapes: the prefilter's own shape, then shapes it must refuse.
SHAPES = ("plain", "plain", "plain", "plain", "plain",
          "incomplete", "duplicate", "two-slices", "counters",
          "unknown-counters", "empty")


class PlainAllocator(Allocator):
    """The allocator without the prefilter (and without twin nodes, which would
    answer some nodes from others): always gathers the node's pools."""

    def _taken_node(self, view: NodeView, claims: object,  # type: ignore[override]
                    entry: object = None) -> NodePools | None:
        return None

    def _twin_probe(self, view: NodeView, claims: object,  # type: ignore[override]
                    entry: object) -> Probe | None:
        return None


@dataclass(frozen=True)
class World:
    shapes: tuple[str, ...]  # per node
    sizes: tuple[int, ...]  # devices per node
    free: frozenset[tuple[int, int]]  # (node, device) pairs left free
    shared_slice: bool  # a cluster-wide allNodes slice
    shared_use: bool  # allocated devices are shares, not exclusive
    gates: tuple[bool, bool]  # DRAConsumableCapacity, DRAPartitionableDevices
    requests: tuple[tuple[str, int], ...]  # (kind, count) per request


def _slices(world: World) -> list[ResourceSlice]:
    out = []
    for n, (shape, size) in enumerate(zip(world.shapes, world.sizes, strict=True)):
        node, pool = NODES[n], f"pool-{n}"
        names = [f"d{i}" for i in range(size)]
        if shape == "duplicate" and size > 1:
            names[-1] = names[0]
        if shape == "empty":
            names = []
        # "unknown-counters": no slice declares the set, an invalid pool when partitionable.
        counters = [consumes("cs", mem=1)] if shape in ("counters", "unknown-counters") else []
        devs = [device(name, counters=counters) for name in names]
        if shape == "two-slices":
            half = len(devs) // 2
            out.append(rslice(f"{node}-a", node, pool, DRIVER_A, *devs[:half], count=2))
            out.append(rslice(f"{node}-b", node, pool, DRIVER_A, *devs[half:], count=2))
        else:
            count = 2 if shape == "incomplete" else 1
            out.append(rslice(f"{node}-slice", node, pool, DRIVER_A, *devs, count=count))
            if shape == "counters":
                out.append(rslice(f"{node}-counters", node, pool, DRIVER_A, count=1,
                                  counters=[counter_set("cs", mem=size)]))
    if world.shared_slice:
        out.append(rslice("shared", ALL_NODES, "shared-pool", DRIVER_A, device("s0")))
    return out


def _request(kind: str, count: int, i: int) -> DeviceRequest:
    name = f"r{i}"
    if kind == "admin":
        return request(name, CLASS_A, count, admin=True)
    if kind == "all":
        return all_request(name)
    if kind == "all-failing":  # its selector fails at run time on every device
        return all_request(name, CLASS_A, 'device.attributes["driver-a"].missing == 1')
    if kind == "first-available":
        return first_available(name, sub("x", "no-such-class"), sub("y", CLASS_A, count))
    if kind == "missing-class":
        return request(name, "no-such-class", count)
    if kind == "many":
        return request(name, CLASS_A, 33)
    return request(name, CLASS_A, count)


def _nodes(draw: st.DrawFn, shapes_from: Sequence[str], most: int, one_in: int
           ) -> tuple[tuple[str, ...], tuple[int, ...], frozenset[tuple[int, int]]]:
    """1-3 nodes: their shapes, device counts (1..``most``), and the (node, device)
    pairs drawn with a chance of one in ``one_in``."""
    nodes = draw(st.integers(1, 3))
    shapes = tuple(draw(st.sampled_from(shapes_from)) for _ in range(nodes))
    sizes = tuple(draw(st.integers(1, most)) for _ in range(nodes))
    drawn = frozenset((n, i) for n in range(nodes) for i in range(sizes[n])
                      if draw(st.integers(0, one_in - 1)) == 0)
    return shapes, sizes, drawn


@st.composite
def worlds(draw: st.DrawFn) -> World:
    # Mostly full nodes (one device in eight free): that is the shape under test.
    shapes, sizes, free = _nodes(draw, SHAPES, 4, 8)
    kinds = st.sampled_from(["plain", "admin", "all-failing", "plain", "all", "first-available",
                             "missing-class", "many"])
    requests = tuple(draw(st.lists(st.tuples(kinds, st.integers(1, 2)), max_size=2)))
    return World(shapes, sizes, free, draw(st.integers(0, 4)) == 0, draw(st.booleans()),
                 (draw(st.booleans()), draw(st.booleans())), requests)


def _full(shape: str, *requests: tuple[str, int], shared: bool = False) -> World:
    """One full node of ``shape``, partitionable devices on."""
    return World((shape,), (2,), frozenset(), shared, False, (False, True), requests)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds())
# Each condition of the prefilter, on a node it would otherwise take:
@example(_full("plain", ("admin", 1)))
@example(_full("plain", ("all-failing", 1)))
@example(_full("duplicate", ("plain", 1)))
@example(_full("unknown-counters", ("plain", 1)))
@example(_full("plain", ("plain", 1), shared=True))
def test_taken_node_prefilter_matches_the_plain_path(world: World) -> None:
    slices = _slices(world)
    used = [(DRIVER_A, f"pool-{n}", f"d{i}") for n in range(len(world.shapes))
            for i in range(world.sizes[n]) if (n, i) not in world.free]
    busy = [in_use(f"busy-{k}", dev, share="a1b2c3d4" if world.shared_use else None)
            for k, dev in enumerate(used)]
    consumable, partitionable = world.gates
    features = AllocatorFeatures.from_gates(FeatureGates.parse(
        f"DRAConsumableCapacity={str(consumable).lower()},"
        f"DRAPartitionableDevices={str(partitionable).lower()}"))
    classes = [dclass(CLASS_A, DRIVER_A)]
    claims: list[ResourceClaim] = [claim("c", *[_request(kind, count, i) for i, (kind, count)
                                                in enumerate(world.requests)])]
    fast = Allocator(SliceIndex(slices), classes, AllocatedState.from_claims(busy), features)
    plain = PlainAllocator(SliceIndex(slices), classes, AllocatedState.from_claims(busy),
                           features)
    # Twice: the second call finds the keys (or the pools) of the first.
    for node in [*NODES[:len(world.shapes)], *NODES[:len(world.shapes)]]:
        got = fast.allocate(claims, node, explain_failure=False)
        want = plain.allocate(claims, node, explain_failure=False)
        assert outcome_summary(got) == outcome_summary(want), node
    # A device freed after the keys were kept: the node is no longer taken.
    if busy:
        fast.state.remove_claim(busy[0])
        plain.state.remove_claim(busy[0])
    for node in NODES[:len(world.shapes)]:
        got = fast.allocate(claims, node, explain_failure=False)
        want = plain.allocate(claims, node, explain_failure=False)
        assert outcome_summary(got) == outcome_summary(want), node


def test_prefilter_takes_a_full_plain_node_and_refuses_the_others() -> None:
    """The property above is only meaningful if the prefilter fires: it does for a
    full node of the plain shape, not with a free device or a cluster-wide slice."""
    full = rslice("n-slice", "node-0", "pool-0", DRIVER_A, device("d0"), device("d1"))
    busy = [in_use("busy", (DRIVER_A, "pool-0", "d0"), (DRIVER_A, "pool-0", "d1"))]
    one = [claim("c", request("r0"))]
    engine = Allocator(SliceIndex([full]), [dclass(CLASS_A, DRIVER_A)],
                       AllocatedState.from_claims(busy))
    assert engine._taken_node(NodeView("node-0"), one) is not None
    assert engine._taken_node(NodeView("node-0"), [claim("c", request("r0", admin=True))]) is None
    half = Allocator(SliceIndex([full]), [dclass(CLASS_A, DRIVER_A)],
                     AllocatedState.from_claims(busy[:0]))
    assert half._taken_node(NodeView("node-0"), one) is None
    # As many allocated names in the pool as devices, one of them not in the slice
    # (an allocation that outlived its device): d1 is free.
    outlived = [in_use("busy", (DRIVER_A, "pool-0", "d0"), (DRIVER_A, "pool-0", "gone"))]
    stale = Allocator(SliceIndex([full]), [dclass(CLASS_A, DRIVER_A)],
                      AllocatedState.from_claims(outlived))
    assert stale._taken_node(NodeView("node-0"), one) is None
    assert isinstance(stale.allocate(one, "node-0", explain_failure=False), Allocated)
    # Two pools on the node, each one slice: the first full, the second free.
    second = rslice("n-slice-2", "node-0", "pool-1", DRIVER_A, device("d0"))
    two = Allocator(SliceIndex([full, second]), [dclass(CLASS_A, DRIVER_A)],
                    AllocatedState.from_claims(busy))
    assert two._taken_node(NodeView("node-0"), one) is None
    assert isinstance(two.allocate(one, "node-0", explain_failure=False), Allocated)
    shared = rslice("shared", ALL_NODES, "shared-pool", DRIVER_A, device("s0"))
    wide = Allocator(SliceIndex([full, shared]), [dclass(CLASS_A, DRIVER_A)],
                     AllocatedState.from_claims(busy))
    assert wide._taken_node(NodeView("node-0"), one) is None


class PlainIndex(SliceIndex):
    """The index without the sole-slice shape: every gather takes the general path."""

    def sole_slice(self, node_name: str) -> SliceEntry | None:
        return None

    def sole_raw(self, node_name: str) -> ResourceSlice | None:
        return None


def _pools_summary(pools: NodePools) -> tuple[object, ...]:
    def pool(p: Pool) -> tuple[object, ...]:
        return (p.key, p.incomplete, p.invalid, p.invalid_reason,
                tuple(e.name for e in p.slices), tuple(p.all_devices),
                {k: dict(v) for k, v in p.counter_sets.items()}, p.has_binding_conditions)

    return (pools.node.name, tuple(pool(p) for p in pools.pools), tuple(pools.by_key),
            tuple(r.key for r in pools.candidates),
            tuple((p.key, tuple(r.key for r in c)) for p, c in pools.pool_candidates.items()),
            tuple((r.key, m) for r, m in pools.broken.items()),
            None if pools.first_bad is None else pools.first_bad.key, pools.any_invalid)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds(), st.booleans())
@example(_full("plain"), True)
@example(_full("duplicate"), True)
@example(_full("unknown-counters"), True)
@example(_full("unknown-counters"), False)
def test_sole_slice_gather_matches_the_general_gather(world: World, partitionable: bool) -> None:
    slices = _slices(world)
    fast, plain = SliceIndex(slices), PlainIndex(slices)
    for name in NODES[:len(world.shapes)]:
        node = NodeView(name)
        assert _pools_summary(gather_pools(fast, node, partitionable)) == \
            _pools_summary(gather_pools(plain, node, partitionable)), name


# ---- records built as the search reaches them (pools.LazyRecords) ---------------------

LAZY_SHAPES = ("plain", "plain", "plain", "duplicate", "counters", "binding", "tainted", "multi")


@dataclass(frozen=True)
class LazyWorld:
    shapes: tuple[str, ...]  # per node
    sizes: tuple[int, ...]
    used: frozenset[tuple[int, int]]  # (node, device) pairs allocated beforehand
    requests: tuple[tuple[str, int], ...]
    constraint: str  # "", "match" or "distinct" over all requests
    binding_gate: bool  # DRADeviceBindingConditions


def _lazy_slices(world: LazyWorld) -> list[ResourceSlice]:
    out = []
    for n, (shape, size) in enumerate(zip(world.shapes, world.sizes, strict=True)):
        names = [f"d{i}" for i in range(size)]
        if shape == "duplicate" and size > 1:
            names[-1] = names[0]
        devs = [device(name, attrs={"index": i, "half": i % 2},
                       counters=[consumes("cs", mem=1)] if shape == "counters" else [],
                       binding=["ready"] if shape == "binding" and i % 2 == 0 else [],
                       taints=[taint()] if shape == "tainted" and i == 0 else [],
                       multi=shape == "multi")
                for i, name in enumerate(names)]
        out.append(rslice(f"{NODES[n]}-slice", NODES[n], f"pool-{n}", DRIVER_A, *devs))
    return out


def _lazy_request(kind: str, count: int, i: int) -> DeviceRequest:
    if kind == "selector":
        return request(f"r{i}", CLASS_A, count, f'device.attributes["{DRIVER_A}"].index >= 1')
    return _request(kind, count, i)


@st.composite
def lazy_worlds(draw: st.DrawFn) -> LazyWorld:
    shapes, sizes, used = _nodes(draw, LAZY_SHAPES, 5, 3)  # a third of the devices in use
    kinds = st.sampled_from(["plain", "plain", "selector", "all", "admin", "first-available"])
    requests = tuple(draw(st.lists(st.tuples(kinds, st.integers(1, 3)), min_size=1,
                                   max_size=2)))
    return LazyWorld(shapes, sizes, used, requests,
                     draw(st.sampled_from(["", "", "match", "distinct"])), draw(st.booleans()))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lazy_worlds(), st.booleans())
@example(LazyWorld(("plain",), (4,), frozenset({(0, 0)}), (("plain", 1),), "", False), False)
@example(LazyWorld(("binding",), (3,), frozenset(), (("plain", 2),), "", False), True)
@example(LazyWorld(("plain",), (3,), frozenset(), (("all", 1),), "", False), False)
def test_records_built_on_demand_give_the_eager_outcome(world: LazyWorld, explain: bool) -> None:
    """A node searched with its records built one at a time gives exactly the outcome
    (kind, reason, steps, devices, explanations) of the general gather, which builds
    every record first; cold, warm, and after a device is freed."""
    slices = _lazy_slices(world)
    busy = [in_use(f"busy-{k}", (DRIVER_A, f"pool-{n}", f"d{i}"))
            for k, (n, i) in enumerate(sorted(world.used))]
    features = AllocatorFeatures.from_gates(FeatureGates.parse(
        f"DRADeviceBindingConditions={str(world.binding_gate).lower()}"))
    classes = [dclass(CLASS_A, DRIVER_A)]
    requests = [_lazy_request(kind, count, i) for i, (kind, count) in enumerate(world.requests)]
    names = [r.name for r in requests]
    constraints = {"": [], "match": [match(f"{DRIVER_A}/half", *names)],
                   "distinct": [distinct(f"{DRIVER_A}/index", *names)]}[world.constraint]
    claims = [claim("c", *requests, constraints=constraints)]
    fast = Allocator(SliceIndex(slices), classes, AllocatedState.from_claims(busy), features)
    plain = Allocator(PlainIndex(slices), classes, AllocatedState.from_claims(busy), features)
    nodes = NODES[:len(world.shapes)]
    for node in [*nodes, *nodes]:
        assert outcome_summary(fast.allocate(claims, node, explain_failure=explain)) == \
            outcome_summary(plain.allocate(claims, node, explain_failure=explain)), node
    if busy:
        fast.state.remove_claim(busy[0])
        plain.state.remove_claim(busy[0])
    for node in nodes:
        assert outcome_summary(fast.allocate(claims, node, explain_failure=explain)) == \
            outcome_summary(plain.allocate(claims, node, explain_failure=explain)), node
        assert _pools_summary(fast.pools(node)) == _pools_summary(plain.pools(node)), node


def test_a_cold_search_builds_only_the_records_it_reaches() -> None:
    devs = [device(f"d{i}") for i in range(8)]
    index = SliceIndex([rslice("node-0-slice", "node-0", "pool-0", DRIVER_A, *devs)])
    busy = [in_use("busy", (DRIVER_A, "pool-0", "d0"), (DRIVER_A, "pool-0", "d1"))]
    engine = Allocator(index, [dclass(CLASS_A, DRIVER_A)], AllocatedState.from_claims(busy))
    out = engine.allocate([claim("c", request("r0"))], "node-0", explain_failure=False)
    assert [r.device for r in out.claims[0].status.allocation.devices.results] == ["d2"]
    (entry,) = index.node_slices("node-0") or ()
    # d0 and d1 are skipped as taken from their keys; only d2, the pick, is built.
    assert [rec is not None for rec in entry.partial_records()] == \
        [False, False, True] + [False] * 5
    # Asking for all of them keeps the records built so far (identity matters: caches).
    first = entry.partial_records()[2]
    assert entry.devices[2] is first and all(r is not None for r in entry.partial_records())


CAPACITY_NAMES = ("memory", "cores", f"{DRIVER_A}/memory", "bandwidth")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(CAPACITY_NAMES), st.integers(-2, 64),
                          st.sampled_from([None, "range", "values"])),
                max_size=4, unique_by=lambda c: c[0]),
       st.booleans())
@example([("memory", 8, None), ("cores", -1, None)], False)
@example([("memory", 8, "range"), ("cores", -1, None)], False)
@example([("cores", -1, None), ("memory", 8, "values")], True)
def test_whole_capacity_shortcut_matches_the_general_rule(
        caps: list[tuple[str, int, str | None]], fractional: bool) -> None:
    """``capacity.consumption`` with nothing requested and nothing consumed takes every
    capacity whole when no capacity has a request policy: the same amounts, verdict and
    error as the general rule (reached here through an empty consumed entry)."""
    policies = {None: None, "range": policy_range(1, 1, 32), "values": policy_values(1, 2, 4)}
    dev = device("d0", cap={name: capacity(value, policies[kind]) for name, value, kind in caps})
    (entry,) = SliceIndex([rslice("s", "node-0", "pool-0", DRIVER_A, dev)]).node_slices(
        "node-0") or ()
    (rec,) = entry.devices

    def outcome(consumed: dict[str, int] | None) -> object:
        try:
            return consumption(rec, None, consumed, None, fractional)
        except CapacityError as exc:
            return str(exc)

    assert outcome(None) == outcome({"\0nothing": 0})


# ---- slices indexed node by node (SliceIndex.node_slices) ------------------------------


class EagerIndex(SliceIndex):
    """The index with every slice indexed up front."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.index_all()


@st.composite
def spread_slices(draw: st.DrawFn) -> tuple[list[ResourceSlice], list[str]]:
    """Node-pinned slices whose pools span nodes (some incomplete, some of two
    generations), maybe a cluster-wide one; and an order to visit the nodes in."""
    out = []
    for k in range(draw(st.integers(1, 7))):
        node = draw(st.sampled_from(NODES))
        pool = draw(st.sampled_from(["pool-a", "pool-b", "pool-c"]))
        out.append(rslice(f"s{k}", node, pool, DRIVER_A, device(f"d{k}"),
                          count=draw(st.integers(1, 3)), generation=draw(st.integers(1, 2))))
    if draw(st.booleans()):
        out.append(rslice("shared", ALL_NODES, "pool-a", DRIVER_A, device("s0"),
                          count=draw(st.integers(1, 3))))
    order = draw(st.permutations([*NODES, "node-9"]))
    return draw(st.permutations(out)), list(order)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spread_slices(), st.booleans())
def test_nodes_indexed_on_demand_gather_what_an_eager_index_gathers(
        world: tuple[list[ResourceSlice], list[str]], partitionable: bool) -> None:
    slices, visits = world
    lazy, eager = SliceIndex(slices), EagerIndex(slices)
    assert len(lazy) == len(eager) == len(slices)
    for name in visits:
        node = NodeView(name)
        assert _pools_summary(gather_pools(lazy, node, partitionable)) == \
            _pools_summary(gather_pools(eager, node, partitionable)), name
    assert [lazy.order_of(s) for s in slices] == [eager.order_of(s) for s in slices]

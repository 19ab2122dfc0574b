"""Twin nodes (``allocator.twins``) against searching every node.

An allocator answers a node whose only pool is one plain slice from a node it
searched before when the two slices' devices are equal and their devices are
in the same allocated state. On random small fleets of such nodes (devices
drawn from a small palette, so that twins are common and near-twins too:
one attribute, capacity, taint or binding condition apart), random allocated
states (free, exclusive, shares with consumed capacity) and random claims
(selectors, counts, "All", admin, firstAvailable, matchAttribute,
distinctAttribute, capacity requests, tolerations), every outcome must be
the one of an allocator that searches every node: kind, message, steps,
subrequest choices and the whole allocation (pools, devices, node selector,
share IDs). The fleets include the shapes the memo must refuse: a
cluster-wide slice, a taint rule, counters (declared or not), a repeated
device name.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dralab.allocator import AllocatedState, Allocator, SliceIndex
from dralab.allocator import engine as engine_module
from dralab.allocator.features import AllocatorFeatures
from dralab.allocator.nodes import NodeView
from dralab.allocator.outcome import Allocated, AllocationOutcome
from dralab.allocator.pools import NodePools
from dralab.allocator.twins import Probe
from dralab.api.base import ObjectMeta
from dralab.api.features import FeatureGates
from dralab.api.resource import (
    Device,
    DeviceRequest,
    DeviceTaintRule,
    DeviceTaintRuleSpec,
    DeviceTaintSelector,
    ResourceClaim,
    ResourceSlice,
)

from .builders import (
    ALL_NODES,
    CLASS_A,
    DRIVER_A,
    all_request,
    claim,
    consumes,
    counter_set,
    dclass,
    device,
    distinct,
    first_available,
    in_use,
    match,
    request,
    rslice,
    sub,
    taint,
    toleration,
)
from .runner import outcome_summary


class SearchingAllocator(Allocator):
    """The allocator that searches every node (no twins, no taken-node prefilter)."""

    def _twin_probe(self, view: NodeView, claims: object,  # type: ignore[override]
                    entry: object) -> Probe | None:
        return None

    def _taken_node(self, view: NodeView, claims: object,  # type: ignore[override]
                    entry: object = None) -> NodePools | None:
        return None


# Device kinds: (model, numa, memory, tainted, binding, multi). Kinds 0 and 1 differ
# in one attribute, 0 and 2 in capacity, 0 and 3 in a taint, 0 and 4 in a binding
# condition; 5 is shareable.
KINDS = (("a100", 0, "2Gi", False, False, False), ("a100", 1, "2Gi", False, False, False),
         ("a100", 0, "4Gi", False, False, False), ("a100", 0, "2Gi", True, False, False),
         ("a100", 0, "2Gi", False, True, False), ("h100", 1, "8Gi", False, False, True))


def _device(name: str, kind: int, counters: bool) -> Device:
    model, numa, memory, tainted, binding, multi = KINDS[kind]
    return device(name, attrs={"model": model, "numa": numa}, cap={"memory": memory},
                  taints=[taint()] if tainted else (), binding=["ready"] if binding else (),
                  multi=multi, counters=[consumes("cs", mem=1)] if counters else ())


@dataclass(frozen=True)
class Fleet:
    layouts: tuple[tuple[int, ...], ...]  # per node: device kinds in slice order
    usage: tuple[tuple[str, ...], ...]  # per node and device: free, exclusive, share
    extra: str  # "", "shared-slice", "taint-rule", "counters"
    gates: tuple[bool, bool]  # DRAConsumableCapacity, DRADeviceBindingConditions
    requests: tuple[tuple[str, int], ...]
    constraint: str  # "", "match", "distinct"


@st.composite
def fleets(draw: st.DrawFn) -> Fleet:
    # A few layouts repeated over up to 6 nodes: twins and near-twins side by side.
    palette = draw(st.lists(st.lists(st.integers(0, len(KINDS) - 1), min_size=1, max_size=4)
                            .map(tuple), min_size=1, max_size=3))
    count = draw(st.integers(2, 6))
    layouts = tuple(draw(st.sampled_from(palette)) for _ in range(count))
    states = st.sampled_from(["free", "free", "free", "exclusive", "share", "share-big"])
    usage = tuple(tuple(draw(states) for _ in layout) for layout in layouts)
    kinds = st.sampled_from(["plain", "plain", "selector", "all", "admin", "first-available",
                             "capacity", "tolerant", "many"])
    requests = tuple(draw(st.lists(st.tuples(kinds, st.integers(1, 2)), min_size=1,
                                   max_size=2)))
    return Fleet(layouts, usage,
                 draw(st.sampled_from(["", "", "", "shared-slice", "taint-rule", "counters",
                                       "unknown-counters", "duplicate"])),
                 (draw(st.booleans()), draw(st.booleans())), requests,
                 draw(st.sampled_from(["", "match", "distinct"])))


def _slices(fleet: Fleet) -> list[ResourceSlice]:
    out = []
    # "unknown-counters": no slice declares the set (an invalid pool); "duplicate": the
    # last device repeats the first one's name on node 0 (an invalid pool).
    counters = fleet.extra in ("counters", "unknown-counters")
    for n, layout in enumerate(fleet.layouts):
        names = [f"gpu-{i}" for i in range(len(layout))]
        if fleet.extra == "duplicate" and n == 0 and len(names) > 1:
            names[-1] = names[0]
        devices = [_device(name, kind, counters) for name, kind in zip(names, layout,
                                                                        strict=True)]
        out.append(rslice(f"node-{n}-slice", f"node-{n}", f"node-{n}", DRIVER_A, *devices))
        if fleet.extra == "counters":
            out.append(rslice(f"node-{n}-counters", f"node-{n}", f"node-{n}", DRIVER_A,
                              counters=[counter_set("cs", mem=2)]))
    if fleet.extra == "shared-slice":
        out.append(rslice("shared", ALL_NODES, "shared-pool", DRIVER_A, _device("s0", 0, False)))
    return out


def _usage(fleet: Fleet) -> list[ResourceClaim]:
    out = []
    for n, states in enumerate(fleet.usage):
        for i, how in enumerate(states):
            dev = (DRIVER_A, f"node-{n}", f"gpu-{i}")
            if how == "exclusive":
                out.append(in_use(f"busy-{n}-{i}", dev))
            elif how.startswith("share"):
                out.append(in_use(f"share-{n}-{i}", dev, share=f"a1b2c3{n}{i}",
                                  consumed={"memory": "8Gi" if how == "share-big" else "1Gi"}))
    return out


def _request(kind: str, count: int, i: int) -> DeviceRequest:
    name = f"r{i}"
    if kind == "selector":
        return request(name, CLASS_A, count, 'device.attributes["driver-a"].model == "a100"')
    if kind == "all":
        return all_request(name)
    if kind == "admin":
        return request(name, CLASS_A, count, admin=True)
    if kind == "first-available":
        return first_available(name, sub("big", CLASS_A, count + 1,
                                         'device.capacity["driver-a"].memory.compareTo('
                                         'quantity("4Gi")) >= 0'),
                               sub("any", CLASS_A, count))
    if kind == "capacity":
        return request(name, CLASS_A, count, capacity_requests={"memory": "1Gi"})
    if kind == "tolerant":
        return request(name, CLASS_A, count, tolerations=[toleration()])
    if kind == "many":
        return request(name, CLASS_A, 3)
    return request(name, CLASS_A, count)


def _claim(fleet: Fleet) -> ResourceClaim:
    requests = [_request(kind, count, i) for i, (kind, count) in enumerate(fleet.requests)]
    names = [r.name for r in requests if r.first_available == []]
    constraints = []
    if fleet.constraint == "match":
        constraints = [match(f"{DRIVER_A}/numa", *names)]
    elif fleet.constraint == "distinct":
        constraints = [distinct(f"{DRIVER_A}/numa", *names)]
    return claim("c", *requests, constraints=constraints)


def _engines(fleet: Fleet) -> tuple[Allocator, Allocator]:
    consumable, binding = fleet.gates
    features = AllocatorFeatures.from_gates(FeatureGates.parse(
        f"DRAConsumableCapacity={str(consumable).lower()},"
        f"DRADeviceBindingConditions={str(binding).lower()}"))
    rules = []
    if fleet.extra == "taint-rule":  # taints one node's gpu-0 only: twins must not be reused
        rules = [DeviceTaintRule(metadata=ObjectMeta(name="rule"), spec=DeviceTaintRuleSpec(
            device_selector=DeviceTaintSelector(driver=DRIVER_A, pool="node-0", device="gpu-0"),
            taint=taint("rule-key", None, "NoSchedule")))]
    classes = [dclass(CLASS_A, DRIVER_A)]
    slices = _slices(fleet)
    used = _usage(fleet)
    return (Allocator(SliceIndex(slices, rules), classes, AllocatedState.from_claims(used),
                      features),
            SearchingAllocator(SliceIndex(slices, rules), classes,
                               AllocatedState.from_claims(used), features))


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fleets())
# A share picked (its ID is drawn: not reusable); the same device full and half used.
@example(Fleet(((5,), (5,)), (("free",), ("free",)), "", (True, False), (("plain", 1),), ""))
@example(Fleet(((5,), (5,)), (("share-big",), ("share",)), "", (True, False),
               (("capacity", 1),), ""))
# Binding conditions copied into the results; a claim without requests (no devices,
# no node selector).
@example(Fleet(((4,), (4,)), (("free",), ("free",)), "", (False, True), (("plain", 1),), ""))
@example(Fleet(((0,), (0,)), (("free",), ("free",)), "", (False, False), (), ""))
def test_twin_answers_are_the_searched_answers(fleet: Fleet) -> None:
    twins, searching = _engines(fleet)
    claims = [_claim(fleet)]
    nodes = [f"node-{n}" for n in range(len(fleet.layouts))]
    # Each node twice (the second time the allocator searches it and memoises its
    # pools), then again after a device was freed and another claim was allocated.
    for node in [*nodes, *nodes]:
        got = twins.allocate(claims, node, explain_failure=False)
        want = searching.allocate(claims, node, explain_failure=False)
        assert outcome_summary(got) == outcome_summary(want), node
    placed = None
    placer = _engines(fleet)[1]  # its share IDs must not advance the other two's generators
    for node in nodes:
        out = placer.allocate([claim("other", request("x"))], node, explain_failure=False)
        if out.kind == "allocated":
            placed = out.claims[0]  # type: ignore[union-attr]
            break
    for engine in (twins, searching):
        if engine.state.claims():
            engine.state.remove(engine.state.claims()[0])
        if placed is not None:
            engine.state.add_claim(placed)
    fresh = [_claim(fleet)]  # new claim objects: nothing remembered for them yet
    for batch in (claims, fresh):
        # A node met before searches; forgetting that makes the twins kept from
        # before the change (stale where a device's state changed) answer again.
        twins._twin_seen.clear()
        for node in nodes:
            got = twins.allocate(batch, node, explain_failure=False)
            want = searching.allocate(batch, node, explain_failure=False)
            assert outcome_summary(got) == outcome_summary(want), node


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    searched: list[str] = []
    real = engine_module.Allocator._search

    def spy(self: Allocator, view: NodeView, *args: object, **kw: object) -> AllocationOutcome:
        searched.append(view.name)
        return real(self, view, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(engine_module.Allocator, "_search", spy)
    return searched


def test_a_twin_is_answered_without_a_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """The property above only means something if twins are reused: on three equal
    nodes one search answers all three (each result names its own pool and node);
    a node whose device differs in one attribute, or is in another state, searches."""
    searched = _counting(monkeypatch)
    slices = [rslice(f"n{k}-slice", f"n{k}", f"n{k}", DRIVER_A, _device("gpu-0", 0, False),
                     _device("gpu-1", 0, False)) for k in range(3)]
    slices.append(rslice("n3-slice", "n3", "n3", DRIVER_A, _device("gpu-0", 1, False),
                         _device("gpu-1", 0, False)))
    slices.append(rslice("n4-slice", "n4", "n4", DRIVER_A, _device("gpu-0", 0, False),
                         _device("gpu-1", 0, False)))
    state = AllocatedState.from_claims([in_use("busy", (DRIVER_A, "n4", "gpu-0"))])
    engine = Allocator(SliceIndex(slices), [dclass(CLASS_A, DRIVER_A)], state)
    one = [claim("c", request("r0"))]
    outs = [engine.allocate(one, f"n{k}", explain_failure=False) for k in range(5)]
    assert searched == ["n0", "n3", "n4"]
    results = [o.claims[0].status.allocation for o in outs]  # type: ignore[union-attr]
    assert [(r.devices.results[0].pool, r.devices.results[0].device) for r in results] == [
        ("n0", "gpu-0"), ("n1", "gpu-0"), ("n2", "gpu-0"), ("n3", "gpu-0"), ("n4", "gpu-1")]
    assert [r.node_selector.node_selector_terms[0].match_fields[0].values for r in results] == [
        ["n0"], ["n1"], ["n2"], ["n3"], ["n4"]]


def test_a_replayed_outcome_builds_its_claims_once_on_first_access(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A twin's answer is an ``Allocated.deferred``: no claim is built until asked for,
    then once; the outcome equals the one the search gives and stays immutable."""
    built: list[int] = []
    real = engine_module.build_claim_at

    def counting(*args: object, **kw: object) -> object:
        built.append(1)
        return real(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(engine_module, "build_claim_at", counting)
    slices = [rslice(f"n{k}-slice", f"n{k}", f"n{k}", DRIVER_A, _device("gpu-0", 0, False))
              for k in range(2)]
    one = [claim("c", request("r0"))]
    engine = Allocator(SliceIndex(slices), [dclass(CLASS_A, DRIVER_A)], AllocatedState())
    engine.allocate(one, "n0", explain_failure=False)  # searched: the twin
    replayed = engine.allocate(one, "n1", explain_failure=False)
    assert isinstance(replayed, Allocated) and built == []
    first = replayed.claims
    assert replayed.claims is first and built == [1]
    # The same slice seen by a fresh allocator on n1 is searched, not replayed.
    searched = Allocator(SliceIndex(slices[1:]), [dclass(CLASS_A, DRIVER_A)],
                         AllocatedState()).allocate(one, "n1", explain_failure=False)
    assert replayed == searched and built == [1]
    with pytest.raises(AttributeError):
        replayed.steps = 3  # type: ignore[misc]

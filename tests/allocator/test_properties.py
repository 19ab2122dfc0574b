"""Property tests on random small fleets and claims.

Every allocation must satisfy all selectors, constraints, counters and
capacities without double-allocating a device; and whenever an independent
brute-force search finds an allocation, the allocator must find one too.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dralab.allocator import Allocated, AllocatedState, AllocationError, Allocator, SliceIndex
from dralab.api.resource import ResourceClaim

from .builders import (
    CLASS_A,
    DRIVER_A,
    NODE_1,
    claim,
    consumes,
    counter_set,
    dclass,
    device,
    distinct,
    in_use,
    match,
    request,
    rslice,
    taint,
    toleration,
)

KIND_A = 'device.attributes["driver-a"].kind == "a"'


@dataclass(frozen=True)
class Dev:
    pool: str
    name: str
    kind: str
    numa: int
    mem: int  # counter consumption (0 = none)
    tainted: bool
    multi: int  # 0 = ordinary; else capacity units of a shareable device

    @property
    def key(self) -> str:
        return f"{DRIVER_A}/{self.pool}/{self.name}"


@dataclass(frozen=True)
class Req:
    name: str
    count: int
    only_a: bool
    tolerate: bool
    units: int  # capacity units requested (0 = none: a share then takes everything)


@dataclass(frozen=True)
class Claim:
    name: str
    reqs: tuple[Req, ...]
    constraint: str  # "", "match", "distinct"


@dataclass(frozen=True)
class World:
    devs: tuple[Dev, ...]
    budget: dict[str, int]  # pool -> counter budget
    used: frozenset[str]  # device keys allocated already
    claims: tuple[Claim, ...]


@st.composite
def worlds(draw: st.DrawFn) -> World:
    devs = []
    budget = {}
    for p in range(draw(st.integers(1, 2))):
        pool = f"pool-{p}"
        with_counters = draw(st.booleans())
        budget[pool] = draw(st.integers(1, 6)) if with_counters else 0
        for i in range(draw(st.integers(1, 4))):
            multi = 0 if with_counters else draw(st.sampled_from([0, 0, 2, 3]))
            devs.append(Dev(pool, f"d{i}", draw(st.sampled_from("ab")),
                            draw(st.integers(0, 2)),
                            draw(st.integers(1, 3)) if with_counters else 0,
                            draw(st.booleans()) and draw(st.booleans()), multi))
    used = frozenset(d.key for d in devs if not d.multi and draw(st.booleans())
                     and draw(st.booleans()))
    claims = []
    for c in range(draw(st.integers(1, 2))):
        reqs = tuple(Req(f"r{j}", draw(st.integers(1, 2)), draw(st.booleans()),
                         draw(st.booleans()), draw(st.sampled_from([0, 0, 1, 2])))
                     for j in range(draw(st.integers(1, 2))))
        claims.append(Claim(f"c{c}", reqs, draw(st.sampled_from(["", "match", "distinct"]))))
    return World(tuple(devs), budget, used, tuple(claims))


def build(world: World, reverse: bool = False) -> tuple[Allocator, list[ResourceClaim]]:
    slices = []
    for pool in sorted({d.pool for d in world.devs}):
        mine = [d for d in world.devs if d.pool == pool]
        api_devs = []
        for d in mine:
            api_devs.append(device(
                d.name, attrs={"kind": d.kind, "numa": d.numa},
                cap={"units": d.multi} if d.multi else None,
                counters=[consumes("cs", mem=d.mem)] if d.mem else (),
                taints=[taint()] if d.tainted else (), multi=bool(d.multi)))
        if world.budget[pool]:
            slices.append(rslice(f"{pool}-devices", NODE_1, pool, DRIVER_A, *api_devs, count=2))
            slices.append(rslice(f"{pool}-counters", NODE_1, pool, DRIVER_A, count=2,
                                 counters=[counter_set("cs", mem=world.budget[pool])]))
        else:
            slices.append(rslice(f"{pool}-devices", NODE_1, pool, DRIVER_A, *api_devs))
    if reverse:
        slices.reverse()
    busy = [in_use(f"busy-{i}", tuple(k.split("/")))  # type: ignore[arg-type]
            for i, k in enumerate(sorted(world.used))]
    claims = []
    for c in world.claims:
        constraints = []
        if c.constraint == "match":
            constraints = [match("driver-a/numa")]
        elif c.constraint == "distinct":
            constraints = [distinct("driver-a/numa")]
        claims.append(claim(c.name, *[
            request(r.name, CLASS_A, r.count, *([KIND_A] if r.only_a else []),
                    tolerations=[toleration()] if r.tolerate else [],
                    capacity_requests={"units": r.units} if r.units else None)
            for r in c.reqs], constraints=constraints))
    engine = Allocator(SliceIndex(slices), [dclass(CLASS_A, DRIVER_A)],
                       AllocatedState.from_claims(busy))
    return engine, claims


def _usable(d: Dev, r: Req, used: frozenset[str]) -> bool:
    if r.only_a and d.kind != "a":
        return False
    if d.tainted and not r.tolerate:
        return False
    if d.key in used:
        return False
    if r.units and not d.multi:
        return False  # a capacity request needs a device that has that capacity
    return not (d.multi and r.units > d.multi)


def valid(world: World, picks: Sequence[Sequence[Sequence[Dev]]]) -> bool:
    """Whether a complete assignment (claim -> request -> devices) is acceptable."""
    exclusive: list[str] = []
    shares: dict[str, int] = {}
    counters: dict[str, int] = {}
    touched: set[str] = set()
    for d in world.devs:
        if d.key in world.used:  # allocated devices consume their counters too
            counters[d.pool] = counters.get(d.pool, 0) + d.mem
    for c, per_req in zip(world.claims, picks, strict=True):
        covered: list[Dev] = []
        for r, chosen in zip(c.reqs, per_req, strict=True):
            if len(chosen) != r.count or len({d.key for d in chosen}) != len(chosen):
                return False
            for d in chosen:
                if not _usable(d, r, world.used):
                    return False
                if d.multi:
                    shares[d.key] = shares.get(d.key, 0) + (r.units or d.multi)
                    if shares[d.key] > d.multi:
                        return False
                else:
                    exclusive.append(d.key)
                    counters[d.pool] = counters.get(d.pool, 0) + d.mem
                    if d.mem:
                        touched.add(d.pool)
                covered.append(d)
        numas = [d.numa for d in covered]
        if c.constraint == "match" and len(set(numas)) > 1:
            return False
        if c.constraint == "distinct" and len(set(numas)) != len(numas):
            return False
    if len(set(exclusive)) != len(exclusive):
        return False
    # Only pools that the new picks draw from must stay within their budget.
    return all(counters.get(p, 0) <= world.budget[p] for p in touched)


def assignments(world: World) -> Iterator[list[list[tuple[Dev, ...]]]]:
    slots = [(ci, r) for ci, c in enumerate(world.claims) for r in c.reqs]
    options = [list(itertools.combinations(
        [d for d in world.devs if _usable(d, r, world.used)], r.count)) for _, r in slots]
    for combo in itertools.product(*options):
        out: list[list[tuple[Dev, ...]]] = [[] for _ in world.claims]
        for (ci, _), chosen in zip(slots, combo, strict=True):
            out[ci].append(chosen)
        yield out


def brute_force(world: World) -> bool:
    return any(valid(world, a) for a in assignments(world))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds())
def test_allocations_are_valid_and_complete(world: World) -> None:
    engine, claims = build(world)
    outcome = engine.allocate(claims, NODE_1)
    assert not isinstance(outcome, AllocationError), outcome
    by_key = {d.key: d for d in world.devs}
    if isinstance(outcome, Allocated):
        picks = []
        for c, new in zip(world.claims, outcome.claims, strict=True):
            assert new.status.allocation is not None
            results = new.status.allocation.devices.results
            per_req = [[by_key[f"{x.driver}/{x.pool}/{x.device}"] for x in results
                        if x.request == r.name] for r in c.reqs]
            assert sum(len(p) for p in per_req) == len(results)
            for x in results:
                assert (x.share_id is not None) == bool(by_key[
                    f"{x.driver}/{x.pool}/{x.device}"].multi)
            picks.append(per_req)
        assert valid(world, picks), picks
    else:
        assert not brute_force(world)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds())
def test_result_does_not_depend_on_slice_order(world: World) -> None:
    first, claims = build(world)
    second, _ = build(world, reverse=True)
    a, b = first.allocate(claims, NODE_1), second.allocate(claims, NODE_1)
    assert type(a) is type(b)
    assert a.steps == b.steps
    if isinstance(a, Allocated) and isinstance(b, Allocated):
        assert a.claims == b.claims  # same seed, so even share IDs agree

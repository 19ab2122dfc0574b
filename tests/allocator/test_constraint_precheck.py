"""The constraint precheck against the plain order of checks.

``Search._allocate_device`` asks the claim's constraints whether they would
reject a device before it books the device's counters, and rejects it at once
if one would (``Constraint.rejects``). That must not change any outcome: not
the devices, not the search steps, not which errors are raised. The checks that
matter are the ones the precheck must leave in place: a constraint that would
raise on a device whose counters are exhausted (upstream never gets to the
constraint there, so no error), the same with counters free (an error), a
share of a multi-allocatable device (upstream keeps its counters booked after
a constraint rejects it, so later devices see fewer counters), and must-picks
of "All" requests (an error, not a skip).

The plain order is the same allocator with ``Constraint.rejects`` answering
"would raise" for every device, which sends every check to its own place.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from unittest import mock

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dralab.allocator import AllocatedState, Allocator, SliceIndex
from dralab.allocator.constraints import Constraint
from dralab.allocator.counters import CounterLedger
from dralab.allocator.features import AllocatorFeatures
from dralab.allocator.index import DeviceRecord
from dralab.api.resource import DeviceConstraint, DeviceRequest, ResourceClaim, ResourceSlice

from .builders import (
    CLASS_A,
    DRIVER_A,
    NODE_1,
    all_request,
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
)
from .runner import outcome_summary

ATTR = f"{DRIVER_A}/slice"
NUMA = f"{DRIVER_A}/numa"
COUNTERS = ("c0", "c1", "c2")


@dataclass(frozen=True)
class Dev:
    value: Any  # the "slice" attribute: an int, a list (unsupported without list
    # attributes), a string, or None (missing)
    uses: tuple[str, ...]  # counters of set "cs" it consumes one unit of
    multi: bool  # allowMultipleAllocations (with capacity)
    busy: bool  # allocated already
    numa: int = 0  # the "numa" attribute (always an int)


@dataclass(frozen=True)
class World:
    devices: tuple[Dev, ...]
    requests: tuple[tuple[str, int], ...]  # (kind, count) per request
    constraints: tuple[str, ...]  # "match"/"distinct" (on "slice"), "match-numa", in order
    covers_all: bool  # the constraint names no requests (covers every request)
    lists: bool  # DRAListTypeAttributes
    consumable: bool  # DRAConsumableCapacity


def _slices(world: World) -> list[ResourceSlice]:
    devs = []
    for i, d in enumerate(world.devices):
        attrs: dict[str, Any] = {"numa": d.numa}
        if d.value is not None:
            attrs["slice"] = d.value
        devs.append(device(f"d{i}", attrs=attrs, counters=[consumes("cs", **dict.fromkeys(
            d.uses, 1))] if d.uses else [], cap={"mem": 4} if d.multi else None,
            multi=d.multi))
    return [rslice("devices", NODE_1, "pool", DRIVER_A, *devs, count=2),
            rslice("counters", NODE_1, "pool", DRIVER_A, count=2,
                   counters=[counter_set("cs", **dict.fromkeys(COUNTERS, 1))])]


def _request(kind: str, count: int, i: int) -> DeviceRequest:
    if kind == "all":
        return all_request(f"r{i}")
    return request(f"r{i}", CLASS_A, count)


def _claim(world: World) -> ResourceClaim:
    names = [f"r{i}" for i in range(len(world.requests))]
    made: list[DeviceConstraint] = []
    for kind in world.constraints:
        make = distinct if kind == "distinct" else match
        attr = NUMA if kind == "match-numa" else ATTR
        made.append(make(attr) if world.covers_all else make(attr, *names))
    return claim("c", *[_request(kind, count, i) for i, (kind, count)
                        in enumerate(world.requests)], constraints=made)


@st.composite
def worlds(draw: st.DrawFn) -> World:
    value = st.one_of(st.integers(0, 2), st.just([0, 1]), st.just("zero"), st.none())
    uses = st.lists(st.sampled_from(COUNTERS), max_size=2, unique=True).map(tuple)
    devices = tuple(Dev(draw(value), draw(uses), draw(st.integers(0, 4)) == 0,
                        draw(st.integers(0, 3)) == 0, draw(st.integers(0, 1)))
                    for _ in range(draw(st.integers(1, 6))))
    kinds = st.sampled_from(["plain", "plain", "plain", "all"])
    requests = tuple(draw(st.lists(st.tuples(kinds, st.integers(1, 3)), min_size=1,
                                   max_size=2)))
    kinds_of = st.sampled_from(["match", "distinct", "match-numa"])
    constraints = tuple(draw(st.lists(kinds_of, min_size=1, max_size=2)))
    return World(devices, requests, constraints,
                 draw(st.booleans()), draw(st.booleans()), draw(st.booleans()))


def _picked(summary: tuple[object, ...]) -> list[str]:
    """The devices of an allocated summary's claim, in result order."""
    allocations = summary[-1]
    assert isinstance(allocations, tuple) and allocations
    return [r.device for r in allocations[0].devices.results]


@contextmanager
def _plain_order() -> Iterator[None]:
    with mock.patch.object(Constraint, "rejects", lambda self, request, sub, rec: None):
        yield


def _outcomes(world: World) -> tuple[tuple[object, ...], tuple[object, ...]]:
    slices = _slices(world)
    busy = [in_use(f"busy-{i}", (DRIVER_A, "pool", f"d{i}"),
                   share="a1b2c3d4" if d.multi else None,
                   consumed={f"{DRIVER_A}/mem": 1} if d.multi else None)
            for i, d in enumerate(world.devices) if d.busy]
    features = AllocatorFeatures(list_type_attributes=world.lists,
                                 consumable_capacity=world.consumable)
    classes = [dclass(CLASS_A, DRIVER_A)]

    def run() -> tuple[object, ...]:
        engine = Allocator(SliceIndex(slices), classes, AllocatedState.from_claims(busy),
                           features)
        return outcome_summary(engine.allocate([_claim(world)], NODE_1, explain_failure=False))

    got = run()
    with _plain_order():
        want = run()
    return got, want


def _world(*devices: Dev, requests: tuple[tuple[str, int], ...] = (("plain", 2),),
           constraints: tuple[str, ...] = ("match",), consumable: bool = True) -> World:
    return World(devices, requests, constraints, True, False, consumable)


# d0 takes c0; d1 would raise (a list without list attributes) but finds c0 gone:
# upstream never asks its constraint, d2 completes the pair.
_RAISES_BUT_NO_COUNTERS = _world(Dev(0, ("c0",), False, False), Dev([0, 1], ("c0",), False, False),
                                 Dev(0, ("c1",), False, False))
# The same device with its counter free: upstream asks its constraint, an error.
_RAISES_WITH_COUNTERS = _world(Dev(0, ("c0",), False, False), Dev([0, 1], ("c1",), False, False),
                               Dev(0, ("c2",), False, False))
# d1 is a share: rejected by the constraint after its counter c1 was booked, which
# upstream does not give back, so d2 (c1 again) does not fit and d3 completes.
_SHARE_KEEPS_COUNTERS = _world(Dev(0, ("c0",), False, False), Dev(1, ("c1",), True, False),
                               Dev(0, ("c1",), False, False), Dev(0, ("c2",), False, False))
# Two constraints: the first would raise on d1, the second (its numa differs) would
# reject it. Upstream stops at the first: an error (the precheck must not look past
# a constraint that would raise, and skip d1 for d2).
_RAISES_BEFORE_REJECTING = _world(Dev(0, ("c0",), False, False),
                                  Dev([0, 1], ("c1",), False, False, numa=1),
                                  Dev(1, ("c2",), False, False),
                                  constraints=("distinct", "match-numa"))
# "All" picks every device: a constraint that rejects one is an error, not a skip.
_ALL_MUST = _world(Dev(0, ("c0",), False, False), Dev(1, ("c1",), False, False),
                   requests=(("all", 1),))


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds())
@example(_RAISES_BUT_NO_COUNTERS)
@example(_RAISES_WITH_COUNTERS)
@example(_SHARE_KEEPS_COUNTERS)
@example(_RAISES_BEFORE_REJECTING)
@example(_ALL_MUST)
def test_precheck_gives_the_plain_order_outcome(world: World) -> None:
    got, want = _outcomes(world)
    assert got == want


def test_examples_reach_the_cases_they_name() -> None:
    # (so the examples above keep testing what they say)
    got, _ = _outcomes(_RAISES_BUT_NO_COUNTERS)
    assert got[0] == "allocated"
    assert _picked(got) == ["d0", "d2"]
    got, _ = _outcomes(_RAISES_WITH_COUNTERS)
    assert got[0] == "error" and "unsupported attribute value" in str(got[2])
    got, _ = _outcomes(_SHARE_KEEPS_COUNTERS)
    assert _picked(got) == ["d0", "d3"]
    got, _ = _outcomes(_RAISES_BEFORE_REJECTING)
    assert got[0] == "error" and "unsupported attribute value" in str(got[2])
    got, _ = _outcomes(_ALL_MUST)
    assert got[0] == "error" and "constraint would not be satisfied" in str(got[2])


def test_precheck_rejects_without_booking_counters() -> None:
    # d1-d3 have another slice value and free counters: the plain order books and
    # gives back each one's counter, the precheck rejects them before that.
    world = _world(Dev(0, ("c0",), False, False), *[Dev(1, ("c2",), False, False)] * 3,
                   Dev(0, ("c1",), False, False))
    booked: list[str] = []
    take = CounterLedger.take

    def recording(self: CounterLedger, rec: DeviceRecord) -> bool:
        booked.append(rec.name)
        return take(self, rec)

    with mock.patch.object(CounterLedger, "take", recording):
        got, want = _outcomes(world)
    assert got == want
    assert _picked(got) == ["d0", "d4"]
    # The precheck run first, then the plain one.
    assert booked == ["d0", "d4", "d0", "d1", "d2", "d3", "d4"]

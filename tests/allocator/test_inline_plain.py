"""The search's inlined pick of the usual device against the general one.

``Search._candidates`` books the usual device for the usual request itself (no
share, no blocking taint; not admin, a claim without constraints, no
compatibility groups) instead of calling ``_allocate_device`` and ``_undo``.
Every outcome must be the general path's: devices, search steps, messages,
errors. The worlds mix both kinds of device and request in one search (shares,
tainted devices, admin, "All" and firstAvailable requests, several claims, one
with a constraint) under every combination of the gates that decide which path
a device takes, so inlined and general picks of the same device by different
claims and their undoing in between are exercised too.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dralab.allocator import AllocatedState, AllocationError, Allocator, SliceIndex
from dralab.allocator.features import AllocatorFeatures
from dralab.allocator.search import Search
from dralab.api.resource import (
    DeviceCounterConsumption,
    DeviceRequest,
    ResourceClaim,
    ResourceSlice,
)

from .builders import (
    CLASS_A,
    DRIVER_A,
    NODE_1,
    PER_DEVICE,
    all_request,
    claim,
    consumes,
    consumes_grouped,
    counter_set,
    dclass,
    device,
    first_available,
    in_use,
    match,
    node_selector,
    request,
    rslice,
    sub,
    taint,
    toleration,
)
from .runner import outcome_summary


@dataclass(frozen=True)
class Dev:
    mem: int  # units of counter "mem" consumed (0: none; -1: a consumption of 0 units)
    multi: bool  # allowMultipleAllocations (with capacity)
    tainted: bool
    busy: bool
    numa: int
    group: str = ""  # a compatibility group of its counter consumption ("": none)


@dataclass(frozen=True)
class World:
    devices: tuple[Dev, ...]
    budget: int  # the pool's "mem" counter
    claims: tuple[tuple[tuple[str, int], ...], ...]  # per claim: (kind, count) per request
    constrained: bool  # the first claim has a matchAttribute constraint
    gates: tuple[bool, bool, bool]  # partitionable, consumable, compatibility groups


def _slices(world: World) -> list[ResourceSlice]:
    def consumption(d: Dev) -> list[DeviceCounterConsumption]:
        if not d.mem:
            return []
        units = max(d.mem, 0)
        if d.group:
            return [consumes_grouped("cs", [d.group], mem=units)]
        return [consumes("cs", mem=units)]

    devs = [device(f"d{i}", attrs={"numa": d.numa}, counters=consumption(d),
                   cap={"mem": 4} if d.multi else None, multi=d.multi,
                   taints=[taint()] if d.tainted else [])
            for i, d in enumerate(world.devices)]
    if not world.gates[0]:
        # Without DRAPartitionableDevices a counter slice would leave the pool
        # incomplete: one slice, whose counter-consuming devices are then refused.
        return [rslice("devices", NODE_1, "pool", DRIVER_A, *devs)]
    return [rslice("devices", NODE_1, "pool", DRIVER_A, *devs, count=2),
            rslice("counters", NODE_1, "pool", DRIVER_A, count=2,
                   counters=[counter_set("cs", mem=world.budget)])]


def _request(kind: str, count: int, name: str) -> DeviceRequest:
    if kind == "admin":
        return request(name, CLASS_A, count, admin=True)
    if kind == "all":
        return all_request(name)
    if kind == "first-available":
        return first_available(name, sub("big", CLASS_A, count + 1), sub("small", CLASS_A, count))
    if kind == "tolerating":
        return request(name, CLASS_A, count, tolerations=[toleration()])
    return request(name, CLASS_A, count)


def _claims(world: World) -> list[ResourceClaim]:
    out = []
    for c, requests in enumerate(world.claims):
        constraints = [match(f"{DRIVER_A}/numa")] if world.constrained and c == 0 else []
        out.append(claim(f"c{c}", *[_request(kind, count, f"r{j}")
                                    for j, (kind, count) in enumerate(requests)],
                         constraints=constraints))
    return out


@st.composite
def worlds(draw: st.DrawFn) -> World:
    devices = tuple(Dev(draw(st.sampled_from([-1, 0, 0, 1, 2])), draw(st.integers(0, 4)) == 0,
                        draw(st.integers(0, 4)) == 0, draw(st.integers(0, 4)) == 0,
                        draw(st.integers(0, 1)), draw(st.sampled_from(["", "", "x", "y"])))
                    for _ in range(draw(st.integers(1, 7))))
    kinds = st.sampled_from(["plain", "plain", "plain", "admin", "all", "first-available",
                             "tolerating"])
    # (counts from 4 reach the walk over a request's choices: ``Search._usual_picks``)
    requests = st.lists(st.tuples(kinds, st.integers(1, 6)), min_size=1, max_size=2)
    claims = tuple(tuple(draw(requests)) for _ in range(draw(st.integers(1, 3))))
    return World(devices, draw(st.integers(0, 6)), claims, draw(st.booleans()),
                 (draw(st.booleans()), draw(st.booleans()), draw(st.booleans())))


def _outcomes(world: World, explain: bool) -> tuple[tuple[object, ...], tuple[object, ...]]:
    partitionable, consumable, groups = world.gates
    features = AllocatorFeatures(partitionable_devices=partitionable,
                                 consumable_capacity=consumable, compatibility_groups=groups)
    busy = [in_use(f"busy-{i}", (DRIVER_A, "pool", f"d{i}"),
                   share="a1b2c3d4" if d.multi else None,
                   consumed={f"{DRIVER_A}/mem": 1} if d.multi else None)
            for i, d in enumerate(world.devices) if d.busy]
    slices, claims = _slices(world), _claims(world)

    def run() -> tuple[object, ...]:
        engine = Allocator(SliceIndex(slices), [dclass(CLASS_A, DRIVER_A)],
                           AllocatedState.from_claims(busy), features)
        return outcome_summary(engine.allocate(claims, NODE_1, explain_failure=explain))

    inlined = run()
    with mock.patch.object(Search, "inline_plain", False):
        general = run()
    return inlined, general


def _world(*devices: Dev, budget: int = 6,
           claims: tuple[tuple[tuple[str, int], ...], ...] = ((("plain", 3),),)) -> World:
    return World(devices, budget, claims, False, (True, True, False))


_PLAIN = Dev(1, False, False, False, 0)
# Backtracking over counters: d0 needs 2 units of 4, so four devices fit only
# without it (the shape upstream's backtracking benchmark scales up).
_BACKTRACKS = _world(Dev(2, False, False, False, 0), *[_PLAIN] * 4, budget=4,
                     claims=((("plain", 4),),))
# An admin request of a later claim takes devices an inlined pick of the first holds.
_ADMIN_AFTER_INLINED = _world(_PLAIN, _PLAIN, claims=((("plain", 2),), (("admin", 2),)))
# A share and a tainted device among plain ones, for a tolerating request.
_MIXED = _world(_PLAIN, Dev(0, True, False, False, 0), Dev(1, False, True, False, 0), _PLAIN,
                _PLAIN, claims=((("tolerating", 4),),))
_FREE = Dev(0, False, False, False, 0)  # no counters
# The first request's larger alternative, 32 of the 33 devices, leaves no room under
# the 32-device limit for either alternative of the second (2 or 1): the limit is hit
# below the walk over the first request's choices, which must give its picks back,
# counters included (each device takes one of 32 units), before its smaller
# alternative (31) is tried (allocated: 31 + 1 devices).
_MAX_SIZE_BELOW = _world(*[_PLAIN] * 33, budget=32,
                         claims=((("first-available", 31), ("first-available", 1)),))
# The pool's counters are over-committed by allocated devices (2 units of 1), so a
# counter-consuming device can never be booked; the second claim cannot fit, so the
# first claim's choices are all walked and that device is met again and again.
_OVER_COMMITTED = _world(Dev(1, False, False, True, 0), Dev(1, False, False, True, 0), _FREE,
                         Dev(1, False, False, False, 0), _FREE, _FREE, _FREE, budget=1,
                         claims=((("plain", 6),),))


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds(), st.booleans())
@example(_BACKTRACKS, False)
@example(_ADMIN_AFTER_INLINED, False)
@example(_MIXED, True)
@example(_MAX_SIZE_BELOW, False)
@example(_OVER_COMMITTED, True)
def test_inlined_picks_give_the_general_outcome(world: World, explain: bool) -> None:
    inlined, general = _outcomes(world, explain)
    assert inlined == general


def test_examples_reach_the_cases_they_name() -> None:
    inlined, _ = _outcomes(_BACKTRACKS, False)
    assert inlined[0] == "allocated" and isinstance(inlined[3], int) and inlined[3] > 4
    inlined, _ = _outcomes(_ADMIN_AFTER_INLINED, False)
    assert inlined[0] == "allocated"
    allocations = inlined[-1]
    assert isinstance(allocations, tuple)
    assert [r.device for r in allocations[1].devices.results] == ["d0", "d1"]
    inlined, _ = _outcomes(_MIXED, True)
    assert inlined[0] == "allocated"
    inlined, _ = _outcomes(_MAX_SIZE_BELOW, False)
    assert inlined[0] == "allocated" and inlined[5] == ({"r0": 1, "r1": 1},)
    allocations = inlined[-1]
    assert isinstance(allocations, tuple)
    assert len(allocations[0].devices.results) == 32
    inlined, _ = _outcomes(_OVER_COMMITTED, True)
    assert inlined[0] == "unschedulable" and isinstance(inlined[3], int) and inlined[3] > 5


@contextmanager
def _recorded(method: str) -> Iterator[list[object]]:
    """``Search.<method>`` patched to record each of its calls: what it returned
    (None if it raised)."""
    returned: list[object] = []
    original = getattr(Search, method)

    def recording(self: Search, *args: Any) -> Any:
        at = len(returned)
        returned.append(None)
        returned[at] = original(self, *args)
        return returned[at]

    with mock.patch.object(Search, method, recording):
        yield returned


def test_inlined_path_is_taken() -> None:
    # (so the comparison above compares two different paths)
    def general_calls(inline: bool) -> int:
        engine = Allocator(SliceIndex(_slices(_BACKTRACKS)), [dclass(CLASS_A, DRIVER_A)],
                           AllocatedState(), AllocatorFeatures())
        with _recorded("_allocate_device") as calls, \
                mock.patch.object(Search, "inline_plain", inline):
            engine.allocate(_claims(_BACKTRACKS), NODE_1, explain_failure=False)
        return len(calls)

    assert general_calls(True) == 0
    assert general_calls(False) > 4


def test_walk_over_choices_is_taken() -> None:
    # A request for several usual devices is searched by ``Search._usual_picks``
    # (without recursion), unless a candidate needs the general path.
    def walks(world: World) -> tuple[int, int]:
        with _recorded("_usual_picks") as calls:
            inlined, _ = _outcomes(world, False)
        assert isinstance(inlined[3], int)
        return len(calls), inlined[3]

    calls, steps = walks(_BACKTRACKS)
    assert calls == 1 and steps > 4
    # The larger alternative (32 of 33 candidates), not the smaller (31: too many
    # candidates for the count, searched by the recursive loop).
    assert walks(_MAX_SIZE_BELOW)[0] == 1
    # A share among the candidates: the recursive loop meets it in its order.
    with _recorded("_usual_candidates") as found:
        general, _ = _outcomes(_MIXED, False)
    assert found == [None] and general[0] == "allocated"


def _walk_and_loop(slices: list[ResourceSlice], claims: list[ResourceClaim]
                   ) -> tuple[tuple[object, ...], tuple[object, ...]]:
    def run() -> tuple[object, ...]:
        engine = Allocator(SliceIndex(slices), [dclass(CLASS_A, DRIVER_A)], AllocatedState(),
                           AllocatorFeatures())
        return outcome_summary(engine.allocate(claims, NODE_1, explain_failure=False))

    walked = run()
    with mock.patch.object(Search, "inline_plain", False):
        looped = run()
    return walked, looped


@pytest.mark.parametrize("on_second", ["broken node selector", "failing selector"])
def test_walk_leaves_errors_to_the_loop(on_second: str) -> None:
    # The second candidate of a four-device request raises when the search reaches
    # it: the walk must not skip or pick it, so the allocation fails as the
    # candidate loop's does (and would succeed, d0 and d2-d4, if it skipped it).
    broken = on_second == "broken node selector"
    bad = node_selector("region")  # "In" without values: malformed
    devs = [device("d0", attrs={"big": True}, on=NODE_1),
            device("d1", attrs={} if not broken else {"big": True}, on=bad if broken else NODE_1),
            *[device(f"d{i}", attrs={"big": True}, on=NODE_1) for i in range(2, 5)]]
    slices = [rslice("devices", PER_DEVICE, "pool", DRIVER_A, *devs)]
    claims = [claim("c", request("r", CLASS_A, 4, f'device.attributes["{DRIVER_A}"].big'))]
    walked, looped = _walk_and_loop(slices, claims)
    assert walked == looped
    assert walked[0] == AllocationError.kind
    message = walked[2]
    assert isinstance(message, str)
    assert ("failed to perform node selection" if broken else "big") in message


def test_walk_hands_complete_choices_to_later_claims() -> None:
    # Claim a's first choices hold d0, the only device claim b's selector accepts:
    # b fails on them and a's walk must take each back (entries and picks) before
    # its last choice, d1-d4, lets b have d0. Claim c's own selector keeps d0 out
    # of its walk.
    devs = [device(f"d{i}", attrs={"numa": 1 if i == 0 else 0}) for i in range(5)]
    slices = [rslice("devices", NODE_1, "pool", DRIVER_A, *devs)]
    numa = f'device.attributes["{DRIVER_A}"].numa'
    for claims, expected in (
            ([claim("a", request("r", CLASS_A, 4)),
              claim("b", request("r", CLASS_A, 1, f"{numa} == 1"))],
             [["d1", "d2", "d3", "d4"], ["d0"]]),
            ([claim("c", request("r", CLASS_A, 4, f"{numa} == 0"))],
             [["d1", "d2", "d3", "d4"]])):
        with _recorded("_usual_picks") as walks:
            walked, looped = _walk_and_loop(slices, claims)
        assert walks and walked == looped
        allocations = walked[-1]
        assert isinstance(allocations, tuple)
        assert [[r.device for r in a.devices.results] for a in allocations] == expected

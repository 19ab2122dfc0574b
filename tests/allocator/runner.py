"""Runs a Scenario through the allocator and checks the outcome."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from dralab.allocator import (
    Allocated,
    AllocatedState,
    AllocationError,
    AllocationOutcome,
    Allocator,
    AllocatorFeatures,
    SliceIndex,
    Unschedulable,
)
from dralab.api.base import KubeObject
from dralab.api.resource import DeviceClass, DeviceTaintRule, ResourceClaim, ResourceSlice

from .builders import UNSCHEDULABLE, Scenario, node


def outcome_summary(out: AllocationOutcome) -> tuple[object, ...]:
    """Everything an outcome says (kind, reason, message, steps, explanations, chosen
    subrequests, allocations): two paths agree when their summaries are equal."""
    claims = getattr(out, "claims", ())
    return (out.kind, getattr(out, "reason", None), getattr(out, "message", None), out.steps,
            getattr(out, "explanations", None), getattr(out, "subrequests", None),
            tuple(c.status.allocation for c in claims))


def engine_for(objects: Iterable[KubeObject], features: Any = None, seed: int = 0) -> Allocator:
    objs = list(objects)
    slices = [o for o in objs if isinstance(o, ResourceSlice)]
    classes = [o for o in objs if isinstance(o, DeviceClass)]
    rules = [o for o in objs if isinstance(o, DeviceTaintRule)]
    allocated = [o for o in objs if isinstance(o, ResourceClaim)]
    if not isinstance(features, AllocatorFeatures):
        features = AllocatorFeatures.from_gates(features)
    return Allocator(SliceIndex(slices, rules), classes, AllocatedState.from_claims(allocated),
                     features, seed=seed)


def run(s: Scenario) -> AllocationOutcome:
    engine = engine_for(s.objects, s.features)
    return engine.allocate(list(s.claims), s.node if s.node is not None else node())


def results_of(outcome: Allocated) -> list[list[tuple[str, str, str, str]]]:
    out = []
    for c in outcome.claims:
        assert c.status.allocation is not None
        out.append([(x.request, x.driver, x.pool, x.device)
                    for x in c.status.allocation.devices.results])
    return out


def check(s: Scenario) -> AllocationOutcome:
    outcome = run(s)
    if s.expect == UNSCHEDULABLE:
        assert isinstance(outcome, Unschedulable), outcome
    elif isinstance(s.expect, tuple) and s.expect[0] == "error":
        assert isinstance(outcome, AllocationError), outcome
        assert s.expect[1] in outcome.message, outcome.message
    else:
        assert isinstance(outcome, Allocated), outcome
        assert results_of(outcome) == s.expect
        if s.node_selectors is not None:
            got = [c.status.allocation.node_selector for c in outcome.claims
                   if c.status.allocation is not None]
            assert got == list(s.node_selectors)
    if s.steps is not None:
        assert outcome.steps == s.steps
    return outcome

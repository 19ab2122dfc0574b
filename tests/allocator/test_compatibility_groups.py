"""Compatibility groups on shared counter sets (DRADeviceCompatibilityGroups, alpha 1.37)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from dralab.allocator import AllocatorFeatures

from .builders import (
    CLASS_A,
    DRIVER_A,
    NODE_1,
    UNSCHEDULABLE,
    Scenario,
    claim,
    consumes_grouped,
    counter_set,
    dclass,
    device,
    in_use,
    r,
    request,
    rslice,
)
from .runner import check

A = dclass(CLASS_A, DRIVER_A)
ON = AllocatorFeatures(compatibility_groups=True)


def fleet(*groups: Sequence[str]) -> list[Any]:
    devs = [device(name, counters=[consumes_grouped("cs", g, mem=1)])
            for name, g in zip("abcd", groups, strict=False)]
    return [A, rslice("devices", NODE_1, "pool-1", DRIVER_A, *devs, count=2),
            rslice("counters", NODE_1, "pool-1", DRIVER_A, count=2,
                   counters=[counter_set("cs", mem=8)])]


def two() -> Any:
    return claim("claim-0", request("req-0", CLASS_A, 2))


SCENARIOS = [
    Scenario("groups-must-intersect", [two()], fleet(["x"], ["y"], ["x", "z"]),
             [[r("req-0", "pool-1", "a"), r("req-0", "pool-1", "c")]], features=ON),
    Scenario("group-less-devices-only-with-group-less", [two()], fleet([], ["x"], []),
             [[r("req-0", "pool-1", "a"), r("req-0", "pool-1", "c")]], features=ON),
    Scenario("running-intersection-narrows", [claim("c", request("req-0", CLASS_A, 3))],
             fleet(["x", "y"], ["y", "z"], ["x"], ["y"]),
             [[r("req-0", "pool-1", "a"), r("req-0", "pool-1", "b"), r("req-0", "pool-1", "d")]],
             features=ON),
    Scenario("allocated-devices-count-as-members", [claim("c", request("req-0"))],
             [*fleet(["x"], ["y"], ["x"]), in_use("x", (DRIVER_A, "pool-1", "a"))],
             [[r("req-0", "pool-1", "c")]], features=ON),
    Scenario("no-compatible-pair", [two()], fleet(["x"], ["y"]), UNSCHEDULABLE, features=ON),
    Scenario("gate-off-ignores-groups", [two()], fleet(["x"], ["y"]),
             [[r("req-0", "pool-1", "a"), r("req-0", "pool-1", "b")]]),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=str)
def test_scenario(scenario: Scenario) -> None:
    check(scenario)

"""Admin access, device taints and taint rules, binding conditions, config merging."""

from __future__ import annotations

import pytest

from dralab.allocator import AllocatorFeatures
from dralab.api.features import FeatureGates

from .builders import (
    CLASS_A,
    CLASS_B,
    DRIVER_A,
    DRIVER_B,
    NODE_1,
    UNSCHEDULABLE,
    Scenario,
    all_request,
    claim,
    claim_config,
    dclass,
    device,
    devices,
    first_available,
    in_use,
    local_selector,
    node_selector,
    one_device_slice,
    opaque,
    r,
    request,
    rslice,
    simple_claim,
    sub,
    taint,
    taint_rule,
    toleration,
)
from .runner import check

A = dclass(CLASS_A, DRIVER_A)
B = dclass(CLASS_B, DRIVER_B)
NO_SCHEDULE = taint("taint-key", "taint-value", "NoSchedule")
NO_EXECUTE = taint("taint-key", "taint-value-2", "NoExecute")
NONE = taint("taint-key", "taint-value", "None")
TOL_NO_SCHEDULE = toleration("taint-key", "Exists", effect="NoSchedule")
TOL_NO_EXECUTE = toleration("taint-key", "Equal", "taint-value-2", "NoExecute")
TWO = rslice("slice-1", NODE_1, "pool-1", DRIVER_A, *devices(2, 1))


def admin_claim(name: str, count: int = 1, mode: str | None = None) -> object:
    req = (all_request("req-0", admin=True) if mode == "All"
           else request("req-0", CLASS_A, count, admin=True))
    return claim(name, req)


ADMIN = [
    Scenario("admin-access-disabled", [admin_claim("claim-0")],
             [A, one_device_slice("slice-1", NODE_1, "pool-1")],
             ("error", "claim claim-0, request req-0: admin access is requested, but the "
                       "feature is disabled"),
             features=AllocatorFeatures(admin_access=False)),
    Scenario("admin-access-enabled", [admin_claim("claim-0")],
             [A, one_device_slice("slice-1", NODE_1, "pool-1"),
              in_use("x", (DRIVER_A, "pool-1", "device-1"), (DRIVER_A, "pool-1", "device-2"))],
             [[r("req-0", "pool-1", "device-1")]]),
    Scenario("all-devices-some-allocated-admin-access", [admin_claim("claim-0", mode="All")],
             [A, TWO, in_use("x", (DRIVER_A, "pool-1", "device-1"))],
             [[r("req-0", "pool-1", "device-1"), r("req-0", "pool-1", "device-2")]]),
    Scenario("all-devices-some-allocating-admin-access",
             [claim("claim-0", request("req-0", admin=True), all_request("req-1", admin=True))],
             [A, TWO], UNSCHEDULABLE),
    Scenario("count-devices-some-allocated-admin-access", [admin_claim("claim-0", 2)],
             [A, TWO, in_use("x", (DRIVER_A, "pool-1", "device-1"))],
             [[r("req-0", "pool-1", "device-1"), r("req-0", "pool-1", "device-2")]]),
    Scenario("separate-claims-share-device-admin-access",
             [admin_claim("claim-0"), admin_claim("claim-1")], [A, TWO],
             [[r("req-0", "pool-1", "device-1")], [r("req-0", "pool-1", "device-1")]]),
    Scenario("admin-access-claims-device-allocating-for-non-admin-access",
             [simple_claim("claim-0"), admin_claim("claim-1")], [A, TWO],
             [[r("req-0", "pool-1", "device-1")], [r("req-0", "pool-1", "device-1")]]),
    Scenario("admin-pick-blocks-later-ordinary-request-of-same-call",
             [admin_claim("claim-0"), simple_claim("claim-1")], [A, TWO],
             [[r("req-0", "pool-1", "device-1")], [r("req-0", "pool-1", "device-2")]]),
    Scenario("admin-results-do-not-count-as-in-use", [simple_claim("claim-0")],
             [A, one_device_slice("slice-1", NODE_1, "pool-1"),
              in_use("x", (DRIVER_A, "pool-1", "device-1"), admin=True)],
             [[r("req-0", "pool-1", "device-1")]]),
]

TAINTS = [
    Scenario("tainted-two-devices", [simple_claim("claim-0")],
             [A, rslice("slice-1", NODE_1, "pool-1", DRIVER_A,
                        device("device-1", taints=[NO_SCHEDULE]),
                        device("device-2", taints=[NO_EXECUTE]))], UNSCHEDULABLE),
    Scenario("tainted-one-device-two-taints", [simple_claim("claim-0")],
             [A, rslice("slice-1", NODE_1, "pool-1", DRIVER_A,
                        device("device-1", taints=[NO_SCHEDULE, NO_EXECUTE]))], UNSCHEDULABLE),
    Scenario("tainted-two-devices-tolerated",
             [claim("claim-0", request("req-0", tolerations=[TOL_NO_EXECUTE]))],
             [A, rslice("slice-1", NODE_1, "pool-1", DRIVER_A,
                        device("device-1", taints=[NO_SCHEDULE]),
                        device("device-2", taints=[NO_EXECUTE]))],
             [[r("req-0", "pool-1", "device-2")]], extra={"tolerations": [TOL_NO_EXECUTE]}),
    Scenario("tainted-two-devices-prioritized-list-tolerated",
             [claim("claim-0", first_available("req-0", sub("subReq-0"),
                                               sub("subReq-1", tolerations=[TOL_NO_EXECUTE])))],
             [A, rslice("slice-1", NODE_1, "pool-1", DRIVER_A,
                        device("device-1", taints=[NO_SCHEDULE]),
                        device("device-2", taints=[NO_EXECUTE]))],
             [[r("req-0/subReq-1", "pool-1", "device-2")]],
             extra={"tolerations": [TOL_NO_EXECUTE]}),
    Scenario("tainted-no-effect", [simple_claim("claim-0")],
             [A, rslice("slice-1", NODE_1, "pool-1", DRIVER_A, device("device-1", taints=[NONE]))],
             [[r("req-0", "pool-1", "device-1")]]),
    Scenario("tainted-unknown-effect-ignored", [simple_claim("claim-0")],
             [A, rslice("slice-1", NODE_1, "pool-1", DRIVER_A,
                        device("device-1", taints=[taint(effect="SomeFutureEffect")]))],
             [[r("req-0", "pool-1", "device-1")]]),
    Scenario("tainted-one-device-two-taints-both-tolerated",
             [claim("claim-0", request("req-0", tolerations=[TOL_NO_SCHEDULE, TOL_NO_EXECUTE]))],
             [A, rslice("slice-1", NODE_1, "pool-1", DRIVER_A,
                        device("device-1", taints=[NO_SCHEDULE, NO_EXECUTE]))],
             [[r("req-0", "pool-1", "device-1")]]),
    Scenario("toleration-exists-with-empty-key-tolerates-everything",
             [claim("claim-0", request("req-0", tolerations=[toleration(None, "Exists")]))],
             [A, rslice("slice-1", NODE_1, "pool-1", DRIVER_A,
                        device("device-1", taints=[NO_SCHEDULE, NO_EXECUTE]))],
             [[r("req-0", "pool-1", "device-1")]]),
    Scenario("toleration-equal-needs-value",
             [claim("claim-0", request("req-0", tolerations=[
                 toleration("taint-key", "Equal", "other", None)]))],
             [A, rslice("slice-1", NODE_1, "pool-1", DRIVER_A,
                        device("device-1", taints=[NO_SCHEDULE]))], UNSCHEDULABLE),
    Scenario("tainted-disabled", [simple_claim("claim-0")],
             [A, rslice("slice-1", NODE_1, "pool-1", DRIVER_A,
                        device("device-1", taints=[NO_SCHEDULE, NO_EXECUTE]))],
             [[r("req-0", "pool-1", "device-1")]], features=AllocatorFeatures(device_taints=False)),
    Scenario("tainted-prioritized-list",
             [claim("claim-0", first_available("req-0", sub("subReq-0", CLASS_B),
                                               sub("subReq-1", CLASS_A)))],
             [A, B, rslice("slice-1", NODE_1, "pool-1", DRIVER_A,
                           device("device-1", taints=[NO_SCHEDULE]))], UNSCHEDULABLE),
    Scenario("tainted-admin-access", [admin_claim("claim-0")],
             [A, rslice("slice-1", NODE_1, "pool-1", DRIVER_A,
                        device("device-1", taints=[NO_SCHEDULE])),
              in_use("x", (DRIVER_A, "pool-1", "device-1"))], UNSCHEDULABLE),
    Scenario("tainted-all-devices-single", [claim("claim-0", all_request("req-0"))],
             [A, rslice("slice-1", NODE_1, "pool-1", DRIVER_A,
                        device("device-1", taints=[NO_SCHEDULE]))], UNSCHEDULABLE),
    Scenario("taint-rule-taints-device", [simple_claim("claim-0")],
             [A, TWO, taint_rule("rule", NO_SCHEDULE, DRIVER_A, "pool-1", "device-1")],
             [[r("req-0", "pool-1", "device-2")]]),
    Scenario("taint-rule-with-empty-selector-taints-all", [simple_claim("claim-0")],
             [A, TWO, taint_rule("rule", NO_EXECUTE)], UNSCHEDULABLE),
    Scenario("taint-rule-tolerated",
             [claim("claim-0", request("req-0", tolerations=[TOL_NO_EXECUTE]))],
             [A, TWO, taint_rule("rule", NO_EXECUTE)], [[r("req-0", "pool-1", "device-1")]]),
    Scenario("taint-rule-gate-off-ignores-rules", [simple_claim("claim-0")],
             [A, TWO, taint_rule("rule", NO_SCHEDULE)], [[r("req-0", "pool-1", "device-1")]],
             features=FeatureGates.parse("DRADeviceTaintRules=false")),
]

BC = ["IsPrepare"]
BF = ["BindingFailed"]

BINDING = [
    Scenario("device-binding-conditions", [simple_claim("claim-0")],
             [A, rslice("slice-1", NODE_1, "pool-1", DRIVER_A,
                        device("device-1", binding=BC, binding_failure=BF))],
             [[r("req-0", "pool-1", "device-1")]],
             extra={"binding": [(BC, BF)]}),
    Scenario("binding-conditions-with-and-without",
             [claim("claim-0", request("req-0"), request("req-1"))],
             [A, rslice("slice-1", NODE_1, "pool-1", DRIVER_A, device("device-1"),
                        device("device-2", binding=BC, binding_failure=BF))],
             [[r("req-0", "pool-1", "device-1"), r("req-1", "pool-1", "device-2")]],
             extra={"binding": [([], []), (BC, BF)]}),
    Scenario("binding-conditions-without-feature-gate", [simple_claim("claim-0")],
             [A, rslice("slice-1", NODE_1, "pool-1", DRIVER_A,
                        device("device-1", binding=BC, binding_failure=BF))],
             UNSCHEDULABLE, features=AllocatorFeatures(device_binding_and_status=False)),
    Scenario("binding-condition-gate-off-via-feature-gates", [simple_claim("claim-0")],
             [A, rslice("slice-1", NODE_1, "pool-1", DRIVER_A, device("device-1", binding=BC))],
             UNSCHEDULABLE, features=FeatureGates.parse("DRADeviceBindingConditions=false")),
    Scenario("node-restriction", [simple_claim("claim-0")],
             [A, rslice("slice-1", node_selector("planet", "earth"), "pool-1", DRIVER_A,
                        device("device-1", binds_to_node=True))],
             [[r("req-0", "pool-1", "device-1")]], node_selectors=[local_selector(NODE_1)]),
    Scenario("lexicographical-sorting-pools-with-binding-conditions",
             [claim("claim-0", request("req-0", CLASS_A, 2))],
             [A, rslice("slice-1", NODE_1, "pool-1", DRIVER_A,
                        device("device-1", binding=BC, binding_failure=BF)),
              rslice("slice-3", NODE_1, "pool-3", DRIVER_A, device("device-3")),
              rslice("slice-2", NODE_1, "pool-2", DRIVER_A, device("device-2"))],
             [[r("req-0", "pool-2", "device-2"), r("req-0", "pool-3", "device-3")]]),
    Scenario("lexicographical-sorting-slices-with-binding-conditions",
             [claim("claim-0", request("req-0", CLASS_A, 2))],
             [A, rslice("slice-1", NODE_1, "pool-1", DRIVER_A,
                        device("device-1", binding=BC, binding_failure=BF), count=3),
              rslice("slice-3", NODE_1, "pool-1", DRIVER_A, device("device-3"), count=3),
              rslice("slice-2", NODE_1, "pool-1", DRIVER_A, device("device-2"), count=3)],
             [[r("req-0", "pool-1", "device-1"), r("req-0", "pool-1", "device-2")]]),
    Scenario("binding-pool-used-when-others-exhausted",
             [claim("claim-0", request("req-0", CLASS_A, 2))],
             [A, rslice("slice-1", NODE_1, "pool-1", DRIVER_A, device("device-1", binding=BC)),
              rslice("slice-2", NODE_1, "pool-2", DRIVER_A, device("device-2"))],
             [[r("req-0", "pool-2", "device-2"), r("req-0", "pool-1", "device-1")]]),
]

CONFIG = [
    Scenario("with-class-device-config", [simple_claim("claim-0")],
             [dclass(CLASS_A, DRIVER_A, config=[opaque(DRIVER_A, "classAttribute")]),
              one_device_slice("slice-1", NODE_1, "pool-1")],
             [[r("req-0", "pool-1", "device-1")]],
             extra={"config": [("FromClass", [], "classAttribute")]}),
    Scenario("with-class-device-config-with-multiple-request-and-configs",
             [claim("claim-0", request("req-0"), request("req-1"), request("req-2", CLASS_B))],
             [dclass(CLASS_A, DRIVER_A, config=[opaque(DRIVER_A, "classAttribute-A")]),
              dclass(CLASS_B, DRIVER_B, config=[opaque(DRIVER_B, "classAttribute-B")]),
              rslice("slice-1", NODE_1, "pool-1", DRIVER_A, *devices(2)),
              one_device_slice("slice-2", NODE_1, "pool-1", DRIVER_B)],
             [[r("req-0", "pool-1", "device-0"), r("req-1", "pool-1", "device-1"),
               r("req-2", "pool-1", "device-1", DRIVER_B)]],
             extra={"config": [("FromClass", ["req-0", "req-1"], "classAttribute-A"),
                               ("FromClass", ["req-2"], "classAttribute-B")]}),
    Scenario("claim-with-device-config",
             [claim("claim-0", request("req-0"),
                    config=[claim_config([], opaque(DRIVER_A, "deviceAttribute"))])],
             [A, one_device_slice("slice-1", NODE_1, "pool-1")],
             [[r("req-0", "pool-1", "device-1")]],
             extra={"config": [("FromClaim", [], "deviceAttribute")]}),
    Scenario("class-config-then-claim-config-appended-per-named-request",
             [claim("claim-0", request("req-0"), request("req-1"), request("req-2"),
                    config=[claim_config(["req-0", "req-1"], opaque(DRIVER_A, "pair")),
                            claim_config(["req-2"], opaque(DRIVER_A, "single"))])],
             [dclass(CLASS_A, DRIVER_A, config=[opaque(DRIVER_A, "cls")]),
              rslice("slice-1", NODE_1, "pool-1", DRIVER_A, *devices(3))],
             [[r("req-0", "pool-1", "device-0"), r("req-1", "pool-1", "device-1"),
               r("req-2", "pool-1", "device-2")]],
             extra={"config": [("FromClass", [], "cls"),
                               ("FromClaim", ["req-0", "req-1"], "pair"),
                               ("FromClaim", ["req-0", "req-1"], "pair"),
                               ("FromClaim", ["req-2"], "single")]}),
    Scenario("prioritized-list-class-config",
             [claim("claim-0", first_available("req-0", sub("subReq-0", CLASS_A, 2),
                                               sub("subReq-1", CLASS_B, 2)))],
             [dclass(CLASS_A, DRIVER_A, config=[opaque(DRIVER_A, "foo")]),
              dclass(CLASS_B, DRIVER_B, config=[opaque(DRIVER_B, "bar")]),
              rslice("slice-1", NODE_1, "pool-1", DRIVER_B, *devices(2, 1)),
              rslice("slice-2", NODE_1, "pool-2", DRIVER_A, device("device-3"))],
             [[r("req-0/subReq-1", "pool-1", "device-1", DRIVER_B),
               r("req-0/subReq-1", "pool-1", "device-2", DRIVER_B)]],
             extra={"config": [("FromClass", [], "bar")]}),
    Scenario("class-config-lists-request-when-not-all-requests",
             [claim("claim-0", request("req-0"), request("req-1", CLASS_B))],
             [dclass(CLASS_A, DRIVER_A, config=[opaque(DRIVER_A, "a")]), B,
              one_device_slice("slice-1", NODE_1, "pool-1"),
              one_device_slice("slice-2", NODE_1, "pool-2", DRIVER_B)],
             [[r("req-0", "pool-1", "device-1"), r("req-1", "pool-2", "device-1", DRIVER_B)]],
             extra={"config": [("FromClass", ["req-0"], "a")]}),
]


def _param(config: object) -> str:
    params = getattr(config, "parameters", None)
    assert isinstance(params, dict)
    return next(iter(params))


@pytest.mark.parametrize("scenario", ADMIN + TAINTS + BINDING + CONFIG, ids=str)
def test_scenario(scenario: Scenario) -> None:
    outcome = check(scenario)
    if not scenario.extra:
        return
    alloc = outcome.claims[0].status.allocation  # type: ignore[union-attr]
    assert alloc is not None
    if "config" in scenario.extra:
        got = [(c.source, c.requests, _param(c.opaque)) for c in alloc.devices.config]
        assert got == scenario.extra["config"]
    if "tolerations" in scenario.extra:
        assert alloc.devices.results[0].tolerations == scenario.extra["tolerations"]
    if "binding" in scenario.extra:
        got_b = [(x.binding_conditions, x.binding_failure_conditions)
                 for x in alloc.devices.results]
        assert got_b == scenario.extra["binding"]


def test_admin_results_carry_admin_access_flag() -> None:
    outcome = check(ADMIN[1])
    result = outcome.claims[0].status.allocation.devices.results[0]  # type: ignore[union-attr]
    assert result.admin_access is True

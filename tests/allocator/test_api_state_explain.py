"""Public interface, the one-shot ``allocate``, incremental state, determinism, explanations."""

from __future__ import annotations

import types

import msgspec
import pytest

import dralab.allocator as allocator_pkg
from dralab.allocator import (
    Allocated,
    AllocatedState,
    AllocationError,
    Allocator,
    AllocatorFeatures,
    NodeView,
    SliceIndex,
    Unschedulable,
    allocate,
)
from dralab.api.codec import decode, encode
from dralab.api.features import FeatureGates

from .builders import (
    CLASS_A,
    DRIVER_A,
    NODE_1,
    NODE_2,
    all_request,
    claim,
    consumes,
    counter_set,
    dclass,
    device,
    devices,
    in_use,
    match,
    node,
    node_selector,
    one_device_slice,
    request,
    rslice,
    shared_device,
    simple_claim,
    taint,
)

A = dclass(CLASS_A, DRIVER_A)


def test_all_is_exact() -> None:
    public = {name for name, value in vars(allocator_pkg).items()
              if not name.startswith("_") and not isinstance(value, types.ModuleType)}
    assert set(allocator_pkg.__all__) == public
    assert allocator_pkg.__all__ == sorted(allocator_pkg.__all__)


def test_allocate_function_uses_objects_and_node_labels() -> None:
    objects = [A, node(NODE_1, "region-7"),
               one_device_slice("slice-1", node_selector("region", "region-7"), "pool-1"),
               one_device_slice("slice-2", node_selector("region", "region-7"), "pool-2"),
               in_use("busy", (DRIVER_A, "pool-1", "device-1"))]
    outcome = allocate([simple_claim("claim-0")], NODE_1, objects)
    assert isinstance(outcome, Allocated)
    result = outcome.claims[0].status.allocation.devices.results[0]  # type: ignore[union-attr]
    assert (result.pool, result.device) == ("pool-2", "device-1")
    # Without the Node object the label selector cannot match.
    objects_without_node = [o for o in objects if o.kind != "Node"]
    assert isinstance(allocate([simple_claim("claim-0")], NODE_1, objects_without_node),
                      Unschedulable)


def test_outcome_kinds_and_truthiness() -> None:
    ok = allocate([simple_claim("c")], NODE_1, [A, one_device_slice("s", NODE_1, "p")])
    bad = allocate([simple_claim("c")], NODE_1, [A])
    err = allocate([simple_claim("c", cls="missing")], NODE_1, [A])
    assert (ok.kind, bool(ok)) == ("allocated", True)
    assert (bad.kind, bool(bad)) == ("unschedulable", False)
    assert (err.kind, bool(err)) == ("error", False)
    assert isinstance(err, AllocationError) and "missing" in err.message


def test_inputs_are_not_mutated_and_results_round_trip() -> None:
    c = simple_claim("claim-0", constraints=[match("driver-a/numa")])
    before = msgspec.json.encode(c)
    s = rslice("slice-1", NODE_1, "pool-1", DRIVER_A, device("device-1", attrs={"numa": 1}))
    outcome = allocate([c], NODE_1, [A, s])
    assert isinstance(outcome, Allocated)
    assert msgspec.json.encode(c) == before
    assert c.status.allocation is None
    new = outcome.claims[0]
    assert new.spec is c.spec and new.metadata is c.metadata
    data = encode(new)
    assert data["status"]["allocation"]["devices"]["results"][0]["device"] == "device-1"
    assert decode(data) == msgspec.structs.replace(new, raw=data)


def test_already_allocated_claim_is_misuse() -> None:
    with pytest.raises(ValueError, match="already allocated"):
        allocate([in_use("done", (DRIVER_A, "pool-1", "device-1"))], NODE_1, [A])


def test_share_ids_are_deterministic_per_seed() -> None:
    objects = [A, rslice("slice-1", NODE_1, "pool-1", DRIVER_A,
                         shared_device("device-1", {"memory": "8Gi"}))]
    claims = [claim("c", request("req-0", capacity_requests={"memory": "1Gi"}))]

    def share(seed: int) -> str | None:
        out = allocate(claims, NODE_1, objects, seed=seed)
        assert isinstance(out, Allocated)
        return out.claims[0].status.allocation.devices.results[0].share_id  # type: ignore

    assert share(1) == share(1)
    assert share(1) != share(2)
    value = share(3)
    assert value is not None and len(value) == 36 and value[14] == "4"


def test_engine_reuse_with_incremental_state() -> None:
    slices = [rslice("slice-1", NODE_1, "pool-1", DRIVER_A, *devices(2)),
              rslice("slice-2", NODE_2, "pool-2", DRIVER_A, *devices(1))]
    state = AllocatedState()
    engine = Allocator(SliceIndex(slices), [A], state)
    placed = []
    for i in range(3):
        c = simple_claim(f"c{i}")
        for n in (NODE_1, NODE_2):
            out = engine.allocate([c], n)
            if isinstance(out, Allocated):
                state.add_claim(out.claims[0])
                placed.append((n, out.claims[0]))
                break
    assert [n for n, _ in placed] == [NODE_1, NODE_1, NODE_2]
    assert isinstance(engine.allocate([simple_claim("c3")], NODE_1), Unschedulable)
    state.remove_claim(placed[0][1])
    out = engine.allocate([simple_claim("c3")], NODE_1)
    assert isinstance(out, Allocated)
    assert out.claims[0].status.allocation.devices.results[0].device == "device-0"  # type: ignore
    state.remove_claim(placed[0][1])  # idempotent
    assert placed[1][1] in state and len(state.claims()) == 2


def test_counter_availability_follows_state_updates() -> None:
    slices = [rslice("slice-1", NODE_1, "pool-1", DRIVER_A,
                     device("a", counters=[consumes("cs", memory="6Gi")]),
                     device("b", counters=[consumes("cs", memory="6Gi")]), count=2),
              rslice("slice-2", NODE_1, "pool-1", DRIVER_A, count=2,
                     counters=[counter_set("cs", memory="8Gi")])]
    state = AllocatedState()
    engine = Allocator(slices, [A], state)
    first = engine.allocate([simple_claim("c0")], NODE_1)
    assert isinstance(first, Allocated)
    state.add_claim(first.claims[0])
    assert isinstance(engine.allocate([simple_claim("c1")], NODE_1), Unschedulable)
    state.remove_claim(first.claims[0])
    assert isinstance(engine.allocate([simple_claim("c1")], NODE_1), Allocated)


def test_state_copy_is_independent() -> None:
    state = AllocatedState.from_claims([in_use("a", (DRIVER_A, "p", "d"))])
    other = state.copy()
    other.add_claim(in_use("b", (DRIVER_A, "p", "e")))
    assert state.in_use("driver-a/p/d") and not state.in_use("driver-a/p/e")
    assert other.in_use("driver-a/p/e")


def test_shares_accumulate_and_release_capacity() -> None:
    state = AllocatedState()
    for name in ("a", "b"):
        state.add_claim(in_use(name, (DRIVER_A, "p", "d"), share=f"s-{name}",
                               consumed={"memory": "1Gi"}))
    assert not state.in_use("driver-a/p/d") and state.is_allocated("driver-a/p/d")
    assert state.consumed("driver-a/p/d") == {"driver-a/memory": 2 * 2**30 * 10**9}
    state.remove("uid-a")
    assert state.consumed("driver-a/p/d") == {"driver-a/memory": 2**30 * 10**9}
    state.remove("uid-b")
    assert state.consumed("driver-a/p/d") is None and not state.is_allocated("driver-a/p/d")


def test_feature_gates_are_accepted_everywhere() -> None:
    gates = FeatureGates.parse("DRADeviceTaints=false")
    objects = [A, rslice("slice-1", NODE_1, "pool-1", DRIVER_A,
                         device("device-1", taints=[taint()]))]
    assert isinstance(allocate([simple_claim("c")], NODE_1, objects, gates), Allocated)
    assert isinstance(allocate([simple_claim("c")], NODE_1, objects), Unschedulable)
    assert not AllocatorFeatures.from_gates(gates).device_taints


def test_node_view_of() -> None:
    assert NodeView.of("n").name == "n"
    view = NodeView.of(node(NODE_1, "r"))
    assert view.labels["region"] == "r"
    with pytest.raises(TypeError):
        NodeView.of(3)  # type: ignore[arg-type]


def test_malformed_node_selector_is_an_error() -> None:
    bad = node_selector("region")  # "In" without values
    out = allocate([simple_claim("c")], NODE_1, [A, one_device_slice("s", bad, "p")])
    assert isinstance(out, AllocationError) and "needs at least one value" in out.message


# --- explanations ---------------------------------------------------------------------

def explain_for(claims: list, objects: list) -> tuple[str, ...]:  # type: ignore[type-arg]
    out = allocate(claims, NODE_1, objects)
    assert isinstance(out, Unschedulable), out
    return out.explanations


def test_explanation_counts_selector_and_in_use() -> None:
    devs = [device(f"gpu-{i}", attrs={"big": i < 2}) for i in range(8)]
    lines = explain_for(
        [claim("c", request("gpu", CLASS_A, 1, 'device.attributes["driver-a"].big'))],
        [A, rslice("s", NODE_1, "pool-1", DRIVER_A, *devs),
         in_use("x", (DRIVER_A, "pool-1", "gpu-0"), (DRIVER_A, "pool-1", "gpu-1"))])
    assert lines == ("request gpu: 8 devices of class class-a on node node-1; "
                     "2 in use; 6 rejected by selector[0]; need 1; "
                     "nearest miss: driver-a/pool-1/gpu-0 (in use)",)


def test_explanation_for_empty_node_and_taints() -> None:
    assert explain_for([simple_claim("c", "gpu")], [A]) == (
        "request gpu: 0 devices of class class-a on node node-1; need 1",)
    lines = explain_for([simple_claim("c", "gpu")],
                        [A, rslice("s", NODE_1, "p", DRIVER_A,
                                   device("d", taints=[taint()]))])
    assert lines[0].endswith("1 tainted; need 1; nearest miss: driver-a/p/d (tainted)")


def test_explanation_names_constraint_when_devices_suffice() -> None:
    lines = explain_for(
        [claim("c", request("gpu", CLASS_A, 2), constraints=[match("driver-a/numa")])],
        [A, rslice("s", NODE_1, "p", DRIVER_A, device("a", attrs={"numa": 0}),
                   device("b", attrs={"numa": 1}))])
    assert lines == ("request gpu: 2 devices of class class-a on node node-1; need 2; "
                     "2 usable, blocked by matchAttribute driver-a/numa or by the pod's "
                     "other requests",)


def test_explanation_mentions_unusable_pools_and_all_requests() -> None:
    lines = explain_for(
        [claim("c", request("gpu"))],
        [A, one_device_slice("s1", NODE_1, "p", count=2), one_device_slice("s2", NODE_1, "p",
                                                                            count=2),
         one_device_slice("s3", NODE_1, "q", count=3)])
    assert lines[0] == "pool driver-a/p is invalid (duplicate device name device-1): not used"
    assert lines[1] == "pool driver-a/q is incomplete (being updated): not used"
    lines = explain_for([claim("c", all_request("all"))],
                        [A, rslice("s", NODE_1, "p", DRIVER_A, *devices(2)),
                         in_use("x", (DRIVER_A, "p", "device-0"))])
    assert lines == ("request all: 2 devices of class class-a on node node-1; 1 in use; "
                     "need all 2",)


def test_explanations_can_be_skipped() -> None:
    engine = Allocator([], [A])
    out = engine.allocate([simple_claim("c")], NODE_1, explain_failure=False)
    assert isinstance(out, Unschedulable) and out.explanations == ()
    assert out.reason == "cannot allocate all claims"


def test_step_budget_stands_in_for_the_filter_timeout() -> None:
    slices = [rslice("s", NODE_1, "p", DRIVER_A, *devices(5))]
    unbounded = Allocator(slices, [A]).allocate([claim("c", request("r", CLASS_A, 6))], NODE_1)
    assert isinstance(unbounded, Unschedulable) and unbounded.steps == 32
    bounded = Allocator(slices, [A], max_steps=10).allocate(
        [claim("c", request("r", CLASS_A, 6))], NODE_1)
    assert isinstance(bounded, Unschedulable)
    assert bounded.reason == "timed out trying to allocate devices" and bounded.steps == 10

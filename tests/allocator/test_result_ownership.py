"""Every allocation owns its node selector (issue 34, item 4).

API structs are frozen, but their lists are not: a caller may change a claim's
``status.allocation.nodeSelector`` in place. Such a change must stay in that
claim: later allocations on the same node, from the same allocator or another,
by a search or by a twin's replay, and the ResourceSlice a selector was copied
from, keep their own values. So do the opaque configs taken from the DeviceClass
and the claim.
"""

from __future__ import annotations

from msgspec.json import encode
from msgspec.structs import replace

from dralab.allocator import Allocated, Allocator
from dralab.api.core import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from dralab.api.resource import (
    DeviceClaimConfiguration,
    DeviceClassConfiguration,
    ResourceSlice,
)

from .builders import (
    CLASS_A,
    NODE_1,
    NODE_2,
    claim,
    dclass,
    devices,
    local_selector,
    node,
    node_selector,
    opaque,
    request,
    rslice,
    simple_claim,
)


def _selector(outcome: object, at: int = 0) -> NodeSelector:
    assert isinstance(outcome, Allocated), outcome
    allocation = outcome.claims[at].status.allocation
    assert allocation is not None and allocation.node_selector is not None
    return allocation.node_selector


def _vandalise(selector: NodeSelector) -> None:
    """Change everything a caller can reach in place: terms, requirements, values."""
    term = selector.node_selector_terms[0]
    requirements = term.match_fields or term.match_expressions
    requirements[0].values[0] = "elsewhere"
    requirements[0].values.append("another")
    requirements.append(NodeSelectorRequirement(key="k", operator="Exists"))
    selector.node_selector_terms.append(NodeSelectorTerm())


def _local_slices(*nodes: str) -> list[ResourceSlice]:
    return [rslice(f"slice-{n}", n, f"pool-{n}", "driver-a", *devices(4)) for n in nodes]


def _allocator(slices: list[ResourceSlice]) -> Allocator:
    return Allocator(slices, [dclass(CLASS_A)])


def test_two_claims_on_one_node_one_allocator() -> None:
    allocator = _allocator(_local_slices(NODE_1))
    first = allocator.allocate([simple_claim("claim-1")], NODE_1)
    _vandalise(_selector(first))
    second = allocator.allocate([simple_claim("claim-2")], NODE_1)
    assert _selector(second) == local_selector(NODE_1)
    assert _selector(first) != local_selector(NODE_1)


def test_two_allocators_on_one_node() -> None:
    slices = _local_slices(NODE_1)
    first = _allocator(slices).allocate([simple_claim("claim-1")], NODE_1)
    _vandalise(_selector(first))
    second = _allocator(slices).allocate([simple_claim("claim-2")], NODE_1)
    assert _selector(second) == local_selector(NODE_1)


def test_two_claims_of_one_pod() -> None:
    outcome = _allocator(_local_slices(NODE_1)).allocate(
        [simple_claim("claim-1"), simple_claim("claim-2")], NODE_1)
    _vandalise(_selector(outcome, 0))
    assert _selector(outcome, 1) == local_selector(NODE_1)


def test_twin_replay() -> None:
    """One pod's claims tried on node-1, then on node-2 whose slice repeats node-1's: node-2's
    answer is node-1's replayed (as a pod's Filter meets it), with its own selector; a
    later pod on node-2 searches (the allocator met the node before)."""
    allocator = _allocator(_local_slices(NODE_1, NODE_2))
    pod = [simple_claim("claim-1")]
    first = allocator.allocate(pod, NODE_1, explain_failure=False)
    _vandalise(_selector(first))
    replayed = allocator.allocate(pod, NODE_2, explain_failure=False)
    assert _selector(replayed) == local_selector(NODE_2)
    _vandalise(_selector(replayed))
    again = allocator.allocate([simple_claim("claim-2")], NODE_2, explain_failure=False)
    assert _selector(again) == local_selector(NODE_2)
    assert _selector(allocator.allocate([simple_claim("claim-3")], NODE_1)) == \
        local_selector(NODE_1)


def test_selector_copied_from_a_slice() -> None:
    """A network-attached slice's selector ends up in the allocation: as a copy."""
    scope = node_selector("region", "region-1")
    shared = rslice("slice-net", scope, "pool-net", "driver-a", *devices(4))
    allocator = _allocator([shared])
    first = allocator.allocate([claim("claim-1", request("req-0"))], node(NODE_1))
    _vandalise(_selector(first))
    assert shared.spec.node_selector == node_selector("region", "region-1")
    second = _allocator([shared]).allocate([simple_claim("claim-2")], node(NODE_1))
    assert _selector(second) == node_selector("region", "region-1")
    third = allocator.allocate([simple_claim("claim-3")], node(NODE_1))
    assert _selector(third) == node_selector("region", "region-1")


def test_opaque_parameters_are_the_results_own() -> None:
    """The class's and the claim's opaque configs go into every allocation: as copies."""
    cls = dclass(CLASS_A)
    cls = replace(cls, spec=replace(cls.spec, config=[
        DeviceClassConfiguration(opaque=opaque("driver-a", "class"))]))
    own = claim("claim-1", request("req-0"), config=[
        DeviceClaimConfiguration(requests=["req-0"], opaque=opaque("driver-a", "claim"))])
    before = (encode(cls), encode(own))
    allocator = Allocator(_local_slices(NODE_1), [cls])
    outcome = allocator.allocate([own], NODE_1)
    assert isinstance(outcome, Allocated)
    allocation = outcome.claims[0].status.allocation
    assert allocation is not None and len(allocation.devices.config) == 2
    for config in allocation.devices.config:
        assert config.opaque is not None
        config.opaque.parameters["changed"] = True
    assert (encode(cls), encode(own)) == before
    again = allocator.allocate([simple_claim("claim-2")], NODE_1)
    assert isinstance(again, Allocated)
    again_allocation = again.claims[0].status.allocation
    assert again_allocation is not None
    assert [c.opaque.parameters for c in again_allocation.devices.config
            if c.opaque is not None] == [{"class": "classValue"}]

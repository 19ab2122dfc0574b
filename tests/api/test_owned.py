"""``owned_copy``: an equal value that shares no container with the original."""

from __future__ import annotations

import datetime

import pytest

from dralab.api.core import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from dralab.api.owned import owned_copy
from dralab.api.quantity import parse_quantity
from dralab.api.resource import (
    AllocationResult,
    DeviceAllocationConfiguration,
    DeviceAllocationResult,
    DeviceRequestAllocationResult,
    OpaqueDeviceConfiguration,
)


def _allocation(parameters: object) -> AllocationResult:
    result = DeviceRequestAllocationResult(
        request="gpu", driver="d", pool="p", device="gpu-0", share_id="s",
        consumed_capacity={"memory": parse_quantity("1.5Gi")}, binding_conditions=["ready"])
    config = DeviceAllocationConfiguration(
        source="FromClaim", requests=["gpu"],
        opaque=OpaqueDeviceConfiguration(driver="d", parameters=parameters))
    selector = NodeSelector(node_selector_terms=[NodeSelectorTerm(match_fields=[
        NodeSelectorRequirement(key="metadata.name", operator="In", values=["node-1"])])])
    return AllocationResult(devices=DeviceAllocationResult(results=[result], config=[config]),
                            node_selector=selector, allocation_timestamp="2026-01-01T00:00:00Z")


@pytest.mark.parametrize("parameters", [
    {"mode": "exclusive", "n": [1, 2.5, None, True]},
    {"huge": 2 ** 70},                             # beyond msgpack's integers
    {"pair": (1, 2)},                              # msgpack would give a list
    {"when": datetime.datetime(2020, 1, 1)},       # msgpack would give a string
])
def test_equal_and_unshared(parameters: object) -> None:
    original = _allocation(parameters)
    copied = owned_copy(original)
    assert copied == original
    assert copied.devices.config[0].opaque is not None
    assert copied.devices.config[0].opaque.parameters == parameters
    assert copied.devices.results is not original.devices.results
    assert copied.devices.results[0].consumed_capacity is not \
        original.devices.results[0].consumed_capacity
    assert copied.node_selector is not None and original.node_selector is not None
    copied.node_selector.node_selector_terms[0].match_fields[0].values.append("node-2")
    copied.devices.results[0].binding_conditions.clear()
    assert original == _allocation(parameters)

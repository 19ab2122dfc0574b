"""A claim owns the allocation Reserve writes into it (issue 34, item 4).

Filter's allocations come from the plugin's outcome cache, which hands one
outcome to every pod with the same claim spec while the node's pools do not
change. Reserve writes a copy: a caller changing the claim's lists in place
(node selector, results) changes neither the cache nor another pod's claim.
"""

from __future__ import annotations

from msgspec.json import encode
from msgspec.structs import replace

from dralab.api.core import NodeSelectorTerm
from dralab.api.resource import AllocationResult, DeviceRequestAllocationResult
from dralab.scheduler.plugins.dynamicresources.plugin import NAME
from dralab.scheduler.plugins.dynamicresources.state import DRAState

from .builders import Harness, claims_of, cluster, gpu_nodes, pod, template


def _allocation(h: Harness, name: str) -> tuple[AllocationResult, AllocationResult]:
    """(the claim's allocation, Filter's result for its node) after scheduling pod ``name``."""
    attempt = h.schedule(pod(name, templates={"gpu": "tpl"}))
    assert attempt.node is not None and attempt.state is not None
    result = attempt.state.read(NAME, DRAState).result(attempt.node)
    assert result is not None
    info = h.cluster.pods[f"default/{name}"]
    [claim] = claims_of(h.cluster, info)
    assert claim.status.allocation is not None
    return claim.status.allocation, result[0][0]


def test_reserve_writes_a_copy_of_the_cached_allocation() -> None:
    nodes, slices = gpu_nodes(2, 2)
    h = Harness(cluster(nodes, slices, templates=[template("tpl")]))
    written, cached = _allocation(h, "a")
    assert replace(written, allocation_timestamp=None) == cached  # PreBind stamps the time
    assert written.node_selector is not None and cached.node_selector is not None
    pristine = encode(cached)
    expected = written.node_selector.node_selector_terms[0].match_fields[0].values[0]
    # Change every list a caller can reach in the claim.
    term = written.node_selector.node_selector_terms[0]
    term.match_fields[0].values[0] = "elsewhere"
    written.node_selector.node_selector_terms.append(NodeSelectorTerm())
    written.devices.results.append(DeviceRequestAllocationResult(request="x"))
    assert cached.node_selector.node_selector_terms[0].match_fields[0].values == [expected]
    assert len(cached.devices.results) == 1 and encode(cached) == pristine
    second, _ = _allocation(h, "b")
    assert len(second.devices.results) == 1
    assert second.node_selector is not None
    assert len(second.node_selector.node_selector_terms) == 1
    assert second.node_selector.node_selector_terms[0].match_fields[0].values[0] != "elsewhere"

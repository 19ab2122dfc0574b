"""KAI's topology plugin helpers, ported case by case.

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092,
``pkg/scheduler/plugins/topology/common_test.go`` (Apache-2.0): TestIsNodePartOfTopology
and TestLowestCommonDomainID, one pytest case per table entry (id = its name), against
``dralab.queueing.kai.topology``: node_part_of_topology, lowest_common_domain. Both
tables use the levels zone, rack.
"""

# ruff: noqa: E501

from __future__ import annotations

import pytest
from tests.peers.kai.topology_helpers import Cite, usage

from dralab.queueing.kai.model import TopologyConstraint
from dralab.queueing.kai.topology import lowest_common_domain, node_part_of_topology

FILE = "common_test.go"
LEVELS = ("zone", "rack")

PART_OF: list[tuple[str, int, dict[str, str], bool]] = [
    ("all required labels present", 42, {"zone": "z1", "rack": "r1"}, True),
    ("missing one level label", 50, {"zone": "z1"}, False),
]


@pytest.mark.parametrize("case", PART_OF, ids=[c[0] for c in PART_OF])
def test_is_node_part_of_topology(case: tuple[str, int, dict[str, str], bool]) -> None:
    name, line, labels, expected = case
    node = usage("node-1", labels)
    assert node_part_of_topology(node.node.labels, LEVELS) is expected, Cite(FILE, "TestIsNodePartOfTopology", name, line)


FULL = {"zone": "z1", "rack": "r1"}
# (name, line, nodes (name, labels), preferred level, expected id, level, valid nodes)
LOWEST: list[tuple[str, int, list[tuple[str, dict[str, str]]], str, str, str, list[str]]] = [
    ("all nodes share full topology", 81, [("node-1", FULL), ("node-2", FULL)], "", "z1.r1", "rack", ["node-1", "node-2"]),
    ("all nodes share full topology - but the preferred level is zone", 92,
     [("node-1", FULL), ("node-2", FULL)], "zone", "z1", "zone", ["node-1", "node-2"]),
    ("mismatch at deeper level returns common prefix", 105,
     [("node-1", FULL), ("node-2", {"zone": "z1", "rack": "r2"})], "", "z1", "zone", ["node-1", "node-2"]),
    ("mismatch at first level returns root", 116,
     [("node-1", FULL), ("node-2", {"zone": "z2", "rack": "r1"})], "", "root", "root", ["node-1", "node-2"]),
    ("invalid nodes are filtered out", 127, [("node-1", FULL), ("node-2", {"zone": "z1"})], "", "z1.r1", "rack", ["node-1"]),
    ("no valid nodes returns root and empty map", 138, [("node-1", {"zone": "z1"})], "", "root", "root", []),
]


@pytest.mark.parametrize("case", LOWEST, ids=[c[0] for c in LOWEST])
def test_lowest_common_domain_id(case: tuple[str, int, list[tuple[str, dict[str, str]]], str, str, str, list[str]]) -> None:
    name, line, nodes, preferred, expected_id, expected_level, expected_valid = case
    cite = Cite(FILE, "TestLowestCommonDomainID", name, line)
    domain_id, level, valid = lowest_common_domain(
        [usage(n, labels) for n, labels in nodes], LEVELS, TopologyConstraint(preferred_level=preferred))
    assert (domain_id, level) == (expected_id, expected_level), cite
    assert sorted(valid) == sorted(expected_valid), cite

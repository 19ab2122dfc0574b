"""KAI's topology node scoring and tree sort, ported case by case.

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092,
``pkg/scheduler/plugins/topology/node_scoring_test.go`` (Apache-2.0): TestGetLevelDomains,
TestCalculateNodeScores, TestSortTree (one pytest case per table entry, id = its name)
and TestSortTree_NestedSorting (one case). They run against
``dralab.queueing.kai.topology``: level_domains, node_scores, sort_tree.
"""

# ruff: noqa: E501

from __future__ import annotations

from collections.abc import Callable

import pytest
from tests.peers.kai.topology_helpers import Cite, D, R

from dralab.queueing.kai.topology import KaiDomain, level_domains, node_scores, sort_tree

FILE = "node_scoring_test.go"
TOPOLOGY = 10000.0   # scores.Topology

# TestGetLevelDomains: (name, line, root, level, expected count, expected ids or None)
LEVEL_DOMAINS: list[tuple[str, int, Callable[[], KaiDomain], str, int, list[str] | None]] = [
    ("root at target level", 27, lambda: D("zone1", "zone"), "zone", 1, ["zone1"]),
    ("no children at target level", 37, lambda: D("zone1", "zone", []), "rack", 0, None),
    ("multiple children at target level", 47,
     lambda: D("zone1", "zone", [D("rack1", "rack"), D("rack2", "rack"), D("rack3", "rack")]),
     "rack", 3, ["rack1", "rack2", "rack3"]),
    ("nested hierarchy - target at deepest level", 62,
     lambda: D("region1", "region", [
         D("zone1", "zone", [D("rack1", "rack"), D("rack2", "rack")]),
         D("zone2", "zone", [D("rack3", "rack")])]),
     "rack", 3, ["rack1", "rack2", "rack3"]),
]


@pytest.mark.parametrize("case", LEVEL_DOMAINS, ids=[c[0] for c in LEVEL_DOMAINS])
def test_get_level_domains(case: tuple[str, int, Callable[[], KaiDomain], str, int, list[str] | None]) -> None:
    name, line, root, level, count, ids = case
    cite = Cite(FILE, "TestGetLevelDomains", name, line)
    result = level_domains(root(), level)
    assert len(result) == count, cite
    if ids is not None:
        assert sorted(d.id for d in result) == sorted(ids), cite   # ElementsMatch


# TestCalculateNodeScores: (name, line, domain, preferred level, expected scores)
NODE_SCORES: list[tuple[str, int, Callable[[], KaiDomain], str, dict[str, float]]] = [
    ("single rack with nodes", 114, lambda: D("rack1", "rack", nodes=["node1", "node2"]), "rack",
     {"node1": 10 * TOPOLOGY, "node2": 10 * TOPOLOGY}),
    ("multiple racks - scores decrease by position", 130,
     lambda: D("zone1", "zone", [D("rack3", "rack", pods=1, nodes=["node3"]),
                                 D("rack2", "rack", pods=2, nodes=["node2"]),
                                 D("rack1", "rack", pods=3, nodes=["node1"])]), "rack",
     {"node1": 10 * TOPOLOGY, "node2": 6 * TOPOLOGY, "node3": 3 * TOPOLOGY}),
    ("4 racks - verify scoring distribution", 169,
     lambda: D("zone1", "zone", [D("rack4", "rack", nodes=["node4"]), D("rack3", "rack", nodes=["node3"]),
                                 D("rack2", "rack", nodes=["node2"]), D("rack1", "rack", nodes=["node1"])]), "rack",
     {"node1": 10 * TOPOLOGY, "node2": 7 * TOPOLOGY, "node3": 5 * TOPOLOGY, "node4": 2 * TOPOLOGY}),
    ("nested hierarchy - nodes directly in preferred level domains", 213,
     lambda: D("region1", "region", [D("zone2", "zone", nodes=["node3", "node4"]),
                                     D("zone1", "zone", nodes=["node1", "node2"])]), "zone",
     {"node1": 10 * TOPOLOGY, "node2": 10 * TOPOLOGY, "node3": 5 * TOPOLOGY, "node4": 5 * TOPOLOGY}),
]


@pytest.mark.parametrize("case", NODE_SCORES, ids=[c[0] for c in NODE_SCORES])
def test_calculate_node_scores(case: tuple[str, int, Callable[[], KaiDomain], str, dict[str, float]]) -> None:
    name, line, domain, preferred, expected = case
    cite = Cite(FILE, "TestCalculateNodeScores", name, line)
    scores = node_scores(domain(), preferred)
    assert len(scores) == len(expected), cite
    for node, score in expected.items():
        assert node in scores, cite
        assert scores[node] == pytest.approx(score, abs=0.001), cite


# TestSortTree: (name, line, tasks' resources, tree, max depth level, expected order of
# the root's children or None)
SORT_TREE: list[tuple[str, int, dict[str, float] | None, Callable[[], KaiDomain | None], str, list[str] | None]] = [
    ("nil root", 269, None, lambda: None, "rack", None),
    ("empty max depth level", 278, R(0, 0, 1),
     lambda: D("zone1", "zone", [D("rack1", "rack", free=R(0, 0, 1)), D("rack2", "rack", free=R(0, 0, 1))]),
     "", None),
    ("sort single level - gpus", 294, R(0, 0, 1),
     lambda: D("zone1", "zone", [D("rack3", "rack", free=R(0, 0, 5)), D("rack1", "rack", free=R(0, 0, 2)),
                                 D("rack2", "rack", free=R(0, 0, 8))]),
     "rack", ["rack1", "rack3", "rack2"]),
    ("sort single level - cpu", 312, R(1000, 0, 0),
     lambda: D("zone1", "zone", [D("rack3", "rack", free=R(5000, 0, 0)), D("rack1", "rack", free=R(2000, 0, 0)),
                                 D("rack2", "rack", free=R(8000, 0, 0))]),
     "rack", ["rack1", "rack3", "rack2"]),
    ("sort single level - several dominant resources", 330, R(1000, 0, 1),
     lambda: D("zone1", "zone", [D("rack3", "rack", pods=5, free=R(100000, 0, 5)),
                                 D("rack1", "rack", pods=2, free=R(2000, 0, 4)),
                                 D("rack2", "rack", pods=8, free=R(100000, 0, 8))]),
     "rack", ["rack1", "rack3", "rack2"]),
    ("sort stops at max depth level", 348, R(0, 0, 1),
     lambda: D("region1", "region", [
         D("zone2", "zone", [D("rack4", "rack", pods=3, free=R(0, 0, 3)), D("rack3", "rack", pods=7, free=R(0, 0, 7))],
           pods=10, free=R(0, 0, 10)),
         D("zone1", "zone", [D("rack2", "rack", pods=1, free=R(0, 0, 1)), D("rack1", "rack", pods=4, free=R(0, 0, 4))],
           pods=5, free=R(0, 0, 5))]),
     "zone", ["zone1", "zone2"]),
    ("sort nested hierarchy to rack level", 383, R(0, 0, 1),
     lambda: D("region1", "region", [
         D("zone1", "zone", [D("rack2", "rack", pods=10, free=R(0, 0, 10)), D("rack1", "rack", pods=5, free=R(0, 0, 5))],
           pods=15, free=R(0, 0, 15)),
         D("zone2", "zone", [D("rack4", "rack", pods=3, free=R(0, 0, 3)), D("rack3", "rack", pods=5, free=R(0, 0, 5))],
           pods=8, free=R(0, 0, 8))]),
     "rack", ["zone2", "zone1"]),
    ("stable sort - same allocatable pods maintain order", 418, R(0, 0, 1),
     lambda: D("zone1", "zone", [D("rack1", "rack", pods=5, free=R(0, 0, 5)), D("rack2", "rack", pods=5, free=R(0, 0, 5)),
                                 D("rack3", "rack", pods=5, free=R(0, 0, 5))]),
     "rack", ["rack1", "rack2", "rack3"]),
]


@pytest.mark.parametrize("case", SORT_TREE, ids=[c[0] for c in SORT_TREE])
def test_sort_tree(case: tuple[str, int, dict[str, float] | None, Callable[[], KaiDomain | None], str, list[str] | None]) -> None:
    name, line, asked, setup, depth, expected = case
    cite = Cite(FILE, "TestSortTree", name, line)
    root = setup()
    sort_tree(asked or {}, root, depth)
    if expected is None or root is None:
        return   # upstream checks only that sorting returns
    assert [c.id for c in root.children] == expected, cite


def test_sort_tree_nested_sorting() -> None:
    cite = Cite(FILE, "TestSortTree_NestedSorting", "TestSortTree_NestedSorting", 462)
    root = D("region1", "region", [
        D("zone2", "zone", [D("rack4", "rack", pods=7, free=R(0, 0, 7)), D("rack3", "rack", pods=3, free=R(0, 0, 3))],
          pods=10, free=R(0, 0, 10)),
        D("zone1", "zone", [D("rack2", "rack", pods=4, free=R(0, 0, 4)), D("rack1", "rack", pods=1, free=R(0, 0, 1))],
          pods=5, free=R(0, 0, 5))])
    sort_tree(R(0, 0, 1), root, "rack")
    assert [c.id for c in root.children] == ["zone1", "zone2"], cite
    assert [c.id for c in root.children[0].children] == ["rack1", "rack2"], cite
    assert [c.id for c in root.children[1].children] == ["rack3", "rack4"], cite

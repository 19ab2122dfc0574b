"""KAI's topology tree traversal, ported case by case.

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092,
``pkg/scheduler/plugins/topology/topology_utils_test.go`` (Apache-2.0):
TestReverseLevelOrder, one pytest case per table entry (id = its name), against
``dralab.queueing.kai.topology.reverse_level_order`` (the order candidate domains are
tried in).
"""

# ruff: noqa: E501

from __future__ import annotations

from collections.abc import Callable

import pytest
from tests.peers.kai.topology_helpers import Cite, D

from dralab.queueing.kai.topology import KaiDomain, reverse_level_order

FILE = "topology_utils_test.go"

CASES: list[tuple[str, int, Callable[[], KaiDomain | None], list[str] | None]] = [
    ("nil root returns nil", 19, lambda: None, None),
    ("single node", 24, lambda: D("1", "zone"), ["1"]),
    ("simple tree - documentation example", 32,
     lambda: D("1", "zone", [D("2", "spine", [D("5", "rack"), D("6", "rack")]), D("3", "spine"),
                             D("4", "spine", [D("7", "rack")])]),
     ["5", "6", "7", "2", "3", "4", "1"]),
    ("binary tree", 68,
     lambda: D("A", "zone", [D("B", "spine", [D("D", "rack"), D("E", "rack")]), D("C", "spine")]),
     ["D", "E", "B", "C", "A"]),
    ("linear tree (linked list)", 97, lambda: D("1", "zone", [D("2", "spine", [D("3", "rack")])]), ["3", "2", "1"]),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_reverse_level_order(case: tuple[str, int, Callable[[], KaiDomain | None], list[str] | None]) -> None:
    name, line, root, expected = case
    cite = Cite(FILE, "TestReverseLevelOrder", name, line)
    result = reverse_level_order(root())
    if expected is None:
        assert not result, cite
        return
    assert [d.id for d in result] == expected, cite

"""KAI's subgrouporder plugin table, ported case by case.

Source: NVIDIA/KAI-Scheduler at 72de64fc8eca10fa8cca26a20156178f3edbe092 (Apache-2.0),
``pkg/scheduler/plugins/subgrouporder/subgroup_order_test.go`` TestSubGroupOrderFn: two
pod sets (minAvailable, running pods) compared by PodSetOrderFn, here
``plugins.order.podset_order`` (which the session's pod-set order asks first,
``actions.common``): -1 left first, 1 right first, 0 equal.
"""

from __future__ import annotations

import pytest
from tests.peers.kai.plugin_helpers import Cite

from dralab.queueing.kai.plugins.order import podset_order

# (name, line, lMinAvailable, lAllocated, rMinAvailable, rAllocated, want)
CASES = [
    ("both below minAvailable, should be equal", 43, 3, 1, 4, 2, 0),
    ("left below, right above minAvailable", 51, 3, 1, 3, 5, -1),
    ("right below, left above minAvailable", 59, 3, 5, 3, 1, 1),
    ("both above minAvailable, left lower allocation ratio", 67, 2, 4, 4, 9, -1),
    ("both above minAvailable, right lower allocation ratio", 75, 2, 10, 4, 9, 1),
    ("both above minAvailable, equal allocation ratio", 83, 2, 4, 4, 8, 0),
]


@pytest.mark.parametrize(("name", "line", "lmin", "lalloc", "rmin", "ralloc", "want"), CASES,
                         ids=[c[0] for c in CASES])
def test_podset_order(name: str, line: int, lmin: int, lalloc: int, rmin: int, ralloc: int,
                      want: int) -> None:
    cite = Cite("subgrouporder/subgroup_order_test.go", "TestSubGroupOrderFn", name, line)
    assert podset_order(lalloc, lmin, ralloc, rmin) == want, str(cite)

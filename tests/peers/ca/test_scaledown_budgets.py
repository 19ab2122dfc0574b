"""Cluster Autoscaler's scale-down budgets table and unneeded-nodes limit table, ported.

kubernetes/autoscaler, branch cluster-autoscaler-release-1.37 at
a16f0ae8b5578f09604371c75e0cad29ed794e59:

* cluster-autoscaler/core/scaledown/budgets/budgets_test.go, TestCropNodesToBudgets
  (60 cases, all; MaxScaleDownParallelism 10, MaxDrainParallelism 5, as upstream's
  harness) against ``crop_to_budget``, the nodes grouped by their group; the
  "atomicN" groups are upstream's sizedNodeGroup("atomic-N", N, true): ZeroOrMaxNodeScaling,
  target size N, registered nodes those of the case (empty, drain and other nodes).
* cluster-autoscaler/core/scaledown/planner/planner_test.go,
  TestUpdateClusterStatUnneededNodesLimit (13 cases, all) against ``UnneededNodes.limit``
  and ``categorize_nodes`` (100 empty eligible nodes; in the "atomic sclale down" ones
  they are of one ZeroOrMaxNodeScaling group, which the limit does not count).

Case ids are upstream's names.
"""

from __future__ import annotations

import pytest

from dralab.autoscale.drainability import DeleteOptions, DrainContext, default_rules
from dralab.autoscale.scaledown import AtomicSize, UnneededNodes, categorize_nodes, crop_to_budget

from .builders_down import cluster_of, node

Views = list[tuple[str, int, int]]

# (name, empty deletions in progress, drain deletions in progress, empty, drain,
#  want empty, want drain, atomic): node lists as upstream's generateNodeGroupViewList
#  (group, from, to). Upstream's otherNodes (registered nodes that are neither empty nor
#  to drain) are in OTHER_NODES.
BUDGETS: list[tuple[str, int, int, Views, Views, Views, Views, bool]] = [
    ('no nodes',
     0, 0, [],
     [],
     [],
     [], False),
    ('empty nodes within max limit, no deletions in progress',
     0, 0, [("testNg", 0, 10)],
     [],
     [("testNg", 0, 10)],
     [], False),
    ('empty nodes exceeding max limit, no deletions in progress',
     0, 0, [("testNg", 0, 11)],
     [],
     [("testNg", 0, 10)],
     [], False),
    ('empty atomic node group exceeding max limit',
     0, 0, [("atomic11", 0, 11)],
     [],
     [("atomic11", 0, 11)],
     [], True),
    ('empty regular and atomic',
     0, 0, [("testNg", 0, 8), ("atomic3", 0, 3)],
     [],
     [("atomic3", 0, 3), ("testNg", 0, 7)],
     [], True),
    ('multiple empty atomic',
     0, 0, [("testNg", 0, 3), ("atomic8", 0, 8), ("atomic3", 0, 3)],
     [],
     [("atomic8", 0, 8), ("testNg", 0, 2)],
     [], True),
    ('empty nodes with deletions in progress, within budget',
     1, 1, [("testNg", 0, 8)],
     [],
     [("testNg", 0, 8)],
     [], False),
    ('empty nodes with deletions in progress, exceeding budget',
     1, 1, [("testNg", 0, 10)],
     [],
     [("testNg", 0, 8)],
     [], False),
    ('empty atomic nodes with deletions in progress, exceeding budget',
     3, 3, [("atomic8", 0, 8)],
     [],
     [("atomic8", 0, 8)],
     [], True),
    ('empty nodes with deletions in progress, 0 budget left',
     5, 5, [("testNg", 0, 10)],
     [],
     [],
     [], False),
    ('empty atomic nodes with deletions in progress, 0 budget left',
     5, 5, [("atomic3", 0, 3)],
     [],
     [],
     [], True),
    ('empty nodes with deletions in progress, budget exceeded',
     50, 50, [("testNg", 0, 10)],
     [],
     [],
     [], False),
    ('drain nodes within max limit, no deletions in progress',
     0, 0, [],
     [("testNg", 0, 5)],
     [],
     [("testNg", 0, 5)], False),
    ('multiple drain node groups',
     0, 0, [],
     [("testNg", 0, 5), ("testNg2", 0, 5)],
     [],
     [("testNg", 0, 5)], False),
    ('drain nodes exceeding max limit, no deletions in progress',
     0, 0, [],
     [("testNg", 0, 6)],
     [],
     [("testNg", 0, 5)], False),
    ('drain atomic exceeding limit',
     0, 0, [],
     [("atomic8", 0, 8)],
     [],
     [("atomic8", 0, 8)], True),
    ('drain regular and atomic exceeding limit',
     0, 0, [],
     [("testNg", 0, 3), ("atomic3", 0, 3)],
     [],
     [("atomic3", 0, 3), ("testNg", 0, 2)], True),
    ('multiple drain atomic',
     0, 0, [],
     [("testNg", 0, 3), ("atomic3", 0, 3), ("atomic4", 0, 4)],
     [],
     [("atomic3", 0, 3), ("testNg", 0, 2)], True),
    ('drain nodes with deletions in progress, within budget',
     1, 2, [],
     [("testNg", 0, 3)],
     [],
     [("testNg", 0, 3)], False),
    ('drain nodes with deletions in progress, exceeding drain budget',
     1, 2, [],
     [("testNg", 0, 5)],
     [],
     [("testNg", 0, 3)], False),
    ('drain atomic nodes with deletions in progress, exceeding drain budget',
     1, 2, [],
     [("atomic4", 0, 4)],
     [],
     [("atomic4", 0, 4)], True),
    ('drain nodes with deletions in progress, 0 drain budget left',
     1, 5, [],
     [("testNg", 0, 5)],
     [],
     [], False),
    ('drain atomic nodes with deletions in progress, 0 drain budget left',
     1, 5, [],
     [("atomic4", 0, 4)],
     [],
     [], True),
    ('drain nodes with deletions in progress, drain budget exceeded',
     1, 50, [],
     [("testNg", 0, 5)],
     [],
     [], False),
    ('drain nodes with deletions in progress, exceeding overall budget',
     7, 1, [],
     [("testNg", 0, 4)],
     [],
     [("testNg", 0, 2)], False),
    ('drain nodes with deletions in progress, 0 overall budget left',
     10, 0, [],
     [("testNg", 0, 4)],
     [],
     [], False),
    ('drain nodes with deletions in progress, overall budget exceeded',
     50, 0, [],
     [("testNg", 0, 4)],
     [],
     [], False),
    ('empty&drain nodes within max limits, no deletions in progress',
     0, 0, [("testNg", 0, 5)],
     [("testNg2", 0, 5)],
     [("testNg", 0, 5)],
     [("testNg2", 0, 5)], False),
    ('empty&drain atomic nodes within max limits, no deletions in progress',
     0, 0, [("atomic3", 0, 3)],
     [("atomic4", 0, 4)],
     [("atomic3", 0, 3)],
     [("atomic4", 0, 4)], True),
    ('empty&drain nodes exceeding overall limit, no deletions in progress',
     0, 0, [("testNg", 0, 8)],
     [("testNg2", 0, 8)],
     [("testNg", 0, 8)],
     [("testNg2", 0, 2)], False),
    ('empty&drain atomic nodes exceeding overall limit, no deletions in progress',
     0, 0, [("atomic8", 0, 8)],
     [("atomic4", 0, 4)],
     [("atomic8", 0, 8)],
     [], True),
    ('empty&drain atomic nodes in same group within overall limit, no deletions in '
     'progress',
     0, 0, [("atomic8", 0, 5)],
     [("atomic8", 5, 8)],
     [("atomic8", 0, 5)],
     [("atomic8", 5, 8)], True),
    ('empty&drain atomic nodes in same group exceeding overall limit, no deletions '
     'in progress',
     0, 0, [("atomic11", 0, 8)],
     [("atomic11", 8, 11)],
     [("atomic11", 0, 8)],
     [("atomic11", 8, 11)], True),
    ('empty&drain atomic nodes in same group exceeding drain limit, no deletions in '
     'progress',
     0, 0, [("atomic8", 0, 2)],
     [("atomic8", 2, 8)],
     [("atomic8", 0, 2)],
     [("atomic8", 2, 8)], True),
    ('empty&drain atomic nodes in same group not matching registered node group '
     'size, no deletions in progress',
     0, 0, [("atomic8", 0, 2)],
     [("atomic8", 2, 4)],
     [],
     [], True),
    ('empty&drain atomic nodes in same group matching registered node group size, no '
     'deletions in progress',
     0, 0, [("atomic8", 0, 2)],
     [("atomic8", 2, 4)],
     [("atomic8", 0, 2)],
     [("atomic8", 2, 4)], True),
    ('empty&drain atomic nodes exceeding drain limit, no deletions in progress',
     0, 0, [("atomic4", 0, 4)],
     [("atomic8", 0, 8)],
     [("atomic4", 0, 4)],
     [], True),
    ('empty&drain atomic and regular nodes exceeding drain limit, no deletions in '
     'progress',
     0, 0, [("testNg", 0, 5), ("atomic3", 0, 3)],
     [("atomic8", 0, 8)],
     [("atomic3", 0, 3), ("testNg", 0, 5)],
     [], True),
    ('empty&drain regular and atomic nodes in same group exceeding overall limit, no '
     'deletions in progress',
     0, 0, [("testNg", 0, 5), ("atomic11", 0, 8)],
     [("atomic11", 8, 11)],
     [("atomic11", 0, 8)],
     [("atomic11", 8, 11)], True),
    ('empty&drain regular and multiple atomic nodes in same group exceeding drain '
     'limit, no deletions in progress',
     0, 0, [("testNg", 0, 5), ("atomic8", 0, 5), ("atomic11", 0, 8)],
     [("atomic11", 8, 11), ("atomic8", 5, 8)],
     [("atomic8", 0, 5), ("testNg", 0, 2)],
     [("atomic8", 5, 8)], True),
    ('empty&drain multiple atomic nodes in same group exceeding overall limit, no '
     'deletions in progress',
     0, 0, [("atomic3", 0, 3), ("atomic4", 0, 2), ("atomic11", 0, 11)],
     [("atomic4", 2, 4)],
     [("atomic3", 0, 3), ("atomic4", 0, 2)],
     [("atomic4", 2, 4)], True),
    ('empty regular and drain atomic nodes exceeding overall limit, no deletions in '
     'progress',
     0, 0, [("testNg", 0, 5)],
     [("atomic8", 0, 8)],
     [("testNg", 0, 2)],
     [("atomic8", 0, 8)], True),
    ('empty&drain nodes exceeding drain limit, no deletions in progress',
     0, 0, [("testNg", 0, 2)],
     [("testNg2", 0, 8)],
     [("testNg", 0, 2)],
     [("testNg2", 0, 5)], False),
    ('empty&drain nodes with deletions in progress, 0 overall budget left',
     10, 0, [("testNg", 0, 5)],
     [("testNg2", 0, 5)],
     [],
     [], False),
    ('empty&drain atomic nodes with deletions in progress, 0 overall budget left',
     10, 0, [("atomic4", 0, 4)],
     [("atomic3", 0, 3)],
     [],
     [], True),
    ('empty&drain atomic nodes in same group with deletions in progress, 0 overall '
     'budget left',
     10, 0, [("atomic8", 0, 4)],
     [("atomic8", 4, 8)],
     [],
     [], True),
    ('empty&drain nodes with deletions in progress, overall budget exceeded '
     "(shouldn't happen, just a sanity check)",
     50, 0, [("testNg", 0, 5)],
     [("testNg2", 0, 5)],
     [],
     [], False),
    ('empty&drain nodes with deletions in progress, 0 drain budget left',
     0, 5, [("testNg", 0, 5)],
     [("testNg2", 0, 5)],
     [("testNg", 0, 5)],
     [], False),
    ('empty&drain atomic nodes with deletions in progress, 0 drain budget left',
     0, 5, [("atomic4", 0, 4)],
     [("atomic3", 0, 3)],
     [("atomic4", 0, 4)],
     [], True),
    ("empty&drain nodes with deletions in progress, drain budget exceeded (shouldn't "
     'happen, just a sanity check)',
     0, 9, [("testNg", 0, 5)],
     [("testNg2", 0, 5)],
     [("testNg", 0, 1)],
     [], False),
    ('empty&drain nodes with deletions in progress, overall budget exceeded, only '
     'empty nodes fit',
     5, 3, [("testNg", 0, 5)],
     [("testNg2", 0, 2)],
     [("testNg", 0, 2)],
     [], False),
    ('empty&drain nodes with deletions in progress, overall budget exceeded, both '
     'empty&drain nodes fit',
     5, 3, [("testNg", 0, 1)],
     [("testNg2", 0, 2)],
     [("testNg", 0, 1)],
     [("testNg2", 0, 1)], False),
    ('empty&drain nodes with deletions in progress, drain budget exceeded',
     1, 3, [("testNg", 0, 4)],
     [("testNg2", 0, 5)],
     [("testNg", 0, 4)],
     [("testNg2", 0, 2)], False),
    ('empty&drain atomic nodes with deletions in progress, overall budget exceeded, '
     'only empty nodes fit',
     5, 2, [("atomic4", 0, 4)],
     [("atomic3", 0, 3)],
     [("atomic4", 0, 4)],
     [], True),
    ('empty&drain atomic nodes in same group with deletions in progress, both '
     'empty&drain nodes fit',
     5, 2, [("atomic3", 0, 2)],
     [("atomic3", 2, 3)],
     [("atomic3", 0, 2)],
     [("atomic3", 2, 3)], True),
    ('empty&drain atomic nodes in same group with deletions in progress, overall '
     'budget exceeded, both empty&drain nodes fit',
     5, 2, [("atomic8", 0, 6)],
     [("atomic8", 6, 8)],
     [("atomic8", 0, 6)],
     [("atomic8", 6, 8)], True),
    ('empty&drain atomic nodes in same group with deletions in progress, drain '
     'budget exceeded, both empty&drain nodes fit',
     2, 2, [("atomic5", 0, 1)],
     [("atomic5", 1, 5)],
     [("atomic5", 0, 1)],
     [("atomic5", 1, 5)], True),
    ('empty&drain regular and atomic nodes with deletions in progress, overall '
     'budget exceeded, only empty atomic is deleted',
     5, 2, [("testNg", 0, 4), ("atomic4", 0, 4)],
     [("testNg2", 0, 4), ("atomic3", 0, 3)],
     [("atomic4", 0, 4)],
     [], True),
    ('empty&drain regular and atomic nodes in same group with deletions in progress, '
     'overall budget exceeded, both empty&drain atomic nodes fit',
     5, 2, [("testNg", 0, 4), ("atomic4", 0, 2)],
     [("testNg2", 0, 4), ("atomic4", 2, 4)],
     [("atomic4", 0, 2)],
     [("atomic4", 2, 4)], True),
    ('empty&drain regular and atomic nodes in same group with deletions in progress, '
     'both empty&drain nodes fit',
     2, 2, [("testNg", 0, 4), ("atomic4", 0, 2)],
     [("testNg2", 0, 4), ("atomic4", 2, 4)],
     [("atomic4", 0, 2), ("testNg", 0, 2)],
     [("atomic4", 2, 4)], True),
]


OTHER_NODES: dict[str, Views] = {
    'empty&drain atomic nodes in same group not matching registered node group size, no '
    'deletions in progress': [("atomic8", 4, 8)],
}


def _names(views: Views) -> list[str]:
    return [f"{group}-{i}" for group, start, end in views for i in range(start, end)]


def _group(name: str) -> str:
    return name.rsplit("-", 1)[0]


@pytest.mark.parametrize(
    ("in_empty", "in_drain", "empty", "drain", "want_empty", "want_drain", "other"),
    [(*b[1:7], OTHER_NODES.get(b[0], [])) for b in BUDGETS], ids=[b[0] for b in BUDGETS])
def test_crop_nodes_to_budgets(in_empty: int, in_drain: int, empty: Views, drain: Views,
                               want_empty: Views, want_drain: Views, other: Views) -> None:
    registered: dict[str, int] = {}
    for name in _names([*empty, *drain, *other]):
        registered[_group(name)] = registered.get(_group(name), 0) + 1
    # sizedNodeGroup("atomic-N", N, true): target size N.
    atomic = {g: AtomicSize(int(g.removeprefix("atomic")), count)
              for g, count in registered.items() if g.startswith("atomic")}
    got = crop_to_budget(_names(empty), _names(drain), 10, 5, in_empty, in_drain,
                         group_of=_group, atomic=atomic)
    assert got == (_names(want_empty), _names(want_drain))


MINUTE = 60.0
# (name, previously unneeded, nodes, max parallelism, unneeded time, loop interval,
#  want unneeded, atomic)
LIMITS: list[tuple[str, int, int, int, float, float, int, bool]] = [
    ("no unneeded, default settings", 0, 100, 10, MINUTE, 10, 20, False),
    ("some unneeded, default settings", 3, 100, 10, MINUTE, 10, 23, False),
    ("max unneeded, default settings", 70, 100, 10, MINUTE, 10, 70, False),
    ("too many unneeded, default settings", 77, 100, 10, MINUTE, 10, 70, False),
    ("instant kill nodes", 0, 100, 10, 0, 10, 20, False),
    ("quick loops", 13, 100, 10, MINUTE, 1, 33, False),
    ("slow loops", 13, 100, 10, MINUTE, 30, 30, False),
    ("atomic sclale down - default settings", 5, 100, 10, MINUTE, 10, 100, True),
    ("atomic sclale down - quick loops", 5, 100, 10, MINUTE, 1, 100, True),
    ("atomic sclale down - slow loops", 5, 100, 10, MINUTE, 30, 100, True),
    ("atomic sclale down - too many unneeded", 77, 100, 10, MINUTE, 30, 100, True),
    ("atomic sclale down - no uneeded", 0, 100, 10, MINUTE, 30, 100, True),
    ("atomic sclale down - short uneeded time and short update interval", 0, 500, 1, 1, 1, 500,
     True),
]


@pytest.mark.parametrize(
    ("previous", "count", "parallelism", "unneeded_time", "interval", "want", "atomic"),
    [c[1:8] for c in LIMITS], ids=[c[0] for c in LIMITS])
def test_update_cluster_state_unneeded_nodes_limit(previous: int, count: int, parallelism: int,
                                                   unneeded_time: float, interval: float,
                                                   want: int, atomic: bool) -> None:
    docs = [node(f"n{i}", 1000, 10) for i in range(count)]
    _, scheduler = cluster_of(docs)
    names = [f"n{i}" for i in range(count)]
    tracker = UnneededNodes(lambda _, __: unneeded_time, lambda _: "ng1")
    tracker.update(((scheduler.cluster.nodes[n].node, True) for n in names[:previous]), 0.0)
    tracker.limit(0.0, parallelism, unneeded_time)  # the earlier loop
    tracker.min_interval = interval  # upstream sets p.minUpdateInterval
    limit = tracker.limit(1e9, parallelism, unneeded_time)  # a loop long after
    rules = default_rules(DeleteOptions(False, False, False))
    scheduler.fork()
    try:
        # every node is of ng1, ZeroOrMaxNodeScaling in the atomic cases
        removable, _ = categorize_nodes(scheduler, names, names, rules, DrainContext(),
                                        limit=limit, atomic=lambda _: atomic)
    finally:
        scheduler.revert()
    tracker.update(((scheduler.cluster.nodes[n].node, True) for n, _ in removable), 1e9)
    assert len(tracker.as_list()) == want




"""percentageOfNodesToScore: how many feasible nodes end the search, and the rotation."""

from __future__ import annotations

import pytest

from dralab.scheduler import Scheduler, build_cluster
from dralab.scheduler.cycle import Attempt, num_feasible_nodes_to_find

from .builders import config, node, pod


@pytest.mark.parametrize(("percentage", "nodes", "expected"), [
    (None, 0, 0), (None, 50, 50), (None, 99, 99), (None, 100, 100),
    (None, 500, 230),  # 50 - 500/125 = 46 %
    (None, 1000, 420), (None, 5000, 500), (None, 6000, 300),  # floor of 5 %
    (None, 10000, 500), (0, 1000, 420),
    (10, 500, 100),  # never fewer than 100
    (50, 1000, 500), (100, 300, 300), (1, 5000, 100),
])
def test_num_feasible_nodes_to_find(percentage: int | None, nodes: int, expected: int) -> None:
    assert num_feasible_nodes_to_find(percentage, nodes) == expected


def run(nodes: int, pods: int, doc: dict | None = None) -> list[Attempt]:  # type: ignore[type-arg]
    objects = [*(node(f"n{i:03d}", "64") for i in range(nodes)),
               *(pod(f"p{i}", "1") for i in range(pods))]
    cluster, pending = build_cluster(objects)
    attempts: list[Attempt] = []
    Scheduler.build(cluster, doc, observe=attempts.append).run(pending)
    return attempts


def test_search_stops_after_enough_feasible_nodes_and_rotates() -> None:
    attempts = run(300, 3)
    # 300 nodes: 50 - 2 = 48 % -> 144 feasible nodes end the search.
    assert [a.evaluated for a in attempts] == [144, 144, 144]
    assert [len(a.feasible) for a in attempts] == [144, 144, 144]
    # The next search starts where the last one stopped.
    assert attempts[1].feasible[0] == "n144"
    assert attempts[2].feasible[0] == "n288"
    assert attempts[2].feasible[-1] == "n131"


def test_configured_percentage() -> None:
    attempts = run(300, 1, config({"schedulerName": "default-scheduler",
                                   "percentageOfNodesToScore": 50}))
    assert attempts[0].evaluated == 150
    attempts = run(300, 1, config(percentageOfNodesToScore=100))
    assert attempts[0].evaluated == 300


def test_rejected_nodes_count_as_processed() -> None:
    objects = [*(node(f"n{i:03d}", "1") for i in range(50)),
               *(node(f"m{i:03d}", "64") for i in range(150)),
               pod("p", "2"), pod("q", "2")]
    cluster, pending = build_cluster(objects)
    attempts: list[Attempt] = []
    Scheduler.build(cluster, None, observe=attempts.append).run(pending)
    # 200 nodes: 48 % = 96 < 100 -> 100 feasible needed; 50 rejected on the way.
    assert attempts[0].evaluated == 150
    assert len(attempts[0].feasible) == 100
    assert attempts[1].feasible[0] == "m100"


def test_zones_are_interleaved() -> None:
    objects = [node("a1", labels={"topology.kubernetes.io/zone": "a"}),
               node("a2", labels={"topology.kubernetes.io/zone": "a"}),
               node("b1", labels={"topology.kubernetes.io/zone": "b"}),
               node("a3", labels={"topology.kubernetes.io/zone": "a"})]
    cluster, _ = build_cluster(objects)
    assert cluster.node_names() == ["a1", "b1", "a2", "a3"]

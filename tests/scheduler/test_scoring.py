"""Scoring: strategies place as upstream does; formulas match upstream's integer maths."""

from __future__ import annotations

from collections import Counter

import pytest

from dralab.scheduler import schedule
from dralab.scheduler.framework import NodeScore
from dralab.scheduler.plugins.helpers import default_normalize_score
from dralab.scheduler.plugins.noderesources import (
    _balance,
    _balanced,
    _least,
    _most,
    _ratio,
    broken_linear,
    format_amount,
)

from .builders import config, fit_args, match, node, placements, pod


def nodes(n: int, cpu: str = "4") -> list:  # type: ignore[type-arg]
    return [node(f"n{i}", cpu, "16Gi") for i in range(n)]


def spread(strategy: str | None, count: int = 3) -> Counter[str | None]:
    doc = config({"schedulerName": "default-scheduler",
                  "pluginConfig": [fit_args(strategy)]}) if strategy else None
    objects = [*nodes(3), *(pod(f"p{i}", "1", "1Gi") for i in range(count))]
    return Counter(placements(schedule(objects, doc)).values())


def test_least_allocated_spreads() -> None:
    assert sorted(spread(None).values()) == [1, 1, 1]
    assert sorted(spread("LeastAllocated").values()) == [1, 1, 1]


def test_most_allocated_packs() -> None:
    assert list(spread("MostAllocated").values()) == [3]


def test_requested_to_capacity_ratio_with_packing_shape_packs() -> None:
    doc = config({"schedulerName": "default-scheduler", "pluginConfig": [
        fit_args("RequestedToCapacityRatio", [("cpu", 1)], [(0, 0), (100, 10)])]})
    objects = [*nodes(3), *(pod(f"p{i}", "1", "1Gi") for i in range(3))]
    assert len(set(placements(schedule(objects, doc)).values())) == 1


def test_extended_resource_scoring_packs_gpus() -> None:
    doc = config({"schedulerName": "default-scheduler", "pluginConfig": [
        fit_args("MostAllocated", [("nvidia.com/gpu", 1)])]})
    objects = [node("a", gpus=8), node("b", gpus=8),
               *(pod(f"g{i}", "1", gpus=2) for i in range(4))]
    assert len(set(placements(schedule(objects, doc)).values())) == 1


@pytest.mark.parametrize(("requested", "allocatable", "least", "most"), [
    ([1000, 2 << 30], [4000, 8 << 30], 75, 25),
    ([3000, 0], [4000, 8 << 30], 62, 37),  # (25 + 100) / 2 and (75 + 0) / 2, truncated
    ([5000, 1 << 30], [4000, 8 << 30], 43, 56),  # over capacity: 0 / 100 for that resource
    ([1000, 1], [0, 0], 0, 0),  # nothing allocatable: no score
])
def test_least_and_most_formulas(requested: list[int], allocatable: list[int], least: int,
                                 most: int) -> None:
    assert _least([1, 1])(requested, allocatable) == least
    assert _most([1, 1])(requested, allocatable) == most


def test_weighted_mean() -> None:
    # cpu 50 % used (least 50) weight 3, memory 0 % used (least 100) weight 1 -> 250/4
    assert _least([3, 1])([2000, 0], [4000, 100]) == 62


def test_broken_linear_and_ratio() -> None:
    f = broken_linear([(0, 0), (50, 100), (100, 0)])
    assert [f(0), f(25), f(50), f(75), f(100), f(120)] == [0, 50, 100, 50, 0, 0]
    score = _ratio([1, 1], [(0, 100), (100, 0)])  # spreading shape, scores already x10
    assert score([1000, 3000], [4000, 4000]) == 50  # round((75 + 25) / 2)
    assert score([4000, 4000], [4000, 4000]) == 0  # zero scores carry no weight


def test_balanced_allocation() -> None:
    assert _balance([2000, 4 << 30], [4000, 8 << 30]) == 100
    assert _balance([4000, 0], [4000, 8 << 30]) == 50
    assert _balance([1000, 1, 1], [2000, 2, 4]) == 88  # three resources: std formula
    # Scored as the change the pod makes (v1.36.2): from 50 to 100 is the best move,
    # from 100 to 50 the worst, no change 75.
    assert _balanced([4000, 8 << 30], [0, 8 << 30], [4000, 8 << 30]) == 100
    assert _balanced([4000, 0], [0, 0], [4000, 8 << 30]) == 50
    assert _balanced([0, 0], [0, 0], [4000, 8 << 30]) == 75


def test_default_normalize_score() -> None:
    scores = [NodeScore("a", 0), NodeScore("b", 5), NodeScore("c", 10)]
    default_normalize_score(scores)
    assert [s.score for s in scores] == [0, 50, 100]
    default_normalize_score(scores, reverse=True)
    assert [s.score for s in scores] == [100, 50, 0]
    zeros = [NodeScore("a", 0)]
    default_normalize_score(zeros, reverse=True)
    assert zeros[0].score == 100


def test_prefer_no_schedule_and_preferred_affinity_combine() -> None:
    objects = [node("a", labels={"fast": "1"}, taints=["spot:PreferNoSchedule"]),
               node("b"), pod("p", "1", preferred=[(100, match("fast", "Exists"))])]
    # TaintToleration (weight 3 x 100) outweighs NodeAffinity (weight 2 x 100).
    assert placements(schedule(objects)) == {"p": "b"}


def test_format_amount() -> None:
    assert format_amount("cpu", 1500) == "1500m"
    assert format_amount("cpu", 2000) == "2"
    assert format_amount("memory", (8 << 30) * 1000) == "8Gi"
    assert format_amount("nvidia.com/gpu", 3000) == "3"

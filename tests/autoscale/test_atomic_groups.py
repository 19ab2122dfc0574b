"""Atomic node groups: a Fleet pool's ``autoscaling.zeroOrMaxNodeScaling: true`` (Cluster
Autoscaler's NodeGroupAutoscalingOptions.ZeroOrMaxNodeScaling) through whole loops.

Scale-up takes such a group from 0 to its max size at once (CA's orchestrator,
ComputeExpansionOption); scale-down removes it only whole, when every node of it is
unneeded (CA's AtomicResizeFilteringProcessor: the others are kept with
AtomicScaleDownFailed), and the budgets take it as one even beyond
--max-scale-down-parallelism (budgets.CropNodes). The unit tables are upstream's, in
tests/peers/ca (test_orchestrator's TestZeroOrMaxNodeScaling, test_scaledown_budgets,
test_scaledown_planner's TestNodesToDelete).
"""

from __future__ import annotations

from typing import Any

import pytest

from dralab.api.errors import InputError
from dralab.autoscale import AutoscalerOptions, ClusterAutoscaler
from dralab.fleet import parse_fleet
from dralab.fleet.spec import FleetSpecError
from peers.ca.builders_down import cluster_of, node, pod

from .helpers import fleet as fleet_doc
from .helpers import pod as pending_pod
from .helpers import run

GIB = 1 << 30


def _fleet(atomic: bool, count: int = 0, max_size: int = 4) -> dict[str, Any]:
    doc = fleet_doc("cpu")
    doc["spec"]["pools"] = [{
        "name": "slice", "count": count, "cpu": "8", "memory": "32Gi",
        "autoscaling": {"min": 0, "max": max_size, "zeroOrMaxNodeScaling": atomic}}]
    return doc


@pytest.mark.parametrize(("atomic", "add"), [(True, 4), (False, 1)])
def test_scale_up_from_zero_to_max(atomic: bool, add: int) -> None:
    decisions = run(_fleet(atomic), pending_pod("one", cpu="1", memory="1Gi")).to_dict()
    assert [(u["pool"], u["add"]) for u in decisions["scaleUp"]] == [("slice", add)]
    assert decisions["pending"] == []


def _loop_later(atomic: bool, blocked: bool, nodes: int = 3, parallelism: int = 10
                ) -> tuple[list[str], dict[str, str]]:
    """Two loops ten minutes and a bit apart over ``nodes`` empty nodes of the pool
    (one running a pod no controller re-creates when ``blocked``)."""
    fleet = parse_fleet(_fleet(atomic, count=nodes, max_size=max(4, nodes)), "fleet.yaml")
    docs = [node(f"slice-{i:02d}", 8000, 32 * GIB, group="slice", ready=True)
            for i in range(nodes)]
    if blocked:
        docs.append(pod("lonely", 100, 1 << 20, node_name="slice-00"))
    _, scheduler = cluster_of(docs)
    model = ClusterAutoscaler(scheduler, fleet,
                              AutoscalerOptions(max_scale_down_parallelism=parallelism))
    model.loop([], 0.0)
    later = model.loop([], 601.0)
    return (sorted(d.node for d in later.scale_downs),
            {u.node: u.reason for u in later.unremovable})


def test_whole_group_goes_when_every_node_is_unneeded() -> None:
    gone, kept = _loop_later(atomic=True, blocked=False)
    assert gone == ["slice-00", "slice-01", "slice-02"] and kept == {}


def test_no_node_goes_when_one_must_stay() -> None:
    gone, kept = _loop_later(atomic=True, blocked=True)
    assert gone == []
    assert kept == {"slice-00": "BlockedByPod", "slice-01": "AtomicScaleDownFailed",
                    "slice-02": "AtomicScaleDownFailed"}


def test_regular_group_loses_its_unneeded_nodes() -> None:
    gone, kept = _loop_later(atomic=False, blocked=True)
    assert gone == ["slice-01", "slice-02"] and kept == {"slice-00": "BlockedByPod"}


def test_atomic_group_may_exceed_the_parallelism_budget() -> None:
    # budgets.CropNodes: the first atomic group goes whole beyond the budget ...
    gone, _ = _loop_later(atomic=True, blocked=False, nodes=5, parallelism=3)
    assert gone == [f"slice-{i:02d}" for i in range(5)]
    # ... while a regular group is cut to it
    gone, _ = _loop_later(atomic=False, blocked=False, nodes=5, parallelism=3)
    assert len(gone) == 3


def test_zero_or_max_node_scaling_must_be_a_boolean() -> None:
    doc = _fleet(True)
    doc["spec"]["pools"][0]["autoscaling"]["zeroOrMaxNodeScaling"] = "yes"
    with pytest.raises((FleetSpecError, InputError)) as err:
        parse_fleet(doc, "fleet.yaml")
    assert "zeroOrMaxNodeScaling" in str(err.value) and "\n" not in str(err.value)

"""explain_pod / explain_claim: every rejecting plugin per node, nearest node, scores."""

from __future__ import annotations

import pytest

from dralab.api.errors import InputError
from dralab.scheduler import explain_claim, explain_pod

from .builders import node, pod, toleration


def test_unplaced_pod_lists_every_rejecting_plugin_and_nearest_node() -> None:
    objects = [node("tainted", "16", taints=["gpu=yes:NoSchedule"]),
               node("small", "2"), node("busy", "8"), pod("hog", "7", node_name="busy"),
               pod("p", "4")]
    explanation = explain_pod(objects, "default/p")
    assert explanation.node is None
    by_node = {v.node: [(s.plugin, s.message) for s in v.rejections]
               for v in explanation.verdicts}
    assert by_node == {
        "tainted": [("TaintToleration", "node(s) had untolerated taint(s)")],
        "small": [("NodeResourcesFit", "Insufficient cpu")],
        "busy": [("NodeResourcesFit", "Insufficient cpu")],
    }
    nearest = explanation.nearest
    assert nearest is not None
    # Preemption could help on busy (resolvable), with a smaller shortfall than small.
    assert nearest.node == "busy"
    text = explanation.render()
    assert "Nearest node: busy (1 plugin rejecting). To fit there:" in text
    assert "cpu: requested 4, free 1 of 8 allocatable" in text
    assert text.startswith("Pod default/p: not scheduled\n  0/3 nodes are available: ")


def test_several_plugins_on_one_node() -> None:
    objects = [node("a", "1", taints=["x:NoSchedule"], labels={"kind": "cpu"}),
               pod("p", "2", node_selector={"kind": "gpu"})]
    (verdict,) = explain_pod(objects, "p").verdicts
    assert [s.plugin for s in verdict.rejections] == [
        "TaintToleration", "NodeAffinity", "NodeResourcesFit"]
    assert verdict.unresolvable


def test_placed_pod_shows_scores_and_rejections() -> None:
    objects = [node("a", "4"), node("b", "8"), node("c", "1"), pod("p", "2")]
    explanation = explain_pod(objects, "default/p")
    assert explanation.node == "b"
    verdicts = {v.node: v for v in explanation.verdicts}
    assert verdicts["c"].rejections[0].message == "Insufficient cpu"
    assert verdicts["b"].total is not None and verdicts["a"].total is not None
    assert verdicts["b"].total > verdicts["a"].total
    assert set(verdicts["b"].scores) >= {"NodeResourcesFit", "TaintToleration"}
    assert "<- chosen" in explanation.render()


def test_pod_with_tolerations_is_explained_after_the_others() -> None:
    # q is explained at its own cycle: p (higher priority) already took the room.
    objects = [node("a", "4", taints=["gpu:NoSchedule"]),
               pod("p", "3", priority=5, tolerations=[toleration("gpu", operator="Exists")]),
               pod("q", "3", tolerations=[toleration("gpu", operator="Exists")])]
    explanation = explain_pod(objects, "q")
    assert explanation.verdicts[0].rejections[0].details == (
        "cpu: requested 3, free 1 of 4 allocatable",)


def test_gated_and_unknown_pods() -> None:
    gated = explain_pod([node("a"), pod("g", "1", gates=["hold"])], "g")
    assert not gated.found
    assert gated.message == "SchedulingGated: waiting for scheduling gates: [hold]"
    with pytest.raises(InputError, match="pod default/nope not found"):
        explain_pod([node("a")], "nope")


def test_unknown_claim() -> None:
    with pytest.raises(InputError, match="resourceclaim default/c not found"):
        explain_claim([node("a")], "c")

"""Cluster Autoscaler's unneeded-nodes tracker tables, ported whole.

kubernetes/autoscaler, branch cluster-autoscaler-release-1.37 at
a16f0ae8b5578f09604371c75e0cad29ed794e59,
cluster-autoscaler/core/scaledown/unneeded/nodes_test.go: TestUpdate (6),
TestRemovableAt (3), TestRemovableAt_UnremovableReasons (7),
TestNodeLoadFromExistingTaints (3), against dralab's ``UnneededNodes``. Case ids are
upstream's names.

Upstream's fakes become arguments: the scale-down time getter is the removal-time
function (raising for "ThresholdRetrievalFails"), the cloud provider's node group is
the ``group_of`` function (None: not autoscaled), the actuation status's deletions
in progress and the node group's target and min sizes are ``removable_at``'s
arguments, and the resource-quota tracker's minimum is ``minimums`` ("nodes": 1 for
upstream's FakeQuota). Times are unix seconds.
"""

from __future__ import annotations

import pytest

from dralab.api.core import Node
from dralab.autoscale.eligibility import SCALE_DOWN_DISABLED
from dralab.autoscale.scaledown import DELETION_CANDIDATE_TAINT, UnneededNodes

from .builders_down import node, obj

NOW = 1_800_000_000.0
MINUTE = 60.0
UNNEEDED_TIME = 10 * MINUTE  # nodes_test.go defaultUnneededTime
UNREADY_TIME = 5 * MINUTE  # defaultUnreadyTime
VERSION = "testVersion"


def _node(name: str, version: str = "", ready: bool | None = None, cpu: int = 1000,
          memory: int = 10, annotations: dict[str, str] | None = None,
          taint: str | None = None) -> Node:
    """makeNode (BuildTestNode with the testVersion annotation), SetNodeReadyState when
    ``ready`` is given; ``taint``: a DeletionCandidate taint's value."""
    notes = {VERSION: version} if version else {}
    notes.update(annotations or {})
    taints = [{"key": DELETION_CANDIDATE_TAINT, "value": taint, "effect": "PreferNoSchedule"}] \
        if taint is not None else []
    out = obj(node(name, cpu, memory, annotations=notes, ready=ready, taints=taints))
    assert isinstance(out, Node)
    return out


def _times(unneeded: float, unready: float, fail: bool = False):  # type: ignore[no-untyped-def]
    def removal_time(_: str | None, ready: bool) -> float:
        if fail:
            raise ValueError("simulated error getting unneeded time")
        return unneeded if ready else unready
    return removal_time


# TestUpdate: (desc, initial nodes, final nodes, want {name: (since, version, threshold)})
INITIAL, FINAL = NOW, NOW + MINUTE
UPDATE: list[tuple[str, list[Node], list[Node], dict[str, tuple[float, str, float]]]] = [
    ("added then deleted", [_node("n1", "v1"), _node("n2", "v1"), _node("n3", "v1")], [], {}),
    ("added in last call", [], [_node("n1", "v1"), _node("n2", "v1"), _node("n3", "v1")],
     {n: (FINAL, "v1", UNREADY_TIME) for n in ("n1", "n2", "n3")}),
    ("single one remaining", [_node("n1", "v1"), _node("n2", "v1"), _node("n3", "v1")],
     [_node("n2", "v2")], {"n2": (INITIAL, "v2", UNREADY_TIME)}),
    ("single one older", [_node("n2", "v1")],
     [_node("n1", "v2"), _node("n2", "v2"), _node("n3", "v2")],
     {"n1": (FINAL, "v2", UNREADY_TIME), "n2": (INITIAL, "v2", UNREADY_TIME),
      "n3": (FINAL, "v2", UNREADY_TIME)}),
    ("threshold updated on existing node (Ready -> Unready)", [_node("n2", "v1", True)],
     [_node("n2", "v2", False)], {"n2": (INITIAL, "v2", UNREADY_TIME)}),
    ("mixed update and preservation", [_node("n1", "v1", True)],
     [_node("n1", "v2", True), _node("n2", "v2", False)],
     {"n1": (INITIAL, "v2", UNNEEDED_TIME), "n2": (FINAL, "v2", UNREADY_TIME)}),
]


@pytest.mark.parametrize(("initial", "final", "want"), [u[1:] for u in UPDATE],
                         ids=[u[0] for u in UPDATE])
def test_update(initial: list[Node], final: list[Node],
                want: dict[str, tuple[float, str, float]]) -> None:
    tracker = UnneededNodes(_times(UNNEEDED_TIME, UNREADY_TIME), lambda _: "ng1")
    tracker.update(((n, True) for n in initial), INITIAL)
    tracker.update(((n, True) for n in final), FINAL)
    got = {item.name: (item.since, (item.node.metadata.annotations or {}).get(VERSION, ""),
                       item.threshold) for item in tracker.as_list()}
    assert got == want


# TestRemovableAt: (name, empty, drain, min size, target size, deletions, want empty, drain)
REMOVABLE: list[tuple[str, int, int, int, int, int, int, int]] = [
    ("Node group min size is not reached", 3, 2, 1, 10, 2, 3, 2),
    ("Node group min size is reached for drain nodes", 3, 5, 1, 10, 2, 3, 4),
    ("Node group min size is reached for empty and drain nodes", 3, 5, 1, 5, 2, 2, 0),
]


@pytest.mark.parametrize(("empty", "drain", "min_size", "target", "deletions", "want_empty",
                          "want_drain"), [r[1:] for r in REMOVABLE],
                         ids=[r[0] for r in REMOVABLE])
def test_removable_at(empty: int, drain: int, min_size: int, target: int, deletions: int,
                      want_empty: int, want_drain: int) -> None:
    # Unneeded time 0, unready time 5 min; the nodes (no Ready condition: not Ready)
    # were found unneeded 10 minutes ago.
    tracker = UnneededNodes(_times(0.0, UNREADY_TIME), lambda _: "ng")
    nodes = [(_node(f"empty-{i}", cpu=10, memory=100), True) for i in range(empty)]
    nodes += [(_node(f"drain-{i}", cpu=10, memory=100), False) for i in range(drain)]
    tracker.update(nodes, NOW - 10 * MINUTE)
    got_empty, got_drain, _ = tracker.removable_at(NOW, {"ng": target}, {"ng": min_size},
                                                   {"ng": deletions})
    assert (len(got_empty), len(got_drain)) == (want_empty, want_drain)
    thresholds = {item.name: item.threshold for item in tracker.as_list()}
    assert all(thresholds[name] == UNREADY_TIME for name in got_empty)


# TestRemovableAt_UnremovableReasons: (name, ready, scale-down disabled, unneeded time,
# unready time, min size, target size, autoscaled, time getter fails, minimum nodes,
# want reason)
REASONS: list[tuple[str, bool, bool, float, float, int, int, bool, bool, int, str]] = [
    ("ThresholdRetrievalFails", True, False, 5 * MINUTE, 5 * MINUTE, 0, 1, True, True, 0,
     "UnexpectedError"),
    ("ScaleDownDisabledAnnotation", True, True, 5 * MINUTE, 5 * MINUTE, 0, 1, True, False, 0,
     "ScaleDownDisabledAnnotation"),
    ("NotUnneededLongEnough", True, False, 15 * MINUTE, 5 * MINUTE, 0, 1, True, False, 0,
     "NotUnneededLongEnough"),
    ("NotUnreadyLongEnough", False, False, 5 * MINUTE, 15 * MINUTE, 0, 1, True, False, 0,
     "NotUnreadyLongEnough"),
    ("NotAutoscaled", True, False, 5 * MINUTE, 5 * MINUTE, 0, 0, False, False, 0,
     "NotAutoscaled"),
    ("NodeGroupMinSizeReached", True, False, 5 * MINUTE, 5 * MINUTE, 1, 1, True, False, 0,
     "NodeGroupMinSizeReached"),
    ("MinimalResourceLimitExceeded", True, False, 5 * MINUTE, 5 * MINUTE, 0, 1, True, False, 1,
     "MinimalResourceLimitExceeded"),
]


@pytest.mark.parametrize(("ready", "disabled", "unneeded", "unready", "min_size", "target",
                          "autoscaled", "fails", "min_nodes", "reason"),
                         [r[1:] for r in REASONS], ids=[r[0] for r in REASONS])
def test_removable_at_unremovable_reasons(ready: bool, disabled: bool, unneeded: float,
                                          unready: float, min_size: int, target: int,
                                          autoscaled: bool, fails: bool, min_nodes: int,
                                          reason: str) -> None:
    name = f"test-node-{reason}"
    test_node = _node(name, ready=ready, cpu=10, memory=100,
                      annotations={SCALE_DOWN_DISABLED: "true"} if disabled else None)
    tracker = UnneededNodes(_times(unneeded, unready, fails),
                            lambda _: "ng" if autoscaled else None)
    tracker.update([(test_node, True)], NOW - 10 * MINUTE)
    sizes = {"ng": target} if autoscaled else {}
    empty, drain, kept = tracker.removable_at(
        NOW, sizes, {"ng": min_size} if autoscaled else {}, {},
        minimums={"nodes": min_nodes} if min_nodes else None, cluster_nodes=[test_node])
    assert (empty, drain) == ([], [])
    assert [(u.node, u.reason) for u in kept] == [(name, reason)]


# TestNodeLoadFromExistingTaints
N1 = _node("n1", ready=True, memory=1000, taint=str(int(NOW - 2 * MINUTE)))
N2 = _node("n2", ready=True, memory=1000)
N3 = _node("n3", ready=True, memory=1000, taint=str(int(NOW - 20 * MINUTE)))
N4 = _node("n4", ready=True, memory=1000, taint="INVALID_VALUE")

LOAD: list[tuple[str, list[Node], list[str], float]] = [
    ("All deletion candidate nodes with standard TTL", [N1, N2], ["n1"], 5 * MINUTE),
    ("Nodes with expired deletion candidate taint", [N1, N2, N3], ["n1"], 5 * MINUTE),
    ("Nodes with invalid deletion candidate taint", [N1, N2, N3, N4], ["n1"], 5 * MINUTE),
]


@pytest.mark.parametrize(("nodes", "want", "ttl"), [c[1:] for c in LOAD],
                         ids=[c[0] for c in LOAD])
def test_node_load_from_existing_taints(nodes: list[Node], want: list[str], ttl: float) -> None:
    tracker = UnneededNodes(_times(UNNEEDED_TIME, UNREADY_TIME), lambda _: None)
    tracker.load_from_existing_taints(nodes, NOW, ttl)
    assert [item.name for item in tracker.as_list()] == want
    assert all(tracker.contains(name) for name in want)
    # Unneeded since the taint was set, not since the load.
    assert [item.since for item in tracker.as_list()] == [NOW - 2 * MINUTE]

"""Cluster Autoscaler's scale-down eligibility table, ported whole.

kubernetes/autoscaler, branch cluster-autoscaler-release-1.37 at
a16f0ae8b5578f09604371c75e0cad29ed794e59,
cluster-autoscaler/core/scaledown/eligibility/eligibility_test.go, TestFilterOutUnremovable
(getTestCases: the base cases under "[base]", the base and DaemonSet cases under
"[ignore-daemonsets=true]"; 23 cases). Case ids are upstream's ``desc`` with the suite
name appended, as applySuite names them.

Upstream's options: defaultOptions (DRA off, scale-down of unready nodes on, thresholds
and times CA's defaults) with the suite's and the case's patches. Every node is in node
group ng1 (dralab: the pool label ``dralab.dev/pool: ng1``).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from dralab.autoscale import AutoscalerOptions
from dralab.autoscale.eligibility import (
    SCALE_DOWN_DISABLED,
    TO_BE_DELETED_TAINT,
    filter_out_unremovable,
)

from .builders_down import Doc, cluster_of, node, pod, slice_doc

NOW = 1_800_000_000.0  # upstream: time.Now(); any clock works, the taint is set 30 s before
GROUP = "ng1"

REGULAR = node("regular", 1000, 10, group=GROUP, ready=True)
JUST_DELETED = node("justDeleted", 1000, 10, group=GROUP, ready=True,
                    taints=[{"key": TO_BE_DELETED_TAINT, "value": str(int(NOW) - 30)}])
NO_SCALE_DOWN = node("noScaleDown", 1000, 10, group=GROUP, ready=True,
                     annotations={SCALE_DOWN_DISABLED: "true"})
UNREADY = node("unready", 1000, 10, group=GROUP, ready=False)
BIG_POD = pod("bigPod", 600, 0, node_name="regular")
SMALL_POD = pod("smallPod", 100, 0, node_name="regular")
DS_POD = pod("dsPod", 500, 0, node_name="regular", owner=("DaemonSet", "ds"))
BROKEN_UTIL = node("regular", 0, 0, group=GROUP)
INCOMPLETE_SLICE = slice_doc("regularNodeIncompleteResourceSlice", "driver.foo.com",
                             "regular-pool", "regular", 0, 999, [{"name": "dev1"}])

DEFAULTS = AutoscalerOptions(dynamic_resource_allocation=False)

# (desc, nodes, pods, extra objects, want unneeded, want unremovable, option patches)
Case = tuple[str, list[Doc], list[Doc], list[Doc], list[str], list[tuple[str, str]],
             dict[str, object]]

BASE: list[Case] = [
    ("regular node stays", [REGULAR], [], [], ["regular"], [], {}),
    ("recently deleted node is filtered out", [REGULAR, JUST_DELETED], [], [], ["regular"],
     [("justDeleted", "CurrentlyBeingDeleted")], {}),
    ("marked no scale down is filtered out", [NO_SCALE_DOWN, REGULAR], [], [], ["regular"],
     [("noScaleDown", "ScaleDownDisabledAnnotation")], {}),
    ("highly utilized node is filtered out", [REGULAR], [BIG_POD], [], [],
     [("regular", "NotUnderutilized")], {}),
    ("underutilized node stays", [REGULAR], [SMALL_POD], [], ["regular"], [], {}),
    ("node is filtered out if utilization can't be calculated", [BROKEN_UTIL], [SMALL_POD], [],
     [], [("regular", "UnexpectedError")], {}),
    ("unready node stays", [UNREADY], [], [], ["unready"], [], {}),
    ("unready node is filtered oud when scale-down of unready is disabled", [UNREADY], [], [],
     [], [("unready", "ScaleDownUnreadyDisabled")], {"scale_down_unready_enabled": False}),
    ("Node is not filtered out because of DRA issues if DRA is disabled", [REGULAR],
     [SMALL_POD], [INCOMPLETE_SLICE], ["regular"], [], {}),
    ("Node is filtered out because of DRA issues if DRA is enabled", [REGULAR], [SMALL_POD],
     [INCOMPLETE_SLICE], [], [("regular", "UnexpectedError")],
     {"dynamic_resource_allocation": True}),
]

DAEMONSET: list[Case] = [
    ("high utilization daemonsets node stays", [REGULAR], [SMALL_POD, DS_POD], [], ["regular"],
     [], {}),
    ("high utilization daemonsets node is filtered out, when IgnoreDaemonSets is disabled",
     [REGULAR], [SMALL_POD, DS_POD], [], [], [("regular", "NotUnderutilized")],
     {"ignore_daemonsets_utilization": False}),
    ("only daemonsets pods on this node (threshold=0)", [REGULAR], [DS_POD], [], ["regular"],
     [], {"scale_down_utilization_threshold": 0.0}),
]


def _suite(name: str, patches: dict[str, object], cases: list[Case]) -> list[Case]:
    """applySuite: the suite's patches first, the case's over them; the suite's name
    appended to the case's."""
    return [(f"{c[0]} {name}", *c[1:6], {**patches, **c[6]}) for c in cases]


CASES = [*_suite("[base]", {}, BASE),
         *_suite("[ignore-daemonsets=true]", {"ignore_daemonsets_utilization": True},
                 [*BASE, *DAEMONSET])]


@pytest.mark.parametrize(("nodes", "pods", "extra", "unneeded", "unremovable", "patches"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_filter_out_unremovable(nodes: list[Doc], pods: list[Doc], extra: list[Doc],
                                unneeded: list[str], unremovable: list[tuple[str, str]],
                                patches: dict[str, object]) -> None:
    cluster, _ = cluster_of([*nodes, *extra, *pods])
    options = replace(DEFAULTS, **patches)  # type: ignore[arg-type]
    names = [n["metadata"]["name"] for n in nodes]
    got = filter_out_unremovable(cluster, names, {GROUP}, options, now=NOW)
    assert got.unneeded == unneeded
    assert [(u.node, u.reason) for u in got.unremovable] == unremovable


def test_a_deletion_taint_older_than_the_deletion_timeouts_no_longer_counts() -> None:
    # actuation.IsNodeBeingDeleted: the taint counts for MaxCloudProviderNodeDeletionTime
    # (5 min); later the node is considered again. Not an upstream case: the other side
    # of "recently deleted node is filtered out".
    cluster, _ = cluster_of([JUST_DELETED])
    late = filter_out_unremovable(cluster, ["justDeleted"], {GROUP}, DEFAULTS, now=NOW + 300)
    assert (late.unneeded, late.unremovable) == (["justDeleted"], [])

"""kube-scheduler's aggregated message, built from per-node statuses."""

from __future__ import annotations

from dralab.scheduler.diagnosis import Diagnosis, NodeToStatus, fit_error_message
from dralab.scheduler.framework import Code, Status

CPU = Status.unschedulable("NodeResourcesFit", "Insufficient cpu")
CPU_MEM = Status.unschedulable("NodeResourcesFit", "Insufficient cpu", "Insufficient memory")
TAINT = Status.unresolvable("TaintToleration", "node(s) had untolerated taint(s)")


def test_histogram_counts_reasons_across_nodes_sorted_as_text() -> None:
    statuses = NodeToStatus([f"n{i}" for i in range(13)],
                            {**{f"n{i}": CPU for i in range(10)}, "n10": CPU_MEM,
                             "n11": TAINT, "n12": TAINT})
    # Sorted as text, as Go's sort.Strings does: "1 ..." < "11 ..." < "2 ...".
    assert fit_error_message(13, statuses) == (
        "0/13 nodes are available: 1 Insufficient memory, 11 Insufficient cpu, "
        "2 node(s) had untolerated taint(s).")


def test_absent_nodes_share_one_status() -> None:
    absent = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                    ("node(s) didn't satisfy plugin(s) [NodeAffinity]",))
    statuses = NodeToStatus(["a", "b", "c", "d"], {"a": CPU}, absent)
    assert fit_error_message(4, statuses) == (
        "0/4 nodes are available: 1 Insufficient cpu, "
        "3 node(s) didn't satisfy plugin(s) [NodeAffinity].")
    assert statuses["c"] is absent
    assert statuses.nodes_with_code(Code.UNSCHEDULABLE) == ["a"]


def test_pre_filter_message_replaces_histogram_and_post_filter_appends() -> None:
    diagnosis = Diagnosis(NodeToStatus(["a", "b"], {"a": CPU}), pre_filter_msg="pod has "
                          "unbound immediate PersistentVolumeClaims")
    diagnosis.post_filter_msg = "preemption: not eligible due to preemptionPolicy=Never."
    assert diagnosis.message() == (
        "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims. "
        "preemption: not eligible due to preemptionPolicy=Never.")


def test_no_reasons_at_all() -> None:
    assert fit_error_message(0, NodeToStatus([])) == "0/0 nodes are available:"


def test_plugins_recorded() -> None:
    diagnosis = Diagnosis(NodeToStatus(["a"]))
    diagnosis.add_plugin_status(TAINT)
    diagnosis.add_plugin_status(Status.success())
    assert diagnosis.unschedulable_plugins == {"TaintToleration"}

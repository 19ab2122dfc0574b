"""scheduler_perf's PodGroup workloads, rendered as scheduler_perf renders its templates.

* ``test/integration/scheduler_perf/gangscheduling``: workload ``GangScheduling``, case
  ``10Nodes_3Gangs`` (initNodes 10, initPodGroups 3, podsPerGroup 3; feature gates
  GenericWorkload on): three gang PodGroups of ``minCount: 3`` in namespace ``gang-0``,
  nine pods, pods 0-2 in gang-0, 3-5 in gang-1, 6-8 in gang-2. scheduler_perf waits for
  every pod to be scheduled.
* ``test/integration/scheduler_perf/dra/templates``: the PodGroup templates with a claim
  (``podgroup-with-claim-template.yaml`` in v1alpha3, ``podgroup-with-claim-ref.yaml`` in
  v1beta1, basic policy) and their pods. Their workloads' config is not in the corpus; the
  expected outcome is KEP-5729's: with DRAWorkloadResourceClaims every group's pods share
  the group's one claim, reserved for the PodGroup, so two devices serve ten pods.
"""

from __future__ import annotations

from pathlib import Path

from .corpus import (
    K8S,
    PERF,
    RENDERED,
    perf_driver_slices,
    perf_nodes,
    render_all,
    schedule,
    write_docs,
)

GANG = K8S / "test/integration/scheduler_perf/gangscheduling/templates"
WORKLOAD_GATES = ("--feature-gates", "GenericWorkload=true")
BOTH_GATES = ("--feature-gates", "GenericWorkload=true,DRAWorkloadResourceClaims=true")


def _gang_inputs(tmp: Path, pods: int) -> list[Path]:
    nodes = write_docs(tmp / "nodes.yaml", perf_nodes(with_dra=0, without_dra=10))
    groups = write_docs(tmp / "groups.yaml",
                        render_all(GANG / "podgroup.yaml", 3, namespace="gang-0"))
    members = write_docs(tmp / "pods.yaml", render_all(GANG / "gang-pod.yaml", pods,
                                                       namespace="gang-0", podsPerGroup=3))
    return [nodes, groups, members]


def test_gang_scheduling_10_nodes_3_gangs(tmp_path: Path) -> None:
    out = schedule(*_gang_inputs(tmp_path, 9), extra=WORKLOAD_GATES)
    assert out.run.code == 0, out.run.output
    assert len(out.placed()) == 9 and not out.pending()


def test_gang_missing_a_member_waits_outside_the_queue(tmp_path: Path) -> None:
    # Only eight pods: gang-2 has two of its three. Its pods wait in PreEnqueue with
    # upstream's message; the complete gangs are placed.
    out = schedule(*_gang_inputs(tmp_path, 8), extra=WORKLOAD_GATES)
    assert out.run.code == 1, out.run.output
    assert out.pending() == ["gang-0/test-gang-scheduling-6", "gang-0/test-gang-scheduling-7"]
    # The message is dralab's report (stderr); kube-scheduler writes no condition for a
    # PreEnqueue rejection unless SchedulerPreEnqueuePodStatus (KEP-5501) is on.
    for name in out.pending():
        assert out.pod(name).message == ""
        assert f"{name}: NotReadyForScheduling: waiting for minCount pods from a gang to " \
            "appear in scheduling queue" in out.run.stderr.splitlines()
    assert len(out.placed()) == 6


def test_gang_templates_without_the_gate_are_plain_pods(tmp_path: Path) -> None:
    # GenericWorkload off: schedulingGroup is dropped, each pod is scheduled alone.
    out = schedule(*_gang_inputs(tmp_path, 8))
    assert out.run.code == 0, out.run.output
    assert len(out.placed()) == 8


def _dra_cluster(tmp: Path) -> list[Path]:
    # One node with the test driver and two devices; scheduler_perf's DeviceClass.
    nodes = perf_nodes(with_dra=1, without_dra=0)
    return [write_docs(tmp / "nodes.yaml", [*nodes, *perf_driver_slices(nodes, 2)]),
            PERF / "deviceclass.yaml"]


def test_podgroup_claim_templates_one_claim_per_group(tmp_path: Path) -> None:
    template = write_docs(tmp_path / "rct.yaml",
                          render_all(RENDERED / "resourceclaimtemplate.default.yaml", 1, "test"))
    groups = write_docs(tmp_path / "groups.yaml",
                        render_all(PERF / "podgroup-with-claim-template.yaml", 2, "test"))
    pods = write_docs(tmp_path / "pods.yaml",
                      render_all(PERF / "pod-in-podgroup-with-claim-template.yaml", 10, "test",
                                 PodGroupCount=2))
    out = schedule(*_dra_cluster(tmp_path), template, groups, pods, extra=BOTH_GATES)
    assert out.run.code == 0, out.run.output
    assert len(out.placed()) == 10
    allocated = [c for c in out.claims.values() if c.devices]
    assert sorted(c.reserved_for for c in allocated) == [["test-dra-0"], ["test-dra-1"]]
    assert allocated[0].devices != allocated[1].devices
    # Pod i is in group test-dra-(i mod 2): five pods use each group's claim.
    users: dict[str, int] = {}
    for pod in out.pods.values():
        claim = out.claims[f"test/{pod.claim_names['resource']}"]
        users[claim.reserved_for[0]] = users.get(claim.reserved_for[0], 0) + 1
    assert users == {"test-dra-0": 5, "test-dra-1": 5}


def test_podgroup_claim_templates_without_the_claims_gate(tmp_path: Path) -> None:
    # GenericWorkload alone: every pod gets its own claim, so two devices serve two pods.
    template = write_docs(tmp_path / "rct.yaml",
                          render_all(RENDERED / "resourceclaimtemplate.default.yaml", 1, "test"))
    groups = write_docs(tmp_path / "groups.yaml",
                        render_all(PERF / "podgroup-with-claim-template.yaml", 2, "test"))
    pods = write_docs(tmp_path / "pods.yaml",
                      render_all(PERF / "pod-in-podgroup-with-claim-template.yaml", 10, "test",
                                 PodGroupCount=2))
    out = schedule(*_dra_cluster(tmp_path), template, groups, pods, extra=WORKLOAD_GATES)
    assert out.run.code == 1, out.run.output
    assert len(out.placed()) == 2


def test_podgroup_claim_refs_reserved_for_the_group(tmp_path: Path) -> None:
    claims = write_docs(tmp_path / "claims.yaml",
                        render_all(PERF / "resourceclaim.yaml", 2, "test"))
    groups = write_docs(tmp_path / "groups.yaml",
                        render_all(PERF / "podgroup-with-claim-ref.yaml", 2, "test"))
    pods = write_docs(tmp_path / "pods.yaml",
                      render_all(PERF / "pod-in-podgroup-with-claim-ref.yaml", 10, "test",
                                 PodGroupCount=2))
    out = schedule(*_dra_cluster(tmp_path), claims, groups, pods, extra=BOTH_GATES)
    assert out.run.code == 0, out.run.output
    assert len(out.placed()) == 10
    for i in range(2):
        # Reserved for the PodGroup, not for its five pods (KEP-5729 lifts the 256 limit).
        assert out.claim(f"test/test-claim-{i}").reserved_for == [f"test-dra-{i}"]

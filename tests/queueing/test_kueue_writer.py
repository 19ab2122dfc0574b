"""Workloads and Jobs written as Kueue leaves them, and read back to the same state."""

from __future__ import annotations

from typing import Any

from dralab.queueing.model import Admission, Decision, PodSetAssignment
from dralab.queueing.objects import KueueWorkload, decode_kueue
from dralab.queueing.reader import read_snapshot
from dralab.queueing.writer import write_jobs, write_workloads

from .test_kueue_reader import container, job, load

WHEN = "2026-11-30T09:00:00Z"


def _setup() -> list[dict[str, Any]]:
    return [
        {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor",
         "metadata": {"name": "h100"},
         "spec": {"nodeLabels": {"gpu": "h100"},
                  "tolerations": [{"key": "gpu", "operator": "Exists",
                                   "effect": "NoSchedule"}]}},
        {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue",
         "metadata": {"name": "team-a"}, "spec": {"cohort": "research", "namespaceSelector": {},
                                                 "resourceGroups": [{
                                                     "coveredResources": ["cpu"],
                                                     "flavors": [{"name": "h100", "resources": [
                                                         {"name": "cpu",
                                                          "nominalQuota": 4}]}]}]}},
        {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
         "metadata": {"name": "user-queue", "namespace": "default"},
         "spec": {"clusterQueue": "team-a"}},
    ]


def _snapshot(*jobs: dict[str, Any]) -> Any:
    return read_snapshot(load(*_setup(), *jobs))


def _admit(snapshot: Any, key: str, cpu: int) -> Decision:
    admission = Admission("team-a", (PodSetAssignment("main", {"cpu": "h100"}, {"cpu": cpu}, 2),))
    snapshot.state.admitted[key] = admission
    return Decision(key, admitted=admission)


def _conditions(doc: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(c["type"], c["status"], c["reason"]) for c in doc["status"]["conditions"]]


def test_admitted_workload_and_unsuspended_job() -> None:
    owner = job("train", [container(cpu="1")], parallelism=2)
    owner["metadata"]["uid"] = "job-uid-1"
    snapshot = _snapshot(owner)
    (key,) = snapshot.state.workloads
    (doc,) = write_workloads(snapshot, [_admit(snapshot, key, 2000)], WHEN)
    assert doc["apiVersion"] == "kueue.x-k8s.io/v1beta1"
    assert doc["kind"] == "Workload"
    assert doc["metadata"]["name"] == key.split("/")[1]
    assert doc["metadata"]["labels"] == {"kueue.x-k8s.io/job-uid": "job-uid-1"}
    assert doc["metadata"]["ownerReferences"] == [{
        "apiVersion": "batch/v1", "kind": "Job", "name": "train", "uid": "job-uid-1",
        "controller": True, "blockOwnerDeletion": True}]
    assert doc["spec"]["queueName"] == "user-queue"
    assert doc["spec"]["podSets"][0]["name"] == "main"
    assert doc["spec"]["podSets"][0]["count"] == 2
    assert doc["status"]["admission"] == {"clusterQueue": "team-a", "podSetAssignments": [
        {"name": "main", "flavors": {"cpu": "h100"}, "resourceUsage": {"cpu": "2"},
         "count": 2}]}
    assert _conditions(doc) == [("QuotaReserved", "True", "QuotaReserved"),
                                ("Admitted", "True", "Admitted")]
    assert doc["status"]["conditions"][0]["message"] == "Quota reserved in ClusterQueue team-a"
    (written_job,) = write_jobs(snapshot)
    assert written_job["spec"]["suspend"] is False
    pod_spec = written_job["spec"]["template"]["spec"]
    assert pod_spec["nodeSelector"] == {"gpu": "h100"}
    assert pod_spec["tolerations"] == [{"key": "gpu", "operator": "Exists",
                                        "effect": "NoSchedule"}]


def test_pending_workload_and_suspended_job() -> None:
    snapshot = _snapshot(job("wait", [container(cpu="8")]))
    (key,) = snapshot.state.workloads
    message = ("couldn't assign flavors to pod set main: insufficient quota for cpu in "
               "flavor h100, previously considered podsets requests (0) + current podset "
               "request (8) > maximum capacity (4)")
    (doc,) = write_workloads(snapshot, [Decision(key, pending=message)], WHEN)
    assert "admission" not in doc["status"]
    assert doc["status"]["conditions"] == [{
        "type": "QuotaReserved", "status": "False", "reason": "Pending", "message": message,
        "lastTransitionTime": WHEN}]
    assert write_jobs(snapshot)[0]["spec"]["suspend"] is True


def test_preempted_workload_conditions() -> None:
    victim = job("victim", [container(cpu="1")])
    winner = job("winner", [container(cpu="1")])
    winner["metadata"]["uid"] = "winner-job-uid"
    snapshot = _snapshot(victim, winner)
    victim_key, winner_key = snapshot.state.workloads
    decisions = [_admit(snapshot, victim_key, 1000),
                 Decision(victim_key, preempted=True, by=winner_key, reason="InClusterQueue")]
    del snapshot.state.admitted[victim_key]
    docs = write_workloads(snapshot, decisions, WHEN)
    victim_doc = docs[0]
    assert "admission" not in victim_doc["status"]
    assert _conditions(victim_doc) == [("QuotaReserved", "False", "Pending"),
                                       ("Admitted", "False", "NoReservation"),
                                       ("Evicted", "True", "Preempted"),
                                       ("Preempted", "True", "InClusterQueue")]
    assert victim_doc["status"]["conditions"][2]["message"] == (
        "Preempted to accommodate a workload (UID: UNKNOWN, JobUID: winner-job-uid) due to "
        "prioritization in the ClusterQueue; preemptor path: /research/team-a; "
        "preemptee path: /research/team-a")


def test_inadmissible_workload_is_misconfigured() -> None:
    owner = job("dra", [container(cpu="1")],
                pod={"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}]})
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "t", "namespace": "default"},
                "spec": {"spec": {"devices": {"requests": [
                    {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}}}
    snapshot = _snapshot(owner, template)
    (doc,) = write_workloads(snapshot, [], WHEN)
    assert _conditions(doc) == [("QuotaReserved", "False", "Misconfigured")]
    assert "is not mapped in DRA configuration for podset main" in \
        doc["status"]["conditions"][0]["message"]
    assert write_jobs(snapshot)[0]["spec"]["suspend"] is True


def test_written_workloads_read_back_to_the_same_state() -> None:
    snapshot = _snapshot(job("a", [container(cpu="1")], parallelism=2),
                         job("b", [container(cpu="8")]))
    key_a, key_b = snapshot.state.workloads
    decisions = [_admit(snapshot, key_a, 2000), Decision(key_b, pending="no room")]
    written = write_workloads(snapshot, decisions, WHEN) + write_jobs(snapshot)
    again = read_snapshot(load(*_setup(), *written))
    assert again.state.admitted == snapshot.state.admitted
    assert list(again.state.workloads) == list(snapshot.state.workloads)
    for key in snapshot.state.workloads:
        before, after = snapshot.state.workloads[key], again.state.workloads[key]
        assert (before.queue, before.cluster_queue, before.priority, before.pod_sets) == \
            (after.queue, after.cluster_queue, after.priority, after.pod_sets)
    # A second write of what was read changes nothing but keeps the conditions' times.
    rewritten = write_workloads(again, decisions, "2027-01-01T00:00:00Z")
    for first, second in zip(written, rewritten, strict=False):
        assert first["status"]["conditions"] == second["status"]["conditions"]


def test_v1beta2_workload_reads_and_writes_as_v1beta1() -> None:
    wl = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
          "metadata": {"name": "job-x-12345", "namespace": "default", "uid": "wl-uid"},
          "spec": {"queueName": "user-queue",
                   "priorityClassRef": {"group": "kueue.x-k8s.io",
                                        "kind": "WorkloadPriorityClass", "name": "high"},
                   "podSets": [{"name": "main", "count": 1, "template": {"spec": {
                       "containers": [container(cpu="1")]}}}]},
          "status": {"admission": {"clusterQueue": "team-a", "podSetAssignments": [
              {"name": "main", "flavors": {"cpu": "h100"}, "resourceUsage": {"cpu": "1"},
               "count": 1}]},
              "conditions": [{"type": "QuotaReserved", "status": "True",
                              "reason": "QuotaReserved", "message": "old",
                              "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}
    wpc = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "WorkloadPriorityClass",
           "metadata": {"name": "high"}, "value": 100}
    snapshot = read_snapshot(load(*_setup(), wpc, wl))
    assert snapshot.state.workloads["default/job-x-12345"].priority == 100
    assert "default/job-x-12345" in snapshot.state.admitted
    (doc,) = write_workloads(snapshot, [], WHEN)
    assert doc["apiVersion"] == "kueue.x-k8s.io/v1beta1"
    assert doc["spec"]["priorityClassName"] == "high"
    assert doc["metadata"]["uid"] == "wl-uid"
    # Still holding quota: the transition time of the unchanged condition is kept.
    assert doc["status"]["conditions"][0]["lastTransitionTime"] == "2026-01-01T00:00:00Z"
    decoded = decode_kueue(doc)
    assert isinstance(decoded, KueueWorkload)
    assert decoded.status.admission is not None
    assert doc["spec"]["priorityClassSource"] == "kueue.x-k8s.io/workloadpriorityclass"
    assert write_jobs(snapshot) == []  # no Job in the snapshot owns it


def test_requeued_after_preemption_keeps_the_eviction() -> None:
    victim = job("victim", [container(cpu="1")])
    winner = job("winner", [container(cpu="1")])
    snapshot = _snapshot(victim, winner)
    victim_key, winner_key = snapshot.state.workloads
    decisions = [_admit(snapshot, victim_key, 1000),
                 Decision(victim_key, preempted=True, by=winner_key,
                          reason="InCohortReclamation"),
                 Decision(victim_key, pending="insufficient unused quota")]
    del snapshot.state.admitted[victim_key]
    victim_doc = write_workloads(snapshot, decisions, WHEN)[0]
    conditions = {c["type"]: c for c in victim_doc["status"]["conditions"]}
    assert conditions["QuotaReserved"]["message"] == "insufficient unused quota"
    assert conditions["Evicted"]["reason"] == "Preempted"
    assert conditions["Preempted"]["reason"] == "InCohortReclamation"


def test_readmitted_after_preemption_clears_the_eviction() -> None:
    snapshot = _snapshot(job("a", [container(cpu="1")]), job("b", [container(cpu="1")]))
    key, other = snapshot.state.workloads
    decisions = [Decision(key, preempted=True, by=other, reason="InClusterQueue"),
                 _admit(snapshot, key, 1000)]
    doc = write_workloads(snapshot, decisions, WHEN)[0]
    assert _conditions(doc) == [("QuotaReserved", "True", "QuotaReserved"),
                                ("Admitted", "True", "Admitted")]


def test_stopped_cluster_queue_eviction() -> None:
    snapshot = _snapshot(job("a", [container(cpu="1")]))
    (key,) = snapshot.state.workloads
    doc = write_workloads(snapshot, [Decision(key, preempted=True,
                                              reason="ClusterQueueStopped")], WHEN)[0]
    conditions = {c["type"]: c for c in doc["status"]["conditions"]}
    assert (conditions["Evicted"]["reason"], conditions["Evicted"]["message"]) == \
        ("ClusterQueueStopped", "The ClusterQueue is stopped")
    assert "Preempted" not in conditions

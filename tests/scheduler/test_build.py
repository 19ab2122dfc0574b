"""Workload expansion: upstream naming, labels, counts and pinning; cron activation."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from dralab.api.core import Pod
from dralab.controllers.cronschedule import next_activation
from dralab.controllers.workloadobjects import safe_encode
from dralab.scheduler import build_cluster, schedule

from .builders import node, pod, workload

SUFFIX = "[bcdfghjklmnpqrstvwxz2456789]{5}"


def names(objects: list) -> list[str]:  # type: ignore[type-arg]
    _, pending = build_cluster(objects)
    return [p.pod.metadata.name or "" for p in pending]


def pods(objects: list) -> list[Pod]:  # type: ignore[type-arg]
    _, pending = build_cluster(objects)
    return [p.pod for p in pending]


def test_job_parallelism_capped_by_completions() -> None:
    got = pods([workload("Job", "train", {"parallelism": 3, "completions": 2}, cpu="1")])
    assert len(got) == 2
    for p in got:
        assert re.fullmatch(f"train-{SUFFIX}", p.metadata.name or "")
        labels = p.metadata.labels
        assert labels["batch.kubernetes.io/job-name"] == "train"
        assert labels["job-name"] == "train"
        assert labels["controller-uid"] == labels["batch.kubernetes.io/controller-uid"]
        (owner,) = p.metadata.owner_references
        assert (owner.kind, owner.name, owner.controller) == ("Job", "train", True)
        assert p.metadata.namespace == "default"
        assert p.spec.containers[0].resources.requests["cpu"].milli_value() == 1000


def test_job_defaults_and_suspend() -> None:
    assert len(names([workload("Job", "one", {})])) == 1
    assert names([workload("Job", "off", {"suspend": True, "parallelism": 4})]) == []


def test_a_suspended_job_is_named_in_the_warnings() -> None:
    # No pod to place is no silence: schedule says which Jobs created none, and for a
    # Kueue-queued Job (created suspended, unsuspended on admission) where that is decided.
    queued = workload("Job", "queued", {"suspend": True},
                      metadata={"labels": {"kueue.x-k8s.io/queue-name": "training"}},
                      namespace="team-a")
    result = schedule([node("n1", cpu="4"), queued,
                       workload("Job", "off", {"suspend": True}),
                       workload("Job", "on", {"suspend": False}, cpu="1")])
    assert [p.pod.metadata.name.split("-")[0] for p in result.placed] == ["on"]
    assert result.warnings == (
        "Job team-a/queued is suspended (spec.suspend: true): the Job controller creates "
        "no pods for it, so none is scheduled; Kueue unsuspends it when LocalQueue training "
        "admits it (dralab admit decides that)",
        "Job default/off is suspended (spec.suspend: true): the Job controller creates no "
        "pods for it, so none is scheduled; it runs once unsuspended")


def test_many_suspended_jobs_are_counted_past_five() -> None:
    jobs = [workload("Job", f"j{i}", {"suspend": True}) for i in range(8)]
    warnings = schedule(jobs).warnings
    assert len(warnings) == 6
    assert [w.split()[1] for w in warnings[:5]] == [f"default/j{i}" for i in range(5)]
    assert warnings[5] == "3 more suspended Jobs: no pods are scheduled for them either"


def test_indexed_job() -> None:
    got = pods([workload("Job", "idx", {"parallelism": 2, "completions": 2,
                                        "completionMode": "Indexed"})])
    assert [re.fullmatch(f"idx-{i}-{SUFFIX}", p.metadata.name or "") is not None
            for i, p in enumerate(got)] == [True, True]
    assert [p.metadata.annotations["batch.kubernetes.io/job-completion-index"]
            for p in got] == ["0", "1"]


def test_cron_job_names_job_by_scheduled_minute() -> None:
    cron = workload("CronJob", "nightly", {"schedule": "30 2 * * *"},
                    metadata={"creationTimestamp": "2025-03-01T12:00:00Z"})
    (p,) = pods([cron])
    minute = int(datetime(2025, 3, 2, 2, 30, tzinfo=UTC).timestamp()) // 60
    assert re.fullmatch(f"nightly-{minute}-{SUFFIX}", p.metadata.name or "")
    assert p.metadata.owner_references[0].name == f"nightly-{minute}"
    assert p.metadata.labels["job-name"] == f"nightly-{minute}"


def test_deployment_goes_through_a_replica_set() -> None:
    got = pods([workload("Deployment", "web", {"replicas": 3})])
    assert len(got) == 3
    hashes = {p.metadata.labels["pod-template-hash"] for p in got}
    assert len(hashes) == 1
    (h,) = hashes
    assert re.fullmatch("[bcdfghjklmnpqrstvwxz2456789]{1,10}", h)
    for p in got:
        assert re.fullmatch(f"web-{h}-{SUFFIX}", p.metadata.name or "")
        assert p.metadata.owner_references[0].kind == "ReplicaSet"
        assert p.metadata.owner_references[0].name == f"web-{h}"


def test_replica_set_and_stateful_set() -> None:
    assert len(names([workload("ReplicaSet", "rs", {"replicas": 2})])) == 2
    sts = pods([workload("StatefulSet", "db", {"replicas": 3, "serviceName": "db"})])
    assert [p.metadata.name for p in sts] == ["db-0", "db-1", "db-2"]
    assert sts[1].metadata.labels["apps.kubernetes.io/pod-index"] == "1"
    assert sts[1].metadata.labels["statefulset.kubernetes.io/pod-name"] == "db-1"
    assert sts[1].raw is not None and sts[1].raw["spec"]["hostname"] == "db-1"
    assert sts[1].raw["spec"]["subdomain"] == "db"


def test_daemon_set_one_pod_per_eligible_node() -> None:
    objects = [node("a"), node("b", taints=["dedicated=infra:NoSchedule"]),
               node("c", labels={"role": "gpu"}), node("d", unschedulable=True),
               workload("DaemonSet", "agent", {})]
    got = pods(objects)
    pinned = [p.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution
              .node_selector_terms[0].match_fields[0].values[0]  # type: ignore[union-attr]
              for p in got]
    assert pinned == ["a", "c", "d"]  # b's taint is not tolerated
    result = schedule(objects)
    assert sorted((p.pod.metadata.name or "")[:5] + "@" + p.node for p in result.placed) == [
        "agent@a", "agent@c", "agent@d"]
    assert [t.key for t in got[0].spec.tolerations][-1] == "node.kubernetes.io/unschedulable"


def test_daemon_set_node_selector() -> None:
    got = pods([node("a"), node("c", labels={"role": "gpu"}),
                workload("DaemonSet", "gpu-agent", {}, node_selector={"role": "gpu"})])
    assert len(got) == 1


def test_unmodelled_template_fields_survive() -> None:
    (p,) = pods([workload("ReplicaSet", "rs", {"replicas": 1})])
    assert p.raw is not None
    assert p.raw["spec"]["containers"][0]["image"] == "registry.k8s.io/pause:3.10"


def test_pods_get_uid_namespace_and_generated_name() -> None:
    from dralab.api.codec import decode

    gen = decode({"apiVersion": "v1", "kind": "Pod",
                  "metadata": {"generateName": "worker-"}, "spec": {"containers": []}})
    (p,) = pods([gen])
    assert re.fullmatch(f"worker-{SUFFIX}", p.metadata.name or "")
    assert p.metadata.namespace == "default"
    assert re.fullmatch("[0-9a-f-]{36}", p.metadata.uid or "")


def test_claims_without_namespace_are_stored_in_default() -> None:
    # As the API server stores them (and as pods get it): written back with the namespace.
    from dralab.api.codec import decode

    claim = decode({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                    "metadata": {"name": "gpu"},
                    "spec": {"devices": {"requests": [
                        {"name": "r", "exactly": {"deviceClassName": "gpu.example.com"}}]}}})
    cluster, _ = build_cluster([claim])
    assert cluster.claims["default/gpu"].metadata.namespace == "default"


def test_names_are_deterministic_per_seed() -> None:
    objects = [workload("ReplicaSet", "rs", {"replicas": 3})]
    first = [p.pod.metadata.name for p in build_cluster(objects, seed=1)[1]]
    again = [p.pod.metadata.name for p in build_cluster(objects, seed=1)[1]]
    other = [p.pod.metadata.name for p in build_cluster(objects, seed=2)[1]]
    assert first == again != other


def test_bound_pods_are_not_pending() -> None:
    cluster, pending = build_cluster([node("a", "4"), pod("x", "3", node_name="a"),
                                      pod("y", "1")])
    assert [p.pod.metadata.name for p in pending] == ["y"]
    assert cluster.nodes["a"].requested["cpu"] == 3000


def test_safe_encode_matches_upstream_alphabet() -> None:
    assert safe_encode("0123456789") == "456789bcdf"


UTC0 = datetime(2025, 1, 1, 0, 0, tzinfo=UTC)  # a Wednesday


@pytest.mark.parametrize(("schedule_text", "expected"), [
    ("*/15 * * * *", datetime(2025, 1, 1, 0, 15, tzinfo=UTC)),
    ("@hourly", datetime(2025, 1, 1, 1, 0, tzinfo=UTC)),
    ("@daily", datetime(2025, 1, 2, 0, 0, tzinfo=UTC)),
    ("0 9 * * MON", datetime(2025, 1, 6, 9, 0, tzinfo=UTC)),
    ("0 0 13 * FRI", datetime(2025, 1, 3, 0, 0, tzinfo=UTC)),  # DOM or DOW when both set
    ("0 0 29 2 *", datetime(2028, 2, 29, 0, 0, tzinfo=UTC)),
    ("5 4 * JAN-MAR *", datetime(2025, 1, 1, 4, 5, tzinfo=UTC)),
    ("@every 90m", datetime(2025, 1, 1, 1, 30, tzinfo=UTC)),
])
def test_next_activation(schedule_text: str, expected: datetime) -> None:
    assert next_activation(schedule_text, UTC0) == expected

"""A snapshot read into the queueing state: queues, flavors, and one Workload per
queued Job or pod, with its pod set as Kueue computes it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dralab.api.base import KubeObject
from dralab.api.codec import decode
from dralab.api.io import read_documents
from dralab.queueing.model import Admission, PodSetAssignment, ResourceQuota, TopologyRequest
from dralab.queueing.naming import workload_name
from dralab.queueing.objects import decode_kueue, is_kueue_document
from dralab.queueing.reader import KueueSnapshot, read_snapshot

DATA = Path(__file__).parent.parent / "data" / "kueue"
GI = 1024 ** 3 * 1000


def load(*docs: dict[str, Any]) -> list[KubeObject]:
    return [decode_kueue(d) if is_kueue_document(d) else decode(d) for d in docs]


def load_files(*names: str) -> list[KubeObject]:
    return load(*(d.data for d in read_documents([DATA / n for n in names])))


def job(name: str, containers: list[dict[str, Any]], *, ns: str = "default",
        queue: str | None = "user-queue", labels: dict[str, str] | None = None,
        **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": ns,
                            "labels": ({"kueue.x-k8s.io/queue-name": queue} if queue else {})
                            | (labels or {})}
    template_spec = {"containers": containers, "restartPolicy": "Never"} | spec.pop("pod", {})
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
            "spec": spec | {"template": {"spec": template_spec}}}


def container(**requests: str) -> dict[str, Any]:
    return {"name": "c", "image": "i", "resources": {"requests": requests}}


def only(snapshot: KueueSnapshot) -> Any:
    assert len(snapshot.state.workloads) == 1
    return next(iter(snapshot.state.workloads.values()))


def test_single_cluster_queue_sample() -> None:
    snapshot = read_snapshot(load_files("admin-single-clusterqueue-setup.yaml",
                                        "jobs-sample-job.yaml"))
    state = snapshot.state
    assert set(state.flavors) == {"default-flavor"}
    cq = state.cluster_queues["cluster-queue"]
    assert cq.namespaces is None  # namespaceSelector: {} matches every namespace
    assert cq.resource_groups[0].covered == ("cpu", "memory")
    assert cq.resource_groups[0].flavors[0].resources["memory"] == ResourceQuota(36 * GI)
    assert state.local_queues == {"default/user-queue": "cluster-queue"}
    workload = only(snapshot)
    assert workload.queue == "default/user-queue"
    assert workload.cluster_queue == "cluster-queue"
    (pod_set,) = workload.pod_sets
    assert (pod_set.name, pod_set.count) == ("main", 3)
    assert pod_set.per_pod == {"cpu": 1000, "memory": 200 * 1024 ** 2 * 1000}


def test_workload_is_named_as_kueue_names_it() -> None:
    snapshot = read_snapshot(load(job("train", [container(cpu="1")])))
    assert set(snapshot.state.workloads) == {
        f"default/{workload_name('Job', 'batch', 'train')}"}
    assert workload_name("Job", "batch", "train").startswith("job-train-")
    # The owner's UID, kind and group all change the hash.
    names = {workload_name("Job", "batch", "train", "uid-1"),
             workload_name("Job", "batch", "train", "uid-2"),
             workload_name("JobSet", "jobset.x-k8s.io", "train", "uid-1")}
    assert len(names) == 3
    assert len(workload_name("Job", "batch", "x" * 300)) == 253
    assert len(workload_name("Job", "batch", "x" * 300, short=True)) == 63


@pytest.mark.parametrize(("spec", "count"), [
    ({}, 1),
    ({"parallelism": 4}, 4),
    ({"parallelism": 4, "completions": 2}, 2),  # never more pods than completions
    ({"parallelism": 2, "completions": 10}, 2),
    ({"parallelism": 0}, 0),
])
def test_pod_count_is_parallelism_bounded_by_completions(spec: dict[str, Any],
                                                         count: int) -> None:
    snapshot = read_snapshot(load(job("j", [container(cpu="1")], **spec)))
    assert only(snapshot).pod_sets[0].count == count


@pytest.mark.parametrize(("pod", "expected"), [
    # Regular containers add up.
    ({"containers": [container(cpu="1"), container(cpu="2", memory="1Gi")]},
     {"cpu": 3000, "memory": GI}),
    # A bigger init container wins, resource by resource.
    ({"containers": [container(cpu="1", memory="2Gi")],
      "initContainers": [container(cpu="4", memory="1Gi")]},
     {"cpu": 4000, "memory": 2 * GI}),
    # A sidecar (restartPolicy Always) keeps running beside the containers.
    ({"containers": [container(cpu="1")],
      "initContainers": [container(cpu="1") | {"restartPolicy": "Always"},
                         container(cpu="3")]},
     {"cpu": 4000}),
    # Limits stand in for missing requests; pod overhead is added.
    ({"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "2"}}}],
      "overhead": {"cpu": "250m"}},
     {"nvidia.com/gpu": 2000, "cpu": 250}),
])
def test_per_pod_requests_as_kueue_totals_them(pod: dict[str, Any],
                                               expected: dict[str, int]) -> None:
    containers = pod.pop("containers")
    snapshot = read_snapshot(load(job("j", containers, pod=pod)))
    assert only(snapshot).pod_sets[0].per_pod == expected


def test_priority_from_workload_priority_class_then_pod_priority_class() -> None:
    objects = load(
        {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "WorkloadPriorityClass",
         "metadata": {"name": "high"}, "value": 1000},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
         "metadata": {"name": "pod-high"}, "value": 500},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
         "metadata": {"name": "default"}, "value": 7, "globalDefault": True},
        job("a", [container(cpu="1")], labels={"kueue.x-k8s.io/priority-class": "high"},
            pod={"priorityClassName": "pod-high"}),
        job("b", [container(cpu="1")], pod={"priorityClassName": "pod-high"}),
        job("c", [container(cpu="1")]))
    snapshot = read_snapshot(objects)
    by_job = {k.split("-")[1]: w.priority for k, w in snapshot.state.workloads.items()}
    assert by_job == {"a": 1000, "b": 500, "c": 7}
    source = snapshot.sources[next(k for k in snapshot.sources if "job-a-" in k)]
    assert source.priority_class == "high"
    assert source.priority_class_source == "kueue.x-k8s.io/workloadpriorityclass"


def test_created_from_creation_timestamp_else_input_order() -> None:
    stamped = job("late", [container(cpu="1")])
    stamped["metadata"]["creationTimestamp"] = "2026-11-30T08:00:00Z"
    snapshot = read_snapshot(load(job("first", [container(cpu="1")]),
                                  job("second", [container(cpu="1")]), stamped))
    created = {k.split("-")[1]: w.created for k, w in snapshot.state.workloads.items()}
    assert created["first"] < created["second"]
    assert created["late"] == 1796025600.0


def test_unlabelled_jobs_and_owned_pods_are_not_workloads() -> None:
    owned_pod = {"apiVersion": "v1", "kind": "Pod",
                 "metadata": {"name": "j-abc", "namespace": "default",
                              "labels": {"kueue.x-k8s.io/queue-name": "user-queue"},
                              "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job",
                                                   "name": "j", "uid": "u",
                                                   "controller": True}]},
                 "spec": {"containers": [container(cpu="1")]}}
    plain_pod = {"apiVersion": "v1", "kind": "Pod",
                 "metadata": {"name": "solo", "namespace": "default",
                              "labels": {"kueue.x-k8s.io/queue-name": "user-queue"},
                              "annotations": {
                                  "kueue.x-k8s.io/podset-required-topology": "rack"}},
                 "spec": {"containers": [container(cpu="2")]}}
    snapshot = read_snapshot(load(job("j", [container(cpu="1")], queue=None),
                                  owned_pod, plain_pod))
    workload = only(snapshot)
    assert workload.key.startswith("default/pod-solo-")
    assert workload.pod_sets[0].per_pod == {"cpu": 2000}
    assert workload.pod_sets[0].topology == TopologyRequest(level="rack", required=True)


def test_namespace_selector_none_admits_no_namespace() -> None:
    cq: dict[str, Any] = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
                          "metadata": {"name": "cq"}, "spec": {}}
    labelled = cq | {"metadata": {"name": "cq2"},
                     "spec": {"namespaceSelector": {"matchLabels": {"team": "a"}}}}
    expressions = cq | {"metadata": {"name": "cq3"}, "spec": {"namespaceSelector": {
        "matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In",
                              "values": ["team-b"]}]}}}
    namespaces = [{"apiVersion": "v1", "kind": "Namespace",
                   "metadata": {"name": n, "labels": labels}}
                  for n, labels in (("team-a", {"team": "a"}), ("team-b", {}))]
    state = read_snapshot(load(cq, labelled, expressions, *namespaces)).state
    assert state.cluster_queues["cq"].namespaces == frozenset()
    assert state.cluster_queues["cq2"].namespaces == frozenset({"team-a"})
    assert state.cluster_queues["cq3"].namespaces == frozenset({"team-b"})


def test_cluster_queue_knobs_and_cohorts_of_both_versions() -> None:
    objects = load_files("dralab-two-team-cohort.yaml")
    objects += load({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Cohort",
                     "metadata": {"name": "org"},
                     "spec": {"fairSharing": {"weight": "2"}}},
                    {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
                     "metadata": {"name": "team-c"},
                     "spec": {"cohortName": "org", "queueingStrategy": "StrictFIFO",
                              "fairSharing": {"weight": "0.5"}, "stopPolicy": "Hold",
                              "flavorFungibility": {"whenCanBorrow": "TryNextFlavor"},
                              "preemption": {"reclaimWithinCohort": "LowerPriority",
                                             "borrowWithinCohort": {
                                                 "policy": "LowerPriority",
                                                 "maxPriorityThreshold": 100}}}})
    state = read_snapshot(objects).state
    team_b = state.cluster_queues["team-b"]
    assert team_b.cohort == "research"
    assert [f.flavor for f in team_b.resource_groups[0].flavors] == ["h100", "a100"]
    assert team_b.resource_groups[0].flavors[0].resources["nvidia.com/gpu"] == \
        ResourceQuota(8000, None, 4000)
    assert state.cluster_queues["team-a"].resource_groups[0].flavors[0] \
        .resources["nvidia.com/gpu"] == ResourceQuota(8000, 8000, None)
    team_c = state.cluster_queues["team-c"]
    assert (team_c.cohort, team_c.queueing_strategy, team_c.fair_weight,
            team_c.stop_policy) == ("org", "StrictFIFO", 0.5, "Hold")
    assert team_c.flavor_fungibility.when_can_borrow == "TryNextFlavor"
    assert team_c.preemption.borrow_within_cohort == "LowerPriority"
    assert team_c.preemption.max_priority_threshold == 100
    assert state.cohorts["org"].fair_weight == 2.0
    assert "research" in state.cohorts  # named by ClusterQueues only: implicit
    assert state.flavors["h100"].node_labels == {
        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}


def test_dra_sample_with_configuration() -> None:
    snapshot = read_snapshot(load_files("dra-sample-dra-queues.yaml",
                                        "dra-sample-dra-rct-job.yaml",
                                        "dralab-dra-config.yaml"))
    assert only(snapshot).pod_sets[0].per_pod == {
        "cpu": 1000, "memory": 200 * 1024 ** 2 * 1000, "example.com/gpu": 1000}
    assert snapshot.inadmissible == {}


def test_dra_sample_without_mapping_is_inadmissible() -> None:
    snapshot = read_snapshot(load_files("dra-sample-dra-queues.yaml",
                                        "dra-sample-dra-rct-job.yaml"))
    assert snapshot.state.workloads == {}
    (message,) = snapshot.inadmissible.values()
    assert message.endswith('"DeviceClass gpu.example.com is not mapped in DRA configuration '
                            'for podset main"')


def test_extended_resource_sample_counts_the_gpu_once() -> None:
    device_class = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                    "metadata": {"name": "gpu.example.com"},
                    "spec": {"extendedResourceName": "example.com/gpu"}}
    snapshot = read_snapshot(load_files("dra-sample-dra-queues.yaml",
                                        "dra-sample-dra-extended-resource-job.yaml")
                             + load(device_class))
    assert only(snapshot).pod_sets[0].per_pod["example.com/gpu"] == 1000


def test_existing_workload_with_admission_holds_its_quota() -> None:
    name = workload_name("Job", "batch", "j")
    objects = load(job("j", [container(cpu="1")], parallelism=2), {
        "apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Workload",
        "metadata": {"name": name, "namespace": "default",
                     "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job",
                                          "name": "j", "uid": ""}]},
        "spec": {"queueName": "user-queue", "priority": 5, "podSets": [
            {"name": "main", "count": 2, "template": {"spec": {
                "containers": [container(cpu="1")]}}}]},
        "status": {"admission": {"clusterQueue": "cq", "podSetAssignments": [
            {"name": "main", "flavors": {"cpu": "default"}, "resourceUsage": {"cpu": "2"},
             "count": 2}]}}})
    snapshot = read_snapshot(objects)
    key = f"default/{name}"
    assert list(snapshot.state.workloads) == [key]  # the Job adds no second workload
    assert snapshot.state.workloads[key].priority == 5
    assert snapshot.state.admitted == {key: Admission("cq", (
        PodSetAssignment("main", {"cpu": "default"}, {"cpu": 2000}, 2),))}
    assert snapshot.sources[key].owner is not None

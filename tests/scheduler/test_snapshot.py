"""Snapshot semantics: workload controllers create only what their owner is missing;
generateName is named everywhere; duplicates end as kubectl apply leaves them;
finished pods hold nothing."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from dralab.api.base import KubeObject
from dralab.api.codec import decode
from dralab.api.errors import InputError
from dralab.controllers.applyorder import apply_order
from dralab.controllers.workloads import MAX_CREATED_PODS
from dralab.scheduler import build_cluster, schedule

from .builders import node, pod, pod_spec, workload

SUFFIX = "[bcdfghjklmnpqrstvwxz2456789]{5}"


def owned(name: str, kind: str, owner: str, *, uid: str | None = None,
          labels: Mapping[str, str] | None = None, phase: str | None = None,
          node_name: str | None = None, finalizers: Sequence[str] = (),
          annotations: Mapping[str, str] | None = None, deleting: bool = False,
          cpu: str | None = None) -> KubeObject:
    """A pod as a controller created it (ownerReference with controller: true)."""
    ref: dict[str, Any] = {"apiVersion": "apps/v1", "kind": kind, "name": owner,
                           "controller": True}
    if uid:
        ref["uid"] = uid
    meta: dict[str, Any] = {"name": name, "namespace": "default", "ownerReferences": [ref],
                            "labels": dict(labels or {"app": owner})}
    if finalizers:
        meta["finalizers"] = list(finalizers)
    if annotations:
        meta["annotations"] = dict(annotations)
    if deleting:
        meta["deletionTimestamp"] = "2026-11-20T08:00:00Z"
    doc: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                           "spec": pod_spec(cpu, node_name=node_name)}
    if phase:
        doc["status"] = {"phase": phase}
    return decode(doc)


def with_status(obj: KubeObject, status: Mapping[str, Any],
                meta: Mapping[str, Any] | None = None) -> KubeObject:
    assert obj.raw is not None
    doc = {**obj.raw, "status": dict(status)}
    if meta:
        doc["metadata"] = {**doc["metadata"], **meta}
    return decode(doc)


def pending(objects: list[KubeObject], seed: int = 0) -> list[str]:
    _, todo = build_cluster(objects, seed=seed)
    return [p.pod.metadata.name or "" for p in todo]


@dataclass
class Case:
    name: str
    objects: list[KubeObject]
    expected: list[str]  # regexes of the pending pods, in order


WEB = workload("Deployment", "web", {"replicas": 2})
WEB_TEMPLATE = WEB.raw["spec"]["template"] if WEB.raw else {}


def web_rs(name: str = "web-5d8f9c7b6", *, replicas: int = 2,
           template: Mapping[str, Any] | None = None) -> KubeObject:
    labels = {"app": "web", "pod-template-hash": name.rpartition("-")[2]}
    body = dict(template or WEB_TEMPLATE)
    body = {**body, "metadata": {"labels": labels}}
    return decode({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                   "metadata": {"name": name, "namespace": "default", "labels": labels,
                                "ownerReferences": [{"apiVersion": "apps/v1",
                                                     "kind": "Deployment", "name": "web",
                                                     "controller": True}]},
                   "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                            "template": body}})


def rs_pod(name: str, rs: str = "web-5d8f9c7b6", **kwargs: Any) -> KubeObject:
    return owned(name, "ReplicaSet", rs,
                 labels={"app": "web", "pod-template-hash": rs.rpartition("-")[2]}, **kwargs)


def job(spec: Mapping[str, Any], status: Mapping[str, Any] | None = None) -> KubeObject:
    obj = workload("Job", "train", spec)
    return with_status(obj, status) if status is not None else obj


def job_pod(name: str, phase: str | None = None, index: int | None = None,
            tracked: bool = True, **kwargs: Any) -> KubeObject:
    annotations = {"batch.kubernetes.io/job-completion-index": str(index)} \
        if index is not None else None
    return owned(name, "Job", "train", labels={"job-name": "train"}, phase=phase,
                 annotations=annotations,
                 finalizers=["batch.kubernetes.io/job-tracking"] if tracked else (), **kwargs)


OTHER = [
    Case("a Deployment with its ReplicaSet and pods creates nothing",
         [WEB, web_rs(), rs_pod("web-5d8f9c7b6-aaaaa", node_name="a"),
          rs_pod("web-5d8f9c7b6-bbbbb", node_name="a")], []),
    Case("order does not matter: pods and ReplicaSet before the Deployment",
         [rs_pod("web-5d8f9c7b6-aaaaa", node_name="a"), web_rs(),
          rs_pod("web-5d8f9c7b6-bbbbb", node_name="a"), WEB], []),
    Case("a ReplicaSet short of a pod creates one",
         [WEB, web_rs(), rs_pod("web-5d8f9c7b6-aaaaa", node_name="a")],
         [f"web-5d8f9c7b6-{SUFFIX}"]),
    Case("a Deployment scaled up scales its lone ReplicaSet",
         [workload("Deployment", "web", {"replicas": 4}), web_rs(),
          rs_pod("web-5d8f9c7b6-aaaaa", node_name="a"),
          rs_pod("web-5d8f9c7b6-bbbbb", node_name="a")],
         [f"web-5d8f9c7b6-{SUFFIX}"] * 2),
    Case("finished and deleted pods are replaced",
         [WEB, web_rs(), rs_pod("web-5d8f9c7b6-aaaaa", phase="Failed"),
          rs_pod("web-5d8f9c7b6-bbbbb", node_name="a", deleting=True)],
         [f"web-5d8f9c7b6-{SUFFIX}"] * 2),
    Case("a changed template rolls out one surge step (25% of 4 rounds up to 1)",
         [workload("Deployment", "web", {"replicas": 4}, cpu="2"),
          web_rs(replicas=4), *(rs_pod(f"web-5d8f9c7b6-{c * 5}", node_name="a")
                                for c in "abcd")],
         [f"web-[bcdfghjklmnpqrstvwxz2456789]+-{SUFFIX}"]),
    Case("Recreate waits for the old pods to go",
         [workload("Deployment", "web", {"replicas": 2, "strategy": {"type": "Recreate"}},
                   cpu="2"), web_rs(), rs_pod("web-5d8f9c7b6-aaaaa", node_name="a")], []),
    Case("a paused Deployment rolls nothing out",
         [workload("Deployment", "web", {"replicas": 2, "paused": True}, cpu="2"),
          web_rs(), rs_pod("web-5d8f9c7b6-aaaaa", node_name="a"),
          rs_pod("web-5d8f9c7b6-bbbbb", node_name="a")], []),
    Case("a ReplicaSet adopts an orphan that matches its selector",
         [workload("ReplicaSet", "rs", {"replicas": 2}),
          pod("stray", "1", labels={"app": "rs"}, node_name="a")], [f"rs-{SUFFIX}"]),
    Case("a pod controlled by someone else is not counted",
         [workload("ReplicaSet", "rs", {"replicas": 1}),
          owned("other-1", "ReplicaSet", "other", labels={"app": "rs"}, node_name="a")],
         [f"rs-{SUFFIX}"]),
    Case("owner matched by uid when both sides have one",
         [workload("ReplicaSet", "rs", {"replicas": 1}, metadata={"uid": "u-1"}),
          owned("rs-old", "ReplicaSet", "rs", uid="u-0", node_name="a"),
          owned("rs-cur", "ReplicaSet", "rs", uid="u-1", node_name="a")], []),
    Case("a Job half done creates what parallelism allows of the rest",
         [job({"parallelism": 2, "completions": 4}, {"succeeded": 2, "active": 1}),
          job_pod("train-aaaaa", "Succeeded", tracked=False),
          job_pod("train-bbbbb", "Succeeded", tracked=False),
          job_pod("train-ccccc", "Running", node_name="a")], [f"train-{SUFFIX}"]),
    Case("succeeded pods still tracked by finalizer count as succeeded",
         [job({"parallelism": 2, "completions": 3}, {}),
          job_pod("train-aaaaa", "Succeeded"), job_pod("train-bbbbb", "Succeeded")],
         [f"train-{SUFFIX}"]),
    Case("a Job without completions stops creating after one success",
         [job({"parallelism": 3}, {"succeeded": 1}),
          job_pod("train-aaaaa", "Running", node_name="a")], []),
    Case("a complete Job creates nothing",
         [job({"parallelism": 2, "completions": 4},
              {"conditions": [{"type": "Complete", "status": "True"}]})], []),
    Case("a Job past its backoffLimit creates nothing",
         [job({"parallelism": 1, "completions": 4, "backoffLimit": 1}, {"failed": 2})], []),
    Case("an Indexed Job creates the lowest free indexes",
         [job({"parallelism": 3, "completions": 5, "completionMode": "Indexed"},
              {"completedIndexes": "0,2"}),
          job_pod("train-1-aaaaa", "Running", index=1, node_name="a")],
         [f"train-3-{SUFFIX}", f"train-4-{SUFFIX}"]),
    # Found by the fuzz suite: the free indexes were looked for among all completions
    # (two billion here) and completedIndexes ranges were expanded index by index.
    Case("an Indexed Job of two billion completions, nearly all done, creates the last ones",
         [job({"parallelism": 3, "completions": 2_000_000_000, "completionMode": "Indexed"},
              {"completedIndexes": "0-1999999996,1999999998"}),
          job_pod("train-1999999997-aaaaa", "Succeeded", index=1999999997)],
         [f"train-1999999999-{SUFFIX}"]),
    Case("an Indexed Job creates free indexes between completed runs",
         [job({"parallelism": 2, "completions": 10, "completionMode": "Indexed"},
              {"completedIndexes": "5-7,0-3,2-4"})], [f"train-8-{SUFFIX}", f"train-9-{SUFFIX}"]),
    Case("a StatefulSet creates its missing ordinals and replaces failed ones",
         [workload("StatefulSet", "db", {"replicas": 4}),
          owned("db-0", "StatefulSet", "db", phase="Failed"),
          owned("db-1", "StatefulSet", "db", node_name="a"),
          owned("db-3", "StatefulSet", "db", node_name="a")], ["db-0", "db-2"]),
    Case("StatefulSet ordinals start where spec.ordinals.start says",
         [workload("StatefulSet", "db", {"replicas": 2, "ordinals": {"start": 5}})],
         ["db-5", "db-6"]),
    Case("a DaemonSet fills only nodes without its pod",
         [node("a"), node("b"), node("c"), workload("DaemonSet", "agent", {}),
          owned("agent-aaaaa", "DaemonSet", "agent", node_name="a"),
          owned("agent-ccccc", "DaemonSet", "agent", phase="Failed", node_name="c")],
         [f"agent-{SUFFIX}", f"agent-{SUFFIX}"]),
    Case("a CronJob that fired creates nothing more",
         [with_status(workload("CronJob", "nightly", {"schedule": "0 2 * * *"}),
                      {"lastScheduleTime": "2026-11-20T02:00:00Z"})], []),
    Case("a CronJob whose Job for the activation exists creates nothing",
         [workload("CronJob", "nightly", {"schedule": "30 2 * * *"},
                   metadata={"creationTimestamp": "2025-03-01T12:00:00Z"}),
          workload("Job", "nightly-29014710", {})],  # 2025-03-02T02:30Z in minutes
         [f"nightly-29014710-{SUFFIX}"]),
    Case("Forbid: an active Job of the CronJob blocks the next one",
         [workload("CronJob", "nightly", {"schedule": "30 2 * * *",
                                          "concurrencyPolicy": "Forbid"}),
          decode({"apiVersion": "batch/v1", "kind": "Job",
                  "metadata": {"name": "nightly-manual", "namespace": "default",
                               "ownerReferences": [{"apiVersion": "batch/v1",
                                                    "kind": "CronJob", "name": "nightly",
                                                    "controller": True}]},
                  "spec": {"template": {"spec": {"restartPolicy": "Never",
                                                 "containers": [{"name": "c"}]}}}})],
         [f"nightly-manual-{SUFFIX}"]),
]


@pytest.mark.parametrize("case", OTHER, ids=[c.name for c in OTHER])
def test_controllers_create_only_what_is_missing(case: Case) -> None:
    got = pending([node("a", "64", "256Gi"), *case.objects])
    assert len(got) == len(case.expected), got
    for name, pattern in zip(got, case.expected, strict=True):
        assert re.fullmatch(pattern, name), (name, pattern)


@pytest.mark.parametrize(("obj", "message"), [
    (job({"parallelism": 2_000_000_000}),
     "Job default/train: spec.parallelism: 2,000,000,000 pods to create"),
    (job({"parallelism": 2_000_000_000, "completions": 2_000_000_000,
          "completionMode": "Indexed"}),
     "Job default/train: spec.parallelism: 100,001 pods to create"),
    (workload("StatefulSet", "db", {"replicas": 2_000_000_000}),
     "StatefulSet default/db: spec.replicas: 2,000,000,000 pods to create"),
    (workload("Deployment", "web", {"replicas": 60_000}),
     "ReplicaSet default/web2: spec.replicas: 60,000 pods to create (120,000 with the "
     "workloads before it)"),
])
def test_workloads_create_at_most_max_created_pods(obj: KubeObject, message: str) -> None:
    # Found by the fuzz suite: a Job with parallelism 2e9 (valid upstream, where the Job
    # controller creates pods in batches) built pods until memory ran out.
    second = workload("ReplicaSet", "web2", {"replicas": 60_000})
    objects = [obj, second] if obj.kind == "Deployment" else [obj]
    with pytest.raises(InputError) as info:
        build_cluster([node("a", "64", "256Gi"), *objects])
    assert str(info.value) == (f"{message}, more than {MAX_CREATED_PODS:,} (dralab's limit on "
                               "pods created from workloads in one run)")


def test_generate_name_everywhere() -> None:
    template = {"metadata": {"labels": {"app": "x"}},
                "spec": {"containers": [{"name": "c", "image": "i"}],
                         "restartPolicy": "Never"}}
    docs = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"generateName": "node-"},
         "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "20"}}},
        {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"generateName": "job-"},
         "spec": {"template": template}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"generateName": "dep-"},
         "spec": {"selector": {"matchLabels": {"app": "x"}}, "template": template}},
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"generateName": "sts-"},
         "spec": {"selector": {"matchLabels": {"app": "x"}}, "template": template}},
        {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"generateName": "ds-"},
         "spec": {"selector": {"matchLabels": {"app": "x"}}, "template": template}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "pod-"},
         "spec": template["spec"]},
    ]
    objects = [decode(d) for d in docs]
    result = schedule(objects)
    assert result.all_placed
    (node_name,) = result.cluster.nodes
    assert re.fullmatch(f"node-{SUFFIX}", node_name)
    names = sorted(p.metadata.name or "" for p in result.pods)
    patterns = sorted([f"dep-{SUFFIX}-[bcdfghjklmnpqrstvwxz2456789]+-{SUFFIX}",
                       f"ds-{SUFFIX}-{SUFFIX}", f"job-{SUFFIX}-{SUFFIX}", f"pod-{SUFFIX}",
                       f"sts-{SUFFIX}-0"])
    assert len(names) == len(patterns)
    assert all(any(re.fullmatch(p, n) for p in patterns) for n in names), names
    assert all(p.spec.node_name == node_name for p in result.pods)
    again = sorted(p.metadata.name or "" for p in schedule(objects).pods)
    other = sorted(p.metadata.name or "" for p in schedule(objects, seed=7).pods)
    assert names == again != other


def test_generated_names_never_collide_with_given_ones() -> None:
    objects = [node("a", "64", "256Gi")] + [
        decode({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"generateName": "w-" + "x" * 70},
                "spec": {"containers": [{"name": "c"}]}}) for _ in range(20)]
    got = pending(objects)
    assert len(set(got)) == 20
    assert all(len(n) == 63 and n.startswith("w-" + "x" * 56) for n in got)


def test_duplicates_keep_first_place_and_last_content() -> None:
    first = pod("p", "1")
    second = pod("p", "3")
    other = pod("q", "1")
    objects, dups = apply_order([first, other, second])
    assert [o.name for o in objects] == ["p", "q"]
    assert objects[0] is second
    assert [(d.first, d.later, d.ref) for d in dups] == [(0, 2, "Pod default/p")]
    result = schedule([node("a", "4"), first, other, second])
    assert [p.metadata.name for p in result.pods] == ["p", "q"]
    assert result.cluster.nodes["a"].requested["cpu"] == 4000


def test_duplicates_are_per_group_not_per_version() -> None:
    from dralab.api.base import UnknownObject

    a = decode({"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t"}})
    b = decode({"apiVersion": "example.com/v2", "kind": "Thing", "metadata": {"name": "t"}})
    c = decode({"apiVersion": "other.com/v1", "kind": "Thing", "metadata": {"name": "t"}})
    assert isinstance(a, UnknownObject)
    _, dups = apply_order([a, b, c])
    assert [(d.first, d.later) for d in dups] == [(0, 1)]


def test_finished_pods_hold_nothing_and_bound_pods_keep_their_node() -> None:
    done = pod("done", "4", node_name="a")
    assert done.raw is not None
    finished = decode({**done.raw, "status": {"phase": "Succeeded"}})
    objects = [node("a", "4"), finished, pod("run", "1", node_name="a"), pod("new", "3")]
    result = schedule(objects)
    assert [(p.pod.metadata.name, p.node) for p in result.placed] == [("new", "a")]
    assert result.cluster.nodes["a"].requested["cpu"] == 4000
    # The finished pod is still listed, unchanged, and was never a pending pod.
    assert [p.metadata.name for p in result.pods] == ["done", "run", "new"]
    assert result.pods[0].status.phase == "Succeeded"
    # While it runs, it holds its cpu and the new pod does not fit.
    assert not schedule([node("a", "4"), done, pod("run", "1", node_name="a"),
                         pod("new", "3")]).all_placed


def test_pods_being_deleted_are_not_scheduled() -> None:
    gone = pod("gone", "1")
    assert gone.raw is not None
    doc = {**gone.raw, "metadata": {**gone.raw["metadata"],
                                    "deletionTimestamp": "2026-11-20T08:00:00Z"}}
    assert pending([node("a"), decode(doc), pod("p", "1")]) == ["p"]


def test_finished_pods_release_their_claims() -> None:
    """The claim controller's part for a pod that is done: a shared claim it alone
    used is deallocated; a claim generated for it is deleted. Both GPUs come free."""
    from msgspec.structs import replace

    from dralab.api.base import OwnerReference
    from dralab.api.core import PodStatus

    from .dra.builders import claim, gpu_class, gpus
    from .dra.builders import node as dra_node
    from .dra.builders import pod as dra_pod

    pending = dra_pod("done", uid="u-done", claims={"gpu": "shared", "own": "done-own"})
    done = replace(pending, spec=replace(pending.spec, node_name="n1"),
                   status=PodStatus(phase="Succeeded"))
    shared = claim("shared", allocated=[("n1", "gpu-0")], on="n1", reserved_for=["u-done"])
    generated = claim("done-own", allocated=[("n1", "gpu-1")], on="n1", reserved_for=["u-done"])
    generated = replace(generated, metadata=replace(generated.metadata, owner_references=[
        OwnerReference(api_version="v1", kind="Pod", name="done", uid="u-done",
                       controller=True)]))
    result = schedule([gpu_class(), dra_node("n1"), gpus("n1", 2), shared, generated, done,
                       claim("two"), dra_pod("new", claims={"gpu": "two"})])
    claims = {c.metadata.name: c for c in result.claims}
    assert "done-own" not in claims
    assert claims["shared"].status.allocation is None
    assert claims["shared"].status.reserved_for == []
    assert [p.pod.metadata.name for p in result.placed] == ["new"]

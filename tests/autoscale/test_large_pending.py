"""``dralab autoscale`` on many pending pods: pod equivalence as Cluster Autoscaler's,
its estimation limiter (``--max-nodes-per-scaleup``), the Fleet-wide node cap, and the
estimator's work growing with pods plus nodes, not their product (issue 29)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from cputime import cpu_budget
from dralab.api.core import Pod
from dralab.autoscale import AutoscalerOptions, ClusterAutoscaler, cluster_objects
from dralab.autoscale.estimator import MAX_NODES_PER_SCALE_UP, estimate, max_nodes_reason
from dralab.autoscale.units import equivalence_key, pod_units
from dralab.cli.main import cli
from dralab.cluster import PodInfo
from dralab.fleet import parse_fleet
from dralab.fleet.spec import FleetSpecError
from dralab.scheduler import Scheduler, build_cluster

from .helpers import fleet, load

Doc = dict[str, Any]


def _pod(name: str, cpu: str, memory: str = "200000", owner: str | None = None,
         volumes: list[Doc] | None = None, labels: dict[str, str] | None = None,
         hostname: str | None = None, env: list[Doc] | None = None) -> Doc:
    container: Doc = {"name": "c", "image": "x",
                      "resources": {"requests": {"cpu": cpu, "memory": memory}}}
    if env is not None:
        container["env"] = env
    spec: Doc = {"containers": [container]}
    if volumes is not None:
        spec["volumes"] = volumes
    if hostname is not None:
        spec["hostname"] = hostname
    meta: Doc = {"name": name, "namespace": "default"}
    if owner is not None:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "ReplicationController",
                                    "name": owner, "uid": f"uid-{owner}",
                                    "controller": True}]
    if labels is not None:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def _groups(*docs: Doc) -> list[list[str]]:
    pods = [o for o in load(fleet("cpu"), *docs).objects if isinstance(o, Pod)]
    by_key: dict[Any, list[str]] = {}
    for p in pods:
        by_key.setdefault(equivalence_key(p), []).append(p.metadata.name or "")
    return sorted(by_key.values())


def test_equivalence_groups_as_cluster_autoscaler() -> None:
    # Ported from kubernetes/autoscaler cluster-autoscaler/core/scaleup/equivalence/
    # groups_test.go, TestGroupSchedulablePodsForNode (release-1.37, commit
    # 0e20a38557062d2b3cd6a23ec98640a9cc731826): pods of one controller with equal
    # specs group; projected volumes of different names do not part them, flex
    # volumes of different names do; p3 and p4 are alike apart from the controller.
    projected = {"projected": {"sources": [{"serviceAccountToken": {"path": "path"}}]}}
    flex = {"flexVolume": {"driver": "testDriver"}}
    docs = [
        _pod("p1", "1500m"),
        _pod("p2-1", "3"), _pod("p2-2", "3"),
        _pod("p3-1", "100m", owner="rc2"), _pod("p3-2", "100m", owner="rc2"),
        _pod("p4-1", "100m", owner="rc3", volumes=[{"name": "kube-api-access-nz94b",
                                                    **projected}]),
        _pod("p4-2", "100m", owner="rc3", volumes=[{"name": "kube-api-access-mo25i",
                                                    **projected}]),
        _pod("p5-1", "100m", owner="rc4", volumes=[{"name": "volume-nz94b", **flex}]),
        _pod("p5-2", "100m", owner="rc4", volumes=[{"name": "volume-mo25i", **flex}]),
    ]
    for doc in docs[1:3]:
        doc["metadata"]["ownerReferences"] = _pod("x", "1", owner="rc1")["metadata"][
            "ownerReferences"]
    assert _groups(*docs) == [["p1"], ["p2-1", "p2-2"], ["p3-1", "p3-2"],
                              ["p4-1", "p4-2"], ["p5-1"], ["p5-2"]]


def test_equivalence_ignores_hostname_and_env_but_not_labels() -> None:
    # CA's PodSpecSemanticallyEqual (utils/utils.go) drops hostname and env; labels are
    # compared (groups.go, match), so Indexed Job pods (their completion-index label)
    # are groups of their own, in CA as here.
    alike = [_pod(f"w-{i}", "1", owner="job", labels={"job-name": "w"}, hostname=f"w-{i}",
                  env=[{"name": "JOB_COMPLETION_INDEX", "value": str(i)}]) for i in range(3)]
    indexed = [_pod(f"x-{i}", "1", owner="job",
                    labels={"batch.kubernetes.io/job-completion-index": str(i)})
               for i in range(2)]
    assert _groups(*alike, *indexed) == [["w-0", "w-1", "w-2"], ["x-0"], ["x-1"]]


def test_equivalence_counts_raw_only_fields() -> None:
    # Topology spread lives in the raw spec only: pods differing there are not alike.
    a, b = _pod("a", "1", owner="rs"), _pod("b", "1", owner="rs")
    b["spec"]["topologySpreadConstraints"] = [{
        "maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
        "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"a": "b"}}}]
    assert _groups(a, b) == [["a"], ["b"]]


def _model(*docs: Doc, limit: int = MAX_NODES_PER_SCALE_UP
           ) -> tuple[ClusterAutoscaler, list[PodInfo]]:
    data = load(*docs)
    cluster, pending = build_cluster(cluster_objects(data))
    scheduler = Scheduler.build(cluster)
    result = scheduler.run(pending)
    waiting = [cluster.pods[f"default/{u.pod.metadata.name}"] for u in result.unplaced]
    options = AutoscalerOptions(max_nodes_per_scale_up=limit)
    return ClusterAutoscaler(scheduler, data.fleet, options), waiting


def _whole_node_pods(n: int) -> list[Doc]:
    # Each takes all but a little of an "ex" node's 16 CPUs: one pod per node.
    return [_pod(f"w-{i}", "15", "1Gi", owner="rs") for i in range(n)]


def test_limiter_caps_one_estimate_and_names_the_flag() -> None:
    # CA's thresholdBasedEstimationLimiter with the static threshold of
    # --max-nodes-per-scaleup (estimator/threshold_based_limiter.go): PermissionToAddNode
    # is refused once the estimate added that many nodes, and binpacking stops adding.
    model, pending = _model(fleet("ex"), *_whole_node_pods(4), limit=2)
    assert len(pending) == 4
    group = model.groups()["ex"]
    option = estimate(model.scheduler, model.templates(), group, pod_units(pending),
                      max_nodes=2)
    assert len(option.nodes) == 2 and option.pod_count == 2
    reason = max_nodes_reason(group, 2)
    assert reason == "ex: 2 nodes in one scale-up reached (--max-nodes-per-scaleup)"
    assert sorted(option.blocked.values()) == [reason, reason]
    assert option.at_max == set()  # not the group's max size: a later scale-up helps
    unlimited = estimate(model.scheduler, model.templates(), group, pod_units(pending))
    assert len(unlimited.nodes) == 4 and unlimited.blocked == {}


def test_limiter_splits_the_loop_into_scale_ups_of_at_most_the_cap() -> None:
    # CA scales up at most the cap per loop; the model's loop makes the scale-ups those
    # loops converge to: the same nodes for the same pods, in pieces of the cap.
    capped, pending = _model(fleet("ex"), *_whole_node_pods(4), limit=3)
    decisions = capped.loop(pending)
    assert [(u.pool, u.add) for u in decisions.scale_ups] == [("ex", 3), ("ex", 1)]
    assert decisions.pending == ()
    free, pending = _model(fleet("ex"), *_whole_node_pods(4))
    assert [(u.pool, u.add) for u in free.loop(pending).scale_ups] == [("ex", 4)]
    assert AutoscalerOptions().max_nodes_per_scale_up == 1000
    with pytest.raises(ValueError, match="max_nodes_per_scale_up"):
        AutoscalerOptions(max_nodes_per_scale_up=-1)


def test_limiter_does_not_hide_the_max_size() -> None:
    # At the group's max size the reason stays the max size, whatever the cap.
    model, pending = _model(fleet("ex", ex={"autoscaling": {"max": 2}}),
                            *_whole_node_pods(3), limit=2)
    decisions = model.loop(pending)
    assert [(u.pool, u.add) for u in decisions.scale_ups] == [("ex", 2)]
    assert [p.reason for p in decisions.pending] == ["ex: max size 2 reached"]


def _fleet_growing_to(total: int) -> Doc:
    # cpu: 2 nodes; h100 and l4 grow to the rest.
    return fleet("cpu", "h100", "l4", h100={"autoscaling": {"max": 2500}},
                 l4={"autoscaling": {"max": total - 2502}})


def test_fleet_may_grow_to_max_fleet_nodes_and_no_further() -> None:
    assert parse_fleet(_fleet_growing_to(5000), "f.yaml").spec.pools[2].autoscaling
    with pytest.raises(FleetSpecError) as caught:
        parse_fleet(_fleet_growing_to(5001), "f.yaml")
    assert str(caught.value) == ("f.yaml: spec.pools[2].autoscaling.max: the first 3 pools "
                                 "may grow to 5,001 nodes, more than 5,000 (MAX_FLEET_NODES)")


def test_autoscale_refuses_a_fleet_growing_past_the_limit() -> None:
    with cpu_budget(5.0):
        result = CliRunner().invoke(cli, ["autoscale", "-f", "-"],
                                    input=json.dumps(_fleet_growing_to(5001)))
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.startswith("error: ")
    assert result.stderr.endswith("spec.pools[2].autoscaling.max: the first 3 pools may "
                                  "grow to 5,001 nodes, more than 5,000 (MAX_FLEET_NODES)\n")


INDEXED = """apiVersion: dralab.dev/v1alpha1
kind: Fleet
metadata: {{name: t}}
spec:
  pools:
  - {{name: cpu, count: 1, cpu: "2", memory: 8Gi}}
  - name: p
    count: 0
    cpu: "4"
    memory: 16Gi
    autoscaling: {{min: 0, max: 600, pricePerHour: 1.0, provisioningDelay: 1m, priority: 1}}
---
apiVersion: batch/v1
kind: Job
metadata: {{name: j, namespace: default}}
spec:
  completionMode: Indexed
  parallelism: {n}
  completions: {n}
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: x
        resources: {{requests: {{cpu: "1", memory: 1Gi}}}}
"""


def test_distinct_indexed_pods_cost_linear_cpu() -> None:
    # 2,000 pods of an Indexed Job, each its own equivalence group, 500 new nodes: about
    # 2 CPU s; when each pod ran PreFilter and Filter on every node added before it
    # (the quadratic path, before this test) the same run took 24 CPU s.
    with cpu_budget(8.0):
        result = CliRunner().invoke(cli, ["autoscale", "-o", "json", "-f", "-"],
                                    input=INDEXED.format(n=2000))
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    # Two pods on the cpu node, four on each new 4-CPU node.
    assert [(u["pool"], u["add"], len(u["pods"])) for u in doc["scaleUp"]] == [
        ("p", 500, 1998)]
    assert doc["pending"] == []

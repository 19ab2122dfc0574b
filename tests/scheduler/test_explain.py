"""explain_pod / explain_claim: every rejecting plugin per node, nearest node, scores."""

from __future__ import annotations

from typing import Any

import pytest

from dralab.api.errors import InputError
from dralab.scheduler import PodTarget, explain_claim, explain_pod, explain_pods, parse_pod_target

from .builders import node, pod, toleration, workload


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


# --- errors, workloads, claims of pods -------------------------------------------------

def _dra_cluster() -> list[Any]:
    from .dra.builders import gpu_class, gpus
    from .dra.builders import node as dra_node

    return [gpu_class(), dra_node("n1"), gpus("n1", 2)]


def test_cel_runtime_error_is_explained_as_an_error() -> None:
    from .dra.builders import claim, request
    from .dra.builders import pod as dra_pod

    broken = claim("c", request(selectors=['device.attributes["gpu.example.com"].nosuch == 1']))
    explanation = explain_pod([*_dra_cluster(), broken, dra_pod("p", claims={"gpu": "c"})],
                              "p")
    assert explanation.node is None and explanation.error
    assert explanation.message.startswith(
        'SchedulerError: running "DynamicResources" filter plugin: claim default/c: '
        "selector #0")
    assert "CEL runtime error: no such key: nosuch" in explanation.message
    text = explanation.render()
    assert "nodes are available" not in text
    assert "The cycle ended in an error, not in \"does not fit\"" in text
    assert "A CEL runtime error comes from evaluating a selector" in text
    assert "Nearest node" not in text


def test_parse_pod_target() -> None:
    assert parse_pod_target("p") == PodTarget("Pod", "default", "p")
    assert parse_pod_target("p", "ml") == PodTarget("Pod", "ml", "p")
    assert parse_pod_target("ml/p") == PodTarget("Pod", "ml", "p")
    assert parse_pod_target("ml/p", "ml") == PodTarget("Pod", "ml", "p")
    assert parse_pod_target("deploy/web", "ml") == PodTarget("Deployment", "ml", "web")
    # Without a namespace option the older NAMESPACE/NAME reading is kept as a fallback.
    assert parse_pod_target("Job/train") == PodTarget("Job", "default", "train", "Job/train")
    assert parse_pod_target("sts/db").kind == "StatefulSet"
    assert parse_pod_target("cj/nightly").kind == "CronJob"
    with pytest.raises(InputError, match="differs from the namespace option"):
        parse_pod_target("ml/p", "other")
    with pytest.raises(InputError, match="expected NAME"):
        parse_pod_target("a/b/c")


def test_workload_pods_are_explained_together() -> None:
    objects = [node("a", "4"), workload("Deployment", "web", {"replicas": 3}, cpu="2")]
    explanation = explain_pods(objects, parse_pod_target("deployment/web"))
    assert explanation.title == "Deployment default/web"
    assert len(explanation.pods) == 3
    assert sum(p.node is not None for p in explanation.pods) == 2
    assert not explanation.all_placed
    assert explanation.render().startswith(
        "Deployment default/web: 3 pod(s), 2 scheduled, 1 not scheduled\n\nPod default/web-")


def test_cron_job_pods_through_their_job() -> None:
    cron = workload("CronJob", "nightly", {"schedule": "@hourly"}, cpu="1")
    explanation = explain_pods([node("a"), cron], parse_pod_target("cronjob/nightly"))
    (only,) = explanation.pods
    assert only.pod.startswith("default/nightly-") and only.node == "a"


def test_a_pod_in_a_namespace_named_like_a_type_wins() -> None:
    objects = [node("a"), pod("train", "1", namespace="job"),
               workload("Job", "train", {}, cpu="1")]
    explanation = explain_pods(objects, parse_pod_target("job/train"))
    assert explanation.title is None
    (only,) = explanation.pods
    assert only.pod == "job/train"
    explanation = explain_pods(objects, parse_pod_target("job/train", "default"))
    assert explanation.title == "Job default/train"


def test_unknown_workload() -> None:
    with pytest.raises(InputError, match="statefulset default/db not found"):
        explain_pods([node("a")], parse_pod_target("sts/db"))


def test_claim_by_pod_and_claim_name() -> None:
    from .dra.builders import pod as dra_pod
    from .dra.builders import template

    objects = [*_dra_cluster(), template("one"), dra_pod("p", templates={"gpu": "one"})]
    by_entry = explain_claim(objects, "p/gpu", namespace="default")
    assert by_entry.claim.startswith("default/p-gpu-")
    assert by_entry.origin == ('generated from template one for pod default/p '
                               '(spec.resourceClaims "gpu")')
    assert by_entry.allocated is not None and by_entry.allocated.allocated
    assert explain_claim(objects, "default/p/gpu") == by_entry
    # Without a namespace, NAMESPACE/NAME naming no claim falls back to POD/CLAIM.
    assert explain_claim(objects, "p/gpu") == by_entry
    by_name = explain_claim(objects, by_entry.claim)
    assert by_name.claim == by_entry.claim
    assert by_name.origin == 'generated for pod default/p (spec.resourceClaims "gpu")'
    missing = explain_claim([*_dra_cluster(), dra_pod("q", templates={"gpu": "none"})],
                            "default/q/gpu")
    assert missing.allocated is None
    assert missing.render().startswith(
        "ResourceClaim for pod default/q, claim gpu: not created\n"
        "  nothing generated yet from template none for pod default/q")

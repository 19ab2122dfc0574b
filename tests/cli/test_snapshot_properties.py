"""Property: no mix of workloads, pods and nodes -- named or generateName'd, owned or
not, with any status a dump may carry (or garbage there) -- makes `dralab schedule`
exit 70. Invalid input is exit 2; everything else schedules (0 or 1)."""

from __future__ import annotations

import json
from typing import Any

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dralab.cli.main import cli

NAMES = ["a", "web", "web-5d8f9c7b6", "db", "db-0", "db-1", "train", "train-1-x2k4p"]
KINDS = ["Job", "CronJob", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Pod"]
API = {"Job": "batch/v1", "CronJob": "batch/v1", "Pod": "v1", "Node": "v1"}
LABELS = [{}, {"app": "web"}, {"app": "db"}, {"app": "web", "pod-template-hash": "5d8f9c7b6"}]
JUNK = st.one_of(st.none(), st.integers(-3, 5), st.text(max_size=6), st.booleans(),
                 st.lists(st.integers(0, 3), max_size=2),
                 st.dictionaries(st.sampled_from(["a", "type", "status"]),
                                 st.sampled_from(["True", 1, "x"]), max_size=2))


@st.composite
def metadata(draw: st.DrawFn, kind: str) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    how = draw(st.sampled_from(["name", "name", "generateName", "both"]))
    if how in ("name", "both"):
        meta["name"] = draw(st.sampled_from(NAMES))
    if how in ("generateName", "both"):
        meta["generateName"] = draw(st.sampled_from(["gen-", "web-", "x" * 70 + "-"]))
    if kind != "Node" and draw(st.booleans()):
        meta["namespace"] = draw(st.sampled_from(["default", "ml"]))
    if draw(st.booleans()):
        meta["uid"] = draw(st.sampled_from(["u1", "u2", "u3"]))
    labels = draw(st.sampled_from(LABELS))
    if labels:
        meta["labels"] = labels
    if draw(st.integers(0, 3)) == 0:
        meta["creationTimestamp"] = draw(st.sampled_from(
            ["2026-11-20T08:00:00Z", "2025-03-01T12:00:00+02:00", "yesterday"]))
    if draw(st.integers(0, 5)) == 0:
        meta["deletionTimestamp"] = "2026-11-20T08:00:00Z"
    if kind == "Pod" and draw(st.integers(0, 3)) == 0:
        meta["finalizers"] = ["batch.kubernetes.io/job-tracking"]
    refs = draw(st.lists(st.fixed_dictionaries(
        {"apiVersion": st.sampled_from(["apps/v1", "batch/v1", "v1"]),
         "kind": st.sampled_from([*KINDS, "Node"]), "name": st.sampled_from(NAMES),
         "uid": st.sampled_from(["u1", "u2", "u3"])},
        optional={"controller": st.booleans()}), max_size=2))
    if refs:
        meta["ownerReferences"] = refs
    return meta


def container(draw: st.DrawFn) -> dict[str, Any]:
    return {"name": "c", "image": "i",
            "resources": {"requests": {"cpu": draw(st.sampled_from(["100m", "1", "3"]))}}}


@st.composite
def pod_template(draw: st.DrawFn, restart: str) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [container(draw)], "restartPolicy": restart}
    if draw(st.integers(0, 3)) == 0:
        spec["nodeSelector"] = {"role": "gpu"}
    return {"metadata": {"labels": draw(st.sampled_from(LABELS[1:]))}, "spec": spec}


def selector(draw: st.DrawFn, template: dict[str, Any]) -> dict[str, Any]:
    choice = draw(st.integers(0, 2))
    if choice == 0:
        return {"matchLabels": dict(template["metadata"]["labels"])}
    if choice == 1:
        return {"matchExpressions": [{"key": "app", "operator": "Exists"}]}
    return {"matchLabels": {"app": "other"}}


@st.composite
def workload(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from([*KINDS, "Node"]))
    doc: dict[str, Any] = {"apiVersion": API.get(kind, "apps/v1"), "kind": kind,
                           "metadata": draw(metadata(kind))}
    if kind == "Node":
        doc["status"] = {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "20"}}
        if draw(st.booleans()):
            doc["metadata"]["labels"] = {"role": "gpu"}
        return doc
    if kind == "Pod":
        doc["spec"] = {"containers": [container(draw)]}
        if draw(st.booleans()):
            doc["spec"]["nodeName"] = draw(st.sampled_from(["a", "gen-b2k4p", "missing"]))
        if draw(st.booleans()):
            doc["status"] = {"phase": draw(st.sampled_from(
                ["Pending", "Running", "Succeeded", "Failed"]))}
        if draw(st.integers(0, 3)) == 0:
            doc["metadata"]["annotations"] = {
                "batch.kubernetes.io/job-completion-index": draw(st.sampled_from(["0", "7",
                                                                                  "x"]))}
        return doc
    template = draw(pod_template("Never" if kind in ("Job", "CronJob") else "Always"))
    spec: dict[str, Any] = {}
    if kind == "Job":
        spec = {"template": template, "parallelism": draw(st.integers(0, 3))}
        if draw(st.booleans()):
            spec["completions"] = draw(st.integers(0, 4))
            if draw(st.booleans()):
                spec["completionMode"] = "Indexed"
        if draw(st.integers(0, 3)) == 0:
            spec["suspend"] = True
        doc["status"] = {k: draw(JUNK) for k in draw(st.lists(st.sampled_from(
            ["succeeded", "failed", "active", "completedIndexes", "uncountedTerminatedPods",
             "conditions"]), max_size=4, unique=True))}
        if draw(st.booleans()):
            doc["status"]["completedIndexes"] = draw(st.sampled_from(["0", "0-2,5", "9-1",
                                                                      ",", "1-"]))
            doc["status"]["conditions"] = [{"type": "Complete", "status": draw(
                st.sampled_from(["True", "False"]))}]
    elif kind == "CronJob":
        spec = {"schedule": draw(st.sampled_from(["@hourly", "30 2 * * *", "0 0 31 2 *"])),
                "jobTemplate": {"spec": {"template": template}}}
        if draw(st.booleans()):
            spec["concurrencyPolicy"] = draw(st.sampled_from(["Allow", "Forbid", "Replace"]))
        if draw(st.booleans()):
            doc["status"] = {"lastScheduleTime": draw(JUNK), "active": draw(JUNK)}
    else:
        spec = {"template": template, "selector": selector(draw, template)}
        if kind != "DaemonSet":
            spec["replicas"] = draw(st.integers(0, 3))
        if kind == "Deployment" and draw(st.booleans()):
            spec["strategy"] = draw(st.sampled_from([
                {"type": "Recreate"}, {"type": "RollingUpdate", "rollingUpdate": {
                    "maxSurge": draw(st.sampled_from([0, 2, "50%", "x%"]))}}]))
            spec["paused"] = draw(st.booleans())
        if kind == "StatefulSet" and draw(st.booleans()):
            spec["ordinals"] = {"start": draw(st.integers(0, 3))}
        if draw(st.booleans()):
            doc["status"] = {"replicas": draw(JUNK)}
    doc["spec"] = spec
    return doc


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(workload(), min_size=1, max_size=8),
       st.sampled_from(["yaml", "table"]), st.integers(0, 3))
def test_schedule_never_exits_70(docs: list[dict[str, Any]], output: str, seed: int) -> None:
    stdin = json.dumps(docs)
    result = CliRunner().invoke(cli, ["schedule", "-f", "-", "-o", output, "--seed",
                                      str(seed)], input=stdin)
    assert result.exit_code in (0, 1, 2), (result.exit_code, result.stderr, stdin)
    assert "internal error" not in result.stderr, (result.stderr, stdin)
    if result.exit_code == 2:
        assert result.stdout == ""


@settings(max_examples=50, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(workload(), min_size=1, max_size=6), st.booleans())
def test_explain_a_workload_never_exits_70(docs: list[dict[str, Any]],
                                           with_namespace: bool) -> None:
    target = next((d for d in docs if d["kind"] != "Node" and d["metadata"].get("name")),
                  None)
    kind, name = (target["kind"].lower(), target["metadata"]["name"]) if target else ("pod", "a")
    args = ["explain", "pod", f"{kind}/{name}", "-f", "-"]
    if with_namespace:
        args += ["-n", (target or {}).get("metadata", {}).get("namespace", "default")]
    result = CliRunner().invoke(cli, args, input=json.dumps(docs))
    assert result.exit_code in (0, 1, 2), (result.exit_code, result.stderr, docs)
    assert "internal error" not in result.stderr, (result.stderr, docs)

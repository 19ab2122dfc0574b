"""PodTopologySpread's default selector from real Services and controllers (issue 39).

Upstream (kubernetes v1.36.2, pkg/scheduler/framework/plugins/helper/spread.go,
DefaultSelector) merges the selectors of the Services of the pod's namespace that select it,
and adds its controlling ReplicationController's, ReplicaSet's or StatefulSet's selector, as
the listers find them; a controller the listers do not hold adds nothing. dralab's store keeps
those selectors (``ClusterState.service_selectors`` / ``controller_selectors``), filled by
``build_cluster`` from the input and from the ReplicaSets Deployments create.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from dralab.api.base import KubeObject
from dralab.api.codec import decode, encode
from dralab.api.core import Pod
from dralab.api.service import Service
from dralab.cli.main import cli
from dralab.cluster import ClusterState, PodInfo
from dralab.controllers.snapshotbuild import build_cluster
from dralab.scheduler import schedule
from dralab.scheduler.plugins.podtopologyspread_constraints import (
    SpreadSelector,
    default_selector,
)

from ..builders import node, placements, pod, workload


def service(name: str, selector: dict[str, str] | None, namespace: str = "default"
            ) -> KubeObject:
    spec: dict[str, Any] = {"ports": [{"port": 80, "targetPort": 8080}], "type": "ClusterIP"}
    if selector is not None:
        spec["selector"] = selector
    return decode({"apiVersion": "v1", "kind": "Service",
                   "metadata": {"name": name, "namespace": namespace}, "spec": spec})


def owned(obj: Pod, kind: str, name: str, api_version: str = "apps/v1") -> Pod:
    raw = obj.raw or {}
    ref = {"apiVersion": api_version, "kind": kind, "name": name, "uid": f"uid-{name}",
           "controller": True}
    out = decode({**raw, "metadata": {**raw["metadata"], "ownerReferences": [ref]}})
    assert isinstance(out, Pod)
    return out


def gpu_nodes(count: int) -> list[KubeObject]:
    return [node(f"n{i:02d}", "128", "1Ti", gpus=8) for i in range(count)]


def web_pods(count: int) -> list[Pod]:
    return [pod(f"p{i}", "100m", gpus=1, labels={"app": "web"}) for i in range(count)]


def per_node(objects: list[Any]) -> list[int]:
    return sorted(Counter(placements(schedule(objects)).values()).values())


# --- whole runs -------------------------------------------------------------------------

def test_bare_pods_a_service_selects_spread() -> None:
    """40 bare one-GPU pods on 10 eight-GPU nodes pack 8 by 8; with a Service selecting them
    they get the system default constraints (hostname maxSkew 3, zone maxSkew 5) and spread 4
    per node. A Service of another namespace, or selecting other pods, changes nothing."""
    pods = web_pods(40)
    assert per_node([*gpu_nodes(10), *pods]) == [8] * 5
    assert per_node([*gpu_nodes(10), service("web", {"app": "web"}), *pods]) == [4] * 10
    assert per_node([*gpu_nodes(10), service("web", {"app": "web"}, "other"), *pods]) == [8] * 5
    assert per_node([*gpu_nodes(10), service("db", {"app": "db"}), *pods]) == [8] * 5
    assert per_node([*gpu_nodes(10), service("external", None), *pods]) == [8] * 5


def test_a_replica_sets_pods_spread_when_the_replica_set_is_in_the_input() -> None:
    """Pods controlled by ReplicaSet web: with the ReplicaSet in the input (it owns the 40 pods
    and creates none) they spread; without it the owner adds no selector, as upstream when its
    lister does not find the ReplicaSet, and they pack like bare pods."""
    pods = [owned(p, "ReplicaSet", "web") for p in web_pods(40)]
    rs = workload("ReplicaSet", "web", {"replicas": 40}, template_labels={"app": "web"},
                  cpu="100m", gpus=1, metadata={"uid": "uid-web"})
    assert per_node([*gpu_nodes(10), rs, *pods]) == [4] * 10
    assert per_node([*gpu_nodes(10), *pods]) == [8] * 5


def test_schedule_reads_services_without_a_warning(tmp_path: Path) -> None:
    """`dralab schedule -f` takes a Service as a kind it uses (no 'does not use' warning) and
    its selector spreads the pods it selects."""
    docs = [encode(o) for o in (*gpu_nodes(2), service("web", {"app": "web"}), *web_pods(4))]
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    result = CliRunner().invoke(cli, ["schedule", "-f", str(path), "-o", "yaml"])
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    written = [d for d in yaml.safe_load_all(result.stdout) if d]
    items = [i for d in written for i in (d.get("items") or [d])]
    nodes = Counter(i["spec"].get("nodeName") for i in items if i.get("kind") == "Pod")
    assert nodes == Counter({"n00": 2, "n01": 2})


# --- the store --------------------------------------------------------------------------

def test_build_cluster_keeps_services_replica_sets_stateful_sets_and_created_ones() -> None:
    deploy = workload("Deployment", "d", {"replicas": 2}, cpu="100m")
    sts = workload("StatefulSet", "s", {"replicas": 1, "serviceName": "s"},
                   template_labels={"app": "s", "tier": "db"}, cpu="100m")
    sts_raw = sts.raw or {}
    sts = decode({**sts_raw, "spec": {**sts_raw["spec"], "selector": {
        "matchExpressions": [{"key": "app", "operator": "In", "values": ["s"]}]}}})
    rs = workload("ReplicaSet", "r", {"replicas": 0}, namespace="ml", cpu="100m")
    cluster, _ = build_cluster([deploy, sts, rs, service("web", {"app": "web"}),
                                service("headless", None), service("ml", {"a": "b"}, "ml")])
    assert cluster.service_selectors == {"default": {"web": {"app": "web"}},
                                         "ml": {"ml": {"a": "b"}}}
    selectors = dict(cluster.controller_selectors)
    assert selectors.pop(("StatefulSet", "default", "s")) == {
        "matchExpressions": [{"key": "app", "operator": "In", "values": ["s"]}]}
    assert selectors.pop(("ReplicaSet", "ml", "r")) == {"matchLabels": {"app": "r"}}
    # The Deployment's new ReplicaSet: its selector gains the pod-template-hash label.
    ((kind, namespace, name), created), = selectors.items()
    assert (kind, namespace) == ("ReplicaSet", "default") and name.startswith("d-")
    assert created == {"matchLabels": {"app": "d", "pod-template-hash": name[2:]}}
    placed_pods = [i for i in cluster.pods.values() if i.pod.metadata.owner_references]
    assert {i.pod.metadata.owner_references[0].name for i in placed_pods} == {name, "s"}


def test_selectors_are_undone_with_a_fork() -> None:
    cluster = ClusterState()
    cluster.set_service_selector("default", "web", {"app": "web"})
    cluster.set_controller_selector("ReplicaSet", "default", "rs", {"matchLabels": {"a": "1"}})
    with cluster.what_if():
        cluster.set_service_selector("default", "web", {"app": "other"})
        cluster.set_service_selector("ml", "new", {"x": "y"})
        cluster.set_controller_selector("ReplicaSet", "default", "rs", None)
        cluster.set_controller_selector("StatefulSet", "default", "s", {})
        cluster.set_controller_selector("ReplicaSet", "default", "rs", None, False)
        assert cluster.service_selectors == {"default": {"web": {"app": "other"}},
                                             "ml": {"new": {"x": "y"}}}
        assert dict(cluster.controller_selectors) == {("StatefulSet", "default", "s"): {}}
    assert cluster.service_selectors == {"default": {"web": {"app": "web"}}}
    assert dict(cluster.controller_selectors) == {
        ("ReplicaSet", "default", "rs"): {"matchLabels": {"a": "1"}}}
    with cluster.what_if():
        cluster.set_service_selector("default", "web", None)
        assert cluster.service_selectors == {}
    assert cluster.service_selectors == {"default": {"web": {"app": "web"}}}


# --- the selector -----------------------------------------------------------------------

def _requirements(selector: SpreadSelector) -> set[tuple[str, str, frozenset[str]]]:
    assert not selector.nothing
    return set(selector.requirements)


def _eq(key: str, value: str) -> tuple[str, str, frozenset[str]]:
    return (key, "In", frozenset({value}))


def test_default_selector_merges_services_and_adds_the_controllers_requirements() -> None:
    cluster = ClusterState()
    cluster.set_service_selector("default", "web", {"app": "web"})
    cluster.set_service_selector("default", "canary", {"track": "canary"})
    cluster.set_service_selector("default", "db", {"app": "db"})        # does not select it
    cluster.set_service_selector("other", "all", {"app": "web"})        # another namespace
    cluster.set_controller_selector("ReplicaSet", "default", "rs", {
        "matchExpressions": [{"key": "app", "operator": "Exists"}]})
    labels = {"app": "web", "track": "canary", "pod-template-hash": "abc"}
    bare = PodInfo(pod=pod("p", labels=labels))
    assert _requirements(default_selector(bare, cluster)) == {
        _eq("app", "web"), _eq("track", "canary")}
    in_rs = PodInfo(pod=owned(pod("p", labels=labels), "ReplicaSet", "rs"))
    assert _requirements(default_selector(in_rs, cluster)) == {
        _eq("app", "web"), _eq("track", "canary"), ("app", "Exists", frozenset())}


def test_default_selector_controllers_as_upstream_reads_them() -> None:
    """RC: a label map merged into the Services' labels; RS/StatefulSet of another apiVersion
    than apps/v1, one the store does not hold, or one whose selector is unset or does not parse:
    nothing added (an empty selector, so no default constraints)."""
    cluster = ClusterState()
    cluster.set_controller_selector("ReplicationController", "default", "rc", {"app": "web"})
    cluster.set_controller_selector("ReplicaSet", "default", "unset", None)
    cluster.set_controller_selector("ReplicaSet", "default", "bad", {
        "matchExpressions": [{"key": "app", "operator": "In"}]})
    cluster.set_controller_selector("StatefulSet", "default", "s", {"matchLabels": {"app": "s"}})
    base = pod("p", labels={"app": "web"})
    rc = PodInfo(pod=owned(base, "ReplicationController", "rc", "v1"))
    assert _requirements(default_selector(rc, cluster)) == {_eq("app", "web")}
    sts = PodInfo(pod=owned(base, "StatefulSet", "s"))
    assert _requirements(default_selector(sts, cluster)) == {_eq("app", "s")}
    for kind, name, api in (("ReplicaSet", "unset", "apps/v1"), ("ReplicaSet", "bad", "apps/v1"),
                            ("ReplicaSet", "missing", "apps/v1"),
                            ("StatefulSet", "s", "apps/v1beta2"),
                            ("ReplicationController", "rc", "apps/v1"),
                            ("Deployment", "d", "apps/v1")):
        info = PodInfo(pod=owned(base, kind, name, api))
        assert default_selector(info, cluster).empty, (kind, name, api)


def test_a_service_round_trips() -> None:
    svc = service("web", {"app": "web"})
    assert isinstance(svc, Service) and svc.spec.selector == {"app": "web"}
    assert encode(svc) == svc.raw


def test_validate_lists_a_service_as_not_checked(tmp_path: Path) -> None:
    """dralab reads a Service's selector but not the API server's rules for Services: `dralab
    validate` says it did not check one rather than calling it valid."""
    path = tmp_path / "svc.yaml"
    path.write_text(yaml.safe_dump(encode(service("Bad_Name", {"app": "web"}))))
    result = CliRunner().invoke(cli, ["validate", "-f", str(path)])
    assert result.exit_code == 0
    assert result.stdout == (f"{path} Service default/Bad_Name: not checked (kind read by "
                             "dralab, not validated)\nno object checked; 1 not checked\n")

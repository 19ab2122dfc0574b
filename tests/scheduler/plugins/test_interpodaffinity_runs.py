"""InterPodAffinity, NodePorts and ImageLocality in whole scheduling runs: the default
profile, workloads, messages, preemption."""

from __future__ import annotations

from collections import Counter
from typing import Any

from dralab.api.codec import decode
from dralab.api.core import Namespace, Node, Pod
from dralab.scheduler import schedule

from ..builders import node, placements, pod, workload

HOSTNAME = "kubernetes.io/hostname"


def _with(obj: Pod, *, name: str | None = None, node_name: str | None = None,
          priority: int | None = None, labels: dict[str, str] | None = None,
          affinity: dict[str, Any] | None = None, ports: list[int] | None = None) -> Pod:
    raw = obj.raw or {}
    meta = {**raw["metadata"], **({"name": name} if name else {})}
    if labels:
        meta["labels"] = {**(meta.get("labels") or {}), **labels}
    spec = {**raw["spec"]}
    if node_name:
        spec["nodeName"] = node_name
    if priority is not None:
        spec["priority"] = priority
    if affinity:
        spec["affinity"] = affinity
    if ports:
        spec["containers"] = [{**spec["containers"][0],
                               "ports": [{"containerPort": p, "hostPort": p} for p in ports]}]
    out = decode({**raw, "metadata": meta, "spec": spec})
    assert isinstance(out, Pod)
    return out


def _term(labels: dict[str, str], key: str = HOSTNAME, **more: Any) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": labels}, "topologyKey": key, **more}


def _required(kind: str, *terms: dict[str, Any]) -> dict[str, Any]:
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": list(terms)}}


def test_anti_affinity_deployment_one_replica_per_node_and_the_message() -> None:
    template_affinity = _required("podAntiAffinity", _term({"app": "web"}))
    deployment = workload("Deployment", "web", {"replicas": 4}, cpu="100m")
    raw = deployment.raw or {}
    spec = raw["spec"]
    template = {**spec["template"], "spec": {**spec["template"]["spec"],
                                             "affinity": template_affinity}}
    deployment = decode({**raw, "spec": {**spec, "template": template}})
    result = schedule([node("a", "8"), node("b", "16"), node("c", "32"), deployment])
    got = Counter(placements(result).values())
    assert got == Counter({"a": 1, "b": 1, "c": 1, None: 1})
    (left,) = result.unplaced
    assert left.message == (
        "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules. no new claims "
        "to deallocate, preemption: 0/3 nodes are available: 3 No preemption victims found for "
        "incoming pod.")


def test_affinity_follows_its_peer_and_a_pod_without_peer_is_unresolvable() -> None:
    db = pod("db", "100m", labels={"app": "db"})
    web = _with(pod("web", "100m"), affinity=_required("podAffinity", _term({"app": "db"})))
    orphan = _with(pod("orphan", "100m", labels={"app": "orphan"}),
                   affinity=_required("podAffinity", _term({"app": "missing"})))
    result = schedule([node("a", "8"), node("b", "16"), db, web, orphan])
    got = placements(result)
    assert got["web"] == got["db"] is not None
    assert got["orphan"] is None
    (left,) = result.unplaced
    assert left.message == (
        "0/2 nodes are available: 2 node(s) didn't match pod affinity rules. no new claims to "
        "deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for "
        "scheduling.")


def test_the_first_pod_of_a_group_matching_its_own_affinity_is_placed() -> None:
    group = [_with(pod(f"w{i}", "100m", labels={"app": "w"}),
                   affinity=_required("podAffinity", _term({"app": "w"}, "zone")))
             for i in range(3)]
    nodes = [node("a", "8", labels={"zone": "z1"}), node("b", "16", labels={"zone": "z2"})]
    got = placements(schedule([*nodes, *group]))
    assert len(set(got.values())) == 1 and None not in got.values()


def test_preemption_evicts_the_pod_anti_affinity_forbids() -> None:
    """One node; a low-priority pod labelled app=web holds it; a higher-priority pod with
    required anti-affinity to app=web evicts it (the dry run takes it out through RemovePod)."""
    victim = _with(pod("victim", "100m", labels={"app": "web"}), node_name="a", priority=0)
    high = _with(pod("high", "100m"), priority=100,
                 affinity=_required("podAntiAffinity", _term({"app": "web"})))
    result = schedule([node("a", "8"), victim, high])
    assert [e.pod.metadata.name for e in result.evicted] == ["victim"]
    assert placements(result)["high"] == "a"


def test_preemption_evicts_a_pod_whose_anti_affinity_forbids_the_preemptor() -> None:
    holder = _with(pod("holder", "100m"), node_name="a", priority=0,
                   affinity=_required("podAntiAffinity", _term({"app": "web"})))
    high = _with(pod("high", "100m", labels={"app": "web"}), priority=100)
    result = schedule([node("a", "8"), holder, high])
    assert [e.pod.metadata.name for e in result.evicted] == ["holder"]
    assert placements(result)["high"] == "a"


def test_namespace_selector_reads_the_namespace_objects() -> None:
    """A pod's anti-affinity through namespaceSelector team=a reaches pods of the namespaces
    labelled so (the Namespace objects given), not the others."""
    def namespace(name: str, team: str) -> Namespace:
        obj = decode({"apiVersion": "v1", "kind": "Namespace",
                      "metadata": {"name": name, "labels": {"team": team}}})
        assert isinstance(obj, Namespace)
        return obj

    def in_ns(obj: Pod, ns: str) -> Pod:
        raw = obj.raw or {}
        out = decode({**raw, "metadata": {**raw["metadata"], "namespace": ns}})
        assert isinstance(out, Pod)
        return out

    term = _term({"app": "web"}, namespaceSelector={"matchLabels": {"team": "a"}})
    web_a = in_ns(_with(pod("web", "100m", labels={"app": "web"}), node_name="a"), "ns-a")
    web_b = in_ns(_with(pod("web", "100m", labels={"app": "web"}), node_name="b"), "ns-b")
    new = _with(pod("new", "100m"), affinity=_required("podAntiAffinity", term))
    result = schedule([namespace("ns-a", "a"), namespace("ns-b", "b"), node("a", "32"),
                       node("b", "8"), web_a, web_b, new])
    assert placements(result)["new"] == "b"


def test_host_ports_conflict_and_sidecar_ports_count() -> None:
    agents = [_with(pod(f"agent-{i}", "100m"), ports=[8080]) for i in range(3)]
    result = schedule([node("a", "8"), node("b", "16"), *agents])
    assert Counter(placements(result).values()) == Counter({"a": 1, "b": 1, None: 1})
    (left,) = result.unplaced
    assert left.message.startswith("0/2 nodes are available: 2 node(s) didn't have free ports "
                                   "for the requested pod ports.")
    raw = pod("sidecar", "100m").raw or {}
    sidecar = decode({**raw, "spec": {**raw["spec"], "initContainers": [{
        "name": "proxy", "image": "envoy", "restartPolicy": "Always",
        "ports": [{"containerPort": 8080, "hostPort": 8080}]}]}})
    one = schedule([node("a", "8"), _with(pod("agent", "100m"), ports=[8080], node_name="a"),
                    sidecar])
    assert placements(one)["sidecar"] is None


def test_image_locality_prefers_the_node_holding_the_image() -> None:
    def image_node(name: str, cpu: str, images: list[tuple[str, int]]) -> Node:
        obj = decode({"apiVersion": "v1", "kind": "Node",
                      "metadata": {"name": name, "labels": {HOSTNAME: name}},
                      "status": {"allocatable": {"cpu": cpu, "memory": "32Gi", "pods": "110"},
                                 "images": [{"names": [n], "sizeBytes": s} for n, s in images]}})
        assert isinstance(obj, Node)
        return obj

    raw = pod("inference", "100m").raw or {}
    big = decode({**raw, "spec": {**raw["spec"], "containers": [{
        **raw["spec"]["containers"][0], "image": "nvcr.io/nim/llama:1.0"}]}})
    # The cold node has more room (NodeResourcesFit prefers it); the image outweighs that.
    cold = image_node("cold", "16", [])
    warm = image_node("warm", "8", [("nvcr.io/nim/llama:1.0", 30 * 1024 ** 3)])
    assert placements(schedule([cold, warm, big]))["inference"] == "warm"
    assert placements(schedule([cold, image_node("warm", "8", []), big]))["inference"] == "cold"

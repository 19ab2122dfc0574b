"""Builders shaped like upstream's scheduler test helpers (``st.MakePod``, ``st.MakeNode``,
noderesources' ``makeNode``), so ported table cases read like the Go ones.

Objects are documents decoded as loaded manifests are; nodes and pods go into a
``ClusterState`` so plugins see NodeInfos exactly as in a run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dralab.api.codec import decode
from dralab.api.core import Node, Pod
from dralab.cluster import ClusterState


def make_node(name: str, milli_cpu: int | None = None, memory: int | None = None,
              extended: Mapping[str, int] | None = None, *,
              labels: Mapping[str, str] | None = None,
              taints: Sequence[Mapping[str, str]] = (), pods: int = 110) -> Node:
    """A node; cpu in milli-cores, memory in bytes (noderesources_test makeNode)."""
    allocatable: dict[str, str] = {"pods": str(pods)}
    if milli_cpu is not None:
        allocatable["cpu"] = f"{milli_cpu}m"
    if memory is not None:
        allocatable["memory"] = str(memory)
    for key, value in (extended or {}).items():
        allocatable[key] = str(value)
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = [dict(t) for t in taints]
    obj = decode({"apiVersion": "v1", "kind": "Node",
                  "metadata": {"name": name, "labels": dict(labels or {})},
                  "spec": spec, "status": {"allocatable": allocatable,
                                           "capacity": allocatable}})
    assert isinstance(obj, Node)
    return obj


def make_pod(name: str = "", *, namespace: str = "default", node: str | None = None,
             labels: Mapping[str, str] | None = None,
             containers: Sequence[Mapping[str, str]] = (),
             spread: Sequence[Mapping[str, Any]] = (),
             node_selector: Mapping[str, str] | None = None,
             node_affinity_in: Mapping[str, Sequence[str]] | None = None,
             node_affinity_not_in: Mapping[str, Sequence[str]] | None = None,
             tolerations: Sequence[Mapping[str, str]] = (),
             owner: tuple[str, str] | None = None, uid: str | None = None,
             terminating: bool = False, nominated: str | None = None) -> Pod:
    """A pod; one container per entry of ``containers`` (its requests), as upstream's
    ``MakePod().Req(a).Req(b)`` adds one container per call."""
    meta: dict[str, Any] = {"name": name or "p", "namespace": namespace,
                            "uid": uid or f"uid-{name or 'p'}"}
    if labels:
        meta["labels"] = dict(labels)
    if owner:
        api = "v1" if owner[0] == "ReplicationController" else "apps/v1"
        meta["ownerReferences"] = [{"apiVersion": api, "kind": owner[0], "name": owner[1],
                                    "uid": f"uid-{owner[1]}", "controller": True}]
    if terminating:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    spec: dict[str, Any] = {"containers": [
        {"name": f"c{i}", "image": "pause", **({"resources": {"requests": dict(r)}} if r else {})}
        for i, r in enumerate(containers or [{}])]}
    if node:
        spec["nodeName"] = node
    if spread:
        spec["topologySpreadConstraints"] = [dict(c) for c in spread]
    if node_selector:
        spec["nodeSelector"] = dict(node_selector)
    terms: list[dict[str, Any]] = []
    for key, values in (node_affinity_in or {}).items():
        terms.append({"key": key, "operator": "In", "values": list(values)})
    for key, values in (node_affinity_not_in or {}).items():
        terms.append({"key": key, "operator": "NotIn", "values": list(values)})
    if terms:
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": terms}]}}}
    if tolerations:
        spec["tolerations"] = [dict(t) for t in tolerations]
    doc: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
    if nominated:
        doc["status"] = {"nominatedNodeName": nominated}
    obj = decode(doc)
    assert isinstance(obj, Pod)
    return obj


def cluster_of(nodes: Sequence[Node], pods: Sequence[Pod] = ()) -> ClusterState:
    """A store holding the nodes and the (placed) pods."""
    cluster = ClusterState()
    for node in nodes:
        cluster.add_node(node)
    for pod in pods:
        cluster.add_pod(pod)
    return cluster

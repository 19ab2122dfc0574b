"""Shared pieces of the volume plugins' ported tables: upstream's listers as a
ClusterState holding the objects, a node, a pod with PVC volumes, and a plugin call."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from dralab.api.codec import decode
from dralab.api.core import Node, Pod
from dralab.api.features import FeatureGates
from dralab.cluster import ClusterState, NodeInfo, PodInfo
from dralab.scheduler.framework import Code, CycleState, Handle, Status

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"


def pv_doc(name: str, labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "labels": labels or {}}, "spec": spec}


def pvc_doc(name: str, namespace: str = "default", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def sc_doc(name: str, mode: str | None = None, provisioner: str = "") -> dict[str, Any]:
    doc: dict[str, Any] = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                           "metadata": {"name": name}, "provisioner": provisioner}
    if mode is not None:
        doc["volumeBindingMode"] = mode
    return doc


def listers(*docs: dict[str, Any], nodes: Sequence[Node] = ()) -> ClusterState:
    cluster = ClusterState()
    for n in nodes:
        cluster.add_node(n)
    for doc in docs:
        obj = decode(doc)
        cluster.put_volume_object(obj)  # type: ignore[arg-type]
    return cluster


def make_node(name: str, labels: dict[str, str] | None = None) -> Node:
    obj = decode({"apiVersion": "v1", "kind": "Node",
                  "metadata": {"name": name, "labels": labels or {}},
                  "status": {"allocatable": {"cpu": "8", "pods": "110"}}})
    assert isinstance(obj, Node)
    return obj


def pod_with(name: str, *, claims: Sequence[str] = (), volumes: Sequence[dict[str, Any]] = (),
             node_name: str = "", namespace: str = "default", uid: str = "") -> Pod:
    """st.MakePod().Name(name).Namespace(namespace).PVC(claim)... with other volumes."""
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "pause"}],
                            "volumes": [*({"name": c, "persistentVolumeClaim": {"claimName": c}}
                                          for c in claims), *volumes]}
    if node_name:
        spec["nodeName"] = node_name
    obj = decode({"apiVersion": "v1", "kind": "Pod",
                  "metadata": {"name": name, "namespace": namespace, "uid": uid or name},
                  "spec": spec})
    assert isinstance(obj, Pod)
    return obj


def handle(cluster: ClusterState) -> Handle:
    return Handle(cluster, FeatureGates(), random.Random(0), "default-scheduler")


def node_info(cluster: ClusterState, node: Node) -> NodeInfo:
    if node.name not in cluster.nodes:
        cluster.add_node(node)
    return cluster.nodes[node.name]


def shape(status: Status | None) -> tuple[str, tuple[str, ...]] | None:
    """(code, reasons) as upstream's cmp.Diff compares statuses; None for Success (nil)."""
    if status is None or status.code == Code.SUCCESS:
        return None
    return status.code.label, tuple(status.reasons)


def run_pre_filter_filter(plugin: Any, cluster: ClusterState, pod: Pod, node: Node
                          ) -> tuple[Any, Any]:
    state = CycleState()
    info = PodInfo(pod)
    _, pre = plugin.pre_filter(state, info, cluster)
    got = plugin.filter(state, info, node_info(cluster, node))
    return shape(pre), shape(got)

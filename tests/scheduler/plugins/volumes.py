"""Builders for the volume plugins' tests: claims, volumes, classes and CSINodes as the
API server stores them, and pods that mount them."""

from __future__ import annotations

from typing import Any

from dralab.api.base import KubeObject
from dralab.api.codec import decode
from dralab.api.core import Pod

ZONE = "topology.kubernetes.io/zone"


def obj(doc: dict[str, Any]) -> KubeObject:
    return decode(doc)


def pvc(name: str, *, volume: str = "", sc: str | None = None, modes: tuple[str, ...] = (
        "ReadWriteOnce",), size: str = "1Gi", namespace: str = "default",
        phase: str | None = None) -> KubeObject:
    spec: dict[str, Any] = {"accessModes": list(modes),
                            "resources": {"requests": {"storage": size}}}
    if sc is not None:
        spec["storageClassName"] = sc
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    status: dict[str, Any] = {}
    if volume:
        spec["volumeName"] = volume
        metadata["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
        status["phase"] = "Bound"
    else:
        status["phase"] = "Pending"
    if phase is not None:
        status["phase"] = phase
    return obj({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": metadata,
                "spec": spec, "status": status})


def pv(name: str, *, claim: str | None = None, sc: str = "", size: str = "1Gi",
       modes: tuple[str, ...] = ("ReadWriteOnce",), nodes: tuple[str, ...] = (),
       labels: dict[str, str] | None = None, csi: tuple[str, str] | None = None,
       namespace: str = "default") -> KubeObject:
    spec: dict[str, Any] = {"capacity": {"storage": size}, "accessModes": list(modes),
                            "persistentVolumeReclaimPolicy": "Delete"}
    if sc:
        spec["storageClassName"] = sc
    if claim:
        spec["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": namespace,
                            "name": claim}
    if nodes:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [{
            "key": "kubernetes.io/hostname", "operator": "In", "values": list(nodes)}]}]}}
    if csi:
        spec["csi"] = {"driver": csi[0], "volumeHandle": csi[1]}
    else:
        spec["local"] = {"path": "/mnt/disks/" + name}
    return obj({"apiVersion": "v1", "kind": "PersistentVolume",
                "metadata": {"name": name, "labels": labels or {}}, "spec": spec,
                "status": {"phase": "Bound" if claim else "Available"}})


def storage_class(name: str, *, provisioner: str = "ebs.csi.aws.com",
                  mode: str = "WaitForFirstConsumer",
                  zones: tuple[str, ...] = ()) -> KubeObject:
    doc: dict[str, Any] = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                           "metadata": {"name": name}, "provisioner": provisioner,
                           "reclaimPolicy": "Delete", "volumeBindingMode": mode}
    if zones:
        doc["allowedTopologies"] = [{"matchLabelExpressions": [{"key": ZONE,
                                                                "values": list(zones)}]}]
    return obj(doc)


def csi_node(name: str, driver: str, count: int) -> KubeObject:
    return obj({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
                "metadata": {"name": name},
                "spec": {"drivers": [{"name": driver, "nodeID": name, "topologyKeys": [ZONE],
                                      "allocatable": {"count": count}}]}})


def volume_pod(name: str, *claims: str, node_name: str = "", cpu: str = "100m",
               volumes: list[dict[str, Any]] | None = None,
               namespace: str = "default") -> Pod:
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}],
        "volumes": [*({"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}}
                      for i, c in enumerate(claims)), *(volumes or [])]}
    if node_name:
        spec["nodeName"] = node_name
    doc: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod",
                           "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}"},
                           "spec": spec}
    if node_name:
        doc["status"] = {"phase": "Running"}
    made = decode(doc)
    assert isinstance(made, Pod)
    return made

"""The fixtures of upstream's NodeVolumeLimits tests, built as the objects they stand for.

kubernetes v1.36.2, pkg/scheduler/framework/plugins/nodevolumelimits/csi_test.go: the pods
of TestCSILimits and its listers (getFakeCSIPVLister, getFakeCSIPVCLister,
getFakeCSIStorageClassLister, buildFakeClientWithVALister, getNodeWithPodAndVolumeLimits)
as PersistentVolumes, claims, a StorageClass, VolumeAttachments and a CSINode in a
ClusterState. Upstream's pods are nameless in namespace ""; here each has the name of its
variable in namespace "default" (pods are keyed by name in dralab's store).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dralab.api.codec import decode
from dralab.api.core import Pod
from dralab.cluster import ClusterState

from .volumeupstream import listers, make_node

EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"
EBS_IN_TREE = "kubernetes.io/aws-ebs"
HOSTPATH_IN_TREE = "kubernetes.io/hostpath"
SC_NAME = "csi-sc"
NODE = "node-for-max-pd-test-1"

_EPHEMERAL: dict[str, Any] = {"ephemeral": {}}
_CONFIGMAP = {"name": "", "configMap": {}}
_SECRET = {"name": "", "secret": {}}
_EBS_INLINE = {"name": "", "awsElasticBlockStore": {"volumeID": "aws-inline1"}}


def _claim(name: str) -> dict[str, Any]:
    return {"name": name, "persistentVolumeClaim": {"claimName": name}}


# variable name -> (namespace, name, uid, volumes)
PODS: dict[str, tuple[str, str, str, list[dict[str, Any]]]] = {
    "runningPod": ("default", "runningPod", "", [_claim(f"csi-{EBS}-3")]),
    "pendingVolumePod": ("default", "pendingVolumePod", "", [_claim("csi-4")]),
    "unboundPVCPod2": ("default", "unboundPVCPod2", "", [_claim("csi-4")]),
    "missingPVPod": ("default", "missingPVPod", "", [_claim("csi-6")]),
    "noSCPVCPod": ("default", "noSCPVCPod", "", [_claim("csi-5")]),
    "gceTwoVolPod": ("default", "gceTwoVolPod", "", [_claim(f"csi-{GCE}-1"),
                                                     _claim(f"csi-{GCE}-2")]),
    "inTreeOneVolPod": ("default", "inTreeOneVolPod", "", [_claim(f"csi-{EBS_IN_TREE}-0")]),
    "inTreeTwoVolPod": ("default", "inTreeTwoVolPod", "", [_claim(f"csi-{EBS_IN_TREE}-1"),
                                                           _claim(f"csi-{EBS_IN_TREE}-2")]),
    "csiEBSOneVolPod": ("default", "csiEBSOneVolPod", "", [_claim(f"csi-{EBS}-0")]),
    "csiEBSTwoVolPod": ("default", "csiEBSTwoVolPod", "", [_claim(f"csi-{EBS}-1"),
                                                           _claim(f"csi-{EBS}-2")]),
    "inTreeNonMigratableOneVolPod": ("default", "inTreeNonMigratableOneVolPod", "",
                                     [_claim(f"csi-{HOSTPATH_IN_TREE}-0")]),
    "ephemeralVolumePod": ("test", "abc", "12345", [{"name": "xyz", **_EPHEMERAL}]),
    "ephemeralTwoVolumePod": ("test", "abc", "12345II", [{"name": "x", **_EPHEMERAL},
                                                         {"name": "y", **_EPHEMERAL}]),
    "inTreeInlineVolPod": ("default", "inTreeInlineVolPod", "", [_EBS_INLINE]),
    "inTreeInlineVolPodWithSameCSIVolumeID": (
        "default", "inTreeInlineVolPodWithSameCSIVolumeID", "",
        [{"name": "", "awsElasticBlockStore": {"volumeID": f"csi-{EBS}-1"}}]),
    "onlyConfigmapAndSecretVolPod": ("default", "onlyConfigmapAndSecretVolPod", "",
                                     [_CONFIGMAP, _SECRET]),
    "pvcPodWithConfigmapAndSecret": ("default", "pvcPodWithConfigmapAndSecret", "",
                                     [_CONFIGMAP, _SECRET,
                                      {"name": "", "persistentVolumeClaim": {
                                          "claimName": f"csi-{EBS}-0"}}]),
    # Upstream sets no UID on it (it is only ever the pod being scheduled).
    "ephemeralPodWithConfigmapAndSecret": ("test", "abc", "none",
                                           [_CONFIGMAP, _SECRET, {"name": "xyz", **_EPHEMERAL}]),
    "inlineMigratablePodWithConfigmapAndSecret": (
        "default", "inlineMigratablePodWithConfigmapAndSecret", "",
        [_CONFIGMAP, _SECRET, _EBS_INLINE]),
}


def pod(variable: str, node_name: str = "", name: str = "") -> Pod:
    """The pod of that variable (on ``node_name``; ``name``: a copy under another name)."""
    namespace, own_name, uid, volumes = PODS[variable]
    name = name or own_name
    uid = uid if name == own_name else name
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "pause"}],
                            "volumes": volumes}
    if node_name:
        spec["nodeName"] = node_name
    made = decode({"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"name": name, "namespace": namespace, "uid": uid or name},
                   "spec": spec})
    assert isinstance(made, Pod)
    return made


def ephemeral_claim(pod_variable: str, volume: str, owned: bool = True) -> dict[str, Any]:
    """ephemeralClaim / ephemeralClaimX / ephemeralClaimY (conflictingClaim: not owned)."""
    namespace, name, uid, _ = PODS[pod_variable]
    metadata: dict[str, Any] = {"name": f"{name}-{volume}", "namespace": namespace}
    if owned:
        metadata["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": name,
                                        "uid": uid, "controller": True}]
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": metadata,
            "spec": {"storageClassName": SC_NAME}}


def _pvs(volume_name: str, drivers: Sequence[str]) -> list[dict[str, Any]]:
    """getFakeCSIPVLister."""
    out = []
    for driver in drivers:
        for j in range(4):
            handle = f"{volume_name}-{driver}-{j}"
            if driver == EBS_IN_TREE:
                source: dict[str, Any] = {"awsElasticBlockStore": {"volumeID": handle}}
            elif driver == HOSTPATH_IN_TREE:
                source = {"hostPath": {"path": "/tmp"}}
            else:
                source = {"csi": {"driver": driver, "volumeHandle": handle}}
            out.append({"apiVersion": "v1", "kind": "PersistentVolume",
                        "metadata": {"name": handle}, "spec": source})
    return out


def _pvc(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def _pvcs(volume_name: str, drivers: Sequence[str]) -> list[dict[str, Any]]:
    """getFakeCSIPVCLister: bound claims of each driver's PVs, then -4 (unbound, with the
    class), -5 (no class) and -6 (bound to a PV that does not exist, with the class)."""
    out = [_pvc(f"{volume_name}-{driver}-{j}", volumeName=f"{volume_name}-{driver}-{j}")
           for driver in drivers for j in range(4)]
    out.append(_pvc(f"{volume_name}-4", storageClassName=SC_NAME))
    out.append(_pvc(f"{volume_name}-5"))
    out.append(_pvc(f"{volume_name}-6", storageClassName=SC_NAME,
                    volumeName="missing-in-action"))
    return out


def _volume_attachments(count: int, drivers: Sequence[str]) -> list[dict[str, Any]]:
    """buildFakeClientWithVALister."""
    return [{"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
             "metadata": {"name": f"va-{driver}-{j}"},
             "spec": {"nodeName": NODE, "attacher": driver,
                      "source": {"persistentVolumeName": f"csi-{driver}-{j}"}}}
            for driver in drivers for j in range(count)]


def csi_node(limit_source: str, limit: int, drivers: Sequence[str]) -> dict[str, Any] | None:
    """getNodeWithPodAndVolumeLimits' CSINode: every driver with the limit ("csinode"),
    every driver without one ("csinode-with-no-limit"), no driver ("no-csi-driver"), or
    none at all."""
    if limit_source not in ("csinode", "csinode-with-no-limit", "no-csi-driver"):
        return None
    entries = []
    if limit_source != "no-csi-driver":
        for driver in drivers:
            entry: dict[str, Any] = {"name": driver, "nodeID": NODE}
            if limit_source == "csinode":
                entry["allocatable"] = {"count": limit}
            entries.append(entry)
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": NODE},
            "spec": {"drivers": entries}}


def cluster(*, drivers: Sequence[str], limit_source: str = "", max_vols: int = 0,
            existing: Sequence[str] = (), extra_claims: Sequence[dict[str, Any]] = (),
            va_count: int = 0) -> ClusterState:
    """The listers of one TestCSILimits case and the node holding its existing pods."""
    docs = [*_pvs("csi", drivers), *_pvcs("csi", drivers), *extra_claims,
            {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
             "metadata": {"name": SC_NAME}, "provisioner": drivers[0]},
            *_volume_attachments(va_count, drivers)]
    node = csi_node(limit_source, max_vols, drivers)
    if node is not None:
        docs.append(node)
    made = listers(*docs, nodes=[make_node(NODE)])
    for variable in existing:
        made.add_pod(pod(variable, NODE))
    return made

"""What the volume plugins share: a pod's PersistentVolumeClaim volumes and their lookup in
the store, as kube-scheduler v1.36.2's volume plugins read them (PVC listers,
ephemeral.VolumeClaimName, storagehelpers.GetPersistentVolumeClaimClass).

Volumes are read from the pod's document (dralab's typed PodSpec keeps no volumes). A pod
without ``spec.volumes`` answers at once with an empty tuple, so pods without volumes
cost the volume plugins one dict lookup.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dralab.allocator.nodes import NodeSelectorError, compile_node_selector
from dralab.api.core import NodeSelector
from dralab.api.storage import PersistentVolume, PersistentVolumeClaim, StorageClass
from dralab.cluster import ClusterState, NodeInfo, PodInfo

__all__ = [
    "ANN_BIND_COMPLETED",
    "ClaimVolume",
    "NotFound",
    "NotOwned",
    "claim_class",
    "claim_volumes",
    "find_claim",
    "is_delay_binding",
    "node_selector_matches",
    "pod_volumes",
]

ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
_BETA_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
_DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"
_NO_VOLUMES: tuple[Mapping[str, Any], ...] = ()


class NotFound(Exception):
    """An object a volume names is not in the store; the message is the API server's
    ('persistentvolumeclaim "x" not found'); ``name`` is the missing object's."""

    def __init__(self, message: str, name: str = "") -> None:
        super().__init__(message)
        self.name = name


class NotOwned(Exception):
    """A generic ephemeral volume's claim exists but the pod does not control it."""


def _controlled_by(claim: PersistentVolumeClaim, pod: PodInfo) -> bool:
    uid = pod.pod.metadata.uid
    return any(ref.controller and ref.uid == uid and uid
               for ref in claim.metadata.owner_references)


class ClaimVolume:
    """One volume of a pod that uses a PVC: the claim's name and whether it is a generic
    ephemeral volume (its claim named ``<pod>-<volume>``)."""

    __slots__ = ("claim_name", "ephemeral", "volume")

    def __init__(self, claim_name: str, ephemeral: bool, volume: Mapping[str, Any]) -> None:
        self.claim_name = claim_name
        self.ephemeral = ephemeral
        self.volume = volume


def pod_volumes(pod: PodInfo) -> Sequence[Mapping[str, Any]]:
    """``spec.volumes`` of the pod's document (entries that are not maps left out)."""
    raw = pod.pod.raw
    spec = raw.get("spec") if isinstance(raw, dict) else None
    volumes = spec.get("volumes") if isinstance(spec, dict) else None
    if not volumes or not isinstance(volumes, list):
        return _NO_VOLUMES
    return tuple(v for v in volumes if isinstance(v, Mapping))


def claim_volumes(pod: PodInfo) -> tuple[ClaimVolume, ...]:
    """The pod's volumes that use a PVC, in order."""
    volumes = pod_volumes(pod)
    if not volumes:
        return ()
    out: list[ClaimVolume] = []
    for volume in volumes:
        source = volume.get("persistentVolumeClaim")
        if isinstance(source, Mapping):
            out.append(ClaimVolume(str(source.get("claimName") or ""), False, volume))
        elif isinstance(volume.get("ephemeral"), Mapping):
            out.append(ClaimVolume(f"{pod.pod.name}-{volume.get('name') or ''}", True, volume))
    return tuple(out)


def _pod_namespace(pod: PodInfo) -> str:
    return pod.pod.metadata.namespace or "default"


def find_claim(cluster: ClusterState, pod: PodInfo, volume: ClaimVolume
               ) -> PersistentVolumeClaim:
    """The volume's claim. For a generic ephemeral volume whose claim is not in the store,
    the claim the ephemeral volume controller would create from ``volumeClaimTemplate``
    (unbound; dralab runs no such controller, so a pod written in a file gets the claim a
    cluster would give it a moment after its creation). Raises NotFound, and NotOwned for an
    ephemeral volume's claim the pod does not control."""
    namespace = _pod_namespace(pod)
    claim = cluster.volume_object("PersistentVolumeClaim", volume.claim_name, namespace)
    if isinstance(claim, PersistentVolumeClaim):
        if volume.ephemeral and not _controlled_by(claim, pod):
            # ephemeral.VolumeIsForPod
            raise NotOwned(f"PVC {namespace}/{claim.name} was not created for pod "
                           f"{namespace}/{pod.pod.name} (pod is not owner)")
        return claim
    if volume.ephemeral:
        made = _ephemeral_claim(pod, volume)
        if made is not None:
            return made
    raise NotFound(f'persistentvolumeclaim "{volume.claim_name}" not found', volume.claim_name)


def _ephemeral_claim(pod: PodInfo, volume: ClaimVolume) -> PersistentVolumeClaim | None:
    # Imported here: only pods with ephemeral volumes whose claim is missing need it.
    from dralab.api.codec import DecodeError, decode

    ephemeral = volume.volume.get("ephemeral")
    template = ephemeral.get("volumeClaimTemplate") if isinstance(ephemeral, Mapping) else None
    if not isinstance(template, Mapping):
        return None
    metadata = template.get("metadata")
    document = {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {**(metadata if isinstance(metadata, Mapping) else {}),
                     "name": volume.claim_name, "namespace": _pod_namespace(pod)},
        "spec": template.get("spec") if isinstance(template.get("spec"), Mapping) else {},
    }
    try:
        claim = decode(document)
    except DecodeError:
        return None
    return claim if isinstance(claim, PersistentVolumeClaim) else None


def find_volume(cluster: ClusterState, name: str) -> PersistentVolume:
    found = cluster.volume_object("PersistentVolume", name)
    if isinstance(found, PersistentVolume):
        return found
    raise NotFound(f'persistentvolume "{name}" not found', name)


def find_class(cluster: ClusterState, name: str) -> StorageClass:
    found = cluster.volume_object("StorageClass", name)
    if isinstance(found, StorageClass):
        return found
    raise NotFound(f'storageclass.storage.k8s.io "{name}" not found', name)


def claim_class(cluster: ClusterState, claim: PersistentVolumeClaim) -> str:
    """The claim's class name: ``spec.storageClassName``, else the beta annotation, else
    (unset, as a claim written in a file may be) the cluster's default StorageClass, which
    the DefaultStorageClass admission plugin would have written on create."""
    if claim.spec.storage_class_name is not None:
        return claim.spec.storage_class_name
    annotated = claim.metadata.annotations.get(_BETA_CLASS_ANNOTATION)
    if annotated is not None:
        return annotated
    return default_class(cluster)


def default_class(cluster: ClusterState) -> str:
    """The StorageClass annotated as the default (the newest by creation time, then name,
    when several are, as the admission plugin chooses), else ''."""
    best: tuple[str, str] | None = None
    for kind, _, name in cluster.volume_keys():
        if kind != "StorageClass":
            continue
        sc = cluster.volume_object(kind, name)
        if sc is None or sc.metadata.annotations.get(_DEFAULT_CLASS_ANNOTATION) != "true":
            continue
        rank = (sc.metadata.creation_timestamp or "", name)
        if best is None or rank > best:
            best = rank
    return best[1] if best is not None else ""


def is_delay_binding(cluster: ClusterState, claim: PersistentVolumeClaim) -> bool:
    """volume.IsDelayBindingMode: the claim's class binds WaitForFirstConsumer (a claim
    without class, or whose class is missing, binds immediately)."""
    name = claim_class(cluster, claim)
    if not name:
        return False
    found = cluster.volume_object("StorageClass", name)
    return isinstance(found, StorageClass) and found.binding_mode == "WaitForFirstConsumer"


def node_selector_matches(selector: NodeSelector | None, node: NodeInfo) -> bool:
    """A PV's ``nodeAffinity.required`` against the node (none: every node; a selector
    the API would refuse: no node, as CheckNodeAffinity's parse error fails it)."""
    if selector is None:
        return True
    try:
        return compile_node_selector(selector).matches(node.view)
    except NodeSelectorError:
        return False

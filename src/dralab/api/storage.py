"""The volume kinds kube-scheduler's volume plugins read: core/v1 PersistentVolumeClaim and
PersistentVolume, storage.k8s.io/v1 StorageClass, CSINode, CSIDriver and VolumeAttachment.

Only the fields the scheduler reads are typed (access modes, the claim's class and bound
volume, the volume's node affinity, class and CSI driver, the class's binding mode and
allowed topologies, CSINode's per-driver attach limit, a CSIDriver's
preventPodSchedulingIfMissing, a VolumeAttachment's attacher, node and PersistentVolume).
Everything else (capacity, status conditions, parameters, ...) is carried in ``raw`` and
written back unchanged.
"""

from __future__ import annotations

from typing import ClassVar

import msgspec

from .base import KubeObject, Spec
from .core import NodeSelector

__all__ = [
    "CSIDriver",
    "CSIDriverSpec",
    "CSINode",
    "CSINodeDriver",
    "CSINodeSpec",
    "CSIPersistentVolumeSource",
    "ObjectReference",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "PersistentVolumeClaimSpec",
    "PersistentVolumeClaimStatus",
    "PersistentVolumeSpec",
    "StorageClass",
    "TopologySelectorLabelRequirement",
    "TopologySelectorTerm",
    "VolumeAttachment",
    "VolumeAttachmentSource",
    "VolumeAttachmentSpec",
    "VolumeNodeAffinity",
    "VolumeNodeResources",
]


class PersistentVolumeClaimSpec(Spec, frozen=True):
    access_modes: list[str] = []
    # None: the cluster's default class (the admission plugin writes it on create);
    # "": no class (binds only to volumes without a class).
    storage_class_name: str | None = None
    volume_name: str = ""


class PersistentVolumeClaimStatus(Spec, frozen=True):
    phase: str = ""


class PersistentVolumeClaim(KubeObject, frozen=True):
    API_VERSION: ClassVar[str] = "v1"
    KIND: ClassVar[str] = "PersistentVolumeClaim"
    NAMESPACED: ClassVar[bool] = True

    spec: PersistentVolumeClaimSpec = PersistentVolumeClaimSpec()
    status: PersistentVolumeClaimStatus = PersistentVolumeClaimStatus()


class ObjectReference(Spec, frozen=True):
    namespace: str = ""
    name: str = ""
    uid: str = ""


class VolumeNodeAffinity(Spec, frozen=True):
    required: NodeSelector | None = None


class CSIPersistentVolumeSource(Spec, frozen=True):
    driver: str = ""
    volume_handle: str = ""


class PersistentVolumeSpec(Spec, frozen=True):
    access_modes: list[str] = []
    claim_ref: ObjectReference | None = None
    node_affinity: VolumeNodeAffinity | None = None
    storage_class_name: str = ""
    csi: CSIPersistentVolumeSource | None = None


class PersistentVolume(KubeObject, frozen=True):
    API_VERSION: ClassVar[str] = "v1"
    KIND: ClassVar[str] = "PersistentVolume"

    spec: PersistentVolumeSpec = PersistentVolumeSpec()


class TopologySelectorLabelRequirement(Spec, frozen=True):
    key: str = ""
    values: list[str] = []


class TopologySelectorTerm(Spec, frozen=True):
    match_label_expressions: list[TopologySelectorLabelRequirement] = []


class StorageClass(KubeObject, frozen=True):
    API_VERSION: ClassVar[str] = "storage.k8s.io/v1"
    KIND: ClassVar[str] = "StorageClass"

    provisioner: str = ""
    # None: Immediate (the API server's default).
    volume_binding_mode: str | None = None
    allowed_topologies: list[TopologySelectorTerm] = []

    @property
    def binding_mode(self) -> str:
        return self.volume_binding_mode or "Immediate"


class VolumeNodeResources(Spec, frozen=True):
    count: int | None = None


class CSINodeDriver(Spec, frozen=True):
    name: str = ""
    node_id: str = msgspec.field(default="", name="nodeID")
    topology_keys: list[str] = []
    allocatable: VolumeNodeResources | None = None


class CSINodeSpec(Spec, frozen=True):
    drivers: list[CSINodeDriver] = []


class CSINode(KubeObject, frozen=True):
    """Named as its node; ``spec.drivers[].allocatable.count`` caps the driver's volumes."""

    API_VERSION: ClassVar[str] = "storage.k8s.io/v1"
    KIND: ClassVar[str] = "CSINode"

    spec: CSINodeSpec = CSINodeSpec()


class VolumeAttachmentSource(Spec, frozen=True):
    # None: an inline volume's attachment (inlineVolumeSpec, kept in raw).
    persistent_volume_name: str | None = None


class VolumeAttachmentSpec(Spec, frozen=True):
    attacher: str = ""
    node_name: str = ""
    source: VolumeAttachmentSource = VolumeAttachmentSource()


class VolumeAttachment(KubeObject, frozen=True):
    """A CSI volume attached (or being attached) to a node: NodeVolumeLimits counts it
    against the attacher's limit on ``spec.nodeName`` even when no pod there uses it."""

    API_VERSION: ClassVar[str] = "storage.k8s.io/v1"
    KIND: ClassVar[str] = "VolumeAttachment"

    spec: VolumeAttachmentSpec = VolumeAttachmentSpec()


class CSIDriverSpec(Spec, frozen=True):
    # Gate VolumeLimitScaling (alpha): the API server drops it while the gate is off.
    prevent_pod_scheduling_if_missing: bool | None = None


class CSIDriver(KubeObject, frozen=True):
    """Named as its driver. Only ``spec.preventPodSchedulingIfMissing`` is read
    (NodeVolumeLimits with VolumeLimitScaling); the rest round-trips."""

    API_VERSION: ClassVar[str] = "storage.k8s.io/v1"
    KIND: ClassVar[str] = "CSIDriver"

    spec: CSIDriverSpec = CSIDriverSpec()

"""NodeVolumeLimits' queueing-hint decisions, as kube-scheduler v1.36.2's csi.go answers
them (isSchedulableAfterPodDeleted, isSchedulableAfterPVCAdded,
isSchedulableAfterVolumeAttachmentDeleted, isSchedulableAfterCSINodeUpdated): True for
Queue, False for QueueSkip.

dralab's queue uses the pod-deleted decision as far as its event tells (a pod that was on
no node frees nothing; the deleted pod's volumes are not in the event). Its store raises no
events for claims, CSINodes or VolumeAttachments, so the other three decide nothing in a
run yet; they are what a store raising those events would ask.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dralab.api.core import Pod
from dralab.api.storage import CSINode, PersistentVolumeClaim, VolumeAttachment
from dralab.cluster import PodInfo

from .nodevolumelimits_migration import TranslationError, inline_plugin, translate_source
from .volumeclaims import pod_volumes

__all__ = ["added_claim_may_help", "csi_node_update_may_help", "deleted_attachment_may_help",
           "deleted_pod_may_help"]


def _raw_volumes(pod: Pod) -> list[Mapping[str, Any]]:
    raw = pod.raw if isinstance(pod.raw, dict) else {}
    spec = raw.get("spec")
    volumes = spec.get("volumes") if isinstance(spec, dict) else None
    return [v for v in volumes or () if isinstance(v, Mapping)]


def deleted_pod_may_help(deleted: Pod) -> bool:
    """A deleted pod that was scheduled (or nominated) and used a claim or an inline volume
    a CSI driver took over may have freed an attach slot."""
    volumes = _raw_volumes(deleted)
    if not volumes:
        return False
    raw = deleted.raw if isinstance(deleted.raw, dict) else {}
    status = raw.get("status")
    nominated = status.get("nominatedNodeName") if isinstance(status, dict) else None
    if not deleted.spec.node_name and not nominated:
        return False
    return any(isinstance(v.get("persistentVolumeClaim"), Mapping)
               or isinstance(v.get("ephemeral"), Mapping) or inline_plugin(v)
               for v in volumes)


def added_claim_may_help(pod: PodInfo, claim: PersistentVolumeClaim) -> bool:
    """A claim the pod uses (by name, or as its generic ephemeral volume's) was created."""
    if (claim.metadata.namespace or "default") != (pod.pod.metadata.namespace or "default"):
        return False
    for volume in pod_volumes(pod):
        source = volume.get("persistentVolumeClaim")
        if isinstance(source, Mapping):
            name = str(source.get("claimName") or "")
        elif isinstance(volume.get("ephemeral"), Mapping):
            name = f"{pod.pod.name}-{volume.get('name') or ''}"
        else:
            continue
        if name == claim.name:
            return True
    return False


def deleted_attachment_may_help(pod: PodInfo, attachment: VolumeAttachment) -> bool:
    """Any PVC volume may have been the detached one; an inline volume a CSI driver took
    over only when that driver is the attachment's attacher (a volume that does not
    translate: queue, as upstream does on its error)."""
    for volume in pod_volumes(pod):
        if isinstance(volume.get("persistentVolumeClaim"), Mapping):
            return True
        if not inline_plugin(volume):
            continue
        try:
            translated = translate_source(volume)
        except TranslationError:
            return True
        if translated is not None and translated[0] == attachment.spec.attacher:
            return True
    return False


def _limits(csi_node: CSINode) -> dict[str, int]:
    return {d.name: (d.allocatable.count or 0) if d.allocatable is not None else 0
            for d in csi_node.spec.drivers}


def csi_node_update_may_help(old: CSINode, new: CSINode) -> bool:
    """A driver's attach limit went up (a driver without a count reads as 0)."""
    before = _limits(old)
    return any(limit > before.get(driver, 0) for driver, limit in _limits(new).items())

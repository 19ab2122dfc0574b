"""Karpenter's view of a local or hostPath PersistentVolume while it provisions.

As Karpenter's volume topology (sigs.k8s.io/karpenter
pkg/controllers/provisioning/scheduling/volumetopology.go,
getPersistentVolumeRequirements): the ``kubernetes.io/hostname`` requirements of a
Local or HostPath volume's node affinity are ignored, since a new node never has the
hostname the volume names. Karpenter therefore launches a node for such a pod; whether
kube-scheduler then binds the pod there is the scheduler's to decide (it will not: the
volume's affinity still names another node), so the pod stays pending on the real
cluster.

Karpenter also refuses, before it provisions, a pod whose claim is bound to a
PersistentVolume being deleted (ValidatePersistentVolumeClaims' validateVolume), which
kube-scheduler would bind it to: ``invalid_volume_units``. Its other checks there (a
missing, Lost, deleting or unbound Immediate claim, a missing StorageClass) are
kube-scheduler's VolumeBinding's too, which the model's estimates run.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from dralab.api.core import NodeSelector, NodeSelectorTerm
from dralab.api.storage import PersistentVolume, PersistentVolumeClaim
from dralab.cluster import ClusterState
from dralab.cluster.records import raw_spec_field
from dralab.scheduler.plugins.volumeclaims import claim_volumes

from .units import PodUnit

__all__ = ["DELETING_VOLUME", "HOSTNAME", "ignore_local_hostname_affinity",
           "invalid_volume_units"]

# Karpenter's error for a claim bound to a volume being deleted (validateVolume).
DELETING_VOLUME = "failed to validate pvc, persistentvolume is being deleted"

HOSTNAME = "kubernetes.io/hostname"


def _without_hostname(pv: PersistentVolume) -> PersistentVolume | None:
    """``pv`` with its hostname requirements dropped, or None when it has none to drop
    (or is neither a Local nor a HostPath volume)."""
    affinity = pv.spec.node_affinity
    if affinity is None or affinity.required is None:
        return None
    if raw_spec_field(pv, "local") is None and raw_spec_field(pv, "hostPath") is None:
        return None
    terms = affinity.required.node_selector_terms
    kept = [NodeSelectorTerm(match_expressions=[r for r in t.match_expressions
                                                if r.key != HOSTNAME],
                             match_fields=t.match_fields) for t in terms]
    if kept == terms:
        return None
    # A term that held only hostname requirements is, without them, an unconstrained
    # alternative for Karpenter (terms are ORed): the volume then pins nothing.
    if any(not t.match_expressions and not t.match_fields for t in kept):
        return msgspec.structs.replace(pv, spec=msgspec.structs.replace(
            pv.spec, node_affinity=None))
    required = NodeSelector(node_selector_terms=kept)
    return msgspec.structs.replace(pv, spec=msgspec.structs.replace(
        pv.spec, node_affinity=msgspec.structs.replace(affinity, required=required)))


def ignore_local_hostname_affinity(cluster: ClusterState) -> None:
    """Within a fork of ``cluster``: its Local and HostPath PersistentVolumes as
    Karpenter sees them when it provisions (the fork's revert puts them back)."""
    if not cluster.has_volume_objects:
        return
    for kind, namespace, name in cluster.volume_keys():
        if kind != PersistentVolume.KIND:
            continue
        pv = cluster.volume_object(kind, name, namespace)
        if isinstance(pv, PersistentVolume):
            seen = _without_hostname(pv)
            if seen is not None:
                cluster.put_volume_object(seen)


def _bound_to_deleting_volume(cluster: ClusterState, unit: PodUnit) -> bool:
    for info in unit.pods:
        for volume in claim_volumes(info):
            claim = cluster.volume_object(PersistentVolumeClaim.KIND, volume.claim_name,
                                          info.pod.metadata.namespace or "default")
            if not isinstance(claim, PersistentVolumeClaim) or not claim.spec.volume_name:
                continue
            pv = cluster.volume_object(PersistentVolume.KIND, claim.spec.volume_name)
            if isinstance(pv, PersistentVolume) and pv.metadata.deletion_timestamp:
                return True
    return False


def invalid_volume_units(cluster: ClusterState, units: Sequence[PodUnit]) -> dict[str, str]:
    """Per unit Karpenter does not provision for because of its volumes, why."""
    if not cluster.has_volume_objects:
        return {}
    return {u.name: DELETING_VOLUME for u in units if _bound_to_deleting_volume(cluster, u)}

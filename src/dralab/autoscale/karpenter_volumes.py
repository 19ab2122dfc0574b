"""Karpenter's view of a local or hostPath PersistentVolume while it provisions.

As Karpenter's volume topology (sigs.k8s.io/karpenter
pkg/controllers/provisioning/scheduling/volumetopology.go,
getPersistentVolumeRequirements): the ``kubernetes.io/hostname`` requirements of a
Local or HostPath volume's node affinity are ignored, since a new node never has the
hostname the volume names. Karpenter therefore launches a node for such a pod; whether
kube-scheduler then binds the pod there is the scheduler's to decide (it will not: the
volume's affinity still names another node), so the pod stays pending on the real
cluster.
"""

from __future__ import annotations

import msgspec

from dralab.api.core import NodeSelector, NodeSelectorTerm
from dralab.api.storage import PersistentVolume
from dralab.cluster import ClusterState
from dralab.cluster.records import raw_spec_field

__all__ = ["HOSTNAME", "ignore_local_hostname_affinity"]

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

"""NodeVolumeLimits (PreFilter, Filter), as kube-scheduler v1.36.2's CSI volume limits
(pkg/scheduler/framework/plugins/nodevolumelimits/csi.go).

A pod's CSI volumes are its PVC volumes: a bound claim counts its PersistentVolume's
``spec.csi`` (driver, volumeHandle), an unbound one its StorageClass's provisioner with
the claim's namespace and name as the handle. A node whose CSINode gives a driver
``allocatable.count`` fails, Unschedulable, ``node(s) exceed max volume count`` when the
volumes its pods hold of that driver (each counted once) plus the pod's new ones exceed
it. A node without a CSINode, or without counts, passes. Not modelled: in-tree volumes
migrated to CSI (CSI translation), VolumeAttachment objects, and the alpha
VolumeLimitScaling check that the driver is installed.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from dralab.api.storage import CSINode, PersistentVolume, PersistentVolumeClaim, StorageClass
from dralab.cluster import ClusterState, NodeInfo, PodInfo
from dralab.cluster.events import NodeAdded, PodForgotten, PodRemoved

from ..framework import CycleState, Handle, PreFilterResult, Status
from ..hints import EventHint
from .volumeclaims import NotFound, NotOwned, claim_class, claim_volumes, find_claim

__all__ = ["ERR_REASON_MAX_VOLUME_COUNT", "NAME", "NodeVolumeLimits", "csi_volumes"]

NAME = "NodeVolumeLimits"
ERR_REASON_MAX_VOLUME_COUNT = "node(s) exceed max volume count"
_PRE_FILTER_KEY = "PreFilter" + NAME
_SUCCESS = Status.success()
_SKIP = Status.skip(NAME)
_HINTS = (EventHint((PodRemoved, PodForgotten)), EventHint((NodeAdded,)))
_EXCEEDED = Status.unschedulable(NAME, ERR_REASON_MAX_VOLUME_COUNT)


def _driver_info(cluster: ClusterState, claim: PersistentVolumeClaim) -> tuple[str, str]:
    """getCSIDriverInfo: (driver, handle) of a claim; ('', '') when not a CSI volume."""
    if claim.spec.volume_name:
        pv = cluster.volume_object("PersistentVolume", claim.spec.volume_name)
        if isinstance(pv, PersistentVolume) and pv.spec.csi is not None:
            return pv.spec.csi.driver, pv.spec.csi.volume_handle
        return "", ""
    class_name = claim_class(cluster, claim)
    sc = cluster.volume_object("StorageClass", class_name) if class_name else None
    if not isinstance(sc, StorageClass) or not sc.provisioner:
        return "", ""
    # getCSIDriverInfoFromSC: a placeholder handle unique to the claim.
    return sc.provisioner, f"{claim.namespace or 'default'}-{claim.name}"


def csi_volumes(cluster: ClusterState, pod: PodInfo, new_pod: bool) -> dict[str, str]:
    """filterAttachableVolumes: unique volume name (driver/handle) -> driver. For the pod
    being scheduled a missing claim raises NotFound; a placed pod's is not counted."""
    out: dict[str, str] = {}
    for volume in claim_volumes(pod):
        try:
            claim = find_claim(cluster, pod, volume)
        except NotFound:
            if new_pod:
                raise
            continue
        except NotOwned:
            if new_pod:
                raise
            continue
        driver, handle = _driver_info(cluster, claim)
        if driver and handle:
            out[f"{driver}/{handle}"] = driver
    return out


def volume_limits(csi_node: CSINode) -> dict[str, int]:
    return {d.name: d.allocatable.count for d in csi_node.spec.drivers
            if d.allocatable is not None and d.allocatable.count is not None}


class _New:
    __slots__ = ("failure", "volumes")

    def __init__(self, volumes: dict[str, str], failure: Status | None = None) -> None:
        self.volumes = volumes
        self.failure = failure  # what Filter answers on every node (a claim not readable)

    def clone(self) -> _New:
        return self


class NodeVolumeLimits:
    def __init__(self, handle: Handle | None = None) -> None:
        self._handle = handle

    @classmethod
    def create(cls, args: Mapping[str, Any], handle: Handle) -> NodeVolumeLimits:
        return cls(handle)

    @property
    def name(self) -> str:
        return NAME

    def filter_relevant(self, pod: PodInfo) -> bool:
        return bool(claim_volumes(pod))

    def pre_filter(self, state: CycleState, pod: PodInfo, cluster: ClusterState
                   ) -> tuple[PreFilterResult | None, Status]:
        """Upstream's PreFilter only skips a pod without volumes; the pod's new CSI volumes
        are worked out here once per cycle instead of per node. A claim that cannot be read
        fails in Filter, as upstream's does (VolumeBinding's PreFilter, later in the
        profile, usually rejects such a pod first)."""
        if not claim_volumes(pod):
            return None, _SKIP
        try:
            volumes = csi_volumes(cluster, pod, True)
        except NotFound as missing:
            namespace = pod.pod.metadata.namespace or "default"
            state.write(_PRE_FILTER_KEY, _New({}, Status.unresolvable(
                NAME, f"looking up PVC {namespace}/{missing.name}: {missing}")))
            return None, _SUCCESS
        except NotOwned as foreign:
            state.write(_PRE_FILTER_KEY, _New({}, Status.error(NAME, str(foreign))))
            return None, _SUCCESS
        if not volumes:
            return None, _SKIP
        state.write(_PRE_FILTER_KEY, _New(volumes))
        return None, _SUCCESS

    def pre_filter_extensions(self) -> None:
        return None

    def dry_run_key(self, state: CycleState, pod: PodInfo) -> Hashable | None:
        """Filter reads the pod's volumes and the node's pods."""
        return NAME

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        data = state.get(_PRE_FILTER_KEY)
        if not isinstance(data, _New) or self._handle is None:
            return _SUCCESS
        if data.failure is not None:
            return data.failure
        cluster = self._handle.cluster
        csi_node = cluster.volume_object("CSINode", node.name)
        if not isinstance(csi_node, CSINode):
            return _SUCCESS
        limits = volume_limits(csi_node)
        if not limits:
            return _SUCCESS
        attached: dict[str, str] = {}
        for placed in node.pods:
            attached.update(csi_volumes(cluster, placed, False))
        new = {name: driver for name, driver in data.volumes.items() if name not in attached}
        counts: dict[str, int] = {}
        for driver in attached.values():
            counts[driver] = counts.get(driver, 0) + 1
        wanted: dict[str, int] = {}
        for driver in new.values():
            wanted[driver] = wanted.get(driver, 0) + 1
        for driver, count in wanted.items():
            limit = limits.get(driver)
            if limit is not None and counts.get(driver, 0) + count > limit:
                return _EXCEEDED
        return _SUCCESS

    def events_to_register(self) -> Sequence[EventHint]:
        # A pod leaving frees attach slots; a new node has its own. (Upstream also queues
        # on CSINode, PVC and VolumeAttachment events.)
        return _HINTS

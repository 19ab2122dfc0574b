"""NodeVolumeLimits (PreFilter, Filter), as kube-scheduler v1.36.2's CSI volume limits
(pkg/scheduler/framework/plugins/nodevolumelimits/csi.go).

A node whose CSINode gives a driver ``allocatable.count`` fails, Unschedulable,
``node(s) exceed max volume count`` when the volumes of that driver attached there plus
the pod's new ones exceed it. Attached are the volumes its pods use (each counted once)
and its VolumeAttachments (counted whether or not a pod there uses them). A pod's volumes:

* a PVC volume, or a generic ephemeral volume's claim: a bound claim counts its
  PersistentVolume's ``spec.csi`` (driver, volumeHandle), or the CSI volume an in-tree
  source there migrated to; an unbound claim, or one whose PV is missing, its
  StorageClass's provisioner (an in-tree one: the CSI driver it migrated to) with a handle
  of its own (counted once per claim); a claim without class, or whose class is missing,
  is not counted;
* an inline in-tree volume a CSI driver took over (AWS EBS, GCE PD, Azure Disk, Cinder,
  Portworx), under its translated handle.

Migrated volumes count only on a node with a CSINode; a node without one, or without
counts, passes. The pod being scheduled fails on every node, UnschedulableAndUnresolvable,
when one of its claims is missing (``looking up PVC ns/name: persistentvolumeclaim "name"
not found``), and with an error when an ephemeral claim is not the pod's or an inline volume
does not translate. With the alpha gate VolumeLimitScaling, a node whose CSINode (or its
absence) lacks a driver of the pod's new volumes fails, Unschedulable, ``<driver> CSI driver
is not installed on the node``, when that driver's CSIDriver sets
``preventPodSchedulingIfMissing``.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from dralab.api.features import Gate
from dralab.api.storage import (
    CSIDriver,
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
)
from dralab.cluster import ClusterState, NodeInfo, PodInfo
from dralab.cluster.events import ClusterEvent, NodeAdded, PodForgotten, PodRemoved

from ..framework import CycleState, Handle, PreFilterResult, Status
from ..hints import QUEUE, SKIP, EventHint, HintResult
from .nodevolumelimits_migration import (
    TranslationError,
    csi_driver_for_plugin,
    inline_plugin,
    migration_counted,
    translate_source,
)
from .volumeclaims import (
    ClaimVolume,
    NotFound,
    NotOwned,
    claim_class,
    find_claim,
    pod_volumes,
)

__all__ = ["ERR_REASON_MAX_VOLUME_COUNT", "NAME", "NodeVolumeLimits", "attachable_volumes",
           "driver_installed", "node_attachments", "uses_attachable_volumes", "volume_limits"]

NAME = "NodeVolumeLimits"
ERR_REASON_MAX_VOLUME_COUNT = "node(s) exceed max volume count"
_PRE_FILTER_KEY = "PreFilter" + NAME
# Upstream prefixes an unbound claim's handle with 32 random characters per scheduler so it
# cannot equal a real volume handle; a fixed prefix keeps dralab's answers reproducible.
_UNBOUND_HANDLE_PREFIX = "dralab-unbound-claim"
_SUCCESS = Status.success()
_SKIP = Status.skip(NAME)
_EXCEEDED = Status.unschedulable(NAME, ERR_REASON_MAX_VOLUME_COUNT)


class _Failed(Exception):
    """filterAttachableVolumes' error: the status Filter answers with."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.reasons[0] if status.reasons else "")
        self.status = status


def _error(message: str) -> _Failed:
    return _Failed(Status.error(NAME, message))


def uses_attachable_volumes(pod: PodInfo) -> bool:
    """PreFilter's test: a PVC, a generic ephemeral volume or an inline volume a CSI driver
    took over (otherwise PreFilter answers Skip)."""
    return any(isinstance(v.get("persistentVolumeClaim"), Mapping)
               or isinstance(v.get("ephemeral"), Mapping) or inline_plugin(v)
               for v in pod_volumes(pod))


def attachable_volumes(cluster: ClusterState, pod: PodInfo, has_csi_node: bool,
                       new_pod: bool) -> dict[str, str]:
    """filterAttachableVolumes: unique volume name (``driver/handle``) -> driver of the
    pod's volumes a CSI driver attaches. Raises _Failed; for a pod already on the node a
    missing claim is not counted rather than failing."""
    out: dict[str, str] = {}
    namespace = pod.pod.metadata.namespace or "default"
    for volume in pod_volumes(pod):
        source = volume.get("persistentVolumeClaim")
        ephemeral = isinstance(volume.get("ephemeral"), Mapping)
        if isinstance(source, Mapping):
            claim_name = str(source.get("claimName") or "")
        elif ephemeral:
            claim_name = f"{pod.pod.name}-{volume.get('name') or ''}"
        else:
            _add_inline(volume, has_csi_node, out)
            continue
        if not claim_name:
            raise _error("PersistentVolumeClaim had no name")
        claim = _claim(cluster, pod, claim_name, ephemeral, volume, namespace, new_pod)
        if claim is None:
            continue
        driver, handle = _driver_info(cluster, claim, has_csi_node)
        if driver and handle:
            out[f"{driver}/{handle}"] = driver
    return out


def _claim(cluster: ClusterState, pod: PodInfo, name: str, ephemeral: bool,
           volume: Mapping[str, Any], namespace: str, new_pod: bool
           ) -> PersistentVolumeClaim | None:
    try:
        return find_claim(cluster, pod, ClaimVolume(name, ephemeral, volume))
    except NotFound as missing:
        if not new_pod:
            return None
        raise _Failed(Status.unresolvable(
            NAME, f"looking up PVC {namespace}/{name}: {missing}")) from None
    except NotOwned as foreign:
        # ephemeral.VolumeIsForPod fails for a placed pod too.
        raise _error(str(foreign)) from None


def _add_inline(volume: Mapping[str, Any], has_csi_node: bool, out: dict[str, str]) -> None:
    """checkAttachableInlineVolume."""
    plugin = inline_plugin(volume)
    if not plugin or not migration_counted(plugin, has_csi_node):
        return
    try:
        translated = translate_source(volume)
    except TranslationError as err:
        raise _error(f"converting volume({volume.get('name') or ''}) from inline to csi: "
                     f"{err}") from None
    if translated is not None:
        driver, handle = translated
        out[f"{driver}/{handle}"] = driver


def _driver_info(cluster: ClusterState, claim: PersistentVolumeClaim, has_csi_node: bool
                 ) -> tuple[str, str]:
    """getCSIDriverInfo: (driver, handle) of a claim; ('', '') when not counted."""
    if not claim.spec.volume_name:
        return _driver_info_from_class(cluster, claim, has_csi_node)
    pv = cluster.volume_object("PersistentVolume", claim.spec.volume_name)
    if not isinstance(pv, PersistentVolume):
        # Deleted, or the claim was pre-bound to a volume not yet created: count it by
        # its class, as an unbound claim.
        return _driver_info_from_class(cluster, claim, has_csi_node)
    if pv.spec.csi is not None:
        return pv.spec.csi.driver, pv.spec.csi.volume_handle
    spec = pv.raw.get("spec") if isinstance(pv.raw, dict) else None
    if not isinstance(spec, Mapping):
        return "", ""
    plugin = inline_plugin(spec)
    if not plugin or not migration_counted(plugin, has_csi_node):
        return "", ""
    try:
        translated = translate_source(spec, pv.metadata.labels)
    except TranslationError:
        return "", ""
    return translated if translated is not None else ("", "")


def _driver_info_from_class(cluster: ClusterState, claim: PersistentVolumeClaim,
                            has_csi_node: bool) -> tuple[str, str]:
    """getCSIDriverInfoFromSC: the class's provisioner and a handle unique to the claim.
    Without a class the claim binds immediately, so it is bound before it matters."""
    class_name = claim_class(cluster, claim)
    sc = cluster.volume_object("StorageClass", class_name) if class_name else None
    if not isinstance(sc, StorageClass):
        return "", ""
    handle = f"{_UNBOUND_HANDLE_PREFIX}-{claim.metadata.namespace or 'default'}/{claim.name}"
    driver = csi_driver_for_plugin(sc.provisioner)
    if driver:
        return (driver, handle) if migration_counted(sc.provisioner, has_csi_node) else ("", "")
    return sc.provisioner, handle


def volume_limits(csi_node: CSINode) -> dict[str, int]:
    """getVolumeLimits: driver -> allocatable.count (a driver without a count has no limit)."""
    return {d.name: d.allocatable.count for d in csi_node.spec.drivers
            if d.allocatable is not None and d.allocatable.count is not None}


def node_attachments(cluster: ClusterState) -> dict[str, dict[str, str]]:
    """getNodeVolumeAttachmentInfo for every node: node -> unique volume name -> attacher,
    from VolumeAttachments with an attacher and a CSI PersistentVolume in the store."""
    out: dict[str, dict[str, str]] = {}
    for kind, _, name in cluster.volume_keys():
        if kind != "VolumeAttachment":
            continue
        va = cluster.volume_object(kind, name)
        if not isinstance(va, VolumeAttachment) or not va.spec.attacher:
            continue
        pv_name = va.spec.source.persistent_volume_name
        pv = cluster.volume_object("PersistentVolume", pv_name) if pv_name else None
        if not isinstance(pv, PersistentVolume) or pv.spec.csi is None:
            continue
        out.setdefault(va.spec.node_name, {})[
            f"{va.spec.attacher}/{pv.spec.csi.volume_handle}"] = va.spec.attacher
    return out


class _New:
    """The pod's new volumes (or the status Filter answers), worked out once per cycle for
    nodes with a CSINode and once for nodes without (migrated volumes count only there)."""

    __slots__ = ("_attachments", "_by_csi_node", "_cluster", "_pod")

    def __init__(self, cluster: ClusterState, pod: PodInfo) -> None:
        self._cluster = cluster
        self._pod = pod
        self._by_csi_node: dict[bool, dict[str, str] | Status] = {}
        self._attachments: dict[str, dict[str, str]] | None = None

    def volumes(self, has_csi_node: bool) -> dict[str, str] | Status:
        found = self._by_csi_node.get(has_csi_node)
        if found is None:
            try:
                found = attachable_volumes(self._cluster, self._pod, has_csi_node, True)
            except _Failed as failed:
                found = failed.status
            self._by_csi_node[has_csi_node] = found
        return found

    def attachments(self, node: str) -> dict[str, str]:
        if self._attachments is None:
            self._attachments = node_attachments(self._cluster)
        return self._attachments.get(node, {})

    def clone(self) -> _New:
        return self


def _assigned_pod_gone(event: ClusterEvent, cluster: ClusterState) -> HintResult:
    """isSchedulableAfterPodDeleted, as far as the event tells: a pod that was on no node
    frees nothing (the deleted pod's volumes are not in the event)."""
    assert isinstance(event, PodRemoved | PodForgotten)
    return QUEUE if event.node is not None else SKIP


_HINTS = (EventHint((PodRemoved, PodForgotten), _assigned_pod_gone), EventHint((NodeAdded,)))


def driver_installed(cluster: ClusterState, driver: str, csi_node: CSINode | None) -> bool:
    """checkCSIDriverOnNode: a driver without a CSIDriver object, or whose CSIDriver does not
    opt in with preventPodSchedulingIfMissing, counts as installed everywhere; otherwise it
    must be among the node's CSINode drivers."""
    found = cluster.volume_object("CSIDriver", driver)
    if not isinstance(found, CSIDriver) or not found.spec.prevent_pod_scheduling_if_missing:
        return True
    return csi_node is not None and any(d.name == driver for d in csi_node.spec.drivers)


class NodeVolumeLimits:
    def __init__(self, handle: Handle | None = None, limit_scaling: bool = False) -> None:
        self._handle = handle
        self._limit_scaling = limit_scaling

    @classmethod
    def create(cls, args: Mapping[str, Any], handle: Handle) -> NodeVolumeLimits:
        return cls(handle, handle.features.is_enabled(Gate.VOLUME_LIMIT_SCALING))

    @property
    def name(self) -> str:
        return NAME

    def filter_relevant(self, pod: PodInfo) -> bool:
        return uses_attachable_volumes(pod)

    def pre_filter(self, state: CycleState, pod: PodInfo, cluster: ClusterState
                   ) -> tuple[PreFilterResult | None, Status]:
        """Skip a pod without attachable volumes, as upstream. The pod's new volumes are
        worked out here lazily, once per cycle instead of once per node; a claim that
        cannot be read fails in Filter, as upstream's does (VolumeBinding's PreFilter, later
        in the profile, usually rejects such a pod first)."""
        if not uses_attachable_volumes(pod):
            return None, _SKIP
        state.write(_PRE_FILTER_KEY, _New(cluster, pod))
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
        cluster = self._handle.cluster
        csi_node = cluster.volume_object("CSINode", node.name)
        has_csi_node = isinstance(csi_node, CSINode)
        new = data.volumes(has_csi_node)
        if isinstance(new, Status):
            return new
        if not new:
            return _SUCCESS
        if self._limit_scaling:
            node_drivers = csi_node if isinstance(csi_node, CSINode) else None
            for driver in dict.fromkeys(new.values()):
                if not driver_installed(cluster, driver, node_drivers):
                    return Status.unschedulable(
                        NAME, f"{driver} CSI driver is not installed on the node")
        if not isinstance(csi_node, CSINode):
            return _SUCCESS
        limits = volume_limits(csi_node)
        if not limits:
            return _SUCCESS
        attached: dict[str, str] = {}
        try:
            for placed in node.pods:
                if pod_volumes(placed):
                    attached.update(attachable_volumes(cluster, placed, True, False))
        except _Failed as failed:
            return failed.status
        counts: dict[str, int] = {}
        for driver in attached.values():
            counts[driver] = counts.get(driver, 0) + 1
        for name, driver in data.attachments(node.name).items():
            if name not in attached:
                counts[driver] = counts.get(driver, 0) + 1
        # A volume a pod here already uses is not attached again (one attached only as a
        # VolumeAttachment is still counted again, as upstream).
        wanted: dict[str, int] = {}
        for name, driver in new.items():
            if name not in attached:
                wanted[driver] = wanted.get(driver, 0) + 1
        for driver, count in wanted.items():
            limit = limits.get(driver)
            if limit is not None and counts.get(driver, 0) + count > limit:
                return _EXCEEDED
        return _SUCCESS

    def events_to_register(self) -> Sequence[EventHint]:
        # A scheduled pod leaving frees attach slots. Upstream registers CSINode add and
        # update, PVC add and VolumeAttachment delete; dralab's volume objects raise no
        # store events, so a node added (whose CSINode would follow) stands for CSINode add.
        return _HINTS

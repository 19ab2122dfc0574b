"""VolumeZone (PreFilter, Filter), as kube-scheduler v1.36.2 checks the zone and region
labels of a pod's bound PersistentVolumes (pkg/scheduler/framework/plugins/volumezone).

Only ``persistentVolumeClaim`` volumes count (not ephemeral ones). A claim without a
volume is skipped when its class binds WaitForFirstConsumer; otherwise PreFilter fails
UnschedulableAndUnresolvable (``PersistentVolume had no name``, or the API's not-found
message for a missing claim, class or volume). A PV's ``topology.kubernetes.io/zone`` /
``region`` labels (and the beta ``failure-domain.beta.kubernetes.io`` ones; several zones
joined with ``__``) must each hold the node's value, else ``node(s) had no available
volume zone``; a node with none of the four labels passes (a single-zone cluster).
A StorageClass without ``volumeBindingMode`` (as a file may give it) is read as the API
server defaults it: Immediate.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from dralab.api.storage import PersistentVolumeClaim
from dralab.cluster import ClusterState, NodeInfo, PodInfo

from ..framework import CycleState, Handle, PreFilterResult, Status
from ..hints import EventHint
from .eventhints import NODE_HINTS
from .volumeclaims import NotFound, claim_class, find_class, find_volume, pod_volumes

__all__ = ["ERR_REASON_CONFLICT", "NAME", "VolumeZone"]

NAME = "VolumeZone"
ERR_REASON_CONFLICT = "node(s) had no available volume zone"
_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
_ZONE = "topology.kubernetes.io/zone"
_REGION = "topology.kubernetes.io/region"
TOPOLOGY_LABELS = (_BETA_ZONE, _BETA_REGION, _ZONE, _REGION)
_GA_OF = {_BETA_ZONE: _ZONE, _BETA_REGION: _REGION}
_PRE_FILTER_KEY = "PreFilter" + NAME
_SUCCESS = Status.success()
_SKIP = Status.skip(NAME)
_CONFLICT = Status.unresolvable(NAME, ERR_REASON_CONFLICT)


def claim_names(pod: PodInfo) -> list[str]:
    return [str(v["persistentVolumeClaim"].get("claimName") or "") for v in pod_volumes(pod)
            if isinstance(v.get("persistentVolumeClaim"), Mapping)]


def zones_of(value: str) -> frozenset[str] | None:
    """LabelZonesToSet: '__'-joined values; an empty one makes the label unreadable."""
    parts = [part.strip() for part in value.split("__")]
    return None if any(not part for part in parts) else frozenset(parts)


# (pv name, label key, the values it allows)
Topology = tuple[str, str, frozenset[str]]


class _Topologies:
    __slots__ = ("items",)

    def __init__(self, items: list[Topology]) -> None:
        self.items = items

    def clone(self) -> _Topologies:
        return self


class VolumeZone:
    def __init__(self, handle: Handle | None = None) -> None:
        self._handle = handle

    @classmethod
    def create(cls, args: Mapping[str, Any], handle: Handle) -> VolumeZone:
        return cls(handle)

    @property
    def name(self) -> str:
        return NAME

    def filter_relevant(self, pod: PodInfo) -> bool:
        return bool(claim_names(pod))

    def topologies(self, cluster: ClusterState, pod: PodInfo) -> list[Topology] | Status:
        """getPVbyPod: the zone/region labels of the pod's bound volumes."""
        namespace = pod.pod.metadata.namespace or "default"
        out: list[Topology] = []
        for name in claim_names(pod):
            if not name:
                return Status.unresolvable(NAME, "PersistentVolumeClaim had no name")
            claim = cluster.volume_object("PersistentVolumeClaim", name, namespace)
            if not isinstance(claim, PersistentVolumeClaim):
                return Status.unresolvable(NAME, f'persistentvolumeclaim "{name}" not found')
            volume_name = claim.spec.volume_name
            try:
                if not volume_name:
                    class_name = claim_class(cluster, claim)
                    if not class_name:
                        return Status.unresolvable(
                            NAME, "PersistentVolumeClaim had no pv name and storageClass name")
                    if find_class(cluster, class_name).binding_mode == "WaitForFirstConsumer":
                        continue
                    return Status.unresolvable(NAME, "PersistentVolume had no name")
                pv = find_volume(cluster, volume_name)
            except NotFound as missing:
                return Status.unresolvable(NAME, str(missing))
            for key in TOPOLOGY_LABELS:
                value = pv.metadata.labels.get(key)
                zones = zones_of(value) if value is not None else None
                if zones is not None:
                    out.append((pv.name, key, zones))
        return out

    def pre_filter(self, state: CycleState, pod: PodInfo, cluster: ClusterState
                   ) -> tuple[PreFilterResult | None, Status]:
        if not claim_names(pod):
            return None, _SKIP
        found = self.topologies(cluster, pod)
        if isinstance(found, Status):
            return None, found
        if not found:
            return None, _SKIP
        state.write(_PRE_FILTER_KEY, _Topologies(found))
        return None, _SUCCESS

    def pre_filter_extensions(self) -> None:
        return None

    def dry_run_key(self, state: CycleState, pod: PodInfo) -> Hashable | None:
        """Filter reads the node's labels and the pod's volumes only."""
        return NAME

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        if not pod_volumes(pod):
            return _SUCCESS
        data = state.get(_PRE_FILTER_KEY)
        if isinstance(data, _Topologies):
            items = data.items
        else:
            if self._handle is None:
                return _SUCCESS
            found = self.topologies(self._handle.cluster, pod)
            if isinstance(found, Status):
                return found
            items = found
        labels = node.node.metadata.labels
        if not any(key in labels for key in TOPOLOGY_LABELS):
            return _SUCCESS  # a node without zone labels: a single-zone cluster
        for _, key, zones in items:
            value = labels.get(key)
            if value is None:
                ga = _GA_OF.get(key)
                value = labels.get(ga) if ga is not None else None
            if value is None or value not in zones:
                return _CONFLICT
        return _SUCCESS

    def events_to_register(self) -> Sequence[EventHint]:
        # Upstream also queues on PVC, PV and StorageClass events (none in dralab's store).
        return NODE_HINTS
